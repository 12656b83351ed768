"""Write a Vocab as ``tokenizer.json``, ``vocab.json`` + ``merges.txt``, and ``.tiktoken``.

Each file gives the same ids as wordsplit in the library that reads it:

* ``tokenizer.json`` (HF ``tokenizers``): a BPE model with the byte-level vocabulary and the
  merges in rank order (:func:`~wordsplit.training.vocab.merge_list`), the specials as added
  tokens, the split pattern as ``Split(Regex, "isolated")`` + ``ByteLevel(use_regex=False)``
  (spelled for HF's regex engine by :func:`split_pattern`), a ByteLevel decoder, and the NFC
  normalizer when the vocabulary has one;
* ``vocab.json`` + ``merges.txt``: the same model in the two-file form (specials included in
  vocab.json, as HF's ``BPE.save`` writes them), and ``tokenizer_config.json`` beside them
  declaring the specials (``added_tokens_decoder``, as ``transformers`` writes it);
* ``<name>.tiktoken``: ``base64(token bytes) id`` per BPE token; tiktoken needs the pattern and
  the specials beside it (``tiktoken.Encoding(pat_str=vocab.pattern, ...)``). Only a rank-based
  Vocab has one: a pair-ranked one raises :class:`~wordsplit.errors.VocabFormatError`.

Files are written to a temporary name and renamed into place.

"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Union

from ..errors import VocabFormatError
from ..formats.bytelevel import token_text
from ..spec import Nfc, NoNormalizer, RegexSplit
from ..vocab import Vocab
from .vocab import merge_list


def hf_pattern(pattern: str) -> str:
    """``pattern`` spelled for HF's Oniguruma so that it splits as tiktoken's Rust regex does:
    a possessive bound ``{m,n}+`` is a repeated bound in Oniguruma (at the end of an
    alternative, as in the known patterns, plain ``{m,n}`` means the same), and ``$`` is the end
    of a *line* in Oniguruma (``\\z`` is the end of the text). Escapes (``\\$``) and character
    classes (``[$]``) are left alone.

    >>> hf_pattern(r"[$]\\$|x{2}+$")
    '[$]\\\\$|x{2}\\\\z'
    """
    out = []
    i, depth = 0, 0  # depth: inside a character class (they nest in Oniguruma)
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            # An escape, with its {...} when it is \p{..} / \P{..}.
            end = pattern.index("}", i) + 1 if pattern[i + 1:i + 3] in ("p{", "P{") else i + 2
            out.append(pattern[i:end])
            i = end
            continue
        bound = re.match(r"\{\d+(,\d*)?\}", pattern[i:]) if depth == 0 else None
        if bound:
            out.append(bound.group())
            i += len(bound.group())
            if pattern[i:i + 1] == "+":  # {m,n}+ → {m,n}
                i += 1
            continue
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
        elif depth == 0 and char == "$":
            char = "\\z"
        out.append(char)
        i += 1
    return "".join(out)


def split_pattern(pattern: str) -> str:
    """The pattern ``tokenizer.json``'s Split step carries for ``pattern``: when a native scanner
    is registered for it and for a spelling that HF's regex engine reads as it is (no possessive
    bound, no ``$``: tiktoken's original spellings, as HF ports of these vocabularies carry),
    that spelling, so the file splits the same in HF and loads back on the scanner; else
    :func:`hf_pattern`'s spelling.

    >>> from wordsplit.patterns import CL100K_PATTERN
    >>> "{1,3}+" in CL100K_PATTERN, split_pattern(CL100K_PATTERN)[:30]
    (True, "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[")
    """
    from ..native_names import SCANNER_PATTERNS
    from ..spanners import spanner_for

    scanner = spanner_for(RegexSplit(pattern))
    for spelling in SCANNER_PATTERNS.get(scanner, ()):
        if hf_pattern(spelling) == spelling:
            return spelling
    return hf_pattern(pattern)


def _write(path: Path, data: bytes) -> None:
    """Write atomically: a temporary file in the same directory, renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def hf_model_tables(vocab: Vocab) -> tuple[dict[str, int], list[str]]:
    """HF's ``model.vocab`` (specials included, by id) and ``model.merges`` (``"a b"``)."""
    table = {token_text(piece): i for piece, i in vocab.ranks.items()}
    table.update(vocab.special_tokens)
    table = dict(sorted(table.items(), key=lambda item: item[1]))
    merges = [f"{token_text(a)} {token_text(b)}" for a, b in merge_list(vocab)]
    return table, merges


def tokenizer_json(vocab: Vocab) -> str:
    """The ``tokenizer.json`` text of ``vocab`` (see the module doc)."""
    table, merges = hf_model_tables(vocab)
    added = [
        {"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for text, i in sorted(vocab.special_tokens.items(), key=lambda item: item[1])
    ]
    normalizer = {NoNormalizer(): None, Nfc(): {"type": "NFC"}}.get(vocab.normalizer, False)
    if normalizer is False:
        raise VocabFormatError(f"{vocab.name}: the normalizer {vocab.normalizer!r} has no tokenizer.json form")
    spec = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": split_pattern(vocab.pattern)}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": table, "merges": merges},
    }
    return json.dumps(spec, ensure_ascii=False, indent=2)


def tiktoken_text(vocab: Vocab) -> str:
    """The ``.tiktoken`` lines of ``vocab``'s BPE tokens, by id.

    Raises:
        VocabFormatError: ``vocab`` is pair-ranked (tiktoken merges by token rank only).
    """
    if vocab.merges is not None:
        raise VocabFormatError(
            f"{vocab.name}: its merges are pair-ranked (a trained merge made an existing token again), "
            "which a .tiktoken file cannot express; use tokenizer.json or vocab.json + merges.txt"
        )
    lines = [f"{base64.b64encode(piece).decode('ascii')} {i}\n"
             for piece, i in sorted(vocab.ranks.items(), key=lambda item: item[1])]
    return "".join(lines)


def save_all(vocab: Vocab, out_dir: Union[str, os.PathLike], *, tiktoken: bool = True) -> list[Path]:
    """Write ``tokenizer.json``, ``vocab.json``, ``merges.txt``, ``tokenizer_config.json`` and
    (when ``tiktoken`` and the Vocab is rank-based) ``<name>.tiktoken`` into ``out_dir`` (made
    if missing).

    Returns:
        the paths written.

    >>> import tempfile
    >>> from wordsplit import train
    >>> v = train(["hello hello"], vocab_size=258, pattern="gpt2")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in save_all(v, d)]
    ['tokenizer.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json', 'trained.tiktoken']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table, merges = hf_model_tables(vocab)
    files = {
        "tokenizer.json": tokenizer_json(vocab),
        "vocab.json": json.dumps(table, ensure_ascii=False),
        "merges.txt": "#version: 0.2\n" + "".join(f"{m}\n" for m in merges),
        "tokenizer_config.json": json.dumps({
            "tokenizer_class": "PreTrainedTokenizerFast",
            "added_tokens_decoder": {
                str(i): {"content": text, "lstrip": False, "normalized": False, "rstrip": False,
                         "single_word": False, "special": True}
                for text, i in sorted(vocab.special_tokens.items(), key=lambda item: item[1])
            },
        }, ensure_ascii=False, indent=2),
    }
    if tiktoken and vocab.merges is None:
        files[f"{vocab.name}.tiktoken"] = tiktoken_text(vocab)
    written = []
    for name, text in files.items():
        _write(out / name, text.encode("utf-8"))
        written.append(out / name)
    return written
