"""The exceptions wordsplit raises.

Every error is a ``WordsplitError`` and also subclasses the builtin a caller would
naturally catch (``ValueError``, ``KeyError``, ``TypeError``...), so code written for
tiktoken or HF tokenizers keeps working. Messages say what was wrong and how to fix it.

>>> from wordsplit.errors import UnknownVocabError
>>> issubclass(UnknownVocabError, KeyError)
True
"""

from __future__ import annotations

from typing import Iterable


class WordsplitError(Exception):
    """Base class of every error raised by wordsplit."""

    def __str__(self) -> str:
        # KeyError quotes its argument; keep messages readable for every subclass.
        return str(self.args[0]) if self.args else ""


class UnknownNameError(WordsplitError, KeyError):
    """A name that is not in a registry (vocab, encoder, spanner, normalizer, ...)."""


class UnknownVocabError(UnknownNameError):
    """``load_vocab`` got a name that is neither registered nor a path."""


class UnknownComponentError(UnknownNameError):
    """An encoder, spanner, normalizer or backend name that is not registered."""


class DuplicateNameError(WordsplitError, ValueError):
    """A component, loader or vocabulary name registered twice."""


class PluginError(WordsplitError, ImportError):
    """A plug-in package (entry point group ``wordsplit.plugins``) failed to import."""


class ComponentError(WordsplitError, ValueError):
    """A spanner, encoder or normalizer broke its contract (pieces that do not cover the text,
    ids that are not token ids, a result that is not a str...)."""


class VocabFormatError(WordsplitError, ValueError):
    """A vocabulary file is malformed, truncated or inconsistent."""


class UnsupportedTokenizerError(WordsplitError, ValueError):
    """A tokenizer file uses a construct wordsplit does not implement."""


class DisallowedSpecialError(WordsplitError, ValueError):
    """The text contains a special token that the call did not allow."""


class UnknownTokenError(WordsplitError, KeyError):
    """A token id or token string that the vocabulary does not have."""


class EncodeInputError(WordsplitError, TypeError):
    """``encode`` was given something that is not a ``str``."""


class DecodeInputError(WordsplitError, TypeError):
    """``decode`` or a vocabulary lookup was given something that is not a token id or token."""


class BackendUnavailableError(WordsplitError, RuntimeError):
    """``backend="native"`` was requested but the extension is not built."""


def closest(name: str, known: Iterable[str]) -> str:
    """Return a ``" Did you mean 'x'?"`` suffix for ``name``, or ``""`` when nothing is close.

    >>> closest("cl100k", ["cl100k_base", "o200k_base"])
    " Did you mean 'cl100k_base'?"
    """
    import difflib  # here, not at the top: only a failed lookup needs it (import time)

    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return f" Did you mean {match[0]!r}?" if match else ""


def unknown_name(kind: str, name: str, known: Iterable[str], cls: type = UnknownComponentError):
    """Build the error for an unknown registry name: it lists the known ones and suggests one."""
    known = sorted(known)
    return cls(f"unknown {kind} {name!r}; known: {', '.join(known)}.{closest(name, known)}")


class HashMismatchError(WordsplitError, ValueError):
    """A downloaded or cached file's sha256 differs from the one it is pinned to."""


class DownloadError(WordsplitError, OSError):
    """A download failed: not found, not authorized, or the network gave up after retries."""

    #: The HTTP status when the server answered with an error (404, 401...), else None.
    status: int | None = None


class OfflineError(DownloadError):
    """A download was needed, but offline mode forbids the network."""


class CacheError(WordsplitError, OSError):
    """The disk cache could not be read or changed (a permission, a full disk, a path that is not
    a directory); the message names the path."""
