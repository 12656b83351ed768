"""Vocabulary loading: pretrained names, HuggingFace repos, URLs, files of every supported format.

``load_vocab`` is the one entry point: a registered name (bundled, works offline),
``hf:ORG/REPO[@REVISION]`` or an ``http(s)://`` URL (downloaded once into the verified disk
cache, see :mod:`~wordsplit.store.sources` and :mod:`~wordsplit.store.cache`), or a path to
a ``.tiktoken``, ``tokenizer.json``, ``vocab.json`` (with ``merges.txt`` beside it), Tekken
JSON or ``.gguf`` file, each optionally gzipped, or to a directory holding one of them. Every
parse is kept in the cache as a derived entry, so the second load of any vocabulary skips
parsing (:mod:`~wordsplit.store.derived`).

Registered names load from the package data (:data:`BUNDLED_DATA`, ``vocabs/data/``). An
install without those files (a *slim install*) downloads them from their official URLs
instead, verified against the pinned sha256; the tests simulate one by pointing
``BUNDLED_DATA`` at an empty directory.

>>> load_vocab("cl100k_base").n_vocab
100277
"""

from __future__ import annotations

import contextlib
import contextvars
import gzip
import os
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..errors import UnknownVocabError, VocabFormatError, WordsplitError, closest
from ..formats import fact_owners, find_vocab_file, load_with, loader_for, with_tokenizer_config
from ..formats.files import pinned_inputs, read_file, read_input
from ..protocols import VocabFactory
from ..registry import Registry
from ..store.cache import Cache, open_cache, read_checked, read_record
from ..store.derived import cached_vocab
from ..store.download import limited, public_url
from ..store.sources import (
    HF_PREFIX, cache_keys, check_pin, fetch_hf, fetch_pretrained, fetch_url, is_offline, is_url, parse_hf,
    pretrained_key, url_file_name,
)
from ..vocab import Vocab
from .pretrained import ALIASES, PRETRAINED, SENTENCEPIECE_PRETRAINED, Pretrained, PretrainedModel
from ..store.digests import sha256_hash

__all__ = ["VOCABS", "clear_cache", "download_vocab", "forget_loaded", "list_vocabs", "load_vocab", "model_vocabulary",
           "register_vocab"]

# Where registered names find their files; a slim install has none of them.
# A plain path, not importlib.resources: wordsplit has a native extension, so it is never
# imported from a zip, and importlib.resources would import tempfile on every load.
BUNDLED_DATA = Path(__file__).with_name("data")

#: Named vocabularies: name → ``factory() -> Vocab``. The built-in names are registered here
#: like any other.
VOCABS: Registry[VocabFactory] = Registry("vocabulary", error=UnknownVocabError)

# Registered names already loaded in this process (a Vocab is immutable, so sharing is safe).
_LOADED: dict[str, Vocab] = {}

# The cache_dir / offline of the load_vocab call in progress, for the factories of named
# vocabularies: a factory takes no arguments, and a factory that calls load_vocab itself (for
# its files) inherits them.
_LOAD_OPTIONS: contextvars.ContextVar[dict] = contextvars.ContextVar("wordsplit_load_options", default={})


def register_vocab(name: str, factory: VocabFactory, *, aliases: tuple[str, ...] = ()) -> None:
    """Make ``load_vocab(name)`` (and ``list_vocabs()``, and ``--vocab NAME``) know a vocabulary.

    Args:
        name: the name to load it by.
        factory: ``factory() -> Vocab``, called on the first ``load_vocab(name)`` of a process
            (the result is kept). It may call :func:`load_vocab` for its files; those calls
            inherit the ``cache_dir`` and ``offline`` of the outer call.
        aliases: other names for it.

    Raises:
        DuplicateNameError: the name or an alias is taken.

    >>> from wordsplit import Vocab, load_vocab
    >>> register_vocab("bytes-only", lambda: Vocab(name="bytes-only", ranks={bytes([b]): b for b in range(256)},
    ...                                           pattern=r"\\S+|\\s+"))
    >>> load_vocab("bytes-only").n_vocab
    256
    >>> _ = VOCABS.remove("bytes-only"); forget_loaded()  # (this example cleans up after itself)
    """
    if not callable(factory):
        raise TypeError(f"register_vocab({name!r}, factory): factory must be callable, got {factory!r}")
    VOCABS.add(name, factory, aliases=aliases)


