"""Write licenses/rust-crates.txt: every crate compiled into the native extension of a wheel
(crates/wordsplit-py) or into the WebAssembly module of the npm package
(crates/wordsplit-wasm), with its version, its licence and the text of its licence files.

The crates are the normal dependencies of those two, on every platform, as Cargo.lock pins
them (``cargo metadata --locked --offline``, so the crates' sources must be downloaded: any
build of the workspace does that). Build dependencies and procedural macros run at build time
only and are not in any package. Each licence text appears once, numbered; a crate lists the
numbers of its own (two files that differ only in spacing are one text). The MIT and BSD
licences ask for their notice in every copy, binary ones included: this file is that notice,
shipped in the wheels (PEP 639 licence files) and in the npm package.

    python tools/gen_rust_notices.py            # write it
    python tools/gen_rust_notices.py --check    # exit 1 if it is stale (tests/test_licenses.py)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generated_files import ROOT, write_or_check  # noqa: E402

OUT = ROOT / "licenses" / "rust-crates.txt"
# The crates whose compiled code ships: the extension (wheels) and the module (npm).
SHIPPED_ROOTS = ("wordsplit-py", "wordsplit-wasm")
# A licence file's name: LICENSE, LICENSE-MIT, LICENCE.txt, COPYING, NOTICE, UNLICENSE...
LICENCE_FILE = re.compile(r"^(licen[cs]e|copying|notice|unlicense)([-._].*)?$", re.IGNORECASE)


def cargo_metadata() -> dict:
    """The workspace's packages and resolved dependency graph, as Cargo.lock pins them."""
    result = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--offline"],
        cwd=ROOT, capture_output=True, text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"cargo metadata failed (build the workspace once to fetch the crates):\n{result.stderr}")
    return json.loads(result.stdout)


def shipped_packages(metadata: dict) -> list[dict]:
    """The third-party packages compiled into the shipped crates, sorted by name and version."""
    packages = {package["id"]: package for package in metadata["packages"]}
    nodes = {node["id"]: node for node in metadata["resolve"]["nodes"]}
    members = set(metadata["workspace_members"])
    todo = [id_ for id_ in members if packages[id_]["name"] in SHIPPED_ROOTS]
    seen: set[str] = set()
    while todo:
        id_ = todo.pop()
        if id_ in seen:
            continue
        seen.add(id_)
        if is_proc_macro(packages[id_]):
            continue  # it runs in the compiler; neither it nor its dependencies are compiled in
        for dep in nodes[id_]["deps"]:
            if any(kind["kind"] is None for kind in dep["dep_kinds"]):  # a normal dependency
                todo.append(dep["pkg"])
    shipped = [packages[id_] for id_ in seen - members if not is_proc_macro(packages[id_])]
    return sorted(shipped, key=lambda package: (package["name"], package["version"]))


def is_proc_macro(package: dict) -> bool:
    return any("proc-macro" in target["kind"] for target in package["targets"])


def licence_files(package: dict) -> list[Path]:
    """A package's licence files: anywhere in its source (a crate that builds C code keeps that
    code's licence beside it), its `license-file` too, not under tests/."""
    root = Path(package["manifest_path"]).parent
    found = {path for path in root.rglob("*") if path.is_file() and LICENCE_FILE.match(path.name)
             and "tests" not in path.relative_to(root).parts}
    if package.get("license_file"):
        found.add(root / package["license_file"])
    return sorted(found, key=lambda path: path.relative_to(root).as_posix())


def render(packages: list[dict]) -> str:
    """The notices file: one line per crate, then each distinct licence text once."""
    texts: dict[str, int] = {}  # the words of a text (its spacing aside) → its number
    shown: dict[int, str] = {}  # number → the first file's text
    lines = [
        "The Rust crates compiled into wordsplit's native extension (the wheels) and its",
        "WebAssembly module (the npm package), with their licences; each crate's licence texts",
        "follow, numbered. Written by tools/gen_rust_notices.py from Cargo.lock.",
        "",
    ]
    for package in packages:
        root = Path(package["manifest_path"]).parent
        numbers = []
        for path in licence_files(package):
            text = path.read_text(encoding="utf-8", errors="replace").strip()
            number = texts.setdefault(" ".join(text.split()), len(texts) + 1)
            shown.setdefault(number, text)
            numbers.append(f"[{number}] the crate's {path.relative_to(root).as_posix()}")
        if not numbers:
            raise SystemExit(f"{package['name']} {package['version']} ships no licence file: add its text by hand")
        lines.append(f"{package['name']} {package['version']} ({package['license']}): {', '.join(numbers)}")
    for number, text in shown.items():
        lines += ["", "=" * 79, f"[{number}]", "=" * 79, "", text]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file in the repository")
    args = parser.parse_args(argv)
    content = render(shipped_packages(cargo_metadata())).encode()
    return write_or_check({OUT: content}, check=args.check, command="python tools/gen_rust_notices.py")


if __name__ == "__main__":
    sys.exit(main())
