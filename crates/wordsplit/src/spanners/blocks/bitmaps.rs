//! A 64-byte block's class bitmaps ([`Classes`]): the ASCII classes from a classifier
//! ([`super::Classify`]), completed with the classes of the block's non-ASCII characters.

use super::decode::{
    char_start, class_at, code_point_of_three_bytes, code_point_of_two_bytes, code_point_of_word,
    letter_before,
};
use super::Classify;
use crate::spanners::classes::{CharTable, LETTER, LM, LO, LT, LU, MARK, NUMBER, WS};

/// One bit per byte of a 64-byte block (bit `i` is byte `base + i`).
#[derive(Clone, Copy, Default)]
pub(in crate::spanners) struct Classes {
    /// Bytes inside the text.
    pub(in crate::spanners) valid: u64,
    /// Bytes of `\p{L}` characters.
    pub(in crate::spanners) letter: u64,
    /// Bytes of uppercase letters: A-Z, and the Lu and Lt characters once
    /// [`Classes::complete_cased`] has run (o200k's block scanner; [`Classes::complete`]
    /// leaves them out).
    pub(in crate::spanners) upper: u64,
    /// Bytes of `\p{N}` characters.
    pub(in crate::spanners) digit: u64,
    /// Bytes of `\s` characters (CR and LF included).
    pub(in crate::spanners) space: u64,
    /// CR and LF.
    pub(in crate::spanners) newline: u64,
    /// U+0020.
    pub(in crate::spanners) blank: u64,
    /// The apostrophe.
    pub(in crate::spanners) apostrophe: u64,
    /// The slash (o200k's O pieces end with `[\r\n/]*`).
    pub(in crate::spanners) slash: u64,
    /// Bytes >= 0x80.
    pub(in crate::spanners) non_ascii: u64,
    /// UTF-8 continuation bytes (0x80..=0xBF).
    pub(in crate::spanners) cont: u64,
}

/// How far ahead of the block being classified the scan requests the text (see
/// [`Classes::of_ascii`]).
const TEXT_AHEAD: usize = 1024;

impl Classes {
    /// The bitmaps of the block of `b` starting at `base` (all zero past the text).
    #[inline(always)]
    pub(in crate::spanners) fn of(
        k: impl Classify,
        b: &[u8],
        base: usize,
        t: &CharTable,
    ) -> Classes {
        let mut c = Classes::of_ascii(k, b, base);
        c.complete(b, base, t);
        c
    }

    /// [`Classes::of`] without the classes of non-ASCII characters (their bytes are in
    /// `non_ascii` and `cont` only, until [`Classes::complete`]).
    #[inline(always)]
    pub(in crate::spanners) fn of_ascii(k: impl Classify, b: &[u8], base: usize) -> Classes {
        // The text ahead requested: the hardware's prefetcher stops at each 4 KB page, and
        // a page whose address translation has left the TLB (after other work, or a
        // garbage collection, walked a large heap) would stall the scan there.
        crate::tables::prefetch_address(b.as_ptr().wrapping_add(base + TEXT_AHEAD));
        let len = b.len();
        if base >= len {
            return Classes::default();
        }
        let c = if let Some(block) = b.get(base..base + 64) {
            k.classify(block.try_into().unwrap())
        } else {
            // The last, partial block: zero bytes past the text are O, then masked out.
            let mut buf = [0u8; 64];
            buf[..len - base].copy_from_slice(&b[base..]);
            let mut c = k.classify(&buf);
            c.valid = (1u64 << (len - base)) - 1;
            c
        };
        c
    }

    /// Adds the classes of the non-ASCII characters to those of [`Classes::of_ascii`] for
    /// the block at `base`.
    #[inline(always)]
    pub(in crate::spanners) fn complete(&mut self, b: &[u8], base: usize, t: &CharTable) {
        if self.non_ascii != 0 {
            self.add_non_ascii::<false>(b, base, t);
        }
    }

    /// [`Classes::complete`], with the Lu and Lt characters' bytes in `upper` too, and the
    /// marks' bytes in `letter`; false when o200k's block scanner does not model the block:
    /// a character of it (or the one it starts inside) is in both of o200k's letter
    /// brackets (Lm, Lo, marks) and followed by an uppercase letter (Lu, Lt), or is a mark
    /// that does not follow a letter (or a mark that does; the block's first character, a
    /// letter). Otherwise those characters split as lowercase letters would (see
    /// `o200k_blocks`), and are classed as such.
    #[inline(always)]
    pub(in crate::spanners) fn complete_cased(
        &mut self,
        b: &[u8],
        base: usize,
        t: &CharTable,
    ) -> bool {
        self.non_ascii == 0 || self.add_non_ascii::<true>(b, base, t)
    }

