"""llama.cpp's WordPiece (``bert``, its WPM tokenizer) and Unigram (``t5``, its UGM tokenizer)
GGUF vocabularies: wordsplit's stages against step-by-step references of llama.cpp's own loops
(``llm_tokenizer_wpm_session``, ``llm_tokenizer_ugm_session`` in llama-vocab.cpp, written here
a byte and a code point at a time from the file's raw metadata), the native backend against the
Python one, llama.cpp's character tables, and what the readers refuse.

On the native backend every stage is the core's twin of the Python one
(tests/test_llamacpp_native.py holds each to the Python one). tests/test_llamacpp_goldens.py
holds both files to
llama.cpp's library itself, tests/test_llamacpp_parity.py bert-bge to llama.cpp's shipped cases.
"""

from __future__ import annotations

import base64
import functools
import struct
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import BACKENDS
from llamacpp_cases import tokenizer_only_gguf, unpacked
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.charsmap import read_charsmap
from wordsplit.formats.gguf import read_gguf_metadata
from wordsplit.normalizers import _llamacpp_unicode as tables
from wordsplit.normalizers.llamacpp import LlamaCppBertNormalizer, LlamaCppUnigramNormalizer
from wordsplit.spanners.llamacpp import LlamaCppWordPieceSpanner
from wordsplit.spec import LlamaCppBertNormalizer as BertStage
from wordsplit.spec import LlamaCppUnigramNormalizer as UnigramStage
from wordsplit.spec import LlamaCppWordPieceSplit

BERT = "ggml-vocab-bert-bge.gguf.xz"
NOMIC = "ggml-vocab-nomic-bert-moe.gguf.xz"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@pytest.fixture(scope="module")
def unpack_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("llamacpp-word-models")


@functools.lru_cache(maxsize=None)
def _metadata(path) -> dict:
    return read_gguf_metadata(path.read_bytes())


@pytest.fixture(scope="module")
def files(unpack_dir):
    """``files(name)``: ``(metadata, {backend: tokenizer})`` of tests/data/gguf/<name>."""

    @functools.lru_cache(maxsize=None)
    def load(name):
        path = unpacked(name, unpack_dir)
        vocab = load_vocab(path)
        return _metadata(path), {backend: TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS}

    return load


# -- llama.cpp's tables, looked up the plain way ------------------------------------------------

@functools.lru_cache(maxsize=None)
def _set(ranges: tuple) -> frozenset:
    return frozenset(cp for a, b in ranges for cp in range(a, b + 1))


def _in(ranges: tuple, cp: int) -> bool:
    return cp in _set(ranges)


def _utf8_length(lead: int) -> int:
    """llama.cpp's ``unicode_len_utf8``: by the high four bits of a code point's first byte."""
    return (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)[lead >> 4]


_NFD = {cp: to for a, b, to in tables.NFD_FIRST for cp in range(a, b + 1)}
_LOWER = dict(tables.LOWERCASE)
_WHITESPACE = {*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F,
               0x3000}
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def wpm_words(text: str, lowercase: bool = True, strip_accents: bool = True) -> list[str]:
    """llama.cpp's ``preprocess``: its words, a code point at a time."""
    words = [""]
    for char in text:
        cp = ord(char)
        if strip_accents:
            cp = _NFD.get(cp, cp)
        if cp in _WHITESPACE:
            if words[-1]:
                words.append("")
            continue
        if cp in (0, 0xFFFD) or _in(tables.CONTROL, cp) or (strip_accents and _in(tables.MARK, cp)):
            continue
        out = chr(_LOWER.get(cp, cp) if lowercase else cp)
        if _in(tables.PUNCTUATION, cp) or (cp < 0x7F and _in(tables.SYMBOL, cp)) or _in(_CJK, cp):
            if words[-1]:
                words.append("")
            words[-1] = out
            words.append("")
        else:
            words[-1] += out
    if not words[-1]:
        words.pop()
    return words


