"""A tokenizer.json ``Replace`` normalizer whose pattern matches the empty string, against HF
``tokenizers`` on both backends.

HF aligns the text a Replace puts at an empty match to the character before it; at the very
start of a segment there is none, HF aligns it to nothing, and its ByteLevel pre-tokenizer
then panics ("index out of bounds") or repeats that text. wordsplit matches HF's ids and
offsets for every other empty match, and refuses text put at the start with a typed error:
when the file is loaded if a one-character text shows it, else when a text makes it happen.
"""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer as HFTokenizer

import hf_files
from wordsplit import TokenizerOptions
from wordsplit.errors import UnsupportedTokenizerError
from wordsplit.formats.hf import read_hf_tokenizer_json

BACKENDS = ("python", "native")


def _json(pattern: dict, content: str) -> str:
    spec = hf_files.small_spec(
        normalizer={"type": "Replace", "pattern": pattern, "content": content},
        added_tokens=[{"id": 3000, "content": "<|x|>", "special": False, "normalized": False,
                       "lstrip": False, "rstrip": False, "single_word": False}])
    return json.dumps(spec)


@pytest.mark.parametrize("pattern, content, texts", [
    # (HF's `$` is the end of a line: before every "\n" and at the end)
    ({"Regex": "$"}, "-", ["ab", "a b", " ab", "b", " ", "é b", "ab<|x|>cd<|x|>", "a\nb", "a b\n\nc\n", "a\n<|x|>b"]),
    ({"Regex": "^ "}, "-", ["a\n b", " a\n \n ", "a<|x|> b"]),
    ({"Regex": "(?<=a)"}, "--", ["ab", "a b", " ab", "b", "xab ", "a<|x|>a"]),
    ({"Regex": "(?<=b)x*"}, "-", ["ab", "bxxc", "b", "bb b"]),
    ({"Regex": "(?=bc)"}, "-", ["abc", "a bc", "xbcbc"]),
    ({"Regex": "^"}, "", ["ab", " a"]),  # (nothing put there)
])
def test_empty_matches_elsewhere_match_hf(pattern, content, texts):
    data = _json(pattern, content)
    hf = HFTokenizer.from_str(data)
    vocab = read_hf_tokenizer_json(data.encode())
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in texts:
            expected = hf.encode(text, add_special_tokens=False)
            assert tok.encode(text) == expected.ids, (backend, text)
            got = tok.encode_with_offsets(text)
            assert (got.ids, got.char_offsets) == (expected.ids, expected.offsets), (backend, text)


@pytest.mark.parametrize("pattern", [{"String": ""}, {"Regex": "^"}, {"Regex": "x*"}, {"Regex": "(?=b)"},
                                     {"Regex": "\\s*"}])
def test_text_put_at_the_start_is_refused_at_load(pattern):
    data = _json(pattern, "-")
    with pytest.raises(BaseException, match="index out of bounds"):  # (HF panics)
        HFTokenizer.from_str(data).encode("ba")
    with pytest.raises(UnsupportedTokenizerError, match="matches the empty string at the start of a text"):
        read_hf_tokenizer_json(data.encode(), source="t/tokenizer.json")


def test_a_line_end_at_the_start_is_refused_when_a_text_shows_it():
    """`$` matches empty before a "\n": a text that starts with one gets text put at its start,
    where HF fails; any other text encodes."""
    data = _json({"Regex": "$"}, "-")
    hf = HFTokenizer.from_str(data)
    vocab = read_hf_tokenizer_json(data.encode())
    for text in ("\nab", "a<|x|>\nb"):  # (each segment between added tokens is normalized alone)
        with pytest.raises(BaseException, match="index out of bounds"):  # (HF panics)
            hf.encode(text)
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in ("\nab", "a<|x|>\nb"):
            with pytest.raises(UnsupportedTokenizerError, match="matches the empty string at the start of"):
                tok.encode(text)
        assert tok.encode("a\nb") == hf.encode("a\nb", add_special_tokens=False).ids


def test_text_put_at_the_start_is_refused_when_a_text_shows_it():
    """A pattern that matches empty at the start of no one-character text loads; a text where
    it does raises on both backends, after an added token too (each segment is normalized on
    its own), where HF fails."""
    data = _json({"Regex": "(?=bc)"}, "-")
    hf = HFTokenizer.from_str(data)
    vocab = read_hf_tokenizer_json(data.encode())
    for text in ["bc", "a<|x|>bc"]:
        with pytest.raises(BaseException, match="index out of bounds"):
            hf.encode(text)
        for backend in BACKENDS:
            tok = TokenizerOptions(backend=backend).build(vocab)
            with pytest.raises(UnsupportedTokenizerError, match="at the start of 'bc'"):
                tok.encode(text)
            with pytest.raises(UnsupportedTokenizerError, match="at the start of 'bc'"):
                tok.encode_with_offsets(text)
