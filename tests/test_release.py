"""The release: the workflow (.github/workflows/release.yml) builds what PyPI accepts for every
supported CPython and platform, and the checks tools/check_wheel.sh runs on a wheel
(tools/wheel_check.py) find what they are meant to find. The build itself runs in
tools/check_wheel.sh (minutes per wheel), not here."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import wheel_check  # noqa: E402

WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())


def supported_pythons() -> list[str]:
    """3.10 (requires-python's minimum) to 3.13: the CPythons .ci/run and .ci/other-pythons test."""
    minimum = re.search(r'^requires-python = ">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    tested = re.search(r"\|\| versions=\((.*)\)", (ROOT / ".ci" / "other-pythons").read_text()).group(1).split()
    assert int(minimum) == 10 and tested == ["3.10", "3.12", "3.13"]
    return [f"3.{minor}" for minor in range(int(minimum), 14)]


def test_the_package_metadata_names_the_supported_pythons():
    classifiers = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', (ROOT / "pyproject.toml").read_text())
    assert classifiers == supported_pythons()


def step(job: str, uses: str) -> dict:
    (found,) = [s for s in WORKFLOW["jobs"][job]["steps"] if s.get("uses", "").startswith(uses)]
    return found


def test_the_workflow_builds_one_wheel_per_cpython_for_every_platform_and_the_sdist():
    pythons = supported_pythons()
    build = step("wheels", "PyO3/maturin-action@")["with"]
    assert build["args"].split() == ["--release", "--out", "dist", "--interpreter", *pythons]
    platforms = {(row["platform"], row["target"], row.get("manylinux")) for row in
                 WORKFLOW["jobs"]["wheels"]["strategy"]["matrix"]["include"]}
    assert platforms == {("linux", "x86_64", "2014"), ("linux", "aarch64", "2014"), ("macos", "x86_64", None),
                         ("macos", "aarch64", None), ("windows", "x64", None)}
    assert step("sdist", "PyO3/maturin-action@")["with"]["command"] == "sdist"


def test_every_wheel_and_the_sdist_is_installed_and_checked_before_publishing():
    pythons = supported_pythons()
    tests = WORKFLOW["jobs"]["test-wheels"]["strategy"]["matrix"]
    runners = {row["runner"] for row in WORKFLOW["jobs"]["wheels"]["strategy"]["matrix"]["include"]}
    assert set(tests["runner"]) == runners and tests["python"] == pythons
    for job in ("test-wheels", "test-sdist"):
        script = WORKFLOW["jobs"][job]["steps"][-1]["run"]
        assert 'encode "hello world"' in script and "14990 1879" in script
        assert "tools/wheel_check.py\" smoke" in script
    crate = WORKFLOW["jobs"]["crate"]["steps"]
    assert crate[1]["run"] == "bash tools/check_crate.sh"
    assert crate[2]["run"] == "cargo publish -p wordsplit" and crate[2]["if"].startswith("startsWith(github.ref")
    publish = WORKFLOW["jobs"]["publish"]
    assert set(publish["needs"]) == {"test-wheels", "test-sdist"}
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert publish["permissions"] == {"id-token": "write"}


def test_the_local_check_builds_the_same_linux_wheels():
    script = (ROOT / "tools" / "check_wheel.sh").read_text()
    assert "--zig --compatibility manylinux2014" in script
    assert "versions=(" + " ".join(supported_pythons()) + ")" in script
    assert subprocess.run(["bash", "-n", str(ROOT / "tools" / "check_wheel.sh")]).returncode == 0


def fake_wheel(path: Path, *, drop: str = "", tag: str = "cp311-cp311-manylinux_2_17_x86_64") -> Path:
    """A wheel holding what wheel_check expects (the extension as an empty file), without ``drop``."""
    wheel = path / f"wordsplit-0.1.0-{tag}.whl"
    dist_info = "wordsplit-0.1.0.dist-info"
    files = {**{p: c if c is not None else b"" for p, c in wheel_check.expected_files().items()},
             **{f"{dist_info}/licenses/{p}": c for p, c in wheel_check.licence_files().items()},
             "wordsplit/_native.cpython-311-x86_64-linux-gnu.so": b"",
             f"{dist_info}/METADATA": b"Name: wordsplit\nLicense-Expression: MIT AND Apache-2.0\n"}
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, content in files.items():
            if name != drop:
                archive.writestr(name, content)
    return wheel


def test_the_contents_check_passes_a_complete_wheel_and_names_what_is_wrong(tmp_path):
    assert wheel_check.check_contents(fake_wheel(tmp_path)) == []
    missing = wheel_check.check_contents(fake_wheel(tmp_path, drop="wordsplit-0.1.0.dist-info/licenses/LICENSE"))
    assert missing == ["missing wordsplit-0.1.0.dist-info/licenses/LICENSE"]
    vocab = "wordsplit/vocabs/data/qwen3.tiktoken.gz"
    assert wheel_check.check_contents(fake_wheel(tmp_path, drop=vocab)) == [f"missing {vocab}"]
    (tmp_path / "linux").mkdir()
    assert "PyPI refuses linux_* wheels" in " ".join(
        wheel_check.check_contents(fake_wheel(tmp_path / "linux", tag="cp311-cp311-linux_x86_64")))
    (tmp_path / "abi3").mkdir()
    abi3 = fake_wheel(tmp_path / "abi3", tag="cp311-abi3-macosx_11_0_arm64")
    assert "not abi3" in " ".join(wheel_check.check_contents(abi3))


@pytest.fixture(scope="module")
def short_goldens(tmp_path_factory) -> Path:
    """The goldens the smoke test reads, cut to their first 20 cases (the full ones run in test_golden.py)."""
    out = tmp_path_factory.mktemp("golden")
    for path in (ROOT / "tests" / "golden").glob("*.json.gz"):
        if path.name.startswith(("tiktoken-", "qwen3-", "sentencepiece-mistral-v1")):
            data = json.loads(gzip.decompress(path.read_bytes()))
            for key in ("cases", "special_cases"):
                if key in data:
                    data[key] = data[key][:20]
            (out / path.name).write_bytes(gzip.compress(json.dumps(data).encode()))
    return out


def test_the_smoke_test_checks_every_registered_vocabulary_on_both_backends(short_goldens):
    checked = wheel_check.smoke(short_goldens, installed=False)
    assert len(checked) == 2 * (len(wheel_check.TIKTOKEN_GOLDENS) + 2)
    with pytest.raises(AssertionError, match="not an installed wheel"):
        wheel_check.smoke(short_goldens)


def test_the_smoke_test_fails_on_a_wrong_id(short_goldens, tmp_path):
    for path in short_goldens.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    golden = tmp_path / "tiktoken-cl100k_base.json.gz"
    data = json.loads(gzip.decompress(golden.read_bytes()))
    data["cases"][3]["ids"][0] += 1
    golden.write_bytes(gzip.compress(json.dumps(data).encode()))
    with pytest.raises(AssertionError, match="cl100k_base"):
        wheel_check.smoke(tmp_path, installed=False)
