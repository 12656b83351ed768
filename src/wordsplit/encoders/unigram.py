"""``unigram``: the Unigram language model's segmentation (Viterbi), exactly as ``sentencepiece``
(``unigram_model.cc``, ``Model::EncodeOptimized``) and HF ``tokenizers``
(``models/unigram/model.rs``, ``encode_optimized``) compute it, O(n x k) per piece for the k
pieces that start at each place.

The rules both share: every place of the piece (a character boundary), in order, extends the
best path that ends there (its score; 0 at the start) by each piece that starts there, shortest
first; a piece's candidate replaces the best path ending where it ends when none is there yet or
when its score is strictly higher (so on ties the path found first stays: the one whose last
token starts earliest, then the shortest last token). Where no piece of exactly one character
starts at a place, the unknown token covers that character with the score lowest score − 10
(after the pieces, so on a tie a piece keeps its place). The path is read back from the end,
and each run of consecutive unknown tokens (a token whose id is the unknown one) is one token,
or with ``byte_fallback`` the ``<0xNN>`` tokens of its UTF-8 bytes. A piece no token covers and
a model without an unknown token is an :class:`EncodeInputError` (HF's ``MissingUnkId``).

What each tool adds, by the vocabulary's decoder style (the tool the file is read with,
:data:`wordsplit.sentencepiece.SEMANTICS`):

* ``sentencepiece`` (a ``.model`` file, as ``sentencepiece`` 0.2.3 computes it): the pieces are
  the NORMAL and USER_DEFINED ones (the loader keeps CONTROL and UNKNOWN pieces as special
  tokens, and the byte pieces out of the search); scores are float32 and every sum is rounded to
  float32 (C++ ``float``); the lowest score is the NORMAL pieces' lowest; a USER_DEFINED piece
  (:attr:`~wordsplit.spec.Unigram.user_defined`) of ``b`` UTF-8 bytes scores
  ``float32(0.1 x (b - 1))``, so the search takes it where nothing better covers its text
  (longer ones first: two pieces of a text score less than one); the byte fallback takes each
  unknown character's bytes (every byte piece exists: the loader checks it). Where the score of
  the best path ending at a place passes ±100,000, that place and every later one reached are
  rebased to it (float32 subtractions), as ``sentencepiece`` does to keep float32 sums precise,
  which changes which of two near-equal paths wins on texts of tens of thousands of tokens.
* ``hf`` (a tokenizer.json): every entry of the model's vocab is a piece, the special ones
  too; scores and sums are float64; the lowest score is the whole vocab's; a run of unknown
  characters is the token its text spells if there is one, else its bytes' ``<0xNN>`` tokens
  when ``byte_fallback`` is on and every one of them exists, else the unknown token.
* ``llama.cpp`` (a GGUF ``t5`` file, ``llm_tokenizer_ugm``): the pieces are the vocabulary's
  tokens (its NORMAL, USER_DEFINED and UNUSED ones: the loader keeps CONTROL and UNKNOWN
  ones as special tokens only); a USER_DEFINED one (an added token) scores 0; sums are
  float64 over the float32 scores; the lowest score is the NORMAL tokens' lowest (not the
  added or UNUSED ones', the decoder's ``unused``) and the unknown score is float32 (lowest −
  10); a run of unknown characters is the unknown token, never bytes.

>>> from wordsplit import Vocab
>>> from wordsplit.spec import PipelineSpec, SentencePieceDecoder, SentencePieceSplit, Unigram
>>> pieces = ["<unk>", "a", "b", "c", "d", "cd", "ab", "abc", "abcd"]
>>> vocab = Vocab(name="tiny", ranks={t.encode(): i for i, t in enumerate(pieces)},
...               scores=[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 5.0, 10.0],
...               pipeline=PipelineSpec(spanner=SentencePieceSplit(), model=Unigram(),
...                                     decoder=SentencePieceDecoder(style="hf")))
>>> encoder = UnigramEncoder(MergeTables(vocab))
>>> [pieces[i] for i in encoder.encode_text("abcdacdxx")]
['abcd', 'a', 'cd', '<unk>']
>>> encoder.tokens("abxcd")
[(6, 2), (0, 3), (5, 5)]
>>> encoder.best_path("abxcd")  # (start, end, id) of each token, and the path's score
([(0, 2, 6), (2, 3, 0), (3, 5, 5)], -7.0)
"""

from __future__ import annotations

import struct
from typing import Optional

