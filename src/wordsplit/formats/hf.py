"""HuggingFace byte-level BPE files: ``tokenizer.json``, and ``vocab.json`` + ``merges.txt``
(+ ``tokenizer_config.json``), which also reads GPT-2's ``encoder.json`` + ``vocab.bpe``.

Every reader checks what it parses and raises :class:`VocabFormatError` naming the file and
the entry, or :class:`UnsupportedTokenizerError` naming the construct wordsplit does not
implement.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import UnsupportedTokenizerError, VocabFormatError
from .._registered import REGISTERED
from ..patterns import GPT2_ORIGINAL_PATTERN, GPT2_PATTERN
from ..registered import tokenizer_classes
from ..normalizer_programs import checked_step as checked_normalizer_step, normalizer_program
from ..registry import NORMALIZERS, SPANNERS
from ..spec import NoNormalizer, Nfc, Nfd, Nfkc, Nfkd, PipelineSpec, RegexSplit, Stage, normalizer_from_name
from ..split_programs import PREFIX_SPACE_STEP, checked_step, split_program
from ..vocab import WHITE_SPACE, Vocab, normalized_contents, second_pass_normalizes
from .bytelevel import token_bytes
from .hf_sentencepiece import is_sentencepiece_style, read_hf_sentencepiece
from .hf_character_bpe import is_character_bpe, read_hf_character_bpe, read_hf_metaspace_bpe
from .hf_word_models import WORD_MODELS, read_hf_word_model
from .files import file_stem, read_file
from .merges import merges_are_rank_ordered, pair_ranked_merges



def _json(data: bytes, source: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabFormatError(f"{source}: not valid JSON ({exc})") from None
    except RecursionError:
        # json's decoder recurses per nesting level; no tokenizer file nests more than a few.
        raise VocabFormatError(f"{source}: JSON nested too deeply to be a tokenizer file") from None


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _object(value: Any, what: str, source: str) -> dict:
    """``value`` if it is a JSON object, else a VocabFormatError saying what ``what`` is instead."""
    if not isinstance(value, dict):
        raise VocabFormatError(f"{source}: {what} must be a JSON object, not {_json_type(value)}")
    return value


def _byte_level_ranks(vocab: Mapping[str, Any], source: str,
                      literals: Mapping[str, int]) -> tuple[dict[bytes, int], dict[bytes, int], list[int]]:
    """``{byte-level token text: id}`` → ``({token bytes: id}, set aside, unreachable ids)``.

    An entry that is not byte-level text is no BPE token (no byte-level word spells it, so HF
    never makes it); when an added token of the same text and id names it, that token is how
    text reaches it, else its id only counts towards ``n_vocab`` (and does not decode).

    An entry that an added token also names (the same text and id, as HF gives it) is a BPE
    token like any other, which merges may make; but one longer than a byte whose bytes are
    the added token's own text is set aside: if no merge makes it, only the added token ever
    reaches that id, so the Vocab is the same without it (GPT-2's ``<|endoftext|>``, whose
    tiktoken form has it as a special token only). :func:`_bpe_vocab` puts back those a merge
    makes, and all of them under ``ignore_merges``.
    """
    ranks: dict[bytes, int] = {}
    aside: dict[bytes, int] = {}
    unreachable: list[int] = []
    for text, i in vocab.items():
        if type(i) is not int:  # (bool is an int subclass, and no id)
            raise VocabFormatError(f"{source}: vocab entry {text!r} has the id {i!r}; ids are non-negative integers")
        piece = token_bytes(text)
        if piece is None:
            # Text that no byte-level word spells (allenai's OLMo files list runs of plain
            # spaces): BPE never makes it, as in HF; an added token of that text gives its id.
            if literals.get(text) != i:
                unreachable.append(i)
            continue
        if piece in ranks or piece in aside:
            raise VocabFormatError(f"{source}: vocab entries {text!r} and id {ranks.get(piece, aside.get(piece))} "
                                   "spell the same bytes")
        if literals.get(text) == i and len(piece) > 1 and piece == text.encode("utf-8"):
            aside[piece] = i
        else:
            ranks[piece] = i
    return ranks, aside, unreachable


def _merge_pairs(merges: Any, source: str) -> list[tuple[bytes, bytes]]:
    """Merges as ``"a b"`` strings or ``["a", "b"]`` pairs → byte pairs."""
    if not isinstance(merges, list):
        raise VocabFormatError(f"{source}: 'merges' must be a list")
    pairs = []
    for rank, merge in enumerate(merges):
        if isinstance(merge, str):
            parts = merge.split(" ")
        elif isinstance(merge, list):
            parts = merge
        else:
            parts = []
        left = token_bytes(parts[0]) if len(parts) == 2 and isinstance(parts[0], str) else None
        right = token_bytes(parts[1]) if len(parts) == 2 and isinstance(parts[1], str) else None
        if left is None or right is None:
            raise VocabFormatError(f"{source}: merge #{rank} {merge!r} is not a pair of byte-level tokens")
        pairs.append((left, right))
    return pairs


# The tokenizer.json normalizers wordsplit runs (normalizers.py has HF's semantics for each).
NORMALIZER_TYPES = ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "StripAccents", "Replace", "Prepend",
                    "BertNormalizer")
_NAMED_FORMS = {"NFC": Nfc(), "NFD": Nfd(), "NFKC": Nfkc(), "NFKD": Nfkd()}


def _normalizer_steps(spec: Any, source: str, depth: int = 0) -> list[dict]:
    """A ``normalizer`` (a Sequence flattened, since a Sequence runs its members in order)."""
    _object(spec, "a normalizer", source)
    kind = spec.get("type")
    if kind == "Sequence":
        steps = spec.get("normalizers", [])
        if not isinstance(steps, list) or depth > 16:
            raise VocabFormatError(f"{source}: normalizer Sequence needs an array 'normalizers'")
        return [step for member in steps for step in _normalizer_steps(member, source, depth + 1)]
    if kind not in NORMALIZER_TYPES:
        raise UnsupportedTokenizerError(
            f"{source}: normalizer {kind!r} is not supported (supported: {', '.join(NORMALIZER_TYPES)} and Sequence)"
        )
    return [dict(spec)]


def _normalizer(spec: Any, source: str, prefix_space: bool = False) -> Stage:
    """The vocabulary's normalizer stage: none, a single Unicode form (native on both
    backends), or a :class:`~wordsplit.spec.Sequence` of steps (HF's alignment carried through).
    ``prefix_space``: ByteLevel's add_prefix_space, run after the normalizer (see :func:`_pattern`)."""
    steps = [] if spec is None else _normalizer_steps(spec, source)
    if prefix_space:
        steps.append({"type": "PrefixSpace"})
    if not steps:
        return NoNormalizer()
    if len(steps) == 1 and steps[0]["type"] in _NAMED_FORMS:
        return _NAMED_FORMS[steps[0]["type"]]
    if len(steps) == 1 and steps[0]["type"] == "BertNormalizer":  # the stage itself, as HF has it
        try:
            return checked_normalizer_step(steps[0])
        except VocabFormatError as exc:
            raise VocabFormatError(f"{source}: {exc}") from None
    try:
        program = normalizer_program(steps)
        NORMALIZERS.for_stage(program)  # built now: a bad Replace regex fails at load, naming the file
    except (VocabFormatError, UnsupportedTokenizerError) as exc:
        raise type(exc)(f"{source}: {exc}") from None
    return program


# HF's Digits splits on Rust's char::is_numeric (General_Category N of the Unicode the Rust
# that built tokenizers knows: 17.0 for 0.23.3): the Unicode 16.0 class plus the 13 numbers
# 17.0 added (Tolong Siki digits, Tangut numbers). tests/test_hf_json.py checks every code point.
DIGIT_CLASS = r"[\p{N}\x{11DE0}-\x{11DE9}\x{16FF4}-\x{16FF6}]"


def punctuation_class() -> str:
    """The regex class of HF's ``Punctuation``: ASCII punctuation, plus General_Category P as
    the crate ``unicode_categories`` 0.1.1 has it (``_hf_char_data``)."""
    from .._hf_char_data import PUNCTUATION_RANGES

    ranges = [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E), *PUNCTUATION_RANGES]
    return "[" + "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges) + "]"


