r"""The typed description of a tokenizer pipeline: what a vocabulary's text goes through.

A :class:`PipelineSpec` names one stage of each kind, each a typed value with one class per
variant (as HF tokenizers describes a tokenizer.json): a normalizer, a spanner (the
pre-tokenizer), a model and a decoder, each family in a section below. A vocabulary holds one
(:attr:`wordsplit.Vocab.pipeline`); the components that run each stage are chosen from it when
a tokenizer is built. A new kind of tokenizer is a new variant here and the component that runs
it. One module, not one per family: the package imports it whole at start, and each module
imported costs a fraction of a millisecond.

Where a pipeline crosses a boundary (pickles, the parsed-vocabulary cache) it is written in
its one JSON form (:meth:`PipelineSpec.to_json`): an object of the four stages, each an object
tagged by its ``"type"``; docs/pipeline.md documents every variant.

>>> spec = PipelineSpec(normalizer=Nfc(), spanner=RegexSplit(r"\S+|\s+"))
>>> spec.dumps()
'{"decoder":{"type":"ByteLevel"},"model":{"type":"BPE"},"normalizer":{"type":"NFC"},"spanner":{"pattern":"\\\\S+|\\\\s+","type":"Regex"}}'
>>> PipelineSpec.loads(spec.dumps()) == spec
True
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Mapping, Union

from .errors import VocabFormatError

__all__ = [
    "BEHAVIORS", "ByteLevel", "BytePairEncoding", "Decoder", "Lowercase", "Metaspace", "Model", "Nfc", "Nfd", "Nfkc",
    "Nfkd", "NoNormalizer", "Normalizer", "PipelineSpec", "PluginNormalizer", "Prepend", "PrefixSpace",
    "PrefixSpaceStep", "RegexSplit", "Replace", "SentencePieceBpe", "SentencePieceDecoder", "SentencePieceNormalizer",
    "SentencePieceSplit", "Sequence", "Spanner", "Split", "SplitProgram", "Stage", "Strip", "StripAccents",
    "normalizer_from_name", "normalizer_name", "read_stage",
]


# -- what every stage shares ---------------------------------------------------------------
#
# A stage is an immutable value whose ``kind`` is its ``"type"`` in JSON (HF tokenizers tags its
# stages the same way) and whose fields are JSON values: str, bool, tuples of strings, or other
# stages. A family (normalizers, spanners, models, decoders) is the set of its kinds;
# :func:`read_stage` reads any of them and refuses what is not exactly one of them.


class Stage:
    """A stage description: an immutable value with a ``kind`` and JSON-valued fields.

    ``FIELDS`` maps each field, in order, to what it holds: ``str``, ``bool``, ``"strings"`` (a
    tuple of non-empty strings), or a family's name for a nested stage (``"normalizer"``) and
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


# -- normalizers ---------------------------------------------------------------------------
#
# What a vocabulary's text goes through before it is split.
#
# One class per kind, named as HF tokenizers names its normalizers where it has one:
#
# * :class:`NoNormalizer`; the Unicode forms :class:`Nfc`, :class:`Nfd`, :class:`Nfkc`,
#   :class:`Nfkd` with HF's Unicode 9.0 data; :class:`Lowercase`, :class:`StripAccents`,
#   :class:`Strip`, :class:`Replace`, :class:`Prepend` as HF runs them; :class:`PrefixSpace`,
#   ByteLevel's ``add_prefix_space`` (a pre-tokenizer step a loader runs as a normalizer's last);
# * :class:`Sequence`: those steps in order, each carrying HF's alignment of every character to
#   the text (what offsets need), where a kind alone is run as one function;
# * :class:`SentencePieceNormalizer`: SentencePiece's own (the dummy prefix, spaces as ``▁``);
# * :class:`Metaspace`: HF's ``Metaspace`` pre-tokenizer with ``split: false``, after another
#   normalizer, run as a normalizer;
# * :class:`PluginNormalizer`: a function registered with
#   :func:`~wordsplit.normalizers.register_normalizer`, by its name.


