"""One pass over whole corpora, in a fresh process for one vocabulary; prints JSON on stdout.

    python benches/onepass.py VOCAB CORPUS_DIR --corpora prose,code,multilingual
        [--doc-bytes 16KB] [--block 1MB] [--max-bytes 0] [--clock cpu] [--shift N]
        [--current-root DIR --baseline-root DIR --baseline-name NAME]

Each document of each corpus is encoded exactly once by each contender (wordsplit auto; with a
baseline, the build under test and the baseline in worker processes; every peer of
``contenders.peer_keys``, a peer that names another interpreter in a worker process run by it;
and the numpy form of each library that has one), the contenders taking turns a block of
documents (``--block`` bytes) at a time, the first of each block rotating. Nothing but one
short text has been encoded in this process before, so every cache (wordsplit's per-thread
piece cache, HF's word cache) starts cold and sees each document once: the speed of a job
that reads a corpus once. Every contender's ids are compared with the oracle's block by block
(and then dropped, so the memory stays small); a contender whose ids differ is dropped at that
block, the first difference kept, and is not timed from there on (its cells give no speed).
Each contender encodes one short text before the timing starts, so what a library sets up once
per process on its first call is left to the load-time section. ``bench.py`` starts one such
process per vocabulary and run (``--sections onepass``); it needs the environment ``bench.py`` sets up (the snapshot on
``PYTHONPATH``, ``WORDSPLIT_BENCH_DATA``).
"""

from __future__ import annotations

import argparse
import json
import sys
from array import array
from pathlib import Path

from builds import BASELINE_KEY, WORKER_KEY, RemoteRunner, build_runners, close_runners
from contenders import NUMPY, ORACLE, peer_keys
from documents import doc_blocks, parse_size, read_corpus, split_documents, stride_sample, utf8_len
from passes import compare, log
from timing import WARM_UP, fresh


def id_array(ids) -> array:
    """An ``array("I")`` of a document's ids, from a list or a uint32 numpy array (its bytes)."""
    return array("I", ids) if isinstance(ids, list) else array("I", ids.tobytes())


def one_pass(vocab: str, corpora: dict[str, list[str]], block_bytes: int, clock: str, shift: int,
             workers: list[RemoteRunner], keys: list[str] | None = None) -> dict:
    """``{"labels": {key: label}, "skipped": {...}, "oracle": key, "differs": {key: where},
    "corpora": {name: {key: cell}}}``; a cell holds the bytes, the pass's seconds on both
    clocks, each block's ``[wall, cpu]``, and the parity against the oracle. A contender that
    differs from the oracle is in ``differs`` (corpus and first difference) and its cells have
    no ``seconds``: it is not timed from the block where it differed on. ``keys``: the
    contenders (default wordsplit auto, its numpy form and every peer's two forms)."""
    keys = keys or ["wordsplit:auto", "wordsplit:auto" + NUMPY, *peer_keys(vocab, numpy=True)]
    contenders, runners, skipped = build_runners(keys, vocab)
    try:
        return _one_pass(vocab, corpora, block_bytes, clock, shift, workers, contenders, runners, skipped)
    finally:
        close_runners(runners)


def _one_pass(vocab, corpora, block_bytes, clock, shift, workers, contenders, runners, skipped) -> dict:
    if workers:
        contenders[1:1] = [w.contender for w in workers]
        runners = {"wordsplit:auto": runners.pop("wordsplit:auto"), **{w.contender.key: w for w in workers},
                   **runners}
    keys = list(runners)
    for runner in runners.values():
        # one short text first, outside the timing (see timing.WARM_UP)
        runner.put("warm-up", [WARM_UP])
        runner.encode("warm-up")
    oracle = ORACLE[vocab] if ORACLE[vocab] in runners else None
    differs: dict[str, str] = {}
    out = {"labels": {c.key: c.label for c in contenders}, "skipped": skipped, "oracle": oracle,
           "differs": differs, "corpora": {}}
    for name, docs in corpora.items():
        cells = {k: {"bytes": utf8_len(docs), "docs": len(docs), "wall": 0.0, "cpu": 0.0, "blocks": [],
                     "checked": 0, "mismatched": 0, "first": None} for k in keys}
        for n, block in enumerate(doc_blocks(docs, block_bytes)):
            start = (n + shift) % len(keys)
            ids = {}
            for key in keys[start:] + keys[:start]:
                if key in differs:
                    continue
                runners[key].put("block", [fresh(docs[i]) for i in block])  # see timing.fresh
                got, wall, cpu = runners[key].encode("block", keep=True, collect=True)
                # arrays are not tracked by the garbage collector: the ids kept for the parity
                # check do not make the collections in the next contender's timed span longer
                ids[key] = [id_array(doc_ids) for doc_ids in got]
                del got
                cells[key]["wall"] += wall
                cells[key]["cpu"] += cpu
                cells[key]["blocks"].append([wall, cpu])
            if oracle is None:
                continue
            for key in ids:
                parity = compare(ids[oracle], ids[key])
                cells[key]["checked"] += parity.checked
                cells[key]["mismatched"] += parity.mismatched
                if parity.first and not cells[key]["first"]:
                    doc, rest = parity.first.split(",", 1)
                    cells[key]["first"] = f"doc {block[int(doc.split()[1])]},{rest}"
                    differs[key] = f"{name}: {cells[key]['first']}"
                    log(f"    {vocab}: {out['labels'][key]} differs from {out['labels'][oracle]} on {differs[key]}; "
                        "not timed")
        for key, cell in cells.items():
            if key not in differs:
                cell["seconds"] = cell[clock]
                cell["mb_s"] = cell["bytes"] / cell["seconds"] / 1e6
        out["corpora"][name] = cells
    return out


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("vocab")
    p.add_argument("corpus_dir", type=Path)
    p.add_argument("--corpora", default="prose,code,multilingual")
    p.add_argument("--doc-bytes", type=parse_size, default="16KB")
    p.add_argument("--block", type=parse_size, default="1MB")
    p.add_argument("--max-bytes", type=parse_size, default="0", help="per corpus, a stride sample; 0: everything")
    p.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    p.add_argument("--shift", type=int, default=0, help="which contender starts the first block")
    p.add_argument("--current-root", type=Path, help="with --baseline-root: the build under test, for its worker")
    p.add_argument("--baseline-root", type=Path)
    p.add_argument("--baseline-name", default="baseline")
    args = p.parse_args(argv)
    corpora = {}
    for name in [c for c in args.corpora.split(",") if c]:
        docs = split_documents(read_corpus(args.corpus_dir, name), args.doc_bytes)
        if args.max_bytes:
            docs = [docs[i] for i in stride_sample(docs, args.max_bytes)]
        corpora[name] = docs
    workers = []
    try:
        if args.baseline_root:
            workers = [RemoteRunner(args.vocab, args.current_root, "auto/worker", WORKER_KEY),
                       RemoteRunner(args.vocab, args.baseline_root, f"{args.baseline_name}/worker", BASELINE_KEY)]
        result = one_pass(args.vocab, corpora, args.block, args.clock, args.shift, workers)
    finally:
        for worker in workers:
            worker.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
