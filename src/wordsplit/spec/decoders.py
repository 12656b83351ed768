"""The decoder stages: how token ids become text again."""

from __future__ import annotations

from typing import ClassVar, Union

from .stage import Stage, family

__all__ = [
    "ByteLevel",
    "DECODER_KINDS",
    "DECODER_STYLES",
    "NoDecoder",
    "Decoder",
    "SentencePieceDecoder",
    "WordPieceDecoder",
]


# -- decoders ------------------------------------------------------------------------------
#
# Decoder descriptions: how token ids become text again.
#
# * :class:`ByteLevel`: each token's bytes, concatenated, read as UTF-8;
# * :class:`SentencePieceDecoder`: a SentencePiece vocabulary's pieces: ``▁`` is a space, byte
#   pieces are bytes, the dummy prefix dropped, in the ``style`` of the tokenizer the file comes
#   from (``sentencepiece``, HF's decoders, or llama.cpp's ``llama_detokenize``);
# * :class:`WordPieceDecoder`: tokens joined by spaces, a continuing piece's prefix joining it
#   to the one before, and HF's cleanup of spaces before punctuation;
# * :class:`NoDecoder`: the tokens' texts joined by spaces, as HF decodes without a decoder.


DECODER_STYLES = ("sentencepiece", "hf", "llama.cpp")


class ByteLevel(Stage):
    """Token bytes concatenated (tiktoken, HF's ``ByteLevel`` decoder)."""

    kind: ClassVar[str] = "ByteLevel"
    __slots__ = ()


class SentencePieceDecoder(Stage):
    """A SentencePiece vocabulary's decode.

    Attributes:
        style: ``"sentencepiece"`` (control pieces empty, an invalid UTF-8 byte among byte
            pieces U+FFFD each), ``"hf"`` (HF's ``Replace``, ``ByteFallback``, ``Fuse``,
            ``Strip``) or ``"llama.cpp"`` (``llama_detokenize``).
        unk_surface: what ``<unk>`` decodes to (the trainer spec's ``unk_surface``).
        strip_leading_space: how the dummy prefix is dropped: ``"first"`` (the leading ``▁`` of
            the first piece; for ``"hf"`` the decoder's ``Strip(" ", 1, 0)``), ``"all"`` (of
            every piece until text appears: ``remove_extra_whitespaces``) or ``"none"``.
        unused: (``"llama.cpp"``) the UNUSED pieces, which ``llama_token_to_piece`` renders as
            nothing.
    """

    kind: ClassVar[str] = "SentencePiece"
    FIELDS: ClassVar[dict] = {"style": str, "unk_surface": str, "strip_leading_space": str, "unused": "strings"}
    DEFAULTS: ClassVar[dict] = {"style": "sentencepiece", "unk_surface": " \u2047 ", "strip_leading_space": "first",
                                "unused": ()}
    __slots__ = tuple(FIELDS)
    style: str
    unk_surface: str
    strip_leading_space: str
    unused: tuple

    def _check(self) -> None:
        if self.style not in DECODER_STYLES:
            raise ValueError(f"style is one of {', '.join(DECODER_STYLES)}, not {self.style!r}")
        if self.strip_leading_space not in ("first", "all", "none"):
            raise ValueError("strip_leading_space is 'first', 'all' or 'none'")


class NoDecoder(Stage):
    """A file without a decoder: the tokens' texts joined by spaces (HF's ``decode`` then)."""

    kind: ClassVar[str] = "None"
    __slots__ = ()


class WordPieceDecoder(Stage):
    """HF's ``WordPiece`` decoder: each token after the first is put after a space, unless it
    starts with ``prefix``, which is dropped; with ``cleanup``, HF's ``cleanup`` of the text
    (no space before ``.``, ``?``, ``!``, ``,``, and English contractions joined)."""

    kind: ClassVar[str] = "WordPiece"
    FIELDS: ClassVar[dict] = {"prefix": str, "cleanup": bool}
    DEFAULTS: ClassVar[dict] = {"prefix": "##", "cleanup": True}
    __slots__ = tuple(FIELDS)
    prefix: str
    cleanup: bool


Decoder = Union[ByteLevel, SentencePieceDecoder, WordPieceDecoder, NoDecoder]

DECODER_KINDS = family("decoder", ByteLevel, SentencePieceDecoder, WordPieceDecoder, NoDecoder)
