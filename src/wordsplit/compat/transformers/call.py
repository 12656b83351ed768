"""The fast path of an accelerated tokenizer's ``__call__`` and ``batch_decode``: transformers'
results built from wordsplit's ids directly, without transformers' per-token Python work.

>>> _pad_length([3, 7], {"length": None, "pad_to_multiple_of": 4}), _pad_length([3, 7], None)
(8, None)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence as _SequenceABC
from typing import Optional

from .backend import Backend, _Fallback, _Layout
from ..tokenizers.encoding import Encoding
from ..tokenizers.padding import round_up

__all__ = ["batch_rows", "clean_up", "fast_encode"]


# _encode_plus options the fast path handles (the others, when set, go to transformers' path).
_FAST_OPTIONS = frozenset({
    "add_special_tokens", "padding_strategy", "truncation_strategy", "max_length", "stride", "is_split_into_words",
    "pad_to_multiple_of", "padding_side", "return_tensors", "return_token_type_ids", "return_attention_mask",
    "return_overflowing_tokens", "return_special_tokens_mask", "return_offsets_mapping", "return_length", "verbose",
    "split_special_tokens",
})


def fast_encode(tok, text, text_pair, options: dict):
    """``tok._encode_plus(text, **options)`` built from wordsplit's ids alone, or None where
    transformers' own path must run (pairs, words, offsets or overflow asked for, tensors
    other than numpy, a call wordsplit does not encode as HF)."""
    backend = tok._tokenizer
    if (text_pair is not None or not options.keys() <= _FAST_OPTIONS or options.get("is_split_into_words")
            or options.get("return_overflowing_tokens") or options.get("return_offsets_mapping")
            or not isinstance(backend, Backend)):
        return None
    return_tensors = options.get("return_tensors")
    if return_tensors is not None and return_tensors != "np":
        return None
    is_batched = isinstance(text, (list, tuple))
    texts = list(text) if is_batched else [text]
    if not texts or not all(isinstance(t, str) for t in texts) or not all(map(_utf8, texts)):
        return None  # (HF's binding refuses a text with a surrogate: transformers' path raises its error)
    PaddingStrategy, TruncationStrategy, BatchEncoding = _transformers_types()
    max_length = options.get("max_length")
    verbose = options.get("verbose", True)
    add_special_tokens = options.get("add_special_tokens", True)
    # transformers' own setter: the same backend settings, and the same errors.
    tok.set_truncation_and_padding(
        padding_strategy=options.get("padding_strategy", PaddingStrategy.DO_NOT_PAD),
        truncation_strategy=options.get("truncation_strategy", TruncationStrategy.DO_NOT_TRUNCATE),
        max_length=max_length, stride=options.get("stride", 0),
        pad_to_multiple_of=options.get("pad_to_multiple_of"), padding_side=options.get("padding_side"),
    )
    split = options.get("split_special_tokens")
    split = tok.split_special_tokens if split is None else split
    if backend.encode_special_tokens != split:
        backend.encode_special_tokens = split
    layout = backend.layout(add_special_tokens)
    if layout is None:
        return None
    truncation, padding = backend.truncation, backend.padding
    try:
        length = backend.truncation_length(truncation, add_special_tokens)
    except _Fallback:
        return None
    ws = backend._ws
    policy = {"disallowed_special": ()} if split else {"allowed_special": "all"}

    return_token_type_ids = options.get("return_token_type_ids")
    if return_token_type_ids is None:
        return_token_type_ids = "token_type_ids" in tok.model_input_names
    return_attention_mask = options.get("return_attention_mask")
    if return_attention_mask is None:
        return_attention_mask = "attention_mask" in tok.model_input_names
    wanted = [("input_ids", True), ("token_type_ids", return_token_type_ids),
              ("attention_mask", return_attention_mask),
              ("special_tokens_mask", options.get("return_special_tokens_mask", False)),
              ("length", options.get("return_length", False))]
    keys = [key for key, on in wanted if on]

    if return_tensors is not None:
        data = _numpy_rows(ws, texts, policy, layout, length, truncation, padding, keys)
    else:
        data = None
    if data is None:
        if len(texts) == 1:  # a batch call's threads cost more than one short text
            rows = [ws._tok.encode(texts[0], **policy)]
        else:
            rows = ws._tok.encode_batch(texts, **policy)
        data = _list_rows(rows, layout, length, truncation, padding, keys)
    for ids in data["input_ids"]:
        tok._eventual_warn_about_too_long_sequence(ids, max_length, verbose)
    encodings = _LazyEncodings(backend, texts, add_special_tokens, truncation, padding, split)
    if not is_batched and return_tensors is None:
        data = {key: (value[0] if value and isinstance(value[0], list) else value) for key, value in data.items()}
        return BatchEncoding(data, encodings, n_sequences=1)
    return BatchEncoding(data, encodings, tensor_type=return_tensors, n_sequences=1)


def _utf8(text: str) -> bool:
    """Whether ``text`` has no surrogate (HF's binding takes it)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _transformers_types():
    """transformers' classes the fast path uses (imported once, on the first call)."""
    from transformers.tokenization_utils_base import BatchEncoding, PaddingStrategy, TruncationStrategy

    return PaddingStrategy, TruncationStrategy, BatchEncoding


def _pad_length(lengths, padding: Optional[dict]) -> Optional[int]:
    if not padding:
        return None
    length = padding["length"]
    if length is None:
        length = max(lengths)
    return round_up(length, padding.get("pad_to_multiple_of"))


def _list_rows(rows, layout: _Layout, length, truncation, padding, keys) -> dict[str, list]:
    """The columns transformers' ``_convert_encoding`` gives, as lists, from the texts' ids."""
    prefix, suffix = layout.prefix, layout.suffix
    left_cut = truncation is not None and truncation["direction"] == "left"
    cut = []
    for ids in rows:
        if length is not None and len(ids) > length:
            ids = ids[len(ids) - length:] if left_cut else ids[:length]
        cut.append(ids)
    sizes = [len(prefix) + len(ids) + len(suffix) for ids in cut]
    target = _pad_length(sizes, padding)
    left_pad = padding is not None and padding["direction"] == "left"
    data: dict[str, list] = {key: [] for key in keys}
    for ids, size in zip(cut, sizes):
        missing = 0 if target is None else max(target - size, 0)
        row = prefix + ids + suffix if prefix or suffix else ids
        for key in keys:
            if key == "length":
                data[key].append(size + missing)
                continue
            if key == "input_ids":
                values, fill = row, padding["pad_id"] if missing else 0
            elif key == "attention_mask":
                values, fill = [1] * size, 0
            elif key == "token_type_ids":
                values = layout.prefix_types + [layout.type_id] * len(ids) + layout.suffix_types
                fill = padding["pad_type_id"] if missing else 0
            else:  # special_tokens_mask
                values, fill = [1] * len(prefix) + [0] * len(ids) + [1] * len(suffix), 1
            if missing:
                values = [fill] * missing + values if left_pad else values + [fill] * missing
            data[key].append(values)
    return data


def _numpy_rows(ws, texts, policy, layout: _Layout, length, truncation, padding, keys):
    """The columns as int64 arrays built from wordsplit's flat ids (no int object per token),
    or None when the rows differ in length (transformers then makes a ragged array)."""
    import numpy as np

    flat, bounds = ws._tok.encode_batch_flat(texts, **policy)
    flat = np.frombuffer(flat, dtype=np.uint32)
    bounds = np.frombuffer(bounds, dtype=np.uint64).astype(np.int64)
    starts, sizes = bounds[:-1], np.diff(bounds)
    if length is not None:
        kept = np.minimum(sizes, length)
        if truncation["direction"] == "left":
            starts = starts + sizes - kept
        sizes = kept
    n_prefix, n_suffix = len(layout.prefix), len(layout.suffix)
    totals = sizes + n_prefix + n_suffix
    target = _pad_length(totals.tolist(), padding)
    final = totals if target is None else np.maximum(totals, target)
    width = int(final.max())
    if int(final.min()) != width:
        return None  # rows of different lengths: transformers makes a ragged array of them
    left_pad = padding is not None and padding["direction"] == "left"
    pad_id = padding["pad_id"] if padding else 0
    ids = np.full((len(texts), width), pad_id, dtype=np.int64)
    places = (width - totals) if left_pad else np.zeros_like(totals)
    prefix = np.asarray(layout.prefix, dtype=np.int64)
    suffix = np.asarray(layout.suffix, dtype=np.int64)
    for row, (place, start, size) in enumerate(zip(places.tolist(), starts.tolist(), sizes.tolist())):
        ids[row, place:place + n_prefix] = prefix
        ids[row, place + n_prefix:place + n_prefix + size] = flat[start:start + size]
        ids[row, place + n_prefix + size:place + n_prefix + size + n_suffix] = suffix
    columns = np.arange(width)
    lo = places[:, None]
    inside = (columns >= lo) & (columns < lo + totals[:, None])
    data = {"input_ids": ids}
    for key in keys:
        if key == "token_type_ids":
            types = np.full((len(texts), width), padding["pad_type_id"] if padding else 0, dtype=np.int64)
            offset = columns - lo
            text_part = inside & (offset >= n_prefix) & (offset < n_prefix + sizes[:, None])
            types[text_part] = layout.type_id
            for i, value in enumerate(layout.prefix_types):
                types[inside & (offset == i)] = value
            for i, value in enumerate(layout.suffix_types):
                types[inside & (offset == n_prefix + sizes[:, None] + i)] = value
            data[key] = types
        elif key == "attention_mask":
            data[key] = inside.astype(np.int64)
        elif key == "special_tokens_mask":
            offset = columns - lo
            text_part = inside & (offset >= n_prefix) & (offset < n_prefix + sizes[:, None])
            data[key] = (~text_part).astype(np.int64)
        elif key == "length":
            data[key] = np.full(len(texts), width, dtype=np.int64)
    return data


class _LazyEncodings(_SequenceABC):
    """The ``BatchEncoding.encodings`` of a fast-path call: HF-style :class:`Encoding` objects,
    made from the texts (by :meth:`Backend.encode_full`, with the call's settings) the first
    time one is asked for."""

    def __init__(self, backend: Backend, texts, add_special_tokens, truncation, padding, split) -> None:
        self._args = (texts, False, add_special_tokens, truncation, padding, split)
        self._backend = backend
        self._made: Optional[list[Encoding]] = None

    def _all(self) -> list[Encoding]:
        if self._made is None:
            self._made = self._backend.encode_full(*self._args)
        return self._made

    def __len__(self) -> int:
        return len(self._args[0])

    def __getitem__(self, index):
        return self._all()[index]

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, _SequenceABC) else NotImplemented

    def __reduce__(self):
        return list, (self._all(),)


def batch_rows(token_ids) -> Optional[list]:
    """The rows of a batch of id sequences as transformers' ``decode`` would see them (a list
    of lists, or a 2-D numpy array), or None for anything else (a single sequence, tensors)."""
    if type(token_ids) in (list, tuple):
        if token_ids and all(type(ids) in (list, tuple) for ids in token_ids):
            return token_ids
        return None
    if type(token_ids).__module__ == "numpy" and getattr(token_ids, "ndim", 0) == 2:
        return list(token_ids)
    return None


def clean_up(tok, text: str, clean: Optional[bool]) -> str:
    """transformers' ``TokenizersBackend._decode`` after the backend's decode."""
    clean = clean if clean is not None else tok.clean_up_tokenization_spaces
    if not clean:
        return text
    if (type(tok.backend_tokenizer.model).__name__ == "BPE"
            and not tok.clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output):
        return tok._decode([], clean_up_tokenization_spaces=True) + text  # logs transformers' warning once
    return tok.clean_up_tokenization(text)
