"""The native backend: one call per encode, threaded batches, flat buffers, fallbacks."""

from __future__ import annotations

import ctypes
from pathlib import Path
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ALL_VOCABS, tokenizer_for
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import BackendUnavailableError, DecodeInputError, DisallowedSpecialError, UnknownTokenError
from wordsplit import core
from wordsplit.core import extension
from wordsplit.spanners import spanner_for

TEXTS = ["hello world", "", "Hello, world! 123", "<think>x</think>", "naïve café 中文 😀", "a\ud800b", " " * 50]


def native_constant(name: str) -> int:
    return getattr(extension(), name)


def in_fresh_process(script: str, *flags: str) -> list[str]:
    """The words ``script`` prints, run by this interpreter (with ``flags``) in a process of
    its own, which must exit cleanly (a crash there fails the test, not the test run)."""
    import subprocess

    done = subprocess.run([sys.executable, *flags, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def threaded_batch(texts: list[str]) -> list[str]:
    """``texts`` plus two long ones, so the batch is large enough (in text bytes, and in ids
    once encoded) to be shared with helper threads rather than run on the calling thread."""
    long = ["tokenizer " * (native_constant("ALONE_BELOW_TEXT_BYTES") // 10), "7 " * native_constant("ALONE_BELOW_IDS")]
    return texts + long


@pytest.mark.parametrize("name", ALL_VOCABS)
def test_auto_uses_the_native_scanner_pipeline(name):
    tok = tokenizer_for(name, "auto", "native")
    assert tok.backend == "native"
    assert tok.spanner_name == spanner_for(tok.vocab.pipeline.spanner) is not None
    assert tok.native  # every stage native: one call with the GIL released, batches on threads


@pytest.mark.parametrize("threads", [None, 1, 2, 5])
@pytest.mark.parametrize("name", ["qwen3", "cl100k_base", "o200k_harmony"])
def test_batch_equals_single(name, threads):
    """Order kept whatever finishes first (one long text among short ones, more threads than
    texts or cores), on the native threads; texts with lone surrogates are fixed in the batch."""
    tok = tokenizer_for(name, "auto", "native")
    texts = threaded_batch(TEXTS * 20 + [""]) + TEXTS[:3]
    expected = [tok.encode(t, disallowed_special=()) for t in texts]
    assert sum(map(len, expected)) >= native_constant("ALONE_BELOW_IDS")
    assert tok.encode_batch(texts, num_threads=threads, disallowed_special=()) == expected
    ids, offsets = tok.encode_batch_flat(texts, num_threads=threads, disallowed_special=())
    assert ids.format == "I" and offsets.format == "Q"
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == expected
    assert tok.decode_batch(expected, num_threads=threads) == [tok.decode(e) for e in expected]
    with_surrogate = texts[:5] + ["lone \ud800 surrogate", "pair \ud83d\ude00 joined"]
    assert tok.encode_batch(with_surrogate, num_threads=threads) == [tok.encode(t) for t in with_surrogate]


def test_batch_special_policy_and_errors():
    tok = tokenizer_for("cl100k_base", "auto", "native")
    with pytest.raises(DisallowedSpecialError, match="allowed_special"):
        tok.encode_batch(["fine", "not <|endoftext|> fine"])
    with pytest.raises(DisallowedSpecialError, match="allowed_special"):
        tok.encode_batch_flat(["not <|endoftext|> fine"])
    assert tok.encode_batch(["a<|endoftext|>"], allowed_special="all") == [[64, 100257]]
    assert tok.count("a<|endoftext|>", allowed_special="all") == 2


def test_flat_buffer_on_python_backend_matches():
    py, nat = tokenizer_for("qwen3", "auto", "python"), tokenizer_for("qwen3", "auto", "native")
    a, b = py.encode_batch_flat(TEXTS), nat.encode_batch_flat(TEXTS)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()


def test_numpy_reads_flat_buffers_without_copy():
    import numpy as np
    ids, offsets = tokenizer_for("qwen3", "auto", "native").encode_batch_flat(["hello world"])
    arr = np.asarray(ids)
    assert arr.dtype == np.uint32 and arr.tolist() == [14990, 1879]
    assert np.shares_memory(arr, np.asarray(ids))


def test_regex_spanner_on_native_backend_is_native():
    tok = TokenizerOptions(spanner="regex", backend="native").build(load_vocab("qwen3"))
    assert tok.native and tok.backend == "native"
    assert tok.encode("hello world") == [14990, 1879]


def test_missing_extension():
    with core.switched_off():
        assert not core.available()
        with pytest.raises(BackendUnavailableError, match="backend='python'"):
            TokenizerOptions(backend="native").build(load_vocab("gpt2"))
        tok = TokenizerOptions().build(load_vocab("gpt2"))
        assert tok.backend == "python" and tok.encode("hello world") == [31373, 995]
    assert core.available() and TokenizerOptions().build(load_vocab("gpt2")).backend == "native"


def test_environment_forces_python(monkeypatch):
    monkeypatch.setenv("WORDSPLIT_BACKEND", "python")
    assert TokenizerOptions().build(load_vocab("gpt2")).backend == "python"
    assert TokenizerOptions(backend="native").build(load_vocab("gpt2")).backend == "native"
    monkeypatch.setenv("WORDSPLIT_BACKEND", "Native")
    assert TokenizerOptions().build(load_vocab("gpt2")).backend == "native"


def test_an_unknown_environment_backend_is_an_error(monkeypatch):
    from wordsplit.errors import UnknownComponentError

    monkeypatch.setenv("WORDSPLIT_BACKEND", "pythn")
    with pytest.raises(UnknownComponentError, match="unknown WORDSPLIT_BACKEND value 'pythn'; known: auto, native, "
                                                     "python. Did you mean 'python'"):
        TokenizerOptions().build(load_vocab("gpt2"))


@pytest.mark.parametrize("backend", ["native", "python"])
def test_a_named_scanner_must_fit_the_pattern(backend):
    from wordsplit.errors import UnsupportedTokenizerError

    with pytest.raises(UnsupportedTokenizerError, match="spanner='auto'"):
        TokenizerOptions(spanner="cl100k-scanner", backend=backend).build(load_vocab("qwen3"))
    tok = TokenizerOptions(spanner="qwen2-scanner", backend=backend).build(load_vocab("qwen3"))
    assert tok.encode("hello world") == [14990, 1879]


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.integers(0, 100255), max_size=12))
def test_native_decode_replaces_invalid_utf8_like_python(ids):
    """Rust's lossy UTF-8 and Python's errors="replace" replace the same maximal subparts."""
    tok = tokenizer_for("cl100k_base", "auto", "native")
    ids = [i for i in ids if tok.vocab.token_bytes[i] is not None]
    assert tok.decode(ids) == tok.decode_bytes(ids).decode("utf-8", "replace")


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=40))
def test_native_decode_of_random_bytes(data):
    tok = tokenizer_for("gpt2", "auto", "native")
    ids = [tok.token_to_id(bytes([b])) for b in data]
    assert tok.decode(ids) == data.decode("utf-8", "replace")


