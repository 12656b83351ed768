"""Instructions per byte of a one-pass encode, counted by callgrind: a noise-free measure for
work on a shared machine, where wall and CPU time move with the other jobs.

    python benches/onepass_profile.py count [--vocabs cl100k_base,o200k_base,qwen3]
        [--corpora prose,code,multilingual] [--contenders wordsplit:auto,quicktok]
        [--max-bytes 2MB] [--doc-bytes 16KB] [--out DIR] [--corpus-dir DIR]
    python benches/onepass_profile.py run VOCAB CORPUS [--contender wordsplit:auto] [--marks] [--warm]
        [--max-bytes 2MB] [--doc-bytes 16KB] [--out DIR] [--corpus-dir DIR]

``count`` writes a stride sample of each corpus (documents of ``--doc-bytes``, as the
one-pass section cuts them; ``--max-bytes`` of them, ``0`` for all) to ``--out``, then for
each vocabulary × corpus × contender starts a fresh process (``run``) under
``valgrind --tool=callgrind --instr-atstart=no``. That process loads the contender, reads the
sample, and counts instructions only while it encodes each document once (the caches start
cold, as in the one-pass section, after one short warm-up text that builds what a process
builds once, like the character class tables): a small C helper, compiled on first use from valgrind's
``callgrind.h``, turns the instrumentation on and off around the loop. The table printed
is instructions per byte of UTF-8; each cell's ``callgrind.out.*`` file stays in ``--out``
for ``callgrind_annotate`` (where the instructions go, per function).

``groups`` turns ``perf record`` samples of such passes into CPU nanoseconds per byte by role
(pre-tokenizer, piece loop, merging, Python objects, kernel, ...), one column per pass: each
``LABEL=PREFIX`` names ``PREFIX.data`` (perf's file) and ``PREFIX.json`` (the ``run``'s printed
line, whose ``cpu_s`` and ``bytes`` scale the samples' shares)::

    python benches/onepass_profile.py groups "ws numpy=ws" "gigatoken numpy=giga"

``run`` alone (without ``--marks``) is the same pass, to run under ``perf record`` or ``perf stat``
by hand; it prints the pass's CPU seconds too. ``--warm`` encodes the sample once before the
counted pass, so the caches hold every piece (the single-thread section's median passes); the
cold pass minus the warm one is what merging pieces not seen before costs. With
``--perf-control CTL,ACK`` it switches perf on around the pass only: ``mkfifo ctl ack;
perf record -F 4999 -D -1 --control fifo:ctl,ack -- python benches/onepass_profile.py run
cl100k_base prose --max-bytes 0 --perf-control ctl,ack``.
Nothing here is timed: instruction counts do not show cache misses or branch mispredictions,
so a change that trades instructions for memory traffic needs a timing check as well.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from documents import parse_size, read_corpus, split_documents, stride_sample  # noqa: E402
from contenders import make_contender, prepare_data_dir  # noqa: E402
from timing import WARM_UP  # noqa: E402
from corpus import CORPUS_ENV, corpus_dir  # noqa: E402

DEFAULT_OUT = Path(tempfile.gettempdir()) / "onepass_profile"
MARKS_C = r"""
#include <valgrind/callgrind.h>
void marks_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void marks_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def marks(out: Path):
    """``(start, stop)``: callgrind client requests (no-ops outside valgrind)."""
    lib = out / "marks.so"
    if not lib.exists():
        source = out / "marks.c"
        source.write_text(MARKS_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True)
    handle = ctypes.CDLL(str(lib))
    return handle.marks_start, handle.marks_stop


def sample_path(out: Path, corpus: str, max_bytes: int, doc_bytes: int) -> Path:
    return out / f"{corpus}.{max_bytes}.{doc_bytes}.json"


def write_sample(corpus_dir: Path, out: Path, corpus: str, max_bytes: int, doc_bytes: int) -> Path:
    """The stride sample of ``corpus`` as a JSON list of documents (made once)."""
    path = sample_path(out, corpus, max_bytes, doc_bytes)
    if not path.exists():
        docs = split_documents(read_corpus(corpus_dir, corpus), doc_bytes)
        if max_bytes:
            docs = [docs[i] for i in stride_sample(docs, max_bytes)]
        path.write_text(json.dumps(docs))
    return path


