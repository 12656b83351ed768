r"""HF ``tokenizers``' encoding of one text with a tokenizer.json whose model is ``Unigram``
(T5, ALBERT, XLM-R, Marian, the files transformers converts from SentencePiece models): its
ids, tokens, offsets and word ids, step by step as HF makes them.

1. The added tokens are found in the text (:class:`~wordsplit.specials.LiteralScan`); each is
   a word of its own, its offsets its text's. Those with ``normalized: true`` are found as HF's
   second pass finds them, in each stretch's text as the normalizer before the pre-tokenizer
   makes it: such a token's string is that text, its offsets the original characters it is
   aligned to, and steps 3 and 4 run on each part left between them (:meth:`UnigramTexts._second_pass`).
2. Each stretch between them is normalized, every normalized character aligned to the
   original characters it came from as HF's ``NormalizedString`` aligns it (the vocabulary's
   normalizer's ``alignment``, with the pre-tokenizer's ``Metaspace``: a space becomes ``▁``,
   and the ``▁`` put before a stretch is aligned to its first character).
3. The pre-tokenizer cuts it into words: before every ``▁`` (``Metaspace`` with ``split``), or
   for T5's ``WhitespaceSplit`` then ``Metaspace`` at every run of white space (Rust's
   ``char::is_whitespace``, dropped), each word then given its own ``▁`` aligned to its first
   character as the ``prepend_scheme`` says (``always``: every word; ``first``: only the words
   of the input's first character; ``never``: none), and cut before every ``▁`` in it with
   ``split``. An empty word is dropped, as HF drops it.
4. The model segments each word (the vocabulary's ``unigram`` encoder, whose ``tokens`` say
   where each token ends). A token's string is its text in the normalized word, which is its
   vocab piece, but for a run of unknown characters (the unknown token's string is the run's
   text, as in HF) and for byte fallback, whose ``<0xNN>`` tokens all get the whole run's
   offsets. Offsets are the original characters from the start of the token's first
   character's alignment to the end of its last one's.

>>> import gzip
>>> from wordsplit.compat.tokenizers import Tokenizer
>>> tok = Tokenizer.from_file("tests/data/unigram/t5-small/tokenizer.json.gz")
>>> enc = tok.encode("Hello  world 😀")
>>> enc.tokens, enc.offsets, enc.word_ids
(['▁Hello', '▁world', '▁', '😀', '</s>'], [(0, 5), (7, 12), (13, 14), (13, 14), (0, 0)], [0, 1, 2, 2, None])
"""

from __future__ import annotations

from typing import Callable, Optional

from ...engines.arguments import check_text
from ...errors import UnsupportedTokenizerError
from ...normalizers import normalizer_for
from ...offsets import stage_alignment
from ...postprocess import Parts
from ...specials import LiteralScan
from ...vocab import WHITE_SPACE, second_pass_normalizes
from .encoding import matched_literal

__all__ = ["UnigramTexts", "aligned_text", "is_unigram"]

SPACE = "\u2581"
# Words whose tokens are kept (as the engines' piece cache: bounded so memory stays flat).
_CACHE_SIZE = 1 << 16
# One normalized character's place: (original char start, original char end, identical).
Aligned = tuple[int, int, bool]


def is_unigram(spec: dict) -> bool:
    """Whether a parsed tokenizer.json's model is ``Unigram`` (a list of ``[piece, score]``)."""
    model = spec.get("model")
    return isinstance(model, dict) and (model.get("type") == "Unigram" or isinstance(model.get("vocab"), list))


