"""Encoding Arrow string arrays from their buffers, and what ``threads`` means for encode-dataset.

The native entry (``NativeEngine.encode_arrow_flat``, over ``Pipeline.encode_arrow_flat``)
must give, for every row, what ``encode`` gives for that row's str, framed as
``frame_documents`` (the Python reference the Python backend writes with) frames it.
"""

from __future__ import annotations

import threading
from array import array
from itertools import accumulate

import pytest

from wordsplit import get_tokenizer
from wordsplit.datasets import encode_dataset
from wordsplit.datasets.formats import frame_documents, narrow_ids
from wordsplit.errors import EncodeInputError, OptionValueError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TEXTS = ["hello world", "", "naïve café ☕ 🦀", None, "a" * 300, "  spaces\n\nand\tlines  ", "日本語のテキスト",
         "ends with <|endoftext|> inside", "<think>added</think>", None, "x"]


def native_engine(vocab="qwen3"):
    tok = get_tokenizer(vocab)
    if not getattr(tok._engine, "native", False) or not hasattr(tok._engine, "encode_arrow_flat"):
        pytest.skip("the native extension is not built")
    return tok, tok._engine


def reference(tok, texts, *, width=4, bos=None, eos=None, empty_is_nothing=False, **policy):
    """What encode_arrow_flat must give: each row encoded alone, framed in Python; a null row
    has nothing."""
    data, lengths = b"", []
    for text in texts:
        if text is None:
            lengths.append(0)
            continue
        ids = tok.encode(text, **policy)
        raw = narrow_ids(memoryview(array("I", ids)), "uint16" if width == 2 else "uint32")
        framed, (n,) = frame_documents(raw, [len(ids)], width, bos, eos, empty_is_nothing)
        data += framed
        lengths.append(n)
    return data, lengths


def run(engine, arrays, allowed=frozenset(), disallowed=frozenset(), threads=None, **framing):
    data, lengths = engine.encode_arrow_flat(arrays, allowed, disallowed, threads, **framing)
    return bytes(data), lengths.tolist()


@pytest.mark.parametrize("kind", ["string", "large_string", "binary", "large_binary"])
@pytest.mark.parametrize("threads", [1, 2])
def test_rows_equal_encode_per_document(kind, threads):
    tok, engine = native_engine()
    texts = TEXTS * 400  # about 160 KB: runs of 64 KB, on threads
    values = [t if t is None or "binary" not in kind else t.encode() for t in texts]
    got = run(engine, [pa.array(values, getattr(pa, kind)())], threads=threads)
    assert got == reference(tok, texts, disallowed_special=())


@pytest.mark.parametrize("framing", [dict(eos=151643), dict(bos=151644, eos=151643, empty_is_nothing=True),
                                     dict(bos=151643), dict(width=4, empty_is_nothing=True)])
def test_framing_equals_frame_documents(framing):
    tok, engine = native_engine()
    got = run(engine, [pa.array(TEXTS)], **framing)
    assert got == reference(tok, TEXTS, disallowed_special=(), **framing)


def test_two_byte_ids_and_ids_that_do_not_fit():
    tok, engine = native_engine("gpt2")
    got = run(engine, [pa.array(TEXTS)], width=2, eos=50256)
    assert got == reference(tok, TEXTS, width=2, eos=50256, disallowed_special=())
    _, big = native_engine("qwen3")
    with pytest.raises(OptionValueError, match="does not fit in width=2"):
        run(big, [pa.array(["日本語のテキスト"])], width=2)
    with pytest.raises(OptionValueError, match="width must be 2 or 4"):
        run(big, [pa.array(["x"])], width=3)


def test_slices_and_chunks_read_from_their_offsets():
    tok, engine = native_engine()
    whole = pa.array(TEXTS, pa.large_string())
    sliced = whole.slice(2, 5)
    chunked = pa.chunked_array([pa.array(TEXTS[:4]), pa.array(TEXTS[4:]).slice(1)])
    empty = pa.array([], pa.string())
    got = run(engine, [sliced, empty, chunked, pa.array(["", ""])], eos=1)
    texts = TEXTS[2:7] + TEXTS[:4] + TEXTS[5:] + ["", ""]
    assert got == reference(tok, texts, eos=1, disallowed_special=())


