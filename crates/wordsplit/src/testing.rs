//! Helpers shared by the crate's unit tests.

/// The next value of a xorshift64 generator whose state is `state` (not 0): the same
/// pseudo-random sequence on every run, with no dependency.
///
/// ```text
/// let mut state = 0x2545_f491_4f6c_dd1d;
/// let roll = xorshift(&mut state) % 6;
/// ```
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
