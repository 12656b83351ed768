"""Special and added tokens: the one policy resolver every encode uses.

Policy (tiktoken's): a *special* token literal in the text raises
:class:`DisallowedSpecialError` unless the call allows it (``allowed_special="all"`` or a
set); ``disallowed_special=()`` (or ``None``) encodes it as plain text. *Added* (non-special)
tokens, like Qwen3's ``<think>``, are part of the vocabulary and always matched, as HF
tokenizers does. Where literals overlap, the longest wins (HF's leftmost-longest matching).
The engines (:mod:`wordsplit.engines`) find the literals; this module checks the arguments
and turns them into the sets the engines take, the same way for both backends.

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
from typing import AbstractSet, Collection, Literal, NamedTuple, Union

from .errors import DisallowedSpecialError, OptionTypeError
from .vocab import Vocab

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
