"""Spanners (pre-tokenizers): text → the pieces BPE encodes one at a time.

``regex`` (:class:`RegexSpanner`) runs any split pattern with the ``regex`` module, its
``\\p{..}`` and ``\\s`` classes replaced by Unicode 16.0 tables (the version the official
tokenizers use). Hand-written scanners for the known pattern families register against the
exact pattern strings they were proven equal to and are used only for those.

>>> get_spanner("regex")(r"\\S+|\\s+").split("hello world")
['hello', ' ', 'world']
"""

from __future__ import annotations

from ..registry import Registry
from .regex import RegexSpanner
from .scanners import SCANNER_CLASSES, scanner_for

SPANNERS: Registry = Registry("spanner")
register_spanner = SPANNERS.register
register_spanner("regex")(RegexSpanner)
for _name, _cls in SCANNER_CLASSES.items():
    register_spanner(_name)(_cls)


def get_spanner(name: str) -> type:
    """The Python spanner class registered as ``name``; unknown names list the known ones."""
    return SPANNERS.get(name)


__all__ = ["SPANNERS", "register_spanner", "get_spanner", "RegexSpanner", "scanner_for"]
