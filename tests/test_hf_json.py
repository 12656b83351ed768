"""tokenizer.json coverage beyond Split: normalizers, the pre-tokenizers combined with ByteLevel,
and the typed errors for what wordsplit does not run, each against HF ``tokenizers`` itself on
both backends.

Each tokenizer.json is built here from a 3,000-token slice of Qwen3's (tests/data/hf, its first
merges; HF and wordsplit both load it in milliseconds) with the construct under test put in.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import pre_tokenizers

import hf_files
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.bytelevel import BYTE_TO_CHAR
from wordsplit.formats.hf import DIGIT_CLASS, punctuation_class, read_hf_tokenizer_json
from wordsplit.spanners.hf_split import hf_split
from wordsplit.spanners.regex import translate_pattern
from wordsplit.spec import (
    Nfd, Nfkc, Nfkd, NoNormalizer, PrefixSpace, PrefixSpaceStep, RegexSplit, Sequence, SplitProgram,
)

BACKENDS = ("python", "native")

TEXTS = [
    "Hello World 123!",
    "  multiple   spaces\n\nnew lines\t tab \r\n",
    "it's 'S we're I'LL they've",
    "1234567890 x 3.14159 -42 ١٢٣ ৭৮",
    "日本語のテキスト 한국어 中文",
    "שלום עולם مرحبا بالعالم",
    "e\u0301 a\u0323\u0302 \u1100\u1161\u11a8 Ελληνικά ÜNÏCÖDÉ Straße",
    "\ufb01ne \uff21\uff22\uff23\uff11 x\u00b2 \u2460 \u00bd \u212b \u3392",  # NFKC-sensitive
    "emoji 😀😀 ok 👍🏽 👨‍👩‍👧",
    "ctrl \x00\x01\x1f\x7f\u200b\ufeff end",
    "punct: (a), [b]; {c}! ¿qué? «x» — y… ‹z›",
    " leading space",
    "",
    " ",
    "a",
    "ΟΔΟΣ İstanbul",
]

BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


@pytest.fixture(scope="module")
def small_spec() -> dict:
    """Qwen3's first 3,000 tokens, the merges that make them, one special and one added token."""
    return hf_files.small_spec(added_tokens=hf_files.SMALL_ADDED_TOKENS)


def _spec(base: dict, *, normalizer=None, pre_tokenizer=None) -> dict:
    spec = copy.deepcopy(base)
    spec["normalizer"] = normalizer
    if pre_tokenizer is not None:
        spec["pre_tokenizer"] = pre_tokenizer
    return spec


def _assert_same(hf, vocab, texts=TEXTS) -> None:
    # Added tokens are split out first, so each stretch between them is normalized on its own.
    texts = [*texts, "a<think>B C<|endoftext|> d", "<think> x\u00b2"]
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in texts:
            expected = hf.encode(text, add_special_tokens=False).ids
            assert tok.encode(text, allowed_special="all") == expected, (backend, text)


def _seq(*normalizers: dict) -> dict:
    return {"type": "Sequence", "normalizers": list(normalizers)}


