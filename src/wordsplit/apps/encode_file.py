"""Encode a large text or JSONL file to a flat file of token ids, with bounded memory.

:func:`encode_file` streams the input, cuts it into documents, encodes a chunk of documents
at a time with :meth:`Tokenizer.encode_batch_flat <wordsplit.tokenizer.Tokenizer.encode_batch_flat>`
(native threads, the GIL released) and appends the ids to the output as it goes, so memory
is bounded by the chunk size (and by the largest single document), never by the file.

What a document is (the rule is exact: the separator is never part of a document):

* **JSONL** (``field`` given): one JSON object per line, the document is its ``field``
  string. Blank lines are skipped; anything else that is not an object with a string
  ``field`` is an error naming the line.
* **plain text** (``field=None``): the text between occurrences of ``separator`` (default
  ``"\\n"``: one document per line, without its ``\\n``; a ``\\r`` before it stays in the
  document, pass ``separator="\\r\\n"`` for such files). A separator at the very end of the
  file does not start an empty last document; an empty line is an empty document, so
  document ``i`` is line ``i + 1``. ``separator=None`` makes the whole file one document
  (then memory grows with the file).

The output (format chosen by the suffix of ``out_path``):

* ``.bin``: the ids as raw little-endian unsigned integers, ``uint16`` when the vocabulary
  has at most 65,536 ids (GPT-2, p50k), else ``uint32`` (cl100k, o200k, Qwen3);
* ``.npy``: the same array with a NumPy format 1.0 header (written without NumPy);
* the index beside it, :func:`index_path` (``ids.bin`` → ``ids.idx.bin``, ``ids.npy`` →
  ``ids.idx.npy``), in the same format: ``uint64`` little-endian token offsets, one per
  document start plus the total, so document ``i`` is ``ids[idx[i]:idx[i + 1]]``. With
  ``eos=True`` every document is followed by the vocabulary's end-of-sequence id, counted
  in its span.

Special-token literals in the documents are plain text by default (as ``encode_ordinary``):
a training document that quotes ``<|endoftext|>`` must not end there. Pass ``allowed_special``
/ ``disallowed_special`` as for ``encode`` to change that. Qwen3's non-special added tokens
(``<think>``...) are matched, as always.

Both files are written to temporary names in the same directory and renamed into place at
the end (the index first, then the ids); an error or ``KeyboardInterrupt`` deletes them and
leaves any existing output untouched.

It does not: read compressed input, shuffle or deduplicate documents, or parse the command
line (see :mod:`wordsplit.cli.encode_file`).

>>> import os, tempfile
>>> from wordsplit import get_tokenizer
>>> tok = get_tokenizer("qwen3")
>>> with tempfile.TemporaryDirectory() as d:
...     src = os.path.join(d, "docs.jsonl")
...     with open(src, "w", encoding="utf-8") as f:
...         _ = f.write('{"text": "hello world"}\\n{"text": "hi"}\\n')
...     summary = encode_file(tok, src, os.path.join(d, "ids.npy"), field="text", eos=True)
...     ids, index = load_encoded(os.path.join(d, "ids.npy"))
>>> summary.documents, summary.tokens, summary.dtype
(2, 5, 'uint32')
>>> ids.tolist(), index.tolist()
([14990, 1879, 151645, 6023, 151645], [0, 3, 5])
"""

from __future__ import annotations

import ast
import json
import os
import stat
import struct
import sys
import time
from array import array
from dataclasses import asdict, dataclass
from typing import BinaryIO, Callable, Iterator, Optional, Union

from ..errors import DisallowedSpecialError, EncodeInputError, UnknownTokenError, WordsplitError
from ..specials import AllowedSpecial, DisallowedSpecial

__all__ = ["DEFAULT_CHUNK_BYTES", "EncodeFileSummary", "encode_file", "id_dtype", "index_path", "load_encoded"]

