"""Encode a large text or JSONL file to a flat file of token ids, with bounded memory.

:func:`encode_file` streams the input, cuts it into documents, encodes a chunk of documents
at a time on native threads (the GIL released) and appends the ids to the output as it goes,
so memory is bounded by the chunk size (and by the largest single document), never by the
file. On the native backend, plain-text documents never become Python objects: each chunk's
bytes go to the engine's ``encode_documents_flat``, which finds the documents, encodes them
and returns their ids and index entries in two flat buffers. JSONL documents (and every
document on the Python backend) are decoded in Python and go to
:meth:`Tokenizer.encode_batch_flat <wordsplit.tokenizer.Tokenizer.encode_batch_flat>`.

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
the end (the ids first, then the index, so a failure to write the ids changes nothing); an
error or ``KeyboardInterrupt`` deletes them and leaves any existing output untouched.
An output path that is a symbolic link is written through: the file it points to is
replaced. An output that exists and is not a regular file (a FIFO, a device such as
``/dev/null``, a directory) is refused before anything is read: the output is always a
complete regular file renamed into place, and a ``.npy`` header is rewritten at the end. An
input that is one of the output files (the same file, by any path) is refused too. Errors
writing an output name that output (never a temporary name, never the input).

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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import BinaryIO, Callable, Iterator, Optional, Union

from . import plural
from ..errors import DisallowedSpecialError, EncodedFileError, EncodeInputError, UnknownTokenError, WordsplitError
from ..specials import AllowedSpecial, DisallowedSpecial, resolve_special_policy
from ..tokenizer import check_num_threads

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
        return (f"wrote {self.out_path}: {plural(self.documents, 'document')}, {plural(self.tokens, 'token')} "
                f"({self.dtype}), {plural(self.bytes, 'byte')} in {self.seconds:.2f} s ({self.mb_per_s:.1f} MB/s); "
                f"index {self.index_path}")


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


def _named(exc: OSError, path: str) -> OSError:
    """``exc`` (from a temporary file, or without a file name: a full disk) naming ``path``."""
    return type(exc)(exc.errno, exc.strerror or str(exc), path)


def output_target(path: str) -> str:
    """The file that writing ``path`` replaces: ``path`` itself, or where its symbolic link
    points (the link stays a link). Raises WordsplitError for an existing file that is not a
    regular file (a FIFO, a device, a directory), which a rename would replace (or fail on).

    >>> output_target("no/such/dir/ids.bin")
    'no/such/dir/ids.bin'
    """
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise _named(exc, target) from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        via = f" (the link {path} points to it)" if target != path else ""
        raise WordsplitError(f"the output {target}{via} is {kind}; encode-file writes regular files only "
                             "(renamed into place when complete): name a file")
    return target


class _ArrayWriter:
    """Appends little-endian integers of one dtype to a temporary file beside ``path`` (or
    beside the file a symbolic link at ``path`` points to); OSErrors name ``path``'s target."""

    def __init__(self, path: str, dtype: str, fmt: str) -> None:
        self.path = path
        self.target = output_target(path)
        self.tmp_path = f"{self.target}.tmp-{os.getpid()}"
        self.descr = DTYPES[dtype][1]
        self.itemsize = int(self.descr[2:])
        self.fmt = fmt
        self.items = 0
        try:
            self.file = open(self.tmp_path, "wb")
            if fmt == "npy":
                self.file.write(_npy_header(self.descr, 0))
        except OSError as exc:  # name the file the user asked for, not the temporary one
            try:
                self.discard()
            except OSError:
                pass  # nothing was created (a missing or read-only directory)
            raise _named(exc, self.target) from None

    def write(self, data: bytes) -> None:
        """Append items given as their little-endian bytes."""
        try:
            self.file.write(data)
        except OSError as exc:  # a full disk: the output's problem, named as such
            raise _named(exc, self.target) from None
        self.items += len(data) // self.itemsize

    def finish(self) -> None:
        """Write the final header, and flush the file to disk so the rename publishes it whole."""
        try:
            if self.fmt == "npy":
                self.file.seek(0)
                self.file.write(_npy_header(self.descr, self.items))
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
        except OSError as exc:
            raise _named(exc, self.target) from None

    def publish(self) -> None:
        """Rename the finished temporary file onto the target."""
        try:
            os.replace(self.tmp_path, self.target)
        except OSError as exc:
            raise _named(exc, self.target) from None

    def discard(self) -> None:
        file = getattr(self, "file", None)
        if file is not None:
            try:
                file.close()
            except OSError:
                pass  # a flush that fails on a full disk: the file is deleted anyway
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
    """A binary stream that counts the bytes read from it (the progress bar's measure); a
    read error names the input."""

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self.stream = stream
        self.name = name
        self.count = 0

    def read(self, size: int) -> bytes:
        try:
            data = self.stream.read(size)
        except OSError as exc:
            raise _named(exc, exc.filename or self.name) from None
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


