//! What the block scanners ([`super::cl100k_blocks`], [`super::o200k_blocks`]) share: a
//! 64-byte block's class bitmaps (one bit per byte), the classifiers that compute them
//! (SSE2, AVX2, and a portable one on eight bytes at a time), and the start rules both
//! families have in common: digit runs (`\p{N}{1,n}`) and white space (`\s*[\r\n]+`,
//! `\s+(?!\S)`, with or without tiktoken's `\s++$`).

use super::classes::{self, CharTable, LETTER, LM, LO, LT, LU, MARK, NUMBER, WS};

/// One bit per byte of a 64-byte block (bit `i` is byte `base + i`).
#[derive(Clone, Copy, Default)]
pub(super) struct Classes {
    /// Bytes inside the text.
    pub(super) valid: u64,
    /// Bytes of `\p{L}` characters.
    pub(super) letter: u64,
    /// Bytes of uppercase letters: A-Z, and the Lu and Lt characters once
    /// [`Classes::complete_cased`] has run (o200k's block scanner; [`Classes::complete`]
    /// leaves them out).
    pub(super) upper: u64,
    /// Bytes of `\p{N}` characters.
    pub(super) digit: u64,
    /// Bytes of `\s` characters (CR and LF included).
    pub(super) space: u64,
    /// CR and LF.
    pub(super) newline: u64,
    /// U+0020.
    pub(super) blank: u64,
    /// The apostrophe.
    pub(super) apostrophe: u64,
    /// The slash (o200k's O pieces end with `[\r\n/]*`).
    pub(super) slash: u64,
    /// Bytes >= 0x80.
    pub(super) non_ascii: u64,
    /// UTF-8 continuation bytes (0x80..=0xBF).
    pub(super) cont: u64,
}

/// How far ahead of the block being classified the scan requests the text (see
/// [`Classes::of_ascii`]).
const TEXT_AHEAD: usize = 1024;

impl Classes {
    /// The bitmaps of the block of `b` starting at `base` (all zero past the text).
    #[inline(always)]
    pub(super) fn of(k: impl Classify, b: &[u8], base: usize, t: &CharTable) -> Classes {
        let mut c = Classes::of_ascii(k, b, base);
        c.complete(b, base, t);
        c
    }

