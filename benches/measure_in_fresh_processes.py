"""The sections measured in fresh processes: load time, the vocabulary's disk cache, peak memory
and worst cases (``probes.py``), and the one pass over whole corpora (``onepass.py``); a
baseline build's processes run in its own environment."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Optional

from builds import BASELINE_KEY, HERE, baseline_env
from contenders import ORACLE, encoder_keys, interpreter
from documents import read_corpus
from passes import log

# name -> a corpus file, or one character repeated to 1 MiB. Dashes and tabs: run tokens of
# many lengths, the slowest inputs found for the backtrack encoder.
WORST_INPUTS = {"a": "adv_repeat_a", "spaces": " ", "dashes": "-", "tabs": "\t"}
WORST_SIZES = [100_000, 200_000, 400_000, 1 << 20]


def run_probe(args_: list[str], timeout: float, env: Optional[dict] = None) -> tuple[list[dict], Optional[str]]:
    """Run ``probes.py`` with ``args_`` (in ``env``, default this one), by the interpreter the
    contender ``args_[1]`` names (:func:`contenders.interpreter`), default this one; the JSON
    lines it printed, and an error if it failed."""
    python = (interpreter(args_[1]) if len(args_) > 1 else None) or sys.executable
    cmd = [python, str(HERE / "probes.py"), *args_]
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
                for key, why in entry["result"]["skipped"].items():
                    log(f"    {key} not run: {why}")
                for corpus, cells in entry["result"]["corpora"].items():
                    for key, c in cells.items():
                        if c["mismatched"]:
                            log(f"    MISMATCH (one pass {corpus}) {entry['result']['labels'][key]}: "
                                f"{c['mismatched']}/{c['checked']} docs; first at {c['first']}")
                    log(f"    {corpus}: " + ", ".join(f"{entry['result']['labels'][k]} "
                                                  + (f"{c['mb_s']:.1f}" if "mb_s" in c else "differs")
                                                  for k, c in cells.items()))
            runs.append(entry)
    return {"runs": runs, "doc_kb": args.onepass_doc_bytes / 1000, "block_mb": args.onepass_block / 1e6}
