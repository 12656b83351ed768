r"""transformers' fast tokenizers on wordsplit's engine: ``accelerate(tok)``.

:func:`accelerate` takes a transformers fast tokenizer (``TokenizersBackend``, what
``AutoTokenizer.from_pretrained`` returns for a ``tokenizer.json``) and returns a copy of it
whose encoding and decoding run on wordsplit, with transformers' own code around the ids:
padding, truncation, stride and overflow, tensors, pairs, templates and chat templates are
transformers' and HF tokenizers' rules, so every result is the original's. ``tok`` and every
other instance are left as they were.

How: transformers calls its backend, ``tok._tokenizer`` (an HF ``tokenizers.Tokenizer``), for
everything about ids. The copy's backend is a :class:`Backend` that answers the same methods:
its ``encode_batch`` encodes on wordsplit and truncates, post-processes and pads as HF tokenizers
does (:mod:`wordsplit.compat.tokenizers`' pipeline: every strategy, pairs, stride and overflow,
any post-processor), and its ``decode`` is wordsplit's. The copy's ``_encode_plus`` has a fast
path for the common call (texts, no offsets or overflow asked for) that builds the arrays
directly from wordsplit's ids, without an object per token. Whatever wordsplit cannot do
exactly runs on the original HF code, decided when the copy is made (a file wordsplit does not
load: :attr:`Backend.fallback_reason`, which :func:`accelerate` warns of, or with
``strict=True`` raises) and on each call (an input HF would refuse, a truncation HF fails on:
the error is then HF's own).

>>> import tokenizers
>>> from transformers import PreTrainedTokenizerFast
>>> from wordsplit import load_vocab
>>> from wordsplit.training.save import tokenizer_json
>>> backend = tokenizers.Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
>>> hf = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<|endoftext|>")
>>> fast = accelerate(hf)
>>> fast(["Hello world", "hi"], padding=True)["input_ids"]
[[9707, 1879], [6023, 151643]]
>>> fast.decode([9707, 1879]), is_accelerated(fast), is_accelerated(hf)
('Hello world', True, False)
"""

from __future__ import annotations

import copy
import warnings

from ...errors import UnsupportedTokenizerError
from .backend import Backend
from .call import batch_rows, clean_up, fast_encode
from ..tokenizers.encoding import Encoding
from .decoders import DecodeStream, _hf_decode_stream

__all__ = ["Backend", "DecodeStream", "Encoding", "NotAcceleratedWarning", "accelerate", "disable", "enable",
           "is_accelerated", "original"]


class NotAcceleratedWarning(UserWarning):
    """:func:`accelerate` made a copy that runs wholly on transformers' own code: wordsplit does
    not load its ``tokenizer.json`` (the message says why). The results are the original's; only
    the speed is not wordsplit's. ``accelerate(tok, strict=True)`` raises instead."""


_CLASSES: dict[type, type] = {}


def _accelerated_class(cls: type) -> type:
    """The subclass of a transformers tokenizer class that :func:`accelerate` gives its copies
    (one per class, named as the class, so ``save_pretrained`` writes the same files)."""
    made = _CLASSES.get(cls)
    if made is None:
        made = type(cls.__name__, (_Accelerated, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                                        "_wordsplit_base": cls})
        _CLASSES[cls] = made
    return made


def _restore(cls: type, state: dict):
    """Unpickle an accelerated tokenizer of transformers class ``cls``."""
    tok = object.__new__(_accelerated_class(cls))
    tok.__dict__.update(state)
    return tok


class _Accelerated:
    """What :func:`accelerate` adds to a tokenizer class: the fast path of ``_encode_plus``,
    batched decoding, and pickling as the class it was made from."""

    _wordsplit_base: type

    def __reduce_ex__(self, protocol):
        return _restore, (self._wordsplit_base, self.__dict__)

    def __deepcopy__(self, memo):
        return _restore(self._wordsplit_base, _copied_state(self))

    def _encode_plus(self, text, text_pair=None, **options):
        """transformers' ``_encode_plus`` (what ``__call__`` and ``encode`` run): built from
        wordsplit's ids where :func:`fast_encode` can, else transformers' own code on the
        accelerated backend."""
        fast = fast_encode(self, text, text_pair, options)
        if fast is not None:
            return fast
        return super()._encode_plus(text, text_pair, **options)

    def decode(self, token_ids, skip_special_tokens: bool = False, **kwargs):
        """transformers' ``decode``; a batch (what ``batch_decode`` passes) is decoded in one
        call on native threads."""
        backend = self._tokenizer
        if (not kwargs.keys() <= {"clean_up_tokenization_spaces"} or not isinstance(backend, Backend)
                or backend._current() is None):
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        batch = batch_rows(token_ids)
        if batch is None:
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        # A batch: decoded at once on native threads, then cleaned up as _decode does.
        texts = backend._decode_rows(batch, skip_special_tokens)
        if texts is None:
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        clean = kwargs.get("clean_up_tokenization_spaces")
        return [clean_up(self, text, clean) for text in texts]


