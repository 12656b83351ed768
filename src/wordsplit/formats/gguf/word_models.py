"""GGUF WordPiece (``tokenizer.ggml.model == "bert"``) and Unigram (``"t5"``) vocabularies as
:class:`Vocab` values that tokenize and decode as llama.cpp's ``llm_tokenizer_wpm`` and
``llm_tokenizer_ugm`` do (``llama-vocab.cpp``), which differ from HF's tokenizers of the same
models in their details.

WordPiece (:func:`read_wpm_gguf`). A GGUF file spells a word's first token with ``▁``
(``▁hello``) and the tokens after it bare (HF's ``##lo`` is ``lo``). llama.cpp cuts the text
its own way (:class:`~wordsplit.spec.LlamaCppBertNormalizer`: a one-code-point NFD, controls
dropped, lowercase, with its Unicode 15.1 tables; :class:`~wordsplit.spec.LlamaCppWordPieceSplit`:
white space, then punctuation, ASCII symbols and CJK ideographs alone), puts ``▁`` before each
word and takes the longest token at each place, looking every token of the file up (control
ones too), with no limit on a word's length: a :class:`~wordsplit.spec.WordPiece` model with no
continuing-subword prefix. A word with a place no token starts at is the unknown token
(``tokenizer.ggml.unknown_token_id``, else 100).

Unigram (:func:`read_ugm_gguf`). The text goes through the file's character map and llama.cpp's
space rules (:class:`~wordsplit.spec.LlamaCppUnigramNormalizer`), then the Viterbi search over
the NORMAL, USER_DEFINED (scored 0) and UNUSED tokens, each run of unknown characters the
unknown token (``tokenizer.ggml.unknown_token_id``, else 2): the ``unigram`` encoder with the
``llama.cpp`` decoder style (:mod:`wordsplit.encoders.unigram`).

Both: CONTROL and UNKNOWN tokens are special tokens (matched in text only when allowed),
USER_DEFINED ones added tokens (always matched), with llama.cpp's load-time attributes
(:mod:`.attributes`); decode is ``llama_detokenize`` without special tokens (``▁`` a space,
control, unknown and UNUSED tokens nothing, an added token its text; the first token loses
one leading space with ``add_space_prefix``). Refused (:class:`UnsupportedTokenizerError`):
BYTE and UNDEFINED tokens, a token spelled like a byte token (llama.cpp decodes it as text),
no unknown token (the file's id and the default both outside the vocabulary), and literals
llama.cpp would cut otherwise (:func:`.spm.check_literals`). Not applied:
llama.cpp's ``clean_spaces`` of a WordPiece decode (as for byte-level BPE files; see
docs/vocabularies.md), and add_bos/add_eos/add_sep.

>>> from wordsplit import TokenizerOptions
>>> from wordsplit.formats.gguf.tokenizer import _get
>>> tokens = ["[UNK]", "▁un", "aff", "able", "▁!"]
>>> vocab = read_wpm_gguf({"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.unknown_token_id": 0}, "tiny.gguf", _get)
>>> tok = TokenizerOptions(backend="python").build(vocab)
>>> [tokens[i] for i in tok.encode_ordinary("Unaffable!  Unknown")]
['▁un', 'aff', 'able', '▁!', '[UNK]']
>>> tok.decode(tok.encode_ordinary("Unaffable!"))
' unaffable !'
"""

from __future__ import annotations

import base64
from pathlib import Path

from ...errors import UnsupportedTokenizerError, VocabFormatError
from ...vocab import Vocab
from .attributes import llama_cpp_attributes
from .spm import check_literals

__all__ = ["NO_WORD_LIMIT", "read_ugm_gguf", "read_wpm_gguf"]

# llama.h `enum llama_token_type`.
_UNDEFINED, _NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = range(7)

#: WordPiece's ``max_input_chars_per_word`` for llama.cpp, which has no limit: the largest the core holds.
NO_WORD_LIMIT = 2**64 - 1


def _bool(metadata: dict, key: str, default: bool, source: str) -> bool:
    value = metadata.get(key, default)
    if not isinstance(value, bool):
        raise VocabFormatError(f"{source}: {key!r} should be a bool, not {type(value).__name__}")
    return value


