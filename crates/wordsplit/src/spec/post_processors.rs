//! [`PostProcessorSpec`]: the special tokens added around the ids of a text, or of a pair of
//! texts, as HF's post-processors add them (with their type ids) when special tokens are asked
//! for. The Rust [`Tokenizer::encoding`](crate::Tokenizer::encoding) runs it
//! ([`crate::post_process`]); the Python package applies it with its own
//! (`wordsplit.postprocess`).

use serde_json::Value;

use super::json::{integers, stage, strings, StageObject};
use super::SpecError;

/// A post-processor stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PostProcessorSpec {
    /// No special tokens are added (`"None"`).
    None,
    /// HF's `TemplateProcessing`: `single` for one text, `pair` for two, and what each special
    /// token they name stands for. The single template holds the text `A`, the pair template
    /// `A` and `B`; every special token a template names is among `special_tokens`, whose ids
    /// are distinct.
    TemplateProcessing {
        single: Vec<TemplateItem>,
        pair: Vec<TemplateItem>,
        special_tokens: Vec<TemplateSpecial>,
    },
    /// HF's `BertProcessing`: `cls A sep` (type id 0) and `cls A sep B sep` (the part from `B`
    /// on with type id 1).
    BertProcessing {
        sep: String,
        sep_id: u64,
        cls: String,
        cls_id: u64,
    },
    /// HF's `RobertaProcessing`: `cls A sep` and `cls A sep sep B sep` (type ids all 0), offsets
    /// trimmed of spaces as the `ByteLevel` post-processor's with `trim_offsets`.
    RobertaProcessing {
        sep: String,
        sep_id: u64,
        cls: String,
        cls_id: u64,
        trim_offsets: bool,
        add_prefix_space: bool,
    },
    /// HF's `ByteLevel` post-processor: no tokens added; with `trim_offsets`, a token's offsets
    /// leave out the spaces it starts or ends with.
    ByteLevel {
        trim_offsets: bool,
        add_prefix_space: bool,
    },
    /// HF's post-processor `Sequence`: each in order.
    Sequence(Vec<PostProcessorSpec>),
}

/// One item of a [`PostProcessorSpec::TemplateProcessing`] template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateItem {
    /// The ids of the text `id`, with type id `type_id` (`"Sequence"`).
    Sequence { id: TemplateText, type_id: u64 },
    /// The special token `id` (a [`TemplateSpecial`]'s), with type id `type_id`.
    SpecialToken { id: String, type_id: u64 },
}

/// Which text of a pair a template item stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TemplateText {
    /// The first (the only one, for the single template).
    A,
    /// The second.
    B,
}

impl TemplateText {
    pub fn name(self) -> &'static str {
        match self {
            Self::A => "A",
            Self::B => "B",
        }
    }
}

/// What a template's special token `id` stands for: the tokens `tokens`, with ids `ids` (as
/// many as tokens).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateSpecial {
    pub id: String,
    pub ids: Vec<u64>,
    pub tokens: Vec<String>,
}

const KINDS: [&str; 6] = [
    "None",
    "TemplateProcessing",
    "BertProcessing",
    "RobertaProcessing",
    "ByteLevel",
    "Sequence",
];

impl PostProcessorSpec {
    /// The kind's name, its `"type"` in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "None",
            Self::TemplateProcessing { .. } => "TemplateProcessing",
            Self::BertProcessing { .. } => "BertProcessing",
            Self::RobertaProcessing { .. } => "RobertaProcessing",
            Self::ByteLevel { .. } => "ByteLevel",
            Self::Sequence(_) => "Sequence",
        }
    }

    /// The post-processor stage a JSON object describes.
    pub fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("post_processor", value)?;
        match stage.kind {
            "None" => stage.only(&[]).map(|()| Self::None),
            "TemplateProcessing" => {
                stage.only(&["single", "pair", "special_tokens"])?;
                let single = stage.stages("single", TemplateItem::from_json)?;
                let pair = stage.stages("pair", TemplateItem::from_json)?;
                let special_tokens = stage.stages("special_tokens", TemplateSpecial::from_json)?;
                check_templates(&single, &pair, &special_tokens).map_err(|why| stage.bad(why))?;
                Ok(Self::TemplateProcessing {
                    single,
                    pair,
                    special_tokens,
                })
            }
            "BertProcessing" => {
                stage.only(&["sep", "sep_id", "cls", "cls_id"])?;
                Ok(Self::BertProcessing {
                    sep: stage.text("sep", None)?,
                    sep_id: stage.count("sep_id", None)?,
                    cls: stage.text("cls", None)?,
                    cls_id: stage.count("cls_id", None)?,
                })
            }
            "RobertaProcessing" => {
                stage.only(&[
                    "sep",
                    "sep_id",
                    "cls",
                    "cls_id",
                    "trim_offsets",
                    "add_prefix_space",
                ])?;
                Ok(Self::RobertaProcessing {
                    sep: stage.text("sep", None)?,
                    sep_id: stage.count("sep_id", None)?,
                    cls: stage.text("cls", None)?,
                    cls_id: stage.count("cls_id", None)?,
                    trim_offsets: stage.flag("trim_offsets", true)?,
                    add_prefix_space: stage.flag("add_prefix_space", true)?,
                })
            }
            "ByteLevel" => {
                stage.only(&["trim_offsets", "add_prefix_space"])?;
                Ok(Self::ByteLevel {
                    trim_offsets: stage.flag("trim_offsets", true)?,
                    add_prefix_space: stage.flag("add_prefix_space", true)?,
                })
            }
            "Sequence" => {
                stage.only(&["processors"])?;
                Ok(Self::Sequence(stage.stages("processors", Self::from_json)?))
            }
            _ => Err(stage.unknown(&KINDS)),
        }
    }

    /// The stage's JSON object, its keys sorted.
    pub fn to_json(&self) -> Value {
        let kind = self.kind();
        match self {
            Self::None => stage(kind, Vec::new()),
            Self::TemplateProcessing {
                single,
                pair,
                special_tokens,
            } => stage(
                kind,
                vec![
                    ("single", items(single)),
                    ("pair", items(pair)),
                    (
                        "special_tokens",
                        Value::Array(
                            special_tokens
                                .iter()
                                .map(TemplateSpecial::to_json)
                                .collect(),
                        ),
                    ),
                ],
            ),
            Self::BertProcessing {
                sep,
                sep_id,
                cls,
                cls_id,
            } => stage(
                kind,
                vec![
                    ("sep", Value::String(sep.clone())),
                    ("sep_id", Value::from(*sep_id)),
                    ("cls", Value::String(cls.clone())),
                    ("cls_id", Value::from(*cls_id)),
                ],
            ),
            Self::RobertaProcessing {
                sep,
                sep_id,
                cls,
                cls_id,
                trim_offsets,
                add_prefix_space,
            } => stage(
                kind,
                vec![
                    ("sep", Value::String(sep.clone())),
                    ("sep_id", Value::from(*sep_id)),
                    ("cls", Value::String(cls.clone())),
                    ("cls_id", Value::from(*cls_id)),
                    ("trim_offsets", Value::Bool(*trim_offsets)),
                    ("add_prefix_space", Value::Bool(*add_prefix_space)),
                ],
            ),
            Self::ByteLevel {
                trim_offsets,
                add_prefix_space,
            } => stage(
                kind,
                vec![
                    ("trim_offsets", Value::Bool(*trim_offsets)),
                    ("add_prefix_space", Value::Bool(*add_prefix_space)),
                ],
            ),
            Self::Sequence(processors) => stage(
                kind,
                vec![(
                    "processors",
                    Value::Array(processors.iter().map(Self::to_json).collect()),
                )],
            ),
        }
    }
}

