//! The token index's slot tables: open addressing over the tokens of one length class, 1 to 8
//! bytes ([`SmallSlot`]) or 9 to 16 ([`MidSlot`]), each slot holding a token's bytes inline.

use crate::huge_pages::{HugeSlice, Zeroable};

use super::token_index::ShortKey;

/// A slot of a [`ProbeTable`]: a token's packed bytes, its length (0: the slot is empty)
/// and its id.
pub(super) trait Slot: Zeroable {
    fn new(key: &ShortKey, id: u32) -> Self;
    fn holds(&self, key: &ShortKey) -> bool;
    fn len(&self) -> u32;
    fn id(&self) -> u32;
    /// The token's bytes as two zero-padded little-endian words.
    fn words(&self) -> (u64, u64);
}

/// A token of 1 to 8 bytes: 16 bytes, four to a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct SmallSlot {
    bytes: u64,
    len: u32,
    id: u32,
}

// SAFETY: integers only; all zeros is an empty slot.
unsafe impl Zeroable for SmallSlot {}

impl Slot for SmallSlot {
    #[inline(always)]
    fn new(key: &ShortKey, id: u32) -> Self {
        Self {
            bytes: key.lo,
            len: key.len,
            id,
        }
    }
    #[inline(always)]
    fn holds(&self, key: &ShortKey) -> bool {
        self.bytes == key.lo && self.len == key.len
    }
    #[inline(always)]
    fn len(&self) -> u32 {
        self.len
    }
    #[inline(always)]
    fn id(&self) -> u32 {
        self.id
    }
    #[inline(always)]
    fn words(&self) -> (u64, u64) {
        (self.bytes, 0)
    }
}

/// A token of 9 to 16 bytes: 24 bytes, though a quarter of the slots straddle two cache
/// lines (a 32-byte slot that never does makes the table a third larger, which costs more).
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct MidSlot {
    lo: u64,
    hi: u64,
    len: u32,
    id: u32,
}

// SAFETY: integers only; all zeros is an empty slot.
unsafe impl Zeroable for MidSlot {}

impl Slot for MidSlot {
    #[inline(always)]
    fn new(key: &ShortKey, id: u32) -> Self {
        Self {
            lo: key.lo,
            hi: key.hi,
            len: key.len,
            id,
        }
    }
    #[inline(always)]
    fn holds(&self, key: &ShortKey) -> bool {
        self.lo == key.lo && self.hi == key.hi && self.len == key.len
    }
    #[inline(always)]
    fn len(&self) -> u32 {
        self.len
    }
    #[inline(always)]
    fn id(&self) -> u32 {
        self.id
    }
    #[inline(always)]
    fn words(&self) -> (u64, u64) {
        (self.lo, self.hi)
    }
}

/// Open addressing with linear probing, sized to the vocabulary (at most 3/4 full, any
/// number of slots): a lookup reads the slot its hash picks and, on a collision, the next
/// ones (usually in the same cache line), where a general hash table reads a control-byte
/// group first and then the slot, two dependent cache misses on text not seen before. Sized
/// to the tokens ([`home`] needs no power of two): a larger table costs more in first-touch
/// page faults and cache misses than it saves in collisions. The slots are on 2 MiB pages
/// where the OS gives them ([`HugeSlice`]), but for a table's part past its last 2 MiB
/// boundary: each lookup reads a random slot.
pub(super) struct ProbeTable<S: Slot> {
    pub(super) slots: HugeSlice<S>,
}

impl<S: Slot> ProbeTable<S> {
    pub(super) fn with_capacity(n: usize) -> Self {
        let size = (n * 4 / 3 + 1).max(16);
        Self {
            slots: HugeSlice::zeroed(size),
        }
    }

    /// The slot `hash` picks: its low 32 bits scaled to the table's size (a multiply and a
    /// shift, no division; the filter reads the top bits).
    #[inline(always)]
    pub(super) fn home(&self, hash: u64) -> usize {
        home(hash, self.slots.len())
    }

    /// Inserts `key` with `id`; `false` (and nothing changed) if the key is there already.
    pub(super) fn insert(&mut self, hash: u64, key: &ShortKey, id: u32) -> bool {
        let mut i = self.home(hash);
        loop {
            let slot = &mut self.slots[i];
            if slot.len() == 0 {
                *slot = S::new(key, id);
                return true;
            }
            if slot.holds(key) {
                return false;
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
    }

    #[inline(always)]
    pub(super) fn find(&self, hash: u64, key: &ShortKey) -> Option<u32> {
        self.find_slot(hash, key).map(|(_, slot)| slot.id())
    }

    /// Where `key` (hash `hash`) is: its slot's index, and the slot.
    #[inline(always)]
    pub(super) fn find_slot(&self, hash: u64, key: &ShortKey) -> Option<(usize, &S)> {
        let mut i = self.home(hash);
        loop {
            let slot = &self.slots[i];
            if slot.holds(key) {
                return Some((i, slot));
            }
            if slot.len() == 0 {
                return None;
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
    }

    /// The id each slot holds, in slot order (`None`: an empty slot).
    pub(super) fn slot_ids(&self) -> impl Iterator<Item = Option<u32>> + '_ {
        self.slots.iter().map(|s| (s.len() != 0).then(|| s.id()))
    }

    pub(super) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().filter(|s| s.len() != 0).map(|s| s.id())
    }

    /// Each token's bytes as two words, its length and its id, in slot order.
    pub(super) fn tokens(&self) -> impl Iterator<Item = (u64, u64, usize, u32)> + '_ {
        self.slots.iter().filter(|s| s.len() != 0).map(|s| {
            let (lo, hi) = s.words();
            (lo, hi, s.len() as usize, s.id())
        })
    }
}

/// The slot `hash` picks in a table of `size` slots: its low 32 bits scaled to the size (a
/// multiply and a shift, no division; the filter reads the top bits).
#[inline(always)]
pub(super) fn home(hash: u64, size: usize) -> usize {
    (((hash & 0xffff_ffff) * size as u64) >> 32) as usize
}