def wpm_ids(metadata: dict, text: str) -> list[int]:
    """llama.cpp's WPM tokenize: per word, ``▁`` + the word, the longest token at each byte."""
    tokens = metadata["tokenizer.ggml.tokens"]
    by_text = {t.encode(): i for i, t in enumerate(tokens)}
    longest = max(len(t.encode()) for t in tokens)
    unk = metadata.get("tokenizer.ggml.unknown_token_id", 100)
    out: list[int] = []
    for word in wpm_words(text):
        word1 = ("\u2581" + word).encode()
        first, i = len(out), 0
        while i < len(word1):
            for j in range(min(len(word1), i + longest + 1), i, -1):
                found = by_text.get(word1[i:j])
                if found is not None:
                    out.append(found)
                    i = j
                    break
            else:
                del out[first:]
                break
        if len(out) == first:
            out.append(unk)
    return out


@functools.lru_cache(maxsize=4)
def _rules(raw: bytes) -> tuple[dict, int]:
    """A character map's rules as bytes, and its longest key in bytes."""
    rules = {k.encode(): v.encode() for k, v in read_charsmap(raw).rules.items()} if raw else {}
    return rules, max(map(len, rules), default=0)


def ugm_normalized(text: str, charsmap: bytes, prefix: bool, merge: bool) -> bytes:
    """llama.cpp's UGM ``normalize``: the map's longest key at each byte, then the spaces a
    byte at a time (``prefix``: add_space_prefix, ``merge``: remove_extra_whitespaces)."""
    rules, longest = _rules(charsmap)
    data, out = text.encode(), bytearray()
    in_word = prefixed = False
    i = 0
    while i < len(data):
        key = next((data[i:j] for j in range(min(len(data), i + longest), i, -1) if data[i:j] in rules), None)
        if key is not None:
            piece, i = rules[key], i + len(key)
        else:
            size = _utf8_length(data[i])
            piece, i = data[i:i + size], i + size
        for byte in piece:
            if byte != 0x20:
                if not in_word:
                    in_word = True
                    if (prefix and not prefixed) or merge:
                        out += "\u2581".encode()
                        prefixed = True
                out.append(byte)
            else:
                in_word = False
                if not merge:
                    out += "\u2581".encode()
    return bytes(out)


def _f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


@functools.lru_cache(maxsize=None)
def _charsmap(path) -> bytes:
    return _metadata(path).get("tokenizer.ggml.precompiled_charsmap", b"")


@functools.lru_cache(maxsize=None)
def _ugm_pieces(path) -> tuple[dict, int, float, int]:
    metadata = _metadata(path)
    tokens, scores, types = (metadata[f"tokenizer.ggml.{k}"] for k in ("tokens", "scores", "token_type"))
    searched = (NORMAL, USER_DEFINED, UNUSED)
    pieces = {t.encode(): (i, 0.0 if kind == USER_DEFINED else score)
              for i, (t, score, kind) in enumerate(zip(tokens, scores, types)) if kind in searched}
    lowest = min(score for score, kind in zip(scores, types) if kind == NORMAL)
    return pieces, max(map(len, pieces)), _f32(lowest - 10.0), metadata.get("tokenizer.ggml.unknown_token_id", 2)


