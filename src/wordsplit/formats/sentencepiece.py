"""SentencePiece ``tokenizer.model`` files (Llama 2, Mistral, Gemma...): protobuf, read here.

A ``.model`` file is a serialized ``ModelProto`` (sentencepiece's ``sentencepiece_model.proto``).
:func:`read_model_proto` reads the few fields tokenization needs with a small protobuf
wire-format reader (no ``protobuf`` or ``sentencepiece`` import): the pieces with their scores
and types, the trainer spec and the normalizer spec. :func:`sentencepiece_vocab` turns a BPE
model into a :class:`~wordsplit.vocab.Vocab` that encodes as ``sentencepiece`` does, with the
components of :mod:`wordsplit.sentencepiece`:

* NORMAL, USER_DEFINED and UNUSED pieces are the BPE tokens (their UTF-8 text, ``▁`` included);
  the merge priority of two adjacent symbols is the score of the piece they make (higher
  first, leftmost on ties), stored as the pair-ranked table ``vocab.merges`` (every split of a
  piece into two pieces, ranked by the piece's score, equal scores equal ranks);
* BYTE pieces (``<0x41>``) are the tokens of their byte, so a byte-fallback token spells the
  byte it stands for; where a one-character piece is that byte's text already (``A``), the
  byte piece keeps its own text as its token; without byte fallback a symbol that is no piece
  is the UNKNOWN piece (a run of them one), and a model whose pieces hold characters that are
  no piece carries its scores (:mod:`~wordsplit.encoders.score_merge`);
* CONTROL and UNKNOWN pieces (``<s>``, ``</s>``, ``<unk>``, Mistral's ``[INST]``) are special
  tokens: ``sentencepiece`` never matches them in text, and neither does ``encode_ordinary``
  (``encode`` follows the usual special-token policy);
* the normalizer spec (its flags and precompiled character map) becomes the vocabulary's
  normalizer, the user-defined pieces its pattern (the ``sentencepiece`` spanner cuts them out
  of the text).

A Unigram model is read by :mod:`~wordsplit.formats.sentencepiece_unigram`; a model of another
type (Word, Char) is an :class:`UnsupportedTokenizerError` naming it.

>>> read_model_proto(b"\\x12\\x02\\x18\\x01").model_type  # a trainer spec saying UNIGRAM
'UNIGRAM'
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import NamedTuple, Optional

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..vocab import Vocab, u32_array
from . import native as native_readers
from .files import file_stem, read_file

__all__ = ["ModelProto", "Piece", "add_byte_pieces", "looks_like_sentencepiece", "load_sentencepiece",
           "read_model_proto", "score_merges", "sentencepiece_vocab"]

# SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}


#: The stems of model files named for their role, not their model (named by their directory).
GENERIC_STEMS = ("tokenizer", "spiece", "source", "target", "sentencepiece.bpe", "spm", "vocab.joint")


class Piece(NamedTuple):
    text: str
    score: float
    type: int


class ModelProto(NamedTuple):
    """The fields of a ``ModelProto`` that decide tokenization (defaults are the proto's)."""

    pieces: list[Piece]
    model_type: str = "UNIGRAM"
    byte_fallback: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_surface: str = " \u2047 "
    treat_whitespace_as_suffix: bool = False
    split_digits: bool = False
    allow_whitespace_only_pieces: bool = False
    normalizer_name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    denormalizer_charsmap: bytes = b""


# -- the protobuf wire format -------------------------------------------------------------------


def _varint(data: bytes, pos: int, source: str) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise VocabFormatError(f"{source}: not a valid SentencePiece model (a protobuf varint runs past the data)")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes, source: str, *, cut: bool = False):
    """``(field number, wire type, value)`` of each field of one message: an int for varints
    and fixed-size fields (raw bytes for fixed32, which floats use), bytes for length-delimited.
    With ``cut``, ``data`` may stop inside a field (a file's head): the walk ends there."""
    pos, size = 0, len(data)
    while pos < size:
        try:
            key, pos = _varint(data, pos, source)
            number, wire = key >> 3, key & 7
            value, pos = _varint(data, pos, source) if wire in (0, 2) else (None, pos)
        except VocabFormatError:
            if cut:
                return
            raise
        if wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:  # (value: the length)
            value, pos = data[pos:pos + value], pos + value
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire != 0:
            raise VocabFormatError(f"{source}: not a SentencePiece model (protobuf wire type {wire} at byte {pos})")
        if pos > size:
            if cut:
                return
            raise VocabFormatError(
                f"{source}: a truncated SentencePiece model (protobuf field {number} runs past the end)"
            )
        yield number, wire, value


