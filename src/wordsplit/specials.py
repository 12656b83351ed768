"""Special and added tokens: the one policy resolver every encode uses.

Policy (tiktoken's): a *special* token literal in the text raises
:class:`DisallowedSpecialError` unless the call allows it (``allowed_special="all"`` or a
set); ``disallowed_special=()`` (or ``None``) encodes it as plain text. *Added* (non-special)
tokens, like Qwen3's ``<think>``, are part of the vocabulary and always matched, as HF
tokenizers does. Where literals overlap, the longest wins (HF's leftmost-longest matching).
This module checks the arguments and turns them into the sets the engines take, the same
way for both backends, and has the literal scan of the Python engine (:class:`LiteralScan`,
with HF's added-token flags; the native engine's ``Pipeline::walk_literals`` and, for the second
pass on normalized text, ``crates/wordsplit/src/pipeline/second_pass.rs`` mirror it).

Where tiktoken 0.14 defines the behaviour, it is tiktoken's:

* ``disallowed_special=None`` disallows nothing (tiktoken tests it for truth);
* a string in ``disallowed_special`` that is not a special token of the vocabulary is still
  disallowed: a text containing it raises :class:`DisallowedSpecialError` (tiktoken searches
  the text for every disallowed string before encoding);
* a literal both allowed and disallowed is disallowed (tiktoken's check runs first);
* a name in ``allowed_special`` that is not a special token is ignored.

Arguments of the wrong type (``allowed_special=None``, a bare string, items that are not
strings) raise :class:`OptionTypeError`.
"""

from __future__ import annotations

import functools
import re
from typing import AbstractSet, Collection, Literal, Mapping, NamedTuple, Optional, Union

from .errors import DisallowedSpecialError, OptionTypeError
from .vocab import (
    C_SPACE, C_WHITE_SPACE, LSTRIP, NORMALIZED, RSTRIP, SINGLE_WORD, WHITE_SPACE, Vocab, normalized_contents,
)

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str], None]


class SpecialPolicy(NamedTuple):
    """The resolved policy of one call.

    Attributes:
        allowed: special literals of the vocabulary encoded as tokens.
        disallowed: special literals of the vocabulary that raise when found.
        other: disallowed strings that are not special tokens of the vocabulary; a text
            containing one raises (see :meth:`check`). Empty in nearly every call.
    """

    allowed: frozenset[str]
    disallowed: frozenset[str]
    other: frozenset[str] = frozenset()

    def check(self, text: object) -> None:
        """Raise :class:`DisallowedSpecialError` when ``text`` contains a disallowed string
        that is not a special token (the engines find the special ones themselves). A text
        that is not a ``str`` is left to the engine, which says so.

        >>> policy = SpecialPolicy(frozenset(), frozenset(), frozenset(["foo"]))
        >>> try:
        ...     policy.check("a foo")
        ... except DisallowedSpecialError as exc:
        ...     print(str(exc).split(",")[0])
        text contains 'foo'
        """
        if not self.other or not isinstance(text, str):
            return
        # As tiktoken: one search of the raw text for every disallowed string, special or not,
        # so the first one in the text is the one reported.
        match = _search_pattern(self.disallowed | self.other).search(text)
        if match is None:
            return
        found = match.group()
        if found in self.disallowed:
            raise disallowed_error(found)
        raise DisallowedSpecialError(
            f"text contains {found!r}, which disallowed_special lists (it is not a special token of "
            "this vocabulary, so it could only be encoded as plain text); remove it from disallowed_special "
            "to encode it as plain text"
        )

    def check_batch(self, texts: list) -> None:
        """:meth:`check` for each text, in order, up to the first that is not a str."""
        if not self.other:
            return
        for text in texts:
            if not isinstance(text, str):
                return
            self.check(text)


