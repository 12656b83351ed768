"""The Markdown report of a benchmark run (and the machine/version facts in its header).

Every ``render_*`` takes the raw results of one section, as ``bench.py`` stores them in its
JSON output, and returns Markdown.
"""

from __future__ import annotations

import math
import platform
import re
import os
import subprocess
from datetime import datetime, timezone
from importlib import metadata
import statistics
from pathlib import Path
from typing import Optional

from contenders import BATCH_THREADS, NUMPY, REPO

REFERENCE = "tiktoken"  # every throughput is also shown as a ratio to this contender
GAP = ("wordsplit ÷ the best peer per cell: for every peer of the shape (`list`: Python lists, `numpy`: arrays or "
       "flat buffers, `fastest`: each library's faster shape) the paired speed ratio, and the smallest of them, "
       "with the peer it is against. Peers whose output differs from the oracle's are left out.")
CLOCKS = {
    "cpu": "single-thread encode, decode, worst cases and the piece sweep are timed by the process's CPU time "
           "(other load on the shared machine does not count against a contender); batch encode and load time "
           "by wall time",
    "wall": "wall time everywhere",
}


# -- header facts ---------------------------------------------------------------------------


def without_paths(text: str) -> str:
    """``text`` with every absolute path cut to its last part (a report names files, not the
    machine's directories): ``--json /data/runs/out.json`` → ``--json out.json``."""
    return re.sub(r"(?<![\w.])/(?:[^\s/`'\"]+/)*([^\s/`'\"]+)", r"\1", text)


def machine_info() -> dict:
    """CPU model, cores, memory, OS and Python of this machine."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")), "0")
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": round(int(mem) / 2**20, 1),
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def versions(snapshot_of: Optional[str], built_elsewhere: bool = False) -> dict:
    """Package versions, and wordsplit's git commit (read-only git calls) and build time;
    ``built_elsewhere``: wordsplit runs from ``snapshot_of`` (``--wordsplit``), a build
    whose commit this checkout cannot tell."""
    out = {}
    for dist in ("wordsplit", "tiktoken", "tokenizers", "quicktok-v1", "gigatoken", "fastokens"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"

    def git(*cmd: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *cmd], capture_output=True, text=True).stdout.strip()

    if built_elsewhere:
        out["wordsplit"] += f" (the build {Path(snapshot_of).name}, run from a copy taken at start)"
        return out
    dirty = " + uncommitted changes" if git("status", "--porcelain", "--", "src", "native") else ""
    out["wordsplit"] += f" (commit {git('rev-parse', '--short', 'HEAD')}{dirty}"
    out["wordsplit"] += "; run from a copy of the package taken at start)" if snapshot_of else ")"
    native = next(iter((REPO / "src" / "wordsplit").glob("_native*.so")), None)
    if native:
        built = datetime.fromtimestamp(native.stat().st_mtime, timezone.utc)
        out["wordsplit._native built"] = built.strftime("%Y-%m-%d %H:%M UTC")
    return out


# -- formatting -----------------------------------------------------------------------------


def num(x: float) -> str:
    """Three significant digits, never in exponent form: 0.0123, 1.23, 12.3, 123, 12,345."""
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def md_table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A Markdown table; the first ``left`` columns are left-aligned, the rest right-aligned."""
    align = [":---"] * left + ["---:"] * (len(header) - left)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def round_times(entry: dict) -> Optional[list[float]]:
    """The seconds of each interleaved round on the entry's clock, if it has them."""
    return entry.get("cpu_times" if entry.get("clock") == "cpu" else "times")


def speed_ratio(entry: dict, ref: dict, value: str = "mb_s") -> float:
    """How many times faster ``entry`` is than ``ref``: the median over rounds of the ratio of
    their times in the same round, when both timed the same work round by round (a drift in
    machine speed then cancels out), else the ratio of their ``value``s."""
    mine, theirs = round_times(entry), round_times(ref)
    if mine and theirs and len(mine) == len(theirs) and "bytes" in entry and entry["bytes"] == ref.get("bytes"):
        return statistics.median(t / m for m, t in zip(mine, theirs))
    return entry[value] / ref[value]


