"""Explain an encode: the whole pipeline and the model's steps for every piece: BPE's merges
pass by pass, WordPiece's longest matches position by position.

:func:`explain` runs the tokenizer's Python engine (:mod:`wordsplit.engines.python`, with the
tokenizer's own components) with a trace, and records what the run reports: special and added
token literals (one lookup each, no merges), the normalizer's output for each plain segment,
the spanner's pieces and the ids the encoder gave each piece. For each piece it adds every
merge pass of the reference ``buffer-sweep`` encoder: the symbols, every adjacent pair with its
merge rank, and the pair that wins. The ids are the run's own, so they equal
``tok.encode(...)`` (a test checks it on random text); the merge passes come from the
reference, which every built-in encoder equals.

**Merge rank** is the position of a merge in the vocabulary's merge list, counted from 0:

* pair-ranked vocabularies (``vocab.merges`` is set: HF files whose list is not in merged-id
  order) use the listed rank of the pair;
* rank-based vocabularies (tiktoken files, and Qwen3, whose merge list is in merged-id
  order) have no separate list: a pair's priority is the id of the token it makes, so the
  merge rank is that id minus the id of the first multi-byte token (256 in every bundled
  vocabulary, whose ids 0..255 are the bytes). ``(e,l)`` on Qwen3 makes token 301: merge
  rank 45, the number in Qwen3's merges.txt.

Every :class:`Candidate` also carries the merged token's id. Where the vocabulary encodes a
piece that is itself a token in one lookup (tiktoken's rule; every bundled vocabulary), the
trace says so and still shows the merge passes, with the ids they reach.

A WordPiece vocabulary's pieces carry :class:`WordMatch` steps instead of merge passes: at each
position, the candidates tried, longest first, and the token found. A Unigram vocabulary's
pieces carry their best segmentation (:class:`UnigramToken`: each token with its score) and the
path's score, which the Viterbi search maximizes.

It does not: time anything, explain decoding, or trace the native encoders step by step.
The trace keeps every pass of every piece (O(n²) in the piece length), so it is meant for
short texts.

>>> from wordsplit import get_tokenizer
>>> expl = explain(get_tokenizer("qwen3"), "hello")
>>> [(c.left, c.right, c.rank) for c in expl.pieces[0].passes[0].candidates]
[(b'h', b'e', 127), (b'e', b'l', 45), (b'l', b'l', 398), (b'l', b'o', 129)]
>>> expl.ids
[14990]
"""

from __future__ import annotations

import weakref
from dataclasses import asdict, dataclass, field
from typing import Literal, Optional

from .encoders.buffer_sweep import BufferSweepEncoder
from .spec import normalizer_name
from .specials import AllowedSpecial, DisallowedSpecial, resolve_special_policy
from .tables import MergeTables
from .vocab import Vocab

__all__ = ["Candidate", "MergePass", "PieceTrace", "Segment", "Explanation", "UnigramToken", "WordMatch", "explain",
           "format_explanation", "rank_base", "show_bytes"]

PieceKind = Literal["special", "added", "bpe", "wordpiece", "word-level", "unigram"]


@dataclass(frozen=True)
class Candidate:
    """One adjacent pair of symbols in a pass.

    ``rank`` is its merge rank (see the module docstring) and ``merged_id`` the token it
    makes; both are None when the pair never merges.
    """

    left: bytes
    right: bytes
    rank: Optional[int]
    merged_id: Optional[int]


@dataclass(frozen=True)
class MergePass:
    """One sweep over a piece's symbols: every adjacent pair, and the index of the one merged.

    ``winner`` indexes ``candidates`` (and the left symbol in ``symbols``): the pair of lowest
    merge rank, leftmost on ties. It is None in a final pass where no pair merges, which is
    recorded so that the trace shows why BPE stopped.
    """

    symbols: list[bytes]
    candidates: list[Candidate]
    winner: Optional[int]


@dataclass(frozen=True)
class WordMatch:
    """One position of WordPiece's longest match: the candidates tried there, longest first
    (after the first position each spelled with the continuing-subword prefix), and the id of
    the last one, the token found (None: none is a token, and the whole piece is unknown)."""

    start: int
    tried: list[str]
    token_id: Optional[int]


