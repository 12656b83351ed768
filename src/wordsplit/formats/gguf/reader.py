"""The GGUF container (llama.cpp's model format): its header and key-value metadata, read
from untrusted bytes with every count and length checked against what remains before anything
is allocated or looped over. The tensors are never read.

>>> import struct
>>> def gguf_string(s): return struct.pack("<Q", len(s)) + s.encode()
>>> data = (b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
...         + gguf_string("general.name") + struct.pack("<I", 8) + gguf_string("tiny"))
>>> read_gguf_metadata(data)
{'general.name': 'tiny'}
"""

from __future__ import annotations

import os
import struct

from ...errors import VocabFormatError
from .. import native as native_readers
from ..files import max_file_bytes, open_input, too_large_error

__all__ = ["is_packed_strings", "packed_metadata", "read_gguf_head", "read_gguf_metadata"]

# The GGUF container (ggml/src/gguf.cpp, docs: github.com/ggml-org/ggml/blob/master/docs/gguf.md).
# Little-endian throughout: magic "GGUF", version u32, tensor_count u64, kv_count u64, then
# kv_count × (key string, value type u32, value). A string is a u64 byte length + UTF-8 bytes;
# an array is element type u32 + count u64 + the elements (which may themselves be arrays).

_MAGIC = b"GGUF"
_VERSIONS = (2, 3)  # v1 used 32-bit counts and is obsolete (llama.cpp rejects it too)

_TYPE_BOOL, _TYPE_STRING, _TYPE_ARRAY = 7, 8, 9
_BYTE_TYPES = (0, 1)  # u8 and i8: an array of either reads as bytes (two's complement for i8)
# struct format of each fixed-size value type (gguf.h `enum gguf_type`); bool is one byte.
_FIXED_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
_TYPE_NAMES = {
    0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool", 8: "string",
    9: "array", 10: "u64", 11: "i64", 12: "f64",
}
# The fewest bytes one value of each type can take: what a declared count is checked against.
_MIN_SIZES = {t: struct.calcsize("<" + f) for t, f in _FIXED_FORMATS.items()} | {
    _TYPE_STRING: 8,  # the u64 length of an empty string
    _TYPE_ARRAY: 12,  # element type + count of an empty array
}
# A key-value pair is at least an empty key (8), a value type (4) and a one-byte value.
_MIN_KV_SIZE = 8 + 4 + 1
# GGUF allows arrays of arrays (llama.cpp does not); a bound keeps hostile nesting from
# exhausting Python's recursion limit. No real file nests at all.
_MAX_ARRAY_DEPTH = 8

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


