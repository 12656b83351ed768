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
does (:class:`Encoding`), and its ``decode`` is wordsplit's. The copy's ``_encode_plus`` has a
fast path for the common call (texts, no offsets or overflow asked for) that builds the arrays
directly from wordsplit's ids, without an object per token. Whatever wordsplit cannot do
exactly runs on the original HF code, decided when the copy is made (a file wordsplit does not
load: :attr:`Backend.fallback_reason`) and on each call (a pair with truncation, a RoBERTa or
BERT post-processor with truncation, an input HF would refuse).

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

import collections
import copy
import functools
import json
import operator
from collections.abc import Sequence as _SequenceABC
from typing import Any, Optional, Sequence

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..postprocess import (ByteLevelProcessor, Parts, SequenceProcessor, TemplateProcessor, default_process)

__all__ = ["Backend", "DecodeStream", "Encoding", "accelerate", "disable", "enable", "is_accelerated", "original"]


# -- HF's Encoding --------------------------------------------------------------------------


class Encoding:
    """HF tokenizers' ``Encoding``, field for field: what :meth:`Backend.encode_batch` returns.

    The fields are HF's, and so are the operations (:meth:`truncate` with stride and
    overflowing parts, :meth:`pad`, and the char/word/token maps transformers'
    ``BatchEncoding`` asks), including HF's ``sequence_ranges``: a map of each sequence to its
    tokens, empty for a single text the post-processor did not number.

    >>> enc = Encoding([5, 6, 7], ["a", "b", "c"], [(0, 1), (1, 2), (2, 3)], [0, 1, 2])
    >>> enc.truncate(2, stride=1)
    >>> enc.ids, [o.ids for o in enc.overflowing]
    ([5, 6], [[6, 7]])
    >>> enc.pad(4, pad_id=0, pad_token="<pad>", direction="left")
    >>> enc.ids, enc.attention_mask, enc.char_to_token(1)
    ([0, 0, 5, 6], [0, 0, 1, 1], 3)
    """

    __slots__ = ("ids", "tokens", "offsets", "word_ids", "type_ids", "special_tokens_mask", "attention_mask",
                 "overflowing", "sequence_ranges")

    def __init__(self, ids, tokens, offsets, word_ids, type_ids=None, special_tokens_mask=None, attention_mask=None,
                 overflowing=None, sequence_ranges=None) -> None:
        n = len(ids)
        self.ids = list(ids)
        self.tokens = list(tokens)
        self.offsets = list(offsets)
        self.word_ids = list(word_ids)
        self.type_ids = [0] * n if type_ids is None else list(type_ids)
        self.special_tokens_mask = [0] * n if special_tokens_mask is None else list(special_tokens_mask)
        self.attention_mask = [1] * n if attention_mask is None else list(attention_mask)
        self.overflowing: list[Encoding] = [] if overflowing is None else overflowing
        #: sequence id -> (start, stop) of its tokens; empty: one sequence covering everything.
        self.sequence_ranges: dict[int, tuple[int, int]] = {} if sequence_ranges is None else sequence_ranges

    @classmethod
    def from_parts(cls, parts: Parts, *, numbered: bool = True) -> "Encoding":
        """The encoding of post-processed :class:`~wordsplit.postprocess.Parts`; ``numbered``:
        the post-processor set the sequence ids (HF leaves a single text without a
        post-processor unnumbered)."""
        ranges: dict[int, tuple[int, int]] = {}
        if numbered:
            for sequence in sorted(parts.sequences):
                where = [i for i, s in enumerate(parts.sequence_ids) if s == sequence]
                ranges[sequence] = (where[0], where[-1] + 1) if where else (0, 0)
        return cls(parts.ids, parts.tokens, parts.offsets, parts.word_ids, parts.type_ids,
                   parts.special_tokens_mask, parts.attention_mask, [], ranges)

    def to_parts(self) -> Parts:
        """The fields as :class:`~wordsplit.postprocess.Parts`, for a post-processor."""
        return Parts(list(self.ids), list(self.tokens), list(self.offsets), list(self.word_ids), list(self.type_ids),
                     list(self.special_tokens_mask), list(self.attention_mask), [0] * len(self.ids), {0})

    # -- HF's read API ----------------------------------------------------------------------

    words = property(lambda self: self.word_ids, doc="HF's deprecated name of :attr:`word_ids`.")

    @property
    def n_sequences(self) -> int:
        return len(self.sequence_ranges) or 1

    def _range(self, sequence: int) -> tuple[int, int]:
        return self.sequence_ranges.get(sequence, (0, len(self.ids)))

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        out: list[Optional[int]] = [None] * len(self.ids)
        for sequence in range(self.n_sequences):
            start, stop = self._range(sequence)
            out[start:stop] = [sequence] * (stop - start)
        return out

    def __len__(self) -> int:
        return len(self.ids)

    def token_to_sequence(self, token_index: int) -> Optional[int]:
        if token_index > len(self.ids):  # HF's bound (not >=)
            return None
        if not self.sequence_ranges:
            return 0
        return next((s for s, (start, stop) in self.sequence_ranges.items() if start <= token_index < stop), None)

    def token_to_chars(self, token_index: int) -> Optional[tuple[int, int]]:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self.ids):
            return None
        return self.offsets[token_index]

    def token_to_word(self, token_index: int) -> Optional[int]:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self.ids):
            return None
        return self.word_ids[token_index]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> Optional[tuple[int, int]]:
        start, stop = self._range(sequence_index)
        if start > len(self.word_ids) or stop > len(self.word_ids):
            return None
        first = last = None
        for i, word in enumerate(self.word_ids[start:stop]):
            if word is not None and word > word_index:
                break
            if word == word_index:
                first = i if first is None else first
                last = i + 1
        return None if first is None else (start + first, start + last)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> Optional[tuple[int, int]]:
        tokens = self.word_to_tokens(word_index, sequence_index)
        if tokens is None or tokens[1] == 0:
            return None
        return self.offsets[tokens[0]][0], self.offsets[tokens[1] - 1][1]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        start, stop = self._range(sequence_index)
        if start > len(self.offsets) or stop > len(self.offsets):
            return None
        for i, (begin, end) in enumerate(self.offsets[start:stop]):
            if begin <= char_pos < end:
                return start + i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    # -- HF's operations --------------------------------------------------------------------

    def _slice(self, start: int, stop: int) -> "Encoding":
        return Encoding(self.ids[start:stop], self.tokens[start:stop], self.offsets[start:stop],
                        self.word_ids[start:stop], self.type_ids[start:stop], self.special_tokens_mask[start:stop],
                        self.attention_mask[start:stop])

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """HF's ``Encoding.truncate``: keep ``max_length`` tokens (the first, or the last with
        ``direction="left"``); the rest become :attr:`overflowing` windows that overlap the
        previous one by ``stride`` tokens."""
        n = len(self.ids)
        if max_length >= n:
            return
        if max_length == 0:
            whole = Encoding.__new__(Encoding)
            for name in self.__slots__:
                setattr(whole, name, getattr(self, name))
            self.__init__([], [], [], [], overflowing=[whole])
            return
        if stride >= max_length:
            raise UnsupportedTokenizerError(f"stride {stride} must be below the truncation length {max_length}")
        step = max_length - stride
        windows = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                windows.append((start, stop))
                if stop == n:
                    break
        else:
            for last in range(n - 1, -1, -step):
                start = max(last + 1 - max_length, 0)
                windows.append((start, last + 1))
                if start == 0:
                    break
        first = self._slice(*windows[0])
        first.overflowing = [self._slice(*window) for window in windows[1:]]
        for name in self.__slots__:
            setattr(self, name, getattr(first, name))

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """HF's ``Encoding.pad``: the overflowing parts first, then this one if shorter (left
        padding moves the sequence ranges with the tokens)."""
        for part in self.overflowing:
            part.pad(length, direction, pad_id, pad_type_id, pad_token)
        missing = length - len(self.ids)
        if missing <= 0:
            return
        fills = (("ids", pad_id), ("type_ids", pad_type_id), ("tokens", pad_token), ("word_ids", None),
                 ("attention_mask", 0), ("special_tokens_mask", 1), ("offsets", (0, 0)))
        for name, value in fills:
            values = getattr(self, name)
            setattr(self, name, [value] * missing + values if direction == "left" else values + [value] * missing)
        if direction == "left":
            self.sequence_ranges = {s: (start + missing, stop + missing)
                                    for s, (start, stop) in self.sequence_ranges.items()}

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask, "
                "special_tokens_mask, overflowing])")


