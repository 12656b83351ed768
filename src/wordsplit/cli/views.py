"""The viewing subcommands: explain, show, compare.

    wordsplit explain hello                       # the model's steps for each piece
    wordsplit show --file notes.txt --ids         # tokens in alternating colours, with ids
    wordsplit show "hello world" --html out.html  # the same view as a standalone web page
    wordsplit compare --file notes.txt --vocab qwen3,cl100k_base,o200k_base

Each reads TEXT, ``--file F`` (UTF-8, read exactly as stored) or stdin, and prints JSON with
``--json``. The rendering lives in :mod:`wordsplit.explain` and :mod:`wordsplit.apps.views`;
this module only parses arguments and reads and writes files. User errors (unreadable
file, TEXT and --file together...) raise :class:`~wordsplit.errors.WordsplitError`, which
the command line prints as one line.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys

from .. import TokenizerOptions
from ..errors import WordsplitError
from .basic import (
    _special_policy,
    _text,
    _tokenizer,
    add_text_options,
    add_vocab_option,
    add_vocab_options,
    load_vocab_arg,
)

DEFAULT_COMPARE_VOCABS = "qwen3,cl100k_base,o200k_base"


def _write_page(f, page: str) -> None:
    f.write(page)


def _remove_partial(path: str) -> None:
    """Delete a page left half-written at ``path``, if it is a regular file (not a FIFO or
    /dev/stdout, which are written through and have nothing to delete)."""
    try:
        if stat.S_ISREG(os.stat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass


def _print_json(data) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def cmd_explain(args: argparse.Namespace) -> None:
    from ..explain import explain, format_explanation

    # explain traces the Python engine with these components: no native tables are needed.
    tok = TokenizerOptions(backend="python").build(load_vocab_arg(args))
    expl = explain(tok, _text(args), **_special_policy(args))
    if args.json:
        _print_json(expl.to_dict())
    else:
        print(format_explanation(expl))


def cmd_show(args: argparse.Namespace) -> None:
    from ..apps.views import render_html, render_show, summarize, token_views

    tok = _tokenizer(args)
    text = _text(args)
    policy = _special_policy(args)
    if args.html is not None:
        page = render_html(tok, text, **policy)
        if args.html == "-":
            sys.stdout.write(page)
            return
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                try:
                    _write_page(f, page)
                except BaseException:
                    _remove_partial(args.html)  # Ctrl-C, a full disk: no half page is left
                    raise
        except OSError as exc:
            raise WordsplitError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        views = token_views(tok, text, **policy)
        print(f"wrote {args.html}: {summarize(text, [v.id for v in views])}")
    elif args.json:
        views = token_views(tok, text, **policy)
        summary = summarize(text, [v.id for v in views])
        _print_json({
            "vocab": tok.vocab.name,
            "tokens": [{"id": v.id, "text": v.text, "bytes": v.bytes.hex(), "kind": v.kind, "partial": v.partial}
                       for v in views],
            "summary": {"tokens": summary.tokens, "characters": summary.characters, "bytes": summary.bytes,
                        "bytes_per_token": summary.bytes_per_token},
        })
    else:
        color = {"auto": None, "always": True, "never": False}[args.color]
        print(render_show(tok, text, ids=args.ids, color=color, **policy))


def cmd_compare(args: argparse.Namespace) -> None:
    from ..apps.views import compare, render_compare

    names = [name.strip() for name in args.vocab.split(",") if name.strip()]
    if not names:
        raise WordsplitError("--vocab needs at least one vocabulary name, e.g. --vocab qwen3,cl100k_base")
    rows = compare([_text(args)], names, **_special_policy(args))
    print(render_compare(rows, as_json=args.json))


def _add_input_options(p: argparse.ArgumentParser, json_help: str) -> argparse.ArgumentParser:
    add_text_options(p)
    p.add_argument("--json", action="store_true", help=json_help)
    return p


def register(sub) -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "explain", help="show how the model encodes each piece of TEXT", formatter_class=formatter,
        description="Trace an encode: special/added tokens, normalization, the spanner's pieces, and for\n"
                    "each piece the model's steps: every merge pass of the reference BPE encoder (symbols,\n"
                    "each adjacent pair with its merge rank, the winner), or WordPiece's longest matches\n"
                    "(the candidates tried at each position and the token found).",
        epilog='examples:\n  wordsplit explain hello\n  wordsplit explain --vocab cl100k_base " erence"\n'
               "  echo -n 'hi<|im_end|>' | wordsplit explain --special allow --json",
    )
    add_vocab_option(p)
    _add_input_options(p, "print the trace as JSON (bytes as hex)").set_defaults(func=cmd_explain)

    p = add_vocab_options(sub.add_parser(
        "show", help="show TEXT with its token boundaries in colour", formatter_class=formatter,
        description="Print the text with each token on an alternating background (tokens separated by |\n"
                    "when not in colour), then a summary line; or write the same view as a web page.",
        epilog='examples:\n  wordsplit show "hello world" --ids\n  wordsplit show --file notes.txt --html notes.html\n'
               "  wordsplit show --vocab o200k_base --json < notes.txt",
    ))
    p.add_argument("--ids", action="store_true", help="show each token's id after it")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour: auto (when stdout is a terminal and NO_COLOR is unset; default), always, never")
    p.add_argument("--html", metavar="OUT", help="write a standalone HTML page to OUT ('-': stdout) instead")
    _add_input_options(p, "print the tokens (id, text, bytes as hex, kind) and the summary as JSON")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "compare", help="count the tokens of TEXT under several vocabularies", formatter_class=formatter,
        description="Token counts, bytes per token and the count relative to the first vocabulary.",
        epilog='examples:\n  wordsplit compare "hello world"\n'
               "  wordsplit compare --file notes.txt --vocab qwen3,cl100k_base,o200k_base,gpt2 --json",
    )
    p.add_argument("--vocab", default=DEFAULT_COMPARE_VOCABS,
                   help=f"comma-separated names or vocab files (default: {DEFAULT_COMPARE_VOCABS})")
    _add_input_options(p, "print the rows as a JSON list")
    p.set_defaults(func=cmd_compare)
