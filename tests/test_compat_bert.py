"""The drop-ins on the BERT family: ``wordsplit.compat.tokenizers`` and
``wordsplit.compat.transformers.accelerate`` on the WordPiece and WordLevel files of
tests/data/wordpiece/ (all-MiniLM-L6-v2, whose file sets truncation and padding, BERT Chinese,
multilingual cased, a file with 1,639 added tokens, a WordPiece file without a decoder, a
WordLevel file), against HF ``tokenizers`` 0.23 and transformers live and against the goldens
of HF's full encodings. Every field of every encoding is compared, its overflowing parts too,
over matrices of truncation (strategies, directions, strides, lengths, pairs) and padding
(fixed, longest, multiples, sides), and on hypothesis' texts. The same matrix runs on a
byte-level file and a SentencePiece-style one: truncation and padding are the drop-in's for
every file it loads."""

from __future__ import annotations

import copy
import functools
import gzip
import itertools
import json
import pickle
import shutil

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers.decoders import DecodeStream as HFDecodeStream

from compat_cases import fields, result, set_alike
from test_compat_tokenizers import hf_json
from test_wordpiece import ALPHABET, DATA, FILES, TEXTS, corpus_lines, read_json
from wordsplit.compat.tokenizers import Encoding, Tokenizer, TruncationError
from wordsplit.compat.tokenizers.decoders import DecodeStream
from wordsplit.errors import VocabFormatError

GOLDEN = DATA.parent.parent / "golden"
WORD_FILES = sorted(FILES)
# (the files of HF's BPE with the options byte-level BPE lacks, goldens named bpe-)
BPE_FILES = ("clip-vit-base-patch32", "tokenizer-wiki", "tortoise")
# The matrix runs on these: BERT's template (MiniLM), no decoder and other ids (bert-wiki), no
# post-processor (WordLevel), and a byte-level and a SentencePiece-style file of other kinds.
MATRIX_FILES = ["all-MiniLM-L6-v2", "bert-wiki", "genslm-codon-wordlevel", "gpt2+roberta", "spm-llama+bos"]


def file_text(name: str) -> str:
    return read_json(FILES[name]) if name in FILES else hf_json(name)


@functools.lru_cache(maxsize=None)
def _built(name: str) -> tuple[tokenizers.Tokenizer, Tokenizer]:
    return tokenizers.Tokenizer.from_str(file_text(name)), Tokenizer.from_str(file_text(name))


def both(name: str, truncation=None, padding=None):
    """HF's tokenizer and the drop-in of a file, set alike (``None``: off)."""
    hf, ws = _built(name)
    set_alike((hf, ws), truncation, padding)
    return hf, ws


def assert_same(name, method, *args, **kwargs):
    hf, ws = _built(name)
    theirs = result(lambda: getattr(hf, method)(*args, **kwargs))
    mine = result(lambda: getattr(ws, method)(*args, **kwargs))
    assert mine == theirs, (name, method, args, kwargs)


SHORT = ["Hello, world! unaffable", "", "The quick brown fox jumps over the lazy dog", "中文 [SEP] x Ångström",
         "09.52 англ. ATG GCC TAA"]


# -- the goldens ---------------------------------------------------------------------------------


def _golden(name: str) -> dict:
    family = "wordlevel" if "wordlevel" in name else "bpe" if name in BPE_FILES else "wordpiece"
    return json.loads(gzip.decompress((GOLDEN / f"{family}-{name}.json.gz").read_bytes()))


