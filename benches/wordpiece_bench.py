"""WordPiece (BERT-style) tokenizers, and the other word-model files of tests/data/wordpiece/
(CLIP's BPE over characters, ``--vocabs clip-vit-base-patch32``): one pass over whole corpora,
single thread, against HF ``tokenizers`` (the oracle), tokie and kitoken; prints a Markdown table.

    python benches/wordpiece_bench.py [CORPUS_DIR] [--corpora prose,code,multilingual]
        [--max-bytes 4MB] [--doc-bytes 16KB] [--runs 3]
        [--vocabs all-MiniLM-L6-v2,bert-base-multilingual-cased]

The vocabularies are the tokenizer.json files of tests/data/wordpiece/ (all-MiniLM-L6-v2's by
default: BertNormalizer with lowercase and accents stripped, BertPreTokenizer, WordPiece over
30,522 tokens), each read with its padding and truncation off, so that every library gives the
ids of the text alone. Every library encodes without special tokens.

Each contender first encodes every document of every corpus once, and its ids are compared with
HF's (a contender that differs is reported, not timed). Then, per run, fresh instances (cold
caches: wordsplit's per-thread piece cache, HF's and tokie's word caches) each encode every
document exactly once, taking turns a corpus at a time, the first of each turn rotating; the
table gives the median over the runs of MB/s of UTF-8 text, by process CPU time (another process
on the machine slows the figures less than it would wall time), and wordsplit's speed over each
peer's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import contenders as _contenders  # noqa: F401 -- sets OPENBLAS_NUM_THREADS before numpy loads (see there)
from documents import add_corpus_arguments, corpus_documents, utf8_len

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "wordpiece"
PEERS = ("tokenizers", "tokie", "kitoken")


def unpadded_file(name: str, directory: Path) -> Path:
    """The vocabulary's tokenizer.json with its padding and truncation off, written into
    ``directory`` (tokie and kitoken read a path or bytes and apply both)."""
    source = DATA / name / "tokenizer.json.gz"
    spec = json.loads(gzip.decompress(source.read_bytes()))
    spec["padding"] = spec["truncation"] = None
    path = directory / f"{name}.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def contenders(path: Path) -> dict[str, object]:
    """Fresh encode functions, by label: ``document -> ids`` (a list or array of ints); a peer
    that is not installed is left out."""
    from wordsplit import TokenizerOptions, load_vocab

    wordsplit = TokenizerOptions(backend="native").build(load_vocab(path))
    assert wordsplit.native, "the native engine runs a Python stage"
    out = {"wordsplit": wordsplit.encode_ordinary}
    try:
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(str(path))
        out["tokenizers"] = lambda text: hf.encode(text, add_special_tokens=False).ids
    except ImportError:
        pass
    try:
        import tokie

        tk = tokie.Tokenizer.from_json(str(path))
        out["tokie"] = lambda text: tk.encode(text, add_special_tokens=False).ids
    except ImportError:
        pass
    try:
        import kitoken

        kt = kitoken.Kitoken.from_tokenizers(path.read_bytes())
        out["kitoken"] = lambda text: kt.encode(text, False)
    except ImportError:
        pass
    return out


def one_pass(encode, docs: list[str]) -> float:
    """CPU seconds of this process to encode every document once."""
    start = time.process_time()
    for doc in docs:
        encode(doc)
    return time.process_time() - start


def run(path: Path, corpora: dict[str, list[str]], runs: int, make=None,
        oracle: str = "tokenizers") -> dict[str, dict[str, float | str]]:
    """``{corpus: {label: MB/s (median of the runs), or "differs (n of m docs)"}}``; ``make``
    gives the fresh encode functions by label (:func:`contenders` by default), ``oracle``
    names the one whose ids the others must equal."""
    make = make or contenders
    check = make(path)
    if oracle not in check:
        raise SystemExit(f"{oracle} (the oracle) is not installed")
    wrong: dict[str, dict[str, int]] = {}
    for name, docs in corpora.items():
        want = [list(check[oracle](doc)) for doc in docs]
        for label, encode in check.items():
            wrong.setdefault(name, {})[label] = sum(list(encode(doc)) != ids for doc, ids in zip(docs, want))
    del check
    speeds: dict[str, dict[str, list[float]]] = {name: {} for name in corpora}
    for number in range(runs):
        timed = make(path)
        for encode in timed.values():
            encode("warm up")  # (what a library sets up on its first call is load time, not encode)
        for turn, (name, docs) in enumerate(corpora.items()):
            labels = [label for label in timed if not wrong[name][label]]
            shift = (turn + number) % len(labels)
            size = utf8_len(docs)
            for label in labels[shift:] + labels[:shift]:
                speeds[name].setdefault(label, []).append(size / one_pass(timed[label], docs) / 1e6)
    results: dict[str, dict[str, float | str]] = {}
    for name, docs in corpora.items():
        results[name] = {label: statistics.median(values) for label, values in speeds[name].items()}
        for label, count in wrong[name].items():
            if count:
                results[name][label] = f"differs ({count} of {len(docs)} docs)"
    return results


def table(vocab: str, results: dict[str, dict[str, float | str]], peers: tuple[str, ...] = PEERS) -> str:
    """The Markdown table of :func:`run`'s results: MB/s by corpus, and wordsplit's speed over
    each of ``peers`` (those that ran) and over the fastest exact one."""
    labels = ["wordsplit", *(p for p in peers if any(p in row for row in results.values()))]
    peers = labels[1:]
    lines = [f"#### {vocab}", "",
             "| corpus | " + " | ".join(labels) + " | " + " | ".join(f"÷ {peer}" for peer in peers)
             + " | ÷ fastest exact peer |",
             "|---|" + "---:|" * (len(labels) + len(peers) + 1)]
    for name, row in results.items():
        cells = [f"{row[label]:.1f}" if isinstance(row.get(label), float) else row.get(label, "–") for label in labels]
        ratio = lambda peer: (f"{row['wordsplit'] / row[peer]:.2f}×"  # noqa: E731
                              if all(isinstance(row.get(k), float) for k in ("wordsplit", peer)) else "–")
        exact = [peer for peer in peers if isinstance(row.get(peer), float)]
        fastest = max(exact, key=lambda peer: row[peer]) if exact else None
        lines.append(f"| {name} | " + " | ".join(cells + [ratio(peer) for peer in peers])
                     + f" | {ratio(fastest) + f' ({fastest})' if fastest else '–'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument("--runs", type=int, default=3, help="timed passes of fresh instances; the median is shown")
    parser.add_argument("--vocabs", default="all-MiniLM-L6-v2")
    args = parser.parse_args(argv)
    corpora = corpus_documents(args)
    with tempfile.TemporaryDirectory() as scratch:
        for vocab in args.vocabs.split(","):
            results = run(unpadded_file(vocab, Path(scratch)), corpora, args.runs)
            print(table(vocab, results), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