def pad_encodings(encodings: list[Encoding], padding: Optional[dict]) -> None:
    """HF's ``pad_encodings``: every encoding to the padding's ``length`` (None: the longest),
    rounded up to ``pad_to_multiple_of``."""
    if not padding or not encodings:
        return
    length = padding["length"]
    if length is None:
        length = max(len(e) for e in encodings)
    length = _round_up(length, padding.get("pad_to_multiple_of"))
    for encoding in encodings:
        encoding.pad(length, padding["direction"], padding["pad_id"], padding["pad_type_id"], padding["pad_token"])


def _round_up(length: int, multiple: Optional[int]) -> int:
    if multiple and length % multiple:
        length += multiple - length % multiple
    return length


# -- the backend --------------------------------------------------------------------------

# Components whose state decides the ids; read each call (a few microseconds) so that a
# change made to the HF backend's components in place is seen and wordsplit rebuilt.
_COMPONENTS = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
# Setting these on the backend (as transformers does) changes what wordsplit must load.
_FORWARDED_SETTERS = frozenset({*_COMPONENTS, "model"})


class _Layout:
    """What the post-processor puts around one text (found by running it on a one-token
    text): ``prefix`` and ``suffix`` ids and type ids, and the text's type id."""

    __slots__ = ("prefix", "prefix_types", "suffix", "suffix_types", "type_id", "added")

    def __init__(self, processor, add_special_tokens: bool) -> None:
        probe = Parts.of([-1], ["x"], [(0, 1)], [0], type_id=0)
        parts = default_process([probe]) if processor is None else processor.process([probe], add_special_tokens)
        at = parts.ids.index(-1)
        self.prefix, self.prefix_types = parts.ids[:at], parts.type_ids[:at]
        self.suffix, self.suffix_types = parts.ids[at + 1:], parts.type_ids[at + 1:]
        self.type_id = parts.type_ids[at]
        self.added = len(parts.ids) - 1


