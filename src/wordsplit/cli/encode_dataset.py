"""The ``encode-dataset`` subcommand: many Parquet/JSONL/text files → shards a trainer reads.

    wordsplit encode-dataset data/*.parquet --out tokens/ --vocab qwen3 --format megatron --eos
    wordsplit encode-dataset corpus/ --out tokens/ --vocab gpt2 --format llmc --shard-tokens 100M
    wordsplit encode-dataset s3mount/ --out tokens/ --vocab qwen3 --format datatrove --engine ray --address auto

The work is :func:`wordsplit.datasets.encode_dataset` (see there and :mod:`wordsplit.datasets`
for documents, formats, shards and the manifest); this module parses arguments, draws the
progress bar (on stderr, only when it is a terminal: documents, tokens, MB/s and ETA summed
over every worker), prints the summary, and turns Ctrl-C into exit status 130 with no
half-written shard left behind.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from ..datasets import FORMATS, encode_dataset
from ..datasets.inputs import DEFAULT_BATCH_BYTES, ON_ERROR
from ..datasets.run import ENGINES
from ..errors import WordsplitError
from .basic import add_pattern_option, load_vocab_arg
from .encode_file import EXIT_INTERRUPTED, parse_size, positive_int


def parse_count(text: str) -> int:
    """A token count: ``"100M"`` → 100_000_000, ``"2G"`` → 2_000_000_000, ``"65536"``.

    >>> parse_count("100M"), parse_count("1.5k"), parse_count("4096")
    (100000000, 1500, 4096)
    """
    return parse_size(text)


def _progress_bar(quiet: bool):
    """A progress bar on stderr, or None when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    from ..terminal import progress_bars

    return progress_bars(lambda rp: [
        rp.TextColumn("encoding"), rp.BarColumn(),
        rp.TextColumn("{task.fields[docs]:,} docs {task.fields[tokens]:,} tokens {task.fields[speed]:.1f} MB/s "
                      "ETA {task.fields[eta]}")], transient=True)


def _eta(seconds) -> str:
    if seconds is None:
        return "-:--:--"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


# Below this much input, Ray's start-up (its workers import Ray Data; without --address a local
# Ray starts too: seconds in all, docs/datasets.md) outweighs what the workers gain on one machine.
RAY_WORTH_BYTES = 256 << 20


def _note_ray_start_up(args: argparse.Namespace) -> None:
    """Say once, before a small dataset waits on Ray's start-up, that --engine local is faster."""
    from ..datasets.inputs import expand_inputs

    if args.engine != "ray" or args.quiet or args.address is not None:
        return
    total = sum(item.size for item in expand_inputs(args.inputs))
    if total < RAY_WORTH_BYTES:
        print(f"wordsplit: note: {total / 1e6:,.1f} MB of input; starting a local Ray and its workers takes seconds, "
              "so on one machine --engine local is faster below a few hundred MB", file=sys.stderr)


def cmd_encode_dataset(args: argparse.Namespace) -> None:
    _note_ray_start_up(args)
    bar = _progress_bar(args.quiet)
    options = dict(vocab=load_vocab_arg(args), format=args.format, column=args.column, field=args.field,
                   shard_tokens=args.shard_tokens, eos=args.eos, bos=args.bos, engine=args.engine,
                   threads=args.threads, workers=args.workers, address=args.address, on_error=args.on_error,
                   batch_bytes=args.batch_size)
    try:
        if bar is None:
            summary = encode_dataset(args.inputs, args.out, **options)
        else:
            with bar:
                task = bar.add_task("encoding", total=None, docs=0, tokens=0, speed=0.0, eta=_eta(None))

                def show(state):
                    bar.update(task, completed=state.done_bytes, total=state.total_bytes or None,
                               docs=state.documents, tokens=state.tokens, speed=state.mb_per_s, eta=_eta(state.eta))

                summary = encode_dataset(args.inputs, args.out, **options, progress=show)
    except KeyboardInterrupt:
        print(f"wordsplit: interrupted; complete shards are kept in {args.out} and the same command resumes",
              file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    except OSError as exc:
        raise WordsplitError(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    if args.json:
        print(json.dumps(asdict(summary), indent=2))
    elif not args.quiet:
        print(summary)


def register(sub) -> None:
    p = sub.add_parser(
        "encode-dataset", help="encode Parquet/JSONL/text files into shards for a trainer (Megatron, nanoGPT, ...)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Encode the documents of INPUTS (files, directories, globs of *.parquet, *.jsonl[.gz] and\n"
            "text files) into shards in OUT, in the layout a trainer reads: megatron (.bin + .idx),\n"
            "nanogpt (.bin), llmc (llm.c's .bin with header), datatrove (.ds + .ds.index +\n"
            ".ds.metadata) or npy (.npy + .idx.npy). One shard per input, or cut every\n"
            "--shard-tokens; OUT/manifest.json records inputs (sha256), vocabulary, options and\n"
            "shards (sha256). The output bytes do not depend on --threads or --workers. Running the\n"
            "same command again skips inputs already complete; Ctrl-C leaves no half-written shard."),
        epilog="examples:\n"
               "  wordsplit encode-dataset data/*.parquet --out tokens --vocab qwen3 --format megatron --eos\n"
               "  wordsplit encode-dataset corpus/ --out tokens --vocab gpt2 --format llmc --shard-tokens 100M\n"
               "  wordsplit encode-dataset data/ --out tokens --vocab qwen3 --format datatrove --engine ray",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUTS", help="input files, directories or glob patterns")
    p.add_argument("--out", required=True, metavar="DIR", help="the output directory")
    p.add_argument("--vocab", required=True, help="a registered vocabulary name or a vocab file")
    add_pattern_option(p)
    p.add_argument("--format", required=True, choices=list(FORMATS), help="the output layout")
    p.add_argument("--column", default="text", help="Parquet: the column holding the documents (default: text)")
    p.add_argument("--field", default="text", help="JSONL: the field holding the documents (default: text)")
    p.add_argument("--shard-tokens", type=parse_count, default=None, metavar="N",
                   help="start a new shard before a document that would take it past N tokens (e.g. 100M); "
                        "default: one shard per input")
    p.add_argument("--eos", action="store_true", help="put the end-of-sequence id after each document")
    p.add_argument("--bos", action="store_true",
                   help="put the beginning-of-sequence id (else the end-of-sequence id) before each document "
                        "(always on for llmc)")
    p.add_argument("--engine", choices=ENGINES, default="local",
                   help="local: native threads here (default); ray: a Ray cluster (pip install 'wordsplit[ray]'), "
                        "which takes seconds to start its workers (and a local Ray, without --address): on one "
                        "machine, local is faster below a few hundred MB")
    p.add_argument("--threads", type=positive_int, default=None, metavar="N",
                   help="threads that encode (local default: all cores; 1 also reads and writes on that "
                        "thread, 2 or more overlap a reader and a writer thread; ray: per worker, default 1)")
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help="ray: encoding workers (default: the cluster's CPUs)")
    p.add_argument("--address", default=None,
                   help="ray: the cluster to join ('auto', or ray://host:port); default: start a local Ray")
    p.add_argument("--on-error", choices=ON_ERROR, default="raise",
                   help="a bad document: stop naming its file and row (default), or skip it (counted in the manifest)")
    p.add_argument("--batch-size", type=parse_size, default=DEFAULT_BATCH_BYTES, metavar="SIZE",
                   help=f"document text encoded per batch (default: {DEFAULT_BATCH_BYTES >> 20}MiB)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_encode_dataset)
