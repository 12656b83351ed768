"""The playground page (wasm/playground/, served by ``wordsplit playground``) in headless
Chromium: the ids and counts it shows for several texts and vocabularies, a shared link, the
hover trace, a file dropped in by its bytes (a rank file, BERT's all-MiniLM-L6-v2
tokenizer.json: its ids, decoded text and token places, a SentencePiece Unigram model: its ids
and decoded text, and T5's tokenizer.json: HF's ids), and a 1 MB paste that finishes without
blocking the page. ``WORDSPLIT_UPDATE_SCREENSHOT=1`` saves the page to docs/playground.png."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import threading
import urllib.parse
from pathlib import Path

import pytest

from browser import Browser
from wordsplit import TokenizerOptions, get_tokenizer, load_vocab
from wordsplit.cli import playground

ROOT = Path(__file__).resolve().parent.parent
MINILM = ROOT / "tests" / "data" / "wordpiece" / "all-MiniLM-L6-v2" / "tokenizer.json.gz"
SPIECE = ROOT / "tests" / "data" / "unigram" / "spiece.model.gz"  # ALBERT's
T5 = ROOT / "tests" / "data" / "unigram" / "t5-small" / "tokenizer.json.gz"

# The page's state, read from the DOM: each column's vocabulary, counts and shown ids.
COLUMNS = """JSON.stringify([...document.querySelectorAll('.column')].map(c => ({
  vocab: c.dataset.vocab,
  tokens: c.dataset.tokens,
  counts: Object.fromEntries([...c.querySelectorAll('[data-count]')].map(b => [b.dataset.count, b.textContent])),
  ids: c.querySelector('.ids').textContent,
  error: c.querySelector('.error')?.textContent ?? null,
  chips: c.querySelectorAll('.chip').length,
  split: c.querySelectorAll('.chip.split').length,
  special: c.querySelectorAll('.chip.special').length,
})))"""
DONE = "document.body.dataset.state === 'done'"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The playground served on 127.0.0.1 (a free port), with the module built; it serves
    all-MiniLM-L6-v2's and T5's tokenizer.json and ALBERT's spiece.model too, for a test to
    drop in."""
    subprocess.run(["bash", str(ROOT / "wasm" / "build.sh")], check=True, cwd=ROOT)
    fixtures = tmp_path_factory.mktemp("fixtures")
    files = dict(playground.checked_site())
    for source, name in [(MINILM, "all-MiniLM-L6-v2.tokenizer.json"), (SPIECE, "spiece.model"),
                         (T5, "t5-small.tokenizer.json")]:
        (fixtures / name).write_bytes(gzip.decompress(source.read_bytes()))
        files[f"fixtures/{name}"] = fixtures / name
    ready = threading.Event()
    url = {}

    def on_ready(u):
        url["base"] = u
        ready.set()

    threading.Thread(target=playground.serve, args=(0, files, on_ready), daemon=True).start()
    assert ready.wait(30)
    return url["base"]


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def open_page(browser, site, text, vocabs):
    query = urllib.parse.urlencode({"text": text, "vocab": ",".join(vocabs)})
    browser.goto(f"{site}?{query}")
    browser.wait_for(f"document.readyState === 'complete' && {DONE}", timeout=120)
    return json.loads(browser.evaluate(COLUMNS))


def expected(vocab, text):
    ids = get_tokenizer(vocab).encode(text, allowed_special="all")
    return ids, {"tokens": str(len(ids)), "characters": str(len(text)), "bytes": str(len(text.encode()))}


TEXTS = [
    ("Hello world! Ünïcödé 中文字 🤗\n\tend<|endoftext|>", ["cl100k_base", "o200k_base", "qwen3"]),
    # (A text box turns \r\n into \n, as every browser does: the text has none.)
    ("  spaces   and\n\nnewlines\u200b\ufeffzero\x07width", ["gpt2", "p50k_base"]),
    ("def f(x):\n    return x ** 2  # 🐍", ["o200k_harmony", "r50k_base", "p50k_edit"]),
]


