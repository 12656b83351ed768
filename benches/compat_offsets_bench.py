"""``wordsplit.compat.tokenizers.Tokenizer.encode_batch`` (HF's drop-in: ids, tokens, offsets
and word ids of every text) against HF tokenizers' own ``encode_batch`` on a word-model file.

    python benches/compat_offsets_bench.py [--file tests/data/wordpiece/all-MiniLM-L6-v2/tokenizer.json.gz]
                                           [--lines 2000] [--rounds 5] [--corpus tests/data/corpus/prose_large.txt.gz]

The texts are the first ``--lines`` non-empty lines of the corpus (a prose line is a sentence
or a short paragraph). Both tokenizers are loaded from the same file, with the file's padding
and truncation switched off (all-MiniLM's file pads every text to 128), and every encoding's
ids, tokens, offsets and word ids are checked equal to HF's before timing. Each round times
every call, taking turns (which goes first rotates), by wall time; the medians of the rounds and their ratios
are printed. HF runs on its own thread pool (``RAYON_NUM_THREADS`` if set); wordsplit's
``encode_batch`` of the compat layer encodes on the calling thread. ``wordsplit (Python
offsets)`` is the same drop-in with its native engine told to take the offsets from the Python
engine (the fallback for a stage the core does not run, and what every word model did before
the core placed them).
"""

from __future__ import annotations

import argparse
import gzip
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=ROOT / "tests/data/wordpiece/all-MiniLM-L6-v2/tokenizer.json.gz")
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests/data/corpus/prose_large.txt.gz")
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import tokenizers

    from wordsplit.compat.tokenizers import Tokenizer

    json_text = _read(args.file).decode("utf-8")
    lines = [line for line in _read(args.corpus).decode("utf-8").splitlines() if line.strip()]
    texts = (lines * (args.lines // max(len(lines), 1) + 1))[:args.lines]
    hf = tokenizers.Tokenizer.from_str(json_text)
    ours = Tokenizer.from_str(json_text)
    fallback = Tokenizer.from_str(json_text)
    engine = fallback._tok.native_engine()
    getattr(engine, "_inner", engine).python_offsets = True
    for tok in (hf, ours, fallback):
        tok.no_padding()
        tok.no_truncation()
    calls = {"tokenizers": hf.encode_batch, "wordsplit": ours.encode_batch,
             "wordsplit (Python offsets)": fallback.encode_batch}
    expected = hf.encode_batch(texts)
    for name in ("wordsplit", "wordsplit (Python offsets)"):
        for text, a, b in zip(texts, expected, calls[name](texts)):
            if (a.ids, a.offsets, a.word_ids, a.tokens) != (b.ids, b.offsets, b.word_ids, b.tokens):
                sys.exit(f"{name}'s encoding differs from HF's on {text!r}")
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for k in range(args.rounds):
        for name in names[k % len(names):] + names[:k % len(names)]:
            start = time.perf_counter()
            calls[name](texts)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(seconds) for name, seconds in times.items()}
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"{_cpu()}; tokenizers {tokenizers.__version__}; {args.file.parent.name}; {len(texts)} lines, "
          f"{mb:.2f} MB; median of {args.rounds} rounds (wall)")
    for name, seconds in medians.items():
        print(f"{name} encode_batch: {seconds:.3f} s ({medians['tokenizers'] / seconds:.2f}× tokenizers' speed)")


if __name__ == "__main__":
    main()
