"""The ``wordsplit`` command: output, stdin, and one-line errors without tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wordsplit.cli import main


def run(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        import io

        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_encode_default_vocab_is_qwen3(capsys):
    assert run(capsys, "encode", "hello world") == (0, "14990 1879\n", "")


def test_encode_reads_stdin(capsys, monkeypatch):
    code, out, _ = run(capsys, "encode", "--vocab", "cl100k_base", stdin="hello world", monkeypatch=monkeypatch)
    assert (code, out) == (0, "15339 1917\n")


def test_decode_and_count(capsys, monkeypatch):
    assert run(capsys, "decode", "14990", "1879") == (0, "hello world\n", "")
    assert run(capsys, "decode", stdin="14990 1879\n", monkeypatch=monkeypatch)[1] == "hello world\n"
    assert run(capsys, "count", "Hello, world!") == (0, "4\n", "")


def test_special_policy_flags(capsys):
    code, out, err = run(capsys, "encode", "<|im_end|>")
    assert code == 2 and out == "" and "--special allow" in err and err.count("\n") == 1
    assert run(capsys, "encode", "--special", "allow", "<|im_end|>")[1] == "151645\n"
    assert run(capsys, "encode", "--special", "text", "<|im_end|>")[1] != "151645\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["encode", "--vocab", "cl100k", "x"], "Did you mean 'cl100k_base'"),
        (["decode", "999999999"], "999999999"),
        (["decode", "12x"], "integers"),
        (["encode", "--encoder", "nope", "x"], "unknown encoder"),
        (["encode", "--vocab", "/no/such/file.tiktoken", "x"], "/no/such/file.tiktoken"),
    ],
)
def test_user_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("wordsplit: error: ") and message in err and err.count("\n") == 1


def test_vocabs_lists_every_name(capsys):
    code, out, _ = run(capsys, "vocabs")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == [
        "cl100k_base", "gpt2", "o200k_base", "o200k_harmony", "p50k_base", "p50k_edit", "qwen3", "r50k_base"
    ]


def test_console_script_and_module_entry_points():
    for cmd in (["wordsplit"], [sys.executable, "-m", "wordsplit"]):
        done = subprocess.run([*cmd, "encode", "hello world"], capture_output=True, text=True)
        assert (done.returncode, done.stdout, done.stderr) == (0, "14990 1879\n", "")
    done = subprocess.run([sys.executable, "-m", "wordsplit", "decode", "-5"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
