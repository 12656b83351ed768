"""Unigram models: SentencePiece ``.model`` files exact against ``sentencepiece``, and
tokenizer.json files with a ``Unigram`` model exact against HF ``tokenizers`` (the test-time
oracles), with the character maps both run, on the Python backend.

The files are tests/data/unigram/ (its SOURCES.md says what each is); the goldens
(tools/gen_family_goldens.py) hold each oracle's ids and decoded text for the corpus lines and
texts rich in what the character maps and the Viterbi decide. The live tests compare with the
oracles themselves on hypothesis text from a mixed alphabet, and on random id sequences.

The tests here run ``backend="python"`` (but where they name a backend);
tests/test_unigram_native.py holds the native encoder to the same goldens, the oracles and
the Python encoder.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import struct
import time
from pathlib import Path

import pytest
import sentencepiece
import tokenizers
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DATA, GOLDEN
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.engines.sentencepiece import SentencePieceEngine
from wordsplit.errors import UnknownVocabError, UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.formats.hf_unigram import serde_json_f64
from wordsplit.formats.sentencepiece import _varint, read_model_proto
from wordsplit.formats.charsmap import read_charsmap
from wordsplit.postprocess import Parts, default_process, processor_for

UNIGRAM = DATA / "unigram"
pytestmark = pytest.mark.skipif(not UNIGRAM.is_dir(), reason="tests/data/unigram/ (the family data) is not here")

# The Unigram .model files, and the tokenizer.json files (each with its golden's stem).
MODELS = ["maxtext-tokenizer.model.gz", "opus-mt-en-mg/source.spm.gz", "opus-mt-en-mg/target.spm.gz",
          "sentencepiece-test_ja_model.model.gz", "sentencepiece-test_model.model.gz", "spiece.model.gz",
          "test_sentencepiece.model.gz", "test_sentencepiece_no_bos.model.gz",
          "test_sentencepiece_with_bytefallback.model.gz"]
JSONS = ["maxtext-tokenizer.spm.tokenizer.json.gz", "opus-mt-en-mg-source.spm.tokenizer.json.gz",
         "ortx-nmt/tokenizer.json.gz", "sentencepiece-test_ja_model.spm.tokenizer.json.gz",
         "spiece.albert.tokenizer.json.gz", "t5-small/tokenizer.json.gz", "test_sentencepiece.t5.tokenizer.json.gz",
         "test_sentencepiece.xlmroberta.tokenizer.json.gz", "test_sentencepiece_no_bos.t5.tokenizer.json.gz",
         "test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz"]
# What stays refused, and why (the message names it).
REFUSED = {"ortx-nmt/vocab.joint.spm.gz": "denormalizer", "test_sentencepiece_bpe_char.model.gz": "Char model"}


def model_golden_name(name: str) -> str:
    folder, _, file = name.rpartition("/")
    stem = file.removesuffix(".gz").rsplit(".", 1)[0]
    return f"unigram-{folder}.{stem}" if folder else f"unigram-{stem}"


def json_golden_name(name: str) -> str:
    folder, _, file = name.rpartition("/")
    return f"unigram-{folder}" if file == "tokenizer.json.gz" else f"unigram-{file.removesuffix('.tokenizer.json.gz')}"


def golden(name: str) -> dict:
    return json.loads(gzip.decompress((GOLDEN / f"{name}.json.gz").read_bytes()))


def raw(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


@functools.cache
def model_tokenizer(name: str):
    return TokenizerOptions(backend="python").build(load_vocab(UNIGRAM / name))


@functools.cache
def json_tokenizer(name: str):
    path = UNIGRAM / name
    return TokenizerOptions(backend="python").build(read_hf_tokenizer_json(raw(path), source=str(path)))


@functools.cache
def spm_oracle(name: str) -> sentencepiece.SentencePieceProcessor:
    return sentencepiece.SentencePieceProcessor(model_proto=raw(UNIGRAM / name))


@functools.cache
def hf_oracle(name: str) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(raw(UNIGRAM / name).decode("utf-8"))


def decode(tok, ids) -> str:
    """The tokenizer's decode through the SentencePiece engine, which decodes every
    SentencePieceDecoder pipeline (TokenizerOptions.build wraps SentencePiece BPE ones in it)."""
    engine = tok._engine
    if not isinstance(engine, SentencePieceEngine):
        engine = SentencePieceEngine(engine, tok.vocab, tok.spanner_name, tok.encoder_name)
    return engine.decode(ids, "replace")


# -- goldens --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_model_golden(name):
    data = golden(model_golden_name(name))
    assert data["oracle"] == f"sentencepiece {sentencepiece.__version__}" and data["model_type"] == "UNIGRAM"
    tok = model_tokenizer(name)
    assert (tok.n_vocab, tok.vocab.bos_token_id, tok.vocab.eos_token_id) == (
        data["n_vocab"], data["bos_id"] if data["bos_id"] >= 0 else None,
        data["eos_id"] if data["eos_id"] >= 0 else None)
    wrong = [(c["text"], c["ids"], got) for c in data["cases"] if (got := tok.encode_ordinary(c["text"])) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"
    wrong = [(c["ids"], c["decoded"], got) for c in data["cases"] + data["decode_cases"]
             if (got := decode(tok, c["ids"])) != c["decoded"]]
    assert not wrong, f"{len(wrong)} decode mismatches, first: {wrong[0]!r}"


def with_specials(tok, ids: list[int], pair: list[int] | None = None) -> tuple[list[int], list[int]]:
    """``(ids, type_ids)`` of ``ids`` (and ``pair``) through the vocabulary's post-processor."""
    processor = processor_for(tok.vocab.pipeline.post_processor)
    first = Parts.of(ids, [""] * len(ids), [(0, 0)] * len(ids), [0] * len(ids), type_id=0)
    second = None if pair is None else Parts.of(pair, [""] * len(pair), [(0, 0)] * len(pair), [0] * len(pair),
                                                type_id=1)
    if processor is None:
        merged = default_process(first, second)
    else:
        merged = processor.process(first, second, True)
    return merged.ids, merged.type_ids


