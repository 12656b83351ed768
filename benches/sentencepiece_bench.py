"""SentencePiece vocabularies: one pass over whole corpora, single thread, against
``sentencepiece`` (the oracle) and gigatoken's SentencePiece backend; prints a Markdown table.

    python benches/sentencepiece_bench.py [CORPUS_DIR] [--corpora prose,code,multilingual]
        [--max-bytes 4MB] [--doc-bytes 16KB] [--vocabs llama2-class,gemma-class]
        [--baseline SRC_DIR [--baseline-name NAME]]

The vocabularies:

* ``llama2-class``: Mistral 7B v0.1's ``tokenizer.model`` (tests/data/spm/mistral-v1.model: 32k
  pieces, Llama 2's normalizer spec);
* ``gemma-class``: a 262k-piece SentencePiece BPE ``.model`` made from Gemma 4's vocabulary
  (tests/data/gguf/ggml-vocab-gemma-4.gguf.xz) as sentencepiece's BPE trainer scores pieces:
  each piece's score is minus the rank of the first merge that makes it (pieces no merge makes
  score below every merged one), with Gemma's normalizer spec (no dummy prefix, whitespace kept
  and escaped). No Gemma 3 ``tokenizer.model`` can be shipped here; this file has its size and
  layout, and all three tokenizers read the same file;
* ``bpe-charsmap``: BPEmb's English 100k SentencePiece BPE model
  (tests/data/unigram/bpemb-en.wiki.bpe.vs100000.model.gz), whose normalizer has a precompiled
  character map (``nfkc``): for a model with a map, ``python-stage`` is the same build's native
  engine with the normalizer run as a Python stage (what the core did before it ran maps).

gigatoken is timed when it is installed (``pip install gigatoken`` in the environment that runs
the bench); without it the table has no column for it.

Each contender first encodes every document of every corpus once, and its ids are compared with
``sentencepiece``'s (a contender that differs is reported, not timed). Then fresh instances (cold
caches: wordsplit's per-pipeline piece cache, gigatoken's) each encode every document exactly
once, taking turns a corpus at a time; the table gives MB/s of UTF-8 text (process CPU time,
so another process on the machine slows the figures less than it would wall time).

With ``--baseline``, another wordsplit build (a directory holding its ``wordsplit`` package,
e.g. a copy of another checkout's ``src``) takes its turns too, from a worker process that
imports it (a fresh instance per vocabulary, timed on that process's CPU clock by the same
code); the table gains its column and the ratio of this build to it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import contenders as _contenders  # noqa: F401 -- sets OPENBLAS_NUM_THREADS before numpy loads (see there)
from documents import add_corpus_arguments, corpus_documents, utf8_len

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def gemma4_proto(model_type: str, *, add_dummy_prefix: bool, remove_extra_whitespaces: bool):
    """``(proto, metadata)``: a SentencePiece ModelProto of type ``model_type`` (``"BPE"`` or
    ``"UNIGRAM"``) with byte fallback, the identity normalizer and the special ids of Gemma 4's
    GGUF vocabulary, and that vocabulary's metadata; the caller adds the pieces."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    from wordsplit.formats.gguf import read_gguf_metadata

    meta = read_gguf_metadata(lzma.decompress((DATA / "gguf" / "ggml-vocab-gemma-4.gguf.xz").read_bytes()))
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = getattr(pb.TrainerSpec, model_type)
    proto.trainer_spec.byte_fallback = True
    proto.trainer_spec.unk_id = meta["tokenizer.ggml.unknown_token_id"]
    proto.trainer_spec.bos_id = meta.get("tokenizer.ggml.bos_token_id", -1)
    proto.trainer_spec.eos_id = meta.get("tokenizer.ggml.eos_token_id", -1)
    proto.trainer_spec.pad_id = meta.get("tokenizer.ggml.padding_token_id", -1)
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = add_dummy_prefix
    proto.normalizer_spec.remove_extra_whitespaces = remove_extra_whitespaces
    proto.normalizer_spec.escape_whitespaces = True
    return proto, meta