def cell(entry: Optional[dict], ref: Optional[dict], value: str = "mb_s") -> str:
    """``12.3 (0.85×)``; ``✗N`` when N documents differ from the oracle; why, when not timed."""
    if not entry:
        return "–"
    if "timeout_s" in entry:
        return f"not timed (pass > {entry['timeout_s']:.0f} s)"
    text = num(entry[value])
    if ref and value in ref:
        text += f" ({speed_ratio(entry, ref, value):.2f}×)"
    parity = entry.get("parity")
    if parity and parity["mismatched"]:
        text += f" ✗{parity['mismatched']}"
    return text


def total_entry(cells: list[dict]) -> Optional[dict]:
    """All corpora together: total bytes / total median seconds (None if any is missing), and
    the time of each round summed over the corpora, so ratios can still be paired by round."""
    if not cells or any("mb_s" not in c for c in cells):
        return None
    mismatched = sum((c["parity"] or {}).get("mismatched", 0) for c in cells)
    total = {"mb_s": sum(c["bytes"] for c in cells) / sum(c["median_s"] for c in cells) / 1e6,
             "parity": {"mismatched": mismatched}, "bytes": sum(c["bytes"] for c in cells),
             "clock": cells[0].get("clock")}
    rounds = [round_times(c) for c in cells]
    if all(rounds) and len({len(r) for r in rounds}) == 1:
        total["cpu_times" if total["clock"] == "cpu" else "times"] = [sum(ts) for ts in zip(*rounds)]
    return total


# -- sections -------------------------------------------------------------------------------


def render_throughput(title: str, blurb: str, section: dict, corpora: list[str]) -> str:
    """One table per vocabulary: contenders × corpora, MB/s and ratio to tiktoken."""
    parts = [f"## {title}\n\n{blurb}"]
    for vocab, by_corpus in section.items():
        keys = list(dict.fromkeys(k for c in corpora for k in by_corpus.get(c, {})))
        rows = []
        totals = {k: total_entry([by_corpus[c][k] for c in corpora if k in by_corpus.get(c, {})]) for k in keys}
        for key in keys:
            label = next(by_corpus[c][key]["label"] for c in corpora if key in by_corpus.get(c, {}))
            cells = [cell(by_corpus.get(c, {}).get(key), by_corpus.get(c, {}).get(REFERENCE)) for c in corpora]
            rows.append([label] + cells + [cell(totals[key], totals.get(REFERENCE))])
        parts.append(f"### {vocab}\n\n" + md_table(["contender"] + corpora + ["all"], rows))
    return "\n\n".join(parts)


def first_pass_section(single: dict) -> dict:
    """The single-thread section with each cell's first (checked) pass in place of the median."""
    return {vocab: {corpus: {key: {**e, "mb_s": e["first_pass_mb_s"], "median_s": e["first_pass_s"],
                                   "times": None, "cpu_times": None}
                             for key, e in cells.items() if "first_pass_mb_s" in e}
                    for corpus, cells in by_corpus.items()}
            for vocab, by_corpus in single.items()}


def paired_total_ratio(entries: list[dict]) -> float:
    """All corpora together: the median over rounds of (1-thread seconds summed over corpora)
    ÷ (2-thread seconds summed likewise), each corpus's two calls being a back-to-back pair."""
    ones = [sum(ts) for ts in zip(*(e["one_thread_times"] for e in entries))]
    twos = [sum(ts) for ts in zip(*(e["two_thread_times"] for e in entries))]
    return statistics.median(one / two for one, two in zip(ones, twos))


def render_scaling(section: dict, corpora: list[str]) -> str:
    """Per vocabulary and contender: 2-thread ÷ 1-thread batch speed, per corpus and overall."""
    rows = []
    for vocab, by_corpus in section.items():
        keys = list(dict.fromkeys(k for c in corpora for k in by_corpus.get(c, {})))
        for n, key in enumerate(keys):
            entries = [by_corpus.get(c, {}).get(key) for c in corpora]
            label = next(e["label"] for e in entries if e)
            cells = [f"{e['ratio']:.2f}×" if e else "–" for e in entries]
            whole = f"{paired_total_ratio(entries):.2f}×" if all(entries) else "–"
            rows.append([vocab if n == 0 else "", label] + cells + [whole])
    return (f"## Batch scaling, {BATCH_THREADS} threads ÷ 1 thread\n\n"
            f"The same `encode_batch` call over all documents of a corpus on 1 and on {BATCH_THREADS} threads, "
            "back to back (which goes first alternates); the median of the per-pair ratios, so a slow or fast "
            "spell of the shared machine hits both calls of a pair. `all`: the same median, of each round's "
            f"1-thread times summed over the corpora ÷ its {BATCH_THREADS}-thread times summed likewise. "
            "(HF tokenizers sets its thread count once per process, so it is not in this table.)\n\n"
            + md_table(["vocab", "contender"] + corpora + ["all"], rows, left=2))


