"""The basic subcommands: encode, decode, count, vocabs."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from .. import TokenizerOptions, list_vocabs, load_vocab
from ..spec import normalizer_name
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


def read_file(path: str) -> str:
    """The file at ``path`` as UTF-8, exactly as stored (``"-"``: stdin)."""
    if path == "-":
        return read_stdin()
    try:
        # newline="": keep \r\n as it is; the tokens of "\r\n" and "\n" differ.
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except UnicodeDecodeError as exc:
        raise WordsplitError(f"{path} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise WordsplitError(f"cannot read {path}: {exc.strerror or exc}") from None


def checked_text(text: str) -> str:
    """TEXT from the command line, refused when it is not UTF-8 or names an existing file.

    Python hands bytes that are not UTF-8 over as lone surrogates (``"\\udcff"`` for 0xff);
    encoding them would give U+FFFD's ids, not the bytes', so they are an error, as on stdin.
    A TEXT that names a file is ambiguous (``wordsplit count notes.txt`` meant the file):
    ``--file`` says which.

    >>> checked_text("hello")
    'hello'
    >>> checked_text("ab\\udcffcd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    wordsplit.errors.WordsplitError: TEXT is not valid UTF-8 (byte 0xff at character 2); convert it first, ...
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(text[exc.start])
        byte = f"byte 0x{bad - 0xDC00:02x}" if 0xDC80 <= bad <= 0xDCFF else f"lone surrogate U+{bad:04X}"
        raise WordsplitError(f"TEXT is not valid UTF-8 ({byte} at character {exc.start}); "
                             "convert it first, e.g. with iconv") from None
    if "\n" not in text and _is_file(text):
        raise WordsplitError(
            f"TEXT {text!r} is the name of a file; to tokenize the file, use --file {shlex.quote(text)}; "
            f"to tokenize these characters, send them on stdin (printf %s {shlex.quote(text)} | wordsplit ...)"
        )
    return text


def _is_file(text: str) -> bool:
    try:
        return os.path.isfile(text)
    except (OSError, ValueError):  # a name too long, a NUL: not a file
        return False


def _text(args: argparse.Namespace) -> str:
    """TEXT, the --file's content (``-``: stdin), or all of stdin when neither is given."""
    path = getattr(args, "file", None)
    if path is not None:
        if args.text is not None:
            raise WordsplitError("give the text either as TEXT or with --file, not both")
        return read_file(path)
    if args.text is not None:
        return checked_text(args.text)
    return read_stdin()


def load_vocab_arg(args: argparse.Namespace):
    """The vocabulary of --vocab, with --pattern for a rank file that carries no split pattern
    (a .tiktoken or tokenizer.model wordsplit does not recognize)."""
    if args.pattern is None:
        return load_vocab(args.vocab)
    from ..training import resolve_pattern

    if args.vocab in list_vocabs() or args.vocab.startswith("hf:"):
        raise WordsplitError(f"--pattern applies to rank files (.tiktoken, tokenizer.model) given by path, "
                             f"not to {args.vocab!r}, which has its own")
    try:
        return load_vocab(args.vocab, pattern=resolve_pattern(args.pattern)[0])
    except TypeError:  # a file that carries its own pattern (tokenizer.json, GGUF...)
        raise WordsplitError(f"--pattern applies to rank files (.tiktoken, tokenizer.model), not to {args.vocab}, "
                             "which has its own pattern") from None


def _tokenizer(args: argparse.Namespace):
    options = TokenizerOptions(spanner=args.spanner, encoder=args.encoder, backend=args.backend)
    return options.build(load_vocab_arg(args))


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
    # Decoding looks ids up in the vocabulary: no spanner, encoder or backend takes part.
    sys.stdout.write(TokenizerOptions().build(load_vocab_arg(args)).decode(ids))
    sys.stdout.write("\n")


def cmd_vocabs(args: argparse.Namespace) -> None:
    for name in list_vocabs():
        vocab = load_vocab(name)
        alias = f" (alias of {vocab.name})" if vocab.name != name else ""
        # A normalizer with fields is listed by its kind: the listing stays one short line per
        # vocabulary; load_vocab(name).normalizer has it all.
        normalizer = normalizer_name(vocab.normalizer)
        print(f"{name:15} n_vocab={vocab.n_vocab:<7} specials={len(vocab.special_tokens):<5} "
              f"normalizer={normalizer}{alias}")


def add_vocab_option(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--vocab and its --pattern: for every subcommand, and alone for those that choose no
    components (decode, explain)."""
    p.add_argument("--vocab", default=DEFAULT_VOCAB,
                   help=f"a registered name, a vocab file, or a directory holding one (default: {DEFAULT_VOCAB})")
    return add_pattern_option(p)


def add_pattern_option(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--pattern, which :func:`load_vocab_arg` reads with --vocab."""
    p.add_argument("--pattern", default=None,
                   help="for a rank file (.tiktoken, tokenizer.model) wordsplit does not recognize: its split "
                        "pattern, as a registered vocabulary's name (cl100k_base...) or a regex")
    return p


def add_vocab_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--vocab, --spanner, --encoder, --backend: shared by every subcommand that tokenizes.

    Any registered name is accepted, plug-ins' included (they are checked when the tokenizer is
    built, and an unknown one lists the known ones)."""
    add_vocab_option(p)
    p.add_argument("--spanner", default="auto", help="spanner (pre-tokenizer) name (default: auto)")
    p.add_argument("--encoder", default="auto", help="encoder strategy (default: auto)")
    p.add_argument("--backend", default="auto", help="auto, native or python (default: auto)")
    return p


def add_text_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """TEXT, --file F (or stdin) and the --special policy."""
    p.add_argument("text", nargs="?", help="the text (default: read stdin); a TEXT that names an existing "
                                          "file is refused: use --file")
    p.add_argument("--file", metavar="F", help="read the text from file F (UTF-8; '-': stdin) instead of TEXT")
    p.add_argument("--special", choices=["raise", "allow", "text"], default="raise",
                   help="special-token literals in the text: raise an error (default), "
                        "allow them as special tokens, or encode them as plain text")
    return p


def register(sub) -> None:
    p = add_text_options(add_vocab_options(sub.add_parser(
        "encode", help="print the token ids of TEXT", epilog='example: wordsplit encode "hello world"')))
    p.set_defaults(func=cmd_encode)
    p = add_text_options(add_vocab_options(sub.add_parser(
        "count", help="print the number of tokens of TEXT", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  wordsplit count --file notes.txt\n  wordsplit count < notes.txt")))
    p.set_defaults(func=cmd_count)
    p = sub.add_parser("decode", help="print the text of token ids", epilog="example: wordsplit decode 14990 1879")
    add_vocab_option(p)
    p.add_argument("ids", nargs="*", help="token ids (default: read whitespace-separated ids from stdin)")
    p.set_defaults(func=cmd_decode)
    p = sub.add_parser("vocabs", help="list the registered vocabularies", epilog="example: wordsplit vocabs")
    p.set_defaults(func=cmd_vocabs)
