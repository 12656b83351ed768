"""Rank files (.tiktoken, Meta's tokenizer.model) loaded by path, and hostile ids in every loader.

* A rank file carries no pattern or special tokens: a file wordsplit recognizes by content gets
  its official ones, any other needs ``pattern=``.
* Parsing follows tiktoken's ``load_tiktoken_bpe`` line for line.
* One huge id or rank is a VocabFormatError, found at once, and deep nesting in a
  tokenizer.json is a typed error naming the file.
"""

from __future__ import annotations

import base64
import gzip
import json
import time
from pathlib import Path

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe

from wordsplit import TokenizerOptions, Vocab, get_tokenizer, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.bytelevel import token_text
from wordsplit.patterns import CL100K_PATTERN, GPT2_ORIGINAL_PATTERN, GPT2_PATTERN
from wordsplit.spec import Nfc
from wordsplit.vocabs import BUNDLED_DATA
from wordsplit.vocabs.pretrained import KNOWN_RANK_FILES, PRETRAINED

BACKENDS = ("python", "native")
WHISPER = Path(__file__).parent / "data" / "tiktoken" / "whisper-multilingual.tiktoken.gz"


def _bundled_bytes(name: str) -> bytes:
    return gzip.decompress(BUNDLED_DATA.joinpath(PRETRAINED[name].file).read_bytes())


@pytest.fixture(scope="module")
def cl100k_bytes() -> bytes:
    return _bundled_bytes("cl100k_base")


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- recognized files ---------------------------------------------------------------------------


def test_cl100k_file_by_path_gets_cl100k_pattern(tmp_path, cl100k_bytes):
    """cl100k's file by path gets cl100k's pattern (GPT-2's would give [4513, 1774, 3080])."""
    path = _write(tmp_path, "cl100k_base.tiktoken", cl100k_bytes)
    for backend in BACKENDS:
        tok = get_tokenizer(str(path), backend=backend)
        assert tok.encode("1234567") == [4513, 10961, 22]
        assert tok.encode("<|endoftext|>", allowed_special="all") == [100257]


@pytest.mark.parametrize("name, as_name", [
    ("r50k_base", "r50k_base"), ("p50k_base", "p50k_base"), ("p50k_edit", "p50k_base"),
    ("cl100k_base", "cl100k_base"), ("o200k_base", "o200k_base"), ("o200k_harmony", "o200k_base"),
    ("qwen3", "qwen3"),
])
def test_bundled_rank_files_are_recognized(tmp_path, name, as_name):
    """Each official file, by path and gzipped, is the registered vocabulary (p50k_edit's and
    o200k_harmony's files are p50k_base's and o200k_base's: the file cannot tell them apart)."""
    data = _bundled_bytes(name)
    paths = [_write(tmp_path, "ranks.tiktoken", data)]
    if name == "cl100k_base":  # gzipped: the hash is of the uncompressed content
        paths.append(_write(tmp_path, "ranks.tiktoken.gz", gzip.compress(data, compresslevel=1)))
    for path in paths:
        vocab = load_vocab(path, cache_dir=tmp_path / "cache")
        assert vocab.content_hash == load_vocab(as_name).content_hash, path
        assert vocab.n_vocab == load_vocab(as_name).n_vocab
        assert vocab.eos_token_id == load_vocab(as_name).eos_token_id


def test_qwen_tiktoken_gets_qwen3_normalizer_and_added_tokens(tmp_path):
    vocab = load_vocab(_write(tmp_path, "qwen.tiktoken", _bundled_bytes("qwen3")), cache_dir=tmp_path)
    assert vocab.normalizer == Nfc() and vocab.added_tokens["<think>"] == 151667
    assert vocab.name == "qwen"
    text = "<think>e\u0301t\u00e9 12</think>"  # NFC-sensitive, with added tokens
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        assert tok.encode(text) == get_tokenizer("qwen3", backend=backend).encode(text)


