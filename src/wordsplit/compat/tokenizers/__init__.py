r"""HuggingFace ``tokenizers``' ``Tokenizer`` API over wordsplit, for the files wordsplit loads:
byte-level BPE (GPT-2, Qwen, Llama 3), SentencePiece-style BPE with byte fallback (Llama 2,
Mistral, Gemma), the word models WordPiece and WordLevel (BERT, MiniLM, BGE, E5...), and
Unigram (T5, ALBERT, XLM-R, Marian, the files transformers converts from SentencePiece models):
``from wordsplit.compat.tokenizers import Tokenizer``.

What it has: :class:`Tokenizer` with ``from_file``, ``from_str``, ``from_buffer``,
``from_pretrained`` (through wordsplit's HuggingFace download and disk cache), ``encode``
(a text, a pair, or pre-tokenized words; ``add_special_tokens``), ``encode_batch``,
``encode_batch_fast``, ``decode``, ``decode_batch``, ``token_to_id``, ``id_to_token``,
``get_vocab``, ``get_vocab_size``, ``num_special_tokens_to_add``, ``post_process``,
``encode_special_tokens``, truncation and padding (the file's ``truncation`` and ``padding``,
``enable_truncation``, ``no_truncation``, ``enable_padding``, ``no_padding`` and the
``truncation`` and ``padding`` properties), ``to_str`` and ``save``;
:class:`~wordsplit.compat.tokenizers.encoding.Encoding` with every field, map and operation of
HF's (``overflowing`` included); and :class:`decoders.DecodeStream
<wordsplit.compat.tokenizers.decoders.DecodeStream>`.

Each step runs as HF runs it: the texts' encodings are truncated
(:mod:`~wordsplit.compat.tokenizers.truncation`: the strategies, direction, stride and
overflowing parts), the post-processor adds its special tokens and type ids to them and to
their overflowing parts (:mod:`wordsplit.postprocess`), then each encoding is padded, and a
batch once more to its longest (:mod:`~wordsplit.compat.tokenizers.padding`). Offsets are
HF's character offsets: every byte piece of one character gets that character's offsets, and
text a normalizer changed is aligned as HF aligns it (:mod:`wordsplit.offsets`). Tokens are
spelled as the file's vocabulary spells them (``"Ġworld"``, ``"▁world"``, ``"##ing"``). A
Unigram file's texts are encoded step by step as HF encodes them
(:mod:`~wordsplit.compat.tokenizers.unigram`: its words, an unknown token spelled as its text,
byte fallback's tokens with their run's offsets).

What it does not do: training, ``add_tokens``/``add_special_tokens`` (a wordsplit vocabulary
is immutable), and the ``normalizer``/``pre_tokenizer``/``model`` component objects. Files
wordsplit does not load are refused as it refuses them, and so are decoders it does not run
exactly (:mod:`~wordsplit.compat.tokenizers.decoding` says which it runs). Where HF panics (a
truncation stride not below the length it truncates to) :class:`TruncationError` is raised.

>>> from wordsplit import load_vocab
>>> from wordsplit.training.save import tokenizer_json
>>> from wordsplit.compat.tokenizers import Tokenizer
>>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
>>> enc = tok.encode("Hello world")
>>> enc.ids, enc.tokens, enc.offsets
([9707, 1879], ['Hello', 'Ġworld'], [(0, 5), (5, 11)])
>>> tok.enable_truncation(1, stride=0)
>>> enc = tok.encode("Hello world")
>>> enc.ids, [o.ids for o in enc.overflowing]
([9707], [[1879]])
"""

from __future__ import annotations

import json
import operator
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ...engines.decoding import wordpiece_text
from ...errors import EncodeInputError, UnsupportedTokenizerError
from ...formats.bytelevel import BYTE_TO_CHAR, CHAR_TO_BYTE
from ...postprocess import Parts, PostProcessor, default_process, read_post_processor
from ...vocab import LSTRIP, RSTRIP, Vocab
from .decoding import metaspace_text, read_decoding
from .encoding import Encoding, matched_literal
from .files import check_sentencepiece, model_vocab, read_vocab
from .padding import PaddingParams, pad_encodings
from .stripped import NormalizedStrings
from .truncation import TruncationError, TruncationParams, truncate_encodings, usize_sub
from .unigram import UnigramTexts, is_unigram