class Backend:
    """The backend of an accelerated tokenizer: HF ``tokenizers.Tokenizer``'s methods, on
    wordsplit where it is exact, else on the HF tokenizer it holds (:attr:`hf`).

    Padding and truncation settings, added tokens and the component objects live on the HF
    tokenizer (transformers sets them there, and HF checks them); wordsplit's tokenizer is
    built from the HF tokenizer's current ``tokenizer.json``, again whenever a component or
    the added tokens change. Anything not defined here is the HF tokenizer's attribute.

    Args:
        hf: the HF ``tokenizers.Tokenizer`` (used and changed by this backend alone).
    """

    def __init__(self, hf) -> None:
        object.__setattr__(self, "_hf", hf)
        object.__setattr__(self, "_ws", None)
        object.__setattr__(self, "_state", None)
        object.__setattr__(self, "_layouts", {})
        object.__setattr__(self, "fallback_reason", None)
        object.__setattr__(self, "fallbacks", collections.Counter())
        self._refresh()

    # -- state --------------------------------------------------------------------------

    @property
    def hf(self):
        """The HF ``tokenizers.Tokenizer`` this backend falls back to."""
        return self._hf

    def _fingerprint(self) -> tuple:
        hf = self._hf
        states = tuple(None if c is None else c.__getstate__() for c in (getattr(hf, n) for n in _COMPONENTS))
        return states + (hf.get_vocab_size(True), type(hf.model).__name__)

    def _refresh(self) -> None:
        """Rebuild wordsplit's tokenizer when the HF tokenizer changed since the last build."""
        state = self._fingerprint()
        if state == self._state:
            return
        from .tokenizers import Tokenizer

        text = self._hf.to_str()
        spec = json.loads(text)
        if spec.get("padding") is not None or spec.get("truncation") is not None:
            spec["padding"] = spec["truncation"] = None  # the backend pads and truncates itself
            text = json.dumps(spec)
        ws, reason = None, None
        model = spec.get("model") or {}
        if model.get("dropout") not in (None, 0, 0.0):
            reason = "BPE dropout is random: HF's sampling cannot be reproduced"
        else:
            try:
                ws = Tokenizer(spec, _vocab_of(text), json_text=text)
            except (UnsupportedTokenizerError, VocabFormatError) as error:
                reason = str(error)
        object.__setattr__(self, "_ws", ws)
        object.__setattr__(self, "_native", ws is not None and ws._byte_level_decoder and _native_decode(ws))
        object.__setattr__(self, "fallback_reason", reason)
        object.__setattr__(self, "_layouts", {})
        object.__setattr__(self, "_state", state)

    def _current(self):
        """wordsplit's compat tokenizer for the HF tokenizer as it is now, or None."""
        self._refresh()
        return self._ws

    @property
    def accelerated(self) -> bool:
        """Whether wordsplit encodes for this tokenizer (else every call is HF's)."""
        return self._current() is not None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hf, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FORWARDED_SETTERS or name == "encode_special_tokens":
            setattr(self._hf, name, value)
        else:
            object.__setattr__(self, name, value)

    def add_tokens(self, tokens) -> int:
        added = self._hf.add_tokens(tokens)
        object.__setattr__(self, "_state", None)  # a token's flags may change the vocabulary's size does not
        return added

    def add_special_tokens(self, tokens) -> int:
        added = self._hf.add_special_tokens(tokens)
        object.__setattr__(self, "_state", None)
        return added

    def __reduce__(self):
        return Backend, (self._hf,)

    def __deepcopy__(self, memo) -> "Backend":
        return Backend(copy.deepcopy(self._hf, memo))

    def __repr__(self) -> str:
        return f"Backend(accelerated={self.accelerated}, hf={self._hf!r})"

    # -- encode -------------------------------------------------------------------------

    def layout(self, add_special_tokens: bool) -> Optional[_Layout]:
        """The post-processor's layout of one text, or None when wordsplit does not encode."""
        ws = self._current()
        if ws is None:
            return None
        layout = self._layouts.get(add_special_tokens)
        if layout is None:
            layout = self._layouts[add_special_tokens] = _Layout(ws._post, add_special_tokens)
        return layout

    def truncation_length(self, truncation: Optional[dict], pair: bool, add_special_tokens: bool):
        """HF's length to truncate the text(s) to, before the post-processor adds its tokens;
        None without truncation. Raises _Fallback where wordsplit does not truncate as HF."""
        if truncation is None:
            return None
        ws = self._ws
        if pair:
            raise _Fallback("truncation of a pair")  # its strategies and overflow cross product: HF's
        if truncation["strategy"] == "only_second":
            raise _Fallback("input")  # of a single text: HF's error
        processor = ws._post
        if not _truncates_like_hf(processor):
            raise _Fallback("truncation with this post-processor")
        added = processor.added_tokens(pair) if (processor is not None and add_special_tokens) else 0
        length = truncation["max_length"] - added
        if length < 0 or (length and truncation["stride"] >= length):
            raise _Fallback("truncation length")  # HF's arithmetic underflows or asserts here
        return length

    def encode(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True):
        """HF's ``Tokenizer.encode``."""
        item = sequence if pair is None else (sequence, pair)
        if pair is None and not is_pretokenized and not isinstance(sequence, str):
            return self._hf.encode(sequence, pair, is_pretokenized, add_special_tokens)
        return self.encode_batch([item], is_pretokenized, add_special_tokens)[0]

    def encode_batch(self, input, is_pretokenized: bool = False, add_special_tokens: bool = True):  # noqa: A002
        """HF's ``Tokenizer.encode_batch``: texts or ``(text, pair)`` tuples (pre-tokenized: lists
        of words), truncated, post-processed and padded as the tokenizer is set."""
        try:
            return self.encode_full(input, is_pretokenized, add_special_tokens, self._hf.truncation,
                                    self._hf.padding, self._hf.encode_special_tokens)
        except _Fallback as why:
            self.fallbacks[why.reason] += 1
            return self._hf.encode_batch(input, is_pretokenized=is_pretokenized, add_special_tokens=add_special_tokens)

    encode_batch_fast = encode_batch

    def encode_full(self, items, is_pretokenized: bool, add_special_tokens: bool, truncation: Optional[dict],
                    padding: Optional[dict], encode_special_tokens: bool) -> list[Encoding]:
        """:meth:`encode_batch` with the settings given. Raises _Fallback where HF must run."""
        ws = self._current()
        if ws is None:
            raise _Fallback("tokenizer")
        if not isinstance(items, (list, tuple)):
            raise _Fallback("input")
        pairs = [_split_item(item, is_pretokenized) for item in items]
        lengths = {}
        out = []
        saved = ws.encode_special_tokens
        ws.encode_special_tokens = encode_special_tokens
        try:
            for first, second in pairs:
                is_pair = second is not None
                if is_pair not in lengths:
                    lengths[is_pair] = self.truncation_length(truncation, is_pair, add_special_tokens)
                out.append(self._encode_one(ws, first, second, is_pretokenized, add_special_tokens, lengths[is_pair],
                                            truncation))
        finally:
            ws.encode_special_tokens = saved
        pad_encodings(out, padding)
        return out

    def _encode_one(self, ws, first, second, is_pretokenized, add_special_tokens, length, truncation) -> Encoding:
        sequences = [ws._sequence(first, is_pretokenized, type_id=0)]
        if second is not None:
            sequences.append(ws._sequence(second, is_pretokenized, type_id=1))
        processor = ws._post
        if length is None:
            parts = ws._process(sequences, add_special_tokens)
            return Encoding.from_parts(parts, numbered=processor is not None or second is not None)
        model = Encoding.from_parts(sequences[0], numbered=False)
        model.truncate(length, truncation["stride"], truncation["direction"])
        pieces = [model, *model.overflowing]
        done = []
        for piece in pieces:
            parts = ws._process([piece.to_parts()], add_special_tokens)
            done.append(Encoding.from_parts(parts, numbered=processor is not None))
        done[0].overflowing = done[1:]
        return done[0]

    # -- decode -------------------------------------------------------------------------

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """HF's ``Tokenizer.decode`` (ids the vocabulary does not have are left out)."""
        texts = self._decode_rows([ids], skip_special_tokens)
        if texts is None:
            self.fallbacks["decode"] += 1
            return self._hf.decode(ids, skip_special_tokens=skip_special_tokens)
        return texts[0]

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        """HF's ``Tokenizer.decode_batch``, on wordsplit's native threads."""
        texts = self._decode_rows(sequences, skip_special_tokens)
        if texts is None:
            self.fallbacks["decode"] += 1
            return self._hf.decode_batch(sequences, skip_special_tokens=skip_special_tokens)
        return texts

    def _decode_rows(self, sequences, skip_special_tokens: bool) -> Optional[list[str]]:
        """The texts of id sequences, or None where HF must decode (no wordsplit tokenizer, or
        an item that is not a 1-D sequence of ints: HF raises its own error)."""
        import numpy as np

        ws = self._current()
        if ws is None or isinstance(sequences, (str, bytes)):
            return None
        keep = self._keep(skip_special_tokens)
        rows = []
        for ids in sequences:
            if isinstance(ids, (str, bytes)):
                return None
            try:
                row = np.asarray(ids)
            except (TypeError, ValueError):
                return None
            if row.ndim != 1 or (row.size and row.dtype.kind not in "iu"):
                return None
            if not row.size:
                row = row.astype(np.int64)  # [] reads as a float array
            else:
                if row.min() < 0 or row.max() >= len(keep):
                    row = row[(row >= 0) & (row < len(keep))]  # HF leaves out ids it does not have
                row = row[keep[row]]
            rows.append(row)
        if self._native:
            return ws._tok.decode_batch(rows)
        table, strings = ws._decode_bytes_table(), ws._token_strings()
        if not ws._byte_level_decoder:
            return [" ".join(strings[i] for i in row.tolist()) for row in rows]
        return [b"".join([table[i] for i in row.tolist()]).decode("utf-8", "replace") for row in rows]

    def _keep(self, skip_special_tokens: bool):
        """A boolean array over the ids: the ids HF's decode keeps (those the vocabulary has,
        and not the special tokens when they are skipped)."""
        import numpy as np

        key = ("keep", skip_special_tokens)
        keep = self._layouts.get(key)
        if keep is None:
            table = self._ws._vocab.token_bytes
            keep = np.fromiter((b is not None for b in table), dtype=bool, count=len(table))
            keep[list(self._ws._literals.values())] = True
            if skip_special_tokens:
                keep[list(self._ws._special_ids)] = False
            self._layouts[key] = keep
        return keep


