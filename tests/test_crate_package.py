"""The core crate as crates.io takes it: its metadata, the files `cargo package` puts in it (its
licence and the third-party licence texts, the registered vocabularies' files, the test files
its tests read), and that nothing it ships reads a file outside the crate, so `cargo test` runs
in the unpacked .crate. tools/check_crate.sh packages it and runs that `cargo test` (minutes);
these checks take a second, so a test that reaches into the repository fails here first.

Also: one version for every package (the crates, the Python package, the npm package), and the
crate README's build settings are the workspace's."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CRATE = ROOT / "crates" / "wordsplit"


@pytest.fixture(scope="module")
def packaged() -> list[str]:
    """The files of the packaged crate (`cargo package --list`)."""
    result = subprocess.run(["cargo", "package", "-p", "wordsplit", "--list", "--allow-dirty", "--offline"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def metadata() -> dict:
    result = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return {package["name"]: package for package in json.loads(result.stdout)["packages"]}


def test_the_crate_has_the_metadata_crates_io_shows():
    crate = metadata()["wordsplit"]
    assert crate["publish"] is None  # publishable
    assert crate["license"] == "MIT AND Apache-2.0"
    assert crate["documentation"] == "https://docs.rs/wordsplit"
    assert crate["readme"] and crate["description"]
    assert 1 <= len(crate["keywords"]) <= 5 and all(len(k) <= 20 for k in crate["keywords"])
    assert crate["categories"] == ["text-processing", "encoding"]


def test_the_crate_carries_its_licences_and_the_registered_vocabularies(packaged):
    assert {"LICENSE", "README.md", "data/registered.json", "tests/support/mod.rs"} <= set(packaged)
    licences = {f"licenses/{path.name}" for path in (ROOT / "licenses").iterdir()}
    assert licences <= set(packaged)
    vocabs = {f"data/vocabs/{path.name}" for path in (ROOT / "src" / "wordsplit" / "vocabs" / "data").iterdir()}
    assert vocabs <= set(packaged)
    # The differential test against the Python package reads the repository's test data.
    assert "tests/formats.rs" not in packaged


def test_every_link_in_the_crate_leads_to_a_file_of_the_repository():
    links = [path for path in CRATE.rglob("*") if path.is_symlink()]
    assert len(links) >= 12
    for link in links:
        target = link.resolve()
        assert target.exists() and ROOT in target.parents, link


def inside_crate(base: Path, relative: str) -> bool:
    """Whether ``relative`` from ``base`` stays inside the crate (links not followed)."""
    return Path(os.path.normpath(base / relative)).is_relative_to(CRATE)


def test_nothing_the_crate_ships_reads_a_file_outside_it(packaged):
    """include_str!/include_bytes! paths (relative to their file) and paths joined to the
    crate's directory (CARGO_MANIFEST_DIR) stay inside the crate."""
    shipped = [CRATE / path for path in packaged if path.endswith((".rs", ".md")) and not path.startswith("licenses/")]
    assert len(shipped) > 100
    outside = []
    for path in shipped:
        text = path.read_text()
        for relative in re.findall(r'include_(?:str|bytes)!\(\s*"([^"]+)"', text):
            if not inside_crate(path.parent, relative):
                outside.append(f"{path.relative_to(CRATE)}: include of {relative}")
        for relative in re.findall(r'\.join\(\s*"([^"]*\.\.[^"]*)"', text):
            if not inside_crate(CRATE, relative):
                outside.append(f"{path.relative_to(CRATE)}: {relative}")
    assert outside == [], "use the crate's files (tests/support/mod.rs) or leave the test out of the package"


def test_every_package_has_one_version():
    cargo = (ROOT / "Cargo.toml").read_text()
    version = re.search(r'^\[workspace\.package\]\nversion = "([^"]+)"', cargo, re.M).group(1)
    for name, package in metadata().items():
        assert package["version"] == version, name
    assert re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1) == version


def test_the_readme_gives_the_workspace_build_settings_its_speed_assumes():
    readme = (CRATE / "README.md").read_text()
    cargo = (ROOT / "Cargo.toml").read_text()
    profile = re.search(r"^\[profile\.release\]\n((?:\w.*\n)+)", cargo, re.M).group(1)
    assert profile == 'lto = "fat"\ncodegen-units = 1\n'
    assert "[profile.release]\n" + profile in readme
    config = (ROOT / ".cargo" / "config.toml").read_text()
    flags = re.search(r"^\[target\.x86_64-unknown-linux-gnu\]\nrustflags = .*\n", config, re.M).group(0)
    assert flags in readme