@functools.lru_cache(maxsize=32)
def _search_pattern(strings: frozenset[str]) -> "re.Pattern[str]":
    # Longest first: at the leftmost position the longest string is reported, as the engines
    # match literals (leftmost-longest).
    return re.compile("|".join(re.escape(s) for s in sorted(strings, key=lambda s: (-len(s), s))))


def disallowed_error(token: str) -> DisallowedSpecialError:
    """The error for a disallowed special literal found in the text (both engines' words)."""
    return DisallowedSpecialError(
        f"text contains the special token {token!r}, which is disallowed; pass "
        f"allowed_special={{{token!r}}} (or allowed_special='all') to encode it as a special token, "
        "or disallowed_special=() to encode it as plain text"
    )


def _strings(value: object, name: str, what: str) -> frozenset[str]:
    """``value`` as a frozenset of strings, or the OptionTypeError that says what was expected."""
    if isinstance(value, str):
        raise OptionTypeError(f"{name} must be 'all' or {what} of strings, not the string {value!r}; "
                              f"write {name}={{{value!r}}}")
    try:
        strings = value if isinstance(value, frozenset) else frozenset(value)  # type: ignore[arg-type]
    except TypeError:
        raise OptionTypeError(f"{name} must be 'all' or {what} of strings, not {type(value).__name__}") from None
    for item in strings:
        if not isinstance(item, str):
            raise OptionTypeError(f"{name} holds {item!r} ({type(item).__name__}); special tokens are strings")
    return strings


def resolve_special_policy(
    vocab: Vocab, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
) -> SpecialPolicy:
    """Check the ``allowed_special`` / ``disallowed_special`` arguments and resolve them.

    Raises:
        OptionTypeError: an argument that is not ``"all"`` or a collection of strings
            (``disallowed_special`` may also be None: nothing is disallowed).

    >>> from wordsplit import load_vocab
    >>> policy = resolve_special_policy(load_vocab("gpt2"), frozenset(), "all")
    >>> sorted(policy.disallowed)
    ['<|endoftext|>']
    """
    specials = frozenset(vocab.special_tokens)
    if isinstance(allowed_special, str) and allowed_special == "all":
        allowed = specials
    else:
        allowed = _strings(allowed_special, "allowed_special", "a set")
    other: frozenset[str] = frozenset()
    if isinstance(disallowed_special, str) and disallowed_special == "all":
        disallowed = specials - allowed
    elif disallowed_special is None:
        disallowed = frozenset()
    else:
        disallowed = _strings(disallowed_special, "disallowed_special", "a collection")
        if not disallowed <= specials:
            other = disallowed - specials
            disallowed = disallowed & specials
        allowed = allowed - disallowed
    if not allowed <= specials:
        allowed = allowed & specials  # names that are not special tokens are ignored, as tiktoken does
    return SpecialPolicy(allowed, disallowed, other)


# -- the literal scan ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _word_char() -> "re.Pattern[str]":
    import regex

    return regex.compile(r"\w")


@functools.lru_cache(maxsize=4096)
def is_word_char(ch: str) -> bool:
    """Whether HF's ``single_word`` check counts ``ch`` as a word character: Rust
    ``regex``'s ``\\w`` at Unicode 16.0 (``regex_syntax::is_word_character``, the native
    core's). The ``regex`` module follows a newer Unicode, whose new letters (U+3D000's block
    and more) are no word characters for HF: a character counts when ``regex`` says so and it
    is assigned in Unicode 16 (a letter, mark or number of :mod:`wordsplit._unicode16`, or
    assigned in Python's older ``unicodedata``).

    >>> is_word_char("a"), is_word_char("_"), is_word_char("\u0301"), is_word_char("²"), is_word_char("\U0003d000")
    (True, True, True, False, False)
    """
    import unicodedata

    if not _word_char().match(ch):
        return False
    return unicodedata.category(ch) != "Cn" or _in_unicode16_lmn(ord(ch))


