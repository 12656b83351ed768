"""Write tests/golden/llamacpp-gguf.json.gz: llama.cpp's own ids (and decoded bytes) for every
GGUF vocabulary of tests/data/gguf that wordsplit loads, on a text set far larger than the 46
cases llama.cpp ships (whose ids HF made, not llama.cpp), and for baichuan, which ships none.

The oracle is llama.cpp itself, the commit vendored in the PyPI sdist of llama-cpp-python 0.3.36
(tests/data/gguf/SOURCES.md): ``tools/llamacpp_tokenize.cpp`` linked against its library, run as
llama.cpp's test-tokenizer-0 tokenizes (``add_special=false, parse_special=false``) and
``llama_detokenize(remove_special=false, unparse_special=false)`` for the bytes back (as hex:
llama.cpp gives bytes, which need not be UTF-8).

Build the oracle (cmake from PyPI, no network beyond it):

    pip download --no-deps --no-binary llama-cpp-python llama-cpp-python==0.3.36
    tar xzf llama_cpp_python-0.3.36.tar.gz && cd llama_cpp_python-0.3.36/vendor/llama.cpp
    cmake -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \\
        -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DBUILD_SHARED_LIBS=OFF
    cmake --build build --target llama -j2   # then, with WORDSPLIT the checkout:
    g++ -O2 -std=c++17 -Iinclude -Iggml/include WORDSPLIT/tools/llamacpp_tokenize.cpp build/src/libllama.a \\
        build/ggml/src/libggml.a build/ggml/src/libggml-cpu.a build/ggml/src/libggml-base.a \\
        -lpthread -ldl -o llamacpp_tokenize

Run: python tools/gen_gguf_goldens.py PATH/TO/llamacpp_tokenize
"""

from __future__ import annotations

import gzip
import json
import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_spm_goldens import TEXTS, corpus_lines  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GGUF = ROOT / "tests" / "data" / "gguf"
GOLDEN = ROOT / "tests" / "golden"
SEPARATOR = "\n__ggml_vocab_test__\n"

# Every vocabulary file of tests/data/gguf that wordsplit loads (bert-bge and nomic-bert-moe are
# refused by model name).
FILES = [
    "ggml-vocab-aquila.gguf.xz", "ggml-vocab-baichuan.gguf.xz", "ggml-vocab-command-r.gguf.xz",
    "ggml-vocab-deepseek-coder.gguf.xz", "ggml-vocab-deepseek-llm.gguf.xz", "ggml-vocab-falcon.gguf.xz",
    "ggml-vocab-gemma-4.gguf.xz", "ggml-vocab-gpt-2.gguf.gz", "ggml-vocab-llama-bpe.gguf.xz",
    "ggml-vocab-llama-spm.gguf.xz", "ggml-vocab-mpt.gguf.xz", "ggml-vocab-phi-3.gguf.xz",
    "ggml-vocab-qwen2.gguf.gz", "ggml-vocab-qwen35.gguf.xz", "ggml-vocab-refact.gguf.xz",
    "ggml-vocab-starcoder.gguf.xz", "qwen3-vocab.gguf.gz",
]


def texts() -> list[str]:
    """The texts: gen_spm_goldens' set (spaces, whitespace runs, text after special-looking
    tokens, scripts, emoji, code) and up to 100 lines of each test corpus. The separator line
    is the one text llama.cpp's input layout cannot hold."""
    lines = TEXTS + corpus_lines()[::3]
    return [text for text in lines if "__ggml_vocab_test__" not in text]


def unpack(file: str, directory: Path) -> Path:
    source = GGUF / file
    target = directory / file.rsplit(".", 1)[0]
    opener = lzma.open if file.endswith(".xz") else gzip.open
    with opener(source) as packed:
        target.write_bytes(packed.read())
    return target


def main(oracle: str) -> None:
    cases_in = texts()
    stdin = "".join(text + SEPARATOR for text in cases_in).encode("utf-8")
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for file in FILES:
            path = unpack(file, Path(tmp))
            done = subprocess.run([oracle, str(path)], input=stdin, capture_output=True, check=True)
            lines = done.stdout.decode("ascii").split("\n")
            assert lines[-1] == "" and len(lines) - 1 == 2 * len(cases_in), (file, len(lines))
            files[file] = {"ids": [[int(i) for i in line.split()] for line in lines[0:-1:2]],
                           "decoded_hex": lines[1:-1:2]}
    record = {"oracle": "llama.cpp 0c1e57098bba43ac29e6e3b677cdceebdd22334f (llama-cpp-python 0.3.36)",
              "generator": "tools/gen_gguf_goldens.py",
              "call": "llama_tokenize(add_special=false, parse_special=false); "
                      "llama_detokenize(remove_special=false, unparse_special=false)",
              "texts": cases_in, "files": files}
    out = GOLDEN / "llamacpp-gguf.json.gz"
    out.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), mtime=0))
    print(out.relative_to(ROOT), len(cases_in), "texts,", len(files), "files,", out.stat().st_size, "bytes")


if __name__ == "__main__":
    main(sys.argv[1])
