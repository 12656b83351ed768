r"""RegexSpanner: split text into pre-token spans with any tokenizer pattern, via ``regex``.

This is the Python backend's general spanner and the reference every hand-written scanner
is checked against. It runs the tokenizer's own pattern on the third-party ``regex`` module,
after :func:`translate_pattern` has pinned down the parts whose meaning differs between
regex engines:

* ``\p{L}``, ``\p{N}``, ``\p{M}``, ``\p{Lu}``... and ``\s`` mean Unicode 16.0, the version
  the official tokenizers (tiktoken 0.14, HF tokenizers) classify by, taken from
  :mod:`wordsplit._unicode16`. The ``regex`` module follows whatever Unicode version it was
  built with (17.0 for 2026.x, 15.1 for 2024.x), so every character class is rebuilt so that
  it matches exactly the Unicode 16.0 code points, whatever ``regex`` is installed.
* ``$`` becomes ``\Z``: in tiktoken's Rust regex ``$`` matches only at the end of the text,
  in the ``regex`` module also before a final ``"\n"``.
* Case-insensitive groups use simple case folding, as Rust regex does (``(?i:'s)`` matches
  ``'S`` and ``'ſ``, U+017F, exactly as tiktoken and HF tokenizers do).

Semantics are tiktoken's: :meth:`RegexSpanner.split` returns the successive non-overlapping
matches, and text that no alternative matches is dropped (the patterns of real tokenizers
match every character, so nothing is dropped in practice). Possessive quantifiers
(``++``, ``?+``, ``{1,3}+``) keep their meaning; note that Oniguruma (HF tokenizers) would
read ``{1,3}+`` as ``({1,3})+``, so a tiktoken pattern is not portable to HF as it stands.

It does not: normalize text, split out special tokens, encode, or support constructs whose
meaning depends on the engine's Unicode data or dialect and that no supported tokenizer
uses (``\d``, ``\w``, ``\b``, ``\p{P}``, nested classes, ``(?m)``...); those raise
:class:`~wordsplit.errors.UnsupportedTokenizerError`. Registration under the name
``"regex"`` happens elsewhere.

>>> RegexSpanner(r"\p{L}+|\p{N}|\s+").split("ab 12")
['ab', ' ', '1', '2']
"""

from __future__ import annotations

import array
import sys
from typing import Optional

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..patterns import MAX_GROUP_DEPTH
from .stage_check import refuse_other_stage

__all__ = ["RegexSpanner", "native_pattern", "translate_pattern"]

MAX_CODE_POINT = 0x10FFFF

Ranges = list[tuple[int, int]]

# Every translated pattern starts with this: version 1 behaviour (set operations inside
# classes, flags scoped like Rust regex's) with simple case folding (-f), as Rust regex has.
_PREFIX = "(?V1-f)"

# Long property names (Unicode General_Category aliases) accepted in \p{...}.
_PROPERTY_ALIASES = {
    "Letter": "L",
    "Uppercase_Letter": "Lu",
    "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm",
    "Other_Letter": "Lo",
    "Mark": "M",
    "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn",
    "Spacing_Mark": "Mc",
    "Enclosing_Mark": "Me",
    "Number": "N",
    "Decimal_Number": "Nd",
    "Letter_Number": "Nl",
    "Other_Number": "No",
    "White_Space": "WHITE_SPACE",
}

# Escapes that stand for one code point and mean the same in Rust regex, Oniguruma and the
# regex module.
_SIMPLE_ESCAPES = {"a": 0x07, "e": 0x1B, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}

# Escapes that are valid somewhere but are rejected: their meaning depends on the engine's
# Unicode tables or dialect, and no supported tokenizer pattern uses them.
_REJECTED_ESCAPES = {
    "d": "\\d (digit class; spell it \\p{Nd})",
    "D": "\\D (non-digit class)",
    "w": "\\w (word class; its definition differs between regex engines)",
    "W": "\\W (non-word class)",
    "b": "\\b (word boundary; depends on \\w)",
    "B": "\\B (non-word boundary; depends on \\w)",
    "h": "\\h (engine-specific class)",
    "H": "\\H (engine-specific class)",
    "R": "\\R (linebreak sequence)",
    "X": "\\X (grapheme cluster)",
    "Z": "\\Z (end or before a final newline in Oniguruma, end in Python; spell it \\z or $)",
    "G": "\\G (match-start anchor)",
    "K": "\\K (keep-out)",
    "N": "\\N (named character / non-newline)",
}

