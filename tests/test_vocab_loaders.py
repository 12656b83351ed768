"""Vocabulary loading: every format, the pretrained registry, and bad files."""

from __future__ import annotations

import gzip
import hashlib
import json
from importlib import resources

import pytest

import wordsplit

from conftest import DATA
from wordsplit import UnsupportedTokenizerError, Vocab, VocabFormatError, list_vocabs, load_vocab
from wordsplit.formats.hf import load_vocab_merges, read_hf_tokenizer_json, read_vocab_merges
from wordsplit.formats.tiktoken import read_tiktoken
from wordsplit.vocabs.pretrained import PRETRAINED

HF = DATA / "hf"


@pytest.fixture(scope="module")
def qwen_json() -> dict:
    return json.loads(gzip.decompress((HF / "tokenizer.json.gz").read_bytes()))


def test_list_vocabs():
    assert list_vocabs() == [
        "cl100k_base", "gpt2", "o200k_base", "o200k_harmony", "p50k_base", "p50k_edit", "qwen3", "r50k_base"
    ]


@pytest.mark.parametrize("name", sorted(PRETRAINED))
def test_bundled_files_match_official_sha256(name):
    entry = PRETRAINED[name]
    data = gzip.decompress(resources.files("wordsplit.vocabs").joinpath("data", entry.file).read_bytes())
    assert hashlib.sha256(data).hexdigest() == entry.sha256


def test_tokenizer_json_equals_bundled_qwen3():
    from_json = load_vocab(HF / "tokenizer.json.gz")
    bundled = load_vocab("qwen3")
    assert from_json.merges is None, "Qwen3's merge list is in merged-id order: rank-based"
    assert from_json.content_hash == bundled.content_hash
    assert from_json.normalizer == "nfc"


def test_vocab_json_merges_txt_equals_bundled_qwen3():
    vocab = load_vocab_merges(HF / "vocab.json.gz", HF / "merges.txt.gz", HF / "tokenizer_config.json")
    assert vocab.content_hash == load_vocab("qwen3").content_hash
    assert vocab.eos_token_id == 151645


def test_gpt2_encoder_json_vocab_bpe_equals_r50k():
    vocab = load_vocab_merges(HF / "gpt2-encoder.json.gz", HF / "gpt2-vocab.bpe.gz")
    assert vocab.content_hash == load_vocab("gpt2").content_hash
    assert vocab.special_tokens == {"<|endoftext|>": 50256}


def test_merges_as_strings_or_pairs(qwen_json):
    spec = dict(qwen_json, model=dict(qwen_json["model"], merges=[" ".join(m) for m in qwen_json["model"]["merges"]]))
    a = read_hf_tokenizer_json(json.dumps(spec).encode())
    assert a.content_hash == load_vocab("qwen3").content_hash


def test_shuffled_merges_become_pair_ranked(qwen_json):
    merges = list(qwen_json["model"]["merges"])
    merges[0], merges[1] = merges[1], merges[0]
    vocab = read_hf_tokenizer_json(json.dumps(dict(qwen_json, model=dict(qwen_json["model"], merges=merges))).encode())
    assert vocab.merges is not None and not vocab.whole_piece_lookup


@pytest.mark.parametrize(
    "change, construct",
    [
        (lambda s: s["model"].update(type="WordPiece"), "WordPiece"),
        (lambda s: s["model"].update(type="Unigram"), "Unigram"),
        (lambda s: s["model"].update(dropout=0.1), "dropout"),
        (lambda s: s["model"].update(byte_fallback=True), "byte_fallback"),
        (lambda s: s.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁"}), "Metaspace"),
        (lambda s: s.update(normalizer={"type": "BertNormalizer"}), "BertNormalizer"),
        (lambda s: s.update(decoder={"type": "Metaspace"}), "Metaspace"),
        (lambda s: s["added_tokens"][0].update(lstrip=True), "lstrip"),
    ],
)
def test_unsupported_constructs_are_named(qwen_json, change, construct):
    spec = json.loads(json.dumps(qwen_json))
    change(spec)
    with pytest.raises(UnsupportedTokenizerError, match=construct):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="x/tokenizer.json")


@pytest.mark.parametrize(
    "data, entry",
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "no 'model'"),
    ],
)
def test_malformed_tokenizer_json(data, entry):
    with pytest.raises(VocabFormatError, match=entry) as info:
        read_hf_tokenizer_json(data, source="bad/tokenizer.json")
    assert "bad/tokenizer.json" in str(info.value) and isinstance(info.value, ValueError)


def test_merge_of_unknown_token_is_named(qwen_json):
    spec = json.loads(json.dumps(qwen_json))
    spec["model"]["merges"].insert(0, ["Ġ", "zzzz-not-a-token"])
    with pytest.raises(VocabFormatError, match="merge #0"):
        read_hf_tokenizer_json(json.dumps(spec).encode())


@pytest.mark.parametrize(
    "data, entry",
    [
        (b"YQ 0\n", "cannot parse"),  # bad base64 padding (tiktoken: binascii.Error)
        (b"YQ== x\n", "cannot parse"),
        (b"YQ== -1\n", "negative or far beyond"),
        (b"YQ== 0 extra\n", "expected 'base64 rank'"),
        (b"YQ== 0\nYQ== 1\n", "appears twice"),
        (b"YQ== 0\n", "256 bytes"),
    ],
)
def test_malformed_tiktoken(data, entry):
    with pytest.raises(VocabFormatError, match=entry):
        read_tiktoken(data, source="bad.tiktoken", pattern="x")


