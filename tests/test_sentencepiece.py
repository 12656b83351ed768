"""SentencePiece BPE ``tokenizer.model`` files: exact against ``sentencepiece`` (the test-time
oracle) on both backends.

The models are mistral-common's (tests/data/spm/SOURCES.md). Goldens (tools/gen_spm_goldens.py)
hold ``sentencepiece``'s ids and decoded text for a text set rich in what its rules decide;
the live tests compare with ``sentencepiece`` itself on hypothesis text, and on variants of a
real model made with its protobuf (user-defined and unused pieces, other normalizer flags).
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest
import sentencepiece
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentencepiece import sentencepiece_model_pb2

from conftest import BACKENDS, DATA, GOLDEN
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.sentencepiece import read_model_proto

MODELS = sorted((DATA / "spm").glob("*.model"))
V7 = DATA / "spm" / "mistral-v7.model"


def golden(model: Path) -> dict:
    return json.loads(gzip.decompress((GOLDEN / f"sentencepiece-{model.stem}.json.gz").read_bytes()))


def tokenizer(path, backend: str):
    return TokenizerOptions(backend=backend).build(load_vocab(path))


def oracle(path) -> sentencepiece.SentencePieceProcessor:
    return sentencepiece.SentencePieceProcessor(model_file=str(path))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_golden_ids_and_decode(model, backend):
    data = golden(model)
    assert data["oracle"] == f"sentencepiece {sentencepiece.__version__}" and len(data["cases"]) > 1000
    tok = tokenizer(model, backend)
    assert (tok.n_vocab, tok.vocab.bos_token_id, tok.vocab.eos_token_id) == (data["n_vocab"], data["bos_id"],
                                                                            data["eos_id"])
    wrong = [(c["text"], c["ids"], got) for c in data["cases"] if (got := tok.encode_ordinary(c["text"])) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"
    wrong = [(c["ids"], c["decoded"], got) for c in data["cases"] + data["decode_cases"]
             if (got := tok.decode(c["ids"])) != c["decoded"]]
    assert not wrong, f"{len(wrong)} decode mismatches, first: {wrong[0]!r}"


# Text rich in what SentencePiece's rules decide: spaces, ▁, whitespace, byte fallback, pieces
# that look like special tokens, Mistral's user-defined [REF] pieces.
ALPHABET = st.sampled_from([
    " ", " ", "  ", "\t", "\n", "\r\n", "▁", "a", "b", "e", "the", "ing", "Hello", "1", "23", "é", "e\u0301",
    "日本", "中", "😀", "🦀", "\u200d", "\x00", "\U000e0041", "\ufffd", ".", ",",
    "<s>", "</s>", "<unk>", "[INST]", "[/INST]", "[REF]", "[/REF]", "[REFERENCE_DOC_1]", "<0x41>",
])
TEXTS = st.one_of(st.lists(ALPHABET, max_size=24).map("".join), st.text(max_size=40))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_live_against_sentencepiece(backend, text):
    tok, sp = _v7(backend), _v7_oracle()
    ids = sp.encode(text)
    assert tok.encode_ordinary(text) == ids
    assert tok.count(text, disallowed_special=()) == len(ids)
    assert tok.decode(ids) == sp.decode(ids)


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.integers(0, 32767), max_size=12) | st.lists(st.integers(0, 1100), max_size=12))
def test_decode_of_any_ids_is_sentencepiece_decode(ids):
    tok, sp = _v7("python"), _v7_oracle()
    assert tok.decode(ids) == sp.decode(ids)
    stream = tok.decode_stream()
    streamed = "".join(piece or "" for piece in (stream.step(i) for i in ids)) + (stream.finish() or "")
    if "\ufffd" not in sp.decode(ids):  # (an invalid byte is one U+FFFD per byte in sentencepiece, see docs)
        assert streamed == sp.decode(ids)


_CACHE: dict = {}


def _v7(backend: str):
    if backend not in _CACHE:
        _CACHE[backend] = tokenizer(V7, backend)
    return _CACHE[backend]


def _v7_oracle():
    if "oracle" not in _CACHE:
        _CACHE["oracle"] = oracle(V7)
    return _CACHE["oracle"]


def test_loader_reads_the_proto_fields():
    model = read_model_proto(V7.read_bytes(), "v7")
    assert (model.model_type, model.byte_fallback, model.unk_id, model.bos_id, model.eos_id, model.pad_id) == \
        ("BPE", True, 0, 1, 2, -1)
    assert (model.normalizer_name, model.precompiled_charsmap, model.add_dummy_prefix,
            model.remove_extra_whitespaces, model.escape_whitespaces) == ("identity", b"", True, False, True)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(V7.read_bytes())
    assert [(p.text, p.score, p.type) for p in model.pieces] == [(p.piece, p.score, p.type) for p in proto.pieces]


def test_control_pieces_are_special_tokens_and_text_by_default():
    tok = _v7("python")
    assert tok.special_tokens["[INST]"] == 3 and tok.special_tokens["<unk>"] == 0
    # user-defined: always matched
    assert "[REF]" in tok.vocab.pipeline.spanner.user_defined and "[REF]" not in tok.special_tokens
    with pytest.raises(ValueError, match=r"\[INST\]"):
        tok.encode("[INST] hi")
    assert tok.encode("[INST] hi", disallowed_special=()) == _v7_oracle().encode("[INST] hi")
    # Allowed, a special token is a token, and the text after it is encoded as a text of its own.
    assert tok.encode("[INST] hi", allowed_special="all") == [3] + _v7_oracle().encode(" hi")


def _variant(edit) -> Path:
    """A copy of the v7 model changed by ``edit(proto)``, in a temporary file."""
    import tempfile

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(V7.read_bytes())
    edit(proto)
    path = Path(tempfile.mkdtemp()) / "variant.model"
    path.write_bytes(proto.SerializeToString())
    return path


def _unused(proto):
    for i in range(1100, 32768, 7):  # every 7th normal piece: merges may make them, then split them
        if proto.pieces[i].type == 1:
            proto.pieces[i].type = 5


def _user_defined(proto):
    for i in (1500, 2000, 2500, 3000):  # "▁the"-like pieces become user-defined: matched in text
        proto.pieces[i].type = 4


def _flags(dummy: bool, extra: bool, escape: bool = True):
    def edit(proto):
        proto.normalizer_spec.add_dummy_prefix = dummy
        proto.normalizer_spec.remove_extra_whitespaces = extra
        proto.normalizer_spec.escape_whitespaces = escape
    return edit


VARIANTS = {"unused": _unused, "user-defined": _user_defined, "no-dummy-prefix": _flags(False, False),
            "remove-extra-whitespaces": _flags(True, True), "both-off": _flags(False, True)}


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_variants_against_sentencepiece(variant, text):
    if variant not in _CACHE:
        path = _variant(VARIANTS[variant])
        _CACHE[variant] = (tokenizer(path, "python"), oracle(path))
    tok, sp = _CACHE[variant]
    ids = sp.encode(text)
    assert tok.encode_ordinary(text) == ids
    assert tok.decode(ids) == sp.decode(ids)


def test_other_model_types_are_refused_by_name():
    for model_type, name in ((3, "Word"), (4, "Char")):
        path = _variant(lambda proto: setattr(proto.trainer_spec, "model_type", model_type))
        with pytest.raises(UnsupportedTokenizerError, match=f"SentencePiece {name} model"):
            load_vocab(path)


def test_malformed_models_are_refused():
    charsmap = _variant(lambda proto: setattr(proto.normalizer_spec, "precompiled_charsmap", b"\x01\x02"))
    with pytest.raises(VocabFormatError, match="precompiled character map"):
        load_vocab(charsmap)
    # (sentencepiece refuses byte pieces without byte fallback too; tests/test_sentencepiece_bpe_defaults.py
    # reads models without byte fallback)
    no_fallback = _variant(lambda proto: setattr(proto.trainer_spec, "byte_fallback", False))
    with pytest.raises(VocabFormatError, match="byte_fallback"):
        load_vocab(no_fallback)
    with pytest.raises(VocabFormatError, match="truncated"):
        read_model_proto(V7.read_bytes()[:1000])
    with pytest.raises(UnsupportedTokenizerError, match="byte-level"):
        TokenizerOptions(encoder="heap-merge").build(load_vocab(V7))


@pytest.mark.parametrize("backend", BACKENDS)
def test_offsets_are_sentencepiece_spans(backend):
    """Each token's span is the one ``sentencepiece`` gives, but for a token of the dummy prefix
    alone (sentencepiece: empty; here the first character's, as HF aligns inserted text) and for
    byte pieces (sentencepiece: the whole character on the last one, empty on the others; here
    each its own byte, as for byte-level BPE)."""
    tok, sp = _v7(backend), _v7_oracle()
    for text in ("Hello world", "  a  b ", "x😀y é\t\n", "[REF]doc[/REF] z", "数字 123", "\U000e0041 x"):
        result = tok.encode_with_offsets(text, disallowed_special=())
        pieces = sp.encode(text, out_type="proto").pieces
        assert result.ids == [p.id for p in pieces]
        for got, piece in zip(result.byte_offsets, pieces):
            if sp.is_byte(piece.id):
                assert got[1] - got[0] == 1 and piece.begin <= got[0] < piece.end or piece.begin == piece.end
            elif piece.begin != piece.end:
                assert got == (piece.begin, piece.end), text


def test_decode_stream_drops_the_leading_space_once():
    tok = _v7("python")
    ids = tok.encode_ordinary(" Hello  world 😀")
    stream = tok.decode_stream()
    streamed = [stream.step(i) for i in ids]
    assert "".join(piece or "" for piece in streamed) == tok.decode(ids) == _v7_oracle().decode(ids)
    assert tok.decode(ids) == " Hello  world 😀"  # the dummy prefix's space dropped, the text's kept
    # The first token is the dummy prefix "▁" alone: no text; the text's own space comes next.
    assert tok.vocab.token_bytes[ids[0]] == "▁".encode() and streamed[0] is None and streamed[1] == " Hello"


def test_cli_encodes_and_decodes_a_model_file(capsys):
    from wordsplit.cli import main

    assert main(["encode", "--vocab", str(V7), "--special", "text", "Hello [INST] world"]) == 0
    ids = capsys.readouterr().out.split()
    assert [int(i) for i in ids] == _v7_oracle().encode("Hello [INST] world")
    assert main(["decode", "--vocab", str(V7), *ids]) == 0
    assert capsys.readouterr().out == "Hello [INST] world\n"
    assert main(["count", "--vocab", str(V7), "Hello world"]) == 0
    assert capsys.readouterr().out == "2\n"


@pytest.mark.parametrize("text", ["a", " ", "😀"], ids=["letter", "space", "emoji"])
def test_half_a_mib_of_one_character_takes_linear_time(text):
    """The merge is a heap with lazy invalidation: half a MiB of one character takes a second or
    two in Python, and four times the text takes about four times as long, not sixteen."""
    tok = TokenizerOptions(backend="python").build(load_vocab(V7))
    sp = _v7_oracle()
    times = []
    for size in (1 << 17, 1 << 19):
        data = text * (size // len(text.encode("utf-8")))
        start = time.process_time()
        ids = tok.encode_ordinary(data)
        times.append(time.process_time() - start)
        assert ids == sp.encode(data)
    assert times[1] < 60 and times[1] < 8 * max(times[0], 0.05)


# -- SentencePiece-style tokenizer.json: exact against HF tokenizers ------------------------------

HF_FILES = sorted((DATA / "spm").glob("*.tokenizer.json.gz"))


def hf_oracle(path):
    from tokenizers import Tokenizer

    data = Path(path).read_bytes()
    return Tokenizer.from_str((gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", HF_FILES, ids=lambda p: p.name.split(".")[0])
def test_tokenizer_json_golden_ids_and_decode(path, backend):
    import tokenizers

    data = json.loads(gzip.decompress((GOLDEN / f"tokenizers-{path.name.removesuffix('.tokenizer.json.gz')}.json.gz")
                                      .read_bytes()))
    assert data["oracle"] == f"tokenizers {tokenizers.__version__}" and len(data["cases"]) > 1000
    tok = tokenizer(path, backend)
    assert tok.n_vocab == data["n_vocab"] and tok.encoder_name == "rank-merge"
    wrong = [(c["text"], c["ids"], got) for c in data["cases"]
             if (got := tok.encode(c["text"], allowed_special="all")) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"
    wrong = [(c["ids"], c["decoded"], got) for c in data["cases"] + data["decode_cases"]
             if (got := tok.decode(c["ids"])) != c["decoded"]]
    assert not wrong, f"{len(wrong)} decode mismatches, first: {wrong[0]!r}"


def _metaspace(scheme: str, split: bool = False):
    def edit(spec):
        spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}
    return edit


def _ignore_merges(spec):
    spec["model"]["ignore_merges"] = True


def _gemma_split(spec):
    """transformers' GemmaConverter: Replace(" ", "▁"), then a Split on " " (which finds none)."""
    spec["normalizer"] = {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
    spec["pre_tokenizer"] = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                             "invert": False}


def _inert_metaspace_split(spec):
    """A Hub layout (BORA's): Replace(" ", "▁"), then Metaspace that neither prepends nor
    splits and a Split on " ": both find nothing to change."""
    _gemma_split(spec)
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False},
        spec["pre_tokenizer"]]}