class NoNormalizer(Stage):
    """The text as it is."""

    kind: ClassVar[str] = "None"
    __slots__ = ()


class Nfc(Stage):
    """Unicode NFC as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFC"
    __slots__ = ()


class Nfd(Stage):
    """Unicode NFD as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFD"
    __slots__ = ()


class Nfkc(Stage):
    """Unicode NFKC as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFKC"
    __slots__ = ()


class Nfkd(Stage):
    """Unicode NFKD as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFKD"
    __slots__ = ()


class Lowercase(Stage):
    """Each character lowercased as Rust's ``char::to_lowercase`` does (HF's ``Lowercase``)."""

    kind: ClassVar[str] = "Lowercase"
    __slots__ = ()


class StripAccents(Stage):
    """Combining marks dropped (HF's ``StripAccents``, usually after NFD)."""

    kind: ClassVar[str] = "StripAccents"
    __slots__ = ()


class Strip(Stage):
    """Rust's white space trimmed from the left and/or right end (HF's ``Strip``)."""

    kind: ClassVar[str] = "Strip"
    FIELDS: ClassVar[dict] = {"left": bool, "right": bool}
    DEFAULTS: ClassVar[dict] = {"left": True, "right": True}
    __slots__ = tuple(FIELDS)
    left: bool
    right: bool


class Replace(Stage):
    """Every match of ``pattern`` (a literal string, or a regex with ``regex``) replaced by
    ``content``, taken literally (HF's ``Replace``)."""

    kind: ClassVar[str] = "Replace"
    FIELDS: ClassVar[dict] = {"pattern": str, "content": str, "regex": bool}
    DEFAULTS: ClassVar[dict] = {"regex": False}
    __slots__ = tuple(FIELDS)
    pattern: str
    content: str
    regex: bool


class Prepend(Stage):
    """``prepend`` put before non-empty text (HF's ``Prepend``)."""

    kind: ClassVar[str] = "Prepend"
    FIELDS: ClassVar[dict] = {"prepend": str}
    __slots__ = tuple(FIELDS)
    prepend: str


class PrefixSpace(Stage):
    """A space before non-empty text that does not start with one (ByteLevel's
    ``add_prefix_space``)."""

    kind: ClassVar[str] = "PrefixSpace"
    __slots__ = ()


#: The kinds a :class:`Sequence` holds.
STEP_KINDS = (Nfc, Nfd, Nfkc, Nfkd, Lowercase, StripAccents, Strip, Replace, Prepend, PrefixSpace)


class Sequence(Stage):
    """HF's normalizers in order, each step's alignment carried through (for offsets)."""

    kind: ClassVar[str] = "Sequence"
    FIELDS: ClassVar[dict] = {"normalizers": ["normalizer"]}
    __slots__ = tuple(FIELDS)
    normalizers: tuple

    def _check(self) -> None:
        if not isinstance(self.normalizers, tuple) or not all(isinstance(s, STEP_KINDS) for s in self.normalizers):
            raise ValueError(f"a Sequence holds a tuple of steps of the kinds "
                             f"{', '.join(k.kind for k in STEP_KINDS)}")


class SentencePieceNormalizer(Stage):
    """SentencePiece's ``Normalizer::Normalize`` with an identity character map: only spaces
    change (the normalizer spec's flags, with the proto's defaults)."""

    kind: ClassVar[str] = "SentencePiece"
    FIELDS: ClassVar[dict] = {"add_dummy_prefix": bool, "remove_extra_whitespaces": bool,
                              "escape_whitespaces": bool, "treat_whitespace_as_suffix": bool}
    DEFAULTS: ClassVar[dict] = {"add_dummy_prefix": True, "remove_extra_whitespaces": True,
                                "escape_whitespaces": True, "treat_whitespace_as_suffix": False}
    __slots__ = tuple(FIELDS)
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool


class Metaspace(Stage):
    """HF's ``Metaspace`` with ``split: false`` after the normalizer ``before``: every space
    becomes ``replacement``, which is put before the text for ``prepend_scheme`` ``"always"``,
    only before the text's first stretch for ``"first"``, never for ``"never"``."""

    kind: ClassVar[str] = "Metaspace"
    FIELDS: ClassVar[dict] = {"replacement": str, "prepend_scheme": str, "before": "normalizer"}
    DEFAULTS: ClassVar[dict] = {"replacement": "\u2581", "prepend_scheme": "always", "before": NoNormalizer()}
    __slots__ = tuple(FIELDS)
    replacement: str
    prepend_scheme: str
    before: Stage

    def _check(self) -> None:
        if self.prepend_scheme not in ("first", "always", "never") or len(self.replacement) != 1:
            raise ValueError("prepend_scheme is 'first', 'always' or 'never'; replacement one character")
        if isinstance(self.before, (Metaspace, SentencePieceNormalizer)):
            raise ValueError("Metaspace runs after an HF normalizer, not after another space handler")


class PluginNormalizer(Stage):
    """The function registered under ``name`` (:func:`~wordsplit.normalizers.register_normalizer`):
    a pickled or cached vocabulary finds it again by importing the module that registers it."""

    kind: ClassVar[str] = "Plugin"
    FIELDS: ClassVar[dict] = {"name": str}
    __slots__ = tuple(FIELDS)
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


# -- spanners ------------------------------------------------------------------------------
#
# Spanner descriptions: how a vocabulary's normalized text is cut into pieces.
#
# * :class:`RegexSplit`: the matches of a split regex (tiktoken's ``pat_str``; ``\p{..}``
#   classes as Unicode 16.0), every character in some match;
# * :class:`SplitProgram`: a tokenizer.json's ``Split`` steps with HF's semantics
#   (:class:`Split`), and ByteLevel's ``add_prefix_space`` after other steps
#   (:class:`PrefixSpaceStep`); HF's ``Whitespace``/``WhitespaceSplit`` are ``Removed`` splits;
# * :class:`SentencePieceSplit`: a SentencePiece model's user-defined pieces cut out of the text
#   (SentencePiece has no pre-tokenizer), and where the text may be cut at words.


#: HF's ``SplitDelimiterBehavior`` values.
BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class RegexSplit(Stage):
    """The pieces are the matches of ``pattern``, which must cover the text."""

    kind: ClassVar[str] = "Regex"
    FIELDS: ClassVar[dict] = {"pattern": str}
    __slots__ = tuple(FIELDS)
    pattern: str

    def _check(self) -> None:
        if not isinstance(self.pattern, str):
            raise TypeError("a RegexSplit's pattern is a str")


class Split(Stage):
    """HF's ``Split``: the matches of ``pattern`` (all but them with ``invert``) and the text
    between them, joined by ``behavior`` (one of :data:`BEHAVIORS`)."""

    kind: ClassVar[str] = "Split"
    FIELDS: ClassVar[dict] = {"pattern": str, "behavior": str, "invert": bool}
    DEFAULTS: ClassVar[dict] = {"invert": False}
    __slots__ = tuple(FIELDS)
    pattern: str
    behavior: str
    invert: bool

    def _check(self) -> None:
        if self.behavior not in BEHAVIORS:
            raise ValueError(f"behavior is one of {', '.join(BEHAVIORS)}, not {self.behavior!r}")


class PrefixSpaceStep(Stage):
    """A space put before each piece that does not start with one (ByteLevel's
    ``add_prefix_space`` placed after other steps, as HF's ``NormalizedString::prepend``)."""

    kind: ClassVar[str] = "PrefixSpace"
    __slots__ = ()