def test_explicit_facts_replace_the_recognized_ones(tmp_path, cl100k_bytes):
    path = _write(tmp_path, "cl100k_base.tiktoken", cl100k_bytes)
    vocab = load_vocab(path, pattern=GPT2_PATTERN, special_tokens={"<|endoftext|>": 100257}, cache_dir=tmp_path)
    assert vocab.pattern == GPT2_PATTERN and dict(vocab.special_tokens) == {"<|endoftext|>": 100257}
    assert TokenizerOptions(backend="python").build(vocab).encode("1234567") == [4513, 1774, 3080]
    # the cache keys on the facts: the same file without them is cl100k again
    assert load_vocab(path, cache_dir=tmp_path).pattern == CL100K_PATTERN


def _whisper_encoding() -> tiktoken.Encoding:
    """whisper's get_encoding("multilingual"), built from facts published with whisper: the
    50,257 ranks, then <|endoftext|>, <|startoftranscript|>, 99 languages, the task tokens and
    1,501 timestamps, with GPT-2's original pattern."""
    data = gzip.decompress(WHISPER.read_bytes())
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines() if line)}
    facts = KNOWN_RANK_FILES["b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"]
    return tiktoken.Encoding("multilingual", pat_str=GPT2_ORIGINAL_PATTERN, mergeable_ranks=ranks,
                             special_tokens=dict(facts.special_tokens), explicit_n_vocab=51865)


def test_whisper_multilingual_is_recognized(tmp_path):
    vocab = load_vocab(WHISPER, cache_dir=tmp_path)
    special = vocab.special_tokens
    # Ids as whisper's models use them (sot, language, task, no-timestamps, first timestamp).
    assert (special["<|startoftranscript|>"], special["<|en|>"], special["<|translate|>"],
            special["<|transcribe|>"], special["<|notimestamps|>"], special["<|0.00|>"],
            special["<|30.00|>"]) == (50258, 50259, 50358, 50359, 50363, 50364, 51864)
    assert vocab.n_vocab == 51865 and vocab.pattern == GPT2_ORIGINAL_PATTERN
    oracle = _whisper_encoding()
    texts = ["Hello world, it's 2024!", "  Привет мир\n\n日本語 😀", "<|startoftranscript|><|en|> hi"]
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in texts:
            assert tok.encode(text, allowed_special="all") == oracle.encode(text, allowed_special="all")


def test_llama_special_tokens_as_meta_defines_them():
    """Llama 3/4 tokenizer.model (not in the repository): the facts recorded for their hashes."""
    llama3 = next(f for f in KNOWN_RANK_FILES.values() if f.name == "llama3")
    assert len(llama3.special_tokens) == 256
    assert (llama3.special_tokens["<|begin_of_text|>"], llama3.special_tokens["<|eot_id|>"],
            llama3.special_tokens["<|reserved_special_token_245|>"]) == (128000, 128009, 128255)
    llama4 = next(f for f in KNOWN_RANK_FILES.values() if f.name == "llama4")
    assert len(llama4.special_tokens) == 2048 and max(llama4.special_tokens.values()) == 202047
    assert (llama4.special_tokens["<|begin_of_text|>"], llama4.special_tokens["<|eot|>"],
            llama4.special_tokens["<|finetune_right_pad|>"]) == (200000, 200008, 200018)


# -- unknown files --------------------------------------------------------------------------------


def _byte_ranks_file() -> bytes:
    return b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256))


