"""Shared fixtures: golden files, tokenizers per (vocab, encoder, backend), oracle setup."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import gzip
import hashlib
import io
import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import wordsplit.cli
from wordsplit import TokenizerOptions, load_vocab

# A suite started in the background by a shell without job control (`pytest &` in a script)
# starts with SIGINT ignored, and every process it starts would inherit that: the Ctrl-C tests
# need the signal delivered. A handler here (unlike "ignored") is reset to the default in
# children, so they install Python's KeyboardInterrupt as a user's terminal would have them do.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The local HTTP server fixtures of the download and cache tests.
pytest_plugins = ["http_server"]
# The plug-in packages register components when imported: only test_plugins.py imports them
# (and removes what they registered), never the doctest collection.
collect_ignore = ["plugins"]

TESTS = Path(__file__).parent
GOLDEN = TESTS / "golden"
DATA = TESTS / "data"

OPENAI_NAMES = ["r50k_base", "gpt2", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
ALL_VOCABS = ["qwen3", *OPENAI_NAMES]
PYTHON_ENCODERS = ["buffer-sweep", "heap-merge", "backtrack"]
ENCODERS = PYTHON_ENCODERS  # the native core has the same three under the same names
# Every parity test runs on both backends; CI builds the extension, so "native" is never skipped.
BACKENDS = ["python", "native"]


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Keep test runs out of the user's wordsplit cache (loads write parsed entries there)."""
    old = os.environ.get("WORDSPLIT_CACHE_DIR")
    os.environ["WORDSPLIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("wordsplit-cache"))
    yield
    if old is None:
        os.environ.pop("WORDSPLIT_CACHE_DIR", None)
    else:
        os.environ["WORDSPLIT_CACHE_DIR"] = old


# lru_caches that session fixtures hand out (the tiktoken oracle's encodings), emptied with
# the test modules' own caches.
SESSION_CACHES: list = []


def free_caches() -> None:
    """Let go of what the test modules, the session fixtures and wordsplit keep for the rest of
    the process: tokenizers and oracles cached by the tests (``functools`` caches in every
    module under tests/), the vocabularies and encodings wordsplit loaded once per process, the
    regex spanner's scan cache; then hand the freed memory back to the system. Run after each
    test module, so the suite's peak is that of its largest module, not the sum of them all;
    what a later module needs is loaded again (from the disk cache: milliseconds)."""
    from wordsplit.compat import tiktoken as compat_tiktoken
    from wordsplit.spanners import regex as regex_spanner
    from wordsplit.vocabs import forget_loaded

    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and Path(path).is_relative_to(TESTS):  # tests/ and its helpers (tests/fuzz/...)
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    for cache in SESSION_CACHES:
        cache.cache_clear()
    forget_loaded()
    compat_tiktoken._ENCODINGS.clear()
    regex_spanner._SCAN_CACHE.clear()
    gc.collect()
    if LIBC is not None:
        LIBC.malloc_trim(0)  # glibc keeps freed arenas; give them back so the next module starts low


LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if sys.platform.startswith("linux") else None
if LIBC is not None and not hasattr(LIBC, "malloc_trim"):  # musl
    LIBC = None


# The test modules that take longest, longest first. With `--dist loadfile
# --no-loadscope-reorder` ([tool.pytest.ini_options]) xdist hands a worker a whole module at a
# time, in the order below: the long ones start first and the short ones even the two workers
# out at the end. (xdist's own order, most tests first, puts modules of few but long tests,
# such as the browser's or Ray's, near the end, where one worker can be left running one while
# the other has nothing to do.) The others follow, most tests first. The order is estimated
# from CI's `pytest --durations=40` and a timed run of the larger modules on the 2-core CI
# machine; a new slow module belongs here.
SLOWEST_MODULES = [
    "tests/test_native_regex.py", "tests/test_compat_unigram.py", "tests/test_compat_bert.py",
    "tests/test_unigram.py", "tests/test_compat_transformers.py", "tests/test_wordpiece.py",
    "tests/test_docs.py", "tests/test_playground.py", "tests/test_differential.py", "tests/test_sentencepiece.py",
    "tests/test_hf_dropping.py", "tests/test_sentencepiece_native.py", "tests/test_llamacpp_parity.py",
    "tests/test_datasets_ray.py", "tests/test_precompiled_native.py", "tests/test_regex_spanner.py",
    "tests/test_scanners.py", "tests/test_llamacpp_word_models.py", "tests/test_train_large.py",
    "tests/test_compat_tiktoken.py", "tests/test_native_formats.py", "tests/test_wasm.py",
    "tests/test_llamacpp_native.py", "tests/test_offsets_normalizers.py", "tests/test_limits.py",
    "tests/test_native_loaders.py", "tests/test_gguf.py", "tests/test_wordpiece_native.py",
    "tests/test_references.py", "tests/test_layout.py", "tests/test_npm_package.py", "tests/test_sdist.py",
]


def pytest_collection_modifyitems(items):
    """The modules in the order above, then the rest by their number of tests (xdist's own
    order); each module's tests stay in their order (a stable sort)."""
    first = {name: rank for rank, name in enumerate(SLOWEST_MODULES)}
    module = {id(item): item.nodeid.split("::")[0] for item in items}  # (its path from the rootdir)
    counts: dict[str, int] = {}
    for name in module.values():
        counts[name] = counts.get(name, 0) + 1
    items.sort(key=lambda item: (first.get(module[id(item)], len(first)), -counts[module[id(item)]]))


@pytest.fixture(autouse=True, scope="module")
def _free_caches_after_each_module():
    yield
    free_caches()


@dataclass(frozen=True)
class Case:
    text: str
    ids: list
    special: bool = False  # encoded with allowed_special="all" (else encode_ordinary)


def damaged(data: bytes, edits) -> bytes:
    """``data`` (a file's bytes) with each ``(at, "set" | "insert" | "delete", chunk)`` edit
    made in turn: the damaged files of the loaders' hypothesis tests."""
    out = bytearray(data)
    for at, op, chunk in edits:
        at = min(at, len(out))
        if op == "set":
            out[at:at + len(chunk)] = chunk
        elif op == "insert":
            out[at:at] = chunk
        else:
            del out[at:at + len(chunk)]
    return bytes(out)


def golden_file(name: str) -> Path:
    return GOLDEN / ("qwen3-tokenizers.json.gz" if name == "qwen3" else f"tiktoken-{name}.json.gz")


@functools.lru_cache(maxsize=None)
def golden_data(name: str) -> dict:
    return json.loads(gzip.decompress(golden_file(name).read_bytes()))


def golden(name: str) -> list[Case]:
    data = golden_data(name)
    # Qwen3's oracle (HF) always matches added tokens: its cases are encode(..., allowed_special="all").
    cases = [Case(c["text"], c["ids"], special=(name == "qwen3")) for c in data["cases"]]
    cases += [Case(c["text"], c["ids"], special=True) for c in data.get("special_cases", [])]
    return cases


def case_id(case: Case) -> str:
    text = case.text if len(case.text) <= 24 else case.text[:24] + "…"
    return ("S:" if case.special else "") + text.encode("unicode_escape").decode("ascii")


@functools.lru_cache(maxsize=None)
def tokenizer_for(name: str, encoder: str = "auto", backend: str = "python"):
    return TokenizerOptions(encoder=encoder, backend=backend).build(load_vocab(name))


def encode_case(tok, case: Case) -> list:
    return tok.encode(case.text, allowed_special="all") if case.special else tok.encode_ordinary(case.text)


# tiktoken reads its files from TIKTOKEN_CACHE_DIR, named by the sha1 of their URL
# (docs/sources.md). We fill such a directory from the bundled copies, so the oracle
# runs offline on exactly the bytes wordsplit ships.
OPENAI_URLS = {
    "encodings/r50k_base.tiktoken": "r50k_base.tiktoken.gz",
    "encodings/p50k_base.tiktoken": "p50k_base.tiktoken.gz",
    "encodings/cl100k_base.tiktoken": "cl100k_base.tiktoken.gz",
    "encodings/o200k_base.tiktoken": "o200k_base.tiktoken.gz",
}
GPT2_DATA_GYM = {
    "gpt-2/encodings/main/vocab.bpe": DATA / "hf" / "gpt2-vocab.bpe.gz",
    "gpt-2/encodings/main/encoder.json": DATA / "hf" / "gpt2-encoder.json.gz",
}


@pytest.fixture(scope="session")
def tiktoken_oracle(tmp_path_factory):
    """``tiktoken.get_encoding`` working offline from the package's own vocab files."""
    if os.environ.get("WORDSPLIT_ALLOW_NO_ORACLE"):
        tiktoken = pytest.importorskip("tiktoken")
    else:
        import tiktoken
    from importlib import resources

    cache = tmp_path_factory.mktemp("tiktoken-cache")
    base = "https://openaipublic.blob.core.windows.net/"
    data = resources.files("wordsplit.vocabs").joinpath("data")
    for url, file in OPENAI_URLS.items():
        (cache / hashlib.sha1((base + url).encode()).hexdigest()).write_bytes(
            gzip.decompress(data.joinpath(file).read_bytes())
        )
    for url, path in GPT2_DATA_GYM.items():
        (cache / hashlib.sha1((base + url).encode()).hexdigest()).write_bytes(gzip.decompress(path.read_bytes()))
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        encodings = functools.lru_cache(maxsize=None)(tiktoken.get_encoding)
        SESSION_CACHES.append(encodings)
        yield encodings
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


@pytest.fixture(scope="module")
def hf_qwen3():
    """HF tokenizers' own Qwen3 tokenizer, from the shipped tokenizer.json."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(gzip.decompress((DATA / "hf" / "tokenizer.json.gz").read_bytes()).decode("utf-8"))


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli(*argv, stdin=bytes)`` runs ``wordsplit ARGV`` in-process and returns
    ``(status, stdout, stderr)``; argparse's SystemExit (``--help``, bad options) propagates."""

    def run(*argv, stdin: bytes = None):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        code = wordsplit.cli.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run
