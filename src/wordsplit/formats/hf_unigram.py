r"""HF ``tokenizer.json`` files with a ``Unigram`` model (T5, ALBERT, XLM-R, mBART, Marian, and the
files transformers converts from SentencePiece models): the Vocab that encodes and decodes as
HF ``tokenizers`` does.

What such a file holds, read into the vocabulary's typed pipeline:

* the model: its ``vocab`` (a list of ``[piece, score]``; a piece's id is its place) is the
  vocabulary's tokens, every entry (the special ones too: HF's Viterbi searches them all), and
  :attr:`~wordsplit.vocab.Vocab.scores`; ``unk_id`` (null: none) names the unknown token;
  ``byte_fallback``; the ``unigram`` encoder runs it with HF's arithmetic
  (:mod:`wordsplit.encoders.unigram`);
* the normalizer: ``Precompiled`` (a SentencePiece character map, HF's way of running it,
  :mod:`wordsplit.normalizers.precompiled`), ``Replace``, ``Prepend``, the Unicode forms,
  ``Lowercase``, ``StripAccents``, ``Strip``, ``BertNormalizer``, a ``Sequence`` of them;
* the pre-tokenizer: ``Metaspace`` (every space made ``▁``, ``▁`` put before the text by its
  ``prepend_scheme``, and with ``split`` the text cut before every ``▁``: a
  :class:`~wordsplit.spec.Metaspace` normalizer and a :class:`~wordsplit.spec.SentencePieceSplit`),
  none (the text is one piece), or ``WhitespaceSplit`` then ``Metaspace`` with ``split``
  (T5's older files): the Metaspace stage with ``whitespace_split`` (each run of white space,
  Rust's ``char::is_whitespace``, dropped and a ``▁`` put before each word that does not start
  with one; the spanner's cut before every ``▁`` then gives HF's words); with
  ``prepend_scheme`` ``first`` a ``▁`` only before a first word at the input's start, and the
  spanner a split program of ``WhitespaceSplit`` and that cut;
* the decoder: ``Metaspace`` (every ``▁`` of the first token dropped when it prepends, ``▁`` a
  space elsewhere: :class:`~wordsplit.spec.SentencePieceDecoder` ``style="hf"`` with
  ``strip_leading_space="all"``, :func:`~wordsplit.engines.sentencepiece.decode_metaspace`),
  or ``Sequence`` of ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and an optional
  ``Strip(" ", 1, 0)`` (transformers' Llama layout, ``strip_leading_space`` ``"first"`` or
  ``"none"``);
* the post-processor (``add_special_tokens``), any of :mod:`wordsplit.post_processor_programs`;
* added tokens as for every tokenizer.json (HF's ids and its ``lstrip``, ``rstrip`` and
  ``single_word`` flags: XLM-R's and ALBERT's ``<mask>``/``[MASK]`` strip the space before them);
  ``normalized: true`` is refused with a ``Metaspace`` pre-tokenizer, as for SentencePiece-style
  BPE files (:func:`~wordsplit.formats.hf._refuse_normalized_added`).

Anything else is an :class:`UnsupportedTokenizerError` naming it.

>>> import json
>>> data = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0], ["b", -2.0]]},
...         "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
...         "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}}
>>> vocab = read_hf_unigram(data, source="tiny.json", name="tiny")
>>> vocab.scores, vocab.pipeline.model
((0.0, -1.0, -2.0), Unigram(unk_token='<unk>', byte_fallback=False, user_defined=()))
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any, Mapping, Optional

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..vocab import Vocab

__all__ = ["read_hf_unigram"]

SPACE = "\u2581"


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
    from .hf import _added_tokens, _check_added_tokens, _hf_added_ids, _refuse_normalized_added

    model = spec["model"]
    pre_steps = _pre_tokenizer_steps(spec.get("pre_tokenizer"), source)  # (what is not supported, named first)
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
    normalizer = _normalizer(spec.get("normalizer"), source)
    _check_added_tokens([*special, *added], flags, normalizer, source)
    hf_normalizer = normalizer
    normalizer, split = _with_metaspace(spec.get("pre_tokenizer"), pre_steps, normalizer, source)
    if normalizer is not hf_normalizer:  # (a Metaspace pre-tokenizer, run as part of the normalizer)
        _refuse_normalized_added(flags, source, "Unigram (Metaspace)")
    pipeline = PipelineSpec(
        normalizer=normalizer, spanner=_spanner(normalizer, split),
        model=Unigram(unk_token=texts[unk_id] if unk_id is not None else "", byte_fallback=byte_fallback),
        decoder=_decoder(spec.get("decoder"), table, source),
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


def _normalizer_steps(value: Any, source: str, depth: int = 0) -> list:
    """The typed steps of a tokenizer.json normalizer (a Sequence flattened); a ``Precompiled``
    map is read (and so checked) here."""
    from ..normalizer_programs import checked_step
    from .charsmap import cached_charsmap
    from ..spec import Precompiled

    if not isinstance(value, dict):
        raise VocabFormatError(f"{source}: a normalizer must be an object")
    kind = value.get("type")
    if kind == "Sequence":
        steps = value.get("normalizers")
        if not isinstance(steps, list) or depth > 16:
            raise VocabFormatError(f"{source}: normalizer Sequence needs an array 'normalizers'")
        return [step for member in steps for step in _normalizer_steps(member, source, depth + 1)]
    if kind == "Precompiled":
        charsmap = value.get("precompiled_charsmap")
        try:
            data = base64.b64decode(charsmap, validate=True) if isinstance(charsmap, str) else None
        except (binascii.Error, ValueError):
            data = None
        if data is None:
            raise VocabFormatError(f"{source}: the Precompiled normalizer's precompiled_charsmap is not base64")
        try:
            cached_charsmap(data)  # (an empty map too: HF refuses it)
        except VocabFormatError as exc:
            raise VocabFormatError(f"{source}: its Precompiled normalizer: {exc}") from None
        return [Precompiled(charsmap)]
    if kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Strip", "Replace", "Prepend",
                "BertNormalizer"):
        try:
            return [checked_step(value)]
        except VocabFormatError as exc:
            raise VocabFormatError(f"{source}: {exc}") from None
    raise UnsupportedTokenizerError(f"{source}: normalizer {kind!r} is not supported with a Unigram model")


def _normalizer(value: Any, source: str):
    """The file's normalizer stage."""
    from ..registry import NORMALIZERS
    from ..spec import NoNormalizer, Nfc, Nfd, Nfkc, Nfkd, Sequence

    steps = [] if value is None else _normalizer_steps(value, source)
    if not steps:
        return NoNormalizer()
    if len(steps) == 1 and isinstance(steps[0], (Nfc, Nfd, Nfkc, Nfkd)):
        return steps[0]
    stage = Sequence(tuple(steps))
    try:
        NORMALIZERS.for_stage(stage)  # built now: a bad Replace regex fails at load, naming the file
    except (VocabFormatError, UnsupportedTokenizerError) as exc:
        raise type(exc)(f"{source}: {exc}") from None
    return stage


