//! The cl100k family's pieces found 64 bytes at a time, with whole-word bit operations.
//!
//! [`super::cl100k`] decides each piece's kind with branches that depend on the text, one
//! piece at a time; on prose (a piece every 4-5 bytes) most of its time goes to mispredicted
//! branches. This module computes the same pieces differently: each 64-byte block of the
//! text becomes a few class bitmaps (one bit per byte: letter, digit, white space, CR/LF,
//! space, apostrophe, non-ASCII, UTF-8 continuation byte), the piece starts of the block are
//! derived from those with shifts, ANDs and additions, and the loop over pieces is a
//! `trailing_zeros` per start. A character outside ASCII gets its class on all of its bytes
//! (one table lookup per character), so multilingual text runs the same bit program.
//!
//! The start rules, with the classes of [`super::cl100k`] (L letters, N numbers, O
//! `[^\s\p{L}\p{N}]`, G white space other than CR/LF, the "space" being U+0020 only). A
//! position is a piece start when it is (each claim follows from the scanner's module docs):
//!
//! * the first character of a letter run, unless the character before it is G, or is the
//!   only character of an O run that no space precedes: that character is then the piece's
//!   `P` prefix (or an apostrophe starting a contraction, which ends inside the letters);
//! * the end of a contraction: an apostrophe that starts an O run no space precedes,
//!   followed by `s d m t ſ ll ve re` in any case;
//! * the first character of an O run not preceded by a space (after a space, the space
//!   starts ` ?O+`);
//! * every `max_digits`-th character of a digit run, counting from its first;
//! * the first character of a white-space run, unless the run starts with CR/LF right after
//!   O: those CR/LF end the O piece (`[\r\n]*`), and the first G character after them is a
//!   start;
//! * a G character right after a CR/LF (not one an O piece took) when the run of G
//!   characters from it is followed by a non-space character, or ends the text under the
//!   original spelling: the piece `\s*[\r\n]` ends after the LAST CR/LF of the run; under
//!   tiktoken's `\s++$` a run ending the text is one piece;
//! * the last character of a run of G characters followed by a non-space character
//!   (`\s+(?!\S)` leaves it, and it prefixes letters or a space prefixes O).
//!
//! The rules look at most one character before a position (carried from the previous block)
//! and at most one character after, except for the third white-space rule, which asks what
//! follows a run of G characters: answered from the next block's bitmaps (classified one
//! block ahead), and by a scan of the run for the rare run longer than that.

use super::cl100k::Cl100kScanner;
use super::classes::{self, CharTable, LETTER, NUMBER, WS};

/// One bit per byte of a 64-byte block (bit `i` is byte `base + i`).
#[derive(Clone, Copy, Default)]
struct Classes {
    /// Bytes inside the text.
    valid: u64,
    /// Bytes of `\p{L}` characters.
    letter: u64,
    /// Bytes of `\p{N}` characters.
    digit: u64,
    /// Bytes of `\s` characters (CR and LF included).
    space: u64,
    /// CR and LF.
    newline: u64,
    /// U+0020.
    blank: u64,
    /// The apostrophe.
    apostrophe: u64,
    /// Bytes >= 0x80.
    non_ascii: u64,
    /// UTF-8 continuation bytes (0x80..=0xBF).
    cont: u64,
}

impl Classes {
    /// The bitmaps of the block of `b` starting at `base` (all zero past the text).
    #[inline(always)]
    fn of(k: impl Classify, b: &[u8], base: usize, t: &CharTable) -> Classes {
        let len = b.len();
        if base >= len {
            return Classes::default();
        }
        let mut c = if let Some(block) = b.get(base..base + 64) {
            k.classify(block.try_into().unwrap())
        } else {
            // The last, partial block: zero bytes past the text are O, then masked out.
            let mut buf = [0u8; 64];
            buf[..len - base].copy_from_slice(&b[base..]);
            let mut c = k.classify(&buf);
            c.valid = (1u64 << (len - base)) - 1;
            c
        };
        if c.non_ascii != 0 {
            c.add_non_ascii(b, base, t);
        }
        c
    }

