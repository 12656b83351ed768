//! The per-thread caches of merged pieces: piece bytes → ids, so a piece seen before is not
//! merged again.
//!
//! A thread keeps a [`PieceCache`] per vocabulary and native encoder. The piece loop asks its
//! [`PieceTable`] first (`table/`: the table, how it keeps and learns from the pieces it
//! evicts, its seeds, the keys the scan makes for it and how an entry holds its ids), then,
//! for the pieces the table cannot hold, the two-way tables of compact and wide entries
//! (`entries.rs`, `ways.rs`) and the table of long pieces (`long_pieces.rs`).

use entries::{compact_hash, wide_hash, CompactEntry, Entry, PieceKey, WideEntry, KEEP};
use ways::Ways;

pub(super) use long_pieces::{LongPieces, LONG_MAX_PIECE};
use table::TableKey;
pub(super) use table::{ChunkKeys, PieceTable, CHUNK, TABLE_MAX_IDS, TABLE_WRITES};

mod entries;
mod long_pieces;
mod table;
mod ways;

/// The longest piece the compact and wide tables hold: the four words of a [`WideEntry`]'s key.
pub(super) const CACHE_MAX_PIECE: usize = 32;
/// The lengths of the pieces too long for a [`PieceTable`] and short enough for a
/// [`WideEntry`].
const WIDE_PIECES: std::ops::RangeInclusive<usize> = COMPACT_MAX_PIECE + 1..=CACHE_MAX_PIECE;
/// The longest piece, and the most ids, a [`CompactEntry`] holds.
const COMPACT_MAX_PIECE: usize = 15;
const COMPACT_MAX_IDS: usize = 4;
/// The most ids a [`WideEntry`] holds.
const WIDE_MAX_IDS: usize = 7;
/// The compact table's sets at first (2 MB, room for the distinct compact pieces of a few
/// megabytes of text) and at most (8 MB).
const COMPACT_SETS: usize = 1 << 15;
const COMPACT_MAX_SETS: usize = 1 << 17;
/// The wide table's sets at first (2 MB: growing is slow to see a need, so it starts as
/// large as the compact table) and at most (4 MB).
const WIDE_SETS: usize = 1 << 14;
const WIDE_MAX_SETS: usize = 1 << 15;
/// A table doubles when as many pieces it evicted have come back as a `1 / GROW_AFTER` of
/// its sets: text whose pieces recur further apart than the table reaches.
const GROW_AFTER: usize = 4;

/// Piece bytes → ids, for one pipeline on one thread. Pieces that need merging repeat a lot
/// in real text (a word seen before, a run of spaces), so each thread remembers the ids of
/// recent ones, per vocabulary and native encoder (see `Pipeline::cache_key`).
///
/// The piece loop asks its [`PieceTable`] first, and these tables for the pieces the table
/// cannot hold (more than 15 bytes, or at the end of a text where their key cannot be read
/// in place; whole tokens among them are kept here too); the loops without a piece table
/// (a foreign encoder, a vocabulary that lacks some bytes) ask them for every piece that
/// needs merging. They are two-way set-associative tables (a CPU cache's layout, [`Ways`]):
/// a lookup reads one set, an insert replaces one way of it, nothing is allocated per
/// piece, so text where nothing repeats (random Unicode) costs a store per piece, not a
/// hash-map insert that allocates.
///
/// Most such pieces are short: a piece of up to 15 bytes and four ids takes a
/// [`CompactEntry`] (32 bytes, a set of two of them one cache line); one of up to 32 bytes
/// and seven ids a [`WideEntry`] (64 bytes); longer pieces and pieces of more ids,
/// [`LongPieces`]. The compact table starts at 65,536 entries (2 MB) and the wide one at
/// 32,768 (2 MB); each doubles when pieces it evicted keep coming back ([`GROW_AFTER`]), up
/// to 8 MB and 4 MB, so that text read again is not merged again on every pass. The wide
/// table's pages are touched only where pieces are written. With their tags,
/// [`LongPieces`] and the [`PieceTable`] (4 or 8 MB, growing to 16 MB, with up to 8.25 MB
/// more for its evicted pieces and their tags), a cache holds at most 46 MB.
pub(super) struct PieceCache {
    compact: Ways<CompactEntry>,
    wide: Ways<WideEntry>,
    /// The pieces too long for the other two, or of more ids.
    pub long: LongPieces,
    /// Every short piece the texts have shown, whole tokens included: asked first.
    pub table: PieceTable,
}

