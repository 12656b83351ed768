"""tokenizer.json added tokens with HF's ``lstrip``, ``rstrip``, ``single_word`` and
``normalized`` flags, against HF ``tokenizers`` itself on both backends: ids, and char offsets
(HF's ``Encoding.offsets``; a token's span holds the whitespace it strips).

The tokenizers are built with HF's API: Qwen3's first 3,000 tokens (tests/data/hf) with added
tokens put in by ``add_tokens`` / ``add_special_tokens``, and the whole Qwen3 tokenizer.json
with flags switched on.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

from hf_files import assert_ids_and_offsets, both_backends, qwen_spec, small_spec, with_added_tokens
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import DisallowedSpecialError, UnsupportedTokenizerError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.vocab import LSTRIP, NORMALIZED, RSTRIP, SINGLE_WORD


# (content, special, flags); contents are not tokens of the BPE slice.
TOKENS = [
    ("<mask>", True, dict(lstrip=True, rstrip=True, normalized=False)),
    ("<s>", True, dict(single_word=True, normalized=False)),
    ("[x]", False, dict(rstrip=True, normalized=False)),
    ("wrd", False, dict(single_word=True, normalized=False)),
    ("<L>", False, dict(lstrip=True, normalized=False)),
    ("日本", False, dict(single_word=True, lstrip=True, normalized=False)),
    ("qv", False, dict(normalized=False)),
    # normalized: found in a second pass, in the stretches the tokens above leave
    ("kqv", False, dict(normalized=True)),
    ("zq", False, dict(single_word=True, normalized=True)),
    ("<n>", False, dict(lstrip=True, rstrip=True, normalized=True)),
]


@pytest.fixture(scope="module")
def plain():
    """No normalizer."""
    return both_backends(with_added_tokens(small_spec(), TOKENS))


@pytest.fixture(scope="module")
def prefixed():
    """ByteLevel's add_prefix_space: each stretch between added tokens gets its space."""
    return both_backends(with_added_tokens(small_spec(prefix_space=True), TOKENS))


@pytest.fixture(scope="module")
def nfc():
    """A Unicode form, with tokens matched in the raw text (normalized=false)."""
    tokens = [(c, s, {**f, "normalized": False}) for c, s, f in TOKENS]
    return both_backends(with_added_tokens(small_spec(normalizer={"type": "NFC"}), tokens))


@pytest.fixture(scope="module")
def lowercase():
    """A normalizer program, with tokens matched in the raw text (normalized=false)."""
    tokens = [(c, s, {**f, "normalized": False}) for c, s, f in TOKENS]
    normalizer = {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "Prepend", "prepend": "_"}]}
    return both_backends(with_added_tokens(small_spec(normalizer=normalizer), tokens))


CASES = [
    "",
    "<mask>",
    "a  <mask>  b",
    "a\t\n<mask>\n\tb",
    "<mask><mask> <mask>",
    " \u3000<mask>\u2003x",
    "\x1c<mask>\x1c\x85<mask>\xa0",  # U+001C is no White_Space (HF keeps it); U+0085 and U+00A0 are
    "x[x]  \t y [x][x] [x]\u3000",
    "[x]<L>",
    "a <L> <L>  <L>",
    "[x]   <L>",  # the rstrip takes the spaces, the lstrip finds none left
    "wrd wrds swrd wrd_ wrd1 -wrd- wrd",
    "(wrd) wrd, wrd.wrd wrd\u0301 \u0301wrd wrd\u200d 1wrd ²wrd",
    "日本語 日本 x日本 日本! 　日本",
    "<s>a <s> a<s> <s>_ _<s> 1<s>",
    "kqv xkqv kq qv qvkqv",  # qv (first pass) breaks kqv (second pass)
    "zq czq zq_ zq zq1",
    "a <n> b<n>c  <n>\n",
    "[x] <n> <mask> kqv",
    "é<L>e\u0301<L> ü<mask>",
    "<mask>\u0301",
    "  leading and trailing  ",
]


