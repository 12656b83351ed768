"""The Rust core as the package reaches it: the one module that imports ``wordsplit._native``.

The extension is optional: every component has a Python implementation, and ``backend="python"``
always works. :func:`extension` gives the compiled module, or None when it is not built (or is
switched off, :func:`switched_off`); the code that has a native path asks it first. What the
module holds mirrors the bindings crate (``crates/wordsplit-py/src``), one Rust file per concept:

=================  ===================================================  ==========================
bindings file      what Python calls                                    through
=================  ===================================================  ==========================
``tables.rs``      ``MergeTables``, ``first_bad_merge``                 ``vocab``
``pipeline.rs``    ``Pipeline``, ``offset_pairs``                       ``engines.native``
``stages.rs``      ``has_native_normalizer``                            ``engines.native``
``regex.rs``       ``regex_plan``, ``hf_program_spans``                 ``engines.native``
``train.rs``       ``WordCounter``                                      ``engines.native``
``formats.rs``     ``sentencepiece_model``, ``score_merge_pairs``,      ``formats.native``
                   ``rank_pairs``, ``gguf_scan_head``,
                   ``gguf_metadata``, ``gemma4_merge_pairs``,
                   ``PackedStrings``
=================  ===================================================  ==========================

Those three modules are the only ones that call this one (``tests/test_layout.py`` checks it):
the rest of the package asks them (``offsets`` gets its pairs from the native engine's places,
``options`` asks :func:`wordsplit.engines.native.built`, training the engine's word counter).

>>> extension() is None or hasattr(extension(), "Pipeline")
True
>>> with switched_off():
...     extension() is None
True
"""

from __future__ import annotations

import contextlib
from types import ModuleType
from typing import Iterator, Optional

__all__ = ["available", "extension", "switched_off"]

_off = 0  # how many switched_off() blocks are open


def extension() -> Optional[ModuleType]:
    """The compiled core ``wordsplit._native``, or None when it is not built or switched off
    (imported on first use, not at the package's import: it is optional)."""
    if _off:
        return None
    try:
        from . import _native
    except ImportError:
        return None
    return _native


def available() -> bool:
    """Whether the compiled core is there to use."""
    return extension() is not None


@contextlib.contextmanager
def switched_off() -> Iterator[None]:
    """Run the package's Python paths only, as without the extension, inside the block (for
    tests of the fallbacks; objects made before it keep their native parts)."""
    global _off
    _off += 1
    try:
        yield
    finally:
        _off -= 1
