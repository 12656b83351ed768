//! Normalizers: the text a vocabulary's tokens were made from, before it is split.
//!
//! [`NormalizeStage`] is a pipeline's normalizer: HF's Unicode forms (NFC, NFD, NFKC, NFKD,
//! with the tables of `unicode-normalization-alignments` 0.1.12, the crate HF normalizes with)
//! or a [`Normalizer`] supplied by the caller (a Python plug-in, through the bindings). The
//! forms are matched on directly, so the common case costs no dynamic call; text already in
//! the form (all ASCII, or passing the crate's quick check) is not copied.
//!
//! NFC, the form Qwen's vocabularies use, has its own fast path ([`nfc_of`]): only the
//! stretches of text that can change are normalized.
//!
//! [`NormalizeStage::from_spec`] makes the stage a [`NormalizerSpec`] describes, when the core
//! runs it: the forms, SentencePiece's normalizer with its character map and HF's `Metaspace`
//! ([`sentencepiece`], [`charsmap`]), programs of literal `Replace` and `Prepend` steps
//! ([`program`]), programs of Unicode forms, `Lowercase`, `StripAccents`, `Strip` and HF's
//! `Precompiled` ([`unicode_program`], [`precompiled`], cut into clusters by [`graphemes`]),
//! HF's `BertNormalizer` ([`bert`], with the character classes of [`bert_chars`]), and
//! llama.cpp's normalizers of GGUF WordPiece and Unigram vocabularies ([`llamacpp`]).

pub mod bert;
mod bert_blocks;
pub mod bert_chars;
mod bert_memo;
mod bert_pieces;
pub mod charsmap;
pub mod charsmap_build;
#[rustfmt::skip]
mod grapheme_classes;
pub mod graphemes;
#[rustfmt::skip]
pub mod hf_char_classes;
pub mod llamacpp;
#[rustfmt::skip]
pub mod llamacpp_tables;
pub mod metaspace_words;
mod nfc;
pub mod precompiled;
pub mod program;
pub mod sentencepiece;
pub mod unicode_program;

use std::sync::Arc;

use unicode_normalization_alignments::{
    is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

pub use nfc::nfc_of;

use crate::error::{Error, Stage};
use crate::spec::NormalizerSpec;

/// A normalizer stage supplied from outside the core (a plug-in of another language).
pub trait Normalizer: Send + Sync {
    /// The name it is registered under (for messages).
    fn name(&self) -> &str;

    /// The normalized text of `text`.
    fn normalize(&self, text: &str) -> Result<String, Error>;

    /// The normalized text of `text`, or None when it is `text` itself (a normalizer that
    /// knows so spares the copy); by default [`Normalizer::normalize`]'s.
    fn normalize_if_changed(&self, text: &str) -> Result<Option<String>, Error> {
        self.normalize(text).map(Some)
    }

    /// Whether it aligns its output to its input itself ([`Normalizer::alignment_parts`]);
    /// otherwise offsets align the text outside the common prefix and suffix of the two to
    /// the whole changed middle.
    fn tracks_alignment(&self) -> bool {
        false
    }

    /// Its normalized text of `text` and how each character of it aligns to `text`, or None
    /// when it leaves `text` as it is. Only called when [`Normalizer::tracks_alignment`].
    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        let _ = text;
        Ok(None)
    }

    /// [`Normalizer::alignment_parts`] of a stretch that does not start the text (see
    /// [`Normalizer::normalize_later`]); the same for every normalizer but HF's Metaspace.
    fn alignment_parts_later(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        self.alignment_parts(text)
    }

    /// Whether added tokens flagged `normalized` are looked for by their normalized contents
    /// in normalized text (HF's second pass); false for a normalizer that only inserts a
    /// prefix space, with which HF matches them in the text as it is.
    fn normalizes_literals(&self) -> bool {
        true
    }

    /// HF's `Metaspace` pre-tokenizer when this normalizer runs it last and HF's second
    /// literal pass runs before it: that pass then searches [`sentencepiece::MetaspaceNormalizer::before`]'s
    /// text, and each part it leaves gets [`sentencepiece::MetaspaceNormalizer::part`].
    /// None for every other normalizer.
    fn metaspace(&self) -> Option<&sentencepiece::MetaspaceNormalizer> {
        None
    }

    /// Whether it runs in the core (a native normalizer given as a trait object, such as
    /// the SentencePiece ones): then a pipeline using it calls nothing outside the core.
    fn is_native(&self) -> bool {
        false
    }

    /// This normalizer as the core's BERT normalizer, which BERT's pre-tokenizer runs with in
    /// one pass ([`bert::BertNormalizer::normalized_pieces`]); None for every other.
    fn bert(&self) -> Option<&bert::BertNormalizer> {
        None
    }

    /// This normalizer as the core's SentencePiece normalizer, which the pipeline may run
    /// with the SentencePiece spanner and its encoder's cuts in one pass
    /// ([`sentencepiece::SentencePieceNormalizer::normalized_pieces`]); None for every other.
    fn sentencepiece(&self) -> Option<&sentencepiece::SentencePieceNormalizer> {
        None
    }

    /// The normalized text of a stretch that does not start the text (it follows a literal
    /// token): HF's Metaspace with `prepend_scheme: "first"` puts no `▁` there. The same as
    /// [`Normalizer::normalize`] for every other normalizer.
    fn normalize_later(&self, text: &str) -> Result<String, Error> {
        self.normalize(text)
    }
}

