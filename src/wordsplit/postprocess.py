r"""Post-processors of HF ``tokenizer.json`` files: what ``add_special_tokens=True`` adds.

HF tokenizers runs a post-processor on the encoding of a text (or of a pair of texts) after the
model: it adds the special tokens of a template (a BOS, a separator...), sets the type ids, and
the ByteLevel ones trim leading and trailing spaces off the offsets. This module runs a
post-processor stage (:mod:`wordsplit.spec.post_processors`, read from a tokenizer.json by
:mod:`wordsplit.post_processor_programs`) as HF tokenizers 0.23 does, on
:class:`Parts` (the lists of an encoding); :mod:`wordsplit.compat.tokenizers` uses it.

Supported: ``TemplateProcessing``, ``ByteLevel``, ``RobertaProcessing``, ``BertProcessing`` and
a ``Sequence`` of them, each with the parts truncation cut off (``overflowing``) and the
sequence ranges HF keeps. Anything else raises :class:`UnsupportedTokenizerError`; a
malformed object raises :class:`VocabFormatError`. Truncation and padding are
:mod:`wordsplit.compat.tokenizers`' (they run before and after this step).

>>> processor = read_post_processor({"type": "TemplateProcessing",
...     "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
...     "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
...     "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})
>>> parts = processor.process(Parts.of([5, 6], ["a", "b"], [(0, 1), (1, 2)], [0, 1], type_id=0), None, True)
>>> parts.ids, parts.offsets, parts.special_tokens_mask, parts.word_ids, parts.sequence_ids
([1, 5, 6], [(0, 0), (0, 1), (1, 2)], [1, 0, 0], [None, 0, 1], [None, 0, 0])
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Optional

from . import spec
from .vocab import WHITE_SPACE  # Rust's char::is_whitespace, which HF's offset trimming asks

__all__ = ["Parts", "PostProcessor", "processor_for", "read_post_processor"]

_SPACE_CHAR = "\u0120"  # "Ġ": the byte-level spelling of b" "


@dataclass
class Parts:
    """The lists of one encoding, token by token, and what HF's ``Encoding`` keeps besides:
    the ``overflowing`` parts truncation cut off (each post-processed as the encoding is), and
    ``sequence_ranges``, each sequence's ``(start, stop)`` token range (empty: one sequence
    covering every token; HF's ``sequence_ids`` and ``n_sequences`` are read from it)."""

    ids: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    offsets: list[tuple[int, int]] = field(default_factory=list)
    word_ids: list[Optional[int]] = field(default_factory=list)
    type_ids: list[int] = field(default_factory=list)
    special_tokens_mask: list[int] = field(default_factory=list)
    attention_mask: list[int] = field(default_factory=list)
    overflowing: list["Parts"] = field(default_factory=list)
    sequence_ranges: dict[int, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, ids, tokens, offsets, word_ids, *, type_id: int) -> "Parts":
        """The encoding of one text, before post-processing: no token special, no sequence set."""
        n = len(ids)
        return cls(list(ids), list(tokens), list(offsets), list(word_ids), [type_id] * n, [0] * n, [1] * n)

    @classmethod
    def special(cls, ids: list[int], tokens: list[str], type_id: int) -> "Parts":
        """Special tokens a processor adds: offsets (0, 0), no word, no sequence, mask 1."""
        n = len(ids)
        return cls(list(ids), list(tokens), [(0, 0)] * n, [None] * n, [type_id] * n, [1] * n, [1] * n)

    def __len__(self) -> int:
        return len(self.ids)

    def copy(self) -> "Parts":
        """A copy of every list, and of the overflowing parts (HF's ``clone``)."""
        return Parts(*(list(getattr(self, name)) for name in _LIST_FIELDS),
                     [part.copy() for part in self.overflowing], dict(self.sequence_ranges))

    def set_sequence_id(self, sequence: int) -> None:
        """Every token is of sequence ``sequence`` (HF's ``set_sequence_id``: a range added)."""
        self.sequence_ranges[sequence] = (0, len(self.ids))

    @property
    def n_sequences(self) -> int:
        return len(self.sequence_ranges) or 1

    def sequence_range(self, sequence: int) -> tuple[int, int]:
        """The tokens of ``sequence``; every token when it has no range (as HF)."""
        return self.sequence_ranges.get(sequence, (0, len(self.ids)))

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        """Each token's sequence, as HF's ``get_sequence_ids``: ``None`` outside every range."""
        out: list[Optional[int]] = [None] * len(self.ids)
        for sequence in range(self.n_sequences):
            start, stop = self.sequence_range(sequence)
            out[start:stop] = [sequence] * (stop - start)
        return out

    def merge_with(self, pair: "Parts", growing_offsets: bool = False) -> None:
        """Append ``pair`` (HF's ``merge_with``): the overflowing parts become every pairing
        of this one's (each with ``pair``, then with each of ``pair``'s), then this one with
        each of ``pair``'s; ``growing_offsets`` moves ``pair``'s offsets past this one's end."""
        overflowing = []
        for mine in self.overflowing:
            joined = mine.copy()
            joined.merge_with(pair.copy(), growing_offsets)
            overflowing.append(joined)
            for theirs in pair.overflowing:
                joined = mine.copy()
                joined.merge_with(theirs.copy(), growing_offsets)
                overflowing.append(joined)
        for theirs in pair.overflowing:
            joined = self.copy()
            joined.merge_with(theirs.copy(), growing_offsets)
            overflowing.append(joined)
        length = len(self.ids)
        for sequence, (start, stop) in pair.sequence_ranges.items():
            self.sequence_ranges[sequence] = (length + start, length + stop)
        shift = self.offsets[-1][1] if growing_offsets and self.offsets else 0
        for name in _LIST_FIELDS:
            if name != "offsets":
                getattr(self, name).extend(getattr(pair, name))
        self.offsets.extend([(start + shift, end + shift) for start, end in pair.offsets] if shift else pair.offsets)
        self.overflowing = overflowing

    @staticmethod
    def merge(parts: list["Parts"], growing_offsets: bool = False) -> "Parts":
        """The parts appended one after another to an empty encoding (HF's ``Encoding::merge``)."""
        merged = Parts()
        for part in parts:
            merged.merge_with(part, growing_offsets)
        return merged