def _split_ignore_merges(spec):
    _metaspace("first", split=True)(spec)
    _ignore_merges(spec)


HF_VARIANTS = {"first": None, "always": _metaspace("always"), "never": _metaspace("never"),
               "ignore-merges": _ignore_merges, "gemma-split": _gemma_split, "inert-metaspace": _inert_metaspace_split,
               "first-split": _metaspace("first", split=True), "always-split": _metaspace("always", split=True),
               "never-split": _metaspace("never", split=True), "split-ignore-merges": _split_ignore_merges}


def _hf_variant(name: str) -> Path:
    import tempfile

    path = DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz"
    if HF_VARIANTS[name] is None:
        return path
    spec = json.loads(gzip.decompress(path.read_bytes()))
    HF_VARIANTS[name](spec)
    out = Path(tempfile.mkdtemp()) / f"{name}.json"
    out.write_text(json.dumps(spec, ensure_ascii=False))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", HF_VARIANTS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_tokenizer_json_live_against_hf(variant, backend, text):
    key = ("hf", variant, backend)
    if key not in _CACHE:
        path = _hf_variant(variant)
        _CACHE[key] = (tokenizer(path, backend), hf_oracle(path))
    tok, hf = _CACHE[key]
    ids = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == ids
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_merge_listed_twice_has_its_last_rank_as_in_hf(backend, tmp_path):
    """HF's map of merges keeps a repeated pair's last rank: ``▁ t``, ``i n`` and ``e r`` listed
    again at the end merge last, which changes the ids of English prose."""
    spec = json.loads(gzip.decompress((DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz").read_bytes()))
    spec["model"]["merges"] += spec["model"]["merges"][:3]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec, ensure_ascii=False))
    text = gzip.decompress((DATA / "corpus" / "prose.txt.gz").read_bytes()).decode()[:5000]
    ids = hf_oracle(path).encode(text, add_special_tokens=False).ids
    assert ids != hf_oracle(DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz").encode(
        text, add_special_tokens=False).ids
    assert tokenizer(path, backend).encode(text) == ids


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scheme", ["first", "always", "never"])
def test_metaspace_split_cuts_before_every_space(scheme, backend):
    """With split: true every ▁ starts a part (``▁▁`` cannot merge), so runs of spaces give other
    ids than split: false; each equals HF's, and the prepend scheme acts after an added token."""
    text = "a  b\n    c [INST]  x  y"
    ids = {}
    for split in (False, True):
        path = _hf_variant(f"{scheme}-split" if split else scheme)
        tok, hf = tokenizer(path, backend), hf_oracle(path)
        ids[split] = tok.encode(text, allowed_special="all")
        assert ids[split] == hf.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids[split]) == hf.decode(ids[split], skip_special_tokens=False)
        offsets = tok.encode_with_offsets(text, allowed_special="all")
        assert offsets.ids == ids[split]
    assert ids[True] != ids[False]
    pieces = TokenizerOptions().build(load_vocab(_hf_variant(f"{scheme}-split"))).vocab.token_bytes
    assert "▁▁".encode() not in {pieces[i] for i in ids[True]}
    # compat.tokenizers gives one word id per stretch; HF's are one per part here: refused
    from wordsplit.compat.tokenizers import Tokenizer

    with pytest.raises(UnsupportedTokenizerError, match="split: true"):
        Tokenizer.from_file(str(_hf_variant(f"{scheme}-split")))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.one_of(st.integers(0, 32767), st.integers(771, 1026), st.sampled_from([771, 780, 781, 803])),
                    max_size=10))
