"""Every encoder equals the reference (buffer-sweep) on every input.

Hypothesis draws random bytes and random concatenations of tokens (the inputs where merge
order matters most); a named list of hard inputs covers long repeats and whitespace runs.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import Vocab, load_vocab
from wordsplit.errors import UnknownComponentError, UnsupportedTokenizerError
from wordsplit.encoders import ENCODERS, MergeTables, get_encoder
from wordsplit.encoders.buffer_sweep import BufferSweepEncoder
from wordsplit.core import extension

VOCABS = ["qwen3", "cl100k_base", "o200k_base", "r50k_base", "p50k_base"]
FAST = ["heap-merge", "backtrack"]

HARD = [
    b"a" * 2000, b" " * 1000, b"\n" * 500, b"ab" * 700, b"\xff" * 50, b"\xe4\xb8\xad" * 100,
    b"0123456789" * 30, "ſſſ".encode() * 40, b"=" * 300, b"-_" * 200, b"aaabbbcccaaabbbccc" * 20,
]


def native_encoder(vocab, name):
    """The Rust encoder of the same name (the extension is always built for the tests)."""
    return extension().Encoder(vocab.native_tables(), name)


def encoders(name):
    vocab = load_vocab(name)
    tables = MergeTables(vocab)
    fast = {e: get_encoder(e)(tables) for e in FAST}
    fast |= {f"native-{e}": native_encoder(vocab, e) for e in ["buffer-sweep", *FAST, "auto"]}
    return BufferSweepEncoder(tables), fast


@pytest.fixture(scope="module", params=VOCABS)
def vocab_encoders(request):
    return request.param, *encoders(request.param)


def check_all(reference, fast, piece: bytes) -> None:
    want = reference.encode_piece(piece)
    for name, encoder in fast.items():
        assert encoder.encode_piece(piece) == want, (name, piece)


def test_hard_inputs(vocab_encoders):
    _, reference, fast = vocab_encoders
    for piece in HARD:
        check_all(reference, fast, piece)


# Piece lengths where the native encoders change course: buffer-sweep's buffer sizes (8, 16,
# 32, 64, 128 bytes) and `auto`'s choices (buffer-sweep up to 64 bytes; up to 128 unless the
# backtrack tables are built, which `encoders` has done by making the native backtrack).
CROSSOVERS = [8, 16, 32, 64, 128]
CROSSOVER_SOURCES = [
    b"a" * 200,  # one pair repeated: ties of rank at every position
    b" " * 200,
    b"ab" * 100,
    "Съешь же ещё этих мягких французских булок, да выпей же чаю".encode(),
    "東京特許許可局局長今日急遽休暇許可拒否".encode() * 2,
    "ﻟﻠﻐﺔ العربية الفصحى وﺍﻟﻌﺎﻣﻴﺔ ελληνικά ¿Qué? naïve façade".encode() * 2,
]


def test_pieces_at_the_crossovers(vocab_encoders):
    _, reference, fast = vocab_encoders
    for edge in CROSSOVERS:
        for length in (edge - 1, edge, edge + 1):
            for source in CROSSOVER_SOURCES:
                for start in (0, 1, 3):
                    check_all(reference, fast, source[start:start + length])


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_bytes(vocab_encoders, data):
    _, reference, fast = vocab_encoders
    check_all(reference, fast, data.draw(st.binary(min_size=1, max_size=64)))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_token_concatenations(vocab_encoders, data):
    name, reference, fast = vocab_encoders
    token_bytes = load_vocab(name).token_bytes
    ids = data.draw(st.lists(st.integers(0, len(load_vocab(name).ranks) - 1), min_size=1, max_size=8))
    piece = b"".join(token_bytes[i] for i in ids if token_bytes[i] is not None)
    if piece:
        check_all(reference, fast, piece)


def test_every_qwen3_token_encodes_to_itself_without_lookup():
    """BPE reaches every Qwen3 token from its own bytes, so whole-piece lookup changes nothing
    there: the reason rank-based BPE with lookup equals HF's merge-list BPE for Qwen3."""
    vocab = load_vocab("qwen3")
    unreachable = []
    heap = get_encoder("heap-merge")(MergeTables(vocab))
    tables = heap.tables
    object.__setattr__(tables, "whole_piece_lookup", False)
    for piece, i in vocab.ranks.items():
        if len(piece) > 1 and heap.encode_piece(piece) != [i]:
            unreachable.append(i)
    assert unreachable == []


