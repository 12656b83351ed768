//! [`DecoderSpec`]: how token ids become text again.

use serde_json::Value;

use super::json::{stage, strings, StageObject};
use super::SpecError;

/// A decoder stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecoderSpec {
    /// Each token's bytes, concatenated, read as UTF-8.
    ByteLevel,
    /// A SentencePiece vocabulary's pieces: `▁` is a space, byte pieces are bytes, the dummy
    /// prefix dropped, in the style of the tokenizer the file comes from.
    SentencePiece {
        style: DecoderStyle,
        /// What `<unk>` decodes to.
        unk_surface: String,
        strip_leading_space: StripLeadingSpace,
        /// (llama.cpp) the UNUSED pieces, which decode as nothing.
        unused: Vec<String>,
    },
    /// HF's `WordPiece` decoder: each token after the first is put after a space, unless it
    /// starts with `prefix`, which is dropped; with `cleanup`, HF's cleanup of the text (no
    /// space before `.`, `?`, `!`, `,`, and English contractions joined).
    WordPiece { prefix: String, cleanup: bool },
    /// A file without a decoder: the tokens' texts joined by spaces (HF's `decode` then).
    None,
}

/// Whose decode a SentencePiece vocabulary follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecoderStyle {
    /// `sentencepiece`'s.
    SentencePiece,
    /// HF's decoders (`Replace`, `ByteFallback`, `Fuse`, `Strip`).
    Hf,
    /// llama.cpp's `llama_detokenize`.
    LlamaCpp,
}

impl DecoderStyle {
    pub fn name(self) -> &'static str {
        match self {
            Self::SentencePiece => "sentencepiece",
            Self::Hf => "hf",
            Self::LlamaCpp => "llama.cpp",
        }
    }
}

/// How the dummy prefix is dropped from decoded text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StripLeadingSpace {
    /// The leading `▁` of the first piece.
    First,
    /// That of every piece until text appears (`remove_extra_whitespaces`).
    All,
    /// None.
    None,
}

impl StripLeadingSpace {
    pub fn name(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::All => "all",
            Self::None => "none",
        }
    }
}

impl DecoderSpec {
    /// The kind's name, its `"type"` in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ByteLevel => "ByteLevel",
            Self::SentencePiece { .. } => "SentencePiece",
            Self::WordPiece { .. } => "WordPiece",
            Self::None => "None",
        }
    }

    pub(super) fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("decoder", value)?;
        match stage.kind {
            "ByteLevel" => stage.only(&[]).map(|()| Self::ByteLevel),
            "SentencePiece" => {
                stage.only(&["style", "unk_surface", "strip_leading_space", "unused"])?;
                let style = match stage.text("style", Some("sentencepiece"))?.as_str() {
                    "sentencepiece" => DecoderStyle::SentencePiece,
                    "hf" => DecoderStyle::Hf,
                    "llama.cpp" => DecoderStyle::LlamaCpp,
                    _ => return Err(stage.bad("style is 'sentencepiece', 'hf' or 'llama.cpp'")),
                };
                let strip_leading_space = match stage
                    .text("strip_leading_space", Some("first"))?
                    .as_str()
                {
                    "first" => StripLeadingSpace::First,
                    "all" => StripLeadingSpace::All,
                    "none" => StripLeadingSpace::None,
                    _ => return Err(stage.bad("strip_leading_space is 'first', 'all' or 'none'")),
                };
                Ok(Self::SentencePiece {
                    style,
                    unk_surface: stage.text("unk_surface", Some(" \u{2047} "))?,
                    strip_leading_space,
                    unused: stage.texts("unused")?,
                })
            }
            "WordPiece" => {
                stage.only(&["prefix", "cleanup"])?;
                Ok(Self::WordPiece {
                    prefix: stage.text("prefix", Some("##"))?,
                    cleanup: stage.flag("cleanup", true)?,
                })
            }
            "None" => stage.only(&[]).map(|()| Self::None),
            _ => Err(stage.unknown(&["ByteLevel", "SentencePiece", "WordPiece", "None"])),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        let kind = self.kind();
        match self {
            Self::ByteLevel | Self::None => stage(kind, Vec::new()),
            Self::SentencePiece {
                style,
                unk_surface,
                strip_leading_space,
                unused,
            } => stage(
                kind,
                vec![
                    ("style", Value::String(style.name().into())),
                    ("unk_surface", Value::String(unk_surface.clone())),
                    (
                        "strip_leading_space",
                        Value::String(strip_leading_space.name().into()),
                    ),
                    ("unused", strings(unused)),
                ],
            ),
            Self::WordPiece { prefix, cleanup } => stage(
                kind,
                vec![
                    ("prefix", Value::String(prefix.clone())),
                    ("cleanup", Value::Bool(*cleanup)),
                ],
            ),
        }
    }
}
