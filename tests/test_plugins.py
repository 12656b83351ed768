"""Plug-ins written outside the package (tests/plugins/), through the public registries, on both
backends, against an independent reference (tiktoken with the same pattern and ranks).

The package ``wordsplit_test_plugins`` registers a spanner, an encoder, a normalizer, a loader
and two named vocabularies; the wheel built from ``tests/plugins/entry_point_plugin`` is really
installed (``pip install --target``) and found through its ``wordsplit.plugins`` entry point.
"""

from __future__ import annotations

import gzip
import importlib
import os
import pickle
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import wordsplit
from conftest import BACKENDS, DATA, TESTS
from wordsplit import TokenizerOptions, Vocab, list_vocabs, load_vocab
from wordsplit.errors import ComponentError, DuplicateNameError, UnknownComponentError, UnknownVocabError
from wordsplit.encoders import ENCODERS
from wordsplit.formats import LOADERS
from wordsplit.normalizers import NORMALIZERS
from wordsplit.spanners import SPANNERS
from wordsplit.spec import PluginNormalizer
from wordsplit.vocabs import VOCABS, forget_loaded

PLUGINS = TESTS / "plugins"
REGISTRIES = {"spanner": SPANNERS, "encoder": ENCODERS, "normalizer": NORMALIZERS, "loader": LOADERS,
              "vocab": VOCABS}
TEXTS = [
    "hello world", "Hello, World! It's 2024.", "  leading and trailing  ", "tabs\tand\nnewlines\r\n",
    "ÀÉÎ Straße ΣΊΣΥΦΟΣ İstanbul", "数字 123 and 四五六", "emoji 🫠🏳️‍🌈 done", "\u00a0nbsp\u2003em\u3000ideo",
    "a\x1cb\x1fc", "<|endoftext|> is plain text here", "",
]


@pytest.fixture(scope="module")
def plugins():
    """Import the plug-in package (it registers itself), and remove what it registered after."""
    sys.path.insert(0, str(PLUGINS))
    module = importlib.import_module("wordsplit_test_plugins")
    yield module
    for registry, name in module.REGISTERED:
        REGISTRIES[registry].remove(name)
    forget_loaded()
    sys.modules.pop("wordsplit_test_plugins", None)
    sys.path.remove(str(PLUGINS))


