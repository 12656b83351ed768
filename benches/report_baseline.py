"""The baseline comparison of the report (``--baseline``): every figure both builds were
measured on, as the build under test's speed ÷ the baseline's with the spread of the paired
ratios, and the figures more than 3 % slower."""

from __future__ import annotations

import math
import statistics

from report_format import md_table, round_times, total_entry, without_paths
from report_onepass import onepass_cells
from report_sections import piece_tables


def quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def baseline_figures(results: dict, new: str, old: str, clock: str) -> list[dict]:
    """Every figure both builds were measured on, as the speed of ``new`` ÷ that of ``old``
    (for memory: old's peak ÷ new's, so above 1 is better in every row). Each figure:
    ``{"section", "row", "col", "ratio", "lo", "hi", "spread"}``, ``spread`` saying what
    ``lo``–``hi`` is (min–max of paired rounds, quartiles of paired blocks, or nothing)."""
    figs: list[dict] = []

    def add(section: str, row: str, col: str, ratios: list[float], spread: str = "rounds", ratio=None) -> None:
        ratios = [r for r in ratios if r == r and r not in (math.inf, 0)]
        if not ratios:
            return
        lo, hi = (min(ratios), max(ratios)) if spread == "rounds" else quartiles(ratios) if spread == "blocks" \
            else (None, None)
        figs.append({"section": section, "row": row, "col": col, "n": len(ratios), "spread": spread, "lo": lo,
                     "hi": hi, "ratio": ratio if ratio is not None else statistics.median(ratios)})

    def per_round(a: list[float], b: list[float]) -> list[float]:
        return [old_t / new_t for new_t, old_t in zip(a, b)]

    onepass = onepass_cells(results["onepass"]) if "onepass" in results else {}
    for vocab, d in onepass.items():
        for corpus in d["runs"][0]:
            if not all(new in run.get(corpus, {}) and old in run.get(corpus, {}) for run in d["runs"]):
                continue
            if len(d["runs"]) > 1:
                add("one pass", vocab, corpus,
                    [run[corpus][old]["seconds"] / run[corpus][new]["seconds"] for run in d["runs"]])
            elif "blocks" in d["runs"][0][corpus][new]:  # one run: the spread over its blocks
                i = 1 if clock == "cpu" else 0
                a, b = d["runs"][0][corpus][new], d["runs"][0][corpus][old]
                add("one pass", vocab, corpus, [o[i] / n[i] for n, o in zip(a["blocks"], b["blocks"])], "blocks",
                    ratio=b["seconds"] / a["seconds"])
    for vocab, by_corpus in results.get("single", {}).items():
        warm, first = {}, {}
        for corpus, cells in by_corpus.items():
            a, b = cells.get(new), cells.get(old)
            if not a or not b or "mb_s" not in a or "mb_s" not in b:
                continue
            warm[corpus] = (a, b)
            add("single, warm median", vocab, corpus, per_round(round_times(a), round_times(b)))
            i = 2 if clock == "cpu" else 1
            old_blocks = {blk[0]: blk[i] for blk in b.get("first_pass_blocks", [])}
            pairs = [(blk[i], old_blocks[blk[0]]) for blk in a.get("first_pass_blocks", []) if blk[0] in old_blocks]
            if pairs:
                first[corpus] = pairs
                add("single, first pass", vocab, corpus, [o / n for n, o in pairs], "blocks",
                    ratio=sum(o for _, o in pairs) / sum(n for n, _ in pairs))
        if warm:
            ta, tb = (total_entry([p[i] for p in warm.values()]) for i in (0, 1))
            add("single, warm median", vocab, "all", per_round(round_times(ta), round_times(tb)))
        if first:
            pairs = [p for ps in first.values() for p in ps]
            add("single, first pass", vocab, "all", [o / n for n, o in pairs], "blocks",
                ratio=sum(o for _, o in pairs) / sum(n for n, _ in pairs))
    for vocab, by_corpus in results.get("batch", {}).items():
        for corpus, cells in by_corpus.items():
            if new in cells and old in cells:
                add("batch, 2 threads", vocab, corpus, per_round(cells[new]["times"], cells[old]["times"]))
    for vocab, by_corpus in results.get("scaling", {}).items():
        for corpus, cells in by_corpus.items():
            if new in cells and old in cells:
                add("batch scaling", vocab, corpus, [n / o for n, o in zip(cells[new]["ratios"], cells[old]["ratios"])])
    for vocab, cells in results.get("decode", {}).items():
        if new in cells and old in cells:
            add("decode", vocab, "MB/s out", per_round(round_times(cells[new]), round_times(cells[old])))
    for kind, table in piece_tables(results.get("pieces", {})).items():
        for vocab, by_len in table.items():
            for length, cells in by_len.items():
                if new in cells and old in cells:
                    a, b = cells[new], cells[old]
                    key = "cpu_times" if clock == "cpu" else "times"
                    add("piece sweep" if kind == "same" else "piece sweep, new pieces", vocab, f"{int(length):,} B",
                        [(o / b["calls"]) / (n / a["calls"]) for n, o in zip(a[key], b[key])])
    return figs