def test_unknown_rank_file_needs_a_pattern(tmp_path):
    path = _write(tmp_path, "mine.tiktoken", _byte_ranks_file() + base64.b64encode(b"ab") + b" 256\n")
    with pytest.raises(VocabFormatError, match=r"mine\.tiktoken.*pass the pattern.*pattern=r'\.\.\.'.*special_tokens="):
        load_vocab(path, cache_dir=tmp_path)
    vocab = load_vocab(path, pattern=CL100K_PATTERN, special_tokens={"<|end|>": 257}, n_vocab=300, cache_dir=tmp_path)
    assert (vocab.pattern, vocab.n_vocab, vocab.special_tokens["<|end|>"]) == (CL100K_PATTERN, 300, 257)
    for backend in BACKENDS:
        assert TokenizerOptions(backend=backend).build(vocab).encode("ab<|end|>", allowed_special="all") == [256, 257]


def test_facts_are_only_for_rank_files(tmp_path):
    with pytest.raises(TypeError, match="pattern= applies to rank files"):
        load_vocab("cl100k_base", pattern=GPT2_PATTERN)
    hf = Path(__file__).parent / "data" / "hf" / "tokenizer.json.gz"
    with pytest.raises(TypeError, match="special_tokens= applies to rank files"):
        load_vocab(hf, special_tokens={"<s>": 1}, cache_dir=tmp_path)
    with pytest.raises(TypeError, match="pattern must be"):
        load_vocab(hf, pattern=b"x", cache_dir=tmp_path)


def test_sentencepiece_model_is_named(tmp_path):
    # The first bytes of a SentencePiece ModelProto: field 1 (pieces), length, a piece message.
    # It is read as one (a Unigram model, whose pieces it then finds listed twice), not as a rank file.
    path = _write(tmp_path, "tokenizer.model", b"\x0a\x0c\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02" * 3)
    with pytest.raises(VocabFormatError, match="piece '<unk>' is listed twice"):
        load_vocab(path, cache_dir=tmp_path)


# -- parsing exactly as tiktoken ------------------------------------------------------------------


def test_lines_are_parsed_as_tiktoken_does(tmp_path):
    """Blank lines, \\r\\n and \\r line ends, tabs, '=' (the empty token), characters outside the
    base64 alphabet (skipped by a non-strict decode), '+' and '_' in ranks (int())."""
    lines = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(250)]
    assert base64.b64encode(bytes([251])) == b"+w=="
    data = (b"\n".join(lines[:100]) + b"\r\n\r\n" + b"\r".join(lines[100:200]) + b"\n\n"
            + b"\n".join(lines[200:]) + b"\n\t" + base64.b64encode(bytes([250])) + b"\t+250\n"
            + b"+!w== 251\n" + base64.b64encode(bytes([252])) + b" 2_52\n"
            + b"\n".join(base64.b64encode(bytes([b])) + b" %d" % b for b in range(253, 256)) + b"\n= 256\n")
    path = _write(tmp_path, "odd.tiktoken", data)
    expected = load_tiktoken_bpe(str(path))
    vocab = load_vocab(path, pattern=GPT2_PATTERN, cache_dir=tmp_path)
    assert dict(vocab.ranks) == expected
    assert vocab.ranks[b""] == 256 and vocab.ranks[bytes([251])] == 251
    for backend in BACKENDS:
        assert TokenizerOptions(backend=backend).build(vocab).decode_bytes([256, 97]) == b"a"


# -- hostile ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rank", [4_000_000_000, 2**32, 10**30])
def test_huge_rank_in_a_tiktoken_file(tmp_path, cl100k_bytes, rank):
    lines = cl100k_bytes.splitlines()
    token = lines[5000].split()[0]
    lines[5000] = token + b" %d" % rank
    path = _write(tmp_path, "cl100k_base.tiktoken", b"\n".join(lines) + b"\n")
    start = time.perf_counter()
    with pytest.raises(VocabFormatError, match=rf"cl100k_base\.tiktoken:5001: rank {rank} .*far beyond"):
        load_vocab(path, cache_dir=tmp_path)
    assert time.perf_counter() - start < 5


def _tiny_tokenizer_json(**changes) -> dict:
    vocab = {token_text(bytes([b])): b for b in range(256)}
    spec = {
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }
    spec.update(changes)
    return spec


