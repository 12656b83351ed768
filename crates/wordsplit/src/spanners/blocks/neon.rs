//! The classifier of aarch64: [`Neon`], sixteen bytes at a time (NEON is part of every
//! aarch64 CPU that runs Linux, so the build needs no run-time check).

use std::arch::aarch64::*;

use super::bitmaps::Classes;
use super::Classify;

/// Each lane's bit in its byte of a bitmap: lane `i` of a register weighs `1 << (i % 8)`.
const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

/// The block as four 16-byte registers. NEON has no instruction that moves each lane's top
/// bit out to a general register (x86's `movemask`): a class's four compares (each lane all
/// ones or zero) keep each lane's own bit of [`WEIGHTS`], and three rounds of pairwise
/// additions sum each run of eight lanes into one byte (the bits are distinct, so no sum
/// carries), which leaves the 64-bit bitmap in the register's low half.
#[derive(Clone, Copy)]
pub(in crate::spanners) struct Neon;

impl Classify for Neon {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Classes {
        // SAFETY: NEON is part of the aarch64 targets' baseline (the module is compiled only
        // with it); the loads read the 64 bytes of `block` and the 16 of `WEIGHTS`.
        unsafe {
            let at = |k: usize| vld1q_u8(block.as_ptr().add(16 * k));
            let v = [at(0), at(1), at(2), at(3)];
            let weights = vld1q_u8(WEIGHTS.as_ptr());
            Classes {
                valid: u64::MAX,
                letter: bitmap(v, weights, |x| {
                    in_range(vorrq_u8(x, vdupq_n_u8(0x20)), b'a', 26)
                }),
                upper: bitmap(v, weights, |x| in_range(x, b'A', 26)),
                digit: bitmap(v, weights, |x| in_range(x, b'0', 10)),
                space: bitmap(v, weights, |x| vorrq_u8(in_range(x, 0x09, 5), eq(x, b' '))),
                newline: bitmap(v, weights, |x| vorrq_u8(eq(x, b'\n'), eq(x, b'\r'))),
                blank: bitmap(v, weights, |x| eq(x, b' ')),
                apostrophe: bitmap(v, weights, |x| eq(x, b'\'')),
                slash: bitmap(v, weights, |x| eq(x, b'/')),
                non_ascii: bitmap(v, weights, |x| vcgeq_u8(x, vdupq_n_u8(0x80))),
                cont: bitmap(v, weights, |x| in_range(x, 0x80, 0x40)),
            }
        }
    }
}

/// The bitmap of the lanes of the block `v` where `class` is all ones (see [`Neon`]).
///
/// # Safety
/// NEON (as every function of this module): the aarch64 baseline.
#[inline(always)]
unsafe fn bitmap(
    v: [uint8x16_t; 4],
    weights: uint8x16_t,
    class: impl Fn(uint8x16_t) -> uint8x16_t,
) -> u64 {
    let t = v.map(|x| vandq_u8(class(x), weights));
    let halves = (vpaddq_u8(t[0], t[1]), vpaddq_u8(t[2], t[3]));
    let quarters = vpaddq_u8(halves.0, halves.1);
    vgetq_lane_u64::<0>(vreinterpretq_u64_u8(vpaddq_u8(quarters, quarters)))
}

/// `x - lo < width` as unsigned bytes: the lanes of `x` in `lo..lo + width`.
#[inline(always)]
unsafe fn in_range(x: uint8x16_t, lo: u8, width: u8) -> uint8x16_t {
    vcltq_u8(vsubq_u8(x, vdupq_n_u8(lo)), vdupq_n_u8(width))
}

/// The lanes of `x` equal to `byte`.
#[inline(always)]
unsafe fn eq(x: uint8x16_t, byte: u8) -> uint8x16_t {
    vceqq_u8(x, vdupq_n_u8(byte))
}
