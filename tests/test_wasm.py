"""The WebAssembly module and its JavaScript API (wasm/): built by ``bash wasm/build.sh``,
tested by its Node tests (``node --test wasm/test/``: the golden ids of every bundled
vocabulary and of the WordPiece and WordLevel tokenizer.json files, errors, free, explain), and
compared here with the Python package on random text (and, for BERT's all-MiniLM-L6-v2, with
HF tokenizers too).

The build is incremental (about a second when nothing changed); a first build compiles std for
wasm32 and takes minutes, which CI does once in .ci/run before pytest.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from wordsplit import TokenizerOptions, get_tokenizer, load_vocab
from wordsplit.explain import explain

ROOT = Path(__file__).resolve().parent.parent
WASM = ROOT / "wasm"


@pytest.fixture(scope="module")
def built():
    """wasm/dist/, built (or brought up to date) once for this module."""
    assert shutil.which("node"), "Node 20+ is needed to test the WebAssembly module (apt-get install nodejs)"
    subprocess.run(["bash", str(WASM / "build.sh")], check=True, cwd=ROOT)
    return WASM / "dist"


def test_node_tests_pass(built):
    result = subprocess.run(["node", "--test", "wasm/test/"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout


def random_texts(seed: int, n: int) -> list[str]:
    """Short texts mixing ASCII, whitespace runs, digits, accents, CJK, emoji and special tokens."""
    rng = random.Random(seed)
    alphabet = list("aeiou stnrlHW'\n\t 0123456789.,!?-") + list("éüñ中文字日本語한국어🤗👍🏽\u200d\ufeff")
    specials = ["<|endoftext|>", "<|im_start|>", "<think>"]
    texts = []
    for _ in range(n):
        parts = [rng.choice(alphabet) for _ in range(rng.randint(0, 40))]
        if rng.random() < 0.2:
            parts.insert(rng.randint(0, len(parts)), rng.choice(specials))
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base", "gpt2", "qwen3"])
def test_ids_and_merge_passes_equal_the_python_package(built, vocab):
    texts = random_texts(sum(map(ord, vocab)), 60)
    result = subprocess.run(
        ["node", "wasm/testing/encode_json.mjs"],
        cwd=ROOT, input=json.dumps({"vocab": vocab, "texts": texts}), capture_output=True, text=True, check=True,
    )
    got = json.loads(result.stdout)
    tok = get_tokenizer(vocab)
    for text, ids, winners in zip(texts, got["ids"], got["explain"]):
        assert ids == tok.encode(text, allowed_special="all"), text
        expl = explain(tok, text, allowed_special="all")
        assert winners == [[p.winner for p in piece.passes] for piece in expl.pieces], text


def test_a_bert_tokenizer_json_equals_the_python_package_and_hf(built):
    """all-MiniLM-L6-v2's tokenizer.json in the module: the ids, offsets and decoded text the
    Python package gives, and the ids and offsets with [CLS]/[SEP] HF tokenizers gives."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = "all-MiniLM-L6-v2"
    path = ROOT / "tests" / "data" / "wordpiece" / folder / "tokenizer.json.gz"
    texts = random_texts(11, 60) + [
        "Héllo WORLD naïve café [CLS] x[SEP]y", "don't stop U.S.A. ...!!!", "中文字符 mixed", "a" * 120,
        "\x00\ufffd\u200b zero\u200dwidth", "supercalifragilisticexpialidocious", "",
    ]
    result = subprocess.run(
        ["node", "wasm/testing/encode_word_model.mjs"],
        cwd=ROOT, input=json.dumps({"folder": folder, "texts": texts}), capture_output=True, text=True, check=True,
    )
    got = json.loads(result.stdout)
    tok = TokenizerOptions(backend="python").build(load_vocab(path))
    hf = tokenizers.Tokenizer.from_str(gzip.decompress(path.read_bytes()).decode("utf-8"))
    hf.no_padding()
    hf.no_truncation()
    for i, text in enumerate(texts):
        ours = tok.encode_with_offsets(text, allowed_special="all")
        assert got["ids"][i] == ours.ids, text
        assert [tuple(o) for o in got["offsets"][i]] == ours.char_offsets, text
        assert got["decoded"][i] == tok.decode(ours.ids), text
        encoding = hf.encode(text)
        assert got["with_specials"][i] == encoding.ids, text
        assert [tuple(o) for o in got["special_offsets"][i]] == encoding.offsets, text
