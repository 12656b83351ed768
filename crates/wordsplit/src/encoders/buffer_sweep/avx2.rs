//! AVX2: registers of eight ranks for [`Lanes`], and the build of the sweep for CPUs with
//! AVX2, which keeps the ranks of pieces of 17 to 64 bytes in them.

use crate::tables::MergeTables;

use super::lanes::{Lanes, Register};
use super::{encode_with_any_cpu, on_stack, packs, PAD};

/// Buffer-sweep on CPUs with AVX2 (x86-64 CPUs since 2013-2015): pieces of 17 to 64 bytes
/// keep their ranks in AVX2 registers ([`Lanes`]), where SSE has registers enough for 32
/// ranks and pieces of 33 to 64 bytes swept them in memory; shorter ones as
/// [`encode_with_any_cpu`], whose instructions take three operands here.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn encode_avx2(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    use std::arch::x86_64::__m256i;
    let rank_bound = t.rank_bound();
    match piece.len() {
        17..=32 if packs::<32>(rank_bound) => {
            on_stack::<32, { 32 + PAD }, Lanes<__m256i, 4>>(t, piece, out)
        }
        33..=64 if packs::<64>(rank_bound) => {
            on_stack::<64, { 64 + PAD }, Lanes<__m256i, 8>>(t, piece, out)
        }
        _ => encode_with_any_cpu(t, piece, out),
    }
}

/// AVX2 ([`encode_avx2`]).
impl Register for std::arch::x86_64::__m256i {
    const WORDS: usize = 8;
    #[inline(always)]
    unsafe fn load(from: *const u32) -> Self {
        // SAFETY: the caller's: AVX2, eight words at `from`.
        unsafe { std::arch::x86_64::_mm256_loadu_si256(from.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(word: u32) -> Self {
        // SAFETY: the caller's: AVX2.
        unsafe { std::arch::x86_64::_mm256_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn counting_from(first: u32) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX2.
        unsafe {
            _mm256_add_epi32(
                _mm256_set1_epi32(first as i32),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            )
        }
    }
    #[inline(always)]
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX2.
        unsafe { _mm256_blendv_epi8(self, value, _mm256_cmpeq_epi32(lanes, at)) }
    }
    #[inline(always)]
    unsafe fn min(self, other: Self) -> Self {
        // SAFETY: the caller's: AVX2.
        unsafe { std::arch::x86_64::_mm256_min_epi32(self, other) }
    }
    #[inline(always)]
    unsafe fn least(self) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX2, which has SSE2.
        unsafe {
            let low = _mm256_castsi256_si128(self);
            low.min(_mm256_extracti128_si256::<1>(self)).least()
        }
    }
}
