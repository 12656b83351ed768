"""Rank files: ``.tiktoken`` (and Meta's Llama 3/4 ``tokenizer.model``), one ``base64 rank`` line
per token, rank = id.

A rank file carries no split pattern and no special tokens: tiktoken keeps them in code. So
:func:`read_tiktoken` takes them as arguments, and fills them in itself for the files it
recognizes by content (the sha256 of the uncompressed bytes, see
:data:`~wordsplit.vocabs.pretrained.KNOWN_RANK_FILES`): OpenAI's r50k/p50k/cl100k/o200k files,
Qwen's ``qwen.tiktoken`` and the others listed there. Any other rank file without a
``pattern`` is a :class:`~wordsplit.errors.VocabFormatError` that says what to pass: a guessed
pattern would give wrong ids without a word.

Lines are parsed as tiktoken's ``load_tiktoken_bpe`` parses them: split on line breaks, blank
lines skipped, each line split on ASCII whitespace into exactly two fields, the token decoded
with (non-strict) base64, so ``=`` is the empty token, and the rank read by ``int()``. Where
tiktoken accepts a file that cannot be a vocabulary (a token listed twice, a negative rank, a
rank far beyond the number of tokens), this raises :class:`~wordsplit.errors.VocabFormatError`.

>>> ranks = read_tiktoken_ranks(b"YQ== 0\\n\\nYg== 1\\n= 2\\n", source="tiny.tiktoken")
>>> ranks
{b'a': 0, b'b': 1, b'': 2}
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import UnsupportedTokenizerError, VocabFormatError, advised
from ..patterns import MAX_GROUP_DEPTH, group_depth
from ..vocab import Vocab, id_limit
from .files import file_stem, read_file
from ..store.digests import sha256_hash


def read_tiktoken_ranks(data: bytes, *, source: str) -> dict[bytes, int]:
    """Parse a rank file into ``{token bytes: rank}``, as tiktoken's ``load_tiktoken_bpe`` does.

    Raises:
        VocabFormatError: a line that is not ``base64 rank``, a token listed twice, a negative
            rank or one far beyond the number of lines (see :func:`~wordsplit.vocab.id_limit`).
        UnsupportedTokenizerError: the file is a SentencePiece model (binary protobuf).
    """
    ranks: dict[bytes, int] = {}
    # bytes.splitlines, as tiktoken: \n, \r\n and \r end a line; blank lines are skipped.
    lines = data.splitlines()
    limit = id_limit(len(lines))
    for lineno, line in enumerate(lines, 1):
        if not line:
            continue
        parts = line.split()  # ASCII whitespace, as tiktoken's line.split()
        if len(parts) != 2:
            _not_a_rank_line(data, source, lineno, line, "expected 'base64 rank', got")
        try:
            # Not validate=True: tiktoken's b64decode skips characters outside the alphabet,
            # and "=" (padding alone) is the empty token.
            piece = base64.b64decode(parts[0])
            rank = int(parts[1])
        except (binascii.Error, ValueError):
            _not_a_rank_line(data, source, lineno, line, "cannot parse as 'base64 rank':")
        if piece in ranks:
            raise VocabFormatError(
                f"{source}:{lineno}: token {piece!r} appears twice (ranks {ranks[piece]} and {rank})"
            )
        if not 0 <= rank < limit:
            # Checked per line, so a huge rank is refused before anything is sized by it.
            raise VocabFormatError(
                f"{source}:{lineno}: rank {rank} of token {piece!r} is negative or far beyond the "
                f"{len(lines)} lines of the file (ranks must stay below 2 x lines + 65536 = {limit})"
            )
        ranks[piece] = rank
    return ranks


def _not_a_rank_line(data: bytes, source: str, lineno: int, line: bytes, what: str) -> None:
    # SentencePiece .model files are protobuf: binary from the first byte (field 1, type 2).
    if data[:1] == b"\x0a" and b"\x00" in data[:4096]:
        raise UnsupportedTokenizerError(
            f"{source} is a SentencePiece model (protobuf), not a tiktoken rank file; wordsplit reads "
            "byte-level BPE only (a Llama 2, T5 or Gemma tokenizer.model is SentencePiece)"
        )
    raise VocabFormatError(f"{source}:{lineno}: {what} {line[:60]!r}")


def rank_file_sha256(data: bytes) -> str:
    """The sha256 (hex) of a rank file's uncompressed bytes: the key of ``KNOWN_RANK_FILES``."""
    return sha256_hash(data).hexdigest()


