//! The portable classifier ([`Portable`]): eight bytes at a time in a `u64`, for targets
//! other than x86-64 and aarch64 (the WebAssembly module), and the reference the tests hold
//! the others to.

use super::bitmaps::Classes;
use super::Classify;

/// Eight bytes at a time in a `u64` (SWAR), for other targets (the WebAssembly module): each
/// class is a comparison per byte lane, done with additions that cannot carry between lanes;
/// its lanes' top bits then gathered into eight bits of the bitmap.
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    ),
    allow(dead_code)
)]
#[derive(Clone, Copy)]
pub(super) struct Portable;

/// The top bit of every byte lane.
const TOPS: u64 = 0x8080_8080_8080_8080;

/// `x`'s lanes (ASCII: their top bits clear) in `lo..=hi`, as each lane's top bit.
#[inline(always)]
fn lanes_in(x: u64, lo: u8, hi: u8) -> u64 {
    // A lane plus at most 0x80 stays below 0x100: no carry reaches the next lane.
    let at_least_lo = x + (0x80 - u64::from(lo)) * 0x0101_0101_0101_0101;
    let above_hi = x + (0x7F - u64::from(hi)) * 0x0101_0101_0101_0101;
    at_least_lo & !above_hi & TOPS
}

/// The top bits of `m`'s eight lanes (`m` has no other bits) as the bits 0-7 of a byte.
#[inline(always)]
fn gather(m: u64) -> u64 {
    // Lane i's bit moves to bit 56 + i; no two partial products collide.
    ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

impl Classify for Portable {
    fn classify(self, block: &[u8; 64]) -> Classes {
        let mut c = Classes {
            valid: u64::MAX,
            ..Classes::default()
        };
        for (k, word) in block.chunks_exact(8).enumerate() {
            let w = u64::from_le_bytes(word.try_into().unwrap());
            let ascii = !w & TOPS; // lanes below 0x80
            let x = w & !TOPS;
            let at = 8 * k;
            let put = |field: &mut u64, lanes: u64| *field |= gather(lanes) << at;
            let blank = lanes_in(x, b' ', b' ') & ascii;
            put(
                &mut c.letter,
                lanes_in(x | 0x2020_2020_2020_2020, b'a', b'z') & ascii,
            );
            put(&mut c.upper, lanes_in(x, b'A', b'Z') & ascii);
            put(&mut c.digit, lanes_in(x, b'0', b'9') & ascii);
            put(&mut c.space, (lanes_in(x, 0x09, 0x0D) & ascii) | blank);
            put(
                &mut c.newline,
                (lanes_in(x, b'\n', b'\n') | lanes_in(x, b'\r', b'\r')) & ascii,
            );
            put(&mut c.blank, blank);
            put(&mut c.apostrophe, lanes_in(x, b'\'', b'\'') & ascii);
            put(&mut c.slash, lanes_in(x, b'/', b'/') & ascii);
            put(&mut c.non_ascii, w & TOPS);
            // 0x80..=0xBF: the top bit set and the next one clear.
            put(&mut c.cont, w & !(w << 1) & TOPS);
        }
        c
    }
}
