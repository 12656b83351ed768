//! `memcmp` and `bcmp` for the module, 32 and eight bytes at a time.
//!
//! wasm32 has no libc: the module gets these from compiler-builtins, which compares one byte
//! per step, and defines them weak so that a program can bring its own. The core compares
//! byte strings in its hot loops (the backtrack encoder checks that the next `max_len` bytes
//! repeat the previous query's inside a run of one character; token lookups compare the
//! bytes they find), where a compare of one byte per step takes most of the time of encoding
//! a long run of one letter.
//! Native builds use libc's: the symbols are exported on wasm32 only.

/// Compares `n` bytes at `a` and `b` as unsigned bytes: negative, 0 or positive as C's memcmp.
///
/// # Safety
/// `a` and `b` must be readable for `n` bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let word = |p: *const u8, at: usize| p.add(at).cast::<u64>().read_unaligned();
    let mut i = 0;
    // Equal stretches go 32 bytes a step, one branch for four words (the backtrack encoder
    // compares max_len bytes per token inside a run of one character); the first step that
    // differs is searched word by word below.
    while i + 32 <= n {
        let differ = (word(a, i) ^ word(b, i))
            | (word(a, i + 8) ^ word(b, i + 8))
            | (word(a, i + 16) ^ word(b, i + 16))
            | (word(a, i + 24) ^ word(b, i + 24));
        if differ != 0 {
            break;
        }
        i += 32;
    }
    while i + 8 <= n {
        let (x, y) = (word(a, i), word(b, i));
        if x != y {
            // Little-endian: the lowest differing bit is in the first differing byte.
            let shift = (x ^ y).trailing_zeros() & !7;
            return i32::from((x >> shift) as u8) - i32::from((y >> shift) as u8);
        }
        i += 8;
    }
    while i < n {
        let (x, y) = (*a.add(i), *b.add(i));
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// Whether `n` bytes at `a` and `b` differ (nonzero) or not (0): what `==` on slices calls.
///
/// # Safety
/// As [`memcmp`].
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    memcmp(a, b, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn orders_as_slices_do() {
        let base: Vec<u8> = (0..80u8).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..base.len() {
            for at in 0..n {
                for delta in [1u8, 0x7f, 0x80, 0xff] {
                    let mut other = base.clone();
                    other[at] = other[at].wrapping_add(delta);
                    let got = unsafe { memcmp(base.as_ptr(), other.as_ptr(), n) };
                    assert_eq!(got.cmp(&0), base[..n].cmp(&other[..n]), "n={n} at={at}");
                    assert_eq!(
                        got,
                        i32::from(base[at]) - i32::from(other[at]),
                        "the first difference decides"
                    );
                    assert_ne!(unsafe { bcmp(base.as_ptr(), other.as_ptr(), n) }, 0);
                }
            }
            let same = unsafe { memcmp(base.as_ptr(), base.clone().as_ptr(), n) };
            assert_eq!(same.cmp(&0), Ordering::Equal);
        }
    }
}
