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
from ..patterns import GPT2_ORIGINAL_PATTERN, GPT2_PATTERN, QWEN2_PATTERN
from ..vocab import Vocab
from .bytelevel import token_bytes
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


def _byte_level_ranks(vocab: Mapping[str, Any], source: str, skip: Mapping[str, int]) -> dict[bytes, int]:
    """``{byte-level token text: id}`` → ``{token bytes: id}``; tokens in ``skip`` are added tokens."""
    ranks: dict[bytes, int] = {}
    for text, i in vocab.items():
        if type(i) is not int:  # (bool is an int subclass, and no id)
            raise VocabFormatError(f"{source}: vocab entry {text!r} has the id {i!r}; ids are non-negative integers")
        if skip.get(text) == i:
            continue
        piece = token_bytes(text)
        if piece is None:
            raise VocabFormatError(f"{source}: vocab entry {text!r} (id {i}) is not byte-level BPE text")
        if piece in ranks:
            raise VocabFormatError(f"{source}: vocab entries {text!r} and id {ranks[piece]} spell the same bytes")
        ranks[piece] = i
    return ranks


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


def _normalizer(spec: Any, source: str) -> str:
    if spec is None:
        return "none"
    kind = _object(spec, "normalizer", source).get("type")
    if kind == "NFC":
        return "nfc"
    steps = spec.get("normalizers", [])
    if not isinstance(steps, list):
        raise VocabFormatError(f"{source}: normalizer Sequence needs an array 'normalizers'")
    if kind == "Sequence" and [_object(n, "a normalizer", source).get("type") for n in steps] in ([], ["NFC"]):
        return "nfc" if spec["normalizers"] else "none"
    raise UnsupportedTokenizerError(f"{source}: normalizer {kind!r} is not supported (only NFC or none)")


def _check_byte_level(spec: Mapping[str, Any], what: str, source: str) -> None:
    if spec.get("add_prefix_space"):
        raise UnsupportedTokenizerError(f"{source}: {what} ByteLevel with add_prefix_space=true is not supported")


def _pattern(spec: Any, source: str) -> str:
    """The vocabulary's ``pattern`` for a ``pre_tokenizer``: ByteLevel, or Split steps then ByteLevel.

    ByteLevel's own regex is GPT-2's (tiktoken's spelling, proven equal). Split steps keep HF's
    semantics (the text between matches stays, behaviors, invert) as a split program
    (:mod:`~wordsplit.spanners.hf_split`), except one Isolated Split whose pattern is one the
    scanners are proven for: such a pattern matches every character, so HF's pieces are its
    matches, and the plain pattern lets the native scanner run.
    """
    from ..native_names import SCANNER_PATTERNS
    from ..spanners.hf_split import split_program, step_of

    if not isinstance(spec, dict):
        raise UnsupportedTokenizerError(f"{source}: a tokenizer without pre_tokenizer is not supported")
    kind = spec.get("type")
    if kind == "ByteLevel":
        _check_byte_level(spec, "pre_tokenizer", source)
        return GPT2_PATTERN if spec.get("use_regex", True) else split_program([])
    if kind != "Sequence":
        raise UnsupportedTokenizerError(f"{source}: pre_tokenizer {kind!r} is not supported")
    steps = spec.get("pretokenizers")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise VocabFormatError(f"{source}: pre_tokenizer Sequence needs a list 'pretokenizers'")
    kinds = [step.get("type") for step in steps]
    if not kinds or kinds[-1] != "ByteLevel" or any(k != "Split" for k in kinds[:-1]):
        raise UnsupportedTokenizerError(
            f"{source}: pre_tokenizer sequence {kinds} is not supported (only Split steps, then ByteLevel)"
        )
    byte_level = steps[-1]
    _check_byte_level(byte_level, "pre_tokenizer", source)
    program = [step_of(split, source) for split in steps[:-1]]
    if byte_level.get("use_regex", True):  # ByteLevel's regex splits each piece once more
        program.append({"pattern": GPT2_ORIGINAL_PATTERN, "behavior": "Isolated", "invert": False})
    scanned = {p for patterns in SCANNER_PATTERNS.values() for p in patterns}
    if len(program) == 1 and program[0]["behavior"] == "Isolated" and program[0]["pattern"] in scanned:
        return program[0]["pattern"]  # (Isolated ignores invert: it keeps matches and gaps alike)
    pattern = split_program(program)
    _check_compiles(pattern, source)
    return pattern


def _check_compiles(pattern: str, source: str) -> None:
    """Compile a split program now, so that a pattern wordsplit cannot run fails at load, naming
    the file, rather than when a tokenizer is built from it."""
    from ..spanners.hf_split import HFSplitSpanner

    try:
        HFSplitSpanner(pattern)
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


def _added_tokens(entries: Any, source: str) -> tuple[dict[str, int], dict[str, int]]:
    """``added_tokens`` → (special, non-special) text → id."""
    special: dict[str, int] = {}
    added: dict[str, int] = {}
    if entries is not None and not isinstance(entries, list):
        raise VocabFormatError(f"{source}: 'added_tokens' must be an array, not {_json_type(entries)}")
    for entry in entries or []:
        _object(entry, "an added token", source)
        if not isinstance(entry.get("content"), str) or type(entry.get("id")) is not int:
            raise VocabFormatError(f"{source}: added token {entry!r} needs a string 'content' and an integer 'id'")
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                raise UnsupportedTokenizerError(f"{source}: added token {entry.get('content')!r} uses {flag}=true")
        (special if entry.get("special") else added)[entry["content"]] = entry["id"]
    return special, added


