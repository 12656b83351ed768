"""Training equals HuggingFace's BpeTrainer: the same vocabulary and the same merges, exactly.

The oracle is ``tokenizers.trainers.BpeTrainer`` behind a ``Split(pattern, "isolated")`` +
``ByteLevel(use_regex=False)`` pre-tokenizer with ``initial_alphabet=ByteLevel.alphabet()``.
Every case runs on both backends (the reference trainer and the native one).
"""

from __future__ import annotations

import gzip
import json
import random

import pytest
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers

from wordsplit import train
from wordsplit.errors import TrainingInputError, UnknownComponentError
from wordsplit.formats.bytelevel import token_text
from wordsplit.spec import Nfc, NoNormalizer
from wordsplit.training import resolve_pattern
from wordsplit.training.save import hf_pattern
from wordsplit.training.counting import WordCounts
from wordsplit.training.vocab import merge_list

from conftest import BACKENDS, DATA

TRAIN_BACKENDS = BACKENDS

CORPUS = DATA / "corpus"


def oracle_pattern(pattern: str) -> str:
    """The pattern HF is given: a vocabulary's, spelled for Oniguruma as tokenizer.json spells it."""
    return hf_pattern(resolve_pattern(pattern)[0])


def corpus_lines(name: str, n_chars: int) -> list[str]:
    """The first ``n_chars`` of a test corpus, as lines with their newlines (HF's documents)."""
    with gzip.open(CORPUS / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
        return f.read(n_chars).splitlines(keepends=True)


def hf_tokenizer(pattern: str, *, nfc: bool = False) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    return tok


def hf_trainer(vocab_size, special_tokens=(), min_frequency=0, max_token_length=None):
    return trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                               min_frequency=min_frequency, max_token_length=max_token_length,
                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)


def hf_train(texts, pattern, *, nfc=False, **settings) -> tuple[dict, list]:
    """HF's (vocab, merges) for ``texts``: byte-level strings, merges as pairs."""
    tok = hf_tokenizer(pattern, nfc=nfc)
    tok.train_from_iterator(texts, hf_trainer(**settings))
    model = json.loads(tok.to_str())["model"]
    return model["vocab"], [tuple(m) for m in model["merges"]]


def ours(vocab) -> tuple[dict, list]:
    """A Vocab's (vocab, merges) spelled as HF spells them."""
    table = {token_text(piece): i for piece, i in vocab.ranks.items()} | dict(vocab.special_tokens)
    return table, [(token_text(a), token_text(b)) for a, b in merge_list(vocab)]


def heavy_ties(seed: int, n: int = 300) -> list[str]:
    """Text from a tiny alphabet: many pairs share every count, so the tie rule decides."""
    rng = random.Random(seed)
    return ["".join(rng.choice("ab ba\n") for _ in range(rng.randint(1, 40))) for _ in range(n)]


def random_text(seed: int, n: int = 200) -> list[str]:
    """Random code points of every kind (letters, digits, marks, spaces, emoji...)."""
    rng = random.Random(seed)
    pools = ["abcdefghij", "0123456789", " \n\t", "éüß", "日本語中文", "\u0301\u0308", "😀🎉", "!?.,'\"-"]
    return ["".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(0, 60))) for _ in range(n)]


CASES = {
    "prose-1000": (lambda: corpus_lines("prose", 40_000), "cl100k_base", dict(vocab_size=1000)),
    "prose-specials-minfreq": (lambda: corpus_lines("prose", 40_000), "cl100k_base",
                               dict(vocab_size=2000, special_tokens=["<|endoftext|>", "<pad>", "<|endoftext|>"],
                                    min_frequency=3)),
    "prose-maxlen4": (lambda: corpus_lines("prose", 30_000), "cl100k_base", dict(vocab_size=900, max_token_length=4)),
    "code-o200k": (lambda: corpus_lines("code", 40_000), "o200k_base", dict(vocab_size=1500)),
    "code-gpt2-maxlen8": (lambda: corpus_lines("code", 30_000), "gpt2", dict(vocab_size=1200, max_token_length=8)),
    "multilingual-qwen3": (lambda: corpus_lines("multilingual", 40_000), "qwen3", dict(vocab_size=3000)),
    "whitespace": (lambda: corpus_lines("adv_whitespace", 20_000), "cl100k_base", dict(vocab_size=600)),
    "random-unicode": (lambda: random_text(1), "cl100k_base", dict(vocab_size=700, max_token_length=5)),
    "ties-1": (lambda: heavy_ties(1), "cl100k_base", dict(vocab_size=400)),
    "ties-2-minfreq": (lambda: heavy_ties(2), "gpt2", dict(vocab_size=500, min_frequency=2, special_tokens=["<s>"])),
    "ties-maxlen2": (lambda: heavy_ties(3), "cl100k_base", dict(vocab_size=300, max_token_length=2)),
    "exhausted": (lambda: ["hello world"] * 3, "cl100k_base", dict(vocab_size=5000)),
    "user-regex-with-gaps": (lambda: corpus_lines("prose", 10_000), r"[a-z]+", dict(vocab_size=500)),
}