@pytest.fixture(scope="module")
def texts():
    """The texts above plus 2 KB slices of every test corpus (prose, code, multilingual, adversarial)."""
    slices = []
    for path in sorted((DATA / "corpus").glob("*.txt.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        slices += [text[i:i + 2000] for i in range(0, min(len(text), 8000), 2000)]
    return TEXTS + slices


def reference(tiktoken_oracle, pattern: str, base: str = "cl100k_base"):
    """tiktoken with ``base``'s ranks and another split pattern: an independent implementation."""
    import tiktoken

    enc = tiktoken_oracle(base)
    return tiktoken.Encoding(f"{base}-{len(pattern)}", pat_str=pattern, mergeable_ranks=enc._mergeable_ranks,
                             special_tokens={})


@pytest.mark.parametrize("backend", BACKENDS)
def test_plugin_spanner_is_picked_by_auto_for_its_pattern(plugins, backend, texts, tiktoken_oracle):
    tok = TokenizerOptions(backend=backend).build(load_vocab("cl100k-words"))
    assert tok.spanner_name == "ws-words" and not tok.native
    oracle = reference(tiktoken_oracle, plugins.WORDS_PATTERN)
    for text in texts:
        assert tok.encode_ordinary(text) == oracle.encode_ordinary(text), text
    assert tok.encode_batch(texts, disallowed_special=()) == [oracle.encode_ordinary(t) for t in texts]


@pytest.mark.parametrize("backend", BACKENDS)
def test_plugin_encoder_under_default_spanner(plugins, backend, texts, tiktoken_oracle):
    tok = TokenizerOptions(encoder="naive-bpe", backend=backend).build(load_vocab("cl100k_base"))
    assert tok.encoder_name == "naive-bpe" and tok.spanner_name == "cl100k-scanner"
    oracle = tiktoken_oracle("cl100k_base")
    for text in texts:
        assert tok.encode_ordinary(text) == oracle.encode_ordinary(text), text
    ids, offsets = tok.encode_batch_flat(texts, disallowed_special=())
    assert ids.tolist() == [i for t in texts for i in oracle.encode_ordinary(t)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_plugin_normalizer_runs_before_native_spanning(plugins, backend, texts, tiktoken_oracle):
    vocab = load_vocab("cl100k-lower")
    assert vocab.normalizer == PluginNormalizer("lowercase")
    tok = TokenizerOptions(backend=backend).build(vocab)
    oracle = tiktoken_oracle("cl100k_base")
    for text in texts:
        # Special tokens are split out before normalizing, as the built-in normalizers are.
        assert tok.encode(text, allowed_special="all") == oracle.encode(text.lower(), allowed_special="all"), text
    assert tok.encode("X<|endoftext|>Y", allowed_special="all") == oracle.encode("x<|endoftext|>y",
                                                                                 allowed_special="all")


@pytest.mark.parametrize("backend", BACKENDS)
def test_plugin_loader_and_every_plugin_together(plugins, backend, tmp_path, texts, tiktoken_oracle):
    path = tmp_path / "words.ranks.txt"
    plugins.write_ranks_txt(path, load_vocab("r50k_base").ranks, plugins.WORDS_PATTERN)
    vocab = load_vocab(path)
    assert vocab.name == "words" and vocab.pattern == plugins.WORDS_PATTERN
    tok = TokenizerOptions(encoder="naive-bpe", backend=backend).build(vocab)
    assert (tok.spanner_name, tok.encoder_name) == ("ws-words", "naive-bpe")
    oracle = reference(tiktoken_oracle, plugins.WORDS_PATTERN, base="r50k_base")
    for text in texts:
        assert tok.encode(text) == oracle.encode_ordinary(text), text
        assert tok.decode(tok.encode(text)) == text


def test_named_plugins_are_listed_and_known_to_the_cli(plugins, cli):
    assert {"cl100k-words", "cl100k-lower"} <= set(list_vocabs())
    assert cli("encode", "--vocab", "cl100k-words", "hello  world") == (0, "15339 256 14957\n", "")
    base = cli("encode", "--vocab", "cl100k_base", "Hello world")
    assert cli("encode", "--vocab", "cl100k_base", "--encoder", "naive-bpe", "--spanner", "regex",
               "Hello world") == base
    lower = cli("encode", "--vocab", "cl100k_base", "hello world")
    assert cli("encode", "--vocab", "cl100k-lower", "HELLO World") == lower


@pytest.mark.parametrize("backend", BACKENDS)
def test_tokenizers_with_plugins_pickle_into_a_fresh_process(plugins, backend):
    tok = TokenizerOptions(encoder="naive-bpe", backend=backend).build(load_vocab("cl100k-lower"))
    assert repr(tok) == f"Tokenizer('cl100k-lower', spanner='cl100k-scanner', encoder='naive-bpe', backend={backend!r})"
    data = pickle.dumps(tok)
    # The fresh process has never imported the plug-in package: unpickling imports it.
    code = ("import pickle, sys; tok = pickle.loads(sys.stdin.buffer.read()); "
            "print(tok.encode('HELLO World'), repr(tok))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, env=env, check=True).stdout
    assert out.decode().strip() == f"{tok.encode('HELLO World')} {tok!r}"


def test_duplicate_and_unknown_names(plugins):
    with pytest.raises(DuplicateNameError, match="encoder 'naive-bpe' is registered twice"):
        wordsplit.register_encoder("naive-bpe")(type("Again", (), {}))
    with pytest.raises(DuplicateNameError, match="already implemented by 'ws-words'"):
        wordsplit.register_spanner("other-words", patterns=(plugins.WORDS_PATTERN,))(type("Again", (), {}))
    assert "other-words" not in SPANNERS
    with pytest.raises(DuplicateNameError, match="vocabulary 'qwen3' is registered twice"):
        wordsplit.register_vocab("qwen3", lambda: None)
    unknown = r"unknown encoder 'naive-bp'; known: .*naive-bpe.*Did you mean 'naive-bpe'"
    with pytest.raises(UnknownComponentError, match=unknown):
        TokenizerOptions(encoder="naive-bp")
    with pytest.raises(UnknownVocabError, match="cl100k-words"):
        load_vocab("cl100k-wordz")


class _Broken:
    """A component whose results break the contract in the way ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, _arg):
        return self

    def split(self, text):
        return {"drop": [text[1:]], "bytes": [text.encode()]}.get(self.mode, [text])

    def encode_piece(self, piece):
        return {"big": [10**6], "str": ["1"], "tuple": (1,)}.get(self.mode, [0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind, mode, message", [
    ("spanner", "drop", "spanner 'broken': split() must return a list of str that concatenate to its input"),
    ("spanner", "bytes", "spanner 'broken': split() must return a list of str that concatenate to its input"),
    ("encoder", "big", "encoder 'broken': encode_piece(b'hi') must return a list of token ids below 100277"),
    ("encoder", "str", "encoder 'broken': encode_piece(b'hi') must return a list of token ids below 100277"),
    ("encoder", "tuple", "encoder 'broken': encode_piece(b'hi') must return a list of token ids below 100277"),
])
def test_a_component_that_breaks_its_contract_raises_the_same_error_on_both_backends(kind, mode, message, backend):
    registry = SPANNERS if kind == "spanner" else ENCODERS
    registry.add("broken", _Broken(mode))
    try:
        tok = TokenizerOptions(**{kind: "broken"}, backend=backend).build(load_vocab("cl100k_base"))
        with pytest.raises(ComponentError, match=f"^{re.escape(message)}$"):
            tok.encode("hi")
    finally:
        registry.remove("broken")


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_inside_components_propagate_unchanged(backend):
    class Failing(Exception):
        pass

    def normalizer(text):
        raise Failing(text)

    NORMALIZERS.add("failing", normalizer)
    NORMALIZERS.add("not-a-str", lambda text: 42)
    NORMALIZERS.add("surrogates", lambda text: text + "\ud800")
    try:
        base = load_vocab("gpt2")
        for name, error, message in [
            ("failing", Failing, "^hi$"),
            ("not-a-str", ComponentError, "^normalizer 'not-a-str' must return a str, not int$"),
        ]:
            vocab = Vocab(name="x", ranks=base.ranks, pattern=base.pattern, normalizer=name)
            with pytest.raises(error, match=message):
                TokenizerOptions(backend=backend).build(vocab).encode("hi")
        # A lone surrogate from a normalizer is fixed as one in the input is (U+FFFD).
        vocab = Vocab(name="x", ranks=base.ranks, pattern=base.pattern, normalizer="surrogates")
        assert TokenizerOptions(backend=backend).build(vocab).encode("hi") == base_tokenizer(backend).encode("hi\ufffd")
    finally:
        NORMALIZERS.remove("failing")
        NORMALIZERS.remove("not-a-str")
        NORMALIZERS.remove("surrogates")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_encoder_that_encodes_with_a_tokenizer_itself_works(backend):
    """A Python encoder may call a tokenizer from inside ``encode_piece`` (here: for each
    piece that is not one token, another tokenizer's encode), on the thread that is encoding;
    the result is that tokenizer's, and both keep working afterwards."""
    inner = TokenizerOptions(backend=backend).build(load_vocab("cl100k_base"))

    class Delegating:
        def __init__(self, tables):
            self.ranks = tables.ranks

        def encode_piece(self, piece):
            if piece in self.ranks:
                return [self.ranks[piece]]
            return inner.encode_ordinary(piece.decode("utf-8"))

    ENCODERS.add("delegating", Delegating)
    try:
        tok = TokenizerOptions(encoder="delegating", backend=backend).build(load_vocab("cl100k_base"))
        text = "hello wörldzz, naïve cafés " * 3
        assert tok.encode(text) == inner.encode(text)
        assert tok.encode(text + "again") == inner.encode(text + "again")
        assert inner.encode("hello world") == [15339, 1917]
    finally:
        ENCODERS.remove("delegating")


def base_tokenizer(backend):
    return TokenizerOptions(backend=backend).build(load_vocab("gpt2"))


def test_a_vocab_with_an_unknown_normalizer_is_refused():
    base = load_vocab("gpt2")
    with pytest.raises(wordsplit.errors.VocabFormatError, match="unknown normalizer 'nope'.*register_normalizer"):
        Vocab(name="x", ranks=base.ranks, pattern=base.pattern, normalizer="nope")


def _wheel(tmp_path: Path) -> Path:
    """A wheel of the test distribution ``wordsplit-ep-plugin``, which declares its module as an
    entry point of the group ``wordsplit.plugins`` (a wheel is a zip with a .dist-info)."""
    dist_info = "wordsplit_ep_plugin-1.0.dist-info"
    files = {
        "wordsplit_ep_plugin.py": (PLUGINS / "entry_point_plugin" / "wordsplit_ep_plugin.py").read_text(),
        f"{dist_info}/METADATA": "Metadata-Version: 2.1\nName: wordsplit-ep-plugin\nVersion: 1.0\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/entry_points.txt": "[wordsplit.plugins]\nep = wordsplit_ep_plugin\n",
    }
    files[f"{dist_info}/RECORD"] = "".join(f"{name},,\n" for name in files) + f"{dist_info}/RECORD,,\n"
    wheel = tmp_path / "wordsplit_ep_plugin-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def test_a_plugin_installed_with_pip_is_found_through_its_entry_point(tmp_path, tiktoken_oracle):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(_wheel(tmp_path))], check=True)
    code = ("import sys, json; from wordsplit import TokenizerOptions, load_vocab, list_vocabs; "
            "tok = TokenizerOptions().build(load_vocab('ep-gpt2-chars')); "
            "print(json.dumps(['ep-gpt2-chars' in list_vocabs(), tok.spanner_name, tok.encode(sys.argv[1])]))")
    text = "hello wörld 🫠"
    oracle = reference(tiktoken_oracle, r"(?s:.)", base="r50k_base")
    for backend in ("native", "python"):
        env = {**os.environ, "PYTHONPATH": str(target), "WORDSPLIT_BACKEND": backend}
        out = subprocess.run([sys.executable, "-c", code, text], capture_output=True, env=env, check=True).stdout
        assert out.decode().strip() == f'[true, "ep-chars", {oracle.encode_ordinary(text)}]'.replace("'", '"')


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reference_cycle_through_a_python_component_is_collected(backend):
    """A component that refers back to its tokenizer (a cache, a parent pointer) makes a cycle
    through the engine; the garbage collector must see into the native engine to free it."""
    import gc
    import weakref

    name = "test-cycle-lower"

    def lower(text: str) -> str:
        return text.lower()

    wordsplit.register_normalizer(name)(lower)
    try:
        base = load_vocab("gpt2")
        vocab = Vocab(name="gpt2-cycle", ranks=base.ranks, pattern=base.pattern, normalizer=name)
        tok = TokenizerOptions(backend=backend).build(vocab)
        assert tok.encode("HELLO") == base_tokenizer(backend).encode("hello")
    finally:
        NORMALIZERS.remove(name)  # the registry would keep the function, and so the cycle, alive
    lower.owner = tok  # the cycle: tok -> engine -> normalizer -> its __dict__ -> tok
    alive = weakref.ref(tok)
    del tok, lower
    gc.collect()
    assert alive() is None


def _site(root: Path, layout: dict[str, str]) -> Path:
    """A directory of installed distributions: ``layout`` maps a file's path in it to its text;
    each metadata directory also gets the name file importlib.metadata needs."""
    for name, text in layout.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        if "/" in name:
            for metadata in ("METADATA", "PKG-INFO"):
                (root / name).with_name(metadata).write_text(f"Name: {name.split('-')[0]}\n")
    return root


ENTRY_POINT = "[wordsplit.plugins]\nep = wordsplit_ep_plugin\n"
OTHER_GROUP = "[console_scripts]\ntool = tool:main\n"


@pytest.mark.parametrize("layout, declares", [
    ({"a-1.0.dist-info/entry_points.txt": OTHER_GROUP, "b-1.0.dist-info/METADATA": "Name: b\n"}, False),
    ({"a-1.0.dist-info/entry_points.txt": OTHER_GROUP, "ep-1.0.dist-info/entry_points.txt": ENTRY_POINT}, True),
    ({"EP-1.0.DIST-INFO/entry_points.txt": ENTRY_POINT}, True),
    ({"ep.egg-info/entry_points.txt": ENTRY_POINT}, True),
    ({"ep-1.0-py3.11.egg/EGG-INFO/entry_points.txt": ENTRY_POINT}, True),
    ({"ep-1.0.dist-info/ENTRY_POINTS.TXT": ENTRY_POINT, "x.egg-info": "a file, not a directory"}, False),
])
def test_the_plugin_precheck_never_misses_what_importlib_metadata_finds(tmp_path, monkeypatch, layout, declares):
    """``load_plugins`` imports ``importlib.metadata`` only when the direct look at the
    ``entry_points.txt`` files says a distribution may declare the group; the look must say so
    whenever ``importlib.metadata`` finds one (and, on plain directories, only then)."""
    from importlib.metadata import entry_points

    from wordsplit.registry import ENTRY_POINT_GROUP, _may_declare_plugins

    site = _site(tmp_path / "site", layout)
    egg = next((str(site / name.split("/")[0]) for name in layout if ".egg/" in name), None)
    monkeypatch.setattr(sys, "path", [str(site)] + ([egg] if egg else []))
    assert _may_declare_plugins() is declares
    assert bool(entry_points(group=ENTRY_POINT_GROUP)) is declares


def test_the_plugin_precheck_leaves_a_zip_and_other_finders_to_importlib_metadata(tmp_path, monkeypatch):
    from wordsplit.registry import _may_declare_plugins

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert _may_declare_plugins() is False
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(_wheel(tmp_path))])
    assert _may_declare_plugins() is True

    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setattr(sys, "meta_path", [Finder, *sys.meta_path])
    assert _may_declare_plugins() is True
