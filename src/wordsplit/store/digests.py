"""The hashes the cache and the loaders use, and why a warm load imports no OpenSSL.

Importing :mod:`hashlib` starts OpenSSL (about 16 M instructions, 4 ms: a tenth of loading a
registered vocabulary from the disk cache), so :func:`sha256_hash` imports it on first use: a
download, a pinned or parsed file, a vocabulary's :attr:`~wordsplit.Vocab.content_hash`. A
derived entry of the cache (a parsed vocabulary) is named and checked with :func:`checksum`,
zlib's two checksums, which the process has loaded already (gzip): its header holds the whole
recipe it was made from, which a read compares, so a shared name costs a rebuild and can never
give another recipe's vocabulary; the body's checksum catches a damaged file, as gzip's does.

>>> sha256_hash(b"abc").hexdigest()[:16]
'ba7816bf8f01cfea'
>>> checksum(b"abc")
'352441c2024d0127'
"""

from __future__ import annotations

import zlib

__all__ = ["checksum", "sha256_hash"]


def sha256_hash(data: bytes = b""):
    """``hashlib.sha256(data)``, importing :mod:`hashlib` on first use (see the module docs)."""
    import hashlib

    return hashlib.sha256(data)


def checksum(data: bytes) -> str:
    """CRC-32 and Adler-32 of ``data`` as 16 hex digits: a name and a check against damage,
    not a fingerprint against an adversary (see the module docs)."""
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
