"""wordsplit.explain: the merge trace, pass by pass, and its agreement with encode."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import TokenizerOptions, Vocab
from wordsplit.errors import DisallowedSpecialError
from wordsplit.explain import explain, format_explanation

from conftest import tokenizer_for


def winners(piece):
    """Each pass's winning pair and its merge rank, or None for a final pass that merges nothing."""
    out = []
    for step in piece.passes:
        won = None if step.winner is None else step.candidates[step.winner]
        out.append(None if won is None else (won.left, won.right, won.rank))
    return out


def test_hello_on_qwen3_shows_every_candidate_and_winner():
    expl = explain(tokenizer_for("qwen3"), "hello")
    (piece,) = expl.pieces
    assert (piece.text, piece.kind, piece.whole_token_id, piece.ids, piece.merge_ids) == (
        "hello", "bpe", 14990, [14990], [14990])
    first = piece.passes[0]
    assert first.symbols == [b"h", b"e", b"l", b"l", b"o"]
    # Merge rank = merged id - 256 on Qwen3: (e,l) makes token 301, the 45th merge.
    assert [(c.left, c.right, c.rank, c.merged_id) for c in first.candidates] == [
        (b"h", b"e", 127, 383), (b"e", b"l", 45, 301), (b"l", b"l", 398, 654), (b"l", b"o", 129, 385)]
    assert winners(piece) == [(b"e", b"l", 45), (b"l", b"o", 129), (b"el", b"lo", 4535), (b"h", b"ello", 14734)]
    assert expl.ids == [14990] and expl.rank_base == 256


def test_hello_text_trace_has_the_numbers_of_the_issue():
    text = format_explanation(explain(tokenizer_for("qwen3"), "hello"))
    assert "(h,e)=127 (e,l)=45 (l,l)=398 (l,o)=129 -> (e,l) wins, makes 301" in text
    assert "(h,ello)=14734 -> (h,ello) wins, makes 14990" in text
    assert "whole token, one lookup: 14990 (the merge passes below reach the same id)" in text


def test_a_high_priority_pair_starves():
    """In "erence", (r,e) is the second merge BPE would make anywhere (rank 9), but (e,r),
    rank 5, takes its "r" first; (r,e) never merges and the piece ends as er + ence."""
    (piece,) = explain(tokenizer_for("qwen3"), "erence").pieces
    first = piece.passes[0]
    assert [(c.left, c.right, c.rank) for c in first.candidates] == [
        (b"e", b"r", 5), (b"r", b"e", 9), (b"e", b"n", 12), (b"n", b"c", 760), (b"c", b"e", 90)]
    assert winners(piece) == [(b"e", b"r", 5), (b"e", b"n", 12), (b"c", b"e", 90), (b"en", b"ce", 507), None]
    assert piece.passes[-1].symbols == [b"er", b"ence"]
    assert [(c.left, c.right, c.rank) for c in piece.passes[-1].candidates] == [(b"er", b"ence", None)]
    assert all((c.left, c.right) != (b"r", b"e") for step in piece.passes[1:] for c in step.candidates)
    assert (piece.whole_token_id, piece.ids) == (None, [261, 763])
    assert "(er,ence)=- -> no pair merges: stop" in format_explanation(explain(tokenizer_for("qwen3"), "erence"))


def test_literals_normalization_and_pieces():
    tok = tokenizer_for("qwen3")
    expl = explain(tok, "Cafe\u0301<think>hi<|im_end|>", allowed_special="all")
    assert [(s.text, s.normalized) for s in expl.segments] == [
        ("Cafe\u0301", "Caf\u00e9"), ("<think>", "<think>"), ("hi", "hi"), ("<|im_end|>", "<|im_end|>")]
    assert [(p.text, p.kind, p.passes == []) for p in expl.pieces] == [
        ("Caf\u00e9", "bpe", False), ("<think>", "added", True), ("hi", "bpe", False), ("<|im_end|>", "special", True)]
    assert expl.ids == tok.encode("Cafe\u0301<think>hi<|im_end|>", allowed_special="all")
    text = format_explanation(expl)
    assert "normalized (nfc): 'Cafe\\u0301' -> 'Caf\\xe9'" in text
    assert "'<think>': added token (always matched), one lookup -> [151667]" in text
    assert "'<|im_end|>': special token, one lookup -> [151645]" in text


def test_special_policy_is_encode_s():
    tok = tokenizer_for("cl100k_base")
    with pytest.raises(DisallowedSpecialError):
        explain(tok, "a<|endoftext|>")
    as_text = explain(tok, "a<|endoftext|>", disallowed_special=())
    assert all(p.kind == "bpe" for p in as_text.pieces)
    assert as_text.ids == tok.encode("a<|endoftext|>", disallowed_special=())


def test_pair_ranked_vocab_uses_the_listed_ranks():
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
    merges = {(ord("a"), ord("b")): 0, (ord("b"), ord("c")): 1, (257, ord("c")): 2}
    vocab = Vocab(name="tiny", ranks=ranks, pattern=r"\S+|\s+", merges=merges, whole_piece_lookup=False)
    expl = explain(TokenizerOptions(backend="python").build(vocab), "abc")
    (piece,) = expl.pieces
    assert expl.rank_base is None and piece.whole_token_id is None
    assert [(c.left, c.right, c.rank, c.merged_id) for c in piece.passes[0].candidates] == [
        (b"a", b"b", 0, 257), (b"b", b"c", 1, 256)]
    assert winners(piece) == [(b"a", b"b", 0), (b"ab", b"c", 2)] and piece.ids == [258]
    assert "its position in the merge list" in format_explanation(expl)


def test_whole_piece_lookup_that_merges_cannot_reach():
    # "abcd" is a token, but merging stops at a + bc + d: the lookup decides, and the trace says so.
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"abcd": 257}
    tok = TokenizerOptions(backend="python").build(Vocab(name="t", ranks=ranks, pattern=r"\S+"))
    (piece,) = explain(tok, "abcd").pieces
    assert (piece.ids, piece.merge_ids) == ([257], [ord("a"), 256, ord("d")])
    assert "the merge passes below would give [97, 256, 100]; the lookup decides" in format_explanation(
        explain(tok, "abcd"))


def test_json_form():
    data = json.loads(json.dumps(explain(tokenizer_for("qwen3"), "hi there").to_dict()))
    piece = data["segments"][0]["pieces"][1]
    assert piece["text"] == " there" and piece["bytes"] == b" there".hex()
    assert piece["passes"][0]["symbol_text"][0] == "␣" and data["ids"] == [6023, 1052]


# Literals of both vocabularies, whitespace, a decomposed character, a lone surrogate.
SPECIAL_BITS = ["<|endoftext|>", "<|im_end|>", "<think>", "<|fim_prefix|>", " ", "\n", "e\u0301", "\ud83d"]


@pytest.mark.parametrize("name", ["qwen3", "cl100k_base"])
@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.one_of(st.text(max_size=12), st.sampled_from(SPECIAL_BITS)), max_size=6))
def test_explain_ids_equal_encode(name, parts):
    text = "".join(parts)
    tok = tokenizer_for(name, backend="auto")  # native when built: the ids a user gets
    assert explain(tok, text, allowed_special="all").ids == tok.encode(text, allowed_special="all")
    assert explain(tok, text, disallowed_special=()).ids == tok.encode(text, disallowed_special=())