def test_per_thread_caches_keep_vocabularies_apart():
    """The piece and pair caches are per tokenizer: alternating vocabularies on one thread
    gives each its own ids (text with many merged pieces, so the caches are used)."""
    text = "naïve résumé Всеобщая декларация 中文字符 " * 20
    toks = [tokenizer_for(n, "auto", "native") for n in ("qwen3", "cl100k_base", "o200k_base", "gpt2")]
    expected = [tokenizer_for(n, "auto", "python").encode(text) for n in ("qwen3", "cl100k_base", "o200k_base", "gpt2")]
    for _ in range(3):
        assert [tok.encode(text) for tok in toks] == expected


def test_repeated_long_pieces_match_the_oracle(tiktoken_oracle):
    """Pieces of 33 to 256 bytes (table rules, box drawing) are remembered apart from the short
    ones, keyed by their whole bytes: pieces of one length that differ in one byte, a piece
    that begins another, and more distinct pieces than the cache keeps, each seen many times."""
    rules = ["+" + "-" * n + "+" + "-" * m for n in (40, 41, 90) for m in (3, 200)]
    rules += ["=" * 74, "=" * 73 + "-", "-" + "=" * 73, "├" + "─" * 80 + "┼" + "─" * 3, "x" * 256, "x" * 257]
    rules += [f"{i:04d}" + "#" * (40 + i % 200) for i in range(2000)]
    text = "\n".join(rules * 3)
    native = tokenizer_for("cl100k_base", "auto", "native")
    assert native.encode(text) == tiktoken_oracle("cl100k_base").encode_ordinary(text)
    for rule in rules[:20]:
        assert native.encode(rule) == tiktoken_oracle("cl100k_base").encode_ordinary(rule)


