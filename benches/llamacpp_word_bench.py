"""llama.cpp's GGUF WordPiece (``bert``) and Unigram (``t5``) vocabularies: one pass over whole
corpora, single thread, the native backend (every stage in the core) against the same commit's
native pipeline with the Python stages (the normalizer and, for WordPiece, the spanner called
from the core, which is how the core runs a stage it has no twin of) and against the Python
backend; prints a
Markdown table per vocabulary.

    python benches/llamacpp_word_bench.py [CORPUS_DIR] [--corpora prose,code,multilingual]
        [--max-bytes 4MB] [--doc-bytes 16KB] [--runs 3] [--vocabs bert-bge,nomic-bert-moe]

The vocabularies are tests/data/gguf/ggml-vocab-bert-bge.gguf.xz and
ggml-vocab-nomic-bert-moe.gguf.xz (decompressed into a scratch directory). The Python backend is
the reference the others must equal (it is held to llama.cpp's own ids by the tests); the timing
is ``wordpiece_bench.py``'s (its ``run`` and ``table``: every contender first encodes every
document once, then fresh instances take turns a corpus at a time; median MB/s of process CPU
time).
"""

from __future__ import annotations

import argparse
import lzma
import sys
import tempfile
from pathlib import Path

import contenders as _contenders  # noqa: F401 -- sets OPENBLAS_NUM_THREADS before numpy loads (see there)
from documents import add_corpus_arguments, corpus_documents
from wordpiece_bench import run, table

ROOT = Path(__file__).resolve().parent.parent
GGUF = ROOT / "tests" / "data" / "gguf"
PEERS = ("python-stages", "python")


def unpacked(vocab: str, directory: Path) -> Path:
    """The GGUF file of ``vocab`` in tests/data/gguf/ (``ggml-vocab-<vocab>.gguf.xz``),
    decompressed into ``directory``."""
    path = directory / f"{vocab}.gguf"
    if not path.exists():
        path.write_bytes(lzma.decompress((GGUF / f"ggml-vocab-{vocab}.gguf.xz").read_bytes()))
    return path


def python_stage_tokenizer(vocab):
    """The native backend's tokenizer of ``vocab`` with its normalizer and spanner the Python ones
    (the native engine told the core runs neither)."""
    from wordsplit import TokenizerOptions
    from wordsplit.engines import native

    saved = native.native_normalizer, native.NATIVE_STAGE_SPANNERS
    native.native_normalizer, native.NATIVE_STAGE_SPANNERS = (lambda stage: False), {}
    try:
        tok = TokenizerOptions(backend="native").build(vocab)
    finally:
        native.native_normalizer, native.NATIVE_STAGE_SPANNERS = saved
    if tok._engine.native:
        raise SystemExit("the Python-stage build runs natively: the bench would compare a build with itself")
    return tok


def contenders(path: Path) -> dict:
    """Fresh encode functions by label: ``wordsplit`` (native), ``python-stages``, ``python``."""
    from wordsplit import TokenizerOptions, load_vocab

    vocab = load_vocab(path)
    fast = TokenizerOptions(backend="native").build(vocab)
    if not fast._engine.native:
        raise SystemExit(f"{path.name}: the native backend does not run every stage natively")
    return {"wordsplit": fast.encode_ordinary, "python-stages": python_stage_tokenizer(vocab).encode_ordinary,
            "python": TokenizerOptions(backend="python").build(vocab).encode_ordinary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument("--runs", type=int, default=3, help="timed passes of fresh instances; the median is shown")
    parser.add_argument("--vocabs", default="bert-bge,nomic-bert-moe")
    args = parser.parse_args(argv)
    corpora = corpus_documents(args)
    with tempfile.TemporaryDirectory() as scratch:
        for vocab in args.vocabs.split(","):
            results = run(unpacked(vocab, Path(scratch)), corpora, args.runs, make=contenders, oracle="python")
            print(table(vocab, results, PEERS), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