@pytest.mark.parametrize("name", JSONS)
def test_json_golden(name):
    data = golden(json_golden_name(name))
    assert data["oracle"] == f"tokenizers {tokenizers.__version__}" and data["model"] == "Unigram"
    tok = json_tokenizer(name)
    assert tok.n_vocab == data["n_vocab"]
    wrong = [(c["text"], c["ids"], got) for c in data["cases"]
             if (got := tok.encode(c["text"], allowed_special="all")) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"
    wrong = [(c["text"], c["with_specials"]["ids"], got) for c in data["cases"]
             if (got := with_specials(tok, c["ids"]))
             != (c["with_specials"]["ids"], c["with_specials"]["type_ids"])]
    assert not wrong, f"{len(wrong)} post-processor mismatches, first: {wrong[0]!r}"
    for case in data["pair_cases"]:
        a, b = (tok.encode(text, allowed_special="all") for text in (case["text"], case["pair"]))
        assert with_specials(tok, a, b) == (case["ids"], case["type_ids"]), case
    wrong = [(c["ids"], c["decoded"], got) for c in data["cases"] + data["decode_cases"]
             if (got := decode(tok, c["ids"])) != c["decoded"]]
    assert not wrong, f"{len(wrong)} decode mismatches, first: {wrong[0]!r}"
    special = set(tok.vocab.special_tokens.values())
    wrong = [(c["ids"], c["decoded_skip_special"], got) for c in data["decode_cases"]
             if (got := decode(tok, [i for i in c["ids"] if i not in special])) != c["decoded_skip_special"]]
    assert not wrong, f"{len(wrong)} decode mismatches without specials, first: {wrong[0]!r}"


@pytest.mark.parametrize("name, why", REFUSED.items())
def test_refused_files(name, why):
    with pytest.raises(UnsupportedTokenizerError, match=why):
        load_vocab(UNIGRAM / name)


ALPHABET_FOR_EXPLAIN = st.sampled_from(["Hello", " ", "world", "ꙮ", "😀", "①", "  ", "ab", "ing", "é", "日本"])


def _fields_reordered(model: bytes) -> bytes:
    """The protobuf ``model`` with its specs (fields 2 to 5) before its pieces (field 1), as
    other writers than sentencepiece lay a model out; protobuf readers take either order."""
    fields, pos = [], 0
    while pos < len(model):
        start = pos
        tag, pos = _varint(model, pos, "")
        length, pos = _varint(model, pos, "")
        pos += length
        fields.append((tag >> 3, model[start:pos]))
    return b"".join(b for n, b in fields if n != 1) + b"".join(b for n, b in fields if n == 1)


@pytest.mark.parametrize("name", ["test_sentencepiece.model.gz", "spiece.model.gz"])
@pytest.mark.parametrize("backend", ["python", "native"])
def test_a_model_with_its_specs_first_and_any_name_loads_by_content(tmp_path, name, backend):
    """A model whose pieces come after its specs, named as maxtext names its files
    (``tokenizer.default``): recognized by its content, it encodes as sentencepiece does."""
    path = tmp_path / "tokenizer.default"
    path.write_bytes(_fields_reordered(raw(UNIGRAM / name)))
    oracle = sentencepiece.SentencePieceProcessor(model_file=str(path))
    tok = TokenizerOptions(backend=backend).build(load_vocab(path))
    for text in ["Hello world ①", "  x\ty ", "日本語 😀"]:
        assert tok.encode(text) == oracle.encode(text)
    (tmp_path / "notes.default").write_bytes(b"* some text, not a model\n")
    with pytest.raises(UnknownVocabError, match="nor recognizes its content"):
        load_vocab(tmp_path / "notes.default")


@pytest.mark.parametrize("name", ["test_sentencepiece_with_bytefallback.model.gz", "t5-small/tokenizer.json.gz",
                                  "spiece.model.gz"])
@settings(max_examples=25, deadline=None)
@given(text=st.lists(ALPHABET_FOR_EXPLAIN, max_size=8).map("".join))
def test_explain_shows_the_best_segmentation_and_its_score(name, text):
    """Each piece's best segmentation: its tokens spell the piece, their scores sum to the
    path's score, and the ids are the encode's."""
    from wordsplit.explain import explain, format_explanation

    tok = model_tokenizer(name) if name in MODELS else json_tokenizer(name)
    expl = explain(tok, text)
    assert expl.ids == tok.encode(text)
    for piece in expl.pieces:
        if piece.kind != "unigram":
            continue
        assert "".join(token.text for token in piece.segmentation) == piece.text
        assert sum(token.score for token in piece.segmentation) == pytest.approx(piece.score, abs=1e-3)
    assert "best segmentation" in format_explanation(expl) or not expl.pieces


def test_explain_of_a_unigram_file_from_the_command_line(capsys):
    from wordsplit.cli import main

    assert main(["explain", "--vocab", str(UNIGRAM / "t5-small/tokenizer.json.gz"), "Hello ꙮꙮ world"]) == 0
    out = capsys.readouterr().out
    assert "Unigram takes the segmentation" in out and "▁Hello = 8774" in out and "ids: [8774, 3, 2, 296]" in out


# -- live differential tests ------------------------------------------------------------------------

# Text rich in what the character maps, the whitespace rules and the Viterbi decide.
ALPHABET = st.sampled_from([
    " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2002", "▁", "▁▁", "a", "x", "xx", "the", "ing", "Hello",
    "1", "23", "é", "e\u0301", "\u0301", "ﬁ", "Ｈｅｌｌｏ", "①", "㍻", "ｶﾞ", "ｶ", "\uff9e", "ᄀ", "\u1161", "\u11a8",
    "가", "日本", "中", "語", "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "\u200d", "\u200b", "\x00", "\x1f", "\x7f",
    "\ufffd", ".", ",", "(", ")", '"', "-", "–", "€", "<s>", "</s>", "<unk>", "<pad>", "<0x41>", "[CLS]", "Ω", "ñ",
    "Straße", "İ", "ß", "\U000e0041", "\ud7a3",
])
TEXTS = st.one_of(st.lists(ALPHABET, max_size=20).map("".join), st.text(max_size=30))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, name=st.sampled_from(MODELS))
def test_models_against_sentencepiece(text, name):
    tok, oracle = model_tokenizer(name), spm_oracle(name)
    ids = oracle.EncodeAsIds(text)
    assert tok.encode_ordinary(text) == ids
    assert decode(tok, ids) == oracle.DecodeIds(ids)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, name=st.sampled_from(JSONS))
