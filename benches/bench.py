"""wordsplit benchmark: one pass over whole corpora, throughput, batch, decode, load time,
memory and worst cases, with every contender checked against the reference tokenizer.

    python benches/bench.py [CORPUS_DIR] [--max-bytes 4MB] [--quick] [--json out.json] > table.md
    python benches/bench.py --baseline OLD.whl --baseline-name COMMIT ...   # and compare with another build

Markdown goes to stdout, progress and parity reports to stderr. See benches/README.md for what
each section measures and how to read it.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import gzip
import hashlib
import importlib.util
import json
import math
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from array import array
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from corpus import CORPUS_ENV, corpus_dir
from contenders import (BATCH_THREADS, NUMPY, ORACLE, Contender, as_id_list, build_contenders, peer_keys,
                        prepare_data_dir, wordsplit_variant_keys)
from report import machine_info, render, versions
from timing import WARM_UP, Runner, fresh
from worker import receive, send

HERE = Path(__file__).resolve().parent
DEFAULT_CORPORA = "prose,code,multilingual,adv_random_unicode,adv_whitespace"
# name -> a corpus file, or one character repeated to 1 MiB. Dashes and tabs: run tokens of
# many lengths, the slowest inputs found for the backtrack encoder.
WORST_INPUTS = {"a": "adv_repeat_a", "spaces": " ", "dashes": "-", "tabs": "\t"}
WORST_SIZES = [100_000, 200_000, 400_000, 1 << 20]
PIECE_LENGTHS = [10, 100, 1_000, 10_000]
# The checked (first) passes take turns in blocks of documents of at least this many bytes.
FIRST_PASS_BLOCK = 64_000
# Batch scaling is a ratio of two short calls: more rounds than the other sections.
SCALING_ROUNDS_PER_REPEAT = 3
SECTIONS = ("onepass", "single", "batch", "decode", "load", "cache", "rss", "worst", "pieces")
QUICK_DEFAULTS = dict(max_bytes="256KB", python_bytes="32KB", repeats=3, load_runs=2, worst_budget=5.0,
                      onepass_max_bytes="1MB", onepass_runs=1, worst_rounds=2)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_size(text: str) -> int:
    """``"4MB"`` → 4_000_000, ``"1MiB"`` → 1_048_576, ``"250000"`` → 250_000."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([KMG]i?B?)?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    unit = (match.group(2) or "").upper().rstrip("B")
    scale = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "KI": 2**10, "MI": 2**20, "GI": 2**30}[unit]
    return int(float(match.group(1)) * scale)


# -- corpus ---------------------------------------------------------------------------------


def split_documents(text: str, doc_bytes: int) -> list[str]:
    """Cut ``text`` into documents of about ``doc_bytes`` UTF-8 bytes.

    Paragraphs (ending at a blank line) are packed together until a document reaches
    ``doc_bytes``; a paragraph longer than that is cut every ``doc_bytes`` characters.
    """
    docs, current, size = [], [], 0
    for paragraph in re.split(r"(?<=\n\n)", text):
        for start in range(0, len(paragraph), doc_bytes):
            part = paragraph[start:start + doc_bytes]
            current.append(part)
            size += len(part.encode("utf-8"))
            if size >= doc_bytes:
                docs.append("".join(current))
                current, size = [], 0
    if current:
        docs.append("".join(current))
    return docs


