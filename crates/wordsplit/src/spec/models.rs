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
    /// BPE over a SentencePiece vocabulary's characters, a symbol left that is no piece taken
    /// as its UTF-8 byte pieces, or without `byte_fallback` as `unk_token`.
    SentencePieceBpe {
        merge_by: MergeBy,
        /// The UNUSED pieces, which a merge that makes one splits back into the two symbols
        /// it was last made from (sentencepiece's rule).
        unused: Vec<String>,
        /// (By rank) a part that is a token is that token, as HF's `ignore_merges`.
        ignore_merges: bool,
        /// A symbol left that is no piece is its byte pieces; false (by score only): it is
        /// `unk_token`, a run of such symbols one `unk_token` (sentencepiece's rule).
        byte_fallback: bool,
        /// The unknown piece (a special token).
        unk_token: String,
    },
    /// BERT's WordPiece: a piece is cut from the left into the longest tokens the vocabulary
    /// has, every one after the first spelled with `continuing_subword_prefix`; a piece with a
    /// part no token spells, or of more than `max_input_chars_per_word` characters, is the one
    /// token `unk_token`.
    WordPiece {
        unk_token: String,
        continuing_subword_prefix: String,
        max_input_chars_per_word: u64,
    },
    /// The Unigram language model: a piece becomes the sequence of tokens whose scores (log
    /// probabilities) add up highest, as sentencepiece and HF compute it.
    Unigram {
        /// The token of a character no piece covers (empty: none, and such a character is an
        /// error, as HF's `unk_id: null`); consecutive ones make one token.
        unk_token: String,
        /// Such a character is its UTF-8 bytes' `<0xNN>` pieces instead.
        byte_fallback: bool,
        /// sentencepiece's USER_DEFINED pieces: the search finds them like the others, each
        /// scoring `0.1 × (its UTF-8 bytes − 1)` (above any log probability, longer ones higher)
        /// in place of a score of its own.
        user_defined: Vec<String>,
    },
    /// A piece is the token that spells it, else `unk_token`.
    WordLevel { unk_token: String },
    /// HF's BPE with the options byte-level BPE does not have: each piece's symbols are its
    /// characters (its bytes, with `byte_level`), every one after the first spelled with
    /// `continuing_subword_prefix` and the last one with `end_of_word_suffix`; a symbol that
    /// is no token is `unk_token` (consecutive ones one token with `fuse_unk`), or dropped
    /// when there is none; then the pair of lowest merge rank merges, leftmost on ties, into
    /// the token of the left one's bytes and the right one's after the prefix's length.
    CharacterBpe {
        unk_token: String,
        fuse_unk: bool,
        end_of_word_suffix: String,
        byte_level: bool,
        continuing_subword_prefix: String,
    },
}

