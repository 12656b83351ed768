"""SentencePiece BPE models without byte fallback in a tokenizer.json (NLLB, mBART, M2M100, as
transformers writes them): HF's BPE over each ``▁``-led word's characters, a character that is
no token the unknown one (:class:`~wordsplit.spec.CharacterBpe` after the Metaspace stages of
:mod:`wordsplit.formats.hf_metaspace`). The file NLLB's tokenizer class makes of
``test_sentencepiece_bpe.model`` (tests/data/unigram/SOURCES.md) against its golden and against
HF ``tokenizers`` 0.23 live on both backends, through ``compat.tokenizers`` and transformers'
``accelerate``; the layouts such files take (WhitespaceSplit then Metaspace, each prepend
scheme, ``fuse_unk`` off, no unknown token; the file's own mask token is ``normalized``, as
NLLB writes it, and a variant's is not) on hypothesis' texts; and what stays refused."""

from __future__ import annotations

import copy
import functools
import json
import time

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compat_cases import result
from test_unigram import ADVERSARIAL, TEXTS, UNIGRAM, decode, golden, raw, with_specials
from wordsplit import TokenizerOptions
from wordsplit.compat.tokenizers import Tokenizer
from wordsplit.core import extension
from wordsplit.errors import UnsupportedTokenizerError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.spec import CharacterBpe, SentencePieceSplit

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")

NLLB = "test_sentencepiece_bpe.nllb.tokenizer.json.gz"
BACKENDS = ("python", "native")
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _raw_mask(spec: dict) -> None:
    """<mask> found in the text as it is (HF's first pass), not NLLB's own normalized one
    (found in the normalized text, then Metaspace runs on each part left)."""
    spec["added_tokens"][-1]["normalized"] = False


def nllb() -> dict:
    return json.loads(raw(UNIGRAM / NLLB))


def _metaspace(scheme: str, split: bool = True) -> dict:
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split}


def _pre_tokenizer(value, raw_mask: bool = False):
    def edit(spec: dict) -> None:
        spec["pre_tokenizer"] = value
        if raw_mask:
            _raw_mask(spec)
    return edit


WHITESPACE_SPLIT = {"type": "Sequence", "pretokenizers": [
    {"type": "WhitespaceSplit"},
    {"type": "Metaspace", "replacement": "\u2581", "str_rep": "\u2581", "add_prefix_space": True}]}


def _model(**fields):
    def edit(spec: dict) -> None:
        spec["model"].update(fields)
    return edit


