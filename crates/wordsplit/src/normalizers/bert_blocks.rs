//! Sixteen bytes of ASCII text at once for BERT's one pass ([`super::bert_pieces`]): which
//! are white space and which punctuation, as bit masks, and the bytes lowercased. SSE2 on
//! x86-64 (every x86-64 has it), NEON on aarch64 (likewise), two eight-byte words elsewhere.

/// The bytes of a block.
pub(super) const BLOCK: usize = 16;

/// A block of ASCII text, classed: bit `i` of `white` (`punct`) is set when byte `i` is white
/// space (punctuation); `mapped` holds the block's bytes, capitals lowercased when asked, then
/// zeros (so that sixteen bytes can be read from any position in the block).
pub(super) struct Classed {
    pub(super) mapped: [u8; 2 * BLOCK],
    pub(super) white: u32,
    pub(super) punct: u32,
}

/// The classes of `block` when all its bytes are ASCII and none is a control character other
/// than white space (tab, newline, carriage return; also vertical tab and form feed without
/// `clean_text`, which drops them); None for any other block.
#[inline(always)]
pub(super) fn classify(block: &[u8; BLOCK], clean_text: bool, lowercase: bool) -> Option<Classed> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; the load reads the sixteen bytes of `block`, the
        // store writes the first sixteen of `mapped`.
        unsafe { sse2::classify(block, clean_text, lowercase) }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        // SAFETY: NEON is part of the aarch64 targets' baseline; the load reads the sixteen
        // bytes of `block`, the store writes the first sixteen of `mapped`.
        unsafe { neon::classify(block, clean_text, lowercase) }
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    )))]
    {
        words::classify(block, clean_text, lowercase)
    }
}

/// The bytes of `block` before its first byte beyond ASCII (`BLOCK` when all are ASCII).
#[inline(always)]
pub(super) fn ascii_prefix(block: &[u8; BLOCK]) -> usize {
    let high = u128::from_le_bytes(*block) & u128::from_le_bytes([0x80; BLOCK]);
    (high.trailing_zeros() / 8) as usize
}

