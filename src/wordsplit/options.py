"""TokenizerOptions: *how* to tokenize (which spanner, encoder, backend, threads).

The vocabulary says *what* (ranks, pattern, specials, normalizer); the options pick the
implementation. They are a frozen, keyword-only dataclass: change one with
``dataclasses.replace(opts, encoder="backtrack")``.

Defaults (defined once, here): ``spanner="auto"``, ``encoder="auto"``, ``backend="auto"``,
``num_threads=None`` (all cores). ``"auto"`` picks the fastest correct implementation: the
native core when the extension is built, else Python's ``regex`` spanner and ``heap-merge``
encoder. ``WORDSPLIT_BACKEND=python`` in the environment forces the Python backend.

>>> from wordsplit import load_vocab
>>> TokenizerOptions(backend="python", encoder="backtrack").build(load_vocab("qwen3")).encode("hello")
[14990]
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from .encoders import ENCODERS, MergeTables
from .errors import unknown_name
from .normalizers import get_normalizer
from .spanners import SPANNERS
from .tokenizer import Tokenizer
from .vocab import Vocab

DEFAULT_SPANNER = "auto"
DEFAULT_ENCODER = "auto"
DEFAULT_BACKEND = "auto"
BACKENDS = ("auto", "python")
# What "auto" means on the Python backend: heap-merge is never quadratic, unlike buffer-sweep.
PYTHON_AUTO_ENCODER = "heap-merge"
PYTHON_AUTO_SPANNER = "regex"


@dataclass(frozen=True, kw_only=True)
class TokenizerOptions:
    """How to build a :class:`~wordsplit.tokenizer.Tokenizer` from a vocabulary.

    Args:
        spanner: a spanner name (``"regex"``) or ``"auto"``.
        encoder: ``"buffer-sweep"`` (alias ``"reference"``), ``"heap-merge"``, ``"backtrack"``
            or ``"auto"``.
        backend: ``"auto"`` or ``"python"``.
        num_threads: threads for the batch methods (None: all cores).
    """

    spanner: str = DEFAULT_SPANNER
    encoder: str = DEFAULT_ENCODER
    backend: str = DEFAULT_BACKEND
    num_threads: Optional[int] = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise unknown_name("backend", self.backend, BACKENDS)
        if self.encoder != "auto":
            ENCODERS.canonical(self.encoder)
        if self.spanner != "auto":
            SPANNERS.canonical(self.spanner)
        if self.num_threads is not None and (not isinstance(self.num_threads, int) or self.num_threads < 1):
            raise ValueError(f"num_threads must be a positive int or None, not {self.num_threads!r}")

    def resolved_backend(self) -> str:
        """The backend ``build`` will use, after ``"auto"`` and ``WORDSPLIT_BACKEND``."""
        if self.backend == "auto":
            return "python"
        return self.backend

    def build(self, vocab: Vocab) -> Tokenizer:
        """A tokenizer for ``vocab`` with these options.

        Raises:
            UnknownComponentError: an unknown spanner, encoder or backend name.
            UnsupportedTokenizerError: a component that cannot handle this vocabulary.
        """
        spanner_name = PYTHON_AUTO_SPANNER if self.spanner == "auto" else SPANNERS.canonical(self.spanner)
        encoder_name = PYTHON_AUTO_ENCODER if self.encoder == "auto" else ENCODERS.canonical(self.encoder)
        spanner = SPANNERS.get(spanner_name)(vocab.pattern)
        encoder = ENCODERS.get(encoder_name)(_tables(vocab))
        return Tokenizer(
            vocab, spanner=spanner, encoder=encoder, normalize=get_normalizer(vocab.normalizer),
            backend=self.resolved_backend(), num_threads=self.num_threads,
        )


_TABLES: dict[str, MergeTables] = {}


def _tables(vocab: Vocab) -> MergeTables:
    """One MergeTables per vocabulary content, shared by every tokenizer built on it."""
    key = vocab.content_hash
    if key not in _TABLES:
        _TABLES[key] = MergeTables(vocab)
    return _TABLES[key]
