r"""HuggingFace ``tokenizers``' ``Tokenizer`` API over wordsplit, for byte-level BPE files and
SentencePiece-style BPE files (byte fallback: Llama 2, Mistral, Gemma):
``from wordsplit.compat.tokenizers import Tokenizer``.

What it has: :class:`Tokenizer` with ``from_file``, ``from_str``, ``from_buffer``,
``from_pretrained`` (through wordsplit's HuggingFace download and disk cache), ``encode``
(a text, a pair, or pre-tokenized words; ``add_special_tokens``), ``encode_batch``,
``decode``, ``decode_batch``, ``token_to_id``, ``id_to_token``, ``get_vocab``,
``get_vocab_size``, ``num_special_tokens_to_add``, ``post_process``, ``encode_special_tokens``,
``to_str`` and ``save``; :class:`Encoding` with ``ids``, ``tokens``, ``offsets``,
``attention_mask``, ``special_tokens_mask``, ``type_ids``, ``word_ids``, ``sequence_ids``,
``n_sequences`` and ``len()``; and :class:`decoders.DecodeStream <wordsplit.compat.tokenizers.decoders.DecodeStream>`.

The file's post-processor runs as HF runs it (:mod:`wordsplit.postprocess`): a
``TemplateProcessing`` adds its BOS/EOS when ``add_special_tokens=True``, a ``ByteLevel`` one
with ``trim_offsets`` trims spaces off the offsets. Offsets are HF's character offsets: every
byte piece of one character gets that character's offsets, and text NFC changed is aligned as
HF aligns it (:mod:`wordsplit.offsets`).

What it does not do: training, ``add_tokens``/``add_special_tokens`` (a wordsplit vocabulary
is immutable), padding and truncation (a file that sets them is refused at load rather than
encoded differently), and the ``normalizer``/``pre_tokenizer``/``model`` component objects.
Files wordsplit does not load are refused as it refuses them, and so are decoders it does not
run exactly (:mod:`~wordsplit.compat.tokenizers.decoding` says which it runs).

>>> from wordsplit import load_vocab
>>> from wordsplit.training.save import tokenizer_json
>>> from wordsplit.compat.tokenizers import Tokenizer
>>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
>>> enc = tok.encode("Hello world")
>>> enc.ids, enc.tokens, enc.offsets
([9707, 1879], ['Hello', 'Ġworld'], [(0, 5), (5, 11)])
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ...errors import EncodeInputError, UnsupportedTokenizerError
from ...formats.bytelevel import BYTE_TO_CHAR, CHAR_TO_BYTE
from ...postprocess import Parts, PostProcessor, default_process, read_post_processor
from ...vocab import Vocab
from .decoding import hf_byte_value, metaspace_text, read_decoding

__all__ = ["Encoding", "Tokenizer", "read_vocab"]

TextInput = str
PreTokenizedInput = Sequence[str]
InputSequence = Union[TextInput, PreTokenizedInput]


class Encoding:
    """The result of :meth:`Tokenizer.encode`, with HF's ``Encoding`` attributes.

    >>> from wordsplit import load_vocab
    >>> from wordsplit.training.save import tokenizer_json
    >>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
    >>> enc = tok.encode("日本")
    >>> len(enc), enc.word_ids, enc.special_tokens_mask, enc.attention_mask, enc.type_ids
    (1, [0], [0], [1], [0])
    """

    __slots__ = ("_parts",)

    def __init__(self, parts: Parts) -> None:
        self._parts = parts

    @property
    def ids(self) -> list[int]:
        return self._parts.ids

    @property
    def tokens(self) -> list[str]:
        """Each token as HF spells it: byte-level text (``"Ġworld"``), as written in a
        SentencePiece-style file (``"▁world"``, ``"<0x0A>"``), or an added token's text."""
        return self._parts.tokens

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Character ``(start, end)`` of each token in its text; ``(0, 0)`` for added specials."""
        return self._parts.offsets

    @property
    def attention_mask(self) -> list[int]:
        return self._parts.attention_mask

    @property
    def special_tokens_mask(self) -> list[int]:
        """1 for the tokens the post-processor added, else 0 (special tokens found in the text too)."""
        return self._parts.special_tokens_mask

    @property
    def type_ids(self) -> list[int]:
        return self._parts.type_ids

    @property
    def word_ids(self) -> list[Optional[int]]:
        """The index of each token's word (pre-tokenizer piece) in its text; None for added specials."""
        return self._parts.word_ids

    words = word_ids  # HF's deprecated name

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        """0 or 1: which text of a pair each token is from; None for added specials."""
        return self._parts.sequence_ids

    @property
    def n_sequences(self) -> int:
        return len(self._parts.sequences) or 1

    @property
    def overflowing(self) -> list["Encoding"]:
        """Always empty: wordsplit does not truncate."""
        return []

    def __len__(self) -> int:
        return len(self._parts.ids)

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask, "
                "special_tokens_mask, overflowing])")


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
        json_text: the file's text (:meth:`to_str` gives it back).
        options: :class:`~wordsplit.TokenizerOptions` for the wordsplit tokenizer (default: auto).

    Raises:
        VocabFormatError, UnsupportedTokenizerError: the file cannot be used (see
            :mod:`wordsplit.formats.hf`), sets padding or truncation, or has a decoder wordsplit does
            not run (:mod:`~wordsplit.compat.tokenizers.decoding`).
    """

    def __init__(self, spec: dict, vocab: Vocab, *, json_text: str, options=None, source: str = "tokenizer.json"):
        from ...options import TokenizerOptions

        for setting in ("padding", "truncation"):
            if spec.get(setting) is not None:
                raise UnsupportedTokenizerError(
                    f"{source}: {setting} is set; wordsplit.compat.tokenizers does not pad or truncate. Set "
                    f'"{setting}": null in the file, and pad or truncate the ids yourself'
                )
        self._setup(spec, (options or TokenizerOptions()).build(vocab), json_text=json_text, source=source)
        self.encode_special_tokens = False

    def _setup(self, spec: dict, tok, *, json_text: str, source: str) -> None:
        """The state of a tokenizer of ``spec`` encoding with the wordsplit tokenizer ``tok``.

        Raises:
            UnsupportedTokenizerError: a decoder wordsplit does not run exactly
                (:mod:`~wordsplit.compat.tokenizers.decoding`), or a SentencePiece-style file
                whose words or byte tokens HF would read otherwise (see :func:`_check_sentencepiece`).
        """
        from ...formats.hf_sentencepiece import is_sentencepiece_style

        self._decoding = read_decoding(spec.get("decoder"), source)
        self._byte_level_decoder = self._decoding.kind == "byte-level"
        # A SentencePiece-style file's tokens are written as in its vocab ("▁Hello", "<0x0A>").
        self._sentencepiece = is_sentencepiece_style(spec, source)
        self._spec = spec
        self._json = json_text
        self._post: Optional[PostProcessor] = read_post_processor(spec.get("post_processor"), source)
        self._vocab = vocab = tok.vocab
        self._tok = tok
        self._literals = vocab.all_special_literals  # text → id
        self._special_ids = frozenset(vocab.special_tokens.values())
        self._special_texts = frozenset(vocab.special_tokens)
        self._literal_ids = frozenset(self._literals.values())
        self._lock = threading.Lock()
        self._strings: Optional[list[Optional[str]]] = None
        self._decode_table: Optional[list[Optional[bytes]]] = None
        if self._sentencepiece:
            _check_sentencepiece(self, source)

    def __getstate__(self) -> dict:
        """Pickle (and ``copy.deepcopy``) as HF's ``Tokenizer`` does, for worker processes
        (``datasets.map(num_proc=...)``, ``multiprocessing``) and transformers'
        ``tokenizer_object=``: the file's text and the wordsplit tokenizer (which pickles as its
        vocabulary and options); the lock and the tables built on first use are made again.

        >>> import copy, pickle
        >>> from wordsplit import load_vocab
        >>> from wordsplit.training.save import tokenizer_json
        >>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("gpt2")))
        >>> pickle.loads(pickle.dumps(tok)).encode("hello world").ids, copy.deepcopy(tok).decode([31373])
        ([31373, 995], 'hello')
        """
        return {"json": self._json, "tok": self._tok, "encode_special_tokens": self.encode_special_tokens}

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
        """Encode a text (and optionally its pair), then post-process as the file says.

        Raises:
            EncodeInputError: a sequence that is not a str (or, pre-tokenized, a list of str).

        >>> from wordsplit import load_vocab
    >>> from wordsplit.training.save import tokenizer_json
        >>> tok = Tokenizer.from_str(tokenizer_json(load_vocab("qwen3")))
        >>> tok.encode("a<|im_end|>").tokens
        ['a', '<|im_end|>']
        """
        first = self._sequence(sequence, is_pretokenized, type_id=0)
        encodings = [first] if pair is None else [first, self._sequence(pair, is_pretokenized, type_id=1)]
        return Encoding(self._process(encodings, add_special_tokens))

    def encode_batch(self, input: Sequence[Any], is_pretokenized: bool = False,  # noqa: A002 (HF's name)
                     add_special_tokens: bool = True) -> list[Encoding]:
        """Encode each item: a text, or a ``(text, pair)`` tuple (pre-tokenized: a list of words,
        or a tuple of two such lists)."""
        out = []
        for item in input:
            if isinstance(item, tuple) or (not is_pretokenized and isinstance(item, list)):
                if len(item) != 2:
                    raise EncodeInputError(f"a pair to encode has two sequences, not {len(item)}")
                out.append(self.encode(item[0], item[1], is_pretokenized, add_special_tokens))
            else:
                out.append(self.encode(item, None, is_pretokenized, add_special_tokens))
        return out

    def post_process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                     add_special_tokens: bool = True) -> Encoding:
        """Run the post-processor on encodings made with ``add_special_tokens=False``."""
        encodings = [Parts.merge([encoding._parts])]
        if pair is not None:
            encodings.append(Parts.merge([pair._parts]))
        return Encoding(self._process(encodings, add_special_tokens))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens the post-processor adds to a text (or a pair)."""
        return 0 if self._post is None else self._post.added_tokens(is_pair)

    def _process(self, encodings: list[Parts], add_special_tokens: bool) -> Parts:
        if self._post is None:
            return default_process(encodings)
        return self._post.process(encodings, add_special_tokens)

    def _sequence(self, sequence: Any, is_pretokenized: bool, type_id: int) -> Parts:
        """The encoding of one sequence, before post-processing."""
        if not is_pretokenized:
            if not isinstance(sequence, str):
                raise EncodeInputError(f"encode takes a str, not {type(sequence).__name__} (for a list of words, "
                                       "pass is_pretokenized=True)")
            return self._text(sequence, type_id, None)
        if isinstance(sequence, str) or not all(isinstance(word, str) for word in sequence):
            raise EncodeInputError("a pre-tokenized sequence is a list of str")
        # HF encodes each word alone: offsets relative to the word, the word's index as word id.
        return Parts.merge([self._text(word, type_id, i) for i, word in enumerate(sequence)])

    def _text(self, text: str, type_id: int, word: Optional[int]) -> Parts:
        if self.encode_special_tokens:
            result = self._tok.encode_with_offsets(text, disallowed_special=())
        else:
            result = self._tok.encode_with_offsets(text, allowed_special="all")
        strings = self._token_strings()
        tokens = [strings[i] for i in result.ids]
        if word is not None:
            words = [word] * len(result.ids)
        elif self._sentencepiece:
            words = self._stretch_words(result.ids)
        else:
            words = result.word_ids
        return Parts.of(result.ids, tokens, result.char_offsets, words, type_id=type_id)

    def _stretch_words(self, ids: list[int]) -> list[int]:
        """HF's word ids in a SentencePiece-style file, whose pre-tokenizer does not split: each
        added token found in the text is a word, and so is each stretch of text between them
        (wordsplit's own pieces are finer). An added token's id is one the model cannot make
        (:func:`_check_sentencepiece`), so an id tells which it is."""
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
        for i in ids:
            string = strings[i] if 0 <= i < len(strings) else None
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
        return " ".join(strings[i] for i in ids)

    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> list[str]:
        """:meth:`decode` of each sequence."""
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- vocabulary -----------------------------------------------------------------------

    def _token_strings(self) -> list[Optional[str]]:
        """Each id's token string (byte-level text, or as written in a SentencePiece-style
        file; an added token's content), built once."""
        if self._strings is None:
            with self._lock:
                if self._strings is None:
                    strings: list[Optional[str]] = [None] * self._vocab.n_vocab
                    if self._sentencepiece:
                        for text, i in self._spec["model"]["vocab"].items():
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
        if self._sentencepiece:
            return self._spec["model"]["vocab"].get(token)
        from ...formats.bytelevel import token_bytes

        piece = token_bytes(token)
        return None if piece is None else self._vocab.ranks.get(piece)

    def id_to_token(self, id: int) -> Optional[str]:  # noqa: A002 (HF's parameter name)
        """The token string of an id, or None for an id the vocabulary does not use."""
        strings = self._token_strings()
        return strings[id] if 0 <= id < len(strings) else None

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """Token string → id: the file's model vocabulary, and its added tokens unless
        ``with_added_tokens=False``."""
        vocab = dict(self._spec["model"]["vocab"])
        if with_added_tokens:
            vocab.update(self._literals)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The number of entries of :meth:`get_vocab`."""
        if with_added_tokens:
            return len(self.get_vocab(True))
        return len(self._spec["model"]["vocab"])

    @property
    def padding(self) -> None:
        """None: wordsplit does not pad."""
        return None

    @property
    def truncation(self) -> None:
        """None: wordsplit does not truncate."""
        return None

    @property
    def tokenizer(self):
        """The wordsplit :class:`~wordsplit.Tokenizer` doing the work."""
        return self._tok

    # -- serialization --------------------------------------------------------------------

    def to_str(self, pretty: bool = False) -> str:
        """The ``tokenizer.json`` it was made from (re-indented when ``pretty``)."""
        if pretty:
            return json.dumps(self._spec, indent=2, ensure_ascii=False)
        return self._json

    def save(self, path: str | os.PathLike, pretty: bool = True) -> None:
        """Write :meth:`to_str` to ``path``."""
        Path(path).write_text(self.to_str(pretty), encoding="utf-8")

    def __repr__(self) -> str:
        return f"Tokenizer(wordsplit={self._tok!r})"


def _check_sentencepiece(tok: "Tokenizer", source: str) -> None:
    """Refuse a SentencePiece-style file where wordsplit's answer could differ from HF's: an
    added token whose id the model can also make (its word id would be ambiguous); with the
    ``ByteFallback`` chain, a vocabulary whose decode by wordsplit's engine is not HF's: a token
    the engine reads otherwise than ``ByteFallback`` reads its string (a byte, or text).

    Raises:
        UnsupportedTokenizerError: such a file.
    """
    from ...engines.sentencepiece import BYTE, token_kinds
    pipeline = tok._vocab.pipeline
    if pipeline.sentencepiece and pipeline.spanner.metaspace_split:
        # HF's word ids are then one per ▁-started part, not one per stretch (_stretch_words).
        raise UnsupportedTokenizerError(f"{source}: Metaspace with split: true is not supported here (its word ids)")
    model = tok._spec["model"]
    made = {"".join(merge.split(" ", 1) if isinstance(merge, str) else merge) for merge in model.get("merges") or []}
    by_id = {i: text for text, i in model["vocab"].items()}
    for content, i in tok._literals.items():
        text = by_id.get(i)
        if text is not None and (len(text) == 1 or text in made or hf_byte_value(text) is not None):
            raise UnsupportedTokenizerError(
                f"{source}: added token {content!r} has the id {i} of the model's token {text!r}, which the model "
                "also makes from text; HF's word ids would then depend on which made it"
            )
    if tok._decoding.kind != "sentencepiece":
        return
    decoder = pipeline.decoder
    if not pipeline.sentencepiece or decoder.style != "hf" \
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
    file with HF's ``Metaspace`` decoder, which wordsplit's own decode does not have (so the
    loader refuses it), is read with the decoder the loader takes instead: the decoder changes no
    id, and :class:`Tokenizer` decodes it itself."""
    from ...formats.hf import read_hf_tokenizer_json
    from ...formats.hf_sentencepiece import BYTE_FALLBACK_DECODER, is_sentencepiece_style

    name = name or Path(source).stem.removesuffix(".json")
    try:
        spec = json.loads(data)
    except ValueError:
        spec = None  # the reader says what is wrong
    if isinstance(spec, dict) and isinstance(spec.get("decoder"), dict) and spec["decoder"].get("type") == "Metaspace" \
            and isinstance(spec.get("model"), dict) and is_sentencepiece_style(spec, source):
        data = json.dumps({**spec, "decoder": BYTE_FALLBACK_DECODER}).encode("utf-8")
    return read_hf_tokenizer_json(data, source=source, name=name)


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
