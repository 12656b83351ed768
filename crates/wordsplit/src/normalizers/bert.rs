//! HF's `BertNormalizer`, natively ([`BertNormalizer`]): its four steps, each optional, in
//! this order, as HF tokenizers runs them (the Python package's `normalizers/bert.py` is the
//! reference the tests hold it to):
//!
//! 1. `clean_text`: U+0000, U+FFFD and the characters the crate `unicode_categories` 0.1.1
//!    calls "other" (Cc, Cf, Co) are dropped, but tab, newline and carriage return; every
//!    white space character (`char::is_whitespace`) becomes a space;
//! 2. `handle_chinese_chars`: a space each side of a CJK ideograph (HF's blocks);
//! 3. `strip_accents`: HF's NFD (`unicode-normalization-alignments`, Unicode 9.0), then the
//!    crate's nonspacing marks (Mn) dropped;
//! 4. `lowercase`: `char::to_lowercase` of each character.
//!
//! The steps run as one pass over the text. Every character but those NFD may change is its
//! own until step 3, and NFD leaves a starter that does not decompose as it is and reorders
//! nothing across it, so the characters NFD may change wait in a short run that is
//! decomposed when such a starter (or the end) comes, and every other character goes through
//! the steps alone. Text none of whose characters a step changes is not copied; ASCII text
//! is read eight bytes at a time.
//!
//! Its offsets: [`BertNormalizer::alignment`] aligns each character of the result to the text
//! step by step, as HF's `NormalizedString` does (the Python `bert_alignment`). Before BERT's
//! pre-tokenizer, the two run as one pass (`bert_pieces.rs`).

use unicode_normalization_alignments::char::decompose_canonical;
use unicode_normalization_alignments::UnicodeNormalization;

use super::bert_chars::{BertChars, ASCII, CASED, CJK, DECOMPOSES, DROPPED, MARK, STARTS, WHITE};
use super::bert_memo::AloneMemo;
use super::bert_pieces::{piece_classes, Class};
use super::{AlignmentParts, Normalizer};
use crate::error::Error;
use crate::spanners::classes::decode_multibyte;
use crate::spec::NormalizerSpec;

/// What an ASCII byte becomes when `clean_text` drops it.
pub(super) const DROP: u8 = 0xFF;

/// Eight ones, one per byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// A character's alignment: the original characters it comes from (char indices) and
/// whether it is that character unchanged.
type Aligned = (usize, usize, bool);

/// Where the steps put the characters they make of a text: a string, or BERT's pre-tokenizer
/// cutting them into pieces as they come ([`super::bert_pieces`]).
pub(super) trait Sink {
    /// ASCII characters: the text's own or what the steps made of them.
    fn ascii(&mut self, bytes: &[u8]);
    /// A character of the text beyond ASCII that the steps leave as it is: its UTF-8 and
    /// its flags ([`super::bert_chars`]).
    fn kept(&mut self, bytes: &[u8], flags: u8);
    /// A character the steps made, and its flags.
    fn made(&mut self, c: char, flags: u8);

    /// A character of the text (its UTF-8, its flags) with a space put each side (a CJK
    /// ideograph that the other steps leave as it is).
    #[inline(always)]
    fn isolated(&mut self, bytes: &[u8], flags: u8) {
        self.ascii(b" ");
        self.kept(bytes, flags);
        self.ascii(b" ");
    }
}

impl Sink for String {
    #[inline(always)]
    fn ascii(&mut self, bytes: &[u8]) {
        // SAFETY: ASCII bytes are UTF-8.
        self.push_str(unsafe { std::str::from_utf8_unchecked(bytes) });
    }

    #[inline(always)]
    fn kept(&mut self, bytes: &[u8], _flags: u8) {
        // SAFETY: the bytes of one character of a `str`.
        self.push_str(unsafe { std::str::from_utf8_unchecked(bytes) });
    }

