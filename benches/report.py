"""The Markdown report of a benchmark run: the header, then one section per measurement, the
parity list and the notes.

Every ``render_*`` takes the raw results of one section, as ``bench.py`` stores them in its
JSON output, and returns Markdown: the sections measured in this process and in probes are in
``report_sections.py``, the one pass over whole corpora in ``report_onepass.py``, the
comparison with a baseline build in ``report_baseline.py``; what their tables share is in
``report_format.py``, and the facts of the header are gathered by ``run_facts.py``.
"""

from __future__ import annotations

from contenders import BATCH_THREADS
from report_baseline import render_baseline
from report_format import WORKER_KEYS, without_paths
from report_onepass import render_onepass
from report_sections import (first_pass_section, render_cache, render_decode, render_gap, render_load,
                             render_parity, render_pieces, render_rss, render_scaling, render_throughput,
                             render_worst)

GAP = ("wordsplit ÷ the best peer per cell: for every peer of the shape (`list`: Python lists, `numpy`: arrays or "
       "flat buffers, `fastest`: each library's faster shape) the paired speed ratio, and the smallest of them, "
       "with the peer it is against. Peers whose output differs from the oracle's are left out.")
CLOCKS = {
    "cpu": "single-thread encode, decode, worst cases and the piece sweep are timed by the process's CPU time "
           "(other load on the shared machine does not count against a contender); batch encode and load time "
           "by wall time",
    "wall": "wall time everywhere",
}


def render(results: dict, args, worst_sizes: list[int], piece_lengths: list[int]) -> str:
    """The whole report: header, one section per measurement run, parity list, notes."""
    meta = results["meta"]
    machine = meta["machine"]
    load = " → ".join(f"{a[0]:.1f}" for a in (meta["load_avg_start"], meta.get("load_avg_end")) if a)
    head = [
        "# wordsplit benchmark",
        "",
        f"- date: {meta['date']}",
        f"- machine: {machine['cpu']} ({machine.get('vector', '?')}), {machine['cores']} cores, "
        f"{machine['mem_gib']} GiB, {machine['os']}, Python {machine['python']}; 1-min load average {load} "
        "(start → end)",
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
