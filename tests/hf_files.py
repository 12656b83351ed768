"""tokenizer.json files for the HF-parity tests, and loading one both ways.

The small file is cut from Qwen3's (tests/data/hf/tokenizer.json.gz): its first 3,000 tokens and
the merges that make them, without a post-processor (offsets as the model gives them). A test
changes the part it is about (normalizer, pre-tokenizer, added tokens) and loads the result with
HF ``tokenizers`` and with wordsplit in well under a second.
"""

from __future__ import annotations

import copy
import functools
import gzip
import json
from pathlib import Path

from tokenizers import AddedToken
from tokenizers import Tokenizer as HFTokenizer

from conftest import BACKENDS, DATA
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.formats.hf import read_hf_tokenizer_json

QWEN_JSON = DATA / "hf" / "tokenizer.json.gz"

# One special and one added token, both matched in the raw text (ids right after the slice).
SMALL_ADDED_TOKENS = [
    {"id": 3000, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
     "normalized": False, "special": True},
    {"id": 3001, "content": "<think>", "single_word": False, "lstrip": False, "rstrip": False,
     "normalized": False, "special": False},
]


@functools.lru_cache(maxsize=1)
def _qwen_text() -> str:
    return gzip.decompress(QWEN_JSON.read_bytes()).decode("utf-8")


def qwen_spec() -> dict:
    """Qwen3's whole tokenizer.json, parsed: a new dict on each call, for the caller to change."""
    return json.loads(_qwen_text())


@functools.lru_cache(maxsize=1)
def _small_base() -> dict:
    spec = qwen_spec()
    vocab = {text: i for text, i in spec["model"]["vocab"].items() if i < 3000}
    spec["model"]["vocab"] = vocab
    spec["model"]["merges"] = [m for m in spec["model"]["merges"] if "".join(m) in vocab]
    spec.update(added_tokens=[], post_processor=None)
    return spec


def small_spec(*, normalizer=None, added_tokens=(), prefix_space: bool = False) -> dict:
    """The 3,000-token slice of Qwen3 with ``normalizer`` (None: none) and ``added_tokens``
    (tokenizer.json entries; :data:`SMALL_ADDED_TOKENS` is a special and an added token); with
    ``prefix_space``, a lone ByteLevel pre-tokenizer with ``add_prefix_space``. A new dict.

    >>> spec = small_spec(added_tokens=SMALL_ADDED_TOKENS)
    >>> len(spec["model"]["vocab"]), [t["content"] for t in spec["added_tokens"]], spec["normalizer"]
    (3000, ['<|endoftext|>', '<think>'], None)
    """
    spec = copy.deepcopy(_small_base())
    spec.update(normalizer=copy.deepcopy(normalizer), added_tokens=copy.deepcopy(list(added_tokens)))
    if prefix_space:
        spec["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                                 "use_regex": True}
    return spec


def load_both(spec: dict, directory: Path):
    """``(HF tokenizer, wordsplit Vocab)`` of ``spec``, written to ``directory/tokenizer.json``
    (the Vocab through ``load_vocab`` and a parsed-vocab cache in ``directory/cache``)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokenizer.json"
    path.write_text(json.dumps(spec))
    return HFTokenizer.from_file(str(path)), load_vocab(path, cache_dir=directory / "cache")


def with_added_tokens(spec: dict, tokens) -> HFTokenizer:
    """An HF tokenizer of ``spec`` with ``tokens`` ``(content, special, flags)`` put in by HF's
    own ``add_tokens`` / ``add_special_tokens`` (so HF picks their ids and defaults)."""
    hf = HFTokenizer.from_str(json.dumps(spec))
    for content, special, flags in tokens:
        token = AddedToken(content, special=special, **flags)
        (hf.add_special_tokens if special else hf.add_tokens)([token])
    return hf


def both_backends(hf: HFTokenizer):
    """``(hf, {backend: wordsplit Tokenizer})`` of the file ``hf`` saves."""
    vocab = read_hf_tokenizer_json(hf.to_str().encode(), source="built/tokenizer.json")
    return hf, {backend: TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS}


def assert_ids_and_offsets(built, text: str) -> None:
    """The ids and char offsets of ``text`` equal HF's on each backend of ``built``
    (:func:`both_backends`)."""
    hf, toks = built
    expected = hf.encode(text, add_special_tokens=False)
    for backend, tok in toks.items():
        assert tok.encode(text, allowed_special="all") == expected.ids, (backend, text)
        got = tok.encode_with_offsets(text, allowed_special="all")
        assert got.ids == expected.ids, (backend, text)
        # A token made only of text the normalizer inserted (ByteLevel's prefix space alone)
        # has an empty span in wordsplit where HF gives it its first character's (see
        # wordsplit.offsets).
        offsets = [hf_span if ws_span[0] == ws_span[1] else ws_span
                   for ws_span, hf_span in zip(got.char_offsets, expected.offsets)]
        assert offsets == expected.offsets, (backend, text)