    #[inline(always)]
    fn made(&mut self, c: char, _flags: u8) {
        self.push(c);
    }
}

/// HF's `BertNormalizer` (see the module docs).
pub struct BertNormalizer {
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
    /// The flags ([`super::bert_chars`]) of the characters beyond ASCII a step may change.
    changes: u8,
    /// What each ASCII byte becomes: itself, another byte, or [`DROP`].
    ascii: [u8; 128],
    /// [`Self::ascii`] with the class of each byte once normalized ([`super::bert_pieces`]).
    piece_classes: [(u8, Class); 128],
    /// Steps 3 and 4 of each character alone, remembered.
    memo: &'static AloneMemo,
}

impl BertNormalizer {
    /// The normalizer with these steps on. The first one made builds the character table
    /// (a few milliseconds, once per process: a load's cost, not the first encode's).
    pub fn new(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
    ) -> Self {
        BertChars::get();
        let mut changes = 0;
        for (on, flags) in [
            (clean_text, DROPPED | WHITE),
            (handle_chinese_chars, CJK),
            (strip_accents, MARK | DECOMPOSES),
            (lowercase, CASED),
        ] {
            if on {
                changes |= flags;
            }
        }
        let ascii = std::array::from_fn(|b| {
            let (b, flags) = (b as u8, ASCII[b]);
            match () {
                _ if clean_text && flags & DROPPED != 0 => DROP,
                _ if clean_text && flags & WHITE != 0 => b' ',
                _ if lowercase => b.to_ascii_lowercase(),
                _ => b,
            }
        });
        Self {
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
            changes,
            piece_classes: piece_classes(&ascii),
            ascii,
            memo: AloneMemo::get(strip_accents, lowercase),
        }
    }

    /// The normalizer of a [`NormalizerSpec::BertNormalizer`]; None for another stage.
    pub fn of(spec: &NormalizerSpec) -> Option<Self> {
        match *spec {
            NormalizerSpec::BertNormalizer {
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            } => Some(Self::new(
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            )),
            _ => None,
        }
    }

    /// Whether no byte of the eight in `word` (read little-endian from the text) is changed:
    /// all ASCII, none a control character, and no capital when lowercasing.
    #[inline(always)]
    fn plain_word(&self, word: u64) -> bool {
        // (each byte below 0x80, so no sum below carries into the next byte)
        let below_space = word.wrapping_sub(0x20 * ONES) & !word;
        let delete = (word ^ (0x7F * ONES)).wrapping_sub(ONES) & !(word ^ (0x7F * ONES));
        let mut bad = word | below_space | delete;
        if self.lowercase {
            bad |= word.wrapping_add(0x3F * ONES) & !word.wrapping_add(0x25 * ONES);
        }
        bad & HIGH == 0
    }

    /// The byte offset of the first character of `text` a step changes, or None.
    fn first_change(&self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut i = 0;
        while let Some(word) = bytes.get(i..i + 8) {
            if !self.plain_word(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                break;
            }
            i += 8;
        }
        let table = (!text[i..].is_ascii()).then(BertChars::get);
        while i < bytes.len() {
            let byte = bytes[i];
            if byte < 0x80 {
                if self.ascii[usize::from(byte)] != byte {
                    return Some(i);
                }
                i += 1;
                continue;
            }
            let (code, width) = decode_multibyte(bytes, i);
            if table.expect("text beyond ASCII").flags(code) & self.changes != 0 {
                return Some(i);
            }
            i += width;
        }
        None
    }

    /// The normalized text of `text`, or None when it is `text` itself.
    pub fn normalize_changed(&self, text: &str) -> Option<String> {
        let first = self.first_change(text)?;
        let mut out = String::with_capacity(text.len() + text.len() / 8 + 8);
        out.push_str(&text[..first]);
        self.run(&text[first..], &mut out);
        Some(out)
    }

