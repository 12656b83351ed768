"""BERT's ``vocab.txt`` (one WordPiece token per line, its id the line number) and the
``tokenizer_config.json`` beside it, read as transformers' ``BertTokenizerFast`` builds its
tokenizer from them.

The pipeline is BERT's: :class:`~wordsplit.spec.BertNormalizer` (``do_lower_case``,
``strip_accents`` (null: as ``do_lower_case``), ``tokenize_chinese_chars``), the
``BertPreTokenizer`` split program, :class:`~wordsplit.spec.WordPiece` with the config's
``unk_token`` (``##`` continues a word, 100 characters at most), the WordPiece decoder, and
``[CLS] A [SEP]`` / ``[CLS] A [SEP] B [SEP]`` when special tokens are added. The config's
``unk_token``, ``sep_token``, ``pad_token``, ``cls_token`` and ``mask_token`` are special
tokens. A line is its token with the line break removed (transformers' ``load_vocab``); a token
listed twice keeps its last line's id.

Casing is the one choice a bare ``vocab.txt`` cannot tell: without a config beside it, pass
``lowercase=True`` (uncased models: ``bert-base-uncased``, MiniLM, BGE...) or ``False``.

>>> vocab = read_bert_vocab(b"[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\nhello\\n##s\\n", source="vocab.txt",
...                         name="tiny", lowercase=True)
>>> vocab.pipeline.normalizer.lowercase, vocab.special_tokens["[CLS]"]
(True, 2)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from ..errors import VocabFormatError
from ..spec import (BertNormalizer, PipelineSpec, TemplateProcessing, TemplateSequence,
                    TemplateSpecial, TemplateSpecialToken, WordPiece, WordPieceDecoder)
from ..split_programs import split_program
from ..vocab import Vocab
from .files import read_file

__all__ = ["bert_pipeline", "load_bert_vocab", "read_bert_vocab"]

# The config's special tokens, with BertTokenizer's defaults.
_SPECIALS = (("unk_token", "[UNK]"), ("sep_token", "[SEP]"), ("pad_token", "[PAD]"), ("cls_token", "[CLS]"),
             ("mask_token", "[MASK]"))


def bert_pipeline(*, lowercase: bool, strip_accents: Optional[bool], chinese_chars: bool, unk_token: str,
                  cls: tuple[str, int], sep: tuple[str, int]) -> PipelineSpec:
    """BERT's pipeline with these settings (transformers' ``BertConverter``)."""
    from .hf import WHITESPACE_STEP, punctuation_class

    template_single = (TemplateSpecialToken(cls[0]), TemplateSequence("A"), TemplateSpecialToken(sep[0]))
    template_pair = template_single + (TemplateSequence("B", 1), TemplateSpecialToken(sep[0], 1))
    specials = tuple(TemplateSpecial(text, (i,), (text,)) for text, i in dict((cls, sep)).items())
    return PipelineSpec(
        normalizer=BertNormalizer(clean_text=True, handle_chinese_chars=chinese_chars,
                                  strip_accents=lowercase if strip_accents is None else strip_accents,
                                  lowercase=lowercase),
        spanner=split_program([dict(WHITESPACE_STEP),
                               {"pattern": punctuation_class(), "behavior": "Isolated", "invert": False}]),
        model=WordPiece(unk_token=unk_token), decoder=WordPieceDecoder(),
        post_processor=TemplateProcessing(template_single, template_pair, specials),
    )


def _config_value(config: dict, key: str, default: Any, kind: type, source: str) -> Any:
    value = config.get(key, default)
    if isinstance(value, dict):  # an AddedToken object
        value = value.get("content")
    if value is None and default is None:
        return None
    if not isinstance(value, kind):
        raise VocabFormatError(f"{source}: {key} must be a {kind.__name__}, not {value!r}")
    return value


def read_bert_vocab(data: bytes, *, source: str, name: str, config: Optional[bytes] = None,
                    config_source: str = "tokenizer_config.json", lowercase: Optional[bool] = None) -> Vocab:
    """The vocabulary of ``vocab.txt`` bytes with its ``tokenizer_config.json`` bytes (or,
    without them, ``lowercase``).

    Raises:
        VocabFormatError: not UTF-8, no tokens, a malformed config, a special token the
            vocabulary does not have, or neither a config nor ``lowercase`` (a bare vocab.txt
            does not say its casing).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabFormatError(f"{source}: not UTF-8 ({exc})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    table = {line: i for i, line in enumerate(lines)}
    if not table or "" in table:
        raise VocabFormatError(f"{source}: a vocab.txt holds one non-empty token per line")
    settings: dict[str, Any] = {}
    if config is not None:
        try:
            parsed = json.loads(config)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise VocabFormatError(f"{config_source}: not valid JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise VocabFormatError(f"{config_source}: a tokenizer_config.json is a JSON object")
        settings = parsed
    elif lowercase is None:
        raise VocabFormatError(
            f"{source}: a vocab.txt without a tokenizer_config.json beside it does not say whether its model is "
            "cased; pass lowercase=True (uncased models such as bert-base-uncased) or lowercase=False"
        )
    if lowercase is None:
        lowercase = _config_value(settings, "do_lower_case", True, bool, config_source)
    specials = {key: _config_value(settings, key, default, str, config_source) for key, default in _SPECIALS}
    missing = [text for text in specials.values() if text not in table]
    if missing:
        raise VocabFormatError(f"{source}: the special token(s) {', '.join(map(repr, missing))} are not in the "
                               "vocabulary")
    pipeline = bert_pipeline(
        lowercase=lowercase, strip_accents=_config_value(settings, "strip_accents", None, bool, config_source),
        chinese_chars=_config_value(settings, "tokenize_chinese_chars", True, bool, config_source),
        unk_token=specials["unk_token"], cls=(specials["cls_token"], table[specials["cls_token"]]),
        sep=(specials["sep_token"], table[specials["sep_token"]]),
    )
    return Vocab(name=name, ranks={token.encode("utf-8"): i for token, i in table.items()}, pipeline=pipeline,
                 special_tokens={text: table[text] for text in specials.values()}, source=source,
                 n_vocab=len(lines))


def load_bert_vocab(path: str | os.PathLike, *, name: str, config: Optional[Path] = None,
                    lowercase: Optional[bool] = None) -> Vocab:
    """Read a ``vocab.txt`` (optionally gzipped) and the ``tokenizer_config.json`` ``config``."""
    return read_bert_vocab(read_file(path), source=str(path), name=name,
                           config=None if config is None else read_file(config),
                           config_source=str(config), lowercase=lowercase)