@pytest.mark.parametrize("backend", TRAIN_BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_vocab_and_merges_equal_hf(case, backend):
    make_texts, pattern, settings = CASES[case]
    texts = make_texts()
    nfc = pattern == "qwen3"
    expected = hf_train(texts, oracle_pattern(pattern), nfc=nfc, **settings)
    vocab = train(texts, pattern=pattern, backend=backend, **settings)
    assert ours(vocab) == expected
    assert vocab.normalizer == (Nfc() if nfc else NoNormalizer())


@pytest.mark.parametrize("backend", TRAIN_BACKENDS)
def test_files_text_jsonl_gzip_equal_hf_on_the_same_documents(tmp_path, backend):
    lines = corpus_lines("prose", 20_000)
    text_file = tmp_path / "a.txt"
    text_file.write_text("".join(lines), encoding="utf-8")
    jsonl = tmp_path / "b.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps({"body": line}) + "\n")
    expected = hf_train(lines + lines, oracle_pattern("cl100k_base"), vocab_size=800)
    # HF reading the text file itself makes the same documents as iterating its lines.
    tok = hf_tokenizer(oracle_pattern("cl100k_base"))
    tok.train([str(text_file)], hf_trainer(800))
    model = json.loads(tok.to_str())["model"]
    expected = (model["vocab"], [tuple(m) for m in model["merges"]])
    assert hf_train(lines, oracle_pattern("cl100k_base"), vocab_size=800) == expected
    vocab = train([text_file, jsonl], vocab_size=800, field="body", backend=backend)
    assert ours(vocab) == expected


def test_word_counts_merge_in_shards():
    """Counting two halves and adding the tables trains the same vocabulary as the whole."""
    from wordsplit.training import count_source

    lines = corpus_lines("prose", 20_000)
    half = len(lines) // 2
    shards = [count_source(part, pattern=oracle_pattern("cl100k_base")) for part in (lines[:half], lines[half:])]
    merged = WordCounts()
    for shard in shards:
        merged += shard
    assert merged == count_source(lines, pattern=oracle_pattern("cl100k_base"))
    assert ours(train(merged, vocab_size=700)) == ours(train(lines, vocab_size=700))


@pytest.mark.parametrize("backend", TRAIN_BACKENDS)
def test_trained_vocab_encodes_as_hf_does(backend):
    from wordsplit import TokenizerOptions

    texts = corpus_lines("prose", 40_000)
    tok = hf_tokenizer(oracle_pattern("cl100k_base"))
    tok.train_from_iterator(texts, hf_trainer(1500))
    vocab = train(texts, vocab_size=1500, backend=backend)
    ws = TokenizerOptions(backend=backend).build(vocab)
    sample = corpus_lines("prose", 60_000)[-100:] + corpus_lines("multilingual", 5_000)
    assert [ws.encode(text) for text in sample] == [e.ids for e in tok.encode_batch(sample)]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(vocab_size=0), TrainingInputError),
        (dict(vocab_size=300, min_frequency=-1), TrainingInputError),
        (dict(vocab_size=300, max_token_length=0), TrainingInputError),
        (dict(vocab_size=300, special_tokens="<s>"), TrainingInputError),
        (dict(vocab_size=300, special_tokens=[""]), TrainingInputError),
        (dict(vocab_size=300, backend="gpu"), UnknownComponentError),
        (dict(vocab_size=300, normalizer="nfkx"), UnknownComponentError),
        (dict(vocab_size=300, num_threads=0), TrainingInputError),
    ],
)
def test_bad_options_are_typed_errors(kwargs, error):
    with pytest.raises(error):
        train(["hello"], **kwargs)


