"""The inputs of a dataset: which files, what kind each is, and their documents, streamed.

:func:`expand_inputs` turns the names a user gives (files, directories, glob patterns) into a
sorted, de-duplicated list of :class:`InputFile`; :func:`read_batches` streams the documents of
one input in batches of about ``batch_bytes`` of text, so memory is bounded by the batch size
(and the largest single document), never by the file.

What a document is, per kind:

* **parquet** (``*.parquet``, needs ``pyarrow``): the string (or binary, decoded as UTF-8)
  ``column`` of each row, read one record batch (1,024 rows) at a time. Rows are named by their 0-based
  index, as in pyarrow. The documents stay Arrow arrays (:attr:`DocumentBatch.arrays`): the
  native encoder reads their UTF-8 bytes in place, with no Python str per document.
* **jsonl** (``*.jsonl``, ``*.ndjson``, optionally ``.gz``): the string ``field`` of each
  line's JSON object. Blank lines are skipped. Lines are named by their 1-based number.
* **text** (anything else, optionally ``.gz``): each line, without its ``\\n`` (a ``\\r`` before
  it stays), as ``wordsplit encode-file`` reads text. An empty line is an empty document.

A bad document (a missing field or column value, one that is not a string, invalid UTF-8, a
line that is not JSON) raises :class:`DatasetInputError` naming the file and the row, or with
``on_error="skip"`` is left out and counted in :attr:`DocumentBatch.skipped`.

It does not: encode, decide shards, or write anything (see :mod:`wordsplit.datasets.run`).

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     with open(os.path.join(d, "a.jsonl"), "w") as f:
...         _ = f.write('{"text": "hi"}\\n\\n{"text": "there"}\\n')
...     [(i.kind, os.path.basename(i.path)) for i in expand_inputs([d])]
...     [b.texts for b in read_batches(expand_inputs([d])[0])]
[('jsonl', 'a.jsonl')]
[['hi', 'there']]
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence

from ..errors import DatasetInputError, OptionValueError, advised

#: Text bytes per batch of documents: big enough to keep every core busy, small next to memory.
DEFAULT_BATCH_BYTES = 4 << 20
ON_ERROR = ("raise", "skip")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)
READ_BYTES = 1 << 20
# Rows pyarrow hands over at a time (a batch of documents gathers whole record batches).
PARQUET_ROWS = 1024


@dataclass(frozen=True)
class InputFile:
    """One input file: its path, its kind (``"parquet"``, ``"jsonl"`` or ``"text"``) and size."""

    path: str
    kind: str
    size: int

    @property
    def stem(self) -> str:
        """The file name without its data suffixes: ``"data/train-01.jsonl.gz"`` → ``"train-01"``."""
        name = os.path.basename(self.path)
        if name.endswith(".gz"):
            name = name[:-3]
        for suffix in (*JSONL_SUFFIXES, *PARQUET_SUFFIXES, ".txt", ".text"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name


@dataclass
class DocumentBatch:
    """Documents read from one input, in order.

    Attributes:
        lines: the documents of a JSONL or text input, as str.
        arrays: the documents of a Parquet input, as pyarrow ``string`` or ``large_string``
            arrays without nulls (None for other inputs).
        skipped: bad documents left out (``on_error="skip"``) since the previous batch.
        first_skipped: the message of the first of them, or None.
        position: how far into the input the reading is, as a fraction of its size (0 to 1).
        text_bytes: UTF-8 bytes of the documents.
    """

    lines: List[str]
    arrays: Optional[list] = None
    skipped: int = 0
    first_skipped: Optional[str] = None
    position: float = 0.0
    text_bytes: int = field(default=0)

    @property
    def texts(self) -> List[str]:
        """The documents as str (made from the arrays for a Parquet input)."""
        if self.arrays is None:
            return self.lines
        return [text for array in self.arrays for text in array.to_pylist()]

    def __len__(self) -> int:
        """The number of documents."""
        return len(self.lines) if self.arrays is None else sum(len(a) for a in self.arrays)


def kind_of(path: str) -> str:
    """The kind of input a file name says.

    >>> kind_of("a/train.parquet"), kind_of("b.jsonl.gz"), kind_of("notes.txt")
    ('parquet', 'jsonl', 'text')
    """
    name = path.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return "text"


def expand_inputs(names: Sequence[str]) -> list[InputFile]:
    """The input files named by ``names``: files, directories (every file below, except names
    starting with ``.`` or ``_``) and glob patterns (``**`` recurses). Sorted by path and de-duplicated, so the
    order, and with it the output, does not depend on how the names were given.

    Raises:
        DatasetInputError: a name that matches no file, or no input at all.
    """
    if isinstance(names, (str, os.PathLike)):
        names = [names]
    paths: set[str] = set()
    for name in names:
        name = os.fspath(name)
        if os.path.isdir(name):
            # As pyarrow.dataset does, names starting with "." or "_" are not data (.git, _SUCCESS,
            # Parquet's _metadata), nor is anything below such a directory.
            found = [os.path.join(root, f) for root, dirs, files in os.walk(name) for f in files]
            found = [p for p in found if not any(part.startswith((".", "_")) for part in
                                                 os.path.relpath(p, name).split(os.sep))]
        elif os.path.isfile(name):
            found = [name]
        else:
            found = [p for p in glob.glob(name, recursive=True) if os.path.isfile(p)]
        if not found:
            raise DatasetInputError(f"{name}: no such file, directory or matching glob pattern")
        paths.update(os.path.abspath(p) for p in found)
    if not paths:
        raise DatasetInputError("no inputs given: name files, directories or glob patterns")
    return [InputFile(path=p, kind=kind_of(p), size=os.path.getsize(p)) for p in sorted(paths)]


def file_sha256(path: str) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     file_sha256(f.name)[:16]
    'e3b0c44298fc1c14'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(READ_BYTES)
            if not block:
                return digest.hexdigest()
            digest.update(block)


class _Batcher:
    """Collects documents into batches of about ``batch_bytes`` of text, with the skip count."""

    def __init__(self, batch_bytes: int, on_error: str, arrays: bool = False) -> None:
        if on_error not in ON_ERROR:
            raise OptionValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
        self.batch_bytes = batch_bytes
        self.on_error = on_error
        self.arrays = arrays  # batches of Arrow arrays (Parquet), else of str
        self.batch = DocumentBatch(lines=[], arrays=[] if arrays else None)

    def add(self, text: str, size: int) -> Optional[DocumentBatch]:
        self.batch.lines.append(text)
        self.batch.text_bytes += size
        return self.take() if self.batch.text_bytes >= self.batch_bytes else None

    def add_array(self, array, size: int) -> Optional[DocumentBatch]:
        if len(array):
            self.batch.arrays.append(array)
        self.batch.text_bytes += size
        return self.take() if self.batch.text_bytes >= self.batch_bytes else None

    def bad(self, message: str) -> Optional[DocumentBatch]:
        if self.on_error == "raise":
            raise advised(DatasetInputError, message, python="pass on_error='skip' to leave such documents out",
                          cli="--on-error skip leaves such documents out")
        self.batch.skipped += 1
        if self.batch.first_skipped is None:
            self.batch.first_skipped = message
        return None

    def take(self, position: float = 0.0) -> DocumentBatch:
        batch, self.batch = self.batch, DocumentBatch(lines=[], arrays=[] if self.arrays else None)
        batch.position = position
        return batch


def read_batches(item: InputFile, *, column: str = "text", field: str = "text", on_error: str = "raise",
                 batch_bytes: int = DEFAULT_BATCH_BYTES) -> Iterator[DocumentBatch]:
    """The documents of ``item``, in order, in batches of about ``batch_bytes`` of UTF-8 text.

    Args:
        item: the input.
        column: parquet: the column holding the documents.
        field: jsonl: the field holding the documents.
        on_error: ``"raise"`` (default) or ``"skip"`` bad documents.
        batch_bytes: text bytes per batch (a longer document is a batch of its own).

    Raises:
        DatasetInputError: a bad document, naming the file and the row, with ``on_error="raise"``;
            a Parquet file without ``column`` or whose column holds no text, always.
        OSError: the file cannot be read.
    """
    batcher = _Batcher(batch_bytes, on_error, arrays=item.kind == "parquet")
    if item.kind == "parquet":
        yield from _parquet_batches(item, column, batcher)
    else:
        yield from _line_batches(item, field if item.kind == "jsonl" else None, batcher)


class _Position:
    """Where a reader is in the file on disk (the compressed bytes, for .gz), for progress."""

    def __init__(self, raw, size: int) -> None:
        self.raw, self.size = raw, max(size, 1)

    def __call__(self) -> float:
        return min(1.0, self.raw.tell() / self.size)


def _add_utf8(batcher: "_Batcher", data: bytes, where: Callable[[int], str]):
    """Add ``data`` as a document, or count it bad when it is not UTF-8; ``where(offset)``
    names the offending byte (called only then, so a good document builds no message)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return batcher.bad(f"{where(exc.start)} is not valid UTF-8 ({exc.reason})")
    return batcher.add(text, len(data))


