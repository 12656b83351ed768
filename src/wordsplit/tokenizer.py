"""Tokenizer: text ⇄ token ids for one vocabulary, with tiktoken's API.

The encode pipeline: split out special/added token literals (on the raw text, as HF does
for its non-normalized added tokens) → normalize each plain segment (none | NFC) → spanner
cuts it into pieces → span encoder turns each piece's UTF-8 bytes into ids. Decode joins the
token bytes and decodes UTF-8. Build one with :class:`~wordsplit.options.TokenizerOptions`.

>>> from wordsplit import get_tokenizer
>>> tok = get_tokenizer("qwen3")
>>> tok.encode("hello world")
[14990, 1879]
>>> tok.decode([14990, 1879])
'hello world'
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

from .errors import DecodeInputError, DisallowedSpecialError, EncodeInputError, UnknownTokenError
from .specials import AllowedSpecial, DisallowedSpecial, SpecialSplitter, resolve_special_policy
from .vocab import Vocab

if TYPE_CHECKING:
    from .apps.explain import Explanation

# Pieces seen recently and their ids; bounded so memory stays flat on huge inputs.
PIECE_CACHE_SIZE = 1 << 16


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        hint = " (decode bytes to str first, e.g. data.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise EncodeInputError(f"encode takes a str, not {type(text).__name__}{hint}")
    return text


def _without_surrogates(text: str) -> str:
    """Join surrogate pairs and replace lone surrogates with U+FFFD, as tiktoken does."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _rebuild_tokenizer(vocab: Vocab, spanner: str, encoder: str, backend: str, num_threads: Optional[int]) -> Tokenizer:
    """The unpickler of :class:`Tokenizer`."""
    from .options import TokenizerOptions  # here: options imports this module

    return TokenizerOptions(spanner=spanner, encoder=encoder, backend=backend, num_threads=num_threads).build(vocab)


