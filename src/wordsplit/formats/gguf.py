"""Read the tokenizer of a GGUF file (llama.cpp's model format) into a :class:`Vocab`.

What it does:

* parses the GGUF v2/v3 header and key-value metadata with a small hand-written reader
  (:func:`read_gguf_metadata`). A file is never read whole: :func:`read_gguf_head` reads only
  the header and metadata, however large the tensors after them (a model file of many GB),
  and at most :func:`~wordsplit.formats.files.max_file_bytes` of them. The file is untrusted
  input: every count and length is checked against the bytes that remain *before* anything is
  allocated or looped over, so a truncated, corrupt or hostile file raises :class:`VocabFormatError` at once (naming the
  file, the key and the byte offset), never hangs, allocates gigabytes or crashes;
* turns a byte-level BPE vocabulary (``tokenizer.ggml.model == "gpt2"``) into a Vocab that
  tokenizes as llama.cpp does (:func:`read_gguf`, :func:`load_gguf`): NORMAL tokens are the
  BPE ranks, CONTROL (and UNKNOWN) tokens are special tokens, USER_DEFINED tokens are added
  tokens that are always matched in text, UNUSED tokens only count towards ``n_vocab``; the
  split pattern comes from the pre-tokenizer *name* (``tokenizer.ggml.pre``) through
  :data:`LLAMA_CPP_PRE_PATTERNS`, llama.cpp's own regexes.

What it does not do:

* read tensors, or any metadata beyond the tokenizer keys it needs;
* SentencePiece (``"llama"``), WordPiece (``"bert"``), Unigram (``"t5"``) or the other
  non-byte-level models: they raise :class:`UnsupportedTokenizerError`;
* pre-tokenizers that llama.cpp runs as several regexes in sequence (deepseek, falcon,
  starcoder, the ``"default"`` one used when ``tokenizer.ggml.pre`` is missing, ...) or with
  constructs beyond ``\\p{..}`` classes, alternation, quantifiers, ``(?i:..)`` and ``(?!\\S)``;
* normalization: GGUF records no normalizer and llama.cpp applies none, so the Vocab's is
  ``"none"`` even where the original HF tokenizer applies NFC (Qwen);
* llama.cpp's load-time heuristics that do not change ``encode`` without special-token
  parsing: the re-typing of "control-looking" NORMAL tokens such as ``</s>`` (it matters only
  with ``parse_special=true``), per-token lstrip/rstrip attributes, add_bos/add_eos/add_sep.

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
from pathlib import Path

from ..errors import UnsupportedTokenizerError, VocabFormatError, closest
from ..vocab import Vocab
from .bytelevel import token_bytes
from .files import max_file_bytes, open_input, pinned, read_file, too_large_error
from .merges import merges_are_rank_ordered, pair_ranked_merges

__all__ = ["LLAMA_CPP_PRE_PATTERNS", "load_gguf", "read_gguf", "read_gguf_head", "read_gguf_metadata"]

# ---------------------------------------------------------------------------------------------
# The GGUF container (ggml/src/gguf.cpp, docs: github.com/ggml-org/ggml/blob/master/docs/gguf.md).
# Little-endian throughout: magic "GGUF", version u32, tensor_count u64, kv_count u64, then
# kv_count × (key string, value type u32, value). A string is a u64 byte length + UTF-8 bytes;
# an array is element type u32 + count u64 + the elements (which may themselves be arrays).

_MAGIC = b"GGUF"
_VERSIONS = (2, 3)  # v1 used 32-bit counts and is obsolete (llama.cpp rejects it too)

_TYPE_BOOL, _TYPE_STRING, _TYPE_ARRAY = 7, 8, 9
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


def read_gguf_metadata(data: bytes, *, source: str = "<bytes>") -> dict[str, object]:
    """The key-value metadata of a GGUF v2/v3 file, in file order; the tensors are not read.

    Values are Python ``int``, ``float``, ``bool``, ``str`` or (nested) ``list``.

    Raises:
        VocabFormatError: not a GGUF file, an unsupported version, truncated or corrupt data,
            invalid UTF-8, an unknown value type, an empty or repeated key; the message names
            ``source``, the key and the byte offset.
    """
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


# ---------------------------------------------------------------------------------------------
# llama.cpp's pre-tokenizers. The names and regexes are those of llama.cpp's src/llama-vocab.cpp
# at commit 0c1e5709 (vendored by llama-cpp-python 0.3.36, which also made the GGUF test
# files): `llama_vocab::impl::load` maps `tokenizer.ggml.pre` to a LLAMA_VOCAB_PRE_TYPE_*, the
# `llm_tokenizer_bpe` constructor gives each type its regexes. Only the types that llama.cpp
# splits with ONE regex made of \p{..} classes, character classes, alternation, quantifiers,
# (?i:..) and (?!\S) are here; a split piece that no alternative matches stays a piece in
# llama.cpp (unicode_regex_split_stl keeps the gaps), and every pattern here matches any text
# completely, so a findall-style splitter gives the same pieces.

# LLAMA_VOCAB_PRE_TYPE_GPT2 (and MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING): llama.cpp writes
# "'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)" and runs it with
# its hand-written unicode_regex_split_custom_gpt2, which ends with the `\s+` alternative of
# GPT-2's original pattern (unicode.cpp: "regex: \s+"). Written out here, so this is GPT-2's
# original pattern, character for character.
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
# LLAMA3, DBRX, SMAUG, CHATGLM4. llama.cpp spells (?i:'s|...) as explicit case classes, which
# differs from (?i:) on "'ſ" (U+017F folds to s): llama.cpp's form is kept.
_LLAMA3 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# QWEN2, STABLELM2, HUNYUAN, SOLAR_OPEN, GROK_2: llama3's with one digit per piece.
_QWEN2 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN35 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# BAILINGMOE: llama.cpp's comment says it changed the original's possessive quantifiers to
# greedy ones; this is what llama.cpp runs.
_BAILINGMOE = (
    r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"
)
_SEED_CODER = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}"
    r"| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# UFAKZEKA: qwen2's without the contractions.
_UFAKZEKA = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_EXAONE_MOE = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
)
_JAIS2 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)"
    r"|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"
)
# GPT4O, MINIMAX_M2: o200k's original pattern, which llama.cpp keeps as a comment. CAVEAT:
# llama.cpp cannot run \p{Lu}/\p{Ll}; it runs an approximation with lookaheads in which a
# letter is "upper" unless it is a-z and "lower" unless it is A-Z, so every non-ASCII letter
# counts as both. On text with a non-ASCII case change (e.g. "aÉ") llama.cpp's pieces differ
# from this pattern's (which are tiktoken's and HF's).
_GPT4O = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

_PRE_NAMES: dict[str, tuple[str, ...]] = {
    _GPT2: (
        # GPT2
        "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4",
        "mpt", "olmo", "jais", "trillion", "granite-docling",
    ),
    _LLAMA3: (
        # LLAMA3
        "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano",
        "dbrx", "smaug-bpe", "chatglm-bpe", "glm4", "glm5",
    ),
    _QWEN2: (
        # QWEN2
        "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez",
        "stablelm2", "hunyuan", "solar-open", "grok-2",
    ),
    _QWEN35: ("qwen35",),
    _BAILINGMOE: ("bailingmoe", "bailingmoe2", "llada-moe"),
    _SEED_CODER: ("seed-coder",),
    _UFAKZEKA: ("ufakzeka",),
    _EXAONE_MOE: ("exaone-moe",),
    _JAIS2: ("jais-2",),
    _GPT4O: ("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"),
}

#: ``tokenizer.ggml.pre`` name → the split pattern llama.cpp uses for it.
LLAMA_CPP_PRE_PATTERNS: dict[str, str] = {name: pattern for pattern, names in _PRE_NAMES.items() for name in names}

# The names for which llama.cpp sets `ignore_merges = true`: a piece that is itself a token is
# that token, without running the merges (llm_tokenizer_bpe_session::tokenize). The LLAMA3
# names and glm4/glm5; not dbrx, smaug-bpe or chatglm-bpe, which share the llama3 regex.
_IGNORE_MERGES = frozenset(
    {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
     "glm4", "glm5"}
)

# ---------------------------------------------------------------------------------------------
# GGUF tokenizer metadata → Vocab

# llama.h `enum llama_token_type`, the values of tokenizer.ggml.token_type.
_UNDEFINED, _NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = range(7)
_TOKEN_TYPE_NAMES = ("UNDEFINED", "NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "UNUSED", "BYTE")

# What llama.cpp calls the tokenizer models it knows that are not byte-level BPE.
_OTHER_MODELS = {
    "llama": "SentencePiece",
    "bert": "WordPiece",
    "t5": "Unigram",
    "rwkv": "RWKV's trie tokenizer",
    "plamo2": "PLaMo-2's tokenizer",
    "gemma4": "BPE over raw UTF-8 (not byte-level)",
    "no_vocab": "no vocabulary",
    "none": "no vocabulary",
}

# Python types the metadata reader produces, by the description used in errors. GGUF arrays
# hold one element type, so the first element speaks for all.
_KINDS = {
    "a string": lambda v: isinstance(v, str),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "an array of strings": lambda v: isinstance(v, list) and (not v or isinstance(v[0], str)),
    "an array of integers": lambda v: (
        isinstance(v, list) and (not v or (isinstance(v[0], int) and not isinstance(v[0], bool)))
    ),
}


def _get(metadata: dict[str, object], key: str, kind: str, source: str, *, required: bool = True):
    """``metadata[key]`` checked to be ``kind``; ``None`` when absent and not ``required``."""
    if key not in metadata:
        if required:
            raise VocabFormatError(f"{source}: the GGUF metadata has no {key!r}, which a tokenizer needs")
        return None
    value = metadata[key]
    if not _KINDS[kind](value):
        raise VocabFormatError(f"{source}: {key!r} should be {kind}, not {type(value).__name__} {value!r:.60}")
    return value


def _pre_pattern(pre: str | None, source: str) -> str:
    if pre is None:
        raise UnsupportedTokenizerError(
            f"{source}: the GGUF has no tokenizer.ggml.pre; llama.cpp then falls back to its 'default' "
            "pre-tokenizer (several regexes in sequence), which wordsplit does not implement"
        )
    if pre not in LLAMA_CPP_PRE_PATTERNS:
        known = sorted(LLAMA_CPP_PRE_PATTERNS)
        raise UnsupportedTokenizerError(
            f"{source}: unsupported llama.cpp pre-tokenizer {pre!r} (tokenizer.ggml.pre); "
            f"known: {', '.join(known)}.{closest(pre, known)}"
        )
    return LLAMA_CPP_PRE_PATTERNS[pre]


def _check_unique(tokens: list[str], source: str) -> None:
    """llama.cpp refuses a vocabulary with a repeated token text ("duplicate token in vocabulary")."""
    if len(set(tokens)) == len(tokens):
        return
    first: dict[str, int] = {}
    for i, text in enumerate(tokens):
        # Empty texts are left to the per-type checks (llama.cpp renames them "[EMPTY_i]").
        if text and first.setdefault(text, i) != i:
            raise VocabFormatError(f"{source}: token {i} {text!r} repeats token {first[text]}")


def read_gguf(data: bytes, *, source: str = "<bytes>") -> Vocab:
    """The byte-level BPE Vocab of a GGUF file's tokenizer, as llama.cpp tokenizes with it.

    ``n_vocab`` is the number of tokens in the file, UNUSED padding included. The merges become
    rank-based when they are in merged-id order (every GGUF converted from an HF byte-level
    tokenizer we know), else a pair-ranked table. The name is ``general.name`` if present, else
    the file name without ``.gguf``.

    Raises:
        VocabFormatError: a malformed file or tokenizer (see :func:`read_gguf_metadata`; also
            missing keys, mismatched lengths, a NORMAL token that is not byte-level text, a
            repeated token, a merge of unknown tokens), naming ``source`` and the entry.
        UnsupportedTokenizerError: not byte-level BPE (``tokenizer.ggml.model`` is not
            ``"gpt2"``), or a pre-tokenizer not in :data:`LLAMA_CPP_PRE_PATTERNS`.
    """
    metadata = read_gguf_metadata(data, source=source)
    model = _get(metadata, "tokenizer.ggml.model", "a string", source)
    if model != "gpt2":
        kind = f" ({_OTHER_MODELS[model]})" if model in _OTHER_MODELS else ""
        raise UnsupportedTokenizerError(
            f"{source}: tokenizer.ggml.model is {model!r}{kind}; wordsplit reads only byte-level BPE "
            "GGUF vocabularies (model 'gpt2')"
        )
    pre = _get(metadata, "tokenizer.ggml.pre", "a string", source, required=False)
    pattern = _pre_pattern(pre, source)

    tokens = _get(metadata, "tokenizer.ggml.tokens", "an array of strings", source)
    types = _get(metadata, "tokenizer.ggml.token_type", "an array of integers", source, required=False)
    if types is None:
        types = [_NORMAL] * len(tokens)  # llama.cpp's default when the file has no types
    elif len(types) != len(tokens):
        raise VocabFormatError(
            f"{source}: tokenizer.ggml.token_type has {len(types)} entries for {len(tokens)} tokens"
        )
    _check_unique(tokens, source)

    ranks: dict[bytes, int] = {}
    special_tokens: dict[str, int] = {}
    added_tokens: dict[str, int] = {}
    normal_bytes: dict[str, bytes] = {}  # byte-level text → bytes, to resolve the merges
    for i, (text, token_type) in enumerate(zip(tokens, types)):
        if token_type == _NORMAL:
            piece = token_bytes(text)
            if not piece:
                raise VocabFormatError(
                    f"{source}: NORMAL token {i} {text!r} is not byte-level BPE text "
                    "(GPT-2's byte-to-unicode spelling)"
                )
            ranks[piece] = i
            normal_bytes[text] = piece
        elif token_type == _UNUSED:
            continue  # padding such as "[PAD151669]": an id, but nothing encodes to it
        elif token_type in (_CONTROL, _UNKNOWN, _USER_DEFINED):
            # Their texts are literal, not byte-level spelled (llama.cpp's token_to_piece copies them).
            if not text:
                raise VocabFormatError(f"{source}: token {i} (type {token_type}) is empty")
            if token_type == _USER_DEFINED:
                added_tokens[text] = i  # matched in text even without parse_special, like HF's added tokens
            else:
                # llama.cpp matches UNKNOWN like CONTROL: only with parse_special (tokenizer_st_partition).
                special_tokens[text] = i
        elif token_type in (_UNDEFINED, _BYTE):
            raise UnsupportedTokenizerError(
                f"{source}: token {i} {text!r} has type {token_type} ({_TOKEN_TYPE_NAMES[token_type]}), "
                "which byte-level BPE vocabularies do not use"
            )
        else:
            raise VocabFormatError(f"{source}: token {i} {text!r} has the invalid token type {token_type}")

    merge_texts = _get(metadata, "tokenizer.ggml.merges", "an array of strings", source)
    merges: list[tuple[bytes, bytes]] = []
    for rank, merge in enumerate(merge_texts):
        # llama.cpp splits at `word.find(' ', 1)`. A byte-level token has no literal space (it
        # spells one "Ġ"), so a valid merge has exactly this one.
        cut = merge.find(" ", 1)
        if cut < 0:
            raise VocabFormatError(f"{source}: merge #{rank} {merge!r} is not two tokens separated by a space")
        try:
            merges.append((normal_bytes[merge[:cut]], normal_bytes[merge[cut + 1:]]))
        except KeyError as exc:
            raise VocabFormatError(
                f"{source}: merge #{rank} {merge!r} uses {exc.args[0]!r}, which is not a NORMAL token"
            ) from None
    if merges_are_rank_ordered(ranks, merges):
        pair_ranks, whole_piece_lookup = None, True
    else:
        pair_ranks, whole_piece_lookup = pair_ranked_merges(ranks, merges, source), pre in _IGNORE_MERGES

    name = _get(metadata, "general.name", "a string", source, required=False)
    return Vocab(
        name=name or Path(source).name.removesuffix(".gz").removesuffix(".gguf"),
        ranks=ranks,
        pattern=pattern,
        special_tokens=special_tokens,
        added_tokens=added_tokens,
        normalizer="none",  # GGUF records none and llama.cpp applies none
        merges=pair_ranks,
        n_vocab=len(tokens),
        eos_token_id=_get(metadata, "tokenizer.ggml.eos_token_id", "an integer", source, required=False),
        bos_token_id=_get(metadata, "tokenizer.ggml.bos_token_id", "an integer", source, required=False),
        whole_piece_lookup=whole_piece_lookup,
        source=source,
    )


def load_gguf(path: str | os.PathLike) -> Vocab:
    """:func:`read_gguf` on the file at ``path``: its header and metadata only
    (:func:`read_gguf_head`), or the whole file gunzipped when the name ends in ``.gz``."""
    if Path(path).suffix == ".gz":
        data = read_file(path)
    else:
        data = pinned(path)  # load_vocab read and hashed these bytes already
        if data is None:
            data = read_gguf_head(path)
    return read_gguf(data, source=os.fspath(path))