    /// Sets the class bits of the block's non-ASCII characters (on every byte of each,
    /// including a character whose lead byte is in the previous block).
    #[inline(never)]
    fn add_non_ascii(&mut self, b: &[u8], base: usize, t: &CharTable) {
        let cont = self.cont;
        let mut leads = self.non_ascii & !cont;
        if cont & 1 != 0 {
            let mut lead = base;
            while b[lead] & 0xC0 == 0x80 {
                lead -= 1;
            }
            self.add_char(b, base, t, lead, 0);
        }
        while leads != 0 {
            let i = leads.trailing_zeros();
            self.add_char(b, base, t, base + i as usize, i);
            leads &= leads - 1;
        }
    }

    /// Sets the class bits of the character at `lead` on its bytes from `first_bit` to the
    /// block's end, without a branch on its class.
    #[inline(always)]
    fn add_char(&mut self, b: &[u8], base: usize, t: &CharTable, lead: usize, first_bit: u32) {
        let (cp, n) = classes::decode_multibyte(b, lead);
        let flags = t.class_of(cp);
        let end = (lead + n - base) as u32;
        let mask = (u64::MAX >> (64 - end.min(64))) & (u64::MAX << first_bit);
        let select = |flag: u8| 0u64.wrapping_sub((flags & flag != 0) as u64);
        self.letter |= mask & select(LETTER);
        self.digit |= mask & select(NUMBER);
        self.space |= mask & select(WS);
    }
}

/// A way to compute the ASCII classes of a full block, and its non-ASCII and continuation
/// bytes.
trait Classify: Copy {
    fn classify(self, block: &[u8; 64]) -> Classes;
}

/// 16 bytes at a time: SSE2 is part of the x86-64 baseline.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Sse2;

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
                c.digit |= bits(in_range(v, b'0', 10), k);
                c.space |= bits(_mm_or_si128(in_range(v, 0x09, 5), blank), k);
                c.newline |= bits(_mm_or_si128(eq(b'\n'), eq(b'\r')), k);
                c.blank |= bits(blank, k);
                c.apostrophe |= bits(eq(b'\''), k);
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
struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Classify for Avx2 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        // SAFETY: only used when AVX2 is present (`X86`, the tests).
        unsafe { classify_avx2(block) }
    }
}

/// [`Avx2`] where the processor has it (a branch per block that always goes the same way),
/// else [`Sse2`]. Only the classification is compiled for AVX2, called once per block:
/// compiling the whole block loop so let LLVM vectorize the scalar bit program across the
/// struct's fields, with a lane insert or extract per field (measured: 3.5 times the
/// instructions), and two copies of the loop (one per classifier) made the piece loop's
/// body a function called per piece instead of inlined.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct X86 {
    avx2: bool,
}

#[cfg(target_arch = "x86_64")]
impl Classify for X86 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        if self.avx2 {
            Avx2.classify(block)
        } else {
            Sse2.classify(block)
        }
    }
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
        c.digit |= bits(in_range(v, b'0', 10), k);
        c.space |= bits(_mm256_or_si256(in_range(v, 0x09, 5), blank), k);
        c.newline |= bits(_mm256_or_si256(eq(b'\n'), eq(b'\r')), k);
        c.blank |= bits(blank, k);
        c.apostrophe |= bits(eq(b'\''), k);
        c.non_ascii |= bits(v, k);
        c.cont |= bits(_mm256_cmpgt_epi8(_mm256_set1_epi8(-0x40), v), k);
    }
    c
}

