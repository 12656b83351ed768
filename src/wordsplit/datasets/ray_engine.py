"""The ``ray`` engine of :func:`~wordsplit.datasets.encode_dataset`: the same units, on a Ray cluster.

What runs where:

* **the driver** (where ``encode_dataset`` is called) lists and hashes the inputs, builds a
  Ray Data dataset with one row per input still to do, and records each finished input in
  ``manifest.json``. It never touches a token id.
* **each worker** is a Ray Data actor (``map_batches`` with an actor pool of ``workers``) in a
  worker process Ray starts for it, which imports Ray Data (and with it pandas and pyarrow) and
  wordsplit, and loads the vocabulary once (by name or path, from the bundled data or the
  node's disk cache; a ``Vocab`` object is pickled once per actor, never per task). Then for
  each input it is given it reads the file, encodes it on ``threads`` native threads and writes
  its shards (temporary files renamed into place) to the output directory, which must be one
  filesystem every node sees (NFS, Lustre, a FUSE mount of a bucket). It returns the input's
  manifest record: a few hundred bytes.
* a small **progress actor**, started only when progress is shown, sums the per-batch counts the
  workers send it (fire and forget);
  the driver polls it for the progress bar.
* **Ray Data's own actors** (stats, autoscaling coordinator, actor locations) are started by the
  first run on a cluster and stay; with no ``address``, the private local Ray's own processes
  (GCS, raylet and its Python daemons) run for the call and stop with it.

What a run costs before its first input: Ray Data ends a run's actors when it ends, and Ray
starts a fresh process for each new actor, so every run pays each actor's start-up (about 1.4
CPU seconds on a small machine: Ray's worker boot, then Ray Data's imports, which are most of
it, then wordsplit's and the vocabulary, a tenth of it), and a call with no ``address`` also
pays the local Ray's start and Ray Data's own actors. That is why small datasets are faster on
the ``local`` engine.

So the only things that cross the network are the input paths, the records, the progress
counts, and the files themselves through the shared filesystem. An input's output depends only
on the input and the options, which is why the bytes are the same as the ``local`` engine's
whatever the number of workers. It does not: split one input across workers (the unit of
parallelism is a file), or retry a failed input (re-run the command: it resumes).
"""

from __future__ import annotations

import glob
import importlib
import json
import logging
import os
import queue
import threading
import time
import warnings
from dataclasses import replace
from typing import Optional

from ..errors import WordsplitError
from .inputs import InputFile

POLL_SECONDS = 0.5


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise WordsplitError("engine='ray' needs Ray Data: pip install 'wordsplit[ray]'") from None
    return ray


def _error_record(unit: int, exc: BaseException) -> dict:
    kind = type(exc)
    return {"unit": unit, "record": "", "error_module": kind.__module__, "error_class": kind.__qualname__,
            "error": str(exc)}


def _raise_remote(row: dict) -> None:
    """Raise on the driver the error a worker met, as the same class when it can be imported."""
    message = row["error"]
    try:
        kind = getattr(importlib.import_module(row["error_module"]), row["error_class"])
        error = kind(message)
    except Exception:  # an exception class that cannot be rebuilt from its message
        error = WordsplitError(f"{row['error_class']}: {message}")
    raise error


class UnitEncoder:
    """The Ray Data actor: loads the vocabulary once, then encodes whole inputs into their shards."""

    def __init__(self, vocab, plan, progress) -> None:
        from .. import TokenizerOptions, load_vocab

        vocab = load_vocab(vocab) if isinstance(vocab, (str, os.PathLike)) else vocab
        self.tok = TokenizerOptions(num_threads=plan.threads).build(vocab)
        self.plan = plan
        self.progress = progress

    def __call__(self, batch: dict) -> dict:
        from .run import encode_unit

        rows = []
        for unit, path, kind, size in zip(batch["unit"], batch["path"], batch["kind"], batch["size"]):
            unit = int(unit)
            item = InputFile(path=str(path), kind=str(kind), size=int(size))

            def report(docs, toks, skipped, text_bytes, position, unit=unit):
                self.progress.add.remote(unit, docs, toks, skipped, text_bytes, position)

            try:
                record = encode_unit(self.tok, self.plan, unit, item, report if self.progress is not None else None,
                                     overlap=True)
            except Exception as exc:  # sent back whole: the driver raises it as the same class
                rows.append(_error_record(unit, exc))
                continue
            rows.append({"unit": unit, "record": json.dumps(record), "error_module": "", "error_class": "",
                         "error": ""})
        return {key: [row[key] for row in rows] for key in ("unit", "record", "error_module", "error_class", "error")}