def accelerate(tok, *, strict: bool = False):
    """A copy of the transformers fast tokenizer ``tok`` that encodes and decodes on wordsplit.

    The copy is an instance of ``tok``'s class (a subclass of it, of the same name) with the
    same vocabulary, settings, special tokens and chat template; every method gives what
    ``tok``'s gives. ``tok`` is not changed, nor is any other tokenizer. What wordsplit cannot
    do exactly runs on HF's code: ``tok.backend_tokenizer.fallback_reason`` says why a whole
    tokenizer does (a normalizer or model wordsplit does not load), and single calls (an input
    HF refuses, a truncation HF fails on) fall back on their own. A copy that runs wholly on
    HF's code warns once (a :class:`NotAcceleratedWarning` naming the reason), or with
    ``strict=True`` is refused.

    Raises:
        UnsupportedTokenizerError: ``tok`` is not a transformers fast tokenizer (``TokenizersBackend``);
            with ``strict``, wordsplit cannot run it (the message says why).
    """
    from transformers import TokenizersBackend

    if not isinstance(tok, TokenizersBackend):
        raise UnsupportedTokenizerError(
            f"accelerate takes a transformers fast tokenizer (TokenizersBackend, transformers 5), not "
            f"{type(tok).__name__}; load it with AutoTokenizer.from_pretrained(...) (use_fast=True)"
        )
    if is_accelerated(tok):
        return copy.deepcopy(tok)
    state = _copied_state(tok)
    backend = state["_tokenizer"] = Backend(state["_tokenizer"])
    if not backend.accelerated:
        what = f"wordsplit cannot run this {type(tok).__name__}: {backend.fallback_reason}"
        if strict:
            raise UnsupportedTokenizerError(
                f"{what}; accelerate(tok) without strict=True runs it on transformers' code")
        warnings.warn(f"{what}; it runs on transformers' own code (the original's results, not wordsplit's speed)",
                      NotAcceleratedWarning, stacklevel=2)
    return _restore(type(tok), state)


# Init-time copies of the vocabulary and merges some tokenizer classes keep (150k entries for
# Qwen3): str, int and tuple items, never changed after init, so a shallow copy is a copy.
_DATA_ATTRIBUTES = ("_vocab", "_merges")


def _copied_state(tok) -> dict:
    """A deep copy of ``tok.__dict__`` (the vocabulary and merges copied shallowly)."""
    memo: dict = {}
    for name in _DATA_ATTRIBUTES:
        value = tok.__dict__.get(name)
        if isinstance(value, (dict, list)):
            memo[id(value)] = copy.copy(value)
    return copy.deepcopy(tok.__dict__, memo)


def enable() -> None:
    """Accelerate every fast tokenizer ``AutoTokenizer.from_pretrained`` (or a tokenizer
    class's ``from_pretrained``) loads in this process from now on, until :func:`disable`:
    for a server or trainer that loads its tokenizer itself (vLLM, SGLang). Tokenizers loaded
    before are not changed. ``tokenizers.decoders.DecodeStream`` becomes :class:`DecodeStream`
    (which streams HF tokenizers with HF's own stream), for code that imports it afterwards and
    hands it an accelerated tokenizer's backend. Opt-in and reversible; calling it twice is
    calling it once.

    >>> import tokenizers.decoders
    >>> enable(); enable()
    >>> tokenizers.decoders.DecodeStream is DecodeStream
    True
    >>> disable()
    >>> from transformers import TokenizersBackend
    >>> "from_pretrained" in TokenizersBackend.__dict__, tokenizers.decoders.DecodeStream is DecodeStream
    (False, False)
    """
    import tokenizers.decoders
    from transformers import TokenizersBackend

    if "from_pretrained" in TokenizersBackend.__dict__:
        return
    _hf_decode_stream()  # saved before it is replaced
    tokenizers.decoders.DecodeStream = DecodeStream
    load = TokenizersBackend.from_pretrained.__func__

    def from_pretrained(cls, *args, **kwargs):
        tok = load(cls, *args, **kwargs)
        return accelerate(tok) if isinstance(tok, TokenizersBackend) and not is_accelerated(tok) else tok

    from_pretrained.__doc__ = load.__doc__
    from_pretrained._wordsplit = True
    TokenizersBackend.from_pretrained = classmethod(from_pretrained)


def disable() -> None:
    """Undo :func:`enable`: ``from_pretrained`` loads plain tokenizers again (those already
    accelerated stay so)."""
    import tokenizers.decoders
    from transformers import TokenizersBackend

    patched = TokenizersBackend.__dict__.get("from_pretrained")
    if patched is not None and getattr(patched.__func__, "_wordsplit", False):
        del TokenizersBackend.from_pretrained
    if tokenizers.decoders.DecodeStream is DecodeStream:
        tokenizers.decoders.DecodeStream = _hf_decode_stream()


def is_accelerated(tok) -> bool:
    """Whether ``tok`` was made by :func:`accelerate`."""
    return isinstance(tok, _Accelerated)


def original(tok):
    """A plain transformers tokenizer with ``tok``'s state: :func:`accelerate` undone (a copy).

    Raises:
        UnsupportedTokenizerError: ``tok`` was not made by :func:`accelerate`.
    """
    if not is_accelerated(tok):
        raise UnsupportedTokenizerError(f"{type(tok).__name__} was not made by wordsplit's accelerate")
    state = _copied_state(tok)
    state["_tokenizer"] = state["_tokenizer"].hf
    plain = object.__new__(tok._wordsplit_base)
    plain.__dict__.update(state)
    return plain
