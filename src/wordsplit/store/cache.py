"""The disk cache: downloaded vocabulary files, and the parsed vocabularies derived from them.

The directory is ``WORDSPLIT_CACHE_DIR`` when set, else the user cache directory for wordsplit:
``$XDG_CACHE_HOME/wordsplit`` or ``~/.cache/wordsplit`` on Linux, ``platformdirs.user_cache_dir``
elsewhere. Its layout::

    downloads/pretrained/cl100k_base.tiktoken          a registered vocabulary's official file
    downloads/hf/Qwen--Qwen3-8B/main/tokenizer.json    a HuggingFace file at a revision
    downloads/url/<sha256(url)[:16]>/x.tiktoken        a file downloaded from a URL
    downloads/.../<file>.meta.json                     its record: url, revision, commit, etag,
                                                       size, sha256, download time
    downloads/.../<file>.lock                          held while one process downloads <file>
    derived/<key>.vocab                                a parsed vocabulary (see derived.py)

What it does:

* resolves the directory; when it cannot be written, falls back to a private temporary one
  (with one warning) and still reads the entries the unwritable one holds;
* finds entries and verifies them on every read: size and sha256 against their record and
  against their pin; a bad file is removed and raises :class:`HashMismatchError`, and nothing
  else is touched;
* commits a new entry atomically (a temporary file ``os.replace``\\ d into place, the record
  written last, so a file without its record is not an entry), and serializes the processes
  that download the same file with a lock file;
* lists and clears entries (:func:`list_entries`, :meth:`Cache.clear`), removing only files it
  made (a derived entry carries its header; anything else in ``derived/`` is left alone, even
  when ``derived/`` is a symlink to a directory shared with other files);
* cleans up after interrupted runs (:meth:`Cache.sweep`): a temporary file or lock file whose
  holder is gone (its lock is free) and that is older than :data:`LOCK_TIMEOUT` is removed
  before the next download and by ``wordsplit cache list`` / ``clear``; the leftovers of the
  file about to be downloaded are removed as soon as its lock is taken.

What it does not do: talk to the network (:mod:`~wordsplit.store.download`), decide which
files a name needs (:mod:`~wordsplit.store.sources`), or define the parsed-vocabulary format
(:mod:`~wordsplit.store.derived`): it is the bottom of the store and imports none of them.

>>> import tempfile
>>> cache = open_cache(tempfile.mkdtemp())
>>> cache.verified("url/0123/x.tiktoken") is None  # nothing downloaded yet
True
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
import warnings
from pathlib import Path, PurePosixPath
from typing import Iterator, NamedTuple

from ..errors import CacheError, DownloadError, HashMismatchError
from .digests import sha256_hash

__all__ = [
    "CACHE_DIR_ENV", "Cache", "CacheEntry", "default_cache_dir", "is_derived_entry", "list_entries", "open_cache",
    "read_header",
]


def log():
    """The ``wordsplit.cache`` logger; logging is imported on first use (it costs ~5 ms of
    import time, and only failure paths log)."""
    import logging

    return logging.getLogger("wordsplit.cache")

CACHE_DIR_ENV = "WORDSPLIT_CACHE_DIR"
DOWNLOADS = "downloads"
DERIVED = "derived"
RECORD_SUFFIX = ".meta.json"
LOCK_SUFFIX = ".lock"
# How long a process waits for another one that downloads the same file. A download is itself
# bounded by its timeouts and retries, so reaching this means a stuck process, not a slow one.
LOCK_TIMEOUT = 600.0
_LOCK_POLL = 0.05


def default_cache_dir() -> Path:
    """``WORDSPLIT_CACHE_DIR`` if set, else the platform's user cache directory for wordsplit.

    >>> isinstance(default_cache_dir(), Path)
    True
    """
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    if sys.platform.startswith("linux"):
        # The XDG base directory rule, which is what platformdirs answers on Linux: importing
        # platformdirs (and the tempfile module it imports) would cost a first load_vocab
        # about as long as building a tokenizer. Elsewhere the platform's own rules apply.
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base, "wordsplit")
    import platformdirs

    return Path(platformdirs.user_cache_dir("wordsplit"))


def _tempfile():
    """The ``tempfile`` module, imported on first write: a load that only reads the cache (every
    warm load) never needs it, and importing it costs milliseconds."""
    import tempfile

    return tempfile


class CacheEntry(NamedTuple):
    """One entry of the cache, as :func:`list_entries` reports it.

    ``kind`` is ``"download"`` (``name`` is its key, e.g. ``hf/Qwen--Qwen3-8B/main/tokenizer.json``)
    or ``"derived"`` (``name`` is the vocabulary it was parsed from: a registered name,
    ``hf:ORG/REPO@REVISION``, a URL or a path).
    """

    kind: str
    name: str
    path: Path
    size: int
    sha256: str | None = None
    url: str | None = None  # where a download came from; a derived entry's source
    revision: str | None = None  # the commit (or else the revision) of a HuggingFace download
    etag: str | None = None


class Cache:
    """One resolved cache: ``root`` receives new entries; ``roots`` are searched, in order.

    ``roots`` is ``(root,)``, or, after a fallback, ``(temporary root, unwritable root)`` so
    that entries already in the unwritable directory still serve reads.
    """

    def __init__(self, root: Path, *, read_only: tuple[Path, ...] = ()) -> None:
        self.root = root
        self.roots = (root, *read_only)

    def __repr__(self) -> str:
        return f"Cache({str(self.root)!r})"

    # -- downloads --------------------------------------------------------------------------

    def download_path(self, key: str, root: Path | None = None) -> Path:
        """Where the download ``key`` (a relative POSIX path) lives under ``root``."""
        parts = PurePosixPath(key).parts
        if not parts or any(part in ("", ".", "..") for part in parts) or PurePosixPath(key).is_absolute():
            # Keys are built from validated repo ids and hashes; this only guards the layout.
            raise ValueError(f"invalid cache key {key!r}")
        return (root or self.root).joinpath(DOWNLOADS, *parts)

    def find(self, key: str) -> Path | None:
        """The first copy of ``key`` whose file and record both exist, else None."""
        for root in self.roots:
            path = self.download_path(key, root)
            if path.is_file() and _record_path(path).is_file():
                return path
        return None

    def verified(self, key: str, sha256: str | None = None, *, what: str | None = None) -> Path | None:
        """The path of ``key`` after checking its size and sha256, or None when it is absent.

        Args:
            key: the entry's key.
            sha256: the pin the content must have (a registered vocabulary's, or ``sha256=``
                given with a URL); without it the entry is checked against its own record.
            what: how messages name the file.

        Raises:
            HashMismatchError: the content differs from its record or its pin; the entry was
                removed (nothing else), so the next load downloads it again.
        """
        path = self.find(key)
        if path is None:
            return None
        try:
            record = read_record(path)
            expected_size, expected_sha = int(record["size"]), str(record["sha256"])
        except (OSError, ValueError, KeyError, TypeError):
            # A record that cannot be read means an interrupted commit: the entry does not exist.
            log().debug("ignoring %s: unreadable record", path)
            return None
        digest, size = sha256_file(path)
        if (size, digest) == (expected_size, expected_sha) and sha256 in (None, digest):
            return path
        removed = self.remove(path)
        wanted = sha256 if sha256 not in (None, digest) else expected_sha
        raise HashMismatchError(
            f"the cached {what or key} ({path}) has sha256 {digest} ({size} bytes), but {wanted} was expected; "
            + ("it was removed (no other cache entry was touched), so loading it again downloads it again"
               if removed else "it could not be removed (read-only cache directory): delete it by hand")
        )

    def remove(self, path: Path) -> bool:
        """Delete one download and its record; True when both are gone."""
        try:
            self._unlink_entry(path)
        except OSError as exc:
            log().debug("could not remove %s: %s", path, exc)
            return False
        return True

    def temp_path(self, key: str) -> Path:
        """A new, empty temporary file beside where ``key`` will be committed."""
        final = self.download_path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, name = _tempfile().mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
        os.close(fd)
        return Path(name)

    def commit(self, key: str, temp: Path, record: dict) -> Path:
        """Move a complete, verified temporary file into place as ``key``, then write its record."""
        final = self.download_path(key)
        with contextlib.suppress(FileNotFoundError):
            # A re-download: an old record beside the new file would make it look corrupt.
            _record_path(final).unlink()
        os.replace(temp, final)
        atomic_write(_record_path(final), json.dumps(record, indent=1, sort_keys=True).encode())
        return final

    def update_record(self, path: Path, fields: dict) -> None:
        """Add ``fields`` to the record of the download at ``path`` (atomically; the file and
        its size and hash are unchanged).

        Raises:
            OSError: the record cannot be read or written (a read-only cache).
        """
        try:
            record = read_record(path)
        except ValueError as exc:
            raise OSError(f"unreadable record of {path}: {exc}") from None
        atomic_write(_record_path(path), json.dumps({**record, **fields}, indent=1, sort_keys=True).encode())

    @contextlib.contextmanager
    def lock(self, key: str, *, timeout: float | None = None) -> Iterator[None]:
        """Hold the lock of ``key``: one process at a time downloads a given file.

        The OS releases the lock when its holder dies, so a stale lock file does no harm.

        Raises:
            DownloadError: another process held it for longer than ``timeout`` seconds.
        """
        path = self.download_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = path.with_name(path.name + LOCK_SUFFIX)
        deadline = time.monotonic() + (LOCK_TIMEOUT if timeout is None else timeout)
        while True:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                while not _try_lock(fd):
                    if time.monotonic() > deadline:
                        raise DownloadError(
                            f"another process has been downloading {key} for too long (lock {lock_path}); "
                            "stop it, or try again when it has finished"
                        )
                    time.sleep(_LOCK_POLL)
                if _same_file(fd, lock_path):
                    break
                # A sweep removed this lock file while it was free: lock the one now in place.
                _unlock(fd)
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        try:
            # The leftovers of this file are from runs that died holding this lock: not ours, not live.
            self._remove_temps(path)
            yield
        finally:
            _unlock(fd)
            os.close(fd)

    # -- derived entries ----------------------------------------------------------------------

    def derived_path(self, key: str, root: Path | None = None) -> Path:
        """Where the derived entry ``key`` (a hex digest) lives under ``root``."""
        return (root or self.root) / DERIVED / f"{key}.vocab"

    # -- leftovers of interrupted runs -------------------------------------------------------

    def leftovers(self) -> list[Path]:
        """The temporary and lock files under ``root``: downloads in progress, or the remains of
        runs that were interrupted (see :meth:`sweep`)."""
        found = []
        for top in (self.root / DOWNLOADS, self.root / DERIVED):
            for directory, _, names in os.walk(top):
                found += [Path(directory, name) for name in names if _is_temp(name) or name.endswith(LOCK_SUFFIX)]
        return sorted(found)

    def sweep(self, *, older_than: float = LOCK_TIMEOUT) -> list[Path]:
        """Remove the leftovers that are stale: their holder is gone (the lock of their file is
        free) and they were last written more than ``older_than`` seconds ago. Returns them.

        A download writes its temporary file as bytes arrive and holds its lock until it ends,
        so neither test can remove a live download's files.

        >>> import tempfile
        >>> open_cache(tempfile.mkdtemp()).sweep()
        []
        """
        removed = []
        cutoff = time.time() - older_than
        for path in self.leftovers():
            with contextlib.suppress(OSError):  # another process may be sweeping too
                if path.lstat().st_mtime <= cutoff and _remove_if_free(path):
                    removed.append(path)
        if removed:
            log().info("removed %d leftover file(s) of interrupted runs from %s", len(removed), self.root)
        return removed

    def _remove_temps(self, path: Path) -> None:
        """Remove the temporary files of the download ``path`` (and of its record): called with
        its lock held, so their writers are gone."""
        for name in (path.name, _record_path(path).name):
            for temp in path.parent.glob(f".{glob_escape(name)}.*{TEMP_SUFFIX}"):
                if _temp_target(temp) == path.parent / name:
                    with contextlib.suppress(OSError):
                        temp.unlink()

    # -- listing ------------------------------------------------------------------------------

    def entries(self) -> list[CacheEntry]:
        """Every download and derived entry of every root."""
        found = []
        for root in self.roots:
            downloads = root / DOWNLOADS
            for record_path in sorted(downloads.rglob(f"*{RECORD_SUFFIX}")) if downloads.is_dir() else []:
                path = record_path.with_name(record_path.name[: -len(RECORD_SUFFIX)])
                try:
                    record = read_record(path)
                except (OSError, ValueError):
                    continue
                found.append(CacheEntry(
                    kind="download", name=path.relative_to(downloads).as_posix(), path=path,
                    size=record.get("size", 0), sha256=record.get("sha256"), url=record.get("url"),
                    revision=record.get("commit") or record.get("revision"), etag=record.get("etag"),
                ))
            derived = root / DERIVED
            for path in sorted(derived.glob("*.vocab")) if derived.is_dir() else []:
                header = read_header(path)
                if header is not None:
                    found.append(CacheEntry(kind="derived", name=str(header.get("label")), path=path,
                                            size=path.stat().st_size, url=header.get("source")))
        return found

    def clear(self, *, keys: tuple[str, ...] | None = None, labels: tuple[str, ...] = ()) -> list[Path]:
        """Remove entries from ``root`` (the writable directory); returns the entries removed.

        Only files the cache made are removed: downloads with their records, derived entries
        (files that carry the derived header), and the temporary and lock files of runs that
        are gone. A download in progress in another process keeps its files. Directories left
        empty are removed; a symlinked ``downloads/`` or ``derived/`` is cleared through, not
        removed.

        Args:
            keys: download keys or key prefixes (a directory such as ``hf/Qwen--Qwen3-8B``);
                None removes every entry, downloads and derived.
            labels: derived entries whose label is one of these, or starts with one followed
                by ``@`` (every revision of a repo).

        Raises:
            CacheError: a file could not be removed (permissions, a read-only disk...).
        """
        try:
            removed = self._clear_downloads(keys)
            derived = self.root / DERIVED
            for path in sorted(derived.glob("*.vocab")) if derived.is_dir() else []:
                header = read_header(path)
                if header is None:
                    continue  # not ours: derived/ may be a directory shared with other files
                label = str(header.get("label"))
                if keys is None or any(label == want or label.startswith(want + "@") for want in labels):
                    path.unlink()
                    removed.append(path)
            if keys is None:
                for temp in sorted(derived.glob(f".*{TEMP_SUFFIX}")) if derived.is_dir() else []:
                    temp.unlink()  # a derived entry being written elsewhere is only not stored
        except OSError as exc:
            where = exc.filename or self.root
            raise CacheError(
                f"could not clear the cache entry {where}: {exc.strerror or exc}; check the permissions of "
                f"{self.root} (or remove the files by hand)"
            ) from None
        return removed

    def _clear_downloads(self, keys: tuple[str, ...] | None) -> list[Path]:
        """Remove the downloads under ``keys`` (None: all) and their leftovers; returns the entries."""
        downloads = self.root / DOWNLOADS
        files: list[Path] = []
        directories: list[Path] = []
        for key in (None,) if keys is None else keys:
            top = downloads if key is None else self.download_path(key)
            if top.is_dir():
                for directory, _, names in os.walk(top):
                    directories.append(Path(directory))
                    files += [Path(directory, name) for name in names]
            elif key is not None and top.parent.is_dir():
                related = (top.name, _record_path(top).name, top.name + LOCK_SUFFIX)
                files += [path for path in top.parent.iterdir()
                          if path.name in related or (_is_temp(path.name) and _temp_target(path).name in related)]
        removed = []
        for path in sorted(set(files)):
            if path.name.endswith(RECORD_SUFFIX):
                entry = path.with_name(path.name[: -len(RECORD_SUFFIX)])
                self._unlink_entry(entry)
                removed.append(entry)
            elif _is_temp(path.name) or path.name.endswith(LOCK_SUFFIX):
                _remove_if_free(path)  # a download in progress keeps its files
            elif not _record_path(path).exists():
                _remove_if_free(path)  # a file whose record was never written: an interrupted commit
        for directory in sorted(set(directories), key=lambda d: len(d.parts), reverse=True):
            if not directory.is_symlink():
                with contextlib.suppress(OSError):  # not empty (a download in progress): kept
                    directory.rmdir()
        return removed

    def _unlink_entry(self, path: Path) -> None:
        """Delete one download and its record (the record first: without it, no entry)."""
        for target in (_record_path(path), path):
            with contextlib.suppress(FileNotFoundError):
                target.unlink()


# ---------------------------------------------------------------------------------------------
# Resolving the directory.

_OPENED: dict[Path, Cache] = {}


def open_cache(cache_dir: str | os.PathLike | None = None) -> Cache:
    """The cache in ``cache_dir`` (default: :func:`default_cache_dir`), checked once per process.

    When the directory cannot be created or written (a read-only home, a path through a
    file), the cache falls back to a private temporary directory and warns once; entries
    already in the unwritable directory are still read.
    """
    root = Path(cache_dir if cache_dir is not None else default_cache_dir()).expanduser().absolute()
    cache = _OPENED.get(root)
    if cache is None:
        cache = _OPENED[root] = _open(root)
    return cache


def _open(root: Path) -> Cache:
    try:
        root.mkdir(parents=True, exist_ok=True)
        _check_writable(root)
        return Cache(root)
    except OSError as exc:
        problem = f"wordsplit: the cache directory {root} is not writable ({exc.strerror or exc})"
        try:
            fallback = _fallback_dir()
        except OSError:
            # Not even a temporary directory: loads that need no download still work, uncached.
            warnings.warn(f"{problem}, nor is a temporary one; set {CACHE_DIR_ENV} to a writable directory.",
                          RuntimeWarning, stacklevel=4)
            return Cache(root)
        warnings.warn(f"{problem}; using {fallback} instead. Set {CACHE_DIR_ENV} to a writable directory.",
                      RuntimeWarning, stacklevel=4)
        return Cache(fallback, read_only=(root,) if root.is_dir() else ())


def _check_writable(directory: Path) -> None:
    """Raises ``OSError`` unless a file can be made in ``directory``: permission bits do not
    tell (root ignores them, ACLs, read-only mounts), so one is made and removed. Its random
    name is made here, not by tempfile, whose import would cost every first load."""
    probe = directory / f".probe-{os.getpid()}-{os.urandom(8).hex()}"
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.unlink(probe)


def _fallback_dir() -> Path:
    """A per-user temporary cache directory, or a fresh private one if that is not safe to use."""
    owner = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    path = Path(_tempfile().gettempdir()) / f"wordsplit-cache-{owner}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
        # In a shared /tmp another user could have created the name first (or a symlink).
        if stat.S_ISLNK(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
            raise PermissionError(f"{path} belongs to someone else")
        _check_writable(path)
        return path
    except OSError:
        return Path(_tempfile().mkdtemp(prefix="wordsplit-cache-"))


# ---------------------------------------------------------------------------------------------
# Files.


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


TEMP_SUFFIX = ".tmp"


def _is_temp(name: str) -> bool:
    """Whether ``name`` is a temporary file of :meth:`Cache.temp_path` or :func:`atomic_write`."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX) and name.count(".") >= 3


