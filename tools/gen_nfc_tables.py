#!/usr/bin/env python3
"""Generate ``src/wordsplit/_nfc_data.py``: the Unicode data behind HF tokenizers' NFC, NFD,
NFKC, NFKD and StripAccents.

Provenance
----------
HuggingFace ``tokenizers`` normalizes with the Rust crate ``unicode-normalization-alignments``
0.1.12, whose tables were generated from the **Unicode 9.0.0** character database (its
``src/tables.rs`` says ``UNICODE_VERSION = (9, 0, 0)``). Python's ``unicodedata`` is newer, so to
reproduce HF byte for byte we copy the crate's own tables instead of using ``unicodedata``.

``src/tables.rs`` stores each table as a minimal perfect hash: a ``*_SALT`` array plus a ``*_KV``
array holding every (key, value) entry exactly once (see the crate's ``src/perfect_hash.rs`` and
``src/lookups.rs``). We read the tables the normalizers need:

* ``CANONICAL_COMBINING_CLASS_KV``: ``u32`` entries packed as ``code_point << 8 | ccc``;
* ``CANONICAL_DECOMPOSED_KV``: ``(code_point, &[char])``, *fully* (recursively) decomposed;
* ``COMPOSITION_TABLE_KV``: ``(first << 16 | second, composite)`` for BMP pairs, plus the
  ``match`` arms of ``composition_table_astral`` for pairs outside the BMP;
* ``COMPATIBILITY_DECOMPOSED_KV``: ``(code_point, &[char])``, fully decomposed, for the
  characters whose compatibility decomposition differs from their canonical one (the crate's
  ``decompose_compatible`` tries this table first, then the canonical one);
* ``COMBINING_MARK_KV``: the code points of General_Category=Mark (``is_combining_mark``, which
  HF's StripAccents removes).

Hangul syllables are in none of them: the crate decomposes and composes them algorithmically
(``src/normalize.rs``), and so does ``wordsplit.normalizers``.

Every KV entry is checked to be reachable through the crate's hash lookup (re-implemented here),
so the generated dicts answer exactly what the crate's lookups answer.

Re-running
----------
::

    cargo fetch --manifest-path crates/wordsplit/Cargo.toml   # puts the crate under ~/.cargo/registry/src
    python tools/gen_nfc_tables.py [path/to/unicode-normalization-alignments-0.1.12/src/tables.rs]
    python tools/gen_nfc_tables.py --check   # exit 1 if src/wordsplit/_nfc_data.py is stale

Without an argument the script looks for the crate (version 0.1.12) under
``~/.cargo/registry/src``. The output is deterministic (sorted keys), so re-running on the same
crate leaves ``src/wordsplit/_nfc_data.py`` unchanged.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
from pathlib import Path
from typing import Dict, FrozenSet, Tuple

CRATE = "unicode-normalization-alignments"
CRATE_VERSION = "0.1.12"
UNICODE = "9.0.0"  # the crate's UNICODE_VERSION; checked when reading tables.rs
REPO_ROOT = Path(__file__).resolve().parent.parent
OUTPUT = REPO_ROOT / "src" / "wordsplit" / "_nfc_data.py"

# Combining classes, full canonical decompositions, canonical compositions, full compatibility
# decompositions, combining marks.
Tables = Tuple[
    Dict[int, int], Dict[int, Tuple[int, ...]], Dict[Tuple[int, int], int], Dict[int, Tuple[int, ...]], FrozenSet[int]
]

_HEX = r"0x[0-9A-Fa-f]+"
_CHAR = r"'\\u\{([0-9A-Fa-f]+)\}'"


def default_tables_path() -> Path:
    pattern = os.path.expanduser(f"~/.cargo/registry/src/*/{CRATE}-{CRATE_VERSION}/src/tables.rs")
    matches = sorted(glob.glob(pattern))
    if not matches:
        sys.exit(f"error: {pattern} not found; run `cargo fetch` in crates/wordsplit/ or pass the path")
    return Path(matches[0])


def array_body(source: str, name: str) -> str:
    """The text between ``const NAME: ... = &[`` and the closing ``];``."""
    match = re.search(rf"const {name}: [^=]+= &\[(.*?)\n\];", source, re.S)
    if match is None:
        sys.exit(f"error: array {name} not found in tables.rs")
    return match.group(1)


def mph_index(key: int, salt: int, n: int) -> int:
    """``my_hash`` from the crate's src/perfect_hash.rs, with its u32 wrapping arithmetic."""
    y = ((key + salt) * 2654435769) & 0xFFFFFFFF
    y ^= (key * 0x31415926) & 0xFFFFFFFF
    return (y * n) >> 32


