"""HTTP downloads into the disk cache: one file, verified, bounded, never half-written.

What it does: GET one URL with ``requests`` (timeouts; up to :data:`MAX_ATTEMPTS` attempts
with exponential backoff on connection errors, dropped bodies, 429 and 5xx, no new attempt
after :data:`RETRY_DEADLINE` seconds), stream the body into a temporary file beside its cache
entry while hashing it, check its length and its pinned sha256, and only then commit it (see
:meth:`Cache.commit <wordsplit.store.cache.Cache.commit>`). Two limits bound every download,
all attempts together (:func:`download_limits`): a size (1 GiB; ``WORDSPLIT_MAX_DOWNLOAD_MB``)
and a deadline (600 s; ``WORDSPLIT_DOWNLOAD_DEADLINE``), so a server that streams zeros forever
is cut off at the size and one that trickles a byte a second at the deadline; either raises
:class:`DownloadError`, removes the temporary file and (the caller's ``with`` block) releases
the lock. A body that is an HTML page (a login wall, a captive portal, an error page served
with status 200) is refused before it is stored, naming its Content-Type. A progress bar goes
to stderr for bodies over :data:`PROGRESS_MIN_BYTES` when stderr is a terminal. The bearer
token, when given, goes in the request header only: it is never logged, raised or recorded,
and ``requests`` drops it when a redirect leaves the host (HuggingFace's LFS CDN).

What it does not do: decide what to download, where, or whether the network may be used
(:mod:`~wordsplit.store.sources`), nor lock (the caller holds the entry's lock), nor parse
what it downloaded (a file that is not HTML but still not a vocabulary is found when it is
loaded, which removes it from the cache).

>>> retry_delays()[:3]
[0.5, 1.0, 2.0]
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from pathlib import Path
from typing import Iterator, Mapping, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from ..errors import DownloadError, HashMismatchError
from .cache import Cache
from .digests import sha256_hash

__all__ = [
    "DEADLINE_ENV", "DownloadLimits", "MAX_DOWNLOAD_MB_ENV", "download", "download_limits", "limited", "public_url",
    "retry_delays",
]


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

MAX_DOWNLOAD_MB_ENV = "WORDSPLIT_MAX_DOWNLOAD_MB"
DEADLINE_ENV = "WORDSPLIT_DOWNLOAD_DEADLINE"
#: The largest body a download may have: vocabulary files are tens of MB (Qwen3's
#: tokenizer.json is 11 MB); a GGUF model file of several GB needs a larger limit.
DEFAULT_MAX_DOWNLOAD_BYTES = 1 << 30
#: Seconds one download may take, every attempt and backoff included.
DEFAULT_DEADLINE = 600.0


class DownloadLimits(NamedTuple):
    """The bounds of one download: ``max_bytes`` of body, ``deadline`` seconds in all."""

    max_bytes: int
    deadline: float


_LIMITS: contextvars.ContextVar[DownloadLimits | None] = contextvars.ContextVar("wordsplit_download_limits",
                                                                                 default=None)


def _env_number(name: str, default: float, kind: type) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise ValueError(f"{name}={text!r}: expected a positive {'whole ' if kind is int else ''}number")
    return value


def download_limits() -> DownloadLimits:
    """The limits in force: those of :func:`limited` when inside it, else
    ``WORDSPLIT_MAX_DOWNLOAD_MB`` (MiB) and ``WORDSPLIT_DOWNLOAD_DEADLINE`` (seconds), else
    1 GiB and 600 s.

    >>> download_limits() == DownloadLimits(max_bytes=1 << 30, deadline=600.0)
    True

    Raises:
        ValueError: a variable that is not a positive number.
    """
    override = _LIMITS.get()
    if override is not None:
        return override
    return DownloadLimits(
        max_bytes=int(_env_number(MAX_DOWNLOAD_MB_ENV, DEFAULT_MAX_DOWNLOAD_BYTES >> 20, int)) << 20,
        deadline=float(_env_number(DEADLINE_ENV, DEFAULT_DEADLINE, float)),
    )


@contextlib.contextmanager
def limited(*, max_mb: int | None = None, deadline: float | None = None) -> Iterator[DownloadLimits]:
    """Downloads started inside use these limits (None keeps the one in force).

    >>> with limited(max_mb=4096) as limits:
    ...     download_limits().max_bytes == 4 << 30
    True

    Raises:
        ValueError: a limit that is not positive.
    """
    current = download_limits()
    for name, value in (("max_mb", max_mb), ("deadline", deadline)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be positive, got {value!r}")
    limits = DownloadLimits(
        max_bytes=current.max_bytes if max_mb is None else int(max_mb) << 20,
        deadline=current.deadline if deadline is None else float(deadline),
    )
    token = _LIMITS.set(limits)
    try:
        yield limits
    finally:
        _LIMITS.reset(token)


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
    limits = download_limits()
    started = time.monotonic()
    retry_deadline = started + RETRY_DEADLINE
    bounds = _Bounds(what, shown, limits, started + limits.deadline)
    with requests.Session() as session:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            temp = cache.temp_path(key)
            try:
                hops, digest, size = _attempt(session, url, temp, headers=headers, what=what, shown=shown,
                                              bounds=bounds)
                break
            except (_Retry, requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:
                _discard(temp)
                if isinstance(exc, requests.exceptions.SSLError):  # a certificate problem does not fix itself
                    raise DownloadError(f"{what}: TLS error talking to {shown}: {_reason(exc)}") from None
                bounds.check_time()  # a timeout at the deadline is the deadline, not a retry
                next_start = time.monotonic() + (delays[attempt - 1] if attempt < MAX_ATTEMPTS else 0)
                if attempt == MAX_ATTEMPTS or next_start > min(retry_deadline, bounds.deadline_at):
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


class _Bounds:
    """The size and time limits of one download (all attempts), checked as bytes arrive."""

    def __init__(self, what: str, shown: str, limits: DownloadLimits, deadline_at: float) -> None:
        self.what, self.shown, self.limits, self.deadline_at = what, shown, limits, deadline_at

    def read_timeout(self) -> float:
        """The socket timeout of the next attempt: a silent server is dropped by the deadline too."""
        return max(0.05, min(READ_TIMEOUT, self.deadline_at - time.monotonic()))

    def check_time(self) -> None:
        if time.monotonic() > self.deadline_at:
            raise DownloadError(
                f"{self.what}: the download from {self.shown} did not finish within {self.limits.deadline:g} s; "
                f"it was stopped and nothing was stored. On a slow connection, allow more time with "
                f"{DEADLINE_ENV}=SECONDS (or wordsplit download --deadline SECONDS)"
            )

    def check_size(self, size: int, declared: bool = False) -> None:
        if size > self.limits.max_bytes:
            sent = f"declares {size} bytes" if declared else f"sent more than {self.limits.max_bytes} bytes"
            raise DownloadError(
                f"{self.what}: {self.shown} {sent}, over the {self.limits.max_bytes >> 20} MiB limit of a "
                "download; it was stopped and nothing was stored. If the file really is that large, raise the "
                f"limit with {MAX_DOWNLOAD_MB_ENV}=MIB (or wordsplit download --max-size MIB)"
            )


def _attempt(session, url: str, temp: Path, *, headers: dict, what: str, shown: str, bounds: _Bounds):
    """One GET streamed into ``temp``; returns (the headers of each redirect hop, sha256, size)."""
    log().info("%s: downloading %s", what, shown)
    timeout = (min(CONNECT_TIMEOUT, bounds.read_timeout()), bounds.read_timeout())
    with session.get(url, headers=headers, stream=True, timeout=timeout) as response:
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
        if expected is not None:
            bounds.check_size(expected, declared=True)
        digest = sha256_hash()
        size = 0
        content_type = response.headers.get("Content-Type", "")
        start = b""  # the first bytes, to tell an HTML page (a trickled one arrives byte by byte)
        with open(temp, "wb") as f, _Progress(what, expected) as progress:
            for chunk in _chunks(response):
                if len(start) < _SNIFF:
                    start += chunk[:_SNIFF]
                    if len(start) >= _SNIFF:
                        _refuse_html(start, content_type, what=what, shown=shown)
                f.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                bounds.check_size(size)
                bounds.check_time()
                progress.update(size)
            f.flush()
            os.fsync(f.fileno())
        if len(start) < _SNIFF:
            _refuse_html(start, content_type, what=what, shown=shown)
        if expected is not None and size != expected:
            raise _Retry(f"the connection closed after {size} of {expected} bytes")
        # The Hub answers an LFS file with a redirect that carries its metadata; the CDN does not.
        return [r.headers for r in (*response.history, response)], digest.hexdigest(), size


def _chunks(response) -> Iterator[bytes]:
    """The body as it arrives: ``read1`` returns what one receive got, so a server that
    trickles bytes still lets the caller check the deadline after each (``iter_content`` waits
    for a whole chunk). urllib3's errors become requests' ones, as ``iter_content`` does."""
    import requests
    from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError, SSLError

    try:
        while chunk := response.raw.read1(_CHUNK, decode_content=True):
            yield chunk
    except ProtocolError as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from None
    except DecodeError as exc:
        raise requests.exceptions.ContentDecodingError(exc) from None
    except ReadTimeoutError as exc:
        raise requests.ConnectionError(exc) from None
    except SSLError as exc:
        raise requests.exceptions.SSLError(exc) from None


_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<!--")
_SNIFF = 512  # bytes looked at: room for a BOM and blank lines before the first tag


def _refuse_html(start: bytes, content_type: str, *, what: str, shown: str) -> None:
    """Raise when the body is an HTML page: what a login wall, a captive portal or a server's
    error page sends (sometimes with status 200). No vocabulary file starts with ``<``."""
    head = start.lstrip(b"\xef\xbb\xbf \t\r\n")[:32].lower()
    media = content_type.split(";")[0].strip().lower()
    if head.startswith(_HTML_STARTS) or (media in ("text/html", "application/xhtml+xml") and head.startswith(b"<")):
        raise DownloadError(
            f"{what}: {shown} sent an HTML page (Content-Type: {content_type or 'none'}), not the file: a login page, "
            "a captive portal or an error page. It was not stored; check the URL (and the network's sign-in page)"
        )


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
    from .._version import __version__

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
