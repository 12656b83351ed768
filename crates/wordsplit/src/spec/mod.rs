//! The typed description of a tokenizer pipeline: what a vocabulary's text goes through.
//!
//! A [`PipelineSpec`] names one stage of each kind, each an enum with one variant per kind of
//! stage (as HF tokenizers describes a tokenizer.json): a [`NormalizerSpec`], a [`SpannerSpec`]
//! (the pre-tokenizer), a [`ModelSpec`], a [`PostProcessorSpec`] and a [`DecoderSpec`]. A new
//! kind of tokenizer is a new variant here and the stage that runs it; a variant the core does
//! not run yet is refused where the core would run it ([`crate::Error::Unsupported`], or no
//! native stage), and the bindings supply that stage.
//!
//! Where a pipeline crosses a boundary (the Python package, a derived entry, WebAssembly) it is
//! written in its one JSON form: an object of the five stages, each an object tagged by its
//! `"type"`; [`PipelineSpec::to_text`] writes it canonically (keys sorted, no spaces), so equal
//! pipelines give equal text in both languages.
//!
//! ```
//! use wordsplit::spec::{NormalizerSpec, PipelineSpec, SpannerSpec};
//! let spec = PipelineSpec::regex(r"\S+|\s+", NormalizerSpec::Nfc);
//! let text = spec.to_text();
//! assert_eq!(
//!     text,
//!     r#"{"decoder":{"type":"ByteLevel"},"model":{"type":"BPE"},"normalizer":{"type":"NFC"},"post_processor":{"type":"None"},"spanner":{"pattern":"\\S+|\\s+","type":"Regex"}}"#
//! );
//! assert_eq!(PipelineSpec::from_text(&text).unwrap(), spec);
//! assert!(matches!(spec.spanner, SpannerSpec::Regex(_)));
//! ```

mod decoders;
mod json;
mod models;
mod normalizers;
mod post_processors;
mod spanners;

use std::fmt;

use serde_json::{Map, Value};

pub use decoders::{DecoderSpec, DecoderStyle, StripLeadingSpace};
pub use models::{MergeBy, ModelSpec};
pub use normalizers::{NormalizerSpec, PrependScheme, SentencePieceFlags};
pub use post_processors::{PostProcessorSpec, TemplateItem, TemplateSpecial, TemplateText};
pub use spanners::{Behavior, SentencePieceSplit, SpannerSpec, SplitStep};

/// A malformed or inconsistent pipeline description: what is wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed pipeline description: {}", self.0)
    }
}

impl std::error::Error for SpecError {}

impl From<SpecError> for crate::Error {
    fn from(error: SpecError) -> Self {
        crate::Error::VocabFormat(error.to_string())
    }
}

/// A vocabulary's pipeline: normalizer → spanner → model (→ post-processor, when special
/// tokens are asked for), and the decoder back.
///
/// A [`ModelSpec::SentencePieceBpe`] comes with a [`SpannerSpec::SentencePiece`] and a
/// [`DecoderSpec::SentencePiece`], all three; a [`SpannerSpec::SentencePiece`] cuts text for
/// that model, a [`ModelSpec::Unigram`] or a [`ModelSpec::CharacterBpe`] (a tokenizer.json
/// converted from a SentencePiece model) ([`Self::checked`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineSpec {
    pub normalizer: NormalizerSpec,
    pub spanner: SpannerSpec,
    pub model: ModelSpec,
    pub decoder: DecoderSpec,
    pub post_processor: PostProcessorSpec,
}

/// The SentencePiece files wordsplit reads, as (how the model merges, how it decodes):
/// sentencepiece's `.model`, HF's tokenizer.json, llama.cpp's GGUF and its `gemma4` GGUF.
const SENTENCEPIECE_KINDS: [(MergeBy, DecoderStyle); 4] = [
    (MergeBy::Score, DecoderStyle::SentencePiece),
    (MergeBy::Rank, DecoderStyle::Hf),
    (MergeBy::Score, DecoderStyle::LlamaCpp),
    (MergeBy::Rank, DecoderStyle::LlamaCpp),
];

impl PipelineSpec {
    /// Byte-level BPE split by one regex (tiktoken's kind of vocabulary).
    pub fn regex(pattern: &str, normalizer: NormalizerSpec) -> Self {
        Self {
            normalizer,
            spanner: SpannerSpec::Regex(pattern.to_owned()),
            model: ModelSpec::Bpe,
            decoder: DecoderSpec::ByteLevel,
            post_processor: PostProcessorSpec::None,
        }
    }

