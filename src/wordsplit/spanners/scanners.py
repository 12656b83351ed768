"""Hand-written scanners: the native spanners for the four known pattern families.

Each scanner is registered against the exact pattern strings it was proven equal to (the
tiktoken rewrite and the original form) and is used only for those. The scanners themselves
are Rust (``native/src/spanners/``); their Python reference is :class:`RegexSpanner` on the
same pattern, which is also what a scanner name means on the Python backend.

>>> scanner_for(CL100K_PATTERN)
'cl100k-scanner'
>>> scanner_for(r"\\w+") is None
True
"""

from __future__ import annotations

from typing import Optional

from ..errors import UnsupportedTokenizerError
from ..patterns import (
    CL100K_ORIGINAL_PATTERN,
    CL100K_PATTERN,
    GPT2_ORIGINAL_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    QWEN2_PATTERN,
)
from .regex import RegexSpanner

# Must equal the native registry (wordsplit._native.SCANNERS); a test checks it.
SCANNER_PATTERNS: dict[str, tuple[str, ...]] = {
    "gpt2-scanner": (GPT2_PATTERN, GPT2_ORIGINAL_PATTERN),
    "cl100k-scanner": (CL100K_PATTERN, CL100K_ORIGINAL_PATTERN),
    "qwen2-scanner": (QWEN2_PATTERN,),
    "o200k-scanner": (O200K_PATTERN,),
}


def check_scanner(name: str, pattern: str) -> None:
    """Raise UnsupportedTokenizerError unless scanner ``name`` was proven for ``pattern``."""
    if pattern not in SCANNER_PATTERNS[name]:
        raise UnsupportedTokenizerError(
            f"the {name} handles only the patterns it was proven equal to, not {pattern!r}; "
            f"use spanner='auto' or spanner='regex'"
        )


def scanner_for(pattern: str) -> Optional[str]:
    """The name of the scanner registered for exactly ``pattern``, or None."""
    for name, patterns in SCANNER_PATTERNS.items():
        if pattern in patterns:
            return name
    return None


class ScannerSpanner(RegexSpanner):
    """A scanner name on the Python backend: the regex it was proven equal to.

    Raises UnsupportedTokenizerError for a pattern the scanner was not proven for.
    """

    scanner = ""

    def __init__(self, pattern: str) -> None:
        check_scanner(self.scanner, pattern)
        super().__init__(pattern)


def _scanner_class(name: str) -> type:
    return type(f"{name.title().replace('-', '')}", (ScannerSpanner,), {"scanner": name, "name": name})


SCANNER_CLASSES = {name: _scanner_class(name) for name in SCANNER_PATTERNS}
