"""Views of an encode for people: tokens in colour on a terminal, an HTML page, a comparison.

* :func:`token_views` cuts the text at token boundaries (the data every view shows);
* :func:`render_show` renders it for a terminal with ``rich``: each token on an alternating
  background (or, without colour, tokens separated by ``|``), ids on request, and a summary;
* :func:`render_html` renders it as one standalone HTML page (inline CSS and JS, nothing
  fetched), where hovering a token shows its id and bytes;
* :func:`compare` counts tokens of the same texts under several vocabularies, and
  :func:`render_compare` lays the counts out side by side.

A character split across tokens (a rare CJK character or an emoji in byte-level BPE) is
shown once, with the token where its bytes start; the token that holds only its remaining
bytes shows nothing (``||`` without colour) and is marked in the HTML page. Control
characters other than newline and tab are shown as their Unicode control pictures (``␍``
for ``\r``); the ids, bytes and JSON output stay exact. Characters, bytes and bytes per
token count the input text as given (before normalization).

It does not: encode anything itself (it calls the tokenizer), explain merges (see
:mod:`wordsplit.explain`), or parse command lines (see :mod:`wordsplit.cli.views`). ``rich``
is imported only by the functions that draw with it, so importing this module is cheap.

>>> from wordsplit import get_tokenizer
>>> print(render_show(get_tokenizer("qwen3"), "hello world", color=False))
hello| world
2 tokens, 11 characters, 11 bytes, 5.50 bytes/token
"""

from __future__ import annotations

import html
import io
import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import Iterable, Literal, Optional, Sequence

from ..errors import OptionTypeError
from . import plural
from ..specials import AllowedSpecial, DisallowedSpecial

__all__ = [
    "TokenView", "Summary", "CompareRow", "token_views", "summarize", "render_show", "render_html",
    "compare", "render_compare", "use_color",
]

TokenKind = Literal["special", "added", "bpe"]

# Backgrounds cycled over the tokens, so that neighbours always differ. Pastels with black
# text where the terminal has 256 or more colours; the 16-colour palette has no pastels (rich
# maps them all to bright white), so there the bright colours stand in.
_PALETTE = ("#cfe8ff", "#ffe3b3", "#d5f5d0", "#f6d6f0")
_PALETTE_16 = ("bright_cyan", "bright_yellow", "bright_green", "bright_magenta")

# Control characters other than newline and tab as their Unicode control pictures (\r as ␍):
# a terminal would act on them (rich drops them) and HTML parsers rewrite \r.
_CONTROL_PICTURES = {c: 0x2400 + c for c in range(32) if chr(c) not in "\n\t"} | {0x7F: 0x2421}


@dataclass(frozen=True)
class TokenView:
    """One token as a view shows it.

    Attributes:
        id: the token id.
        bytes: the token's bytes (a literal's UTF-8 text for special and added tokens).
        text: the characters shown for it: those whose first byte is in this token.
        kind: ``"special"``, ``"added"`` or ``"bpe"``.
        partial: the token's bytes are not whole characters (a character is split).
    """

    id: int
    bytes: bytes
    text: str
    kind: TokenKind
    partial: bool


@dataclass(frozen=True)
class Summary:
    """Counts for a summary line; ``characters`` and ``bytes`` are the input text's."""

    tokens: int
    characters: int
    bytes: int

    @property
    def bytes_per_token(self) -> Optional[float]:
        return self.bytes / self.tokens if self.tokens else None

    def __str__(self) -> str:
        ratio = "" if self.bytes_per_token is None else f", {self.bytes_per_token:.2f} bytes/token"
        return f"{plural(self.tokens, 'token')}, {plural(self.characters, 'character')}, " \
               f"{plural(self.bytes, 'byte')}{ratio}"


def _utf8_len(text: str) -> int:
    # surrogatepass: a lone surrogate counts 3 bytes, as the U+FFFD that encode puts in its place.
    return len(text.encode("utf-8", "surrogatepass"))


def summarize(text: str, ids: Sequence[int]) -> Summary:
    """The summary of ``text`` encoded as ``ids``.

    >>> str(summarize("héllo", [1, 2]))
    '2 tokens, 5 characters, 6 bytes, 3.00 bytes/token'
    """
    return Summary(len(ids), len(text), _utf8_len(text))


