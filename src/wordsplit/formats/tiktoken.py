"""The ``.tiktoken`` rank file: one ``base64(token bytes) rank`` line per token, rank = id.

The file carries no split pattern and no special tokens; the caller supplies them.
"""

from __future__ import annotations

import base64
import binascii
import os
from typing import Any, Mapping

from ..errors import VocabFormatError
from ..patterns import GPT2_PATTERN
from ..vocab import Vocab
from .files import file_stem, read_file



def read_tiktoken_ranks(data: bytes, *, source: str) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file into ``{token bytes: rank}``."""
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise VocabFormatError(f"{source}:{lineno}: expected 'base64 rank', got {line[:60]!r}")
        try:
            piece = base64.b64decode(parts[0], validate=True)
            rank = int(parts[1])
        except (binascii.Error, ValueError):
            raise VocabFormatError(f"{source}:{lineno}: cannot parse {line[:60]!r} as 'base64 rank'") from None
        if piece in ranks:
            raise VocabFormatError(f"{source}:{lineno}: token {piece!r} appears twice")
        ranks[piece] = rank
    return ranks


def read_tiktoken(
    data: bytes,
    *,
    source: str,
    pattern: str,
    special_tokens: Mapping[str, int] | None = None,
    added_tokens: Mapping[str, int] | None = None,
    n_vocab: int | None = None,
    normalizer: str = "none",
    eos_token: str | None = None,
    name: str | None = None,
) -> Vocab:
    """Build a Vocab from ``.tiktoken`` bytes plus the facts the file does not carry.

    Args:
        data: the file's content.
        pattern: the split regex (tiktoken keeps it in code, not in the file).
        special_tokens, added_tokens: text → id.
        eos_token: the text of the end-of-sequence token, if any.
    """
    ranks = read_tiktoken_ranks(data, source=source)
    specials = dict(special_tokens or {})
    added = dict(added_tokens or {})
    eos = None if eos_token is None else {**specials, **added}[eos_token]
    return Vocab(
        name=name or file_stem(source), ranks=ranks, pattern=pattern, special_tokens=specials,
        added_tokens=added, normalizer=normalizer, n_vocab=n_vocab, eos_token_id=eos, source=source,
    )


def load_tiktoken(path: str | os.PathLike, *, pattern: str = GPT2_PATTERN, **facts: Any) -> Vocab:
    """Read a ``.tiktoken`` file (see :func:`read_tiktoken` for the other arguments)."""
    return read_tiktoken(read_file(path), source=str(path), pattern=pattern, **facts)