def test_a_single_string_source_is_an_error_that_says_what_to_pass():
    with pytest.raises(TrainingInputError, match=r"\[text\]"):
        train("hello world", vocab_size=300)


def test_bad_jsonl_line_names_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "ok"}\n{"txt": "no"}\n')
    with pytest.raises(TrainingInputError, match=r"d.jsonl:2"):
        train([path], vocab_size=300)
    with pytest.raises(FileNotFoundError):
        train([tmp_path / "missing.txt"], vocab_size=300)


def test_parquet_column(tmp_path):
    pa = pytest.importorskip("pyarrow")  # an optional dependency of training
    import pyarrow.parquet as pq

    lines = corpus_lines("prose", 10_000)
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"content": lines}), path)
    assert ours(train(path, vocab_size=500, column="content")) == ours(train(lines, vocab_size=500))
    with pytest.raises(TrainingInputError, match="no column 'text'"):
        train(path, vocab_size=500)


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base", "gpt2", "qwen3"])
def test_native_counting_equals_python_counting(pattern):
    """The native scanners (and native NFC) count the same words as the Python regex spanner;
    lone surrogates are replaced as encode replaces them."""
    from wordsplit.training import count_source

    split, normalizer = resolve_pattern(pattern)
    texts = corpus_lines("multilingual", 20_000) + random_text(2) + ["a\ud800b", "e\u0301 \ud83d\ude00"]
    counts = {backend: count_source(texts, pattern=split, normalizer=normalizer, backend=backend, num_threads=2)
              for backend in BACKENDS}
    assert counts["native"] == counts["python"]
    assert any(b"\xef\xbf\xbd" in word for word in counts["native"])  # U+FFFD for the lone surrogate


@pytest.mark.parametrize("counts", [{"hello": 1}, {b"": 1}, {b"ab": 0}, {b"ab": 1.5}])
def test_bad_word_counts_are_typed_errors(counts):
    with pytest.raises(TrainingInputError):
        train(counts, vocab_size=300)


def test_progress_bars_draw_on_stderr(capsys):
    vocab = train(corpus_lines("prose", 5_000), vocab_size=400, progress=True)
    err = capsys.readouterr().err
    assert "counting words" in err and "learning merges" in err and vocab.n_vocab == 400


def cut_after_words(texts: list[str], pattern: str, n_words: int) -> list[str]:
    """The documents HF sees when only the first ``n_words`` words count: the documents before
    the ``n_words``-th word's, then that one cut at the word's end (HF's own pre-tokenizer
    finds the words and their offsets)."""
    split = pre_tokenizers.Split(Regex(pattern), "isolated")
    cut = []
    for text in texts:
        pieces = split.pre_tokenize_str(text)
        if len(pieces) >= n_words:
            # HF's offsets count characters of the (here unnormalized) text.
            return cut + [text[: pieces[n_words - 1][1][1]]]
        cut.append(text)
        n_words -= len(pieces)
    return cut


