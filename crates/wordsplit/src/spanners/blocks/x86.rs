//! The classifiers of x86-64: [`Sse2`] (the baseline), [`Avx2`] and [`Avx512`] (checked at
//! run time), and [`X86`], which picks one of them per block.

use super::bitmaps::Classes;
use super::Classify;

/// 16 bytes at a time: SSE2 is part of the x86-64 baseline.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(in crate::spanners) struct Sse2;

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
pub(in crate::spanners) struct Avx2;

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
pub(in crate::spanners) struct Avx512;

#[cfg(target_arch = "x86_64")]
impl Classify for Avx512 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        // SAFETY: only used when AVX-512BW is present (`X86`, the tests).
        unsafe { classify_avx512(block) }
    }
}

/// [`Avx512`] or [`Avx2`] where the processor has it (a branch per block that always goes
/// the same way), else [`Sse2`]. Only the classification is compiled for AVX2, called once per
/// block: the whole block loop compiled for it runs more instructions and stops the piece loop's
/// body being inlined.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(in crate::spanners) struct X86 {
    pub(in crate::spanners) avx512: bool,
    pub(in crate::spanners) avx2: bool,
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
