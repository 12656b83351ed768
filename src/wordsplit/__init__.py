"""wordsplit: exact byte-level BPE token ids for Qwen3 and OpenAI vocabularies, and back.

>>> from wordsplit import load_vocab, TokenizerOptions
>>> tok = TokenizerOptions().build(load_vocab("qwen3"))
>>> tok.encode("hello world")
[14990, 1879]
"""

from __future__ import annotations

from .errors import (
    BackendUnavailableError,
    DecodeInputError,
    DisallowedSpecialError,
    DownloadError,
    EncodeInputError,
    HashMismatchError,
    OfflineError,
    UnknownComponentError,
    UnknownTokenError,
    UnknownVocabError,
    UnsupportedTokenizerError,
    VocabFormatError,
    WordsplitError,
)
from .options import TokenizerOptions
from .tokenizer import Tokenizer
from .vocab import Vocab
from .vocabs import list_vocabs, load_vocab

__version__ = "0.1.0"


def get_tokenizer(name: str, **options) -> Tokenizer:
    """``load_vocab(name)`` and ``TokenizerOptions(**options).build(...)`` in one call.

    >>> get_tokenizer("cl100k_base").encode("hello world")
    [15339, 1917]
    """
    return TokenizerOptions(**options).build(load_vocab(name))


__all__ = [
    "BackendUnavailableError",
    "DecodeInputError",
    "DisallowedSpecialError",
    "DownloadError",
    "EncodeInputError",
    "HashMismatchError",
    "OfflineError",
    "Tokenizer",
    "TokenizerOptions",
    "UnknownComponentError",
    "UnknownTokenError",
    "UnknownVocabError",
    "UnsupportedTokenizerError",
    "Vocab",
    "VocabFormatError",
    "WordsplitError",
    "get_tokenizer",
    "list_vocabs",
    "load_vocab",
    "__version__",
]
