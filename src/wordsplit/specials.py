"""Special and added tokens: the one policy resolver and the splitter every encode uses.

Policy (tiktoken's): a *special* token literal in the text raises
:class:`DisallowedSpecialError` unless the call allows it (``allowed_special="all"`` or a
set); ``disallowed_special=()`` encodes it as plain text. *Added* (non-special) tokens, like
Qwen3's ``<think>``, are part of the vocabulary and always matched, as HF tokenizers does.
Where literals overlap, the longest wins (HF's leftmost-longest matching).

>>> from wordsplit import load_vocab
>>> splitter = SpecialSplitter(load_vocab("qwen3"))
>>> splitter.split("hi<think>there", frozenset())
[('hi', None), ('<think>', 151667), ('there', None)]
"""

from __future__ import annotations

import functools
import re
from typing import AbstractSet, Collection, Literal, Optional, Union

from .errors import DisallowedSpecialError
from .vocab import Vocab

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str]]


def resolve_special_policy(
    vocab: Vocab, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
) -> tuple[frozenset[str], frozenset[str]]:
    """Turn the ``allowed_special`` / ``disallowed_special`` arguments into two sets of literals.

    >>> from wordsplit import load_vocab
    >>> allowed, disallowed = resolve_special_policy(load_vocab("gpt2"), frozenset(), "all")
    >>> sorted(disallowed)
    ['<|endoftext|>']
    """
    specials = frozenset(vocab.special_tokens)
    if allowed_special == "all":
        allowed = specials
    else:
        if isinstance(allowed_special, str):
            raise TypeError(
                f"allowed_special must be 'all' or a set of strings, not the string {allowed_special!r}; "
                f"write allowed_special={{{allowed_special!r}}}"
            )
        allowed = frozenset(allowed_special)
    if disallowed_special == "all":
        disallowed = specials - allowed
    else:
        if isinstance(disallowed_special, str):
            raise TypeError(
                f"disallowed_special must be 'all' or a collection of strings, not {disallowed_special!r}"
            )
        disallowed = frozenset(disallowed_special)
    return allowed, disallowed


class SpecialSplitter:
    """Finds special/added token literals in text for one vocabulary."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self.literals = vocab.all_special_literals
        self._added = frozenset(vocab.added_tokens)

    @staticmethod
    def _alternation(literals: frozenset[str]) -> Optional[re.Pattern[str]]:
        if not literals:
            return None
        # Longest first, so that Python's leftmost-first alternation picks the longest literal.
        return re.compile("|".join(re.escape(s) for s in sorted(literals, key=lambda s: (-len(s), s))))

    @functools.lru_cache(maxsize=64)
    def _matcher(self, allowed: frozenset[str]) -> Optional[re.Pattern[str]]:
        return self._alternation(allowed | self._added)

    @functools.lru_cache(maxsize=64)
    def _checker(self, disallowed: frozenset[str]) -> Optional[re.Pattern[str]]:
        return self._alternation(disallowed)

    def check(self, text: str, disallowed: frozenset[str]) -> None:
        """Raise DisallowedSpecialError if ``text`` contains one of ``disallowed``."""
        checker = self._checker(disallowed)
        match = checker.search(text) if checker is not None else None
        if match:
            token = match.group()
            raise DisallowedSpecialError(
                f"text contains the special token {token!r}, which is disallowed; pass "
                f"allowed_special={{{token!r}}} (or allowed_special='all') to encode it as a special token, "
                "or disallowed_special=() to encode it as plain text"
            )

    def split(self, text: str, allowed: frozenset[str]) -> list[tuple[str, Optional[int]]]:
        """Cut ``text`` into ``(segment, None)`` plain parts and ``(literal, id)`` token parts."""
        matcher = self._matcher(allowed)
        if matcher is None:
            return [(text, None)] if text else []
        parts: list[tuple[str, Optional[int]]] = []
        start = 0
        for match in matcher.finditer(text):
            if match.start() > start:
                parts.append((text[start:match.start()], None))
            parts.append((match.group(), self.literals[match.group()]))
            start = match.end()
        if start < len(text):
            parts.append((text[start:], None))
        return parts
