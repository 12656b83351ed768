"""``wordsplit bench``: every combination timed, parity checked, table and JSON, stdin, errors."""

from __future__ import annotations

import io
import json

import pytest

from wordsplit.cli import bench as cli_bench
from wordsplit.cli.bench import read_sample

from conftest import tokenizer_for

TEXT = "Hello, world! Ünïcödé text, 日本語, and numbers 12345.\n" * 40 + "The end.\n"


@pytest.fixture
def run(cli, capsys):
    """``wordsplit ARGV`` (the shared ``cli`` fixture); returns (status, stdout, stderr), also
    on SystemExit."""

    def run(*argv, stdin: bytes = None):
        try:
            return cli(*argv, stdin=stdin)
        except SystemExit as exit_:  # --help, and the status 1 of a mismatch
            out, err = capsys.readouterr()
            return exit_.code, out, err

    return run


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_table_has_every_default_combination(run, text_file):
    code, out, err = run("bench", text_file, "--repeat", "1")
    assert (code, err) == (0, "")
    header, *rows, footer = out.splitlines()
    assert header.split() == ["backend", "spanner", "encoder", "MB/s", "Mtok/s", "ms/run", "time", "vs", "best", "ids"]
    # auto + the three registered encoders, with the auto spanner (Qwen3's scanner) and regex
    assert sorted((r.split()[1], r.split()[2]) for r in rows) == sorted(
        (s, e) for s in ("qwen2-scanner", "regex") for e in ("auto", "backtrack", "buffer-sweep", "heap-merge"))
    assert all(r.split()[-1] == "ok" for r in rows) and rows[0].split()[-2] == "1.00x"
    tokens = len(tokenizer_for("qwen3").encode(TEXT))
    assert footer == f"qwen3: {len(TEXT.encode()):,} bytes, {tokens:,} tokens as one text; median of 1 run"


def test_json_lines_from_stdin_both_backends(run):
    code, out, _ = run("bench", "--vocab", "gpt2", "--encoder", "backtrack,heap-merge", "--spanner", "regex",
                       "--backend", "native,python", "--lines", "--threads", "2", "--repeat", "2", "--json",
                       stdin=TEXT.encode())
    data = json.loads(out)
    assert code == 0
    assert (data["vocab"], data["bytes"], data["repeat"], data["lines"]) == ("gpt2", len(TEXT.encode()), 2, True)
    tok = tokenizer_for("gpt2")
    tokens = sum(len(tok.encode(line)) for line in TEXT.split("\n"))
    assert [(r["backend"], r["encoder"], r["tokens"], r["matches"]) for r in data["rows"]] == [
        ("native", "backtrack", tokens, True), ("native", "heap-merge", tokens, True),
        ("python", "backtrack", tokens, True), ("python", "heap-merge", tokens, True)]
    assert all(r["seconds"] > 0 and r["mb_per_s"] > 0 and r["tokens_per_s"] > 0 for r in data["rows"])


def test_mismatch_is_reported_loudly(run, text_file, monkeypatch):
    """An encoder that gets one id wrong is flagged in the table and fails the command."""
    real = cli_bench.TokenizerOptions

    class Broken:
        def __init__(self, tok):
            self._tok = tok

        def __getattr__(self, name):
            return getattr(self._tok, name)

        def encode(self, text, **policy):
            return self._tok.encode(text, **policy)[:-1] + [0]

    def options(**kwargs):
        opts = real(**kwargs)
        if kwargs.get("encoder") != "heap-merge":
            return opts
        return type("BrokenOptions", (), {"build": lambda self, vocab: Broken(opts.build(vocab))})()

    monkeypatch.setattr(cli_bench, "TokenizerOptions", options)
    code, out, err = run("bench", text_file, "--encoder", "backtrack,heap-merge", "--spanner", "auto", "--repeat", "1")
    assert code == 1
    assert [line.split()[-1] for line in out.splitlines()[1:3]] in (["ok", "MISMATCH"], ["MISMATCH", "ok"])
    assert err == ("wordsplit: MISMATCH: auto/auto/heap-merge gives other ids than auto/auto/backtrack; "
                   "this is a bug, please report it with the input\n")


def test_max_bytes_cuts_at_a_line_break(run, text_file):
    code, out, _ = run("bench", text_file, "--encoder", "auto", "--spanner", "auto", "--max-bytes", "1KB",
                       "--repeat", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["input_bytes"] == len(TEXT.encode()) and data["bytes"] <= 1000
    assert data["rows"][0]["tokens"] == len(tokenizer_for("qwen3").encode(TEXT.encode()[:data["bytes"]].decode()))


@pytest.mark.parametrize(
    "data, limit, sample",
    [
        (b"one\ntwo\nthree\n", 10, "one\ntwo\n"),
        (b"one\ntwo\n", 8, "one\ntwo\n"),               # within the limit: all of it
        (b"abcdef", 4, "abcd"),                          # no line break: cut at the limit
        ("aé日".encode(), 5, "aé"),                      # ... but not inside a character
    ],
)
def test_read_sample(data, limit, sample, tmp_path):
    # A stream's size is known only when it was read to the end; a file's always.
    assert read_sample(io.BytesIO(data), limit) == (sample, None if len(data) > limit else len(data))
    path = tmp_path / "sample.txt"
    path.write_bytes(data)
    with open(path, "rb") as f:
        assert read_sample(f, limit) == (sample, len(data))


def test_python_backend_on_a_big_input_warns(run, text_file, monkeypatch):
    monkeypatch.setattr(cli_bench, "PYTHON_BYTES_PER_S", 10)
    code, _, err = run("bench", text_file, "--backend", "python", "--encoder", "auto", "--spanner", "auto",
                       "--repeat", "1")
    assert code == 0 and err.startswith("wordsplit: warning: the python backend encodes about ")
    assert "--max-bytes" in err and err.count("\n") == 1


def test_help_has_an_example(run):
    code, out, _ = run("bench", "--help")
    assert code == 0 and "examples:\n  wordsplit bench " in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--encoder", "nope"], "unknown encoder 'nope'"),
        (["--spanner", "cl100k-scanner", "--backend", "python"], "the cl100k-scanner handles only"),
        (["--backend", "rust"], "unknown backend 'rust'"),
        (["--encoder", ","], "--encoder needs at least one name"),
        (["--vocab", "cl100k"], "Did you mean 'cl100k_base'"),
    ],
)
def test_user_errors_are_one_line(run, text_file, argv, message):
    code, out, err = run("bench", text_file, *argv)
    assert code == 2 and out == ""
    assert err.startswith("wordsplit: error: ") and message in err and err.count("\n") == 1


def test_unreadable_and_empty_input(run, tmp_path):
    missing = tmp_path / "missing.txt"
    assert run("bench", missing)[1:] == ("", f"wordsplit: error: cannot read {missing}: No such file or directory\n")
    assert run("bench", stdin=b"")[2] == "wordsplit: error: nothing to encode: the input is empty\n"
    assert run("bench", stdin=b"\xff")[2] == (
        "wordsplit: error: the input is not UTF-8 text (byte 0: invalid start byte)\n")
