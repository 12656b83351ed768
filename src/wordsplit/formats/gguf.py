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
  tokens that are always matched in text, UNUSED tokens and NORMAL tokens whose text is not
  byte-level (which BPE can never produce) only count towards ``n_vocab``; the
  split pattern comes from the pre-tokenizer *name* (``tokenizer.ggml.pre``) through
  :data:`LLAMA_CPP_PRE_PATTERNS`: every name llama.cpp knows for a byte-level BPE, with
  llama.cpp's own regexes, several in sequence where llama.cpp applies several (deepseek,
  falcon, starcoder, ...), and llama.cpp's ``"default"`` ones when the file names none. The
  chat template (``tokenizer.chat_template``) and the bos/eos ids come along.

What it does not do:

* read tensors, or any metadata beyond the tokenizer keys it needs;
* SentencePiece (``"llama"``), WordPiece (``"bert"``), Unigram (``"t5"``) or the other
  non-byte-level models, and the pre-tokenizers llama.cpp runs on raw UTF-8 (``"gemma4"``,
  ``"sarvam-moe"``, ...): they raise :class:`UnsupportedTokenizerError` naming the model;
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
from ..spanners.hf_split import split_program
from ..vocab import Vocab
from ._gguf_classes import P as _P_RANGES
from ._gguf_classes import S as _S_RANGES
from .bytelevel import token_bytes
from .files import max_file_bytes, open_input, pinned, read_file, too_large_error
from .merges import merges_are_rank_ordered, pair_ranked_merges

__all__ = [
    "LLAMA_CPP_PRE_PATTERNS", "LLAMA_CPP_PRE_REGEXES", "load_gguf", "read_gguf", "read_gguf_head", "read_gguf_metadata",
]

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
# `llm_tokenizer_bpe` constructor gives each type a list of regexes, and unicode.cpp's
# `unicode_regex_split` applies them in turn: each regex to every piece the previous ones made,
# keeping the text between its matches as pieces of their own. That is an HF `Split` with
# behavior "Isolated" per regex, so a list of several regexes becomes a split program
# (wordsplit.spanners.hf_split), run with HF's semantics; a single regex that matches any text
# completely stays a plain pattern, since a findall-style splitter then gives the same pieces
# (and a hand-written scanner may be proven for it).
#
# The regexes are written as llama.cpp writes them and run with Unicode 16.0 classes, as HF
# tokenizers (the oracle of llama.cpp's own test files) runs the originals. Where llama.cpp's
# engine departs from that, wordsplit does what the regex says, not what the engine does:
# llama.cpp runs a regex with \p{..} on a "collapsed" text (every non-ASCII code point replaced
# by one byte per category) and the others on std::wregex, which replaces non-ASCII whitespace
# by U+000B, so e.g. deepseek-llm's class "[...\u3000-。]" never sees U+3000 in llama.cpp.
# Three regexes are not regexes for llama.cpp but select hand-written splitters ("\p{Han}+" for
# kimi-k2, "\p{AFMoE_digits}" for afmoe, tiny_aya's digit regex): they are replaced by the
# regexes those splitters implement. superbpe's `\d` is written [0-9], what std::regex means.

# llama.cpp's unicode_cpt_is_han (kimi-k2): these blocks, not the Unicode Script=Han property.
_HAN_RANGES = (
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2CEB0, 0x2EBEF), (0x2F800, 0x2FA1F),
)


def _class_body(ranges) -> str:
    """Inclusive code point ranges as the inside of a regex character class."""
    return "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)


def _letters_but_han() -> tuple[tuple[int, int], ...]:
    """Unicode 16.0 \\p{L} minus :data:`_HAN_RANGES` (kimi-k2's letters)."""
    from .._unicode16 import L

    out = []
    for lo, hi in L:
        for han_lo, han_hi in _HAN_RANGES:
            if han_hi < lo or han_lo > hi:
                continue
            if han_lo > lo:
                out.append((lo, han_lo - 1))
            lo = han_hi + 1
            if lo > hi:
                break
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


# Class names the regex translator does not know, spelled out as explicit ranges.
_SPELLED_CLASSES = {
    r"\p{P}": _class_body(_P_RANGES),
    r"\p{S}": _class_body(_S_RANGES),
    r"\p{Han}": _class_body(_HAN_RANGES),
    r"\p{L_but_Han}": _class_body(_letters_but_han()),  # wordsplit's name, for kimi-k2 only
}