_LIST_FIELDS = ("ids", "tokens", "offsets", "word_ids", "type_ids", "special_tokens_mask", "attention_mask")


class PostProcessor(abc.ABC):
    """A post-processor: :meth:`process_encodings` maps the encodings of the sequences (one or
    two) to new ones, as HF's ``process_encodings``; :meth:`process` is the whole step."""

    @abc.abstractmethod
    def process_encodings(self, encodings: list[Parts], add_special_tokens: bool) -> list[Parts]:
        """The encodings after this processor (each subclass is one of HF's processors)."""

    def added_tokens(self, is_pair: bool) -> int:
        """How many tokens it adds (HF's ``num_special_tokens_to_add``)."""
        return 0

    def process(self, encoding: Parts, pair: Optional[Parts], add_special_tokens: bool) -> Parts:
        """HF's ``PostProcessor::process``: each encoding (and its overflowing parts) numbered as
        its sequence, its type ids set to that number, then processed, and the results merged."""
        encodings = [encoding] if pair is None else [encoding, pair]
        for i, part in enumerate(encodings):
            part.set_sequence_id(i)
            for overflow in part.overflowing:
                overflow.set_sequence_id(i)
            part.type_ids = [i] * len(part.ids)
        return Parts.merge(self.process_encodings(encodings, add_special_tokens))


