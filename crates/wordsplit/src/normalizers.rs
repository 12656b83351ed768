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

use std::sync::{Arc, OnceLock};

use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

use crate::error::{Error, Stage};
use crate::spanners::classes::decode_multibyte;

/// A normalizer stage supplied from outside the core (a plug-in of another language).
pub trait Normalizer: Send + Sync {
    /// The name it is registered under (for messages).
    fn name(&self) -> &str;

    /// The normalized text of `text`.
    fn normalize(&self, text: &str) -> Result<String, Error>;

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

    /// Whether added tokens flagged `normalized` are looked for by their normalized contents
    /// in normalized text (HF's second pass); false for a normalizer that only inserts a
    /// prefix space, with which HF matches them in the text as it is.
    fn normalizes_literals(&self) -> bool {
        true
    }

    /// Whether it runs in the core (a native normalizer given as a trait object, such as
    /// the SentencePiece ones): then a pipeline using it calls nothing outside the core.
    fn is_native(&self) -> bool {
        false
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
            NormalizeStage::Foreign(normalizer) => Some(normalizer.normalize(text)?),
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

/// One bit per code point of the Basic Multilingual Plane: set for a starter (canonical
/// combining class 0) that passes NFC's quick check, the characters [`nfc_of`] passes over.
/// Made once per process from the normalization crate's own lookups (65,536 of each, under
/// 2 ms), so that text in CJK, Cyrillic, Greek or Arabic costs [`nfc_of`] a bit test per
/// character rather than two perfect-hash lookups (a tenth of a one-pass encode of
/// multilingual text with Qwen3's NFC).
fn plain_starters() -> &'static [u64; 1024] {
    static STARTERS: OnceLock<Box<[u64; 1024]>> = OnceLock::new();
    STARTERS.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for c in (0..0x1_0000).filter_map(char::from_u32) {
            if canonical_combining_class(c) == 0
                && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes
            {
                bits[c as usize / 64] |= 1 << (c as usize % 64);
            }
        }
        bits
    })
}

#[inline(always)]
fn is_plain_starter(starters: &[u64; 1024], c: char) -> bool {
    let c = c as usize;
    c < 0x1_0000 && starters[c / 64] & (1 << (c % 64)) != 0
}

/// The character starting at byte `i` of `bytes`, the bytes of a `str`, and its length.
#[inline(always)]
fn char_at(bytes: &[u8], i: usize) -> (char, usize) {
    let (code, width) = match bytes[i] {
        lead @ 0..=0x7f => (u32::from(lead), 1),
        _ => decode_multibyte(bytes, i),
    };
    // SAFETY: `bytes` is valid UTF-8 and `i` the start of one of its characters, so these
    // are the bytes of one scalar value, decoded as UTF-8 encodes it.
    (unsafe { char::from_u32_unchecked(code) }, width)
}

/// HF's NFC of `text` (the crate's), or None when `text` is already in NFC.
///
/// Only the stretches that can change are normalized. The text is cut before every starter
/// whose NFC quick check is Yes: nothing before such a character can reorder past it or
/// compose with it, so NFC of the whole is NFC of each stretch, concatenated. A stretch whose
/// characters all pass the quick check in canonical order is already NFC. Text with a few
/// characters that the quick check calls Maybe (Tamil and Bengali vowel signs, kana voicing
/// marks...) thus costs a few short normalizations instead of one of the whole document.
pub fn nfc_of(text: &str) -> Option<String> {
    if text.is_ascii() {
        return None;
    }
    let mut out: Option<String> = None;
    let mut copied = 0; // text[..copied] is in `out` already
    let mut flush = |start: usize, end: usize, out: &mut Option<String>| {
        let stretch = &text[start..end];
        let normalized: String = stretch.nfc().map(|(c, _)| c).collect();
        if normalized != stretch {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..start]);
            o.push_str(&normalized);
            copied = end;
        }
    };
    let starters = plain_starters();
    let bytes = text.as_bytes();
    let (mut stretch, mut suspect, mut last_class) = (0, false, 0u8);
    let mut i = 0;
    while i < bytes.len() {
        // Outside a suspect stretch, eight ASCII characters (plain starters all) at a time:
        // the last of them starts the stretch.
        if !suspect {
            if let Some(word) = bytes.get(i..i + 8) {
                let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
                if word & 0x8080_8080_8080_8080 == 0 {
                    stretch = i + 7;
                    last_class = 0;
                    i += 8;
                    continue;
                }
            }
        }
        let (c, width) = char_at(bytes, i);
        // Below U+0300 every character is a starter that passes the quick check.
        let (class, yes) = if c < '\u{300}' || is_plain_starter(starters, c) {
            (0, true)
        } else {
            let yes = is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes;
            (canonical_combining_class(c), yes)
        };
        if class == 0 && yes {
            if suspect {
                flush(stretch, i, &mut out);
            }
            stretch = i;
            suspect = false;
        } else if !yes || (class != 0 && class < last_class) {
            suspect = true;
        }
        last_class = class;
        i += width;
    }
    if suspect {
        flush(stretch, text.len(), &mut out);
    }
    if let Some(o) = out.as_mut() {
        o.push_str(&text[copied..]);
    }
    out
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

    #[test]
    fn char_at_decodes_as_char_indices() {
        let text = "a\u{7f}\u{80}é\u{7ff}\u{800}中\u{ffff}\u{10000}😀\u{10ffff}z";
        let mut i = 0;
        for (at, c) in text.char_indices() {
            assert_eq!(i, at);
            assert_eq!(char_at(text.as_bytes(), i), (c, c.len_utf8()));
            i += c.len_utf8();
        }
    }

    #[test]
    fn plain_starters_are_the_crates_starters_that_pass_the_quick_check() {
        let starters = plain_starters();
        for c in (0..0x1_0000).filter_map(char::from_u32) {
            let plain = canonical_combining_class(c) == 0
                && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes;
            assert_eq!(is_plain_starter(starters, c), plain, "{c:?}");
        }
        assert!(is_plain_starter(starters, '中') && is_plain_starter(starters, 'Й'));
        assert!(!is_plain_starter(starters, '\u{301}') && !is_plain_starter(starters, '\u{3099}'));
        assert!(
            !is_plain_starter(starters, '\u{f900}'),
            "a singleton decomposition"
        );
        assert!(
            !is_plain_starter(starters, '😀'),
            "outside the table: the lookups decide"
        );
    }

    #[test]
    fn nfc_by_stretches_is_nfc_of_the_whole() {
        // Characters that compose, reorder, decompose or start stretches, in random orders
        // (a fixed linear congruential generator, so the test is the same on every run).
        let alphabet: Vec<char> = "ae\u{301}\u{327}\u{323}\u{344}\u{f73}\u{ba4}\u{bbe}\u{bca}\u{bc6}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{1e0a}\u{304b}\u{3099}\u{212b}\u{2126} z\u{5d0}\u{5b4}\u{5b7}"
            .chars()
            .collect();
        let mut state: u64 = 7;
        for round in 0..20_000 {
            let length = 1 + round % 12;
            let text: String = (0..length)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect();
            let whole: String = text.nfc().map(|(c, _)| c).collect();
            let by_stretches = nfc_of(&text).unwrap_or_else(|| text.clone());
            assert_eq!(by_stretches, whole, "{text:?}");
            assert_eq!(nfc_of(&text).is_none(), whole == text, "{text:?}");
        }
    }
}
