"""Vocabulary loading: pretrained names, HuggingFace repos, URLs, files of every supported format.

``load_vocab`` is the one entry point: a registered name (bundled, works offline),
``hf:ORG/REPO[@REVISION]`` or an ``http(s)://`` URL (downloaded once into the verified disk
cache, see :mod:`~wordsplit.vocabs.sources` and :mod:`~wordsplit.vocabs.cache`), or a path to
a ``.tiktoken``, ``tokenizer.json``, ``vocab.json`` (with ``merges.txt`` beside it) or ``.gguf``
file, each optionally gzipped. Every parse is kept in the cache as a derived entry, so the
second load of any vocabulary skips parsing (:mod:`~wordsplit.vocabs.derived`).

Registered names load from the package data (:data:`BUNDLED_DATA`, ``vocabs/data/``). An
install without those files (a *slim install*) downloads them from their official URLs
instead, verified against the pinned sha256; the tests simulate one by pointing
``BUNDLED_DATA`` at an empty directory.

>>> load_vocab("cl100k_base").n_vocab
100277
"""

from __future__ import annotations

import gzip
import os
from importlib import resources
from pathlib import Path
from typing import Callable

from ..errors import UnknownVocabError, closest
from ..vocab import Vocab
from .cache import Cache, open_cache, read_record, sha256_file
from .derived import cached_vocab
from .download import public_url
from .loaders import load_hf_tokenizer_json, load_tiktoken, load_vocab_merges, read_tiktoken
from .pretrained import ALIASES, PRETRAINED, Pretrained
from .sources import HF_PREFIX, fetch_hf, fetch_pretrained, fetch_url, is_offline, is_url, parse_hf, url_file_name

__all__ = ["download_vocab", "forget_loaded", "list_vocabs", "load_vocab"]

# Where registered names find their files; a slim install has none of them.
BUNDLED_DATA = resources.files(__package__).joinpath("data")

# Registered names already loaded in this process (a Vocab is immutable, so sharing is safe).
_LOADED: dict[str, Vocab] = {}


def list_vocabs() -> list[str]:
    """The registered vocabulary names (aliases included), sorted.

    >>> "qwen3" in list_vocabs()
    True
    """
    return sorted([*PRETRAINED, *ALIASES])


def forget_loaded() -> None:
    """Forget the registered vocabularies loaded in this process, so the next load reads the disk.

    For benchmarks and tests of the disk cache; a program has no reason to call it.
    """
    _LOADED.clear()


def _load_pretrained(name: str, cache_dir, offline: bool | None) -> Vocab:
    vocab = _LOADED.get(name)
    if vocab is None:
        vocab = _LOADED[name] = _read_pretrained(PRETRAINED[name], open_cache(cache_dir), offline)
    return vocab


def _read_pretrained(entry: Pretrained, cache: Cache, offline: bool | None) -> Vocab:
    def build(data: bytes, source: str) -> Vocab:
        return read_tiktoken(
            data, source=source, name=entry.name, pattern=entry.pattern, special_tokens=entry.special_tokens,
            added_tokens=entry.added_tokens, n_vocab=entry.n_vocab, normalizer=entry.normalizer,
            eos_token=entry.eos_token,
        )

    recipe = {"pretrained": entry.name, "sha256": entry.sha256}
    bundled = BUNDLED_DATA.joinpath(entry.file)
    if bundled.is_file():
        return cached_vocab(
            cache, {**recipe, "from": "bundled"}, label=entry.name,
            build=lambda: build(gzip.decompress(bundled.read_bytes()), f"wordsplit:{entry.file}"),
        )
    # A slim install: the official file, verified against its pin, from the cache or the network.
    path = fetch_pretrained(entry, cache, offline=is_offline(offline))
    return cached_vocab(cache, {**recipe, "from": str(path)}, label=entry.name,
                        build=lambda: build(path.read_bytes(), str(path)))