__all__ = ["Encoding", "Tokenizer", "TruncationError", "read_vocab"]

TextInput = str
PreTokenizedInput = Sequence[str]
InputSequence = Union[TextInput, PreTokenizedInput]


def _hf_decode_bytes(text: str) -> bytes:
    """HF's ByteLevel decoder on one token string: its byte-level characters as bytes, or its
    UTF-8 if any character is not one (an added token's text such as ``"<|im_end|>"``)."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in text)
    except KeyError:
        return text.encode("utf-8")


class Tokenizer:
    """A HuggingFace ``tokenizers.Tokenizer`` look-alike over a wordsplit tokenizer; build one
    with :meth:`from_file`, :meth:`from_str`, :meth:`from_buffer` or :meth:`from_pretrained`.

    Args:
        spec: the parsed ``tokenizer.json``.
        vocab: its wordsplit vocabulary.
        json_text: the file's text (:meth:`to_str` gives it back while the settings are the file's).
        options: :class:`~wordsplit.TokenizerOptions` for the wordsplit tokenizer (default: auto).

    Raises:
        VocabFormatError, UnsupportedTokenizerError: the file cannot be used (see
            :mod:`wordsplit.formats.hf`), its ``truncation`` or ``padding`` is malformed, or it
            has a decoder wordsplit does not run (:mod:`~wordsplit.compat.tokenizers.decoding`).
    """

    def __init__(self, spec: dict, vocab: Vocab, *, json_text: str, options=None, source: str = "tokenizer.json"):
        from ...options import TokenizerOptions

        self._setup(spec, (options or TokenizerOptions()).build(vocab), json_text=json_text, source=source)
        self.encode_special_tokens = False

    def _setup(self, spec: dict, tok, *, json_text: str, source: str) -> None:
        """The state of a tokenizer of ``spec`` encoding with the wordsplit tokenizer ``tok``.

        Raises:
            UnsupportedTokenizerError: a decoder wordsplit does not run exactly
                (:mod:`~wordsplit.compat.tokenizers.decoding`), or a SentencePiece-style file
                whose words or byte tokens HF would read otherwise
                (:func:`~wordsplit.compat.tokenizers.files.check_sentencepiece`).
            VocabFormatError: a malformed ``truncation`` or ``padding``.
        """
        from ...formats.hf_sentencepiece import is_sentencepiece_style
        from ...spec import CharacterBpe, Unigram, WordLevel, WordPiece

        self._truncation = self._file_truncation = TruncationParams.from_json(spec.get("truncation"), source)
        self._padding = self._file_padding = PaddingParams.from_json(spec.get("padding"), source)
        self._decoding = read_decoding(spec.get("decoder"), source)
        self._byte_level_decoder = self._decoding.kind == "byte-level"
        # A SentencePiece-style file's tokens are written as in its vocab ("▁Hello", "<0x0A>").
        self._sentencepiece = is_sentencepiece_style(spec, source)
        # A SentencePiece BPE pipeline's words are its stretches (its pieces are finer); those of
        # a BPE without byte fallback after Metaspace (CharacterBpe) are its pieces, as HF's.
        self._stretch_words_ids = self._sentencepiece and tok.vocab.pipeline.sentencepiece
        self._spec = spec
        self._model_vocab = model_vocab(spec["model"])
        self._json = json_text
        self._post: Optional[PostProcessor] = read_post_processor(spec.get("post_processor"), source)
        self._vocab = vocab = tok.vocab
        # The tokens of these files are the keys of the model's vocab, as HF spells them.
        model = vocab.pipeline.model
        self._vocab_strings = self._sentencepiece or isinstance(model, (WordPiece, WordLevel, Unigram)) or (
            isinstance(model, CharacterBpe) and not model.byte_level)
        self._tok = tok
        self._literals = vocab.all_special_literals  # text → id
        self._special_ids = frozenset(vocab.special_tokens.values())
        self._special_texts = frozenset(vocab.special_tokens)
        self._literal_ids = frozenset(self._literals.values())
        self._stripping_ids = frozenset(i for text, i in self._literals.items()
                                        if vocab.literal_flags.get(text, 0) & (LSTRIP | RSTRIP))
        # (a normalized one's string is the text it took as the normalizer spells it)
        self._normalized_strings = NormalizedStrings(vocab) if self._stripping_ids else None
        self._lock = threading.Lock()
        self._strings: Optional[list[Optional[str]]] = None
        self._decode_table: Optional[list[Optional[bytes]]] = None
        # A Unigram file's texts are encoded step by step as HF encodes them (unigram.py).
        self._unigram = UnigramTexts(tok, spec, [entry[0] for entry in spec["model"]["vocab"]], source) \
            if is_unigram(spec) else None
        if self._sentencepiece:
            check_sentencepiece(self, source)

    def __getstate__(self) -> dict:
        """Pickle (and ``copy.deepcopy``) as HF's ``Tokenizer`` does, for worker processes
        (``datasets.map(num_proc=...)``, ``multiprocessing``) and transformers'
        ``tokenizer_object=``: the file's text with the current truncation and padding, and the
        wordsplit tokenizer (which pickles as its vocabulary and options); the lock and the
        tables built on first use are made again.

        >>> import copy, pickle
        >>> from wordsplit import load_vocab
        >>> from wordsplit.training.save import tokenizer_json
        >>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("gpt2")))
        >>> pickle.loads(pickle.dumps(tok)).encode("hello world").ids, copy.deepcopy(tok).decode([31373])
        ([31373, 995], 'hello')
        """
        return {"json": self.to_str(), "tok": self._tok, "encode_special_tokens": self.encode_special_tokens}

    def __setstate__(self, state: dict) -> None:
        self._setup(json.loads(state["json"]), state["tok"], json_text=state["json"], source="tokenizer.json")
        self.encode_special_tokens = state["encode_special_tokens"]

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_str(cls, json: str, *, options=None) -> "Tokenizer":  # noqa: A002 (HF's parameter name)
        """A tokenizer from the text of a ``tokenizer.json``.

        Raises:
            VocabFormatError: not a tokenizer.json; UnsupportedTokenizerError: a file or decoder wordsplit does not run.
        """
        return cls._from_bytes(json.encode("utf-8"), source="tokenizer.json", options=options)

    @classmethod
    def from_buffer(cls, buffer: bytes, *, options=None) -> "Tokenizer":
        """A tokenizer from the bytes of a ``tokenizer.json``."""
        return cls._from_bytes(bytes(buffer), source="tokenizer.json", options=options)

    @classmethod
    def from_file(cls, path: str | os.PathLike, *, options=None) -> "Tokenizer":
        """A tokenizer from a ``tokenizer.json`` file (``.gz`` is read gunzipped).

        Raises:
            FileNotFoundError: no such file; VocabFormatError, UnsupportedTokenizerError: as
                :meth:`from_str`.
        """
        from ...formats.files import read_file

        return cls._from_bytes(read_file(path), source=str(path), options=options)

    @classmethod
    def from_pretrained(cls, identifier: str, revision: str = "main", token: Optional[str] = None, *,
                        options=None) -> "Tokenizer":
        """The ``tokenizer.json`` of a HuggingFace repo, through wordsplit's download and disk cache
        (``hf:ORG/REPO@REVISION``; the endpoint, cache and offline mode as for
        :func:`wordsplit.load_vocab`). ``token`` is sent as ``HF_TOKEN`` would be.

        Raises:
            DownloadError, OfflineError: as :func:`wordsplit.load_vocab`.
            UnsupportedTokenizerError: the repo has no tokenizer.json (only vocab.json + merges.txt).
        """
        from ...store.cache import open_cache
        from ...store.sources import fetch_hf, is_offline, parse_hf

        ref = parse_hf(f"hf:{identifier}@{revision}")
        with _hf_token(token):
            files = fetch_hf(ref, open_cache(), offline=is_offline())
        if "tokenizer.json" not in files:
            raise UnsupportedTokenizerError(
                f"{identifier} at {revision} has no tokenizer.json (only {', '.join(sorted(files))}); "
                f"load it with wordsplit.get_tokenizer('hf:{identifier}@{revision}') instead"
            )
        return cls.from_file(files["tokenizer.json"], options=options)

    @classmethod
    def _from_bytes(cls, data: bytes, *, source: str, options) -> "Tokenizer":
        vocab = read_vocab(data, source=source)
        text = data.decode("utf-8")
        return cls(json.loads(text), vocab, json_text=text, options=options, source=source)

    # -- encode ---------------------------------------------------------------------------

    def encode(self, sequence: InputSequence, pair: Optional[InputSequence] = None, is_pretokenized: bool = False,
               add_special_tokens: bool = True) -> Encoding:
        """Encode a text (and optionally its pair): truncated, post-processed and padded as the
        tokenizer is set.

        Raises:
            EncodeInputError: a sequence that is not a str (or, pre-tokenized, a list of str), or
                a str with a surrogate (HF's binding refuses both with a TypeError).
            TruncationError: the texts cannot be truncated as set (HF's errors and panics).

        >>> from wordsplit import load_vocab
        >>> from wordsplit.training.save import tokenizer_json
        >>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
        >>> tok.encode("a<|im_end|>").tokens
        ['a', '<|im_end|>']
        """
        return Encoding(self._encode_item(sequence, pair, is_pretokenized, add_special_tokens, self._truncation,
                                          self._padding, True))

    def encode_batch(self, input: Sequence[Any], is_pretokenized: bool = False,  # noqa: A002 (HF's name)
                     add_special_tokens: bool = True) -> list[Encoding]:
        """Encode each item: a text, or a ``(text, pair)`` tuple (pre-tokenized: a list of words,
        or a tuple of two such lists); each is padded, then all to the longest with
        ``BatchLongest`` padding."""
        return [Encoding(parts) for parts in self.encode_parts(input, is_pretokenized, add_special_tokens,
                                                               self._truncation, self._padding)]

    def encode_batch_fast(self, input: Sequence[Any], is_pretokenized: bool = False,  # noqa: A002
                          add_special_tokens: bool = True) -> list[Encoding]:
        """:meth:`encode_batch` without what HF's ``encode_batch_fast`` leaves out: the tokens
        of the texts are ``""``, their offsets ``(0, 0)`` and their word ids None."""
        return [Encoding(parts) for parts in self.encode_parts(input, is_pretokenized, add_special_tokens,
                                                               self._truncation, self._padding, offsets=False)]

    def encode_parts(self, items: Sequence[Any], is_pretokenized: bool, add_special_tokens: bool,
                     truncation: Optional[TruncationParams], padding: Optional[PaddingParams], *,
                     offsets: bool = True, split: bool = True) -> list[Parts]:
        """The encodings of a batch with the settings given (an accelerated transformers
        tokenizer passes its own); ``split``: each item is a text or a pair (else ``(text,
        pair)``), ``offsets``: False for ``encode_batch_fast``.

        Raises:
            EncodeInputError: an item that is not a text, a pair or (pre-tokenized) words.
            TruncationError: as :meth:`encode`.
        """
        if isinstance(items, str) or not isinstance(items, (list, tuple)):
            raise EncodeInputError(f"encode_batch takes a list of inputs, not {type(items).__name__}")
        out = []
        for item in items:
            first, second = _split_item(item, is_pretokenized) if split else item
            out.append(self._encode_item(first, second, is_pretokenized, add_special_tokens, truncation, padding,
                                         offsets))
        pad_encodings(out, padding)
        return out

    def post_process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                     add_special_tokens: bool = True) -> Encoding:
        """Truncate, post-process and pad encodings made with ``add_special_tokens=False`` (as
        HF's ``post_process``: copies of them)."""
        second = None if pair is None else pair._parts.copy()
        return Encoding(self._post_process(encoding._parts.copy(), second, add_special_tokens, self._truncation,
                                           self._padding))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens the post-processor adds to a text (or a pair)."""
        return 0 if self._post is None else self._post.added_tokens(is_pair)

    def _encode_item(self, first, second, is_pretokenized: bool, add_special_tokens: bool,
                     truncation: Optional[TruncationParams], padding: Optional[PaddingParams], offsets: bool) -> Parts:
        encoding = self._sequence(first, is_pretokenized, 0, offsets)
        pair = None if second is None else self._sequence(second, is_pretokenized, 1, offsets)
        return self._post_process(encoding, pair, add_special_tokens, truncation, padding)

    def _post_process(self, encoding: Parts, pair: Optional[Parts], add_special_tokens: bool,
                      truncation: Optional[TruncationParams], padding: Optional[PaddingParams]) -> Parts:
        """HF's ``post_process``: truncate to the length less what the post-processor adds,
        post-process, pad."""
        if truncation is not None:
            added = self.num_special_tokens_to_add(pair is not None) if add_special_tokens else 0
            truncate_encodings(encoding, pair, truncation.for_added(added))
        parts = default_process(encoding, pair) if self._post is None else \
            self._post.process(encoding, pair, add_special_tokens)
        if padding is not None:
            pad_encodings([parts], padding)
        return parts

    def _sequence(self, sequence: Any, is_pretokenized: bool, type_id: int, offsets: bool = True) -> Parts:
        """The encoding of one sequence, before post-processing (``offsets`` False: HF's
        ``encode_fast``, whose tokens are ``""``, offsets ``(0, 0)``, words None, type id 0)."""
        if not is_pretokenized:
            if not isinstance(sequence, str):
                raise EncodeInputError(f"encode takes a str, not {type(sequence).__name__} (for a list of words, "
                                       "pass is_pretokenized=True)")
            parts = self._text(sequence, type_id, None)
        else:
            if isinstance(sequence, str) or not isinstance(sequence, (list, tuple)) \
                    or not all(isinstance(word, str) for word in sequence):
                raise EncodeInputError("a pre-tokenized sequence is a list of str")
            # HF encodes each word alone: offsets relative to the word, the word's index as word id.
            parts = Parts.merge([self._text(word, type_id, i) for i, word in enumerate(sequence)])
        if not offsets:
            n = len(parts.ids)
            parts.tokens, parts.offsets, parts.word_ids, parts.type_ids = [""] * n, [(0, 0)] * n, [None] * n, [0] * n
        return parts

    def _text(self, text: str, type_id: int, word: Optional[int]) -> Parts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # (HF's binding cannot take the str: a TypeError)
            raise EncodeInputError("a text to encode holds a surrogate, which HF tokenizers does not take "
                                   "(TextInputSequence must be str)") from None
        if self._unigram is not None:
            added = self._vocab.added_tokens
            is_token = (lambda literal: literal in added) if self.encode_special_tokens else (lambda literal: True)
            return self._unigram.encode(text, type_id, word, is_token)
        if self.encode_special_tokens:
            result = self._tok.encode_with_offsets(text, disallowed_special=())
        else:
            result = self._tok.encode_with_offsets(text, allowed_special="all")
        strings = self._token_strings()
        tokens = [strings[i] for i in result.ids]
        if self._stripping_ids:  # (an lstrip or rstrip token's string is the text it took, as HF's)
            for k, i in enumerate(result.ids):
                if i in self._stripping_ids:
                    tokens[k] = matched_literal(text, *result.char_offsets[k], tokens[k])
            added = self._vocab.added_tokens
            is_token = (lambda literal: literal in added) if self.encode_special_tokens else (lambda literal: True)
            self._normalized_strings.fix(text, result.ids, result.char_offsets, tokens, is_token)
        if word is not None:
            words = [word] * len(result.ids)
        elif self._stretch_words_ids:
            words = self._stretch_words(result.ids)
        else:
            words = result.word_ids
        return Parts.of(result.ids, tokens, result.char_offsets, words, type_id=type_id)

    def _stretch_words(self, ids: list[int]) -> list[int]:
        """HF's word ids in a SentencePiece-style file, whose pre-tokenizer does not split: each
        added token found in the text is a word, and so is each stretch of text between them
        (wordsplit's own pieces are finer). An added token's id is one the model cannot make
        (:func:`~wordsplit.compat.tokenizers.files.check_sentencepiece`), so an id tells which it is."""
        literal_ids = self._literal_ids
        words: list[int] = []
        word, after_literal = -1, True
        for i in ids:
            is_literal = i in literal_ids
            if is_literal or after_literal:
                word += 1
            words.append(word)
            after_literal = is_literal
        return words

    # -- decode ---------------------------------------------------------------------------

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The text of ``ids``, as HF's decoder gives it (unknown ids are left out).

        >>> from wordsplit import load_vocab
        >>> from wordsplit.training.save import tokenizer_json
        >>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
        >>> tok.decode([9707, 1879, 151645]), tok.decode([9707, 151645], skip_special_tokens=False)
        ('Hello world', 'Hello<|im_end|>')
        """
        strings = self._token_strings()
        kept = []
        for i in map(_u32, ids):
            string = strings[i] if i < len(strings) else None
            if string is None or (skip_special_tokens and string in self._special_texts):
                continue
            kept.append(i)
        return self._decode_kept(kept)

    def _decode_kept(self, ids: list[int]) -> str:
        """The decoder's text of ids the vocabulary has (none skipped any more)."""
        kind = self._decoding.kind
        if kind == "byte-level":
            table = self._decode_bytes_table()
            return b"".join([table[i] for i in ids]).decode("utf-8", "replace")
        if kind == "sentencepiece":  # the engine decodes as HF's chain (checked at load)
            return self._tok.decode(ids)
        strings = self._token_strings()
        if kind == "metaspace":
            return metaspace_text([strings[i] for i in ids], self._decoding.replacement, self._decoding.first)
        if kind == "wordpiece":
            return wordpiece_text([strings[i] for i in ids], self._decoding.wordpiece, True)[0]
        return " ".join(strings[i] for i in ids)

    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> list[str]:
        """:meth:`decode` of each sequence."""
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- vocabulary -----------------------------------------------------------------------

    def _token_strings(self) -> list[Optional[str]]:
        """Each id's token string (byte-level text, or as the model's vocab of a SentencePiece-style
        or word-model file writes it; an added token's content), built once."""
        if self._strings is None:
            with self._lock:
                if self._strings is None:
                    strings: list[Optional[str]] = [None] * self._vocab.n_vocab
                    if self._vocab_strings:
                        for text, i in self._model_vocab.items():
                            strings[i] = text
                    else:
                        for piece, i in self._vocab.ranks.items():
                            strings[i] = "".join([BYTE_TO_CHAR[b] for b in piece])
                    for text, i in self._literals.items():
                        strings[i] = text
                    self._strings = strings
        return self._strings

    def _decode_bytes_table(self) -> list[Optional[bytes]]:
        if self._decode_table is None:
            table = list(self._vocab.token_bytes)
            for text, i in self._literals.items():
                table[i] = _hf_decode_bytes(text)
            self._decode_table = table
        return self._decode_table

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of a token string (byte-level text, or an added token's content), or None."""
        literal = self._literals.get(token)
        if literal is not None:
            return literal
        if self._vocab_strings:
            return self._model_vocab.get(token)
        from ...formats.bytelevel import token_bytes

        piece = token_bytes(token)
        return None if piece is None else self._vocab.ranks.get(piece)

    def id_to_token(self, id: int) -> Optional[str]:  # noqa: A002 (HF's parameter name)
        """The token string of an id, or None for an id the vocabulary does not use."""
        strings = self._token_strings()
        id = _u32(id)  # noqa: A001
        return strings[id] if id < len(strings) else None

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """Token string → id: the file's model vocabulary, and its added tokens unless
        ``with_added_tokens=False``."""
        vocab = dict(self._model_vocab)
        if with_added_tokens:
            vocab.update(self._literals)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The number of entries of :meth:`get_vocab`."""
        if with_added_tokens:
            return len(self.get_vocab(True))
        return len(self._model_vocab)

    # -- truncation and padding -----------------------------------------------------------

    @property
    def truncation(self) -> Optional[dict]:
        """The truncation settings (``max_length``, ``stride``, ``strategy``, ``direction``), or None."""
        return None if self._truncation is None else self._truncation.to_dict()

    @property
    def padding(self) -> Optional[dict]:
        """The padding settings (``length``: None to pad a batch to its longest, ``pad_to_multiple_of``,
        ``pad_id``, ``pad_token``, ``pad_type_id``, ``direction``), or None."""
        return None if self._padding is None else self._padding.to_dict()

    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right", **unknown) -> None:
        """Truncate every encoding to ``max_length`` tokens, those the post-processor adds
        included; what is cut off becomes :attr:`Encoding.overflowing` windows that overlap by
        ``stride`` tokens. ``strategy`` (``longest_first``, ``only_first``, ``only_second``)
        says which text of a pair gives up tokens, ``direction`` (``right``, ``left``) which end.

        Raises:
            TruncationError: ``stride`` not below ``max_length`` less the tokens added to one text.
            ValueError, OverflowError: an unknown strategy or direction, a negative number.
        """
        _ignore(unknown)
        params = TruncationParams.of(max_length, stride, strategy, direction)
        added = self.num_special_tokens_to_add(False)
        effective = usize_sub(params.max_length, added)
        if effective < params.stride:
            raise TruncationError(
                f"tokenizer stride set to {params.stride}, which is greater than or equal to its effective max length "
                f"of {effective} (= {params.max_length} original max length - {added} added special tokens), "
            )
        self._truncation = params

    def no_truncation(self) -> None:
        self._truncation = None

    def enable_padding(self, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
                       pad_token: str = "[PAD]", length: Optional[int] = None,
                       pad_to_multiple_of: Optional[int] = None, **unknown) -> None:
        """Pad every encoding with ``pad_id`` (type ``pad_type_id``, token ``pad_token``) on the
        ``direction`` side, to ``length`` tokens, or with ``length=None`` each batch to its
        longest; the length is rounded up to a multiple of ``pad_to_multiple_of``.

        Raises:
            ValueError, OverflowError, TypeError: an unknown direction, a negative number, a
                value of the wrong type.
        """
        if "max_length" in unknown:  # HF's deprecated name of length
            length = unknown.pop("max_length")
            warnings.warn("enable_padding(max_length=X) is deprecated, use enable_padding(length=X) instead",
                          DeprecationWarning, stacklevel=2)
        _ignore(unknown)
        self._padding = PaddingParams.of(direction, pad_id, pad_type_id, pad_token, length, pad_to_multiple_of)

    def no_padding(self) -> None:
        self._padding = None

    @property
    def tokenizer(self):
        """The wordsplit :class:`~wordsplit.Tokenizer` doing the work."""
        return self._tok

    # -- serialization --------------------------------------------------------------------

    def _current_spec(self) -> dict:
        """The file with the current truncation and padding."""
        spec = dict(self._spec)
        spec["truncation"] = None if self._truncation is None else self._truncation.to_json()
        spec["padding"] = None if self._padding is None else self._padding.to_json()
        return spec

    def to_str(self, pretty: bool = False) -> str:
        """The ``tokenizer.json`` it was made from, with the current truncation and padding
        (re-indented when ``pretty``)."""
        if pretty:
            return json.dumps(self._current_spec(), indent=2, ensure_ascii=False)
        if self._truncation == self._file_truncation and self._padding == self._file_padding:
            return self._json
        return json.dumps(self._current_spec(), ensure_ascii=False, separators=(",", ":"))

    def save(self, path: str | os.PathLike, pretty: bool = True) -> None:
        """Write :meth:`to_str` to ``path``."""
        Path(path).write_text(self.to_str(pretty), encoding="utf-8")

    def __repr__(self) -> str:
        return f"Tokenizer(wordsplit={self._tok!r})"


def _u32(value: Any) -> int:
    """An id as HF's binding takes it: an int (a bool is one), else TypeError; one that does
    not fit in a u32, OverflowError."""
    value = operator.index(value)
    if value < 0:
        raise OverflowError("number too small to fit in target type")
    if value >= 1 << 32:
        raise OverflowError("number too large to fit in target type")
    return value


def _ignore(unknown: dict) -> None:
    """HF's binding ignores keyword arguments it does not know, saying so."""
    for key in unknown:
        warnings.warn(f"Ignored unknown kwarg option {key}", stacklevel=3)


def _split_item(item: Any, is_pretokenized: bool) -> tuple[Any, Any]:
    """``(sequence, pair or None)`` of one item of a batch, read as HF reads it: a text or a
    ``(text, pair)`` tuple or two-item list; pre-tokenized, a list of words, or a tuple or
    two-item list of two such lists."""
    if is_pretokenized:
        if isinstance(item, (list, tuple)) and not all(isinstance(word, str) for word in item):
            if len(item) != 2:
                raise EncodeInputError(f"a pair to encode has two sequences, not {len(item)}")
            return item[0], item[1]
        return item, None
    if isinstance(item, (list, tuple)):
        if len(item) != 2:
            raise EncodeInputError(f"a pair to encode has two sequences, not {len(item)}")
        return item[0], item[1]
    return item, None


_TOKEN_LOCK = threading.Lock()


class _hf_token:
    """``HF_TOKEN`` set to ``token`` for one download (under a lock; nothing when None)."""

    def __init__(self, token: Optional[str]) -> None:
        self.token = token

    def __enter__(self) -> None:
        if self.token is not None:
            _TOKEN_LOCK.acquire()
            self.saved = os.environ.get("HF_TOKEN")
            os.environ["HF_TOKEN"] = self.token

    def __exit__(self, *exc) -> None:
        if self.token is not None:
            if self.saved is None:
                os.environ.pop("HF_TOKEN", None)
            else:
                os.environ["HF_TOKEN"] = self.saved
            _TOKEN_LOCK.release()
