r"""``tokenizers.decoders.DecodeStream`` over wordsplit's :mod:`~wordsplit.streaming`.

HF's stream returns text only when everything decoded so far does not end in U+FFFD: an
incomplete character is held back, and so is a replacement character until a later token
follows it. This stream does the same on top of :class:`wordsplit.streaming.DecodeStream`
(which holds back only an incomplete character), so the chunks are HF's.

>>> from wordsplit import load_vocab
>>> from wordsplit.training.save import tokenizer_json
>>> from wordsplit.compat.tokenizers import Tokenizer
>>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
>>> stream = DecodeStream(skip_special_tokens=True)
>>> [stream.step(tok, i) for i in tok.encode("hi 😀!").ids]
['hi', ' 😀', '!']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

if TYPE_CHECKING:
    from . import Tokenizer

__all__ = ["DecodeStream"]

_REPLACEMENT = "\ufffd"


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
            DecodeInputError, UnknownTokenError: an id that is not an int, or not in the vocabulary.
        """
        if self._stream is None:
            self._start(tokenizer)
        text = self._stream.step(id)
        if text:
            self._held += text
        if self._held and not self._stream.pending and not self._held.endswith(_REPLACEMENT):
            out, self._held = self._held, ""
            return out
        return None

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