impl PieceCache {
    /// An empty cache, or one whose piece table starts as a copy of `seeds`.
    pub fn new(seeds: Option<&PieceTable>) -> Self {
        Self {
            compact: Ways::new(COMPACT_SETS, COMPACT_MAX_SETS, true),
            wide: Ways::new(WIDE_SETS, WIDE_MAX_SETS, false),
            long: LongPieces::new(),
            table: seeds.map_or_else(PieceTable::unseeded, PieceTable::copy_of),
        }
    }

    /// The key of `bytes[start..end]`, a piece of 1 to 32 bytes. Read with two (compact) or
    /// four 8-byte loads and masks when `bytes` holds 16 or 32 bytes from `start` (a piece
    /// inside a longer text): a copy of the piece's own length is a call to `memcpy` per
    /// piece.
    #[inline(always)]
    pub fn key_in(bytes: &[u8], start: usize, end: usize) -> PieceKey {
        let len = end - start;
        // Word `i` of the piece at `at`, `at + 8 * i + 8 <= from.len()`; unaligned loads
        // without per-load bounds checks.
        let word = |from: &[u8], at: usize, i: usize| {
            debug_assert!(at + 8 * i + 8 <= from.len());
            // SAFETY: the caller checked that the 8 bytes are in `from`.
            let word = unsafe { from.as_ptr().add(at + 8 * i).cast::<u64>().read_unaligned() };
            u64::from_le(word) & KEEP[len][i]
        };
        if len <= COMPACT_MAX_PIECE {
            let mut padded = [0u8; 16];
            let (from, at) = if start + 16 <= bytes.len() {
                (bytes, start)
            } else {
                padded[..len].copy_from_slice(&bytes[start..end]);
                (&padded[..], 0)
            };
            let lo = word(from, at, 0);
            let hi = word(from, at, 1) | (len as u64) << 56;
            PieceKey {
                words: [lo, hi, 0, 0],
                hash: compact_hash(lo, hi),
            }
        } else {
            let mut padded = [0u8; 32];
            let (from, at) = if start + 32 <= bytes.len() {
                (bytes, start)
            } else {
                padded[..len].copy_from_slice(&bytes[start..end]);
                (&padded[..], 0)
            };
            let words = [0, 1, 2, 3].map(|i| word(from, at, i));
            PieceKey {
                words,
                hash: wide_hash(&words, len),
            }
        }
    }

    /// The cached ids of `piece`, whose key [`Self::key_in`] gave: from the table its length
    /// and its count of ids would have put it in (a piece's count of ids is at most its
    /// length, so a piece of `n` bytes is never in a table of entries of more than `n` ids).
    #[inline(always)]
    pub fn get(&mut self, key: &PieceKey, piece: &[u8]) -> Option<&[u32]> {
        let len = piece.len();
        if len <= COMPACT_MAX_PIECE {
            if let Some(set) = self.compact.find(key, len, true) {
                return Some(self.compact.sets[set][0].ids());
            }
            if len <= COMPACT_MAX_IDS {
                return None;
            }
        }
        if let Some(set) = self.wide.find(key, len, len > COMPACT_MAX_PIECE) {
            Some(self.wide.sets[set][0].ids())
        } else if len > WIDE_MAX_IDS {
            self.long.get(piece, key.hash)
        } else {
            None
        }
    }

    /// Asks the CPU for the lines that [`Self::get`] reads first for `bytes[start..end]`, a
    /// piece of [`WIDE_PIECES`] bytes (too long for the [`PieceTable`], so asked here each
    /// time): the wide table's tags and set, and the long pieces' tags and set, which are
    /// rarely in the CPU's cache once other work has run. A hint: no effect on any answer.
    #[inline(never)]
    fn prefetch_wide(&self, bytes: &[u8], start: usize, end: usize) {
        use crate::tables::prefetch;
        // Made again when the piece is looked up, rather than kept for it: a 32-byte key in
        // every slot of the piece loop's chunk, for the few pieces of these lengths.
        let key = Self::key_in(bytes, start, end);
        let (set, _) = self.wide.place(key.hash);
        prefetch(&self.wide.tags[set]);
        prefetch(&self.wide.sets[set][0]);
        prefetch(&self.wide.sets[set][1]);
        let long = LongPieces::set(key.hash);
        prefetch(&self.long.tags[long]);
        prefetch(&self.long.sets[long]);
    }

