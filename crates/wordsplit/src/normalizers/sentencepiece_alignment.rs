//! How the normalized text of [`SentencePieceNormalizer`] and [`MetaspaceNormalizer`] aligns
//! to the text (what offsets place tokens by), as the Python package's normalizers' `alignment`
//! gives it: sentencepiece's `norm_to_orig` for the first, HF's `NormalizedString` for the
//! second. A separate pass from the normalizers' own (which stay one store per byte); its
//! normalized text is theirs, which the tests check.
//!
//! ```
//! use wordsplit::normalizers::sentencepiece::SentencePieceNormalizer;
//! use wordsplit::spec::SentencePieceFlags;
//! use wordsplit::Normalizer;
//! let flags = SentencePieceFlags { remove_extra_whitespaces: false, ..Default::default() };
//! let parts = SentencePieceNormalizer::new(flags).alignment_parts("a b").unwrap().unwrap();
//! assert_eq!(parts.normalized, "▁a▁b");
//! // (the dummy prefix and an escaped space are not the text they align to)
//! assert_eq!(parts.head, [(0, 1, false), (0, 1, true), (1, 2, false), (2, 3, true)]);
//! ```

use super::{Before, MetaspaceNormalizer, SentencePieceNormalizer};
use crate::error::Error;
use crate::normalizers::{AlignmentParts, Normalizer};
use crate::spec::PrependScheme;

/// One normalized character's place: original chars `start..end`, and whether it is that
/// character unchanged.
type Place = (usize, usize, bool);

/// `parts` with its tail spelled out (a place for every normalized character), or `text`
/// itself when `parts` is None (the normalizer left it as it is).
fn spelled_out(parts: Option<AlignmentParts>, text: &str) -> (String, Vec<Place>) {
    let count = text.chars().count();
    match parts {
        None => (
            text.to_owned(),
            (0..count).map(|i| (i, i + 1, true)).collect(),
        ),
        Some(AlignmentParts {
            normalized,
            mut head,
            tail,
        }) => {
            head.extend((count - tail..count).map(|i| (i, i + 1, true)));
            (normalized, head)
        }
    }
}

/// The parts of `normalized` aligned by `places`, or None when that is `text` unchanged (the
/// SentencePiece and llama.cpp Unigram normalizers' alignments both end with it).
pub(in crate::normalizers) fn parts_of(
    text: &str,
    normalized: String,
    places: Vec<Place>,
) -> Option<AlignmentParts> {
    let identity = normalized == text
        && places
            .iter()
            .enumerate()
            .all(|(i, &place)| place == (i, i + 1, true));
    (!identity).then_some(AlignmentParts {
        normalized,
        head: places,
        tail: 0,
    })
}

impl SentencePieceNormalizer {
    /// The chunks of `text` as sentencepiece's `NormalizePrefix` reads them: `(start, end,
    /// output, same)` in chars, `same` when the output is that text (a user-defined piece, a
    /// character no key of the map matches).
    fn chunks<'a>(&'a self, text: &'a str) -> Vec<(usize, usize, &'a str, bool)> {
        let bytes = text.as_bytes();
        let mut chunks = Vec::with_capacity(text.len());
        let (mut at, mut char_at) = (0, 0);
        while at < bytes.len() {
            let found = if let Some(piece) = self.user_defined_at(text, at) {
                Some((piece.len(), piece, true))
            } else {
                let map = self.map.as_deref();
                let mapped = map.filter(|map| map.starts_with_byte(bytes[at]));
                mapped
                    .and_then(|map| map.longest(&bytes[at..]))
                    .map(|(length, output)| (length, output, false))
            };
            let (length, output, same) = found.unwrap_or_else(|| {
                let width = text[at..].chars().next().map_or(1, char::len_utf8);
                (width, &text[at..at + width], true)
            });
            let chars = text[at..at + length].chars().count();
            chunks.push((char_at, char_at + chars, output, same));
            at += length;
            char_at += chars;
        }
        chunks
    }

    /// The normalized text and each of its characters' place in `text` (the Python package's
    /// `SentencePieceNormalizer.alignment`): a chunk's output aligned to the chunk (character
    /// by character when it is its own text), the dummy prefix to the first character kept
    /// (the last with `treat_whitespace_as_suffix`).
    fn aligned(&self, text: &str) -> (String, Vec<Place>) {
        let chunks = self.chunks(text);
        let squeeze = self.remove_extra_whitespaces;
        let mut first = 0;
        while squeeze && first < chunks.len() && chunks[first].2 == " " {
            first += 1;
        }
        if first == chunks.len() {
            return (String::new(), Vec::new());
        }
        let (space, escape) = (self.space, self.space != " ");
        let mut out = String::with_capacity(text.len() + 8);
        let mut places: Vec<Place> = Vec::with_capacity(text.len() + 2);
        if self.add_dummy_prefix && !self.suffix {
            let start = chunks[first].0;
            out.push_str(space);
            places.push((start, start + 1, false));
        }
        let mut previous_space = squeeze;
        for &(begin, end, output, same) in &chunks[first..] {
            let kept = if previous_space {
                output.trim_start_matches(' ')
            } else {
                output
            };
            let skipped = output.len() - kept.len();
            if !kept.is_empty() {
                for (k, c) in kept.chars().enumerate() {
                    let place = if same {
                        (begin + skipped + k, begin + skipped + k + 1)
                    } else {
                        (begin, end)
                    };
                    if c == ' ' && escape {
                        out.push_str(space);
                        places.push((place.0, place.1, false));
                    } else {
                        out.push(c);
                        places.push((place.0, place.1, same));
                    }
                }
                previous_space = kept.ends_with(' ');
            }
            if !squeeze {
                previous_space = false;
            }
        }
        if squeeze {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
                places.pop();
            }
        }
        if self.add_dummy_prefix && self.suffix {
            let end = places.last().map_or(text.chars().count(), |p| p.1);
            out.push_str(space);
            places.push((end - 1, end, false));
        }
        (out, places)
    }

    /// [`Normalizer::alignment_parts`] (see [`Self::aligned`]).
    pub(super) fn alignment_of(&self, text: &str) -> Option<AlignmentParts> {
        let (normalized, places) = self.aligned(text);
        parts_of(text, normalized, places)
    }
}

