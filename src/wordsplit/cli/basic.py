"""The basic subcommands: encode, decode, count, vocabs."""

from __future__ import annotations

import argparse
import sys

from .. import TokenizerOptions, list_vocabs, load_vocab
from ..errors import WordsplitError

DEFAULT_VOCAB = "qwen3"


def read_stdin() -> str:
    """All of stdin as UTF-8, exactly as sent (no newline translation: "\r\n" stays)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream without bytes underneath (tests, embedding)
        return sys.stdin.read()
    data = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WordsplitError(f"stdin is not valid UTF-8 ({exc}); convert it first, e.g. with iconv") from None


def _text(args: argparse.Namespace) -> str:
    """The TEXT argument, or all of stdin when it is absent."""
    if args.text is not None:
        return args.text
    return read_stdin()


def _tokenizer(args: argparse.Namespace):
    return TokenizerOptions(spanner=args.spanner, encoder=args.encoder, backend=args.backend).build(load_vocab(args.vocab))


def _special_policy(args: argparse.Namespace) -> dict:
    if args.special == "allow":
        return {"allowed_special": "all"}
    if args.special == "text":
        return {"disallowed_special": ()}
    return {}


def cmd_encode(args: argparse.Namespace) -> None:
    ids = _tokenizer(args).encode(_text(args), **_special_policy(args))
    print(" ".join(map(str, ids)))


def cmd_count(args: argparse.Namespace) -> None:
    print(_tokenizer(args).count(_text(args), **_special_policy(args)))


def cmd_decode(args: argparse.Namespace) -> None:
    raw = args.ids if args.ids else read_stdin().split()
    try:
        ids = [int(x) for x in raw]
    except ValueError as exc:
        raise WordsplitError(f"token ids must be integers: {exc}") from None
    sys.stdout.write(_tokenizer(args).decode(ids))
    sys.stdout.write("\n")


def cmd_vocabs(args: argparse.Namespace) -> None:
    for name in list_vocabs():
        vocab = load_vocab(name)
        alias = f" (alias of {vocab.name})" if vocab.name != name else ""
        print(f"{name:15} n_vocab={vocab.n_vocab:<7} specials={len(vocab.special_tokens):<5} "
              f"normalizer={vocab.normalizer}{alias}")


def add_vocab_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--vocab, --spanner, --encoder, --backend: shared by every subcommand that tokenizes.

    Any registered name is accepted, plug-ins' included (they are checked when the tokenizer is
    built, and an unknown one lists the known ones)."""
    p.add_argument("--vocab", default=DEFAULT_VOCAB, help=f"a registered name or a vocab file (default: {DEFAULT_VOCAB})")
    p.add_argument("--spanner", default="auto", help="spanner (pre-tokenizer) name (default: auto)")
    p.add_argument("--encoder", default="auto", help="encoder strategy (default: auto)")
    p.add_argument("--backend", default="auto", help="auto, native or python (default: auto)")
    return p


def add_text_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """TEXT (or stdin) and the --special policy."""
    p.add_argument("text", nargs="?", help="the text (default: read stdin)")
    p.add_argument("--special", choices=["raise", "allow", "text"], default="raise",
                   help="special-token literals in the text: raise an error (default), "
                        "allow them as special tokens, or encode them as plain text")
    return p


def register(sub) -> None:
    p = add_text_options(add_vocab_options(sub.add_parser(
        "encode", help="print the token ids of TEXT", epilog='example: wordsplit encode "hello world"')))
    p.set_defaults(func=cmd_encode)
    p = add_text_options(add_vocab_options(sub.add_parser(
        "count", help="print the number of tokens of TEXT", epilog="example: wordsplit count < file.txt")))
    p.set_defaults(func=cmd_count)
    p = add_vocab_options(sub.add_parser("decode", help="print the text of token ids",
                                         epilog="example: wordsplit decode 14990 1879"))
    p.add_argument("ids", nargs="*", help="token ids (default: read whitespace-separated ids from stdin)")
    p.set_defaults(func=cmd_decode)
    p = sub.add_parser("vocabs", help="list the registered vocabularies", epilog="example: wordsplit vocabs")
    p.set_defaults(func=cmd_vocabs)
