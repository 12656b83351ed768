"""Fuzz targets: each takes arbitrary bytes and must either succeed or raise a typed wordsplit
error. Anything else (another exception, two backends that disagree, a tokenizer that disagrees
with its official oracle, a decode that does not round-trip) raises :class:`Finding`.

The targets are plain functions of ``bytes`` so that three drivers can share them: the corpus
replay and the short hypothesis runs of ``tests/test_fuzz.py`` (CI), and ``run.py`` for long
local runs (atheris, coverage-guided, when installed; else a random mutation loop).

Targets (``TARGETS``):

- ``tiktoken-file``, ``tokenizer-json``, ``vocab-merges``, ``gguf``: a vocabulary file's bytes.
  A file that loads must then encode on both backends with the same ids, and decode back.
- ``encode``: text (its bytes pick the vocabulary and the way the text is drawn) encoded with
  every encoder on both backends, against tiktoken or HF ``tokenizers``.
- ``decode``: a list of ids (int32) decoded on both backends; the same text or the same error.
- ``cli``: the command line's argument and input parsing (read-only commands, offline).

>>> sorted(TARGETS)
['cli', 'decode', 'encode', 'gguf', 'tiktoken-file', 'tokenizer-json', 'vocab-merges']
>>> TARGETS["decode"](b"\\x00\\x01\\x00\\x00hello")   # ids 256 and 1819043176: no finding
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import os
import struct
import unicodedata
from pathlib import Path
from typing import Callable

from wordsplit import TokenizerOptions, WordsplitError, load_vocab
from wordsplit.formats.gguf import read_gguf
from wordsplit.formats.hf import read_hf_tokenizer_json, read_vocab_merges
from wordsplit.formats.tiktoken import read_tiktoken

DATA = Path(__file__).resolve().parent.parent / "data"
TARGETS: dict[str, Callable[[bytes], None]] = {}

# Vocabularies the encode and decode targets draw from (the bundled ones, all exact).
VOCABS = ["qwen3", "cl100k_base", "o200k_base", "o200k_harmony", "r50k_base", "gpt2", "p50k_base", "p50k_edit"]
ENCODERS = ["auto", "buffer-sweep", "heap-merge", "backtrack"]
BACKENDS = ["python", "native"]
# Loaded vocabularies larger than this are not encoded by the file targets (keeps runs fast).
MAX_CHECKED_TOKENS = 5000
SAMPLE = "Hello, world! It's 2024: naïve café, 数字 123, emoji 🫠\n\n  spaces\ttabs <|endoftext|>"


class Finding(AssertionError):
    """What a fuzz target found: a crash, a disagreement or a wrong answer."""


def target(name: str):
    def deco(fn: Callable[[bytes], None]) -> Callable[[bytes], None]:
        TARGETS[name] = fn
        return fn

    return deco


@contextlib.contextmanager
def expect_typed_errors(what: str):
    """Typed wordsplit errors are the expected outcome of bad input; anything else is a finding."""
    try:
        yield
    except WordsplitError:
        raise
    except Exception as exc:  # noqa: BLE001 (the point is to catch every other kind)
        raise Finding(f"{what}: {type(exc).__name__}: {exc}") from exc


def _tokenizer(vocab, backend: str, encoder: str = "auto"):
    return TokenizerOptions(backend=backend, encoder=encoder).build(vocab)


def check_loaded_vocab(vocab, text: str = SAMPLE) -> None:
    """A vocabulary that loaded encodes the same on both backends and decodes back to its text
    (normalized, when it has a normalizer; less the bytes it has no token for)."""
    if len(vocab.ranks) > MAX_CHECKED_TOKENS:
        return
    outcomes = []
    for backend in BACKENDS:
        with expect_typed_errors(f"tokenizer of a loaded vocab ({backend})"):
            tok = _tokenizer(vocab, backend)
            try:
                ids = tok.encode(text, disallowed_special=())
            except WordsplitError as exc:  # a plug-in-free vocab can still fail a component check
                outcomes.append(type(exc).__name__)
                continue
            outcomes.append(ids)
            # A byte without a token is dropped when encoding (as HF does): compare without them.
            missing = vocab.missing_bytes
            back = tok.decode_bytes(ids).translate(None, missing)
            if vocab.normalizer == "none" and back != text.encode("utf-8", "surrogatepass").translate(None, missing):
                raise Finding(f"decode(encode(text)) != text on {backend}: {back!r}")
    if outcomes[0] != outcomes[1]:
        raise Finding(f"backends disagree on a loaded vocab: python {outcomes[0]} native {outcomes[1]}")


def load_and_check(what: str, read: Callable[[], object]) -> None:
    """Run the reader ``read`` (named ``what`` in findings); a vocabulary it returns must then
    pass :func:`check_loaded_vocab`, and a typed error ends the input."""
    try:
        with expect_typed_errors(what):
            vocab = read()
    except WordsplitError:
        return
    check_loaded_vocab(vocab)


@target("tiktoken-file")
def tiktoken_file(data: bytes) -> None:
    from wordsplit.patterns import CL100K_PATTERN

    load_and_check("read_tiktoken", lambda: read_tiktoken(data, source="fuzz.tiktoken", pattern=CL100K_PATTERN))


@target("tokenizer-json")
def tokenizer_json(data: bytes) -> None:
    load_and_check("read_hf_tokenizer_json", lambda: read_hf_tokenizer_json(data, source="fuzz/tokenizer.json"))


MERGES_SEPARATOR = b"\n\x00MERGES\x00\n"


@target("vocab-merges")
def vocab_merges(data: bytes) -> None:
    """``vocab.json`` and ``merges.txt`` (or GPT-2's ``encoder.json`` and ``vocab.bpe``, which
    the same reader parses), joined by :data:`MERGES_SEPARATOR`."""
    vocab_json, _, merges_txt = data.partition(MERGES_SEPARATOR)
    load_and_check("read_vocab_merges", lambda: read_vocab_merges(vocab_json, merges_txt, source="fuzz/vocab.json"))


@target("gguf")
def gguf(data: bytes) -> None:
    load_and_check("read_gguf", lambda: read_gguf(data, source="fuzz.gguf"))


# ---------------------------------------------------------------------------------------------
# encode: against the official tokenizers

# Characters that matter to the split patterns and to BPE: every kind of White_Space and line
# break, the ones the oracles do not call whitespace, digits of several scripts, letters of each
# case class, marks, apostrophes and contractions, CJK, RTL, emoji parts, specials' pieces.
INTERESTING = (
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\x1c\x1f\u200b\ufeff\u180e"
    "0123456789٠١٢३४५５"
    "aZéßǅʰªΣσЖж中文字日本語한국어אבגعربي"
    "\u0301\u0334\u07fd\u0338\u094d"
    "'’sStTrReEvVmMlLdD"
    "!?.,;:-_=+*/\\|()[]{}<>@#$%^&~`\""
    "🫠👍🏽\u200d🏳\ufe0f"
    "<|endoftext|><think></think><|im_start|><|fim_prefix|>"
)


def text_from(data: bytes) -> str:
    """Text from fuzz bytes: the first byte picks how the rest is read (UTF-8, letters from
    :data:`INTERESTING`, or any code point including lone surrogates)."""
    if not data:
        return ""
    mode, rest = data[0] % 3, data[1:]
    if mode == 0:
        return rest.decode("utf-8", "replace")
    if mode == 1:
        return "".join(INTERESTING[b % len(INTERESTING)] for b in rest)
    points = [int.from_bytes(rest[i:i + 3], "little") % 0x110000 for i in range(0, len(rest) - 2, 3)]
    return "".join(map(chr, points))


@functools.lru_cache(maxsize=None)
def oracle(name: str):
    """The official tokenizer of a bundled vocabulary: HF ``tokenizers`` for Qwen3, tiktoken's
    engine on the official ranks and pattern for OpenAI's."""
    if name == "qwen3":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_str(gzip.decompress((DATA / "hf" / "tokenizer.json.gz").read_bytes()).decode())
        return lambda text: hf.encode(text, add_special_tokens=False).ids
    import tiktoken

    vocab = load_vocab(name)
    enc = tiktoken.Encoding(f"fuzz-{name}", pat_str=vocab.pattern, mergeable_ranks=dict(vocab.ranks),
                            special_tokens=dict(vocab.special_tokens))
    return lambda text: enc.encode(text, allowed_special="all")


