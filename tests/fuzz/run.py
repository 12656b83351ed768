"""Long fuzz runs, for local use: ``python tests/fuzz/run.py TARGET [--seconds N]``.

With atheris installed (``pip install atheris``) the run is coverage-guided over wordsplit's
Python code (libFuzzer's engine; the native extension runs but is not instrumented), starting
from a temporary copy of ``corpus/TARGET``. Without it, or with ``--engine mutate``, seeds are
mutated at random (``fuzz_mutate``). Either way a finding is written to
``corpus/TARGET/crash-<sha1>``, where ``tests/test_fuzz.py`` replays it from then on, and the
run stops with status 1. Memory is capped (``--rss-mb``) so a huge allocation is a finding, not
a frozen machine, and an input that takes longer than ``--timeout`` seconds is one too.

    python tests/fuzz/run.py encode --seconds 600
    python tests/fuzz/run.py all --seconds 120          # each target in turn
"""

from __future__ import annotations

import argparse
import hashlib
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fuzz_mutate import KINDS, mutate  # noqa: E402
from fuzz_targets import TARGETS  # noqa: E402

from wordsplit import WordsplitError  # noqa: E402


# Mostly one or two mutations: a strict parser refuses nearly every input with more, and the
# inputs that load are the ones that reach the tokenizer checks.
OPS_PER_INPUT = [1, 1, 1, 1, 2, 2, 3, 6]


class Hang(Exception):
    pass


def save_finding(target: str, data: bytes) -> Path:
    path = HERE / "corpus" / target / f"crash-{hashlib.sha1(data).hexdigest()}"
    path.write_bytes(data)
    return path


def run_one(fn, data: bytes) -> None:
    try:
        fn(data)
    except WordsplitError:
        pass


def mutate_loop(target: str, seconds: float, timeout: float) -> int:
    fn = TARGETS[target]
    seeds = [p.read_bytes() for p in sorted((HERE / "corpus" / target).iterdir())]
    rng = random.Random()
    deadline, runs = time.monotonic() + seconds, 0

    def alarm(*_):
        raise Hang(f"an input took over {timeout} s")

    signal.signal(signal.SIGALRM, alarm)
    while time.monotonic() < deadline:
        ops = [(rng.randrange(KINDS), rng.randrange(1 << 20), rng.randrange(1 << 16))
               for _ in range(rng.choice(OPS_PER_INPUT))]
        data = mutate(rng.choice(seeds), ops, rng.choice(seeds))
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            run_one(fn, data)
        except BaseException as exc:  # noqa: BLE001 (a finding of any kind, MemoryError and Hang included)
            signal.setitimer(signal.ITIMER_REAL, 0)
            if isinstance(exc, KeyboardInterrupt):
                raise
            path = save_finding(target, data)
            print(f"{target}: finding after {runs} runs: {type(exc).__name__}: {str(exc)[:300]}\n  saved {path}")
            return 1
        signal.setitimer(signal.ITIMER_REAL, 0)
        runs += 1
    print(f"{target}: {runs} runs in {seconds:.0f} s, no finding")
    return 0


def atheris_run(target: str, seconds: float, timeout: float, rss_mb: int) -> int:
    import atheris

    fn = TARGETS[target]
    work = Path(tempfile.mkdtemp(prefix=f"fuzz-{target}-"))
    shutil.copytree(HERE / "corpus" / target, work, dirs_exist_ok=True)

    def one_input(data: bytes) -> None:
        run_one(fn, data)

    atheris.instrument_all()
    argv = [sys.argv[0], str(work), f"-max_total_time={int(seconds)}", f"-timeout={int(timeout)}",
            f"-rss_limit_mb={rss_mb}", f"-artifact_prefix={HERE / 'corpus' / target}/", "-print_final_stats=1"]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()  # exits the process: status 0 when the time is up, else libFuzzer's crash status
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", choices=[*TARGETS, "all"])
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--engine", choices=["auto", "atheris", "mutate"], default="auto")
    p.add_argument("--timeout", type=float, default=20, help="seconds one input may take")
    p.add_argument("--rss-mb", type=int, default=4096)
    args = p.parse_args(argv)
    limit = args.rss_mb * 2**20
    # The address space, not RSS, so leave room; never above a limit the shell already set.
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = limit * 4 if hard == resource.RLIM_INFINITY else min(limit * 4, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris" if args.target != "all" else "mutate"
        except ImportError:
            engine = "mutate"
    names = list(TARGETS) if args.target == "all" else [args.target]
    status = 0
    for name in names:
        if engine == "atheris":
            return atheris_run(name, args.seconds, args.timeout, args.rss_mb)
        status |= mutate_loop(name, args.seconds, args.timeout)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