impl MetaspaceNormalizer {
    /// The normalized text and each of its characters' place in `text` (the Python package's
    /// `MetaspaceNormalizer.alignment`): the normalizer before aligned as it aligns itself,
    /// each replacement of a space aligned to it, a prepended one to the first character of
    /// its stretch or word (HF's `prepend`). `prepends`: whether a stretch gets one.
    pub(super) fn alignment_of(
        &self,
        text: &str,
        prepends: bool,
    ) -> Result<Option<AlignmentParts>, Error> {
        let parts = match &self.inner {
            None => None,
            Some(Before::Literal(program)) => program.alignment_parts(text)?,
            Some(Before::Unicode(program)) => program.alignment_parts(text)?,
        };
        let (normalized, base) = spelled_out(parts, text);
        if normalized.is_empty() {
            return Ok(parts_of(text, normalized, base));
        }
        let replacement = self.replacement;
        let mut out = String::with_capacity(normalized.len() + 8);
        let mut places = Vec::with_capacity(base.len() + 2);
        if self.keeps_white_space() {
            // The text with its white space, the replacement only where HF puts one (see
            // `word_starts`), aligned to its word's first character.
            let starts = self.word_starts(text, &normalized, prepends)?;
            let mut next = starts.iter().peekable();
            for (i, c) in normalized.chars().enumerate() {
                if next.next_if(|&&(k, _)| k == i).is_some() {
                    out.push(replacement);
                    places.push((base[i].0, base[i].1, false));
                }
                out.push(c);
                places.push(base[i]);
            }
            return Ok(parts_of(text, out, places));
        }
        if self.whitespace_split {
            // Each word between runs of white space, the replacement before it unless it
            // starts with one.
            let chars: Vec<char> = normalized.chars().collect();
            let mut k = 0;
            while k < chars.len() {
                if chars[k].is_whitespace() {
                    k += 1;
                    continue;
                }
                let start = k;
                while k < chars.len() && !chars[k].is_whitespace() {
                    k += 1;
                }
                if chars[start] != replacement {
                    out.push(replacement);
                    places.push((base[start].0, base[start].1, false));
                }
                out.extend(&chars[start..k]);
                places.extend_from_slice(&base[start..k]);
            }
            return Ok(parts_of(text, out, places));
        }
        let first = normalized.chars().next().expect("not empty");
        // (`first`: not when the normalizer dropped the input's first character, HF's
        // `offsets_original().0 == 0` of the text; see `Self::run`)
        let prepends = prepends
            && (self.scheme != PrependScheme::First || !self.drops_start || base[0].0 == 0);
        if prepends && first != ' ' && first != replacement {
            out.push(replacement);
            places.push((base[0].0, base[0].1, false));
        }
        for (c, &(start, end, same)) in normalized.chars().zip(&base) {
            if c == ' ' {
                out.push(replacement);
                places.push((start, end, false));
            } else {
                out.push(c);
                places.push((start, end, same));
            }
        }
        Ok(parts_of(text, out, places))
    }
}

#[cfg(test)]
#[path = "sentencepiece_alignment_tests.rs"]
mod tests;