def test_vocab_validation():
    base = {bytes([b]): b for b in range(256)}
    with pytest.raises(VocabFormatError, match="id 5 is used twice"):
        Vocab(name="v", ranks=base, pattern="x", special_tokens={"<s>": 5})
    with pytest.raises(VocabFormatError, match="normalizer"):
        Vocab(name="v", ranks=base, pattern="x", normalizer="NFKC")
    with pytest.raises(VocabFormatError, match="eos_token_id"):
        Vocab(name="v", ranks=base, pattern="x", eos_token_id=999)
    with pytest.raises(VocabFormatError, match="n_vocab"):
        Vocab(name="v", ranks=base, pattern="x", n_vocab=10)
    vocab = Vocab(name="v", ranks=base, pattern="x")
    with pytest.raises(AttributeError, match="immutable"):
        vocab.pattern = "y"
    with pytest.raises(TypeError):
        vocab.ranks[b"zz"] = 1


@pytest.fixture(params=["native", "python"])
def packed_checks(request, monkeypatch):
    """Vocab.from_packed with the native core checking the tokens, and without the core."""
    import wordsplit.vocab

    if request.param == "python":
        monkeypatch.setattr(wordsplit.vocab, "native_module", lambda: None)
    return request.param


def _packed(ranks: dict[bytes, int]) -> dict:
    from array import array

    return dict(blob=b"".join(ranks), ids=array("I", ranks.values()), lengths=array("I", map(len, ranks)))


def test_packed_vocab_equals_the_constructed_one(packed_checks):
    vocab = load_vocab("o200k_harmony")  # shared special ids, eos, n_vocab above the largest id
    fields = dict(
        name=vocab.name, pattern=vocab.pattern, n_vocab=vocab.n_vocab, special_tokens=vocab.special_tokens,
        added_tokens=vocab.added_tokens, eos_token_id=vocab.eos_token_id, source=vocab.source,
    )
    packed = Vocab.from_packed(**_packed(dict(vocab.ranks)), **fields)
    assert (packed.native_tables() is None) == (packed_checks == "python")
    assert packed.n_bpe == len(packed.ranks) == len(vocab.ranks)
    assert packed.content_hash == vocab.content_hash and packed.token_bytes == vocab.token_bytes
    assert repr(packed) == repr(vocab)


def test_packed_vocab_validation(packed_checks):
    """The checks of the constructor hold for packed tokens too, whoever makes them."""
    base = {bytes([b]): b for b in range(256)}
    bad = {
        "repeated bytes": ({**base, b"a": 300}, {}),
        "id used twice": ({**base, b"ab": 5}, {}),
        "a literal on a BPE id": (base, {"special_tokens": {"<s>": 7}}),
        "id above n_vocab": ({**base, b"ab": 400}, {}),
        "a missing byte": ({k: v for k, v in base.items() if k != b"z"}, {}),
        "eos without a token": (base, {"eos_token_id": 290}),
    }
    for label, (ranks, extra) in bad.items():
        with pytest.raises(VocabFormatError, match="^v: "):
            Vocab.from_packed(**_packed(ranks), name="v", pattern="x", n_vocab=300, **extra)
            pytest.fail(label)
    with pytest.raises(VocabFormatError, match="do not add up"):
        Vocab.from_packed(**{**_packed(base), "blob": b"xyz"}, name="v", pattern="x", n_vocab=300)
    ok = Vocab.from_packed(**_packed({**base, b"ab": 256}), name="v", pattern="x", n_vocab=300,
                           special_tokens={"<s>": 299, "<t>": 299}, eos_token_id=299)
    assert ok.ranks[b"ab"] == 256 and ok.token_bytes[299] == b"<s>" and ok.token_bytes[280] is None


def test_vocab_json_needs_merges(tmp_path):
    (tmp_path / "vocab.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="merges.txt"):
        load_vocab(tmp_path / "vocab.json")


def test_load_by_directory(tmp_path):
    (tmp_path / "tokenizer.json.gz").write_bytes((HF / "tokenizer.json.gz").read_bytes())
    assert load_vocab(tmp_path).content_hash == load_vocab("qwen3").content_hash


def test_vocab_merges_without_config_is_gpt2_style():
    vocab_json = json.dumps({**{chr(c): i for i, c in enumerate(range(33, 127))}}).encode()
    # (HF loads such a file and drops the missing bytes; wordsplit needs all 256)
    with pytest.raises(UnsupportedTokenizerError, match="256 byte tokens"):
        read_vocab_merges(vocab_json, b"#version: 0.2\n", source="v.json")


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_name_is_not_the_current_directory(name):
    with pytest.raises(wordsplit.UnknownVocabError, match="needs a name or a path"):
        load_vocab(name)


@pytest.mark.parametrize("bad_id", [[1], "1", 1.5, None, True])
def test_a_vocab_id_that_is_not_an_integer_is_a_format_error(bad_id):
    from wordsplit.formats.hf import read_vocab_merges

    with pytest.raises(wordsplit.VocabFormatError, match="ids are non-negative integers"):
        read_vocab_merges(json.dumps({"a": bad_id}).encode(), b"", source="bad/vocab.json")
