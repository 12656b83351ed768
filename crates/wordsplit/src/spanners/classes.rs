//! Character classes for the hand-written scanners: one byte of flags per code point.
//!
//! The split patterns only ask about a handful of Unicode 16.0 properties: the letter
//! subcategories (`Lu Ll Lt Lm Lo`, whose union is `\p{L}`), `\p{M}`, `\p{N}` and `\s`
//! (`White_Space`). These are pairwise disjoint (no white-space code point is a letter,
//! mark or number), so each code point gets exactly one of the eight flags below, or none
//! ("other": punctuation, symbols, controls, unassigned...). Pattern classes are then bit
//! masks: `\p{L}` is [`LETTER`], o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` is [`UPPERISH`].
//!
//! Lookup: ASCII through a 128-byte table built at compile time; everything else through a
//! two-level table (the code point's 256-aligned block -> one of the 141 distinct blocks),
//! built once from [`crate::unicode_tables`] on first use (under 1 ms). That is 40 KB in
//! all (4,352-byte index + 141 x 256-byte blocks), and a non-ASCII lookup is two dependent
//! loads, where a binary search over the 2,401 merged class ranges takes a dozen steps.

use std::sync::OnceLock;

use crate::unicode_tables;

/// `\p{Lu}`.
pub const LU: u8 = 1 << 0;
/// `\p{Ll}`.
pub const LL: u8 = 1 << 1;
/// `\p{Lt}`.
pub const LT: u8 = 1 << 2;
/// `\p{Lm}`.
pub const LM: u8 = 1 << 3;
/// `\p{Lo}`.
pub const LO: u8 = 1 << 4;
/// `\p{M}`.
pub const MARK: u8 = 1 << 5;
/// `\p{N}`.
pub const NUMBER: u8 = 1 << 6;
/// `\s`: the 25 code points of `White_Space`.
pub const WS: u8 = 1 << 7;

/// `\p{L}`.
pub const LETTER: u8 = LU | LL | LT | LM | LO;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub const UPPERISH: u8 = LU | LT | LM | LO | MARK;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub const LOWERISH: u8 = LL | LM | LO | MARK;

const BLOCK_BITS: u32 = 8;
const BLOCK_LEN: usize = 1 << BLOCK_BITS;
/// The index covers every 21-bit number, not only code points (to 0x10FFFF): a code point
/// decoded from four bytes is below 2^21, so its block is found without a bounds check.
const N_BLOCKS: usize = 1 << (21 - BLOCK_BITS);
/// At most 256 distinct blocks (a block number is a byte): the blocks are stored in a table
/// of all 256, so a block's entry is read without a bounds check.
const MAX_BLOCKS: usize = 256;

/// Flags of the ASCII code points, the fast path of every scanner.
pub static ASCII: [u8; 128] = ascii_table();

const fn ascii_table() -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        t[c] = match c as u8 {
            b'A'..=b'Z' => LU,
            b'a'..=b'z' => LL,
            b'0'..=b'9' => NUMBER,
            // \t \n \v \f \r and space; U+001C..U+001F are not White_Space.
            0x09..=0x0D | b' ' => WS,
            _ => 0,
        };
        c += 1;
    }
    t
}

/// Flags of [`FAST`], the per-byte table of the scanners' ASCII fast paths: an ASCII
/// letter.
pub const F_ALPHA: u8 = 1;
/// An ASCII P character (`[^\r\n\p{L}\p{N}]`) other than the space and the apostrophe.
pub const F_PREFIX: u8 = 2;
/// The space (P, and the optional space of rule 4).
pub const F_SPACE: u8 = 4;
/// An ASCII O character (`[^\s\p{L}\p{N}]`) other than the apostrophe.
pub const F_PUNCT: u8 = 8;
/// The apostrophe (O and P, but it may start a contraction).
pub const F_APOSTROPHE: u8 = 16;
/// Any ASCII byte.
pub const F_ASCII: u8 = 32;

/// Per byte value, the flags above (0 for the bytes of non-ASCII characters). One load
/// answers what a chain of compares would (letter? prefix? punctuation?), and indexing it
/// by a `u8` needs no bounds check.
pub static FAST: [u8; 256] = fast_table();

const fn fast_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 128 {
        let class = ASCII[c];
        t[c] = F_ASCII
            | match c as u8 {
                b'\'' => F_APOSTROPHE,
                b' ' => F_SPACE,
                b'\r' | b'\n' => 0,
                _ if class & LETTER != 0 => F_ALPHA,
                _ if class & NUMBER != 0 => 0,
                _ if class & WS != 0 => F_PREFIX,
                _ => F_PREFIX | F_PUNCT,
            };
        c += 1;
    }
    t
}