/// Eight bytes at a time in a `u64` (SWAR), for other targets (the WebAssembly module): each
/// class is a comparison per byte lane, done with additions that cannot carry between lanes;
/// its lanes' top bits then gathered into eight bits of the bitmap.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[derive(Clone, Copy)]
struct Portable;

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
            put(&mut c.digit, lanes_in(x, b'0', b'9') & ascii);
            put(&mut c.space, (lanes_in(x, 0x09, 0x0D) & ascii) | blank);
            put(
                &mut c.newline,
                (lanes_in(x, b'\n', b'\n') | lanes_in(x, b'\r', b'\r')) & ascii,
            );
            put(&mut c.blank, blank);
            put(&mut c.apostrophe, lanes_in(x, b'\'', b'\'') & ascii);
            put(&mut c.non_ascii, w & TOPS);
            // 0x80..=0xBF: the top bit set and the next one clear.
            put(&mut c.cont, w & !(w << 1) & TOPS);
        }
        c
    }
}

/// What a block's starts need from the block before it: its bitmaps (only their top bits
/// are read: "the character before"), the runs that continue into this block, and starts
/// found beyond its end.
#[derive(Default)]
struct Carry {
    prev: Classes,
    /// O bytes.
    other: u64,
    /// Bytes of the first character of an O run that no space precedes.
    first_other: u64,
    /// CR/LF bytes an O piece takes (`[\r\n]*`).
    eaten: u64,
    /// Digit characters of the run at the end of the block since its last start, mod 3.
    digits: u32,
    /// Starts past the block's end (contraction ends), relative to the next block.
    spill: u64,
}

/// The bitmaps `x` of a block and `y` of the next as one 128-bit bitmap.
#[inline(always)]
fn wide(x: u64, y: u64) -> u128 {
    x as u128 | (y as u128) << 64
}

/// `x` shifted one byte later, the previous block's top bit entering at bit 0.
#[inline(always)]
fn after(x: u64, prev: u64) -> u64 {
    (x << 1) | (prev >> 63)
}

