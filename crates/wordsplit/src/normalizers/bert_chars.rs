//! The character classes of BERT's normalizer and pre-tokenizer as HF tokenizers has them, one
//! byte of flags per code point ([`BertChars`]): the classes of the crate `unicode_categories`
//! 0.1.1 ([`super::hf_char_classes`]), Rust's `char::is_whitespace` and `char::to_lowercase`,
//! HF's CJK blocks, and what HF's NFD (`unicode-normalization-alignments`, Unicode 9.0) does.

use std::sync::OnceLock;

use unicode_normalization_alignments::char::{canonical_combining_class, decompose_canonical};

use super::hf_char_classes::{NONSPACING_MARK_RANGES, OTHER_RANGES, PUNCTUATION_RANGES};
use crate::spanners::classes::decode_multibyte;

/// Dropped by `clean_text`: U+0000, U+FFFD and the crate's "other" (Cc, Cf, Co), but tab,
/// newline and carriage return (which are white space).
pub(crate) const DROPPED: u8 = 1;
/// `char::is_whitespace` (and so tab, newline, carriage return): a space after `clean_text`,
/// and what BERT's pre-tokenizer removes.
pub(crate) const WHITE: u8 = 2;
/// In one of the blocks HF's `is_chinese_char` lists: a space is put each side.
pub(crate) const CJK: u8 = 4;
/// A nonspacing mark (Mn) of the crate: `strip_accents` drops it after NFD.
pub(crate) const MARK: u8 = 8;
/// Not left as it is by HF's NFD: it decomposes, or is no starter (canonical combining class
/// other than 0), so that NFD may reorder it.
pub(crate) const DECOMPOSES: u8 = 16;
/// `char::to_lowercase` changes it.
pub(crate) const CASED: u8 = 32;
/// BERT's punctuation: ASCII punctuation or the crate's Pc Pd Ps Pe Pi Pf Po.
pub(crate) const PUNCT: u8 = 64;
/// With [`DECOMPOSES`]: a starter whose canonical decomposition starts with a starter
/// (canonical combining class 0 both), across which NFD reorders nothing, so that what waits
/// for NFD before it is decomposed apart.
pub(crate) const STARTS: u8 = 128;

/// HF's `is_chinese_char` blocks (the Python package's `CJK_RANGES`).
pub const CJK_RANGES: [(u32, u32); 8] = [
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
];

/// Code points past these have neither a decomposition nor a lowercase nor a combining class
/// (a test checks every one), so the build asks the crates about these alone.
const ASKED: [(u32, u32); 2] = [(0, 0x1_FFFF), (0x2F800, 0x2FA1F)];

const BLOCK_BITS: u32 = 8;
const BLOCK_LEN: usize = 1 << BLOCK_BITS;
/// The blocks the index has room for: a power of two, so that a mask keeps every read in
/// bounds (those past U+10FFFF, which no code point reaches, name the first block).
const N_BLOCKS: usize = 0x200000 >> BLOCK_BITS;

/// The flags of every code point, as two levels: each block of 256 code points names one of
/// the distinct blocks (about 300 KB of them), so that a lookup is two reads.
pub struct BertChars {
    index: Box<[u16; N_BLOCKS]>,
    blocks: Box<[u8]>,
}

/// The flags of ASCII character `b` (also in the table; kept apart for the scanners' loops).
const fn ascii_flags(b: u8) -> u8 {
    let mut flags = 0;
    if b < 0x20 || b == 0x7F {
        flags |= if matches!(b, b'\t' | b'\n' | b'\r') {
            WHITE
        } else {
            DROPPED
        };
    }
    if matches!(b, b' ' | 0x0B | 0x0C) {
        flags |= WHITE;
    }
    if b.is_ascii_punctuation() {
        flags |= PUNCT;
    }
    if b.is_ascii_uppercase() {
        flags |= CASED;
    }
    flags
}

/// [`ascii_flags`] of every ASCII character.
pub(crate) const ASCII: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = ascii_flags(b as u8);
        b += 1;
    }
    table
};