def test_special_policy_is_the_encode_policy():
    tok, engine = native_engine("cl100k_base")
    text = "a <|endoftext|> b"
    specials = frozenset(tok.special_tokens)
    expected = bytes(array("I", tok.encode(text, allowed_special="all")))
    assert run(engine, [pa.array([text])], allowed=specials)[0] == expected
    from wordsplit.errors import DisallowedSpecialError

    with pytest.raises(DisallowedSpecialError):
        run(engine, [pa.array(["fine"] * 2000 + [text])], disallowed=specials, threads=2)


def test_bad_arrays_raise_typed_errors():
    _, engine = native_engine()
    with pytest.raises(EncodeInputError, match="array of strings, not int64"):
        run(engine, [pa.array([1, 2])])
    with pytest.raises(EncodeInputError, match="not UTF-8"):
        run(engine, [pa.array([b"ok", b"\xff"], pa.binary())])
    with pytest.raises(EncodeInputError, match="pyarrow Array"):
        run(engine, [["a list"]])


def test_rows_are_read_as_they_were_when_the_call_began():
    """A row's bytes may live in memory Python can write (here a bytearray under the array,
    written by a Python encoder while the rows are encoded): every row is encoded as it was
    when the call began, and nothing the call keeps (the thread's piece cache) holds ids of
    bytes that changed."""
    import struct

    from wordsplit import TokenizerOptions, load_vocab
    from wordsplit.encoders import ENCODERS

    text = b"hello world again and again and again"
    data = bytearray(text)
    offsets = struct.pack("<2i", 0, len(data))
    arrays = [pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])]
    plain = get_tokenizer("cl100k_base")

    class Writes:
        """cl100k_base's own ids, writing to the array's bytes when it sees "hello"."""

        def __init__(self, tables):
            pass

        def encode_piece(self, piece):
            if piece == b"hello":
                data[5:11] = b" wOrld"
            return plain.encode_ordinary(piece.decode())

    ENCODERS.add("writes", Writes)
    try:
        tok = TokenizerOptions(encoder="writes", backend="native").build(load_vocab("cl100k_base"))
        assert run(tok.native_engine(), arrays) == reference(plain, [text.decode()])
        assert bytes(data) == text.replace(b" world", b" wOrld")
        assert tok.encode(text.decode()) == plain.encode(text.decode())
    finally:
        ENCODERS.remove("writes")


def test_malformed_buffers_are_refused_not_read():
    """The buffers come from Python: offsets past the data, or too few, raise."""
    tok, engine = native_engine()
    policy = engine._policy(frozenset(), frozenset())
    offsets = memoryview(array("i", [0, 4, 99]).tobytes()).cast("B")
    data = memoryview(b"abcdefgh")
    with pytest.raises(EncodeInputError, match="spans bytes 4..99"):
        engine._pipeline.encode_arrow_flat([(None, offsets, data, False, 0, 2)], policy)
    with pytest.raises(EncodeInputError, match="offsets buffer"):
        engine._pipeline.encode_arrow_flat([(None, offsets, data, False, 1, 2)], policy)
    bad = memoryview(b"\xc3(")
    two = memoryview(array("i", [0, 0, 2]).tobytes()).cast("B")
    with pytest.raises(EncodeInputError, match="row 1 of the arrays is not valid UTF-8"):
        engine._pipeline.encode_arrow_flat([(None, two, bad, False, 0, 2)], policy)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_first_bad_row_is_reported_whichever_run_or_thread_meets_it(threads):
    """Rows are encoded in runs of about 64 KB on several threads: the error is still the one
    of the lowest bad row, as a loop over the rows would meet it, and a too-wide id is only
    reported when every row encoded."""
    _, engine = native_engine()
    policy = engine._policy(frozenset(), frozenset())
    rows = [b"x" * 1000] * 400  # 400 KB: several runs
    rows[350], rows[120] = b"\xc3(", b"ok \xff"
    offsets = memoryview(array("q", [0, *accumulate(map(len, rows))]).tobytes()).cast("B")
    chunk = (None, offsets, memoryview(b"".join(rows)), True, 0, len(rows))
    with pytest.raises(EncodeInputError, match="row 120 of the arrays is not valid UTF-8 .byte 3."):
        engine._pipeline.encode_arrow_flat([chunk], policy, threads)
    rows[120] = rows[350] = "日本語".encode()  # ids above 65535 in qwen3, and a bad row after them
    rows[399] = b"\xff"
    offsets = memoryview(array("q", [0, *accumulate(map(len, rows))]).tobytes()).cast("B")
    chunk = (None, offsets, memoryview(b"".join(rows)), True, 0, len(rows))
    with pytest.raises(EncodeInputError, match="row 399"):
        engine._pipeline.encode_arrow_flat([chunk], policy, threads, 2)


