//! Which of the processor's vector extensions the core may use.
//!
//! The core picks its code paths at run time from what the CPU reports. One switch narrows
//! that: `WORDSPLIT_NO_AVX512` set (to anything but `0` or nothing) in the environment makes
//! an AVX-512 machine run the AVX2 paths, so it measures what an AVX2-only CPU (Zen 3, most
//! laptops) gets from the same build. It is read once, at the first encode.

use std::sync::OnceLock;

/// Whether the AVX-512 code paths may run (the CPU still has to have the extensions each
/// path checks for): false when `WORDSPLIT_NO_AVX512` is set.
///
/// ```
/// // In a process started without WORDSPLIT_NO_AVX512:
/// # if std::env::var_os("WORDSPLIT_NO_AVX512").is_none() {
/// assert!(wordsplit::cpu::avx512_allowed());
/// # }
/// ```
#[inline]
pub fn avx512_allowed() -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    *ALLOWED.get_or_init(|| switch_allows(std::env::var_os("WORDSPLIT_NO_AVX512").as_deref()))
}

/// Whether a value of `WORDSPLIT_NO_AVX512` leaves AVX-512 on: unset, empty or `0`.
fn switch_allows(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_none_or(|value| value.is_empty() || value == "0")
}

#[cfg(test)]
mod tests {
    use super::switch_allows;
    use std::ffi::OsStr;

    #[test]
    fn only_a_set_switch_turns_avx512_off() {
        assert!(switch_allows(None));
        assert!(switch_allows(Some(OsStr::new(""))));
        assert!(switch_allows(Some(OsStr::new("0"))));
        assert!(!switch_allows(Some(OsStr::new("1"))));
        assert!(!switch_allows(Some(OsStr::new("yes"))));
    }
}
