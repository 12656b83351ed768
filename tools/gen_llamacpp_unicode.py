#!/usr/bin/env python3
"""Generate the character data of llama.cpp's WordPiece preprocessing (``llm_tokenizer_wpm``),
as llama.cpp's own ``src/unicode-data.cpp`` holds it at the commit the GGUF test files come from
(0c1e5709, tests/data/gguf/SOURCES.md).

llama.cpp does not read Unicode at run time: its ``scripts/gen-unicode-data.py`` wrote fixed
tables, and those are what its tokenizer goes by, whatever Unicode says today:

* the general category of each code point, from UnicodeData.txt of **Unicode 15.1** (a code
  point assigned later is "undefined" there: neither a letter, a mark nor a control);
* ``unicode_cpts_normalize_nfd``: each code point becomes the *first* code point of its NFD
  (``é`` becomes ``e``, a Hangul syllable its leading jamo), one code point for one;
* ``unicode_tolower``: UnicodeData.txt's simple lowercase mapping (``İ`` becomes ``i``).

This script makes the same tables from ``unicodedata2==15.1.0`` (categories, NFD) and the
interpreter's ``str.lower`` (Python 3.11, Unicode 14.0, whose first character of a lowercase
equals UnicodeData 15.1's simple mapping on every code point), and with ``--compare`` checks
them against a llama.cpp ``unicode-data.cpp`` (they are equal at 0c1e5709).

Writes (deterministically, overwriting) ``src/wordsplit/normalizers/_llamacpp_unicode.py`` and
the same tables for the Rust core, ``crates/wordsplit/src/normalizers/llamacpp_tables.rs``. With
``--from-python-tables`` it reads the tables from the Python module in the repository instead
(no ``unicodedata2`` needed) and writes only the Rust file: the tests run it so with ``--check``,
which holds both languages to the same tables.

Usage::

    pip install unicodedata2==15.1.0     # in a Python 3.11 environment
    python tools/gen_llamacpp_unicode.py [--check] [--compare PATH/TO/llama.cpp/src/unicode-data.cpp]
    python tools/gen_llamacpp_unicode.py --from-python-tables [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generated_files import ROOT, write_or_check  # noqa: E402

UNICODE_VERSION = "15.1.0"
LOWERCASE_UNICODE_VERSION = "14.0.0"  # the interpreter's, for str.lower
OUT = ROOT / "src" / "wordsplit" / "normalizers" / "_llamacpp_unicode.py"
RS_OUT = ROOT / "crates" / "wordsplit" / "src" / "normalizers" / "llamacpp_tables.rs"

# The category groups llama.cpp's unicode_cpt_flags has, by general category.
CLASSES = {
    "CONTROL": ("Cc", "Cf", "Co", "Cs"),
    "MARK": ("Mn", "Mc", "Me"),
    "PUNCTUATION": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"),
    "SYMBOL": ("Sm", "Sc", "Sk", "So"),
}


def _data():
    import unicodedata2

    if unicodedata2.unidata_version != UNICODE_VERSION or unicodedata.unidata_version != LOWERCASE_UNICODE_VERSION:
        raise SystemExit(f"needs unicodedata2 {UNICODE_VERSION} and Python's unicodedata {LOWERCASE_UNICODE_VERSION} "
                         f"(Python 3.11); found {unicodedata2.unidata_version} and {unicodedata.unidata_version}")
    return unicodedata2


def _ranges(codepoints) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in codepoints:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def tables() -> dict[str, list]:
    """The tables, by name: class ranges, ``NFD_FIRST`` ``(first, last, to)`` ranges and
    ``LOWERCASE`` ``(code point, lowercase)`` pairs."""
    ucd = _data()
    out: dict[str, list] = {}
    every = [cp for cp in range(0x110000)]
    for name, categories in CLASSES.items():
        out[name] = _ranges(cp for cp in every if ucd.category(chr(cp)) in categories)
    nfd: list[list[int]] = []
    for cp in every:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        first = ord(ucd.normalize("NFD", chr(cp))[0])
        if first == cp:
            continue
        if nfd and nfd[-1][1] == cp - 1 and nfd[-1][2] == first:
            nfd[-1][1] = cp
        else:
            nfd.append([cp, cp, first])
    out["NFD_FIRST"] = [tuple(r) for r in nfd]
    lower = []
    for cp in every:
        if 0xD800 <= cp <= 0xDFFF or ucd.category(chr(cp)) == "Cn":
            continue
        to = ord(chr(cp).lower()[0])
        if to != cp:
            lower.append((cp, to))
    out["LOWERCASE"] = lower
    return out


def compare(tables_: dict[str, list], path: Path) -> list[str]:
    """The differences between ``tables_`` and llama.cpp's ``unicode-data.cpp`` at ``path``."""
    source = path.read_text(encoding="utf-8")

    def block(name: str) -> str:
        start = source.index(name)
        return source[start:source.index("};", start)]

    pair = re.compile(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}")
    flags_at = [(int(a, 16), int(f, 16)) for a, f in pair.findall(block("unicode_ranges_flags"))]
    bits = {"CONTROL": 0x80, "MARK": 0x10, "PUNCTUATION": 0x20, "SYMBOL": 0x40}
    problems = []
    for name, bit in bits.items():
        theirs = _ranges(cp for (a, f), (b, _) in zip(flags_at, flags_at[1:]) if f & bit for cp in range(a, b))
        if theirs != tables_[name]:
            problems.append(name)
    triple = re.compile(r"\{0x([0-9A-F]+), 0x([0-9A-F]+), 0x([0-9A-F]+)\}")
    nfd = {}
    for a, b, to in triple.findall(block("unicode_ranges_nfd")):
        nfd.update(dict.fromkeys(range(int(a, 16), int(b, 16) + 1), int(to, 16)))
    nfd = {cp: to for cp, to in nfd.items() if cp != to}
    if nfd != {cp: to for a, b, to in tables_["NFD_FIRST"] for cp in range(a, b + 1)}:
        problems.append("NFD_FIRST")
    lower = [(int(a, 16), int(b, 16)) for a, b in pair.findall(block("unicode_map_lowercase"))]
    if lower != tables_["LOWERCASE"]:
        problems.append("LOWERCASE")
    return problems


