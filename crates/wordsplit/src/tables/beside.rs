//! Values kept beside the token index's slots: one `u32` per slot, read with the slot.

use super::prefetch::prefetch;
use super::probe_table::{ProbeTable, Slot};
use super::token_index::ShortKey;
use super::MergeTables;

/// One `u32` per slot of a [`MergeTables`]' token index, at the slot's position
/// ([`MergeTables::beside`]): what an encoder reads with each token it looks up (the
/// SentencePiece encoder's merge rank of the token) comes from the line next to the slot's,
/// requested at once, not from an array by id read after the slot answered.
pub(crate) struct Beside {
    small: Box<[u32]>,
    mid: Box<[u32]>,
}

impl MergeTables {
    /// A table of one `u32` per token of up to 16 bytes, kept beside the token index (see
    /// [`Beside`]): `value(id)` for each.
    pub(crate) fn beside(&self, value: impl Fn(u32) -> u32) -> Beside {
        let of = |slots: &mut dyn Iterator<Item = Option<u32>>| -> Box<[u32]> {
            slots.map(|id| id.map_or(0, &value)).collect()
        };
        Beside {
            small: of(&mut self.small.slot_ids()),
            mid: of(&mut self.mid.slot_ids()),
        }
    }

    /// The id of the token `piece` (1 to 16 bytes) spells, and its value in `beside` (made
    /// by [`Self::beside`] of these tables), or `None` when no token spells it. The value's
    /// line is requested with the slot's, so the two reads wait together.
    #[inline]
    pub(crate) fn find_beside(&self, piece: &[u8], beside: &Beside) -> Option<(u32, u32)> {
        let key = ShortKey::of(piece)?;
        let hash = self.hash(&key);
        if key.len <= 8 {
            self.probe_beside(&self.small, &beside.small, &key, hash)
        } else {
            self.probe_beside(&self.mid, &beside.mid, &key, hash)
        }
    }

    /// [`Self::find_beside`] in the table of `key`'s length class and its values.
    #[inline(always)]
    fn probe_beside<S: Slot>(
        &self,
        table: &ProbeTable<S>,
        values: &[u32],
        key: &ShortKey,
        hash: u64,
    ) -> Option<(u32, u32)> {
        let home = table.home(hash);
        prefetch(&table.slots[home]);
        prefetch(&values[home]);
        if !self.may_hold(hash) {
            return None;
        }
        let (i, slot) = table.find_slot(hash, key)?;
        Some((slot.id(), values[i]))
    }
}
