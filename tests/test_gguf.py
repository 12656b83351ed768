"""The GGUF reader and vocab loader (wordsplit.formats.gguf) on llama.cpp's own vocab files,
our Qwen3 GGUF, and small synthetic files built here, valid and corrupt."""

from __future__ import annotations

import collections
import functools
import gzip
import struct
import time
import tracemalloc
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import damaged
from llamacpp_cases import SEPARATOR, load_cases, unpacked
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.bytelevel import BYTE_TO_CHAR
from wordsplit.spec import NoNormalizer, PipelineSpec, RegexSplit, Split, SplitProgram
from wordsplit.formats.gguf import (
    LLAMA_CPP_PRE_PATTERNS,
    LLAMA_CPP_PRE_REGEXES,
    load_gguf,
    read_gguf,
    read_gguf_head,
    read_gguf_metadata,
)

GGUF_DIR = Path(__file__).parent / "data" / "gguf"


@functools.lru_cache(maxsize=None)
def gguf_bytes(name: str) -> bytes:
    return gzip.decompress((GGUF_DIR / f"{name}.gz").read_bytes())


@functools.lru_cache(maxsize=None)
def metadata(name: str) -> dict:
    return read_gguf_metadata(gguf_bytes(name), source=name)


@functools.lru_cache(maxsize=None)
def vocab(name: str):
    return read_gguf(gguf_bytes(name), source=name)


# ---------------------------------------------------------------------------------------------
# Building GGUF files (the layout of ggml's docs/gguf.md, little-endian)

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)


def gstr(s: str | bytes) -> bytes:
    data = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(data)) + data


def kv(key: str | bytes, value_type: int, payload: bytes) -> bytes:
    return gstr(key) + struct.pack("<I", value_type) + payload


def array(element_type: int, count: int, payload: bytes = b"") -> bytes:
    return struct.pack("<IQ", element_type, count) + payload


def string_array(items) -> bytes:
    return array(STRING, len(items), b"".join(gstr(s) for s in items))


def gguf(*kvs: bytes, version: int = 3, n_kv: int | None = None) -> bytes:
    header = struct.pack("<IQQ", version, 0, len(kvs) if n_kv is None else n_kv)
    return b"GGUF" + header + b"".join(kvs)


# A tiny byte-level BPE vocabulary: the 256 bytes (id = byte), "ab" 256 and "abc" 257 by two
# merges, a CONTROL, a USER_DEFINED and an UNUSED token.
TINY_TOKENS = [*(BYTE_TO_CHAR[b] for b in range(256)), "ab", "abc", "<|end|>", "<think>", "[PAD260]"]
TINY_TYPES = [1] * 258 + [3, 4, 5]
TINY_MERGES = ["a b", "ab c"]


def tokenizer_gguf(
    *, name="tiny", model="gpt2", pre="qwen2", tokens=TINY_TOKENS, types=TINY_TYPES, merges=TINY_MERGES, eos=258,
    chat_template=None,
) -> bytes:
    """A GGUF of the tiny vocabulary; ``None`` leaves a key out, a ``str`` eos is stored as a string,
    a ``bytes`` chat_template as an array of u8."""
    kvs = []
    if name is not None:
        kvs.append(kv("general.name", STRING, gstr(name)))
    kvs.append(kv("tokenizer.ggml.model", STRING, gstr(model)))
    if pre is not None:
        kvs.append(kv("tokenizer.ggml.pre", STRING, gstr(pre)))
    kvs += [
        kv("tokenizer.ggml.tokens", ARRAY, string_array(tokens)),
        kv("tokenizer.ggml.token_type", ARRAY, array(I32, len(types), struct.pack(f"<{len(types)}i", *types))),
        kv("tokenizer.ggml.merges", ARRAY, string_array(merges)),
        kv("tokenizer.ggml.eos_token_id", STRING, gstr(eos))
        if isinstance(eos, str)
        else kv("tokenizer.ggml.eos_token_id", U32, struct.pack("<I", eos)),
    ]
    if isinstance(chat_template, str):
        kvs.append(kv("tokenizer.chat_template", STRING, gstr(chat_template)))
    elif chat_template is not None:
        kvs.append(kv("tokenizer.chat_template", ARRAY, array(U8, len(chat_template), chat_template)))
    return gguf(*kvs)


# Every value type once, arrays of each kind (nested too), then a tokenizer: the file that the
# truncation test cuts at every offset.
ALL_TYPES = gguf(
    kv("t.u8", U8, b"\xff"),
    kv("t.i8", I8, b"\xff"),
    kv("t.u16", U16, struct.pack("<H", 65535)),
    kv("t.i16", I16, struct.pack("<h", -2)),
    kv("t.u32", U32, struct.pack("<I", 2**32 - 1)),
    kv("t.i32", I32, struct.pack("<i", -3)),
    kv("t.f32", F32, struct.pack("<f", 0.5)),
    kv("t.bool", BOOL, b"\x01"),
    kv("t.string", STRING, gstr("héllo")),
    kv("t.u64", U64, struct.pack("<Q", 2**64 - 1)),
    kv("t.i64", I64, struct.pack("<q", -(2**63))),
    kv("t.f64", F64, struct.pack("<d", -1.25)),
    kv("t.bools", ARRAY, array(BOOL, 3, b"\x00\x01\x00")),
    kv("t.i16s", ARRAY, array(I16, 2, struct.pack("<2h", -1, 7))),
    kv("t.strings", ARRAY, string_array(["", "x", "ÿ"])),
    kv("t.nested", ARRAY, array(ARRAY, 2, array(U8, 2, b"\x01\x02") + array(STRING, 1, gstr("y")))),
    kv("t.empty", ARRAY, array(F64, 0)),
    kv("tokenizer.ggml.tokens", ARRAY, string_array(TINY_TOKENS)),
)
ALL_TYPES_METADATA = {
    "t.u8": 255, "t.i8": -1, "t.u16": 65535, "t.i16": -2, "t.u32": 2**32 - 1, "t.i32": -3, "t.f32": 0.5,
    "t.bool": True, "t.string": "héllo", "t.u64": 2**64 - 1, "t.i64": -(2**63), "t.f64": -1.25,
    "t.bools": [False, True, False], "t.i16s": [-1, 7], "t.strings": ["", "x", "ÿ"],
    "t.nested": [b"\x01\x02", ["y"]], "t.empty": [], "tokenizer.ggml.tokens": TINY_TOKENS,
}


