//! [`NormalizerSpec`]: what a vocabulary's text goes through before it is split.

use serde_json::Value;

use super::json::{is_base64, stage, strings, StageObject};
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
    /// HF's `BertNormalizer`, its four steps in this order: `clean_text` (control characters
    /// and U+FFFD dropped, white space made a space), `handle_chinese_chars` (a space each side
    /// of a CJK ideograph), `strip_accents` (NFD, then combining marks dropped) and
    /// `lowercase`. Each is on unless the JSON says `false`.
    BertNormalizer {
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
    },
    /// A SentencePiece precompiled character map (`nmt_nfkc`, `nfkc_cf`, a model's own rules):
    /// the longest prefix of the text the map holds is replaced by its output, as HF's
    /// `Precompiled` runs it. The map's bytes in base64, as tokenizer.json writes them (kept as
    /// written, so the text writes back the same); an empty map changes nothing.
    Precompiled(String),
    /// HF's normalizers in order, each step's alignment carried through (for offsets); the
    /// steps are of the kinds above from `Nfc` on.
    Sequence(Vec<NormalizerSpec>),
    /// SentencePiece's normalizer: the character map `charsmap` (base64, as in
    /// [`NormalizerSpec::Precompiled`]; empty: the identity), then the spaces as `flags` say;
    /// the model's `user_defined` pieces, matched first at each place (the longest), are
    /// copied unmapped.
    SentencePiece {
        flags: SentencePieceFlags,
        charsmap: String,
        user_defined: Vec<String>,
    },
    /// HF's `Metaspace` (`split: false`) after the normalizer `before`: every space becomes
    /// `replacement`, put before the text as `prepend_scheme` says. With `whitespace_split`,
    /// HF's `WhitespaceSplit` runs before it (T5's files): each run of white space (Rust's
    /// `char::is_whitespace`) is dropped and every word that does not start with
    /// `replacement` gets one before it ([`PrependScheme::Always`]); a spanner cutting before
    /// every `replacement` then gives HF's words. With [`PrependScheme::First`],
    /// [`PrependScheme::Never`] or `keep_white_space` (with `Always`: HF's `split: false`),
    /// the white space is kept for the spanner to drop (a split program of `WhitespaceSplit`
    /// and, for HF's `split: true`, of the cut before every `replacement`), and `replacement`
    /// goes before each word HF prepends to: every one for `Always`, for `First` only one
    /// whose first character comes from the input's first (HF's word at offset 0), none for
    /// `Never`. `keep_white_space` needs `whitespace_split`.
    Metaspace {
        replacement: char,
        prepend_scheme: PrependScheme,
        before: Box<NormalizerSpec>,
        whitespace_split: bool,
        keep_white_space: bool,
    },
    /// llama.cpp's WordPiece preprocessing of characters (`llm_tokenizer_wpm`), before its
    /// split: with `strip_accents`, each code point becomes the first code point of its NFD
    /// and marks are dropped; NUL, U+FFFD and controls are dropped; with `lowercase`, each
    /// code point becomes its simple lowercase (llama.cpp's Unicode 15.1 tables). The core
    /// reads and writes it; the Python package runs it.
    LlamaCppBert {
        lowercase: bool,
        strip_accents: bool,
    },
    /// llama.cpp's normalizer of a Unigram vocabulary (`llm_tokenizer_ugm`): the character map
    /// `charsmap` (base64; empty: the identity), then each space becomes `▁`, with one `▁`
    /// before the first other character (`add_space_prefix`), or, with
    /// `remove_extra_whitespaces`, the spaces dropped and one `▁` put before every run of
    /// other characters. The core reads and writes it; the Python package runs it.
    LlamaCppUnigram {
        add_space_prefix: bool,
        remove_extra_whitespaces: bool,
        charsmap: String,
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

const KINDS: [&str; 19] = [
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
    "BertNormalizer",
    "Precompiled",
    "Sequence",
    "SentencePiece",
    "Metaspace",
    "LlamaCppBert",
    "LlamaCppUnigram",
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
            Self::BertNormalizer { .. } => "BertNormalizer",
            Self::Precompiled(_) => "Precompiled",
            Self::Sequence(_) => "Sequence",
            Self::SentencePiece { .. } => "SentencePiece",
            Self::Metaspace { .. } => "Metaspace",
            Self::LlamaCppBert { .. } => "LlamaCppBert",
            Self::LlamaCppUnigram { .. } => "LlamaCppUnigram",
            Self::Plugin(_) => "Plugin",
        }
    }

    /// Whether a [`NormalizerSpec::Sequence`] may hold it.
    pub fn is_step(&self) -> bool {
        !matches!(
            self,
            Self::None
                | Self::Sequence(_)
                | Self::SentencePiece { .. }
                | Self::Metaspace { .. }
                | Self::LlamaCppBert { .. }
                | Self::LlamaCppUnigram { .. }
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
            "BertNormalizer" => {
                let names = [
                    "clean_text",
                    "handle_chinese_chars",
                    "strip_accents",
                    "lowercase",
                ];
                stage.only(&names)?;
                Ok(Self::BertNormalizer {
                    clean_text: stage.flag(names[0], true)?,
                    handle_chinese_chars: stage.flag(names[1], true)?,
                    strip_accents: stage.flag(names[2], true)?,
                    lowercase: stage.flag(names[3], true)?,
                })
            }
            "Precompiled" => {
                stage.only(&["charsmap"])?;
                Ok(Self::Precompiled(charsmap(&stage, None)?))
            }
            "LlamaCppBert" => {
                stage.only(&["lowercase", "strip_accents"])?;
                Ok(Self::LlamaCppBert {
                    lowercase: stage.flag("lowercase", true)?,
                    strip_accents: stage.flag("strip_accents", true)?,
                })
            }
            "LlamaCppUnigram" => {
                stage.only(&["add_space_prefix", "remove_extra_whitespaces", "charsmap"])?;
                Ok(Self::LlamaCppUnigram {
                    add_space_prefix: stage.flag("add_space_prefix", false)?,
                    remove_extra_whitespaces: stage.flag("remove_extra_whitespaces", false)?,
                    charsmap: charsmap(&stage, Some(""))?,
                })
            }
            "Plugin" => {
                stage.only(&["name"])?;
                Ok(Self::Plugin(stage.text("name", None)?))
            }
            "Sequence" => {
                stage.only(&["normalizers"])?;
                let steps = stage.stages("normalizers", Self::from_json)?;
                if !steps.iter().all(Self::is_step) {
                    return Err(stage.bad(
                        "a Sequence's steps are HF normalizers, not None, Sequence, \
                         SentencePiece, Metaspace or Plugin",
                    ));
                }
                Ok(Self::Sequence(steps))
            }
            "SentencePiece" => {
                let names = [
                    "add_dummy_prefix",
                    "remove_extra_whitespaces",
                    "escape_whitespaces",
                    "treat_whitespace_as_suffix",
                    "charsmap",
                    "user_defined",
                ];
                stage.only(&names)?;
                let defaults = SentencePieceFlags::default();
                let flags = SentencePieceFlags {
                    add_dummy_prefix: stage.flag(names[0], defaults.add_dummy_prefix)?,
                    remove_extra_whitespaces: stage
                        .flag(names[1], defaults.remove_extra_whitespaces)?,
                    escape_whitespaces: stage.flag(names[2], defaults.escape_whitespaces)?,
                    treat_whitespace_as_suffix: stage
                        .flag(names[3], defaults.treat_whitespace_as_suffix)?,
                };
                Ok(Self::SentencePiece {
                    flags,
                    charsmap: charsmap(&stage, Some(""))?,
                    user_defined: stage.texts("user_defined")?,
                })
            }
            "Metaspace" => {
                stage.only(&[
                    "replacement",
                    "prepend_scheme",
                    "before",
                    "whitespace_split",
                    "keep_white_space",
                ])?;
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
                if matches!(before, Self::Metaspace { .. } | Self::SentencePiece { .. }) {
                    return Err(stage.bad(
                        "Metaspace runs after an HF normalizer, not after another space handler",
                    ));
                }
                let whitespace_split = stage.flag("whitespace_split", false)?;
                let keep_white_space = stage.flag("keep_white_space", false)?;
                if keep_white_space && !whitespace_split {
                    return Err(stage.bad(
                        "keep_white_space needs whitespace_split (without it no white space \
                         is dropped)",
                    ));
                }
                Ok(Self::Metaspace {
                    replacement,
                    prepend_scheme,
                    before: Box::new(before),
                    whitespace_split,
                    keep_white_space,
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
            Self::BertNormalizer {
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            } => stage(
                kind,
                vec![
                    ("clean_text", Value::Bool(*clean_text)),
                    ("handle_chinese_chars", Value::Bool(*handle_chinese_chars)),
                    ("strip_accents", Value::Bool(*strip_accents)),
                    ("lowercase", Value::Bool(*lowercase)),
                ],
            ),
            Self::Precompiled(charsmap) => {
                stage(kind, vec![("charsmap", Value::String(charsmap.clone()))])
            }
            Self::SentencePiece {
                flags,
                charsmap,
                user_defined,
            } => stage(
                kind,
                vec![
                    ("charsmap", Value::String(charsmap.clone())),
                    ("user_defined", strings(user_defined)),
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
            Self::LlamaCppBert {
                lowercase,
                strip_accents,
            } => stage(
                kind,
                vec![
                    ("lowercase", Value::Bool(*lowercase)),
                    ("strip_accents", Value::Bool(*strip_accents)),
                ],
            ),
            Self::LlamaCppUnigram {
                add_space_prefix,
                remove_extra_whitespaces,
                charsmap,
            } => stage(
                kind,
                vec![
                    ("add_space_prefix", Value::Bool(*add_space_prefix)),
                    (
                        "remove_extra_whitespaces",
                        Value::Bool(*remove_extra_whitespaces),
                    ),
                    ("charsmap", Value::String(charsmap.clone())),
                ],
            ),
            Self::Metaspace {
                replacement,
                prepend_scheme,
                before,
                whitespace_split,
                keep_white_space,
            } => stage(
                kind,
                vec![
                    ("replacement", Value::String(replacement.to_string())),
                    (
                        "prepend_scheme",
                        Value::String(prepend_scheme.name().into()),
                    ),
                    ("before", before.to_json()),
                    ("whitespace_split", Value::Bool(*whitespace_split)),
                    ("keep_white_space", Value::Bool(*keep_white_space)),
                ],
            ),
            _ => stage(kind, Vec::new()),
        }
    }
}

/// A character map field: base64 text ([`is_base64`]).
fn charsmap(stage: &StageObject<'_>, default: Option<&str>) -> Result<String, SpecError> {
    let text = stage.text("charsmap", default)?;
    if !is_base64(&text) {
        return Err(stage.bad("a character map is its bytes in base64"));
    }
    Ok(text)
}
