"""Reading vocabulary files: gzip transparently, and the stem a vocabulary is named after.

>>> read_file("no-such-file.tiktoken")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
FileNotFoundError: vocabulary file not found: no-such-file.tiktoken
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from ..errors import VocabFormatError


def read_file(path: str | os.PathLike) -> bytes:
    """The bytes of ``path``, gunzipped when the name ends in ``.gz``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"vocabulary file not found: {path}") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise VocabFormatError(f"{path}: not a valid gzip file ({exc})") from None
    return data


def file_stem(path: str | os.PathLike) -> str:
    name = Path(path).name
    for suffix in (".gz", ".tiktoken", ".json"):
        name = name.removesuffix(suffix)
    return name