# ---------------------------------------------------------------------------------------------
# The metadata reader


def test_metadata_of_a_synthetic_file_with_every_value_type():
    assert read_gguf_metadata(ALL_TYPES) == ALL_TYPES_METADATA
    assert read_gguf_metadata(bytearray(ALL_TYPES)) == ALL_TYPES_METADATA
    # Version 2 has the same layout.
    assert read_gguf_metadata(b"GGUF\x02" + ALL_TYPES[5:]) == ALL_TYPES_METADATA


def test_metadata_of_llama_cpp_qwen2_vocab():
    meta = metadata("ggml-vocab-qwen2.gguf")
    assert meta["tokenizer.ggml.model"] == "gpt2"
    assert meta["tokenizer.ggml.pre"] == "qwen2"
    assert len(meta["tokenizer.ggml.tokens"]) == 151_936
    assert len(meta["tokenizer.ggml.token_type"]) == 151_936
    assert len(meta["tokenizer.ggml.merges"]) == 151_387
    assert meta["tokenizer.ggml.bos_token_id"] == meta["tokenizer.ggml.eos_token_id"] == 151_643
    assert collections.Counter(meta["tokenizer.ggml.token_type"]) == {1: 151_643, 4: 290, 3: 3}
    assert meta["tokenizer.ggml.tokens"][:3] == ["!", '"', "#"]
    assert meta["tokenizer.ggml.merges"][0] == "Ġ Ġ"


def test_metadata_of_llama_cpp_gpt2_vocab():
    meta = metadata("ggml-vocab-gpt-2.gguf")
    assert meta["tokenizer.ggml.model"] == "gpt2"
    assert meta["tokenizer.ggml.pre"] == "gpt-2"
    assert len(meta["tokenizer.ggml.tokens"]) == 50_257
    assert len(meta["tokenizer.ggml.merges"]) == 50_000
    assert meta["tokenizer.ggml.bos_token_id"] == meta["tokenizer.ggml.eos_token_id"] == 50_256
    assert meta["tokenizer.ggml.tokens"][50_256] == "<|endoftext|>"
    assert collections.Counter(meta["tokenizer.ggml.token_type"]) == {1: 50_256, 3: 1}
    assert meta["gpt2.context_length"] == 1024


def test_metadata_of_our_qwen3_vocab():
    meta = metadata("qwen3-vocab.gguf")
    assert meta["general.name"] == "Qwen3 tokenizer (vocab only)"
    assert meta["tokenizer.ggml.pre"] == "qwen2"
    assert len(meta["tokenizer.ggml.tokens"]) == 151_936
    assert len(meta["tokenizer.ggml.merges"]) == 151_387
    assert collections.Counter(meta["tokenizer.ggml.token_type"]) == {1: 151_643, 3: 20, 4: 6, 5: 267}
    assert meta["tokenizer.ggml.eos_token_id"] == 151_645
    assert meta["tokenizer.ggml.bos_token_id"] == 151_643
    assert meta["tokenizer.ggml.add_bos_token"] is False
    assert meta["qwen3.rope.freq_base"] == 1_000_000.0


def test_metadata_loads_well_under_a_second():
    data = gguf_bytes("qwen3-vocab.gguf")
    best = float("inf")
    for _ in range(3):  # CPU time, best of three: other work on the machine does not count
        start = time.process_time()
        read_gguf_metadata(data)
        best = min(best, time.process_time() - start)
    assert best < 0.5


# ---------------------------------------------------------------------------------------------
# Corrupt and hostile files


def test_every_truncation_raises():
    for end in range(len(ALL_TYPES)):
        with pytest.raises(VocabFormatError):
            read_gguf_metadata(ALL_TYPES[:end], source="cut.gguf")


def _strings_header(count: int) -> bytes:
    return gguf(kv("tokenizer.ggml.tokens", ARRAY, array(STRING, count)))


