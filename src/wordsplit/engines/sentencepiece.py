"""The engine of a SentencePiece vocabulary: the encode of the engine it wraps, and
``sentencepiece``'s decode (:mod:`wordsplit.sentencepiece`), which is not a concatenation of
token bytes: ``▁`` is a space, the dummy prefix's space is dropped, control pieces are empty.

Encoding is the wrapped engine's (Python, or native with the core's twins of the
SentencePiece components), so both backends give the same ids; decoding runs in Python on
both, and so does ``encode_with_offsets`` but for a native Unigram, WordPiece or WordLevel
pipeline (the core's offsets, held equal to the Python engine's).

>>> from wordsplit import TokenizerOptions, load_vocab
>>> tok = TokenizerOptions(backend="python").build(load_vocab("tests/data/spm/mistral-v1.model"))
>>> ids = tok.encode("Hello world")
>>> tok.decode_bytes(ids), tok.decode([tok.vocab.bos_token_id] + ids)
(b'Hello world', 'Hello world')
"""

from __future__ import annotations

import itertools

from typing import Optional, Sequence

from ..sentencepiece import SPACE
from ..spec import SentencePieceDecoder, Unigram, WordLevel, WordPiece
from ..vocab import Vocab
from .python import DECODE_CHUNK, PythonEngine, token_id


class SentencePieceEngine:
    """``engine``'s encode (every attribute but the decode methods is ``engine``'s) and
    ``sentencepiece``'s decode of ``vocab``'s ids."""

    def __init__(self, engine, vocab: Vocab, spanner: str, encoder: str) -> None:
        self._inner = engine
        self.vocab = vocab
        self._components = (spanner, encoder)
        self._python = engine if isinstance(engine, PythonEngine) else None
        self.decoder = vocab.pipeline.decoder
        self._kinds = None  # token_kinds(vocab), made by the first decode (a loop over every id)
        self._decode, self._bytes = {"hf": (decode_hf, hf_piece_bytes),
                                     "llama.cpp": (decode_llamacpp, llamacpp_piece_bytes)}.get(
            self.decoder.style, (decode_pieces, piece_bytes))
        # HF's Metaspace decoder reads every token as its text (a "<0x41>" token too).
        self._metaspace = self.decoder.style == "hf" and self.decoder.strip_leading_space == "all"
        if self._metaspace:
            self._decode, self._bytes = decode_metaspace, metaspace_piece_bytes
        from ..normalizers import normalizer_for
        from .native import native_normalizer

        if getattr(normalizer_for(vocab.normalizer), "later", None) is not None and self._python is None \
                and not native_normalizer(vocab.normalizer):
            # A stretch after an added token has its own normalizer (Metaspace's "first"),
            # which a Python normalizer called from the native pipeline cannot be told (the
            # native twin is): every encode goes to the Python engine then.
            self._inner = self._python_engine()
        # Whether encoding runs natively (every stage in the core); decoding is Python's.
        self.native = bool(getattr(self._inner, "native", False))
        # (the core places these models' tokens; CharacterBpe's are the Python engine's,
        # native.offsets_in_python)
        self._native_offsets = self.native and isinstance(vocab.pipeline.model, (Unigram, WordPiece, WordLevel))

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def _python_engine(self):
        if self._python is None:
            from .python import build_python_engine

            self._python = build_python_engine(self.vocab, *self._components)
        return self._python

    def encode_with_offsets(self, text, allowed, disallowed):
        """The offsets of a native Unigram pipeline whose normalizer the core aligns
        (sentencepiece's, HF's Metaspace after a program, llama.cpp's of a GGUF file), and of a
        native WordPiece or WordLevel one (llama.cpp's of a GGUF file), are the core's, the
        same as the Python engine's; every other vocabulary's are the Python engine's, which
        align through the normalizer as sentencepiece's ``norm_to_orig`` does."""
        if self._native_offsets:
            return self._inner.encode_with_offsets(text, allowed, disallowed)
        return self._python_engine().encode_with_offsets(text, allowed, disallowed)

    def _tokens(self, ids):
        if self._metaspace:
            table, vocab = self.vocab.token_bytes, self.vocab
            return [(TEXT, table[token_id(vocab, i)] or b"") for i in ids]
        if self._kinds is None:
            self._kinds = token_kinds(self.vocab)
        kinds, vocab = self._kinds, self.vocab
        return [kinds[token_id(vocab, i)] for i in ids]

    def decode(self, ids, errors: str) -> str:
        return self._decode(self._tokens(ids), self.decoder, errors)

    def decode_bytes(self, ids) -> bytes:
        return self.decode_bytes_after(ids, True)[0]

    def decode_bytes_after(self, ids, at_start: bool) -> tuple[bytes, bool]:
        """The bytes of ``ids`` decoded after others (``at_start``: none gave text yet), and the
        same flag for the ids after them: what :class:`~wordsplit.streaming.DecodeStream` uses."""
        out = bytearray()
        ids = iter(ids)
        while chunk := list(itertools.islice(ids, DECODE_CHUNK)):
            data, at_start = self._bytes(self._tokens(chunk), self.decoder, at_start)
            out += data
        return bytes(out), at_start

    def decode_batch(self, batch, errors: str, num_threads) -> list[str]:
        return [self.decode(ids, errors) for ids in batch]


