//! The pair-rank grid: the merge ranks of pairs of low token ids, kept as merges ask for them.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use super::{Rank, NO_RANK};

/// The ids below which [`PairGrid`] keeps the ranks of pairs: more than half of the pairs
/// asked while English prose merges (cl100k_base) are of two ids below 512, in 1 MiB of cells.
pub(crate) const GRID_IDS: usize = 512;

/// The merge ranks of pairs of tokens with ids below [`GRID_IDS`] that merges have asked
/// about, for the rank-based rule: the rank of the bytes of `left` followed by those of
/// `right` (or [`NO_RANK`]), kept at `left * GRID_IDS + right` once looked up in the index.
///
/// In a tiktoken vocabulary the ids are ranks and the low ones the most frequent tokens, so
/// while the new pieces of prose merge, most of the pairs asked about are of two low ids,
/// and most of those pairs come up again and again: a read of this grid (1 MiB) answers
/// them without building a key, hashing it and probing the index. A pair is looked up in
/// the index the first time, so the grid costs nothing to build (filling it ahead of use
/// costs milliseconds per vocabulary) and touches only the pages of the pairs asked about.
///
/// Cells are atomics written with relaxed stores: threads that look up the same pair at
/// once write the same rank, and a cell is either unknown or right.
pub(crate) struct PairGrid {
    /// The rank plus [`GRID_KNOWN`] (wrapping, so [`NO_RANK`] is stored as 1), or 0 for a
    /// pair not looked up yet.
    cells: Box<[AtomicU32]>,
}

/// What [`PairGrid`] adds to a rank to store it: ranks are below `u32::MAX - 1`, so a stored
/// rank is never 0, the mark of a pair not looked up yet.
const GRID_KNOWN: u32 = 2;

impl PairGrid {
    /// A grid with no pair kept, or with no cells when the vocabulary is pair-ranked (whose
    /// merges never ask it).
    pub(super) fn new(rank_based: bool) -> Self {
        // Zeroed memory from the allocator (`calloc`), whose pages are touched only as pairs
        // are kept, where collecting atomics one by one would write them all.
        let cells = if rank_based { GRID_IDS * GRID_IDS } else { 0 };
        let zeroed = Box::into_raw(vec![0u32; cells].into_boxed_slice());
        // SAFETY: `AtomicU32` has the size, alignment and bit validity of `u32`, so the zeroed
        // `u32`s are valid atomics, and the box takes the allocation over as it was made.
        Self {
            cells: unsafe { Box::from_raw(zeroed as *mut [AtomicU32]) },
        }
    }

    /// The cell of the pair `left`, `right`, if both ids are below [`GRID_IDS`] (and the
    /// grid has cells).
    #[inline(always)]
    fn cell(&self, left: u32, right: u32) -> Option<&AtomicU32> {
        let (left, right) = (left as usize, right as usize);
        if left >= GRID_IDS || right >= GRID_IDS {
            return None;
        }
        self.cells.get(left * GRID_IDS + right)
    }

    /// The rank of the pair `left`, `right` if the grid holds it.
    #[inline(always)]
    pub(crate) fn get(&self, left: u32, right: u32) -> Option<Rank> {
        let stored = self.cell(left, right)?.load(Relaxed);
        (stored != 0).then(|| stored.wrapping_sub(GRID_KNOWN))
    }

    /// Keeps `rank` as the pair `left`, `right`'s (looked up in the index), if the grid has
    /// a cell for it; returns `rank`.
    #[inline(always)]
    pub(crate) fn keep(&self, left: u32, right: u32, rank: Rank) -> Rank {
        debug_assert!(rank == NO_RANK || rank < u32::MAX - GRID_KNOWN);
        if let Some(cell) = self.cell(left, right) {
            cell.store(rank.wrapping_add(GRID_KNOWN), Relaxed);
        }
        rank
    }
}