def _tokens(metadata: dict, source: str, get, *, scored: bool):
    """The tokens, types (and scores) of the file, checked, with llama.cpp's load-time types and
    literal flags: ``(tokens, file types, types, flags, scores)``."""
    tokens = get(metadata, "tokenizer.ggml.tokens", "an array of strings", source)
    types = get(metadata, "tokenizer.ggml.token_type", "an array of integers", source, required=False)
    if types is None:
        types = [_NORMAL] * len(tokens)  # llama.cpp's default when the file has none
    scores = get(metadata, "tokenizer.ggml.scores", "an array of floats", source, required=False) if scored else None
    if scored and scores is None:
        scores = [0.0] * len(tokens)  # llama.cpp's score when the file has none
    if len(types) != len(tokens) or (scores is not None and len(scores) != len(tokens)):
        raise VocabFormatError(f"{source}: {len(tokens)} tokens and {len(types)} token types"
                               + ("" if scores is None else f" and {len(scores)} scores") + "; they pair up")
    seen: dict[str, int] = {}
    for i, (text, kind) in enumerate(zip(tokens, types)):
        if not text:
            raise VocabFormatError(f"{source}: token {i} is empty")
        if text in seen:
            raise VocabFormatError(f"{source}: token {i} {text!r} repeats token {seen[text]}")
        seen[text] = i
        if kind not in range(7):
            raise VocabFormatError(f"{source}: token {i} {text!r} has the invalid token type {kind}")
        if kind in (_UNDEFINED, _BYTE):
            raise UnsupportedTokenizerError(
                f"{source}: token {i} {text!r} has type {kind} ({'UNDEFINED' if kind == _UNDEFINED else 'BYTE'}), "
                "which wordsplit does not read in a WordPiece or Unigram GGUF vocabulary"
            )
        if kind != _CONTROL and len(text) == 6 and text.startswith("<0x") and text.endswith(">") \
                and all(c in "0123456789ABCDEF" for c in text[3:5]):
            raise UnsupportedTokenizerError(
                f"{source}: token {i} {text!r} is spelled like a byte token, which llama.cpp decodes as its text "
                "and wordsplit's decoder as a byte; not supported"
            )
    file_types = list(types)
    types, flags = llama_cpp_attributes(metadata, tokens, types, source, index=seen)
    return tokens, file_types, types, flags, scores


def _unknown(metadata: dict, tokens: list[str], default: int, source: str, get) -> int:
    """The unknown token's id as llama.cpp takes it: the file's, or ``default`` when the file
    gives none or one outside the vocabulary (llama.cpp warns "bad special token")."""
    unk = get(metadata, "tokenizer.ggml.unknown_token_id", "an integer", source, required=False)
    if unk is None or not 0 <= unk < len(tokens):
        if default >= len(tokens):
            raise UnsupportedTokenizerError(
                f"{source}: no unknown token (tokenizer.ggml.unknown_token_id is {unk}, the default {default}, and "
                f"there are {len(tokens)} tokens); llama.cpp then cannot tokenize a word it does not know"
            )
        unk = default
    return unk


def _literals(tokens: list[str], types: list[int], flags: dict, source: str) -> tuple[dict, dict]:
    """The special (CONTROL, UNKNOWN) and added (USER_DEFINED) tokens, checked."""
    special = {t: i for i, (t, kind) in enumerate(zip(tokens, types)) if kind in (_CONTROL, _UNKNOWN)}
    added = {t: i for i, (t, kind) in enumerate(zip(tokens, types)) if kind == _USER_DEFINED}
    check_literals([*special, *added], flags, source)
    return special, added


def _name(metadata: dict, source: str, get) -> str:
    name = get(metadata, "general.name", "a string", source, required=False)
    return name or Path(source).name.removesuffix(".gz").removesuffix(".gguf")


def _decoder(metadata: dict, tokens: list[str], types: list[int], source: str):
    from ...spec import SentencePieceDecoder

    add_space_prefix = _bool(metadata, "tokenizer.ggml.add_space_prefix", False, source)
    return SentencePieceDecoder(style="llama.cpp", strip_leading_space="first" if add_space_prefix else "none",
                                unused=tuple(t for t, kind in zip(tokens, types) if kind == _UNUSED))


def _ids(metadata: dict, source: str, get) -> dict:
    def token(key: str):
        return get(metadata, key, "an integer", source, required=False)

    return dict(bos_token_id=token("tokenizer.ggml.bos_token_id"), eos_token_id=token("tokenizer.ggml.eos_token_id"),
                chat_template=get(metadata, "tokenizer.chat_template", "a string", source, required=False))


