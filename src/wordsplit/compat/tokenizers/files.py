"""What files :class:`~wordsplit.compat.tokenizers.Tokenizer` reads, and the SentencePiece-style
files it refuses because its answers could differ from HF's.

:func:`model_vocab` is the model's token → id table (a Unigram model's list read as HF reads it);
:func:`read_vocab` is the wordsplit vocabulary of a tokenizer.json (a SentencePiece-style file
with HF's ``Metaspace`` decoder is read with the decoder the core loader takes, since the
drop-in decodes it itself); :func:`check_sentencepiece` refuses an added token whose id the
model also makes, and a vocabulary whose ``ByteFallback`` decode wordsplit's engine would
read otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ...errors import UnsupportedTokenizerError
from ...vocab import Vocab
from .decoding import hf_byte_value

if TYPE_CHECKING:
    from . import Tokenizer

__all__ = ["check_sentencepiece", "model_vocab", "read_vocab"]


def model_vocab(model: dict) -> dict[str, int]:
    """Token string → id of a tokenizer.json's model, as HF's ``get_vocab`` gives it: the
    ``vocab`` object of a BPE or word model, or the ``[piece, score]`` list of a Unigram model
    (a piece's id is its place)."""
    vocab = model["vocab"]
    if isinstance(vocab, list):
        return {entry[0]: i for i, entry in enumerate(vocab)}
    return vocab


def check_sentencepiece(tok: "Tokenizer", source: str) -> None:
    """Refuse a SentencePiece-style file where wordsplit's answer could differ from HF's: in a
    BPE file with byte fallback, ``Metaspace`` with ``split`` and an added token whose id the
    model can also make (their word ids; a Unigram file's are made as HF makes them, and a BPE's
    without byte fallback are its spanner's pieces); with the ``ByteFallback``
    chain, a vocabulary whose decode by wordsplit's engine is not HF's: a token the engine
    reads otherwise than ``ByteFallback`` reads its string (a byte, or text).

    Raises:
        UnsupportedTokenizerError: such a file.
    """
    pipeline = tok._vocab.pipeline
    if tok._unigram is not None or not pipeline.sentencepiece:
        # (a Unigram file's words and tokens are HF's, compat.tokenizers.unigram; a BPE without
        # byte fallback has its words from the spanner's pieces, which are HF's)
        _check_decoder(tok, pipeline, source)
        return
    if pipeline.sentencepiece and pipeline.spanner.metaspace_split:
        # HF's word ids are then one per ▁-started part, not one per stretch (_stretch_words).
        raise UnsupportedTokenizerError(f"{source}: Metaspace with split: true is not supported here (its word ids)")
    model = tok._spec["model"]
    made = {"".join(merge.split(" ", 1) if isinstance(merge, str) else merge) for merge in model.get("merges") or []}
    by_id = {i: text for text, i in tok._model_vocab.items()}
    for content, i in tok._literals.items():
        text = by_id.get(i)
        if text is not None and (len(text) == 1 or text in made or hf_byte_value(text) is not None):
            raise UnsupportedTokenizerError(
                f"{source}: added token {content!r} has the id {i} of the model's token {text!r}, which the model "
                "also makes from text; HF's word ids would then depend on which made it"
            )
    _check_decoder(tok, pipeline, source)


def _check_decoder(tok: "Tokenizer", pipeline, source: str) -> None:
    """Refuse a file with the ``ByteFallback`` chain whose vocabulary wordsplit's engine decodes
    otherwise than HF's decoder reads it."""
    from ...engines.sentencepiece import BYTE, token_kinds
    from ...spec import SentencePieceDecoder

    if tok._decoding.kind != "sentencepiece":
        return
    decoder = pipeline.decoder
    if not isinstance(decoder, SentencePieceDecoder) or decoder.style != "hf" \
            or (decoder.strip_leading_space == "first") != tok._decoding.strip:
        raise UnsupportedTokenizerError(f"{source}: the vocabulary does not decode with the file's decoder")
    kinds = token_kinds(tok._vocab)
    for i, string in enumerate(tok._token_strings()):
        if string is None:
            continue
        value = hf_byte_value(string)
        hf_reads = f"the text {string!r}" if value is None else f"the byte 0x{value:02X}"
        kind, data = kinds[i]
        ws_reads = "no token" if data is None else f"the byte 0x{data[0]:02X}" if kind == BYTE \
            else f"the text {data.decode('utf-8', 'replace')!r}"
        if hf_reads != ws_reads:
            raise UnsupportedTokenizerError(
                f"{source}: HF's ByteFallback decoder reads token {string!r} (id {i}) as {hf_reads}, wordsplit's "
                f"decode as {ws_reads}; wordsplit.compat.tokenizers cannot decode this file as HF does"
            )


def read_vocab(data: bytes, *, source: str, name: Optional[str] = None) -> Vocab:
    """The wordsplit vocabulary of a tokenizer.json for :class:`Tokenizer`. A SentencePiece-style
    file with HF's ``Metaspace`` decoder, which wordsplit's own decode does not have for BPE
    (so the loader refuses it) nor for a Unigram model in every form (a ``prepend_scheme``
    ``never`` with ``<0xNN>`` pieces), is read with the decoder the loader takes instead: the
    decoder changes no id, and :class:`Tokenizer` decodes it itself."""
    from ...formats.hf import read_hf_tokenizer_json
    from ...formats.hf_sentencepiece import BYTE_FALLBACK_DECODER, is_sentencepiece_style

    name = name or Path(source).stem.removesuffix(".json")
    try:
        spec = json.loads(data)
    except ValueError:
        spec = None  # the reader says what is wrong
    if isinstance(spec, dict) and isinstance(spec.get("decoder"), dict) and spec["decoder"].get("type") == "Metaspace" \
            and isinstance(spec.get("model"), dict) and is_sentencepiece_style(spec, source):
        substituted = json.dumps({**spec, "decoder": BYTE_FALLBACK_DECODER}).encode("utf-8")
        if not isinstance(spec["model"].get("vocab"), list):
            return read_hf_tokenizer_json(substituted, source=source, name=name)
        try:  # (a Unigram file keeps its Metaspace decoder where the loader runs it)
            return read_hf_tokenizer_json(data, source=source, name=name)
        except UnsupportedTokenizerError:
            return read_hf_tokenizer_json(substituted, source=source, name=name)
    return read_hf_tokenizer_json(data, source=source, name=name)

