#!/usr/bin/env bash
# Build the WebAssembly module and its JavaScript module into wasm/dist/, the npm package:
#   wordsplit.wasm  the core (crates/wordsplit-wasm), wasm32-unknown-unknown
#   wordsplit.js    the ES module (hand-written glue, wasm/js/), for Node 20+ and browsers
#   wordsplit.d.ts  its TypeScript types
#   package.json, README.md (wasm/), LICENSE and rust-crates.txt (the compiled crates' notices)
# `npm pack wasm/dist` makes the package's tarball.
#
# The toolchain is Debian's rustc-web (rustc and cargo under /usr/bin, with std's sources):
# std for wasm32 is compiled from those sources (-Zbuild-std, allowed on a stable rustc by
# RUSTC_BOOTSTRAP=1) and linked by LLVM's wasm-ld. A rustup toolchain without the wasm32 std
# cannot do this (its std sources do not match Debian's), so the build names /usr/bin's
# rustc and cargo explicitly. Missing packages are installed with apt-get (as root).
#
# Usage: bash wasm/build.sh        (quiet and quick when everything is built)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
dist="$here/dist"

need=()
[ -x /usr/bin/rustc ] && /usr/bin/rustc --print sysroot >/dev/null 2>&1 || need+=(rustc-web)
[ -x /usr/bin/cargo ] || need+=(cargo-web)
ls -d /usr/src/rustc-*/library/std >/dev/null 2>&1 || need+=(rust-web-src)
linker="$(command -v wasm-ld-14 || command -v wasm-ld || true)"
[ -n "$linker" ] || need+=(lld)
if [ "${#need[@]}" -gt 0 ]; then
    echo "wasm/build.sh: installing ${need[*]}" >&2
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
        rustc-web cargo-web rust-web-src lld >/dev/null
    linker="$(command -v wasm-ld-14 || command -v wasm-ld)"
fi

# Its own target dir: another rustc than the host build's, and std built for wasm32.
export CARGO_TARGET_DIR="$root/target/wasm"
export RUSTC=/usr/bin/rustc
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$linker"
export CARGO_PROFILE_WASM_OPT_LEVEL="${WORDSPLIT_WASM_OPT_LEVEL:-3}"
# 128-bit SIMD (Node 16.4+, Chrome 91+, Firefox 89+, Safari 16.4+): 3% fewer instructions
# per encode of the bench texts (valgrind on Node). Bulk memory (memcpy as memory.copy) is
# already among rustc's default wasm32 features. binaryen's wasm-opt is not run: on this
# module -O3 saved 0.7% of the gzipped size and cost 4% more instructions per encode.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+simd128"
cd "$root"
/usr/bin/cargo build --quiet -p wordsplit-wasm --lib --target wasm32-unknown-unknown \
    --profile wasm -Zbuild-std=std,panic_abort

mkdir -p "$dist"
cp "$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm/wordsplit_wasm.wasm" "$dist/wordsplit.wasm"
cp "$here/js/wordsplit.js" "$here/js/wordsplit.d.ts" "$here/package.json" "$here/README.md" "$dist/"
cp "$root/LICENSE" "$root/licenses/rust-crates.txt" "$dist/"