# Oniguruma's Unicode \w (HF's Whitespace pre-tokenizer runs r"\w+|[^\w\s]+" on it):
# Alphabetic | Mark | Decimal_Number | Connector_Punctuation | Join_Control. Beyond \p{L},
# \p{M}, \p{Nd} and \p{Nl}, Alphabetic holds the circled, squared and negative squared Latin
# letters (So); Connector_Punctuation is the 10 code points listed. tests/test_hf_dropping.py
# checks every code point against HF.
WORD_CLASS_INNER = (
    r"\p{L}\p{M}\p{Nd}\p{Nl}_\x{203F}\x{2040}\x{2054}\x{FE33}\x{FE34}\x{FE4D}-\x{FE4F}\x{FF3F}"
    r"\x{200C}\x{200D}\x{24B6}-\x{24E9}\x{1F130}-\x{1F149}\x{1F150}-\x{1F169}\x{1F170}-\x{1F189}"
)
WHITESPACE_PATTERN = f"[{WORD_CLASS_INNER}]+|[^{WORD_CLASS_INNER}\\s]+"


#: HF's split at char::is_whitespace, which drops it (WhitespaceSplit, BertPreTokenizer's first step).
WHITESPACE_STEP = {"pattern": r"\s", "behavior": "Removed", "invert": False}