def run(args: argparse.Namespace) -> None:
    """Load the contender, then encode each document of the sample once."""
    prepare_data_dir(args.out / "data")
    docs = json.loads(write_sample(args.corpus_dir, args.out, args.corpus, args.max_bytes,
                                   args.doc_bytes).read_text())
    encode = make_contender(args.contender, args.vocab).encode
    # One short text first, outside the count: what a process builds once on its first call
    # (class tables, a thread's cache) is not a cost per byte of a corpus.
    encode(WARM_UP)
    if args.warm:
        for doc in docs:  # a pass outside the count fills the caches: the counted pass is warm
            encode(doc)
    start, stop = marks(args.out) if args.marks else (lambda: None, lambda: None)
    if args.perf_control:
        start, stop = perf_switch(args.perf_control)
    # Each document's ids are counted and dropped: kept, a whole corpus's ids grew the heap
    # through the pass (fresh pages, faulted in while copying ids, and the garbage
    # collector's walks over every list), which a profile then showed as the encoder's cost.
    n_ids = 0
    cpu = time.process_time()
    start()
    for doc in docs:
        n_ids += len(encode(doc))
    stop()
    cpu = time.process_time() - cpu
    n_bytes = sum(len(doc.encode("utf-8")) for doc in docs)
    print(json.dumps({"bytes": n_bytes, "docs": len(docs), "ids": n_ids, "cpu_s": cpu}))


def perf_switch(fifos: str):
    """``(start, stop)`` that switch ``perf record -D -1 --control fifo:CTL,ACK`` on and off."""
    control_path, ack_path = fifos.split(",")
    control, ack = open(control_path, "w"), open(ack_path)

    def send(command: str) -> None:
        control.write(command + "\n")
        control.flush()
        ack.readline()

    return (lambda: send("enable")), (lambda: send("disable"))


def instructions(callgrind_out: Path) -> int:
    """The total Ir of a callgrind output file."""
    text = callgrind_out.read_text(errors="replace")
    # "summary:" counts from the start of the program (0 with --instr-atstart=no, as the
    # instrumentation starts later); "totals:" is what was collected.
    match = re.search(r"^totals:\s*(\d+)", text, re.MULTILINE) or re.search(r"^summary:\s*(\d+)", text,
                                                                          re.MULTILINE)
    if not match:
        raise RuntimeError(f"no totals in {callgrind_out}")
    return int(match.group(1))


def count(args: argparse.Namespace) -> None:
    """Ir per byte for every vocabulary × corpus × contender, as a Markdown table."""
    vocabs = args.vocabs.split(",")
    corpora = args.corpora.split(",")
    contenders = args.contenders.split(",")
    marks(args.out)
    for corpus in corpora:
        write_sample(args.corpus_dir, args.out, corpus, args.max_bytes, args.doc_bytes)
    env = dict(os.environ, PYTHONHASHSEED="0")
    rows = []
    for vocab in vocabs:
        for corpus in corpora:
            row = {}
            for key in contenders:
                cg = args.out / f"callgrind.out.{vocab}.{corpus}.{key.replace(':', '_')}{args.tag}"
                command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={cg}",
                           sys.executable, __file__, "run", vocab, corpus, "--contender", key, "--marks",
                           "--max-bytes", str(args.max_bytes), "--doc-bytes", str(args.doc_bytes),
                           "--out", str(args.out), "--corpus-dir", str(args.corpus_dir), *(["--warm"] * args.warm)]
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                if done.returncode:
                    sys.stderr.write(done.stderr[-3000:])
                    raise SystemExit(f"{key} on {vocab}/{corpus} failed")
                info = json.loads(done.stdout.strip().splitlines()[-1])
                row[key] = instructions(cg) / info["bytes"]
                print(f"{vocab} {corpus} {key}: {row[key]:.1f} Ir/byte ({info['bytes']} bytes, "
                      f"{info['ids']} ids)", file=sys.stderr, flush=True)
            rows.append((vocab, corpus, row))
    head = "| vocab | corpus | " + " | ".join(contenders) + " |"
    if len(contenders) > 1:
        head += f" {contenders[1]} ÷ {contenders[0]} |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for vocab, corpus, row in rows:
        line = f"| {vocab} | {corpus} | " + " | ".join(f"{row[k]:.1f}" for k in contenders) + " |"
        if len(contenders) > 1:
            line += f" {row[contenders[1]] / row[contenders[0]]:.2f}× |"
        print(line)


# The roles of wordsplit's native functions, by a part of their name: the first that matches.
# The token index's lookups are inlined where they are asked, but for the out-of-line one of
# pairs and pieces over 16 bytes (`MergeTables::rank_of_long`), counted with merging, though
# the piece loop's whole-token probe of such a piece reaches it too (under 1 % of a pass).
WORDSPLIT_ROLES = [
    ("merge new pieces", ("buffer_sweep", "heap_merge", "backtrack", "merge_piece", "MergeTables",
                          "CharMerges", "char_merges")),
    ("pre-tokenizer: scan, keys, table lines asked", ("window_keys", "spanners")),
    ("piece cache: keep new pieces", ("put_table", "PieceCache::put", "LongPieces::put")),
    ("piece loop: table probes, ids out", ("encode_pieces", "PieceTable", "PieceCache", "LongPieces",
                                           "TokenIndex")),
    ("str → UTF-8", ("utf8",)),
    ("Python: ints, lists, objects, interpreter", ("IdInts",)),
]

