"""The ``wordsplit`` command: output, stdin, and one-line errors without tracebacks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

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
    assert "allowed_special" not in err  # the command line's words only, not Python's too
    assert run(capsys, "encode", "--special", "allow", "<|im_end|>")[1] == "151645\n"
    assert run(capsys, "encode", "--special", "text", "<|im_end|>")[1] != "151645\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["encode", "--vocab", "cl100k", "x"], "Did you mean 'cl100k_base'"),
        (["encode", "--vocab", "gpt-9", "x"], "the models of tiktoken's encoding_for_model"),
        (["encode", "--vocab", "Qwen/Qwen3-8B", "x"], "Did you mean 'hf:Qwen/Qwen3-8B'?"),
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
        "cl100k_base", "gpt2", "mistral-v1", "o200k_base", "o200k_harmony", "p50k_base", "p50k_edit", "qwen3",
        "r50k_base",
    ]


def test_console_script_and_module_entry_points():
    for cmd in (["wordsplit"], [sys.executable, "-m", "wordsplit"]):
        done = subprocess.run([*cmd, "encode", "hello world"], capture_output=True, text=True)
        assert (done.returncode, done.stdout, done.stderr) == (0, "14990 1879\n", "")
    done = subprocess.run([sys.executable, "-m", "wordsplit", "decode", "-5"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr


# -- every OSError is one line; Ctrl-C is "interrupted" and 130 for every command ----------------

def test_os_errors_are_one_line(capsys, tmp_path, monkeypatch):
    """An OSError from anywhere (here: a vocab directory whose tokenizer.json is a directory) is
    one line naming the file, status 2, never a traceback."""
    (tmp_path / "tokenizer.json").mkdir()
    code, out, err = run(capsys, "encode", "--vocab", str(tmp_path), "x")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("wordsplit: error: ") and "tokenizer.json" in err

    from wordsplit.cli import basic

    for exc, shown in [
        (PermissionError(13, "Permission denied", "a.txt", None, "b.txt"), "a.txt -> b.txt: Permission denied"),
        (OSError(28, "No space left on device"), "[Errno 28] No space left on device"),
        (IsADirectoryError(21, "Is a directory", "d/tokenizer.json"), "d/tokenizer.json: Is a directory"),
    ]:
        def fail(args, exc=exc):
            raise exc

        monkeypatch.setattr(basic, "cmd_encode", fail)
        assert run(capsys, "encode", "x") == (2, "", f"wordsplit: error: {shown}\n")


def _wait_until_reading_stdin(child, what: str) -> None:
    """Wait until ``child`` is blocked reading its stdin pipe (Linux: /proc/PID/wchan), so that
    the signal arrives in the command, not while Python is still starting."""
    deadline = time.monotonic() + 30
    wchan = f"/proc/{child.pid}/wchan"
    while True:
        assert child.poll() is None, f"{what} ended before it was interrupted: {child.communicate()}"
        assert time.monotonic() < deadline, f"{what} never waited on stdin"
        try:
            with open(wchan) as f:
                if "pipe" in f.read():
                    return
        except FileNotFoundError:  # no /proc: give start-up time instead
            time.sleep(5)
            return
        time.sleep(0.02)


def _interrupt(child) -> tuple[int, str, str]:
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    return child.returncode, stdout, stderr


@pytest.mark.parametrize("argv", [["encode"], ["count", "--vocab", "gpt2"], ["show"], ["explain"],
                                  ["compare"], ["decode"]], ids=lambda argv: argv[0])
def test_ctrl_c_while_waiting_on_stdin(argv):
    child = subprocess.Popen([sys.executable, "-m", "wordsplit", *argv], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_reading_stdin(child, argv[0])
        assert _interrupt(child) == (130, "", "wordsplit: interrupted\n")
    finally:
        child.kill()
        child.wait()


def test_ctrl_c_while_encoding_a_large_input(tmp_path):
    """Ctrl-C in the middle of the work (the Python backend encoding 4 MB read from stdin)."""
    big = tmp_path / "big.txt"
    big.write_text("hello world, tokenizers everywhere. " * 120_000, encoding="utf-8")
    with open(big, "rb") as stdin:
        child = subprocess.Popen([sys.executable, "-m", "wordsplit", "encode", "--backend", "python"], stdin=stdin,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            size = big.stat().st_size
            # Once stdin has been read to its end, the encode itself is running.
            while os.lseek(stdin.fileno(), 0, os.SEEK_CUR) < size:
                assert child.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(0.2)
            assert _interrupt(child) == (130, "", "wordsplit: interrupted\n")
        finally:
            child.kill()
            child.wait()


def test_ctrl_c_during_a_download(tmp_path):
    """A server that stalls mid-body: Ctrl-C ends the download with status 130 and no partial file."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(30)
    port = server.getsockname()[1]
    cache = tmp_path / "cache"
    child = subprocess.Popen([sys.executable, "-m", "wordsplit", "download", f"http://127.0.0.1:{port}/x.tiktoken",
                              "--cache-dir", str(cache)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        conn, _ = server.accept()
        with conn:
            conn.settimeout(30)
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"a" * 1000)
            # Wait until the client is blocked on the rest of the body.
            deadline = time.monotonic() + 30
            while not any(".tmp" in p.name for p in cache.rglob("*")):
                assert child.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(0.2)
            assert _interrupt(child) == (130, "", "wordsplit: interrupted\n")
    finally:
        server.close()
        child.kill()
        child.wait()
    assert [p.name for p in cache.rglob("*") if ".tmp" in p.name or p.name == "x.tiktoken"] == []


def test_show_html_interrupted_leaves_no_partial_page(capsys, tmp_path, monkeypatch):
    """Ctrl-C while the page is written: no half page is left at OUT (in-process: the
    interrupt is raised by the write itself)."""
    from wordsplit.cli import views as cli_views

    out = tmp_path / "page.html"

    def interrupted_write(f, page):
        f.write(page[:100])
        f.flush()
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_views, "_write_page", interrupted_write, raising=True)
    assert run(capsys, "show", "hello world", "--html", str(out)) == (130, "", "wordsplit: interrupted\n")
    assert list(tmp_path.iterdir()) == []