def test_tokenizer_json_decode_of_any_ids_is_hf_decode(backend, ids):
    """Runs of byte tokens (``<0xNN>``: ids 771-1026 in Mistral v7, ASCII ones among them) decode
    as HF's ByteFallback decodes them: one U+FFFD per token of a run that is not UTF-8."""
    key = ("hf-decode", backend)
    if key not in _CACHE:
        path = DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz"
        _CACHE[key] = (tokenizer(path, backend), hf_oracle(path))
    tok, hf = _CACHE[key]
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
    assert tok.decode([1004, 781]) == hf.decode([1004, 781]) == "\ufffd\ufffd"  # <0xE9> <0x0A>


def test_tokenizer_json_offsets_and_stream():
    path = DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz"
    tok, hf = tokenizer(path, "python"), hf_oracle(path)
    for text in ("Hello world", " x  y", "[INST] hi [/INST] there", "é😀 z"):
        got = tok.encode_with_offsets(text, allowed_special="all")
        want = hf.encode(text, add_special_tokens=False)
        assert got.ids == want.ids
        stream = tok.decode_stream()
        assert "".join(stream.step(i) or "" for i in got.ids) == hf.decode(want.ids, skip_special_tokens=False)
    assert tok.encode_with_offsets("Hello world").char_offsets == [(0, 5), (5, 11)]