@pytest.mark.parametrize("backend", TRAIN_BACKENDS)
@pytest.mark.parametrize("batch_bytes", [1 << 20, 3_000])
def test_max_words_equals_hf_on_the_documents_cut_after_the_last_word(backend, batch_bytes, monkeypatch):
    """The first N words, wherever N falls: in the first or the second thread's share of a
    batch, in a later batch (batch_bytes forces many), at a document's end, past the corpus."""
    from wordsplit.training import count_source, native

    monkeypatch.setattr(native, "BATCH_BYTES", batch_bytes)
    texts = corpus_lines("prose", 30_000) + corpus_lines("multilingual", 10_000)
    pattern = oracle_pattern("cl100k_base")
    split = pre_tokenizers.Split(Regex(pattern), "isolated")
    total = sum(len(split.pre_tokenize_str(text)) for text in texts)
    first_line = len(split.pre_tokenize_str(texts[0]))
    for n_words in [1, first_line, first_line + 1, total // 3, total // 2 + 7, total - 1, total, total + 100]:
        cut = cut_after_words(texts, pattern, n_words)
        counts = count_source(texts, pattern=resolve_pattern("cl100k_base")[0], backend=backend, num_threads=2,
                              max_words=n_words)
        assert sum(counts.values()) == min(n_words, total), n_words
        assert counts == count_source(cut, pattern=resolve_pattern("cl100k_base")[0], backend="python"), n_words
    n_words = total // 2 + 7
    expected = hf_train(cut_after_words(texts, pattern, n_words), pattern, vocab_size=900)
    assert ours(train(texts, vocab_size=900, max_words=n_words, backend=backend, num_threads=2)) == expected


@pytest.mark.parametrize("backend", TRAIN_BACKENDS)
def test_sample_rate_is_deterministic_and_equals_hf_on_the_sampled_documents(backend):
    from wordsplit.training.sources import sample_documents

    texts = corpus_lines("prose", 40_000)
    sample = list(sample_documents(texts, 0.3, seed=7))
    assert sample == list(sample_documents(iter(texts), 0.3, seed=7))  # a stream samples as a list does
    assert sample != list(sample_documents(texts, 0.3, seed=8))
    assert 0.2 * len(texts) < len(sample) < 0.4 * len(texts)
    assert all(text in texts for text in sample)
    expected = hf_train(sample, oracle_pattern("cl100k_base"), vocab_size=700)
    vocab = train(texts, vocab_size=700, sample_rate=0.3, seed=7, backend=backend)
    assert ours(vocab) == expected
    # With max_words too: the first words of the sample.
    n_words = 2_000
    expected = hf_train(cut_after_words(sample, oracle_pattern("cl100k_base"), n_words), oracle_pattern("cl100k_base"),
                        vocab_size=500)
    assert ours(train(texts, vocab_size=500, sample_rate=0.3, seed=7, max_words=n_words, backend=backend)) == expected


@pytest.mark.parametrize("kwargs", [dict(max_words=0), dict(max_words=2.5), dict(sample_rate=0), dict(sample_rate=1.5),
                                    dict(sample_rate="half"), dict(seed="x"), dict(seed=1.0)])
def test_bad_sampling_options_are_typed_errors(kwargs):
    with pytest.raises(TrainingInputError, match=next(iter(kwargs))):
        train(["hello"], vocab_size=300, **kwargs)


def test_sampling_options_on_counts_already_made_are_an_error():
    with pytest.raises(TrainingInputError, match="count_source"):
        train(WordCounts({b"ab": 2}), vocab_size=300, max_words=10)


def test_a_list_of_file_names_is_refused_not_trained_on_as_text(tmp_path, monkeypatch):
    """train(["corpus.txt"]) meant the file: a first text that names an existing file is an
    error that says to pass Path items, which are read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text("hug hug pug\npun bun hugs\n", encoding="utf-8")
    for source in (["corpus.txt"], ("corpus.txt", "hug"), iter(["corpus.txt"])):
        with pytest.raises(TrainingInputError, match=r"is the name of a file.*\[Path\('corpus.txt'\)\]"):
            train(source, vocab_size=300)
    from pathlib import Path

    assert train([Path("corpus.txt")], vocab_size=258).token_bytes[256] == b"ug"
    assert train(["corpus", "hug"], vocab_size=257).n_vocab == 257  # texts that name no file are texts


@pytest.mark.parametrize("name", ["bad.txt", "bad.txt.gz", "bad.jsonl"])
def test_invalid_utf8_names_the_file_and_line(tmp_path, name):
    import gzip

    data = b'{"text": "ok"}\n{"text": "fine"}\n{"text": "caf\xe9"}\n'
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(TrainingInputError, match=rf"{name}:3: not UTF-8 text \(byte 0xe9 at byte 14 of the line"):
        train([path], vocab_size=300)


def test_jsonl_field_error_gives_the_python_fix_and_the_command_line_its_own(tmp_path, capsys):
    from wordsplit.cli import main

    path = tmp_path / "d.jsonl"
    path.write_text('{"body": "x"}\n')
    with pytest.raises(TrainingInputError) as info:
        train([path], vocab_size=300)
    assert "pass field=" in str(info.value) and "--field" not in str(info.value)
    assert main(["train", str(path), "--vocab-size", "300", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--field names another one" in err and "field=" not in err
