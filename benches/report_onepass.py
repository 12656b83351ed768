"""The one-pass section of the report: MB/s per vocabulary, corpus and output shape, median over
the runs, and wordsplit's lead over each peer, paired run by run."""

from __future__ import annotations

import statistics
from typing import Optional

from contenders import NUMPY, ORACLE
from report_format import REFERENCE, WORDSPLIT, is_peer, md_table, num

# The lead under which a cell is listed below the lead table.
CLOSE = 1.25


def onepass_cells(section: dict) -> dict:
    """``{vocab: {"labels": {...}, "runs": [ {corpus: {key: cell}} per run ], "differs":
    {key: where}, "skipped": {key: why}}}`` from the raw runs (failed runs left out), each run
    also with an ``"all"`` corpus: the sums. A cell of a contender that differed from the
    oracle has no ``seconds`` (it was not timed)."""
    out: dict = {}
    for entry in section["runs"]:
        if "result" not in entry:
            continue
        result = entry["result"]
        by_vocab = out.setdefault(entry["vocab"], {"labels": result["labels"], "runs": [], "load_avg": [],
                                                   "differs": {}, "skipped": {}})
        by_vocab["labels"] = {**by_vocab["labels"], **result["labels"]}
        by_vocab["differs"].update(result.get("differs", {}))
        by_vocab["skipped"].update(result.get("skipped", {}))
        corpora = dict(result["corpora"])
        keys = list(result["labels"])
        corpora["all"] = {k: {"bytes": sum(c[k]["bytes"] for c in result["corpora"].values()),
                              "seconds": sum(c[k]["seconds"] for c in result["corpora"].values()),
                              "mismatched": sum(c[k]["mismatched"] for c in result["corpora"].values())}
                          for k in keys if all("seconds" in c.get(k, {}) for c in result["corpora"].values())}
        by_vocab["runs"].append(corpora)
        by_vocab["load_avg"] += entry["load_avg"]
    return out


def timed_seconds(cells: dict, key: str) -> Optional[float]:
    """``key``'s seconds in one run's cells of a corpus; None if it was not timed there."""
    return cells.get(key, {}).get("seconds")


def ratio_stats(ratios: list[float]) -> tuple[float, float, float]:
    """Median, smallest and largest of paired ratios."""
    return statistics.median(ratios), min(ratios), max(ratios)


