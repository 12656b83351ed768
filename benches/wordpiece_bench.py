"""WordPiece (BERT-style) tokenizers, and the other word-model files of tests/data/wordpiece/
(CLIP's BPE over characters, ``--vocabs clip-vit-base-patch32``): one pass over whole corpora,
single thread, against HF ``tokenizers`` 0.23 (the oracle), HF tokenizers 1.x, tokie, kitoken and
splintr; prints a Markdown table.

    python benches/wordpiece_bench.py [CORPUS_DIR] [--corpora prose,code,multilingual]
        [--max-bytes 4MB] [--doc-bytes 16KB] [--runs 3]
        [--vocabs all-MiniLM-L6-v2,bert-base-multilingual-cased]

The vocabularies are the tokenizer.json files of tests/data/wordpiece/ (all-MiniLM-L6-v2's by
default: BertNormalizer with lowercase and accents stripped, BertPreTokenizer, WordPiece over
30,522 tokens), each read with its padding and truncation off, so that every library gives the
ids of the text alone. Every library encodes without special tokens: HF's, tokie's
``encode(doc, add_special_tokens=False).ids``, kitoken's ``encode(doc, False)``, splintr's
``splintr.from_json(path).encode_raw(doc)`` (its ``encode`` and ``encode_ordinary`` add the
file's ``[CLS]``/``[SEP]`` template).

HF tokenizers 1.x cannot share a process with the 0.23 transformers pins: it runs in a worker
process of the Python of its own environment (``contenders.interpreter``: ``.peers/hf1`` when it
is there), ``bench.py``'s ``builds.RemoteRunner``, which times each pass in the worker on the
worker's CPU clock; the contenders of this process are timed by the same ``timing.Runner``.

Each contender first encodes every document of every corpus once, and its ids are compared with
HF's (a contender that differs is reported, not timed). Then, per run, fresh instances (cold
caches: wordsplit's per-thread piece cache, HF's and tokie's word caches; a new worker process)
each encode every document exactly once, taking turns a corpus at a time, the first of each turn
rotating, each on fresh copies of the documents (``timing.fresh``). The table gives the median
over the runs of MB/s of UTF-8 text, by process CPU time (another process on the machine slows
the figures less than it would wall time), and wordsplit's speed over each peer's: the median
over the runs of the paired ratio (the two speeds of the same run).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
from pathlib import Path

from contenders import Contender, interpreter  # (first: sets OPENBLAS_NUM_THREADS before numpy loads, see there)
from builds import RemoteRunner, close_runners
from documents import add_corpus_arguments, corpus_documents, utf8_len
from timing import WARM_UP, Runner, fresh

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "wordpiece"
PEERS = ("tokenizers", "tokenizers1", "tokie", "kitoken", "splintr")


def unpadded_file(name: str, directory: Path) -> Path:
    """The vocabulary's tokenizer.json with its padding and truncation off, written into
    ``directory`` (the peers read a path or bytes and apply both)."""
    source = DATA / name / "tokenizer.json.gz"
    spec = json.loads(gzip.decompress(source.read_bytes()))
    spec["padding"] = spec["truncation"] = None
    path = directory / f"{name}.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def contenders(path: Path) -> dict[str, object]:
    """Fresh contenders, by label: an encode function ``document -> ids`` (a list or array of
    ints), or a worker process (HF tokenizers 1.x); a peer that is not installed, or does not
    read the file, is left out."""
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
    hf1 = tokenizers1(path)
    if hf1 is not None:
        out["tokenizers1"] = hf1
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
    splintr = splintr_json(path)
    if splintr is not None:
        out["splintr"] = splintr
    return out


def tokenizers1(path: Path) -> RemoteRunner | None:
    """HF tokenizers 1.x on the tokenizer.json ``path``, in a worker process run by the Python
    of its own environment (``contenders.interpreter("tokenizers1")``), as ``bench.py`` runs it;
    None when there is no such Python. The worker's contender is ``contenders._tokenizers1``
    (``encode(doc, add_special_tokens=False).ids``), given the file's path for a vocabulary."""
    python = interpreter("tokenizers1")
    if python is None:
        return None
    try:
        return RemoteRunner(str(path), None, "tokenizers1", "tokenizers1", python=python)
    except RuntimeError as err:  # (it does not read the file, or its environment holds another version)
        print(f"({path.name}: HF tokenizers 1.x is left out: {err})", file=sys.stderr)
        return None


