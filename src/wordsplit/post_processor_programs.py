"""HF's post-processors read from a tokenizer.json into typed post-processor stages.

A tokenizer.json's ``post_processor`` (null, ``TemplateProcessing``, ``BertProcessing``,
``RobertaProcessing``, ``ByteLevel`` or a ``Sequence`` of them) becomes a stage of
:mod:`wordsplit.spec.post_processors`, which :mod:`wordsplit.postprocess` runs.

>>> post_processor_stage({"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]})
BertProcessing(sep='[SEP]', sep_id=102, cls='[CLS]', cls_id=101)
"""

from __future__ import annotations

from typing import Any

from . import spec
from .errors import UnsupportedTokenizerError, VocabFormatError

__all__ = ["post_processor_stage"]

# The processors that add tokens: a Sequence has them last (see post_processor_stage).
_ADDERS = (spec.TemplateProcessing, spec.BertProcessing, spec.RobertaProcessing)


def post_processor_stage(value: Any, source: str = "tokenizer.json") -> spec.Stage:
    """The stage of a ``tokenizer.json``'s ``post_processor`` value (:class:`NoPostProcessor`
    for null).

    Raises:
        VocabFormatError: a malformed object.
        UnsupportedTokenizerError: a processor type wordsplit does not run.
    """
    if value is None:
        return spec.NoPostProcessor()
    if not isinstance(value, dict):
        raise VocabFormatError(f"{source}: post_processor must be an object or null")
    kind = value.get("type")
    try:
        if kind == "ByteLevel":
            return spec.ByteLevelProcessing(bool(value.get("trim_offsets", True)),
                                            bool(value.get("add_prefix_space", True)))
        if kind == "TemplateProcessing":
            specials = _template_specials(value.get("special_tokens", {}), source)
            names = {special.id for special in specials}
            return spec.TemplateProcessing(_template(value.get("single"), "single", names, source),
                                           _template(value.get("pair"), "pair", names, source), specials)
        if kind in ("RobertaProcessing", "BertProcessing"):
            sep, sep_id = _pair(value.get("sep"), "sep", source)
            cls, cls_id = _pair(value.get("cls"), "cls", source)
            if kind == "BertProcessing":
                return spec.BertProcessing(sep, sep_id, cls, cls_id)
            return spec.RobertaProcessing(sep, sep_id, cls, cls_id, bool(value.get("trim_offsets", True)),
                                          bool(value.get("add_prefix_space", True)))
    except ValueError as error:  # a stage's own check
        raise VocabFormatError(f"{source}: post_processor {kind}: {error}") from None
    if kind == "Sequence":
        steps = value.get("processors")
        if not isinstance(steps, list):
            raise VocabFormatError(f"{source}: post_processor Sequence needs a list 'processors'")
        if any(step is None for step in steps):
            raise VocabFormatError(f"{source}: post_processor Sequence has a null step")
        processors = tuple(post_processor_stage(step, source) for step in steps)
        # HF numbers the sequences of a template's output oddly when another processor runs
        # after it (its sequence_ids and n_sequences); real files put the template last.
        if any(isinstance(p, _ADDERS) for p in processors[:-1]):
            raise UnsupportedTokenizerError(
                f"{source}: a post_processor Sequence with a processor after one that adds tokens is not supported "
                "(put TemplateProcessing last, as Llama 3's file does)"
            )
        return spec.PostProcessorSequence(processors)
    raise UnsupportedTokenizerError(
        f"{source}: post_processor {kind!r} is not supported (TemplateProcessing, ByteLevel, RobertaProcessing, "
        "BertProcessing or a Sequence of them)"
    )


def _pair(value: Any, what: str, source: str) -> tuple[str, int]:
    if (not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str)
            or type(value[1]) is not int or value[1] < 0):
        raise VocabFormatError(f"{source}: post_processor {what} must be [token, id], not {value!r}")
    return value[0], value[1]


def _template_specials(value: Any, source: str) -> tuple[spec.TemplateSpecial, ...]:
    if not isinstance(value, dict):
        raise VocabFormatError(f"{source}: TemplateProcessing special_tokens must be an object")
    specials = []
    for name, entry in value.items():
        ids = entry.get("ids") if isinstance(entry, dict) else None
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        if (not isinstance(ids, list) or not isinstance(tokens, list) or len(ids) != len(tokens)
                or not all(type(i) is int and i >= 0 for i in ids)
                or not all(isinstance(t, str) and t for t in tokens)):
            raise VocabFormatError(f"{source}: TemplateProcessing special token {name!r} needs lists 'ids' and "
                                   "'tokens' of the same length")
        specials.append(spec.TemplateSpecial(name, tuple(ids), tuple(tokens)))
    return tuple(specials)


def _template(value: Any, what: str, names: set[str], source: str) -> tuple[spec.Stage, ...]:
    """A template's items: :class:`TemplateSequence` (``A``, ``B``) and
    :class:`TemplateSpecialToken` (a name ``names`` holds)."""
    if not isinstance(value, list):
        raise VocabFormatError(f"{source}: TemplateProcessing {what} must be a list of pieces")
    items: list[spec.Stage] = []
    for piece in value:
        if isinstance(piece, dict) and len(piece) == 1:
            (key, body), = piece.items()
            type_id = body.get("type_id", 0) if isinstance(body, dict) else None
            if type(type_id) is int and type_id >= 0:
                if key == "Sequence" and body.get("id") in ("A", "B"):
                    items.append(spec.TemplateSequence(body["id"], type_id))
                    continue
                if key == "SpecialToken" and isinstance(body.get("id"), str):
                    if body["id"] not in names:
                        raise VocabFormatError(f"{source}: TemplateProcessing uses the special token "
                                               f"{body['id']!r}, which its special_tokens does not define")
                    items.append(spec.TemplateSpecialToken(body["id"], type_id))
                    continue
        raise VocabFormatError(f"{source}: TemplateProcessing {what} piece {piece!r} is not a Sequence or a "
                               "SpecialToken")
    return tuple(items)
