"""WordPiece and WordLevel models (BERT, MiniLM, ...) and HF's BPE over characters (CLIP's
``</w>``, BPE with ``[UNK]``): exact against HF ``tokenizers`` on the real files of
tests/data/wordpiece/ (live, on every text below and on hypothesis' texts), and
against transformers for BERT's vocab.txt; offsets, decoding, streaming and bad input."""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import EncodeInputError, UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.bert_vocab import read_bert_vocab
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.spec import BertNormalizer, CharacterBpe, NoDecoder, WordLevel, WordPiece, WordPieceDecoder

DATA = Path(__file__).parent / "data" / "wordpiece"
CORPUS = Path(__file__).parent / "data" / "corpus"

# The word-model files (the folder's BPE files are other models' tests).
FILES = {
    "all-MiniLM-L6-v2": DATA / "all-MiniLM-L6-v2" / "tokenizer.json.gz",
    "bert-base-chinese": DATA / "bert-base-chinese" / "tokenizer.json.gz",
    "bert-base-multilingual-cased": DATA / "bert-base-multilingual-cased" / "tokenizer.json.gz",
    "fastberttokenizer-issue-100": DATA / "fastberttokenizer-issue-100" / "tokenizer.json.gz",
    "bert-wiki": DATA / "bert-wiki" / "tokenizer.json.gz",
    "genslm-codon-wordlevel": DATA / "genslm-codon-wordlevel" / "tokenizer.json",
    # HF's BPE with the options byte-level BPE lacks (CharacterBpe)
    "clip-vit-base-patch32": DATA / "clip-vit-base-patch32" / "tokenizer.json.gz",
    "tokenizer-wiki": DATA / "tokenizer-wiki" / "tokenizer.json.gz",
    "tortoise": DATA / "tortoise" / "tokenizer.json",
}
BACKENDS = ["python", "native"]

# What BERT's stages decide: accents and case, CJK, control and format characters, U+FFFD,
# white space of every kind, punctuation runs, words over 100 characters, words no token spells.
TEXTS = [
    "", " ", "\t\n\r", "Hello, world!", "Héllo WORLD naïve café Ångström İstanbul ǅ", "ÉCOLE ÉLÈVE Straße ß ẞ",
    "中文字符 mixed with English 日本語のテキスト 한국어", "𠀀𪜀 CJK extension B",
    "don't stop U.S.A. ...!!!??? «quotes» „x“",
    "a" * 250, "supercalifragilisticexpialidocious antidisestablishmentarianism", "x" * 99 + " " + "y" * 100,
    "\x00\ufffd\u200b zero\u200dwidth\u00ad soft\ufeffbom \u202e rtl", "tab\tnew\nline\r\n\u2028\u2029 \u3000 \xa0nbsp",
    "ﬁ ligature Ⅻ ① ＦＵＬＬ ＷＩＤＴＨ", "emoji 😀 🦀🦀 👩‍👩‍👧‍👦 🇫🇷", "[CLS] [SEP] [MASK] text [UNK] [PAD]",
    "123,456.78 numbers 1st 2nd ٣٤٥ ४५६", "e\u0301 combining a\u0308 \u0300alone", "Zalgo z̷̢͔a̴l̸g̶o̵",
    "09.52 англ. added tokens", "ATGGCGTAA codons ATG GCG TAA", "\U000e0041 tags \U0010fffd private use",
    "def f(x):\n    return x ** 2  # square\n", "http://example.com/path?q=1&r=2#frag email@example.com",
]


def corpus_lines(limit: int = 150) -> list[str]:
    lines = []
    for name in ("prose", "code", "multilingual", "adv_whitespace", "adv_random_unicode"):
        text = gzip.decompress((CORPUS / f"{name}.txt.gz").read_bytes()).decode("utf-8")
        lines += [line for line in text.split("\n") if line][:limit]
    return lines


ALL_TEXTS = TEXTS + corpus_lines()


