"""The typed pipeline description (wordsplit.spec): its one JSON form, shared with the Rust core.

``crates/wordsplit/tests/data/pipeline-specs.json`` holds descriptions the Rust core's tests
read too: each valid one reads and writes back to exactly its text in both languages, each
invalid one is refused by both.
"""

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wordsplit import Vocab, core, load_vocab
from wordsplit.engines.native import spec_text
from wordsplit.sentencepiece import sentencepiece_pipeline
from wordsplit.errors import VocabFormatError
from wordsplit.spec import (
    ByteLevel, BytePairEncoding, Lowercase, Metaspace, Nfc, Nfkc, NoNormalizer, PipelineSpec, PluginNormalizer,
    Prepend, PrefixSpace, PrefixSpaceStep, RegexSplit, Replace, SentencePieceBpe, SentencePieceDecoder,
    SentencePieceNormalizer, SentencePieceSplit, Sequence, Split, SplitProgram, Strip, StripAccents,
)

EXAMPLES = json.loads((Path(__file__).parent.parent / "crates/wordsplit/tests/data/pipeline-specs.json").read_text())


@pytest.mark.parametrize("text", EXAMPLES["valid"])
def test_a_valid_description_writes_back_to_the_same_text(text):
    assert PipelineSpec.loads(text).dumps() == text


@pytest.mark.parametrize("case", EXAMPLES["invalid"], ids=lambda case: case["why"])
def test_an_invalid_description_is_refused(case):
    with pytest.raises(VocabFormatError):
        PipelineSpec.loads(case["text"])


def test_stages_of_the_wrong_family_are_refused():
    with pytest.raises(VocabFormatError, match="spanner must be a spanner stage"):
        PipelineSpec(spanner=Nfc())
    with pytest.raises(VocabFormatError, match="all three"):
        PipelineSpec(spanner=SentencePieceSplit(), model=SentencePieceBpe())
    with pytest.raises(ValueError):
        Sequence((Metaspace(),))


def test_a_vocab_holds_its_pipeline_and_pickles_it():
    vocab = load_vocab("qwen3")
    assert vocab.pipeline.normalizer == Nfc() and vocab.pipeline.model == BytePairEncoding()
    assert vocab.pattern == vocab.pipeline.spanner.pattern and vocab.normalizer == Nfc()
    assert pickle.loads(pickle.dumps(vocab)).pipeline == vocab.pipeline
    spm = load_vocab("mistral-v1")
    assert spm.pattern is None and spm.pipeline.sentencepiece
    assert isinstance(spm.pipeline.decoder, SentencePieceDecoder)
    assert pickle.loads(pickle.dumps(spm)).pipeline == spm.pipeline


def test_a_vocab_takes_pattern_or_pipeline_not_both():
    ranks = {bytes([b]): b for b in range(256)}
    spec = PipelineSpec(spanner=RegexSplit("."), normalizer=Nfc())
    assert Vocab(name="t", ranks=ranks, pipeline=spec).pipeline == spec
    assert Vocab(name="t", ranks=ranks, pattern=".", normalizer="nfc").pipeline == spec
    with pytest.raises(VocabFormatError, match="not both"):
        Vocab(name="t", ranks=ranks, pattern=".", pipeline=spec)
    with pytest.raises(VocabFormatError, match="pattern must be the split regex"):
        Vocab(name="t", ranks=ranks, pattern=RegexSplit("."))


_texts = st.text(max_size=8)
_steps = st.one_of(
    st.sampled_from([Nfc(), Nfkc(), Lowercase(), StripAccents(), PrefixSpace()]),
    st.builds(Strip, st.booleans(), st.booleans()),
    st.builds(Replace, _texts, _texts, st.booleans()),
    st.builds(Prepend, _texts),
)
_normalizers = st.one_of(
    st.just(NoNormalizer()),
    _steps,
    st.builds(Sequence, st.lists(_steps, max_size=4).map(tuple)),
    st.builds(SentencePieceNormalizer, st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    st.builds(Metaspace, st.characters(), st.sampled_from(["first", "always", "never"]),
              st.builds(Sequence, st.lists(_steps, max_size=2).map(tuple))),
    st.builds(PluginNormalizer, st.text(min_size=1, max_size=8)),
)
_spanners = st.one_of(
    st.builds(RegexSplit, _texts),
    st.builds(SplitProgram, st.lists(st.one_of(
        st.just(PrefixSpaceStep()),
        st.builds(Split, _texts, st.sampled_from(["Isolated", "Removed", "Contiguous"]), st.booleans()),
    ), max_size=3).map(tuple)),
)


@given(_normalizers, _spanners)
def test_every_byte_level_pipeline_writes_and_reads_back(normalizer, spanner):
    spec = PipelineSpec(spanner=spanner, normalizer=normalizer, model=BytePairEncoding(), decoder=ByteLevel())
    assert PipelineSpec.loads(spec.dumps()) == spec
    assert PipelineSpec.from_json(json.loads(spec.dumps())).dumps() == spec.dumps()


_pieces = st.lists(st.text(min_size=1, max_size=6), max_size=3).map(tuple)
_sentencepiece_pipelines = st.builds(
    lambda semantics, normalizer, user_defined, unused, words, joined, surface, strip: sentencepiece_pipeline(
        semantics=semantics, normalizer=normalizer, user_defined=user_defined, unused=unused, words=words,
        joined=joined, unk_surface=surface, strip_leading_space=strip),
    st.sampled_from(["sentencepiece", "hf", "llama.cpp", "llama.cpp-bpe"]),
    st.one_of(st.builds(SentencePieceNormalizer, st.booleans(), st.booleans(), st.booleans(), st.booleans()),
              st.builds(Metaspace, st.characters(exclude_categories=("Cs",)),
                        st.sampled_from(["first", "always", "never"]))),
    _pieces, _pieces, st.booleans(), _pieces, st.text(max_size=4), st.sampled_from(["first", "all", "none"]),
)
_byte_level_pipelines = st.builds(lambda normalizer, spanner: PipelineSpec(spanner=spanner, normalizer=normalizer),
                                  _normalizers, _spanners)


@pytest.mark.skipif(not core.available(), reason="compares the Rust core's reading with Python's")
@given(st.one_of(_byte_level_pipelines, _sentencepiece_pipelines))
def test_the_core_reads_and_writes_every_pipeline_as_python_does(spec):
    """The Rust core (wordsplit::spec) reads any pipeline Python writes and writes back the
    same canonical text, character for character (strings with quotes, controls, characters
    beyond the BMP...)."""
    text = spec.dumps()
    assert spec_text(text) == text


def test_the_core_refuses_what_python_refuses():
    if not core.available():
        pytest.skip("compares the Rust core's reading with Python's")
    for case in EXAMPLES["invalid"]:
        with pytest.raises(VocabFormatError):
            spec_text(case["text"])