def ugm_ids(path, text: str) -> list[int]:
    """llama.cpp's UGM tokenize: Viterbi over the normalized bytes, a code point at a time."""
    pieces, longest, unk_score, unk = _ugm_pieces(path)
    metadata = _metadata(path)
    data = ugm_normalized(text, _charsmap(path), metadata.get("tokenizer.ggml.add_space_prefix", False),
                          metadata.get("tokenizer.ggml.remove_extra_whitespaces", False))
    size = len(data)
    if not size:
        return []
    best = [(unk, 0, -1.7976931348623157e308)] * (size + 1)
    best[0] = (unk, 0, 0.0)
    at = 0
    while at < size:
        char = min(_utf8_length(data[at]), size - at)
        here, single = best[at][2], False
        for end in range(at + 1, min(size, at + longest) + 1):
            found = pieces.get(data[at:end])
            if found is not None:
                single = single or end - at == char
                if here + found[1] > best[end][2]:
                    best[end] = (found[0], at, here + found[1])
        if not single and here + unk_score > best[at + char][2]:
            best[at + char] = (unk, at, here + unk_score)
        at += char
    out, previous_unknown, node = [], False, best[size]
    while True:
        unknown = node[0] == unk
        if not (previous_unknown and unknown):
            out.append(node[0])
        if node[1] == 0:
            break
        previous_unknown, node = unknown, best[node[1]]
    return out[::-1]


# -- the stages against the references ---------------------------------------------------------

# Characters the preprocessing treats apart: case mappings to several code points, accents and
# marks, Hangul, controls, format and private-use characters, NUL and U+FFFD, every white space,
# punctuation, ASCII symbols, CJK and its block edges, full-width forms, the map's outputs with
# spaces (U+FDFA, U+00A8), typed ▁, and code points Unicode 16.0 assigned (undefined here).
ALPHABET = st.sampled_from(list(
    "aAzZ0 9éÉßẞİıǅΣςÅKΩﬁ①⑴㏂\u00a8\ufdfa\u2581.,!?'\"-_()[]{}#@$%^&*~`|\\/+<=>中文字\u3400\u2b81f\U0002b820\U0002b920"
    "\uf900\U0002f800한\u1100\u1161あ\t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u180e\u200b"
    "\u00ad\ufeff\x00\x01\x7f\ufffd\ue000\U000f0000\u0301\u0308\u0323\u0f73Ａｂ\u0897\u1b4e\u1c89\U0001f980"
)) | st.characters(exclude_categories=("Cs",))
TEXTS = st.text(ALPHABET, max_size=40)
STAGES = [BertStage(lowercase=bool(bits & 1), strip_accents=bool(bits & 2)) for bits in range(4)]


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: f"lower{int(s.lowercase)}-strip{int(s.strip_accents)}")
@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_wordpiece_stages_make_llamacpps_words(stage, text):
    normalize = LlamaCppBertNormalizer(stage)
    words = LlamaCppWordPieceSpanner(LlamaCppWordPieceSplit()).split(normalize(text))
    assert words == ["\u2581" + word for word in wpm_words(text, stage.lowercase, stage.strip_accents)]
    normalized, places = normalize.alignment(text)
    assert normalized == normalize(text) and len(places) == len(normalized)
    assert all(text[a:b] == char for char, (a, b, same) in zip(normalized, places) if same)


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: f"lower{int(s.lowercase)}-strip{int(s.strip_accents)}")
def test_every_code_point_normalizes_as_llamacpp(stage):
    chars = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    normalize = LlamaCppBertNormalizer(stage)
    expected = []
    for char in chars:
        cp = ord(char)
        if stage.strip_accents:
            cp = _NFD.get(cp, cp)
        if cp in _WHITESPACE:
            expected.append(chr(cp))
        elif not (cp in (0, 0xFFFD) or _in(tables.CONTROL, cp) or (stage.strip_accents and _in(tables.MARK, cp))):
            expected.append(chr(_LOWER.get(cp, cp) if stage.lowercase else cp))
    assert normalize("".join(chars)) == "".join(expected)


