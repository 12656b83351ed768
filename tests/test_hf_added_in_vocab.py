"""tokenizer.json added tokens that are also tokens of the BPE ``model.vocab``, and the ids HF
gives added tokens, against HF ``tokenizers`` on both backends: ids, char offsets, decode.

HF adds a file's ``added_tokens`` in order when it loads it: one whose content is a key of
``model.vocab`` gets that entry's id, any other the next id from the vocab's size up; the ids
the file lists are not read. The files here are edited JSON (ids that disagree with HF's
included) read by HF and wordsplit alike, built from Qwen3's first 3,000 tokens
(tests/data/hf), and GPT-2's vocabulary written as a tokenizer.json.
"""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer as HFTokenizer

import hf_files
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.training.save import tokenizer_json

BACKENDS = ("python", "native")
SIZE = 3000  # the slice's vocab size; Qwen3's ids below it run without gaps


def _spec(added: list[tuple[str, int, bool]], *, extra_vocab: dict[str, int] | None = None, **model) -> dict:
    """Qwen3's first 3,000 tokens, no normalizer, with ``added`` as (content, listed id, special)."""
    spec = hf_files.small_spec(added_tokens=[
        {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": not special, "special": special}
        for content, i, special in added])
    spec["model"]["vocab"].update(extra_vocab or {})
    spec["model"].update(**model)
    return spec


def _pair(spec: dict):
    text = json.dumps(spec)
    vocab = read_hf_tokenizer_json(text.encode(), source="edited/tokenizer.json")
    return HFTokenizer.from_str(text), vocab, {b: TokenizerOptions(backend=b).build(vocab) for b in BACKENDS}


def _check(pair, text: str) -> None:
    hf, _, toks = pair
    expected = hf.encode(text, add_special_tokens=False)
    for backend, tok in toks.items():
        assert tok.encode(text, allowed_special="all") == expected.ids, (backend, text)
        got = tok.encode_with_offsets(text, allowed_special="all")
        assert got.ids == expected.ids and got.char_offsets == expected.offsets, (backend, text)
        assert tok.decode(expected.ids) == hf.decode(expected.ids, skip_special_tokens=False), (backend, text)
        stream = tok.decode_stream(skip_special_tokens=True)
        streamed = "".join(filter(None, [*(stream.step(i) for i in expected.ids), stream.finish()]))
        assert streamed == hf.decode(expected.ids, skip_special_tokens=True), (backend, text)


def _ids(pair) -> dict[str, int]:
    hf, vocab, _ = pair
    assert {**vocab.special_tokens, **vocab.added_tokens} == {
        token.content: i for i, token in hf.get_added_tokens_decoder().items()}
    return {**vocab.special_tokens, **vocab.added_tokens}


TEXTS = [
    "",
    "singing the thing<|endoftext|>the",
    "<|endoftext|><|endoftext|> ing",
    "Ġthe the Ġthe\u0120thing",
    "café é e\u0301 éé",
    "hello world  world<a><b> <a>",
    "ingthe theing thethe",
    "<|endoftext|",
]

# Real files list <|endoftext|> in both places with one id; edited ones may disagree.
COLLIDING = {
    "same ids": [("<|endoftext|>", SIZE, True), ("ing", 287, False), ("the", 1782, True)],
    "other ids": [("<|endoftext|>", SIZE + 7, True), ("ing", SIZE + 1, False), ("the", 5, True)],
    "byte-level text": [("Ġthe", 279, False), ("é", SIZE + 2, False)],
    "new and listed out of order": [("<a>", 5000, True), (" world", 4, False), ("<b>", SIZE + 1, True),
                                    ("ing", 9, False)],
}


@pytest.fixture(scope="module", params=list(COLLIDING))
def colliding(request):
    return _pair(_spec(COLLIDING[request.param], extra_vocab={"<|endoftext|>": SIZE}))


@pytest.mark.parametrize("text", TEXTS)
def test_added_tokens_in_the_vocab_match_hf(colliding, text):
    _check(colliding, text)


def test_hf_ids_for_added_tokens():
    """The vocab's id for a token in it, whatever the file lists; the next free ids for the rest."""
    vocab_ids = {"<|endoftext|>": SIZE}
    assert _ids(_pair(_spec(COLLIDING["other ids"], extra_vocab=vocab_ids))) == {
        "<|endoftext|>": SIZE, "the": 1782, "ing": 287}
    # "Ġthe" is the vocab key of " the"; "é" of the byte 0xE9 (so it decodes as that byte).
    assert _ids(_pair(_spec(COLLIDING["byte-level text"], extra_vocab=vocab_ids))) == {"Ġthe": 279, "é": 165}
    assert _ids(_pair(_spec(COLLIDING["new and listed out of order"], extra_vocab=vocab_ids))) == {
        "<a>": SIZE + 1, " world": SIZE + 2, "<b>": SIZE + 3, "ing": 287}
    assert _ids(_pair(_spec(COLLIDING["new and listed out of order"]))) == {
        "<a>": SIZE, " world": SIZE + 1, "<b>": SIZE + 2, "ing": 287}


def test_a_merge_may_make_an_added_token():
    """"ing" is made by a merge: it stays a BPE token (of "singing" when the added token does
    not take it), and the added token names it."""
    pair = _pair(_spec([("ing", 287, False)]))
    _, vocab, toks = pair
    assert vocab.ranks[b"ing"] == 287 == vocab.added_tokens["ing"]
    for backend, tok in toks.items():
        assert tok.decode([287, 287]) == "inging"
    _check(pair, "singing kings")


def test_an_entry_only_the_added_token_reaches_is_set_aside():
    """No merge makes "<|endoftext|>": the Vocab equals the same tokenizer with it only special."""
    pair = _pair(_spec([("<|endoftext|>", SIZE, True)], extra_vocab={"<|endoftext|>": SIZE}))
    _, vocab, _ = pair
    assert b"<|endoftext|>" not in vocab.ranks and vocab.special_tokens == {"<|endoftext|>": SIZE}
    alone = read_hf_tokenizer_json(json.dumps(_spec([("<|endoftext|>", SIZE, True)])).encode(), source="x")
    assert alone.content_hash == vocab.content_hash
    _check(pair, "a<|endoftext|>b")


def test_ignore_merges_keeps_the_entry():
    """With ignore_merges HF looks a word up in the vocab first: a single_word token it did not
    take ("_hello" has no word boundary before it) is still found there."""
    spec = _spec([("hello", SIZE, False)], extra_vocab={"hello": SIZE}, ignore_merges=True)
    spec["added_tokens"][0].update(single_word=True, normalized=False)
    pair = _pair(spec)
    assert pair[1].ranks[b"hello"] == SIZE
    for text in ("hello _hello xhello", "hello,hello"):
        _check(pair, text)


def test_vocab_with_gaps_is_refused():
    """HF numbers new added tokens from the vocab's size, here onto an id a vocab entry has."""
    spec = _spec([("<s>", 0, True)])
    vocab = spec["model"]["vocab"]
    spec["model"]["vocab"] = {text: i + 1 if i >= 2000 else i for text, i in vocab.items()}
    with pytest.raises(UnsupportedTokenizerError, match=r"'<s>' the id 3000 .* vocab entry"):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="gaps.json")