def _separator_bytes(field: Optional[str], separator: Optional[str]) -> Optional[bytes]:
    """The bytes between documents: a newline for JSONL, ``separator`` in UTF-8, or None
    (the whole file is one document)."""
    if field is not None:
        return b"\n"
    if separator is None:
        return None
    if separator == "":
        raise WordsplitError("the document separator must not be empty (use separator=None for one document)")
    return separator.encode("utf-8")


def _decoded(pieces, name: str, extra: int, offset: int = 0) -> Iterator[tuple[str, int]]:
    """``(text, its input bytes with the separator)`` of each plain-text piece; the first
    piece starts at byte ``offset`` of the input (for the error naming a byte that is not UTF-8)."""
    for piece in pieces:
        start, offset = offset, offset + len(piece) + extra
        try:
            yield piece.decode("utf-8"), offset - start
        except UnicodeDecodeError as exc:
            raise WordsplitError(f"{name}: byte {start + exc.start} is not valid UTF-8 ({exc.reason}); "
                                 "convert the file first, e.g. with iconv") from None


def _documents(stream, name: str, field: Optional[str], separator: Optional[str]) -> Iterator[tuple[str, int]]:
    """``(document, its input bytes with the separator)`` for each document of ``stream``."""
    sep = _separator_bytes(field, separator)
    extra = len(sep) if sep else 0
    if field is None:
        yield from _decoded(_split(stream, sep), name, extra)
        return
    for number, piece in enumerate(_split(stream, sep), 1):
        size = len(piece) + extra
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
        yield text, size


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
        # The native path's writes run on a thread of their own, one chunk behind: a chunk's
        # ids are written while the next encodes (on 2 threads the writes were a tenth of the
        # run, the other core idle beside them). At most one chunk waits: memory stays bounded.
        self._writer: Optional[ThreadPoolExecutor] = None
        self._written: Optional[Future] = None

    def _write(self, data: bytes, ends: bytes) -> None:
        """Append ``data`` (ids) and ``ends`` (index entries) to the files, in order, after the
        previous chunk's (whose error, if any, is raised here)."""
        self._wait()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wordsplit-encode-file")
        self._written = self._writer.submit(self._write_now, data, ends)

    def _write_now(self, data: bytes, ends: bytes) -> None:
        self.ids_out.write(data)
        self.index_out.write(ends)

    def _wait(self) -> None:
        """The pending write done (its error raised)."""
        written, self._written = self._written, None
        if written is not None:
            written.result()

    def _stop_writer(self) -> None:
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

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
        self._write(data, _u64_le(ends))
        self.documents += len(docs)
        self.tokens = ends[-1]

    def add_buffer(self, native: "_NativeDocuments", buffer: memoryview, limit: int, last: bool, name: str,
                   offset: int) -> int:
        """Encode a chunk of the documents of ``buffer`` (input bytes from byte ``offset`` on),
        up to the first that ends ``limit`` bytes or more into it, in one native call, and
        append their ids and ends; returns the bytes they take (0: none, read more; see
        ``NativeEngine.encode_documents_flat``). On an error (text that is not UTF-8, a
        disallowed special token) the same documents go through :meth:`add` instead, which
        names the byte or the document as it always does."""
        try:
            consumed, data, ends = native.engine.encode_documents_flat(
                buffer, native.separator, limit, last, native.policy.allowed, native.policy.disallowed,
                native.threads, self.ids_out.itemsize, self.eos_id, self.tokens)
        except (EncodeInputError, DisallowedSpecialError):
            pieces, consumed = _chunk_pieces(bytes(buffer), native.separator, limit, last)
            docs = [text for text, _ in _decoded(pieces, name, len(native.separator), offset)]
            if docs:
                self.add(docs)
            return consumed
        if ends:
            self._write(data, ends)
            self.documents += len(ends) // 8
            (self.tokens,) = struct.unpack_from("<Q", ends, len(ends) - 8)
        return consumed

    def publish(self) -> None:
        """Complete both files, then rename them into place: the ids first, so that when that
        fails (the likelier: the user's own path) the old pair is untouched; the index is
        renamed in the same directory right after. Only if that second rename fails do the
        files disagree, and the error says so."""
        try:
            self._wait()
        finally:
            self._stop_writer()
        for writer in (self.ids_out, self.index_out):
            writer.finish()
        self.ids_out.publish()
        try:
            self.index_out.publish()
        except OSError as exc:
            raise type(exc)(exc.errno, f"{exc.strerror}; {self.ids_out.target} was replaced, so it and its "
                                       "index no longer match: write them again", exc.filename) from None

    def discard(self) -> None:
        self._stop_writer()  # (the pending write done, its error left: the files go)
        self.ids_out.discard()
        self.index_out.discard()


