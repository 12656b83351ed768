//! BERT's normalizer and pre-tokenizer in one pass ([`BertNormalizer::normalized_pieces`]):
//! the text normalized and cut into `BertPreTokenizer`'s pieces (white space removed, each
//! punctuation character a piece of its own) as it is read, with no normalized copy of the
//! whole text made first.
//!
//! ASCII characters are mapped and classed by one table each. A run of other characters is
//! normalized whole by the normalizer's own pass (so NFD sees every mark of a run together,
//! the ASCII characters `clean_text` drops included), and what it became is cut by the classes
//! of its characters: a character's class may change (lowercase, NFD: U+037E becomes `;`).

use super::bert::{BertNormalizer, DROP};
use super::bert_chars::{BertChars, ASCII, PUNCT, WHITE};

/// What an ASCII character is to the pre-tokenizer once normalized.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Part of a word.
    Word,
    /// White space: ends a word, and is removed.
    White,
    /// Punctuation: a piece of its own.
    Punct,
    /// Removed by `clean_text` (and ends nothing).
    Dropped,
}

/// The pieces being cut: the text they make so far, and whether a word is open in it.
struct Cutter<'a> {
    kept: Vec<u8>,
    ends: &'a mut Vec<usize>,
    in_word: bool,
}

impl Cutter<'_> {
    #[inline(always)]
    fn word(&mut self, bytes: &[u8]) {
        self.kept.extend_from_slice(bytes);
        self.in_word = true;
    }

    #[inline(always)]
    fn close(&mut self) {
        if self.in_word {
            self.ends.push(self.kept.len());
            self.in_word = false;
        }
    }

    #[inline(always)]
    fn punct(&mut self, bytes: &[u8]) {
        self.close();
        self.kept.extend_from_slice(bytes);
        self.ends.push(self.kept.len());
    }
}

impl BertNormalizer {
    /// `text` normalized and cut as `BertPreTokenizer` cuts it (see the module docs): the
    /// text its pieces make, each after the one before, with the end of each appended to
    /// `ends`.
    pub fn normalized_pieces(&self, text: &str, ends: &mut Vec<usize>) -> String {
        let classes = self.piece_classes();
        let bytes = text.as_bytes();
        let mut cut = Cutter {
            kept: Vec::with_capacity(text.len() + 16),
            ends,
            in_word: false,
        };
        let mut normalized = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            if byte < 0x80 {
                let (mapped, class) = classes[usize::from(byte)];
                match class {
                    Class::Word => {
                        cut.kept.push(mapped);
                        cut.in_word = true;
                    }
                    Class::White => cut.close(),
                    Class::Punct => cut.punct(&[mapped]),
                    Class::Dropped => {}
                }
                i += 1;
                continue;
            }
            // The run of characters beyond ASCII (and of ASCII ones `clean_text` drops) from i.
            let mut end = i + 1;
            while end < bytes.len()
                && (bytes[end] >= 0x80 || classes[usize::from(bytes[end])].1 == Class::Dropped)
            {
                end += 1;
            }
            normalized.clear();
            self.normalize_into(&text[i..end], &mut normalized);
            cut_normalized(&normalized, &mut cut);
            i = end;
        }
        cut.close();
        // SAFETY: `kept` is made of whole characters of `text` and of the normalizer's output
        // (ASCII bytes mapped to ASCII bytes, other runs whole `str`s), all UTF-8.
        unsafe { String::from_utf8_unchecked(cut.kept) }
    }

    /// Each ASCII byte normalized and its class ([`Class`]) once normalized.
    fn piece_classes(&self) -> [(u8, Class); 128] {
        std::array::from_fn(|b| {
            let mapped = self.ascii_map()[b];
            if mapped == DROP {
                return (mapped, Class::Dropped);
            }
            let flags = ASCII[usize::from(mapped)];
            let class = if flags & WHITE != 0 {
                Class::White
            } else if flags & PUNCT != 0 {
                Class::Punct
            } else {
                Class::Word
            };
            (mapped, class)
        })
    }
}

/// A run's normalized text, cut by the classes of its characters.
fn cut_normalized(normalized: &str, cut: &mut Cutter<'_>) {
    let table = BertChars::get();
    let bytes = normalized.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let (flags, width) = table.at(bytes, i);
        let char_bytes = &bytes[i..i + width];
        if flags & WHITE != 0 {
            cut.close();
        } else if flags & PUNCT != 0 {
            cut.punct(char_bytes);
        } else {
            cut.word(char_bytes);
        }
        i += width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spanners::bert::bert_spans;

    /// The pieces of `text` normalized first, then cut by the pre-tokenizer's scan.
    fn in_two_passes(normalizer: &BertNormalizer, text: &str) -> (String, Vec<usize>) {
        let normalized = normalizer
            .normalize_changed(text)
            .unwrap_or_else(|| text.to_owned());
        let mut ends = Vec::new();
        let kept = bert_spans(&normalized, &mut ends).map_or(normalized, |s| s.text);
        (kept, ends)
    }

    #[test]
    fn one_pass_cuts_what_two_passes_cut() {
        let alphabet: Vec<char> = "aZé É\u{301}\u{323}ß中\u{f900}한\t\n\r\u{b}\u{85}\u{a0}\u{3000}\0\u{1}\u{7f}\u{ad}\u{fffd}\u{37e}\u{387}\u{1fef}\u{1d165}\u{1d16d}Ｆx!,.-'`…、"
            .chars()
            .collect();
        let mut state: u64 = 3;
        for bits in 0..16 {
            let normalizer =
                BertNormalizer::new(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            for round in 0..1500 {
                let text: String = (0..round % 23)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        alphabet[(state >> 33) as usize % alphabet.len()]
                    })
                    .collect();
                let mut ends = Vec::new();
                let kept = normalizer.normalized_pieces(&text, &mut ends);
                assert_eq!((kept, ends), in_two_passes(&normalizer, &text), "{text:?}");
            }
        }
    }

    #[test]
    fn marks_either_side_of_a_dropped_control_character_reorder_together() {
        // NFD sorts U+1D16D (class 226) after U+1D165 (216): the control character between them
        // is gone before NFD runs.
        let normalizer = BertNormalizer::new(true, true, true, true);
        let mut ends = Vec::new();
        let kept = normalizer.normalized_pieces("x\u{1d16d}\u{1}\u{1d165} y", &mut ends);
        assert_eq!(kept, "x\u{1d165}\u{1d16d}y");
        assert_eq!(ends, [9, 10]);
    }
}