NORMALIZERS = {
    "nfd": {"type": "NFD"},
    "nfkc": {"type": "NFKC"},
    "nfkd": {"type": "NFKD"},
    "lowercase": {"type": "Lowercase"},
    "strip-both": {"type": "Strip", "strip_left": True, "strip_right": True},
    "strip-right": {"type": "Strip", "strip_left": False, "strip_right": True},
    "strip-accents": _seq({"type": "NFD"}, {"type": "StripAccents"}),
    "replace-string": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    "replace-regex": {"type": "Replace", "pattern": {"Regex": "\\s+|\\p{N}+"}, "content": " "},
    "prepend": {"type": "Prepend", "prepend": "\u2581"},
    "bert-like": _seq({"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}),
    "nested": _seq(_seq({"type": "NFKC"}, {"type": "Strip", "strip_left": True, "strip_right": False}),
                   {"type": "Replace", "pattern": {"String": "a"}, "content": "AA"}),
    "single-nfkc-in-sequence": _seq({"type": "NFKC"}),
}


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_normalizers_match_hf(small_spec, tmp_path, name):
    spec = _spec(small_spec, normalizer=NORMALIZERS[name])
    hf, vocab = hf_files.load_both(spec, tmp_path)
    if name in ("nfd", "nfkc", "nfkd", "single-nfkc-in-sequence"):
        assert vocab.normalizer in (Nfd(), Nfkc(), Nfkd())  # a plain form: native on both backends
        assert TokenizerOptions(backend="native").build(vocab).native
    else:
        assert isinstance(vocab.normalizer, Sequence)  # a program of HF's steps
    _assert_same(hf, vocab)


@pytest.mark.parametrize("use_regex", [True, False])
@pytest.mark.parametrize("nested", [False, True])
def test_byte_level_add_prefix_space_matches_hf(small_spec, tmp_path, use_regex, nested):
    byte_level = {**BYTE_LEVEL, "add_prefix_space": True, "use_regex": use_regex}
    pre = {"type": "Sequence", "pretokenizers": [byte_level]} if nested else byte_level
    for i, normalizer in enumerate([None, NORMALIZERS["strip-both"], NORMALIZERS["prepend"]]):
        hf, vocab = hf_files.load_both(_spec(small_spec, normalizer=normalizer, pre_tokenizer=pre), tmp_path / str(i))
        assert isinstance(vocab.normalizer, Sequence) and vocab.normalizer.normalizers[-1] == PrefixSpace()
        _assert_same(hf, vocab)


def test_add_prefix_space_after_other_steps_matches_hf(small_spec, tmp_path):
    """After other steps, add_prefix_space is a split-program step, not the normalizer's."""
    pre = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True},
                                                {**BYTE_LEVEL, "add_prefix_space": True}]}
    hf, vocab = hf_files.load_both(_spec(small_spec, pre_tokenizer=pre), tmp_path)
    program = vocab.pipeline.spanner
    assert isinstance(program, SplitProgram) and PrefixSpaceStep() in program.steps and vocab.pattern is None
    assert vocab.normalizer == NoNormalizer()
    _assert_same(hf, vocab)


PRE_STEPS = {
    "digits": [{"type": "Digits", "individual_digits": False}],
    "digits-individual": [{"type": "Digits", "individual_digits": True}],
    **{f"punctuation-{b}": [{"type": "Punctuation", "behavior": b}]
       for b in ("Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")},
    "digits-then-punctuation": [{"type": "Digits", "individual_digits": True},
                                {"type": "Punctuation", "behavior": "Isolated"}],
    "split-then-digits": [{"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "MergedWithNext",
                           "invert": False},
                          {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}]}],
}


@pytest.mark.parametrize("use_regex", [True, False])
@pytest.mark.parametrize("name", sorted(PRE_STEPS))
def test_pre_tokenizers_before_byte_level_match_hf(small_spec, tmp_path, name, use_regex):
    pre = {"type": "Sequence", "pretokenizers": [*PRE_STEPS[name], {**BYTE_LEVEL, "use_regex": use_regex}]}
    hf, vocab = hf_files.load_both(_spec(small_spec, normalizer={"type": "NFKC"}, pre_tokenizer=pre), tmp_path)
    assert isinstance(vocab.pipeline.spanner, SplitProgram)
    # Isolated steps whose regexes the native core runs are a native regex sequence, other
    # behaviors the native split program: every stage native.
    assert TokenizerOptions(backend="native").build(vocab).native
    _assert_same(hf, vocab)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "Z", "é", " ", "  ", "\n", "1", "23", "٣", "!", "...", "(", "»", "'s", "日本",
                                 "😀", "\t", "_", "-", "\u00b2"]), max_size=30).map("".join))
def test_native_regex_sequence_equals_the_python_spanner(text):
    """The native regex sequence that runs an Isolated split program gives the pieces of the
    Python hf-split spanner (checked through the ids of both backends)."""
    for tok_native, tok_python in _SEQUENCE_TOKENIZERS:
        assert tok_native.encode(text) == tok_python.encode(text)