class _Reader:
    """A cursor over GGUF bytes that checks every length against what remains."""

    __slots__ = ("data", "pos", "source")

    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.pos = 0
        self.source = source

    def error(self, message: str, offset: int | None = None) -> VocabFormatError:
        return VocabFormatError(f"{self.source}: {message} (at byte {self.pos if offset is None else offset})")

    def take(self, size: int, what: str) -> int:
        """Step over ``size`` bytes and return where they start; VocabFormatError if the data ends first."""
        start = self.pos
        remaining = len(self.data) - start
        if size > remaining:
            raise self.error(f"truncated: {what} needs {size} bytes but only {remaining} remain")
        self.pos = start + size
        return start

    def u32(self, what: str) -> int:
        return _U32.unpack_from(self.data, self.take(4, what))[0]

    def u64(self, what: str) -> int:
        return _U64.unpack_from(self.data, self.take(8, what))[0]

    def string(self, what: str) -> str:
        size = self.u64(f"the length of {what}")
        start = self.take(size, what)
        try:
            return self.data[start:self.pos].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(f"{what} is not valid UTF-8 ({exc.reason})", start + exc.start) from None

    def bool_error(self, what: str, byte: int, offset: int) -> VocabFormatError:
        # The GGUF spec: 0 is false, 1 is true, anything else is invalid and must be rejected.
        return self.error(f"{what} is a bool with the invalid value {byte}; GGUF bools are 0 or 1", offset)

    def value(self, value_type: int, what: str) -> object:
        """One value of ``value_type``; ``what`` names it in errors."""
        fmt = _FIXED_FORMATS.get(value_type)
        if fmt is not None:
            start = self.take(_MIN_SIZES[value_type], what)
            value = struct.unpack_from("<" + fmt, self.data, start)[0]
            if value_type == _TYPE_BOOL:
                if value > 1:
                    raise self.bool_error(what, value, start)
                return value == 1
            return value
        if value_type == _TYPE_STRING:
            return self.string(what)
        if value_type == _TYPE_ARRAY:
            return self.array(what, depth=0)
        raise self.error(f"{what} has an unknown value type {value_type}", self.pos - 4)

    def array(self, what: str, depth: int) -> list:
        if depth >= _MAX_ARRAY_DEPTH:
            raise self.error(f"{what} nests arrays deeper than {_MAX_ARRAY_DEPTH} levels")
        type_at = self.pos
        element_type = self.u32(f"the element type of {what}")
        count = self.u64(f"the length of {what}")
        if element_type not in _MIN_SIZES:
            raise self.error(f"{what} is an array of the unknown value type {element_type}", type_at)
        remaining = len(self.data) - self.pos
        min_size = _MIN_SIZES[element_type]
        # Checked before allocating or looping: an array of 2**60 strings in a 100-byte file
        # raises here, at once.
        if count > remaining // min_size:
            raise self.error(
                f"{what} declares {count} elements of type {_TYPE_NAMES[element_type]} (at least {min_size} "
                f"bytes each) but only {remaining} bytes remain"
            )
        if element_type in _BYTE_TYPES:
            # An array of bytes (a SentencePiece character map) is bytes, its type kept.
            start = self.take(count, what)
            return bytes(self.data[start:start + count])
        fmt = _FIXED_FORMATS.get(element_type)
        if fmt is not None:
            # One C-level unpack for the whole array (token_type has 151,936 entries).
            start = self.take(count * min_size, what)
            values = list(struct.unpack_from(f"<{count}{fmt}", self.data, start))
            if element_type == _TYPE_BOOL:
                for i, byte in enumerate(values):
                    if byte > 1:
                        raise self.bool_error(f"{what}[{i}]", byte, start + i)
                values = [byte == 1 for byte in values]
            return values
        if element_type == _TYPE_STRING:
            return self.strings(count, what)
        return [self.array(f"{what}[{i}]", depth + 1) for i in range(count)]

    def strings(self, count: int, what: str) -> list[str]:
        """``count`` strings: :meth:`string` unrolled, since token and merge lists hold ~150k each.

        A precompiled ``Struct.unpack_from`` measured faster here than ``int.from_bytes`` on a
        slice or memoryview slicing; the loop is bounded by ``count``, already checked.
        """
        data, pos, end = self.data, self.pos, len(self.data)
        unpack_u64 = _U64.unpack_from
        out = [""] * count
        for i in range(count):
            start = pos + 8
            if start > end:
                self.pos = pos
                raise self.error(f"truncated: the length of {what}[{i}] needs 8 bytes but only {end - pos} remain")
            size = unpack_u64(data, pos)[0]
            pos = start + size
            if pos > end:
                self.pos = start
                raise self.error(f"truncated: {what}[{i}] declares {size} bytes but only {end - start} remain")
            try:
                out[i] = data[start:pos].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self.error(f"{what}[{i}] is not valid UTF-8 ({exc.reason})", start + exc.start) from None
        self.pos = pos
        return out


# ---------------------------------------------------------------------------------------------
# Reading only the header and metadata of a file: a GGUF vocabulary is usually a model file of
# several GB whose tensors follow the metadata. The walk below reads the file forward as far as
# the metadata goes (it decodes nothing); the parser above then reads the bytes it returns.

_READ_AHEAD = 1 << 20


class _Incomplete(Exception):
    """The walk cannot find the end of the metadata; the parser, given what was read, says why."""


