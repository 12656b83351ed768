//! What a [`PieceTable`] learns from the pieces it evicts: which of them come back, whether
//! to keep them as a third way of their sets, and when to grow.
//!
//! A set keeps the tag of the piece it last evicted ([`PieceTable::ghosts`]), which tells a
//! piece that comes back from a new one (a sixteenth of the sets do, [`GHOST_SAMPLE`],
//! until evicted pieces are kept). When at least one missed piece in [`KEEP_EVICTED_SHARE`]
//! comes back, as in later passes over text with more distinct pieces than the sets hold
//! two of, each set keeps the evicted piece itself as a third way
//! ([`PieceTable::get_evicted`]): three pieces that take turns in a set are then all
//! answered, where two ways answer none of them.
//!
//! The table starts at 4 MB (or as large as its seeds, [`PieceTable::seeds`]) and doubles,
//! up to 16 MB, when the pieces it evicted keep coming back: a few megabytes of text fit the
//! first table, and text read again that does not is merged again on every pass. The
//! evidence ([`PieceTable::returned`]) is the pieces that came back by their sets' ghosts,
//! and while the evicted pieces are kept (most missed pieces came back), every missed
//! piece. It grows after [`LOOKUPS_PER_SET`] lookups per set since it last did, so that
//! growing is a small part of the time spent, or sooner when one lookup in
//! [`RETURNED_SHARE`] or more was of a lost piece, as in passes again over text with more
//! distinct pieces than its sets hold (first passes lose too few to grow). It grows at
//! once, too, when most missed pieces come back at a cost ([`COSTLY_SHARE`]), as in passes
//! again over multilingual text. It grows only between chunks of the piece loop
//! ([`PieceTable::grow_due`]), so the keys of the chunk in hand, which name sets of the
//! table as it was, are looked up before it moves.

use super::ids::TableIds;
use super::{mix, PieceTable, TableKey, SET_BYTES, TABLE_MAX_SETS};
use crate::huge_pages::HugeSlice;
use crate::pipeline::piece_cache::GROW_AFTER;

/// How many missed pieces of the sampled sets [`PieceTable::grow_due`] decides
/// [`PieceTable::keep_evicted`] on: about a thousand misses in all, which the first warm pass
/// over a megabyte of prose or code reaches (its vocabulary's tokens over-fill the sets).
const EVICTED_WINDOW: usize = 64;

/// While evicted pieces are not kept, one set in `GHOST_SAMPLE` (the first sixteenth)
/// keeps its ghost, and the share of missed pieces that came back is taken from those:
/// their 4 KB of ghosts (at the table's first size) stay in the CPU's cache, where a ghost
/// read per missed piece from all 64 KB is a cache miss of its own.
const GHOST_SAMPLE: usize = 16;

/// Evicted pieces are kept while at least one missed piece in `KEEP_EVICTED_SHARE` came
/// back (its tag was its set's ghost): more than first passes show, where most missed pieces
/// are new and keeping them, a write of a random line per piece put, costs more than it saves.
const KEEP_EVICTED_SHARE: usize = 4;

/// Evicted pieces kept are kept until fewer than one missed piece in `STOP_KEEPING_SHARE`
/// came back: in later passes over text the share moves between windows, and a window under
/// [`KEEP_EVICTED_SHARE`]'s would otherwise stop keeping them, and stop the sampled sets'
/// ghosts standing for all.
const STOP_KEEPING_SHARE: usize = 8;

/// The tag of a compact key's two words in [`PieceTable::ghosts`]: bits of its [`mix`]
/// below those that pick its set, never 0 (a set that evicted nothing).
#[inline(always)]
pub(super) fn ghost_tag(lo: u64, hi: u64) -> u8 {
    (mix(lo, hi) >> 32) as u8 | 1
}

/// The lookups per set a [`PieceTable`] answers before it may grow again, unless lost pieces
/// come back often ([`RETURNED_SHARE`], [`COSTLY_SHARE`]): a doubling (most of it the kernel
/// zeroing fresh pages) is then a few percent of the time since the last one.
const LOOKUPS_PER_SET: usize = 256;

/// A [`PieceTable`] grows sooner when this large a share of its lookups, one in
/// `RETURNED_SHARE`, were of pieces it had lost.
const RETURNED_SHARE: usize = 16;