def render_decode(section: dict) -> str:
    rows = []
    for vocab, cells in section.items():
        ref = cells.get(REFERENCE)
        rows += [[vocab, e["label"], cell(e, ref, "mids_s"), cell(e, ref, "mb_s")] for e in cells.values()]
    return ("## Decode\n\nThe oracle's ids of every benchmarked document decoded back, one call per document, "
            "single thread: M ids/s and MB/s of UTF-8 output, ratio to tiktoken in parentheses.\n\n"
            + md_table(["vocab", "contender", "M ids/s", "MB/s out"], rows, left=2))


def render_load(section: dict) -> str:
    rows = []
    for vocab, cells in section.items():
        for v in cells.values():
            if "error" in v:
                rows.append([vocab, v["label"], "error: " + v["error"], "", "", ""])
            else:
                times = ("import", "construct", "first_encode", "total")
                rows.append([vocab, v["label"]] + [num(v[p] * 1e3) for p in times])
    return ("## Load time\n\nA fresh process, warm file cache: median ms to import the library, construct the "
            "tokenizer, and run the first encode of a short text.\n\n"
            + md_table(["vocab", "library", "import", "construct", "first encode", "total"], rows, left=2))


def render_cache(section: list[dict]) -> str:
    rows = [[e["name"], "error: " + " ".join(e["error"]), "", ""] if "error" in e else
            [e["name"], num(e["cold_s"] * 1e3), num(e["warm_s"] * 1e3), f"{e['speedup']:.1f}×"] for e in section]
    return ("## Vocabulary load, cold and warm disk cache\n\n`load_vocab` in a fresh cache directory: cold parses "
            "the vocabulary file and stores the parsed entry, warm reads that entry (median ms).\n\n"
            + md_table(["vocab", "cold", "warm", "speed-up"], rows))


def render_rss(section: list[dict]) -> str:
    base = next((v["vm_hwm_kib"] for v in section if v["key"] == "python" and "vm_hwm_kib" in v), 0)
    rows = []
    for v in section:
        vocab = "–" if v["key"] == "python" else v["vocab"]
        if "error" in v:
            rows.append([v["label"], vocab, "error: " + v["error"], ""])
        else:
            rows.append([v["label"], vocab, num(v["vm_hwm_kib"] / 1024), f"{(v['vm_hwm_kib'] - base) / 1024:+.0f}"])
    return ("## Peak memory\n\nPeak RSS (VmHWM) of a fresh process that loads the tokenizer and encodes a short "
            "text; Δ is over a bare interpreter running the same probe. (`ru_maxrss` is in the JSON, but on Linux a "
            "child started by a large parent inherits the parent's peak there.)\n\n"
            + md_table(["library", "vocab", "peak RSS (MiB)", "Δ (MiB)"], rows, left=2))


def render_worst(section: dict, sizes: list[int]) -> str:
    def size_name(s: int) -> str:
        return f"{s // 1000} KB" if s % 1000 == 0 else f"{s / 2**20:g} MiB"

    header = (["vocab", "input", "contender"] + [size_name(s) for s in sizes]
              + ["ms per 100 KB", f"t({size_name(sizes[-1])}) / t({size_name(sizes[0])})"])
    rows, errors = [], []
    for key, by_contender in section.items():
        vocab, name = key.split("|")
        for row in by_contender.values():
            if row["error"]:
                errors.append(f"- {vocab}/{name}, {row['label']}: {row['error']}")
            cells = []
            for size in sizes:
                line = row["sizes"].get(size)
                if line is None:
                    cells.append("error" if row["error"] else "–")
                elif "skipped" in line:
                    cells.append("skipped")
                else:
                    cells.append(num(line["seconds"] * 1e3) + (" ✗" if line.get("parity_ok") is False else ""))
            slope, ratio = row["slope_ms_per_100kb"], row["ratio_big_small"]
            rows.append([vocab, name, row["label"]] + cells
                        + [num(slope) if slope is not None else "–", f"{ratio:.1f}" if ratio is not None else "–"])
    return ("## Worst cases\n\nOne encode call on the first N bytes of 1 MiB of `a` (adv_repeat_a), of spaces, of "
            "`-` and of tabs: ms per call (median of up to 3 calls, each on text the contender has not seen: N "
            "characters, then one and two fewer, as a library that keeps whole pieces answers a repeated one from "
            "its cache), the least-squares slope, and the growth from the "
            f"smallest to the largest size (linear: {sizes[-1] / sizes[0]:.1f}). A size whose quadratic projection "
            "would overrun the probe's budget is skipped; ✗: ids differ from the oracle's.\n\n"
            + md_table(header, rows, left=3)
            + ("\n\nErrors (the sizes before them were measured):\n" + "\n".join(errors) if errors else ""))