impl BertChars {
    /// The table, built on first use (a few milliseconds) and shared by every BERT stage.
    pub fn get() -> &'static BertChars {
        static TABLE: OnceLock<BertChars> = OnceLock::new();
        TABLE.get_or_init(BertChars::build)
    }

    fn build() -> BertChars {
        let mut flat = vec![0u8; 0x110000];
        let mut mark = |ranges: &[(u32, u32)], flag: u8| {
            for &(first, last) in ranges {
                flat[first as usize..=last as usize]
                    .iter_mut()
                    .for_each(|f| *f |= flag);
            }
        };
        mark(OTHER_RANGES, DROPPED);
        mark(&[(0, 0), (0xFFFD, 0xFFFD)], DROPPED);
        mark(PUNCTUATION_RANGES, PUNCT);
        mark(NONSPACING_MARK_RANGES, MARK);
        mark(&CJK_RANGES, CJK);
        for (b, flags) in ASCII.iter().enumerate() {
            flat[b] = *flags;
        }
        for &(first, last) in &ASKED {
            for c in (first..=last).filter_map(char::from_u32) {
                flat[c as usize] |= asked_flags(c);
            }
        }
        let mut index = Box::new([0u16; N_BLOCKS]);
        let mut blocks: Vec<u8> = Vec::new();
        let mut seen: rustc_hash::FxHashMap<&[u8], u16> = rustc_hash::FxHashMap::default();
        for (b, chunk) in flat.chunks(BLOCK_LEN).enumerate() {
            let next = seen.len();
            index[b] = *seen.entry(chunk).or_insert_with(|| {
                blocks.extend_from_slice(chunk);
                u16::try_from(next).expect("fewer than 65,536 distinct blocks")
            });
        }
        BertChars {
            index,
            blocks: blocks.into_boxed_slice(),
        }
    }

    /// The flags of code point `cp` (at most U+10FFFF).
    #[inline(always)]
    pub fn flags(&self, cp: u32) -> u8 {
        let block = self.index[(cp >> BLOCK_BITS) as usize & (N_BLOCKS - 1)] as usize;
        self.blocks[(block << BLOCK_BITS) | (cp as usize & (BLOCK_LEN - 1))]
    }

    /// The flags and UTF-8 length of the character at byte `i` of `b`, the bytes of a `str`
    /// with `i` on a character boundary.
    #[inline(always)]
    pub fn at(&self, b: &[u8], i: usize) -> (u8, usize) {
        match b[i] {
            lead @ 0..=0x7F => (ASCII[lead as usize], 1),
            _ => {
                let (cp, len) = decode_multibyte(b, i);
                (self.flags(cp), len)
            }
        }
    }
}

/// The flags of `c` that come from asking the crates: white space, NFD and lowercase.
fn asked_flags(c: char) -> u8 {
    let mut flags = 0;
    if c.is_whitespace() {
        flags |= WHITE;
    }
    let (mut decomposed, mut first) = (false, None);
    decompose_canonical(c, |d| {
        decomposed |= d != c;
        first.get_or_insert(d);
    });
    if decomposed || canonical_combining_class(c) != 0 {
        flags |= DECOMPOSES;
        if canonical_combining_class(c) == 0
            && first.is_some_and(|d| canonical_combining_class(d) == 0)
        {
            flags |= STARTS;
        }
    }
    let mut lower = c.to_lowercase();
    if !(lower.len() == 1 && lower.next() == Some(c)) {
        flags |= CASED;
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_points::contains;

    #[test]
    fn the_table_holds_every_code_points_flags() {
        let table = BertChars::get();
        let mut cjk = CJK_RANGES.to_vec();
        cjk.sort_unstable();
        for cp in 0..0x110000u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let kept = matches!(c, '\t' | '\n' | '\r');
            let dropped = cp == 0 || cp == 0xFFFD || (!kept && contains(OTHER_RANGES, cp));
            let punct = c.is_ascii_punctuation() || contains(PUNCTUATION_RANGES, cp);
            let mut want = asked_flags(c);
            for (yes, flag) in [
                (dropped, DROPPED),
                (punct, PUNCT),
                (contains(NONSPACING_MARK_RANGES, cp), MARK),
                (contains(&cjk, cp), CJK),
            ] {
                if yes {
                    want |= flag;
                }
            }
            assert_eq!(table.flags(cp), want, "{c:?}");
        }
        assert_eq!(table.flags('é' as u32), DECOMPOSES | STARTS);
        assert_eq!(table.flags('É' as u32), DECOMPOSES | CASED | STARTS);
        assert_eq!(table.flags('\u{301}' as u32), DECOMPOSES | MARK);
        assert_eq!(table.flags('\u{3000}' as u32), WHITE);
        assert_eq!(table.flags('、' as u32), PUNCT);
        assert_eq!(table.flags('\u{ad}' as u32), DROPPED);
        // U+0344 (class 230) decomposes to U+0308 U+0301; U+0F73 (class 0) to U+0F71 (129)
        // and U+0F72: neither starts with a starter.
        assert_eq!(table.flags(0x344) & STARTS, 0);
        assert_eq!(table.flags(0xF73) & STARTS, 0);
    }

    #[test]
    fn lowercase_is_the_unicode_hf_lowercases_with() {
        // tokenizers 0.23.3 was built by a Rust of Unicode 17.0: the mappings of 15.0-17.0
        // (the Python package's `_NEW_LOWERCASE` holds them) must be this Rust's too.
        for (upper, lower) in [('\u{1C89}', '\u{1C8A}'), ('\u{A7DC}', '\u{19B}')] {
            assert_eq!(upper.to_lowercase().collect::<String>(), lower.to_string());
        }
        assert_eq!(
            '\u{10D50}'.to_lowercase().next(),
            char::from_u32(0x10D70),
            "Garay"
        );
    }
}