def list_vocabs() -> list[str]:
    """The registered vocabulary names (aliases and plug-ins' names included), sorted.

    >>> "qwen3" in list_vocabs()
    True
    """
    return VOCABS.names()


def forget_loaded() -> None:
    """Forget the registered vocabularies loaded in this process, so the next load reads the disk.

    For benchmarks and tests of the disk cache; a program has no reason to call it.
    """
    _LOADED.clear()


@contextlib.contextmanager
def _load_options(cache_dir, offline) -> Iterator[None]:
    outer = _LOAD_OPTIONS.get()
    token = _LOAD_OPTIONS.set({
        "cache_dir": cache_dir if cache_dir is not None else outer.get("cache_dir"),
        "offline": offline if offline is not None else outer.get("offline"),
    })
    try:
        yield
    finally:
        _LOAD_OPTIONS.reset(token)


def _load_named(name: str) -> Vocab:
    """A registered name: from this process's memo, else its factory."""
    vocab = _LOADED.get(name)
    if vocab is None:
        vocab = VOCABS.get(name)()
        if not isinstance(vocab, Vocab):
            raise VocabFormatError(
                f"the factory registered for the vocabulary {name!r} returned {type(vocab).__name__}, not a Vocab"
            )
        _LOADED[name] = vocab
    return vocab


def _pretrained_factory(entry: Pretrained | PretrainedModel) -> Callable[[], Vocab]:
    def factory() -> Vocab:
        options = _LOAD_OPTIONS.get()
        return _read_pretrained(entry, open_cache(options.get("cache_dir")), options.get("offline"))

    return factory


def _parse_pretrained(entry: Pretrained | PretrainedModel, data: bytes, source: str) -> Vocab:
    """The vocabulary of a registered entry's file (only when the disk cache has no entry)."""
    if isinstance(entry, PretrainedModel):
        from ..formats.sentencepiece import read_model_proto, sentencepiece_vocab

        return sentencepiece_vocab(read_model_proto(data, source), name=entry.name, source=source)
    from ..formats.tiktoken import read_tiktoken

    return read_tiktoken(
        data, source=source, name=entry.name, pattern=entry.pattern, special_tokens=entry.special_tokens,
        added_tokens=entry.added_tokens, n_vocab=entry.n_vocab, normalizer=entry.normalizer,
        eos_token=entry.eos_token,
    )


def _read_pretrained(entry: Pretrained | PretrainedModel, cache: Cache, offline: bool | None) -> Vocab:
    recipe = {"pretrained": entry.name, "sha256": entry.sha256}
    bundled = BUNDLED_DATA.joinpath(entry.file)
    if bundled.is_file():
        return cached_vocab(
            cache, {**recipe, "from": "bundled"}, label=entry.name,
            build=lambda: _parse_pretrained(entry, gzip.decompress(bundled.read_bytes()), f"wordsplit:{entry.file}"),
        )
    # A slim install: the official file, verified against its pin, from the cache or the network.
    path = fetch_pretrained(entry, cache, offline=is_offline(offline))
    return cached_vocab(cache, {**recipe, "from": str(path)}, label=entry.name,
                        build=lambda: _parse_pretrained(entry, read_checked(path, entry.sha256), str(path)))


# Every registered file, by name: the rank files and the SentencePiece models.
_NAMED: dict[str, Pretrained | PretrainedModel] = {**PRETRAINED, **SENTENCEPIECE_PRETRAINED}
for _entry in _NAMED.values():
    register_vocab(_entry.name, _pretrained_factory(_entry),
                   aliases=tuple(alias for alias, target in ALIASES.items() if target == _entry.name))


