//! BERT's normalizer and pre-tokenizer in one pass ([`BertNormalizer::normalized_pieces`]):
//! the text normalized and cut into `BertPreTokenizer`'s pieces (white space removed, each
//! punctuation character a piece of its own) as it is read, with no normalized copy of the
//! whole text made first.
//!
//! ASCII characters are mapped and classed by one table, or sixteen at a time where they are
//! neither control characters nor beyond ASCII ([`super::bert_blocks`]). A run of other characters goes through the
//! normalizer's own pass whole (so NFD sees every mark of a run together, the ASCII characters
//! `clean_text` drops included), which hands each character it makes to the cut with its
//! class: a character's class may change (lowercase, NFD: U+037E becomes `;`).

use super::bert::{BertNormalizer, Sink, DROP};
use super::bert_blocks::{ascii_prefix, classify, classify_prefix, Classed, BLOCK};
use super::bert_chars::{ASCII, PUNCT, WHITE};

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

/// The pieces being cut: the text they make so far, and whether a word is open in it.
struct Cutter<'a> {
    kept: Vec<u8>,
    ends: &'a mut Vec<usize>,
    in_word: bool,
}

impl Cutter<'_> {
    /// Appends one character's bytes (one to four) to the text, with a copy of fixed size.
    #[inline(always)]
    fn append(&mut self, bytes: &[u8]) {
        self.kept.reserve(4);
        let len = self.kept.len();
        // SAFETY: room for four bytes at `len` is reserved; each copy reads the `bytes` it
        // names.
        unsafe {
            let at = self.kept.as_mut_ptr().add(len);
            match bytes.len() {
                1 => *at = bytes[0],
                2 => std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, 2),
                3 => std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, 3),
                _ => std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, 4),
            }
            self.kept.set_len(len + bytes.len().min(4));
        }
    }

    #[inline(always)]
    fn word(&mut self, bytes: &[u8]) {
        self.append(bytes);
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
        self.append(bytes);
        self.ends.push(self.kept.len());
    }

    /// The first `size` bytes of a classed block of ASCII text (all sixteen, or a prefix's:
    /// its padding has no boundary), cut by their classes without a branch per piece: each
    /// stretch of word bytes is written with one sixteen-byte copy (what is past it is
    /// overwritten next), each end is written and counted only when it is one, and a
    /// punctuation byte is written and counted only when it is one.
    #[inline(always)]
    fn block(&mut self, classed: &Classed, size: usize) {
        // A block adds at most sixteen bytes, and two ends per byte.
        self.kept.reserve(2 * BLOCK);
        self.ends.reserve(2 * BLOCK);
        let (mut len, mut count) = (self.kept.len(), self.ends.len());
        let (kept, ends) = (self.kept.as_mut_ptr(), self.ends.as_mut_ptr());
        let mapped = classed.mapped.as_ptr();
        let mut in_word = usize::from(self.in_word);
        let mut boundaries = classed.white | classed.punct;
        let mut position = 0;
        loop {
            let next = if boundaries == 0 {
                size
            } else {
                boundaries.trailing_zeros() as usize
            };
            // SAFETY: `position <= next <= size <= BLOCK`, so the copy reads `mapped` within its
            // 2 * BLOCK bytes; `len` is at most BLOCK past the length the reserve was made
            // for, so the copy's sixteen bytes and the one below are within the capacity, as
            // are the two ends per byte.
            unsafe {
                std::ptr::copy_nonoverlapping(mapped.add(position), kept.add(len), BLOCK);
                len += next - position;
                in_word |= usize::from(next > position);
                if next == size {
                    break;
                }
                let punct = (classed.punct >> next & 1) as usize;
                *ends.add(count) = len;
                count += in_word;
                *kept.add(len) = *mapped.add(next);
                len += punct;
                *ends.add(count) = len;
                count += punct;
            }
            in_word = 0;
            boundaries &= boundaries - 1;
            position = next + 1;
        }
        // SAFETY: the bytes and ends below these lengths are written.
        unsafe {
            self.kept.set_len(len);
            self.ends.set_len(count);
        }
        self.in_word = in_word != 0;
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
        let mut pending = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if let Some(block) = bytes.get(i..i + BLOCK) {
                let block = block.try_into().expect("a block's bytes");
                if let Some(classed) = classify(block, self.clean_text(), self.lowercases()) {
                    cut.block(&classed, BLOCK);
                    i += BLOCK;
                    continue;
                }
                // The ASCII text before a character beyond ASCII (most of the text between
                // accented letters, or between the words of other scripts): at once.
                let size = ascii_prefix(block);
                if (2..BLOCK).contains(&size) {
                    let classed =
                        classify_prefix(block, size, self.clean_text(), self.lowercases());
                    if let Some(classed) = classed {
                        cut.block(&classed, size);
                        i += size;
                        continue;
                    }
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
            i = self.run_beyond_ascii(text, i, &mut cut, &mut pending);
        }
        cut.close();
        // SAFETY: `kept` is made of whole characters of `text` and of the normalizer's output
        // (ASCII bytes mapped to ASCII bytes, other runs whole `str`s), all UTF-8.
        unsafe { String::from_utf8_unchecked(cut.kept) }
    }
}

