//! Ranks in SIMD registers ([`Lanes`]) and what a register of each instruction set does for
//! them ([`Register`]): a sweep is a minimum over a few registers, with no search.

use crate::tables::NO_RANK;

use super::ranks::Ranks;

/// `R::WORDS * G` ranks in `G` SIMD registers `R` (SSE, AVX2 or AVX-512), each lane holding
/// its rank above `log2(N)` bits of its own position (and `NO_RANK` as it is), with the top
/// bit flipped so that signed compares order them as unsigned: the lowest word is then the
/// lowest rank and, among equal ranks, the leftmost, and it names its lane itself, so a
/// sweep is a minimum with no search for where it was (a quarter of a round's latency, which
/// chains round after round). Written one lane at a time by masking, never through memory:
/// after a merge stored two or three ranks, the next sweep's 16-byte loads of the array
/// could not take them from the pending 4-byte stores (no store-to-load forwarding from
/// narrower stores) and waited for the stores to reach the cache, every round. Ranks must be
/// below `2^31 / N` ([`packs`](super::packs),
/// [`MergeTables::rank_bound`](crate::tables::MergeTables::rank_bound)), so that a word is
/// never `NO_RANK` (2^27 - 1 at lane 15 of 16 is `0x7FFF_FFFF`).
///
/// Lanes of SSE registers run on every x86-64 CPU; those of AVX2 and AVX-512 registers only
/// inside [`encode_avx2`](super::avx2::encode_avx2) and
/// [`encode_avx512`](super::avx512::encode_avx512), compiled for those instruction sets, into
/// which their methods are inlined.
#[derive(Clone, Copy)]
pub(super) struct Lanes<R: Register, const G: usize>([R; G]);

/// `rank` at lane `at` of `N` as a [`Lanes`] word (before the top bit is flipped).
#[inline(always)]
fn tagged<const N: usize>(rank: u32, at: usize) -> u32 {
    if rank == NO_RANK {
        NO_RANK
    } else {
        rank << N.trailing_zeros() | at as u32
    }
}

impl<const N: usize, R: Register, const G: usize> Ranks<N> for Lanes<R, G> {
    #[inline(always)]
    fn from_array(ranks: &[u32; N]) -> Self {
        const { assert!(N == R::WORDS * G && N.is_power_of_two()) };
        let words: [u32; N] = std::array::from_fn(|i| tagged::<N>(ranks[i], i) ^ 0x8000_0000);
        // SAFETY: the CPU has `R`'s instruction set (see `Lanes`); load k reads the words
        // from `R::WORDS * k`, in `words`.
        Self(std::array::from_fn(|k| unsafe {
            R::load(words.as_ptr().add(R::WORDS * k))
        }))
    }

    #[inline(always)]
    fn set(&mut self, at: usize, rank: u32) {
        // SAFETY: as in `from_array`.
        unsafe {
            let at_lane = R::splat(at as u32);
            let value = R::splat(tagged::<N>(rank, at) ^ 0x8000_0000);
            for (k, group) in self.0.iter_mut().enumerate() {
                let lanes = R::counting_from((R::WORDS * k) as u32);
                *group = group.put_where_equal(lanes, at_lane, value);
            }
        }
    }

    #[inline(always)]
    fn lowest(&self) -> (usize, u32) {
        // Halving, so the minimum takes log2(G) steps rather than G - 1 in a chain.
        let mut groups = self.0;
        let mut width = G;
        while width > 1 {
            width /= 2;
            for k in 0..width {
                // SAFETY: as in `from_array`.
                groups[k] = unsafe { groups[k].min(groups[k + width]) };
            }
        }
        // SAFETY: as in `from_array`.
        let word = unsafe { groups[0].least() } ^ 0x8000_0000;
        if word == NO_RANK {
            (0, NO_RANK)
        } else {
            ((word as usize) & (N - 1), word >> N.trailing_zeros())
        }
    }
}

/// A SIMD register of 32-bit words, and what [`Lanes`] does with it: each method one or a
/// few instructions of the register's instruction set.
///
/// # Safety
/// Each method may be called only on a CPU with the register's instruction set.
pub(super) trait Register: Copy {
    /// Words per register.
    const WORDS: usize;
    /// The `WORDS` words at `from`.
    unsafe fn load(from: *const u32) -> Self;
    /// `word` in every lane.
    unsafe fn splat(word: u32) -> Self;
    /// `first`, `first + 1`, ... lane by lane.
    unsafe fn counting_from(first: u32) -> Self;
    /// `self`, with `value`'s word in the lanes where `lanes` and `at` are equal.
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self;
    /// The lane-wise minimum of signed words.
    unsafe fn min(self, other: Self) -> Self;
    /// The least of its words, as signed words.
    unsafe fn least(self) -> u32;
}
