"""The source distribution carries what a build from it needs: the Cargo workspace (its
Cargo.toml, whose members are the crates it holds, and Cargo.lock), Cargo's settings
(.cargo/config.toml: the loop alignment of x86-64 release builds), every source file of the core
and of the bindings, the Python package with its bundled vocabularies, and no build output.

The sdist is built with maturin, the build backend (about two seconds: it copies files and asks
``cargo metadata``, it compiles nothing)."""

from __future__ import annotations

import subprocess
import sys
import re
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> dict[str, bytes]:
    """The members of a freshly built sdist: path inside it (without the top directory) → bytes."""
    out = tmp_path_factory.mktemp("sdist")
    result = subprocess.run([sys.executable, "-m", "maturin", "sdist", "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    (archive,) = out.glob("wordsplit-*.tar.gz")
    members = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.isfile():
                _top, _, path = member.name.partition("/")
                members[path] = tar.extractfile(member).read()
    return members


def sources(directory: str, suffix: str) -> set[str]:
    """The files of `directory` (relative to the repository) ending in `suffix`."""
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / directory).rglob(f"*{suffix}")
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_sdist_holds_the_cargo_workspace_and_its_settings(sdist):
    assert {"pyproject.toml", "Cargo.toml", "Cargo.lock", "README.md"} <= set(sdist)
    assert sdist["Cargo.lock"] == (ROOT / "Cargo.lock").read_bytes()
    # The flag that aligns hot loops (see .cargo/config.toml), as the repository has it.
    assert sdist[".cargo/config.toml"] == (ROOT / ".cargo" / "config.toml").read_bytes()
    assert b"-align-loops=32" in sdist[".cargo/config.toml"]
    # Cargo loads the workspace only if every member is there.
    members = re.findall(r'"([^"]+)"', re.search(r"^members = \[(.*)\]$", sdist["Cargo.toml"].decode(), re.M).group(1))
    assert {"crates/wordsplit", "crates/wordsplit-py"} <= set(members)
    for member in members:
        assert f"{member}/Cargo.toml" in sdist, member


def test_the_sdist_holds_every_source_file_of_the_core_the_bindings_and_the_package(sdist):
    needed = (sources("crates/wordsplit/src", ".rs") | sources("crates/wordsplit-py/src", ".rs")
              | {"crates/wordsplit/README.md", "crates/wordsplit-py/build.rs"}  # (the core's docs include its README)
              | {"crates/wordsplit/data/registered.json"}  # (the core's generated tables and a test read it)
              | sources("src/wordsplit", ".py") | sources("src/wordsplit/vocabs/data", ""))
    assert len(needed) > 150
    assert sorted(needed - set(sdist)) == []


def test_the_sdist_holds_no_build_output(sdist):
    built = [path for path in sdist if path.startswith("target/") or path.endswith((".so", ".pyd", ".pyc"))]
    assert built == []



def test_the_sdist_holds_the_licence_and_every_third_party_licence_text(sdist):
    licences = {"LICENSE"} | {f"licenses/{path.name}" for path in (ROOT / "licenses").iterdir()}
    assert sorted(licences - set(sdist)) == []
    for path in licences:
        assert sdist[path] == (ROOT / path).read_bytes(), path
    metadata = sdist["PKG-INFO"].decode()
    assert "License-Expression: MIT AND Apache-2.0\n" in metadata
    assert "License-File: licenses/NOTICE.md\n" in metadata


def test_the_sdist_holds_each_vocabulary_file_once(sdist):
    """The core crate links to the package's vocabulary files (cargo packages them for the
    crate); the sdist keeps them under src/ only (pyproject's exclude)."""
    linked = sorted(path for path in sdist
                    if path.startswith(("crates/wordsplit/data/vocabs/", "crates/wordsplit/tests/data/golden/")))
    assert linked == []
    assert len([path for path in sdist if path.startswith("src/wordsplit/vocabs/data/")]) >= 7
