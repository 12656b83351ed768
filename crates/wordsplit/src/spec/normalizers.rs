//! [`NormalizerSpec`]: what a vocabulary's text goes through before it is split.

use serde_json::Value;

use super::json::{stage, StageObject};
use super::SpecError;

/// A normalizer stage, named as HF tokenizers names its normalizers where it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NormalizerSpec {
    /// The text as it is (`"None"`).
    None,
    /// Unicode NFC as HF computes it (Unicode 9.0 data).
    Nfc,
    /// Unicode NFD as HF computes it.
    Nfd,
    /// Unicode NFKC as HF computes it.
    Nfkc,
    /// Unicode NFKD as HF computes it.
    Nfkd,
    /// Each character lowercased as Rust's `char::to_lowercase` does.
    Lowercase,
    /// Combining marks dropped.
    StripAccents,
    /// Rust's white space trimmed from either end.
    Strip { left: bool, right: bool },
    /// Every match of `pattern` (a literal, or a regex with `regex`) replaced by `content`.
    Replace {
        pattern: String,
        content: String,
        regex: bool,
    },
    /// `prepend` put before non-empty text.
    Prepend(String),
    /// A space before non-empty text that does not start with one (ByteLevel's
    /// `add_prefix_space`, run as a normalizer's last step).
    PrefixSpace,
    /// HF's normalizers in order, each step's alignment carried through (for offsets); the
    /// steps are of the kinds above from `Nfc` on.
    Sequence(Vec<NormalizerSpec>),
    /// SentencePiece's normalizer with an identity character map: only spaces change.
    SentencePiece(SentencePieceFlags),
    /// HF's `Metaspace` (`split: false`) after the normalizer `before`: every space becomes
    /// `replacement`, put before the text as `prepend_scheme` says.
    Metaspace {
        replacement: char,
        prepend_scheme: PrependScheme,
        before: Box<NormalizerSpec>,
    },
    /// A normalizer the caller registers under this name (a Python plug-in).
    Plugin(String),
}

/// The flags of SentencePiece's normalizer spec, with the proto's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentencePieceFlags {
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
}

impl Default for SentencePieceFlags {
    fn default() -> Self {
        Self {
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
            treat_whitespace_as_suffix: false,
        }
    }
}

/// Where HF's `Metaspace` puts its replacement before the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrependScheme {
    /// Before every stretch of text that does not start with it.
    Always,
    /// Only before the stretch at the start of the text.
    First,
    /// Never.
    Never,
}

impl PrependScheme {
    pub fn name(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::First => "first",
            Self::Never => "never",
        }
    }
}

const KINDS: [&str; 15] = [
    "None",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "StripAccents",
    "Strip",
    "Replace",
    "Prepend",
    "PrefixSpace",
    "Sequence",
    "SentencePiece",
    "Metaspace",
    "Plugin",
];

