"""HF ``tokenizer.json`` files of SentencePiece-style BPE models (Llama 2, Mistral, Gemma):
model ``BPE`` over characters with ``byte_fallback``, ``▁`` for a space.

The layouts transformers writes for them load, with HF ``tokenizers``' semantics:

* the normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")`` (older Llama conversions), or
  ``Replace(" ", "▁")`` alone (Gemma, whose pre-tokenizer ``Split(" ")`` then finds nothing to
  split): a normalizer program, as for any tokenizer.json;
* the pre-tokenizer ``Metaspace`` with ``prepend_scheme`` ``first``, ``always`` or ``never``
  (:class:`~wordsplit.sentencepiece.MetaspaceNormalizer`: each space becomes ``▁``; ``▁`` is
  put before the stretch that does not start with one, for ``first`` only at the start of the
  text, not after an added token); with ``split: true`` (HF's default) the ``sentencepiece``
  spanner then cuts before every ``▁``, and each part is merged alone;
* the model: the characters of each stretch are its symbols; a character that is no token is
  its bytes' ``<0xNN>`` tokens (byte fallback, before merging); the merges of the file, by rank
  (the ``rank-merge`` encoder); ``ignore_merges``;
* the decoders ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and ``Strip(" ", 1, 0)``;
* added tokens as for every tokenizer.json (HF's two passes, its ids).

The tokens are the vocab's texts in UTF-8 (``▁`` included), and a byte token is its byte
where no one-character token is that byte's text (as for a ``.model`` file,
:mod:`wordsplit.formats.sentencepiece`). Anything else (a Unigram model, a ``Precompiled``
normalizer, other decoders, ``split: true`` with a replacement other than ``▁``) is an
:class:`UnsupportedTokenizerError`.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..vocab import Vocab
from .sentencepiece import byte_piece_value

__all__ = ["is_sentencepiece_style", "read_hf_sentencepiece"]

SPACE = "\u2581"


def is_sentencepiece_style(spec: Mapping[str, Any]) -> bool:
    """Whether a tokenizer.json is a SentencePiece-style BPE (byte fallback, Metaspace, or its
    decoders) rather than byte-level BPE."""
    model = spec.get("model") or {}
    if isinstance(model, dict) and model.get("byte_fallback"):
        return True
    for part in ("pre_tokenizer", "decoder"):
        for step in _steps(spec.get(part)):
            if step.get("type") in ("Metaspace", "ByteFallback"):
                return True
    return False


def _steps(spec: Any) -> list[dict]:
    if not isinstance(spec, dict):
        return []
    if spec.get("type") == "Sequence":
        inner = spec.get("pretokenizers", spec.get("decoders", spec.get("normalizers", [])))
        return [step for item in (inner or []) for step in _steps(item)]
    return [spec]


def read_hf_sentencepiece(spec: Mapping[str, Any], *, source: str, name: str,
                          eos_token: Optional[str] = None, overrides: Optional[Mapping[str, Any]] = None) -> Vocab:
    """The Vocab of a SentencePiece-style tokenizer.json (see the module docstring);
    ``overrides`` replaces fields of the Vocab made (the GGUF reader's ids, pattern and flags).

    Raises:
        UnsupportedTokenizerError: a construct outside the layouts above.
        VocabFormatError: malformed entries.
    """
    from ..sentencepiece import SentencePieceModel, cuts_at_words, metaspace_name, split_pattern
    from .hf import _added_tokens, _check_added_tokens, _hf_added_ids, _normalizer

    model = spec["model"]
    if model.get("type", "BPE") != "BPE":
        raise UnsupportedTokenizerError(f"{source}: model type {model.get('type')!r} is not supported (only BPE)")
    for key in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, "", 0, 0.0):
            raise UnsupportedTokenizerError(f"{source}: BPE {key}={model.get(key)!r} is not supported")
    if not model.get("byte_fallback"):
        raise UnsupportedTokenizerError(
            f"{source}: a Metaspace (SentencePiece-style) BPE without byte_fallback is not supported yet"
        )
    table = model.get("vocab")
    if not isinstance(table, dict):
        raise VocabFormatError(f"{source}: model.vocab must be an object of token → id")
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, table, source)
    normalizer = _normalizer(spec.get("normalizer"), source)
    _check_added_tokens([*special, *added], flags, normalizer, source)
    if flags:
        raise UnsupportedTokenizerError(
            f"{source}: added tokens with lstrip, rstrip, single_word or normalized are not supported in a "
            "SentencePiece-style tokenizer.json yet"
        )
    normalizer, metaspace_split = _with_metaspace(spec.get("pre_tokenizer"), normalizer, source, metaspace_name)
    _check_decoder(spec.get("decoder"), source)
    strip = "first" if any(step.get("type") == "Strip" for step in _steps(spec.get("decoder"))) else "none"

    ranks: dict[bytes, int] = {}
    byte_tokens: dict[int, int] = {}
    for text, i in table.items():
        if type(i) is not int or i < 0:
            raise VocabFormatError(f"{source}: vocab entry {text!r} has the id {i!r}; ids are non-negative integers")
        value = byte_piece_value(text) if text[:3] == "<0x" else None
        if value is not None:
            byte_tokens[value] = i
        else:
            ranks[text.encode("utf-8")] = i
    if len(byte_tokens) != 256:
        raise UnsupportedTokenizerError(
            f"{source}: byte_fallback with {len(byte_tokens)} of the 256 <0xNN> tokens is not supported"
        )
    for value, i in byte_tokens.items():
        key = bytes([value])
        ranks[key if key not in ranks else f"<0x{value:02X}>".encode()] = i
    merges: dict[tuple[int, int], int] = {}
    for rank, merge in enumerate(model.get("merges") or []):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        pair = (table.get(left), table.get(right))
        if None in pair or left + right not in table:
            raise VocabFormatError(f"{source}: merge #{rank} {left!r} + {right!r} names a token not in model.vocab")
        merges.setdefault(pair, rank)
    unk = model.get("unk_token")
    ignore_merges = bool(model.get("ignore_merges"))
    # (ignore_merges looks the whole stretch up, so it is not cut into words; Metaspace's split
    # cuts it, and ignore_merges then looks each part up)
    description = SentencePieceModel(semantics="hf", strip_leading_space=strip, ignore_merges=ignore_merges,
                                     words=not metaspace_split and not ignore_merges and cuts_at_words(table),
                                     metaspace_split=metaspace_split)
    literals = {**special, **added}
    fields = dict(
        name=name, source=source, ranks=ranks, special_tokens=special, added_tokens=added, merges=merges,
        pattern=split_pattern(description), normalizer=normalizer, whole_piece_lookup=False,
        unk_token_id=table.get(unk) if isinstance(unk, str) and type(table.get(unk)) is int else None,
        eos_token_id=literals.get(eos_token) if eos_token else None,
        n_vocab=max([*table.values(), *literals.values()]) + 1,
    )
    return Vocab(**{**fields, **(overrides or {})})


def _with_metaspace(pre_tokenizer: Any, normalizer: str, source: str, metaspace_name) -> tuple[str, bool]:
    """The normalizer, with a ``Metaspace`` pre-tokenizer after it, and whether that splits."""
    steps = _steps(pre_tokenizer)
    if not steps or (len(steps) == 1 and _splits_on_replaced_spaces(steps[0], normalizer)):
        return normalizer, False
    if len(steps) != 1 or steps[0].get("type") != "Metaspace":
        kinds = ", ".join(str(step.get("type")) for step in steps)
        raise UnsupportedTokenizerError(f"{source}: pre-tokenizer {kinds} is not supported with byte_fallback "
                                        "(only Metaspace)")
    step = steps[0]
    split = step.get("split", True)  # (HF's default)
    if not isinstance(split, bool):
        raise VocabFormatError(f"{source}: Metaspace split should be true or false, not {split!r}")
    scheme = step.get("prepend_scheme")
    if scheme is None:  # files from before prepend_scheme: add_prefix_space
        scheme = "always" if step.get("add_prefix_space", True) else "never"
    replacement = step.get("replacement", SPACE)
    if scheme not in ("first", "always", "never") or not isinstance(replacement, str) or len(replacement) != 1 \
            or (split and replacement != SPACE):
        raise UnsupportedTokenizerError(f"{source}: Metaspace {step!r} is not supported")
    return metaspace_name(normalizer=normalizer, replacement=replacement, prepend_scheme=scheme), split


def _splits_on_replaced_spaces(step: dict, normalizer: str) -> bool:
    """Whether ``step`` is a ``Split`` on ``" "`` after a normalizer that replaced every space
    with ``▁`` (transformers' Gemma layout): it finds nothing to split."""
    import json

    from ..normalizer_programs import NORMALIZER_PREFIX

    if step.get("type") != "Split" or step.get("pattern") != {"String": " "} or step.get("invert"):
        return False
    if not normalizer.startswith(NORMALIZER_PREFIX):
        return False
    replaces = {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}
    program = json.loads(normalizer[len(NORMALIZER_PREFIX):])
    return bool(program) and program[-1] == replaces


def _check_decoder(decoder: Any, source: str) -> None:
    steps = _steps(decoder)
    for step in steps:
        kind = step.get("type")
        if kind == "Replace" and step.get("pattern") == {"String": SPACE} and step.get("content") == " ":
            continue
        if kind in ("ByteFallback", "Fuse"):
            continue
        if kind == "Strip" and step.get("content") == " " and step.get("start") == 1 and step.get("stop") == 0:
            continue
        raise UnsupportedTokenizerError(f"{source}: decoder step {step!r} is not supported (Replace ▁, ByteFallback, "
                                        "Fuse, Strip(' ', 1, 0) are)")
