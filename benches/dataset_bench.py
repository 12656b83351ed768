"""encode-dataset throughput and memory, against the bounds docs/datasets.md gives.

    python benches/dataset_bench.py --quick > /tmp/dataset.md            # smoke run, about a minute
    python benches/dataset_bench.py --mb 256 --rss-mb 1024 > out.md     # the full run

It builds a Parquet dataset from the corpora (``CORPUS_DIR/<name>.txt.gz``: documents are
paragraphs, repeated until the dataset reaches ``--mb``, cut into ``--files`` files), checks
parity first (every engine's output bytes equal, and sampled documents equal ``encode``), then
times, interleaved and ``--repeats`` times each (the median is reported):

* ``local`` on 1 thread and on 2 threads (bound: 2 threads ≥ 1.8× 1 thread);
* ``ray`` with 2 workers on a local 2-CPU Ray, started once before timing (bound: ≥ 0.7×
  local on 2 threads, on at least 50 MB);
* ray's fixed cost, on two one-line inputs: per call on that running Ray (after a warm-up call,
  which also starts Ray Data's own actors), as wall time and as CPU seconds of Ray's processes
  (polled from /proc: the 2 actors' fresh processes) and of the driver, with the bound that
  CPU puts on the ratio at the dataset's size; and for one command, a fresh process that
  starts its own local Ray (wall, and CPU of its whole process tree);
* peak RSS of one worker (a child process running the local engine on 1 thread, which is the
  loop each Ray worker runs) on a ``--rss-mb`` JSONL input (bound: under 300 MB on 1 GB).

With ``--cpu`` it measures work instead of time, which a busy machine does not distort
much: each configuration runs in a fresh process (the ray engine starting its own local Ray),
once on the dataset and once on two one-line inputs, and the report gives the CPU seconds (user +
system) of the whole process tree, Ray's processes included, per MB of text: in total, and
marginal (the dataset's run minus the one-line run, so start-up, Ray's workers' included,
and vocabulary loading drop out).

    python benches/dataset_bench.py --cpu --mb 64 --repeats 2 > /tmp/cpu.md

The Markdown report goes to stdout, progress to stderr. Ray and pyarrow are needed
(``pip install 'wordsplit[ray]'``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import CORPUS_ENV, corpus_dir
from wordsplit import get_tokenizer
from wordsplit.datasets import encode_dataset

DEFAULT_CORPORA = "prose,code,multilingual"


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def paragraphs(corpus_dir: Path, names: list[str]) -> list[str]:
    docs = []
    for name in names:
        with gzip.open(corpus_dir / f"{name}.txt.gz", "rt", encoding="utf-8", newline="") as f:
            docs += [p for p in f.read().split("\n\n") if p.strip()]
    return docs


def build_parquet(docs: list[str], out: Path, total_bytes: int, files: int) -> int:
    """Write ``files`` Parquet files holding ``docs`` repeated up to ``total_bytes`` of text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    per_file = total_bytes // files
    written = 0
    i = 0
    for n in range(files):
        batch, size = [], 0
        while size < per_file:
            doc = docs[i % len(docs)]
            batch.append(doc)
            size += len(doc.encode("utf-8"))
            i += 1
        pq.write_table(pa.table({"text": batch}), out / f"part-{n:03d}.parquet", row_group_size=4096)
        written += size
    return written


