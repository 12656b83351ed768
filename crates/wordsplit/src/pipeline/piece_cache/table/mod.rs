//! [`PieceTable`]: every short piece a thread's texts have shown, the piece loop's first
//! lookup. Here the table, its keys and its ways; in `eviction.rs` what it does with the
//! pieces it evicts and when it grows, in `seeds.rs` the vocabulary's tokens it can start
//! with, in `chunk_keys.rs` the keys the scan makes for it ahead of their lookups, and in
//! `ids.rs` how an entry holds a piece's ids.

use super::entries::{CompactEntry, Entry, COUNT_SHIFT};
use super::long_pieces::HeldIds;
use super::COMPACT_MAX_IDS;
use crate::huge_pages::HugeSlice;
use eviction::ghost_tag;
use ids::{pack, TableIds, HELD};

pub(in crate::pipeline) use chunk_keys::{ChunkKeys, CHUNK};
pub(in crate::pipeline) use ids::{TABLE_MAX_IDS, TABLE_WRITES};

mod chunk_keys;
mod eviction;
mod ids;
mod seeds;

/// A piece's place in a [`PieceTable`]: its key's two words (as a compact
/// [`PieceKey`](super::entries::PieceKey)'s) and where its set is.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(in crate::pipeline) struct TableKey {
    lo: u64,
    hi: u64,
    /// The byte offset of its set in the table (the set's index times [`SET_BYTES`], as
    /// the scan computes it for its prefetch, so the lookup does not multiply again).
    /// Below the table's size (it reads its set unchecked): only the table's
    /// [`TableLines`](chunk_keys::TableLines) make keys with other lines than 0.
    line: usize,
}

impl TableKey {
    /// The key of a piece no [`PieceTable`] holds.
    const OUTSIDE: Self = Self {
        lo: 0,
        hi: OUTSIDE,
        line: 0,
    };

    /// Whether a [`PieceTable`] can hold the piece (see
    /// [`TableLines::key_asking`](chunk_keys::TableLines::key_asking)).
    #[inline(always)]
    pub fn fits(&self) -> bool {
        self.hi & OUTSIDE == 0
    }
}

/// The `hi` of a [`TableKey`] whose piece no [`PieceTable`] holds: a bit that no entry's key
/// word has once its count of ids is masked off, so such a key matches no entry.
const OUTSIDE: u64 = 1 << 63;

/// A [`PieceTable`]'s fewest sets: 65,536 of two 32-byte entries, 4 MB (an empty table's,
/// and the seeds' of a vocabulary of up to 104,857 tokens of up to 15 bytes; see
/// [`PieceTable::seeds`]).
const TABLE_SETS: usize = 1 << 16;
/// An unseeded [`PieceTable`]'s first sets: 16,384, 1 MB ([`PieceTable::unseeded`]).
const UNSEEDED_SETS: usize = 1 << 14;
/// The most sets a [`PieceTable`] grows to: 262,144, 16 MB.
const TABLE_MAX_SETS: usize = 1 << 18;
/// The bytes of a [`PieceTable`] set: one cache line.
const SET_BYTES: usize = std::mem::size_of::<[CompactEntry; 2]>();