def test_many_distinct_pieces_match_the_oracle_while_the_piece_table_grows(tiktoken_oracle):
    """More distinct short pieces than the first piece table holds (131,072), shuffled anew
    on each of three passes, so evicted pieces come back; each text also carries 100,000
    pieces " a", so that enough pieces are looked up (16.8 million) for the table to grow
    between chunks of the piece loop, moving every piece it holds; the ids stay the
    oracle's."""
    import random
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({" " + "".join(rng.choices(letters, k=rng.randint(3, 7))) for _ in range(320_000)})
    oracle = tiktoken_oracle("cl100k_base")
    [a] = oracle.encode_ordinary(" a")
    filler = 100_000
    native = tokenizer_for("cl100k_base", "auto", "native")
    for _ in range(3):
        rng.shuffle(words)
        for start in range(0, len(words), 2500):
            text = "".join(words[start:start + 2500])
            assert native.encode_ordinary(text + " a" * filler) == oracle.encode_ordinary(text) + [a] * filler


def test_native_decode_reads_any_sequence_of_ints():
    """Lists are read in place; other iterables, numpy ints and out-of-range ints still decode
    or fail exactly as on the Python backend."""
    import numpy as np
    tok = tokenizer_for("cl100k_base", "auto", "native")
    ids = tok.encode("hello world")
    assert tok.decode(ids) == tok.decode(tuple(ids)) == tok.decode(iter(ids)) == "hello world"
    assert tok.decode(np.array(ids, dtype=np.uint32)) == "hello world"
    assert tok.decode([np.int64(i) for i in ids]) == "hello world"
    assert tok.decode([True, 0]) == tok.decode([1, 0])
    for bad in ([2**70], [2**32 + 1], [-(2**63)]):
        with pytest.raises(UnknownTokenError):
            tok.decode(bad)
    # The ints' digits are read in place: one digit (0 included), two digits (from 2**30) and
    # more; negative ones; an int subclass takes CPython's conversion.
    class Id(int):
        pass
    assert tok.decode([0, Id(ids[0])] + ids) == "!" + tok.decode(ids[:1]) + "hello world"
    for big in (2**30 - 1, 2**30, 2**31, 2**32 - 1, 2**32, 2**60, -1, -(2**30)):
        with pytest.raises(UnknownTokenError, match=rf"^token id {big} is outside the vocabulary"):
            tok.decode(ids + [big])
    with pytest.raises(DecodeInputError, match=r"^token ids are ints, got '2' \(str\)$"):
        tok.decode([1, "2"])
    with pytest.raises(UnknownTokenError, match=r"^token id -2 is outside the vocabulary 'cl100k_base'"):
        tok.decode_bytes([1, -2])


def test_a_policy_made_by_another_pipeline_is_an_error():
    """A native special-token policy holds one flag per literal of the pipeline that made it:
    given to another pipeline it is refused with a typed error (not an index out of bounds)."""
    from wordsplit.errors import UnsupportedTokenizerError

    gpt2 = tokenizer_for("gpt2", "auto", "native").native_engine()._pipeline
    o200k = tokenizer_for("o200k_base", "auto", "native").native_engine()._pipeline
    policy = gpt2.policy(["<|endoftext|>"], [])
    with pytest.raises(UnsupportedTokenizerError, match="policy made for another pipeline"):
        o200k.encode("x <|endofprompt|> y <|endoftext|>", policy)


def test_decode_takes_an_iterable_s_length_as_a_hint_only():
    """An iterable may claim any length: decode reads what it yields (a claim of 2**45 ids
    once made the extension try to reserve 128 TiB and abort)."""
    tok = tokenizer_for("cl100k_base", "auto", "native")

    class Claims:
        def __init__(self, claimed):
            self.claimed = claimed

        def __len__(self):
            return self.claimed

        def __iter__(self):
            return iter([15339, 1917])

    for claimed in (0, 1, 2**45, 2**62):
        assert tok.decode(Claims(claimed)) == "hello world"
        assert tok.decode_bytes(Claims(claimed)) == b"hello world"
        assert tok.decode_batch([Claims(claimed)]) == ["hello world"]


