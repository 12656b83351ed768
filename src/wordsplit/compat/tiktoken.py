"""tiktoken 0.14's public API over wordsplit: ``import wordsplit.compat.tiktoken as tiktoken``.

What it has: ``get_encoding``, ``encoding_for_model``, ``encoding_name_for_model``,
``list_encoding_names``, the model → encoding tables (``MODEL_TO_ENCODING``,
``MODEL_PREFIX_TO_ENCODING``, equal to tiktoken 0.14's ``model.py``) and :class:`Encoding`
with every public method and property of tiktoken's, the private ones tiktoken's own tests
use (``_pat_str``, ``_mergeable_ranks``, ``_special_tokens``, ``_encode_bytes``,
``_encode_single_piece``, ``_encode_only_native_bpe``), tiktoken's exceptions (its
``ValueError``/``KeyError``/``AssertionError``, raised as wordsplit errors that subclass
them) and its pickling (a registered encoding pickles by name).

The ids are wordsplit's, which equal tiktoken's on every input (the test suite compares
them live). Encodings are wordsplit's registered vocabularies: the OpenAI ones under
tiktoken's names (``gpt2`` stays ``gpt2``), then ``qwen3`` and any vocabulary a plug-in
registers with :func:`wordsplit.register_vocab`. It does not read ``tiktoken_ext`` plug-ins
or ``TIKTOKEN_CACHE_DIR``: the OpenAI files are wordsplit's bundled copies.

What differs from tiktoken, on purpose: a lone surrogate in the text of
``encode_to_numpy`` and ``encode_with_unstable`` is encoded as U+FFFD (as ``encode`` does)
where tiktoken raises; a negative id given to a decode method raises ``KeyError`` (an id that
is not in the vocabulary) where tiktoken raises ``OverflowError``; an ``Encoding`` built from
``mergeable_ranks`` that lack some single bytes drops such a byte from its piece before merging,
as HF tokenizers does, where tiktoken panics at encode time.

>>> import wordsplit.compat.tiktoken as tiktoken
>>> enc = tiktoken.encoding_for_model("gpt-4o")
>>> enc.name, enc.encode("hello world"), enc.decode([24912, 2375])
('o200k_base', [24912, 2375], 'hello world')
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, AbstractSet, Collection, Literal, Sequence

import regex

from ..engines.arguments import without_surrogates
from ..errors import (
    CompatAssertionError,
    UnknownEncodingError,
    UnknownModelError,
    UnknownTokenError,
)
from ..options import TokenizerOptions
from ..specials import disallowed_error
from ..tokenizer import Tokenizer
from ..vocab import Vocab
from ..vocabs.models import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING, model_encoding  # noqa: F401 (tiktoken names them here)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]

#: tiktoken's own encodings, in the order its ``list_encoding_names`` gives them.
OPENAI_ENCODINGS = ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony")

# The 25 code points of Unicode White_Space: Rust's char::is_whitespace, which tiktoken's
# encode_with_unstable asks of the last character (str.isspace also says yes to U+001C–U+001F).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


class Encoding:
    """A tokenizer with tiktoken's ``Encoding`` API, backed by a wordsplit :class:`~wordsplit.Tokenizer`.

    Args:
        name: the encoding's name.
        pat_str: the split regex.
        mergeable_ranks: bytes of every BPE token → its rank (= id); a byte without a token is dropped before merging.
        special_tokens: special token text → id.
        explicit_n_vocab: if given, the number of tokens (mergeable and special), checked.

    Raises:
        CompatAssertionError: ``explicit_n_vocab`` does not match (an ``AssertionError``, as
            tiktoken's ``assert`` raises).
        VocabFormatError: the ranks or special tokens are not a valid vocabulary.

    >>> enc = get_encoding("gpt2")
    >>> custom = Encoding("gpt2_im", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
    ...                   special_tokens={**enc._special_tokens, "<|im_start|>": 50257})
    >>> custom.encode("<|im_start|>hi", allowed_special="all")
    [50257, 5303]
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        vocab = Vocab(name=name, ranks=mergeable_ranks, pattern=pat_str, special_tokens=special_tokens)
        if explicit_n_vocab:
            count = len(mergeable_ranks) + len(special_tokens)
            if count != explicit_n_vocab:
                raise CompatAssertionError(
                    f"explicit_n_vocab is {explicit_n_vocab} but the encoding has {count} tokens "
                    f"({len(mergeable_ranks)} mergeable, {len(special_tokens)} special)"
                )
        self._setup(name, TokenizerOptions().build(vocab))
        if explicit_n_vocab and self.max_token_value != explicit_n_vocab - 1:
            raise CompatAssertionError(
                f"explicit_n_vocab is {explicit_n_vocab} but the largest token id is {self.max_token_value}; "
                "ids must be 0..explicit_n_vocab-1"
            )
        self.__dict__["_mergeable_ranks"] = mergeable_ranks

    @classmethod
    def from_tokenizer(cls, name: str, tokenizer: Tokenizer) -> Encoding:
        """An Encoding named ``name`` over an existing wordsplit tokenizer (no copy of its tables).

        >>> from wordsplit import get_tokenizer
        >>> Encoding.from_tokenizer("qwen3", get_tokenizer("qwen3")).encode("hello world")
        [14990, 1879]
        """
        self = cls.__new__(cls)
        self._setup(name, tokenizer)
        return self

    def _setup(self, name: str, tokenizer: Tokenizer) -> None:
        vocab = tokenizer.vocab
        self.name = name
        self._tokenizer = tokenizer
        self._pat_str = vocab.pattern
        self._special_tokens = dict(vocab.special_tokens)
        # Added tokens (Qwen3's <think>…) are ids too; BPE ids come from the packed table,
        # which a cached vocabulary has without building its dict of ranks.
        _, ids, _ = vocab.packed()
        self.max_token_value = max(
            max(ids), max(self._special_tokens.values(), default=0), max(vocab.added_tokens.values(), default=0)
        )
        self._special_token_values = set(self._special_tokens.values())

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    @property
    def tokenizer(self) -> Tokenizer:
        """The wordsplit tokenizer doing the work."""
        return self._tokenizer

    @functools.cached_property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """Bytes of every BPE token → its rank (a dict, made on first use)."""
        return dict(self._tokenizer.vocab.ranks)

    # -- encoding ---------------------------------------------------------------------------

    def _policy(self, text_or_texts, allowed_special, disallowed_special) -> dict:
        """tiktoken's reading of ``allowed_special`` / ``disallowed_special``, as the keyword
        arguments of the wordsplit tokenizer's encode methods. A disallowed string that is not
        a special token is still searched for in the text, as tiktoken does."""
        if isinstance(disallowed_special, str) and disallowed_special == "all":
            # The two common calls go to the tokenizer's precomputed policies: set arithmetic
            # over o200k_harmony's 1,091 special tokens would cost more than a short encode.
            if isinstance(allowed_special, str) and allowed_special == "all":
                return {"allowed_special": "all"}
            if isinstance(allowed_special, (set, frozenset)) and not allowed_special:
                return {}
        allowed, disallowed = self._policy_sets(text_or_texts, allowed_special, disallowed_special)
        return {"allowed_special": allowed, "disallowed_special": disallowed}

    def _policy_sets(self, text_or_texts, allowed_special, disallowed_special) -> tuple[frozenset[str], frozenset[str]]:
        """The allowed and the disallowed special tokens (see :meth:`_policy`)."""
        specials = self.special_tokens_set
        if allowed_special == "all":
            allowed_special = specials
        if disallowed_special == "all":
            disallowed_special = specials - allowed_special
        allowed = frozenset(allowed_special) & frozenset(specials)
        disallowed = frozenset(disallowed_special)
        others = disallowed - specials
        if others:
            pattern = _literal_regex(frozenset(others))
            for text in [text_or_texts] if isinstance(text_or_texts, str) else text_or_texts:
                match = pattern.search(text) if isinstance(text, str) else None
                if match:
                    raise disallowed_error(match.group())
        return allowed, disallowed & specials

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006 (tiktoken's signature)
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encode ``text``; a special token in it raises ``ValueError`` unless allowed.

        >>> get_encoding("gpt2").encode("<|endoftext|>", allowed_special="all")
        [50256]
        """
        return self._tokenizer.encode(text, **self._policy(text, allowed_special, disallowed_special))

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` with special tokens as plain text.

        >>> get_encoding("gpt2").encode_ordinary("hello world")
        [31373, 995]
        """
        return self._tokenizer.encode_ordinary(text)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> "npt.NDArray[np.uint32]":
        """Encode into a read-only numpy uint32 array, without a Python int per token.

        >>> get_encoding("gpt2").encode_to_numpy("hello world").tolist()
        [31373, 995]
        """
        return self._tokenizer.encode_to_numpy(text, **self._policy(text, allowed_special, disallowed_special))

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """Encode many texts with special tokens as plain text (on native threads).

        >>> get_encoding("gpt2").encode_ordinary_batch(["hello world", "goodbye world"])
        [[31373, 995], [11274, 16390, 995]]
        """
        return self._tokenizer.encode_batch(text, num_threads=num_threads, disallowed_special=())

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """Encode many texts (on native threads); see :meth:`encode` for the special tokens.

        >>> get_encoding("gpt2").encode_batch(["hello world", "goodbye world"])
        [[31373, 995], [11274, 16390, 995]]
        """
        return self._tokenizer.encode_batch(
            text, num_threads=num_threads, **self._policy(text, allowed_special, disallowed_special)
        )

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The stable tokens of ``text`` and every token sequence that may complete its
        unstable end, as tiktoken computes them (the completions are in no particular order).

        >>> stable, completions = get_encoding("gpt2").encode_with_unstable("hello fanta")
        >>> stable, [8842] in completions
        ([31373], True)
        """
        allowed, disallowed = self._policy_sets(text, allowed_special, disallowed_special)
        if disallowed and (match := _literal_regex(disallowed).search(text)):
            raise disallowed_error(match.group())
        tokens, last_len = self._encode_with_last_piece(text, allowed)
        if last_len == 0:  # the text ends with a special token (or is empty): nothing unstable
            return tokens, []
        last_len = self._increase_last_piece_token_len(tokens, last_len)
        unstable = self.decode_bytes(tokens[len(tokens) - last_len:])
        del tokens[len(tokens) - last_len:]
        if not unstable:
            return tokens, []
        completions: set[tuple[int, ...]] = set()
        ranks = self._tokenizer.vocab.ranks
        # Every single token that starts with the unstable bytes.
        for token in self._tokens_starting_with(unstable):
            completions.add((ranks[token],))
        # A token straddling the end: the unstable bytes up to i, then any token starting with
        # the rest; retokenized (with the split regex when it is valid UTF-8, else plain BPE)
        # and cut as soon as it covers the unstable bytes.
        possibilities = [
            unstable[:i] + token for i in range(1, len(unstable)) for token in self._tokens_starting_with(unstable[i:])
        ]
        texts, undecodable = [], []
        for possibility in possibilities:
            try:
                texts.append(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                undecodable.append(possibility)
        # One batch call for the ones that are text (split with the regex, as tiktoken does).
        encodings = self._tokenizer.encode_batch(texts, disallowed_special=()) if texts else []
        encodings += [self._byte_pair_encode(possibility) for possibility in undecodable]
        token_bytes = self._tokenizer.vocab.token_bytes
        for encoded in encodings:
            seq, covered = [], 0
            for token_id in encoded:
                seq.append(token_id)
                covered += len(token_bytes[token_id])
                if covered >= len(unstable):
                    break
            completions.add(tuple(seq))
        # "\s+(?!\S)" splits a run of whitespace before its last character once more text
        # follows, so that last character may become a token of its own.
        if len(unstable) > 1:
            last = _last_char(unstable)
            if last is not None and last in _WHITE_SPACE and len(last.encode("utf-8")) < len(unstable):
                cut = len(unstable) - len(last.encode("utf-8"))
                completions.add(tuple(self._byte_pair_encode(unstable[:cut]) + self._byte_pair_encode(unstable[cut:])))
        return tokens, [list(seq) for seq in completions]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text that is exactly one token (special tokens included).

        Raises:
            UnknownTokenError: it is not one token (a ``KeyError``, as in tiktoken).

        >>> get_encoding("gpt2").encode_single_token("hello")
        31373
        """
        piece = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
        vocab = self._tokenizer.vocab
        token = vocab.ranks.get(piece)
        if token is not None:
            return token
        try:
            token = vocab.all_special_literals.get(piece.decode("utf-8"))
        except UnicodeDecodeError:
            token = None
        if token is None:
            raise UnknownTokenError(f"{text_or_bytes!r} is not a single token of the encoding {self.name!r}")
        return token

    # -- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The concatenated bytes of ``tokens``.

        >>> get_encoding("gpt2").decode_bytes([31373, 995])
        b'hello world'
        """
        return self._tokenizer.decode_bytes(tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decode ``tokens`` to text; invalid UTF-8 is handled by ``errors`` (``bytes.decode``'s).

        >>> get_encoding("gpt2").decode([31373, 995])
        'hello world'
        """
        if errors in ("replace", "strict"):
            return self._tokenizer.decode(tokens, errors=errors)
        return self._tokenizer.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included).

        Raises:
            UnknownTokenError: not a token id (a ``KeyError``, as in tiktoken).

        >>> get_encoding("gpt2").decode_single_token_bytes(31373)
        b'hello'
        """
        return self._tokenizer.id_to_token(token)

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token.

        >>> get_encoding("gpt2").decode_tokens_bytes([31373, 995])
        [b'hello', b' world']
        """
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``tokens`` and the character offset where each token starts; a token
        that starts inside a character gets the offset of that character.

        Raises:
            UnicodeDecodeError: the tokens are not valid UTF-8.

        >>> get_encoding("gpt2").decode_with_offsets([31373, 995])
        ('hello world', [0, 5])
        """
        pieces = self.decode_tokens_bytes(tokens)
        offsets, chars = [], 0
        for piece in pieces:
            # A piece starting with a continuation byte begins inside the previous character.
            starts_inside = 1 if piece and 0x80 <= piece[0] < 0xC0 else 0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(1 for byte in piece if not 0x80 <= byte < 0xC0)  # one per character start
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """Decode many token lists (on native threads).

        >>> get_encoding("gpt2").decode_batch([[31373], [995]])
        ['hello', ' world']
        """
        if errors in ("replace", "strict"):
            return self._tokenizer.decode_batch(batch, errors=errors, num_threads=num_threads)
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """The bytes of many token lists.

        >>> get_encoding("gpt2").decode_bytes_batch([[31373], [995]])
        [b'hello', b' world']
        """
        return [self._tokenizer.decode_bytes(tokens) for tokens in batch]

    # -- miscellaneous ----------------------------------------------------------------------

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted.

        >>> len(get_encoding("gpt2").token_byte_values())
        50256
        """
        return list(self._sorted_token_bytes)

    @functools.cached_property
    def _sorted_token_bytes(self) -> tuple[bytes, ...]:
        return tuple(sorted(self._tokenizer.vocab.ranks))

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` if the encoding has none).

        >>> get_encoding("cl100k_base").eot_token
        100257
        """
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        """The special token literals.

        >>> sorted(get_encoding("gpt2").special_tokens_set)
        ['<|endoftext|>']
        """
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token.

        Raises:
            CompatAssertionError: ``token`` is not an int (an ``AssertionError``, as in tiktoken).

        >>> get_encoding("gpt2").is_special_token(50256)
        True
        """
        if not isinstance(token, int):
            raise CompatAssertionError(f"is_special_token takes an int token id, not {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1``.

        >>> get_encoding("p50k_base").n_vocab
        50281
        """
        return self.max_token_value + 1

    # -- private (tiktoken's tests use these) ------------------------------------------------

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE on the bytes as one piece: no split, no special tokens.

        >>> get_encoding("gpt2")._encode_single_piece("helloqqqq")
        [31373, 38227, 38227]
        """
        piece = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        token = self._tokenizer.vocab.ranks.get(piece)
        return [token] if token is not None else self._byte_pair_encode(piece)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """Encode with the split done by the Python spanner, then BPE on each piece.

        >>> get_encoding("gpt2")._encode_only_native_bpe("hello world")
        [31373, 995]
        """
        ids: list[int] = []
        for piece in self._python_engine.spanner.split(text):
            ids.extend(self._encode_single_piece(piece.encode("utf-8")))
        return ids

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encode bytes that may not be valid UTF-8, as tiktoken does: the valid prefix is
        encoded as text, then its last piece and the invalid rest are BPE'd together.

        >>> get_encoding("gpt2")._encode_bytes(b"hello \\xe2\\x80")
        [31373, 564]
        """
        try:
            return self.encode_ordinary(text.decode("utf-8"))
        except UnicodeDecodeError as exc:
            valid = exc.start
        tokens, last_len = self._encode_with_last_piece(text[:valid].decode("utf-8"), frozenset())
        last_len = self._increase_last_piece_token_len(tokens, last_len)
        if tokens and last_len > 0:
            unstable = self.decode_bytes(tokens[len(tokens) - last_len:]) + text[valid:]
            del tokens[len(tokens) - last_len:]
        else:
            unstable = text[valid:]
        if unstable:
            token = self._tokenizer.vocab.ranks.get(unstable)
            tokens.extend([token] if token is not None else self._byte_pair_encode(unstable))
        return tokens

    @functools.cached_property
    def _python_engine(self):
        return self._tokenizer.python_engine()

    def _encode_with_last_piece(self, text: str, allowed: frozenset[str]) -> tuple[list[int], int]:
        """The ids of ``text`` (specials in ``allowed`` as tokens, other specials as text) and
        how many of them the last split piece gave: 0 when the text ends with a special token."""
        text = without_surrogates(text)
        tokens = self._tokenizer.encode(text, allowed_special=allowed, disallowed_special=())
        vocab = self._tokenizer.vocab
        active = {**{t: vocab.special_tokens[t] for t in allowed}, **vocab.added_tokens}
        tail = text
        if active:
            # The literal scan of the engines (HF's added-token flags included): the text after
            # the last literal that is a token; an inactive special literal is text.
            from ..specials import LiteralScan

            spans = LiteralScan(vocab.all_special_literals, vocab.literal_flags).spans(text, active.__contains__)
            tail = text[spans[-1][0]:] if spans and spans[-1][2] is None else ("" if spans else text)
        if not tail:
            return tokens, 0
        engine = self._python_engine
        pieces = engine.spanner.split(engine.normalize(tail))
        return tokens, len(self._encode_single_piece(pieces[-1].encode("utf-8"))) if pieces else 0

    def _increase_last_piece_token_len(self, tokens: list[int], last_len: int) -> int:
        """tiktoken's widening of the unstable end over whitespace tokens: a split before
        whitespace may disappear once more text follows (cl100k's ``\\s*[\\r\\n]+``)."""

        def all_space(token: int) -> bool:
            return all(byte in b" \n\t" for byte in self.decode_single_token_bytes(token))

        if last_len > 0 and all_space(tokens[len(tokens) - last_len]):
            while last_len < len(tokens) and all_space(tokens[len(tokens) - last_len - 1]):
                last_len += 1
        return last_len

    def _byte_pair_encode(self, piece: bytes) -> list[int]:
        """Plain rank-based BPE of ``piece`` (no whole-piece lookup first): merge the adjacent
        pair whose merged bytes have the lowest rank, leftmost on ties, until none merges."""
        ranks = self._tokenizer.vocab.ranks
        parts = [piece[i:i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            best, best_rank = -1, None
            for i in range(len(parts) - 1):
                rank = ranks.get(parts[i] + parts[i + 1])
                if rank is not None and (best_rank is None or rank < best_rank):
                    best, best_rank = i, rank
            if best < 0:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        return [ranks[part] for part in parts]

    def _tokens_starting_with(self, prefix: bytes) -> list[bytes]:
        """The mergeable tokens that start with ``prefix``, in byte order."""
        import bisect

        table = self._sorted_token_bytes
        start = bisect.bisect_left(table, prefix)
        end = start
        while end < len(table) and table[end].startswith(prefix):
            end += 1
        return list(table[start:end])

    # -- pickling ---------------------------------------------------------------------------

    def __getstate__(self) -> object:
        # A registered encoding pickles as its name, as tiktoken does.
        if self is _ENCODINGS.get(self.name):
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        self.__init__(**value)


def _last_char(data: bytes) -> str | None:
    """The last character of ``data`` if it ends with a complete UTF-8 character, else None."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            return data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


@functools.lru_cache(maxsize=128)
def _literal_regex(literals: frozenset[str]) -> "regex.Pattern[str]":
    # Longest first, so an alternation picks the longest literal at a position.
    return regex.compile("|".join(regex.escape(literal) for literal in sorted(literals, key=len, reverse=True)))


# -- the registry -----------------------------------------------------------------------------

_lock = threading.RLock()
_ENCODINGS: dict[str, Encoding] = {}


def list_encoding_names() -> list[str]:
    """tiktoken's encoding names, then every other vocabulary wordsplit has registered
    (``qwen3``, plug-ins).

    >>> list_encoding_names()[:3]
    ['gpt2', 'r50k_base', 'p50k_base']
    """
    from ..vocabs import list_vocabs

    return [*OPENAI_ENCODINGS, *(name for name in list_vocabs() if name not in OPENAI_ENCODINGS)]


def get_encoding(encoding_name: str) -> Encoding:
    """The encoding of a registered name, made once per process.

    Raises:
        UnknownEncodingError: not a registered name (a ``ValueError``, as tiktoken raises).

    >>> get_encoding("gpt2").name
    'gpt2'
    """
    if not isinstance(encoding_name, str):
        raise UnknownEncodingError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    encoding = _ENCODINGS.get(encoding_name)
    if encoding is not None:
        return encoding
    with _lock:
        encoding = _ENCODINGS.get(encoding_name)
        if encoding is not None:
            return encoding
        names = list_encoding_names()
        if encoding_name not in names:
            from ..errors import closest

            raise UnknownEncodingError(
                f"Unknown encoding {encoding_name!r}; known: {', '.join(names)}.{closest(encoding_name, names)} "
                "A plug-in adds one with wordsplit.register_vocab."
            )
        from ..vocabs import load_vocab

        encoding = Encoding.from_tokenizer(encoding_name, TokenizerOptions().build(load_vocab(encoding_name)))
        _ENCODINGS[encoding_name] = encoding
        return encoding


# -- models -----------------------------------------------------------------------------------
# The tables live with the vocabularies (load_vocab suggests an encoding for a model's name).

def encoding_name_for_model(model_name: str) -> str:
    """The encoding name of a model: an exact name, else the first matching prefix.

    Raises:
        UnknownModelError: no entry matches (a ``KeyError``, as tiktoken raises).

    >>> encoding_name_for_model("gpt-4-0314")
    'cl100k_base'
    """
    encoding_name = model_encoding(model_name)
    if encoding_name is not None:
        return encoding_name
    raise UnknownModelError(
        f"Could not automatically map {model_name!r} to a tokeniser. "
        "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect."
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding of a model (see :func:`encoding_name_for_model`).

    >>> encoding_for_model("gpt-3.5-turbo").name
    'cl100k_base'
    """
    return get_encoding(encoding_name_for_model(model_name))