class UnigramTexts:
    """Encodes texts as HF does with a Unigram tokenizer.json (see the module docstring).

    Args:
        tok: the wordsplit tokenizer of the file (its vocabulary, normalizer and encoder).
        spec: the parsed tokenizer.json.
        pieces: each id's piece in the model's vocab (None past it).
        source: the file's name, for errors.

    Raises:
        UnsupportedTokenizerError: a ``WhitespaceSplit`` layout the loader did not read as T5's.
    """

    def __init__(self, tok, spec: dict, pieces: list[Optional[str]], source: str) -> None:
        from ...encoders.unigram import UnigramEncoder
        from ...spec import Metaspace
        from ...tables import MergeTables

        vocab = tok.vocab
        pipeline = vocab.pipeline
        self._pieces = pieces
        # The engine's own encoder when it has one (a SentencePiece engine's Python engine);
        # another is built the same way, from the vocabulary.
        python = getattr(tok._engine, "_python_engine", None)
        encoder = getattr(python(), "encoder", None) if python is not None else None
        self._encoder = encoder if isinstance(encoder, UnigramEncoder) else UnigramEncoder(MergeTables(vocab))
        self._unk_id = self._encoder.unk_id
        self._cache: dict[str, list[tuple[int, int]]] = {}  # word → the encoder's tokens of it
        literals = vocab.all_special_literals
        self._literal_ids = literals
        # (T5's layout, WhitespaceSplit then Metaspace, may have a split program, not this
        # spanner: its words are cut here, as HF's WhitespaceSplit and Metaspace cut them)
        self._split = getattr(pipeline.spanner, "metaspace_split", False)
        stage = pipeline.normalizer
        # HF's second pass (``normalized`` added tokens) searches each stretch's text as the
        # normalizer before the pre-tokenizer makes it: the stage's, or the one before its
        # Metaspace, which then runs on each part left (MetaspaceNormalizer.part_alignment).
        self._metaspace = None
        second = None
        if second_pass_normalizes(stage, vocab.literal_flags):
            second = normalizer_for(stage)
            if isinstance(stage, Metaspace):
                self._metaspace, second = second, second.inner
        self._scan = LiteralScan(literals, vocab.literal_flags, second) if literals else None
        self._words_metaspace = None  # (T5's layout: the Metaspace normalizer, whose heads say which words get a ▁)
        self._whitespace_split = _pre_tokenizer_kinds(spec.get("pre_tokenizer")) == ["WhitespaceSplit", "Metaspace"]
        if self._whitespace_split:
            # T5's layout: the file's normalizer alone (the loader's Metaspace with
            # whitespace_split, made of it), WhitespaceSplit and Metaspace run here.
            if not isinstance(stage, Metaspace) or not stage.whitespace_split:
                raise UnsupportedTokenizerError(f"{source}: its WhitespaceSplit layout is not the one the loader reads")
            self._words_metaspace = normalizer_for(stage)
            self._split = _metaspace_splits(spec.get("pre_tokenizer"))
            stage = stage.before
        self._stage = stage
        self._normalize = normalizer_for(stage)
        self._later = getattr(self._normalize, "later", None)

    def encode(self, text: str, type_id: int, word: Optional[int], is_token: Callable[[str], bool]) -> Parts:
        """The encoding of ``text`` (a str without surrogates, which HF does not take) before
        post-processing; ``word``: every token's word id (HF's pre-tokenized words), else each
        word's index; ``is_token(literal)``: whether an added token found in the text is one
        (``encode_special_tokens`` leaves special ones text).

        Raises:
            UnsupportedTokenizerError: a normalizer that gives no alignment (a plug-in's).
        """
        check_text(text)
        out = Parts.of([], [], [], [], type_id=type_id)
        words = [0]
        spans = [(0, len(text), None)] if self._scan is None else self._scan.spans(text, is_token)
        for start, end, literal in spans:
            if literal is not None:
                self._add(out, self._literal_ids[literal], matched_literal(text, start, end, literal), (start, end),
                          words)
                words[0] += 1
            elif start < end and self._scan is not None and self._scan.normalizes:
                self._second_pass(text, start, end, out, words, is_token)
            elif start < end:
                self._stretch(text, start, end, out, words)
        n = len(out.ids)
        if word is not None:
            out.word_ids = [word] * n
        out.type_ids = [type_id] * n
        out.special_tokens_mask, out.attention_mask = [0] * n, [1] * n
        return out

    @staticmethod
    def _add(out: Parts, token: int, string: str, offsets: tuple[int, int], words: list[int]) -> None:
        out.ids.append(token)
        out.tokens.append(string)
        out.offsets.append(offsets)
        out.word_ids.append(words[0])

    def _stretch(self, text: str, start: int, end: int, out: Parts, words: list[int]) -> None:
        """The words of ``text[start:end]``, a stretch between added tokens, encoded."""
        segment = text[start:end]
        if self._whitespace_split:
            normalized, places = self._aligned(self._normalize, self._stage, segment)
            pieces = self._whitespace_words(normalized, places,
                                            self._words_metaspace.heads(segment, start > 0, places))
        else:
            normalize = self._later if start > 0 and self._later is not None else self._normalize
            normalized, places = self._aligned(normalize, self._stage, segment)
            pieces = [(normalized, places)]
        self._words(pieces, start, out, words)

    def _second_pass(self, text: str, start: int, end: int, out: Parts, words: list[int], is_token) -> None:
        """:meth:`_stretch` with HF's second pass: the ``normalized`` added tokens found in the
        stretch's text as the normalizer before the pre-tokenizer makes it (each a word, its
        string that text, its offsets the original characters it is aligned to), the
        pre-tokenizer run on each part between them (``Metaspace`` gives a part, after
        ``WhitespaceSplit`` a word of it, its ``▁`` as :meth:`MetaspaceNormalizer.heads
        <wordsplit.normalizers.MetaspaceNormalizer.heads>` says)."""
        segment = text[start:end]
        metaspace = self._metaspace
        if metaspace is not None:
            normalized, places = metaspace.before_alignment(segment)
            heads = metaspace.heads(segment, start > 0, places)
        else:
            normalized, places = self._aligned(self._normalize, self._stage, segment)
            heads = 0
        for a, b, literal in self._scan.second_pass(normalized, is_token):
            if literal is not None:
                offsets = (start + places[a][0], start + places[b - 1][1])
                self._add(out, self._literal_ids[literal], normalized[a:b], offsets, words)
                words[0] += 1
                continue
            part, aligned, part_heads = normalized[a:b], places[a:b], max(heads - a, 0)
            if self._whitespace_split:
                pieces = self._whitespace_words(part, aligned, part_heads)
            elif metaspace is not None:
                pieces = [metaspace.part_alignment(part, aligned, part_heads)]
            else:
                pieces = [(part, aligned)]
            self._words(pieces, start, out, words)

    def _words(self, pieces: list[tuple[str, list[Aligned]]], start: int, out: Parts, words: list[int]) -> None:
        """Encode each of ``pieces`` (normalized text and its places) as words: cut before
        every ``▁`` after Metaspace's split (after ``WhitespaceSplit`` too), else whole."""
        for piece, aligned in pieces:
            cuts = _metaspace_cuts(piece) if self._split else [0]
            for a, b in zip(cuts, cuts[1:] + [len(piece)]):
                if a < b:
                    self._word(piece[a:b], aligned[a:b], start, out, words)
                    words[0] += 1

    def _word(self, word: str, aligned: list[Aligned], start: int, out: Parts, words: list[int]) -> None:
        """The model's tokens of one word, with their strings and offsets (``start``: the
        stretch's place in the text)."""
        begin = 0
        tokens = self._cache.get(word)
        if tokens is None:
            tokens = self._encoder.tokens(word)
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[word] = tokens
        k = 0
        while k < len(tokens):
            stop = tokens[k][1]
            group = k
            while group < len(tokens) and tokens[group][1] == stop:  # (byte fallback: one run)
                group += 1
            offsets = (start + aligned[begin][0], start + aligned[stop - 1][1])
            surface = word[begin:stop]
            for token, _ in tokens[k:group]:
                piece = self._pieces[token]
                string = surface if token == self._unk_id or piece == surface else piece
                self._add(out, token, string, offsets, words)
            begin, k = stop, group

    @staticmethod
    def _whitespace_words(normalized: str, places: list[Aligned], heads: int) -> list[tuple[str, list[Aligned]]]:
        """HF's ``WhitespaceSplit`` then ``Metaspace`` prepend of a normalized stretch (or a
        part of it the second pass leaves): each run of non-white-space characters, a ``▁``
        put before it (aligned to its first character) unless it starts with one or it starts
        past the first ``heads`` characters (:meth:`MetaspaceNormalizer.heads
        <wordsplit.normalizers.MetaspaceNormalizer.heads>`)."""
        out = []
        k, n = 0, len(normalized)
        while k < n:
            if normalized[k] in WHITE_SPACE:
                k += 1
                continue
            stop = k
            while stop < n and normalized[stop] not in WHITE_SPACE:
                stop += 1
            word, aligned = normalized[k:stop], places[k:stop]
            if k < heads and not word.startswith(SPACE):
                word, aligned = SPACE + word, [(aligned[0][0], aligned[0][1], False)] + aligned
            out.append((word, aligned))
            k = stop
        return out

    @staticmethod
    def _aligned(normalize, stage, text: str) -> tuple[str, list[Aligned]]:
        return aligned_text(normalize, stage, text)