# The layouts of such files: NLLB's and mBART's older files cut words first (WhitespaceSplit
# then Metaspace, the old form with add_prefix_space), each prepend scheme, no split, and the
# model's unknown token fused or not, or none (a character no token spells is dropped).
VARIANTS = {
    "as-made": lambda spec: None,
    "raw-mask": _raw_mask,
    "whitespace-split": _pre_tokenizer(WHITESPACE_SPLIT, raw_mask=True),
    "whitespace-split-first": _pre_tokenizer({"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, _metaspace("first")]}, raw_mask=True),
    "first": _pre_tokenizer(_metaspace("first")),
    "never": _pre_tokenizer(_metaspace("never")),
    "no-split": _pre_tokenizer(_metaspace("always", split=False)),
    "unfused": _model(fuse_unk=False),
    "no-unk": _model(unk_token=None),
}


def variant_text(name: str) -> str:
    spec = nllb()
    VARIANTS[name](spec)
    return json.dumps(spec, ensure_ascii=False)


@functools.cache
def tokenizers_of(name: str):
    """(HF's tokenizer, wordsplit's on each backend) of a variant."""
    text = variant_text(name)
    hf = tokenizers.Tokenizer.from_str(text)
    hf.no_padding()
    hf.no_truncation()
    vocab = read_hf_tokenizer_json(text.encode(), source=f"{name}.json")
    return hf, *(TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS)


def test_the_file_reads_as_bpe_over_characters_after_metaspace_and_runs_natively():
    _, python, native = tokenizers_of("as-made")
    pipeline = python.vocab.pipeline
    assert isinstance(pipeline.model, CharacterBpe) and pipeline.model.unk_token == "<unk>" and pipeline.model.fuse_unk
    assert isinstance(pipeline.spanner, SentencePieceSplit) and pipeline.spanner.metaspace_split
    assert native._engine.native and not python._engine.native


@pytest.mark.parametrize("backend", BACKENDS)
def test_golden(backend):
    data = golden("unigram-test_sentencepiece_bpe.nllb")
    assert data["oracle"] == f"tokenizers {tokenizers.__version__}" and data["model"] == "BPE"
    tok = tokenizers_of("as-made")[1 + BACKENDS.index(backend)]
    assert tok.n_vocab == data["n_vocab"]
    wrong = [(c["text"], c["ids"], got) for c in data["cases"]
             if (got := tok.encode(c["text"], allowed_special="all")) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"
    assert any(tok.vocab.unk_token_id in c["ids"] or 3 in c["ids"] for c in data["cases"])  # (unknown runs met)
    wrong = [c["text"] for c in data["cases"]
             if with_specials(tok, c["ids"]) != (c["with_specials"]["ids"], c["with_specials"]["type_ids"])]
    assert not wrong, wrong[:3]
    wrong = [(c["ids"], c["decoded"], got) for c in data["cases"] + data["decode_cases"]
             if (got := decode(tok, c["ids"])) != c["decoded"]]
    assert not wrong, f"{len(wrong)} decode mismatches, first: {wrong[0]!r}"


# Texts around the mask token (a normalized one but in the "raw-mask" variant).
MASKED = st.lists(st.sampled_from(["<mask>", " <mask>", "<mask> ", "  ", " ", "a", "b c", "ÿ", "\u2581", "<s>", "x"]),
                  max_size=10).map("".join)


@pytest.mark.parametrize("name", VARIANTS)
@EXAMPLES
@given(text=st.one_of(TEXTS, MASKED))
def test_hypothesis_texts_are_hfs_on_both_backends(name, text):
    hf, python, native = tokenizers_of(name)
    expected = hf.encode(text, add_special_tokens=False).ids
    assert python.encode(text, allowed_special="all") == expected
    assert native.encode(text, allowed_special="all") == expected
    assert decode(native, expected) == hf.decode(expected, skip_special_tokens=False)


@pytest.mark.parametrize("name", VARIANTS)
def test_adversarial_texts(name):
    hf, python, native = tokenizers_of(name)
    for text in [*ADVERSARIAL, "ÿ" * 300 + " x", "\u0378\u0379 a\u0378b", " " * 9, "a <mask>b", "<mask>x <mask>"]:
        expected = hf.encode(text, add_special_tokens=False).ids
        assert python.encode(text, allowed_special="all") == expected, text
        assert native.encode(text, allowed_special="all") == expected, text


@functools.cache
def compat_pair():
    text = variant_text("as-made")
    return tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)


COMPAT_TEXTS = ["Hello world", "  Hello   world  ", "", "a\tb\nc", "ÿÿ x ÿ", "<s>hi</s> <mask> there <unk>",
                "日本語 😀", "x▁y ▁▁z", "e\u0301 ﬁ"]


@pytest.mark.parametrize("text", COMPAT_TEXTS)
def test_compat_encodings_are_hfs(text):
    """Every field of the drop-in's encodings (offsets included), with and without the special
    tokens, alone and with a pair."""
    hf, ws = compat_pair()
    for call in (lambda t: t.encode(text), lambda t: t.encode(text, add_special_tokens=False),
                 lambda t: t.encode(text, COMPAT_TEXTS[-1]), lambda t: t.encode_batch([text, (text, "x y")])):
        assert result(lambda: call(ws)) == result(lambda: call(hf))
    ids = hf.encode(text).ids
    for skip in (True, False):
        assert ws.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)


def test_transformers_nllb_tokenizer_accelerated_is_identical(tmp_path):
    from transformers import NllbTokenizer

    from wordsplit.compat.transformers import accelerate

    (tmp_path / "tokenizer.json").write_text(variant_text("as-made"), encoding="utf-8")
    tok = NllbTokenizer(tokenizer_file=str(tmp_path / "tokenizer.json"))
    fast = accelerate(tok)
    assert fast.backend_tokenizer.accelerated and fast.backend_tokenizer.fallback_reason is None
    batch = COMPAT_TEXTS[:-1]
    for options in ({}, {"padding": True}, {"return_offsets_mapping": True}, {"truncation": True, "max_length": 4}):
        theirs, mine = tok(batch, **options), fast(batch, **options)
        assert {key: [list(row) for row in value] for key, value in mine.items()} \
            == {key: [list(row) for row in value] for key, value in theirs.items()}, options
    for text in batch:
        assert fast.tokenize(text) == tok.tokenize(text)
        assert fast.decode(tok.encode(text)) == tok.decode(tok.encode(text))


@pytest.mark.parametrize("edit, why", [
    (_model(dropout=0.1), "dropout"),
    (_model(ignore_merges=True), "ignore_merges"),
    (_pre_tokenizer({"type": "Sequence", "pretokenizers": [_metaspace("always"), {"type": "Digits"}]}),
     "pre-tokenizer Metaspace, Digits is not supported with a BPE model without byte_fallback"),
    (lambda spec: spec.update(decoder={"type": "BPEDecoder"}), "decoder"),
])
def test_what_wordsplit_does_not_reproduce_is_refused(edit, why):
    spec = nllb()
    edit(spec)
    with pytest.raises(UnsupportedTokenizerError, match=why):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="nllb.json")


@pytest.mark.parametrize("backend", BACKENDS)
def test_offsets_stay_linear_in_the_count_of_normalized_tokens(backend):
    """Each part between the file's own (normalized) masks is placed at its own cost, not the
    whole stretch's again: 8 times the masks take about 8 times as long, not 64."""
    tok = tokenizers_of("as-made")[1 + BACKENDS.index(backend)]
    tok.encode_with_offsets("warm <mask> up", allowed_special="all")
    times = []
    for count in (500, 4000):
        start = time.perf_counter()
        got = tok.encode_with_offsets("ab<mask>" * count, allowed_special="all")
        times.append(time.perf_counter() - start)
        assert got.ids.count(tok.encode("<mask>", allowed_special="all")[0]) == count
    assert times[1] < 25 * max(times[0], 0.01), f"500 masks took {times[0]:.2f} s, 4000 {times[1]:.2f} s"


def test_a_pickled_tokenizer_keeps_its_pipeline():
    import pickle

    _, _, native = tokenizers_of("whitespace-split")
    again = pickle.loads(pickle.dumps(native))
    assert again.vocab.pipeline == native.vocab.pipeline
    assert again.encode("Hello  world ÿ") == native.encode("Hello  world ÿ")


def test_a_variant_file_differs_only_where_its_layout_does():
    """The variants are the file with one stage changed (a check that each edit took)."""
    made = copy.deepcopy(nllb())
    for name in VARIANTS:
        changed = json.loads(variant_text(name))
        differing = {key for key in made if made[key] != changed[key]}
        assert differing <= {"pre_tokenizer", "model", "added_tokens"} and (differing or name == "as-made"), name
