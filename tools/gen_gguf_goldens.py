"""Write tests/golden/llamacpp-gguf.json.gz: llama.cpp's own ids (and decoded bytes) for every
GGUF vocabulary of tests/data/gguf, on a text set far larger than the 46
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

# Every vocabulary file of tests/data/gguf.
FILES = [
    "ggml-vocab-aquila.gguf.xz", "ggml-vocab-baichuan.gguf.xz", "ggml-vocab-bert-bge.gguf.xz",
    "ggml-vocab-command-r.gguf.xz", "ggml-vocab-deepseek-coder.gguf.xz", "ggml-vocab-deepseek-llm.gguf.xz",
    "ggml-vocab-falcon.gguf.xz", "ggml-vocab-gemma-4.gguf.xz", "ggml-vocab-gpt-2.gguf.gz",
    "ggml-vocab-llama-bpe.gguf.xz", "ggml-vocab-llama-spm.gguf.xz", "ggml-vocab-mpt.gguf.xz",
    "ggml-vocab-nomic-bert-moe.gguf.xz", "ggml-vocab-phi-3.gguf.xz", "ggml-vocab-qwen2.gguf.gz",
    "ggml-vocab-qwen35.gguf.xz", "ggml-vocab-refact.gguf.xz", "ggml-vocab-starcoder.gguf.xz", "qwen3-vocab.gguf.gz",
]

# Texts for llama.cpp's WordPiece and Unigram preprocessing, which every file gets: case
# mappings of one code point to several, accents and combining marks (its one-code-point NFD),
# Hangul, controls and format characters (dropped), CJK block edges (U+2B820..U+2B91F is no
# ideograph to llama.cpp), typed ▁, the character map's outputs with spaces, ASCII symbols, every
# white space, special-looking texts, a word longer than HF's 100-character limit.
WORD_MODEL_TEXTS = [
    "İstanbul ǅungla ß ẞ Å Ω K ﬃ", "e\u0301te\u0301 \u00e9t\u00e9 \u1e9b\u0323 o\u0308\u0304",
    "한국어 \u1100\u1161\u11a8 \uac00\ud7a3", "a\u0000b c\ufffdd e\u200bf g\u00adh \ue000i \U000f0000j",
    "x\u0007y\u001fz \u007f \u0085\u0085",
    "\U0002b820\U0002b91f\U0002b920 \u3400\u4dbf \u9fff\ua000 \uf900\ufaff \U0002f800 \u3005\u3007",
    "x\u2581y \u2581\u2581 \u2581 a\u2581", "a\u2581",
    "Ｈｅｌｌｏ\u3000ｗｏｒｌｄ ①②③ ㍻ \ufdfa \u00a8x \u2474 \u33c2", "$5+3=8 <a|b> ^~` 50% #1 @x {y} [z] \\w",
    "a\t\tb\n\n\nc \r\n d\u2028e\u2029f\u00a0g\u1680h\u180ei\u202fj\u205fk",
    "[CLS] [SEP] [MASK] [UNK] [PAD] <s> </s> <mask> <unk> <pad>", "[PAD250001] [PAD250047]x",
    "\u0130\u0131 \u03a3\u03c3\u03c2 \u1e9e \u01c4\u01c5\u01c6 \u2126 \u212a \u212b", "a" * 150,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "don't can't I'm we've they're 'quoted' ' lone ' , . ? !", "\u0300leading mark \u0301\u0302",
    "\u00c5ngstr\u00f6m \u212bngstr\u00f6m na\u00efve caf\u00e9 CAF\u00c9", "\u4e2d\u6587\u5b57\u7b26ABC\u4e2d",
    "\u0e01\u0e32\u0e23 \u0928\u092e\u0938\u094d\u0924\u0947 \u1780\u17d2\u179a", "a\u0303\u0303\u0303b",
    "x" * 30 + "y" * 30 + "\u00e9" * 30,
]

# Texts for the WordPiece and Unigram files only: code points that Unicode 16.0 assigned, which
# llama.cpp's tables (Unicode 15.1) leave undefined; the byte-level files run \p{..} classes of
# Unicode 16.0 by design (docs/vocabularies.md), so these are not theirs.
UNICODE_16_TEXTS = ["\u0897x \u1b4e\u1b4f \U0001e030 \U00011f00 \u31e4", "a\u1b4eb \u1c89\u1c8a"]
WORD_MODEL_FILES = ("ggml-vocab-bert-bge.gguf.xz", "ggml-vocab-nomic-bert-moe.gguf.xz")


def texts() -> list[str]:
    """The texts: gen_spm_goldens' set (spaces, whitespace runs, text after special-looking
    tokens, scripts, emoji, code), :data:`WORD_MODEL_TEXTS` and up to 100 lines of each test
    corpus. The separator line is the one text llama.cpp's input layout cannot hold."""
    lines = TEXTS + WORD_MODEL_TEXTS + corpus_lines()[::3]
    return [text for text in lines if "__ggml_vocab_test__" not in text]


def run(oracle: str, path: Path, cases: list[str]) -> dict[str, list]:
    """llama.cpp's ids and decoded bytes (hex) of each of ``cases`` with the vocabulary at ``path``."""
    stdin = "".join(text + SEPARATOR for text in cases).encode("utf-8")
    done = subprocess.run([oracle, str(path)], input=stdin, capture_output=True, check=True)
    lines = done.stdout.decode("ascii").split("\n")
    assert lines[-1] == "" and len(lines) - 1 == 2 * len(cases), (path, len(lines))
    return {"ids": [[int(i) for i in line.split()] for line in lines[0:-1:2]], "decoded_hex": lines[1:-1:2]}


def unpack(file: str, directory: Path) -> Path:
    source = GGUF / file
    target = directory / file.rsplit(".", 1)[0]
    opener = lzma.open if file.endswith(".xz") else gzip.open
    with opener(source) as packed:
        target.write_bytes(packed.read())
    return target


def main(oracle: str) -> None:
    cases_in = texts()
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for file in FILES:
            path = unpack(file, Path(tmp))
            files[file] = run(oracle, path, cases_in)
            if file in WORD_MODEL_FILES:
                files[file]["unicode_16"] = {"texts": UNICODE_16_TEXTS, **run(oracle, path, UNICODE_16_TEXTS)}
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
