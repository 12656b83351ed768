"""tokenizer.json added tokens with ``normalized: true`` under normalizers that change text
(Lowercase, Replace, Strip, Prepend, StripAccents, the Unicode forms, Sequences), against HF
``tokenizers`` itself on both backends: ids, and char offsets (HF's ``Encoding.offsets``).

HF finds such a token in each stretch's *normalized* text, by its content as the normalizer
makes it (``<MASK>`` is found as ``<mask>`` under Lowercase), with its lstrip/rstrip/single_word
flags applied there; the pre-tokenizer then runs on the pieces between tokens. The tokenizers
are built with HF's API from Qwen3's first 3,000 tokens (tests/data/hf), as in
tests/test_hf_added_token_flags.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_files import BACKENDS, assert_ids_and_offsets, both_backends, small_spec, with_added_tokens
from wordsplit import TokenizerOptions, Vocab
from wordsplit.errors import DisallowedSpecialError, UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.normalizer_programs import normalizer_program
from wordsplit.spec import NoNormalizer, PrefixSpace, PrefixSpaceStep, Sequence, SplitProgram
from wordsplit.vocab import NORMALIZED


def _seq(*steps: dict) -> dict:
    return {"type": "Sequence", "normalizers": list(steps)}


NORMALIZERS = {
    "lowercase": {"type": "Lowercase"},
    "nfkc-lowercase": _seq({"type": "NFKC"}, {"type": "Lowercase"}),
    "nfd-stripaccents": _seq({"type": "NFD"}, {"type": "StripAccents"}),
    "nfc": {"type": "NFC"},
    "nfd": {"type": "NFD"},
    "strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "prepend": {"type": "Prepend", "prepend": "\u2581"},
    "replace-string": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    "replace-regex": {"type": "Replace", "pattern": {"Regex": r"[0-9]+|``"}, "content": "#"},
    "mixed": _seq({"type": "Strip", "strip_left": True, "strip_right": False}, {"type": "Lowercase"},
                  {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
                  {"type": "Prepend", "prepend": "_"}),
}

# (content, special, flags); HF's `normalized` defaults to `not special`.
TOKENS = [
    ("<MASK>", True, dict(lstrip=True, rstrip=True, normalized=True)),
    ("Ünï", False, dict(normalized=True)),
    ("\ufb01x", False, dict(normalized=True)),
    ("Zq", False, dict(single_word=True, normalized=True)),
    ("日本", False, dict(lstrip=True, normalized=True)),
    ("a b", False, dict(normalized=True)),
    ("\U0001f980X", False, dict(rstrip=True, normalized=True)),
    (" <S>", False, dict(normalized=True)),
    ("K9", False, dict(normalized=True)),
    ("[R]", False, dict(rstrip=True, normalized=False)),
    ("<raw>", True, dict(normalized=False)),
]


PAIRS: dict = {}


def _get(name: str, prefix_space: bool = False):
    key = (name, prefix_space)
    if key not in PAIRS:
        spec = small_spec(normalizer=NORMALIZERS[name], prefix_space=prefix_space)
        PAIRS[key] = both_backends(with_added_tokens(spec, TOKENS))
    return PAIRS[key]


CASES = [
    "",
    "<MASK>",
    "<mask> <Mask>  x <MASK>\t",
    "ünï ÜNÏ Uni UNI\u0308 u\u0308ni\u0308",
    "\ufb01x fix FIX \ufb01X",
    "zq ZQ xzq zq_ Zq1 (zq) zq\u0301",
    "日本語 日本 x日本 　日本",
    "a b a  b a\tb A B a\u00a0b",
    "\U0001f980X  \U0001f980x\t\n\U0001f980",
    " <S> <s><S>  <s>",
    "K9 k9 k99 K 9 ``",
    "[R]  <mask> [R]\u3000Zq [r]",
    "<raw><MASK><raw>Ünï<raw>",
    "  leading and trailing  ",
    "<MASK><MASK> \ufb01x\ufb01x日本日本",
    "ΣΑΣ İi \u0130\u0301 e\u0301\u0327 \u1e9e",
    "\u3000\u2003<MASK>\u2003x\u0085y\xa0",
    "x\r\n<mask>\r\n",
]


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
@pytest.mark.parametrize("text", CASES, ids=range(len(CASES)))
def test_fixed_cases(name, text):
    assert_ids_and_offsets(_get(name), text)


@pytest.mark.parametrize("name", ["lowercase", "nfc", "strip", "replace-string", "mixed"])
@pytest.mark.parametrize("text", CASES, ids=range(len(CASES)))
def test_fixed_cases_with_prefix_space(name, text):
    """ByteLevel's add_prefix_space puts its space before each piece the second pass leaves."""
    assert_ids_and_offsets(_get(name, prefix_space=True), text)


ALPHABET = [content for content, _, _ in TOKENS] + [
    "<mask>", "<Mask>", "ünï", "UNI", "u\u0308", "\u0308", "\u0301", "fix", "\ufb01", "zq", "ZQ", "z", "q", "k9",
    "9", "12", "``", " <s>", "a", "b", "A", "x", "_", "-", ".", "日", "本", "\U0001f980", "Σ", "İ", "é",
    " ", "  ", "\t", "\n", "\u3000", "\xa0", "\x1c", "<", ">", "[", "]",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=12).map("".join))
@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_random_texts_match_hf(name, text):
    assert_ids_and_offsets(_get(name), text)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=12).map("".join))
@pytest.mark.parametrize("name", ["lowercase", "strip", "mixed"])
def test_random_texts_match_hf_with_prefix_space(name, text):
    assert_ids_and_offsets(_get(name, prefix_space=True), text)