def _sequence_tokenizers():
    from wordsplit import Vocab
    from wordsplit.patterns import GPT2_ORIGINAL_PATTERN
    from wordsplit.spec import PipelineSpec
    from wordsplit.split_programs import split_program

    pairs = []
    for patterns in ([DIGIT_CLASS, GPT2_ORIGINAL_PATTERN], [punctuation_class(), DIGIT_CLASS]):
        program = split_program([{"pattern": p, "behavior": "Isolated", "invert": False} for p in patterns])
        # GPT-2's ranks merge across the pieces' boundaries ("23", "...", " 1"), so different
        # pieces give different ids
        vocab = Vocab(name="gpt2-split", ranks=load_vocab("gpt2").ranks, pipeline=PipelineSpec(spanner=program))
        native = TokenizerOptions(backend="native").build(vocab)
        assert native.native
        pairs.append((native, TokenizerOptions(backend="python").build(vocab)))
    return pairs


_SEQUENCE_TOKENIZERS = _sequence_tokenizers()


def _hf_class_members(oracle, code_points: list[int]) -> set[int]:
    """The code points ``oracle`` (a char-predicate pre-tokenizer, Isolated) cuts out alone."""
    text = "".join("a" + chr(cp) for cp in code_points)
    return {ord(piece) for piece, _ in oracle.pre_tokenize_str(text) if len(piece) == 1 and piece != "a"}


ALL_CODE_POINTS = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF and cp != ord("a")]


@pytest.mark.parametrize("kind", ["digits", "punctuation"])
def test_character_classes_on_every_code_point(kind):
    """Digits' and Punctuation's classes equal HF's predicates (Rust's is_numeric; ASCII
    punctuation + unicode_categories' P) on all 1,114,111 other code points."""
    oracle, pattern = {
        "digits": (pre_tokenizers.Digits(individual_digits=True), DIGIT_CLASS),
        "punctuation": (pre_tokenizers.Punctuation("isolated"), punctuation_class()),
    }[kind]
    compiled = regex.compile(translate_pattern(pattern))
    ours = {ord(ch) for ch in compiled.findall("".join(map(chr, ALL_CODE_POINTS)))}  # (one character each)
    expected = _hf_class_members(oracle, ALL_CODE_POINTS)
    assert not ours ^ expected, sorted(f"U+{cp:04X}" for cp in ours ^ expected)[:20]


@pytest.mark.parametrize("behavior", ["Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous", "Removed"])
def test_punctuation_behaviors_equal_hf_pre_tokenizer(behavior):
    oracle = pre_tokenizers.Punctuation(behavior.lower().replace("withp", "_with_p").replace("withn", "_with_n"))
    compiled = regex.compile(translate_pattern(punctuation_class()))
    for text in [*TEXTS, "a..b!?c", "...", "(x)"]:
        expected = [piece for piece, _ in oracle.pre_tokenize_str(text)]
        assert [text[s:e] for s, e in hf_split(compiled, text, behavior, False) if s < e] == expected, text


def _write(tmp_path: Path, spec: dict) -> Path:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec))
    return path


@pytest.mark.parametrize("change, construct", [
    ({"normalizer": {"type": "Nmt"}}, "Nmt"),
    ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Precompiled",
                                                                           "precompiled_charsmap": ""}]}},
     "Precompiled"),
    ({"normalizer": {"type": "ByteLevel"}}, "ByteLevel"),
    ({"pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}},
     "Metaspace"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [BYTE_LEVEL, {"type": "Digits",
                                                                          "individual_digits": True}]}},
     "then one ByteLevel"),
    # (without ByteLevel the symbols are characters, which the file's ByteLevel decoder does not read)
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}]}},
     "decoder 'ByteLevel' with this BPE model"),
    ({"pre_tokenizer": {"type": "BertPreTokenizer"}}, "decoder 'ByteLevel' with this BPE model"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "UnicodeScripts"}, BYTE_LEVEL]}},
     "UnicodeScripts"),
])
def test_unsupported_constructs_are_typed_errors_naming_them(small_spec, tmp_path, change, construct):
    spec = {**copy.deepcopy(small_spec), **change}
    with pytest.raises(UnsupportedTokenizerError, match=construct) as excinfo:
        load_vocab(_write(tmp_path, spec), cache_dir=tmp_path)
    assert "tokenizer.json" in str(excinfo.value)


