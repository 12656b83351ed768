"""Tokenizer: text ⇄ token ids for one vocabulary, with tiktoken's API.

The encode pipeline: split out special/added token literals (on the raw text, as HF does
for its non-normalized added tokens) → normalize each plain segment → spanner cuts it into
pieces → span encoder turns each piece's UTF-8 bytes into ids. Decode joins the token bytes
and decodes UTF-8. A Tokenizer holds its vocabulary, the options it was built with and one
engine (:mod:`wordsplit.engines`) that does the work; build one with
:class:`~wordsplit.options.TokenizerOptions`.

>>> from wordsplit import get_tokenizer
>>> tok = get_tokenizer("qwen3")
>>> tok.encode("hello world")
[14990, 1879]
>>> tok.decode([14990, 1879])
'hello world'
"""

from __future__ import annotations

import importlib
import operator
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from .engines.arguments import check_batch_ids, check_ids, token_id
from .errors import DecodeInputError, MissingDependencyError, OptionTypeError, OptionValueError, UnknownTokenError
from .specials import AllowedSpecial, DisallowedSpecial, SpecialPolicy, resolve_special_policy
from .vocab import Vocab

if TYPE_CHECKING:
    import numpy as np

    from .explain import Explanation
    from .offsets import TokenOffsets
    from .streaming import DecodeStream
    from .options import TokenizerOptions


#: The most threads a batch call uses: a larger ``num_threads`` is clamped to it (each native
#: helper thread is kept for the life of the process, and more threads than cores only wait).
MAX_THREADS = 256
# Empty collections a caller passes as disallowed_special to disallow nothing (resolved once,
# see Tokenizer._resolve); other kinds go through resolve_special_policy.
_EMPTY_KINDS = (tuple, list, set, frozenset)
# The default special-token policy's arguments, one object each: a call that leaves them as
# they are is recognised by identity (two tests, where _resolve's general tests took 0.2 us
# of a 0.75 us encode_to_numpy call on a short text).
_NO_SPECIALS: frozenset = frozenset()
_ALL = "all"


