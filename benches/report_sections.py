"""The report's sections measured in this process and in probes, one ``render_*`` each: the
throughput tables, wordsplit ÷ the best peer, batch scaling, decode, load time, the disk cache,
peak memory, worst cases, the piece-length sweep, and every mismatch found."""

from __future__ import annotations

import statistics

from contenders import BATCH_THREADS, NUMPY
from report_format import (REFERENCE, WORDSPLIT, WORKER_KEYS, cell, is_peer, md_table, num, shape_of, speed_ratio,
                           total_entry)


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