def read_json(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def hf_tokenizer(path: Path) -> tokenizers.Tokenizer:
    """HF's tokenizer of the file, without the padding and truncation some files set."""
    tok = tokenizers.Tokenizer.from_str(read_json(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


@pytest.fixture(scope="module", params=sorted(FILES))
def name(request) -> str:
    return request.param


def build(path: Path, backend: str):
    return TokenizerOptions(backend=backend).build(load_vocab(path))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ids_are_hfs_on_every_text(name, backend):
    hf, tok = hf_tokenizer(FILES[name]), build(FILES[name], backend)
    expected = [e.ids for e in hf.encode_batch(ALL_TEXTS, add_special_tokens=False)]
    got = [tok.encode(text, allowed_special="all") for text in ALL_TEXTS]
    mismatches = [(t, g, e) for t, g, e in zip(ALL_TEXTS, got, expected) if g != e]
    assert not mismatches, mismatches[:3]
    assert tok.encode_batch(ALL_TEXTS, allowed_special="all") == expected


def test_the_pipeline_is_the_files(name):
    pipeline = load_vocab(FILES[name]).pipeline
    # Every stage of every file runs in the core on the native backend (its encoder, CLIP's
    # normalizer among the normalizers).
    assert build(FILES[name], "native")._engine.native
    if name == "genslm-codon-wordlevel":
        assert pipeline.model == WordLevel("[UNK]") and pipeline.decoder == NoDecoder()
        return
    if name in ("clip-vit-base-patch32", "tokenizer-wiki", "tortoise"):
        clip = name.startswith("clip")
        assert pipeline.model == CharacterBpe("<|endoftext|>" if clip else "[UNK]", False, "</w>" if clip else "", clip)
        return
    assert isinstance(pipeline.model, WordPiece)
    if name == "all-MiniLM-L6-v2":
        assert pipeline.normalizer == BertNormalizer()  # (strip_accents: null follows lowercase)
        assert pipeline.decoder == WordPieceDecoder()
    if name == "bert-base-multilingual-cased":
        assert pipeline.normalizer == BertNormalizer(strip_accents=False, lowercase=False)


def test_decode_is_hfs(name):
    hf, tok = hf_tokenizer(FILES[name]), build(FILES[name], "python")
    for text in ALL_TEXTS:
        ids = hf.encode(text).ids  # (the file's special tokens too)
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False), text
        assert tok.decode_bytes(ids) == hf.decode(ids, skip_special_tokens=False).encode("utf-8")


def test_streaming_decode_gives_the_whole_decode(name):
    hf, tok = hf_tokenizer(FILES[name]), build(FILES[name], "python")
    for text in TEXTS:
        ids = hf.encode(text).ids
        stream = tok.decode_stream()
        pieces = [stream.step(i) for i in ids]
        assert "".join(p for p in pieces if p) == tok.decode(ids), text


@pytest.mark.parametrize("backend", BACKENDS)
def test_offsets_are_hfs(name, backend):
    hf, tok = hf_tokenizer(FILES[name]), build(FILES[name], backend)
    for text in TEXTS + corpus_lines(40):
        encoding = hf.encode(text, add_special_tokens=False)
        ours = tok.encode_with_offsets(text, allowed_special="all")
        assert (ours.ids, ours.char_offsets) == (encoding.ids, encoding.offsets), text


# Characters of the kinds BERT's stages treat apart, for hypothesis' texts.
ALPHABET = st.sampled_from(list(
    "aAzZ éÉßİıǅ中文字𠀀한あ.,!?'\"-_()[]#@$%^&*~`|\\/ 0123456789٣\t\n\r\u3000\xa0\u200b\u200d\u00ad\ufeff\x00\x01"
    "\ufffd\u0301\u0308\U0001f980\u2028ﬁⅫ①Ｆ##[UNK]"
))


@pytest.mark.parametrize("file", ["all-MiniLM-L6-v2", "bert-base-multilingual-cased"])
@settings(max_examples=150, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map("".join))
def test_hypothesis_texts_are_hfs(file, text):
    hf, tok = _cached(file)
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


_BUILT: dict = {}


def _cached(file: str):
    if file not in _BUILT:
        _BUILT[file] = hf_tokenizer(FILES[file]), build(FILES[file], "python")
    return _BUILT[file]


# -- BERT's vocab.txt --------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["all-MiniLM-L6-v2", "bert-base-multilingual-cased", "bert-base-chinese"])
def test_vocab_txt_is_transformers_bert(folder, tmp_path):
    transformers = pytest.importorskip("transformers")
    source = DATA / folder
    with gzip.open(source / "vocab.txt.gz") as compressed, open(tmp_path / "vocab.txt", "wb") as out:
        shutil.copyfileobj(compressed, out)
    cased = folder != "all-MiniLM-L6-v2"
    config = source / "tokenizer_config.json"
    if config.exists():
        shutil.copy(config, tmp_path / "tokenizer_config.json")
    else:
        (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": not cased,
                                                                 "tokenizer_class": "BertTokenizer"}))
    reference = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    tok = TokenizerOptions(backend="python").build(load_vocab(tmp_path / "vocab.txt"))
    for text in TEXTS + corpus_lines(60):
        expected = reference(text, add_special_tokens=False)["input_ids"]
        assert tok.encode(text, allowed_special="all") == expected, text


