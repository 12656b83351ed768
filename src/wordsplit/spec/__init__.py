r"""The typed description of a tokenizer pipeline: what a vocabulary's text goes through.

A :class:`PipelineSpec` names one stage of each kind, each a typed value with one class per
variant (as HF tokenizers describes a tokenizer.json): a normalizer
(:mod:`~wordsplit.spec.normalizers`), a spanner, the pre-tokenizer
(:mod:`~wordsplit.spec.spanners`), a model (:mod:`~wordsplit.spec.models`) and a decoder
(:mod:`~wordsplit.spec.decoders`). A vocabulary holds one (:attr:`wordsplit.Vocab.pipeline`);
the components that run each stage are chosen from it when a tokenizer is built. A new kind of
tokenizer is a new variant here and the component that runs it.

Where a pipeline crosses a boundary (pickles, the parsed-vocabulary cache) it is written in
its one JSON form (:meth:`PipelineSpec.to_json`): an object of the four stages, each an object
tagged by its ``"type"``; docs/pipeline.md documents every variant.

>>> spec = PipelineSpec(normalizer=Nfc(), spanner=RegexSplit(r"\S+|\s+"))
>>> spec.dumps()
'{"decoder":{"type":"ByteLevel"},"model":{"type":"BPE"},"normalizer":{"type":"NFC"},"spanner":{"pattern":"\\\\S+|\\\\s+","type":"Regex"}}'
>>> PipelineSpec.loads(spec.dumps()) == spec
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import VocabFormatError
from .base import FAMILIES, Stage, read_stage
from .decoders import ByteLevel, Decoder, SentencePieceDecoder
from .models import BytePairEncoding, Model, SentencePieceBpe
from .normalizers import (
    Lowercase, Metaspace, Nfc, Nfd, Nfkc, Nfkd, NoNormalizer, Normalizer, PluginNormalizer, Prepend, PrefixSpace,
    Replace, SentencePieceNormalizer, Sequence, Strip, StripAccents, normalizer_from_name,
)
from .spanners import BEHAVIORS, PrefixSpaceStep, RegexSplit, SentencePieceSplit, Spanner, Split, SplitProgram

__all__ = [
    "BEHAVIORS", "ByteLevel", "BytePairEncoding", "Decoder", "Lowercase", "Metaspace", "Model", "Nfc", "Nfd", "Nfkc",
    "Nfkd", "NoNormalizer", "Normalizer", "PipelineSpec", "PluginNormalizer", "Prepend", "PrefixSpace",
    "PrefixSpaceStep", "RegexSplit", "Replace", "SentencePieceBpe", "SentencePieceDecoder", "SentencePieceNormalizer",
    "SentencePieceSplit", "Sequence", "Spanner", "Split", "SplitProgram", "Stage", "Strip", "StripAccents",
    "normalizer_from_name", "read_stage",
]

_STAGES = ("normalizer", "spanner", "model", "decoder")
# (merge_by, decoder style) of the SentencePiece files wordsplit reads: sentencepiece's .model,
# HF's tokenizer.json, llama.cpp's GGUF, llama.cpp's GGUF gemma4.
_SENTENCEPIECE_KINDS = (("score", "sentencepiece"), ("rank", "hf"), ("score", "llama.cpp"), ("rank", "llama.cpp"))


@dataclass(frozen=True)
class PipelineSpec:
    """A vocabulary's pipeline: normalizer → spanner → model, and the decoder back.

    Byte-level BPE (``model=BytePairEncoding()``, ``decoder=ByteLevel()``) is the default; a
    SentencePiece vocabulary has a :class:`SentencePieceSplit`, a :class:`SentencePieceBpe`
    and a :class:`SentencePieceDecoder`, all three.

    Raises:
        VocabFormatError: a stage of the wrong family, or stages that do not fit together.
    """

    spanner: Spanner
    normalizer: Normalizer = field(default_factory=NoNormalizer)
    model: Model = field(default_factory=BytePairEncoding)
    decoder: Decoder = field(default_factory=ByteLevel)

    def __post_init__(self) -> None:
        for name in _STAGES:
            stage = getattr(self, name)
            if not isinstance(stage, Stage) or stage.family != name:
                raise VocabFormatError(f"a pipeline's {name} must be a {name} stage (wordsplit.spec), "
                                       f"not {stage!r}")
        pieces = isinstance(self.spanner, SentencePieceSplit), isinstance(self.model, SentencePieceBpe), \
            isinstance(self.decoder, SentencePieceDecoder)
        if len(set(pieces)) != 1:
            raise VocabFormatError(
                "a SentencePiece pipeline has a SentencePieceSplit spanner, a SentencePieceBpe model and a "
                f"SentencePieceDecoder, all three; got {self.spanner.kind}, {self.model.kind}, {self.decoder.kind}"
            )
        if pieces[0] and (self.model.merge_by, self.decoder.style) not in _SENTENCEPIECE_KINDS:
            raise VocabFormatError(
                f"a SentencePiece model merged by {self.model.merge_by} with the {self.decoder.style} decoder is no "
                f"tokenizer wordsplit knows; known: {', '.join(f'{m} with {s}' for m, s in _SENTENCEPIECE_KINDS)}"
            )
        if pieces[0] and self.spanner.metaspace_split and (self.model.merge_by, self.decoder.style) != ("rank", "hf"):
            raise VocabFormatError("metaspace_split is HF's Metaspace: it needs merge_by='rank' and style='hf'")

    @property
    def sentencepiece(self) -> bool:
        """Whether this is a SentencePiece pipeline (its characters merged, its pieces decoded
        as SentencePiece decodes)."""
        return isinstance(self.model, SentencePieceBpe)

    @property
    def pattern(self) -> str | None:
        """The split regex of a :class:`RegexSplit` spanner, else None."""
        return self.spanner.pattern if isinstance(self.spanner, RegexSplit) else None

    def to_json(self) -> dict[str, Any]:
        """The pipeline's one JSON form: ``{"normalizer": ..., "spanner": ..., "model": ...,
        "decoder": ...}``, each stage an object tagged by its ``"type"``."""
        return {name: getattr(self, name).to_json() for name in _STAGES}

    def dumps(self) -> str:
        """:meth:`to_json` as canonical text (sorted keys, no spaces): equal pipelines give
        equal text, which the content hash reads."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, value: Any) -> PipelineSpec:
        """The pipeline a JSON object describes.

        Raises:
            VocabFormatError: not exactly the four stages, each well-formed.
        """
        if not isinstance(value, dict) or set(value) != set(_STAGES):
            raise VocabFormatError(f"a pipeline is an object of exactly {', '.join(_STAGES)}; got {value!r:.120}")
        return cls(**{name: read_stage(name, value[name]) for name in _STAGES})

    @classmethod
    def loads(cls, text: str) -> PipelineSpec:
        """:meth:`from_json` of JSON text.

        Raises:
            VocabFormatError: not JSON, or not a pipeline.
        """
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            raise VocabFormatError(f"a pipeline description is JSON; got {text[:80]!r}") from None
        return cls.from_json(value)


assert set(FAMILIES) >= set(_STAGES)