def _nested(depth: int) -> dict:
    """A pre-tokenizer ``Sequence`` holding another ``depth`` times, ByteLevel innermost."""
    step = BYTE_LEVEL
    for _ in range(depth):
        step = {"type": "Sequence", "pretokenizers": [step]}
    return step


@pytest.mark.parametrize("change, part", [
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": -1}}, "pre_tokenizer"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": None}}, "pre_tokenizer"),
    ({"pre_tokenizer": {"type": "Sequence"}}, "pre_tokenizer"),
    ({"pre_tokenizer": _nested(40)}, "pre_tokenizer"),
    ({"decoder": {"type": "Sequence", "decoders": "ByteLevel"}}, "decoder"),
])
def test_a_sequence_without_a_list_of_steps_is_a_format_error(small_spec, tmp_path, change, part):
    # Read before anything else looks at the file's parts: whether the file is SentencePiece-style
    # (its pre-tokenizer and decoder steps) is asked first.
    spec = {**copy.deepcopy(small_spec), **change}
    with pytest.raises(VocabFormatError, match=f"{part} Sequence needs a list"):
        read_hf_tokenizer_json(json.dumps(spec).encode())


@pytest.mark.parametrize("model", [
    {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
     "vocab": {"[UNK]": 0}},
    {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]], "byte_fallback": False},
    {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"},
])
def test_other_models_are_typed_errors_naming_the_model(small_spec, tmp_path, model):
    spec = {**copy.deepcopy(small_spec), "model": model}
    with pytest.raises(UnsupportedTokenizerError, match=model["type"]):
        load_vocab(_write(tmp_path, spec), cache_dir=tmp_path)


def test_trim_offsets_is_accepted_either_way(small_spec, tmp_path):
    for trim in (False, True):
        spec = _spec(small_spec, pre_tokenizer={**BYTE_LEVEL, "trim_offsets": trim})
        hf, vocab = hf_files.load_both(spec, tmp_path / str(trim))
        assert isinstance(vocab.pipeline.spanner, RegexSplit)  # ByteLevel alone: GPT-2's scanner pattern
        _assert_same(hf, vocab)


# Bytes the vocabulary of the next tests lacks: two ASCII letters, the space, the newline, the
# lead byte of é/ü/ß and that of emoji.
LACKED = b"xQ \n\xc3\xf0"


def _lacking_bytes(small_spec, unk_token=None) -> HFTokenizer:
    """A byte-level BPE built with the HF API from the Qwen3 slice, without the tokens of LACKED
    (and the merges that use them), as GPT-NeoX's vocabulary lacks some bytes."""
    from tokenizers import models

    lacked = {BYTE_TO_CHAR[b] for b in LACKED}
    vocab = {text: i for text, i in small_spec["model"]["vocab"].items() if text not in lacked}
    merges = [tuple(m) for m in small_spec["model"]["merges"] if not lacked & set(m)]
    if unk_token is not None:
        vocab[unk_token] = 3002
    hf = HFTokenizer(models.BPE(vocab, merges, unk_token=unk_token))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    return hf