    /// Sets the class bits of the block's non-ASCII characters (on every byte of each,
    /// including a character whose lead byte is in the previous block). Each character's
    /// class is noted on its lead byte's bit alone and spread onto its continuation bytes
    /// once for the whole block; most such characters are letters, so every non-ASCII byte
    /// is a letter's unless its character is not, and only digits and white space (rare
    /// beyond ASCII) take a branch.
    /// With `CASED`, also the Lu and Lt characters' bytes in `upper` and the marks' in
    /// `letter`, and whether the block is modelled ([`Self::complete_cased`]; else true).
    #[inline(never)]
    fn add_non_ascii<const CASED: bool>(&mut self, b: &[u8], base: usize, t: &CharTable) -> bool {
        let cont = self.cont;
        let (mut not_letter, mut digit, mut space) = (0u64, 0u64, 0u64);
        let (mut upper, mut caseless, mut marks) = (0u64, 0u64, 0u64);
        let leads = self.non_ascii & !cont;
        let mut next = |bit: u32, flags: u8| {
            not_letter |= u64::from(flags & LETTER == 0) << bit;
            if CASED {
                upper |= u64::from(flags & (LU | LT) != 0) << bit;
                caseless |= u64::from(flags & (LM | LO) != 0) << bit;
                marks |= u64::from(flags & MARK != 0) << bit;
            }
            if flags & (NUMBER | WS) != 0 {
                digit |= u64::from(flags & NUMBER != 0) << bit;
                space |= u64::from(flags & WS != 0) << bit;
            }
        };
        if cont & 1 != 0 {
            // The block starts inside a character: its class goes on bit 0, spread below.
            next(0, class_at(t, b, char_start(b, base)));
        }
        if base + 64 + 3 <= b.len() {
            // Four bytes can be read from every lead byte of the block. Text of one script
            // has characters of one length, which the continuation bytes show for the whole
            // block: decoded at that length, no character takes a branch on its own.
            // Leads from bit 61 up, whose continuation bytes may pass the block's end, and
            // blocks of mixed lengths take the decode for any length.
            let edge = leads & (u64::MAX << 61);
            let inner = leads & !edge;
            // The continuation bytes of the block's own characters: not those of one that
            // starts in the previous block (the run from bit 0).
            let own = cont & !((cont ^ cont.wrapping_add(1)) >> 1);
            // Those of the inner leads' characters.
            let body = own & !(edge << 1 | edge << 2);
            let two = inner << 1;
            let mut each = |mut leads: u64, decode: fn(u32) -> u32| {
                while leads != 0 {
                    let bit = leads.trailing_zeros();
                    let lead = base + bit as usize;
                    // SAFETY: `lead + 4 <= base + 67 <= b.len()`.
                    let word = unsafe { b.as_ptr().add(lead).cast::<u32>().read_unaligned() };
                    next(bit, t.class_of(decode(u32::from_be(word))));
                    leads &= leads - 1;
                }
            };
            if body == two {
                each(inner, code_point_of_two_bytes);
            } else if body == two | inner << 2 {
                each(inner, code_point_of_three_bytes);
            } else {
                each(inner, code_point_of_word);
            }
            each(edge, code_point_of_word);
        } else {
            // Near the text's end: each character read only as far as the text goes.
            let mut leads = leads;
            while leads != 0 {
                let bit = leads.trailing_zeros();
                next(bit, class_at(t, b, base + bit as usize));
                leads &= leads - 1;
            }
        }
        // From each character's first bit onto its continuation bytes (at most three): one
        // step, then two at once where the byte before is a continuation byte too.
        let spread = |x: u64| {
            let x = x | ((x << 1) & cont);
            x | ((x << 2) & cont & (cont << 1))
        };
        self.letter |= self.non_ascii & !spread(not_letter);
        self.digit |= spread(digit);
        self.space |= spread(space);
        if CASED {
            self.upper |= spread(upper);
            // Each mark's first bit here: its lead byte, or bit 0 for one the block starts
            // inside or with, whose character before is read from the text.
            let first = marks;
            let marks = spread(marks);
            self.letter |= marks;
            let after_letters = first & !1 & !(self.letter << 1) == 0
                && (first & 1 == 0 || letter_before(b, base, t));
            return after_letters
                && !self.caseless_before_upper(spread(caseless) | marks, b, base, t);
        }
        true
    }

    /// Whether an Lm or Lo letter or a mark (its bytes are `caseless`) is followed by an uppercase
    /// letter (`self.upper`, or the character after the block: the block's last character
    /// may be such a letter).
    #[inline(always)]
    fn caseless_before_upper(&self, caseless: u64, b: &[u8], base: usize, t: &CharTable) -> bool {
        // The last byte of each: a byte the next one does not continue.
        let last = caseless & !(self.cont >> 1);
        if (last << 1) & self.upper != 0 {
            return true;
        }
        if caseless >> 63 == 0 {
            return false;
        }
        // The character after the one on the block's last byte: past its continuation bytes.
        let next = (base + 64..b.len()).find(|&i| b[i] & 0xC0 != 0x80);
        next.is_some_and(|i| t.at(b, i).0 & (LU | LT) != 0)
    }
}
