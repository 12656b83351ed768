//! The merge priorities a sweep keeps, one per position: the trait, the ranks in memory and
//! their sweep ([`lowest`]), and which store each size of piece uses.

use crate::tables::NO_RANK;

#[cfg(target_arch = "x86_64")]
use super::lanes::Lanes;

/// The merge priorities of a sweep's `N` positions.
pub(super) trait Ranks<const N: usize> {
    fn from_array(ranks: &[u32; N]) -> Self;
    fn set(&mut self, at: usize, rank: u32);
    /// The first position of the lowest rank, and that rank (`NO_RANK` when nothing merges).
    fn lowest(&self) -> (usize, u32);
}

/// Ranks in memory, swept by [`lowest`].
impl<const N: usize> Ranks<N> for [u32; N] {
    #[inline(always)]
    fn from_array(ranks: &[u32; N]) -> Self {
        *ranks
    }
    #[inline(always)]
    fn set(&mut self, at: usize, rank: u32) {
        self[at] = rank;
    }
    #[inline(always)]
    fn lowest(&self) -> (usize, u32) {
        lowest(self)
    }
}

/// The ranks of sweeps of pieces of up to 8, 16 and 32 bytes: in SSE registers on x86-64
/// ([`Lanes`]), else in memory. Longer ones would need more registers than SSE has: they
/// take the wider registers of AVX2 and AVX-512 ([`encode_avx2`], [`encode_avx512`]) where
/// the CPU has them.
///
/// [`encode_avx2`]: super::avx2::encode_avx2
/// [`encode_avx512`]: super::avx512::encode_avx512
#[cfg(target_arch = "x86_64")]
pub(super) type Ranks8 = Lanes<std::arch::x86_64::__m128i, 2>;
#[cfg(target_arch = "x86_64")]
pub(super) type Ranks16 = Lanes<std::arch::x86_64::__m128i, 4>;
#[cfg(target_arch = "x86_64")]
pub(super) type Ranks32 = Lanes<std::arch::x86_64::__m128i, 8>;
#[cfg(not(target_arch = "x86_64"))]
pub(super) type Ranks8 = [u32; 8];
#[cfg(not(target_arch = "x86_64"))]
pub(super) type Ranks16 = [u32; 16];
#[cfg(not(target_arch = "x86_64"))]
pub(super) type Ranks32 = [u32; 32];

/// The first of the `4 * groups` lanes of `group(0..groups)` (at most 16 groups, a constant
/// once inlined) that equals `low` (whose lanes are all the same), one of which does.
/// Without a branch per group: the compares (each lane all ones or zero) are narrowed by
/// saturating packs to one byte per lane, which keeps them all ones or zero, and 16 lanes
/// at a time become one bit mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn first_equal(
    groups: usize,
    group: impl Fn(usize) -> std::arch::x86_64::__m128i,
    low: std::arch::x86_64::__m128i,
) -> usize {
    use std::arch::x86_64::*;
    debug_assert!(groups <= 16);
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        let equal = |k: usize| {
            if k < groups {
                _mm_cmpeq_epi32(group(k), low)
            } else {
                _mm_setzero_si128()
            }
        };
        let mut hits = 0u64;
        for c in 0..groups.div_ceil(4) {
            let k = 4 * c;
            let halves = (
                _mm_packs_epi32(equal(k), equal(k + 1)),
                _mm_packs_epi32(equal(k + 2), equal(k + 3)),
            );
            let bytes = _mm_packs_epi16(halves.0, halves.1);
            hits |= u64::from(_mm_movemask_epi8(bytes) as u32) << (16 * c);
        }
        hits.trailing_zeros() as usize
    }
}

/// The first position of the lowest rank, and that rank (`NO_RANK` when nothing merges).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn lowest<const N: usize>(ranks: &[u32; N]) -> (usize, u32) {
    let min = ranks.iter().fold(NO_RANK, |m, &r| m.min(r));
    (ranks.iter().position(|&r| r == min).unwrap_or(0), min)
}

/// The first position of the lowest rank, and that rank (`NO_RANK` when nothing merges),
/// four ranks at a time with SSE2 (part of every x86-64 CPU): the minimum of all `N`
/// without a branch, then the first group of four that holds it. (Left to itself, the
/// compiler unrolls the scalar loop into a chain of compares and branches, which
/// mispredict on the data.) SSE2 compares signed integers only, so ranks are compared
/// with their top bit flipped, which orders them as unsigned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn lowest<const N: usize>(ranks: &[u32; N]) -> (usize, u32) {
    use std::arch::x86_64::*;
    const { assert!(N.is_multiple_of(4) && N > 0) };
    // SAFETY: SSE2 is part of the x86-64 baseline; every load reads four u32 inside
    // `ranks` (k < N / 4).
    unsafe {
        let flip = _mm_set1_epi32(i32::MIN);
        let group = |k: usize| {
            let at = ranks.as_ptr().add(4 * k).cast::<__m128i>();
            _mm_xor_si128(_mm_loadu_si128(at), flip)
        };
        let min = |a: __m128i, b: __m128i| {
            let a_above = _mm_cmpgt_epi32(a, b);
            _mm_or_si128(_mm_and_si128(a_above, b), _mm_andnot_si128(a_above, a))
        };
        let mut low = group(0);
        for k in 1..N / 4 {
            low = min(low, group(k));
        }
        // Fold the four lanes: afterwards every lane holds the minimum.
        low = min(low, _mm_shuffle_epi32::<0b01_00_11_10>(low));
        low = min(low, _mm_shuffle_epi32::<0b10_11_00_01>(low));
        let rank = (_mm_cvtsi128_si32(low) as u32) ^ 0x8000_0000;
        if N <= 64 {
            // The position without a branch per group (which group holds it is data).
            return (first_equal(N / 4, group, low), rank);
        }
        for k in 0..N / 4 {
            let hits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(group(k), low)));
            if hits != 0 {
                return (4 * k + hits.trailing_zeros() as usize, rank);
            }
        }
        (0, NO_RANK)
    }
}
