"""A GGUF SentencePiece vocabulary (``tokenizer.ggml.model == "llama"``) as a :class:`Vocab` that
tokenizes as llama.cpp's ``llm_tokenizer_spm`` does (``llama-vocab.cpp``).

llama.cpp does not run ``sentencepiece``: it reads the pieces, scores and token types from the
file and applies its own rules, which are what this module builds with the SentencePiece
components (:mod:`wordsplit.sentencepiece`):

* the text is cut at USER_DEFINED tokens (always) and at CONTROL and UNKNOWN ones (only when
  special tokens are parsed: ``encode``'s allowed specials), longest first, with the types and
  the rstrip/lstrip attributes llama.cpp gives them at load time (:mod:`.attributes`: Phi-3's
  ``</s>`` is a control token, and its special tokens take the ASCII whitespace after them);
* each stretch between them gets one space before it (``add_space_prefix``, on unless the file
  says ``tokenizer.ggml.add_space_prefix = false``) and every space (U+0020 only) becomes
  ``▁``; nothing else is normalized, and extra whitespace is kept: the ``sentencepiece``
  normalizer with ``remove_extra_whitespaces`` off, run per stretch;
* the stretch is merged by score: every adjacent pair that spells a token is a candidate, the
  highest score merges first, the leftmost on equal scores (the ``score-merge`` encoder);
* a symbol left that is no token is spelled by its bytes, each the ``<0xNN>`` token.

llama.cpp's merge looks a pair up among *all* tokens, of any type. The loader checks that no
CONTROL, UNKNOWN or BYTE token can be made by a merge (two tokens that spell it), so merging
among the NORMAL, USER_DEFINED and UNUSED ones is the same; a file where one can is refused.

Decoding is llama.cpp's ``llama_detokenize`` without special-token text: a NORMAL token is its
text with ``▁`` as a space, a byte token its byte, USER_DEFINED tokens their text, CONTROL,
UNKNOWN and UNUSED tokens nothing (an UNUSED token is merged like a NORMAL one); the very
first token loses one leading space (when ``add_space_prefix`` is on), whatever it is (a
leading BOS keeps the space of the word after it).

A ``"gemma4"`` file (:func:`read_gemma4_gguf`) is llama.cpp's BPE over raw UTF-8 with ``▁`` for
a space: no space prefix, the file's merges by rank (the ``rank-merge`` encoder), a symbol that
is no token spelled by its ``<0xNN>`` tokens, decoded as above without the strip. llama.cpp
also cuts the text into runs of newlines and runs of other characters, and a run of newlines
that is a token is that token; the loader checks that no merge joins a newline to another
character, that merging a token's run of newlines gives that token, and that no merge uses a
byte token (so HF's byte fallback before merging is the same), and refuses the file otherwise.
"""

from __future__ import annotations

from itertools import compress
from operator import methodcaller
from pathlib import Path

from ...errors import UnsupportedTokenizerError, VocabFormatError
from ...vocab import C_WHITE_SPACE, Vocab
from .. import native as native_readers
from ..sentencepiece import Piece, add_byte_pieces, byte_piece_value, score_merges
from .attributes import check_literal_order, llama_cpp_attributes

__all__ = ["read_gemma4_gguf", "read_spm_gguf"]

# llama.h `enum llama_token_type`.
_UNDEFINED, _NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = range(7)


