"""Normalizer descriptions: what a vocabulary's text goes through before it is split.

One class per kind, named as HF tokenizers names its normalizers where it has one:

* :class:`NoNormalizer`; the Unicode forms :class:`Nfc`, :class:`Nfd`, :class:`Nfkc`,
  :class:`Nfkd` with HF's Unicode 9.0 data; :class:`Lowercase`, :class:`StripAccents`,
  :class:`Strip`, :class:`Replace`, :class:`Prepend` as HF runs them; :class:`PrefixSpace`,
  ByteLevel's ``add_prefix_space`` (a pre-tokenizer step a loader runs as a normalizer's last);
* :class:`Sequence`: those steps in order, each carrying HF's alignment of every character to
  the text (what offsets need), where a kind alone is run as one function;
* :class:`SentencePieceNormalizer`: SentencePiece's own (the dummy prefix, spaces as ``▁``);
* :class:`Metaspace`: HF's ``Metaspace`` pre-tokenizer with ``split: false``, after another
  normalizer, run as a normalizer;
* :class:`PluginNormalizer`: a function registered with
  :func:`~wordsplit.normalizers.register_normalizer`, by its name.

>>> Sequence((Nfkc(), Lowercase())).to_json()
{'type': 'Sequence', 'normalizers': [{'type': 'NFKC'}, {'type': 'Lowercase'}]}
>>> normalizer_from_name("nfc"), normalizer_from_name("casefold")
(Nfc(), PluginNormalizer(name='casefold'))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Union

from .base import Stage, family

__all__ = [
    "Lowercase", "Metaspace", "Nfc", "Nfd", "Nfkc", "Nfkd", "NoNormalizer", "Normalizer", "PluginNormalizer",
    "Prepend", "PrefixSpace", "Replace", "SentencePieceNormalizer", "Sequence", "Strip", "StripAccents",
    "normalizer_from_name", "normalizer_name",
]


@dataclass(frozen=True)
class NoNormalizer(Stage):
    """The text as it is."""

    kind: ClassVar[str] = "None"


@dataclass(frozen=True)
class Nfc(Stage):
    """Unicode NFC as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFC"


@dataclass(frozen=True)
class Nfd(Stage):
    """Unicode NFD as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFD"


@dataclass(frozen=True)
class Nfkc(Stage):
    """Unicode NFKC as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFKC"