@pytest.mark.parametrize("add_space_prefix", [False, True])
@pytest.mark.parametrize("remove_extra_whitespaces", [False, True])
@settings(max_examples=150, deadline=None)
@given(text=st.text(st.sampled_from(list(" a\u2581\u00a8\ufdfa\u3000\t\u2474x")) | ALPHABET, max_size=30))
def test_unigram_normalizer_is_llamacpps(add_space_prefix, remove_extra_whitespaces, text, unpack_dir):
    """With nomic-bert-moe's character map and with none, every flag: the fast path, the
    aligned one and llama.cpp's loop agree."""
    raw = _charsmap(unpacked(NOMIC, unpack_dir))
    for charsmap in (raw, b""):
        stage = UnigramStage(add_space_prefix, remove_extra_whitespaces, base64.b64encode(charsmap).decode())
        normalize = LlamaCppUnigramNormalizer(stage)
        expected = ugm_normalized(text, charsmap, add_space_prefix, remove_extra_whitespaces).decode()
        normalized, places = normalize.alignment(text)
        assert normalize(text) == normalized == expected and len(places) == len(normalized)


def test_llamacpp_tables_are_unicode_15_1():
    """The tables equal llama.cpp's unicode-data.cpp (tools/gen_llamacpp_unicode.py --compare);
    here: they are Unicode's categories but for code points Unicode 16.0 assigned (undefined in
    15.1), and the lowercase mapping is the first character of a lowercase."""
    import unicodedata2

    classes = {"CONTROL": ("Cc", "Cf", "Co", "Cs"), "MARK": ("Mn", "Mc", "Me"), "SYMBOL": ("Sm", "Sc", "Sk", "So"),
               "PUNCTUATION": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")}
    newer = 0
    for name, categories in classes.items():
        ours = {cp for a, b in getattr(tables, name) for cp in range(a, b + 1)}
        theirs = {cp for cp in range(0x110000) if unicodedata2.category(chr(cp)) in categories}
        assert ours <= theirs, name
        newer += len(theirs - ours)
    assert 0 < newer < 5185 and tables.UNICODE_VERSION == "15.1.0"  # (Unicode 16.0 assigned 5,185, letters most)
    if unicodedata.unidata_version == "14.0.0":  # (Python 3.11: no case mapping changed up to 15.1)
        assert _LOWER == {cp: ord(chr(cp).lower()[0]) for cp in range(0x110000)
                          if not 0xD800 <= cp <= 0xDFFF and chr(cp).lower()[0] != chr(cp)}
    assert _NFD[ord("é")] == ord("e") and _NFD[0xAC00] == 0x1100 and 0x2B81F not in _NFD


def test_lowercase_keeps_what_the_words_go_by():
    """llama.cpp sorts a character into its words before lowercasing it; the spanner sorts the
    normalized (lowercased) text: the same, since no lowercase mapping changes whether a code
    point is white space, punctuation, an ASCII symbol, a CJK ideograph, a control or a mark."""
    def kinds(cp: int) -> tuple:
        return (cp in _WHITESPACE, _in(tables.PUNCTUATION, cp) or (cp < 0x7F and _in(tables.SYMBOL, cp)),
                _in(_CJK, cp), _in(tables.CONTROL, cp), _in(tables.MARK, cp))

    assert [cp for cp, lower in _LOWER.items() if kinds(cp) != kinds(lower)] == []


# -- whole tokenizers: the references, and the two backends -----------------------------------

@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_wordpiece_ids_are_llamacpps_on_both_backends(text, files):
    metadata, tokenizers = files(BERT)
    expected = wpm_ids(metadata, text)
    assert [tok.encode_ordinary(text) for tok in tokenizers.values()] == [expected] * len(tokenizers)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS)
def test_unigram_ids_are_llamacpps_on_both_backends(text, files, unpack_dir):
    _, tokenizers = files(NOMIC)
    expected = ugm_ids(unpacked(NOMIC, unpack_dir), text)
    assert [tok.encode_ordinary(text) for tok in tokenizers.values()] == [expected] * len(tokenizers)


