"""The core's twins of llama.cpp's WordPiece and Unigram stages against the Python ones they
replace (the specification): the ``LlamaCppBert`` normalizer on every code point and on
hypothesis' texts with every option, the ``LlamaCppUnigram`` normalizer with nomic-bert-moe's
character map and with none, every option, and the ``llamacpp-wordpiece`` spanner; both GGUF
files then run with every stage native. The Rust tables are generated from the Python ones
(``tools/gen_llamacpp_unicode.py --from-python-tables --check``).

tests/test_llamacpp_word_models.py holds both backends to step-by-step references of
llama.cpp's loops, tests/test_llamacpp_goldens.py and tests/test_llamacpp_parity.py to llama.cpp
itself.
"""

from __future__ import annotations

import base64
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llamacpp_cases import unpacked
from test_llamacpp_word_models import ALPHABET, BERT, NOMIC, TEXTS, _charsmap
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.core import extension
from wordsplit.engines.native import native_normalizer
from wordsplit.normalizers.llamacpp import LlamaCppBertNormalizer, LlamaCppUnigramNormalizer
from wordsplit.spanners.llamacpp import LlamaCppWordPieceSpanner
from wordsplit.spec import LlamaCppBertNormalizer as BertStage
from wordsplit.spec import LlamaCppUnigramNormalizer as UnigramStage
from wordsplit.spec import LlamaCppWordPieceSplit

native = extension()
pytestmark = pytest.mark.skipif(native is None, reason="the native core is not built")

ROOT = Path(__file__).resolve().parent.parent
BERT_STAGES = [BertStage(lowercase=bool(bits & 1), strip_accents=bool(bits & 2)) for bits in range(4)]
# Unigram texts: spaces of every kind among the map's keys and outputs (U+00A8 and U+FDFA make
# spaces, U+2474 a parenthesized digit, full-width forms), typed ▁, and the shared alphabet.
UNIGRAM_TEXTS = st.text(st.sampled_from(list(" a\u2581\u00a8\ufdfa\u3000\t\u2474xＡｱﾞ\u0301")) | ALPHABET,
                        max_size=40)


def _normalize(stage, texts: list[str]) -> list[str]:
    return native.native_normalize(_stage_json(stage), texts)


@functools.lru_cache(maxsize=None)
def _stage_json(stage) -> str:
    """A stage's JSON, made once per stage: the hypothesis tests' examples share it (with
    nomic-bert-moe's map it is 317 KB of base64, and a fifth of an example's time)."""
    return json.dumps(stage.to_json())


@functools.lru_cache(maxsize=None)
def _unigram(add_space_prefix: bool, remove_extra_whitespaces: bool, charsmap: str):
    """The stage and its Python normalizer, made once per options (each example of a
    hypothesis test would otherwise decode the map's base64 again), after checking that the
    core runs the stage."""
    stage = UnigramStage(add_space_prefix, remove_extra_whitespaces, charsmap)
    assert native_normalizer(stage)
    return stage, LlamaCppUnigramNormalizer(stage)


@pytest.fixture(scope="module")
def unpack_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("llamacpp-native")


@pytest.fixture(scope="module")
def nomic_charsmap(unpack_dir) -> bytes:
    return _charsmap(unpacked(NOMIC, unpack_dir))


def _bert_id(stage: BertStage) -> str:
    return f"lower{int(stage.lowercase)}-strip{int(stage.strip_accents)}"


@pytest.mark.parametrize("stage", BERT_STAGES, ids=_bert_id)
def test_bert_normalizer_every_code_point_as_python(stage):
    chars = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    python = LlamaCppBertNormalizer(stage)
    whole = "".join(chars)
    assert native_normalizer(stage)
    assert _normalize(stage, [whole]) == [python(whole)]
    alone = [" ".join(chars[i:i + 4096]) for i in range(0, len(chars), 4096)]
    assert _normalize(stage, alone) == [python(text) for text in alone]


@pytest.mark.parametrize("stage", BERT_STAGES, ids=_bert_id)
@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_bert_normalizer_as_python(stage, text):
    assert _normalize(stage, [text]) == [LlamaCppBertNormalizer(stage)(text)]


@pytest.mark.parametrize("add_space_prefix", [False, True])
@pytest.mark.parametrize("remove_extra_whitespaces", [False, True])
@pytest.mark.parametrize("with_map", [True, False], ids=["nomic-map", "no-map"])
@settings(max_examples=200, deadline=None)
@given(text=UNIGRAM_TEXTS)
def test_unigram_normalizer_as_python(add_space_prefix, remove_extra_whitespaces, with_map, text, nomic_charsmap):
    charsmap = base64.b64encode(nomic_charsmap).decode() if with_map else ""
    stage, python = _unigram(add_space_prefix, remove_extra_whitespaces, charsmap)
    assert _normalize(stage, [text]) == [python(text)]


def test_unigram_normalizer_on_the_maps_keys(nomic_charsmap):
    """Every key of nomic-bert-moe's map, alone, after a space and inside a word, every option."""
    from wordsplit.formats.charsmap import read_charsmap

    keys = sorted(read_charsmap(nomic_charsmap).rules)
    texts = [text for key in keys for text in (key, f" {key}", f"a{key}b {key} ")]
    charsmap = base64.b64encode(nomic_charsmap).decode()
    # The Python stage is its map, then its spaces (LlamaCppUnigramNormalizer.__call__), and
    # only the spaces depend on the options: each text is mapped once (the map is most of the
    # test's time), and each option's expected output is the map-less stage of the same options
    # on the mapped text. Every text is still compared under every option.
    map_only = LlamaCppUnigramNormalizer(UnigramStage(False, False, charsmap))
    mapped = [map_only._mapped(text) for text in texts]
    for bits in range(4):
        stage = UnigramStage(bool(bits & 1), bool(bits & 2), charsmap)
        spaces = LlamaCppUnigramNormalizer(UnigramStage(stage.add_space_prefix, stage.remove_extra_whitespaces, ""))
        assert _normalize(stage, texts) == [spaces(text) for text in mapped]


@settings(max_examples=500, deadline=None)
@given(text=TEXTS)
def test_wordpiece_spanner_as_python(text):
    python = LlamaCppWordPieceSpanner(LlamaCppWordPieceSplit())
    assert native.native_spanner_pieces("llamacpp-wordpiece", text) == python.split(text)


def test_wordpiece_spanner_every_code_point_as_python():
    """Every code point between two words and as a word's neighbour: its kind is Python's."""
    python = LlamaCppWordPieceSpanner(LlamaCppWordPieceSplit())
    for start in range(0, 0x110000, 0x8000):
        text = "".join(f"a{chr(cp)}b {chr(cp)}" for cp in range(start, start + 0x8000) if not 0xD800 <= cp <= 0xDFFF)
        assert native.native_spanner_pieces("llamacpp-wordpiece", text) == python.split(text)


@pytest.mark.parametrize("name", [BERT, NOMIC])
def test_both_files_run_every_stage_natively(name, unpack_dir):
    vocab = load_vocab(unpacked(name, unpack_dir))
    assert native_normalizer(vocab.normalizer)
    native_tok = TokenizerOptions(backend="native").build(vocab)
    assert native_tok._engine.native is True
    assert TokenizerOptions().build(vocab)._engine.native is True


def test_rust_tables_are_the_python_tables():
    """crates/wordsplit/src/normalizers/llamacpp_tables.rs is rendered from the Python module."""
    script = ROOT / "tools" / "gen_llamacpp_unicode.py"
    result = subprocess.run([sys.executable, str(script), "--from-python-tables", "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