# Each is a small file that must raise VocabFormatError with the given words in the message.
CORRUPT = {
    "empty file": (b"", "not a GGUF file"),
    "wrong magic": (b"GGML" + ALL_TYPES[4:], "not a GGUF file"),
    "version 1": (b"GGUF\x01" + ALL_TYPES[5:], "version 1 is not supported"),
    "version 4": (b"GGUF\x04" + ALL_TYPES[5:], "version 4 is not supported"),
    "2**60 key-value pairs": (gguf(kv("a", U8, b"\x00"), n_kv=2**60), "declares 1152921504606846976 key-value"),
    "2**60 strings": (_strings_header(2**60) + b"\x00" * 64, "'tokenizer.ggml.tokens' declares 1152921504606846976"),
    "2**60 u32": (gguf(kv("a", ARRAY, array(U32, 2**60))), "'a' declares"),
    "2**60 nested arrays": (gguf(kv("a", ARRAY, array(ARRAY, 2**60))), "'a' declares"),
    "string of 2**62 bytes": (
        gguf(kv("a", STRING, struct.pack("<Q", 2**62) + b"xyz")), "'a' needs 4611686018427387904"
    ),
    "key of 2**62 bytes": (b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 2**62) + b"k" * 16, "key #0 needs"),
    "string in an array, 2**62 bytes": (
        gguf(kv("a", ARRAY, array(STRING, 2, gstr("ok") + struct.pack("<Q", 2**62)))),
        "'a'[1] declares 4611686018427387904 bytes",
    ),
    "unknown value type": (gguf(kv("a", 13, b"\x00" * 8)), "'a' has an unknown value type 13"),
    "unknown array type": (gguf(kv("a", ARRAY, array(99, 0))), "'a' is an array of the unknown value type 99"),
    "bad utf-8 key": (gguf(kv(b"a\xff", U8, b"\x00")), "key #0 is not valid UTF-8"),
    "bad utf-8 string": (gguf(kv("a", STRING, gstr(b"ok\xc3("))), "'a' is not valid UTF-8"),
    "bad utf-8 in a string array": (
        gguf(kv("tokenizer.ggml.tokens", ARRAY, string_array([b"ok", b"\xed\xa0\x80"]))),  # a surrogate
        "'tokenizer.ggml.tokens'[1] is not valid UTF-8",
    ),
    "duplicate key": (gguf(kv("a", U8, b"\x00"), kv("a", U8, b"\x01")), "duplicate key 'a'"),
    "empty key": (gguf(kv("", U8, b"\x00")), "key #0 is empty"),
    "bool 2": (gguf(kv("a", BOOL, b"\x02")), "'a' is a bool with the invalid value 2"),
    "bool 2 in an array": (gguf(kv("a", ARRAY, array(BOOL, 2, b"\x01\x02"))), "'a'[1] is a bool"),
    "arrays nested too deep": (gguf(kv("a", ARRAY, array(ARRAY, 1) * 9 + array(U8, 0))), "nests arrays deeper"),
}


@pytest.mark.parametrize("case", CORRUPT, ids=list(CORRUPT))
def test_corrupt_file_raises_a_clear_error(case):
    data, words = CORRUPT[case]
    with pytest.raises(VocabFormatError) as info:
        read_gguf_metadata(data, source="bad.gguf")
    message = str(info.value)
    assert message.startswith("bad.gguf: ") and words in message
    assert "at byte" in message


def test_corrupt_files_fail_fast():
    """Huge declared counts are refused before any allocation or loop: no hang, no MemoryError."""
    start = time.perf_counter()
    for data, _ in CORRUPT.values():
        with pytest.raises(VocabFormatError):
            read_gguf_metadata(data)
    assert time.perf_counter() - start < 0.5


TINY_GGUF = tokenizer_gguf()


@settings(max_examples=300, deadline=None)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(TINY_GGUF) - 1),
            st.sampled_from(["set", "insert", "delete"]),
            st.binary(min_size=1, max_size=8),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_files_raise_only_wordsplit_errors(edits):
    """Damaged files give a Vocab or a VocabFormatError / UnsupportedTokenizerError, fast."""
    data = damaged(TINY_GGUF, edits)
    start = time.perf_counter()
    try:
        read_gguf(data)
    except (VocabFormatError, UnsupportedTokenizerError):
        pass
    assert time.perf_counter() - start < 0.5


def test_error_gives_the_byte_offset():
    data = gguf(kv("a", U8, b"\x00"), kv("tokenizer.ggml.tokens", ARRAY, string_array([b"ok", b"x\xff"])))
    with pytest.raises(VocabFormatError) as info:
        read_gguf_metadata(data, source="f.gguf")
    offset = data.index(b"x\xff") + 1
    assert str(info.value) == (
        f"f.gguf: 'tokenizer.ggml.tokens'[1] is not valid UTF-8 (invalid start byte) (at byte {offset})"
    )


# ---------------------------------------------------------------------------------------------
# The Vocab


def test_qwen3_vocab():
    v = vocab("qwen3-vocab.gguf")
    assert v.name == "Qwen3 tokenizer (vocab only)"
    assert v.n_vocab == 151_936
    assert len(v.ranks) == 151_643
    assert v.merges is None and v.whole_piece_lookup  # rank-based
    assert v.pipeline.spanner == LLAMA_CPP_PRE_PATTERNS["qwen2"] == RegexSplit(v.pattern)
    assert v.normalizer == NoNormalizer()
    assert (v.bos_token_id, v.eos_token_id) == (151_643, 151_645)
    assert v.ranks[b"hello"] == 14_990 and v.ranks[b" hello"] == 23_811
    assert v.special_tokens["<|im_end|>"] == 151_645
    assert v.special_tokens["<|endoftext|>"] == 151_643
    assert v.special_tokens["<|fim_prefix|>"] == 151_659  # CONTROL in the GGUF, unlike HF's "special": false
    assert v.added_tokens == {
        "<tool_call>": 151_657, "</tool_call>": 151_658, "<tool_response>": 151_665,
        "</tool_response>": 151_666, "<think>": 151_667, "</think>": 151_668,
    }
    assert len(v.special_tokens) == 20
    # UNUSED padding: an id, but no token.
    assert v.token_bytes[151_669] is None and v.token_bytes[151_935] is None
    assert "[PAD151669]" not in v.all_special_literals


def test_qwen2_vocab_from_llama_cpp():
    v = vocab("ggml-vocab-qwen2.gguf")
    assert v.n_vocab == 151_936 and len(v.ranks) == 151_643
    assert v.merges is None and v.whole_piece_lookup
    assert v.bos_token_id == v.eos_token_id == 151_643
    assert len(v.special_tokens) == 3
    # llama.cpp's converter gave Qwen1.5's padding USER_DEFINED type: added tokens.
    assert len(v.added_tokens) == 290 and v.added_tokens["[PAD151646]"] == 151_646