def _flat_pre_tokenizers(spec: dict, source: str, depth: int = 0) -> list[dict]:
    if spec.get("type") != "Sequence":
        return [spec]
    steps = spec.get("pretokenizers")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps) or depth > 16:
        raise VocabFormatError(f"{source}: pre_tokenizer Sequence needs a list 'pretokenizers'")
    return [flat for step in steps for flat in _flat_pre_tokenizers(step, source, depth + 1)]


def _step_of(split: dict, source: str) -> dict[str, Any]:
    """A tokenizer.json ``Split`` pre-tokenizer as a program step (its ``String`` pattern escaped).

    Raises:
        VocabFormatError: a malformed Split.
    """
    pattern = split.get("pattern")
    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str) and len(pattern) == 1:
        regex_text = pattern["Regex"]
    elif isinstance(pattern, dict) and isinstance(pattern.get("String"), str) and len(pattern) == 1:
        # HF escapes a String pattern into a regex (regex::escape); spell each character as a
        # code point escape, which every engine reads literally.
        regex_text = "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in pattern["String"])
    else:
        raise VocabFormatError(
            f"{source}: Split needs a pattern {{'Regex': ...}} or {{'String': ...}}, got {pattern!r}"
        )
    return checked_step(
        {"pattern": regex_text, "behavior": split.get("behavior"), "invert": split.get("invert", False)}, source
    )


def _split_step(spec: dict, source: str) -> dict[str, Any]:
    """A pre-tokenizer before ByteLevel as a split-program step (HF's char-predicate splits are
    a Split on a one-character class: each matching character is one match)."""
    kind = spec.get("type")
    if kind == "Split":
        return _step_of(spec, source)
    if kind == "Digits":
        individual = spec.get("individual_digits", False)
        return {"pattern": DIGIT_CLASS, "behavior": "Isolated" if individual else "Contiguous", "invert": False}
    if kind == "Punctuation":
        behavior = spec.get("behavior", "Isolated")
        return _step_of({"pattern": {"Regex": punctuation_class()}, "behavior": behavior, "invert": False}, source)
    if kind == "Whitespace":
        # HF: Split(Invert(r"\w+|[^\w\s]+"), Removed): the matches are kept, the rest deleted.
        return {"pattern": WHITESPACE_PATTERN, "behavior": "Removed", "invert": True}
    if kind == "WhitespaceSplit":
        # HF: Split(char::is_whitespace, Removed): Rust's White_Space, the \s of the tables.
        return dict(WHITESPACE_STEP)
    raise UnsupportedTokenizerError(
        f"{source}: pre_tokenizer {kind!r} is not supported (supported: Split, Digits, Punctuation, Whitespace, "
        "WhitespaceSplit, then ByteLevel)"
    )