def gemma_class_model(directory: Path) -> Path:
    """The 262k SentencePiece BPE model made from Gemma 4's GGUF vocabulary (see the module
    docstring), written into ``directory``."""
    proto, meta = gemma4_proto("BPE", add_dummy_prefix=False, remove_extra_whitespaces=False)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    first_merge: dict[str, int] = {}
    for rank, merge in enumerate(meta["tokenizer.ggml.merges"]):
        cut = merge.find(" ", 1)
        first_merge.setdefault(merge[:cut] + merge[cut + 1:], rank)
    unk = proto.trainer_spec.unk_id
    unmerged = -float(len(meta["tokenizer.ggml.merges"]) + 1)
    # GGUF token types are sentencepiece's; the file's unknown token is typed CONTROL there.
    for i, (text, kind) in enumerate(zip(tokens, types)):
        piece = proto.pieces.add()
        piece.piece = text
        piece.type = 2 if i == unk else kind
        piece.score = -float(first_merge[text]) if text in first_merge else unmerged
    path = directory / "gemma-class.model"
    path.write_bytes(proto.SerializeToString())
    return path


def vocab_files(names: list[str], directory: Path) -> dict[str, Path]:
    def bpemb() -> Path:
        path = directory / "bpemb-en.wiki.bpe.vs100000.model"
        path.write_bytes(gzip.decompress((DATA / "unigram" / f"{path.name}.gz").read_bytes()))
        return path

    makers = {"llama2-class": lambda: DATA / "spm" / "mistral-v1.model",
              "gemma-class": lambda: gemma_class_model(directory), "bpe-charsmap": bpemb}
    unknown = set(names) - set(makers)
    if unknown:
        raise SystemExit(f"unknown vocabularies {sorted(unknown)}; known: {', '.join(makers)}")
    return {name: makers[name]() for name in names}


def contenders(path: Path) -> dict[str, object]:
    """Fresh encode functions, by label: ``document -> ids`` (gigatoken's when it is installed)."""
    import sentencepiece

    from wordsplit import TokenizerOptions, load_vocab

    wordsplit = TokenizerOptions(backend="native").build(load_vocab(path))
    assert wordsplit.native, "the native engine runs a Python stage"
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    found = {"wordsplit": wordsplit.encode_ordinary, "sentencepiece": sp.encode}
    if getattr(wordsplit.vocab.normalizer, "charsmap", ""):
        found["python-stage"] = python_stage(wordsplit.vocab).encode_ordinary
    try:
        import gigatoken
    except ImportError:
        return found
    return {**found, "gigatoken": gigatoken.Tokenizer.from_sentencepiece(path).encode}


def python_stage(vocab):
    """The native engine of ``vocab`` with its normalizer as a Python stage: the engine is
    told the core does not run it."""
    from wordsplit import TokenizerOptions
    from wordsplit.engines import native as engine

    told = engine.native_normalizer
    engine.native_normalizer = lambda stage: False
    try:
        tok = TokenizerOptions(backend="native").build(vocab)
    finally:
        engine.native_normalizer = told
    assert not tok.native
    return tok


def one_pass(encode, docs: list[str]) -> float:
    """CPU seconds of this process to encode every document once."""
    start = time.process_time()
    for doc in docs:
        encode(doc)
    return time.process_time() - start


