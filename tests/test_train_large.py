"""Training equals HF's BpeTrainer at large vocabulary sizes (8,192 to 50,000), on both
backends, and a 50,000-token vocabulary saved in the three formats gives the same ids in
wordsplit, HF ``tokenizers`` and tiktoken.

The corpora:

* ``zipf``: a seeded generated corpus of 40,000 distinct words over six scripts (Latin,
  accented Latin, Cyrillic, Greek, Han, Katakana), counted with a Zipf law and shuffled into
  lines: enough distinct words for 50,000 merges, frequent pairs at the head and a long tail
  of pairs that occur once or twice, where the tie rule decides most merges.
* ``ties``: 30,000 distinct words over six letters, each occurring 1 to 3 times: nearly every
  merge is decided by the tie rule.
* ``prose_large``: tests/data/corpus/prose_large.txt.gz, 1.2 MB of English prose: 400 KB
  (whole lines) from the middle of each of the three parts of the benchmark prose corpus (the
  King James Bible, the Jargon File, the Python documentation).

The reference (Python) trainer is checked at the same sizes as the native one except on
``prose_large``, where it learns 8,192 tokens instead of 20,000 (counting 1.2 MB with the Python
regex spanner and 20,000 merges in Python take too long for the test suite); the native
trainer is checked at both sizes there.
"""

from __future__ import annotations

import base64
import functools
import gzip
import random

import pytest
import tiktoken
from tokenizers import Tokenizer

from wordsplit import TokenizerOptions, load_vocab, save_vocab, train
from wordsplit.formats.hf import load_vocab_merges
from wordsplit.formats.tiktoken import load_tiktoken

from conftest import BACKENDS
from test_train import CORPUS, corpus_lines, hf_train, oracle_pattern, ours

SCRIPTS = [
    "abcdefghijklmnopqrstuvwxyz",
    "éèêëàâäôöûüçñíóú",
    "абвгдежзийклмнопрстуфхцчшщыэюя",
    "αβγδεζηθικλμνξοπρστυφχψω",
    "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生",
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモ",
]
SPECIALS = ["<|endoftext|>", "<|pad|>"]


def lines_of(words: dict[str, int], seed: int, per_line: int = 30) -> list[str]:
    """Every word ``count`` times, shuffled, ``per_line`` words a line."""
    rng = random.Random(seed)
    bag = [word for word, count in words.items() for _ in range(count)]
    rng.shuffle(bag)
    return [" ".join(bag[i:i + per_line]) + "\n" for i in range(0, len(bag), per_line)]


@functools.cache
def zipf_corpus(seed: int = 0, n_distinct: int = 40_000, scale: int = 3_000) -> list[str]:
    """Distinct random words (one script each, 2 to 9 letters); the word of rank r occurs
    ``1 + scale // r`` times."""
    rng = random.Random(seed)
    words: dict[str, int] = {}
    while len(words) < n_distinct:
        script = rng.choice(SCRIPTS)
        word = "".join(rng.choice(script) for _ in range(rng.randint(2, 9)))
        words.setdefault(word, 1 + scale // (len(words) + 1))
    return lines_of(words, seed)


@functools.cache
def ties_corpus(seed: int = 0, n_distinct: int = 30_000) -> list[str]:
    """Distinct words of 4 to 14 letters from ``abcdef``, each 1 to 3 times."""
    rng = random.Random(seed)
    words: dict[str, int] = {}
    while len(words) < n_distinct:
        words.setdefault("".join(rng.choice("abcdef") for _ in range(rng.randint(4, 14))), rng.randint(1, 3))
    return lines_of(words, seed)


@functools.cache
def prose_large() -> list[str]:
    with gzip.open(CORPUS / "prose_large.txt.gz", "rt", encoding="utf-8") as f:
        return f.read().splitlines(keepends=True)


CASES = {
    # name: (corpus, pattern, settings, backends)
    "zipf-50k-specials-maxlen": (zipf_corpus, "cl100k_base",
                                 dict(vocab_size=50_000, special_tokens=SPECIALS, max_token_length=16), BACKENDS),
    "zipf-32k-minfreq": (zipf_corpus, "o200k_base", dict(vocab_size=32_768, min_frequency=2), BACKENDS),
    "ties-50k": (ties_corpus, "cl100k_base", dict(vocab_size=50_000, special_tokens=["<s>"]), BACKENDS),
    "ties-16k-maxlen": (ties_corpus, "gpt2", dict(vocab_size=16_384, max_token_length=6), BACKENDS),
    "prose-20k": (prose_large, "cl100k_base", dict(vocab_size=20_000, special_tokens=SPECIALS), ["native"]),
    "prose-8k": (prose_large, "cl100k_base", dict(vocab_size=8_192, special_tokens=SPECIALS), BACKENDS),
}


@functools.cache
def hf_result(case: str) -> tuple[dict, list]:
    corpus, pattern, settings, _ = CASES[case]
    return hf_train(corpus(), oracle_pattern(pattern), **settings)


@pytest.mark.parametrize("case, backend", [(case, backend) for case, (*_, backends) in CASES.items()
                                           for backend in backends])
def test_large_vocab_and_merges_equal_hf(case, backend):
    corpus, pattern, settings, _ = CASES[case]
    expected = hf_result(case)
    vocab = train(corpus(), pattern=pattern, backend=backend, **settings)
    assert ours(vocab) == expected
    if "minfreq" not in case and "maxlen" not in case:
        assert vocab.n_vocab == settings["vocab_size"]  # the corpus is large enough to reach the size


def test_a_50k_vocabulary_gives_the_same_ids_in_all_three_libraries(tmp_path):
    """Train 50,000 tokens (native), save, and encode with each library and each file."""
    texts = zipf_corpus() + prose_large()[::4]
    vocab = train(texts, vocab_size=50_000, special_tokens=SPECIALS)
    assert vocab.merges is None  # rank-based, so the .tiktoken file is written
    paths = {p.name: p for p in save_vocab(vocab, tmp_path)}
    sample = (zipf_corpus()[::50] + prose_large()[1::40] + corpus_lines("multilingual", 20_000)
              + corpus_lines("code", 10_000) + ["hello<|endoftext|>world<|pad|>"])
    expected = [TokenizerOptions().build(vocab).encode(text, allowed_special="all") for text in sample]
    assert max(max(ids, default=0) for ids in expected) > 40_000  # the late merges are used

    hf = Tokenizer.from_file(str(paths["tokenizer.json"]))
    assert [e.ids for e in hf.encode_batch(sample)] == expected
    ranks = {base64.b64decode(token): int(rank) for token, rank in
             (line.split() for line in paths["trained.tiktoken"].read_text().splitlines())}
    enc = tiktoken.Encoding("trained", pat_str=vocab.pattern, mergeable_ranks=ranks,
                            special_tokens=dict(vocab.special_tokens))
    assert enc.encode_batch(sample, allowed_special="all") == expected
    loaded = [
        load_vocab(paths["tokenizer.json"]),
        load_tiktoken(paths["trained.tiktoken"], pattern=vocab.pattern, special_tokens=vocab.special_tokens),
        load_vocab_merges(paths["vocab.json"], paths["merges.txt"], paths["tokenizer_config.json"],
                          pattern=vocab.pattern),
    ]
    for other in loaded:
        assert dict(other.ranks) == dict(vocab.ranks)
        tok = TokenizerOptions().build(other)
        assert [tok.encode(text, allowed_special="all") for text in sample] == expected