@dataclass(frozen=True)
class UnigramToken:
    """One token of a Unigram piece's best segmentation: its characters ``[start, end)`` of
    the piece, its text, its id (the unknown token's for a character no piece covers) and the
    score the search gave it."""

    start: int
    end: int
    text: str
    token_id: int
    score: float


@dataclass(frozen=True)
class PieceTrace:
    """How one piece became ids.

    Attributes:
        text: the piece as text (for a literal, the literal).
        bytes: its UTF-8 bytes, the input of BPE.
        kind: ``"special"`` or ``"added"`` for a literal matched as one token, ``"wordpiece"``
            or ``"word-level"`` for a word model's piece, else ``"bpe"``.
        whole_token_id: the id a whole-piece lookup gives (the vocabulary looks a piece up as
            one token before merging, and the piece is one), else None.
        passes: the merge passes of the reference encoder (empty for literals).
        merge_ids: the ids the merge passes end with.
        ids: the ids the tokenizer's encoder gave this piece in the run (for every built-in
            encoder: ``[whole_token_id]`` when there is one, else ``merge_ids``).
        matches: WordPiece's longest-match steps (empty for other models).
        segmentation: a Unigram piece's best segmentation, before a run of unknown tokens
            becomes one token (or its bytes' tokens); empty for other models.
        score: the score of that segmentation (a Unigram piece's), else None.
    """

    text: str
    bytes: bytes
    kind: PieceKind
    whole_token_id: Optional[int]
    passes: list[MergePass]
    merge_ids: list[int]
    ids: list[int]
    matches: list[WordMatch] = field(default_factory=list)
    segmentation: list[UnigramToken] = field(default_factory=list)
    score: Optional[float] = None


@dataclass(frozen=True)
class Segment:
    """A part of the text between literals, or one literal.

    ``normalized`` is the text after the vocabulary's normalizer (literals are not
    normalized); ``pieces`` are the spanner's pieces of it, or the one literal.
    """

    text: str
    normalized: str
    pieces: list[PieceTrace]


@dataclass(frozen=True)
class Explanation:
    """The trace of encoding ``text`` with one vocabulary.

    ``rank_base`` is what is subtracted from a merged id to give a merge rank (rank-based
    vocabularies), or None when ranks come from the merge list (pair-ranked).
    """

    text: str
    vocab: str
    normalizer: str
    rank_base: Optional[int]
    segments: list[Segment]
    ids: list[int]
    model: str = "BPE"

    @property
    def pieces(self) -> list[PieceTrace]:
        """Every piece of every segment, in order."""
        return [piece for segment in self.segments for piece in segment.pieces]

    def to_dict(self) -> dict:
        """A JSON-ready form: bytes become hex strings, and symbols are also given as text.

        >>> from wordsplit import get_tokenizer
        >>> first = explain(get_tokenizer("qwen3"), "hi").to_dict()["segments"][0]["pieces"][0]["passes"][0]
        >>> first["symbols"], first["symbol_text"], first["winner"]
        (['68', '69'], ['h', 'i'], 0)
        >>> first["candidates"]
        [{'left': '68', 'right': '69', 'rank': 5767, 'merged_id': 6023}]
        """
        return _jsonable(asdict(self))


