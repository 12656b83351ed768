//! The token index's keys and its plain-values view: a piece of 1 to 16 bytes packed into
//! two words ([`ShortKey`]), the hash that places it in its length class's slot table and
//! filter, and [`TokenIndex`], the index as values for a loop that looks up a token per piece.

use super::filter::{may_hold, FILTER_WORDS};
use super::prefetch::prefetch;
use super::probe_table::{home, MidSlot, Slot, SmallSlot};
use super::MergeTables;

/// The bytes of a piece of 1 to 16 bytes packed into two little-endian words (zero padded)
/// and its length: equal keys are equal pieces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShortKey {
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) len: u32,
}

impl ShortKey {
    /// The key of `piece`, or `None` when it is empty or longer than 16 bytes. Reads each
    /// byte once with overlapping fixed-size loads, so there is no per-byte loop.
    #[inline]
    pub fn of(piece: &[u8]) -> Option<Self> {
        let len = piece.len();
        let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().unwrap());
        let half = |at: usize| u64::from(u32::from_le_bytes(piece[at..at + 4].try_into().unwrap()));
        let (lo, hi) = match len {
            0 => return None,
            1..=3 => {
                let (a, b, c) = (piece[0], piece[len / 2], piece[len - 1]);
                let lo = u64::from(a)
                    | u64::from(b) << (8 * (len / 2))
                    | u64::from(c) << (8 * (len - 1));
                (lo, 0)
            }
            4..=7 => (half(0) | half(len - 4) << (8 * (len - 4)), 0),
            8 => (word(0), 0),
            9..=16 => (word(0), word(len - 8) >> (8 * (16 - len))),
            _ => return None,
        };
        Some(Self {
            lo,
            hi,
            len: len as u32,
        })
    }

    /// The key of `bytes[start..start + len]`, `1 <= len <= 16`, read with two 8-byte loads
    /// and masks (no branch on the length): `bytes` must hold 16 bytes from `start`.
    #[inline(always)]
    pub fn of_padded(bytes: &[u8], start: usize, len: usize) -> Self {
        debug_assert!((1..=16).contains(&len) && start + 16 <= bytes.len());
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        Self::masked(word(start), word(start + 8), len)
    }

    /// The key of a piece of `len` bytes (`1 <= len <= 16`) whose first 16 bytes (the piece
    /// and whatever follows it) are the little-endian words `lo` and `hi`.
    #[inline(always)]
    fn masked(lo: u64, hi: u64, len: usize) -> Self {
        Self {
            lo: lo & KEEP[len.min(8)],
            hi: hi & KEEP[len.saturating_sub(8).min(8)],
            len: len as u32,
        }
    }
}

/// `KEEP[k]` keeps the first `k` bytes of a little-endian word.
const KEEP: [u64; 9] = {
    let mut keep = [u64::MAX; 9];
    let mut k = 0;
    while k < 8 {
        keep[k] = (1 << (8 * k)) - 1;
        k += 1;
    }
    keep
};

/// The token index of a [`MergeTables`] as plain values, for loops that look up a token per
/// piece: made once per call ([`MergeTables::index`]) and passed by value, so its slices, seeds
/// and flags stay in registers. Read through `&MergeTables`, whose `OnceLock` and atomics are
/// interior-mutable, the compiler must load every field again after each store to the output
/// (it might have changed them).
#[derive(Clone, Copy)]
pub struct TokenIndex<'a> {
    pub(super) small: &'a [SmallSlot],
    pub(super) mid: &'a [MidSlot],
    pub(super) filter: &'a [u64; FILTER_WORDS],
    pub(super) seeds: [u64; 2],
    pub(super) byte_ids: &'a [u32; 256],
    pub(super) whole_piece_lookup: bool,
}

impl TokenIndex<'_> {
    /// The id of the piece `bytes[start..end]` (`start < end`) when it is one byte or, if the
    /// vocabulary looks whole pieces up, a token: the native encoders' shortcuts. A piece of
    /// up to 16 bytes with 16 bytes readable from `start` is read with two loads and masks and
    /// probed once; longer pieces and pieces at the very end of the text take
    /// [`MergeTables::whole_in`]'s general path through `tables`.
    #[inline(always)]
    pub fn shortcut(
        self,
        tables: &MergeTables,
        bytes: &[u8],
        start: usize,
        end: usize,
    ) -> Option<u32> {
        let len = end - start;
        if len == 1 {
            return Some(self.byte_ids[usize::from(bytes[start])]);
        }
        if !self.whole_piece_lookup {
            return None;
        }
        if len <= 16 && start + 16 <= bytes.len() {
            // SAFETY: the 16 bytes from `start` are in `bytes` (checked above); the loads
            // are unaligned reads of them, without the per-load bounds and overflow checks
            // of slicing.
            let (lo, hi) = unsafe {
                let at = bytes.as_ptr().add(start);
                (
                    at.cast::<u64>().read_unaligned(),
                    at.add(8).cast::<u64>().read_unaligned(),
                )
            };
            // Masked per length class: a piece of up to 8 bytes (most of them) needs no
            // second word.
            if len <= 8 {
                let key = ShortKey {
                    lo: u64::from_le(lo) & KEEP[len],
                    hi: 0,
                    len: len as u32,
                };
                self.probe(self.small, &key)
            } else {
                let key = ShortKey::masked(u64::from_le(lo), u64::from_le(hi), len);
                self.probe(self.mid, &key)
            }
        } else {
            tables.rank_of(&bytes[start..end])
        }
    }

    /// The id of `key` in `slots` (its length class's table). The home slot's line starts
    /// loading with the filter word's, so a token waits for one miss, not two in a row;
    /// a piece that is not one is answered by the filter (256 KB, mostly in the CPU's
    /// cache) without waiting for the slot.
    #[inline(always)]
    fn probe<S: Slot>(self, slots: &[S], key: &ShortKey) -> Option<u32> {
        let hash = hash_key(self.seeds, key);
        let mut i = home(hash, slots.len());
        // SAFETY: `home` is below the table's size: (a 32-bit value × size) >> 32 < size.
        let mut slot = unsafe { slots.get_unchecked(i) };
        prefetch(slot);
        if !may_hold(self.filter, hash) {
            return None;
        }
        loop {
            if slot.holds(key) {
                return Some(slot.id());
            }
            if slot.len() == 0 {
                return None;
            }
            i += 1;
            if i == slots.len() {
                i = 0;
            }
            slot = &slots[i];
        }
    }
}

/// The product of `a` and `b` folded to 64 bits: every bit of either reaches the low bits
/// that pick a slot.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The hash of `key` under `seeds`: its low bits pick the slot in the table of its length
/// class, its top bits the filter bit.
#[inline(always)]
pub(super) fn hash_key(seeds: [u64; 2], key: &ShortKey) -> u64 {
    if key.len <= 8 {
        fold(
            key.lo ^ seeds[0],
            0x243f_6a88_85a3_08d3 ^ u64::from(key.len),
        )
    } else {
        fold(
            key.lo ^ seeds[0],
            key.hi ^ seeds[1] ^ (u64::from(key.len) << 59),
        )
    }
}
