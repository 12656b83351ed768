"""wordsplit: exact byte-level BPE token ids for Qwen3 and OpenAI vocabularies, and back.

The public API is what this module exports: loading vocabularies, building tokenizers,
``WordsplitError`` (the base of every error; the classes are in :mod:`wordsplit.errors`), and
the registries that plug-ins extend (``register_spanner``, ``register_encoder``,
``register_normalizer``, ``register_loader``, ``register_vocab``; see docs/plugins.md).

>>> from wordsplit import load_vocab, TokenizerOptions
>>> tok = TokenizerOptions().build(load_vocab("qwen3"))
>>> tok.encode("hello world")
[14990, 1879]
"""

from __future__ import annotations

from ._version import __version__
from .encoders import register_encoder
from .errors import WordsplitError
from .formats import register_loader
from .normalizers import register_normalizer
from .options import TokenizerOptions
from .spanners import register_spanner
from .tables import MergeTables
from .tokenizer import Tokenizer
from .vocab import Vocab
from .vocabs import list_vocabs, load_vocab, register_vocab


def __getattr__(name: str):
    # Training is imported on first use: most programs only encode, and the trainer's modules
    # would add to every import of wordsplit.
    if name in ("train", "save_vocab"):
        from . import training

        return getattr(training, name)
    raise AttributeError(f"module 'wordsplit' has no attribute {name!r}")


# load_vocab's keywords; every other keyword of get_tokenizer is a TokenizerOptions field.
LOAD_KEYWORDS = ("cache_dir", "offline", "sha256", "pattern", "special_tokens", "n_vocab")


def get_tokenizer(name, **options) -> Tokenizer:
    """``load_vocab(name, ...)`` and ``TokenizerOptions(...).build(...)`` in one call: the
    keywords of :func:`load_vocab` (``pattern=``, ``special_tokens=`` for a rank file,
    ``sha256=``, ``cache_dir=``, ``offline=``) go to it, the others to ``TokenizerOptions``.

    >>> get_tokenizer("cl100k_base").encode("hello world")
    [15339, 1917]
    """
    load = {key: options.pop(key) for key in LOAD_KEYWORDS if key in options}
    return TokenizerOptions(**options).build(load_vocab(name, **load))


__all__ = [
    "MergeTables",
    "Tokenizer",
    "TokenizerOptions",
    "Vocab",
    "WordsplitError",
    "get_tokenizer",
    "list_vocabs",
    "load_vocab",
    "register_encoder",
    "register_loader",
    "register_normalizer",
    "register_spanner",
    "register_vocab",
    "save_vocab",
    "train",
    "__version__",
]