@pytest.mark.parametrize("name", [BERT, NOMIC])
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXTS, max_size=4))
def test_native_batches_and_offsets_equal_python(name, texts, files):
    _, tokenizers = files(name)
    python, native = tokenizers["python"], tokenizers["native"]
    assert native.encode_batch(texts) == python.encode_batch(texts)
    for text in texts:
        found = native.encode_with_offsets(text)
        assert found.ids == python.encode(text) and found.char_offsets == python.encode_with_offsets(text).char_offsets
        assert all(0 <= a <= b <= len(text) for a, b in found.char_offsets)


# -- llama.cpp's rules ------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_wordpiece_rules(backend, files):
    """No word limit (HF's is 100 characters); a word with a place no token starts at is
    [UNK]; specials are matched only when allowed; decode is llama_detokenize without special
    tokens and without its clean-up of spaces (docs/vocabularies.md)."""
    tok = files(BERT)[1][backend]
    long_word = tok.encode_ordinary("a" * 150)
    assert 100 not in long_word and len(long_word) > 1
    assert tok.encode_ordinary("hello ａｂ world") == [7592, 100, 2088]
    assert tok.encode_ordinary("[CLS]")[0] != 101 and tok.encode("[CLS] hi", allowed_special="all")[0] == 101
    assert tok.decode(tok.encode_ordinary("Hello, World!")) == " hello , world !"
    assert tok.decode([101, 7592, 100, 102]) == " hello"


@pytest.mark.parametrize("backend", BACKENDS)
def test_unigram_rules(backend, files):
    """Spaces are llama.cpp's (one ▁ per run; without a map that makes ▁ a space, as
    nomic-bert-moe's does, a trailing typed ▁ is kept where sentencepiece drops it), an UNUSED
    token is found in text and decodes to nothing, an unknown run is one <unk>, <mask> strips
    the space before it (nomic-bert-moe's architecture)."""
    tok = files(NOMIC)[1][backend]
    vocab = tok.vocab
    assert tok.encode_ordinary("  a   b  ") == tok.encode_ordinary("a b")
    assert tok.encode_ordinary("x\u2581") == tok.encode_ordinary("x")
    assert LlamaCppUnigramNormalizer(UnigramStage(True, True))(" x\u2581 ") == "\u2581x\u2581"
    mask = vocab.special_tokens["<mask>"]
    assert tok.encode("a <mask>", allowed_special="all") == [*tok.encode_ordinary("a"), mask]
    # (the first token loses the leading space, whatever it is: here the UNUSED one, which is empty)
    assert tok.decode([vocab.ranks["[PAD250001]".encode()], *tok.encode_ordinary("hi")]) == " hi"
    unknown = tok.encode_ordinary("\U0001e030\U0001e031 x")
    assert unknown.count(vocab.unk_token_id) == 1 and tok.decode(unknown).strip() == "x"


# -- what the readers refuse -------------------------------------------------------------------

def _changed(name: str, unpack_dir, changes: dict, tokens: dict | None = None):
    """A copy of tests/data/gguf/<name> with ``changes`` to its metadata (None: the key
    removed) and ``tokens``: {id: (text, type)}."""
    metadata = dict(_metadata(unpacked(name, unpack_dir)))
    metadata["tokenizer.ggml.tokens"] = list(metadata["tokenizer.ggml.tokens"])
    metadata["tokenizer.ggml.token_type"] = list(metadata["tokenizer.ggml.token_type"])
    for i, (text, kind) in (tokens or {}).items():
        metadata["tokenizer.ggml.tokens"][i] = text
        metadata["tokenizer.ggml.token_type"][i] = kind
    for key, value in changes.items():
        if value is None:
            metadata.pop(key, None)
        else:
            metadata[key] = value
    path = unpack_dir / f"changed-{name.split('.')[0]}.gguf"
    path.write_bytes(tokenizer_only_gguf(metadata))
    return path


