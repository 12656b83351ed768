//! The per-thread cache of merged pieces: piece bytes → ids, so a piece seen before is not
//! merged again.

use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

use crate::huge_pages::{HugeSlice, Zeroable};
use crate::tables::MergeTables;

/// Pieces that need merging repeat a lot in real text (a word seen before, a run of spaces),
/// so each thread remembers the ids of recent ones, per vocabulary and native encoder (see
/// `Pipeline::cache_key`), in two-way set-associative tables (a CPU cache's layout,
/// [`Ways`]): a lookup reads one set, an insert evicts the set's least recently used entry,
/// nothing is allocated per piece. Text where nothing repeats (random Unicode) then costs a
/// store per piece, not a hash-map insert that allocates.
///
/// The piece loop asks these tables for the pieces its [`PieceTable`] cannot hold (more
/// than 15 bytes, or at the end of a text where their key cannot be read in place; whole
/// tokens among them are kept here too), and the
/// loops without a piece table (a foreign encoder, a vocabulary that lacks some bytes) for
/// every piece that needs merging. Most such pieces are short: a piece of up to 15 bytes
/// and four ids ([`CompactEntry`], 32 bytes) is 51 % of the pieces of multilingual text
/// (80 % of those that are not tokens) and 99 % of prose's that are not, and a set of two
/// of them is one cache line. The others, of
/// up to 32 bytes and seven ids, take 64-byte entries ([`WideEntry`]); longer pieces and
/// pieces of more ids, [`LongPieces`]. The compact table starts at 65,536 entries (2 MB)
/// and the wide one at 32,768 (2 MB); each doubles when
/// pieces it evicted keep coming back ([`GROW_AFTER`]), up to 8 MB and 4 MB: 2 MB of
/// multilingual text has about 50,000 distinct compact pieces and 14,000 wide ones, and a
/// table too small for them merges the same pieces again on every pass over the text.
/// The wide table starts that large because growing is slow to see a need: from 8,192
/// entries, repeated passes over 1 MB of multilingual text in 10 KB documents (5,500
/// distinct wide pieces) ran at half speed for about 25 passes before it had grown. Its
/// pages are touched only where pieces are written.
/// With their tags, [`LongPieces`] and the [`PieceTable`] asked before them (4 or 8 MB,
/// growing to 16 MB, with up to 8.25 MB more for its evicted pieces and their tags), a cache
/// holds at most 46 MB.
pub(super) const CACHE_MAX_PIECE: usize = 32;
/// The lengths of the pieces of [`WideEntry`]s: too long for a [`PieceTable`].
pub(super) const WIDE_PIECES: std::ops::RangeInclusive<usize> =
    COMPACT_MAX_PIECE + 1..=CACHE_MAX_PIECE;
/// The longest piece, and the most ids, a [`CompactEntry`] holds.
const COMPACT_MAX_PIECE: usize = 15;
pub(super) const COMPACT_MAX_IDS: usize = 4;
/// The most ids a [`WideEntry`] holds.
const WIDE_MAX_IDS: usize = 7;
const COMPACT_SETS: usize = 1 << 15;
const COMPACT_MAX_SETS: usize = 1 << 17;
const WIDE_SETS: usize = 1 << 14;
const WIDE_MAX_SETS: usize = 1 << 15;
/// A table doubles when as many pieces it evicted have come back as a `1 / GROW_AFTER` of
/// its sets: text whose pieces recur further apart than the table reaches.
const GROW_AFTER: usize = 4;

/// A piece of 1 to 32 bytes as a cache key: its bytes zero-padded, as little-endian words.
/// A piece of up to 15 bytes (compact) fills only the first two, with its length in the top
/// byte of the second (the 16th byte, which it does not have); a longer one all four.
/// `hash`'s low bits pick the set, its top byte is the tag.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct PieceKey {
    words: [u64; 4],
    hash: u64,
}

/// A cache entry of a [`Ways`] table: a piece's key and its ids.
trait Entry: Zeroable {
    /// Whether this entry holds the piece of `key`, of `len` bytes.
    fn holds(&self, key: &PieceKey, len: usize) -> bool;
    fn ids(&self) -> &[u32];
    fn is_empty(&self) -> bool;
    /// Holds the piece of `key` (`len` bytes) and its `ids` (as many as the entry takes).
    fn write(&mut self, key: &PieceKey, len: usize, ids: &[u32]);
    /// The hash of the key it holds, to place it again when its table grows.
    fn rehash(&self) -> u64;
}

/// A piece of up to [`COMPACT_MAX_PIECE`] bytes and [`COMPACT_MAX_IDS`] ids in 32 bytes: its
/// key's two words (the length in the top byte's low half, the count of ids in its high
/// half) and its ids.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct CompactEntry {
    key: [u64; 2],
    ids: [u32; COMPACT_MAX_IDS],
}

/// Where a [`CompactEntry`] keeps its count of ids: bits the key of a compact piece leaves
/// zero (its top byte is its length, at most 15).
const COUNT_SHIFT: u32 = 60;

// SAFETY: integers only; all zeros is an empty entry (length 0 matches no piece).
unsafe impl Zeroable for CompactEntry {}

impl CompactEntry {
    /// The two words of its piece's key, without the count of ids ([`COUNT_SHIFT`]).
    #[inline(always)]
    fn key_words(&self) -> [u64; 2] {
        [self.key[0], self.key[1] & !(0xf << COUNT_SHIFT)]
    }
}

impl Entry for CompactEntry {
    #[inline(always)]
    fn holds(&self, key: &PieceKey, _len: usize) -> bool {
        // The length is in the key's top byte; the count bits above it are masked off.
        let [lo, hi] = self.key_words();
        lo == key.words[0] && hi == key.words[1]
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        &self.ids[..(self.key[1] >> COUNT_SHIFT) as usize]
    }
    fn is_empty(&self) -> bool {
        self.key[1] == 0
    }
    #[inline(always)]
    fn write(&mut self, key: &PieceKey, _len: usize, ids: &[u32]) {
        self.key = [
            key.words[0],
            key.words[1] | (ids.len() as u64) << COUNT_SHIFT,
        ];
        self.ids[..ids.len()].copy_from_slice(ids);
    }
    fn rehash(&self) -> u64 {
        let [lo, hi] = self.key_words();
        compact_hash(lo, hi)
    }
}

/// A piece of up to [`CACHE_MAX_PIECE`] bytes and [`WIDE_MAX_IDS`] ids in 64 bytes: its key's
/// four words, its length (0: empty), the count of its ids and the ids.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct WideEntry {
    key: [u64; 4],
    len: u8,
    count: u8,
    ids: [u32; WIDE_MAX_IDS],
}

// SAFETY: integers only; all zeros is an empty entry (len 0 matches no piece).
unsafe impl Zeroable for WideEntry {}

impl Entry for WideEntry {
    #[inline(always)]
    fn holds(&self, key: &PieceKey, len: usize) -> bool {
        self.key == key.words && usize::from(self.len) == len
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        &self.ids[..usize::from(self.count)]
    }
    fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    fn write(&mut self, key: &PieceKey, len: usize, ids: &[u32]) {
        self.key = key.words;
        self.len = len as u8;
        self.count = ids.len() as u8;
        self.ids[..ids.len()].copy_from_slice(ids);
    }
    fn rehash(&self) -> u64 {
        let len = usize::from(self.len);
        if len <= COMPACT_MAX_PIECE {
            compact_hash(self.key[0], self.key[1])
        } else {
            wide_hash(&self.key, len)
        }
    }
}

/// `KEEP[len]` keeps the first `len` bytes of four little-endian words: a piece's key is its
/// bytes read in whole words, masked to its length.
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

/// The product of `a` and `b` folded to 64 bits: every bit of either reaches the low bits
/// that pick a set and the top byte that is the tag.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The hash of a compact piece's two key words (its length is in the second).
#[inline(always)]
fn compact_hash(lo: u64, hi: u64) -> u64 {
    fold(lo ^ 0x243f_6a88_85a3_08d3, hi ^ 0x1319_8a2e_0370_7345)
}

/// The hash of a piece of 16 to 32 bytes: its four key words and its length.
#[inline(always)]
fn wide_hash(key: &[u64; 4], len: usize) -> u64 {
    let first = fold(
        key[0] ^ 0x243f_6a88_85a3_08d3,
        key[1] ^ 0x1319_8a2e_0370_7345,
    );
    fold(
        key[2] ^ first ^ 0xa409_3822_299f_31d1,
        key[3] ^ len as u64 ^ 0x082e_fa98_ec4e_6c89,
    )
}