    /// Each ASCII byte normalized, and its class to BERT's pre-tokenizer once normalized.
    pub(super) fn piece_classes(&self) -> &[(u8, Class); 128] {
        &self.piece_classes
    }

    pub(super) fn clean_text(&self) -> bool {
        self.clean_text
    }

    pub(super) fn lowercases(&self) -> bool {
        self.lowercase
    }

    /// The steps on `text`, each character they make given to `out`.
    fn run<S: Sink>(&self, text: &str, out: &mut S) {
        let bytes = text.as_bytes();
        let table = BertChars::get();
        // The characters NFD may change, waiting for the next starter NFD leaves as it is.
        let pending = &mut String::new();
        let mut i = 0;
        while i < bytes.len() {
            if let Some(word) = bytes.get(i..i + 8) {
                if self.plain_word(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                    self.flush(pending, table, out);
                    out.ascii(&bytes[i..i + 8]);
                    i += 8;
                    continue;
                }
            }
            let byte = bytes[i];
            if byte < 0x80 {
                let mapped = self.ascii[usize::from(byte)];
                i += 1;
                if mapped != DROP {
                    self.flush(pending, table, out);
                    out.ascii(&[mapped]);
                }
                continue;
            }
            i += self.beyond_ascii(text, i, table, pending, out);
        }
        self.flush(pending, table, out);
    }

    /// The steps on the characters of `text` from byte `start` (a character's start) up to
    /// its first ASCII character the steps keep that is not alone between characters beyond
    /// ASCII, or its end, given to `out`; returns where it stopped. `pending` (empty, and
    /// left empty) holds the characters NFD may change while they wait for the next starter
    /// NFD leaves as it is.
    pub(super) fn run_beyond_ascii<S: Sink>(
        &self,
        text: &str,
        start: usize,
        out: &mut S,
        pending: &mut String,
    ) -> usize {
        let bytes = text.as_bytes();
        let table = BertChars::get();
        let mut i = start;
        while i < bytes.len() {
            let byte = bytes[i];
            if byte < 0x80 {
                let mapped = self.ascii[usize::from(byte)];
                if mapped != DROP {
                    if bytes.get(i + 1).is_none_or(|&next| next < 0x80) {
                        break;
                    }
                    // One ASCII character between characters beyond ASCII (the space
                    // between words of another script) is taken here: the caller's blocks
                    // would take it a byte at a time.
                    self.flush(pending, table, out);
                    out.ascii(&[mapped]);
                }
                i += 1;
                continue;
            }
            i += self.beyond_ascii(text, i, table, pending, out);
        }
        self.flush(pending, table, out);
        i
    }

    /// The character beyond ASCII at byte `i` of `text` (its start) through the steps: kept
    /// as it is where no step changes it, else stepped; returns its UTF-8 length.
    #[inline(always)]
    fn beyond_ascii<S: Sink>(
        &self,
        text: &str,
        i: usize,
        table: &BertChars,
        pending: &mut String,
        out: &mut S,
    ) -> usize {
        let bytes = text.as_bytes();
        let (code, width) = decode_multibyte(bytes, i);
        let flags = table.flags(code);
        if flags & self.changes == 0 {
            self.flush(pending, table, out);
            out.kept(&bytes[i..i + width], flags);
        } else {
            // SAFETY: `text` is a `str` and `i` the start of one of its characters, so
            // `code` is the scalar value its UTF-8 encodes.
            let c = unsafe { char::from_u32_unchecked(code) };
            self.step(c, flags, pending, table, out);
        }
        width
    }