def read_spm_gguf(metadata: dict, source: str, get) -> Vocab:
    """The Vocab of a GGUF file whose ``tokenizer.ggml.model`` is ``"llama"`` (``get`` is the
    typed metadata lookup of :mod:`.tokenizer`).

    Raises:
        VocabFormatError: missing or mismatched keys, repeated tokens, byte tokens that are not
            256 distinct ``<0xNN>``.
        UnsupportedTokenizerError: what llama.cpp would tokenize differently from the rules in
            the module docstring (a CONTROL, UNKNOWN or BYTE token a merge can make; what
            :func:`.attributes.llama_cpp_attributes` and :func:`check_literals` refuse).
    """
    from ...sentencepiece import sentencepiece_pipeline, word_cuts
    from ...spec import SentencePieceNormalizer

    tokens = get(metadata, "tokenizer.ggml.tokens", "an array of strings", source)
    scores = get(metadata, "tokenizer.ggml.scores", "an array of floats", source)
    types = get(metadata, "tokenizer.ggml.token_type", "an array of integers", source)
    if not len(tokens) == len(scores) == len(types):
        raise VocabFormatError(
            f"{source}: {len(tokens)} tokens, {len(scores)} scores and {len(types)} token types; they pair up"
        )
    name = get(metadata, "general.name", "a string", source, required=False) or ""
    seen: dict[str, int] = {}
    pieces: list[Piece] = []
    for i, (text, score, kind) in enumerate(zip(tokens, scores, types)):
        if not text:
            raise VocabFormatError(f"{source}: token {i} is empty")
        if text in seen:
            raise VocabFormatError(f"{source}: token {i} {text!r} repeats token {seen[text]}")
        if kind not in range(7) or kind == _UNDEFINED:
            raise VocabFormatError(f"{source}: token {i} {text!r} has the invalid token type {kind}")
        seen[text] = i
        pieces.append(Piece(text, float(score), kind))
    types, flags = llama_cpp_attributes(metadata, tokens, types, source)
    pieces = [Piece(p.text, p.score, kind) for p, kind in zip(pieces, types)]

    mergeable = {p.text: i for i, p in enumerate(pieces) if p.type in (_NORMAL, _USER_DEFINED, _UNUSED)}
    for i, piece in enumerate(pieces):
        if piece.type in (_CONTROL, _UNKNOWN, _BYTE):
            text = piece.text
            if len(text) == 1 or any(text[:cut] in seen and text[cut:] in seen for cut in range(1, len(text))):
                raise UnsupportedTokenizerError(
                    f"{source}: token {i} {text!r} (type {piece.type}) can be made from text by llama.cpp's "
                    "merge, which wordsplit does not reproduce yet"
                )
    ranks: dict[bytes, int] = {text.encode("utf-8"): i for text, i in mergeable.items()}
    byte_ids = add_byte_pieces(pieces, ranks, source)  # (GGUF's BYTE type is sentencepiece's)
    if len(byte_ids) != 256:
        raise UnsupportedTokenizerError(
            f"{source}: {len(byte_ids)} of the 256 byte tokens <0xNN> (llama.cpp spells a character that is no "
            "token by its bytes, and would fail without them)"
        )
    merges = score_merges(pieces, mergeable, source)
    special = {p.text: i for i, p in enumerate(pieces) if p.type in (_CONTROL, _UNKNOWN)}
    user_defined = {p.text: i for i, p in enumerate(pieces) if p.type == _USER_DEFINED}
    for text in user_defined:
        del ranks[text.encode("utf-8")]  # matched in the text before merging, never merged
    check_literals([*special, *user_defined], flags, source)
    add_space_prefix = metadata.get("tokenizer.ggml.add_space_prefix", True)
    if not isinstance(add_space_prefix, bool):
        raise VocabFormatError(f"{source}: 'tokenizer.ggml.add_space_prefix' should be a bool")

    def token(key: str, default: int):
        value = get(metadata, key, "an integer", source, required=False)
        return default if value is None else value

    pipeline = sentencepiece_pipeline(
        semantics="llama.cpp",
        normalizer=SentencePieceNormalizer(add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=False),
        unused=tuple(p.text for p in pieces if p.type == _UNUSED),
        strip_leading_space="first" if add_space_prefix else "none",
        **word_cuts(mergeable),
    )
    return Vocab(
        name=name or Path(source).name.removesuffix(".gz").removesuffix(".gguf"),
        source=source, ranks=ranks, special_tokens=special, added_tokens=user_defined, merges=merges,
        pipeline=pipeline,
        n_vocab=len(pieces), whole_piece_lookup=False,
        unk_token_id=token("tokenizer.ggml.unknown_token_id", 0),
        bos_token_id=token("tokenizer.ggml.bos_token_id", 1), eos_token_id=token("tokenizer.ggml.eos_token_id", 2),
        chat_template=get(metadata, "tokenizer.chat_template", "a string", source, required=False),
        literal_flags=flags,
    )


