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
from .errors import BackendUnavailableError, unknown_name
from .normalizers import get_normalizer
from .spanners import SPANNERS
from .tokenizer import Tokenizer
from .vocab import Vocab

DEFAULT_SPANNER = "auto"
DEFAULT_ENCODER = "auto"
DEFAULT_BACKEND = "auto"
BACKENDS = ("auto", "native", "python")
# What "auto" means: heap-merge is never quadratic, unlike buffer-sweep, and unlike backtrack
# needs no extra tables. (The spanner is the regex until the native scanners land.)
AUTO_ENCODER = "heap-merge"
AUTO_SPANNER = "regex"


def native_module():
    """The compiled core ``wordsplit._native``, or None when it is not built."""
    try:
        from . import _native
    except ImportError:
        return None
    return _native


@dataclass(frozen=True, kw_only=True)
class TokenizerOptions:
    """How to build a :class:`~wordsplit.tokenizer.Tokenizer` from a vocabulary.

    Args:
        spanner: a spanner name (``"regex"``) or ``"auto"``.
        encoder: ``"buffer-sweep"`` (alias ``"reference"``), ``"heap-merge"``, ``"backtrack"``
            or ``"auto"``.
        backend: ``"auto"`` (native when built), ``"native"`` or ``"python"``.
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
        """The backend ``build`` will use: ``"auto"`` is native when built, unless the
        environment says ``WORDSPLIT_BACKEND=python``.

        Raises:
            BackendUnavailableError: ``backend="native"`` without the compiled extension.
        """
        if self.backend == "python":
            return "python"
        if self.backend == "auto" and os.environ.get("WORDSPLIT_BACKEND", "").lower() == "python":
            return "python"
        if native_module() is not None:
            return "native"
        if self.backend == "native":
            raise BackendUnavailableError(
                "backend='native' needs the compiled extension wordsplit._native, which is not built; "
                "install with `pip install -e .` (needs Rust) or use backend='python'"
            )
        return "python"

    def build(self, vocab: Vocab) -> Tokenizer:
        """A tokenizer for ``vocab`` with these options.

        Raises:
            UnknownComponentError: an unknown spanner, encoder or backend name.
            UnsupportedTokenizerError: a component that cannot handle this vocabulary.
            BackendUnavailableError: ``backend="native"`` without the extension.
        """
        backend = self.resolved_backend()
        spanner_name = AUTO_SPANNER if self.spanner == "auto" else SPANNERS.canonical(self.spanner)
        encoder_name = AUTO_ENCODER if self.encoder == "auto" else ENCODERS.canonical(self.encoder)
        spanner = SPANNERS.get(spanner_name)(vocab.pattern)
        if backend == "native":
            tables = _native_tables(vocab)
            encoder = native_module().Encoder(tables, encoder_name)
        else:
            tables = None
            encoder = ENCODERS.get(encoder_name)(_tables(vocab))
        return Tokenizer(
            vocab, spanner=spanner, encoder=encoder, normalize=get_normalizer(vocab.normalizer),
            backend=backend, num_threads=self.num_threads, native_tables=tables,
        )


_TABLES: dict[str, MergeTables] = {}
_NATIVE_TABLES: dict[str, object] = {}


def _tables(vocab: Vocab) -> MergeTables:
    """One MergeTables per vocabulary content, shared by every tokenizer built on it."""
    key = vocab.content_hash
    if key not in _TABLES:
        _TABLES[key] = MergeTables(vocab)
    return _TABLES[key]


def _native_tables(vocab: Vocab):
    """One native ``Tables`` per vocabulary content (the Rust twin of MergeTables)."""
    key = vocab.content_hash
    if key not in _NATIVE_TABLES:
        merges = None if vocab.merges is None else [(l, r, rank) for (l, r), rank in vocab.merges.items()]
        extra = [(text.encode("utf-8"), i) for text, i in vocab.all_special_literals.items()]
        _NATIVE_TABLES[key] = native_module().Tables(
            list(vocab.ranks.items()), extra, vocab.n_vocab, merges, vocab.whole_piece_lookup
        )
    return _NATIVE_TABLES[key]