    /// A character beyond ASCII that some step changes, through the steps.
    fn step<S: Sink>(
        &self,
        c: char,
        flags: u8,
        pending: &mut String,
        table: &BertChars,
        out: &mut S,
    ) {
        if self.clean_text && flags & DROPPED != 0 {
            return;
        }
        if self.clean_text && flags & WHITE != 0 {
            self.flush(pending, table, out);
            out.ascii(b" ");
        } else if self.handle_chinese_chars && flags & CJK != 0 {
            self.flush(pending, table, out);
            if flags & self.changes & !CJK == 0 {
                // (most ideographs: neither accents nor case change them)
                out.isolated(c.encode_utf8(&mut [0; 4]).as_bytes(), flags);
                return;
            }
            out.ascii(b" ");
            self.accents_and_case(c, flags, pending, table, out);
            self.flush(pending, table, out);
            out.ascii(b" ");
        } else {
            self.accents_and_case(c, flags, pending, table, out);
        }
    }

    /// Steps 3 and 4 of a character: kept for NFD if it may change there, else dropped if a
    /// nonspacing mark (stripping accents), else lowercased.
    #[inline]
    fn accents_and_case<S: Sink>(
        &self,
        c: char,
        flags: u8,
        pending: &mut String,
        table: &BertChars,
        out: &mut S,
    ) {
        if self.strip_accents {
            if flags & DECOMPOSES != 0 {
                if flags & STARTS != 0 {
                    // (what waits is decomposed apart, most often alone from the memo)
                    self.flush(pending, table, out);
                }
                pending.push(c);
                return;
            }
            self.flush(pending, table, out);
            if flags & MARK != 0 {
                return;
            }
        }
        self.push_cased(c, flags, table, out);
    }

    /// The characters waiting for NFD, decomposed, without nonspacing marks, lowercased.
    #[inline(always)]
    fn flush<S: Sink>(&self, pending: &mut String, table: &BertChars, out: &mut S) {
        if !pending.is_empty() {
            self.flush_pending(pending, table, out);
        }
    }

    /// [`Self::flush`] of characters that wait. One character alone (most often) is its
    /// canonical decomposition, which the crate's NFD leaves in its order (a test checks
    /// every character); more go through the crate's NFD, which orders their marks.
    #[inline(never)]
    fn flush_pending<S: Sink>(&self, pending: &mut String, table: &BertChars, out: &mut S) {
        let mut each = |c: char| {
            let flags = table.flags(c as u32);
            if flags & MARK == 0 {
                self.push_cased(c, flags, table, out);
            }
        };
        let mut chars = pending.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => match self.memo.alone(c) {
                Some(made) => made.for_each(|d| out.made(d, table.flags(d as u32))),
                None => decompose_canonical(c, each),
            },
            _ => pending.nfd().for_each(|(c, _)| each(c)),
        }
        pending.clear();
    }

    /// Step 4 of a character that step 3 leaves as it is (lowercased from the memo, where
    /// that is the character alone through both steps).
    #[inline(always)]
    fn push_cased<S: Sink>(&self, c: char, flags: u8, table: &BertChars, out: &mut S) {
        if !(self.lowercase && flags & CASED != 0) {
            out.made(c, flags);
        } else if let Some(made) = self.memo.alone(c) {
            made.for_each(|d| out.made(d, table.flags(d as u32)));
        } else {
            for lower in c.to_lowercase() {
                out.made(lower, table.flags(lower as u32));
            }
        }
    }

    /// What the steps make of `text` and each result character's alignment, step by step as
    /// HF's `NormalizedString` carries it: a kept or mapped character keeps its alignment
    /// (and is no longer the same if mapped), a CJK ideograph becomes HF's changes `(' ', 0),
    /// (ideograph, +1), (' ', +1)` (the space takes its place, the ideograph and the space
    /// after it are inserted: all three aligned to it), NFD's
    /// characters are aligned as HF's `transform` aligns its changes, lowercasing's extra
    /// characters to the character they come from.
    pub fn alignment(&self, text: &str) -> (String, Vec<Aligned>) {
        let table = BertChars::get();
        let flags = |c: char| table.flags(c as u32);
        let length = text.chars().count();
        let mut chars: Vec<char> = text.chars().collect();
        let mut base: Vec<Aligned> = (0..length).map(|i| (i, i + 1, true)).collect();
        if self.clean_text {
            (chars, base) = chars
                .into_iter()
                .zip(base)
                .filter(|&(c, _)| flags(c) & DROPPED == 0)
                .map(|(c, (start, end, same))| match flags(c) & WHITE {
                    0 => (c, (start, end, same)),
                    _ => (' ', (start, end, same && c == ' ')),
                })
                .unzip();
        }
        if self.handle_chinese_chars && chars.iter().any(|&c| flags(c) & CJK != 0) {
            let changes: Vec<(char, isize)> = chars
                .iter()
                .flat_map(|&c| match flags(c) & CJK {
                    0 => vec![(c, 0)],
                    _ => vec![(' ', 0), (c, 1), (' ', 1)],
                })
                .collect();
            base = apply_changes(&base, &chars, &changes, length);
            chars = changes.into_iter().map(|(c, _)| c).collect();
        }
        if self.strip_accents {
            let changes: Vec<(char, isize)> = chars.iter().collect::<String>().nfd().collect();
            base = apply_changes(&base, &chars, &changes, length);
            (chars, base) = changes
                .into_iter()
                .map(|(c, _)| c)
                .zip(base)
                .filter(|&(c, _)| flags(c) & MARK == 0)
                .unzip();
        }
        if self.lowercase {
            let mut lowered = Vec::with_capacity(base.len());
            let mut text = String::with_capacity(chars.len());
            for (&c, &(start, end, same)) in chars.iter().zip(&base) {
                let before = text.len();
                text.extend(c.to_lowercase());
                let mut added = text[before..].chars();
                let unchanged = added.next() == Some(c) && added.next().is_none();
                lowered.push((start, end, same && unchanged));
                let extra = text[before..].chars().count() - 1;
                lowered.extend(std::iter::repeat_n((start, end, false), extra));
            }
            return (text, lowered);
        }
        (chars.into_iter().collect(), base)
    }
}