def token_views(
    tok, text: str, *, allowed_special: AllowedSpecial = frozenset(), disallowed_special: DisallowedSpecial = "all"
) -> list[TokenView]:
    """Encode ``text`` with ``tok`` and cut its decoded text at the token boundaries.

    >>> from wordsplit import get_tokenizer
    >>> [(v.id, v.text, v.partial) for v in token_views(get_tokenizer("cl100k_base"), "hi 😀")]
    [(6151, 'hi', False), (91416, ' 😀', False)]
    >>> [(v.text, v.partial) for v in token_views(get_tokenizer("cl100k_base"), "🫠")]
    [('🫠', True), ('', True), ('', True)]
    """
    ids = tok.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    vocab = tok.vocab
    pieces = [tok.id_to_token(i) for i in ids]
    data = b"".join(pieces)

    def char_start(pos: int) -> int:
        """The first character boundary at or after ``pos`` (UTF-8 continuation bytes are 10xxxxxx)."""
        while pos < len(data) and data[pos] & 0xC0 == 0x80:
            pos += 1
        return pos

    special_ids, added_ids = set(vocab.special_tokens.values()), set(vocab.added_tokens.values())
    views, pos = [], 0
    for token_id, piece in zip(ids, pieces):
        end = pos + len(piece)
        start, stop = char_start(pos), char_start(end)
        kind = "special" if token_id in special_ids else "added" if token_id in added_ids else "bpe"
        views.append(TokenView(token_id, piece, data[start:stop].decode("utf-8", "replace"), kind,
                               start != pos or stop != end))
        pos = end
    return views


def use_color(color: Optional[bool] = None, stream=None) -> bool:
    """Whether to draw in colour: ``color`` if given, else when ``stream`` (stdout) is a
    terminal and the ``NO_COLOR`` environment variable is unset or empty (no-color.org).

    >>> use_color(True), use_color(False)
    (True, False)
    """
    if color is not None:
        return color
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def _console(color: bool):
    """A rich console that renders into a string, in colour or not, and never re-wraps text."""
    from rich.console import Console

    return Console(
        file=io.StringIO(), force_terminal=color, no_color=not color, color_system="auto" if color else None,
        soft_wrap=True, highlight=False, markup=False, emoji=False, width=100,
    )