/// A [`PieceTable`] grows at once after a window of missed pieces ([`EVICTED_WINDOW`]) in
/// which at least half came back, when those that came back were one lookup in
/// `COSTLY_SHARE` or more: text read again that the table is too small for. A table that
/// text read again mostly fits has too few such lookups to grow.
const COSTLY_SHARE: usize = 64;

impl PieceTable {
    /// The offsets of the sampled sets are below this: the first `1 / GHOST_SAMPLE` of
    /// them ([`GHOST_SAMPLE`]).
    #[inline(always)]
    fn sampled_lines(&self) -> usize {
        self.sets.len() / GHOST_SAMPLE * SET_BYTES
    }

    /// Whether the set at offset `line` keeps a ghost now: every set while evicted pieces
    /// are kept, else the sampled ones.
    #[inline(always)]
    pub(super) fn keeps_ghost(&self, line: usize) -> bool {
        self.keep_evicted || line < self.sampled_lines()
    }

    /// Whether it keeps the pieces it evicts: enough missed pieces come back
    /// ([`KEEP_EVICTED_SHARE`]).
    #[inline(always)]
    pub fn keeps_evicted(&self) -> bool {
        self.keep_evicted
    }

    /// Keeps the pieces it evicts from now on, as when enough missed pieces come back; the
    /// first time, with room for them. Out of the piece loop's way: called once per
    /// window of missed pieces at most.
    #[cold]
    pub fn keep_evicted(&mut self) {
        self.keep_evicted = true;
        if self.evicted.is_empty() {
            self.evicted = HugeSlice::zeroed_ordinary(self.sets.len());
        }
    }

    /// Counts `looked_up` more pieces looked up, and says whether the table should grow
    /// now ([`Self::grow`]): enough evicted pieces came back, after enough lookups, or most
    /// missed pieces of a window came back, at a cost ([`COSTLY_SHARE`]). Decides
    /// [`Self::keep_evicted`] too, every [`EVICTED_WINDOW`] missed pieces.
    #[inline(always)]
    pub fn grow_due(&mut self, looked_up: usize) -> bool {
        self.window_looked_up = self.window_looked_up.saturating_add(looked_up);
        // Whether the window that ends now had most of its missed pieces come back, at a
        // cost: the table grows at once, so this is not kept past the call.
        let mut costly_returns = false;
        if self.missed >= EVICTED_WINDOW {
            let mostly_back = self.came_back * 2 >= self.missed;
            let costly = self.came_back * GHOST_SAMPLE * COSTLY_SHARE >= self.window_looked_up;
            costly_returns = mostly_back && costly;
            self.window_looked_up = 0;
            let share = if self.keep_evicted {
                STOP_KEEPING_SHARE
            } else {
                KEEP_EVICTED_SHARE
            };
            if self.came_back * share >= self.missed {
                self.keep_evicted();
            } else {
                self.keep_evicted = false;
            }
            self.returned += GHOST_SAMPLE
                * if self.keep_evicted {
                    self.missed
                } else {
                    self.came_back
                };
            self.missed = 0;
            self.came_back = 0;
        }
        self.looked_up = self.looked_up.saturating_add(looked_up);
        let sets = self.sets.len();
        let lost_often = self.returned >= sets / GROW_AFTER
            && (self.looked_up >= sets * LOOKUPS_PER_SET
                || self.returned * RETURNED_SHARE >= self.looked_up);
        (lost_often || costly_returns) && sets < TABLE_MAX_SETS
    }