def _text(value, source: str, what: str) -> str:
    if not isinstance(value, bytes):
        raise VocabFormatError(f"{source}: {what} is not a string field")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise VocabFormatError(f"{source}: {what} is not UTF-8 ({value[:40]!r})") from None


def _signed(value: int) -> int:
    """An int32 field's varint (negative numbers travel as 64-bit two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _piece(data: bytes, source: str, index: int) -> Piece:
    text, score, kind = None, 0.0, NORMAL
    for number, wire, value in _fields(data, source):
        if number == 1 and wire == 2:
            text = _text(value, source, f"piece {index}")
        elif number == 2 and wire == 5:
            score = struct.unpack("<f", value)[0]
        elif number == 3 and wire == 0:
            kind = value
    if not text:
        raise VocabFormatError(f"{source}: piece {index} has no text (SentencePiece pieces are non-empty)")
    if kind not in (NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE):
        raise VocabFormatError(f"{source}: piece {index} ({text!r}) has an unknown type {kind}")
    return Piece(text, score, kind)


# TrainerSpec and NormalizerSpec fields read: number → (ModelProto field, kind).
_TRAINER = {3: ("model_type", "enum"), 35: ("byte_fallback", "bool"), 40: ("unk_id", "int"), 41: ("bos_id", "int"),
            42: ("eos_id", "int"), 43: ("pad_id", "int"), 44: ("unk_surface", "str"),
            24: ("treat_whitespace_as_suffix", "bool"), 25: ("split_digits", "bool"),
            26: ("allow_whitespace_only_pieces", "bool")}
_NORMALIZER = {1: ("normalizer_name", "str"), 2: ("precompiled_charsmap", "bytes"), 3: ("add_dummy_prefix", "bool"),
               4: ("remove_extra_whitespaces", "bool"), 5: ("escape_whitespaces", "bool")}
_DENORMALIZER = {2: ("denormalizer_charsmap", "bytes")}


def _spec(data: bytes, table: dict, source: str, out: dict) -> None:
    for number, wire, value in _fields(data, source):
        if number not in table:
            continue
        key, kind = table[number]
        if kind in ("str", "bytes"):
            if wire != 2:
                raise VocabFormatError(f"{source}: {key} is not a length-delimited field")
            out[key] = value if kind == "bytes" else _text(value, source, key)
        elif wire != 0:
            raise VocabFormatError(f"{source}: {key} is not a varint field")
        elif kind == "bool":
            out[key] = bool(value)
        elif kind == "int":
            out[key] = _signed(value)
        else:
            out[key] = MODEL_TYPES.get(value, f"type {value}")


def read_model_proto(data: bytes, source: str = "tokenizer.model") -> ModelProto:
    """The pieces, trainer spec and normalizer spec of serialized ``ModelProto`` bytes.

    Raises:
        VocabFormatError: not a well-formed SentencePiece model.

    >>> piece = b"\\x0a\\x03\\xe2\\x96\\x81\\x15\\x00\\x00\\x80\\xbf\\x18\\x01"  # "▁", score -1.0, NORMAL
    >>> read_model_proto(b"\\x0a" + bytes([len(piece)]) + piece).pieces
    [Piece(text='▁', score=-1.0, type=1)]
    """
    pieces: list[Piece] = []
    fields: dict = {}
    for number, wire, value in _fields(data, source):
        if wire != 2:
            continue
        if number == 1:
            pieces.append(_piece(value, source, len(pieces)))
        elif number == 2:
            _spec(value, _TRAINER, source, fields)
        elif number == 3:
            _spec(value, _NORMALIZER, source, fields)
        elif number == 5:  # (4 is self_test_data)
            _spec(value, _DENORMALIZER, source, fields)
    return ModelProto(pieces=pieces, **fields)


def looks_like_sentencepiece(head: bytes) -> bool:
    """Whether a file's first bytes are a SentencePiece model: a protobuf of the model's fields
    (1 to 5, each a message), in any order, up to its first piece (field 1, a message whose own
    first field is its non-empty UTF-8 text). sentencepiece writes the pieces first; other
    writers put the trainer and normalizer specs before them.

    >>> looks_like_sentencepiece(b"\\x0a\\x09\\x0a\\x05<unk>\\x18\\x02"), looks_like_sentencepiece(b"YQ== 0\\n")
    (True, False)
    >>> looks_like_sentencepiece(b"\\x1a\\x02\\x08\\x01" + b"\\x0a\\x09\\x0a\\x05<unk>\\x18\\x02")
    True
    """
    pos = 0
    try:
        while pos < len(head):
            tag, pos = _varint(head, pos, "")
            if tag & 7 != 2 or not 1 <= tag >> 3 <= 5:
                return False
            length, pos = _varint(head, pos, "")
            if tag >> 3 == 1:
                return _is_piece_head(head[pos:pos + length], length)
            # A spec: a well-formed message, which may run past the head (a normalizer spec
            # with its character map is often larger than the head).
            if not _is_message(head[pos:pos + length], cut=pos + length > len(head)):
                return False
            if pos + length > len(head):
                return True
            pos += length
    except VocabFormatError:  # (a varint cut by the end of the head, or malformed)
        return False
    return False


def _is_message(data: bytes, *, cut: bool) -> bool:
    """Whether ``data`` is a well-formed protobuf message (every field's tag, wire type and
    length consistent), or with ``cut`` the start of one."""
    try:
        return all(number > 0 for number, _, _ in _fields(data, "", cut=cut))
    except VocabFormatError:  # (a wire type protobuf has not, or a field past the end)
        return False


def _is_piece_head(message: bytes, length: int) -> bool:
    """Whether ``message`` (a piece's bytes, cut by the end of the head) starts as a piece: its
    text field first, non-empty UTF-8 within the message."""
    if length < 3 or message[:1] != b"\x0a":
        return False
    try:
        text_length, text_pos = _varint(message, 1, "")
        if not 0 < text_length <= length or text_pos + text_length > len(message):
            return False
        message[text_pos:text_pos + text_length].decode("utf-8")
    except (VocabFormatError, UnicodeDecodeError):
        return False
    return True


# -- the Vocab ----------------------------------------------------------------------------------


def load_sentencepiece(path: str | Path, name: Optional[str] = None) -> Vocab:
    """The vocabulary of a SentencePiece ``tokenizer.model`` file (gzipped or not).

    Raises:
        UnsupportedTokenizerError: a Unigram, Word or Char model, or a BPE model wordsplit
            does not read yet (see :func:`sentencepiece_vocab`).
        VocabFormatError: a malformed file.
    """
    stem = file_stem(path).removesuffix(".model").removesuffix(".spm")
    # tokenizer.model, spiece.model, a Marian source.spm: their directory's name
    name = name or ((Path(path).absolute().parent.name or stem) if stem in GENERIC_STEMS else stem)
    data = read_file(path)
    return _native_vocab(data, name, str(path)) or sentencepiece_vocab(read_model_proto(data, str(path)),
                                                                       name=name, source=str(path))


def _native_vocab(data: bytes, name: str, source: str) -> Optional[Vocab]:
    """:func:`sentencepiece_vocab` of the model in ``data``, its pieces read and tabled by the
    native core (no Python object per piece); None without the core, or where the core finds
    the pieces wrong or unusual: the reference (:func:`read_model_proto`) then reads them and
    raises its error."""
    parsed = native_readers.sentencepiece_model(data)
    if parsed is None or parsed["tables"] is None:
        return None
    fields: dict = {}
    for number, message in parsed["specs"]:
        _spec(message, _TRAINER if number == 2 else _NORMALIZER, source, fields)
    if fields.get("model_type", "UNIGRAM") != "BPE" or not fields.get("byte_fallback", False):
        return None  # (the reference reads a Unigram model's pieces, with their scores, and checks
        # that a model without byte fallback has no byte pieces)
    return sentencepiece_vocab(ModelProto(pieces=[], **fields), name=name, source=source, native=parsed)


def sentencepiece_vocab(model: ModelProto, *, name: str, source: Optional[str] = None,
                        native: Optional[dict] = None) -> Vocab:
    """A :class:`Vocab` that encodes as ``sentencepiece`` encodes with ``model`` (see the module
    docstring for how each piece type maps). ``native`` is what the native core read of the
    model's pieces (:func:`_native_vocab`), in place of ``model.pieces``.

    Raises:
        UnsupportedTokenizerError: the model is not BPE; it has a denormalizer; user-defined
            pieces its character map could change (see
            :mod:`~wordsplit.formats.sentencepiece_unigram`); without byte fallback, a piece
            spelled like a byte piece.
        VocabFormatError: duplicate pieces, ids that are not pieces, a malformed character map.
    """
    import base64

    from ..sentencepiece import SPACE, sentencepiece_pipeline, word_cuts
    from ..spec import SentencePieceNormalizer
    from .sentencepiece_unigram import check_normalizer

    source = source or name
    if model.model_type == "UNIGRAM" and native is None:
        from .sentencepiece_unigram import unigram_vocab

        return unigram_vocab(model, name=name, source=source)
    if model.model_type != "BPE":
        kind = {"UNIGRAM": "Unigram", "WORD": "Word", "CHAR": "Char"}.get(model.model_type, model.model_type)
        raise UnsupportedTokenizerError(
            f"{source} is a SentencePiece {kind} model; wordsplit reads SentencePiece BPE and Unigram models only"
        )
    if model.denormalizer_charsmap:
        raise UnsupportedTokenizerError(
            f"{source}: the model has a denormalizer (a character map sentencepiece applies to decoded text), "
            "which wordsplit does not apply"
        )
    scores = None
    if native is None:
        pieces = model.pieces
        tables, unpieced = _piece_tables(pieces, source, byte_fallback=model.byte_fallback)
        kinds = [p.type for p in pieces]
        special = {p.text: i for i, p in enumerate(pieces) if p.type in (CONTROL, UNKNOWN)}
        user_defined = tuple(p.text for p in pieces if p.type == USER_DEFINED)
        unused = tuple(p.text for p in pieces if p.type == UNUSED)
        # Pieces that hold a character that is no piece have no split into two pieces: the
        # encoders rank them by their scores.
        scores = [p.score for p in pieces] if unpieced else None
        space_is_piece = SPACE.encode("utf-8") in tables[0]
    else:  # (checked by the core as _piece_tables checks them; it reads byte-fallback models only)
        tables, kinds, special = native["tables"], native["kinds"], dict(native["special"])
        user_defined, unused = tuple(native["user_defined"]), tuple(native["unused"])
        space_is_piece = True
    check_normalizer(model.precompiled_charsmap, user_defined, source)
    *tokens, merges, joined = tables

    def token(index: int) -> Optional[int]:
        return index if 0 <= index < len(kinds) and kinds[index] == CONTROL else None

    unk_token, unk_id = next((text, i) for text, i in special.items() if kinds[i] == UNKNOWN)
    pipeline = sentencepiece_pipeline(
        semantics="sentencepiece",
        normalizer=SentencePieceNormalizer(add_dummy_prefix=model.add_dummy_prefix,
                                           remove_extra_whitespaces=model.remove_extra_whitespaces,
                                           escape_whitespaces=model.escape_whitespaces,
                                           treat_whitespace_as_suffix=model.treat_whitespace_as_suffix,
                                           charsmap=base64.b64encode(model.precompiled_charsmap).decode("ascii"),
                                           user_defined=user_defined),
        user_defined=user_defined, unused=unused, unk_surface=model.unk_surface,
        strip_leading_space=("all" if model.remove_extra_whitespaces
                             else "first" if model.add_dummy_prefix else "none"),
        byte_fallback=model.byte_fallback, unk_token=unk_token,
        # (sentencepiece splits an unused piece by the pair it was last proposed from anywhere in
        # the text, so a model with unused pieces is merged a stretch at a time; without byte
        # fallback a run of unknown symbols is one <unk>, which a cut before a ▁ that is no piece
        # would split)
        **word_cuts(joined, model.escape_whitespaces and not unused and (model.byte_fallback or space_is_piece)),
    )
    fields = dict(
        name=name, source=source, special_tokens=special, merges=merges,
        pipeline=pipeline,
        n_vocab=len(kinds), whole_piece_lookup=False, unk_token_id=unk_id,
        bos_token_id=token(model.bos_id), eos_token_id=token(model.eos_id), scores=scores,
    )
    if native is None:
        return Vocab(ranks=tokens[0], **fields)
    blob, ids, lengths = tokens
    return Vocab.from_packed(blob=blob, ids=u32_array(ids), lengths=u32_array(lengths), **fields)


def _piece_tables(pieces: list[Piece], source: str, *, byte_fallback: bool = True) \
        -> tuple[tuple[dict[bytes, int], dict[tuple[int, int], int], tuple[str, ...]], frozenset[str]]:
    """``((ranks, merges, joined), unpieced)`` of a BPE model's pieces: the tokens, the
    score-ranked merges (:func:`_score_merges`), the mergeable pieces with a ``▁`` right after
    another character, sorted (:func:`~wordsplit.sentencepiece.word_cuts`), and the characters
    that pieces hold but that are no piece of their own.

    Raises:
        VocabFormatError: no pieces, a piece listed twice, byte pieces that are not 256
            distinct ``<0xNN>`` (none without byte fallback, as sentencepiece has it), not
            exactly one UNKNOWN piece.
        UnsupportedTokenizerError: without byte fallback, a piece spelled like a byte piece
            (sentencepiece decodes it as its text, wordsplit's decoder as a byte).
    """
    if not pieces:
        raise VocabFormatError(f"{source}: the model has no pieces")
    seen: dict[str, int] = {}
    for i, piece in enumerate(pieces):
        if piece.text in seen:
            raise VocabFormatError(f"{source}: piece {piece.text!r} is listed twice (ids {seen[piece.text]} and {i})")
        seen[piece.text] = i
    mergeable = {p.text: i for i, p in enumerate(pieces) if p.type in (NORMAL, USER_DEFINED, UNUSED)}
    ranks: dict[bytes, int] = {text.encode("utf-8"): i for text, i in mergeable.items()}
    byte_ids = add_byte_pieces(pieces, ranks, source)
    if byte_fallback and len(byte_ids) != 256:
        raise VocabFormatError(
            f"{source}: byte_fallback is on but only {len(byte_ids)} of the 256 byte pieces are listed"
        )
    if not byte_fallback:
        if byte_ids:
            raise VocabFormatError(f"{source}: the model lists byte pieces but byte_fallback is off "
                                   "(sentencepiece refuses such a model)")
        spelled = next((text for text in mergeable if byte_piece_value(text) is not None), None)
        if spelled is not None:
            raise UnsupportedTokenizerError(
                f"{source}: piece {spelled!r} is spelled like a byte piece in a model without byte_fallback; "
                "sentencepiece decodes it as text, wordsplit's decoder as a byte"
            )
    unk = [i for i, p in enumerate(pieces) if p.type == UNKNOWN]
    if len(unk) != 1:
        raise VocabFormatError(f"{source}: a SentencePiece model has exactly one UNKNOWN piece, this one {len(unk)}")
    merges = _score_merges(pieces, mergeable, source)
    unpieced = frozenset(char for text in mergeable if len(text) > 1 for char in text if char not in mergeable)
    from ..sentencepiece import joined_tokens

    return (ranks, merges, joined_tokens(mergeable)), unpieced


def add_byte_pieces(pieces: list[Piece], ranks: dict[bytes, int], source: str) -> dict[int, int]:
    """Put the BYTE pieces (``<0x41>``) into ``ranks`` as the tokens of their bytes (a byte
    piece keeps its own text where a one-character piece is that byte's text already), and
    return byte → id.

    Raises:
        VocabFormatError: a byte piece that is not a distinct ``<0xNN>``.

    >>> ranks = {b"A": 0}
    >>> add_byte_pieces([Piece("A", 0.0, NORMAL), Piece("<0x41>", 0.0, BYTE), Piece("<0x0A>", 0.0, BYTE)], ranks, "m")
    {65: 1, 10: 2}
    >>> ranks
    {b'A': 0, b'<0x41>': 1, b'\\n': 2}
    """
    byte_ids: dict[int, int] = {}
    for i, piece in enumerate(pieces):
        if piece.type == BYTE:
            value = byte_piece_value(piece.text)
            if value is None or value in byte_ids:
                raise VocabFormatError(f"{source}: byte piece {i} is {piece.text!r}, not a distinct <0xNN>")
            byte_ids[value] = i
            key = bytes([value])
            ranks[key if key not in ranks else piece.text.encode("utf-8")] = i
    return byte_ids


def byte_piece_value(text: str) -> Optional[int]:
    """The byte a byte piece's text stands for, or None for other text: ``<0x`` + two
    uppercase hex digits + ``>``, the one spelling ``sentencepiece`` takes for a byte piece
    (it refuses a model with a byte piece ``<0x0a>`` or ``<0x+A>``).

    >>> byte_piece_value("<0x0A>"), byte_piece_value("<s>"), byte_piece_value("<0x0a>"), byte_piece_value("<0x 1>")
    (10, None, None, None)
    """
    if len(text) == 6 and text.startswith("<0x") and text.endswith(">") \
            and all(c in "0123456789ABCDEF" for c in text[3:5]):
        return int(text[3:5], 16)
    return None


def score_merges(pieces: list[Piece], mergeable: dict[str, int], source: str) -> dict[tuple[int, int], int] | bytes:
    """:func:`_score_merges` of a model whose every piece splits into pieces down to its
    characters (what a GGUF SentencePiece file's llama.cpp merge needs: its vocabulary has no
    scores), packed (:func:`~wordsplit.vocab.pack_merges`) by the native core when it is built
    and finds the pieces sound; else (and for the error) the reference.

    Raises:
        UnsupportedTokenizerError: a piece holding a character that is no piece.
    """
    packed = native_readers.score_merge_pairs([p.text for p in pieces], [p.score for p in pieces],
                                              [p.type for p in pieces])
    if packed is not None:
        return packed
    for text in mergeable:
        char = next((c for c in text if c not in mergeable), None) if len(text) > 1 else None
        if char is not None:
            raise UnsupportedTokenizerError(
                f"{source}: piece {text!r} holds the character {char!r}, which is no piece of its own; "
                "such models are not supported yet"
            )
    return _score_merges(pieces, mergeable, source)


def _score_merges(pieces: list[Piece], mergeable: dict[str, int], source: str) -> dict[tuple[int, int], int]:
    """SentencePiece's merge rule as a pair-ranked table: two adjacent symbols merge when
    together they spell a piece, the piece of highest score first (leftmost on ties), so every
    split of a piece into two pieces is a pair, ranked by the piece's score (0 = highest;
    equal scores, equal ranks).

    A symbol is a character of the text or a piece made by a merge. A character that is no
    piece of its own still merges where pieces hold it (``sentencepiece`` looks up the joined
    text only); a piece with no split into two pieces has no pair here, and the vocabulary of
    such a model carries the pieces' scores, by which the encoders rank it.

    >>> pieces = [Piece(text, score, NORMAL) for text, score in (("a", 0.0), ("b", 0.0), ("ab", -1.0), ("bc", -2.0))]
    >>> _score_merges(pieces, {p.text: i for i, p in enumerate(pieces)}, "m")
    {(0, 1): 0}
    """
    scores = sorted({pieces[i].score for text, i in mergeable.items() if len(text) > 1}, reverse=True)
    rank_of_score = {score: rank for rank, score in enumerate(scores)}
    merges: dict[tuple[int, int], int] = {}
    for text, i in mergeable.items():
        if len(text) < 2:
            continue
        rank = rank_of_score[pieces[i].score]
        for cut in range(1, len(text)):
            left, right = mergeable.get(text[:cut]), mergeable.get(text[cut:])
            if left is not None and right is not None:
                merges[(left, right)] = rank
    return merges