@dataclass(frozen=True)
class Nfkd(Stage):
    """Unicode NFKD as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFKD"


@dataclass(frozen=True)
class Lowercase(Stage):
    """Each character lowercased as Rust's ``char::to_lowercase`` does (HF's ``Lowercase``)."""

    kind: ClassVar[str] = "Lowercase"


@dataclass(frozen=True)
class StripAccents(Stage):
    """Combining marks dropped (HF's ``StripAccents``, usually after NFD)."""

    kind: ClassVar[str] = "StripAccents"


@dataclass(frozen=True)
class Strip(Stage):
    """Rust's white space trimmed from the left and/or right end (HF's ``Strip``)."""

    kind: ClassVar[str] = "Strip"
    FIELDS: ClassVar[dict] = {"left": bool, "right": bool}
    left: bool = True
    right: bool = True


@dataclass(frozen=True)
class Replace(Stage):
    """Every match of ``pattern`` (a literal string, or a regex with ``regex``) replaced by
    ``content``, taken literally (HF's ``Replace``)."""

    kind: ClassVar[str] = "Replace"
    FIELDS: ClassVar[dict] = {"pattern": str, "content": str, "regex": bool}
    pattern: str
    content: str
    regex: bool = False


@dataclass(frozen=True)
class Prepend(Stage):
    """``prepend`` put before non-empty text (HF's ``Prepend``)."""

    kind: ClassVar[str] = "Prepend"
    FIELDS: ClassVar[dict] = {"prepend": str}
    prepend: str


@dataclass(frozen=True)
class PrefixSpace(Stage):
    """A space before non-empty text that does not start with one (ByteLevel's
    ``add_prefix_space``)."""

    kind: ClassVar[str] = "PrefixSpace"


#: The kinds a :class:`Sequence` holds.
STEP_KINDS = (Nfc, Nfd, Nfkc, Nfkd, Lowercase, StripAccents, Strip, Replace, Prepend, PrefixSpace)


@dataclass(frozen=True)
class Sequence(Stage):
    """HF's normalizers in order, each step's alignment carried through (for offsets)."""

    kind: ClassVar[str] = "Sequence"
    FIELDS: ClassVar[dict] = {"normalizers": ["normalizer"]}
    normalizers: tuple

    def __post_init__(self) -> None:
        if not isinstance(self.normalizers, tuple) or not all(isinstance(s, STEP_KINDS) for s in self.normalizers):
            raise ValueError(f"a Sequence holds a tuple of steps of the kinds "
                             f"{', '.join(k.kind for k in STEP_KINDS)}")


@dataclass(frozen=True)
class SentencePieceNormalizer(Stage):
    """SentencePiece's ``Normalizer::Normalize`` with an identity character map: only spaces
    change (the normalizer spec's flags, with the proto's defaults)."""

    kind: ClassVar[str] = "SentencePiece"
    FIELDS: ClassVar[dict] = {"add_dummy_prefix": bool, "remove_extra_whitespaces": bool,
                              "escape_whitespaces": bool, "treat_whitespace_as_suffix": bool}
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False


@dataclass(frozen=True)
class Metaspace(Stage):
    """HF's ``Metaspace`` with ``split: false`` after the normalizer ``before``: every space
    becomes ``replacement``, which is put before the text for ``prepend_scheme`` ``"always"``,
    only before the text's first stretch for ``"first"``, never for ``"never"``."""

    kind: ClassVar[str] = "Metaspace"
    FIELDS: ClassVar[dict] = {"replacement": str, "prepend_scheme": str, "before": "normalizer"}
    replacement: str = "\u2581"
    prepend_scheme: str = "always"
    before: Stage = NoNormalizer()

    def __post_init__(self) -> None:
        if self.prepend_scheme not in ("first", "always", "never") or len(self.replacement) != 1:
            raise ValueError("prepend_scheme is 'first', 'always' or 'never'; replacement one character")
        if isinstance(self.before, (Metaspace, SentencePieceNormalizer)):
            raise ValueError("Metaspace runs after an HF normalizer, not after another space handler")


@dataclass(frozen=True)
class PluginNormalizer(Stage):
    """The function registered under ``name`` (:func:`~wordsplit.normalizers.register_normalizer`):
    a pickled or cached vocabulary finds it again by importing the module that registers it."""

    kind: ClassVar[str] = "Plugin"
    FIELDS: ClassVar[dict] = {"name": str}
    name: str


Normalizer = Union[NoNormalizer, Nfc, Nfd, Nfkc, Nfkd, Lowercase, StripAccents, Strip, Replace, Prepend,
                   PrefixSpace, Sequence, SentencePieceNormalizer, Metaspace, PluginNormalizer]

NORMALIZER_KINDS = family("normalizer", NoNormalizer, *STEP_KINDS, Sequence, SentencePieceNormalizer, Metaspace,
                          PluginNormalizer)

#: The built-in normalizers a vocabulary may name by a plain name.
_BY_NAME = {"none": NoNormalizer(), "nfc": Nfc(), "nfd": Nfd(), "nfkc": Nfkc(), "nfkd": Nfkd()}


def normalizer_name(stage: Stage) -> str:
    """How messages and listings name a normalizer stage: a plain name (``"none"``, ``"nfc"``),
    a plug-in's registered name, or the kind (``"Sequence"``, ``"SentencePiece"``...).

    >>> normalizer_name(Nfc()), normalizer_name(PluginNormalizer("casefold")), normalizer_name(Sequence(()))
    ('nfc', 'casefold', 'Sequence')
    """
    if isinstance(stage, PluginNormalizer):
        return stage.name
    return next((name for name, plain in _BY_NAME.items() if plain == stage), stage.kind)


def normalizer_from_name(name: str) -> Stage:
    """The normalizer a plain name means: ``"none"``, a Unicode form (``"nfc"``...), else the
    plug-in registered under it."""
    return _BY_NAME.get(name) or PluginNormalizer(name)
