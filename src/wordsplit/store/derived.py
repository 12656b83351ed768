"""Parsed vocabularies on disk, so that the second load of any vocabulary skips parsing.

Parsing is what loading costs: decoding 200,000 base64 lines of a ``.tiktoken`` file, the 11 MB
JSON of a ``tokenizer.json``, the arrays of a GGUF. A *derived entry* stores the parsed
:class:`~wordsplit.vocab.Vocab` in a compact binary form under ``derived/<key>.vocab`` in the
cache. It is made from a *recipe*: what was parsed (the sha256 of each input file, or a
registered name's pinned sha256), how (the loader and its arguments) and by which code (a
checksum of the parsing modules' source), so that a new file, new arguments or an edited loader
make a new entry, never a stale hit. The recipe's checksum names the entry and its header holds
the recipe, which a read compares (:mod:`.digests`: a warm load needs no OpenSSL).

Format, little-endian::

    MAGIC | header length (u32) | header (JSON) | body
    body = ids (u32 × n) | lengths (u32 × n) | token bytes, concatenated | merges (u32 × 3m) [| scores (f64 × s)]

The scores (:attr:`~wordsplit.vocab.Vocab.scores`, a Unigram model's) are an optional trailing
section, present when the header has ``n_scores``: an entry without them is laid out as before.
The header holds the recipe, the Vocab's other fields (the chat template too), the counts and the
checksum of the body. A derived entry is not trusted: a read checks the magic, the recipe, the
counts against the bytes present and the checksum before it builds anything, and the Vocab
validates itself as always (the native tables check the tokens when the core is built). An
entry that fails any check is removed and rebuilt from the source file, never used.

The cache keeps the :data:`MAX_ENTRIES` most recently used derived entries (a hit refreshes
an entry's mtime; a write evicts the oldest beyond that), so loading many files, such as
temporary ones, cannot grow it without bound.

What it does not do: store the encoders' own tables (the Python MergeTables wrap the Vocab,
and the native MergeTables are built from it in Rust), nor download anything. The tokens are read
back packed (:meth:`~wordsplit.vocab.Vocab.from_packed`): with the native core built, its
tables check and index them, and no Python dict of 100,000+ tokens is built unless asked for.

>>> from wordsplit import load_vocab
>>> vocab = load_vocab("r50k_base")
>>> read_vocab(dump_vocab(vocab, label="r50k_base")).content_hash == vocab.content_hash
True
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import struct
from pathlib import Path
from typing import Callable, Mapping

from ..spec import PipelineSpec
from ..vocab import Vocab, little_endian_bytes, u32_array
from .cache import DERIVED_MAGIC as MAGIC
from .cache import Cache, atomic_write, is_derived_entry, log
from .digests import checksum

__all__ = ["cached_vocab", "dump_vocab", "read_vocab", "recipe_key"]


MAX_ENTRIES = 32  # a few MB each: about 100 MB at most for typical vocabularies
FORMAT = 6  # 4: the pipeline's JSON; 5: post-processor, scores; 6: the recipe in the header, zlib checksums
# Every module whose code decides what a parse produces: editing one changes every key.
_PARSING_MODULES = (
    "wordsplit.vocab", "wordsplit.formats", "wordsplit.formats.files", "wordsplit.formats.tiktoken",
    "wordsplit.formats.hf", "wordsplit.formats.gguf", "wordsplit.formats.gguf.reader",
    "wordsplit.formats.gguf.pre_tokenizers", "wordsplit.formats.gguf.tokenizer", "wordsplit.formats.gguf._classes",
    "wordsplit.formats.gguf.spm", "wordsplit.formats.gguf.attributes",
    "wordsplit.formats.merges", "wordsplit.formats.bytelevel", "wordsplit.formats.tekken", "wordsplit.patterns",
    "wordsplit.split_programs", "wordsplit.normalizer_programs", "wordsplit.vocabs.pretrained", __name__,
    "wordsplit.spec", "wordsplit.spec.stage", "wordsplit.spec.normalizers", "wordsplit.spec.spanners",
    "wordsplit.spec.models", "wordsplit.spec.post_processors", "wordsplit.spec.decoders",
    # tokenizer.json's normalizer programs and the Punctuation class (found from the top-level
    # package, so a warm load imports no subpackage)
    "wordsplit.normalizers", "wordsplit._hf_char_data",
    # SentencePiece .model files and SentencePiece-style tokenizer.json
    "wordsplit.formats.sentencepiece", "wordsplit.formats.hf_sentencepiece", "wordsplit.sentencepiece",
    # Unigram tokenizer.json files, the stages of converted SentencePiece models, word models
    # (WordPiece, WordLevel, BERT's vocab.txt) and HF's BPE over characters
    "wordsplit.formats.hf_unigram", "wordsplit.formats.charsmap",
    "wordsplit.formats.sentencepiece_unigram", "wordsplit.formats.hf_metaspace",
    "wordsplit.formats.hf_word_models", "wordsplit.formats.hf_character_bpe", "wordsplit.formats.bert_vocab",
    "wordsplit.post_processor_programs", "wordsplit.formats.gguf.word_models",
)


class _Corrupt(ValueError):
    """A derived entry that fails a check; it is rebuilt, never reported to the caller."""


def cached_vocab(cache: Cache, recipe: Mapping, *, label: str, build: Callable[[], Vocab]) -> Vocab:
    """The Vocab of ``recipe`` from its derived entry, or ``build()`` it and store the entry.

    Args:
        cache: the cache to read from and write to.
        recipe: JSON-able facts that decide the result (input hashes, loader, arguments).
        label: what ``wordsplit cache list`` shows and ``cache clear NAME`` matches.
        build: parses the vocabulary from its source; called only on a miss.

    A derived entry is an optimization: failing to write one is logged, not raised.
    """
    text = recipe_text(recipe)
    key = checksum(text.encode())
    for root in cache.roots:
        path = cache.derived_path(key, root)
        vocab = _read_entry(path, text)
        if vocab is not None:
            with contextlib.suppress(OSError):  # recently used: evicted last (not possible read-only)
                os.utime(path)
            return vocab
    vocab = build()
    path = cache.derived_path(key)
    try:
        atomic_write(path, dump_vocab(vocab, label=label, recipe=text))
        _evict(path.parent)
    except OSError as exc:
        log().debug("could not write the derived entry %s: %s", path, exc)
    return vocab


def _evict(directory: Path) -> None:
    """Remove the least recently used derived entries beyond :data:`MAX_ENTRIES`.

    Only files that start with the derived-entry magic count: ``derived/`` may be a symlink to
    a directory that holds other ``*.vocab`` files, which are not the cache's to delete.
    """
    entries = []
    for path in directory.glob("*.vocab"):
        with contextlib.suppress(OSError):  # another process may have removed it meanwhile
            if is_derived_entry(path):
                entries.append((path.stat().st_mtime, path))
    for _, path in sorted(entries, reverse=True)[MAX_ENTRIES:]:
        with contextlib.suppress(OSError):
            path.unlink()


def recipe_text(recipe: Mapping) -> str:
    """The whole recipe of a derived entry as its header holds it: the entry format, the code
    fingerprint and ``recipe``, as canonical JSON."""
    return json.dumps({"format": FORMAT, "code": code_fingerprint(), "recipe": recipe}, sort_keys=True)


def recipe_key(recipe: Mapping) -> str:
    """The name of a recipe's derived entry: the checksum of its :func:`recipe_text`."""
    return checksum(recipe_text(recipe).encode())


