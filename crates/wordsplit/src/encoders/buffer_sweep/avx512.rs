//! AVX-512: registers of sixteen ranks for [`Lanes`], and the build of the sweep for CPUs
//! with AVX-512, which keeps the ranks of pieces of 65 to 128 bytes in them.

use crate::tables::MergeTables;

use super::avx2::encode_avx2;
use super::lanes::{Lanes, Register};
use super::{on_stack, packs, PAD, STACK_PIECE};

/// Pieces of 65 to 128 bytes on CPUs with AVX-512: their ranks in eight AVX-512 registers
/// ([`Lanes`]), faster than swept in memory (the long words of multilingual text). Shorter
/// pieces stay with [`encode_avx2`], whose eight AVX2 registers sweep them as fast as four
/// AVX-512 ones.
#[target_feature(enable = "avx512f,avx2")]
pub(super) unsafe fn encode_avx512(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    use std::arch::x86_64::__m512i;
    match piece.len() {
        65..=STACK_PIECE if packs::<STACK_PIECE>(t.rank_bound()) => {
            on_stack::<STACK_PIECE, { STACK_PIECE + PAD }, Lanes<__m512i, 8>>(t, piece, out)
        }
        _ => encode_avx2(t, piece, out),
    }
}

/// AVX-512F ([`encode_avx512`]).
impl Register for std::arch::x86_64::__m512i {
    const WORDS: usize = 16;
    #[inline(always)]
    unsafe fn load(from: *const u32) -> Self {
        // SAFETY: the caller's: AVX-512F, sixteen words at `from`.
        unsafe { std::arch::x86_64::_mm512_loadu_si512(from.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(word: u32) -> Self {
        // SAFETY: the caller's: AVX-512F.
        unsafe { std::arch::x86_64::_mm512_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn counting_from(first: u32) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX-512F.
        unsafe {
            _mm512_add_epi32(
                _mm512_set1_epi32(first as i32),
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            )
        }
    }
    #[inline(always)]
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX-512F.
        unsafe { _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(lanes, at), self, value) }
    }
    #[inline(always)]
    unsafe fn min(self, other: Self) -> Self {
        // SAFETY: the caller's: AVX-512F.
        unsafe { std::arch::x86_64::_mm512_min_epi32(self, other) }
    }
    #[inline(always)]
    unsafe fn least(self) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX-512F, which has AVX2.
        unsafe {
            let low = _mm512_castsi512_si256(self);
            low.min(_mm512_extracti64x4_epi64::<1>(self)).least()
        }
    }
}
