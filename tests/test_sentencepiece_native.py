"""The native SentencePiece stages (the core's ``sentencepiece`` spanner, ``score-merge`` and
``rank-merge`` encoders and SentencePiece normalizers) against their Python references, on every
SentencePiece vocabulary in tests/data and on variants of them: the native backend runs no Python
stage in encode, and gives the Python engine's ids on any text, 1 MiB runs of one character
included (checked against the official tokenizers there, which are fast enough).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
from llamacpp_cases import unpacked
from test_sentencepiece import HF_VARIANTS, VARIANTS, _hf_variant, _variant, hf_oracle, oracle
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.spec import SentencePieceSplit

SPM = DATA / "spm"
# Every SentencePiece vocabulary the tests hold: .model files, SentencePiece-style
# tokenizer.json files, llama.cpp's SentencePiece GGUF files (Gemma 4's 262k vocabulary too),
# and variants made from them (unused and user-defined pieces, other normalizer flags, the
# other Metaspace schemes, ignore_merges, Gemma's Replace layout).
FILES = [*(p.name for p in sorted(SPM.glob("*.model"))), *(p.name for p in sorted(SPM.glob("*.tokenizer.json.gz"))),
         "ggml-vocab-llama-spm.gguf.xz", "ggml-vocab-phi-3.gguf.xz", "ggml-vocab-gemma-4.gguf.xz",
         *(f"model:{name}" for name in VARIANTS), *(f"json:{name}" for name in HF_VARIANTS if name != "first")]


@functools.lru_cache(maxsize=None)
def _unpack_dir() -> Path:
    return Path(tempfile.mkdtemp())


@functools.lru_cache(maxsize=None)
def vocab(name: str):
    if name.startswith("model:"):
        return load_vocab(_variant(VARIANTS[name.removeprefix("model:")]))
    if name.startswith("json:"):
        return load_vocab(_hf_variant(name.removeprefix("json:")))
    if name.endswith(".gguf.xz"):
        return load_vocab(unpacked(name, _unpack_dir()))
    return load_vocab(SPM / name)


@functools.lru_cache(maxsize=None)
def tokenizers(name: str):
    v = vocab(name)
    return TokenizerOptions(backend="python").build(v), TokenizerOptions(backend="native").build(v)


@pytest.mark.parametrize("name", FILES)
def test_native_encode_runs_no_python_stage(name):
    python, native = tokenizers(name)
    assert native.native and native.encoder_name in ("score-merge", "rank-merge") and not python.native
    assert native.vocab.pipeline.sentencepiece and isinstance(native.vocab.pipeline.spanner, SentencePieceSplit)


def _literals(name: str) -> list[str]:
    """A few of the vocabulary's special and added tokens and user-defined pieces."""
    v = vocab(name)
    texts = sorted(v.special_tokens)[:6] + sorted(v.added_tokens)[:6] + list(v.pipeline.spanner.user_defined)[:6]
    return texts or ["<s>"]


# Text rich in what the stages decide: spaces and ▁ (runs of them), other whitespace, words,
# characters no piece spells (byte fallback: rare CJK, emoji, private use, controls, a lone
# combining mark), and the vocabulary's own literals.
PARTS = ["", " ", "  ", "    ", "\t", "\n", "\n\n", "\r\n", "\u3000", "\u00a0", "▁", "▁▁", "a", "the", "▁the", "ing",
         "Hello", "world", "123", "é", "e\u0301", "日本語", "𠀋", "😀", "🦀", "👩\u200d💻", "\U000f0001", "\x00",
         "\x7f",
         "\ufffd", ".", "(", "<0x41>", "[", "]", ">", "</", "> </", ">▁</", "<a> </a>"]


def texts(name: str):
    parts = st.sampled_from(PARTS) | st.sampled_from(_literals(name))
    return st.one_of(st.lists(parts, max_size=30).map("".join), st.text(max_size=60),
                     st.text(alphabet=st.characters(codec="utf-8"), max_size=30))


