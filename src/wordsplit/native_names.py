"""The component names both languages know: one source for Python and the Rust core.

``SCANNER_PATTERNS`` lists the hand-written native scanners and the exact pattern strings each
was proven equal to (a scanner is used for those strings only); ``ENCODER_ALIASES`` lists the
span encoders implemented in both languages, with their aliases. ``tools/gen_native_names.py``
writes ``crates/wordsplit/src/names.rs`` from this module, and a test checks that file is fresh, so the
two sides cannot drift apart.

>>> SCANNER_PATTERNS["qwen2-scanner"] == (QWEN2_PATTERN,)
True
>>> ENCODER_ALIASES["buffer-sweep"]
('reference',)
"""

from __future__ import annotations

from .patterns import (
    CL100K_ORIGINAL_PATTERN,
    CL100K_PATTERN,
    GPT2_ORIGINAL_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    QWEN2_PATTERN,
)

# scanner name -> the pattern strings it is proven for (tests/test_scanners.py proves each).
SCANNER_PATTERNS: dict[str, tuple[str, ...]] = {
    "gpt2-scanner": (GPT2_PATTERN, GPT2_ORIGINAL_PATTERN),
    "cl100k-scanner": (CL100K_PATTERN, CL100K_ORIGINAL_PATTERN),
    "qwen2-scanner": (QWEN2_PATTERN,),
    "o200k-scanner": (O200K_PATTERN,),
}

# encoder name -> its aliases. "auto" is not an encoder: TokenizerOptions resolves it.
ENCODER_ALIASES: dict[str, tuple[str, ...]] = {
    "buffer-sweep": ("reference",),
    "heap-merge": (),
    "backtrack": (),
}

# The Rust constant name of each pattern (for tools/gen_native_names.py).
PATTERN_CONSTANTS: dict[str, str] = {
    "GPT2_PATTERN": GPT2_PATTERN,
    "GPT2_ORIGINAL_PATTERN": GPT2_ORIGINAL_PATTERN,
    "CL100K_PATTERN": CL100K_PATTERN,
    "CL100K_ORIGINAL_PATTERN": CL100K_ORIGINAL_PATTERN,
    "QWEN2_PATTERN": QWEN2_PATTERN,
    "O200K_PATTERN": O200K_PATTERN,
}