def test_hello_trace_on_qwen3():
    """The merge trace of "hello": (e,l)=45, (l,o)=129, (el,lo)=4535, (h,ello)=14734 → [14990]."""
    reference = BufferSweepEncoder(MergeTables(load_vocab("qwen3")))
    winners = []

    def trace(parts, candidates, best):
        rank = dict(candidates)[best]
        winners.append((parts[best], parts[best + 1], rank - 256))  # Qwen3: merge rank = id - 256

    parts = reference.merge(b"hello", trace=trace)
    assert winners == [(b"e", b"l", 45), (b"l", b"o", 129), (b"el", b"lo", 4535), (b"h", b"ello", 14734)]
    assert [reference.tables.ranks[p] for p in parts] == [14990]


def _tiny_pair_ranked() -> Vocab:
    """A vocab whose merge list is not in merged-id order, so it must stay pair-ranked."""
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
    # Merge (a, b) first although "ab" has the higher id; "abc" is made only from (ab, c).
    merges = {(ord("a"), ord("b")): 0, (ord("b"), ord("c")): 1, (257, ord("c")): 2}
    return Vocab(name="tiny", ranks=ranks, pattern=r"\S+|\s+", merges=merges, whole_piece_lookup=False)


def test_pair_ranked_merges_follow_the_merge_list():
    tables = MergeTables(_tiny_pair_ranked())
    for encoder in (BufferSweepEncoder(tables), get_encoder("heap-merge")(tables)):
        assert encoder.encode_piece(b"abc") == [258]  # (a,b) then (ab,c)
        assert encoder.encode_piece(b"bcab") == [256, 257]
        # (b,c) then nothing: (a,bc) is not a listed merge, although "abc" is a token.
        assert encoder.encode_piece(b"xabcx")[:1] == [ord("x")]
        assert encoder.encode_piece(b"bbc") == [ord("b"), 256]
    # Rank-based BPE on the same tokens merges "bc" (id 256) first and then a + bc = abc.
    rank_based = MergeTables(Vocab(name="t", ranks=tables.ranks, pattern="x", whole_piece_lookup=False))
    assert BufferSweepEncoder(rank_based).encode_piece(b"aabc") == [ord("a"), 258]
    assert BufferSweepEncoder(tables).encode_piece(b"aabc") == [ord("a"), 258]


@settings(max_examples=200, deadline=None)
@given(piece=st.text(alphabet="abcx", min_size=1, max_size=30).map(str.encode))
def test_heap_merge_equals_reference_when_pair_ranked(piece):
    vocab = _tiny_pair_ranked()
    tables = MergeTables(vocab)
    want = BufferSweepEncoder(tables).encode_piece(piece)
    assert get_encoder("heap-merge")(tables).encode_piece(piece) == want
    for name in ("buffer-sweep", "heap-merge", "auto"):
        assert native_encoder(vocab, name).encode_piece(piece) == want


def test_backtrack_refuses_pair_ranked_vocab():
    with pytest.raises(UnsupportedTokenizerError, match="heap-merge"):
        get_encoder("backtrack")(MergeTables(_tiny_pair_ranked()))
    with pytest.raises(UnsupportedTokenizerError, match="heap-merge"):
        native_encoder(_tiny_pair_ranked(), "backtrack")


def test_native_encoder_names_match_python_registry():
    assert sorted(extension().ENCODERS) == sorted(n for n in ENCODERS if n != "reference")
    assert native_encoder(load_vocab("gpt2"), "auto").name == "auto"  # the native-only hybrid
    with pytest.raises(UnknownComponentError, match="heap-merge"):
        native_encoder(load_vocab("gpt2"), "nope")