def test_tokenizer_json_constructs_not_supported_are_refused():
    spec = json.loads(gzip.decompress((DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz").read_bytes()))
    from wordsplit.formats.hf import read_hf_tokenizer_json

    split = dict(spec, pre_tokenizer={"type": "Metaspace", "replacement": "_", "prepend_scheme": "first",
                                      "split": True})
    with pytest.raises(UnsupportedTokenizerError, match="Metaspace .* is not supported"):
        read_hf_tokenizer_json(json.dumps(split).encode())
    unigram = dict(spec, model={"type": "Unigram", "vocab": [], "byte_fallback": True})
    with pytest.raises(VocabFormatError, match="vocab"):  # (an empty Unigram vocab)
        read_hf_tokenizer_json(json.dumps(unigram).encode())


def test_parsed_vocab_cache_and_pickle_keep_the_vocabulary(tmp_path):
    import pickle

    from wordsplit.vocabs import forget_loaded

    for path in (V7, DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz"):
        cold = load_vocab(path, cache_dir=tmp_path)
        forget_loaded()
        warm = load_vocab(path, cache_dir=tmp_path)
        assert warm.content_hash == cold.content_hash and warm.pipeline == cold.pipeline
        tok = TokenizerOptions().build(warm)
        again = pickle.loads(pickle.dumps(tok))
        text = "[INST] Hello  wörld 😀 [REF]x"
        assert again.encode(text, allowed_special="all") == TokenizerOptions().build(cold).encode(
            text, allowed_special="all")


# -- the decoders a SentencePiece-style tokenizer.json may have -----------------------------------

_REPLACE = {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}
_BYTE_FALLBACK, _FUSE = {"type": "ByteFallback"}, {"type": "Fuse"}
_STRIP = {"type": "Strip", "content": " ", "start": 1, "stop": 0}
ACCEPTED_DECODERS = {"strip": [_REPLACE, _BYTE_FALLBACK, _FUSE, _STRIP], "no-strip": [_REPLACE, _BYTE_FALLBACK, _FUSE]}
REFUSED_DECODERS = {
    "no-fuse": {"type": "Sequence", "decoders": [_REPLACE, _BYTE_FALLBACK, _STRIP]},
    "no-replace": {"type": "Sequence", "decoders": [_BYTE_FALLBACK, _FUSE]},
    "no-byte-fallback": {"type": "Sequence", "decoders": [_REPLACE, _FUSE, _STRIP]},
    "replace-after-byte-fallback": {"type": "Sequence", "decoders": [_BYTE_FALLBACK, _REPLACE, _FUSE, _STRIP]},
    "strip-before-fuse": {"type": "Sequence", "decoders": [_REPLACE, _BYTE_FALLBACK, _STRIP, _FUSE]},
    "strip-two": {"type": "Sequence", "decoders": [_REPLACE, _BYTE_FALLBACK, _FUSE, dict(_STRIP, start=2)]},
    "strip-end": {"type": "Sequence", "decoders": [_REPLACE, _BYTE_FALLBACK, _FUSE, dict(_STRIP, stop=1)]},
    "replace-other": {"type": "Sequence", "decoders": [dict(_REPLACE, content="_"), _BYTE_FALLBACK, _FUSE]},
    "metaspace": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    "none": None,
}
# "▁" "▁Hello" "▁" "▁" "▁world", the byte tokens of "▁" (E2 96 81) and "\n", "▁Hello", a lone byte E9, "▁"
DECODER_PROBE = [29473, 23325, 29473, 29473, 2294, 997, 921, 900, 781, 23325, 1004, 29473]


def _with_decoder(decoder) -> dict:
    spec = json.loads(gzip.decompress((DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz").read_bytes()))
    spec["decoder"] = decoder
    return spec


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("decoder", ACCEPTED_DECODERS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.one_of(st.integers(0, 32767), st.integers(771, 1026), st.sampled_from([997, 921, 900, 29473])),
                    max_size=10))
def test_accepted_decoders_decode_as_hf(decoder, backend, ids, tmp_path_factory):
    """Each decoder the loader accepts: HF's decode of any ids (byte tokens and ``▁`` among them)
    is wordsplit's."""
    key = ("decoder", decoder, backend)
    if key not in _CACHE:
        path = tmp_path_factory.mktemp("decoder") / f"{decoder}.json"
        path.write_text(json.dumps(_with_decoder({"type": "Sequence", "decoders": ACCEPTED_DECODERS[decoder]}),
                                   ensure_ascii=False))
        _CACHE[key] = (tokenizer(path, backend), hf_oracle(path))
    tok, hf = _CACHE[key]
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
    assert tok.decode(DECODER_PROBE) == hf.decode(DECODER_PROBE, skip_special_tokens=False)


@pytest.mark.parametrize("decoder", REFUSED_DECODERS)
def test_other_decoders_are_refused(decoder):
    """Another order, a missing step, other arguments or another decoder: HF decodes other text
    than either accepted chain does, so the loader refuses the file rather than decode it wrongly."""
    from tokenizers import Tokenizer

    from wordsplit.formats.hf import read_hf_tokenizer_json

    spec = _with_decoder(REFUSED_DECODERS[decoder])
    with pytest.raises(UnsupportedTokenizerError, match="decoder .* is not supported with byte_fallback"):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="variant.json")
    hf_text = Tokenizer.from_str(json.dumps(spec)).decode(DECODER_PROBE, skip_special_tokens=False)
    for chain in ACCEPTED_DECODERS.values():
        accepted = Tokenizer.from_str(json.dumps(_with_decoder({"type": "Sequence", "decoders": chain})))
        assert hf_text != accepted.decode(DECODER_PROBE, skip_special_tokens=False)
    if decoder != "metaspace":  # (compat.tokenizers decodes HF's Metaspace itself)
        from wordsplit.compat.tokenizers import Tokenizer as CompatTokenizer

        with pytest.raises(UnsupportedTokenizerError, match="decoder .* is not supported"):
            CompatTokenizer.from_str(json.dumps(spec))


# -- byte tokens: the strings HF's ByteFallback reads as a byte -----------------------------------

BYTE_TOKEN_PROBES = ["<0x41>", "<0x4a>", "<0xe9>", "<0x+A>", "<0x+>", "<0x 1>", "<0x1 >", "<0x-1>", "<0X41>",
                     "<0x١١>", "<0xé>", "<0x_1>", "<0x041>", "<0x4>", "<0x41", "0x41>"]


@settings(max_examples=300, deadline=None)
@given(token=st.sampled_from(BYTE_TOKEN_PROBES) | st.builds("<0x{}>".format, st.text(max_size=3))
       | st.builds("<0x{}>".format, st.text("0123456789abcdefABCDEF+- _", min_size=2, max_size=2)))
def test_byte_tokens_are_what_hf_byte_fallback_reads(token):
    """A token string is a byte token exactly when HF's ByteFallback decoder reads it as one."""
    from tokenizers import decoders

    from wordsplit.formats.hf_sentencepiece import hf_byte_value

    value = hf_byte_value(token)
    want = token if value is None else chr(value) if value < 0x80 else "\ufffd"
    assert decoders.ByteFallback().decode([token]) == want


def _with_vocab(edit) -> bytes:
    spec = json.loads(gzip.decompress((DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz").read_bytes()))
    edit(spec["model"]["vocab"])
    return json.dumps(spec).encode()


@pytest.mark.parametrize("extra", ["<0x+A>", "<0x0a>"])
def test_two_tokens_of_one_byte_are_refused(extra):
    """``<0x+A>`` and ``<0x0a>`` are the byte 0x0A for HF's ByteFallback, as ``<0x0A>`` is: which
    one decodes as it is ambiguous, so the vocabulary is refused rather than one dropped."""
    from tokenizers import Tokenizer

    from wordsplit.formats.hf import read_hf_tokenizer_json

    data = _with_vocab(lambda vocab: vocab.__setitem__(extra, 32768))
    assert Tokenizer.from_str(data.decode()).decode([32768, 781]) == "\n\n"  # (both decode as 0x0A in HF)
    with pytest.raises(UnsupportedTokenizerError, match=r"'<0x0A>' \(id 781\) and .* are both the byte 0x0A"):
        read_hf_tokenizer_json(data, source="variant.json")


def test_a_byte_token_spelled_otherwise_is_refused():
    """HF's byte fallback looks up ``<0x0A>`` only: with ``<0x0a>`` in its place a newline
    encodes as ``<unk>`` in HF, so the vocabulary is refused rather than encoded otherwise."""
    from tokenizers import Tokenizer

    from wordsplit.formats.hf import read_hf_tokenizer_json

    def lowercase(vocab):
        vocab["<0x0a>"] = vocab.pop("<0x0A>")

    data = _with_vocab(lowercase)
    hf = Tokenizer.from_str(data.decode())
    assert hf.token_to_id("<unk>") in hf.encode("a\nb", add_special_tokens=False).ids
    with pytest.raises(UnsupportedTokenizerError, match="'<0x0a>' is the byte 0x0A .* looks up only '<0x0A>'"):
        read_hf_tokenizer_json(data, source="variant.json")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("extra", ["<0x 1>", "<0x-1>", "<0x١١>", "<0X0A>"])
def test_tokens_hf_does_not_read_as_bytes_are_text(extra, backend, tmp_path):
    """Strings HF's ByteFallback does not read as a byte are text tokens: they decode as their
    text, as in HF, and the 256 byte tokens stay bytes."""
    data = _with_vocab(lambda vocab: vocab.__setitem__(extra, 32768))
    path = tmp_path / "variant.json"
    path.write_bytes(data)
    tok, hf = tokenizer(path, backend), hf_oracle(path)
    for ids in ([32768], [29473, 32768, 781], [1004, 32768]):
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
    assert tok.decode([32768]) == extra


@pytest.mark.parametrize("spelling", ["<0x0a>", "<0x+A>"])
def test_a_model_byte_piece_spelled_otherwise_is_refused(spelling, tmp_path):
    """``sentencepiece`` takes a byte piece spelled ``<0x0A>`` only, and refuses the model
    otherwise: so does the loader."""
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(V7.read_bytes())
    piece = next(p for p in proto.pieces if p.piece == "<0x0A>")
    piece.piece = spelling
    with pytest.raises(RuntimeError, match="is invalid"):
        sentencepiece.SentencePieceProcessor().LoadFromSerializedProto(proto.SerializeToString())
    path = tmp_path / "variant.model"
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(VocabFormatError, match="not a distinct <0xNN>"):
        load_vocab(path)
