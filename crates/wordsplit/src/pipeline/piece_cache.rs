//! The per-thread cache of merged pieces: piece bytes → ids, so a piece seen before is not
//! merged again.

use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

use crate::huge_pages::{HugeSlice, Zeroable};

/// Pieces that need merging repeat a lot in real text (a word seen before, a run of spaces),
/// so each thread remembers the ids of recent ones, per pipeline, in a two-way
/// set-associative table (a CPU cache's layout): a lookup reads one set of two 64-byte entries,
/// an insert evicts the set's least recently used entry, nothing is allocated per piece.
/// Text where nothing repeats (random Unicode) then costs a store per piece, not a hash-map
/// insert that allocates. The table starts at 32,768 entries (2 MB, touched on the first
/// insert) and doubles, up to 131,072 entries (8 MB), when pieces it evicted keep coming
/// back ([`GROW_AFTER`]): 2 MB of English prose has about 12,000 distinct pieces that are
/// not tokens, 2 MB of multilingual text about 69,000, and a table too small for them merges
/// the same pieces again on every pass over the text.
const CACHE_SETS: usize = 1 << 14;
/// The table doubles when as many pieces it evicted have come back as a `1 / GROW_AFTER`
/// of its sets: text whose pieces recur further apart than the table reaches.
const GROW_AFTER: usize = 4;
/// The most sets the table grows to: 8 MB per pipeline per thread.
const CACHE_MAX_SETS: usize = 1 << 16;
pub(super) const CACHE_MAX_PIECE: usize = 32;
const CACHE_MAX_IDS: usize = 7;

/// One cached piece: its bytes zero-padded to 32 and its length (0: empty), and its ids.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct CacheEntry {
    key: [u64; 4],
    len: u8,
    count: u8,
    ids: [u32; CACHE_MAX_IDS],
}

// SAFETY: integers only; all zeros is an empty entry (len 0 matches no piece).
unsafe impl Zeroable for CacheEntry {}

impl CacheEntry {
    #[inline]
    fn holds(&self, key: &[u64; 4], len: usize) -> bool {
        self.key == *key && usize::from(self.len) == len
    }
}

/// Piece bytes → ids, for one pipeline on one thread. In each set, way 0 is the entry last
/// answered for (or the only one), way 1 the next to be evicted.
pub(super) struct PieceCache {
    /// On 2 MiB pages where the OS gives them ([`HugeSlice`]): each lookup reads a random
    /// set, and a table that grows takes one page fault per 2 MiB instead of per 4 KiB.
    sets: HugeSlice<[CacheEntry; 2]>,
    /// Per set, the top byte of the hash of each way's piece (0 for an empty way): 32 to
    /// 128 KB that stay in the CPU's cache, where a set of the 2 to 8 MB table is a cache
    /// miss. On text never seen before a third of the lookups (multilingual) are pieces the
    /// cache does not hold; when neither tag matches, the lookup ends here, and the set's
    /// line starts loading while the piece merges, ready for the insert that follows.
    tags: Box<[[u8; 2]]>,
    /// Per set, the tag of the piece it last evicted: a piece put whose tag is its set's
    /// ghost was most likely evicted before and is back, which a larger table would have
    /// answered.
    ghosts: Box<[u8]>,
    /// Pieces put back since the table last grew (it doubles when they reach
    /// [`GROW_AFTER`] of its sets).
    returned: usize,
    /// The pieces too long for `sets`.
    pub long: LongPieces,
}

impl PieceCache {
    pub fn new() -> Self {
        Self {
            // The first table from the allocator (most pipelines' caches stay at it; its
            // recycled pages fault less than a fresh mapping); grown ones on huge pages.
            sets: HugeSlice::zeroed_ordinary(CACHE_SETS),
            tags: vec![[0u8; 2]; CACHE_SETS].into_boxed_slice(),
            ghosts: vec![0u8; CACHE_SETS].into_boxed_slice(),
            returned: 0,
            long: LongPieces::new(),
        }
    }

    /// The set and the tag of a piece's hash (the number of sets is a power of two).
    #[inline(always)]
    fn place(&self, hash: u64) -> (usize, u8) {
        ((hash as usize) & (self.tags.len() - 1), (hash >> 56) as u8)
    }

