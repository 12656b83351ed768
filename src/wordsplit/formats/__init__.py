"""Vocabulary file formats, and the loader registry ``load_vocab(path)`` dispatches through.

A loader turns a file into a :class:`~wordsplit.vocab.Vocab`. It registers with the suffixes
of the file names it reads; ``load_vocab(path)`` picks the loader whose suffix is the longest
one ending the file's name (a ``.gz`` ending is ignored for the match, and the built-in loaders
read gzipped files transparently). The built-in formats register themselves the same way:

=================  ==============================  ==========================================
loader             suffixes                        reads
=================  ==============================  ==========================================
``tiktoken``       ``.tiktoken``, ``.model``       rank files (:mod:`~wordsplit.formats.tiktoken`)
``tokenizer.json`` ``.json``                       HF tokenizer.json (:mod:`~wordsplit.formats.hf`)
``vocab.json``     ``vocab.json``, ``encoder.json`` + merges.txt / vocab.bpe beside it
``gguf``           ``.gguf``                       GGUF metadata (:mod:`~wordsplit.formats.gguf`)
=================  ==============================  ==========================================

A loader that says which files it reads (``inputs``) has its result kept in the disk cache,
keyed by those files' hashes, so the second load skips parsing; one that does not is called on
every load. A loader that takes facts its files do not carry (``facts``: the rank-file loader
takes ``pattern``, ``special_tokens`` and ``n_vocab``) gets them as keyword arguments from
``load_vocab(path, pattern=...)``; :func:`load_with` refuses facts a loader does not take.

>>> @register_loader("words-doc", suffixes=(".words-doc",))
... def load_words(path):
...     raise NotImplementedError
>>> loader_for("my.words-doc").name, loader_for("tokenizer.json.gz").name
('words-doc', 'tokenizer.json')
>>> _ = LOADERS.remove("words-doc")  # (this example cleans up after itself)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

from ..errors import UnknownVocabError
from ..registry import Registry
from ..vocab import Vocab

__all__ = ["LOADERS", "Loader", "load_with", "loader_for", "register_loader"]


class Loader:
    """A registered file format.

    Attributes:
        name: the registry name.
        suffixes: endings of the file names it reads (matched after dropping ``.gz``).
        load: ``load(path) -> Vocab``.
        inputs: ``inputs(path) -> list of paths`` it reads (the file and any companions), or
            None; with it, the parsed result is cached on disk keyed by their hashes.
        facts: the keyword arguments ``load`` takes besides the path (``pattern``...).
    """

    # A plain class, not a dataclass: it is defined on every import of wordsplit, and a
    # dataclass costs about a millisecond to create.
    __slots__ = ("name", "suffixes", "load", "inputs", "facts")

    def __init__(self, name: str, suffixes: tuple[str, ...], load: Callable[..., Vocab],
                 inputs: Optional[Callable[[Path], list[Path]]] = None, facts: tuple[str, ...] = ()) -> None:
        self.name, self.suffixes, self.load, self.inputs, self.facts = name, suffixes, load, inputs, tuple(facts)

    def __repr__(self) -> str:
        return f"Loader({self.name!r}, suffixes={self.suffixes!r})"


LOADERS: Registry[Loader] = Registry("loader")


def register_loader(name: str, *, suffixes: tuple[str, ...],
                    inputs: Optional[Callable[[Path], list[Path]]] = None, facts: tuple[str, ...] = ()) -> Callable:
    """Decorator: register ``load(path) -> Vocab`` as the loader of files ending in ``suffixes``.

    Args:
        name: the loader's name (``"tiktoken"``...).
        suffixes: file-name endings, e.g. ``(".tiktoken",)`` or ``("vocab.json",)``.
        inputs: optional ``inputs(path) -> [paths]``: the files the loader reads, which lets
            the disk cache keep its result (see the module docstring).
        facts: the keyword arguments ``load(path, **facts)`` accepts from ``load_vocab``
            (e.g. ``("pattern",)``); none by default.

    Raises:
        DuplicateNameError: ``name`` is taken.

    >>> sorted(LOADERS)
    ['gguf', 'tiktoken', 'tokenizer.json', 'vocab.json']
    """
    suffixes = (suffixes,) if isinstance(suffixes, str) else tuple(suffixes)
    if not suffixes or not all(isinstance(s, str) and s for s in suffixes):
        raise TypeError(f"loader {name!r}: suffixes must be non-empty strings, got {suffixes!r}")

    def deco(load: Callable[..., Vocab]) -> Callable[..., Vocab]:
        LOADERS.add(name, Loader(name, suffixes, load, inputs, facts))
        return load

    return deco


def loader_for(path: str | os.PathLike) -> Loader:
    """The loader of ``path``: the one with the longest suffix ending its name (``.gz`` dropped).

    Raises:
        UnknownVocabError: no loader reads such a file; the message lists the known suffixes.
    """
    name = Path(path).name.removesuffix(".gz")
    best: Optional[tuple[int, Loader]] = None
    for _, loader in LOADERS.items():
        for suffix in loader.suffixes:
            if name.endswith(suffix) and (best is None or len(suffix) > best[0]):
                best = (len(suffix), loader)
    if best is None:
        known = ", ".join(f"{s} ({loader.name})" for _, loader in LOADERS.items() for s in loader.suffixes)
        raise UnknownVocabError(
            f"cannot tell the format of {str(path)!r}: no loader reads such a file name. Known: {known}; "
            "register another with wordsplit.register_loader"
        )
    return best[1]


def load_with(loader: Loader, path: Path, facts: Optional[dict] = None) -> Vocab:
    """``loader.load(path, **facts)``, after checking that the loader takes those facts.

    Raises:
        TypeError: a fact the loader does not take (a tokenizer.json carries its own pattern).

    >>> load_with(loader_for("tokenizer.json"), Path("tokenizer.json"), {"pattern": "x"})
    Traceback (most recent call last):
    TypeError: pattern= applies to rank files (.tiktoken, tokenizer.model) only, which carry no pattern or special tokens; tokenizer.json (the tokenizer.json loader) defines them itself
    """
    facts = {key: value for key, value in (facts or {}).items() if value is not None}
    unknown = sorted(set(facts) - set(loader.facts))
    if unknown:
        raise TypeError(
            f"{'=, '.join(unknown)}= applies to rank files (.tiktoken, tokenizer.model) only, which carry no "
            f"pattern or special tokens; {Path(path).name} (the {loader.name} loader) defines them itself"
        )
    return loader.load(path, **facts)


# -- the built-in formats -----------------------------------------------------------------------

# What a rank file does not carry, and load_vocab(path, ...) passes on.
RANK_FILE_FACTS = ("pattern", "special_tokens", "n_vocab")


# ".model": Meta's Llama 3/4 tokenizer.model is a rank file; a SentencePiece .model gets an
# error naming SentencePiece from the same loader.
@register_loader("tiktoken", suffixes=(".tiktoken", ".model"), inputs=lambda path: [path], facts=RANK_FILE_FACTS)
def _load_tiktoken(path: Path, **facts) -> Vocab:
    from .tiktoken import load_tiktoken

    return load_tiktoken(path, **facts)


@register_loader("gguf", suffixes=(".gguf",), inputs=lambda path: [path])
def _load_gguf(path: Path) -> Vocab:
    from .gguf import load_gguf  # the GGUF reader is only imported when a GGUF is loaded

    return load_gguf(path)


@register_loader("tokenizer.json", suffixes=(".json",), inputs=lambda path: [path])
def _load_tokenizer_json(path: Path) -> Vocab:
    from .hf import load_hf_tokenizer_json

    return load_hf_tokenizer_json(path)


def _vocab_merges_files(path: Path) -> tuple[Path, Path, Optional[Path]]:
    """vocab.json (or encoder.json), the merges file beside it, and tokenizer_config.json if any."""
    for merges_name in ("merges.txt", "merges.txt.gz", "vocab.bpe", "vocab.bpe.gz"):
        merges = path.with_name(merges_name)
        if merges.exists():
            config = path.with_name("tokenizer_config.json")
            return path, merges, config if config.exists() else None
    raise FileNotFoundError(f"{path}: no merges.txt or vocab.bpe beside it")


@register_loader("vocab.json", suffixes=("vocab.json", "encoder.json"),
                 inputs=lambda path: [p for p in _vocab_merges_files(path) if p is not None])
def _load_vocab_merges(path: Path) -> Vocab:
    from .hf import load_vocab_merges

    return load_vocab_merges(*_vocab_merges_files(path))
