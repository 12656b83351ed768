"""Vocabulary loading: pretrained names, files of every supported format.

``load_vocab`` is the one entry point: a registered name (bundled, works offline), or a path
to a ``.tiktoken``, ``tokenizer.json``, ``vocab.json`` (with ``merges.txt`` beside it) or
``.gguf`` file, each optionally gzipped.

>>> load_vocab("cl100k_base").n_vocab
100277
"""

from __future__ import annotations

import functools
import gzip
import os
from importlib import resources
from pathlib import Path

from ..errors import UnknownVocabError, closest
from ..vocab import Vocab
from .loaders import load_hf_tokenizer_json, load_tiktoken, load_vocab_merges, read_tiktoken
from .pretrained import ALIASES, PRETRAINED

__all__ = ["load_vocab", "list_vocabs"]


def list_vocabs() -> list[str]:
    """The registered vocabulary names (aliases included), sorted.

    >>> "qwen3" in list_vocabs()
    True
    """
    return sorted([*PRETRAINED, *ALIASES])


@functools.lru_cache(maxsize=16)
def _load_pretrained(name: str) -> Vocab:
    entry = PRETRAINED[name]
    data = resources.files(__package__).joinpath("data", entry.file).read_bytes()
    return read_tiktoken(
        gzip.decompress(data), source=f"wordsplit:{entry.file}", name=name, pattern=entry.pattern,
        special_tokens=entry.special_tokens, added_tokens=entry.added_tokens, n_vocab=entry.n_vocab,
        normalizer=entry.normalizer, eos_token=entry.eos_token,
    )


def _load_path(path: Path) -> Vocab:
    name = path.name.removesuffix(".gz")
    if name.endswith(".tiktoken"):
        return load_tiktoken(path)
    if name.endswith(".gguf"):
        from .gguf import load_gguf

        return load_gguf(path)
    if name.endswith(".json") and name.removesuffix(".json").endswith(("vocab", "encoder")):
        for merges_name in ("merges.txt", "merges.txt.gz", "vocab.bpe", "vocab.bpe.gz"):
            merges = path.with_name(merges_name)
            if merges.exists():
                config = path.with_name("tokenizer_config.json")
                return load_vocab_merges(path, merges, config if config.exists() else None)
        raise FileNotFoundError(f"{path}: no merges.txt or vocab.bpe beside it")
    if name.endswith(".json"):
        return load_hf_tokenizer_json(path)
    raise UnknownVocabError(
        f"cannot tell the format of {str(path)!r}: expected a .tiktoken, tokenizer.json, vocab.json or .gguf file"
    )


def load_vocab(name_or_path: str | os.PathLike) -> Vocab:
    """Load a vocabulary by registered name or from a file.

    Args:
        name_or_path: ``"qwen3"``, ``"cl100k_base"``, ``"o200k_base"``, ``"o200k_harmony"``,
            ``"r50k_base"`` (alias ``"gpt2"``), ``"p50k_base"``, ``"p50k_edit"``; or a path. A
            directory is searched for tokenizer.json, then vocab.json.

    Returns:
        The immutable :class:`~wordsplit.vocab.Vocab`. Registered names are cached.

    Raises:
        UnknownVocabError: a name that is neither registered nor an existing path; the message
            lists the known names and suggests the closest.
        VocabFormatError, UnsupportedTokenizerError: a file that cannot be used.

    >>> load_vocab("gpt2").name
    'r50k_base'
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"load_vocab takes a name or a path, not {type(name_or_path).__name__}")
    key = os.fspath(name_or_path)
    key = ALIASES.get(key, key)
    if key in PRETRAINED:
        return _load_pretrained(key)
    path = Path(key)
    if path.is_dir():
        for candidate in ("tokenizer.json", "tokenizer.json.gz", "vocab.json", "vocab.json.gz"):
            if (path / candidate).exists():
                return _load_path(path / candidate)
        raise UnknownVocabError(f"{key!r} is a directory without tokenizer.json or vocab.json")
    if path.exists():
        return _load_path(path)
    known = list_vocabs()
    raise UnknownVocabError(
        f"unknown vocabulary {key!r}: not a registered name nor an existing file. "
        f"Known names: {', '.join(known)}.{closest(key, known)}"
    )