def write_parquet(path, texts, **kinds):
    pq.write_table(pa.table({"text": pa.array(texts, **kinds)}), path, row_group_size=7)


@pytest.mark.parametrize("fmt", ["megatron", "nanogpt", "llmc", "datatrove", "npy"])
def test_parquet_same_bytes_on_both_backends_and_any_threads(fmt, tmp_path, monkeypatch):
    texts = [t for t in TEXTS if t is not None] * 5
    write_parquet(tmp_path / "a.parquet", texts)
    write_parquet(tmp_path / "b.parquet", [t.encode() for t in texts[:20]], type=pa.large_binary())
    inputs = [str(tmp_path / "*.parquet")]
    options = dict(vocab="qwen3", format=fmt, shard_tokens=200, **({} if fmt == "llmc" else {"eos": True}))
    outs = []
    for threads in (1, 2, 3):
        encode_dataset(inputs, tmp_path / f"t{threads}", threads=threads, batch_bytes=300, **options)
        outs.append({p.name: p.read_bytes() for p in sorted((tmp_path / f"t{threads}").iterdir())})
    monkeypatch.setenv("WORDSPLIT_BACKEND", "python")
    encode_dataset(inputs, tmp_path / "py", **options)
    outs.append({p.name: p.read_bytes() for p in sorted((tmp_path / "py").iterdir())})
    assert outs[0] == outs[1] == outs[2] == outs[3]


def test_parquet_nulls_and_bad_utf8_are_skipped_by_row(tmp_path):
    write_parquet(tmp_path / "a.parquet", ["one", None, "two", "three", None])
    write_parquet(tmp_path / "b.parquet", [b"ok", b"\xff", b"fine"], type=pa.binary())
    summary = encode_dataset(tmp_path, tmp_path / "out", vocab="gpt2", format="npy", on_error="skip", threads=2)
    assert (summary.documents, summary.skipped) == (5, 3)
    import json

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    firsts = [i["first_skipped"] for i in manifest["inputs"]]
    assert "a.parquet row 1: the column 'text' is null" in firsts[0]
    assert "b.parquet row 1: byte 0 of the column 'text' is not valid UTF-8" in firsts[1]


def test_threads_1_runs_everything_on_the_calling_thread(tmp_path):
    """threads=1: no reader or writer thread, progress reported on this thread; threads=2: both."""
    write_parquet(tmp_path / "a.parquet", ["some text"] * 100)
    seen = []

    def progress(state):
        seen.append((threading.current_thread().name, sorted(t.name for t in threading.enumerate()
                                                             if t.name.startswith("wordsplit-"))))

    encode_dataset(tmp_path / "a.parquet", tmp_path / "one", vocab="gpt2", format="npy", threads=1,
                   batch_bytes=100, progress=progress)
    assert seen and all(s == (threading.main_thread().name, []) for s in seen)
    seen.clear()
    encode_dataset(tmp_path / "a.parquet", tmp_path / "two", vocab="gpt2", format="npy", threads=2,
                   batch_bytes=100, progress=progress)
    assert seen and all(s == ("wordsplit-write", ["wordsplit-read", "wordsplit-write"]) for s in seen[:-1])


def test_a_failing_writer_stops_the_run_and_leaves_no_partial_shard(tmp_path, monkeypatch):
    from wordsplit.datasets import formats

    write_parquet(tmp_path / "a.parquet", ["some text"] * 100)

    def broken(self, data, lengths):
        raise OSError("disk full")

    monkeypatch.setattr(formats.NpyWriter, "write_documents", broken)
    with pytest.raises(OSError, match="disk full"):
        encode_dataset(tmp_path / "a.parquet", tmp_path / "out", vocab="gpt2", format="npy", threads=2,
                       batch_bytes=100)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json"]
