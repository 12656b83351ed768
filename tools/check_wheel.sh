#!/usr/bin/env bash
# Build the Linux x86-64 wheels a release uploads to PyPI, and check each as a user gets it:
#
#   1. build it with maturin for manylinux2014 (glibc 2.17), linking with zig (the `ziglang`
#      package from PyPI) instead of inside a manylinux container: one wheel per CPython, as
#      the extension reads each version's object layouts (not abi3; see docs/releasing.md);
#   2. `auditwheel show`: the wheel's tag is manylinux_2_17_x86_64 and it needs no library
#      beyond glibc's;
#   3. its files (tools/wheel_check.py contents): the extension, the modules, the bundled
#      vocabularies byte for byte, the licences, nothing else;
#   4. install it into a fresh virtualenv, then with a PATH holding only that virtualenv's bin
#      (no cargo, no rustc) run `wordsplit encode "hello world"` (Qwen3's 14990 1879) and the
#      parity smoke test (tools/wheel_check.py smoke: every registered vocabulary against the
#      golden ids of tiktoken, HF tokenizers and sentencepiece, on both backends).
#
#   bash tools/check_wheel.sh [3.10 3.11 3.12 3.13]     (default: all four)
#
# The wheels are left in target/wheels-check/. The tools (maturin, ziglang, auditwheel, pinned
# below) go into .wheel-tools/, and a wheel's dependencies come from PyPI. Each interpreter is
# `python3.X` on PATH or pyenv's. A build takes about 6 minutes on 2 cores (fat LTO).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.10 3.11 3.12 3.13)

interpreter() {
    local version=$1 candidate
    for candidate in "$(command -v "python$version" || true)" \
        "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/"$version".*/bin/"python$version"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c "" 2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
    echo "python$version not found: install it (pyenv install $version)" >&2
    return 1
}

tools=$root/.wheel-tools
if [ ! -x "$tools/bin/auditwheel" ]; then
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install --quiet --upgrade pip
    "$tools/bin/python" -m pip install --quiet "maturin==1.16.0" "ziglang==0.17.1" "auditwheel==6.8.2"
fi

out=$root/target/wheels-check
rm -rf "$out"
mkdir -p "$out"
for version in "${versions[@]}"; do
    python=$(interpreter "$version")
    echo "== CPython $version ($python): build"
    PATH="$tools/bin:$PATH" maturin build --quiet --release --zig --compatibility manylinux2014 \
        -i "$python" -o "$out/$version"
    wheel=$(ls "$out/$version"/wordsplit-*.whl)

    echo "== auditwheel show $(basename "$wheel")"
    report=$("$tools/bin/auditwheel" show "$wheel")
    echo "$report"
    grep -q 'consistent with the following platform tag:' <<<"$report"
    grep -A1 'consistent with the following platform tag:' <<<"$report" | grep -q '"manylinux_2_17_x86_64"'

    "$tools/bin/python" tools/wheel_check.py contents "$wheel"

    echo "== install into a fresh virtualenv, run with no Rust on PATH"
    venv=$(mktemp -d)/venv
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "$wheel"
    # Outside the repository, with nothing on PATH but the virtualenv: the wheel alone.
    (
        cd "$(dirname "$venv")"
        export PATH="$venv/bin"
        unset PYTHONPATH CARGO_HOME RUSTUP_HOME
        if command -v cargo >/dev/null || command -v rustc >/dev/null; then
            echo "Rust is still on PATH" >&2
            exit 1
        fi
        ids=$(wordsplit encode "hello world")
        echo "wordsplit encode \"hello world\" -> $ids"
        [ "$ids" = "14990 1879" ]
        python "$root/tools/wheel_check.py" smoke "$root/tests/golden"
    )
    rm -rf "$(dirname "$venv")"
done
echo "== ok: $(ls "$out"/*/*.whl | xargs -n1 basename | tr '\n' ' ')"