def _pattern(spec: Any, source: str, prefix_in_program: bool = False) -> tuple[Stage, bool]:
    """The vocabulary's spanner stage for a ``pre_tokenizer``, and whether ByteLevel's
    ``add_prefix_space`` is the normalizer's last step (the caller makes it so).

    The pre-tokenizer is a ByteLevel, alone or last in a (possibly nested) Sequence after
    Split, Digits, Punctuation, Whitespace and WhitespaceSplit steps. ByteLevel's own regex is
    GPT-2's (tiktoken's spelling, proven equal). The other steps keep HF's semantics (the text
    between matches stays, behaviors, invert) as a split program (:mod:`~wordsplit.split_programs`,
    run by :mod:`~wordsplit.spanners.hf_split`), except one Isolated Split whose pattern is one the
    scanners are proven for: such a pattern matches every character, so HF's pieces are its
    matches, and the plain pattern lets the native scanner run. ``trim_offsets`` changes offsets
    only, so it is accepted and ignored.

    ``Whitespace``, ``WhitespaceSplit`` and ``Removed`` behaviors delete text: such a program
    *drops text* (the spanner gives the engines spans: :class:`~wordsplit.protocols.DroppingSpanner`).

    ``add_prefix_space`` puts a space before each piece ByteLevel receives that does not start
    with one. As the first pre-tokenizer it receives the normalized text of each stretch
    between added tokens, which is what a normalizer sees, so it runs as the normalizer's last
    step; after other steps it is a program step (``PREFIX_SPACE_STEP``) before ByteLevel's
    regex, and the program drops text (its pieces hold a space the text does not). So it is
    too with ``prefix_in_program``, which the caller sets when the normalized text of each
    stretch is searched for ``normalized`` added tokens: then each piece that search leaves
    gets its own space, as in HF.
    """
    from ..native_names import SCANNER_PATTERNS

    if not isinstance(spec, dict):
        raise UnsupportedTokenizerError(f"{source}: a tokenizer without pre_tokenizer is not supported")
    steps = _flat_pre_tokenizers(spec, source)
    kinds = [step.get("type") for step in steps]
    if not kinds or kinds[-1] != "ByteLevel" or "ByteLevel" in kinds[:-1]:
        for step in steps:
            if step.get("type") != "ByteLevel":
                _split_step(step, source)  # an unsupported type is named first
        raise UnsupportedTokenizerError(
            f"{source}: pre_tokenizer sequence {kinds} is not supported (only Split, Digits, Punctuation, "
            "Whitespace and WhitespaceSplit steps, then one ByteLevel)"
        )
    byte_level = steps[-1]
    program = [_split_step(step, source) for step in steps[:-1]]
    prefix_space = bool(byte_level.get("add_prefix_space", False))
    if prefix_space and (program or prefix_in_program):
        program.append(dict(PREFIX_SPACE_STEP))  # ByteLevel prepends, then its regex cuts
        prefix_space = False  # (not the normalizer's step)
    use_regex = byte_level.get("use_regex", True)
    if spec.get("type") == "ByteLevel" and not program:
        return (RegexSplit(GPT2_PATTERN) if use_regex else split_program([])), prefix_space
    if use_regex:  # ByteLevel's regex splits each piece once more
        program.append({"pattern": GPT2_ORIGINAL_PATTERN, "behavior": "Isolated", "invert": False})
    scanned = {p for patterns in SCANNER_PATTERNS.values() for p in patterns}
    if len(program) == 1 and program[0].get("behavior") == "Isolated" and program[0]["pattern"] in scanned:
        # (Isolated ignores invert: it keeps matches and gaps alike)
        return RegexSplit(program[0]["pattern"]), prefix_space
    typed = split_program(program)
    _check_compiles(typed, source)
    return typed, prefix_space


def _check_compiles(program: Stage, source: str) -> None:
    """Compile a split program now, so that a pattern wordsplit cannot run fails at load, naming
    the file, rather than when a tokenizer is built from it."""
    try:
        SPANNERS.get("hf-split")(program)
    except (VocabFormatError, UnsupportedTokenizerError) as exc:
        raise type(exc)(f"{source}: {exc}") from None


def _check_model(model: Mapping[str, Any], source: str) -> None:
    kind = model.get("type", "BPE")
    if kind != "BPE":
        raise UnsupportedTokenizerError(f"{source}: model type {kind!r} is not supported (only byte-level BPE)")
    for key, default in (("dropout", None), ("continuing_subword_prefix", None), ("end_of_word_suffix", None)):
        value = model.get(key, default)
        if value not in (None, "", 0, 0.0):
            raise UnsupportedTokenizerError(f"{source}: BPE {key}={value!r} is not supported")
    if model.get("byte_fallback"):
        raise UnsupportedTokenizerError(f"{source}: BPE byte_fallback is not supported")