def test_offsets_stay_linear_in_the_count_of_normalized_tokens():
    """Each stretch between tokens of the second pass is placed at its own cost, not the
    whole stretch's again: 8 times the tokens take about 8 times as long, not 64."""
    for backend, tok in _get("lowercase")[1].items():
        times = []
        for count in (500, 4000):
            start = time.perf_counter()
            got = tok.encode_with_offsets("ab <MASK> " * count, allowed_special="all")
            times.append(time.perf_counter() - start)
            assert len(got.ids) >= 2 * count
        assert times[1] < 25 * max(times[0], 0.01), (backend, times)


def test_prefix_space_runs_in_the_split_program():
    """With normalized tokens found in normalized text, add_prefix_space is a pre-tokenizer
    step (each piece gets its space), not the normalizer's last step."""
    _, toks = _get("lowercase", prefix_space=True)
    vocab = toks["python"].vocab
    assert vocab.normalizer == normalizer_program([{"type": "Lowercase"}])
    program = vocab.pipeline.spanner
    assert isinstance(program, SplitProgram) and PrefixSpaceStep() in program.steps


def test_the_special_policy_applies_to_normalized_special_tokens():
    """A normalized special token found in the normalized text follows the call's policy:
    a disallowed one raises, with disallowed_special=() it is plain text."""
    hf, toks = _get("lowercase")
    without = with_added_tokens(small_spec(normalizer=NORMALIZERS["lowercase"]), [])
    text = "a <Mask> b"
    for backend, tok in toks.items():
        with pytest.raises(DisallowedSpecialError, match="<MASK>"):
            tok.encode(text)
        with pytest.raises(DisallowedSpecialError, match="<MASK>"):
            tok.encode_with_offsets(text)
        as_text = tok.encode(text, disallowed_special=())
        assert as_text == tok.encode_ordinary(text) == without.encode(text).ids, backend
        assert tok.encode_with_offsets(text, disallowed_special=()).ids == as_text
        assert tok.encode(text, allowed_special={"<MASK>"}) == hf.encode(text).ids


def test_a_nfc_vocab_stays_native():
    """GPT-NeoX's form: NFC and whitespace tokens with normalized: true; every stage native."""
    tokens = [(" " * n, False, dict(normalized=True)) for n in (2, 4, 8)] + [("<|endoftext|>", True, {})]
    pair = both_backends(with_added_tokens(small_spec(normalizer={"type": "NFC"}), tokens))
    assert pair[1]["native"].native
    for text in ["def f():\n        return 1", "a  b    c\u0301        d", "e\u0301  <|endoftext|>   x"]:
        assert_ids_and_offsets(pair, text)


def test_the_cases_cover_each_normalizer_change():
    """The fixed cases exercise the normalizers: under each, some case's normalized text
    differs from the text (else the second pass would be the raw one)."""
    from wordsplit.normalizers import normalizer_for

    for name in NORMALIZERS:
        _, toks = _get(name)
        normalize = normalizer_for(toks["python"].vocab.normalizer)
        assert any(normalize(text) != text for text in CASES), name


@pytest.mark.parametrize("normalizer, tokens, message", [
    ({"type": "Lowercase"}, [("ABC", False, dict(normalized=True)), ("abc", False, dict(normalized=True))],
     r"makes the normalized added tokens 'ABC' and 'abc' the same text 'abc'"),
    ({"type": "NFC"}, [("\u00e9", False, dict(normalized=True)), ("e\u0301", False, dict(normalized=True))],
     r"the same text 'é'"),
    ({"type": "Strip", "strip_left": True, "strip_right": True}, [("  ", False, dict(normalized=True))],
     r"makes the normalized added token '  ' empty"),
])
def test_undecidable_normalized_tokens_are_refused(normalizer, tokens, message):
    """Two tokens the normalizer makes the same (HF picks one at random in each process), or
    one it makes empty (HF's matcher then cuts the text at arbitrary places)."""
    hf = with_added_tokens(small_spec(normalizer=normalizer), tokens)
    with pytest.raises(UnsupportedTokenizerError, match=message):
        read_hf_tokenizer_json(hf.to_str().encode(), source="t.json")


def test_a_built_vocab_with_such_tokens_fails_the_same_on_both_backends():
    from wordsplit import load_vocab

    base = load_vocab("gpt2")
    vocab = Vocab(name="x", ranks=dict(base.ranks), pattern=base.pattern,
                  added_tokens={"<A>": base.n_vocab, "<a>": base.n_vocab + 1},
                  normalizer=normalizer_program([{"type": "Lowercase"}]),
                  literal_flags={"<A>": NORMALIZED, "<a>": NORMALIZED})
    messages = set()
    for backend in BACKENDS:
        with pytest.raises(VocabFormatError, match="the same text '<a>'") as info:
            TokenizerOptions(backend=backend).build(vocab).encode("x")
        messages.add(str(info.value))
    assert len(messages) == 1


def test_the_native_core_knows_the_raw_second_pass_normalizers():
    """The native pipeline's normalizers under which the second pass runs on the text as it is
    (the Python normalizer stage of the bindings, stages.rs) are the Python engine's."""
    from wordsplit.vocab import RAW_SECOND_PASS_NORMALIZERS

    source = (Path(__file__).parents[1] / "crates" / "wordsplit-py" / "src" / "stages.rs").read_text()
    prefix_only = normalizer_program([{"type": "PrefixSpace"}])
    assert prefix_only == Sequence((PrefixSpace(),))
    assert set(RAW_SECOND_PASS_NORMALIZERS) == {NoNormalizer(), prefix_only}
    assert "steps == &[NormalizerSpec::PrefixSpace]" in source and "!= NormalizerSpec::None" in source
