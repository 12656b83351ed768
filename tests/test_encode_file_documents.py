"""encode_file's native path for plain-text documents (the documents of a whole buffer found
and encoded in one native call): the same files as the path through Python str documents,
and the same ids as ``encode`` per document, for any documents, separators, chunk and read
sizes; its errors are the Python path's, naming the same byte or document."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wordsplit.apps.encode_file as ef
from wordsplit.apps.encode_file import encode_file, load_encoded
from wordsplit.errors import DisallowedSpecialError, WordsplitError

from conftest import tokenizer_for

TOKENIZERS = {name: tokenizer_for(name, "auto", "native") for name in ("qwen3", "gpt2", "cl100k_base")}
POLICIES = {
    "text": {"disallowed_special": ()},
    "allow": {"allowed_special": "all"},
    "raise": {"disallowed_special": "all"},
}

# Text with what a line-based file holds: separators inside documents, CR, blank lines,
# multi-byte UTF-8 of every length, special-token literals, long runs.
PARTS = st.sampled_from([
    "\n", "\r\n", "\r", "\n\n", " ", "  ", "\t", "a", "aa", "hello", " world", "日本語", "é", "e\u0301",
    "🙂", "\u3000", "<|endoftext|>", "<|im_start|>", "<think>", "123", "x" * 200, "\u00a0", "ab",
])
TEXTS = st.lists(PARTS, max_size=40).map("".join)
SEPARATORS = st.sampled_from(["\n", "\r\n", "\n\n", "aa", "ab", "日"])


def run(tmp_path, tok, data: bytes, name: str, *, native: bool, monkeypatch, **options):
    """encode_file of ``data`` on the native path, or with it turned off (Python str documents)."""
    src, out = tmp_path / "in.txt", tmp_path / f"{name}.bin"
    src.write_bytes(data)
    calls = []
    with monkeypatch.context() as patch:
        if native:
            add_buffer = ef._IdSink.add_buffer
            patch.setattr(ef._IdSink, "add_buffer", lambda *args: calls.append(1) or add_buffer(*args))
        else:
            patch.setattr(ef, "_native_documents", lambda *args: None)
        summary = encode_file(tok, src, out, **options)
    assert bool(calls) == (native and bool(data)), "the native path is taken"
    return summary, out


def expected(tok, data: bytes, separator: str, eos: bool, policy: dict):
    """The ids and index by the documented rule, one ``encode`` per document."""
    docs = data.decode("utf-8").split(separator)
    if docs and docs[-1] == "":
        docs.pop()
    ids, index = [], [0]
    for doc in docs:
        ids += tok.encode(doc, **policy) + ([tok.eos_token_id] if eos else [])
        index.append(len(ids))
    return ids, index


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, separator=SEPARATORS, vocab=st.sampled_from(sorted(TOKENIZERS)),
       policy=st.sampled_from(["text", "allow", "raise"]), eos=st.booleans(), chunk=st.integers(1, 64),
       read=st.sampled_from([1, 3, 7, 1 << 20]), threads=st.sampled_from([1, 2]))
def test_native_path_equals_python_path_and_encode(tmp_path, monkeypatch, text, separator, vocab, policy, eos,
                                                   chunk, read, threads):
    tok = TOKENIZERS[vocab]
    data = text.encode("utf-8")
    monkeypatch.setattr(ef, "READ_BYTES", read)
    options = dict(separator=separator, eos=eos, chunk_bytes=chunk, num_threads=threads, **POLICIES[policy])
    try:
        slow, slow_out = run(tmp_path, tok, data, "python", native=False, monkeypatch=monkeypatch, **options)
    except DisallowedSpecialError as exc:  # "raise": both paths name the same document
        with pytest.raises(DisallowedSpecialError) as caught:
            run(tmp_path, tok, data, "native", native=True, monkeypatch=monkeypatch, **options)
        assert str(caught.value) == str(exc)
        return
    fast, fast_out = run(tmp_path, tok, data, "native", native=True, monkeypatch=monkeypatch, **options)
    assert fast_out.read_bytes() == slow_out.read_bytes()
    assert ef.index_path(fast_out) != ef.index_path(slow_out)
    with open(ef.index_path(fast_out), "rb") as a, open(ef.index_path(slow_out), "rb") as b:
        assert a.read() == b.read()
    assert (fast.documents, fast.tokens, fast.bytes) == (slow.documents, slow.tokens, slow.bytes)
    ids, index = load_encoded(fast_out)
    assert (ids.tolist(), index.tolist()) == expected(tok, data, separator, eos, POLICIES[policy])


def test_many_documents_over_many_chunks_on_two_threads(tmp_path, monkeypatch):
    """Enough documents that the native threads share each chunk (batches of more than 32 KB)."""
    tok = TOKENIZERS["qwen3"]
    lines = [f"line {i}: {'héllo wörld ' * (i % 7)}日本語 {i * 7919}" + ("\r" if i % 5 == 0 else "")
             for i in range(20_000)]
    lines[100] = ""
    lines[200] = "x" * 100_000  # a document longer than a chunk
    data = ("\n".join(lines)).encode("utf-8")  # the last line without a newline
    for eos in (False, True):
        fast, fast_out = run(tmp_path, tok, data, "native", native=True, monkeypatch=monkeypatch, eos=eos,
                             chunk_bytes=64 << 10, num_threads=2)
        slow, slow_out = run(tmp_path, tok, data, "python", native=False, monkeypatch=monkeypatch, eos=eos,
                             chunk_bytes=64 << 10, num_threads=2)
        assert fast.documents == len(lines) and fast.tokens == slow.tokens
        assert load_encoded(fast_out) == load_encoded(slow_out)


@pytest.mark.parametrize("bad, at", [
    (b"bad \xff here", 4),             # an invalid start byte
    (b"cut \xe6\x97", 4),              # a truncated sequence at the end of the file
    (b"surrogate \xed\xa0\x80 x", 10),  # an encoded surrogate, refused by both decoders
    (b"overlong \xc0\xaf", 9),
])
@pytest.mark.parametrize("chunk", [1, 100, 1 << 20])
def test_text_that_is_not_utf8_names_the_same_byte(tmp_path, monkeypatch, bad, at, chunk):
    data = "fïne\n".encode() * 300 + bad + b"\nafter\n"
    messages = []
    for native in (True, False):
        with pytest.raises(WordsplitError) as caught:
            run(tmp_path, TOKENIZERS["gpt2"], data, "out", native=native, monkeypatch=monkeypatch, chunk_bytes=chunk)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert re.search(rf": byte {len('fïne'.encode()) * 300 + 300 + at} is not valid UTF-8", messages[0])
    assert not (tmp_path / "out.bin").exists()


@pytest.mark.parametrize("chunk", [1, 50, 1 << 20])
def test_a_disallowed_special_token_names_the_same_document(tmp_path, monkeypatch, chunk):
    data = b"fine\n" * 40 + b"not <|endoftext|> fine\nmore\n"
    messages = []
    for native in (True, False):
        with pytest.raises(DisallowedSpecialError) as caught:
            run(tmp_path, TOKENIZERS["cl100k_base"], data, "out", native=native, monkeypatch=monkeypatch,
                chunk_bytes=chunk, disallowed_special="all")
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and messages[0].startswith("document 41: ")


def test_a_stream_and_a_disallowed_string_that_is_not_special(tmp_path, monkeypatch):
    """A binary stream goes the native way too; a disallowed string that is no special token
    (checked in Python) makes the documents go through Python, with the same error."""
    tok = TOKENIZERS["gpt2"]
    data = b"one\ntwo three\n\nfour"
    summary = encode_file(tok, io.BytesIO(data), tmp_path / "s.bin", chunk_bytes=3)
    assert summary.documents == 4 and summary.bytes == len(data)
    assert load_encoded(tmp_path / "s.bin")[0].tolist() == expected(tok, data, "\n", False, {})[0]
    with pytest.raises(WordsplitError, match="three"):
        encode_file(tok, io.BytesIO(data), tmp_path / "d.bin", disallowed_special={"three"})