#: Input bytes encoded per batch: big enough to keep every core busy, small next to memory.
DEFAULT_CHUNK_BYTES = 4 << 20
FORMATS = ("bin", "npy")
# Reads are at most this big; a chunk is assembled from several reads.
READ_BYTES = 1 << 20
# The .npy header is written first with room for any length, then rewritten with the real
# one: 128 bytes keep the data 64-byte aligned, as NumPy writes it.
NPY_HEADER_BYTES = 128
NPY_MAGIC = b"\x93NUMPY\x01\x00"
# array typecodes and NumPy descriptors of the on-disk dtypes (always little-endian).
DTYPES = {"uint16": ("H", "<u2"), "uint32": ("I", "<u4"), "uint64": ("Q", "<u8")}

Source = Union[str, "os.PathLike[str]", BinaryIO]
Progress = Callable[[int, Optional[int]], None]


@dataclass(frozen=True)
class EncodeFileSummary:
    """What :func:`encode_file` wrote.

    Attributes:
        documents: documents encoded.
        tokens: ids written (eos ids included).
        bytes: input bytes read.
        seconds: wall time.
        dtype: ``"uint16"`` or ``"uint32"`` (little-endian on disk).
        format: ``"bin"`` or ``"npy"``.
        out_path, index_path: the files written.
        eos_token_id: the id appended after each document, or None.
    """

    documents: int
    tokens: int
    bytes: int
    seconds: float
    dtype: str
    format: str
    out_path: str
    index_path: str
    eos_token_id: Optional[int]

    @property
    def mb_per_s(self) -> float:
        """Input megabytes (10⁶ bytes) per second."""
        return self.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "mb_per_s": self.mb_per_s}

    def __str__(self) -> str:
        return (f"wrote {self.out_path}: {self.documents:,} documents, {self.tokens:,} tokens ({self.dtype}), "
                f"{self.bytes:,} bytes in {self.seconds:.2f} s ({self.mb_per_s:.1f} MB/s); index {self.index_path}")


def id_dtype(n_vocab: int) -> str:
    """The on-disk dtype of ids for a vocabulary of ``n_vocab`` ids: the smallest that holds them.

    >>> id_dtype(50257), id_dtype(151669)
    ('uint16', 'uint32')
    """
    return "uint16" if n_vocab <= 1 << 16 else "uint32"


def index_path(out_path: Union[str, "os.PathLike[str]"]) -> str:
    """The index file written beside ``out_path``: ``.idx`` before the suffix.

    >>> index_path("data/train.bin"), index_path("train.npy")
    ('data/train.idx.bin', 'train.idx.npy')
    """
    root, suffix = os.path.splitext(os.fspath(out_path))
    return f"{root}.idx{suffix}"


def _format_of(out_path: str, fmt: Optional[str]) -> str:
    if fmt is None:
        fmt = os.path.splitext(out_path)[1].lstrip(".").lower()
        if fmt not in FORMATS:
            raise WordsplitError(f"cannot tell the output format of {out_path!r}: name it *.bin (raw ids) or *.npy")
    elif fmt not in FORMATS:
        raise WordsplitError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}")
    return fmt


def _npy_header(descr: str, length: int) -> bytes:
    """A NumPy 1.0 header for a 1-D array of ``length`` items, exactly NPY_HEADER_BYTES long."""
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({length},), }}"
    text = text.ljust(NPY_HEADER_BYTES - len(NPY_MAGIC) - 2 - 1) + "\n"
    return NPY_MAGIC + struct.pack("<H", len(text)) + text.encode("latin-1")


class _ArrayWriter:
    """Appends little-endian integers of one dtype to a temporary file beside ``path``."""

    def __init__(self, path: str, dtype: str, fmt: str) -> None:
        self.path = path
        self.tmp_path = f"{path}.tmp-{os.getpid()}"
        self.descr = DTYPES[dtype][1]
        self.itemsize = int(self.descr[2:])
        self.fmt = fmt
        self.items = 0
        try:
            self.file = open(self.tmp_path, "wb")
        except OSError as exc:  # name the file the user asked for, not the temporary one
            raise type(exc)(exc.errno, exc.strerror, path) from None
        if fmt == "npy":
            self.file.write(_npy_header(self.descr, 0))

    def write(self, data: bytes) -> None:
        """Append items given as their little-endian bytes."""
        self.file.write(data)
        self.items += len(data) // self.itemsize

    def finish(self) -> None:
        """Write the final header, and flush the file to disk so the rename publishes it whole."""
        if self.fmt == "npy":
            self.file.seek(0)
            self.file.write(_npy_header(self.descr, self.items))
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()

    def discard(self) -> None:
        self.file.close()
        try:
            os.unlink(self.tmp_path)
        except FileNotFoundError:
            pass


