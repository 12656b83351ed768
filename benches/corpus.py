"""Where the benchmark corpora are: the directory given on the command line, else the one in
the ``WORDSPLIT_CORPUS_DIR`` environment variable.

The corpora are gzip'd UTF-8 files named ``<name>.txt.gz`` (``prose``, ``code``,
``multilingual``, ``adv_random_unicode``, ``adv_whitespace``, ``adv_repeat_a``); benches/README.md
(*Corpora*) says what each one holds and where its text comes from.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     os.environ[CORPUS_ENV] = d
...     corpus_dir(None) == Path(d)
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional

CORPUS_ENV = "WORDSPLIT_CORPUS_DIR"


def corpus_dir(given: Optional[Path], names: Iterable[str] = ()) -> Path:
    """``given``, else ``$WORDSPLIT_CORPUS_DIR``; exits with a message saying what to do when
    neither is set, or when the directory lacks one of the ``<name>.txt.gz`` of ``names``."""
    if given is None:
        env = os.environ.get(CORPUS_ENV)
        if not env:
            raise SystemExit(f"no corpus directory: pass CORPUS_DIR or set {CORPUS_ENV} to a directory holding "
                             "prose.txt.gz, code.txt.gz, multilingual.txt.gz, ... (see benches/README.md, Corpora)")
        given = Path(env)
    missing = [f"{name}.txt.gz" for name in names if not (given / f"{name}.txt.gz").is_file()]
    if not given.is_dir() or missing:
        raise SystemExit(f"corpus directory {given}: " + ("not a directory" if not given.is_dir() else
                         f"{', '.join(missing)} not there") + " (see benches/README.md, Corpora)")
    return given
