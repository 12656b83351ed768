r"""``tokenizers.decoders.DecodeStream`` over wordsplit's :mod:`~wordsplit.streaming`.

HF's stream returns text only when everything decoded so far does not end in U+FFFD: an
incomplete character is held back, and so is a replacement character until a later token
follows it. For a byte-level file this stream does the same on top of
:class:`wordsplit.streaming.DecodeStream` (which holds back only an incomplete character), so
the chunks are HF's. Other decoders (SentencePiece-style files) are not a concatenation of
bytes: ``Strip`` drops a leading space of what it decodes, and ``ByteFallback`` gives one U+FFFD
per token of an invalid run. For them the stream runs HF's own steps on
:meth:`Tokenizer.decode <wordsplit.compat.tokenizers.Tokenizer.decode>`: it decodes the ids
since the last chunk but one, and returns what the new ids add to the text of the window
before them.

>>> from wordsplit import load_vocab
>>> from wordsplit.training.save import tokenizer_json
>>> from wordsplit.compat.tokenizers import Tokenizer
>>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
>>> stream = DecodeStream(skip_special_tokens=True)
>>> [stream.step(tok, i) for i in tok.encode("hi 😀!").ids]
['hi', ' 😀', '!']
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Optional, Sequence, Union

from ...errors import WordsplitError

if TYPE_CHECKING:
    from . import Tokenizer

__all__ = ["DecodeStream", "DecodeStreamError"]

_REPLACEMENT = "\ufffd"


class DecodeStreamError(WordsplitError, ValueError):
    """The text a stream decodes no longer starts with what it showed (HF's ``InvalidPrefix``)."""


class DecodeStream:
    """Decodes ids as a model generates them (HF's ``DecodeStream`` API).

    Args:
        ids: a prefill: ids already shown (their text is not returned again).
        skip_special_tokens: leave out special tokens.
    """

    def __init__(self, ids: Optional[Sequence[int]] = None, skip_special_tokens: bool = False) -> None:
        self._prefill = list(ids) if ids is not None else None
        self._skip = skip_special_tokens
        self._stream = None
        self._held = ""

    def step(self, tokenizer: "Tokenizer", id: Union[int, Sequence[int]]) -> Optional[str]:  # noqa: A002
        """Add one id (or a list of them) and return the text they complete, or None.

        Raises:
            DecodeInputError, UnknownTokenError: an id that is not an int, or not in the vocabulary
                (byte-level files; for the others, as HF, an id the vocabulary has not adds no text).
            DecodeStreamError: the text of the window no longer starts with what it was (as HF).
        """
        if not tokenizer._byte_level_decoder:
            return self._window_step(tokenizer, id)
        if self._stream is None:
            self._start(tokenizer)
        text = self._stream.step(id)
        if text:
            self._held += text
        if self._held and not self._stream.pending and not self._held.endswith(_REPLACEMENT):
            out, self._held = self._held, ""
            return out
        return None

    def _window_step(self, tokenizer: "Tokenizer", id) -> Optional[str]:  # noqa: A002
        """HF's ``step_decode_stream`` on :meth:`Tokenizer.decode`: the window is the ids since
        the chunk before last (``_ids``), ``_prefix`` its text, ``_shown`` how many of them gave
        the last chunk's text before it. Lengths are compared in UTF-8 bytes, as HF's are."""
        if self._stream is None:
            self._stream, self._ids, self._prefix, self._shown = "window", list(self._prefill or ()), "", 0
        ids, skip = self._ids, self._skip
        if not self._prefix and ids:
            prefix = tokenizer.decode(ids, skip)
            if not prefix.endswith(_REPLACEMENT):
                self._prefix, self._shown = prefix, len(ids)
        ids.extend(operator.index(i) for i in (id if isinstance(id, (list, tuple)) else [id]))
        text = tokenizer.decode(ids, skip)
        if len(text.encode("utf-8")) <= len(self._prefix.encode("utf-8")) or text.endswith(_REPLACEMENT):
            return None
        if not text.startswith(self._prefix):
            raise DecodeStreamError(f"the text decoded so far, {text!r}, does not start with the text shown "
                                    f"before, {self._prefix!r} (HF's stream fails here too)")
        new = text[len(self._prefix):]
        shown = len(ids) - self._shown
        del ids[:self._shown]
        self._prefix, self._shown = tokenizer.decode(ids, skip), shown
        return new

    def _start(self, tokenizer: "Tokenizer") -> None:
        self._stream = tokenizer.tokenizer.decode_stream(skip_special_tokens=self._skip)
        if self._prefill:
            text = self._stream.step(self._prefill) or ""
            # HF takes the prefill's text as already shown only when it does not end in U+FFFD
            # (an incomplete character shows as one); otherwise its first chunk repeats it.
            if self._stream.pending or text.endswith(_REPLACEMENT):
                self._held = text

    def __repr__(self) -> str:
        return f"DecodeStream(skip_special_tokens={self._skip}, held={self._held!r})"