def piece_tables(section: dict) -> dict[str, dict[str, dict]]:
    """The piece sweep's two tables, ``{"same": {vocab: by_len}, "unseen": {vocab: by_len}}``:
    the same piece every call, and a new piece every call."""
    return {"same": {vocab: {n: cells for n, cells in by_len.items() if n != "unseen"}
                     for vocab, by_len in section.items()},
            "unseen": {vocab: by_len.get("unseen", {}) for vocab, by_len in section.items()}}


def render_pieces(section: dict, lengths: list[int]) -> str:
    def rows_of(table: dict) -> list[list[str]]:
        rows = []
        for vocab, by_len in table.items():
            keys = list(dict.fromkeys(k for cells in by_len.values() for k in cells))
            for key in keys:
                label = next(cells[key]["label"] for cells in by_len.values() if key in cells)
                cells = []
                for length in lengths:
                    e = by_len.get(str(length), {}).get(key)
                    cells.append("–" if e is None else
                                 num(e["us_per_call"]) + (" ✗" if e["parity_ok"] is False else ""))
                big = by_len.get(str(lengths[-1]), {}).get(key)
                rows.append([vocab, label] + cells + [num(big["us_per_call"] * 1e3 / lengths[-1]) if big else "–"])
        return rows

    header = ["vocab", "contender"] + [f"{n:,} B" for n in lengths] + [f"ns/B at {lengths[-1]:,}"]
    tables = piece_tables(section)
    text = ("## Piece-length sweep\n\nOne unsplittable piece of random lowercase letters: µs per encode call "
            "(whole API call, so the short pieces show per-call overhead). The same piece every call, a warm "
            "regime: wordsplit keeps pieces of up to 16 KB, gigatoken and fastokens pieces of any length, "
            "HF its word cache (short pieces), and they answer the piece from there after the first call. "
            "✗: ids differ from the oracle's.\n\n" + md_table(header, rows_of(tables["same"]), left=2))
    if any(tables["unseen"].values()):
        text += ("\n\n### Pieces not seen before\n\nThe same lengths, a new piece of random letters every "
                 "call (made before the timing): what each library's merge costs on a piece the first time, "
                 "with no cache of pieces to answer it. ✗: ids of three such pieces differ from the oracle's."
                 "\n\n" + md_table(header, rows_of(tables["unseen"]), left=2))
    return text


def render_parity(results: dict) -> str:
    """Every mismatch found, in one list."""
    lines = []

    def doc_line(where: str, e: dict) -> None:
        p = e.get("parity")
        if p and p["mismatched"]:
            lines.append(f"- {where}: **{e['label']}** {p['mismatched']}/{p['checked']} documents differ; "
                         f"first: {p['first']}")

    for section in ("single", "batch"):
        for vocab, by_corpus in results.get(section, {}).items():
            for corpus, cells in by_corpus.items():
                for e in cells.values():
                    doc_line(f"{section} {vocab}/{corpus}", e)
    for vocab, cells in results.get("decode", {}).items():
        for e in cells.values():
            doc_line(f"decode {vocab}", e)
    for run in results.get("onepass", {}).get("runs", []):
        if "error" in run:
            lines.append(f"- one pass {run['vocab']}, run {run['run'] + 1}: failed: {run['error']}")
            continue
        for corpus, cells in run["result"]["corpora"].items():
            for key, c in cells.items():
                if c["mismatched"]:
                    lines.append(f"- one pass {run['vocab']}/{corpus}, run {run['run'] + 1}: "
                                 f"**{run['result']['labels'][key]}** {c['mismatched']}/{c['checked']} documents "
                                 f"differ; first: {c['first']}")
    for key, rows in results.get("worst", {}).items():
        for row in rows.values():
            bad = [s for s, line in row["sizes"].items() if line.get("parity_ok") is False]
            if bad:
                lines.append(f"- worst {key.replace('|', '/')}: **{row['label']}** differs at sizes {bad}")
    for kind, table in piece_tables(results.get("pieces", {})).items():
        for vocab, by_len in table.items():
            for length, cells in by_len.items():
                lines += [f"- piece sweep ({kind} piece) {vocab}, {length} B: **{e['label']}** differs"
                          for e in cells.values() if e["parity_ok"] is False]
    return "## Parity\n\n" + ("\n".join(lines) if lines else "Every contender matched its oracle on everything timed.")


