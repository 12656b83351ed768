"""Without rich, encode-file's progress on a terminal is one line that rewrites itself with what
docs/encode-file.md describes: the bytes done of the total, MB/s and the time left."""

from __future__ import annotations

import functools
import io
import re
import sys

import pytest

import wordsplit.terminal
from wordsplit.cli import main
from wordsplit.terminal import PlainProgress


class Terminal(io.StringIO):
    """A stderr that says it is a terminal, and keeps what is written."""

    def isatty(self) -> bool:
        return True


def test_encode_file_without_rich_draws_bytes_mb_per_second_and_eta(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, a line of text\n" * 40_000)  # 1.1 MB
    monkeypatch.setattr(wordsplit.terminal, "have_rich", lambda: False)
    # Every update drawn (not every quarter of a second), so the test does not hang on timing.
    monkeypatch.setattr(wordsplit.terminal, "PlainProgress", functools.partial(PlainProgress, interval=0.0))
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(["encode-file", str(corpus), "--out", str(tmp_path / "out.bin"), "--vocab", "gpt2",
                 "--chunk-size", "64KiB", "--quiet"]) == 0  # --quiet: no bar at all
    assert stderr.getvalue() == ""
    assert main(["encode-file", str(corpus), "--out", str(tmp_path / "out.bin"), "--vocab", "gpt2",
                 "--chunk-size", "64KiB"]) == 0
    lines = [line.strip() for line in stderr.getvalue().split("\r") if line.strip()]
    progress = [line for line in lines if line.startswith("encoding: ")]
    assert progress[0] == "encoding: 0.0/1.1 MB", progress  # nothing done yet: no rate
    full = [line for line in progress if re.fullmatch(r"encoding: \d+\.\d/1\.1 MB \d+\.\d MB/s ETA \d:\d\d:\d\d", line)]
    assert len(full) >= 10, progress


def test_the_plain_line_without_a_total_or_before_any_time_passed():
    line, now = io.StringIO(), [10.0]
    bar = PlainProgress(stream=line, unit="bytes", clock=lambda: now[0])
    task = bar.add_task("encoding")
    bar.update(task, completed=3e6)  # no time has passed: no rate yet
    now[0] = 12.0
    bar.update(task, completed=5e6)
    drawn = [part.strip() for part in line.getvalue().split("\r") if part.strip()]
    assert drawn == ["encoding: 3.0 MB", "encoding: 5.0 MB 2.5 MB/s"]
    with pytest.raises(ValueError, match="unit"):
        PlainProgress(unit="tokens")