/// Every piece of up to 15 bytes and seven ids the thread's texts have shown, whole tokens and
/// single bytes included (the vocabulary's from the start, where the pipeline has
/// [`Self::seeds`]): the piece loop's first lookup, before the token index and the
/// [`PieceCache`](super::PieceCache)'s tables. Text seen before then costs one line per
/// piece, requested while the scanner finds the pieces ahead of it, and no branch on whether
/// a piece is a token (unpredictable on multilingual text). Two-way sets of
/// [`CompactEntry`]s, one cache line each, whose four id slots hold up to four ids or five
/// to seven packed ([`TableIds`]); a new piece takes way 0 and pushes its predecessor to way
/// 1, a piece found in way 1 moves to way 0. Zeroed memory, touched where written, or a copy
/// of the pipeline's seeds ([`Self::seeds`]), touched whole when the thread first encodes.
///
/// A piece of more than seven ids (up to 15, two or three per character of a rare script)
/// is kept as where the long pieces' arena holds its ids ([`Self::put_held`]).
///
/// It is the only cache of the merged pieces it can hold: asking the
/// [`PieceCache`](super::PieceCache)'s tables too for each piece it lacks (their tags, then
/// a set's line) and putting each merged piece there costs more than the pieces they
/// answer in a first pass, where most pieces a table lacks are new. Instead, a set keeps
/// the piece it last evicted as a third way while evicted pieces come back, and the table
/// grows, up to 16 MB, when they keep coming back (`eviction.rs`, [`Self::grow_due`]).
pub(in crate::pipeline) struct PieceTable {
    sets: HugeSlice<[CompactEntry; 2]>,
    /// The offsets of the table's sets, as a mask of a key's line ([`line_of`]): the count of
    /// sets less one, times [`SET_BYTES`].
    lines_mask: usize,
    /// Pieces it had lost that came back, since it last grew: the evidence for growing
    /// ([`Self::grow_due`]).
    returned: usize,
    /// Pieces looked up since the table last grew.
    looked_up: usize,
    /// Per set, the tag ([`ghost_tag`]) of the piece it last evicted ([`Self::push`]): a
    /// piece the set lacks whose tag is its set's ghost was most likely evicted and is
    /// back, which a third way would have answered.
    ghosts: Box<[u8]>,
    /// Per set, the piece it last evicted, kept while [`Self::keep_evicted`]: a third way,
    /// read only when the set's ghost is the tag of the piece asked for. Empty until evicted
    /// pieces are first kept ([`Self::keep_evicted`]): most tables never keep them, and
    /// their room made at the start would be zeroed in every thread's first encode.
    evicted: HugeSlice<CompactEntry>,
    /// Whether evicted pieces are kept in `evicted`, as decided by [`Self::grow_due`] from
    /// the share of missed pieces that came back (and kept when it grows).
    keep_evicted: bool,
    /// Pieces neither way held, and those of them whose tag was their set's ghost, since
    /// `keep_evicted` was last decided or the table grew.
    missed: usize,
    came_back: usize,
    /// Pieces looked up since `keep_evicted` was last decided or the table grew: the
    /// window's lookups.
    window_looked_up: usize,
}

/// The hash of a compact key's two words: one multiplication, whose top bits (every bit
/// of the key reaches them) pick the set.
#[inline(always)]
fn mix(lo: u64, hi: u64) -> u64 {
    (lo ^ hi.rotate_left(29)).wrapping_mul(MIX)
}

/// Where the bits of a [`mix`] that pick a set start: the top 18 bits pick one of the
/// largest table's sets, and the low bits of those one of a smaller table's.
const SET_BITS_AT: u32 = 64 - TABLE_MAX_SETS.trailing_zeros();

/// The offset of the set of the piece whose compact key words are `lo` and `hi`, in a
/// table whose [`PieceTable::lines_mask`] is `lines_mask`: one multiplication, a shift by
/// a constant and a mask, fewer instructions per piece than a shift by the table's own
/// count of bits or the [`PieceCache`](super::PieceCache)'s 128-bit fold.
#[inline(always)]
fn line_of(lo: u64, hi: u64, lines_mask: usize) -> usize {
    (mix(lo, hi) >> LINE_SHIFT) as usize & lines_mask
}

