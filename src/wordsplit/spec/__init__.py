r"""The typed description of a tokenizer pipeline: what a vocabulary's text goes through.

A :class:`PipelineSpec` names one stage of each kind, each a typed value with one class per
variant (as HF tokenizers describes a tokenizer.json): a normalizer, a spanner (the
pre-tokenizer), a model, a post-processor and a decoder, each family in a module of this
package (:mod:`.normalizers`, :mod:`.spanners`, :mod:`.models`, :mod:`.post_processors`,
:mod:`.decoders`; :mod:`.stage` holds what they share). A vocabulary holds one
(:attr:`wordsplit.Vocab.pipeline`); the components that run each stage are chosen from it when
a tokenizer is built. A new kind of tokenizer is a new variant here and the component that runs
it.

Where a pipeline crosses a boundary (pickles, the parsed-vocabulary cache) it is written in
its one JSON form (:meth:`PipelineSpec.to_json`): an object of the five stages, each an object
tagged by its ``"type"``; docs/pipeline.md documents every variant.

>>> spec = PipelineSpec(normalizer=Nfc(), spanner=RegexSplit(r"\S+|\s+"))
>>> spec.dumps()
'{"decoder":{"type":"ByteLevel"},"model":{"type":"BPE"},"normalizer":{"type":"NFC"},"post_processor":{"type":"None"},"spanner":{"pattern":"\\\\S+|\\\\s+","type":"Regex"}}'
>>> PipelineSpec.loads(spec.dumps()) == spec
True
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import VocabFormatError
from .normalizers import (  # noqa: F401  (the public names of wordsplit.spec)
    BertNormalizer, LlamaCppBertNormalizer, LlamaCppUnigramNormalizer, Lowercase, Metaspace, NORMALIZER_KINDS, Nfc,
    Nfd, Nfkc, Nfkd, NoNormalizer, Normalizer, PluginNormalizer, Precompiled, PrefixSpace, Prepend, Replace,
    STEP_KINDS, SentencePieceNormalizer, Sequence, Strip, StripAccents, normalizer_from_name, normalizer_name,
)
from .spanners import (  # noqa: F401  (the public names of wordsplit.spec)
    BEHAVIORS, LlamaCppWordPieceSplit, PrefixSpaceStep, RegexSplit, SPANNER_KINDS, SentencePieceSplit, Spanner, Split,
    SplitProgram,
)
from .models import (  # noqa: F401  (the public names of wordsplit.spec)
    CharacterBpe, BytePairEncoding, MODEL_KINDS, Model, SentencePieceBpe, Unigram, WordLevel, WordPiece,
)
from .decoders import (  # noqa: F401  (the public names of wordsplit.spec)
    NoDecoder, ByteLevel, DECODER_KINDS, DECODER_STYLES, Decoder, SentencePieceDecoder, WordPieceDecoder,
)
from .post_processors import (  # noqa: F401  (the public names of wordsplit.spec)
    BertProcessing, ByteLevelProcessing, NoPostProcessor, POST_PROCESSOR_KINDS, PostProcessor,
    PostProcessorSequence, RobertaProcessing, TemplateProcessing, TemplateSequence, TemplateSpecial,
    TemplateSpecialToken,
)
from .stage import FAMILIES, Stage, bad, family, read_stage  # noqa: F401

__all__ = [
    "BEHAVIORS",
    "BertNormalizer",
    "BertProcessing",
    "ByteLevel",
    "ByteLevelProcessing",
    "BytePairEncoding",
    "CharacterBpe",
    "DECODER_KINDS",
    "DECODER_STYLES",
    "Decoder",
    "FAMILIES",
    "LlamaCppBertNormalizer",
    "LlamaCppUnigramNormalizer",
    "LlamaCppWordPieceSplit",
    "Lowercase",
    "MODEL_KINDS",
    "Metaspace",
    "Model",
    "NORMALIZER_KINDS",
    "Nfc",
    "Nfd",
    "Nfkc",
    "Nfkd",
    "NoDecoder",
    "NoNormalizer",
    "NoPostProcessor",
    "Normalizer",
    "POST_PROCESSOR_KINDS",
    "PipelineSpec",
    "PluginNormalizer",
    "PostProcessor",
    "PostProcessorSequence",
    "Precompiled",
    "PrefixSpace",
    "PrefixSpaceStep",
    "Prepend",
    "RegexSplit",
    "Replace",
    "RobertaProcessing",
    "SPANNER_KINDS",
    "STEP_KINDS",
    "SentencePieceBpe",
    "SentencePieceDecoder",
    "SentencePieceNormalizer",
    "SentencePieceSplit",
    "Sequence",
    "Spanner",
    "Split",
    "SplitProgram",
    "Stage",
    "Strip",
    "StripAccents",
    "TemplateProcessing",
    "TemplateSequence",
    "TemplateSpecial",
    "TemplateSpecialToken",
    "Unigram",
    "WordLevel",
    "WordPiece",
    "WordPieceDecoder",
    "normalizer_from_name",
    "normalizer_name",
    "read_stage",
]


_STAGES = ("normalizer", "spanner", "model", "decoder", "post_processor")
# (merge_by, decoder style) of the SentencePiece files wordsplit reads: sentencepiece's .model,
# HF's tokenizer.json, llama.cpp's GGUF, llama.cpp's GGUF gemma4.
_SENTENCEPIECE_KINDS = (("score", "sentencepiece"), ("rank", "hf"), ("score", "llama.cpp"), ("rank", "llama.cpp"))


class PipelineSpec:
    """A vocabulary's pipeline: normalizer → spanner → model (→ post-processor, when special
    tokens are asked for), and the decoder back.

    Byte-level BPE (``model=BytePairEncoding()``, ``decoder=ByteLevel()``) is the default; a
    SentencePiece BPE vocabulary has a :class:`SentencePieceSplit`, a :class:`SentencePieceBpe`
    and a :class:`SentencePieceDecoder`, all three; a :class:`SentencePieceSplit` cuts text for
    those and for a :class:`Unigram` or :class:`CharacterBpe` model (a tokenizer.json
    converted from a SentencePiece model).

    Raises:
        VocabFormatError: a stage of the wrong family, or stages that do not fit together.
    """

    __slots__ = _STAGES
    spanner: Spanner
    normalizer: Normalizer
    model: Model
    decoder: Decoder
    post_processor: PostProcessor

    def __init__(self, spanner: Spanner, normalizer: Normalizer = NoNormalizer(),
                 model: Model = BytePairEncoding(), decoder: Decoder = ByteLevel(),
                 post_processor: PostProcessor = NoPostProcessor()) -> None:
        for name, stage in (("normalizer", normalizer), ("spanner", spanner), ("model", model),
                            ("decoder", decoder), ("post_processor", post_processor)):
            object.__setattr__(self, name, stage)
        for name in _STAGES:
            stage = getattr(self, name)
            if not isinstance(stage, Stage) or stage.family != name:
                raise VocabFormatError(f"a pipeline's {name} must be a {name} stage (wordsplit.spec), "
                                       f"not {stage!r}")
        if isinstance(self.model, SentencePieceBpe):
            self._check_sentencepiece_bpe()
        elif isinstance(self.spanner, SentencePieceSplit) and not isinstance(self.model, (Unigram, CharacterBpe)):
            raise VocabFormatError(f"a SentencePiece spanner cuts text for a SentencePieceBpe, Unigram or "
                                   f"CharacterBpe model, not {self.model.kind}")

    def _check_sentencepiece_bpe(self) -> None:
        if not isinstance(self.spanner, SentencePieceSplit) or not isinstance(self.decoder, SentencePieceDecoder):
            raise VocabFormatError(
                "a SentencePiece pipeline has a SentencePieceSplit spanner, a SentencePieceBpe model and a "
                f"SentencePieceDecoder, all three; got {self.spanner.kind}, {self.model.kind}, {self.decoder.kind}"
            )
        if (self.model.merge_by, self.decoder.style) not in _SENTENCEPIECE_KINDS:
            raise VocabFormatError(
                f"a SentencePiece model merged by {self.model.merge_by} with the {self.decoder.style} decoder is no "
                f"tokenizer wordsplit knows; known: {', '.join(f'{m} with {s}' for m, s in _SENTENCEPIECE_KINDS)}"
            )
        if self.spanner.metaspace_split and (self.model.merge_by, self.decoder.style) != ("rank", "hf"):
            raise VocabFormatError("metaspace_split is HF's Metaspace: it needs merge_by='rank' and style='hf'")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("PipelineSpec is immutable; build another")

    def __eq__(self, other: object) -> bool:
        return type(other) is PipelineSpec and all(getattr(self, n) == getattr(other, n) for n in _STAGES)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in _STAGES))

    def __repr__(self) -> str:
        stages = ", ".join(f"{name}={getattr(self, name)!r}" for name in _STAGES)
        return f"PipelineSpec({stages})"

    def __reduce__(self):
        return PipelineSpec, (self.spanner, self.normalizer, self.model, self.decoder, self.post_processor)

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
        "decoder": ..., "post_processor": ...}``, each stage an object tagged by its ``"type"``."""
        return {name: getattr(self, name).to_json() for name in _STAGES}

    def dumps(self) -> str:
        """:meth:`to_json` as canonical text (sorted keys, no spaces): equal pipelines give
        equal text, which the content hash reads."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, value: Any) -> PipelineSpec:
        """The pipeline a JSON object describes.

        Raises:
            VocabFormatError: not exactly the five stages, each well-formed.
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
