"""TokenizerOptions: *how* to tokenize (which spanner, encoder, backend, threads).

The vocabulary says *what* (ranks, pattern, specials, normalizer); the options pick the
implementation. They are a frozen, keyword-only dataclass: change one with
``dataclasses.replace(opts, encoder="backtrack")``.

Defaults (defined once, here): ``spanner="auto"``, ``encoder="auto"``, ``backend="auto"``,
``num_threads=None`` (all cores; at most ``MAX_THREADS`` = 256). ``"auto"`` picks the fastest
correct implementation: the native core when the extension is built; the hand-written scanner
registered for the vocabulary's exact pattern, else the ``regex`` spanner; natively,
buffer-sweep for short pieces and backtrack for long ones, and ``heap-merge`` on the Python
backend. ``WORDSPLIT_BACKEND=python`` in the environment forces the Python backend.

>>> from wordsplit import load_vocab
>>> TokenizerOptions(backend="python", encoder="backtrack").build(load_vocab("qwen3")).encode("hello")
[14990]
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from .encoders import BYTE_LEVEL_ENCODERS, ENCODERS, encoder_for
from .errors import BackendUnavailableError, UnsupportedTokenizerError, unknown_name
from .spanners import SPANNERS, spanner_for
from .spec import NoDecoder, SentencePieceDecoder, WordPieceDecoder
from .tokenizer import Tokenizer, check_num_threads
from .vocab import Vocab

DEFAULT_SPANNER = "auto"
DEFAULT_ENCODER = "auto"
DEFAULT_BACKEND = "auto"
BACKENDS = ("auto", "native", "python")
BACKEND_ENV = "WORDSPLIT_BACKEND"
# What "auto" means for the encoder. Native: buffer-sweep for pieces up to 16 KiB (above
# 128 bytes sweeping blocks of ranks, O(n·√n)), except runs of one character over 128 bytes,
# which go to backtrack once its tables are built (a run over 4 KB, or 256 KB of them,
# builds them); backtrack above 16 KiB (linear; heap-merge for pair-ranked vocabs), all exact.
# Python: heap-merge, never quadratic and needing no extra tables. For the spanner: see
# TokenizerOptions.spanner_name.
NATIVE_AUTO_ENCODER = "auto"
PYTHON_AUTO_ENCODER = "heap-merge"


@dataclass(frozen=True, kw_only=True)
class TokenizerOptions:
    """How to build a :class:`~wordsplit.tokenizer.Tokenizer` from a vocabulary.

    Args:
        spanner: a registered spanner (``"regex"``, a scanner such as ``"cl100k-scanner"``, or
            a plug-in's) or ``"auto"``: the spanner registered for the vocabulary's exact
            pattern, else ``"regex"``.
        encoder: a registered encoder (``"buffer-sweep"`` alias ``"reference"``,
            ``"heap-merge"``, ``"backtrack"``, or a plug-in's) or ``"auto"``.
        backend: ``"auto"`` (native when built), ``"native"`` or ``"python"``.
        num_threads: threads for the batch methods (None: all cores); an int of at least 1,
            and above ``MAX_THREADS`` (256) the batch methods use 256.

    Raises:
        UnknownComponentError: an unknown name (the message lists the known ones).
        OptionTypeError, OptionValueError: ``num_threads`` is not an int, or below 1.
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
        check_num_threads(self.num_threads)

    def resolved_backend(self) -> str:
        """The backend ``build`` will use: ``"auto"`` is native when built, unless the
        environment says ``WORDSPLIT_BACKEND=python``.

        Raises:
            BackendUnavailableError: ``backend="native"`` without the compiled extension.
            UnknownComponentError: ``WORDSPLIT_BACKEND`` is set to something other than
                ``auto``, ``native`` or ``python``.
        """
        if self.backend == "python":
            return "python"
        forced = os.environ.get(BACKEND_ENV, "").strip().lower()
        if forced not in ("", *BACKENDS):
            raise unknown_name(f"{BACKEND_ENV} value", forced, BACKENDS)
        if self.backend == "auto" and forced == "python":
            return "python"
        from .engines.native import built

        if built():
            return "native"
        if self.backend == "native":
            raise BackendUnavailableError(
                "backend='native' needs the compiled extension wordsplit._native, which is not built; "
                "install with `pip install -e .` (needs Rust) or use backend='python'"
            )
        return "python"

    def spanner_name(self, vocab: Vocab) -> str:
        """The spanner ``build`` will use: ``"auto"`` is the one that runs the vocabulary's
        spanner stage (for a regex, the scanner registered for its exact pattern, else the
        regex spanner)."""
        if self.spanner == "auto":
            return spanner_for(vocab.pipeline.spanner) or "regex"
        return SPANNERS.canonical(self.spanner)

    def encoder_name(self, backend: str, vocab: Optional[Vocab] = None) -> str:
        """The encoder ``build`` will use on ``backend`` (``"auto"`` is native's own strategy,
        heap-merge on the Python backend; for a vocabulary whose model needs its own encoder,
        SentencePiece's ``score-merge``, that one).

        Raises:
            UnsupportedTokenizerError: a byte-level encoder named for such a vocabulary.
        """
        required = encoder_for(vocab) if vocab is not None else None
        if self.encoder != "auto":
            name = ENCODERS.canonical(self.encoder)
            if required is not None and name in BYTE_LEVEL_ENCODERS:
                raise UnsupportedTokenizerError(
                    f"encoder {name!r} runs byte-level BPE; {vocab.name} is {_model_words(vocab.pipeline.model)}, "
                    f"which the {required!r} encoder runs: use encoder={required!r} (or 'auto')"
                )
            return name
        if required is not None:
            return required
        return NATIVE_AUTO_ENCODER if backend == "native" else PYTHON_AUTO_ENCODER

    def build(self, vocab: Vocab) -> Tokenizer:
        """A tokenizer for ``vocab`` with these options.

        Raises:
            UnknownComponentError: an unknown spanner, encoder or backend name.
            UnsupportedTokenizerError: a component that cannot handle this vocabulary.
            BackendUnavailableError: ``backend="native"`` without the extension.
        """
        from .engines import build_native_engine, build_python_engine

        backend = self.resolved_backend()
        spanner, encoder = self.spanner_name(vocab), self.encoder_name(backend, vocab)
        build_engine = build_native_engine if backend == "native" else build_python_engine
        engine = build_engine(vocab, spanner, encoder)
        if isinstance(vocab.pipeline.decoder, SentencePieceDecoder):  # decoded as sentencepiece decodes
            from .engines.sentencepiece import SentencePieceEngine

            engine = SentencePieceEngine(engine, vocab, spanner, encoder)
        elif isinstance(vocab.pipeline.decoder, (WordPieceDecoder, NoDecoder)):  # tokens joined by its rules
            from .engines.decoding import TextDecodingEngine

            engine = TextDecodingEngine(engine, vocab)
        return Tokenizer(vocab, options=self, engine=engine, spanner=spanner, encoder=encoder, backend=backend)


def plugin_modules(spanner: str, encoder: str) -> tuple[str, ...]:
    """The modules outside wordsplit that the named spanner and encoder come from (importing
    them registers the components again in a fresh process, e.g. when unpickling)."""
    components = [SPANNERS.get(spanner)] + ([] if encoder == "auto" else [ENCODERS.get(encoder)])
    modules = {getattr(c, "__module__", None) for c in components}
    return tuple(sorted(m for m in modules if m and m != "__main__" and not m.startswith("wordsplit.")))


def _model_words(model) -> str:
    """What a vocabulary's model stage is, for the message that a byte-level encoder cannot run it.

    >>> from wordsplit.spec import CharacterBpe
    >>> _model_words(CharacterBpe(end_of_word_suffix="</w>"))
    "a CharacterBpe model (HF's BPE over each piece's characters, with the end-of-word suffix '</w>')"
    """
    from .spec import CharacterBpe, Unigram, WordLevel, WordPiece

    if isinstance(model, CharacterBpe):
        affixes = [f"the {what} {value!r}" for what, value in (
            ("end-of-word suffix", model.end_of_word_suffix),
            ("continuing-subword prefix", model.continuing_subword_prefix)) if value]
        unit = "bytes" if model.byte_level else "characters"
        return (f"a CharacterBpe model (HF's BPE over each piece's {unit}"
                + "".join(f", with {affix}" for affix in affixes) + ")")
    if isinstance(model, WordPiece):
        return "a WordPiece model (the longest token at each place of a word)"
    if isinstance(model, WordLevel):
        return "a WordLevel model (each word looked up whole)"
    if isinstance(model, Unigram):
        return "a Unigram model (the segmentation of highest total score)"
    if getattr(model, "merge_by", "score") == "rank":
        return "SentencePiece-style BPE (characters merged by the file's merge ranks, byte fallback first)"
    return "SentencePiece BPE (characters merged by piece score)"