def render(results: dict, args, worst_sizes: list[int], piece_lengths: list[int]) -> str:
    """The whole report: header, one section per measurement run, parity list, notes."""
    meta = results["meta"]
    machine = meta["machine"]
    load = " → ".join(f"{a[0]:.1f}" for a in (meta["load_avg_start"], meta.get("load_avg_end")) if a)
    head = [
        "# wordsplit benchmark",
        "",
        f"- date: {meta['date']}",
        f"- machine: {machine['cpu']}, {machine['cores']} cores, {machine['mem_gib']} GiB, {machine['os']}, "
        f"Python {machine['python']}; 1-min load average {load} (start → end)",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()),
        f"- command: `{without_paths(meta['command'])}`",
        "- corpora (bytes measured / documents): " + ", ".join(
            f"{n} {c['bytes'] / 1e6:.2f} MB / {c['docs']}" for n, c in meta["corpora"].items()),
        f"- oracles: tiktoken for cl100k_base and o200k_base, HF tokenizers for qwen3. Median of {args.repeats} "
        "interleaved (round-robin) repeats; MB = 10^6 bytes of UTF-8 text.",
        f"- clock: {CLOCKS[args.clock]}",
    ]
    if "parallel_start" in meta:
        ceiling = " → ".join(f"{meta[k]:.2f}×" for k in ("parallel_start", "parallel_end") if k in meta)
        head.append(f"- {BATCH_THREADS}-thread ceiling of this machine (start → end): {BATCH_THREADS} threads finish "
                    f"{BATCH_THREADS} equal CPU-bound jobs (sha256) {ceiling} as fast as one thread; a batch "
                    "cannot scale beyond that here")
    if meta.get("baseline"):
        head.append(f"- baseline: `{meta['baseline']['name']}` = `{without_paths(meta['baseline']['source'])}`, "
                    "timed in worker processes next to the build under test (see *Baseline comparison*)")
    body = []
    corpora = list(meta["corpora"])
    worker_keys = WORKER_KEYS
    if "onepass" in results:
        body.append(render_onepass(results["onepass"], worker_keys))
    if "single" in results:
        body.append(render_throughput(
            "Single-thread encode (MB/s)",
            "Each document (~10 KB) encoded in its own call on one thread. Ratio to tiktoken (same run, same "
            "documents; the median of the two's ratio in each round, so a drift in machine speed cancels) "
            "in parentheses; ✗N: N documents differ from the oracle. `ws python` runs on a "
            f"{args.python_bytes / 1e3:.0f} KB stride sample of each corpus.",
            results["single"], corpora))
        body.append(render_throughput(
            "Single-thread encode, first pass (MB/s)",
            "The same, timed on the checked pass: the first time each contender sees the documents, "
            "so no cache of recently merged pieces holds them yet (one pass, not a median; noisier). The "
            "contenders take turns over it, 64 KB of documents at a time.",
            first_pass_section(results["single"]), corpora))
        body.append(render_gap(
            "wordsplit ÷ best peer, single-thread encode", "Median pass (warm: the same documents every pass). "
            + GAP, results["single"], corpora, "single"))
        body.append(render_gap(
            "wordsplit ÷ best peer, first pass", "The checked pass (text not seen before). " + GAP,
            first_pass_section(results["single"]), corpora, "single"))
    if "batch" in results:
        body.append(render_throughput(
            f"Batch encode, {BATCH_THREADS} threads (MB/s)",
            "All documents of a corpus in one call: wordsplit `encode_batch(num_threads=2)`, tiktoken "
            "`encode_ordinary_batch(num_threads=2)`, HF `encode_batch_fast` + `.ids`, quicktok "
            "`encode_batch(texts, 2)` (a flat uint32 array + offsets), gigatoken `encode_batch_list` (lists) and "
            "`encode_batch` (numpy: an awkward array), fastokens `encode_batch` + `.ids` and `encode_batch_flat` "
            "(numpy: bytes + offsets), wordsplit numpy: `encode_batch_flat` (memoryviews). gigatoken, fastokens "
            "and HF run on a rayon pool of `RAYON_NUM_THREADS=2`.", results["batch"], corpora))
        body.append(render_gap(f"wordsplit ÷ best peer, batch encode, {BATCH_THREADS} threads", GAP,
                               results["batch"], corpora, "batch"))
    if "scaling" in results:
        body.append(render_scaling(results["scaling"], corpora))
    if "decode" in results:
        body.append(render_decode(results["decode"]))
        body.append(render_gap("wordsplit ÷ best peer, decode", "Decode speed (MB/s out) of `ws auto` ÷ each peer's, "
                               "paired by round; the smallest, and which peer.",
                               {v: {"decode": cells} for v, cells in results["decode"].items()}, ["decode"], "decode",
                               shapes=("list",)))
    if "load" in results:
        body.append(render_load(results["load"]))
    if "cache" in results:
        body.append(render_cache(results["cache"]))
    if "rss" in results:
        body.append(render_rss(results["rss"]))
    if "worst" in results:
        body.append(render_worst(results["worst"], worst_sizes))
    if "pieces" in results:
        body.append(render_pieces(results["pieces"], piece_lengths))
    if meta.get("baseline"):
        body.append(render_baseline(results, args.clock))
    body.append(render_parity(results))
    notes = sorted(set(meta["notes"]))
    if notes:
        body.append("## Notes\n\n" + "\n".join(f"- {n}" for n in notes))
    return "\n".join(head) + "\n\n" + "\n\n".join(body) + "\n"