def aligned_text(normalize, stage, text: str) -> tuple[str, list[Aligned]]:
    """``text`` normalized by ``normalize`` (the normalizer of ``stage``), and each normalized
    character's place in ``text``.

    >>> from wordsplit.spec import Lowercase
    >>> aligned_text(normalizer_for(Lowercase()), Lowercase(), "Ab")
    ('ab', [(0, 1, False), (1, 2, True)])
    """
    def unaligned(_: str):
        raise UnsupportedTokenizerError(f"offsets through the normalizer {stage.kind} are not supported")

    normalized, places = stage_alignment(normalize, stage, text, unaligned)
    if places is None:
        places = [(i, i + 1, True) for i in range(len(normalized))]
    return normalized, places


def _metaspace_cuts(word: str) -> list[int]:
    """Where HF's ``Metaspace`` split (``MergedWithNext``) starts each part: the start, and
    before every ``▁`` after it."""
    return [0] + [k for k in range(1, len(word)) if word[k] == SPACE]


def _metaspace_splits(value) -> bool:
    """Whether the ``Metaspace`` of a tokenizer.json's pre-tokenizer cuts before every ``▁``
    (its ``split``, HF's default true; the loader has checked it).

    >>> _metaspace_splits({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
    ...                    {"type": "Metaspace", "split": False}]})
    False
    """
    if not isinstance(value, dict):
        return False
    if value.get("type") == "Sequence":
        return any(_metaspace_splits(step) for step in value.get("pretokenizers") or [])
    return value.get("type") == "Metaspace" and value.get("split", True) is True


def _pre_tokenizer_kinds(value) -> list[str]:
    """The step types of a tokenizer.json's pre-tokenizer (a Sequence flattened)."""
    if not isinstance(value, dict):
        return []
    if value.get("type") == "Sequence":
        return [kind for step in value.get("pretokenizers") or [] for kind in _pre_tokenizer_kinds(step)]
    return [str(value.get("type"))]
