"""HTTP downloads into the disk cache: one file, verified, with retries, never half-written.

What it does: GET one URL with ``requests`` (timeouts; up to :data:`MAX_ATTEMPTS` attempts
with exponential backoff on connection errors, dropped bodies, 429 and 5xx, bounded by
:data:`RETRY_DEADLINE` seconds), stream the body into a temporary file beside its cache entry
while hashing it, check its length and its pinned sha256, and only then commit it (see
:meth:`Cache.commit <wordsplit.store.cache.Cache.commit>`). A progress bar goes to stderr for
bodies over :data:`PROGRESS_MIN_BYTES` when stderr is a terminal. The bearer token, when
given, goes in the request header only: it is never logged, raised or recorded, and
``requests`` drops it when a redirect leaves the host (HuggingFace's LFS CDN).

What it does not do: decide what to download, where, or whether the network may be used
(:mod:`~wordsplit.store.sources`), nor lock (the caller holds the entry's lock).

>>> retry_delays()[:3]
[0.5, 1.0, 2.0]
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit, urlunsplit

from ..errors import DownloadError, HashMismatchError
from .cache import Cache

__all__ = ["download", "public_url", "retry_delays"]



def log():
    """The ``wordsplit.download`` logger (logging imported on first use: import time)."""
    import logging

    return logging.getLogger("wordsplit.download")

CONNECT_TIMEOUT = 10.0  # seconds to establish a connection
READ_TIMEOUT = 60.0  # seconds without a byte before giving up on an attempt
MAX_ATTEMPTS = 4
BACKOFF = 0.5  # seconds before the second attempt, doubled before each next one
MAX_BACKOFF = 8.0
RETRY_DEADLINE = 60.0  # no new attempt starts this many seconds after the first one
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
PROGRESS_MIN_BYTES = 1 << 20
_CHUNK = 1 << 16


class _Retry(Exception):
    """An attempt that failed in a way another attempt may fix (message says how)."""


def retry_delays() -> list[float]:
    """The sleeps between attempts: :data:`BACKOFF` doubled each time, capped at :data:`MAX_BACKOFF`."""
    return [min(BACKOFF * 2**i, MAX_BACKOFF) for i in range(MAX_ATTEMPTS - 1)]


def public_url(url: str) -> str:
    """``url`` without user:password, fit for messages, logs and cache records.

    >>> public_url("https://user:secret@example.com/x.tiktoken")
    'https://example.com/x.tiktoken'
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urlunsplit(parts._replace(netloc=host + (f":{parts.port}" if parts.port else "")))