def test_gpt2_vocab_from_llama_cpp():
    v = vocab("ggml-vocab-gpt-2.gguf")
    assert v.name == "gpt-2"
    assert v.n_vocab == 50_257 and len(v.ranks) == 50_256
    assert v.merges is None and v.whole_piece_lookup
    assert v.pipeline.spanner == LLAMA_CPP_PRE_PATTERNS["gpt-2"]
    assert v.special_tokens == {"<|endoftext|>": 50_256} and not v.added_tokens
    assert v.ranks[b"hello"] == 31_373 and v.ranks[b" world"] == 995


def test_gguf_ranks_equal_the_bundled_vocabularies():
    from wordsplit.vocabs import load_vocab

    assert vocab("ggml-vocab-gpt-2.gguf").ranks == load_vocab("r50k_base").ranks
    qwen3 = load_vocab("qwen3")
    v = vocab("qwen3-vocab.gguf")
    assert v.ranks == qwen3.ranks
    assert v.all_special_literals == qwen3.all_special_literals


def test_load_gguf_reads_plain_and_gzipped_files(tmp_path):
    plain = tmp_path / "ggml-vocab-gpt-2.gguf"
    plain.write_bytes(gguf_bytes("ggml-vocab-gpt-2.gguf"))
    for path in (plain, GGUF_DIR / "ggml-vocab-gpt-2.gguf.gz"):
        v = load_gguf(path)
        assert v.source == str(path)
        assert v.ranks == vocab("ggml-vocab-gpt-2.gguf").ranks


def test_a_vocab_inside_a_huge_model_file_reads_only_the_metadata(tmp_path, monkeypatch):
    from wordsplit.vocabs import forget_loaded, load_vocab

    monkeypatch.setenv("WORDSPLIT_CACHE_DIR", str(tmp_path / "cache"))
    head = tokenizer_gguf()
    path = tmp_path / "model.gguf"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(4 << 30)  # 4 GiB: the metadata, then a hole where the tensors would be
    assert read_gguf_head(path) == head
    expected = read_gguf(head).ranks
    forget_loaded()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        cold = load_vocab(path)  # hashed (the metadata only), parsed, cached
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cold.ranks == expected and load_vocab(path).ranks == expected  # the second from the derived entry
    assert peak < 32 << 20, f"peak {peak >> 20} MiB for a 4 GiB file with {len(head)} bytes of metadata"
    assert elapsed < 10


def test_gguf_metadata_beyond_the_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("WORDSPLIT_MAX_VOCAB_MB", "1")
    path = tmp_path / "big.gguf"
    path.write_bytes(gguf(kv("blob", ARRAY, array(U8, 2 << 20, bytes(2 << 20)))))
    with pytest.raises(VocabFormatError, match="big.gguf: the GGUF metadata is larger than 1 MiB"):
        load_gguf(path)


@pytest.mark.parametrize("cut", [3, 10, 30, 200, 2000])
def test_a_truncated_file_is_reported_by_the_parser(tmp_path, cut):
    path = tmp_path / "cut.gguf"
    path.write_bytes(tokenizer_gguf()[:cut])
    with pytest.raises(VocabFormatError, match="cut.gguf") as info:
        load_gguf(path)
    with pytest.raises(VocabFormatError) as from_bytes:
        read_gguf(tokenizer_gguf()[:cut], source=str(path))
    assert str(info.value) == str(from_bytes.value)


def test_tiny_vocab_maps_token_types():
    v = read_gguf(tokenizer_gguf(), source="tiny.gguf")
    assert v.ranks[b"ab"] == 256 and v.ranks[b"abc"] == 257 and len(v.ranks) == 258
    assert v.special_tokens == {"<|end|>": 258}
    assert v.added_tokens == {"<think>": 259}
    assert v.n_vocab == 261 and v.token_bytes[260] is None
    assert v.merges is None and v.whole_piece_lookup
    assert v.eos_token_id == 258 and v.bos_token_id is None


def test_chat_template_and_special_ids_come_from_the_metadata():
    v = vocab("ggml-vocab-qwen2.gguf")
    assert v.chat_template == metadata("ggml-vocab-qwen2.gguf")["tokenizer.chat_template"]
    assert v.chat_template.startswith("{% for message in messages %}{% if loop.first")
    assert "<|im_start|>assistant\n" in v.chat_template
    assert (v.bos_token_id, v.eos_token_id) == (151_643, 151_643)
    gpt2 = vocab("ggml-vocab-gpt-2.gguf")
    assert gpt2.chat_template is None and gpt2.eos_token_id == 50_256
    tiny = read_gguf(tokenizer_gguf(chat_template="{{ messages[0]['content'] }}"))
    assert tiny.chat_template == "{{ messages[0]['content'] }}" and tiny.eos_token_id == 258
    assert read_gguf(tokenizer_gguf()).chat_template is None


def test_chat_template_of_the_wrong_type_is_a_format_error():
    with pytest.raises(VocabFormatError, match="'tokenizer.chat_template' should be a string, not bytes"):
        read_gguf(tokenizer_gguf(chat_template=b"{{ x }}"), source="t.gguf")


def test_normal_tokens_that_are_not_byte_level_are_ids_without_bytes():
    # Command-R's GGUF has such tokens ("™", "\u200d"): no merge makes them and BPE, which runs
    # on byte-level text, never produces them.
    tokens = with_token(257, "™")
    v = read_gguf(tokenizer_gguf(tokens=tokens, merges=["a b"]), source="t.gguf")
    assert v.n_vocab == 261 and v.token_bytes[257] is None
    assert b"\xe2\x84\xa2" not in v.ranks and v.ranks[b"ab"] == 256