    /// [`Classes::of`] without the classes of non-ASCII characters (their bytes are in
    /// `non_ascii` and `cont` only, until [`Classes::complete`]).
    #[inline(always)]
    pub(super) fn of_ascii(k: impl Classify, b: &[u8], base: usize) -> Classes {
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
    pub(super) fn complete(&mut self, b: &[u8], base: usize, t: &CharTable) {
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
    pub(super) fn complete_cased(&mut self, b: &[u8], base: usize, t: &CharTable) -> bool {
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

/// Whether the character before the one at `base` (or the one `base` is inside) is a
/// letter (`\p{L}`); false at the text's start.
fn letter_before(b: &[u8], base: usize, t: &CharTable) -> bool {
    let lead = char_start(b, base);
    lead > 0 && t.at(b, char_start(b, lead - 1)).0 & LETTER != 0
}

/// Where the character holding byte `i` of `b` (a `str`'s bytes) starts: its lead byte.
fn char_start(b: &[u8], mut i: usize) -> usize {
    while b[i] & 0xC0 == 0x80 {
        i -= 1;
    }
    i
}

/// The flags of the character whose lead byte is `b[i]` (`b[i] >= 0x80`, `b` a `str`'s
/// bytes).
#[inline(always)]
fn class_at(t: &CharTable, b: &[u8], i: usize) -> u8 {
    match b.get(i..i + 4) {
        Some(word) => class_of_word(t, u32::from_be_bytes([word[0], word[1], word[2], word[3]])),
        None => t.class_of(classes::decode_multibyte(b, i).0),
    }
}

/// The flags of the character whose UTF-8 bytes start `w`, four bytes read as one
/// big-endian word (its lead byte on top).
#[inline(always)]
fn class_of_word(t: &CharTable, w: u32) -> u8 {
    t.class_of(code_point_of_word(w))
}

/// The code point of the multibyte character whose UTF-8 bytes start `w` (read as in
/// [`class_of_word`]): a few shifts and masks, with no bounds check per byte and no branch
/// on the character's length (random Unicode, mixing two-, three- and four-byte characters,
/// mispredicted a three-way branch on most of them). The lead byte's count of leading ones
/// is the length `n`; the word shifted right by `4 - n` bytes holds the character's bytes
/// alone, whose low six bits each are gathered, and the lead's marker bits (the top of its
/// six) are masked off: `5n + 1` bits of code point.
#[inline(always)]
fn code_point_of_word(w: u32) -> u32 {
    let n = (!w).leading_zeros();
    let v = w >> (32 - 8 * n);
    let bits = (v & 0x3F) | ((v >> 2) & 0xFC0) | ((v >> 4) & 0x3_F000) | ((v >> 6) & 0xFC_0000);
    bits & ((1 << (5 * n + 1)) - 1)
}

/// [`code_point_of_word`] of a character known to be two bytes long.
#[inline(always)]
fn code_point_of_two_bytes(w: u32) -> u32 {
    ((w >> 18) & 0x7C0) | ((w >> 16) & 0x3F)
}

/// [`code_point_of_word`] of a character known to be three bytes long.
#[inline(always)]
fn code_point_of_three_bytes(w: u32) -> u32 {
    ((w >> 12) & 0xF000) | ((w >> 10) & 0xFC0) | ((w >> 8) & 0x3F)
}

/// A way to compute the ASCII classes of a full block, and its non-ASCII and continuation
/// bytes.
pub(super) trait Classify: Copy {
    fn classify(self, block: &[u8; 64]) -> Classes;
}

/// 16 bytes at a time: SSE2 is part of the x86-64 baseline.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Sse2;

#[cfg(target_arch = "x86_64")]
impl Classify for Sse2 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        use std::arch::x86_64::*;
        let mut c = Classes {
            valid: u64::MAX,
            ..Classes::default()
        };
        // SAFETY: SSE2 is part of the x86-64 baseline; the loads are inside `block`.
        unsafe {
            let bits = |m: __m128i, k: usize| (_mm_movemask_epi8(m) as u16 as u64) << (16 * k);
            for k in 0..4 {
                let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
                // `x - lo + 0x80 < 0x80 + width` as signed bytes: `x` in `lo..lo + width`.
                let in_range = |x: __m128i, lo: u8, width: u8| {
                    let shifted = _mm_add_epi8(x, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
                    _mm_cmplt_epi8(shifted, _mm_set1_epi8((0x80u8 + width) as i8))
                };
                let eq = |byte: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8));
                let letter = in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', 26);
                let blank = eq(b' ');
                c.letter |= bits(letter, k);
                c.upper |= bits(in_range(v, b'A', 26), k);
                c.digit |= bits(in_range(v, b'0', 10), k);
                c.space |= bits(_mm_or_si128(in_range(v, 0x09, 5), blank), k);
                c.newline |= bits(_mm_or_si128(eq(b'\n'), eq(b'\r')), k);
                c.blank |= bits(blank, k);
                c.apostrophe |= bits(eq(b'\''), k);
                c.slash |= bits(eq(b'/'), k);
                c.non_ascii |= bits(v, k);
                c.cont |= bits(_mm_cmplt_epi8(v, _mm_set1_epi8(-0x40)), k);
            }
        }
        c
    }
}

/// 32 bytes at a time, on processors with AVX2 (checked at run time): see [`X86`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Classify for Avx2 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        // SAFETY: only used when AVX2 is present (`X86`, the tests).
        unsafe { classify_avx2(block) }
    }
}

/// The whole block at once, on processors with AVX-512BW (checked at run time): a block is
/// one 64-byte register, and each class is one compare whose result is already the class's
/// 64-bit bitmap (a mask register), where AVX2 compares two halves and moves each half's
/// result out to a general register and shifts and joins them.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Avx512;

#[cfg(target_arch = "x86_64")]
impl Classify for Avx512 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        // SAFETY: only used when AVX-512BW is present (`X86`, the tests).
        unsafe { classify_avx512(block) }
    }
}

