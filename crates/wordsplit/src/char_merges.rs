//! Which characters of two or three bytes a rank-based merge loop may take as one symbol
//! from the start, exactly.
//!
//! A piece starts as bytes, and a character of two or three bytes that is a token usually
//! becomes that token in the piece's first rounds: over multilingual text, a fifth of
//! o200k_base's rounds do nothing else. Taking such a character as one symbol from the start
//! saves those rounds, and changes nothing where every token that holds a byte pair across
//! the character's edges in this piece (the byte before it and its first byte, its last byte
//! and the byte after it) ranks above `M`, the highest rank among the merges that make the
//! character from its bytes (the token's own rank for two bytes):
//!
//! - the byte-by-byte loop makes the character whole before any merge touches its bytes
//!   from outside: while it is in pieces, one of its own pairs ranks `M` or lower, and every
//!   merge across an edge makes a token that holds an edge pair;
//! - every round of that loop that is not one of the character's own merges picks the same
//!   pair as a loop that started with the character whole: the pairs that loop has and the
//!   other lacks are the character's pairs with its neighbours, tokens that hold an edge
//!   pair too, ranked above `M` and so above the round's pair (a round while the character
//!   is in pieces takes a pair at or below the character's own next merge, and a pair of
//!   equal rank elsewhere is the same token, which both loops take leftmost first).
//!
//! So both loops end with the same symbols. [`CharMerges::new`] finds each character's `M`
//! once per vocabulary, and [`CharMerges::at`] compares it with the ranks of its edges.
//!
//! ```text
//! o200k_base, "привет": 12 bytes, 6 rounds making the six letters, then the word's merges;
//!   with the letters whole from the start: only the word's merges.
//! "оа" where "о" + 0xD0 is a token ranked below "а" (0xD0 0xB0): "а" stays as bytes after
//!   "о", and the loop makes it as the byte-by-byte loop does.
//! ```

use crate::tables::{Rank, NO_RANK};

/// Code points below this (every character of up to three bytes) have an entry.
const CHARS: usize = 0x1_0000;

/// Characters of two and three bytes that are tokens, with what [`CharMerges::at`] needs
/// to take one whole: 512 KB of entries and a 256 KB table of pair ranks.
pub(crate) struct CharMerges {
    /// By code point: the token's id in the low half and `M` (see the module) in the high
    /// half; `NO_RANK` in the high half where the character is no token its bytes merge
    /// into.
    chars: Box<[u64]>,
    /// At `a << 8 | b`, for the pairs across a character's edges ([`is_edge`]): the lowest
    /// rank of a token that holds byte `a` followed by byte `b` (`NO_RANK` for none).
    /// [`CharMerges::at`] reads no other pair, and no other is filled.
    pairs: Box<[Rank; 1 << 16]>,
}

/// Whether [`CharMerges::at`] may read the pair of bytes `a`, `b`: one across the first edge
/// of a character of two or three bytes (`b` its lead byte) or across its last edge (`a`
/// its last byte, a continuation byte).
#[inline(always)]
fn is_edge(a: u8, b: u8) -> bool {
    (0xC2..=0xEF).contains(&b) || (0x80..=0xBF).contains(&a)
}

impl CharMerges {
    /// The tables of a rank-based vocabulary whose BPE tokens `tokens` lists (bytes and id;
    /// a token's id is its merge rank), `byte_pair_rank` the rank of merging two bytes. One
    /// pass over the tokens, which skips the ASCII ones (an ASCII token holds no pair across
    /// a character's edge) and keeps only the edge pairs: the tables are built on first use,
    /// inside the first encode of a piece that is not ASCII.
    ///
    /// ```text
    /// tokens "а" (0xD0 0xB0) id 300, "о" + 0xD0 id 280, "аб" id 400:
    ///   "а" gets M = 300; the pair 0xBE 0xD0 ranks 280, 0xB0 0xD0 400.
    /// ```
    pub fn new<'a>(
        tokens: impl Iterator<Item = (&'a [u8], u32)>,
        byte_pair_rank: impl Fn(u8, u8) -> Rank,
    ) -> Self {
        let mut pairs: Box<[Rank; 1 << 16]> = vec![NO_RANK; 1 << 16]
            .into_boxed_slice()
            .try_into()
            .expect("a slice of 1 << 16 ranks");
        let mut chars = vec![u64::from(NO_RANK) << 32; CHARS].into_boxed_slice();
        for (bytes, id) in tokens {
            if bytes.is_ascii() {
                continue;
            }
            for pair in bytes.windows(2) {
                if is_edge(pair[0], pair[1]) {
                    let at = &mut pairs[usize::from(pair[0]) << 8 | usize::from(pair[1])];
                    *at = (*at).min(id);
                }
            }
            let Some((code, len)) = char_at(bytes, 0) else {
                continue;
            };
            if len != bytes.len() {
                continue;
            }
            // The rank of the merge that makes the character: of its two bytes, or (three
            // bytes) of whichever of its two pairs merges first, then the token's own.
            let highest = match *bytes {
                [_, _] => id,
                [lead, mid, last] => match byte_pair_rank(lead, mid).min(byte_pair_rank(mid, last))
                {
                    NO_RANK => continue,
                    earliest => earliest.max(id),
                },
                _ => continue,
            };
            chars[code] = u64::from(highest) << 32 | u64::from(id);
        }
        Self { chars, pairs }
    }

