//! The piece-start rules both block-scanner families share, as bit arithmetic on a block's
//! bitmaps: digit runs (`\p{N}{1,n}`), white space (`\s*[\r\n]+`, `\s+(?!\S)`, with or
//! without tiktoken's `\s++$`), and the first character of an O run.

use super::bitmaps::Classes;
use crate::spanners::classes::{CharTable, WS};

/// The bitmaps `x` of a block and `y` of the next as one 128-bit bitmap.
#[inline(always)]
fn wide(x: u64, y: u64) -> u128 {
    x as u128 | (y as u128) << 64
}

/// `x` shifted one byte later, the previous block's top bit entering at bit 0.
#[inline(always)]
pub(in crate::spanners) fn after(x: u64, prev: u64) -> u64 {
    (x << 1) | (prev >> 63)
}

/// The bytes of the first character of each O run no space precedes: `other_starts` (its
/// lead bytes), then the continuation bytes after each, found by adding the lead byte to the
/// run of continuation bytes it starts, which carries through them (and on from the block
/// before when `carried`, the same bytes of that block, has its top bit set). A word's
/// prefix is such a character.
#[inline(always)]
pub(in crate::spanners) fn first_other_chars(
    other: u64,
    other_starts: u64,
    cont: u64,
    carried: u64,
) -> u64 {
    let first_chars = other_starts | (other & cont);
    (first_chars.wrapping_add(other_starts | (carried >> 63)) ^ first_chars) & first_chars
}
/// The starts of the digit runs of block `c` (`prev` the block before it), pieces of
/// `max_digits` (1 or 3) numbers; `digits` carries, from block to block, how many digit
/// characters the run at the block's end has had since its last start, mod 3.
#[inline(always)]
pub(in crate::spanners) fn digit_starts(
    max_digits: usize,
    c: &Classes,
    prev: &Classes,
    digits: &mut u32,
) -> u64 {
    let d = c.digit;
    if d == 0 {
        *digits = 0;
        return 0;
    }
    if max_digits == 1 {
        return d & !c.cont;
    }
    debug_assert_eq!(max_digits, 3);
    let pd = prev.digit;
    let run_starts = d & !after(d, pd);
    let continued = pd >> 63 != 0;
    let mut x;
    if d & c.non_ascii == 0 {
        // ASCII digits: every third byte from the run's start.
        x = run_starts;
        if continued && d & 1 != 0 {
            // The run from the previous block: its next start is `3 - digits` characters on.
            let run = (d.wrapping_add(1) ^ d) & d;
            x |= (1u64 << ((3 - *digits) % 3)) & run;
        }
        // `d3`: bytes with two digits before them; a start three bytes back then makes one
        // here. Doubling the step covers the block in five rounds.
        let d3 = d & after(d, pd) & ((d << 2) | (pd >> 62));
        x |= (x << 3) & d3;
        let d6 = d3 & (d3 << 3);
        if d6 != 0 {
            x |= (x << 6) & d6;
            let d12 = d6 & (d6 << 6);
            x |= (x << 12) & d12;
            let d24 = d12 & (d12 << 12);
            x |= (x << 24) & d24;
            let d48 = d24 & (d24 << 24);
            x |= (x << 48) & d48;
        }
        *digits = if d >> 63 != 0 {
            (64 - (63 - x.leading_zeros())) % 3
        } else {
            0
        };
    } else {
        // Non-ASCII numbers (rare): count characters.
        x = 0;
        let mut count = if continued { *digits } else { 0 };
        let mut leads = d & !c.cont;
        while leads != 0 {
            let bit = leads & leads.wrapping_neg();
            if run_starts & bit != 0 {
                count = 0;
            }
            if count == 0 {
                x |= bit;
            }
            count = (count + 1) % 3;
            leads &= leads - 1;
        }
        *digits = if d >> 63 != 0 { count } else { 0 };
    }
    x
}