/// A normalized text and its alignment to the text it came from, as a normalizer that tracks
/// alignments gives it: for each of its first `head.len()` characters, the range of original
/// characters it comes from (char indices) and whether it is that range's text unchanged;
/// then the last `tail` characters of the original, each itself.
pub struct AlignmentParts {
    pub normalized: String,
    pub head: Vec<(usize, usize, bool)>,
    pub tail: usize,
}

/// A normalizer: the one a vocabulary file declares (the readers in [`crate::formats`] give
/// `None` or `Nfc`) and the stage a pipeline runs.
///
/// Two stages are equal when they are the same native form, or the same foreign normalizer
/// (one shared value).
///
/// ```
/// use wordsplit::NormalizeStage;
///
/// let nfc = NormalizeStage::from_name("nfc").unwrap();
/// assert_eq!((nfc.name(), nfc.normalize("e\u{301}").unwrap()), ("nfc", Some("\u{e9}".into())));
/// ```
#[derive(Clone)]
pub enum NormalizeStage {
    None,
    /// HF's NFC (the `unicode-normalization-alignments` tables HF uses).
    Nfc,
    /// HF's NFD, NFKC and NFKD (the same crate and tables).
    Nfd,
    Nfkc,
    Nfkd,
    /// A normalizer supplied by the caller.
    Foreign(Arc<dyn Normalizer>),
}

impl PartialEq for NormalizeStage {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (NormalizeStage::Foreign(a), NormalizeStage::Foreign(b)) => Arc::ptr_eq(a, b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl Eq for NormalizeStage {}

impl std::fmt::Debug for NormalizeStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NormalizeStage::None => f.write_str("None"),
            NormalizeStage::Nfc => f.write_str("Nfc"),
            NormalizeStage::Nfd => f.write_str("Nfd"),
            NormalizeStage::Nfkc => f.write_str("Nfkc"),
            NormalizeStage::Nfkd => f.write_str("Nfkd"),
            NormalizeStage::Foreign(normalizer) => write!(f, "Foreign({:?})", normalizer.name()),
        }
    }
}

