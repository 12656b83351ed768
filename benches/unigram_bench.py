"""Unigram tokenizers: one pass over whole corpora, single thread, against each file's oracle
(HF ``tokenizers`` 0.23 for a tokenizer.json, ``sentencepiece`` for a ``.model``), HF tokenizers
1.x, tokie, kitoken and splintr where they read the file; prints a Markdown table per
vocabulary, then the load time of a 250k-piece Unigram model.

    python benches/unigram_bench.py [CORPUS_DIR] [--corpora prose,code,multilingual]
        [--max-bytes 4MB] [--doc-bytes 16KB] [--runs 3] [--vocabs t5-small,albert-json,spiece,xlmr-class]
        [--load-repeat 3]

The vocabularies (tests/data/unigram/, SOURCES.md there):

* ``t5-small``: T5's tokenizer.json (32k pieces, the Precompiled normalizer, Metaspace);
* ``albert-json``: ALBERT's tokenizer.json (30k pieces; its normalizer a program of
  ``Replace``, the Unicode steps, ``Precompiled`` and ``Replace(" {2,}")``, then Metaspace);
* ``spiece``: ALBERT's ``spiece.model`` (30k pieces, sentencepiece's nmt_nfkc map);
* ``xlmr-class``: a 262k-piece Unigram ``.model`` made from Gemma 4's vocabulary
  (tests/data/gguf/ggml-vocab-gemma-4.gguf.xz), each piece scored ``-ln(id + 2)`` (a Zipf-like
  ranking), with byte fallback and no character map: the size of XLM-R's or mT5's models,
  which cannot be shipped here. Its load is timed too (``spm_load_bench.py``'s fresh-process
  phases: ``load_vocab``, the build, the first encode).

The timing is ``wordpiece_bench.py``'s (its ``run`` and ``table``): every contender first encodes
every document once and a contender whose ids differ from the oracle's is reported, not timed;
then fresh instances take turns a corpus at a time, and the table gives the median MB/s (process
CPU time) and the median paired ratios. tokie, kitoken and splintr are imported when installed
(``.peers/`` venvs: put their site-packages on ``PYTHONPATH``); HF tokenizers 1.x runs in a worker
process of its own environment's Python (``wordpiece_bench.tokenizers1``).

Which peer reads which file: a tokenizer.json is read by HF tokenizers 0.23 and 1.x, tokie
(``encode(doc, add_special_tokens=False).ids``), kitoken (``Kitoken.from_tokenizers``,
``encode(doc, False)``) and splintr (``splintr.from_json(path).encode_raw``); a ``.model`` by
sentencepiece and kitoken (``Kitoken.from_sentencepiece``). splintr reads no ``.model``: its
``SentencePieceTokenizer`` (Viterbi Unigram with byte fallback) is built from a model's pieces and
scores (:func:`splintr_pieces`), without the file's normalizer spec.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

import contenders as _contenders  # noqa: F401 -- sets OPENBLAS_NUM_THREADS before numpy loads (see there)
from documents import add_corpus_arguments, corpus_documents
from sentencepiece_bench import gemma4_proto
from wordpiece_bench import run, splintr_json, table, tokenizers1

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
UNIGRAM = DATA / "unigram"


def t5_small(directory: Path) -> Path:
    """T5's tokenizer.json with its padding and truncation off, gunzipped into ``directory``."""
    spec = json.loads(gzip.decompress((UNIGRAM / "t5-small" / "tokenizer.json.gz").read_bytes()))
    spec["padding"] = spec["truncation"] = None
    path = directory / "t5-small.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def albert_json(directory: Path) -> Path:
    """ALBERT's tokenizer.json (transformers' conversion of ``spiece.model``: Replace, NFKD,
    StripAccents, Lowercase, Precompiled, Replace(" {2,}"), Metaspace), gunzipped into
    ``directory``."""
    path = directory / "albert.json"
    path.write_bytes(gzip.decompress((UNIGRAM / "spiece.albert.tokenizer.json.gz").read_bytes()))
    return path


def spiece(directory: Path) -> Path:
    path = directory / "spiece.model"
    path.write_bytes(gzip.decompress((UNIGRAM / "spiece.model.gz").read_bytes()))
    return path


def xlmr_class(directory: Path) -> Path:
    """The 262k-piece Unigram model made from Gemma 4's GGUF vocabulary (see the module
    docstring), written into ``directory``."""
    proto, meta = gemma4_proto("UNIGRAM", add_dummy_prefix=True, remove_extra_whitespaces=True)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    unk = proto.trainer_spec.unk_id
    # GGUF token types are sentencepiece's; the file's unknown token is typed CONTROL there,
    # and its USER_DEFINED ones (HTML tags, runs of spaces) are kept NORMAL: a Unigram model
    # searches them by score like any other.
    for i, (text, kind) in enumerate(zip(tokens, types)):
        piece = proto.pieces.add()
        piece.piece = text
        piece.type = 2 if i == unk else 1 if kind == 4 else kind
        piece.score = -math.log(i + 2)
    path = directory / "xlmr-class.model"
    path.write_bytes(proto.SerializeToString())
    return path


MAKERS = {"t5-small": t5_small, "albert-json": albert_json, "spiece": spiece, "xlmr-class": xlmr_class}