def _added_tokens(entries: Any, source: str) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """``added_tokens`` → (special, non-special) text → id, and the HF flags of those that have
    any (:attr:`Vocab.literal_flags`)."""
    from ..vocab import LSTRIP, NORMALIZED, RSTRIP, SINGLE_WORD

    special: dict[str, int] = {}
    added: dict[str, int] = {}
    flags: dict[str, int] = {}
    if entries is not None and not isinstance(entries, list):
        raise VocabFormatError(f"{source}: 'added_tokens' must be an array, not {_json_type(entries)}")
    for entry in entries or []:
        _object(entry, "an added token", source)
        if not isinstance(entry.get("content"), str) or type(entry.get("id")) is not int:
            raise VocabFormatError(f"{source}: added token {entry!r} needs a string 'content' and an integer 'id'")
        content = entry["content"]
        (special if entry.get("special") else added)[content] = entry["id"]
        # HF's defaults: a token without "normalized" is normalized unless it is special.
        bits = sum(bit for key, bit, default in (("lstrip", LSTRIP, False), ("rstrip", RSTRIP, False),
                                                  ("single_word", SINGLE_WORD, False),
                                                  ("normalized", NORMALIZED, not entry.get("special")))
                   if entry.get(key, default))
        flags.pop(content, None)
        if bits:
            flags[content] = bits
    return special, added, flags


def _hf_added_ids(entries: list, special: dict[str, int], added: dict[str, int], vocab: Mapping[str, Any],
                  source: str) -> tuple[dict[str, int], dict[str, int]]:
    """The ids HF gives the added tokens of a tokenizer.json, which are not the ids it lists.

    HF adds the tokens in their order: one whose content is a key of the model's vocab gets
    that entry's id, any other the next id from the vocab's size up (after the largest added
    id at or above it). A file HF wrote lists exactly these ids; an edited one may not.

    >>> _hf_added_ids([{"content": "<a>"}, {"content": "b"}], {"<a>": 9}, {"b": 7}, {"a": 0, "b": 1}, "t")
    ({'<a>': 2}, {'b': 1})
    """
    size = len(vocab)
    ids: dict[str, int] = {}
    for entry in entries:
        content = entry["content"]
        if content in ids:
            continue
        if content in vocab:
            i = vocab[content]
            if type(i) is not int:  # (bool is an int subclass, and no id)
                raise VocabFormatError(
                    f"{source}: vocab entry {content!r} has the id {i!r}; ids are non-negative integers"
                )
            ids[content] = i
            continue
        top = max(ids.values(), default=-1)
        new = top + 1 if top >= size else size
        ids[content] = new
    fresh = {i: content for content, i in ids.items() if content not in vocab}
    # Only a vocab with gaps in its ids has one at or above its size.
    if fresh and any(type(i) is int and i >= size for i in vocab.values()):
        for text, i in vocab.items():
            if type(i) is int and i in fresh:
                # HF would then read that id as the added token wherever the BPE makes it.
                raise UnsupportedTokenizerError(
                    f"{source}: HF gives the added token {fresh[i]!r} the id {i} (the next one after the "
                    f"{size} vocab entries), which the vocab entry {text!r} also has; renumber the vocab "
                    "so that its ids run from 0 without gaps, or list the token in model.vocab"
                )
    return ({text: ids[text] for text in special}, {text: ids[text] for text in added})


def _check_added_tokens(literals: list[str], flags: Mapping[str, int], normalizer: str, source: str) -> None:
    """Refuse the added tokens HF does not tokenize deterministically.

    ``normalizer``: HF's normalizer (without ByteLevel's ``add_prefix_space``). When it
    changes text, the ``normalized: true`` tokens are found by their normalized contents in the
    normalized text (:class:`~wordsplit.specials.LiteralScan`): a content it makes empty, or two
    it makes the same, are refused (HF's matcher then cuts text at arbitrary places, or picks
    one of the two at random in each process). In each pass, HF fails ("AddedVocabulary bad
    split") when an ``lstrip`` token made only of whitespace matches inside the whitespace an
    ``rstrip`` token took; a file where that can happen is refused too.
    """
    from ..vocab import LSTRIP, NORMALIZED, RSTRIP

    contents = {literal: literal for literal in literals}
    if second_pass_normalizes(normalizer, flags):
        try:
            contents.update(normalized_contents(literals, flags, NORMALIZERS.for_stage(normalizer)))
        except (VocabFormatError, UnsupportedTokenizerError) as exc:  # (the second: the normalizer's own)
            raise UnsupportedTokenizerError(f"{source}: {exc}") from None
    for group in (True, False):
        members = [t for t in literals if bool(flags.get(t, 0) & NORMALIZED) is group]
        stripper = next((t for t in members if flags.get(t, 0) & RSTRIP), None)
        spaces = next((t for t in members if flags.get(t, 0) & (LSTRIP | RSTRIP) == LSTRIP
                       and all(c in WHITE_SPACE for c in contents[t])), None)
        if stripper is not None and spaces is not None:
            raise UnsupportedTokenizerError(
                f"{source}: added token {stripper!r} has rstrip=true and {spaces!r} is whitespace with lstrip=true; "
                "HF fails on text where the second follows the first (its match inside the whitespace the first "
                "took starts after its end); set lstrip=false on the second, or remove one"
            )