/// The two-level code point -> flags table.
pub struct CharTable {
    /// Block number of each 256-code-point block of the code space.
    index: Box<[u8; N_BLOCKS]>,
    /// The distinct blocks, concatenated (then zeros to [`MAX_BLOCKS`] blocks).
    blocks: Box<[u8; MAX_BLOCKS * BLOCK_LEN]>,
}

impl CharTable {
    /// The table, built on first use (under a millisecond) and shared by every scanner.
    pub fn get() -> &'static CharTable {
        static TABLE: OnceLock<CharTable> = OnceLock::new();
        TABLE.get_or_init(CharTable::build)
    }

    fn build() -> CharTable {
        let classes: [(&[(u32, u32)], u8); 8] = [
            (unicode_tables::LU, LU),
            (unicode_tables::LL, LL),
            (unicode_tables::LT, LT),
            (unicode_tables::LM, LM),
            (unicode_tables::LO, LO),
            (unicode_tables::M, MARK),
            (unicode_tables::N, NUMBER),
            (unicode_tables::WHITE_SPACE, WS),
        ];
        // Flat table first (1.1 MB, dropped at the end of this function), then dedupe.
        let mut flat = vec![0u8; 0x110000];
        for (ranges, flag) in classes {
            for &(first, last) in ranges {
                for f in &mut flat[first as usize..=last as usize] {
                    *f |= flag;
                }
            }
        }
        let mut index = Box::new([0u8; N_BLOCKS]);
        let mut blocks: Vec<u8> = Vec::new();
        // Built on a process's first encode, so kept cheap: Fx hashing, and a block equal to
        // the one before it (runs of unassigned code points, of CJK ideographs) not hashed at
        // all.
        let mut seen: rustc_hash::FxHashMap<&[u8], u8> = rustc_hash::FxHashMap::default();
        let mut before: Option<(&[u8], u8)> = None;
        // Past 0x10FFFF (no code point) the flags are those of the first block.
        for (b, chunk) in flat.chunks(BLOCK_LEN).enumerate() {
            let id = match before {
                Some((previous, id)) if previous == chunk => id,
                _ => {
                    let next = seen.len();
                    *seen.entry(chunk).or_insert_with(|| {
                        blocks.extend_from_slice(chunk);
                        u8::try_from(next).expect("more than 256 distinct blocks")
                    })
                }
            };
            before = Some((chunk, id));
            index[b] = id;
        }
        blocks.resize(MAX_BLOCKS * BLOCK_LEN, 0);
        CharTable {
            index,
            blocks: blocks
                .into_boxed_slice()
                .try_into()
                .expect("the blocks were resized to MAX_BLOCKS"),
        }
    }

    /// Flags of code point `cp` (`cp` <= 0x10FFFF). The masks only let the compiler see
    /// both reads are in bounds.
    #[inline(always)]
    pub fn class_of(&self, cp: u32) -> u8 {
        let block = self.index[(cp >> BLOCK_BITS) as usize & (N_BLOCKS - 1)] as usize;
        self.blocks[(block << BLOCK_BITS) | (cp as usize & (BLOCK_LEN - 1))]
    }

    /// Flags and UTF-8 length of the character starting at byte `i` of `b`, which must be
    /// the bytes of a `str` with `i` on a character boundary and `i < b.len()`.
    #[inline(always)]
    pub fn at(&self, b: &[u8], i: usize) -> (u8, usize) {
        let b0 = b[i];
        if b0 < 0x80 {
            return (ASCII[b0 as usize], 1);
        }
        let (cp, len) = decode_multibyte(b, i);
        (self.class_of(cp), len)
    }

    /// Like [`Self::run`], but stops after at most `max` characters (`\p{N}{1,3}`).
    #[inline(always)]
    pub fn run_at_most(&self, b: &[u8], mut i: usize, mask: u8, max: usize) -> usize {
        for _ in 0..max {
            if i == b.len() {
                break;
            }
            let (class, len) = self.at(b, i);
            if class & mask == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// The end of the run of characters whose flags intersect `mask`, starting at byte `i`
    /// (returns `i` when the first character is not in the run, or `i == b.len()`).
    #[inline(always)]
    pub fn run(&self, b: &[u8], mut i: usize, mask: u8) -> usize {
        while i < b.len() {
            let b0 = b[i];
            if b0 < 0x80 {
                if ASCII[b0 as usize] & mask == 0 {
                    break;
                }
                i += 1;
            } else {
                let (cp, len) = decode_multibyte(b, i);
                if self.class_of(cp) & mask == 0 {
                    break;
                }
                i += len;
            }
        }
        i
    }

    /// Like [`CharTable::run`] for the complement: the end of the run of characters whose
    /// flags do not intersect `mask` (e.g. `[^\s\p{L}\p{N}]+`).
    #[inline(always)]
    pub fn run_not(&self, b: &[u8], mut i: usize, mask: u8) -> usize {
        while i < b.len() {
            let b0 = b[i];
            if b0 < 0x80 {
                if ASCII[b0 as usize] & mask != 0 {
                    break;
                }
                i += 1;
            } else {
                let (cp, len) = decode_multibyte(b, i);
                if self.class_of(cp) & mask != 0 {
                    break;
                }
                i += len;
            }
        }
        i
    }
}

/// The end of the run of ASCII letters (`[A-Za-z]`) starting at `i` (`i` itself if `b[i]`
/// is not one).
#[inline(always)]
pub fn ascii_letters_end(b: &[u8], i: usize) -> usize {
    ascii_run_end(b, i, 0x20)
}

/// The end of the run of ASCII lowercase letters (`[a-z]`) starting at `i`.
#[inline(always)]
pub fn ascii_lower_end(b: &[u8], i: usize) -> usize {
    ascii_run_end(b, i, 0)
}

/// The end of the run of bytes `x` with `x | case` in `a..=z`, starting at `i`.
///
/// Looks at 8 bytes at a time (SWAR): a word then ends without a data-dependent loop exit
/// per letter, which removes most of the branch mispredictions of a byte loop.
#[inline(always)]
fn ascii_run_end(b: &[u8], mut i: usize, case: u8) -> usize {
    const LO7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HI: u64 = 0x8080_8080_8080_8080;
    let case_mask = u64::from_ne_bytes([case; 8]);
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap());
        // Per byte, with v = (x | case) & 0x7F (no carries between bytes: v + 0x1F <= 0x9E):
        // v >= 'a' <=> bit 7 of v + 0x1F; v <= 'z' <=> bit 7 of v + 0x05 clear; and x < 0x80.
        let v = (x | case_mask) & LO7;
        let in_run = (v + 0x1F1F_1F1F_1F1F_1F1F) & !(v + 0x0505_0505_0505_0505) & !x & HI;
        let other = !in_run & HI;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && (b[i] | case).is_ascii_lowercase() {
        i += 1;
    }
    i
}