def contenders(path: Path) -> dict[str, object]:
    """Fresh contenders, by label (the oracle's first): encode functions ``document -> ids``, or
    a worker process (HF tokenizers 1.x); a peer that is not installed or does not read the file
    is left out."""
    from wordsplit import TokenizerOptions, load_vocab

    model = path.suffix == ".model"
    wordsplit = TokenizerOptions(backend="native").build(load_vocab(path))
    if not wordsplit.native:
        print(f"({path.name}: a Python stage runs in wordsplit's native pipeline)", file=sys.stderr)
    out: dict[str, object] = {}
    if model:
        import sentencepiece

        sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
        out["sentencepiece"] = sp.encode
    else:
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(str(path))
        out["tokenizers"] = lambda text: hf.encode(text, add_special_tokens=False).ids
    out["wordsplit"] = wordsplit.encode_ordinary
    hf1 = None if model else tokenizers1(path)
    if hf1 is not None:
        out["tokenizers1"] = hf1
    try:
        import tokie

        if not model:
            tk = tokie.Tokenizer.from_json(str(path))
            out["tokie"] = lambda text: tk.encode(text, add_special_tokens=False).ids
    except ImportError:
        pass
    try:
        import kitoken

        kt = kitoken.Kitoken.from_sentencepiece(path.read_bytes()) if model \
            else kitoken.Kitoken.from_tokenizers(path.read_bytes())
        out["kitoken"] = lambda text: kt.encode(text, False)
    except ImportError:
        pass
    except ValueError as exc:  # (a file it does not read: ALBERT's, "Unknown token 1 not found in specials")
        print(f"({path.name}: kitoken does not read it: {exc})", file=sys.stderr)
    splintr = splintr_pieces(path) if model else splintr_json(path)
    if splintr is not None:
        out["splintr"] = splintr
    return out


def splintr_pieces(path: Path):
    """splintr's encode (``encode_raw``: no BOS or EOS) of the ``.model`` ``path`` as its
    ``SentencePieceTokenizer`` built from the model's pieces and scores (sentencepiece's
    protobuf reads them), the way splintr takes a Unigram model it has no file reader for; it has
    no normalizer spec (``add_dummy_prefix``, ``remove_extra_whitespaces``, a character map), so
    its ids differ wherever the spec changes the text. None when splintr is not installed."""
    try:
        import splintr
        from sentencepiece import sentencepiece_model_pb2
    except ImportError:
        return None
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    spec = proto.trainer_spec
    tok = splintr.SentencePieceTokenizer([p.piece for p in proto.pieces], [p.score for p in proto.pieces],
                                         spec.eos_id, spec.bos_id if spec.bos_id >= 0 else None)
    return tok.encode_raw


def load_times(path: Path, repeat: int) -> str:
    """A Markdown table of the fresh-process load of ``path`` (``spm_load_bench.py``'s child:
    medians of CPU seconds per phase), with a cold cache (the file parsed) and a warm one."""
    from spm_load_bench import run as load_once

    rows = ["| backend | cache | load_vocab (s) | build (s) | first encode (s) | total (s) |",
            "|---|---|---:|---:|---:|---:|"]
    for backend in ("native", "python"):
        runs: dict[str, list[dict]] = {"cold": [], "warm": []}
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="wordsplit-load-") as cache_dir:
                runs["cold"].append(load_once(path, cache_dir, backend))
                runs["warm"].append(load_once(path, cache_dir, backend))
        for state, timings in runs.items():
            phases = {name: statistics.median(t[name][1] for t in timings)
                      for name in ("load_vocab", "build", "encode")}
            rows.append(f"| {backend} | {state} | " + " | ".join(f"{v:.3f}" for v in phases.values())
                        + f" | {sum(phases.values()):.3f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument("--runs", type=int, default=3, help="timed passes of fresh instances; the median is shown")
    parser.add_argument("--vocabs", default="t5-small,albert-json,spiece,xlmr-class")
    parser.add_argument("--load-repeat", type=int, default=3, help="fresh-process loads of xlmr-class (0: none)")
    args = parser.parse_args(argv)
    corpora = corpus_documents(args)
    with tempfile.TemporaryDirectory() as scratch:
        for vocab in args.vocabs.split(","):
            path = MAKERS[vocab](Path(scratch))
            oracle = "sentencepiece" if path.suffix == ".model" else "tokenizers"
            results = run(path, corpora, args.runs, make=contenders, oracle=oracle)
            print(table(vocab, results, peers=peers_of(path)), end="\n\n", flush=True)
        if args.load_repeat:
            path = xlmr_class(Path(scratch))
            print(f"#### load of xlmr-class ({path.stat().st_size / 1e6:.1f} MB, 262k pieces)\n")
            print(load_times(path, args.load_repeat), end="\n\n", flush=True)
    return 0


def peers_of(path: Path) -> tuple[str, ...]:
    """The table's peers for ``path``: its oracle, then the other libraries that read it."""
    return (("sentencepiece", "kitoken", "splintr") if path.suffix == ".model"
            else ("tokenizers", "tokenizers1", "tokie", "kitoken", "splintr"))


if __name__ == "__main__":
    sys.exit(main())
