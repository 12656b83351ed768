"""The ``encode-file`` subcommand: a large text or JSONL file → a flat file of token ids.

    wordsplit encode-file docs.jsonl --out train.bin --vocab gpt2 --eos
    wordsplit encode-file corpus.txt --out train.npy                  # one document per line
    zcat docs.jsonl.gz | wordsplit encode-file - --field text --out train.bin --json

The work is :func:`wordsplit.apps.encode_file.encode_file` (see there for what a document is and
the output and index formats); this module parses arguments, draws the progress bar (on
stderr, only when it is a terminal), prints the summary, and turns Ctrl-C into exit status
130 with no output left behind.
"""

from __future__ import annotations

import argparse
import codecs
import json
import re
import sys

from .. import TokenizerOptions
from ..apps.encode_file import DEFAULT_CHUNK_BYTES, encode_file
from ..errors import WordsplitError
from .basic import add_vocab_options, load_vocab_arg

# Input names read as JSONL (with --field text) when --field is not given.
JSONL_SUFFIXES = (".jsonl", ".ndjson")
DEFAULT_FIELD = "text"
# The special-token policy of each --special choice; "text" (the default) is encode_ordinary's.
SPECIAL_POLICIES = {
    "raise": {"disallowed_special": "all"},
    "allow": {"allowed_special": "all"},
    "text": {"disallowed_special": ()},
}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C'd program


def parse_size(text: str) -> int:
    """A byte count: ``"4MB"`` → 4_000_000, ``"1MiB"`` → 1_048_576, ``"65536"`` → 65_536.

    >>> parse_size("4MB"), parse_size("1MiB"), parse_size("512k")
    (4000000, 1048576, 512000)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMG]i?)?B?\s*", text, re.IGNORECASE)
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"not a positive size: {text!r} (e.g. 4MB, 512KiB, 65536)")
    unit = (match.group(2) or "").upper()
    scale = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "KI": 2**10, "MI": 2**20, "GI": 2**30}[unit]
    return max(1, int(float(match.group(1)) * scale))


def positive_int(text: str) -> int:
    """A count of at least 1 (for --threads, --repeat)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return value


def parse_escapes(text: str) -> str:
    r"""A separator given on the command line, with backslash escapes: ``\n``, ``\r\n``, ``\t``, ``\\``.

    >>> parse_escapes(r"\n\n"), parse_escapes("é|")
    ('\n\n', 'é|')
    """
    try:
        # backslashreplace keeps non-Latin-1 characters as \uXXXX escapes, which unicode_escape restores.
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except UnicodeDecodeError as exc:
        raise argparse.ArgumentTypeError(f"bad escape in {text!r}: {exc.reason}") from None


def _progress_bar(quiet: bool):
    """A progress bar on stderr (bytes done, MB/s, ETA), or None when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    from ..terminal import progress_bars

    return progress_bars(lambda rp: [rp.TextColumn("encoding"), rp.BarColumn(), rp.DownloadColumn(),
                                     rp.TransferSpeedColumn(), rp.TimeRemainingColumn()], transient=True,
                         plain_unit="bytes")


def cmd_encode_file(args: argparse.Namespace) -> None:
    field = args.field
    if field is None and args.input.lower().endswith(JSONL_SUFFIXES):
        field = DEFAULT_FIELD
    if field is not None and (args.doc_separator is not None or args.whole_file):
        raise WordsplitError("--doc-separator and --whole-file are for plain text; JSONL has one document per line")
    separator = None if args.whole_file else "\n" if args.doc_separator is None else args.doc_separator
    source = sys.stdin.buffer if args.input == "-" else args.input
    bar = _progress_bar(args.quiet)
    try:
        components = TokenizerOptions(spanner=args.spanner, encoder=args.encoder, backend=args.backend)
        tok = components.build(load_vocab_arg(args))
        options = dict(field=field, separator=separator, eos=args.eos, chunk_bytes=args.chunk_size,
                       num_threads=args.threads, **SPECIAL_POLICIES[args.special])
        if bar is None:
            summary = encode_file(tok, source, args.out, **options)
        else:
            with bar:
                task = bar.add_task("encoding", total=None)
                summary = encode_file(tok, source, args.out, **options,
                                      progress=lambda done, total: bar.update(task, completed=done, total=total))
    except KeyboardInterrupt:
        print(f"wordsplit: interrupted; {args.out} was not written", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    elif not args.quiet:
        print(summary)


def register(sub) -> None:
    p = add_vocab_options(sub.add_parser(
        "encode-file", help="encode a large text or JSONL file to a .bin/.npy file of token ids",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Stream IN, encode its documents on all cores a chunk at a time (memory stays bounded),\n"
            "and write their ids as little-endian uint16 (vocabularies of at most 65,536 ids) or\n"
            "uint32 to OUT: raw (*.bin) or with a NumPy header (*.npy). Beside it, OUT's name with\n"
            ".idx before the suffix (train.idx.bin) holds the uint64 token offset of each document's\n"
            "start, then the total. Documents: JSONL (IN named *.jsonl/*.ndjson, or --field): each\n"
            "line's --field string; plain text: each line (without its \\n), or the pieces between\n"
            "--doc-separator, or the whole file (--whole-file). Special-token literals are plain text\n"
            "unless --special says otherwise. Ctrl-C leaves no partial OUT (exit status 130)."),
        epilog="examples:\n  wordsplit encode-file docs.jsonl --out train.bin --vocab gpt2 --eos\n"
               "  wordsplit encode-file corpus.txt --out train.npy --doc-separator '\\n\\n'\n"
               "  zcat docs.jsonl.gz | wordsplit encode-file - --field text --out train.bin --json",
    ))
    p.add_argument("input", metavar="IN", help="the input file ('-': stdin)")
    p.add_argument("--out", required=True, metavar="OUT", help="the output file, *.bin or *.npy")
    p.add_argument("--field", default=None,
                   help=f"JSONL: the field holding the text (default: {DEFAULT_FIELD!r} for *.jsonl/*.ndjson; "
                        "giving it reads IN as JSONL)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--doc-separator", type=parse_escapes, metavar="SEP",
                       help=r"plain text: the text between documents, escapes allowed (default: \n, one per line)")
    group.add_argument("--whole-file", action="store_true",
                       help="plain text: the whole file is one document (memory grows with the file)")
    p.add_argument("--eos", action="store_true", help="append the vocabulary's end-of-sequence id after each document")
    p.add_argument("--special", choices=list(SPECIAL_POLICIES), default="text",
                   help="special-token literals in the text: encode them as plain text (default), "
                        "allow them as special tokens, or raise an error")
    p.add_argument("--chunk-size", type=parse_size, default=DEFAULT_CHUNK_BYTES, metavar="SIZE",
                   help=f"input bytes encoded per batch (default: {DEFAULT_CHUNK_BYTES >> 20}MiB)")
    p.add_argument("--threads", type=positive_int, default=None, metavar="N",
                   help="native threads (default: all cores)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_encode_file)