/// A two-way set-associative table of entries `E`. In each set, way 0 is the entry last
/// answered for (or the only one), way 1 the next to be evicted.
struct Ways<E: Entry> {
    /// On 2 MiB pages where the OS gives them ([`HugeSlice`]) once grown, and the compact
    /// table from the start: each lookup reads a random set, and the table takes one page
    /// fault per 2 MiB instead of per 4 KiB. From the allocator, on 4 KiB pages, the first
    /// compact table took most of 2,100 page faults in a first pass over 17 MB of prose (5 %
    /// of its time), and the first encode of a new tokenizer paid for zeroing recycled
    /// memory (2.9 against 1.4 ms). The first wide table stays on 4 KiB pages from the
    /// allocator (`huge: false`): few of its sets are written on most text, and a fresh 2 MiB
    /// page is slow to fault in on a virtual machine: a new tokenizer's first pass over 1 MB
    /// of prose, the first text to write a wide piece, took 11 ms with it on a huge page and
    /// 6 ms without (multilingual text and code, which write more of them: 10 % and 5 %
    /// slower without).
    sets: HugeSlice<[E; 2]>,
    /// Per set, the top byte of the hash of each way's piece (0 for an empty way): 3 bytes
    /// per set that stay in the CPU's cache, where a set of the table is a cache miss. On
    /// text never seen before a third of the lookups (multilingual) are pieces the cache
    /// does not hold; when neither tag matches, the lookup ends here, and the set's line
    /// starts loading while the piece merges, ready for the insert that follows.
    tags: Box<[[u8; 2]]>,
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
    fn new(sets: usize, max_sets: usize, huge: bool) -> Self {
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
    fn place(&self, hash: u64) -> (usize, u8) {
        (
            (hash as usize) & (self.tags.len() - 1),
            ((hash >> 56) as u8).max(1),
        )
    }

    /// The set whose way 0 holds the piece of `key` (`len` bytes), if the table holds it.
    /// On a miss, with `prefetch`, the set's line starts loading for the put that follows.
    #[inline(always)]
    fn find(&mut self, key: &PieceKey, len: usize, prefetch: bool) -> Option<usize> {
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
    fn put(&mut self, key: &PieceKey, len: usize, ids: &[u32]) {
        let (set, tag) = self.place(key.hash);
        let ghost = &mut self.ghosts[set];
        self.returned += usize::from(*ghost == tag);
        // Which ways are empty, from the tags (in the CPU's cache) rather than the set,
        // whose line is rarely there: read, it was two thirds of this function's time in a
        // first pass over multilingual text, where the writes below wait on nothing.
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
    fn held(&self) -> usize {
        self.sets.iter().flatten().filter(|e| !e.is_empty()).count()
    }

    /// The bytes of the table of entries as it is now.
    #[cfg(test)]
    fn table_bytes(&self) -> usize {
        std::mem::size_of_val(&self.sets[..])
    }
}

/// Piece bytes → ids, for one pipeline on one thread: compact pieces, wide pieces and the
/// rest (see [`CACHE_MAX_PIECE`]).
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
            table: seeds.map_or_else(PieceTable::new, PieceTable::copy_of),
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
    /// time): the wide table's tags and set, and the long pieces' tags and set. A hint: no
    /// effect on any answer. Warm passes over 1 MB of multilingual text, with 64 MB written
    /// between them (as other work does to the CPU's caches), ran 9-10 % faster with it.
    #[inline(never)]
    pub fn prefetch_wide(&self, bytes: &[u8], start: usize, end: usize) {
        use crate::tables::prefetch;
        // Made again when the piece is looked up, rather than kept for it: a 32-byte key in
        // every slot of the piece loop's chunk, for about one piece in forty.
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

/// A piece's place in a [`PieceTable`]: its key's two words (as a compact [`PieceKey`]'s)
/// and where its set is.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct TableKey {
    lo: u64,
    hi: u64,
    /// The byte offset of its set in the table (the set's index times [`SET_BYTES`], as
    /// the scan computes it for its prefetch, so the lookup does not multiply again).
    /// Below the table's size (it reads its set unchecked): only [`TableLines::key_asking`]
    /// (and its test twin `key`) makes keys with other lines than 0.
    line: usize,
}

impl TableKey {
    /// The key of a piece no [`PieceTable`] holds.
    const OUTSIDE: Self = Self {
        lo: 0,
        hi: OUTSIDE,
        line: 0,
    };

    /// Whether a [`PieceTable`] can hold the piece (see [`TableLines::key_asking`]).
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
/// The most sets a [`PieceTable`] grows to: 262,144, 16 MB.
const TABLE_MAX_SETS: usize = 1 << 18;
/// The bytes of a [`PieceTable`] set: one cache line.
const SET_BYTES: usize = std::mem::size_of::<[CompactEntry; 2]>();

/// Every piece of up to 15 bytes and seven ids the thread's texts have shown, whole tokens and
/// single bytes included (the vocabulary's from the start, where the pipeline has
/// [`Self::seeds`]): the piece loop's first lookup, before the token index and the
/// [`PieceCache`]'s tables. Text seen before then costs one line per piece, requested while
/// the scanner finds the pieces ahead of it, and no branch on whether a piece is a token
/// (a coin toss on multilingual text). Two-way sets of [`CompactEntry`]s, one cache line
/// each, whose four id slots hold up to four ids or five to seven packed ([`TableIds`]);
/// a new piece takes way 0 and pushes its predecessor to way 1, a piece found in way 1
/// moves to way 0. Zeroed memory, touched where written, or a copy of the pipeline's
/// seeds ([`Self::seeds`]), touched whole when the thread first encodes.
///
/// A piece of more than seven ids (up to 15, two or three per character of a rare script)
/// is kept as where the long pieces' arena holds its ids ([`Self::put_held`]).
///
/// It is the only cache of the merged pieces it can hold: asking the [`PieceCache`]'s
/// tables too for each piece it lacks (their tags, then a set's line) and putting each
/// merged piece there cost more than the pieces they answered in a first pass, where
/// most pieces a table lacks are new (without them, first passes over prose, code and
/// multilingual text ran 5, 5 and 13 % faster with cl100k_base, 3-8 % with o200k_base and
/// qwen3). A set keeps the tag of the piece it last evicted ([`Self::ghosts`]), which tells
/// a piece that comes back from a new one (a sixteenth of the sets do, [`GHOST_SAMPLE`],
/// until evicted pieces are kept); when at least one missed piece in
/// [`KEEP_EVICTED_SHARE`] comes back, as in later passes over text with more distinct
/// pieces than the sets hold two of, each set keeps the evicted piece itself as a third
/// way ([`Self::get_evicted`]): three pieces that take turns in a set are then all
/// answered, where two ways answered none of them. (Warm passes over 1 MB of
/// multilingual text: 0.82 of the speed the tables of merged pieces gave without the
/// third way, 0.95-1.0 with it.)
///
/// The table starts at 4 MB (or as large as its seeds, [`Self::seeds`]: 8 MB for o200k_base
/// and qwen3) and doubles, up to 16 MB, when the pieces it evicted keep
/// coming back: a few megabytes of text fit the first table, while 17 MB of English prose
/// has 87,500 distinct pieces, of which a 4 MB table missed 1.5 % on every pass (a quarter
/// of the lookups' time). The evidence ([`Self::returned`]) is the pieces that came back
/// by their sets' ghosts, and while the evicted pieces are kept (most missed pieces came
/// back), every missed piece. It grows after [`LOOKUPS_PER_SET`] lookups per set since it
/// last did, so that growing is a small part of the time spent, or sooner when one lookup
/// in [`RETURNED_SHARE`] or more was of a lost piece: a megabyte of random Unicode has
/// 100,000 distinct pieces of up to 15 bytes, which a 4 MB table's two-way sets hold too
/// few of (a third of the pieces of each warm pass were lost ones, at 60 MB/s; grown to
/// 16 MB within four passes, 110-130 MB/s), while first passes over the benches' corpora
/// lose too few to grow. It grows at once, too, when most missed pieces come back at a
/// cost ([`COSTLY_SHARE`]), as in passes again over multilingual text. It grows only
/// between chunks of the piece loop ([`Self::grow_due`]), so the keys of the chunk in
/// hand, which name sets of the table as it was, are looked up before it moves.
pub(super) struct PieceTable {
    sets: HugeSlice<[CompactEntry; 2]>,
    /// The offsets of the table's sets, as a mask of a key's line ([`line_of`]): the count of
    /// sets less one, times [`SET_BYTES`].
    lines_mask: usize,
    /// Pieces it had lost that came back, since it last grew (see the grow rule above).
    pub returned: usize,
    /// Pieces looked up since the table last grew.
    looked_up: usize,
    /// Per set, the tag ([`ghost_tag`]) of the piece it last evicted ([`Self::push`]): a
    /// piece the set lacks whose tag is its set's ghost was most likely evicted and is
    /// back, which a third way would have answered.
    ghosts: Box<[u8]>,
    /// Per set, the piece it last evicted, kept while [`Self::keep_evicted`]: a third way,
    /// read only when the set's ghost is the tag of the piece asked for. Empty until evicted
    /// pieces are first kept ([`Self::keep_evicted`]): most tables never keep them, and
    /// zeroing its 2 MB was part of every thread's first encode.
    evicted: HugeSlice<CompactEntry>,
    /// Whether evicted pieces are kept in `evicted`, as decided by [`Self::grow_due`] from
    /// the share of lookups of missed pieces that came back (and kept when it grows).
    keep_evicted: bool,
    /// Pieces neither way held, and those of them whose tag was their set's ghost, since
    /// `keep_evicted` was last decided or the table grew.
    missed: usize,
    came_back: usize,
    /// Pieces looked up since `keep_evicted` was last decided or the table grew: the
    /// window's lookups.
    window_looked_up: usize,
}

/// How many missed pieces of the sampled sets [`PieceTable::grow_due`] decides
/// [`PieceTable::keep_evicted`] on: about a thousand misses in all, the first warm pass over
/// 1 MB of prose or code (its vocabulary's tokens over-fill the table's sets, so some come
/// back each pass). With four times as many, warm passes over such text waited about six
/// passes for the decision and ran 5-8 % slower until then; first passes are level.
const EVICTED_WINDOW: usize = 64;

/// While evicted pieces are not kept, one set in `GHOST_SAMPLE` (the first sixteenth)
/// keeps its ghost, and the share of missed pieces that came back is taken from those:
/// their 4 KB of ghosts (at the table's first size) stay in the CPU's cache, where a ghost
/// read per missed piece from all 64 KB was a cache miss of its own (4 % of a first
/// pass's samples).
const GHOST_SAMPLE: usize = 16;

/// Evicted pieces are kept while at least one missed piece in `KEEP_EVICTED_SHARE` came
/// back (its tag was its set's ghost). In first passes over the benches' corpora that was
/// at most one in six, most windows one in ten or fewer (most missed pieces are new), and
/// keeping the evicted pieces, a write of a random line per piece put, made them 1.4 %
/// (prose) to 7 % (multilingual text) slower; in later passes over text with more distinct
/// pieces than the sets hold two of, one in two to five, each one a merge saved.
const KEEP_EVICTED_SHARE: usize = 4;

/// Evicted pieces kept are kept until fewer than one missed piece in `STOP_KEEPING_SHARE`
/// came back: in later passes over text the share moves between windows (one in five to
/// one in two over multilingual text), and a window under one in four would otherwise
/// stop keeping them, and stop the sampled sets' ghosts standing for all.
const STOP_KEEPING_SHARE: usize = 8;

/// The tag of a compact key's two words in [`PieceTable::ghosts`]: bits of its [`mix`]
/// below those that pick its set, never 0 (a set that evicted nothing).
#[inline(always)]
fn ghost_tag(lo: u64, hi: u64) -> u8 {
    (mix(lo, hi) >> 32) as u8 | 1
}

/// The lookups per set a [`PieceTable`] answers before it may grow again, unless lost pieces
/// come back often ([`RETURNED_SHARE`], [`COSTLY_SHARE`]). A doubling from
/// 4 MB took 11-16 ms on the benches' 2-core virtual machine (about 200 ns per set, most of
/// it the kernel zeroing the new pages: fresh memory is slow to fault in there) and a piece
/// 7-15 ns, so it is at most about 5 % of the time since the last one; a first pass over 38 MB
/// of prose, code and multilingual text that grew the table midway ran 15 % slower on the
/// multilingual text than with no growth. From 4 MB, the first doubling comes after 16.8
/// million pieces (75 MB of English prose).
const LOOKUPS_PER_SET: usize = 256;

/// A [`PieceTable`] grows sooner when this large a share of its lookups, one in
/// `RETURNED_SHARE`, were of pieces it had lost.
const RETURNED_SHARE: usize = 16;

/// A [`PieceTable`] grows at once after a window of missed pieces ([`EVICTED_WINDOW`]) in
/// which at least half came back, when those that came back were one lookup in
/// `COSTLY_SHARE` or more. Text read again that the table is too small for looks like
/// that: in warm passes over 1 MB of multilingual text (o200k_base) 0.8 of the missed
/// pieces came back, one lookup in 45, each a merge again unless its set's evicted piece
/// was kept (about 9 % of such a pass; grown to 8 MB in the first of them, the passes after
/// ran 1.05-1.2x as fast), where first passes over every corpus of the benches had at most
/// 0.12 come back. The share keeps a table whose text is read again and mostly fits from
/// growing for its few misses: over prose and code read again, a window of missed pieces
/// spans more than a million lookups, and without the share a window begun in such passes
/// and ended in the first pass over the next text grew the table there (a doubling, 21-28
/// ms, in a first pass over 1 MB).
const COSTLY_SHARE: usize = 64;

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
/// a constant and a mask (a shift by the table's own count of bits took three more
/// instructions per piece), where the [`PieceCache`]'s 128-bit fold took seven. A hash of
/// its own, too: the compact [`Ways`] table picks its sets by another, so pieces that evict
/// each other here do not also share a set there, and a piece this table lost is most
/// likely still there (with the same set bits, a warm pass over 1 MB of multilingual text
/// merged 30 % more pieces).
#[inline(always)]
fn line_of(lo: u64, hi: u64, lines_mask: usize) -> usize {
    (mix(lo, hi) >> LINE_SHIFT) as usize & lines_mask
}

/// The shift of a [`mix`] that leaves its set bits at a set's offset ([`line_of`]).
const LINE_SHIFT: u32 = SET_BITS_AT - SET_BYTES.trailing_zeros();
/// [`mix`]'s multiplier.
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl PieceTable {
    pub fn new() -> Self {
        Self::with_sets(TABLE_SETS)
    }

    /// A table of the vocabulary's tokens of up to 15 bytes, each with its id, for a
    /// vocabulary whose rule takes a piece that is a token as that token (whole-piece
    /// lookup, which the piece loop answers without merging,
    /// [`crate::tables::TokenIndex::shortcut`]; no two tokens have the same bytes). Where
    /// a set's two ways cannot hold all its tokens, the two lowest ids stay (the most
    /// frequent, under the rank-based rule), the lowest in way 0. The table has at least
    /// five ways for every four such tokens (4 MB for cl100k_base, 8 MB for o200k_base's
    /// 194,506 and qwen3's 149,444): at 4 MB it kept three in five of o200k_base's, the
    /// others each a probe of the token index the first time a text met them, and each new
    /// piece put evicted a token. With the rule, one pass over o200k_base prose and code in
    /// the bench ran 1.41-1.44 and 1.44-1.46 times fastokens' numpy form against 1.30-1.33 and
    /// 1.27-1.34 at 4 MB (two runs each; qwen3 level, multilingual text level), for 4 MB more
    /// of seeds per such vocabulary and 4 MB more per thread (qwen3's peak memory +41 MiB
    /// against +33).
    ///
    /// ```text
    /// cl100k_base: " hello" -> [24748], "h" -> [71] before the thread's first encode
    /// ```
    pub fn seeds(tables: &MergeTables) -> Self {
        let short = tables
            .short_tokens()
            .filter(|&(_, _, len, _)| len <= COMPACT_MAX_PIECE)
            .count();
        let sets = (short * 5 / 8).next_power_of_two();
        Self::seeds_in(tables, sets.clamp(TABLE_SETS, TABLE_MAX_SETS))
    }

    /// [`Self::seeds`] in a table of `sets` sets (a power of two, at most
    /// [`TABLE_MAX_SETS`]).
    fn seeds_in(tables: &MergeTables, sets: usize) -> Self {
        debug_assert!(tables.whole_piece_lookup(), "seeds are whole tokens");
        let mut table = Self::with_sets(sets);
        // A batch of seeds at a time, their sets' lines requested before any is written:
        // one token after another, each write waited on its own line.
        const BATCH: usize = 16;
        let mut batch = [(0usize, CompactEntry::default()); BATCH];
        let mut n = 0;
        let lines = table.lines();
        let put = |table: &mut PieceTable, batch: &[(usize, CompactEntry)]| {
            for &(line, seed) in batch {
                let id = seed.ids[0];
                let ways = &mut table.sets[line / SET_BYTES];
                if ways[0].is_empty() {
                    ways[0] = seed;
                } else if ways[1].is_empty() || id < ways[1].ids[0] {
                    ways[1] = seed;
                    if id < ways[0].ids[0] {
                        ways.swap(0, 1);
                    }
                }
            }
        };
        for (lo, hi, len, id) in tables.short_tokens() {
            if len > COMPACT_MAX_PIECE {
                continue;
            }
            let hi = hi | (len as u64) << 56;
            let line = line_of(lo, hi, table.lines_mask);
            lines.prefetch_line(line);
            batch[n] = (
                line,
                CompactEntry {
                    key: [lo, hi | 1 << COUNT_SHIFT],
                    ids: [id, 0, 0, 0],
                },
            );
            n += 1;
            if n == BATCH {
                put(&mut table, &batch);
                n = 0;
            }
        }
        put(&mut table, &batch[..n]);
        table
    }

    /// A new table holding what `seeds` holds (its sets copied; no ghost, nothing evicted).
    pub fn copy_of(seeds: &PieceTable) -> Self {
        let mut table = Self::with_sets(seeds.sets.len());
        table.sets.copy_from_slice(&seeds.sets);
        table
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

    /// The offsets of the sampled sets are below this: the first `1 / GHOST_SAMPLE` of
    /// them ([`GHOST_SAMPLE`]).
    #[inline(always)]
    fn sampled_lines(&self) -> usize {
        self.sets.len() / GHOST_SAMPLE * SET_BYTES
    }

    /// Whether the set at offset `line` keeps a ghost now: every set while evicted pieces
    /// are kept, else the sampled ones.
    #[inline(always)]
    fn keeps_ghost(&self, line: usize) -> bool {
        self.keep_evicted || line < self.sampled_lines()
    }

    /// The key of `bytes[start..end]` in this table (see [`TableLines::key`]).
    #[cfg(test)]
    pub fn key(&self, bytes: &[u8], start: usize, end: usize) -> TableKey {
        self.lines().key(bytes, start, end)
    }

    /// The set of `key`, without a bounds check: `key.line` is a set's offset in this
    /// table or a smaller one.
    #[inline(always)]
    fn set(&self, key: &TableKey) -> &[CompactEntry; 2] {
        debug_assert!(key.line < self.sets.len() * SET_BYTES);
        // SAFETY: every `TableKey` is made by `TableLines::key_asking` (or `key`) of this
        // table, whose `line` is a set index below the table's count of sets (then or since:
        // it only grows) times `SET_BYTES`, or is `Default` or `TableKey::OUTSIDE` (line 0).
        unsafe { &*self.sets.as_ptr().byte_add(key.line) }
    }

    /// Where the table's sets are and how keys find them, for the scan to make keys and ask
    /// for their lines ([`TableLines::prefetch`]) while the table is borrowed elsewhere.
    /// Valid until the table grows.
    #[inline(always)]
    pub fn lines(&self) -> TableLines {
        TableLines {
            sets: self.sets.as_ptr(),
            lines_mask: self.lines_mask,
            vector: vector_keys(),
        }
    }

    /// Whether it keeps the pieces it evicts: most missed pieces come back
    /// ([`KEEP_EVICTED_SHARE`]).
    #[inline(always)]
    pub fn keeps_evicted(&self) -> bool {
        self.keep_evicted
    }

    /// Keeps the pieces it evicts from now on, as when most missed pieces come back; the
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

    /// Doubles the table, keeping every piece it holds (each set's older piece put first,
    /// so that the recent one stays the more recent in its new set) and, while it keeps
    /// them, the pieces its sets evicted (each the evicted piece of its new set, with its
    /// ghost; their room zeroed again and faulted in during a later pass made that pass a
    /// third slower). Keys made before, and [`TableLines`], are stale after it: make new
    /// ones.
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
        // `CompactEntry::key_words` spelled out: through it, a warm pass over prose ran 4 %
        // more instructions.
        let mask = !(0xf << COUNT_SHIFT);
        let holds = |entry: &CompactEntry| entry.key[0] == key.lo && entry.key[1] & mask == key.hi;
        // Short-circuit tests (branches the CPU predicts, on text seen before, where the
        // piece is mostly in way 0) measured about 10 % faster on warm prose than computing
        // all four comparisons and selecting the entry without a branch. A piece found in way
        // 1 trades places with way 0: 8-20 % faster first passes over prose and code, and
        // 6-8 % warm, than leaving it (fewer mispredicted tests of way 0, and the set's older
        // piece is the one a new piece evicts).
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

    /// [`Self::get_missed`]: the set's last evicted piece, while evicted pieces are kept, if
    /// it is this one (its tag first, then the entry); it moves back to way 0, and way 1's
    /// piece out. Counts the piece as missed, and as come back if its tag is the set's
    /// ghost. Out of line: text seen before rarely gets here.
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

    /// Keeps `key`'s piece (`key.fits()`) and its `ids` in way 0 of its set if they are 1 to
    /// [`TABLE_MAX_IDS`] ([`TableIds::write`]'s room holds no more), and when more than four,
    /// each of at most [`PACKED_BITS`] bits (no vocabulary read here has more tokens). A
    /// piece it does not keep is asked elsewhere each time.
    #[inline]
    pub fn put(&mut self, key: &TableKey, ids: &[u32]) {
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
    /// read of the arena, not a lookup of the token index and of three tables. Answered
    /// while the arena is not emptied ([`LongPieces::held`]).
    #[inline]
    pub fn put_held(&mut self, key: &TableKey, held: HeldIds) {
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

/// The address of a [`PieceTable`]'s sets and the mask of their offsets, for the scan to make
/// keys and request their lines: a copy the scan keeps in registers, where asking the table
/// itself reloaded the address through the cache's borrow on every piece. With it, and the
/// chunk's slots written unchecked, a warm pass over 2 MB of prose (cl100k_base) ran 24.6 ->
/// 23.6 instructions per byte. Valid as long as the table lives and does not grow.
#[derive(Clone, Copy)]
pub(super) struct TableLines {
    sets: *const [CompactEntry; 2],
    lines_mask: usize,
    /// Whether [`Self::window_keys`] makes keys eight at a time ([`vector_keys`]).
    vector: bool,
}

impl TableLines {
    /// The key of `bytes[start..end]` (`start < end`): the piece's compact [`PieceKey`]'s
    /// two words and the offset of its set, when the piece has at most 15 bytes and 16
    /// bytes can be read from `start`, else a key that matches nothing ([`TableKey::fits`]
    /// is false; the last piece of a text may not be held, which costs one lookup
    /// elsewhere).
    #[cfg(test)]
    #[inline(always)]
    pub fn key(self, bytes: &[u8], start: usize, end: usize) -> TableKey {
        if !Self::in_place(bytes, start, end) {
            return TableKey::OUTSIDE;
        }
        self.key_in_place(bytes, start, end)
    }

    /// [`Self::key`], and for a piece of [`WIDE_PIECES`] bytes, which the table cannot hold,
    /// the lines of the tables of `behind` that will be asked for it requested
    /// ([`PieceCache::prefetch_wide`]): in the branch a long piece takes anyway, so the
    /// pieces the table holds pay nothing for it.
    #[inline(always)]
    pub fn key_asking(
        self,
        bytes: &[u8],
        start: usize,
        end: usize,
        behind: &PieceCache,
    ) -> TableKey {
        if !Self::in_place(bytes, start, end) {
            if WIDE_PIECES.contains(&(end - start)) {
                behind.prefetch_wide(bytes, start, end);
            }
            return TableKey::OUTSIDE;
        }
        self.key_in_place(bytes, start, end)
    }

    /// Whether the table can hold `bytes[start..end]` and its key is read in place: at
    /// most 15 bytes, with 16 bytes readable from `start`.
    #[inline(always)]
    fn in_place(bytes: &[u8], start: usize, end: usize) -> bool {
        end - start <= COMPACT_MAX_PIECE && start + 16 <= bytes.len()
    }

    /// [`Self::key`] of a piece [`Self::in_place`] accepts.
    #[inline(always)]
    fn key_in_place(self, bytes: &[u8], start: usize, end: usize) -> TableKey {
        // Read in place: the 16 bytes from `start` are in `bytes`.
        let key = PieceCache::key_in(bytes, start, end);
        let [lo, hi, ..] = key.words;
        TableKey {
            lo,
            hi,
            line: line_of(lo, hi, self.lines_mask),
        }
    }

    /// Asks the CPU for the line of `key`'s set.
    #[inline(always)]
    pub fn prefetch(self, key: &TableKey) {
        self.prefetch_line(key.line);
    }

    /// Asks the CPU for the line of the set at offset `line`.
    #[inline(always)]
    fn prefetch_line(self, line: usize) {
        // `wrapping_byte_add`: no dereference, and `line` is inside the table anyway (see
        // `PieceTable::set`); a prefetch of any address reads nothing and cannot fault.
        crate::tables::prefetch_address(self.sets.wrapping_byte_add(line));
    }

    /// Adds to `keys` the pieces that end in the window at `base`, at the bits of `ends`
    /// (not 0), the first of them starting at `start`: each one's key ([`Self::key_asking`])
    /// and start, its set's line requested. Returns the last piece's end. Where the
    /// processor has AVX-512 with VBMI2 ([`vector_keys`]), eight keys at a time.
    #[inline(always)]
    pub fn window_keys(
        self,
        bytes: &[u8],
        base: usize,
        ends: u64,
        start: usize,
        keys: &mut ChunkKeys,
        behind: &PieceCache,
    ) -> usize {
        debug_assert!(ends != 0 && keys.n < CHUNK);
        // A window of one piece (o200k's per-piece scan, or a spanner's vector of ends)
        // costs less one at a time.
        if self.vector && ends & (ends - 1) != 0 {
            // SAFETY: `vector` says the processor has the features; `keys` has room for
            // 64 more pieces and the eight-lane stores past them (`CHUNK_ROOM`).
            #[cfg(target_arch = "x86_64")]
            return unsafe { self.window_keys_avx512(bytes, base, ends, start, keys, behind) };
        }
        let mut start = start;
        let mut n = keys.n;
        let _ = crate::spanners::each_bit(base, ends, |end| {
            let key = self.key_asking(bytes, start, end, behind);
            self.prefetch(&key);
            keys.write(n, start, key);
            n += 1;
            start = end;
            Ok::<(), std::convert::Infallible>(())
        });
        keys.n = n;
        start
    }

    /// [`Self::window_keys`], eight pieces at a time in AVX-512 registers: each piece's end
    /// from the window's bits (compressed into bytes), its first 16 bytes taken from the
    /// window's 128 with a byte permute (a gather of them was slower than one piece at a
    /// time), masked to its length and hashed as [`Self::key_in_place`] does one: about a
    /// dozen instructions a piece, where one at a time took about thirty-five.
    ///
    /// # Safety
    /// The processor has AVX-512 F, BW, DQ, VBMI and VBMI2, BMI2 and POPCNT; `keys.n < CHUNK`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vbmi,avx512vbmi2,bmi2,popcnt")]
    unsafe fn window_keys_avx512(
        self,
        bytes: &[u8],
        base: usize,
        ends: u64,
        start: usize,
        keys: &mut ChunkKeys,
        behind: &PieceCache,
    ) -> usize {
        use std::arch::x86_64::*;
        const IOTA: [u8; 64] = {
            let mut iota = [0u8; 64];
            let mut i = 0;
            while i < 64 {
                iota[i] = i as u8;
                i += 1;
            }
            iota
        };
        let splat = |x: u64| _mm512_set1_epi64(x as i64);
        // SAFETY: 64 bytes read from `IOTA`.
        let iota = unsafe { _mm512_loadu_si512(IOTA.as_ptr().cast()) };
        // The ends' offsets in the window, in order, a byte each. (Kept in registers: a
        // vector stored and read back in parts waits for the store to complete.)
        let offsets = _mm512_maskz_compress_epi8(ends, iota);
        let count = ends.count_ones() as usize;
        // A piece is read in place when it starts at most here (see `in_place`); none when
        // the text is shorter than 16 bytes.
        let readable: __mmask8 = if bytes.len() >= 16 { 0xff } else { 0 };
        let last_start = splat(bytes.len().saturating_sub(16) as u64);
        let ones = splat(u64::MAX);
        let sets = splat(self.sets as u64);
        // The window's 128 bytes (zeros past the text's end).
        let window = |at: usize| {
            let rest = bytes.len().saturating_sub(at);
            let valid = if rest >= 64 {
                u64::MAX
            } else {
                (1u64 << rest) - 1
            };
            // SAFETY: a masked load reads only the bytes of `valid`, in `bytes`.
            unsafe {
                _mm512_maskz_loadu_epi8(valid, bytes.as_ptr().add(at.min(bytes.len())).cast())
            }
        };
        let (near_bytes, far_bytes) = (window(base), window(base + 64));
        // The ends before the eight pieces at hand (the last lane is the first one's start).
        let mut before = splat(start as u64);
        let mut i = 0;
        while i < count {
            let lanes = (count - i).min(8);
            let live: __mmask8 = (0xffu16 >> (8 - lanes)) as __mmask8;
            // Offsets `i..i + 8` to the low bytes, then to eight words.
            let near =
                _mm512_permutexvar_epi8(_mm512_add_epi8(iota, _mm512_set1_epi8(i as i8)), offsets);
            let end = _mm512_add_epi64(
                _mm512_cvtepu8_epi64(_mm512_castsi512_si128(near)),
                splat(base as u64),
            );
            // Each piece starts where the one before it ended.
            let begin = _mm512_alignr_epi64::<7>(end, before);
            before = end;
            let len = _mm512_sub_epi64(end, begin);
            let fits = live
                & readable
                & _mm512_cmple_epu64_mask(len, splat(COMPACT_MAX_PIECE as u64))
                & _mm512_cmple_epu64_mask(begin, last_start);
            // Each piece's two words from the window's 128 bytes: byte `j` of a piece's lane
            // is the window's byte at its offset plus `j` (offsets below 64, plus 15 at most).
            let offset = _mm512_sub_epi64(begin, splat(base as u64));
            let index = _mm512_add_epi64(
                _mm512_mullo_epi64(offset, splat(0x0101_0101_0101_0101)),
                splat(0x0706_0504_0302_0100),
            );
            let mut lo = _mm512_permutex2var_epi8(near_bytes, index, far_bytes);
            let mut hi = _mm512_permutex2var_epi8(
                near_bytes,
                _mm512_add_epi64(index, splat(0x0808_0808_0808_0808)),
                far_bytes,
            );
            if i == 0 && start < base && fits & 1 != 0 {
                // The window's first piece began in a window before: its words read here.
                // SAFETY: `fits` says the 16 bytes from `start` are in `bytes`.
                let [word_lo, word_hi] = unsafe {
                    bytes
                        .as_ptr()
                        .add(start)
                        .cast::<[u64; 2]>()
                        .read_unaligned()
                };
                lo = _mm512_mask_mov_epi64(lo, 1, splat(word_lo));
                hi = _mm512_mask_mov_epi64(hi, 1, splat(word_hi));
            }
            // The first `len` bytes kept (a shift by 64 bits or more gives 0), the length in
            // the top byte; a piece that does not fit gets `TableKey::OUTSIDE`.
            let keep = |word: __m512i, bits: __m512i| {
                _mm512_andnot_si512(_mm512_sllv_epi64(ones, bits), word)
            };
            let lo = _mm512_maskz_mov_epi64(fits, keep(lo, _mm512_slli_epi64::<3>(len)));
            let hi_bytes = _mm512_sub_epi64(_mm512_max_epu64(len, splat(8)), splat(8));
            let hi = _mm512_or_si512(
                keep(hi, _mm512_slli_epi64::<3>(hi_bytes)),
                _mm512_slli_epi64::<56>(len),
            );
            let hi = _mm512_mask_mov_epi64(splat(OUTSIDE), fits, hi);
            let mixed =
                _mm512_mullo_epi64(_mm512_xor_si512(lo, _mm512_rol_epi64::<29>(hi)), splat(MIX));
            let line = _mm512_maskz_and_epi64(
                fits,
                _mm512_srli_epi64::<LINE_SHIFT>(mixed),
                splat(self.lines_mask as u64),
            );
            let n = keys.n + i;
            // SAFETY: `n + 8 <= CHUNK_ROOM`: `keys.n < CHUNK` and `i < 64`.
            unsafe {
                _mm512_storeu_si512(keys.lo.as_mut_ptr().add(n).cast(), lo);
                _mm512_storeu_si512(keys.hi.as_mut_ptr().add(n).cast(), hi);
                _mm512_storeu_si512(keys.line.as_mut_ptr().add(n).cast(), line);
                _mm512_storeu_si512(keys.starts.as_mut_ptr().add(n).cast(), begin);
            }
            // The sets' lines requested from the register (lanes past the pieces ask for the
            // table's first line, as a key that does not fit does).
            let at = _mm512_add_epi64(sets, line);
            let quarters = [
                _mm512_extracti64x2_epi64::<0>(at),
                _mm512_extracti64x2_epi64::<1>(at),
                _mm512_extracti64x2_epi64::<2>(at),
                _mm512_extracti64x2_epi64::<3>(at),
            ];
            for (q, quarter) in quarters.into_iter().enumerate() {
                if 2 * q < lanes {
                    crate::tables::prefetch_address(_mm_cvtsi128_si64(quarter) as *const u8);
                    crate::tables::prefetch_address(_mm_extract_epi64::<1>(quarter) as *const u8);
                }
            }
            let mut wide = live
                & _mm512_cmpge_epu64_mask(len, splat(*WIDE_PIECES.start() as u64))
                & _mm512_cmple_epu64_mask(len, splat(*WIDE_PIECES.end() as u64));
            while wide != 0 {
                // The window's `k`th end (`k < count`).
                let nth_end = |k: usize| base + _pdep_u64(1 << k, ends).trailing_zeros() as usize;
                let piece = i + wide.trailing_zeros() as usize;
                let piece_start = if piece == 0 {
                    start
                } else {
                    nth_end(piece - 1)
                };
                behind.prefetch_wide(bytes, piece_start, nth_end(piece));
                wide &= wide - 1;
            }
            i += 8;
        }
        keys.n += count;
        base + 63 - ends.leading_zeros() as usize
    }
}

/// Whether [`TableLines::window_keys`] can make eight keys at a time on this processor.
#[inline]
fn vector_keys() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512vbmi2")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Pieces found ahead of their lookups in the piece table (see
/// [`super::Pipeline::encode_pieces`]): enough that their lines arrive meanwhile, few
/// enough that the chunk's keys stay in the CPU's first-level cache (6 KB). A chunk is
/// looked up once it has this many or more (a window adds up to 64). With the keys made a
/// window at a time, 128 against 64, core warm passes with 64 MB written between them ran
/// 7-8 % faster over prose and code (multilingual text the same), first passes in blocks
/// with those writes 2-4 % faster, and warm passes with nothing between them 4 % slower
/// (32: 10 % slower with the writes).
pub(super) const CHUNK: usize = 128;
/// The room of a [`ChunkKeys`]: a chunk one short of [`CHUNK`], a window's 64 pieces more,
/// which the eight-lane stores of [`TableLines::window_keys`] never pass.
const CHUNK_ROOM: usize = CHUNK - 1 + 64;

/// The pieces of a chunk of the piece loop, found and not yet looked up: each one's
/// [`TableKey`] (its parts in three arrays, which eight-lane stores fill) and its start;
/// `starts[n]` is set to the last one's end before the chunk is looked up.
pub(super) struct ChunkKeys {
    lo: [u64; CHUNK_ROOM],
    hi: [u64; CHUNK_ROOM],
    line: [usize; CHUNK_ROOM],
    pub starts: [usize; CHUNK_ROOM + 1],
    /// The pieces held.
    pub n: usize,
}

impl ChunkKeys {
    pub fn new() -> Self {
        Self {
            lo: [0; CHUNK_ROOM],
            hi: [0; CHUNK_ROOM],
            line: [0; CHUNK_ROOM],
            starts: [0; CHUNK_ROOM + 1],
            n: 0,
        }
    }

    /// The key of piece `i`.
    #[inline(always)]
    pub fn key(&self, i: usize) -> TableKey {
        TableKey {
            lo: self.lo[i],
            hi: self.hi[i],
            line: self.line[i],
        }
    }

    /// [`Self::key`] without the bounds check, for the piece loop's lookups.
    ///
    /// # Safety
    /// `i < self.n` (at most `CHUNK_ROOM`, the arrays' length: a chunk holds fewer than
    /// `CHUNK` pieces before a window adds at most 64).
    #[inline(always)]
    pub unsafe fn key_unchecked(&self, i: usize) -> TableKey {
        debug_assert!(i < self.n && self.n <= CHUNK_ROOM);
        // SAFETY: the caller's: `i` is below the arrays' length.
        unsafe {
            TableKey {
                lo: *self.lo.get_unchecked(i),
                hi: *self.hi.get_unchecked(i),
                line: *self.line.get_unchecked(i),
            }
        }
    }

    /// Writes the piece starting at `start`, of key `key`, in slot `n`. The caller counts
    /// the slots it writes in a register and sets [`Self::n`] once per window: kept here,
    /// the count was read back from memory after each piece's stores to the slots, which
    /// may hold it as far as the compiler knows (a warm pass over code, o200k_base, 5 %
    /// fewer instructions in the scan's loop, 2-4 % faster on a Zen 3).
    #[inline(always)]
    fn write(&mut self, n: usize, start: usize, key: TableKey) {
        debug_assert!(n < CHUNK_ROOM);
        // SAFETY: `n < CHUNK_ROOM`: a window adds at most 64 pieces to fewer than `CHUNK`.
        unsafe {
            *self.lo.get_unchecked_mut(n) = key.lo;
            *self.hi.get_unchecked_mut(n) = key.hi;
            *self.line.get_unchecked_mut(n) = key.line;
            *self.starts.get_unchecked_mut(n) = start;
        }
    }
}

/// The most ids a [`PieceTable`] entry holds: four as they are, or up to seven packed.
/// Pieces of five to seven ids are 7 % of multilingual text's (Cyrillic, Greek and Indic
/// words, Chinese phrases); kept here, they cost a line like any other piece, where the
/// wide entries of [`PieceCache`] cost a miss here, a token lookup and two tables' tags.
pub(super) const TABLE_MAX_IDS: usize = 7;
/// How many ids [`TableIds::write`] writes (those of the piece, then filler): the room a
/// caller keeps for each piece it looks up.
pub(super) const TABLE_WRITES: usize = 8;
/// The bits of each id of an entry of five to seven ids (7 x 18 of its 128).
const PACKED_BITS: u32 = 18;

/// The ids of a [`PieceTable`] entry, where it holds them: up to four as they are, five to
/// seven packed. (A reference, not a copy: copied, the ids went through the stack on their
/// way to the output.)
#[derive(Clone, Copy)]
pub(super) struct TableIds<'a> {
    words: &'a [u32; COMPACT_MAX_IDS],
    count: usize,
}

impl<'a> TableIds<'a> {
    #[inline(always)]
    fn of(entry: &'a CompactEntry) -> Self {
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
    /// pieces' arena ([`PieceTable::put_held`]).
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

/// The count of ids of a [`PieceTable`] entry whose ids are in the long pieces' arena
/// ([`HeldIds`]) rather than in the entry.
const HELD: u64 = 0xf;

/// Five to seven ids in [`PACKED_BITS`] bits each, if each fits.
fn pack(ids: &[u32]) -> Option<[u32; COMPACT_MAX_IDS]> {
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
/// inlined, its 128-bit shifts took registers the piece loop keeps its state in, and a
/// warm pass over prose (no such pieces) ran 14 % more instructions.
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

/// Longer pieces repeat too: the ruled lines and box drawing of tables (`+------+----`,
/// ` =====`, `├──┼──`), long identifiers and paths, and words of scripts without spaces
/// between them. They are few (0.1 % of English prose's pieces) but merging one costs
/// microseconds (buffer-sweep is quadratic in the piece's length), so in a pass over prose
/// they took an eighth of the time, four fifths of it on repeats. So do the pieces of up to
/// 32 bytes that encode to more ids than a [`PieceCache`] entry holds: in 1 MB of
/// multilingual text, 3,600 distinct pieces (8 % of the bytes, mostly Chinese and Japanese),
/// which were merged again on every pass over it. They are held apart from [`PieceCache`]'s
/// fixed entries: a two-way set-associative table of [`LONG_SETS`] sets whose keys and ids
/// live in two arenas, vectors emptied all at once when one fills, so the memory stays
/// bounded (6.3 MB: 3.3 MB of sets and tags, touched as they are written, and arenas that
/// grow to 1 MB of bytes and 2 MB of ids as pieces come; reserved whole when a cache was
/// made, they took a new tokenizer's first encode 1.5 ms and 2.3 MB more) and nothing is
/// allocated per piece. 1 MB of multilingual text has 3,600 such pieces; 1 MB of
/// white-space runs cut from generated text, 1,800 distinct pieces of 60 ids each, which
/// filled arenas of half that size within each warm pass: emptied, they merged every piece
/// again (cl100k_base 148 MB/s, 699 with these). 8,192 sets, where a new piece took way 0,
/// merged 370 pieces of the multilingual megabyte again per pass (those that fell in one
/// set took turns evicting each other), and 16,384 sets with the put below, 170. A
/// megabyte of random Unicode has 19,400 pieces of up to 15 bytes and more than seven ids
/// (rare characters, two or three byte tokens each) and 6,400 of 16 to 32 bytes, which
/// overflowed 16,384 sets and 256 K ids: every warm pass emptied the arenas and merged them
/// all again. With 32,768 sets and 512 K ids its warm passes are 20 % faster (cl100k_base,
/// the core: 103-113 -> 116-138 MB/s; o200k_base 84-90 -> 95-108), and one pass over the
/// benches' corpora is as fast (paired, 0.98-1.02 in the nine cells); arenas of 2 MB of
/// bytes and 4 MB of ids made first passes 1-2 % slower (their pages and lines). Those
/// 25,000 pieces still left 2,900 per pass merged again with 32,768 sets: in the sets that
/// three or more of them share, the ones beyond way 0 evict each other in turn. With
/// 65,536 sets, fewer share one, and the arena, which every such piece merged again
/// fills anew, is emptied less often; with it the short ones are answered from the
/// [`PieceTable`] ([`PieceTable::put_held`]), which an emptied arena turns back into misses.
///
/// Up to 16 KiB: runs of white space that long (padding, a document cut from a longer run)
/// are merged in about 7 ns a byte, while hashing and comparing one costs well under one,
/// so a run that comes back is answered at a small fraction of its merge (warm passes over
/// 10 KB documents of such runs merged every one of them again, at under half the speed of
/// peers that keep them). A piece longer than that is merged each time: the arena of
/// 1 MB keeps at least 64 of them, and one piece does not empty it for the others.
pub(super) const LONG_MAX_PIECE: usize = 16 * 1024;
const LONG_SETS: usize = 65536;
const LONG_MAX_BYTES: usize = 1 << 20;
const LONG_MAX_IDS: usize = 512 * 1024;

/// One long piece: its hash, where its bytes and ids are in the arenas (`len` 0: empty).
#[derive(Clone, Copy, Default)]
struct LongSlot {
    hash: u64,
    start: u32,
    len: u32,
    ids_start: u32,
    ids_len: u32,
}

// SAFETY: integers only; all zeros is an empty slot (len 0 matches no piece).
unsafe impl Zeroable for LongSlot {}

/// Pieces of `CACHE_MAX_PIECE + 1` to [`LONG_MAX_PIECE`] bytes, and shorter pieces of more
/// than `WIDE_MAX_IDS` ids → ids. Any 64-bit hash of the piece's bytes serves, as long as
/// [`Self::get`] and [`Self::put`] of one piece are given the same: [`Self::hash`] for long
/// pieces, [`PieceCache::key_in`]'s for the short ones.
pub(super) struct LongPieces {
    /// In each set, way 0 is the more recently put piece. Zeroed memory from the allocator,
    /// whose pages are touched as they are written: every piece cache of every thread has
    /// this table, and most never hold a long piece.
    sets: HugeSlice<[LongSlot; 2]>,
    /// Per set, each way's tag ([`Self::tag`]; 0: empty), 16 KB that stay in the CPU's
    /// cache: a piece the table does not hold is answered here, without reading its set,
    /// which is rarely in the CPU's cache (on a first pass over prose, every piece of 8 to
    /// 32 bytes that merges is asked for here, and reading its set took 3 % of the time).
    tags: Box<[[u8; 2]]>,
    /// The arenas, with room for all they hold ([`LONG_MAX_BYTES`], [`LONG_MAX_IDS`]) from
    /// the start: the allocator's fresh pages are touched once, as pieces are put, where
    /// growing by doubling copied them into fresh pages each time (a first pass over
    /// multilingual text, o200k_base: the arenas' page faults 860 of the pass's 1,300, now
    /// 576; the pass 1-5 % faster). Pages never written are never resident.
    bytes: Vec<u8>,
    ids: Vec<u32>,
    /// How many times the arenas were emptied: ids held elsewhere ([`HeldIds`]) of an
    /// earlier generation are gone.
    pub generation: u64,
    /// The ids of the piece last answered or put.
    last: HeldIds,
}

/// Where the long pieces' arena holds a piece's ids, for a [`PieceTable`] entry: their
/// place and the arena's generation then.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(super) struct HeldIds {
    start: u32,
    len: u32,
    generation: u64,
}

impl LongPieces {
    fn new() -> Self {
        Self {
            sets: HugeSlice::zeroed_ordinary(LONG_SETS),
            tags: vec![[0; 2]; LONG_SETS].into_boxed_slice(),
            bytes: Vec::with_capacity(LONG_MAX_BYTES),
            ids: Vec::with_capacity(LONG_MAX_IDS),
            generation: 0,
            last: HeldIds::default(),
        }
    }

    /// The ids at `held`, unless the arena was emptied since they were put there.
    #[inline]
    pub fn held(&self, held: HeldIds) -> Option<&[u32]> {
        if held.generation != self.generation {
            return None;
        }
        let start = held.start as usize;
        self.ids.get(start..start + held.len as usize)
    }

    /// Where the arena holds `ids`, if they are those of the piece last answered or put.
    #[inline]
    fn last_held(&self, ids: &[u32]) -> Option<HeldIds> {
        (self.held(self.last)? == ids).then_some(self.last)
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

    /// The hash's top bits, never 0 (an empty way's tag).
    #[inline]
    fn tag(hash: u64) -> u8 {
        (hash >> 56) as u8 | 1
    }

    /// The cached ids of `piece`, whose hash is `hash`.
    #[inline]
    pub fn get(&mut self, piece: &[u8], hash: u64) -> Option<&[u32]> {
        let (set, tag) = (Self::set(hash), Self::tag(hash));
        if !self.tags[set].contains(&tag) {
            return None;
        }
        let holds = |slot: &LongSlot| {
            let start = slot.start as usize;
            slot.hash == hash
                && slot.len as usize == piece.len()
                && self.bytes[start..start + piece.len()] == *piece
        };
        let way = self.sets[set].iter().position(holds)?;
        if way == 1 {
            // Found in the way a new piece takes: now the one it keeps.
            self.sets[set].swap(0, 1);
            self.tags[set].swap(0, 1);
        }
        let slot = self.sets[set][0];
        self.last = HeldIds {
            start: slot.ids_start,
            len: slot.ids_len,
            generation: self.generation,
        };
        let ids_start = slot.ids_start as usize;
        Some(&self.ids[ids_start..ids_start + slot.ids_len as usize])
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
            self.tags.fill([0; 2]);
            self.generation += 1;
        }
        let set = Self::set(hash);
        let slot = LongSlot {
            hash,
            start: self.bytes.len() as u32,
            len: piece.len() as u32,
            ids_start: self.ids.len() as u32,
            ids_len: ids.len() as u32,
        };
        self.bytes.extend_from_slice(piece);
        self.ids.extend_from_slice(ids);
        self.last = HeldIds {
            start: slot.ids_start,
            len: slot.ids_len,
            generation: self.generation,
        };
        // A new piece takes way 1 (way 0 when the set is empty) and moves to way 0 on its
        // first hit ([`Self::get`]), as in [`Ways`]: pieces that come back in turn, more of
        // them than ways, then keep one answered, where putting each in front evicted each
        // before it came back (1 MB of multilingual text merged 370 of them again per pass).
        // Whether way 0 holds a piece, from its tag: the set's line is rarely in the CPU's
        // cache, the tags are.
        let way = usize::from(self.tags[set][0] != 0);
        self.sets[set][way] = slot;
        self.tags[set][way] = Self::tag(hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::tests::tiny;
    use std::collections::HashMap;

    /// The ids `table` holds for the piece `piece` (at most 15 bytes), if it holds it.
    fn ids_of_piece(table: &mut PieceTable, piece: &[u8]) -> Option<Vec<u32>> {
        let key = table.key(&[piece, &[0; 16]].concat(), 0, piece.len());
        table_ids(table, &key)
    }

    #[test]
    fn seeds_are_the_vocabularys_tokens_of_up_to_15_bytes() {
        // Every length of 1 to 16 bytes; a 16-byte token whose 16th byte's low half is all
        // ones, so that a seed keyed on its first 15 bytes with that byte spilled into the
        // length would answer for them.
        let sixteen: &[u8] = b"sixteen bytes!!o";
        let extra: Vec<Vec<u8>> = (2..=15)
            .map(|n| (0..n).map(|i| b'a' + i as u8).collect())
            .chain([sixteen.to_vec()])
            .collect();
        let refs: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
        let mut seeded = PieceTable::copy_of(&PieceTable::seeds(&tiny(&refs)));
        for b in 0..=255u8 {
            assert_eq!(ids_of_piece(&mut seeded, &[b]), Some(vec![u32::from(b)]));
        }
        for (i, token) in refs.iter().enumerate() {
            if token.len() <= COMPACT_MAX_PIECE {
                assert_eq!(ids_of_piece(&mut seeded, token), Some(vec![256 + i as u32]));
            }
        }
        assert_eq!(
            ids_of_piece(&mut seeded, &sixteen[..15]),
            None,
            "a prefix, not a token"
        );
        assert_eq!(ids_of_piece(&mut seeded, b"ba"), None, "not a token");
    }

    #[test]
    fn a_set_of_more_tokens_than_ways_keeps_its_two_lowest_ids_lowest_first() {
        // More two- and three-byte tokens than the table has ways: every set is asked for
        // several.
        let extra: Vec<Vec<u8>> = (0..=255u8)
            .flat_map(|a| (0..=255u8).map(move |b| vec![a, b]))
            .chain((0..=255u8).flat_map(|a| (0..=255u8).map(move |b| vec![a, b, b'!'])))
            .collect();
        let refs: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
        let tables = tiny(&refs);
        // 131,328 tokens of up to 15 bytes: seeds have at least five ways for every four,
        // twice the table's first size (a small vocabulary's take the first size).
        assert_eq!(PieceTable::seeds(&tables).sets.len(), 2 * TABLE_SETS);
        assert_eq!(PieceTable::seeds(&tiny(&[b"ab"])).sets.len(), TABLE_SETS);
        // In the first size, sets that cannot hold all their tokens.
        let seeds = PieceTable::seeds_in(&tables, TABLE_SETS);
        let mut per_set: HashMap<usize, Vec<u32>> = HashMap::new();
        for id in 0..tables.n_vocab() as u32 {
            let token = tables.token(id).unwrap();
            let key = seeds.key(&[token, &[0; 16]].concat(), 0, token.len());
            per_set.entry(key.line / SET_BYTES).or_default().push(id);
        }
        assert!(per_set.values().any(|ids| ids.len() > 2));
        for (set, mut ids) in per_set {
            ids.sort_unstable();
            let ways = &seeds.sets[set];
            let held: Vec<u32> = ways
                .iter()
                .filter(|e| !e.is_empty())
                .map(|e| e.ids[0])
                .collect();
            assert_eq!(held, ids[..ids.len().min(2)], "set {set}");
        }
    }

    /// [`PieceCache::key_in`] of a whole slice.
    fn key_of(piece: &[u8]) -> PieceKey {
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

    /// A megabyte of distinct long pieces of many ids each (white-space runs of 60 ids,
    /// multilingual phrases) is held whole: every piece put is found on the next pass; and
    /// the arenas never move (their room is made at the start, not grown by copying).
    #[test]
    fn long_pieces_hold_a_megabyte_of_text() {
        let mut long = LongPieces::new();
        let arenas = (long.bytes.as_ptr(), long.ids.as_ptr());
        let pieces: Vec<(Vec<u8>, Vec<u32>)> = (0..1_500u32)
            .map(|i| {
                let len = 100 + (i as usize * 37) % 1_000;
                // Runs of four white-space bytes, distinct by their first ten (i in base 4).
                let piece = (0..len)
                    .map(|j| b" \t\n\r"[((i as usize >> (2 * (j % 10))) % 4) ^ (j / 10 % 4)])
                    .collect();
                let ids = (0..60).map(|k| i * 64 + k).collect();
                (piece, ids)
            })
            .collect();
        let bytes: usize = pieces.iter().map(|(p, _)| p.len()).sum();
        assert!(bytes > 800_000, "{bytes}");
        for (piece, ids) in &pieces {
            long.put(piece, LongPieces::hash(piece), ids);
        }
        for (piece, ids) in &pieces {
            assert_eq!(long.get(piece, LongPieces::hash(piece)), Some(&ids[..]));
        }
        assert_eq!((long.bytes.as_ptr(), long.ids.as_ptr()), arenas);
        // Past the arenas' room they are emptied, still in place.
        for (piece, ids) in &pieces {
            long.put(
                &[piece.as_slice(), b"!"].concat(),
                LongPieces::hash(piece) ^ 1,
                ids,
            );
        }
        assert_eq!(long.generation, 1);
        assert_eq!((long.bytes.as_ptr(), long.ids.as_ptr()), arenas);
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
        // A hash of the same set with another tag is answered by the tags alone.
        let other_tag = ha ^ 0x8000_0000_0000_0000;
        assert_eq!(LongPieces::set(other_tag), LongPieces::set(ha));
        assert_eq!(long.get(&a, other_tag), None);
        // Same length, same slot and hash, other bytes: not this piece's ids.
        let mut b = a.clone();
        b[40] = b'-';
        assert_eq!(long.get(&b, ha), None);
        // A shorter piece that is a prefix of a cached one is not it either.
        assert_eq!(long.get(&a[..60], LongPieces::hash(&a[..60])), None);
        // Two pieces of one set both stay; a third replaces the one found less recently.
        long.put(&b, ha, &[4]);
        assert_eq!(long.get(&b, ha), Some(&[4u32][..]));
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        let mut c = a.clone();
        c[0] = b'~';
        long.put(&c, ha, &[5, 6]);
        assert_eq!(long.get(&c, ha), Some(&[5u32, 6][..]));
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        assert_eq!(long.get(&b, ha), None);
        // Three pieces of one set asked for in turn, each put again when missed: one of
        // them stays answered (a new piece takes the way of the one found less recently).
        let mut found = 0;
        for _ in 0..10 {
            for (p, ids) in [(&a, [1u32, 2, 3].as_slice()), (&b, &[4]), (&c, &[5, 6])] {
                match long.get(p, ha) {
                    Some(got) => {
                        assert_eq!(got, ids);
                        found += 1;
                    }
                    None => long.put(p, ha, ids),
                }
            }
        }
        assert!(found >= 10, "{found}");
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

    /// The ids a [`PieceTable`] answers for `key`, as a vector.
    fn table_ids(table: &mut PieceTable, key: &TableKey) -> Option<Vec<u32>> {
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
    fn puts_then_answers(table: &mut PieceTable, text: &[u8], pieces: &[(usize, usize, Vec<u32>)]) {
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
    fn piece_table_keys_hold_pieces_of_up_to_15_bytes_read_in_place() {
        let text: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) | 1).collect();
        let cache = PieceCache::new(None);
        let table = &cache.table;
        for start in 0..text.len() {
            for end in start + 1..=text.len().min(start + 40) {
                let key = table.key(&text, start, end);
                // The scan's key, which asks for the lines behind the table for a long
                // piece, is the same key.
                assert_eq!(table.lines().key_asking(&text, start, end, &cache), key);
                let fits = end - start <= COMPACT_MAX_PIECE && start + 16 <= text.len();
                assert_eq!(key.fits(), fits, "{start}..{end}");
                if fits {
                    // The compact key of the same piece, read from a copy of it alone.
                    let copied = key_of(&text[start..end]);
                    assert_eq!([key.lo, key.hi], [copied.words[0], copied.words[1]]);
                    assert_eq!(
                        key.line,
                        line_of(copied.words[0], copied.words[1], table.lines_mask)
                    );
                }
            }
        }
    }

    /// The pieces of one call of [`TableLines::window_keys`], and where the last ends.
    fn window_keys_made(
        text: &[u8],
        base: usize,
        ends: u64,
        start: usize,
        vector: bool,
    ) -> (Vec<(usize, TableKey)>, usize) {
        let cache = PieceCache::new(None);
        let mut keys = ChunkKeys::new();
        // A chunk that already holds some pieces: the window's go after them.
        let held = (base + start) % 7;
        keys.n = held;
        let lines = TableLines {
            vector,
            ..cache.table.lines()
        };
        let last = lines.window_keys(text, base, ends, start, &mut keys, &cache);
        let made = (held..keys.n)
            .map(|i| (keys.starts[i], keys.key(i)))
            .collect();
        (made, last)
    }

    #[test]
    fn window_keys_made_eight_at_a_time_equal_the_keys_made_one_at_a_time() {
        // Random bytes (keys do not read characters), texts shorter than a key's 16 bytes
        // to several windows long, windows at any offset (o200k's restart at a piece's end)
        // and pieces that began windows before (a long run of spaces).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || crate::testing::xorshift(&mut state);
        let mut compared = 0;
        for round in 0..3000 {
            let len = 1 + (next() % if round % 4 == 0 { 24 } else { 300 }) as usize;
            let text: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut last = 0;
            while last < len {
                let base = last.saturating_sub((next() % 90) as usize) + (next() % 3) as usize;
                // Ends after the last one, in the window, in the text; dense or sparse.
                let density = next() % 4;
                let mut ends = 0u64;
                for i in 0..64 {
                    let end = base + i;
                    if end > last && end <= len && (next() % 4 <= density || end == len) {
                        ends |= 1 << i;
                    }
                }
                if ends == 0 {
                    continue;
                }
                let one_at_a_time = window_keys_made(&text, base, ends, last, false);
                if vector_keys() {
                    let eight_at_a_time = window_keys_made(&text, base, ends, last, true);
                    assert_eq!(
                        eight_at_a_time, one_at_a_time,
                        "text {text:?} base {base} ends {ends:b}"
                    );
                    compared += 1;
                }
                let (pieces, end) = one_at_a_time;
                assert_eq!(pieces.len(), ends.count_ones() as usize);
                assert_eq!(end, base + 63 - ends.leading_zeros() as usize);
                last = end;
            }
        }
        // This machine's processor has the vector path (the benches' and CI's does).
        assert!(
            compared > 10_000 || !vector_keys(),
            "{compared} windows compared"
        );
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

    /// A [`PieceCache`] whose table holds `piece` (of more than seven ids) as where its long
    /// pieces' arena has them, as the piece loop puts it after merging it.
    fn held_piece(piece: &[u8], ids: &[u32]) -> (PieceCache, TableKey) {
        let mut cache = PieceCache::new(None);
        let mut padded = piece.to_vec();
        padded.resize(piece.len() + 16, b' ');
        let key = cache.table.key(&padded, 0, piece.len());
        assert!(key.fits());
        let cache_key = key_of(piece);
        assert_eq!(cache.get(&cache_key, piece), None);
        cache.put(&cache_key, piece, ids);
        cache.put_table(&key, ids);
        (cache, key)
    }

    /// The ids the piece table gives for `key`, from its entry or the long pieces' arena;
    /// `None` where it holds the piece's ids in an arena since emptied.
    fn table_answer(cache: &mut PieceCache, key: &TableKey) -> Option<Vec<u32>> {
        let ids = cache.table.get(key)?;
        let mut room = [0u32; TABLE_WRITES];
        // SAFETY: `room` holds `TABLE_WRITES` ids.
        match unsafe { ids.write(room.as_mut_ptr()) } {
            Some(count) => Some(room[..count].to_vec()),
            None => {
                let held = ids.held();
                cache.long.held(held).map(<[u32]>::to_vec)
            }
        }
    }

    #[test]
    fn piece_table_answers_pieces_of_more_ids_from_the_long_pieces_arena() {
        let ids: Vec<u32> = (1..=12).collect();
        let (mut cache, key) = held_piece("žluťoučký".as_bytes(), &ids);
        assert_eq!(table_answer(&mut cache, &key), Some(ids.clone()));
        // Emptied by long pieces that fill it: the entry no longer answers.
        for fill in 0..=LONG_MAX_BYTES / LONG_MAX_PIECE {
            let long = vec![fill as u8; LONG_MAX_PIECE];
            cache.long.put(&long, LongPieces::hash(&long), &[7]);
        }
        assert_eq!(cache.long.generation, 1);
        assert_eq!(table_answer(&mut cache, &key), None);
        // Put again, from the arena it is in now.
        let piece = "žluťoučký".as_bytes();
        assert_eq!(cache.get(&key_of(piece), piece), None);
        cache.put(&key_of(piece), piece, &ids);
        cache.put_table(&key, &ids);
        assert_eq!(table_answer(&mut cache, &key), Some(ids));
    }

    #[test]
    fn piece_table_keeps_a_piece_of_more_ids_only_as_the_arena_has_them() {
        let ids: Vec<u32> = (1..=9).collect();
        let (mut cache, key) = held_piece(b"wordsplitx", &ids);
        let other: Vec<u32> = (2..=10).collect();
        let mut padded = b"splitwordx".to_vec();
        padded.resize(26, b' ');
        let other_key = cache.table.key(&padded, 0, 10);
        // The arena's last piece has other ids: nothing is kept for this one.
        cache.put_table(&other_key, &other);
        assert_eq!(table_answer(&mut cache, &other_key), None);
        assert_eq!(table_answer(&mut cache, &key), Some(ids));
    }
}