def test_name_falls_back_to_the_file_name(tmp_path):
    path = tmp_path / "my-model.gguf"
    path.write_bytes(tokenizer_gguf(name=None))
    assert load_gguf(path).name == "my-model"


@pytest.mark.parametrize("pre, whole_piece_lookup", [("qwen2", False), ("llama-bpe", True), ("glm4", True)])
def test_merges_out_of_id_order_are_pair_ranked(pre, whole_piece_lookup):
    # "ab c" (makes id 257) before "a b" (id 256): merge order is not id order.
    v = read_gguf(tokenizer_gguf(pre=pre, merges=["ab c", "a b"]))
    assert v.merges == {(256, ord("c")): 0, (ord("a"), ord("b")): 1}
    # llama.cpp's ignore_merges looks whole pieces up first (llama3 family, glm4/glm5).
    assert v.whole_piece_lookup is whole_piece_lookup


def with_token(i: int, text: str) -> list[str]:
    return [*TINY_TOKENS[:i], text, *TINY_TOKENS[i + 1:]]


BAD_TOKENIZERS = {
    "token_type length": (tokenizer_gguf(types=TINY_TYPES[:-1]), "token_type has 260 entries for 261 tokens"),
    "merge of a token that is not byte-level": (
        tokenizer_gguf(tokens=with_token(257, "a™b"), merges=["a b", "a™b c"]),
        "merge #1 'a™b c' uses 'a™b', which is not a byte-level NORMAL token",
    ),
    "empty normal token": (tokenizer_gguf(tokens=with_token(256, "")), "NORMAL token 256 is empty"),
    "duplicate token": (tokenizer_gguf(tokens=with_token(260, "ab")), "token 260 'ab' repeats token 256"),
    "empty control token": (tokenizer_gguf(tokens=with_token(258, "")), "token 258 (type 3) is empty"),
    "invalid token type": (tokenizer_gguf(types=[*TINY_TYPES[:-1], 9]), "token 260 '[PAD260]' has the invalid token"),
    "merge without space": (tokenizer_gguf(merges=["ab"]), "merge #0 'ab' is not two tokens"),
    "merge of unknown token": (tokenizer_gguf(merges=["a b", "ab x y"]), "merge #1 'ab x y' uses 'x y'"),
    "merge of a control token": (
        tokenizer_gguf(merges=["<|end|> a"]), "uses '<|end|>', which is not a byte-level NORMAL token"
    ),
    "merge makes no token": (tokenizer_gguf(merges=["a b", "b c"]), "merge #1"),
    "missing tokens": (
        gguf(kv("tokenizer.ggml.model", STRING, gstr("gpt2")), kv("tokenizer.ggml.pre", STRING, gstr("qwen2"))),
        "has no 'tokenizer.ggml.tokens'",
    ),
    "eos of the wrong type": (
        tokenizer_gguf(eos="258"), "'tokenizer.ggml.eos_token_id' should be an integer, not str '258'"
    ),
    "eos out of range": (tokenizer_gguf(eos=9999), "eos_token_id 9999"),
    "eos is unused padding": (tokenizer_gguf(eos=260), "eos_token_id 260"),
}


@pytest.mark.parametrize("case", BAD_TOKENIZERS, ids=list(BAD_TOKENIZERS))
def test_bad_tokenizer_raises_vocab_format_error(case):
    data, words = BAD_TOKENIZERS[case]
    with pytest.raises(VocabFormatError, match=regex.escape(words)):
        read_gguf(data, source="bad.gguf")


def test_unknown_pre_tokenizer_lists_the_known_ones():
    with pytest.raises(UnsupportedTokenizerError) as info:
        read_gguf(tokenizer_gguf(pre="qwen-2"), source="x.gguf")
    message = str(info.value)
    assert message.startswith("x.gguf: ") and "'qwen-2'" in message
    known = message.split("known: ", 1)[1]
    assert "qwen2" in known and "gpt-2" in known and "llama-bpe" in known and "deepseek-llm" in known
    assert "Did you mean 'qwen2'?" in message


def test_a_llama_cpp_file_without_pre_tokenizer_gets_the_default(tmp_path):
    from wordsplit import TokenizerOptions

    v = load_gguf(unpacked("ggml-vocab-aquila.gguf.xz", tmp_path))
    assert v.name == "D:\\Diverses\\models" and v.n_vocab == 100_008
    assert v.pipeline.spanner == LLAMA_CPP_PRE_PATTERNS["default"]
    assert (v.bos_token_id, v.eos_token_id, v.chat_template) == (0, 0, None)
    for backend in ("python", "native"):
        tok = TokenizerOptions(backend=backend).build(v)
        ids = tok.encode_ordinary("x=1234567;")
        # default's last regex cuts digit runs into threes: no token crosses "123|456|7".
        assert [tok.decode([i]) for i in ids] == ["x", "=", "123", "456", "7", ";"]


def test_missing_pre_tokenizer_is_llama_cpps_default():
    v = read_gguf(tokenizer_gguf(pre=None))
    assert v.pipeline.spanner == LLAMA_CPP_PRE_PATTERNS["default"]
    assert read_gguf(tokenizer_gguf(pre="default")).pipeline == v.pipeline


@pytest.mark.parametrize("pre", ["gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"])
def test_raw_utf8_pre_tokenizers_are_unsupported(pre):
    with pytest.raises(UnsupportedTokenizerError, match=f"'{pre}' .*raw UTF-8.*not byte-level"):
        read_gguf(tokenizer_gguf(pre=pre), source="m.gguf")