def _load_path(path: Path, cache: Cache, *, name: str | None = None, facts: dict | None = None) -> Vocab:
    """A file, through the loader registered for its name; cached on disk when the loader says
    which files it reads. ``name`` renames the result (a URL's vocabulary is named by its URL);
    ``facts`` are load_vocab's pattern/special_tokens/n_vocab for the loader."""
    loader = loader_for(path)
    facts = {key: value for key, value in (facts or {}).items() if value is not None}

    def build() -> Vocab:
        vocab = load_with(loader, path, facts)
        if not isinstance(vocab, Vocab):
            raise VocabFormatError(
                f"the loader {loader.name!r} returned {type(vocab).__name__} for {path}, not a Vocab"
            )
        return vocab if name is None or vocab.name == name else vocab.renamed(name)

    if loader.inputs is None:
        return build()
    # Each input is read once: the bytes hashed for the key are the bytes parsed (pinned), so a
    # file replaced in between cannot leave an entry under the other file's hash.
    inputs = {p: read_input(p) for p in loader.inputs(path)}
    files = {str(p.absolute()): sha256_hash(data).hexdigest() for p, data in inputs.items()}
    build = _pinned(build, inputs)

    # The path as given is part of the recipe: the Vocab's source (in messages) is that string.
    recipe = {"path": str(path), "loader": loader.name, "files": files, "name": name}
    if facts:  # (absent otherwise, so entries made without facts keep their key)
        recipe["facts"] = {key: dict(value) if key == "special_tokens" else value for key, value in facts.items()}
    return cached_vocab(cache, recipe, label=name or str(path.absolute()), build=build)


def _pinned(build: Callable[[], Vocab], inputs: dict) -> Callable[[], Vocab]:
    """``build`` run with ``inputs`` (path → bytes) pinned: the loaders read those bytes."""
    def pinned_build() -> Vocab:
        with pinned_inputs(inputs):
            return build()

    return pinned_build


def _load_hf(name: str, cache: Cache, offline: bool) -> Vocab:
    ref = parse_hf(name)
    files = fetch_hf(ref, cache, offline=offline)
    # Every file of the set is in the recipe, tokenizer_config.json included: its eos, bos and
    # chat template are part of the parsed vocabulary.
    recipe = {"hf": ref.spec, "files": {file: read_record(path)["sha256"] for file, path in files.items()}}

    def build() -> Vocab:
        from ..formats.hf import load_hf_tokenizer_json, load_vocab_merges
        from ..formats.sentencepiece import load_sentencepiece
        from ..formats.tekken import load_tekken

        # The loaders parse the bytes that match the recipe's hashes, read once (pinned).
        with pinned_inputs({path: read_checked(path, recipe["files"][file]) for file, path in files.items()}):
            config = files.get("tokenizer_config.json")
            if "tokenizer.json" in files:
                vocab = load_hf_tokenizer_json(files["tokenizer.json"], name=ref.repo)
            elif "tekken.json" in files:
                vocab = load_tekken(files["tekken.json"], name=ref.repo)
            elif "tokenizer.model" in files:
                vocab = load_sentencepiece(files["tokenizer.model"], name=ref.repo)
            else:
                vocab = load_vocab_merges(files["vocab.json"], files["merges.txt"], config, name=ref.repo)
            return vocab if config is None else with_tokenizer_config(vocab, read_file(config), str(config))

    with _unusable_downloads_removed(cache, files.values()):
        return cached_vocab(cache, recipe, label=ref.spec, build=build)


@contextlib.contextmanager
def _unusable_downloads_removed(cache: Cache, paths) -> Iterator[None]:
    """A downloaded file that does not parse as its format never stays an entry: the next load
    downloads it again rather than failing on the same bytes until ``cache clear``."""
    try:
        yield
    except VocabFormatError as exc:
        removed = all([cache.remove(path) for path in paths])
        raise VocabFormatError(
            f"{exc}. The downloaded file " + ("was removed from the cache, so the next load downloads it again"
                                              if removed else "could not be removed from the cache: delete it by hand")
        ) from None


def _load_url(url: str, cache: Cache, offline: bool, sha256: str | None, facts: dict | None = None) -> Vocab:
    shown = public_url(url)
    loader_for(url_file_name(url), head=b"")  # an unknown format fails before anything is downloaded
    path = fetch_url(url, cache, sha256=sha256, offline=offline)
    with _unusable_downloads_removed(cache, [path]):
        return _load_path(path, cache, name=shown, facts=facts)