    /// Whether this is a SentencePiece pipeline (characters merged, pieces decoded as
    /// SentencePiece decodes).
    pub fn is_sentencepiece(&self) -> bool {
        matches!(self.model, ModelSpec::SentencePieceBpe { .. })
    }

    /// The stages checked together: a SentencePieceBpe model has a SentencePiece split and
    /// decoder, in one of the combinations the files have; a SentencePiece split cuts text for
    /// a SentencePieceBpe, Unigram or CharacterBpe model.
    pub fn checked(self) -> Result<Self, SpecError> {
        match (&self.spanner, &self.model, &self.decoder) {
            (
                SpannerSpec::SentencePiece(split),
                ModelSpec::SentencePieceBpe { merge_by, .. },
                DecoderSpec::SentencePiece { style, .. },
            ) => {
                let kind = (*merge_by, *style);
                if !SENTENCEPIECE_KINDS.contains(&kind) {
                    return Err(SpecError(format!(
                        "a SentencePiece model merged by {} with the {} decoder is no tokenizer \
                         wordsplit knows",
                        merge_by.name(),
                        style.name()
                    )));
                }
                if split.metaspace_split && kind != (MergeBy::Rank, DecoderStyle::Hf) {
                    return Err(SpecError(
                        "metaspace_split is HF's Metaspace: it needs merge_by 'rank' and style 'hf'"
                            .into(),
                    ));
                }
                Ok(self)
            }
            (_, ModelSpec::SentencePieceBpe { .. }, _) => Err(SpecError(format!(
                "a SentencePiece pipeline has a SentencePiece spanner, a SentencePieceBpe model \
                 and a SentencePiece decoder, all three; got {}, {}, {}",
                self.spanner.kind(),
                self.model.kind(),
                self.decoder.kind()
            ))),
            (SpannerSpec::SentencePiece(_), model, _)
                if !matches!(
                    model,
                    ModelSpec::Unigram { .. } | ModelSpec::CharacterBpe { .. }
                ) =>
            {
                Err(SpecError(format!(
                    "a SentencePiece spanner cuts text for a SentencePieceBpe, Unigram or \
                     CharacterBpe model, not {}",
                    model.kind()
                )))
            }
            _ => Ok(self),
        }
    }

    /// The pipeline a JSON object describes.
    pub fn from_json(value: &Value) -> Result<Self, SpecError> {
        let object = value
            .as_object()
            .filter(|o| o.len() == STAGES.len() && STAGES.iter().all(|s| o.contains_key(*s)))
            .ok_or_else(|| {
                SpecError(format!(
                    "a pipeline is an object of exactly {}",
                    STAGES.join(", ")
                ))
            })?;
        Self {
            normalizer: NormalizerSpec::from_json(&object["normalizer"])?,
            spanner: SpannerSpec::from_json(&object["spanner"])?,
            model: ModelSpec::from_json(&object["model"])?,
            decoder: DecoderSpec::from_json(&object["decoder"])?,
            post_processor: PostProcessorSpec::from_json(&object["post_processor"])?,
        }
        .checked()
    }

    /// [`Self::from_json`] of JSON text.
    pub fn from_text(text: &str) -> Result<Self, SpecError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| SpecError(format!("a pipeline description is JSON ({e})")))?;
        Self::from_json(&value)
    }

    /// The pipeline's JSON object, its keys sorted.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("decoder".into(), self.decoder.to_json());
        object.insert("model".into(), self.model.to_json());
        object.insert("normalizer".into(), self.normalizer.to_json());
        object.insert("post_processor".into(), self.post_processor.to_json());
        object.insert("spanner".into(), self.spanner.to_json());
        Value::Object(object)
    }

    /// The canonical text of [`Self::to_json`]: keys sorted, no spaces, characters beyond
    /// ASCII as they are (the Python package's `PipelineSpec.dumps` writes the same text).
    pub fn to_text(&self) -> String {
        self.to_json().to_string()
    }
}

const STAGES: [&str; 5] = [
    "normalizer",
    "spanner",
    "model",
    "decoder",
    "post_processor",
];

#[cfg(test)]
mod tests;
