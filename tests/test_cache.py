"""The disk cache: parsed vocabularies reused and never trusted blindly, the cache directory,
locks, listing and clearing, and the ``download`` / ``cache`` subcommands."""

from __future__ import annotations

import builtins
import gzip
import io
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from http_server import cache_files, tiny_tokenizer_files
from wordsplit import Vocab, cli
from wordsplit.cli import basic
from wordsplit.cli import cache as cache_cli
from wordsplit.errors import CacheError, DownloadError, VocabFormatError
from wordsplit.formats import files, gguf, hf, tiktoken
from wordsplit.store import cache, derived
from wordsplit import vocabs
from wordsplit.vocabs import forget_loaded, load_vocab
from wordsplit.store.derived import dump_vocab, read_vocab

DATA = Path(__file__).parent / "data"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("WORDSPLIT_CACHE_DIR", str(path))
    forget_loaded()
    yield path
    forget_loaded()


@pytest.fixture
def parses(monkeypatch):
    """Counts the parses of .tiktoken files."""
    calls = []
    real = tiktoken.read_tiktoken_ranks

    def counting(data, *, source):
        calls.append(source)
        return real(data, source=source)

    monkeypatch.setattr(tiktoken, "read_tiktoken_ranks", counting)
    return calls


def derived_files(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "derived").glob("*.vocab"))


# ---------------------------------------------------------------------------------------------
# Derived entries: the second load does not parse.


@pytest.mark.parametrize("name", ["cl100k_base", "p50k_edit"])
def test_second_load_of_a_registered_name_does_not_parse(cache_dir, parses, name):
    cold = load_vocab(name)
    assert len(parses) == 1 and len(derived_files(cache_dir)) == 1
    forget_loaded()
    warm = load_vocab(name)
    assert len(parses) == 1 and warm is not cold
    assert warm.content_hash == cold.content_hash
    assert (warm.name, warm.source, warm.n_vocab, warm.eos_token_id) == (cold.name, cold.source, cold.n_vocab,
                                                                         cold.eos_token_id)
    assert list(warm.special_tokens.items()) == list(cold.special_tokens.items())


def test_second_load_of_a_file_does_not_parse(cache_dir, tmp_path, monkeypatch):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(tiny_tokenizer_files(("hello",))["tokenizer.json"])
    gguf_path = DATA / "gguf" / "ggml-vocab-gpt-2.gguf.gz"
    cold, cold_gguf = load_vocab(path), load_vocab(gguf_path)
    parsers = hf.read_hf_tokenizer_json, gguf.read_gguf
    monkeypatch.setattr(hf, "read_hf_tokenizer_json", None)
    monkeypatch.setattr(gguf, "read_gguf", None)
    assert load_vocab(path).content_hash == cold.content_hash
    assert load_vocab(gguf_path).content_hash == cold_gguf.content_hash
    monkeypatch.setattr(hf, "read_hf_tokenizer_json", parsers[0])
    monkeypatch.setattr(gguf, "read_gguf", parsers[1])
    # A changed file is parsed again: entries are keyed by content, never by name alone.
    path.write_bytes(tiny_tokenizer_files(("hello", "world"))["tokenizer.json"])
    assert load_vocab(path).n_vocab > cold.n_vocab


def test_only_the_most_recently_used_entries_are_kept(cache_dir, parses, monkeypatch):
    monkeypatch.setattr(derived, "MAX_ENTRIES", 2)
    for name in ("r50k_base", "p50k_base"):
        load_vocab(name)
    forget_loaded()
    entry = {cache.read_header(path)["label"]: path for path in derived_files(cache_dir)}
    for path in entry.values():
        os.utime(path, (1, 1))  # both look old
    load_vocab("r50k_base")  # a hit refreshes it
    load_vocab("p50k_edit")  # a third entry evicts the least recently used: p50k_base
    assert len(derived_files(cache_dir)) == 2 and not entry["p50k_base"].exists() and entry["r50k_base"].exists()
    assert len(parses) == 3


def test_a_code_change_is_a_new_key(monkeypatch):
    recipe = {"pretrained": "r50k_base"}
    before = derived.recipe_key(recipe)
    monkeypatch.setattr(derived, "code_fingerprint", lambda: "an edited loader")
    assert derived.recipe_key(recipe) != before