/// [`Avx512`] or [`Avx2`] where the processor has it (a branch per block that always goes
/// the same way), else [`Sse2`]. Only the classification is compiled for AVX2, called once per block:
/// compiling the whole block loop so let LLVM vectorize the scalar bit program across the
/// struct's fields, with a lane insert or extract per field (measured: 3.5 times the
/// instructions), and two copies of the loop (one per classifier) made the piece loop's
/// body a function called per piece instead of inlined.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct X86 {
    pub(super) avx512: bool,
    pub(super) avx2: bool,
}

#[cfg(target_arch = "x86_64")]
impl Classify for X86 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        if self.avx512 {
            Avx512.classify(block)
        } else if self.avx2 {
            Avx2.classify(block)
        } else {
            Sse2.classify(block)
        }
    }
}

/// The classifier for the processor running: [`X86`] (AVX2 where it has it, else SSE2) on
/// x86-64, [`Portable`] elsewhere (the WebAssembly module).
#[inline(always)]
pub(super) fn classifier() -> impl Classify {
    #[cfg(target_arch = "x86_64")]
    return X86 {
        avx512: std::arch::is_x86_feature_detected!("avx512bw"),
        avx2: std::arch::is_x86_feature_detected!("avx2"),
    };
    #[cfg(not(target_arch = "x86_64"))]
    return Portable;
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn classify_avx2(block: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes {
        valid: u64::MAX,
        ..Classes::default()
    };
    let bits = |m: __m256i, k: usize| (_mm256_movemask_epi8(m) as u32 as u64) << (32 * k);
    for k in 0..2 {
        let v = _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i);
        // `x - lo + 0x80 < 0x80 + width` as signed bytes: `x` in `lo..lo + width`.
        let in_range = |x: __m256i, lo: u8, width: u8| {
            let shifted = _mm256_add_epi8(x, _mm256_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
            _mm256_cmpgt_epi8(_mm256_set1_epi8((0x80u8 + width) as i8), shifted)
        };
        let eq = |byte: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8));
        let letter = in_range(_mm256_or_si256(v, _mm256_set1_epi8(0x20)), b'a', 26);
        let blank = eq(b' ');
        c.letter |= bits(letter, k);
        c.upper |= bits(in_range(v, b'A', 26), k);
        c.digit |= bits(in_range(v, b'0', 10), k);
        c.space |= bits(_mm256_or_si256(in_range(v, 0x09, 5), blank), k);
        c.newline |= bits(_mm256_or_si256(eq(b'\n'), eq(b'\r')), k);
        c.blank |= bits(blank, k);
        c.apostrophe |= bits(eq(b'\''), k);
        c.slash |= bits(eq(b'/'), k);
        c.non_ascii |= bits(v, k);
        c.cont |= bits(_mm256_cmpgt_epi8(_mm256_set1_epi8(-0x40), v), k);
    }
    c
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline(never)]
unsafe fn classify_avx512(block: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    let v = _mm512_loadu_si512(block.as_ptr().cast::<__m512i>());
    let splat = |byte: u8| _mm512_set1_epi8(byte as i8);
    // `x - lo < width` as unsigned bytes: `x` in `lo..lo + width`.
    let in_range = |x: __m512i, lo: u8, width: u8| {
        _mm512_cmplt_epu8_mask(_mm512_sub_epi8(x, splat(lo)), splat(width))
    };
    let eq = |byte: u8| _mm512_cmpeq_epi8_mask(v, splat(byte));
    let blank = eq(b' ');
    Classes {
        valid: u64::MAX,
        letter: in_range(_mm512_or_si512(v, splat(0x20)), b'a', 26),
        upper: in_range(v, b'A', 26),
        digit: in_range(v, b'0', 10),
        space: in_range(v, 0x09, 5) | blank,
        newline: eq(b'\n') | eq(b'\r'),
        blank,
        apostrophe: eq(b'\''),
        slash: eq(b'/'),
        non_ascii: _mm512_movepi8_mask(v),
        cont: in_range(v, 0x80, 0x40),
    }
}

/// Eight bytes at a time in a `u64` (SWAR), for other targets (the WebAssembly module): each
/// class is a comparison per byte lane, done with additions that cannot carry between lanes;
/// its lanes' top bits then gathered into eight bits of the bitmap.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[derive(Clone, Copy)]
pub(super) struct Portable;

