"""wordsplit.apps.views and the explain/show/compare subcommands: output, colour, HTML, errors."""

from __future__ import annotations

import io
import json
import sys
from html.parser import HTMLParser

import pytest

import wordsplit.cli
from wordsplit.cli import views as cli_views
from wordsplit.apps.views import compare, render_compare, render_html, render_show, token_views, use_color

from conftest import tokenizer_for


@pytest.fixture
def run(capsys, monkeypatch):
    """``wordsplit ARGV`` with the view commands registered; returns (status, stdout, stderr)."""
    if cli_views not in wordsplit.cli.COMMAND_MODULES:
        monkeypatch.setattr(wordsplit.cli, "COMMAND_MODULES", [*wordsplit.cli.COMMAND_MODULES, cli_views])

    def run(*argv, stdin=None):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = wordsplit.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# -- show -----------------------------------------------------------------------------------

def test_show_plain_when_not_a_terminal(run):
    code, out, err = run("show", "hello world, ok")
    assert (code, err) == (0, "")
    assert out == "hello| world|,| ok\n4 tokens, 15 characters, 15 bytes, 3.75 bytes/token\n"
    assert run("show", "--ids", "hello world")[1].splitlines()[0] == "hello[14990] world[1879]"


def test_show_colour_forced_and_no_color(run, monkeypatch):
    tok = tokenizer_for("qwen3")
    coloured = render_show(tok, "hello world", color=True)
    assert "\x1b[" in coloured and "|" not in coloured.splitlines()[0]
    assert "\x1b[" in run("show", "--color", "always", "hello")[1]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(None, Terminal()) and not use_color(None, io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(None, Terminal())


def test_show_split_characters_and_specials(run):
    # Qwen3 has no token for U+1FAE0: its 4 bytes are 3 tokens, the character shown with the first.
    views = token_views(tokenizer_for("qwen3"), "a\U0001fae0<|im_end|>", allowed_special="all")
    assert [(v.text, v.kind, v.partial) for v in views] == [
        ("a", "bpe", False), ("\U0001fae0", "bpe", True), ("", "bpe", True), ("", "bpe", True),
        ("<|im_end|>", "special", False)]
    assert b"".join(v.bytes for v in views) == "a\U0001fae0<|im_end|>".encode()
    assert run("show", "--special", "allow", "a\U0001fae0<|im_end|>")[1].startswith("a|\U0001fae0|||<|im_end|>\n")


def test_show_json_reads_stdin(run):
    code, out, _ = run("show", "--json", "--vocab", "cl100k_base", stdin="hé\n")
    data = json.loads(out)
    assert code == 0 and data["vocab"] == "cl100k_base"
    assert [t["id"] for t in data["tokens"]] == tokenizer_for("cl100k_base").encode("hé\n")
    assert [(t["text"], t["bytes"]) for t in data["tokens"]] == [("h", "68"), ("é", "c3a9"), ("\n", "0a")]
    assert data["summary"] == {"tokens": 3, "characters": 3, "bytes": 4, "bytes_per_token": 4 / 3}


def test_file_is_read_exactly(run, tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"a\r\nb")
    # "\r\n" is one token, shown with \r as its control picture.
    assert run("show", "--ids", "--file", str(path))[1].startswith("a[64]\u240d[319]\nb[65]\n")
    ids = [t["id"] for t in json.loads(run("show", "--json", "--file", str(path))[1])["tokens"]]
    assert ids == tokenizer_for("qwen3").encode("a\r\nb")


class TokenSpans(HTMLParser):
    """Collects the token spans of a page: their attributes and text (markers add no text)."""

    def __init__(self):
        super().__init__()
        self.tokens, self.depth, self.tags = [], 0, []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "span" and "tok" in attrs.get("class", "").split():
            self.tokens.append({**attrs, "text": ""})
            self.depth = 1
        elif tag == "span" and self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag == "span" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.tokens[-1]["text"] += data


HTML_TEXT = 'if a < b && c > "d":\r\n\treturn \'x\'  # <script>alert(1)</script>\n\n你好 \U0001fae0 <|im_end|>'


def test_html_page_contains_every_token(run, tmp_path):
    tok = tokenizer_for("qwen3")
    out = tmp_path / "page.html"
    code, stdout, _ = run("show", "--special", "allow", "--html", str(out), HTML_TEXT)
    ids = tok.encode(HTML_TEXT, allowed_special="all")
    size = len(HTML_TEXT.encode())
    assert code == 0 and stdout == (
        f"wrote {out}: {len(ids)} tokens, {len(HTML_TEXT)} characters, {size} bytes, "
        f"{size / len(ids):.2f} bytes/token\n")
    page = out.read_text(encoding="utf-8")
    parser = TokenSpans()
    parser.feed(page)
    parser.close()
    spans = parser.tokens
    assert [int(s["data-id"]) for s in spans] == ids
    assert b"".join(bytes.fromhex(s["data-bytes"]) for s in spans) == HTML_TEXT.encode()
    # Whitespace kept, markup escaped, \r shown as its control picture.
    assert "".join(s["text"] for s in spans) == HTML_TEXT.replace("\r", "\u240d")
    assert [s["data-kind"] for s in spans].count("special") == 1
    assert all(s["title"].startswith(f"id {s['data-id']} · ") for s in spans)
    assert "script" in parser.tags and page.count("<script>") == 1  # only the page's own script
    # Standalone: nothing is fetched when the page is opened from disk.
    for external in ("src=", "href=", "@import", "url(", "http"):
        assert external not in page


def test_html_to_stdout(run):
    page = run("show", "--html", "-", "hello world")[1]
    assert page.startswith("<!DOCTYPE html>") and page == render_html(tokenizer_for("qwen3"), "hello world")


# -- compare --------------------------------------------------------------------------------

def test_compare_table_and_json(run):
    text = "Tokenizers compare differently: 你好世界"
    code, out, err = run("compare", text)
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[0].split() == ["vocab", "n_vocab", "tokens", "bytes/token", "vs", "qwen3"]
    assert [line.split()[0] for line in lines[1:4]] == ["qwen3", "cl100k_base", "o200k_base"]
    counts = {name: tokenizer_for(name).count(text) for name in ("qwen3", "cl100k_base", "o200k_base")}
    assert {line.split()[0]: int(line.split()[2]) for line in lines[1:4]} == counts
    assert lines[4] == f"text: {len(text)} characters, {len(text.encode())} bytes"

    rows = json.loads(run("compare", "--json", "--vocab", "gpt2,cl100k_base", stdin=text)[1])
    assert [(r["vocab"], r["tokens"]) for r in rows] == [
        ("gpt2", tokenizer_for("gpt2").count(text)), ("cl100k_base", counts["cl100k_base"])]
    assert rows[0]["bytes_per_token"] == pytest.approx(len(text.encode()) / rows[0]["tokens"])


def test_compare_empty_text():
    rows = compare([""], ["qwen3"])
    assert rows[0].tokens == 0 and rows[0].bytes_per_token is None
    assert render_compare(rows, color=False).splitlines()[1].split() == ["qwen3", "151,669", "0", "-", "-"]


def test_compare_refuses_a_string_where_a_list_is_expected():
    """A str is not a list of texts (each character counted as one text) nor of vocab names."""
    from wordsplit.errors import OptionTypeError

    with pytest.raises(OptionTypeError, match="compare takes a list of texts, not a single str") as info:
        compare("some text", ["qwen3"])
    assert isinstance(info.value, TypeError)
    with pytest.raises(OptionTypeError, match="list of vocabs, not a single str"):
        compare(["some text"], "qwen3")
    with pytest.raises(OptionTypeError, match="text 1 given to compare is a bytes"):
        compare(["a", b"b"], ["qwen3"])
    assert compare(("some", " text"), ["qwen3"])[0].tokens == tokenizer_for("qwen3").count("some text")



# -- explain ---------------------------------------------------------------------------------

def test_explain_command(run):
    code, out, _ = run("explain", "hello")
    assert code == 0 and "(h,e)=127 (e,l)=45 (l,l)=398 (l,o)=129 -> (e,l) wins, makes 301" in out
    assert out.endswith("ids: [14990]\n")
    data = json.loads(run("explain", "--json", "--special", "allow", stdin="hi<|im_end|>")[1])
    assert data["ids"] == [6023, 151645] and data["segments"][1]["pieces"][0]["kind"] == "special"


# -- every subcommand ------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["explain", "show", "compare"])
def test_help_has_an_example(run, capsys, command):
    with pytest.raises(SystemExit) as exit_:
        run(command, "--help")
    assert exit_.value.code == 0 and f"examples:\n  wordsplit {command} " in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "x", "--file", "f.txt"], "not both"),
        (["show", "--file", "/no/such/file.txt"], "cannot read /no/such/file.txt"),
        (["explain", "--vocab", "cl100k", "x"], "Did you mean 'cl100k_base'"),
        (["compare", "--vocab", "qwen3,nope", "x"], "unknown vocabulary 'nope'"),
        (["compare", "--vocab", ",", "x"], "at least one vocabulary"),
        (["show", "<|im_end|>"], "--special allow"),
        (["show", "--html", "/no/such/dir/out.html", "x"], "cannot write /no/such/dir/out.html"),
    ],
)
def test_user_errors_are_one_line(run, argv, message):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.startswith("wordsplit: error: ") and message in err and err.count("\n") == 1


def test_binary_file_is_a_user_error(run, tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"ok\xff\xfe")
    code, _, err = run("compare", "--file", str(path))
    assert code == 2 and err == f"wordsplit: error: {path} is not UTF-8 text (byte 2: invalid start byte)\n"