/// The checks of a template's parts together (see [`PostProcessorSpec::TemplateProcessing`]).
fn check_templates(
    single: &[TemplateItem],
    pair: &[TemplateItem],
    special_tokens: &[TemplateSpecial],
) -> Result<(), &'static str> {
    let defined = |name: &str| special_tokens.iter().any(|special| special.id == name);
    if special_tokens
        .iter()
        .enumerate()
        .any(|(i, special)| special_tokens[..i].iter().any(|s| s.id == special.id))
    {
        return Err("a template's special tokens have distinct ids");
    }
    for (template, texts) in [
        (single, &[TemplateText::A][..]),
        (pair, &[TemplateText::A, TemplateText::B][..]),
    ] {
        for item in template {
            if let TemplateItem::SpecialToken { id, .. } = item {
                if !defined(id) {
                    return Err("the template names a special token it does not define");
                }
            }
        }
        let holds = |text: TemplateText| {
            template
                .iter()
                .any(|item| matches!(item, TemplateItem::Sequence { id, .. } if *id == text))
        };
        let mut others = [TemplateText::A, TemplateText::B]
            .into_iter()
            .filter(|text| !texts.contains(text));
        if !texts.iter().all(|&text| holds(text)) || others.any(holds) {
            return Err("the single template holds A, the pair template A and B");
        }
    }
    Ok(())
}

fn items(template: &[TemplateItem]) -> Value {
    Value::Array(template.iter().map(TemplateItem::to_json).collect())
}

impl TemplateItem {
    fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("template item", value)?;
        match stage.kind {
            "Sequence" => {
                stage.only(&["id", "type_id"])?;
                let id = match stage.text("id", None)?.as_str() {
                    "A" => TemplateText::A,
                    "B" => TemplateText::B,
                    _ => return Err(stage.bad("a template sequence is 'A' or 'B'")),
                };
                Ok(Self::Sequence {
                    id,
                    type_id: stage.count("type_id", Some(0))?,
                })
            }
            "SpecialToken" => {
                stage.only(&["id", "type_id"])?;
                Ok(Self::SpecialToken {
                    id: stage.text("id", None)?,
                    type_id: stage.count("type_id", Some(0))?,
                })
            }
            _ => Err(stage.unknown(&["Sequence", "SpecialToken"])),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Self::Sequence { id, type_id } => stage(
                "Sequence",
                vec![
                    ("id", Value::String(id.name().into())),
                    ("type_id", Value::from(*type_id)),
                ],
            ),
            Self::SpecialToken { id, type_id } => stage(
                "SpecialToken",
                vec![
                    ("id", Value::String(id.clone())),
                    ("type_id", Value::from(*type_id)),
                ],
            ),
        }
    }
}

impl TemplateSpecial {
    fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("template special", value)?;
        if stage.kind != "Special" {
            return Err(stage.unknown(&["Special"]));
        }
        stage.only(&["id", "ids", "tokens"])?;
        let special = Self {
            id: stage.text("id", None)?,
            ids: stage.counts("ids")?,
            tokens: stage.required_texts("tokens")?,
        };
        if special.ids.len() != special.tokens.len() {
            return Err(stage.bad("a template special token has as many ids as tokens"));
        }
        Ok(special)
    }

    fn to_json(&self) -> Value {
        stage(
            "Special",
            vec![
                ("id", Value::String(self.id.clone())),
                ("ids", integers(&self.ids)),
                ("tokens", strings(&self.tokens)),
            ],
        )
    }
}
