//! Helpers shared by the crate's unit tests: pseudo-random values and texts.

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

/// `count` texts of 1 to `max_len` of `alphabet`'s strings, drawn by [`xorshift`] from
/// `seed`: the same pseudo-random texts on every run.
pub(crate) fn texts(seed: u64, alphabet: &[&str], count: usize, max_len: usize) -> Vec<String> {
    let mut state = seed;
    let mut next = move || xorshift(&mut state) as usize;
    (0..count)
        .map(|_| {
            let len = 1 + next() % max_len;
            (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect()
        })
        .collect()
}