def test_huge_added_token_id_in_tokenizer_json(tmp_path):
    # HF gives an added token the id of its model.vocab entry (the id added_tokens lists is not read).
    added = [{"id": 1_000_000_000, "content": "<big>", "special": True}]
    spec = _tiny_tokenizer_json(added_tokens=added)
    spec["model"]["vocab"]["<big>"] = 1_000_000_000
    path = _write(tmp_path, "tokenizer.json", json.dumps(spec).encode())
    start = time.perf_counter()
    with pytest.raises(VocabFormatError, match=r"tokenizer\.json: token '<big>' has the id 1000000000, far beyond"):
        load_vocab(path, cache_dir=tmp_path)
    assert time.perf_counter() - start < 5


def test_huge_id_in_vocab_json_and_encoder_json(tmp_path):
    table = {token_text(bytes([b])): b for b in range(256)}
    table["Ġhello"] = 4_000_000_000
    for vocab_name, merges_name in (("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")):
        folder = tmp_path / vocab_name
        folder.mkdir()
        _write(folder, vocab_name, json.dumps(table).encode())
        _write(folder, merges_name, b"#version: 0.2\n")
        with pytest.raises(VocabFormatError, match="4000000000, far beyond"):
            load_vocab(folder / vocab_name, cache_dir=tmp_path)


def test_n_vocab_far_beyond_the_tokens():
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(VocabFormatError, match="n_vocab is 1000000000, far beyond"):
        Vocab(name="v", ranks=ranks, pattern="x", n_vocab=10**9)
    Vocab(name="v", ranks=ranks, pattern="x", special_tokens={"<|endoftext|>": 50256})  # slack for real ids


# -- deep nesting ---------------------------------------------------------------------------------


def test_deeply_nested_json_is_a_format_error(tmp_path):
    path = _write(tmp_path, "tokenizer.json", b"[" * 100_000)
    with pytest.raises(VocabFormatError, match=r"tokenizer\.json: JSON nested too deeply"):
        load_vocab(path, cache_dir=tmp_path)


def test_deeply_nested_pattern_is_a_typed_error(tmp_path):
    deep = "(" * 5000 + "a" + ")" * 5000
    spec = _tiny_tokenizer_json(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": deep}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]})
    path = _write(tmp_path, "tokenizer.json", json.dumps(spec).encode())
    with pytest.raises(UnsupportedTokenizerError, match=r"tokenizer\.json: the split pattern nests groups"):
        load_vocab(path, cache_dir=tmp_path)
    ranks = _write(tmp_path, "mine.tiktoken", _byte_ranks_file())
    with pytest.raises(UnsupportedTokenizerError, match=r"mine\.tiktoken: the pattern nests groups"):
        load_vocab(ranks, pattern=deep, cache_dir=tmp_path)
    vocab = load_vocab(ranks, pattern=GPT2_PATTERN, cache_dir=tmp_path)
    with pytest.raises(UnsupportedTokenizerError, match="nested more than 100 deep"):
        TokenizerOptions(backend="python", spanner="regex").build(Vocab(
            name="deep", ranks=vocab.ranks, pattern=deep))


def test_facts_for_a_rank_file_at_a_url(hub_env, vocab_server):
    """An unknown rank file at a URL takes pattern= too (the error says to pass it)."""
    vocab_server.openai["/files/mine.tiktoken"] = _byte_ranks_file()
    url = vocab_server.url + "/files/mine.tiktoken"
    with pytest.raises(VocabFormatError, match="pass the pattern"):
        load_vocab(url)
    vocab = load_vocab(url, pattern=CL100K_PATTERN, special_tokens={"<|end|>": 256})
    assert vocab.pattern == CL100K_PATTERN and vocab.special_tokens["<|end|>"] == 256
    assert load_vocab(url, pattern=GPT2_PATTERN).pattern == GPT2_PATTERN  # facts key the cache
