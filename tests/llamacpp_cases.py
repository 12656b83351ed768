"""llama.cpp's tokenizer test cases: ``models/ggml-vocab-*.gguf.inp`` / ``.gguf.out`` pairs.

The ``.inp`` file holds the texts, each followed by ``"\\n__ggml_vocab_test__\\n"`` (so the
file ends with one); the ``.out`` file has one line per text with the expected ids separated
by spaces (an empty line for an empty text). Both were made with HF
``AutoTokenizer.encode(text, add_special_tokens=False)`` by llama.cpp's
convert_hf_to_gguf_update.py, and llama.cpp's tests/test-tokenizer-0.cpp checks them with
``add_special=false, parse_special=false``. This module reads them as that test does.

>>> from pathlib import Path
>>> gguf = Path(__file__).parent / "data" / "gguf"
>>> cases = load_cases(gguf / "ggml-vocab-gpt-2.gguf.inp", gguf / "ggml-vocab-gpt-2.gguf.out")
>>> cases[1]
('Äpfel', [127, 226, 79, 69, 417])
"""

from __future__ import annotations

import lzma
import os
import shutil
import struct
from pathlib import Path

SEPARATOR = "\n__ggml_vocab_test__\n"
GGUF_DATA = Path(__file__).parent / "data" / "gguf"


def load_cases(inp_path: str | os.PathLike, out_path: str | os.PathLike) -> list[tuple[str, list[int]]]:
    """The ``(text, expected ids)`` pairs of a ``.inp`` / ``.out`` pair, in file order.

    Raises:
        ValueError: the two files do not have the same number of cases.
    """
    raw = Path(inp_path).read_bytes().decode("utf-8")
    texts = raw.split(SEPARATOR)
    # test-tokenizer-0 stops at the end of the data, so the separator that ends the file does
    # not start another (empty) case.
    if texts[-1] == "":
        texts.pop()
    lines = Path(out_path).read_bytes().decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line (std::getline does not see a line after it)
    if len(texts) != len(lines):
        raise ValueError(f"{inp_path} has {len(texts)} cases but {out_path} has {len(lines)} lines")
    return [(text, [int(i) for i in line.split()]) for text, line in zip(texts, lines)]


def unpacked(file: str, directory: str | os.PathLike) -> Path:
    """The path to load ``tests/data/gguf/<file>`` from: a ``.xz`` file is decompressed into
    ``directory`` as a plain ``.gguf`` (once; wordsplit reads ``.gguf`` and ``.gguf.gz``, and xz
    keeps the test data small), any other file is returned where it is.

    >>> import tempfile
    >>> unpacked("ggml-vocab-gpt-2.gguf.gz", tempfile.gettempdir()).name
    'ggml-vocab-gpt-2.gguf.gz'
    """
    source = GGUF_DATA / file
    if source.suffix != ".xz":
        return source
    target = Path(directory) / source.stem
    if not target.exists():
        partial = target.with_name(target.name + ".partial")
        with lzma.open(source) as packed, open(partial, "wb") as out:
            shutil.copyfileobj(packed, out, 1 << 20)
        partial.replace(target)
    return target


# GGUF value types (ggml's gguf.h) for the writer below.
_U8, _U32, _I32, _F32, _BOOL, _STRING, _ARRAY = 0, 4, 5, 6, 7, 8, 9


def _gguf_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _gguf_value(value) -> bytes:
    if isinstance(value, bool):
        return struct.pack("<IB", _BOOL, value)
    if isinstance(value, str):
        return struct.pack("<I", _STRING) + _gguf_string(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return struct.pack("<II", _U32, value)
    if isinstance(value, bytes):
        return struct.pack("<IIQ", _ARRAY, _U8, len(value)) + value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return struct.pack("<IIQ", _ARRAY, _STRING, len(value)) + b"".join(_gguf_string(v) for v in value)
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return struct.pack(f"<IIQ{len(value)}i", _ARRAY, _I32, len(value), *value)
    if isinstance(value, list) and all(isinstance(v, float) for v in value):
        return struct.pack(f"<IIQ{len(value)}f", _ARRAY, _F32, len(value), *value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r:.40}")


def tokenizer_only_gguf(metadata: dict) -> bytes:
    """A GGUF v3 file with no tensors holding the ``general.name`` and ``tokenizer.*`` keys of
    ``metadata`` (strings, integers, bools, bytes and arrays of strings, integers or floats)."""
    keys = [k for k in metadata if k == "general.name" or k.startswith("tokenizer.")]
    body = b"".join(_gguf_string(k) + _gguf_value(metadata[k]) for k in keys)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(keys)) + body
