"""``wordsplit.compat.tokenizers``: the token string and offsets of an added token that takes
white space (``lstrip``/``rstrip``), against HF ``tokenizers`` on both backends.

HF's token string for such a token is the text it matched, white space included
(``"   <mask>"``), and ``trim_offsets`` (RobertaProcessing's, ByteLevel's) then moves its offsets
past that white space: RoBERTa's, BART's, XLM-R's and ALBERT's ``<mask>`` have ``lstrip``. The
files are the repository's: Qwen3's first 3,000 tokens with a RoBERTa post-processor, and
sentencepiece's test model as transformers converts it for XLM-R, each with a mask token
added by HF's own ``add_special_tokens``.
"""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken
from tokenizers import Tokenizer as HFTokenizer

from conftest import BACKENDS, DATA
from hf_files import small_spec
from wordsplit import TokenizerOptions
from wordsplit.compat.tokenizers import Tokenizer
from wordsplit.compat.tokenizers.encoding import matched_literal

ROBERTA = {"type": "RobertaProcessing", "sep": ["</s>", 1], "cls": ["<s>", 0], "trim_offsets": True,
           "add_prefix_space": True}


def _byte_level() -> str:
    spec = small_spec(prefix_space=False)
    spec["pre_tokenizer"]["trim_offsets"] = True
    spec["post_processor"] = ROBERTA
    return json.dumps(spec)


def _xlmr() -> str:
    path = DATA / "unigram" / "test_sentencepiece.xlmroberta.tokenizer.json.gz"
    spec = json.loads(gzip.decompress(path.read_bytes()))
    spec["post_processor"] = {**ROBERTA, "sep": ["</s>", 2]}
    return json.dumps(spec)


FILES = {"byte-level": _byte_level, "xlmr": _xlmr}
_BUILT: dict = {}


def built(name: str):
    """``(HF tokenizer, {backend: compat Tokenizer})``, with ``<mask>`` (lstrip) and ``<r>``
    (rstrip) put in by HF."""
    if name not in _BUILT:
        hf = HFTokenizer.from_str(FILES[name]())
        hf.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False),
                               AddedToken("<r>", rstrip=True, normalized=False)])
        text = hf.to_str()
        _BUILT[name] = hf, {backend: Tokenizer.from_str(text, options=TokenizerOptions(backend=backend))
                            for backend in BACKENDS}
    return _BUILT[name]


def assert_hfs(name: str, text: str, pair: str) -> None:
    hf, ours = built(name)
    for args in ((text,), (text, pair)):
        expected = hf.encode(*args)
        for backend, tok in ours.items():
            got = tok.encode(*args)
            assert (got.ids, got.tokens, got.offsets) == (expected.ids, expected.tokens, expected.offsets), \
                (backend, args)


CASES = ["a   <mask> b", "<mask>", " \t<mask>x", "x <mask>  <mask>\n", "a<r>   b <r>\u3000c", "  <r> <mask>  "]


@pytest.mark.parametrize("name", FILES)
def test_stripping_tokens_have_hfs_strings_and_offsets(name):
    for text in CASES:
        assert_hfs(name, text, "  <mask> q")


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=80, deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(["<mask>", "<r>", " ", "  ", "\t", "\n", "\u3000", "é", "Ab"]),
                                st.text(max_size=4)), max_size=10),
       pair=st.lists(st.sampled_from(["<mask>", "<r>", " ", "x", "\u2003"]), max_size=6))
def test_hypothesis_texts(name, parts, pair):
    assert_hfs(name, "".join(parts), "".join(pair))


def test_matched_literal_keeps_a_normalized_tokens_content():
    # (a normalized token matched in normalized text: its content, with the white space around it)
    assert matched_literal("x  <MASK>\t", 1, 10, "<mask>") == "  <mask>\t"
    assert matched_literal("<mask>", 0, 6, "<mask>") == "<mask>"
