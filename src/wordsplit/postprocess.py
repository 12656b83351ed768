r"""Post-processors of HF ``tokenizer.json`` files: what ``add_special_tokens=True`` adds.

HF tokenizers runs a post-processor on the encoding of a text (or of a pair of texts) after the
model: it adds the special tokens of a template (a BOS, a separator...), sets the type ids, and
the ByteLevel ones trim leading and trailing spaces off the offsets. This module parses the
``post_processor`` object of a ``tokenizer.json`` and applies it, as HF tokenizers 0.23 does, to
:class:`Parts` (the lists of an encoding); :mod:`wordsplit.compat.tokenizers` uses it.

Supported: ``TemplateProcessing``, ``ByteLevel``, ``RobertaProcessing``, ``BertProcessing`` and
a ``Sequence`` of them. Anything else raises :class:`UnsupportedTokenizerError`; a malformed
object raises :class:`VocabFormatError`. It does not truncate or pad.

>>> processor = read_post_processor({"type": "TemplateProcessing",
...     "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
...     "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
...     "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})
>>> parts = processor.process([Parts.of([5, 6], ["a", "b"], [(0, 1), (1, 2)], [0, 1], type_id=0)], True)
>>> parts.ids, parts.offsets, parts.special_tokens_mask, parts.word_ids
([1, 5, 6], [(0, 0), (0, 1), (1, 2)], [1, 0, 0], [None, 0, 1])
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import UnsupportedTokenizerError, VocabFormatError

__all__ = ["Parts", "PostProcessor", "read_post_processor"]

# Rust's char::is_whitespace (Unicode White_Space), which HF's offset trimming asks of each
# character of a token string, besides "Ġ" (the byte-level space).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_SPACE_CHAR = "\u0120"  # "Ġ": the byte-level spelling of b" "


@dataclass
class Parts:
    """The lists of one encoding, token by token (HF's ``Encoding`` fields)."""

    ids: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    offsets: list[tuple[int, int]] = field(default_factory=list)
    word_ids: list[Optional[int]] = field(default_factory=list)
    type_ids: list[int] = field(default_factory=list)
    special_tokens_mask: list[int] = field(default_factory=list)
    attention_mask: list[int] = field(default_factory=list)
    sequence_ids: list[Optional[int]] = field(default_factory=list)
    #: The sequences present, even empty ones (HF's ``sequence_ranges`` keys: ``n_sequences``).
    sequences: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, ids, tokens, offsets, word_ids, *, type_id: int, sequence: int = 0) -> "Parts":
        """The encoding of one text: every token of sequence ``sequence``, not special."""
        n = len(ids)
        return cls(list(ids), list(tokens), list(offsets), list(word_ids), [type_id] * n, [0] * n, [1] * n,
                   [sequence] * n, {sequence})

    @classmethod
    def special(cls, ids: list[int], tokens: list[str], type_id: int) -> "Parts":
        """Special tokens a processor adds: offsets (0, 0), no word, no sequence, mask 1."""
        n = len(ids)
        return cls(list(ids), list(tokens), [(0, 0)] * n, [None] * n, [type_id] * n, [1] * n, [1] * n, [None] * n)

    def extend(self, other: "Parts") -> "Parts":
        for name in _LIST_FIELDS:
            getattr(self, name).extend(getattr(other, name))
        self.sequences |= other.sequences
        return self

    @staticmethod
    def merge(parts: list["Parts"]) -> "Parts":
        merged = Parts()
        for part in parts:
            merged.extend(part)
        return merged

    def set_sequence(self, sequence: int) -> None:
        self.sequence_ids = [sequence] * len(self.ids)
        self.sequences = {sequence}


_LIST_FIELDS = ("ids", "tokens", "offsets", "word_ids", "type_ids", "special_tokens_mask", "attention_mask",
                "sequence_ids")