@pytest.mark.parametrize("text", CASES)
def test_fixed_cases_no_normalizer(plain, text):
    assert_ids_and_offsets(plain, text)


@pytest.mark.parametrize("text", CASES)
def test_fixed_cases_prefix_space(prefixed, text):
    assert_ids_and_offsets(prefixed, text)


@pytest.mark.parametrize("text", CASES)
def test_fixed_cases_nfc(nfc, text):
    assert_ids_and_offsets(nfc, text)


@pytest.mark.parametrize("text", CASES)
def test_fixed_cases_lowercase_prepend(lowercase, text):
    hf, toks = lowercase
    expected = hf.encode(text, add_special_tokens=False).ids
    for backend, tok in toks.items():
        assert tok.encode(text, allowed_special="all") == expected, (backend, text)
        assert tok.encode_with_offsets(text, allowed_special="all").ids == expected, (backend, text)


ALPHABET = [content for content, _, _ in TOKENS] + list("ab_1日é\u0301.-") + [
    " ", "  ", "\t", "\n", "\u3000", "\x1c", "\xa0", "<", ">", "wr", "q", "k", "z"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=14).map("".join))
def test_random_texts_match_hf(plain, prefixed, text):
    assert_ids_and_offsets(plain, text)
    assert_ids_and_offsets(prefixed, text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=14).map("".join))
def test_random_texts_match_hf_under_nfc(nfc, text):
    assert_ids_and_offsets(nfc, text)


def test_special_policy_with_flags(plain):
    """A special token the call does not allow is plain text (its whitespace stays plain text
    too); a disallowed one raises, whatever its flags."""
    _, toks = plain
    without = with_added_tokens(small_spec(), [])  # HF with no added token: "<mask>" is text
    text = "a <mask> b"
    for backend, tok in toks.items():
        as_text = tok.encode(text, disallowed_special=())
        assert as_text == tok.encode_ordinary(text) == without.encode(text).ids
        assert tok.encode_with_offsets(text, disallowed_special=()).ids == as_text
        with pytest.raises(DisallowedSpecialError, match="<mask>"):
            tok.encode(text)
        with pytest.raises(DisallowedSpecialError, match="<mask>"):
            tok.encode_with_offsets(text)


@pytest.fixture(scope="module")
def qwen3_flagged():
    """The whole Qwen3 tokenizer.json (NFC) with flags switched on."""
    spec = qwen_spec()
    flags = {"<think>": dict(lstrip=True, rstrip=True), "</think>": dict(lstrip=True),
             "<tool_call>": dict(single_word=True), "<|im_start|>": dict(rstrip=True),
             "<|im_end|>": dict(lstrip=True, single_word=True)}
    for entry in spec["added_tokens"]:
        entry.update(flags.get(entry["content"], {}))
    return both_backends(HFTokenizer.from_str(json.dumps(spec)))


@pytest.mark.parametrize("text", [
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\nfine\n</think>\n\nHello!<|im_end|>",
    "a <think> b </think> c",
    "x<tool_call>y <tool_call> <tool_call>\n{\"a\": 1}\n</tool_call>",
    "word<|im_end|> <|im_end|> \u3000<|im_end|>",
    "<|im_start|>   \t\n   system",
])
def test_qwen3_with_flags(qwen3_flagged, text):
    assert_ids_and_offsets(qwen3_flagged, text)


def test_load_from_disk_keeps_the_flags(plain, tmp_path):
    hf, _ = plain
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str())
    first = load_vocab(path, cache_dir=tmp_path / "cache")
    again = load_vocab(path, cache_dir=tmp_path / "cache")  # from the parsed-vocab cache
    for vocab in (first, again, pickle.loads(pickle.dumps(first))):
        assert vocab.literal_flags["<mask>"] == LSTRIP | RSTRIP
        assert vocab.literal_flags["<s>"] == SINGLE_WORD
        assert vocab.literal_flags["zq"] == SINGLE_WORD | NORMALIZED
        assert "qv" not in vocab.literal_flags
        assert vocab.content_hash == first.content_hash
        text = "a  <mask> wrd zq kqv"
        assert TokenizerOptions(backend="native").build(vocab).encode(text, allowed_special="all") == \
            hf.encode(text, add_special_tokens=False).ids


