"""The ``train`` subcommand: learn a byte-level BPE vocabulary from files, as HF's BpeTrainer does.

    wordsplit train corpus.txt docs.jsonl.gz --vocab-size 32768 --pattern cl100k_base \\
        --special '<|endoftext|>' --out my-tokenizer

The work is :func:`wordsplit.train` (docs/training.md states the rules); this module parses
arguments, writes the files with :func:`wordsplit.save_vocab`, draws the progress bars on
stderr (when it is a terminal, or with ``--progress``) and prints a summary.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .encode_file import positive_int


def run(args: argparse.Namespace) -> None:
    from .. import save_vocab, train

    started = time.perf_counter()
    progress = args.progress or (not args.quiet and sys.stderr.isatty())
    vocab = train(
        [Path(f) for f in args.files], vocab_size=args.vocab_size, pattern=args.pattern,
        special_tokens=args.special, min_frequency=args.min_frequency, max_token_length=args.max_token_length,
        normalizer=args.normalizer, spanner=args.spanner, backend=args.backend, num_threads=args.threads,
        progress=progress, field=args.field, column=args.column, name=args.name,
        max_words=args.max_words, sample_rate=args.sample_rate, seed=args.seed,
    )
    written = save_vocab(vocab, args.out)
    seconds = time.perf_counter() - started
    if not args.quiet:
        kind = "pair-ranked merges" if vocab.merges is not None else "rank-based"
        print(f"trained {vocab.n_vocab} tokens ({len(vocab.special_tokens)} special, {kind}) in {seconds:.2f} s; "
              f"wrote {', '.join(str(p) for p in written)}")


def register(sub) -> None:
    p = sub.add_parser(
        "train", help="learn a byte-level BPE vocabulary from text, JSONL or Parquet files (HF BpeTrainer's rules)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Count the words of FILES (text: each line is a document; *.jsonl/*.ndjson/*.json: each\n"
            "line's --field; *.parquet: --column, needs pyarrow; *.gz decompressed) split by --pattern,\n"
            "learn merges exactly as HuggingFace's BpeTrainer does, and write OUT/tokenizer.json,\n"
            "OUT/vocab.json + OUT/merges.txt + OUT/tokenizer_config.json and OUT/NAME.tiktoken.\n"
            "See docs/training.md."),
        epilog="example:\n  wordsplit train corpus.txt --vocab-size 32768 --pattern cl100k_base "
               "--special '<|endoftext|>' --out tok",
    )
    p.add_argument("files", nargs="+", metavar="FILES", help="training files")
    p.add_argument("--vocab-size", type=positive_int, required=True, help="tokens to reach, specials included")
    p.add_argument("--pattern", default="cl100k_base",
                   help="a registered vocabulary name (its split pattern and normalizer) or a regex "
                        "(default: cl100k_base)")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN",
                   help="a special token (repeat for more; ids 0, 1, ... in order)")
    p.add_argument("--min-frequency", type=int, default=0, help="stop when the best pair is rarer (default: 0)")
    p.add_argument("--max-token-length", type=positive_int, default=None, help="the longest token, in bytes")
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N",
                   help="count only the first N words (pieces of --pattern) of the files, in order, and read "
                        "no further (default: all)")
    p.add_argument("--sample-rate", type=float, default=1.0, metavar="RATE",
                   help="keep each document with probability RATE, in (0, 1] (default: 1, all)")
    p.add_argument("--seed", type=int, default=0, help="the seed of --sample-rate's draws (default: 0)")
    p.add_argument("--normalizer", default=None, help="none, nfc... (default: the --pattern vocabulary's, else none)")
    p.add_argument("--spanner", default="auto", help="spanner (pre-tokenizer) name (default: auto)")
    p.add_argument("--backend", default="auto", help="auto, native or python (default: auto)")
    p.add_argument("--threads", type=positive_int, default=None, help="counting threads (default: all cores)")
    p.add_argument("--field", default=None, help="JSONL: the field holding the text (default: text)")
    p.add_argument("--column", default=None, help="Parquet: the column holding the text (default: text)")
    p.add_argument("--name", default="trained",
                   help="the vocabulary's name, and the .tiktoken file's (default: trained)")
    p.add_argument("--out", required=True, metavar="DIR", help="the output directory (made if missing)")
    p.add_argument("--progress", action="store_true",
                   help="draw progress bars on stderr even when it is not a terminal")
    p.add_argument("--quiet", action="store_true", help="no progress bars, no summary")
    p.set_defaults(func=run)