/// The top bit of every byte lane.
const TOPS: u64 = 0x8080_8080_8080_8080;

/// `x`'s lanes (ASCII: their top bits clear) in `lo..=hi`, as each lane's top bit.
#[inline(always)]
fn lanes_in(x: u64, lo: u8, hi: u8) -> u64 {
    // A lane plus at most 0x80 stays below 0x100: no carry reaches the next lane.
    let at_least_lo = x + (0x80 - u64::from(lo)) * 0x0101_0101_0101_0101;
    let above_hi = x + (0x7F - u64::from(hi)) * 0x0101_0101_0101_0101;
    at_least_lo & !above_hi & TOPS
}

/// The top bits of `m`'s eight lanes (`m` has no other bits) as the bits 0-7 of a byte.
#[inline(always)]
fn gather(m: u64) -> u64 {
    // Lane i's bit moves to bit 56 + i; no two partial products collide.
    ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

impl Classify for Portable {
    fn classify(self, block: &[u8; 64]) -> Classes {
        let mut c = Classes {
            valid: u64::MAX,
            ..Classes::default()
        };
        for (k, word) in block.chunks_exact(8).enumerate() {
            let w = u64::from_le_bytes(word.try_into().unwrap());
            let ascii = !w & TOPS; // lanes below 0x80
            let x = w & !TOPS;
            let at = 8 * k;
            let put = |field: &mut u64, lanes: u64| *field |= gather(lanes) << at;
            let blank = lanes_in(x, b' ', b' ') & ascii;
            put(
                &mut c.letter,
                lanes_in(x | 0x2020_2020_2020_2020, b'a', b'z') & ascii,
            );
            put(&mut c.upper, lanes_in(x, b'A', b'Z') & ascii);
            put(&mut c.digit, lanes_in(x, b'0', b'9') & ascii);
            put(&mut c.space, (lanes_in(x, 0x09, 0x0D) & ascii) | blank);
            put(
                &mut c.newline,
                (lanes_in(x, b'\n', b'\n') | lanes_in(x, b'\r', b'\r')) & ascii,
            );
            put(&mut c.blank, blank);
            put(&mut c.apostrophe, lanes_in(x, b'\'', b'\'') & ascii);
            put(&mut c.slash, lanes_in(x, b'/', b'/') & ascii);
            put(&mut c.non_ascii, w & TOPS);
            // 0x80..=0xBF: the top bit set and the next one clear.
            put(&mut c.cont, w & !(w << 1) & TOPS);
        }
        c
    }
}

/// The bitmaps `x` of a block and `y` of the next as one 128-bit bitmap.
#[inline(always)]
pub(super) fn wide(x: u64, y: u64) -> u128 {
    x as u128 | (y as u128) << 64
}

/// `x` shifted one byte later, the previous block's top bit entering at bit 0.
#[inline(always)]
pub(super) fn after(x: u64, prev: u64) -> u64 {
    (x << 1) | (prev >> 63)
}

/// The bytes of the first character of each O run no space precedes: `other_starts` (its
/// lead bytes), then the continuation bytes after each, found by adding the lead byte to the
/// run of continuation bytes it starts, which carries through them (and on from the block
/// before when `carried`, the same bytes of that block, has its top bit set). A word's
/// prefix is such a character.
#[inline(always)]
pub(super) fn first_other_chars(other: u64, other_starts: u64, cont: u64, carried: u64) -> u64 {
    let first_chars = other_starts | (other & cont);
    (first_chars.wrapping_add(other_starts | (carried >> 63)) ^ first_chars) & first_chars
}
/// The starts of the digit runs of block `c` (`prev` the block before it), pieces of
/// `max_digits` (1 or 3) numbers; `digits` carries, from block to block, how many digit
/// characters the run at the block's end has had since its last start, mod 3.
#[inline(always)]
pub(super) fn digit_starts(
    max_digits: usize,
    c: &Classes,
    prev: &Classes,
    digits: &mut u32,
) -> u64 {
    let d = c.digit;
    if d == 0 {
        *digits = 0;
        return 0;
    }
    if max_digits == 1 {
        return d & !c.cont;
    }
    debug_assert_eq!(max_digits, 3);
    let pd = prev.digit;
    let run_starts = d & !after(d, pd);
    let continued = pd >> 63 != 0;
    let mut x;
    if d & c.non_ascii == 0 {
        // ASCII digits: every third byte from the run's start.
        x = run_starts;
        if continued && d & 1 != 0 {
            // The run from the previous block: its next start is `3 - digits` characters on.
            let run = (d.wrapping_add(1) ^ d) & d;
            x |= (1u64 << ((3 - *digits) % 3)) & run;
        }
        // `d3`: bytes with two digits before them; a start three bytes back then makes one
        // here. Doubling the step covers the block in five rounds.
        let d3 = d & after(d, pd) & ((d << 2) | (pd >> 62));
        x |= (x << 3) & d3;
        let d6 = d3 & (d3 << 3);
        if d6 != 0 {
            x |= (x << 6) & d6;
            let d12 = d6 & (d6 << 6);
            x |= (x << 12) & d12;
            let d24 = d12 & (d12 << 12);
            x |= (x << 24) & d24;
            let d48 = d24 & (d24 << 24);
            x |= (x << 48) & d48;
        }
        *digits = if d >> 63 != 0 {
            (64 - (63 - x.leading_zeros())) % 3
        } else {
            0
        };
    } else {
        // Non-ASCII numbers (rare): count characters.
        x = 0;
        let mut count = if continued { *digits } else { 0 };
        let mut leads = d & !c.cont;
        while leads != 0 {
            let bit = leads & leads.wrapping_neg();
            if run_starts & bit != 0 {
                count = 0;
            }
            if count == 0 {
                x |= bit;
            }
            count = (count + 1) % 3;
            leads &= leads - 1;
        }
        *digits = if d >> 63 != 0 { count } else { 0 };
    }
    x
}

/// The white-space starts of block `c` at `base` (`p` the block before it, `q` the next),
/// given the bytes an O piece takes after its O run (`eaten`, and `eaten_before` the
/// previous block's): the first character of a white-space run, unless eaten; a G character
/// right after an eaten byte; a G character right after a CR/LF not eaten, when its run of G
/// characters is followed by a non-space character, or ends the text without
/// `whole_trailing_space` (tiktoken's `\s++$`); and the last G character before a non-space
/// character (`\s+(?!\S)` leaves it). G is white space other than CR/LF.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn white_space_starts(
    whole_trailing_space: bool,
    b: &[u8],
    base: usize,
    c: &Classes,
    q: &Classes,
    p: &Classes,
    eaten: u64,
    eaten_before: u64,
) -> u64 {
    let g = c.space & !c.newline;
    let space_starts = c.space & !after(c.space, p.space);
    let after_eaten = after(eaten, eaten_before);
    let mut starts = (space_starts & !eaten) | (g & after_eaten);
    let after_break = g & after(c.newline, p.newline) & !after_eaten;
    if after_break != 0 {
        starts |= resolve_after_break(whole_trailing_space, b, base, c, q, after_break);
    }

    // The last G character before a non-space character.
    let non_space = c.valid & !c.space;
    let q_non_space = q.valid & !q.space;
    if c.non_ascii == 0 {
        starts |= g & ((non_space >> 1) | (q_non_space << 63));
    } else {
        // Its lead byte, up to three bytes before the last one (and in this block even when
        // the last byte is in the next).
        let cont = wide(c.cont, q.cont);
        let mut last = wide(g, q.space & !q.newline) & (wide(non_space, q_non_space) >> 1);
        for _ in 0..3 {
            last = (last & !cont) | ((last & cont) >> 1);
        }
        starts |= last as u64;
    }
    starts
}

