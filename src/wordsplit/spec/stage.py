"""What every stage of a pipeline shares: the :class:`Stage` base, the families, and
:func:`read_stage`, which reads any stage from its JSON object."""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..errors import VocabFormatError


# -- what every stage shares ---------------------------------------------------------------
#
# A stage is an immutable value whose ``kind`` is its ``"type"`` in JSON (HF tokenizers tags its
# stages the same way) and whose fields are JSON values: str, bool, tuples of strings, or other
# stages. A family (normalizers, spanners, models, decoders) is the set of its kinds;
# :func:`read_stage` reads any of them and refuses what is not exactly one of them.


class Stage:
    """A stage description: an immutable value with a ``kind`` and JSON-valued fields.

    ``FIELDS`` maps each field, in order, to what it holds: ``str``, ``bool``, ``int`` (not a
    bool), ``"strings"`` (a tuple of non-empty strings), ``"ints"`` (a tuple of ints), or a
    family's name for a nested stage (``"normalizer"``) and
    that name in a list (``["normalizer"]``) for a tuple of them; ``DEFAULTS`` gives the fields
    that may be left out. A stage is built by position or keyword, compares and hashes by its
    kind and fields, and checks itself in ``_check`` (a ``ValueError``). Plain classes with
    slots rather than dataclasses: a few dozen of them are made when the package is imported,
    which dataclasses' generated code made several milliseconds slower.
    """

    __slots__ = ()
    kind: ClassVar[str]
    family: ClassVar[str]
    FIELDS: ClassVar[Mapping[str, Any]] = {}
    DEFAULTS: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = tuple(cls.FIELDS)
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__} takes at most {len(names)} arguments ({', '.join(names)})")
        values = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in cls.FIELDS or name in values:
                raise TypeError(f"{cls.__name__}: unknown or repeated argument {name!r}")
            values[name] = value
        for name in names:
            if name not in values:
                if name not in cls.DEFAULTS:
                    raise TypeError(f"{cls.__name__} needs {name!r}")
                values[name] = cls.DEFAULTS[name]
            object.__setattr__(self, name, values[name])
        self._check()

    def _check(self) -> None:
        """Refuse values that make no such stage (a ``ValueError`` or ``TypeError``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; build another (replace)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__name__}({fields})"

    def __reduce__(self):
        return type(self), self._values()

    def replace(self, **changes: Any) -> "Stage":
        """The same stage with ``changes`` to its fields.

        >>> from wordsplit.spec import Strip
        >>> Strip().replace(left=False)
        Strip(left=False, right=True)
        """
        return type(self)(**{**dict(zip(self.FIELDS, self._values())), **changes})

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
        assert issubclass(cls, Stage) and cls.kind not in table, cls
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
    arguments = {}
    for name, holds in cls.FIELDS.items():
        if name not in value:
            if name not in cls.DEFAULTS:
                raise bad(family_name, value, f"missing field {name!r}")
            continue
        arguments[name] = _read_field(family_name, value, name, holds)
    try:
        return cls(**arguments)
    except (TypeError, ValueError) as error:  # a check of the stage's own (_check)
        raise bad(family_name, value, str(error)) from None


def _read_field(family_name: str, value: Mapping, name: str, holds: Any) -> Any:
    found = value[name]
    if holds is str or holds is bool:
        if not isinstance(found, holds):
            raise bad(family_name, value, f"field {name!r} must be a {holds.__name__}")
        return found
    if holds is int:
        if not isinstance(found, int) or isinstance(found, bool):
            raise bad(family_name, value, f"field {name!r} must be an integer")
        return found
    if holds == "ints":
        if not isinstance(found, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in found):
            raise bad(family_name, value, f"field {name!r} must be a list of integers")
        return tuple(found)
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
