"""Spanners (pre-tokenizers): text → the pieces BPE encodes one at a time.

``regex`` (:class:`RegexSpanner`) runs any split pattern with the ``regex`` module, its
``\\p{..}`` and ``\\s`` classes replaced by Unicode 16.0 tables (the version the official
tokenizers use). The hand-written scanners for the known pattern families (Rust, in
``crates/wordsplit/src/spanners/``) register against the exact pattern strings they were proven equal
to, and ``spanner="auto"`` picks one only for those; on the Python backend a scanner name means
its regex.

A spanner is a class built as ``cls(pattern)`` with ``split(text) -> list[str]``, pieces that
concatenate to ``text``; both engines check that they do (a ``ComponentError`` otherwise),
which is what catches a broken spanner.

A spanner that deletes or inserts text (HF's ``Whitespace``, a ``Removed`` Split, ByteLevel's
``add_prefix_space`` after other steps: :class:`HFSplitSpanner`) declares it with a true
``drops_text`` attribute, read once when a tokenizer is built. The engines then call its
``spans(text)`` instead of ``split``: a list of ``(start, end)`` character offsets of the
pieces, in order and not overlapping; text outside every span is dropped. A span may be
``(start, end, prefix)``: the piece encoded is ``prefix + text[start:end]``, and for offsets
the prefix is aligned to the character at ``start`` (as HF aligns a prepended character), so
a token of the prefix alone gets that character's range. Both engines check the spans (ints,
in order, within the text, a ``str`` prefix) and raise the same ``ComponentError`` otherwise;
empty spans without a prefix are skipped. A plug-in spanner of this kind runs in Python on
both backends (the native engine calls it); its ``split`` is then free to return the pieces'
text. HF's own programs (:class:`HFSplitSpanner`) have a native twin, used by the native
engine for encoding (``encode_with_offsets`` takes the Python spanner's spans).

Register your own with :func:`register_spanner`:

>>> @register_spanner("whitespace-runs")
... class WhitespaceRunsSpanner:
...     def __init__(self, pattern):
...         self.pattern = pattern
...     def split(self, text):
...         import re
...         return re.findall(r"\\S+|\\s+", text)
>>> get_spanner("whitespace-runs")("ignored").split("hello  world")
['hello', '  ', 'world']
>>> _ = SPANNERS.remove("whitespace-runs")  # (this example cleans up after itself)

One that keeps the words only, each with a space before it:

>>> @register_spanner("spaced-words")
... class SpacedWordsSpanner:
...     drops_text = True
...     def __init__(self, pattern):
...         self.pattern = pattern
...     def spans(self, text):
...         import re
...         return [(m.start(), m.end(), " ") for m in re.finditer(r"\\S+", text)]
...     def split(self, text):
...         return [" " + text[a:b] for a, b, _ in self.spans(text)]
>>> from wordsplit import TokenizerOptions, load_vocab
>>> tok = TokenizerOptions(spanner="spaced-words").build(load_vocab("gpt2"))
>>> result = tok.encode_with_offsets("hello   world")
>>> result.ids, result.char_offsets  # " hello", " world"
([23748, 995], [(0, 5), (8, 13)])
>>> _ = SPANNERS.remove("spaced-words")
"""

from __future__ import annotations

from typing import Callable, Optional

from ..errors import DuplicateNameError
from ..native_names import SCANNER_PATTERNS
from ..protocols import SpannerClass
from ..registry import SPANNERS, load_plugins
from ..spec import LlamaCppWordPieceSplit, RegexSplit, SentencePieceSplit, SplitProgram, Stage
from .hf_split import HFSplitSpanner
from .llamacpp import LlamaCppWordPieceSpanner
from .regex import RegexSpanner
from .scanners import scanner_class
from .sentencepiece import SentencePieceSpanner

# pattern → the spanner registered for exactly that pattern (what spanner="auto" picks).
_BY_PATTERN: dict[str, str] = {}


def register_spanner(name: str, *, patterns: tuple[str, ...] = ()) -> Callable[[SpannerClass], SpannerClass]:
    """Decorator: register a spanner class (``cls(pattern)`` with ``split(text) -> list[str]``,
    or ``drops_text = True`` and ``spans(text)``: the Protocols :class:`~wordsplit.protocols.Spanner` and
    :class:`~wordsplit.protocols.DroppingSpanner`).

    Args:
        name: its name, for ``TokenizerOptions(spanner=name)`` and ``--spanner``.
        patterns: exact pattern strings it implements; ``spanner="auto"`` then picks it for a
            vocabulary whose pattern is one of them (as the built-in scanners are picked).

    Raises:
        DuplicateNameError: ``name`` is taken, or another spanner claims one of ``patterns``.
    """
    patterns = (patterns,) if isinstance(patterns, str) else tuple(patterns)

    def deco(cls: SpannerClass) -> SpannerClass:
        for pattern in patterns:
            if _BY_PATTERN.get(pattern) in SPANNERS._items:  # (a removed spanner's claim is void)
                raise DuplicateNameError(
                    f"spanner {name!r}: the pattern {pattern!r} is already implemented by {_BY_PATTERN[pattern]!r}"
                )
        SPANNERS.add(name, cls)
        for pattern in patterns:
            _BY_PATTERN[pattern] = name
        return cls

    return deco


def spanner_for(stage: Stage) -> Optional[str]:
    """The spanner that runs a spanner stage (what ``"auto"`` picks): for a regex, the one
    registered for exactly its pattern, or None (the ``regex`` spanner runs it).

    >>> from wordsplit.patterns import CL100K_PATTERN
    >>> spanner_for(RegexSplit(CL100K_PATTERN)), spanner_for(RegexSplit(r"\\w+"))
    ('cl100k-scanner', None)
    """
    if isinstance(stage, SplitProgram):
        return "hf-split"  # a tokenizer.json's Split steps (HF semantics)
    if isinstance(stage, SentencePieceSplit):
        return "sentencepiece"  # a SentencePiece model: its user-defined pieces cut out
    if isinstance(stage, LlamaCppWordPieceSplit):
        return "llamacpp-wordpiece"  # a GGUF WordPiece vocabulary: llama.cpp's words
    pattern = stage.pattern
    if pattern not in _BY_PATTERN:
        load_plugins()  # a plug-in may claim it
    name = _BY_PATTERN.get(pattern)
    return name if name in SPANNERS else None


def spanner_argument(stage: Stage):
    """What a spanner class is built from for a vocabulary's spanner stage: the pattern of a
    :class:`~wordsplit.spec.RegexSplit` (a str, as tiktoken's ``pat_str``), else the stage."""
    return stage.pattern if isinstance(stage, RegexSplit) else stage


def get_spanner(name: str) -> SpannerClass:
    """The Python spanner class registered as ``name``; unknown names list the known ones."""
    return SPANNERS.get(name)


register_spanner("regex")(RegexSpanner)
register_spanner("hf-split")(HFSplitSpanner)
register_spanner("sentencepiece")(SentencePieceSpanner)
register_spanner("llamacpp-wordpiece")(LlamaCppWordPieceSpanner)
for _name, _patterns in SCANNER_PATTERNS.items():
    register_spanner(_name, patterns=_patterns)(scanner_class(_name, _patterns))

__all__ = [
    "SPANNERS", "HFSplitSpanner", "LlamaCppWordPieceSpanner", "RegexSpanner", "SentencePieceSpanner", "get_spanner",
    "register_spanner", "spanner_argument", "spanner_for",
]