@pytest.fixture(scope="module")
def gpt2_json():
    """GPT-2 as a tokenizer.json: <|endoftext|> is in model.vocab and in added_tokens, id 50256."""
    text = tokenizer_json(load_vocab("gpt2"))
    spec = json.loads(text)
    assert spec["model"]["vocab"]["<|endoftext|>"] == 50256 == spec["added_tokens"][0]["id"]
    vocab = read_hf_tokenizer_json(text.encode(), source="gpt2/tokenizer.json")
    return HFTokenizer.from_str(text), vocab, {b: TokenizerOptions(backend=b).build(vocab) for b in BACKENDS}


@pytest.mark.parametrize("text", [
    "Hello world<|endoftext|>The end.",
    "<|endoftext|><|endoftext|>  <|endoftext|",
    "naïve café 🦀 <|endoftext|>\n\n  x",
])
def test_gpt2_tokenizer_json(gpt2_json, text):
    _check(gpt2_json, text)
    gpt2 = load_vocab("gpt2")
    assert gpt2_json[1].ranks == gpt2.ranks and gpt2_json[1].special_tokens == gpt2.special_tokens


@pytest.mark.parametrize("case", list(COLLIDING))
def test_compat_tokenizers_match_hf(case):
    """wordsplit.compat.tokenizers on the same files: tokens, decode with and without special
    tokens, and the id ↔ token tables."""
    from wordsplit.compat.tokenizers import Tokenizer as CompatTokenizer

    text = json.dumps(_spec(COLLIDING[case], extra_vocab={"<|endoftext|>": SIZE}))
    hf, ours = HFTokenizer.from_str(text), CompatTokenizer.from_str(text)
    sample = "singing the thing<|endoftext|>Ġthe café é  world<a><b>"
    expected, got = hf.encode(sample), ours.encode(sample)
    assert (got.ids, got.tokens, got.offsets) == (expected.ids, expected.tokens, expected.offsets)
    for skip in (True, False):
        assert ours.decode(expected.ids, skip_special_tokens=skip) == hf.decode(expected.ids, skip_special_tokens=skip)
    assert [ours.id_to_token(i) for i in range(SIZE + 5)] == [hf.id_to_token(i) for i in range(SIZE + 5)]
    assert ours.get_vocab() == hf.get_vocab() and ours.get_vocab_size() == hf.get_vocab_size()
    for token in ("ing", "the", "Ġthe", "é", "<|endoftext|>", "<a>", " world"):
        assert ours.token_to_id(token) == hf.token_to_id(token), token
