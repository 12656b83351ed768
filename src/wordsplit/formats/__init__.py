"""Vocabulary file formats, and the loader registry ``load_vocab(path)`` dispatches through.

A loader turns a file into a :class:`~wordsplit.vocab.Vocab`. It registers with the suffixes
of the file names it reads; ``load_vocab(path)`` picks the loader whose suffix is the longest
one ending the file's name (a ``.gz`` ending is ignored for the match, and the built-in loaders
read gzipped files transparently). Loaders that share a suffix are told apart by content: one
registered with ``detect`` (a test of the file's first 64 KiB, gunzipped) takes the files it
recognizes, and one without takes the rest. The built-in formats register themselves the same
way:

==================  ==============================  ==========================================
loader              suffixes                        reads
==================  ==============================  ==========================================
``tiktoken``        ``.tiktoken``, ``.model``       rank files (:mod:`~wordsplit.formats.tiktoken`)
``tokenizer.json``  ``.json``                       HF tokenizer.json (:mod:`~wordsplit.formats.hf`)
``tekken``          ``.json``, detected by content  Mistral's Tekken (:mod:`~wordsplit.formats.tekken`)
``sentencepiece``   ``.model``, ``.spm``            SentencePiece protobuf, by content (:mod:`~.sentencepiece`)
``vocab.json``      ``vocab.json``, ``encoder.json`` + merges.txt / vocab.bpe beside it
``gguf``            ``.gguf``                       GGUF metadata (:mod:`~wordsplit.formats.gguf`)
``vocab.txt``       ``vocab.txt``                   BERT's WordPiece tokens (:mod:`~wordsplit.formats.bert_vocab`)
==================  ==============================  ==========================================

**What comes with an HF file.** A ``tokenizer_config.json`` beside a ``tokenizer.json`` or
``vocab.json`` (gzipped or not) gives the eos and bos tokens (``eos_token``, ``bos_token``: a
string or an AddedToken object) and the chat template (``chat_template``: a string, or a list of
named templates, of which the one named ``default`` is taken); see :func:`with_tokenizer_config`.
A missing one is not an error. It is one of the loader's inputs, so its bytes are part of the
parsed-vocab cache key.

**Directories.** :func:`find_vocab_file` picks the one vocabulary file of a directory, so that
``load_vocab(directory)`` works: HF's ``tokenizer.json`` (or, without it, ``vocab.json`` +
``merges.txt``), a ``.tiktoken``, a ``.gguf``, a Tekken JSON...

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

import json
import os
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

from ..errors import UnknownVocabError, VocabFormatError
from ..protocols import LoaderFunction
from ..registry import Registry
from ..vocab import Vocab
from .files import pinned, read_file, read_head, vocab_name

__all__ = [
    "LOADERS", "Loader", "TokenizerConfig", "find_vocab_file", "load_with", "loader_for", "read_tokenizer_config",
    "register_loader", "tokenizer_config_beside", "with_tokenizer_config",
]


class Loader:
    """A registered file format.

    Attributes:
        name: the registry name.
        suffixes: endings of the file names it reads (matched after dropping ``.gz``).
        load: ``load(path) -> Vocab``.
        inputs: ``inputs(path) -> list of paths`` it reads (the file and any companions), or
            None; with it, the parsed result is cached on disk keyed by their hashes.
        facts: the keyword arguments ``load`` takes besides the path (``pattern``...).
        detect: ``detect(head) -> bool``, whether a file whose name it reads is its format, from
            the file's first bytes (gunzipped); or None, for the loader that takes the files
            no other loader of the same suffix recognizes.
    """

    # A plain class, not a dataclass: it is defined on every import of wordsplit, and a
    # dataclass costs about a millisecond to create.
    __slots__ = ("name", "suffixes", "load", "inputs", "facts", "detect")

    def __init__(self, name: str, suffixes: tuple[str, ...], load: LoaderFunction,
                 inputs: Optional[Callable[[Path], list[Path]]] = None, facts: tuple[str, ...] = (),
                 detect: Optional[Callable[[bytes], bool]] = None) -> None:
        self.name, self.suffixes, self.load, self.inputs, self.facts = name, suffixes, load, inputs, tuple(facts)
        self.detect = detect

    def __repr__(self) -> str:
        return f"Loader({self.name!r}, suffixes={self.suffixes!r})"


LOADERS: Registry[Loader] = Registry("loader")


def register_loader(name: str, *, suffixes: tuple[str, ...],
                    inputs: Optional[Callable[[Path], list[Path]]] = None, facts: tuple[str, ...] = (),
                    detect: Optional[Callable[[bytes], bool]] = None) -> Callable[[LoaderFunction], LoaderFunction]:
    """Decorator: register ``load(path) -> Vocab`` as the loader of files ending in ``suffixes``.

    Args:
        name: the loader's name (``"tiktoken"``...).
        suffixes: file-name endings, e.g. ``(".tiktoken",)`` or ``("vocab.json",)``.
        inputs: optional ``inputs(path) -> [paths]``: the files the loader reads, which lets
            the disk cache keep its result (see the module docstring).
        facts: the keyword arguments ``load(path, **facts)`` accepts from ``load_vocab``
            (e.g. ``("pattern",)``); none by default.
        detect: optional ``detect(head) -> bool``: whether the first 64 KiB of a file
            (gunzipped) are this format's. It lets two loaders share a suffix: the one that
            recognizes a file gets it (a Tekken JSON is a ``.json`` like tokenizer.json).

    Raises:
        DuplicateNameError: ``name`` is taken.

    >>> sorted(LOADERS)
    ['gguf', 'sentencepiece', 'tekken', 'tiktoken', 'tokenizer.json', 'vocab.json', 'vocab.txt']
    """
    suffixes = (suffixes,) if isinstance(suffixes, str) else tuple(suffixes)
    if not suffixes or not all(isinstance(s, str) and s for s in suffixes):
        raise TypeError(f"loader {name!r}: suffixes must be non-empty strings, got {suffixes!r}")

    def deco(load: LoaderFunction) -> LoaderFunction:
        LOADERS.add(name, Loader(name, suffixes, load, inputs, facts, detect))
        return load

    return deco


def loader_for(path: str | os.PathLike, head: Optional[bytes] = None) -> Loader:
    """The loader of ``path``: the one with the longest suffix ending its name (``.gz`` dropped).

    Where several loaders read that suffix and some recognize files by content (``detect``),
    the file's first bytes decide: ``head`` when given, else read from ``path`` if it is a
    file. A loader that recognizes them wins; otherwise the one without ``detect`` does. A name
    no loader reads (maxtext's ``tokenizer.default``) goes to the one loader that recognizes
    the content.

    Raises:
        UnknownVocabError: no loader reads such a file; the message lists the known suffixes.
    """
    name = Path(path).name.removesuffix(".gz")
    matches: list[tuple[int, Loader]] = []
    for _, loader in LOADERS.items():
        lengths = [len(suffix) for suffix in loader.suffixes if name.endswith(suffix)]
        if lengths:
            matches.append((max(lengths), loader))
    if not matches:
        return _loader_by_content(path, head)
    # Longest suffix first; among equals, registration order (max keeps the first).
    if any(loader.detect is not None for _, loader in matches):
        if head is None:
            head = read_head(path) if Path(path).is_file() else b""
        recognized = [(length, loader) for length, loader in matches if loader.detect is not None and head
                      and loader.detect(head)]
        if recognized:
            return max(recognized, key=lambda match: match[0])[1]
        matches = [match for match in matches if match[1].detect is None] or matches
    return max(matches, key=lambda match: match[0])[1]


def _loader_by_content(path: str | os.PathLike, head: Optional[bytes]) -> Loader:
    """The loader of a file whose name no loader reads: the one loader that recognizes its
    first bytes (a SentencePiece model named ``tokenizer.default`` or ``tokenizer.gemma``).

    Raises:
        UnknownVocabError: no loader, or more than one, recognizes the file.
    """
    if head is None:
        head = read_head(path) if Path(path).is_file() else b""
    recognized = [loader for _, loader in LOADERS.items() if loader.detect is not None and head and loader.detect(head)]
    if len(recognized) == 1:
        return recognized[0]
    known = ", ".join(f"{s} ({loader.name})" for _, loader in LOADERS.items() for s in loader.suffixes)
    what = "no loader reads such a file name, nor recognizes its content" if not recognized else \
        f"its name says nothing and its content looks like {' and '.join(found.name for found in recognized)}"
    raise UnknownVocabError(
        f"cannot tell the format of {str(path)!r}: {what}. Known: {known}; rename the file with its format's "
        "suffix, or register another loader with wordsplit.register_loader"
    )


def fact_owners(facts: list[str]) -> str:
    """The files that take the load facts ``facts`` (for messages).

    >>> fact_owners(["pattern"]), fact_owners(["lowercase"])
    ('rank files (.tiktoken, tokenizer.model)', "BERT's vocab.txt")
    """
    if all(fact in RANK_FILE_FACTS for fact in facts):
        return "rank files (.tiktoken, tokenizer.model)"
    if facts == ["lowercase"]:
        return "BERT's vocab.txt"
    return "rank files (.tiktoken, tokenizer.model) and BERT's vocab.txt"


def load_with(loader: Loader, path: Path, facts: Optional[dict] = None) -> Vocab:
    """``loader.load(path, **facts)``, after checking that the loader takes those facts.

    Raises:
        TypeError: a fact the loader does not take (a tokenizer.json carries its own pattern).

    >>> load_with(loader_for("tokenizer.json"), Path("tokenizer.json"), {"pattern": "x"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: pattern= applies to rank files (...) only, ...; tokenizer.json (...) defines them itself
    """
    facts = {key: value for key, value in (facts or {}).items() if value is not None}
    unknown = sorted(set(facts) - set(loader.facts))
    if unknown:
        raise TypeError(
            f"{'=, '.join(unknown)}= applies to {fact_owners(unknown)} only, which do not carry it; "
            f"{Path(path).name} (the {loader.name} loader) defines them itself"
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


def _looks_like_sentencepiece(head: bytes) -> bool:
    from .sentencepiece import looks_like_sentencepiece

    return looks_like_sentencepiece(head)


# A SentencePiece tokenizer.model is protobuf; Meta's Llama 3/4 tokenizer.model is a rank file.
# (".spm": Marian's source.spm and target.spm, found by content like any .model)
@register_loader("sentencepiece", suffixes=(".model", ".spm"), inputs=lambda path: [path],
                 detect=_looks_like_sentencepiece)
def _load_sentencepiece(path: Path) -> Vocab:
    from .sentencepiece import load_sentencepiece

    return load_sentencepiece(path)


@register_loader("gguf", suffixes=(".gguf",), inputs=lambda path: [path], detect=lambda head: head[:4] == b"GGUF")
def _load_gguf(path: Path) -> Vocab:
    from .gguf import load_gguf  # the GGUF reader is only imported when a GGUF is loaded

    return load_gguf(path)


# -- what comes with an HF file: tokenizer_config.json ----------------------------------------

TOKENIZER_CONFIG = "tokenizer_config.json"


class TokenizerConfig(NamedTuple):
    """What wordsplit takes from a ``tokenizer_config.json``: token texts and the template."""

    eos_token: Optional[str] = None
    bos_token: Optional[str] = None
    chat_template: Optional[str] = None


# The files a tokenizer_config.json goes with: ``[prefix]tokenizer.json`` and the like take
# ``[prefix]tokenizer_config.json`` (so a ``gpt2-encoder.json`` never takes another model's config).
_CONFIG_OWNERS = ("tokenizer.json", "vocab.json", "encoder.json", "vocab.txt")


def tokenizer_config_beside(path: str | os.PathLike) -> Optional[Path]:
    """The ``tokenizer_config.json`` (or ``.json.gz``) that goes with an HF file, if present:
    ``x-tokenizer_config.json`` for ``x-tokenizer.json``, ``x-vocab.json`` or ``x-encoder.json``
    (the prefix is usually empty); None for any other file name.

    >>> tokenizer_config_beside("no-such-dir/tokenizer.json") is None
    True
    """
    name = Path(path).name.removesuffix(".gz")
    owner = next((owner for owner in _CONFIG_OWNERS if name.endswith(owner)), None)
    if owner is None:
        return None
    for config_name in (name[: -len(owner)] + TOKENIZER_CONFIG, name[: -len(owner)] + TOKENIZER_CONFIG + ".gz"):
        config = Path(path).with_name(config_name)
        if pinned(config) is not None or config.is_file():  # (pinned: the load reads those bytes)
            return config
    return None


def _token_text(value: Any, key: str, source: str) -> Optional[str]:
    """A config's ``eos_token`` / ``bos_token``: a string, an AddedToken object, or null."""
    if isinstance(value, dict):  # transformers writes {"__type": "AddedToken", "content": ...}
        value = value.get("content")
        if not isinstance(value, str):
            raise VocabFormatError(f"{source}: {key} is an object without a string 'content'")
    if value is not None and not isinstance(value, str):
        raise VocabFormatError(f"{source}: {key} must be a string, an AddedToken object or null, not {value!r}")
    return value or None


def _chat_template(value: Any, source: str) -> Optional[str]:
    """A config's ``chat_template``: a string, or a list of ``{"name", "template"}`` of which
    the one named ``default`` is the template (as transformers picks it); else None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        templates = {item.get("name"): item.get("template") for item in value}
        default = templates.get("default")
        if default is None or isinstance(default, str):
            return default
    raise VocabFormatError(
        f"{source}: chat_template must be a string or a list of {{'name', 'template'}} objects, not {value!r:.80}"
    )


def read_tokenizer_config(data: bytes, source: str = TOKENIZER_CONFIG) -> TokenizerConfig:
    """The eos and bos token texts and the chat template of ``tokenizer_config.json`` bytes.

    Raises:
        VocabFormatError: not a JSON object, or one of those keys of the wrong type.

    >>> read_tokenizer_config(b'{"eos_token": {"content": "</s>"}, "bos_token": null, '
    ...                       b'"chat_template": [{"name": "default", "template": "{{ x }}"}]}')
    TokenizerConfig(eos_token='</s>', bos_token=None, chat_template='{{ x }}')
    """
    try:
        config = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise VocabFormatError(f"{source}: not valid JSON ({exc})") from None
    if not isinstance(config, dict):
        raise VocabFormatError(f"{source}: a tokenizer_config.json is a JSON object")
    return TokenizerConfig(
        eos_token=_token_text(config.get("eos_token"), "eos_token", source),
        bos_token=_token_text(config.get("bos_token"), "bos_token", source),
        chat_template=_chat_template(config.get("chat_template"), source),
    )


def with_tokenizer_config(vocab: Vocab, data: Optional[bytes], source: str = TOKENIZER_CONFIG) -> Vocab:
    """``vocab`` with the eos, bos and chat template that ``tokenizer_config.json`` bytes give
    (a copy with those fields replaced; ``vocab`` itself when nothing changes or ``data`` is None).

    A token the config names is looked up among the special and added tokens, then the BPE
    tokens; one the vocabulary does not have leaves that field as the loader set it.

    Raises:
        VocabFormatError: see :func:`read_tokenizer_config`.

    >>> from wordsplit import load_vocab
    >>> vocab = with_tokenizer_config(load_vocab("gpt2"), b'{"bos_token": "<|endoftext|>", "chat_template": "{{ x }}"}')
    >>> vocab.bos_token_id, vocab.chat_template
    (50256, '{{ x }}')
    """
    if data is None:
        return vocab
    config = read_tokenizer_config(data, source)
    literals = vocab.all_special_literals

    def token_id(text: Optional[str]) -> Optional[int]:
        if text is None:
            return None
        found = literals.get(text)
        return found if found is not None else vocab.ranks.get(text.encode("utf-8"))

    changes: dict[str, Any] = {}
    for field, text in (("eos_token_id", config.eos_token), ("bos_token_id", config.bos_token)):
        found = token_id(text)
        if found is not None and found != getattr(vocab, field):
            changes[field] = found
    if config.chat_template is not None and config.chat_template != vocab.chat_template:
        changes["chat_template"] = config.chat_template
    if not changes:
        return vocab
    blob, ids, lengths = vocab.packed()
    return Vocab.from_packed(blob=blob, ids=ids, lengths=lengths, **{**vocab._fields(), **changes})


def _with_config_beside(path: Path) -> list[Path]:
    config = tokenizer_config_beside(path)
    return [path] if config is None else [path, config]


def _apply_config_beside(vocab: Vocab, path: Path) -> Vocab:
    config = tokenizer_config_beside(path)
    return vocab if config is None else with_tokenizer_config(vocab, read_file(config), str(config))


@register_loader("tokenizer.json", suffixes=(".json",), inputs=_with_config_beside)
def _load_tokenizer_json(path: Path) -> Vocab:
    from .hf import load_hf_tokenizer_json

    return _apply_config_beside(load_hf_tokenizer_json(path, name=vocab_name(path)), path)


def _looks_like_tekken(head: bytes) -> bool:
    from .tekken import looks_like_tekken  # the Tekken reader is only imported for a .json file

    return looks_like_tekken(head)


@register_loader("tekken", suffixes=(".json",), inputs=lambda path: [path], detect=_looks_like_tekken)
def _load_tekken(path: Path) -> Vocab:
    from .tekken import load_tekken

    return load_tekken(path, name=vocab_name(path))


# The merges file that goes with each vocabulary file name, then the other one.
_MERGES_NAMES = {"vocab.json": ("merges.txt", "vocab.bpe"), "encoder.json": ("vocab.bpe", "merges.txt")}


def merges_beside(path: Path) -> Optional[Path]:
    """The merges file of a ``vocab.json`` / ``encoder.json`` (``x-vocab.json`` → ``x-merges.txt``
    first, then ``merges.txt``; ``encoder.json`` → ``vocab.bpe``), gzipped or not, or None."""
    name = Path(path).name.removesuffix(".gz")
    for suffix, merges_names in _MERGES_NAMES.items():
        if name.endswith(suffix):
            prefix = name[: -len(suffix)]
            for merges_name in merges_names:
                for candidate in dict.fromkeys((prefix + merges_name, merges_name)):
                    for gz in ("", ".gz"):
                        merges = Path(path).with_name(candidate + gz)
                        if merges.is_file():
                            return merges
    return None


def _vocab_merges_files(path: Path) -> tuple[Path, Path, Optional[Path]]:
    """vocab.json (or encoder.json), the merges file beside it, and tokenizer_config.json if any."""
    merges = merges_beside(path)
    if merges is None:
        raise FileNotFoundError(f"{path}: no merges.txt or vocab.bpe beside it")
    return path, merges, tokenizer_config_beside(path)


@register_loader("vocab.json", suffixes=("vocab.json", "encoder.json"),
                 inputs=lambda path: [p for p in _vocab_merges_files(path) if p is not None])
def _load_vocab_merges(path: Path) -> Vocab:
    from .hf import load_vocab_merges

    return _apply_config_beside(load_vocab_merges(*_vocab_merges_files(path), name=vocab_name(path)), path)


@register_loader("vocab.txt", suffixes=("vocab.txt",), inputs=_with_config_beside, facts=("lowercase",))
def _load_bert_vocab(path: Path, lowercase: Optional[bool] = None) -> Vocab:
    from .bert_vocab import load_bert_vocab

    return load_bert_vocab(path, name=vocab_name(path), config=tokenizer_config_beside(path), lowercase=lowercase)


# -- directories --------------------------------------------------------------------------------


def find_vocab_file(directory: str | os.PathLike) -> Path:
    """The one vocabulary file of ``directory``, for ``load_vocab(directory)``.

    Candidates are the files a loader reads, except companions: a ``.json`` counts when it is
    ``tokenizer.json`` or a Tekken file (so ``config.json`` and ``tokenizer_config.json`` do
    not), a ``vocab.json`` / ``encoder.json`` when its merges file is beside it, and not when a
    ``tokenizer.json`` is (HF saves a tokenizer in both forms). Gzipped files count as well.

    Raises:
        UnknownVocabError: no candidate, or several (the message lists them and says to
            pass one file's path).
    """
    directory = Path(directory)
    candidates = []
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        try:
            loader = loader_for(path)
        except UnknownVocabError:
            continue
        if loader.name == "tokenizer.json" and path.name.removesuffix(".gz") != "tokenizer.json":
            continue
        if loader.name == "vocab.json" and merges_beside(path) is None:
            continue
        candidates.append((loader.name, path))
    if any(name == "tokenizer.json" for name, _ in candidates):  # (HF saves both forms)
        candidates = [(name, path) for name, path in candidates if name not in ("vocab.json", "vocab.txt")]
    if len(candidates) == 1:
        return candidates[0][1]
    if not candidates:
        raise UnknownVocabError(
            f"{str(directory)!r} is a directory without a vocabulary file: expected one tokenizer.json, "
            "vocab.json + merges.txt, encoder.json + vocab.bpe, .tiktoken, tokenizer.model, .gguf or Tekken JSON "
            "file (gzipped or not)"
        )
    listed = ", ".join(f"{path.name} ({name})" for name, path in candidates)
    raise UnknownVocabError(
        f"{str(directory)!r} holds several vocabulary files: {listed}; pass the path of the one to load, "
        f"e.g. load_vocab({str(candidates[0][1])!r})"
    )
