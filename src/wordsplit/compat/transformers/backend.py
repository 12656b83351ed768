"""The backend of an accelerated tokenizer: what transformers calls on ``tok._tokenizer`` (HF
tokenizers' ``Tokenizer`` methods), answered on wordsplit where it is exact and by the HF
tokenizer it holds everywhere else.

>>> import tokenizers
>>> from wordsplit import load_vocab
>>> from wordsplit.training.save import tokenizer_json
>>> backend = Backend(tokenizers.Tokenizer.from_str(tokenizer_json(load_vocab("gpt2"))))
>>> backend.accelerated, [e.ids for e in backend.encode_batch(["hello world"])]
(True, [[31373, 995]])
>>> backend.enable_padding(length=4, pad_id=0)
>>> backend.encode("hello world").attention_mask, backend.padding["length"]
([1, 1, 0, 0], 4)
"""

from __future__ import annotations

import collections
import copy
import functools
import json
from typing import Any, Optional

from ...errors import EncodeInputError, UnsupportedTokenizerError, VocabFormatError
from ...postprocess import Parts, default_process
from ..tokenizers.encoding import Encoding
from ..tokenizers.padding import PaddingParams
from ..tokenizers.truncation import TruncationError, TruncationParams

__all__ = ["Backend"]


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
        if processor is None:
            parts = default_process(probe, None)
        else:
            parts = processor.process(probe, None, add_special_tokens)
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
        from ..tokenizers import Tokenizer

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

    def truncation_length(self, truncation: Optional[dict], add_special_tokens: bool) -> Optional[int]:
        """The length HF truncates a single text to, before the post-processor adds its tokens;
        None without truncation, and where ``max_length`` is below what the post-processor adds
        (HF's unsigned arithmetic wraps around to a length no text reaches). Raises _Fallback
        where the fast path does not truncate as HF: ``only_second`` (an error for a text too
        long) and a stride HF may panic on."""
        if truncation is None:
            return None
        processor = self._ws._post
        added = processor.added_tokens(False) if (processor is not None and add_special_tokens) else 0
        if truncation["strategy"] == "only_second":
            raise _Fallback("truncation")
        if truncation["max_length"] < added:
            return None
        length = truncation["max_length"] - added
        if length and truncation["stride"] >= length:
            raise _Fallback("truncation")
        return length

    def encode(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True):
        """HF's ``Tokenizer.encode``."""
        item = sequence if pair is None else (sequence, pair)
        if pair is None and not is_pretokenized and not isinstance(sequence, str):
            return self._hf.encode(sequence, pair, is_pretokenized, add_special_tokens)
        return self.encode_batch([item], is_pretokenized, add_special_tokens)[0]

    def encode_batch(self, input, is_pretokenized: bool = False, add_special_tokens: bool = True):  # noqa: A002
        """HF's ``Tokenizer.encode_batch``: texts or ``(text, pair)`` tuples (pre-tokenized: lists
        of words), truncated, post-processed and padded as the tokenizer is set. Where HF fails
        (an input it refuses, a truncation error, or the stride it panics on) HF's own call
        raises its error."""
        try:
            return self.encode_full(input, is_pretokenized, add_special_tokens, self._hf.truncation,
                                    self._hf.padding, self._hf.encode_special_tokens)
        except _Fallback as why:
            self.fallbacks[why.reason] += 1
        except EncodeInputError:  # (a text HF's binding refuses: its TypeError)
            self.fallbacks["input"] += 1
        except TruncationError:
            self.fallbacks["truncation error"] += 1
        return self._hf.encode_batch(input, is_pretokenized=is_pretokenized, add_special_tokens=add_special_tokens)

    def encode_batch_fast(self, input, is_pretokenized: bool = False, add_special_tokens: bool = True):  # noqa: A002
        """HF's ``Tokenizer.encode_batch_fast``: as :meth:`encode_batch`, the texts' tokens ``""``,
        their offsets ``(0, 0)`` and word ids None."""
        try:
            return self.encode_full(input, is_pretokenized, add_special_tokens, self._hf.truncation,
                                    self._hf.padding, self._hf.encode_special_tokens, offsets=False)
        except _Fallback as why:
            self.fallbacks[why.reason] += 1
        except EncodeInputError:  # (a text HF's binding refuses: its TypeError)
            self.fallbacks["input"] += 1
        except TruncationError:
            self.fallbacks["truncation error"] += 1
        return self._hf.encode_batch_fast(input, is_pretokenized=is_pretokenized,
                                          add_special_tokens=add_special_tokens)

    def encode_full(self, items, is_pretokenized: bool, add_special_tokens: bool, truncation: Optional[dict],
                    padding: Optional[dict], encode_special_tokens: bool, offsets: bool = True) -> list[Encoding]:
        """:meth:`encode_batch` with the settings given (HF's ``truncation`` and ``padding``
        dicts). Raises _Fallback where HF must judge the input, TruncationError where HF fails."""
        ws = self._current()
        if ws is None:
            raise _Fallback("tokenizer")
        if not isinstance(items, (list, tuple)):
            raise _Fallback("input")
        pairs = [_split_item(item, is_pretokenized) for item in items]
        truncation_params = None if truncation is None else TruncationParams(**truncation)
        padding_params = None if padding is None else PaddingParams(**padding)
        saved = ws.encode_special_tokens
        ws.encode_special_tokens = encode_special_tokens
        try:
            parts = ws.encode_parts(pairs, is_pretokenized, add_special_tokens, truncation_params, padding_params,
                                    offsets=offsets, split=False)
        finally:
            ws.encode_special_tokens = saved
        return [Encoding(p) for p in parts]

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
        return [ws._decode_kept(row.tolist()) for row in rows]

    def _keep(self, skip_special_tokens: bool):
        """A boolean array over the ids: the ids HF's decode keeps (those the vocabulary has,
        and not the special tokens when they are skipped)."""
        import numpy as np

        key = ("keep", skip_special_tokens)
        keep = self._layouts.get(key)
        if keep is None:
            ws = self._ws
            if ws._vocab_strings:  # (every id HF has a token string for)
                strings = ws._token_strings()
                keep = np.fromiter((s is not None for s in strings), dtype=bool, count=len(strings))
            else:  # (the strings of a byte-level vocabulary are only built when asked for)
                table = ws._vocab.token_bytes
                keep = np.fromiter((b is not None for b in table), dtype=bool, count=len(table))
                keep[list(ws._literals.values())] = True
            if skip_special_tokens:
                keep[list(self._ws._special_ids)] = False
            self._layouts[key] = keep
        return keep


@functools.lru_cache(maxsize=4)
def _vocab_of(text: str):
    """The wordsplit vocabulary of a tokenizer.json (the last few kept: accelerating several
    copies of one tokenizer reads its file once; a Vocab is immutable)."""
    from ..tokenizers import read_vocab

    return read_vocab(text.encode("utf-8"), source="tokenizer.json", name="tokenizer")


class _Fallback(Exception):
    """Raised inside the backend where HF's own code must answer the call; ``reason`` is the
    key it is counted under in :attr:`Backend.fallbacks`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