def _temp_target(temp: Path) -> Path:
    """The file a temporary file was to become: ``.NAME.XXXXXXXX.tmp`` → ``NAME``."""
    return temp.with_name(temp.name[1: -len(TEMP_SUFFIX)].rsplit(".", 1)[0])


def _lock_of(path: Path) -> Path | None:
    """The lock file that guards a download file (or its record, or their temporary files),
    or the lock itself; None for files no lock guards (derived entries)."""
    if path.name.endswith(LOCK_SUFFIX):
        return path
    if path.parent.name == DERIVED:
        return None
    target = _temp_target(path) if _is_temp(path.name) else path
    entry = target.with_name(target.name.removesuffix(RECORD_SUFFIX))
    return entry.with_name(entry.name + LOCK_SUFFIX)


def _remove_if_free(path: Path) -> bool:
    """Remove a file of a download when no live process holds its lock; True if removed.

    A lock file is removed while this process holds it, and :meth:`Cache.lock` checks after
    locking that the file it locked is still the one in place, so no two processes can ever
    hold the "same" lock through an old and a new file.
    """
    lock = _lock_of(path)
    if lock is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:  # no lock file: nobody holds it
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True
    try:
        if not _try_lock(fd):
            return False
        try:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open ``fd`` is the file now at ``path``."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def glob_escape(text: str) -> str:
    """``text`` with glob's special characters escaped (``[``, ``*``, ``?``)."""
    import glob

    return glob.escape(text)