# -- decoding -----------------------------------------------------------------------------------

# Kinds of token, for decoding.
TEXT, BYTE, CONTROL, UNKNOWN = 0, 1, 2, 3


def decode_pieces(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder, errors: str = "replace") -> str:
    """The text ``sentencepiece`` decodes from ``(kind, bytes)`` tokens (``DecodeIds``): text
    pieces with ``▁`` as a space, the first one's leading ``▁`` dropped by
    ``strip_leading_space``; each run of byte pieces decoded one character at a time, each
    byte that starts no valid UTF-8 character U+FFFD (with ``errors="strict"``, a
    UnicodeDecodeError instead); control pieces empty; ``<unk>`` its surface.

    >>> decode_pieces([(TEXT, "▁Hi▁".encode()), (BYTE, b"\\xf0\\x9f"), (CONTROL, b"</s>")], SentencePieceDecoder())
    'Hi \\ufffd\\ufffd'
    """
    out: list[str] = []
    run = bytearray()
    at_start = decoder.strip_leading_space != "none"
    has_text = False
    for kind, data in tokens:
        if kind == BYTE:
            run += data
            continue
        if run:
            out.append(_decode_bytes(bytes(run), errors))
            run.clear()
            has_text = has_text or bool(out[-1])
        text, at_start = _piece_text(kind, data, decoder, at_start, has_text)
        out.append(text)
        has_text = has_text or bool(text)
    if run:
        out.append(_decode_bytes(bytes(run), errors))
    return "".join(out)


def piece_bytes(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder, at_start: bool = True) \
        -> tuple[bytes, bool]:
    """The bytes :func:`decode_pieces` decodes (byte pieces as their bytes, not yet UTF-8), and
    whether a leading ``▁`` of the next token would still be dropped: what a stream of tokens
    decoded a few at a time needs, starting with ``at_start=True``.

    >>> piece_bytes([(TEXT, "▁Hi".encode()), (BYTE, b"\\xf0")], SentencePieceDecoder())
    (b'Hi\\xf0', False)
    """
    out = bytearray()
    at_start = at_start and decoder.strip_leading_space != "none"
    for kind, data in tokens:
        if kind == BYTE:
            out += data
            continue
        text, at_start = _piece_text(kind, data, decoder, at_start, bool(out))
        out += text.encode("utf-8")
    return bytes(out), at_start and not out


def _piece_text(kind: int, data: bytes, decoder: SentencePieceDecoder, at_start: bool,
                has_text: bool) -> tuple[str, bool]:
    """The text of one piece that is not a byte piece, and whether the next piece is still at the
    start (``DecodeSentencePiece``: a leading ``▁`` is dropped while no text came before, once
    for ``"first"``, and for ``"all"`` until text appears)."""
    if at_start and has_text:
        at_start = False
    if kind == CONTROL:
        return "", at_start
    if kind == UNKNOWN:
        return decoder.unk_surface, at_start
    if at_start and data.startswith(_SPACE_BYTES):
        data = data[len(_SPACE_BYTES):]
        if decoder.strip_leading_space == "first":
            at_start = False
    return data.decode("utf-8").replace(SPACE, " "), at_start


_SPACE_BYTES = SPACE.encode("utf-8")


def decode_hf(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder, errors: str = "replace") -> str:
    """The text HF ``tokenizers`` decodes from ``(kind, bytes)`` tokens with the decoders
    ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and, for ``strip_leading_space="first"``,
    ``Strip(" ", 1, 0)``: every token but a byte token is its text with ``▁`` as a space
    (special tokens too); a run of byte tokens is its UTF-8 text, or one U+FFFD per token when
    the run is not valid UTF-8 (``errors="strict"``: a UnicodeDecodeError); one leading space
    of the whole text is dropped.

    >>> decode_hf([(TEXT, "▁Hi".encode()), (BYTE, b"\\xe2"), (BYTE, b"A"), (CONTROL, b"</s>")], SentencePieceDecoder())
    'Hi\\ufffd\\ufffd</s>'
    """
    text = "".join(_hf_parts(tokens, errors))
    if decoder.strip_leading_space == "first" and text.startswith(" "):
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


def hf_piece_bytes(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder, at_start: bool = True) \
        -> tuple[bytes, bool]:
    """The bytes :func:`decode_hf` decodes (byte tokens as their bytes), and whether the next
    token is still at the start (nothing came yet, so its leading space would be stripped)."""
    out = bytearray()
    for kind, data in tokens:
        out += data if kind == BYTE else data.replace(_SPACE_BYTES, b" ")
    if at_start and decoder.strip_leading_space == "first" and out.startswith(b" "):
        del out[:1]
        return bytes(out), False
    return bytes(out), at_start and not out


