"""Load time of SentencePiece-family vocabulary files, each in a fresh process: import,
``load_vocab(path)``, ``TokenizerOptions(backend=...).build(vocab)`` and the first encode, with
a cold disk cache (a new cache directory: the file is parsed) and a warm one (the parsed entry
of the cold run is read); prints a Markdown table.

    python benches/spm_load_bench.py [--repeat 3] [--backend native] FILE...

Wall and CPU time (the process's) are the medians of ``--repeat`` runs of each; the table's
"load" column is ``load_vocab`` plus the build plus the first encode (the import is its own
column). The files: Mistral's ``tokenizer.model`` (tests/data/spm), the 262k-piece ``.model``
that ``sentencepiece_bench.py`` makes from Gemma 4's GGUF, the SentencePiece-style
tokenizer.json files of tests/data/spm (gunzipped) and llama.cpp's GGUF files of tests/data/gguf
(unpacked from ``.xz``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Run in the child: each phase timed on both clocks, printed as one JSON line.
CHILD = r"""
import json, sys, time
clock = lambda: (time.perf_counter(), time.process_time())
marks = [clock()]
from wordsplit import TokenizerOptions, load_vocab
marks.append(clock())
vocab = load_vocab(sys.argv[1], cache_dir=sys.argv[2])
marks.append(clock())
tokenizer = TokenizerOptions(backend=sys.argv[3]).build(vocab)
marks.append(clock())
tokenizer.encode("Hello, world! A first encode.")
marks.append(clock())
phases = ("import", "load_vocab", "build", "encode")
print(json.dumps({name: [b[0] - a[0], b[1] - a[1]] for name, a, b in zip(phases, marks, marks[1:])}))
"""


def run(path: Path, cache_dir: str, backend: str) -> dict:
    # The child may write the package's bytecode, as installing a wheel does: without it
    # (PYTHONDONTWRITEBYTECODE set, as on some CI machines) every run compiles the modules that
    # load_vocab imports from source again, about 20 ms of a 0.25 s warm load.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), cache_dir, backend], check=True,
                         capture_output=True, text=True, env=env).stdout
    return json.loads(out.splitlines()[-1])


def measure(path: Path, repeat: int, backend: str) -> dict:
    """Median wall and CPU seconds per phase, cold and warm."""
    runs = {"cold": [], "warm": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="wordsplit-load-") as cache_dir:
            runs["cold"].append(run(path, cache_dir, backend))
            runs["warm"].append(run(path, cache_dir, backend))
    result = {}
    for state, timings in runs.items():
        for clock, index in (("wall", 0), ("cpu", 1)):
            result[f"{state}_{clock}"] = statistics.median(
                sum(t[phase][index] for phase in ("load_vocab", "build", "encode")) for t in timings)
        result[f"{state}_import"] = statistics.median(t["import"][1] for t in timings)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", default="native")
    args = parser.parse_args()
    print("| file | cold wall (s) | cold CPU (s) | warm wall (s) | warm CPU (s) | import CPU (s) |")
    print("|:---|---:|---:|---:|---:|---:|")
    for path in args.files:
        r = measure(path, args.repeat, args.backend)
        print(f"| `{path.name}` | {r['cold_wall']:.3f} | {r['cold_cpu']:.3f} | {r['warm_wall']:.3f} | "
              f"{r['warm_cpu']:.3f} | {r['cold_import']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
