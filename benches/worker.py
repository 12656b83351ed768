"""A contender in its own process: the baseline wordsplit build of ``bench.py --baseline``, or
a peer that needs another interpreter (HF tokenizers 1.x, in a virtual environment of its own).

    PYTHONPATH=BASELINE_ROOT python benches/worker.py KEY VOCAB EXPECTED_ROOT
    /path/to/venv/bin/python benches/worker.py KEY VOCAB -

Two packages named ``wordsplit`` cannot live in one process, so an older build is imported
here, from ``BASELINE_ROOT`` on ``PYTHONPATH``. The worker refuses to start unless the
``wordsplit`` it imported lives under ``EXPECTED_ROOT``, so an installed wordsplit cannot
stand in for the baseline silently. With ``-`` it imports no wordsplit (a peer's worker).

Protocol (binary, on stdin/stdout): each message is an 8-byte little-endian length and a
pickle. The parent sends ``(method, args)``, a :class:`timing.Runner` method name (``put``,
``encode``, ``batch``, ``decode``, ``repeat``) or ``info``/``exit``; the worker answers
``("ok", result)`` or ``("error", "Type: message")``. All timing happens in here with
:class:`timing.Runner`, the code that times the contenders of the parent process.
"""

from __future__ import annotations

import pickle
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

HEADER = struct.Struct("<Q")


def send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    """The next message; EOFError when the other side closed the pipe."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        raise EOFError("pipe closed")
    size = HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("pipe closed mid-message")
    return pickle.loads(data)


def main(argv: list[str]) -> None:
    key, vocab, expected_root = argv
    # The protocol owns stdout; anything a library prints goes to stderr instead.
    out, sys.stdout = sys.stdout.buffer, sys.stderr
    inp = sys.stdin.buffer
    where = None
    if expected_root != "-":
        import wordsplit

        where = Path(wordsplit.__file__).resolve()
        if Path(expected_root).resolve() not in where.parents:
            send(out, ("error", f"ImportError: wordsplit came from {where}, not from {expected_root}"))
            return
    from contenders import make_contender
    from timing import Runner

    try:
        runner = Runner(make_contender(key, vocab))
    except Exception as err:  # noqa: BLE001 -- reported to the parent, which says why
        send(out, ("error", f"{type(err).__name__}: {err}"))
        return
    info = {"label": runner.contender.label, "wordsplit": str(where.parent) if where else None,
            "python": sys.executable,
            "has_batch": runner.contender.encode_batch is not None,
            "has_decode": runner.contender.decode is not None}
    send(out, ("ok", info))
    while True:
        try:
            method, args = receive(inp)
        except EOFError:
            return
        if method == "exit":
            send(out, ("ok", None))
            return
        try:
            send(out, ("ok", getattr(runner, method)(*args)))
        except Exception as err:  # noqa: BLE001 -- the parent decides what a failure means
            send(out, ("error", f"{type(err).__name__}: {err}"))


if __name__ == "__main__":
    main(sys.argv[1:])
