//! [`Ways`]: the two-way set-associative tables of the compact and wide entries, which
//! double when the pieces they evict keep coming back.

use super::entries::{Entry, PieceKey};
use super::GROW_AFTER;
use crate::huge_pages::HugeSlice;

/// A two-way set-associative table of entries `E`. In each set, way 0 is the entry last
/// answered for (or the first put into the empty set), way 1 the one a new piece replaces.
pub(super) struct Ways<E: Entry> {
    /// On 2 MiB pages where the OS gives them ([`HugeSlice`]) once grown, and the compact
    /// table from the start: each lookup reads a random set, and the table takes one page
    /// fault per 2 MiB instead of per 4 KiB, with no recycled memory to zero. The first wide
    /// table stays on 4 KiB pages from the allocator (`huge: false`): few of its sets are
    /// written on most text, and a fresh 2 MiB page is slow to fault in on a virtual machine.
    pub(super) sets: HugeSlice<[E; 2]>,
    /// Per set, the top byte of the hash of each way's piece (0 for an empty way): with the
    /// ghost, 3 bytes per set that stay in the CPU's cache, where a set of the table is a
    /// cache miss. On text never seen before many lookups are of pieces the cache does not
    /// hold; when neither tag matches, the lookup ends here, and the set's line starts
    /// loading while the piece merges, ready for the insert that follows.
    pub(super) tags: Box<[[u8; 2]]>,
    /// Per set, the tag of the piece it last evicted: a piece put whose tag is its set's
    /// ghost was most likely evicted before and is back, which a larger table would have
    /// answered.
    ghosts: Box<[u8]>,
    /// Pieces put back since the table last grew (it doubles when they reach
    /// [`GROW_AFTER`] of its sets).
    returned: usize,
    max_sets: usize,
}

impl<E: Entry> Ways<E> {
    /// An empty table of `sets` sets, on huge pages if `huge`, that grows up to `max_sets`.
    pub(super) fn new(sets: usize, max_sets: usize, huge: bool) -> Self {
        Self {
            sets: if huge {
                HugeSlice::zeroed(sets)
            } else {
                HugeSlice::zeroed_ordinary(sets)
            },
            tags: vec![[0u8; 2]; sets].into_boxed_slice(),
            ghosts: vec![0u8; sets].into_boxed_slice(),
            returned: 0,
            max_sets,
        }
    }

    /// The set and the tag of a piece's hash (the number of sets is a power of two). A tag
    /// is never 0, an empty way's, so the tags alone say which ways hold a piece.
    #[inline(always)]
    pub(super) fn place(&self, hash: u64) -> (usize, u8) {
        (
            (hash as usize) & (self.tags.len() - 1),
            ((hash >> 56) as u8).max(1),
        )
    }

    /// The set whose way 0 holds the piece of `key` (`len` bytes), if the table holds it.
    /// On a miss, with `prefetch`, the set's line starts loading for the put that follows.
    #[inline(always)]
    pub(super) fn find(&mut self, key: &PieceKey, len: usize, prefetch: bool) -> Option<usize> {
        let (set, tag) = self.place(key.hash);
        let tags = &mut self.tags[set];
        let ways = &mut self.sets[set];
        if tags[0] != tag && tags[1] != tag {
            if prefetch {
                crate::tables::prefetch(ways);
            }
            None
        } else if ways[0].holds(key, len) {
            Some(set)
        } else if ways[1].holds(key, len) {
            ways.swap(0, 1);
            tags.swap(0, 1);
            Some(set)
        } else {
            None
        }
    }

    /// Keeps the piece of `key` (`len` bytes) and its `ids` in its set.
    #[inline]
    pub(super) fn put(&mut self, key: &PieceKey, len: usize, ids: &[u32]) {
        let (set, tag) = self.place(key.hash);
        let ghost = &mut self.ghosts[set];
        self.returned += usize::from(*ghost == tag);
        // Which ways are empty, from the tags (in the CPU's cache) rather than the set,
        // whose line is rarely there: the writes below then wait on nothing.
        let [front, older] = self.tags[set];
        if older != 0 {
            *ghost = older;
        }
        // A new piece takes the older way, and moves to the front on its first hit: a set
        // whose pieces keep coming back in turn (more of them than ways) then keeps answering
        // for one, where putting each in front evicted every one before it came back.
        // Written in place: no whole entry built and copied per piece merged.
        let entry = if front == 0 {
            // An empty set (way 1 fills only after way 0).
            self.tags[set][0] = tag;
            &mut self.sets[set][0]
        } else {
            self.tags[set][1] = tag;
            &mut self.sets[set][1]
        };
        entry.write(key, len, ids);
        if self.returned >= self.tags.len() / GROW_AFTER && self.tags.len() < self.max_sets {
            self.grow();
        }
    }

    /// Doubles the table, keeping every piece it holds (each set's older piece put first,
    /// so that the recent one stays the more recent in its new set).
    #[cold]
    fn grow(&mut self) {
        let sets = 2 * self.tags.len();
        let old = std::mem::replace(&mut self.sets, HugeSlice::zeroed(sets));
        self.tags = vec![[0u8; 2]; sets].into_boxed_slice();
        for entry in old.iter().flat_map(|ways| [ways[1], ways[0]]) {
            if !entry.is_empty() {
                let (set, tag) = self.place(entry.rehash());
                *self.push_front(set, tag) = entry;
            }
        }
        self.ghosts = vec![0u8; sets].into_boxed_slice();
        self.returned = 0;
    }

    /// Moves way 0 of `set` to way 1 (evicting way 1's piece) and gives way 0, tagged `tag`,
    /// for the caller to write the new most recent piece into.
    #[inline(always)]
    fn push_front(&mut self, set: usize, tag: u8) -> &mut E {
        let tags = &mut self.tags[set];
        *tags = [tag, tags[0]];
        let ways = &mut self.sets[set];
        ways[1] = ways[0];
        &mut ways[0]
    }

    /// How many pieces it holds.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.sets.iter().flatten().filter(|e| !e.is_empty()).count()
    }

    /// The bytes of the table of entries as it is now.
    #[cfg(test)]
    pub(super) fn table_bytes(&self) -> usize {
        std::mem::size_of_val(&self.sets[..])
    }
}