/// The pieces cut as the normalizer makes the characters of a run (see the module docs).
impl Sink for Cutter<'_> {
    #[inline]
    fn ascii(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.kept(std::slice::from_ref(byte), ASCII[usize::from(*byte)]);
        }
    }

    #[inline(always)]
    fn kept(&mut self, bytes: &[u8], flags: u8) {
        if flags & WHITE != 0 {
            self.close();
        } else if flags & PUNCT != 0 {
            self.punct(bytes);
        } else {
            self.word(bytes);
        }
    }

    /// The spaces each side end the pieces around it: it is a piece of its own (or none,
    /// were it white space).
    #[inline(always)]
    fn isolated(&mut self, bytes: &[u8], flags: u8) {
        if flags & WHITE != 0 {
            self.close();
        } else {
            self.punct(bytes);
        }
    }

    #[inline(always)]
    fn made(&mut self, c: char, flags: u8) {
        self.kept(c.encode_utf8(&mut [0; 4]).as_bytes(), flags);
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
        let alphabets: [Vec<char>; 3] = [
            "aZé É\u{301}\u{323}ß中\u{f900}한\t\n\r\u{b}\u{85}\u{a0}\u{3000}\0\u{1}\u{7f}\u{ad}\u{fffd}\u{37e}\u{387}\u{1fef}\u{1d165}\u{1d16d}Ｆx!,.-'`…、"
                .chars()
                .collect(),
            // Mostly ASCII, so that blocks of sixteen bytes are cut at once.
            "abcxyzABCXYZ019    \t\n\r\u{b}\u{c}\u{1}\u{1f}\u{7f}!#,-./:@[`{~é"
                .chars()
                .collect(),
            "abcdefghABCXYZ0189      \t\n\r!#,-./:@[`{~".chars().collect(),
        ];
        let mut state: u64 = 3;
        for bits in 0..16 {
            let normalizer =
                BertNormalizer::new(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            for round in 0..3000 {
                let alphabet = &alphabets[round % 3];
                let text: String = (0..round % 71)
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
    fn ascii_text_before_and_between_characters_beyond_ascii() {
        let normalizer = BertNormalizer::new(true, true, true, true);
        for text in [
            "Declaração Universal di Dirêtu, e Hómé",
            "Все люди рождаются свободными и равными.",
            "ab 中文 cd\u{1}é xyzxyzxyzxyzxyzé",
        ] {
            let mut ends = Vec::new();
            let kept = normalizer.normalized_pieces(text, &mut ends);
            assert_eq!((kept, ends), in_two_passes(&normalizer, text), "{text:?}");
        }
        let mut ends = Vec::new();
        let kept = normalizer.normalized_pieces("Ação é, мир мир", &mut ends);
        assert_eq!(kept, "acaoe,мирмир");
        assert_eq!(ends, [4, 5, 6, 12, 18]);
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