const KINDS: [&str; 6] = [
    "BPE",
    "SentencePieceBpe",
    "WordPiece",
    "Unigram",
    "WordLevel",
    "CharacterBpe",
];

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
    /// The kind's name, its `"type"` in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Bpe => "BPE",
            Self::SentencePieceBpe { .. } => "SentencePieceBpe",
            Self::WordPiece { .. } => "WordPiece",
            Self::Unigram { .. } => "Unigram",
            Self::WordLevel { .. } => "WordLevel",
            Self::CharacterBpe { .. } => "CharacterBpe",
        }
    }

    /// Whether the model reads whole pieces of text (a model over characters or words), so
    /// that a byte no single-byte token spells is the model's to handle, not dropped first.
    pub fn reads_text(&self) -> bool {
        matches!(
            self,
            Self::WordPiece { .. }
                | Self::Unigram { .. }
                | Self::WordLevel { .. }
                | Self::CharacterBpe { .. }
                | Self::SentencePieceBpe {
                    byte_fallback: false,
                    ..
                }
        )
    }

    pub(super) fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("model", value)?;
        match stage.kind {
            "BPE" => stage.only(&[]).map(|()| Self::Bpe),
            "SentencePieceBpe" => {
                stage.only(&[
                    "merge_by",
                    "unused",
                    "ignore_merges",
                    "byte_fallback",
                    "unk_token",
                ])?;
                let merge_by = match stage.text("merge_by", Some("score"))?.as_str() {
                    "score" => MergeBy::Score,
                    "rank" => MergeBy::Rank,
                    _ => return Err(stage.bad("merge_by is 'score' or 'rank'")),
                };
                let ignore_merges = stage.flag("ignore_merges", false)?;
                if ignore_merges && merge_by != MergeBy::Rank {
                    return Err(stage.bad("ignore_merges is an option of merging by rank"));
                }
                let byte_fallback = stage.flag("byte_fallback", true)?;
                if !byte_fallback && merge_by != MergeBy::Score {
                    return Err(stage.bad(
                        "a SentencePieceBpe model without byte_fallback merges by score \
                         (sentencepiece's)",
                    ));
                }
                Ok(Self::SentencePieceBpe {
                    merge_by,
                    unused: stage.texts("unused")?,
                    ignore_merges,
                    byte_fallback,
                    unk_token: stage.text("unk_token", Some("<unk>"))?,
                })
            }
            "WordPiece" => {
                stage.only(&[
                    "unk_token",
                    "continuing_subword_prefix",
                    "max_input_chars_per_word",
                ])?;
                Ok(Self::WordPiece {
                    unk_token: stage.text("unk_token", Some("[UNK]"))?,
                    continuing_subword_prefix: stage
                        .text("continuing_subword_prefix", Some("##"))?,
                    max_input_chars_per_word: stage.count("max_input_chars_per_word", Some(100))?,
                })
            }
            "Unigram" => {
                stage.only(&["unk_token", "byte_fallback", "user_defined"])?;
                Ok(Self::Unigram {
                    unk_token: stage.text("unk_token", Some("<unk>"))?,
                    byte_fallback: stage.flag("byte_fallback", false)?,
                    user_defined: stage.texts("user_defined")?,
                })
            }
            "WordLevel" => {
                stage.only(&["unk_token"])?;
                Ok(Self::WordLevel {
                    unk_token: stage.text("unk_token", Some("<unk>"))?,
                })
            }
            "CharacterBpe" => {
                stage.only(&[
                    "unk_token",
                    "fuse_unk",
                    "end_of_word_suffix",
                    "byte_level",
                    "continuing_subword_prefix",
                ])?;
                Ok(Self::CharacterBpe {
                    unk_token: stage.text("unk_token", Some(""))?,
                    fuse_unk: stage.flag("fuse_unk", false)?,
                    end_of_word_suffix: stage.text("end_of_word_suffix", Some(""))?,
                    byte_level: stage.flag("byte_level", false)?,
                    continuing_subword_prefix: stage.text("continuing_subword_prefix", Some(""))?,
                })
            }
            _ => Err(stage.unknown(&KINDS)),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        let kind = self.kind();
        match self {
            Self::Bpe => stage(kind, Vec::new()),
            Self::SentencePieceBpe {
                merge_by,
                unused,
                ignore_merges,
                byte_fallback,
                unk_token,
            } => stage(
                kind,
                vec![
                    ("merge_by", Value::String(merge_by.name().into())),
                    ("unused", strings(unused)),
                    ("ignore_merges", Value::Bool(*ignore_merges)),
                    ("byte_fallback", Value::Bool(*byte_fallback)),
                    ("unk_token", Value::String(unk_token.clone())),
                ],
            ),
            Self::WordPiece {
                unk_token,
                continuing_subword_prefix,
                max_input_chars_per_word,
            } => stage(
                kind,
                vec![
                    ("unk_token", Value::String(unk_token.clone())),
                    (
                        "continuing_subword_prefix",
                        Value::String(continuing_subword_prefix.clone()),
                    ),
                    (
                        "max_input_chars_per_word",
                        Value::from(*max_input_chars_per_word),
                    ),
                ],
            ),
            Self::Unigram {
                unk_token,
                byte_fallback,
                user_defined,
            } => stage(
                kind,
                vec![
                    ("unk_token", Value::String(unk_token.clone())),
                    ("byte_fallback", Value::Bool(*byte_fallback)),
                    ("user_defined", strings(user_defined)),
                ],
            ),
            Self::WordLevel { unk_token } => {
                stage(kind, vec![("unk_token", Value::String(unk_token.clone()))])
            }
            Self::CharacterBpe {
                unk_token,
                fuse_unk,
                end_of_word_suffix,
                byte_level,
                continuing_subword_prefix,
            } => stage(
                kind,
                vec![
                    ("unk_token", Value::String(unk_token.clone())),
                    ("fuse_unk", Value::Bool(*fuse_unk)),
                    (
                        "end_of_word_suffix",
                        Value::String(end_of_word_suffix.clone()),
                    ),
                    ("byte_level", Value::Bool(*byte_level)),
                    (
                        "continuing_subword_prefix",
                        Value::String(continuing_subword_prefix.clone()),
                    ),
                ],
            ),
        }
    }
}
