"""Training text, streamed: an iterable of strings, or text / JSONL / Parquet files (gzip allowed).

:func:`iter_documents` turns a ``source`` into documents one at a time, so a corpus of any size
never sits in memory as text. What a document is:

* a ``str`` of an iterable source: itself;
* a **text file** (any name but the ones below): each line, *with* its ``"\\n"`` (as HF
  ``tokenizers`` reads files it trains on), so the pieces of the split pattern are the same
  as HF's;
* a **JSONL file** (``.jsonl``, ``.ndjson``, ``.json``): the string ``field`` (default
  ``"text"``) of each line's object; blank lines are skipped;
* a **Parquet file** (``.parquet``; needs ``pyarrow``): each string of ``column`` (default
  ``"text"``), read a batch at a time.

A name ending in ``.gz`` is gunzipped on the fly (``docs.jsonl.gz`` is JSONL).

It does not split documents into words (:mod:`wordsplit.training.counting` does).

>>> list(iter_documents(["hello", "world"]))
['hello', 'world']
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from ..errors import TrainingInputError, advised

Source = Union[Iterable[str], "os.PathLike[str]", Iterable["os.PathLike[str]"]]

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
DEFAULT_FIELD = "text"
DEFAULT_COLUMN = "text"
PARQUET_BATCH_ROWS = 4096


def _suffix(path: Path) -> str:
    """The format suffix of ``path``, under a ``.gz``: ``docs.jsonl.gz`` → ``.jsonl``."""
    name = path.name.lower().removesuffix(".gz")
    return os.path.splitext(name)[1]


def _open_text(path: Path) -> io.TextIOBase:
    if not path.exists():
        raise FileNotFoundError(f"training file not found: {path}")
    raw = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
    # newline="": lines keep "\r\n" as they are, as HF reads them.
    return io.TextIOWrapper(raw, encoding="utf-8", newline="")


def iter_file(path: Union[str, os.PathLike], *, field: Optional[str] = None,
              column: Optional[str] = None) -> Iterator[str]:
    """The documents of one file (see the module doc for the formats).

    Raises:
        FileNotFoundError: no such file.
        TrainingInputError: a JSONL line that is not an object with a string ``field``, a
            Parquet file without ``column``, a file that is not UTF-8, or ``pyarrow`` missing.
    """
    path = Path(path)
    suffix = _suffix(path)
    if suffix == ".parquet":
        yield from _iter_parquet(path, column or DEFAULT_COLUMN)
        return
    jsonl = suffix in JSONL_SUFFIXES
    field = field or DEFAULT_FIELD
    with _open_text(path) as lines:
        try:
            for lineno, line in enumerate(lines, 1):
                if not jsonl:
                    yield line
                    continue
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise TrainingInputError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
                text = record.get(field) if isinstance(record, dict) else None
                if not isinstance(text, str):
                    raise advised(TrainingInputError,
                                  f"{path}:{lineno}: expected an object with a string {field!r} field",
                                  python="pass field=... to name another one", cli="--field names another one")
                yield text
        except UnicodeDecodeError:
            raise TrainingInputError(_not_utf8(path)) from None


def _not_utf8(path: Path) -> str:
    """Where ``path`` stops being UTF-8, as ``"PATH:LINE: ..."``: the text reader decodes a
    block at a time and knows no line, so the file is read again, a line at a time (a line
    break is one byte that no UTF-8 sequence holds, so each line decodes alone)."""
    raw = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
    with raw:
        for lineno, line in enumerate(raw, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (f"{path}:{lineno}: not UTF-8 text (byte 0x{line[exc.start]:02x} at byte {exc.start + 1} of "
                        f"the line: {exc.reason}); convert the file first, e.g. with iconv")
    return f"{path}: not UTF-8 text; convert it first, e.g. with iconv"


def _iter_parquet(path: Path, column: str) -> Iterator[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TrainingInputError(
            f"{path}: reading Parquet needs pyarrow (pip install pyarrow), or convert it to JSONL"
        ) from None
    if not path.exists():
        raise FileNotFoundError(f"training file not found: {path}")
    opener = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
    with opener as handle:
        table = pq.ParquetFile(handle)
        if column not in table.schema_arrow.names:
            raise TrainingInputError(
                f"{path}: no column {column!r}; it has {', '.join(table.schema_arrow.names)} (pass column=...)"
            )
        for batch in table.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[column]):
            for text in batch.column(0).to_pylist():
                if text is not None:
                    yield text


def iter_documents(source: Source, *, field: Optional[str] = None, column: Optional[str] = None) -> Iterator[str]:
    """Every document of ``source``: a path, or an iterable of strings and paths.

    Raises:
        TrainingInputError: ``source`` is a single ``str`` (ambiguous: pass ``[text]`` for a
            text, or a ``pathlib.Path`` for a file), its first text names an existing file
            (ambiguous too: pass ``Path`` items to read files), or an item is neither a str nor
            a path.
    """
    if isinstance(source, (str, bytes)):
        raise TrainingInputError(
            "source is a single string; pass a list of texts ([text]) or a pathlib.Path to read a file"
        )
    if isinstance(source, os.PathLike):
        return iter_file(source, field=field, column=column)
    if isinstance(source, (list, tuple)) and set(map(type, source)) <= {str}:
        if source:
            _refuse_file_name(source[0])
        return iter(source)  # texts only: no step per document in Python
    return _iter_items(source, field, column)


# A text this long or with a line break is not taken for a file name (and costs no stat).
LONGEST_FILE_NAME = 4096


def _refuse_file_name(text: str) -> None:
    """Refuse a first text that names an existing file: ``train(["corpus.txt"])`` meant the
    file (HF's ``train(files=[...])`` takes names as str), and training on the characters of
    its name would be a silent wrong answer. Files are ``pathlib.Path`` items. Only the first
    text is looked at, so a corpus of texts costs one check.

    >>> _refuse_file_name("the cat sat")
    """
    if len(text) > LONGEST_FILE_NAME or "\n" in text:
        return
    try:
        is_file = os.path.isfile(text)
    except (OSError, ValueError):  # a name too long, a NUL: not a file
        return
    if is_file:
        raise TrainingInputError(
            f"the first training text, {text!r}, is the name of a file; strings are texts, files are "
            f"pathlib.Path items: pass [Path({text!r})] (e.g. [Path(p) for p in names]) to read it"
        )


def _iter_items(source, field, column) -> Iterator[str]:
    first = True
    for item in source:
        if isinstance(item, str):
            if first:
                _refuse_file_name(item)
            first = False
            yield item
        elif isinstance(item, os.PathLike):
            first = False
            yield from iter_file(item, field=field, column=column)
        else:
            raise TrainingInputError(
                f"training source items must be str texts or pathlib.Path files, not {type(item).__name__}"
            )


def sample_documents(documents: Iterable[str], rate: float, seed: int = 0) -> Iterator[str]:
    """Each document of ``documents`` kept with probability ``rate``: one draw of
    ``random.Random(seed)`` per document, in order, so the same documents in the same order
    and the same ``seed`` always keep the same ones. The sample is spread over the whole
    source and streams (nothing is held); its size is about ``rate`` times the source's.

    >>> list(sample_documents(map(str, range(10)), 0.5, seed=1))
    ['0', '3', '4', '5', '8', '9']
    """
    draw = random.Random(seed).random
    return (text for text in documents if draw() < rate)