def onepass_ratio(runs: list[dict], corpus: str, key, ref) -> Optional[tuple[float, float, float]]:
    """How many times faster ``key`` is than ``ref`` on ``corpus``: per run (the two took turns
    block by block), ref's seconds ÷ key's; median, min, max over runs. ``key`` and ``ref``
    may each be a tuple of keys: the fastest of them in that run (a library's fastest output
    shape, or the best of several peers)."""
    keys = key if isinstance(key, tuple) else (key,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    ratios = []
    for run in runs:
        cells = run.get(corpus, {})
        mine = [t for k in keys if (t := timed_seconds(cells, k)) is not None]
        theirs = [t for k in refs if (t := timed_seconds(cells, k)) is not None]
        if mine and theirs:
            ratios.append(min(theirs) / min(mine))
    return ratio_stats(ratios) if ratios else None


def render_onepass(section: dict, worker_keys: tuple = ()) -> str:
    """The one-pass tables: MB/s per vocabulary × corpus × output shape (a Python list per
    document, or a numpy array: the ``+numpy`` contenders), median over runs with the ratio to
    tiktoken; then wordsplit's speed ratio to each peer per cell and shape, with the smallest."""
    data = onepass_cells(section)
    if not data:
        errors = "; ".join(e.get("error", "?") for e in section["runs"])
        return f"## Single-thread encode, one pass over whole corpora\n\nNo run finished: {errors}"
    n_runs = max(len(d["runs"]) for d in data.values())
    some = next(iter(data.values()))["runs"][0]
    corpora = list(some)
    sizes = ", ".join(f"{c} {some[c][WORDSPLIT]['bytes'] / 1e6:.1f} MB" for c in corpora if c != "all")

    def mb_s(d: dict, runs: list[dict], corpus: str, key: str) -> str:
        timed = [run[corpus][key] for run in runs if timed_seconds(run.get(corpus, {}), key) is not None]
        if not timed:
            return "differs" if key in d["differs"] and any(key in run.get(corpus, {}) for run in runs) else "–"
        text = num(timed[0]["bytes"] / statistics.median(c["seconds"] for c in timed) / 1e6)
        ratio = onepass_ratio(runs, corpus, key, REFERENCE)
        if ratio and key != REFERENCE:
            text += f" ({ratio[0]:.2f}×)"
        bad = max(c["mismatched"] for c in timed)
        return text + (f" ✗{bad}" if bad else "")

    rows, unmeasured = [], []
    for vocab, d in data.items():
        unmeasured += [f"{vocab}: {d['labels'].get(k, k)} differs from the oracle ({d['labels'].get(o, o)}), not "
                       f"timed; first difference in {where}"
                       for k, where in d["differs"].items() for o in [ORACLE[vocab]]]
        unmeasured += [f"{vocab}: {k} not run: {why}" for k, why in d["skipped"].items()]
        runs = d["runs"]
        bases = [k for k in d["labels"] if k not in worker_keys and not k.endswith(NUMPY)]
        for n, key in enumerate(bases):
            cells = [mb_s(d, runs, corpus, k) for corpus in corpora for k in (key, key + NUMPY)]
            label = d["labels"][key]
            rows.append([vocab if n == 0 else "", f"**{label}**" if key == WORDSPLIT else label] + cells)
    header = ["vocab", "contender"] + [f"{c} {shape}" for c in corpora for shape in ("list", "numpy")]
    table = md_table(header, rows, left=2)
    if unmeasured:
        table += "\n\nNot measured:\n\n" + "\n".join(f"- {line}" for line in unmeasured)

    lead_rows, smallest = [], {}
    for vocab, d in data.items():
        peers = [k for k in d["labels"] if is_peer(k, worker_keys) and not k.endswith(NUMPY)]
        shapes = [("list", WORDSPLIT, lambda k: (k,)), ("numpy", WORDSPLIT + NUMPY, lambda k: (k + NUMPY,)),
                  ("fastest", (WORDSPLIT, WORDSPLIT + NUMPY), lambda k: (k, k + NUMPY))]
        targets = [(d["labels"][p], p) for p in peers]
        # the best peer of each cell: every peer's keys of that shape, the fastest in each run
        targets.append(("best peer", None))
        for name, peer in targets:
            for shape, mine, theirs in shapes:
                refs = tuple(k for p in ([peer] if peer else peers) for k in theirs(p) if k in d["labels"])
                if not refs or (shape != "fastest" and mine not in d["labels"]):
                    continue
                cells, medians = [], []
                for corpus in corpora:
                    ratio = onepass_ratio(d["runs"], corpus, mine, refs)
                    if ratio is None:
                        cells.append("–")
                        continue
                    spread_ = f" ({ratio[1]:.2f}–{ratio[2]:.2f})" if len(d["runs"]) > 1 else ""
                    cells.append(f"{ratio[0]:.2f}×{spread_}")
                    if corpus != "all":
                        medians.append(ratio[0])
                if medians:
                    smallest.setdefault(f"{name} ({shape})", []).append(min(medians))
                lead_rows.append([vocab, name, shape] + cells + [f"{min(medians):.2f}×" if medians else "–"])
    order = {"best peer": 0, "gigatoken": 1, "fastokens": 2, "quicktok-v1": 3}
    lead_rows.sort(key=lambda r: (order.get(r[1], 9), r[1], r[0]))
    floor = ", ".join(f"{min(v):.2f}× {p}" for p, v in smallest.items() if p.split(" (")[0] in order)
    close = [f"{row[0]} {corpus}: ÷ {row[1]} {cell.split('×')[0]}×"
             for row in lead_rows if row[1] != "best peer" and row[2] == "fastest"
             for corpus, cell in zip(corpora, row[3:]) if corpus != "all" and cell != "–"
             and float(cell.split("×")[0]) < CLOSE]
    spread = " (min–max over the runs in parentheses)" if n_runs > 1 else ""
    return (f"## Single-thread encode, one pass over whole corpora (MB/s)\n\n"
            f"Every document (~{section.get('doc_kb', 16):g} KB) of each whole corpus ({sizes}) encoded once by each "
            "contender, in a fresh process per vocabulary, so every cache starts cold and sees each document once: "
            "the speed of a job that reads a corpus once. Two output shapes per library: `list`, a Python list "
            "of ints per document (`encode_ordinary` and its equivalents), and `numpy`, a uint32 numpy array per "
            "document (wordsplit and tiktoken `encode_to_numpy`, gigatoken "
            "`BPETokenizer.encode`, fastokens `encode_batch_flat([doc])`), each timed as a contender of its own. "
            "The contenders take turns a block of about "
            f"{section.get('block_mb', 1):g} MB of documents at a time (the first of each block rotating); each "
            "contender's ids are checked against the oracle's, block by block; one that differs is not timed from "
            "that block on (`differs`, and its first difference under the table). "
            f"Median of {n_runs} run{'s' if n_runs > 1 else ''} (a fresh process each); `all` = all corpora "
            "together. Ratio to tiktoken (its list form) in parentheses, paired: tiktoken's seconds ÷ the "
            "contender's in the same run.\n\n" + table
            + f"\n\n### wordsplit's lead, one pass\n\nSpeed of wordsplit ÷ the peer's, per cell and output shape: "
              "`list` compares the list forms, `numpy` the numpy forms, `fastest` each library's faster shape in "
              "each run; `best peer` is the fastest peer of that shape in each run. The median over runs of the "
              f"paired ratio{spread}; `smallest` is the smallest of the corpus cells. Smallest over every "
              f"vocabulary and corpus: {floor}.\n\n"
            + md_table(["vocab", "÷ peer", "shape"] + corpora + ["smallest"], lead_rows, left=3)
            + f"\n\nCells where wordsplit (fastest shape) is under {CLOSE:g}× a peer (its fastest shape): "
            + ("; ".join(close) if close else "none") + ".")
