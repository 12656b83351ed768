//! llama.cpp's normalizers of GGUF WordPiece (`bert`) and Unigram (`t5`) vocabularies: the
//! stages [`crate::spec::NormalizerSpec::LlamaCppBert`] and
//! [`crate::spec::NormalizerSpec::LlamaCppUnigram`]
//! (`llama-vocab.cpp`'s `llm_tokenizer_wpm_session::preprocess` and
//! `llm_tokenizer_ugm_session::normalize`), twins of the Python package's
//! `wordsplit.normalizers.llamacpp` (the specification; the tests hold the two equal).
//!
//! llama.cpp's WordPiece preprocessing maps one code point to at most one, with its own tables
//! of Unicode 15.1 ([`super::llamacpp_tables`], generated from the Python module's):
//! the first code point of its NFD, then white space kept, NUL, U+FFFD and controls dropped,
//! marks dropped, and the simple lowercase mapping. Its Unigram normalizer runs the
//! precompiled character map (the longest key at each place, as `sentencepiece`) and then
//! treats the spaces a byte at a time: each U+0020 becomes `▁`, with one `▁` before the first
//! other character (`add_space_prefix`), or, with `remove_extra_whitespaces`, one `▁` before
//! each run of other characters and the spaces dropped (unlike `sentencepiece`, two spaces
//! inside one output of the map and a `▁` typed in the text are no spaces to it). The output
//! of each aligns to the text as the Python package's aligns it (`llamacpp_alignment.rs`),
//! which offsets place tokens by.
//!
//! ```
//! use wordsplit::normalizers::llamacpp::{LlamaCppBertNormalizer, LlamaCppUnigramNormalizer};
//! use wordsplit::Normalizer;
//! let bert = LlamaCppBertNormalizer::new(true, true);
//! assert_eq!(bert.normalize("Ça\u{301} İ\u{0}x").unwrap(), "ca ix");
//! let unigram = LlamaCppUnigramNormalizer::new(true, true, None);
//! assert_eq!(unigram.normalize("  a   b\u{2581} ").unwrap(), "\u{2581}a\u{2581}b\u{2581}");
//! ```

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use super::charsmap::CharsMap;
use super::llamacpp_tables as tables;
use super::Normalizer;
use crate::code_points::{contains, utf8_width};
use crate::error::Error;
use crate::normalizers::AlignmentParts;

#[path = "llamacpp_alignment.rs"]
mod alignment;

/// SentencePiece's space, `▁`.
const SPACE: char = '\u{2581}';

/// llama.cpp's white space (`unicode_set_whitespace`): Unicode's 25 White_Space code points,
/// which are `char::is_whitespace`'s.
pub use crate::spanners::bert::WHITE_SPACE_RANGES as WHITESPACE;

/// llama.cpp's `unicode_cpts_normalize_nfd` of one code point: the first code point of its
/// NFD (Unicode 15.1).
pub fn nfd_first(cp: u32) -> u32 {
    let at = tables::NFD_FIRST.partition_point(|&(first, _, _)| first <= cp);
    match at.checked_sub(1).map(|i| tables::NFD_FIRST[i]) {
        Some((_, last, to)) if cp <= last => to,
        _ => cp,
    }
}

/// llama.cpp's `unicode_tolower`: UnicodeData's simple lowercase mapping.
pub fn lowercase(cp: u32) -> u32 {
    match tables::LOWERCASE.binary_search_by_key(&cp, |&(from, _)| from) {
        Ok(i) => tables::LOWERCASE[i].1,
        Err(_) => cp,
    }
}

/// What one code point becomes in llama.cpp's WordPiece preprocessing, or None when it is
/// dropped (the order of `preprocess`: NFD, then white space kept, then NUL, U+FFFD and
/// controls dropped, then marks dropped, then lowercase).
pub fn bert_output(cp: u32, lowercase_: bool, strip_accents: bool) -> Option<u32> {
    let cp = if strip_accents { nfd_first(cp) } else { cp };
    if contains(&WHITESPACE, cp) {
        return Some(cp);
    }
    if cp == 0 || cp == 0xFFFD || contains(tables::CONTROL, cp) {
        return None;
    }
    if strip_accents && contains(tables::MARK, cp) {
        return None;
    }
    Some(if lowercase_ { lowercase(cp) } else { cp })
}

/// A dropped code point in [`BmpTable`].
const DROPPED: u32 = u32::MAX;

/// [`bert_output`] of every code point of the Basic Multilingual Plane, for one choice of the
/// two flags (made once per process, when a normalizer with those flags is first made).
struct BmpTable(Box<[u32]>);