class _HeadScan:
    """A cursor over the start of a GGUF file that reads the file only as far as it is moved."""

    __slots__ = ("f", "buf", "pos", "size", "limit", "source")

    def __init__(self, f, size: int | None, limit: int, source: str) -> None:
        self.f, self.size, self.limit, self.source = f, size, limit, source
        self.buf = bytearray()
        self.pos = 0

    def fill(self, end: int) -> None:
        """Make the buffer hold bytes ``[0, end)``; reads ahead up to 1 MiB per call."""
        if self.size is not None and end > self.size:
            raise _Incomplete  # truncated: the parser reports which value and where
        if end > self.limit:
            raise too_large_error(self.source, self.limit, "the GGUF metadata")
        while len(self.buf) < end:
            chunk = self.f.read(max(end - len(self.buf), _READ_AHEAD))
            if not chunk:
                raise _Incomplete
            self.buf += chunk

    def skip(self, size: int) -> int:
        end = self.pos + size
        if end > len(self.buf):
            self.fill(end)
        start, self.pos = self.pos, end
        return start

    def u32(self) -> int:
        return _U32.unpack_from(self.buf, self.skip(4))[0]

    def u64(self) -> int:
        return _U64.unpack_from(self.buf, self.skip(8))[0]

    def count(self, count: int, element_type: int) -> None:
        """Refuse a declared count that the file (or the cap) cannot hold, before looping."""
        need = count * _MIN_SIZES[element_type]
        if self.size is not None and need > self.size - self.pos:
            raise _Incomplete
        if need > self.limit:
            raise too_large_error(self.source, self.limit, "the GGUF metadata")

    def value(self, value_type: int, depth: int) -> None:
        if value_type in _FIXED_FORMATS:
            self.skip(_MIN_SIZES[value_type])
        elif value_type == _TYPE_STRING:
            self.skip(self.u64())
        elif value_type == _TYPE_ARRAY and depth < _MAX_ARRAY_DEPTH:
            element_type, count = self.u32(), self.u64()
            if element_type not in _MIN_SIZES:
                raise _Incomplete
            self.count(count, element_type)
            if element_type in _FIXED_FORMATS:
                self.skip(count * _MIN_SIZES[element_type])
            elif element_type == _TYPE_STRING:
                self.strings(count)
            else:
                for _ in range(count):
                    self.value(_TYPE_ARRAY, depth + 1)
        else:
            raise _Incomplete

    def strings(self, count: int) -> None:
        """Step over ``count`` strings (the token and merge lists hold ~150k each)."""
        buf, pos, unpack_u64 = self.buf, self.pos, _U64.unpack_from
        for _ in range(count):
            if pos + 8 > len(buf):
                self.fill(pos + 8)  # extends ``buf`` in place
            pos += 8 + unpack_u64(buf, pos)[0]
            if pos > len(buf):
                self.fill(pos)
        self.pos = pos

    def walk(self) -> None:
        """Move to the end of the metadata (:func:`read_gguf_metadata`'s layout)."""
        if bytes(self.buf[self.skip(4):self.pos]) != _MAGIC or self.u32() not in _VERSIONS:
            raise _Incomplete
        self.u64()  # the tensor count
        kv_count = self.u64()
        for _ in range(kv_count):
            key_size = self.u64()
            if key_size == 0:
                raise _Incomplete  # an empty key is an error; this also bounds the loop
            self.skip(key_size)
            self.value(self.u32(), 0)


def read_gguf_head(path: str | os.PathLike, *, limit: int | None = None) -> bytes:
    """The header and key-value metadata of the GGUF file at ``path``; the tensors are not read.

    The file is read forward once, only as far as the metadata goes, and at most ``limit``
    bytes (default :func:`~wordsplit.formats.files.max_file_bytes`): a multi-GB model file
    costs a few MB of memory. A file whose metadata cannot be walked (not a GGUF, truncated,
    corrupt) gives what was read, for :func:`read_gguf_metadata` to say what is wrong.

    Raises:
        FileNotFoundError: no such file.
        VocabFormatError: a directory or a device, or metadata larger than ``limit``.
    """
    limit = max_file_bytes() if limit is None else limit
    if native_readers.available():
        return _native_head(path, limit)
    with open_input(path) as (f, size):
        scan = _HeadScan(f, size, limit, os.fspath(path))
        try:
            scan.walk()
            end = scan.pos
        except _Incomplete:
            if size is not None and size <= limit:
                scan.buf += f.read()  # the whole (small) file: the parser's message gives exact offsets
            end = len(scan.buf)
        del scan.buf[end:]
        return bytes(scan.buf)