@pytest.mark.parametrize("name", ["backtrack", "auto"])
def test_native_worst_case_is_not_quadratic(name):
    """1 MiB of one letter in one piece: linear-ish encoders finish fast (buffer-sweep would not)."""
    import time

    encoder = native_encoder(load_vocab("cl100k_base"), name)
    encoder.encode_piece(b"a" * 1000)  # build lazy tables outside the timing
    start = time.perf_counter()
    ids = encoder.encode_piece(b"a" * (1 << 20))
    assert time.perf_counter() - start < 2.0
    assert ids == BufferSweepEncoder(MergeTables(load_vocab("cl100k_base"))).encode_piece(b"a" * 4096) * 256


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_runs_of_punctuation_that_backtrack_match_the_oracle(vocab, tiktoken_oracle):
    """Runs of `-`, `=`, `*`, `#` and tabs, which come as tokens of many lengths (26 of `-` in
    cl100k_base): a wrong long token is valid next to the one before it and leaves no valid
    token after it, so the backtrack encoder drops and retries tokens at every period of the
    run, and remembers which candidate comes first after which token. Every length up to 400,
    and some past 4,096 (where its remembered answers share slots) with each remainder."""
    native = native_encoder(load_vocab(vocab), "backtrack")
    oracle = tiktoken_oracle(vocab)
    for unit in "-=*#\t":
        for n in [*range(1, 401), *range(4090, 4100), 65_537]:
            piece = unit * n
            assert native.encode_piece(piece.encode()) == oracle.encode_ordinary(piece), (unit, n)


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_long_new_pieces_match_the_oracle(vocab, tiktoken_oracle):
    """Pieces of 129 bytes to 16 KiB and past it, of random letters, hex, base64 and bytes,
    which buffer-sweep merges by sweeping blocks of ranks and their minima (and `auto` gives
    it, up to 16 KiB): around each block size's edges (blocks of 16 to 128) and around 16 KiB.
    The oracle encodes each piece alone (one pre-token under these vocabularies' patterns
    for letters, hex and base64 of no digits; bytes are merged directly)."""
    vocab_ = load_vocab(vocab)
    natives = {name: native_encoder(vocab_, name) for name in ("buffer-sweep", "auto")}
    oracle = tiktoken_oracle(vocab)
    rng = random.Random(vocab)
    letters = "abcdefghijklmnopqrstuvwxyz"
    alphabets = {"letters": letters, "hex": "abcdef", "base64": letters.upper() + letters + "+/"}
    lengths = [129, 130, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 16_383, 16_384, 16_385, 16_400]
    for n in lengths:
        pieces = {name: "".join(rng.choice(abc) for _ in range(n)).encode() for name, abc in alphabets.items()}
        pieces["bytes"] = rng.randbytes(n)
        for name, piece in pieces.items():
            want = oracle._encode_single_piece(piece)
            for native_name, native in natives.items():
                assert native.encode_piece(piece) == want, (native_name, name, n)


def test_registry_names_and_errors():
    assert ENCODERS.names() == ["backtrack", "buffer-sweep", "heap-merge", "reference"]
    assert get_encoder("reference") is BufferSweepEncoder
    with pytest.raises(UnknownComponentError, match="heap-merge") as info:
        get_encoder("heap_merge")
    assert isinstance(info.value, KeyError) and "Did you mean 'heap-merge'" in str(info.value)


def test_pair_ranked_and_rank_based_rules_differ_where_expected():
    """(a,b) listed before (b,c) although "bc" has the lower id: HF merges "ab" first."""
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257}
    merges = {(ord("a"), ord("b")): 0, (ord("b"), ord("c")): 1}
    pair = MergeTables(Vocab(name="p", ranks=ranks, pattern="x", merges=merges, whole_piece_lookup=False))
    rank = MergeTables(Vocab(name="r", ranks=ranks, pattern="x"))
    for name in ("buffer-sweep", "heap-merge"):
        assert get_encoder(name)(pair).encode_piece(b"abc") == [257, ord("c")]
        assert get_encoder(name)(rank).encode_piece(b"abc") == [ord("a"), 256]
        assert native_encoder(pair.vocab, name).encode_piece(b"abc") == [257, ord("c")]
        assert native_encoder(rank.vocab, name).encode_piece(b"abc") == [ord("a"), 256]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_long_token_concatenations(vocab_encoders, data):
    """Pieces of 20–60 tokens: past auto's 128-byte switch to backtrack."""
    name, reference, fast = vocab_encoders
    token_bytes = load_vocab(name).token_bytes
    ids = data.draw(st.lists(st.integers(0, len(load_vocab(name).ranks) - 1), min_size=20, max_size=60))
    piece = b"".join(token_bytes[i] for i in ids if token_bytes[i] is not None)
    check_all(reference, fast, piece)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_runs_then_something_else(vocab_encoders, data):
    """Runs of one short unit (a byte, two bytes, a token) longer than the longest token, then
    another: the native backtrack encoder reuses its last longest match inside a run."""
    name, reference, fast = vocab_encoders
    token_bytes = load_vocab(name).token_bytes
    unit = st.one_of(
        st.sampled_from([b" ", b"\n", b"a", b"=", b"\xe4\xb8\xad", b" \n", b"ab"]),
        st.integers(0, len(load_vocab(name).ranks) - 1).map(lambda i: token_bytes[i] or b"x"),
    )
    parts = data.draw(st.lists(st.tuples(unit, st.integers(1, 120)), min_size=1, max_size=3))
    check_all(reference, fast, b"".join(u * n for u, n in parts)[:900])
