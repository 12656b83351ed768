"""Mistral's Tekken files (``tekken.json``, ``tekken_240911.json``...), read as mistral_common reads them.

A Tekken file is JSON: ``config`` (the split ``pattern``, a tiktoken ``pat_str``;
``default_vocab_size``; ``default_num_special_tokens``; ``version``), ``vocab`` (one
``{"rank", "token_bytes" (base64), "token_str"}`` per BPE token, rank = position, the 256 single
bytes first) and, from version v7 on, ``special_tokens`` (``{"rank", "token_str",
"is_control"}``). mistral_common's ``Tekkenizer`` builds from it:

* **ids:** the special tokens come first: special token *i* is id *i*, and BPE token of rank
  *r* is id ``r + default_num_special_tokens``;
* **the cut:** only the first ``default_vocab_size - default_num_special_tokens`` BPE tokens
  are used (``num_vocab_tokens`` is what the file lists, usually more);
  ``n_vocab = default_vocab_size``;
* **special tokens:** those the file lists, else (files before v7, which list none) the
  default set of 20 (``<unk>``, ``<s>``, ``</s>``, ``[INST]``...), then fillers
  ``<SPECIAL_i>`` up to ``default_num_special_tokens``; bos is ``<s>``, eos ``</s>``;
* **encoding:** tiktoken's byte-level BPE with that pattern, no normalizer, and special token
  text in the input encoded as plain text (``Tekkenizer.encode`` never matches them): with
  wordsplit, ``encode_ordinary`` or ``encode(text, disallowed_special=())``.

What it does not read: the image and audio settings (``image``, ``audio``), which do not change
how text is tokenized, and ``model_settings_builder``.

:func:`looks_like_tekken` tells a Tekken JSON from a ``tokenizer.json`` by the keys at its
beginning, so that a Tekken file is recognized whatever its name.

>>> import base64, json
>>> tokens = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None} for b in range(256)]
>>> config = {"pattern": r"\\S+|\\s+", "default_vocab_size": 280, "default_num_special_tokens": 24, "version": "v3"}
>>> data = json.dumps({"config": config, "vocab": tokens}).encode()
>>> looks_like_tekken(data)
True
>>> vocab = read_tekken(data, source="tekken.json")
>>> specials = vocab.special_tokens
>>> vocab.n_vocab, vocab.ranks[b"a"], specials["<s>"], vocab.eos_token_id, specials["<SPECIAL_23>"]
(280, 121, 1, 2, 23)
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from pathlib import Path
from typing import Any

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..patterns import MAX_GROUP_DEPTH, group_depth
from ..vocab import Vocab, id_limit
from .files import file_stem, read_file

__all__ = ["DEFAULT_SPECIAL_TOKENS", "load_tekken", "looks_like_tekken", "read_tekken", "top_level_keys"]

#: The special tokens of a Tekken file that lists none (versions before v7), ids 0-19: the
#: set mistral_common's ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS`` gives such files.
DEFAULT_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
# The fillers up to default_num_special_tokens, as mistral_common names them.
FILLER_TEMPLATE = "<SPECIAL_{id}>"
# The last version whose files may omit special_tokens (mistral_common refuses later ones).
LAST_VERSION_WITHOUT_SPECIALS = 7
BOS, EOS = "<s>", "</s>"

# A JSON string (escapes included), optionally a key (followed by ":" and the first character of
# its value when that opens an object or array), or a bracket: enough to follow the nesting.
_JSON_TOKEN = re.compile(rb'"((?:[^"\\]|\\.)*)"(\s*:\s*([\[{])?)?|[{}\[\]]', re.S)
# The top-level keys that make a Tekken file, with the bracket their value opens.
_TEKKEN_KEYS = {b"config": b"{", b"vocab": b"[", b"special_tokens": b"["}
_VERSION = re.compile(r"v([0-9]{1,6})")


def top_level_keys(head: bytes) -> dict[bytes, bytes]:
    """The keys of the top-level object of a JSON document's beginning, each with the first
    character of its value when that is ``{`` or ``[`` (else ``b""``); strings and nesting are
    followed, so a nested key or a key-like string is never one.

    >>> top_level_keys(b'{"model": {"vocab": {"config": 1}}, "a\\\\"b": [1, {"c": 2}], "d": "{"')
    {b'model': b'{', b'a\\\\"b': b'[', b'd': b''}
    """
    keys: dict[bytes, bytes] = {}
    depth = 0
    for match in _JSON_TOKEN.finditer(head):
        token = match[0]
        if token[:1] == b'"':
            if match[2] is not None:  # a key
                if depth == 1:
                    keys.setdefault(match[1], match[3] or b"")
                if match[3] is not None:
                    depth += 1
        elif token in (b"{", b"["):
            depth += 1
        else:
            depth -= 1
    return keys


def looks_like_tekken(head: bytes) -> bool:
    """Whether the beginning of a JSON file (its first 64 KiB are plenty) is a Tekken file's:
    its top-level object has ``config`` (an object), ``vocab`` or ``special_tokens`` (arrays),
    and no ``model`` (a tokenizer.json's), whatever the key order.

    >>> looks_like_tekken(b'{"version": "1.0", "model": {"type": "BPE", "vocab": {"config": 5}}}')
    False
    >>> looks_like_tekken(b'{"vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\\\\u0000"}, {"ra')
    True
    """
    keys = top_level_keys(head)
    return b"model" not in keys and any(keys.get(key) == value for key, value in _TEKKEN_KEYS.items())


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _int(config: dict, key: str, source: str) -> int:
    value = config.get(key)
    if type(value) is not int or value < 0:
        raise VocabFormatError(f"{source}: config.{key} must be a non-negative integer, not {value!r}")
    return value


def _version(config: dict, source: str) -> int:
    version = config.get("version")
    match = _VERSION.fullmatch(version) if isinstance(version, str) else None
    if match is None:
        raise VocabFormatError(f"{source}: config.version must be a Tekken version such as 'v3' or 'v13', "
                               f"not {version!r}")
    return int(match[1])


def _special_tokens(spec: dict, version: int, count: int, source: str) -> list[str]:
    """The special tokens' texts, by id: the listed or the default ones, then the fillers."""
    listed = spec.get("special_tokens")
    if listed is None:
        if version > LAST_VERSION_WITHOUT_SPECIALS:
            raise VocabFormatError(
                f"{source}: a Tekken file of version v{version} must list its special_tokens (only files up "
                f"to v{LAST_VERSION_WITHOUT_SPECIALS} may leave them to the default set)"
            )
        texts = list(DEFAULT_SPECIAL_TOKENS)
    else:
        if not isinstance(listed, list):
            raise VocabFormatError(f"{source}: special_tokens must be an array, not {_json_type(listed)}")
        texts = []
        for position, entry in enumerate(listed):
            if not isinstance(entry, dict) or not isinstance(entry.get("token_str"), str) or not entry["token_str"]:
                raise VocabFormatError(f"{source}: special token #{position} {entry!r} needs a non-empty 'token_str'")
            if entry.get("rank") != position:
                # mistral_common uses the rank as the id and the position to decode: they must agree.
                raise VocabFormatError(
                    f"{source}: special token {entry['token_str']!r} is listed at position {position} with rank "
                    f"{entry.get('rank')!r}; special tokens are listed in rank order from 0"
                )
            texts.append(entry["token_str"])
    if len(texts) > count:
        raise VocabFormatError(
            f"{source}: {len(texts)} special tokens, more than config.default_num_special_tokens = {count}"
        )
    texts += [FILLER_TEMPLATE.format(id=i) for i in range(len(texts), count)]
    if len(set(texts)) != len(texts):
        seen: set[str] = set()
        twice = next(text for text in texts if text in seen or seen.add(text))
        raise VocabFormatError(f"{source}: the special token {twice!r} is listed twice")
    return texts


def _bpe_ranks(vocab: Any, size: int, source: str) -> dict[bytes, int]:
    """``{token bytes: rank}`` of the first ``size`` entries of ``vocab``."""
    if not isinstance(vocab, list):
        raise VocabFormatError(f"{source}: 'vocab' must be an array of tokens, not {_json_type(vocab)}")
    if len(vocab) < size:
        raise VocabFormatError(
            f"{source}: the config asks for {size} BPE tokens (default_vocab_size - default_num_special_tokens), "
            f"but 'vocab' lists {len(vocab)}"
        )
    ranks: dict[bytes, int] = {}
    for rank, entry in enumerate(vocab[:size]):
        if not isinstance(entry, dict) or entry.get("rank") != rank:
            raise VocabFormatError(f"{source}: vocab entry #{rank} {_short(entry)} does not have 'rank': {rank}")
        text = entry.get("token_bytes")
        try:
            # Strict base64: mistral_common's b64decode would skip stray characters, but no
            # Tekken file has any, and a token must not silently lose bytes.
            piece = base64.b64decode(text, validate=True) if isinstance(text, str) else None
        except (binascii.Error, ValueError):
            piece = None
        if piece is None:
            raise VocabFormatError(f"{source}: vocab entry #{rank} {_short(entry)} has no base64 'token_bytes'")
        if rank < 256 and piece != bytes([rank]):
            raise VocabFormatError(f"{source}: vocab entry #{rank} is {piece!r}; the first 256 are the single bytes")
        if piece in ranks:
            raise VocabFormatError(f"{source}: token {piece!r} is listed twice (ranks {ranks[piece]} and {rank})")
        ranks[piece] = rank
    return ranks


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_tekken(data: bytes, *, source: str = "tekken.json", name: str | None = None) -> Vocab:
    """Parse a Tekken file's bytes into a Vocab (see the module docstring for the rules).

    Args:
        data: the file's (uncompressed) content.
        source: the file, for messages.
        name: the Vocab's name (default: the file's stem).

    Raises:
        VocabFormatError: not JSON, not a Tekken file, or an entry that breaks the format.
        UnsupportedTokenizerError: a pattern nested too deeply to compile.
    """
    try:
        spec = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabFormatError(f"{source}: not valid JSON ({exc})") from None
    except RecursionError:
        raise VocabFormatError(f"{source}: JSON nested too deeply to be a Tekken file") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("config"), dict):
        raise VocabFormatError(f"{source}: no 'config' object; is this a Tekken file (tekken.json)?")
    config = spec["config"]
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise VocabFormatError(f"{source}: config.pattern must be a non-empty string (the split regex)")
    if group_depth(pattern) > MAX_GROUP_DEPTH:  # the regex compiler would exhaust the stack
        raise UnsupportedTokenizerError(f"{source}: the pattern nests groups more than {MAX_GROUP_DEPTH} deep")
    version = _version(config, source)
    n_vocab = _int(config, "default_vocab_size", source)
    n_special = _int(config, "default_num_special_tokens", source)
    n_bpe = n_vocab - n_special
    if n_bpe < 256:
        raise VocabFormatError(
            f"{source}: default_vocab_size {n_vocab} leaves {n_bpe} BPE tokens after the {n_special} special "
            "tokens; byte-level BPE needs at least the 256 single bytes"
        )
    # Before anything is sized by it: the special tokens (fillers included) stay proportional
    # to the file, like every id (see wordsplit.vocab.id_limit).
    if n_vocab > id_limit(n_bpe):
        raise VocabFormatError(
            f"{source}: default_num_special_tokens {n_special} is far beyond the {n_bpe} BPE tokens (the "
            f"vocabulary size must stay below 2 x tokens + 65536 = {id_limit(n_bpe)}); the file is corrupt"
        )
    ranks = _bpe_ranks(spec.get("vocab"), n_bpe, source)
    specials = {text: i for i, text in enumerate(_special_tokens(spec, version, n_special, source))}
    return Vocab(
        name=name or file_stem(source), ranks={piece: rank + n_special for piece, rank in ranks.items()},
        pattern=pattern, special_tokens=specials, n_vocab=n_vocab,
        bos_token_id=specials.get(BOS), eos_token_id=specials.get(EOS), source=source,
    )


def load_tekken(path: str | os.PathLike, *, name: str | None = None) -> Vocab:
    """Read a Tekken file, optionally gzipped; ``tekken.json`` is named after its directory."""
    stem = file_stem(path)
    name = name or (Path(path).absolute().parent.name if stem == "tekken" else stem)
    return read_tekken(read_file(path), source=str(path), name=name or stem)