@functools.lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """A checksum of the source of the parsing modules (their version when the source is absent).

    The modules are found, not imported: a warm load (an entry hit) never runs the parsers. They
    are found under the package's folder, since ``find_spec`` of a module in a subpackage
    imports the subpackage (``wordsplit.formats.gguf`` builds llama.cpp's pattern table).
    """
    parts = []
    package = Path(importlib.util.find_spec("wordsplit").origin).parent
    for name in _PARSING_MODULES:
        path = package.joinpath(*name.split(".")[1:])
        try:
            source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
            parts.append(source.read_bytes())
        except OSError:  # no source file (a frozen or zip install)
            from .._version import __version__

            parts.append(f"{name} {__version__}".encode())
    return checksum(b"\0".join(parts))


def dump_vocab(vocab: Vocab, *, label: str, recipe: str = "") -> bytes:
    """The derived-entry bytes of ``vocab`` made by ``recipe`` (its :func:`recipe_text`; see
    the module docstring for the format)."""
    blob, ids, lengths = vocab.packed()
    merges = vocab.packed_merges() or b""  # little-endian uint32 triples already
    scores = b"" if vocab.scores is None else struct.pack(f"<{len(vocab.scores)}d", *vocab.scores)
    body = b"".join([little_endian_bytes(ids), little_endian_bytes(lengths), blob, merges, scores])
    header = {
        "format": FORMAT, "recipe": recipe, "label": label, "name": vocab.name, "source": vocab.source,
        "pipeline": vocab.pipeline.to_json(),
        # Lists of pairs, not objects: they keep the order, which decides which of two literals
        # sharing an id decodes first.
        "special_tokens": list(vocab.special_tokens.items()), "added_tokens": list(vocab.added_tokens.items()),
        "n_vocab": vocab.n_vocab, "eos_token_id": vocab.eos_token_id,
        "bos_token_id": vocab.bos_token_id, "whole_piece_lookup": vocab.whole_piece_lookup,
        "chat_template": vocab.chat_template, "literal_flags": dict(vocab.literal_flags),
        "unk_token_id": vocab.unk_token_id, "fuse_unk": vocab.fuse_unk,
        "pair_ranked": vocab.pair_ranked, "n_tokens": len(ids), "n_merges": len(merges) // 12,
        "body_size": len(body), "body_checksum": checksum(body),
    }
    if vocab.scores is not None:
        header["n_scores"] = len(vocab.scores)
    head = json.dumps(header, ensure_ascii=True).encode()
    return MAGIC + len(head).to_bytes(4, "little") + head + body


