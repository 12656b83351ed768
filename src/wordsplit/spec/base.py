"""What every stage description shares: its JSON object, written and read back checked.

A stage is a frozen dataclass whose ``kind`` is its ``"type"`` in JSON (HF tokenizers tags its
stages the same way) and whose fields are JSON values: str, bool, tuples of strings, or other
stages. A family (normalizers, spanners, models, decoders) is the set of its kinds;
:func:`read_stage` reads any of them and refuses what is not exactly one of them.

>>> from wordsplit.spec import Strip
>>> Strip(left=False).to_json()
{'type': 'Strip', 'left': False, 'right': True}
>>> read_stage("normalizer", {"type": "Strip", "left": False, "right": True}) == Strip(left=False)
True
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping

from ..errors import VocabFormatError

__all__ = ["Stage", "read_stage"]


class Stage:
    """A stage description: a frozen dataclass with a ``kind`` and JSON-valued fields.

    ``FIELDS`` maps each field to what it holds: ``str``, ``bool``, ``"strings"`` (a tuple of
    non-empty strings), or a family's name for a nested stage (``"normalizer"``) and that name
    in a list (``["normalizer"]``) for a tuple of them.
    """

    kind: ClassVar[str]
    family: ClassVar[str]
    FIELDS: ClassVar[Mapping[str, Any]] = {}

    def to_json(self) -> dict:
        """The stage as its JSON object (``"type"`` first, then the fields in order)."""
        out: dict[str, Any] = {"type": self.kind}
        for name in self.FIELDS:
            out[name] = _to_json(getattr(self, name))
        return out


def _to_json(value: Any) -> Any:
    if isinstance(value, Stage):
        return value.to_json()
    if isinstance(value, tuple):
        return [_to_json(item) for item in value]
    return value


#: family name → {kind → class}; each family module adds its kinds with :func:`family`.
FAMILIES: dict[str, dict[str, type[Stage]]] = {}


def family(name: str, *kinds: type[Stage]) -> dict[str, type[Stage]]:
    """Record ``kinds`` as the stages of the family ``name`` (each class's ``family`` set)."""
    table = FAMILIES.setdefault(name, {})
    for cls in kinds:
        assert dataclasses.is_dataclass(cls) and cls.kind not in table, cls
        cls.family = name
        table[cls.kind] = cls
    return table


def read_stage(family_name: str, value: Any) -> Stage:
    """The stage of family ``family_name`` that the JSON object ``value`` describes.

    Raises:
        VocabFormatError: not an object of one of the family's kinds with exactly its fields.
    """
    kinds = FAMILIES[family_name]
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise bad(family_name, value, "a stage is an object with a string 'type'")
    cls = kinds.get(value["type"])
    if cls is None:
        raise bad(family_name, value, f"unknown type {value['type']!r}; known: {', '.join(kinds)}")
    extra = set(value) - set(cls.FIELDS) - {"type"}
    if extra:
        raise bad(family_name, value, f"unknown field(s) {', '.join(sorted(extra))}")
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    arguments = {}
    for name, holds in cls.FIELDS.items():
        if name not in value:
            if defaults.get(name, dataclasses.MISSING) is dataclasses.MISSING:
                raise bad(family_name, value, f"missing field {name!r}")
            continue
        arguments[name] = _read_field(family_name, value, name, holds)
    try:
        return cls(**arguments)
    except (TypeError, ValueError) as error:  # a check of the stage's own (__post_init__)
        raise bad(family_name, value, str(error)) from None


def _read_field(family_name: str, value: Mapping, name: str, holds: Any) -> Any:
    found = value[name]
    if holds is str or holds is bool:
        if not isinstance(found, holds):
            raise bad(family_name, value, f"field {name!r} must be a {holds.__name__}")
        return found
    if holds == "strings":
        if not isinstance(found, list) or not all(isinstance(item, str) and item for item in found):
            raise bad(family_name, value, f"field {name!r} must be a list of non-empty strings")
        return tuple(found)
    if isinstance(holds, list):
        if not isinstance(found, list):
            raise bad(family_name, value, f"field {name!r} must be a list of {holds[0]} stages")
        return tuple(read_stage(holds[0], item) for item in found)
    return read_stage(holds, found)


def bad(family_name: str, value: Any, why: str) -> VocabFormatError:
    """The error for a malformed stage description."""
    text = repr(value)
    return VocabFormatError(f"malformed {family_name} {text if len(text) <= 120 else text[:117] + '...'}: {why}")
