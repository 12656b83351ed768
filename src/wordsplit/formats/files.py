"""Reading vocabulary files: each file once, with a size cap, gzip streamed; and the stem a
vocabulary is named after.

What it does:

* :func:`read_file` returns the bytes of a file, gunzipped when its name ends in ``.gz``.
  Decompression is streamed and stops at :func:`max_file_bytes` (256 MiB by default,
  ``WORDSPLIT_MAX_VOCAB_MB`` to raise it), so a gzip bomb costs at most about that much
  memory before it raises :class:`VocabFormatError`. The largest real vocabulary files are
  tens of MB.
* :func:`read_input` returns the bytes a loader parses from one file: the whole raw file, or
  for a plain ``.gguf`` (often a multi-GB model) only its header and metadata. A regular file
  is read with one ``read``; a FIFO or socket is read once, up to the cap; a device is refused.
* :func:`pinned_inputs` makes :func:`read_file` answer from bytes already read (``load_vocab``
  hashes the bytes of :func:`read_input`, then parses *those* bytes, so a file replaced in
  between can never be cached under the other file's hash).
* :func:`read_head` returns the first 64 KiB of a file, gunzipped: what a loader that
  recognizes its files by content looks at (a Tekken JSON and a tokenizer.json share ``.json``).
* :func:`vocab_name` is the name a vocabulary loaded from a file gets: the file's stem, or its
  directory's name when the stem says nothing (``…/Qwen3-8B/tokenizer.json`` is ``Qwen3-8B``).

What it does not do: parse anything, or know the cache.

>>> read_file("no-such-file.tiktoken")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
FileNotFoundError: vocabulary file not found: no-such-file.tiktoken
>>> max_file_bytes() >= 256 << 20
True
"""

from __future__ import annotations

import contextlib
import contextvars
import gzip
import io
import os
import stat
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator, Mapping

from ..errors import VocabFormatError

__all__ = [
    "MAX_FILE_MB_ENV", "file_stem", "gunzip", "max_file_bytes", "open_input", "pinned", "pinned_inputs", "read_file",
    "read_head", "read_input", "read_raw", "vocab_name",
]

MAX_FILE_MB_ENV = "WORDSPLIT_MAX_VOCAB_MB"
#: The most bytes a vocabulary file may hold, gunzipped (GGUF: its metadata), unless
#: ``WORDSPLIT_MAX_VOCAB_MB`` says otherwise. Qwen3's tokenizer.json is 11 MB.
DEFAULT_MAX_FILE_BYTES = 256 << 20
_CHUNK = 1 << 20
#: How much of a file :func:`read_head` returns.
HEAD_BYTES = 64 << 10
# File stems that name the format, not the tokenizer: such a file's vocabulary is named after
# its directory (HF's tokenizer.json and vocab.json, GPT-2's encoder.json, Mistral's tekken.json).
GENERIC_STEMS = frozenset({"tokenizer", "vocab", "encoder", "tekken", "tokenizer.model"})

# The raw bytes of the files of the load in progress, by absolute path (see pinned_inputs).
_PINNED: contextvars.ContextVar[Mapping[str, bytes]] = contextvars.ContextVar("wordsplit_pinned_inputs", default={})


def max_file_bytes() -> int:
    """The size cap of one vocabulary file: ``WORDSPLIT_MAX_VOCAB_MB`` MiB, else 256 MiB.

    Raises:
        ValueError: the variable is set to something other than a positive whole number.
    """
    text = os.environ.get(MAX_FILE_MB_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_FILE_BYTES
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"{MAX_FILE_MB_ENV}={text!r}: expected a positive whole number of MiB, e.g. 1024")
    return int(text) << 20


def too_large_error(path, limit: int, what: str = "") -> VocabFormatError:
    """The error for a file (or part of one, ``what``) over the size cap ``limit``."""
    return VocabFormatError(
        f"{path}: {what or 'the file'} is larger than {limit >> 20} MiB, the size limit of a vocabulary file; "
        f"if it really is a vocabulary, set {MAX_FILE_MB_ENV} to a larger number of MiB"
    )


@contextlib.contextmanager
def pinned_inputs(files: Mapping[str | os.PathLike, bytes]) -> Iterator[None]:
    """While active, :func:`read_file` (and the GGUF loader) return these bytes for these paths
    instead of reading the disk again: what was hashed is what is parsed.

    >>> with pinned_inputs({"x.tiktoken": b"YQ== 0\\n"}):
    ...     read_file("x.tiktoken")
    b'YQ== 0\\n'
    """
    token = _PINNED.set({**_PINNED.get(), **{os.path.abspath(p): data for p, data in files.items()}})
    try:
        yield
    finally:
        _PINNED.reset(token)


def pinned(path: str | os.PathLike) -> bytes | None:
    """The bytes :func:`pinned_inputs` holds for ``path``, or None."""
    return _PINNED.get().get(os.path.abspath(path))