def _check_facts(key: str, facts: dict) -> None:
    """pattern/special_tokens/n_vocab: of the right types, and for a path or URL only (names carry theirs)."""
    given = [name for name, value in facts.items() if value is not None]
    if not given:
        return
    if key in VOCABS or key.startswith(HF_PREFIX) or model_vocabulary(key) is not None:
        raise TypeError(
            f"{'=, '.join(given)}= applies to {fact_owners(given)} loaded by path or URL, not to {key!r}, "
            "which defines its own"
        )
    pattern, specials, n_vocab = facts["pattern"], facts["special_tokens"], facts["n_vocab"]
    if pattern is not None and not (isinstance(pattern, str) and pattern):
        raise TypeError(f"pattern must be a non-empty str (a split regex), not {pattern!r}")
    if specials is not None and not (
        isinstance(specials, Mapping)
        and all(isinstance(t, str) and isinstance(i, int) and not isinstance(i, bool) for t, i in specials.items())
    ):
        raise TypeError(f"special_tokens must be a mapping of token text to int id, not {specials!r}")
    if n_vocab is not None and (not isinstance(n_vocab, int) or isinstance(n_vocab, bool)):
        raise TypeError(f"n_vocab must be an int, not {n_vocab!r}")
    if facts["lowercase"] is not None and not isinstance(facts["lowercase"], bool):
        raise TypeError(f"lowercase must be a bool, not {facts['lowercase']!r}")


