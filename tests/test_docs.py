"""Every example in docs/ runs: the pages are doctests.

Python examples are ``>>>`` sessions in ```python blocks; a page's blocks share one namespace,
in order, as a reader runs them, in a temporary working directory. Blocks of other languages
(```toml, ```text) are not examples.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text()) if lang == language]


def test_there_are_pages():
    assert {p.name for p in PAGES} >= {"plugins.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_examples(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = "\n".join(blocks(page, "python"))
    parser = doctest.DocTestParser()
    test = parser.get_doctest(source, {"__name__": f"docs.{page.stem}"}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: print(text, end=""))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {page.name} failed (see stdout)"