class ProgressCounter:
    """The progress actor: sums what the workers report; the driver reads the totals."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0, 0]  # documents, tokens, skipped, text bytes
        self.positions: dict = {}

    def add(self, unit: int, docs: int, tokens: int, skipped: int, text_bytes: int, position: float) -> None:
        for i, value in enumerate((docs, tokens, skipped, text_bytes)):
            self.counts[i] += value
        self.positions[unit] = position

    def totals(self):
        return list(self.counts), dict(self.positions)


def run_ray(plan, vocab, todo, manifest, *, workers: Optional[int], address: Optional[str], progress, state,
            started: float) -> None:
    """Encode the ``(unit, InputFile)`` pairs of ``todo`` on Ray and record them in ``manifest``."""
    ray = _ray()
    own = False
    # Ray Data logs each execution's plan at INFO; the progress bar says what matters.
    loggers = [logging.getLogger(name) for name in ("ray", "ray.data")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    if address is not None:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    elif not ray.is_initialized():
        # A private local Ray on loopback only, without the dashboard.
        cpus = workers * (plan.threads or 1) if workers else os.cpu_count() or 1
        ray.init(num_cpus=cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
                 log_to_driver=False, configure_logging=False)
        own = True
    try:
        _run(ray, plan, vocab, todo, manifest, workers, progress, state, started)
    except BaseException:
        # Workers stopped mid-input leave temporary files (the inputs' final names were never
        # written): stop our own Ray's workers first, so none writes after the clean-up.
        if own:
            ray.shutdown()
        for unit, item in todo:
            for path in glob.glob(os.path.join(glob.escape(plan.out_dir), f"{unit:05d}-*.tmp-*")):
                try:
                    os.unlink(path)
                except OSError:
                    pass
        raise
    finally:
        if own:
            ray.shutdown()
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _run(ray, plan, vocab, todo, manifest, workers, progress, state, started) -> None:
    from ray.data import ActorPoolStrategy, DataContext

    if not todo:
        return
    context = DataContext.get_current()
    context.enable_progress_bars = False
    plan = replace(plan, threads=plan.threads or 1)
    if workers is None:  # as many as the cluster's CPUs hold, each taking `threads` of them
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)) // plan.threads)
    workers = min(workers, len(todo))
    # The progress actor is a process of its own: started only when someone shows the progress.
    counter = ray.remote(num_cpus=0)(ProgressCounter).remote() if progress is not None else None
    items = [{"unit": unit, "path": item.path, "kind": item.kind, "size": item.size} for unit, item in todo]
    sizes = {unit: item.size for unit, item in todo}
    base_bytes = state.done_bytes
    with warnings.catch_warnings():
        # Ray Data restarts a dead actor by default, which needs the constructor's arguments
        # from the object store (Ray Data puts them there), where they may be gone: Ray's core
        # logs an error line on every run (ray-project/ray#53727). Without restarts a dead
        # worker ends the run instead; complete inputs are kept and the same command resumes.
        # max_restarts has no named parameter yet: it goes through ray_remote_args, which
        # Ray 2.60 calls deprecated.
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
        dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            UnitEncoder, batch_size=1, compute=ActorPoolStrategy(size=workers), num_cpus=plan.threads,
            fn_constructor_kwargs={"vocab": vocab, "plan": plan, "progress": counter}, max_restarts=0,
        )
    results: queue.Queue = queue.Queue()
    end = object()

    def consume() -> None:
        try:
            for row in dataset.iter_rows():
                results.put((None, row))
            results.put((None, end))
        except BaseException as exc:
            results.put((exc, None))

    threading.Thread(target=consume, name="wordsplit-ray-results", daemon=True).start()
    finished: set = set()
    while True:
        try:
            error, row = results.get(timeout=POLL_SECONDS)
        except queue.Empty:
            error, row = None, None
        if error is not None:
            raise error
        if row is end:
            break
        if row is not None:
            if row["error"] or row["error_class"]:
                _raise_remote(row)
            unit = int(row["unit"])
            manifest.complete(unit, json.loads(row["record"]))
            finished.add(unit)
        if progress is not None:
            counts, positions = ray.get(counter.totals.remote())
            state.documents, state.tokens, state.skipped, state.text_bytes = counts
            state.done_bytes = base_bytes + sum(sizes[u] * (1.0 if u in finished else positions.get(u, 0.0))
                                                for u in sizes)
            state.elapsed = time.perf_counter() - started
            progress(state)
    if progress is not None:  # the exact totals: workers' last reports may still be on their way
        totals = manifest.document()["totals"]
        state.documents, state.tokens, state.skipped = totals["documents"], totals["tokens"], totals["skipped"]
        state.done_bytes = base_bytes + sum(sizes.values())
        state.elapsed = time.perf_counter() - started
        progress(state)