@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from("axQ bé\nß1ü😀\t.") | st.characters(codec="utf-8"), max_size=30))
def test_bytes_without_a_token_are_dropped_before_merging_as_hf_does(small_spec, tmp_path_factory, text):
    """A byte no token spells is dropped from its piece before merging: HF's rule (with no
    unk_token), on both backends and every encoder."""
    hf = _lacking_bytes(small_spec)
    vocab = _lacking_vocab(small_spec, tmp_path_factory)
    expected = hf.encode(text, add_special_tokens=False).ids
    for backend in BACKENDS:
        # (Without the merges of those bytes, the merge list is not in merged-id order: backtrack
        # refuses it. llama.cpp's files that lack bytes run it in test_llamacpp_parity.)
        for encoder in ("buffer-sweep", "heap-merge", *(("backtrack",) if vocab.merges is None else ())):
            tok = TokenizerOptions(backend=backend, encoder=encoder).build(vocab)
            assert tok.encode_ordinary(text) == expected, (backend, encoder, text)


_LACKING: dict = {}


def _lacking_vocab(small_spec, tmp_path_factory):
    """The wordsplit Vocab of :func:`_lacking_bytes`'s tokenizer.json (loaded once)."""
    if "vocab" not in _LACKING:
        path = tmp_path_factory.mktemp("lacking") / "tokenizer.json"
        path.write_text(_lacking_bytes(small_spec).to_str())
        _LACKING["vocab"] = load_vocab(path, cache_dir=path.parent / "cache")
    return _LACKING["vocab"]


def test_a_vocabulary_lacking_bytes_loads_and_matches_hf(small_spec, tmp_path_factory):
    hf, vocab = _lacking_bytes(small_spec), _lacking_vocab(small_spec, tmp_path_factory)
    assert vocab.missing_bytes == bytes(sorted(LACKED))
    assert [t for t in hf.encode("axb", add_special_tokens=False).tokens] == ["ab"]
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in [*TEXTS, "axb", "x", "\n\n", "QxQ", "ü😀ß"]:
            assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, (backend, text)
        assert tok.encode_ordinary("x Q\n") == []  # only bytes without tokens: no ids
    tiny = b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}'
    only_a = read_hf_tokenizer_json(tiny, source="tiny/tokenizer.json")
    assert len(only_a.missing_bytes) == 255
    assert TokenizerOptions().build(only_a).encode_ordinary("banana") == [0, 0, 0]


def test_missing_bytes_with_an_unk_token_are_that_token_as_hf_does(small_spec, tmp_path):
    """With an unk_token, HF encodes a byte without a token as that token (merges do not cross
    it); the file loads from disk (through the parsed-vocab cache, twice) with the same ids.
    tests/test_unk_bytes.py covers offsets, decode, fuse_unk and every encoder."""
    hf = _lacking_bytes(small_spec, unk_token="<unk>")
    assert hf.encode("axb", add_special_tokens=False).tokens == ["a", "<unk>", "b"]
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str())
    for _ in range(2):
        vocab = load_vocab(path, cache_dir=tmp_path)
        assert vocab.unk_token_id == 3002 and not vocab.fuse_unk
        for backend in BACKENDS:
            tok = TokenizerOptions(backend=backend).build(vocab)
            for text in ("axb", "a\nb\n\nxQ", "Qué\n\tmañana\n", "\n" * 5):
                assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("flag", ["lstrip", "rstrip", "single_word"])
def test_added_token_flags_load(small_spec, tmp_path, flag):
    """Each flag loads and keeps HF's ids (tests/test_hf_added_token_flags.py has the cases)."""
    spec = copy.deepcopy(small_spec)
    spec["added_tokens"][1][flag] = True
    hf, vocab = hf_files.load_both(spec, tmp_path)
    assert vocab.literal_flags == {"<think>": {"lstrip": 1, "rstrip": 2, "single_word": 4}[flag]}
    _assert_same(hf, vocab, [" <think> a<think>b ", "x <think>\t<think>"])


def test_normalized_added_tokens(small_spec, tmp_path):
    """normalized=true: found in the normalized text by the normalized content, under a
    Unicode form and normalizer programs alike (tests/test_hf_normalized_added.py has the cases)."""
    spec = copy.deepcopy(small_spec)
    spec["added_tokens"][1]["normalized"] = True
    for name, normalizer in [("nfkc", {"type": "NFKC"}), ("prepend", NORMALIZERS["prepend"]),
                             ("lowercase", NORMALIZERS["lowercase"])]:
        hf, vocab = hf_files.load_both(_spec(spec, normalizer=normalizer), tmp_path / name)
        _assert_same(hf, vocab, ["<think>x</think>", "a <THINK> b<Think>", "<think>"])