def test_the_first_decode_may_run_python_code_that_decodes_again():
    """Decoding a list asks Python once which int layout the interpreter has (an import):
    an import hook that decodes again while it runs, on the same thread, must not wait for
    itself. A fresh process, so that this decode is the process's first."""

    script = """if True:
        import builtins, sys
        from wordsplit import _native
        ranks = _native.MergeTables(bytes(range(256)), b"".join(i.to_bytes(4, "little") for i in range(256)),
                                    (1).to_bytes(4, "little") * 256, b"\\x01" * 256, 256, None, True, "bytes")
        real_import = builtins.__import__
        def hook(name, *args, **kwargs):
            if name == "sys" and sys._getframe(1).f_code.co_name == "first":
                ranks.decode_bytes([104])
            return real_import(name, *args, **kwargs)
        builtins.__import__ = hook
        def first():
            return ranks.decode_bytes([104, 105])
        print(first())
    """
    assert in_fresh_process(script) == ["b'hi'"]


@pytest.mark.parametrize("change", ["clear", "shorten", "grow"])
def test_decode_of_a_list_its_items_change_reads_it_as_python_does(change):
    """An item's ``__index__`` runs Python code, which may change the list being decoded:
    the native backend reads what a Python loop over the list reads (no item past its end,
    none freed), as the Python backend does."""
    def decoded(backend):
        ids = []

        class Changes:
            def __index__(self):
                if change == "clear":
                    ids.clear()
                elif change == "shorten":
                    del ids[2:]
                else:
                    ids.extend([15339, 1917])
                return 9906

        ids.extend([Changes(), 1917] + [15339] * 5000)
        return tokenizer_for("cl100k_base", "auto", backend).decode(ids)

    assert decoded("native") == decoded("python")


def test_result_lists_share_ints_but_not_lists():
    """Result lists hold shared int objects (made once per id); each list is its own, and the
    ints outlive the tokenizer that made them."""
    import gc

    tok = TokenizerOptions(backend="native").build(load_vocab("o200k_base"))
    first, second = tok.encode("tokenizers everywhere"), tok.encode("tokenizers everywhere")
    assert first == second and first is not second
    first.append(-1)
    assert tok.encode("tokenizers everywhere") == second
    batch = tok.encode_batch(["tokenizers everywhere"] * 3, num_threads=2)
    del tok
    gc.collect()
    assert batch == [second] * 3 and sum(second) == sum(batch[0])


def test_batches_work_in_a_forked_child():
    """The helper threads do not survive fork: a child builds its own instead of waiting on
    threads that are not there (multiprocessing's default start method on Linux)."""
    import multiprocessing

    tok = TokenizerOptions(backend="native").build(load_vocab("cl100k_base"))
    texts = threaded_batch(["hello world"] * 8)
    expected = tok.encode_batch(texts, num_threads=2)  # the parent's pool exists now
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        result = pool.apply_async(_batch_in_child, (tok, texts))
        assert result.get(timeout=60) == (expected, [list(b"hello world")] * 2)


def _batch_in_child(tok, texts):
    ids = tok.encode("hello world")
    decoded = tok.decode_batch([ids] * native_constant("ALONE_BELOW_IDS"), num_threads=2)
    assert set(decoded) == {"hello world"}
    return tok.encode_batch(texts, num_threads=2), [list(d.encode()) for d in decoded[:2]]


