"""Encode a dataset: inputs → shards in a trainer's format, with a manifest; resumable.

The unit of work is one input file: its documents are read in order, encoded a batch at a
time (native threads, the GIL released; a Parquet column straight from its Arrow buffers, see
:func:`encode_units`) and written to its own shards (one per input, or cut every
``shard_tokens`` tokens; a shard never spans two inputs and a document never spans two
shards). So every unit is independent of the others: any worker can do any unit, the output
of a unit depends on nothing but the unit and the options (the same bytes whatever the number
of threads or workers), and a re-run redoes only the units the manifest does not record as
complete with matching hashes.

``OUT/manifest.json`` (rewritten atomically after each unit) records the inputs (path, kind,
size, sha256; for each, its documents, tokens, skipped documents and shards), the vocabulary
(name, content hash, size), the options, and every shard (its input, first document, document
and token counts, and each file's size and sha256). It holds no time and no thread count, so
it is itself deterministic.

It does not: shuffle, deduplicate or pack documents into training sequences.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

from .._version import __version__
from ..apps import plural
from ..errors import DatasetInputError, OptionTypeError, OptionValueError, UnknownTokenError, advised
from .formats import BOS_ALWAYS, DTYPES, format_writer, frame_documents, narrow_ids
from .inputs import (DEFAULT_BATCH_BYTES, ON_ERROR, DocumentBatch, InputFile, expand_inputs, file_sha256,
                     read_batches)

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class Plan:
    """Everything a worker needs to encode a unit (small and picklable: no vocabulary)."""

    out_dir: str
    format: str
    column: str
    field: str
    shard_tokens: Optional[int]
    bos_id: Optional[int]
    eos_id: Optional[int]
    on_error: str
    batch_bytes: int
    n_vocab: int
    vocab_name: str
    threads: Optional[int] = None

    def options(self) -> dict:
        """The options recorded in the manifest (those that decide the output bytes)."""
        return {"column": self.column, "field": self.field, "shard_tokens": self.shard_tokens,
                "bos_token_id": self.bos_id, "eos_token_id": self.eos_id, "on_error": self.on_error}


@dataclass
class Progress:
    """Counts so far, summed over every worker: what a progress bar shows.

    Attributes:
        documents, tokens, skipped: documents encoded, tokens written, documents skipped.
        text_bytes: bytes of document text encoded (UTF-8).
        done_bytes: input file bytes done (estimated within a file), of ``total_bytes``.
        elapsed: seconds since the start.
    """

    documents: int = 0
    tokens: int = 0
    skipped: int = 0
    text_bytes: int = 0
    done_bytes: float = 0.0
    total_bytes: int = 0
    elapsed: float = 0.0

    @property
    def mb_per_s(self) -> float:
        """Document text megabytes (10⁶ bytes) per second."""
        return self.text_bytes / self.elapsed / 1e6 if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> Optional[float]:
        """Seconds left, from the input bytes done so far; None before anything is done."""
        if self.done_bytes <= 0 or self.elapsed <= 0:
            return None
        return max(0.0, self.elapsed * (self.total_bytes - self.done_bytes) / self.done_bytes)


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class DatasetSummary:
    """What :func:`encode_dataset` did.

    Attributes:
        out_dir, manifest: the output directory and its manifest's path.
        inputs: input files; resumed: of them, how many were complete already (skipped).
        shards: shards in the output; documents, tokens, skipped: totals over the dataset.
        seconds: wall time of this run.
    """

    out_dir: str
    manifest: str
    format: str
    inputs: int
    resumed: int
    shards: int
    documents: int
    tokens: int
    skipped: int
    seconds: float

    def __str__(self) -> str:
        resumed = f" ({self.resumed} already complete)" if self.resumed else ""
        skipped = f", {self.skipped:,} skipped" if self.skipped else ""
        return (f"wrote {self.out_dir} ({self.format}): {plural(self.inputs, 'input')}{resumed}, "
                f"{plural(self.shards, 'shard')}, {plural(self.documents, 'document')}{skipped}, "
                f"{plural(self.tokens, 'token')} in {self.seconds:.2f} s; manifest {self.manifest}")


class _ShardSplitter:
    """Feeds one unit's encoded batches to shard writers, cutting a new shard before a document
    that would take the shard past ``shard_tokens`` (a longer document is a shard of its own)."""

    def __init__(self, plan: Plan, unit: int, item: InputFile) -> None:
        self.plan = plan
        self.unit = unit
        self.item = item
        self.writer_class = format_writer(plan.format)
        self.shards: List[dict] = []
        self.writer = None
        self.first_document = 0

    def _name(self) -> str:
        name = f"{self.unit:05d}-{self.item.stem}"
        return name if self.plan.shard_tokens is None else f"{name}-{len(self.shards):05d}"

    def _new_writer(self):
        self.writer = self.writer_class(os.path.join(self.plan.out_dir, self._name()), self.plan.n_vocab,
                                        self.plan.bos_id, self.plan.eos_id, self.plan.vocab_name)
        return self.writer

    def add(self, data: bytes, lengths: List[int]) -> None:
        """Append framed documents (see :func:`~wordsplit.datasets.formats.frame_documents`)."""
        writer = self.writer or self._new_writer()
        limit = self.plan.shard_tokens
        if limit is None:
            writer.add(data, lengths)
            return
        width = writer.itemsize
        start = 0  # the first document (index into lengths) not yet written
        base = at = 0  # its first byte in data, and the current document's
        tokens = writer.tokens
        for i, n in enumerate(lengths):
            if tokens and tokens + n > limit:
                if i > start:
                    writer.add(data[base:at], lengths[start:i])
                    base, start = at, i
                self._close()
                writer = self._new_writer()
                tokens = 0
            tokens += n
            at += n * width
        if start < len(lengths):
            writer.add(data[base:], lengths[start:])

    def _close(self) -> None:
        writer, self.writer = self.writer, None
        writer.finish()
        files = [{"name": os.path.basename(f.path), "bytes": f.size, "sha256": f.sha256()} for f in writer.files]
        writer.publish()
        self.shards.append({"name": os.path.basename(writer.base), "input": self.unit,
                            "first_document": self.first_document, "documents": writer.documents,
                            "tokens": writer.tokens, "files": files})
        self.first_document += writer.documents

    def close(self) -> List[dict]:
        if self.writer is None and not self.shards:
            self._new_writer()  # an input without documents still has its (empty) shard
        if self.writer is not None:
            self._close()
        return self.shards

    def discard(self) -> None:
        if self.writer is not None:
            self.writer.discard()
            self.writer = None


def _prefetched(batches: Iterator, depth: int = 2) -> Iterator:
    """``batches``, read ahead by a thread: reading the next batch overlaps encoding this one
    (native, GIL released). Errors are raised in the caller."""
    items: queue.Queue = queue.Queue(depth)
    stop = threading.Event()
    end = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not put((None, batch)):
                    return
            put((None, end))
        except BaseException as exc:  # handed to the consumer, raised there
            put((exc, None))

    thread = threading.Thread(target=produce, name="wordsplit-read", daemon=True)
    thread.start()
    try:
        while True:
            error, batch = items.get()
            if error is not None:
                raise error
            if batch is end:
                return
            yield batch
    finally:
        stop.set()
        thread.join()


def work_threads(threads: Optional[int]) -> int:
    """The threads ``threads`` asks for: itself, or every core this process may run on (None)."""
    if threads is not None:
        return threads
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Encoder:
    """Encodes a batch into a writer's framed layout: ``(data, lengths)`` as
    :func:`~wordsplit.datasets.formats.frame_documents` gives them, in two steps: ``encode``
    (the native threads' part) and ``frame`` (on the thread that writes).

    Arrow arrays go to the native engine's ``encode_arrow_flat``, which reads their UTF-8 in
    place and frames the ids as it copies them out (no Python str per document, no Python loop
    per document; ``frame`` has nothing left to do); str documents, and every document on the
    Python backend, go through ``encode_batch_flat``, then ``frame_documents``.
    """

    def __init__(self, tok, plan: Plan, writer_class) -> None:
        self.tok = tok
        self.threads = plan.threads
        self.dtype = writer_class.dtype_of(plan.n_vocab)
        self.framing = (DTYPES[self.dtype][1], plan.bos_id, plan.eos_id, writer_class.empty_is_nothing)
        engine = tok.native_engine()
        self.arrow = engine.encode_arrow_flat if engine is not None else None

    def encode(self, batch: DocumentBatch) -> tuple:
        """``(True, data, lengths)`` framed already, or ``(False, ids, offsets)`` to frame."""
        # Special-token literals are plain text: a document that quotes <|endoftext|> must not end there.
        none = frozenset()
        if batch.arrays is not None and self.arrow is not None:
            if not batch.arrays:
                return True, b"", []
            data, lengths = self.arrow(batch.arrays, none, none, self.threads, *self.framing)
            return True, data, lengths
        texts = batch.texts
        if not texts:
            return True, b"", []
        return (False, *self.tok.encode_batch_flat(texts, num_threads=self.threads, disallowed_special=()))

    def frame(self, encoded: tuple) -> Tuple[bytes, List[int]]:
        framed, data, counts = encoded
        if framed:
            return data, counts if isinstance(counts, list) else counts.tolist()
        return frame_documents(narrow_ids(data, self.dtype), counts.tolist()[1:], *self.framing)


class _Background:
    """Runs ``consume(item)`` for each item put, in order, on a thread of its own; an error
    there is raised in the caller at its next ``put`` or at ``close``."""

    def __init__(self, consume: Callable, depth: int = 2) -> None:
        self.items: queue.Queue = queue.Queue(depth)
        self.error: Optional[BaseException] = None
        self.stop = threading.Event()
        self.end = object()

        def run() -> None:
            while True:
                item = self.items.get()
                if item is self.end or self.stop.is_set():
                    return
                try:
                    consume(item)
                except BaseException as exc:  # raised in the caller
                    self.error = exc
                    return

        self.thread = threading.Thread(target=run, name="wordsplit-write", daemon=True)
        self.thread.start()

    def put(self, item) -> None:
        while True:
            if self.error is not None:
                raise self.error
            if not self.thread.is_alive():
                raise RuntimeError("the writer thread ended early")
            try:
                self.items.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def close(self) -> None:
        """Wait for every item put so far to be consumed."""
        self.put(self.end)
        self.thread.join()
        if self.error is not None:
            raise self.error

    def abandon(self) -> None:
        """Stop after the item being consumed; the others are dropped."""
        self.stop.set()
        try:
            self.items.put_nowait(self.end)
        except queue.Full:
            pass
        self.thread.join()


def encode_units(tok, plan: Plan, todo: Sequence[Tuple[int, InputFile]],
                 report: Optional[Callable[[int, int, int, int, int, float], None]] = None,
                 complete: Optional[Callable[[int, dict], None]] = None, overlap: Optional[bool] = None) -> None:
    """Encode inputs into their shards, in order; ``complete(unit, record)`` gets each input's
    manifest record once its shards are published.

    ``report(unit, documents, tokens, skipped, text_bytes, position)`` is called after each
    batch with the batch's counts and how far into its input it is (0 to 1).

    On one thread (``plan.threads == 1``) this thread reads a batch, encodes it and writes it,
    in turn. On more, or with ``overlap=True``, ``plan.threads`` native threads encode each
    batch while a reader thread reads the next one and a writer thread writes the previous one,
    across inputs (the next input is read while the last batch of one is written and its shards
    are finished). Reading and writing hold the GIL only briefly: pyarrow decodes, the native
    engine frames, and files are written and hashed with it released. ``overlap`` (default:
    when there is more than one thread) is for a caller that shares the cores with other
    processes, such as a Ray worker: its reading and writing may then run on a core another
    worker leaves idle.
    """
    encode = _Encoder(tok, plan, format_writer(plan.format))
    splitters: dict = {}  # unit → its splitter, while it is being written (writer side only)
    counts: dict = {}

    def jobs() -> Iterator[tuple]:
        for unit, item in todo:
            for batch in read_batches(item, column=plan.column, field=plan.field, on_error=plan.on_error,
                                      batch_bytes=plan.batch_bytes):
                yield unit, item, batch
            yield unit, item, None  # the end of the input

    def encoded(job: tuple) -> tuple:
        unit, item, batch = job
        return unit, item, batch, None if batch is None else encode.encode(batch)

    def write(job: tuple) -> None:
        unit, item, batch, result = job
        if unit not in splitters:
            splitters[unit] = _ShardSplitter(plan, unit, item)
            counts[unit] = {"documents": 0, "tokens": 0, "skipped": 0, "first_skipped": None}
        if batch is None:
            shards = splitters[unit].close()
            del splitters[unit]
            record = {**counts.pop(unit), "shards": shards}
            if complete is not None:
                complete(unit, record)
            return
        data, lengths = encode.frame(result)
        splitters[unit].add(data, lengths)
        tokens = sum(lengths)
        total = counts[unit]
        total["documents"] += len(lengths)
        total["tokens"] += tokens
        total["skipped"] += batch.skipped
        total["first_skipped"] = total["first_skipped"] or batch.first_skipped
        if report is not None:
            report(unit, len(lengths), tokens, batch.skipped, batch.text_bytes, batch.position)

    writer = None
    try:
        if overlap is None:
            overlap = work_threads(plan.threads) > 1
        if not overlap:
            for job in jobs():
                write(encoded(job))
        else:
            writer = _Background(write)
            for job in _prefetched(jobs()):
                writer.put(encoded(job))
            writer.close()
    except BaseException:
        # KeyboardInterrupt included: open shards' temporary files go; published shards are whole.
        if writer is not None:
            writer.abandon()
        for splitter in splitters.values():
            splitter.discard()
        raise


def encode_unit(tok, plan: Plan, unit: int, item: InputFile,
                report: Optional[Callable[[int, int, int, int, float], None]] = None,
                overlap: Optional[bool] = None) -> dict:
    """Encode one input into its shards (see :func:`encode_units`); returns its manifest record.

    ``report(documents, tokens, skipped, text_bytes, position)`` is called after each batch.
    """
    records = {}
    encode_units(tok, plan, [(unit, item)], None if report is None else lambda _, *counts: report(*counts),
                 lambda done, record: records.__setitem__(done, record), overlap)
    return records[unit]


class Manifest:
    """OUT/manifest.json: read, checked against this run, updated after each unit, written atomically."""

    def __init__(self, out_dir: str, header: dict, inputs: List[dict]) -> None:
        self.path = os.path.join(out_dir, MANIFEST)
        self.header = header
        self.inputs = inputs  # one record per input, in order; "complete" once its shards are published
        self.shards: dict = {}  # unit → its shard records

    def load_previous(self) -> set:
        """The units a previous run completed with these inputs and options, whose files are intact.

        Raises:
            WordsplitError: the directory holds a dataset made from other inputs or options.
        """
        if not os.path.exists(self.path):
            return set()
        try:
            with open(self.path, encoding="utf-8") as f:
                old = json.load(f)
        except ValueError as exc:
            raise DatasetInputError(
                f"{self.path} is not a wordsplit manifest ({exc}); delete it to start over"
            ) from None
        if not any(i.get("complete") for i in old.get("inputs", [])):
            return set()  # nothing finished: nothing to mix up, whatever the options were
        for key, value in self.header.items():
            if key != "wordsplit" and old.get(key) != value:
                raise DatasetInputError(
                    f"{self.path} was written with a different {key}: {old.get(key)!r}, now {value!r}; "
                    "choose another output directory, or delete it to start over"
                )
        old_inputs = [{k: i.get(k) for k in ("path", "kind", "bytes", "sha256")} for i in old.get("inputs", [])]
        if old_inputs != [{k: i[k] for k in ("path", "kind", "bytes", "sha256")} for i in self.inputs]:
            raise DatasetInputError(f"{self.path} was written for other inputs (files added, removed or changed); "
                                 "choose another output directory, or delete it to start over")
        done = set()
        by_unit: dict = {}
        for shard in old.get("shards", []):
            by_unit.setdefault(shard["input"], []).append(shard)
        for unit, record in enumerate(old["inputs"]):
            shards = by_unit.get(unit, [])
            if record.get("complete") and all(self._intact(s) for s in shards):
                self.inputs[unit] = record
                self.shards[unit] = shards
                done.add(unit)
        return done

    def _intact(self, shard: dict) -> bool:
        for f in shard["files"]:
            path = os.path.join(os.path.dirname(self.path), f["name"])
            if not os.path.isfile(path) or os.path.getsize(path) != f["bytes"] or file_sha256(path) != f["sha256"]:
                return False
        return True

    def complete(self, unit: int, record: dict) -> None:
        shards = record.pop("shards")
        self.inputs[unit].update(record, complete=True, shards=[s["name"] for s in shards])
        self.shards[unit] = shards
        self.write()

    def document(self) -> dict:
        shards = [s for unit in sorted(self.shards) for s in self.shards[unit]]
        done = [i for i in self.inputs if i.get("complete")]
        totals = {key: sum(i[key] for i in done) for key in ("documents", "tokens", "skipped")}
        return {**self.header, "inputs": self.inputs, "shards": shards, "totals": {**totals, "shards": len(shards)}}

    def write(self) -> None:
        tmp = f"{self.path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.document(), f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, self.path)


def _special_id(vocab, which: str, fallback_eos: bool) -> int:
    value = getattr(vocab, f"{which}_token_id")
    if value is None and fallback_eos:
        value = vocab.eos_token_id
    if value is None:
        raise advised(UnknownTokenError, f"the vocabulary {vocab.name!r} has no {which} token",
                      python=f"drop {which}=True", cli=f"drop --{which}")
    return value


def _positive(name: str, value) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise OptionTypeError(f"{name} must be a positive integer, not {value!r}")
    if value is not None and value < 1:
        raise OptionValueError(f"{name} must be a positive integer, not {value!r}")


def encode_dataset(
    inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    out_dir: Union[str, "os.PathLike[str]"],
    *,
    vocab,
    format: str,
    column: str = "text",
    field: str = "text",
    shard_tokens: Optional[int] = None,
    eos: bool = False,
    bos: bool = False,
    engine: str = "local",
    threads: Optional[int] = None,
    workers: Optional[int] = None,
    address: Optional[str] = None,
    on_error: str = "raise",
    progress: Optional[ProgressCallback] = None,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> DatasetSummary:
    """Encode the documents of many files into shards of a trainer's format, with a manifest.

    Args:
        inputs: files, directories or glob patterns of ``.parquet``, ``.jsonl[.gz]`` and text
            files (see :mod:`wordsplit.datasets.inputs` for what a document is).
        out_dir: the output directory (created); shards and ``manifest.json`` go there.
        vocab: a vocabulary name or path (as :func:`~wordsplit.load_vocab` takes), or a Vocab.
        format: ``"megatron"``, ``"nanogpt"``, ``"llmc"``, ``"datatrove"`` or ``"npy"`` (see
            :mod:`wordsplit.datasets.formats`).
        column: Parquet: the column holding the documents.
        field: JSONL: the field holding the documents.
        shard_tokens: cut a new shard before a document that would take it past this many
            tokens; None: one shard per input.
        eos: put the vocabulary's end-of-sequence id after each document.
        bos: put its beginning-of-sequence id (its end-of-sequence id when it has none, as
            GPT-2-style data does) before each document; always on for ``llmc``.
        engine: ``"local"`` (native threads on this machine) or ``"ray"`` (Ray Data; needs
            ``pip install 'wordsplit[ray]'``).
        threads: local: native threads (default: all cores); ray: threads per worker (default 1).
        workers: ray: encoding actors (default: the cluster's CPUs).
        address: ray: the cluster to join (default: a local Ray started for this call).
        on_error: ``"raise"`` at a bad document (naming file and row) or ``"skip"`` it
            (counted in the manifest).
        progress: called with a :class:`Progress` (totals over every worker) as work is done.
        batch_bytes: document text encoded per batch (memory per worker grows with it).

    Returns:
        A :class:`DatasetSummary`.

    Raises:
        DatasetInputError: an input that is missing or cannot be read, a bad document.
        UnknownTokenError: ``eos``/``bos`` with a vocabulary that has no such token.
        WordsplitError: a bad option, or ``out_dir`` holding a dataset of other inputs or options.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open(os.path.join(d, "docs.jsonl"), "w") as f:
    ...         _ = f.write('{"text": "hello world"}\\n{"text": "hi"}\\n')
    ...     summary = encode_dataset(os.path.join(d, "docs.jsonl"), os.path.join(d, "out"), vocab="gpt2",
    ...                              format="nanogpt", eos=True)
    ...     data = open(os.path.join(d, "out", "00000-docs.bin"), "rb").read()
    >>> summary.documents, summary.tokens, list(memoryview(data).cast("H"))
    (2, 5, [31373, 995, 50256, 5303, 50256])
    """
    from .. import TokenizerOptions, load_vocab
    from ..vocab import Vocab

    started = time.perf_counter()
    writer_class = format_writer(format)
    if engine not in ENGINES:
        raise OptionValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if on_error not in ON_ERROR:
        raise OptionValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    for name, value in (("shard_tokens", shard_tokens), ("threads", threads), ("workers", workers),
                        ("batch_bytes", batch_bytes)):
        _positive(name, value)
    if format in BOS_ALWAYS and eos:
        raise advised(OptionValueError, f"the {format} layout puts the delimiter token before each document already",
                      python="drop eos=True", cli="drop --eos")
    vocab_obj = vocab if isinstance(vocab, Vocab) else load_vocab(vocab)
    bos = bos or format in BOS_ALWAYS
    plan = Plan(
        out_dir=os.path.abspath(os.fspath(out_dir)), format=format, column=column, field=field,
        shard_tokens=shard_tokens, bos_id=_special_id(vocab_obj, "bos", True) if bos else None,
        eos_id=_special_id(vocab_obj, "eos", False) if eos else None, on_error=on_error,
        batch_bytes=batch_bytes, n_vocab=vocab_obj.n_vocab, vocab_name=vocab_obj.name, threads=threads,
    )
    # The output directory may sit inside an input directory: its files are never inputs.
    items = [i for i in expand_inputs(inputs)
             if not (i.path + os.sep).startswith(os.path.join(plan.out_dir, ""))]
    if not items:
        raise DatasetInputError(f"no inputs outside the output directory {os.fspath(out_dir)!r}")
    os.makedirs(plan.out_dir, exist_ok=True)
    header = {
        "wordsplit": __version__, "manifest_version": MANIFEST_VERSION, "format": format,
        "vocab": {"name": vocab_obj.name, "content_hash": vocab_obj.content_hash, "n_vocab": vocab_obj.n_vocab,
                  "dtype": writer_class.dtype_of(vocab_obj.n_vocab)},
        "options": plan.options(),
    }
    # The inputs' hashes on the local engine's threads (hashlib releases the GIL): on one
    # thread this is a pass over the inputs before the first batch, which nothing overlaps.
    hashers = min(len(items), work_threads(threads)) if engine == "local" else 1
    if hashers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(hashers, thread_name_prefix="wordsplit-hash") as pool:
            hashes = list(pool.map(file_sha256, [i.path for i in items]))
    else:
        hashes = [file_sha256(i.path) for i in items]
    records = [{"path": i.path, "kind": i.kind, "bytes": i.size, "sha256": h} for i, h in zip(items, hashes)]
    manifest = Manifest(plan.out_dir, header, records)
    done = manifest.load_previous()
    manifest.write()  # at once: an interrupted first run still says what it was
    todo = [(unit, item) for unit, item in enumerate(items) if unit not in done]
    state = Progress(total_bytes=sum(i.size for i in items), done_bytes=float(sum(items[u].size for u in done)))

    if engine == "local":
        tok = TokenizerOptions(num_threads=threads).build(vocab_obj)
        # Inputs finish in order: each one's progress counts from the bytes of those before it.
        base_bytes, start = {}, state.done_bytes
        for unit, item in todo:
            base_bytes[unit], start = start, start + item.size

        def report(unit, docs, toks, skipped, text_bytes, position):
            state.documents += docs
            state.tokens += toks
            state.skipped += skipped
            state.text_bytes += text_bytes
            state.done_bytes = base_bytes[unit] + position * items[unit].size
            state.elapsed = time.perf_counter() - started
            if progress is not None:
                progress(state)

        def complete(unit, record):
            manifest.complete(unit, record)
            state.done_bytes = base_bytes[unit] + items[unit].size

        encode_units(tok, plan, todo, report, complete)
    else:
        from .ray_engine import run_ray

        # Workers get the name (or the absolute path) and load it themselves, once each.
        spec = vocab_obj
        if isinstance(vocab, (str, os.PathLike)):
            spec = os.path.abspath(vocab) if os.path.exists(vocab) else os.fspath(vocab)
        run_ray(plan, spec, todo, manifest,
                workers=workers, address=address, progress=progress, state=state, started=started)
    document = manifest.document()
    totals = document["totals"]
    return DatasetSummary(
        out_dir=os.fspath(out_dir), manifest=os.path.join(os.fspath(out_dir), MANIFEST), format=format,
        inputs=len(items), resumed=len(done),
        shards=totals["shards"], documents=totals["documents"], tokens=totals["tokens"], skipped=totals["skipped"],
        seconds=time.perf_counter() - started,
    )
