"""``wordsplit train``: files in, the three formats out, the same vocabulary as the API."""

from __future__ import annotations

import gzip
import json

import pytest

from wordsplit import load_vocab, train
from wordsplit.cli import main


def test_train_writes_every_format_and_equals_the_api(tmp_path, capsys):
    lines = ["hug hug pug\n", "pun bun hugs\n"] * 5
    (tmp_path / "a.txt").write_text("".join(lines[:4]))
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        for line in lines[4:]:
            f.write(json.dumps({"content": line}) + "\n")
    status = main(["train", str(tmp_path / "a.txt"), str(tmp_path / "b.jsonl.gz"), "--field", "content",
                   "--vocab-size", "266", "--pattern", "gpt2", "--special", "<|endoftext|>", "--special", "<pad>",
                   "--out", str(tmp_path / "tok"), "--name", "mine"])
    assert status == 0
    out = capsys.readouterr().out
    assert out.startswith("trained 266 tokens (2 special, rank-based)")
    assert sorted(p.name for p in (tmp_path / "tok").iterdir()) == [
        "merges.txt", "mine.tiktoken", "tokenizer.json", "tokenizer_config.json", "vocab.json"]
    expected = train(lines, vocab_size=266, pattern="gpt2", special_tokens=["<|endoftext|>", "<pad>"])
    loaded = load_vocab(tmp_path / "tok" / "tokenizer.json")
    assert dict(loaded.ranks) == dict(expected.ranks)
    assert dict(loaded.special_tokens) == {"<|endoftext|>": 0, "<pad>": 1}


@pytest.mark.parametrize("args, message", [
    (["missing.txt", "--vocab-size", "300"], "training file not found"),
    (["x.txt", "--vocab-size", "300", "--backend", "gpu"], "unknown backend"),
    (["x.txt", "--vocab-size", "300", "--sample-rate", "2"], "sample_rate must be a number in (0, 1]"),
])
def test_train_errors_are_one_line(tmp_path, capsys, args, message):
    (tmp_path / "x.txt").write_text("hello\n")
    args = [str(tmp_path / a) if a.endswith(".txt") else a for a in args]
    assert main(["train", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wordsplit: error: ") and message in err and err.count("\n") == 1


def test_train_sampling_options_equal_the_api(tmp_path, capsys):
    lines = [f"hug hug pug {i}\n" if i % 3 else f"pun bun hugs {i}\n" for i in range(60)]
    (tmp_path / "a.txt").write_text("".join(lines))
    status = main(["train", str(tmp_path / "a.txt"), "--vocab-size", "270", "--max-words", "100",
                   "--sample-rate", "0.5", "--seed", "3", "--out", str(tmp_path / "tok"), "--quiet"])
    assert status == 0 and capsys.readouterr().out == ""
    expected = train(lines, vocab_size=270, max_words=100, sample_rate=0.5, seed=3)
    assert dict(load_vocab(tmp_path / "tok" / "tokenizer.json").ranks) == dict(expected.ranks)
    assert dict(expected.ranks) != dict(train(lines, vocab_size=270).ranks)


def test_a_trained_vocabulary_loads_back_by_directory_and_by_rank_file_with_pattern(tmp_path, capsys):
    """`wordsplit encode --vocab DIR` reads train's own output (its tokenizer.json); a rank file
    takes --pattern (a registered name or a regex), and get_tokenizer passes pattern= on."""
    from wordsplit import get_tokenizer, load_vocab

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hug hug pug\npun bun hugs\n", encoding="utf-8")
    out = tmp_path / "tok"
    assert main(["train", str(corpus), "--vocab-size", "265", "--out", str(out), "--quiet"]) == 0
    expected = " ".join(map(str, get_tokenizer(out / "tokenizer.json").encode("hugs pun")))
    assert main(["encode", "--vocab", str(out), "hugs pun"]) == 0
    assert capsys.readouterr().out == expected + "\n"
    rank_file = str(out / "trained.tiktoken")
    for pattern in ("cl100k_base", load_vocab("cl100k_base").pattern):
        assert main(["encode", "--vocab", rank_file, "--pattern", pattern, "hugs pun"]) == 0
        assert capsys.readouterr().out == expected + "\n"
    assert main(["decode", "--vocab", rank_file, "--pattern", "cl100k_base", *expected.split()]) == 0
    assert capsys.readouterr().out == "hugs pun\n"
    assert main(["encode", "--vocab", "gpt2", "--pattern", "cl100k_base", "x"]) == 2
    assert "--pattern applies to rank files" in capsys.readouterr().err
    tok = get_tokenizer(rank_file, pattern=load_vocab("cl100k_base").pattern, backend="python")
    assert " ".join(map(str, tok.encode("hugs pun"))) == expected and tok.spanner_name == "cl100k-scanner"