def read_vocab(data: bytes, recipe: str | None = None) -> Vocab:
    """Rebuild the Vocab of derived-entry bytes, checking everything first (and that they were
    made by ``recipe``, a :func:`recipe_text`, when given).

    Raises:
        ValueError: anything wrong with the bytes, or another recipe's entry (the caller
            rebuilds the entry).
    """
    header, body = _split(data)
    if recipe is not None and header.get("recipe") != recipe:
        raise _Corrupt("made by another recipe (two recipes whose checksums are the same name)")
    try:
        n, m = int(header["n_tokens"]), int(header["n_merges"])
        s = int(header.get("n_scores", 0))
        blob_size = len(body) - 8 * n - 12 * m - 8 * s
        if n < 0 or m < 0 or s < 0 or blob_size < 0 or checksum(body) != header["body_checksum"]:
            raise _Corrupt("counts or checksum do not match the body")
        merges_end = len(body) - 8 * s
        scores = struct.unpack(f"<{s}d", body[merges_end:]) if "n_scores" in header else None
        ids, lengths = u32_array(body[: 4 * n]), u32_array(body[4 * n: 8 * n])
        # The tokens stay packed: the native tables check and index them without a Python dict.
        return Vocab.from_packed(
            blob=body[8 * n: 8 * n + blob_size], ids=ids, lengths=lengths,
            name=header["name"], source=header["source"], pipeline=PipelineSpec.from_json(header["pipeline"]),
            special_tokens=dict(header["special_tokens"]), added_tokens=dict(header["added_tokens"]),
            n_vocab=header["n_vocab"], eos_token_id=header["eos_token_id"],
            bos_token_id=header["bos_token_id"], whole_piece_lookup=header["whole_piece_lookup"],
            chat_template=_optional_text(header["chat_template"]),
            literal_flags=dict(header.get("literal_flags") or {}),
            unk_token_id=header["unk_token_id"], fuse_unk=header["fuse_unk"] is True,
            merges=body[merges_end - 12 * m:merges_end] if header["pair_ranked"] else None, scores=scores,
        )
    except (KeyError, TypeError, ValueError, OverflowError) as exc:  # VocabFormatError is a ValueError too
        raise _Corrupt(str(exc)) from None


def _optional_text(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _Corrupt(f"a str or null was expected, not {type(value).__name__}")
    return value


def _split(data: bytes) -> tuple[dict, bytes]:
    """(header, body) of derived-entry bytes; checks the magic and the sizes."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise _Corrupt("not a derived vocabulary entry")
    head_size = int.from_bytes(data[len(MAGIC): len(MAGIC) + 4], "little")
    body_start = len(MAGIC) + 4 + head_size
    if body_start > len(data):
        raise _Corrupt("truncated header")
    try:
        header = json.loads(data[len(MAGIC) + 4: body_start])
    except ValueError:
        raise _Corrupt("unreadable header") from None
    body_size = len(data) - body_start
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("body_size") != body_size:
        raise _Corrupt("wrong format or truncated body")
    return header, data[body_start:]


def _read_entry(path: Path, recipe: str) -> Vocab | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return read_vocab(data, recipe)
    except ValueError as exc:
        log().info("ignoring the corrupt derived entry %s (%s); rebuilding it", path, exc)
        with contextlib.suppress(OSError):  # a read-only root: the rebuilt entry goes to the writable one
            path.unlink()
        return None