# -- one pass over whole corpora -------------------------------------------------------------


def onepass_cells(section: dict) -> dict:
    """``{vocab: {"labels": {...}, "runs": [ {corpus: {key: cell}} per run ]}}`` from the raw
    runs (failed runs left out), each run also with an ``"all"`` corpus: the sums."""
    out: dict = {}
    for entry in section["runs"]:
        if "result" not in entry:
            continue
        result = entry["result"]
        by_vocab = out.setdefault(entry["vocab"], {"labels": result["labels"], "runs": [], "load_avg": []})
        corpora = dict(result["corpora"])
        keys = list(result["labels"])
        corpora["all"] = {k: {"bytes": sum(c[k]["bytes"] for c in result["corpora"].values()),
                              "seconds": sum(c[k]["seconds"] for c in result["corpora"].values()),
                              "mismatched": sum(c[k]["mismatched"] for c in result["corpora"].values())}
                          for k in keys if all(k in c for c in result["corpora"].values())}
        by_vocab["runs"].append(corpora)
        by_vocab["load_avg"] += entry["load_avg"]
    return out


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
        mine = [cells[k]["seconds"] for k in keys if k in cells]
        theirs = [cells[k]["seconds"] for k in refs if k in cells]
        if mine and theirs:
            ratios.append(min(theirs) / min(mine))
    return ratio_stats(ratios) if ratios else None


WORDSPLIT = "wordsplit:auto"


#: The keys of wordsplit builds timed in worker processes (the build under test's twin and a
#: baseline build): wordsplit, not peers.
WORKER_KEYS = ("wordsplit:worker", "baseline")