def test_jsons_against_tokenizers(text, name):
    tok, oracle = json_tokenizer(name), hf_oracle(name)
    ids = oracle.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == ids
    assert decode(tok, ids) == oracle.decode(ids, skip_special_tokens=False)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(MODELS + JSONS))
def test_random_ids_decode_as_the_oracles_do(data, name):
    if name in MODELS:
        tok, oracle = model_tokenizer(name), spm_oracle(name)
        expected = oracle.DecodeIds
    else:
        tok, hf = json_tokenizer(name), hf_oracle(name)
        expected = functools.partial(hf.decode, skip_special_tokens=False)
    ids = data.draw(st.lists(st.integers(0, tok.vocab.n_vocab - 1), max_size=12))
    assert decode(tok, ids) == expected(ids)


# Grapheme clusters of every length around HF's 6-byte limit: combining marks, jamo, emoji.
CLUSTERS = st.sampled_from(["e", "\u0301", "\u0308", "\u0338", "<", "=", "ᄀ", "\u1161", "\u11a8", "ｶ", "\uff9e",
                            "\uff9f", "😀", "\U0001f3fd", "\u200d", "👩", "🇫", "🇷", "\u3099", "か", "ﬁ", "①", "\u3000",
                            "Å", "\u0041", "\u0e33", "\u0e01", "\u0915", "\u094d", "\u0937", "\r", "\n", "\x00",
                            "\u00a0", "\u0903", "\u0600", "가", "각", "\u0924", "\u093c", "\u200c", "\u09cd",
                            "\u0995", "\U0001f9d1", "\u2764", "\ufe0f", "\U000e0020"])


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.lists(CLUSTERS, max_size=16).map("".join), st.text(max_size=20)))
@example(text="\xa0\u094d\u0915")  # (a linker after no consonant: two clusters, GB9c)
def test_precompiled_normalizes_as_hf(text):
    from wordsplit.normalizers.precompiled import charsmap_of, hf_normalize

    data = real_charsmap()
    expected = tokenizers.normalizers.Precompiled(data).normalize_str(text)
    assert hf_normalize(charsmap_of(base64.b64encode(data).decode()), text) == expected


