"""The ``sentencepiece`` spanner: a SentencePiece vocabulary's user-defined pieces cut out.

SentencePiece BPE has no pre-tokenizer: it merges over the whole normalized text, and the
only boundaries are its user-defined pieces, which ``sentencepiece`` matches in the normalized
text (the longest one at each place, leftmost first) and never merges with their neighbours.
So the pieces are the stretches between those matches and the matches themselves; the
``score-merge`` encoder encodes a user-defined piece as its id and merges each stretch. Where
no token has a ``▁`` right after another character (real models: pieces are words, their
``▁`` leading), no merge crosses such a place, and each stretch is cut there too: the ids are
the same, and repeated words come from the piece cache. A model with a few tokens that do
(Gemma's ``>▁</``: the model's ``joined`` tokens) is cut there too, but inside a place of the
text that spells one of them. A tokenizer.json whose ``Metaspace`` has ``split: true`` is cut
before every ``▁`` (HF's ``MergedWithNext``: ``▁▁a`` is ``▁``, ``▁a``), which changes the ids
where a token joins two ``▁`` or a ``▁`` to what is before it.
``spanner="auto"`` picks it for a vocabulary whose spanner is a
:class:`~wordsplit.spec.SentencePieceSplit`, which it is built from.

>>> from wordsplit.spec import SentencePieceSplit
>>> SentencePieceSpanner(SentencePieceSplit(user_defined=("<br>", "<b>"))).split("▁a<br><b>c")
['▁a', '<br>', '<b>', 'c']
"""

from __future__ import annotations

import re

from ..sentencepiece import SPACE
from ..spec import SentencePieceSplit
from .stage_check import refuse_other_stage


class SentencePieceSpanner:
    """Cuts the user-defined pieces out of normalized text (see the module docstring)."""

    def __init__(self, model: SentencePieceSplit) -> None:
        refuse_other_stage("sentencepiece", model, SentencePieceSplit, "a SentencePiece model's split")
        self.model = model
        # Cut before every ▁ (Metaspace's split), or before each ▁ after another character
        # where no merge can join them (model.words), but inside a joined token.
        if model.metaspace_split:
            self._words = re.compile("(?<=.)(?=" + SPACE + ")", re.DOTALL)
        else:
            self._words = re.compile("(?<=[^" + SPACE + "])(?=" + SPACE + ")") if model.words else None
        self._joined = () if model.metaspace_split else model.joined
        user_defined = sorted(model.user_defined, key=len, reverse=True)
        # Alternatives longest first: at each place the regex engine takes the first that
        # matches, which is then the longest, and it scans left to right.
        self._matcher = re.compile("|".join(map(re.escape, user_defined))) if user_defined else None

    def split(self, text: str) -> list[str]:
        pieces = self._user_defined(text)
        if self._words is None:
            return pieces
        return [part for piece in pieces for part in self._word_parts(piece)]

    def _word_parts(self, piece: str) -> list[str]:
        """``piece`` cut before each ``▁`` after another character, but inside a joined token."""
        if not self._joined:
            return self._words.split(piece)
        inside: set[int] = set()  # the places a joined token spells across
        for token in self._joined:
            start = piece.find(token)
            while start >= 0:
                inside.update(range(start + 1, start + len(token)))
                start = piece.find(token, start + 1)
        parts, done = [], 0
        for cut in self._words.finditer(piece):
            if cut.start() not in inside:
                parts.append(piece[done:cut.start()])
                done = cut.start()
        parts.append(piece[done:])
        return parts

    def _user_defined(self, text: str) -> list[str]:
        if self._matcher is None:
            return [text] if text else []
        pieces: list[str] = []
        done = 0
        for match in self._matcher.finditer(text):
            if match.start() > done:
                pieces.append(text[done:match.start()])
            pieces.append(match.group())
            done = match.end()
        if done < len(text):
            pieces.append(text[done:])
        return pieces
