"""What the command line and the progress bars draw, with ``rich`` when it is installed
(``pip install 'wordsplit[cli]'``) and plainer without it: plain-text tables, and progress
lines that rewrite themselves on stderr instead of bars.

>>> print(plain_table(["vocab", "tokens"], [["qwen3", "2"], ["cl100k_base", "10"]], right={1}))
vocab        tokens
qwen3             2
cl100k_base      10
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Sequence, TextIO


def have_rich() -> bool:
    """Whether ``rich`` can be imported (colours, bars and boxed tables need it)."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: frozenset | set = frozenset()) -> str:
    """``rows`` under ``headers`` in columns two spaces apart, the columns numbered in ``right``
    aligned right, no trailing spaces (as rich draws a table without a box)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells) -> str:
        return "  ".join(str(cell).rjust(width) if i in right else str(cell).ljust(width)
                         for i, (cell, width) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join(line(cells) for cells in [headers, *rows])


class PlainTask:
    """One task of :class:`PlainProgress`: the fields a rich task has that callers read."""

    def __init__(self, description: str, total: Optional[float], fields: dict) -> None:
        self.description = description
        self.total = total
        self.completed = 0
        self.fields = fields
        self.started = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class PlainProgress:
    """The part of ``rich.progress.Progress`` that wordsplit uses (``add_task``, ``update``,
    ``tasks``, a context manager), drawn as one line on ``stream`` rewritten in place at most
    every ``interval`` seconds: ``encoding: 1,048,576 47.2 MB/s``."""

    def __init__(self, *, stream: Optional[TextIO] = None, transient: bool = False, interval: float = 0.25) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.transient = transient
        self.interval = interval
        self.tasks: list[PlainTask] = []
        self._drawn = 0.0
        self._width = 0

    def add_task(self, description: str, total: Optional[float] = None, **fields) -> int:
        if self.tasks:
            self._draw(force=True)
            self.stream.write("\n")  # the previous task's line stays
            self._width = 0
        self.tasks.append(PlainTask(description, total, fields))
        return len(self.tasks) - 1

    def update(self, task_id: int, *, advance: float = 0, completed: Optional[float] = None, total=None,
               **fields) -> None:
        task = self.tasks[task_id]
        task.completed = completed if completed is not None else task.completed + advance
        if total is not None:
            task.total = total
        task.fields.update(fields)
        self._draw()

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.tasks or (not force and now - self._drawn < self.interval):
            return
        self._drawn = now
        task = self.tasks[-1]
        done = f"{task.completed:,.0f}" + (f"/{task.total:,.0f}" if task.total else "")
        extra = " ".join(str(value) for value in task.fields.values() if value != "")
        text = f"{task.description}: {done} {extra}".rstrip()
        self.stream.write("\r" + text.ljust(self._width))
        self._width = len(text)
        self.stream.flush()

    def __enter__(self) -> "PlainProgress":
        return self

    def __exit__(self, *exc) -> None:
        if not self.tasks:
            return
        if self.transient:
            self.stream.write("\r" + " " * self._width + "\r")
        else:
            self._draw(force=True)
            self.stream.write("\n")
        self.stream.flush()


def progress_bars(columns: Callable[[object], list], *, transient: bool):
    """Progress bars on stderr: ``rich``'s, with the columns ``columns(rich.progress)`` makes,
    or a :class:`PlainProgress` line when rich is not installed."""
    if not have_rich():
        return PlainProgress(transient=transient)
    import rich.progress
    from rich.console import Console

    return rich.progress.Progress(*columns(rich.progress), console=Console(file=sys.stderr), transient=transient)
