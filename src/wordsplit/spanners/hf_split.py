r"""HFSplitSpanner: HuggingFace's ``Split`` pre-tokenizers, exactly as ``tokenizers`` runs them.

A ``tokenizer.json`` pre-tokenizer ``Split(pattern, behavior, invert)`` keeps the text its
pattern does not match, unlike a tiktoken pattern (whose unmatched text is dropped): the text
is cut into the matches and the gaps between them, each flagged as a match or not (``invert``
swaps the flags), and ``behavior`` says what becomes of the matches:

* ``Isolated``: every match and every gap is a piece;
* ``MergedWithPrevious`` / ``MergedWithNext``: a match joins the piece before / after it;
* ``Contiguous``: consecutive matches (and consecutive gaps) form one piece;
* ``Removed``: matches are deleted (see below).

A ``Sequence`` of pre-tokenizers applies each to every piece of the one before, and a regex
only ever sees one piece. Matches are found as Oniguruma's ``find_iter`` finds them: leftmost,
the whole match is the split whatever groups the pattern captures, and an empty match right
where the previous match ended is skipped. Empty pieces are dropped.

A vocabulary records such a pipeline as its spanner: a :class:`~wordsplit.spec.SplitProgram`
of :class:`~wordsplit.spec.Split` steps. ``spanner="auto"`` picks this spanner for it, and the
regexes run on the ``regex`` module with the Unicode 16.0 classes of :func:`translate_pattern`. The
native engine runs the same program in Rust
(``crates/wordsplit/src/spanners/hf_program.rs``, steps from ``native_program_steps`` in
:mod:`wordsplit.engines.native`) and keeps this spanner for offsets and for a program whose
regex can match the empty string.

Two kinds of step change the text itself: ``Removed`` deletes the matches (HF's
``Whitespace``, ``WhitespaceSplit`` and ``Punctuation(Removed)`` are such Splits), and
a :class:`~wordsplit.spec.PrefixSpaceStep` (ByteLevel's ``add_prefix_space`` after other steps) puts
a
space before each piece that does not start with one, before ByteLevel's regex cuts it. A
program with either *drops text* (:attr:`HFSplitSpanner.drops_text`): the engines then take
its pieces from :meth:`HFSplitSpanner.spans`, ``(start, end)`` or ``(start, end, prefix)``
spans of the input (see :mod:`wordsplit.spanners`), instead of covering pieces.

>>> from wordsplit.split_programs import split_program
>>> program = split_program([{"pattern": "[a-z]+", "behavior": "Isolated", "invert": False}])
>>> HFSplitSpanner(program).split("hello world 123!")
['hello', ' ', 'world', ' 123!']
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..spec import BEHAVIORS, PrefixSpaceStep, SplitProgram
from .regex import translate_pattern
from .stage_check import refuse_other_stage

__all__ = ["HFSplitSpanner", "find_matches", "hf_split"]

Span = tuple[int, int]


def find_matches(regex, text: str) -> Iterator[Span]:
    """The matches of a compiled ``regex`` in ``text`` as Oniguruma's ``find_iter`` gives them.

    Each search starts where the last match ended; an empty match exactly there is skipped and
    the search moves one character on (the ``regex`` module's ``finditer`` would accept an
    empty match right after a non-empty one).
    """
    position, last_end = 0, -1
    search = regex.search
    while position <= len(text):
        m = search(text, position)
        if m is None:
            return
        start, end = m.span()
        if start == end and end == last_end:
            position = end + 1
            continue
        yield start, end
        position = last_end = end


def hf_split(regex, text: str, behavior: str, invert: bool) -> list[Span]:
    """The ``(start, end)`` pieces HF's ``Split(regex, behavior, invert)`` cuts ``text`` into.

    Empty pieces are kept here (the spanner drops them, as HF does after each step).

    >>> import regex
    >>> hf_split(regex.compile("-"), "the-final--countdown", "MergedWithPrevious", False)
    [(0, 4), (4, 10), (10, 11), (11, 20)]
    >>> hf_split(regex.compile("-"), "a--b", "Removed", False)
    [(0, 1), (3, 4)]
    """
    # HF's Pattern::find_matches: the matches and the gaps between them, flagged.
    flagged: list[tuple[Span, bool]] = []
    if not text:
        flagged.append(((0, 0), False))
    else:
        previous = 0
        for start, end in find_matches(regex, text):
            if previous != start:
                flagged.append(((previous, start), False))
            flagged.append(((start, end), True))
            previous = end
        if previous != len(text):
            flagged.append(((previous, len(text)), False))
    if invert:
        flagged = [(span, not is_match) for span, is_match in flagged]

    if behavior == "Isolated":
        return [span for span, _ in flagged]
    if behavior == "Removed":
        return [span for span, is_match in flagged if not is_match]
    pieces: list[list[int]] = []
    previous_match = False
    if behavior == "Contiguous":
        for (start, end), is_match in flagged:
            if pieces and is_match == previous_match:
                pieces[-1][1] = end
            else:
                pieces.append([start, end])
            previous_match = is_match
    elif behavior == "MergedWithPrevious":
        for (start, end), is_match in flagged:
            if pieces and is_match and not previous_match:
                pieces[-1][1] = end
            else:
                pieces.append([start, end])
            previous_match = is_match
    elif behavior == "MergedWithNext":
        for (start, end), is_match in reversed(flagged):
            if pieces and is_match and not previous_match:
                pieces[-1][0] = start
            else:
                pieces.append([start, end])
            previous_match = is_match
        pieces.reverse()
    else:
        raise ValueError(f"unknown split behavior {behavior!r}; known: {', '.join(BEHAVIORS)}")
    return [(start, end) for start, end in pieces]


def _isolated(compiled, grouped, text: str) -> list[str]:
    """An Isolated step's non-empty pieces: :func:`hf_split`'s, three times faster.

    ``grouped.split`` returns gap, whole match, the pattern's own groups, gap, ... in C. Its
    matches are ``finditer``'s, which are Oniguruma's as long as none is empty (both search on
    from the end of the last match); with an empty match the reference loop decides.
    """
    parts = grouped.split(text)
    stride = grouped.groups + 1
    matches = parts[1::stride]
    if "" in matches:
        return [text[start:end] for start, end in hf_split(compiled, text, "Isolated", False) if start < end]
    gaps = parts[0::stride]
    out = [part for gap, match in zip(gaps, matches) for part in (gap, match) if part]
    if gaps[-1]:
        out.append(gaps[-1])
    return out


def _removed(compiled, text: str, invert: bool) -> list[Span]:
    """A Removed step's non-empty pieces: :func:`hf_split`'s, from ``finditer`` in C.

    ``finditer``'s matches are Oniguruma's as long as none is empty (see :func:`_isolated`);
    with an empty match the reference loop decides. The pieces are the matches when
    ``invert``, else the text between them.
    """
    matches = [m.span() for m in compiled.finditer(text)]
    if any(start == end for start, end in matches):
        return [(start, end) for start, end in hf_split(compiled, text, "Removed", invert) if start < end]
    if invert:
        return matches
    gaps, previous = [], 0
    for start, end in matches:
        if previous < start:
            gaps.append((previous, start))
        previous = end
    if previous < len(text):
        gaps.append((previous, len(text)))
    return gaps


class HFSplitSpanner:
    r"""Runs a split program (a vocabulary's HF ``Split`` steps) with HF's semantics.

    Args:
        program: the :class:`~wordsplit.spec.SplitProgram`.

    Attributes:
        drops_text: whether the program deletes text (a ``Removed`` step) or inserts a space
            (an ``add_prefix_space`` step); the engines then encode :meth:`spans`, not
            :meth:`split`'s pieces (see :mod:`wordsplit.spanners`).

    Raises:
        VocabFormatError: a regex does not compile.
        UnsupportedTokenizerError: a regex construct :func:`translate_pattern` refuses.

    >>> from wordsplit.split_programs import split_program
    >>> program = split_program([{"pattern": r"\p{N}", "behavior": "MergedWithNext", "invert": False}])
    >>> HFSplitSpanner(program).split("ab12cd")
    ['ab', '1', '2cd']
    >>> removed = HFSplitSpanner(split_program([{"pattern": r"\s", "behavior": "Removed", "invert": False},
    ...                                         {"add_prefix_space": True}]))
    >>> removed.drops_text, removed.spans("ab  c"), removed.split("ab  c")
    (True, [(0, 2, ' '), (4, 5, ' ')], [' ab', ' c'])
    """

    def __init__(self, program: SplitProgram) -> None:
        import regex

        refuse_other_stage("hf-split", program, SplitProgram, "a tokenizer.json's split program")
        self.program = program
        self.steps = program.steps
        # Per step: (compiled, grouped, behavior, invert), or None for add_prefix_space.
        self._compiled: list[Optional[tuple[Any, Any, str, bool]]] = []
        for step in self.steps:
            if isinstance(step, PrefixSpaceStep):
                self._compiled.append(None)
                continue
            translated = translate_pattern(step.pattern, line_anchors=True)
            try:
                compiled = regex.compile(translated)
                # The same pattern as one group: its split() gives gaps and matches in C, the
                # fast path of an Isolated step (see _isolated).
                prefix = translated[:translated.index(")") + 1]  # the global flags, "(?V1-f)"
                grouped = regex.compile(f"{prefix}({translated[len(prefix):]})")
            except regex.error as exc:
                raise VocabFormatError(f"the split pattern {step.pattern!r} does not compile: {exc}") from None
            except RecursionError:
                raise UnsupportedTokenizerError(
                    f"the split pattern {step.pattern[:80]!r} nests too deeply"
                ) from None
            self._compiled.append((compiled, grouped, step.behavior, step.invert))
        self.drops_text = any(
            step is None or step[2] == "Removed" for step in self._compiled
        )

    def split(self, text: str) -> list[str]:
        """The pieces of ``text`` after every step: they concatenate to ``text`` unless
        :attr:`drops_text` (then each is a span's prefix and text, as :meth:`spans` gives them)."""
        if self.drops_text:
            return [piece[2] + text[piece[0]:piece[1]] if len(piece) == 3 else text[piece[0]:piece[1]]
                    for piece in self.spans(text)]
        pieces = [text] if text else []
        for compiled, grouped, behavior, invert in self._compiled:
            if behavior == "Isolated":  # invert changes nothing: matches and gaps are all pieces
                pieces = [part for piece in pieces for part in _isolated(compiled, grouped, piece)]
                continue
            pieces = [
                piece[start:end]
                for piece in pieces
                for start, end in hf_split(compiled, piece, behavior, invert)
                if start < end
            ]
        return pieces

    def spans(self, text: str) -> list[tuple]:
        """The pieces of ``text`` as spans: ``(start, end)``, or ``(start, end, prefix)`` for a
        piece that an ``add_prefix_space`` step gave a space (the piece is ``prefix +
        text[start:end]``). Text outside every span was deleted by a ``Removed`` step."""
        if not self.drops_text:
            spans, position = [], 0
            for piece in self.split(text):
                spans.append((position, position + len(piece)))
                position += len(piece)
            return spans
        # Each piece is (start, end, prefix): its text is prefix + text[start:end]. A step cuts
        # that text; a part that starts inside the prefix keeps the rest of it.
        pieces: list[tuple[int, int, str]] = [(0, len(text), "")] if text else []
        for step in self._compiled:
            if step is None:
                pieces = [(start, end, prefix if (prefix or text[start:end]).startswith(" ") else " " + prefix)
                          for start, end, prefix in pieces]
                continue
            compiled, grouped, behavior, invert = step
            cut: list[tuple[int, int, str]] = []
            for start, end, prefix in pieces:
                whole = prefix + text[start:end] if prefix else text[start:end]
                if behavior == "Isolated":
                    parts, position = [], 0
                    for part in _isolated(compiled, grouped, whole):
                        parts.append((position, position + len(part)))
                        position += len(part)
                elif behavior == "Removed":
                    parts = _removed(compiled, whole, invert)
                else:
                    parts = [(a, b) for a, b in hf_split(compiled, whole, behavior, invert) if a < b]
                skip = len(prefix)
                for a, b in parts:
                    cut.append((start + max(a - skip, 0), start + max(b - skip, 0), prefix[min(a, skip):min(b, skip)]))
            pieces = cut
        return [(start, end, prefix) if prefix else (start, end) for start, end, prefix in pieces]

    def __repr__(self) -> str:
        return f"HFSplitSpanner({self.program!r})"