def baseline_process_figures(results: dict, new: str, old: str) -> list[dict]:
    """The figures measured in fresh processes (load, cache, memory, worst cases): the
    installed build's probe is ``wordsplit:auto`` there."""
    figs: list[dict] = []

    def add(section, row, col, ratios, spread="rounds"):
        ratios = [r for r in ratios if r and r == r]
        if ratios:
            lo, hi = (min(ratios), max(ratios)) if spread == "rounds" and len(ratios) > 1 else (None, None)
            figs.append({"section": section, "row": row, "col": col, "n": len(ratios), "spread": spread,
                         "ratio": statistics.median(ratios), "lo": lo, "hi": hi})

    for vocab, cells in results.get("load", {}).items():
        a, b = cells.get(new, {}), cells.get(old, {})
        if "runs" in a and "runs" in b:
            for part in ("import", "construct", "first_encode", "total"):
                add("load time (wall)", vocab, part, [o[part] / n[part] for n, o in zip(a["runs"], b["runs"])])
            for part in ("import", "construct", "first_encode", "total"):
                if all(f"{part}_cpu" in r for r in a["runs"] + b["runs"]):
                    add("load time (CPU)", vocab, part, [o[f"{part}_cpu"] / n[f"{part}_cpu"]
                                                         for n, o in zip(a["runs"], b["runs"])])
    cache = {(e.get("vocab"), e.get("build")): e for e in results.get("cache", []) if "rounds" in e}
    for (vocab, build), b in cache.items():
        a = cache.get((vocab, ""))
        if build and a:
            for part in ("cold_s", "warm_s"):
                add("vocab disk cache", vocab, part.removesuffix("_s"),
                    [o[part] / n[part] for n, o in zip(a["rounds"], b["rounds"])])
    rss = {(e["key"], e["vocab"]): e for e in results.get("rss", []) if "vm_hwm_kib" in e}
    for (key, vocab), b in rss.items():
        a = rss.get((new, vocab))
        if key == old and a:
            add("peak memory", vocab, "peak RSS", [b["vm_hwm_kib"] / a["vm_hwm_kib"]], "none")
    for where, rows in results.get("worst", {}).items():
        a, b = rows.get(new), rows.get(old)
        if not a or not b or "runs" not in a or "runs" not in b:
            continue
        vocab, name = where.split("|")
        for size in a["sizes"]:
            ratios = [rb["sizes"][size]["seconds"] / ra["sizes"][size]["seconds"]
                      for ra, rb in zip(a["runs"], b["runs"])
                      if "seconds" in ra["sizes"].get(size, {}) and "seconds" in rb["sizes"].get(size, {})]
            label = f"{size // 1000} KB" if size % 1000 == 0 else f"{size / 2**20:g} MiB"
            add("worst cases", f"{vocab} {name}", label, ratios)
    return figs


def render_baseline(results: dict, clock: str) -> str:
    """Per figure, the build under test ÷ the baseline, matrices per section; the figures more
    than 3 % slower are listed."""
    meta = results["meta"]
    name = meta["baseline"]["name"]
    figs = baseline_figures(results, "wordsplit:worker", "baseline", clock)
    figs += baseline_process_figures(results, "wordsplit:auto", "baseline")
    control = baseline_figures(results, "wordsplit:auto", "wordsplit:worker", clock)
    parts = [f"## Baseline comparison: this build ÷ {name}\n\n"
             f"Speed of the build under test ÷ speed of `{name}` "
             f"(`--baseline {without_paths(meta['baseline']['source'])}`), per figure, from this one run: above "
             "1.00 the new build is faster, below 0.97 it is more than 3 % slower (**bold**). For memory, the "
             "baseline's peak ÷ the new one's. In-process sections (one pass, "
             "single, batch, decode, piece sweep) compare the two builds each in a worker process of its own "
             "(`ws auto/worker`, `ws NAME/worker`), taking turns with the other contenders; load time, the disk "
             "cache, memory and worst cases compare fresh processes of each. In parentheses: the spread of the "
             "paired ratios, min–max over the rounds (one-pass runs, timed rounds, probe rounds), or for the "
             "first pass the quartiles of the per-block ratios. Load time is shown on both clocks: wall time "
             "(what the load table shows) and the probe process's CPU time, which waiting for a core on this "
             "shared machine does not inflate."]
    sections = list(dict.fromkeys(f["section"] for f in figs))
    for section in sections:
        mine = [f for f in figs if f["section"] == section]
        rows_ = list(dict.fromkeys(f["row"] for f in mine))
        cols = list(dict.fromkeys(f["col"] for f in mine))
        table = []
        for row in rows_:
            cells = []
            for col in cols:
                f = next((f for f in mine if f["row"] == row and f["col"] == col), None)
                if f is None:
                    cells.append("–")
                    continue
                text = f"{f['ratio']:.3f}"
                text = f"**{text}**" if f["ratio"] < 0.97 else text
                if f["lo"] is not None:
                    text += f" ({f['lo']:.2f}–{f['hi']:.2f})"
                cells.append(text)
            table.append([row] + cells)
        parts.append(f"### {section}\n\n" + md_table(["", *cols], table))
    slower = [f for f in figs if f["ratio"] < 0.97]
    doubtful = [f for f in figs if f["ratio"] >= 0.97 and f["lo"] is not None and f["lo"] < 0.97]
    where = lambda f: f"{f['section']} {f['row']} {f['col']} {f['ratio']:.3f}"  # noqa: E731
    parts.append(f"**{len(figs) - len(slower)} of {len(figs)} figures within 3 % or faster.** "
                 + (f"More than 3 % slower (median of the paired ratios): {'; '.join(map(where, slower))}. "
                    if slower else "None is more than 3 % slower by the median of its paired ratios. ")
                 + (f"Within 3 % by the median but with part of the spread below 0.97: {len(doubtful)} "
                    f"({'; '.join(map(where, doubtful))})." if doubtful else ""))
    if control:
        cells = [f"{f['section']} {f['row']} {f['col']}: {f['ratio']:.2f}" for f in control
                 if f["col"] == "all" or f["section"] in ("decode",)]
        parts.append("Control, the same build in this process ÷ in its worker (what the process alone changes): "
                     + "; ".join(cells) + ".")
    return "\n\n".join(parts)