/// [`classify`] of the first `len` bytes of `block` (1 to `BLOCK - 1`), the rest taken as
/// `a` (a word byte: no boundary past `len`, which the cut stops at): the ASCII text before a
/// character beyond ASCII is classed at once rather than a byte at a time.
#[inline(always)]
pub(super) fn classify_prefix(
    block: &[u8; BLOCK],
    len: usize,
    clean_text: bool,
    lowercase: bool,
) -> Option<Classed> {
    debug_assert!((1..BLOCK).contains(&len));
    let kept = (1u128 << (8 * len)) - 1;
    let padded = u128::from_le_bytes(*block) & kept | u128::from_le_bytes([b'a'; BLOCK]) & !kept;
    classify(&padded.to_le_bytes(), clean_text, lowercase)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    use super::{Classed, BLOCK};

    #[inline(always)]
    pub(super) unsafe fn classify(
        block: &[u8; BLOCK],
        clean_text: bool,
        lowercase: bool,
    ) -> Option<Classed> {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        if _mm_movemask_epi8(v) != 0 {
            return None;
        }
        // (every byte is below 0x80 now, so the signed compares order them as bytes)
        let byte = |b: u8| _mm_set1_epi8(b as i8);
        let eq = |b: u8| _mm_cmpeq_epi8(v, byte(b));
        let between = |low: u8, high: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(v, byte(low - 1)),
                _mm_cmplt_epi8(v, byte(high + 1)),
            )
        };
        let controls = _mm_or_si128(_mm_cmplt_epi8(v, byte(0x20)), eq(0x7F));
        let mut white = _mm_or_si128(
            _mm_or_si128(eq(b' '), eq(b'\t')),
            _mm_or_si128(eq(b'\n'), eq(b'\r')),
        );
        if !clean_text {
            white = _mm_or_si128(white, _mm_or_si128(eq(0x0B), eq(0x0C)));
        }
        if _mm_movemask_epi8(_mm_andnot_si128(white, controls)) != 0 {
            return None;
        }
        let punct = _mm_or_si128(
            _mm_or_si128(between(0x21, 0x2F), between(0x3A, 0x40)),
            _mm_or_si128(between(0x5B, 0x60), between(0x7B, 0x7E)),
        );
        let mapped = if lowercase {
            _mm_or_si128(v, _mm_and_si128(between(b'A', b'Z'), byte(0x20)))
        } else {
            v
        };
        let mut classed = Classed {
            mapped: [0; 2 * BLOCK],
            white: _mm_movemask_epi8(white) as u32,
            punct: _mm_movemask_epi8(punct) as u32,
        };
        _mm_storeu_si128(classed.mapped.as_mut_ptr().cast(), mapped);
        Some(classed)
    }
}

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use std::arch::aarch64::*;

    use super::{Classed, BLOCK};

    /// Each lane's bit in its byte of a mask: lane `i` weighs `1 << (i % 8)`.
    const WEIGHTS: [u8; BLOCK] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

    #[inline(always)]
    pub(super) unsafe fn classify(
        block: &[u8; BLOCK],
        clean_text: bool,
        lowercase: bool,
    ) -> Option<Classed> {
        let v = vld1q_u8(block.as_ptr());
        if vmaxvq_u8(v) >= 0x80 {
            return None;
        }
        let byte = |b: u8| vdupq_n_u8(b);
        let eq = |b: u8| vceqq_u8(v, byte(b));
        // `v - low < high - low + 1` as unsigned bytes: `v` in `low..=high`.
        let between = |low: u8, high: u8| vcltq_u8(vsubq_u8(v, byte(low)), byte(high - low + 1));
        let controls = vorrq_u8(vcltq_u8(v, byte(0x20)), eq(0x7F));
        let mut white = vorrq_u8(
            vorrq_u8(eq(b' '), eq(b'\t')),
            vorrq_u8(eq(b'\n'), eq(b'\r')),
        );
        if !clean_text {
            white = vorrq_u8(white, vorrq_u8(eq(0x0B), eq(0x0C)));
        }
        if vmaxvq_u8(vbicq_u8(controls, white)) != 0 {
            return None;
        }
        let punct = vorrq_u8(
            vorrq_u8(between(0x21, 0x2F), between(0x3A, 0x40)),
            vorrq_u8(between(0x5B, 0x60), between(0x7B, 0x7E)),
        );
        let mapped = if lowercase {
            vorrq_u8(v, vandq_u8(between(b'A', b'Z'), byte(0x20)))
        } else {
            v
        };
        // No `movemask` on NEON: each lane keeps its bit of `WEIGHTS`, and each half's eight
        // distinct bits add up (no carries) to that half's byte of the mask.
        let weights = vld1q_u8(WEIGHTS.as_ptr());
        let mask = |m: uint8x16_t| {
            let bits = vandq_u8(m, weights);
            u32::from(vaddv_u8(vget_low_u8(bits))) | u32::from(vaddv_u8(vget_high_u8(bits))) << 8
        };
        let mut classed = Classed {
            mapped: [0; 2 * BLOCK],
            white: mask(white),
            punct: mask(punct),
        };
        vst1q_u8(classed.mapped.as_mut_ptr(), mapped);
        Some(classed)
    }
}

#[cfg(any(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    )),
    test
))]
mod words {
    use super::{Classed, BLOCK};

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

