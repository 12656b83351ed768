"""A small name → component registry, filled by decorators.

Spanners, encoders and normalizers register themselves by name; ``"auto"`` selection and
user choices both go through :meth:`Registry.get`, so an unknown name always gets the same
helpful error.

>>> colours = Registry("colour")
>>> @colours.register("red", aliases=("rouge",))
... class Red: ...
>>> colours.get("rouge") is Red
True
"""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from .errors import unknown_name

T = TypeVar("T")


class Registry(Generic[T]):
    """Names (and aliases) of one kind of component."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    def register(self, name: str, *, aliases: tuple[str, ...] = ()) -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name``; a duplicate name raises ValueError."""

        def deco(obj: T) -> T:
            for key in (name, *aliases):
                if key in self._items or key in self._aliases:
                    raise ValueError(f"{self.kind} {key!r} is registered twice")
            self._items[name] = obj
            for alias in aliases:
                self._aliases[alias] = name
            return obj

        return deco

    def canonical(self, name: str) -> str:
        """The registered name for ``name`` or one of its aliases."""
        if name in self._items:
            return name
        if name in self._aliases:
            return self._aliases[name]
        raise unknown_name(self.kind, name, self.names())

    def get(self, name: str) -> T:
        return self._items[self.canonical(name)]

    def names(self) -> list[str]:
        return sorted([*self._items, *self._aliases])

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))
