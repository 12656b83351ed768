//! SSE: the baseline's registers for [`Lanes`](super::lanes::Lanes), and the build of the
//! whole sweep for CPUs with SSE4.1.

use crate::tables::MergeTables;

use super::encode_with_any_cpu;
use super::lanes::Register;

/// [`encode_with_any_cpu`] compiled for CPUs with SSE4.1 (nearly all x86-64 CPUs since 2008;
/// the x86-64 baseline has SSE2 only): the sweeps' compare-and-select sequences on
/// [`Lanes`](super::lanes::Lanes) become single min and blend instructions (`pminsd`,
/// `pblendvb`).
#[target_feature(enable = "sse4.1")]
pub(super) unsafe fn encode_sse41(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    encode_with_any_cpu(t, piece, out);
}

/// SSE2, part of the x86-64 baseline: the minimum and the masked write are three
/// instructions each here, one (`pminsd`, `pblendvb`) where the caller is compiled for
/// SSE4.1 or later.
impl Register for std::arch::x86_64::__m128i {
    const WORDS: usize = 4;
    #[inline(always)]
    unsafe fn load(from: *const u32) -> Self {
        // SAFETY: the caller's: four words at `from`.
        unsafe { std::arch::x86_64::_mm_loadu_si128(from.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(word: u32) -> Self {
        // SAFETY: SSE2.
        unsafe { std::arch::x86_64::_mm_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn counting_from(first: u32) -> Self {
        let k = first as i32;
        // SAFETY: SSE2.
        unsafe { std::arch::x86_64::_mm_setr_epi32(k, k + 1, k + 2, k + 3) }
    }
    #[inline(always)]
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: SSE2.
        unsafe {
            let here = _mm_cmpeq_epi32(lanes, at);
            _mm_or_si128(_mm_and_si128(here, value), _mm_andnot_si128(here, self))
        }
    }
    #[inline(always)]
    unsafe fn min(self, other: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: SSE2.
        unsafe {
            let above = _mm_cmpgt_epi32(self, other);
            _mm_or_si128(_mm_and_si128(above, other), _mm_andnot_si128(above, self))
        }
    }
    #[inline(always)]
    unsafe fn least(self) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: SSE2.
        unsafe {
            let low = self.min(_mm_shuffle_epi32::<0b01_00_11_10>(self));
            let low = low.min(_mm_shuffle_epi32::<0b10_11_00_01>(low));
            _mm_cvtsi128_si32(low) as u32
        }
    }
}