def _as_golden(tok, encoding) -> dict:
    return {"ids": encoding.ids, "type_ids": encoding.type_ids, "attention_mask": encoding.attention_mask,
            "offsets": [list(span) for span in encoding.offsets],
            "decoded": tok.decode(encoding.ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(encoding.ids)}


@pytest.mark.parametrize("name", WORD_FILES)
def test_the_goldens_of_hfs_full_encodings(name):
    record = _golden(name)
    plain = Tokenizer.from_file(FILES[name])
    plain.no_truncation()
    plain.no_padding()
    for case in record["cases"]:
        assert plain.encode(case["text"], add_special_tokens=False).ids == case["ids"], case["text"]
        assert _as_golden(plain, plain.encode(case["text"])) == case["with_specials"], case["text"]
    for case in record["pair_cases"]:
        expected = {key: case[key] for key in ("ids", "type_ids", "attention_mask", "offsets", "decoded",
                                               "decoded_skip_special")}
        assert _as_golden(plain, plain.encode(case["text"], case["pair"])) == expected, case
    for case in record["decode_cases"]:
        assert plain.decode(case["ids"], skip_special_tokens=False) == case["decoded"], case
        assert plain.decode(case["ids"]) == case["decoded_skip_special"], case
    configured = Tokenizer.from_file(FILES[name])  # the file's own truncation and padding
    assert (configured.truncation is None) == (record["file_truncation"] is None)
    for case in record.get("configured_cases", []):
        assert _as_golden(configured, configured.encode(case["text"])) == \
            {key: value for key, value in case.items() if key != "text"}, case["text"]
    for case in record.get("configured_pair_cases", []):
        assert _as_golden(configured, configured.encode(case["text"], case["pair"])) == \
            {key: value for key, value in case.items() if key not in ("text", "pair")}, case


def test_minilm_pads_and_truncates_as_its_file_says():
    tok = Tokenizer.from_file(FILES["all-MiniLM-L6-v2"])
    assert tok.truncation == {"max_length": 128, "stride": 0, "strategy": "longest_first", "direction": "right"}
    assert tok.padding == {"length": 128, "pad_to_multiple_of": None, "pad_id": 0, "pad_token": "[PAD]",
                           "pad_type_id": 0, "direction": "right"}
    short, long = tok.encode("Hello world"), tok.encode("word " * 300)
    assert len(short) == len(long) == 128 and short.tokens[:4] == ["[CLS]", "hello", "world", "[SEP]"]
    assert short.attention_mask.count(1) == 4 and long.ids[-1] == 102
    assert [len(part) for part in long.overflowing] == [128, 128]


# -- every field, live ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORD_FILES)
def test_every_field_is_hfs(name):
    hf, ws = both(name)
    texts = TEXTS + corpus_lines(30)
    for add in (True, False):
        assert result(lambda: ws.encode_batch(texts, add_special_tokens=add)) == \
            result(lambda: hf.encode_batch(texts, add_special_tokens=add))
        pairs = list(zip(texts, texts[1:] + texts[:1]))
        assert result(lambda: ws.encode_batch(pairs, add_special_tokens=add)) == \
            result(lambda: hf.encode_batch(pairs, add_special_tokens=add))
        words = [text.split(" ") for text in TEXTS[:10]]
        assert result(lambda: ws.encode_batch(words, is_pretokenized=True, add_special_tokens=add)) == \
            result(lambda: hf.encode_batch(words, is_pretokenized=True, add_special_tokens=add))
        assert_same(name, "encode", words[4], words[5], is_pretokenized=True, add_special_tokens=add)
        assert_same(name, "encode_batch_fast", texts[:20] + pairs[:5], add_special_tokens=add)
    first, second = ws.encode(SHORT[2], add_special_tokens=False), ws.encode(SHORT[0], add_special_tokens=False)
    hf_first, hf_second = hf.encode(SHORT[2], add_special_tokens=False), hf.encode(SHORT[0], add_special_tokens=False)
    assert fields(ws.post_process(first, second)) == fields(hf.post_process(hf_first, hf_second))
    assert fields(ws.post_process(first)) == fields(hf.post_process(hf_first))
    for is_pair in (False, True):
        assert ws.num_special_tokens_to_add(is_pair) == hf.num_special_tokens_to_add(is_pair)


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "fastberttokenizer-issue-100"])
def test_special_tokens_in_the_text(name):
    text = "[CLS] x [SEP][MASK] 09.52 англ. a[UNK]b [PAD]"
    for split in (False, True):
        hf, ws = both(name)
        hf.encode_special_tokens = ws.encode_special_tokens = split
        assert fields(ws.encode(text, "[SEP] y")) == fields(hf.encode(text, "[SEP] y"))


