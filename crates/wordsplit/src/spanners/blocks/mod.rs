//! What the block scanners ([`super::cl100k_blocks`], [`super::o200k_blocks`]) share: a
//! 64-byte block's class bitmaps (one bit per byte), the classifiers that compute them
//! (SSE2, AVX2, AVX-512, NEON, and a portable one on eight bytes at a time), and the start rules
//! both families have in common: digit runs (`\p{N}{1,n}`) and white space (`\s*[\r\n]+`,
//! `\s+(?!\S)`, with or without tiktoken's `\s++$`).
//!
//! * `bitmaps.rs`: [`Classes`], a block's bitmaps, and their completion with the classes of
//!   its non-ASCII characters;
//! * `decode.rs`: reading those characters (code points without a branch on their length);
//! * `x86.rs`, `neon.rs`, `portable.rs`: the classifiers ([`Classify`]), one per instruction set, and
//!   [`classifier`], the one for the processor running;
//! * `starts.rs`: the start rules, as bit arithmetic on the bitmaps;
//! * `tests.rs`: their tests; `testing.rs`: what the block scanners' tests share.

mod bitmaps;
mod decode;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon;
mod portable;
mod starts;
#[cfg(test)]
pub(super) mod testing;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86;

pub(super) use bitmaps::Classes;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
use neon::Neon;
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_feature = "neon")
)))]
use portable::Portable;
pub(super) use starts::{after, digit_starts, first_other_chars, white_space_starts};
#[cfg(target_arch = "x86_64")]
use x86::X86;

/// A way to compute the ASCII classes of a full block, and its non-ASCII and continuation
/// bytes.
pub(super) trait Classify: Copy {
    fn classify(self, block: &[u8; 64]) -> Classes;
}

/// The classifier for the processor running: [`X86`](x86::X86) (AVX2 where it has it, else SSE2) on
/// x86-64, [`Neon`](neon::Neon) on aarch64, [`Portable`](portable::Portable) elsewhere (the
/// WebAssembly module).
#[inline(always)]
pub(super) fn classifier() -> impl Classify {
    #[cfg(target_arch = "x86_64")]
    return X86 {
        avx512: crate::cpu::avx512_allowed() && std::arch::is_x86_feature_detected!("avx512bw"),
        avx2: std::arch::is_x86_feature_detected!("avx2"),
    };
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    return Neon;
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    )))]
    return Portable;
}
