"""transformers' own calls, on the original fast tokenizer, on ``wordsplit.compat.transformers.
accelerate(tok)`` and on fastokens' patched transformers, in one run on this machine.

    python benches/transformers_bench.py CORPUS_DIR [--docs 1000] [--repeats 5] [--out benches/TRANSFORMERS.md]

CORPUS_DIR holds the benchmark corpora (``prose.txt.gz``...), as for ``benches/bench.py``.

The tokenizer is Qwen3's, built by ``AutoTokenizer`` from the repo's copy of its files
(tests/data/hf). Three calls, each checked against the original's output (the oracle) before
it is timed; a contender that differs is reported and not timed:

- ``tok(docs, padding=True, truncation=True, max_length=2048, return_tensors="np")`` on a batch
  of ``--docs`` documents (prose, 10 KB each, so most are truncated);
- one prompt of about 200 tokens, ``tok(prompt)``, per-call latency (the mean of 200 calls);
- ``tok.batch_decode(ids, skip_special_tokens=True)`` of the batch's ``--docs`` rows.

Every figure is the median of ``--repeats`` rounds of wall time; the contenders take turns
within each round (this is a shared 2-core machine). The Markdown table goes to stdout and
to ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HF_DATA = ROOT / "tests" / "data" / "hf"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def qwen3_dir() -> Path:
    """Qwen3's tokenizer.json and tokenizer_config.json, unpacked to a temporary directory."""
    directory = Path(tempfile.mkdtemp(prefix="wordsplit-transformers-bench-"))
    (directory / "tokenizer.json").write_bytes(gzip.decompress((HF_DATA / "tokenizer.json.gz").read_bytes()))
    shutil.copy(HF_DATA / "tokenizer_config.json", directory / "tokenizer_config.json")
    return directory


def documents(corpus_dir: Path, count: int, size: int) -> list[str]:
    """``count`` documents of ``size`` characters taken at an even stride over the prose corpus."""
    with gzip.open(corpus_dir / "prose.txt.gz", "rt", encoding="utf-8", newline="") as f:
        text = f.read()
    stride = max((len(text) - size) // count, size)
    return [text[i * stride:i * stride + size] for i in range(count)]


def contenders(directory: Path) -> dict:
    from transformers import AutoTokenizer

    from wordsplit.compat.transformers import accelerate

    original = AutoTokenizer.from_pretrained(str(directory))
    found = {"transformers (HF tokenizers)": original, "wordsplit accelerate(tok)": accelerate(original)}
    try:
        import fastokens
    except ImportError:
        log("fastokens is not installed: not timed")
        return found
    with contextlib.redirect_stdout(sys.stderr):  # it prints what it patched
        fastokens.patch_transformers()
        try:
            found[f"fastokens {_version('fastokens')} patch_transformers()"] = AutoTokenizer.from_pretrained(
                str(directory))
        finally:
            fastokens.unpatch_transformers()
    return found


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def same(a, b) -> bool:
    if isinstance(a, dict) or hasattr(a, "keys"):
        return list(a.keys()) == list(b.keys()) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())
    return a == b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus_dir", type=Path, help="the folder of the benchmark corpora (prose.txt.gz...)")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--doc-chars", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200, help="calls per latency measurement")
    parser.add_argument("--out", type=Path, default=HERE / "TRANSFORMERS.md")
    args = parser.parse_args()

    directory = qwen3_dir()
    docs = documents(args.corpus_dir, args.docs, args.doc_chars)
    tokenizers = contenders(directory)
    original = next(iter(tokenizers.values()))
    prompt_words = documents(args.corpus_dir, 1, 900)[0]
    prompt = prompt_words[:next(i for i in range(len(prompt_words), 0, -1)
                                if len(original(prompt_words[:i]).input_ids) <= 200)]
    batch_args = {"padding": True, "truncation": True, "max_length": 2048, "return_tensors": "np"}

    tasks = {
        "batch": lambda tok: tok(docs, **batch_args),
        "single": lambda tok: [tok(prompt) for _ in range(args.calls)][-1],
        "decode": lambda tok: tok.batch_decode(ids, skip_special_tokens=True),
    }
    ids = original(docs, **batch_args)["input_ids"]
    expected = {name: task(original) for name, task in tasks.items()}
    checked = {}
    for label, tok in tokenizers.items():
        for name, task in tasks.items():
            try:
                ok = same(task(tok), expected[name])
            except Exception as error:  # noqa: BLE001 (reported, not timed)
                log(f"{label} {name}: raised {type(error).__name__}: {error}")
                ok = False
            if not ok:
                log(f"MISMATCH: {label} {name} differs from the original; not timed")
            checked[label, name] = ok

    times: dict = {key: [] for key, ok in checked.items() if ok}
    for round_index in range(args.repeats):
        order = list(tokenizers.items())
        if round_index % 2:
            order.reverse()
        for name, task in tasks.items():
            for label, tok in order:
                if (label, name) in times:
                    start = time.perf_counter()
                    task(tok)
                    times[label, name].append(time.perf_counter() - start)
        log(f"round {round_index + 1}/{args.repeats} done")

    def cell(label, name, scale, unit):
        if (label, name) not in times:
            return "differs"
        return f"{statistics.median(times[label, name]) * scale:.1f} {unit}"

    base = next(iter(tokenizers))
    tokens = int(np.asarray(expected["batch"]["attention_mask"]).sum())
    prompt_tokens = len(original(prompt).input_ids)
    lines = [
        "# transformers on wordsplit: `accelerate(tok)`",
        "",
        f"Qwen3's tokenizer through `AutoTokenizer` (transformers {_version('transformers')}, tokenizers "
        f"{_version('tokenizers')}), {platform.processor() or platform.machine()}, Python {platform.python_version()}; "
        f"median of {args.repeats} rounds of wall time, contenders taking turns. Each output was checked equal to "
        "the original's before timing. Made by `python benches/transformers_bench.py CORPUS_DIR`.",
        "",
        f"- **batch**: `tok(docs, padding=True, truncation=True, max_length=2048, return_tensors=\"np\")`, "
        f"{len(docs)} prose documents of {args.doc_chars:,} characters ({tokens:,} tokens kept)",
        f"- **single**: `tok(prompt)` on a {prompt_tokens}-token prompt, time per call (mean of {args.calls})",
        f"- **decode**: `tok.batch_decode(ids, skip_special_tokens=True)` of the batch's {len(docs)} rows",
        "",
        "| contender | batch | × | single | × | decode | × |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label in tokenizers:
        row = [label]
        for name, scale, unit in (("batch", 1e3, "ms"), ("single", 1e6 / args.calls, "µs"),
                                  ("decode", 1e3, "ms")):
            row.append(cell(label, name, scale, unit))
            if (label, name) in times and (base, name) in times:
                ratio = statistics.median(times[base, name]) / statistics.median(times[label, name])
                row.append(f"{ratio:.2f}×")
            else:
                row.append("")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "× is the original's time over the contender's (higher is faster)."]
    report = "\n".join(lines) + "\n"
    print(report)
    args.out.write_text(report)
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