def _spelled(regex: str) -> str:
    r"""``regex`` with the classes of :data:`_SPELLED_CLASSES` written as ranges.

    >>> _spelled(r"[\p{Han}a]|\p{Han}")[:22]
    '[\\x{3400}-\\x{4DBF}\\x{4'
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            name = next((n for n in _SPELLED_CLASSES if regex.startswith(n, i)), None)
            if name is None:
                out.append(regex[i:i + 2])
                i += 2
                continue
            body = _SPELLED_CLASSES[name]
            out.append(body if in_class else f"[{body}]")
            i += len(name)
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            if regex.startswith("^", i + 1):
                out.append("^")
                i += 1
        elif c == "]" and in_class:
            in_class = False
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


# -- the regexes, as llama.cpp's llm_tokenizer_bpe writes them --------------------------------

_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
# GPT-2's regex as llama.cpp writes it, without the final `\s+`: llama.cpp runs it with its
# hand-written unicode_regex_split_custom_gpt2, which ends with `\s+` (unicode.cpp: "regex:
# \s+"); as a split step the two are the same, since the only text the shorter form leaves
# unmatched is a single whitespace character before a non-space, which `\s+` would match alone.
_GPT2_LLAMA_CPP = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"

# LLAMA_VOCAB_PRE_TYPE_GPT2 (and MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING): with the `\s+`
# written out this is GPT-2's original pattern, character for character.
_GPT2 = _GPT2_LLAMA_CPP + r"|\s+"
# LLAMA3, DBRX, SMAUG, CHATGLM4. llama.cpp spells (?i:'s|...) as explicit case classes, which
# differs from (?i:) on "'ſ" (U+017F folds to s): llama.cpp's form is kept.
_LLAMA3 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# QWEN2, STABLELM2, HUNYUAN, SOLAR_OPEN, GROK_2: llama3's with one digit per piece.
_QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN35 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# BAILINGMOE: llama.cpp's comment says it changed the original's possessive quantifiers to
# greedy ones; this is what llama.cpp runs.
_BAILINGMOE = (
    r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"
)
_SEED_CODER = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# UFAKZEKA: qwen2's without the contractions.
_UFAKZEKA = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_EXAONE_MOE = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
)
_JAIS2 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
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
# TEKKEN: Mistral's pattern from tokenizer.json, which llama.cpp keeps as a comment; the same
# CAVEAT as GPT4O about the lookahead approximation llama.cpp runs instead.
_TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# GRANITE_EMB_MULTI: llama.cpp's lookahead form is the only one (no original is recorded), and
# it means what it says under any Unicode-aware engine: a letter or mark other than a-z counts
# as "upper", one other than A-Z as "lower".
_GRANITE_EMB_MULTI = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+" + _CONTRACTIONS + "?"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# TINY_AYA (\p{N}{1,3}) and YOUTU (\p{N}): o200k's words with llama.cpp's contractions.
def _o200k_like(digits: str) -> str:
    return (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + _CONTRACTIONS + "?"
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + _CONTRACTIONS + "?"
        "|" + digits + r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
# llama.cpp's unicode_regex_split_custom_afmoe (used for afmoe's "\p{AFMoE_digits}" and for
# tiny_aya's "\d{1,3}(?=(?:\d{3})*\b)"): a run of numbers is cut into its first len % 3
# characters, then threes. At the start of a run the greedy {1,3} backs off until the rest of
# the run is a whole number of threes.
_DIGITS_BY_THREE_FROM_THE_RIGHT = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"
# llama.cpp's unicode_regex_split_custom_kimi_k2, which stands for Kimi K2's pattern
# "[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}...]+(?i:'s|...)?|...",
# written as the regex it implements: it does not tell upper from lower case and takes letters
# only (no marks), "Han" is its own list of blocks (_HAN_RANGES), and a contraction compares
# the lowercased letters. (On unassigned code points, which its tables give no class, the
# splitter makes one piece per character where this regex may make one of several.)
_KIMI_K2 = (
    r"\p{Han}+|[^\r\n\p{L}\p{N}]?\p{L_but_Han}+" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_CJK_LLM = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"  # deepseek-llm and deepseek-coder (U+D7FF is not a surrogate)
_ASCII_PUNCT_WORD = r"[!" '"' r"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"
# (llama.cpp writes CR and LF as the characters here, not as regex escapes.)
_DEEPSEEK3_WORDS = (
    _ASCII_PUNCT_WORD + "|[^\r\n" r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+" "[\r\n]*"
    r"|\s*" "[\r\n]+" r"|\s+(?!\S)|\s+"
)
_KANA_HAN = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
_PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

# Each pre-tokenizer type: its regexes, in order, and the `tokenizer.ggml.pre` names llama.cpp
# maps to it. One regex that matches any text is used as a plain pattern.
_PRE_TYPES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    ((_GPT2,), (
        "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4",  # GPT2
        "mpt", "olmo", "jais", "trillion", "granite-docling",
    )),
    ((_LLAMA3,), (
        "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano",  # LLAMA3
        "dbrx", "smaug-bpe", "chatglm-bpe", "glm4", "glm5",
    )),
    ((_QWEN2,), (
        "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez",  # QWEN2
        "stablelm2", "hunyuan", "solar-open", "grok-2",
    )),
    ((_QWEN35,), ("qwen35",)),
    ((_BAILINGMOE,), ("bailingmoe", "bailingmoe2", "llada-moe")),
    ((_SEED_CODER,), ("seed-coder",)),
    ((_UFAKZEKA,), ("ufakzeka",)),
    ((_EXAONE_MOE,), ("exaone-moe",)),
    ((_JAIS2,), ("jais-2",)),
    ((_GPT4O,), ("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")),
    ((_TEKKEN,), ("tekken",)),
    ((_GRANITE_EMB_MULTI,), ("granite-embed-multi-97m",)),
    # DEFAULT: also what llama.cpp uses for a GGUF without tokenizer.ggml.pre.
    ((r"[\p{P}\$\+<=>\^~\|]+", _GPT2_LLAMA_CPP, r"\p{N}+", "[0-9][0-9][0-9]"), ("default",)),
    (("[\r\n]",
      # (Written with escapes: it holds letters such as U+1F7D and U+212A that NFC would change.)
      "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
      "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f"
      "\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
      "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d"
      "\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
      "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
      "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
      "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
      "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
      "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+",
      "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+", r"\s+$", _CJK_LLM, r"\p{N}+"),
     ("deepseek-llm",)),
    (("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_LLM, r"\p{N}"), ("deepseek-coder",)),
    ((r"\p{N}{1,3}", _KANA_HAN, _DEEPSEEK3_WORDS), ("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4")),
    ((r"\p{N}{1,3}", _KANA_HAN,
      _ASCII_PUNCT_WORD + "|[^\r\n" r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+" "|[\r\n]" r"|\s+(?!\S)|\s+",
      r"\p{N}"), ("spark2_5",)),
    (("[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c\u3001-\u303f"
      "\ufe30-\ufe4f]+|[\u3105-\u312f]+|" + _KANA_HAN, _o200k_like(r"\p{N}")), ("youtu",)),
    ((r"[\p{P}\$\+<=>\^~\|`]+", _GPT2_LLAMA_CPP, "[0-9][0-9][0-9]"), ("falcon",)),
    ((r"\p{N}", _GPT2_LLAMA_CPP), (
        "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2",
    )),
    ((_PORO,), ("poro-chat", "bloom", "gpt3-finnish")),
    ((_PORO, r"\p{N}"), ("viking",)),
    (("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", r"\p{N}",
      r"[\p{P}!-/:-@\[-`{-~]", _GPT2_LLAMA_CPP), ("chameleon",)),
    ((_DIGITS_BY_THREE_FROM_THE_RIGHT, _o200k_like(r"\p{N}{1,3}")), ("tiny_aya", "cohere2moe")),
    ((_KIMI_K2,), ("kimi-k2",)),
    # SUPERBPE: std::regex's \d is [0-9]. The second regex only matches empty strings: it cuts
    # a run of digits into threes from the right.
    ((r"\p{N}+", "(?=([0-9]{3})+(?![0-9]))"), ("superbpe",)),
    ((_DIGITS_BY_THREE_FROM_THE_RIGHT,
      # (U+8C48, not U+F900: llama.cpp's source has that character there.)
      "[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf\u0e40-\u0e7f"
      "\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+",
      _DEEPSEEK3_WORDS), ("afmoe",)),
    (("[^\\n]+|[\\n]+", _QWEN2), ("laguna",)),
    ((r"\p{N}{1,3}", _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
      r"|\s+(?!\S)|\s+"), ("minicpm5",)),
]

# Single regexes that leave text unmatched: llama.cpp keeps that text as pieces, so they run as
# a one-step split program rather than as a findall-style pattern.
_LEAVES_GAPS = frozenset({_PORO})

# Pre-tokenizers llama.cpp runs on raw UTF-8 with no byte-level spelling (`byte_encode =
# false`), for SentencePiece-style vocabularies: not byte-level BPE.
_NOT_BYTE_LEVEL_PRE = frozenset({"gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"})


def _vocab_pattern(regexes: tuple[str, ...]) -> str:
    """The Vocab pattern that splits as llama.cpp's ``regexes`` do."""
    if len(regexes) == 1 and regexes[0] not in _LEAVES_GAPS:
        return _spelled(regexes[0])
    return split_program([{"pattern": _spelled(r), "behavior": "Isolated", "invert": False} for r in regexes])