    /// The padded key of `bytes[start..end]`, a piece of 1 to 32 bytes, and its hash (whose
    /// low bits pick the set, its top byte the tag, [`Self::place`]). Read
    /// with four 8-byte loads and masks when `bytes` holds 32 bytes from `start` (a piece
    /// inside a longer text): a copy of the piece's own length is a call to `memcpy` per
    /// piece.
    #[inline(always)]
    pub fn key_in(bytes: &[u8], start: usize, end: usize) -> ([u64; 4], u64) {
        /// `KEEP[len]` keeps the first `len` bytes of four little-endian words.
        const KEEP: [[u64; 4]; CACHE_MAX_PIECE + 1] = {
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
        let len = end - start;
        let key: [u64; 4] = if start + 32 <= bytes.len() {
            let keep = &KEEP[len];
            std::array::from_fn(|i| {
                let at = start + 8 * i;
                u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) & keep[i]
            })
        } else {
            let mut padded = [0u8; 32];
            padded[..len].copy_from_slice(&bytes[start..end]);
            std::array::from_fn(|i| {
                u64::from_le_bytes(padded[8 * i..8 * i + 8].try_into().unwrap())
            })
        };
        (key, Self::hash(&key, len))
    }

    /// The hash of a piece's padded key and length.
    #[inline(always)]
    fn hash(key: &[u64; 4], len: usize) -> u64 {
        // Multiply-folds: every key bit and the length reach the low bits that pick the set.
        let fold = |a: u64, b: u64| {
            let product = u128::from(a) * u128::from(b);
            (product as u64) ^ ((product >> 64) as u64)
        };
        let first = fold(
            key[0] ^ 0x243f_6a88_85a3_08d3,
            key[1] ^ 0x1319_8a2e_0370_7345,
        );
        fold(
            key[2] ^ first ^ 0xa409_3822_299f_31d1,
            key[3] ^ len as u64 ^ 0x082e_fa98_ec4e_6c89,
        )
    }

    /// The cached ids of `piece`, whose key and hash [`Self::key_in`] gave: from its set, or,
    /// for a piece longer than an entry's ids, from [`Self::long`] (where [`Self::put`] keeps
    /// the pieces of more ids).
    #[inline(always)]
    pub fn get(&mut self, key: &[u64; 4], piece: &[u8], hash: u64) -> Option<&[u32]> {
        let (set, tag) = self.place(hash);
        let tags = &mut self.tags[set];
        let ways = &mut self.sets[set];
        let len = piece.len();
        let held = if tags[0] != tag && tags[1] != tag {
            crate::tables::prefetch(ways);
            false
        } else if ways[0].holds(key, len) {
            true
        } else if ways[1].holds(key, len) {
            ways.swap(0, 1);
            tags.swap(0, 1);
            true
        } else {
            false
        };
        if held {
            let way = &self.sets[set][0];
            Some(&way.ids[..usize::from(way.count)])
        } else if len > CACHE_MAX_IDS {
            self.long.get(piece, hash)
        } else {
            None
        }
    }

    /// Remembers that `piece` (key and hash from [`Self::key_in`]) encodes as `ids`: in its
    /// set, or in [`Self::long`] when they are more than an entry holds.
    #[inline]
    pub fn put(&mut self, key: [u64; 4], piece: &[u8], hash: u64, ids: &[u32]) {
        if ids.len() > CACHE_MAX_IDS {
            self.long.put(piece, hash, ids);
            return;
        }
        let (set, tag) = self.place(hash);
        let ghost = &mut self.ghosts[set];
        self.returned += usize::from(*ghost == tag);
        if self.sets[set][1].len != 0 {
            *ghost = self.tags[set][1];
        }
        // A new piece takes the older way, and moves to the front on its first hit: a set
        // whose pieces keep coming back in turn (more of them than ways) then keeps answering
        // for one, where putting each in front evicted every one before it came back.
        // Written in place: no whole entry built and copied per piece merged.
        let entry = if self.sets[set][0].len == 0 {
            self.push_front(set, tag)
        } else {
            self.tags[set][1] = tag;
            &mut self.sets[set][1]
        };
        entry.key = key;
        entry.len = piece.len() as u8;
        entry.count = ids.len() as u8;
        entry.ids[..ids.len()].copy_from_slice(ids);
        if self.returned >= self.tags.len() / GROW_AFTER && self.tags.len() < CACHE_MAX_SETS {
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
            if entry.len != 0 {
                let (set, tag) = self.place(Self::hash(&entry.key, usize::from(entry.len)));
                *self.push_front(set, tag) = entry;
            }
        }
        self.ghosts = vec![0u8; sets].into_boxed_slice();
        self.returned = 0;
    }

