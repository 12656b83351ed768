"""SentencePiece vocabularies described: what their normalizer, spanner, encoder and decoder read.

A vocabulary loaded from a SentencePiece ``tokenizer.model``
(:mod:`wordsplit.formats.sentencepiece`) names its components by description, as HF's
normalizer programs and split programs do, so it pickles, caches and loads in a fresh process
like any other vocabulary:

* its normalizer is ``sentencepiece-normalizer:`` + JSON of the normalizer spec's flags
  (:class:`~wordsplit.sentencepiece_normalizers.SentencePieceNormalizer`: the dummy prefix,
  whitespace escaping to U+2581, extra whitespace removal), a parametrized family of the
  normalizer registry (a tokenizer.json's ``Metaspace`` is the ``hf-metaspace:`` family);
* its pattern is ``sentencepiece:`` + JSON of :class:`SentencePieceModel`: the user-defined
  pieces (cut out of the normalized text by the ``sentencepiece`` spanner and never merged), the
  unused pieces (which the ``score-merge`` encoder splits back, as ``sentencepiece`` does) and
  what decoding needs;
* it decodes as ``sentencepiece`` decodes (:mod:`wordsplit.engines.sentencepiece`): ``▁`` is a
  space, the first piece loses its leading one (the dummy prefix), byte pieces are bytes and an
  invalid UTF-8 byte among them is U+FFFD each, control pieces are empty and ``<unk>`` is `` ⁇ ``.

>>> model_of(split_pattern(SentencePieceModel(user_defined=("[REF]",)))).user_defined
('[REF]',)
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from .errors import UnsupportedTokenizerError, VocabFormatError

__all__ = ["METASPACE_PREFIX", "MODEL_PREFIX", "NORMALIZER_PREFIX", "SPACE", "SentencePieceModel", "word_cuts",
           "is_sentencepiece", "joined_tokens", "metaspace_name", "model_of", "normalizer_name", "split_pattern"]

#: U+2581 LOWER ONE EIGHTH BLOCK: how SentencePiece writes a space inside pieces.
SPACE = "\u2581"
NORMALIZER_PREFIX = "sentencepiece-normalizer:"
MODEL_PREFIX = "sentencepiece:"


class SentencePieceModel(NamedTuple):
    """What a SentencePiece vocabulary's spanner, encoder and decoder read beyond its tokens.

    Attributes:
        user_defined: the user-defined pieces, matched in the normalized text (longest first)
            and never merged with their neighbours.
        unused: the UNUSED pieces: a merge may make one, and it is then split back into the
            two symbols it was last made from.
        unk_surface: what ``<unk>`` decodes to (the trainer spec's ``unk_surface``).
        strip_leading_space: how decoding drops the dummy prefix: ``"first"`` (the leading
            ``▁`` of the first piece), ``"all"`` (of every piece until text appears:
            ``remove_extra_whitespaces``) or ``"none"``; for ``semantics="hf"``, ``"first"``
            is the decoder's ``Strip(" ", 1, 0)``.
        semantics: ``"sentencepiece"`` (a ``.model`` file: merges by piece score, decode as
            ``sentencepiece``) or ``"hf"`` (a tokenizer.json: merges by rank, byte fallback
            before merging, HF's decoders ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``),
            ``"llama.cpp"`` (a GGUF SentencePiece file: merges by score, decode as
            ``llama_detokenize``) or ``"llama.cpp-bpe"`` (a GGUF ``gemma4`` file: merges by rank,
            decode as ``llama_detokenize``).
        ignore_merges: (``"hf"``) a word that is a token is that token, as HF's ``ignore_merges``.
        words: no token has a ``▁`` right after another character but the ``joined`` ones,
            so no merge joins a ``▁`` to the character before it except inside a joined token
            found in the text there, and the text can be cut before every other such ``▁`` into
            parts that merge alone (the same ids; the parts repeat, so the piece cache serves
            them). The loaders check it on the tokens (:func:`word_cuts`).
        joined: the few tokens that have a ``▁`` right after another character (Gemma's
            ``>▁</``): no cut is made inside a place of the text that spells one.
        metaspace_split: (``"hf"``) HF's ``Metaspace`` with ``split: true``: the text is cut
            before every ``▁`` (``MergedWithNext``), so ``"a▁▁b"`` is ``a``, ``▁``, ``▁b``,
            and each part is merged (and looked up whole, with ``ignore_merges``) alone.
    """

    user_defined: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    unk_surface: str = " \u2047 "
    strip_leading_space: str = "first"
    semantics: str = "sentencepiece"
    ignore_merges: bool = False
    words: bool = False
    joined: tuple[str, ...] = ()
    metaspace_split: bool = False


#: A vocabulary with more tokens that have a ``▁`` after another character is merged a stretch
#: at a time (each place that spells one of them would have to be found in the text).
MAX_JOINED = 64


def word_cuts(tokens, allowed: bool = True) -> dict:
    """The ``words`` and ``joined`` fields of a model whose token texts are ``tokens`` (see
    :class:`SentencePieceModel`): the text is cut at words, but inside the few tokens that have a
    ``▁`` right after another character, unless there are more than :data:`MAX_JOINED` of
    them or ``allowed`` is false.

    >>> word_cuts(["▁the", "▁▁", "ing"]), word_cuts(["▁a", ">▁</"])
    ({'words': True, 'joined': ()}, {'words': True, 'joined': ('>▁</',)})
    """
    joined = joined_tokens(tokens)
    if not allowed or len(joined) > MAX_JOINED:
        return {"words": False, "joined": ()}
    return {"words": True, "joined": joined}


_JOINED_SPACE = re.compile("[^" + SPACE + "]" + SPACE)
_JOINED_SPACE_IN_BLOB = re.compile("[^\0" + SPACE + "]" + SPACE)


def joined_tokens(tokens) -> tuple[str, ...]:
    """The texts among ``tokens`` that have a ``▁`` right after another character, sorted
    (``word_cuts(joined_tokens(tokens))`` is ``word_cuts(tokens)``).

    >>> joined_tokens(["▁a", ">▁</", "b▁"])
    ('>▁</', 'b▁')
    """
    texts = list(tokens)
    blob = "\0".join(texts)
    if blob.count("\0") != max(len(texts) - 1, 0):  # a token holds NUL: each looked at alone
        return tuple(sorted(text for text in texts if _JOINED_SPACE.search(text)))
    # One search over all the tokens (262k for Gemma) at C speed: each match is inside a
    # token, which the NULs around it delimit.
    found = set()
    for match in _JOINED_SPACE_IN_BLOB.finditer(blob):
        start = blob.rfind("\0", 0, match.start()) + 1
        end = blob.find("\0", match.end())
        found.add(blob[start:end if end >= 0 else len(blob)])
    return tuple(sorted(found))


def split_pattern(model: SentencePieceModel) -> str:
    """The vocabulary pattern that describes ``model`` (what ``spanner="auto"`` recognizes).

    >>> split_pattern(SentencePieceModel(user_defined=("<br>",), unk_surface="?"))
    'sentencepiece:{"strip_leading_space":"first","unk_surface":"?","unused":[],"user_defined":["<br>"],"words":false}'
    """
    fields = model._asdict()
    if model.semantics == "sentencepiece":  # (the .model form names only what it uses)
        del fields["semantics"], fields["ignore_merges"]
    if not model.joined:
        del fields["joined"]
    if not model.metaspace_split:  # (named only where it is on)
        del fields["metaspace_split"]
    return MODEL_PREFIX + json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_sentencepiece(pattern: str) -> bool:
    """Whether a vocabulary pattern is a SentencePiece model description."""
    return isinstance(pattern, str) and pattern.startswith(MODEL_PREFIX)


def model_of(pattern: str) -> SentencePieceModel:
    """The :class:`SentencePieceModel` a vocabulary pattern describes.

    Raises:
        UnsupportedTokenizerError: the pattern is not a SentencePiece description (the
            component was given a vocabulary of another kind).
        VocabFormatError: a malformed description.
    """
    if not is_sentencepiece(pattern):
        raise UnsupportedTokenizerError(
            f"this component reads SentencePiece vocabularies only (a pattern starting {MODEL_PREFIX!r}), "
            f"not one with the pattern {pattern[:60]!r}"
        )
    try:
        fields = json.loads(pattern[len(MODEL_PREFIX):])
        model = SentencePieceModel(
            user_defined=tuple(fields["user_defined"]), unused=tuple(fields["unused"]),
            unk_surface=fields["unk_surface"], strip_leading_space=fields["strip_leading_space"],
            semantics=fields.get("semantics", "sentencepiece"), ignore_merges=fields.get("ignore_merges", False),
            words=fields.get("words", False), joined=tuple(fields.get("joined", ())),
            metaspace_split=fields.get("metaspace_split", False),
        )
    except (ValueError, KeyError, TypeError, RecursionError):
        raise VocabFormatError(f"malformed SentencePiece description {pattern[:80]!r}") from None
    if not all(isinstance(p, str) and p for p in (*model.user_defined, *model.unused, *model.joined)) \
            or model.strip_leading_space not in ("first", "all", "none") or not isinstance(model.unk_surface, str) \
            or model.semantics not in ("sentencepiece", "hf", "llama.cpp", "llama.cpp-bpe") \
            or not isinstance(model.ignore_merges, bool) \
            or not isinstance(model.words, bool) or not isinstance(model.metaspace_split, bool) \
            or (model.metaspace_split and model.semantics != "hf"):
        raise VocabFormatError(f"malformed SentencePiece description {pattern[:80]!r}")
    return model


# -- the normalizer -----------------------------------------------------------------------------


def normalizer_name(*, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
                    escape_whitespaces: bool = True, treat_whitespace_as_suffix: bool = False) -> str:
    """The registry name of the SentencePiece normalizer with these flags (the proto's defaults).

    >>> normalizer_name(remove_extra_whitespaces=False)
    'sentencepiece-normalizer:{"add_dummy_prefix":true,"escape_whitespaces":true,"remove_extra_whitespaces":false,"treat_whitespace_as_suffix":false}'
    """
    flags = dict(add_dummy_prefix=add_dummy_prefix, remove_extra_whitespaces=remove_extra_whitespaces,
                 escape_whitespaces=escape_whitespaces, treat_whitespace_as_suffix=treat_whitespace_as_suffix)
    return NORMALIZER_PREFIX + json.dumps(flags, sort_keys=True, separators=(",", ":"))


# -- HF's Metaspace pre-tokenizer, as a normalizer ----------------------------------------------

METASPACE_PREFIX = "hf-metaspace:"


def metaspace_name(*, normalizer: str = "none", replacement: str = SPACE, prepend_scheme: str = "always") -> str:
    """The registry name of HF's ``Metaspace`` (``split: false``) run after ``normalizer``.

    >>> metaspace_name(prepend_scheme="first")
    'hf-metaspace:{"normalizer":"none","prepend_scheme":"first","replacement":"▁"}'
    """
    fields = dict(normalizer=normalizer, replacement=replacement, prepend_scheme=prepend_scheme)
    return METASPACE_PREFIX + json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