# -- truncation and padding ----------------------------------------------------------------------

TRUNCATIONS = [None] + [{"max_length": length, "stride": stride, "strategy": strategy, "direction": direction}
                        for length, stride, strategy, direction in itertools.product(
                            [0, 1, 2, 3, 4, 6, 9, 16], [0, 1, 3], ["longest_first", "only_first", "only_second"],
                            ["right", "left"])]
PADDINGS = [None, {}, {"length": 20, "direction": "left", "pad_id": 3, "pad_type_id": 1, "pad_token": "<p>"},
            {"pad_to_multiple_of": 8, "direction": "left"}, {"length": 5, "pad_to_multiple_of": 4}]


def _settings_of(tok, truncation):
    try:
        if truncation is not None:
            tok.enable_truncation(**truncation)
    except ValueError:
        return "refused"
    return tok.truncation


@pytest.mark.parametrize("name", MATRIX_FILES)
@pytest.mark.parametrize("padding", range(len(PADDINGS)))
def test_truncation_and_padding_matrix(name, padding):
    """Every strategy, direction, stride and length (the template's own length and less too),
    on single texts, pairs (each longer, empty ones) and batches, with each padding: every
    truncation with each padding on the first file; on the others (whose templates add other
    counts of tokens) every truncation without padding, and a seventh of them, every strategy,
    direction and stride among them, with each padding (which pads alike whatever the file)."""
    pairs = [(SHORT[0], SHORT[2]), (SHORT[2], SHORT[0]), (SHORT[1], SHORT[3]), (SHORT[4], SHORT[1])]
    every = name == MATRIX_FILES[0] or PADDINGS[padding] is None
    for truncation in TRUNCATIONS if every else TRUNCATIONS[::7]:
        hf, ws = both(name, padding=PADDINGS[padding])
        assert _settings_of(ws, truncation) == _settings_of(hf, truncation), truncation
        assert ws.padding == hf.padding
        for add in (True, False):
            for text in SHORT[:3]:
                assert_same(name, "encode", text, add_special_tokens=add)
            for first, second in pairs:
                assert_same(name, "encode", first, second, add_special_tokens=add)
            assert_same(name, "encode_batch", [SHORT[0], pairs[1], SHORT[3]], add_special_tokens=add)


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "gpt2+roberta"])
def test_long_texts_overflow_in_windows(name):
    """A long pair, cut with strides: the overflowing parts of both texts are paired as HF
    pairs them (each of the first's with the second, with each of the second's, then the first
    with each of the second's), each padded."""
    long, other = " ".join(f"w{i}" for i in range(40)), "the second text of the pair " * 3
    for strategy, direction, stride in itertools.product(["longest_first", "only_first", "only_second"],
                                                         ["right", "left"], [0, 2, 5]):
        truncation = {"max_length": 14, "stride": stride, "strategy": strategy, "direction": direction}
        both(name, truncation, {"pad_to_multiple_of": 4})
        assert_same(name, "encode", long, other)
        assert_same(name, "encode", other, long)
        assert_same(name, "encode_batch", [long, (long, other), other])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(ALPHABET, max_size=40).map("".join),
       pair=st.one_of(st.none(), st.lists(ALPHABET, max_size=30).map("".join)),
       truncation=st.sampled_from(TRUNCATIONS), padding=st.sampled_from(PADDINGS), add=st.booleans(),
       name=st.sampled_from(["all-MiniLM-L6-v2", "bert-base-multilingual-cased"]))
def test_hypothesis_texts_and_settings(text, pair, truncation, padding, add, name):
    hf, ws = both(name, padding=padding)
    if _settings_of(ws, truncation) != _settings_of(hf, truncation):
        pytest.fail(f"settings {truncation}")
    assert_same(name, "encode", text, pair, add_special_tokens=add)