def check_reachable(source: str, name: str, keys: list[int]) -> None:
    """Fail unless ``mph_lookup`` (src/perfect_hash.rs) finds every key at its own KV slot."""
    salts = [int(s, 16) for s in re.findall(_HEX, array_body(source, f"{name}_SALT"))]
    if len(salts) != len(keys):
        sys.exit(f"error: {name}: {len(salts)} salts for {len(keys)} entries")
    for slot, key in enumerate(keys):
        salt = salts[mph_index(key, 0, len(salts))]
        if mph_index(key, salt, len(salts)) != slot:
            sys.exit(f"error: {name}: key {key:#x} is not reachable by the crate's lookup")


def read_decompositions(source: str, name: str) -> Dict[int, Tuple[int, ...]]:
    """A ``(code_point, &[char])`` table such as ``CANONICAL_DECOMPOSED``."""
    entries = re.findall(rf"\(({_HEX}), &\[([^\]]*)\]\)", array_body(source, f"{name}_KV"))
    check_reachable(source, name, [int(k, 16) for k, _ in entries])
    return {int(k, 16): tuple(int(c, 16) for c in re.findall(_CHAR, chars)) for k, chars in entries}


def read_tables(path: Path) -> Tables:
    """The non-zero combining classes, full canonical decompositions, compositions, full
    compatibility decompositions and combining marks."""
    source = path.read_text(encoding="utf-8")
    if f"UNICODE_VERSION: (u64, u64, u64) = ({UNICODE.replace('.', ', ')});" not in source:
        sys.exit("error: tables.rs is not the Unicode 9.0.0 table set this module documents")

    # Combining classes: u32 values packed as code_point << 8 | class (src/lookups.rs, u8_lookup_*).
    kv = array_body(source, "CANONICAL_COMBINING_CLASS_KV")
    packed = [int(v, 16) for v in re.findall(_HEX, kv)]
    check_reachable(source, "CANONICAL_COMBINING_CLASS", [v >> 8 for v in packed])
    ccc = {v >> 8: v & 0xFF for v in packed if v & 0xFF}

    decompositions = read_decompositions(source, "CANONICAL_DECOMPOSED")

    # BMP pairs are keyed first << 16 | second (src/lookups.rs, composition_table).
    kv = array_body(source, "COMPOSITION_TABLE_KV")
    composition_entries = re.findall(rf"\(({_HEX}), {_CHAR}\)", kv)
    check_reachable(source, "COMPOSITION_TABLE", [int(k, 16) for k, _ in composition_entries])
    compositions = {
        (int(k, 16) >> 16, int(k, 16) & 0xFFFF): int(c, 16) for k, c in composition_entries
    }
    astral = re.search(r"fn composition_table_astral.*?\n\}", source, re.S)
    if astral is None:
        sys.exit("error: composition_table_astral not found in tables.rs")
    arms = re.findall(rf"\({_CHAR}, {_CHAR}\) => Some\({_CHAR}\)", astral.group(0))
    for first, second, composite in arms:
        compositions[int(first, 16), int(second, 16)] = int(composite, 16)
    compatibility = read_decompositions(source, "COMPATIBILITY_DECOMPOSED")
    marks = [int(v, 16) for v in re.findall(_HEX, array_body(source, "COMBINING_MARK_KV"))]
    check_reachable(source, "COMBINING_MARK", marks)
    return ccc, decompositions, compositions, compatibility, frozenset(marks)