def read_wpm_gguf(metadata: dict, source: str, get) -> Vocab:
    """The Vocab of a GGUF file whose ``tokenizer.ggml.model`` is ``"bert"`` (see the module
    docstring; ``get`` is the typed metadata lookup of :mod:`.tokenizer`).

    Raises:
        VocabFormatError: missing or mismatched keys, empty or repeated tokens.
        UnsupportedTokenizerError: what the module docstring lists.
    """
    from ...spec import LlamaCppBertNormalizer, LlamaCppWordPieceSplit, PipelineSpec, WordPiece

    tokens, _, types, flags, _ = _tokens(metadata, source, get, scored=False)
    special, added = _literals(tokens, types, flags, source)
    unk = _unknown(metadata, tokens, 100, source, get)
    lowercase = _bool(metadata, "tokenizer.ggml.normalizer.lowercase", True, source)
    strip_accents = _bool(metadata, "tokenizer.ggml.normalizer.strip_accents", lowercase, source)
    pipeline = PipelineSpec(
        normalizer=LlamaCppBertNormalizer(lowercase=lowercase, strip_accents=strip_accents),
        spanner=LlamaCppWordPieceSplit(),
        # (llama.cpp looks every token up, whatever its type)
        model=WordPiece(unk_token=tokens[unk], continuing_subword_prefix="", max_input_chars_per_word=NO_WORD_LIMIT),
        decoder=_decoder(metadata, tokens, types, source),
    )
    return Vocab(name=_name(metadata, source, get), source=source,
                 ranks={text.encode("utf-8"): i for i, text in enumerate(tokens)},
                 special_tokens=special, added_tokens=added, pipeline=pipeline, n_vocab=len(tokens),
                 unk_token_id=unk, literal_flags=flags, **_ids(metadata, source, get))


def read_ugm_gguf(metadata: dict, source: str, get) -> Vocab:
    """The Vocab of a GGUF file whose ``tokenizer.ggml.model`` is ``"t5"`` (see the module
    docstring; ``get`` is the typed metadata lookup of :mod:`.tokenizer`).

    Raises:
        VocabFormatError: missing or mismatched keys, empty or repeated tokens, a malformed
            character map, no NORMAL token (the scores may be missing: all 0, as llama.cpp takes them).
        UnsupportedTokenizerError: what the module docstring lists, and an added token that
            llama.cpp makes a control token by its text (it keeps searching it, scored 0).
    """
    from ..charsmap import cached_charsmap
    from ...spec import LlamaCppUnigramNormalizer, PipelineSpec, SentencePieceSplit, Unigram

    tokens, file_types, types, flags, scores = _tokens(metadata, source, get, scored=True)
    for i, (before, after) in enumerate(zip(file_types, types)):
        if before == _USER_DEFINED and after != _USER_DEFINED:
            raise UnsupportedTokenizerError(
                f"{source}: llama.cpp makes the added token {i} {tokens[i]!r} a control token by its text and still "
                "finds it in text (its Unigram search was built first); not supported"
            )
    if _NORMAL not in file_types:
        raise VocabFormatError(f"{source}: a Unigram vocabulary needs a NORMAL token")
    special, added = _literals(tokens, types, flags, source)
    unk = _unknown(metadata, tokens, 2, source, get)
    charsmap = _charsmap(metadata, source)
    if charsmap:
        try:
            cached_charsmap(charsmap)
        except VocabFormatError as exc:
            raise VocabFormatError(f"{source}: tokenizer.ggml.precompiled_charsmap: {exc}") from None
    normalizer = LlamaCppUnigramNormalizer(
        add_space_prefix=_bool(metadata, "tokenizer.ggml.add_space_prefix", False, source),
        remove_extra_whitespaces=_bool(metadata, "tokenizer.ggml.remove_extra_whitespaces", False, source),
        charsmap=base64.b64encode(charsmap).decode("ascii"),
    )
    pipeline = PipelineSpec(normalizer=normalizer, spanner=SentencePieceSplit(),
                            model=Unigram(unk_token=tokens[unk], byte_fallback=False),
                            decoder=_decoder(metadata, tokens, types, source))
    searched = (_NORMAL, _USER_DEFINED, _UNUSED)  # llama.cpp's token_matcher
    return Vocab(name=_name(metadata, source, get), source=source,
                 ranks={text.encode("utf-8"): i for i, (text, kind) in enumerate(zip(tokens, types))
                        if kind in searched},
                 special_tokens=special, added_tokens=added, pipeline=pipeline, n_vocab=len(tokens),
                 scores=[float(s) for s in scores], unk_token_id=unk, literal_flags=flags,
                 **_ids(metadata, source, get))


def _charsmap(metadata: dict, source: str) -> bytes:
    """``tokenizer.ggml.precompiled_charsmap`` (an array of u8 or i8, which the reader gives as
    bytes), or empty."""
    data = metadata.get("tokenizer.ggml.precompiled_charsmap")
    if data is None:
        return b""
    if not isinstance(data, bytes):
        # llama.cpp asserts the element type too
        raise VocabFormatError(f"{source}: 'tokenizer.ggml.precompiled_charsmap' should be an array of u8 or i8 "
                               "(the map's bytes)")
    # llama.cpp refuses a map without its size, or whose trie leaves no room for outputs
    if len(data) < 4 or int.from_bytes(data[:4], "little") + 4 >= len(data):
        raise VocabFormatError(f"{source}: 'tokenizer.ggml.precompiled_charsmap' ({len(data)} bytes) has no room "
                               "for its trie and outputs")
    return data
