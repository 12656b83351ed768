"""``wordsplit.compat.tokenizers.Tokenizer.encode_batch`` (HF's drop-in: ids, tokens, offsets
and word ids of every text) against HF tokenizers' own ``encode_batch`` on a word-model file.

    python benches/compat_offsets_bench.py [--file tests/data/wordpiece/all-MiniLM-L6-v2/tokenizer.json.gz]
                                           [--lines 2000] [--rounds 5] [--corpus tests/data/corpus/prose_large.txt.gz]

The texts are the first ``--lines`` non-empty lines of the corpus (a prose line is a sentence
or a short paragraph). Both tokenizers are loaded from the same file, with the file's padding
and truncation switched off (all-MiniLM's file pads every text to 128), and every encoding's
ids, offsets and word ids are checked equal before timing. Each round times both calls, taking
turns (which goes first alternates), by wall time; the medians of the rounds and their ratio
are printed. HF runs on its own thread pool (``RAYON_NUM_THREADS`` if set); wordsplit's
``encode_batch`` of the compat layer encodes on the calling thread.
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
    for tok in (hf, ours):
        tok.no_padding()
        tok.no_truncation()
    expected, got = hf.encode_batch(texts), ours.encode_batch(texts)
    for text, a, b in zip(texts, expected, got):
        if (a.ids, a.offsets, a.word_ids) != (b.ids, b.offsets, b.word_ids):
            sys.exit(f"wordsplit's encoding differs from HF's on {text!r}")
    times: dict[str, list[float]] = {"tokenizers": [], "wordsplit": []}
    calls = {"tokenizers": hf.encode_batch, "wordsplit": ours.encode_batch}
    for k in range(args.rounds):
        order = ["tokenizers", "wordsplit"] if k % 2 == 0 else ["wordsplit", "tokenizers"]
        for name in order:
            start = time.perf_counter()
            calls[name](texts)
            times[name].append(time.perf_counter() - start)
    hf_s, ws_s = statistics.median(times["tokenizers"]), statistics.median(times["wordsplit"])
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"{_cpu()}; tokenizers {tokenizers.__version__}; {args.file.parent.name}; {len(texts)} lines, "
          f"{mb:.2f} MB; median of {args.rounds} rounds (wall)")
    print(f"tokenizers encode_batch: {hf_s:.3f} s")
    print(f"wordsplit compat encode_batch: {ws_s:.3f} s")
    print(f"wordsplit ÷ tokenizers speed: {hf_s / ws_s:.2f}×")


if __name__ == "__main__":
    main()