def check_literals(literals: list[str], flags: dict[str, int], source: str) -> None:
    """Refuse the literals llama.cpp would cut out of the text otherwise than wordsplit: two
    that overlap (:func:`.attributes.check_literal_order`), or, with whitespace stripping, one
    that starts or ends with whitespace (llama.cpp cuts the stripped whitespace away before it
    looks for the next token; wordsplit, as HF, could match a token inside it)."""
    check_literal_order(literals, source)
    if flags:
        for text in literals:
            if text[0] in C_WHITE_SPACE or text[-1] in C_WHITE_SPACE:
                raise UnsupportedTokenizerError(
                    f"{source}: the token {text!r} starts or ends with whitespace, which llama.cpp strips next to "
                    "its rstrip/lstrip tokens before looking for it; not supported"
                )


def read_gemma4_gguf(metadata: dict, source: str, get, *, packed_tokens=None) -> Vocab:
    """The Vocab of a GGUF file whose ``tokenizer.ggml.model`` is ``"gemma4"`` (see the module
    docstring; ``get`` is the typed metadata lookup of :mod:`.tokenizer`; ``packed_tokens``
    the tokens as the native core's ``PackedStrings``, when it read them).

    Raises:
        VocabFormatError: missing or mismatched keys, merges of unknown tokens.
        UnsupportedTokenizerError: a file where llama.cpp's newline runs or byte fallback would
            give other ids than rank merging (the checks in the module docstring).
    """
    from ...sentencepiece import joined_tokens
    from ..hf_sentencepiece import BYTE_FALLBACK_DECODER, read_hf_sentencepiece

    tokens = get(metadata, "tokenizer.ggml.tokens", "an array of strings", source)
    types = get(metadata, "tokenizer.ggml.token_type", "an array of integers", source)
    merges = get(metadata, "tokenizer.ggml.merges", "an array of strings", source)
    if len(types) != len(tokens):
        raise VocabFormatError(f"{source}: {len(types)} token types for {len(tokens)} tokens")
    table = dict(zip(tokens, range(len(tokens))))
    types, flags = llama_cpp_attributes(metadata, tokens, types, source, index=table)
    if metadata.get("tokenizer.ggml.add_space_prefix", False) is not False:
        raise UnsupportedTokenizerError(f"{source}: a gemma4 vocabulary with add_space_prefix is not supported")
    if len(table) != len(tokens) or "" in table:
        for i, text in enumerate(tokens):
            if not text or table[text] != i:
                raise VocabFormatError(f"{source}: token {i} {text!r} is empty or repeats another")
    # (the few tokens that are not NORMAL, found at C speed among the 262k)
    kind_of = {tokens[i]: types[i] for i in compress(range(len(types)), map(_NORMAL.__ne__, types))}
    for text, kind in kind_of.items():
        if kind in (_CONTROL, _UNKNOWN) and len(text) == 1:
            raise UnsupportedTokenizerError(
                f"{source}: the control token {text!r} is one character, which llama.cpp's merge emits as that "
                "token from plain text; not supported"
            )
    resolved = None
    if native_readers.is_packed_strings(merges) and native_readers.is_packed_strings(packed_tokens):
        # The merges resolved natively, by the rules of _resolve_merges below (which words the
        # error when they refuse one): no Python object per merge.
        resolved = native_readers.gemma4_merge_pairs(packed_tokens, types, merges)
    if resolved is None:
        pairs, newline_pairs = _resolve_merges(list(merges), table, kind_of, source)
    else:
        pairs, newline_pairs = resolved
    _check_newline_runs(table, newline_pairs, source)
    added = [{"id": i, "content": text, "special": kind in (_CONTROL, _UNKNOWN), "lstrip": False, "rstrip": False,
              "normalized": False, "single_word": False}
             for text, kind in kind_of.items() if kind in (_CONTROL, _UNKNOWN, _USER_DEFINED)
             for i in (table[text],)]  # (kind_of: the tokens that are not NORMAL, in id order)
    check_literals([entry["content"] for entry in added], flags, source)
    spec = {
        "model": {"type": "BPE", "vocab": table, "merges": [] if isinstance(pairs, bytes) else pairs,
                  "byte_fallback": True},
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "decoder": BYTE_FALLBACK_DECODER,
        "added_tokens": added,
    }
    joined = joined_tokens(table)

    def token(key: str):
        return get(metadata, key, "an integer", source, required=False)

    # read_hf_sentencepiece makes the tokens, merges, added tokens and normalizer; the
    # description (llama.cpp's decode), the file's ids and llama.cpp's flags are the GGUF's.
    name = get(metadata, "general.name", "a string", source, required=False)
    gguf_fields = dict(
        n_vocab=len(tokens), unk_token_id=token("tokenizer.ggml.unknown_token_id"),
        bos_token_id=token("tokenizer.ggml.bos_token_id"), eos_token_id=token("tokenizer.ggml.eos_token_id"),
        chat_template=get(metadata, "tokenizer.chat_template", "a string", source, required=False),
        literal_flags=flags,
    )
    return read_hf_sentencepiece(spec, source=source, name=name or Path(source).name.removesuffix(".gguf"),
                                 overrides=gguf_fields, merge_pairs=pairs if isinstance(pairs, bytes) else None,
                                 joined=joined, semantics="llama.cpp-bpe")