def _bpe_vocab(
    *, vocab_table, merges, special, added, pattern, normalizer, ignore_merges, source, name, eos_token=None,
    unk_token=None, literal_flags=None,
    fuse_unk=False,
) -> Vocab:
    """The shared tail of the HF readers: byte-level ranks + merges → Vocab. A byte with no
    token (:attr:`Vocab.missing_bytes`) is encoded as the model's ``unk_token`` (one per byte,
    or one per run with ``fuse_unk``), or dropped before merging when the model has none, as
    HF does."""
    literals = {**special, **added}
    ranks, aside, unreachable = _byte_level_ranks(vocab_table, source, literals)
    pairs = _merge_pairs(merges, source)
    if aside and ignore_merges:
        # HF then looks a whole word up in the vocab first, which can find such an entry in
        # text the added token did not take (single_word, or a special token not allowed).
        ranks.update(aside)
    elif aside:
        lengths = {len(piece) for piece in aside}
        for left, right in pairs:
            if len(left) + len(right) in lengths and left + right in aside:
                ranks[left + right] = aside[left + right]
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    # HF looks the unk token up in the model's vocab (BPE.merge_word), only when a character
    # is not in it; a byte-level vocabulary with every byte never uses it.
    unk_id = vocab_table.get(unk_token) if isinstance(unk_token, str) else None
    if missing and unk_token is not None:
        shown = ", ".join(f"0x{b:02X}" for b in missing[:8]) + (", ..." if len(missing) > 8 else "")
        if type(unk_id) is not int:
            raise VocabFormatError(
                f"{source}: the vocabulary has no token for {len(missing)} single byte(s) ({shown}) and the model's "
                f"unk_token {unk_token!r} is not in model.vocab (HF raises UnkTokenOutOfVocabulary on any text "
                "with such a byte); add the unk token to model.vocab, or remove unk_token to drop such bytes"
            )
        unk_bytes = token_bytes(unk_token)
        if unk_bytes is not None and any(unk_bytes in pair for pair in pairs):
            # HF merges over ids: an unk token that is part of a merge would merge with the
            # tokens beside it, while wordsplit cuts the piece at the unknown byte.
            raise UnsupportedTokenizerError(
                f"{source}: the unk_token {unk_token!r} is part of a merge; HF would merge an unknown byte's "
                "unk token with its neighbours, which wordsplit does not do"
            )
    eos = literals.get(eos_token) if eos_token else None
    rank_ordered = merges_are_rank_ordered(ranks, pairs)
    merge_table = None if rank_ordered else pair_ranked_merges(ranks, pairs, source)
    spanner = RegexSplit(pattern) if isinstance(pattern, str) else pattern
    normalizer = normalizer_from_name(normalizer) if isinstance(normalizer, str) else normalizer
    return Vocab(
        name=name, ranks=ranks, pipeline=PipelineSpec(spanner=spanner, normalizer=normalizer),
        special_tokens=special, added_tokens=added, merges=merge_table,
        whole_piece_lookup=rank_ordered or ignore_merges,
        eos_token_id=eos, source=source, literal_flags=literal_flags,
        unk_token_id=unk_id if type(unk_id) is int else None,
        fuse_unk=bool(fuse_unk),
        n_vocab=max([*ranks.values(), *literals.values(), *unreachable]) + 1 if unreachable else None,
    )


