"""Encode speed of the WebAssembly module (Node) against the Python package's native
extension and tiktoken's Python package, single thread, on the same texts; writes
benches/WASM.md.

    bash wasm/build.sh && python benches/wasm_bench.py [--repeat 9] [--wasm FILE]

Each figure is the best of ``--repeat`` timed calls of one encode of the whole text (after a
warm-up call), in MB/s of UTF-8 input. The three are timed in turn, one call each per round
(Node answers one timed encode per request, benches/wasm_bench.mjs), so a change in the
machine's load between rounds reaches all three. Ids are checked equal across the three
before timing counts. The module's size (raw and gzip -9) is measured from
wasm/dist/wordsplit.wasm.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
import time
from pathlib import Path

import sys

from wordsplit import get_tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contenders  # noqa: E402  (benches/: tiktoken loaded offline from the bundled files)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"
TEXTS = ["prose_large", "multilingual", "code", "a*1MiB"]
VOCABS = ["cl100k_base", "o200k_base", "qwen3"]


def text_of(name: str) -> str:
    if name == "a*1MiB":
        return "a" * (1 << 20)
    with gzip.open(CORPUS / f"{name}.txt.gz", "rt", encoding="utf-8", newline="") as f:
        return f.read()


class NodeWorker:
    """benches/wasm_bench.mjs: the module in Node, timing one encode per request."""

    def __init__(self, wasm: str | None):
        self.process = subprocess.Popen(
            ["node", str(ROOT / "benches" / "wasm_bench.mjs"), *([wasm] if wasm else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )

    def ask(self, **request) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def best_of(repeat: int, calls: list) -> list[float]:
    """The best of each call's times (each returns its time) over `repeat` rounds, each round
    calling each once in turn, after one warm-up round."""
    best = [float("inf")] * len(calls)
    for round_ in range(repeat + 1):
        for i, call in enumerate(calls):
            took = call()
            if round_:
                best[i] = min(best[i], took)
    return best


def measure(vocab: str, texts: dict[str, str], paths: dict[str, str], node: NodeWorker, repeat: int) -> list[str]:
    """One table row per text: the three encoders' MB/s and their ratios."""
    tok = get_tokenizer(vocab)
    tt = contenders._tiktoken(vocab)
    node.ask(vocab=vocab)
    rows = []
    for name, text in texts.items():
        mb = len(text.encode("utf-8")) / 1e6
        ids = tok.encode(text, disallowed_special=())
        node.ask(text=paths[name])
        assert node.ask(encode=True)["ids"] == len(ids), (vocab, name)
        if tt.label == "tiktoken":  # (tiktoken* on qwen3 skips NFC: a speed baseline only)
            assert tt.encode(text) == ids, (vocab, name)
        w, native, tik = best_of(repeat, [
            lambda: node.ask(encode=True)["seconds"],
            lambda: timed(lambda: tok.encode(text, disallowed_special=())),
            lambda: timed(lambda: tt.encode(text)),
        ])
        rows.append(f"| {vocab} | {name} | {mb:.2f} | {mb / w:.1f} | {mb / native:.1f} | {mb / tik:.1f} "
                    f"({tt.label}) | {native / w:.2f}x | {tik / w:.1f}x | {w * 1000:.1f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--wasm", help="another build of the module to time (default wasm/dist/wordsplit.wasm)")
    parser.add_argument("--out", default=str(ROOT / "benches" / "WASM.md"))
    parser.add_argument("--note", default="", help="a line on the run's conditions (the machine's load)")
    args = parser.parse_args()
    texts = {name: text_of(name) for name in TEXTS}
    wasm_file = Path(args.wasm) if args.wasm else ROOT / "wasm" / "dist" / "wordsplit.wasm"
    raw = wasm_file.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, text in texts.items():
            paths[name] = str(Path(tmp) / f"{name}.txt")
            Path(paths[name]).write_text(text, encoding="utf-8", newline="")
        contenders.prepare_data_dir(Path(tmp))
        node = NodeWorker(args.wasm)
        try:
            rows = [row for vocab in VOCABS for row in measure(vocab, texts, paths, node, args.repeat)]
        finally:
            node.close()
    lines = [
        "# The WebAssembly module: size and encode speed",
        "",
        "Made by `python benches/wasm_bench.py` (see its docstring for the method).",
        "",
        f"Module: `{wasm_file.name}` {len(raw) / 1e3:.0f} KB, {len(gzip.compress(raw, 9)) / 1e3:.0f} KB gzipped "
        "(no vocabulary inside: those are loaded at run time).",
        "",
        "Encode, one thread, MB/s of UTF-8 input (best of the repeats, after a warm-up call):",
        "",
        *([args.note, ""] if args.note else []),
        "| vocab | text | MB | wasm (Node) | native (Python) | tiktoken (Python) | wasm / native "
        "| wasm / tiktoken | wasm ms |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