    /// Keeps `key`'s piece (`key.fits()`) and its `ids`, which the other tables have just
    /// answered or been given, in the [`PieceTable`]: in its entry when they fit
    /// ([`PieceTable::put`]), else as where the long pieces' arena holds them, when it is
    /// the arena's last piece asked or put ([`LongPieces::last_held`]).
    #[inline]
    pub fn put_table(&mut self, key: &TableKey, ids: &[u32]) {
        if ids.len() <= TABLE_MAX_IDS {
            self.table.put(key, ids);
        } else if let Some(held) = self.long.last_held(ids) {
            self.table.put_held(key, held);
        }
    }

    /// How many pieces the compact and wide tables hold.
    #[cfg(test)]
    pub fn merged_pieces_kept(&self) -> usize {
        self.compact.held() + self.wide.held()
    }

    /// Appends the ids of `bytes[start..end]`, a piece of up to 15 bytes, if the long
    /// pieces' arena holds them ([`Self::put_long_ids`]); whether it did.
    #[inline(never)]
    pub fn long_ids(&mut self, bytes: &[u8], start: usize, end: usize, out: &mut Vec<u32>) -> bool {
        let key = Self::key_in(bytes, start, end);
        match self.long.get(&bytes[start..end], key.hash) {
            Some(ids) => {
                out.extend_from_slice(ids);
                true
            }
            None => false,
        }
    }

    /// Keeps the `ids` of `bytes[start..end]`, a piece of up to 15 bytes and more ids than
    /// a [`PieceTable`] entry holds, in the long pieces' arena, for the table to point at
    /// ([`Self::put_table`]).
    #[cold]
    pub fn put_long_ids(&mut self, bytes: &[u8], start: usize, end: usize, ids: &[u32]) {
        let key = Self::key_in(bytes, start, end);
        self.long.put(&bytes[start..end], key.hash, ids);
    }