/// The white-space starts of block `c` at `base` (`p` the block before it, `q` the next),
/// given the bytes an O piece takes after its O run (`eaten`, and `eaten_before` the
/// previous block's): the first character of a white-space run, unless eaten; a G character
/// right after an eaten byte; a G character right after a CR/LF not eaten, when its run of G
/// characters is followed by a non-space character, or ends the text without
/// `whole_trailing_space` (tiktoken's `\s++$`); and the last G character before a non-space
/// character (`\s+(?!\S)` leaves it). G is white space other than CR/LF.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(in crate::spanners) fn white_space_starts(
    whole_trailing_space: bool,
    b: &[u8],
    base: usize,
    c: &Classes,
    q: &Classes,
    p: &Classes,
    eaten: u64,
    eaten_before: u64,
) -> u64 {
    let g = c.space & !c.newline;
    let space_starts = c.space & !after(c.space, p.space);
    let after_eaten = after(eaten, eaten_before);
    let mut starts = (space_starts & !eaten) | (g & after_eaten);
    let after_break = g & after(c.newline, p.newline) & !after_eaten;
    if after_break != 0 {
        starts |= resolve_after_break(whole_trailing_space, b, base, c, q, after_break);
    }

    // The last G character before a non-space character.
    let non_space = c.valid & !c.space;
    let q_non_space = q.valid & !q.space;
    if c.non_ascii == 0 {
        starts |= g & ((non_space >> 1) | (q_non_space << 63));
    } else {
        // Its lead byte, up to three bytes before the last one (and in this block even when
        // the last byte is in the next).
        let cont = wide(c.cont, q.cont);
        let mut last = wide(g, q.space & !q.newline) & (wide(non_space, q_non_space) >> 1);
        for _ in 0..3 {
            last = (last & !cont) | ((last & cont) >> 1);
        }
        starts |= last as u64;
    }
    starts
}

/// Which of `candidates` (G characters right after a CR/LF no O piece took) start pieces:
/// those whose run of G characters is followed by a non-space character, or ends the text
/// without `whole_trailing_space`.
#[inline(always)]
fn resolve_after_break(
    whole_trailing_space: bool,
    b: &[u8],
    base: usize,
    c: &Classes,
    q: &Classes,
    candidates: u64,
) -> u64 {
    let g = wide(c.space & !c.newline, q.space & !q.newline);
    // Adding a candidate to its run carries into the byte after the run.
    let (sum, past_window) = g.overflowing_add(candidates as u128);
    let landing = sum & !g;
    let mut bad = landing & wide(c.newline, q.newline);
    if whole_trailing_space {
        bad |= landing & !wide(c.valid, q.valid);
    }
    if past_window {
        return resolve_after_break_slow(whole_trailing_space, b, base, candidates);
    }
    if bad == 0 {
        return candidates;
    }
    // The runs that land on a bad byte, without a loop per candidate (text such as " \n"
    // repeated lands every run on a line break): with the bits reversed, each bad landing
    // sits right below its run, and adding it one place up carries through the run and
    // clears it.
    let reversed = g.reverse_bits();
    let cleared = reversed & !reversed.wrapping_add(bad.reverse_bits() << 1);
    candidates & !(cleared.reverse_bits() as u64)
}

#[cold]
#[inline(never)]
fn resolve_after_break_slow(
    whole_trailing_space: bool,
    b: &[u8],
    base: usize,
    mut candidates: u64,
) -> u64 {
    let t = CharTable::get();
    let mut starts = 0;
    while candidates != 0 {
        let i = candidates.trailing_zeros();
        let mut j = base + i as usize;
        while j < b.len() && b[j] != b'\r' && b[j] != b'\n' {
            // Eight spaces at a time: a run that reaches past the window is mostly spaces
            // (padding, indentation), often thousands of them.
            if b.get(j..j + 8) == Some(b"        ") {
                j += 8;
                continue;
            }
            let (class, n) = t.at(b, j);
            if class & WS == 0 {
                break;
            }
            j += n;
        }
        let start = if j == b.len() {
            !whole_trailing_space
        } else {
            b[j] != b'\r' && b[j] != b'\n'
        };
        if start {
            starts |= 1 << i;
        }
        candidates &= candidates - 1;
    }
    starts
}
