"""Every package carries wordsplit's licence and the licence of every third-party file in it:
licenses/NOTICE.md lists each bundled vocabulary file with its licence text, every text it
names is in licenses/, the notices of the compiled Rust crates are fresh, and a wheel's
.dist-info holds them all (the sdist's and the crate's are checked in test_sdist.py and
test_crate_package.py).

The wheel's .dist-info is the one maturin writes for pip before a build
(``maturin pep517 write-dist-info``, PEP 517's prepare_metadata_for_build_wheel: about a
second, nothing compiled); a real wheel's is checked by tools/check_wheel.sh."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LICENSES = ROOT / "licenses"
NOTICE = LICENSES / "NOTICE.md"
BUNDLED = ROOT / "src" / "wordsplit" / "vocabs" / "data"


def notice_rows(heading: str) -> dict[str, list[str]]:
    """The rows of NOTICE.md's table under ``heading``: file → its cells."""
    section = NOTICE.read_text().split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| `"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_licence_is_mit_and_the_package_metadata_names_every_licence_file():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) ") and "the wordsplit authors" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT AND Apache-2.0"
    assert project["license-files"] == ["LICENSE", "licenses/*"]


def test_every_bundled_vocabulary_file_is_listed_with_its_licence_text():
    rows = notice_rows("Vocabulary files")
    assert sorted(rows) == sorted(path.name for path in BUNDLED.iterdir() if path.is_file())
    for name, (_file, _maker, licence, texts, _changes) in rows.items():
        linked = re.findall(r"\]\(([^)]+)\)", texts)
        assert linked, name
        for link in linked:
            assert (LICENSES / link).is_file(), (name, link)
        if "Apache-2.0" in licence:
            assert "Apache-2.0.txt" in linked, name


def test_every_licence_text_is_named_by_the_notice_and_is_the_official_text():
    notice = NOTICE.read_text()
    for path in LICENSES.glob("*.txt"):
        assert f"]({path.name})" in notice, path.name
    apache = (LICENSES / "Apache-2.0.txt").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in apache
    assert apache.rstrip().endswith("limitations under the License.")
    assert "Copyright (c) 2022 OpenAI, Shantanu Jain" in (LICENSES / "MIT-tiktoken.txt").read_text()
    assert "Copyright (c) 2022 OpenAI\n" in (LICENSES / "MIT-whisper.txt").read_text()
    assert "Software Copyright (c) 2019 OpenAI" in (LICENSES / "MIT-modified-gpt-2.txt").read_text()


def test_the_rust_crate_notices_are_fresh():
    result = subprocess.run([sys.executable, "tools/gen_rust_notices.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    listed = (LICENSES / "rust-crates.txt").read_text()
    # The core's regex engines and the extension's allocator are compiled in; a proc-macro is not.
    for crate in ("fancy-regex 0.14", "regex-automata ", "mimalloc ", "libmimalloc-sys ", "pyo3 "):
        assert f"\n{crate}" in listed, crate
    assert "\nsyn " not in listed and "\npyo3-macros " not in listed


@pytest.fixture(scope="module")
def wheel_dist_info(tmp_path_factory) -> Path:
    """The .dist-info directory maturin writes for a wheel of this tree."""
    out = tmp_path_factory.mktemp("dist-info")
    result = subprocess.run([sys.executable, "-m", "maturin", "pep517", "write-dist-info", "--metadata-directory",
                             str(out)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    (dist_info,) = out.glob("wordsplit-*.dist-info")
    return dist_info


def test_a_wheel_carries_every_licence_file(wheel_dist_info):
    shipped = {path.relative_to(wheel_dist_info / "licenses").as_posix()
               for path in (wheel_dist_info / "licenses").rglob("*") if path.is_file()}
    expected = {"LICENSE"} | {f"licenses/{path.name}" for path in LICENSES.iterdir()}
    assert shipped == expected
    metadata = (wheel_dist_info / "METADATA").read_text()
    assert "License-Expression: MIT AND Apache-2.0\n" in metadata
    for path in sorted(expected):
        assert f"License-File: {path}\n" in metadata


def test_every_test_file_the_crate_carries_is_listed_with_its_licence():
    listed = notice_rows("Test files in the Rust crate")
    carried = [path.relative_to(ROOT / "crates/wordsplit/tests/data").as_posix()
               for path in (ROOT / "crates/wordsplit/tests/data").rglob("*") if path.is_symlink()]
    assert carried
    for path in carried:
        directory, name = path.rsplit("/", 1)
        assert path in listed or f"{directory}/*.json.gz" in listed, path
