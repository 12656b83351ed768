"""The contracts of the pluggable components, as ``typing.Protocol`` classes.

Every registry of :mod:`wordsplit.registry` holds components of one of these kinds; the
built-in ones satisfy them, and a plug-in does by having the methods (no base class to
inherit). docs/plugins.md describes each with a running example.

============================  ==========================================================
registry                      a component is
============================  ==========================================================
``register_spanner``          a :class:`SpannerClass`: ``cls(pattern)`` gives a
                              :class:`Spanner`, or a :class:`DroppingSpanner`
``register_encoder``          an :class:`EncoderClass`: ``cls(tables)`` gives a
                              :class:`SpanEncoder`
``register_normalizer``       a :class:`Normalizer`: ``str -> str``
``register_loader``           a :class:`LoaderFunction`: ``path -> Vocab``
``register_vocab``            a :class:`VocabFactory`: ``() -> Vocab``
============================  ==========================================================

A spanner's ``drops_text`` switches the engines between its two methods. A spanner without the
attribute, or with a false one, is a :class:`Spanner`: the engines call ``split(text)`` and
check that the pieces concatenate to ``text``. One whose ``drops_text`` is true is a
:class:`DroppingSpanner`: the engines call ``spans(text)`` instead. Both engines (and the
native pipeline, which calls a Python spanner by these names) read the flag once, when a
tokenizer is built, with :func:`drops_text`'s rule.

>>> import re
>>> class Words:
...     def __init__(self, pattern):
...         self.pattern = pattern
...     def split(self, text):
...         return re.findall(r"\\S+|\\s+", text)
>>> isinstance(Words(r"\\S+|\\s+"), Spanner), drops_text(Words(""))
(True, False)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol, Union, runtime_checkable

if TYPE_CHECKING:
    from .tables import MergeTables
    from .vocab import Vocab

__all__ = [
    "DroppingSpanner", "EncoderClass", "LoaderFunction", "Normalizer", "Span", "SpanEncoder", "Spanner", "SpannerClass",
    "VocabFactory", "drops_text",
]

#: A piece of a :class:`DroppingSpanner`: ``(start, end)`` character offsets into the text, or
#: ``(start, end, prefix)`` for the piece ``prefix + text[start:end]``.
Span = Union[tuple[int, int], tuple[int, int, str]]


@runtime_checkable
class Spanner(Protocol):
    """Cuts text into the pieces BPE encodes one at a time (a pre-tokenizer).

    ``split(text)`` returns pieces that concatenate to ``text``; both engines check that they
    do and raise ``ComponentError`` otherwise.
    """

    def split(self, text: str) -> list[str]:
        """The pieces of ``text``, in order."""
        ...


@runtime_checkable
class DroppingSpanner(Spanner, Protocol):
    """A spanner whose pieces do not cover the text: it deletes text, or puts a prefix before a
    piece (HF's ``Whitespace``, a ``Removed`` Split, ByteLevel's ``add_prefix_space``).

    ``drops_text`` is true, and the engines call ``spans(text)``: the pieces' :data:`Span`\\ s,
    in order and not overlapping; text outside every span is dropped, an empty span without a
    prefix is skipped. Both engines check the spans (ints in order within the text, a ``str``
    prefix) and raise the same ``ComponentError`` otherwise. ``split`` is then free to return
    the pieces' text.
    """

    drops_text: bool

    def spans(self, text: str) -> list[Span]:
        """The spans of the pieces of ``text``, in order."""
        ...


class SpannerClass(Protocol):
    """What ``register_spanner`` registers: built with the vocabulary's pattern."""

    def __call__(self, pattern: str) -> Spanner: ...


@runtime_checkable
class SpanEncoder(Protocol):
    """Turns one piece's bytes into token ids (exact BPE with the vocabulary's tables)."""

    def encode_piece(self, piece: bytes) -> list[int]:
        """The ids of ``piece``."""
        ...


class EncoderClass(Protocol):
    """What ``register_encoder`` registers: built with the vocabulary's ``MergeTables``."""

    def __call__(self, tables: MergeTables) -> SpanEncoder: ...


class Normalizer(Protocol):
    """What ``register_normalizer`` registers: runs on each stretch of text between special and
    added tokens, before the spanner, and returns a ``str``."""

    def __call__(self, text: str) -> str: ...


class LoaderFunction(Protocol):
    """What ``register_loader`` registers: reads a file into a ``Vocab``. A loader registered
    with ``facts=(...)`` also takes those keywords (a rank file's ``pattern``, ...)."""

    def __call__(self, path: str | os.PathLike, /, **facts) -> Vocab: ...


class VocabFactory(Protocol):
    """What ``register_vocab`` registers: makes the named vocabulary on its first load."""

    def __call__(self) -> Vocab: ...


def drops_text(spanner: object) -> bool:
    """Whether the engines take ``spanner``'s pieces from ``spans`` (a true ``drops_text``)
    rather than from ``split``: a missing attribute means the pieces cover the text.

    >>> class Dropping:
    ...     drops_text = True
    >>> drops_text(Dropping()), drops_text(object())
    (True, False)
    """
    return bool(getattr(spanner, "drops_text", False))
