"""wordsplit benchmark: one pass over whole corpora, throughput, batch, decode, load time,
memory and worst cases, with every contender checked against the reference tokenizer.

    python benches/bench.py [CORPUS_DIR] [--max-bytes 4MB] [--quick] [--json out.json] > table.md
    python benches/bench.py --baseline OLD.whl --baseline-name COMMIT ...   # and compare with another build

Markdown goes to stdout, progress and parity reports to stderr. See benches/README.md for what
each section measures and how to read it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import sys
import tempfile
import traceback
from datetime import datetime, timezone
from pathlib import Path

from builds import snapshot_wordsplit, unpack_build
from contenders import PYTHONS_ENV, prepare_data_dir
from corpus import CORPUS_ENV, corpus_dir
from documents import parse_size, read_corpus, split_documents, stride_sample, utf8_len
from measure_in_fresh_processes import (WORST_SIZES, measure_cache, measure_load, measure_onepass, measure_rss,
                                        measure_worst)
from measure_in_process import PIECE_LENGTHS, measure_vocab
from passes import log, parallel_ceiling
from report import render
from run_facts import machine_info, versions

DEFAULT_CORPORA = "prose,code,multilingual,adv_random_unicode,adv_whitespace"
SECTIONS = ("onepass", "single", "batch", "decode", "load", "cache", "rss", "worst", "pieces")
QUICK_DEFAULTS = dict(max_bytes="256KB", python_bytes="32KB", repeats=3, load_runs=2, worst_budget=5.0,
                      onepass_max_bytes="1MB", onepass_runs=1, worst_rounds=2)


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
    p.add_argument("--python", action="append", default=[], metavar="KEY=PATH",
                   help="run contender KEY (and its numpy form) in a worker process of this interpreter; "
                        "repeatable (default: tokenizers1=.peers/hf1/bin/python when it exists)")
    if "--quick" in argv:
        p.set_defaults(**QUICK_DEFAULTS)
    return p.parse_args(argv)  # string defaults go through type=, so sizes are ints


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    sections = [s for s in args.sections.split(",") if s]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise SystemExit(f"--sections: unknown {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}")
    vocabs = [v for v in args.vocabs.split(",") if v]
    pythons = dict(entry.split("=", 1) for entry in args.python if "=" in entry)
    if len(pythons) != len(args.python):
        raise SystemExit("--python takes KEY=PATH, e.g. tokenizers1=.peers/hf1/bin/python")
    if pythons:  # every process this one starts inherits it (contenders.interpreter)
        os.environ[PYTHONS_ENV] = json.dumps({k: str(Path(v).absolute()) for k, v in pythons.items()})
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
