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
pub(super) enum Class {
    /// Part of a word.
    Word,
    /// White space: ends a word, and is removed.
    White,
    /// Punctuation: a piece of its own.
    Punct,
    /// Removed by `clean_text` (and ends nothing).
    Dropped,
}

/// Each ASCII byte as `ascii` (a normalizer's map of them, [`DROP`] for those it drops)
/// makes it, and its class ([`Class`]) once normalized.
pub(super) fn piece_classes(ascii: &[u8; 128]) -> [(u8, Class); 128] {
    std::array::from_fn(|b| {
        let mapped = ascii[b];
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

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The bytes of `word` (eight ASCII bytes) from `low` to `high`, as the high bit of each.
#[inline(always)]
const fn in_range(word: u64, low: u8, high: u8) -> u64 {
    // (no byte below 0x80 carries into the next when either is added)
    let at_least_low = word.wrapping_add((0x80 - low as u64) * ONES);
    let above_high = word.wrapping_add((0x7F - high as u64) * ONES);
    at_least_low & !above_high & HIGH
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
            if let Some(block) = bytes.get(i..i + 8) {
                let block = u64::from_le_bytes(block.try_into().expect("eight bytes"));
                if self.cut_block(block, &mut cut) {
                    i += 8;
                    continue;
                }
            }
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

    /// Eight bytes of text (read little-endian), normalized and cut at once when they are
    /// ASCII without a control character other than white space; false (nothing done) for
    /// any other eight. Each stretch of word bytes between white space and punctuation is
    /// written with one store of the whole (lowercased) eight, shifted.
    #[inline(always)]
    fn cut_block(&self, block: u64, cut: &mut Cutter<'_>) -> bool {
        if block & HIGH != 0 {
            return false;
        }
        let eq = |byte: u8| in_range(block, byte, byte);
        let controls = in_range(block, 0, 0x1F) | eq(0x7F);
        let mut white = eq(b' ') | eq(b'\t') | eq(b'\n') | eq(b'\r');
        if !self.clean_text() {
            white |= eq(0x0B) | eq(0x0C);
        }
        if controls & !white != 0 {
            return false;
        }
        let punct = in_range(block, 0x21, 0x2F)
            | in_range(block, 0x3A, 0x40)
            | in_range(block, 0x5B, 0x60)
            | in_range(block, 0x7B, 0x7E);
        let mapped = if self.lowercases() {
            block | in_range(block, b'A', b'Z') >> 2
        } else {
            block
        };
        // Room for two stores of eight past the end: a block writes no more than eight bytes.
        cut.kept.reserve(16);
        let mut boundaries = white | punct;
        let mut position = 0;
        loop {
            let next = match boundaries {
                0 => 8,
                _ => boundaries.trailing_zeros() / 8,
            };
            if next > position {
                let len = cut.kept.len();
                // SAFETY: `reserve` above leaves room for eight bytes at `len`, which grows by
                // no more than eight within the block.
                unsafe {
                    let at = cut.kept.as_mut_ptr().add(len);
                    at.cast::<u64>()
                        .write_unaligned((mapped >> (8 * position)).to_le());
                    cut.kept.set_len(len + (next - position) as usize);
                }
                cut.in_word = true;
            }
            if next == 8 {
                return true;
            }
            cut.close();
            if punct >> (8 * next) & 0x80 != 0 {
                cut.kept.push((mapped >> (8 * next)) as u8);
                cut.ends.push(cut.kept.len());
            }
            boundaries &= boundaries - 1;
            position = next + 1;
        }
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
    fn byte_ranges_eight_at_a_time() {
        for byte in 0..0x80u8 {
            for (low, high) in [
                (0, 0x1F),
                (b'A', b'Z'),
                (0x7F, 0x7F),
                (0x21, 0x2F),
                (0x7B, 0x7E),
            ] {
                let block = u64::from_le_bytes([b'x', byte, 0, 0x7F, b'A', b'Z', b'a', byte]);
                let want = [b'x', byte, 0, 0x7F, b'A', b'Z', b'a', byte].map(|b| {
                    if (low..=high).contains(&b) {
                        0x80
                    } else {
                        0
                    }
                });
                assert_eq!(in_range(block, low, high), u64::from_le_bytes(want));
            }
        }
    }

    #[test]
    fn one_pass_cuts_what_two_passes_cut() {
        let alphabets: [Vec<char>; 2] = [
            "aZé É\u{301}\u{323}ß中\u{f900}한\t\n\r\u{b}\u{85}\u{a0}\u{3000}\0\u{1}\u{7f}\u{ad}\u{fffd}\u{37e}\u{387}\u{1fef}\u{1d165}\u{1d16d}Ｆx!,.-'`…、"
                .chars()
                .collect(),
            // Mostly ASCII, so that runs of eight bytes are cut at once.
            "abcxyzABCXYZ019    \t\n\r\u{b}\u{c}\u{1}\u{1f}\u{7f}!#,-./:@[`{~é"
                .chars()
                .collect(),
        ];
        let mut state: u64 = 3;
        for bits in 0..16 {
            let normalizer =
                BertNormalizer::new(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            for round in 0..3000 {
                let alphabet = &alphabets[round % 2];
                let text: String = (0..round % 43)
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
