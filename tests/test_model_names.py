"""An OpenAI model's name goes wherever a vocabulary's name goes (load_vocab, get_tokenizer,
download_vocab, --vocab) and stands for the vocabulary tiktoken's encoding_for_model gives it;
docs/vocabularies.md's table lists every entry of that mapping; an unknown name is refused with
the known names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
import tiktoken.model

from wordsplit import get_tokenizer, load_vocab
from wordsplit.errors import UnknownVocabError
from wordsplit.vocabs import VOCABS, download_vocab, model_vocabulary
from wordsplit.vocabs.models import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["gpt-4o", "gpt-4o-2024-05-13", "chatgpt-4o-latest", "gpt-4", "gpt-4-0314", "gpt-3.5-turbo-0613",
          "gpt-4.1-mini", "o1", "o3-mini", "gpt-5", "gpt-oss-120b", "ft:gpt-4o:org:x", "ft:gpt-4:org:x",
          "text-davinci-003", "text-davinci-edit-001", "davinci", "text-embedding-3-small", "gpt-2", "gpt2"]


@pytest.mark.parametrize("model", MODELS)
def test_a_model_name_loads_the_vocabulary_tiktoken_gives_it(model, tiktoken_oracle):
    expected = tiktoken.model.encoding_name_for_model(model)
    assert model_vocabulary(model) == expected
    assert load_vocab(model) is load_vocab(expected)
    text = "hello world<|endoftext|>, ünïcode 12345"
    assert get_tokenizer(model).encode_ordinary(text) == tiktoken_oracle(expected).encode_ordinary(text)


def test_every_entry_of_the_mapping_names_a_registered_vocabulary():
    for model, encoding in {**MODEL_TO_ENCODING, **MODEL_PREFIX_TO_ENCODING}.items():
        assert encoding in VOCABS, model
        assert model_vocabulary(model) == encoding, model


def test_names_files_and_unknown_models_are_not_models(tmp_path, monkeypatch):
    assert model_vocabulary("qwen3") is None and model_vocabulary("cl100k_base") is None
    assert model_vocabulary(Path("gpt-4o")) is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "davinci").write_bytes(b"")  # an existing file of that name is the file
    assert model_vocabulary("davinci") is None
    with pytest.raises(UnknownVocabError, match=r"Known names: cl100k_base, .*encoding_for_model \(gpt-4o"):
        load_vocab("gpt-9-turbo")


def test_a_model_name_carries_its_vocabulary_facts_and_downloads_nothing():
    with pytest.raises(TypeError, match="not to 'gpt-4o', which defines its own"):
        load_vocab("gpt-4o", pattern=r"\w+")
    assert download_vocab("gpt-4o") == []  # o200k_base is bundled


def test_the_command_line_takes_a_model_name():
    result = subprocess.run([sys.executable, "-m", "wordsplit", "encode", "--vocab", "gpt-4o", "hello world"],
                            capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "24912 2375\n", "")


def test_the_documented_table_is_the_mapping():
    page = (ROOT / "docs" / "vocabularies.md").read_text()
    section = page.split("## OpenAI model names\n", 1)[1].split("\n## ", 1)[0]
    names: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for vocab, exact, starts in re.findall(r"^\| `([\w-]+)` \|(.*?)\|(.*?)\|$", section, re.M):
        names.update(dict.fromkeys(re.findall(r"`([^`]+)`", exact), vocab))
        prefixes.update(dict.fromkeys(re.findall(r"`([^`]+)`", starts), vocab))
    canonical = {model: VOCABS.canonical(encoding) for model, encoding in MODEL_TO_ENCODING.items()}
    assert names == canonical
    assert prefixes == MODEL_PREFIX_TO_ENCODING