    /// The high bit of each byte of `mask`, gathered into the low eight bits.
    #[inline(always)]
    const fn gather(mask: u64) -> u32 {
        ((mask >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
    }

    #[inline(always)]
    pub(super) fn classify(
        block: &[u8; BLOCK],
        clean_text: bool,
        lowercase: bool,
    ) -> Option<Classed> {
        let mut classed = Classed {
            mapped: [0; 2 * BLOCK],
            white: 0,
            punct: 0,
        };
        for half in 0..2 {
            let word = u64::from_le_bytes(block[8 * half..8 * half + 8].try_into().ok()?);
            if word & HIGH != 0 {
                return None;
            }
            let eq = |b: u8| in_range(word, b, b);
            let controls = in_range(word, 0, 0x1F) | eq(0x7F);
            let mut white = eq(b' ') | eq(b'\t') | eq(b'\n') | eq(b'\r');
            if !clean_text {
                white |= eq(0x0B) | eq(0x0C);
            }
            if controls & !white != 0 {
                return None;
            }
            let punct = in_range(word, 0x21, 0x2F)
                | in_range(word, 0x3A, 0x40)
                | in_range(word, 0x5B, 0x60)
                | in_range(word, 0x7B, 0x7E);
            let mapped = if lowercase {
                word | in_range(word, b'A', b'Z') >> 2
            } else {
                word
            };
            classed.mapped[8 * half..8 * half + 8].copy_from_slice(&mapped.to_le_bytes());
            classed.white |= gather(white) << (8 * half);
            classed.punct |= gather(punct) << (8 * half);
        }
        Some(classed)
    }

    #[test]
    fn gather_takes_each_bytes_high_bit() {
        for bits in 0..256u32 {
            let mask = (0..8).fold(0u64, |m, i| m | u64::from(bits >> i & 1) << (8 * i + 7));
            assert_eq!(gather(mask), bits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_classes_every_block_as_the_bytes_say() {
        let mut state: u64 = 9;
        for round in 0..20_000 {
            let clean_text = round % 2 == 0;
            let lowercase = round % 3 == 0;
            let block: [u8; BLOCK] = std::array::from_fn(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                let pick = (state >> 33) as usize;
                match pick % 20 {
                    0 => (pick >> 8) as u8, // any byte, often beyond ASCII
                    1 => b"\t\n\r\x0b\x0c\x01\x7f"[(pick >> 8) % 7],
                    _ => 0x20 + ((pick >> 8) % 0x5F) as u8,
                }
            });
            let got = classify(&block, clean_text, lowercase);
            let words = words::classify(&block, clean_text, lowercase);
            assert_eq!(got.is_some(), words.is_some(), "{block:?}");
            let plain = block.iter().all(|&b| {
                b < 0x80
                    && (b >= 0x20 && b != 0x7F
                        || matches!(b, b'\t' | b'\n' | b'\r')
                        || !clean_text && matches!(b, 0x0B | 0x0C))
            });
            assert_eq!(got.is_some(), plain, "{block:?}");
            let (Some(got), Some(words)) = (got, words) else {
                continue;
            };
            for (i, &b) in block.iter().enumerate() {
                let white = b.is_ascii_whitespace() || b == 0x0B;
                assert_eq!(got.white >> i & 1 == 1, white, "{b:#x}");
                assert_eq!(got.punct >> i & 1 == 1, b.is_ascii_punctuation(), "{b:#x}");
                let mapped = if lowercase { b.to_ascii_lowercase() } else { b };
                assert_eq!(got.mapped[i], mapped);
            }
            assert_eq!(
                (got.mapped, got.white, got.punct),
                (words.mapped, words.white, words.punct)
            );
        }
    }

    #[test]
    fn a_prefix_is_classed_as_its_bytes_then_word_bytes() {
        let mut state: u64 = 5;
        for round in 0..20_000 {
            let (clean_text, lowercase) = (round % 2 == 0, round % 3 == 0);
            let block: [u8; BLOCK] = std::array::from_fn(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                let pick = (state >> 33) as usize;
                match pick % 8 {
                    0 => 0x80 + (pick >> 8) as u8 % 0x80,
                    1 => b"\t\n\r\x0b\x01"[(pick >> 8) % 5],
                    _ => 0x20 + ((pick >> 8) % 0x5F) as u8,
                }
            });
            let len = ascii_prefix(&block);
            assert_eq!(len, block.iter().take_while(|b| b.is_ascii()).count());
            if len == 0 || len == BLOCK {
                continue;
            }
            let mut padded = [b'a'; BLOCK];
            padded[..len].copy_from_slice(&block[..len]);
            let want = classify(&padded, clean_text, lowercase);
            let got = classify_prefix(&block, len, clean_text, lowercase);
            assert_eq!(got.is_some(), want.is_some(), "{block:?}");
            if let (Some(got), Some(want)) = (got, want) {
                assert_eq!(
                    (got.mapped, got.white, got.punct),
                    (want.mapped, want.white, want.punct)
                );
            }
        }
    }
}