    /// Moves way 0 of `set` to way 1 (evicting way 1's piece) and gives way 0, tagged `tag`,
    /// for the caller to write the new most recent piece into.
    #[inline(always)]
    fn push_front(&mut self, set: usize, tag: u8) -> &mut CacheEntry {
        let tags = &mut self.tags[set];
        *tags = [tag, tags[0]];
        let ways = &mut self.sets[set];
        ways[1] = ways[0];
        &mut ways[0]
    }

    /// The bytes of the table of entries as it is now (it grows, [`CACHE_MAX_SETS`]).
    #[cfg(test)]
    fn table_bytes(&self) -> usize {
        std::mem::size_of_val(&self.sets[..])
    }
}

/// Longer pieces repeat too: the ruled lines and box drawing of tables (`+------+----`,
/// ` =====`, `├──┼──`), long identifiers and paths, and words of scripts without spaces
/// between them. They are few (0.1 % of English prose's pieces) but merging one costs
/// microseconds (buffer-sweep is quadratic in the piece's length), so in a pass over prose
/// they took an eighth of the time, four fifths of it on repeats. So do the pieces of up to
/// 32 bytes that encode to more ids than a [`PieceCache`] entry holds: in 1 MB of
/// multilingual text, 3,600 distinct pieces (8 % of the bytes, mostly Chinese and Japanese),
/// which were merged again on every pass over it. They are held apart from [`PieceCache`]'s
/// fixed entries: a two-way set-associative table of [`LONG_SETS`] sets whose keys and ids
/// live in two arenas, emptied all at once when one fills, so the memory stays bounded
/// (under 1.3 MB) and nothing is allocated per piece.
pub(super) const LONG_MAX_PIECE: usize = 256;
const LONG_SETS: usize = 4096;
const LONG_MAX_BYTES: usize = 512 * 1024;
const LONG_MAX_IDS: usize = 128 * 1024;

/// One long piece: its hash, where its bytes and ids are in the arenas (`len` 0: empty).
#[derive(Clone, Copy, Default)]
struct LongSlot {
    hash: u64,
    start: u32,
    len: u32,
    ids_start: u32,
    ids_len: u32,
}

/// Pieces of `CACHE_MAX_PIECE + 1` to [`LONG_MAX_PIECE`] bytes, and shorter pieces of more
/// than `CACHE_MAX_IDS` ids → ids. Any 64-bit hash of the piece's bytes serves, as long as
/// [`Self::get`] and [`Self::put`] of one piece are given the same: [`Self::hash`] for long
/// pieces, [`PieceCache::key_in`]'s for the short ones.
pub(super) struct LongPieces {
    /// In each set, way 0 is the more recently put piece.
    sets: Box<[[LongSlot; 2]]>,
    bytes: Vec<u8>,
    ids: Vec<u32>,
}