def stride_sample(docs: list[str], max_bytes: int) -> list[int]:
    """Indices of documents spread evenly over ``docs`` whose sizes add up to ≈ ``max_bytes``."""
    total = utf8_len(docs)
    if total <= max_bytes:
        return list(range(len(docs)))
    take = max(1, round(len(docs) * max_bytes / total))
    return sorted({j * len(docs) // take for j in range(take)})


def read_corpus(corpus_dir: Path, name: str) -> str:
    with gzip.open(corpus_dir / f"{name}.txt.gz", "rt", encoding="utf-8", newline="") as f:
        return f.read()


def utf8_len(texts: list[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


# -- timing and parity ----------------------------------------------------------------------


def parallel_ceiling(threads: int = BATCH_THREADS, rounds: int = 5) -> float:
    """How much faster ``threads`` threads finish ``threads`` equal jobs than one thread does,
    on this machine right now (sha256 releases the GIL): the most a batch can gain here. On a
    shared machine it is below ``threads``; best of ``rounds``."""
    from concurrent.futures import ThreadPoolExecutor

    data = bytes(16_000_000)
    job = lambda _: hashlib.sha256(data).digest()  # noqa: E731
    best = 0.0
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(rounds):
            start = time.perf_counter()
            for i in range(threads):
                job(i)
            serial = time.perf_counter() - start
            start = time.perf_counter()
            list(pool.map(job, range(threads)))
            best = max(best, serial / (time.perf_counter() - start))
    return best


def interleaved(jobs: dict[str, Callable[[], tuple]], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Run every job ``repeats`` times, round-robin (one run of each per round, the starting
    job rotating), so drift in machine speed hits all contenders alike. A job times itself and
    returns ``(..., wall s, CPU s)`` (a :class:`timing.Runner` method), so a job run in a
    baseline worker is timed there, by the same code and clock.

    Returns ``{key: {"wall": [...], "cpu": [...]}}``.
    """
    keys = list(jobs)
    times = {k: {"wall": [], "cpu": []} for k in keys}
    for round_ in range(repeats):
        shift = round_ % len(keys) if keys else 0
        for key in keys[shift:] + keys[:shift]:
            *_, wall, cpu = jobs[key]()
            times[key]["wall"].append(wall)
            times[key]["cpu"].append(cpu)
    return times


def doc_blocks(docs: list[str], block_bytes: int) -> list[list[int]]:
    """Consecutive runs of document indices of at least ``block_bytes`` UTF-8 bytes each (the
    last one may be shorter)."""
    blocks, block, size = [], [], 0
    for i, doc in enumerate(docs):
        block.append(i)
        size += len(doc.encode("utf-8"))
        if size >= block_bytes or i == len(docs) - 1:
            blocks.append(block)
            block, size = [], 0
    return blocks


def first_passes(runners: dict[str, Runner], tag: str, subsets: dict[str, list[int]], docs: list[str],
                 budget: float) -> dict[str, tuple[list[list[int]], dict, bool]]:
    """Each runner's first pass over its subset of ``docs`` (indices; stored in every runner
    under ``tag``), a block of documents (≥ FIRST_PASS_BLOCK bytes) at a time across the
    runners, the first of each round rotating: a drift in machine speed hits every first pass
    alike, while each encoder still runs long enough per block that the CPU caches the others
    used are refilled (a small share of its time). Per key: ``(ids, {"wall": s, "cpu": s,
    "blocks": [[block, wall, cpu], ...]} of the whole pass, done)``; an encoder past
    ``budget`` wall seconds stops there (done=False)."""
    blocks = doc_blocks(docs, FIRST_PASS_BLOCK)
    ids = {key: [] for key in runners}
    seconds = {key: {"wall": 0.0, "cpu": 0.0, "blocks": []} for key in runners}
    stopped: set[str] = set()
    keys = list(runners)
    wanted = {key: set(subsets[key]) for key in keys}
    gc.collect()
    for n, block in enumerate(blocks):
        shift = n % len(keys) if keys else 0
        for key in keys[shift:] + keys[:shift]:
            mine = [i for i in block if i in wanted[key]]
            if key in stopped or not mine:
                continue
            # fresh copies: this contender pays the str's UTF-8 conversion (see timing.fresh)
            runners[key].put(tag + "#first", [fresh(docs[i]) for i in mine])
            got, wall, cpu = runners[key].encode(tag + "#first", keep=True, collect=False)
            ids[key] += got
            seconds[key]["cpu"] += cpu
            seconds[key]["wall"] += wall
            seconds[key]["blocks"].append([n, wall, cpu])
            if seconds[key]["wall"] > budget:
                stopped.add(key)
    return {key: (ids[key], seconds[key], key not in stopped) for key in keys}


@dataclass
class Parity:
    """How a contender's output compares with the oracle's over a list of documents."""

    checked: int
    mismatched: int
    first: Optional[str] = None  # where the first mismatch is, for the report

    @property
    def ok(self) -> bool:
        return self.mismatched == 0


def compare(expected: list, got: list) -> Parity:
    """Document-by-document equality of two output lists (ids or decoded strings); ids in
    numpy arrays or ``array("I")`` are compared as lists."""
    expected, got = ([g if isinstance(g, str) else as_id_list(g) for g in side] for side in (expected, got))
    bad = [i for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    first = None
    if bad:
        e, g = expected[bad[0]], got[bad[0]]
        pos = next((k for k, (x, y) in enumerate(zip(e, g)) if x != y), min(len(e), len(g)))
        show = (lambda part: part) if isinstance(e, str) else list  # noqa: E731 -- ids may be arrays
        first = f"doc {bad[0]}, item {pos}: expected {show(e[pos:pos + 4])!r}, got {show(g[pos:pos + 4])!r}"
    return Parity(checked=min(len(expected), len(got)), mismatched=len(bad), first=first)


def report_parity(what: str, c: Contender, parity: Optional[Parity]) -> Optional[dict]:
    """Log a mismatch; the parity as a plain dict for the results."""
    if parity is None:
        return None
    if not parity.ok:
        log(f"    MISMATCH ({what}) {c.label}: {parity.mismatched}/{parity.checked} docs; first at {parity.first}")
    return asdict(parity)


def throughput_entry(c: Contender, nbytes: int, times: dict, clock: str, parity: Optional[dict], **extra) -> dict:
    """One table cell's raw data: MB/s (10^6 bytes per second) from the median time on ``clock``
    (``"wall"`` or ``"cpu"``); both clocks' times are kept."""
    median = statistics.median(times[clock])
    return {"label": c.label, "bytes": nbytes, "times": times["wall"], "cpu_times": times["cpu"], "clock": clock,
            "median_s": median, "mb_s": nbytes / median / 1e6, "parity": parity, **extra}


# -- baseline: another wordsplit build, in a worker process ---------------------------------

BASELINE_KEY = "baseline"
# The build under test in a worker too: the baseline's twin, so the two are compared under the
# same conditions (a small worker process, not this one with every contender loaded); its
# ratio to wordsplit auto in this process shows what the process alone changes.
WORKER_KEY = "wordsplit:worker"
# PYTHONPATH as it was before the snapshot was put on it: a baseline's processes get the
# baseline's root in front of this instead, so they never see the snapshot.
ORIGINAL_PYTHONPATH_ENV = "WORDSPLIT_BENCH_PYTHONPATH"  # set by snapshot_wordsplit for child processes
ORIGINAL_PYTHONPATH = os.environ.get(ORIGINAL_PYTHONPATH_ENV, os.environ.get("PYTHONPATH"))


def unpack_build(source: Path, dest: Path) -> Path:
    """Put the ``wordsplit`` package of ``source`` (a wheel, a directory holding
    ``wordsplit/``, or a source tree holding ``src/wordsplit/``), with its built extension,
    into ``dest``; returns ``dest``, the root to put on ``PYTHONPATH``. Like the snapshot,
    it is a copy, compiled to bytecode (``--baseline``, ``--wordsplit``)."""
    if source.is_file() and source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            wheel.extractall(dest, [n for n in wheel.namelist() if n.startswith("wordsplit/")])
    else:
        package = next((p for p in (source / "wordsplit", source / "src" / "wordsplit")
                        if (p / "__init__.py").is_file()), None)
        if package is None:
            raise SystemExit(f"{source}: no wordsplit/ or src/wordsplit/ package there; "
                             "give a wheel or an unpacked one (see benches/README.md)")
        shutil.copytree(package, dest / "wordsplit", ignore=shutil.ignore_patterns("__pycache__"))
    if not list((dest / "wordsplit").glob("_native*.so")):
        raise SystemExit(f"{source}: wordsplit has no built extension (_native*.so); build a wheel "
                         "with `pip wheel --no-deps -w DIR SOURCE_TREE` (see benches/README.md)")
    compileall.compile_dir(dest / "wordsplit", quiet=1)
    return dest


def baseline_env(root: Path) -> dict[str, str]:
    """The environment of a baseline process: its root first on ``PYTHONPATH``, no snapshot."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), ORIGINAL_PYTHONPATH]))
    return env


class RemoteRunner:
    """A :class:`timing.Runner` in a worker process (``worker.py``) that imports the wordsplit
    build under ``root`` (``TokenizerOptions()`` defaults): the same methods, forwarded over a
    pipe, timed inside the worker.

    ``contender`` stands for it in the measurement lists (key ``key``, label ``ws NAME
    (S+E)``); its ``encode``/``decode``/``encode_batch`` work (one round trip per call) but
    the timed work goes through the runner methods."""

    def __init__(self, vocab: str, root: Path, name: str, key: str = BASELINE_KEY) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "worker.py"), "wordsplit:auto", vocab, str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=HERE, env=baseline_env(root))
        info = self._reply()
        label = f"ws {name}" + info["label"].removeprefix("ws auto")
        self.contender = Contender(
            key=key, label=label, vocab=vocab, encode=lambda text: self.repeat(text, 1)[0],
            encode_batch=self._batch if info["has_batch"] else None,
            decode=self._decode if info["has_decode"] else None,
            notes=[f"{label}: " + ("the build under test" if key == WORKER_KEY else "the baseline")
                   + ", in a worker process"])

    def _reply(self):
        try:
            status, value = receive(self.proc.stdout)
        except EOFError:
            raise RuntimeError(f"baseline worker exited with code {self.proc.wait()} (its error is above)") from None
        if status == "error":
            raise RuntimeError(f"baseline worker: {value}")
        return value

    def call(self, method: str, *args):
        send(self.proc.stdin, (method, args))
        return self._reply()

    def put(self, tag: str, items: list) -> None:
        self.call("put", tag, items)

    def encode(self, tag: str, indices: Optional[list[int]] = None, keep: bool = False, collect: bool = True):
        return self.call("encode", tag, indices, keep, collect)

    def batch(self, tag: str, threads: int, keep: bool = False):
        return self.call("batch", tag, threads, keep)

    def decode(self, tag: str, keep: bool = False):
        return self.call("decode", tag, keep)

    def repeat(self, text: str, calls: int):
        return self.call("repeat", text, calls)

    def _batch(self, texts: list[str], threads: int) -> list[list[int]]:
        self.put("_call", texts)
        return self.batch("_call", threads, keep=True)[0]

    def _decode(self, ids: list[int]) -> str:
        self.put("_call", [ids])
        return self.decode("_call", keep=True)[0][0]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.call("exit")
            self.proc.wait(timeout=60)


def start_workers(vocab: str, args, notes: list[str]) -> list[RemoteRunner]:
    """With ``--baseline``: the workers for ``vocab`` of the build under test (key
    ``WORKER_KEY``) and of the baseline (``BASELINE_KEY``), in that order; a worker that does
    not start is left out, with a note."""
    if not args.baseline:
        return []
    workers = []
    for root, name, key in ((args.current_root, "auto/worker", WORKER_KEY),
                            (args.baseline_root, f"{args.baseline_name}/worker", BASELINE_KEY)):
        try:
            workers.append(RemoteRunner(vocab, root, name, key))
        except RuntimeError as err:
            notes.append(f"{vocab}: worker {name} failed to start: {err}")
            log(f"  worker {name} for {vocab}: {err}")
    return workers


# -- measurements (in this process) ---------------------------------------------------------


def measure_single(contenders: list[Contender], runners: dict[str, Runner], tag: str,
                   expected: Optional[list[array]], docs: list[str], python_idx: list[int], args) -> dict:
    """Single-thread encode of every document of one corpus, one call per document.

    First a checked pass: every contender encodes all documents (wordsplit's Python backend
    only the ``python_idx`` subset) and is compared with the oracle's ids ``expected``. A
    pass that overruns ``--pass-budget`` drops the contender from timing. Then ``--repeats``
    interleaved timed passes.

    The checked pass is also reported on its own (``first_pass``): it is the first time each
    contender sees these documents, so caches of recent pieces (wordsplit's, HF's) hold
    nothing of them yet, whereas the timed passes repeat the same documents. The contenders
    take turns over their checked passes, a block of documents at a time (:func:`first_passes`),
    so those are paired too. ``runners`` run each contender's passes (a baseline's in its
    worker); ``docs`` are stored in them under ``tag``.
    """
    cells, jobs, subsets, first = {}, {}, {}, {}
    indices = {c.key: list(python_idx if c.key == "wordsplit:python" else range(len(docs))) for c in contenders}
    passes = first_passes({c.key: runners[c.key] for c in contenders}, tag, indices, docs, args.pass_budget)
    for c in contenders:
        idx = indices[c.key]
        subsets[c.key] = [docs[i] for i in idx]
        ids, seconds, done = passes.pop(c.key)
        parity = report_parity("encode", c, compare([expected[i] for i in idx], ids) if expected else None)
        # Checked, the ids are dropped: kept through the timed passes (a million Python ints
        # or more), the collection before each pass would walk them all and leave every
        # contender's pass to start with the CPU's caches and TLB flushed.
        del ids
        if not done:
            log(f"    {c.label}: over the {args.pass_budget:.0f} s pass budget; not timed")
            cells[c.key] = {"label": c.label, "timeout_s": seconds["wall"], "parity": parity}
            continue
        first[c.key] = seconds
        cells[c.key] = parity
        subset = None if len(idx) == len(docs) else idx
        jobs[c.key] = lambda runner=runners[c.key], subset=subset: runner.encode(tag, subset)
    by_key = {c.key: c for c in contenders}
    for key, times in interleaved(jobs, args.repeats).items():
        nbytes = utf8_len(subsets[key])
        cells[key] = throughput_entry(by_key[key], nbytes, times, args.clock, cells[key], docs=len(subsets[key]),
                                      first_pass_s=first[key][args.clock],
                                      first_pass_mb_s=nbytes / first[key][args.clock] / 1e6,
                                      first_pass_blocks=first[key]["blocks"])
    return cells


def measure_batch(contenders: list[Contender], runners: dict[str, Runner], tag: str,
                  expected: Optional[list[array]], docs: list[str], args) -> dict:
    """One ``encode_batch`` call (2 threads) over all documents of one corpus (stored in the
    runners under ``tag``), per contender; checked against the oracle's ids first. Always
    wall time (CPU time adds up the threads)."""
    parities, jobs = {}, {}
    for c in contenders:
        if c.encode_batch is None:
            continue
        ids, _, _ = runners[c.key].batch(tag, BATCH_THREADS, keep=True)
        parities[c.key] = report_parity("batch", c, compare(expected, ids) if expected else None)
        del ids  # not kept through the timed calls (see measure_single)
        jobs[c.key] = lambda runner=runners[c.key]: runner.batch(tag, BATCH_THREADS)
    by_key = {c.key: c for c in contenders}
    return {key: throughput_entry(by_key[key], utf8_len(docs), times, "wall", parities[key])
            for key, times in interleaved(jobs, args.repeats).items()}


def measure_scaling(contenders: list[Contender], runners: dict[str, Runner], tag: str, docs: list[str],
                    rounds: int) -> dict:
    """How much faster ``encode_batch`` finishes all documents of one corpus on 2 threads than
    on 1, per contender: the median over ``rounds`` of the ratio of two back-to-back calls
    (which goes first alternates). Pairing the calls cancels this shared machine's slow and
    fast spells, which last far longer than one pair; wall time."""
    result = {}
    for c in contenders:
        if c.encode_batch is None or c.batch_threads_fixed:
            continue
        one, two, ratios = [], [], []
        for round_ in range(rounds):
            calls = [(1, one), (BATCH_THREADS, two)]
            for threads, times in calls if round_ % 2 == 0 else calls[::-1]:
                times.append(runners[c.key].batch(tag, threads)[1])
            ratios.append(one[-1] / two[-1])
        result[c.key] = {"label": c.label, "bytes": utf8_len(docs), "ratio": statistics.median(ratios),
                         "one_thread_s": statistics.median(one), "two_threads_s": statistics.median(two),
                         "one_thread_times": one, "two_thread_times": two, "ratios": ratios}
    return result


def measure_decode(contenders: list[Contender], runners: dict[str, Runner], oracle: Optional[Contender],
                   id_arrays: list[array], args) -> dict:
    """Decode the oracle's ids of every document back to text, one call per document, per
    contender; each output is checked against the oracle's decode. Reports M ids/s and MB/s
    of UTF-8 output."""
    if oracle is None or oracle.decode is None:
        return {}
    id_lists = [ids.tolist() for ids in id_arrays]
    expected = [oracle.decode(ids) for ids in id_lists]
    out_bytes, n_ids = utf8_len(expected), sum(len(ids) for ids in id_lists)
    parities, jobs = {}, {}
    for c in contenders:
        if c.decode is None:
            continue
        runners[c.key].put("decode", id_lists)
        got, _, _ = runners[c.key].decode("decode", keep=True)
        parities[c.key] = report_parity("decode", c, compare(expected, got))
        jobs[c.key] = lambda runner=runners[c.key]: runner.decode("decode")
    by_key = {c.key: c for c in contenders}
    return {key: throughput_entry(by_key[key], out_bytes, times, args.clock, parities[key], n_ids=n_ids,
                                  mids_s=n_ids / statistics.median(times[args.clock]) / 1e6)
            for key, times in interleaved(jobs, args.repeats).items()}


# Every byte value to a lowercase letter (``bytes.translate``): random bytes become random letters.
LETTERS = bytes(97 + b % 26 for b in range(256))
# One contender's round of new pieces of one length: at most this many bytes and pieces (all
# rounds' pieces are made before the timing, as Python strings).
UNSEEN_ROUND_BYTES = 2_000_000
UNSEEN_ROUND_PIECES = 20_000


def random_letters(n: int, rng: random.Random) -> str:
    """``n`` random lowercase ASCII letters: one pre-token under every pattern benchmarked."""
    return rng.randbytes(n).translate(LETTERS).decode()


def new_pieces(length: int, count: int, rng: random.Random) -> list[str]:
    """``count`` pieces of ``length`` random lowercase letters (distinct in practice: ten
    letters already have 26^10 values)."""
    return [random_letters(length, rng) for _ in range(count)]


def piece_cells(contenders: list[Contender], times: dict, calls: dict, parity: dict, clock: str) -> dict:
    """The piece sweep's cells of one length, ``{key: cell}``, from :func:`interleaved`'s
    ``times`` of jobs of ``calls[key]`` calls each."""
    labels = {c.key: c.label for c in contenders}
    return {key: {"label": labels[key], "us_per_call": statistics.median(t[clock]) / calls[key] * 1e6,
                  "calls": calls[key], "times": t["wall"], "cpu_times": t["cpu"], "parity_ok": parity[key]}
            for key, t in times.items()}


def measure_unseen(contenders: list[Contender], runners: dict[str, Runner], oracle: Optional[Contender],
                   length: int, args) -> dict:
    """Time per encode call of pieces of ``length`` random letters, each call on a piece that
    contender has not seen: what a piece costs the first time, where :func:`measure_pieces`'
    repeated piece is answered by each library's cache of pieces.

    Each round of a contender encodes a list of new pieces, as many as last about 30 ms (and
    at most ``UNSEEN_ROUND_BYTES``); the per-call time is the median over ``--repeats``
    interleaved rounds divided by that count. Parity: three other new pieces against the oracle.
    """
    rng = random.Random(length)
    check = new_pieces(length, 3, rng)
    expected = [oracle.encode(text) for text in check] if oracle else None
    jobs, calls, parity, rounds = {}, {}, {}, [f"unseen-{r}" for r in range(args.repeats)]
    for c in contenders:
        runner = runners[c.key]
        runner.put("unseen-check", check)
        got, _, _ = runner.encode("unseen-check", keep=True)
        parity[c.key] = None if expected is None else [as_id_list(ids) for ids in got] == expected
        if parity[c.key] is False:
            log(f"    MISMATCH (new piece {length}) {c.label}")
        runner.put("unseen-probe", new_pieces(length, 10, rng))
        per_call = runner.encode("unseen-probe")[2 if args.clock == "cpu" else 1] / 10
        calls[c.key] = max(1, min(UNSEEN_ROUND_PIECES, UNSEEN_ROUND_BYTES // length,
                                   math.ceil(0.03 / max(per_call, 1e-9))))
        for tag in rounds:  # made before any timing, each round's pieces new to this contender
            runner.put(tag, new_pieces(length, calls[c.key], rng))
        jobs[c.key] = lambda runner=runner, tags=iter(rounds): runner.encode(next(tags))
    times = interleaved(jobs, args.repeats)
    for c in contenders:
        for tag in rounds:
            runners[c.key].put(tag, [])
    return piece_cells(contenders, times, calls, parity, args.clock)


def measure_pieces(contenders: list[Contender], runners: dict[str, Runner], oracle: Optional[Contender],
                   args) -> dict:
    """Time per encode call of one unsplittable piece of random letters, per length: the same
    piece every call (``{length: {key: cell}}``), and a new piece every call
    (``{"unseen": {length: {key: cell}}}``, :func:`measure_unseen`).

    Each job loops enough calls to last about 30 ms; the per-call time is the median over
    ``--repeats`` interleaved rounds divided by that count.
    """
    result = {"unseen": {str(length): measure_unseen(contenders, runners, oracle, length, args)
                         for length in PIECE_LENGTHS}}
    for length in PIECE_LENGTHS:
        text = random_letters(length, random.Random(length))
        expected = oracle.encode(text) if oracle else None
        jobs, calls, parity = {}, {}, {}
        for c in contenders:
            ids, _, _ = runners[c.key].repeat(text, 1)
            # calls per job from the faster of two 10-call loops: one slow first call (a page
            # fault, a fresh worker) would otherwise leave a job of a few calls, all overhead
            per_call = min(runners[c.key].repeat(text, 10)[1] for _ in range(2)) / 10
            calls[c.key] = max(1, min(100_000, math.ceil(0.03 / max(per_call, 1e-9))))
            parity[c.key] = None if expected is None else ids == expected
            if parity[c.key] is False:
                log(f"    MISMATCH (piece {length}) {c.label}")
            jobs[c.key] = lambda runner=runners[c.key], n=calls[c.key]: runner.repeat(text, n)
        result[str(length)] = piece_cells(contenders, interleaved(jobs, args.repeats), calls, parity, args.clock)
    return result


def measure_vocab(vocab: str, corpora: dict, sections: list[str], results: dict, args) -> None:
    """The in-process sections (single, batch, decode, pieces) for one vocabulary; with
    ``--baseline``, the baseline build takes part from its worker process."""
    meta = results["meta"]
    keys = ["wordsplit:auto", "wordsplit:auto" + NUMPY, *wordsplit_variant_keys(), "wordsplit:python",
            *peer_keys(vocab, numpy=True)]
    contenders, skipped = build_contenders(keys, vocab)
    workers = start_workers(vocab, args, meta["notes"])
    contenders[1:1] = [w.contender for w in workers]
    meta["notes"] += [n for c in contenders for n in c.notes]
    not_applicable = [k for k, why in skipped.items() if why.startswith("UnsupportedTokenizerError")]
    if not_applicable:
        meta["notes"].append(f"{vocab}: not applicable to its pattern (UnsupportedTokenizerError): "
                             + ", ".join(k.removeprefix("wordsplit:native:") for k in not_applicable))
    meta["notes"] += [f"{vocab}: {k} failed to build: {why}" for k, why in skipped.items() if k not in not_applicable]
    oracle = next((c for c in contenders if c.key == ORACLE[vocab]), None)
    if oracle is None:
        meta["notes"].append(f"{vocab}: oracle {ORACLE[vocab]} unavailable, parity not checked")
    log(f"{vocab}: {[c.label for c in contenders]}; skipped {list(skipped)}")
    by_key = {c.key: c for c in contenders}
    remote = {w.contender.key: w for w in workers}
    runners = {c.key: remote.get(c.key) or Runner(c) for c in contenders}
    for runner in runners.values():
        # a short text first (see timing.WARM_UP): the first pass's documents are not billed
        # for a library's one-time setup
        runner.put("warm-up", [WARM_UP])
        runner.encode("warm-up")
    wordsplit_keys = ["wordsplit:auto", WORKER_KEY, BASELINE_KEY]
    variant_keys = {*wordsplit_variant_keys(), "wordsplit:python"}
    try:
        decode_ids = []
        for name, (docs, python_idx) in corpora.items():
            # as arrays, which the garbage collector does not walk (see measure_single)
            expected = [array("I", oracle.encode(doc)) for doc in docs] if oracle else None
            decode_ids += expected or []
            for runner in runners.values():
                runner.put(name, docs)
            if "single" in sections:
                log(f"  single {vocab}/{name}")
                # Two rounds, each its contenders taking turns: the libraries' headline
                # tokenizers (and a baseline build), then wordsplit's other encoder and spanner
                # variants and its Python backend. In one round, each wordsplit pass would
                # follow six more wordsplit passes than a peer's does, each with caches of its
                # own, filling the CPU's caches with them.
                headline = [c for c in contenders if c.key not in variant_keys]
                variants = [c for c in contenders if c.key in variant_keys]
                cells = measure_single(headline, runners, name, expected, docs, python_idx, args)
                if variants:
                    cells |= measure_single(variants, runners, name, expected, docs, python_idx, args)
                results.setdefault("single", {}).setdefault(vocab, {})[name] = cells
            if "batch" in sections:
                log(f"  batch {vocab}/{name}")
                batch_keys = [*wordsplit_keys, "wordsplit:auto" + NUMPY, *peer_keys(vocab, numpy=True)]
                batchers = [by_key[k] for k in batch_keys if k in by_key and by_key[k].encode_batch is not None]
                results.setdefault("batch", {}).setdefault(vocab, {})[name] = \
                    measure_batch(batchers, runners, name, expected, docs, args)
                results.setdefault("scaling", {}).setdefault(vocab, {})[name] = \
                    measure_scaling(batchers, runners, name, docs, SCALING_ROUNDS_PER_REPEAT * args.repeats)
        if "decode" in sections:
            log(f"  decode {vocab}")
            decoders = [by_key[k] for k in [*wordsplit_keys, "wordsplit:python", *peer_keys(vocab)] if k in by_key]
            results.setdefault("decode", {})[vocab] = measure_decode(decoders, runners, oracle, decode_ids, args)
        if "pieces" in sections:
            log(f"  pieces {vocab}")
            sweepers, _ = build_contenders(encoder_keys(vocab), vocab)
            sweepers[1:1] = [w.contender for w in workers]
            sweep_runners = {c.key: runners.get(c.key) or Runner(c) for c in sweepers}
            results.setdefault("pieces", {})[vocab] = measure_pieces(sweepers, sweep_runners, oracle, args)
    finally:
        for worker in workers:
            worker.close()


# -- measurements (fresh subprocesses) ------------------------------------------------------


def run_probe(args_: list[str], timeout: float, env: Optional[dict] = None) -> tuple[list[dict], Optional[str]]:
    """Run ``probes.py`` with ``args_`` (in ``env``, default this one); the JSON lines it
    printed, and an error if it failed."""
    cmd = [sys.executable, str(HERE / "probes.py"), *args_]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE, env=env)
        stdout = proc.stdout
        error = None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        error = f"killed after {timeout:.0f} s"
    return [json.loads(line) for line in stdout.splitlines() if line.strip()], error


def load_keys(vocab: str, args=None) -> list[str]:
    """The contenders whose load time and memory are measured: one genuine tokenizer per
    library, and the baseline build if there is one."""
    return ["wordsplit:auto", *([BASELINE_KEY] if args and args.baseline else []), ORACLE[vocab], "quicktok",
            "gigatoken", "fastokens"]


def probe(kind: str, key: str, vocab: str, args, extra: tuple = (),
          timeout: float = 120) -> tuple[list[dict], Optional[str]]:
    """Run the ``kind`` probe for contender ``key``; the baseline is ``wordsplit:auto`` run in
    the baseline's environment, relabelled ``ws NAME (S+E)``."""
    if key != BASELINE_KEY:
        return run_probe([kind, key, vocab, *extra], timeout)
    lines, error = run_probe([kind, "wordsplit:auto", vocab, *extra], timeout, env=baseline_env(args.baseline_root))
    for line in lines:
        if "label" in line:
            line["label"] = f"ws {args.baseline_name}" + line["label"].removeprefix("ws auto")
    return lines, error


def measure_load(vocabs: list[str], args) -> dict:
    """Import + construct + first encode in a fresh process: one warm-up run (fills the OS
    file cache), then ``--load-runs`` runs, round-robin over contenders; medians."""
    result = {}
    for vocab in vocabs:
        keys = load_keys(vocab, args)
        runs: dict[str, list[dict]] = {k: [] for k in keys}
        errors: dict[str, str] = {}
        for round_ in range(args.load_runs + 1):
            for key in keys:
                if key in errors:
                    continue
                lines, error = probe("load", key, vocab, args)
                if error:
                    errors[key] = error
                elif round_ > 0:
                    runs[key].append(lines[0])
        result[vocab] = {}
        for key in keys:
            if key in errors:
                result[vocab][key] = {"label": key, "error": errors[key]}
            else:
                parts = ("import", "construct", "first_encode", "total")
                result[vocab][key] = {"label": runs[key][0]["label"], "runs": runs[key],
                                      **{p: statistics.median(r[p] for r in runs[key]) for p in parts}}
        log(f"  load {vocab}: "
            + ", ".join(f"{k} {v.get('total', math.nan) * 1e3:.0f} ms" for k, v in result[vocab].items()))
    return result


def measure_cache(vocabs: list[str], args) -> list[dict]:
    """load_vocab with a cold disk cache (parse + store the derived entry) and a warm one, in a
    fresh process: wordsplit.apps.load_bench.benchmark_load. With ``--baseline``, the installed build and
    the baseline take turns over ``--load-runs`` rounds (one process each per round); each
    entry keeps every round's figures (``rounds``) and reports their medians."""
    code = ("import json, sys\n"
            "try:\n    from wordsplit.apps.load_bench import benchmark_load\n"
            "except ImportError:  # older builds keep it in the vocabs package\n"
            "    from wordsplit.vocabs import benchmark_load\n"
            "print(json.dumps(benchmark_load(sys.argv[1].split(','), repeat=int(sys.argv[2]))))")
    builds = [("", None)] + ([(args.baseline_name, baseline_env(args.baseline_root))] if args.baseline else [])
    rounds: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.load_runs if args.baseline else 1):
        for build, env in builds:
            done = subprocess.run([sys.executable, "-c", code, ",".join(vocabs), str(args.repeats)],
                                  capture_output=True, text=True, timeout=600, env=env)
            if done.returncode != 0:
                return [{"name": ",".join(vocabs) + (f" ({build})" if build else ""),
                         "error": done.stderr.strip().splitlines()[-1:]}]
            for entry in json.loads(done.stdout):
                rounds.setdefault((entry["name"], build), []).append(entry)
    result = []
    for (name, build), entries in rounds.items():
        medians = {k: statistics.median(e[k] for e in entries) for k in ("cold_s", "warm_s")}
        result.append({**entries[0], **medians, "speedup": medians["cold_s"] / medians["warm_s"],
                       "vocab": name, "build": build, "name": name + (f" ({build})" if build else ""),
                       "rounds": entries})
    return result


def measure_rss(args) -> list[dict]:
    """Peak memory of a fresh process that loads one tokenizer and encodes a short text."""
    plan = [("python", "cl100k_base")] + [(k, v) for v in ("cl100k_base", "qwen3") for k in load_keys(v, args)]
    result = []
    for key, vocab in plan:
        lines, error = probe("rss", key, vocab, args)
        result.append({"key": key, "vocab": vocab, **({"label": key, "error": error} if error else lines[0])})
    return result


def worst_texts(corpus_dir: Path, data_dir: Path) -> dict[str, Path]:
    """Write the 1 MiB worst-case inputs to files the probes read."""
    paths = {}
    for name, source in WORST_INPUTS.items():
        text = source * (1 << 20) if len(source) == 1 else read_corpus(corpus_dir, source)
        paths[name] = data_dir / f"worst-{name}.txt"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def encoder_keys(vocab: str) -> list[str]:
    """wordsplit auto, every native encoder (with the auto spanner), then the peers: the
    contenders of the worst-case and piece-length measurements."""
    encoders = sorted({k.split(":")[2] for k in wordsplit_variant_keys()})
    return ["wordsplit:auto"] + [f"wordsplit:native:{e}:auto" for e in encoders] + peer_keys(vocab)


def linear_fit(points: list[tuple[int, float]]) -> Optional[float]:
    """Least-squares slope of seconds over bytes, as ms per 100 KB (None under 2 points)."""
    if len(points) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return slope * 100_000 * 1e3


def worst_row(lines: list[dict], error: Optional[str], key: str) -> dict:
    """One worst-case probe's output as a table row: per size its line, the slope and growth."""
    label = next((ln["label"] for ln in lines if "label" in ln), key)
    by_size = {ln["size"]: ln for ln in lines if "size" in ln}
    points = [(s, ln["seconds"]) for s, ln in by_size.items() if "seconds" in ln]
    small, big = by_size.get(WORST_SIZES[0], {}), by_size.get(WORST_SIZES[-1], {})
    return {"label": label, "sizes": by_size, "error": error, "slope_ms_per_100kb": linear_fit(points),
            "ratio_big_small": big["seconds"] / small["seconds"] if "seconds" in big and "seconds" in small else None}


def measure_worst(vocabs: list[str], corpus_dir: Path, data_dir: Path, args) -> dict:
    """One encode call on 100 KB … 1 MiB of each of WORST_INPUTS, per contender, each contender
    in its own process (killed past ``--worst-budget`` + load slack); ids are fingerprinted
    and compared with the oracle's at every size.

    With ``--baseline``, wordsplit auto and the baseline take turns over ``--worst-rounds``
    rounds (a process each per round): each row keeps every round (``runs``) and shows the
    median seconds per size, and their ratio can be paired round by round."""
    texts = worst_texts(corpus_dir, data_dir)
    sizes = ",".join(map(str, WORST_SIZES))
    extra = ("--sizes", sizes, "--budget", str(args.worst_budget), "--clock", args.clock)
    paired = ["wordsplit:auto", BASELINE_KEY] if args.baseline else []
    result = {}
    for vocab in vocabs:
        for name, path in texts.items():
            rows = {}
            runs: dict[str, list[dict]] = {}
            keys = encoder_keys(vocab)
            schedule = [[k] for k in keys if k not in paired]
            schedule[0:0] = [paired if r % 2 == 0 else paired[::-1] for r in range(args.worst_rounds)] if paired else []
            for round_keys in schedule:
                for key in round_keys:
                    lines, error = probe("worst", key, vocab, args, (str(path), *extra), timeout=args.worst_budget + 60)
                    if error:
                        log(f"  worst {vocab}/{name} {key}: {error}")
                    runs.setdefault(key, []).append(worst_row(lines, error, key))
            for key in keys[:1] + paired[1:] + keys[1:]:
                first = runs[key][0]
                if len(runs[key]) == 1:
                    rows[key] = first
                    continue
                # the median seconds over the rounds, at each size every round measured
                lines = []
                for size, line in first["sizes"].items():
                    secs = [r["sizes"].get(size, {}).get("seconds") for r in runs[key]]
                    lines.append({**line, "seconds": statistics.median(secs)}
                                 if "seconds" in line and None not in secs else dict(line))
                rows[key] = {**worst_row([{"label": first["label"]}, *lines], first["error"], key), "runs": runs[key]}
            oracle = rows.get(ORACLE[vocab], {"sizes": {}})
            for key, row in rows.items():
                for line in [ln for r in [row, *row.get("runs", [])] for ln in r["sizes"].values()]:
                    ref = oracle["sizes"].get(line["size"], {}).get("digest")
                    line["parity_ok"] = None if ref is None or "digest" not in line else line["digest"] == ref
                    if line["parity_ok"] is False:
                        log(f"    MISMATCH (worst {name} {line['size']}) {row['label']} on {vocab}")
            result[f"{vocab}|{name}"] = rows
            log(f"  worst {vocab}/{name}: done")
    return result


def measure_onepass(vocabs: list[str], args) -> dict:
    """Each document of each whole ``--onepass-corpora`` corpus encoded once per contender, in a
    fresh process per vocabulary (``onepass.py``), ``--onepass-runs`` times; the vocabularies
    take turns run by run, and which contender starts the first block rotates from run to run.

    Returns ``{"runs": [{"vocab", "load_avg", "result" or "error"}, ...]}``.
    """
    runs = []
    for run in range(args.onepass_runs):
        for vocab in vocabs:
            cmd = [sys.executable, str(HERE / "onepass.py"), vocab, str(args.corpus_dir),
                   "--corpora", args.onepass_corpora, "--doc-bytes", str(args.onepass_doc_bytes),
                   "--block", str(args.onepass_block), "--max-bytes", str(args.onepass_max_bytes),
                   "--clock", args.clock, "--shift", str(run)]
            if args.baseline:
                cmd += ["--current-root", str(args.current_root),
                        "--baseline-root", str(args.baseline_root), "--baseline-name", args.baseline_name]
            log(f"  one pass {vocab}, run {run + 1}/{args.onepass_runs}")
            load_avg = os.getloadavg()[0]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
            entry = {"vocab": vocab, "run": run, "load_avg": [load_avg, os.getloadavg()[0]]}
            if done.returncode != 0:
                entry["error"] = (done.stderr.strip().splitlines() or ["?"])[-1]
                log(f"    failed: {entry['error']}")
            else:
                entry["result"] = json.loads(done.stdout)
                for corpus, cells in entry["result"]["corpora"].items():
                    for key, c in cells.items():
                        if c["mismatched"]:
                            log(f"    MISMATCH (one pass {corpus}) {entry['result']['labels'][key]}: "
                                f"{c['mismatched']}/{c['checked']} docs; first at {c['first']}")
                    log(f"    {corpus}: " + ", ".join(f"{entry['result']['labels'][k]} {c['mb_s']:.1f}"
                                                  for k, c in cells.items()))
            runs.append(entry)
    return {"runs": runs, "doc_kb": args.onepass_doc_bytes / 1000, "block_mb": args.onepass_block / 1e6}


# -- main -----------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus_dir", nargs="?", type=Path, metavar="CORPUS_DIR",
                   help=f"holds <name>.txt.gz; default: ${CORPUS_ENV}")
    p.add_argument("--max-bytes", type=parse_size, default="4MB", help="per corpus (stride sample of documents)")
    p.add_argument("--doc-bytes", type=parse_size, default="10KB", help="target document size")
    p.add_argument("--python-bytes", type=parse_size, default="256KB",
                   help="per corpus, for wordsplit's Python backend")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                   help="time single-thread measurements by this process's CPU time or by wall time "
                        "(batch: always wall)")
    p.add_argument("--corpora", default=DEFAULT_CORPORA)
    p.add_argument("--vocabs", default="cl100k_base,o200k_base,qwen3")
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"any of {','.join(SECTIONS)}")
    p.add_argument("--pass-budget", type=float, default=60.0, help="s; a slower checked pass is not timed")
    p.add_argument("--load-runs", type=int, default=5)
    p.add_argument("--worst-budget", type=float, default=20.0, help="s per worst-case probe")
    p.add_argument("--worst-rounds", type=int, default=3,
                   help="with --baseline: worst-case probe rounds of wordsplit auto and the baseline, taking turns")
    p.add_argument("--onepass-corpora", default="prose,code,multilingual", help="one-pass section: whole corpora")
    p.add_argument("--onepass-doc-bytes", type=parse_size, default="16KB", help="document size in the one-pass section")
    p.add_argument("--onepass-block", type=parse_size, default="1MB",
                   help="one-pass section: the contenders take turns a block of documents of this size at a time")
    p.add_argument("--onepass-max-bytes", type=parse_size, default="0",
                   help="one-pass section: a stride sample of each corpus up to this size (0: the whole corpus)")
    p.add_argument("--onepass-runs", type=int, default=3, help="one-pass section: fresh processes per vocabulary")
    p.add_argument("--baseline", type=Path, metavar="WHEEL_OR_DIR",
                   help="another wordsplit build (a wheel, or a directory holding a built wordsplit/ package) "
                        "timed as contender `ws NAME` in a worker process; see benches/README.md")
    p.add_argument("--baseline-name", default="baseline", help="its name in the report (e.g. its commit)")
    p.add_argument("--wordsplit", type=Path, metavar="WHEEL_OR_DIR",
                   help="run this wordsplit build (as for --baseline) instead of the installed one")
    p.add_argument("--no-snapshot", action="store_true",
                   help="import wordsplit from where it is installed instead of from a copy taken at start")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: " + ", ".join(f"{k}={v}" for k, v in QUICK_DEFAULTS.items()))
    p.add_argument("--json", type=Path, help="write raw numbers here")
    if "--quick" in argv:
        p.set_defaults(**QUICK_DEFAULTS)
    return p.parse_args(argv)  # string defaults go through type=, so sizes are ints