@pytest.mark.parametrize("name", FILES)
def test_native_is_the_python_reference(name):
    python, native = tokenizers(name)

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=texts(name))
    def check(text):
        assert native.encode(text, allowed_special="all") == python.encode(text, allowed_special="all")
        assert native.encode_ordinary(text) == python.encode_ordinary(text)

    check()


MIB = 1 << 20
RUNS = {"letter": "a", "space": " ", "emoji": "😀", "ideograph": "𠀋"}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("name", ["mistral-v7.model", "model:unused", "model:remove-extra-whitespaces"])
def test_one_mib_of_one_character_model(name, run):
    """1 MiB of one character on the native engine, as sentencepiece encodes it (a piece of 1 MiB:
    the heap merge; with unused pieces, split back; timing is the worst-case bench's)."""
    text = RUNS[run] * (MIB // len(RUNS[run].encode()))
    path = SPM / name if not name.startswith("model:") else Path(vocab(name).source)
    assert tokenizers(name)[1].encode_ordinary(text) == oracle(path).encode(text)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("name", ["mistral-v7-llama.tokenizer.json.gz", "json:ignore-merges"])
def test_one_mib_of_one_character_tokenizer_json(name, run):
    text = RUNS[run] * (MIB // len(RUNS[run].encode()))
    path = SPM / name if not name.startswith("json:") else _hf_variant(name.removeprefix("json:"))
    assert tokenizers(name)[1].encode(text, allowed_special="all") == hf_oracle(path).encode(
        text, add_special_tokens=False).ids


@pytest.mark.parametrize("run", ["letter", "space"])
def test_a_quarter_mib_of_one_character_gguf(run):
    """Gemma 4's 262k vocabulary (rank-merge) and llama.cpp's Llama SentencePiece file
    (score-merge): the native engine gives the Python engine's ids on a quarter MiB (the
    Python engine's pass is the test's time; 1 MiB runs natively against the oracles above)."""
    text = RUNS[run] * (MIB // 4)
    for name in ("ggml-vocab-gemma-4.gguf.xz", "ggml-vocab-llama-spm.gguf.xz"):
        python, native = tokenizers(name)
        assert native.encode_ordinary(text) == python.encode_ordinary(text)


def test_metaspace_first_after_a_special_token_is_native():
    """prepend_scheme "first": no ▁ before the text after an added token, natively too."""
    name = "mistral-v7-llama.tokenizer.json.gz"
    python, native = tokenizers(name)
    text = "[INST] Hello [/INST] there"
    assert native.native and native.encode(text, allowed_special="all") == hf_oracle(SPM / name).encode(
        text, add_special_tokens=False).ids == python.encode(text, allowed_special="all")



@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from(PARTS), max_size=30).map("".join))
def test_cutting_at_words_but_inside_joined_tokens_gives_the_ids_of_whole_stretches(text):
    """Gemma 4's one token with a ▁ after another character (``>▁</``) is a joined token: the
    spanner cuts at words but inside it, and the ids are those of merging each stretch whole."""
    from wordsplit.normalizers import normalizer_for
    from wordsplit.spanners.sentencepiece import SentencePieceSpanner

    v = vocab("ggml-vocab-gemma-4.gguf.xz")
    model = v.pipeline.spanner
    assert model.words and model.joined == (">▁</",)
    whole = SentencePieceSpanner(model.replace(words=False, joined=()))
    encoder = _gemma_encoder(v)
    normalized = normalizer_for(v.normalizer)(text)

    def ids(spanner):
        return [i for piece in spanner.split(normalized) if piece for i in encoder.encode_piece(piece.encode())]

    assert ids(SentencePieceSpanner(v.pipeline.spanner)) == ids(whole)
    python, native = tokenizers("ggml-vocab-gemma-4.gguf.xz")
    assert native.encode_ordinary(text) == python.encode_ordinary(text) == ids(whole)


@functools.lru_cache(maxsize=None)
def _gemma_encoder(v):
    from wordsplit.encoders import get_encoder
    from wordsplit.tables import MergeTables

    return get_encoder("rank-merge")(MergeTables.of(v))