def _bpe_vocab(
    *, vocab_table, merges, special, added, pattern, normalizer, ignore_merges, source, name, eos_token=None
) -> Vocab:
    """The shared tail of the HF readers: byte-level ranks + merges → Vocab."""
    literals = {**special, **added}
    ranks = _byte_level_ranks(vocab_table, source, literals)
    pairs = _merge_pairs(merges, source)
    rank_ordered = merges_are_rank_ordered(ranks, pairs)
    merge_table = None if rank_ordered else pair_ranked_merges(ranks, pairs, source)
    eos = literals.get(eos_token) if eos_token else None
    return Vocab(
        name=name, ranks=ranks, pattern=pattern, special_tokens=special, added_tokens=added,
        normalizer=normalizer, merges=merge_table, whole_piece_lookup=rank_ordered or ignore_merges,
        eos_token_id=eos, source=source,
    )


def read_hf_tokenizer_json(data: bytes, *, source: str = "tokenizer.json", name: str | None = None,
                           eos_token: str | None = None) -> Vocab:
    """Parse a HuggingFace ``tokenizer.json`` with a byte-level BPE model.

    Raises:
        VocabFormatError: malformed JSON or entries.
        UnsupportedTokenizerError: WordPiece, Unigram, Metaspace, byte_fallback, dropout...
    """
    spec = _json(data, source)
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        raise VocabFormatError(f"{source}: no 'model' object; is this a tokenizer.json?")
    model = spec["model"]
    _check_model(model, source)
    decoder = spec.get("decoder")
    if decoder is not None and _object(decoder, "decoder", source).get("type") != "ByteLevel":
        raise UnsupportedTokenizerError(f"{source}: decoder {decoder.get('type')!r} is not supported (only ByteLevel)")
    special, added = _added_tokens(spec.get("added_tokens"), source)
    if not isinstance(model.get("vocab"), dict):
        raise VocabFormatError(f"{source}: model.vocab must be an object of token → id")
    return _bpe_vocab(
        vocab_table=model["vocab"], merges=model.get("merges", []), special=special, added=added,
        pattern=_pattern(spec.get("pre_tokenizer"), source), normalizer=_normalizer(spec.get("normalizer"), source),
        ignore_merges=bool(model.get("ignore_merges")), source=source, name=name or file_stem(source),
        eos_token=eos_token,
    )


def load_hf_tokenizer_json(path: str | os.PathLike, **kwargs: Any) -> Vocab:
    """Read a ``tokenizer.json`` file (optionally gzipped)."""
    path = Path(path)
    name = kwargs.pop("name", None) or (path.parent.name if file_stem(path) == "tokenizer" else file_stem(path))
    return read_hf_tokenizer_json(read_file(path), source=str(path), name=name, **kwargs)


# ---------------------------------------------------------------------------------------------
# vocab.json + merges.txt (+ tokenizer_config.json), and GPT-2's encoder.json + vocab.bpe.

# The slow HF tokenizer classes carry their split pattern and normalizer in code.
TOKENIZER_CLASS_FACTS = {
    "GPT2Tokenizer": (GPT2_PATTERN, "none"),
    "Qwen2Tokenizer": (QWEN2_PATTERN, "nfc"),
}


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
    special: dict[str, int] = {}
    added: dict[str, int] = {}
    for key, entry in (config.get("added_tokens_decoder") or {}).items():
        try:
            (special if entry.get("special") else added)[entry["content"]] = int(key)
        except (KeyError, ValueError, AttributeError):
            raise VocabFormatError(f"{source}: bad added_tokens_decoder entry {key!r}") from None
    if not config and "<|endoftext|>" in vocab_table:
        special["<|endoftext|>"] = vocab_table["<|endoftext|>"]
    class_pattern, class_normalizer = TOKENIZER_CLASS_FACTS.get(config.get("tokenizer_class"), (GPT2_PATTERN, "none"))
    eos = config.get("eos_token")
    if isinstance(eos, dict):
        eos = eos.get("content")
    return _bpe_vocab(
        vocab_table=vocab_table, merges=read_merges_txt(merges_txt, source=source), special=special,
        added=added, pattern=pattern or class_pattern, normalizer=normalizer or class_normalizer,
        ignore_merges=False, source=source, name=name or file_stem(source),
        eos_token=eos or ("<|endoftext|>" if "<|endoftext|>" in special else None),
    )


def load_vocab_merges(vocab_path, merges_path, tokenizer_config_path=None, **kwargs: Any) -> Vocab:
    """Read ``vocab.json`` + ``merges.txt`` (or ``encoder.json`` + ``vocab.bpe``) from disk."""
    config = read_file(tokenizer_config_path) if tokenizer_config_path else None
    return read_vocab_merges(
        read_file(vocab_path), read_file(merges_path), tokenizer_config=config, source=str(vocab_path), **kwargs
    )