def check_num_threads(value: object) -> Optional[int]:
    """A ``num_threads`` argument, checked the same way for both backends: None (the default),
    or an int of at least 1, clamped to :data:`MAX_THREADS`.

    Raises:
        OptionTypeError: not an int (``1.5``, ``"2"``, ``True``).
        OptionValueError: below 1.

    >>> check_num_threads(4), check_num_threads(10_000), check_num_threads(None)
    (4, 256, None)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise OptionTypeError(f"num_threads must be an int or None, not {value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise OptionTypeError(f"num_threads must be an int or None, not {value!r} ({type(value).__name__})") from None
    if count < 1:
        raise OptionValueError(f"num_threads must be at least 1 (or None for all cores), not {count}")
    return min(count, MAX_THREADS)


def _rebuild_tokenizer(vocab: Vocab, options: dict, modules: tuple[str, ...]) -> Tokenizer:
    """The unpickler of :class:`Tokenizer`: imports the modules its plug-ins came from, then
    builds it again from the vocabulary and the options."""
    from .options import TokenizerOptions  # here: options imports this module

    for module in modules:
        importlib.import_module(module)
    return TokenizerOptions(**options).build(vocab)


class Tokenizer:
    """Encodes and decodes with one vocabulary; immutable and safe to share between threads.

    Args:
        vocab: the vocabulary.
        options: the :class:`~wordsplit.options.TokenizerOptions` it was built with.
        engine: the engine doing the work (:mod:`wordsplit.engines`).
        spanner, encoder: the registry names of the spanner and encoder in use ("auto" resolved
            for the spanner; the encoder may be the native ``"auto"`` strategy).
        backend: ``"native"`` or ``"python"``.
    """

    def __init__(self, vocab: Vocab, *, options: "TokenizerOptions", engine, spanner: str, encoder: str,
                 backend: str) -> None:
        self.vocab = vocab
        self.options = options
        self.spanner_name = spanner
        self.encoder_name = encoder
        self.backend = backend
        self.num_threads = check_num_threads(options.num_threads)
        self._engine = engine
        self._python_engine = engine if backend == "python" else None
        specials = frozenset(vocab.special_tokens)
        self._policy_all = SpecialPolicy(specials, frozenset())  # allowed_special="all"
        self._policy_none = SpecialPolicy(frozenset(), specials)  # the defaults
        self._policy_ordinary = SpecialPolicy(frozenset(), frozenset())  # disallowed_special=()
        # The engine's calls under these three policies, bound once: nearly every call uses one,
        # and resolving the arguments and finding the policy's compiled form on each call took
        # longer than a native encode of a short text.
        self._bound = {policy: engine.bind(policy.allowed, policy.disallowed)
                       for policy in (self._policy_all, self._policy_none, self._policy_ordinary)}
        self._default_calls = self._bound[self._policy_none]
        self._ordinary_calls = self._bound[self._policy_ordinary]

    def __reduce__(self):
        """Pickle as the vocabulary plus the options that rebuild this tokenizer, so it can be
        sent to worker processes (multiprocessing, ``datasets.map(num_proc=...)``). The modules
        its plug-in components come from are imported again on unpickling.

        >>> import pickle
        >>> from wordsplit import get_tokenizer
        >>> pickle.loads(pickle.dumps(get_tokenizer("qwen3"))).encode("hello world")
        [14990, 1879]
        """
        from .options import plugin_modules

        options = {"spanner": self.options.spanner, "encoder": self.options.encoder,
                   "backend": self.options.backend, "num_threads": self.options.num_threads}
        return _rebuild_tokenizer, (self.vocab, options, plugin_modules(self.spanner_name, self.encoder_name))

    def __repr__(self) -> str:
        return (
            f"Tokenizer({self.vocab.name!r}, spanner={self.spanner_name!r}, "
            f"encoder={self.encoder_name!r}, backend={self.backend!r})"
        )

    @property
    def native(self) -> bool:
        """Whether every stage runs natively (the GIL released while a text of 1 KB or more
        encodes, batches on native threads)."""
        return self._engine.native

    # -- encode ---------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> list[int]:
        """Encode ``text`` to token ids.

        Args:
            text: the text.
            allowed_special: special tokens to encode as such: ``"all"`` or a set of literals.
            disallowed_special: special literals that raise if found (default: every special
                token not allowed); ``()`` or None encodes them as plain text. As in tiktoken,
                a string here that is not a special token raises when the text contains it,
                and a literal both allowed and disallowed is disallowed.

        Raises:
            EncodeInputError: ``text`` is not a ``str``.
            DisallowedSpecialError: the text contains a disallowed special token.
            OptionTypeError: a policy argument that is not ``"all"`` or a set of strings.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("cl100k_base").encode("hi<|endoftext|>", allowed_special="all")
        [6151, 100257]
        """
        if allowed_special is _NO_SPECIALS:
            if disallowed_special is _ALL:
                return self._default_calls.encode(text)
            if type(disallowed_special) is tuple and not disallowed_special:  # tiktoken's ordinary encode
                return self._ordinary_calls.encode(text)
        return self._calls(allowed_special, disallowed_special, text).encode(text)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> "TokenOffsets":
        """Encode ``text`` and say where each token came from: a
        :class:`~wordsplit.offsets.TokenOffsets` with ``ids`` (as :meth:`encode` gives them),
        ``byte_offsets`` (into the text's UTF-8), ``char_offsets`` (into ``text``) and
        ``word_ids``, one ``(start, end)`` per token, into the original text even where the
        vocabulary's normalizer changed it. A token that holds part of a character gets that
        whole character's char offsets (as HF tokenizers gives them); its byte offsets are its
        own bytes. :mod:`wordsplit.offsets` has the rules.

        Same arguments and errors as :meth:`encode`.

        >>> from wordsplit import get_tokenizer
        >>> r = get_tokenizer("cl100k_base").encode_with_offsets("hi 🦀")
        >>> r.ids, r.byte_offsets
        ([6151, 11410, 99, 222], [(0, 2), (2, 5), (5, 6), (6, 7)])
        >>> r.char_offsets  # the last three tokens hold parts of "🦀" (char 3)
        [(0, 2), (2, 4), (3, 4), (3, 4)]
        """
        from .offsets import TokenOffsets

        policy = self._resolve(allowed_special, disallowed_special)
        if policy.other:
            policy.check(text)
        ids, places, char_map = self._engine.encode_with_offsets(text, policy.allowed, policy.disallowed)
        return TokenOffsets(ids, places, char_map)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode with every special token as plain text (added tokens are still matched).

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("gpt2").encode_ordinary("<|endoftext|>")
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        return self._ordinary_calls.encode(text)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> list[list[int]]:
        """Encode many texts; same arguments as :meth:`encode`.

        Args:
            num_threads: at most this many native threads (default: the tokenizer's, else all
                cores; at most :data:`MAX_THREADS`); a batch under 32 KB of text runs on the
                calling thread alone, and so does every batch of the Python backend or with a
                Python component. Checked the same way on both backends.

        Raises:
            EncodeInputError: an item is not a str (the message gives its index).
            DisallowedSpecialError: for the first text (in order) that has a disallowed one.
            OptionTypeError, OptionValueError: ``num_threads`` is not an int, or below 1.
        """
        policy = self._resolve(allowed_special, disallowed_special)
        threads = self._threads(num_threads)
        texts = self._checked_batch(texts, policy)
        return self._engine.encode_batch(texts, policy.allowed, policy.disallowed, threads)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> "np.ndarray":
        """Encode ``text`` into a read-only numpy uint32 array (tiktoken's ``encode_to_numpy``).

        The same ids and special-token policy as :meth:`encode`, without a Python int per
        token: the array holds exactly the ids, 4 bytes each.

        Raises:
            MissingDependencyError: numpy is not installed.
            and everything :meth:`encode` raises.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").encode_to_numpy("hello world")
        array([14990,  1879], dtype=uint32)
        """
        _numpy()
        if allowed_special is _NO_SPECIALS:
            if disallowed_special is _ALL:
                return self._default_calls.encode_numpy(text)
            if type(disallowed_special) is tuple and not disallowed_special:  # tiktoken's ordinary encode
                return self._ordinary_calls.encode_numpy(text)
        return self._calls(allowed_special, disallowed_special, text).encode_numpy(text)

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> "tuple[np.ndarray, np.ndarray]":
        """:meth:`encode_batch_flat` as numpy arrays: ``(ids, offsets)``, uint32 and uint64.

        The ids of text ``i`` are ``ids[offsets[i]:offsets[i + 1]]``; both arrays are views of
        the native buffers (no copy).

        >>> from wordsplit import get_tokenizer
        >>> ids, offsets = get_tokenizer("qwen3").encode_batch_to_numpy(["hello world", "hi"])
        >>> ids, offsets
        (array([14990,  1879,  6023], dtype=uint32), array([0, 2, 3], dtype=uint64))
        """
        np = _numpy()
        ids, offsets = self.encode_batch_flat(texts, num_threads=num_threads, allowed_special=allowed_special,
                                              disallowed_special=disallowed_special)
        return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.uint64)

    def encode_batch_flat(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
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
        policy = self._resolve(allowed_special, disallowed_special)
        threads = self._threads(num_threads)
        texts = self._checked_batch(texts, policy)
        return self._engine.encode_batch_flat(texts, policy.allowed, policy.disallowed, threads)

    def count(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> int:
        """The number of tokens ``encode`` would return.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").count("hello world")
        2
        """
        if allowed_special is _NO_SPECIALS:
            if disallowed_special is _ALL:
                return self._default_calls.count(text)
            if type(disallowed_special) is tuple and not disallowed_special:  # tiktoken's ordinary encode
                return self._ordinary_calls.count(text)
        return self._calls(allowed_special, disallowed_special, text).count(text)

    def _threads(self, num_threads: object) -> Optional[int]:
        """The threads of one batch call: its ``num_threads`` checked, else the tokenizer's."""
        return self.num_threads if num_threads is None else check_num_threads(num_threads)

    @staticmethod
    def _checked_batch(texts, policy: SpecialPolicy):
        """The batch as given, or as a list once checked for disallowed non-special strings."""
        if policy.other:
            texts = texts if type(texts) is list else list(texts)
            policy.check_batch(texts)
        return texts

    def _calls(self, allowed_special, disallowed_special, text):
        """The engine's calls under the policy of these arguments (bound once for the three
        common policies), with ``text`` checked for disallowed strings that are not special
        tokens."""
        policy = self._resolve(allowed_special, disallowed_special)
        calls = self._bound.get(policy)
        if calls is not None:
            return calls
        policy.check(text)
        return self._engine.bind(policy.allowed, policy.disallowed)

    def _resolve(self, allowed_special, disallowed_special) -> SpecialPolicy:
        """resolve_special_policy, with the common calls precomputed (o200k_harmony has 1,091
        special tokens: set arithmetic per call would cost more than a short encode): the
        defaults, ``allowed_special="all"``, and nothing disallowed (``disallowed_special=()``,
        tiktoken's spelling of an ordinary encode)."""
        if allowed_special is _NO_SPECIALS:
            if disallowed_special is _ALL:
                return self._policy_none
            if type(disallowed_special) is tuple and not disallowed_special:
                return self._policy_ordinary  # disallowed_special=(), before the general tests
        allow_none = isinstance(allowed_special, (set, frozenset)) and not allowed_special
        allow_all = isinstance(allowed_special, str) and allowed_special == "all"
        if isinstance(disallowed_special, str) and disallowed_special == "all":
            if allow_all:
                return self._policy_all
            if allow_none:
                return self._policy_none
        elif disallowed_special is None or (type(disallowed_special) in _EMPTY_KINDS and not disallowed_special):
            if allow_all:
                return self._policy_all
            if allow_none:
                return self._policy_ordinary
        return resolve_special_policy(self.vocab, allowed_special, disallowed_special)

    def native_engine(self):
        """This tokenizer's native engine (:class:`~wordsplit.engines.native.NativeEngine`), or
        None on the Python backend; :mod:`wordsplit.datasets` hands it Arrow arrays to encode
        from their UTF-8 buffers (``encode_arrow_flat``).

        >>> from wordsplit import TokenizerOptions, load_vocab
        >>> TokenizerOptions(backend="python").build(load_vocab("gpt2")).native_engine() is None
        True
        """
        return self._engine if self.backend == "native" else None

    def python_engine(self):
        """The Python engine with this tokenizer's components (this tokenizer's own engine on
        the Python backend); :mod:`wordsplit.explain` traces its runs."""
        if self._python_engine is None:
            from .engines.python import build_python_engine
            from .options import PYTHON_AUTO_ENCODER

            encoder = PYTHON_AUTO_ENCODER if self.encoder_name == "auto" else self.encoder_name
            self._python_engine = build_python_engine(self.vocab, self.spanner_name, encoder)
        return self._python_engine

    def explain(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = _ALL,
    ) -> "Explanation":
        """The BPE trace of ``text``, pass by pass; see :func:`wordsplit.explain.explain`.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").explain("hello").ids
        [14990]
        """
        from .explain import explain  # imported on first use: most programs never trace an encode

        return explain(self, text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    # -- decode ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The concatenated bytes of ``ids``.

        Raises:
            DecodeInputError: an item is not an integer.
            UnknownTokenError: an id outside the vocabulary or unused by it.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").decode_bytes([14990, 1879])
        b'hello world'
        """
        return self._engine.decode_bytes(check_ids(ids))

    def decode(self, ids: Iterable[int], *, errors: str = "replace") -> str:
        """Decode ``ids`` to text; invalid UTF-8 becomes U+FFFD unless ``errors="strict"``.

        ``ids`` is a sequence of ints, or a 1-D integer numpy array (decoded as its list).

        Raises:
            DecodeInputError: an item that is not an integer, a str, or an array that is not
                1-D or has a non-integer dtype.
            UnknownTokenError: an id outside the vocabulary or unused by it.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").decode([14990, 1879])
        'hello world'
        """
        return self._engine.decode(check_ids(ids), errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, errors: str = "replace",
                     num_threads: Optional[int] = None) -> list[str]:
        """Decode many id sequences (on native threads when the extension is built); a 2-D
        integer numpy array is decoded row by row. ``num_threads`` as for :meth:`encode_batch`."""
        threads = self._threads(num_threads)
        return self._engine.decode_batch(check_batch_ids(batch), errors, threads)

    def decode_stream(
        self, skip_special_tokens: bool = False, *, ids: Optional[Iterable[int]] = None
    ) -> "DecodeStream":
        """A :class:`~wordsplit.streaming.DecodeStream` for ids as a model generates them:
        ``step(id_or_ids)`` returns the text they complete (or None), holding back only an
        incomplete UTF-8 character; ``ids`` prefills it with ids already shown.

        >>> from wordsplit import get_tokenizer
        >>> stream = get_tokenizer("qwen3").decode_stream()
        >>> stream.step(14990), stream.step([1879])
        ('hello', ' world')
        """
        from .streaming import DecodeStream

        return DecodeStream(self, skip_special_tokens=skip_special_tokens, ids=ids)

    # -- chat -----------------------------------------------------------------------------

    def apply_chat_template(self, messages, *, tools=None, add_generation_prompt: bool = False,
                            tokenize: bool = True, **template_kwargs):
        """Render a conversation with the vocabulary's chat template, as transformers does,
        and encode it (special tokens in the rendered text are tokens); see :mod:`wordsplit.chat`.

        Args:
            messages: dicts with ``role`` and ``content`` (``tool_calls``, ``reasoning_content``...
                as the template reads them), or a list of such conversations.
            tools: JSON schemas of the tools the model may call.
            add_generation_prompt: end with the header of an assistant turn.
            tokenize: return ids (True) or the rendered text (False).
            template_kwargs: template variables (``enable_thinking=False``), ``documents``,
                ``continue_final_message``, or ``chat_template=`` to use another template.

        Raises:
            MissingDependencyError: Jinja2 is not installed (``pip install 'wordsplit[chat]'``).
            ChatTemplateError: no template for this vocabulary, or the template failed.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").apply_chat_template([{"role": "user", "content": "hi"}])
        [151644, 872, 198, 6023, 151645, 198]
        """
        from .chat import apply_chat_template

        return apply_chat_template(self, messages, tools=tools, add_generation_prompt=add_generation_prompt,
                                   tokenize=tokenize, **template_kwargs)

    def count_chat_tokens(self, messages, *, tools=None, add_generation_prompt: bool = False,
                          **template_kwargs) -> int:
        """The number of tokens :meth:`apply_chat_template` gives for one conversation.

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").count_chat_tokens([{"role": "user", "content": "hi"}])
        6
        """
        from .chat import apply_chat_template

        text = apply_chat_template(self, messages, tools=tools, add_generation_prompt=add_generation_prompt,
                                   tokenize=False, **template_kwargs)
        return self.count(text, allowed_special="all")

    # -- vocabulary -----------------------------------------------------------------------

    def id_to_token(self, value: int) -> bytes:
        """The bytes of one token (a special token's UTF-8 text).

        >>> from wordsplit import get_tokenizer
        >>> get_tokenizer("qwen3").id_to_token(151667)
        b'<think>'
        """
        return self.vocab.token_bytes[token_id(self.vocab, value)]

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


# numpy, once _numpy has imported it (an import statement per call cost 0.09 us).
_numpy_module = None


def _numpy():
    """The numpy module, or MissingDependencyError saying how to install it."""
    global _numpy_module
    if _numpy_module is None:
        try:
            import numpy
        except ImportError:
            raise MissingDependencyError(
                "the numpy forms of encode need numpy; install it with: pip install 'wordsplit[numpy]'"
            ) from None
        _numpy_module = numpy
    return _numpy_module

