"""A trained vocabulary, saved, gives the same ids in wordsplit, HF tokenizers and tiktoken;
and the native trainer equals the reference on any word counts (hypothesis)."""

from __future__ import annotations

import base64

import pytest
import tiktoken
from hypothesis import given, settings, strategies as st
from tokenizers import Tokenizer

from wordsplit import TokenizerOptions, load_vocab, save_vocab, train
from wordsplit.errors import TrainingInputError, VocabFormatError
from wordsplit.formats.hf import load_vocab_merges
from wordsplit.formats.tiktoken import load_tiktoken
from wordsplit.spec import Nfc
from wordsplit.training.bpe import TrainResult, train_bpe
from wordsplit.training.native import train_native
from wordsplit.training.save import tiktoken_text
from wordsplit.training.vocab import result_to_vocab

from test_train import corpus_lines, hf_tokenizer, hf_trainer, oracle_pattern

SPECIALS = ["<|endoftext|>", "<|pad|>"]


def sample_texts() -> list[str]:
    return (corpus_lines("prose", 80_000)[-150:] + corpus_lines("code", 8_000) + corpus_lines("multilingual", 8_000)
            + ["hello<|endoftext|>world", "  trailing  \n\n  "])


@pytest.mark.parametrize("pattern", ["cl100k_base", "qwen3", "gpt2"])
def test_saved_files_give_the_same_ids_in_all_three_libraries(tmp_path, pattern):
    texts = corpus_lines("prose", 40_000) + corpus_lines("multilingual", 20_000)
    vocab = train(texts, vocab_size=1200, pattern=pattern, special_tokens=SPECIALS)
    paths = {p.name: p for p in save_vocab(vocab, tmp_path)}
    assert sorted(paths) == ["merges.txt", "tokenizer.json", "tokenizer_config.json", "trained.tiktoken", "vocab.json"]
    sample = sample_texts()
    ours = TokenizerOptions().build(vocab)
    expected = [ours.encode(text, allowed_special="all") for text in sample]

    # HF trains the same model, and reads every file back to the same ids.
    trained_by_hf = hf_tokenizer(oracle_pattern(pattern), nfc=vocab.normalizer == Nfc())
    trained_by_hf.train_from_iterator(texts, hf_trainer(1200, special_tokens=SPECIALS))
    from_file = Tokenizer.from_file(str(paths["tokenizer.json"]))
    for hf in (trained_by_hf, from_file):
        assert [e.ids for e in hf.encode_batch(sample)] == expected
    assert from_file.decode(expected[0]) == sample[0]

    # tiktoken, given the pattern and the specials beside the rank file.
    ranks = {base64.b64decode(token): int(rank) for token, rank in
             (line.split() for line in paths["trained.tiktoken"].read_text().splitlines())}
    enc = tiktoken.Encoding("trained", pat_str=vocab.pattern, mergeable_ranks=ranks,
                            special_tokens=dict(vocab.special_tokens))
    assert [enc.encode(text, allowed_special="all") for text in sample] == expected

    # wordsplit reads all three back.
    loaded = [
        load_vocab(paths["tokenizer.json"]),
        load_tiktoken(paths["trained.tiktoken"], pattern=vocab.pattern, special_tokens=vocab.special_tokens,
                      normalizer=vocab.normalizer),
        load_vocab_merges(paths["vocab.json"], paths["merges.txt"], paths["tokenizer_config.json"],
                          pattern=vocab.pattern, normalizer=vocab.normalizer),
    ]
    for other in loaded:
        assert dict(other.ranks) == dict(vocab.ranks)
        tok = TokenizerOptions().build(other)
        assert [tok.encode(text, allowed_special="all") for text in sample] == expected
    # The directory loads as its tokenizer.json, which runs on the trained pattern's own spanner
    # (its Split pattern is a spelling HF reads as it is and a scanner is registered for).
    reloaded = TokenizerOptions().build(load_vocab(tmp_path))
    assert reloaded.spanner_name == ours.spanner_name != "hf-split"
    assert [reloaded.encode(text, allowed_special="all") for text in sample] == expected


