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

__all__ = [
    "BackendUnavailableError",
    "CacheError",
    "ChatTemplateError",
    "CompatAssertionError",
    "ComponentError",
    "DatasetInputError",
    "DecodeInputError",
    "DisallowedSpecialError",
    "DownloadError",
    "DuplicateNameError",
    "EncodeInputError",
    "EncodedFileError",
    "HashMismatchError",
    "MissingDependencyError",
    "OfflineError",
    "OptionTypeError",
    "OptionValueError",
    "PluginError",
    "TrainingInputError",
    "UnknownComponentError",
    "UnknownEncodingError",
    "UnknownModelError",
    "UnknownNameError",
    "UnknownTokenError",
    "UnknownVocabError",
    "UnsupportedTokenizerError",
    "VocabFormatError",
    "WordsplitError",
]


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


def advised(cls: type, what: str, *, python: str, cli: str) -> WordsplitError:
    """The error ``cls`` saying ``what`` was wrong and the fix in Python's words; the
    ``wordsplit`` command prints ``cli_message``, the same error with the fix in its options.

    >>> exc = advised(OptionValueError, "too many tokens", python="pass shard_tokens", cli="use --shard-tokens")
    >>> str(exc), exc.cli_message
    ('too many tokens; pass shard_tokens', 'too many tokens; use --shard-tokens')
    """
    exc = cls(f"{what}; {python}")
    exc.cli_message = f"{what}; {cli}"
    return exc


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


class OptionValueError(WordsplitError, ValueError):
    """A keyword argument with a value it cannot take: ``num_threads=0``."""


class OptionTypeError(WordsplitError, TypeError):
    """A keyword argument of the wrong type: ``num_threads="2"``, ``allowed_special=None``,
    ``views.compare("text", ...)`` where a list of texts is expected."""


class EncodedFileError(WordsplitError, ValueError):
    """A file read back by ``load_encoded`` is not what ``encode_file`` writes: truncated, of
    another dtype, or ids and an index that disagree. The message names the file."""


class TrainingInputError(WordsplitError, ValueError):
    """Training was given input it cannot read: a malformed JSONL line, a missing Parquet
    column, text that is not UTF-8, a bad option value."""


class UnknownEncodingError(UnknownVocabError, ValueError):
    """``wordsplit.compat.tiktoken.get_encoding`` got a name that is not registered (a
    ``ValueError``, as tiktoken raises, and a ``KeyError``, as ``load_vocab`` raises)."""


class UnknownModelError(UnknownNameError):
    """``encoding_for_model`` got a model name it cannot map to an encoding (a ``KeyError``,
    as tiktoken raises)."""


class CompatAssertionError(WordsplitError, AssertionError):
    """A check that tiktoken makes with ``assert`` failed (``explicit_n_vocab`` that does not
    match, ``is_special_token`` given a non-int); an ``AssertionError`` so code written for
    tiktoken keeps working."""


class ChatTemplateError(WordsplitError, ValueError):
    """A chat template is missing, or failed to render (``raise_exception`` in the template,
    an undefined variable, a sandbox violation)."""


class MissingDependencyError(WordsplitError, ImportError):
    """An optional dependency is not installed (``jinja2`` for chat templates: install
    ``wordsplit[chat]``)."""


class CacheError(WordsplitError, OSError):
    """The disk cache could not be read or changed (a permission, a full disk, a path that is not
    a directory); the message names the path."""


class DatasetInputError(WordsplitError, ValueError):
    """An input that cannot be read as documents: a bad document (named by file and row), a
    missing column, an input name that matches no file; or an output directory whose manifest
    was written for other inputs or options."""