def read_record(path: Path) -> dict:
    """The record of the download at ``path`` (its url, revision, etag, size, sha256...)."""
    record = json.loads(_record_path(path).read_bytes())
    if not isinstance(record, dict):
        raise ValueError(f"{_record_path(path)}: not a JSON object")
    return record


def sha256_file(path: Path) -> tuple[str, int]:
    """``(hex sha256, size)`` of a file, read in chunks."""
    digest = sha256_hash()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def read_checked(path: Path, sha256: str) -> bytes:
    """The bytes of a cache entry, read once and checked against ``sha256`` (the hash it was
    verified with, which keys its parsed entry): a file replaced since it was verified is never
    parsed under the old hash.

    Raises:
        HashMismatchError: the content is no longer ``sha256``.
    """
    from ..formats.files import read_raw  # here: only the loads of cached files need it

    data = read_raw(path)
    if sha256_hash(data).hexdigest() != sha256:
        raise HashMismatchError(f"{path} changed while it was loaded (its sha256 is no longer {sha256}); load it again")
    return data


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = _tempfile().mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


if os.name == "nt":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------
# The functions behind ``wordsplit cache``, and the load-time benchmark.


def list_entries(cache_dir: str | os.PathLike | None = None) -> list[CacheEntry]:
    """Every entry of the cache (downloads first, then derived), for ``wordsplit cache list``.

    >>> import tempfile
    >>> list_entries(tempfile.mkdtemp())
    []
    """
    return open_cache(cache_dir).entries()


# A derived entry starts with this magic and a length-prefixed JSON header (the rest of its
# format belongs to derived.py); the cache reads only the header, to list and clear entries.
DERIVED_MAGIC = b"wordsplit-vocab\n"


def is_derived_entry(path: Path) -> bool:
    """Whether the file at ``path`` starts with the derived-entry magic (reads 16 bytes).

    Raises:
        OSError: it cannot be read.
    """
    with open(path, "rb") as f:
        return f.read(len(DERIVED_MAGIC)) == DERIVED_MAGIC


def read_header(path: Path) -> dict | None:
    """The header of the derived entry at ``path``, or None when it is not one."""
    try:
        with open(path, "rb") as f:
            start = f.read(len(DERIVED_MAGIC) + 4)
            if len(start) != len(DERIVED_MAGIC) + 4 or not start.startswith(DERIVED_MAGIC):
                return None
            head = f.read(int.from_bytes(start[len(DERIVED_MAGIC):], "little"))
        header = json.loads(head)
    except (OSError, ValueError):
        return None
    return header if isinstance(header, dict) else None
