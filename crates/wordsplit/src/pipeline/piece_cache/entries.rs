//! A piece's key and the entries of the two-way tables that hold it: [`PieceKey`], the
//! [`Entry`] trait, [`CompactEntry`] (also a [`PieceTable`](super::PieceTable) entry) and
//! [`WideEntry`], and the hashes that place them.

use super::{CACHE_MAX_PIECE, COMPACT_MAX_IDS, COMPACT_MAX_PIECE, WIDE_MAX_IDS};
use crate::huge_pages::Zeroable;

/// A piece of 1 to 32 bytes as a cache key: its bytes zero-padded, as little-endian words.
/// A piece of up to 15 bytes (compact) fills only the first two, with its length in the top
/// byte of the second (the 16th byte, which it does not have); a longer one all four.
/// `hash`'s low bits pick the set, its top byte is the tag.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::pipeline) struct PieceKey {
    pub(super) words: [u64; 4],
    pub(super) hash: u64,
}

/// A cache entry of a [`Ways`](super::ways::Ways) table: a piece's key and its ids.
pub(super) trait Entry: Zeroable {
    /// Whether this entry holds the piece of `key`, of `len` bytes.
    fn holds(&self, key: &PieceKey, len: usize) -> bool;
    fn ids(&self) -> &[u32];
    fn is_empty(&self) -> bool;
    /// Holds the piece of `key` (`len` bytes) and its `ids` (as many as the entry takes).
    fn write(&mut self, key: &PieceKey, len: usize, ids: &[u32]);
    /// The hash of the key it holds, to place it again when its table grows.
    fn rehash(&self) -> u64;
}

/// A piece of up to [`COMPACT_MAX_PIECE`] bytes and [`COMPACT_MAX_IDS`] ids in 32 bytes: its
/// key's two words (the length in the top byte's low half, the count of ids in its high
/// half) and its ids.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(super) struct CompactEntry {
    pub(super) key: [u64; 2],
    pub(super) ids: [u32; COMPACT_MAX_IDS],
}

/// Where a [`CompactEntry`] keeps its count of ids: bits the key of a compact piece leaves
/// zero (its top byte is its length, at most 15).
pub(super) const COUNT_SHIFT: u32 = 60;

// SAFETY: integers only; all zeros is an empty entry (length 0 matches no piece).
unsafe impl Zeroable for CompactEntry {}

impl CompactEntry {
    /// The two words of its piece's key, without the count of ids ([`COUNT_SHIFT`]).
    #[inline(always)]
    pub(super) fn key_words(&self) -> [u64; 2] {
        [self.key[0], self.key[1] & !(0xf << COUNT_SHIFT)]
    }
}

impl Entry for CompactEntry {
    #[inline(always)]
    fn holds(&self, key: &PieceKey, _len: usize) -> bool {
        // The length is in the key's top byte; the count bits above it are masked off.
        let [lo, hi] = self.key_words();
        lo == key.words[0] && hi == key.words[1]
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        &self.ids[..(self.key[1] >> COUNT_SHIFT) as usize]
    }
    fn is_empty(&self) -> bool {
        self.key[1] == 0
    }
    #[inline(always)]
    fn write(&mut self, key: &PieceKey, _len: usize, ids: &[u32]) {
        self.key = [
            key.words[0],
            key.words[1] | (ids.len() as u64) << COUNT_SHIFT,
        ];
        self.ids[..ids.len()].copy_from_slice(ids);
    }
    fn rehash(&self) -> u64 {
        let [lo, hi] = self.key_words();
        compact_hash(lo, hi)
    }
}

/// A piece of up to [`CACHE_MAX_PIECE`] bytes and [`WIDE_MAX_IDS`] ids in 64 bytes: its key's
/// four words, its length (0: empty), the count of its ids and the ids.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct WideEntry {
    key: [u64; 4],
    len: u8,
    count: u8,
    ids: [u32; WIDE_MAX_IDS],
}

// SAFETY: integers only; all zeros is an empty entry (len 0 matches no piece).
unsafe impl Zeroable for WideEntry {}

impl Entry for WideEntry {
    #[inline(always)]
    fn holds(&self, key: &PieceKey, len: usize) -> bool {
        self.key == key.words && usize::from(self.len) == len
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        &self.ids[..usize::from(self.count)]
    }
    fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    fn write(&mut self, key: &PieceKey, len: usize, ids: &[u32]) {
        self.key = key.words;
        self.len = len as u8;
        self.count = ids.len() as u8;
        self.ids[..ids.len()].copy_from_slice(ids);
    }
    fn rehash(&self) -> u64 {
        let len = usize::from(self.len);
        if len <= COMPACT_MAX_PIECE {
            compact_hash(self.key[0], self.key[1])
        } else {
            wide_hash(&self.key, len)
        }
    }
}

/// `KEEP[len]` keeps the first `len` bytes of four little-endian words: a piece's key is its
/// bytes read in whole words, masked to its length.
pub(super) const KEEP: [[u64; 4]; CACHE_MAX_PIECE + 1] = {
    let mut keep = [[0; 4]; CACHE_MAX_PIECE + 1];
    let mut len = 0;
    while len <= CACHE_MAX_PIECE {
        let mut i = 0;
        while i < 4 {
            let bytes = len.saturating_sub(8 * i);
            keep[len][i] = if bytes >= 8 {
                u64::MAX
            } else {
                (1 << (8 * bytes)) - 1
            };
            i += 1;
        }
        len += 1;
    }
    keep
};

/// The product of `a` and `b` folded to 64 bits: every bit of either reaches the low bits
/// that pick a set and the top byte that is the tag.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The hash of a compact piece's two key words (its length is in the second).
#[inline(always)]
pub(super) fn compact_hash(lo: u64, hi: u64) -> u64 {
    fold(lo ^ 0x243f_6a88_85a3_08d3, hi ^ 0x1319_8a2e_0370_7345)
}

/// The hash of a piece of 16 to 32 bytes: its four key words and its length.
#[inline(always)]
pub(super) fn wide_hash(key: &[u64; 4], len: usize) -> u64 {
    let first = fold(
        key[0] ^ 0x243f_6a88_85a3_08d3,
        key[1] ^ 0x1319_8a2e_0370_7345,
    );
    fold(
        key[2] ^ first ^ 0xa409_3822_299f_31d1,
        key[3] ^ len as u64 ^ 0x082e_fa98_ec4e_6c89,
    )
}
