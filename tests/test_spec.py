"""The typed pipeline description (wordsplit.spec): its one JSON form, shared with the Rust core.

``crates/wordsplit/tests/data/pipeline-specs.json`` holds descriptions the Rust core's tests
read too: each valid one reads and writes back to exactly its text in both languages, each
invalid one is refused by both.
"""

import base64
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
    DECODER_STYLES, BertNormalizer, BertProcessing, ByteLevel, ByteLevelProcessing, BytePairEncoding, CharacterBpe,
    LlamaCppBertNormalizer, LlamaCppUnigramNormalizer, LlamaCppWordPieceSplit, Lowercase, Metaspace, Nfc, Nfkc,
    NoDecoder, NoNormalizer, NoPostProcessor, PipelineSpec, PluginNormalizer, PostProcessorSequence,
    Precompiled, Prepend, PrefixSpace, PrefixSpaceStep, RegexSplit, Replace, RobertaProcessing, SentencePieceBpe,
    SentencePieceDecoder, SentencePieceNormalizer, SentencePieceSplit, Sequence, Split, SplitProgram, Strip,
    StripAccents, TemplateProcessing, TemplateSequence, TemplateSpecial, TemplateSpecialToken, Unigram, WordLevel,
    WordPiece, WordPieceDecoder,
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
_unigrams = st.builds(Unigram, _texts, st.booleans(), st.lists(st.text(min_size=1, max_size=6), max_size=3).map(tuple))
# Character maps: base64 of some bytes, and texts Python's check also takes (padding after a
# multiple of four, bits beyond the last byte).
_charsmaps = st.one_of(st.binary(max_size=12).map(lambda data: base64.b64encode(data).decode()),
                       st.sampled_from(["AAAA=", "AAAA===", "AB==", "+/+/"]))
