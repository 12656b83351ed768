"""Golden parity: wordsplit gives the official tokenizer's ids on every golden case.

The golden files (tests/golden/) were made with tiktoken 0.14.0 and HF tokenizers 0.23.3;
their first record names the oracle. Every vocabulary × every encoder × both backends.
"""

from __future__ import annotations

import pytest

from conftest import ALL_VOCABS, BACKENDS, ENCODERS, encode_case, golden, golden_data, tokenizer_for


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("name", ALL_VOCABS)
def test_golden_parity(name, encoder, backend):
    tok = tokenizer_for(name, encoder, backend)
    assert tok.backend == backend
    mismatches = [
        (case.text, case.ids, got) for case in golden(name) if (got := encode_case(tok, case)) != case.ids
    ]
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[0]!r}"


@pytest.mark.parametrize("name", ALL_VOCABS)
def test_golden_files_name_their_oracle(name):
    generator = golden_data(name)["generator"]
    assert generator.startswith("tokenizers 0.23.3" if name == "qwen3" else "tiktoken 0.14.0")
    assert len(golden(name)) >= 397


@pytest.mark.parametrize("name", [n for n in ALL_VOCABS if n != "qwen3"])
def test_vocab_facts_match_golden(name):
    data = golden_data(name)
    tok = tokenizer_for(name)
    assert tok.n_vocab == data["n_vocab"]
    assert tok.vocab.pattern == data["pat_str"]
    assert tok.special_tokens == data["special_tokens"]
