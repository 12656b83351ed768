"""Engines: what a :class:`~wordsplit.tokenizer.Tokenizer` runs on, one per language.

Both engines have the same small interface, so that ``Tokenizer`` has no backend branches:

* ``encode(text, allowed, disallowed) -> list[int]`` and ``count(...) -> int``, where
  ``allowed`` / ``disallowed`` are the resolved special-token sets (:mod:`wordsplit.specials`);
* ``encode_batch(texts, allowed, disallowed, num_threads) -> list[list[int]]`` and
  ``encode_batch_flat(...) -> (ids, offsets)`` memoryviews of uint32 / uint64;
* ``decode_bytes(ids) -> bytes``, ``decode(ids, errors) -> str``,
  ``decode_batch(batch, errors, num_threads) -> list[str]``;
* ``bind(allowed, disallowed)``: an object whose ``encode``, ``encode_numpy`` and ``count`` of a
  text run under that policy, bound once (the tokenizer binds its common policies);
* ``native``: whether every stage runs natively (the GIL released while a text of 1 KB or more
  encodes, batches on threads).

:mod:`~wordsplit.engines.python` is the readable reference (and what ``explain`` traces);
:mod:`~wordsplit.engines.native` wraps the Rust core, calling Python components for the stages
it has no native implementation of. Both raise the same errors with the same messages.
"""

from __future__ import annotations

from .native import NativeEngine, build_native_engine
from .python import PythonEngine, build_python_engine

__all__ = ["NativeEngine", "PythonEngine", "build_native_engine", "build_python_engine"]
