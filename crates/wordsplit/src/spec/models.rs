//! [`ModelSpec`]: how a piece becomes token ids.

use serde_json::Value;

use super::json::{stage, strings, StageObject};
use super::SpecError;

/// A model stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSpec {
    /// Byte-level BPE over the piece's UTF-8 bytes; the merge order is the vocabulary's tables
    /// (`"BPE"`).
    Bpe,
    /// BPE over a SentencePiece vocabulary's characters, a character with no piece taken as
    /// its UTF-8 byte pieces.
    SentencePieceBpe {
        merge_by: MergeBy,
        /// The UNUSED pieces, which a merge that makes one splits back into the two symbols
        /// it was last made from (sentencepiece's rule).
        unused: Vec<String>,
        /// (By rank) a part that is a token is that token, as HF's `ignore_merges`.
        ignore_merges: bool,
    },
}

/// Which pair a SentencePiece merge takes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeBy {
    /// The highest piece score (sentencepiece, llama.cpp).
    Score,
    /// The lowest merge rank, byte fallback before merging (HF).
    Rank,
}

impl MergeBy {
    pub fn name(self) -> &'static str {
        match self {
            Self::Score => "score",
            Self::Rank => "rank",
        }
    }
}

impl ModelSpec {
    pub(super) fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("model", value)?;
        match stage.kind {
            "BPE" => stage.only(&[]).map(|()| Self::Bpe),
            "SentencePieceBpe" => {
                stage.only(&["merge_by", "unused", "ignore_merges"])?;
                let merge_by = match stage.text("merge_by", Some("score"))?.as_str() {
                    "score" => MergeBy::Score,
                    "rank" => MergeBy::Rank,
                    _ => return Err(stage.bad("merge_by is 'score' or 'rank'")),
                };
                let ignore_merges = stage.flag("ignore_merges", false)?;
                if ignore_merges && merge_by != MergeBy::Rank {
                    return Err(stage.bad("ignore_merges is an option of merging by rank"));
                }
                Ok(Self::SentencePieceBpe {
                    merge_by,
                    unused: stage.texts("unused")?,
                    ignore_merges,
                })
            }
            _ => Err(stage.unknown(&["BPE", "SentencePieceBpe"])),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        match self {
            Self::Bpe => stage("BPE", Vec::new()),
            Self::SentencePieceBpe {
                merge_by,
                unused,
                ignore_merges,
            } => stage(
                "SentencePieceBpe",
                vec![
                    ("merge_by", Value::String(merge_by.name().into())),
                    ("unused", strings(unused)),
                    ("ignore_merges", Value::Bool(*ignore_merges)),
                ],
            ),
        }
    }
}
