#!/usr/bin/env python3
"""Generate ``src/wordsplit/_hf_char_data.py`` and ``crates/wordsplit/src/normalizers/hf_char_classes.rs``:
the character classes HF tokenizers takes from the Rust crate ``unicode_categories`` 0.1.1, the
same ranges for both languages (the Python package's BERT normalizer and ``Punctuation`` class,
the core's native BERT normalizer and pre-tokenizer).

Provenance
----------
HuggingFace ``tokenizers`` asks that crate three questions: what its ``Punctuation`` and
``BertPreTokenizer`` split on (``char::is_ascii_punctuation(c) || c.is_punctuation()``:
General_Category Pc, Pd, Ps, Pe, Pi, Pf, Po), what ``BertNormalizer``'s ``clean_text`` drops
(``is_other``: Cc, Cf and Co, the crate's private use ranges included) and what its
``strip_accents`` drops after NFD (``is_mark_nonspacing``: Mn). The crate's tables are older than
any Unicode that Python or the ``regex`` module ship (U+166D is still Po there), so the classes
are copied from the crate's ``src/tables.rs``, one ``&[char]`` list per category.

Re-running
----------
::

    # without a path, the crate's source is read from ~/.cargo/registry/src, where cargo
    # fetches it first if it is not there (crates.io)
    python tools/gen_hf_char_tables.py [path/to/unicode_categories-0.1.1/src/tables.rs]
    python tools/gen_hf_char_tables.py --check   # exit 1 if a generated file is stale

The output is deterministic (sorted ranges).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CRATE, CRATE_VERSION = "unicode_categories", "0.1.1"
CATEGORIES = ("PUNCTUATION_CONNECTOR", "PUNCTUATION_DASH", "PUNCTUATION_OPEN", "PUNCTUATION_CLOSE",
              "PUNCTUATION_INITIAL_QUOTE", "PUNCTUATION_FINAL_QUOTE", "PUNCTUATION_OTHER")
OTHER_CATEGORIES = ("OTHER_CONTROL", "OTHER_FORMAT", "OTHER_PRIVATE_USE")
# The crate's is_other_private_use matches these ranges before it searches its table.
PRIVATE_USE_RANGES = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "wordsplit" / "_hf_char_data.py"
RUST_OUTPUT = ROOT / "crates" / "wordsplit" / "src" / "normalizers" / "hf_char_classes.rs"


def default_tables_path() -> Path:
    """The crate's ``tables.rs`` in cargo's registry, fetched there first if missing: the
    workspace does not depend on the crate, so cargo fetches it for a scratch project that
    does."""
    pattern = os.path.expanduser(f"~/.cargo/registry/src/*/{CRATE}-{CRATE_VERSION}/src/tables.rs")
    if not glob.glob(pattern):
        with tempfile.TemporaryDirectory() as scratch:
            (Path(scratch) / "src").mkdir()
            (Path(scratch) / "src" / "lib.rs").write_text("")
            manifest = Path(scratch) / "Cargo.toml"
            manifest.write_text(f'[package]\nname = "fetch-{CRATE.replace("_", "-")}"\nversion = "0.0.0"\n'
                                f'edition = "2021"\n\n[dependencies]\n{CRATE} = "={CRATE_VERSION}"\n')
            fetched = subprocess.run(["cargo", "fetch", "--manifest-path", str(manifest)],
                                     capture_output=True, text=True)
            if fetched.returncode != 0:
                sys.exit(f"error: cargo could not fetch {CRATE} {CRATE_VERSION}:\n{fetched.stderr}")
    matches = sorted(glob.glob(pattern))
    if not matches:
        sys.exit(f"error: {pattern} not found after cargo fetched the crate; pass the path")
    return Path(matches[0])


def read_tables(path: Path, names: tuple[str, ...]) -> set[int]:
    """The code points the crate's tables ``names`` list."""
    source = path.read_text(encoding="utf-8")
    code_points: set[int] = set()
    for name in names:
        match = re.search(rf"pub static {name} : &'static \[char\] = &\[(.*?)\];", source, re.S)
        if match is None:
            sys.exit(f"error: table {name} not found in {path}")
        code_points |= {int(h, 16) for h in re.findall(r"'\\u\{([0-9A-Fa-f]+)\}'", match.group(1))}
    return code_points