/// HF's `NormalizedString::transform` on `text`, whose characters `alignment` aligns: the
/// alignment of the text `changes` make of it. A character that replaces one (change 0 or
/// -n, which also removes the n after it) takes the alignment of the character it replaces;
/// an inserted one (+1) that of the character before it (the empty start at the very start);
/// past the end of `text` (which HF never reaches) the empty end, `length`.
fn apply_changes(
    alignment: &[Aligned],
    text: &[char],
    changes: &[(char, isize)],
    length: usize,
) -> Vec<Aligned> {
    let mut out = Vec::with_capacity(changes.len());
    let mut offset = 0;
    let count = alignment.len();
    for &(c, change) in changes {
        if change > 0 {
            out.push(match offset {
                0 => (0, 0, false),
                _ => {
                    let (start, end, _) = alignment[offset.min(count) - 1];
                    (start, end, false)
                }
            });
        } else {
            out.push(match alignment.get(offset) {
                Some(&(start, end, same)) => (start, end, same && change == 0 && text[offset] == c),
                None => (length, length, false),
            });
            offset += 1 + change.unsigned_abs();
        }
    }
    out
}

impl Normalizer for BertNormalizer {
    fn name(&self) -> &str {
        "BertNormalizer"
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        Ok(self
            .normalize_changed(text)
            .unwrap_or_else(|| text.to_owned()))
    }

    fn normalize_if_changed(&self, text: &str) -> Result<Option<String>, Error> {
        Ok(self.normalize_changed(text))
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        if self.first_change(text).is_none() {
            return Ok(None);
        }
        let (normalized, head) = self.alignment(text);
        Ok(Some(AlignmentParts {
            normalized,
            head,
            tail: 0,
        }))
    }

    fn is_native(&self) -> bool {
        true
    }

    fn bert(&self) -> Option<&BertNormalizer> {
        Some(self)
    }
}

#[cfg(test)]
#[path = "bert_tests.rs"]
mod tests;