def test_an_entry_holds_its_recipe_and_a_warm_load_starts_no_openssl(cache_dir):
    load_vocab("r50k_base")
    (entry,) = derived_files(cache_dir)
    recipe = json.loads(derived._split(entry.read_bytes())[0]["recipe"])
    assert recipe["recipe"]["pretrained"] == "r50k_base" and recipe["code"] == derived.code_fingerprint()
    # hashlib starts OpenSSL when imported (digests.py): a warm load of a registered name needs it not
    code = ("import sys; from wordsplit import get_tokenizer; get_tokenizer('r50k_base').encode('hi'); "
            "print('hashlib' in sys.modules)")
    env = {**os.environ, "WORDSPLIT_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_round_trip_keeps_every_field():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"bc": 258}
    vocab = Vocab(
        name="pair", ranks=ranks, pattern=r"\S+|\s+", special_tokens={"<s>": 300, "<alias>": 300, "</s>": 301},
        added_tokens={"<think>": 302}, normalizer="nfc", merges={(97, 98): 1, (256, 99): 0, (98, 99): 2},
        whole_piece_lookup=False, eos_token_id=301, bos_token_id=300, source="somewhere",
        chat_template="{% for m in messages %}{{ m.content }}{% endfor %}",
    )
    again = read_vocab(dump_vocab(vocab, label="pair"))
    assert again.content_hash == vocab.content_hash
    for field in ("name", "source", "n_vocab", "eos_token_id", "bos_token_id", "whole_piece_lookup", "token_bytes",
                  "chat_template"):
        assert getattr(again, field) == getattr(vocab, field), field
    assert dict(again.merges) == dict(vocab.merges) and list(again.special_tokens) == list(vocab.special_tokens)


def _rewrite_header(data: bytes, **changes) -> bytes:
    header, body = derived._split(data)
    return _entry({**header, **changes}, body)


def _entry(header: dict, body: bytes) -> bytes:
    head = json.dumps(header).encode()
    return derived.MAGIC + len(head).to_bytes(4, "little") + head + body


def _rewrite_pipeline(data: bytes, **stages) -> bytes:
    """The entry with these stages of its header's pipeline replaced."""
    header, body = derived._split(data)
    return _entry({**header, "pipeline": {**header["pipeline"], **stages}}, body)


CORRUPTIONS = {
    "flipped body byte": lambda d: d[:-10] + bytes([d[-10] ^ 1]) + d[-9:],
    "truncated": lambda d: d[: len(d) // 2],
    "empty": lambda d: b"",
    "wrong magic": lambda d: b"X" + d[1:],
    "garbage header": lambda d: d[:20] + b"\xff" * 40 + d[60:],
    "valid checksum, wrong counts": lambda d: _rewrite_header(d, n_tokens=derived._split(d)[0]["n_tokens"] + 1),
    "valid checksum, invalid vocab": lambda d: _rewrite_pipeline(d, normalizer={"type": "Plugin", "name": "bogus"}),
    "valid checksum, malformed pipeline": lambda d: _rewrite_pipeline(d, normalizer={"type": "Bogus"}),
    "valid checksum, pattern without a pipeline": lambda d: _entry(
        {k: v for k, v in derived._split(d)[0].items() if k != "pipeline"} | {"pattern": r"\S+", "normalizer": "none"},
        derived._split(d)[1]),
    "valid checksum, wrong types": lambda d: _rewrite_header(d, special_tokens="x"),
    "valid checksum, template not text": lambda d: _rewrite_header(d, chat_template=["x"]),
    "valid checksum, older format": lambda d: _rewrite_header(d, format=1),
    # (the entry of another recipe whose checksum is the same name: read as a miss, never used)
    "valid checksum, another recipe": lambda d: _rewrite_header(d, recipe=derived._split(d)[0]["recipe"] + " "),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_a_corrupt_derived_entry_is_rebuilt_not_trusted(cache_dir, parses, corruption):
    expected = load_vocab("r50k_base").content_hash
    (entry,) = derived_files(cache_dir)
    entry.write_bytes(CORRUPTIONS[corruption](entry.read_bytes()))
    forget_loaded()
    assert load_vocab("r50k_base").content_hash == expected
    assert len(parses) == 2, "the corrupt entry must be ignored and the file parsed again"
    assert read_vocab(entry.read_bytes()).content_hash == expected, "and the entry rewritten"


# ---------------------------------------------------------------------------------------------
# Vocabulary files are read once (what is hashed is what is parsed), with a size cap.


def official_ranks(name: str) -> bytes:
    return gzip.decompress((Path(vocabs.BUNDLED_DATA) / f"{name}.tiktoken.gz").read_bytes())


def test_a_file_replaced_between_hash_and_parse_cannot_poison_the_cache(cache_dir, tmp_path, monkeypatch):
    path, other = tmp_path / "x.tiktoken", tmp_path / "other.tiktoken"
    path.write_bytes(official_ranks("cl100k_base"))
    other.write_bytes(official_ranks("r50k_base"))
    real_open, swapped = io.open, []

    def open_then_swap(file, *args, **kwargs):
        f = real_open(file, *args, **kwargs)
        if not swapped and os.fspath(file) == str(path):
            swapped.append(file)
            os.replace(other, path)  # a sync job replaces the file: this reader keeps the old one
        return f

    monkeypatch.setattr(builtins, "open", open_then_swap)
    monkeypatch.setattr(io, "open", open_then_swap)
    first = load_vocab(path)
    monkeypatch.undo()
    assert swapped, "the file was replaced after its first open"
    assert first.ranks[b"hello"] == 15339 and len(first.ranks) == 100256, "the bytes parsed are the bytes first read"
    path.write_bytes(official_ranks("cl100k_base"))  # the real file again: a hit of its entry
    again = load_vocab(path)
    assert again.ranks[b"hello"] == 15339 and len(again.ranks) == 100256


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_read_once(cache_dir, tmp_path):
    path = tmp_path / "x.tiktoken"
    os.mkfifo(path)

    def serve():
        with open(path, "wb") as f:
            f.write(official_ranks("cl100k_base"))

    writer = threading.Thread(target=serve, daemon=True)
    writer.start()
    result = []
    loader = threading.Thread(target=lambda: result.append(load_vocab(path)), daemon=True)
    loader.start()
    loader.join(60)
    assert result and len(result[0].ranks) == 100256, "one read of the FIFO gives the whole vocabulary"
    writer.join(5)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_device_is_refused_at_once(cache_dir, tmp_path):
    path = tmp_path / "zeros.tiktoken"
    path.symlink_to("/dev/zero")
    result = []

    def load():
        try:
            load_vocab(path)
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            result.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(10)
    assert result, "reading /dev/zero must not spin"
    assert isinstance(result[0], VocabFormatError) and "is a device" in str(result[0]) and str(path) in str(result[0])


def gzip_bomb(path: Path, mib: int) -> Path:
    """``mib`` MiB of zeros, gzipped: one 16 MiB member repeated (a valid multi-member gzip)."""
    member = gzip.compress(bytes(16 << 20), compresslevel=9)
    path.write_bytes(member * (mib // 16))
    return path


def test_a_gzip_bomb_stops_at_the_cap_in_bounded_memory(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(files.MAX_FILE_MB_ENV, "4")
    bomb = gzip_bomb(tmp_path / "x.tiktoken.gz", 256)
    tracemalloc.start()
    try:
        with pytest.raises(VocabFormatError, match=r"x\.tiktoken\.gz: the file, decompressed, is larger than 4 MiB.*"
                                                   + files.MAX_FILE_MB_ENV):
            load_vocab(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"peak {peak >> 20} MiB for a 4 MiB cap"


def test_the_size_cap_and_its_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(files.MAX_FILE_MB_ENV, raising=False)
    assert files.max_file_bytes() == 256 << 20
    monkeypatch.setenv(files.MAX_FILE_MB_ENV, "1")
    big = tmp_path / "big.tiktoken"
    big.write_bytes(b"x" * ((1 << 20) + 1))
    with pytest.raises(VocabFormatError, match="big.tiktoken: the file is larger than 1 MiB"):
        load_vocab(big)
    for bad in ("0", "-1", "lots"):
        monkeypatch.setenv(files.MAX_FILE_MB_ENV, bad)
        with pytest.raises(ValueError, match=files.MAX_FILE_MB_ENV):
            files.max_file_bytes()


# ---------------------------------------------------------------------------------------------
# The cache directory and its files.


def test_default_cache_dir(monkeypatch):
    monkeypatch.setenv("WORDSPLIT_CACHE_DIR", "/somewhere/else")
    assert cache.default_cache_dir() == Path("/somewhere/else")
    monkeypatch.delenv("WORDSPLIT_CACHE_DIR")
    import platformdirs

    assert cache.default_cache_dir() == Path(platformdirs.user_cache_dir("wordsplit"))


@pytest.mark.parametrize("xdg", [None, "", "   ", "relative/dir", "/abs/xdg", "/abs/xdg/"])
def test_default_cache_dir_is_platformdirs_answer_without_importing_it(monkeypatch, tmp_path, xdg):
    import platformdirs

    monkeypatch.delenv("WORDSPLIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache.default_cache_dir() == Path(platformdirs.user_cache_dir("wordsplit"))
    script = ("import sys; from wordsplit.store import cache; cache.default_cache_dir(); "
              "print('platformdirs' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "WORDSPLIT_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(not sys.platform.startswith("linux"))


def test_a_warm_load_neither_imports_tempfile_nor_leaves_a_probe(tmp_path):
    root = tmp_path / "cache"
    env = {**os.environ, "WORDSPLIT_CACHE_DIR": str(root)}
    script = ("import sys; from wordsplit import load_vocab; load_vocab('cl100k_base'); "
              "print('tempfile' in sys.modules)")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    run()  # the first load writes the derived entry
    assert derived_files(root)
    assert run() == "False"
    assert not list(root.glob(".probe-*"))


def test_entries_of_an_unwritable_root_are_still_read(tmp_path):
    primary, fallback = tmp_path / "read-only", tmp_path / "fallback"
    first = cache.Cache(primary)
    temp = first.temp_path("url/k/x.tiktoken")
    temp.write_bytes(b"data")
    first.commit("url/k/x.tiktoken", temp, {"size": 4, "sha256": cache.sha256_file(temp)[0]})
    both = cache.Cache(fallback, read_only=(primary,))
    assert both.verified("url/k/x.tiktoken") == primary / "downloads" / "url" / "k" / "x.tiktoken"
    assert [e.name for e in both.entries()] == ["url/k/x.tiktoken"]


def test_a_file_without_its_record_is_not_an_entry(tmp_path):
    store = cache.Cache(tmp_path)
    path = store.download_path("url/k/x.tiktoken")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"an interrupted commit")
    assert store.verified("url/k/x.tiktoken") is None and store.entries() == []


@pytest.mark.parametrize("key", ["", ".", "../x", "a/../../x", "/etc/passwd"])
def test_keys_cannot_leave_the_cache(tmp_path, key):
    with pytest.raises(ValueError, match="invalid cache key"):
        cache.Cache(tmp_path).download_path(key)


def test_lock_waits_are_bounded(tmp_path):
    store = cache.Cache(tmp_path)
    with store.lock("url/k/x.tiktoken"):
        with pytest.raises(DownloadError, match="another process"):
            with store.lock("url/k/x.tiktoken", timeout=0.1):
                pass
    with store.lock("url/k/x.tiktoken", timeout=0.1):  # released: free again
        pass


def test_benchmark_load_reports_cold_and_warm():
    from wordsplit.apps.load_bench import benchmark_load

    (result,) = benchmark_load(["r50k_base"], repeat=1)
    assert result["name"] == "r50k_base" and result["cold_s"] > 0 and result["warm_s"] > 0


# ---------------------------------------------------------------------------------------------
# The command line.


def run(capsys, monkeypatch, *argv):
    monkeypatch.setattr(cli, "COMMAND_MODULES", [basic, cache_cli])
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_download_list_path_clear(hub_env, vocab_server, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "download", "hf:acme/tiny")
    assert code == 0 and out.strip().endswith(os.path.join("acme--tiny", "main", "tokenizer.json"))
    # tokenizer_config.json (404 here) and tokenizer.json, once: the second download asks for nothing.
    assert run(capsys, monkeypatch, "download", "hf:acme/tiny")[0] == 0 and vocab_server.count() == 2
    code, _, err = run(capsys, monkeypatch, "download", "cl100k_base")
    assert code == 0 and "bundled" in err
    assert run(capsys, monkeypatch, "cache", "path") == (0, f"{hub_env}\n", "")

    code, out, _ = run(capsys, monkeypatch, "cache", "list")
    assert run(capsys, monkeypatch, "cache") == (code, out, "")  # listing is the default action
    lines = [line.split("\t") for line in out.splitlines()]
    assert ["download", "hf/acme--tiny/main/tokenizer.json"] in [line[:2] for line in lines]
    assert {("derived", "hf:acme/tiny@main"), ("derived", "cl100k_base")} <= {tuple(line[:2]) for line in lines}
    assert any(vocab_server.hub + "/acme/tiny/resolve/main/tokenizer.json" in line for line in lines)

    code, out, _ = run(capsys, monkeypatch, "cache", "clear", "hf:acme/tiny")
    assert code == 0 and out.startswith("removed 2 entries of hf:acme/tiny")
    assert [e.name for e in cache.list_entries()] == ["cl100k_base"]
    assert run(capsys, monkeypatch, "cache", "clear")[0] == 0 and cache_files(hub_env) == []
    assert "is empty" in run(capsys, monkeypatch, "cache", "list")[2]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["download", "hf:acme/gated"], "HF_TOKEN"),
        (["download", "hf:acme/tiny", "--sha256", "0" * 64], "sha256= pins the content of a URL"),
        (["download", "tests/data/hf"], "nothing to download"),
        (["download", "hf:not a repo"], "not a HuggingFace repo id"),
    ],
)
def test_cli_errors_are_one_line(hub_env, vocab_server, capsys, monkeypatch, argv, message):
    code, out, err = run(capsys, monkeypatch, *argv)
    assert code == 2 and out == "" and err.startswith("wordsplit: error: ") and message in err
    assert err.count("\n") == 1


def test_cli_a_malformed_pin_is_a_usage_error_that_touches_nothing(hub_env, vocab_server, capsys, monkeypatch):
    url = vocab_server.url + "/encodings/r50k_base.tiktoken"
    assert run(capsys, monkeypatch, "download", url)[0] == 0
    before = {p: p.read_bytes() for p in cache_files(hub_env)}
    with pytest.raises(SystemExit) as info:
        run(capsys, monkeypatch, "download", url, "--sha256", "nothex")
    assert info.value.code == 2 and "64 hexadecimal digits" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in cache_files(hub_env)} == before and vocab_server.count() == 1


@pytest.mark.parametrize("option", ["--max-size", "--deadline"])
def test_cli_download_limits(hub_env, vocab_server, capsys, monkeypatch, option):
    vocab_server.faults["/hub/acme/tiny/resolve/main/tokenizer.json"] = [("zeros", 3 << 20)]
    with pytest.raises(SystemExit):
        run(capsys, monkeypatch, "download", "hf:acme/tiny", option, "0")
    assert "expected a positive number" in capsys.readouterr().err
    code, _, err = run(capsys, monkeypatch, "download", "hf:acme/tiny", "--max-size", "2")
    assert code == 2 and "over the 2 MiB limit" in err and err.count("\n") == 1


def test_cli_offline_download_says_how(hub_env, vocab_server, capsys, monkeypatch):
    monkeypatch.setenv("WORDSPLIT_OFFLINE", "1")
    code, _, err = run(capsys, monkeypatch, "download", "hf:acme/tiny")
    assert code == 2 and "offline mode is on" in err and vocab_server.count() == 0


# ---------------------------------------------------------------------------------------------
# Leftovers of interrupted runs; files that are not the cache's.

OTHER_KEY = "hf/acme--other/main/tokenizer.json"


def leftover(store: cache.Cache, key: str, *, age: float) -> list[Path]:
    """The temporary file, record temporary and lock file an interrupted download of ``key`` leaves."""
    path = store.download_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    files = [path.with_name(f".{path.name}.k2j4x9q1.tmp"), path.with_name(f".{path.name}.meta.json.a8d7f0zz.tmp"),
             path.with_name(path.name + ".lock")]
    for file in files:
        file.write_bytes(b"partial")
        os.utime(file, (time.time() - age, time.time() - age))
    return files


def test_stale_leftovers_are_removed_before_the_next_download(hub_env, vocab_server):
    store = cache.open_cache(hub_env)
    stale = leftover(store, OTHER_KEY, age=cache.LOCK_TIMEOUT + 60)
    recent = leftover(store, "url/0123/x.tiktoken", age=10)  # may be a download in progress
    held = leftover(store, "url/4567/y.tiktoken", age=cache.LOCK_TIMEOUT + 60)
    with store.lock("url/4567/y.tiktoken"):  # a live holder (its temporary file is not touched)
        held[0].write_bytes(b"partial")
        os.utime(held[0], (1, 1))
        load_vocab("hf:acme/tiny")
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in recent) and held[0].exists()
    assert not [p for p in cache_files(hub_env) if "acme--other" in str(p)]


def test_the_leftovers_of_a_file_go_when_its_lock_is_taken(hub_env, vocab_server):
    store = cache.open_cache(hub_env)
    files = leftover(store, "hf/acme--tiny/main/tokenizer.json", age=1)  # fresh, but its holder is gone
    load_vocab("hf:acme/tiny")
    assert not files[0].exists() and not files[1].exists() and files[2].exists()  # the lock file is in use
    assert not list(hub_env.rglob("*.tmp"))


def test_an_interrupted_download_is_listed_then_cleared_with_an_honest_count(hub_env, vocab_server, capsys,
                                                                           monkeypatch):
    vocab_server.faults["/hub/acme/tiny/resolve/main/tokenizer.json"] = [("trickle", 0.05)]
    script = "from wordsplit.vocabs import load_vocab; load_vocab('hf:acme/tiny')"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 60
        # tokenizer_config.json is fetched too, untrickled: wait for the trickled file's own temporary
        while not list(hub_env.rglob(".tokenizer.json.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.kill()  # SIGKILL: no cleanup runs
        proc.wait()
    (temp,) = hub_env.rglob("*.tmp")
    code, out, _ = run(capsys, monkeypatch, "cache", "list")
    assert code == 0 and "in progress" in out
    assert out.startswith("partial\tdownloads/hf/acme--tiny/main/.tokenizer.json.")
    code, out, _ = run(capsys, monkeypatch, "cache", "clear", "hf:acme/tiny")
    assert code == 0 and out.startswith("removed 0 entries of hf:acme/tiny")
    assert not temp.exists() and not list(hub_env.rglob("*.lock"))
    os.makedirs(temp.parent)
    temp.write_bytes(b"partial")
    os.utime(temp, (1, 1))  # an old leftover: `cache list` removes it rather than listing it
    code, out, err = run(capsys, monkeypatch, "cache", "list")
    assert out == "" and "is empty" in err and not temp.exists()


@pytest.fixture
def shared_derived(cache_dir, tmp_path):
    """``derived/`` is a symlink to a directory that also holds files that are not the cache's."""
    shared = tmp_path / "shared"
    shared.mkdir()
    others = [shared / "model.vocab", shared / "notes.vocab"]
    for path in others:
        path.write_bytes(b"someone else's file")
    cache_dir.mkdir()
    (cache_dir / "derived").symlink_to(shared, target_is_directory=True)
    return others


def test_eviction_removes_only_the_caches_entries(cache_dir, shared_derived, monkeypatch):
    monkeypatch.setattr(derived, "MAX_ENTRIES", 1)
    for name in ("r50k_base", "p50k_base"):
        load_vocab(name)
    assert all(path.exists() for path in shared_derived)
    assert [e.name for e in cache.list_entries()] == ["p50k_base"]


def test_cache_clear_through_a_symlinked_derived_directory(cache_dir, shared_derived, capsys, monkeypatch):
    load_vocab("r50k_base")
    code, out, err = run(capsys, monkeypatch, "cache", "clear")
    assert (code, err) == (0, "") and out.startswith("removed 1 entries")
    assert all(path.exists() for path in shared_derived) and (cache_dir / "derived").is_symlink()
    assert cache.list_entries() == []


def test_a_cache_that_cannot_be_cleared_is_one_line_and_status_2(cache_dir, capsys, monkeypatch):
    load_vocab("r50k_base")

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.raises(CacheError, match="could not clear the cache entry .*Permission denied") as info:
        vocabs.clear_cache()
    assert isinstance(info.value, OSError)
    code, out, err = run(capsys, monkeypatch, "cache", "clear")
    assert code == 2 and out == "" and err.startswith("wordsplit: error: could not clear") and err.count("\n") == 1


def test_a_lock_file_removed_between_open_and_lock_is_not_trusted(tmp_path, monkeypatch):
    store = cache.Cache(tmp_path)
    key = "url/k/x.tiktoken"
    lock_path = store.download_path(key).with_name("x.tiktoken.lock")
    real_try_lock, swept = cache._try_lock, []

    def sweep_first(fd):
        if not swept:  # a sweep in another process removes the (free) lock file just before this one locks it
            swept.append(None)
            swept[0] = cache._remove_if_free(lock_path)
        return real_try_lock(fd)

    monkeypatch.setattr(cache, "_try_lock", sweep_first)
    with store.lock(key):
        assert swept == [True] and lock_path.exists()
        monkeypatch.setattr(cache, "_try_lock", real_try_lock)
        # The lock now held is the file in place: a third process cannot take it.
        assert cache._remove_if_free(lock_path) is False