class Tokenizer:
    """Encodes and decodes with one vocabulary; immutable and safe to share between threads.

    Args:
        vocab: the vocabulary.
        spanner: a zero-argument factory of an object with ``split(text) -> list[str]`` (see
            :mod:`wordsplit.spanners`); called on first use, since a native pipeline needs none.
        encoder: an object with ``encode_piece(bytes) -> list[int]`` (see :mod:`wordsplit.encoders`).
        normalize: the vocabulary's normalizer, ``str -> str``.
        backend: ``"python"`` or ``"native"``, for display.
        num_threads: default thread count for the batch methods (None: all cores).
        native_tables: the vocabulary's ``wordsplit._native.Tables`` (native decode), or None.
        native_pipeline: a ``wordsplit._native.Pipeline`` doing the whole encode in one call
            (scanner, encoder, specials, NFC), or None.
        spanner_name: the spanner's registry name, for display.
    """

    def __init__(self, vocab: Vocab, *, spanner: Callable[[], object], encoder, normalize: Callable[[str], str],
                 backend: str = "python", num_threads: Optional[int] = None, native_tables=None,
                 native_pipeline=None, spanner_name: str = "regex") -> None:
        self.vocab = vocab
        self.spanner_name = spanner_name
        self._make_spanner = spanner
        self._spanner = None
        self.encoder = encoder
        self.backend = backend
        self.num_threads = num_threads
        self._normalize = normalize
        self._specials = SpecialSplitter(vocab)
        self._cache: dict[bytes, list[int]] = {}
        self._native_tables = native_tables
        self._pipeline = native_pipeline
        self._policies: dict[tuple[frozenset[str], frozenset[str]], object] = {}
        specials = frozenset(vocab.special_tokens)
        self._policy_all = (specials, frozenset())  # allowed_special="all"
        self._policy_none = (frozenset(), specials)  # the defaults
        # A native encoder takes all pieces of a segment in one call.
        self._encode_pieces = getattr(encoder, "encode_pieces", None)

    @property
    def spanner(self):
        """The Python spanner (built on first use)."""
        if self._spanner is None:
            self._spanner = self._make_spanner()
        return self._spanner

    def __reduce__(self):
        """Pickle as the vocabulary plus the options that rebuild this tokenizer, so it can be
        sent to worker processes (multiprocessing, ``datasets.map(num_proc=...)``).

        >>> import pickle
        >>> from wordsplit import get_tokenizer
        >>> pickle.loads(pickle.dumps(get_tokenizer("qwen3"))).encode("hello world")
        [14990, 1879]
        """
        return _rebuild_tokenizer, (self.vocab, self.spanner_name, self.encoder.name, self.backend, self.num_threads)

    def __repr__(self) -> str:
        return (
            f"Tokenizer({self.vocab.name!r}, spanner={self.spanner_name!r}, "
            f"encoder={getattr(self.encoder, 'name', '?')!r}, backend={self.backend!r})"
        )

    # -- encode ---------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encode ``text`` to token ids.

        Args:
            text: the text.
            allowed_special: special tokens to encode as such: ``"all"`` or a set of literals.
            disallowed_special: special literals that raise if found (default: every special
                token not allowed); ``()`` encodes them as plain text.

        Raises:
            EncodeInputError: ``text`` is not a ``str``.
            DisallowedSpecialError: the text contains a disallowed special token.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("cl100k_base").encode("hi<|endoftext|>", allowed_special="all")
        [6151, 100257]
        """
        text = _check_text(text)
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        if self._pipeline is not None:
            return self._native_encode(self._pipeline.encode, text, allowed, disallowed)
        if disallowed:
            self._specials.check(text, disallowed)
        return self._encode(text, allowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode with every special token as plain text (added tokens are still matched).

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("gpt2").encode_ordinary("<|endoftext|>")
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        text = _check_text(text)
        if self._pipeline is not None:
            return self._native_encode(self._pipeline.encode, text, frozenset(), frozenset())
        return self._encode(text, frozenset())

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        """Encode many texts; same arguments as :meth:`encode`.

        Args:
            num_threads: at most this many native threads (default: the tokenizer's, else all
                cores); a batch under 32 KB of text runs on the calling thread alone. The
                Python backend encodes in order on the calling thread.
        """
        texts = texts if type(texts) is list else list(texts)
        ids = self._native_batch("encode_batch", texts, num_threads, allowed_special, disallowed_special)
        if ids is not None:
            return ids
        return [self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in texts]

    def encode_batch_flat(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[memoryview, memoryview]:
        """Encode many texts into one flat buffer, without a Python int per token.

        Returns:
            ``(ids, offsets)``: memoryviews of uint32 ids and uint64 offsets; the ids of text
            ``i`` are ``ids[offsets[i]:offsets[i + 1]]``. ``numpy.asarray`` wraps them
            without copying.

        >>> from wordsplit import get_tokenizer
        >>> ids, offsets = get_tokenizer("qwen3").encode_batch_flat(["hello world", "hi"])
        >>> ids.tolist(), offsets.tolist()
        ([14990, 1879, 6023], [0, 2, 3])
        """
        texts = texts if type(texts) is list else list(texts)
        flat = self._native_batch("encode_batch_flat", texts, num_threads, allowed_special, disallowed_special)
        if flat is not None:
            return memoryview(flat[0]).cast("I"), memoryview(flat[1]).cast("Q")
        batch = self.encode_batch(texts, num_threads=num_threads, allowed_special=allowed_special,
                                  disallowed_special=disallowed_special)
        flat = array("I", [i for ids in batch for i in ids])
        offsets = array("Q", [0])
        for ids in batch:
            offsets.append(offsets[-1] + len(ids))
        return memoryview(flat), memoryview(offsets)

    def count(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> int:
        """The number of tokens ``encode`` would return.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").count("hello world")
        2
        """
        if self._pipeline is not None:
            allowed, disallowed = self._resolve(allowed_special, disallowed_special)
            return self._native_encode(self._pipeline.count, _check_text(text), allowed, disallowed)
        return len(self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special))

    def _resolve(self, allowed_special, disallowed_special) -> tuple[frozenset[str], frozenset[str]]:
        """resolve_special_policy, with the two common calls precomputed (o200k_harmony has
        1,091 special tokens: set arithmetic per call would cost more than a short encode)."""
        if isinstance(disallowed_special, str) and disallowed_special == "all":
            if isinstance(allowed_special, str) and allowed_special == "all":
                return self._policy_all
            if isinstance(allowed_special, (set, frozenset)) and not allowed_special:
                return self._policy_none
        return resolve_special_policy(self.vocab, allowed_special, disallowed_special)

    def _policy(self, allowed: frozenset[str], disallowed: frozenset[str]):
        """The native pipeline's compiled form of a special-token policy (cached)."""
        key = (allowed, disallowed)
        policy = self._policies.get(key)
        if policy is None:
            everything = allowed == frozenset(self.vocab.special_tokens) and not disallowed
            policy = self._pipeline.policy(None if everything else list(allowed), list(disallowed))
            if len(self._policies) > 64:
                self._policies.clear()
            self._policies[key] = policy
        return policy

    def _native_batch(self, method: str, texts: list[str], num_threads, allowed_special, disallowed_special):
        """Run a batch method of the native pipeline on native threads; None when there is no
        pipeline or a text needs the per-text path (a lone surrogate to fix, a disallowed
        special token to name in the error). The native call checks that every text is a str
        (a Python loop here would cost as much as encoding a short text)."""
        if self._pipeline is None:
            return None
        allowed, disallowed = self._resolve(allowed_special, disallowed_special)
        try:
            return getattr(self._pipeline, method)(texts, self._policy(allowed, disallowed), num_threads or self.num_threads)
        except (UnicodeEncodeError, DisallowedSpecialError):
            return None
        except TypeError:
            culprits = [text for text in texts if not isinstance(text, str)][:1]
            if not culprits:
                raise
        _check_text(culprits[0])  # out of the except block: an EncodeInputError without pyo3's chained one

    def _native_encode(self, call, text: str, allowed: frozenset[str], disallowed: frozenset[str]):
        """Run a pipeline method; fix surrogates and word the disallowed-special error in Python."""
        policy = self._policy(allowed, disallowed)
        try:
            return call(text, policy)
        except UnicodeEncodeError:
            return call(_without_surrogates(text), policy)
        except DisallowedSpecialError:
            self._specials.check(text, disallowed)  # raises the full message, with the fix
            raise

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        text = _without_surrogates(text)
        ids: list[int] = []
        for segment, token in self._specials.split(text, allowed):
            if token is not None:
                ids.append(token)
            else:
                self._encode_plain(self._normalize(segment), ids)
        return ids

    def _encode_plain(self, text: str, out: list[int]) -> None:
        if self._encode_pieces is not None:
            out.extend(self._encode_pieces([piece.encode("utf-8") for piece in self.spanner.split(text)]))
            return
        cache = self._cache
        encode_piece = self.encoder.encode_piece
        for piece in self.spanner.split(text):
            data = piece.encode("utf-8")
            ids = cache.get(data)
            if ids is None:
                ids = encode_piece(data)
                if len(cache) >= PIECE_CACHE_SIZE:
                    cache.clear()
                cache[data] = ids
            out.extend(ids)

    def explain(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> "Explanation":
        """The BPE trace of ``text``, pass by pass; see :func:`wordsplit.apps.explain.explain`.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").explain("hello").ids
        [14990]
        """
        from .apps.explain import explain  # imported here: wordsplit.apps.explain imports this module

        return explain(self, text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    # -- decode ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The concatenated bytes of ``ids``.

        Raises:
            UnknownTokenError: an id outside the vocabulary or unused by it.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").decode_bytes([14990, 1879])
        b'hello world'
        """
        table = self.vocab.token_bytes
        if not isinstance(ids, list):
            ids = list(ids)
        if self._native_tables is not None:
            try:
                return self._native_tables.decode_bytes(ids)
            except (UnknownTokenError, TypeError, OverflowError):
                pass  # the slow path below names the offending id precisely
        try:
            # A negative id would index from the end: rule it out before the fast join.
            if not ids or min(ids) >= 0:
                return b"".join([table[i] for i in ids])
        except (TypeError, IndexError):
            pass
        # Slow path: find the offending id and say what is wrong with it.
        return b"".join([self.id_to_token(i) for i in ids])

    def decode(self, ids: Iterable[int], *, errors: str = "replace") -> str:
        """Decode ``ids`` to text; invalid UTF-8 becomes U+FFFD unless ``errors="strict"``.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").decode([14990, 1879])
        'hello world'
        """
        if self._native_tables is not None and errors == "replace":
            if not isinstance(ids, list):
                ids = list(ids)
            try:
                return self._native_tables.decode_text(ids)
            except (UnknownTokenError, TypeError, OverflowError):
                pass  # decode_bytes names the offending id precisely
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, errors: str = "replace",
                     num_threads: Optional[int] = None) -> list[str]:
        """Decode many id sequences (on native threads when the extension is built)."""
        batch = [list(ids) for ids in batch]
        if self._native_tables is not None:
            try:
                return [b.decode("utf-8", errors=errors)
                        for b in self._native_tables.decode_batch_bytes(batch, num_threads or self.num_threads)]
            except (UnknownTokenError, TypeError, OverflowError):
                pass  # the per-list path below names the offending id precisely
        return [self.decode(ids, errors=errors) for ids in batch]

    # -- vocabulary -----------------------------------------------------------------------

    def id_to_token(self, token_id: int) -> bytes:
        """The bytes of one token (a special token's UTF-8 text).

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").id_to_token(151667)
        b'<think>'
        """
        if not isinstance(token_id, int) or isinstance(token_id, bool):
            raise DecodeInputError(f"token ids are ints, got {token_id!r} ({type(token_id).__name__})")
        table = self.vocab.token_bytes
        if not 0 <= token_id < len(table):
            raise UnknownTokenError(
                f"token id {token_id} is outside the vocabulary {self.vocab.name!r} (ids 0..{len(table) - 1})"
            )
        piece = table[token_id]
        if piece is None:
            raise UnknownTokenError(f"token id {token_id} is unused in the vocabulary {self.vocab.name!r}")
        return piece

    def token_to_id(self, token: str | bytes) -> int:
        """The id of a token given as its bytes, or as text (special and added literals too).

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").token_to_id("<|im_end|>")
        151645
        """
        if isinstance(token, str):
            literal = self.vocab.all_special_literals.get(token)
            if literal is not None:
                return literal
            key = token.encode("utf-8")
        elif isinstance(token, (bytes, bytearray)):
            key = bytes(token)
        else:
            raise DecodeInputError(f"token_to_id takes str or bytes, not {type(token).__name__}")
        token_id = self.vocab.ranks.get(key)
        if token_id is None:
            raise UnknownTokenError(f"{token!r} is not a single token of the vocabulary {self.vocab.name!r}")
        return token_id

    @property
    def n_vocab(self) -> int:
        """The vocabulary size (largest id + 1, or the declared size)."""
        return self.vocab.n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token literals → ids (Qwen3's non-special added tokens are not included)."""
        return dict(self.vocab.special_tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special token literals, as tiktoken names it."""
        return set(self.vocab.special_tokens)

    @property
    def eos_token_id(self) -> Optional[int]:
        """The end-of-sequence id (``<|endoftext|>`` for OpenAI, ``<|im_end|>`` for Qwen3)."""
        return self.vocab.eos_token_id

    eot_token = eos_token_id
