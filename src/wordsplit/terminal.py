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


def clock_time(seconds: float) -> str:
    """``seconds`` as H:MM:SS, as rich's time columns show it.

    >>> clock_time(0.4), clock_time(3725)
    ('0:00:00', '1:02:05')
    """
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class PlainTask:
    """One task of :class:`PlainProgress`: the fields a rich task has that callers read."""

    def __init__(self, description: str, total: Optional[float], fields: dict,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.description = description
        self.total = total
        self.completed = 0
        self.fields = fields
        self._clock = clock
        self.started = clock()

    @property
    def elapsed(self) -> float:
        return self._clock() - self.started


class PlainProgress:
    r"""The part of ``rich.progress.Progress`` that wordsplit uses (``add_task``, ``update``,
    ``tasks``, a context manager), drawn as one line on ``stream`` rewritten in place at most
    every ``interval`` seconds: ``encoding: 1,048,576 47.2 MB/s`` (the count, then the task's
    fields). With ``unit="bytes"`` the count is of bytes, drawn as rich's download columns
    draw it: done and total in MB, the rate, and the time left when the total is known
    (``encoding: 19.9/47.2 MB 23.3 MB/s ETA 0:00:02``).

    >>> import io
    >>> line, now = io.StringIO(), [0.0]
    >>> with PlainProgress(stream=line, unit="bytes", clock=lambda: now[0]) as bar:
    ...     task = bar.add_task("encoding", total=50e6)
    ...     now[0] = 2.0  # two seconds later, 20 of 50 MB are done
    ...     bar.update(task, completed=20e6)
    >>> line.getvalue().split("\r")[-1]
    'encoding: 20.0/50.0 MB 10.0 MB/s ETA 0:00:03\n'
    """

    def __init__(self, *, stream: Optional[TextIO] = None, transient: bool = False, interval: float = 0.25,
                 unit: Optional[str] = None, clock: Callable[[], float] = time.monotonic) -> None:
        if unit not in (None, "bytes"):
            raise ValueError(f"unit is None or 'bytes', not {unit!r}")
        self.stream = sys.stderr if stream is None else stream
        self.transient = transient
        self.interval = interval
        self.unit = unit
        self.clock = clock
        self.tasks: list[PlainTask] = []
        self._drawn = float("-inf")
        self._width = 0

    def add_task(self, description: str, total: Optional[float] = None, **fields) -> int:
        if self.tasks:
            self._draw(force=True)
            self.stream.write("\n")  # the previous task's line stays
            self._width = 0
        self.tasks.append(PlainTask(description, total, fields, self.clock))
        return len(self.tasks) - 1

    def update(self, task_id: int, *, advance: float = 0, completed: Optional[float] = None, total=None,
               **fields) -> None:
        task = self.tasks[task_id]
        task.completed = completed if completed is not None else task.completed + advance
        if total is not None:
            task.total = total
        task.fields.update(fields)
        self._draw()

    def _count(self, task: PlainTask) -> str:
        """The task's count: done (and total), and for bytes the rate and the time left."""
        if self.unit != "bytes":
            return f"{task.completed:,.0f}" + (f"/{task.total:,.0f}" if task.total else "")
        done = f"{task.completed / 1e6:.1f}" + (f"/{task.total / 1e6:.1f}" if task.total else "") + " MB"
        elapsed = task.elapsed
        if elapsed <= 0 or task.completed <= 0:
            return done
        rate = task.completed / elapsed
        eta = f" ETA {clock_time(max(task.total - task.completed, 0) / rate)}" if task.total else ""
        return f"{done} {rate / 1e6:.1f} MB/s{eta}"

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if not self.tasks or (not force and now - self._drawn < self.interval):
            return
        self._drawn = now
        task = self.tasks[-1]
        done = self._count(task)
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


def progress_bars(columns: Callable[[object], list], *, transient: bool, plain_unit: Optional[str] = None):
    """Progress bars on stderr: ``rich``'s, with the columns ``columns(rich.progress)`` makes,
    or a :class:`PlainProgress` line (counting ``plain_unit``) when rich is not installed."""
    if not have_rich():
        return PlainProgress(transient=transient, unit=plain_unit)
    import rich.progress
    from rich.console import Console

    return rich.progress.Progress(*columns(rich.progress), console=Console(file=sys.stderr), transient=transient)