def test_where_hf_fails_truncation_error_is_raised():
    hf, ws = both("all-MiniLM-L6-v2", {"max_length": 5, "strategy": "only_second"})
    with pytest.raises(Exception, match="Second sequence not provided"):
        hf.encode("one two three four five six")
    with pytest.raises(TruncationError, match="Second sequence not provided"):
        ws.encode("one two three four five six")
    assert ws.encode("one").ids == hf.encode("one").ids  # nothing to cut: no error
    with pytest.raises(TruncationError, match="too short"):
        ws.encode("one two three four five six", "x")
    hf, ws = both("all-MiniLM-L6-v2", {"max_length": 5, "stride": 2})
    with pytest.raises(TruncationError, match="stride"):  # HF panics: stride 2 against the pair's 5 - 3
        ws.encode("one two three four five six", "x")
    with pytest.raises(TruncationError, match="effective max length of 3"):
        ws.enable_truncation(5, stride=4)
    assert ws.truncation["stride"] == 2  # (unchanged)


def test_settings_are_hfs():
    hf, ws = both("bert-wiki")
    for call in [lambda t: t.enable_truncation(3, strategy="sideways"),
                 lambda t: t.enable_truncation(3, direction="up"),
                 lambda t: t.enable_truncation(-1), lambda t: t.enable_padding(direction="up"),
                 lambda t: t.enable_padding(length=-2)]:
        with pytest.raises((ValueError, OverflowError)) as theirs:
            call(hf)
        with pytest.raises(theirs.type):
            call(ws)
    with pytest.warns(DeprecationWarning):
        ws.enable_padding(max_length=7)
    hf.enable_padding(length=7)
    assert ws.padding == hf.padding
    with pytest.warns(UserWarning, match="Ignored unknown kwarg option colour"):
        ws.enable_truncation(4, colour="red")
    hf.enable_truncation(4)
    assert ws.truncation == hf.truncation
    assert json.loads(ws.to_str())["truncation"] == json.loads(hf.to_str())["truncation"]
    assert json.loads(ws.to_str())["padding"] == json.loads(hf.to_str())["padding"]
    for text in (ws.to_str(), ws.to_str(pretty=True)):  # HF reads the settings back
        again = tokenizers.Tokenizer.from_str(text)
        assert (again.truncation, again.padding) == (hf.truncation, hf.padding)
    for clone in (pickle.loads(pickle.dumps(ws)), copy.deepcopy(ws)):
        assert (clone.truncation, clone.padding) == (hf.truncation, hf.padding)
        assert fields(clone.encode(SHORT[2])) == fields(hf.encode(SHORT[2]))
    ws.no_truncation()
    ws.no_padding()
    assert ws.to_str() == file_text("bert-wiki")  # the file's own text again


@pytest.mark.parametrize("entry, value", [
    ("padding", {"strategy": "BatchLongest", "pad_id": 0, "pad_token": "!"}),  # no direction
    ("padding", {"strategy": "Fixed", "direction": "Left", "pad_id": 0, "pad_type_id": 0, "pad_token": "!"}),
    ("truncation", {"max_length": 5, "strategy": "LongestFirst"}),  # no stride
    ("truncation", {"max_length": 5, "stride": 0, "strategy": "longest_first"}),
    ("truncation", 5),
])
def test_malformed_settings_are_refused_as_hf_refuses_them(entry, value):
    spec = json.loads(file_text("bert-wiki"))
    spec[entry] = value
    with pytest.raises(Exception):  # noqa: B017 (HF's error is a bare Exception)
        tokenizers.Tokenizer.from_str(json.dumps(spec))
    with pytest.raises(VocabFormatError, match=entry):
        Tokenizer.from_str(json.dumps(spec))


