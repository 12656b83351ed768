"""A local HTTP server for the download and cache tests, and the fixtures that point wordsplit at it.

``VocabServer`` serves, on 127.0.0.1 only, the repo's own test data (decompressed on the fly):

* HuggingFace-like ``/hub/{org}/{repo}/resolve/{revision}/{file}`` (the endpoint is
  ``{url}/hub``, so that the OpenAI-like host below is a *different* endpoint for the
  HF_TOKEN rule), with ``X-Repo-Commit``, ``ETag`` and the Hub's statuses: 401 for an unknown
  repo (as the Hub answers without a token) or a gated one without the right token, 404 for
  an unknown file or revision;
* large files the way the Hub serves LFS files: a 302 carrying ``X-Repo-Commit`` and
  ``X-Linked-Etag`` (the sha256) to ``http://localhost:{port}/cdn/{sha256}``, another host
  name for the same server, so a client must drop the Authorization header on the way;
* OpenAI-like ``/encodings/{name}.tiktoken`` from the package's bundled files.

It records every request (``.requests``) and misbehaves on demand: ``.faults[path]`` is a
list of actions, one consumed per request of that path: an HTTP status (500, 404...),
``"drop"`` (close the connection halfway through the body), ``("delay", s)`` (wait before
answering), ``"corrupt"`` (flip a byte of the body), ``("body", bytes, content_type)`` (answer
200 with that body instead), ``("zeros", declared)`` (stream zeros until the client hangs up,
with ``Content-Length: declared``, or none when None) or ``("trickle", s)`` (send the right
body one byte every ``s`` seconds).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import unquote

import pytest

from wordsplit.store import download
from wordsplit.vocabs import forget_loaded
from wordsplit.formats.bytelevel import BYTE_ORDER, BYTE_TO_CHAR

HF_DATA = Path(__file__).parent / "data" / "hf"
PACKAGE_DATA = resources.files("wordsplit.vocabs").joinpath("data")

COMMIT_MAIN = "1111111111111111111111111111111111111111"
MIXTRAL_REVISION = "eba92302a2861cdc0098cc54bc9f17cb2c47eb61"  # the registered mistral-v1's
COMMIT_OLD = "0000000000000000000000000000000000000000"
QWEN_72B_REVISION = "b8e18ac61df64d35308695769ff46b976b6a00f4"
HF_TOKEN = "hf_test_SECRET_token_0123456789"


@functools.lru_cache(maxsize=None)
def hf_file(name: str) -> bytes:
    """A file of tests/data/hf, decompressed."""
    path = HF_DATA / name
    data = path.read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


@functools.lru_cache(maxsize=None)
def package_file(name: str) -> bytes:
    """A bundled vocab file of the package, decompressed."""
    return gzip.decompress(PACKAGE_DATA.joinpath(name).read_bytes())


@functools.lru_cache(maxsize=None)
def tekken_file() -> bytes:
    """mistral_common's tekken_240911.json (tests/data/tekken), decompressed."""
    return gzip.decompress((HF_DATA.parent / "tekken" / "tekken_240911.json.gz").read_bytes())


@functools.lru_cache(maxsize=None)
def spm_file(name: str) -> bytes:
    """A file of tests/data/spm (Mistral's SentencePiece models and tokenizer.json), decompressed."""
    data = (HF_DATA.parent / "spm" / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


MISTRAL_CONFIG = json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                             "tokenizer_class": "LlamaTokenizer"}).encode()


