"""Where vocabulary files come from: official URLs, HuggingFace repos, plain URLs.

What it does: turns a name into the files it needs and makes sure they are in the disk cache,
downloading (under the entry's lock) only what is missing:

* a registered name whose bundled file is absent (a slim install): its official URL, with
  the host swapped for ``WORDSPLIT_OPENAI_ENDPOINT`` / ``WORDSPLIT_HF_ENDPOINT`` when set,
  verified against its pinned sha256;
* ``hf:ORG/REPO[@REVISION]``: ``tokenizer_config.json`` when the repo has one, and
  ``tokenizer.json`` from ``{endpoint}/{repo}/resolve/{revision}/``, else Mistral's
  ``tekken.json``, else a SentencePiece ``tokenizer.model``, else ``vocab.json`` +
  ``merges.txt``, all at the same commit (tokenizer.json first, as transformers' fast
  tokenizers read it where a repo has both it and a tokenizer.model). The
  endpoint is ``WORDSPLIT_HF_ENDPOINT``, else ``HF_ENDPOINT``, else https://huggingface.co;
  ``HF_TOKEN`` is sent as a bearer token, to that endpoint only;
* an ``http(s)://`` URL, optionally pinned by ``sha256=``.

A cached file is used without asking the server again (``main`` stays what it was when it was
downloaded; ``wordsplit download --force`` refreshes it). Offline mode (``offline=True``,
``WORDSPLIT_OFFLINE=1`` or ``HF_HUB_OFFLINE=1``) never touches the network and says what to
download when a file is missing.

What it does not do: parse the files (:mod:`~wordsplit.formats.hf`), move bytes
(:mod:`~wordsplit.store.download`), lay out the cache (:mod:`~wordsplit.store.cache`) or name
the hosts (:mod:`~wordsplit.store.hosts`).

>>> parse_hf("hf:Qwen/Qwen3-8B@refs/pr/1")
HubRef(repo='Qwen/Qwen3-8B', revision='refs/pr/1')
>>> hf_url(HubRef("Qwen/Qwen3-8B", "main"), "tokenizer.json", endpoint="https://huggingface.co")
'https://huggingface.co/Qwen/Qwen3-8B/resolve/main/tokenizer.json'
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, unquote, urlsplit
from pathlib import Path, PurePosixPath

from ..errors import DownloadError, OfflineError, UnknownVocabError
from .cache import LOCK_TIMEOUT, Cache, log, read_record
from .download import READ_TIMEOUT, download, download_limits, public_url
from .hosts import HF_ENDPOINT, OPENAI_ENDPOINT, hf_endpoint, openai_endpoint
from .digests import sha256_hash

if TYPE_CHECKING:
    from ..vocabs.pretrained import Pretrained

__all__ = [
    "HubRef", "cache_keys", "check_pin", "fetch_hf", "fetch_pretrained", "fetch_url", "hf_endpoint", "hf_url",
    "is_offline", "is_url", "openai_endpoint", "parse_hf", "pretrained_url",
]

HF_PREFIX = "hf:"
DEFAULT_REVISION = "main"
# Fetched first, when the repo has it: eos, bos and the chat template.
HF_CONFIG = "tokenizer_config.json"
# Asked for when a repo has no tokenizer.json: Mistral's newer repos hold only this file.
HF_TEKKEN = "tekken.json"
# Asked for next: a SentencePiece model (repos that ship no tokenizer.json for it).
HF_SENTENCEPIECE = "tokenizer.model"
# The set fetched when a repo has neither; vocab.json last, as its record completes the set.
HF_FALLBACK_FILES = ("merges.txt", "vocab.json")
_TRUE = ("1", "true", "yes", "on")
# HF repo ids: an optional namespace and a name, letters, digits, "-", "_", "." (no "..").
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?"
_REPO = re.compile(rf"(?:{_NAME}/)?{_NAME}")
_REVISION = re.compile(r"[A-Za-z0-9._/-]+")


def is_offline(offline: bool | None = None) -> bool:
    """``offline`` when given, else whether ``WORDSPLIT_OFFLINE`` or ``HF_HUB_OFFLINE`` is set to 1/true/yes/on."""
    if offline is not None:
        return bool(offline)
    return any(os.environ.get(var, "").strip().lower() in _TRUE for var in ("WORDSPLIT_OFFLINE", "HF_HUB_OFFLINE"))


def is_url(name: str) -> bool:
    """Whether ``name`` is an http(s) URL (rather than a registered name or a path)."""
    return name.startswith(("http://", "https://"))


def _hf_token(url: str) -> str | None:
    """HF_TOKEN, for URLs under the HF endpoint only: a token must never reach another host."""
    token = os.environ.get("HF_TOKEN") or None
    return token if token and url.startswith(hf_endpoint() + "/") else None


# ---------------------------------------------------------------------------------------------
# Registered names.


def pretrained_url(entry: "Pretrained") -> str:
    """The URL to download ``entry`` from: its official URL, on the overridden host if any.

    >>> from wordsplit.vocabs.pretrained import PRETRAINED
    >>> pretrained_url(PRETRAINED["cl100k_base"])
    'https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken'
    """
    for official, current in ((OPENAI_ENDPOINT, openai_endpoint()), (HF_ENDPOINT, hf_endpoint())):
        if entry.url.startswith(official + "/"):
            return current + entry.url[len(official):]
    return entry.url


def pretrained_key(entry: "Pretrained") -> str:
    # Keyed by the official file name, so p50k_base and p50k_edit share one download.
    return f"pretrained/{PurePosixPath(urlsplit(entry.url).path).name}"


def fetch_pretrained(entry: "Pretrained", cache: Cache, *, offline: bool, force: bool = False) -> Path:
    """The official file of a registered vocabulary, from the cache or downloaded and verified.

    Raises:
        OfflineError, DownloadError, HashMismatchError: see :func:`_ensure`.
    """
    url = pretrained_url(entry)
    return _ensure(
        cache, pretrained_key(entry), url, what=f"{entry.name} ({PurePosixPath(urlsplit(url).path).name})",
        sha256=entry.sha256, offline=offline, force=force,
        how=f"run `wordsplit download {entry.name}` where the network is available",
    )


# ---------------------------------------------------------------------------------------------
# HuggingFace repos.


class HubRef(NamedTuple):
    """A HuggingFace repo at a revision (a branch, tag or commit)."""

    repo: str
    revision: str = DEFAULT_REVISION

    @property
    def spec(self) -> str:
        """``hf:ORG/REPO@REVISION``: how the vocabulary is named in labels and messages."""
        return f"{HF_PREFIX}{self.repo}@{self.revision}"

    @property
    def key(self) -> str:
        """The cache directory of this revision: ``hf/ORG--REPO/REVISION`` (the revision URL-quoted)."""
        return f"hf/{self.repo.replace('/', '--')}/{quote(self.revision, safe='')}"


def parse_hf(name: str) -> HubRef:
    """Parse ``hf:ORG/REPO[@REVISION]``.

    Raises:
        UnknownVocabError: the repo id or the revision is not well formed.
    """
    body = name[len(HF_PREFIX):] if name.startswith(HF_PREFIX) else name
    repo, _, revision = body.partition("@")
    if not _REPO.fullmatch(repo) or ".." in repo or "--" in repo:
        raise UnknownVocabError(
            f"{name!r} is not a HuggingFace repo id: expected hf:ORG/REPO or hf:ORG/REPO@REVISION, "
            "e.g. hf:Qwen/Qwen3-8B"
        )
    if "@" in body and (not _REVISION.fullmatch(revision) or ".." in revision.split("/")):
        raise UnknownVocabError(f"{name!r}: {revision!r} is not a revision (a branch, tag or commit id)")
    return HubRef(repo, revision or DEFAULT_REVISION)


def hf_url(ref: HubRef, file: str, *, endpoint: str | None = None, revision: str | None = None) -> str:
    """``{endpoint}/{repo}/resolve/{revision}/{file}`` (the revision URL-quoted, as the Hub wants)."""
    return f"{endpoint or hf_endpoint()}/{ref.repo}/resolve/{quote(revision or ref.revision, safe='')}/{file}"


def fetch_hf(ref: HubRef, cache: Cache, *, offline: bool, force: bool = False) -> dict[str, Path]:
    """The tokenizer files of a HuggingFace repo: ``{"tokenizer.json": path}``,
    ``{"tekken.json": path}``, ``{"tokenizer.model": path}`` or ``{"vocab.json": ...,
    "merges.txt": ...}``, each with ``"tokenizer_config.json": path`` when the repo has one.

    A cached set is used without a request. Otherwise tokenizer_config.json is downloaded
    first (a 404 is not an error: the set then has none), then tokenizer.json, on a 404
    tekken.json (Mistral's repos that hold no tokenizer.json), then tokenizer.model (a
    SentencePiece model), and on a 404 of those too the vocab.json + merges.txt set, all at
    the commit the first answer named (so a moving branch cannot mix two revisions). The
    record of the last file lists the others (``requires``), so a set that lost a file is
    fetched again rather than used without it.

    Raises:
        OfflineError: offline and nothing cached.
        DownloadError: 401/403 (gated or private: set HF_TOKEN), 404 (names the files and the
            repo), network failures.
    """
    if not force:
        cached = _cached_hf(ref, cache, offline=offline)
        if cached:
            return cached
    how = f"run `wordsplit download {ref.spec}` where the network is available"
    files: dict[str, Path] = {}
    commit = None

    def ensure(file: str, *, optional: bool = False, last: bool = False) -> Path | None:
        nonlocal commit
        record = {"revision": ref.revision}
        if last:
            record["requires"] = sorted(files)
        try:
            path, got = _ensure_with_record(
                cache, f"{ref.key}/{file}", hf_url(ref, file, revision=commit), what=f"{file} of {ref.spec}",
                offline=offline, force=force, how=how, record=record,
            )
        except DownloadError as exc:
            if exc.status == 404 and optional:
                return None
            raise exc if exc.status == 404 else _hf_error(exc, ref) from None
        if last and got.get("requires") != record["requires"]:
            _set_requires(cache, path, record["requires"])  # cached before its set was recorded
        commit = commit or got.get("commit")
        files[file] = path
        return path

    ensure(HF_CONFIG, optional=True)
    if ensure("tokenizer.json", optional=True, last=True) is not None:
        return files
    if ensure(HF_TEKKEN, optional=True, last=True) is not None:
        return files
    if ensure(HF_SENTENCEPIECE, optional=True, last=True) is not None:
        return files
    try:
        for file in HF_FALLBACK_FILES:
            ensure(file, last=file == HF_FALLBACK_FILES[-1])
    except DownloadError as exc:
        if exc.status == 404:
            raise _not_found(exc, ref, file) from None
        raise
    return files


def _set_requires(cache: Cache, path: Path, requires: list[str]) -> None:
    """Record the set of a tokenizer.json cached by a version that fetched it alone, so the next
    load knows the set is complete without asking the server."""
    try:
        cache.update_record(path, {"requires": requires})
    except OSError as exc:  # a read-only cache: the set is fetched (from the cache) again next time
        log().debug("could not update the record of %s: %s", path, exc)


def _cached_hf(ref: HubRef, cache: Cache, *, offline: bool) -> dict[str, Path] | None:
    """The cached file set of ``ref``, verified, or None (nothing cached, or an incomplete set)."""
    for main in ("tokenizer.json", HF_TEKKEN, HF_SENTENCEPIECE, "vocab.json"):
        path = cache.verified(f"{ref.key}/{main}", what=f"{main} of {ref.spec}")
        if path is not None:
            break
    else:
        return None
    requires = read_record(path).get("requires")
    if requires is None:
        # A tokenizer.json cached alone, by a version that did not fetch its config: online, the
        # config is asked for once; offline, the file serves as it did.
        if not offline:
            return None
        config = cache.verified(f"{ref.key}/{HF_CONFIG}", what=f"{HF_CONFIG} of {ref.spec}")
        requires = [HF_CONFIG] if config is not None else []
    files = {main: path}
    for file in requires:
        companion = cache.verified(f"{ref.key}/{file}", what=f"{file} of {ref.spec}")
        if companion is None:  # a companion was removed: the set is incomplete, fetch it again
            return None
        files[file] = companion
    return files


def _hf_error(exc: DownloadError, ref: HubRef) -> DownloadError:
    """Add what to do to a 401/403 from the Hub (which also answers 401 for a repo that does not exist)."""
    if exc.status in (401, 403):
        page = f"{hf_endpoint()}/{ref.repo}"
        hint = (
            "The HF_TOKEN that was sent was refused: check that it is valid, can read this repo, and that "
            f"you accepted the repo's terms on {page}"
            if os.environ.get("HF_TOKEN")
            else f"The repo may be gated or private (or may not exist): set HF_TOKEN to a HuggingFace access "
                 f"token that can read it, after accepting its terms on {page}"
        )
        error = DownloadError(f"{exc}. {hint}")
        error.status = exc.status
        return error
    return exc


def _not_found(exc: DownloadError, ref: HubRef, file: str) -> DownloadError:
    error = DownloadError(
        f"none of tokenizer.json, tekken.json, tokenizer.model or vocab.json + merges.txt found in {ref.repo} at "
        f"revision {ref.revision} (HTTP 404 for tokenizer.json, tekken.json, tokenizer.model and {file} under "
        f"{hf_url(ref, '')}); check the repo id and the revision, "
        "and that the repo has a BPE tokenizer"
    )
    error.status = exc.status
    return error


# ---------------------------------------------------------------------------------------------
# Plain URLs.


def url_file_name(url: str) -> str:
    """The file name a URL's content is stored under (its last path segment).

    Raises:
        UnknownVocabError: the URL's path does not end in a file name.
    """
    name = unquote(PurePosixPath(urlsplit(url).path).name)
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise UnknownVocabError(
            f"cannot tell the format of {public_url(url)!r}: the URL must end in a file name, such as "
            "x.tiktoken, tokenizer.json or x.gguf, optionally followed by .gz"
        )
    return name


def _url_key(url: str) -> str:
    return f"url/{sha256_hash(public_url(url).encode()).hexdigest()[:16]}/{url_file_name(url)}"


_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def check_pin(sha256: str | None) -> str | None:
    """A sha256 pin, lowercased, or None; anything but 64 hex digits is refused before the cache
    is touched (a malformed pin must not make a good entry look corrupt).

    >>> check_pin("AB" * 32) == "ab" * 32
    True

    Raises:
        ValueError: not 64 hexadecimal digits.
    """
    if sha256 is None:
        return None
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise ValueError(f"sha256={sha256!r} is not a sha256: expected 64 hexadecimal digits "
                         "(e.g. the output of `sha256sum FILE`)")
    return sha256.lower()


def fetch_url(url: str, cache: Cache, *, sha256: str | None, offline: bool, force: bool = False) -> Path:
    """The content of ``url``, from the cache or downloaded (and checked against ``sha256``).

    Raises:
        ValueError: ``sha256`` is not 64 hex digits (nothing was touched).
        UnknownVocabError: the URL does not name a file of a known format.
        OfflineError, DownloadError, HashMismatchError: see :func:`_ensure`.
    """
    sha256 = check_pin(sha256)
    shown = public_url(url)
    pin = f" --sha256 {sha256}" if sha256 else ""
    return _ensure(cache, _url_key(url), url, what=url_file_name(url), sha256=sha256, offline=offline, force=force,
                   how=f"run `wordsplit download {shown}{pin}` where the network is available")


# ---------------------------------------------------------------------------------------------
# The shared step, and the keys for `wordsplit cache clear NAME`.


def _ensure(cache: Cache, key: str, url: str, **kwargs) -> Path:
    return _ensure_with_record(cache, key, url, **kwargs)[0]


def _ensure_with_record(cache: Cache, key: str, url: str, *, what: str, offline: bool, how: str, force: bool = False,
                        sha256: str | None = None, record: dict | None = None) -> tuple[Path, dict]:
    """The cache entry ``key``, downloaded from ``url`` under its lock when missing (or ``force``).

    Raises:
        OfflineError: offline, and the entry is not cached; says what to download and how.
        DownloadError: the download failed (see :func:`~wordsplit.store.download.download`).
        HashMismatchError: the cached or downloaded content is not what ``sha256`` pins.
    """
    path = None if force else cache.verified(key, sha256, what=what)
    if path is not None:
        return path, read_record(path)
    if offline:
        raise OfflineError(
            f"{what} is not in the cache ({cache.root}) and offline mode is on "
            "(offline=True, WORDSPLIT_OFFLINE or HF_HUB_OFFLINE): "
            f"{how}, with the same WORDSPLIT_CACHE_DIR, or turn offline mode off"
        )
    cache.sweep()  # the leftovers of interrupted runs, before adding files
    # Wait for another process's download of the same file as long as that download may take.
    with cache.lock(key, timeout=max(LOCK_TIMEOUT, download_limits().deadline + READ_TIMEOUT)):
        # Another process may have downloaded it while this one waited for the lock.
        path = None if force else cache.verified(key, sha256, what=what)
        if path is not None:
            return path, read_record(path)
        return download(cache, key, url, what=what, sha256=sha256, token=_hf_token(url), record=record)


def cache_keys(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(download keys or key prefixes, derived-entry labels) of ``hf:``, a URL or a path, for
    ``cache clear NAME`` (registered names: :func:`wordsplit.vocabs.clear_cache`).

    >>> cache_keys("hf:Qwen/Qwen3-8B")
    (('hf/Qwen--Qwen3-8B',), ('hf:Qwen/Qwen3-8B',))
    """
    if name.startswith(HF_PREFIX):
        ref = parse_hf(name)
        if "@" in name:
            return (ref.key,), (ref.spec,)
        return (f"hf/{ref.repo.replace('/', '--')}",), (f"{HF_PREFIX}{ref.repo}",)
    if is_url(name):
        return (_url_key(name),), (public_url(name),)
    return (), (str(Path(name).absolute()),)
