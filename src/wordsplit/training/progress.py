"""Progress bars for training, on stderr: characters counted (per second), then merges (merges/s, ETA).

A disabled :class:`Progress` does nothing and imports nothing (rich is imported only when a bar
is drawn; without rich, a plain line on stderr: :mod:`wordsplit.terminal`).

>>> with Progress(enabled=False) as bars:
...     bars.counted(10)
...     bars.start_merging(300)
...     bars.merged(260, 300)
"""

from __future__ import annotations

class Progress:
    """Two bars on stderr when ``enabled``: counting (no total) and merging (to vocab_size)."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._rich = None
        self._count_task = None
        self._merge_task = None
        self._start_tokens = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from ..terminal import progress_bars

            self._rich = progress_bars(lambda rp: [
                rp.TextColumn("{task.description}"), rp.BarColumn(), rp.TaskProgressColumn(),
                rp.MofNCompleteColumn(), rp.TextColumn("{task.fields[rate]}"), rp.TimeElapsedColumn(),
                rp.TimeRemainingColumn()], transient=False)
            self._rich.__enter__()
            self._count_task = self._rich.add_task("counting words", total=None, rate="")
        return self

    def counted(self, n_chars: int) -> None:
        """``n_chars`` more characters of the corpus have been counted."""
        if self._rich is not None:
            self._rich.update(self._count_task, advance=n_chars)

    def start_merging(self, vocab_size: int) -> None:
        """Counting is done; the merge bar runs to ``vocab_size`` tokens."""
        if self._rich is not None:
            task = self._rich.tasks[0]
            rate = f"{task.completed / task.elapsed / 1e6:.1f} M chars/s" if task.elapsed else ""
            self._rich.update(self._count_task, total=task.completed, rate=rate)
            self._merge_task = self._rich.add_task("learning merges", total=vocab_size, rate="")

    def merged(self, n_tokens: int, vocab_size: int) -> None:
        """The vocabulary has ``n_tokens`` tokens."""
        if self._rich is None or self._merge_task is None:
            return
        task = self._rich.tasks[self._merge_task]
        if self._start_tokens is None:
            self._start_tokens = n_tokens
        elapsed = task.elapsed or 0.0
        merged = n_tokens - self._start_tokens
        rate = f"{merged / elapsed:,.0f} merges/s" if merged and elapsed > 0 else ""
        self._rich.update(self._merge_task, completed=n_tokens, rate=rate)

    def __exit__(self, *exc) -> None:
        if self._rich is not None:
            self._rich.__exit__(*exc)
