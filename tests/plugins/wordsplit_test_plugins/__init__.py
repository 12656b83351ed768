"""A plug-in package as a user would write one: it lives outside wordsplit and registers one
component of every kind through the public API when it is imported.

- spanner ``ws-words``: runs of White_Space / of other characters, written by hand, for the
  exact pattern ``WORDS_PATTERN`` (so ``spanner="auto"`` picks it for that pattern);
- encoder ``naive-bpe``: the textbook BPE loop over ``tables.pair_rank``;
- normalizer ``lowercase``: ``str.lower``;
- loader ``ranks-txt``: a made-up format, ``*.ranks.txt``: a first line ``pattern <JSON
  string>``, then ``<token bytes in hex> <id>`` per line;
- named vocabularies ``cl100k-words`` (cl100k's ranks with ``WORDS_PATTERN``) and
  ``cl100k-lower`` (cl100k with the ``lowercase`` normalizer).

``REGISTERED`` lists what it registered, so that the tests can remove it again.
"""

from __future__ import annotations

import json
from pathlib import Path

import wordsplit
from wordsplit import Vocab, load_vocab

WORDS_PATTERN = r"\S+|\s+"

# Unicode White_Space (what \s means for tiktoken and HF): 25 code points.
WHITE_SPACE = frozenset(map(chr, [
    *range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
]))

REGISTERED: list[tuple[str, str]] = []  # (registry, name)


@wordsplit.register_spanner("ws-words", patterns=(WORDS_PATTERN,))
class WhiteSpaceRunsSpanner:
    """``\\S+|\\s+`` by hand: maximal runs of White_Space and of everything else."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def split(self, text: str) -> list[str]:
        pieces: list[str] = []
        start = 0
        for i in range(1, len(text) + 1):
            if i == len(text) or (text[i] in WHITE_SPACE) != (text[start] in WHITE_SPACE):
                pieces.append(text[start:i])
                start = i
        return pieces


@wordsplit.register_encoder("naive-bpe")
class NaiveBpeEncoder:
    """Merge the adjacent pair of lowest ``pair_rank`` (leftmost first) until none merges."""

    def __init__(self, tables) -> None:
        self.tables = tables

    def encode_piece(self, piece: bytes) -> list[int]:
        whole = self.tables.whole(piece)
        if whole is not None:
            return [whole]
        parts = [piece[i:i + 1] for i in range(len(piece))]
        while True:
            ranked = [(self.tables.pair_rank(a, b), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            ranked = [(rank, i) for rank, i in ranked if rank is not None]
            if not ranked:
                return [self.tables.ranks[part] for part in parts]
            _, i = min(ranked)
            parts[i:i + 2] = [parts[i] + parts[i + 1]]


@wordsplit.register_normalizer("lowercase")
def lowercase(text: str) -> str:
    return text.lower()


@wordsplit.register_loader("ranks-txt", suffixes=(".ranks.txt",))
def load_ranks_txt(path: Path) -> Vocab:
    lines = Path(path).read_text().splitlines()
    pattern = json.loads(lines[0].removeprefix("pattern "))
    ranks = {bytes.fromhex(token): int(i) for token, i in (line.split() for line in lines[1:] if line)}
    return Vocab(name=Path(path).name.removesuffix(".ranks.txt"), ranks=ranks, pattern=pattern)


def write_ranks_txt(path: Path, ranks, pattern: str) -> None:
    """Write ``ranks`` in the ``ranks-txt`` format."""
    lines = [f"pattern {json.dumps(pattern)}"] + [f"{token.hex()} {i}" for token, i in ranks.items()]
    Path(path).write_text("\n".join(lines) + "\n")


def _cl100k_variant(name: str, **changes) -> Vocab:
    base = load_vocab("cl100k_base")
    fields = dict(name=name, ranks=base.ranks, pattern=base.pattern, special_tokens=base.special_tokens,
                  n_vocab=base.n_vocab)
    return Vocab(**{**fields, **changes})


wordsplit.register_vocab("cl100k-words", lambda: _cl100k_variant("cl100k-words", pattern=WORDS_PATTERN))
wordsplit.register_vocab("cl100k-lower", lambda: _cl100k_variant("cl100k-lower", normalizer="lowercase"))

REGISTERED += [("spanner", "ws-words"), ("encoder", "naive-bpe"), ("normalizer", "lowercase"),
               ("loader", "ranks-txt"), ("vocab", "cl100k-words"), ("vocab", "cl100k-lower")]
