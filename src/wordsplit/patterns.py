"""The split patterns of the known vocabularies, exactly as their official sources spell them.

They are the named patterns of the facts both languages share (``crates/wordsplit/data/registered.json``,
which cites the source of each; the package reads it as ``_registered.py``). tiktoken rewrote the
original patterns with possessive quantifiers and ``\\s++$`` for speed; the HF/GGUF files keep the
original forms. Both spellings are listed because a hand-written scanner registers against the
exact strings it was proven equal to.

>>> PATTERNS["qwen2"] == QWEN2_PATTERN
True
"""

from ._registered import REGISTERED
from .registered import patterns

# pattern name → pattern; each is also a constant, named as in crates/wordsplit/src/names.rs.
PATTERNS: dict[str, str] = patterns(REGISTERED)

GPT2_PATTERN = PATTERNS["gpt2"]
GPT2_ORIGINAL_PATTERN = PATTERNS["gpt2-original"]
CL100K_PATTERN = PATTERNS["cl100k"]
CL100K_ORIGINAL_PATTERN = PATTERNS["cl100k-original"]
QWEN2_PATTERN = PATTERNS["qwen2"]
O200K_PATTERN = PATTERNS["o200k"]

# Groups nested deeper than this are refused: the regex module's compiler recurses per level
# (5,000 levels exhaust Python's stack), and real tokenizer patterns nest two or three deep.
MAX_GROUP_DEPTH = 100


def group_depth(pattern: str) -> int:
    r"""How deeply the groups of ``pattern`` nest (escapes and classes skipped): a cheap check a
    loader runs before anything compiles the pattern (see :data:`MAX_GROUP_DEPTH`).

    >>> group_depth(r"(?i:'s|(a\(b)[(])")
    2
    """
    depth = deepest = 0
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern.startswith("]", i + 1) or pattern.startswith("^]", i + 1):
                i += 2  # a leading "]" is a member, not the end
        elif c == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif c == ")":
            depth -= 1
        i += 1
    return deepest
