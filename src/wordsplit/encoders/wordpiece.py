"""``wordpiece`` and ``word-level``: the models that look a piece up in the vocabulary.

WordPiece (BERT) cuts a piece from the left into the longest tokens the vocabulary has, every
token after the first spelled with the continuing-subword prefix (``##``): at each position
it tries the longest candidate first and shortens it one character at a time. A piece of more
than ``max_input_chars_per_word`` characters, or one with a position where no candidate is a
token, is the single unknown token. WordLevel looks the whole piece up, else the unknown
token. Both as HF ``tokenizers`` computes them; the unknown token must be in the vocabulary
only when a piece needs it (HF raises then too).

>>> from wordsplit import Vocab
>>> from wordsplit.spec import PipelineSpec, SplitProgram, Split, WordPiece
>>> vocab = Vocab(name="tiny", ranks={t.encode(): i for i, t in enumerate(["[UNK]", "un", "##aff", "##able", "a"])},
...               pipeline=PipelineSpec(spanner=SplitProgram((Split(r"\\s", "Removed"),)), model=WordPiece()))
>>> encoder = WordPieceEncoder(MergeTables(vocab))
>>> encoder.encode_piece(b"unaffable"), encoder.encode_piece(b"unaffablex")
([1, 2, 3], [0])
"""

from __future__ import annotations

from typing import Callable, Optional

from ..errors import EncodeInputError
from ..spec import WordLevel, WordPiece
from ..tables import MergeTables

__all__ = ["WordLevelEncoder", "WordPieceEncoder", "token_ids_by_text"]


def token_ids_by_text(vocab) -> dict[str, int]:
    """The model's tokens by their text (HF's model vocab: the loaders keep every entry of it,
    special ones too, among the vocabulary's tokens)."""
    return {data.decode("utf-8", "surrogateescape"): i for data, i in vocab.ranks.items()}


def _unknown_id(ids: dict[str, int], unk_token: str, vocab, piece: str) -> int:
    """The unknown token's id, or the error HF raises when a piece needs one it does not have."""
    unk = ids.get(unk_token)
    if unk is None:
        raise EncodeInputError(
            f"{vocab.name}: the piece {piece[:40]!r} needs the unknown token {unk_token!r}, which is not in the "
            "vocabulary (HF raises MissingUnkToken); add it to the vocabulary"
        )
    return unk


class WordPieceEncoder:
    """WordPiece's greedy longest match (see the module docstring)."""

    def __init__(self, tables: MergeTables) -> None:
        self.vocab = tables.vocab
        model = self.vocab.pipeline.model
        if not isinstance(model, WordPiece):
            raise TypeError(f"the wordpiece encoder runs a WordPiece model, not {model.kind}")
        self.model = model
        self.ids = token_ids_by_text(self.vocab)
        prefix = model.continuing_subword_prefix
        # The longest candidate worth trying at a piece's start and after it, in characters.
        self._longest_first = max((len(t) for t in self.ids), default=0)
        self._longest_next = max((len(t) - len(prefix) for t in self.ids if t.startswith(prefix)), default=0)

    def encode_piece(self, piece: bytes) -> list[int]:
        return self.encode_text(piece.decode("utf-8"))

    def encode_text(self, text: str) -> list[int]:
        """The ids of one piece of text."""
        return [i for i, _ in self.tokens(text)]

    def tokens(self, text: str, trace: Optional[Callable[[int, list[str], Optional[int]], None]] = None
               ) -> list[tuple[int, int]]:
        """``(id, end)`` of each token of ``text``: the token and the character where its part
        of the text ends (the unknown token spans the whole piece). ``trace(start, tried, id)``
        sees each position's candidates, longest first, and the id of the last one tried (None:
        no candidate is a token, and the piece is the unknown token)."""
        model, ids = self.model, self.ids
        if len(text) > model.max_input_chars_per_word:
            return [(_unknown_id(ids, model.unk_token, self.vocab, text), len(text))]
        prefix = model.continuing_subword_prefix
        out: list[tuple[int, int]] = []
        start = 0
        while start < len(text):
            longest = self._longest_first if start == 0 else self._longest_next
            end = min(len(text), start + longest)
            found, tried = None, []
            while end > start:
                candidate = text[start:end] if start == 0 else prefix + text[start:end]
                found = ids.get(candidate)
                if trace is not None:
                    tried.append(candidate)
                if found is not None:
                    break
                end -= 1
            if trace is not None:
                trace(start, tried, found)
            if found is None:
                return [(_unknown_id(ids, model.unk_token, self.vocab, text), len(text))]
            out.append((found, end))
            start = end
        return out


class WordLevelEncoder:
    """WordLevel's lookup of the whole piece (see the module docstring)."""

    def __init__(self, tables: MergeTables) -> None:
        self.vocab = tables.vocab
        model = self.vocab.pipeline.model
        if not isinstance(model, WordLevel):
            raise TypeError(f"the word-level encoder runs a WordLevel model, not {model.kind}")
        self.model = model
        self.ids = token_ids_by_text(self.vocab)

    def encode_piece(self, piece: bytes) -> list[int]:
        text = piece.decode("utf-8")
        found = self.ids.get(text)
        return [found if found is not None else _unknown_id(self.ids, self.model.unk_token, self.vocab, text)]

    def tokens(self, text: str) -> list[tuple[int, int]]:
        """``(id, end)`` of the one token of ``text``."""
        return [(self.encode_piece(text.encode("utf-8"))[0], len(text))]
