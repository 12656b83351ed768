"""How the contenders' passes run and are checked: round-robin rounds (a drift in machine speed
hits every contender alike), first passes taking turns a block of documents at a time, the
two-thread ceiling of the machine, each output compared with the oracle's, and progress and
mismatches logged to stderr."""

from __future__ import annotations

import gc
import hashlib
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional

from contenders import BATCH_THREADS, Contender, as_id_list
from documents import doc_blocks
from timing import Runner, fresh

# The checked (first) passes take turns in blocks of documents of at least this many bytes.
FIRST_PASS_BLOCK = 64_000


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
