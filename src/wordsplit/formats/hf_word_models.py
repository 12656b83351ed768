"""HF ``tokenizer.json`` files whose model looks words up: ``WordPiece`` (BERT, MiniLM, BGE,
E5, GTE...) and ``WordLevel``.

What such a file holds, read into the vocabulary's typed pipeline:

* the normalizer: ``BertNormalizer`` (its ``strip_accents: null`` follows ``lowercase``), or
  any normalizer a byte-level file may have (:func:`~wordsplit.formats.hf._normalizer`);
* the pre-tokenizer: ``BertPreTokenizer`` (a split at white space, which is dropped, then each
  punctuation character cut out: two steps of a split program, with HF's character classes),
  ``Whitespace``, ``WhitespaceSplit``, ``Punctuation``, ``Digits``, ``Split`` and a
  ``Sequence`` of them, or none (the text is one word);
* the model: its vocab is the vocabulary's tokens (every entry, the special ones too: the model
  looks only these up); WordPiece's ``unk_token``, ``continuing_subword_prefix`` and
  ``max_input_chars_per_word``, WordLevel's ``unk_token``;
* the decoder ``WordPiece`` (its prefix and ``cleanup``), or none (the tokens joined by spaces);
* the post-processor (``add_special_tokens``), any of :mod:`wordsplit.post_processor_programs`.

>>> import json
>>> data = json.dumps({"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "hi": 1, "##s": 2}},
...                    "pre_tokenizer": {"type": "BertPreTokenizer"}, "normalizer": None,
...                    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}}).encode()
>>> vocab = read_hf_word_model(json.loads(data), source="tiny.json", name="tiny")
>>> vocab.pipeline.model
WordPiece(unk_token='[UNK]', continuing_subword_prefix='##', max_input_chars_per_word=100)
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..post_processor_programs import post_processor_stage
from ..spec import NoDecoder, PipelineSpec, Stage, WordLevel, WordPiece, WordPieceDecoder
from ..split_programs import split_program
from ..vocab import Vocab

__all__ = ["WORD_MODELS", "read_hf_word_model", "vocab_ranks"]

#: The model types this module reads.
WORD_MODELS = ("WordPiece", "WordLevel")


def _spanner(value: Any, source: str, model: str = "word") -> Stage:
    """The split program of a pre-tokenizer (none: the text is one piece) before a ``model``
    that reads text."""
    from .hf import WHITESPACE_STEP, _flat_pre_tokenizers, _split_step, punctuation_class

    if value is None:
        return split_program([])
    if not isinstance(value, dict):
        raise VocabFormatError(f"{source}: pre_tokenizer must be an object or null")
    steps: list[dict[str, Any]] = []
    for step in _flat_pre_tokenizers(value, source):
        if step.get("type") == "BertPreTokenizer":
            # HF: split on char::is_whitespace (Removed), then on BERT punctuation (Isolated).
            steps += [dict(WHITESPACE_STEP), {"pattern": punctuation_class(), "behavior": "Isolated", "invert": False}]
        elif step.get("type") in ("ByteLevel", "Metaspace"):
            raise UnsupportedTokenizerError(
                f"{source}: a {step['type']} pre-tokenizer before a {model} model is not supported"
            )
        else:
            steps.append(_split_step(step, source))
    return split_program(steps)


def _decoder(value: Any, source: str) -> Stage:
    if value is None:
        return NoDecoder()
    if isinstance(value, dict) and value.get("type") == "WordPiece":
        prefix, cleanup = value.get("prefix", "##"), value.get("cleanup", True)
        if not isinstance(prefix, str) or not isinstance(cleanup, bool):
            raise VocabFormatError(f"{source}: the WordPiece decoder has a string prefix and a boolean cleanup")
        return WordPieceDecoder(prefix, cleanup)
    kind = value.get("type") if isinstance(value, dict) else value
    raise UnsupportedTokenizerError(f"{source}: decoder {kind!r} with a word model is not supported (only WordPiece)")


def _model(model: Mapping[str, Any], source: str) -> Stage:
    kind = model.get("type")
    unk = model.get("unk_token", "[UNK]" if kind == "WordPiece" else "<unk>")
    if not isinstance(unk, str):
        raise VocabFormatError(f"{source}: the model's unk_token must be a string")
    if kind == "WordLevel":
        return WordLevel(unk)
    prefix = model.get("continuing_subword_prefix", "##")
    longest = model.get("max_input_chars_per_word", 100)
    if not isinstance(prefix, str) or type(longest) is not int or longest < 0:
        raise VocabFormatError(f"{source}: WordPiece needs a string continuing_subword_prefix and a non-negative "
                               "integer max_input_chars_per_word")
    return WordPiece(unk, prefix, longest)


def vocab_ranks(table: Any, source: str, byte_level: bool = False) -> dict[bytes, int]:
    """A model's ``vocab`` object as token bytes → id: each token's UTF-8, or with
    ``byte_level`` the bytes its byte-level text spells.

    Raises:
        VocabFormatError: not a non-empty object, an id that is not a non-negative integer, a
            token that is not byte-level text (``byte_level``), or two tokens of one id.
    """
    from .bytelevel import token_bytes

    if not isinstance(table, dict) or not table:
        raise VocabFormatError(f"{source}: model.vocab must be a non-empty object of token → id")
    ranks: dict[bytes, int] = {}
    for text, i in table.items():
        if type(i) is not int or i < 0:
            raise VocabFormatError(f"{source}: vocab entry {text!r} has the id {i!r}; ids are non-negative integers")
        data = token_bytes(text) if byte_level else text.encode("utf-8", "surrogatepass")
        if data is None:
            raise VocabFormatError(f"{source}: vocab entry {text!r} is not a byte-level token")
        ranks[data] = i
    if len(set(ranks.values())) != len(ranks):
        raise VocabFormatError(f"{source}: two vocab entries have the same id")
    return ranks


def read_hf_word_model(spec: Mapping[str, Any], *, source: str, name: str, eos_token: str | None = None) -> Vocab:
    """The vocabulary of a parsed tokenizer.json whose model is WordPiece or WordLevel.

    Raises:
        VocabFormatError: malformed entries.
        UnsupportedTokenizerError: a stage wordsplit does not run with such a model.
    """
    from .hf import _added_tokens, _check_added_tokens, _hf_added_ids, _normalizer

    model = spec["model"]
    table = model.get("vocab")
    ranks = vocab_ranks(table, source)
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, table, source)
    normalizer = _normalizer(spec.get("normalizer"), source)
    _check_added_tokens([*special, *added], flags, normalizer, source)
    decoder = spec.get("decoder")
    pipeline = PipelineSpec(
        spanner=_spanner(spec.get("pre_tokenizer"), source, model["type"]), normalizer=normalizer,
        model=_model(model, source),
        decoder=_decoder(decoder, source), post_processor=post_processor_stage(spec.get("post_processor"), source),
    )
    literals = {**special, **added}
    return Vocab(name=name, ranks=ranks, pipeline=pipeline, special_tokens=special, added_tokens=added,
                 eos_token_id=literals.get(eos_token) if eos_token else None, source=source, literal_flags=flags)