@functools.lru_cache(maxsize=4)
def _vocab_of(text: str):
    """The wordsplit vocabulary of a tokenizer.json (the last few kept: accelerating several
    copies of one tokenizer reads its file once; a Vocab is immutable)."""
    from ..formats.hf import read_hf_tokenizer_json

    return read_hf_tokenizer_json(text.encode("utf-8"), source="tokenizer.json", name="tokenizer")


class _Fallback(Exception):
    """Raised inside the backend where HF's own code must answer the call; ``reason`` is the
    key it is counted under in :attr:`Backend.fallbacks`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _truncates_like_hf(processor) -> bool:
    """Whether the post-processor treats truncated, overflowing parts as this module does:
    none, ByteLevel, or a template with one text of type id 0 (after ByteLevel steps)."""
    if processor is None or isinstance(processor, ByteLevelProcessor):
        return True
    if isinstance(processor, SequenceProcessor):
        return all(_truncates_like_hf(p) for p in processor.processors)
    if isinstance(processor, TemplateProcessor):
        texts = [piece for piece in processor.single if piece[0] == "sequence"]
        return len(texts) == 1 and texts[0][2] == 0
    return False


def _split_item(item, is_pretokenized: bool):
    """``(first, second or None)`` of one batch item, or _Fallback for an input HF must judge."""
    if is_pretokenized:
        if isinstance(item, tuple) and len(item) == 2 and all(_is_words(x) for x in item):
            return item
        if _is_words(item):
            return item, None
        raise _Fallback("input")
    if isinstance(item, str):
        return item, None
    if isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return item[0], item[1]
    raise _Fallback("input")


def _is_words(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(word, str) for word in value)


def _native_decode(ws) -> bool:
    """Whether wordsplit's decode gives HF's bytes for every added token: HF's ByteLevel
    decoder maps an added token's text through the byte-level alphabet when it can (a "Ġ" in
    it becomes a space), where wordsplit's gives the text's UTF-8."""
    table = ws._decode_bytes_table()
    return all(table[i] == text.encode("utf-8") for text, i in ws._literals.items())


# -- the accelerated tokenizer ------------------------------------------------------------

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
        wordsplit's ids where :func:`_fast_encode` can, else transformers' own code on the
        accelerated backend."""
        fast = _fast_encode(self, text, text_pair, options)
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
        batch = _batch_rows(token_ids)
        if batch is None:
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        # A batch: decoded at once on native threads, then cleaned up as _decode does.
        texts = backend._decode_rows(batch, skip_special_tokens)
        if texts is None:
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        clean = kwargs.get("clean_up_tokenization_spaces")
        return [_clean_up(self, text, clean) for text in texts]