_steps = st.one_of(
    st.sampled_from([Nfc(), Nfkc(), Lowercase(), StripAccents(), PrefixSpace()]),
    st.builds(Strip, st.booleans(), st.booleans()),
    st.builds(Replace, _texts, _texts, st.booleans()),
    st.builds(Prepend, _texts),
    st.builds(BertNormalizer, st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    st.builds(Precompiled, _charsmaps),
)
_sentencepiece_normalizers = st.builds(SentencePieceNormalizer, st.booleans(), st.booleans(), st.booleans(),
                                       st.booleans(), _charsmaps)
_normalizers = st.one_of(
    st.just(NoNormalizer()),
    _steps,
    st.builds(Sequence, st.lists(_steps, max_size=4).map(tuple)),
    _sentencepiece_normalizers,
    st.builds(Metaspace, st.characters(), st.sampled_from(["first", "always", "never"]),
              st.builds(Sequence, st.lists(_steps, max_size=2).map(tuple))),
    st.builds(PluginNormalizer, st.text(min_size=1, max_size=8)),
    st.builds(LlamaCppBertNormalizer, st.booleans(), st.booleans()),
    st.builds(LlamaCppUnigramNormalizer, st.booleans(), st.booleans(), _charsmaps),
)
_spanners = st.one_of(
    st.builds(RegexSplit, _texts),
    st.builds(SplitProgram, st.lists(st.one_of(
        st.just(PrefixSpaceStep()),
        st.builds(Split, _texts, st.sampled_from(["Isolated", "Removed", "Contiguous"]), st.booleans()),
    ), max_size=3).map(tuple)),
    st.just(LlamaCppWordPieceSplit()),
)


# Integers as the core holds them: ids and type ids, not negative, in 64 bits; any JSON integer
# for the mutation test.
_counts = st.integers(0, 2**64 - 1)
_signed = st.integers(-2**63, 2**63 - 1)
_models = st.one_of(
    st.just(BytePairEncoding()),
    st.builds(WordPiece, _texts, _texts, _counts),
    _unigrams,
    st.builds(WordLevel, _texts),
    st.builds(CharacterBpe, _texts, st.booleans(), _texts, st.booleans()),
)
_pieces = st.lists(st.text(min_size=1, max_size=6), max_size=3).map(tuple)
_sentencepiece_decoders = st.builds(SentencePieceDecoder, st.sampled_from(DECODER_STYLES), st.text(max_size=4),
                                    st.sampled_from(["first", "all", "none"]), _pieces)
_decoders = st.one_of(st.just(ByteLevel()), st.just(NoDecoder()),
                      st.builds(WordPieceDecoder, _texts, st.booleans()), _sentencepiece_decoders)
_template_specials = st.builds(
    lambda name, pairs: TemplateSpecial(name, tuple(i for i, _ in pairs), tuple(t for _, t in pairs)),
    st.text(max_size=5), st.lists(st.tuples(_counts, st.text(min_size=1, max_size=4)), max_size=3),
)


@st.composite
def _templates(draw) -> TemplateProcessing:
    """A TemplateProcessing whose templates hold their texts (A; A and B) among items of
    either kind, naming only special tokens it defines."""
    specials = draw(st.lists(_template_specials, max_size=3, unique_by=lambda special: special.id))
    names = [special.id for special in specials]

    def template(texts: list[str]) -> tuple:
        kinds = [st.builds(TemplateSequence, st.sampled_from(texts), _counts)]
        if names:
            kinds.append(st.builds(TemplateSpecialToken, st.sampled_from(names), _counts))
        items = draw(st.lists(st.one_of(kinds), max_size=4))
        for text in texts:
            items.insert(draw(st.integers(0, len(items))), TemplateSequence(text, draw(_counts)))
        return tuple(items)

    return TemplateProcessing(template(["A"]), template(["A", "B"]), tuple(specials))


_post_processors = st.recursive(
    st.one_of(
        st.just(NoPostProcessor()),
        _templates(),
        st.builds(BertProcessing, _texts, _counts, _texts, _counts),
        st.builds(RobertaProcessing, _texts, _counts, _texts, _counts, st.booleans(), st.booleans()),
        st.builds(ByteLevelProcessing, st.booleans(), st.booleans()),
    ),
    lambda processors: st.builds(PostProcessorSequence, st.lists(processors, max_size=3).map(tuple)),
    max_leaves=5,
)
_pipelines = st.builds(
    lambda normalizer, spanner, model, decoder, post_processor: PipelineSpec(
        spanner=spanner, normalizer=normalizer, model=model, decoder=decoder, post_processor=post_processor),
    _normalizers, _spanners, _models, _decoders, _post_processors,
)
# A Unigram model after a SentencePiece split (as sentencepiece's Unigram .model files are), or
# HF's BPE over characters (a tokenizer.json of a SentencePiece BPE model without byte fallback).
_unigram_pipelines = st.builds(
    lambda normalizer, user_defined, model, decoder, post_processor: PipelineSpec(
        spanner=SentencePieceSplit(user_defined=user_defined), normalizer=normalizer, model=model,
        decoder=decoder, post_processor=post_processor),
    _sentencepiece_normalizers, _pieces, st.one_of(_unigrams, st.builds(CharacterBpe, _texts, st.booleans())),
    _decoders, _post_processors,
)


@given(st.one_of(_pipelines, _unigram_pipelines))
def test_every_pipeline_writes_and_reads_back(spec):
    assert PipelineSpec.loads(spec.dumps()) == spec
    assert PipelineSpec.from_json(json.loads(spec.dumps())).dumps() == spec.dumps()


def _with_post_processor(spec: PipelineSpec, post_processor) -> PipelineSpec:
    return PipelineSpec(spanner=spec.spanner, normalizer=spec.normalizer, model=spec.model, decoder=spec.decoder,
                        post_processor=post_processor)


_sentencepiece_pipelines = st.builds(_with_post_processor, st.builds(
    lambda semantics, normalizer, user_defined, unused, words, joined, surface, strip: sentencepiece_pipeline(
        semantics=semantics, normalizer=normalizer, user_defined=user_defined, unused=unused, words=words,
        joined=joined, unk_surface=surface, strip_leading_space=strip),
    st.sampled_from(["sentencepiece", "hf", "llama.cpp", "llama.cpp-bpe"]),
    st.one_of(_sentencepiece_normalizers,
              st.builds(Metaspace, st.characters(exclude_categories=("Cs",)),
                        st.sampled_from(["first", "always", "never"]))),
    _pieces, _pieces, st.booleans(), _pieces, st.text(max_size=4), st.sampled_from(["first", "all", "none"]),
), _post_processors)


@pytest.mark.skipif(not core.available(), reason="compares the Rust core's reading with Python's")
@given(st.one_of(_pipelines, _unigram_pipelines, _sentencepiece_pipelines))
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


# JSON values to put in place of a pipeline's parts: of each JSON type, and names the stages
# use, so that a changed pipeline is sometimes still one.
_json_values = st.one_of(
    st.none(), st.booleans(), _signed, st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4),
    st.sampled_from(["A", "B", "C", "AAAA=", "AA=", "rank", "hf", "all", "Removed", "None", "NFC", "Sequence"]),
    st.lists(st.one_of(_signed, st.text(max_size=3)), max_size=2),
    st.fixed_dictionaries({"type": st.sampled_from(["None", "NFC", "Sequence", "Special", "SpecialToken", "BPE"])}),
)


def _places(value):
    """Every (container, key) inside a JSON value."""
    members = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, member in members:
        yield value, key
        yield from _places(member)


def _read_or_none(read, text):
    try:
        return read(text)
    except VocabFormatError:
        return None


@pytest.mark.skipif(not core.available(), reason="compares the Rust core's reading with Python's")
@given(st.one_of(_pipelines, _unigram_pipelines, _sentencepiece_pipelines), st.data())
def test_the_core_refuses_what_python_refuses_after_any_change(spec, data):
    """A pipeline with one part left out or replaced by another JSON value: the core accepts
    it exactly when Python does, and then writes the same text."""
    value = spec.to_json()
    container, key = data.draw(st.sampled_from(list(_places(value))))
    if isinstance(container, dict) and data.draw(st.booleans()):
        del container[key]
    else:
        container[key] = data.draw(_json_values)
    text = json.dumps(value, ensure_ascii=False)
    assert _read_or_none(spec_text, text) == _read_or_none(lambda t: PipelineSpec.loads(t).dumps(), text)
