"""Mistral Tekken files: loaded by content, and exact against mistral_common's Tekkenizer.

The file is tests/data/tekken/tekken_240911.json.gz (copied from mistral_common 1.13.1, see
SOURCES.md there); the oracle is ``Tekkenizer.from_file`` on the same bytes, written out
uncompressed, with ``encode(text, bos=False, eos=False)``. Variants of the file (a v13 file
that lists its special tokens, with its keys in another order; a smaller cut) are written here
and checked against the oracle the same way.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import shutil

import pytest

from conftest import BACKENDS, DATA
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.errors import DisallowedSpecialError, UnknownVocabError
from wordsplit.formats import loader_for
from wordsplit.formats.tekken import DEFAULT_SPECIAL_TOKENS, looks_like_tekken, read_tekken, top_level_keys
from wordsplit.spec import NoNormalizer

TEKKEN = DATA / "tekken" / "tekken_240911.json.gz"
CORPORA = sorted((DATA / "corpus").glob("*.txt.gz"))


def _mixed(seed: int, length: int) -> str:
    """Random text drawn from scripts, digits, marks, emoji, whitespace and controls."""
    pools = ["abcXYZ", "0123456789", " \t\n\r\u3000\u00a0", "中文日本語한국어", "مرحباשלום", "\u0301\u0308\u064b\u093f",
             "😀👍🏽🇫🇷\u200d", "\x00\x01\x1b\x7f\u200b\ufeff", "'’\".,;:!?/\\()[]{}<>-_=+*&^%$#@~`|",
             "ÉéßǅΣσςДж"]
    rng = random.Random(seed)
    return "".join(rng.choice(rng.choice(pools)) for _ in range(length))


TEXTS = {
    "empty": "",
    "ascii": "Hello, World! How's it going?",
    "contractions": "I'm sure they'd've known; don't DON'T can't it's we'll you're O'Neil",
    "whitespace runs": "   leading and trailing   \t\t tabs  \n\n\n new lines \r\n\r\n  x" + " " * 40 + "y",
    "only newlines": "\n" * 17,
    "digits": "1234567890 3.14159 1,000,000 0x1F ٣٤٥ ①② ¹²³ 10⁶",
    "cjk": "中文字符测试，日本語のテキスト、한국어 텍스트。全角ＡＢＣ",
    "rtl": "مرحبا بالعالم! שלום עולם. العربية 123",
    "combining marks": "e\u0301 a\u0308 \u0915\u094d\u0937 Z\u0351\u0327a\u0300lgo n\u0303 \u0301alone",
    "emoji": "👍🏽 👨‍👩‍👧‍👦 🇫🇷 ✨emoji✨ 🙂🙂",
    "control characters": "\x00\x01\x1b[31mred\x1b[0m\x7f\u200b\ufeff\u180e\x1c\x1f\x85end",
    "case": "CamelCaseWord HTTPServer iPhone ÉCOLE Straße ǅungla ΣΊΣΥΦΟΣ",
    "paths": "path/to/file.py // comment /* block */ https://example.com/a/b?c=d&e=f",
    "code": "def f(x):\n    return x ** 2  # square\n\nclass A:\n\tpass\n",
    "special token text": "<s>[INST] plain text [/INST]</s><unk><SPECIAL_999>",
    "long letters": "a" * 5000,
    "long words": "lorem ipsum dolor " * 600,
    "long emoji": "🙂" * 1500,
    "long spaces": " " * 5000 + "end",
    "mixed 1": _mixed(1, 3000),
    "mixed 2": _mixed(2, 3000),
}


@pytest.fixture(scope="module")
def tekken_json() -> dict:
    return json.loads(gzip.decompress(TEKKEN.read_bytes()))


@pytest.fixture(scope="module")
def tekken_file(tmp_path_factory):
    """The test file uncompressed, where the oracle can read it."""
    path = tmp_path_factory.mktemp("tekken") / "tekken_240911.json"
    path.write_bytes(gzip.decompress(TEKKEN.read_bytes()))
    return path


def oracle(path):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return Tekkenizer.from_file(path)


@pytest.fixture(scope="module")
def tekkenizer(tekken_file):
    return oracle(tekken_file)


@pytest.fixture(scope="module")
def vocab():
    return load_vocab(TEKKEN)


def corpus_texts() -> list[str]:
    return [gzip.decompress(path.read_bytes()).decode("utf-8")[:20000] for path in CORPORA]


# ---------------------------------------------------------------------------------------------
# The vocabulary: ids, cut, specials, bos/eos, as the oracle has them.


def test_the_test_file_is_the_recorded_one():
    import hashlib

    assert hashlib.sha256(gzip.decompress(TEKKEN.read_bytes())).hexdigest() == (
        "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316")


def test_vocabulary_matches_the_oracle(vocab, tekkenizer, tekken_json):
    config = tekken_json["config"]
    n_special = config["default_num_special_tokens"]
    assert (vocab.n_vocab, vocab.n_bpe, len(vocab.special_tokens)) == (tekkenizer.n_words, 130_072, n_special)
    assert vocab.n_vocab == config["default_vocab_size"] and len(tekken_json["vocab"]) > vocab.n_bpe
    assert vocab.pattern == config["pattern"] and vocab.normalizer == NoNormalizer()
    assert (vocab.bos_token_id, vocab.eos_token_id) == (tekkenizer.bos_id, tekkenizer.eos_id) == (1, 2)
    assert vocab.name == "tekken_240911"
    token_bytes = vocab.token_bytes
    for i in range(n_special):
        assert token_bytes[i].decode() == tekkenizer.id_to_piece(i)
    assert list(vocab.special_tokens)[:20] == list(DEFAULT_SPECIAL_TOKENS)
    assert vocab.special_tokens["<SPECIAL_999>"] == 999
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    keep = SpecialTokenPolicy.KEEP
    assert all(token_bytes[i] == tekkenizer.id_to_byte_piece(i, keep) for i in range(vocab.n_vocab))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", TEXTS)
def test_matches_tekkenizer(vocab, tekkenizer, backend, name):
    tok = TokenizerOptions(backend=backend).build(vocab)
    text = TEXTS[name]
    expected = tekkenizer.encode(text, bos=False, eos=False)
    assert tok.encode_ordinary(text) == expected
    assert tok.encode(text, disallowed_special=()) == expected
    assert tok.decode(expected) == tekkenizer.decode(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_corpora_match_tekkenizer(vocab, tekkenizer, backend):
    tok = TokenizerOptions(backend=backend).build(vocab)
    texts = corpus_texts()
    assert tok.encode_batch(texts, disallowed_special=()) == [tekkenizer.encode(t, bos=False, eos=False) for t in texts]


def test_special_tokens_follow_the_policy(vocab, tekkenizer):
    tok = TokenizerOptions().build(vocab)
    text = "<s>[INST] hi [/INST]"
    with pytest.raises(DisallowedSpecialError):
        tok.encode(text)
    assert tok.encode(text, allowed_special="all") == [1, 3, *tekkenizer.encode(" hi ", bos=False, eos=False), 4]
    assert tok.decode([1, 3, 4, 2]) == "<s>[INST][/INST]</s>"


# ---------------------------------------------------------------------------------------------
# Variants, written here and checked against the oracle too.


def _write(path, spec: dict, order: tuple[str, ...] = ()) -> None:
    ordered = {key: spec[key] for key in order if key in spec}
    ordered.update({key: value for key, value in spec.items() if key not in ordered})
    path.write_text(json.dumps(ordered), encoding="utf-8")


SAMPLE = [TEXTS[name] for name in ("contractions", "whitespace runs", "cjk", "emoji", "mixed 1", "special token text")]


def test_v13_file_that_lists_its_special_tokens(tmp_path, tekken_json):
    specials = [*DEFAULT_SPECIAL_TOKENS, "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"]
    spec = dict(tekken_json, config=dict(tekken_json["config"], version="v13"),
                special_tokens=[{"rank": i, "token_str": text, "is_control": True} for i, text in enumerate(specials)])
    path = tmp_path / "Magistral" / "tekken.json"
    path.parent.mkdir()
    # Keys in another order than the shipped file: the special tokens come first.
    _write(path, spec, order=("special_tokens", "vocab", "config"))
    vocab, expected = load_vocab(path), oracle(path)
    assert vocab.name == "Magistral"
    assert vocab.special_tokens["[THINK]"] == 22 and vocab.special_tokens["<SPECIAL_24>"] == 24
    assert [vocab.token_bytes[i].decode() for i in range(1000)] == [expected.id_to_piece(i) for i in range(1000)]
    tok = TokenizerOptions().build(vocab)
    for text in SAMPLE:
        assert tok.encode_ordinary(text) == expected.encode(text, bos=False, eos=False)


def test_the_cut_follows_the_config(tmp_path, tekken_json):
    config = dict(tekken_json["config"], default_vocab_size=20_000, default_num_special_tokens=50)
    spec = dict(tekken_json, config=config)
    path = tmp_path / "small.json"
    _write(path, spec)
    vocab, expected = load_vocab(path), oracle(path)
    assert (vocab.n_vocab, vocab.n_bpe, len(vocab.special_tokens)) == (expected.n_words, 19_950, 50)
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in SAMPLE:
            assert tok.encode_ordinary(text) == expected.encode(text, bos=False, eos=False)


# ---------------------------------------------------------------------------------------------
# Recognized by content, whatever the name; directories; the cache.


def test_recognized_by_content_not_by_name(tmp_path, vocab):
    for name in ("mistral.json.gz", "tokenizer.json.gz"):
        path = tmp_path / name
        shutil.copyfile(TEKKEN, path)
        assert loader_for(path).name == "tekken"
        assert load_vocab(path).content_hash == vocab.content_hash
    assert loader_for(DATA / "hf" / "tokenizer.json.gz").name == "tokenizer.json"


def test_a_directory_with_a_tekken_file(tmp_path, vocab):
    directory = tmp_path / "Mistral-Nemo-Instruct-2407"
    directory.mkdir()
    shutil.copyfile(TEKKEN, directory / "tekken.json.gz")
    (directory / "config.json").write_text('{"model_type": "mistral", "vocab_size": 131072}')
    loaded = load_vocab(directory)
    assert loaded.content_hash == vocab.content_hash and loaded.name == "Mistral-Nemo-Instruct-2407"
    shutil.copyfile(DATA / "hf" / "tokenizer.json.gz", directory / "tokenizer.json.gz")
    with pytest.raises(UnknownVocabError, match=r"several vocabulary files: tekken\.json\.gz \(tekken\), "
                                                r"tokenizer\.json\.gz \(tokenizer\.json\)"):
        load_vocab(directory)


def test_top_level_keys_follow_strings_and_nesting():
    head = b'{"a": "x\\"}, \\"config\\": {", "b": [1, {"vocab": []}], "config": {"pattern": "["}, "vocab": [{"r'
    assert top_level_keys(head) == {b"a": b"", b"b": b"[", b"config": b"{", b"vocab": b"["}
    assert looks_like_tekken(head)
    assert not looks_like_tekken(b'{"model": {}, "config": {}}')
    assert not looks_like_tekken(b'{"config": "a string", "vocab": 5}')
    assert not looks_like_tekken(b"not json")


# ---------------------------------------------------------------------------------------------
# Malformed files are typed errors naming the problem.


def _tiny(**changes) -> dict:
    tokens = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None} for b in range(256)]
    tokens.append({"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"})
    spec = {"config": {"pattern": r"\S+|\s+", "default_vocab_size": 287, "default_num_special_tokens": 30,
                       "version": "v3", "num_vocab_tokens": 257}, "vocab": tokens}
    for key, value in changes.items():
        if key.startswith("config_"):
            spec["config"][key[len("config_"):]] = value
        else:
            spec[key] = value
    return spec


def test_tiny_file_loads():
    vocab = read_tekken(json.dumps(_tiny()).encode())
    assert vocab.ranks[b"ab"] == 286 and vocab.special_tokens["<SPECIAL_29>"] == 29 and vocab.n_vocab == 287


def _bad_vocab(mutate):
    spec = _tiny()
    mutate(spec["vocab"])
    return spec


MALFORMED = {
    "not json": (b"{", "not valid JSON"),
    "no config": (json.dumps({"vocab": []}).encode(), "no 'config' object"),
    "no pattern": (_tiny(config_pattern=""), "config.pattern"),
    "bad version": (_tiny(config_version="3"), "config.version"),
    "negative specials": (_tiny(config_default_num_special_tokens=-1), "default_num_special_tokens must be"),
    "too few tokens": (_tiny(config_default_vocab_size=300), "lists 257"),
    "fewer than the default specials": (_tiny(config_default_num_special_tokens=10, config_default_vocab_size=267),
                                        "20 special tokens, more than"),
    "no byte tokens": (_tiny(config_default_vocab_size=200), "at least the 256 single bytes"),
    "huge special count": (_tiny(config_default_vocab_size=10**9, config_default_num_special_tokens=10**9 - 257),
                           "far beyond"),
    "rank out of order": (_bad_vocab(lambda v: v[3].update(rank=4)), "does not have 'rank': 3"),
    "bad base64": (_bad_vocab(lambda v: v[256].update(token_bytes="!!")), "no base64 'token_bytes'"),
    "bytes out of order": (_bad_vocab(lambda v: v[5].update(token_bytes=base64.b64encode(b"x").decode())),
                           "the first 256 are the single bytes"),
    "duplicate token": (_bad_vocab(lambda v: v[256].update(token_bytes=base64.b64encode(b"a").decode())),
                        "listed twice"),
    "v13 without specials": (_tiny(config_version="v13"), "must list its special_tokens"),
    "special rank": (_tiny(special_tokens=[{"rank": 1, "token_str": "<s>", "is_control": True}]), "rank order"),
    "duplicate special": (_tiny(special_tokens=[{"rank": 0, "token_str": "<s>", "is_control": True},
                                                {"rank": 1, "token_str": "<s>", "is_control": True}]), "listed twice"),
    "filler clash": (_tiny(special_tokens=[{"rank": 0, "token_str": "<SPECIAL_5>", "is_control": True}]),
                     "listed twice"),
    "too many specials": (_tiny(special_tokens=[{"rank": i, "token_str": f"<t{i}>", "is_control": True}
                                                for i in range(31)]), "more than config.default_num_special_tokens"),
    "specials not a list": (_tiny(special_tokens={"<s>": 1}), "special_tokens must be an array"),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_files_are_format_errors(name):
    data, message = MALFORMED[name]
    with pytest.raises(VocabFormatError, match=message):
        read_tekken(data if isinstance(data, bytes) else json.dumps(data).encode(), source="bad.json")


def test_a_pattern_nested_too_deeply_is_unsupported():
    with pytest.raises(UnsupportedTokenizerError, match="nests groups"):
        read_tekken(json.dumps(_tiny(config_pattern="(" * 2000 + "a" + ")" * 2000)).encode())
