r"""The stages of HF ``tokenizer.json`` files converted from SentencePiece models (by
transformers' converters, or written like them): their normalizer, their ``Metaspace``
pre-tokenizer and their decoder, shared by the Unigram files (:mod:`.hf_unigram`: T5, ALBERT,
XLM-R, Marian) and the BPE files without byte fallback (:mod:`.hf_character_bpe`: NLLB, mBART,
M2M100, and transformers' base converter on a SentencePiece BPE model).

* the normalizer: ``Precompiled`` (a SentencePiece character map, HF's way of running it,
  :mod:`wordsplit.normalizers.precompiled`), ``Replace``, ``Prepend``, the Unicode forms,
  ``Lowercase``, ``StripAccents``, ``Strip``, ``BertNormalizer``, a ``Sequence`` of them;
* the pre-tokenizer: ``Metaspace`` (every space made ``▁``, ``▁`` put before the text by its
  ``prepend_scheme``, and with ``split`` the text cut before every ``▁``: a
  :class:`~wordsplit.spec.Metaspace` normalizer and a :class:`~wordsplit.spec.SentencePieceSplit`),
  none (the text is one piece), or ``WhitespaceSplit`` then ``Metaspace`` (T5's and NLLB's
  older files), any ``prepend_scheme`` and ``split``: the Metaspace stage with
  ``whitespace_split``. With ``always`` and ``split``, each run of white space (Rust's
  ``char::is_whitespace``) dropped and a ``▁`` put before each word that does not start with
  one, the spanner's cut before every ``▁`` then giving HF's words; otherwise the white space
  kept (``keep_white_space`` for ``always``), a ``▁`` before each word HF prepends to (every
  one, for ``first`` only a first word at the input's start, none for ``never``), and the
  spanner a split program of ``WhitespaceSplit`` then, with ``split``, that cut;
* the decoder: ``Metaspace`` (every ``▁`` of the first token dropped when it prepends, ``▁`` a
  space elsewhere: :class:`~wordsplit.spec.SentencePieceDecoder` ``style="hf"`` with
  ``strip_leading_space="all"``, :func:`~wordsplit.engines.sentencepiece.decode_metaspace`),
  or ``Sequence`` of ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and an optional
  ``Strip(" ", 1, 0)`` (transformers' Llama layout, ``strip_leading_space`` ``"first"`` or
  ``"none"``).

Each reader takes ``model``, the words for the file's model in its messages ("a Unigram
model"); anything else is an :class:`UnsupportedTokenizerError` naming it.

>>> pre = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
>>> kinds = pre_tokenizer_kinds(pre, "t.json", "a Unigram model")
>>> normalizer, split = with_metaspace(pre, kinds, metaspace_normalizer(None, "t.json", "a Unigram model"), "t.json")
>>> normalizer.prepend_scheme, metaspace_spanner(normalizer, split)
('always', SentencePieceSplit(user_defined=(), words=False, joined=(), metaspace_split=True))
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Mapping

from ..errors import UnsupportedTokenizerError, VocabFormatError

__all__ = ["metaspace_decoder", "metaspace_normalizer", "metaspace_spanner", "metaspace_stages", "pre_tokenizer_kinds",
           "with_metaspace"]

SPACE = "\u2581"


def metaspace_stages(spec: Mapping[str, Any], kinds: list[str], table: Mapping[str, int], literals: list[str],
                     flags: Mapping[str, int], source: str, model: str):
    """``(normalizer, spanner, decoder)`` of a parsed tokenizer.json converted from a
    SentencePiece model: its normalizer with the pre-tokenizer's ``Metaspace`` after it
    (``kinds``: :func:`pre_tokenizer_kinds`), the spanner, and the decoder over the model's
    ``table`` (token → id); its added tokens (``literals``, their ``flags``) checked against
    the normalizer (``normalized: true`` ones are found in the text of the normalizer before
    Metaspace, and Metaspace, after ``WhitespaceSplit`` too, runs on each part between them:
    :meth:`wordsplit.normalizers.MetaspaceNormalizer.part`).

    Raises:
        UnsupportedTokenizerError: a stage that is not one of the module docstring's.
        VocabFormatError: a malformed one.
    """
    from .hf import _check_added_tokens

    normalizer = metaspace_normalizer(spec.get("normalizer"), source, model)
    _check_added_tokens(literals, flags, normalizer, source)
    normalizer, split = with_metaspace(spec.get("pre_tokenizer"), kinds, normalizer, source)
    return normalizer, metaspace_spanner(normalizer, split), metaspace_decoder(spec.get("decoder"), table, source,
                                                                                model)


def _normalizer_steps(value: Any, source: str, model: str, depth: int = 0) -> list:
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
        return [step for member in steps for step in _normalizer_steps(member, source, model, depth + 1)]
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
    raise UnsupportedTokenizerError(f"{source}: normalizer {kind!r} is not supported with {model}")


def metaspace_normalizer(value: Any, source: str, model: str):
    """The file's normalizer stage (``model``: what the file's model is, for messages)."""
    from ..registry import NORMALIZERS
    from ..spec import NoNormalizer, Nfc, Nfd, Nfkc, Nfkd, Sequence

    steps = [] if value is None else _normalizer_steps(value, source, model)
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


def pre_tokenizer_kinds(value: Any, source: str, model: str) -> list[str]:
    """The pre-tokenizer's step types, one of the supported layouts (see :func:`with_metaspace`).

    Raises:
        UnsupportedTokenizerError: another layout.
    """
    from .hf_sentencepiece import _steps

    kinds = [str(step.get("type")) for step in _steps(value, "pre_tokenizer", source)]
    if kinds not in ([], ["Metaspace"], ["WhitespaceSplit", "Metaspace"]):
        raise UnsupportedTokenizerError(f"{source}: pre-tokenizer {', '.join(kinds)} is not supported with "
                                        f"{model} (only Metaspace, WhitespaceSplit then Metaspace, or none)")
    return kinds


def with_metaspace(value: Any, kinds: list[str], normalizer, source: str):
    """The normalizer with the pre-tokenizer's Metaspace after it, and whether the text is cut
    at every ``▁``."""
    from ..spec import Metaspace
    from .hf_sentencepiece import _steps, _with_metaspace as metaspace_after

    if kinds == ["WhitespaceSplit", "Metaspace"]:
        metaspace = _steps(value, "pre_tokenizer", source)[1]
        stage, split = metaspace_after(metaspace, normalizer, source)
        if not isinstance(stage, Metaspace):
            # (a Metaspace that neither prepends nor splits after a normalizer that makes every
            # space ▁ is dropped there as inert; WhitespaceSplit before it still cuts words)
            stage = Metaspace(before=normalizer, prepend_scheme="never")
        # (HF encodes every word alone: unless each word starts with a ▁ and is cut at each
        # one, "always" with split, the normalizer keeps the white space and the spanner cuts
        # there, see :func:`metaspace_spanner`)
        keep = not split and stage.prepend_scheme == "always"
        return stage.replace(whitespace_split=True, keep_white_space=keep), split
    return metaspace_after(value, normalizer, source)


def metaspace_spanner(normalizer, split: bool):
    """The spanner after the normalizer (with the pre-tokenizer's Metaspace): the cut before
    every ``▁`` (``split``), or for ``WhitespaceSplit`` then a Metaspace whose normalizer keeps
    the white space (:attr:`~wordsplit.spec.Metaspace.keeps_white_space`: its words do not all
    start with a ``▁``, or are not cut at each one) HF's ``WhitespaceSplit`` then, with
    ``split``, that cut, as a split program.

    >>> from wordsplit.spec import Metaspace
    >>> never = Metaspace(prepend_scheme="never", whitespace_split=True)
    >>> [step.behavior for step in metaspace_spanner(never, False).steps], len(metaspace_spanner(never, True).steps)
    (['Removed'], 2)
    """
    from ..spec import Metaspace, SentencePieceSplit
    from ..split_programs import split_program
    from .hf import WHITESPACE_STEP

    if isinstance(normalizer, Metaspace) and normalizer.keeps_white_space:
        cut = {"pattern": f"\\x{{{ord(normalizer.replacement):X}}}", "behavior": "MergedWithNext", "invert": False}
        return split_program([dict(WHITESPACE_STEP)] + ([cut] if split else []))
    return SentencePieceSplit(metaspace_split=split)


def metaspace_decoder(value: Any, table: Mapping[str, int], source: str, model: str):
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
        f"{source}: decoder {describe_decoder(value)} is not supported with {model} (only Metaspace with "
        "the replacement ▁, or Sequence[Replace('▁', ' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0))"
    )