/// Code point and length of the multi-byte UTF-8 sequence at `b[i..]` (`b[i] >= 0x80`).
/// `b` comes from a `str`, so the sequence is valid and complete; only the lead byte
/// decides the length.
#[inline(always)]
pub fn decode_multibyte(b: &[u8], i: usize) -> (u32, usize) {
    let b0 = b[i] as u32;
    if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (
            ((b0 & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F),
            3,
        )
    } else {
        (
            ((b0 & 0x07) << 18)
                | ((b[i + 1] as u32 & 0x3F) << 12)
                | ((b[i + 2] as u32 & 0x3F) << 6)
                | (b[i + 3] as u32 & 0x3F),
            4,
        )
    }
}

/// The end of the contraction `'s 't 're 've 'm 'll 'd` starting at `b[i]` (which must be
/// an apostrophe), or `None`. With `ignore_case`, as `(?i:...)` under Unicode simple case
/// folding: ASCII letters in either case, and U+017F LATIN SMALL LETTER LONG S for `s`
/// (the only non-ASCII code point whose simple case folding lands on s, t, r, e, v, m, l
/// or d; U+212A KELVIN SIGN folds to k, which no contraction uses).
#[inline]
pub fn contraction(b: &[u8], i: usize, ignore_case: bool) -> Option<usize> {
    debug_assert_eq!(b[i], b'\'');
    let fold = |c: u8| if ignore_case { c | 0x20 } else { c };
    // `c | 0x20` maps A-Z to a-z and leaves a-z alone; it also maps some punctuation
    // onto other punctuation, never onto a letter, and only letters are compared below.
    let c1 = fold(*b.get(i + 1)?);
    match c1 {
        b's' | b'd' | b'm' | b't' => return Some(i + 2),
        _ => {}
    }
    if ignore_case && b[i + 1] == 0xC5 && b.get(i + 2) == Some(&0xBF) {
        return Some(i + 3); // 'ſ
    }
    let c2 = fold(*b.get(i + 2)?);
    match (c1, c2) {
        (b'l', b'l') | (b'v', b'e') | (b'r', b'e') => Some(i + 3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_class(cp: u32) -> u8 {
        let has = |r: &[(u32, u32)]| r.iter().any(|&(a, b)| a <= cp && cp <= b);
        let mut f = 0;
        for (r, flag) in [
            (unicode_tables::LU, LU),
            (unicode_tables::LL, LL),
            (unicode_tables::LT, LT),
            (unicode_tables::LM, LM),
            (unicode_tables::LO, LO),
            (unicode_tables::M, MARK),
            (unicode_tables::N, NUMBER),
            (unicode_tables::WHITE_SPACE, WS),
        ] {
            if has(r) {
                f |= flag;
            }
        }
        f
    }

    #[test]
    fn table_matches_ranges_at_every_range_boundary() {
        let t = CharTable::get();
        // The first 0x3000 code points, and each range boundary and its neighbours (all
        // 1.1M code points are slow in debug builds with the linear `slow_class`).
        let mut points: Vec<u32> = (0..0x3000).collect();
        for r in [
            unicode_tables::L,
            unicode_tables::M,
            unicode_tables::N,
            unicode_tables::WHITE_SPACE,
        ] {
            for &(a, b) in r {
                for cp in [a.saturating_sub(1), a, a + 1, b.saturating_sub(1), b, b + 1] {
                    points.push(cp.min(0x10FFFF));
                }
            }
        }
        for cp in points {
            assert_eq!(t.class_of(cp), slow_class(cp), "U+{cp:04X}");
        }
    }

    #[test]
    fn classes_are_disjoint_and_letters_are_the_union() {
        let t = CharTable::get();
        for cp in 0..0x110000u32 {
            let f = t.class_of(cp);
            assert!(f.count_ones() <= 1, "U+{cp:04X}");
        }
        let letters: u64 = unicode_tables::L
            .iter()
            .map(|&(a, b)| (b - a + 1) as u64)
            .sum();
        let counted = (0..0x110000u32)
            .filter(|&cp| t.class_of(cp) & LETTER != 0)
            .count() as u64;
        assert_eq!(letters, counted);
        let ws: Vec<u32> = (0..0x110000u32)
            .filter(|&cp| t.class_of(cp) & WS != 0)
            .collect();
        assert_eq!(ws.len(), 25);
        for cp in [0x1C, 0x1F, 0x200B, 0xFEFF, 0x180E] {
            assert_eq!(t.class_of(cp) & WS, 0, "U+{cp:04X} is not \\s");
        }
        for (cp, &f) in ASCII.iter().enumerate() {
            assert_eq!(f, t.class_of(cp as u32));
        }
    }

    #[test]
    fn ascii_letter_runs() {
        for text in [
            "",
            "a",
            "abc",
            "abcdefgh",
            "abcdefghi",
            "Hello, world",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz{",
            "xyz@[`{é",
            "abcdefg\u{e9}",
        ] {
            let b = text.as_bytes();
            for start in 0..=b.len() {
                let mut want = start;
                while want < b.len() && b[want].is_ascii_alphabetic() {
                    want += 1;
                }
                assert_eq!(ascii_letters_end(b, start), want, "{text:?} at {start}");
                let mut lower = start;
                while lower < b.len() && b[lower].is_ascii_lowercase() {
                    lower += 1;
                }
                assert_eq!(ascii_lower_end(b, start), lower, "{text:?} at {start}");
            }
        }
        // Every byte value in every lane.
        for byte in 0..=255u8 {
            for lane in 0..8 {
                let mut b = *b"abcdefghijkl";
                b[lane] = byte;
                let want = if byte.is_ascii_alphabetic() { 12 } else { lane };
                assert_eq!(ascii_letters_end(&b, 0), want, "byte {byte:#x} lane {lane}");
                let want = if byte.is_ascii_lowercase() { 12 } else { lane };
                assert_eq!(ascii_lower_end(&b, 0), want, "byte {byte:#x} lane {lane}");
            }
        }
    }

    #[test]
    fn decoding() {
        for s in [
            "é",
            "中",
            "😀",
            "\u{80}",
            "\u{7FF}",
            "\u{800}",
            "\u{FFFF}",
            "\u{10000}",
            "\u{10FFFF}",
        ] {
            let (cp, len) = decode_multibyte(s.as_bytes(), 0);
            assert_eq!(cp, s.chars().next().unwrap() as u32);
            assert_eq!(len, s.len());
        }
    }

    #[test]
    fn contractions() {
        fn c(s: &str, ignore_case: bool) -> Option<&str> {
            contraction(s.as_bytes(), 0, ignore_case).map(|e| &s[..e])
        }
        assert_eq!(c("'s", false), Some("'s"));
        assert_eq!(c("'S", false), None);
        assert_eq!(c("'S", true), Some("'S"));
        assert_eq!(c("'ſ", true), Some("'ſ"));
        assert_eq!(c("'ſ", false), None);
        assert_eq!(c("'LlX", true), Some("'Ll"));
        assert_eq!(c("'lL", false), None);
        assert_eq!(c("'ve", false), Some("'ve"));
        assert_eq!(c("'rE", true), Some("'rE"));
        assert_eq!(c("'r", true), None);
        assert_eq!(c("'", true), None);
        assert_eq!(c("'x", true), None);
        // Punctuation that `| 0x20` would map elsewhere is never mistaken for a letter.
        assert_eq!(c("'\u{212A}", true), None);
        assert_eq!(c("'\u{E9}", true), None);
    }
}