def test_a_pair_ranked_result_keeps_hf_merges_and_has_no_tiktoken_file(tmp_path):
    """Two pairs spelling the same token (HF reuses the id): the Vocab is pair-ranked."""
    a, b, c = 65, 66, 67  # ids of the byte tokens "b", "c", "d" (GPT-2 order starts at "!")
    tokens = [bytes([x]) for x in __import__("wordsplit.formats.bytelevel", fromlist=["BYTE_ORDER"]).BYTE_ORDER]
    tokens += [b"bc", b"cd", b"bcd"]
    result = TrainResult(special_tokens=(), tokens=tuple(tokens),
                         merges=((a, b, 256), (b, c, 257), (256, c, 258), (a, 257, 258)))
    vocab = result_to_vocab(result, pattern=r"\S+|\s+", normalizer="none", name="reused")
    assert vocab.merges == {(a, b): 0, (b, c): 1, (256, c): 2, (a, 257): 3}
    with pytest.raises(VocabFormatError, match="pair-ranked"):
        tiktoken_text(vocab)
    names = sorted(p.name for p in save_vocab(vocab, tmp_path))
    assert names == ["merges.txt", "tokenizer.json", "tokenizer_config.json", "vocab.json"]
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ours = TokenizerOptions().build(vocab)
    for text in ["bcd", "cd", "bcdcd bc"]:
        assert ours.encode(text) == hf.encode(text).ids


@pytest.mark.parametrize("backend", ["python", "native"])
def test_a_merge_making_a_special_tokens_text_is_an_error(backend):
    with pytest.raises(TrainingInputError, match="special token '<s>'"):
        train(["<s> <s> <s>"], vocab_size=300, pattern=r"\S+|\s+", special_tokens=["<s>"], backend=backend)
    with pytest.raises(TrainingInputError, match="byte 0x20"):
        train(["a"], vocab_size=300, special_tokens=["Ġ"], backend=backend)


words = st.dictionaries(st.binary(min_size=1, max_size=12).map(lambda w: w[:12]) |
                        st.text(alphabet="ab \n", min_size=1, max_size=12).map(str.encode),
                        st.integers(1, 50), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(counts=words, extra=st.integers(0, 200),
       specials=st.lists(st.sampled_from(["<s>", "</s>", "<pad>"]), max_size=3),
       min_frequency=st.integers(0, 5), max_token_length=st.none() | st.integers(1, 8))
def test_native_trainer_equals_the_reference(counts, extra, specials, min_frequency, max_token_length):
    options = dict(vocab_size=256 + len(set(specials)) + extra, special_tokens=specials,
                   min_frequency=min_frequency, max_token_length=max_token_length)
    assert train_native(counts, **options) == train_bpe(counts, **options)


def test_counts_past_32_bits():
    """HF's pair counts are 32-bit; these are not."""
    big = {b"ab": 3 << 31, b"cd": (3 << 31) - 1}
    for trainer in (train_bpe, train_native):
        result = trainer(big, vocab_size=258)
        assert [result.tokens[m[2]] for m in result.merges] == [b"ab", b"cd"]


def test_native_rank_pairs_equal_the_python_ones():
    from wordsplit.formats.merges import rank_pairs

    vocab = train(corpus_lines("code", 30_000), vocab_size=1500, special_tokens=SPECIALS)
    tokens = list(vocab.token_bytes)
    for i in vocab.special_tokens.values():
        tokens[i] = None
    assert rank_pairs(tokens, native=True) == rank_pairs(tokens, native=False)


@pytest.mark.parametrize("pattern", [r"[$a-z]+|\$|\p{N}{2}+|\s+", r"\p{L}{1,3}+|[^\p{L}]+$|\s+"])
def test_hf_pattern_splits_as_the_regex_spanner(pattern):
    """hf_pattern's spelling splits in HF's Oniguruma as training splits the original (the
    regex spanner's pieces and the text between them)."""
    from tokenizers import Regex, pre_tokenizers

    from wordsplit.spanners import RegexSpanner
    from wordsplit.training.counting import pieces_of
    from wordsplit.training.save import hf_pattern

    split = pre_tokenizers.Split(Regex(hf_pattern(pattern)), "isolated")
    for text in ["ab$c 1234 $x\n", "héllo wörld!!\n  ", "ab 12345 $$ \n\n"]:
        assert [piece for piece, _ in split.pre_tokenize_str(text)] == list(pieces_of(RegexSpanner(pattern), text))


def test_an_error_in_the_progress_callback_stops_native_training():
    def progress(n_tokens, vocab_size):
        if n_tokens > 300:
            raise KeyboardInterrupt

    counts = {bytes([a, b, c]): 1 for a in range(97, 123) for b in range(97, 123) for c in (32, 33)}
    with pytest.raises(KeyboardInterrupt):
        train_native(counts, vocab_size=2000, progress=progress)
