//! [`SpannerSpec`]: how a vocabulary's normalized text is cut into pieces.

use serde_json::Value;

use super::json::{stage, strings, StageObject};
use super::SpecError;

/// A spanner (pre-tokenizer) stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpannerSpec {
    /// The matches of a split regex (tiktoken's `pat_str`), which must cover the text.
    Regex(String),
    /// A tokenizer.json's `Split` steps with HF's semantics; each splits every piece of the
    /// step before. No step: the text is one piece.
    SplitProgram(Vec<SplitStep>),
    /// A SentencePiece vocabulary's cut of its normalized text.
    SentencePiece(SentencePieceSplit),
    /// llama.cpp's words of a WordPiece vocabulary (`llm_tokenizer_wpm`): white space ends a
    /// word and is dropped, a punctuation character, an ASCII symbol or a CJK ideograph is a
    /// word alone, and each word is encoded as `▁` + the word. The core reads and writes it;
    /// the Python package runs it.
    LlamaCppWordPiece,
}

/// One step of a [`SpannerSpec::SplitProgram`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitStep {
    /// HF's `Split`: the matches of `pattern` (all but them with `invert`) and the text between
    /// them, joined by `behavior`.
    Split {
        pattern: String,
        behavior: Behavior,
        invert: bool,
    },
    /// A space put before each piece that does not start with one (ByteLevel's
    /// `add_prefix_space` after other steps).
    PrefixSpace,
}

/// What a `Split` step does with its matches (HF's `SplitDelimiterBehavior`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    /// Every match and every stretch between matches is a piece.
    Isolated,
    /// Matches are deleted.
    Removed,
    /// A match joins the piece before it.
    MergedWithPrevious,
    /// A match joins the piece after it.
    MergedWithNext,
    /// Consecutive matches (and consecutive stretches between them) form one piece.
    Contiguous,
}

impl Behavior {
    const ALL: [Behavior; 5] = [
        Self::Isolated,
        Self::Removed,
        Self::MergedWithPrevious,
        Self::MergedWithNext,
        Self::Contiguous,
    ];

    /// HF's name of the behavior.
    pub fn name(self) -> &'static str {
        match self {
            Self::Isolated => "Isolated",
            Self::Removed => "Removed",
            Self::MergedWithPrevious => "MergedWithPrevious",
            Self::MergedWithNext => "MergedWithNext",
            Self::Contiguous => "Contiguous",
        }
    }

    /// The behavior HF names `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Where a SentencePiece vocabulary's text is cut before merging.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SentencePieceSplit {
    /// Pieces matched in the text (longest first) and never merged.
    pub user_defined: Vec<String>,
    /// The text may be cut before every `▁` that follows another character (no token but the
    /// `joined` ones has a `▁` after another character).
    pub words: bool,
    /// Those few tokens: no cut is made inside a place of the text that spells one.
    pub joined: Vec<String>,
    /// HF's `Metaspace` with `split: true`: the text is cut before every `▁`.
    pub metaspace_split: bool,
}

impl SpannerSpec {
    /// The kind's name, its `"type"` in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Regex(_) => "Regex",
            Self::SplitProgram(_) => "SplitProgram",
            Self::SentencePiece(_) => "SentencePiece",
            Self::LlamaCppWordPiece => "LlamaCppWordPiece",
        }
    }

    pub(super) fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("spanner", value)?;
        match stage.kind {
            "Regex" => {
                stage.only(&["pattern"])?;
                Ok(Self::Regex(stage.text("pattern", None)?))
            }
            "SplitProgram" => {
                stage.only(&["steps"])?;
                let steps = stage
                    .get("steps")
                    .and_then(Value::as_array)
                    .ok_or_else(|| stage.bad("field \"steps\" must be a list of steps"))?;
                Ok(Self::SplitProgram(
                    steps
                        .iter()
                        .map(SplitStep::from_json)
                        .collect::<Result<_, _>>()?,
                ))
            }
            "SentencePiece" => {
                stage.only(&["user_defined", "words", "joined", "metaspace_split"])?;
                Ok(Self::SentencePiece(SentencePieceSplit {
                    user_defined: stage.texts("user_defined")?,
                    words: stage.flag("words", false)?,
                    joined: stage.texts("joined")?,
                    metaspace_split: stage.flag("metaspace_split", false)?,
                }))
            }
            "LlamaCppWordPiece" => stage.only(&[]).map(|()| Self::LlamaCppWordPiece),
            _ => Err(stage.unknown(&[
                "Regex",
                "SplitProgram",
                "SentencePiece",
                "LlamaCppWordPiece",
            ])),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        let kind = self.kind();
        match self {
            Self::Regex(pattern) => stage(kind, vec![("pattern", Value::String(pattern.clone()))]),
            Self::SplitProgram(steps) => stage(
                kind,
                vec![(
                    "steps",
                    Value::Array(steps.iter().map(SplitStep::to_json).collect()),
                )],
            ),
            Self::SentencePiece(split) => stage(
                kind,
                vec![
                    ("user_defined", strings(&split.user_defined)),
                    ("words", Value::Bool(split.words)),
                    ("joined", strings(&split.joined)),
                    ("metaspace_split", Value::Bool(split.metaspace_split)),
                ],
            ),
            Self::LlamaCppWordPiece => stage(kind, Vec::new()),
        }
    }
}

impl SplitStep {
    fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("split step", value)?;
        match stage.kind {
            "PrefixSpace" => stage.only(&[]).map(|()| Self::PrefixSpace),
            "Split" => {
                stage.only(&["pattern", "behavior", "invert"])?;
                let name = stage.text("behavior", None)?;
                let behavior = Behavior::from_name(&name).ok_or_else(|| {
                    stage.bad(&format!(
                        "behavior {name:?} is none of {}",
                        Behavior::ALL.map(Behavior::name).join(", ")
                    ))
                })?;
                Ok(Self::Split {
                    pattern: stage.text("pattern", None)?,
                    behavior,
                    invert: stage.flag("invert", false)?,
                })
            }
            _ => Err(stage.unknown(&["Split", "PrefixSpace"])),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Self::PrefixSpace => stage("PrefixSpace", Vec::new()),
            Self::Split {
                pattern,
                behavior,
                invert,
            } => stage(
                "Split",
                vec![
                    ("pattern", Value::String(pattern.clone())),
                    ("behavior", Value::String(behavior.name().into())),
                    ("invert", Value::Bool(*invert)),
                ],
            ),
        }
    }
}