fn bmp_table(lowercase_: bool, strip_accents: bool) -> &'static BmpTable {
    static TABLES: [OnceLock<BmpTable>; 4] = [const { OnceLock::new() }; 4];
    TABLES[usize::from(lowercase_) << 1 | usize::from(strip_accents)].get_or_init(|| {
        BmpTable(
            (0..0x10000u32)
                .map(|cp| bert_output(cp, lowercase_, strip_accents).unwrap_or(DROPPED))
                .collect(),
        )
    })
}

/// The characters of llama.cpp's WordPiece preprocessing ([`NormalizerSpec::LlamaCppBert`]):
/// each code point becomes at most one.
///
/// [`NormalizerSpec::LlamaCppBert`]: crate::spec::NormalizerSpec::LlamaCppBert
pub struct LlamaCppBertNormalizer {
    lowercase: bool,
    strip_accents: bool,
    bmp: &'static BmpTable,
}

impl LlamaCppBertNormalizer {
    /// The normalizer with these flags.
    pub fn new(lowercase: bool, strip_accents: bool) -> Self {
        Self {
            lowercase,
            strip_accents,
            bmp: bmp_table(lowercase, strip_accents),
        }
    }

    /// What `c` becomes, or None when it is dropped.
    #[inline]
    fn output(&self, c: char) -> Option<char> {
        let cp = c as u32;
        let out = match self.bmp.0.get(cp as usize) {
            Some(&out) => (out != DROPPED).then_some(out),
            None => bert_output(cp, self.lowercase, self.strip_accents),
        };
        // (every output is a code point of the tables: a scalar value)
        out.and_then(char::from_u32)
    }
}

impl Normalizer for LlamaCppBertNormalizer {
    fn name(&self) -> &str {
        "LlamaCppBert"
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        Ok(self
            .normalize_if_changed(text)?
            .unwrap_or_else(|| text.to_owned()))
    }

    fn normalize_if_changed(&self, text: &str) -> Result<Option<String>, Error> {
        // The first character that changes; the text before it is copied whole.
        let Some((at, _)) = text
            .char_indices()
            .find(|&(_, c)| self.output(c) != Some(c))
        else {
            return Ok(None);
        };
        let mut out = String::with_capacity(text.len());
        out.push_str(&text[..at]);
        out.extend(text[at..].chars().filter_map(|c| self.output(c)));
        Ok(Some(out))
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        Ok(self.alignment_of(text))
    }

    fn is_native(&self) -> bool {
        true
    }
}

/// llama.cpp's normalizer of a Unigram vocabulary ([`NormalizerSpec::LlamaCppUnigram`]): the
/// character map, then the spaces.
///
/// [`NormalizerSpec::LlamaCppUnigram`]: crate::spec::NormalizerSpec::LlamaCppUnigram
pub struct LlamaCppUnigramNormalizer {
    add_space_prefix: bool,
    merge_spaces: bool,
    map: Option<Arc<CharsMap>>,
}

impl LlamaCppUnigramNormalizer {
    /// The normalizer of these flags and character map (None: the identity).
    pub fn new(add_space_prefix: bool, merge_spaces: bool, map: Option<Arc<CharsMap>>) -> Self {
        Self {
            add_space_prefix,
            merge_spaces,
            map,
        }
    }

    /// `text` after the character map: at each character where a key starts, the longest
    /// key's output, and the text after it.
    fn mapped<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(map) = self.map.as_deref() else {
            return Cow::Borrowed(text);
        };
        let bytes = text.as_bytes();
        let mut out: Option<String> = None;
        let (mut done, mut i) = (0, 0);
        while i < bytes.len() {
            let lead = bytes[i];
            if map.starts_with_byte(lead) {
                if let Some((length, output)) = map.longest(&bytes[i..]) {
                    let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 8));
                    out.push_str(&text[done..i]);
                    out.push_str(output);
                    i += length;
                    done = i;
                    continue;
                }
            }
            i += utf8_width(lead);
        }
        match out {
            Some(mut out) => {
                out.push_str(&text[done..]);
                Cow::Owned(out)
            }
            None => Cow::Borrowed(text),
        }
    }
}

impl Normalizer for LlamaCppUnigramNormalizer {
    fn name(&self) -> &str {
        "LlamaCppUnigram"
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        let mapped = self.mapped(text);
        let mut out = String::with_capacity(mapped.len() + mapped.len() / 4 + 3);
        if self.merge_spaces {
            // One ▁ before every run of characters that are not a space; the spaces dropped.
            for run in mapped.split(' ').filter(|run| !run.is_empty()) {
                out.push(SPACE);
                out.push_str(run);
            }
            return Ok(out);
        }
        let first = mapped.len() - mapped.trim_start_matches(' ').len();
        for (i, c) in mapped.char_indices() {
            if i == first && self.add_space_prefix {
                out.push(SPACE);
            }
            out.push(if c == ' ' { SPACE } else { c });
        }
        Ok(out)
    }