# Texts where ties, runs of unknown characters and the maps' edge cases decide.
ADVERSARIAL = ["x" * 257, "xxx" * 100, "▁" * 50, " " * 30 + "a", "a" + "\u0301" * 20, "ｶﾞ" * 9, "ᄀ\u1161\u11a8" * 5,
               "\x00" * 5, "😀" * 40, "𠀀𠀁𠀂" * 7, "<unk><unk>", "</s>x</s>", "<0x41><0xFF>", "(((", "€€€", "ﬁ" * 33,
               "e\u0301" * 40, "\u3000\u3000a\u3000\u3000b", "\ufffd" * 4, "Ω" * 17 + "ω" * 17]


@pytest.mark.parametrize("name", MODELS)
def test_models_adversarial(name):
    tok, oracle = model_tokenizer(name), spm_oracle(name)
    for text in ADVERSARIAL:
        assert tok.encode_ordinary(text) == oracle.EncodeAsIds(text), text


@pytest.mark.parametrize("name", JSONS)
def test_jsons_adversarial(name):
    tok, oracle = json_tokenizer(name), hf_oracle(name)
    for text in ADVERSARIAL:
        assert tok.encode(text, allowed_special="all") == oracle.encode(text, add_special_tokens=False).ids, text


def test_tokens_ends_match_the_ids():
    encoder = model_tokenizer("test_sentencepiece_with_bytefallback.model.gz")._engine.encoder
    tokens = encoder.tokens("▁hi😀x")
    assert [i for i, _ in tokens] == encoder.encode_text("▁hi😀x")
    ends = [end for _, end in tokens]
    assert ends == sorted(ends) and ends[-1] == len("▁hi😀x")