def _resolve_merges(merges: list[str], table: dict[str, int], kind_of: dict[str, int],
                    source: str) -> tuple[list[tuple[str, str]], list[tuple[int, str, str]]]:
    """The ``(left, right)`` texts of each merge, split as llama.cpp splits it and checked
    (see :func:`read_gemma4_gguf`), and the ``(rank, left, right)`` of each merge of newlines."""
    byte_tokens = {text for text in table if text[:3] == "<0x" and byte_piece_value(text) is not None}
    pairs = []
    newline_pairs = []
    for rank, merge in enumerate(merges):
        cut = merge.find(" ", 1)  # llama.cpp's split
        if cut < 0:
            raise VocabFormatError(f"{source}: merge #{rank} {merge!r} is not two tokens separated by a space")
        left, right = merge[:cut], merge[cut + 1:]
        joined = left + right
        if kind_of.get(joined, _NORMAL) != _NORMAL:
            raise UnsupportedTokenizerError(
                f"{source}: merge #{rank} {merge!r} makes the token {joined!r} of type {kind_of[joined]}, which "
                "llama.cpp then emits from plain text; not supported"
            )
        if "\n" in joined:
            if joined.strip("\n"):
                raise UnsupportedTokenizerError(
                    f"{source}: merge #{rank} {merge!r} joins a newline to other text, which llama.cpp's gemma4 "
                    "tokenizer treats apart; not supported"
                )
            newline_pairs.append((rank, left, right))
        if left in byte_tokens or right in byte_tokens:
            raise UnsupportedTokenizerError(
                f"{source}: merge #{rank} {merge!r} uses a byte token, which llama.cpp's gemma4 tokenizer never "
                "merges; not supported"
            )
        pairs.append((left, right))
    return pairs, newline_pairs


def _check_newline_runs(table: dict[str, int], newline_pairs: list[tuple[int, str, str]], source: str) -> None:
    """llama.cpp takes a run of newlines that is a token whole; rank merging must give it too
    (``newline_pairs``: the rank and the two sides of each merge of newlines, in rank order)."""
    rank: dict[tuple[str, str], int] = {}
    for r, left, right in newline_pairs:
        rank.setdefault((left, right), r)
    for text in filter(methodcaller("startswith", "\n"), table):  # (the few candidates, at C speed)
        if len(text) < 2 or text.strip("\n"):
            continue
        symbols = list(text)
        while len(symbols) > 1:
            best = min(range(len(symbols) - 1), key=lambda i: (rank.get((symbols[i], symbols[i + 1]), float("inf")), i))
            if (symbols[best], symbols[best + 1]) not in rank:
                break
            symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
        if symbols != [text]:
            raise UnsupportedTokenizerError(
                f"{source}: merging the newline token {text!r} by rank gives {len(symbols)} tokens, but llama.cpp "
                "takes a run of newlines that is a token whole; not supported"
            )