def default_process(encoding: Parts, pair: Optional[Parts]) -> Parts:
    """What HF does without a post-processor: a single text as it is (no sequence set), a pair
    numbered 0 and 1 and merged."""
    if pair is None:
        return encoding
    merged = Parts()
    for i, part in enumerate((encoding, pair)):
        part.set_sequence_id(i)
        merged.merge_with(part)
    return merged


def trim_offsets(parts: Parts, add_prefix_space: bool) -> None:
    """HF's ByteLevel ``process_offsets``: move each offset past the token's leading spaces and
    before its trailing ones (in characters; a space in a token string is "Ġ" or white space)."""
    for i, (token, (start, end)) in enumerate(zip(parts.tokens, parts.offsets)):
        leading = _count_spaces(token)
        trailing = _count_spaces(reversed(token))
        if not leading and not trailing:
            continue
        if leading:
            is_first = i == 0 or start == 0
            if is_first and add_prefix_space and leading == 1:
                leading = 0  # the space add_prefix_space added is the token's own
            start = min(start + leading, end)
        if trailing and end >= trailing:
            end = max(end - trailing, start)
        parts.offsets[i] = (start, end)


def _count_spaces(chars) -> int:
    count = 0
    for ch in chars:
        if ch != _SPACE_CHAR and ch not in WHITE_SPACE:
            break
        count += 1
    return count


class ByteLevelProcessor(PostProcessor):
    """``ByteLevel``: trims the offsets (the overflowing parts' too) when ``trim_offsets`` is
    set; adds nothing."""

    def __init__(self, trim_offsets: bool, add_prefix_space: bool) -> None:
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    def process_encodings(self, encodings, add_special_tokens):
        if self.trim_offsets:
            _trim_all(encodings, self.add_prefix_space)
        for i, encoding in enumerate(encodings):
            encoding.set_sequence_id(i)
        return encodings


def _trim_all(encodings: list[Parts], add_prefix_space: bool) -> None:
    for encoding in encodings:
        trim_offsets(encoding, add_prefix_space)
        for overflow in encoding.overflowing:
            trim_offsets(overflow, add_prefix_space)


class TemplateProcessor(PostProcessor):
    """``TemplateProcessing``: the single or pair template, its special tokens added only with
    ``add_special_tokens``; a sequence takes the type id its template piece gives (its
    overflowing parts keep theirs, as in HF)."""

    def __init__(self, single: list, pair: list, special_tokens: dict[str, tuple[list[int], list[str]]]) -> None:
        self.single, self.pair, self.special_tokens = single, pair, special_tokens

    def added_tokens(self, is_pair: bool) -> int:
        template = self.pair if is_pair else self.single
        return sum(len(self.special_tokens[name][0]) for kind, name, _ in template if kind == "special")

    def process_encodings(self, encodings, add_special_tokens):
        template = self.pair if len(encodings) == 2 else self.single
        out = []
        for kind, name, type_id in template:
            if kind == "sequence":
                index = 0 if name == "A" else 1
                encoding = encodings[index]
                encoding.type_ids = [type_id] * len(encoding.ids)
                encoding.set_sequence_id(index)
                out.append(encoding.copy())  # a template may use a sequence twice
            elif add_special_tokens:
                ids, tokens = self.special_tokens[name]
                out.append(Parts.special(ids, tokens, type_id))
        return out


def _wrapped(encoding: Parts, head: Optional[tuple[str, int]], tail: tuple[str, int], type_ids: list[int],
             sequence: int) -> Parts:
    """``encoding`` between the special tokens ``head`` (if any) and ``tail``, as BERT's and
    RoBERTa's processors build it: its own tokens unmasked, its range without the specials."""
    before = [] if head is None else [head]
    n = len(encoding.ids)
    return Parts(
        [i for _, i in before] + encoding.ids + [tail[1]], [t for t, _ in before] + encoding.tokens + [tail[0]],
        [(0, 0)] * len(before) + encoding.offsets + [(0, 0)], [None] * len(before) + encoding.word_ids + [None],
        type_ids, [1] * len(before) + [0] * n + [1], [1] * (len(before) + n + 1), [],
        {sequence: (len(before), len(before) + n)},
    )


