"""The split patterns of the known vocabularies, exactly as their official sources spell them.

tiktoken rewrote the original patterns with possessive quantifiers and ``\\s++$`` for
speed; the HF/GGUF files keep the original forms. Both spellings are listed because a
hand-written scanner registers against the exact strings it was proven equal to.
"""

# tiktoken 0.14.0 tiktoken_ext/openai_public.py (r50k_base, p50k_base, p50k_edit, gpt2).
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
# openai/gpt-2 encoder.py, as HF's ByteLevel pre-tokenizer and npm tiktoken use it.
GPT2_ORIGINAL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_ORIGINAL_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Qwen2/Qwen3 tokenizer.json: cl100k's original pattern with one digit per piece.
QWEN2_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

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