def _check_pin(key: str, sha256: str | None) -> None:
    check_pin(sha256)  # 64 hex digits, before anything is touched
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
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    n_vocab: int | None = None,
    lowercase: bool | None = None,
) -> Vocab:
    """Load a vocabulary by registered name, from HuggingFace, from a URL or from a file.

    Args:
        name_or_path: ``"qwen3"``, ``"cl100k_base"``, ``"o200k_base"``, ``"o200k_harmony"``,
            ``"r50k_base"`` (alias ``"gpt2"``), ``"p50k_base"``, ``"p50k_edit"``; an OpenAI
            model's name (``"gpt-4o"`` is ``"o200k_base"``: :func:`model_vocabulary`);
            ``"hf:ORG/REPO"`` or ``"hf:ORG/REPO@REVISION"`` (tokenizer.json, else Mistral's
            tekken.json, else a SentencePiece tokenizer.model, else vocab.json + merges.txt;
            with tokenizer_config.json when the repo has one); an ``http(s)://`` URL of a file;
            or a path: a file, or a directory that holds one vocabulary file (see
            :func:`~wordsplit.formats.find_vocab_file`). A tokenizer_config.json beside an HF
            file gives eos, bos and the chat template. A vocabulary from a path is named after
            the file, or after its directory when the file is ``tokenizer.json``,
            ``vocab.json``, ``tekken.json``...
        cache_dir: the disk cache (default: ``WORDSPLIT_CACHE_DIR``, else the user cache
            directory; see :mod:`~wordsplit.store.cache`).
        offline: never use the network (default: ``WORDSPLIT_OFFLINE`` or ``HF_HUB_OFFLINE``).
        sha256: the expected sha256 of a URL's content; only for URLs (registered names are
            pinned already; pin a HuggingFace repo with ``@REVISION``).
        pattern, special_tokens, n_vocab: for a rank file (``.tiktoken``, Meta's
            ``tokenizer.model``), which carries none of them: the split pattern (tiktoken's
            ``pat_str``), special token text → id, and the declared size. Files wordsplit
            recognizes by content (OpenAI's, Qwen's, Llama 3/4's, whisper's) have their
            official ones, which these replace; any other rank file needs ``pattern``.
        lowercase: for BERT's ``vocab.txt`` without a ``tokenizer_config.json`` beside it,
            which does not say whether its model is uncased (True) or cased (False).

    Returns:
        The immutable :class:`~wordsplit.vocab.Vocab`. Registered names are kept in memory.

    Raises:
        UnknownVocabError: a name that is neither registered nor an existing path (the message
            lists the known names and suggests the closest), or a directory with no vocabulary
            file or several (the message lists them).
        VocabFormatError, UnsupportedTokenizerError: a file that cannot be used, or a rank
            file wordsplit does not recognize, loaded without ``pattern``.
        TypeError: ``pattern``, ``special_tokens`` or ``n_vocab`` for something that is not
            a rank file, ``lowercase`` for something that is not a vocab.txt.
        DownloadError: a download failed (401/403: set HF_TOKEN; 404: names the file).
        OfflineError: offline mode, and the files are not in the cache.
        HashMismatchError: a download or cache entry is not what its pin says.

    >>> load_vocab("gpt2").name, load_vocab("gpt-4o").name
    ('r50k_base', 'o200k_base')
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"load_vocab takes a name or a path, not {type(name_or_path).__name__}")
    key = os.fspath(name_or_path)
    if not key.strip():
        raise UnknownVocabError(
            f"load_vocab needs a name or a path, got {key!r}; known names: {', '.join(list_vocabs())}"
        )
    _check_pin(key, sha256)
    facts = {"pattern": pattern, "special_tokens": special_tokens, "n_vocab": n_vocab, "lowercase": lowercase}
    _check_facts(key, facts)
    with _load_options(cache_dir, offline):
        options = _LOAD_OPTIONS.get()
        cache_dir, offline = options["cache_dir"], options["offline"]
        if key in VOCABS:
            return _load_named(VOCABS.canonical(key))
        model_vocab = model_vocabulary(key)
        if model_vocab is not None:
            return _load_named(VOCABS.canonical(model_vocab))
        if key.startswith(HF_PREFIX):
            return _load_hf(key, open_cache(cache_dir), is_offline(offline))
        if is_url(key):
            return _load_url(key, open_cache(cache_dir), is_offline(offline), sha256, facts)
        path = Path(key)
        if path.is_dir():
            path = _vocab_file_in(path, open_cache(cache_dir))
        if path.exists():
            return _load_path(path, open_cache(cache_dir), facts=facts)
    known = list_vocabs()
    raise UnknownVocabError(
        f"unknown vocabulary {key!r}: not a registered name, an OpenAI model's name nor an existing file. "
        f"Known names: {', '.join(known)}; and the models of tiktoken's encoding_for_model (gpt-4o, gpt-4, "
        f"text-davinci-003, ...).{_suggestion(key, known)}"
    )


def model_vocabulary(key: str) -> str | None:
    """The registered vocabulary an OpenAI model's name stands for, as tiktoken's
    ``encoding_for_model`` maps it (:mod:`~wordsplit.vocabs.models`: an exact name, else the
    first matching prefix); None for any other key, and for an existing path of that name.

    >>> model_vocabulary("gpt-4o"), model_vocabulary("gpt-3.5-turbo-0613"), model_vocabulary("qwen3")
    ('o200k_base', 'cl100k_base', None)
    """
    from .models import model_encoding

    if not isinstance(key, str):
        return None
    encoding = model_encoding(key)
    if encoding is None or encoding not in VOCABS or Path(key).exists():
        return None
    return encoding


# Names that are files that do not exist, not HuggingFace repositories.
VOCAB_FILE_SUFFIXES = (".tiktoken", ".json", ".model", ".gguf", ".txt", ".bpe", ".gz")


def _suggestion(key: str, known: list[str]) -> str:
    """What ``key`` probably meant: a HuggingFace repository for ``ORG/REPO``, else the closest
    known name.

    >>> _suggestion("Qwen/Qwen3-8B", list_vocabs())
    " Did you mean 'hf:Qwen/Qwen3-8B'? (a HuggingFace repository is named with hf:)"
    >>> _suggestion("tok/tokenizer.json", list_vocabs())
    ''
    """
    org, slash, repo = key.partition("/")
    file_like = key.startswith((".", "~")) or ":" in key or key.lower().endswith(VOCAB_FILE_SUFFIXES)
    if slash and org and repo and "/" not in repo and not file_like:
        return f" Did you mean {HF_PREFIX + key!r}? (a HuggingFace repository is named with {HF_PREFIX})"
    return closest(key, known)


def _vocab_file_in(directory: Path, cache: Cache) -> Path:
    """The vocabulary file ``load_vocab(directory)`` reads: :func:`~wordsplit.formats.find_vocab_file`'s
    one file, except that a ``tokenizer.json`` is read when each other candidate is a rank file
    of the same tokens (the directory ``save_vocab`` and ``wordsplit train`` write: the rank
    file carries no pattern and no specials, the tokenizer.json both) or a SentencePiece
    ``tokenizer.model`` (an HF repo of a SentencePiece model: its tokenizer.json is what
    transformers reads, and what ``hf:ORG/REPO`` loads). Rank files of other tokens beside it
    stay ambiguous, and find_vocab_file says so."""
    main = next((directory / name for name in ("tokenizer.json", "tokenizer.json.gz") if (directory / name).is_file()),
                None)
    if main is None:
        return find_vocab_file(directory)
    others = []
    beside_model = False
    for path in sorted(directory.iterdir()):
        if path == main or not path.is_file():
            continue
        try:
            loader = loader_for(path)
        except UnknownVocabError:
            continue  # not a vocabulary file
        named_otherwise = loader.name == "tokenizer.json" and path.name.removesuffix(".gz") != "tokenizer.json"
        if loader.name == "vocab.json" or named_otherwise:
            continue  # vocab.json beside a tokenizer.json, tokenizer_config.json...: as find_vocab_file counts them
        if loader.name == "sentencepiece" and path.name == "tokenizer.model":
            beside_model = True
            continue
        if loader.name != "tiktoken":
            return find_vocab_file(directory)  # another kind of file: ambiguous
        others.append(path)
    if not others:
        return main if beside_model else find_vocab_file(directory)
    vocab = _load_path(main, cache)
    for path in others:
        from ..formats.tiktoken import load_tiktoken

        try:
            same = dict(load_tiktoken(path, pattern=vocab.pattern).ranks) == dict(vocab.ranks)
        except (WordsplitError, ValueError):
            same = False
        if not same:
            return find_vocab_file(directory)
    return main


def download_vocab(
    name: str,
    *,
    cache_dir: str | os.PathLike | None = None,
    sha256: str | None = None,
    force: bool = False,
    max_mb: int | None = None,
    deadline: float | None = None,
) -> list[Path]:
    """Put the files of ``name`` and its parsed form in the disk cache, for later offline loads.

    This is ``wordsplit download NAME``. Files already cached are verified, not downloaded
    again, unless ``force`` (which refreshes a moving revision such as ``main``).

    Args:
        name: a registered name, ``hf:ORG/REPO[@REVISION]`` or a URL.
        cache_dir, sha256: as for :func:`load_vocab`.
        force: download again even when cached.
        max_mb, deadline: the largest file (MiB) and the most seconds one download may take
            (default ``WORDSPLIT_MAX_DOWNLOAD_MB``, else 1024; ``WORDSPLIT_DOWNLOAD_DEADLINE``,
            else 600).

    Returns:
        The cached files; none for a registered name whose file is bundled.

    Raises:
        UnknownVocabError: ``name`` is a path or unknown (there is nothing to download).
        ValueError: ``sha256`` is not 64 hex digits, or a limit is not positive; nothing was touched.
        DownloadError, OfflineError, HashMismatchError: as for :func:`load_vocab`.

    >>> download_vocab("cl100k_base")  # bundled: nothing to download
    []
    """
    name = name if name in VOCABS else (model_vocabulary(name) or name)
    key = VOCABS.canonical(name) if name in VOCABS else name
    _check_pin(key, sha256)
    with limited(max_mb=max_mb, deadline=deadline):
        cache = open_cache(cache_dir)
        offline = is_offline()
        if key in _NAMED:
            entry = _NAMED[key]
            bundled = BUNDLED_DATA.joinpath(entry.file).is_file()
            paths = [] if bundled else [fetch_pretrained(entry, cache, offline=offline, force=force)]
        elif key in VOCABS:
            paths = []  # a plug-in's name: its factory knows its files; loading below fetches them
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


def clear_cache(name: str | None = None, cache_dir: str | os.PathLike | None = None) -> list[Path]:
    """Remove the cache entries of ``name`` (every entry when None); returns the removed paths.

    ``name`` is what ``load_vocab`` takes: a registered name (its download and parsed
    vocabulary), ``hf:ORG/REPO`` (every revision) or ``hf:ORG/REPO@REVISION``, a URL, or a
    path (its parsed vocabulary).

    >>> import tempfile
    >>> clear_cache("hf:Qwen/Qwen3-8B", tempfile.mkdtemp())
    []
    """
    cache = open_cache(cache_dir)
    if name is None:
        return cache.clear()
    key = ALIASES.get(name, name)
    if key in _NAMED:
        keys, labels = (pretrained_key(_NAMED[key]),), (key,)
    else:
        keys, labels = cache_keys(name)
    return cache.clear(keys=keys, labels=labels)