def test_batch_threads_stay_bounded():
    """Batches of every size share one pool of helpers: no pool per thread count."""
    tok = TokenizerOptions(backend="native").build(load_vocab("cl100k_base"))
    tok.encode_batch(threaded_batch(["warm up"]), num_threads=4)
    before = _native_thread_count()
    text_bytes, ids = native_constant("ALONE_BELOW_TEXT_BYTES"), native_constant("ALONE_BELOW_IDS")
    for k in range(2, 12):
        tok.encode_batch(["hello world " * (text_bytes // 12 // k + 1)] * k, num_threads=4)
        tok.decode_batch([[1, 2] * (ids // 2 // k + 1)] * k, num_threads=4)
    assert _native_thread_count() == before


def test_small_batches_stay_on_the_calling_thread():
    """A batch below the size where helpers pay off starts no helper threads; a larger one does.
    (A fresh process: the helper pool is per process and other tests have made it here.)"""
    script = """if True:
        import os
        from wordsplit import TokenizerOptions, load_vocab, _native
        tok = TokenizerOptions(backend="native").build(load_vocab("cl100k_base"))
        threads = lambda: len(os.listdir("/proc/self/task"))
        alone = threads()
        tok.encode_batch(["hello world"] * 100, num_threads=2)
        tok.decode_batch([[1, 2]] * 100, num_threads=2)
        small = threads()
        tok.encode_batch(["hello world"] * _native.ALONE_BELOW_TEXT_BYTES, num_threads=2)
        print(alone, small, threads())
    """
    alone, small, large = map(int, in_fresh_process(script))
    assert small == alone and large == alone + 1


def test_threads_started_one_after_another_load_and_encode():
    """Each of many short-lived threads loads a vocabulary, builds a tokenizer and encodes, one
    thread after the other (a thread pool's or a web server's life). A fresh process: the
    extension's allocator sets up each thread on its first allocation, and the allocator this
    guards against (mimalloc 3.3) crashed there on the third or fourth thread."""

    script = """if True:
        import threading
        from wordsplit import TokenizerOptions, load_vocab
        text = "Привет, мир! hello world 你好 " * 10
        results = []
        def work():
            tok = TokenizerOptions(backend="native").build(load_vocab("o200k_base"))
            results.append(tok.encode_to_numpy(text).tolist() == tok.encode(text))
        for _ in range(12):
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
        print(results.count(True))
    """
    assert in_fresh_process(script) == ["12"]


def _native_thread_count() -> int:
    import os

    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("backend", ["python", "native"])
def test_sixteen_threads_share_one_tokenizer(backend):
    """One tokenizer used by 16 Python threads at once (single calls and batches, each its own
    text) gives every thread what a lone caller gets: no shared state is corrupted."""
    import threading

    tok = TokenizerOptions(backend=backend).build(load_vocab("qwen3"))
    texts = [f"thread {i}: " + TEXTS[i % len(TEXTS)] * (i + 1) for i in range(16)]
    expected = [tok.encode(t) for t in texts]
    results: dict[int, list] = {}
    start = threading.Barrier(16)

    def work(i):
        start.wait()
        got = []
        for _ in range(20):
            got.append(tok.encode(texts[i]) == expected[i])
            got.append(tok.encode_batch([texts[i]] * 3, num_threads=2) == [expected[i]] * 3)
            got.append(tok.decode(expected[i]) == tok.decode(tok.encode(texts[i])))
        results[i] = got

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(results) == list(range(16)) and all(all(r) for r in results.values())


@pytest.mark.parametrize("text", [
    "naïve café déjà",  # 8-bit code points (Latin-1 str), two-byte UTF-8
    "Ελλάδα, Россия — 中文。",  # 16-bit code points, two- and three-byte UTF-8
    "emoji 😀 and 𝔘𝔫𝔦 and \U0010ffff",  # 32-bit code points, four-byte UTF-8
    "é" * 5000 + "x" + "中" * 3000,  # long runs of one width
    "\x80\xff\u0100\u07ff\u0800\uffff\U00010000",  # the edges of each UTF-8 length
])
def test_non_ascii_strs_of_every_width_read_as_their_utf8(text):
    """The native engine reads the UTF-8 of a str of every width CPython stores a str in,
    whether or not the str already holds its UTF-8 form."""
    native = tokenizer_for("cl100k_base", "auto", "native")
    python = tokenizer_for("cl100k_base", "auto", "python")
    expected = python.encode(text)
    assert native.encode(text) == expected
    assert native.decode(expected) == text
    assert native.encode_batch([text, text + "!"]) == [expected, python.encode(text + "!")]
    # Now the str holds its UTF-8 (CPython's C API keeps it once asked): read from there.
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8
    as_utf8.argtypes, as_utf8.restype = [ctypes.py_object], ctypes.c_void_p
    assert as_utf8(text)
    assert native.encode(text) == expected


def kept_utf8(text: str) -> bytes:
    """The UTF-8 a str holds (CPython's ``PyUnicode_AsUTF8AndSize`` returns it as kept, and
    makes and keeps it first when the str holds none), checked to end with a NUL as C
    callers of ``PyUnicode_AsUTF8`` expect."""
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    as_utf8.argtypes, as_utf8.restype = [ctypes.py_object, ctypes.POINTER(ctypes.c_ssize_t)], ctypes.c_void_p
    size = ctypes.c_ssize_t()
    with_nul = ctypes.string_at(as_utf8(text, ctypes.byref(size)), size.value + 1)
    assert with_nul[-1:] == b"\0"
    return with_nul[:-1]


def test_the_utf8_kept_with_a_str_is_freed_by_the_allocator_that_made_it():
    """Under Python's debug allocator (``-X dev``), which checks that each block is freed by
    the allocator family that made it, strs of each width get their UTF-8 from the
    extension and are freed: a mismatch would abort the process."""

    script = """if True:
        import gc
        from wordsplit import TokenizerOptions, load_vocab
        tok = TokenizerOptions(backend="native").build(load_vocab("cl100k_base"))
        for text in ["na\u00efve caf\u00e9 " * 40, "\u4e2d\u6587 \u0416 " * 60, "emoji \U0001f600 " * 30, "\u00e9"]:
            for _ in range(50):
                fresh = (text + " ")[:-1]
                tok.encode(fresh)
                del fresh
        gc.collect()
        print("freed")
    """
    assert in_fresh_process(script, "-X", "dev") == ["freed"]


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(exclude_categories=["Cs"]), max_size=80),
       ascii_run=st.integers(0, 40))
def test_the_utf8_made_for_a_str_is_kept_with_it_as_cpython_keeps_its_own(text, ascii_run):
    """A non-ASCII str without UTF-8 gets it from the extension (runs of ASCII 16 at a
    time, the rest one character at a time), kept with the str: its ids are the Python
    engine's, the kept bytes are the str's UTF-8, and the str's size grows by them and a NUL,
    as when CPython makes them."""
    native = tokenizer_for("cl100k_base", "auto", "native")
    python = tokenizer_for("cl100k_base", "auto", "python")
    text = "\u00e9" + "a" * ascii_run + text + "b" * ascii_run + "!"  # a new str, never ASCII
    size = sys.getsizeof(text)
    # encode_ordinary: the text may spell a special token ("<|endofprompt|>"), which encode refuses.
    assert native.encode_ordinary(text) == python.encode_ordinary(text)
    utf8 = text.encode("utf-8")
    assert sys.getsizeof(text) == size + len(utf8) + 1
    assert kept_utf8(text) == utf8
    assert native.encode_ordinary(text) == python.encode_ordinary(text)  # read from what was kept


def test_strs_with_surrogates_keep_no_utf8():
    """A str with a lone surrogate has no UTF-8: none is kept, and the text is encoded with
    the surrogate replaced, as before."""
    native = tokenizer_for("cl100k_base", "auto", "native")
    for text in ["é\ud800b" + "x" * 20, "\udfff" * 3, "😀 \udc00"]:
        text = (text + " ")[:-1]
        size = sys.getsizeof(text)
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        assert native.encode(text) == native.encode(fixed)
        assert sys.getsizeof(text) == size


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "qwen3"])
def test_the_avx2_paths_an_environment_switch_forces_give_the_same_ids(name):
    """``WORDSPLIT_NO_AVX512=1`` (docs/speed.md) runs the AVX2 scanners, piece keys and
    buffer sweep on an AVX-512 machine: the same ids over every corpus, in a fresh process
    (the switch is read once per process)."""
    import os
    import subprocess

    script = (
        "import gzip, hashlib, sys\n"
        "from wordsplit import TokenizerOptions, load_vocab\n"
        f"tok = TokenizerOptions(backend='native').build(load_vocab({name!r}))\n"
        "digest = hashlib.sha256()\n"
        "for path in sys.argv[1:]:\n"
        "    text = gzip.decompress(open(path, 'rb').read()).decode('utf-8')[:400_000]\n"
        "    digest.update(str(tok.encode_ordinary(text)).encode())\n"
        "print(digest.hexdigest())\n"
    )
    corpora = [str(path) for path in sorted((Path(__file__).parent / "data" / "corpus").glob("*.txt.gz"))]
    digests = set()
    for switch in ("0", "1"):
        env = {**os.environ, "WORDSPLIT_NO_AVX512": switch}
        done = subprocess.run([sys.executable, "-c", script, *corpora], capture_output=True, text=True,
                              timeout=600, env=env)
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1
