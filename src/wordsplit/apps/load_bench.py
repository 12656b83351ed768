"""How long ``load_vocab`` takes with a cold and a warm disk cache: the figures the load-time
tables of docs/vocabularies.md and the benchmarks (``benches/bench.py``) report.

>>> (result,) = benchmark_load(["r50k_base"], repeat=1)
>>> sorted(result), result["cold_s"] > 0
(['cold_s', 'name', 'speedup', 'warm_s'], True)
"""

from __future__ import annotations

import statistics
import tempfile
import time

from ..vocabs import forget_loaded, load_vocab

__all__ = ["benchmark_load"]


def benchmark_load(names=("qwen3", "cl100k_base", "o200k_base"), *, repeat: int = 3) -> list[dict]:
    """Time ``load_vocab`` with a cold and a warm cache, in fresh temporary cache directories.

    *cold* parses the vocabulary file and writes the derived entry; *warm* reads that entry.
    Both bypass the in-process memo of registered names, so they measure the disk cache.

    Returns:
        One ``{"name", "cold_s", "warm_s", "speedup"}`` per name: medians of ``repeat`` runs.
    """
    results = []
    for name in names:
        cold, warm = [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="wordsplit-bench-") as tmp:
                for times in (cold, warm):
                    forget_loaded()
                    start = time.perf_counter()
                    load_vocab(name, cache_dir=tmp)
                    times.append(time.perf_counter() - start)
        forget_loaded()
        cold_s, warm_s = statistics.median(cold), statistics.median(warm)
        results.append({"name": name, "cold_s": cold_s, "warm_s": warm_s, "speedup": cold_s / warm_s})
    return results
