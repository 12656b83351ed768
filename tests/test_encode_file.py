"""wordsplit.apps.encode_file and ``wordsplit encode-file``: documents, formats, index, eos, errors,
bounded memory, and no partial output after an error or Ctrl-C."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import unicodedata

import numpy as np
import pytest

import wordsplit.apps.encode_file as ef
from wordsplit.apps.encode_file import encode_file, index_path, load_encoded
from wordsplit.errors import DisallowedSpecialError, EncodeInputError, UnknownTokenError, WordsplitError

from conftest import DATA, tokenizer_for

DOCS = [
    "hello world",
    "",
    "héllo wörld, 日本語のテキスト 🙂 and e\u0301 (decomposed)",
    "two\nlines\r\nand a tab\there",
    "specials as text: <|endoftext|> <|im_end|> <think>",
    "   leading and trailing spaces   ",
    "x" * 300,
    "",
]


def native(name: str):
    return tokenizer_for(name, "auto", "native")


def expected_ids(tok, doc: str) -> list:
    return tok.encode(doc, disallowed_special=())


def write_jsonl(path, docs, field="text"):
    with open(path, "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps({field: doc, "meta": 1}) + "\n")


def read_with_numpy(out):
    """The ids and index through NumPy, as a user would read them."""
    if str(out).endswith(".npy"):
        return np.load(out), np.load(index_path(out))
    return None, np.fromfile(index_path(out), dtype="<u8")


# -- round trip ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, dtype", [("gpt2", "<u2"), ("r50k_base", "<u2"), ("cl100k_base", "<u4"),
                                         ("qwen3", "<u4")])
@pytest.mark.parametrize("suffix", ["bin", "npy"])
@pytest.mark.parametrize("eos", [False, True], ids=["plain", "eos"])
def test_jsonl_round_trip(tmp_path, name, dtype, suffix, eos):
    tok = native(name)
    src, out = tmp_path / "docs.jsonl", tmp_path / f"ids.{suffix}"
    write_jsonl(src, DOCS)
    # A tiny chunk: many batches, so the offsets must carry over from one to the next.
    summary = encode_file(tok, src, out, field="text", eos=eos, chunk_bytes=64)
    ids, index = read_with_numpy(out)
    if ids is None:
        ids = np.fromfile(out, dtype=dtype)
    assert ids.dtype == np.dtype(dtype) and index.dtype == np.dtype("<u8")
    assert summary.dtype == {"<u2": "uint16", "<u4": "uint32"}[dtype]
    assert (summary.documents, summary.tokens, summary.bytes) == (len(DOCS), len(ids), src.stat().st_size)
    assert len(index) == len(DOCS) + 1 and index[0] == 0 and index[-1] == len(ids)
    for i, doc in enumerate(DOCS):
        span = ids[index[i]:index[i + 1]].tolist()
        if eos:
            assert span[-1] == tok.eos_token_id
            span = span[:-1]
        assert span == expected_ids(tok, doc)
        text = unicodedata.normalize("NFC", doc) if name == "qwen3" else doc
        assert tok.decode(span) == text
    # The reader without NumPy gives the same.
    assert [a.tolist() for a in load_encoded(out)] == [ids.tolist(), index.tolist()]


def test_npy_header_is_numpy_format_1_0(tmp_path):
    src, out = tmp_path / "docs.jsonl", tmp_path / "ids.npy"
    write_jsonl(src, ["hello world"] * 3)
    encode_file(native("gpt2"), src, out, field="text")
    with open(out, "rb") as f:
        assert np.lib.format.read_magic(f) == (1, 0)
        assert np.lib.format.read_array_header_1_0(f) == ((6,), False, np.dtype("<u2"))
        assert f.tell() % 64 == 0  # the data is aligned, as NumPy writes it
    assert np.load(out, mmap_mode="r").tolist() == [31373, 995] * 3


def test_empty_input(tmp_path):
    src, out = tmp_path / "empty.txt", tmp_path / "ids.npy"
    src.write_bytes(b"")
    summary = encode_file(native("qwen3"), src, out)
    assert (summary.documents, summary.tokens) == (0, 0)
    assert np.load(out).shape == (0,) and np.load(index_path(out)).tolist() == [0]


# -- what a document is ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "data, separator, docs",
    [
        ("a\nb\n", "\n", ["a", "b"]),            # a final separator starts no document
        ("a\nb", "\n", ["a", "b"]),
        ("\n", "\n", [""]),                      # an empty line is an empty document
        ("a\n\nb", "\n", ["a", "", "b"]),
        ("a\r\nb\r\n", "\n", ["a\r", "b\r"]),    # the rule is exact: \r stays unless it is in the separator
        ("a\r\nb\r\n", "\r\n", ["a", "b"]),
        ("one\ntwo\n\nthree\n\n", "\n\n", ["one\ntwo", "three"]),
        ("a\nb\n", None, ["a\nb\n"]),            # the whole file
        ("", "\n", []),
    ],
)
def test_plain_text_documents(tmp_path, data, separator, docs):
    tok = native("qwen3")
    src, out = tmp_path / "in.txt", tmp_path / "ids.bin"
    src.write_bytes(data.encode())
    summary = encode_file(tok, src, out, separator=separator)
    ids, index = load_encoded(out)
    assert summary.documents == len(docs)
    assert [ids[index[i]:index[i + 1]].tolist() for i in range(len(docs))] == [tok.encode(d) for d in docs]


def test_split_matches_bytes_split_across_reads(monkeypatch):
    """A separator straddling two reads is found, left to right as bytes.split finds it."""
    rng = random.Random(5)
    for read_bytes in (1, 2, 3, 7):
        monkeypatch.setattr(ef, "READ_BYTES", read_bytes)
        for _ in range(300):
            data = bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(0, 30)))
            sep = rng.choice([b"\n", b"ab", b"aa", b"\n\n", b"aba"])
            want = data.split(sep)
            if want and want[-1] == b"":
                want.pop()
            assert [bytes(p) for p in ef._split(io.BytesIO(data), sep)] == want, (data, sep, read_bytes)


def test_jsonl_skips_blank_lines_and_reads_other_fields(tmp_path):
    src, out = tmp_path / "docs.jsonl", tmp_path / "ids.bin"
    src.write_text('{"body": "a"}\n\n   \n{"body": "b", "text": 5}\n', encoding="utf-8")
    summary = encode_file(native("gpt2"), src, out, field="body")
    assert summary.documents == 2 and load_encoded(out)[0].tolist() == [64, 65]


def test_stream_input_and_progress(tmp_path):
    tok, out = native("gpt2"), tmp_path / "ids.bin"
    data = "".join(f"line {i}\n" for i in range(2000)).encode()
    calls = []
    summary = encode_file(tok, io.BytesIO(data), out, chunk_bytes=1000, progress=lambda *a: calls.append(a))
    assert summary.documents == 2000 and summary.bytes == len(data)
    assert len(calls) > 10 and all(total is None for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls) and calls[-1][0] == len(data)
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    calls.clear()
    encode_file(tok, src, out, chunk_bytes=1000, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, len(data)) and calls[-1] == (len(data), len(data))


def test_special_policy(tmp_path):
    tok = native("cl100k_base")
    src, out = tmp_path / "in.txt", tmp_path / "ids.bin"
    src.write_text("fine\nhi<|endoftext|>\n", encoding="utf-8")
    encode_file(tok, src, out)  # plain text by default
    assert load_encoded(out)[0].tolist() == tok.encode_ordinary("fine") + tok.encode_ordinary("hi<|endoftext|>")
    encode_file(tok, src, out, allowed_special="all")
    assert load_encoded(out)[0].tolist()[-2:] == [6151, 100257]
    with pytest.raises(DisallowedSpecialError, match=r"^document 2: .*<\|endoftext\|>"):
        encode_file(tok, src, tmp_path / "other.bin", disallowed_special="all")
    assert not (tmp_path / "other.bin").exists()


# -- errors leave nothing behind ---------------------------------------------------------------

def leftovers(directory) -> list:
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name)


@pytest.mark.parametrize(
    "content, field, error, message",
    [
        (b'{"text": "a"}\n{"text": "b"\n', "text", WordsplitError, "docs:502: not a JSON line"),
        (b'{"text": "a"}\n["b"]\n', "text", WordsplitError, "docs:502: expected a JSON object with the field 'text'"),
        (b'{"text": "a"}\n{"text": 3}\n', "text", EncodeInputError, "docs:502: the field 'text' is int"),
        (b"ok\nbad \xff here\n", None, WordsplitError, "docs: byte 2507 is not valid UTF-8"),
    ],
)
def test_bad_input_keeps_the_old_output(tmp_path, content, field, error, message):
    src, out = tmp_path / "docs", tmp_path / "ids.bin"
    # Enough good documents first that some batches are written before the bad line.
    src.write_bytes(b'{"text": "fine"}\n' * 500 + content if field else b"fine\n" * 500 + content)
    out.write_bytes(b"old")
    with pytest.raises(error, match=re.escape(message.replace("docs", str(src), 1))):
        encode_file(native("gpt2"), src, out, field=field, chunk_bytes=100)
    assert out.read_bytes() == b"old" and not os.path.exists(index_path(out)) and leftovers(tmp_path) == []


def test_argument_errors(tmp_path):
    tok = native("gpt2")
    src = tmp_path / "in.txt"
    src.write_text("x\n", encoding="utf-8")
    with pytest.raises(WordsplitError, match=r"name it \*\.bin .* or \*\.npy"):
        encode_file(tok, src, tmp_path / "ids.txt")
    with pytest.raises(WordsplitError, match="must not be empty"):
        encode_file(tok, src, tmp_path / "ids.bin", separator="")
    with pytest.raises(WordsplitError, match="is also the output file"):
        encode_file(tok, src, src, fmt="bin")

    class NoEos:
        eos_token_id = None
        vocab = tok.vocab
        n_vocab = tok.n_vocab

    with pytest.raises(UnknownTokenError, match="no end-of-sequence token"):
        encode_file(NoEos(), src, tmp_path / "ids.bin", eos=True)
    assert leftovers(tmp_path) == [] and not (tmp_path / "ids.bin").exists()


# -- the command -----------------------------------------------------------------------------

@pytest.fixture
def run(cli):
    """``wordsplit ARGV`` (the shared ``cli`` fixture): returns (status, stdout, stderr)."""
    return cli


def test_command_jsonl_by_suffix_with_json_summary(run, tmp_path):
    src, out = tmp_path / "docs.jsonl", tmp_path / "train.bin"
    write_jsonl(src, DOCS)
    code, stdout, err = run("encode-file", src, "--out", out, "--vocab", "gpt2", "--eos", "--json")
    summary = json.loads(stdout)
    assert (code, err) == (0, "")
    assert summary["documents"] == len(DOCS) and summary["dtype"] == "uint16" and summary["eos_token_id"] == 50256
    assert summary["index_path"] == str(tmp_path / "train.idx.bin") and summary["mb_per_s"] > 0
    ids, index = load_encoded(out)
    assert ids.tolist()[index[2]:index[3]] == native("gpt2").encode_ordinary(DOCS[2]) + [50256]


def test_command_reads_stdin_and_prints_a_summary_line(run, tmp_path):
    out = tmp_path / "train.npy"
    code, stdout, err = run("encode-file", "-", "--out", out, "--doc-separator", r"\n\n", stdin=b"a b\n\nc\n")
    assert (code, err) == (0, "")
    assert stdout.startswith(f"wrote {out}: 2 documents, 4 tokens (uint32), 7 bytes in ")
    assert np.load(index_path(out)).tolist() == [0, 2, 4]
    assert run("encode-file", "-", "--out", out, "--quiet", stdin=b"x")[:2] == (0, "")
    code, stdout, _ = run("encode-file", "-", "--out", out, "--whole-file", stdin=b"x")
    assert code == 0 and stdout.startswith(f"wrote {out}: 1 document, 1 token (uint32), 1 byte in ")


def test_command_whole_file(run, tmp_path):
    src, out = tmp_path / "book.txt", tmp_path / "book.bin"
    src.write_text("one\ntwo\n", encoding="utf-8")
    assert run("encode-file", src, "--out", out, "--whole-file", "--quiet")[0] == 0
    assert load_encoded(out)[1].tolist() == [0, len(native("qwen3").encode("one\ntwo\n"))]


def test_help_has_an_example(run, capsys):
    with pytest.raises(SystemExit) as exit_:
        run("encode-file", "--help")
    assert exit_.value.code == 0 and "examples:\n  wordsplit encode-file " in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["encode-file", "/no/such/file.txt", "--out", "{tmp}/x.bin"], "/no/such/file.txt: No such file"),
        (["encode-file", "{tmp}/in.txt", "--out", "{tmp}/x.csv"], "name it *.bin"),
        (["encode-file", "{tmp}/in.txt", "--out", "{tmp}/no/dir/x.bin"], "No such file or directory"),
        (["encode-file", "{tmp}/in.txt", "--out", "{tmp}/x.bin", "--special", "raise"], "--special allow"),
        (["encode-file", "{tmp}/in.txt", "--out", "{tmp}/x.bin", "--field", "t", "--whole-file"], "are for plain text"),
        (["encode-file", "{tmp}/in.txt", "--out", "{tmp}/x.bin", "--field", "t"], "in.txt:1: not a JSON line"),
        (["encode-file", "{tmp}/in.txt", "--out", "{tmp}/x.bin", "--vocab", "cl100k"], "Did you mean 'cl100k_base'"),
    ],
)
def test_user_errors_are_one_line(run, tmp_path, argv, message):
    (tmp_path / "in.txt").write_text("hi <|im_end|>\n", encoding="utf-8")
    code, out, err = run(*[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and out == ""
    assert err.startswith("wordsplit: error: ") and message in err and err.count("\n") == 1
    assert leftovers(tmp_path) == [] and not (tmp_path / "x.bin").exists()


@pytest.mark.parametrize("argv", [["--chunk-size", "lots"], ["--threads", "0"], ["--doc-separator", "\\x"]])
def test_bad_option_values(run, tmp_path, capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        run("encode-file", "in.txt", "--out", tmp_path / "x.bin", *argv)
    assert exit_.value.code == 2 and "error: argument" in capsys.readouterr().err


# -- bounded memory and Ctrl-C, in a real process ----------------------------------------------

# Runs the command line and reports the process's peak resident memory on stderr.
CHILD = """
import resource, sys
from wordsplit import cli
code = cli.main(sys.argv[1:])
print("peak-kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""
BIG_BYTES = 24_000_000
CHUNK = "1MB"


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    """A small and a big JSONL file of the same documents (the big one 24x the chunk size)."""
    base = tmp_path_factory.mktemp("encode-file")
    text = gzip.decompress((DATA / "corpus" / "prose.txt.gz").read_bytes()).decode()
    text += gzip.decompress((DATA / "corpus" / "multilingual.txt.gz").read_bytes()).decode()
    lines = text.split("\n")
    block = "".join(json.dumps({"text": "\n".join(lines[i:i + 40])}) + "\n" for i in range(0, len(lines), 40))
    block = block.encode()
    small, big = base / "small.jsonl", base / "big.jsonl"
    small.write_bytes(block * (1_500_000 // len(block) + 1))
    big.write_bytes(block * (BIG_BYTES // len(block) + 1))
    return small, big


def run_child(*argv, **kwargs):
    return subprocess.run([sys.executable, "-c", CHILD, "encode-file", *map(str, argv)],
                          capture_output=True, text=True, **kwargs)


def peak_kb(stderr: str) -> int:
    return int(stderr.rsplit("peak-kb", 1)[1])


def test_memory_does_not_grow_with_the_input(corpus_files, tmp_path):
    small, big = corpus_files
    peaks = {}
    for src in (small, big):
        done = run_child(src, "--out", tmp_path / f"{src.stem}.bin", "--vocab", "gpt2", "--chunk-size", CHUNK,
                         "--quiet")
        assert done.returncode == 0, done.stderr
        peaks[src.stem] = peak_kb(done.stderr)
    # Reading the whole big file alone would add 24 MB (its text and ids more); streaming in
    # chunks of 1 MB keeps the peak within a few chunks of the small file's.
    assert big.stat().st_size > 10 * small.stat().st_size
    assert peaks["big"] - peaks["small"] < 8_000, peaks
    ids, index = np.fromfile(tmp_path / "big.bin", dtype="<u2"), np.fromfile(tmp_path / "big.idx.bin", dtype="<u8")
    assert index[-1] == len(ids) and len(index) - 1 == big.read_bytes().count(b"\n")


def test_ctrl_c_leaves_no_partial_output(corpus_files, tmp_path):
    _, big = corpus_files
    out = tmp_path / "train.bin"
    out.write_bytes(b"previous run")
    (tmp_path / "train.idx.bin").write_bytes(b"previous index")
    child = subprocess.Popen([sys.executable, "-c", CHILD, "encode-file", str(big), "--out", str(out),
                              "--vocab", "gpt2", "--chunk-size", "256KB"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             # Python turns SIGINT into KeyboardInterrupt only if it starts with the
                             # default disposition (a background job of a non-interactive shell
                             # starts with SIGINT ignored)
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 20
    # Interrupt once the temporary output holds some ids: mid-file, not during start-up.
    while not any(p.name.startswith("train.bin.tmp-") and p.stat().st_size > 0 for p in tmp_path.iterdir()):
        assert child.poll() is None, "encode-file finished before it could be interrupted"
        assert time.monotonic() < deadline, "no temporary output appeared"
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=30)
    assert child.returncode == 130, stderr
    assert stdout == "" and "wordsplit: interrupted" in stderr and "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.bin", "train.idx.bin"]
    assert out.read_bytes() == b"previous run" and (tmp_path / "train.idx.bin").read_bytes() == b"previous index"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_leave_no_partial_output(corpus_files, tmp_path, sig):
    """kill (SIGTERM) and a closed terminal (SIGHUP) clean up as Ctrl-C does: no OUT.tmp-PID,
    no OUT.idx.tmp-PID, the old output untouched, status 128 + the signal's number."""
    _, big = corpus_files
    out = tmp_path / "train.bin"
    out.write_bytes(b"previous run")
    (tmp_path / "train.idx.bin").write_bytes(b"previous index")
    child = subprocess.Popen([sys.executable, "-m", "wordsplit", "encode-file", str(big), "--out", str(out),
                              "--vocab", "gpt2", "--chunk-size", "256KB"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             # the default disposition, whatever this run inherited (under nohup,
                             # SIGHUP is ignored, and wordsplit leaves an ignored signal ignored)
                             preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    deadline = time.monotonic() + 20
    while not any(p.name.startswith("train.bin.tmp-") and p.stat().st_size > 0 for p in tmp_path.iterdir()):
        assert child.poll() is None, "encode-file finished before it could be signalled"
        assert time.monotonic() < deadline, "no temporary output appeared"
        time.sleep(0.01)
    child.send_signal(sig)
    stdout, stderr = child.communicate(timeout=30)
    assert child.returncode == 128 + sig, stderr
    assert stdout == "" and stderr == f"wordsplit: terminated by {sig.name}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.bin", "train.idx.bin"]
    assert out.read_bytes() == b"previous run" and (tmp_path / "train.idx.bin").read_bytes() == b"previous index"


@pytest.mark.parametrize("name, out, what", [("c.idx.npy", "c.npy", "index"), ("c.npy", "c.npy", "output"),
                                             ("link.npy", "c.npy", "index")])
def test_an_input_that_is_an_output_is_refused(run, tmp_path, name, out, what):
    """`encode-file c.idx.npy --out c.npy` would overwrite its own input with the index."""
    (tmp_path / "c.idx.npy").write_text("hello\n", encoding="utf-8")
    if name == "link.npy":
        (tmp_path / "link.npy").symlink_to("c.idx.npy")  # the same file by another path
    elif name == "c.npy":
        (tmp_path / "c.npy").write_text("hello\n", encoding="utf-8")
    code, stdout, err = run("encode-file", tmp_path / name, "--out", tmp_path / out)
    assert code == 2 and stdout == ""
    assert f"is also the {what} file" in err and err.count("\n") == 1
    assert (tmp_path / "c.idx.npy").read_text(encoding="utf-8") == "hello\n" and leftovers(tmp_path) == []


def test_a_failed_publish_keeps_the_old_pair_and_names_the_target(tmp_path, monkeypatch):
    """When renaming OUT into place fails, the old index is untouched too (OUT is renamed
    first), and the error names OUT, not its temporary file."""
    src, out = tmp_path / "in.txt", tmp_path / "ids.bin"
    src.write_text("hello\nworld\n", encoding="utf-8")
    out.write_bytes(b"old ids")
    (tmp_path / "ids.idx.bin").write_bytes(b"old index")
    real_replace = os.replace

    def replace(source, target):
        if os.fspath(target) == str(out):
            raise PermissionError(13, "Permission denied", os.fspath(source), None, os.fspath(target))
        real_replace(source, target)

    monkeypatch.setattr(ef.os, "replace", replace)
    with pytest.raises(PermissionError) as info:
        encode_file(native("gpt2"), src, out)
    assert info.value.filename == str(out) and ".tmp-" not in str(info.value)
    assert out.read_bytes() == b"old ids" and (tmp_path / "ids.idx.bin").read_bytes() == b"old index"
    assert leftovers(tmp_path) == []


def test_a_full_disk_names_the_output_not_the_input(tmp_path):
    """A write that fails (here a file size limit, as a full disk would) is reported against
    OUT, and nothing is left behind."""
    import resource

    src, out = tmp_path / "in.txt", tmp_path / "ids.bin"
    src.write_text(("hello world " * 30 + "\n") * 5_000, encoding="utf-8")  # ids fill up before the index

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # then write() fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (64_000, 64_000))

    done = subprocess.run([sys.executable, "-m", "wordsplit", "encode-file", str(src), "--out", str(out),
                           "--vocab", "gpt2", "--chunk-size", "16KB"],
                          capture_output=True, text=True, preexec_fn=limit_file_size, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"wordsplit: error: {out}: File too large\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_a_symlink_at_out_is_written_through(run, tmp_path):
    (tmp_path / "in.txt").write_text("hello world\n", encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    (data / "real.bin").write_bytes(b"old")
    link = tmp_path / "ids.bin"
    link.symlink_to(data / "real.bin")
    code, _, err = run("encode-file", tmp_path / "in.txt", "--out", link, "--vocab", "gpt2", "--quiet")
    assert (code, err) == (0, "")
    assert link.is_symlink() and os.readlink(link) == str(data / "real.bin")
    assert np.fromfile(data / "real.bin", dtype="<u2").tolist() == [31373, 995]
    assert load_encoded(link)[0].tolist() == [31373, 995]
    assert leftovers(tmp_path) == [] and leftovers(data) == []


@pytest.mark.parametrize("kind", ["fifo", "fifo-link", "device", "directory", "index-fifo"])
def test_an_out_that_is_not_a_regular_file_is_refused(run, tmp_path, kind):
    """A FIFO, a device or a directory at OUT (or at its index) is refused before anything is
    read: renaming a file onto it would replace it (or, for /dev/null as root, replace the device)."""
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    out = tmp_path / "ids.bin"
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "fifo-link":
        os.mkfifo(tmp_path / "pipe")
        out.symlink_to(tmp_path / "pipe")
    elif kind == "device":
        out.symlink_to("/dev/null")
    elif kind == "directory":
        out.mkdir()
    else:
        os.mkfifo(tmp_path / "ids.idx.bin")
    described = {"fifo": "a FIFO", "fifo-link": "a FIFO", "device": "a device", "directory": "a directory",
                 "index-fifo": "a FIFO"}[kind]
    code, stdout, err = run("encode-file", tmp_path / "in.txt", "--out", out)
    assert code == 2 and stdout == "" and f"is {described}; encode-file writes regular files only" in err
    assert leftovers(tmp_path) == []
    if kind == "fifo":
        assert stat_is_fifo(out)
    if kind == "device":
        assert os.path.realpath(out) == "/dev/null" and not os.path.isfile("/dev/null")


def stat_is_fifo(path) -> bool:
    import stat

    return stat.S_ISFIFO(os.stat(path).st_mode)


@pytest.mark.parametrize("cut", ["header", "data", "odd"])
def test_load_encoded_names_a_truncated_file(tmp_path, cut):
    from wordsplit.errors import EncodedFileError

    src, out = tmp_path / "in.txt", tmp_path / "ids.npy"
    src.write_text("hello world\nbye\n", encoding="utf-8")
    encode_file(native("qwen3"), src, out)
    data = out.read_bytes()
    out.write_bytes({"header": data[:40], "data": data[:-4], "odd": data[:-1]}[cut])
    with pytest.raises(EncodedFileError, match=re.escape(str(out)) + ".*truncated") as info:
        load_encoded(out)
    assert isinstance(info.value, ValueError)
