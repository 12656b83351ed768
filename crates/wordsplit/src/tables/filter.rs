//! The token index's filters, one per length class of keys: one bit per hash class, set where
//! some token hashes to, so that most pieces that are not tokens are answered from a small
//! table that stays in the CPU's cache, without probing the large one.

/// The filter of the tokens of 1 to 16 bytes: 2^21 bits, indexed by the hash's top 21 bits
/// ([`may_hold`]); 256 KB stays in the CPU's cache, and leaves a tenth of its bits set or fewer.
pub(super) const FILTER_WORDS: usize = (1 << 21) / 64;
/// The filter of the longer tokens: 2^16 bits (8 KB), indexed by the top 16 bits of their hash.
pub(super) const LONG_FILTER_WORDS: usize = (1 << 16) / 64;

/// Whether `filter` lets `hash` through (some token has its filter bit): the bit the hash's
/// top bits pick among the filter's `64 * N` (a power of two). Its fixed size makes the
/// index a shift with no bounds check.
#[inline(always)]
pub(super) fn may_hold<const N: usize>(filter: &[u64; N], hash: u64) -> bool {
    let (word, bit) = filter_bit::<N>(hash);
    filter[word] & bit != 0
}

/// Sets `hash`'s bit in `filter` ([`may_hold`]).
pub(super) fn add_to_filter<const N: usize>(filter: &mut [u64; N], hash: u64) {
    let (word, bit) = filter_bit::<N>(hash);
    filter[word] |= bit;
}

/// The word and the bit mask of `hash`'s bit in a filter of `N` words.
#[inline(always)]
pub(super) fn filter_bit<const N: usize>(hash: u64) -> (usize, u64) {
    const { assert!(N.is_power_of_two()) };
    let index = hash >> (64 - (64 * N).trailing_zeros());
    ((index / 64) as usize, 1 << (index % 64))
}