def download(
    cache: Cache,
    key: str,
    url: str,
    *,
    what: str,
    sha256: str | None = None,
    token: str | None = None,
    record: Mapping | None = None,
) -> tuple[Path, dict]:
    """Download ``url`` into the cache entry ``key``; the caller holds the entry's lock.

    Args:
        cache: where the entry goes.
        key: the entry's key (see :mod:`~wordsplit.store.cache`).
        url: what to GET.
        what: how messages name the file (``"tokenizer.json of hf:Qwen/Qwen3-8B@main"``).
        sha256: the pinned hash of the content; None accepts any content (and records its hash).
        token: a bearer token for the Authorization header (HF_TOKEN), never stored.
        record: extra fields for the entry's record (revision...).

    Returns:
        The committed path and its record (url, etag, commit, size, sha256, downloaded_at).

    Raises:
        DownloadError: an HTTP error (``.status`` set; 401/403/404 and the like are not
            retried), or the network still failing after the retries.
        HashMismatchError: the content is not what ``sha256`` pins; nothing was stored.
    """
    import requests  # ~0.1 s to import: paid only when something is downloaded

    headers = {"User-Agent": _user_agent()}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    shown = public_url(url)
    delays = retry_delays()
    deadline = time.monotonic() + RETRY_DEADLINE
    with requests.Session() as session:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            temp = cache.temp_path(key)
            try:
                hops, digest, size = _attempt(session, url, temp, headers=headers, what=what, shown=shown)
                break
            except (_Retry, requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:
                _discard(temp)
                if isinstance(exc, requests.exceptions.SSLError):  # a certificate problem does not fix itself
                    raise DownloadError(f"{what}: TLS error talking to {shown}: {_reason(exc)}") from None
                if attempt == MAX_ATTEMPTS or time.monotonic() + delays[attempt - 1] > deadline:
                    raise DownloadError(
                        f"{what}: download from {shown} failed after {attempt} attempt(s): {_reason(exc)}. "
                        "Check the network connection and try again, or set WORDSPLIT_OFFLINE=1 to use only "
                        "the files already in the cache"
                    ) from None
                log().info("%s: attempt %d failed (%s); retrying in %.2g s",
                         what, attempt, _reason(exc), delays[attempt - 1])
                time.sleep(delays[attempt - 1])
            except requests.RequestException as exc:  # an invalid URL, too many redirects...
                _discard(temp)
                raise DownloadError(f"{what}: cannot download {shown}: {_reason(exc)}") from None
            except BaseException:
                _discard(temp)
                raise
    if sha256 is not None and digest != sha256:
        _discard(temp)
        raise HashMismatchError(
            f"{what}: the file downloaded from {shown} has sha256 {digest} ({size} bytes), but it is pinned to "
            f"{sha256}; it was not stored. The server sent different content (a changed file, a proxy or "
            "captive portal, or a wrong pin)"
        )
    full_record = {
        **(record or {}),
        "url": shown,
        "etag": _etag(hops),
        "commit": _header(hops, "X-Repo-Commit"),
        "size": size,
        "sha256": digest,
        "downloaded_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
    }
    try:
        path = cache.commit(key, temp, full_record)
    except BaseException:
        _discard(temp)
        raise
    log().info("%s: stored %s (%d bytes, sha256 %s)", what, path, size, digest)
    return path, full_record


def _attempt(session, url: str, temp: Path, *, headers: dict, what: str, shown: str):
    """One GET streamed into ``temp``; returns (the headers of each redirect hop, sha256, size)."""
    log().info("%s: downloading %s", what, shown)
    with session.get(url, headers=headers, stream=True, timeout=(CONNECT_TIMEOUT, READ_TIMEOUT)) as response:
        status = response.status_code
        if status in RETRY_STATUS:
            raise _Retry(f"HTTP {status}")
        if status >= 400:
            reason = f" {response.reason}" if response.reason else ""
            hint = "; check the URL" if status == 404 else ""
            error = DownloadError(f"{what}: HTTP {status}{reason} from {shown}{hint}")
            error.status = status
            raise error
        declared = response.headers.get("Content-Length", "")
        # With a Content-Encoding, requests decodes the body and the declared length is the encoded one.
        encoded = bool(response.headers.get("Content-Encoding"))
        expected = int(declared) if declared.isdigit() and not encoded else None
        digest = hashlib.sha256()
        size = 0
        with open(temp, "wb") as f, _Progress(what, expected) as progress:
            for chunk in response.iter_content(_CHUNK):
                f.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                progress.update(size)
            f.flush()
            os.fsync(f.fileno())
        if expected is not None and size != expected:
            raise _Retry(f"the connection closed after {size} of {expected} bytes")
        # The Hub answers an LFS file with a redirect that carries its metadata; the CDN does not.
        return [r.headers for r in (*response.history, response)], digest.hexdigest(), size


def _header(hops: list[Mapping[str, str]], name: str) -> str | None:
    """The first value of header ``name`` along the redirect hops."""
    return next((hop[name] for hop in hops if hop.get(name)), None)


def _etag(hops: list[Mapping[str, str]]) -> str | None:
    """The content's ETag: an HF LFS file's X-Linked-Etag (its sha256), else the final answer's ETag."""
    value = _header(hops, "X-Linked-Etag") or hops[-1].get("ETag")
    return value.removeprefix("W/").strip('"') if value else None


def _reason(exc: BaseException) -> str:
    """A short reason for an exception, without the request's headers (requests never puts them there)."""
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


def _discard(temp: Path) -> None:
    with contextlib.suppress(OSError):
        temp.unlink()


def _user_agent() -> str:
    from .. import __version__

    return f"wordsplit/{__version__}"


class _Progress:
    """A one-line progress bar on stderr, only for large bodies and only on a terminal."""

    def __init__(self, what: str, total: int | None) -> None:
        self.what = what
        self.total = total
        self.shown = total is not None and total >= PROGRESS_MIN_BYTES and sys.stderr.isatty()
        self.last = 0.0

    def __enter__(self) -> "_Progress":
        return self

    def update(self, done: int) -> None:
        now = time.monotonic()
        if self.shown and (now - self.last >= 0.1 or done == self.total):
            self.last = now
            fraction = done / self.total
            bar = "#" * int(30 * fraction)
            sys.stderr.write(f"\r{self.what}: [{bar:<30}] {fraction:4.0%} {done / 1e6:.1f}/{self.total / 1e6:.1f} MB")
            sys.stderr.flush()

    def __exit__(self, *exc) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