def ranges(code_points: set[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in sorted(code_points):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def render_ranges(name: str, code_points: set[int]) -> str:
    items = [f"(0x{a:04X}, 0x{b:04X})" for a, b in ranges(code_points)]
    lines, line = [], "   "
    for item in items:
        if len(line) + len(item) + 2 > 100:
            lines.append(line)
            line = "   "
        line += f" {item},"
    lines.append(line)
    body = "\n".join(lines)
    return f"# Inclusive (first, last) code point ranges ({len(code_points)} code points).\n{name} = (\n{body}\n)\n"


def classes(path: Path) -> dict[str, set[int]]:
    """The three classes, by their names in the generated files."""
    other = read_tables(path, OTHER_CATEGORIES)
    for first, last in PRIVATE_USE_RANGES:
        other |= set(range(first, last + 1))
    return {"PUNCTUATION_RANGES": read_tables(path, CATEGORIES), "OTHER_RANGES": other,
            "NONSPACING_MARK_RANGES": read_tables(path, ("MARK_NONSPACING",))}


RUST_DOCS = {
    "PUNCTUATION_RANGES": "Pc Pd Ps Pe Pi Pf Po: what `Punctuation` and `BertPreTokenizer` split on (HF adds\n"
                          "/// the ASCII punctuation, `char::is_ascii_punctuation`).",
    "OTHER_RANGES": "Cc Cf Co: what `BertNormalizer`'s `clean_text` drops (HF keeps tab, newline and\n"
                    "/// carriage return, which it makes spaces).",
    "NONSPACING_MARK_RANGES": "Mn: what `BertNormalizer`'s `strip_accents` drops after NFD.",
}


def render_rust(path: Path) -> str:
    """The Rust module of the same ranges (rustfmt leaves it as it is: one line per five ranges
    reads better than one per range)."""
    parts = [f"//! @generated by tools/gen_hf_char_tables.py from the crate {CRATE} {CRATE_VERSION}'s\n"
             "//! src/tables.rs: do not edit. The character classes HF tokenizers takes from that crate, as\n"
             "//! inclusive `(first, last)` code point ranges, sorted; `wordsplit/_hf_char_data.py` holds the\n"
             "//! same for the Python package.\n"]
    for name, code_points in classes(path).items():
        items = [f"(0x{a:04X}, 0x{b:04X})" for a, b in ranges(code_points)]
        rows = ["    " + " ".join(f"{item}," for item in items[i:i + 5]) for i in range(0, len(items), 5)]
        parts.append(f"/// {RUST_DOCS[name]} {len(code_points)} code points.\n"
                     f"pub const {name}: &[(u32, u32)] = &[\n" + "\n".join(rows) + "\n];\n")
    return "\n".join(parts)


def render(path: Path) -> str:
    found = classes(path)
    return f'''"""The character classes HF tokenizers takes from the Rust crate {CRATE} {CRATE_VERSION}.

GENERATED by tools/gen_hf_char_tables.py from the crate's src/tables.rs. Do not edit by hand:
re-run the script instead.

* ``PUNCTUATION_RANGES``: Pc Pd Ps Pe Pi Pf Po, what ``Punctuation`` and ``BertPreTokenizer``
  split on (HF adds the ASCII punctuation, ``char::is_ascii_punctuation``);
* ``OTHER_RANGES``: Cc Cf Co, what ``BertNormalizer``'s ``clean_text`` drops (HF keeps tab,
  newline and carriage return, which it makes spaces);
* ``NONSPACING_MARK_RANGES``: Mn, what ``BertNormalizer``'s ``strip_accents`` drops after NFD.
"""

SOURCE = "{CRATE} {CRATE_VERSION}"

{render_ranges("PUNCTUATION_RANGES", found["PUNCTUATION_RANGES"])}
{render_ranges("OTHER_RANGES", found["OTHER_RANGES"])}
{render_ranges("NONSPACING_MARK_RANGES", found["NONSPACING_MARK_RANGES"])}'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="?", type=Path, help=f"{CRATE}-{CRATE_VERSION}/src/tables.rs")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--rust-output", type=Path, default=RUST_OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if a generated file is stale")
    args = parser.parse_args(argv)
    tables = args.tables or default_tables_path()
    status = 0
    for output, text in ((args.output, render(tables)), (args.rust_output, render_rust(tables))):
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if current == text:
            continue
        if args.check:
            print(f"stale: {output}; run python tools/gen_hf_char_tables.py", file=sys.stderr)
            status = 1
            continue
        output.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {output}")
    return status


if __name__ == "__main__":
    sys.exit(main())