def wrap(items: list[str], indent: str = "    ", width: int = 100) -> str:
    """Join ``items`` with ", " into lines of at most ``width`` characters."""
    lines, line = [], indent
    for item in items:
        if line != indent and len(line) + len(item) + 1 > width:
            lines.append(line.rstrip())
            line = indent
        line += item + ", "
    lines.append(line.rstrip())
    return "\n".join(lines)


def render(tables: Tables) -> str:
    """The text of the generated module, entries sorted by code point."""
    ccc, decompositions, compositions, compatibility, marks = tables

    def cp(value: int) -> str:
        return f"0x{value:04X}"

    ccc_items = [f"{cp(k)}: {v}" for k, v in sorted(ccc.items())]
    decomposition_items = [
        f"{cp(k)}: ({', '.join(map(cp, v))}{',' if len(v) == 1 else ''})"
        for k, v in sorted(decompositions.items())
    ]
    composition_items = [f"({cp(a)}, {cp(b)}): {cp(c)}" for (a, b), c in sorted(compositions.items())]
    compatibility_items = [
        f"{cp(k)}: ({', '.join(map(cp, v))}{',' if len(v) == 1 else ''})"
        for k, v in sorted(compatibility.items())
    ]
    mark_items = [cp(m) for m in sorted(marks)]
    return f'''"""Unicode {UNICODE} normalization data used by HF tokenizers' NFC, NFD, NFKC, NFKD and
StripAccents.

GENERATED by tools/gen_nfc_tables.py from the Rust crate {CRATE} {CRATE_VERSION}
(src/tables.rs, Unicode {UNICODE}). Do not edit by hand: re-run the script instead.
Hangul syllables are absent on purpose; they are decomposed and composed algorithmically.
"""

UNICODE_VERSION = ({UNICODE.replace(".", ", ")})
SOURCE = "{CRATE} {CRATE_VERSION}"

# Canonical_Combining_Class: code point -> class, non-zero classes only ({len(ccc)} entries).
CANONICAL_COMBINING_CLASS = {{
{wrap(ccc_items)}
}}

# Full (recursive) canonical decomposition: code point -> code points ({len(decompositions)} entries).
CANONICAL_DECOMPOSITION = {{
{wrap(decomposition_items)}
}}

# Canonical composition, exclusions removed: (first, second) -> composite ({len(compositions)} entries).
CANONICAL_COMPOSITION = {{
{wrap(composition_items)}
}}

# Full compatibility decomposition where it differs from the canonical one: code point -> code
# points ({len(compatibility)} entries).
COMPATIBILITY_DECOMPOSITION = {{
{wrap(compatibility_items)}
}}

# General_Category=Mark ({len(marks)} code points).
COMBINING_MARKS = frozenset([
{wrap(mark_items)}
])
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="?", type=Path, help=f"{CRATE}-{CRATE_VERSION}/src/tables.rs")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if the output file is stale")
    args = parser.parse_args(argv)
    tables = read_tables(args.tables or default_tables_path())
    text = render(tables)
    current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
    if current == text:
        return 0
    if args.check:
        print(f"stale: {args.output}; run python tools/gen_nfc_tables.py", file=sys.stderr)
        return 1
    args.output.write_text(text, encoding="utf-8", newline="\n")
    ccc, decompositions, compositions, compatibility, marks = tables
    print(
        f"wrote {args.output}: {len(ccc)} combining classes, {len(decompositions)} decompositions, "
        f"{len(compositions)} compositions, {len(compatibility)} compatibility decompositions, "
        f"{len(marks)} combining marks"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
