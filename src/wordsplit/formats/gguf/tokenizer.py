"""A GGUF file's tokenizer metadata as a :class:`~wordsplit.vocab.Vocab` that tokenizes as
llama.cpp does (the rules are in :mod:`wordsplit.formats.gguf`)."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import UnsupportedTokenizerError, VocabFormatError
from ...vocab import Vocab
from ..bytelevel import token_bytes
from ..files import pinned, read_file
from ..merges import merges_are_rank_ordered, pair_ranked_merges
from ...spec import PipelineSpec
from .pre_tokenizers import IGNORE_MERGES, pre_pattern
from .reader import is_packed_strings, packed_metadata, read_gguf_head
from .spm import read_gemma4_gguf, read_spm_gguf
from .word_models import read_ugm_gguf, read_wpm_gguf

__all__ = ["load_gguf", "read_gguf"]

# llama.h `enum llama_token_type`, the values of tokenizer.ggml.token_type.
_UNDEFINED, _NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = range(7)
_TOKEN_TYPE_NAMES = ("UNDEFINED", "NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "UNUSED", "BYTE")

# What llama.cpp calls the tokenizer models it knows that wordsplit does not read.
_OTHER_MODELS = {
    "rwkv": "RWKV's trie tokenizer",
    "plamo2": "PLaMo-2's tokenizer",
    "whitespace": "a whitespace-split vocabulary over raw UTF-8 (not byte-level)",
    "hybriddna": "HybriDNA's k-mer tokenizer",
    "test": "llama.cpp's test tokenizer",
    "no_vocab": "no vocabulary",
    "none": "no vocabulary",
}

# Python types the metadata reader produces, by the description used in errors. GGUF arrays
# hold one element type, so the first element speaks for all.
_KINDS = {
    "a string": lambda v: isinstance(v, str),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "an array of strings": lambda v: (isinstance(v, list) and (not v or isinstance(v[0], str))) or is_packed_strings(v),
    "an array of floats": lambda v: (
        isinstance(v, list) and (not v or (isinstance(v[0], (int, float)) and not isinstance(v[0], bool)))
    ),
    "an array of integers": lambda v: (
        isinstance(v, list) and (not v or (isinstance(v[0], int) and not isinstance(v[0], bool)))
    ),
}


def _get(metadata: dict[str, object], key: str, kind: str, source: str, *, required: bool = True):
    """``metadata[key]`` checked to be ``kind``; ``None`` when absent and not ``required``."""
    if key not in metadata:
        if required:
            raise VocabFormatError(f"{source}: the GGUF metadata has no {key!r}, which a tokenizer needs")
        return None
    value = metadata[key]
    if not _KINDS[kind](value):
        raise VocabFormatError(f"{source}: {key!r} should be {kind}, not {type(value).__name__} {value!r:.60}")
    return value


def _check_unique(tokens: list[str], source: str) -> None:
    """llama.cpp refuses a vocabulary with a repeated token text ("duplicate token in vocabulary")."""
    if len(set(tokens)) == len(tokens):
        return
    first: dict[str, int] = {}
    for i, text in enumerate(tokens):
        # Empty texts are left to the per-type checks (llama.cpp renames them "[EMPTY_i]").
        if text and first.setdefault(text, i) != i:
            raise VocabFormatError(f"{source}: token {i} {text!r} repeats token {first[text]}")


def read_gguf(data: bytes, *, source: str = "<bytes>") -> Vocab:
    """The Vocab of a GGUF file's tokenizer, as llama.cpp tokenizes with it: byte-level BPE
    (``"gpt2"``) here; SentencePiece (``"llama"``) and Gemma 4 (``"gemma4"``) files in :mod:`.spm`,
    WordPiece (``"bert"``) and Unigram (``"t5"``) ones in :mod:`.word_models`.

    ``n_vocab`` is the number of tokens in the file, UNUSED padding included. The merges become
    rank-based when they are in merged-id order (every GGUF converted from an HF byte-level
    tokenizer we know), else a pair-ranked table. The name is ``general.name`` if present, else
    the file name without ``.gguf``. A file without ``tokenizer.ggml.pre`` gets llama.cpp's
    ``"default"`` pre-tokenizer, as llama.cpp gives it (with a warning that quality degrades).
    ``chat_template``, ``bos_token_id`` and ``eos_token_id`` are the file's, when it has them.

    Raises:
        VocabFormatError: a malformed file or tokenizer (see :func:`read_gguf_metadata`; also
            missing keys, mismatched lengths, an empty NORMAL token, a repeated token, a merge
            of tokens that are not byte-level NORMAL ones), naming ``source`` and the entry.
        UnsupportedTokenizerError: another ``tokenizer.ggml.model`` than ``"gpt2"``,
            ``"llama"``, ``"gemma4"``, ``"bert"`` and ``"t5"`` (or what :mod:`.spm` and
            :mod:`.word_models` refuse), a ``"gpt2"`` file with a
            pre-tokenizer for raw UTF-8, or a pre-tokenizer not in
            :data:`LLAMA_CPP_PRE_PATTERNS` (the message lists the known ones).
    """
    # (the merges stay packed, and the tokens too for the native readers: they resolve the
    # merges without a str per merge)
    metadata = packed_metadata(data, source, ("tokenizer.ggml.tokens", "tokenizer.ggml.merges"))
    packed_tokens = metadata.get("tokenizer.ggml.tokens")
    if is_packed_strings(packed_tokens):
        metadata["tokenizer.ggml.tokens"] = packed_tokens.tolist()
    model = _get(metadata, "tokenizer.ggml.model", "a string", source)
    if model == "llama":
        return read_spm_gguf(metadata, source, _get)
    if model == "gemma4":
        return read_gemma4_gguf(metadata, source, _get, packed_tokens=packed_tokens)
    if model == "bert":
        return read_wpm_gguf(metadata, source, _get)
    if model == "t5":
        return read_ugm_gguf(metadata, source, _get)
    if model != "gpt2":
        kind = f" ({_OTHER_MODELS[model]})" if model in _OTHER_MODELS else ""
        raise UnsupportedTokenizerError(
            f"{source}: tokenizer.ggml.model is {model!r}{kind}; wordsplit reads the GGUF vocabularies "
            "of byte-level BPE (model 'gpt2'), SentencePiece (model 'llama'), Gemma 4 (model 'gemma4'), "
            "WordPiece (model 'bert') and Unigram (model 't5')"
        )
    pre = _get(metadata, "tokenizer.ggml.pre", "a string", source, required=False)
    pattern = pre_pattern(pre, source)

    tokens = _get(metadata, "tokenizer.ggml.tokens", "an array of strings", source)
    types = _get(metadata, "tokenizer.ggml.token_type", "an array of integers", source, required=False)
    if types is None:
        types = [_NORMAL] * len(tokens)  # llama.cpp's default when the file has no types
    elif len(types) != len(tokens):
        raise VocabFormatError(
            f"{source}: tokenizer.ggml.token_type has {len(types)} entries for {len(tokens)} tokens"
        )
    _check_unique(tokens, source)

    ranks: dict[bytes, int] = {}
    special_tokens: dict[str, int] = {}
    added_tokens: dict[str, int] = {}
    normal_bytes: dict[str, bytes] = {}  # byte-level text → bytes, to resolve the merges
    for i, (text, token_type) in enumerate(zip(tokens, types)):
        if token_type == _NORMAL:
            piece = token_bytes(text)
            if piece is None:
                # Not GPT-2's byte-to-unicode spelling (Command-R has 1,403 such, e.g. "™"): BPE
                # runs on byte-level text, so neither llama.cpp nor HF can ever produce it. An
                # id without bytes, like UNUSED; a merge that uses it is refused below.
                continue
            if not piece:
                raise VocabFormatError(f"{source}: NORMAL token {i} is empty")
            ranks[piece] = i
            normal_bytes[text] = piece
        elif token_type == _UNUSED:
            continue  # padding such as "[PAD151669]": an id, but nothing encodes to it
        elif token_type in (_CONTROL, _UNKNOWN, _USER_DEFINED):
            # Their texts are literal, not byte-level spelled (llama.cpp's token_to_piece copies them).
            if not text:
                raise VocabFormatError(f"{source}: token {i} (type {token_type}) is empty")
            if token_type == _USER_DEFINED:
                added_tokens[text] = i  # matched in text even without parse_special, like HF's added tokens
            else:
                # llama.cpp matches UNKNOWN like CONTROL: only with parse_special (tokenizer_st_partition).
                special_tokens[text] = i
        elif token_type in (_UNDEFINED, _BYTE):
            raise UnsupportedTokenizerError(
                f"{source}: token {i} {text!r} has type {token_type} ({_TOKEN_TYPE_NAMES[token_type]}), "
                "which byte-level BPE vocabularies do not use"
            )
        else:
            raise VocabFormatError(f"{source}: token {i} {text!r} has the invalid token type {token_type}")

    merge_texts = _get(metadata, "tokenizer.ggml.merges", "an array of strings", source)
    merges: list[tuple[bytes, bytes]] = []
    for rank, merge in enumerate(merge_texts):
        # llama.cpp splits at `word.find(' ', 1)`. A byte-level token has no literal space (it
        # spells one "Ġ"), so a valid merge has exactly this one.
        cut = merge.find(" ", 1)
        if cut < 0:
            raise VocabFormatError(f"{source}: merge #{rank} {merge!r} is not two tokens separated by a space")
        try:
            merges.append((normal_bytes[merge[:cut]], normal_bytes[merge[cut + 1:]]))
        except KeyError as exc:
            raise VocabFormatError(
                f"{source}: merge #{rank} {merge!r} uses {exc.args[0]!r}, which is not a byte-level NORMAL token"
            ) from None
    if merges_are_rank_ordered(ranks, merges):
        pair_ranks, whole_piece_lookup = None, True
    else:
        pair_ranks, whole_piece_lookup = pair_ranked_merges(ranks, merges, source), pre in IGNORE_MERGES

    name = _get(metadata, "general.name", "a string", source, required=False)
    return Vocab(
        name=name or Path(source).name.removesuffix(".gz").removesuffix(".gguf"),
        ranks=ranks,
        pipeline=PipelineSpec(spanner=pattern),  # (no normalizer: GGUF records none, llama.cpp applies none)
        special_tokens=special_tokens,
        added_tokens=added_tokens,
        merges=pair_ranks,
        n_vocab=len(tokens),
        eos_token_id=_get(metadata, "tokenizer.ggml.eos_token_id", "an integer", source, required=False),
        bos_token_id=_get(metadata, "tokenizer.ggml.bos_token_id", "an integer", source, required=False),
        whole_piece_lookup=whole_piece_lookup,
        source=source,
        chat_template=_get(metadata, "tokenizer.chat_template", "a string", source, required=False),
    )


def load_gguf(path: str | os.PathLike) -> Vocab:
    """:func:`read_gguf` on the file at ``path``: its header and metadata only
    (:func:`read_gguf_head`), or the whole file gunzipped when the name ends in ``.gz``."""
    if Path(path).suffix == ".gz":
        data = read_file(path)
    else:
        data = pinned(path)  # load_vocab read and hashed these bytes already
        if data is None:
            data = read_gguf_head(path)
    return read_gguf(data, source=os.fspath(path))