impl LongPieces {
    fn new() -> Self {
        Self {
            sets: vec![[LongSlot::default(); 2]; LONG_SETS].into_boxed_slice(),
            bytes: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// A hash for [`Self::get`] and [`Self::put`] of pieces of any length.
    #[inline]
    pub fn hash(piece: &[u8]) -> u64 {
        FxBuildHasher.hash_one(piece)
    }

    #[inline]
    fn set(hash: u64) -> usize {
        (hash % LONG_SETS as u64) as usize
    }

    /// The cached ids of `piece`, whose hash is `hash`.
    #[inline]
    pub fn get(&self, piece: &[u8], hash: u64) -> Option<&[u32]> {
        self.sets[Self::set(hash)].iter().find_map(|slot| {
            let start = slot.start as usize;
            let ids_start = slot.ids_start as usize;
            (slot.hash == hash
                && slot.len as usize == piece.len()
                && self.bytes[start..start + piece.len()] == *piece)
                .then(|| &self.ids[ids_start..ids_start + slot.ids_len as usize])
        })
    }

    /// Remembers that `piece` (hash `hash`) encodes as `ids`, in place of the older piece of
    /// its set.
    pub fn put(&mut self, piece: &[u8], hash: u64, ids: &[u32]) {
        if piece.len() > LONG_MAX_PIECE || ids.len() > LONG_MAX_IDS {
            return;
        }
        if self.bytes.len() + piece.len() > LONG_MAX_BYTES
            || self.ids.len() + ids.len() > LONG_MAX_IDS
        {
            // The arenas hold every piece put since they were last emptied, including the
            // ones whose slots were taken since: start again.
            self.bytes.clear();
            self.ids.clear();
            self.sets.fill([LongSlot::default(); 2]);
        }
        let ways = &mut self.sets[Self::set(hash)];
        ways[1] = ways[0];
        ways[0] = LongSlot {
            hash,
            start: self.bytes.len() as u32,
            len: piece.len() as u32,
            ids_start: self.ids.len() as u32,
            ids_len: ids.len() as u32,
        };
        self.bytes.extend_from_slice(piece);
        self.ids.extend_from_slice(ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`PieceCache::key_in`] of a whole slice.
    fn key_of(piece: &[u8]) -> ([u64; 4], u64) {
        PieceCache::key_in(piece, 0, piece.len())
    }

    #[test]
    fn piece_cache_keys_read_in_place_equal_copied_keys() {
        // Inside a text (four loads and masks) and near its end (a copy): the same key.
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
    fn piece_cache_keys_are_exact() {
        let mut cache = PieceCache::new();
        let pieces: [&[u8]; 5] = [b"a", b"a\0", b"a\0\0", b"abcdefgh", &[7u8; 32]];
        for (i, piece) in pieces.iter().enumerate() {
            let (key, set) = key_of(piece);
            cache.put(key, piece, set, &[i as u32, 99]);
        }
        for (i, piece) in pieces.iter().enumerate() {
            let (key, set) = key_of(piece);
            // A later piece may have evicted this one from its set, never answered for it.
            if let Some(ids) = cache.get(&key, piece, set) {
                assert_eq!(ids, &[i as u32, 99]);
            }
        }
        let (key, set) = key_of(b"a");
        assert_eq!(cache.get(&key, b"a", set), Some(&[0u32, 99][..]));
        let (key, set) = key_of(b"xyz");
        cache.put(key, b"xyz", set, &[1; CACHE_MAX_IDS + 1]);
        assert_eq!(cache.get(&key, b"xyz", set), None, "too many ids to keep");
        // Two pieces in one set both stay; a third evicts the least recently used.
        let mut cache = PieceCache::new();
        let (k1, k2, k3) = ([1, 0, 0, 0], [2, 0, 0, 0], [3, 0, 0, 0]);
        cache.put(k1, &[1], 5, &[1]);
        cache.put(k2, &[2], 5, &[2]);
        assert_eq!(cache.get(&k1, &[1], 5), Some(&[1u32][..]));
        cache.put(k3, &[3], 5, &[3]);
        assert_eq!(cache.get(&k2, &[2], 5), None);
        assert_eq!(cache.get(&k1, &[1], 5), Some(&[1u32][..]));
        assert_eq!(cache.get(&k3, &[3], 5), Some(&[3u32][..]));
        // The same with tags that differ (hashes whose top bytes differ, one set): the tags
        // follow their entries through the swaps, and a tag that matches neither way is a miss.
        let mut cache = PieceCache::new();
        let [h1, h2, h3] = [1u64, 2, 3].map(|tag| tag << 56 | 5);
        cache.put(k1, &[1], h1, &[1]);
        cache.put(k2, &[2], h2, &[2]);
        assert_eq!(cache.get(&k1, &[1], h1), Some(&[1u32][..]));
        assert_eq!(cache.get(&k2, &[2], h2), Some(&[2u32][..]));
        assert_eq!(cache.get(&k1, &[1], h3), None, "right key, wrong tag");
        cache.put(k3, &[3], h3, &[3]);
        assert_eq!(cache.get(&k1, &[1], h1), None);
        assert_eq!(cache.get(&k2, &[2], h2), Some(&[2u32][..]));
        assert_eq!(cache.get(&k3, &[3], h3), Some(&[3u32][..]));
        assert_eq!(cache.tags[5], [3, 2]);
    }

    #[test]
    fn pieces_coming_back_in_turn_keep_one_answered() {
        // Three pieces of one set, asked for in turn, each put when missed: the first stays
        // in front and is answered every round; the other two take turns in the other way.
        let mut cache = PieceCache::new();
        let keys = [[1, 0, 0, 0], [2, 0, 0, 0], [3, 0, 0, 0]];
        let mut hits = [0; 3];
        for _ in 0..10 {
            for (i, key) in keys.iter().enumerate() {
                match cache.get(key, &[i as u8 + 1], 9) {
                    Some(ids) => {
                        assert_eq!(ids, [i as u32]);
                        hits[i] += 1;
                    }
                    None => cache.put(*key, &[i as u8 + 1], 9, &[i as u32]),
                }
            }
        }
        assert_eq!(hits, [9, 0, 0]);
    }

    #[test]
    fn piece_cache_grows_to_its_bound_keeping_its_pieces() {
        let mut cache = PieceCache::new();
        assert_eq!(cache.table_bytes(), 2 << 20);
        let piece = |i: usize| format!("{i:x}-piece").into_bytes();
        let ids = |i: usize| [i as u32, (i * 7) as u32];
        // Far more distinct pieces than the largest table holds.
        let n = 3 * 2 * CACHE_MAX_SETS;
        let put = |cache: &mut PieceCache, i: usize| {
            let p = piece(i);
            let (key, hash) = key_of(&p);
            cache.put(key, &p, hash, &ids(i));
            // The piece just put is there, through any growth it caused.
            assert_eq!(cache.get(&key, &p, hash), Some(&ids(i)[..]), "{i}");
        };
        // Pieces seen once each do not grow it: a larger table would not have answered them.
        for i in 0..n {
            put(&mut cache, i);
        }
        assert_eq!(cache.table_bytes(), 2 << 20);
        // Pieces that come back after their eviction do, up to 8 MB: pieces drawn at random
        // from 100,000 (more than the 2 MB table holds, fewer than the 8 MB one).
        let mut sizes = vec![cache.table_bytes()];
        let mut state = 1u64;
        let mut recent = std::collections::VecDeque::new();
        for _ in 0..3_000_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (state >> 33) as usize % 100_000;
            put(&mut cache, i);
            recent.push_front(i);
            recent.truncate(100);
            if cache.table_bytes() != *sizes.last().unwrap() {
                sizes.push(cache.table_bytes());
                // Growing kept the pieces put just before it.
                for &j in &recent {
                    let p = piece(j);
                    let (key, hash) = key_of(&p);
                    assert_eq!(cache.get(&key, &p, hash), Some(&ids(j)[..]), "{j}");
                }
            }
        }
        assert_eq!(
            sizes,
            [2 << 20, 4 << 20, 8 << 20],
            "doubles up to 8 MB, no further"
        );
        // Every answer is exact: a piece is either its own ids or a miss.
        let mut held = 0;
        for i in 0..n {
            let p = piece(i);
            let (key, hash) = key_of(&p);
            if let Some(got) = cache.get(&key, &p, hash) {
                assert_eq!(got, &ids(i)[..]);
                held += 1;
            }
        }
        assert!(
            held > CACHE_MAX_SETS && held <= 2 * CACHE_MAX_SETS,
            "{held}"
        );
    }

    #[test]
    fn long_pieces_are_exact_and_bounded() {
        let mut long = LongPieces::new();
        let piece = |fill: u8, len: usize| vec![fill; len];
        let a = piece(b'=', 74);
        let ha = LongPieces::hash(&a);
        assert_eq!(long.get(&a, ha), None);
        long.put(&a, ha, &[1, 2, 3]);
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        // Same length, same slot and hash, other bytes: not this piece's ids.
        let mut b = a.clone();
        b[40] = b'-';
        assert_eq!(long.get(&b, ha), None);
        // A shorter piece that is a prefix of a cached one is not it either.
        assert_eq!(long.get(&a[..60], LongPieces::hash(&a[..60])), None);
        // Two pieces of one set both stay; a third replaces the older.
        long.put(&b, ha, &[4]);
        assert_eq!(long.get(&b, ha), Some(&[4u32][..]));
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        let mut c = a.clone();
        c[0] = b'~';
        long.put(&c, ha, &[5, 6]);
        assert_eq!(long.get(&c, ha), Some(&[5u32, 6][..]));
        assert_eq!(long.get(&b, ha), Some(&[4u32][..]));
        assert_eq!(long.get(&a, ha), None);
        // Filling the arenas empties them: the memory stays bounded, the answers exact.
        let mut put = 0;
        for i in 0..(2 * LONG_MAX_BYTES / LONG_MAX_PIECE) {
            let p: Vec<u8> = (0..LONG_MAX_PIECE).map(|j| (i * 7 + j) as u8).collect();
            let h = LongPieces::hash(&p);
            long.put(&p, h, &[i as u32]);
            assert_eq!(long.get(&p, h), Some(&[i as u32][..]));
            assert!(long.bytes.len() <= LONG_MAX_BYTES && long.ids.len() <= LONG_MAX_IDS);
            put += 1;
        }
        assert!(put > LONG_MAX_BYTES / LONG_MAX_PIECE);
        assert_eq!(long.get(&b, ha), None, "emptied when the arenas filled");
        // Pieces past the limit are not kept.
        let too_long = piece(b'x', LONG_MAX_PIECE + 1);
        let h = LongPieces::hash(&too_long);
        long.put(&too_long, h, &[9]);
        assert_eq!(long.get(&too_long, h), None);
    }
}