    /// Remembers that `piece` (key from [`Self::key_in`]) encodes as `ids`: in a compact
    /// entry, a wide one, or with the long pieces when they are more than either holds.
    #[inline]
    pub fn put(&mut self, key: &PieceKey, piece: &[u8], ids: &[u32]) {
        let len = piece.len();
        if ids.len() > WIDE_MAX_IDS {
            self.long.put(piece, key.hash, ids);
        } else if len <= COMPACT_MAX_PIECE && ids.len() <= COMPACT_MAX_IDS {
            self.compact.put(key, len, ids);
        } else {
            self.wide.put(key, len, ids);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`PieceCache::key_in`] of a whole slice.
    pub(super) fn key_of(piece: &[u8]) -> PieceKey {
        PieceCache::key_in(piece, 0, piece.len())
    }

    /// The key of `piece` with the hash `hash`, to put pieces in chosen sets with chosen tags.
    fn key_hashed(piece: &[u8], hash: u64) -> PieceKey {
        PieceKey {
            hash,
            ..key_of(piece)
        }
    }

    #[test]
    fn piece_cache_keys_read_in_place_equal_copied_keys() {
        // Inside a text (loads and masks) and near its end (a copy): the same key.
        let text: Vec<u8> = (0..80u8).map(|b| b.wrapping_mul(41) | 1).collect();
        for start in 0..text.len() {
            for end in start + 1..=text.len().min(start + CACHE_MAX_PIECE) {
                let piece = text[start..end].to_vec();
                assert_eq!(
                    PieceCache::key_in(&text, start, end),
                    key_of(&piece),
                    "{start}..{end}"
                );
            }
        }
    }

    #[test]
    fn each_piece_is_kept_where_its_length_and_ids_fit_and_answered_exactly() {
        let mut cache = PieceCache::new(None);
        // (piece, ids): compact (up to 15 bytes and 4 ids), wide (16 to 32 bytes, or 5 to 7
        // ids) and long (8 ids or more), with pieces that differ only in their length or in
        // a zero byte, and a 16-byte piece whose last byte is the 15-byte one's length (the
        // byte a compact key keeps its length in).
        let fifteen = [b'x'; 15];
        let mut sixteen = [b'x'; 16];
        sixteen[15] = 15;
        let pieces: Vec<(Vec<u8>, Vec<u32>)> = vec![
            (b"a".to_vec(), vec![1]),
            (b"a\0".to_vec(), vec![2, 3]),
            (b"a\0\0".to_vec(), vec![4, 5, 6]),
            (b"abcd".to_vec(), vec![7, 8, 9, 10]),
            (b"abcde".to_vec(), vec![11, 12, 13, 14, 15]),
            (fifteen.to_vec(), vec![16, 17, 18, 19, 20, 21, 22]),
            (sixteen.to_vec(), vec![23, 24, 25, 26, 27, 28, 29]),
            (fifteen[..14].to_vec(), vec![30, 31]),
            (vec![7u8; 32], vec![32]),
            (b"abcdefgh".to_vec(), (40..48).collect()),
            (vec![9u8; 32], (50..82).collect()),
        ];
        for (piece, ids) in &pieces {
            cache.put(&key_of(piece), piece, ids);
        }
        for (piece, ids) in &pieces {
            assert_eq!(
                cache.get(&key_of(piece), piece),
                Some(&ids[..]),
                "{piece:?}"
            );
        }
        for piece in [&b"b"[..], b"a\0\0\0", b"abcdef", &fifteen[..13], &[7u8; 31]] {
            assert_eq!(cache.get(&key_of(piece), piece), None, "{piece:?}");
        }
        // Where they went: one table each by length and count of ids.
        let held =
            |ways: &[[CompactEntry; 2]]| ways.iter().flatten().filter(|e| !e.is_empty()).count();
        assert_eq!(held(&cache.compact.sets), 5);
        let held =
            |ways: &[[WideEntry; 2]]| ways.iter().flatten().filter(|e| !e.is_empty()).count();
        assert_eq!(held(&cache.wide.sets), 4);
    }

    #[test]
    fn a_set_keeps_its_two_most_recently_used_pieces() {
        // Two pieces in one set both stay; a third evicts the least recently used.
        let mut cache = PieceCache::new(None);
        let [k1, k2, k3] = [b"1", b"2", b"3"].map(|p| key_hashed(p, 5));
        cache.put(&k1, b"1", &[1]);
        cache.put(&k2, b"2", &[2]);
        assert_eq!(cache.get(&k1, b"1"), Some(&[1u32][..]));
        cache.put(&k3, b"3", &[3]);
        assert_eq!(cache.get(&k2, b"2"), None);
        assert_eq!(cache.get(&k1, b"1"), Some(&[1u32][..]));
        assert_eq!(cache.get(&k3, b"3"), Some(&[3u32][..]));
        assert_eq!(
            cache.compact.tags[5],
            [1, 1],
            "hashes whose top byte is 0 are tagged 1: 0 marks an empty way"
        );
        // The same with tags that differ (hashes whose top bytes differ, one set): the tags
        // follow their entries through the swaps, and a tag that matches neither way is a miss.
        let mut cache = PieceCache::new(None);
        let [h1, h2, h3] = [1u64, 2, 3].map(|tag| tag << 56 | 5);
        let [k1, k2, k3] = [(b"1", h1), (b"2", h2), (b"3", h3)].map(|(p, h)| key_hashed(p, h));
        cache.put(&k1, b"1", &[1]);
        cache.put(&k2, b"2", &[2]);
        assert_eq!(cache.get(&k1, b"1"), Some(&[1u32][..]));
        assert_eq!(cache.get(&k2, b"2"), Some(&[2u32][..]));
        assert_eq!(
            cache.get(&key_hashed(b"1", h3), b"1"),
            None,
            "right key, wrong tag"
        );
        cache.put(&k3, b"3", &[3]);
        assert_eq!(cache.get(&k1, b"1"), None);
        assert_eq!(cache.get(&k2, b"2"), Some(&[2u32][..]));
        assert_eq!(cache.get(&k3, b"3"), Some(&[3u32][..]));
        assert_eq!(cache.compact.tags[5], [3, 2]);
    }

    #[test]
    fn pieces_coming_back_in_turn_keep_one_answered() {
        // Three pieces of one set, asked for in turn, each put when missed: the first stays
        // in front and is answered every round; the other two take turns in the other way.
        for pieces in [
            [&b"1"[..], b"2", b"3"],
            [&[1u8; 20][..], &[2; 20], &[3; 20]],
        ] {
            let mut cache = PieceCache::new(None);
            let keys = pieces.map(|p| key_hashed(p, 9));
            let mut hits = [0; 3];
            for _ in 0..10 {
                for (i, (key, piece)) in keys.iter().zip(pieces).enumerate() {
                    match cache.get(key, piece) {
                        Some(ids) => {
                            assert_eq!(ids, [i as u32]);
                            hits[i] += 1;
                        }
                        None => cache.put(key, piece, &[i as u32]),
                    }
                }
            }
            assert_eq!(hits, [9, 0, 0]);
        }
    }

    /// Puts pieces made by `piece` into a new cache as a text would, and checks that the
    /// table `table_bytes` measures grows, up to its bound, only when evicted pieces come
    /// back, keeping its pieces and answering exactly, up to `largest` bytes of entries of
    /// `entry_bytes`. `distinct` pieces drawn at random are more than the table holds at half
    /// its largest size and fewer than at its largest.
    fn grows_to_its_bound(
        piece: impl Fn(usize) -> Vec<u8>,
        table_bytes: impl Fn(&PieceCache) -> usize,
        largest: usize,
        entry_bytes: usize,
        distinct: usize,
    ) {
        let entries_at_most = largest / entry_bytes;
        let mut cache = PieceCache::new(None);
        let first = table_bytes(&cache);
        let ids = |i: usize| [i as u32, (i * 7) as u32];
        let put = |cache: &mut PieceCache, i: usize| {
            let p = piece(i);
            let key = key_of(&p);
            cache.put(&key, &p, &ids(i));
            // The piece just put is there, through any growth it caused.
            assert_eq!(cache.get(&key, &p), Some(&ids(i)[..]), "{i}");
        };
        // Pieces seen once each (three times as many as it holds, none of those drawn below)
        // do not grow it: a larger table would not have answered them. (A piece whose tag is
        // its set's last evicted one counts as back, one in 256 of the pieces seen once, so
        // many more of them would grow it in the end.)
        for i in distinct..distinct + 3 * first / entry_bytes {
            put(&mut cache, i);
        }
        assert_eq!(table_bytes(&cache), first);
        let mut sizes = vec![first];
        let mut state = 1u64;
        let mut recent = std::collections::VecDeque::new();
        for _ in 0..20 * distinct {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (state >> 33) as usize % distinct;
            put(&mut cache, i);
            recent.push_front(i);
            recent.truncate(100);
            if table_bytes(&cache) != *sizes.last().unwrap() {
                sizes.push(table_bytes(&cache));
                // Growing kept the pieces put just before it.
                for &j in &recent {
                    let p = piece(j);
                    assert_eq!(cache.get(&key_of(&p), &p), Some(&ids(j)[..]), "{j}");
                }
            }
        }
        let doubled: Vec<usize> = std::iter::successors(Some(first), |&size| Some(2 * size))
            .take_while(|&size| size <= largest)
            .collect();
        assert_eq!(sizes, doubled, "doubles up to {largest} bytes, no further");
        // Every answer is exact: a piece is either its own ids or a miss.
        let mut held = 0;
        for i in 0..distinct + 3 * first / entry_bytes {
            let p = piece(i);
            if let Some(got) = cache.get(&key_of(&p), &p) {
                assert_eq!(got, &ids(i)[..]);
                held += 1;
            }
        }
        assert!(
            held > entries_at_most / 2 && held <= entries_at_most,
            "{held}"
        );
    }

    #[test]
    fn compact_pieces_grow_their_table_to_its_bound() {
        grows_to_its_bound(
            |i| format!("{i:x}-pc").into_bytes(),
            |cache| cache.compact.table_bytes(),
            8 << 20,
            32,
            200_000,
        );
        assert_eq!(PieceCache::new(None).compact.table_bytes(), 2 << 20);
    }

    #[test]
    fn wide_pieces_grow_their_table_to_its_bound() {
        grows_to_its_bound(
            |i| format!("{i:x}-longer-than-sixteen").into_bytes(),
            |cache| cache.wide.table_bytes(),
            4 << 20,
            64,
            50_000,
        );
        assert_eq!(PieceCache::new(None).wide.table_bytes(), 2 << 20);
    }
}