def _native_head(path, limit: int) -> bytes:
    """:func:`read_gguf_head` with the native core's walk (the same bytes: what
    :class:`_HeadScan` reads, read as it reads them: the walk runs again from the start after
    each read, a millisecond or two per pass even over 777,000 strings)."""
    source = os.fspath(path)
    with open_input(path) as (f, size):
        buf = bytearray()
        while True:
            status, n = native_readers.gguf_scan_head(buf)
            if status == 0:
                del buf[n:]
                return bytes(buf)
            if status == 1 and (size is None or n <= size):
                if n > limit:
                    raise too_large_error(source, limit, "the GGUF metadata")
                chunk = f.read(max(n - len(buf), _READ_AHEAD))
                if chunk:
                    buf += chunk
                    continue
            # Not walkable (not a GGUF, truncated, corrupt): what was read, or the whole
            # (small) file, for the parser to say what is wrong, with exact offsets.
            if size is not None and size <= limit:
                buf += f.read()
            return bytes(buf)


def is_packed_strings(value: object) -> bool:
    """Whether ``value`` is the native core's ``PackedStrings`` (an array of strings)."""
    return native_readers.is_packed_strings(value)


def read_gguf_metadata(data: bytes, *, source: str = "<bytes>") -> dict[str, object]:
    """The key-value metadata of a GGUF v2/v3 file, in file order; the tensors are not read.

    Values are Python ``int``, ``float``, ``bool``, ``str``, ``bytes`` (an array of u8 or i8) or
    (nested) ``list``.

    Raises:
        VocabFormatError: not a GGUF file, an unsupported version, truncated or corrupt data,
            invalid UTF-8, an unknown value type, an empty or repeated key; the message names
            ``source``, the key and the byte offset.
    """
    return packed_metadata(data, source, ())


def packed_metadata(data: bytes, source: str, packed: tuple[str, ...]) -> dict[str, object]:
    """:func:`read_gguf_metadata`; with the native core, an array of strings under a key in
    ``packed`` is a ``PackedStrings`` sequence (the native loaders read it without a str per
    item)."""
    metadata = native_readers.gguf_metadata(bytes(data), packed)
    if metadata is not None:
        return metadata
    # (the reference: without the native core, and for every error's message)
    reader = _Reader(bytes(data), source)
    magic = reader.data[:4]
    if magic != _MAGIC:
        raise reader.error(f"not a GGUF file: it starts with {magic!r}, not {_MAGIC!r}")
    reader.pos = 4
    version = reader.u32("the GGUF version")
    if version not in _VERSIONS:
        raise reader.error(f"GGUF version {version} is not supported; wordsplit reads versions 2 and 3", 4)
    reader.u64("the tensor count")  # only the metadata is read
    kv_count = reader.u64("the key-value count")
    remaining = len(reader.data) - reader.pos
    if kv_count > remaining // _MIN_KV_SIZE:
        raise reader.error(f"the header declares {kv_count} key-value pairs but only {remaining} bytes remain")
    metadata: dict[str, object] = {}
    for index in range(kv_count):
        key_at = reader.pos
        key = reader.string(f"key #{index}")
        if not key:
            raise reader.error(f"key #{index} is empty", key_at)
        if key in metadata:
            raise reader.error(f"duplicate key {key!r}", key_at)
        value_type = reader.u32(f"the value type of {key!r}")
        metadata[key] = reader.value(value_type, repr(key))
    return metadata


