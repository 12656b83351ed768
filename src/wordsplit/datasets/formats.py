"""The output formats of :func:`~wordsplit.datasets.encode_dataset`, byte-exact to each trainer's reader.

One writer per format; each writes one shard: the token ids of its documents, in order, framed
as the format expects (bos before / eos after each document), into temporary files beside the
final names, renamed into place by :meth:`ShardWriter.publish` (never half-written).

=========  ====================================  ==========================================
format     files of shard ``NAME``                layout
=========  ====================================  ==========================================
megatron   ``NAME.bin``, ``NAME.idx``            Megatron-LM's IndexedDataset (megatron/core/
                                                 datasets/indexed_dataset.py): ``.bin`` the ids;
                                                 ``.idx`` = ``b"MMIDIDX\\x00\\x00"``, version 1
                                                 (``<Q``), dtype code (``<B``: 8 uint16, 4
                                                 int32), sequence count and document count
                                                 (``<Q``, documents + 1), int32 sequence
                                                 lengths, int64 byte pointers, int64 document
                                                 indices (``[0, 1, ...]``). One sequence per
                                                 document; an empty document has none (and no
                                                 eos), as Megatron's tools/preprocess_data.py writes.
                                                 uint16 when ``n_vocab < 65500`` (Megatron's
                                                 ``DType.optimal_dtype``), else int32.
nanogpt    ``NAME.bin``                          a flat array of ids, uint16 when ``n_vocab <=
                                                 65536``, else uint32 (nanoGPT's ``np.memmap``).
llmc       ``NAME.bin``                          karpathy/llm.c (dev/data/data_common.py): 256
                                                 int32 header ``[magic, version, tokens, 0...]``
                                                 then the ids: 20240520 v1 uint16 (``n_vocab <=
                                                 65536``), else 20240801 v7 uint32; the
                                                 delimiter token (bos, else eos) before every
                                                 document, always.
datatrove  ``NAME.ds``, ``.ds.index``,           huggingface/datatrove's TokenizedFile: ``.ds``
           ``.ds.metadata``                      the ids (uint16, or uint32 when ``n_vocab >
                                                 65536``); ``.ds.index`` the uint64 end of each
                                                 document; ``.ds.metadata`` the text
                                                 ``"VOCAB|TOKEN_SIZE\\nTOKENS\\nHUMAN"``.
npy        ``NAME.npy``, ``NAME.idx.npy``        ``wordsplit encode-file``'s: the ids as .npy
                                                 (uint16 when ``n_vocab <= 65536``, else
                                                 uint32), the uint64 start of each document and
                                                 the total as .npy.
=========  ====================================  ==========================================

Every integer is little-endian. It does not: read inputs, encode, or decide shards.

>>> FORMATS["megatron"].dtype_of(50257), FORMATS["megatron"].dtype_of(151669), FORMATS["llmc"].dtype_of(151669)
('uint16', 'int32', 'uint32')
>>> humanize_metric(1_234_567, "T")
'1.23 MT'
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
import sys
from array import array
from itertools import accumulate
from typing import Dict, List, Optional, Tuple

from ..errors import OptionValueError, advised

MEGATRON_HEADER = b"MMIDIDX\x00\x00"
MEGATRON_VERSION = 1
# megatron/core/datasets/indexed_dataset.py: class DType(Enum) codes.
MEGATRON_DTYPE_CODES = {"uint16": 8, "int32": 4}
# DType.optimal_dtype: uint16 when the cardinality (vocab size) is below 65500, else int32.
MEGATRON_UINT16_BELOW = 65500
# llm.c dev/data/data_common.py HEADERS_INFO: (magic, version) per token dtype.
LLMC_HEADERS = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
LLMC_HEADER_INTS = 256
LLMC_MAX_TOKENS = 2**31 - 1  # the header's token count is an int32
NPY_MAGIC = b"\x93NUMPY\x01\x00"
NPY_HEADER_BYTES = 128
# array typecodes, itemsizes and NumPy descriptors of the on-disk dtypes.
DTYPES = {"uint16": ("H", 2, "<u2"), "uint32": ("I", 4, "<u4"), "int32": ("i", 4, "<i4"), "uint64": ("Q", 8, "<u8")}


def humanize_metric(value: int, unit: str = "", precision: int = 3) -> str:
    """A count with an SI prefix, as ``humanize.metric`` writes it (datatrove's .ds.metadata).

    >>> [humanize_metric(n, "T") for n in (0, 999, 1500, 123_000_000)]
    ['0.00 T', '999 T', '1.50 kT', '123 MT']
    """
    exponent = int(math.floor(math.log10(abs(value)))) if value != 0 else 0
    scaled = value / 10 ** (exponent // 3 * 3)
    prefix = "kMGTPEZYRQ"[exponent // 3 - 1] if exponent >= 3 else ""
    text = format(scaled, f".{max(0, precision - exponent % 3 - 1)}f")
    return f"{text}{' ' if unit or prefix else ''}{prefix}{unit}"


def le_bytes(values: array) -> bytes:
    """An array's items as little-endian bytes."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def narrow_ids(ids: memoryview, dtype: str) -> bytes:
    """uint32 ids (native order) as little-endian ``dtype`` bytes; every id fits (the dtype was
    chosen from ``n_vocab``), and uint32 and int32 agree on every id below 2³¹."""
    raw = ids.tobytes()
    if sys.byteorder == "big":
        swapped = array("I", raw)
        swapped.byteswap()
        raw = swapped.tobytes()
    if DTYPES[dtype][1] == 4:
        return raw
    narrow = bytearray(len(raw) // 2)  # the two low bytes of each little-endian uint32
    narrow[0::2] = raw[0::4]
    narrow[1::2] = raw[1::4]
    return bytes(narrow)


def frame_documents(ids: bytes, ends: List[int], width: int, bos_id: Optional[int], eos_id: Optional[int],
                    empty_is_nothing: bool) -> Tuple[bytes, List[int]]:
    """Documents as a writer stores them: ``ids`` holds their ids (little-endian, ``width``
    bytes each) and document ``i`` is ``ids[ends[i - 1]:ends[i]]`` in items (``ends[-1]`` for
    i = 0 is 0); returns ``(data, lengths)``: the ids with ``bos_id`` before and ``eos_id``
    after each document (neither around a document without ids when ``empty_is_nothing``), and
    each document's count of them. ``Pipeline.encode_arrow_flat`` frames the same way, natively.

    >>> data, lengths = frame_documents(bytes([1, 0, 2, 0, 3, 0]), [2, 2, 3], 2, None, 9, True)
    >>> list(memoryview(data).cast("H")), lengths
    ([1, 2, 9, 3, 9], [3, 0, 2])
    """
    starts = [0, *ends[:-1]]
    extra = (bos_id is not None) + (eos_id is not None)
    if not extra:
        return ids, [end - start for start, end in zip(starts, ends)]
    dtype = "uint16" if width == 2 else "uint32"
    bos = b"" if bos_id is None else narrow_ids(memoryview(array("I", [bos_id])), dtype)
    eos = b"" if eos_id is None else narrow_ids(memoryview(array("I", [eos_id])), dtype)
    if empty_is_nothing:
        lengths = [end - start + extra if end != start else 0 for start, end in zip(starts, ends)]
    else:
        lengths = [end - start + extra for start, end in zip(starts, ends)]
    chunks = []
    for start, end, n in zip(starts, ends, lengths):
        if n:
            chunks += (bos, ids[start * width:end * width], eos)
    return b"".join(chunks), lengths


class _TempFile:
    """A file written under a temporary name beside ``path``, renamed into place by publish()."""

    def __init__(self, path: str, header: bytes = b"") -> None:
        self.path = path
        self.tmp_path = f"{path}.tmp-{os.getpid()}"
        self.file = open(self.tmp_path, "wb")
        self.header_bytes = len(header)
        self.file.write(header)
        # A file without a header is hashed as it is written (no second read); one whose header
        # is rewritten at the end is hashed from disk once finished.
        self.digest = None if header else hashlib.sha256()
        self.size = len(header)

    def write(self, data: bytes) -> None:
        self.file.write(data)
        if self.digest is not None:
            self.digest.update(data)
        self.size += len(data)

    def rewrite_header(self, header: bytes) -> None:
        if len(header) != self.header_bytes:
            raise ValueError("a rewritten header must keep its length")
        self.file.seek(0)
        self.file.write(header)
        self.file.seek(0, os.SEEK_END)

    def sha256(self) -> str:
        """The sha256 of the file's bytes (call once finished)."""
        if self.digest is not None:
            return self.digest.hexdigest()
        digest = hashlib.sha256()
        with open(self.tmp_path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def finish(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()

    def publish(self) -> None:
        os.replace(self.tmp_path, self.path)

    def discard(self) -> None:
        self.file.close()
        try:
            os.unlink(self.tmp_path)
        except FileNotFoundError:
            pass


class ShardWriter:
    """Writes one shard of one format. Subclasses say the files and the layout.

    Args:
        base: the shard's path without suffix (``out/00000-train``).
        n_vocab: the vocabulary size (decides the dtype).
        bos_id, eos_id: the ids put before / after each document, or None.
        vocab_name: the vocabulary's name (datatrove's metadata records it).
    """

    name = ""
    suffixes: tuple = ()
    #: A document without ids takes no tokens at all (no bos/eos either).
    empty_is_nothing = False

    def __init__(self, base: str, n_vocab: int, bos_id: Optional[int], eos_id: Optional[int],
                 vocab_name: str) -> None:
        self.base = base
        self.dtype = self.dtype_of(n_vocab)
        self.itemsize = DTYPES[self.dtype][1]
        self.bos = b"" if bos_id is None else narrow_ids(memoryview(array("I", [bos_id])), self.dtype)
        self.eos = b"" if eos_id is None else narrow_ids(memoryview(array("I", [eos_id])), self.dtype)
        self.vocab_name = vocab_name
        self.documents = 0
        self.tokens = 0
        self.files: List[_TempFile] = []
        try:
            self.open()
        except BaseException:
            self.discard()
            raise

    @classmethod
    def dtype_of(cls, n_vocab: int) -> str:
        return "uint16" if n_vocab <= 1 << 16 else "uint32"

    def framed(self, n: int) -> int:
        """How many tokens a document of ``n`` ids takes in this format (bos and eos included)."""
        if n == 0 and self.empty_is_nothing:
            return 0
        return n + (len(self.bos) + len(self.eos)) // self.itemsize

    def _open(self, suffix: str, header: bytes = b"") -> _TempFile:
        f = _TempFile(self.base + suffix, header)
        self.files.append(f)
        return f

    def open(self) -> None:
        raise NotImplementedError

    def add(self, data: bytes, lengths: List[int]) -> None:
        """Append framed documents (see :meth:`frame`): ``data`` holds ``sum(lengths)`` items."""
        self.write_documents(data, lengths)
        self.documents += len(lengths)
        self.tokens += sum(lengths)

    def write_documents(self, data: bytes, lengths: List[int]) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Complete the files (headers, indices) under their temporary names."""
        for f in self.files:
            f.finish()

    def publish(self) -> None:
        """Rename every file into place, the data last, so a data file always has its index."""
        for f in self.files[1:] + self.files[:1]:
            f.publish()

    def discard(self) -> None:
        for f in self.files:
            f.discard()


class MegatronWriter(ShardWriter):
    name = "megatron"
    suffixes = (".bin", ".idx")
    # Lengths read back per pass over the side file while the index is written.
    CHUNK = 1 << 16

    @classmethod
    def dtype_of(cls, n_vocab: int) -> str:
        return "uint16" if n_vocab < MEGATRON_UINT16_BELOW else "int32"

    # preprocess_data.py: a document with no ids gets no sequence and no end-of-document.
    empty_is_nothing = True

    def open(self) -> None:
        self.bin = self._open(".bin")
        # Each document's length (0: no sequence) goes to a side file, not a list: memory stays
        # flat however many documents the shard holds. It is read back by finish(), never published.
        self.side = _TempFile(self.base + ".lengths")
        self.sequences = 0

    def write_documents(self, data: bytes, lengths: List[int]) -> None:
        self.bin.write(data)
        self.side.write(le_bytes(array("i", lengths)))
        self.sequences += len(lengths) - lengths.count(0)

    def _length_chunks(self):
        with open(self.side.tmp_path, "rb") as f:
            while True:
                raw = f.read(4 * self.CHUNK)
                if not raw:
                    return
                chunk = array("i")
                chunk.frombytes(raw)
                if sys.byteorder == "big":
                    chunk.byteswap()
                yield chunk

    def finish(self) -> None:
        self.side.finish()
        index = self._open(".idx")
        index.write(MEGATRON_HEADER + struct.pack("<QBQQ", MEGATRON_VERSION, MEGATRON_DTYPE_CODES[self.dtype],
                                                  self.sequences, self.documents + 1))
        # Three passes over the lengths: the int32 sequence lengths, their int64 byte pointers,
        # then the int64 document indices (document i is sequences [idx[i], idx[i + 1])).
        for chunk in self._length_chunks():
            index.write(le_bytes(array("i", [n for n in chunk if n])))
        pointer = 0
        for chunk in self._length_chunks():
            # each sequence starts where the previous ones end: a running sum of their bytes
            sizes = [n * self.itemsize for n in chunk if n]
            pointers = array("q", accumulate(sizes[:-1], initial=pointer))
            pointer += sum(sizes)
            index.write(le_bytes(pointers if sizes else array("q")))
        index.write(le_bytes(array("q", [0])))
        sequences = 0
        for chunk in self._length_chunks():
            documents = array("q", accumulate((n != 0 for n in chunk), initial=sequences))
            sequences = documents[-1]
            index.write(le_bytes(documents[1:]))
        self.side.discard()
        super().finish()

    def discard(self) -> None:
        if hasattr(self, "side"):
            self.side.discard()
        super().discard()


class NanoGPTWriter(ShardWriter):
    name = "nanogpt"
    suffixes = (".bin",)

    def open(self) -> None:
        self.bin = self._open(".bin")

    def write_documents(self, data: bytes, lengths: List[int]) -> None:
        self.bin.write(data)


class LlmcWriter(ShardWriter):
    name = "llmc"
    suffixes = (".bin",)

    def open(self) -> None:
        self.bin = self._open(".bin", self._header(0))

    def _header(self, tokens: int) -> bytes:
        magic, version = LLMC_HEADERS[self.dtype]
        return struct.pack(f"<{LLMC_HEADER_INTS}i", magic, version, tokens, *[0] * (LLMC_HEADER_INTS - 3))

    def write_documents(self, data: bytes, lengths: List[int]) -> None:
        if self.tokens + sum(lengths) > LLMC_MAX_TOKENS:
            raise advised(OptionValueError,
                          f"{self.bin.path}: llm.c's header counts at most {LLMC_MAX_TOKENS:,} tokens per file",
                          python="pass shard_tokens to split the output", cli="--shard-tokens splits the output")
        self.bin.write(data)

    def finish(self) -> None:
        self.bin.rewrite_header(self._header(self.tokens))
        super().finish()


class DatatroveWriter(ShardWriter):
    name = "datatrove"
    suffixes = (".ds", ".ds.index", ".ds.metadata")

    def open(self) -> None:
        self.ds = self._open(".ds")
        self.index = self._open(".ds.index")

    def write_documents(self, data: bytes, lengths: List[int]) -> None:
        self.ds.write(data)
        self.index.write(document_ends(self.tokens, lengths))

    def finish(self) -> None:
        metadata = self._open(".ds.metadata")
        # TokenizedFile.write_final_metadata: name|token_size, the count, humanize.metric(count, "T")
        # datatrove's merger splits the first line at "|": keep the name free of it.
        name = self.vocab_name.replace("|", "_")
        metadata.write(f"{name}|{self.itemsize}\n{self.tokens}\n{humanize_metric(self.tokens, 'T')}"
                       .encode("utf-8"))
        super().finish()


def document_ends(start: int, lengths: List[int]) -> bytes:
    """The uint64 end offsets (little-endian) of documents of ``lengths`` tokens after ``start``.

    >>> list(array("Q", document_ends(10, [2, 3])))
    [12, 15]
    """
    ends = array("Q")
    for n in lengths:
        start += n
        ends.append(start)
    return le_bytes(ends)


def npy_header(descr: str, length: int) -> bytes:
    """A NumPy 1.0 header for a 1-D array of ``length`` items, NPY_HEADER_BYTES long (64-byte aligned data)."""
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({length},), }}"
    text = text.ljust(NPY_HEADER_BYTES - len(NPY_MAGIC) - 2 - 1) + "\n"
    return NPY_MAGIC + struct.pack("<H", len(text)) + text.encode("latin-1")


class NpyWriter(ShardWriter):
    name = "npy"
    suffixes = (".npy", ".idx.npy")

    def open(self) -> None:
        self.ids = self._open(".npy", npy_header(DTYPES[self.dtype][2], 0))
        self.index = self._open(".idx.npy", npy_header("<u8", 0))
        self.index.write(le_bytes(array("Q", [0])))

    def write_documents(self, data: bytes, lengths: List[int]) -> None:
        self.ids.write(data)
        self.index.write(document_ends(self.tokens, lengths))

    def finish(self) -> None:
        self.ids.rewrite_header(npy_header(DTYPES[self.dtype][2], self.tokens))
        self.index.rewrite_header(npy_header("<u8", self.documents + 1))
        super().finish()


FORMATS: Dict[str, type] = {w.name: w for w in (MegatronWriter, NanoGPTWriter, LlmcWriter, DatatroveWriter, NpyWriter)}
#: Formats whose layout puts a delimiter token before every document (``bos`` is always on).
BOS_ALWAYS = frozenset({"llmc"})


def format_writer(name: str) -> type:
    """The writer class of a format name.

    >>> format_writer("nanogpt").suffixes
    ('.bin',)
    """
    try:
        return FORMATS[name]
    except KeyError:
        from ..errors import closest

        raise OptionValueError(f"unknown output format {name!r}; known: {', '.join(FORMATS)}."
                             f"{closest(name, FORMATS)}") from None
