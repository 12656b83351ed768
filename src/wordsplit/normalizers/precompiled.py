r"""SentencePiece's precompiled character maps (``nmt_nfkc``, ``nfkc``, ``nfkc_cf``, a model's own
rules), read once and run as ``sentencepiece`` and as HF ``tokenizers`` run them.

A map is ``<trie size: u32 LE><a Darts double-array trie: u32 LE units><outputs>``: the trie's
keys are the texts a rule replaces, each leaf's value the offset of its output in the outputs,
a NUL-terminated UTF-8 string (``normalizer.cc``'s ``DecodePrecompiledCharsMap``; HF's crate
``spm_precompiled``). :func:`read_charsmap` walks the whole trie once into a dict of rules, so a
malformed map (sizes that do not add up, an index or an output outside the map, a key or an
output that is not whole UTF-8 characters, links that loop) is a :class:`VocabFormatError` when the
vocabulary loads, never a crash later. A unit is decoded as Darts does: ``has_leaf`` is bit 8,
``value`` the low 31 bits, ``label`` bit 31 and the low byte, ``offset`` ``(unit >> 10) <<
((unit & 0x200) >> 6)``; the child of a node at ``i`` for byte ``c`` is at ``i ^ offset ^ c``
when that unit's label is ``c``.

The two tools run a map differently:

* ``sentencepiece`` (:meth:`CharsMap.spm_chunks`): from each place, the *longest* key there is
  replaced by its output; where none is, the character stays (``NormalizePrefix``);
* HF's ``Precompiled`` (:meth:`CharsMap.hf_changes`): the text is cut into extended grapheme
  clusters (the crate ``unicode-segmentation``; here the ``regex`` module's ``\X``); a cluster
  of fewer than 6 UTF-8 bytes that starts with a key is replaced as a whole by the output of the
  *shortest* such key (HF's ``transform`` takes the first result of the prefix search, which may
  leave the rest of the cluster out); any other cluster is looked up a character at a time, each
  character that is a key replaced by its output. Each replacement is recorded as HF's
  ``replace`` records it (the new characters, the last ones inserted or the last one removing
  what is left over), which the offsets read (:func:`~wordsplit.offsets.apply_changes`).

>>> cmap = CharsMap({"\uff21": "A", "e\u0301": "\u00e9", "\u2460": "1"})
>>> cmap.hf_normalize("\uff21e\u0301\u2460"), cmap.spm_normalize("\uff21xe\u0301")
('Aé1', 'Axé')
"""

from __future__ import annotations

import base64
import functools
import re
import struct
from typing import Iterator, Optional

from ..errors import VocabFormatError

__all__ = ["CharsMap", "charsmap_of", "precompiled_normalizer", "read_charsmap"]

# sentencepiece's Normalizer keeps at most this many prefix matches (kMaxTrieResultsSize): a map
# where a text has more keys as prefixes than that is beyond what it reads.
MAX_PREFIX_KEYS = 32
# How many key prefixes a map may have per unit of its trie (nmt_nfkc has 6), and how long a
# key may be: past these the trie's links loop.
MAX_NODES_PER_UNIT = 64
MAX_KEY_BYTES = 1024
# HF looks a whole grapheme cluster up only when it has fewer UTF-8 bytes than this.
HF_GRAPHEME_BYTES = 6


class CharsMap:
    """The rules of a character map: each key (a text) and its output.

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

    def spm_chunks(self, text: str) -> Iterator[tuple[int, int, Optional[str]]]:
        """``sentencepiece``'s cut of ``text``: ``(start, end, output)`` for each place a key
        matched (its longest key), ``(start, end, None)`` for each stretch that stays."""
        done = 0
        if self._starts is None:
            if text:
                yield 0, len(text), None
            return
        rules = self.rules
        for match in self._starts.finditer(text):
            at = match.start()
            if at < done:
                continue
            for end in range(min(len(text), at + self._longest), at, -1):
                out = rules.get(text[at:end])
                if out is not None:
                    if at > done:
                        yield done, at, None
                    yield at, end, out
                    done = end
                    break
        if done < len(text):
            yield done, len(text), None

    def spm_normalize(self, text: str) -> str:
        """The text the rules alone make of ``text`` in ``sentencepiece``."""
        return "".join(text[a:b] if out is None else out for a, b, out in self.spm_chunks(text))

    def hf_changes(self, text: str) -> Optional[list[tuple[str, int]]]:
        """HF's ``Precompiled`` of ``text`` as ``(character, change)`` pairs, HF's transformations
        (see the module docstring), or None when no rule applies."""
        if self._starts is None or self._starts.search(text) is None:
            return None
        changes: list[tuple[str, int]] = []
        rules = self.rules
        modified = False
        for match in _GRAPHEMES().finditer(text):
            cluster = match.group()
            if len(cluster) > 1 and len(cluster.encode("utf-8", "surrogatepass")) < HF_GRAPHEME_BYTES:
                out = next((rules[cluster[:n]] for n in range(1, len(cluster) + 1) if cluster[:n] in rules), None)
                if out is not None:
                    _replace(changes, len(cluster), out)
                    modified = True
                    continue
            for char in cluster:
                out = rules.get(char)
                if out is None:
                    changes.append((char, 0))
                else:
                    _replace(changes, 1, out)
                    modified = True
        return changes if modified else None

    def hf_normalize(self, text: str) -> str:
        """HF's ``Precompiled`` of ``text``."""
        changes = self.hf_changes(text)
        return text if changes is None else "".join(char for char, _ in changes)


@functools.cache
def _GRAPHEMES():  # noqa: N802  (a compiled pattern, made on first use)
    import regex

    return regex.compile(r"\X", regex.DOTALL)


def _replace(changes: list[tuple[str, int]], old_length: int, new: str) -> None:
    """HF's ``replace`` (``normalizers/precompiled.rs``): ``new`` replaces ``old_length``
    characters; with more characters, the last extra ones are insertions (+1); with fewer, the
    last change so far (an earlier character's, when ``new`` is empty) removes the rest."""
    changes.extend((char, 0) for char in new)
    diff = len(new) - old_length
    if diff > 0:
        for i in range(len(changes) - diff, len(changes)):
            changes[i] = (changes[i][0], 1)
    elif diff < 0 and changes:
        char, change = changes[-1]
        changes[-1] = (char, change + diff)


def read_charsmap(data: bytes, source: str = "the character map") -> CharsMap:
    """The rules of a precompiled character map (see the module docstring).

    Raises:
        VocabFormatError: a malformed map.

    >>> read_charsmap(b"")
    Traceback (most recent call last):
    ...
    wordsplit.errors.VocabFormatError: the character map: a precompiled character map starts with its trie's size (4 bytes); this one has 0 bytes
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


@functools.lru_cache(maxsize=16)
def charsmap_of(charsmap: str) -> CharsMap:
    """The rules of a map given in base64 (a stage's ``charsmap``), read once per map.

    Raises:
        VocabFormatError: a malformed map.
    """
    return read_charsmap(base64.b64decode(charsmap))


def precompiled_normalizer(charsmap: str):
    """The function that runs HF's ``Precompiled`` with the map ``charsmap`` (base64; empty:
    the identity, as HF's empty map)."""
    if not charsmap:
        return lambda text: text
    return charsmap_of(charsmap).hf_normalize
