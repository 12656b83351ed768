r"""HF's normalizers in sequence (a :class:`~wordsplit.spec.Sequence` of steps), each character's
alignment to the text carried through (:meth:`ProgramNormalizer.alignment`).
"""

from __future__ import annotations

from typing import Callable

from .. import spec
from .unicode import WHITESPACE, identity, lowercase, nfc, nfd, nfkc, nfkd, strip_accents

__all__ = ["ProgramNormalizer"]

_NAMED_STEPS = {"NFC": nfc, "NFD": nfd, "NFKC": nfkc, "NFKD": nfkd, "Lowercase": lowercase,
                "StripAccents": strip_accents}


class ProgramNormalizer:
    r"""A normalizer program (:func:`normalizer_program`): HF's normalizers in sequence.

    Each step is HF's: NFC/NFD/NFKC/NFKD with the crate's Unicode 9.0 data; ``Lowercase`` per
    character (:func:`lowercase`); ``Strip`` trims Rust's whitespace (:data:`WHITESPACE`);
    ``StripAccents`` drops combining marks; ``Replace`` replaces every match of a literal
    string, or of a regex found as Oniguruma finds matches (Unicode 16.0 classes, an empty
    match right after a match skipped), with ``content`` taken literally; ``Prepend`` prefixes
    non-empty text; ``PrefixSpace`` prefixes a space to non-empty text that does not start
    with one; ``BertNormalizer`` as :mod:`~wordsplit.normalizers.bert` runs it; ``Precompiled``
    (a SentencePiece character map) as :mod:`~wordsplit.normalizers.precompiled` runs it.

    Args:
        program: the :class:`~wordsplit.spec.Sequence` of steps.

    Raises:
        VocabFormatError: a regex that does not compile.
        UnsupportedTokenizerError: a regex construct wordsplit does not translate.

    >>> from wordsplit.spec import Sequence, Strip
    >>> strip = ProgramNormalizer(Sequence((Strip(left=False, right=True),)))
    >>> strip("  a\u3000 ")
    '  a'
    """

    def __init__(self, program: spec.Sequence) -> None:
        self.program = program
        self.steps = program.normalizers
        # Each Replace step's matches, `text -> [(start, end), ...]` in characters (for offsets).
        self._matchers = [_replace_matcher(step) if isinstance(step, spec.Replace) else None for step in self.steps]
        self._functions = [self._function(step, matcher) for step, matcher in zip(self.steps, self._matchers)]

    def alignment(self, text: str) -> "tuple[str, list[tuple[int, int, bool]] | None]":
        r"""The normalized ``text`` and each normalized character's alignment to ``text`` as HF
        carries it through the steps (None: each character is itself); see
        :func:`wordsplit.offsets.program_alignment`.

        >>> from wordsplit.spec import Lowercase, Sequence
        >>> ProgramNormalizer(Sequence((Lowercase(),))).alignment("\u0130a")
        ('i̇a', [(0, 1, False), (0, 1, False), (1, 2, True)])
        """
        from ..offsets import program_alignment

        return program_alignment(self, text)

    def alignment_parts(self, text: str) -> "tuple[str, list[tuple[int, int, bool]] | None, int]":
        """:meth:`alignment` in the parts the native engine takes (see
        :func:`wordsplit.offsets.program_alignment_parts`).

        >>> from wordsplit.spec import Prepend, Sequence
        >>> ProgramNormalizer(Sequence((Prepend("_"),))).alignment_parts("ab")
        ('_ab', [(0, 1, False)], 2)
        """
        from ..offsets import program_alignment_parts

        return program_alignment_parts(self, text)

    @staticmethod
    def _function(step: spec.Stage, matcher: "Callable[[str], list[tuple[int, int]]] | None") -> Callable[[str], str]:
        kind = step.kind
        if kind in _NAMED_STEPS:
            return _NAMED_STEPS[kind]
        if isinstance(step, spec.Strip):
            if step.left and step.right:
                return lambda text: text.strip(WHITESPACE)
            if step.left:
                return lambda text: text.lstrip(WHITESPACE)
            if step.right:
                return lambda text: text.rstrip(WHITESPACE)
            return identity
        if isinstance(step, spec.Prepend):
            prepend = step.prepend
            return lambda text: prepend + text if text else text
        if isinstance(step, spec.BertNormalizer):
            from .bert import bert_normalizer

            return bert_normalizer(step)
        if isinstance(step, spec.Precompiled):
            from .precompiled import precompiled_normalizer

            return precompiled_normalizer(step.charsmap)
        if kind == "PrefixSpace":
            # (HF's prepend aligns the new text to the first character: empty text stays empty)
            return lambda text: " " + text if text and not text.startswith(" ") else text
        content = step.content
        if not step.regex:
            # HF escapes the string into a regex: every non-overlapping occurrence, leftmost
            # first, as str.replace finds them (an empty string matches between all characters).
            # Empty text has no match at all for HF, not even an empty one.
            literal = step.pattern
            return lambda text: text.replace(literal, content) if text else text
        return _replacer(matcher, content)

    def __call__(self, text: str) -> str:
        for function in self._functions:
            text = function(text)
        return text

    def __repr__(self) -> str:
        return f"ProgramNormalizer({self.program!r})"