def _batch_rows(token_ids) -> Optional[list]:
    """The rows of a batch of id sequences as transformers' ``decode`` would see them (a list
    of lists, or a 2-D numpy array), or None for anything else (a single sequence, tensors)."""
    if type(token_ids) in (list, tuple):
        if token_ids and all(type(ids) in (list, tuple) for ids in token_ids):
            return token_ids
        return None
    if type(token_ids).__module__ == "numpy" and getattr(token_ids, "ndim", 0) == 2:
        return list(token_ids)
    return None


def _clean_up(tok, text: str, clean: Optional[bool]) -> str:
    """transformers' ``TokenizersBackend._decode`` after the backend's decode."""
    clean = clean if clean is not None else tok.clean_up_tokenization_spaces
    if not clean:
        return text
    if (type(tok.backend_tokenizer.model).__name__ == "BPE"
            and not tok.clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output):
        return tok._decode([], clean_up_tokenization_spaces=True) + text  # logs transformers' warning once
    return tok.clean_up_tokenization(text)


def accelerate(tok):
    """A copy of the transformers fast tokenizer ``tok`` that encodes and decodes on wordsplit.

    The copy is an instance of ``tok``'s class (a subclass of it, of the same name) with the
    same vocabulary, settings, special tokens and chat template; every method gives what
    ``tok``'s gives. ``tok`` is not changed, nor is any other tokenizer. What wordsplit cannot
    do exactly runs on HF's code: ``tok.backend_tokenizer.fallback_reason`` says why a whole
    tokenizer does (a normalizer or model wordsplit does not load), and single calls (a pair
    with truncation...) fall back on their own.

    Raises:
        UnsupportedTokenizerError: ``tok`` is not a transformers fast tokenizer (``TokenizersBackend``).
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
    state["_tokenizer"] = Backend(state["_tokenizer"])
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


@functools.lru_cache(maxsize=1)
def _hf_decode_stream():
    """HF's ``tokenizers.decoders.DecodeStream`` (as it was before :func:`enable`)."""
    import tokenizers.decoders

    return tokenizers.decoders.DecodeStream


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


# -- the fast path of __call__ ------------------------------------------------------------

# _encode_plus options the fast path handles (the others, when set, go to transformers' path).
_FAST_OPTIONS = frozenset({
    "add_special_tokens", "padding_strategy", "truncation_strategy", "max_length", "stride", "is_split_into_words",
    "pad_to_multiple_of", "padding_side", "return_tensors", "return_token_type_ids", "return_attention_mask",
    "return_overflowing_tokens", "return_special_tokens_mask", "return_offsets_mapping", "return_length", "verbose",
    "split_special_tokens",
})


def _fast_encode(tok, text, text_pair, options: dict):
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
    if not texts or not all(isinstance(t, str) for t in texts):
        return None
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
        length = backend.truncation_length(truncation, False, add_special_tokens)
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
    return _round_up(length, padding.get("pad_to_multiple_of"))


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


# -- streaming decode ---------------------------------------------------------------------


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
        ids = self._known(id if isinstance(id, (list, tuple)) else [id])
        if not ids:
            return None
        return self._stream.step(self._backend._ws, ids)

    def _start(self, backend) -> None:
        if isinstance(backend, Backend) and backend._current() is not None:
            from .tokenizers.decoders import DecodeStream as WordsplitStream

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
