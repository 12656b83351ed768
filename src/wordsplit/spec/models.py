"""The model stages: how a piece becomes token ids."""

from __future__ import annotations

from typing import ClassVar, Union

from .stage import Stage, family

__all__ = [
    "BytePairEncoding",
    "CharacterBpe",
    "MODEL_KINDS",
    "Model",
    "SentencePieceBpe",
    "Unigram",
    "WordLevel",
    "WordPiece",
]


# -- models --------------------------------------------------------------------------------
#
# Model descriptions: how a piece becomes token ids.
#
# * :class:`BytePairEncoding`: byte-level BPE over the piece's UTF-8 bytes, by the vocabulary's
#   ranks (tiktoken's rule) or by its pair-ranked merge list (HF's), both held by its tables;
# * :class:`SentencePieceBpe`: BPE over characters as SentencePiece trains it: merged by piece
#   score (``sentencepiece``, llama.cpp) or by merge rank (an HF tokenizer.json, a GGUF
#   ``gemma4`` file), a symbol left that is no piece taken as its UTF-8 byte pieces (or, without
#   byte fallback, as the unknown piece);
# * :class:`WordPiece`: BERT's greedy longest match from the left, the pieces after the first
#   spelled with a prefix (``##``);
# * :class:`Unigram`: the segmentation of highest total score (Viterbi over the vocabulary's
#   piece scores, :attr:`wordsplit.Vocab.scores`), as sentencepiece and HF compute it;
# * :class:`WordLevel`: a piece is one token, or the unknown one;
# * :class:`CharacterBpe`: HF's BPE over each piece's characters (or bytes) by the file's merge
#   list, with an end-of-word suffix and the unknown token (CLIP, BPE files without ByteLevel).


class BytePairEncoding(Stage):
    """Byte-level BPE: the merge order is the vocabulary's tables."""

    kind: ClassVar[str] = "BPE"
    __slots__ = ()


class SentencePieceBpe(Stage):
    """BPE over a SentencePiece vocabulary's characters.

    Attributes:
        merge_by: ``"score"`` (the highest piece score first: ``sentencepiece``, llama.cpp) or
            ``"rank"`` (the lowest merge rank first, byte fallback before merging: HF).
        unused: the UNUSED pieces: a merge may make one, and it is then split back into the
            two symbols it was last made from (``"score"``).
        ignore_merges: (``"rank"``) a part that is a token is that token, as HF's
            ``ignore_merges``.
        byte_fallback: a symbol left that is no piece is its UTF-8 bytes' ``<0xNN>`` pieces;
            false (``"score"``): it is ``unk_token``, a run of such symbols one ``unk_token``
            (sentencepiece's rule).
        unk_token: the unknown piece (a special token of the vocabulary).
    """

    kind: ClassVar[str] = "SentencePieceBpe"
    FIELDS: ClassVar[dict] = {"merge_by": str, "unused": "strings", "ignore_merges": bool, "byte_fallback": bool,
                              "unk_token": str}
    DEFAULTS: ClassVar[dict] = {"merge_by": "score", "unused": (), "ignore_merges": False, "byte_fallback": True,
                                "unk_token": "<unk>"}
    __slots__ = tuple(FIELDS)
    merge_by: str
    unused: tuple
    ignore_merges: bool
    byte_fallback: bool
    unk_token: str

    def _check(self) -> None:
        if self.merge_by not in ("score", "rank"):
            raise ValueError(f"merge_by is 'score' or 'rank', not {self.merge_by!r}")
        if self.ignore_merges and self.merge_by != "rank":
            raise ValueError("ignore_merges is an option of merging by rank")
        if not self.byte_fallback and self.merge_by != "score":
            raise ValueError("a SentencePieceBpe model without byte_fallback merges by score (sentencepiece's)")