@pytest.mark.parametrize(
    "model, kind",
    [("rwkv", "RWKV"), ("plamo2", "PLaMo-2"), ("whitespace", "raw UTF-8"), ("hybriddna", "k-mer"), ("xyz", "")],
)
def test_other_models_are_unsupported(model, kind):
    with pytest.raises(UnsupportedTokenizerError) as info:
        read_gguf(tokenizer_gguf(model=model), source="m.gguf")
    assert f"tokenizer.ggml.model is {model!r}" in str(info.value) and kind in str(info.value)


@pytest.mark.parametrize("token_type", [0, 6])
def test_undefined_and_byte_tokens_are_unsupported(token_type):
    with pytest.raises(UnsupportedTokenizerError, match=f"type {token_type}"):
        read_gguf(tokenizer_gguf(types=[*TINY_TYPES[:-1], token_type]))


# ---------------------------------------------------------------------------------------------
# The pre-tokenizer table


def test_pre_patterns_are_llama_cpps():
    qwen2 = (
        r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
        r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
    assert LLAMA_CPP_PRE_PATTERNS["qwen2"] == RegexSplit(qwen2)
    assert LLAMA_CPP_PRE_PATTERNS["llama-bpe"] == RegexSplit(qwen2.replace(r"|\p{N}|", r"|\p{N}{1,3}|"))
    for name in ("deepseek-r1-qwen", "megrez", "stablelm2", "hunyuan", "grok-2"):
        assert LLAMA_CPP_PRE_PATTERNS[name] == RegexSplit(qwen2)
    for name in ("llama3", "llama-v3", "dbrx", "smaug-bpe", "chatglm-bpe", "glm4"):
        assert LLAMA_CPP_PRE_PATTERNS[name] == LLAMA_CPP_PRE_PATTERNS["llama-bpe"]
    gpt2_family = ["gpt-2", "phi-2", "jina-es", "jina-de", "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code",
                   "roberta-bpe", "gigachat", "mpt", "olmo", "jais", "trillion"]
    assert {LLAMA_CPP_PRE_PATTERNS[name] for name in gpt2_family} == {LLAMA_CPP_PRE_PATTERNS["gpt-2"]}


def test_gpt2_pattern_is_gpt2s_original():
    # llama.cpp's hand-written GPT-2 splitter ends with `\s+`; with it the pattern is GPT-2's
    # original, the exact string the rest of wordsplit knows.
    from wordsplit.patterns import GPT2_ORIGINAL_PATTERN

    assert LLAMA_CPP_PRE_PATTERNS["gpt-2"] == RegexSplit(GPT2_ORIGINAL_PATTERN)
    assert regex.findall(GPT2_ORIGINAL_PATTERN, "\tb  c ") == ["\t", "b", " ", " c", " "]


def test_gpt4o_pattern_is_o200ks():
    from wordsplit.patterns import O200K_PATTERN

    assert LLAMA_CPP_PRE_PATTERNS["gpt-4o"] == RegexSplit(O200K_PATTERN)


SAMPLE = (
    "Hello WORLD, it's they'RE ſ'ſ 'Ll 12345 ٣٤٥ ½ x²\r\n\n\t  tabs\u3000\u00a0nbsp  \n"
    "éé e\u0301 aÉb ÉCOLE naïve 中文字 🙂👍🏽 <|end|> a/b//c\n\n  \x00\x1f\u2028 end   "
)


# One name per distinct pattern.
PATTERN_NAMES = sorted({pattern: name for name, pattern in sorted(LLAMA_CPP_PRE_PATTERNS.items())}.values())


def split(pre: str, text: str) -> list[str]:
    """The pieces wordsplit's Python spanner for ``pre``'s pattern cuts ``text`` into."""
    from wordsplit.spanners import get_spanner, spanner_argument, spanner_for

    stage = LLAMA_CPP_PRE_PATTERNS[pre]
    return get_spanner(spanner_for(stage) or "regex")(spanner_argument(stage)).split(text)


@pytest.mark.parametrize("name", PATTERN_NAMES)
def test_every_pattern_covers_any_text(name):
    """llama.cpp keeps unmatched text as pieces: a plain pattern must match all of it (a
    findall-style splitter would drop the rest), a split program keeps it by construction."""
    assert "".join(split(name, SAMPLE)) == SAMPLE


@pytest.mark.parametrize("name", PATTERN_NAMES)
def test_every_pattern_encodes_alike_on_both_backends(name):
    """GPT-2's ranks under each pre-tokenizer: the native engine (its own regex engine for a
    plain pattern, the Python spanner for a split program) gives the Python backend's ids."""
    from wordsplit import TokenizerOptions
    from wordsplit.vocab import Vocab

    gpt2 = vocab("ggml-vocab-gpt-2.gguf")
    blob, ids, lengths = gpt2.packed()
    v = Vocab.from_packed(blob=blob, ids=ids, lengths=lengths, name=name,
                          pipeline=PipelineSpec(spanner=LLAMA_CPP_PRE_PATTERNS[name]), n_vocab=gpt2.n_vocab)
    text = SAMPLE + " x=1234567; 中文abc的 don't!! Hei, maailma. ½ a\u200db\n" * 3
    python = TokenizerOptions(backend="python").build(v).encode_ordinary(text)
    assert TokenizerOptions(backend="native").build(v).encode_ordinary(text) == python
    assert b"".join(v.token_bytes[i] for i in python) == text.encode()


def test_single_regexes_stay_plain_patterns_and_sequences_become_split_programs():
    from wordsplit.patterns import GPT2_ORIGINAL_PATTERN, O200K_PATTERN
    from wordsplit.spanners import spanner_for

    # The fast path: a scanner is proven for these exact strings.
    assert spanner_for(LLAMA_CPP_PRE_PATTERNS["mpt"]) == spanner_for(RegexSplit(GPT2_ORIGINAL_PATTERN)) \
        == "gpt2-scanner"
    assert spanner_for(LLAMA_CPP_PRE_PATTERNS["llama4"]) == spanner_for(RegexSplit(O200K_PATTERN)) == "o200k-scanner"
    for name, regexes in LLAMA_CPP_PRE_REGEXES.items():
        stage = LLAMA_CPP_PRE_PATTERNS[name]
        if len(regexes) > 1 or name in ("poro-chat", "bloom", "gpt3-finnish"):
            assert isinstance(stage, SplitProgram), name
            assert len(stage.steps) == len(regexes), name
            assert all(isinstance(step, Split) and step.behavior == "Isolated" for step in stage.steps), name
        else:
            assert isinstance(stage, RegexSplit), name


def test_sequences_apply_each_regex_to_the_pieces_of_the_one_before():
    # "\p{N}", then GPT-2's regex on every piece.
    assert split("starcoder", "abc 123 x") == ["abc", " ", "1", "2", "3", " x"]
    assert split("command-r", "abc 123 x") == split("refact", "abc 123 x") == split("starcoder", "abc 123 x")
    # Punctuation and symbol runs, GPT-2's regex, then threes of ASCII digits.
    assert split("falcon", "a+b=12345!") == ["a", "+", "b", "=", "123", "45", "!"]
    # The default: "`" is a symbol its first regex leaves alone (falcon's takes it).
    assert split("default", "x `y` 1234") == ["x", " `", "y", "`", " ", "123", "4"]
    assert split("falcon", "x `y`") == ["x", " ", "`", "y", "`"]
    # Newlines, letters with one leading space, punctuation ("=" is a symbol), CJK, digits.
    assert split("deepseek-coder", "int x=42;\n中文") == ["int", " x", "=", "4", "2", ";", "\n", "中文"]
    # Latin-like letters, ASCII/fullwidth punctuation, trailing whitespace, CJK, numbers.
    assert split("deepseek-llm", "Hello, 世界! 123  \n") == [
        "Hello", ",", " ", "世界", "!", " ", "123", "  ", "\n"
    ]
    # A regex that leaves gaps (poro): they are pieces.
    assert split("poro-chat", "Hei, maailma.") == ["Hei", ",", " maailma", "."]


def test_regexes_standing_for_llama_cpps_hand_written_splitters():
    # afmoe and tiny_aya: a run of numbers, cut into threes from the right.
    assert split("afmoe", "x1234567 89") == ["x", "1", "234", "567", " ", "89"]
    assert split("tiny_aya", "1234567")[:3] == ["1", "234", "567"]
    # superbpe: an empty-match regex cuts digit runs the same way.
    assert split("superbpe", "a1234567b") == ["a", "1", "234", "567", "b"]
    # kimi-k2: Han runs apart from other letters; contractions stay on their word.
    assert split("kimi-k2", "中文abc的 don't") == ["中文", "abc", "的", " don't"]


def test_punctuation_and_symbol_classes_are_unicode_16():
    from wordsplit.formats.gguf._classes import P, S, UNICODE_VERSION

    def member(ranges, ch):
        return any(lo <= ord(ch) <= hi for lo, hi in ranges)

    assert UNICODE_VERSION == "16.0.0"
    assert all(member(P, ch) for ch in "!#%,._{}、。「」¿‐")
    assert not any(member(P, ch) for ch in "$+<=>^`|~a1 €")
    assert all(member(S, ch) for ch in "$+<=>^`|~€©→🙂")
    assert not any(member(S, ch) for ch in "!a1 、")


def test_spelled_classes_keep_the_rest_of_the_regex():
    from wordsplit.formats.gguf.pre_tokenizers import _spelled
    from wordsplit.spanners.regex import translate_pattern

    spelled = _spelled(r"[\p{P}\$]+|\p{S}|\p{N}+")
    assert spelled.startswith(r"[\x{21}-\x{23}\x{25}-\x{2A}") and spelled.endswith(r"]|\p{N}+")
    assert spelled.count("[") == spelled.count("]") == 2
    compiled = regex.compile(translate_pattern(spelled))
    assert compiled.fullmatch("!$、") and compiled.fullmatch("€") and not compiled.fullmatch("a")


def test_llama3_splits_digits_by_three_and_qwen2_one_by_one():
    assert regex.findall(LLAMA_CPP_PRE_PATTERNS["llama3"].pattern, "12345") == ["123", "45"]
    assert regex.findall(LLAMA_CPP_PRE_PATTERNS["qwen2"].pattern, "12345") == ["1", "2", "3", "4", "5"]


# ---------------------------------------------------------------------------------------------
# llama.cpp's test cases


@pytest.mark.parametrize("name", ["ggml-vocab-gpt-2.gguf", "ggml-vocab-qwen2.gguf"])
def test_llama_cpp_cases_load(name):
    cases = load_cases(GGUF_DIR / f"{name}.inp", GGUF_DIR / f"{name}.out")
    assert len(cases) == 46
    assert cases[0][0] == "ied 4 ½ months"
    assert cases[2] == ("", [])
    assert cases[-1][0].endswith("a'lL")
    n_vocab = vocab(name).n_vocab
    assert all(0 <= i < n_vocab for _, ids in cases for i in ids)
    assert all(ids for text, ids in cases if text)


def test_llama_cpp_cases_of_gpt2_and_qwen2_share_texts():
    gpt2 = load_cases(GGUF_DIR / "ggml-vocab-gpt-2.gguf.inp", GGUF_DIR / "ggml-vocab-gpt-2.gguf.out")
    qwen2 = load_cases(GGUF_DIR / "ggml-vocab-qwen2.gguf.inp", GGUF_DIR / "ggml-vocab-qwen2.gguf.out")
    assert [text for text, _ in gpt2] == [text for text, _ in qwen2]
    assert gpt2[1] == ("Äpfel", [127, 226, 79, 69, 417])
    assert qwen2[1] == ("Äpfel", [86975, 15897, 301])


def test_load_cases_formats(tmp_path):
    inp, out = tmp_path / "t.inp", tmp_path / "t.out"
    inp.write_text(SEPARATOR.join(["a", "", " b\n"]) + SEPARATOR, encoding="utf-8")
    out.write_text(" 1 2\n\n 3\n", encoding="utf-8")
    assert load_cases(inp, out) == [("a", [1, 2]), ("", []), (" b\n", [3])]
    # Without the final separator the last text still counts (as in test-tokenizer-0).
    inp.write_text(SEPARATOR.join(["a", "", " b\n"]), encoding="utf-8")
    assert load_cases(inp, out)[-1] == (" b\n", [3])
    out.write_text(" 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="3 cases but"):
        load_cases(inp, out)


# -- SentencePiece GGUF (tokenizer.ggml.model "llama"); llama.cpp's own files: test_llamacpp_parity.py


def spm_gguf(extra: list[tuple[str, float, int]], **keys) -> bytes:
    """A tiny llama.cpp SentencePiece GGUF: <unk>, <s>, </s>, the 256 byte tokens, then ``extra``."""
    from llamacpp_cases import tokenizer_only_gguf

    rows = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    rows += [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)] + extra
    return tokenizer_only_gguf({
        "general.name": "tiny-spm", "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": [r[0] for r in rows], "tokenizer.ggml.scores": [r[1] for r in rows],
        "tokenizer.ggml.token_type": [r[2] for r in rows], **keys,
    })


TINY_SPM = [("\u2581", -1.0, 1), ("a", -2.0, 1), ("b", -3.0, 1), ("\u2581a", -5.0, 1), ("ab", -4.0, 1),
            ("\u2581ab", -6.0, 1)]


@pytest.mark.parametrize("backend", ["python", "native"])
def test_spm_gguf_merges_by_score_as_llamacpp(backend):
    from wordsplit import TokenizerOptions

    tok = TokenizerOptions(backend=backend).build(read_gguf(spm_gguf(TINY_SPM), source="s.gguf"))
    # "▁ab": "ab" (-4) merges before "▁a" (-5), then "▁ab"; "é" is no token: its two bytes.
    assert tok.encode_ordinary("ab") == [264]
    assert tok.encode_ordinary("b\u00e9") == [259, 261, 3 + 0xC3, 3 + 0xA9]
    assert tok.decode(tok.encode_ordinary("ab b")) == "ab b"


@pytest.mark.parametrize("backend", ["python", "native"])
def test_spm_gguf_unused_tokens_merge_and_decode_to_nothing(backend):
    from wordsplit import TokenizerOptions

    unused = [("\u2581", -1.0, 1), ("a", -2.0, 1), ("\u2581a", -3.0, 5)]  # "▁a" is UNUSED (id 261)
    tok = TokenizerOptions(backend=backend).build(read_gguf(spm_gguf(unused), source="s.gguf"))
    assert tok.encode_ordinary("a a") == [261, 261] and tok.decode([261, 260]) == "a"


def test_spm_gguf_without_space_prefix():
    from wordsplit import TokenizerOptions

    tok = TokenizerOptions().build(read_gguf(spm_gguf(TINY_SPM, **{"tokenizer.ggml.add_space_prefix": False}),
                                             source="s.gguf"))
    assert tok.encode_ordinary("ab") == [263] and tok.decode([259, 263]) == " ab"


def test_spm_gguf_refusals():
    reachable = TINY_SPM + [("<", -7.0, 1), ("s>", -8.0, 1)]  # "<" + "s>" spells the control "<s>"
    with pytest.raises(UnsupportedTokenizerError, match=r"token 1 '<s>' \(type 3\) can be made"):
        read_gguf(spm_gguf(reachable), source="s.gguf")
    # llama.cpp sets attributes on Phi-3's <|endoftext|> and fails to load a vocabulary without it
    with pytest.raises(UnsupportedTokenizerError, match=r"'<\|endoftext\|>' for a model named 'phi-3 mini'"):
        read_gguf(spm_gguf(TINY_SPM, **{"general.name": "Phi-3 mini"}), source="s.gguf")


@pytest.mark.parametrize("extra, types, merge, message", [
    (["a", "\n", "a\n"], [1, 1, 1], "a \n", "joins a newline to other text"),
    (["a", "a<0x41>"], [1, 1], "a <0x41>", "uses a byte token"),
    (["<", "b>", "<b>"], [1, 1, 3], "< b>", "makes the token '<b>' of type 3"),
])
def test_gemma4_gguf_refusals(extra, types, merge, message):
    from llamacpp_cases import tokenizer_only_gguf

    data = tokenizer_only_gguf({
        "tokenizer.ggml.model": "gemma4", "tokenizer.ggml.tokens": [f"<0x{b:02X}>" for b in range(256)] + extra,
        "tokenizer.ggml.token_type": [6] * 256 + types, "tokenizer.ggml.merges": [merge],
    })
    with pytest.raises(UnsupportedTokenizerError, match=message):
        read_gguf(data, source="g.gguf")
