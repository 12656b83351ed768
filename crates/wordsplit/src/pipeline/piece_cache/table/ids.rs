//! How a [`PieceTable`](super::PieceTable) entry holds a piece's ids ([`TableIds`]): up to
//! four as they are, five to seven packed, or where the long pieces' arena holds more.

use crate::pipeline::piece_cache::entries::{CompactEntry, COUNT_SHIFT};
use crate::pipeline::piece_cache::long_pieces::HeldIds;
use crate::pipeline::piece_cache::COMPACT_MAX_IDS;

/// The most ids a [`PieceTable`](super::PieceTable) entry holds: four as they are, or up to
/// seven packed, so that pieces of five to seven ids (Cyrillic, Greek and Indic words,
/// Chinese phrases) cost a line like any other piece.
pub(in crate::pipeline) const TABLE_MAX_IDS: usize = 7;
/// How many ids [`TableIds::write`] writes (those of the piece, then filler): the room a
/// caller keeps for each piece it looks up.
pub(in crate::pipeline) const TABLE_WRITES: usize = 8;
/// The bits of each id of an entry of five to seven ids (7 x 18 of its 128).
pub(super) const PACKED_BITS: u32 = 18;

/// The ids of a [`PieceTable`](super::PieceTable) entry, where it holds them: up to four as
/// they are, five to seven packed. (A reference, not a copy: copied, the ids would go
/// through the stack on their way to the output.)
#[derive(Clone, Copy)]
pub(in crate::pipeline) struct TableIds<'a> {
    words: &'a [u32; COMPACT_MAX_IDS],
    count: usize,
}

impl<'a> TableIds<'a> {
    #[inline(always)]
    pub(super) fn of(entry: &'a CompactEntry) -> Self {
        Self {
            words: &entry.ids,
            count: (entry.key[1] >> COUNT_SHIFT) as usize,
        }
    }

    /// Writes the ids at `dst`, with filler after them: up to four ids (the common case)
    /// are one 16-byte store, with no loop on their count, and five to seven are written
    /// with one filler id, eight in all. Returns the count of ids, or `None`, writing
    /// nothing, when the entry's ids are in the long pieces' arena ([`Self::held`]).
    ///
    /// # Safety
    /// `dst` must be valid for writing [`TABLE_WRITES`] `u32`s.
    #[inline(always)]
    pub unsafe fn write(self, dst: *mut u32) -> Option<usize> {
        // SAFETY: the caller's: room for `TABLE_WRITES` ids at `dst`.
        unsafe {
            if self.count <= COMPACT_MAX_IDS {
                dst.cast::<[u32; COMPACT_MAX_IDS]>()
                    .write_unaligned(*self.words);
            } else if self.count <= TABLE_MAX_IDS {
                write_unpacked(self.words, dst);
            } else {
                return None;
            }
        }
        Some(self.count)
    }

    /// Where the ids of an entry that [`Self::write`] did not write are: in the long
    /// pieces' arena ([`PieceTable::put_held`](super::PieceTable::put_held)).
    #[inline]
    pub fn held(self) -> HeldIds {
        let [start, len, generation_lo, generation_hi] = *self.words;
        HeldIds {
            start,
            len,
            generation: u64::from(generation_hi) << 32 | u64::from(generation_lo),
        }
    }
}

/// The count of ids of a [`PieceTable`](super::PieceTable) entry whose ids are in the long
/// pieces' arena ([`HeldIds`]) rather than in the entry.
pub(super) const HELD: u64 = 0xf;

/// Five to seven ids in [`PACKED_BITS`] bits each, if each fits.
pub(super) fn pack(ids: &[u32]) -> Option<[u32; COMPACT_MAX_IDS]> {
    debug_assert!(ids.len() <= TABLE_MAX_IDS);
    let mut packed = 0u128;
    for (k, &id) in ids.iter().enumerate() {
        if id >> PACKED_BITS != 0 {
            return None;
        }
        packed |= u128::from(id) << (PACKED_BITS as usize * k);
    }
    Some(std::array::from_fn(|k| (packed >> (32 * k)) as u32))
}

/// Writes the ids [`pack`] packed at `dst` (and filler to [`TABLE_WRITES`]). Out of line:
/// inlined, its 128-bit shifts take registers the piece loop keeps its state in, which costs
/// every piece, not only those of five to seven ids.
///
/// # Safety
/// `dst` must be valid for writing [`TABLE_WRITES`] `u32`s.
#[inline(never)]
unsafe fn write_unpacked(words: &[u32; COMPACT_MAX_IDS], dst: *mut u32) {
    let packed = words
        .iter()
        .rev()
        .fold(0u128, |acc, &w| acc << 32 | u128::from(w));
    let ids: [u32; TABLE_WRITES] = std::array::from_fn(|k| {
        (packed >> (PACKED_BITS as usize * k)) as u32 & ((1 << PACKED_BITS) - 1)
    });
    // SAFETY: the caller's.
    unsafe { dst.cast::<[u32; TABLE_WRITES]>().write_unaligned(ids) }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{puts_then_answers, table_ids};
    use super::super::PieceTable;
    use super::*;

    #[test]
    fn piece_table_packs_five_to_seven_ids_below_2_to_the_18() {
        let mut table = PieceTable::new();
        let text = b"one two three four five six seven eight nine ten..................";
        let top = (1u32 << PACKED_BITS) - 1;
        let pieces = [
            (0, 3, vec![0u32, 1, 2, 3, 4]),
            (3, 7, vec![top, 0, top, 0, top, 0]),
            (7, 13, vec![1, 1 << 17, top, 12_345, 200_000, 262_000, 7]),
            // Four ids stay as they are, whatever their size.
            (13, 18, vec![u32::MAX, 1 << 18, 5, 6]),
        ];
        puts_then_answers(&mut table, text, &pieces);
        // An id of more bits, more than seven ids, or none: the piece is not kept, so it is
        // asked elsewhere.
        let key = table.key(text, 18, 23);
        table.put(&key, &[1, 2, 3, 4, 1 << PACKED_BITS]);
        table.put(&key, &[1, 2, 3, 4, 5, 6, 7, 8]);
        table.put(&key, &[]);
        assert_eq!(table_ids(&mut table, &key), None);
    }
}