class SplitProgram(Stage):
    """HF's pre-tokenizer ``Sequence`` of :class:`Split` (and :class:`PrefixSpaceStep`) steps;
    each step splits every piece of the one before. No step: the text is one piece."""

    kind: ClassVar[str] = "SplitProgram"
    FIELDS: ClassVar[dict] = {"steps": ["split step"]}
    __slots__ = tuple(FIELDS)
    steps: tuple

    def _check(self) -> None:
        if not isinstance(self.steps, tuple) or not all(isinstance(s, (Split, PrefixSpaceStep)) for s in self.steps):
            raise ValueError("a SplitProgram holds a tuple of Split and PrefixSpace steps")

    @property
    def drops_text(self) -> bool:
        """Whether its pieces may leave text out or add some (``Removed``, a prefix space)."""
        return any(isinstance(s, PrefixSpaceStep) or s.behavior == "Removed" for s in self.steps)


class SentencePieceSplit(Stage):
    """A SentencePiece vocabulary's cut of its normalized text.

    Attributes:
        user_defined: pieces matched in the text (longest first) and never merged.
        words: the text may be cut before every ``▁`` that follows another character into
            parts that merge alone (the loaders check on the tokens that no token but the
            ``joined`` ones has a ``▁`` after another character).
        joined: those few tokens: no cut is made inside a place of the text that spells one.
        metaspace_split: HF's ``Metaspace`` with ``split: true``: the text is cut before every
            ``▁`` (``"a▁▁b"`` is ``a``, ``▁``, ``▁b``) and each part merged alone.
    """

    kind: ClassVar[str] = "SentencePiece"
    FIELDS: ClassVar[dict] = {"user_defined": "strings", "words": bool, "joined": "strings",
                              "metaspace_split": bool}
    DEFAULTS: ClassVar[dict] = {"user_defined": (), "words": False, "joined": (), "metaspace_split": False}
    __slots__ = tuple(FIELDS)
    user_defined: tuple
    words: bool
    joined: tuple
    metaspace_split: bool


Spanner = Union[RegexSplit, SplitProgram, SentencePieceSplit]

SPANNER_KINDS = family("spanner", RegexSplit, SplitProgram, SentencePieceSplit)
family("split step", Split, PrefixSpaceStep)


# -- models --------------------------------------------------------------------------------
#
# Model descriptions: how a piece becomes token ids.
#
# * :class:`BytePairEncoding`: byte-level BPE over the piece's UTF-8 bytes, by the vocabulary's
#   ranks (tiktoken's rule) or by its pair-ranked merge list (HF's), both held by its tables;
# * :class:`SentencePieceBpe`: BPE over characters as SentencePiece trains it: merged by piece
#   score (``sentencepiece``, llama.cpp) or by merge rank (an HF tokenizer.json, a GGUF
#   ``gemma4`` file), a character with no piece taken as its UTF-8 byte pieces.


class BytePairEncoding(Stage):
    """Byte-level BPE: the merge order is the vocabulary's tables."""

    kind: ClassVar[str] = "BPE"
    __slots__ = ()


class SentencePieceBpe(Stage):
    """BPE over a SentencePiece vocabulary's characters.

    Attributes:
        merge_by: ``"score"`` (the highest piece score first: ``sentencepiece``, llama.cpp) or
            ``"rank"`` (the lowest merge rank first, byte fallback before merging: HF).
        unused: the UNUSED pieces: a merge may make one, and it is then split back into the
            two symbols it was last made from (``"score"``).
        ignore_merges: (``"rank"``) a part that is a token is that token, as HF's
            ``ignore_merges``.
    """

    kind: ClassVar[str] = "SentencePieceBpe"
    FIELDS: ClassVar[dict] = {"merge_by": str, "unused": "strings", "ignore_merges": bool}
    DEFAULTS: ClassVar[dict] = {"merge_by": "score", "unused": (), "ignore_merges": False}
    __slots__ = tuple(FIELDS)
    merge_by: str
    unused: tuple
    ignore_merges: bool

    def _check(self) -> None:
        if self.merge_by not in ("score", "rank"):
            raise ValueError(f"merge_by is 'score' or 'rank', not {self.merge_by!r}")
        if self.ignore_merges and self.merge_by != "rank":
            raise ValueError("ignore_merges is an option of merging by rank")


Model = Union[BytePairEncoding, SentencePieceBpe]

