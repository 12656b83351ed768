"""Streaming decode (``Tokenizer.decode_stream``): properties on both backends, and HF's DecodeStream.

Properties (hypothesis, any sequence of valid ids, any grouping into steps): the chunks add up
to ``decode(ids)``; what is held back is only the start of an incomplete UTF-8 character;
nothing valid raises; each step decodes only its own ids (never the prefix again). Against
HF ``tokenizers.decoders.DecodeStream`` on Qwen3's tokenizer.json: the same total text, HF's
text so far is always a prefix of ours (we are never behind), and the same chunks when every
token is whole characters.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BACKENDS, tokenizer_for
from wordsplit.errors import UnknownTokenError

NAMES = ["qwen3", "cl100k_base", "o200k_harmony"]


def valid_ids(tok):
    """Any id of the vocabulary: BPE tokens (bytes, partial characters...), special and added."""
    literals = sorted({*tok.vocab.special_tokens.values(), *tok.vocab.added_tokens.values()})
    return st.one_of(
        st.integers(0, tok.vocab.n_bpe - 1),
        st.integers(0, 255).map(lambda b: tok.vocab.ranks[bytes([b])]),  # single bytes: broken UTF-8
        st.sampled_from(literals),
    )


def run(stream, groups):
    out = []
    for group in groups:
        chunk = stream.step(group)
        assert chunk is None or (isinstance(chunk, str) and chunk)
        out.append(chunk or "")
    return "".join(out)


def groupings(draw, ids):
    """ids cut into steps: single ints and lists of any length."""
    groups, i = [], 0
    while i < len(ids):
        n = draw(st.integers(0, 3))
        if n == 0:
            groups.append(ids[i])
            i += 1
        else:
            groups.append(ids[i:i + n])
            i += n
    return groups


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_chunks_add_up_to_decode(name, backend, data):
    tok = tokenizer_for(name, backend=backend)
    ids = data.draw(st.lists(valid_ids(tok), max_size=30))
    stream = tok.decode_stream()
    text = run(stream, groupings(data.draw, ids))
    whole = tok.decode(ids)
    if "\ufffd" not in whole:
        assert text == whole
    # Always: what finish() adds for an incomplete end makes it decode()'s replace output.
    assert text + (stream.finish() or "") == whole


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_holds_back_only_an_incomplete_character(name, backend, data):
    tok = tokenizer_for(name, backend=backend)
    ids = data.draw(st.lists(valid_ids(tok), max_size=25))
    stream, seen, done = tok.decode_stream(), b"", ""
    for token in ids:
        done += stream.step(token) or ""
        seen += tok.decode_bytes([token])
        pending = stream.pending
        assert seen.endswith(pending) and len(pending) <= 3
        if pending:
            # the start of a character: a lead byte and fewer continuation bytes than it needs
            lead = pending[0]
            need = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
            assert need > len(pending) and all(0x80 <= b <= 0xBF for b in pending[1:])
        # everything before the held-back bytes has been returned
        assert done == seen[: len(seen) - len(pending)].decode("utf-8", errors="replace")


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_skip_special_tokens_and_prefill(backend, data):
    tok = tokenizer_for("qwen3", backend=backend)
    ids = data.draw(st.lists(valid_ids(tok), max_size=25))
    specials = set(tok.vocab.special_tokens.values())
    kept = [i for i in ids if i not in specials]
    stream = tok.decode_stream(skip_special_tokens=True)
    assert run(stream, ids) + (stream.finish() or "") == tok.decode(kept)
    # Prefill: the text of the prefill is not returned; a character it leaves open is.
    cut = data.draw(st.integers(0, len(ids)))
    stream = tok.decode_stream(ids=ids[:cut])
    head = tok.decode_bytes(ids[:cut])
    rest = run(stream, ids[cut:]) + (stream.finish() or "")
    whole = tok.decode_bytes(ids)
    if not _has_invalid(whole):
        complete = len(head) - len(_incomplete_tail(head))
        assert rest == whole[complete:].decode("utf-8")


def _incomplete_tail(data: bytes) -> bytes:
    for size in range(1, min(3, len(data)) + 1):
        tail = data[-size:]
        try:
            tail.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.reason == "unexpected end of data" and exc.start == 0:
                return tail
    return b""


def _has_invalid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_step_decodes_only_its_own_ids(backend, monkeypatch):
    """O(1) per token: the decode work of a step is its own ids, whatever came before."""
    tok = tokenizer_for("qwen3", backend=backend)
    ids = tok.encode("streaming 😀 text, " * 200)
    stream = tok.decode_stream()
    calls = []
    original = type(tok).decode_bytes
    monkeypatch.setattr(type(tok), "decode_bytes",
                        lambda self, batch: calls.append(len(list(batch))) or original(self, batch))
    text = "".join(stream.step(i) or "" for i in ids)
    assert text == tok.decode(ids)
    assert calls == [1] * len(ids)


@pytest.mark.parametrize("backend", BACKENDS)
def test_copies_are_independent(backend):
    import copy

    tok = tokenizer_for("qwen3", backend=backend)
    ids = tok.encode("a 😀 b 🦀")
    for cut in range(len(ids) + 1):
        stream = tok.decode_stream()
        head = "".join(stream.step(i) or "" for i in ids[:cut])
        for twin in (copy.copy(stream), copy.deepcopy(stream)):
            assert twin.pending == stream.pending
            assert head + "".join(twin.step(i) or "" for i in ids[cut:]) == tok.decode(ids)
        assert head + "".join(stream.step(i) or "" for i in ids[cut:]) == tok.decode(ids)


@pytest.mark.parametrize("backend", BACKENDS)
def test_invalid_ids_raise(backend):
    tok = tokenizer_for("qwen3", backend=backend)
    stream = tok.decode_stream()
    with pytest.raises(UnknownTokenError):
        stream.step(10**9)
    with pytest.raises(TypeError):
        stream.step("hello")
    assert stream.step([]) is None
    assert stream.step(14990) == "hello"  # the stream still works after an error


# -- HF's DecodeStream on Qwen3 --------------------------------------------------------------------

HF_TEXTS = [
    "hello world",
    "héllo 😀 世界<|im_end|><think>reasoning</think> done",
    "<|im_start|>assistant\n<tool_call>\n{\"name\": \"f\"}\n</tool_call><|im_end|>",
    "🦀🇯🇵👨‍👩‍👧 emoji sequences",
    "mixed: Ελληνικά, русский, हिन्दी, ไทย, 한국어, العربية",
    "code:\n    def f(x):\n        return x ** 2\n",
]


@pytest.fixture(scope="module")
def hf_stream(hf_qwen3):
    from tokenizers.decoders import DecodeStream

    return DecodeStream


def hf_run(hf_qwen3, DecodeStream, steps, **kwargs):
    stream = DecodeStream(**kwargs)
    return [stream.step(hf_qwen3, step) for step in steps]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("text", HF_TEXTS)
def test_matches_hf_decode_stream(text, skip, backend, hf_qwen3, hf_stream):
    tok = tokenizer_for("qwen3", backend=backend)
    ids = hf_qwen3.encode(text, add_special_tokens=False).ids
    theirs = hf_run(hf_qwen3, hf_stream, ids, skip_special_tokens=skip)
    stream = tok.decode_stream(skip_special_tokens=skip)
    ours = [stream.step(i) for i in ids]
    expected = hf_qwen3.decode(ids, skip_special_tokens=skip)
    assert "".join(c or "" for c in ours) == "".join(c or "" for c in theirs) == expected
    ours_so_far = theirs_so_far = ""
    for mine, hf in zip(ours, theirs):
        ours_so_far += mine or ""
        theirs_so_far += hf or ""
        assert ours_so_far.startswith(theirs_so_far)  # never behind HF
    if all(tok.id_to_token(i).decode("utf-8", errors="ignore").encode() == tok.id_to_token(i) for i in ids):
        assert ours == theirs  # whole-character tokens: the very same chunks


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("text", HF_TEXTS)
def test_prefill_and_lists_match_hf(text, backend, hf_qwen3, hf_stream):
    tok = tokenizer_for("qwen3", backend=backend)
    ids = hf_qwen3.encode(text, add_special_tokens=False).ids
    whole = hf_qwen3.decode(ids, skip_special_tokens=False)
    for cut in range(0, len(ids) + 1):
        stream = tok.decode_stream(ids=ids[:cut])
        ours = "".join(stream.step(i) or "" for i in ids[cut:])
        head = tok.decode_bytes(ids[:cut])
        if _incomplete_tail(head):
            # A prefill ending inside a character: we return the text from that character on;
            # HF returns the prefill's text again in front of it.
            assert ours == whole[len(head[:-len(_incomplete_tail(head))].decode("utf-8")):]
            continue
        theirs = hf_run(hf_qwen3, hf_stream, ids[cut:], ids=ids[:cut])
        assert ours == "".join(c or "" for c in theirs) == whole[len(head.decode("utf-8")):]
    groups = [ids[i:i + 4] for i in range(0, len(ids), 4)]
    theirs = hf_run(hf_qwen3, hf_stream, groups)
    stream = tok.decode_stream()
    assert "".join(stream.step(g) or "" for g in groups) == "".join(c or "" for c in theirs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_ids_match_hf_when_valid(data, hf_qwen3, hf_stream):
    tok = tokenizer_for("qwen3", backend="native")
    ids = data.draw(st.lists(valid_ids(tok), max_size=20))
    whole = tok.decode_bytes(ids)
    theirs = hf_run(hf_qwen3, hf_stream, ids)
    stream = tok.decode_stream()
    ours = "".join(stream.step(i) or "" for i in ids)
    if not _has_invalid(whole):
        assert ours == "".join(c or "" for c in theirs) == hf_qwen3.decode(ids, skip_special_tokens=False)
