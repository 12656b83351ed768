r"""The checks of encode and decode arguments, and what is made of them, the same for both engines.

The Tokenizer checks decode arguments here before it calls either engine (:func:`check_ids`,
:func:`check_batch_ids`, :func:`token_id`); the Python engine checks encode arguments here
(:func:`check_text`, :func:`check_batch`, :func:`without_surrogates`), and the native engine
makes the same checks in Rust with the same messages, so both backends raise the same errors
word for word. This module imports neither engine.

>>> without_surrogates("a\ud83d\ude00\ud800")
'a😀�'
"""

from __future__ import annotations

import operator
from typing import Iterable

from ..errors import DecodeInputError, EncodeInputError, UnknownTokenError
from ..vocab import Vocab

__all__ = ["check_batch", "check_batch_ids", "check_ids", "check_text", "token_id", "without_surrogates"]


def check_text(text: object) -> str:
    """``text`` if it is a str, else the EncodeInputError both engines raise."""
    if not isinstance(text, str):
        raise EncodeInputError(f"encode takes a str, not {type(text).__name__}{_bytes_hint(text)}")
    return text


def check_batch(texts: Iterable[object]) -> list[str]:
    """The texts of a batch as a list, each checked to be a str."""
    texts = texts if type(texts) is list else list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise EncodeInputError(f"text {i} of the batch is a {type(text).__name__}, not a str{_bytes_hint(text)}")
    return texts


def _bytes_hint(value: object) -> str:
    if isinstance(value, (bytes, bytearray)):
        return " (decode bytes to str first, e.g. data.decode('utf-8'))"
    return ""


def without_surrogates(text: str) -> str:
    """Join surrogate pairs and replace lone surrogates with U+FFFD, as tiktoken does."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def token_id(vocab: Vocab, value: object) -> int:
    """``value`` as a token id of ``vocab`` (an int, or a numpy integer; a bool is an int, as
    for tiktoken), or the error both engines raise: DecodeInputError for a non-integer,
    UnknownTokenError for an id outside the vocabulary or unused by it."""
    try:
        index = operator.index(value)
    except TypeError:
        raise DecodeInputError(f"token ids are ints, got {value!r} ({type(value).__name__})") from None
    table = vocab.token_bytes
    if not 0 <= index < len(table):
        raise UnknownTokenError(
            f"token id {index} is outside the vocabulary {vocab.name!r} (ids 0..{vocab.n_vocab - 1})"
        )
    if table[index] is None:
        raise UnknownTokenError(f"token id {index} is unused in the vocabulary {vocab.name!r}")
    return index


def check_ids(ids):
    """The ids argument of a decode, as both engines take it: a list (or other iterable) of
    ints as given; a 1-D integer array (numpy, or anything with ``ndim``, ``dtype`` and
    ``tolist``) as the list of its ints. A str, an array of another rank or a non-integer
    dtype is a DecodeInputError.

    >>> import numpy as np
    >>> check_ids(np.array([15339, 1917], dtype=np.uint16))
    [15339, 1917]
    """
    if type(ids) is list:
        return ids
    if isinstance(ids, (str, bytes, bytearray)):
        raise DecodeInputError(f"decode takes a sequence of token ids, not {type(ids).__name__}; "
                               "for text use encode")
    ndim = getattr(ids, "ndim", None)
    if isinstance(ndim, int) and hasattr(ids, "tolist"):
        if ndim != 1:
            raise DecodeInputError(f"decode takes a 1-D sequence of token ids, not a {ndim}-D array "
                                   f"(shape {tuple(getattr(ids, 'shape', ()))}); decode_batch takes a 2-D one")
        _check_integer_dtype(ids)
        return ids.tolist()
    return ids


def check_batch_ids(batch):
    """The batch argument of ``decode_batch``: each item as :func:`check_ids` takes it; a 2-D
    integer array is its rows."""
    ndim = getattr(batch, "ndim", None)
    if isinstance(ndim, int) and hasattr(batch, "tolist"):
        if ndim != 2:
            raise DecodeInputError(f"decode_batch takes a 2-D array of token ids (one row per sequence), "
                                   f"not a {ndim}-D one")
        _check_integer_dtype(batch)
        return batch.tolist()
    if isinstance(batch, (str, bytes, bytearray)):
        raise DecodeInputError(f"decode_batch takes a sequence of id sequences, not {type(batch).__name__}")
    return [ids if type(ids) is list else check_ids(ids) for ids in batch]


def _check_integer_dtype(array) -> None:
    kind = getattr(getattr(array, "dtype", None), "kind", None)
    if kind is not None and kind not in "iu":
        raise DecodeInputError(f"token ids are integers, not an array of dtype {array.dtype}; "
                               "convert it first, e.g. ids.astype('int64')")
