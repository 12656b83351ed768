"""Registries: the name → component tables that make wordsplit pluggable, and plug-in discovery.

wordsplit has five registries, each filled by a public decorator or function and each
consulted by name: spanners (``register_spanner``), span encoders (``register_encoder``),
normalizers (``register_normalizer``), file loaders (``register_loader``) and named
vocabularies (``register_vocab``). The built-in components register themselves the same way a
plug-in does.

Plug-ins in other packages: every entry point of the group ``wordsplit.plugins`` is imported
the first time a registry is asked for a name it does not hold, or for the list of its names
(as tiktoken does with ``tiktoken_ext``), so that ``pip install`` of a plug-in package is all it
takes. A built-in name never waits for that scan (finding the entry points reads the metadata
of every installed package, tens of milliseconds), and since a plug-in cannot take a built-in
name, the answer is the same as if every plug-in had been imported first. A name that is not
built in (a file path given to ``load_vocab``) does not wait for it either when no installed
package mentions the group in its ``entry_points.txt`` (read directly, about a millisecond):
``importlib.metadata`` is imported only when one may. An entry point names
a module (or an object in one); importing it runs its ``@register_...`` decorators. Declare one
in the plug-in's ``pyproject.toml``::

    [project.entry-points."wordsplit.plugins"]
    my_plugin = "my_package.wordsplit_plugin"

A name registered twice raises :class:`~wordsplit.errors.DuplicateNameError`; an unknown name
raises :class:`~wordsplit.errors.UnknownComponentError` listing the known ones.

>>> colours = Registry("colour")
>>> @colours.register("red", aliases=("rouge",))
... class Red: ...
>>> colours.get("rouge") is Red
True
"""

from __future__ import annotations

import threading
import importlib
from typing import TYPE_CHECKING, Callable, Generic, Iterator, TypeVar

from .errors import DuplicateNameError, PluginError, UnknownComponentError, WordsplitError, unknown_name

if TYPE_CHECKING:
    from .protocols import EncoderClass, Normalizer, SpannerClass

T = TypeVar("T")

ENTRY_POINT_GROUP = "wordsplit.plugins"