MODEL_KINDS = family("model", BytePairEncoding, SentencePieceBpe)


# -- decoders ------------------------------------------------------------------------------
#
# Decoder descriptions: how token ids become text again.
#
# * :class:`ByteLevel`: each token's bytes, concatenated, read as UTF-8;
# * :class:`SentencePieceDecoder`: a SentencePiece vocabulary's pieces: ``▁`` is a space, byte
#   pieces are bytes, the dummy prefix dropped, in the ``style`` of the tokenizer the file comes
#   from (``sentencepiece``, HF's decoders, or llama.cpp's ``llama_detokenize``).


DECODER_STYLES = ("sentencepiece", "hf", "llama.cpp")


class ByteLevel(Stage):
    """Token bytes concatenated (tiktoken, HF's ``ByteLevel`` decoder)."""

    kind: ClassVar[str] = "ByteLevel"
    __slots__ = ()


class SentencePieceDecoder(Stage):
    """A SentencePiece vocabulary's decode.

    Attributes:
        style: ``"sentencepiece"`` (control pieces empty, an invalid UTF-8 byte among byte
            pieces U+FFFD each), ``"hf"`` (HF's ``Replace``, ``ByteFallback``, ``Fuse``,
            ``Strip``) or ``"llama.cpp"`` (``llama_detokenize``).
        unk_surface: what ``<unk>`` decodes to (the trainer spec's ``unk_surface``).
        strip_leading_space: how the dummy prefix is dropped: ``"first"`` (the leading ``▁`` of
            the first piece; for ``"hf"`` the decoder's ``Strip(" ", 1, 0)``), ``"all"`` (of
            every piece until text appears: ``remove_extra_whitespaces``) or ``"none"``.
        unused: (``"llama.cpp"``) the UNUSED pieces, which ``llama_token_to_piece`` renders as
            nothing.
    """

    kind: ClassVar[str] = "SentencePiece"
    FIELDS: ClassVar[dict] = {"style": str, "unk_surface": str, "strip_leading_space": str, "unused": "strings"}
    DEFAULTS: ClassVar[dict] = {"style": "sentencepiece", "unk_surface": " \u2047 ", "strip_leading_space": "first",
                                "unused": ()}
    __slots__ = tuple(FIELDS)
    style: str
    unk_surface: str
    strip_leading_space: str
    unused: tuple

    def _check(self) -> None:
        if self.style not in DECODER_STYLES:
            raise ValueError(f"style is one of {', '.join(DECODER_STYLES)}, not {self.style!r}")
        if self.strip_leading_space not in ("first", "all", "none"):
            raise ValueError("strip_leading_space is 'first', 'all' or 'none'")


Decoder = Union[ByteLevel, SentencePieceDecoder]

DECODER_KINDS = family("decoder", ByteLevel, SentencePieceDecoder)


# -- the pipeline --------------------------------------------------------------------------

_STAGES = ("normalizer", "spanner", "model", "decoder")
# (merge_by, decoder style) of the SentencePiece files wordsplit reads: sentencepiece's .model,
# HF's tokenizer.json, llama.cpp's GGUF, llama.cpp's GGUF gemma4.
_SENTENCEPIECE_KINDS = (("score", "sentencepiece"), ("rank", "hf"), ("score", "llama.cpp"), ("rank", "llama.cpp"))


