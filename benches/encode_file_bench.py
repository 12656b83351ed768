"""Many small documents: ``encode-file`` over one-line documents against the same text as one
document, on 1 and 2 threads, and the list APIs (``encode_batch_flat``, ``encode_batch``) over
the same lines.

    python benches/encode_file_bench.py CORPUS_DIR --mb 32 > /tmp/documents.md

It builds a file of one-line documents from the corpora (``CORPUS_DIR/<name>.txt.gz``; each
line of each corpus is a document, blank lines included, the corpora concatenated and repeated
until the file holds ``--mb`` MB), checks parity first (``encode_file`` on 1 and 2 threads
writes the same ids and index, and those equal ``encode_batch_flat`` over the lines), then
times each configuration ``--repeats`` times, the configurations taking turns (the median is
reported, in MB/s of input: file bytes / wall seconds):

* ``encode_file`` of the documents (one per line) on 1 and 2 threads;
* ``encode_file`` of the whole file as one document (``separator=None``: the same text as one
  string) on 1 and 2 threads;
* ``encode_dataset`` (the local engine) of the same file as a text input, to ``npy`` shards;
* ``encode_batch_flat`` and ``encode_batch`` over the lines as a list of str (made before
  timing), on 1 and 2 threads.

Ratios are taken within one round of turns (so a busy machine's slow round hits both sides of
a ratio): documents ÷ one string on 1 thread, and 2 threads ÷ 1 thread. The process's CPU
seconds per MB (every thread) are reported too, and the 2-thread speed-up the threads' CPU
times allow on 2 idle cores: the process's CPU seconds on 1 thread ÷ the larger of the busiest
thread's on 2 (from ``/proc/self/task/*/schedstat``) and half of all threads' on 2, paired per
round. On a machine that other work
shares (Linux's autogroup gives a session a share of the cores however many threads it runs),
2 threads cannot run 2× faster in wall time; the CPU times say whether the work grew and how
evenly it was shared. The report names the CPU. ``--threads-only`` skips the list APIs.
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import CORPUS_ENV, corpus_dir
from wordsplit import get_tokenizer
from wordsplit.apps.encode_file import encode_file, load_encoded

DEFAULT_CORPORA = "prose,code,multilingual"


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def thread_cpu() -> dict[str, int]:
    """CPU nanoseconds of each thread of this process so far (``/proc/self/task/*/schedstat``);
    empty where there is no such file."""
    out = {}
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
    except OSError:
        return {}
    return out


def busiest(before: dict[str, int], after: dict[str, int]) -> float:
    """The CPU seconds of the thread that worked most between two :func:`thread_cpu` readings."""
    return max((ns - before.get(tid, 0) for tid, ns in after.items()), default=0) / 1e9


def build_file(directory: Path, names: list[str], mb: float, path: Path) -> int:
    """Write the one-line documents file; returns its size in bytes."""
    text = b""
    for name in names:
        with gzip.open(directory / f"{name}.txt.gz", "rb") as f:
            part = f.read()
        text += part if part.endswith(b"\n") else part + b"\n"
    want = int(mb * 1e6)
    with open(path, "wb") as out:
        written = 0
        while written < want:
            piece = text[: want - written]
            cut = piece.rfind(b"\n") + 1 or len(piece)  # whole lines only
            out.write(piece[:cut])
            written += cut
            if cut < len(text):
                break
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus_dir", nargs="?", type=Path, help=f"holds <name>.txt.gz (default ${CORPUS_ENV})")
    parser.add_argument("--corpora", default=DEFAULT_CORPORA)
    parser.add_argument("--vocab", default="qwen3")
    parser.add_argument("--mb", type=float, default=32.0, help="size of the documents file (MB)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads-only", action="store_true", help="encode_file only, no list APIs")
    args = parser.parse_args()

    directory = corpus_dir(args.corpus_dir, args.corpora.split(","))
    tok = get_tokenizer(args.vocab)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "docs.txt"
        size = build_file(directory, args.corpora.split(","), args.mb, src)
        data = src.read_bytes()
        lines = data.decode("utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        log(f"{size / 1e6:.1f} MB, {len(lines):,} documents ({size / max(1, len(lines)):.0f} bytes each)")

        def run_file(threads: int, separator) -> None:
            encode_file(tok, src, tmp / "out.bin", separator=separator, num_threads=threads)

        # Parity before timing: 1 and 2 threads, and the list API, give the same ids.
        run_file(1, "\n")
        one = load_encoded(tmp / "out.bin")
        run_file(2, "\n")
        two = load_encoded(tmp / "out.bin")
        flat_ids, flat_offsets = tok.encode_batch_flat(lines, num_threads=2, disallowed_special=())
        assert one == two, "encode_file on 1 and 2 threads differ"
        assert one[0].tolist() == flat_ids.tolist() and one[1].tolist() == flat_offsets.tolist(), \
            "encode_file differs from encode_batch_flat"
        del one, two, flat_ids, flat_offsets
        log("parity: encode_file (1 and 2 threads) == encode_batch_flat")

        configs = {
            "encode_file, documents": lambda t: run_file(t, "\n"),
            "encode_file, one string": lambda t: run_file(t, None),
        }
        if not args.threads_only:
            import shutil

            from wordsplit.datasets import encode_dataset

            def run_dataset(t: int) -> None:
                shutil.rmtree(tmp / "dataset", ignore_errors=True)
                encode_dataset([str(src)], tmp / "dataset", vocab=args.vocab, format="npy", threads=t)

            configs["encode_dataset (text input, npy)"] = run_dataset
            configs["encode_batch_flat"] = lambda t: tok.encode_batch_flat(lines, num_threads=t,
                                                                         disallowed_special=())
            configs["encode_batch"] = lambda t: tok.encode_batch(lines, num_threads=t, disallowed_special=())
        times: dict[tuple[str, int], list[float]] = {(name, t): [] for name in configs for t in (1, 2)}
        cpu: dict[tuple[str, int], list[float]] = {key: [] for key in times}
        most: dict[tuple[str, int], list[float]] = {key: [] for key in times}
        for rep in range(args.repeats):
            for (name, t) in times:
                threads_before = thread_cpu()
                started, started_cpu = time.perf_counter(), time.process_time()
                configs[name](t)
                times[name, t].append(time.perf_counter() - started)
                cpu[name, t].append(time.process_time() - started_cpu)
                most[name, t].append(busiest(threads_before, thread_cpu()))
            log(f"round {rep + 1}: " + ", ".join(f"{n} ×{t} {size / s[-1] / 1e6:.1f}" for (n, t), s in times.items()))

    def ratio(a, b) -> str:
        rs = [y / x for x, y in zip(times[a], times[b])]  # paired, per round
        return f"{statistics.median(rs):.2f}× ({min(rs):.2f}–{max(rs):.2f})"

    print(f"### Many small documents ({args.vocab}, {size / 1e6:.1f} MB, {len(lines):,} one-line documents)\n")
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; {args.repeats} rounds, median MB/s (wall); "
          f"Python {platform.python_version()}\n")
    print("| what | 1 thread MB/s | 2 threads MB/s | 2 threads ÷ 1 (paired) | CPU s per MB, 1 thread | "
          "2 threads | 2 threads ÷ 1 on idle cores (CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in configs:
        mbs = [size / statistics.median(times[name, t]) / 1e6 for t in (1, 2)]
        work = [statistics.median(cpu[name, t]) / (size / 1e6) for t in (1, 2)]
        # 2 threads take at least the busiest thread's CPU time, and at least half of all threads'.
        idle = [one / max(two, every / 2) for one, two, every in zip(cpu[name, 1], most[name, 2], cpu[name, 2])
                if two > 0]
        idle_text = f"{statistics.median(idle):.2f}× ({min(idle):.2f}–{max(idle):.2f})" if idle else "–"
        print(f"| {name} | {mbs[0]:.1f} | {mbs[1]:.1f} | {ratio((name, 2), (name, 1))} | {work[0]:.4f} | "
              f"{work[1]:.4f} | {idle_text} |")
    print()
    print(f"documents ÷ one string, 1 thread (paired): "
          f"{ratio(('encode_file, documents', 1), ('encode_file, one string', 1))}")


if __name__ == "__main__":
    main()
