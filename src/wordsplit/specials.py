"""Special and added tokens: the one policy resolver every encode uses.

Policy (tiktoken's): a *special* token literal in the text raises
:class:`DisallowedSpecialError` unless the call allows it (``allowed_special="all"`` or a
set); ``disallowed_special=()`` encodes it as plain text. *Added* (non-special) tokens, like
Qwen3's ``<think>``, are part of the vocabulary and always matched, as HF tokenizers does.
Where literals overlap, the longest wins (HF's leftmost-longest matching). The engines
(:mod:`wordsplit.engines`) find the literals; this module turns the arguments into the two sets
they take.
"""

from __future__ import annotations

from typing import AbstractSet, Collection, Literal, Union

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