/// Which of `candidates` (G characters right after a CR/LF no O piece took) start pieces:
/// those whose run of G characters is followed by a non-space character, or ends the text
/// without `whole_trailing_space`.
#[inline(always)]
fn resolve_after_break(
    whole_trailing_space: bool,
    b: &[u8],
    base: usize,
    c: &Classes,
    q: &Classes,
    candidates: u64,
) -> u64 {
    let g = wide(c.space & !c.newline, q.space & !q.newline);
    // Adding a candidate to its run carries into the byte after the run.
    let (sum, past_window) = g.overflowing_add(candidates as u128);
    let landing = sum & !g;
    let mut bad = landing & wide(c.newline, q.newline);
    if whole_trailing_space {
        bad |= landing & !wide(c.valid, q.valid);
    }
    if past_window {
        return resolve_after_break_slow(whole_trailing_space, b, base, candidates);
    }
    if bad == 0 {
        return candidates;
    }
    // The runs that land on a bad byte, without a loop per candidate (text such as " \n"
    // repeated lands every run on a line break, and resolving them one by one was a third
    // of a pass over it): with the bits reversed, each bad landing sits right below its run,
    // and adding it one place up carries through the run and clears it.
    let reversed = g.reverse_bits();
    let cleared = reversed & !reversed.wrapping_add(bad.reverse_bits() << 1);
    candidates & !(cleared.reverse_bits() as u64)
}

