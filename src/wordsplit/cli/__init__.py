"""The ``wordsplit`` command line.

    wordsplit encode "hello world"            # 14990 1879   (Qwen3 by default)
    echo -n "hello world" | wordsplit encode --vocab cl100k_base
    wordsplit decode 14990 1879               # hello world
    wordsplit count --vocab o200k_base < file.txt
    wordsplit vocabs
    wordsplit explain hello                   # the BPE merge trace, pass by pass
    wordsplit show --file notes.txt --html notes.html
    wordsplit compare "some text" --vocab qwen3,cl100k_base,o200k_base
    wordsplit encode-file corpus.jsonl --out train.bin --eos
    wordsplit bench notes.txt --vocab cl100k_base --encoder heap-merge,backtrack
    wordsplit download hf:Qwen/Qwen3-8B       # into the verified disk cache
    wordsplit cache list

Each group of subcommands lives in its own module with a ``register(subparsers)`` function;
this module builds the parser from them and turns user errors (unknown vocab, bad id,
disallowed special token...) into one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .. import __version__
from ..errors import DisallowedSpecialError, WordsplitError
from . import basic, bench, cache, encode_file, train, views

COMMAND_MODULES = [basic, views, encode_file, bench, cache, train]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wordsplit", description="Exact byte-level BPE token ids for Qwen3 and OpenAI vocabularies."
    )
    parser.add_argument("--version", action="version", version=f"wordsplit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 user error)."""
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except DisallowedSpecialError as exc:
        print(f"wordsplit: error: {exc} (on the command line: --special allow, or --special text)", file=sys.stderr)
        return 2
    except (WordsplitError, FileNotFoundError, ValueError) as exc:
        print(f"wordsplit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `wordsplit encode ... | head` closed the pipe; not an error
        return 0
    return 0