# Offsets through Precompiled and Metaspace, where every token spells its part of the text (HF
# gives an unknown run's byte tokens the whole run's offsets, wordsplit each its own byte: see
# the next test); T5's WhitespaceSplit layout aligns each word's ▁ to the word, as HF does.
@pytest.mark.parametrize("name", JSONS)
def test_offsets_equal_hf_where_tokens_spell_the_text(name):
    tok, oracle = json_tokenizer(name), hf_oracle(name)
    unknown = {tok.vocab.unk_token_id, *(i for i in tok._engine.encoder.byte_ids if i is not None)}
    compared = 0
    for case in golden(json_golden_name(name))["cases"][:300]:
        if unknown & set(case["ids"]) or any(i in tok.vocab.special_tokens.values() for i in case["ids"]):
            continue
        expected = [tuple(span) for span in oracle.encode(case["text"], add_special_tokens=False).offsets]
        assert tok.encode_with_offsets(case["text"]).char_offsets == expected, case["text"]
        compared += 1
    assert compared > 50


@pytest.mark.parametrize("name", ["test_sentencepiece_with_bytefallback.model.gz",
                                  "test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz"])
def test_offsets_of_byte_fallback_tokens_are_their_bytes(name):
    """Byte fallback's tokens of an unknown character each stand for one of its UTF-8 bytes:
    their byte ranges tile the character and their character range is that character."""
    tok = model_tokenizer(name) if name in MODELS else json_tokenizer(name)
    byte_ids = {i for i in tok._engine.encoder.byte_ids if i is not None}
    seen = 0
    for text in ["a ①", "①😀 x", "😀😀", "a😀b", "x \U0010ffff\u0300y"]:
        offsets = tok.encode_with_offsets(text)
        assert offsets.ids == tok.encode(text)
        fallback = [k for k, i in enumerate(offsets.ids) if i in byte_ids]
        seen += len(fallback)
        for k in fallback:
            start, end = offsets.char_offsets[k]
            assert end == start + 1 and ord(text[start]) > 0x7F, (text, k)
            byte_start, byte_end = offsets.byte_offsets[k]
            assert byte_end == byte_start + 1
        for group in {offsets.char_offsets[k] for k in fallback}:
            bytes_of = sorted(offsets.byte_offsets[k] for k in fallback if offsets.char_offsets[k] == group)
            character = text[group[0]].encode("utf-8")
            assert len(bytes_of) == len(character) and bytes_of[-1][1] - bytes_of[0][0] == len(character)
    assert seen >= 8  # (the map of the .model makes ① "1"; 😀 has no piece in either)


# -- speed ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["test_sentencepiece.model.gz", "t5-small/tokenizer.json.gz"])
def test_a_megabyte_of_one_character_or_one_word_stays_linear(name):
    tok = model_tokenizer(name) if name in MODELS else json_tokenizer(name)
    tok.encode_ordinary("warm up")
    for text in ("x" * 1_000_000, "supercalifragilistic" * 50_000):
        start = time.perf_counter()
        tok.encode_ordinary(text[:100_000])
        small = time.perf_counter() - start
        start = time.perf_counter()
        ids = tok.encode_ordinary(text)
        large = time.perf_counter() - start
        assert ids and large < 60, f"1 MB took {large:.1f} s"
        assert large < 30 * max(small, 0.01), f"100 kB took {small:.2f} s, 1 MB {large:.2f} s: not linear"