def rows(items, width: int) -> list[str]:
    """``items`` as indented lines of several items each, none longer than ``width``."""
    lines: list[str] = []
    row: list[str] = []
    for item in items:
        if row and len("    " + " ".join([*row, item])) > width:
            lines.append("    " + " ".join(row))
            row = []
        row.append(item)
    if row:
        lines.append("    " + " ".join(row))
    return lines


def render(tables_: dict[str, list]) -> str:
    lines = [
        '"""GENERATED by tools/gen_llamacpp_unicode.py. DO NOT EDIT.',
        "",
        "The character data of llama.cpp's WordPiece preprocessing, equal to llama.cpp's",
        "src/unicode-data.cpp at 0c1e5709: general categories of Unicode 15.1 as inclusive (first, last)",
        "ranges, the first code point of each code point's NFD as (first, last, to) ranges, and the",
        "simple lowercase mapping as (code point, lowercase) pairs.",
        '"""',
        "",
        f'UNICODE_VERSION = "{UNICODE_VERSION}"',
    ]

    for name, categories in CLASSES.items():
        table = tables_[name]
        lines += ["", f"# {' '.join(categories)}: {len(table)} ranges", f"{name} = ("]
        lines += rows((f"(0x{a:04X}, 0x{b:04X})," for a, b in table), 120)
        lines.append(")")
    nfd = tables_["NFD_FIRST"]
    lines += ["", f"# {len(nfd)} ranges, {sum(b - a + 1 for a, b, _ in nfd)} code points", "NFD_FIRST = ("]
    lines += rows((f"(0x{a:04X}, 0x{b:04X}, 0x{to:04X})," for a, b, to in nfd), 120)
    lines.append(")")
    lower = tables_["LOWERCASE"]
    lines += ["", f"# {len(lower)} code points", "LOWERCASE = ("]
    lines += rows((f"(0x{a:04X}, 0x{b:04X})," for a, b in lower), 120)
    lines.append(")")
    return "\n".join(lines) + "\n"


def render_rust(tables_: dict[str, list]) -> str:
    """The Rust module of the same tables (several entries a line: the file stays readable)."""
    lines = [
        "//! @generated by tools/gen_llamacpp_unicode.py: do not edit.",
        "//! The character data of llama.cpp's WordPiece preprocessing, equal to llama.cpp's",
        "//! src/unicode-data.cpp at 0c1e5709 (and to the Python package's `_llamacpp_unicode`):",
        "//! general categories of Unicode 15.1 as sorted inclusive `(first, last)` ranges, the first",
        "//! code point of each code point's NFD as sorted `(first, last, to)` ranges, and the simple",
        "//! lowercase mapping as sorted `(code point, lowercase)` pairs.",
        "",
        f'pub const UNICODE_VERSION: &str = "{UNICODE_VERSION}";',
    ]

    for name, categories in CLASSES.items():
        table = tables_[name]
        lines += ["", f"/// {' '.join(categories)}: {len(table)} ranges.",
                  f"pub const {name}: &[(u32, u32)] = &["]
        lines += rows((f"(0x{a:04X}, 0x{b:04X})," for a, b in table), 99)
        lines.append("];")
    nfd = tables_["NFD_FIRST"]
    lines += ["", f"/// {len(nfd)} ranges, {sum(b - a + 1 for a, b, _ in nfd)} code points.",
              "pub const NFD_FIRST: &[(u32, u32, u32)] = &["]
    lines += rows((f"(0x{a:04X}, 0x{b:04X}, 0x{to:04X})," for a, b, to in nfd), 99)
    lines.append("];")
    lower = tables_["LOWERCASE"]
    lines += ["", f"/// {len(lower)} code points.", "pub const LOWERCASE: &[(u32, u32)] = &["]
    lines += rows((f"(0x{a:04X}, 0x{b:04X})," for a, b in lower), 99)
    lines.append("];")
    return "\n".join(lines) + "\n"


def python_tables() -> dict[str, list]:
    """The tables of the Python module in the repository (what ``--from-python-tables`` renders)."""
    sys.path.insert(0, str(ROOT / "src"))
    from wordsplit.normalizers import _llamacpp_unicode as module

    return {name: list(getattr(module, name)) for name in [*CLASSES, "NFD_FIRST", "LOWERCASE"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the generated file is stale")
    parser.add_argument("--compare", type=Path, help="llama.cpp's src/unicode-data.cpp to check the tables against")
    parser.add_argument("--from-python-tables", action="store_true",
                        help="render the Rust file from the Python module in the repository (no unicodedata2)")
    args = parser.parse_args()
    if args.from_python_tables:
        return write_or_check({RS_OUT: render_rust(python_tables()).encode("utf-8")}, check=args.check,
                              command="python tools/gen_llamacpp_unicode.py --from-python-tables")
    made = tables()
    if args.compare is not None:
        problems = compare(made, args.compare)
        if problems:
            print(f"differ from {args.compare}: {', '.join(problems)}", file=sys.stderr)
            return 1
        print(f"equal to {args.compare}")
    return write_or_check({OUT: render(made).encode("utf-8"), RS_OUT: render_rust(made).encode("utf-8")},
                          check=args.check,
                          command="python tools/gen_llamacpp_unicode.py")


if __name__ == "__main__":
    raise SystemExit(main())
