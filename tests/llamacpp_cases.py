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

import os
from pathlib import Path

SEPARATOR = "\n__ggml_vocab_test__\n"


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
