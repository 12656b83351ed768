"""The Rust vocabulary readers (crates/wordsplit/src/formats/) share their facts and their expected
results with the Python package: the facts come, as the package's do, from the core's data file,
the expected results from the package, and these tests fail when either is stale. ``cargo test``
(crates/wordsplit/tests/formats.rs) then checks the Rust readers against the expected results,
file by file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _check(tool: str) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / tool), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_rust_table_of_registered_vocabularies_is_generated_from_the_data_file():
    """crates/wordsplit/src/formats/named_table.rs (with names.rs and the package's _registered.py)
    is what tools/gen_registered.py makes of crates/wordsplit/data/registered.json, the data
    vocabs/pretrained.py, patterns.py and native_names.py read."""
    _check("gen_registered.py")


def test_the_expected_results_of_the_rust_readers_are_the_python_loaders_results():
    """tests/data/formats/ (digests of every real vocabulary file as the Python loaders read it,
    the tokenizer.json variants and the derived entries) is what tools/gen_format_digests.py
    makes now: a change of a loader, of the derived format or of a file shows here."""
    _check("gen_format_digests.py")