def _jsonable(value):
    """``asdict`` output with bytes as hex, and each pass's symbols also shown as text."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        out = {k: _jsonable(v) for k, v in value.items()}
        if "symbols" in value:
            out["symbol_text"] = [show_bytes(s) for s in value["symbols"]]
        return out
    return value


# The merge-rank offset of each rank-based vocabulary, computed once (a scan of all tokens).
_RANK_BASES: "weakref.WeakKeyDictionary[Vocab, int]" = weakref.WeakKeyDictionary()


def rank_base(vocab: Vocab) -> Optional[int]:
    """The id of the first multi-byte token of a rank-based vocabulary; None if pair-ranked.

    >>> from wordsplit import load_vocab
    >>> rank_base(load_vocab("cl100k_base"))
    256
    """
    if vocab.merges is not None:
        return None
    base = _RANK_BASES.get(vocab)
    if base is None:
        base = min((i for piece, i in vocab.ranks.items() if len(piece) > 1), default=0)
        _RANK_BASES[vocab] = base
    return base


def explain(
    tokenizer,
    text: str,
    *,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = "all",
) -> Explanation:
    """Encode ``text`` as ``tokenizer.encode`` does, recording every step.

    Args:
        tokenizer: a :class:`~wordsplit.tokenizer.Tokenizer`; its Python engine (same
            vocabulary and components) runs the encode.
        text: the text.
        allowed_special, disallowed_special: the special-token policy, as for ``encode``.

    Returns:
        An :class:`Explanation` whose ``ids`` equal ``tokenizer.encode(text, ...)``.

    Raises:
        EncodeInputError: ``text`` is not a ``str``.
        DisallowedSpecialError: the text contains a disallowed special token.

    >>> from wordsplit import get_tokenizer
    >>> expl = explain(get_tokenizer("qwen3"), "hi<|im_end|>", allowed_special="all")
    >>> [(p.text, p.kind, p.ids) for p in expl.pieces]
    [('hi', 'bpe', [6023]), ('<|im_end|>', 'special', [151645])]
    """
    vocab = tokenizer.vocab
    policy = resolve_special_policy(vocab, allowed_special, disallowed_special)
    policy.check(text)
    trace = _Recorder(vocab)
    ids = tokenizer.python_engine().encode(text, policy.allowed, policy.disallowed, trace=trace)
    # (the normalizer by its name: "nfc", or its kind: "Sequence")
    return Explanation(text, vocab.name, normalizer_name(vocab.normalizer), trace.base, trace.segments, ids,
                       vocab.pipeline.model.kind)


class _Recorder:
    """Builds the segments of an :class:`Explanation` from a traced run of the Python engine."""

    def __init__(self, vocab: Vocab) -> None:
        from .encoders.unigram import UnigramEncoder
        from .encoders.wordpiece import WordLevelEncoder, WordPieceEncoder
        from .spec import Unigram, WordLevel, WordPiece

        self.vocab = vocab
        model = vocab.pipeline.model
        self.words = WordPieceEncoder(MergeTables.of(vocab)) if isinstance(model, WordPiece) else \
            WordLevelEncoder(MergeTables.of(vocab)) if isinstance(model, WordLevel) else None
        self.unigram = UnigramEncoder(MergeTables.of(vocab)) if isinstance(model, Unigram) else None
        self.reference = None if self.words is not None or self.unigram is not None else \
            BufferSweepEncoder(MergeTables.of(vocab))
        self.base = rank_base(vocab)
        self.segments: list[Segment] = []

    def literal(self, text: str, token_id: int) -> None:
        kind = "special" if text in self.vocab.special_tokens else "added"
        piece = PieceTrace(text, text.encode("utf-8"), kind, None, [], [token_id], [token_id])
        self.segments.append(Segment(text, text, [piece]))

    def segment(self, text: str, normalized: str) -> None:
        self.segments.append(Segment(text, normalized, []))

    def piece(self, text: str, ids: list[int]) -> None:
        if self.words is not None:
            self.segments[-1].pieces.append(_trace_word(self.words, text, ids))
            return
        if self.unigram is not None:
            self.segments[-1].pieces.append(_trace_unigram(self.unigram, text, ids))
            return
        self.segments[-1].pieces.append(_trace_piece(self.reference, self.base, text, ids))


def _trace_word(encoder, text: str, ids: list[int]) -> PieceTrace:
    """A word model's piece: WordPiece's steps, or WordLevel's one lookup."""
    from .encoders.wordpiece import WordLevelEncoder

    if isinstance(encoder, WordLevelEncoder):
        return PieceTrace(text, text.encode("utf-8"), "word-level", None, [], ids, ids)
    matches: list[WordMatch] = []
    encoder.tokens(text, trace=lambda start, tried, found: matches.append(WordMatch(start, tried, found)))
    return PieceTrace(text, text.encode("utf-8"), "wordpiece", None, [], ids, ids, matches)


