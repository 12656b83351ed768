"""Measurements that need a fresh process, one per invocation; each prints JSON on stdout.

    python benches/probes.py load  KEY VOCAB            import + construct + first encode
    python benches/probes.py rss   KEY VOCAB            peak memory after load + a short encode
    python benches/probes.py worst KEY VOCAB TEXT_FILE --sizes N,N,.. [--budget S] [--repeats R] [--clock cpu]

``KEY`` is a contender key (see ``contenders.py``); ``rss`` also takes ``python`` (the bare
interpreter, as a baseline). ``worst`` prints one JSON line per size as soon as it is
measured, so the parent keeps the sizes done even if it has to kill the probe. It needs
``WORDSPLIT_BENCH_DATA`` / ``TIKTOKEN_CACHE_DIR`` set (``contenders.prepare_data_dir``),
which ``bench.py`` does for its children.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import resource
import statistics
import sys
import time
from array import array

from contenders import make_contender

SHORT_TEXT = "Hello, world! This is a short text to encode."
LIBRARY_MODULE = {"wordsplit": "wordsplit", "tiktoken": "tiktoken", "tokenizers": "tokenizers", "quicktok": "quicktok",
                  "gigatoken": "gigatoken", "fastokens": "fastokens", "tokenizers1": "tokenizers", "tokie": "tokie",
                  "kitoken": "kitoken", "splintr": "splintr"}


def ids_digest(ids) -> str:
    """A short fingerprint of an id sequence, for parity checks across processes."""
    return hashlib.sha1(array("I", ids).tobytes()).hexdigest()[:16]


def probe_load(key: str, vocab: str) -> dict:
    """Seconds to import the library, build the tokenizer, and run the first encode: wall
    time, and this process's CPU time (``*_cpu``, every thread), which time spent waiting for
    a core on a busy machine does not inflate."""
    clocks = []

    def mark() -> None:
        clocks.append((time.perf_counter(), time.process_time()))

    mark()
    importlib.import_module(LIBRARY_MODULE[key.split(":", 1)[0]])
    mark()
    contender = make_contender(key, vocab)
    mark()
    contender.encode(SHORT_TEXT)
    mark()
    out = {"label": contender.label}
    for n, part in enumerate(("import", "construct", "first_encode")):
        out[part] = clocks[n + 1][0] - clocks[n][0]
        out[f"{part}_cpu"] = clocks[n + 1][1] - clocks[n][1]
    out["total"], out["total_cpu"] = clocks[3][0] - clocks[0][0], clocks[3][1] - clocks[0][1]
    return out


def probe_rss(key: str, vocab: str) -> dict:
    """Peak memory after loading and one short encode, in KiB.

    ``vm_hwm_kib`` (VmHWM of /proc/self/status) is this process's own peak. ``ru_maxrss_kib``
    is what ``resource.getrusage`` says; on Linux it also counts the parent's memory that the
    child had mapped between fork and exec, so it is only meaningful from a small parent.
    """
    label = "python (bare interpreter)"
    if key != "python":
        contender = make_contender(key, vocab)
        contender.encode(SHORT_TEXT)
        label = contender.label
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return {"label": label, "vm_hwm_kib": int(status["VmHWM"].split()[0]),
            "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def probe_worst(key: str, vocab: str, text_file: str, sizes: list[int], budget: float, repeats: int,
                clock: str) -> None:
    """Time one encode call on each prefix size of ``text_file``, smallest first, by ``clock``
    (``"wall"``, or ``"cpu"``: this process's CPU time).

    Each size is the median of ``repeats`` calls (one call if it takes over a second), each on
    text the contender has not seen: the first N characters, then one and two fewer. gigatoken
    and fastokens keep every piece they encoded, of any length, so a second call on the same
    1 MiB run of one character is one lookup of the whole run (0.7-5 ms where their first calls
    took 0.2-1.3 s); a call on one character less is a new piece, the work a text not seen before
    costs. The ids recorded (and compared with the oracle's) are the first call's, on N. A size
    whose projected cost (quadratic extrapolation from the last one) would overrun ``budget``
    seconds is reported as skipped, with no call made.
    """
    now = time.process_time if clock == "cpu" else time.perf_counter
    text = open(text_file, encoding="utf-8").read()
    contender = make_contender(key, vocab)
    print(json.dumps({"label": contender.label}), flush=True)
    contender.encode(text[:1000])  # warm-up: caches, lazy tables
    started = time.perf_counter()
    last = None  # (size, seconds)
    for size in sizes:
        if last is not None:
            projected = last[1] * (size / last[0]) ** 2
            if time.perf_counter() - started + projected > budget:
                print(json.dumps({"size": size, "skipped": f"projected {projected:.1f} s > budget"}), flush=True)
                continue
        times, ids = [], None
        while len(times) < repeats:
            unseen = text[:size - len(times)]
            t0 = now()
            got = contender.encode(unseen)
            times.append(now() - t0)
            ids = got if ids is None else ids
            if times[-1] > 1.0:
                break
        seconds = statistics.median(times)
        last = (size, seconds)
        print(json.dumps({"size": size, "seconds": seconds, "n_ids": len(ids), "digest": ids_digest(ids)}), flush=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("probe", choices=["load", "rss", "worst"])
    parser.add_argument("key")
    parser.add_argument("vocab")
    parser.add_argument("text_file", nargs="?")
    parser.add_argument("--sizes", default="")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clock", choices=["cpu", "wall"], default="wall")
    args = parser.parse_args(argv)
    if args.probe == "load":
        print(json.dumps(probe_load(args.key, args.vocab)))
    elif args.probe == "rss":
        print(json.dumps(probe_rss(args.key, args.vocab)))
    else:
        sizes = [int(s) for s in args.sizes.split(",") if s]
        probe_worst(args.key, args.vocab, args.text_file, sizes, args.budget, args.repeats, args.clock)


if __name__ == "__main__":
    main(sys.argv[1:])