def _plan(path: Path, name: str | None = None) -> tuple[list[Path], Callable[[], Vocab]]:
    """The files a vocabulary file needs (itself, and merges/config beside it) and how to parse them."""
    stem = path.name.removesuffix(".gz")
    named = {} if name is None else {"name": name}
    if stem.endswith(".tiktoken"):
        return [path], lambda: load_tiktoken(path, **named)
    if stem.endswith(".gguf"):
        from .gguf import load_gguf  # the GGUF reader is only imported when a GGUF is loaded

        return [path], lambda: load_gguf(path)
    if stem.endswith(".json") and stem.removesuffix(".json").endswith(("vocab", "encoder")):
        for merges_name in ("merges.txt", "merges.txt.gz", "vocab.bpe", "vocab.bpe.gz"):
            merges = path.with_name(merges_name)
            if merges.exists():
                config = path.with_name("tokenizer_config.json")
                config = config if config.exists() else None
                inputs = [p for p in (path, merges, config) if p]
                return inputs, lambda: load_vocab_merges(path, merges, config, **named)
        raise FileNotFoundError(f"{path}: no merges.txt or vocab.bpe beside it")
    if stem.endswith(".json"):
        return [path], lambda: load_hf_tokenizer_json(path, **named)
    raise UnknownVocabError(
        f"cannot tell the format of {str(path)!r}: expected a .tiktoken, tokenizer.json, vocab.json or .gguf file"
    )


def _load_path(path: Path, cache: Cache) -> Vocab:
    inputs, build = _plan(path)
    files = {str(p.absolute()): sha256_file(p)[0] for p in inputs}
    # The path as given is part of the recipe: the Vocab's source (in messages) is that string.
    return cached_vocab(cache, {"path": str(path), "files": files}, label=str(path.absolute()), build=build)


def _load_hf(name: str, cache: Cache, offline: bool) -> Vocab:
    ref = parse_hf(name)
    files = fetch_hf(ref, cache, offline=offline)
    recipe = {"hf": ref.spec, "files": {file: read_record(path)["sha256"] for file, path in files.items()}}

    def build() -> Vocab:
        if "tokenizer.json" in files:
            return load_hf_tokenizer_json(files["tokenizer.json"], name=ref.repo)
        return load_vocab_merges(files["vocab.json"], files["merges.txt"], files.get("tokenizer_config.json"),
                                 name=ref.repo)

    return cached_vocab(cache, recipe, label=ref.spec, build=build)


def _load_url(url: str, cache: Cache, offline: bool, sha256: str | None) -> Vocab:
    url_file_name(url)  # an unknown format fails before anything is downloaded
    path = fetch_url(url, cache, sha256=sha256, offline=offline)
    shown = public_url(url)
    _, build = _plan(path, name=shown)
    return cached_vocab(cache, {"url": shown, "sha256": read_record(path)["sha256"]}, label=shown, build=build)


def _check_pin(key: str, sha256: str | None) -> None:
    if sha256 is not None and not is_url(key):
        raise ValueError(
            f"sha256= pins the content of a URL, and {key!r} is not one; registered names are pinned "
            "already, and a HuggingFace repo is pinned with hf:ORG/REPO@REVISION"
        )