def _replace_matcher(step: spec.Replace) -> Callable[[str], list[tuple[int, int]]]:
    """The ``(start, end)`` character ranges a Replace ``pattern`` matches in a text, as HF finds
    them (none in empty text, not even an empty one).

    Raises:
        UnsupportedTokenizerError: with a non-empty ``content``, a pattern that matches the
            empty string at the start of a text: HF aligns the text it puts there to nothing,
            and its pre-tokenizer then fails ("index out of bounds") or repeats that text, so
            there is no result to reproduce. A pattern that matches so at the start of a
            one-character text is refused here (when the vocabulary is loaded); any other, by
            the matcher when a text makes it match so.
    """
    content = step.content
    pattern = {"Regex" if step.regex else "String": step.pattern}  # (as HF's JSON spells it, for messages)
    if not step.regex:
        literal = step.pattern
        if not literal and content:
            raise _empty_start_error(pattern, content, None)

        def literal_matches(text: str) -> list[tuple[int, int]]:
            if not text:
                return []
            if not literal:  # (as str.replace: an empty match at every position, both ends too)
                return [(i, i) for i in range(len(text) + 1)]
            matches, position = [], text.find(literal)
            while position >= 0:
                matches.append((position, position + len(literal)))
                position = text.find(literal, position + len(literal))
            return matches

        return literal_matches
    matcher = _regex_matcher(pattern["Regex"])
    if not content:
        return matcher
    for probe in _EMPTY_START_PROBES:
        if matcher(probe)[:1] == [(0, 0)]:
            raise _empty_start_error(pattern, content, None)

    def checked(text: str) -> list[tuple[int, int]]:
        matches = matcher(text)
        if matches[:1] == [(0, 0)]:
            raise _empty_start_error(pattern, content, text)
        return matches

    return checked


# One character of each kind a pattern may look at: ASCII, letters of other scripts, marks,
# spaces, digits, symbols, emoji. Not "\n": HF's `$` matches before it, and `$` with content
# loads (a text that starts with "\n" is refused when it comes).
_EMPTY_START_PROBES = [chr(c) for c in range(0x20, 0x7F)] + list(
    "\t\r\xa0\u3000\u2028\xe9\u0301\u0308\u0391\u03b1\u0416\u05d0\u0627\u0905\u65e5\u3042\uac00\u0660"
    "\u00b2\u2160\u00a7\u2581\uff21\ufb01\U0001f980\x00\x1c"
)


def _empty_start_error(pattern: dict, content: str, text: "str | None"):
    from ..errors import UnsupportedTokenizerError

    where = "a text" if text is None else repr(text[:40])
    return UnsupportedTokenizerError(
        f"the Replace pattern {pattern!r} matches the empty string at the start of {where}, where it would put "
        f"{content!r}; HF aligns that text to nothing and its pre-tokenizer then fails or repeats it, so there is "
        "no result to reproduce; use a Prepend normalizer to put text before each segment, or a pattern that "
        "cannot match the empty string at the start"
    )


def _regex_matcher(pattern: str) -> Callable[[str], list[tuple[int, int]]]:
    import regex

    from ..errors import UnsupportedTokenizerError, VocabFormatError
    from ..spanners.hf_split import find_matches
    from ..spanners.regex import translate_pattern

    try:
        compiled = regex.compile(translate_pattern(pattern, line_anchors=True))
    except regex.error as exc:
        raise VocabFormatError(f"the Replace pattern {pattern!r} does not compile: {exc}") from None
    except RecursionError:
        raise UnsupportedTokenizerError(f"the Replace pattern {pattern[:80]!r} nests too deeply") from None

    def matches(text: str) -> list[tuple[int, int]]:
        return list(find_matches(compiled, text)) if text else []

    return matches


def _replacer(matches: Callable[[str], list[tuple[int, int]]], content: str) -> Callable[[str], str]:
    """Replace what ``matches`` finds in a text with ``content``, taken literally."""

    def replace(text: str) -> str:
        parts, done = [], 0
        for start, end in matches(text):
            parts.append(text[done:start])
            parts.append(content)
            done = end
        if not parts:
            return text
        parts.append(text[done:])
        return "".join(parts)

    return replace
