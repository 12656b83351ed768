"""The normalizer stages: what a vocabulary's text goes through before it is split."""

from __future__ import annotations

from typing import ClassVar, Union

from .stage import Stage, family

__all__ = [
    "BertNormalizer",
    "LlamaCppBertNormalizer",
    "LlamaCppUnigramNormalizer",
    "Lowercase",
    "Metaspace",
    "NORMALIZER_KINDS",
    "Nfc",
    "Nfd",
    "Nfkc",
    "Nfkd",
    "NoNormalizer",
    "Normalizer",
    "PluginNormalizer",
    "Precompiled",
    "PrefixSpace",
    "Prepend",
    "Replace",
    "STEP_KINDS",
    "SentencePieceNormalizer",
    "Sequence",
    "Strip",
    "StripAccents",
    "normalizer_from_name",
    "normalizer_name",
]


# -- normalizers ---------------------------------------------------------------------------
#
# What a vocabulary's text goes through before it is split.
#
# One class per kind, named as HF tokenizers names its normalizers where it has one:
#
# * :class:`NoNormalizer`; the Unicode forms :class:`Nfc`, :class:`Nfd`, :class:`Nfkc`,
#   :class:`Nfkd` with HF's Unicode 9.0 data; :class:`Lowercase`, :class:`StripAccents`,
#   :class:`Strip`, :class:`Replace`, :class:`Prepend` as HF runs them; :class:`PrefixSpace`,
#   ByteLevel's ``add_prefix_space`` (a pre-tokenizer step a loader runs as a normalizer's last);
# * :class:`BertNormalizer` (BERT's cleaning, CJK spacing, accents and case) and
#   :class:`Precompiled` (a SentencePiece character map) as HF runs them;
# * :class:`Sequence`: those steps in order, each carrying HF's alignment of every character to
#   the text (what offsets need), where a kind alone is run as one function;
# * :class:`SentencePieceNormalizer`: SentencePiece's own (its character map, the dummy prefix,
#   spaces as ``▁``);
# * :class:`Metaspace`: HF's ``Metaspace`` pre-tokenizer with ``split: false``, after another
#   normalizer, run as a normalizer;
# * :class:`LlamaCppBertNormalizer` and :class:`LlamaCppUnigramNormalizer`: llama.cpp's own
#   normalization of a GGUF WordPiece (``bert``) and Unigram (``t5``) vocabulary;
# * :class:`PluginNormalizer`: a function registered with
#   :func:`~wordsplit.normalizers.register_normalizer`, by its name.


class NoNormalizer(Stage):
    """The text as it is."""

    kind: ClassVar[str] = "None"
    __slots__ = ()


class Nfc(Stage):
    """Unicode NFC as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFC"
    __slots__ = ()


class Nfd(Stage):
    """Unicode NFD as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFD"
    __slots__ = ()


