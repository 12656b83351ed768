r"""HF ``tokenizer.json`` files with a ``Unigram`` model (T5, ALBERT, XLM-R, mBART, Marian, and the
files transformers converts from SentencePiece models): the Vocab that encodes and decodes as
HF ``tokenizers`` does.

What such a file holds, read into the vocabulary's typed pipeline:

* the model: its ``vocab`` (a list of ``[piece, score]``; a piece's id is its place) is the
  vocabulary's tokens, every entry (the special ones too: HF's Viterbi searches them all), and
  :attr:`~wordsplit.vocab.Vocab.scores`; ``unk_id`` (null: none) names the unknown token;
  ``byte_fallback``; the ``unigram`` encoder runs it with HF's arithmetic
  (:mod:`wordsplit.encoders.unigram`);
* the normalizer, the ``Metaspace`` pre-tokenizer and the decoder of files converted from
  SentencePiece models (:mod:`~wordsplit.formats.hf_metaspace`);
* the post-processor (``add_special_tokens``), any of :mod:`wordsplit.post_processor_programs`;
* added tokens as for every tokenizer.json (HF's ids and its ``lstrip``, ``rstrip`` and
  ``single_word`` flags: XLM-R's and ALBERT's ``<mask>``/``[MASK]`` strip the space before them;
  ``normalized: true`` ones found in the text of the normalizer before ``Metaspace``, which then
  runs on each part between them, after ``WhitespaceSplit`` too, as HF runs it).

Anything else is an :class:`~wordsplit.errors.UnsupportedTokenizerError` naming it.

>>> import json
>>> data = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0], ["b", -2.0]]},
...         "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
...         "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}}
>>> vocab = read_hf_unigram(data, source="tiny.json", name="tiny")
>>> vocab.scores, vocab.pipeline.model
((0.0, -1.0, -2.0), Unigram(unk_token='<unk>', byte_fallback=False, user_defined=()))
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from ..errors import VocabFormatError
from ..vocab import Vocab

__all__ = ["read_hf_unigram"]

# What the messages call the model.
MODEL = "a Unigram model"


def read_hf_unigram(spec: Mapping[str, Any], *, source: str, name: str, eos_token: Optional[str] = None,
                    data: Optional[bytes] = None) -> Vocab:
    """The Vocab of a parsed tokenizer.json whose model is ``Unigram`` (see the module docstring).
    ``data`` is the file's text: the scores are read from it as HF reads them
    (:func:`serde_json_f64`); without it, from the parsed numbers' shortest spelling.

    Raises:
        VocabFormatError: malformed entries (the vocab, unk_id, a character map).
        UnsupportedTokenizerError: a stage wordsplit does not reproduce exactly.
    """
    from ..post_processor_programs import post_processor_stage
    from ..spec import PipelineSpec, Unigram
    from .hf import _added_tokens, _hf_added_ids
    from .hf_metaspace import metaspace_stages, pre_tokenizer_kinds

    model = spec["model"]
    pre_steps = pre_tokenizer_kinds(spec.get("pre_tokenizer"), source, MODEL)  # (what is not supported, named first)
    ranks, scores, texts = _model_vocab(model.get("vocab"), source)
    scores = _hf_scores(scores, data)
    unk_id = model.get("unk_id")
    if unk_id is not None and (type(unk_id) is not int or not 0 <= unk_id < len(texts)):
        raise VocabFormatError(f"{source}: the Unigram model's unk_id {unk_id!r} is not the index of a vocab entry")
    byte_fallback = model.get("byte_fallback", False)
    if not isinstance(byte_fallback, bool):
        raise VocabFormatError(f"{source}: the Unigram model's byte_fallback must be true or false")
    table = {text: i for i, text in enumerate(texts)}
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, table, source)
    normalizer, spanner, decoder = metaspace_stages(spec, pre_steps, table, [*special, *added], flags, source, MODEL)
    pipeline = PipelineSpec(
        normalizer=normalizer, spanner=spanner,
        model=Unigram(unk_token=texts[unk_id] if unk_id is not None else "", byte_fallback=byte_fallback),
        decoder=decoder,
        post_processor=post_processor_stage(spec.get("post_processor"), source),
    )
    literals = {**special, **added}
    return Vocab(
        name=name, source=source, ranks=ranks, scores=scores, special_tokens=special, added_tokens=added,
        pipeline=pipeline, unk_token_id=unk_id, eos_token_id=literals.get(eos_token) if eos_token else None,
        literal_flags=flags,
        n_vocab=max([len(texts), *(i + 1 for i in literals.values())]),
    )


def serde_json_f64(text: str) -> float:
    """The float64 HF ``tokenizers`` reads for a JSON number: ``serde_json`` without its
    ``float_roundtrip`` feature, which is not always the nearest double (a quarter of a T5
    vocab's scores are one ulp off): the digits as a u64 (those past its range ignored, an
    integer part's counted in the exponent), then one multiplication or division by the
    power of ten of its table (by 1e308 first while the exponent is past 308).

    >>> serde_json_f64("-3.6185367107391357"), float("-3.6185367107391357")
    (-3.618536710739136, -3.6185367107391357)
    """
    negative = text.startswith("-")
    body = text[1:] if negative else text
    mantissa, _, power = body.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    significand, exponent = 0, 0
    for k, digit in enumerate(whole):
        if _overflows(significand, int(digit)):
            exponent += len(whole) - k
            break
        significand = significand * 10 + int(digit)
    for digit in fraction:
        if _overflows(significand, int(digit)):
            break
        significand = significand * 10 + int(digit)
        exponent -= 1
    if power:
        exponent += int(power)
    value = float(significand)
    while True:
        if abs(exponent) <= 308:
            value = value * _POW10[abs(exponent)] if exponent >= 0 else value / _POW10[abs(exponent)]
            break
        if value == 0.0 or exponent > 0:
            break  # (an exponent past 308: HF refuses the file, or the number is 0)
        value /= 1e308
        exponent += 308
    return -value if negative else value


_POW10 = [float(f"1e{k}") for k in range(309)]
_U64_MAX = (1 << 64) - 1


def _overflows(significand: int, digit: int) -> bool:
    """serde_json's ``overflow!(significand * 10 + digit, u64::MAX)``."""
    return significand >= _U64_MAX // 10 and (significand > _U64_MAX // 10 or digit > _U64_MAX % 10)


def _hf_scores(scores: list[float], data: Optional[bytes]) -> list[float]:
    """The scores as HF reads them: each number's text through :func:`serde_json_f64` (from
    ``data``, the file; else each parsed score's shortest spelling, the text a tokenizer.json
    written by HF or Python holds)."""
    import json

    if data is not None:
        try:
            entries = json.loads(data, parse_float=serde_json_f64)["model"]["vocab"]
            return [float(score) for _, score in entries]
        except (ValueError, KeyError, TypeError):
            pass  # (the parsed file's scores, checked already)
    return [serde_json_f64(repr(score)) for score in scores]


def _model_vocab(entries: Any, source: str) -> tuple[dict[bytes, int], list[float], list[str]]:
    """``(ranks, scores, texts)`` of the model's ``[[piece, score], ...]``.

    Raises:
        VocabFormatError: not a non-empty list of pairs of a text and a finite number, or a
            piece listed twice (HF's lookup would find only the last one).
    """
    if not isinstance(entries, list) or not entries:
        raise VocabFormatError(f"{source}: a Unigram model's vocab is a non-empty list of [piece, score]")
    ranks: dict[bytes, int] = {}
    scores: list[float] = []
    texts: list[str] = []
    for i, entry in enumerate(entries):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and entry[0]
                and type(entry[1]) in (int, float) and math.isfinite(entry[1])):
            raise VocabFormatError(
                f"{source}: vocab entry {i} is {entry!r:.80}, not [a non-empty piece, a finite score]"
            )
        try:
            data = entry[0].encode("utf-8")
        except UnicodeEncodeError:
            raise VocabFormatError(f"{source}: vocab entry {i} is not valid Unicode text") from None
        if data in ranks:
            raise VocabFormatError(f"{source}: the piece {entry[0]!r} is listed twice (ids {ranks[data]} and {i})")
        ranks[data] = i
        scores.append(float(entry[1]))
        texts.append(entry[0])
    return ranks, scores, texts
