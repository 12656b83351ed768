"""Training benchmark: wordsplit.train against HF tokenizers' BpeTrainer and rustbpe.

    python benches/train_bench.py [CORPUS] [--max-bytes 0] [--vocab-size 32768] \\
        [--pattern cl100k_base] [--threads 2] [--repeats 3] > table.md

Every contender trains on the same documents (the lines of CORPUS, default ``prose.txt.gz`` of
the directory in ``WORDSPLIT_CORPUS_DIR``, whole or its first ``--max-bytes``) with the same split
pattern, in a fresh process per run, with ``--threads`` threads (``RAYON_NUM_THREADS`` for HF
and rustbpe, ``num_threads`` for wordsplit). The time is the wall time of the training call
(counting and merging; the documents are already in memory), the median of ``--repeats`` runs
taken in turns. Memory: the peak RSS of the process (all of it: the interpreter, the documents
and the training), and the training's share, that peak minus the RSS just before the call
(the largest of the runs). Before any timing, wordsplit's merges are checked equal to HF's
(rustbpe follows its own tie rules and is not checked). Markdown goes to stdout (a table per
vocabulary size, and wordsplit's ratios against its bounds: at most 1/5 of HF's time, 1/2 of
rustbpe's, and no more peak RSS than HF), progress to stderr.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from corpus import CORPUS_ENV, corpus_dir

CONTENDERS = ("wordsplit", "hf", "rustbpe")
LABELS = {"wordsplit": "**wordsplit**", "hf": "HF tokenizers BpeTrainer", "rustbpe": "rustbpe"}


def parse_size(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d*)?)\s*([KMG]i?)?B?", text.strip(), re.I)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    scales = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "KI": 2**10, "MI": 2**20, "GI": 2**30}
    scale = scales[(match.group(2) or "").upper()]
    return int(float(match.group(1)) * scale)


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def worker(name: str, path: str, vocab_size: int, pattern: str, threads: int, out: str) -> None:
    """One training run in this process; writes seconds, RSS before, and merges to ``out``."""
    with open(path, encoding="utf-8", newline="") as f:
        docs = f.read().splitlines(keepends=True)
    merges = None
    if name == "wordsplit":
        from wordsplit import train
        from wordsplit.formats.bytelevel import token_text
        from wordsplit.training.vocab import merge_list

        before = rss_kb()
        start = time.perf_counter()
        vocab = train(docs, vocab_size=vocab_size, pattern=pattern, num_threads=threads)
        seconds = time.perf_counter() - start
        merges = [f"{token_text(a)} {token_text(b)}" for a, b in merge_list(vocab)]
    elif name == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
        from wordsplit.training import resolve_pattern
        from wordsplit.training.save import hf_pattern

        tok = Tokenizer(models.BPE())
        split, normalizer = resolve_pattern(pattern)
        if normalizer == "nfc":
            from tokenizers import normalizers

            tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(hf_pattern(split)), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      show_progress=False)
        before = rss_kb()
        start = time.perf_counter()
        tok.train_from_iterator(docs, trainer)
        seconds = time.perf_counter() - start
        merges = [m if isinstance(m, str) else " ".join(m) for m in json.loads(tok.to_str())["model"]["merges"]]
    elif name == "rustbpe":
        import rustbpe
        from wordsplit.training import resolve_pattern

        tok = rustbpe.Tokenizer()
        before = rss_kb()
        start = time.perf_counter()
        tok.train_from_iterator(iter(docs), vocab_size, pattern=resolve_pattern(pattern)[0])
        seconds = time.perf_counter() - start
    else:
        raise SystemExit(f"unknown contender {name!r}; known: {', '.join(CONTENDERS)}")
    with open(out, "w") as f:
        json.dump({"seconds": seconds, "rss_before_kb": before, "merges": merges}, f)


def run(name: str, path: str, vocab_size: int, pattern: str, threads: int) -> dict:
    """A worker process; adds its peak RSS (from wait4) to its report."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "true"}
    proc = subprocess.Popen([sys.executable, __file__, "--worker", name, path, str(vocab_size), pattern,
                             str(threads), out], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{name} failed (status {status})")
    with open(out) as f:
        report = json.load(f)
    os.unlink(out)
    report["peak_rss_kb"] = usage.ru_maxrss
    return report


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _, _, name, path, vocab_size, pattern, threads, out = sys.argv
        worker(name, path, int(vocab_size), pattern, int(threads), out)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", nargs="?", help=f"a .txt or .txt.gz file (default: prose.txt.gz in ${CORPUS_ENV})")
    p.add_argument("--max-bytes", type=parse_size, default=0,
                   help="train on the first this many bytes of the corpus (whole lines); 0: all of it (default)")
    p.add_argument("--vocab-size", default="32768", help="comma-separated sizes (default: 32768)")
    p.add_argument("--pattern", default="cl100k_base", help="a vocabulary name or a regex (default: cl100k_base)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    args = p.parse_args(argv)
    contenders = args.contenders.split(",")
    if args.corpus is None:
        args.corpus = str(corpus_dir(None, ["prose"]) / "prose.txt.gz")

    opener = gzip.open if args.corpus.endswith(".gz") else open
    with opener(args.corpus, "rb") as f:
        data = f.read(args.max_bytes) if args.max_bytes else f.read()
    # Whole lines only (so no character is cut either).
    text = (data[: data.rfind(b"\n") + 1] or data).decode("utf-8", errors="ignore")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8", newline="") as tmp:
        tmp.write(text)
        path = tmp.name
    n_bytes = len(text.encode("utf-8"))
    del data, text
    rows = {}
    try:
        for vocab_size in (int(v) for v in args.vocab_size.split(",")):
            reports = {name: [] for name in contenders}
            for round_ in range(args.repeats):
                for name in contenders:
                    print(f"vocab {vocab_size}, round {round_ + 1}: {name}", file=sys.stderr)
                    report = run(name, path, vocab_size, args.pattern, args.threads)
                    print(f"  {report['seconds']:.2f} s, peak RSS {report['peak_rss_kb'] / 1024:.0f} MB",
                          file=sys.stderr)
                    reports[name].append(report)
            if "wordsplit" in reports and "hf" in reports:
                same = reports["wordsplit"][0]["merges"] == reports["hf"][0]["merges"]
                print(f"vocab {vocab_size}: wordsplit's merges {'equal' if same else 'DIFFER FROM'} HF's",
                      file=sys.stderr)
                if not same:
                    return 1
            for name in contenders:
                rows[vocab_size, name] = dict(
                    seconds=statistics.median(r["seconds"] for r in reports[name]),
                    peak=max(r["peak_rss_kb"] for r in reports[name]) / 1024,
                    training=max(r["peak_rss_kb"] - r["rss_before_kb"] for r in reports[name]) / 1024,
                )
    finally:
        os.unlink(path)

    print(report_markdown(rows, contenders, n_bytes=n_bytes, corpus=os.path.basename(args.corpus), args=args))
    return 0


def report_markdown(rows: dict, contenders: list, *, n_bytes: int, corpus: str, args) -> str:
    """The Markdown report: one table row per (vocab size, contender), then wordsplit's ratios."""
    lines = [
        f"Training on {n_bytes / 1e6:.1f} MB of {corpus} ({args.pattern} pattern), {args.threads} threads, "
        f"wall time of the training call, median of {args.repeats} runs, each in a fresh process. "
        "Peak RSS is the whole process's (interpreter and documents included); training memory is "
        "that peak minus the RSS just before the call.",
        "",
        "| vocab size | contender | seconds | × HF's speed | × rustbpe's speed | peak RSS (MB) "
        "| training memory (MB) |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    sizes = sorted({v for v, _ in rows})
    for vocab_size in sizes:
        hf = rows.get((vocab_size, "hf"))
        rust = rows.get((vocab_size, "rustbpe"))
        for name in contenders:
            row = rows[vocab_size, name]
            vs_hf = f"{hf['seconds'] / row['seconds']:.1f}×" if hf else ""
            vs_rust = f"{rust['seconds'] / row['seconds']:.1f}×" if rust else ""
            lines.append(f"| {vocab_size:,} | {LABELS.get(name, name)} | {row['seconds']:.2f} | {vs_hf} | {vs_rust} "
                         f"| {row['peak']:.0f} | {row['training']:.0f} |")
    lines.append("")
    for vocab_size in sizes:
        ours = rows.get((vocab_size, "wordsplit"))
        if ours is None:
            continue
        checks = []
        for name, label, bound in (("hf", "HF's time", 1 / 5), ("rustbpe", "rustbpe's time", 1 / 2)):
            if (vocab_size, name) in rows:
                ratio = ours["seconds"] / rows[vocab_size, name]["seconds"]
                checks.append(f"{ratio:.2f} of {label} (bound ≤ {bound:.2f}: {'met' if ratio <= bound else 'NOT met'})")
        if (vocab_size, "hf") in rows:
            ratio = ours["peak"] / rows[vocab_size, "hf"]["peak"]
            checks.append(f"{ratio:.2f} of HF's peak RSS (bound ≤ 1: {'met' if ratio <= 1 else 'NOT met'})")
        lines.append(f"- vocab {vocab_size:,}: wordsplit takes " + "; ".join(checks) + ".")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
