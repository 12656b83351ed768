"""The last step every generator script in tools/ shares: write the files it made, or with
``--check`` compare them with the files in the repository and exit 1 when one is stale (the
tests run the generators so, and a stale file fails them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(files: Mapping[Path, bytes], *, check: bool, command: str) -> int:
    """Write ``files`` (path → content), or with ``check`` compare them; the exit status.

    ``command`` is what the message tells the reader to run to refresh a stale file.
    """
    if check:
        stale = [path for path, data in files.items() if not path.is_file() or path.read_bytes() != data]
        if stale:
            shown = ", ".join(str(path.relative_to(ROOT)) for path in stale)
            print(f"stale: {shown}; run {command}", file=sys.stderr)
            return 1
        return 0
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0
