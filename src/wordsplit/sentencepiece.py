"""SentencePiece vocabularies: the pipeline their loaders describe, and where their text may be cut.

A vocabulary loaded from a SentencePiece ``tokenizer.model``
(:mod:`wordsplit.formats.sentencepiece`), a SentencePiece-style tokenizer.json or a GGUF
SentencePiece file has a SentencePiece pipeline (:func:`sentencepiece_pipeline`): its
normalizer, a :class:`~wordsplit.spec.SentencePieceSplit` (the user-defined pieces, cut out of
the normalized text by the ``sentencepiece`` spanner and never merged, and where the text may
be cut at words), a :class:`~wordsplit.spec.SentencePieceBpe` model and a
:class:`~wordsplit.spec.SentencePieceDecoder`: ``▁`` is a space, the first piece loses its
leading one (the dummy prefix), byte pieces are bytes, control pieces are empty and ``<unk>``
is `` ⁇ `` (:mod:`wordsplit.engines.sentencepiece`).

>>> sentencepiece_pipeline(semantics="hf").model
SentencePieceBpe(merge_by='rank', unused=(), ignore_merges=False, byte_fallback=True, unk_token='<unk>')
"""

from __future__ import annotations

import re

from .spec import (
    NoNormalizer, PipelineSpec, SentencePieceBpe, SentencePieceDecoder, SentencePieceSplit, Stage,
)

__all__ = ["SEMANTICS", "SPACE", "joined_tokens", "sentencepiece_pipeline", "word_cuts"]

#: U+2581 LOWER ONE EIGHTH BLOCK: how SentencePiece writes a space inside pieces.
SPACE = "\u2581"

#: The tool whose behaviour a SentencePiece file is read with → (how its model merges, how it
#: decodes): ``sentencepiece`` (a ``.model`` file), ``hf`` (a tokenizer.json), ``llama.cpp`` (a
#: GGUF SentencePiece file), ``llama.cpp-bpe`` (a GGUF ``gemma4`` file, merged by rank).
SEMANTICS = {"sentencepiece": ("score", "sentencepiece"), "hf": ("rank", "hf"),
             "llama.cpp": ("score", "llama.cpp"), "llama.cpp-bpe": ("rank", "llama.cpp")}


def sentencepiece_pipeline(*, semantics: str, normalizer: Stage = NoNormalizer(), user_defined: tuple = (),
                           unused: tuple = (), unk_surface: str = " \u2047 ", strip_leading_space: str = "first",
                           ignore_merges: bool = False, words: bool = False, joined: tuple = (),
                           metaspace_split: bool = False, byte_fallback: bool = True,
                           unk_token: str = "<unk>") -> PipelineSpec:
    """The pipeline of a SentencePiece vocabulary read with ``semantics`` (a key of
    :data:`SEMANTICS`). ``unused`` are the UNUSED pieces: ``sentencepiece`` splits one a merge
    makes back into the two symbols it was last made from (the model's), llama.cpp renders one
    as nothing (the decoder's). The other fields are those of the stages.
    """
    merge_by, style = SEMANTICS[semantics]
    return PipelineSpec(
        normalizer=normalizer,
        spanner=SentencePieceSplit(user_defined=tuple(user_defined), words=words, joined=tuple(joined),
                                   metaspace_split=metaspace_split),
        model=SentencePieceBpe(merge_by=merge_by, unused=tuple(unused) if style == "sentencepiece" else (),
                               ignore_merges=ignore_merges, byte_fallback=byte_fallback, unk_token=unk_token),
        decoder=SentencePieceDecoder(style=style, unk_surface=unk_surface, strip_leading_space=strip_leading_space,
                                     unused=tuple(unused) if style == "llama.cpp" else ()),
    )


#: A vocabulary with more tokens that have a ``▁`` after another character is merged a stretch
#: at a time (each place that spells one of them would have to be found in the text).
MAX_JOINED = 64


def word_cuts(tokens, allowed: bool = True) -> dict:
    """The ``words`` and ``joined`` fields of a model whose token texts are ``tokens`` (see
    :class:`~wordsplit.spec.SentencePieceSplit`): the text is cut at words, but inside the few tokens that have a
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


