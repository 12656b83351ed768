"""Vocabulary loading: every format, the pretrained registry, and bad files."""

from __future__ import annotations

import gzip
import hashlib
import json
from importlib import resources

import pytest

import wordsplit

from conftest import DATA
from wordsplit import Vocab, list_vocabs, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.hf import load_vocab_merges, read_hf_tokenizer_json, read_vocab_merges
from wordsplit.formats.tiktoken import read_tiktoken
from wordsplit.spec import Nfc, NoNormalizer
from wordsplit.vocabs.pretrained import PRETRAINED, SENTENCEPIECE_PRETRAINED

HF = DATA / "hf"


@pytest.fixture(scope="module")
def qwen_json() -> dict:
    return json.loads(gzip.decompress((HF / "tokenizer.json.gz").read_bytes()))


def test_list_vocabs():
    assert list_vocabs() == [
        "cl100k_base", "gpt2", "mistral-v1", "o200k_base", "o200k_harmony", "p50k_base", "p50k_edit", "qwen3",
        "r50k_base",
    ]


@pytest.mark.parametrize("name", sorted(PRETRAINED))
def test_bundled_files_match_official_sha256(name):
    entry = PRETRAINED[name]
    data = gzip.decompress(resources.files("wordsplit.vocabs").joinpath("data", entry.file).read_bytes())
    assert hashlib.sha256(data).hexdigest() == entry.sha256


@pytest.mark.parametrize("name", sorted(SENTENCEPIECE_PRETRAINED))
def test_bundled_sentencepiece_models_match_official_sha256(name):
    entry = SENTENCEPIECE_PRETRAINED[name]
    data = gzip.decompress(resources.files("wordsplit.vocabs").joinpath("data", entry.file).read_bytes())
    assert hashlib.sha256(data).hexdigest() == entry.sha256


def test_registered_sentencepiece_model_is_its_file():
    """mistral-v1 is mistral_common's tokenizer.model.v1 (tests/data/spm), loaded as sentencepiece does."""
    from wordsplit.store.sources import pretrained_key

    named = load_vocab("mistral-v1")
    local = load_vocab(DATA / "spm" / "mistral-v1.model")
    assert named.content_hash == local.content_hash and named.pipeline.sentencepiece
    assert (named.n_vocab, named.bos_token_id, named.eos_token_id, named.unk_token_id) == (32000, 1, 2, 0)
    keys = [pretrained_key(entry) for entry in [*PRETRAINED.values(), *SENTENCEPIECE_PRETRAINED.values()]]
    assert len(set(keys)) == len({entry.file for entry in [*PRETRAINED.values(),
                                                           *SENTENCEPIECE_PRETRAINED.values()]})


def test_tokenizer_json_equals_bundled_qwen3():
    from_json = load_vocab(HF / "tokenizer.json.gz")
    bundled = load_vocab("qwen3")
    assert from_json.merges is None, "Qwen3's merge list is in merged-id order: rank-based"
    assert from_json.content_hash == bundled.content_hash
    assert from_json.normalizer == Nfc()


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
        (lambda s: s.update(normalizer={"type": "Nmt"}), "Nmt"),
        (lambda s: s.update(decoder={"type": "Metaspace"}), "Metaspace"),
        (lambda s: (s["added_tokens"][0].update(rstrip=True), s["added_tokens"][1].update(content=" ", lstrip=True)),
         "rstrip=true and ' ' is whitespace with lstrip=true"),
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
    ],
)
def test_malformed_tiktoken(data, entry):
    with pytest.raises(VocabFormatError, match=entry):
        read_tiktoken(data, source="bad.tiktoken", pattern="x")


def test_a_vocabulary_may_lack_single_byte_tokens():
    """A byte without a token is recorded (and dropped before merging when encoding)."""
    only_a = read_tiktoken(b"YQ== 0\n", source="a.tiktoken", pattern="x")
    assert only_a.missing_bytes == bytes(b for b in range(256) if b != ord("a"))
    assert Vocab(name="v", ranks={bytes([b]): b for b in range(256)}, pattern="x").missing_bytes == b""