class Registry(Generic[T]):
    """Names (and aliases) of one kind of component.

    Args:
        kind: what the components are, for messages (``"spanner"``).
        error: the class raised for an unknown name.
        builtins: the module whose import registers the built-in components, imported the
            first time the registry is used (so that code below the component layer, such as
            a Vocab checking its normalizer's name, can look a component up by name without
            importing the module that defines it).
    """

    def __init__(self, kind: str, *, error: type = UnknownComponentError, builtins: str | None = None) -> None:
        self.kind = kind
        self._error = error
        self._builtins = builtins
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        # Parametrized families: names starting with a prefix, each made on first use by the
        # family's factory (the name is the component's whole description, e.g. a normalizer
        # program), so such a name works in any process without being registered first.
        self._families: dict[str, Callable[[str], T]] = {}
        self._members: dict[str, T] = {}
        # What runs a typed stage (wordsplit.spec) of this kind, set by the built-in module.
        self._stage_runner: Callable[[object], T] | None = None

    def _load_builtins(self) -> None:
        """Import the module of the built-in components, once (set first: that module's own
        registrations come back here while it is being imported)."""
        if self._builtins is not None:
            module, self._builtins = self._builtins, None
            importlib.import_module(module)

    def register(self, name: str, *, aliases: tuple[str, ...] = ()) -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name`` (and ``aliases``).

        Raises:
            DuplicateNameError: the name or an alias is taken.
        """

        def deco(obj: T) -> T:
            self.add(name, obj, aliases=aliases)
            return obj

        return deco

    def add(self, name: str, obj: T, *, aliases: tuple[str, ...] = ()) -> None:
        """Register ``obj`` under ``name`` (and ``aliases``); a taken name raises DuplicateNameError."""
        self._load_builtins()
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind} name is a non-empty str, not {name!r}")
        for key in (name, *aliases):
            if key in self._items or key in self._aliases:
                raise DuplicateNameError(
                    f"{self.kind} {key!r} is registered twice; choose another name "
                    f"(taken: {', '.join(self._names())})"
                )
        self._items[name] = obj
        for alias in aliases:
            self._aliases[alias] = name

    def add_family(self, prefix: str, factory: Callable[[str], T]) -> None:
        """Make every name that starts with ``prefix`` a component: ``factory(name)`` builds it
        on first use (it raises a WordsplitError for a malformed name), and it is kept.

        Raises:
            DuplicateNameError: the prefix is taken.

        >>> def grey(name):
        ...     if not name[5:].isdigit():
        ...         raise UnknownComponentError(f"{name!r}: a grey is 'grey:' and a number")
        ...     return int(name[5:])
        >>> shades = Registry("shade")
        >>> shades.add_family("grey:", grey)
        >>> shades.get("grey:40"), "grey:x" in shades, "grey:7" in shades
        (40, False, True)
        """
        self._load_builtins()
        if prefix in self._families:
            raise DuplicateNameError(f"{self.kind} family {prefix!r} is registered twice")
        self._families[prefix] = factory

    def set_stage_runner(self, runner: Callable[[object], T]) -> None:
        """Set what :meth:`for_stage` calls: the built-in module's function from a typed stage
        description (:mod:`wordsplit.spec`) to the component that runs it."""
        self._stage_runner = runner

    def for_stage(self, stage: object) -> T:
        """The component that runs the typed ``stage`` (a plug-in stage names a registered one),
        so that code below the component layer, such as a loader checking a normalizer's
        regexes at load, can build one without importing the module that defines it."""
        self._load_builtins()
        assert self._stage_runner is not None, f"no {self.kind} runs typed stages"
        return self._stage_runner(stage)

    def _member(self, name: object) -> bool:
        """Whether ``name`` is a member of a family (made and kept now if it is new)."""
        if name in self._members:
            return True
        if not isinstance(name, str):
            return False
        for prefix, factory in self._families.items():
            if name.startswith(prefix):
                self._members[name] = factory(name)
                return True
        return False

    def remove(self, name: str) -> T:
        """Unregister ``name`` and its aliases, returning what it held (for tests and notebooks)."""
        self._load_builtins()
        obj = self._items.pop(self.canonical(name))
        self._aliases = {alias: target for alias, target in self._aliases.items() if target != name}
        return obj

    def canonical(self, name: str) -> str:
        """The registered name for ``name`` or one of its aliases (plug-ins are loaded first
        when it is neither).

        Raises:
            UnknownComponentError (or the registry's error class): listing the known names.
        """
        self._load_builtins()
        for attempt in (1, 2):
            if name in self._items or (attempt == 1 and self._member(name)):
                return name
            if name in self._aliases:
                return self._aliases[name]
            if attempt == 1:
                load_plugins()
        raise unknown_name(self.kind, str(name), self._names(), self._error)

    def get(self, name: str) -> T:
        """The component registered as ``name`` (or an alias of it, or a family member)."""
        name = self.canonical(name)
        return self._members[name] if name in self._members else self._items[name]

    def names(self) -> list[str]:
        """Every registered name and alias, sorted."""
        self._load_builtins()
        load_plugins()
        return self._names()

    def items(self) -> list[tuple[str, T]]:
        """``(name, component)`` of every registered name (aliases left out), in registration order."""
        self._load_builtins()
        load_plugins()
        return list(self._items.items())

    def _names(self) -> list[str]:
        return sorted([*self._items, *self._aliases])

    def __contains__(self, name: object) -> bool:
        self._load_builtins()
        if name in self._items or name in self._aliases:
            return True
        try:
            if self._member(name):
                return True
        except WordsplitError:  # a malformed family name is no component
            return False
        load_plugins()
        return name in self._items or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        self._load_builtins()
        load_plugins()
        return iter(sorted(self._items))


_plugins_loaded = False
_plugins_lock = threading.RLock()


def load_plugins() -> None:
    """Import every entry point of the group ``wordsplit.plugins``, once per process.

    Called by the registries when they need it, so a program never needs to call it.

    Raises:
        PluginError: an entry point failed to import (the first time only; the registries
            stay usable with what did register).
    """
    global _plugins_loaded
    if _plugins_loaded:
        return
    with _plugins_lock:
        if _plugins_loaded:
            return
        # Set first: a plug-in's own registrations and lookups must not load plug-ins again.
        _plugins_loaded = True
        if not _may_declare_plugins():
            return
        from importlib.metadata import entry_points

        failures = []
        for entry_point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                entry_point.load()
            except Exception as exc:  # a broken plug-in is reported, with what broke
                dist = getattr(entry_point.dist, "name", None) or "an installed package"
                failures.append(f"{entry_point.name} = {entry_point.value!r} (from {dist}): "
                                f"{type(exc).__name__}: {exc}")
        if failures:
            raise PluginError(
                f"cannot load wordsplit plug-in {'; '.join(failures)}; fix or uninstall that package "
                f"(entry point group {ENTRY_POINT_GROUP!r})"
            )


def _may_declare_plugins() -> bool:
    """Whether an installed distribution may declare an entry point of ``wordsplit.plugins``:
    False only when none can, so that ``importlib.metadata`` (tens of milliseconds to import
    and walk) is used only when it may find one.

    It looks where ``importlib.metadata`` looks, with a plain directory listing: the
    ``*.dist-info`` and ``*.egg-info`` directories (and an ``.egg`` directory's ``EGG-INFO``)
    of each directory on ``sys.path``, and is True as soon as one's ``entry_points.txt``
    mentions the group. Anything it does not read that way (a zip or other file on
    ``sys.path``, a meta-path finder of distributions other than the standard one, an
    unreadable entry) counts as a maybe, and ``importlib.metadata`` decides.

    >>> from importlib.metadata import entry_points
    >>> _may_declare_plugins() or not entry_points(group=ENTRY_POINT_GROUP)
    True
    """
    import os
    import sys
    from importlib.machinery import PathFinder

    standard = getattr(PathFinder, "find_distributions", None)
    for finder in sys.meta_path:
        found = getattr(finder, "find_distributions", None)
        if found is not None and getattr(found, "__func__", found) != getattr(standard, "__func__", standard):
            return True
    group = ENTRY_POINT_GROUP.encode()
    try:
        for entry in sys.path:
            root = os.fspath(entry) or "."
            if not os.path.isdir(root):
                if os.path.exists(root):  # a zip: importlib.metadata reads it
                    return True
                continue
            egg = os.path.basename(root).lower().endswith(".egg")
            for child in os.listdir(root):
                low = child.lower()
                if low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info"):
                    try:
                        with open(os.path.join(root, child, "entry_points.txt"), "rb") as file:
                            if group in file.read():
                                return True
                    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                        continue  # no entry points: nothing for importlib.metadata either
    except Exception:  # anything unexpected: let importlib.metadata look
        return True
    return False


# The registries of the pipeline's components live here, below the components, so that code
# below them (a Vocab checking its normalizer's name, a loader compiling a file's split program)
# looks a component up by name without importing the component layer; each imports its
# built-in components on first use.
NORMALIZERS: Registry[Normalizer] = Registry("normalizer", builtins="wordsplit.normalizers")
SPANNERS: Registry[SpannerClass] = Registry("spanner", builtins="wordsplit.spanners")
ENCODERS: Registry[EncoderClass] = Registry("encoder", builtins="wordsplit.encoders")