def _le_bytes(values: memoryview, dtype: str) -> bytes:
    """uint32 values (native order) as little-endian ``dtype`` bytes, without a Python int each."""
    raw = values.tobytes()
    if sys.byteorder == "big":
        swapped = array("I", raw)
        swapped.byteswap()
        raw = swapped.tobytes()
    if dtype == "uint32":
        return raw
    # uint16: the two low bytes of each little-endian uint32 (every id is < 65,536 here).
    narrow = bytearray(len(raw) // 2)
    narrow[0::2] = raw[0::4]
    narrow[1::2] = raw[1::4]
    return bytes(narrow)


def _u64_le(values: list[int]) -> bytes:
    out = array("Q", values)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


class _CountingReader:
    """A binary stream that counts the bytes read from it (the progress bar's measure)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.count = 0

    def read(self, size: int) -> bytes:
        data = self.stream.read(size)
        self.count += len(data)
        return data


def _split(stream, sep: Optional[bytes]) -> Iterator[bytearray]:
    """The pieces of ``stream`` between occurrences of ``sep`` (left to right, as ``bytes.split``),
    without an empty piece after a final separator; ``sep=None``: the whole stream."""
    pending = bytearray()
    while True:
        block = stream.read(READ_BYTES)
        if not block:
            break
        # A separator may straddle two reads: look from len(sep) - 1 bytes before the new ones,
        # and split only when one is there, so a long document is not re-split on every read.
        start = max(0, len(pending) - len(sep) + 1) if sep else 0
        pending += block
        if sep is None or pending.find(sep, start) < 0:
            continue
        pieces = pending.split(sep)
        pending = pieces.pop()
        yield from pieces
    if pending:
        yield pending


def _documents(stream, name: str, field: Optional[str], separator: Optional[str]) -> Iterator[tuple[str, int]]:
    """``(document, its input bytes with the separator)`` for each document of ``stream``."""
    if field is not None:
        sep: Optional[bytes] = b"\n"
    elif separator is None:
        sep = None
    elif separator == "":
        raise WordsplitError("the document separator must not be empty (use separator=None for one document)")
    else:
        sep = separator.encode("utf-8")
    extra = len(sep) if sep else 0
    offset = 0
    for number, piece in enumerate(_split(stream, sep), 1):
        start, offset = offset, offset + len(piece) + extra
        if field is None:
            try:
                yield piece.decode("utf-8"), offset - start
            except UnicodeDecodeError as exc:
                raise WordsplitError(f"{name}: byte {start + exc.start} is not valid UTF-8 ({exc.reason}); "
                                     "convert the file first, e.g. with iconv") from None
            continue
        if not piece.strip():
            continue
        try:
            record = json.loads(piece)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise WordsplitError(f"{name}:{number}: not a JSON line ({exc})") from None
        if not isinstance(record, dict) or field not in record:
            raise WordsplitError(f"{name}:{number}: expected a JSON object with the field {field!r}")
        text = record[field]
        if not isinstance(text, str):
            raise EncodeInputError(f"{name}:{number}: the field {field!r} is {type(text).__name__}, not a string")
        yield text, offset - start


class _IdSink:
    """Encodes batches of documents and appends their ids and index entries to temporary files."""

    def __init__(self, tok, out_path: str, fmt: str, eos_id: Optional[int], num_threads: Optional[int],
                 policy: dict) -> None:
        self.tok = tok
        self.dtype = id_dtype(tok.n_vocab)
        self.eos_id = eos_id
        self.eos_bytes = b"" if eos_id is None else _le_bytes(memoryview(array("I", [eos_id])), self.dtype)
        self.num_threads = num_threads
        self.policy = policy
        self.documents = self.tokens = 0
        self.ids_out = _ArrayWriter(out_path, self.dtype, fmt)
        try:
            self.index_out = _ArrayWriter(index_path(out_path), "uint64", fmt)
        except BaseException:
            self.ids_out.discard()
            raise
        self.index_out.write(_u64_le([0]))

    def add(self, docs: list[str]) -> None:
        """Encode ``docs`` and append their ids (each followed by eos, if any) and end offsets."""
        try:
            ids, offsets = self.tok.encode_batch_flat(docs, num_threads=self.num_threads, **self.policy)
        except DisallowedSpecialError as exc:
            # Name the document: the first that fails on its own (searched only on this error path).
            for i, doc in enumerate(docs):
                try:
                    self.tok.count(doc, **self.policy)
                except DisallowedSpecialError:
                    raise DisallowedSpecialError(f"document {self.documents + i + 1}: {exc}") from None
            raise
        data = _le_bytes(ids, self.dtype)
        offsets = offsets.tolist()
        if self.eos_id is None:
            ends = [self.tokens + end for end in offsets[1:]]
        else:
            width = self.ids_out.itemsize
            joined = bytearray()
            for start, end in zip(offsets, offsets[1:]):
                joined += data[start * width:end * width]
                joined += self.eos_bytes
            data = bytes(joined)
            ends = [self.tokens + end + i for i, end in enumerate(offsets[1:], 1)]
        self.ids_out.write(data)
        self.index_out.write(_u64_le(ends))
        self.documents += len(docs)
        self.tokens = ends[-1]

    def publish(self) -> None:
        """Complete both files and rename them into place: the index first, so a complete
        output file always has its index."""
        for writer in (self.index_out, self.ids_out):
            writer.finish()
        for writer in (self.index_out, self.ids_out):
            os.replace(writer.tmp_path, writer.path)

    def discard(self) -> None:
        self.ids_out.discard()
        self.index_out.discard()


def encode_file(
    tok,
    in_path: Source,
    out_path: Union[str, "os.PathLike[str]"],
    *,
    fmt: Optional[str] = None,
    field: Optional[str] = None,
    separator: Optional[str] = "\n",
    eos: bool = False,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    num_threads: Optional[int] = None,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = (),
    progress: Optional[Progress] = None,
) -> EncodeFileSummary:
    """Encode the documents of a text or JSONL file into a flat id file and its index.

    Args:
        tok: the :class:`~wordsplit.tokenizer.Tokenizer`.
        in_path: the input file, or a binary stream (read to its end, e.g. ``sys.stdin.buffer``).
        out_path: the output, ``*.bin`` or ``*.npy``; the index goes to :func:`index_path`.
        fmt: ``"bin"`` or ``"npy"``; None: from the suffix of ``out_path``.
        field: JSONL: the string field holding each line's document; None: plain text.
        separator: plain text: the text between documents (default one per line); None: the
            whole file is one document.
        eos: append the vocabulary's end-of-sequence id after each document.
        chunk_bytes: input bytes of documents encoded per batch (a larger document is a batch
            of its own).
        num_threads: native threads per batch (None: the tokenizer's, else all cores).
        allowed_special, disallowed_special: the special-token policy, as for ``encode``
            (default: special literals are plain text).
        progress: called as ``progress(bytes_read, total_bytes)`` at the start and after each batch;
            ``total_bytes`` is None when the input's size is unknown (a pipe).

    Returns:
        An :class:`EncodeFileSummary`.

    Raises:
        WordsplitError: a bad output name, input that is not UTF-8, a malformed JSON line.
        EncodeInputError: a JSONL field that is not a string.
        UnknownTokenError: ``eos=True`` but the vocabulary has no end-of-sequence token.
        DisallowedSpecialError: a disallowed special token, with the document's number.
        OSError: the input cannot be read or the output written.
    """
    out_path = os.fspath(out_path)
    fmt = _format_of(out_path, fmt)
    if chunk_bytes < 1:
        raise WordsplitError(f"the chunk size must be a positive number of bytes, not {chunk_bytes}")
    eos_id = None
    if eos:
        eos_id = tok.eos_token_id
        if eos_id is None:
            raise UnknownTokenError(f"the vocabulary {tok.vocab.name!r} has no end-of-sequence token; drop eos")
    if isinstance(in_path, (str, os.PathLike)):
        name = os.fspath(in_path)
        if os.path.exists(out_path) and os.path.samefile(name, out_path):
            raise WordsplitError(f"the output {out_path!r} is the input; name another file")
        stream = open(name, "rb")
        info = os.fstat(stream.fileno())
        total = info.st_size if stat.S_ISREG(info.st_mode) else None  # a FIFO's size says nothing
    else:
        name, stream, total = getattr(in_path, "name", None), in_path, None
        name = name if isinstance(name, str) else "<stream>"
    policy = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}

    started = time.perf_counter()
    reader = _CountingReader(stream)
    sink = None
    try:
        sink = _IdSink(tok, out_path, fmt, eos_id, num_threads, policy)
        if progress is not None:
            progress(0, total)
        chunk: list[str] = []
        chunk_size = 0
        for doc, size in _documents(reader, name, field, separator):
            chunk.append(doc)
            chunk_size += size
            if chunk_size >= chunk_bytes:
                sink.add(chunk)
                chunk, chunk_size = [], 0
                if progress is not None:
                    progress(reader.count, total)
        if chunk:
            sink.add(chunk)
        if progress is not None:
            progress(reader.count, total)
        sink.publish()
    except BaseException:
        # KeyboardInterrupt included: never leave a half-written file behind.
        if sink is not None:
            sink.discard()
        raise
    finally:
        if stream is not in_path:
            stream.close()
    return EncodeFileSummary(
        documents=sink.documents, tokens=sink.tokens, bytes=reader.count, seconds=time.perf_counter() - started,
        dtype=sink.dtype, format=fmt, out_path=out_path, index_path=sink.index_out.path, eos_token_id=eos_id,
    )


def load_encoded(out_path: Union[str, "os.PathLike[str]"]) -> tuple[array, array]:
    """Read back what :func:`encode_file` wrote: ``(ids, index)`` as arrays, all in memory.

    A ``.bin`` file does not record its dtype: it is the one whose width makes the file hold
    exactly the index's total. For files larger than memory use NumPy instead:
    ``numpy.load(path, mmap_mode="r")`` or ``numpy.memmap(path, dtype="<u2")``.

    Raises:
        WordsplitError: the files are not a matching pair written by :func:`encode_file`.
    """
    out_path = os.fspath(out_path)
    fmt = _format_of(out_path, None)
    index = _load_array(index_path(out_path), fmt, "uint64")
    total = index[-1] if index else 0
    dtype = None
    if fmt == "bin":
        dtype = {2 * total: "uint16", 4 * total: "uint32"}.get(os.path.getsize(out_path))
        if dtype is None:
            raise WordsplitError(f"{out_path} holds neither {total} uint16 nor {total} uint32 ids, as its index says")
    ids = _load_array(out_path, fmt, dtype)
    if len(ids) != total:
        raise WordsplitError(f"{out_path} holds {len(ids)} ids but its index ends at {total}")
    return ids, index


def _load_array(path: str, fmt: str, dtype: Optional[str]) -> array:
    """The integers of a file written by _ArrayWriter (``dtype`` is read from a .npy header)."""
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "npy":
        if not data.startswith(NPY_MAGIC):
            raise WordsplitError(f"{path} is not a .npy file written by encode_file")
        (length,) = struct.unpack_from("<H", data, len(NPY_MAGIC))
        body = len(NPY_MAGIC) + 2 + length
        header = ast.literal_eval(data[len(NPY_MAGIC) + 2:body].decode("latin-1"))
        dtype = next((name for name, (_, descr) in DTYPES.items() if descr == header["descr"]), None)
        if dtype is None:
            raise WordsplitError(f"{path} holds {header['descr']}, not the little-endian unsigned ids "
                                 "encode_file writes")
        data = data[body:]
    values = array(DTYPES[dtype][0])
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values