def read_tiktoken(
    data: bytes,
    *,
    source: str,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    added_tokens: Mapping[str, int] | None = None,
    n_vocab: int | None = None,
    normalizer: str | None = None,
    eos_token: str | None = None,
    name: str | None = None,
) -> Vocab:
    """Build a Vocab from rank-file bytes plus the facts the file does not carry.

    A file recognized by its sha256 gets its official pattern, special and added tokens,
    n_vocab, normalizer and eos token; an argument given here replaces the recognized one.

    Args:
        data: the file's (uncompressed) content.
        source: the file, for messages.
        pattern: the split regex (tiktoken's ``pat_str``); required unless the file is known.
        special_tokens, added_tokens: text → id (added tokens are always matched, as in HF).
        n_vocab: the declared vocabulary size (tiktoken's ``explicit_n_vocab``).
        normalizer: ``"none"`` (the default) or a registered normalizer.
        eos_token: the text of the end-of-sequence token, if any.
        name: the Vocab's name (default: the file's stem).

    Raises:
        VocabFormatError: a malformed line, or an unknown file without ``pattern``.

    >>> from wordsplit.patterns import GPT2_PATTERN
    >>> data = b"".join(base64.b64encode(bytes([b])) + b" %d\\n" % b for b in range(256))
    >>> read_tiktoken(data, source="bytes.tiktoken", pattern=GPT2_PATTERN).n_vocab
    256
    """
    ranks = read_tiktoken_ranks(data, source=source)
    # A recognized file supplies the facts the caller left out; with none left out, the hash of
    # the whole file is not worth computing (the registered vocabularies pass all of theirs).
    given = (pattern, special_tokens, added_tokens, normalizer, eos_token)
    known = known_rank_file(data) if None in given else None
    if pattern is None:
        if known is None:
            raise _pattern_required(source, data, special_tokens is None)
        pattern = known.pattern
    elif group_depth(pattern) > MAX_GROUP_DEPTH:  # the regex compiler would exhaust the stack
        raise UnsupportedTokenizerError(f"{source}: the pattern nests groups more than {MAX_GROUP_DEPTH} deep")
    if known is not None:
        # The recognized facts, each replaced by the caller's where given.
        if special_tokens is None:
            special_tokens = known.special_tokens
            # The official n_vocab goes with the official special tokens only.
            n_vocab = known.n_vocab if n_vocab is None else n_vocab
        added_tokens = known.added_tokens if added_tokens is None else added_tokens
        normalizer = known.normalizer if normalizer is None else normalizer
        eos_token = known.eos_token if eos_token is None else eos_token
    specials = dict(special_tokens or {})
    added = dict(added_tokens or {})
    literals = {**specials, **added}
    if eos_token is not None and eos_token not in literals:
        eos_token = None  # a recognized eos the caller's own special tokens do not include
    return Vocab(
        name=name or file_stem(source), ranks=ranks, pattern=pattern, special_tokens=specials,
        added_tokens=added, normalizer=normalizer or "none", n_vocab=n_vocab,
        eos_token_id=None if eos_token is None else literals[eos_token], source=source,
    )


def known_rank_file(data: bytes):
    """The :class:`~wordsplit.vocabs.pretrained.RankFileFacts` of a recognized rank file, or None."""
    from ..vocabs.pretrained import KNOWN_RANK_FILES  # here: the vocabs package imports this one

    return KNOWN_RANK_FILES.get(rank_file_sha256(data))


def _pattern_required(source: str, data: bytes, no_specials: bool) -> VocabFormatError:
    specials = ", special_tokens={'<|endoftext|>': ID}" if no_specials else ""
    return advised(
        VocabFormatError,
        f"{source} is a rank file (sha256 {rank_file_sha256(data)}), which carries no split pattern "
        "and no special tokens, and it is not one of the files wordsplit recognizes",
        python=f"pass the pattern the tokenizer was trained with: load_vocab({source!r}, pattern=r'...'{specials}) "
        "(tiktoken's pat_str; the patterns of the known vocabularies are in wordsplit.patterns, e.g. "
        "CL100K_PATTERN), and n_vocab=N if the tokenizer declares more ids than the file and its special "
        "tokens use",
        cli="give the split pattern the tokenizer was trained with: --pattern NAME (a registered "
        "vocabulary's, e.g. --pattern cl100k_base) or --pattern REGEX (tiktoken's pat_str); the file "
        "names no special tokens, so none is matched",
    )


def load_tiktoken(path: str | os.PathLike, **facts: Any) -> Vocab:
    """Read a rank file, optionally gzipped (see :func:`read_tiktoken` for ``facts``); a
    ``tokenizer.model`` is named after its directory, as a ``tokenizer.json`` is."""
    stem = file_stem(path).removesuffix(".model")
    name = facts.pop("name", None) or (Path(path).absolute().parent.name if stem == "tokenizer" else stem)
    return read_tiktoken(read_file(path), source=str(path), name=name or stem, **facts)