#[cold]
#[inline(never)]
fn resolve_after_break_slow(
    whole_trailing_space: bool,
    b: &[u8],
    base: usize,
    mut candidates: u64,
) -> u64 {
    let t = CharTable::get();
    let mut starts = 0;
    while candidates != 0 {
        let i = candidates.trailing_zeros();
        let mut j = base + i as usize;
        while j < b.len() && b[j] != b'\r' && b[j] != b'\n' {
            // Eight spaces at a time: a run that reaches past the window is mostly spaces
            // (padding, indentation), often thousands of them (lines of 5,000 spaces and a
            // letter, cl100k_base: 1,040 -> 2,650 MB/s).
            if b.get(j..j + 8) == Some(b"        ") {
                j += 8;
                continue;
            }
            let (class, n) = t.at(b, j);
            if class & WS == 0 {
                break;
            }
            j += n;
        }
        let start = if j == b.len() {
            !whole_trailing_space
        } else {
            b[j] != b'\r' && b[j] != b'\n'
        };
        if start {
            starts |= 1 << i;
        }
        candidates &= candidates - 1;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classifiers' bitmaps of a block, every field.
    fn fields(c: &Classes) -> [u64; 11] {
        [
            c.valid,
            c.letter,
            c.upper,
            c.digit,
            c.space,
            c.newline,
            c.blank,
            c.apostrophe,
            c.slash,
            c.non_ascii,
            c.cont,
        ]
    }

    /// The byte-at-a-time definition of each class, for one byte.
    fn classes_of_byte(x: u8) -> [bool; 10] {
        [
            x.is_ascii_alphabetic(),
            x.is_ascii_uppercase(),
            x.is_ascii_digit(),
            matches!(x, 0x09..=0x0D | b' '),
            x == b'\n' || x == b'\r',
            x == b' ',
            x == b'\'',
            x == b'/',
            x >= 0x80,
            x & 0xC0 == 0x80,
        ]
    }

    #[test]
    fn classifiers_agree_on_every_byte_in_every_lane() {
        // Every byte value in every position of a block, its neighbours other values (so a
        // carry or borrow between lanes would show).
        for x in 0..=255u8 {
            for at in 0..64 {
                let mut block = [0u8; 64];
                for (i, b) in block.iter_mut().enumerate() {
                    *b = (i as u8).wrapping_mul(97).wrapping_add(x ^ 0x5A);
                }
                block[at] = x;
                let want: Vec<[bool; 10]> = block.iter().map(|&b| classes_of_byte(b)).collect();
                let got = fields(&Portable.classify(&block));
                assert_eq!(got[0], u64::MAX);
                for (field, bits) in got[1..].iter().enumerate() {
                    for (i, classes) in want.iter().enumerate() {
                        assert_eq!(
                            bits >> i & 1 == 1,
                            classes[field],
                            "byte {:#x} lane {i} class {field}",
                            block[i]
                        );
                    }
                }
                #[cfg(target_arch = "x86_64")]
                {
                    assert_eq!(
                        fields(&Sse2.classify(&block)),
                        got,
                        "SSE2, byte {x:#x} at {at}"
                    );
                    if std::arch::is_x86_feature_detected!("avx2") {
                        assert_eq!(
                            fields(&Avx2.classify(&block)),
                            got,
                            "AVX2, byte {x:#x} at {at}"
                        );
                    }
                    if std::arch::is_x86_feature_detected!("avx512bw") {
                        assert_eq!(
                            fields(&Avx512.classify(&block)),
                            got,
                            "AVX-512, byte {x:#x} at {at}"
                        );
                    }
                }
            }
        }
    }

    /// Each byte of each block gets the classes of the character it is part of, whose lead
    /// byte may be in the block before: every UTF-8 length, and letters of each case,
    /// numbers, white space, marks and punctuation outside ASCII, in random order; and
    /// `complete_cased` tells the blocks holding an Lm, Lo or mark character before an Lu
    /// or Lt letter, or a mark after no letter.
    #[test]
    fn completed_blocks_give_each_byte_its_characters_classes() {
        let chars = [
            "a",
            "A",
            "1",
            " ",
            "\n",
            ".",
            "é",
            "É",
            "ǅ",
            "ʰ",
            "ª",
            "中",
            "\u{301}",
            "٣",
            "½",
            "\u{A0}",
            "\u{85}",
            "\u{3000}",
            "«",
            "—",
            "😀",
            "𝐀",
            "𝟙",
            "\u{E0100}",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..300 {
            let mut text = String::new();
            while text.len() < 300 {
                text.push_str(
                    chars[(crate::testing::xorshift(&mut seed) % chars.len() as u64) as usize],
                );
            }
            assert_completed(&text);
        }
    }

    /// Blocks of characters of one length, decoded at that length, and a character of
    /// another length at every place, the block's last bytes included (where its
    /// continuation bytes pass the block's end): each byte still gets its character's
    /// classes. The runs alternate classes, so a character decoded at the wrong length or
    /// offset shows.
    #[test]
    fn blocks_of_one_character_length_and_an_intruder_at_each_place() {
        for (run, intruders) in [
            ("é٣", ["中", "\u{3000}", "𝟙", "😀"]),
            ("中\u{3000}", ["é", "٣", "𝟙", "\u{A0}"]),
            ("中\u{3000}", ["a", "1", " ", "😀"]),
        ] {
            for intruder in intruders {
                for at in 0..140 {
                    let mut text = run.repeat(60);
                    let at = text.floor_char_boundary(at);
                    text.insert_str(at, intruder);
                    assert_completed(&text);
                }
            }
        }
    }

    /// [`Classes::of`] and [`Classes::complete_cased`] of each block of `text` against
    /// each character's own flags.
    fn assert_completed(text: &str) {
        let t = CharTable::get();
        let b = text.as_bytes();
        // Each byte's character's flags.
        let mut flags = vec![0u8; b.len()];
        let mut i = 0;
        while i < b.len() {
            let (class, n) = t.at(b, i);
            flags[i..i + n].fill(class);
            i += n;
        }
        for base in (0..b.len()).step_by(64) {
            let plain = Classes::of(Portable, b, base, t);
            let mut cased = Classes::of_ascii(Portable, b, base);
            let modelled = cased.complete_cased(b, base, t);
            let end = b.len().min(base + 64);
            let mut unmodelled = false;
            let marks = (base..end)
                .filter(|&i| flags[i] & MARK != 0)
                .fold(0u64, |bits, i| bits | 1 << (i - base));
            for (bit, &f) in flags[base..end].iter().enumerate() {
                let has = |bits: u64| bits >> bit & 1 == 1;
                let at = format!("{text:?} byte {}", base + bit);
                assert_eq!(has(plain.letter), f & LETTER != 0, "letter, {at}");
                assert_eq!(has(plain.digit), f & NUMBER != 0, "digit, {at}");
                assert_eq!(has(plain.space), f & WS != 0, "space, {at}");
                assert_eq!(
                    [cased.letter, cased.digit, cased.space],
                    [plain.letter | marks, plain.digit, plain.space]
                );
                assert_eq!(has(cased.upper), f & (LU | LT) != 0, "upper, {at}");
                assert_eq!(has(plain.upper), b[base + bit].is_ascii_uppercase(), "{at}");
                // An Lm, Lo or mark character right before an Lu or Lt one (which may
                // start in the next block): the character after this byte's.
                let next = (base + bit + 1..b.len()).find(|&i| b[i] & 0xC0 != 0x80);
                let upper_next = next.is_some_and(|i| flags[i] & (LU | LT) != 0);
                unmodelled |= f & (LM | LO | MARK) != 0 && upper_next;
                // A mark after a character that is no letter (nor a mark, inside the
                // block): the character before this byte's.
                let lead = (0..=base + bit)
                    .rev()
                    .find(|&i| b[i] & 0xC0 != 0x80)
                    .unwrap();
                let before = (lead > 0).then(|| flags[lead - 1]);
                let allowed = if lead <= base { LETTER } else { LETTER | MARK };
                unmodelled |= f & MARK != 0 && before.is_none_or(|g| g & allowed == 0);
            }
            assert_eq!(
                modelled, !unmodelled,
                "Lm, Lo, marks before Lu, Lt or marks after no letter: {text:?} block {base}"
            );
        }
    }

    #[test]
    fn every_multibyte_character_read_as_a_word_gives_its_code_point() {
        // The bytes after the character are another's: all ones, every bit to mask off.
        for c in (0x80..=0x10_FFFF).filter_map(char::from_u32) {
            let mut word = [0xFFu8; 4];
            c.encode_utf8(&mut word);
            let read = code_point_of_word(u32::from_be_bytes(word));
            assert_eq!(read, c as u32, "U+{:04X}", c as u32);
        }
    }
}

/// What the block scanners' tests share: their drivers run with every classifier, a mismatch
/// shown as pieces, exhaustive short strings and a random generator.
#[cfg(test)]
pub(super) mod testing {
    use super::*;

    /// A block scanner's driver, with the classifier as a parameter.
    pub(crate) trait Driver {
        /// The ends with `classify`.
        fn ends_with(&self, classify: impl Classify, text: &str) -> Vec<usize>;
        /// The ends with the classifier chosen at run time (`each_end`).
        fn ends(&self, text: &str) -> Vec<usize>;
    }

    /// The ends from every classifier this machine runs and from the one chosen at run time
    /// (all equal, or a panic).
    pub(crate) fn ends_of(driver: &impl Driver, text: &str) -> Vec<usize> {
        let ends = driver.ends_with(Portable, text);
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(driver.ends_with(Sse2, text), ends, "SSE2: {text:?}");
            if std::arch::is_x86_feature_detected!("avx2") {
                assert_eq!(driver.ends_with(Avx2, text), ends, "AVX2: {text:?}");
            }
            if std::arch::is_x86_feature_detected!("avx512bw") {
                assert_eq!(driver.ends_with(Avx512, text), ends, "AVX-512: {text:?}");
            }
        }
        assert_eq!(driver.ends(text), ends, "dispatched: {text:?}");
        ends
    }

    /// Panics, showing both as pieces, unless the ends `got` are the ends `want`.
    pub(crate) fn assert_same_ends(name: &str, text: &str, want: &[usize], got: &[usize]) {
        if got != want {
            let pieces = |ends: &[usize]| -> Vec<String> {
                super::super::pieces_at(text, ends)
                    .map(String::from)
                    .collect()
            };
            panic!(
                "{name}: {text:?}\n want {:?}\n  got {:?}",
                pieces(want),
                pieces(got)
            );
        }
    }

    /// How long the exhaustive tests' strings get: one character less in debug builds
    /// (`cargo test` without `--release`), which run them about 30 times slower.
    pub(crate) const DEPTH: u32 = if cfg!(debug_assertions) { 4 } else { 5 };

    /// Calls `check` on every string of `0..=max` characters from `alphabet`, each between
    /// `before` and `after`.
    pub(crate) fn every_string(
        alphabet: &[&str],
        max: u32,
        before: &str,
        after: &str,
        check: impl Fn(&str),
    ) {
        let n = alphabet.len();
        let mut text = String::new();
        for len in 0..=max {
            for mut code in 0..n.pow(len) {
                text.clear();
                text.push_str(before);
                for _ in 0..len {
                    text.push_str(alphabet[code % n]);
                    code /= n;
                }
                text.push_str(after);
                check(&text);
            }
        }
    }
}
