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
    wordsplit encode-dataset data/ --out tokens/ --vocab qwen3 --format megatron --eos
    wordsplit bench notes.txt --vocab cl100k_base --encoder heap-merge,backtrack
    wordsplit download hf:Qwen/Qwen3-8B       # into the verified disk cache
    wordsplit cache list
    wordsplit playground                      # the tokenizer playground (WebAssembly) on 127.0.0.1

Each group of subcommands lives in its own module with a ``register(subparsers)`` function;
this module builds the parser from them and turns user errors (unknown vocab, bad id,
disallowed special token, any OSError...) into one line on stderr and exit status 2, and Ctrl-C
into "wordsplit: interrupted" and status 130, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from typing import Iterator, Optional, Sequence

from .. import __version__
from ..errors import DisallowedSpecialError, WordsplitError
from . import basic, bench, cache, encode_dataset, encode_file, playground, train, views

COMMAND_MODULES = [basic, views, encode_file, bench, cache, train, encode_dataset, playground]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wordsplit", description="Exact byte-level BPE token ids for Qwen3 and OpenAI vocabularies."
    )
    parser.add_argument("--version", action="version", version=f"wordsplit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


EXIT_USAGE = 2  # a user error: one line on stderr, as argparse exits for a bad option
EXIT_INTERRUPTED = encode_file.EXIT_INTERRUPTED  # 130: 128 + SIGINT, as a shell reports a Ctrl-C'd program


def os_error_message(exc: OSError) -> str:
    """An OSError in one line, naming its file: ``"vd/tokenizer.json: Is a directory"``.

    >>> os_error_message(IsADirectoryError(21, "Is a directory", "vd/tokenizer.json"))
    'vd/tokenizer.json: Is a directory'
    """
    if exc.strerror and exc.filename is not None:
        other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
        return f"{exc.filename}{other}: {exc.strerror}"
    return str(exc) or type(exc).__name__


# Both engines word a disallowed special token alike: what was found, then "; pass
# allowed_special=...". The command line keeps what was found and gives its own options.
PYTHON_SPECIAL_ADVICE = "; pass "
CLI_SPECIAL_ADVICE = "--special allow encodes it as a special token, --special text as plain text"


def disallowed_special_message(exc: DisallowedSpecialError) -> str:
    """The error in the command line's words.

    >>> from wordsplit.specials import disallowed_error
    >>> message = disallowed_special_message(disallowed_error("<|im_end|>"))
    >>> message.startswith("text contains the special token '<|im_end|>', which is disallowed; ")
    True
    >>> message.endswith("; --special allow encodes it as a special token, --special text as plain text")
    True
    """
    what = str(exc).split(PYTHON_SPECIAL_ADVICE, 1)[0]
    return f"{what}; {CLI_SPECIAL_ADVICE}"


# Signals that end a command the way Ctrl-C does (cleanup runs, temporary files are deleted):
# `kill`, a closed terminal. SIGINT already raises KeyboardInterrupt.
TERMINATING_SIGNALS = ("SIGTERM", "SIGHUP")


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM or SIGHUP while a command runs, so that its
    cleanup runs as for Ctrl-C. A BaseException, like KeyboardInterrupt: ``except Exception``
    must not swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame) -> None:
    # A second signal of the same kind kills at once: cleanup that hangs must not need SIGKILL.
    signal.signal(signum, signal.SIG_DFL)
    raise Terminated(signum)


@contextlib.contextmanager
def terminate_on_signals() -> Iterator[None]:
    """While in the block, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread.
    A signal that is ignored (``nohup`` ignores SIGHUP) stays ignored; elsewhere than in the
    main thread, nothing changes (only it may set handlers)."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in TERMINATING_SIGNALS:
            signum = getattr(signal, name, None)
            handler = None if signum is None else signal.getsignal(signum)
            if handler is None or handler is signal.SIG_IGN:
                continue  # not on this platform, set outside Python, or ignored on purpose
            previous[signum] = handler
            signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 user error, 130 interrupted).

    Every command ends here the same way: a user error (any WordsplitError or OSError) is one
    line on stderr and status 2; Ctrl-C is "wordsplit: interrupted" and status 130, SIGTERM and
    SIGHUP "wordsplit: terminated by SIGTERM" and 128 + the signal's number (commands that
    write files write them to temporary names first, deleted on the way out, so nothing
    partial is left).
    """
    try:
        args = build_parser().parse_args(argv)
        with terminate_on_signals():
            args.func(args)
    except KeyboardInterrupt:
        print("wordsplit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated as exc:
        print(f"wordsplit: terminated by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum
    except DisallowedSpecialError as exc:
        print(f"wordsplit: error: {disallowed_special_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `wordsplit encode ... | head` closed the pipe; not an error
        return 0
    except WordsplitError as exc:  # before OSError: DownloadError is both, with its own words
        # An error raised with `errors.advised` has its fix in the command line's words too.
        print(f"wordsplit: error: {getattr(exc, 'cli_message', exc)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"wordsplit: error: {os_error_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"wordsplit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0
