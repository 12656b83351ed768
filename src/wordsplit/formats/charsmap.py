"""SentencePiece's precompiled character maps: the format, read into their rules.

A map is ``<trie size: u32 LE><a Darts double-array trie: u32 LE units><outputs>``: the trie's
keys are the texts a rule replaces, each leaf's value the offset of its output in the outputs,
a NUL-terminated UTF-8 string (``normalizer.cc``'s ``DecodePrecompiledCharsMap``; HF's crate
``spm_precompiled``). :func:`read_charsmap` walks the whole trie once into a dict of rules, so a
malformed map (sizes that do not add up, an index or an output outside the map, a key or an
output that is not whole UTF-8 characters, links that loop) is a :class:`VocabFormatError` when
the vocabulary loads, never a crash later. A unit is decoded as Darts does: ``has_leaf`` is bit
8, ``value`` the low 31 bits, ``label`` bit 31 and the low byte, ``offset`` ``(unit >> 10) <<
((unit & 0x200) >> 6)``; the child of a node at ``i`` for byte ``c`` is at ``i ^ offset ^ c``
when that unit's label is ``c``. :mod:`wordsplit.normalizers.precompiled` runs the rules.

>>> read_charsmap(b"")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
wordsplit.errors.VocabFormatError: the character map: a precompiled character map starts with its trie's size ...
"""

from __future__ import annotations

import functools
import re
import struct

from ..errors import VocabFormatError

__all__ = ["CharsMap", "cached_charsmap", "read_charsmap"]

# sentencepiece's Normalizer keeps at most this many prefix matches (kMaxTrieResultsSize): a map
# where a text has more keys as prefixes than that is beyond what it reads.
MAX_PREFIX_KEYS = 32
# How many key prefixes a map may have per unit of its trie (nmt_nfkc has 6), and how long a
# key may be: past these the trie's links loop.
MAX_NODES_PER_UNIT = 64
MAX_KEY_BYTES = 1024


class CharsMap:
    """The rules of a character map: each key (a text) and its output, indexed for the
    lookups of :mod:`wordsplit.normalizers.precompiled`.

    Args:
        rules: key → output, both non-empty keys of whole characters.
    """

    def __init__(self, rules: dict[str, str]) -> None:
        self.rules = rules
        self._longest = max(map(len, rules), default=0)  # in characters
        firsts = "".join(sorted({key[0] for key in rules}))
        # Where a key may start: the text between such places stays as it is.
        self._starts = re.compile("[" + "".join(f"\\U{ord(c):08X}" for c in firsts) + "]") if firsts else None

    def __len__(self) -> int:
        return len(self.rules)

    @property
    def longest(self) -> int:
        """The longest key, in characters."""
        return self._longest

    @property
    def starts(self):
        """A compiled pattern of the characters a key starts with, or None for no rules."""
        return self._starts


def read_charsmap(data: bytes, source: str = "the character map") -> CharsMap:
    """The rules of a precompiled character map (see the module docstring).

    Raises:
        VocabFormatError: a malformed map.
    """
    def bad(why: str) -> VocabFormatError:
        return VocabFormatError(f"{source}: a malformed precompiled character map ({why})")

    if len(data) < 4:
        raise VocabFormatError(f"{source}: a precompiled character map starts with its trie's size (4 bytes); "
                               f"this one has {len(data)} bytes")
    trie_size = int.from_bytes(data[:4], "little")
    if trie_size < 4 or trie_size % 4 or 4 + trie_size > len(data):
        raise bad(f"a trie of {trie_size} bytes in a map of {len(data)}")
    units = struct.unpack(f"<{trie_size // 4}I", data[4:4 + trie_size])
    outputs = data[4 + trie_size:]
    # The units that are some node's child: label c in 1..255 (bit 31 clear) at i, child of the
    # node whose children start at i ^ c (so the walk below never indexes outside the trie).
    children: dict[int, list[tuple[int, int]]] = {}
    for i, unit in enumerate(units):
        label = unit & 0x800000FF
        if 0 < label < 256:
            children.setdefault(i ^ label, []).append((label, i))
    rules: dict[str, str] = {}
    stack = [(_offset(units[0]), b"", 0)]  # (where a node's children start, its key, keys above it)
    # The trie is a DAWG (darts-clone shares the nodes of common suffixes), so its keys' prefixes
    # outnumber its units (nmt_nfkc: 262,073 for 44,288 units); a few times more means loops.
    budget = MAX_NODES_PER_UNIT * len(units)
    while stack:
        base, key, depth = stack.pop()
        budget -= 1
        if budget < 0 or len(key) > MAX_KEY_BYTES:
            raise bad("its links loop")
        for label, i in children.get(base, ()):
            unit, below = units[i], key + bytes([label])
            child_base = i ^ _offset(unit)
            count = depth
            if unit >> 8 & 1:  # has_leaf: the value unit is at the child's base
                if child_base >= len(units):
                    raise bad(f"the value of key {below!r} is outside the trie")
                rules[_text(below, source, bad)] = _output(outputs, units[child_base] & 0x7FFFFFFF, bad)
                count += 1
                if count > MAX_PREFIX_KEYS:
                    raise bad(f"more than {MAX_PREFIX_KEYS} keys are prefixes of {below!r}")
            stack.append((child_base, below, count))
    return CharsMap(rules)


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & 0x200) >> 6)


def _text(key: bytes, source: str, bad) -> str:
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        raise bad(f"the key {key!r} is not whole UTF-8 characters") from None


def _output(outputs: bytes, start: int, bad) -> str:
    """The NUL-terminated output at ``start`` (the end of the map ends it too, as HF reads it)."""
    if start >= len(outputs):
        raise bad(f"an output at {start}, past the {len(outputs)} bytes of outputs")
    end = outputs.find(b"\0", start)
    try:
        return outputs[start:end if end >= 0 else len(outputs)].decode("utf-8")
    except UnicodeDecodeError:
        raise bad(f"the output at {start} is not UTF-8") from None


@functools.lru_cache(maxsize=8)
def cached_charsmap(data: bytes) -> CharsMap:
    """:func:`read_charsmap`, once per map: the loader that checks a map and the normalizer
    that runs it share one reading (a map's walk takes a fraction of a second).

    Raises:
        VocabFormatError: a malformed map.
    """
    return read_charsmap(data)