def test_encoding_operations_are_hfs():
    hf, ws = both("all-MiniLM-L6-v2")
    for args in [(SHORT[2], SHORT[0]), (SHORT[0],)]:
        theirs, mine = hf.encode(*args), ws.encode(*args)
        for operation in [lambda e: e.truncate(5, stride=2), lambda e: e.truncate(4, direction="left"),
                          lambda e: e.truncate(0), lambda e: e.pad(20, direction="left", pad_id=9, pad_token="<p>"),
                          lambda e: e.set_sequence_id(1)]:
            operation(theirs)
            operation(mine)
            assert fields(mine) == fields(theirs)
            for i in range(len(theirs) + 1):
                assert mine.token_to_sequence(i) == theirs.token_to_sequence(i)
                assert mine.token_to_chars(i) == theirs.token_to_chars(i)
                assert mine.token_to_word(i) == theirs.token_to_word(i)
            for sequence, position in itertools.product(range(2), range(30)):
                assert mine.char_to_token(position, sequence) == theirs.char_to_token(position, sequence)
                assert mine.char_to_word(position, sequence) == theirs.char_to_word(position, sequence)
                assert mine.word_to_tokens(position, sequence) == theirs.word_to_tokens(position, sequence)
                assert mine.word_to_chars(position, sequence) == theirs.word_to_chars(position, sequence)
    parts = [SHORT[0], SHORT[3], SHORT[2]]
    for growing in (True, False):
        merged = Encoding.merge([ws.encode(text) for text in parts], growing_offsets=growing)
        expected = tokenizers.Encoding.merge([hf.encode(text) for text in parts], growing_offsets=growing)
        assert fields(merged) == fields(expected)
    with pytest.raises(TruncationError):
        ws.encode(SHORT[2]).truncate(3, stride=3)


# -- vocabulary and decoding ---------------------------------------------------------------------