@pytest.mark.parametrize("text,vocabs", TEXTS)
def test_a_shared_link_shows_the_ids_and_counts_of_each_vocabulary(browser, site, text, vocabs):
    columns = open_page(browser, site, text, vocabs)
    assert sorted(c["vocab"] for c in columns) == sorted(vocabs)
    for column in columns:
        ids, counts = expected(column["vocab"], text)
        assert column["error"] is None
        assert [int(i) for i in column["ids"].split()] == ids, column["vocab"]
        for name, value in counts.items():
            assert column["counts"][name] == value, (column["vocab"], name)
        assert column["counts"]["bytesPerToken"] == f"{len(text.encode()) / len(ids):.2f}"
        # One chip per token, except tokens sharing one character's bytes, which share a chip.
        assert column["chips"] <= len(ids)
    link = browser.evaluate("location.search")
    assert urllib.parse.parse_qs(link[1:])["text"] == [text]


def test_split_characters_special_tokens_and_visible_whitespace(browser, site):
    text = "🤗 x<|endoftext|>\t"
    [column] = open_page(browser, site, text, ["cl100k_base"])
    ids, _ = expected("cl100k_base", text)
    assert [int(i) for i in column["ids"].split()] == ids
    assert column["special"] == 1
    assert column["split"] >= 1  # 🤗's four bytes are three tokens in cl100k_base: one chip
    shown = browser.evaluate("document.querySelector('.tokens').textContent")
    assert "→" in shown and "·" in shown and "🤗" in shown


def test_hover_shows_the_merge_trace(browser, site):
    open_page(browser, site, "hello", ["qwen3"])
    browser.evaluate("document.querySelector('.chip').dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))")
    browser.wait_for("document.querySelector('#tip table') !== null", timeout=30)
    tip = browser.evaluate("document.querySelector('#tip').textContent")
    assert "id 14990" in tip and "merge rank 45 → 301" in tip  # (e,l): merge 45 of Qwen3's list