/// The shift of a [`mix`] that leaves its set bits at a set's offset ([`line_of`]).
const LINE_SHIFT: u32 = SET_BITS_AT - SET_BYTES.trailing_zeros();
/// [`mix`]'s multiplier.
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl PieceTable {
    /// An empty table of the first size (the tests'; a cache's is [`Self::unseeded`] or a
    /// copy of seeds).
    #[cfg(test)]
    pub fn new() -> Self {
        Self::with_sets(TABLE_SETS)
    }

    /// An empty table for a pipeline without seeds (a word model's: Unigram, or a vocabulary
    /// that lacks some bytes), a quarter of [`Self::new`]'s: such a table holds only the
    /// pieces the texts show, not the vocabulary's tokens first, and its memory is zeroed
    /// by the kernel as each page is first written, inside the first pass: 4 MB of fresh
    /// pages were a fifth of a first pass of T5's tokenizer.json over 2 MB of prose (17,098
    /// distinct words of up to 15 bytes, which 1 MB's 32,768 entries hold); it grows when
    /// the pieces it evicts come back, as any table does.
    pub fn unseeded() -> Self {
        Self::with_sets(UNSEEDED_SETS)
    }

    fn with_sets(sets: usize) -> Self {
        debug_assert!(sets.is_power_of_two() && sets <= TABLE_MAX_SETS);
        Self {
            sets: HugeSlice::zeroed(sets),
            lines_mask: (sets - 1) * SET_BYTES,
            returned: 0,
            looked_up: 0,
            ghosts: vec![0; sets].into_boxed_slice(),
            evicted: HugeSlice::zeroed_ordinary(0),
            keep_evicted: false,
            missed: 0,
            came_back: 0,
            window_looked_up: 0,
        }
    }

    /// The set of `key`, without a bounds check: `key.line` is a set's offset in this
    /// table or a smaller one.
    #[inline(always)]
    fn set(&self, key: &TableKey) -> &[CompactEntry; 2] {
        debug_assert!(key.line < self.sets.len() * SET_BYTES);
        // SAFETY: every `TableKey` is made by the `TableLines` of this table (one at a time
        // or eight, kept in `ChunkKeys`), whose `line` is a set index below the table's count
        // of sets (then or since: it only grows) times `SET_BYTES`, or is `Default` or
        // `TableKey::OUTSIDE` (line 0).
        unsafe { &*self.sets.as_ptr().byte_add(key.line) }
    }

    /// Doubles the table, keeping every piece it holds (each set's older piece put first,
    /// so that the recent one stays the more recent in its new set) and, while it keeps
    /// them, the pieces its sets evicted (each the evicted piece of its new set, with its
    /// ghost), rather than making their room again and faulting it in during a later pass.
    /// Keys made before, and [`TableLines`](chunk_keys::TableLines), are stale after it:
    /// make new ones.
    #[cold]
    pub fn grow(&mut self) {
        let mut grown = Self::with_sets(2 * self.sets.len());
        for entry in self.sets.iter().flat_map(|ways| [ways[1], ways[0]]) {
            if !entry.is_empty() {
                let [lo, hi] = entry.key_words();
                grown.push(line_of(lo, hi, grown.lines_mask), entry);
            }
        }
        if self.keep_evicted {
            grown.keep_evicted();
            for &entry in self.evicted.iter() {
                if !entry.is_empty() {
                    let [lo, hi] = entry.key_words();
                    let set = line_of(lo, hi, grown.lines_mask) / SET_BYTES;
                    grown.evicted[set] = entry;
                    grown.ghosts[set] = ghost_tag(lo, hi);
                }
            }
        }
        *self = grown;
    }

    /// The ids of `key`'s piece if the table holds it (in either way of its set, or as the
    /// piece the set last evicted, [`Self::get_evicted`]). The piece becomes its set's most
    /// recent. The piece loop asks the same in two steps ([`Self::get_in_ways`], then
    /// [`Self::get_missed`]); the tests in one.
    #[cfg(test)]
    pub fn get(&mut self, key: &TableKey) -> Option<TableIds<'_>> {
        if self.find_in_ways(key) {
            Some(TableIds::of(&self.set(key)[0]))
        } else {
            self.get_missed(key)
        }
    }

    /// The ids of `key`'s piece if a way of its set holds it (it becomes the set's most
    /// recent): no call, for the piece loop's own loop over the pieces the table holds (see
    /// `Pipeline::encode_pieces`).
    #[inline(always)]
    pub fn get_in_ways(&mut self, key: &TableKey) -> Option<TableIds<'_>> {
        if self.find_in_ways(key) {
            Some(TableIds::of(&self.set(key)[0]))
        } else {
            None
        }
    }

    /// Whether a way of `key`'s set holds its piece, which is then in way 0.
    #[inline(always)]
    fn find_in_ways(&mut self, key: &TableKey) -> bool {
        // `CompactEntry::key_words` spelled out: through it, the loop ran more instructions
        // per piece.
        let mask = !(0xf << COUNT_SHIFT);
        let holds = |entry: &CompactEntry| entry.key[0] == key.lo && entry.key[1] & mask == key.hi;
        // Short-circuit tests: branches the CPU predicts on text seen before, where the piece
        // is mostly in way 0, cost less than all four comparisons and a branchless select. A
        // piece found in way 1 trades places with way 0: fewer mispredicted tests of way 0,
        // and the set's older piece is the one a new piece evicts.
        if holds(&self.set(key)[0]) {
            true
        } else if holds(&self.set(key)[1]) {
            // SAFETY: as in `set`.
            let ways = unsafe { &mut *self.sets.as_mut_ptr().byte_add(key.line) };
            ways.swap(0, 1);
            true
        } else {
            false
        }
    }

    /// Keeps `key`'s piece (`key.fits()`) and its `ids` in way 0 of its set if they are 1 to
    /// [`TABLE_MAX_IDS`] ([`TableIds::write`]'s room holds no more), and when more than four,
    /// each of at most [`PACKED_BITS`](ids::PACKED_BITS) bits (no vocabulary read here has
    /// more tokens). A piece it does not keep is asked elsewhere each time.
    #[inline]
    pub(super) fn put(&mut self, key: &TableKey, ids: &[u32]) {
        debug_assert!(key.fits());
        if ids.is_empty() || ids.len() > TABLE_MAX_IDS {
            return;
        }
        let held = if ids.len() <= COMPACT_MAX_IDS {
            let mut held = [0; COMPACT_MAX_IDS];
            held[..ids.len()].copy_from_slice(ids);
            held
        } else {
            match pack(ids) {
                Some(packed) => packed,
                None => return,
            }
        };
        let entry = CompactEntry {
            key: [key.lo, key.hi | (ids.len() as u64) << COUNT_SHIFT],
            ids: held,
        };
        self.push(key.line, entry);
    }

    /// Keeps `key`'s piece (`key.fits()`), whose ids are more than an entry holds, as
    /// where the long pieces' arena has them (`held`): a piece of up to 15 bytes and eight
    /// or more ids (two or three per character of a rare script) is then one line and a
    /// read of the arena, not a probe of the token index and a merge. Answered while the
    /// arena is not emptied ([`LongPieces::held`](super::LongPieces::held)).
    #[inline]
    pub(super) fn put_held(&mut self, key: &TableKey, held: HeldIds) {
        debug_assert!(key.fits());
        let entry = CompactEntry {
            key: [key.lo, key.hi | HELD << COUNT_SHIFT],
            ids: [
                held.start,
                held.len,
                held.generation as u32,
                (held.generation >> 32) as u32,
            ],
        };
        self.push(key.line, entry);
    }

    /// Puts `entry` in way 0 of the set at offset `line`, its way 0 moving to way 1 and way
    /// 1's piece leaving the set (its tag kept as the set's ghost, and the piece itself while
    /// evicted pieces are kept).
    #[inline(always)]
    fn push(&mut self, line: usize, entry: CompactEntry) {
        let set = line / SET_BYTES;
        let keeps_ghost = self.keeps_ghost(line);
        let ways = &mut self.sets[set];
        if keeps_ghost && !ways[1].is_empty() {
            let [lo, hi] = ways[1].key_words();
            self.ghosts[set] = ghost_tag(lo, hi);
            if self.keep_evicted {
                self.evicted[set] = ways[1];
            }
        }
        ways[1] = ways[0];
        ways[0] = entry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids a [`PieceTable`] answers for `key`, as a vector.
    pub(super) fn table_ids(table: &mut PieceTable, key: &TableKey) -> Option<Vec<u32>> {
        table.get(key).map(|ids| {
            let mut out = vec![0; TABLE_WRITES];
            // SAFETY: `out` has room for `TABLE_WRITES` ids.
            let count = unsafe { ids.write(out.as_mut_ptr()) };
            out.truncate(count.expect("the ids are in the entry"));
            out
        })
    }

    /// Puts each of `pieces` (the bytes `text[start..end]` and their ids) in `table`, then
    /// asks for each and checks its ids.
    pub(super) fn puts_then_answers(
        table: &mut PieceTable,
        text: &[u8],
        pieces: &[(usize, usize, Vec<u32>)],
    ) {
        for (start, end, ids) in pieces {
            let key = table.key(text, *start, *end);
            table.put(&key, ids);
        }
        for (start, end, ids) in pieces {
            let key = table.key(text, *start, *end);
            assert_eq!(table_ids(table, &key).as_ref(), Some(ids), "{start}..{end}");
        }
    }

    #[test]
    fn piece_table_answers_each_piece_exactly() {
        let mut table = PieceTable::new();
        let text = b"the cat sat on the mat, and the dog? it sat too.................";
        let fresh = table.key(text, 4, 7);
        assert_eq!(
            table_ids(&mut table, &fresh),
            None,
            "an empty table holds nothing"
        );
        // One to four ids, pieces of 1 to 15 bytes.
        let pieces = [
            (0, 3, vec![1u32]),
            (3, 4, vec![2]),
            (4, 19, vec![3, 4, 5, 6]),
            (19, 22, vec![7, 8]),
        ];
        puts_then_answers(&mut table, text, &pieces);
        // A piece that starts with another's bytes is not that piece (length in the key).
        let key = table.key(text, 0, 2);
        assert_eq!(table_ids(&mut table, &key), None);
        let key = table.key(text, 4, 18);
        assert_eq!(table_ids(&mut table, &key), None);
        // A key that does not fit matches nothing, not even an empty entry.
        let long = table.key(text, 0, 16);
        assert!(!long.fits());
        assert_eq!(table_ids(&mut table, &long), None);
    }

    #[test]
    fn piece_table_sets_keep_the_two_latest_pieces() {
        let mut table = PieceTable::new();
        // Three pieces placed in one set (a chosen set, as a colliding hash would give).
        let text = b"alpha beta gamma................";
        let in_set = |start, end| TableKey {
            line: 7 * SET_BYTES,
            ..table.key(text, start, end)
        };
        let (a, b, c) = (in_set(0, 5), in_set(5, 10), in_set(10, 16));
        table.put(&a, &[1]);
        table.put(&b, &[2, 3]);
        // Each found in way 1 (the other was put or found after it) moves to way 0.
        assert_eq!(table_ids(&mut table, &a), Some(vec![1]));
        assert_eq!(table_ids(&mut table, &b), Some(vec![2, 3]));
        // `b`, found last, is the set's most recent: the new piece evicts `a`.
        table.put(&c, &[4, 5, 6]);
        assert_eq!(table_ids(&mut table, &c), Some(vec![4, 5, 6]));
        assert_eq!(table_ids(&mut table, &b), Some(vec![2, 3]));
        assert_eq!(
            table_ids(&mut table, &a),
            None,
            "the older piece left the set"
        );
        // A piece found in way 1 moves to way 0, and stays when the next piece comes.
        assert_eq!(table_ids(&mut table, &c), Some(vec![4, 5, 6]), "from way 1");
        table.put(&a, &[1]);
        assert_eq!(table_ids(&mut table, &a), Some(vec![1]));
        assert_eq!(table_ids(&mut table, &c), Some(vec![4, 5, 6]));
        assert_eq!(
            table_ids(&mut table, &b),
            None,
            "b was the older of the two"
        );
    }
}