def test_vocab_validation():
    base = {bytes([b]): b for b in range(256)}
    with pytest.raises(VocabFormatError, match="id 300 is used twice"):
        Vocab(name="v", ranks=base, pattern="x", special_tokens={"<s>": 300}, added_tokens={"<t>": 300})
    # A literal may name a BPE token (HF's added token that is in the model's vocab); the id
    # decodes as the BPE token.
    named = Vocab(name="v", ranks=base, pattern="x", special_tokens={"<s>": 5})
    assert named.token_bytes[5] == b"\x05" and named.n_vocab == 256
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
        monkeypatch.setattr(wordsplit.vocab, "extension", lambda: None)
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
        "two literals on one id": (base, {"special_tokens": {"<s>": 280}, "added_tokens": {"<t>": 280}}),
        "id above n_vocab": ({**base, b"ab": 400}, {}),
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
    named = Vocab.from_packed(**_packed(base), name="v", pattern="x", n_vocab=300, special_tokens={"<s>": 7})
    assert named.token_bytes[7] == b"\x07" and named.ranks[b"\x07"] == 7
    no_z = Vocab.from_packed(**_packed({k: v for k, v in base.items() if k != b"z"}), name="v", pattern="x",
                             n_vocab=300)
    assert no_z.missing_bytes == b"z" and b"z" not in no_z.ranks