@pytest.mark.parametrize("name", WORD_FILES)
def test_vocabulary_lookups_are_hfs(name):
    hf, ws = both(name)
    assert ws.get_vocab() == hf.get_vocab()
    assert ws.get_vocab(with_added_tokens=False) == hf.get_vocab(with_added_tokens=False)
    for added in (True, False):
        assert ws.get_vocab_size(added) == hf.get_vocab_size(with_added_tokens=added)
    n = hf.get_vocab_size()
    for i in [*range(0, n, max(n // 500, 1)), n - 1, n, n + 7]:
        assert ws.id_to_token(i) == hf.id_to_token(i), i
    for token in [*list(hf.get_vocab())[::max(n // 500, 1)], "##ing", "[UNK]", "[CLS]", "not a token", "##", ""]:
        assert ws.token_to_id(token) == hf.token_to_id(token), token


def _ids(name):
    n = _built(name)[0].get_vocab_size()
    return st.lists(st.one_of(st.integers(0, n + 3), st.integers(0, 120)), max_size=14)


@pytest.mark.parametrize("name", WORD_FILES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), skip=st.booleans())
def test_decode_is_hfs(name, data, skip):
    hf, ws = _built(name)
    ids = data.draw(_ids(name))
    assert ws.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)
    batch = [ids, ids[::-1], hf.encode(" ".join(TEXTS[:3])).ids]
    assert ws.decode_batch(batch, skip) == hf.decode_batch(batch, skip_special_tokens=skip)


@pytest.mark.parametrize("name", WORD_FILES)
def test_decode_stream_is_hfs(name):
    hf, ws = _built(name)
    for text in TEXTS[:12]:
        ids = hf.encode(text).ids
        for skip, prefill in itertools.product((True, False), (0, 2)):
            mine = DecodeStream(ids=ids[:prefill] or None, skip_special_tokens=skip)
            theirs = HFDecodeStream(ids=ids[:prefill] or None, skip_special_tokens=skip)
            assert [mine.step(ws, i) for i in ids[prefill:]] == [theirs.step(hf, i) for i in ids[prefill:]], text


# -- transformers --------------------------------------------------------------------------------


def _folder(tmp, name: str, config=None):
    """A transformers folder of a file of tests/data/wordpiece (tokenizer.json, vocab.txt and its
    JSON files; ``config``: a tokenizer_config.json to write)."""
    out = tmp / name
    out.mkdir()
    (out / "tokenizer.json").write_text(read_json(FILES[name]), encoding="utf-8")
    with gzip.open(DATA / name / "vocab.txt.gz") as source, open(out / "vocab.txt", "wb") as target:
        shutil.copyfileobj(source, target)
    for extra in (DATA / name).glob("*.json"):
        shutil.copy(extra, out / extra.name)
    if config is not None:
        (out / "tokenizer_config.json").write_text(json.dumps(config))
    return out


@functools.lru_cache(maxsize=None)
def transformers_pair(name: str):
    """``(transformers tokenizer, accelerate(it))``: all-MiniLM's folder and bert-base-multilingual-cased's
    through AutoTokenizer, and a BertTokenizerFast built from bert-base-uncased's vocab.txt alone
    (transformers converts it to a tokenizers backend)."""
    import tempfile
    from pathlib import Path

    from transformers import AutoTokenizer, BertTokenizerFast

    from wordsplit.compat.transformers import accelerate

    tmp = Path(tempfile.mkdtemp(prefix="wordsplit-bert-"))
    if name == "minilm":
        tok = AutoTokenizer.from_pretrained(str(_folder(tmp, "all-MiniLM-L6-v2")))
    elif name == "mbert":
        config = {"tokenizer_class": "BertTokenizer", "do_lower_case": False}
        tok = AutoTokenizer.from_pretrained(str(_folder(tmp, "bert-base-multilingual-cased", config)))
    else:
        only_vocab = tmp / "vocab-only"
        only_vocab.mkdir()
        shutil.copy(_folder(tmp, "all-MiniLM-L6-v2") / "vocab.txt", only_vocab / "vocab.txt")
        tok = BertTokenizerFast.from_pretrained(str(only_vocab))
        assert len(tok) == 30522
    return tok, accelerate(tok)


BERTS = ["minilm", "mbert", "vocab-txt"]
CALL_OPTIONS = [
    {},
    {"padding": True, "return_special_tokens_mask": True},
    {"padding": "max_length", "max_length": 24, "pad_to_multiple_of": 16, "padding_side": "left"},
    {"truncation": True, "max_length": 7},
    {"truncation": True, "max_length": 9, "stride": 3, "return_overflowing_tokens": True, "padding": True,
     "return_offsets_mapping": True, "return_special_tokens_mask": True, "return_length": True},
    {"truncation": "only_first", "max_length": 10, "stride": 2, "return_overflowing_tokens": True},
    {"truncation": "only_second", "max_length": 12, "return_overflowing_tokens": True, "padding": "max_length"},
    {"truncation": True, "max_length": 2},
    {"truncation": True, "max_length": 8, "padding": True, "return_tensors": "np", "return_token_type_ids": True},
    {"return_offsets_mapping": True, "add_special_tokens": False},
    {"split_special_tokens": True, "return_offsets_mapping": True},
]


def _outcome(call):
    """A call's result, or the type of what it raised (HF's panics too: a BaseException)."""
    try:
        return call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: BLE001
        return type(error)


def _same_call(name, *args, **kwargs):
    """A call on transformers' tokenizer and on the accelerated one: the same batch, or both
    raise. Where HF fails the accelerated one runs HF's code, whose error for a batch with one
    text it cannot truncate and one it panics on depends on its threads."""
    from test_compat_transformers import assert_same_batch

    tok, fast = transformers_pair(name)
    theirs = _outcome(lambda: tok(*args, **kwargs))
    mine = _outcome(lambda: fast(*args, **kwargs))
    if isinstance(theirs, type):
        assert isinstance(mine, type), (mine, theirs, args, kwargs)
        assert mine is theirs or {mine.__name__, theirs.__name__} == {"Exception", "PanicException"}, \
            (mine, theirs, args, kwargs)
    else:
        assert not isinstance(mine, type), (mine, args, kwargs)
        assert_same_batch(mine, theirs)


@pytest.mark.parametrize("name", BERTS)
def test_bert_runs_on_wordsplit(name):
    tok, fast = transformers_pair(name)
    backend = fast.backend_tokenizer
    assert backend.accelerated and backend.fallback_reason is None
    items = [SHORT[0], (SHORT[2], SHORT[3]), SHORT[1]]
    for method in ("encode_batch", "encode_batch_fast"):
        assert result(lambda: getattr(backend, method)(items)) == \
            result(lambda: getattr(tok.backend_tokenizer, method)(items))
    assert fields(backend.encode(SHORT[2], SHORT[0])) == fields(tok.backend_tokenizer.encode(SHORT[2], SHORT[0]))


@pytest.mark.parametrize("name", BERTS)
@pytest.mark.parametrize("side", ["right", "left"])
def test_calls_are_transformers(name, side):
    tok, fast = transformers_pair(name)
    long = "The quick brown fox jumps over the lazy dog, unaffable [SEP] Ångström 中文 " * 2
    batch = [SHORT[0], long, SHORT[3], "", "[CLS] hello [MASK]"]
    others = [long, SHORT[0], "", "x", SHORT[4]]
    untouched = dict(fast.backend_tokenizer.fallbacks)
    tok.truncation_side = fast.truncation_side = side
    try:
        for options in CALL_OPTIONS:
            _same_call(name, batch, **options)
            _same_call(name, batch[1], **options)
            _same_call(name, batch, others, **options)
            _same_call(name, batch[1], others[1], **options)
            _same_call(name, [text.split() for text in batch[:3]], is_split_into_words=True, **options)
    finally:
        tok.truncation_side = fast.truncation_side = "right"
    failed = {key: count for key, count in fast.backend_tokenizer.fallbacks.items() if key != "truncation error"}
    assert failed == {key: count for key, count in untouched.items() if key != "truncation error"}


@pytest.mark.parametrize("name", BERTS)
def test_decode_tokens_and_words_are_transformers(name):
    tok, fast = transformers_pair(name)
    text = "Hello, world! don't stop [SEP] unaffable Ångström 中文"
    for ids in [tok(text)["input_ids"], tok(text, "a pair", padding="max_length", max_length=40)["input_ids"],
                list(range(990, 1030)), [101, 7592, 1010, 2123, 1005, 1056, 102, 0]]:
        for skip, clean in itertools.product((True, False), (None, True, False)):
            assert fast.decode(ids, skip_special_tokens=skip, clean_up_tokenization_spaces=clean) == \
                tok.decode(ids, skip_special_tokens=skip, clean_up_tokenization_spaces=clean)
            assert fast.batch_decode([ids, ids[:4]], skip_special_tokens=skip, clean_up_tokenization_spaces=clean) \
                == tok.batch_decode([ids, ids[:4]], skip_special_tokens=skip, clean_up_tokenization_spaces=clean)
        assert fast.convert_ids_to_tokens(ids) == tok.convert_ids_to_tokens(ids)
    assert fast.tokenize(text) == tok.tokenize(text)
    assert fast.encode(text, "x y", truncation=True, max_length=9) == tok.encode(text, "x y", truncation=True,
                                                                                   max_length=9)
    assert fast.get_vocab() == tok.get_vocab()
    assert fast.convert_tokens_to_ids(["hello", "##ing", "[UNK]", "zzzq"]) == \
        tok.convert_tokens_to_ids(["hello", "##ing", "[UNK]", "zzzq"])


@pytest.mark.parametrize("name", ["minilm", "mbert"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.lists(ALPHABET, max_size=40).map("".join), min_size=1, max_size=3),
       options=st.sampled_from(CALL_OPTIONS), pairs=st.booleans())
def test_hypothesis_calls_are_transformers(name, batch, options, pairs):
    if pairs:
        _same_call(name, batch, batch[::-1], **options)
    else:
        _same_call(name, batch, **options)


@pytest.mark.parametrize("name", ["minilm", "vocab-txt"])
def test_decode_stream_of_an_accelerated_bert_is_hfs(name):
    from wordsplit.compat.transformers import DecodeStream as AcceleratedStream

    tok, fast = transformers_pair(name)
    for text in TEXTS[:10]:
        ids = tok(text)["input_ids"]
        for skip in (True, False):
            mine, theirs = AcceleratedStream(skip_special_tokens=skip), HFDecodeStream(skip_special_tokens=skip)
            assert [mine.step(fast, i) for i in ids] == [theirs.step(tok.backend_tokenizer, i) for i in ids], text
