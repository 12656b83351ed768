"""SentencePiece Unigram ``.model`` files (T5's ``spiece.model``, ALBERT, XLM-R's
``sentencepiece.bpe.model``, Marian's ``source.spm``...): the Vocab that encodes and decodes as
``sentencepiece`` does.

What each piece type becomes:

* NORMAL and USER_DEFINED pieces are the tokens the segmentation searches (their UTF-8 text,
  ``▁`` included); the user-defined ones are also the model's
  :attr:`~wordsplit.spec.Unigram.user_defined`, which the search scores by their length
  (``sentencepiece`` finds them in the search, not before it: a user-defined piece loses
  where pieces of the text around it score better);
* BYTE pieces (``<0x41>``, with ``byte_fallback``) are tokens spelled so, out of the search: an
  unknown character is its bytes' pieces;
* CONTROL and UNKNOWN pieces (``<s>``, ``</s>``, ``<unk>``) are special tokens, which
  ``sentencepiece`` never finds in text;
* every piece's score is :attr:`~wordsplit.vocab.Vocab.scores` (by id), the normalizer spec and
  its character map the :class:`~wordsplit.spec.SentencePieceNormalizer`.

The ``unigram`` encoder (:mod:`wordsplit.encoders.unigram`) runs the model with
``sentencepiece``'s arithmetic. Refused, as :class:`UnsupportedTokenizerError`: UNUSED pieces
(the search skips them, a Vocab token is searched), a denormalizer (``sentencepiece`` rewrites
decoded text with its own character map), a piece spelled like a byte piece in a model without
byte fallback (decoded as text by ``sentencepiece``, as a byte here), and user-defined pieces
that hold a space (:func:`check_user_defined`).
"""

from __future__ import annotations

import base64

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..vocab import Vocab
from .sentencepiece import BYTE, CONTROL, UNKNOWN, UNUSED, USER_DEFINED, ModelProto, byte_piece_value

__all__ = ["check_normalizer", "check_user_defined", "unigram_vocab"]


