"""The registry of pretrained vocabulary names and the facts their files do not carry.

The entries are the facts both languages share (``crates/wordsplit/data/registered.json``, which
cites where each fact comes from; the package reads it as ``_registered.py``). Each entry names
its bundled file (package data in ``vocabs/data/``, gzipped), the official URL and the sha256 of
the uncompressed content (docs/sources.md says where each file comes from); a SentencePiece entry
(:data:`SENTENCEPIECE_PRETRAINED`) no more, as its model file holds the rest. A rank file's entry
also has the split pattern, the special and added tokens and n_vocab, exactly as tiktoken 0.14.0
(``tiktoken_ext/openai_public.py``) and Qwen3's tokenizer.json define them. The URLs are the
official ones; :mod:`wordsplit.store.sources` swaps their host for ``WORDSPLIT_OPENAI_ENDPOINT``
or ``WORDSPLIT_HF_ENDPOINT`` when those are set, and downloads a file only when its bundled copy
is absent (a slim install).

>>> sorted(PRETRAINED)[:3]
['cl100k_base', 'o200k_base', 'o200k_harmony']
>>> sorted(SENTENCEPIECE_PRETRAINED)
['mistral-v1']
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple

from .._registered import REGISTERED
from ..registered import rank_files, sentencepiece_models, vocabularies


# Records are NamedTuples, not dataclasses: they are defined on every import of wordsplit, and
# importing dataclasses (with inspect) costs several milliseconds.
_NONE: Mapping[str, int] = MappingProxyType({})


class RankFileFacts(NamedTuple):
    """What a well-known rank file's tokenizer defines in code: ``load_vocab(path)`` of a file
    with this content (sha256 of the uncompressed bytes) uses these facts."""

    name: str  # the tokenizer it is the rank file of
    pattern: str
    special_tokens: Mapping[str, int]
    added_tokens: Mapping[str, int] = _NONE
    n_vocab: int | None = None
    normalizer: str = "none"
    eos_token: str | None = None


class Pretrained(NamedTuple):
    """Everything needed to build a registered vocabulary from its rank file: the facts its
    tokenizer defines in code (the fields of :class:`RankFileFacts`), and where the file is."""

    name: str
    pattern: str
    special_tokens: Mapping[str, int]
    file: str  # bundled .tiktoken.gz in vocabs/data/
    url: str  # official; under OPENAI_ENDPOINT or HF_ENDPOINT
    sha256: str  # of the uncompressed file, as the official source publishes it
    added_tokens: Mapping[str, int] = _NONE
    n_vocab: int | None = None
    normalizer: str = "none"
    eos_token: str | None = None


PRETRAINED: dict[str, Pretrained] = {
    name: Pretrained(**fields) for name, fields in vocabularies(REGISTERED).items()
}

# alias → registered name (gpt2 is tiktoken's name for r50k_base's ranks, pattern and special token).
ALIASES: dict[str, str] = dict(REGISTERED["aliases"])


class PretrainedModel(NamedTuple):
    """A registered SentencePiece vocabulary: its ``tokenizer.model`` carries every fact (pieces,
    types, normalizer flags), so the entry only says where the file is."""

    name: str
    file: str  # bundled .model.gz in vocabs/data/
    url: str  # official; under HF_ENDPOINT
    sha256: str  # of the uncompressed file


# SentencePiece models whose license lets a name load them (and the package bundle them); the
# data file says which, and why Llama 2 and Gemma have no entry.
SENTENCEPIECE_PRETRAINED: dict[str, PretrainedModel] = {
    name: PretrainedModel(**fields) for name, fields in sentencepiece_models(REGISTERED).items()
}


# -- rank files recognized by content -------------------------------------------------------


# KNOWN_RANK_FILES: sha256 of a rank file's uncompressed bytes → the facts its tokenizer
# defines in code (a registered name's rank file gives its Pretrained entry). Built on first use
# by the module's __getattr__: its 4,000 special-token names are not worth making on every
# import. The data file says where each fact comes from, and which tokenizers share a file.
def _known_rank_files() -> dict[str, RankFileFacts]:
    return {sha256: PRETRAINED[facts] if isinstance(facts, str) else RankFileFacts(**facts)
            for sha256, facts in rank_files(REGISTERED).items()}


def __getattr__(name: str):
    if name == "KNOWN_RANK_FILES":
        globals()[name] = table = _known_rank_files()
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
