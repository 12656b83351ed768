"""A spanner named explicitly for a vocabulary whose spanner stage is of another kind is refused
with a typed error naming the spanner and ``spanner='auto'``, on both backends; the spanner of
the stage's own kind gives the ids ``"auto"`` gives."""

from __future__ import annotations

import pytest

import hf_files
from conftest import BACKENDS
from llamacpp_cases import unpacked
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError
from wordsplit.spec import LlamaCppWordPieceSplit, RegexSplit, SentencePieceSplit, SplitProgram

TEXT = "Hello world, 1234 héllo"

# The spanners that read a stage of one kind, and that kind.
STAGE_SPANNERS = {
    "regex": RegexSplit,
    "hf-split": SplitProgram,
    "sentencepiece": SentencePieceSplit,
    "llamacpp-wordpiece": LlamaCppWordPieceSplit,
}


@pytest.fixture(scope="module")
def vocabs(tmp_path_factory) -> dict:
    """One vocabulary per kind of spanner stage."""
    directory = tmp_path_factory.mktemp("stage-refusals")
    spec = dict(hf_files.small_spec())
    spec["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ],
    }
    _, split_program = hf_files.load_both(spec, directory / "hf")
    found = {
        "cl100k_base": load_vocab("cl100k_base"),
        "mistral-v1": load_vocab("mistral-v1"),
        "split-program": split_program,
        "bert-bge.gguf": load_vocab(unpacked("ggml-vocab-bert-bge.gguf.xz", directory), cache_dir=directory / "c"),
    }
    kinds = {type(vocab.pipeline.spanner) for vocab in found.values()}
    assert kinds == set(STAGE_SPANNERS.values())
    return found


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spanner", sorted(STAGE_SPANNERS))
def test_a_spanner_runs_only_its_own_kind_of_stage(vocabs, spanner, backend):
    for name, vocab in vocabs.items():
        options = TokenizerOptions(spanner=spanner, backend=backend)
        if isinstance(vocab.pipeline.spanner, STAGE_SPANNERS[spanner]):
            auto = TokenizerOptions(backend=backend).build(vocab)
            assert options.build(vocab).encode(TEXT) == auto.encode(TEXT), (name, spanner)
            continue
        with pytest.raises(UnsupportedTokenizerError, match=f"the {spanner} spanner runs .*spanner='auto'"):
            options.build(vocab).encode(TEXT)