class Baseline:
    """Another wordsplit build in a worker process (``--baseline``): the same documents, a
    fresh instance of ``path``'s vocabulary, one pass over a corpus per request."""

    def __init__(self, root: Path, path: Path, args: argparse.Namespace):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(ROOT / "benches")]))
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path),
                   "--corpora", args.corpora, "--max-bytes", str(args.max_bytes), "--doc-bytes", str(args.doc_bytes)]
        if args.corpus_dir:
            command.insert(2, str(args.corpus_dir))
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, request: str) -> dict:
        self.proc.stdin.write(request + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the baseline worker exited with code {self.proc.wait()} (its error is above)")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def worker(path: Path, corpora: dict[str, list[str]]) -> int:
    """The baseline's side of :class:`Baseline`: ``check NAME`` answers the ids of every
    document of a corpus (as a list per document), ``time NAME`` the CPU seconds of one pass
    of a fresh instance (made by ``fresh``)."""
    from wordsplit import TokenizerOptions, load_vocab

    vocab = load_vocab(path)
    build = lambda: TokenizerOptions(backend="native").build(vocab).encode_ordinary  # noqa: E731
    encode = build()
    encode("warm up")
    for line in sys.stdin:
        command, name = line.split()
        if command == "check":
            answer = [list(encode(doc)) for doc in corpora[name]]
        elif command == "fresh":
            encode = build()
            encode("warm up")
            answer = None
        else:
            answer = one_pass(encode, corpora[name])
        print(json.dumps(answer), flush=True)
    return 0


def run(path: Path, corpora: dict[str, list[str]],
        baseline: Baseline | None = None) -> dict[str, dict[str, float | str]]:
    """``{corpus: {label: MB/s, or "differs (n of m docs)"}}``."""
    check = contenders(path)
    wrong: dict[str, dict[str, int]] = {}
    for name, docs in corpora.items():
        want = [check["sentencepiece"](doc) for doc in docs]
        for label, encode in check.items():
            wrong.setdefault(name, {})[label] = sum(list(encode(doc)) != ids for doc, ids in zip(docs, want))
        if baseline:
            wrong[name]["baseline"] = sum(got != ids for got, ids in zip(baseline.ask(f"check {name}"), want))
    timed = contenders(path)
    for encode in timed.values():
        encode("warm up")  # (what a library sets up on its first call is load time, not encode)
    if baseline:
        baseline.ask("fresh -")
        timed["baseline"] = lambda name: baseline.ask(f"time {name}")
    results: dict[str, dict[str, float | str]] = {}
    for turn, (name, docs) in enumerate(corpora.items()):
        labels = list(timed)
        labels = labels[turn % len(labels):] + labels[:turn % len(labels)]
        size = utf8_len(docs)
        for label in labels:
            seconds = timed[label](name) if label == "baseline" else one_pass(timed[label], docs)
            results.setdefault(name, {})[label] = size / seconds / 1e6
        for label, count in wrong[name].items():
            if count:
                results[name][label] = f"differs ({count} of {len(docs)} docs)"
    return results


def table(vocab: str, results: dict[str, dict[str, float | str]], baseline_name: str | None = None) -> str:
    timed = set().union(*map(set, results.values()))
    peers = [label for label in ("baseline", "python-stage", "gigatoken", "sentencepiece") if label in timed]
    labels = ["wordsplit", *peers]
    shown = {"baseline": baseline_name}
    lines = [f"#### {vocab}", "",
             "| corpus | " + " | ".join(shown.get(label) or label for label in labels) + " | "
             + " | ".join(f"÷ {shown.get(peer) or peer}" for peer in peers) + " |",
             "|---|" + "---:|" * (len(labels) + len(peers))]
    for name, row in results.items():
        cells = [f"{row[label]:.2f}" if isinstance(row[label], float) else row[label] for label in labels]
        ratios = [f"{row['wordsplit'] / row[peer]:.2f}×" if all(isinstance(row[k], float) for k in ("wordsplit", peer))
                  else "–" for peer in peers]
        lines.append(f"| {name} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument("--vocabs", default="llama2-class,gemma-class")
    parser.add_argument("--baseline", type=Path, metavar="SRC_DIR",
                        help="also time the wordsplit build whose package is in this directory")
    parser.add_argument("--baseline-name", default="baseline", help="its column's name (e.g. its commit)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    corpora = corpus_documents(args)
    if args.worker:
        return worker(args.worker, corpora)
    with tempfile.TemporaryDirectory() as scratch:
        for vocab, path in vocab_files(args.vocabs.split(","), Path(scratch)).items():
            baseline = Baseline(args.baseline.resolve(), path, args) if args.baseline else None
            try:
                results = run(path, corpora, baseline)
            finally:
                if baseline:
                    baseline.close()
            print(table(vocab, results, args.baseline_name if baseline else None), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