def _pre_tokenizer_steps(value: Any, source: str) -> list[str]:
    """The pre-tokenizer's step types, one of the supported layouts (see :func:`_with_metaspace`).

    Raises:
        UnsupportedTokenizerError: another layout.
    """
    from .hf_sentencepiece import _steps

    kinds = [str(step.get("type")) for step in _steps(value, "pre_tokenizer", source)]
    if kinds not in ([], ["Metaspace"], ["WhitespaceSplit", "Metaspace"]):
        raise UnsupportedTokenizerError(f"{source}: pre-tokenizer {', '.join(kinds)} is not supported with a "
                                        "Unigram model (only Metaspace, WhitespaceSplit then Metaspace, or none)")
    return kinds


def _with_metaspace(value: Any, kinds: list[str], normalizer, source: str):
    """The normalizer with the pre-tokenizer's Metaspace after it, and whether the text is cut
    at every ``▁``."""
    from .hf_sentencepiece import _steps, _with_metaspace as metaspace_after

    if kinds == ["WhitespaceSplit", "Metaspace"]:
        metaspace = _steps(value, "pre_tokenizer", source)[1]
        stage, split = metaspace_after(metaspace, normalizer, source)
        if not split or stage.prepend_scheme == "never":
            raise UnsupportedTokenizerError(f"{source}: WhitespaceSplit before a Metaspace {metaspace!r} is not "
                                            "supported (only one that prepends and splits)")
        # (with "first" HF puts the ▁ before the first word only, yet encodes every word
        # alone: the normalizer keeps the white space and the spanner cuts there, see
        # :func:`_spanner`)
        return stage.replace(whitespace_split=True), split
    return metaspace_after(value, normalizer, source)


def _spanner(normalizer, split: bool):
    """The spanner after the normalizer (with the pre-tokenizer's Metaspace): the cut before
    every ``▁`` (``split``), or for ``WhitespaceSplit`` then a Metaspace with ``prepend_scheme``
    ``first`` (whose words do not all start with a ``▁``) HF's ``WhitespaceSplit`` then that
    cut, as a split program (the normalizer leaves the white space to it)."""
    from ..spec import Metaspace, SentencePieceSplit
    from ..split_programs import split_program
    from .hf import WHITESPACE_STEP

    if isinstance(normalizer, Metaspace) and normalizer.whitespace_split and normalizer.prepend_scheme == "first":
        cut = {"pattern": f"\\x{{{ord(normalizer.replacement):X}}}", "behavior": "MergedWithNext", "invert": False}
        return split_program([dict(WHITESPACE_STEP), cut])
    return SentencePieceSplit(metaspace_split=split)


def _decoder(value: Any, table: Mapping[str, int], source: str):
    """The decoder stage: HF's Metaspace, or transformers' byte fallback chain."""
    from ..spec import SentencePieceDecoder
    from .hf_sentencepiece import byte_fallback_decoder_strips, describe_decoder

    if isinstance(value, dict) and value.get("type") == "Metaspace":
        replacement = value.get("replacement", SPACE)
        scheme = value.get("prepend_scheme")
        if scheme is None:  # (files from before prepend_scheme: add_prefix_space)
            scheme = "always" if value.get("add_prefix_space", True) else "never"
        if replacement == SPACE and scheme in ("always", "first"):
            return SentencePieceDecoder(style="hf", strip_leading_space="all")
        if replacement == SPACE and scheme == "never" and not any(t.startswith("<0x") for t in table):
            return SentencePieceDecoder(style="hf", strip_leading_space="none")  # (▁ as a space, nothing else)
    else:
        strips = byte_fallback_decoder_strips(value)
        if strips is not None:
            return SentencePieceDecoder(style="hf", strip_leading_space="first" if strips else "none")
    raise UnsupportedTokenizerError(
        f"{source}: decoder {describe_decoder(value)} is not supported with a Unigram model (only Metaspace with "
        "the replacement ▁, or Sequence[Replace('▁', ' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0))"
    )
