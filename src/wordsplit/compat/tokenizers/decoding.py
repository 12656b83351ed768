r"""The ``decoder`` of a ``tokenizer.json``, as :mod:`wordsplit.compat.tokenizers` runs it.

The decoders it runs, each exactly as HF ``tokenizers`` does:

* ``ByteLevel`` (byte-level BPE): each token's byte-level characters as bytes, the whole
  decoded as UTF-8 with U+FFFD for invalid bytes;
* the SentencePiece-style chain transformers writes for Llama, Mistral and Gemma files:
  ``Sequence`` of ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and optionally
  ``Strip(" ", 1, 0)``, in that order
  (:func:`~wordsplit.formats.hf_sentencepiece.byte_fallback_decoder_strips`, which the core
  loader accepts too). It is wordsplit's SentencePiece engine's own decode
  (:func:`wordsplit.engines.sentencepiece.decode_hf`): ``▁`` as a space, a run of ``<0xNN>``
  tokens as its UTF-8 text (one U+FFFD per token when the run is not valid UTF-8), and one
  leading space of the whole text dropped with ``Strip``;
* ``Metaspace`` alone (replacement and ``prepend_scheme``): each token's replacement character
  as a space, except in the first token, where it is removed (``prepend_scheme`` other than
  ``"never"``);
* ``WordPiece`` (BERT's: its ``prefix`` and ``cleanup``): each token after the first gets a
  space before it unless it starts with the prefix, which is dropped; ``cleanup`` then
  removes the space before punctuation and some English contractions
  (:func:`wordsplit.engines.decoding.wordpiece_text`);
* no decoder: the tokens as written, joined by spaces.

Anything else (another step, these steps in another order or with other arguments) is refused
with :class:`~wordsplit.errors.UnsupportedTokenizerError` rather than decoded differently.

>>> read_decoding({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
...     {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "tokenizer.json")
Decoding(kind='sentencepiece', strip=True, replacement='', first=False, wordpiece=None)
>>> metaspace_text(["▁Hello", "▁world", "<0x0A>"], "▁", first=True)
'Hello world<0x0A>'
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

from ...errors import UnsupportedTokenizerError, VocabFormatError
from ...formats.hf_sentencepiece import byte_fallback_decoder_strips, describe_decoder, hf_byte_value
from ...spec import WordPieceDecoder

__all__ = ["Decoding", "hf_byte_value", "metaspace_text", "read_decoding"]

SPACE = "\u2581"


class Decoding(NamedTuple):
    """Which decoder a file has: ``kind`` is ``"byte-level"``, ``"sentencepiece"``
    (``strip``: with ``Strip(" ", 1, 0)``), ``"metaspace"`` (its ``replacement``, and
    ``first``: the first token's replacement characters are removed), ``"wordpiece"`` (the
    ``wordpiece`` decoder stage) or ``"join"`` (none)."""

    kind: str
    strip: bool = False
    replacement: str = ""
    first: bool = False
    wordpiece: Optional[WordPieceDecoder] = None


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
    if kind == "WordPiece":
        prefix, cleanup = decoder.get("prefix", "##"), decoder.get("cleanup", True)
        if not isinstance(prefix, str) or not isinstance(cleanup, bool):
            raise VocabFormatError(f"{source}: the WordPiece decoder has a string prefix and a boolean cleanup")
        return Decoding("wordpiece", wordpiece=WordPieceDecoder(prefix, cleanup))
    strip = byte_fallback_decoder_strips(decoder)
    if strip is not None:
        return Decoding("sentencepiece", strip=strip)
    raise UnsupportedTokenizerError(
        f"{source}: decoder {describe_decoder(decoder)} is not supported (wordsplit.compat.tokenizers decodes "
        "ByteLevel, WordPiece, "
        "Metaspace, and Sequence[Replace('▁', ' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0) last)"
    )


def metaspace_text(tokens: Sequence[str], replacement: str, first: bool) -> str:
    """HF's ``Metaspace`` decoder on token strings: the replacement character a space, but
    removed from the first token when ``first`` (every one of them, as HF does).

    >>> metaspace_text(["▁▁a", "▁b"], "▁", first=True), metaspace_text(["▁a"], "▁", first=False)
    ('a b', ' a')
    """
    return "".join(token.replace(replacement, "" if first and i == 0 else " ") for i, token in enumerate(tokens))
