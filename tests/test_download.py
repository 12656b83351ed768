"""Downloads against a real HTTP server on 127.0.0.1: registry names on a slim install,
HuggingFace repos, URLs, pins, faults (drops, 404, 401, 5xx, stalls), offline mode, two
processes at once, an unwritable cache directory, and HF_TOKEN handling."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import DATA
from http_server import COMMIT_MAIN, COMMIT_OLD, HF_TOKEN, MIXTRAL_REVISION, QWEN_72B_REVISION, cache_files
from wordsplit import TokenizerOptions
from wordsplit.errors import DownloadError, HashMismatchError, OfflineError, UnknownVocabError, VocabFormatError
from wordsplit.formats import hf as loaders
from wordsplit.spec import Nfc
from wordsplit.store import download
from wordsplit.vocabs import download_vocab, forget_loaded, load_vocab
from wordsplit.store.cache import read_record
from wordsplit.vocabs.pretrained import PRETRAINED
from wordsplit.store.sources import hf_endpoint, parse_hf, pretrained_url

R50K = "/encodings/r50k_base.tiktoken"
TINY = "/hub/acme/tiny/resolve/main/tokenizer.json"


@pytest.fixture(scope="module")
def bundled_hashes() -> dict[str, str]:
    forget_loaded()
    hashes = {name: load_vocab(name).content_hash for name in ("r50k_base", "qwen3")}
    forget_loaded()
    return hashes


def no_temp_files(cache: Path) -> bool:
    return not [p for p in cache.rglob("*.tmp")]


# ---------------------------------------------------------------------------------------------
# Sources: registry names, HuggingFace repos, URLs.


def test_bundled_files_are_used_first(hub_env, vocab_server):
    assert load_vocab("r50k_base", offline=True).n_vocab == 50257
    assert vocab_server.count() == 0


def test_slim_install_downloads_once_then_reads_the_cache(hub_env, vocab_server, slim, bundled_hashes):
    vocab = load_vocab("r50k_base")
    assert vocab.content_hash == bundled_hashes["r50k_base"]
    assert vocab_server.count(R50K) == 1
    path = hub_env / "downloads" / "pretrained" / "r50k_base.tiktoken"
    record = read_record(path)
    assert record["sha256"] == PRETRAINED["r50k_base"].sha256 and record["size"] == path.stat().st_size
    assert record["url"] == vocab_server.url + R50K and record["etag"]
    forget_loaded()  # the next load must come from the disk cache, not from memory
    assert load_vocab("gpt2", offline=True).content_hash == bundled_hashes["r50k_base"]
    assert vocab_server.count() == 1


def test_slim_qwen3_comes_from_the_hf_endpoint(hub_env, vocab_server, slim, bundled_hashes):
    assert load_vocab("qwen3").content_hash == bundled_hashes["qwen3"]
    assert vocab_server.count(f"/hub/Qwen/Qwen-72B/resolve/{QWEN_72B_REVISION}/qwen.tiktoken") == 1


def test_slim_sentencepiece_name_comes_from_the_hf_endpoint(hub_env, vocab_server, slim):
    """A registered SentencePiece model on a slim install: its official file, verified, then cached."""
    vocab = load_vocab("mistral-v1")
    assert vocab.content_hash == load_vocab(DATA / "spm" / "mistral-v1.model").content_hash
    url = f"/hub/mistralai/Mixtral-8x7B-Instruct-v0.1/resolve/{MIXTRAL_REVISION}/tokenizer.model"
    assert vocab_server.count(url) == 1
    forget_loaded()
    assert load_vocab("mistral-v1", offline=True).content_hash == vocab.content_hash
    assert vocab_server.count() == 1
    assert [p.name for p in download_vocab("mistral-v1")] == ["tokenizer.model"]


def test_endpoints_follow_the_environment(monkeypatch):
    for var in ("WORDSPLIT_HF_ENDPOINT", "HF_ENDPOINT", "WORDSPLIT_OPENAI_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    assert hf_endpoint() == "https://huggingface.co"
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.example/")
    assert hf_endpoint() == "http://mirror.example"
    monkeypatch.setenv("WORDSPLIT_HF_ENDPOINT", "http://ours.example")
    assert pretrained_url(PRETRAINED["qwen3"]).startswith("http://ours.example/Qwen/Qwen-72B/resolve/")
    monkeypatch.setenv("WORDSPLIT_OPENAI_ENDPOINT", "http://blobs.example")
    assert pretrained_url(PRETRAINED["p50k_edit"]) == "http://blobs.example/encodings/p50k_base.tiktoken"


def test_hf_tokenizer_json_is_downloaded_once(hub_env, vocab_server, bundled_hashes, monkeypatch):
    vocab = load_vocab("hf:Qwen/Qwen3-8B")
    assert vocab.content_hash == bundled_hashes["qwen3"] and vocab.name == "Qwen/Qwen3-8B"
    # tokenizer_config.json comes with it: eos, bos and the chat template.
    config = json.loads((Path(__file__).parent / "data" / "hf" / "tokenizer_config.json").read_text())
    assert (vocab.eos_token_id, vocab.bos_token_id, vocab.chat_template) == (151645, None, config["chat_template"])
    assert vocab_server.count("/hub/") == 2 and vocab_server.count("/cdn/") == 1  # an LFS redirect
    # The config's answer named the commit; tokenizer.json is fetched at that commit.
    assert [r.path for r in vocab_server.requests if "/hub/" in r.path] == [
        "/hub/Qwen/Qwen3-8B/resolve/main/tokenizer_config.json",
        f"/hub/Qwen/Qwen3-8B/resolve/{COMMIT_MAIN}/tokenizer.json"]
    record = read_record(hub_env / "downloads" / "hf" / "Qwen--Qwen3-8B" / "main" / "tokenizer.json")
    assert record["requires"] == ["tokenizer_config.json"]
    # The sha256 that docs/sources.md gives for Qwen3's tokenizer.json (also its LFS ETag).
    sha256 = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
    assert (record["sha256"], record["etag"]) == (sha256, sha256)
    assert (record["revision"], record["commit"], record["size"]) == ("main", COMMIT_MAIN, 11_422_654)

    monkeypatch.setattr(loaders, "read_hf_tokenizer_json", None)  # the second load must not parse
    again = load_vocab("hf:Qwen/Qwen3-8B")
    assert again.content_hash == bundled_hashes["qwen3"] and again.chat_template == config["chat_template"]
    assert vocab_server.count() == 3


def test_encode_file_eos_of_an_hf_repo(hub_env, vocab_server, cli, tmp_path):
    src, out = tmp_path / "docs.txt", tmp_path / "train.bin"
    src.write_text("hello world")
    code, stdout, err = cli("encode-file", src, "--out", out, "--vocab", "hf:Qwen/Qwen3-8B", "--eos", "--json")
    assert (code, err) == (0, "") and json.loads(stdout)["eos_token_id"] == 151645


def test_a_tokenizer_json_cached_alone_gets_its_config_once(hub_env, vocab_server, monkeypatch):
    """An entry cached without its config (by a version that did not fetch it) serves offline
    as it is; online, the config is asked for once and the set is recorded."""
    load_vocab("hf:Qwen/Qwen3-8B")
    folder = hub_env / "downloads" / "hf" / "Qwen--Qwen3-8B" / "main"
    for name in ("tokenizer_config.json", "tokenizer_config.json.meta.json"):
        (folder / name).unlink()
    record_path = folder / "tokenizer.json.meta.json"
    record = json.loads(record_path.read_text())
    del record["requires"]
    record_path.write_text(json.dumps(record))
    forget_loaded()
    assert load_vocab("hf:Qwen/Qwen3-8B", offline=True).eos_token_id is None
    before = vocab_server.count()
    assert load_vocab("hf:Qwen/Qwen3-8B").eos_token_id == 151645
    assert vocab_server.count() == before + 1 and vocab_server.count("tokenizer_config.json") == 2
    assert json.loads(record_path.read_text())["requires"] == ["tokenizer_config.json"]
    assert load_vocab("hf:Qwen/Qwen3-8B", offline=True).eos_token_id == 151645
    assert vocab_server.count() == before + 1


def test_hf_falls_back_to_vocab_json_and_merges_txt(hub_env, vocab_server, bundled_hashes):
    vocab = load_vocab("hf:openai-community/gpt2")
    assert vocab.content_hash == bundled_hashes["r50k_base"]
    # tokenizer.json, tekken.json, tokenizer.model and tokenizer_config.json are 404 here; the two
    # others are fetched.
    assert vocab_server.count() == 6
    assert load_vocab("hf:openai-community/gpt2").content_hash == bundled_hashes["r50k_base"]
    assert vocab_server.count() == 6


def test_hf_falls_back_to_tekken_json(hub_env, vocab_server):
    from wordsplit.formats.tekken import load_tekken

    vocab = load_vocab("hf:mistralai/tekken-only")
    local = load_tekken(DATA / "tekken" / "tekken_240911.json.gz")
    assert vocab.name == "mistralai/tekken-only" and vocab.content_hash == local.content_hash
    assert (vocab.n_vocab, vocab.bos_token_id, vocab.eos_token_id) == (local.n_vocab, 1, 2)
    asked = [r.path.rsplit("/", 1)[1] for r in vocab_server.requests]
    assert asked == ["tokenizer_config.json", "tokenizer.json", "tekken.json"]  # the first two are 404
    # The set is complete in the cache: the next load, and an offline one, ask nothing.
    forget_loaded()
    assert load_vocab("hf:mistralai/tekken-only").content_hash == local.content_hash
    assert load_vocab("hf:mistralai/tekken-only", offline=True).content_hash == local.content_hash
    assert vocab_server.count() == 3
    record = read_record(hub_env / "downloads" / "hf" / "mistralai--tekken-only" / "main" / "tekken.json")
    assert record["commit"] == COMMIT_MAIN and record["requires"] == []


def test_hf_sentencepiece_repos(hub_env, vocab_server):
    """A SentencePiece repo: its tokenizer.json when it has one (as transformers reads it), else
    its tokenizer.model, each with tokenizer_config.json; cached, and offline afterwards."""
    from wordsplit.formats.hf import load_hf_tokenizer_json
    from wordsplit.formats.sentencepiece import load_sentencepiece

    both = load_vocab("hf:mistralai/spm")
    local = load_hf_tokenizer_json(DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz")
    assert both.name == "mistralai/spm" and both.content_hash == local.content_hash
    assert both.pipeline == local.pipeline and (both.pipeline.model.merge_by, both.pipeline.decoder.style) == (
        "rank", "hf")
    assert (both.bos_token_id, both.eos_token_id) == (1, 2)
    asked = [r.path.rsplit("/", 1)[1] for r in vocab_server.requests]
    assert asked == ["tokenizer_config.json", "tokenizer.json"]

    alone = load_vocab("hf:mistralai/spm-model-only")
    model = load_sentencepiece(DATA / "spm" / "mistral-v7.model")
    assert alone.name == "mistralai/spm-model-only" and alone.content_hash == model.content_hash
    assert alone.pipeline == model.pipeline and (alone.bos_token_id, alone.eos_token_id) == (1, 2)
    asked = [r.path.rsplit("/", 1)[1] for r in vocab_server.requests][2:]
    assert asked == ["tokenizer_config.json", "tokenizer.json", "tekken.json", "tokenizer.model"]
    record = read_record(hub_env / "downloads" / "hf" / "mistralai--spm-model-only" / "main" / "tokenizer.model")
    assert record["commit"] == COMMIT_MAIN and record["requires"] == ["tokenizer_config.json"]
    forget_loaded()
    before = vocab_server.count()
    for name, vocab in (("hf:mistralai/spm", both), ("hf:mistralai/spm-model-only", alone)):
        again = load_vocab(name, offline=True)
        assert again.content_hash == vocab.content_hash
        text = " Hello  [INST] wörld 😀"
        assert TokenizerOptions().build(again).encode(text, allowed_special="all") == \
            TokenizerOptions().build(vocab).encode(text, allowed_special="all")
    assert vocab_server.count() == before


def test_hf_fallback_set_comes_from_one_commit_with_its_config(hub_env, vocab_server):
    vocab = load_vocab("hf:acme/tiny-split")
    assert vocab.normalizer == Nfc() and vocab.eos_token_id == vocab.special_tokens["<|endoftext|>"]
    later = [r.path for r in vocab_server.requests if "tokenizer.json" not in r.path][1:]
    assert later and all(f"/resolve/{COMMIT_MAIN}/" in path for path in later)
    # A set that lost a companion is incomplete: it is fetched again rather than used without it.
    (hub_env / "downloads" / "hf" / "acme--tiny-split" / "main" / "tokenizer_config.json").unlink()
    assert load_vocab("hf:acme/tiny-split").normalizer == Nfc()


def test_revision_pinning(hub_env, vocab_server):
    old = load_vocab(f"hf:acme/tiny@{COMMIT_OLD}")
    assert vocab_server.count(f"/hub/acme/tiny/resolve/{COMMIT_OLD}/tokenizer.json") == 1
    new = load_vocab("hf:acme/tiny")
    # Each load asked for tokenizer_config.json too (404 here: not an error) and tokenizer.json.
    assert new.n_vocab > old.n_vocab and vocab_server.count() == 4
    assert load_vocab(f"hf:acme/tiny@{COMMIT_OLD}").content_hash == old.content_hash
    assert vocab_server.count() == 4
    record = read_record(hub_env / "downloads" / "hf" / "acme--tiny" / COMMIT_OLD / "tokenizer.json")
    assert record["revision"] == COMMIT_OLD


def test_revision_with_a_slash_is_quoted(hub_env, vocab_server):
    with pytest.raises(DownloadError):
        load_vocab("hf:acme/tiny@refs/pr/1")
    assert vocab_server.count("/resolve/refs%2Fpr%2F1/tokenizer.json") == 1


@pytest.mark.parametrize("name", ["hf:", "hf:a/b/c", "hf:../x", "hf:acme/tiny@", "hf:acme/tiny@a/../b", "hf:a b/c"])
def test_malformed_hf_names(name):
    with pytest.raises(UnknownVocabError):
        parse_hf(name)


def test_url_with_and_without_a_pin(hub_env, vocab_server, bundled_hashes):
    url = vocab_server.url + R50K
    assert load_vocab(url, sha256=PRETRAINED["r50k_base"].sha256).ranks == load_vocab("r50k_base").ranks
    assert load_vocab(vocab_server.hub + "/acme/tiny/resolve/main/tokenizer.json").name.startswith("http://")
    with pytest.raises(ValueError, match="sha256= pins the content of a URL"):
        load_vocab("r50k_base", sha256="0" * 64)
    with pytest.raises(UnknownVocabError, match="cannot tell the format"):
        load_vocab(vocab_server.url + "/encodings/")
    assert vocab_server.count() == 2


# ---------------------------------------------------------------------------------------------
# Pins and corrupt content.


def test_hash_mismatch_on_download_stores_nothing(hub_env, vocab_server, slim):
    load_vocab("hf:acme/tiny")  # a good entry that must stay untouched
    good = cache_files(hub_env)
    vocab_server.faults[R50K] = ["corrupt"]
    with pytest.raises(HashMismatchError, match="pinned to 306cd27f"):
        load_vocab("r50k_base")
    assert cache_files(hub_env) == good and no_temp_files(hub_env)


def test_hash_mismatch_on_read_removes_only_the_bad_file(hub_env, vocab_server, slim):
    load_vocab("hf:acme/tiny")
    load_vocab("r50k_base")
    bad = hub_env / "downloads" / "pretrained" / "r50k_base.tiktoken"
    data = bytearray(bad.read_bytes())
    data[100] ^= 1
    bad.write_bytes(bytes(data))
    others = [p for p in cache_files(hub_env) if "r50k_base.tiktoken" not in p.name]
    forget_loaded()
    with pytest.raises(HashMismatchError, match="it was removed"):
        load_vocab("r50k_base")
    assert not bad.exists() and [p for p in cache_files(hub_env) if "r50k_base.tiktoken" not in p.name] == others
    assert load_vocab("hf:acme/tiny") and vocab_server.count(TINY) == 1  # still cached, still valid
    assert load_vocab("r50k_base").n_vocab == 50257 and vocab_server.count(R50K) == 2


def test_wrong_url_pin(hub_env, vocab_server):
    with pytest.raises(HashMismatchError, match="it was not stored"):
        load_vocab(vocab_server.url + R50K, sha256="0" * 64)
    assert cache_files(hub_env) == [] or all("derived" in str(p) for p in cache_files(hub_env))


# ---------------------------------------------------------------------------------------------
# Network faults.


def test_dropped_connection_is_retried(hub_env, vocab_server):
    vocab_server.faults[TINY] = ["drop"]
    assert load_vocab("hf:acme/tiny").n_vocab > 256
    assert vocab_server.count(TINY) == 2


def test_truncated_download_never_becomes_an_entry(hub_env, vocab_server):
    vocab_server.faults[TINY] = ["drop"] * download.MAX_ATTEMPTS
    with pytest.raises(DownloadError, match=f"failed after {download.MAX_ATTEMPTS} attempt"):
        load_vocab("hf:acme/tiny")
    assert not [p for p in cache_files(hub_env) if "tokenizer.json" in p.name]
    assert no_temp_files(hub_env)


def test_500_then_success(hub_env, vocab_server):
    vocab_server.faults[TINY] = [500, 503]
    assert load_vocab("hf:acme/tiny")
    assert vocab_server.count(TINY) == 3


def test_5xx_retries_are_bounded(hub_env, vocab_server):
    vocab_server.faults[TINY] = [500] * 10
    with pytest.raises(DownloadError, match="HTTP 500"):
        load_vocab("hf:acme/tiny")
    assert vocab_server.count(TINY) == download.MAX_ATTEMPTS


def test_a_stalled_server_times_out_and_is_retried(hub_env, vocab_server, monkeypatch):
    monkeypatch.setattr(download, "READ_TIMEOUT", 0.3)
    vocab_server.faults[TINY] = [("delay", 1.0)]
    assert load_vocab("hf:acme/tiny")
    assert vocab_server.count(TINY) == 2


def test_404_names_the_files_and_the_repo(hub_env, vocab_server):
    with pytest.raises(DownloadError) as info:
        load_vocab("hf:acme/tiny@v9")
    message = str(info.value)
    assert info.value.status == 404
    assert "tokenizer.json" in message and "tekken.json" in message and "vocab.json + merges.txt" in message
    assert "tokenizer.model" in message
    assert "acme/tiny" in message and "revision v9" in message
    with pytest.raises(DownloadError, match="HTTP 404.*/encodings/nope.tiktoken"):
        load_vocab(vocab_server.url + "/encodings/nope.tiktoken")


def test_401_says_gated_and_asks_for_hf_token(hub_env, vocab_server):
    with pytest.raises(DownloadError, match="gated or private.*set HF_TOKEN") as info:
        load_vocab("hf:acme/gated")
    assert info.value.status == 401 and vocab_server.count() == 1  # not retried, no fallback


def test_hf_token_is_sent_and_never_leaked(hub_env, vocab_server, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG, logger="wordsplit")
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_token_987")
    with pytest.raises(DownloadError, match="HF_TOKEN that was sent was refused") as info:
        load_vocab("hf:acme/gated")
    assert "hf_wrong_token_987" not in str(info.value)

    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    assert load_vocab("hf:acme/gated").n_vocab > 256
    load_vocab(vocab_server.url + R50K)  # not the HF endpoint: the token must not go there
    sent = {r.path: r.headers.get("Authorization") for r in vocab_server.requests}
    assert sent["/hub/acme/gated/resolve/main/tokenizer.json"] == f"Bearer {HF_TOKEN}"
    (cdn,) = [path for path in sent if path.startswith("/cdn/")]
    assert sent[cdn] is None, "the redirect to another host (the LFS CDN) must not carry the token"
    assert sent[R50K] is None
    assert all(HF_TOKEN.encode() not in p.read_bytes() for p in cache_files(hub_env))
    assert HF_TOKEN not in caplog.text and "hf_wrong_token_987" not in caplog.text


def test_progress_bar_only_on_a_terminal(hub_env, vocab_server, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(download, "PROGRESS_MIN_BYTES", 1000)
    for stream, shown in ((io.StringIO(), False), (Terminal(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        download_vocab(vocab_server.url + R50K, force=True)
        assert ("100%" in stream.getvalue()) is shown


# ---------------------------------------------------------------------------------------------
# Offline mode.


@pytest.mark.parametrize("how", ["argument", "WORDSPLIT_OFFLINE", "HF_HUB_OFFLINE"])
def test_offline_without_an_entry_says_what_to_download(hub_env, vocab_server, monkeypatch, how):
    kwargs = {"offline": True} if how == "argument" else {}
    if how != "argument":
        monkeypatch.setenv(how, "1")
    with pytest.raises(OfflineError, match="wordsplit download hf:acme/tiny@main"):
        load_vocab("hf:acme/tiny", **kwargs)
    assert vocab_server.count() == 0


def test_offline_with_an_entry(hub_env, vocab_server, slim, monkeypatch):
    load_vocab("hf:acme/tiny")
    load_vocab("r50k_base")
    forget_loaded()
    monkeypatch.setenv("WORDSPLIT_OFFLINE", "1")
    assert load_vocab("hf:acme/tiny") and load_vocab("r50k_base")
    with pytest.raises(OfflineError, match="wordsplit download cl100k_base"):
        load_vocab("cl100k_base")
    assert vocab_server.count() == 3  # tokenizer_config.json (404), tokenizer.json, r50k_base


# ---------------------------------------------------------------------------------------------
# Concurrency and an unwritable cache.


def test_two_processes_download_the_same_file_at_once(hub_env, vocab_server, tmp_path):
    vocab_server.faults[TINY] = [("delay", 1.0)]  # the first download is still in flight when the second starts
    # Both processes import wordsplit, say they are ready, and start loading when the test says go.
    script = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from wordsplit.vocabs import load_vocab
        Path(sys.argv[1]).touch()
        while not Path(sys.argv[2]).exists():
            time.sleep(0.01)
        print(load_vocab("hf:acme/tiny").content_hash)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{i}" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", script, str(ready[i]), str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    deadline = time.monotonic() + 60
    while not all(p.exists() for p in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] != ""
    assert vocab_server.count(TINY) == 1  # the second process waited for the lock and used the entry
    entry = hub_env / "downloads" / "hf" / "acme--tiny" / "main" / "tokenizer.json"
    assert read_record(entry)["size"] == entry.stat().st_size and no_temp_files(hub_env)
    assert sorted(p.name for p in entry.parent.iterdir()) == [
        "tokenizer.json", "tokenizer.json.lock", "tokenizer.json.meta.json", "tokenizer_config.json.lock"]


def test_unwritable_cache_dir_falls_back_with_one_warning(hub_env, vocab_server, tmp_path, monkeypatch):
    import tempfile

    (tmp_path / "file.txt").write_text("a file, so nothing can be created under it, even by root")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("WORDSPLIT_CACHE_DIR", str(tmp_path / "file.txt" / "cache"))
    with pytest.warns(RuntimeWarning, match="not writable") as warned:
        assert load_vocab("hf:acme/tiny")
        assert load_vocab("hf:acme/tiny")
    assert len([w for w in warned if "not writable" in str(w.message)]) == 1
    assert vocab_server.count() == 2  # tokenizer_config.json (404) and tokenizer.json, once
    assert [p for p in (tmp_path / "tmp").rglob("tokenizer.json")]


def test_download_vocab_refreshes_with_force(hub_env, vocab_server):
    (path,) = download_vocab("hf:acme/tiny")  # the repo has no tokenizer_config.json
    assert download_vocab("hf:acme/tiny") == [path] and vocab_server.count() == 2
    download_vocab("hf:acme/tiny", force=True)
    assert vocab_server.count() == 4 and json.loads(path.with_name(path.name + ".meta.json").read_text())


# ---------------------------------------------------------------------------------------------
# Limits: size and deadline; error pages; malformed pins.


def test_a_server_streaming_zeros_is_stopped_at_the_size_limit(hub_env, vocab_server, monkeypatch):
    monkeypatch.setenv(download.MAX_DOWNLOAD_MB_ENV, "1")
    vocab_server.faults[TINY] = [("zeros", None)]
    with pytest.raises(DownloadError, match=r"sent more than 1048576 bytes, over the 1 MiB limit.*"
                                            + download.MAX_DOWNLOAD_MB_ENV):
        load_vocab("hf:acme/tiny")
    assert vocab_server.count(TINY) == 1, "a body over the limit is not retried"
    assert cache_files(hub_env) == [] and no_temp_files(hub_env)
    assert load_vocab("hf:acme/tiny").n_vocab > 256  # nothing poisoned: the next load works


def test_a_declared_length_over_the_limit_is_refused_before_the_body(hub_env, vocab_server, monkeypatch):
    vocab_server.faults[TINY] = [("zeros", 5 << 30)]
    start = time.monotonic()
    with pytest.raises(DownloadError, match="declares 5368709120 bytes, over the 1024 MiB limit"):
        load_vocab("hf:acme/tiny")
    assert time.monotonic() - start < 10 and cache_files(hub_env) == [] and no_temp_files(hub_env)
    with pytest.raises(DownloadError, match="over the 2048 MiB limit"):
        vocab_server.faults[TINY] = [("zeros", 5 << 30)]
        download_vocab("hf:acme/tiny", max_mb=2048)


def test_a_trickling_server_is_stopped_at_the_deadline_and_the_lock_released(hub_env, vocab_server, monkeypatch):
    monkeypatch.setenv(download.DEADLINE_ENV, "1.5")
    vocab_server.faults[TINY] = [("trickle", 0.02)]  # a few KB at 50 bytes a second
    start = time.monotonic()
    with pytest.raises(DownloadError, match=r"did not finish within 1\.5 s.*" + download.DEADLINE_ENV):
        load_vocab("hf:acme/tiny")
    assert time.monotonic() - start < 5
    assert cache_files(hub_env) == [] and no_temp_files(hub_env)
    from wordsplit.store.cache import open_cache

    with open_cache(hub_env).lock("hf/acme--tiny/main/tokenizer.json", timeout=0):
        pass  # free at once: the stopped download released it


def test_limits_are_checked(monkeypatch):
    for var, bad in ((download.MAX_DOWNLOAD_MB_ENV, "lots"), (download.DEADLINE_ENV, "-1")):
        monkeypatch.setenv(var, bad)
        with pytest.raises(ValueError, match=var):
            download.download_limits()
        monkeypatch.delenv(var)
    assert download.download_limits() == download.DownloadLimits(max_bytes=1 << 30, deadline=600.0)
    with download.limited(deadline=30) as limits:
        assert download.download_limits() == limits == download.DownloadLimits(max_bytes=1 << 30, deadline=30.0)
    with pytest.raises(ValueError, match="max_mb must be positive"):
        download_vocab("hf:acme/tiny", max_mb=0)


LOGIN_PAGE = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please sign in</body></html>\n"


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/octet-stream"])
def test_an_html_page_never_becomes_an_entry(hub_env, vocab_server, content_type):
    vocab_server.faults[TINY] = [("body", LOGIN_PAGE, content_type)]
    with pytest.raises(DownloadError, match=f"sent an HTML page \\(Content-Type: {content_type}\\)"):
        load_vocab("hf:acme/tiny")
    assert cache_files(hub_env) == [] and no_temp_files(hub_env)
    assert load_vocab("hf:acme/tiny").n_vocab > 256  # the real file, once the server sends it
    url = vocab_server.url + R50K
    vocab_server.faults[R50K] = [("body", b"  <html><body>captive portal</body></html>", "text/html")]
    with pytest.raises(DownloadError, match="sent an HTML page"):
        load_vocab(url)
    assert load_vocab(url).ranks[b"hello"] == 31373


def test_a_body_that_does_not_parse_is_removed_so_the_next_load_fetches_it_again(hub_env, vocab_server):
    vocab_server.faults[TINY] = [("body", b'{"not": "a tokenizer"', "application/json")]
    with pytest.raises(VocabFormatError, match="was removed from the cache, so the next load downloads it again"):
        load_vocab("hf:acme/tiny")
    assert not [p for p in cache_files(hub_env) if p.name.startswith("tokenizer.json")]
    assert load_vocab("hf:acme/tiny").n_vocab > 256 and vocab_server.count(TINY) == 2


@pytest.mark.parametrize("pin", ["nothex", "0" * 63, "g" * 64, "0" * 65, ""])
def test_a_malformed_pin_touches_nothing(hub_env, vocab_server, pin):
    url = vocab_server.url + R50K
    (good,) = download_vocab(url)
    before = {p: p.read_bytes() for p in cache_files(hub_env)}
    for call in (lambda: download_vocab(url, sha256=pin), lambda: load_vocab(url, sha256=pin)):
        with pytest.raises(ValueError, match="64 hexadecimal digits"):
            call()
    assert {p: p.read_bytes() for p in cache_files(hub_env)} == before and good.exists()
    assert vocab_server.count() == 1


def test_an_uppercase_pin_is_the_same_pin(hub_env, vocab_server):
    url = vocab_server.url + R50K
    download_vocab(url)
    assert load_vocab(url, sha256=PRETRAINED["r50k_base"].sha256.upper()).ranks[b"hello"] == 31373
    assert vocab_server.count() == 1


def test_a_cached_file_replaced_after_it_was_verified_is_not_parsed(hub_env, vocab_server, monkeypatch):
    from http_server import tiny_tokenizer_files
    from wordsplit.store.cache import Cache

    download_vocab("hf:acme/tiny")
    for entry in (hub_env / "derived").glob("*.vocab"):
        entry.unlink()  # the next load parses the cached download
    real_verified = Cache.verified

    def verified_then_replaced(self, key, *args, **kwargs):
        path = real_verified(self, key, *args, **kwargs)
        if path is not None and path.name == "tokenizer.json":
            path.write_bytes(tiny_tokenizer_files(("hello",))["tokenizer.json"])  # another file, same place
        return path

    monkeypatch.setattr(Cache, "verified", verified_then_replaced)
    forget_loaded()
    with pytest.raises(HashMismatchError, match="changed while it was loaded"):
        load_vocab("hf:acme/tiny")
    assert not list((hub_env / "derived").glob("*.vocab")), "nothing may be stored under the old file's hash"