def is_peer(key: str, worker_keys: tuple = ()) -> bool:
    return not key.startswith("wordsplit:") and key not in worker_keys


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

    def mb_s(runs: list[dict], corpus: str, key: str) -> str:
        times = [run[corpus][key]["seconds"] for run in runs if key in run.get(corpus, {})]
        if not times:
            return "–"
        text = num(runs[0][corpus][key]["bytes"] / statistics.median(times) / 1e6)
        ratio = onepass_ratio(runs, corpus, key, REFERENCE)
        if ratio and key != REFERENCE:
            text += f" ({ratio[0]:.2f}×)"
        bad = max(run[corpus][key]["mismatched"] for run in runs if key in run.get(corpus, {}))
        return text + (f" ✗{bad}" if bad else "")

    rows = []
    for vocab, d in data.items():
        runs = d["runs"]
        bases = [k for k in d["labels"] if k not in worker_keys and not k.endswith(NUMPY)]
        for n, key in enumerate(bases):
            cells = [mb_s(runs, corpus, k) for corpus in corpora for k in (key, key + NUMPY)]
            label = d["labels"][key]
            rows.append([vocab if n == 0 else "", f"**{label}**" if key == WORDSPLIT else label] + cells)
    header = ["vocab", "contender"] + [f"{c} {shape}" for c in corpora for shape in ("list", "numpy")]
    table = md_table(header, rows, left=2)

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
            "contender's ids are checked against the oracle's, block by block (✗N: N documents differ). "
            f"Median of {n_runs} run{'s' if n_runs > 1 else ''} (a fresh process each); `all` = all corpora "
            "together. Ratio to tiktoken (its list form) in parentheses, paired: tiktoken's seconds ÷ the "
            "contender's in the same run.\n\n" + table
            + f"\n\n### wordsplit's lead, one pass\n\nSpeed of wordsplit ÷ the peer's, per cell and output shape: "
              "`list` compares the list forms, `numpy` the numpy forms, `fastest` each library's faster shape in "
              "each run; `best peer` is the fastest peer of that shape in each run. The median over runs of the "
              f"paired ratio{spread}; `smallest` is the smallest of the corpus cells. Smallest over every "
              f"vocabulary and corpus: {floor}.\n\n"
            + md_table(["vocab", "÷ peer", "shape"] + corpora + ["smallest"], lead_rows, left=3))


def shape_of(key: str, section: str) -> str:
    """The output shape of a contender's result in ``section``: quicktok's batch is a flat
    uint32 array plus offsets, the ``+numpy`` contenders' results are arrays."""
    if key.endswith(NUMPY) or (section == "batch" and key == "quicktok"):
        return "numpy"
    return "list"


def render_gap(title: str, blurb: str, section: dict, corpora: list[str], name: str,
               shapes=("list", "numpy", "fastest"), value: str = "mb_s") -> str:
    """wordsplit ÷ the best peer per vocabulary, corpus and output shape: for each peer of that
    shape the paired ratio (:func:`speed_ratio`), the smallest of them, and which peer it is."""
    rows = []
    for vocab, by_corpus in section.items():
        for shape in shapes:
            cells = []
            for corpus in corpora + (["all"] if len(corpora) > 1 else []):
                if corpus == "all":
                    keys = list(dict.fromkeys(k for c in corpora for k in by_corpus.get(c, {})))
                    entries = {k: total_entry([by_corpus[c][k] for c in corpora if k in by_corpus.get(c, {})])
                               for k in keys if all(k in by_corpus.get(c, {}) for c in corpora)}
                else:
                    entries = by_corpus.get(corpus, {})
                entries = {k: e for k, e in entries.items() if e and value in e}
                mine = [k for k in entries if k in (WORDSPLIT, WORDSPLIT + NUMPY)
                        and shape in ("fastest", shape_of(k, name))]
                peers = [k for k in entries if is_peer(k, WORKER_KEYS) and shape in ("fastest", shape_of(k, name))
                         and not (entries[k].get("parity") or {}).get("mismatched")]
                if not mine or not peers:
                    cells.append("–")
                    continue
                best = min(((max(speed_ratio(entries[m], entries[p], value) for m in mine) if shape == "fastest"
                             else speed_ratio(entries[mine[0]], entries[p], value), p) for p in peers),
                           key=lambda rp: rp[0])
                label = next(by_corpus[c][best[1]]["label"] for c in corpora if best[1] in by_corpus.get(c, {}))
                cells.append(f"{best[0]:.2f}× {label}")
            rows.append([vocab, shape] + cells)
    header = ["vocab", "shape"] + corpora + (["all"] if len(corpora) > 1 else [])
    return f"### {title}\n\n{blurb}\n\n" + md_table(header, rows, left=2)


# -- baseline comparison ---------------------------------------------------------------------


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