from ..errors import EncodeInputError, VocabFormatError
from ..spec import Unigram
from ..tables import MergeTables

__all__ = ["UNK_PENALTY", "UnigramEncoder", "float32"]

#: The score the unknown token has below the lowest score (``kUnkPenalty``, ``K_UNK_PENALTY``).
UNK_PENALTY = 10.0
_F32 = struct.Struct("<f")
#: Where sentencepiece rebases the sums of a path (``kScoreResetThreshold``).
REBASE_AT = 100000.0
_TERMINAL = ""  # the key of a trie node's (id, score) when a piece ends there


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (what C++ stores in a ``float``).

    >>> float32(0.1)
    0.10000000149011612
    """
    return _F32.unpack(_F32.pack(value))[0]


def byte_token_text(byte: int) -> str:
    """The text of a byte's token: ``<0x`` + two uppercase hex digits + ``>``."""
    return f"<0x{byte:02X}>"


class UnigramEncoder:
    """The Unigram model's Viterbi segmentation (see the module docstring)."""

    def __init__(self, tables: MergeTables) -> None:
        vocab = self.vocab = tables.vocab
        model = vocab.pipeline.model
        if not isinstance(model, Unigram):
            raise TypeError(f"the unigram encoder runs a Unigram model, not {model.kind}")
        if vocab.scores is None:
            raise VocabFormatError(f"{vocab.source}: a Unigram model needs the score of each token (Vocab.scores)")
        self.model = model
        style = getattr(vocab.pipeline.decoder, "style", "hf")
        self.spm, self.llama = style == "sentencepiece", style == "llama.cpp"
        scores = vocab.scores
        texts: dict[str, int] = {}
        for data, i in vocab.ranks.items():
            try:
                texts[data.decode("utf-8")] = i
            except UnicodeDecodeError:
                pass
        self.byte_ids = [texts.get(byte_token_text(b)) for b in range(256)]
        pieces = dict(texts)
        user_defined = frozenset()
        if self.spm:
            if model.byte_fallback:  # (BYTE pieces are no pieces of the search)
                for b in range(256):
                    pieces.pop(byte_token_text(b), None)
            user_defined = frozenset(t for t in model.user_defined if t in pieces)
            normal = [scores[i] for t, i in pieces.items() if t not in user_defined]
            self.min_score = min(normal, default=0.0)
            self.unk_score = float32(self.min_score - UNK_PENALTY)
        elif self.llama:
            user_defined = frozenset(t for t in vocab.added_tokens if t in pieces)
            unused = frozenset(vocab.pipeline.decoder.unused)
            normal = [scores[i] for t, i in pieces.items() if t not in user_defined and t not in unused]
            if not normal:
                raise VocabFormatError(f"{vocab.source}: a llama.cpp Unigram model needs a NORMAL token")
            self.min_score = min(normal)
            self.unk_score = float32(self.min_score - UNK_PENALTY)  # (a C++ float)
        else:
            self.min_score = min(scores)
            self.unk_score = self.min_score - UNK_PENALTY
        self.ids = texts
        self.unk_id = self._unknown_id(texts)
        # The pieces as a trie of dicts: each node maps a character to the next node, and
        # _TERMINAL to (id, score) where a piece ends.
        self.trie: dict = {}
        for text, i in pieces.items():
            node = self.trie
            for char in text:
                node = node.setdefault(char, {})
            if text in user_defined and self.llama:
                node[_TERMINAL] = (i, 0.0)  # llama.cpp: "more likely to be selected"
            elif text in user_defined:
                # GetUserDefinedScore: 0.1 * (length - 1) in double, returned as a float.
                node[_TERMINAL] = (i, float32(0.1 * (len(text.encode("utf-8")) - 1)))
            else:
                node[_TERMINAL] = (i, scores[i])

    def _unknown_id(self, texts: dict[str, int]) -> Optional[int]:
        """The unknown token's id ("" names none), looked up among the tokens, then the
        special tokens (a ``.model`` file's ``<unk>``)."""
        unk = self.model.unk_token
        if not unk:
            return None
        found = texts.get(unk, self.vocab.special_tokens.get(unk))
        if found is None:
            raise VocabFormatError(f"{self.vocab.source}: the Unigram model's unk_token {unk!r} is no token")
        return found

    def encode_piece(self, piece: bytes) -> list[int]:
        return self.encode_text(piece.decode("utf-8"))

    def encode_text(self, text: str) -> list[int]:
        """The ids of one piece of text."""
        return [i for i, _ in self.tokens(text)]

    def tokens(self, text: str) -> list[tuple[int, int]]:
        """``(id, end)`` of each token of ``text``: the token and the character where its part
        of the text ends (the byte tokens of one unknown character, or of one unknown run for
        HF, all end where it ends)."""
        if not text:
            return []
        path, _ = self.best_path(text)
        out: list[tuple[int, int]] = []
        unk, run_start = self.unk_id, None
        for k, (start, end, token) in enumerate(path):
            if token != unk:
                out.append((token, end))
                continue
            if run_start is None:
                run_start = start
            if k + 1 == len(path) or path[k + 1][2] != unk:
                self._unknown_run(text[run_start:end], end, out)
                run_start = None
        return out

    def best_path(self, text: str) -> tuple[list[tuple[int, int, int]], float]:
        """The best segmentation of ``text`` before its unknown runs are joined: ``(start, end,
        id)`` of each token (in characters), and the path's score (the module's example:
        ``best_path("abxcd")`` is ``[(0, 2, 6), (2, 3, 0), (3, 5, 5)], -7.0``)."""
        if not text:
            return [], 0.0
        starts, ids, best, shift = self._viterbi(text)
        # Read back from the end: (start, end, id) of each token of the best path.
        path: list[tuple[int, int, int]] = []
        end = len(text)
        while end > 0:
            start = starts[end]
            path.append((start, end, ids[end]))
            end = start
        path.reverse()
        return path, best[len(text)] + shift

    def score_of(self, text: str, token: int) -> float:
        """The score the search gives the token ``token`` spelling ``text`` (the unknown token:
        the unknown score; a user-defined piece: its own)."""
        if token == self.unk_id and self.ids.get(text) != token:
            return self.unk_score
        node = self.trie
        for char in text:
            node = node[char]
        return node[_TERMINAL][1]

    def _unknown_run(self, run: str, end: int, out: list[tuple[int, int]]) -> None:
        """The tokens of a run of unknown characters (see the module docstring)."""
        if not self.spm and not self.llama:
            spelled = self.ids.get(run)
            if spelled is not None:
                out.append((spelled, end))
                return
        if self.model.byte_fallback:
            byte_ids = [self.byte_ids[b] for b in run.encode("utf-8")]
            if None not in byte_ids:
                out.extend((i, end) for i in byte_ids)
                return
        out.append((self.unk_id, end))

    def _viterbi(self, text: str) -> tuple[list[int], list[int], list[float], float]:
        """The best path's last token at each end: ``(start of it, its id, the path's score)``
        by end position, the scores rebased as the module docstring says for ``sentencepiece``,
        and the sum of what was taken off them."""
        size = len(text)
        best = [0.0] * (size + 1)
        starts = [-1] * (size + 1)
        ids = [0] * (size + 1)
        root, spm, unk_score, unk = self.trie, self.spm, self.unk_score, self.unk_id
        unpack, pack = _F32.unpack, _F32.pack
        frontier = 0  # the furthest end any candidate has reached
        shift = 0.0
        for start in range(size):
            here = best[start]
            if spm and not -REBASE_AT <= here <= REBASE_AT:
                for place in range(start, frontier + 1):
                    if place == start or starts[place] != -1:
                        best[place] = unpack(pack(best[place] - here))[0]
                shift += here
                here = 0.0
            node = root
            single = False
            position = start
            while position < size:
                node = node.get(text[position])
                if node is None:
                    break
                position += 1
                found = node.get(_TERMINAL)
                if found is None:
                    continue
                token, score = found
                candidate = score + here
                if spm:
                    candidate = unpack(pack(candidate))[0]
                if position > frontier:
                    frontier = position
                if starts[position] == -1 or candidate > best[position]:
                    best[position] = candidate
                    starts[position] = start
                    ids[position] = token
                if position == start + 1:
                    single = True
            if not single:
                candidate = unk_score + here
                if spm:
                    candidate = unpack(pack(candidate))[0]
                if start + 1 > frontier:
                    frontier = start + 1
                if starts[start + 1] == -1 or candidate > best[start + 1]:
                    if unk is None:
                        raise EncodeInputError(
                            f"{self.vocab.name}: {text[start]!r} is no piece of the Unigram model and the model has "
                            "no unknown token (HF raises MissingUnkId)"
                        )
                    best[start + 1] = candidate
                    starts[start + 1] = start
                    ids[start + 1] = unk
        return starts, ids, best, shift
