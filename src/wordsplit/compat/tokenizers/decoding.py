r"""The ``decoder`` of a ``tokenizer.json``, as :mod:`wordsplit.compat.tokenizers` runs it.

The decoders it runs, each exactly as HF ``tokenizers`` does:

* ``ByteLevel`` (byte-level BPE): each token's byte-level characters as bytes, the whole
  decoded as UTF-8 with U+FFFD for invalid bytes;
* the SentencePiece-style chain transformers writes for Llama, Mistral and Gemma files:
  ``Sequence`` of ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and optionally
  ``Strip(" ", 1, 0)``, in that order. It is wordsplit's SentencePiece engine's own decode
  (:func:`wordsplit.engines.sentencepiece.decode_hf`): ``▁`` as a space, a run of ``<0xNN>``
  tokens as its UTF-8 text (one U+FFFD per token when the run is not valid UTF-8), and one
  leading space of the whole text dropped with ``Strip``;
* ``Metaspace`` alone (replacement and ``prepend_scheme``): each token's replacement character
  as a space, except in the first token, where it is removed (``prepend_scheme`` other than
  ``"never"``);
* no decoder: the tokens as written, joined by spaces.

Anything else (another step, these steps in another order or with other arguments) is refused
with :class:`~wordsplit.errors.UnsupportedTokenizerError` rather than decoded differently.

>>> read_decoding({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
...     {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "tokenizer.json")
Decoding(kind='sentencepiece', strip=True, replacement='', first=False)
>>> metaspace_text(["▁Hello", "▁world", "<0x0A>"], "▁", first=True)
'Hello world<0x0A>'
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

from ...errors import UnsupportedTokenizerError

__all__ = ["Decoding", "hf_byte_value", "metaspace_text", "read_decoding"]

SPACE = "\u2581"

_REPLACE = {"type": "Replace", "pattern": {"String": SPACE}, "content": " "}
_STRIP_FIRST_SPACE = {"type": "Strip", "content": " ", "start": 1, "stop": 0}


class Decoding(NamedTuple):
    """Which decoder a file has: ``kind`` is ``"byte-level"``, ``"sentencepiece"``
    (``strip``: with ``Strip(" ", 1, 0)``), ``"metaspace"`` (its ``replacement``, and
    ``first``: the first token's replacement characters are removed) or ``"join"`` (none)."""

    kind: str
    strip: bool = False
    replacement: str = ""
    first: bool = False


def read_decoding(decoder: Any, source: str) -> Decoding:
    """The :class:`Decoding` of a tokenizer.json's ``decoder`` entry.

    Raises:
        UnsupportedTokenizerError: a decoder HF runs that wordsplit does not decode exactly.
    """
    if decoder is None:
        return Decoding("join")
    kind = decoder.get("type") if isinstance(decoder, dict) else None
    if kind == "ByteLevel":
        return Decoding("byte-level")
    if kind == "Metaspace":
        replacement = decoder.get("replacement", SPACE)
        scheme = decoder.get("prepend_scheme")
        if scheme is None:  # files from before prepend_scheme
            scheme = "always" if decoder.get("add_prefix_space", True) else "never"
        if isinstance(replacement, str) and len(replacement) == 1 and scheme in ("first", "always", "never"):
            return Decoding("metaspace", replacement=replacement, first=scheme != "never")
    if kind == "Sequence":
        steps = [_plain(step) for step in decoder.get("decoders") or []]
        if steps[:3] == [_REPLACE, {"type": "ByteFallback"}, {"type": "Fuse"}] \
                and steps[3:] in ([], [_STRIP_FIRST_SPACE]):
            return Decoding("sentencepiece", strip=len(steps) == 4)
    raise UnsupportedTokenizerError(
        f"{source}: decoder {_describe(decoder)} is not supported (wordsplit.compat.tokenizers decodes ByteLevel, "
        "Metaspace, and Sequence[Replace('▁', ' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0) last)"
    )


def _plain(step: Any) -> Any:
    """A decoder step without the keys HF writes that do not change what it does."""
    if isinstance(step, dict) and step.get("type") == "Strip":
        return {key: step.get(key) for key in ("type", "content", "start", "stop")}
    return step


def _describe(decoder: Any) -> str:
    if isinstance(decoder, dict) and decoder.get("type") == "Sequence":
        inner = ", ".join(_describe(step) for step in decoder.get("decoders") or [])
        return f"'Sequence'[{inner}]"
    return repr(decoder.get("type")) if isinstance(decoder, dict) else repr(decoder)


def metaspace_text(tokens: Sequence[str], replacement: str, first: bool) -> str:
    """HF's ``Metaspace`` decoder on token strings: the replacement character a space, but
    removed from the first token when ``first`` (every one of them, as HF does).

    >>> metaspace_text(["▁▁a", "▁b"], "▁", first=True), metaspace_text(["▁a"], "▁", first=False)
    ('a b', ' a')
    """
    return "".join(token.replace(replacement, "" if first and i == 0 else " ") for i, token in enumerate(tokens))


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