REFUSALS = [
    (BERT, {}, {1: ("[unused0]", BYTE)}, UnsupportedTokenizerError, "type 6 \\(BYTE\\)"),
    (BERT, {}, {1: ("<0x41>", NORMAL)}, UnsupportedTokenizerError, "spelled like a byte token"),
    (BERT, {"tokenizer.ggml.unknown_token_id": 40000, "tokenizer.ggml.tokens": [f"t{i}" for i in range(50)],
            "tokenizer.ggml.token_type": [NORMAL] * 50}, {}, UnsupportedTokenizerError, "no unknown token"),
    (BERT, {}, {1: ("", NORMAL)}, VocabFormatError, "token 1 is empty"),
    (BERT, {}, {1: ("[PAD]", NORMAL)}, VocabFormatError, "repeats token 0"),
    (BERT, {}, {1: ("<x", USER_DEFINED), 2: ("x>", USER_DEFINED)}, UnsupportedTokenizerError, "overlap"),
    (NOMIC, {}, {5: ("<|im_end|>", USER_DEFINED)}, UnsupportedTokenizerError, "makes the added token 5"),
    (NOMIC, {"tokenizer.ggml.precompiled_charsmap": bytes([9, 0, 0, 0, 1, 2])}, {}, VocabFormatError, "no room"),
    (NOMIC, {"tokenizer.ggml.precompiled_charsmap": [9, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0]}, {}, VocabFormatError,
     "array of u8 or i8"),
    (NOMIC, {"tokenizer.ggml.precompiled_charsmap": bytes([6, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0])}, {}, VocabFormatError,
     "a trie of 6 bytes"),
    (NOMIC, {"tokenizer.ggml.scores": [0.5]}, {}, VocabFormatError, "1 scores"),
    (NOMIC, {"tokenizer.ggml.remove_extra_whitespaces": 1}, {}, VocabFormatError, "should be a bool"),
]


@pytest.mark.parametrize("name, changes, tokens, error, message", REFUSALS,
                         ids=[f"{r[0].split('-')[2]}-{r[4]}" for r in REFUSALS])
def test_what_the_readers_refuse(name, changes, tokens, error, message, unpack_dir):
    with pytest.raises(error, match=message):
        load_vocab(_changed(name, unpack_dir, changes, tokens))


def test_defaults_llamacpp_falls_back_to(unpack_dir):
    """An unknown token id outside the vocabulary is llama.cpp's default (100 for WordPiece, 2
    for Unigram); a Unigram file without scores scores every token 0."""
    bert = load_vocab(_changed(BERT, unpack_dir, {"tokenizer.ggml.unknown_token_id": 40000}))
    assert bert.unk_token_id == 100 and bert.pipeline.model.unk_token == "[UNK]"
    nomic = load_vocab(_changed(NOMIC, unpack_dir, {"tokenizer.ggml.unknown_token_id": None,
                                                    "tokenizer.ggml.scores": None}))
    assert nomic.unk_token_id == 2 and set(nomic.scores) == {0.0}


@pytest.mark.parametrize("backend", BACKENDS)
def test_wordpiece_options_and_user_defined_tokens(backend, unpack_dir):
    """tokenizer.ggml.normalizer.lowercase false (strip_accents follows it); a USER_DEFINED token
    is cut out of the text first, and also a token the words are looked up in."""
    path = _changed(BERT, unpack_dir, {"tokenizer.ggml.normalizer.lowercase": False},
                    {1: ("[unused0]", USER_DEFINED)})
    vocab = load_vocab(path)
    assert vocab.pipeline.normalizer == BertStage(lowercase=False, strip_accents=False)
    assert vocab.added_tokens == {"[unused0]": 1}
    tok = TokenizerOptions(backend=backend).build(vocab)
    assert tok.encode_ordinary("x[unused0]y") == [*tok.encode_ordinary("x"), 1, *tok.encode_ordinary("y")]
    assert tok.encode_ordinary("Éa") != tok.encode_ordinary("ea") and tok.decode([1]) == "[unused0]"