class RobertaProcessor(PostProcessor):
    """``RobertaProcessing``: ``<s> A </s>`` and ``<s> A </s></s> B </s>``, every type id 0."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int], trim_offsets: bool, add_prefix_space: bool) -> None:
        self.sep, self.cls = sep, cls
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def process_encodings(self, encodings, add_special_tokens):
        if self.trim_offsets:
            _trim_all(encodings, self.add_prefix_space)
        for encoding in encodings:
            encoding.type_ids = [0] * len(encoding.ids)
        if not add_special_tokens:
            return encodings
        out = []
        for i, encoding in enumerate(encodings):
            head = self.cls if i == 0 else self.sep
            types = [0] + encoding.type_ids + [0] if i == 0 else [0] * (len(encoding.ids) + 2)
            main = _wrapped(encoding, head, self.sep, types, i)
            main.overflowing = [_wrapped(part, head, self.sep, [0] * (len(part.ids) + 2), i)
                                for part in encoding.overflowing]
            out.append(main)
        return out


class BertProcessor(PostProcessor):
    """``BertProcessing``: ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``, B's part type 1."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep, self.cls = sep, cls

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process_encodings(self, encodings, add_special_tokens):
        if not add_special_tokens:
            return encodings
        out = []
        for i, encoding in enumerate(encodings):
            main = self._wrap(encoding, i)
            main.overflowing = [self._wrap(part, i) for part in encoding.overflowing]
            out.append(main)
        return out

    def _wrap(self, part: Parts, sequence: int) -> Parts:
        if sequence == 0:
            return _wrapped(part, self.cls, self.sep, [0] + part.type_ids + [0], 0)
        return _wrapped(part, None, self.sep, part.type_ids + [1], sequence)


class SequenceProcessor(PostProcessor):
    """``Sequence``: each processor in turn on the encodings the previous one gave."""

    def __init__(self, processors: list[PostProcessor]) -> None:
        self.processors = processors

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def process_encodings(self, encodings, add_special_tokens):
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings


def read_post_processor(value: Any, source: str = "tokenizer.json") -> Optional[PostProcessor]:
    """The post-processor of a ``tokenizer.json``'s ``post_processor`` value (None for null).

    Raises:
        VocabFormatError: a malformed object.
        UnsupportedTokenizerError: a processor type wordsplit does not run.
    """
    from .post_processor_programs import post_processor_stage

    return processor_for(post_processor_stage(value, source))


def processor_for(stage: spec.Stage) -> Optional[PostProcessor]:
    """The processor that runs a post-processor stage (None for :class:`NoPostProcessor`)."""
    if isinstance(stage, spec.NoPostProcessor):
        return None
    if isinstance(stage, spec.ByteLevelProcessing):
        return ByteLevelProcessor(stage.trim_offsets, stage.add_prefix_space)
    if isinstance(stage, spec.TemplateProcessing):
        specials = {special.id: (list(special.ids), list(special.tokens)) for special in stage.special_tokens}

        def items(template):
            return [("sequence" if isinstance(item, spec.TemplateSequence) else "special", item.id, item.type_id)
                    for item in template]

        return TemplateProcessor(items(stage.single), items(stage.pair), specials)
    if isinstance(stage, spec.RobertaProcessing):
        return RobertaProcessor((stage.sep, stage.sep_id), (stage.cls, stage.cls_id), stage.trim_offsets,
                                stage.add_prefix_space)
    if isinstance(stage, spec.BertProcessing):
        return BertProcessor((stage.sep, stage.sep_id), (stage.cls, stage.cls_id))
    if isinstance(stage, spec.PostProcessorSequence):
        return SequenceProcessor([processor_for(step) for step in stage.processors])
    raise TypeError(f"no post-processor runs {stage!r}")
