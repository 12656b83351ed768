//! Reading a block's non-ASCII characters: where a character starts, its code point from
//! four bytes read as one word (no branch on its length), and its class flags.

use crate::spanners::classes::{self, CharTable, LETTER};

/// Whether the character before the one at `base` (or the one `base` is inside) is a
/// letter (`\p{L}`); false at the text's start.
pub(super) fn letter_before(b: &[u8], base: usize, t: &CharTable) -> bool {
    let lead = char_start(b, base);
    lead > 0 && t.at(b, char_start(b, lead - 1)).0 & LETTER != 0
}

/// Where the character holding byte `i` of `b` (a `str`'s bytes) starts: its lead byte.
pub(super) fn char_start(b: &[u8], mut i: usize) -> usize {
    while b[i] & 0xC0 == 0x80 {
        i -= 1;
    }
    i
}

/// The flags of the character whose lead byte is `b[i]` (`b[i] >= 0x80`, `b` a `str`'s
/// bytes).
#[inline(always)]
pub(super) fn class_at(t: &CharTable, b: &[u8], i: usize) -> u8 {
    match b.get(i..i + 4) {
        Some(word) => class_of_word(t, u32::from_be_bytes([word[0], word[1], word[2], word[3]])),
        None => t.class_of(classes::decode_multibyte(b, i).0),
    }
}

/// The flags of the character whose UTF-8 bytes start `w`, four bytes read as one
/// big-endian word (its lead byte on top).
#[inline(always)]
pub(super) fn class_of_word(t: &CharTable, w: u32) -> u8 {
    t.class_of(code_point_of_word(w))
}

/// The code point of the multibyte character whose UTF-8 bytes start `w` (read as in
/// [`class_of_word`]): a few shifts and masks, with no bounds check per byte and no branch
/// on the character's length (text that mixes lengths mispredicts one). The lead byte's
/// count of leading ones is the length `n`; the word shifted right by `4 - n` bytes holds the
/// character's bytes alone, whose low six bits each are gathered, and the lead's marker bits
/// (the top of its six) are masked off: `5n + 1` bits of code point.
#[inline(always)]
pub(super) fn code_point_of_word(w: u32) -> u32 {
    let n = (!w).leading_zeros();
    let v = w >> (32 - 8 * n);
    let bits = (v & 0x3F) | ((v >> 2) & 0xFC0) | ((v >> 4) & 0x3_F000) | ((v >> 6) & 0xFC_0000);
    bits & ((1 << (5 * n + 1)) - 1)
}

/// [`code_point_of_word`] of a character known to be two bytes long.
#[inline(always)]
pub(super) fn code_point_of_two_bytes(w: u32) -> u32 {
    ((w >> 18) & 0x7C0) | ((w >> 16) & 0x3F)
}

/// [`code_point_of_word`] of a character known to be three bytes long.
#[inline(always)]
pub(super) fn code_point_of_three_bytes(w: u32) -> u32 {
    ((w >> 12) & 0xF000) | ((w >> 10) & 0xFC0) | ((w >> 8) & 0x3F)
}