def model_type(model: Mapping[str, Any]) -> str:
    """A tokenizer.json model's type: its ``"type"``, or for a file without one (older HF
    versions wrote none) the one HF's untagged reading finds, by the fields each type has.

    >>> model_type({"vocab": {"a": 0}, "max_input_chars_per_word": 100}), model_type({"vocab": [["a", 0.0]]})
    ('WordPiece', 'Unigram')
    """
    if "type" in model:
        return model["type"]
    if "merges" in model:
        return "BPE"
    if isinstance(model.get("vocab"), list):
        return "Unigram"
    if "max_input_chars_per_word" in model or "continuing_subword_prefix" in model:
        return "WordPiece"
    return "WordLevel"


def read_hf_tokenizer_json(data: bytes, *, source: str = "tokenizer.json", name: str | None = None,
                           eos_token: str | None = None) -> Vocab:
    """Parse a HuggingFace ``tokenizer.json`` with a byte-level BPE model, or a SentencePiece-style
    one (:mod:`wordsplit.formats.hf_sentencepiece`).

    Raises:
        VocabFormatError: malformed JSON or entries.
        UnsupportedTokenizerError: WordPiece, Unigram, Metaspace, byte_fallback, dropout...
    """
    spec = _json(data, source)
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        raise VocabFormatError(f"{source}: no 'model' object; is this a tokenizer.json?")
    model = spec["model"] = {**spec["model"], "type": model_type(spec["model"])}
    if model["type"] in WORD_MODELS:  # BERT's WordPiece, WordLevel
        return read_hf_word_model(spec, source=source, name=name or file_stem(source), eos_token=eos_token)
    if model["type"] == "Unigram":  # T5, ALBERT, XLM-R, Marian...
        from .hf_unigram import read_hf_unigram

        return read_hf_unigram(spec, source=source, name=name or file_stem(source), eos_token=eos_token, data=data)
    if is_sentencepiece_style(spec, source):
        if model["type"] == "BPE" and not model.get("byte_fallback"):  # NLLB, mBART: an unknown piece
            return read_hf_metaspace_bpe(spec, source=source, name=name or file_stem(source), eos_token=eos_token)
        # Llama 2, Mistral, Gemma: BPE over characters, byte fallback
        return read_hf_sentencepiece(spec, source=source, name=name or file_stem(source), eos_token=eos_token)
    if model["type"] == "BPE" and is_character_bpe(spec):  # CLIP's </w>, a subword prefix, BPE over characters
        return read_hf_character_bpe(spec, source=source, name=name or file_stem(source), eos_token=eos_token)
    _check_model(model, source)
    decoder = spec.get("decoder")
    if decoder is not None and _object(decoder, "decoder", source).get("type") != "ByteLevel":
        raise UnsupportedTokenizerError(f"{source}: decoder {decoder.get('type')!r} is not supported (only ByteLevel)")
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    if not isinstance(model.get("vocab"), dict):
        raise VocabFormatError(f"{source}: model.vocab must be an object of token → id")
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, model["vocab"], source)
    normalizer = _normalizer(spec.get("normalizer"), source)
    _check_added_tokens([*special, *added], flags, normalizer, source)
    # With `normalized` tokens found in the normalized text, ByteLevel's add_prefix_space is
    # not the normalizer's last step: HF puts its space before each piece that search leaves.
    pattern, prefix_space = _pattern(spec.get("pre_tokenizer"), source,
                                     prefix_in_program=second_pass_normalizes(normalizer, flags))
    return _bpe_vocab(
        vocab_table=model["vocab"], merges=model.get("merges", []), special=special, added=added,
        pattern=pattern, normalizer=_normalizer(spec.get("normalizer"), source, prefix_space),
        ignore_merges=bool(model.get("ignore_merges")), source=source, name=name or file_stem(source),
        eos_token=eos_token, unk_token=model.get("unk_token"), literal_flags=flags,
        fuse_unk=model.get("fuse_unk"),
    )


def load_hf_tokenizer_json(path: str | os.PathLike, **kwargs: Any) -> Vocab:
    """Read a ``tokenizer.json`` file (optionally gzipped)."""
    path = Path(path)
    name = kwargs.pop("name", None) or (path.parent.name if file_stem(path) == "tokenizer" else file_stem(path))
    return read_hf_tokenizer_json(read_file(path), source=str(path), name=name, **kwargs)


