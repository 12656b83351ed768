"""Mutations of seed files, as data: a mutation is a list of ``(kind, position, value)``
triples, so hypothesis can draw and shrink them and a finding can be replayed exactly.

Byte-level kinds (flip a bit, set/insert a byte, delete/duplicate a chunk, write an
interesting integer, truncate, splice) reach the parsers' length and offset checks; for seeds
that are JSON, one more kind replaces a node of the parsed document with an interesting value
(a huge or negative id, a wrong type, deep nesting), which reaches the checks behind the JSON
parser that byte flips rarely do.

>>> mutate(b"abcdef", [(6, 3, 0)])            # truncate at 3
b'abc'
>>> mutate(b'{"a": [1, 2]}', [(8, 1, 1)])     # node 1 (the list's first item) becomes -1
b'{"a": [-1, 2]}'
"""

from __future__ import annotations

import json
import struct

KINDS = 9
INTERESTING_INTS = [0, 1, -1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0xFFFF, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
                    2**63 - 1, 2**64 - 1]
INTERESTING_JSON = [0, -1, 2**31, 2**32, 10**9, 2**64, 1e308, "", "Ġ", "\u0000", None, True, [], {},
                    [[[[[[[[[[]]]]]]]]]], {"type": "Split"}, "a b c", ["a", "b"]]


def _nodes(doc, out: list) -> list:
    """Every (container, key) pair of a JSON document, in document order."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.append((doc, key))
            _nodes(value, out)
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out.append((doc, index))
            _nodes(value, out)
    return out


def _json_mutation(data: bytes, position: int, value: int) -> bytes:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return data
    nodes = _nodes(doc, [])
    if not nodes:
        return data
    container, key = nodes[position % len(nodes)]
    container[key] = INTERESTING_JSON[value % len(INTERESTING_JSON)]
    return json.dumps(doc, ensure_ascii=False).encode()


def mutate(data: bytes, mutations, splice: bytes = b"") -> bytes:
    """Apply ``mutations`` to ``data`` in order (``splice`` is the other seed of kind 7)."""
    buf = bytearray(data)
    for kind, position, value in mutations:
        kind %= KINDS
        if kind == 8:
            buf = bytearray(_json_mutation(bytes(buf), position, value))
            continue
        if not buf and kind not in (2, 7):
            continue
        pos = position % (len(buf) + 1)
        at = min(pos, len(buf) - 1)
        if kind == 0:
            buf[at] ^= 1 << (value % 8)
        elif kind == 1:
            buf[at] = value % 256
        elif kind == 2:
            buf[pos:pos] = bytes([value % 256])
        elif kind == 3:
            del buf[pos:pos + 1 + value % 64]
        elif kind == 4:
            buf[pos:pos] = buf[pos:pos + 1 + value % 64]
        elif kind == 5:
            number = INTERESTING_INTS[value % len(INTERESTING_INTS)]
            width = 8 if value & 0x100 else 4
            packed = struct.pack("<Q", number % 2**64)[:width]
            buf[pos:pos + width] = packed
        elif kind == 6:
            del buf[pos:]
        elif kind == 7 and splice:
            start = value % len(splice)
            buf[pos:pos] = splice[start:start + 1 + (value >> 8) % 256]
    return bytes(buf)