@contextlib.contextmanager
def open_input(path: str | os.PathLike) -> Iterator[tuple[BinaryIO, int | None]]:
    """``(file, size)`` of a vocabulary file opened for reading; ``size`` is None when the
    file is not a regular one (a FIFO or a socket: read it once, up to the cap).

    Raises:
        FileNotFoundError: no such file.
        VocabFormatError: a directory or a device (``/dev/zero`` never ends).
    """
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"vocabulary file not found: {path}") from None
    except IsADirectoryError:
        raise VocabFormatError(f"{path} is a directory, not a vocabulary file") from None
    with f:
        info = os.fstat(f.fileno())
        if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
            raise VocabFormatError(f"{path} is a device, not a vocabulary file")
        yield f, info.st_size if stat.S_ISREG(info.st_mode) else None


def read_raw(path: str | os.PathLike, *, limit: int | None = None) -> bytes:
    """The bytes of ``path`` as stored (not gunzipped), read once, at most ``limit`` of them
    (default :func:`max_file_bytes`).

    Raises:
        FileNotFoundError: no such file.
        VocabFormatError: a directory or a device, or more than ``limit`` bytes.
    """
    limit = max_file_bytes() if limit is None else limit
    with open_input(path) as (f, size):
        if size is not None:
            if size > limit:
                raise too_large_error(path, limit)
            data = f.read()  # one read; a file that grew since it was opened is caught below
        else:
            chunks, size = [], 0
            while chunk := f.read(min(_CHUNK, limit + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    break
            data = b"".join(chunks)
    if len(data) > limit:
        raise too_large_error(path, limit)
    return data


def gunzip(data: bytes, path: str | os.PathLike, *, limit: int | None = None) -> bytes:
    """``data`` decompressed, streamed, stopping with VocabFormatError past ``limit`` bytes.

    >>> gunzip(gzip.compress(b"YQ== 0"), "x.tiktoken.gz")
    b'YQ== 0'
    """
    limit = max_file_bytes() if limit is None else limit
    chunks, size = [], 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while chunk := stream.read(min(_CHUNK, limit + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise too_large_error(path, limit, "the file, decompressed,")
    except (OSError, EOFError, zlib.error) as exc:
        raise VocabFormatError(f"{path}: not a valid gzip file ({exc})") from None
    return b"".join(chunks)


def read_file(path: str | os.PathLike) -> bytes:
    """The bytes of ``path``, gunzipped when the name ends in ``.gz``; at most
    :func:`max_file_bytes` of them, else VocabFormatError naming the file.

    Inside :func:`pinned_inputs`, a pinned path is not read again.
    """
    data = pinned(path)
    if data is None:
        data = read_raw(path)
    return gunzip(data, path) if Path(path).suffix == ".gz" else data


def read_input(path: str | os.PathLike) -> bytes:
    """The bytes a loader parses from ``path``, read once: what ``load_vocab`` hashes and pins.

    That is the whole raw file, except for a plain ``.gguf``: only its header and metadata
    (:func:`wordsplit.formats.gguf.read_gguf_head`), since the tensors after them can be
    gigabytes and do not change the vocabulary.
    """
    if Path(path).name.endswith(".gguf"):
        from .gguf import read_gguf_head  # imported only when a GGUF is loaded

        return read_gguf_head(path)
    return read_raw(path)


def file_stem(path: str | os.PathLike) -> str:
    name = Path(path).name
    for suffix in (".gz", ".tiktoken", ".json", ".txt"):
        name = name.removesuffix(suffix)
    return name


def read_head(path: str | os.PathLike, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a vocabulary file, gunzipped when the name ends in ``.gz``
    (the pinned bytes inside :func:`pinned_inputs`).

    Only regular files are read: a FIFO is read once, by the loader, and an unreadable file
    gives ``b""`` here, so that the loader chosen without it reports the problem.

    >>> with pinned_inputs({"x.json.gz": gzip.compress(b'{"config": {}}')}):
    ...     read_head("x.json.gz", 10)
    b'{"config":'
    """
    gzipped = Path(path).suffix == ".gz"
    data = pinned(path)
    try:
        if data is not None:
            if not gzipped:
                return data[:size]
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
                return stream.read(size)
        with open_input(path) as (f, file_size):
            if file_size is None:
                return b""
            if not gzipped:
                return f.read(size)
            with gzip.GzipFile(fileobj=f) as stream:
                return stream.read(size)
    except (OSError, EOFError, zlib.error, VocabFormatError):
        return b""


def vocab_name(path: str | os.PathLike) -> str:
    """The name of a vocabulary loaded from ``path``: the file's stem, or its directory's name
    when the stem only names the format (``tokenizer``, ``vocab``, ``encoder``, ``tekken``).

    >>> vocab_name("models/Qwen3-8B/tokenizer.json.gz"), vocab_name("cl100k_base.tiktoken")
    ('Qwen3-8B', 'cl100k_base')
    """
    stem = file_stem(path)
    if stem in GENERIC_STEMS:
        return Path(path).absolute().parent.name or stem
    return stem