def load_vocab(
    name_or_path: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    offline: bool | None = None,
    sha256: str | None = None,
) -> Vocab:
    """Load a vocabulary by registered name, from HuggingFace, from a URL or from a file.

    Args:
        name_or_path: ``"qwen3"``, ``"cl100k_base"``, ``"o200k_base"``, ``"o200k_harmony"``,
            ``"r50k_base"`` (alias ``"gpt2"``), ``"p50k_base"``, ``"p50k_edit"``;
            ``"hf:ORG/REPO"`` or ``"hf:ORG/REPO@REVISION"`` (tokenizer.json, else vocab.json +
            merges.txt); an ``http(s)://`` URL of a file; or a path. A directory is searched
            for tokenizer.json, then vocab.json.
        cache_dir: the disk cache (default: ``WORDSPLIT_CACHE_DIR``, else the user cache
            directory; see :mod:`~wordsplit.vocabs.cache`).
        offline: never use the network (default: ``WORDSPLIT_OFFLINE`` or ``HF_HUB_OFFLINE``).
        sha256: the expected sha256 of a URL's content; only for URLs (registered names are
            pinned already; pin a HuggingFace repo with ``@REVISION``).

    Returns:
        The immutable :class:`~wordsplit.vocab.Vocab`. Registered names are kept in memory.

    Raises:
        UnknownVocabError: a name that is neither registered nor an existing path; the message
            lists the known names and suggests the closest.
        VocabFormatError, UnsupportedTokenizerError: a file that cannot be used.
        DownloadError: a download failed (401/403: set HF_TOKEN; 404: names the file).
        OfflineError: offline mode, and the files are not in the cache.
        HashMismatchError: a download or cache entry is not what its pin says.

    >>> load_vocab("gpt2").name
    'r50k_base'
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"load_vocab takes a name or a path, not {type(name_or_path).__name__}")
    key = os.fspath(name_or_path)
    key = ALIASES.get(key, key)
    _check_pin(key, sha256)
    if key in PRETRAINED:
        return _load_pretrained(key, cache_dir, offline)
    if key.startswith(HF_PREFIX):
        return _load_hf(key, open_cache(cache_dir), is_offline(offline))
    if is_url(key):
        return _load_url(key, open_cache(cache_dir), is_offline(offline), sha256)
    path = Path(key)
    if path.is_dir():
        for candidate in ("tokenizer.json", "tokenizer.json.gz", "vocab.json", "vocab.json.gz"):
            if (path / candidate).exists():
                return _load_path(path / candidate, open_cache(cache_dir))
        raise UnknownVocabError(f"{key!r} is a directory without tokenizer.json or vocab.json")
    if path.exists():
        return _load_path(path, open_cache(cache_dir))
    known = list_vocabs()
    raise UnknownVocabError(
        f"unknown vocabulary {key!r}: not a registered name nor an existing file. "
        f"Known names: {', '.join(known)}.{closest(key, known)}"
    )


def download_vocab(
    name: str,
    *,
    cache_dir: str | os.PathLike | None = None,
    sha256: str | None = None,
    force: bool = False,
) -> list[Path]:
    """Put the files of ``name`` and its parsed form in the disk cache, for later offline loads.

    This is ``wordsplit download NAME``. Files already cached are verified, not downloaded
    again, unless ``force`` (which refreshes a moving revision such as ``main``).

    Args:
        name: a registered name, ``hf:ORG/REPO[@REVISION]`` or a URL.
        cache_dir, sha256: as for :func:`load_vocab`.
        force: download again even when cached.

    Returns:
        The cached files; none for a registered name whose file is bundled.

    Raises:
        UnknownVocabError: ``name`` is a path or unknown (there is nothing to download).
        DownloadError, OfflineError, HashMismatchError: as for :func:`load_vocab`.

    >>> download_vocab("cl100k_base")  # bundled: nothing to download
    []
    """
    key = ALIASES.get(name, name)
    _check_pin(key, sha256)
    cache = open_cache(cache_dir)
    offline = is_offline()
    if key in PRETRAINED:
        entry = PRETRAINED[key]
        bundled = BUNDLED_DATA.joinpath(entry.file).is_file()
        paths = [] if bundled else [fetch_pretrained(entry, cache, offline=offline, force=force)]
    elif key.startswith(HF_PREFIX):
        paths = list(fetch_hf(parse_hf(key), cache, offline=offline, force=force).values())
    elif is_url(key):
        paths = [fetch_url(key, cache, sha256=sha256, offline=offline, force=force)]
    else:
        known = list_vocabs()
        raise UnknownVocabError(
            f"nothing to download for {name!r}: expected a registered name, hf:ORG/REPO[@REVISION] or an "
            f"http(s) URL. Known names: {', '.join(known)}.{closest(key, known)}"
        )
    # Parse now, so that a file wordsplit cannot use fails here and the first load is fast.
    load_vocab(key, cache_dir=cache_dir, sha256=sha256, offline=offline)
    return paths