@functools.lru_cache(maxsize=1)
def _lmn16() -> tuple[list[int], list[int]]:
    from ._unicode16 import L, M, N

    ranges = sorted((*L, *M, *N))
    return [a for a, _ in ranges], [b for _, b in ranges]


def _in_unicode16_lmn(cp: int) -> bool:
    import bisect

    starts, ends = _lmn16()
    i = bisect.bisect_right(starts, cp) - 1
    return i >= 0 and cp <= ends[i]


class LiteralScan:
    """The literal scan of one text: special and added tokens found leftmost-longest, with
    HF's ``lstrip``, ``rstrip``, ``single_word`` and ``normalized`` flags.

    As HF's ``AddedVocabulary``, the scan has two passes: tokens without the ``normalized``
    flag are found in the text, then tokens with it in each stretch the first pass left. Given
    ``normalize`` (see :func:`second_pass_normalizes`), the second pass is HF's exactly: each
    stretch is normalized first (by the caller) and searched for the tokens' normalized
    contents (:meth:`second_pass`); without it, both passes run on the text as it is
    (:meth:`spans`). In each pass, a match of a ``single_word`` token next to a word
    character (inside the stretch) is dropped and the search goes on after it; an ``lstrip``
    token takes the whitespace before it back to the previous token, an ``rstrip`` token the
    whitespace after it. The search goes on after the match, so a token that starts with
    whitespace can match inside the whitespace an ``rstrip`` token took: its span then
    overlaps that token's, and the plain text after it starts at its end, as in HF (an
    ``lstrip`` one starts where that token ends, and one left with nothing is dropped). A
    special token the call does not allow is plain text, and the search goes on one character
    after its start. With :data:`~wordsplit.vocab.C_SPACE` (llama.cpp's token attributes),
    ``lstrip`` and ``rstrip`` take ASCII whitespace only (C's ``isspace``), so U+3000 after
    a llama.cpp ``rstrip`` token stays text.

    >>> from wordsplit.vocab import LSTRIP, SINGLE_WORD
    >>> scan = LiteralScan({"<m>": 7, "x": 8}, {"<m>": LSTRIP, "x": SINGLE_WORD})
    >>> scan.split("a  <m>b x", lambda literal: True)
    [('a', None), ('  <m>', 7), ('b ', None), ('x', 8)]
    >>> scan.split("ax <m>", lambda literal: True)
    [('ax', None), (' <m>', 7)]
    >>> from wordsplit.vocab import C_SPACE, RSTRIP
    >>> LiteralScan({"<e>": 9}, {"<e>": RSTRIP | C_SPACE}).split("<e>\\n\\u3000x", lambda literal: True)
    [('<e>\\n', 9), ('\\u3000x', None)]
    """

    def __init__(self, literals: dict[str, int], flags: Mapping[str, int], normalize=None) -> None:
        self.ids = literals
        self.flags = flags
        raw = [s for s in literals if not flags.get(s, 0) & NORMALIZED]
        self._raw = _alternation(raw)
        self._raw_of = {s: s for s in raw}
        #: Whether the second pass runs on normalized text (:meth:`second_pass`).
        self.normalizes = normalize is not None
        if normalize is not None:
            contents = normalized_contents(literals, flags, normalize)
            self._normalized_of = {content: literal for literal, content in contents.items()}
        else:
            self._normalized_of = {s: s for s in literals if flags.get(s, 0) & NORMALIZED}
        self._normalized = _alternation(list(self._normalized_of)) if self._normalized_of else None

    def spans(self, text: str, is_token) -> list[tuple[int, int, Optional[str]]]:
        """``(start, end, literal or None)`` in order: the tokens (their span with the
        whitespace they strip) and the plain stretches between them (never empty), which
        cover ``text`` (a token's span, and the plain text after it, may overlap the token
        before it, see above). With ``normalize``, the second pass is left to
        :meth:`second_pass`. ``is_token(literal)`` decides a literal's fate: True, False (plain
        text), or it raises."""
        out: list[tuple[int, int, Optional[str]]] = []
        second = None if self.normalizes else self._normalized

        def plain(start: int, end: int) -> None:
            if second is not None:  # the second pass, in the stretch the first left
                start = self._pass(second, self._normalized_of, text, start, end, is_token, out)
            if start < end:
                out.append((start, end, None))

        plain(self._pass(self._raw, self._raw_of, text, 0, len(text), is_token, out, plain), len(text))
        return out

    def second_pass(self, normalized: str, is_token) -> list[tuple[int, int, Optional[str]]]:
        """:meth:`spans` of the second pass over a ``normalized`` stretch (with
        ``normalize``): the ``normalized`` tokens found by their normalized contents, and the
        plain stretches between them, in the normalized text.

        >>> from wordsplit.vocab import NORMALIZED
        >>> scan = LiteralScan({"<N>": 5}, {"<N>": NORMALIZED}, normalize=str.lower)
        >>> scan.second_pass("a<n>b", lambda literal: True)
        [(0, 1, None), (1, 4, '<N>'), (4, 5, None)]
        """
        out: list[tuple[int, int, Optional[str]]] = []
        start = self._pass(self._normalized, self._normalized_of, normalized, 0, len(normalized), is_token, out)
        if start < len(normalized):
            out.append((start, len(normalized), None))
        return out

    def split(self, text: str, is_token) -> list[tuple[str, Optional[int]]]:
        """:meth:`spans` as ``(text, token id or None)`` pairs (for reading and doctests)."""
        return [(text[s:e], None if lit is None else self.ids[lit]) for s, e, lit in self.spans(text, is_token)]

    def _pass(self, pattern, literal_of, text, lo, hi, is_token, out, plain=None) -> int:
        """One pass over ``text[lo:hi]``: append its tokens to ``out``, each after the plain
        text before it (through ``plain`` when given); returns where the plain text after the
        last token starts (the caller handles that stretch). ``literal_of``: the literal of
        each text the pattern matches."""
        flags = self.flags
        plain_start = search_from = lo
        while pattern is not None and search_from < hi:
            match = pattern.search(text, search_from, hi)
            if match is None:
                break
            literal = literal_of[match.group()]
            start, stop = match.span()
            if not is_token(literal):
                search_from = start + 1  # plain text: look again one character later
                continue
            search_from = stop  # HF's search goes on after the match, whatever the flags take
            bits = flags.get(literal, 0)
            if bits:
                if bits & SINGLE_WORD:
                    if (start > lo and is_word_char(text[start - 1])) or (stop < hi and is_word_char(text[stop])):
                        continue
                space = C_WHITE_SPACE if bits & C_SPACE else WHITE_SPACE
                if bits & LSTRIP:  # back over whitespace, not into the previous token's span
                    while start > plain_start and text[start - 1] in space:
                        start -= 1
                    start = max(start, plain_start)  # (a match inside that span starts at its end)
                if bits & RSTRIP:
                    while stop < hi and text[stop] in space:
                        stop += 1
                if start >= stop:
                    # An lstrip match inside the whitespace the token before took: HF drops
                    # it when nothing is left (and fails when its start passes its end, which
                    # the loader refuses, see wordsplit.formats.hf).
                    continue
            if plain is not None:
                plain(plain_start, start)
            elif plain_start < start:
                out.append((plain_start, start, None))
            out.append((start, stop, literal))
            # HF's plain text goes on from the token's end, even from inside the whitespace
            # the token before took (so that text is encoded again).
            plain_start = stop
        return plain_start


def _alternation(literals: list[str]) -> Optional["re.Pattern[str]"]:
    # Longest first: Python's leftmost-first alternation then picks the longest literal at the
    # leftmost position, as the native engine's leftmost-longest automaton does.
    ordered = sorted(literals, key=lambda s: (-len(s), s))
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None