def _line_batches(item: InputFile, field: Optional[str], batcher: _Batcher) -> Iterator[DocumentBatch]:
    raw = open(item.path, "rb")
    try:
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if item.path.lower().endswith(".gz") else raw
        position = _Position(raw, item.size)
        for number, line in enumerate(_lines(stream), 1):
            done = None
            if field is None:
                done = _add_utf8(batcher, line, lambda at: f"{item.path}:{number}: byte {at} of the line")
            elif line.strip():
                done = _json_document(item.path, number, line, field, batcher)
            if done is not None:
                done.position = position()
                yield done
        last = batcher.take(1.0)
        if len(last) or last.skipped:
            yield last
    except gzip.BadGzipFile as exc:
        raise DatasetInputError(f"{item.path}: not a valid gzip file ({exc})") from None
    finally:
        raw.close()


def _json_document(path: str, number: int, line: bytes, field: str, batcher: _Batcher) -> Optional[DocumentBatch]:
    try:
        record = json.loads(line)
    except UnicodeDecodeError as exc:
        return batcher.bad(f"{path}:{number}: byte {exc.start} of the line is not valid UTF-8 ({exc.reason})")
    except ValueError as exc:
        return batcher.bad(f"{path}:{number}: not a JSON line ({exc})")
    if not isinstance(record, dict):
        return batcher.bad(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
    if field not in record:
        return batcher.bad(f"{path}:{number}: the JSON object has no field {field!r} (choose another with --field)")
    text = record[field]
    if not isinstance(text, str):
        return batcher.bad(f"{path}:{number}: the field {field!r} is {type(text).__name__}, not a string")
    return batcher.add(text, len(line))


def _lines(stream) -> Iterator[bytearray]:
    """The lines of a binary stream without their ``\\n``; no empty line after a final ``\\n``."""
    pending = bytearray()  # appended to in place: a line of many reads is not copied on each
    while True:
        block = stream.read(READ_BYTES)
        if not block:
            break
        pending += block
        if b"\n" not in block:  # a long line: wait for its end without re-splitting
            continue
        lines = pending.split(b"\n")
        pending = lines.pop()
        yield from lines
    if pending:
        yield pending


def _parquet_batches(item: InputFile, column: str, batcher: _Batcher) -> Iterator[DocumentBatch]:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetInputError(
            f"{item.path}: reading Parquet needs pyarrow: pip install 'wordsplit[parquet]'"
        ) from None
    try:
        parquet = pq.ParquetFile(item.path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise DatasetInputError(f"{item.path}: not a Parquet file ({exc})") from None
    schema = parquet.schema_arrow
    if column not in schema.names:
        raise DatasetInputError(f"{item.path}: no column {column!r}; it has {', '.join(schema.names)} "
                                "(choose one with --column)")
    kind = schema.field(column).type
    binary = pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
    if not (binary or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise DatasetInputError(f"{item.path}: the column {column!r} is {kind}, not text (string or binary)")
    text_type = pa.large_string() if pa.types.is_large_binary(kind) else pa.string()
    rows = max(parquet.metadata.num_rows, 1)
    row = 0
    # iter_batches decodes one row group's column chunk at a time: memory is bounded by the
    # row group and the batch, not the file. pyarrow's own threads are off: the caller decides
    # which threads do the work (this one reads while others encode).
    for record_batch in parquet.iter_batches(batch_size=PARQUET_ROWS, columns=[column], use_threads=False):
        values = record_batch.column(0)
        texts = None
        if values.null_count == 0:
            try:
                # Checks the UTF-8 (Arrow's validator, no Python object per row); a binary
                # column becomes a string one without copying.
                texts = values.cast(text_type) if binary else values
                texts.validate(full=True)
            except pa.ArrowInvalid:
                texts = None
        if texts is not None:
            done = batcher.add_array(texts, pc.sum(pc.binary_length(texts)).as_py() or 0)
            row += len(values)
        else:
            # Nulls or bad UTF-8: row by row, to name (or skip) each bad document.
            good, size = [], 0
            raw = values.cast(pa.large_binary()) if not binary else values
            for value in raw.to_pylist():
                if value is None:
                    batcher.bad(f"{item.path} row {row}: the column {column!r} is null")
                else:
                    try:
                        good.append(value.decode("utf-8"))
                        size += len(value)
                    except UnicodeDecodeError as exc:
                        batcher.bad(f"{item.path} row {row}: byte {exc.start} of the column {column!r} "
                                    f"is not valid UTF-8 ({exc.reason})")
                row += 1
            done = batcher.add_array(pa.array(good, pa.large_string()), size)
        if done is not None:
            done.position = row / rows
            yield done
    last = batcher.take(1.0)
    if len(last) or last.skipped:
        yield last