impl NormalizeStage {
    /// The names of the native normalizers.
    pub const NAMES: &'static [&'static str] = &["nfc", "nfd", "nfkc", "nfkd", "none"];

    /// The stage that runs `spec` in the core, or None when the core does not run it (a
    /// plug-in, a malformed character map, or a program that mixes literal
    /// `Replace` and `Prepend` steps with others, or has a regex `Replace`: the caller supplies
    /// it as [`NormalizeStage::Foreign`]).
    ///
    /// ```
    /// use wordsplit::spec::{NormalizerSpec, SentencePieceFlags};
    /// use wordsplit::NormalizeStage;
    /// let spm = NormalizerSpec::SentencePiece {
    ///     flags: SentencePieceFlags::default(),
    ///     charsmap: String::new(),
    ///     user_defined: Vec::new(),
    /// };
    /// let stage = NormalizeStage::from_spec(&spm).unwrap();
    /// assert_eq!(stage.normalize("  a   b ").unwrap().as_deref(), Some("\u{2581}a\u{2581}b"));
    /// assert!(NormalizeStage::from_spec(&NormalizerSpec::Plugin("casefold".into())).is_none());
    /// ```
    pub fn from_spec(spec: &NormalizerSpec) -> Option<Self> {
        Some(match spec {
            NormalizerSpec::None => NormalizeStage::None,
            NormalizerSpec::Nfc => NormalizeStage::Nfc,
            NormalizerSpec::Nfd => NormalizeStage::Nfd,
            NormalizerSpec::Nfkc => NormalizeStage::Nfkc,
            NormalizerSpec::Nfkd => NormalizeStage::Nfkd,
            // (a malformed map is left to the Python package, which refuses it at load, and so
            // is a user-defined piece that holds a space, which the whitespace rules would see
            // inside one chunk)
            NormalizerSpec::SentencePiece {
                flags,
                charsmap,
                user_defined,
            } if !user_defined.iter().any(|piece| piece.contains(' ')) => {
                let map = match charsmap.is_empty() {
                    true => None,
                    false => Some(charsmap::CharsMap::of_base64(charsmap).ok()?),
                };
                NormalizeStage::Foreign(Arc::new(
                    sentencepiece::SentencePieceNormalizer::with_map(*flags, map)
                        .with_user_defined(user_defined),
                ))
            }
            NormalizerSpec::Precompiled(_) => {
                NormalizeStage::Foreign(Arc::new(unicode_program::UnicodeProgram::new(spec)?))
            }
            NormalizerSpec::BertNormalizer { .. } => {
                NormalizeStage::Foreign(Arc::new(bert::BertNormalizer::of(spec)?))
            }
            NormalizerSpec::LlamaCppBert {
                lowercase,
                strip_accents,
            } => NormalizeStage::Foreign(Arc::new(llamacpp::LlamaCppBertNormalizer::new(
                *lowercase,
                *strip_accents,
            ))),
            NormalizerSpec::LlamaCppUnigram {
                add_space_prefix,
                remove_extra_whitespaces,
                charsmap,
            } => {
                let map = match charsmap.is_empty() {
                    true => None,
                    false => Some(charsmap::CharsMap::of_base64(charsmap).ok()?),
                };
                NormalizeStage::Foreign(Arc::new(llamacpp::LlamaCppUnigramNormalizer::new(
                    *add_space_prefix,
                    *remove_extra_whitespaces,
                    map,
                )))
            }
            NormalizerSpec::Plugin(_) => return None,
            NormalizerSpec::Metaspace {
                replacement,
                prepend_scheme,
                before,
                whitespace_split,
                keep_white_space,
            } => NormalizeStage::Foreign(Arc::new(
                sentencepiece::MetaspaceNormalizer::new(*replacement, *prepend_scheme, before)?
                    .with_whitespace_split(*whitespace_split)
                    .with_keep_white_space(*keep_white_space),
            )),
            _ => match program::LiteralProgram::new(spec) {
                Some(program) => NormalizeStage::Foreign(Arc::new(program)),
                None => {
                    NormalizeStage::Foreign(Arc::new(unicode_program::UnicodeProgram::new(spec)?))
                }
            },
        })
    }

    /// The native normalizer of `name` ("none", "nfc", "nfd", "nfkc", "nfkd").
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "none" => NormalizeStage::None,
            "nfc" => NormalizeStage::Nfc,
            "nfd" => NormalizeStage::Nfd,
            "nfkc" => NormalizeStage::Nfkc,
            "nfkd" => NormalizeStage::Nfkd,
            _ => return None,
        })
    }

    /// Its name: a native form's ([`Self::NAMES`], which [`Self::from_name`] takes), or the
    /// foreign normalizer's.
    pub fn name(&self) -> &str {
        match self {
            NormalizeStage::None => "none",
            NormalizeStage::Nfc => "nfc",
            NormalizeStage::Nfd => "nfd",
            NormalizeStage::Nfkc => "nfkc",
            NormalizeStage::Nfkd => "nfkd",
            NormalizeStage::Foreign(normalizer) => normalizer.name(),
        }
    }

    /// Whether this stage runs in the core (no foreign call).
    pub fn is_native(&self) -> bool {
        match self {
            NormalizeStage::Foreign(normalizer) => normalizer.is_native(),
            _ => true,
        }
    }

    /// [`Self::normalize`] of a stretch of text, `later` when it does not start the text
    /// (see [`Normalizer::normalize_later`]).
    pub fn normalize_at(&self, text: &str, later: bool) -> Result<Option<String>, Error> {
        match self {
            NormalizeStage::Foreign(normalizer) if later => {
                Some(normalizer.normalize_later(text)).transpose()
            }
            _ => self.normalize(text),
        }
    }

    /// The normalized text of `text`, or None when it is `text` itself. ASCII text is in all
    /// four forms; so is text the crate's quick check passes (it reads the crate's own
    /// tables), so both skip the work.
    pub fn normalize(&self, text: &str) -> Result<Option<String>, Error> {
        let unchanged = |quick: &dyn Fn(&str) -> IsNormalized| {
            text.is_ascii() || quick(text) == IsNormalized::Yes
        };
        Ok(match self {
            NormalizeStage::None => None,
            NormalizeStage::Nfc => nfc_of(text),
            NormalizeStage::Nfd if !unchanged(&|t| is_nfd_quick(t.chars())) => {
                Some(text.nfd().map(|(c, _)| c).collect())
            }
            NormalizeStage::Nfkc if !unchanged(&|t| is_nfkc_quick(t.chars())) => {
                Some(text.nfkc().map(|(c, _)| c).collect())
            }
            NormalizeStage::Nfkd if !unchanged(&|t| is_nfkd_quick(t.chars())) => {
                Some(text.nfkd().map(|(c, _)| c).collect())
            }
            NormalizeStage::Foreign(normalizer) => normalizer.normalize_if_changed(text)?,
            NormalizeStage::Nfd | NormalizeStage::Nfkc | NormalizeStage::Nfkd => None,
        })
    }

    /// The normalized text of `text`, always a new string (for the few texts that are
    /// normalized once, such as added tokens' contents).
    pub fn normalized(&self, text: &str) -> Result<String, Error> {
        let collect =
            |chars: &mut dyn Iterator<Item = (char, isize)>| chars.map(|(c, _)| c).collect();
        Ok(match self {
            NormalizeStage::None => text.to_owned(),
            NormalizeStage::Nfc => collect(&mut text.nfc()),
            NormalizeStage::Nfd => collect(&mut text.nfd()),
            NormalizeStage::Nfkc => collect(&mut text.nfkc()),
            NormalizeStage::Nfkd => collect(&mut text.nfkd()),
            NormalizeStage::Foreign(normalizer) => normalizer.normalize(text)?,
        })
    }

    /// See [`Normalizer::metaspace`].
    pub fn metaspace(&self) -> Option<&sentencepiece::MetaspaceNormalizer> {
        match self {
            NormalizeStage::Foreign(normalizer) => normalizer.metaspace(),
            _ => None,
        }
    }

    /// A `normalized` added token's content as HF's second pass looks for it: the
    /// normalizer's text, or before a [`Normalizer::metaspace`] the text of the normalizer
    /// before it (HF normalizes a token's content with the normalizer, not the pre-tokenizer).
    pub fn literal_content(&self, text: &str) -> Result<String, Error> {
        match self.metaspace() {
            Some(metaspace) => Ok(metaspace.before(text).unwrap_or_else(|| text.to_owned())),
            None => self.normalized(text),
        }
    }

    /// See [`Normalizer::normalizes_literals`]; the Unicode forms do, no normalizer does not.
    pub fn normalizes_literals(&self) -> bool {
        match self {
            NormalizeStage::None => false,
            NormalizeStage::Foreign(normalizer) => normalizer.normalizes_literals(),
            _ => true,
        }
    }
}

/// A [`Error::Component`] of a normalizer.
pub(crate) fn normalizer_error(name: &str, message: &str) -> Error {
    Error::Component {
        stage: Stage::Normalizer,
        name: name.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Upper;

    impl Normalizer for Upper {
        fn name(&self) -> &str {
            "upper"
        }

        fn normalize(&self, text: &str) -> Result<String, Error> {
            Ok(text.to_uppercase())
        }
    }

    #[test]
    fn stages_are_equal_when_the_same_form_or_the_same_foreign_value() {
        for name in NormalizeStage::NAMES {
            let stage = NormalizeStage::from_name(name).unwrap();
            assert_eq!(stage.name(), *name);
            assert_eq!(stage.clone(), stage);
        }
        assert_ne!(NormalizeStage::Nfc, NormalizeStage::None);
        let upper = NormalizeStage::Foreign(Arc::new(Upper));
        assert_eq!(upper.clone(), upper);
        assert_ne!(upper, NormalizeStage::Foreign(Arc::new(Upper)));
        assert_eq!(
            (upper.name(), format!("{upper:?}")),
            ("upper", "Foreign(\"upper\")".into())
        );
        assert_eq!(upper.normalize("ab").unwrap().as_deref(), Some("AB"));
    }
}
