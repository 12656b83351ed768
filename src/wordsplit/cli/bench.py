"""The ``bench`` subcommand: encode throughput of each strategy on your own file.

    wordsplit bench corpus.txt                                # every encoder × {auto, regex}
    wordsplit bench corpus.txt --vocab cl100k_base --encoder backtrack,heap-merge --backend native,python
    wordsplit bench --lines --threads 4 --json < docs.txt    # one document per line, batched

Every combination of ``--backend`` × ``--spanner`` × ``--encoder`` encodes the same text: once
to check that all give the ids of the first (a difference is a bug: it is reported on stderr
and the exit status is 1), then ``--repeat`` times, interleaved so that a busy machine slows
them alike; the table shows the median. Each run is one encode by a freshly built tokenizer
(so the Python backend's piece cache starts empty). Special-token literals are plain text.
The text is the file (or stdin) up to ``--max-bytes``, cut at the last line break before
the limit, so that the Python backend (about 1 MB/s, twenty times slower) finishes.

It does not: compare against other libraries, sweep piece lengths or measure worst cases
(``benches/bench.py`` in the repository does), or measure decode.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from typing import Optional, Sequence, Union

from .. import TokenizerOptions, load_vocab
from ..apps import plural
from ..encoders import ENCODERS
from ..errors import WordsplitError
from .basic import DEFAULT_VOCAB
from .encode_file import EXIT_INTERRUPTED, parse_size, positive_int

DEFAULT_SPANNERS = "auto,regex"
DEFAULT_BACKENDS = "auto"
DEFAULT_REPEAT = 3
DEFAULT_MAX_BYTES = 2_000_000
# For the warning before a long run: the Python backend encodes about 1 MB/s of text it has
# not seen (0.8 to 1.2 MB/s on the test corpora: prose, code, multilingual); repeated text is
# faster, its pieces being cached.
PYTHON_BYTES_PER_S = 1_000_000
WARN_SECONDS = 30.0
EXIT_MISMATCH = 1


def default_encoders() -> str:
    """``auto`` and every registered encoder, comma-separated.

    >>> default_encoders()
    'auto,backtrack,buffer-sweep,heap-merge'
    """
    return ",".join(["auto", *ENCODERS])


@dataclass(frozen=True)
class BenchRow:
    """One combination's result.

    Attributes:
        backend, spanner, encoder: as resolved by the options (``auto`` spanner → its scanner).
        requested: the names as given, ``backend/spanner/encoder``.
        seconds: median time of one encode of the whole text.
        bytes, tokens: the text's size and its token count.
        matches: the ids equal those of the first row.
    """

    backend: str
    spanner: str
    encoder: str
    requested: str
    seconds: float
    bytes: int
    tokens: int
    matches: bool

    @property
    def mb_per_s(self) -> float:
        return self.bytes / self.seconds / 1e6 if self.seconds > 0 else float("inf")

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else float("inf")

    def to_dict(self) -> dict:
        return {**asdict(self), "mb_per_s": self.mb_per_s, "tokens_per_s": self.tokens_per_s}


def _names(text: str, option: str) -> list[str]:
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise WordsplitError(f"{option} needs at least one name, e.g. {option} auto")
    return names


def _file_size(stream) -> Optional[int]:
    """The size of a regular file behind ``stream``, else None (a pipe, a terminal, memory)."""
    try:
        info = os.fstat(stream.fileno())
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def read_sample(stream, max_bytes: int) -> tuple[str, Optional[int]]:
    """At most ``max_bytes`` of ``stream`` as text, cut after the last line break within the
    limit (else at a character boundary), and the size of the whole input: None when it was
    cut and the stream is not a regular file (the rest is never read).

    >>> import io
    >>> read_sample(io.BytesIO(b"one\\ntwo\\nthree\\n"), 10)
    ('one\\ntwo\\n', None)
    """
    data = stream.read(max_bytes + 1)
    cut = len(data) > max_bytes
    total = _file_size(stream) if cut else len(data)
    if cut:
        data = data[:max_bytes]
        data = data[:data.rfind(b"\n") + 1] or data
    try:
        return data.decode("utf-8"), total
    except UnicodeDecodeError as exc:
        if cut and exc.reason == "unexpected end of data":  # the limit split a character
            return data[:exc.start].decode("utf-8"), total
        raise WordsplitError(f"the input is not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def run_bench(text: str, vocab_name: str, *, backends: Sequence[str], spanners: Sequence[str],
              encoders: Sequence[str], repeat: int = DEFAULT_REPEAT, lines: bool = False,
              num_threads: Optional[int] = None, log=None) -> list[BenchRow]:
    """Time every backend × spanner × encoder on ``text``; see the module docstring.

    Args:
        text: the text.
        vocab_name: a registered vocabulary or a vocab file.
        backends, spanners, encoders: the names to combine (``auto`` allowed).
        repeat: timed runs per combination (the median is reported).
        lines: encode each line as a document with ``encode_batch_flat`` (native threads)
            instead of the whole text with ``encode``.
        num_threads: threads for ``lines``.
        log: called with one-line progress messages, or None.

    Raises:
        UnknownComponentError, UnsupportedTokenizerError, BackendUnavailableError: a name
            that does not exist or does not fit the vocabulary.

    >>> rows = run_bench("hello world", "gpt2", backends=["python"], spanners=["regex"],
    ...                  encoders=["heap-merge", "backtrack"], repeat=1)
    >>> [(row.encoder, row.tokens, row.matches) for row in rows]
    [('heap-merge', 2, True), ('backtrack', 2, True)]
    """
    vocab = load_vocab(vocab_name)
    combos = [(b, s, e) for b in backends for s in spanners for e in encoders]
    options = [TokenizerOptions(backend=b, spanner=s, encoder=e) for b, s, e in combos]
    toks = [opts.build(vocab) for opts in options]
    docs = text.split("\n") if lines else None
    size = len(text.encode("utf-8"))

    def encode(tok) -> tuple[Union[list, bytes], int]:
        """The ids in a comparable form, and how many there are."""
        if docs is None:
            ids = tok.encode(text, disallowed_special=())
            return ids, len(ids)
        ids, offsets = tok.encode_batch_flat(docs, num_threads=num_threads, disallowed_special=())
        return ids.tobytes() + offsets.tobytes(), len(ids)

    # The first pass checks parity (and warms caches); it is not timed.
    results = []
    for (b, s, e), tok in zip(combos, toks):
        if log is not None:
            log(f"checking {b}/{s}/{e}")
        results.append(encode(tok))
    runs: list[list[float]] = [[] for _ in combos]
    for round_ in range(repeat):
        if log is not None:
            log(f"timing, round {round_ + 1} of {repeat}")
        for i, opts in enumerate(options):
            # A new tokenizer each run: the Python backend's piece cache must not carry the
            # previous run's work (a run is then one encode by a fresh tokenizer, as in a new process).
            tok = opts.build(vocab)
            started = time.perf_counter()
            encode(tok)
            runs[i].append(time.perf_counter() - started)
    return [
        BenchRow(backend=tok.backend, spanner=tok.spanner_name, encoder=tok.encoder_name,
                 requested=f"{b}/{s}/{e}", seconds=statistics.median(times), bytes=size, tokens=count,
                 matches=ids == results[0][0])
        for (b, s, e), tok, times, (ids, count) in zip(combos, toks, runs, results)
    ]


def render_bench(rows: Sequence[BenchRow], *, vocab: str, total_bytes: Optional[int], repeat: int,
                 lines: bool) -> str:
    """The rows as a plain-text table, fastest first, with a line about the input.

    >>> row = BenchRow("native", "regex", "backtrack", "auto/regex/backtrack", 0.5, 1_000_000, 250_000, True)
    >>> print(render_bench([row], vocab="gpt2", total_bytes=1_000_000, repeat=3, lines=False))
    backend  spanner  encoder    MB/s  Mtok/s  ms/run  time vs best  ids
    native   regex    backtrack  2.00    0.50  500.00         1.00x  ok
    gpt2: 1,000,000 bytes, 250,000 tokens as one text; median of 3 runs
    """
    from ..terminal import plain_table

    headers = ["backend", "spanner", "encoder", "MB/s", "Mtok/s", "ms/run", "time vs best", "ids"]
    best = max((row.mb_per_s for row in rows), default=0.0)
    cells = [[row.backend, row.spanner, row.encoder, f"{row.mb_per_s:.2f}", f"{row.tokens_per_s / 1e6:.2f}",
              f"{row.seconds * 1e3:.2f}", f"{best / row.mb_per_s:.2f}x" if row.mb_per_s else "-",
              "ok" if row.matches else "MISMATCH"] for row in sorted(rows, key=lambda row: row.seconds)]
    sample = rows[0].bytes if rows else 0
    if total_bytes is None:
        cut = " (cut at --max-bytes)"
    else:
        cut = f" (the first {sample:,} of {total_bytes:,})" if total_bytes > sample else ""
    tokens = rows[0].tokens if rows else 0
    how = "one document per line, batched" if lines else "one text"
    return (plain_table(headers, cells, right={3, 4, 5, 6}) + f"\n{vocab}: {plural(sample, 'byte')}{cut}, "
            f"{plural(tokens, 'token')} as {how}; median of {plural(repeat, 'run')}")


def cmd_bench(args: argparse.Namespace) -> None:
    backends = _names(args.backend, "--backend")
    spanners = _names(args.spanner, "--spanner")
    encoders = _names(args.encoder, "--encoder")
    if args.file in (None, "-"):
        text, total = read_sample(sys.stdin.buffer, args.max_bytes)
    else:
        try:
            with open(args.file, "rb") as f:
                text, total = read_sample(f, args.max_bytes)
        except OSError as exc:
            raise WordsplitError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    if not text:
        raise WordsplitError("nothing to encode: the input is empty")
    size = len(text.encode("utf-8"))
    python_combos = len(spanners) * len(encoders) * sum(
        TokenizerOptions(backend=b).resolved_backend() == "python" for b in backends)
    estimate = python_combos * (args.repeat + 1) * size / PYTHON_BYTES_PER_S
    if estimate > WARN_SECONDS:
        print(f"wordsplit: warning: the python backend encodes about {PYTHON_BYTES_PER_S / 1e6:g} MB/s: "
              f"this may take {estimate:.0f} s; --max-bytes 200KB is faster", file=sys.stderr)
    log = (lambda message: print(f"bench: {message}", file=sys.stderr)) if sys.stderr.isatty() else None
    try:
        rows = run_bench(text, args.vocab, backends=backends, spanners=spanners, encoders=encoders,
                         repeat=args.repeat, lines=args.lines, num_threads=args.threads, log=log)
    except KeyboardInterrupt:
        print("wordsplit: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    if args.json:
        print(json.dumps({"vocab": args.vocab, "bytes": size, "input_bytes": total, "repeat": args.repeat,
                          "lines": args.lines, "rows": [row.to_dict() for row in rows]}, indent=2))
    else:
        print(render_bench(rows, vocab=args.vocab, total_bytes=total, repeat=args.repeat, lines=args.lines))
    bad = [row for row in rows if not row.matches]
    for row in bad:
        print(f"wordsplit: MISMATCH: {row.requested} gives other ids than {rows[0].requested}; this is a bug, "
              "please report it with the input", file=sys.stderr)
    if bad:
        raise SystemExit(EXIT_MISMATCH)


def register(sub) -> None:
    p = sub.add_parser(
        "bench", help="measure the encode throughput of each encoder, spanner and backend on a file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Encode FILE (up to --max-bytes) with every --backend × --spanner × --encoder, check\n"
                    "that all give the same ids, and print MB/s and tokens/s (median of --repeat runs).",
        epilog="examples:\n  wordsplit bench corpus.txt\n"
               "  wordsplit bench corpus.txt --vocab cl100k_base --encoder backtrack,heap-merge "
               "--backend native,python\n"
               "  wordsplit bench --lines --json < docs.txt",
    )
    p.add_argument("file", metavar="FILE", nargs="?", help="the text file ('-' or absent: stdin)")
    p.add_argument("--vocab", default=DEFAULT_VOCAB,
                   help=f"a registered name or a vocab file (default: {DEFAULT_VOCAB})")
    p.add_argument("--encoder", default=default_encoders(),
                   help=f"comma-separated encoders (default: {default_encoders()})")
    p.add_argument("--spanner", default=DEFAULT_SPANNERS,
                   help=f"comma-separated spanners (default: {DEFAULT_SPANNERS})")
    p.add_argument("--backend", default=DEFAULT_BACKENDS,
                   help=f"comma-separated backends: auto, native, python (default: {DEFAULT_BACKENDS})")
    p.add_argument("--repeat", type=positive_int, default=DEFAULT_REPEAT, metavar="N",
                   help=f"timed runs per combination (default: {DEFAULT_REPEAT})")
    p.add_argument("--max-bytes", type=parse_size, default=DEFAULT_MAX_BYTES, metavar="SIZE",
                   help="use at most this much of the input (default: 2MB)")
    p.add_argument("--lines", action="store_true",
                   help="encode each line as a document, batched on native threads (default: one text)")
    p.add_argument("--threads", type=positive_int, default=None, metavar="N",
                   help="threads for --lines (default: all cores)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=cmd_bench)