def _trace_unigram(encoder, text: str, ids: list[int]) -> PieceTrace:
    """A Unigram piece: its best segmentation, each token with its score, and the path's."""
    path, score = encoder.best_path(text)
    tokens = [UnigramToken(start, end, text[start:end], token, encoder.score_of(text[start:end], token))
              for start, end, token in path]
    return PieceTrace(text, text.encode("utf-8"), "unigram", None, [], ids, ids, segmentation=tokens, score=score)


def _trace_piece(reference: BufferSweepEncoder, base: Optional[int], text: str, ids: list[int]) -> PieceTrace:
    tables = reference.tables
    ranks = tables.ranks
    data = text.encode("utf-8")
    passes: list[MergePass] = []

    def candidates(parts: list[bytes], priorities) -> list[Candidate]:
        out = []
        for i, priority in priorities:
            if priority is None:
                out.append(Candidate(parts[i], parts[i + 1], None, None))
            else:
                merged = ranks[parts[i] + parts[i + 1]]
                out.append(Candidate(parts[i], parts[i + 1], priority if base is None else priority - base, merged))
        return out

    def record(parts, priorities, best):
        passes.append(MergePass(parts, candidates(parts, priorities), best))

    final = reference.merge(data, trace=record)
    if len(final) > 1:
        # The reference stops when no pair merges; record that last sweep too.
        passes.append(MergePass(final, candidates(final, [
            (i, tables.pair_rank(final[i], final[i + 1])) for i in range(len(final) - 1)]), None))
    merge_ids = [ranks[symbol] for symbol in final]
    return PieceTrace(text, data, "bpe", tables.whole(data), passes, merge_ids, ids)


# -- plain-text rendering ---------------------------------------------------------------------