    /// The id and length of the character that starts at `bytes[i]`, where a merge loop
    /// over the piece `bytes[..n]` may take it whole from the start (see the module), or
    /// `None`. `bytes` holds at least two bytes after `n`, zeros (no character reads past
    /// the piece).
    #[inline(always)]
    pub fn at(&self, bytes: &[u8], i: usize, n: usize) -> Option<(u32, usize)> {
        let (c, len) = char_at(bytes, i)?;
        let entry = self.chars[c];
        let highest = (entry >> 32) as Rank;
        let edge = |a: u8, b: u8| self.pairs[usize::from(a) << 8 | usize::from(b)];
        let end = i + len;
        let apart = highest != NO_RANK
            && (i == 0 || highest < edge(bytes[i - 1], bytes[i]))
            && (end >= n || highest < edge(bytes[end - 1], bytes[end]));
        apart.then_some((entry as u32, len))
    }
}

/// The code point and length of the character of two or three bytes at `bytes[i]` in
/// well-formed UTF-8 (no overlong form, so each code point has one spelling), or `None`
/// (ASCII, four bytes, a stray or missing continuation byte, past the end).
#[inline(always)]
fn char_at(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    let tail = |k: usize| bytes.get(i + k).copied().filter(|b| b & 0xC0 == 0x80);
    let lead = usize::from(*bytes.get(i)?);
    match lead {
        0xC2..=0xDF => {
            let b = usize::from(tail(1)?);
            Some(((lead & 0x1F) << 6 | (b & 0x3F), 2))
        }
        0xE0..=0xEF => {
            let (b, c) = (usize::from(tail(1)?), usize::from(tail(2)?));
            let code = (lead & 0x0F) << 12 | (b & 0x3F) << 6 | (c & 0x3F);
            (code >= 0x800).then_some((code, 3))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables of `tokens` (bytes, id) over the 256 bytes as ids 0-255.
    fn merges_of(tokens: &[(&[u8], u32)]) -> CharMerges {
        let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let all: Vec<(&[u8], u32)> = bytes
            .iter()
            .map(|b| (&b[..], u32::from(b[0])))
            .chain(tokens.iter().copied())
            .collect();
        let pair = |a: u8, b: u8| {
            all.iter()
                .find(|(t, _)| *t == [a, b])
                .map_or(NO_RANK, |&(_, id)| id)
        };
        CharMerges::new(all.iter().copied(), pair)
    }

    #[test]
    fn chars_are_read_only_when_well_formed() {
        assert_eq!(char_at("а".as_bytes(), 0), Some((0x430, 2)));
        assert_eq!(char_at("中".as_bytes(), 0), Some((0x4E2D, 3)));
        assert_eq!(char_at(b"a", 0), None);
        assert_eq!(char_at("😀".as_bytes(), 0), None);
        assert_eq!(char_at(&[0xC0, 0x80], 0), None, "overlong");
        assert_eq!(char_at(&[0xE0, 0x80, 0x80], 0), None, "overlong");
        assert_eq!(char_at(&[0xD0], 0), None, "cut short");
        assert_eq!(char_at(&[0xD0, 0x41], 0), None, "no continuation byte");
        assert_eq!(char_at(&[0xB0, 0xB0], 0), None, "a continuation byte first");
    }

    #[test]
    fn a_char_is_whole_only_where_nothing_reaches_across_its_edges_first() {
        // "а" is 0xD0 0xB0; "о" is 0xD0 0xBE.
        let t = merges_of(&[(b"\xD0\xB0", 300), (b"\xD0\xBE", 301), (b"\xBE\xD0", 280)]);
        let padded = |s: &str| [s.as_bytes(), &[0, 0, 0]].concat();
        assert_eq!(t.at(&padded("а"), 0, 2), Some((300, 2)));
        // After "о" the pair 0xBE 0xD0 (a token of its own, rank 280) comes before "а" (300).
        let oa = padded("оа");
        assert_eq!(t.at(&oa, 2, 4), None);
        // "о" before "а": its last byte and the next ranks 280 too, below 301.
        assert_eq!(t.at(&oa, 0, 4), None);
        // Within a longer piece, or with no byte after it, "о" is whole.
        assert_eq!(t.at(&padded("о"), 0, 2), Some((301, 2)));
        assert_eq!(t.at(&padded("xо"), 1, 3), Some((301, 2)));
    }

    #[test]
    fn a_char_is_never_whole_beside_a_lower_ranked_token_that_holds_it() {
        // "аб" ranks below "а": "а" followed by 0xD0 stays bytes (the pair 0xB0 0xD0 is
        // "аб"'s), alone it is whole.
        let t = merges_of(&[(b"\xD0\xB0\xD0\xB1", 290), (b"\xD0\xB0", 300)]);
        assert_eq!(t.at("аб\0\0".as_bytes(), 0, 4), None);
        assert_eq!(t.at("ав\0\0".as_bytes(), 0, 4), None);
        assert_eq!(t.at("а\0\0".as_bytes(), 0, 2), Some((300, 2)));
        assert_eq!(t.at("xа\0\0".as_bytes(), 1, 3), Some((300, 2)));
    }

    #[test]
    fn three_byte_chars_take_the_highest_rank_of_their_merges() {
        // "中" is 0xE4 0xB8 0xAD: 0xE4 0xB8 at 260, then the whole at 270.
        let t = merges_of(&[(b"\xE4\xB8", 260), (b"\xE4\xB8\xAD", 270), (b"x\xE4", 265)]);
        let piece = [b'x', 0xE4, 0xB8, 0xAD, 0, 0, 0];
        // "x" + 0xE4 ranks 265, below the character's highest merge (270).
        assert_eq!(t.at(&piece, 1, 4), None);
        assert_eq!(t.at(&piece[1..], 0, 3), Some((270, 3)));
        // A character whose bytes never merge alone is no token to the loop.
        let t = merges_of(&[(b"\xE4\xB8\xAD", 270)]);
        assert_eq!(t.at(&piece[1..], 0, 3), None);
    }
}
