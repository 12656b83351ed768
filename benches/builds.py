"""The wordsplit builds a run times: the snapshot of the build under test (a copy taken at start),
another build to compare with (``--baseline``), and each of them in a worker process of its own
(:class:`RemoteRunner`); and the peers that run in another interpreter, in a worker process
started with that interpreter (:func:`build_runners`)."""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Optional

from contenders import Contender, build_contenders, interpreter, shown
from passes import log
from timing import Runner
from worker import receive, send

HERE = Path(__file__).resolve().parent

BASELINE_KEY = "baseline"
# The build under test in a worker too: the baseline's twin, so the two are compared under the
# same conditions (a small worker process, not this one with every contender loaded); its
# ratio to wordsplit auto in this process shows what the process alone changes.
WORKER_KEY = "wordsplit:worker"
# PYTHONPATH as it was before the snapshot was put on it: a baseline's processes get the
# baseline's root in front of this instead, so they never see the snapshot.
ORIGINAL_PYTHONPATH_ENV = "WORDSPLIT_BENCH_PYTHONPATH"  # set by snapshot_wordsplit for child processes
ORIGINAL_PYTHONPATH = os.environ.get(ORIGINAL_PYTHONPATH_ENV, os.environ.get("PYTHONPATH"))


def unpack_build(source: Path, dest: Path) -> Path:
    """Put the ``wordsplit`` package of ``source`` (a wheel, a directory holding
    ``wordsplit/``, or a source tree holding ``src/wordsplit/``), with its built extension,
    into ``dest``; returns ``dest``, the root to put on ``PYTHONPATH``. Like the snapshot,
    it is a copy, compiled to bytecode (``--baseline``, ``--wordsplit``)."""
    if source.is_file() and source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            wheel.extractall(dest, [n for n in wheel.namelist() if n.startswith("wordsplit/")])
    else:
        package = next((p for p in (source / "wordsplit", source / "src" / "wordsplit")
                        if (p / "__init__.py").is_file()), None)
        if package is None:
            raise SystemExit(f"{source}: no wordsplit/ or src/wordsplit/ package there; "
                             "give a wheel or an unpacked one (see benches/README.md)")
        shutil.copytree(package, dest / "wordsplit", ignore=shutil.ignore_patterns("__pycache__"))
    if not list((dest / "wordsplit").glob("_native*.so")):
        raise SystemExit(f"{source}: wordsplit has no built extension (_native*.so); build a wheel "
                         "with `pip wheel --no-deps -w DIR SOURCE_TREE` (see benches/README.md)")
    compileall.compile_dir(dest / "wordsplit", quiet=1)
    return dest


def snapshot_wordsplit(dest: Path, build: Optional[Path] = None) -> str:
    """Copy the installed wordsplit package (with its built extension), or the one of
    ``build`` (``--wordsplit``: a wheel or a directory, as for ``--baseline``), into ``dest``
    and import it from there, in this process and its probes, so that a rebuild or an edit by
    someone else during the run cannot change the code halfway through. Returns the source."""
    if build is not None:
        unpack_build(build, dest)
        source = str(build)
    else:
        source = importlib.util.find_spec("wordsplit").submodule_search_locations[0]
        shutil.copytree(source, dest / "wordsplit", ignore=shutil.ignore_patterns("__pycache__"))
        # Bytecode, as `pip install` writes it (the peers are installed that way): without it, the
        # load-time probes would time compiling wordsplit's sources when PYTHONDONTWRITEBYTECODE is set.
        compileall.compile_dir(dest / "wordsplit", quiet=1)
    sys.path.insert(0, str(dest))
    os.environ.setdefault(ORIGINAL_PYTHONPATH_ENV, os.environ.get("PYTHONPATH", ""))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(dest), os.environ.get("PYTHONPATH")]))
    return str(source)