@dataclass(frozen=True)
class _NativeDocuments:
    """What plain-text documents need to go to the native engine as bytes."""

    engine: object
    separator: bytes
    policy: object  # a resolved SpecialPolicy
    threads: Optional[int]  # as a batch call of the tokenizer counts them (None: all cores)


def _native_documents(tok, field: Optional[str], separator: Optional[str], num_threads: Optional[int],
                      policy: dict) -> Optional[_NativeDocuments]:
    """The native path for plain-text documents cut at a separator: the tokenizer's native
    engine, with the special-token policy resolved; None where documents go through Python
    (JSONL, one whole-file document, the Python backend, a policy with disallowed strings that
    are not special tokens, or arguments that are wrong: the Python path reports those as it
    always has)."""
    if field is not None or not separator or not hasattr(tok, "native_engine"):
        return None  # (a tokenizer-like object without one keeps the path through encode_batch_flat)
    engine = tok.native_engine()
    if engine is None:
        return None
    try:
        resolved = resolve_special_policy(tok.vocab, policy["allowed_special"], policy["disallowed_special"])
        threads = tok.num_threads if num_threads is None else check_num_threads(num_threads)
    except WordsplitError:
        return None
    if resolved.other:
        return None
    return _NativeDocuments(engine, separator.encode("utf-8"), resolved, threads)


def _chunk_pieces(data: bytes, sep: bytes, limit: int, last: bool) -> tuple[list[bytes], int]:
    """The documents ``encode_documents_flat`` takes from ``data`` and the bytes they take, found
    the same way in Python (for its error path)."""
    pieces, start = [], 0
    while True:
        end = data.find(sep, start)
        if end < 0:
            break
        pieces.append(data[start:end])
        start = end + len(sep)
        if start >= limit:
            return pieces, start
    if not last:
        return [], 0
    if start < len(data):
        pieces.append(data[start:])
    return pieces, len(data)


def _encode_native(sink: _IdSink, native: _NativeDocuments, reader: "_CountingReader", name: str,
                   chunk_bytes: int, progress: Optional[Progress], total: Optional[int]) -> None:
    """Read the input and encode it a chunk of documents at a time, as the Python path
    batches them (the documents up to the first that ends ``chunk_bytes`` or more after the
    chunk's start, the rest at the end of the input), each chunk in one native call."""
    sep = native.separator
    pending = bytearray()
    pos = 0  # the bytes of ``pending`` before it are encoded
    offset = 0  # the input byte at ``pending[pos]``
    sep_end = -1  # where the last separator seen in ``pending`` ends
    while True:
        block = reader.read(READ_BYTES)
        last = not block
        if block:
            if pos:
                del pending[:pos]  # once per read, not once per chunk
                sep_end -= pos
                pos = 0
            # A separator may straddle two reads: look from len(sep) - 1 bytes before the new ones.
            start = max(0, len(pending) - len(sep) + 1)
            pending += block
            found = pending.rfind(sep, start)
            if found >= 0:
                sep_end = found + len(sep)
        # A chunk is there when a separator ends chunk_bytes or more after ``pos`` (the native
        # call decides: separators found from the right may overlap those found from the left).
        while pos < len(pending) and (last or sep_end - pos >= chunk_bytes):
            with memoryview(pending)[pos:] as view:
                consumed = sink.add_buffer(native, view, chunk_bytes, last, name, offset)
            if not consumed:
                break
            pos += consumed
            offset += consumed
            if progress is not None:
                progress(reader.count, total)
        if last:
            return


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
        WordsplitError: a bad output name, an output that exists and is not a regular file,
            an input that is the output or its index, input that is not UTF-8, a malformed
            JSON line.
        EncodeInputError: a JSONL field that is not a string.
        UnknownTokenError: ``eos=True`` but the vocabulary has no end-of-sequence token.
        DisallowedSpecialError: a disallowed special token, with the document's number.
        OSError: the input cannot be read or the output written (the error names the input,
            or the output it could not write: never a temporary file).
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
    for path in (out_path, index_path(out_path)):
        output_target(path)  # refuse a FIFO, device or directory before reading anything
    if isinstance(in_path, (str, os.PathLike)):
        name = os.fspath(in_path)
        for path, what in ((out_path, "output"), (index_path(out_path), "index")):
            if os.path.exists(path) and os.path.exists(name) and os.path.samefile(name, path):
                raise WordsplitError(f"the input {name!r} is also the {what} file {path!r}, which encode-file "
                                     "would overwrite; name another output")
        stream = open(name, "rb")
        info = os.fstat(stream.fileno())
        total = info.st_size if stat.S_ISREG(info.st_mode) else None  # a FIFO's size says nothing
    else:
        name, stream, total = getattr(in_path, "name", None), in_path, None
        name = name if isinstance(name, str) else "<stream>"
    policy = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}

    started = time.perf_counter()
    reader = _CountingReader(stream, name)
    sink = None
    try:
        sink = _IdSink(tok, out_path, fmt, eos_id, num_threads, policy)
        if progress is not None:
            progress(0, total)
        native = _native_documents(tok, field, separator, num_threads, policy)
        if native is not None:
            _encode_native(sink, native, reader, name, chunk_bytes, progress, total)
            if progress is not None:
                progress(reader.count, total)
            sink.publish()
            return _summary(sink, reader, started, fmt, out_path, eos_id)
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
    return _summary(sink, reader, started, fmt, out_path, eos_id)