def snapshot_wordsplit(dest: Path, build: Optional[Path] = None) -> str:
    """Copy the installed wordsplit package (with its built extension), or the one of
    ``build`` (``--wordsplit``: a wheel or a directory, as for ``--baseline``), into ``dest``
    and import it from there, in this process and its probes, so that a rebuild or an edit by
    someone else during the run cannot change the code halfway through. Returns the source."""
    if build is not None:
        unpack_build(build, dest)
        source = str(build)
    else:
        source = importlib.util.find_spec("wordsplit").submodule_search_locations[0]
        shutil.copytree(source, dest / "wordsplit", ignore=shutil.ignore_patterns("__pycache__"))
        # Bytecode, as `pip install` writes it (the peers are installed that way): without it, the
        # load-time probes would time compiling wordsplit's sources when PYTHONDONTWRITEBYTECODE is set.
        compileall.compile_dir(dest / "wordsplit", quiet=1)
    sys.path.insert(0, str(dest))
    os.environ.setdefault(ORIGINAL_PYTHONPATH_ENV, os.environ.get("PYTHONPATH", ""))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(dest), os.environ.get("PYTHONPATH")]))
    return str(source)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    sections = [s for s in args.sections.split(",") if s]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise SystemExit(f"--sections: unknown {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}")
    vocabs = [v for v in args.vocabs.split(",") if v]
    used = set(args.onepass_corpora.split(",") if "onepass" in sections else [])
    used |= set(args.corpora.split(",")) if {"single", "batch", "decode", "pieces"} & set(sections) else set()
    used |= {"adv_repeat_a"} if "worst" in sections else set()
    args.corpus_dir = corpus_dir(args.corpus_dir, sorted(n for n in used if n))
    work_dir = Path(tempfile.mkdtemp(prefix="wordsplit-bench-"))
    try:
        if args.no_snapshot and args.wordsplit:
            raise SystemExit("--wordsplit runs a copy of the build it names; it cannot go with --no-snapshot")
        source = None if args.no_snapshot else snapshot_wordsplit(work_dir / "snapshot", args.wordsplit)
        args.baseline_root = unpack_build(args.baseline, work_dir / "baseline") if args.baseline else None
        # where the build under test is imported from, for its worker
        args.current_root = (Path(importlib.util.find_spec("wordsplit").submodule_search_locations[0]).parent
                             if args.no_snapshot else work_dir / "snapshot")
        prepare_data_dir(work_dir / "data")
        results: dict = {"meta": {
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine_info(),
            "load_avg_start": os.getloadavg(), "parallel_start": parallel_ceiling(),
            "versions": versions(source, built_elsewhere=args.wordsplit is not None),
            "baseline": {"name": args.baseline_name, "source": str(args.baseline)} if args.baseline else None,
            "command": "python " + shlex.join([os.path.relpath(sys.argv[0]), *argv]),
            "args": {k: str(v) for k, v in vars(args).items()}, "corpora": {}, "notes": []}}

        corpora = {}
        in_process = {"single", "batch", "decode", "pieces"} & set(sections)
        for name in [c for c in args.corpora.split(",") if c and in_process]:
            docs = split_documents(read_corpus(args.corpus_dir, name), args.doc_bytes)
            docs = [docs[i] for i in stride_sample(docs, args.max_bytes)]
            corpora[name] = (docs, stride_sample(docs, args.python_bytes))
            results["meta"]["corpora"][name] = {"bytes": utf8_len(docs), "docs": len(docs)}
        log(f"corpora: {results['meta']['corpora']}")

        steps = [
            ("onepass", "one pass over whole corpora", lambda: measure_onepass(vocabs, args)),
            *[(f"in-process sections, {vocab}", f"in-process sections, {vocab}",
               lambda vocab=vocab: measure_vocab(vocab, corpora, sections, results, args))
              for vocab in (vocabs if in_process else [])],
            ("load", "load times", lambda: measure_load(vocabs, args)),
            ("cache", "vocab load with a cold and a warm disk cache", lambda: measure_cache(vocabs, args)),
            ("rss", "peak memory", lambda: measure_rss(args)),
            ("worst", "worst cases", lambda: measure_worst(vocabs, args.corpus_dir, work_dir / "data", args)),
        ]
        for name, what, step in steps:
            if name in SECTIONS and name not in sections:
                continue
            log(what)
            try:
                value = step()
            except Exception:  # noqa: BLE001 -- report what the other sections measured
                error = traceback.format_exc().strip().splitlines()[-1]
                log(traceback.format_exc())
                results["meta"]["notes"].append(f"{what} stopped: {error}")
                continue
            if name in SECTIONS:
                results[name] = value
        results["meta"]["load_avg_end"] = os.getloadavg()
        results["meta"]["parallel_end"] = parallel_ceiling()
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)

    print(render(results, args, WORST_SIZES, PIECE_LENGTHS))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
