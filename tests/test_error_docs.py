"""Every public error class is in docs/python.md's table of errors, with the builtin it also is."""

from __future__ import annotations

import builtins
import re
from pathlib import Path

import wordsplit.errors

ROOT = Path(__file__).resolve().parent.parent


def documented() -> dict[str, list[str]]:
    """The table's classes, each with the builtins its row names."""
    page = (ROOT / "docs" / "python.md").read_text()
    section = page.split("## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for names, kinds in re.findall(r"^\| (`\w+`(?:, `\w+`)*) \| ([^|]+?) \|", section, re.M):
        names = re.findall(r"`(\w+)`", names)
        kinds = re.findall(r"\b([A-Z]\w+(?:Error|Exception))\b(?![^(]*\))", kinds.split("(")[0])
        if len(kinds) == len(names) > 1:  # "OptionTypeError, OptionValueError | TypeError, ValueError"
            rows.update((name, [kind]) for name, kind in zip(names, kinds))
        elif len(names) > 1:  # "EncodeInputError, DecodeInputError | TypeError": both
            rows.update((name, kinds) for name in names)
        else:
            rows[names[0]] = kinds
    return rows


def test_every_error_class_is_in_the_table_with_its_builtin():
    rows = documented()
    public = set(wordsplit.errors.__all__) - {"WordsplitError"}
    assert sorted(public - set(rows)) == [] and sorted(set(rows) - public) == []
    for name in public:
        cls = getattr(wordsplit.errors, name)
        assert issubclass(cls, wordsplit.errors.WordsplitError) and rows[name], name
        for kind in rows[name]:
            assert issubclass(cls, getattr(builtins, kind)), (name, kind)