def test_flags_are_part_of_the_vocabulary_hash(plain):
    hf, _ = plain
    spec = json.loads(hf.to_str())
    changed = copy.deepcopy(spec)
    next(e for e in changed["added_tokens"] if e["content"] == "[x]")["rstrip"] = False
    assert read_hf_tokenizer_json(json.dumps(spec).encode()).content_hash != \
        read_hf_tokenizer_json(json.dumps(changed).encode()).content_hash


@pytest.mark.parametrize("second, flags", [
    (" y", dict()), (" ", dict()), ("  ", dict()), (" ", dict(lstrip=True, rstrip=True)), (" y", dict(lstrip=True)),
    ("\u3000z", dict(rstrip=True)),
])
def test_rstrip_then_a_token_starting_with_whitespace(second, flags):
    """HF resumes its search inside the whitespace an rstrip token took: a token starting
    with whitespace can match there, its span overlapping the first's, and the plain text
    after it starts at its end (that text is encoded again)."""
    hf = with_added_tokens(small_spec(), [("[x]", False, dict(rstrip=True, normalized=False)),
                                (second, False, dict(normalized=False, **flags))])
    pair = both_backends(hf)
    for text in ["[x]  y", "[x] y", "[x]y", "[x]   y z [x] ", "a [x]\t y", "[x]    y", "[x]     y", "[x]\u3000z  ",
                 "[x] \u3000z [x]\u3000\u3000z", " y [x]"]:
        assert_ids_and_offsets(pair, text)


def test_rstrip_then_an_lstrip_whitespace_token_is_refused():
    """HF fails ("AddedVocabulary bad split") on text where an lstrip token made only of
    whitespace falls inside the whitespace an rstrip token took; wordsplit refuses the file."""
    hf = with_added_tokens(small_spec(), [("[x]", False, dict(rstrip=True, normalized=False)),
                                (" ", False, dict(lstrip=True, normalized=False))])
    with pytest.raises(BaseException, match="bad split"):  # (HF panics)
        hf.encode("[x]  y")
    with pytest.raises(UnsupportedTokenizerError, match=r"'\[x\]' has rstrip=true and ' ' is whitespace with lstrip"):
        read_hf_tokenizer_json(hf.to_str().encode())
    # In different passes (one normalized, one not) they cannot overlap.
    hf = with_added_tokens(small_spec(), [("[x]", False, dict(rstrip=True, normalized=False)),
                                (" ", False, dict(lstrip=True, normalized=True))])
    assert_ids_and_offsets(both_backends(hf), "[x]  y [x] y")


def test_tiktoken_compat_unstable_end_sees_the_stripped_whitespace(plain):
    """compat.tiktoken's unstable end starts after the last token, whitespace it took included."""
    from wordsplit.compat.tiktoken import Encoding

    hf, toks = plain
    for backend, tok in toks.items():
        enc = Encoding.from_tokenizer("flags", tok)
        text = "hello [x]  "
        stable, _ = enc.encode_with_unstable(text, allowed_special="all")
        assert stable == hf.encode(text, add_special_tokens=False).ids, backend
        assert stable[-1] == tok.token_to_id("[x]")


def test_single_word_ignores_letters_newer_than_unicode_16(plain):
    # HF's word characters are Rust regex's \w at Unicode 16.0; the regex module knows newer
    # letters (U+3D000's block), which must not stop a single_word token from matching.
    import unicodedata

    import regex

    word = regex.compile(r"\w")
    newer = [c for c in range(0x30000, 0x40000) if word.match(chr(c)) and unicodedata.category(chr(c)) == "Cn"]
    assert 0x3D000 in newer
    for c in [0x3D000, *newer[::97]]:
        assert_ids_and_offsets(plain, f"wrd{chr(c)} {chr(c)}wrd wrd")