def digest(out: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(out.iterdir()):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def check_parity(data: Path, work: Path, vocab: str) -> None:
    """Sampled documents of the first input equal ``encode`` (npy output, read back by its layout)."""
    import numpy as np
    import pyarrow.parquet as pq

    first = sorted(data.iterdir())[0]
    encode_dataset(first, work / "parity", vocab=vocab, format="npy", threads=2)
    ids = np.load(work / "parity" / f"00000-{first.stem}.npy")
    index = np.load(work / "parity" / f"00000-{first.stem}.idx.npy")
    texts = pq.read_table(first).column("text").to_pylist()
    tok = get_tokenizer(vocab)
    for i in range(0, len(texts), max(1, len(texts) // 200)):
        if ids[index[i]:index[i + 1]].tolist() != tok.encode(texts[i], disallowed_special=()):
            raise SystemExit(f"parity: document {i} of {first} differs from encode")


# VmHWM, not ru_maxrss: a child forked from this (large) process inherits its ru_maxrss.
RSS_CHILD = """
import sys
from wordsplit.datasets import encode_dataset
encode_dataset(sys.argv[1], sys.argv[2], vocab=sys.argv[3], format="megatron", threads=1)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def peak_rss(docs: list[str], work: Path, megabytes: int, vocab: str) -> tuple[int, int]:
    """(input bytes, peak RSS in bytes) of one worker on a JSONL input of ``megabytes``."""
    path = work / "rss.jsonl"
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        i = 0
        while size < megabytes * 1_000_000:
            line = json.dumps({"text": docs[i % len(docs)]}) + "\n"
            f.write(line)
            size += len(line)
            i += 1
    result = subprocess.run([sys.executable, "-c", RSS_CHILD, str(path), str(work / "rss-out"), vocab],
                            capture_output=True, text=True, check=True)
    path.unlink()
    return size, int(result.stdout.strip()) * 1024  # VmHWM is in kB


CPU_CHILD = """
import sys
from wordsplit.datasets import encode_dataset
data, out, vocab, engine, n = sys.argv[1:6]
options = dict(threads=int(n)) if engine == "local" else dict(workers=int(n))
encode_dataset(data, out, vocab=vocab, format="megatron", eos=True, engine=engine, **options)
"""


def tree_cpu(argv: list) -> float:
    """CPU seconds (user + system) of a command and every process it starts, however they end."""
    return tree_run(argv)[1]


def tree_run(argv: list) -> tuple[float, float]:
    """(wall seconds of the command, CPU seconds of it and every process it starts, however they end).

    This process becomes a child subreaper: the command's orphans (Ray's daemons and workers,
    which outlive their parents) are re-parented to it and reaped here, so their CPU time is in
    RUSAGE_CHILDREN with the command's own.
    """
    import ctypes
    import resource

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER (Linux)

    def used() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    before = used()
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the orphans left behind, until none is left
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.05)
    else:
        log("warning: processes still running after 60 s; their CPU time is not counted")
    return wall, used() - before


def proc_stat(pid: int) -> list:
    """The fields of /proc/<pid>/stat after the command name (so index 1 is the parent's pid)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


class RayProcessCPU:
    """CPU seconds of the processes the raylet of this process's local Ray starts, polled from /proc.

    Those are Ray's worker processes (the actors') and agents. The raylet does not wait for the
    ones that exit (their time never reaches its cutime), so a thread reads each child's time
    every 50 ms and keeps the last figure of the ones that have gone: at most 50 ms of a
    process's end is missed.
    """

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self) -> None:
        import threading

        me = str(os.getpid())
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        self.raylet = next(p for p in pids if self._stat(p)[1:2] == [me] and self._comm(p) == "raylet")
        self.seen: dict = {}  # pid: (name, CPU seconds when last read)
        self._stop = threading.Event()
        threading.Thread(target=self._poll, name="bench-ray-cpu", daemon=True).start()

    @staticmethod
    def _stat(pid: int) -> list:
        try:
            return proc_stat(pid)
        except OSError:  # the process ended meanwhile
            return []

    @staticmethod
    def _comm(pid: int) -> str:
        try:
            with open(f"/proc/{pid}/comm") as f:
                return f.read().strip()
        except OSError:
            return ""

    def children(self) -> list:
        pids: set = set()
        try:
            tasks = os.listdir(f"/proc/{self.raylet}/task")
        except OSError:  # Ray has shut down
            return []
        for task in tasks:
            try:
                with open(f"/proc/{self.raylet}/task/{task}/children") as f:
                    pids.update(int(p) for p in f.read().split())
            except OSError:
                pass
        return sorted(pids)

    def _poll(self) -> None:
        while not self._stop.wait(0.05):
            for pid in self.children():
                st = self._stat(pid)
                if st:
                    self.seen[pid] = (self._comm(pid), (int(st[11]) + int(st[12])) / self.TICK)

    def snapshot(self) -> dict:
        return {pid: cpu for pid, (_, cpu) in list(self.seen.items())}

    def since(self, before: dict) -> float:
        return sum(cpu - before.get(pid, 0.0) for pid, cpu in self.snapshot().items())

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until the encoding actors' processes, which Ray Data ends after a call, have exited."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(self._comm(pid).startswith("ray::MapWorker") for pid in self.children()):
                time.sleep(0.1)  # one more poll
                return
            time.sleep(0.1)

    def stop(self) -> None:
        self._stop.set()


def cpu_report(data: Path, work: Path, text_bytes: int, vocab: str, repeats: int, configs: dict) -> None:
    # Two one-line inputs: the ray engine then starts as many workers as on the dataset.
    tiny = work / "tiny"
    tiny.mkdir(exist_ok=True)
    for name in ("a.txt", "b.txt"):
        (tiny / name).write_text("hello\n")
    cpu: dict = {name: ([], []) for name in configs}
    for repeat in range(repeats):
        for name, (engine, n) in configs.items():
            for k, source in enumerate((data, tiny)):
                out = work / f"cpu-{repeat}-{k}"
                seconds = tree_cpu([sys.executable, "-c", CPU_CHILD, str(source), str(out), vocab, engine, str(n)])
                cpu[name][k].append(seconds)
                subprocess.run(["rm", "-rf", str(out)], check=True)
            log(f"{name}: {cpu[name][0][-1]:.2f} CPU s (one-line inputs {cpu[name][1][-1]:.2f})")
    mb = text_bytes / 1e6
    print(f"# encode-dataset CPU time: {mb:.1f} MB of text, {vocab}, megatron with eos\n")
    print(f"CPU seconds (user + system) of the whole process tree, median of {repeats}; 1-minute load average at "
          f"the end {os.getloadavg()[0]:.2f}\n")
    print("| engine | CPU s | one-line inputs CPU s | CPU ms per MB | marginal CPU ms per MB |\n|---|---|---|---|---|")
    for name, (full, small) in cpu.items():
        full_s, small_s = statistics.median(full), statistics.median(small)
        print(f"| {name} | {full_s:.2f} | {small_s:.2f} | {full_s / mb * 1000:.1f} "
              f"| {(full_s - small_s) / mb * 1000:.1f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus_dir", nargs="?", type=Path, metavar="CORPUS_DIR",
                   help=f"holds <name>.txt.gz; default: ${CORPUS_ENV}")
    p.add_argument("--mb", type=int, default=64, help="dataset size in MB of text (default 64)")
    p.add_argument("--files", type=int, default=8, help="Parquet files (default 8)")
    p.add_argument("--vocab", default="qwen3")
    p.add_argument("--corpora", default=DEFAULT_CORPORA)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rss-mb", type=int, default=1024, help="JSONL input size for the RSS probe (default 1024)")
    p.add_argument("--no-ray", action="store_true")
    p.add_argument("--quick", action="store_true", help="--mb 8 --files 4 --repeats 1 --rss-mb 32")
    p.add_argument("--cpu", action="store_true",
                   help="report CPU seconds per MB of the whole process tree instead of wall time")
    args = p.parse_args()
    if args.quick:
        args.mb, args.files, args.repeats, args.rss_mb = 8, 4, 1, 32

    docs = paragraphs(corpus_dir(args.corpus_dir, args.corpora.split(",")), args.corpora.split(","))
    with tempfile.TemporaryDirectory(prefix="wordsplit-dataset-bench-") as tmp:
        work = Path(tmp)
        data = work / "data"
        text_bytes = build_parquet(docs, data, args.mb * 1_000_000, args.files)
        log(f"dataset: {text_bytes / 1e6:.1f} MB of text in {args.files} Parquet files")
        check_parity(data, work, args.vocab)
        if args.cpu:
            configs = {"local, 1 thread": ("local", 1), "local, 2 threads": ("local", 2)}
            if not args.no_ray:
                configs["ray, 2 workers"] = ("ray", 2)
            cpu_report(data, work, text_bytes, args.vocab, args.repeats, configs)
            return

        runs = {"local, 1 thread": dict(engine="local", threads=1), "local, 2 threads": dict(engine="local", threads=2)}
        ray = None
        startup = cold = None
        if not args.no_ray:
            # Ray's fixed cost: two one-line inputs, so Ray Data starts 2 actors, as on the dataset.
            tiny = work / "tiny"
            tiny.mkdir()
            for name in ("a.txt", "b.txt"):
                (tiny / name).write_text("hello\n")
            # First what one command pays: a fresh process that starts its own local Ray (before
            # this process starts one, so the two do not share the cores).
            cold_runs = [tree_run([sys.executable, "-c", CPU_CHILD, str(tiny), str(work / f"cold-{i}"), args.vocab,
                                   "ray", "2"]) for i in range(max(1, args.repeats))]
            cold = tuple(statistics.median(r[k] for r in cold_runs) for k in (0, 1))
            log(f"ray in a fresh process: {cold[0]:.2f} s, {cold[1]:.2f} CPU s")
            import ray

            ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                     configure_logging=False)
            runs["ray, 2 workers"] = dict(engine="ray", workers=2)
            procs = RayProcessCPU()

            def startup_call(i: int) -> tuple:
                """(wall, CPU s of Ray's processes, CPU s of this process) of one call on the one-line inputs."""
                procs.settle()
                ray_before, own_before, started = procs.snapshot(), time.process_time(), time.perf_counter()
                encode_dataset(tiny, work / f"tiny-{i}", vocab=args.vocab, format="npy", engine="ray", workers=2)
                wall, own = time.perf_counter() - started, time.process_time() - own_before
                procs.settle()  # the actors' processes end after the call: count them to the end
                return wall, procs.since(ray_before), own

            # The first call on a new Ray also starts Ray Data's own actors (stats, autoscaling
            # coordinator, actor locations), once per cluster: not part of the per-call cost.
            startup_call(-1)
            calls = [startup_call(i) for i in range(max(1, args.repeats))]
            startup = tuple(statistics.median(c[k] for c in calls) for k in (0, 1, 2))
            log(f"ray start-up: {startup[0]:.2f} s, {startup[1]:.2f} CPU s in Ray's processes, "
                f"{startup[2]:.2f} in the driver")
            procs.stop()
        times: dict = {name: [] for name in runs}
        digests = {}
        for repeat in range(args.repeats):
            for k, (name, options) in enumerate(runs.items()):
                out = work / f"out-{repeat}-{k}"
                seconds = timed(lambda: encode_dataset(data, out, vocab=args.vocab, format="megatron", eos=True,
                                                       **options))
                times[name].append(seconds)
                digests[name] = digest(out)
                log(f"{name}: {seconds:.2f} s")
                subprocess.run(["rm", "-rf", str(out)], check=True)
        if len(set(digests.values())) != 1:
            raise SystemExit(f"parity: the engines wrote different bytes: {digests}")
        if ray is not None:
            ray.shutdown()
        rss_input, rss = peak_rss(docs, work, args.rss_mb, args.vocab)

    median = {name: statistics.median(t) for name, t in times.items()}
    base = median["local, 2 threads"]
    load = os.getloadavg()[0]
    print(f"# encode-dataset: {text_bytes / 1e6:.1f} MB of text, {args.files} Parquet files, vocab {args.vocab}, "
          f"format megatron\n")
    print(f"median of {args.repeats} interleaved runs; 1-minute load average at the end {load:.2f}; "
          "all runs wrote identical bytes\n")
    print("| engine | seconds | MB/s | vs local 2 threads |\n|---|---|---|---|")
    for name, seconds in median.items():
        print(f"| {name} | {seconds:.2f} | {text_bytes / seconds / 1e6:.1f} | {base / seconds:.2f}x |")
    one = median["local, 1 thread"]
    print(f"\n- local 2 threads / 1 thread: **{one / base:.2f}x** (bound ≥ 1.8x)")
    if "ray, 2 workers" in median:
        print(f"- ray 2 workers / local 2 threads: **{base / median['ray, 2 workers']:.2f}x** (bound ≥ 0.7x on ≥ 50 MB;"
              f" this run: {text_bytes / 1e6:.0f} MB)")
    if startup is not None:
        wall, ray_cpu, own_cpu = startup
        cores = os.cpu_count() or 1
        print(f"- ray's fixed cost per call on a running Ray (two one-line inputs: Ray Data starts 2 actors in fresh "
              f"processes, which import Ray Data and load the vocabulary): {wall:.2f} s; {ray_cpu:.2f} CPU s in "
              f"Ray's processes ({ray_cpu / 2:.2f} per actor), {own_cpu:.2f} in the driver")
        # The fixed CPU cannot run in less than its share of the cores, beside the encoding's own.
        bound = base / (base + (ray_cpu + own_cpu) / cores)
        print(f"- so on {cores} cores, at this size and at local 2 threads' speed, ray 2 workers can reach at most "
              f"{bound:.2f}x local 2 threads")
    if cold is not None:
        print(f"- one command's fixed cost (a fresh process on two one-line inputs: it starts a local Ray, Ray Data "
              f"its own actors and the 2 encoding actors): {cold[0]:.2f} s, {cold[1]:.2f} CPU s in all its processes")
    print(f"- peak RSS of one worker on a {rss_input / 1e6:.0f} MB JSONL input: **{rss / 1e6:.0f} MB** "
          "(bound < 300 MB on 1 GB)")


if __name__ == "__main__":
    main()