def unigram_vocab(model: ModelProto, *, name: str, source: str) -> Vocab:
    """The Vocab of a SentencePiece Unigram model (see the module docstring).

    Raises:
        VocabFormatError: no pieces, a piece listed twice, not exactly one UNKNOWN piece, byte
            pieces that are not 256 distinct ``<0xNN>`` (or any without byte fallback), a
            malformed character map, a score that is not finite.
        UnsupportedTokenizerError: see the module docstring.
    """
    from ..spec import PipelineSpec, SentencePieceDecoder, SentencePieceNormalizer, SentencePieceSplit, Unigram

    pieces = model.pieces
    if not pieces:
        raise VocabFormatError(f"{source}: the model has no pieces")
    if model.denormalizer_charsmap:
        raise UnsupportedTokenizerError(
            f"{source}: the model has a denormalizer (a character map sentencepiece applies to decoded text), "
            "which wordsplit does not apply"
        )
    ranks: dict[bytes, int] = {}
    special: dict[str, int] = {}
    seen: dict[str, int] = {}
    byte_values: set[int] = set()
    for i, piece in enumerate(pieces):
        if piece.text in seen:
            raise VocabFormatError(f"{source}: piece {piece.text!r} is listed twice (ids {seen[piece.text]} and {i})")
        seen[piece.text] = i
        if piece.type == UNUSED:
            raise UnsupportedTokenizerError(f"{source}: piece {i} ({piece.text!r}) is UNUSED, which a Unigram model "
                                            "wordsplit reads does not have")
        if piece.type in (CONTROL, UNKNOWN):
            special[piece.text] = i
            continue
        if piece.type == BYTE:
            value = byte_piece_value(piece.text)
            if not model.byte_fallback or value is None or value in byte_values:
                raise VocabFormatError(f"{source}: byte piece {i} is {piece.text!r}, not a distinct <0xNN> of a "
                                       "model with byte_fallback")
            byte_values.add(value)
        elif not model.byte_fallback and byte_piece_value(piece.text) is not None:
            raise UnsupportedTokenizerError(
                f"{source}: piece {i} {piece.text!r} is spelled like a byte piece in a model without byte_fallback; "
                "sentencepiece decodes it as text, wordsplit's decoder as a byte"
            )
        ranks[piece.text.encode("utf-8")] = i
    if model.byte_fallback and len(byte_values) != 256:
        raise VocabFormatError(
            f"{source}: byte_fallback is on but {len(byte_values)} of the 256 byte pieces are listed"
        )
    unknown = [p.text for p in pieces if p.type == UNKNOWN]
    if len(unknown) != 1:
        raise VocabFormatError(
            f"{source}: a SentencePiece model has exactly one UNKNOWN piece, this one {len(unknown)}"
        )
    if not ranks:
        raise VocabFormatError(f"{source}: the model has no NORMAL pieces")
    user_defined = tuple(p.text for p in pieces if p.type == USER_DEFINED)
    check_normalizer(model.precompiled_charsmap, user_defined, source)
    normalizer = SentencePieceNormalizer(
        add_dummy_prefix=model.add_dummy_prefix, remove_extra_whitespaces=model.remove_extra_whitespaces,
        escape_whitespaces=model.escape_whitespaces, treat_whitespace_as_suffix=model.treat_whitespace_as_suffix,
        charsmap=base64.b64encode(model.precompiled_charsmap).decode("ascii"), user_defined=user_defined,
    )
    decoder = SentencePieceDecoder(
        style="sentencepiece", unk_surface=model.unk_surface,
        strip_leading_space="all" if model.remove_extra_whitespaces else "first" if model.add_dummy_prefix else "none",
    )
    pipeline = PipelineSpec(
        normalizer=normalizer, spanner=SentencePieceSplit(),
        model=Unigram(unk_token=unknown[0], byte_fallback=model.byte_fallback, user_defined=user_defined),
        decoder=decoder,
    )

    def control(index: int):
        return index if 0 <= index < len(pieces) and pieces[index].type == CONTROL else None

    return Vocab(
        name=name, source=source, ranks=ranks, special_tokens=special, pipeline=pipeline, n_vocab=len(pieces),
        scores=[p.score for p in pieces], unk_token_id=special[unknown[0]],
        bos_token_id=control(model.bos_id), eos_token_id=control(model.eos_id),
    )


def check_normalizer(charsmap: bytes, user_defined: tuple[str, ...], source: str) -> None:
    """What a SentencePiece model's normalizer must pass at load, BPE or Unigram: its character
    map (``charsmap``, empty for none) reads, and no user-defined piece holds a space
    (:func:`check_user_defined`).

    Raises:
        VocabFormatError: a malformed character map (the message names ``source``).
        UnsupportedTokenizerError: such a user-defined piece.
    """
    from .charsmap import cached_charsmap

    if charsmap:
        try:
            cached_charsmap(charsmap)
        except VocabFormatError as exc:
            raise VocabFormatError(f"{source}: its normalizer: {exc}") from None
    check_user_defined(user_defined, source)


def check_user_defined(user_defined: tuple[str, ...], source: str) -> None:
    """Refuse a user-defined piece that holds a space: ``sentencepiece`` copies the piece whole
    and then turns its spaces into ``▁``, so the text never holds it as the model spells it,
    while what sentencepiece would make of it is a guess.

    >>> check_user_defined(("<br>",), "m")
    >>> check_user_defined(("a b",), "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    wordsplit.errors.UnsupportedTokenizerError: m: the user-defined piece 'a b' holds a space; ...
    """
    for text in user_defined:
        if " " in text:
            raise UnsupportedTokenizerError(
                f"{source}: the user-defined piece {text!r} holds a space; sentencepiece copies it unnormalized "
                "and escapes its spaces, which wordsplit does not do"
            )