def baseline_env(root: Path) -> dict[str, str]:
    """The environment of a baseline process: its root first on ``PYTHONPATH``, no snapshot."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), ORIGINAL_PYTHONPATH]))
    return env


def peer_env(environ: dict[str, str]) -> dict[str, str]:
    """The environment of a peer's worker, run by the Python of the peer's own environment:
    ``environ`` without the ``site-packages`` (or ``dist-packages``) folders its ``PYTHONPATH``
    names, which belong to other environments and would load their packages over the peer's
    (HF tokenizers 0.23 over 1.x); its other folders stay.

    >>> peer_env({"PYTHONPATH": "src:/venv/lib/python3.11/site-packages", "HOME": "/h"})
    {'PYTHONPATH': 'src', 'HOME': '/h'}
    """
    kept = [entry for entry in environ.get("PYTHONPATH", "").split(os.pathsep)
            if entry and Path(entry).name not in ("site-packages", "dist-packages")]
    env = dict(environ)
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


class RemoteRunner:
    """A :class:`timing.Runner` in a worker process (``worker.py``): the same methods,
    forwarded over a pipe, timed inside the worker.

    By default the worker imports the wordsplit build under ``root`` (``TokenizerOptions()``
    defaults) and ``contender`` is labelled ``ws NAME (S+E)``; with ``python``, the worker is
    that interpreter running contender ``key`` (a peer in its own environment, no wordsplit;
    ``root`` and ``name`` unused) under the label it gives. ``contender`` stands for it in the
    measurement lists (key ``key``); its ``encode``/``decode``/``encode_batch`` work (one
    round trip per call) but the timed work goes through the runner methods."""

    def __init__(self, vocab: str, root: Optional[Path], name: str, key: str = BASELINE_KEY,
                 python: Optional[str] = None) -> None:
        if python is None:
            cmd, env = [sys.executable, str(HERE / "worker.py"), "wordsplit:auto", vocab, str(root)], baseline_env(root)
        else:
            cmd, env = [python, str(HERE / "worker.py"), key, vocab, "-"], peer_env(os.environ)
        self.what = f"worker {key} ({python or 'wordsplit ' + str(root)})"
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=HERE, env=env)
        except OSError as err:
            raise RuntimeError(f"{self.what}: {err}") from None
        info = self._reply()
        if python is None:
            label = f"ws {name}" + info["label"].removeprefix("ws auto")
            note = "the build under test" if key == WORKER_KEY else "the baseline"
        else:
            label, note = info["label"], f"run by {shown(python)}"
        self.contender = Contender(
            key=key, label=label, vocab=vocab, encode=lambda text: self.repeat(text, 1)[0],
            encode_batch=self._batch if info["has_batch"] else None,
            decode=self._decode if info["has_decode"] else None,
            notes=[f"{label}: {note}, in a worker process"])

    def _reply(self):
        try:
            status, value = receive(self.proc.stdout)
        except EOFError:
            raise RuntimeError(f"{self.what} exited with code {self.proc.wait()} (its error is above)") from None
        if status == "error":
            raise RuntimeError(f"{self.what}: {value}")
        return value

    def call(self, method: str, *args):
        send(self.proc.stdin, (method, args))
        return self._reply()

    def put(self, tag: str, items: list) -> None:
        self.call("put", tag, items)

    def encode(self, tag: str, indices: Optional[list[int]] = None, keep: bool = False, collect: bool = True):
        return self.call("encode", tag, indices, keep, collect)

    def batch(self, tag: str, threads: int, keep: bool = False):
        return self.call("batch", tag, threads, keep)

    def decode(self, tag: str, keep: bool = False):
        return self.call("decode", tag, keep)

    def repeat(self, text: str, calls: int):
        return self.call("repeat", text, calls)

    def _batch(self, texts: list[str], threads: int) -> list[list[int]]:
        self.put("_call", texts)
        return self.batch("_call", threads, keep=True)[0]

    def _decode(self, ids: list[int]) -> str:
        self.put("_call", [ids])
        return self.decode("_call", keep=True)[0][0]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.call("exit")
            self.proc.wait(timeout=60)


def start_workers(vocab: str, args, notes: list[str]) -> list[RemoteRunner]:
    """With ``--baseline``: the workers for ``vocab`` of the build under test (key
    ``WORKER_KEY``) and of the baseline (``BASELINE_KEY``), in that order; a worker that does
    not start is left out, with a note."""
    if not args.baseline:
        return []
    workers = []
    for root, name, key in ((args.current_root, "auto/worker", WORKER_KEY),
                            (args.baseline_root, f"{args.baseline_name}/worker", BASELINE_KEY)):
        try:
            workers.append(RemoteRunner(vocab, root, name, key))
        except RuntimeError as err:
            notes.append(f"{vocab}: worker {name} failed to start: {err}")
            log(f"  worker {name} for {vocab}: {err}")
    return workers


def build_runners(keys: list[str], vocab: str) -> tuple[list[Contender], dict, dict[str, str]]:
    """The contenders among ``keys`` that build for ``vocab``, a runner for each (keyed alike),
    and why the others did not build: a key whose :func:`contenders.interpreter` is another
    Python runs in a :class:`RemoteRunner` started with it, the others in this process.
    Close the remote runners when done (:func:`close_runners`)."""
    local = [k for k in keys if interpreter(k) is None]
    built, skipped = build_contenders(local, vocab)
    runners = {c.key: Runner(c) for c in built}
    for key in keys:
        if key in local:
            continue
        try:
            runners[key] = RemoteRunner(vocab, None, key, key, python=interpreter(key))
        except RuntimeError as err:
            skipped[key] = str(err)
    ordered = [k for k in keys if k in runners]
    return [runners[k].contender for k in ordered], {k: runners[k] for k in ordered}, skipped


def close_runners(runners) -> None:
    """Stop the worker processes among ``runners`` (a dict or list of runners)."""
    for runner in (runners.values() if isinstance(runners, dict) else runners):
        if isinstance(runner, RemoteRunner):
            runner.close()
