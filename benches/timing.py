"""How a contender's work is run and timed: the same code in the benchmark process and in a
baseline worker (``worker.py``), so an older wordsplit build in its own process is timed
exactly as the contenders in this one.

A :class:`Runner` holds named data (documents, id lists) put into it once, then runs one
pass of work over it per call and returns the seconds it took on both clocks: wall time
(``time.perf_counter``) and this process's CPU time (``time.process_time``, every thread).
:class:`RemoteRunner` (``builds.py``) has the same methods and forwards them to a worker.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable, Optional

from contenders import Contender

# Encoded once by every contender before anything is timed: what a library sets up once per
# process on its first call (gigatoken: 0.05-0.25 s; class tables) belongs to the load-time
# section, which times it, not to the bytes of a corpus.
WARM_UP = "Hello, wörld! 123 Ελλάδα 中文 \n"


def fresh(text: str) -> str:
    """A new ``str`` equal to ``text``, without the UTF-8 copy CPython keeps in a ``str`` once a
    library has asked for its UTF-8 (``PyUnicode_AsUTF8AndSize``, as PyO3's ``to_str`` does).

    Contenders that take turns over the same documents would otherwise share that copy: on a
    non-ASCII document (a quarter of the prose corpus) the first contender of a block pays the
    conversion and the ones after it read the cached copy, while a library that converts by
    itself pays every time. Each contender gets fresh copies (made outside the timed span), so
    each pays the conversion once per document, as a job that encodes each document once does.
    """
    return (text + " ")[:-1]


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call, after a garbage collection so no earlier garbage is
    billed. (CPU time counts every thread of this process.) The result is dropped inside the
    timed span, so freeing it is billed too."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _run(fn: Callable[[], Any], keep: bool, collect: bool) -> tuple[Any, float, float]:
    """``fn()`` timed on both clocks; its result is returned if ``keep``, else dropped inside
    the timed span (as :func:`timed` does)."""
    if collect:
        gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    if keep:
        result = fn()
    else:
        fn()
        result = None
    return result, time.perf_counter() - wall, time.process_time() - cpu


class Runner:
    """Runs one contender's passes in this process.

    ``put(tag, items)`` stores a list (documents, or id lists for :meth:`decode`) under
    ``tag``; the other methods work on a stored list and return ``(result or None, wall s,
    CPU s)``. ``keep=False`` times the pass as :func:`timed` does (its output freed inside the
    timed span) and returns no output; ``keep=True`` returns the output for a parity check.
    ``collect``: a garbage collection first (outside the timed span).
    """

    def __init__(self, contender: Contender) -> None:
        self.contender = contender
        self.data: dict[str, list] = {}

    def put(self, tag: str, items: list) -> None:
        self.data[tag] = items

    def _subset(self, tag: str, indices: Optional[list[int]]) -> list:
        items = self.data[tag]
        return items if indices is None else [items[i] for i in indices]

    def encode(self, tag: str, indices: Optional[list[int]] = None, keep: bool = False,
               collect: bool = True) -> tuple[Optional[list[list[int]]], float, float]:
        """One ``encode`` call per document of ``tag`` (or of its ``indices``)."""
        docs, encode = self._subset(tag, indices), self.contender.encode
        return _run(lambda: [encode(doc) for doc in docs], keep, collect)

    def batch(self, tag: str, threads: int, keep: bool = False) -> tuple[Optional[list[list[int]]], float, float]:
        """One ``encode_batch`` call over all documents of ``tag`` on ``threads`` threads; kept
        output is converted to ``list[list[int]]`` after the timed span."""
        docs, batch = self.data[tag], self.contender.encode_batch
        result, wall, cpu = _run(lambda: batch(docs, threads), keep, True)
        return (self.contender.batch_ids(result) if keep else None), wall, cpu

    def decode(self, tag: str, keep: bool = False) -> tuple[Optional[list[str]], float, float]:
        """One ``decode`` call per id list of ``tag``."""
        id_lists, decode = self.data[tag], self.contender.decode
        return _run(lambda: [decode(ids) for ids in id_lists], keep, True)

    def repeat(self, text: str, calls: int) -> tuple[list[int], float, float]:
        """``calls`` encode calls of ``text``; the ids of the last one (outside the timed span)."""
        encode = self.contender.encode
        _, wall, cpu = _run(lambda: [encode(text) for _ in range(calls)], False, True)
        return encode(text), wall, cpu