/// The piece starts of the block `c` at `base` (`q` is the next block's classes).
#[inline(always)]
fn block_starts(
    cfg: &Cl100kScanner,
    b: &[u8],
    base: usize,
    c: &Classes,
    q: &Classes,
    carry: &mut Carry,
) -> u64 {
    let p = carry.prev;
    let other = c.valid & !(c.letter | c.digit | c.space);
    let g = c.space & !c.newline;
    let p_g = p.space & !p.newline;

    // O runs, and the first character of those no space precedes.
    let other_starts = other & !after(other, carry.other) & !after(c.blank, p.blank);
    let first_chars = other_starts | (other & c.cont);
    let first_other = (first_chars.wrapping_add(other_starts | (carry.first_other >> 63))
        ^ first_chars)
        & first_chars;
    let mut starts = other_starts;

    // Letter runs, unless prefixed.
    let letter_starts = c.letter & !after(c.letter, p.letter);
    starts |= letter_starts & !(after(g, p_g) | after(first_other, carry.first_other));

    // Contractions: an apostrophe starting such an O run, then a letter.
    let next_letter = (c.letter >> 1) | (q.letter << 63);
    let mut candidates = c.apostrophe & other_starts & next_letter;
    let mut spill = 0u64;
    while candidates != 0 {
        let i = candidates.trailing_zeros() as usize;
        if let Some(end) = classes::contraction(b, base + i, true) {
            let bit = 1u128 << (end - base);
            starts |= bit as u64;
            spill |= (bit >> 64) as u64;
        }
        candidates &= candidates - 1;
    }

    // Digits.
    starts |= digit_starts(cfg, c, carry);

    // White space: CR/LF an O piece takes, the run starts, and what follows a CR/LF.
    let seeds = c.newline & after(other, carry.other);
    let eaten = (c.newline.wrapping_add(seeds | (carry.eaten >> 63)) ^ c.newline) & c.newline;
    let space_starts = c.space & !after(c.space, p.space);
    let after_eaten = after(eaten, carry.eaten);
    starts |= (space_starts & !eaten) | (g & after_eaten);
    let after_break = g & after(c.newline, p.newline) & !after_eaten;
    if after_break != 0 {
        starts |= resolve_after_break(cfg, b, base, c, q, after_break);
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

    starts = (starts | carry.spill) & c.valid;
    *carry = Carry {
        prev: *c,
        other,
        first_other,
        eaten,
        digits: carry.digits,
        spill,
    };
    starts
}

/// The starts of the digit runs of block `c`; updates `carry.digits`.
#[inline(always)]
fn digit_starts(cfg: &Cl100kScanner, c: &Classes, carry: &mut Carry) -> u64 {
    let d = c.digit;
    if d == 0 {
        carry.digits = 0;
        return 0;
    }
    if cfg.max_digits == 1 {
        return d & !c.cont;
    }
    debug_assert_eq!(cfg.max_digits, 3);
    let pd = carry.prev.digit;
    let run_starts = d & !after(d, pd);
    let continued = pd >> 63 != 0;
    let mut x;
    if d & c.non_ascii == 0 {
        // ASCII digits: every third byte from the run's start.
        x = run_starts;
        if continued && d & 1 != 0 {
            // The run from the previous block: its next start is `3 - digits` characters on.
            let run = (d.wrapping_add(1) ^ d) & d;
            x |= (1u64 << ((3 - carry.digits) % 3)) & run;
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
        carry.digits = if d >> 63 != 0 {
            (64 - (63 - x.leading_zeros())) % 3
        } else {
            0
        };
    } else {
        // Non-ASCII numbers (rare): count characters.
        x = 0;
        let mut count = if continued { carry.digits } else { 0 };
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
        carry.digits = if d >> 63 != 0 { count } else { 0 };
    }
    x
}

/// Which of `candidates` (G characters right after a CR/LF no O piece took) start pieces:
/// those whose run of G characters is followed by a non-space character, or ends the text
/// under the original spelling (see the module docs).
#[inline(always)]
fn resolve_after_break(
    cfg: &Cl100kScanner,
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
    if cfg.whole_trailing_space {
        bad |= landing & !wide(c.valid, q.valid);
    }
    if bad == 0 && !past_window {
        return candidates;
    }
    resolve_after_break_slow(cfg, b, base, candidates)
}

#[cold]
#[inline(never)]
fn resolve_after_break_slow(
    cfg: &Cl100kScanner,
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
            let (class, n) = t.at(b, j);
            if class & WS == 0 {
                break;
            }
            j += n;
        }
        let start = if j == b.len() {
            !cfg.whole_trailing_space
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

/// Calls `each` with the end of each piece of `text`, in order: the ends
/// [`Cl100kScanner::piece_end`] gives, found a block at a time.
#[inline(always)]
pub(crate) fn each_end<E>(
    cfg: &Cl100kScanner,
    text: &str,
    each: impl FnMut(usize) -> Result<(), E>,
) -> Result<(), E> {
    #[cfg(target_arch = "x86_64")]
    let classify = X86 {
        avx2: std::arch::is_x86_feature_detected!("avx2"),
    };
    #[cfg(not(target_arch = "x86_64"))]
    let classify = Portable;
    each_end_with(classify, cfg, text, each)
}

/// [`each_end`] with the classes computed by `classify`.
#[inline(always)]
fn each_end_with<E>(
    classify: impl Classify,
    cfg: &Cl100kScanner,
    text: &str,
    mut each: impl FnMut(usize) -> Result<(), E>,
) -> Result<(), E> {
    let b = text.as_bytes();
    if b.is_empty() {
        return Ok(());
    }
    let t = CharTable::get();
    let mut carry = Carry::default();
    let mut cur = Classes::of(classify, b, 0, t);
    let mut base = 0;
    // One call of `each` in the loop, the text's end included as a start bit of the last
    // block (or of one more, empty block when the text fills its last): the piece loop's
    // body is then inlined here, as it is into the per-piece loop.
    loop {
        let rest = b.len() - base;
        let mut starts = 0;
        if rest > 0 {
            let next = Classes::of(classify, b, base + 64, t);
            starts = block_starts(cfg, b, base, &cur, &next, &mut carry);
            cur = next;
        }
        if base == 0 {
            starts &= !1; // The text's start ends no piece.
        }
        let end = if rest < 64 { 1u64 << rest } else { 0 };
        starts |= end;
        while starts != 0 {
            each(base + starts.trailing_zeros() as usize)?;
            starts &= starts - 1;
        }
        if end != 0 {
            return Ok(());
        }
        base += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(cfg: &Cl100kScanner, text: &str) -> Vec<usize> {
        let t = CharTable::get();
        let b = text.as_bytes();
        let mut out = Vec::new();
        crate::spanners::split_with(b.len(), &mut out, |i| cfg.piece_end(t, b, i));
        out
    }

    fn blocks_with(classify: impl Classify, cfg: &Cl100kScanner, text: &str) -> Vec<usize> {
        let mut out = Vec::new();
        each_end_with::<()>(classify, cfg, text, |end| {
            out.push(end);
            Ok(())
        })
        .unwrap();
        out
    }

    /// The ends from every classifier this machine runs (all equal, or a panic).
    fn blocks(cfg: &Cl100kScanner, text: &str) -> Vec<usize> {
        let ends = blocks_with(Portable, cfg, text);
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(blocks_with(Sse2, cfg, text), ends, "SSE2: {text:?}");
            if std::arch::is_x86_feature_detected!("avx2") {
                assert_eq!(blocks_with(Avx2, cfg, text), ends, "AVX2: {text:?}");
            }
        }
        let mut dispatched = Vec::new();
        let _ = each_end(cfg, text, |end| {
            dispatched.push(end);
            Ok::<(), ()>(())
        });
        assert_eq!(dispatched, ends);
        ends
    }

    const CONFIGS: [Cl100kScanner; 3] = [
        Cl100kScanner::CL100K_TIKTOKEN,
        Cl100kScanner::CL100K_ORIGINAL,
        Cl100kScanner::QWEN2,
    ];

    fn check(text: &str) {
        for cfg in &CONFIGS {
            let want = scalar(cfg, text);
            let got = blocks(cfg, text);
            if got != want {
                let pieces = |ends: &[usize]| -> Vec<String> {
                    super::super::pieces_at(text, ends)
                        .map(String::from)
                        .collect()
                };
                panic!(
                    "{}: {text:?}\n want {:?}\n  got {:?}",
                    cfg.name,
                    pieces(&want),
                    pieces(&got)
                );
            }
        }
    }

    /// `text` at every offset of a block (so that each of its positions meets the block
    /// edges), after ASCII letters and after white space.
    fn check_shifted(text: &str) {
        check(text);
        for pad in [1, 2, 3, 30, 58, 59, 60, 61, 62, 63, 64, 65, 127] {
            for fill in ["a", " ", "1", ".", "\n"] {
                check(&(fill.repeat(pad) + text));
            }
        }
    }

    #[test]
    fn known_cases() {
        for text in [
            "",
            "Hello world, it's",
            "   Hello\n    Hello",
            "\t\n",
            "\r\n\r\nx",
            "a\tb",
            "a  ",
            "x \n \n y",
            "«Hello»",
            "\"'x",
            " ...\n\nA",
            " 1",
            "a\n ",
            "a\n \n  ",
            "a \n",
            "1234567",
            "12½Ⅻ3",
            "a'S",
            "'ſ",
            "I'LL",
            "we'Ve",
            "'x",
            "'1",
            "😀😀 😀x",
            "中文 字",
            "كَتَبَ",
            "\u{85}x\u{85}\u{85}",
            "a\u{A0}b",
            "a\u{3000}\u{3000}\u{3000}b",
            "a\u{2028}\nb",
            "!\n \n ",
            "!\n\n  a",
            "x's 'sand ''s  's (a  (a \t(a",
            "\u{3000}\u{3000}(",
            "١٢٣٤٥ 12٣4567",
        ] {
            check_shifted(text);
        }
    }

    /// How long the exhaustive tests' strings get: one character less in debug builds
    /// (`cargo test` without `--release`), which run them about 30 times slower.
    const DEPTH: u32 = if cfg!(debug_assertions) { 4 } else { 5 };

    /// Calls `check` on every string of `min..=max` characters from `alphabet`, each
    /// between `before` and `after`.
    fn every_string(alphabet: &[&str], max: u32, before: &str, after: &str) {
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

    /// Every string of up to five characters from one character of each class that
    /// matters (and the contraction letters), and of up to six from a smaller set.
    #[test]
    fn exhaustive_short() {
        let alphabet = [
            "a", "s", "l", "e", "1", " ", "\t", "\n", "\r", "'", ".", "é", "\u{3000}", "٣",
            "\u{301}",
        ];
        every_string(&alphabet, DEPTH, "", "");
        let alphabet = ["a", "s", "1", " ", "\n", "'", ".", "\u{A0}"];
        every_string(&alphabet, DEPTH + 1, "", "");
    }

    /// Short strings placed across a block edge, and ending the text there.
    #[test]
    fn exhaustive_across_edges() {
        let alphabet = ["a", "1", " ", "\n", "'", ".", "\u{A0}", "s"];
        for pad in [60, 61, 62, 63] {
            let before = "x".repeat(pad - 2) + ". ";
            every_string(&alphabet, DEPTH, &before, "");
            every_string(&alphabet, DEPTH - 1, &before, "\n b");
        }
    }

    #[test]
    fn long_runs() {
        for unit in [
            " ", "1", "a", "\n", "\t", ".", "é", "\u{3000}", "٣", " \n", "\n ",
        ] {
            for count in [1, 2, 3, 63, 64, 65, 127, 128, 129, 200] {
                let run = unit.repeat(count);
                for around in ["", "x", " ", "\n", "!", "1"] {
                    check_shifted(&format!("{around}{run}{around}"));
                    check(&format!("{around}{run}"));
                    check(&format!("\n{run}\n"));
                    check(&format!("!\n{run}x"));
                }
            }
        }
    }

    /// A small deterministic generator (no dependency): xorshift.
    /// The classifiers' bitmaps of a block, every field.
    fn fields(c: &Classes) -> [u64; 9] {
        [
            c.valid,
            c.letter,
            c.digit,
            c.space,
            c.newline,
            c.blank,
            c.apostrophe,
            c.non_ascii,
            c.cont,
        ]
    }

    /// The byte-at-a-time definition of each class, for one byte.
    fn classes_of_byte(x: u8) -> [bool; 8] {
        [
            x.is_ascii_alphabetic(),
            x.is_ascii_digit(),
            matches!(x, 0x09..=0x0D | b' '),
            x == b'\n' || x == b'\r',
            x == b' ',
            x == b'\'',
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
                let want: Vec<[bool; 8]> = block.iter().map(|&b| classes_of_byte(b)).collect();
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
                }
            }
        }
    }

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn random_mixes() {
        let pieces = [
            "a", "Hello", " world", "'s", "'LL", "'ve", "'", "''", " '", "1", "123", "4567", " ",
            "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\n ", ".", ",", "...", "(", " (", "é",
            "中文", "\u{3000}", "\u{A0}", "\u{85}", "\u{2028}", "٣", "½", "\u{301}", "😀", "ſ",
            "'ſ", "\u{B}", "\u{C}", "x",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let len = (rng(&mut seed) % 80) as usize;
            let mut text = String::new();
            for _ in 0..len {
                let r = rng(&mut seed) as usize;
                let piece = pieces[r % pieces.len()];
                // Runs now and then.
                let repeat = if r >> 20 & 15 == 0 {
                    1 + (r >> 24) % 70
                } else {
                    1
                };
                for _ in 0..repeat {
                    text.push_str(piece);
                }
            }
            check(&text);
        }
    }
}