# gigatoken's extension is stripped: its code by address (file offsets), named from the
# disassembly (benches/RESULTS.md, "Where the time goes per byte: wordsplit and gigatoken").
GIGATOKEN_RANGES = [
    ("pre-tokenizer (AVX-512 walker), key hash, cache probe", 0x5F0000, 0x61A000),
    ("miss path: merge new pieces, cache insert", 0x7D2000, 0x7D3000),
    ("miss path: merge new pieces, cache insert", 0x7E3000, 0x7E4000),
    ("gigatoken: pass at 0x7e1000 (writes characters as UTF-8)", 0x7E1000, 0x7E2000),
]


def role(dso: str, symbol: str) -> str:
    """The role of a sample's function (``symbol``, in the shared object ``dso``)."""
    if dso.startswith("_native"):
        return next((name for name, parts in WORDSPLIT_ROLES if any(p in symbol for p in parts)),
                    "wordsplit, other")
    if dso.startswith("gigatoken"):
        address = int(symbol, 16) if symbol.startswith("0x") else -1
        return next((name for name, low, high in GIGATOKEN_RANGES if low <= address < high),
                    "gigatoken, other")
    if dso.startswith("[kernel"):
        return "kernel (page faults)"
    if dso.startswith("libc"):
        return "libc (malloc, memcpy)"
    if dso.startswith(("libpython", "python")):
        return "str → UTF-8" if "utf8" in symbol else "Python: ints, lists, objects, interpreter"
    return "other"


def perf_shares(data: Path) -> list[tuple[float, str, str]]:
    """``(share, dso, symbol)`` for every function with samples in ``perf record``'s ``data``."""
    report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,sym",
                             "--stdio", "-g", "none", "--percent-limit", "0"],
                            capture_output=True, text=True, check=True).stdout
    rows = []
    for line in report.splitlines():
        match = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)", line)
        if match:
            rows.append((float(match[1]) / 100, match[2], match[3].strip()))
    return rows


def groups(args: argparse.Namespace) -> None:
    """CPU ns per byte by role, one column per ``LABEL=PREFIX`` pass, as a Markdown table."""
    columns, cells = [], {}
    for spec in args.passes:
        label, _, prefix = spec.partition("=")
        info = json.loads(Path(prefix + ".json").read_text().strip().splitlines()[-1])
        ns_per_byte = info["cpu_s"] * 1e9 / info["bytes"]
        columns.append((label, ns_per_byte))
        for share, dso, symbol in perf_shares(Path(prefix + ".data")):
            row = cells.setdefault(role(dso, symbol), {})
            row[label] = row.get(label, 0.0) + share * ns_per_byte
    print("| group | " + " | ".join(label for label, _ in columns) + " |")
    print("|:---|" + "---:|" * len(columns))
    for name, row in sorted(cells.items(), key=lambda item: -sum(item[1].values())):
        print(f"| {name} | " + " | ".join(f"{row[label]:.2f}" if row.get(label, 0) >= 0.005 else "–"
                                          for label, _ in columns) + " |")
    print("| **total ns/byte** | " + " | ".join(f"**{total:.2f}**" for _, total in columns) + " |")
    print("| (MB/s) | " + " | ".join(f"{1e3 / total:.0f}" for _, total in columns) + " |")


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("run", "count"):
        s = sub.add_parser(name)
        if name == "run":
            s.add_argument("vocab")
            s.add_argument("corpus")
            s.add_argument("--contender", default="wordsplit:auto")
            s.add_argument("--marks", action="store_true", help="callgrind instrumentation around the pass")
            s.add_argument("--perf-control", metavar="CTL,ACK",
                           help="perf record's control and ack fifos: sample the pass only")
        else:
            s.add_argument("--vocabs", default="cl100k_base,o200k_base,qwen3")
            s.add_argument("--corpora", default="prose,code,multilingual")
            s.add_argument("--contenders", default="wordsplit:auto,quicktok")
            s.add_argument("--tag", default="", help="appended to the callgrind output names")
        s.add_argument("--corpus-dir", type=Path, help=f"holds <name>.txt.gz; default: ${CORPUS_ENV}")
        s.add_argument("--max-bytes", type=parse_size, default="2MB")
        s.add_argument("--warm", action="store_true",
                       help="encode the sample once before the counted pass (caches warm, as in the median passes)")
        s.add_argument("--doc-bytes", type=parse_size, default="16KB")
        s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s = sub.add_parser("groups")
    s.add_argument("passes", nargs="+", metavar="LABEL=PREFIX",
                   help="a pass's perf samples (PREFIX.data) and run output (PREFIX.json)")
    args = p.parse_args(argv)
    if args.command == "groups":
        return groups(args)
    args.corpus_dir = corpus_dir(args.corpus_dir, [args.corpus] if args.command == "run" else args.corpora.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    (run if args.command == "run" else count)(args)


if __name__ == "__main__":
    main(sys.argv[1:])