def test_generated_punctuation_data_is_up_to_date():
    """The generator reads its source crate from cargo's registry, fetching it if missing."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "tools" / "gen_hf_char_tables.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- vocab entries no byte-level word spells (allenai's OLMo dolma v1.5 tokenizer.json) ---------

OLMO = Path(__file__).parent / "data" / "hf" / "olmo-dolma-v1_5-tokenizer.json.gz"
OLMO_PIECES = st.sampled_from([" ", "  ", "   ", "\t", "\n", "a", "b", " the", "x", "é", "😀", "      ",
                               "|||EMAIL_ADDRESS|||", "|||PHONE_NUMBER|||", "<|endoftext|>", "\u3000"])


@pytest.mark.parametrize("backend", ["python", "native"])
@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(OLMO_PIECES, max_size=16))
def test_olmo_space_entries_load_as_hf_treats_them(backend, pieces):
    """Its vocab lists runs of plain spaces (ids 50254-50276), which byte-level BPE never makes;
    HF reaches them through the added tokens of the same text, and so does wordsplit."""
    tok, hf = _olmo(backend)
    text = "".join(pieces)
    ids = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == ids
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


_OLMO: dict = {}


def _olmo(backend):
    if backend not in _OLMO:
        import gzip

        _OLMO[backend] = (TokenizerOptions(backend=backend).build(load_vocab(OLMO)),
                          HFTokenizer.from_str(gzip.decompress(OLMO.read_bytes()).decode("utf-8")))
    return _OLMO[backend]


def test_an_entry_no_word_spells_counts_towards_n_vocab_only(small_spec):
    """Without an added token naming it, such an entry is never encoded (as in HF) and its id is
    unused: decoding it is an UnknownTokenError (HF would give its text)."""
    from wordsplit.errors import UnknownTokenError

    spec = copy.deepcopy(small_spec)
    spec["added_tokens"] = []
    top = len(spec["model"]["vocab"])
    spec["model"]["vocab"]["   "] = top
    vocab = read_hf_tokenizer_json(json.dumps(spec).encode())
    assert vocab.n_vocab == top + 1 and top not in vocab.ranks.values()
    tok = TokenizerOptions(backend="python").build(vocab)
    with pytest.raises(UnknownTokenError, match="unused"):
        tok.decode([top])


@pytest.mark.parametrize("merges, rank_based", [
    # Token-rank BPE makes "abc" from "a" + "bc" (its lowest pair, "bc", first): HF lists
    # "ab" + "c", never merges "a" + "bc", and leaves "abc" as two tokens.
    ([("b", "c"), ("a", "b"), ("ab", "c")], False),
    # Here token-rank BPE makes "abc" from the pair the list names: the two rules agree.
    ([("a", "b"), ("ab", "c"), ("b", "c")], True),
])
def test_merges_in_id_order_are_rank_based_only_where_token_rank_bpe_makes_the_listed_pairs(
        tmp_path, merges, rank_based):
    from tokenizers import models

    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    vocab.update({left + right: 256 + i for i, (left, right) in enumerate(merges)})
    hf = HFTokenizer(models.BPE(vocab, merges))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str())
    texts = ["abc", "xabcabc", "abcbc", "aabbcc", "bcab", "cabc ab abc"]
    for read in (load_vocab(path, cache_dir=tmp_path / "cache"), read_hf_tokenizer_json(path.read_bytes())):
        assert (read.merges is None) == rank_based
        for backend in BACKENDS:
            for encoder in ("buffer-sweep", "heap-merge"):
                tok = TokenizerOptions(backend=backend, encoder=encoder).build(read)
                for text in texts:
                    assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, (
                        backend, encoder, text)
