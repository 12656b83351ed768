"""``tokenizers.decoders.DecodeStream`` for accelerated tokenizers (and, through HF's own
stream, for plain HF tokenizers)."""

from __future__ import annotations

import functools
import operator
from typing import Optional, Sequence

from .backend import Backend

__all__ = ["DecodeStream"]


@functools.lru_cache(maxsize=1)
def _hf_decode_stream():
    """HF's ``tokenizers.decoders.DecodeStream`` (as it was before :func:`enable`)."""
    import tokenizers.decoders

    return tokenizers.decoders.DecodeStream


class DecodeStream:
    """``tokenizers.decoders.DecodeStream`` for an accelerated tokenizer: ``step(tok, id)``
    returns the text an id (or a list of ids) completes, or None, chunk for chunk as HF's.

    Ids the vocabulary does not have (a model's padding ids between the tokenizer's size and
    its embedding size) add no text, as in HF, instead of raising. ``tok`` is the transformers
    tokenizer (or its ``backend_tokenizer``); one that :func:`accelerate` did not make, or that
    runs on HF's code, streams with HF's own ``DecodeStream``.

    Args:
        ids: a prefill: ids already shown (their text is not returned again).
        skip_special_tokens: leave out special tokens.

    >>> import tokenizers
    >>> from transformers import PreTrainedTokenizerFast
    >>> from wordsplit import load_vocab
    >>> from wordsplit.training.save import tokenizer_json
    >>> backend = tokenizers.Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
    >>> from wordsplit.compat.transformers import accelerate
    >>> fast = accelerate(PreTrainedTokenizerFast(tokenizer_object=backend))
    >>> stream = DecodeStream(skip_special_tokens=True)
    >>> [stream.step(fast, i) for i in [9707, 1879, 151700, 151645]]
    ['Hello', ' world', None, None]
    """

    def __init__(self, ids: Optional[Sequence[int]] = None, skip_special_tokens: bool = False) -> None:
        self._prefill = None if ids is None else list(ids)
        self._skip = skip_special_tokens
        self._stream = None  # made at the first step, for the tokenizer it is given
        self._backend: Optional[Backend] = None

    def step(self, tokenizer, id):  # noqa: A002 (HF's parameter name)
        """Add one id (or a list of them) and return the text they complete, or None."""
        backend = getattr(tokenizer, "_tokenizer", tokenizer)
        if self._stream is None:
            self._start(backend)
        if self._backend is None:
            return self._stream.step(backend.hf if isinstance(backend, Backend) else backend, id)
        # An id the vocabulary lacks adds no text but still takes a step, as in HF: a stream
        # whose window raised (its text no longer starts with what it showed) raises again.
        ids = self._known(id if isinstance(id, (list, tuple)) else [id])
        return self._stream.step(self._backend._ws, ids)

    def _start(self, backend) -> None:
        if isinstance(backend, Backend) and backend._current() is not None:
            from ..tokenizers.decoders import DecodeStream as WordsplitStream

            self._backend = backend
            prefill = None if self._prefill is None else self._known(self._prefill)
            self._stream = WordsplitStream(prefill, skip_special_tokens=self._skip)
        else:
            self._stream = _hf_decode_stream()(self._prefill, skip_special_tokens=self._skip)

    def _known(self, ids) -> list[int]:
        keep = self._backend._keep(False)
        return [i for i in (operator.index(i) for i in ids) if 0 <= i < len(keep) and keep[i]]

    def __repr__(self) -> str:
        return f"DecodeStream(skip_special_tokens={self._skip})"
