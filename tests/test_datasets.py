"""encode_dataset: every format read back by a reader written from its published layout (not the
writer), compared with ``encode`` per document; determinism, shards, resume, errors, Ctrl-C."""

from __future__ import annotations

import gzip
import json
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from wordsplit import get_tokenizer
from wordsplit.datasets import DatasetInputError, encode_dataset, read_batches
from wordsplit.datasets.inputs import expand_inputs
from wordsplit.errors import OptionValueError, UnknownTokenError, WordsplitError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

DOCS_A = ["hello world", "", "Ünïcödé ✓ 漢字 🙂", "quotes <|endoftext|> as text", "<think>x</think> and 12345",
          "  spaces\tand\ttabs  ", "a" * 3000, "line\rwith carriage return"]
DOCS_B = [f"document number {i}: {'lorem ipsum ' * (i % 7)}" for i in range(60)]
DOCS_C = ["plain text line one", "", "line three ends here"]
FORMATS = ["megatron", "nanogpt", "llmc", "datatrove", "npy"]


def make_inputs(root: Path) -> dict[str, list[str]]:
    """A Parquet file, a gzipped JSONL file and a text file; their documents by file name."""
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"text": DOCS_A, "id": list(range(len(DOCS_A)))}), root / "a.parquet", row_group_size=3)
    with gzip.open(root / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        for i, doc in enumerate(DOCS_B):
            f.write(json.dumps({"text": doc, "n": i}) + "\n")
            if i == 10:
                f.write("\n")  # a blank line is not a document
    (root / "c.txt").write_text("\n".join(DOCS_C) + "\n", encoding="utf-8")
    return {"a": DOCS_A, "b": DOCS_B, "c": DOCS_C}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    return root, make_inputs(root)


# Readers, written from each format's published layout -------------------------------------------

def read_megatron(prefix: Path) -> tuple[list[list[int]], str]:
    """megatron/core/datasets/indexed_dataset.py _IndexReader: the documents' token lists."""
    idx = prefix.with_suffix(".idx").read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code = struct.unpack_from("<QB", idx, 9)
    assert version == 1
    dtype = {8: np.uint16, 4: np.int32}[code]
    sequences, documents = struct.unpack_from("<QQ", idx, 18)
    offset = 34
    lengths = np.frombuffer(idx, np.int32, sequences, offset)
    pointers = np.frombuffer(idx, np.int64, sequences, offset + lengths.nbytes)
    doc_index = np.frombuffer(idx, np.int64, documents, offset + lengths.nbytes + pointers.nbytes)
    assert len(idx) == offset + lengths.nbytes + pointers.nbytes + doc_index.nbytes
    data = prefix.with_suffix(".bin").read_bytes()
    itemsize = np.dtype(dtype).itemsize
    starts = np.concatenate([[0], np.cumsum(lengths.astype(np.int64))[:-1] * itemsize])
    assert pointers.tolist() == starts.tolist()[:len(pointers)]
    assert len(data) == int(lengths.sum()) * itemsize
    docs = []
    for start, end in zip(doc_index[:-1], doc_index[1:]):
        tokens: list[int] = []
        for s in range(start, end):
            tokens += np.frombuffer(data, dtype, lengths[s], pointers[s]).tolist()
        docs.append(tokens)
    return docs, np.dtype(dtype).name


def read_nanogpt(path: Path, dtype) -> list[int]:
    return np.fromfile(path, dtype=dtype).tolist()


def read_llmc(path: Path) -> tuple[list[int], str]:
    """llm.c's dataloader: 256 int32 header (magic, version, ntok), then the tokens."""
    raw = path.read_bytes()
    header = np.frombuffer(raw, np.int32, 256)
    magic, version, ntok = header[:3].tolist()
    assert not header[3:].any()
    dtype = {(20240520, 1): np.uint16, (20240801, 7): np.uint32}[(magic, version)]
    tokens = np.frombuffer(raw, dtype, offset=1024)
    assert len(tokens) == ntok
    return tokens.tolist(), np.dtype(dtype).name


def read_datatrove(path: Path, token_size: int) -> tuple[list[list[int]], list[str]]:
    """datatrove's TokenizedFile: .ds ids, .ds.index uint64 document ends, .ds.metadata text."""
    dtype = {2: np.uint16, 4: np.uint32}[token_size]
    ids = np.fromfile(path, dtype)
    ends = np.fromfile(str(path) + ".index", np.uint64).tolist()
    meta = Path(str(path) + ".metadata").read_text().split("\n")
    docs = [ids[s:e].tolist() for s, e in zip([0] + ends[:-1], ends)]
    assert (ends[-1] if ends else 0) == len(ids)
    return docs, meta


def read_npy(path: Path) -> list[list[int]]:
    ids = np.load(path)
    index = np.load(str(path)[:-4] + ".idx.npy")
    assert index.dtype == np.uint64 and index[0] == 0 and index[-1] == len(ids)
    return [ids[s:e].tolist() for s, e in zip(index[:-1], index[1:])]


def shard_files(out: Path, fmt: str) -> list[Path]:
    """The data file of each shard, in manifest order."""
    manifest = json.loads((out / "manifest.json").read_text())
    return [out / s["files"][0]["name"] if fmt != "megatron" else out / s["name"] for s in manifest["shards"]]


def expected(tok, docs, *, bos=None, eos=None, fmt="npy") -> list[list[int]]:
    out = []
    for doc in docs:
        ids = tok.encode(doc, disallowed_special=())
        if fmt == "megatron" and not ids:
            out.append([])  # preprocess_data.py: no sequence, no eod for an empty document
            continue
        out.append(([bos] if bos is not None else []) + ids + ([eos] if eos is not None else []))
    return out


# Every format, read back ------------------------------------------------------------------------

@pytest.mark.parametrize("vocab", ["gpt2", "qwen3"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_format_reads_back_as_encode(fmt, vocab, inputs, tmp_path):
    root, docs = inputs
    tok = get_tokenizer(vocab)
    eos = fmt in ("megatron", "nanogpt", "datatrove")
    summary = encode_dataset([root], tmp_path / "out", vocab=vocab, format=fmt, eos=eos, threads=2)
    out = tmp_path / "out"
    by_input = [docs["a"], docs["b"], docs["c"]]
    eos_id = tok.eos_token_id if eos else None
    bos_id = tok.eos_token_id if fmt == "llmc" else None  # neither vocab has a bos: llm.c's delimiter is eos
    small = tok.n_vocab <= 65536
    assert summary.documents == sum(len(d) for d in by_input) and summary.shards == 3
    for path, want_docs in zip(shard_files(out, fmt), by_input):
        want = expected(tok, want_docs, bos=bos_id, eos=eos_id, fmt=fmt)
        if fmt == "megatron":
            got, dtype = read_megatron(path)
            assert dtype == ("uint16" if tok.n_vocab < 65500 else "int32")
            assert got == want
        elif fmt == "nanogpt":
            assert read_nanogpt(path, np.uint16 if small else np.uint32) == [t for d in want for t in d]
            assert path.stat().st_size == sum(map(len, want)) * (2 if small else 4)
        elif fmt == "llmc":
            got, dtype = read_llmc(path)
            assert dtype == ("uint16" if small else "uint32")
            assert got == [t for d in want for t in d]
        elif fmt == "datatrove":
            got, meta = read_datatrove(path, 2 if small else 4)
            assert got == want
            total = sum(map(len, want))
            assert meta[0] == f"{tok.vocab.name}|{2 if small else 4}" and meta[1] == str(total)
            assert meta[2].endswith("T") and len(meta) == 3
        else:
            assert read_npy(path) == want
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == fmt and manifest["vocab"]["content_hash"] == tok.vocab.content_hash
    assert [i["documents"] for i in manifest["inputs"]] == [len(d) for d in by_input]
    for shard in manifest["shards"]:
        for f in shard["files"]:
            data = (out / f["name"]).read_bytes()
            assert len(data) == f["bytes"]
            import hashlib
            assert hashlib.sha256(data).hexdigest() == f["sha256"]
    assert not [p for p in out.iterdir() if ".tmp-" in p.name]


def test_datatrove_metadata_counts_like_humanize(inputs, tmp_path):
    root, docs = inputs
    encode_dataset(root / "b.jsonl.gz", tmp_path, vocab="gpt2", format="datatrove")
    meta = (tmp_path / "00000-b.ds.metadata").read_text()
    tokens = sum(len(get_tokenizer("gpt2").encode(d)) for d in docs["b"])
    assert 1000 <= tokens < 10000  # "1.23 kT": three significant digits and the k prefix
    assert meta == f"r50k_base|2\n{tokens}\n{tokens / 1000:.2f} kT"


def test_megatron_bos_and_eos(inputs, tmp_path):
    root, docs = inputs
    tok = get_tokenizer("cl100k_base")
    encode_dataset(root / "c.txt", tmp_path, vocab="cl100k_base", format="megatron", bos=True, eos=True)
    got, dtype = read_megatron(tmp_path / "00000-c")
    assert dtype == "int32"
    assert got == expected(tok, docs["c"], bos=100257, eos=100257, fmt="megatron")
    assert got[1] == []  # the empty line: a document without a sequence


def test_llmc_rejects_eos_and_missing_tokens(inputs, tmp_path):
    root, _ = inputs
    with pytest.raises(WordsplitError, match="delimiter token before each document"):
        encode_dataset(root / "c.txt", tmp_path, vocab="gpt2", format="llmc", eos=True)
    with pytest.raises(WordsplitError, match="unknown output format 'megatronn'.*Did you mean 'megatron'"):
        encode_dataset(root / "c.txt", tmp_path, vocab="gpt2", format="megatronn")


# Determinism, shards, resume ----------------------------------------------------------------------

def snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("fmt", ["megatron", "datatrove"])
def test_same_bytes_whatever_threads_and_batches(fmt, inputs, tmp_path):
    root, _ = inputs
    runs = [dict(threads=1), dict(threads=2), dict(threads=2, batch_bytes=100)]
    outs = []
    for i, options in enumerate(runs):
        encode_dataset([root / "c.txt", str(root / "*.parquet"), root], tmp_path / str(i), vocab="qwen3", format=fmt,
                       eos=True, shard_tokens=300, **options)
        outs.append(snapshot(tmp_path / str(i)))
    assert outs[0] == outs[1] == outs[2]
    assert "manifest.json" in outs[0]


def test_shard_tokens_cuts_between_documents(inputs, tmp_path):
    root, docs = inputs
    tok = get_tokenizer("gpt2")
    encode_dataset(root / "b.jsonl.gz", tmp_path, vocab="gpt2", format="npy", eos=True, shard_tokens=100,
                   batch_bytes=200)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    shards = manifest["shards"]
    assert len(shards) > 3 and [s["name"] for s in shards][:2] == ["00000-b-00000", "00000-b-00001"]
    got = []
    for s in shards:
        part = read_npy(tmp_path / f"{s['name']}.npy")
        assert s["tokens"] == sum(map(len, part)) and s["documents"] == len(part)
        assert s["tokens"] <= 100 or len(part) == 1
        assert s["first_document"] == len(got)
        got += part
    assert got == expected(tok, docs["b"], eos=50256)
    assert manifest["inputs"][0]["shards"] == [s["name"] for s in shards]
    assert manifest["totals"]["tokens"] == sum(map(len, got))


def test_resume_skips_complete_inputs_and_redoes_broken_ones(inputs, tmp_path):
    root, _ = inputs
    args = dict(vocab="gpt2", format="megatron", eos=True)
    first = encode_dataset(root, tmp_path, **args)
    before = snapshot(tmp_path)
    again = encode_dataset(root, tmp_path, **args)
    assert (first.resumed, again.resumed) == (0, 3)
    assert snapshot(tmp_path) == before and again.tokens == first.tokens
    (tmp_path / "00001-b.bin").write_bytes(b"corrupt")  # a shard that no longer matches its hash
    third = encode_dataset(root, tmp_path, **args)
    assert third.resumed == 2 and snapshot(tmp_path) == before
    with pytest.raises(WordsplitError, match="a different options"):
        encode_dataset(root, tmp_path, **{**args, "eos": False})
    with pytest.raises(WordsplitError, match="other inputs"):
        encode_dataset(root / "c.txt", tmp_path, **args)


def test_interrupt_leaves_no_partial_shard(inputs, tmp_path):
    root, _ = inputs
    def interrupt(state):
        if state.documents > len(DOCS_A) + 5:  # a few batches into the second input
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        encode_dataset(root, tmp_path, vocab="gpt2", format="npy", batch_bytes=50, progress=interrupt)
    left = {p.name for p in tmp_path.iterdir()}
    assert not [n for n in left if ".tmp-" in n]
    # The first input was complete (and recorded) before the interrupt; nothing of the second is left.
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [i.get("complete", False) for i in manifest["inputs"]] == [True, False, False]
    assert left == {"manifest.json", "00000-a.npy", "00000-a.idx.npy"}
    assert encode_dataset(root, tmp_path, vocab="gpt2", format="npy").resumed == 1


def test_progress_is_monotonic_and_complete(inputs, tmp_path):
    root, docs = inputs
    seen = []
    summary = encode_dataset(root, tmp_path, vocab="gpt2", format="nanogpt", batch_bytes=100,
                             progress=lambda s: seen.append((s.documents, s.tokens, s.done_bytes, s.total_bytes)))
    assert len(seen) > 5
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    assert seen[-1][0] == summary.documents and seen[-1][1] == summary.tokens
    assert seen[-1][2] == pytest.approx(seen[-1][3])


# Inputs and bad documents ------------------------------------------------------------------------

def test_expand_inputs_sorts_and_dedupes(inputs):
    root, _ = inputs
    got = expand_inputs([str(root / "*.txt"), root, root / "a.parquet"])
    assert [(Path(i.path).name, i.kind) for i in got] == [("a.parquet", "parquet"), ("b.jsonl.gz", "jsonl"),
                                                          ("c.txt", "text")]
    with pytest.raises(DatasetInputError, match="no such file"):
        expand_inputs([root / "missing*.parquet"])


def bad_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": 5}\n{"other": "x"}\nnot json\n'
                     b'{"text": "b\xff"}\n[1]\n{"text": "end"}\n')
    return path


def test_bad_documents_raise_naming_file_and_row(tmp_path):
    path = bad_jsonl(tmp_path)
    with pytest.raises(DatasetInputError, match=r"bad\.jsonl:2: the field 'text' is int, not a string"):
        encode_dataset(path, tmp_path / "out", vocab="gpt2", format="npy")
    assert not [p for p in (tmp_path / "out").iterdir() if p.name != "manifest.json" and "manifest" not in p.name]


def test_errors_give_the_fix_in_the_words_of_where_they_were_raised(tmp_path, capsys):
    """Python callers read keyword arguments, the command line's users read options; never both."""
    from wordsplit.cli import main

    path = bad_jsonl(tmp_path)
    with pytest.raises(DatasetInputError) as info:
        encode_dataset(path, tmp_path / "out", vocab="gpt2", format="npy")
    assert "pass on_error='skip'" in str(info.value) and "--on-error" not in str(info.value)
    argv = ["encode-dataset", str(path), "--out", str(tmp_path / "cli"), "--vocab", "gpt2", "--format", "npy"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--on-error skip leaves such documents out" in err and "on_error=" not in err
    with pytest.raises(OptionValueError, match="drop eos=True$"):
        encode_dataset(path, tmp_path / "out2", vocab="gpt2", format="llmc", eos=True)


def test_bad_documents_skipped_and_counted(tmp_path):
    path = bad_jsonl(tmp_path)
    summary = encode_dataset(path, tmp_path / "out", vocab="gpt2", format="npy", on_error="skip")
    assert (summary.documents, summary.skipped) == (2, 5)
    record = json.loads((tmp_path / "out" / "manifest.json").read_text())["inputs"][0]
    assert record["skipped"] == 5
    assert record["first_skipped"].endswith("bad.jsonl:2: the field 'text' is int, not a string")
    tok = get_tokenizer("gpt2")
    assert read_npy(tmp_path / "out" / "00000-bad.npy") == [tok.encode("ok"), tok.encode("end")]


def test_bad_text_and_parquet_documents(tmp_path):
    text = tmp_path / "t.txt"
    text.write_bytes(b"fine\nbad \xc3\x28 here\n")
    with pytest.raises(DatasetInputError, match=r"t\.txt:2: byte 4 of the line is not valid UTF-8"):
        list(read_batches(expand_inputs([text])[0]))
    table = pa.table({"body": ["x", None, "z"], "n": [1, 2, 3]})
    pq.write_table(table, tmp_path / "p.parquet")
    item = expand_inputs([tmp_path / "p.parquet"])[0]
    with pytest.raises(DatasetInputError, match=r"p\.parquet row 1: the column 'body' is null"):
        list(read_batches(item, column="body"))
    with pytest.raises(DatasetInputError, match=r"no column 'text'; it has body, n \(choose one with --column\)"):
        list(read_batches(item))
    with pytest.raises(DatasetInputError, match=r"the column 'n' is int64, not text"):
        list(read_batches(item, column="n"))
    assert [b.texts for b in read_batches(item, column="body", on_error="skip")] == [["x", "z"]]
    pq.write_table(pa.table({"text": pa.array([b"ok", b"\xff"], pa.binary())}), tmp_path / "b.parquet")
    got = list(read_batches(expand_inputs([tmp_path / "b.parquet"])[0], on_error="skip"))
    assert [b.texts for b in got] == [["ok"]] and got[0].skipped == 1
    with pytest.raises(DatasetInputError, match=r"b\.parquet row 1: byte 0 of the column 'text' is not valid UTF-8"):
        list(read_batches(expand_inputs([tmp_path / "b.parquet"])[0]))


def test_bos_needs_a_token(inputs, tmp_path):
    from wordsplit import Vocab

    root, _ = inputs
    tiny = Vocab(name="tiny", ranks={bytes([b]): b for b in range(256)}, pattern=".")
    with pytest.raises(UnknownTokenError, match="no bos token"):
        encode_dataset(root / "c.txt", tmp_path, vocab=tiny, format="npy", bos=True)


@pytest.mark.parametrize("backend", ["python", "native"])
def test_both_backends_write_the_same_bytes(backend, inputs, tmp_path, monkeypatch):
    root, _ = inputs
    monkeypatch.setenv("WORDSPLIT_BACKEND", backend)
    encode_dataset(root / "c.txt", tmp_path / backend, vocab="qwen3", format="datatrove", eos=True)
    monkeypatch.delenv("WORDSPLIT_BACKEND")
    encode_dataset(root / "c.txt", tmp_path / "ref", vocab="qwen3", format="datatrove", eos=True)
    assert snapshot(tmp_path / backend) == snapshot(tmp_path / "ref")


def test_memory_is_bounded_by_the_batch_not_the_file(tmp_path):
    """Python-level allocations while encoding a JSONL file do not grow with the file."""
    path = tmp_path / "big.jsonl"
    line = json.dumps({"text": "some words of a document, " * 40}) + "\n"
    peaks = []
    get_tokenizer("gpt2")  # the vocabulary loaded before measuring
    for copies in (1, 4):
        with open(path, "w") as f:
            for _ in range(copies * 3_000_000 // len(line)):
                f.write(line)
        tracemalloc.start()
        try:
            summary = encode_dataset(path, tmp_path / str(copies), vocab="gpt2", format="megatron",
                                     batch_bytes=64 << 10)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert summary.documents == copies * 3_000_000 // len(line)
    # 12 MB of input, 4x more than the first run: the peak barely moves (Megatron's index keeps
    # 4 bytes per document; everything else is per batch and per 1 MiB read).
    assert peaks[1] < peaks[0] * 1.3 and peaks[1] < 6_000_000, peaks


def test_output_inside_an_input_directory_is_not_an_input(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    first = encode_dataset(tmp_path, tmp_path / "tokens", vocab="gpt2", format="megatron")
    again = encode_dataset(tmp_path, tmp_path / "tokens", vocab="gpt2", format="megatron")
    assert (first.inputs, again.resumed) == (1, 1)
    with pytest.raises(DatasetInputError, match="no inputs outside the output directory"):
        encode_dataset(tmp_path / "tokens", tmp_path / "tokens", vocab="gpt2", format="megatron")


def test_directories_skip_hidden_and_underscore_names(tmp_path):
    for name in ("a.txt", ".hidden.txt", "_SUCCESS", "_metadata", ".git/x.txt", "_tmp/y.txt", "sub/b.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    found = [Path(i.path).relative_to(tmp_path).as_posix() for i in expand_inputs([tmp_path])]
    assert found == ["a.txt", "sub/b.jsonl"]


def test_missing_optional_dependencies_say_what_to_install(inputs, tmp_path, monkeypatch):
    import sys

    root, _ = inputs
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(WordsplitError, match=r"pip install 'wordsplit\[ray\]'"):
        encode_dataset(root / "c.txt", tmp_path / "r", vocab="gpt2", format="npy", engine="ray")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    needs = r"a\.parquet: reading Parquet needs pyarrow: pip install 'wordsplit\[parquet\]'"
    with pytest.raises(DatasetInputError, match=needs):
        encode_dataset(root / "a.parquet", tmp_path / "p", vocab="gpt2", format="npy")


def test_text_lines_as_encode_file_reads_them(tmp_path):
    """A line is a document without its \\n (a \\r stays); a long line spans many reads; no empty
    document after a final \\n, but an empty line is one."""
    long_line = "word " * 300_000  # 1.5 MB: several reads
    (tmp_path / "t.txt").write_bytes(f"a\r\n\n{long_line}\nlast".encode())
    texts = [t for b in read_batches(expand_inputs([tmp_path / "t.txt"])[0]) for t in b.texts]
    assert texts == ["a\r", "", long_line, "last"]
    with gzip.open(tmp_path / "t.txt.gz", "wb") as f:
        f.write(b"one\ntwo\n")
    assert [t for b in read_batches(expand_inputs([tmp_path / "t.txt.gz"])[0]) for t in b.texts] == ["one", "two"]
