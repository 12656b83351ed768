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
* the decoder ``Sequence`` of ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and optionally
  ``Strip(" ", 1, 0)``, exactly so (:func:`byte_fallback_decoder_strips`; with another decoder
  HF decodes other text);
* added tokens as for every tokenizer.json (HF's ids, its two passes, its ``lstrip``,
  ``rstrip`` and ``single_word`` flags; ``normalized: true`` ones found in the normalized text,
  as older Llama conversions list ``<unk>`` and ``<s>``; with a ``Metaspace`` pre-tokenizer,
  Metaspace then runs on each part between them, as HF runs it).

The tokens are the vocab's texts in UTF-8 (``▁`` included), and a byte token (``<0x0A>``:
the spelling HF's byte fallback looks up, one per byte, all 256) is its byte
where no one-character token is that byte's text (as for a ``.model`` file,
:mod:`wordsplit.formats.sentencepiece`). Anything else (a Unigram model, a ``Precompiled``
normalizer, other decoders, byte tokens spelled otherwise or twice, ``split: true`` with a
replacement other than ``▁``) is an
:class:`UnsupportedTokenizerError`.
"""

from __future__ import annotations

from itertools import chain
from operator import methodcaller
from typing import Any, Mapping, Optional

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..spec import Metaspace, Replace, Sequence, Stage
from ..vocab import Vocab

__all__ = ["BYTE_FALLBACK_DECODER", "byte_fallback_decoder_strips", "describe_decoder", "hf_byte_value",
           "is_sentencepiece_style", "read_hf_sentencepiece"]

SPACE = "\u2581"


def is_sentencepiece_style(spec: Mapping[str, Any], source: str = "tokenizer.json") -> bool:
    """Whether a tokenizer.json is a SentencePiece-style BPE (byte fallback, Metaspace, or its
    decoders) rather than byte-level BPE.

    Raises:
        VocabFormatError: a pre-tokenizer or decoder ``Sequence`` without a list of steps.
    """
    model = spec.get("model") or {}
    if isinstance(model, dict) and model.get("byte_fallback"):
        return True
    for part in ("pre_tokenizer", "decoder"):
        for step in _steps(spec.get(part), part, source):
            if step.get("type") in ("Metaspace", "ByteFallback"):
                return True
    return False


# The key of a Sequence's list of steps, per part of a tokenizer.json.
_SEQUENCE_STEPS = {"pre_tokenizer": "pretokenizers", "decoder": "decoders"}


def _steps(spec: Any, part: str, source: str, depth: int = 0) -> list[dict]:
    """The steps of a tokenizer.json ``part`` (``pre_tokenizer`` or ``decoder``), a ``Sequence``
    flattened; nothing for a part that is not an object.

    >>> _steps({"type": "Sequence", "pretokenizers": [{"type": "Metaspace"}]}, "pre_tokenizer", "t.json")
    [{'type': 'Metaspace'}]

    Raises:
        VocabFormatError: a ``Sequence`` whose steps are not a list, or nested over 16 deep.
    """
    if not isinstance(spec, dict):
        return []
    if spec.get("type") != "Sequence":
        return [spec]
    key = _SEQUENCE_STEPS[part]
    inner = spec.get(key)
    if not isinstance(inner, list) or depth > 16:
        raise VocabFormatError(f"{source}: {part} Sequence needs a list {key!r} of steps")
    return [step for item in inner for step in _steps(item, part, source, depth + 1)]


def read_hf_sentencepiece(spec: Mapping[str, Any], *, source: str, name: str,
                          eos_token: Optional[str] = None, overrides: Optional[Mapping[str, Any]] = None,
                          merge_pairs: Optional[bytes] = None, joined: Optional[tuple[str, ...]] = None,
                          semantics: str = "hf") -> Vocab:
    """The Vocab of a SentencePiece-style tokenizer.json (see the module docstring);
    ``overrides`` replaces fields of the Vocab made (the GGUF reader's ids and flags);
    ``semantics="llama.cpp-bpe"`` decodes as llama.cpp does, with no dummy prefix to strip;
    ``merge_pairs`` are the model's merges resolved to ids already, packed
    (:func:`~wordsplit.vocab.pack_merges`: each distinct pair at its first rank), in place of
    ``spec``'s (the GGUF reader's 515,000); ``joined`` is
    :func:`~wordsplit.sentencepiece.joined_tokens` of the vocab, when the caller has it.

    Raises:
        UnsupportedTokenizerError: a construct outside the layouts above.
        VocabFormatError: malformed entries.
    """
    from ..sentencepiece import sentencepiece_pipeline, word_cuts
    from .hf import _added_tokens, _check_added_tokens, _hf_added_ids, _normalizer

    model = spec["model"]
    if model.get("type", "BPE") != "BPE":
        raise UnsupportedTokenizerError(f"{source}: model type {model.get('type')!r} is not supported (only BPE)")
    for key in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, "", 0, 0.0):
            raise UnsupportedTokenizerError(f"{source}: BPE {key}={model.get(key)!r} is not supported")
    if not model.get("byte_fallback"):  # (read by formats.hf_character_bpe.read_hf_metaspace_bpe)
        raise UnsupportedTokenizerError(f"{source}: this reader reads SentencePiece-style BPE with byte_fallback")
    table = model.get("vocab")
    if not isinstance(table, dict):
        raise VocabFormatError(f"{source}: model.vocab must be an object of token → id")
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, table, source)
    normalizer = _normalizer(spec.get("normalizer"), source)
    _check_added_tokens([*special, *added], flags, normalizer, source)
    # (normalized added tokens: the engines run Metaspace on each part HF's second pass leaves)
    normalizer, metaspace_split = _with_metaspace(spec.get("pre_tokenizer"), normalizer, source)
    strip = "first" if _check_decoder(spec.get("decoder"), source) else "none"

    ids = table.values()
    if ids and (set(map(type, ids)) != {int} or min(ids) < 0):  # (C-speed checks; the loop names one)
        for text, i in table.items():
            if type(i) is not int or i < 0:
                raise VocabFormatError(
                    f"{source}: vocab entry {text!r} has the id {i!r}; ids are non-negative integers")
    byte_tokens = _byte_tokens(table, source)
    ranks = dict(zip(map(str.encode, table), ids))  # (262k tokens for Gemma: no Python loop)
    for value in byte_tokens:
        del ranks[b"<0x%02X>" % value]
    for value, i in byte_tokens.items():
        key = bytes([value])
        ranks[key if key not in ranks else f"<0x{value:02X}>".encode()] = i
    merges: dict[tuple[int, int], int] | bytes = {} if merge_pairs is None else merge_pairs
    for rank, merge in enumerate(model.get("merges") or [] if merge_pairs is None else []):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        pair = (table.get(left), table.get(right))
        if None in pair or left + right not in table:
            raise VocabFormatError(f"{source}: merge #{rank} {left!r} + {right!r} names a token not in model.vocab")
        if semantics == "hf":
            merges[pair] = rank  # (a pair listed twice has its last rank: HF's map of merges keeps the last)
        else:
            merges.setdefault(pair, rank)  # (llama.cpp's bpe_ranks keeps the first)
    unk = model.get("unk_token")
    ignore_merges = bool(model.get("ignore_merges"))
    # (ignore_merges looks the whole stretch up, so it is not cut into words; Metaspace's split
    # cuts it, and ignore_merges then looks each part up)
    if semantics != "hf":
        strip = "none"  # (llama.cpp's gemma4 decode keeps every space)
    pipeline = sentencepiece_pipeline(semantics=semantics, normalizer=normalizer, strip_leading_space=strip,
                                      ignore_merges=ignore_merges,
                                      **word_cuts(table if joined is None else joined,
                                                  not metaspace_split and not ignore_merges),
                                      metaspace_split=metaspace_split)
    literals = {**special, **added}
    fields = dict(
        name=name, source=source, ranks=ranks, special_tokens=special, added_tokens=added, merges=merges,
        pipeline=pipeline, whole_piece_lookup=False, literal_flags=flags,
        unk_token_id=table.get(unk) if isinstance(unk, str) and type(table.get(unk)) is int else None,
        eos_token_id=literals.get(eos_token) if eos_token else None,
        n_vocab=max(chain(table.values(), literals.values())) + 1,
    )
    return Vocab(**{**fields, **(overrides or {})})


def _with_metaspace(pre_tokenizer: Any, normalizer: Stage, source: str) -> tuple[Stage, bool]:
    """The normalizer, with a ``Metaspace`` pre-tokenizer after it, and whether that splits."""
    steps = _steps(pre_tokenizer, "pre_tokenizer", source)
    if _replaces_spaces(normalizer):
        # (transformers' Gemma layout, and BORA's: every space is ▁ already, so a Split on " "
        # finds nothing, and a Metaspace that neither prepends nor splits changes nothing)
        steps = [step for step in steps if not (_splits_on_space(step) or _inert_metaspace(step))]
    if not steps:
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
    return Metaspace(before=normalizer, replacement=replacement, prepend_scheme=scheme), split


def _replaces_spaces(normalizer: Stage) -> bool:
    """Whether a normalizer program ends by replacing every space with ``▁``."""
    return isinstance(normalizer, Sequence) and normalizer.normalizers[-1:] == (Replace(" ", SPACE),)


def _splits_on_space(step: dict) -> bool:
    """Whether ``step`` is a ``Split`` on ``" "`` (which finds nothing once spaces are ``▁``)."""
    return step.get("type") == "Split" and step.get("pattern") == {"String": " "} and not step.get("invert")


def _inert_metaspace(step: dict) -> bool:
    """Whether ``step`` is a ``Metaspace`` with the replacement ``▁`` that neither prepends nor
    splits: after the spaces are ``▁`` it changes nothing.

    >>> _inert_metaspace({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False})
    True
    """
    if step.get("type") != "Metaspace" or step.get("replacement", SPACE) != SPACE or step.get("split", True):
        return False
    scheme = step.get("prepend_scheme")
    return scheme == "never" or (scheme is None and step.get("add_prefix_space") is False)


def byte_fallback_decoder_strips(decoder: Any) -> Optional[bool]:
    """For the decoder chain transformers writes for Llama, Mistral and Gemma files, exactly
    ``Sequence`` of ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and optionally
    ``Strip(" ", 1, 0)``, in that order: whether it ends with that ``Strip``; None for any other
    decoder (another step, a missing one, another order or other arguments), whose HF decode is
    not the SentencePiece engine's :func:`~wordsplit.engines.sentencepiece.decode_hf`.

    >>> chain = [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
    ...          {"type": "Fuse"}]
    >>> byte_fallback_decoder_strips({"type": "Sequence", "decoders": chain})
    False
    >>> byte_fallback_decoder_strips({"type": "Sequence", "decoders": chain[:2]}) is None
    True
    """
    if not isinstance(decoder, dict) or decoder.get("type") != "Sequence":
        return None
    steps = [_plain(step) for step in decoder.get("decoders") or []]
    if steps[:3] != [_REPLACE_SPACE, {"type": "ByteFallback"}, {"type": "Fuse"}] \
            or steps[3:] not in ([], [_STRIP_FIRST_SPACE]):
        return None
    return len(steps) == 4


_REPLACE_SPACE = {"type": "Replace", "pattern": {"String": SPACE}, "content": " "}
_STRIP_FIRST_SPACE = {"type": "Strip", "content": " ", "start": 1, "stop": 0}
#: The accepted decoder without ``Strip`` (Gemma's).
BYTE_FALLBACK_DECODER = {"type": "Sequence", "decoders": [_REPLACE_SPACE, {"type": "ByteFallback"}, {"type": "Fuse"}]}


def _plain(step: Any) -> Any:
    """A decoder step without the keys HF writes that do not change what it does."""
    if isinstance(step, dict) and step.get("type") == "Strip":
        return {key: step.get(key) for key in ("type", "content", "start", "stop")}
    return step


def describe_decoder(decoder: Any) -> str:
    """A decoder's steps by type, for messages.

    >>> describe_decoder({"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]})
    "'Sequence'['ByteFallback', 'Fuse']"
    """
    if isinstance(decoder, dict) and decoder.get("type") == "Sequence":
        inner = ", ".join(describe_decoder(step) for step in decoder.get("decoders") or [])
        return f"'Sequence'[{inner}]"
    return repr(decoder.get("type")) if isinstance(decoder, dict) else repr(decoder)


def hf_byte_value(token: str) -> Optional[int]:
    """The byte HF's ``ByteFallback`` decoder reads in a token string, or None: six UTF-8
    bytes ``<0x`` + two hex digits + ``>`` (Rust's ``u8::from_str_radix``, which takes
    lowercase digits and a leading ``+``).

    >>> hf_byte_value("<0x0A>"), hf_byte_value("<0xe9>"), hf_byte_value("<0x+F>"), hf_byte_value("<0x 1>")
    (10, 233, 15, None)
    """
    if len(token.encode("utf-8")) != 6 or not token.startswith("<0x") or not token.endswith(">"):
        return None
    digits = token[3:5]
    body = digits[1:] if digits.startswith("+") else digits
    if not body or any(c not in "0123456789abcdefABCDEF" for c in body):
        return None
    return int(body, 16)


def _byte_tokens(table: Mapping[str, Any], source: str) -> dict[int, int]:
    """byte → id of the vocab's byte tokens: the entries HF's ``ByteFallback`` decoder reads as
    a byte, each of which must be the one spelling HF's byte fallback looks up (``<0x0A>``), one
    token per byte, all 256 bytes.

    Raises:
        UnsupportedTokenizerError: two tokens of one byte, another spelling, or missing bytes.
    """
    byte_tokens: dict[int, int] = {}
    spelled: dict[int, str] = {}
    for text in filter(methodcaller("startswith", "<0x"), table):  # (the few candidates, at C speed)
        i = table[text]
        value = hf_byte_value(text)
        if value is None:
            continue
        if value in byte_tokens:
            raise UnsupportedTokenizerError(
                f"{source}: the tokens {spelled[value]!r} (id {byte_tokens[value]}) and {text!r} (id {i}) are both "
                f"the byte 0x{value:02X} for HF's ByteFallback decoder; a vocabulary with one token per byte is "
                "supported (remove or rename one of them)"
            )
        byte_tokens[value], spelled[value] = i, text
    for value, text in spelled.items():
        if text != f"<0x{value:02X}>":
            raise UnsupportedTokenizerError(
                f"{source}: the token {text!r} is the byte 0x{value:02X} for HF's ByteFallback decoder, but HF's "
                f"byte fallback looks up only '<0x{value:02X}>'; not supported (spell byte tokens <0xNN>, two "
                "uppercase hex digits)"
            )
    if len(byte_tokens) != 256:
        raise UnsupportedTokenizerError(
            f"{source}: byte_fallback with {len(byte_tokens)} of the 256 <0xNN> tokens is not supported"
        )
    return byte_tokens


def _check_decoder(decoder: Any, source: str) -> bool:
    """Whether the decoder strips the first space; refuses a decoder whose HF decode the engine
    does not reproduce."""
    strip = byte_fallback_decoder_strips(decoder)
    if strip is None:
        raise UnsupportedTokenizerError(
            f"{source}: decoder {describe_decoder(decoder)} is not supported with byte_fallback (only "
            "Sequence[Replace('▁', ' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0) last, which HF "
            "decodes as wordsplit does); use that decoder, as transformers writes it, or HF tokenizers"
        )
    return strip
