"""Every example in docs/ and in the README runs: the pages are doctests.

Python examples are ``>>>`` sessions in ```python blocks; a page's blocks share one namespace,
in order, as a reader runs them, in a temporary working directory. ```console blocks are shell
sessions: each ``$ `` line runs in bash (in a temporary directory shared by the page, with this
interpreter's ``wordsplit`` on PATH and a private cache), and the lines after it are its
expected output (stdout, then stderr), ``...`` matching anything. Blocks of other languages
(```toml, ```text) are not examples.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text()) if lang == language]


def test_there_are_pages():
    assert {p.name for p in PAGES} >= {"README.md", "plugins.md", "python.md", "cli.md", "encode-file.md",
                                       "vocabularies.md", "design.md"}


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=lambda p: p.name)
def test_python_examples(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = "\n".join(blocks(page, "python"))
    parser = doctest.DocTestParser()
    test = parser.get_doctest(source, {"__name__": f"docs.{page.stem}"}, page.name, str(page), 0)
    # verbose=False: left None, doctest turns verbose when "-v" is in sys.argv (pytest -v)
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: print(text, end=""))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {page.name} failed (see stdout)"


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "console")], ids=lambda p: p.name)
def test_console_examples(page, tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "WORDSPLIT_CACHE_DIR": str(tmp_path / "cache"), "NO_COLOR": "1", "COLUMNS": "100"}
    checker = doctest.OutputChecker()
    failures = []
    for block in blocks(page, "console"):
        for command, expected in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M):
            result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
            got = result.stdout + result.stderr
            if not checker.check_output(expected, got, doctest.ELLIPSIS):
                failures.append(f"$ {command}\nexpected:\n{expected}got:\n{got}")
    assert not failures, "\n".join(failures)
