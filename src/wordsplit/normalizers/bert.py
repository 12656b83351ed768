r"""HF's ``BertNormalizer``: BERT's cleaning, CJK spacing, accents and case, as ``tokenizers`` runs them.

Four steps, each optional, in this order:

1. ``clean_text``: U+0000, U+FFFD and the characters the Rust crate ``unicode_categories`` 0.1.1
   calls "other" (Cc, Cf, Co; :mod:`wordsplit._hf_char_data`) are dropped, except tab, newline
   and carriage return, and every white space character (Rust's ``char::is_whitespace``, and
   those three) becomes a space;
2. ``handle_chinese_chars``: a space each side of a CJK ideograph (the blocks BERT lists,
   :data:`CJK_RANGES`), so the pre-tokenizer cuts each one out;
3. ``strip_accents``: HF's NFD (Unicode 9.0 data), then the nonspacing marks (Mn, of the same
   crate) dropped;
4. ``lowercase``: Rust's ``char::to_lowercase`` per character.

:func:`bert_normalizer` makes the function of a stage; :func:`bert_alignment` also aligns each
character of the result to the text, step by step as HF's ``NormalizedString`` does (offsets).

>>> from wordsplit.spec import BertNormalizer
>>> bert_normalizer(BertNormalizer())("Héllo\tWORLD\u00ad 中文!")
'hello world  中  文 !'
>>> bert_normalizer(BertNormalizer(strip_accents=False, lowercase=False))("Héllo")
'Héllo'
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Optional, Sequence

from ..spec import BertNormalizer
from .unicode import WHITESPACE, lowercase, nfd, unicode_changes

__all__ = ["CJK_RANGES", "bert_alignment", "bert_normalizer"]

#: The code point blocks BERT treats as Chinese characters (HF's ``is_chinese_char``).
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
              (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))

Aligned = tuple[int, int, bool]


def _class(ranges: Sequence[tuple[int, int]]) -> str:
    return "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)


@functools.cache
def _patterns() -> tuple["re.Pattern[str]", dict[int, str], "re.Pattern[str]", "re.Pattern[str]"]:
    """The classes, compiled on first use: (dropped by clean_text, white space → space,
    CJK ideographs, nonspacing marks)."""
    from .._hf_char_data import NONSPACING_MARK_RANGES, OTHER_RANGES

    # Tab, newline and carriage return are Cc but count as white space: made spaces, not dropped.
    kept = {0x09, 0x0A, 0x0D}
    other = [r for r in OTHER_RANGES]
    split: list[tuple[int, int]] = []
    for first, last in other:
        start = first
        for cp in sorted(kept):
            if first <= cp <= last:
                if start < cp:
                    split.append((start, cp - 1))
                start = cp + 1
        if start <= last:
            split.append((start, last))
    dropped = re.compile(f"[\\x00\\ufffd{_class(split)}]+")
    spaces = {ord(c): " " for c in WHITESPACE}
    cjk = re.compile(f"([{_class(CJK_RANGES)}])")
    marks = re.compile(f"[{_class(NONSPACING_MARK_RANGES)}]+")
    return dropped, spaces, cjk, marks


def bert_normalizer(stage: BertNormalizer) -> Callable[[str], str]:
    """The function that runs ``stage`` on a text."""
    dropped, spaces, cjk, marks = _patterns()

    def normalize(text: str) -> str:
        if stage.clean_text:
            text = dropped.sub("", text).translate(spaces)
        if stage.handle_chinese_chars:
            text = cjk.sub(r" \1 ", text)
        if stage.strip_accents:
            text = marks.sub("", nfd(text))
        if stage.lowercase:
            text = lowercase(text)
        return text

    return normalize


def _filtered(text: str, base: list[Aligned], pattern: "re.Pattern[str]") -> tuple[str, list[Aligned]]:
    """``text`` without what ``pattern`` matches; each kept character keeps its alignment (HF's
    ``filter``)."""
    kept = [(ch, aligned) for ch, aligned in zip(text, base) if not pattern.fullmatch(ch)]
    return "".join(ch for ch, _ in kept), [aligned for _, aligned in kept]


def bert_alignment(stage: BertNormalizer, text: str, base: Optional[list[Aligned]] = None,
                   length: Optional[int] = None) -> tuple[str, list[Aligned]]:
    r"""What ``stage`` makes of ``text`` and each result character's alignment, carried from
    ``base`` (each character of ``text``'s own; by default itself) through the steps as HF's
    ``NormalizedString`` carries it: a kept or mapped character keeps its alignment; a CJK
    ideograph becomes HF's changes ``(" ", 0), (ideograph, +1), (" ", +1)``, the space taking
    its place and the ideograph and the space after it inserted, all three aligned to it;
    NFD's and lowercasing's characters as
    :func:`~wordsplit.offsets.apply_changes` aligns them. ``length`` is the original text's
    length (the empty end past it).

    >>> bert_alignment(BertNormalizer(), "a中")
    ('a 中 ', [(0, 1, True), (1, 2, False), (1, 2, False), (1, 2, False)])
    """
    from ..offsets import apply_changes

    dropped, spaces, cjk, marks = _patterns()
    length = len(text) if length is None else length
    if base is None:
        base = [(i, i + 1, True) for i in range(len(text))]
    if stage.clean_text:
        text, base = _filtered(text, base, dropped)
        mapped = text.translate(spaces)
        base = [(s, e, same and a == b) for (s, e, same), a, b in zip(base, text, mapped)]
        text = mapped
    if stage.handle_chinese_chars and cjk.search(text):
        changes: list[tuple[str, int]] = []
        for ch in text:
            changes.extend(((" ", 0), (ch, 1), (" ", 1)) if cjk.fullmatch(ch) else ((ch, 0),))
        base = apply_changes(base, text, changes, 0, length)
        text = "".join(ch for ch, _ in changes)
    if stage.strip_accents:
        changes = unicode_changes(text, "NFD")
        base = apply_changes(base, text, changes, 0, length)
        text = "".join(ch for ch, _ in changes)
        text, base = _filtered(text, base, marks)
    if stage.lowercase:
        lowered: list[Aligned] = []
        for ch, (start, end, same) in zip(text, base):
            lower = lowercase(ch)
            lowered.append((start, end, same and lower == ch))
            lowered.extend([(start, end, False)] * (len(lower) - 1))
        base, text = lowered, lowercase(text)
    return text, base