_VISIBLE = {" ": "␣", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def show_bytes(data: bytes) -> str:
    r"""A symbol's bytes as readable text: UTF-8 where it decodes, ``\xNN`` where it does not.

    Spaces are shown as ``␣``, control characters and backslashes are escaped, so symbols
    can be listed side by side without ambiguity.

    >>> print(show_bytes(b" the"), show_bytes(b"\xe4\xbd"), show_bytes(b"a\\b\n"))
    ␣the \xe4\xbd a\\b\n
    """
    out = []
    for part in data.decode("utf-8", "surrogateescape"):
        code = ord(part)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif part in _VISIBLE:
            out.append(_VISIBLE[part])
        elif not part.isprintable():
            out.append(repr(part)[1:-1])
        else:
            out.append(part)
    return "".join(out)


def _pair(c: Candidate) -> str:
    return f"({show_bytes(c.left)},{show_bytes(c.right)})"


def format_explanation(expl: Explanation) -> str:
    """The trace as text, one block per piece, one pass per two lines.

    Each pass lists its symbols, then every adjacent pair as ``(left,right)=merge rank``
    (``-`` when the pair never merges) and the winner with the id it makes.

    >>> from wordsplit import get_tokenizer
    >>> print(format_explanation(explain(get_tokenizer("qwen3"), "hello")))
    vocab qwen3: (a,b)=r is an adjacent pair and its merge rank r = merged id - 256; - never merges
    'hello': piece of 5 bytes
      whole token, one lookup: 14990 (the merge passes below reach the same id)
      pass 1: h e l l o
        (h,e)=127 (e,l)=45 (l,l)=398 (l,o)=129 -> (e,l) wins, makes 301
      pass 2: h el l o
        (h,el)=48866 (el,l)=357 (l,o)=129 -> (l,o) wins, makes 385
      pass 3: h el lo
        (h,el)=48866 (el,lo)=4535 -> (el,lo) wins, makes 4791
      pass 4: h ello
        (h,ello)=14734 -> (h,ello) wins, makes 14990
      -> [14990]
    ids: [14990]
    """
    if expl.model == "WordPiece":
        lines = [f"vocab {expl.vocab}: WordPiece cuts each word from the left into the longest tokens it has"]
    elif expl.model == "WordLevel":
        lines = [f"vocab {expl.vocab}: WordLevel looks each word up whole"]
    elif expl.model == "Unigram":
        lines = [f"vocab {expl.vocab}: Unigram takes the segmentation whose tokens' scores (log probabilities) "
                 "sum highest; a run of unknown tokens then becomes one"]
    else:
        meaning = "its position in the merge list" if expl.rank_base is None else f"merged id - {expl.rank_base}"
        lines = [f"vocab {expl.vocab}: (a,b)=r is an adjacent pair and its merge rank r = {meaning}; - never merges"]
    for segment in expl.segments:
        if segment.normalized != segment.text:
            # ascii(): a normalizer's change is often invisible once rendered (e + U+0301 vs é).
            lines.append(f"normalized ({expl.normalizer}): {ascii(segment.text)} -> {ascii(segment.normalized)}")
        for piece in segment.pieces:
            lines.extend(_format_piece(piece))
    lines.append(f"ids: {expl.ids}")
    return "\n".join(lines)


def _format_piece(piece: PieceTrace) -> list[str]:
    if piece.kind == "word-level":
        return [f"{piece.text!r}: word, one lookup -> {piece.ids}"]
    if piece.kind == "wordpiece":
        return _format_word(piece)
    if piece.kind == "unigram":
        return _format_unigram(piece)
    if piece.kind != "bpe":
        how = "special token" if piece.kind == "special" else "added token (always matched)"
        return [f"{piece.text!r}: {how}, one lookup -> {piece.ids}"]
    lines = [f"{piece.text!r}: piece of {len(piece.bytes)} byte{'s' if len(piece.bytes) != 1 else ''}"]
    if piece.whole_token_id is not None and not piece.passes:
        lines.append(f"  whole token, one lookup: {piece.whole_token_id}")
    elif piece.whole_token_id is not None:
        if piece.merge_ids == piece.ids:
            reach = "the merge passes below reach the same id"
        else:
            reach = f"the merge passes below would give {piece.merge_ids}; the lookup decides"
        lines.append(f"  whole token, one lookup: {piece.whole_token_id} ({reach})")
    for number, step in enumerate(piece.passes, 1):
        lines.append(f"  pass {number}: {' '.join(show_bytes(s) for s in step.symbols)}")
        pairs = " ".join(f"{_pair(c)}={'-' if c.rank is None else c.rank}" for c in step.candidates)
        if step.winner is None:
            outcome = "no pair merges: stop"
        else:
            won = step.candidates[step.winner]
            outcome = f"{_pair(won)} wins, makes {won.merged_id}"
        lines.append(f"    {pairs} -> {outcome}")
    lines.append(f"  -> {piece.ids}")
    return lines


def _format_word(piece: PieceTrace) -> list[str]:
    """WordPiece's steps: at each position, the candidates tried (longest first) and the
    token found."""
    length = len(piece.text)
    lines = [f"{piece.text!r}: word of {length} character{'s' if length != 1 else ''}, longest match first"]
    if not piece.matches:
        lines.append("  longer than max_input_chars_per_word: the unknown token")
    for match in piece.matches:
        tried = [show_bytes(t.encode("utf-8")) for t in match.tried]
        if match.token_id is None:
            lines.append(f"  at {match.start}: {' '.join(tried)}: no token, so the word is the unknown token")
        else:
            missed = f"{' '.join(tried[:-1])} (no tokens), " if len(tried) > 1 else ""
            lines.append(f"  at {match.start}: {missed}{tried[-1]} = {match.token_id}")
    lines.append(f"  -> {piece.ids}")
    return lines


def _format_unigram(piece: PieceTrace) -> list[str]:
    """Unigram's best segmentation: each token with its score, and the path's score; a run of
    unknown tokens then becomes one token (or its bytes' tokens)."""
    length = len(piece.text)
    lines = [f"{piece.text!r}: {length} character{'s' if length != 1 else ''}, best segmentation "
             f"(score {piece.score:.4f})"]
    for token in piece.segmentation:
        lines.append(f"  {show_bytes(token.text.encode('utf-8'))} = {token.token_id} (score {token.score:.4f})")
    lines.append(f"  -> {piece.ids}")
    return lines