def test_typing_updates_and_a_1mb_paste_finishes_without_freezing(browser, site):
    open_page(browser, site, "x", ["cl100k_base", "qwen3"])
    unit = "Hello wörld, 中文字 and 🤗 emoji.\n"
    text = unit * (1_000_000 // len(unit.encode()))
    browser.evaluate(f"""(() => {{ const box = document.getElementById('text');
        box.value = {unit!r}.repeat({len(text) // len(unit)}); document.body.dataset.state = 'typing';
        box.dispatchEvent(new Event('input')); }})()""")
    # The page answers while the worker encodes: no poll waits long on its main thread.
    slowest = browser.wait_for(DONE, timeout=120)
    assert slowest < 5, f"the page blocked for {slowest:.1f} s"
    columns = json.loads(browser.evaluate(COLUMNS))
    for column in columns:
        ids, counts = expected(column["vocab"], text)
        assert column["tokens"] == str(len(ids))
        assert column["counts"]["characters"] == counts["characters"]
        assert [int(i) for i in column["ids"].split()] == ids[:3000]
    # A megabyte does not go into the link.
    assert "text=" not in browser.evaluate("location.search")
    if os.environ.get("WORDSPLIT_UPDATE_SCREENSHOT"):
        open_page(browser, site, TEXTS[0][0], TEXTS[0][1])
        (ROOT / "docs" / "playground.png").write_bytes(browser.screenshot())


def test_a_vocabulary_file_given_by_its_bytes(browser, site):
    """What a dropped file does: its bytes become a column (by the page's drop handler)."""
    open_page(browser, site, "hello world", [])
    browser.evaluate("""(async () => {
        const bytes = new Uint8Array(await (await fetch('vocabs/r50k_base.tiktoken')).arrayBuffer());
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'r50k_base.tiktoken'));
        document.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
        document.body.dataset.state = 'typing';
    })()""")
    browser.wait_for(f"{DONE} && document.querySelectorAll('.column').length === 1", timeout=60)
    [column] = json.loads(browser.evaluate(COLUMNS))
    assert column["vocab"] == "gpt2" or column["vocab"] == "r50k_base"
    assert [int(i) for i in column["ids"].split()] == [31373, 995]


def test_a_bert_tokenizer_json_dropped_in_shows_its_ids_text_and_places(browser, site):
    """A WordPiece tokenizer.json: the ids the Python package gives (HF's), a chip per token
    with its text (## pieces), the decoded text, and the part of the text a token stands for."""
    text = "Hello, Unaffable wörld! [SEP] 中文 🦀"
    open_page(browser, site, text, [])
    browser.evaluate("""(async () => {
        const bytes = new Uint8Array(await (await fetch('fixtures/all-MiniLM-L6-v2.tokenizer.json')).arrayBuffer());
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'all-MiniLM-L6-v2.tokenizer.json'));
        document.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
        document.body.dataset.state = 'typing';
    })()""")
    browser.wait_for(f"{DONE} && document.querySelectorAll('.column').length === 1", timeout=60)
    [column] = json.loads(browser.evaluate(COLUMNS))
    tok = TokenizerOptions(backend="python").build(load_vocab(MINILM))
    ids = tok.encode(text, allowed_special="all")
    assert column["vocab"] == "all-MiniLM-L6-v2" and column["error"] is None
    assert [int(i) for i in column["ids"].split()] == ids
    assert column["counts"]["tokens"] == str(len(ids))
    assert column["chips"] == len(ids) and column["split"] == 0 and column["special"] == 2  # [SEP], [UNK]
    shown = browser.evaluate("document.querySelector('.tokens').textContent")
    assert "##ffa" in shown and "hello" in shown
    decoded = browser.evaluate("document.querySelector('.decoded').textContent")
    assert decoded == f"decoded: {tok.decode(ids)}"
    # The second chip is "," (its text is the text's): the third, "una", stands for "Una".
    browser.evaluate("document.querySelectorAll('.chip')[2]"
                     ".dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))")
    browser.wait_for("document.querySelector('#tip').textContent.includes('wordpiece')", timeout=30)
    tip = browser.evaluate("document.querySelector('#tip').textContent")
    assert f"id {ids[2]}" in tip and 'text "Una"' in tip and "14477 20961 3468" in tip


def drop_fixture(browser, name):
    """Drop the served fixture ``name`` on the page, as a file of that name."""
    browser.evaluate(f"""(async () => {{
        const bytes = new Uint8Array(await (await fetch('fixtures/{name}')).arrayBuffer());
        const data = new DataTransfer();
        data.items.add(new File([bytes], '{name}'));
        document.dispatchEvent(new DragEvent('drop', {{dataTransfer: data, bubbles: true, cancelable: true}}));
        document.body.dataset.state = 'typing';
    }})()""")
    browser.wait_for(f"{DONE} && document.querySelectorAll('.column').length === 1", timeout=60)
    [column] = json.loads(browser.evaluate(COLUMNS))
    return column


def test_a_sentencepiece_unigram_model_dropped_in_shows_sentencepieces_ids_and_text(browser, site):
    """ALBERT's spiece.model: the ids and the decoded text sentencepiece gives, a chip a token."""
    import sentencepiece

    text = "hello world! Ünïcödé 中文 🤗  end"
    open_page(browser, site, text, [])
    column = drop_fixture(browser, "spiece.model")
    oracle = sentencepiece.SentencePieceProcessor(model_proto=gzip.decompress(SPIECE.read_bytes()))
    ids = oracle.encode(text)
    assert column["vocab"] == "spiece" and column["error"] is None
    assert [int(i) for i in column["ids"].split()] == ids
    assert column["counts"]["tokens"] == str(len(ids)) and column["chips"] == len(ids)
    decoded = browser.evaluate("document.querySelector('.decoded').textContent")
    assert decoded == f"decoded: {oracle.decode(ids)}"


def test_t5s_tokenizer_json_dropped_in_shows_hfs_ids(browser, site):
    """T5's tokenizer.json (its WhitespaceSplit before Metaspace, its character map): the ids
    HF tokenizers gives."""
    from tokenizers import Tokenizer

    text = "hello world!  Ünïcödé\tend"
    open_page(browser, site, text, [])
    column = drop_fixture(browser, "t5-small.tokenizer.json")
    ids = Tokenizer.from_str(gzip.decompress(T5.read_bytes()).decode()).encode(text, add_special_tokens=False).ids
    assert column["error"] is None
    assert [int(i) for i in column["ids"].split()] == ids


def test_export_writes_a_static_site(site, tmp_path):
    from wordsplit.cli import main

    assert main(["playground", "--export", str(tmp_path / "site")]) in (0, None)
    written = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert {"index.html", "app.js", "worker.js", "style.css", "wordsplit.js", "wordsplit.wasm",
            "vocabs/cl100k_base.tiktoken", "vocabs/qwen3.tiktoken"} <= written
    served = (tmp_path / "site" / "vocabs" / "r50k_base.tiktoken").read_bytes()
    assert served.startswith(b"IQ== 0\n")  # gunzipped: byte 0x21 is rank 0


def test_without_the_built_module_the_command_says_how_to_build_it(tmp_path):
    from wordsplit.errors import BackendUnavailableError

    with pytest.raises(BackendUnavailableError, match="bash wasm/build.sh"):
        playground.checked_site(tmp_path)
