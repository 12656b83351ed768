"""The post-processor stages: the special tokens added around a text's ids."""

from __future__ import annotations

from typing import ClassVar, Union

from .stage import Stage, family

__all__ = [
    "BertProcessing",
    "ByteLevelProcessing",
    "NoPostProcessor",
    "POST_PROCESSOR_KINDS",
    "PostProcessor",
    "PostProcessorSequence",
    "RobertaProcessing",
    "TemplateProcessing",
    "TemplateSequence",
    "TemplateSpecial",
    "TemplateSpecialToken",
]


# -- post-processors -----------------------------------------------------------------------
#
# What ``add_special_tokens=True`` adds around the ids of a text, or of a pair of texts, as HF's
# post-processors do (the type ids too; :mod:`wordsplit.postprocess` runs them):
#
# * :class:`NoPostProcessor`: nothing;
# * :class:`TemplateProcessing`: the ``single`` and ``pair`` templates, each a tuple of
#   :class:`TemplateSequence` (``A``, ``B``) and :class:`TemplateSpecialToken` items, with the
#   ids of every special token they name (:class:`TemplateSpecial`);
# * :class:`BertProcessing` (``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``),
#   :class:`RobertaProcessing` (``<s> A </s>`` and ``<s> A </s></s> B </s>``) and
#   :class:`ByteLevelProcessing` (offsets without the spaces a token starts or ends with);
# * :class:`PostProcessorSequence`: those in order.


class NoPostProcessor(Stage):
    """No special tokens are added."""

    kind: ClassVar[str] = "None"
    __slots__ = ()


class TemplateSequence(Stage):
    """The ids of the first (``"A"``) or second (``"B"``) text, with type id ``type_id``."""

    kind: ClassVar[str] = "Sequence"
    FIELDS: ClassVar[dict] = {"id": str, "type_id": int}
    DEFAULTS: ClassVar[dict] = {"type_id": 0}
    __slots__ = tuple(FIELDS)
    id: str
    type_id: int

    def _check(self) -> None:
        if self.id not in ("A", "B") or self.type_id < 0:
            raise ValueError("a template sequence is 'A' or 'B', with a type id of at least 0")


class TemplateSpecialToken(Stage):
    """The special token ``id`` (a :class:`TemplateSpecial`'s), with type id ``type_id``."""

    kind: ClassVar[str] = "SpecialToken"
    FIELDS: ClassVar[dict] = {"id": str, "type_id": int}
    DEFAULTS: ClassVar[dict] = {"type_id": 0}
    __slots__ = tuple(FIELDS)
    id: str
    type_id: int

    def _check(self) -> None:
        if self.type_id < 0:
            raise ValueError("a type id is at least 0")


class TemplateSpecial(Stage):
    """What a template's special token ``id`` stands for: the tokens ``tokens`` with ids ``ids``."""

    kind: ClassVar[str] = "Special"
    FIELDS: ClassVar[dict] = {"id": str, "ids": "ints", "tokens": "strings"}
    __slots__ = tuple(FIELDS)
    id: str
    ids: tuple
    tokens: tuple

    def _check(self) -> None:
        if len(self.ids) != len(self.tokens) or any(i < 0 for i in self.ids):
            raise ValueError("a template special token has as many ids (each at least 0) as tokens")


class TemplateProcessing(Stage):
    """HF's ``TemplateProcessing``: ``single`` for one text, ``pair`` for two."""

    kind: ClassVar[str] = "TemplateProcessing"
    FIELDS: ClassVar[dict] = {"single": ["template item"], "pair": ["template item"],
                              "special_tokens": ["template special"]}
    __slots__ = tuple(FIELDS)
    single: tuple
    pair: tuple
    special_tokens: tuple

    def _check(self) -> None:
        names = [special.id for special in self.special_tokens]
        if len(set(names)) != len(names):
            raise ValueError("a template's special tokens have distinct ids")
        for template, texts in ((self.single, {"A"}), (self.pair, {"A", "B"})):
            for item in template:
                if isinstance(item, TemplateSpecialToken) and item.id not in names:
                    raise ValueError(f"the template names the special token {item.id!r}, which it does not define")
            if {item.id for item in template if isinstance(item, TemplateSequence)} != texts:
                raise ValueError("the single template holds A, the pair template A and B")


class BertProcessing(Stage):
    """HF's ``BertProcessing``: ``cls A sep`` (type id 0) and ``cls A sep B sep`` (B's part 1)."""

    kind: ClassVar[str] = "BertProcessing"
    FIELDS: ClassVar[dict] = {"sep": str, "sep_id": int, "cls": str, "cls_id": int}
    __slots__ = tuple(FIELDS)
    sep: str
    sep_id: int
    cls: str
    cls_id: int

    def _check(self) -> None:
        _check_ids(self)


def _check_ids(stage: Stage) -> None:
    if stage.sep_id < 0 or stage.cls_id < 0:
        raise ValueError("token ids are at least 0")


class RobertaProcessing(Stage):
    """HF's ``RobertaProcessing``: ``cls A sep`` and ``cls A sep sep B sep`` (type ids all 0),
    offsets trimmed of spaces as ByteLevel's with ``trim_offsets``."""

    kind: ClassVar[str] = "RobertaProcessing"
    FIELDS: ClassVar[dict] = {"sep": str, "sep_id": int, "cls": str, "cls_id": int, "trim_offsets": bool,
                              "add_prefix_space": bool}
    DEFAULTS: ClassVar[dict] = {"trim_offsets": True, "add_prefix_space": True}
    __slots__ = tuple(FIELDS)
    sep: str
    sep_id: int
    cls: str
    cls_id: int
    trim_offsets: bool
    add_prefix_space: bool

    def _check(self) -> None:
        _check_ids(self)


class ByteLevelProcessing(Stage):
    """HF's ``ByteLevel`` post-processor: no tokens added; with ``trim_offsets``, a token's
    offsets leave out the spaces it starts or ends with."""

    kind: ClassVar[str] = "ByteLevel"
    FIELDS: ClassVar[dict] = {"trim_offsets": bool, "add_prefix_space": bool}
    DEFAULTS: ClassVar[dict] = {"trim_offsets": True, "add_prefix_space": True}
    __slots__ = tuple(FIELDS)
    trim_offsets: bool
    add_prefix_space: bool


class PostProcessorSequence(Stage):
    """HF's post-processor ``Sequence``: each in order."""

    kind: ClassVar[str] = "Sequence"
    FIELDS: ClassVar[dict] = {"processors": ["post_processor"]}
    __slots__ = tuple(FIELDS)
    processors: tuple


PostProcessor = Union[NoPostProcessor, TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevelProcessing,
                      PostProcessorSequence]

POST_PROCESSOR_KINDS = family("post_processor", NoPostProcessor, TemplateProcessing, BertProcessing,
                              RobertaProcessing, ByteLevelProcessing, PostProcessorSequence)
family("template item", TemplateSequence, TemplateSpecialToken)
family("template special", TemplateSpecial)