class WordPiece(Stage):
    """BERT's WordPiece: a piece is cut from the left into the longest tokens the vocabulary
    has, every one after the first spelled with ``continuing_subword_prefix``; a piece with a
    part no token spells, or of more than ``max_input_chars_per_word`` characters, is the one
    token ``unk_token``."""

    kind: ClassVar[str] = "WordPiece"
    FIELDS: ClassVar[dict] = {"unk_token": str, "continuing_subword_prefix": str, "max_input_chars_per_word": int}
    DEFAULTS: ClassVar[dict] = {"unk_token": "[UNK]", "continuing_subword_prefix": "##",
                                "max_input_chars_per_word": 100}
    __slots__ = tuple(FIELDS)
    unk_token: str
    continuing_subword_prefix: str
    max_input_chars_per_word: int

    def _check(self) -> None:
        if self.max_input_chars_per_word < 0:
            raise ValueError("max_input_chars_per_word is not negative")


class Unigram(Stage):
    """The Unigram language model: a piece becomes the sequence of tokens whose scores
    (:attr:`wordsplit.Vocab.scores`, log probabilities) add up highest.

    Attributes:
        unk_token: the token of a character no piece covers ("": none, and such a character is
            an error, as HF's ``unk_id: null``); it scores the lowest score less 10, as in
            sentencepiece and HF, and consecutive ones make one token.
        byte_fallback: such a character is its UTF-8 bytes' ``<0xNN>`` pieces instead.
        user_defined: sentencepiece's USER_DEFINED pieces: the search finds them like the
            others, each scoring ``0.1 x (its UTF-8 bytes - 1)`` (above any log probability,
            longer ones higher) in place of a score of its own.
    """

    kind: ClassVar[str] = "Unigram"
    FIELDS: ClassVar[dict] = {"unk_token": str, "byte_fallback": bool, "user_defined": "strings"}
    DEFAULTS: ClassVar[dict] = {"unk_token": "<unk>", "byte_fallback": False, "user_defined": ()}
    __slots__ = tuple(FIELDS)
    unk_token: str
    byte_fallback: bool
    user_defined: tuple


class WordLevel(Stage):
    """A piece is the token that spells it, else ``unk_token``."""

    kind: ClassVar[str] = "WordLevel"
    FIELDS: ClassVar[dict] = {"unk_token": str}
    DEFAULTS: ClassVar[dict] = {"unk_token": "<unk>"}
    __slots__ = tuple(FIELDS)
    unk_token: str


class CharacterBpe(Stage):
    """HF's BPE model with the options byte-level BPE does not have: each piece's symbols are
    its characters (its bytes, with ``byte_level``), every one after the first spelled with
    ``continuing_subword_prefix`` and the last one with ``end_of_word_suffix`` (CLIP's
    ``</w>``); a symbol that is no token is ``unk_token`` (consecutive ones one token with
    ``fuse_unk``), or dropped when there is none; then the adjacent pair listed in the file's
    merges with the lowest rank merges, leftmost on ties, as HF's ``Word::merge_all`` does
    (the vocabulary's pair-ranked merges), into the token of the left one's bytes and the
    right one's after the prefix's length (HF's rule). The prefix and suffix are their UTF-8
    bytes in every symbol."""

    kind: ClassVar[str] = "CharacterBpe"
    FIELDS: ClassVar[dict] = {"unk_token": str, "fuse_unk": bool, "end_of_word_suffix": str, "byte_level": bool,
                              "continuing_subword_prefix": str}
    DEFAULTS: ClassVar[dict] = {"unk_token": "", "fuse_unk": False, "end_of_word_suffix": "", "byte_level": False,
                                "continuing_subword_prefix": ""}
    __slots__ = tuple(FIELDS)
    unk_token: str
    fuse_unk: bool
    end_of_word_suffix: str
    byte_level: bool
    continuing_subword_prefix: str


Model = Union[BytePairEncoding, SentencePieceBpe, WordPiece, Unigram, WordLevel, CharacterBpe]

MODEL_KINDS = family("model", BytePairEncoding, SentencePieceBpe, WordPiece, Unigram, WordLevel, CharacterBpe)
