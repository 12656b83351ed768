"""The fuzz harnesses of ``tests/fuzz/`` in CI: every corpus file (the seeds, and every finding
kept as ``crash-*``) is replayed, and each target gets a short run on mutated seeds.

The short runs are derandomized, so CI is reproducible: the same mutations every run. Longer,
random runs are local (``python tests/fuzz/run.py TARGET --seconds N``; tests/fuzz/README.md).
A target passes an input when it returns or raises a typed ``WordsplitError``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TESTS

sys.path.insert(0, str(TESTS / "fuzz"))

from fuzz_mutate import KINDS, mutate  # noqa: E402
from fuzz_targets import TARGETS  # noqa: E402

from wordsplit import WordsplitError  # noqa: E402

CORPUS = TESTS / "fuzz" / "corpus"
# Examples per target in CI: each is a few ms (a file target builds two small tokenizers; an
# encode example runs four encoders on both backends against the oracle).
EXAMPLES = {"tiktoken-file": 60, "tokenizer-json": 60, "vocab-merges": 60, "gguf": 60, "encode": 40,
            "decode": 80, "cli": 80}


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*/*") if p.is_file())


def run(target: str, data: bytes) -> None:
    try:
        TARGETS[target](data)
    except WordsplitError:
        pass


def test_every_target_has_seeds_and_a_ci_budget():
    assert sorted(EXAMPLES) == sorted(TARGETS)
    for target in TARGETS:
        assert any((CORPUS / target).glob("seed-*")), f"no seeds for {target}"


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_replays_cleanly(path):
    run(path.parent.name, path.read_bytes())


def _seeds(target: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted((CORPUS / target).iterdir())]


@pytest.mark.parametrize("target", sorted(EXAMPLES))
def test_short_fuzz_run(target):
    seeds = _seeds(target)
    mutation = st.tuples(st.integers(0, KINDS - 1), st.integers(0, 1 << 20), st.integers(0, 1 << 16))

    @settings(max_examples=EXAMPLES[target], deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(seed=st.sampled_from(seeds), splice=st.sampled_from(seeds), ops=st.lists(mutation, min_size=1, max_size=3))
    def fuzz(seed, splice, ops):
        run(target, mutate(seed, ops, splice))

    fuzz()