# -- TEXT, --file and stdin: a file name is never tokenized as text ---------------------------------

@pytest.mark.parametrize("command", ["encode", "count", "explain", "show", "compare"])
def test_text_that_names_a_file_is_refused(capsys, tmp_path, monkeypatch, command):
    """`wordsplit count corpus.txt` meant the file: a TEXT naming an existing file is refused
    with the way to say which, and --file reads it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text("hello world", encoding="utf-8")
    code, out, err = run(capsys, command, "corpus.txt")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "is the name of a file" in err and "--file corpus.txt" in err


def test_encode_and_count_read_a_file_or_stdin(capsys, tmp_path, monkeypatch):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello world\r\n")
    # "\r\n" is one token, kept as stored
    assert run(capsys, "encode", "--file", str(path)) == (0, "14990 1879 319\n", "")
    assert run(capsys, "count", "--file", str(path)) == (0, "3\n", "")
    assert run(capsys, "count", "--file", "-", stdin="hello world", monkeypatch=monkeypatch) == (0, "2\n", "")
    code, _, err = run(capsys, "count", "--file", str(path), "x")
    assert code == 2 and "not both" in err
    code, _, err = run(capsys, "encode", "--file", str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt" in err


def test_invalid_utf8_in_an_argument_is_an_error(capsys):
    """Bytes that are not UTF-8 reach sys.argv as lone surrogates (surrogateescape); they are an
    error, as on stdin, not U+FFFD's ids."""
    code, out, err = run(capsys, "encode", "ab\udcffcd")
    assert code == 2 and out == "" and "not valid UTF-8 (byte 0xff at character 2)" in err
    done = subprocess.run([sys.executable, "-m", "wordsplit", "count", b"ab\xffcd".decode("utf-8", "surrogateescape")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "not valid UTF-8" in done.stderr


def test_decode_help_lists_only_the_options_that_apply(capsys):
    with pytest.raises(SystemExit):
        main(["decode", "--help"])
    out = capsys.readouterr().out
    assert "--vocab" in out and not any(o in out for o in ("--spanner", "--encoder", "--backend", "--special"))


def test_the_command_works_without_rich(tmp_path):
    """rich is an extra (wordsplit[cli]): without it the commands print plainer, the same
    tables and the progress as a line that rewrites itself."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hug hug pug\npun bun hugs\n" * 20, encoding="utf-8")
    script = (
        "import sys; sys.modules['rich'] = None  # `import rich` raises ImportError\n"
        "from wordsplit.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )

    def run(*argv):
        done = subprocess.run([sys.executable, "-c", script, *map(str, argv)], capture_output=True, text=True,
                              cwd=tmp_path)
        return done.returncode, done.stdout, done.stderr

    assert run("encode", "hello world") == (0, "14990 1879\n", "")
    assert run("show", "--color", "always", "hello world") == (
        0, "hello| world\n2 tokens, 11 characters, 11 bytes, 5.50 bytes/token\n", "")
    code, out, _ = run("compare", "--vocab", "qwen3,gpt2", "hello world")
    assert (code, out.splitlines()[:2]) == (0, ["vocab  n_vocab  tokens  bytes/token  vs qwen3",
                                                 "qwen3  151,669       2         5.50     1.00x"])
    code, out, _ = run("bench", corpus, "--repeat", "1", "--encoder", "auto", "--spanner", "auto")
    assert code == 0 and out.splitlines()[0].split()[:3] == ["backend", "spanner", "encoder"]
    code, out, err = run("train", corpus, "--vocab-size", "262", "--out", tmp_path / "tok", "--progress")
    assert code == 0 and out.startswith("trained 262 tokens")
    assert "counting words: " in err and "learning merges: " in err and err.endswith("\n")
    assert "rich" not in subprocess.run([sys.executable, "-c", "import wordsplit.cli, wordsplit, sys; "
                                         "print(sorted(m for m in sys.modules if m.startswith('rich')))"],
                                        capture_output=True, text=True).stdout.strip("[]\n")


def test_an_unrecognized_rank_file_gets_the_fix_in_the_command_lines_words(tmp_path, capsys):
    """A .tiktoken wordsplit does not recognize needs its pattern: the command says --pattern,
    the Python error load_vocab(..., pattern=...); every command that takes --vocab takes it."""
    import base64

    from wordsplit import load_vocab
    from wordsplit.errors import VocabFormatError

    rank_file = tmp_path / "mine.tiktoken"
    rank_file.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    for argv in (["encode", "--vocab", str(rank_file), "hi"], ["decode", "--vocab", str(rank_file), "104"],
                 ["encode-dataset", str(rank_file), "--out", str(tmp_path / "out"), "--vocab", str(rank_file),
                  "--format", "npy"]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert err.startswith(f"wordsplit: error: {rank_file} is a rank file (sha256 "), argv
        assert "give the split pattern the tokenizer was trained with: --pattern NAME" in err, argv
        assert "load_vocab" not in err and "wordsplit.patterns" not in err, argv
    with pytest.raises(VocabFormatError, match=r"pass the pattern the tokenizer was trained with: load_vocab\("):
        load_vocab(rank_file)
    assert run(capsys, "encode", "--vocab", str(rank_file), "--pattern", "cl100k_base", "hi") == (0, "104 105\n", "")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hi\n")
    code, out, err = run(capsys, "encode-dataset", str(corpus), "--out", str(tmp_path / "out"),
                         "--vocab", str(rank_file), "--pattern", "cl100k_base", "--format", "npy")
    assert (code, err) == (0, "") and "1 document, 2 tokens" in out