class PipelineSpec:
    """A vocabulary's pipeline: normalizer → spanner → model, and the decoder back.

    Byte-level BPE (``model=BytePairEncoding()``, ``decoder=ByteLevel()``) is the default; a
    SentencePiece vocabulary has a :class:`SentencePieceSplit`, a :class:`SentencePieceBpe`
    and a :class:`SentencePieceDecoder`, all three.

    Raises:
        VocabFormatError: a stage of the wrong family, or stages that do not fit together.
    """

    __slots__ = ("normalizer", "spanner", "model", "decoder")
    spanner: Spanner
    normalizer: Normalizer
    model: Model
    decoder: Decoder

    def __init__(self, spanner: Spanner, normalizer: Normalizer = NoNormalizer(),
                 model: Model = BytePairEncoding(), decoder: Decoder = ByteLevel()) -> None:
        for name, stage in (("normalizer", normalizer), ("spanner", spanner), ("model", model),
                            ("decoder", decoder)):
            object.__setattr__(self, name, stage)
        for name in _STAGES:
            stage = getattr(self, name)
            if not isinstance(stage, Stage) or stage.family != name:
                raise VocabFormatError(f"a pipeline's {name} must be a {name} stage (wordsplit.spec), "
                                       f"not {stage!r}")
        pieces = isinstance(self.spanner, SentencePieceSplit), isinstance(self.model, SentencePieceBpe), \
            isinstance(self.decoder, SentencePieceDecoder)
        if len(set(pieces)) != 1:
            raise VocabFormatError(
                "a SentencePiece pipeline has a SentencePieceSplit spanner, a SentencePieceBpe model and a "
                f"SentencePieceDecoder, all three; got {self.spanner.kind}, {self.model.kind}, {self.decoder.kind}"
            )
        if pieces[0] and (self.model.merge_by, self.decoder.style) not in _SENTENCEPIECE_KINDS:
            raise VocabFormatError(
                f"a SentencePiece model merged by {self.model.merge_by} with the {self.decoder.style} decoder is no "
                f"tokenizer wordsplit knows; known: {', '.join(f'{m} with {s}' for m, s in _SENTENCEPIECE_KINDS)}"
            )
        if pieces[0] and self.spanner.metaspace_split and (self.model.merge_by, self.decoder.style) != ("rank", "hf"):
            raise VocabFormatError("metaspace_split is HF's Metaspace: it needs merge_by='rank' and style='hf'")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("PipelineSpec is immutable; build another")

    def __eq__(self, other: object) -> bool:
        return type(other) is PipelineSpec and all(getattr(self, n) == getattr(other, n) for n in _STAGES)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in _STAGES))

    def __repr__(self) -> str:
        stages = ", ".join(f"{name}={getattr(self, name)!r}" for name in _STAGES)
        return f"PipelineSpec({stages})"

    def __reduce__(self):
        return PipelineSpec, (self.spanner, self.normalizer, self.model, self.decoder)

    @property
    def sentencepiece(self) -> bool:
        """Whether this is a SentencePiece pipeline (its characters merged, its pieces decoded
        as SentencePiece decodes)."""
        return isinstance(self.model, SentencePieceBpe)

    @property
    def pattern(self) -> str | None:
        """The split regex of a :class:`RegexSplit` spanner, else None."""
        return self.spanner.pattern if isinstance(self.spanner, RegexSplit) else None

    def to_json(self) -> dict[str, Any]:
        """The pipeline's one JSON form: ``{"normalizer": ..., "spanner": ..., "model": ...,
        "decoder": ...}``, each stage an object tagged by its ``"type"``."""
        return {name: getattr(self, name).to_json() for name in _STAGES}

    def dumps(self) -> str:
        """:meth:`to_json` as canonical text (sorted keys, no spaces): equal pipelines give
        equal text, which the content hash reads."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, value: Any) -> PipelineSpec:
        """The pipeline a JSON object describes.

        Raises:
            VocabFormatError: not exactly the four stages, each well-formed.
        """
        if not isinstance(value, dict) or set(value) != set(_STAGES):
            raise VocabFormatError(f"a pipeline is an object of exactly {', '.join(_STAGES)}; got {value!r:.120}")
        return cls(**{name: read_stage(name, value[name]) for name in _STAGES})

    @classmethod
    def loads(cls, text: str) -> PipelineSpec:
        """:meth:`from_json` of JSON text.

        Raises:
            VocabFormatError: not JSON, or not a pipeline.
        """
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            raise VocabFormatError(f"a pipeline description is JSON; got {text[:80]!r}") from None
        return cls.from_json(value)


assert set(FAMILIES) >= set(_STAGES)