def _summary(sink: _IdSink, reader: _CountingReader, started: float, fmt: str, out_path: str,
             eos_id: Optional[int]) -> EncodeFileSummary:
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
        EncodedFileError: the files are not a matching pair written by :func:`encode_file`
            (a truncated file, another dtype, an index that does not fit the ids); the
            message names the file.
        OSError: a file cannot be read (FileNotFoundError names it).
    """
    out_path = os.fspath(out_path)
    fmt = _format_of(out_path, None)
    index = _load_array(index_path(out_path), fmt, "uint64")
    total = index[-1] if index else 0
    dtype = None
    if fmt == "bin":
        dtype = {2 * total: "uint16", 4 * total: "uint32"}.get(os.path.getsize(out_path))
        if dtype is None:
            raise EncodedFileError(f"{out_path} holds neither {total} uint16 nor {total} uint32 ids, "
                                   "as its index says")
    ids = _load_array(out_path, fmt, dtype)
    if len(ids) != total:
        raise EncodedFileError(f"{out_path} holds {len(ids)} ids but its index ends at {total}")
    return ids, index


def _load_array(path: str, fmt: str, dtype: Optional[str]) -> array:
    """The integers of a file written by _ArrayWriter (``dtype`` is read from a .npy header)."""
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "npy":
        dtype, data = _npy_body(path, data)
    values = array(DTYPES[dtype][0])
    if len(data) % values.itemsize:
        raise EncodedFileError(f"{path} is truncated: {len(data)} bytes of data is not a whole number of "
                               f"{dtype} values")
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _npy_body(path: str, data: bytes) -> tuple[str, bytes]:
    """The dtype and the data bytes of a .npy file as encode_file writes it (a NumPy 1.0
    header for a 1-D little-endian unsigned array), checked against the file's size."""
    start = len(NPY_MAGIC) + 2
    if not data.startswith(NPY_MAGIC) or len(data) < start:
        raise EncodedFileError(f"{path} is not a .npy file written by encode_file (no NumPy 1.0 header)")
    (length,) = struct.unpack_from("<H", data, len(NPY_MAGIC))
    if len(data) < start + length:
        raise EncodedFileError(f"{path} is truncated: its .npy header says {length} bytes, "
                               f"{len(data) - start} are there")
    try:
        header = ast.literal_eval(data[start:start + length].decode("latin-1"))
        descr, shape = header["descr"], header["shape"]
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError):
        raise EncodedFileError(f"{path} has a malformed .npy header") from None
    dtype = next((name for name, (_, known) in DTYPES.items() if known == descr), None)
    if dtype is None:
        raise EncodedFileError(f"{path} holds {descr!r}, not the little-endian unsigned ids encode_file writes")
    body = data[start + length:]
    itemsize = int(DTYPES[dtype][1][2:])
    if not (isinstance(shape, tuple) and len(shape) == 1 and isinstance(shape[0], int)):
        raise EncodedFileError(f"{path} holds an array of shape {shape!r}, not the 1-D array encode_file writes")
    if len(body) != shape[0] * itemsize:
        raise EncodedFileError(f"{path} is truncated: its header says {shape[0]} {dtype} values "
                               f"({shape[0] * itemsize} bytes), the file holds {len(body)} bytes of data")
    return dtype, body