def decode_metaspace(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder,
                     errors: str = "replace") -> str:
    """The text HF ``tokenizers`` decodes from ``(kind, bytes)`` tokens with its ``Metaspace``
    decoder (``prepend_scheme`` ``always`` or ``first``: a :class:`SentencePieceDecoder` with
    ``style="hf"`` and ``strip_leading_space="all"``): each token is its text, the first one
    with every ``▁`` dropped, the others with ``▁`` as a space; no byte tokens.

    >>> decode_metaspace([(TEXT, "▁a▁b".encode()), (TEXT, "▁<0x41>".encode())], SentencePieceDecoder(style="hf"))
    'ab <0x41>'
    """
    return metaspace_piece_bytes(tokens, decoder)[0].decode("utf-8", errors)


def metaspace_piece_bytes(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder,
                          at_start: bool = True) -> tuple[bytes, bool]:
    """The bytes :func:`decode_metaspace` decodes, and whether the next token would still be
    the first one (``at_start`` and no token here)."""
    out = bytearray()
    for _, data in tokens:
        out += data.replace(_SPACE_BYTES, b"" if at_start else b" ")
        at_start = False
    return bytes(out), at_start


def decode_llamacpp(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder, errors: str = "replace") -> str:
    """The text of llama.cpp's ``llama_detokenize`` (special tokens not rendered) of ``(kind,
    bytes)`` tokens, decoded from UTF-8 with ``errors``: see :func:`llamacpp_piece_bytes`.

    >>> decode_llamacpp([(CONTROL, b"<s>"), (TEXT, "▁Hi".encode()), (BYTE, b"!")], SentencePieceDecoder())
    ' Hi!'
    """
    return llamacpp_piece_bytes(tokens, decoder)[0].decode("utf-8", errors)


def llamacpp_piece_bytes(tokens: Sequence[tuple[int, bytes]], decoder: SentencePieceDecoder, at_start: bool = True) \
        -> tuple[bytes, bool]:
    """The bytes of llama.cpp's ``llama_token_to_piece`` of each token, joined: a text token with
    ``▁`` as a space, a byte token (and a user-defined one) as it is, a control or unknown token
    nothing; the first token (``at_start``) loses one leading space when ``strip_leading_space``
    is ``"first"`` (``add_space_prefix``), whatever its kind, so a space after a leading BOS
    stays. Also whether the next token is still the first.

    >>> llamacpp_piece_bytes([(TEXT, "▁Hi▁".encode())], SentencePieceDecoder())
    (b'Hi ', False)
    """
    out = bytearray()
    for kind, data in tokens:
        piece = b"" if kind in (CONTROL, UNKNOWN) else data if kind == BYTE else data.replace(_SPACE_BYTES, b" ")
        if at_start and decoder.strip_leading_space == "first" and piece.startswith(b" "):
            piece = piece[1:]
        at_start = False
        out += piece
    return bytes(out), at_start


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
    0x80-0xFF and the tokens spelled ``<0xNN>`` (for ``sentencepiece`` and llama.cpp a one-byte
    ASCII token decodes the same as text, whichever it is; for HF it is a byte token when no
    ``<0xNN>`` token stands for that byte, since an invalid run of byte tokens decodes as one
    U+FFFD per token)."""
    table = vocab.token_bytes
    special_ids = set(vocab.special_tokens.values())
    style = vocab.pipeline.decoder.style
    hf = style == "hf"
    llama = style == "llama.cpp"
    verbatim = set(vocab.added_tokens.values()) if llama else ()
    # llama_token_to_piece renders an UNUSED token as nothing
    unused = {vocab.ranks[text.encode()] for text in vocab.pipeline.decoder.unused} if llama else ()
    kinds: list[tuple[int, Optional[bytes]]] = []
    for i, data in enumerate(table):
        if data is None:
            kinds.append((CONTROL, None))
        elif i in verbatim:  # llama.cpp copies a user-defined token's text as it is
            kinds.append((BYTE, data))
        elif i in unused:
            kinds.append((CONTROL, data))
        elif i in special_ids and hf:  # HF decodes special tokens as their text
            kinds.append((TEXT, data))
        elif i in special_ids:
            kinds.append((UNKNOWN if i == vocab.unk_token_id else CONTROL, data))
        elif len(data) == 1 and (data[0] >= 0x80 or (hf and b"<0x%02X>" % data[0] not in vocab.ranks)):
            # (HF's ByteFallback joins a run of byte tokens, ASCII ones too: an ASCII byte
            # token is stored as its byte unless a text token is that byte, see formats.hf_sentencepiece)
            kinds.append((BYTE, data))
        elif len(data) == 6 and data.startswith(b"<0x") and data.endswith(b">") and _hex(data[3:5]) is not None:
            kinds.append((BYTE, bytes([_hex(data[3:5])])))
        else:
            kinds.append((TEXT, data))
    return kinds


def _hex(digits: bytes) -> Optional[int]:
    """The byte of two uppercase hex digits (a byte token's one spelling,
    :func:`wordsplit.formats.sentencepiece.byte_piece_value`), or None."""
    return int(digits, 16) if all(c in b"0123456789ABCDEF" for c in digits) else None
