"""Streaming decode: text out as token ids come in, one generation step at a time.

A byte-level BPE token may end inside a character (an emoji is often split over two or three
tokens), so decoding each token alone would print U+FFFD where the model wrote a character.
:class:`DecodeStream` keeps only the bytes of an incomplete UTF-8 character back and returns
everything else at once. Each step costs time in proportion to the new tokens' bytes, never to
the text so far, and the pieces it returns add up to ``tok.decode(all ids)`` (a byte sequence
that can never be valid UTF-8 is returned as U+FFFD as soon as it is known to be invalid, as
``decode`` replaces it; a character left incomplete at the end is given by :meth:`finish`).

A token's bytes are what the vocabulary's decoder makes of it: its bytes for byte-level BPE;
for a SentencePiece vocabulary, ``▁`` as a space and byte pieces as bytes, the dummy prefix
dropped from the first text of the stream only (the decoder's own rule, applied once).

>>> from wordsplit import get_tokenizer
>>> tok = get_tokenizer("qwen3")
>>> stream = tok.decode_stream()
>>> [stream.step(i) for i in tok.encode("hi 😀!")]
['hi', ' 😀', '!']
"""

from __future__ import annotations

import codecs
import operator
from typing import TYPE_CHECKING, Iterable, Optional, Union

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

_Utf8Decoder = codecs.getincrementaldecoder("utf-8")


class DecodeStream:
    """Decodes ids as they are generated; made by :meth:`Tokenizer.decode_stream`.

    Args:
        tokenizer: the tokenizer whose vocabulary the ids are from.
        skip_special_tokens: leave out special tokens (``<|im_end|>``...; Qwen3's added tokens
            such as ``<think>`` are text and stay, as in HF).
        ids: a prefill: ids already shown to the user (the prompt, or text streamed before).
            Their text is not returned, but a character they leave incomplete is completed
            by the next step, as HF's ``DecodeStream(ids=...)`` does.

    Raises:
        DecodeInputError, UnknownTokenError: an id that is not an int, or not in the vocabulary.
    """

    __slots__ = ("_tokenizer", "_skip", "_decoder", "_at_start")

    def __init__(self, tokenizer: "Tokenizer", *, skip_special_tokens: bool = False,
                 ids: Optional[Iterable[int]] = None) -> None:
        self._tokenizer = tokenizer
        self._skip = frozenset(tokenizer.vocab.special_tokens.values()) if skip_special_tokens else frozenset()
        # Python's incremental UTF-8 decoder holds back exactly an incomplete (still valid)
        # tail and replaces invalid bytes as soon as they are known to be invalid, so the
        # chunks it returns concatenate to the one-shot decode with errors="replace".
        self._decoder = _Utf8Decoder(errors="replace")
        # Whether no text came yet (a SentencePiece vocabulary drops its first leading space).
        self._at_start = True
        if ids is not None:
            self._decoder.decode(self._bytes(ids))

    def step(self, id_or_ids: Union[int, Iterable[int]]) -> Optional[str]:
        """Add one id (or a list of ids) and return the text they complete, or None if there
        is none yet (an incomplete character, or only skipped special tokens).

        >>> from wordsplit import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> ids = tok.encode("🦀")  # three tokens, one character
        >>> stream = tok.decode_stream()
        >>> [stream.step(i) for i in ids]
        [None, None, '🦀']
        """
        if isinstance(id_or_ids, (list, tuple)) or not _is_int(id_or_ids):
            data = self._bytes(id_or_ids)
        else:
            data = self._bytes((id_or_ids,))
        text = self._decoder.decode(data)
        return text or None

    def finish(self) -> Optional[str]:
        """End the stream: U+FFFD for an incomplete character held back, else None. The
        stream starts again empty after it.

        >>> from wordsplit import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> stream = tok.decode_stream()
        >>> stream.step(tok.encode("🦀")[:2]), stream.finish()
        (None, '�')
        """
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        self._at_start = True
        return text or None

    @property
    def pending(self) -> bytes:
        """The bytes held back: the start of a character not yet complete.

        >>> from wordsplit import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> stream = tok.decode_stream()
        >>> stream.step(tok.encode("🦀")[:1]), stream.pending
        (None, b'\\xf0\\x9f')
        """
        return self._decoder.getstate()[0]

    def __copy__(self) -> "DecodeStream":
        """An independent stream in the same state (one per beam in a beam search).

        >>> import copy
        >>> from wordsplit import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> stream = tok.decode_stream()
        >>> stream.step(tok.encode("🦀")[:2])
        >>> other = copy.copy(stream)
        >>> stream.step(tok.encode("🦀")[2:]), other.pending
        ('🦀', b'\\xf0\\x9f\\xa6')
        """
        other = DecodeStream.__new__(DecodeStream)
        other._tokenizer, other._skip, other._at_start = self._tokenizer, self._skip, self._at_start
        other._decoder = _Utf8Decoder(errors="replace")
        other._decoder.setstate(self._decoder.getstate())
        return other

    def __deepcopy__(self, memo: dict) -> "DecodeStream":
        return self.__copy__()  # the tokenizer is immutable and shared

    def _bytes(self, ids: Iterable[int]) -> bytes:
        ids = list(ids)
        if self._skip:
            ids = [i for i in ids if not (_is_int(i) and operator.index(i) in self._skip)]
        decode_after = getattr(self._tokenizer._engine, "decode_bytes_after", None)
        if decode_after is None:
            return self._tokenizer.decode_bytes(ids)
        from .engines.arguments import check_ids

        data, self._at_start = decode_after(check_ids(ids), self._at_start)
        return data

    def __repr__(self) -> str:
        return f"DecodeStream({self._tokenizer.vocab.name!r}, pending={self.pending!r})"


def _is_int(value: object) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return True
