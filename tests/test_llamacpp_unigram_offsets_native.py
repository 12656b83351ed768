"""The core's offsets of a GGUF Unigram model (llama.cpp's ``t5`` tokenizer, its UGM): the
``unigram`` encoder's token lengths placed through the alignment of llama.cpp's normalizer
(``crates/wordsplit/src/normalizers/llamacpp_alignment.rs``, the twin of
:meth:`LlamaCppUnigramNormalizer.alignment <wordsplit.normalizers.llamacpp.LlamaCppUnigramNormalizer.alignment>`).

``backend="native"`` gives the Python engine's ``encode_with_offsets`` (ids, byte and char
offsets, word ids), with the Python engine kept out of the native call, on nomic-bert-moe's
file (tests/data/gguf) with each of its four space layouts (``add_space_prefix`` ×
``remove_extra_whitespaces``, the file's metadata changed): on texts of spaces and runs of
them, characters its character map changes (every key of the map, in turn), unknown
characters, special-token text, and hypothesis text of those.
"""

from __future__ import annotations

import base64
import functools
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llamacpp_cases import tokenizer_only_gguf, unpacked
from test_llamacpp_word_models import ALPHABET, NOMIC
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.core import extension
from wordsplit.engines.python import PythonEngine
from wordsplit.formats.charsmap import read_charsmap
from wordsplit.formats.gguf import read_gguf_metadata

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")

LAYOUTS = [(prefix, merge) for prefix in (True, False) for merge in (True, False)]
# Spaces and runs of them (leading, trailing, inside), typed ▁, characters the map changes
# (full-width forms, a circled digit, a ligature, U+3000 and U+00A0, which it makes spaces,
# halfwidth kana with their combining marks), unknown characters (nomic-bert-moe has no piece
# for these Cyrillic Extended-D and Mende Kikakui ones: one <unk> per run), special-token text.
TEXTS = ["", " ", "   ", "a", " a", "a ", "  Hello   world  ", "Hello world", "\u2581x \u2581", "x\u2581",
         "Ｈｅｌｌｏ\u3000ｗｏｒｌｄ", "①ﬁ ㍻ ｶﾞｷﾞ", "a\u00a0\u00a0b", "\u3000\u3000a", "\tx\ny\r\n",
         "\U0001e030\U0001e031 x \U0001e800", "a\U0001e030b", "é\u0301 ç", "日本語のテキスト",
         "<s>Hello</s> <unk> <pad>", "a <mask>", "  <mask> b", "<s> </s>", "\x00\x01a\x7f"]
UNKNOWN = list("\U0001e030\U0001e031\U0001e800\U0001e801")
SPACES = list(" \u3000\u00a0\u2581\t\n")


@pytest.fixture(scope="module")
def unpack_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("llamacpp-unigram-offsets")


@pytest.fixture(scope="module")
def layouts(unpack_dir):
    """``layouts(prefix, merge)``: the Python and native tokenizers of nomic-bert-moe's file
    with that ``add_space_prefix`` and ``remove_extra_whitespaces``."""
    source = unpacked(NOMIC, unpack_dir)
    metadata = read_gguf_metadata(source.read_bytes())

    @functools.lru_cache(maxsize=None)
    def load(prefix: bool, merge: bool):
        changed = {**metadata, "tokenizer.ggml.add_space_prefix": prefix,
                   "tokenizer.ggml.remove_extra_whitespaces": merge}
        path = unpack_dir / f"nomic-prefix{int(prefix)}-merge{int(merge)}.gguf"
        path.write_bytes(tokenizer_only_gguf(changed))
        vocab = load_vocab(path)
        stage = vocab.pipeline.normalizer
        assert (stage.add_space_prefix, stage.remove_extra_whitespaces) == (prefix, merge)
        return tuple(TokenizerOptions(backend=backend).build(vocab) for backend in ("python", "native"))

    return load


@pytest.fixture(scope="module")
def map_keys(layouts) -> list[str]:
    """Every key of nomic-bert-moe's character map."""
    stage = layouts(True, True)[0].vocab.pipeline.normalizer
    return sorted(read_charsmap(base64.b64decode(stage.charsmap)).rules)


def assert_native_is_python(tokenizers, text: str, calls=({"allowed_special": "all"}, {"disallowed_special": ()})) \
        -> None:
    python, native = tokenizers
    for kwargs in calls:
        with mock.patch.object(PythonEngine, "encode_with_offsets", side_effect=AssertionError("Python ran")):
            got = native.encode_with_offsets(text, **kwargs)
        expected = python.encode_with_offsets(text, **kwargs)
        assert (got.ids, got.byte_offsets, got.char_offsets, got.word_ids) == \
            (expected.ids, expected.byte_offsets, expected.char_offsets, expected.word_ids), (text, kwargs)


@pytest.mark.parametrize("prefix, merge", LAYOUTS, ids=[f"prefix{int(p)}-merge{int(m)}" for p, m in LAYOUTS])
def test_native_offsets_are_the_python_engines(prefix, merge, layouts):
    tokenizers = layouts(prefix, merge)
    assert tokenizers[1]._engine._native_offsets
    for text in TEXTS:
        assert_native_is_python(tokenizers, text)
    # the unknown characters are unknown to the model: one <unk> per run
    unk = tokenizers[0].vocab.unk_token_id
    assert tokenizers[0].encode_ordinary("\U0001e030\U0001e800 x").count(unk) == 1


@pytest.mark.parametrize("prefix, merge", LAYOUTS, ids=[f"prefix{int(p)}-merge{int(m)}" for p, m in LAYOUTS])
def test_native_offsets_on_every_key_of_the_map(prefix, merge, layouts, map_keys):
    """Each of the map's 224,711 keys next to others and inside a word between spaces, in
    texts of 4,096 keys, with the file's own layout of spaces; with each other layout (which
    changes what is done with spaces, not how a key is read) every eighth key, a different
    eighth each."""
    tokenizers = layouts(prefix, merge)
    assert len(map_keys) > 200_000
    own_layout = (prefix, merge) == (True, True)  # nomic-bert-moe's metadata: both flags set
    keys_tested = map_keys if own_layout else map_keys[LAYOUTS.index((prefix, merge))::8]
    for i in range(0, len(keys_tested), 4096):
        keys = keys_tested[i:i + 4096]
        assert_native_is_python(tokenizers, "".join(keys), calls=({"allowed_special": "all"},))
        assert_native_is_python(tokenizers, "  ".join(f"a{key}b" for key in keys) + " ",
                                calls=({"allowed_special": "all"},))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), layout=st.sampled_from(LAYOUTS))
def test_native_offsets_on_hypothesis_text(data, layout, layouts, map_keys):
    chars = st.sampled_from(SPACES) | st.sampled_from(map_keys) | st.sampled_from(UNKNOWN) | ALPHABET \
        | st.sampled_from(["<s>", "</s>", "<mask>", " <mask>", "<unk>"])
    text = data.draw(st.lists(chars, max_size=30).map("".join), label="text")
    assert_native_is_python(layouts(*layout), text)