    /// The ids of a piece neither way of its set holds ([`Self::get_in_ways`] found none):
    /// the piece its set last evicted, if that is this one ([`Self::get_evicted`]).
    #[inline(always)]
    pub fn get_missed(&mut self, key: &TableKey) -> Option<TableIds<'_>> {
        if key.fits() && self.keeps_ghost(key.line) {
            self.get_evicted(key.lo, key.hi, key.line)
        } else {
            None
        }
    }

    /// [`Self::get_missed`]: the set's last evicted piece, while evicted pieces are kept, if
    /// it is this one (its tag first, then the entry); it moves back to way 0, and way 1's
    /// piece out. Counts the piece, in a sampled set, as missed, and as come back if its tag
    /// is the set's ghost. Out of line: text seen before rarely gets here.
    /// The key comes as its three words, in registers: through a reference, the piece
    /// loop stored every piece's key on the stack for this call it rarely makes.
    #[inline(never)]
    fn get_evicted(&mut self, lo: u64, hi: u64, line: usize) -> Option<TableIds<'_>> {
        let key = TableKey { lo, hi, line };
        let set = key.line / SET_BYTES;
        let sampled = key.line < self.sampled_lines();
        self.missed += usize::from(sampled);
        if self.ghosts[set] != ghost_tag(key.lo, key.hi) {
            return None;
        }
        self.came_back += usize::from(sampled);
        // Not read while evicted pieces are not kept: its pages are not touched then.
        if !self.keep_evicted {
            return None;
        }
        let evicted = self.evicted[set];
        let [lo, hi] = evicted.key_words();
        if lo != key.lo || hi != key.hi {
            return None;
        }
        self.push(key.line, evicted);
        Some(TableIds::of(&self.sets[set][0]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::table_ids;
    use super::super::TABLE_SETS;
    use super::*;

    /// Decides [`PieceTable::keep_evicted`] as after a window of missed pieces of which
    /// `came_back` came back.
    fn decide_keep_evicted(table: &mut PieceTable, came_back: usize) {
        table.missed = EVICTED_WINDOW;
        table.came_back = came_back;
        table.grow_due(0);
    }

    #[test]
    fn piece_table_answers_a_sets_evicted_piece_while_missed_pieces_come_back() {
        let mut table = PieceTable::new();
        // Four pieces placed in one set (a chosen set, as colliding hashes would give).
        let text = b"alpha beta gamma delta..........";
        let in_set = |start, end| TableKey {
            line: 9 * SET_BYTES,
            ..table.key(text, start, end)
        };
        let (a, b, c, d) = (in_set(0, 5), in_set(5, 10), in_set(10, 16), in_set(16, 22));
        table.put(&a, &[1]);
        table.put(&b, &[2, 3]);
        table.put(&c, &[4, 5, 6]);
        // `a` left the set while evicted pieces were not kept: missed, and seen coming back
        // by its tag.
        assert_eq!(table_ids(&mut table, &a), None);
        assert_eq!((table.missed, table.came_back), (1, 1));
        assert_eq!(table_ids(&mut table, &d), None, "d is new");
        assert_eq!((table.missed, table.came_back), (2, 1));
        assert!(!table.keep_evicted);
        assert!(
            table.evicted.is_empty(),
            "no room for evicted pieces until they are kept"
        );

        // Most missed pieces came back: the set keeps the piece it evicts next, and every
        // missed piece of the window counts as evidence for growing.
        let returned = table.returned;
        decide_keep_evicted(&mut table, EVICTED_WINDOW / KEEP_EVICTED_SHARE);
        assert!(table.keep_evicted);
        assert_eq!(table.evicted.len(), table.sets.len());
        assert_eq!(table.returned, returned + GHOST_SAMPLE * EVICTED_WINDOW);
        decide_keep_evicted(&mut table, EVICTED_WINDOW / KEEP_EVICTED_SHARE - 1);
        assert!(table.keep_evicted, "kept until fewer came back");
        table.put(&d, &[7]);
        // Three pieces taking turns in the set: each asked is answered, the one evicted last
        // from the third way.
        for _ in 0..3 {
            for (key, ids) in [(&b, vec![2, 3]), (&c, vec![4, 5, 6]), (&d, vec![7])] {
                assert_eq!(table_ids(&mut table, key), Some(ids));
            }
        }
        assert_eq!(
            table_ids(&mut table, &a),
            None,
            "a is no longer the set's last"
        );

        // Few came back: evicted pieces are no longer kept, and only those that came back
        // count.
        let returned = table.returned;
        decide_keep_evicted(&mut table, EVICTED_WINDOW / STOP_KEEPING_SHARE - 1);
        assert!(!table.keep_evicted);
        assert_eq!(
            table.returned,
            returned + GHOST_SAMPLE * (EVICTED_WINDOW / STOP_KEEPING_SHARE - 1)
        );
        table.put(&a, &[1]);
        let [b_held, c_held, d_held] = [&b, &c, &d].map(|key| table_ids(&mut table, key));
        assert_eq!(
            [b_held, c_held, d_held]
                .iter()
                .filter(|ids| ids.is_some())
                .count(),
            1,
            "two ways hold a and one other"
        );
    }

    #[test]
    fn piece_table_counts_missed_pieces_of_its_sampled_sets_only() {
        let mut table = PieceTable::new();
        let text = b"alpha beta gamma................";
        let in_set = |set: usize, start, end| TableKey {
            line: set * SET_BYTES,
            ..table.key(text, start, end)
        };
        let first_unsampled = TABLE_SETS / GHOST_SAMPLE;
        let unsampled = in_set(first_unsampled, 0, 5);
        let sampled = in_set(first_unsampled - 1, 0, 5);
        assert_eq!(table_ids(&mut table, &unsampled), None);
        assert_eq!(table_ids(&mut table, &TableKey::OUTSIDE), None);
        assert_eq!(
            table.missed, 0,
            "an unsampled set, and a piece no table holds"
        );
        assert_eq!(table_ids(&mut table, &sampled), None);
        assert_eq!(table.missed, 1);
    }

    #[test]
    fn piece_table_third_way_answers_only_its_own_piece() {
        // Two pieces of one set whose tags are the same (found by trying pieces): the
        // third way holds one, and the other asked is not answered with its ids.
        let text: Vec<u8> = (0..4096u32)
            .flat_map(|i| format!("{i:03x}").into_bytes())
            .chain([b'.'; 16])
            .collect();
        let mut table = PieceTable::new();
        let in_set = |table: &PieceTable, i: usize| TableKey {
            line: 3 * SET_BYTES,
            ..table.key(&text, 3 * i, 3 * i + 3)
        };
        let tag = |key: &TableKey| ghost_tag(key.lo, key.hi);
        let first = in_set(&table, 0);
        let twin = (1..4096)
            .map(|i| in_set(&table, i))
            .find(|key| tag(key) == tag(&first))
            .expect("a piece of the same tag among 4,095");
        let (other, another) = (in_set(&table, 4094), in_set(&table, 4095));
        assert!(tag(&other) != tag(&first) && tag(&another) != tag(&first));
        decide_keep_evicted(&mut table, EVICTED_WINDOW);
        table.put(&first, &[1]);
        table.put(&other, &[2]);
        table.put(&another, &[3]);
        assert_eq!(
            table_ids(&mut table, &twin),
            None,
            "same tag, another piece"
        );
        assert_eq!(table_ids(&mut table, &first), Some(vec![1]));
    }

    #[test]
    fn piece_table_grows_on_evidence_after_enough_lookups_and_keeps_its_pieces() {
        // 400,000 distinct pieces of 2 to 6 bytes, more than the first table holds.
        let text: Vec<u8> = (0..400_000u32)
            .flat_map(|i| format!("{i:x} ").into_bytes())
            .chain([b'.'; 16])
            .collect();
        let mut pieces = Vec::new();
        let mut start = 0;
        for (end, &b) in text.iter().enumerate() {
            if b == b' ' {
                pieces.push((start, end + 1));
                start = end + 1;
            }
        }
        let fill = |table: &mut PieceTable| {
            for (n, &(start, end)) in pieces.iter().enumerate() {
                let key = table.key(&text, start, end);
                table.put(&key, &[n as u32]);
            }
        };
        // How many pieces the table answers for, each with its own ids.
        let held = |table: &mut PieceTable| {
            let mut held = 0;
            for (n, &(start, end)) in pieces.iter().enumerate() {
                let key = table.key(&text, start, end);
                if let Some(ids) = table_ids(table, &key) {
                    assert_eq!(ids, [n as u32]);
                    held += 1;
                }
            }
            held
        };
        let mut table = PieceTable::new();
        fill(&mut table);
        let first = held(&mut table);
        assert!(first < 2 * TABLE_SETS, "{first}");
        // The evidence is set by hand below, not taken from the misses of `held`.
        (table.missed, table.came_back) = (0, 0);
        let due = TABLE_SETS / GROW_AFTER;
        assert!(
            !table.grow_due(TABLE_SETS * LOOKUPS_PER_SET),
            "lookups alone do not make it grow"
        );
        table.returned = due;
        assert!(table.grow_due(0), "lost pieces back, after enough lookups");
        table.grow();
        assert_eq!(table.sets.len(), 2 * TABLE_SETS);
        assert_eq!(
            held(&mut table),
            first,
            "every piece held moves to its new set"
        );
        // Evidence and lookups count anew from the growth.
        table.returned = 2 * due;
        assert!(!table.grow_due(2 * TABLE_SETS * LOOKUPS_PER_SET - 1));
        fill(&mut table);
        let second = held(&mut table);
        assert!(second > first + first / 2, "{first} {second}");
        assert!(table.grow_due(1), "lost pieces back, after enough lookups");
        table.grow();
        assert_eq!(table.sets.len(), TABLE_MAX_SETS);
        fill(&mut table);
        assert!(
            held(&mut table) > 280_000,
            "three in four of 1.5 pieces per set"
        );
        table.returned = usize::MAX / 2;
        assert!(!table.grow_due(usize::MAX / 2), "16 MB is the bound");
    }

    #[test]
    fn piece_table_grows_sooner_when_many_of_its_lookups_were_of_lost_pieces() {
        let due = TABLE_SETS / GROW_AFTER;
        let mut table = PieceTable::new();
        table.returned = due;
        assert!(
            !table.grow_due(due * RETURNED_SHARE + 1),
            "a smaller share waits for enough lookups"
        );
        let mut table = PieceTable::new();
        table.returned = due;
        assert!(
            table.grow_due(due * RETURNED_SHARE),
            "one lookup in 16 lost"
        );
        let mut table = PieceTable::new();
        table.returned = due - 1;
        assert!(
            !table.grow_due(1),
            "too few lost pieces, whatever their share"
        );
    }

    /// Ends a window of missed pieces of which `came_back` came back, over `looked_up`
    /// lookups: whether the table would grow then.
    fn window_ends(table: &mut PieceTable, came_back: usize, looked_up: usize) -> bool {
        table.missed = EVICTED_WINDOW;
        table.came_back = came_back;
        table.grow_due(looked_up)
    }

    #[test]
    fn piece_table_grows_after_a_window_of_costly_returning_misses() {
        // Warm passes over 1 MB of multilingual text: 0.78 of the sampled misses came back,
        // about 580 lookups per sampled miss.
        let (most, half) = (EVICTED_WINDOW * 25 / 32, EVICTED_WINDOW / 2);
        let lookups = |per_miss: usize| per_miss * EVICTED_WINDOW;
        let mut table = PieceTable::new();
        assert!(window_ends(&mut table, most, lookups(580)));
        table.grow();
        assert!(!table.grow_due(1_000), "the grown table counts anew");
        assert!(window_ends(&mut table, most, lookups(580)));
        // Most misses came back, but few for the lookups: text read again that mostly fits.
        let mut table = PieceTable::new();
        for _ in 0..8 {
            assert!(!window_ends(&mut table, most, lookups(4_000)));
        }
        assert!(
            window_ends(&mut table, most, lookups(580)),
            "each window's lookups counted anew"
        );
        // Most misses new: a first pass.
        assert!(!window_ends(&mut table, EVICTED_WINDOW / 12, lookups(200)));
        assert!(
            !window_ends(&mut table, half - 1, lookups(200)),
            "fewer than half came back"
        );
        // The share is one lookup in COSTLY_SHARE, each sampled set standing for GHOST_SAMPLE.
        let costly = half * GHOST_SAMPLE * COSTLY_SHARE;
        assert!(window_ends(&mut PieceTable::new(), half, costly));
        assert!(!window_ends(&mut PieceTable::new(), half, costly + 1));
        let mut largest = PieceTable::with_sets(TABLE_MAX_SETS);
        assert!(
            !window_ends(&mut largest, most, lookups(580)),
            "16 MB is the bound"
        );
    }

    #[test]
    fn a_grown_piece_table_keeps_the_evicted_pieces_it_kept() {
        let mut table = PieceTable::new();
        let text = b"alpha beta gamma delta..........";
        let in_set = |table: &PieceTable, start, end| TableKey {
            line: 9 * SET_BYTES,
            ..table.key(text, start, end)
        };
        decide_keep_evicted(&mut table, EVICTED_WINDOW);
        assert!(table.keep_evicted);
        for (n, (start, end)) in [(0, 5), (5, 10), (10, 16)].into_iter().enumerate() {
            let key = in_set(&table, start, end);
            table.put(&key, &[n as u32]);
        }
        table.grow();
        assert!(table.keep_evicted, "still kept");
        // Each piece in the set its hash picks in the grown table, "alpha" as an evicted one.
        for (n, (start, end)) in [(0, 5), (5, 10), (10, 16)].into_iter().enumerate() {
            let key = table.key(text, start, end);
            assert_eq!(table_ids(&mut table, &key), Some(vec![n as u32]), "{n}");
        }
    }
}
