r"""Text normalizers run before pre-tokenization, each exactly as HuggingFace ``tokenizers``
computes it: the runners of the normalizer stages of :mod:`wordsplit.spec`
(:func:`normalizer_for`), and the registry of plug-in normalizers.

One module per family: :mod:`~wordsplit.normalizers.unicode` (HF's Unicode forms with its
Unicode 9.0 data, ``Lowercase``, ``StripAccents``: one implementation of the algorithm, which
the offsets read too), :mod:`~wordsplit.normalizers.program` (HF's steps in sequence, each
character's alignment carried through) and :mod:`~wordsplit.normalizers.sentencepiece`
(SentencePiece's normalizer and HF's ``Metaspace``); :mod:`~wordsplit.normalizers.llamacpp`
(llama.cpp's own, for GGUF WordPiece and Unigram vocabularies). The Rust core's ``normalizers/``
has the same families but the last.

>>> from wordsplit.spec import Lowercase, Nfc, Nfkc, Sequence
>>> normalizer_for(Nfc())("Cafe\u0301") == "Caf\u00e9"
True
>>> normalizer_for(Sequence((Nfkc(), Lowercase())))("\ufb01X")
'fix'
"""

from __future__ import annotations

import functools
from typing import Callable

from .. import spec
from ..protocols import Normalizer
from ..registry import NORMALIZERS
from .unicode import WHITESPACE, identity, lowercase, nfc, nfd, nfkc, nfkd, strip_accents

# The families a vocabulary may not use are imported when one does (each module imported at
# the package's import costs a fraction of a millisecond): program, sentencepiece.
_LAZY = {"ProgramNormalizer": "program", "MetaspaceNormalizer": "sentencepiece",
         "SentencePieceNormalizer": "sentencepiece", "LlamaCppBertNormalizer": "llamacpp",
         "LlamaCppUnigramNormalizer": "llamacpp"}
_FORMS = {spec.Nfc: nfc, spec.Nfd: nfd, spec.Nfkc: nfkc, spec.Nfkd: nfkd}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "NORMALIZERS", "WHITESPACE", "LlamaCppBertNormalizer", "LlamaCppUnigramNormalizer", "MetaspaceNormalizer",
    "ProgramNormalizer", "SentencePieceNormalizer", "get_normalizer", "identity", "lowercase", "nfc", "nfd", "nfkc",
    "nfkd", "normalizer_for", "register_normalizer", "strip_accents",
]


def normalizer_for(stage: spec.Stage) -> Normalizer:
    """The function that runs a normalizer stage (a built-in one made once per stage: a
    program compiles its regexes); a plug-in's is the function registered under its name.

    Raises:
        UnknownComponentError: a plug-in name nothing registers.
        VocabFormatError, UnsupportedTokenizerError: a program's regex that does not compile.

    >>> from wordsplit.spec import Metaspace, PluginNormalizer
    >>> normalizer_for(Metaspace())("a b"), normalizer_for(PluginNormalizer("none"))("x")
    ('▁a▁b', 'x')
    """
    if isinstance(stage, spec.PluginNormalizer):
        return NORMALIZERS.get(stage.name)
    if isinstance(stage, spec.Metaspace) and isinstance(stage.before, spec.PluginNormalizer):
        from .sentencepiece import MetaspaceNormalizer

        return MetaspaceNormalizer(stage, normalizer_for(stage.before))
    return _built_in(stage)


@functools.lru_cache(maxsize=256)
def _built_in(stage: spec.Stage) -> Normalizer:
    if isinstance(stage, spec.NoNormalizer):
        return identity
    if type(stage) in _FORMS:
        return _FORMS[type(stage)]
    if isinstance(stage, (spec.SentencePieceNormalizer, spec.Metaspace)):
        from .sentencepiece import MetaspaceNormalizer, SentencePieceNormalizer

        if isinstance(stage, spec.SentencePieceNormalizer):
            return SentencePieceNormalizer(stage)
        return MetaspaceNormalizer(stage, normalizer_for(stage.before))
    if isinstance(stage, spec.LlamaCppBertNormalizer):
        from .llamacpp import LlamaCppBertNormalizer

        return LlamaCppBertNormalizer(stage)
    if isinstance(stage, spec.LlamaCppUnigramNormalizer):
        from .llamacpp import LlamaCppUnigramNormalizer

        return LlamaCppUnigramNormalizer(stage)
    from .program import ProgramNormalizer

    if isinstance(stage, spec.Sequence):
        return ProgramNormalizer(stage)
    return ProgramNormalizer(spec.Sequence((stage,)))  # another step alone: a program of one


NORMALIZERS.set_stage_runner(normalizer_for)


def register_normalizer(name: str) -> Callable[[Normalizer], Normalizer]:
    """Decorator: register ``fn(text: str) -> str`` as a normalizer, for ``Vocab(normalizer=name)``.

    The function runs on each stretch of text between special/added token literals, before
    the spanner. On the native backend it is called from the native engine with the GIL held
    (see docs/plugins.md for what such a mix costs).

    Raises:
        DuplicateNameError: ``name`` is taken.

    >>> @register_normalizer("casefold")
    ... def casefold(text):
    ...     return text.casefold()
    >>> get_normalizer("casefold")("Straße")
    'strasse'
    >>> _ = NORMALIZERS.remove("casefold")  # (this example cleans up after itself)
    """
    return NORMALIZERS.register(name)


def get_normalizer(name: str) -> Normalizer:
    """The normalizer registered as ``name``; unknown names raise ``UnknownComponentError``.

    >>> get_normalizer("none")("x")
    'x'
    >>> get_normalizer("nfdk")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    wordsplit.errors.UnknownComponentError: unknown normalizer 'nfdk'; known: nfc, nfd, nfkc, nfkd,
        none. Did you mean 'nfd'?
    """
    return NORMALIZERS.get(name)