def test_vocab_json_needs_merges(tmp_path):
    (tmp_path / "vocab.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="merges.txt"):
        load_vocab(tmp_path / "vocab.json")


def test_load_by_directory(tmp_path):
    (tmp_path / "tokenizer.json.gz").write_bytes((HF / "tokenizer.json.gz").read_bytes())
    assert load_vocab(tmp_path).content_hash == load_vocab("qwen3").content_hash


def test_vocab_merges_without_config_is_gpt2_style():
    vocab_json = json.dumps({**{chr(c): i for i, c in enumerate(range(33, 127))}}).encode()
    # Only the printable ASCII bytes have tokens: the others are dropped when encoding, as HF does.
    vocab = read_vocab_merges(vocab_json, b"#version: 0.2\n", source="v.json")
    assert vocab.missing_bytes == bytes(b for b in range(256) if not 33 <= b < 127)


ASCII_VOCAB_JSON = json.dumps({chr(c): i for i, c in enumerate(range(33, 127))}).encode()


@pytest.mark.parametrize("config, shown",
                         [("[1, 2]", "an array"), ('"x"', "a string"), ("null", "null"), ("7", "a number")])
def test_a_tokenizer_config_that_is_not_an_object_is_a_format_error(config, shown):
    with pytest.raises(VocabFormatError) as caught:
        read_vocab_merges(ASCII_VOCAB_JSON, b"", tokenizer_config=config.encode(), source="m/vocab.json")
    message = str(caught.value)
    assert message.startswith("m/vocab.json: its tokenizer_config.json must be a JSON object")
    assert f"not {shown}; correct the file, or save the tokenizer again with transformers' save_pretrained" in message


@pytest.mark.parametrize("decoder, problem", [
    ([{"content": "<x>"}], "must be an object of id → token, not an array"),
    ({"94": ["<x>"]}, "bad added_tokens_decoder entry '94'"),
    ({"94": {"content": ["<x>"]}}, "bad added_tokens_decoder entry '94'"),
    ({"94": {"special": True}}, "bad added_tokens_decoder entry '94'"),
    ({"x": {"content": "<x>"}}, "bad added_tokens_decoder entry 'x'"),
])
def test_a_malformed_added_tokens_decoder_is_a_format_error(decoder, problem):
    config = json.dumps({"added_tokens_decoder": decoder}).encode()
    with pytest.raises(VocabFormatError, match=problem):
        read_vocab_merges(ASCII_VOCAB_JSON, b"", tokenizer_config=config, source="m/vocab.json")


def test_a_tokenizer_class_or_eos_token_of_another_type_names_nothing():
    """As the Rust reader: GPT-2's pattern and no eos, not a TypeError."""
    decoder = {"94": {"content": "<|endoftext|>", "special": True}}
    for config, eos in [({"tokenizer_class": ["Qwen2Tokenizer"]}, 94), ({"eos_token": [1]}, None),
                        ({"eos_token": 7}, None), ({"eos_token": []}, 94), ({"eos_token": {"content": ""}}, 94)]:
        data = json.dumps({**config, "added_tokens_decoder": decoder}).encode()
        vocab = read_vocab_merges(ASCII_VOCAB_JSON, b"", tokenizer_config=data, source="m/vocab.json")
        expected = (load_vocab("gpt2").pattern, NoNormalizer(), eos)
        assert (vocab.pattern, vocab.normalizer, vocab.eos_token_id) == expected


def test_directory_of_a_sentencepiece_repo_reads_its_tokenizer_json(tmp_path):
    """A snapshot of an HF SentencePiece repo (tokenizer.json, tokenizer.model, tokenizer_config.json)
    loads its tokenizer.json, as transformers and hf:ORG/REPO do; the model alone loads the model."""
    repo = tmp_path / "Mistral-7B"
    repo.mkdir()
    json_gz = DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz"
    (repo / "tokenizer.json").write_bytes(gzip.decompress(json_gz.read_bytes()))
    (repo / "tokenizer.model").write_bytes((DATA / "spm" / "mistral-v7.model").read_bytes())
    (repo / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>"}))
    vocab = load_vocab(repo)
    assert vocab.name == "Mistral-7B" and vocab.eos_token_id == 2
    assert (vocab.pipeline.model.merge_by, vocab.pipeline.decoder.style) == ("rank", "hf")  # read as HF reads it
    (repo / "tokenizer.json").unlink()
    model = load_vocab(repo)
    assert model.pipeline == load_vocab(DATA / "spm" / "mistral-v7.model").pipeline
    assert (model.pipeline.model.merge_by, model.pipeline.decoder.style) == ("score", "sentencepiece")
    (repo / "tokenizer.json").write_bytes(b"{}")
    (repo / "other.model").write_bytes((DATA / "spm" / "mistral-v1.model").read_bytes())
    with pytest.raises(wordsplit.errors.UnknownVocabError, match="several vocabulary files"):
        load_vocab(repo)


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_name_is_not_the_current_directory(name):
    with pytest.raises(wordsplit.errors.UnknownVocabError, match="needs a name or a path"):
        load_vocab(name)


@pytest.mark.parametrize("bad_id", [[1], "1", 1.5, None, True])
def test_a_vocab_id_that_is_not_an_integer_is_a_format_error(bad_id):
    from wordsplit.formats.hf import read_vocab_merges

    with pytest.raises(wordsplit.errors.VocabFormatError, match="ids are non-negative integers"):
        read_vocab_merges(json.dumps({"a": bad_id}).encode(), b"", source="bad/vocab.json")


# ---------------------------------------------------------------------------------------------
# What comes with a tokenizer file: tokenizer_config.json; directories; names.

QWEN_CONFIG = json.loads((HF / "tokenizer_config.json").read_text(encoding="utf-8"))


def _copy(directory, *names, rename=None):
    """Copies of tests/data/hf files in ``directory`` (made), renamed per ``rename``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / (rename or {}).get(name, name)).write_bytes((HF / name).read_bytes())
    return directory


def test_tokenizer_config_beside_tokenizer_json(tmp_path):
    directory = _copy(tmp_path / "Qwen3-8B", "tokenizer.json.gz", "tokenizer_config.json")
    vocab = load_vocab(directory / "tokenizer.json.gz")
    assert vocab.name == "Qwen3-8B"
    assert (vocab.eos_token_id, vocab.bos_token_id) == (151645, None)  # "bos_token": null
    assert vocab.chat_template == QWEN_CONFIG["chat_template"]
    assert vocab.content_hash == load_vocab("qwen3").content_hash
    assert load_vocab(directory).chat_template == vocab.chat_template
    alone = load_vocab(_copy(tmp_path / "bare", "tokenizer.json.gz") / "tokenizer.json.gz")
    assert (alone.eos_token_id, alone.chat_template, alone.name) == (None, None, "bare")  # a missing config is fine


def test_tokenizer_config_beside_vocab_json(tmp_path):
    directory = _copy(tmp_path / "Qwen3-8B", "vocab.json.gz", "merges.txt.gz", "tokenizer_config.json")
    vocab = load_vocab(directory)
    assert vocab.name == "Qwen3-8B" and vocab.eos_token_id == 151645
    assert vocab.chat_template == QWEN_CONFIG["chat_template"]


def test_the_config_is_part_of_the_cache_key(tmp_path):
    directory = _copy(tmp_path / "m", "tokenizer.json.gz")
    config = directory / "tokenizer_config.json"
    config.write_text(json.dumps({"eos_token": "<|im_end|>", "chat_template": "A"}))
    first = load_vocab(directory)
    config.write_text(json.dumps({"eos_token": {"content": "<|endoftext|>", "__type": "AddedToken"},
                                  "bos_token": "<|im_start|>",
                                  "chat_template": [{"name": "tool_use", "template": "T"},
                                                    {"name": "default", "template": "B"}]}))
    second = load_vocab(directory)
    assert (first.eos_token_id, first.bos_token_id, first.chat_template) == (151645, None, "A")
    assert (second.eos_token_id, second.bos_token_id, second.chat_template) == (151643, 151644, "B")
    config.write_text(json.dumps({"eos_token": "no such token",
                                  "chat_template": [{"name": "tool_use", "template": "T"}]}))
    third = load_vocab(directory)  # a token the vocabulary lacks, a list without "default": left unset
    assert (third.eos_token_id, third.chat_template) == (None, None)


@pytest.mark.parametrize("config, message", [
    (b"[]", "is a JSON object"),
    (b"{", "not valid JSON"),
    (b'{"eos_token": 5}', "eos_token must be a string"),
    (b'{"bos_token": {"text": "x"}}', "bos_token is an object without"),
    (b'{"chat_template": 5}', "chat_template must be"),
])
def test_a_malformed_config_is_a_format_error_naming_it(tmp_path, config, message):
    directory = _copy(tmp_path / "m", "tokenizer.json.gz")
    (directory / "tokenizer_config.json").write_bytes(config)
    with pytest.raises(VocabFormatError, match=message) as info:
        load_vocab(directory)
    assert "tokenizer_config.json" in str(info.value)


def test_a_prefixed_file_takes_only_its_own_config(tmp_path):
    # tests/data/hf holds Qwen's tokenizer_config.json beside GPT-2's gpt2-encoder.json: GPT-2
    # must neither take it nor pair with Qwen's merges.txt.
    vocab = load_vocab(HF / "gpt2-encoder.json.gz")
    assert vocab.content_hash == load_vocab("gpt2").content_hash and vocab.name == "gpt2-encoder"
    assert vocab.normalizer == NoNormalizer() and vocab.chat_template is None


def test_gpt2_files_in_a_directory(tmp_path):
    directory = _copy(tmp_path / "gpt2", "gpt2-encoder.json.gz", "gpt2-vocab.bpe.gz",
                      rename={"gpt2-encoder.json.gz": "encoder.json.gz", "gpt2-vocab.bpe.gz": "vocab.bpe.gz"})
    vocab = load_vocab(directory)
    assert vocab.content_hash == load_vocab("gpt2").content_hash and vocab.name == "gpt2"


def test_a_directory_with_one_file_of_each_format(tmp_path):
    from importlib import resources

    cl100k = resources.files("wordsplit.vocabs").joinpath("data", "cl100k_base.tiktoken.gz").read_bytes()
    layouts = {
        "tiktoken": {"cl100k_base.tiktoken": gzip.decompress(cl100k)},
        "tiktoken-gz": {"cl100k_base.tiktoken.gz": cl100k},
        "gguf": {"ggml-vocab-gpt-2.gguf.gz": (DATA / "gguf" / "ggml-vocab-gpt-2.gguf.gz").read_bytes()},
        "hf": {name: (HF / name).read_bytes() for name in
               ("tokenizer.json.gz", "vocab.json.gz", "merges.txt.gz", "tokenizer_config.json")},
    }
    hello = {"tiktoken": 15339, "tiktoken-gz": 15339, "gguf": 31373, "hf": 14990}  # cl100k, GPT-2, Qwen3
    for layout, files in layouts.items():
        directory = tmp_path / layout
        directory.mkdir()
        for name, data in files.items():
            (directory / name).write_bytes(data)
        (directory / "README.md").write_text("not a vocabulary")
        (directory / "config.json").write_text("{}")
        assert load_vocab(directory).ranks[b"hello"] == hello[layout], layout
    assert load_vocab(tmp_path / "hf").name == "hf" and load_vocab(tmp_path / "hf").eos_token_id == 151645


def test_a_directory_with_several_files_or_none(tmp_path):
    directory = _copy(tmp_path / "two", "tokenizer.json.gz")
    (directory / "a.tiktoken").write_bytes(b"")
    with pytest.raises(wordsplit.errors.UnknownVocabError, match=r"several vocabulary files: a\.tiktoken \(tiktoken\), "
                                                          r"tokenizer\.json\.gz \(tokenizer\.json\); pass the path"):
        load_vocab(directory)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    (empty / "vocab.json").write_text("{}")  # without merges.txt: not a candidate
    with pytest.raises(wordsplit.errors.UnknownVocabError, match="directory without a vocabulary file") as info:
        load_vocab(empty)
    assert isinstance(info.value, KeyError)
