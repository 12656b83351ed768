"""The disk-cache subcommands: ``download`` and ``cache list | path | clear [NAME]``.

    wordsplit download hf:Qwen/Qwen3-8B          # tokenizer files into the cache, for offline use
    wordsplit download https://host/x.tiktoken --sha256 <hex>
    wordsplit cache list                          # one line per entry (and per download in progress)
    wordsplit cache                               # the same: listing is what `cache` does by default
    wordsplit cache path                          # where the cache is
    wordsplit cache clear hf:Qwen/Qwen3-8B        # that repo's entries (all of them without NAME)

Errors (404, 401, offline, a cache that cannot be changed...) are raised as WordsplitError and
printed as one line by :func:`wordsplit.cli.main`. ``cache clear`` counts the entries it
removed; the leftovers of interrupted downloads it also removes are not entries.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from ..store.cache import LOCK_TIMEOUT, list_entries, open_cache
from ..store.download import DEADLINE_ENV, DEFAULT_DEADLINE, DEFAULT_MAX_DOWNLOAD_BYTES, MAX_DOWNLOAD_MB_ENV
from ..store.sources import check_pin
from ..vocabs import download_vocab
from ..vocabs import clear_cache as clear


def cmd_download(args: argparse.Namespace) -> None:
    paths = download_vocab(args.name, cache_dir=args.cache_dir, sha256=args.sha256, force=args.force,
                           max_mb=args.max_size, deadline=args.deadline)
    if not paths:
        print(f"{args.name} is bundled with wordsplit: nothing to download", file=sys.stderr)
    for path in paths:
        print(path)


def _pin(text: str) -> str:
    """``--sha256``: 64 hex digits, checked before anything is touched (a usage error, status 2)."""
    try:
        return check_pin(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(kind: type):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _size(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"


def cmd_cache_list(args: argparse.Namespace) -> None:
    cache = open_cache(args.cache_dir)
    cache.sweep()  # the stale leftovers of interrupted runs go; downloads in progress are listed
    entries = list_entries(args.cache_dir)
    partial = [path for path in cache.leftovers() if not path.name.endswith(".lock")]
    if not entries and not partial:
        print(f"the cache at {cache.root} is empty", file=sys.stderr)
    for entry in entries:
        detail = [f"sha256 {entry.sha256[:12]}"] if entry.sha256 else []
        if entry.revision or entry.etag:
            detail.append(f"rev {entry.revision[:12]}" if entry.revision else f"etag {entry.etag[:12]}")
        print("\t".join([entry.kind, entry.name, _size(entry.size), " ".join(detail), entry.url or ""]).rstrip())
    for path in partial:
        with contextlib.suppress(OSError):  # it may have been committed meanwhile
            size = path.stat().st_size
            print("\t".join(["partial", path.relative_to(cache.root).as_posix(), _size(size),
                             "a download or write in progress, or interrupted less than "
                             f"{LOCK_TIMEOUT / 60:g} min ago"]))


def cmd_cache_path(args: argparse.Namespace) -> None:
    print(open_cache(args.cache_dir).root)


def cmd_cache_clear(args: argparse.Namespace) -> None:
    removed = clear(args.name, args.cache_dir)
    what = f"entries of {args.name}" if args.name else "entries"
    print(f"removed {len(removed)} {what} from {open_cache(args.cache_dir).root}")


def _add_cache_dir(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--cache-dir", default=None,
                   help="the cache directory (default: $WORDSPLIT_CACHE_DIR, else the user cache directory)")
    return p


def register(sub) -> None:
    p = _add_cache_dir(sub.add_parser(
        "download", help="download a vocabulary into the disk cache (for offline use)",
        epilog="example: wordsplit download hf:Qwen/Qwen3-8B"))
    p.add_argument("name", metavar="NAME", help="a registered name, hf:ORG/REPO[@REVISION] or an http(s) URL")
    p.add_argument("--sha256", default=None, type=_pin, help="the expected sha256 of a URL's content (64 hex digits)")
    p.add_argument("--force", action="store_true", help="download again even when cached (refreshes @main)")
    p.add_argument("--max-size", metavar="MIB", type=_positive(int), default=None,
                   help=f"the largest file to download, in MiB (default: ${MAX_DOWNLOAD_MB_ENV}, else "
                        f"{DEFAULT_MAX_DOWNLOAD_BYTES >> 20})")
    p.add_argument("--deadline", metavar="SECONDS", type=_positive(float), default=None,
                   help=f"the most time one download may take (default: ${DEADLINE_ENV}, else {DEFAULT_DEADLINE:g})")
    p.set_defaults(func=cmd_download)

    cache = sub.add_parser("cache", help="list, locate or clear the disk cache (without ACTION: list)",
                           usage="wordsplit cache [-h] [ACTION ...]",
                           description="Without ACTION, list the cache (as `wordsplit cache list`).",
                           epilog="example: wordsplit cache clear hf:Qwen/Qwen3-8B")
    # Without an action it lists the default cache (--cache-dir belongs to the actions: a
    # subcommand's defaults would overwrite the same option given before it).
    cache.set_defaults(func=cmd_cache_list, cache_dir=None)
    actions = cache.add_subparsers(dest="action", metavar="ACTION")
    _add_cache_dir(actions.add_parser("list", help="one line per entry: kind, name, size, hash, source")
                   ).set_defaults(func=cmd_cache_list)
    _add_cache_dir(actions.add_parser("path", help="print the cache directory")).set_defaults(func=cmd_cache_path)
    p = _add_cache_dir(actions.add_parser("clear", help="remove the entries of NAME, or every entry"))
    p.add_argument("name", metavar="NAME", nargs="?", help="a registered name, hf:ORG/REPO[@REVISION], a URL or a path")
    p.set_defaults(func=cmd_cache_clear)