def test_a_bare_vocab_txt_needs_its_casing(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n")
    with pytest.raises(VocabFormatError, match="lowercase=True"):
        load_vocab(tmp_path / "vocab.txt")
    vocab = load_vocab(tmp_path / "vocab.txt", lowercase=True)
    assert TokenizerOptions(backend="python").build(vocab).encode("HELLO there") == [5, 1]


def test_a_vocab_txt_without_its_special_tokens_is_refused():
    with pytest.raises(VocabFormatError, match="'\\[CLS\\]'"):
        read_bert_vocab(b"[PAD]\n[UNK]\n[SEP]\n[MASK]\nhello\n", source="vocab.txt", name="x", lowercase=True)


# -- bad input and limits ----------------------------------------------------------------------------


def _file(model: dict, **rest) -> dict:
    return {"model": model, "normalizer": None, "pre_tokenizer": {"type": "BertPreTokenizer"},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}, **rest}


def test_a_piece_that_needs_a_missing_unknown_token_raises():
    vocab = read_hf_tokenizer_json(json.dumps(_file({"type": "WordPiece", "vocab": {"a": 0}})).encode(),
                                   source="t.json")
    tok = TokenizerOptions(backend="python").build(vocab)
    assert tok.encode("a a") == [0, 0]
    with pytest.raises(EncodeInputError, match="unknown token '\\[UNK\\]'"):
        tok.encode("b")


@pytest.mark.parametrize("model, error", [
    ({"type": "WordPiece", "vocab": {"a": "0"}}, VocabFormatError),
    ({"type": "WordPiece", "vocab": {}}, VocabFormatError),
    ({"type": "WordPiece", "vocab": {"a": 0, "b": 0}}, VocabFormatError),
    ({"type": "WordPiece", "vocab": {"a": 0}, "max_input_chars_per_word": -1}, VocabFormatError),
    ({"type": "WordPiece", "vocab": {"a": 0}, "continuing_subword_prefix": 3}, VocabFormatError),
])
def test_malformed_word_models_are_refused(model, error):
    with pytest.raises(error):
        read_hf_tokenizer_json(json.dumps(_file(model)).encode(), source="t.json")


def test_bpe_dropout_is_refused_as_random():
    spec = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1},
            "pre_tokenizer": {"type": "Whitespace"}}
    with pytest.raises(UnsupportedTokenizerError, match="dropout=0.1 makes a text's ids random"):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="t.json")


def test_a_byte_level_pre_tokenizer_before_wordpiece_is_refused():
    spec = _file({"type": "WordPiece", "vocab": {"a": 0}}, pre_tokenizer={"type": "ByteLevel"})
    with pytest.raises(UnsupportedTokenizerError, match="ByteLevel pre-tokenizer"):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="t.json")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_megabyte_word_or_run_stays_linear(backend):
    tok = build(FILES["all-MiniLM-L6-v2"], backend)
    for text in ("a" * (1 << 20), "!" * (1 << 20), "ab " * (1 << 18), "中" * (1 << 18)):
        start = time.perf_counter()
        ids = tok.encode(text)
        assert time.perf_counter() - start < 20, text[:5]
        assert ids


# -- the goldens (tools/gen_family_goldens.py, HF tokenizers 0.23.3) ----------------------------------

GOLDEN = Path(__file__).parent / "golden"
GOLDENS = sorted([*GOLDEN.glob("wordpiece-*.json.gz"), *GOLDEN.glob("wordlevel-*.json.gz"),
                  *GOLDEN.glob("bpe-*.json.gz")])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("golden", GOLDENS, ids=lambda path: path.name.removesuffix(".json.gz"))
def test_goldens(golden, backend):
    recorded = json.loads(gzip.decompress(golden.read_bytes()))
    tok = build(Path(__file__).parent.parent / recorded["file"], backend)
    assert tok.vocab.n_vocab == recorded["n_vocab"]
    cases = recorded["cases"]
    assert [tok.encode(case["text"], allowed_special="all") for case in cases] == [case["ids"] for case in cases]
    for case in cases:
        assert tok.decode(case["ids"]) == case["decoded"], case["text"]
        with_specials = case["with_specials"]
        assert tok.decode(with_specials["ids"]) == with_specials["decoded"], case["text"]
    for case in recorded["decode_cases"]:
        assert tok.decode(case["ids"]) == case["decoded"], case["ids"]


def test_explain_shows_the_longest_matches(capsys):
    from wordsplit.cli import main
    from wordsplit.explain import explain, format_explanation

    tok = build(FILES["all-MiniLM-L6-v2"], "python")
    expl = explain(tok, "Unaffable, naïve!")
    assert expl.ids == tok.encode("Unaffable, naïve!")
    first = expl.pieces[0]
    assert first.kind == "wordpiece" and first.matches[0].tried[-1] == "una" and first.matches[1].start == 3
    assert "at 3: ##ffable ##ffabl ##ffab (no tokens), ##ffa = 20961" in format_explanation(expl)
    assert main(["explain", "--vocab", str(FILES["all-MiniLM-L6-v2"]), "x" * 101]) == 0
    assert "longer than max_input_chars_per_word: the unknown token" in capsys.readouterr().out