def splintr_json(path: Path):
    """splintr's encode of the tokenizer.json ``path`` without special tokens, or None when it
    is not installed or does not read the file. ``splintr.from_json`` dispatches on the model
    (WordPiece, Unigram, BPE); ``encode_raw`` is HF's ``add_special_tokens=False``."""
    try:
        import splintr
    except ImportError:
        return None
    try:
        return splintr.from_json(str(path)).encode_raw
    except ValueError as exc:
        print(f"({path.name}: splintr does not read it: {exc})", file=sys.stderr)
        return None


def runners(made: dict[str, object]) -> dict[str, object]:
    """A runner per contender of ``made``, by label: a worker process (``builds.RemoteRunner``)
    as it is, an encode function in a ``timing.Runner`` of this process: the same methods
    (``put``, ``encode``), each timing a pass where it runs."""
    return {label: item if isinstance(item, RemoteRunner)
            else Runner(Contender(key=label, label=label, vocab="", encode=item))
            for label, item in made.items()}


def encoded(runner, docs: list[str]) -> list[list[int]]:
    """The ids of each of ``docs`` by ``runner`` (one pass, untimed), as lists."""
    runner.put("docs", docs)
    ids = [list(doc_ids) for doc_ids in runner.encode("docs", keep=True)[0]]
    runner.put("docs", [])
    return ids


def run(path: Path, corpora: dict[str, list[str]], runs: int, make=None,
        oracle: str = "tokenizers") -> dict[str, dict[str, list[float] | str]]:
    """``{corpus: {label: [MB/s of each run], or "differs (n of m docs)"}}``; ``make`` gives
    the fresh contenders by label (:func:`contenders` by default: encode functions, or worker
    processes), ``oracle`` names the one whose ids the others must equal."""
    make = make or contenders
    check = runners(make(path))
    wrong: dict[str, dict[str, int]] = {}
    try:
        if oracle not in check:
            raise SystemExit(f"{oracle} (the oracle) is not installed")
        for name, docs in corpora.items():
            want = encoded(check[oracle], docs)
            wrong[name] = {label: 0 if label == oracle else sum(ids != w for ids, w in zip(encoded(runner, docs), want))
                           for label, runner in check.items()}
    finally:
        close_runners(check)
    speeds: dict[str, dict[str, list[float]]] = {name: {} for name in corpora}
    for number in range(runs):
        timed = runners(make(path))
        try:
            for runner in timed.values():
                # (what a library sets up on its first call is load time, not encode)
                runner.put("warm-up", [WARM_UP])
                runner.encode("warm-up")
            for turn, (name, docs) in enumerate(corpora.items()):
                labels = [label for label in timed if wrong[name].get(label) == 0]  # (checked, exact)
                shift = (turn + number) % len(labels)
                size = utf8_len(docs)
                for label in labels[shift:] + labels[:shift]:
                    # fresh copies: no contender reads the UTF-8 another made (timing.fresh)
                    timed[label].put("docs", [fresh(doc) for doc in docs])
                    cpu = timed[label].encode("docs")[2]
                    timed[label].put("docs", [])
                    speeds[name].setdefault(label, []).append(size / cpu / 1e6)
        finally:
            close_runners(timed)
    results: dict[str, dict[str, list[float] | str]] = {}
    for name, docs in corpora.items():
        results[name] = dict(speeds[name])
        for label, count in wrong[name].items():
            if count:
                results[name][label] = f"differs ({count} of {len(docs)} docs)"
    return results


def table(vocab: str, results: dict[str, dict[str, list[float] | str]], peers: tuple[str, ...] = PEERS) -> str:
    """The Markdown table of :func:`run`'s results: the median MB/s by corpus, and wordsplit's
    speed over each of ``peers`` (those that ran) and over the fastest exact one, each the
    median of the paired ratios (wordsplit's speed over the peer's in the same run)."""
    labels = ["wordsplit", *(p for p in peers if any(p in row for row in results.values()))]
    peers = labels[1:]
    heads = [*labels, *(f"÷ {peer}" for peer in peers), "÷ fastest exact peer"]
    lines = [f"#### {vocab}", "", "| corpus | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for name, row in results.items():
        timed = {label: speeds for label, speeds in row.items() if isinstance(speeds, list)}
        cells = [f"{statistics.median(timed[label]):.1f}" if label in timed else row.get(label, "–")
                 for label in labels]
        ratios = {peer: statistics.median(w / p for w, p in zip(timed["wordsplit"], timed[peer]))
                  for peer in peers if peer in timed and "wordsplit" in timed}
        fastest = min(ratios, key=ratios.get) if ratios else None
        lines.append(f"| {name} | " + " | ".join(cells + [f"{ratios[p]:.2f}×" if p in ratios else "–" for p in peers])
                     + f" | {f'{ratios[fastest]:.2f}× ({fastest})' if fastest else '–'} |")
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
