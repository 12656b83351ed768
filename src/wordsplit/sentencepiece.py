"""SentencePiece's text rules: its normalizer, what its spanner and encoder read, its decoder.

A vocabulary loaded from a SentencePiece ``tokenizer.model``
(:mod:`wordsplit.formats.sentencepiece`) names its components by description, as HF's
normalizer programs and split programs do, so it pickles, caches and loads in a fresh process
like any other vocabulary:

* its normalizer is ``sentencepiece-normalizer:`` + JSON of the normalizer spec's flags
  (:class:`SentencePieceNormalizer`: the dummy prefix, whitespace escaping to U+2581, extra
  whitespace removal), a parametrized family of the normalizer registry;
* its pattern is ``sentencepiece:`` + JSON of :class:`SentencePieceModel`: the user-defined
  pieces (cut out of the normalized text by the ``sentencepiece`` spanner and never merged), the
  unused pieces (which the ``score-merge`` encoder splits back, as ``sentencepiece`` does) and
  what decoding needs;
* it decodes as ``sentencepiece`` decodes (:func:`decode_pieces`): ``▁`` is a space, the
  first piece loses its leading one (the dummy prefix), byte pieces are bytes and an invalid
  UTF-8 byte among them is U+FFFD each, control pieces are empty and ``<unk>`` is `` ⁇ ``.

>>> norm = SentencePieceNormalizer(normalizer_name(add_dummy_prefix=True, remove_extra_whitespaces=False))
>>> norm("Hello  world")
'▁Hello▁▁world'
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple, Optional, Sequence

from .errors import UnsupportedTokenizerError, VocabFormatError

__all__ = ["MODEL_PREFIX", "NORMALIZER_PREFIX", "SPACE", "SentencePieceModel", "SentencePieceNormalizer",
           "decode_pieces", "is_sentencepiece", "model_of", "normalizer_name", "split_pattern"]

#: U+2581 LOWER ONE EIGHTH BLOCK: how SentencePiece writes a space inside pieces.
SPACE = "\u2581"
NORMALIZER_PREFIX = "sentencepiece-normalizer:"
MODEL_PREFIX = "sentencepiece:"


class SentencePieceModel(NamedTuple):
    """What a SentencePiece vocabulary's spanner, encoder and decoder read beyond its tokens.

    Attributes:
        user_defined: the user-defined pieces, matched in the normalized text (longest first)
            and never merged with their neighbours.
        unused: the UNUSED pieces: a merge may make one, and it is then split back into the
            two symbols it was last made from.
        unk_surface: what ``<unk>`` decodes to (the trainer spec's ``unk_surface``).
        strip_leading_space: how decoding drops the dummy prefix: ``"first"`` (the leading
            ``▁`` of the first piece), ``"all"`` (of every piece until text appears:
            ``remove_extra_whitespaces``) or ``"none"``; for ``semantics="hf"``, ``"first"``
            is the decoder's ``Strip(" ", 1, 0)``.
        semantics: ``"sentencepiece"`` (a ``.model`` file: merges by piece score, decode as
            ``sentencepiece``) or ``"hf"`` (a tokenizer.json: merges by rank, byte fallback
            before merging, HF's decoders ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``).
        ignore_merges: (``"hf"``) a word that is a token is that token, as HF's ``ignore_merges``.
        words: no token has a ``▁`` right after another character, so no merge joins a
            ``▁`` to the character before it, and the text can be cut before each such ``▁``
            into parts that merge alone (the same ids; the parts repeat, so the piece cache
            serves them). The loaders check it on the tokens.
    """

    user_defined: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    unk_surface: str = " \u2047 "
    strip_leading_space: str = "first"
    semantics: str = "sentencepiece"
    ignore_merges: bool = False
    words: bool = False


def cuts_at_words(tokens) -> bool:
    """Whether no token text has a ``▁`` right after another character (see
    :attr:`SentencePieceModel.words`).

    >>> cuts_at_words(["▁the", "▁▁", "ing"]), cuts_at_words(["a▁b"])
    (True, False)
    """
    return not any(_JOINED_SPACE.search(text) for text in tokens)


_JOINED_SPACE = re.compile("[^" + SPACE + "]" + SPACE)


def split_pattern(model: SentencePieceModel) -> str:
    """The vocabulary pattern that describes ``model`` (what ``spanner="auto"`` recognizes).

    >>> split_pattern(SentencePieceModel(user_defined=("<br>",), unk_surface="?"))
    'sentencepiece:{"strip_leading_space":"first","unk_surface":"?","unused":[],"user_defined":["<br>"],"words":false}'
    """
    fields = model._asdict()
    if model.semantics == "sentencepiece":  # (the .model form names only what it uses)
        del fields["semantics"], fields["ignore_merges"]
    return MODEL_PREFIX + json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_sentencepiece(pattern: str) -> bool:
    """Whether a vocabulary pattern is a SentencePiece model description."""
    return isinstance(pattern, str) and pattern.startswith(MODEL_PREFIX)


def model_of(pattern: str) -> SentencePieceModel:
    """The :class:`SentencePieceModel` a vocabulary pattern describes.

    Raises:
        UnsupportedTokenizerError: the pattern is not a SentencePiece description (the
            component was given a vocabulary of another kind).
        VocabFormatError: a malformed description.
    """
    if not is_sentencepiece(pattern):
        raise UnsupportedTokenizerError(
            f"this component reads SentencePiece vocabularies only (a pattern starting {MODEL_PREFIX!r}), "
            f"not one with the pattern {pattern[:60]!r}"
        )
    try:
        fields = json.loads(pattern[len(MODEL_PREFIX):])
        model = SentencePieceModel(
            user_defined=tuple(fields["user_defined"]), unused=tuple(fields["unused"]),
            unk_surface=fields["unk_surface"], strip_leading_space=fields["strip_leading_space"],
            semantics=fields.get("semantics", "sentencepiece"), ignore_merges=fields.get("ignore_merges", False),
            words=fields.get("words", False),
        )
    except (ValueError, KeyError, TypeError, RecursionError):
        raise VocabFormatError(f"malformed SentencePiece description {pattern[:80]!r}") from None
    if not all(isinstance(p, str) and p for p in (*model.user_defined, *model.unused)) \
            or model.strip_leading_space not in ("first", "all", "none") or not isinstance(model.unk_surface, str) \
            or model.semantics not in ("sentencepiece", "hf") or not isinstance(model.ignore_merges, bool) \
            or not isinstance(model.words, bool):
        raise VocabFormatError(f"malformed SentencePiece description {pattern[:80]!r}")
    return model


# -- the normalizer -----------------------------------------------------------------------------


def normalizer_name(*, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
                    escape_whitespaces: bool = True, treat_whitespace_as_suffix: bool = False) -> str:
    """The registry name of the SentencePiece normalizer with these flags (the proto's defaults).

    >>> normalizer_name(remove_extra_whitespaces=False)
    'sentencepiece-normalizer:{"add_dummy_prefix":true,"escape_whitespaces":true,"remove_extra_whitespaces":false,"treat_whitespace_as_suffix":false}'
    """
    flags = dict(add_dummy_prefix=add_dummy_prefix, remove_extra_whitespaces=remove_extra_whitespaces,
                 escape_whitespaces=escape_whitespaces, treat_whitespace_as_suffix=treat_whitespace_as_suffix)
    return NORMALIZER_PREFIX + json.dumps(flags, sort_keys=True, separators=(",", ":"))


class SentencePieceNormalizer:
    """SentencePiece's ``Normalizer::Normalize`` for a model whose character map is the
    identity (``identity``: Llama 2, Mistral, Gemma): only spaces (U+0020) change.

    In order, as ``normalizer.cc`` does it: with ``remove_extra_whitespaces``, leading spaces
    are dropped (text of spaces only is empty) and a space after a space is dropped; each space
    becomes ``▁`` with ``escape_whitespaces``; ``add_dummy_prefix`` puts one ``▁`` before
    non-empty text (after it, with ``treat_whitespace_as_suffix``); with
    ``remove_extra_whitespaces`` trailing ``▁`` (typed ones too) are dropped before that.

    >>> SentencePieceNormalizer(normalizer_name())("  a   b  ")
    '▁a▁b'
    """

    def __init__(self, name: str) -> None:
        if not name.startswith(NORMALIZER_PREFIX):
            raise VocabFormatError(
                f"{name[:60]!r} is not a SentencePiece normalizer (it starts with {NORMALIZER_PREFIX!r})"
            )
        try:
            flags = json.loads(name[len(NORMALIZER_PREFIX):])
            self.add_dummy_prefix = flags["add_dummy_prefix"]
            self.remove_extra_whitespaces = flags["remove_extra_whitespaces"]
            self.escape_whitespaces = flags["escape_whitespaces"]
            self.suffix = flags["treat_whitespace_as_suffix"]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise VocabFormatError(f"malformed SentencePiece normalizer {name[:80]!r}") from None
        if not all(isinstance(flag, bool) for flag in (self.add_dummy_prefix, self.remove_extra_whitespaces,
                                                        self.escape_whitespaces, self.suffix)):
            raise VocabFormatError(f"malformed SentencePiece normalizer {name[:80]!r}: its flags are booleans")
        self.name = name
        self.space = SPACE if self.escape_whitespaces else " "

    def __call__(self, text: str) -> str:
        return self.alignment(text)[0]

    def alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The normalized text and each normalized character's place in ``text``: ``(start,
        end, same)``, ``same`` when it is that character unchanged; the dummy prefix is aligned
        to the first character kept (to the last with ``treat_whitespace_as_suffix``), as
        SentencePiece's ``norm_to_orig`` aligns it.

        >>> SentencePieceNormalizer(normalizer_name(remove_extra_whitespaces=False)).alignment("a b")
        ('▁a▁b', [(0, 1, False), (0, 1, True), (1, 2, False), (2, 3, True)])
        """
        start = 0
        if self.remove_extra_whitespaces:
            while start < len(text) and text[start] == " ":
                start += 1
        if start == len(text):
            return "", []
        space = self.space
        chars: list[str] = []
        places: list[tuple[int, int, bool]] = []
        if self.add_dummy_prefix and not self.suffix:
            chars.append(space)
            places.append((start, start + 1, False))
        previous_space = self.remove_extra_whitespaces
        for i in range(start, len(text)):
            char = text[i]
            if char == " ":
                if previous_space:
                    continue
                chars.append(space)
                places.append((i, i + 1, space == " "))
                previous_space = self.remove_extra_whitespaces
            else:
                chars.append(char)
                places.append((i, i + 1, True))
                previous_space = False
        if self.remove_extra_whitespaces:
            while chars and chars[-1] == space:
                chars.pop()
                places.pop()
        if self.add_dummy_prefix and self.suffix:
            end = places[-1][1] if places else len(text)
            chars.append(space)
            places.append((end - 1, end, False))
        return "".join(chars), places


# -- decoding -----------------------------------------------------------------------------------

# Kinds of token, for decoding.
TEXT, BYTE, CONTROL, UNKNOWN = 0, 1, 2, 3


def decode_pieces(tokens: Sequence[tuple[int, bytes]], model: SentencePieceModel, errors: str = "replace") -> str:
    """The text ``sentencepiece`` decodes from ``(kind, bytes)`` tokens (``DecodeIds``): text
    pieces with ``▁`` as a space, the first one's leading ``▁`` dropped by
    ``strip_leading_space``; each run of byte pieces decoded one character at a time, each
    byte that starts no valid UTF-8 character U+FFFD (with ``errors="strict"``, a
    UnicodeDecodeError instead); control pieces empty; ``<unk>`` its surface.

    >>> decode_pieces([(TEXT, "▁Hi▁".encode()), (BYTE, b"\\xf0\\x9f"), (CONTROL, b"</s>")], SentencePieceModel())
    'Hi \\ufffd\\ufffd'
    """
    out: list[str] = []
    run = bytearray()
    at_start = model.strip_leading_space != "none"
    has_text = False
    for kind, data in tokens:
        if kind == BYTE:
            run += data
            continue
        if run:
            out.append(_decode_bytes(bytes(run), errors))
            run.clear()
            has_text = has_text or bool(out[-1])
        text, at_start = _piece_text(kind, data, model, at_start, has_text)
        out.append(text)
        has_text = has_text or bool(text)
    if run:
        out.append(_decode_bytes(bytes(run), errors))
    return "".join(out)


def piece_bytes(tokens: Sequence[tuple[int, bytes]], model: SentencePieceModel, at_start: bool = True) \
        -> tuple[bytes, bool]:
    """The bytes :func:`decode_pieces` decodes (byte pieces as their bytes, not yet UTF-8), and
    whether a leading ``▁`` of the next token would still be dropped: what a stream of tokens
    decoded a few at a time needs, starting with ``at_start=True``.

    >>> piece_bytes([(TEXT, "▁Hi".encode()), (BYTE, b"\\xf0")], SentencePieceModel())
    (b'Hi\\xf0', False)
    """
    out = bytearray()
    at_start = at_start and model.strip_leading_space != "none"
    for kind, data in tokens:
        if kind == BYTE:
            out += data
            continue
        text, at_start = _piece_text(kind, data, model, at_start, bool(out))
        out += text.encode("utf-8")
    return bytes(out), at_start and not out


def _piece_text(kind: int, data: bytes, model: SentencePieceModel, at_start: bool, has_text: bool) -> tuple[str, bool]:
    """The text of one piece that is not a byte piece, and whether the next piece is still at the
    start (``DecodeSentencePiece``: a leading ``▁`` is dropped while no text came before, once
    for ``"first"``, and for ``"all"`` until text appears)."""
    if at_start and has_text:
        at_start = False
    if kind == CONTROL:
        return "", at_start
    if kind == UNKNOWN:
        return model.unk_surface, at_start
    if at_start and data.startswith(_SPACE_BYTES):
        data = data[len(_SPACE_BYTES):]
        if model.strip_leading_space == "first":
            at_start = False
    return data.decode("utf-8").replace(SPACE, " "), at_start


_SPACE_BYTES = SPACE.encode("utf-8")


def decode_hf(tokens: Sequence[tuple[int, bytes]], model: SentencePieceModel, errors: str = "replace") -> str:
    """The text HF ``tokenizers`` decodes from ``(kind, bytes)`` tokens with the decoders
    ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and, for ``strip_leading_space="first"``,
    ``Strip(" ", 1, 0)``: every token but a byte token is its text with ``▁`` as a space
    (special tokens too); a run of byte tokens is its UTF-8 text, or one U+FFFD per token when
    the run is not valid UTF-8 (``errors="strict"``: a UnicodeDecodeError); one leading space
    of the whole text is dropped.

    >>> decode_hf([(TEXT, "▁Hi".encode()), (BYTE, b"\\xe2"), (BYTE, b"A"), (CONTROL, b"</s>")], SentencePieceModel())
    'Hi\\ufffd\\ufffd</s>'
    """
    text = "".join(_hf_parts(tokens, errors))
    if model.strip_leading_space == "first" and text.startswith(" "):
        text = text[1:]
    return text


def _hf_parts(tokens: Sequence[tuple[int, bytes]], errors: str):
    run: list[bytes] = []
    for kind, data in tokens:
        if kind == BYTE:
            run.append(data)
            continue
        if run:
            yield _hf_byte_run(run, errors)
            run = []
        yield data.decode("utf-8").replace(SPACE, " ")
    if run:
        yield _hf_byte_run(run, errors)


def _hf_byte_run(run: list[bytes], errors: str) -> str:
    try:
        return b"".join(run).decode("utf-8")
    except UnicodeDecodeError:
        if errors == "strict":
            raise
        return "\ufffd" * len(run)


def hf_piece_bytes(tokens: Sequence[tuple[int, bytes]], model: SentencePieceModel, at_start: bool = True) \
        -> tuple[bytes, bool]:
    """The bytes :func:`decode_hf` decodes (byte tokens as their bytes), and whether the next
    token is still at the start (nothing came yet, so its leading space would be stripped)."""
    out = bytearray()
    for kind, data in tokens:
        out += data if kind == BYTE else data.replace(_SPACE_BYTES, b" ")
    if at_start and model.strip_leading_space == "first" and out.startswith(b" "):
        del out[:1]
        return bytes(out), False
    return bytes(out), at_start and not out


def _decode_bytes(data: bytes, errors: str = "replace") -> str:
    """Bytes of byte pieces as ``sentencepiece`` decodes them: each valid UTF-8 character as
    itself, each other byte U+FFFD (Python's ``errors="replace"`` would give one U+FFFD for
    a truncated sequence of several bytes).

    >>> _decode_bytes(b"a\\xf0\\x9f\\x98b\\xc3\\xa9")
    'a\\ufffd\\ufffd\\ufffdbé'
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if errors == "strict":
            raise
    out: list[str] = []
    i, n = 0, len(data)
    while i < n:
        lead = data[i]
        size = 1 if lead < 0x80 else 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF \
            else 4 if 0xF0 <= lead <= 0xF4 else 0
        if size:
            try:
                out.append(data[i:i + size].decode("utf-8"))
                i += size
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)


def token_kinds(vocab) -> list[tuple[int, Optional[bytes]]]:
    """``(kind, bytes)`` of every id of a SentencePiece vocabulary, for :func:`decode_pieces`:
    control and unknown pieces are its special tokens, byte pieces its one-byte tokens of bytes
    0x80-0xFF and the tokens spelled ``<0xNN>`` (a one-byte ASCII token decodes the same as text,
    whichever it is)."""
    table = vocab.token_bytes
    special_ids = set(vocab.special_tokens.values())
    hf = model_of(vocab.pattern).semantics == "hf"
    kinds: list[tuple[int, Optional[bytes]]] = []
    for i, data in enumerate(table):
        if data is None:
            kinds.append((CONTROL, None))
        elif i in special_ids and hf:  # HF decodes special tokens as their text
            kinds.append((TEXT, data))
        elif i in special_ids:
            kinds.append((UNKNOWN if i == vocab.unk_token_id else CONTROL, data))
        elif len(data) == 1 and data[0] >= 0x80:
            kinds.append((BYTE, data))
        elif len(data) == 6 and data.startswith(b"<0x") and data.endswith(b">") and _hex(data[3:5]) is not None:
            kinds.append((BYTE, bytes([_hex(data[3:5])])))
        else:
            kinds.append((TEXT, data))
    return kinds


def _hex(digits: bytes) -> Optional[int]:
    try:
        return int(digits, 16) if digits.upper() == digits else None
    except ValueError:
        return None


# -- HF's Metaspace pre-tokenizer, as a normalizer ----------------------------------------------

METASPACE_PREFIX = "hf-metaspace:"


def metaspace_name(*, normalizer: str = "none", replacement: str = SPACE, prepend_scheme: str = "always") -> str:
    """The registry name of HF's ``Metaspace`` (``split: false``) run after ``normalizer``.

    >>> metaspace_name(prepend_scheme="first")
    'hf-metaspace:{"normalizer":"none","prepend_scheme":"first","replacement":"▁"}'
    """
    fields = dict(normalizer=normalizer, replacement=replacement, prepend_scheme=prepend_scheme)
    return METASPACE_PREFIX + json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class MetaspaceNormalizer:
    """HF's ``Metaspace`` pre-tokenizer with ``split: false`` (its one word is the whole stretch),
    after the file's normalizer: every space becomes the replacement, which is put before a
    stretch that does not start with it for ``prepend_scheme`` ``"always"``, and for ``"first"``
    only before the stretch at the start of the text (``later`` is the normalizer of the other
    stretches: the engines use it for a stretch after an added token).

    >>> first = MetaspaceNormalizer(metaspace_name(prepend_scheme="first"))
    >>> first("Hello world"), first.later("Hello world"), first("▁x")
    ('▁Hello▁world', 'Hello▁world', '▁x')
    """

    def __init__(self, name: str) -> None:
        from .normalizers import get_normalizer

        try:
            fields = json.loads(name[len(METASPACE_PREFIX):])
            inner, self.replacement, self.scheme = fields["normalizer"], fields["replacement"], fields["prepend_scheme"]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise VocabFormatError(f"malformed Metaspace normalizer {name[:80]!r}") from None
        if self.scheme not in ("first", "always", "never") or not isinstance(self.replacement, str) \
                or len(self.replacement) != 1:
            raise VocabFormatError(f"malformed Metaspace normalizer {name[:80]!r}")
        self.name = name
        self.inner_name = inner
        self.inner = get_normalizer(inner)
        self.prepends = self.scheme != "never"
        if self.scheme == "first":
            self.later = MetaspaceNormalizer(metaspace_name(normalizer=inner, replacement=self.replacement,
                                                            prepend_scheme="never"))

    def __call__(self, text: str) -> str:
        text = self.inner(text).replace(" ", self.replacement)
        if self.prepends and text and not text.startswith(self.replacement):
            text = self.replacement + text
        return text

    def alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The normalized text and each character's place in ``text`` (the prepended
        replacement is aligned to the first character, as HF's ``prepend`` aligns it).

        Raises:
            UnsupportedTokenizerError: offsets through a normalizer before Metaspace.
        """
        if self.inner_name != "none":
            normalized = self.inner(text)
            if normalized != text:
                raise UnsupportedTokenizerError(
                    f"offsets through a normalizer ({self.inner_name}) before Metaspace are not supported yet"
                )
        if not text:
            return "", []
        chars = [self.replacement if c == " " else c for c in text]
        places = [(i, i + 1, c != " ") for i, c in enumerate(text)]
        if self.prepends and chars[0] != self.replacement:
            chars.insert(0, self.replacement)
            places.insert(0, (0, 1, False))
        return "".join(chars), places