# Inline flags whose meaning is the same in all three engines.
_ALLOWED_FLAGS = frozenset("is")

# A correction list longer than this is guarded by its bounding range (see _correction).
_GUARD_MIN_RANGES = 3

# -- range arithmetic (inclusive (first, last) pairs, sorted and merged) --------------------


def _merge(ranges: Ranges) -> Ranges:
    """Sort and merge overlapping or adjacent inclusive ranges."""
    out: Ranges = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _complement(ranges: Ranges) -> Ranges:
    """The code points (0..U+10FFFF) not in the merged ``ranges``."""
    out: Ranges = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return out


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both merged range lists."""
    out: Ranges = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _minus(a: Ranges, b: Ranges) -> Ranges:
    return _intersect(a, _complement(b))


# -- rendering -----------------------------------------------------------------------------


def _cp_escape(cp: int) -> str:
    r"""``\xHH``, ``\uHHHH`` or ``\UHHHHHHHH``: the ``regex`` module has no ``\x{...}`` form."""
    if cp < 0x100:
        return f"\\x{cp:02X}"
    if cp < 0x10000:
        return f"\\u{cp:04X}"
    return f"\\U{cp:08X}"


def _class_char(cp: int) -> str:
    """One code point inside a class: ASCII letters and digits as is, the rest escaped."""
    return chr(cp) if cp < 0x80 and chr(cp).isalnum() else _cp_escape(cp)


def _ranges_inner(ranges: Ranges) -> str:
    """The inside of a class listing ``ranges`` (merged), every code point escaped."""
    parts = []
    for lo, hi in _merge(ranges):
        if lo == hi:
            parts.append(_class_char(lo))
        elif hi == lo + 1:
            parts.append(_class_char(lo) + _class_char(hi))
        else:
            parts.append(f"{_class_char(lo)}-{_class_char(hi)}")
    return "".join(parts)


def _explicit_class(ranges: Ranges, negated: bool = False) -> str:
    """A ``[...]`` class listing ``ranges`` explicitly (no Unicode properties)."""
    if not ranges:
        # An empty class matches nothing; negated, it matches any character.
        ranges, negated = [(0, MAX_CODE_POINT)], not negated
    return ("[^" if negated else "[") + _ranges_inner(ranges) + "]"


def _correction(ranges: Ranges) -> str:
    """A nested class for a (short) correction list; a long one is guarded.

    The ``regex`` module tests a class's ranges one by one, so a long list costs every
    character that is *not* in it a full scan. Intersecting with the bounding range first
    rejects most text (ASCII, Latin, Cyrillic...) with one comparison.
    """
    inner = _ranges_inner(ranges)
    if len(ranges) < _GUARD_MIN_RANGES:
        return f"[{inner}]"
    bound = _ranges_inner([(ranges[0][0], ranges[-1][1])])
    return f"[[{bound}]&&[{inner}]]"


class _Universe:
    """Every code point in one string, to read off which ones a class matches."""

    def __init__(self) -> None:
        self._text: Optional[str] = None

    def matched_by(self, inner: str) -> Ranges:
        """The code points that ``[inner]`` matches, as the installed ``regex`` decides."""
        import regex  # imported on first use: the native scanners need neither it nor the tables

        cached = _SCAN_CACHE.get(inner)
        if cached is not None:
            return cached
        if self._text is None:
            # About 0.06 s. Surrogates are included, since a Python str can hold them.
            codes = array.array("I", range(MAX_CODE_POINT + 1))
            if codes.itemsize == 4:
                order = "le" if sys.byteorder == "little" else "be"
                self._text = codes.tobytes().decode(f"utf-32-{order}", "surrogatepass")
            else:  # pragma: no cover - no such platform in practice
                self._text = "".join(map(chr, range(MAX_CODE_POINT + 1)))
        runs = regex.finditer(f"{_PREFIX}[{inner}]+", self._text)
        found = [(m.start(), m.end() - 1) for m in runs]
        _SCAN_CACHE[inner] = found
        return found


# class inside (Unicode properties + literals) -> the code points the installed regex
# module matches with it. Filled by _Universe.matched_by.
_SCAN_CACHE: dict[str, Ranges] = {}


def _build_class(props: list[str], literals: Ranges, target: Ranges, negated: bool,
                 universe: _Universe) -> str:
    """A class matching exactly ``target`` (or its complement), fast on the ``regex`` module.

    ``props`` are the class's Unicode property escapes (``\\p{L}``, ``\\s``...) and
    ``literals`` its other members; ``target`` is the exact Unicode 16.0 set they stand for.
    The class keeps the module's property tests (one table lookup each, where a list of
    hundreds of ranges would be scanned member by member) and adds or subtracts the code
    points on which the module's Unicode version differs from 16.0. The result is checked
    against ``target`` on every code point; if the check fails the explicit class is used.
    """
    if not props:
        return _explicit_class(target, negated)
    base = "".join(props) + _ranges_inner(literals)
    have = universe.matched_by(base)
    missing, extra = _minus(target, have), _minus(have, target)
    inner = base + (_correction(missing) if missing else "")
    if extra:
        inner = f"[{inner}]--{_correction(extra)}"
    if universe.matched_by(inner) != target:  # pragma: no cover - a regex module bug
        return _explicit_class(target, negated)
    return ("[^" if negated else "[") + inner + "]"


# -- the translator ------------------------------------------------------------------------


class _Translator:
    """A single left-to-right pass over the pattern; see :func:`translate_pattern`."""

    def __init__(self, pattern: str, explicit: bool, line_anchors: bool = False) -> None:
        self.pattern = pattern
        self.explicit = explicit
        self.line_anchors = line_anchors
        self.pos = 0
        self.universe = _Universe()
        # Case-insensitivity of each open group (the last is the current one).
        self.ignore_case = [False]

    def error(self, what: str) -> UnsupportedTokenizerError:
        shown = self.pattern if len(self.pattern) <= 300 else self.pattern[:300] + "..."
        return UnsupportedTokenizerError(
            f"the pre-tokenizer pattern uses {what} at position {self.pos}, which wordsplit "
            f"does not support; pattern: {shown!r}"
        )

    def translate(self) -> str:
        out: list[str] = [_PREFIX]
        p = self.pattern
        while self.pos < len(p):
            c = p[self.pos]
            if c == "\\":
                out.append(self.escape_outside())
            elif c == "[":
                out.append(self.char_class())
            elif c == "$":
                # tiktoken (Rust regex): end of text only. The regex module's `$` would also
                # match before a final "\n". HF (Oniguruma's Ruby syntax): end of a line,
                # before every "\n" and at the end.
                out.append("(?:(?=\\n)|\\Z)" if self.line_anchors else "\\Z")
                self.pos += 1
            elif c == "^" and self.line_anchors:
                # HF (Oniguruma's Ruby syntax): start of a line, at the start and after every
                # "\n" that does not end the text; tiktoken's `^` is the start of the text, as
                # the regex module's.
                out.append("(?:\\A|(?<=\\n)(?!\\Z))")
                self.pos += 1
            elif c == "(":
                out.append(self.group_open())
            elif c == ")":
                if len(self.ignore_case) > 1:
                    self.ignore_case.pop()
                out.append(c)
                self.pos += 1
            else:
                out.append(c)
                self.pos += 1
        return "".join(out)

    def render(self, props: list[str], literals: Ranges, target: Ranges, negated: bool) -> str:
        if self.explicit or self.ignore_case[-1]:
            # Under (?i) the module case-folds a class; explicit ranges fold like Rust's.
            return _explicit_class(target, negated)
        return _build_class(props, literals, target, negated, self.universe)

    # -- outside a character class ------------------------------------------------------

    def escape_outside(self) -> str:
        escape = self.class_escape()
        if escape is not None:
            prop, ranges, negated = escape
            return self.render([prop], [], ranges, negated)
        cp = self.codepoint_escape()
        if cp is not None:
            return _cp_escape(cp)
        c = self.pattern[self.pos + 1]
        if c == "A":
            self.pos += 2
            return "\\A"
        if c == "z":  # Rust regex / Oniguruma: end of text only.
            self.pos += 2
            return "\\Z"
        raise self.error(self.describe_escape())

    def group_open(self) -> str:
        """Track inline flags: ``(?flags)``, ``(?flags:...)``; other groups pass through."""
        import regex

        m = regex.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])", self.pattern[self.pos:])
        if m is None or not (m.group(1) or m.group(2) is not None):
            # (  (?:  (?=  (?!  (?<=  (?<!  (?>  (?P<name>  (?<name>: a group, no flags.
            self.ignore_case.append(self.ignore_case[-1])
            self.check_depth()
            self.pos += 1
            return "("
        on, off = set(m.group(1)), set(m.group(2) or "")
        bad = sorted((on | off) - _ALLOWED_FLAGS)
        if bad:
            raise self.error(f"the inline flag(s) {''.join(bad)!r} in {m.group(0)!r}")
        ignore_case = ("i" in on) or (self.ignore_case[-1] and "i" not in off)
        if m.group(3) == ":":
            self.ignore_case.append(ignore_case)
            self.check_depth()
        else:  # (?i) applies to the rest of the enclosing group, as in Rust regex.
            self.ignore_case[-1] = ignore_case
        self.pos += m.end()
        return m.group(0)

    def check_depth(self) -> None:
        if len(self.ignore_case) > MAX_GROUP_DEPTH + 1:
            raise self.error(f"groups nested more than {MAX_GROUP_DEPTH} deep")

    # -- inside a character class -------------------------------------------------------

    def char_class(self) -> str:
        """Translate ``[...]`` into one class matching exactly its Unicode 16.0 members."""
        p = self.pattern
        start = self.pos
        self.pos += 1
        negated = p.startswith("^", self.pos)
        if negated:
            self.pos += 1
        props: list[str] = []
        literals: Ranges = []
        target: Ranges = []
        first = True
        while True:
            if self.pos >= len(p):
                self.pos = start
                raise self.error("an unterminated character class")
            c = p[self.pos]
            if c == "]" and not first:
                self.pos += 1
                break
            first = False
            if c == "[":
                raise self.error("a nested character class or POSIX class")
            if p.startswith(("&&", "--", "~~", "||"), self.pos):
                raise self.error(f"the class set operation {p[self.pos:self.pos + 2]!r}")
            if c == "\\":
                escape = self.class_escape()
                if escape is not None:
                    prop, ranges, escape_negated = escape
                    if escape_negated:
                        # \P{..} and \S inside a class add their complement (a class is a
                        # union), tested with the module's negated property.
                        prop, ranges = "\\" + prop[1].swapcase() + prop[2:], _complement(ranges)
                    props.append(prop)
                    target.extend(ranges)
                    continue
            lo = self.class_char()
            hi = lo
            if p.startswith("-", self.pos) and self.pos + 1 < len(p) and p[self.pos + 1] != "]":
                self.pos += 1
                hi = self.class_char()
                if hi < lo:
                    raise self.error("an invalid range in a character class")
            literals.append((lo, hi))
            target.append((lo, hi))
        return self.render(props, _merge(literals), _merge(target), negated)

    def class_char(self) -> int:
        """One code point inside a class (a literal or a code point escape)."""
        p = self.pattern
        if p[self.pos] != "\\":
            self.pos += 1
            return ord(p[self.pos - 1])
        if self.class_escape(peek=True):
            raise self.error("a class escape as a range endpoint")
        cp = self.codepoint_escape()
        if cp is None:
            raise self.error(self.describe_escape() + " inside a character class")
        return cp

    # -- escapes (both contexts) ---------------------------------------------------------

    def class_escape(self, peek: bool = False) -> Optional[tuple[str, Ranges, bool]]:
        from .._unicode16 import CLASSES, WHITE_SPACE

        r"""``\p{X}``, ``\pX``, ``\P{X}``, ``\s``, ``\S`` -> (property, ranges, negated).

        ``property`` is the positive escape for the ``regex`` module (``\p{L}``, ``\s``),
        ``ranges`` its Unicode 16.0 members. Returns None for any other escape.
        """
        p = self.pattern
        c = p[self.pos + 1] if self.pos + 1 < len(p) else ""
        if c in ("s", "S"):
            if not peek:
                self.pos += 2
            return "\\s", list(WHITE_SPACE), c == "S"
        if c not in ("p", "P"):
            return None
        negated = c == "P"
        if p.startswith("{", self.pos + 2):
            end = p.find("}", self.pos + 3)
            if end < 0:
                raise self.error("an unterminated \\p{...}")
            name = p[self.pos + 3:end]
            new_pos = end + 1
        else:
            name = p[self.pos + 2:self.pos + 3]
            new_pos = self.pos + 3
        if name.startswith("^"):  # Oniguruma's \p{^X}
            name, negated = name[1:], not negated
        key = _PROPERTY_ALIASES.get(name, name)
        if key not in CLASSES:
            raise self.error(
                f"the Unicode class \\{c}{{{name}}} (supported: \\p{{X}} for X in "
                f"{', '.join(k for k in CLASSES if k != 'WHITE_SPACE')}, and \\s)"
            )
        if not peek:
            self.pos = new_pos
        prop = "\\p{White_Space}" if key == "WHITE_SPACE" else f"\\p{{{key}}}"
        return prop, list(CLASSES[key]), negated

    def codepoint_escape(self) -> Optional[int]:
        """An escape that stands for one code point; None if it is something else."""
        import regex

        p = self.pattern
        if self.pos + 1 >= len(p):
            raise self.error("a trailing backslash")
        c = p[self.pos + 1]
        if c in _SIMPLE_ESCAPES:
            self.pos += 2
            return _SIMPLE_ESCAPES[c]
        if c in "xuU":
            m = regex.compile(
                r"\\(?:x\{([0-9A-Fa-f]{1,8})\}|x([0-9A-Fa-f]{2})|u\{([0-9A-Fa-f]{1,8})\}"
                r"|u([0-9A-Fa-f]{4})|U\{([0-9A-Fa-f]{1,8})\}|U([0-9A-Fa-f]{8}))"
            ).match(p, self.pos)
            if m is None:
                raise self.error(f"a malformed \\{c} escape")
            cp = int(next(g for g in m.groups() if g), 16)
            if cp > MAX_CODE_POINT:
                raise self.error(f"the out-of-range code point escape {m.group(0)!r}")
            self.pos = m.end()
            return cp
        if c == "0" and not p[self.pos + 2:self.pos + 3].isdigit():
            self.pos += 2
            return 0
        if not c.isalnum() and c.isascii():
            # An escaped metacharacter or punctuation: itself.
            self.pos += 2
            return ord(c)
        return None

    def describe_escape(self) -> str:
        c = self.pattern[self.pos + 1]
        if c in _REJECTED_ESCAPES:
            return _REJECTED_ESCAPES[c]
        if c.isdigit():
            return f"the backreference or octal escape \\{c}"
        return f"the escape \\{c}"


def translate_pattern(pattern: str, *, explicit: bool = False, line_anchors: bool = False) -> str:
    r"""Rewrite a tokenizer pattern so the ``regex`` module matches it with Unicode 16.0 classes.

    Every character class, ``\p{X}`` / ``\P{X}`` (X in L, Lu, Ll, Lt, Lm, Lo, M, Mn, Mc, Me,
    N, Nd, Nl, No) and ``\s`` / ``\S`` becomes a class that matches exactly its Unicode 16.0
    code points under the installed ``regex`` module: the module's own property tests plus a
    short correction (checked on all 1,114,112 code points when the pattern is translated,
    which takes about 0.1 s and is cached per class), or, with ``explicit=True`` and inside
    case-insensitive groups, the full list of ranges. ``$`` and ``\z`` become ``\Z`` (end of
    text only, as in tiktoken); the result starts with ``(?V1-f)``. Everything else is kept.

    Args:
        pattern: a pre-tokenizer pattern as written for tiktoken or HF tokenizers.
        explicit: spell every class as explicit ranges; exact and independent of the
            ``regex`` module's Unicode data, but about 10x slower to match.
        line_anchors: read ``^`` and ``$`` as HF tokenizers' Oniguruma does (start and end of
            a line: ``$`` before every ``"\n"`` and at the end, ``^`` at the start and after
            every ``"\n"`` but a final one), for HF ``Split`` and ``Replace`` patterns.

    Returns:
        The equivalent pattern for ``regex.compile`` (no flags needed).

    Raises:
        UnsupportedTokenizerError: the pattern uses a construct whose meaning depends on the
            engine (another Unicode class, ``\d``, ``\w``, ``\b``, ``(?m)``, nested classes).

    >>> print(translate_pattern(r"[\p{Me}_]+$", explicit=True))
    (?V1-f)[\x5F\u0488\u0489\u1ABE\u20DD-\u20E0\u20E2-\u20E4\uA670-\uA672]+\Z
    """
    return _Translator(pattern, explicit, line_anchors).translate()


def native_pattern(pattern: str, *, line_anchors: bool = False) -> str:
    r"""The pattern for the native regex spanner: every class spelled as Unicode 16.0 ranges.

    This is :func:`translate_pattern`'s explicit form (the same parse, the same accepted
    constructs, the same class tables), written in the syntax of Rust's ``fancy-regex``:
    without the ``(?V1-f)`` prefix, with ``\z`` for end of text and ``\x{..}`` code points.
    The native core compiles it with no Unicode class tables of its own, so the Python and
    native spanners cannot disagree on what a class means or on which patterns are accepted.

    Raises:
        UnsupportedTokenizerError: as :func:`translate_pattern`.

    >>> print(native_pattern(r"[\p{Me}]+$|x"))
    [\x{488}\x{489}\x{1ABE}\x{20DD}-\x{20E0}\x{20E2}-\x{20E4}\x{A670}-\x{A672}]+\z|x
    """
    import regex

    explicit = translate_pattern(pattern, explicit=True, line_anchors=line_anchors)
    # The translator writes code points as \xHH, \uHHHH or \UHHHHHHHH and end of text as \Z;
    # every other escape is two characters and means the same in both engines.
    escape = regex.compile(r"\\(?:x([0-9A-F]{2})|u([0-9A-F]{4})|U([0-9A-F]{8})|(Z)|(.))", regex.S)

    def rewrite(m) -> str:
        if m.group(4):
            return "\\z"
        if m.group(5) is not None:
            return m.group(0)
        return f"\\x{{{int(m.group(1) or m.group(2) or m.group(3), 16):X}}}"

    return escape.sub(rewrite, explicit[len(_PREFIX):])


class RegexSpanner:
    r"""Splits text with a tokenizer's pattern on the ``regex`` module, tiktoken-style.

    Args:
        pattern: the pre-tokenizer pattern (tiktoken's ``pat_str`` or an HF ``Split``
            regex), kept unchanged as :attr:`pattern`.

    Raises:
        UnsupportedTokenizerError: see :func:`translate_pattern`.
        VocabFormatError: the translated pattern does not compile.

    >>> gpt2 = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"
    >>> spanner = RegexSpanner(gpt2)
    >>> spanner.split("Hello world's  2024!\n")
    ['Hello', ' world', "'s", ' ', ' 2024', '!', '\n']
    >>> spanner.spans("Hi there")
    [(0, 2), (2, 8)]
    """

    def __init__(self, pattern: str) -> None:
        import regex

        self.pattern = pattern
        refuse_other_stage("regex", pattern, str, "a split regex (tiktoken's kind)")
        translated = translate_pattern(pattern)
        try:
            self._regex = regex.compile(translated)
        except regex.error as exc:
            raise VocabFormatError(
                f"the pre-tokenizer pattern {pattern!r} does not compile: {exc}"
            ) from exc
        self._findall = self._regex.findall
        self._finditer = self._regex.finditer

    def split(self, text: str) -> list[str]:
        r"""The successive matches of the pattern in ``text`` (unmatched text is dropped).

        A capturing group does not change what a match is (the whole match is the piece, as
        in tiktoken and HF):

        >>> RegexSpanner(r"\p{N}{1,3}+|\S").split("12345")
        ['123', '45']
        >>> RegexSpanner(r"(\p{L})+|(\s)").split("ab c")
        ['ab', ' ', 'c']
        """
        if self._regex.groups:  # findall would return the groups
            return [m.group() for m in self._finditer(text)]
        return self._findall(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        r"""The ``(start, end)`` character offsets of :meth:`split`'s pieces.

        >>> RegexSpanner(r"\S+").spans(" ab c")
        [(1, 3), (4, 5)]
        """
        return [m.span() for m in self._finditer(text)]

    def __repr__(self) -> str:
        return f"RegexSpanner({self.pattern!r})"
