"""The spanner stages: how a vocabulary's normalized text is cut into pieces."""

from __future__ import annotations

from typing import ClassVar, Union

from .stage import Stage, family

__all__ = [
    "BEHAVIORS",
    "LlamaCppWordPieceSplit",
    "PrefixSpaceStep",
    "RegexSplit",
    "SPANNER_KINDS",
    "SentencePieceSplit",
    "Spanner",
    "Split",
    "SplitProgram",
]


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
#   (SentencePiece has no pre-tokenizer), and where the text may be cut at words;
# * :class:`LlamaCppWordPieceSplit`: llama.cpp's words of a GGUF WordPiece (``bert``) vocabulary.


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


class LlamaCppWordPieceSplit(Stage):
    """llama.cpp's words of a WordPiece vocabulary (``llm_tokenizer_wpm``), after its
    :class:`~wordsplit.spec.LlamaCppBertNormalizer`: white space (llama.cpp's 25 code points)
    ends a word and is dropped; a punctuation character (categories P of Unicode 15.1), an
    ASCII symbol (``$+<=>^`|~``) or a CJK ideograph (llama.cpp's blocks) is a word alone; each
    word is the piece ``▁`` + the word (llama.cpp's phantom space, which the vocabulary's
    word-initial tokens start with)."""

    kind: ClassVar[str] = "LlamaCppWordPiece"
    __slots__ = ()


Spanner = Union[RegexSplit, SplitProgram, SentencePieceSplit, LlamaCppWordPieceSplit]

SPANNER_KINDS = family("spanner", RegexSplit, SplitProgram, SentencePieceSplit, LlamaCppWordPieceSplit)
family("split step", Split, PrefixSpaceStep)