def tiny_tokenizer_files(words: tuple[str, ...] = ("hello",)) -> dict[str, bytes]:
    """A small byte-level BPE tokenizer that makes ``words``: tokenizer.json, and the same as
    vocab.json + merges.txt + tokenizer_config.json (Qwen2Tokenizer, so NFC and Qwen's pattern)."""
    vocab = {BYTE_TO_CHAR[b]: i for i, b in enumerate(BYTE_ORDER)}
    merges = []
    for word in words:
        current = BYTE_TO_CHAR[word.encode()[0]]
        for ch in word.encode()[1:]:
            pair = (current, BYTE_TO_CHAR[ch])
            current += BYTE_TO_CHAR[ch]
            if current not in vocab:
                vocab[current] = len(vocab)
                merges.append(list(pair))
    eot = {"id": len(vocab), "content": "<|endoftext|>", "special": True, "single_word": False,
           "lstrip": False, "rstrip": False, "normalized": False}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tokenizer = {
        "version": "1.0", "added_tokens": [eot], "normalizer": None, "pre_tokenizer": byte_level,
        "post_processor": None, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": merges},
    }
    config = {"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|endoftext|>",
              "added_tokens_decoder": {str(eot["id"]): {k: v for k, v in eot.items() if k != "id"}}}
    return {
        "tokenizer.json": json.dumps(tokenizer).encode(),
        "vocab.json": json.dumps(vocab).encode(),
        "merges.txt": ("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)).encode(),
        "tokenizer_config.json": json.dumps(config).encode(),
    }


def hf_repos() -> dict[str, dict[str, dict[str, bytes]]]:
    """repo → commit → file → bytes."""
    tiny, tiny_old = tiny_tokenizer_files(("hello", "world")), tiny_tokenizer_files(("hello",))
    qwen3 = {"tokenizer.json": hf_file("tokenizer.json.gz"), "vocab.json": hf_file("vocab.json.gz"),
             "merges.txt": hf_file("merges.txt.gz"), "tokenizer_config.json": hf_file("tokenizer_config.json")}
    return {
        "Qwen/Qwen3-8B": {COMMIT_MAIN: qwen3},
        "Qwen/Qwen-72B": {QWEN_72B_REVISION: {"qwen.tiktoken": package_file("qwen3.tiktoken.gz")}},
        "openai-community/gpt2": {COMMIT_MAIN: {"vocab.json": hf_file("gpt2-encoder.json.gz"),
                                                "merges.txt": hf_file("gpt2-vocab.bpe.gz")}},
        "acme/tiny": {COMMIT_MAIN: {"tokenizer.json": tiny["tokenizer.json"]},
                      COMMIT_OLD: {"tokenizer.json": tiny_old["tokenizer.json"]}},
        "acme/tiny-split": {COMMIT_MAIN: {k: v for k, v in tiny.items() if k != "tokenizer.json"}},
        "acme/gated": {COMMIT_MAIN: {"tokenizer.json": tiny["tokenizer.json"]}},
        # Mistral's newer repos hold tekken.json and no tokenizer.json.
        "mistralai/tekken-only": {COMMIT_MAIN: {"tekken.json": tekken_file()}},
        # SentencePiece repos: a tokenizer.json beside the tokenizer.model (as Llama 2's and
        # Mistral 7B's), and a tokenizer.model alone.
        "mistralai/spm": {COMMIT_MAIN: {"tokenizer.json": spm_file("mistral-v7-llama.tokenizer.json.gz"),
                                        "tokenizer.model": spm_file("mistral-v7.model"),
                                        "tokenizer_config.json": MISTRAL_CONFIG}},
        "mistralai/Mixtral-8x7B-Instruct-v0.1": {MIXTRAL_REVISION: {"tokenizer.model": spm_file("mistral-v1.model")}},
        "mistralai/spm-model-only": {COMMIT_MAIN: {"tokenizer.model": spm_file("mistral-v7.model"),
                                                   "tokenizer_config.json": MISTRAL_CONFIG}},
    }


@dataclass
class Request:
    path: str
    headers: dict


@dataclass
class VocabServer:
    repos: dict = field(default_factory=hf_repos)
    gated: dict = field(default_factory=lambda: {"acme/gated": HF_TOKEN})
    lfs: frozenset = frozenset({("Qwen/Qwen3-8B", "tokenizer.json"), ("acme/gated", "tokenizer.json")})
    faults: dict = field(default_factory=dict)
    requests: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.blobs: dict[str, bytes] = {}
        self.openai = {f"/encodings/{name}.tiktoken": package_file(f"{name}.tiktoken.gz")
                       for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")}
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def hub(self) -> str:
        return self.url + "/hub"

    def count(self, fragment: str = "") -> int:
        """How many requests had ``fragment`` in their path."""
        with self.lock:
            return sum(fragment in r.path for r in self.requests)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def resolve(self, path: str, headers) -> tuple[int, bytes, dict]:
        """(status, body, extra headers) for a GET of ``path``."""
        if path.startswith("/cdn/"):
            blob = self.blobs.get(path[len("/cdn/"):])
            return (200, blob, {}) if blob is not None else (404, b"no such blob", {})
        if path in self.openai:
            return 200, self.openai[path], {"ETag": f'"0x{hashlib.md5(self.openai[path]).hexdigest()[:16]}"'}
        match = re.fullmatch(r"/hub/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if not match:
            return 404, b"not found", {}
        repo, revision, file = match[1], unquote(match[2]), match[3]
        if repo not in self.repos:
            return 401, b"Repository not found", {"X-Error-Code": "RepoNotFound"}
        if repo in self.gated and headers.get("Authorization") != f"Bearer {self.gated[repo]}":
            return 401, b"Access to this repo is restricted", {"X-Error-Code": "GatedRepo"}
        commits = self.repos[repo]
        commit = COMMIT_MAIN if revision == "main" and COMMIT_MAIN in commits else revision
        if commit not in commits:
            return 404, b"Revision not found", {"X-Error-Code": "RevisionNotFound"}
        if file not in commits[commit]:
            return 404, b"Entry not found", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}
        body = commits[commit][file]
        if (repo, file) in self.lfs:
            sha256 = hashlib.sha256(body).hexdigest()
            self.blobs[sha256] = body
            location = f"http://localhost:{self.httpd.server_address[1]}/cdn/{sha256}"
            return 302, b"", {"X-Repo-Commit": commit, "X-Linked-Etag": f'"{sha256}"', "Location": location}
        return 200, body, {"X-Repo-Commit": commit, "ETag": f'"{hashlib.sha1(body).hexdigest()}"'}


class _Handler(BaseHTTPRequestHandler):
    server_state: VocabServer

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def do_GET(self) -> None:
        state = self.server_state
        with state.lock:
            state.requests.append(Request(self.path, dict(self.headers)))
            actions = state.faults.get(self.path)
            action = actions.pop(0) if actions else None
        if isinstance(action, tuple) and action[0] == "delay":
            threading.Event().wait(action[1])
            action = None
        kind = action[0] if isinstance(action, tuple) else action
        if isinstance(action, int):
            status, body, extra = action, b"fault", {}
        elif kind == "body":
            status, body, extra = 200, action[1], {"Content-Type": action[2]}
        else:
            status, body, extra = state.resolve(self.path, self.headers)
        if action == "corrupt":
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        try:
            if kind == "zeros":
                self._send_zeros(action[1])
                return
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if action == "drop":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if kind == "trickle":
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    threading.Event().wait(action[1])
                return
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should have
            self.close_connection = True

    def _send_zeros(self, declared: int | None) -> None:
        self.send_response(200)
        if declared is not None:
            self.send_header("Content-Length", str(declared))
        self.end_headers()
        self.close_connection = True
        zeros = bytes(1 << 16)
        for _ in range(4096):  # until the client hangs up (BrokenPipeError), or 256 MiB
            self.wfile.write(zeros)


# Fixtures are registered under ``name`` so that the test modules that import them do not
# shadow the imported function with the argument of the same name.
@pytest.fixture(name="vocab_server")
def vocab_server_fixture():
    server = VocabServer()
    yield server
    server.stop()


@pytest.fixture(name="hub_env")
def hub_env_fixture(vocab_server, tmp_path, monkeypatch):
    """wordsplit pointed at ``vocab_server``, with a fresh cache and fast retries.

    Yields the cache directory. Registered names still load from the bundled files; add the
    ``slim`` fixture to download them instead.
    """
    cache = tmp_path / "cache"
    for var in ("HF_TOKEN", "HF_ENDPOINT", "WORDSPLIT_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("WORDSPLIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("WORDSPLIT_HF_ENDPOINT", vocab_server.hub)
    monkeypatch.setenv("WORDSPLIT_OPENAI_ENDPOINT", vocab_server.url)
    monkeypatch.setattr(download, "BACKOFF", 0.01)
    forget_loaded()
    yield cache
    forget_loaded()


@pytest.fixture(name="slim")
def slim_fixture(tmp_path, monkeypatch):
    """A slim install: no bundled vocab files, so registered names are downloaded."""
    import wordsplit.vocabs

    empty = tmp_path / "no-bundled-data"
    empty.mkdir()
    monkeypatch.setattr(wordsplit.vocabs, "BUNDLED_DATA", empty)
    forget_loaded()
    yield
    forget_loaded()


def cache_files(cache: Path) -> list[Path]:
    """Every file under the cache directory (lock files aside)."""
    return sorted(p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".lock"))
