"""The checks tools/check_wheel.sh runs on a built wheel: what the archive holds, and a parity
smoke test of the installed package against the golden ids of the official tokenizers.

    python tools/wheel_check.py contents WHEEL      # the wheel's files, with the repository's python
    python tools/wheel_check.py smoke GOLDEN_DIR    # with the python of the venv it is installed in

``contents`` checks that the wheel holds the compiled extension for its own CPython tag, every
Python module of the package, the bundled vocabulary files byte for byte, wordsplit's licence
and every third-party licence text (PEP 639, in .dist-info/licenses/), and no build output or
test file. ``smoke`` checks that ``wordsplit`` is imported from the installed package (not a
source tree), that its native extension loads, and that every registered vocabulary gives the
golden ids of tests/golden/ (tiktoken 0.14.0's, HF tokenizers' for Qwen3, sentencepiece's for
mistral-v1) on both backends, and decodes them back.

>>> wheel_tags("wordsplit-0.1.0-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl")
('cp311', 'cp311', ['manylinux2014_x86_64', 'manylinux_2_17_x86_64'])
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "wordsplit"
# The registered names the golden files cover, by golden file (tests/golden/).
TIKTOKEN_GOLDENS = ("cl100k_base", "o200k_base", "o200k_harmony", "r50k_base", "gpt2", "p50k_base", "p50k_edit")


class WheelError(Exception):
    """A wheel that is not what a release ships; the message lists every problem."""


def wheel_tags(name: str) -> tuple[str, str, list[str]]:
    """A wheel file name's (python tag, ABI tag, platform tags)."""
    parts = Path(name).name[: -len(".whl")].split("-")
    return parts[-3], parts[-2], parts[-1].split(".")


def expected_files(root: Path = ROOT) -> dict[str, bytes | None]:
    """The files every wheel holds, by path in the archive: the package's modules (content not
    compared: None) and the bundled data and licence files (content compared)."""
    package = root / "src" / "wordsplit"
    files: dict[str, bytes | None] = {}
    for path in package.rglob("*.py"):
        if "__pycache__" not in path.parts:
            files[path.relative_to(root / "src").as_posix()] = None
    for path in (package / "vocabs" / "data").iterdir():
        if path.is_file():
            files[path.relative_to(root / "src").as_posix()] = path.read_bytes()
    return files


def licence_files(root: Path = ROOT) -> dict[str, bytes]:
    """The licence files a wheel's .dist-info/licenses/ holds, by path below it."""
    files = {"LICENSE": (root / "LICENSE").read_bytes()}
    for path in (root / "licenses").iterdir():
        files[f"licenses/{path.name}"] = path.read_bytes()
    return files


def check_contents(wheel: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with the wheel's files (an empty list: nothing)."""
    python_tag, abi_tag, platforms = wheel_tags(wheel.name)
    problems = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = next((name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")), None)
        if dist_info is None:
            return ["no .dist-info directory"]
        for path, content in {**expected_files(root),
                              **{f"{dist_info}/licenses/{p}": c for p, c in licence_files(root).items()}}.items():
            if path not in names:
                problems.append(f"missing {path}")
            elif content is not None and archive.read(path) != content:
                problems.append(f"{path} differs from the repository's")
        native = [name for name in names if name.count("/") == 1 and name.startswith("wordsplit/")
                  and name.split("/")[1].startswith("_native.")]
        version = python_tag.removeprefix("cp")
        # (_native.cpython-311-x86_64-linux-gnu.so, _native.cpython-311-darwin.so, _native.cp311-win_amd64.pyd)
        if len(native) != 1 or not (f".cpython-{version}-" in native[0] or f".cp{version}-" in native[0]):
            problems.append(f"the extension for {python_tag} is not the package's one module _native: {native}")
        if python_tag != abi_tag or not python_tag.startswith("cp"):
            problems.append(f"tags {python_tag}-{abi_tag}: one wheel per CPython version is expected (not abi3)")
        if any(tag.startswith("linux_") for tag in platforms):
            problems.append(f"platform tag {'.'.join(platforms)}: PyPI refuses linux_* wheels (build a manylinux one)")
        stray = sorted(name for name in names if name.startswith(("tests/", "target/", "src/", "crates/"))
                       or name.endswith((".pyc", ".rs")))
        if stray:
            problems.append(f"files that do not belong in a wheel: {stray[:5]}")
        metadata = archive.read(f"{dist_info}/METADATA").decode()
        if "License-Expression: MIT AND Apache-2.0\n" not in metadata:
            problems.append("METADATA has no License-Expression: MIT AND Apache-2.0")
    return problems


def _golden(golden_dir: Path, name: str) -> dict:
    return json.loads(gzip.decompress((golden_dir / name).read_bytes()))


def smoke(golden_dir: Path, *, installed: bool = True) -> dict[str, int]:
    """Check the package against the goldens (``installed``: the package imported must be an
    installed one, not a source tree); the number of cases checked per vocabulary and backend.
    Raises AssertionError on the first difference."""
    import wordsplit
    from wordsplit import TokenizerOptions, load_vocab

    location = Path(wordsplit.__file__).resolve()
    if installed:
        assert "site-packages" in location.parts, f"wordsplit is imported from {location}, not an installed wheel"
    import wordsplit._native  # noqa: F401  (the compiled extension of the wheel)

    checked: dict[str, int] = {}
    for backend in ("native", "python"):
        options = TokenizerOptions(backend=backend)
        for name in TIKTOKEN_GOLDENS:
            data = _golden(golden_dir, f"tiktoken-{name}.json.gz")
            tok = options.build(load_vocab(name))
            assert tok.n_vocab == data["n_vocab"], (name, tok.n_vocab)
            for case in data["cases"]:
                assert tok.encode_ordinary(case["text"]) == case["ids"], (name, backend, case["text"])
                assert tok.decode_bytes(case["ids"]) == case["text"].encode(), (name, backend, case["text"])
            for case in data["special_cases"]:
                assert tok.encode(case["text"], allowed_special="all") == case["ids"], (name, backend, case["text"])
            checked[f"{name} ({backend})"] = len(data["cases"]) + len(data["special_cases"])
        qwen = options.build(load_vocab("qwen3"))
        cases = _golden(golden_dir, "qwen3-tokenizers.json.gz")["cases"]
        for case in cases:
            assert qwen.encode(case["text"], allowed_special="all") == case["ids"], ("qwen3", backend, case["text"])
        checked[f"qwen3 ({backend})"] = len(cases)
        mistral = options.build(load_vocab("mistral-v1"))
        data = _golden(golden_dir, "sentencepiece-mistral-v1.json.gz")
        for case in data["cases"]:
            assert mistral.encode_ordinary(case["text"]) == case["ids"], ("mistral-v1", backend, case["text"])
            assert mistral.decode(case["ids"]) == case["decoded"], ("mistral-v1", backend, case["ids"])
        checked[f"mistral-v1 ({backend})"] = len(data["cases"])
    return checked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("contents", help="check a wheel's files").add_argument("wheel", type=Path)
    commands.add_parser("smoke", help="check the installed package against the goldens").add_argument(
        "golden_dir", type=Path)
    args = parser.parse_args(argv)
    if args.command == "contents":
        problems = check_contents(args.wheel)
        for problem in problems:
            print(f"{args.wheel.name}: {problem}", file=sys.stderr)
        if not problems:
            print(f"{args.wheel.name}: contents ok")
        return 1 if problems else 0
    checked = smoke(args.golden_dir)
    print(f"parity ok: {sum(checked.values())} golden cases over {len(checked)} vocabulary/backend pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