class PostProcessor(abc.ABC):
    """A post-processor: :meth:`process_encodings` maps the encodings of the sequences (one or
    two) to new ones, as HF's ``process_encodings``; :meth:`process` is the whole step."""

    @abc.abstractmethod
    def process_encodings(self, encodings: list[Parts], add_special_tokens: bool) -> list[Parts]:
        """The encodings after this processor (each subclass is one of HF's processors)."""

    def added_tokens(self, is_pair: bool) -> int:
        """How many tokens it adds (HF's ``num_special_tokens_to_add``)."""
        return 0

    def process(self, encodings: list[Parts], add_special_tokens: bool) -> Parts:
        """Set each encoding's sequence id, process them, and join the result."""
        for i, encoding in enumerate(encodings):
            encoding.set_sequence(i)
        return Parts.merge(self.process_encodings(encodings, add_special_tokens))


def default_process(encodings: list[Parts]) -> Parts:
    """What HF does without a post-processor: the sequences joined, numbered 0 and 1."""
    for i, encoding in enumerate(encodings):
        encoding.set_sequence(i)
    return Parts.merge(encodings)


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
        if ch != _SPACE_CHAR and ch not in _WHITE_SPACE:
            break
        count += 1
    return count


class ByteLevelProcessor(PostProcessor):
    """``ByteLevel``: trims the offsets when ``trim_offsets`` is set; adds nothing."""

    def __init__(self, trim_offsets: bool, add_prefix_space: bool) -> None:
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    def process_encodings(self, encodings, add_special_tokens):
        if self.trim_offsets:
            for encoding in encodings:
                trim_offsets(encoding, self.add_prefix_space)
        for i, encoding in enumerate(encodings):
            encoding.set_sequence(i)
        return encodings


class TemplateProcessor(PostProcessor):
    """``TemplateProcessing``: the single or pair template, its special tokens added only with
    ``add_special_tokens``; a sequence takes the type id its template piece gives."""

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
                encoding.set_sequence(index)
                out.append(Parts.merge([encoding]))  # a copy: a template may use a sequence twice
            elif add_special_tokens:
                ids, tokens = self.special_tokens[name]
                out.append(Parts.special(ids, tokens, type_id))
        return [Parts.merge(out)]


class RobertaProcessor(PostProcessor):
    """``RobertaProcessing``: ``<s> A </s>`` and ``<s> A </s></s> B </s>``, every type id 0."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int], trim_offsets: bool, add_prefix_space: bool) -> None:
        self.sep, self.cls = sep, cls
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def process_encodings(self, encodings, add_special_tokens):
        if self.trim_offsets:
            for encoding in encodings:
                trim_offsets(encoding, self.add_prefix_space)
        for encoding in encodings:
            encoding.type_ids = [0] * len(encoding.ids)
        if not add_special_tokens:
            return encodings
        (sep, sep_id), (cls, cls_id) = self.sep, self.cls
        out = []
        for i, encoding in enumerate(encodings):
            encoding.special_tokens_mask = [0] * len(encoding.ids)
            head = Parts.special([cls_id], [cls], 0) if i == 0 else Parts.special([sep_id], [sep], 0)
            out.append(Parts.merge([head, encoding, Parts.special([sep_id], [sep], 0)]))
        return out


class BertProcessor(PostProcessor):
    """``BertProcessing``: ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``, B's type id 1."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep, self.cls = sep, cls

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process_encodings(self, encodings, add_special_tokens):
        if not add_special_tokens:
            return encodings
        (sep, sep_id), (cls, cls_id) = self.sep, self.cls
        out = []
        for i, encoding in enumerate(encodings):
            encoding.type_ids = [i] * len(encoding.ids)
            encoding.special_tokens_mask = [0] * len(encoding.ids)
            head = [Parts.special([cls_id], [cls], 0)] if i == 0 else []
            out.append(Parts.merge([*head, encoding, Parts.special([sep_id], [sep], i)]))
        return out


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