def render_show(
    tok,
    text: str,
    *,
    ids: bool = False,
    color: Optional[bool] = None,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = "all",
) -> str:
    """The text with its token boundaries, then a summary line, for a terminal.

    In colour each token has its own background (special and added tokens bold and
    underlined, split characters underlined, newlines shown as ``↵``); without colour tokens
    are separated by ``|``. With ``ids`` each token is followed by ``[id]`` (before its
    trailing newlines, if any).

    Args:
        tok: the tokenizer.
        text: the text.
        ids: show each token's id.
        color: force colour on or off; None decides with :func:`use_color`.
        allowed_special, disallowed_special: the special-token policy, as for ``encode``.

    Returns:
        The rendering (ANSI escapes when in colour), ending without a newline.

    >>> from wordsplit import get_tokenizer
    >>> print(render_show(get_tokenizer("qwen3"), "hello world", ids=True, color=False))
    hello[14990] world[1879]
    2 tokens, 11 characters, 11 bytes, 5.50 bytes/token
    """
    from ..terminal import have_rich

    views = token_views(tok, text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    summary = str(summarize(text, [v.id for v in views]))
    if not (use_color(color) and have_rich()):  # colours need rich (pip install 'wordsplit[cli]')
        return _plain_show(views, ids) + "\n" + summary
    from rich.text import Text

    console = _console(True)
    # rich draws no colour on a dumb terminal even when forced: then separate tokens by "|".
    if console.color_system is None:
        return _plain_show(views, ids) + "\n" + summary
    palette = _PALETTE_16 if console.color_system == "standard" else _PALETTE
    out = Text()
    for n, view in enumerate(views):
        # The id goes before the token's trailing newlines, so that it stays on the token's line.
        shown = view.text.translate(_CONTROL_PICTURES)
        head = shown.rstrip("\n")
        newlines = len(shown) - len(head)
        label = f"[{view.id}]" if ids else ""
        style = f"black on {palette[n % len(palette)]}"
        if view.kind != "bpe":
            style += " bold underline"
        elif view.partial:
            style += " underline"
        # A token holding only the end of a split character still gets a visible cell.
        out.append((head.replace("\n", "↵\n") + "↵" * min(newlines, 1)) or "·", style=style)
        out.append(label, style="dim")
        out.append("\n" + "↵\n" * (newlines - 1) if newlines else "", style=style)
    console.print(out, end="\n")
    console.print(summary, end="")
    return console.file.getvalue()


def _plain_show(views, ids: bool) -> str:
    """The tokens without colour: separated by ``|``, or each followed by ``[id]``."""
    out = []
    for n, view in enumerate(views):
        shown = view.text.translate(_CONTROL_PICTURES)
        head = shown.rstrip("\n")
        label = f"[{view.id}]" if ids else ""
        out.append(("|" if n and not ids else "") + head + label + "\n" * (len(shown) - len(head)))
    return "".join(out)


# -- HTML ---------------------------------------------------------------------------------------

_HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }}
h1 {{ font-size: 1.1em; font-weight: 600; }}
.summary, .info {{ color: #555; font-size: 0.9em; }}
.info {{ min-height: 1.4em; font-family: ui-monospace, monospace; margin: 0.6em 0; }}
.tokens {{ font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1.05em;
  line-height: 1.9; white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid #ddd;
  border-radius: 6px; padding: 0.8em; }}
.tok {{ border-radius: 3px; padding: 0.15em 0; cursor: default; }}
.tok:hover, .tok.selected {{ outline: 2px solid #333; }}
.c0 {{ background: {c0}; }} .c1 {{ background: {c1}; }} .c2 {{ background: {c2}; }} .c3 {{ background: {c3}; }}
.special, .added {{ font-weight: 700; box-shadow: inset 0 -2px 0 #a33; }}
.partial {{ text-decoration: underline dotted #a33; }}
.partial:empty::before {{ content: "\\00b7"; color: #a33; }}
.nl::before {{ content: "\\21b5"; color: #999; }}
.tab::before {{ content: "\\2192"; color: #999; }}
.ids .idm::after {{ content: attr(data-id); font-size: 0.65em; color: #666; vertical-align: sub; padding-left: 1px; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="summary">{summary}. Hover or click a token for its id and bytes.
<label><input type="checkbox" id="show-ids"> show ids</label></p>
<div class="info" id="info" aria-live="polite"></div>
<div class="tokens" id="tokens">{tokens}</div>
<script>
(function () {{
  var info = document.getElementById("info"), tokens = document.getElementById("tokens");
  function describe(el) {{
    var hex = el.dataset.bytes.match(/../g) || [];
    info.textContent = "id " + el.dataset.id + " \\u00b7 " + el.dataset.kind + " \\u00b7 " + hex.length +
      " byte" + (hex.length === 1 ? "" : "s") + ": " + hex.join(" ");
  }}
  tokens.addEventListener("mouseover", function (e) {{
    var tok = e.target.closest(".tok");
    if (tok) describe(tok);
  }});
  tokens.addEventListener("click", function (e) {{
    var old = tokens.querySelector(".selected"), tok = e.target.closest(".tok");
    if (old) old.classList.remove("selected");
    if (tok) {{ tok.classList.add("selected"); describe(tok); }}
  }});
  document.getElementById("show-ids").addEventListener("change", function (e) {{
    tokens.classList.toggle("ids", e.target.checked);
  }});
}})();
</script>
</body>
</html>
"""


def _html_token_text(text: str, token_id: int) -> str:
    """Escaped token text, newlines and tabs marked by CSS (marks are not copied with the text),
    and an empty id marker that the "show ids" switch fills; it goes before the token's
    first trailing newline so that the id stays on the token's line."""
    def escape(part: str) -> str:
        escaped = html.escape(part.translate(_CONTROL_PICTURES))
        return escaped.replace("\n", '<span class="nl"></span>\n').replace("\t", '<span class="tab"></span>\t')

    marker = f'<span class="idm" data-id="{token_id}"></span>'
    body = text.rstrip("\n")
    if body == text:
        return escape(text) + marker
    return escape(body) + '<span class="nl"></span>' + marker + "\n" + escape(text[len(body) + 1:])


def render_html(
    tok,
    text: str,
    *,
    title: Optional[str] = None,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = "all",
) -> str:
    """A standalone HTML page of the text's tokens: inline CSS and JS, nothing fetched.

    Each token is a ``<span class="tok">`` on an alternating background, with ``data-id``,
    ``data-bytes`` (hex), ``data-kind`` and a ``title`` giving the id and bytes (the hover
    text). Whitespace is preserved; newlines and tabs get a mark that is not copied with
    the text; special and added tokens are bold and underlined in red.

    >>> from wordsplit import get_tokenizer
    >>> page = render_html(get_tokenizer("qwen3"), "a<b")
    >>> page.count('class="tok '), 'data-bytes="3c62"' in page
    (2, True)
    """
    views = token_views(tok, text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    spans = []
    for n, view in enumerate(views):
        classes = f"tok c{n % len(_PALETTE)}" + ("" if view.kind == "bpe" else f" {view.kind}") + \
            (" partial" if view.partial else "")
        hover = f"id {view.id} · {view.kind} · bytes {view.bytes.hex(' ')} · {view.bytes!r}"
        spans.append(
            f'<span class="{classes}" data-id="{view.id}" data-bytes="{view.bytes.hex()}" data-kind="{view.kind}" '
            f'title="{html.escape(hover)}">{_html_token_text(view.text, view.id)}</span>'
        )
    title = title or f"wordsplit: {tok.vocab.name} tokens"
    colors = {f"c{i}": c for i, c in enumerate(_PALETTE)}
    return _HTML_TEMPLATE.format(
        title=html.escape(title), summary=html.escape(str(summarize(text, [v.id for v in views]))),
        tokens="".join(spans), **colors,
    )


# -- compare ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CompareRow(Summary):
    """One vocabulary's counts over the compared texts (a :class:`Summary` with its name)."""

    vocab: str
    n_vocab: int

    def to_dict(self) -> dict:
        return {**asdict(self), "bytes_per_token": self.bytes_per_token}


def compare(
    texts: Iterable[str],
    vocabs: Sequence[str],
    *,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = "all",
    **options,
) -> list[CompareRow]:
    """Token counts of ``texts`` (summed) under each vocabulary, in the order given.

    Args:
        texts: the texts.
        vocabs: vocabulary names (or files), as for :func:`~wordsplit.load_vocab`.
        allowed_special, disallowed_special: the special-token policy, for every vocabulary.
        options: :class:`~wordsplit.TokenizerOptions` fields (encoder, backend...).

    Raises:
        UnknownVocabError: a name that is not a vocabulary.
        OptionTypeError: ``texts`` or ``vocabs`` is a single string (wrap it in a list: a
            string is not taken as a list of its characters), or an item is not a str.

    >>> [(r.vocab, r.tokens) for r in compare(["hello world"], ["qwen3", "gpt2"])]
    [('qwen3', 2), ('gpt2', 2)]
    """
    from .. import get_tokenizer

    for name, value in (("texts", texts), ("vocabs", vocabs)):
        if isinstance(value, (str, bytes)):
            raise OptionTypeError(f"compare takes a list of {name}, not a single {type(value).__name__} "
                                  "(it would count each character as one); wrap it in a list")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise OptionTypeError(f"text {i} given to compare is a {type(text).__name__}, not a str")
    characters = sum(len(t) for t in texts)
    size = sum(_utf8_len(t) for t in texts)
    rows = []
    for name in vocabs:
        tok = get_tokenizer(name, **options)
        tokens = sum(tok.count(t, allowed_special=allowed_special, disallowed_special=disallowed_special)
                     for t in texts)
        rows.append(CompareRow(vocab=name, n_vocab=tok.n_vocab, tokens=tokens, characters=characters, bytes=size))
    return rows


def render_compare(rows: Sequence[CompareRow], *, color: Optional[bool] = None, as_json: bool = False) -> str:
    """The rows as a table (in colour with rich: a bold header and a rule; else plain) or as JSON.

    The last column is each vocabulary's token count relative to the first row's.

    >>> print(render_compare(compare(["hello world"], ["qwen3", "gpt2"]), color=False))
    vocab  n_vocab  tokens  bytes/token  vs qwen3
    qwen3  151,669       2         5.50     1.00x
    gpt2    50,257       2         5.50     1.00x
    text: 11 characters, 11 bytes
    """
    if as_json:
        return json.dumps([row.to_dict() for row in rows], indent=2)
    from ..terminal import have_rich, plain_table

    first = rows[0].tokens if rows else 0
    cells = [[row.vocab, f"{row.n_vocab:,}", f"{row.tokens:,}",
              "-" if row.bytes_per_token is None else f"{row.bytes_per_token:.2f}",
              f"{row.tokens / first:.2f}x" if first else "-"] for row in rows]
    text_line = f"\ntext: {plural(rows[0].characters, 'character')}, {plural(rows[0].bytes, 'byte')}" if rows else ""
    if not (use_color(color) and have_rich()):
        headers = ["vocab", "n_vocab", "tokens", "bytes/token", f"vs {rows[0].vocab}" if rows else "vs first"]
        return plain_table(headers, cells, right={1, 2, 3, 4}) + text_line
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False)
    table.add_column("vocab")
    for name in ("n_vocab", "tokens", "bytes/token", f"vs {rows[0].vocab}" if rows else "vs first"):
        table.add_column(name, justify="right")
    for row in cells:
        table.add_row(*row)
    console = _console(True)
    console.print(table)
    console.print(text_line.lstrip("\n"), end="")
    return "\n".join(line.rstrip() for line in console.file.getvalue().rstrip("\n").split("\n"))