@functools.lru_cache(maxsize=None)
def tokenizer(name: str, backend: str, encoder: str):
    return _tokenizer(load_vocab(name), backend, encoder)


def fix_surrogates(text: str) -> str:
    """What tiktoken (and wordsplit) encode for a str with surrogates: pairs joined, lone ones U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@target("encode")
def encode(data: bytes) -> None:
    """Every encoder on both backends against the oracle; decode gives the (normalized) text back."""
    name = VOCABS[data[0] % len(VOCABS)] if data else "qwen3"
    text = text_from(data[1:])
    fixed = fix_surrogates(text)
    expected = oracle(name)(fixed)
    for backend in BACKENDS:
        for encoder in ENCODERS:
            tok = tokenizer(name, backend, encoder)
            with expect_typed_errors(f"{name} {backend} {encoder} encode"):
                ids = tok.encode(text, allowed_special="all")
            if ids != expected:
                raise Finding(f"{name} {backend} {encoder}: {ids} != oracle {expected} for {text!r}")
        normalized = unicodedata.normalize("NFC", fixed) if name == "qwen3" else fixed
        back = tok.decode(ids)
        # HF's NFC tables are older than Python's: compare only where they agree on the text.
        if back != normalized and (name != "qwen3" or fixed == unicodedata.normalize("NFC", fixed)):
            raise Finding(f"{name} {backend}: decode(encode(text)) = {back!r} != {normalized!r}")


@target("decode")
def decode(data: bytes) -> None:
    """Ids from int32s (negative, huge, special, in range): both backends give the same text
    or the same error type, for ``decode`` and ``decode_bytes``."""
    name = VOCABS[data[0] % len(VOCABS)] if data else "qwen3"
    rest = data[1:]
    raw = struct.unpack(f"<{len(rest) // 4}i", rest[: len(rest) // 4 * 4])
    n_vocab = load_vocab(name).n_vocab
    # Most ids land in range, so decoding does real work; the rest stay as drawn.
    ids = [i % (n_vocab + 2) if i % 5 else i for i in raw]
    for method in ("decode", "decode_bytes"):
        outcomes = []
        for backend in BACKENDS:
            try:
                with expect_typed_errors(f"{name} {backend} {method}"):
                    outcomes.append(getattr(tokenizer(name, backend, "auto"), method)(ids))
            except WordsplitError as exc:
                outcomes.append(type(exc).__name__)
        if outcomes[0] != outcomes[1]:
            raise Finding(f"{name} {method}: python {outcomes[0]!r} != native {outcomes[1]!r} for {ids}")


# ---------------------------------------------------------------------------------------------
# cli

CLI_COMMANDS = ["encode", "decode", "count", "show", "explain", "compare", "vocabs"]


@target("cli")
def cli(data: bytes) -> None:
    """``wordsplit COMMAND ARGS...`` with stdin: the first byte picks a read-only command, then
    NUL-separated arguments, and after a double NUL the bytes on stdin. Only exit statuses 0
    and 2 (and argparse's usage exit) are allowed; a traceback is a finding."""
    import wordsplit.cli

    if not data:
        return
    command = CLI_COMMANDS[data[0] % len(CLI_COMMANDS)]
    args_part, _, stdin = data[1:].partition(b"\x00\x00")
    args = [a.decode("utf-8", "replace") for a in args_part.split(b"\x00") if a] if args_part else []
    # Options that write files are not fuzzed here (the encode-file tests cover writing).
    if any(a.startswith("--html") or a.startswith("--out") for a in args):
        return
    out, err = io.StringIO(), io.StringIO()
    stdin_text = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="replace")
    old = os.environ.get("WORDSPLIT_OFFLINE")
    os.environ["WORDSPLIT_OFFLINE"] = "1"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _stdin(stdin_text):
            try:
                status = wordsplit.cli.main([command, *args])
            except SystemExit as exc:  # argparse's usage errors and --help
                status = exc.code
            except Exception as exc:  # noqa: BLE001
                raise Finding(f"wordsplit {command} {args!r}: {type(exc).__name__}: {exc}") from exc
    finally:
        if old is None:
            os.environ.pop("WORDSPLIT_OFFLINE", None)
        else:
            os.environ["WORDSPLIT_OFFLINE"] = old
    if status not in (0, 2, None):
        raise Finding(f"wordsplit {command} {args!r}: exit status {status}; stderr {err.getvalue()[-300:]!r}")
    if "Traceback" in err.getvalue():
        raise Finding(f"wordsplit {command} {args!r} printed a traceback: {err.getvalue()[-300:]!r}")


@contextlib.contextmanager
def _stdin(stream):
    import sys

    old = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = old