def read_post_processor(spec: Any, source: str = "tokenizer.json") -> Optional[PostProcessor]:
    """The post-processor of a ``tokenizer.json``'s ``post_processor`` value (None for null).

    Raises:
        VocabFormatError: a malformed object.
        UnsupportedTokenizerError: a processor type this module does not implement.
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise VocabFormatError(f"{source}: post_processor must be an object or null")
    kind = spec.get("type")
    if kind == "ByteLevel":
        return ByteLevelProcessor(bool(spec.get("trim_offsets", True)), bool(spec.get("add_prefix_space", True)))
    if kind == "TemplateProcessing":
        specials = _template_specials(spec.get("special_tokens", {}), source)
        single = _template(spec.get("single"), "single", specials, source)
        pair = _template(spec.get("pair"), "pair", specials, source)
        return TemplateProcessor(single, pair, specials)
    if kind == "RobertaProcessing":
        return RobertaProcessor(_pair(spec.get("sep"), "sep", source), _pair(spec.get("cls"), "cls", source),
                                bool(spec.get("trim_offsets", True)), bool(spec.get("add_prefix_space", True)))
    if kind == "BertProcessing":
        return BertProcessor(_pair(spec.get("sep"), "sep", source), _pair(spec.get("cls"), "cls", source))
    if kind == "Sequence":
        steps = spec.get("processors")
        if not isinstance(steps, list):
            raise VocabFormatError(f"{source}: post_processor Sequence needs a list 'processors'")
        processors = [read_post_processor(step, source) for step in steps]
        if any(p is None for p in processors):
            raise VocabFormatError(f"{source}: post_processor Sequence has a null step")
        # HF numbers the sequences of a template's output oddly when another processor runs
        # after it (its sequence_ids and n_sequences); real files put the template last.
        adders = (TemplateProcessor, RobertaProcessor, BertProcessor)
        if any(isinstance(p, adders) for p in processors[:-1]):
            raise UnsupportedTokenizerError(
                f"{source}: a post_processor Sequence with a processor after one that adds tokens is not supported "
                "(put TemplateProcessing last, as Llama 3's file does)"
            )
        return SequenceProcessor(processors)
    raise UnsupportedTokenizerError(
        f"{source}: post_processor {kind!r} is not supported (TemplateProcessing, ByteLevel, RobertaProcessing, "
        "BertProcessing or a Sequence of them)"
    )


def _pair(value: Any, what: str, source: str) -> tuple[str, int]:
    if (not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str)
            or type(value[1]) is not int):
        raise VocabFormatError(f"{source}: post_processor {what} must be [token, id], not {value!r}")
    return value[0], value[1]


def _template_specials(value: Any, source: str) -> dict[str, tuple[list[int], list[str]]]:
    if not isinstance(value, dict):
        raise VocabFormatError(f"{source}: TemplateProcessing special_tokens must be an object")
    specials = {}
    for name, entry in value.items():
        ids = entry.get("ids") if isinstance(entry, dict) else None
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        if (not isinstance(ids, list) or not isinstance(tokens, list) or len(ids) != len(tokens)
                or not all(type(i) is int for i in ids) or not all(isinstance(t, str) for t in tokens)):
            raise VocabFormatError(f"{source}: TemplateProcessing special token {name!r} needs lists 'ids' and "
                                   "'tokens' of the same length")
        specials[name] = (ids, tokens)
    return specials


def _template(value: Any, what: str, specials: dict, source: str) -> list[tuple[str, str, int]]:
    """A template as ``[(kind, name, type_id)]``, kind "sequence" (name "A" or "B") or "special"."""
    if not isinstance(value, list):
        raise VocabFormatError(f"{source}: TemplateProcessing {what} must be a list of pieces")
    pieces = []
    for piece in value:
        if isinstance(piece, dict) and len(piece) == 1:
            (key, body), = piece.items()
            if isinstance(body, dict) and type(body.get("type_id", 0)) is int:
                if key == "Sequence" and body.get("id") in ("A", "B"):
                    pieces.append(("sequence", body["id"], body.get("type_id", 0)))
                    continue
                if key == "SpecialToken" and isinstance(body.get("id"), str):
                    if body["id"] not in specials:
                        raise VocabFormatError(f"{source}: TemplateProcessing uses the special token "
                                               f"{body['id']!r}, which its special_tokens does not define")
                    pieces.append(("special", body["id"], body.get("type_id", 0)))
                    continue
        raise VocabFormatError(f"{source}: TemplateProcessing {what} piece {piece!r} is not a Sequence or a "
                               "SpecialToken")
    return pieces