impl NormalizerSpec {
    /// The kind's name, its `"type"` in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Nfc => "NFC",
            Self::Nfd => "NFD",
            Self::Nfkc => "NFKC",
            Self::Nfkd => "NFKD",
            Self::Lowercase => "Lowercase",
            Self::StripAccents => "StripAccents",
            Self::Strip { .. } => "Strip",
            Self::Replace { .. } => "Replace",
            Self::Prepend(_) => "Prepend",
            Self::PrefixSpace => "PrefixSpace",
            Self::Sequence(_) => "Sequence",
            Self::SentencePiece(_) => "SentencePiece",
            Self::Metaspace { .. } => "Metaspace",
            Self::Plugin(_) => "Plugin",
        }
    }

    /// Whether a [`NormalizerSpec::Sequence`] may hold it.
    pub fn is_step(&self) -> bool {
        !matches!(
            self,
            Self::None
                | Self::Sequence(_)
                | Self::SentencePiece(_)
                | Self::Metaspace { .. }
                | Self::Plugin(_)
        )
    }

    /// The normalizer stage a JSON object describes.
    pub fn from_json(value: &Value) -> Result<Self, SpecError> {
        let stage = StageObject::read("normalizer", value)?;
        let plain = |spec: Self| stage.only(&[]).map(|()| spec);
        match stage.kind {
            "None" => plain(Self::None),
            "NFC" => plain(Self::Nfc),
            "NFD" => plain(Self::Nfd),
            "NFKC" => plain(Self::Nfkc),
            "NFKD" => plain(Self::Nfkd),
            "Lowercase" => plain(Self::Lowercase),
            "StripAccents" => plain(Self::StripAccents),
            "PrefixSpace" => plain(Self::PrefixSpace),
            "Strip" => {
                stage.only(&["left", "right"])?;
                Ok(Self::Strip {
                    left: stage.flag("left", true)?,
                    right: stage.flag("right", true)?,
                })
            }
            "Replace" => {
                stage.only(&["pattern", "content", "regex"])?;
                Ok(Self::Replace {
                    pattern: stage.text("pattern", None)?,
                    content: stage.text("content", None)?,
                    regex: stage.flag("regex", false)?,
                })
            }
            "Prepend" => {
                stage.only(&["prepend"])?;
                Ok(Self::Prepend(stage.text("prepend", None)?))
            }
            "Plugin" => {
                stage.only(&["name"])?;
                Ok(Self::Plugin(stage.text("name", None)?))
            }
            "Sequence" => {
                stage.only(&["normalizers"])?;
                let steps = stage
                    .get("normalizers")
                    .and_then(Value::as_array)
                    .ok_or_else(|| stage.bad("field \"normalizers\" must be a list of steps"))?;
                let steps = steps
                    .iter()
                    .map(Self::from_json)
                    .collect::<Result<Vec<_>, _>>()?;
                if !steps.iter().all(Self::is_step) {
                    return Err(
                        stage.bad("a Sequence holds steps of the kinds NFC to PrefixSpace only")
                    );
                }
                Ok(Self::Sequence(steps))
            }
            "SentencePiece" => {
                let names = [
                    "add_dummy_prefix",
                    "remove_extra_whitespaces",
                    "escape_whitespaces",
                    "treat_whitespace_as_suffix",
                ];
                stage.only(&names)?;
                let defaults = SentencePieceFlags::default();
                Ok(Self::SentencePiece(SentencePieceFlags {
                    add_dummy_prefix: stage.flag(names[0], defaults.add_dummy_prefix)?,
                    remove_extra_whitespaces: stage
                        .flag(names[1], defaults.remove_extra_whitespaces)?,
                    escape_whitespaces: stage.flag(names[2], defaults.escape_whitespaces)?,
                    treat_whitespace_as_suffix: stage
                        .flag(names[3], defaults.treat_whitespace_as_suffix)?,
                }))
            }
            "Metaspace" => {
                stage.only(&["replacement", "prepend_scheme", "before"])?;
                let replacement = stage.text("replacement", Some("\u{2581}"))?;
                let mut chars = replacement.chars();
                let (Some(replacement), None) = (chars.next(), chars.next()) else {
                    return Err(stage.bad("replacement is one character"));
                };
                let prepend_scheme = match stage.text("prepend_scheme", Some("always"))?.as_str() {
                    "always" => PrependScheme::Always,
                    "first" => PrependScheme::First,
                    "never" => PrependScheme::Never,
                    _ => return Err(stage.bad("prepend_scheme is 'first', 'always' or 'never'")),
                };
                let before = match stage.get("before") {
                    None => Self::None,
                    Some(value) => Self::from_json(value)?,
                };
                if matches!(before, Self::Metaspace { .. } | Self::SentencePiece(_)) {
                    return Err(stage.bad(
                        "Metaspace runs after an HF normalizer, not after another space handler",
                    ));
                }
                Ok(Self::Metaspace {
                    replacement,
                    prepend_scheme,
                    before: Box::new(before),
                })
            }
            _ => Err(stage.unknown(&KINDS)),
        }
    }

    /// [`Self::from_json`] of JSON text.
    pub fn from_text(text: &str) -> Result<Self, SpecError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| SpecError(format!("a normalizer description is JSON ({e})")))?;
        Self::from_json(&value)
    }

    /// The stage's JSON object, its keys sorted.
    pub fn to_json(&self) -> Value {
        let kind = self.kind();
        match self {
            Self::Strip { left, right } => stage(
                kind,
                vec![("left", Value::Bool(*left)), ("right", Value::Bool(*right))],
            ),
            Self::Replace {
                pattern,
                content,
                regex,
            } => stage(
                kind,
                vec![
                    ("pattern", Value::String(pattern.clone())),
                    ("content", Value::String(content.clone())),
                    ("regex", Value::Bool(*regex)),
                ],
            ),
            Self::Prepend(prepend) => {
                stage(kind, vec![("prepend", Value::String(prepend.clone()))])
            }
            Self::Plugin(name) => stage(kind, vec![("name", Value::String(name.clone()))]),
            Self::Sequence(steps) => stage(
                kind,
                vec![(
                    "normalizers",
                    Value::Array(steps.iter().map(Self::to_json).collect()),
                )],
            ),
            Self::SentencePiece(flags) => stage(
                kind,
                vec![
                    ("add_dummy_prefix", Value::Bool(flags.add_dummy_prefix)),
                    (
                        "remove_extra_whitespaces",
                        Value::Bool(flags.remove_extra_whitespaces),
                    ),
                    ("escape_whitespaces", Value::Bool(flags.escape_whitespaces)),
                    (
                        "treat_whitespace_as_suffix",
                        Value::Bool(flags.treat_whitespace_as_suffix),
                    ),
                ],
            ),
            Self::Metaspace {
                replacement,
                prepend_scheme,
                before,
            } => stage(
                kind,
                vec![
                    ("replacement", Value::String(replacement.to_string())),
                    (
                        "prepend_scheme",
                        Value::String(prepend_scheme.name().into()),
                    ),
                    ("before", before.to_json()),
                ],
            ),
            _ => stage(kind, Vec::new()),
        }
    }
}