# -- refusals -------------------------------------------------------------------------------------


@functools.cache
def real_charsmap() -> bytes:
    spec = json.loads(raw(UNIGRAM / "t5-small" / "tokenizer.json.gz"))
    return base64.b64decode(spec["normalizer"]["precompiled_charsmap"])


def looping_charsmap() -> bytes:
    """A map whose root's one child ("a") has its children where the root has them."""
    units = [0] * 354
    units[0] = 256 << 10  # the root's children start at 256
    units[256 ^ 97] = 97 << 10 | 97  # label "a"; its own children start at 353 ^ 97 = 256 again
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + b"\0"


def test_a_real_charsmap_reads():
    rules = read_charsmap(real_charsmap()).rules
    assert rules["ﬁ"] == "fi" and rules["\u3000"] == " " and len(rules) > 200_000


@pytest.mark.parametrize("damage", [
    lambda m: m[:3],  # no size
    lambda m: b"\x07\x00\x00\x00" + m[4:],  # a trie size that is no multiple of 4
    lambda m: (len(m)).to_bytes(4, "little") + m[4:],  # a trie past the end
    lambda m: m[:4 + int.from_bytes(m[:4], "little")] + b"\xff\xfe" * 100,  # outputs that are not UTF-8
    lambda m: m[:4 + int.from_bytes(m[:4], "little")] + b"x",  # outputs cut short
    lambda m: looping_charsmap(),
])
def test_malformed_charsmaps_are_refused(damage):
    with pytest.raises(VocabFormatError, match="character map"):
        read_charsmap(damage(real_charsmap()))


def test_malformed_charsmap_in_files_is_a_format_error():
    spec = json.loads(raw(UNIGRAM / "test_sentencepiece.t5.tokenizer.json.gz"))
    spec["normalizer"]["normalizers"][0]["precompiled_charsmap"] = base64.b64encode(b"\x04\x00\x00\x00").decode()
    with pytest.raises(VocabFormatError, match="character map"):
        read_hf_tokenizer_json(json.dumps(spec).encode())
    spec["normalizer"]["normalizers"][0]["precompiled_charsmap"] = "not base64!"
    with pytest.raises(VocabFormatError, match="base64"):
        read_hf_tokenizer_json(json.dumps(spec).encode())
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(raw(UNIGRAM / "test_sentencepiece.model.gz"))
    proto.normalizer_spec.precompiled_charsmap = b"\xff\xff\xff\x7f" + b"\x00" * 8
    with pytest.raises(VocabFormatError, match="character map"):
        from wordsplit.formats.sentencepiece import sentencepiece_vocab

        sentencepiece_vocab(read_model_proto(proto.SerializeToString()), name="damaged")


def damaged_model(edit) -> bytes:
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(raw(UNIGRAM / "test_sentencepiece.model.gz"))
    edit(proto)
    return proto.SerializeToString()


def _duplicate(proto):
    proto.pieces[10].piece = proto.pieces[11].piece


def _no_unknown(proto):
    proto.pieces[proto.trainer_spec.unk_id].type = 1


def _byte_piece(proto):
    proto.pieces[10].type = 6


def _infinite_score(proto):
    proto.pieces[10].score = float("inf")


@pytest.mark.parametrize("edit, why", [(_duplicate, "listed twice"), (_no_unknown, "UNKNOWN"),
                                       (_byte_piece, "byte piece"), (_infinite_score, "finite")])
def test_malformed_models_are_refused(edit, why):
    from wordsplit.formats.sentencepiece import sentencepiece_vocab

    with pytest.raises(VocabFormatError, match=why):
        sentencepiece_vocab(read_model_proto(damaged_model(edit)), name="damaged")


def test_user_defined_pieces_that_hold_a_space_are_unsupported():
    from wordsplit.formats.sentencepiece import sentencepiece_vocab

    def user_defined(proto):
        proto.pieces[10].piece, proto.pieces[10].type = "a b", 4

    with pytest.raises(UnsupportedTokenizerError, match="user-defined piece 'a b' holds a space"):
        sentencepiece_vocab(read_model_proto(damaged_model(user_defined)), name="damaged")


