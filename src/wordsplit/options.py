"""TokenizerOptions: *how* to tokenize (which spanner, encoder, backend, threads).

The vocabulary says *what* (ranks, pattern, specials, normalizer); the options pick the
implementation. They are a frozen, keyword-only dataclass: change one with
``dataclasses.replace(opts, encoder="backtrack")``.

Defaults (defined once, here): ``spanner="auto"``, ``encoder="auto"``, ``backend="auto"``,
``num_threads=None`` (all cores). ``"auto"`` picks the fastest correct implementation: the
native core when the extension is built; the hand-written scanner registered for the
vocabulary's exact pattern, else the ``regex`` spanner; natively, buffer-sweep for short
pieces and backtrack for long ones, and ``heap-merge`` on the Python backend. ``WORDSPLIT_BACKEND=python`` in the environment forces the Python backend.

>>> from wordsplit import load_vocab
>>> TokenizerOptions(backend="python", encoder="backtrack").build(load_vocab("qwen3")).encode("hello")
[14990]
"""

from __future__ import annotations

import functools
import os
import weakref
from dataclasses import dataclass
from typing import Optional

from .encoders import ENCODERS, MergeTables
from .errors import BackendUnavailableError, unknown_name
from .normalizers import get_normalizer
from .spanners import SPANNERS, scanner_for
from .spanners.scanners import check_scanner
from .tokenizer import Tokenizer
from .vocab import Vocab, native_module

DEFAULT_SPANNER = "auto"
DEFAULT_ENCODER = "auto"
DEFAULT_BACKEND = "auto"
BACKENDS = ("auto", "native", "python")
# What "auto" means for the encoder. Native: buffer-sweep for pieces up to 128 bytes (the
# fastest there), backtrack above (linear; heap-merge for pair-ranked vocabs, and for pieces
# up to 4 KB until a longer one, or 256 KB of them, has built the backtrack tables), all exact.
# Python: heap-merge, never quadratic and needing no extra tables. For the spanner: see
# TokenizerOptions.spanner_name.
NATIVE_AUTO_ENCODER = "auto"
PYTHON_AUTO_ENCODER = "heap-merge"


@dataclass(frozen=True, kw_only=True)
class TokenizerOptions:
    """How to build a :class:`~wordsplit.tokenizer.Tokenizer` from a vocabulary.

    Args:
        spanner: ``"regex"``, a scanner (``"cl100k-scanner"``, ``"o200k-scanner"``,
            ``"qwen2-scanner"``, ``"gpt2-scanner"``) or ``"auto"``.
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

    def spanner_name(self, vocab: Vocab) -> str:
        """The spanner ``build`` will use: ``"auto"`` is the scanner registered for the
        vocabulary's exact pattern, else the regex spanner."""
        if self.spanner == "auto":
            return scanner_for(vocab.pattern) or "regex"
        name = SPANNERS.canonical(self.spanner)
        if name != "regex":
            check_scanner(name, vocab.pattern)  # on either backend, before anything is built
        return name

    def build(self, vocab: Vocab) -> Tokenizer:
        """A tokenizer for ``vocab`` with these options.

        Raises:
            UnknownComponentError: an unknown spanner, encoder or backend name.
            UnsupportedTokenizerError: a component that cannot handle this vocabulary.
            BackendUnavailableError: ``backend="native"`` without the extension.
        """
        backend = self.resolved_backend()
        spanner_name = self.spanner_name(vocab)
        if self.encoder != "auto":
            encoder_name = ENCODERS.canonical(self.encoder)
        else:
            encoder_name = NATIVE_AUTO_ENCODER if backend == "native" else PYTHON_AUTO_ENCODER
        spanner_class = SPANNERS.get(spanner_name)
        pipeline = native_tables = None
        if backend == "native":
            native_tables = vocab.native_tables()
            encoder = native_module().Encoder(native_tables, encoder_name)
            if spanner_name != "regex":
                # Scanner + encoder + specials + NFC in one native call. The Python twin of the
                # spanner is then only built if someone asks for it (it costs a regex compile).
                literals = [(t, i, True) for t, i in vocab.special_tokens.items()]
                literals += [(t, i, False) for t, i in vocab.added_tokens.items()]
                pipeline = native_module().Pipeline(
                    native_tables, encoder_name, vocab.pattern, literals, vocab.normalizer == "nfc"
                )
        else:
            encoder = ENCODERS.get(encoder_name)(_tables(vocab))
        return Tokenizer(
            vocab, spanner=functools.partial(spanner_class, vocab.pattern), encoder=encoder,
            normalize=get_normalizer(vocab.normalizer), backend=backend, num_threads=self.num_threads,
            native_tables=native_tables, native_pipeline=pipeline, spanner_name=spanner_name,
        )


# One set of Python merge tables per Vocab object, shared by every tokenizer built on it
# (load_vocab caches registered vocabs, so they are built once per process), dropped with the
# Vocab. The native tables are kept by the Vocab itself (Vocab.native_tables).
_TABLES: "weakref.WeakKeyDictionary[Vocab, MergeTables]" = weakref.WeakKeyDictionary()


def _tables(vocab: Vocab) -> MergeTables:
    """The Python merge tables of ``vocab``."""
    tables = _TABLES.get(vocab)
    if tables is None:
        tables = _TABLES[vocab] = MergeTables(vocab)
    return tables
