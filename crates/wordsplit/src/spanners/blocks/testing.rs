//! What the block scanners' tests share: their drivers run with every classifier, a mismatch
//! shown as pieces, exhaustive short strings and a random generator.

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
use super::neon::Neon;
use super::portable::Portable;
#[cfg(target_arch = "x86_64")]
use super::x86::{Avx2, Avx512, Sse2};
use super::Classify;

/// A block scanner's driver, with the classifier as a parameter.
pub(crate) trait Driver {
    /// The ends with `classify`.
    fn ends_with(&self, classify: impl Classify, text: &str) -> Vec<usize>;
    /// The ends with the classifier chosen at run time (`each_end`).
    fn ends(&self, text: &str) -> Vec<usize>;
}

/// The ends from every classifier this machine runs and from the one chosen at run time
/// (all equal, or a panic).
pub(crate) fn ends_of(driver: &impl Driver, text: &str) -> Vec<usize> {
    let ends = driver.ends_with(Portable, text);
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(driver.ends_with(Sse2, text), ends, "SSE2: {text:?}");
        if std::arch::is_x86_feature_detected!("avx2") {
            assert_eq!(driver.ends_with(Avx2, text), ends, "AVX2: {text:?}");
        }
        if std::arch::is_x86_feature_detected!("avx512bw") {
            assert_eq!(driver.ends_with(Avx512, text), ends, "AVX-512: {text:?}");
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    assert_eq!(driver.ends_with(Neon, text), ends, "NEON: {text:?}");
    assert_eq!(driver.ends(text), ends, "dispatched: {text:?}");
    ends
}

/// Panics, showing both as pieces, unless the ends `got` are the ends `want`.
pub(crate) fn assert_same_ends(name: &str, text: &str, want: &[usize], got: &[usize]) {
    if got != want {
        let pieces = |ends: &[usize]| -> Vec<String> {
            super::super::pieces_at(text, ends)
                .map(String::from)
                .collect()
        };
        panic!(
            "{name}: {text:?}\n want {:?}\n  got {:?}",
            pieces(want),
            pieces(got)
        );
    }
}

/// How long the exhaustive tests' strings get: one character less in debug builds
/// (`cargo test` without `--release`), which run them about 30 times slower.
pub(crate) const DEPTH: u32 = if cfg!(debug_assertions) { 4 } else { 5 };

/// Calls `check` on every string of `0..=max` characters from `alphabet`, each between
/// `before` and `after`.
pub(crate) fn every_string(
    alphabet: &[&str],
    max: u32,
    before: &str,
    after: &str,
    check: impl Fn(&str),
) {
    let n = alphabet.len();
    let mut text = String::new();
    for len in 0..=max {
        for mut code in 0..n.pow(len) {
            text.clear();
            text.push_str(before);
            for _ in 0..len {
                text.push_str(alphabet[code % n]);
                code /= n;
            }
            text.push_str(after);
            check(&text);
        }
    }
}