def test_truncated_protobuf_is_refused():
    data = raw(UNIGRAM / "test_sentencepiece.model.gz")
    with pytest.raises(VocabFormatError):
        read_model_proto(data[: len(data) // 2])


def test_unused_pieces_and_denormalizers_are_unsupported():
    from wordsplit.formats.sentencepiece import sentencepiece_vocab

    def unused(proto):
        proto.pieces[10].type = 5

    def denormalizer(proto):
        proto.denormalizer_spec.precompiled_charsmap = proto.normalizer_spec.precompiled_charsmap

    for edit, why in ((unused, "UNUSED"), (denormalizer, "denormalizer")):
        with pytest.raises(UnsupportedTokenizerError, match=why):
            sentencepiece_vocab(read_model_proto(damaged_model(edit)), name="damaged")


@pytest.mark.parametrize("edit, error, why", [
    (lambda m: m.update(vocab=[]), VocabFormatError, "non-empty list"),
    (lambda m: m.update(vocab=[["a", "x"]]), VocabFormatError, "finite score"),
    (lambda m: m.update(vocab=[["a", 0.0], ["a", -1.0]]), VocabFormatError, "listed twice"),
    (lambda m: m.update(unk_id=10**6), VocabFormatError, "unk_id"),
    (lambda m: m.update(byte_fallback="yes"), VocabFormatError, "byte_fallback"),
])
def test_malformed_unigram_json_is_refused(edit, error, why):
    spec = json.loads(raw(UNIGRAM / "test_sentencepiece.t5.tokenizer.json.gz"))
    edit(spec["model"])
    with pytest.raises(error, match=why):
        read_hf_tokenizer_json(json.dumps(spec).encode())


@pytest.mark.parametrize("part, value, why", [
    ("decoder", None, "decoder"),
    ("decoder", {"type": "Metaspace", "replacement": "_", "prepend_scheme": "always"}, "decoder"),
    ("pre_tokenizer", {"type": "Whitespace"}, "pre-tokenizer"),
    ("normalizer", {"type": "Unknown"}, "normalizer"),
    # (WhitespaceSplit then Metaspace reads, every scheme and split: tests/test_unigram_whitespace_layouts.py;
    # Metaspace then WhitespaceSplit does not)
    ("pre_tokenizer", {"type": "Sequence", "pretokenizers": [
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
        {"type": "WhitespaceSplit"}]}, "Metaspace, WhitespaceSplit"),
])
def test_unsupported_unigram_json_is_named(part, value, why):
    spec = json.loads(raw(UNIGRAM / "test_sentencepiece.t5.tokenizer.json.gz"))
    spec[part] = value
    with pytest.raises(UnsupportedTokenizerError, match=why):
        read_hf_tokenizer_json(json.dumps(spec).encode())


# -- scores ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["-3.6185367107391357", "0.0", "-0.5", "1e-7", "-12.210668563842773",
                                  "123456789012345678901234.5", "-1.5E+3", "2.2250738585072014e-310"])
def test_serde_json_f64_is_what_hf_reads(text):
    spec = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}}
    body = json.dumps(spec).replace('0.0]]', text + "]]")
    hf = json.loads(tokenizers.Tokenizer.from_str(body).to_str())["model"]["vocab"][0][1]
    assert serde_json_f64(text) == hf


def test_scores_survive_pickles_and_the_cache():
    import pickle

    from wordsplit.store.derived import dump_vocab, read_vocab

    vocab = json_tokenizer("test_sentencepiece.t5.tokenizer.json.gz").vocab
    for copy in (pickle.loads(pickle.dumps(vocab)), read_vocab(dump_vocab(vocab, label="t5")), vocab.renamed("x")):
        assert copy.scores == vocab.scores and copy.pipeline == vocab.pipeline
    assert read_vocab(dump_vocab(vocab, label="t5")).content_hash == vocab.content_hash