#: ``tokenizer.ggml.pre`` name → llama.cpp's regexes for it, in the order it applies them.
LLAMA_CPP_PRE_REGEXES: dict[str, tuple[str, ...]] = {name: regexes for regexes, names in _PRE_TYPES for name in names}

#: ``tokenizer.ggml.pre`` name → the Vocab pattern that splits as llama.cpp does: the regex
#: itself when llama.cpp uses one that matches any text, else a split program
#: (:func:`~wordsplit.spanners.hf_split.split_program`) of one Isolated step per regex.
LLAMA_CPP_PRE_PATTERNS: dict[str, str] = {}
for _regexes, _names in _PRE_TYPES:
    _pattern = _vocab_pattern(_regexes)
    LLAMA_CPP_PRE_PATTERNS.update(dict.fromkeys(_names, _pattern))
del _regexes, _names, _pattern

# The names for which llama.cpp sets `ignore_merges = true`: a piece that is itself a token is
# that token, without running the merges (llm_tokenizer_bpe_session::tokenize). The LLAMA3
# names, glm4/glm5, minicpm5, youtu, tekken and granite-embed-multi-97m; not dbrx, smaug-bpe or
# chatglm-bpe, which share the llama3 regex.
_IGNORE_MERGES = frozenset(
    {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
     "glm4", "glm5", "minicpm5", "youtu", "tekken", "granite-embed-multi-97m"}
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
    "whitespace": "a whitespace-split vocabulary over raw UTF-8 (not byte-level)",
    "hybriddna": "HybriDNA's k-mer tokenizer",
    "test": "llama.cpp's test tokenizer",
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
    """The Vocab pattern for ``tokenizer.ggml.pre``; llama.cpp's ``"default"`` when it is missing."""
    if pre is None:
        return LLAMA_CPP_PRE_PATTERNS["default"]
    if pre in _NOT_BYTE_LEVEL_PRE:
        raise UnsupportedTokenizerError(
            f"{source}: llama.cpp's pre-tokenizer {pre!r} (tokenizer.ggml.pre) is for a BPE over raw UTF-8 "
            "(SentencePiece-style, not byte-level); wordsplit reads only byte-level BPE GGUF vocabularies"
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
    the file name without ``.gguf``. A file without ``tokenizer.ggml.pre`` gets llama.cpp's
    ``"default"`` pre-tokenizer, as llama.cpp gives it (with a warning that quality degrades).
    ``chat_template``, ``bos_token_id`` and ``eos_token_id`` are the file's, when it has them.

    Raises:
        VocabFormatError: a malformed file or tokenizer (see :func:`read_gguf_metadata`; also
            missing keys, mismatched lengths, an empty NORMAL token, a repeated token, a merge
            of tokens that are not byte-level NORMAL ones), naming ``source`` and the entry.
        UnsupportedTokenizerError: not byte-level BPE (``tokenizer.ggml.model`` is not
            ``"gpt2"``, or a pre-tokenizer for raw UTF-8), or a pre-tokenizer not in
            :data:`LLAMA_CPP_PRE_PATTERNS` (the message lists the known ones).
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
            if piece is None:
                # Not GPT-2's byte-to-unicode spelling (Command-R has 1,403 such, e.g. "™"): BPE
                # runs on byte-level text, so neither llama.cpp nor HF can ever produce it. An
                # id without bytes, like UNUSED; a merge that uses it is refused below.
                continue
            if not piece:
                raise VocabFormatError(f"{source}: NORMAL token {i} is empty")
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
                f"{source}: merge #{rank} {merge!r} uses {exc.args[0]!r}, which is not a byte-level NORMAL token"
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
        chat_template=_get(metadata, "tokenizer.chat_template", "a string", source, required=False),
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
