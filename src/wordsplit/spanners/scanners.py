"""The Python side of the hand-written scanners: their regex, on the patterns they are proven for.

The scanners themselves are Rust (``crates/wordsplit/src/spanners/``), named with the exact pattern
strings each was proven equal to in :mod:`wordsplit.native_names`. On the Python backend (and
for ``explain``) a scanner name means :class:`RegexSpanner` on the same pattern, which is the
reference the scanner is proven against; any other pattern is refused.

>>> from wordsplit.patterns import GPT2_PATTERN
>>> scanner_class("gpt2-scanner", (GPT2_PATTERN,))(GPT2_PATTERN).split("hi there")
['hi', ' there']
"""

from __future__ import annotations

from ..errors import UnsupportedTokenizerError
from .regex import RegexSpanner


def scanner_class(name: str, patterns: tuple[str, ...]) -> type:
    """The Python class of scanner ``name``: :class:`RegexSpanner`, for ``patterns`` only."""

    def __init__(self, pattern: str) -> None:
        if pattern not in patterns:
            raise UnsupportedTokenizerError(
                f"the {name} handles only the patterns it was proven equal to, not {pattern!r}; "
                "use spanner='auto' or spanner='regex'"
            )
        RegexSpanner.__init__(self, pattern)

    class_name = name.title().replace("-", "")  # "cl100k-scanner" -> "Cl100KScanner"
    return type(class_name, (RegexSpanner,), {"__init__": __init__, "__doc__": f"The {name}'s regex."})