    fn normalize_if_changed(&self, text: &str) -> Result<Option<String>, Error> {
        let out = self.normalize(text)?;
        Ok((out != text).then_some(out))
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        Ok(self.alignment_of(text))
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::charsmap_build::compile;

    #[test]
    fn bert_maps_each_code_point_to_at_most_one() {
        let bert = LlamaCppBertNormalizer::new(true, true);
        // NFD's first code point, then lowercase; a Hangul syllable becomes its leading jamo
        assert_eq!(bert.normalize("ÉCOLE 한").unwrap(), "ecole \u{1112}");
        // controls, NUL, U+FFFD and marks dropped; white space kept as it is
        let text = "a\u{0}\u{ad}b\u{fffd}\u{301}c\u{3000}\td";
        assert_eq!(bert.normalize(text).unwrap(), "abc\u{3000}\td");
        // without strip_accents a mark stays; without lowercase a capital does
        let keep = LlamaCppBertNormalizer::new(false, false);
        assert_eq!(keep.normalize("Ée\u{301}").unwrap(), "Ée\u{301}");
        // İ lowercases to i alone (the first character of its lowercase)
        assert_eq!(bert.normalize("İ").unwrap(), "i");
        // beyond the BMP: a control of plane 14 dropped, an ideograph of plane 2 kept
        assert_eq!(bert.normalize("\u{e0001}\u{20000}").unwrap(), "\u{20000}");
        assert_eq!(bert.normalize_if_changed("plain text").unwrap(), None);
    }

    #[test]
    fn bmp_table_equals_the_lookups() {
        for (lower, strip) in [(true, true), (false, true), (true, false), (false, false)] {
            let table = bmp_table(lower, strip);
            for cp in (0..0x10000u32).step_by(7) {
                let out = table.0[cp as usize];
                let expected = bert_output(cp, lower, strip).unwrap_or(DROPPED);
                assert_eq!(out, expected, "{cp:#x}");
            }
        }
        assert_eq!(nfd_first(0x2B81F), 0x2B81F);
        assert_eq!(tables::UNICODE_VERSION, "15.1.0");
    }

    #[test]
    fn the_stages_of_the_specs_are_native() {
        use crate::spec::NormalizerSpec;
        use crate::NormalizeStage;
        let bert = NormalizerSpec::LlamaCppBert {
            lowercase: true,
            strip_accents: false,
        };
        let stage = NormalizeStage::from_spec(&bert).unwrap();
        assert!(stage.is_native() && stage.name() == "LlamaCppBert");
        assert_eq!(stage.normalize("Ée").unwrap().as_deref(), Some("ée"));
        let unigram = |charsmap: &str| NormalizerSpec::LlamaCppUnigram {
            add_space_prefix: true,
            remove_extra_whitespaces: false,
            charsmap: charsmap.to_owned(),
        };
        let stage = NormalizeStage::from_spec(&unigram("")).unwrap();
        assert!(stage.is_native() && stage.name() == "LlamaCppUnigram");
        assert_eq!(stage.normalize(" a").unwrap().as_deref(), Some("▁▁a"));
        // a malformed map is left to the Python package, which refuses it at load
        assert!(NormalizeStage::from_spec(&unigram("AQID")).is_none());
    }

    #[test]
    fn unigram_spaces_a_byte_at_a_time() {
        let merge = LlamaCppUnigramNormalizer::new(true, true, None);
        assert_eq!(merge.normalize("  a   b▁ ").unwrap(), "▁a▁b▁");
        assert_eq!(merge.normalize("   ").unwrap(), "");
        let prefix = LlamaCppUnigramNormalizer::new(true, false, None);
        assert_eq!(prefix.normalize("  a b").unwrap(), "▁▁▁a▁b");
        assert_eq!(prefix.normalize("  ").unwrap(), "▁▁");
        let plain = LlamaCppUnigramNormalizer::new(false, false, None);
        assert_eq!(plain.normalize(" a ").unwrap(), "▁a▁");
        assert_eq!(plain.normalize_if_changed("ab").unwrap(), None);
    }

    #[test]
    fn unigram_map_takes_the_longest_key_then_the_spaces() {
        let rules = [
            ("Ａ", "A"),
            ("ｱ", "ア"),
            ("ｱﾞ", "ア゙"),
            ("x", "y  z"),
            ("①", "1"),
        ];
        let map = Arc::new(CharsMap::parse(&compile(&rules)).unwrap());
        let merge = LlamaCppUnigramNormalizer::new(true, true, Some(map.clone()));
        // the longest key wins; the two spaces inside one output are merged like any others
        assert_eq!(merge.normalize("Ａｱﾞ x①").unwrap(), "▁Aア゙▁y▁z1");
        let keep = LlamaCppUnigramNormalizer::new(false, false, Some(map));
        assert_eq!(keep.normalize("ｱx").unwrap(), "アy▁▁z");
        assert_eq!(keep.normalize_if_changed("b").unwrap(), None);
    }
}
