"""The engine of a SentencePiece vocabulary: the encode of the engine it wraps, and
``sentencepiece``'s decode (:mod:`wordsplit.sentencepiece`), which is not a concatenation of
token bytes: ``▁`` is a space, the dummy prefix's space is dropped, control pieces are empty.

Encoding is the wrapped engine's (Python, or native calling the Python SentencePiece
components), so both backends give the same ids; decoding and ``encode_with_offsets`` run in
Python on both.

>>> from wordsplit import TokenizerOptions, load_vocab
>>> tok = TokenizerOptions(backend="python").build(load_vocab("tests/data/spm/mistral-v1.model"))
>>> ids = tok.encode("Hello world")
>>> tok.decode_bytes(ids), tok.decode([tok.vocab.bos_token_id] + ids)
(b'Hello world', 'Hello world')
"""

from __future__ import annotations

import itertools

from ..sentencepiece import decode_hf, decode_pieces, hf_piece_bytes, model_of, piece_bytes, token_kinds
from ..vocab import Vocab
from .python import DECODE_CHUNK, PythonEngine, token_id


class SentencePieceEngine:
    """``engine``'s encode (every attribute but the decode methods is ``engine``'s) and
    ``sentencepiece``'s decode of ``vocab``'s ids."""

    def __init__(self, engine, vocab: Vocab, spanner: str, encoder: str) -> None:
        self._inner = engine
        self.vocab = vocab
        self._components = (spanner, encoder)
        self.native = False
        self._python = engine if isinstance(engine, PythonEngine) else None
        self.model = model_of(vocab.pattern)
        self._kinds = token_kinds(vocab)
        hf = self.model.semantics == "hf"
        self._decode, self._bytes = (decode_hf, hf_piece_bytes) if hf else (decode_pieces, piece_bytes)
        from ..normalizers import NORMALIZERS

        if getattr(NORMALIZERS.get(vocab.normalizer), "later", None) is not None:
            # A stretch after an added token has its own normalizer (Metaspace's "first"),
            # which only the Python engine knows: every encode goes there.
            self._inner = self._python_engine()

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def _python_engine(self):
        if self._python is None:
            from .python import build_python_engine

            self._python = build_python_engine(self.vocab, *self._components)
        return self._python

    def encode_with_offsets(self, text, allowed, disallowed):
        """The Python engine's offsets, which align through the normalizer as sentencepiece's
        ``norm_to_orig`` does (the stages are Python on both backends, so nothing is slower)."""
        return self._python_engine().encode_with_offsets(text, allowed, disallowed)

    def _tokens(self, ids):
        kinds, vocab = self._kinds, self.vocab
        return [kinds[token_id(vocab, i)] for i in ids]

    def decode(self, ids, errors: str) -> str:
        return self._decode(self._tokens(ids), self.model, errors)

    def decode_bytes(self, ids) -> bytes:
        return self.decode_bytes_after(ids, True)[0]

    def decode_bytes_after(self, ids, at_start: bool) -> tuple[bytes, bool]:
        """The bytes of ``ids`` decoded after others (``at_start``: none gave text yet), and the
        same flag for the ids after them: what :class:`~wordsplit.streaming.DecodeStream` uses."""
        out = bytearray()
        ids = iter(ids)
        while chunk := list(itertools.islice(ids, DECODE_CHUNK)):
            data, at_start = self._bytes(self._tokens(chunk), self.model, at_start)
            out += data
        return bytes(out), at_start

    def decode_batch(self, batch, errors: str, num_threads) -> list[str]:
        return [self.decode(ids, errors) for ids in batch]