class Nfkc(Stage):
    """Unicode NFKC as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFKC"
    __slots__ = ()


class Nfkd(Stage):
    """Unicode NFKD as HF computes it (Unicode 9.0 data)."""

    kind: ClassVar[str] = "NFKD"
    __slots__ = ()


class Lowercase(Stage):
    """Each character lowercased as Rust's ``char::to_lowercase`` does (HF's ``Lowercase``)."""

    kind: ClassVar[str] = "Lowercase"
    __slots__ = ()


class StripAccents(Stage):
    """Combining marks dropped (HF's ``StripAccents``, usually after NFD)."""

    kind: ClassVar[str] = "StripAccents"
    __slots__ = ()


class Strip(Stage):
    """Rust's white space trimmed from the left and/or right end (HF's ``Strip``)."""

    kind: ClassVar[str] = "Strip"
    FIELDS: ClassVar[dict] = {"left": bool, "right": bool}
    DEFAULTS: ClassVar[dict] = {"left": True, "right": True}
    __slots__ = tuple(FIELDS)
    left: bool
    right: bool


class Replace(Stage):
    """Every match of ``pattern`` (a literal string, or a regex with ``regex``) replaced by
    ``content``, taken literally (HF's ``Replace``)."""

    kind: ClassVar[str] = "Replace"
    FIELDS: ClassVar[dict] = {"pattern": str, "content": str, "regex": bool}
    DEFAULTS: ClassVar[dict] = {"regex": False}
    __slots__ = tuple(FIELDS)
    pattern: str
    content: str
    regex: bool


class Prepend(Stage):
    """``prepend`` put before non-empty text (HF's ``Prepend``)."""

    kind: ClassVar[str] = "Prepend"
    FIELDS: ClassVar[dict] = {"prepend": str}
    __slots__ = tuple(FIELDS)
    prepend: str


class PrefixSpace(Stage):
    """A space before non-empty text that does not start with one (ByteLevel's
    ``add_prefix_space``)."""

    kind: ClassVar[str] = "PrefixSpace"
    __slots__ = ()


class BertNormalizer(Stage):
    """HF's ``BertNormalizer``, its four steps in this order: ``clean_text`` (control characters
    and U+FFFD dropped, white space made a space), ``handle_chinese_chars`` (a space each side
    of a CJK ideograph), ``strip_accents`` (NFD, then combining marks dropped) and
    ``lowercase``. A file's ``strip_accents: null`` follows ``lowercase``; the loaders resolve it.
    """

    kind: ClassVar[str] = "BertNormalizer"
    FIELDS: ClassVar[dict] = {"clean_text": bool, "handle_chinese_chars": bool, "strip_accents": bool,
                              "lowercase": bool}
    DEFAULTS: ClassVar[dict] = {"clean_text": True, "handle_chinese_chars": True, "strip_accents": True,
                                "lowercase": True}
    __slots__ = tuple(FIELDS)
    clean_text: bool
    handle_chinese_chars: bool
    strip_accents: bool
    lowercase: bool


class Precompiled(Stage):
    """A SentencePiece precompiled character map (``nmt_nfkc``, ``nfkc_cf``, a model's own
    rules): the longest prefix of the text the map holds is replaced by its output, as HF's
    ``Precompiled`` normalizer runs it. ``charsmap`` is the map's bytes in base64 (as
    tokenizer.json writes them); an empty map changes nothing."""

    kind: ClassVar[str] = "Precompiled"
    FIELDS: ClassVar[dict] = {"charsmap": str}
    __slots__ = tuple(FIELDS)
    charsmap: str

    def _check(self) -> None:
        _check_base64(self.charsmap)


def _check_base64(text: str) -> None:
    import base64
    import binascii

    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a character map is its bytes in base64") from None


#: The kinds a :class:`Sequence` holds.
STEP_KINDS = (Nfc, Nfd, Nfkc, Nfkd, Lowercase, StripAccents, Strip, Replace, Prepend, PrefixSpace, BertNormalizer,
              Precompiled)


class Sequence(Stage):
    """HF's normalizers in order, each step's alignment carried through (for offsets)."""

    kind: ClassVar[str] = "Sequence"
    FIELDS: ClassVar[dict] = {"normalizers": ["normalizer"]}
    __slots__ = tuple(FIELDS)
    normalizers: tuple

    def _check(self) -> None:
        if not isinstance(self.normalizers, tuple) or not all(isinstance(s, STEP_KINDS) for s in self.normalizers):
            raise ValueError(f"a Sequence holds a tuple of steps of the kinds "
                             f"{', '.join(k.kind for k in STEP_KINDS)}")


class SentencePieceNormalizer(Stage):
    """SentencePiece's ``Normalizer::Normalize``: the character map ``charsmap`` (base64, as
    :class:`Precompiled`; empty: the identity), then the spaces (the normalizer spec's flags,
    with the proto's defaults); the model's ``user_defined`` pieces, matched first at each
    place (the longest), are copied unmapped."""

    kind: ClassVar[str] = "SentencePiece"
    FIELDS: ClassVar[dict] = {"add_dummy_prefix": bool, "remove_extra_whitespaces": bool,
                              "escape_whitespaces": bool, "treat_whitespace_as_suffix": bool, "charsmap": str,
                              "user_defined": "strings"}
    DEFAULTS: ClassVar[dict] = {"add_dummy_prefix": True, "remove_extra_whitespaces": True,
                                "escape_whitespaces": True, "treat_whitespace_as_suffix": False, "charsmap": "",
                                "user_defined": ()}
    __slots__ = tuple(FIELDS)
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool
    charsmap: str
    user_defined: tuple

    def _check(self) -> None:
        _check_base64(self.charsmap)


class Metaspace(Stage):
    """HF's ``Metaspace`` with ``split: false`` after the normalizer ``before``: every space
    becomes ``replacement``, which is put before the text for ``prepend_scheme`` ``"always"``,
    only before the text's first stretch for ``"first"``, never for ``"never"``.

    With ``whitespace_split``, HF's ``WhitespaceSplit`` pre-tokenizer runs before it (T5's
    files), and Metaspace runs on each word (between runs of white space, Rust's
    ``char::is_whitespace``): with ``"always"`` each run of white space is dropped and every
    word that does not start with ``replacement`` gets one before it; a spanner that cuts
    before every ``replacement`` (:class:`~wordsplit.spec.SentencePieceSplit`
    ``metaspace_split``) then gives HF's words (its Metaspace's ``split: true``). With
    ``"first"``, ``"never"``, or ``keep_white_space``, the white space is kept for the spanner,
    a split program of ``WhitespaceSplit``'s step then (HF's ``split: true``) a cut before
    every ``replacement``, and ``replacement`` goes before the words HF prepends to: every one
    for ``"always"``, for ``"first"`` only one whose first character comes from the input's
    first (HF's word at offset 0), none for ``"never"``. ``keep_white_space`` (with
    ``"always"``: HF's Metaspace with ``split: false``, whose spanner is ``WhitespaceSplit``
    alone, so that a word's own ``replacement`` cuts nothing) needs ``whitespace_split``.

    >>> Metaspace(whitespace_split=True).to_json()["whitespace_split"]
    True
    >>> Metaspace(whitespace_split=True, keep_white_space=True).keeps_white_space
    True
    """

    kind: ClassVar[str] = "Metaspace"
    FIELDS: ClassVar[dict] = {"replacement": str, "prepend_scheme": str, "before": "normalizer",
                              "whitespace_split": bool, "keep_white_space": bool}
    DEFAULTS: ClassVar[dict] = {"replacement": "\u2581", "prepend_scheme": "always", "before": NoNormalizer(),
                                "whitespace_split": False, "keep_white_space": False}
    __slots__ = tuple(FIELDS)
    replacement: str
    prepend_scheme: str
    before: Stage
    whitespace_split: bool
    keep_white_space: bool

    def _check(self) -> None:
        if self.prepend_scheme not in ("first", "always", "never") or len(self.replacement) != 1:
            raise ValueError("prepend_scheme is 'first', 'always' or 'never'; replacement one character")
        if isinstance(self.before, (Metaspace, SentencePieceNormalizer)):
            raise ValueError("Metaspace runs after an HF normalizer, not after another space handler")
        if self.keep_white_space and not self.whitespace_split:
            raise ValueError("keep_white_space needs whitespace_split (without it no white space is dropped)")

    @property
    def keeps_white_space(self) -> bool:
        """Whether the normalized text keeps the white space between the words (for a spanner
        that drops it): after ``WhitespaceSplit``, unless the words are joined (``"always"``
        without ``keep_white_space``)."""
        return self.whitespace_split and (self.prepend_scheme != "always" or self.keep_white_space)


class LlamaCppBertNormalizer(Stage):
    """The characters of llama.cpp's WordPiece preprocessing (``llm_tokenizer_wpm``), before its
    split (:class:`~wordsplit.spec.LlamaCppWordPieceSplit`), with llama.cpp's own character
    tables (Unicode 15.1 categories): with ``strip_accents`` each code point becomes the first
    code point of its NFD (``é`` → ``e``, a Hangul syllable → its leading jamo) and combining
    marks are dropped; NUL, U+FFFD and control characters (categories Cc, Cf, Co, Cs; white
    space stays for the split) are dropped; with ``lowercase`` each code point becomes its
    simple lowercase. GGUF's ``tokenizer.ggml.normalizer.lowercase`` and ``strip_accents``
    (which follows ``lowercase`` when absent)."""

    kind: ClassVar[str] = "LlamaCppBert"
    FIELDS: ClassVar[dict] = {"lowercase": bool, "strip_accents": bool}
    DEFAULTS: ClassVar[dict] = {"lowercase": True, "strip_accents": True}
    __slots__ = tuple(FIELDS)
    lowercase: bool
    strip_accents: bool


class LlamaCppUnigramNormalizer(Stage):
    """llama.cpp's normalizer of a Unigram vocabulary (``llm_tokenizer_ugm``): the character map
    ``charsmap`` (base64, as :class:`Precompiled`; empty: the identity) replaces the longest
    key at each place, as ``sentencepiece`` does; then each space (U+0020 of the mapped text)
    becomes ``▁``, with ``add_space_prefix`` one ``▁`` before the first character that is no
    space, and with ``remove_extra_whitespaces`` the spaces are dropped and one ``▁`` is put
    before every run of other characters (the first too). GGUF's
    ``tokenizer.ggml.add_space_prefix`` and ``remove_extra_whitespaces`` (both false when
    absent) and ``precompiled_charsmap``."""

    kind: ClassVar[str] = "LlamaCppUnigram"
    FIELDS: ClassVar[dict] = {"add_space_prefix": bool, "remove_extra_whitespaces": bool, "charsmap": str}
    DEFAULTS: ClassVar[dict] = {"add_space_prefix": False, "remove_extra_whitespaces": False, "charsmap": ""}
    __slots__ = tuple(FIELDS)
    add_space_prefix: bool
    remove_extra_whitespaces: bool
    charsmap: str

    def _check(self) -> None:
        _check_base64(self.charsmap)


class PluginNormalizer(Stage):
    """The function registered under ``name`` (:func:`~wordsplit.normalizers.register_normalizer`):
    a pickled or cached vocabulary finds it again by importing the module that registers it."""

    kind: ClassVar[str] = "Plugin"
    FIELDS: ClassVar[dict] = {"name": str}
    __slots__ = tuple(FIELDS)
    name: str


Normalizer = Union[NoNormalizer, Nfc, Nfd, Nfkc, Nfkd, Lowercase, StripAccents, Strip, Replace, Prepend,
                   PrefixSpace, BertNormalizer, Precompiled, Sequence, SentencePieceNormalizer, Metaspace,
                   LlamaCppBertNormalizer, LlamaCppUnigramNormalizer, PluginNormalizer]

NORMALIZER_KINDS = family("normalizer", NoNormalizer, *STEP_KINDS, Sequence, SentencePieceNormalizer, Metaspace,
                          LlamaCppBertNormalizer, LlamaCppUnigramNormalizer, PluginNormalizer)

#: The built-in normalizers a vocabulary may name by a plain name.
_BY_NAME = {"none": NoNormalizer(), "nfc": Nfc(), "nfd": Nfd(), "nfkc": Nfkc(), "nfkd": Nfkd()}


def normalizer_name(stage: Stage) -> str:
    """How messages and listings name a normalizer stage: a plain name (``"none"``, ``"nfc"``),
    a plug-in's registered name, or the kind (``"Sequence"``, ``"SentencePiece"``...).

    >>> normalizer_name(Nfc()), normalizer_name(PluginNormalizer("casefold")), normalizer_name(Sequence(()))
    ('nfc', 'casefold', 'Sequence')
    """
    if isinstance(stage, PluginNormalizer):
        return stage.name
    return next((name for name, plain in _BY_NAME.items() if plain == stage), stage.kind)


def normalizer_from_name(name: str) -> Stage:
    """The normalizer a plain name means: ``"none"``, a Unicode form (``"nfc"``...), else the
    plug-in registered under it."""
    return _BY_NAME.get(name) or PluginNormalizer(name)