# ---------------------------------------------------------------------------------------------
# vocab.json + merges.txt (+ tokenizer_config.json), and GPT-2's encoder.json + vocab.bpe.

# The slow HF tokenizer classes carry their split pattern and normalizer in code: class → (pattern, normalizer).
TOKENIZER_CLASS_FACTS: dict[str, tuple[str, str]] = tokenizer_classes(REGISTERED)


def read_merges_txt(data: bytes, *, source: str) -> list[str]:
    """The merge lines of ``merges.txt`` / ``vocab.bpe`` (the ``#version`` header skipped)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabFormatError(f"{source}: not UTF-8 ({exc})") from None
    return [line for line in text.split("\n") if line and not line.startswith("#version")]


def read_vocab_merges(
    vocab_json: bytes,
    merges_txt: bytes,
    *,
    tokenizer_config: bytes | None = None,
    source: str = "vocab.json",
    name: str | None = None,
    pattern: str | None = None,
    normalizer: str | None = None,
) -> Vocab:
    """Parse ``vocab.json`` + ``merges.txt``, with added tokens from ``tokenizer_config.json``.

    The pattern and normalizer come from the config's ``tokenizer_class`` (GPT2Tokenizer,
    Qwen2Tokenizer) unless given; without a config, GPT-2's. A ``<|endoftext|>`` entry of
    vocab.json that the config does not declare is GPT-2's special token.
    """
    vocab_table = _json(vocab_json, source)
    if not isinstance(vocab_table, dict):
        raise VocabFormatError(f"{source}: vocab.json must be an object of token → id")
    config = _json(tokenizer_config, source) if tokenizer_config else {}
    if not isinstance(config, dict):
        raise VocabFormatError(
            f"{source}: its tokenizer_config.json must be a JSON object (of settings such as "
            f"tokenizer_class and added_tokens_decoder), not {_json_type(config)}; correct the file, or "
            "save the tokenizer again with transformers' save_pretrained")
    special: dict[str, int] = {}
    added: dict[str, int] = {}
    decoder = config.get("added_tokens_decoder") or {}
    if not isinstance(decoder, dict):
        raise VocabFormatError(
            f"{source}: the added_tokens_decoder of its tokenizer_config.json must be an object of id → token, "
            f"not {_json_type(decoder)}; correct the file, or save the tokenizer again with transformers")
    for key, entry in decoder.items():
        content = entry.get("content") if isinstance(entry, dict) else None
        try:
            token_id = int(key)
        except ValueError:
            token_id = None
        if not isinstance(content, str) or token_id is None:
            raise VocabFormatError(
                f"{source}: bad added_tokens_decoder entry {key!r} in its tokenizer_config.json: each is "
                '"<id>": {"content": text, "special": bool}; correct it, or save the tokenizer again with '
                "transformers")
        (special if entry.get("special") else added)[content] = token_id
    if not config and "<|endoftext|>" in vocab_table:
        special["<|endoftext|>"] = vocab_table["<|endoftext|>"]
    # (The Rust reader's rules: a tokenizer_class or eos_token of another type names nothing.)
    tokenizer_class = config.get("tokenizer_class")
    class_pattern, class_normalizer = TOKENIZER_CLASS_FACTS.get(
        tokenizer_class if isinstance(tokenizer_class, str) else None, (GPT2_PATTERN, "none"))
    eos = config.get("eos_token")
    if isinstance(eos, dict):
        eos = eos.get("content")
    if not eos:
        eos = "<|endoftext|>" if "<|endoftext|>" in special else None
    elif not isinstance(eos, str):
        eos = None
    return _bpe_vocab(
        vocab_table=vocab_table, merges=read_merges_txt(merges_txt, source=source), special=special,
        added=added, pattern=pattern or class_pattern, normalizer=normalizer or class_normalizer,
        ignore_merges=False, source=source, name=name or file_stem(source), eos_token=eos,
    )


def load_vocab_merges(vocab_path, merges_path, tokenizer_config_path=None, **kwargs: Any) -> Vocab:
    """Read ``vocab.json`` + ``merges.txt`` (or ``encoder.json`` + ``vocab.bpe``) from disk."""
    config = read_file(tokenizer_config_path) if tokenizer_config_path else None
    return read_vocab_merges(
        read_file(vocab_path), read_file(merges_path), tokenizer_config=config, source=str(vocab_path), **kwargs
    )
