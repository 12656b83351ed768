//! How the normalized text of llama.cpp's normalizers aligns to the text (what offsets place
//! tokens by), as the Python package's `alignment` of each gives it. [`LlamaCppBertNormalizer`]
//! maps each code point to at most one: a character it keeps is aligned to the one it came
//! from. [`LlamaCppUnigramNormalizer`]:
//! a character of the map's output aligned to the key it replaced, a character no key matches
//! to itself, the `▁` of a space to that space, and an added `▁` (`add_space_prefix`, or one
//! per run of other characters with `remove_extra_whitespaces`) to the character or key it is
//! put before. A separate pass from the normalizer's own; its normalized text is the
//! normalizer's, which the tests check.
//!
//! ```
//! use wordsplit::normalizers::llamacpp::LlamaCppUnigramNormalizer;
//! use wordsplit::Normalizer;
//! let merge = LlamaCppUnigramNormalizer::new(true, true, None);
//! let parts = merge.alignment_parts(" ab ").unwrap().unwrap();
//! assert_eq!(parts.normalized, "▁ab");
//! // (the added ▁ is aligned to the "a" it is put before, and is not that "a")
//! assert_eq!(parts.head, [(1, 2, false), (1, 2, true), (2, 3, true)]);
//! ```

use super::{LlamaCppBertNormalizer, LlamaCppUnigramNormalizer, SPACE};
use crate::code_points::utf8_width;
use crate::normalizers::sentencepiece::alignment::parts_of;
use crate::normalizers::AlignmentParts;

/// One normalized character's place: original chars `start..end`, and whether it is that
/// character unchanged.
type Place = (usize, usize, bool);

impl LlamaCppBertNormalizer {
    /// [`crate::Normalizer::alignment_parts`]: each character kept, in its own place; None
    /// when the text is left as it is.
    pub(super) fn alignment_of(&self, text: &str) -> Option<AlignmentParts> {
        let mut normalized = String::with_capacity(text.len());
        let mut places: Vec<Place> = Vec::with_capacity(text.len());
        for (k, c) in text.chars().enumerate() {
            if let Some(out) = self.output(c) {
                normalized.push(out);
                places.push((k, k + 1, out == c));
            }
        }
        parts_of(text, normalized, places)
    }
}

impl LlamaCppUnigramNormalizer {
    /// The chunks of `text` as the character map reads it, in order: `(chars, output, same)`,
    /// the number of characters of the chunk and what it becomes, `same` when that is the
    /// chunk itself (a character no key matches at its place; each is a chunk of its own).
    fn chunks<'a>(&'a self, text: &'a str) -> impl Iterator<Item = (usize, &'a str, bool)> + 'a {
        let bytes = text.as_bytes();
        let mut at = 0;
        std::iter::from_fn(move || {
            let lead = *bytes.get(at)?;
            let key = self
                .map
                .as_deref()
                .filter(|map| map.starts_with_byte(lead))
                .and_then(|map| map.longest(&bytes[at..]));
            let chunk = match key {
                Some((length, output)) => {
                    let chars = text[at..at + length].chars().count();
                    at += length;
                    (chars, output, false)
                }
                None => {
                    let width = utf8_width(lead);
                    at += width;
                    (1, &text[at - width..at], true)
                }
            };
            Some(chunk)
        })
    }

    /// The normalized text and each of its characters' place in `text` (see the module docs):
    /// the Python package's loop, a chunk and then a character of its output at a time.
    fn aligned(&self, text: &str) -> (String, Vec<Place>) {
        let mut out = String::with_capacity(text.len() + text.len() / 4 + 3);
        let mut places: Vec<Place> = Vec::with_capacity(text.len() + 2);
        let (mut in_word, mut prefixed) = (false, false);
        let mut start = 0;
        for (chars, output, same) in self.chunks(text) {
            let end = start + chars;
            for c in output.chars() {
                if c == ' ' {
                    in_word = false;
                    if !self.merge_spaces {
                        out.push(SPACE);
                        places.push((start, end, false));
                    }
                    continue;
                }
                if !in_word {
                    in_word = true;
                    if self.merge_spaces || (self.add_space_prefix && !prefixed) {
                        out.push(SPACE);
                        places.push((start, end, false));
                        prefixed = true;
                    }
                }
                out.push(c);
                places.push((start, end, same));
            }
            start = end;
        }
        (out, places)
    }

    /// [`crate::Normalizer::alignment_parts`] (see [`Self::aligned`]): None when the text is
    /// left as it is, each character in its own place.
    pub(super) fn alignment_of(&self, text: &str) -> Option<AlignmentParts> {
        let (normalized, places) = self.aligned(text);
        parts_of(text, normalized, places)
    }
}

#[cfg(test)]
#[path = "llamacpp_alignment_tests.rs"]
mod tests;
