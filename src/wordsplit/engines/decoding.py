"""The engine of a vocabulary whose decoder is not a concatenation of token bytes (other than
SentencePiece's, :mod:`wordsplit.engines.sentencepiece`): the encode of the engine it wraps,
and the decode of the vocabulary's decoder stage, in Python on both backends.

* :class:`~wordsplit.spec.WordPieceDecoder` (HF's ``WordPiece`` decoder): each token after the
  first gets a space before it, unless it starts with the continuing-subword prefix, which is
  dropped; with ``cleanup``, each token is then cleaned as HF's ``cleanup`` does (a space
  before ``.``, ``?``, ``!``, ``,`` and a few English contractions removed);
* :class:`~wordsplit.spec.NoDecoder` (a file without a decoder): the tokens joined by spaces.

Special tokens decode as their text, as HF's ``decode(ids, skip_special_tokens=False)``.

>>> from wordsplit.spec import WordPieceDecoder
>>> wordpiece_text(["hello", ",", "un", "##aff", "##able", "world", "!"], WordPieceDecoder(), True)
('hello, unaffable world!', False)
"""

from __future__ import annotations

import itertools
from typing import Sequence

from ..spec import NoDecoder, WordPieceDecoder
from ..vocab import Vocab
from .arguments import token_id
from .python import DECODE_CHUNK

__all__ = ["TextDecodingEngine", "joined_text", "wordpiece_text"]

# HF's `cleanup` (tokenizers/src/decoders/wordpiece.rs), in its order, applied to each token.
_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def wordpiece_text(tokens: Sequence[str], decoder: WordPieceDecoder, at_start: bool) -> tuple[str, bool]:
    """The text HF's WordPiece decoder makes of ``tokens`` (``at_start``: no token came before
    them), and whether the tokens after them still come first (only if there were none)."""
    prefix, out = decoder.prefix, []
    for token in tokens:
        if not at_start:
            token = token[len(prefix):] if token.startswith(prefix) else " " + token
        at_start = False
        if decoder.cleanup:
            for dirty, clean in _CLEANUP:
                token = token.replace(dirty, clean)
        out.append(token)
    return "".join(out), at_start


def joined_text(tokens: Sequence[str], decoder: NoDecoder, at_start: bool) -> tuple[str, bool]:
    """The tokens joined by spaces (``at_start``: no token came before them), and whether the
    tokens after them still come first."""
    if not tokens:
        return "", at_start
    return ("" if at_start else " ") + " ".join(tokens), False


_TEXTS = {WordPieceDecoder: wordpiece_text, NoDecoder: joined_text}


class TextDecodingEngine:
    """``engine``'s encode (every attribute but the decode methods is ``engine``'s) and the
    decode of ``vocab``'s decoder stage."""

    def __init__(self, engine, vocab: Vocab) -> None:
        self._inner = engine
        self.vocab = vocab
        self.decoder = vocab.pipeline.decoder
        self._text = _TEXTS[type(self.decoder)]
        self._texts = None  # id → token text, made by the first decode (a loop over every id)
        self.native = bool(getattr(engine, "native", False))

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def _tokens(self, ids) -> list[str]:
        if self._texts is None:
            texts: dict[int, str] = {}
            for literal, i in {**self.vocab.special_tokens, **self.vocab.added_tokens}.items():
                texts[i] = literal
            for data, i in self.vocab.ranks.items():
                texts[i] = data.decode("utf-8", "replace")
            self._texts = texts
        vocab, texts = self.vocab, self._texts
        return [texts[token_id(vocab, i)] for i in ids]

    def decode_bytes_after(self, ids, at_start: bool) -> tuple[bytes, bool]:
        """The bytes of ``ids`` decoded after others (``at_start``: none came before), and the
        same flag for the ids after them: what :class:`~wordsplit.streaming.DecodeStream` uses."""
        out: list[str] = []
        ids = iter(ids)
        while chunk := list(itertools.islice(ids, DECODE_CHUNK)):
            text, at_start = self._text(self._tokens(chunk), self.decoder, at_start)
            out.append(text)
        return "".join(out).encode("utf-8"), at_start

    def decode_bytes(self, ids) -> bytes:
        return self.decode_bytes_after(ids, True)[0]

    def decode(self, ids, errors: str) -> str:
        return self._text(self._tokens(ids), self.decoder, True)[0]

    def decode_batch(self, batch, errors: str, num_threads) -> list[str]:
        return [self.decode(ids, errors) for ids in batch]
