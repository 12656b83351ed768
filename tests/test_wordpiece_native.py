"""The native BERT components against the Python references they replace: the core's
BertNormalizer against ``normalizers/bert.py`` (text and HF's alignment, every code point and
hypothesis' texts, every option), the one-scan BertPreTokenizer against the split program run
step by step, and the native ``wordpiece`` and ``word-level`` encoders against the Python ones,
through whole tokenizers of every real file of tests/data/wordpiece. tests/test_wordpiece.py holds
both backends to HF itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import TokenizerOptions, load_vocab
from wordsplit.core import extension
from wordsplit.errors import EncodeInputError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.normalizers.bert import bert_alignment, bert_normalizer
from wordsplit.spec import BertNormalizer, WordLevel, WordPiece

native = extension()
pytestmark = pytest.mark.skipif(native is None, reason="the native core is not built")

DATA = Path(__file__).parent / "data" / "wordpiece"
# Every real file of a word model (WordPiece, WordLevel) in tests/data/wordpiece.
WORD_FILES = sorted(path for path in DATA.glob("*/tokenizer.json*")
                    if isinstance(load_vocab(path).pipeline.model, (WordPiece, WordLevel)))

OPTIONS = [BertNormalizer(clean_text=bool(bits & 1), handle_chinese_chars=bool(bits & 2),
                          strip_accents=bool(bits & 4), lowercase=bool(bits & 8)) for bits in range(16)]

# Characters each of BERT's stages treats apart: cased, accented and combining, CJK and its
# compatibility ideographs, Hangul, control, format and private use, white space of every kind,
# punctuation of the crate's old tables, and the lowercase mappings of Unicode 15-17.
ALPHABET = st.sampled_from(list(
    "aAzZ éÉßİıǅΣς中文字𠀀\U0002f800\uf900한あ.,!?'\"-_()[]#@$%^&*~`|\\/ 0123456789٣\t\n\r\x0b\x0c\x1c\x85\u3000\xa0"
    "\u2028\u200b\u200d\u00ad\ufeff\x00\x01\x7f\ufffd\ue000\U000e0041\u0301\u0308\u0323\u0f73\U0001d165\U0001f980"
    "ﬁⅫ①Ｆ\u166d、。…\u1c89\ua7dc\U00010d50"
)) | st.characters(exclude_categories=("Cs",))


def _normalize(stage: BertNormalizer, texts: list[str]) -> list[str]:
    return native.native_normalize(json.dumps(stage.to_json()), texts)


@pytest.mark.parametrize("stage", OPTIONS, ids=lambda s: "".join("01"[v] for v in s.to_json().values()
                                                                 if isinstance(v, bool)))
def test_every_code_point_normalizes_as_in_python(stage):
    # Every scalar value, in order (runs of marks reorder under NFD), and each alone.
    chars = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    whole = "".join(chars)
    python = bert_normalizer(stage)
    assert _normalize(stage, [whole]) == [python(whole)]
    alone = [" ".join(chars[i:i + 4096]) for i in range(0, len(chars), 4096)]
    assert _normalize(stage, alone) == [python(text) for text in alone]


@pytest.mark.parametrize("stage", OPTIONS[::5] + [OPTIONS[-1]])
@settings(max_examples=300, deadline=None)
@given(text=st.lists(ALPHABET, max_size=40).map("".join))
def test_hypothesis_texts_normalize_and_align_as_in_python(stage, text):
    assert _normalize(stage, [text]) == [bert_normalizer(stage)(text)]
    normalized, alignment = bert_alignment(stage, text)
    parts = native.native_alignment(json.dumps(stage.to_json()), text)
    if parts is None:
        assert normalized == text and alignment == [(i, i + 1, True) for i in range(len(text))]
    else:
        assert parts == (normalized, alignment, 0)


def test_the_normalizer_is_native_and_the_python_engine_passes_none():
    from wordsplit.engines.native import native_normalizer

    assert all(native_normalizer(stage) for stage in OPTIONS)


# -- the pre-tokenizer ---------------------------------------------------------------------------


def _bert_steps():
    from wordsplit.engines.native import native_program_steps

    program = load_vocab(DATA / "all-MiniLM-L6-v2" / "tokenizer.json.gz").pipeline.spanner
    steps = native_program_steps(program)
    assert steps is not None
    return program, steps


def test_berts_program_runs_as_one_scan():
    _, steps = _bert_steps()
    assert native.hf_program_is_bert(steps)
    # The same classes with another behavior run step by step.
    assert not native.hf_program_is_bert([steps[0], (steps[1][0], "Contiguous", False)])
    assert not native.hf_program_is_bert(steps[::-1])


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.lists(ALPHABET, max_size=40).map("".join), min_size=1, max_size=8))
def test_the_scan_gives_the_programs_pieces(texts):
    from wordsplit.spanners import SPANNERS, spanner_argument

    program, steps = _bert_steps()
    python = SPANNERS.get("hf-split")(spanner_argument(program))
    assert native.hf_program_spans(steps, texts) == [[tuple(span) + (None,) * (3 - len(span))
                                                      for span in python.spans(text)] for text in texts]


# -- the encoders, through whole tokenizers ----------------------------------------------------------


def _both(path: Path):
    vocab = load_vocab(path)
    return (TokenizerOptions(backend="native").build(vocab), TokenizerOptions(backend="python").build(vocab))


@pytest.mark.parametrize("path", WORD_FILES, ids=lambda p: p.parent.name)
def test_every_word_model_file_runs_natively_as_in_python(path):
    fast, slow = _both(path)
    assert fast.native, "a stage of the native engine runs in Python"
    texts = ["Hello, WORLD! naïve café 中文 x" * 3, "a" * 101, "ATGGCGTAA ATG", "\u00ad\ufffd\x00", "",
             "unaffable [UNK] [CLS] 😀 ﬁ", "é" * 60 + " " + "b" * 100]
    for text in texts:
        assert fast.encode(text, allowed_special="all") == slow.encode(text, allowed_special="all"), text


@pytest.mark.parametrize("file", ["all-MiniLM-L6-v2", "bert-base-multilingual-cased", "bert-base-chinese"])
@settings(max_examples=150, deadline=None)
@given(text=st.lists(ALPHABET, max_size=60).map("".join))
def test_hypothesis_texts_encode_natively_as_in_python(file, text):
    fast, slow = _cached(file)
    assert fast.encode(text, allowed_special="all") == slow.encode(text, allowed_special="all")


# Words of mixed scripts: ASCII runs long and short (the one pass cuts ASCII text sixteen bytes at
# a time, or the part of sixteen before a character beyond ASCII), accented letters alone and
# in runs (NFD's waiting characters), words of other scripts with one ASCII character between
# them, ideographs, marks and control characters.
MIXED_WORDS = st.sampled_from([
    "a", "Declara", "universal", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", " ", "  ", ", ", ".", "\n", "\t", "x1",
    "ç", "ção", "ÀÉÎ", "ệ", "ườ", "ñ", "\u0301", "e\u0301\u0323", "\u0f73", "\u0344", "Все", "люди",
    "ه", "عربي", "中文", "字", "한국", "\x01", "\u00ad", "\u3000", "\ufb01", "Ｆ", "ǅ", "İ", "\U0001d165",
])


@pytest.mark.parametrize("file", ["all-MiniLM-L6-v2", "bert-base-multilingual-cased"])
@settings(max_examples=200, deadline=None)
@given(text=st.lists(MIXED_WORDS, max_size=80).map("".join))
def test_mixed_script_texts_encode_natively_as_in_python(file, text):
    fast, slow = _cached(file)
    assert fast.encode(text, allowed_special="all") == slow.encode(text, allowed_special="all")


_BUILT: dict = {}


def _cached(file: str):
    if file not in _BUILT:
        _BUILT[file] = _both(DATA / file / "tokenizer.json.gz")
    return _BUILT[file]


def _file(model: dict) -> bytes:
    return json.dumps({"model": model, "normalizer": None, "pre_tokenizer": {"type": "BertPreTokenizer"},
                       "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}}).encode()


@pytest.mark.parametrize("model", [{"type": "WordPiece", "vocab": {"a": 0, "##b": 1}},
                                   {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "<unk>"}])
def test_a_missing_unknown_token_raises_the_python_error(model):
    vocab = read_hf_tokenizer_json(_file(model), source="t.json")
    errors = []
    for backend in ("native", "python"):
        tok = TokenizerOptions(backend=backend).build(vocab)
        assert tok.encode("a a") == [0, 0]
        with pytest.raises(EncodeInputError) as caught:
            tok.encode("a b" + "é" * 50)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("text", ["a" * (1 << 20), "ab " * (1 << 18), "é" * (1 << 19), "中" * (1 << 18)])
def test_a_megabyte_word_or_run_stays_linear_natively(text):
    fast, _ = _cached("all-MiniLM-L6-v2")
    fast.encode("warm up")
    start = time.perf_counter()
    ids = fast.encode(text)
    assert time.perf_counter() - start < 1.0, text[:5]
    assert ids
