"""The component names both languages know, from the facts they share
(``crates/wordsplit/data/registered.json``, which also gives the Rust core its ``names.rs``).

``SCANNER_PATTERNS`` lists the hand-written native scanners and the exact pattern strings each
was proven equal to (a scanner is used for those strings only; tests/test_scanners.py proves
each); ``ENCODER_ALIASES`` lists the span encoders implemented in both languages, with their
aliases. "auto" is not an encoder: TokenizerOptions resolves it.

>>> from wordsplit.patterns import QWEN2_PATTERN
>>> SCANNER_PATTERNS["qwen2-scanner"] == (QWEN2_PATTERN,)
True
>>> ENCODER_ALIASES["buffer-sweep"]
('reference',)
"""

from __future__ import annotations

from ._registered import REGISTERED
from .registered import encoder_aliases, scanner_patterns

# scanner name -> the pattern strings it is proven for.
SCANNER_PATTERNS: dict[str, tuple[str, ...]] = scanner_patterns(REGISTERED)

# encoder name -> its aliases.
ENCODER_ALIASES: dict[str, tuple[str, ...]] = encoder_aliases(REGISTERED)
