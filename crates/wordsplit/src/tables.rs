//! MergeTables: the one precomputed dictionary every native encoder of a vocabulary reads.
//!
//! Mirrors `wordsplit/tables.py` (MergeTables): BPE token bytes → id, the optional
//! pair-ranked merge table (HF files whose merge list is not in merged-id order), and every
//! id's bytes for decoding. All token bytes live in one arena. The index by bytes has three
//! parts: tokens of up to 8 bytes (most of them) and of 9 to 16 bytes are packed inline as
//! fixed-size keys in two open-addressing tables, so a lookup reads one slot (usually one cache line,
//! nothing to follow); longer ones are ids in a table that hashes the arena's bytes.
//! Built once per vocabulary and shared (`Arc`) by all encoders and threads.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::char_merges::CharMerges;
use crate::encoders::backtrack_tables::BacktrackTables;
use crate::huge_pages::{HugeSlice, Zeroable};
use crate::pipeline::PieceSeeds;

/// A merge priority or token id; `u32::MAX` is "never merges".
pub type Rank = u32;
pub const NO_RANK: Rank = Rank::MAX;
const UNUSED: u32 = u32::MAX;
/// The token filter's size: 2^21 bits, indexed by the hash's top 21 bits ([`may_hold`]).
const FILTER_WORDS: usize = (1 << 21) / 64;
/// The long tokens' filter: 2^16 bits, indexed by the top 16 bits of their hash.
const LONG_FILTER_WORDS: usize = (1 << 16) / 64;

/// The ids below which [`PairGrid`] keeps the ranks of pairs.
pub(crate) const GRID_IDS: usize = 512;

pub struct MergeTables {
    /// The bytes of every token, concatenated in id order.
    arena: Vec<u8>,
    /// `id → (start, len)` in the arena; `start == UNUSED` for ids no token uses.
    spans: Vec<(u32, u32)>,
    /// The BPE tokens of 1 to 8 bytes (most of them), with their bytes inline: a lookup
    /// touches one slot, with no pointer to follow and no byte comparison loop.
    small: ProbeTable<SmallSlot>,
    /// The BPE tokens of 9 to 16 bytes, likewise.
    mid: ProbeTable<MidSlot>,
    /// One bit per hash class of the tokens of 1 to 16 bytes, set where some token hashes
    /// to: 2^21 bits, of which a twentieth (cl100k) to a tenth (o200k) are set, so most
    /// pieces that are not tokens (most of the pairs a merge loop asks about, and the
    /// whole-piece lookup of a word that needs merging) get their answer from this small
    /// table (256 KB, which stays in the CPU's cache) without probing the large one, where
    /// a miss runs on to the next empty slot. Indexed by the hash's top bits (the tables'
    /// slots by its low bits); its fixed size makes the index a shift with no bounds check.
    filter: Box<[u64; FILTER_WORDS]>,
    /// Random per table: the slots a vocabulary file's tokens land in cannot be chosen by
    /// whoever wrote it (colliding on purpose would make building the index quadratic).
    seeds: [u64; 2],
    /// The longer BPE token ids, found by hashing their bytes in the arena.
    long: HashTable<u32>,
    /// One bit per hash class of the longer tokens ([`may_hold`]), as `filter` is
    /// for the shorter ones: most pieces of more than 16 bytes that are asked about (runs of
    /// spaces and rules of dashes, the long words a merge loop works on) are not tokens,
    /// and this 8 KB table answers for them without probing `long`, a cache miss (1.3 % of
    /// a first pass over prose).
    long_filter: Box<[u64; LONG_FILTER_WORDS]>,
    hasher: FxBuildHasher,
    /// `(left id, right id)` → merge rank, for pair-ranked vocabularies only.
    pub merges: Option<FxHashMap<(u32, u32), Rank>>,
    /// Every merge priority is below this: the token ids (rank-based) or the merge list's
    /// ranks (pair-ranked). Buffer-sweep packs a rank and its position into one word when
    /// the ranks leave it room.
    pub rank_bound: u64,
    /// A piece that is itself a token is one lookup (tiktoken; HF with ignore_merges).
    pub whole_piece_lookup: bool,
    /// The id of each single byte (`UNUSED` for a byte no token spells).
    pub byte_ids: [u32; 256],
    /// Whether some byte has no token ([`Self::missing_bytes`]): only then does the
    /// pipeline look for such bytes in a piece.
    pub lacks_bytes: bool,
    /// The priority of merging byte `a` with byte `b`, at `a << 8 | b`: every piece starts as
    /// bytes, so its first round of pair lookups is one read each from this 256 KB table.
    /// A fixed-size array, so that indexing it by a byte pair needs no bounds check.
    byte_pairs: Box<[Rank; 1 << 16]>,
    /// The backtrack encoder's tables, built on first use.
    backtrack: OnceLock<Result<BacktrackTables, String>>,
    /// Rank-based vocabularies: the ranks of the pairs of tokens with ids below
    /// [`GRID_IDS`] that merges have asked about.
    pub(crate) pair_grid: PairGrid,
    /// Rank-based vocabularies: the characters of two and three bytes a merge loop may
    /// take whole from the start, built on first use ([`Self::char_merges`]).
    char_merges: OnceLock<CharMerges>,
    /// Bytes of the pieces backtrack leads on (runs, wide white space) that `auto` has given
    /// buffer-sweep while the backtrack tables were not built.
    auto_swept_backtrack_bytes: AtomicUsize,
    /// Unique in the process ([`Self::id`]).
    id: u64,
    /// What each thread's piece table starts with, made on first use ([`Self::piece_seeds`]).
    piece_seeds: OnceLock<PieceSeeds>,
}

/// The next [`MergeTables::id`].
static NEXT_TABLES_ID: AtomicU64 = AtomicU64::new(0);

#[derive(Debug)]
pub struct TablesError(pub String);

/// The bytes of a piece of 1 to 16 bytes packed into two little-endian words (zero padded)
/// and its length: equal keys are equal pieces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShortKey {
    lo: u64,
    hi: u64,
    len: u32,
}

/// The product of `a` and `b` folded to 64 bits: every bit of either reaches the low bits
/// that pick a slot.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// A slot of a [`ProbeTable`]: a token's packed bytes, its length (0: the slot is empty)
/// and its id.
trait Slot: Zeroable {
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
struct SmallSlot {
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

/// A token of 9 to 16 bytes: 24 bytes (a quarter of the slots straddle two cache lines; a
/// 32-byte slot that never does made the table a third larger, which cost more in cache
/// misses and first-touch page faults than the straddling does).
#[derive(Clone, Copy)]
#[repr(C)]
struct MidSlot {
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
/// group first and then the slot, two dependent cache misses on text not seen before. A
/// power of two of slots with headroom made the tables of o200k 8 MB instead of 4.5, paid
/// for in first-touch page faults at load and in cache misses while encoding (so was sizing
/// cl100k_base's small table up to a whole 2 MiB page, 57 % full: 5 % slower on prose). The
/// slots are on 2 MiB pages where the OS gives them ([`HugeSlice`]), but for a table's part
/// past its last 2 MiB boundary: each lookup reads a random slot.
struct ProbeTable<S: Slot> {
    slots: HugeSlice<S>,
}

impl<S: Slot> ProbeTable<S> {
    fn with_capacity(n: usize) -> Self {
        let size = (n * 4 / 3 + 1).max(16);
        Self {
            slots: HugeSlice::zeroed(size),
        }
    }

    /// The slot `hash` picks: its low 32 bits scaled to the table's size (a multiply and a
    /// shift, no division; the filter reads the top bits).
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        home(hash, self.slots.len())
    }

    /// Inserts `key` with `id`; `false` (and nothing changed) if the key is there already.
    fn insert(&mut self, hash: u64, key: &ShortKey, id: u32) -> bool {
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
    fn find(&self, hash: u64, key: &ShortKey) -> Option<u32> {
        self.find_slot(hash, key).map(|(_, slot)| slot.id())
    }

    /// Where `key` (hash `hash`) is: its slot's index, and the slot.
    #[inline(always)]
    fn find_slot(&self, hash: u64, key: &ShortKey) -> Option<(usize, &S)> {
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
    fn slot_ids(&self) -> impl Iterator<Item = Option<u32>> + '_ {
        self.slots.iter().map(|s| (s.len() != 0).then(|| s.id()))
    }

    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().filter(|s| s.len() != 0).map(|s| s.id())
    }

    /// Each token's bytes as two words, its length and its id, in slot order.
    fn tokens(&self) -> impl Iterator<Item = (u64, u64, usize, u32)> + '_ {
        self.slots.iter().filter(|s| s.len() != 0).map(|s| {
            let (lo, hi) = s.words();
            (lo, hi, s.len() as usize, s.id())
        })
    }
}

/// One `u32` per slot of a [`MergeTables`]' token index, at the slot's position
/// ([`MergeTables::beside`]): what an encoder reads with each token it looks up (the
/// SentencePiece encoder's merge rank of the token) comes from the line next to the slot's,
/// requested at once, not from an array by id read after the slot answered.
pub(crate) struct Beside {
    small: Box<[u32]>,
    mid: Box<[u32]>,
}

/// Asks the CPU to start loading the cache line holding `value` (a hint: no effect on
/// what the program computes).
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_address(value as *const T);
}

/// [`prefetch`] of an address that need not point at anything.
#[inline(always)]
pub fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; SSE is part of
    // the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

impl ShortKey {
    /// The key of `piece`, or `None` when it is empty or longer than 16 bytes. Reads each
    /// byte once with overlapping fixed-size loads, so there is no per-byte loop.
    #[inline]
    pub fn of(piece: &[u8]) -> Option<Self> {
        let len = piece.len();
        let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().unwrap());
        let half = |at: usize| u64::from(u32::from_le_bytes(piece[at..at + 4].try_into().unwrap()));
        let (lo, hi) = match len {
            0 => return None,
            1..=3 => {
                let (a, b, c) = (piece[0], piece[len / 2], piece[len - 1]);
                let lo = u64::from(a)
                    | u64::from(b) << (8 * (len / 2))
                    | u64::from(c) << (8 * (len - 1));
                (lo, 0)
            }
            4..=7 => (half(0) | half(len - 4) << (8 * (len - 4)), 0),
            8 => (word(0), 0),
            9..=16 => (word(0), word(len - 8) >> (8 * (16 - len))),
            _ => return None,
        };
        Some(Self {
            lo,
            hi,
            len: len as u32,
        })
    }

    /// The key of `bytes[start..start + len]`, `1 <= len <= 16`, read with two 8-byte loads
    /// and masks (no branch on the length): `bytes` must hold 16 bytes from `start`.
    #[inline(always)]
    pub fn of_padded(bytes: &[u8], start: usize, len: usize) -> Self {
        debug_assert!((1..=16).contains(&len) && start + 16 <= bytes.len());
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        Self::masked(word(start), word(start + 8), len)
    }

    /// The key of a piece of `len` bytes (`1 <= len <= 16`) whose first 16 bytes (the piece
    /// and whatever follows it) are the little-endian words `lo` and `hi`.
    #[inline(always)]
    fn masked(lo: u64, hi: u64, len: usize) -> Self {
        Self {
            lo: lo & KEEP[len.min(8)],
            hi: hi & KEEP[len.saturating_sub(8).min(8)],
            len: len as u32,
        }
    }
}

/// `KEEP[k]` keeps the first `k` bytes of a little-endian word.
const KEEP: [u64; 9] = {
    let mut keep = [u64::MAX; 9];
    let mut k = 0;
    while k < 8 {
        keep[k] = (1 << (8 * k)) - 1;
        k += 1;
    }
    keep
};

/// The token index of a [`MergeTables`] as plain values, for loops that look up a token per
/// piece: made once per call ([`MergeTables::index`]) and passed by value, so its slices, seeds
/// and flags stay in registers. Read through `&MergeTables`, whose `OnceLock` and atomics are
/// interior-mutable, the compiler must load every field again after each store to the output
/// (it might have changed them), which cost about ten instructions per piece.
#[derive(Clone, Copy)]
pub struct TokenIndex<'a> {
    small: &'a [SmallSlot],
    mid: &'a [MidSlot],
    filter: &'a [u64; FILTER_WORDS],
    seeds: [u64; 2],
    byte_ids: &'a [u32; 256],
    whole_piece_lookup: bool,
}

impl TokenIndex<'_> {
    /// The id of the piece `bytes[start..end]` (`start < end`) when it is one byte or, if the
    /// vocabulary looks whole pieces up, a token: the native encoders' shortcuts. A piece of
    /// up to 16 bytes with 16 bytes readable from `start` is read with two loads and masks and
    /// probed once; longer pieces and pieces at the very end of the text take
    /// [`MergeTables::whole_in`]'s general path through `tables`.
    #[inline(always)]
    pub fn shortcut(
        self,
        tables: &MergeTables,
        bytes: &[u8],
        start: usize,
        end: usize,
    ) -> Option<u32> {
        let len = end - start;
        if len == 1 {
            return Some(self.byte_ids[usize::from(bytes[start])]);
        }
        if !self.whole_piece_lookup {
            return None;
        }
        if len <= 16 && start + 16 <= bytes.len() {
            // SAFETY: the 16 bytes from `start` are in `bytes` (checked above); the loads
            // are unaligned reads of them, without the per-load bounds and overflow checks
            // of slicing.
            let (lo, hi) = unsafe {
                let at = bytes.as_ptr().add(start);
                (
                    at.cast::<u64>().read_unaligned(),
                    at.add(8).cast::<u64>().read_unaligned(),
                )
            };
            // Masked per length class: a piece of up to 8 bytes (most of them) needs no
            // second word.
            if len <= 8 {
                let key = ShortKey {
                    lo: u64::from_le(lo) & KEEP[len],
                    hi: 0,
                    len: len as u32,
                };
                self.probe(self.small, &key)
            } else {
                let key = ShortKey::masked(u64::from_le(lo), u64::from_le(hi), len);
                self.probe(self.mid, &key)
            }
        } else {
            tables.rank_of(&bytes[start..end])
        }
    }

    /// The id of `key` in `slots` (its length class's table). The home slot's line starts
    /// loading with the filter word's, so a token waits for one miss, not two in a row;
    /// a piece that is not one is answered by the filter (256 KB, mostly in the CPU's
    /// cache) without waiting for the slot (probing the home slot first, and the filter only
    /// past it, made a first pass over multilingual text 1.1× slower). Behind the piece
    /// table, three in four pieces that get here in a first pass are not tokens; requesting
    /// the slot only once the filter let the piece through measured level.
    #[inline(always)]
    fn probe<S: Slot>(self, slots: &[S], key: &ShortKey) -> Option<u32> {
        let hash = hash_key(self.seeds, key);
        let mut i = home(hash, slots.len());
        // SAFETY: `home` is below the table's size: (a 32-bit value × size) >> 32 < size.
        let mut slot = unsafe { slots.get_unchecked(i) };
        prefetch(slot);
        if !may_hold(self.filter, hash) {
            return None;
        }
        loop {
            if slot.holds(key) {
                return Some(slot.id());
            }
            if slot.len() == 0 {
                return None;
            }
            i += 1;
            if i == slots.len() {
                i = 0;
            }
            slot = &slots[i];
        }
    }
}

/// The hash of `key` under `seeds`: its low bits pick the slot in the table of its length
/// class, its top bits the filter bit.
#[inline(always)]
fn hash_key(seeds: [u64; 2], key: &ShortKey) -> u64 {
    if key.len <= 8 {
        fold(
            key.lo ^ seeds[0],
            0x243f_6a88_85a3_08d3 ^ u64::from(key.len),
        )
    } else {
        fold(
            key.lo ^ seeds[0],
            key.hi ^ seeds[1] ^ (u64::from(key.len) << 59),
        )
    }
}

/// The slot `hash` picks in a table of `size` slots: its low 32 bits scaled to the size (a
/// multiply and a shift, no division; the filter reads the top bits).
#[inline(always)]
fn home(hash: u64, size: usize) -> usize {
    (((hash & 0xffff_ffff) * size as u64) >> 32) as usize
}

/// Whether `filter` lets `hash` through (some token has its filter bit): the bit the hash's
/// top bits pick among the filter's `64 * N` (a power of two). Its fixed size makes the
/// index a shift with no bounds check.
#[inline(always)]
fn may_hold<const N: usize>(filter: &[u64; N], hash: u64) -> bool {
    let (word, bit) = filter_bit::<N>(hash);
    filter[word] & bit != 0
}

/// Sets `hash`'s bit in `filter` ([`may_hold`]).
fn add_to_filter<const N: usize>(filter: &mut [u64; N], hash: u64) {
    let (word, bit) = filter_bit::<N>(hash);
    filter[word] |= bit;
}

/// The word and the bit mask of `hash`'s bit in a filter of `N` words.
#[inline(always)]
fn filter_bit<const N: usize>(hash: u64) -> (usize, u64) {
    const { assert!(N.is_power_of_two()) };
    let index = hash >> (64 - (64 * N).trailing_zeros());
    ((index / 64) as usize, 1 << (index % 64))
}

/// The merge ranks of pairs of tokens with ids below [`GRID_IDS`] that merges have asked
/// about, for the rank-based rule: the rank of the bytes of `left` followed by those of
/// `right` (or [`NO_RANK`]), kept at `left * GRID_IDS + right` once looked up in the index.
///
/// In a tiktoken vocabulary the ids are ranks and the low ones the most frequent tokens, so
/// while the new pieces of English prose merge, more than half of the pairs asked about are
/// of two ids below 512 (cl100k_base; two thirds below 1,024; multilingual text: four tenths
/// and half), and most of those pairs come up again and again: a read of this grid (1 MiB)
/// answers them without building a key, hashing it and probing the index. A pair is looked
/// up in the index the first time, so the grid costs nothing to build and touches only the
/// pages of the pairs asked about. (Filled ahead of use, a row at a time or whole, it took 5
/// to 11 ms per vocabulary, a cost paid inside a first pass over a corpus or at load.)
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
    fn new(rank_based: bool) -> Self {
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

impl MergeTables {
    /// Build the tables from a vocabulary's parts, as its file readers give them: the BPE
    /// tokens as `(bytes, id)`, the special and added literals, `n_vocab` (every id is below
    /// it), the pair merges `(left, right, rank)` of a pair-ranked vocabulary (None: the
    /// token ids are the merge ranks, tiktoken's rule) and whether a piece that is a whole
    /// token is that token without merging (tiktoken and HF's `ignore_merges`).
    pub fn from_tokens<'a>(
        bpe: impl IntoIterator<Item = (&'a [u8], u32)>,
        literals: &[crate::literal::Literal],
        n_vocab: usize,
        merges: Option<Vec<(u32, u32, Rank)>>,
        whole_piece_lookup: bool,
    ) -> Result<Self, crate::Error> {
        let (mut blob, mut ids, mut lens, mut is_bpe) = (vec![], vec![], vec![], vec![]);
        let literal_parts = literals.iter().map(|l| (l.text.as_bytes(), l.id, false));
        for (bytes, id, bpe) in bpe
            .into_iter()
            .map(|(b, id)| (b, id, true))
            .chain(literal_parts)
        {
            blob.extend_from_slice(bytes);
            ids.push(id);
            lens.push(u32::try_from(bytes.len()).map_err(|_| {
                crate::Error::VocabFormat(format!("token {id} is longer than 4 GiB"))
            })?);
            is_bpe.push(bpe);
        }
        Ok(Self::new(
            &blob,
            &ids,
            &lens,
            &is_bpe,
            n_vocab,
            merges,
            whole_piece_lookup,
        )?)
    }

    /// A number no other tables of this process have: the pipelines over these tables that
    /// give every piece the same ids (one native encoder) share each thread's caches under it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The vocabulary's tokens of up to 15 bytes as a piece table, made on first use and
    /// then shared: every thread's piece table, in every pipeline over these tables that
    /// uses them, starts as a copy of it (4 or 8 MB, made once rather than per pipeline).
    pub(crate) fn piece_seeds(&self) -> &PieceSeeds {
        self.piece_seeds.get_or_init(|| PieceSeeds::of(self))
    }

    /// Build the tables from `blob`, the bytes of tokens `ids[i]` of lengths `lens[i]`
    /// concatenated; `is_bpe[i]` tells BPE tokens from special/added literals (which are
    /// decoded but never merged or looked up). Two literals may share an id; the first wins.
    pub fn new(
        blob: &[u8],
        ids: &[u32],
        lens: &[u32],
        is_bpe: &[bool],
        n_vocab: usize,
        merges: Option<Vec<(u32, u32, Rank)>>,
        whole_piece_lookup: bool,
    ) -> Result<Self, TablesError> {
        if ids.len() != lens.len() || ids.len() != is_bpe.len() {
            return Err(TablesError("ids, lengths and kinds differ in count".into()));
        }
        if lens.iter().map(|&l| l as usize).sum::<usize>() != blob.len() {
            return Err(TablesError(
                "token lengths do not add up to the bytes given".into(),
            ));
        }
        let count = |lengths: std::ops::RangeInclusive<u32>| {
            lens.iter()
                .zip(is_bpe)
                .filter(|&(len, &bpe)| bpe && lengths.contains(len))
                .count()
        };
        let mut seeds = [0; 2];
        for (i, seed) in seeds.iter_mut().enumerate() {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(i);
            *seed = hasher.finish();
        }
        let pair_grid = PairGrid::new(merges.is_none());
        let rank_bound = match &merges {
            Some(list) => list.iter().map(|m| u64::from(m.2) + 1).max().unwrap_or(0),
            None => n_vocab as u64,
        };
        let mut tables = Self {
            arena: Vec::with_capacity(blob.len()),
            spans: vec![(UNUSED, 0); n_vocab],
            small: ProbeTable::with_capacity(count(1..=8)),
            mid: ProbeTable::with_capacity(count(9..=16)),
            filter: vec![0; FILTER_WORDS]
                .into_boxed_slice()
                .try_into()
                .expect("FILTER_WORDS words"),
            seeds,
            long: HashTable::new(),
            long_filter: Box::new([0; LONG_FILTER_WORDS]),
            hasher: FxBuildHasher,
            merges: merges.map(|list| {
                list.into_iter()
                    .map(|(l, r, rank)| ((l, r), rank))
                    .collect()
            }),
            rank_bound,
            whole_piece_lookup,
            byte_ids: [UNUSED; 256],
            lacks_bytes: false,
            byte_pairs: vec![NO_RANK; 1 << 16]
                .into_boxed_slice()
                .try_into()
                .expect("a slice of 1 << 16 ranks"),
            backtrack: OnceLock::new(),
            pair_grid,
            char_merges: OnceLock::new(),
            auto_swept_backtrack_bytes: AtomicUsize::new(0),
            id: NEXT_TABLES_ID.fetch_add(1, Relaxed),
            piece_seeds: OnceLock::new(),
        };
        // Each token's insert misses the CPU's caches twice, at random in several MB (its
        // filter word and its home slot): asking for the lines of the token AHEAD places on
        // lets the misses overlap instead of following one another (o200k_base's tables
        // were built in 31 ms, three fifths of it waiting on these lines).
        const AHEAD: usize = 32;
        let mut ahead_offset: usize = lens.iter().take(AHEAD).map(|&l| l as usize).sum();
        let mut offset = 0usize;
        for (i, ((&id, &len), &bpe)) in ids.iter().zip(lens).zip(is_bpe).enumerate() {
            if let Some(&ahead_len) = lens.get(i + AHEAD) {
                if is_bpe[i + AHEAD] {
                    tables.request_insert_lines(
                        &blob[ahead_offset..ahead_offset + ahead_len as usize],
                    );
                }
                ahead_offset += ahead_len as usize;
            }
            let piece = &blob[offset..offset + len as usize];
            offset += len as usize;
            let span = tables.spans.get_mut(id as usize).ok_or_else(|| {
                TablesError(format!("token id {id} is not below n_vocab {n_vocab}"))
            })?;
            if span.0 != UNUSED {
                // Two literals may share an id (o200k_harmony), and a literal may name a BPE
                // token (an HF added token that is also in the model's vocab): the id keeps the
                // bytes it got first, the BPE token's, which come before the literals. Two BPE
                // tokens never share an id.
                if bpe {
                    return Err(TablesError(format!("token id {id} is used twice")));
                }
                continue;
            }
            *span = (tables.arena.len() as u32, len);
            tables.arena.extend_from_slice(piece);
            if !bpe {
                continue;
            }
            match *piece {
                [byte] => tables.byte_ids[usize::from(byte)] = id,
                // Under the rank-based rule a two-byte token's id is its pair's rank.
                [a, b] if tables.merges.is_none() => {
                    tables.byte_pairs[usize::from(a) << 8 | usize::from(b)] = id;
                }
                _ => {}
            }
            let repeated =
                || TablesError(format!("token id {id} repeats the bytes of another token"));
            // One probe per token: the entry is either the repeat (an error) or the free slot.
            if let Some(key) = ShortKey::of(piece) {
                let hash = tables.hash(&key);
                add_to_filter(&mut tables.filter, hash);
                let fresh = if key.len <= 8 {
                    tables.small.insert(hash, &key, id)
                } else {
                    tables.mid.insert(hash, &key, id)
                };
                if !fresh {
                    return Err(repeated());
                }
                continue;
            }
            let hash = tables.hasher.hash_one(piece);
            add_to_filter(&mut tables.long_filter, hash);
            let (arena, spans) = (&tables.arena, &tables.spans);
            let bytes_of = |other: u32| {
                let (start, len) = spans[other as usize];
                &arena[start as usize..(start + len) as usize]
            };
            match tables.long.entry(
                hash,
                |&other| other != id && bytes_of(other) == piece,
                |&other| FxBuildHasher.hash_one(bytes_of(other)),
            ) {
                Entry::Occupied(_) => return Err(repeated()),
                Entry::Vacant(slot) => slot.insert(id),
            };
        }
        // Some vocabularies (GPT-NeoX's, a few GGUF files) lack a token for some bytes: the
        // pipeline drops those bytes from a piece before merging, as HF does.
        tables.lacks_bytes = tables.byte_ids.contains(&UNUSED);
        tables.fill_byte_pairs();
        Ok(tables)
    }

    /// The ranks of pairs of byte tokens under the pair-ranked rule, read from the merges
    /// (under the rank-based rule the token loop wrote them, a two-byte token's id).
    fn fill_byte_pairs(&mut self) {
        let Some(merges) = &self.merges else {
            return;
        };
        let mut byte_of = FxHashMap::default();
        for (byte, &id) in self.byte_ids.iter().enumerate() {
            if id != UNUSED {
                byte_of.insert(id, byte);
            }
        }
        for (&(left, right), &rank) in merges {
            if let (Some(&a), Some(&b)) = (byte_of.get(&left), byte_of.get(&right)) {
                self.byte_pairs[a << 8 | b] = rank;
            }
        }
    }

    /// The bytes no token spells, in order (empty for most vocabularies).
    pub fn missing_bytes(&self) -> Vec<u8> {
        (0..=255u8)
            .filter(|&b| self.byte_ids[usize::from(b)] == UNUSED)
            .collect()
    }

    /// Whether byte `b` has a token.
    #[inline]
    pub fn has_byte(&self, b: u8) -> bool {
        self.byte_ids[usize::from(b)] != UNUSED
    }

    /// Priority of merging the single bytes `a` and `b` (the same as [`Self::pair_rank`] on
    /// their byte tokens).
    #[inline]
    pub fn byte_pair_rank(&self, a: u8, b: u8) -> Rank {
        self.byte_pairs[usize::from(a) << 8 | usize::from(b)]
    }

    /// The bytes of token `id`, or `None` for an unknown or unused id.
    #[inline]
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        let (start, len) = self.token_span(id)?;
        Some(&self.arena[start..start + len])
    }

    /// Where token `id`'s bytes are in [`Self::arena`]: `(start, len)`, or `None` for an
    /// unknown or unused id (the decoder's loop, which copies from the arena itself).
    #[inline(always)]
    pub(crate) fn token_span(&self, id: u32) -> Option<(usize, usize)> {
        let &(start, len) = self.spans.get(id as usize)?;
        (start != UNUSED).then_some((start as usize, len as usize))
    }

    /// Every token's bytes, one after another ([`Self::token_span`] says where each is).
    #[inline(always)]
    pub(crate) fn arena(&self) -> &[u8] {
        &self.arena
    }

    pub fn n_vocab(&self) -> usize {
        self.spans.len()
    }

    /// The BPE token ids, in no particular order.
    pub fn bpe_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.small
            .ids()
            .chain(self.mid.ids())
            .chain(self.long.iter().copied())
    }

    /// Every BPE token of 1 to 16 bytes, in no particular order: its bytes as two
    /// zero-padded little-endian words, its length and its id, read from the index's
    /// slots (which hold the bytes inline: no read of the arena per token).
    pub(crate) fn short_tokens(&self) -> impl Iterator<Item = (u64, u64, usize, u32)> + '_ {
        self.small.tokens().chain(self.mid.tokens())
    }

    /// The id of the BPE token spelled by `piece`, which under the rank-based rule is also
    /// its merge priority.
    #[inline]
    pub fn rank_of(&self, piece: &[u8]) -> Option<Rank> {
        match ShortKey::of(piece) {
            Some(key) => self.find(&key),
            None => self.rank_of_long(piece),
        }
    }

    /// [`Self::rank_of`] of `bytes[start..end]` (`start < end`): when `bytes` holds 16 bytes
    /// from `start` (a piece inside a longer text, or copied into a padded buffer), a
    /// piece of up to 16 bytes is read with two loads and masks instead of a branch per
    /// length class.
    #[inline(always)]
    pub fn rank_in(&self, bytes: &[u8], start: usize, end: usize) -> Option<Rank> {
        let len = end - start;
        if len <= 16 && start + 16 <= bytes.len() {
            self.find(&ShortKey::of_padded(bytes, start, len))
        } else {
            self.rank_of(&bytes[start..end])
        }
    }

    /// The rank of `bytes[start..end]` (`start < end`), or `NO_RANK`, where `bytes` holds
    /// 16 bytes from `start` (a piece copied into a buffer padded with 16 bytes).
    #[inline(always)]
    pub fn rank_padded(&self, bytes: &[u8], start: usize, end: usize) -> Rank {
        let len = end - start;
        let rank = if len <= 16 {
            self.find(&ShortKey::of_padded(bytes, start, len))
        } else {
            self.rank_of_long(&bytes[start..end])
        };
        rank.unwrap_or(NO_RANK)
    }

    /// The hash of `key`: its low bits pick the slot in the table of its length class, its
    /// top bits the filter bit.
    #[inline(always)]
    fn hash(&self, key: &ShortKey) -> u64 {
        hash_key(self.seeds, key)
    }

    /// Whether the filter lets `hash` through (some token has its filter bit).
    #[inline(always)]
    fn may_hold(&self, hash: u64) -> bool {
        may_hold(&self.filter, hash)
    }

    #[inline(always)]
    fn find(&self, key: &ShortKey) -> Option<Rank> {
        let hash = self.hash(key);
        // The home slot's line starts loading with the filter word's, not after it: on text
        // not seen before both miss the CPU's caches, and waiting for one and then the other
        // was the largest cost of a lookup.
        self.load_home(key, hash);
        if !self.may_hold(hash) {
            None
        } else {
            self.find_in_class(key, hash)
        }
    }

    /// Asks the CPU for the lines inserting the BPE token `piece` writes first (its home
    /// slot and its filter word), if it is short enough for the slot tables.
    #[inline(always)]
    fn request_insert_lines(&self, piece: &[u8]) {
        if let Some(key) = ShortKey::of(piece) {
            self.request_key_lines(&key);
        }
    }

    /// Asks the CPU for the filter word and the home slot's line of `bytes[start..end]`
    /// (1 to 16 bytes, with 16 bytes readable from `start`), as [`Self::rank_padded`] will
    /// read them.
    #[inline(always)]
    pub fn prefetch_rank(&self, bytes: &[u8], start: usize, end: usize) {
        self.request_key_lines(&ShortKey::of_padded(bytes, start, end - start));
    }

    /// Asks the CPU for the two lines a lookup or an insert of `key` reads: its filter word
    /// and its home slot.
    #[inline(always)]
    fn request_key_lines(&self, key: &ShortKey) {
        let hash = self.hash(key);
        prefetch(&self.filter[filter_bit::<FILTER_WORDS>(hash).0]);
        self.load_home(key, hash);
    }

    /// Asks the CPU for the line of `key`'s home slot (`hash` is its hash) in the table of
    /// its length class.
    #[inline(always)]
    fn load_home(&self, key: &ShortKey, hash: u64) {
        if key.len <= 8 {
            prefetch(&self.small.slots[self.small.home(hash)]);
        } else {
            prefetch(&self.mid.slots[self.mid.home(hash)]);
        }
    }

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

    /// `key` (hash `hash`) probed in the table of its length class, past the filter.
    #[inline(always)]
    fn find_in_class(&self, key: &ShortKey, hash: u64) -> Option<Rank> {
        if key.len <= 8 {
            self.small.find(hash, key)
        } else {
            self.mid.find(hash, key)
        }
    }

    #[cold]
    fn rank_of_long(&self, piece: &[u8]) -> Option<Rank> {
        let hash = self.hasher.hash_one(piece);
        if !may_hold(&self.long_filter, hash) {
            return None;
        }
        self.long
            .find(hash, |&id| {
                let (start, len) = self.spans[id as usize];
                &self.arena[start as usize..(start + len) as usize] == piece
            })
            .copied()
    }

    /// The token index as plain values, for a loop over many pieces ([`TokenIndex`]).
    #[inline]
    pub fn index(&self) -> TokenIndex<'_> {
        TokenIndex {
            small: &self.small.slots[..],
            mid: &self.mid.slots[..],
            filter: &self.filter,
            seeds: self.seeds,
            byte_ids: &self.byte_ids,
            whole_piece_lookup: self.whole_piece_lookup,
        }
    }

    /// The id of `piece` when the vocabulary encodes a whole-token piece in one lookup.
    #[inline]
    pub fn whole(&self, piece: &[u8]) -> Option<u32> {
        if self.whole_piece_lookup {
            self.rank_of(piece)
        } else {
            None
        }
    }

    /// [`Self::whole`] of `bytes[start..end]`, read as [`Self::rank_in`] reads it.
    #[inline(always)]
    pub fn whole_in(&self, bytes: &[u8], start: usize, end: usize) -> Option<u32> {
        if self.whole_piece_lookup {
            self.rank_in(bytes, start, end)
        } else {
            None
        }
    }

    /// [`Self::rank_padded`] of two pieces, `bytes[a.0..a.1]` and `bytes[b.0..b.1]` (the
    /// pairs either side of a merge): both keys are hashed and both home slots' lines start
    /// loading before either filter bit is tested, so the second lookup does not wait for
    /// the first one's reads.
    #[inline(always)]
    pub fn pair_ranks_padded(
        &self,
        bytes: &[u8],
        a: (usize, usize),
        b: (usize, usize),
    ) -> (Rank, Rank) {
        let (len_a, len_b) = (a.1 - a.0, b.1 - b.0);
        if len_a > 16 || len_b > 16 {
            return (
                self.rank_padded(bytes, a.0, a.1),
                self.rank_padded(bytes, b.0, b.1),
            );
        }
        let key_a = ShortKey::of_padded(bytes, a.0, len_a);
        let key_b = ShortKey::of_padded(bytes, b.0, len_b);
        let (hash_a, hash_b) = (self.hash(&key_a), self.hash(&key_b));
        self.load_home(&key_a, hash_a);
        self.load_home(&key_b, hash_b);
        let (pass_a, pass_b) = (self.may_hold(hash_a), self.may_hold(hash_b));
        let probe = |pass: bool, key: &ShortKey, hash: u64| {
            let found = if !pass {
                None
            } else {
                self.find_in_class(key, hash)
            };
            found.unwrap_or(NO_RANK)
        };
        (probe(pass_a, &key_a, hash_a), probe(pass_b, &key_b, hash_b))
    }

    /// Priority of merging the adjacent symbols `piece[start..mid]` and `piece[mid..end]`
    /// (whose ids are `left`, `right`), or `NO_RANK`.
    #[inline]
    pub fn pair_rank(&self, piece: &[u8], start: usize, end: usize, left: u32, right: u32) -> Rank {
        match &self.merges {
            None => self.rank_in(piece, start, end).unwrap_or(NO_RANK),
            Some(merges) => merges.get(&(left, right)).copied().unwrap_or(NO_RANK),
        }
    }

    /// The id of the token that merging `piece[start..end]` at priority `rank` makes: under
    /// the rank-based rule the priority is the id itself, so no second lookup is needed.
    #[inline]
    pub fn merged_id(&self, piece: &[u8], start: usize, end: usize, rank: Rank) -> u32 {
        if self.merges.is_none() {
            rank
        } else {
            self.id_of(&piece[start..end])
        }
    }

    /// The id of the token spelled by `piece` (which must be one).
    #[inline]
    pub fn id_of(&self, piece: &[u8]) -> u32 {
        if piece.len() == 1 {
            self.byte_ids[piece[0] as usize]
        } else {
            self.rank_of(piece)
                .expect("id_of is only called on token bytes")
        }
    }

    /// The characters of two and three bytes a merge loop may take whole from the start
    /// ([`CharMerges`]), for rank-based vocabularies (`None` for pair-ranked ones): built on
    /// first use, by the first merge of a piece that is not ASCII (768 KB; 2 ms for
    /// cl100k_base, 7 for o200k_base), so that a tokenizer that never meets one never pays
    /// for them.
    #[inline]
    pub(crate) fn char_merges(&self) -> Option<&CharMerges> {
        if self.merges.is_some() {
            return None;
        }
        Some(self.char_merges.get_or_init(|| {
            let tokens = self.bpe_ids().filter_map(|id| Some((self.token(id)?, id)));
            CharMerges::new(tokens, |a, b| self.byte_pair_rank(a, b))
        }))
    }

    /// The backtrack tables, or why this vocabulary cannot have them.
    pub fn backtrack_tables(&self) -> Result<&BacktrackTables, &str> {
        self.backtrack
            .get_or_init(|| BacktrackTables::new(self))
            .as_ref()
            .map_err(|e| e.as_str())
    }

    /// Whether the backtrack tables have been built (they are built on first use).
    pub fn backtrack_built(&self) -> bool {
        matches!(self.backtrack.get(), Some(Ok(_)))
    }

    /// Counts `bytes` more of pieces backtrack leads on (runs, wide white space) given to
    /// buffer-sweep by the `auto` encoder; returns the total.
    pub fn count_auto_swept_backtrack_bytes(&self, bytes: usize) -> usize {
        self.auto_swept_backtrack_bytes.fetch_add(bytes, Relaxed) + bytes
    }

    /// The backtrack tables; callers check [`Self::backtrack_tables`] when choosing the encoder.
    pub fn backtrack(&self) -> &BacktrackTables {
        self.backtrack_tables()
            .expect("backtrack encoder chosen for a vocabulary that cannot use it")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// 256 byte tokens plus `extra` multi-byte tokens with ids from 256 on.
    pub fn tiny(extra: &[&[u8]]) -> MergeTables {
        tiny_ranked(extra, None)
    }

    /// [`tiny`] with `merges` as a pair-ranked vocabulary's list (no whole-piece lookup), or
    /// rank-based with `None`.
    pub fn tiny_ranked(extra: &[&[u8]], merges: Option<Vec<(u32, u32, Rank)>>) -> MergeTables {
        let mut pieces: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        pieces.extend(extra.iter().map(|p| p.to_vec()));
        let ids: Vec<u32> = (0..pieces.len() as u32).collect();
        let lens: Vec<u32> = pieces.iter().map(|p| p.len() as u32).collect();
        let kinds = vec![true; pieces.len()];
        let whole_piece_lookup = merges.is_none();
        MergeTables::new(
            &pieces.concat(),
            &ids,
            &lens,
            &kinds,
            pieces.len(),
            merges,
            whole_piece_lookup,
        )
        .unwrap()
    }

    #[test]
    fn char_merges_are_built_by_the_first_merge_of_a_piece_that_is_not_ascii() {
        use crate::encoders::buffer_sweep;
        let t = tiny(&["а".as_bytes(), b"ab"]);
        let mut out = vec![];
        buffer_sweep::encode(&t, b"abab", &mut out);
        assert!(t.char_merges.get().is_none());
        buffer_sweep::encode(&t, "аа".as_bytes(), &mut out);
        assert!(t.char_merges.get().is_some());
        assert_eq!(out, [257, 257, 256, 256]);
        let pair_ranked = tiny_ranked(&[b"ab"], Some(vec![(97, 98, 0)]));
        assert!(pair_ranked.char_merges().is_none());
    }

    #[test]
    fn pair_grid_keeps_ranks_of_low_ids_only() {
        let t = tiny(&[b"ab", b"ba"]);
        let grid = &t.pair_grid;
        assert_eq!(grid.get(97, 98), None);
        assert_eq!(grid.keep(97, 98, 256), 256);
        assert_eq!(grid.get(97, 98), Some(256));
        // A pair that is no token, the lowest rank, and ids past the grid.
        grid.keep(98, 98, NO_RANK);
        grid.keep(0, 0, 0);
        assert_eq!((grid.get(98, 98), grid.get(0, 0)), (Some(NO_RANK), Some(0)));
        let past = GRID_IDS as u32;
        assert_eq!(grid.keep(past, 97, 7), 7);
        assert_eq!((grid.get(past, 97), grid.get(97, past)), (None, None));
        assert_eq!(grid.get(98, 97), None);
        // A pair-ranked vocabulary's grid has no cells: nothing is kept.
        let ranked = tiny_ranked(&[b"ab"], Some(vec![(97, 98, 0)]));
        assert_eq!(ranked.pair_grid.keep(97, 98, 0), 0);
        assert_eq!(ranked.pair_grid.get(97, 98), None);
    }

    #[test]
    fn lookup_decode_and_errors() {
        let t = tiny(&[b"ab"]);
        assert_eq!(t.rank_of(b"ab"), Some(256));
        assert_eq!(t.rank_of(b"abc"), None);
        let mut out = vec![];
        t.decode_into(&[256, 99], &mut out).unwrap();
        assert_eq!(out, b"abc");
        assert_eq!(t.decode_into(&[7, 999], &mut out), Err(999));
    }

    #[test]
    fn short_keys_are_exact() {
        // Every length from 1 to 16, and pieces that differ only in length or trailing zeros.
        let all: Vec<u8> = (1..=40u8).collect();
        let mut seen = std::collections::HashSet::new();
        for len in 1..=16 {
            let key = ShortKey::of(&all[..len]).unwrap();
            let unpacked: Vec<u8> = key
                .lo
                .to_le_bytes()
                .iter()
                .chain(&key.hi.to_le_bytes())
                .copied()
                .collect();
            assert_eq!(&unpacked[..len], &all[..len]);
            assert!(unpacked[len..].iter().all(|&b| b == 0));
            assert!(seen.insert((key.lo, key.hi, key.len)));
        }
        assert!(ShortKey::of(b"a\0") != ShortKey::of(b"a"));
        assert!(ShortKey::of(b"").is_none() && ShortKey::of(&all[..17]).is_none());
        let t = tiny(&[b"0123456789abcdef", b"0123456789abcdefg", b"\0\0"]);
        assert_eq!(t.rank_of(b"0123456789abcdef"), Some(256));
        assert_eq!(t.rank_of(b"0123456789abcdefg"), Some(257));
        assert_eq!(t.rank_of(b"\0\0"), Some(258));
        assert_eq!(t.rank_of(b"\0\0\0"), None);
        assert_eq!(t.bpe_ids().count(), 259);
    }

    #[test]
    fn padded_keys_equal_plain_keys() {
        let mut bytes: Vec<u8> = (0..40u8).map(|b| b.wrapping_mul(37) | 1).collect();
        bytes.extend([0u8; 16]);
        for start in 0..40 {
            for len in 1..=16 {
                let plain = ShortKey::of(&bytes[start..start + len]).unwrap();
                assert!(
                    ShortKey::of_padded(&bytes, start, len) == plain,
                    "{start} {len}"
                );
            }
        }
    }

    #[test]
    fn every_lookup_path_agrees() {
        // Tokens of every length from 2 to 20 (the small, mid and long tables), and pieces
        // that are not tokens next to them: longer, shorter, one byte changed.
        let text: Vec<u8> = (0..64u8)
            .map(|b| b"abcdefghijklmnopqrstuvwxyz"[b as usize % 26] ^ (b / 26))
            .collect();
        let tokens: Vec<&[u8]> = (2..=20).map(|len| &text[len..2 * len]).collect();
        let t = tiny(&tokens);
        let mut padded = text.clone();
        padded.extend([0u8; 16]);
        for start in 0..text.len() {
            for end in start + 1..=text.len().min(start + 24) {
                let piece = &text[start..end];
                let want = tokens
                    .iter()
                    .position(|tok| *tok == piece)
                    .map(|i| 256 + i as u32)
                    .or_else(|| (piece.len() == 1).then(|| u32::from(piece[0])));
                assert_eq!(t.rank_of(piece), want, "{piece:?}");
                assert_eq!(t.rank_in(&text, start, end), want, "{piece:?}");
                assert_eq!(t.rank_in(&padded, start, end), want, "{piece:?}");
                assert_eq!(t.rank_padded(&padded, start, end), want.unwrap_or(NO_RANK));
                let index = t.index();
                assert_eq!(index.shortcut(&t, &text, start, end), want, "{piece:?}");
                assert_eq!(index.shortcut(&t, &padded, start, end), want, "{piece:?}");
            }
        }
    }

    #[test]
    fn long_tokens_pass_their_filter_and_most_other_pieces_do_not() {
        // 2,000 tokens of 17 to 80 bytes; the pieces one byte longer are not tokens.
        let pieces: Vec<Vec<u8>> = (0..2000u32)
            .map(|i| {
                let len = 17 + (i % 64) as usize;
                let mut piece: Vec<u8> =
                    (0..len).map(|j| (i as usize * 31 + j * 7) as u8).collect();
                piece[..2].copy_from_slice(&(i as u16).to_le_bytes());
                piece
            })
            .collect();
        let t = tiny(&pieces.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let mut passed = 0;
        for (i, piece) in pieces.iter().enumerate() {
            assert_eq!(t.rank_of(piece), Some(256 + i as u32));
            let longer = [piece.as_slice(), b"!"].concat();
            assert_eq!(t.rank_of(&longer), None);
            passed += usize::from(may_hold(&t.long_filter, t.hasher.hash_one(&longer)));
        }
        // About 3 % of the filter's bits are set.
        assert!(passed < pieces.len() / 10, "{passed}");
    }

    #[test]
    fn probe_table_runs_past_collisions_and_wraps() {
        // Every key in one slot (the last): found by walking on, around the end.
        let mut table = ProbeTable::<SmallSlot>::with_capacity(4);
        let last = 0xffff_ffff;
        assert_eq!(table.home(last), table.slots.len() - 1);
        let keys: Vec<ShortKey> = (1..=5u8).map(|b| ShortKey::of(&[b; 3]).unwrap()).collect();
        for (id, key) in keys.iter().enumerate() {
            assert!(table.insert(last, key, id as u32));
        }
        assert!(!table.insert(last, &keys[2], 9), "a repeat is refused");
        for (id, key) in keys.iter().enumerate() {
            assert_eq!(table.find(last, key), Some(id as u32));
        }
        assert_eq!(table.find(last, &ShortKey::of(b"zzz").unwrap()), None);
        assert_eq!(table.ids().count(), 5);
    }

    #[test]
    fn byte_pair_table_equals_pair_rank() {
        let rank_based = tiny(&[b"ab", b"\xe4\xb8", b"aa"]);
        // Pair-ranked: "ba" merges first although its id is higher.
        let pair_ranked = tiny_ranked(&[b"ab", b"ba"], Some(vec![(98, 97, 0), (97, 98, 1)]));
        for t in [&rank_based, &pair_ranked] {
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    let (left, right) = (t.byte_ids[a as usize], t.byte_ids[b as usize]);
                    assert_eq!(
                        t.byte_pair_rank(a, b),
                        t.pair_rank(&[a, b], 0, 2, left, right)
                    );
                }
            }
        }
        assert_eq!(pair_ranked.byte_pair_rank(b'b', b'a'), 0);
        // Without whole-piece lookups only a single byte is a shortcut.
        let text = [b"ab".as_slice(), &[0; 16]].concat();
        assert_eq!(
            pair_ranked.index().shortcut(&pair_ranked, &text, 0, 2),
            None
        );
        assert_eq!(
            pair_ranked.index().shortcut(&pair_ranked, &text, 0, 1),
            Some(97)
        );
        assert_eq!(rank_based.byte_pair_rank(0xe4, 0xb8), 257);
    }

    #[test]
    fn missing_bytes_are_recorded_and_duplicates_are_errors() {
        let only_a = MergeTables::new(b"a", &[0], &[1], &[true], 1, None, true).unwrap();
        assert!(only_a.lacks_bytes && only_a.has_byte(b'a') && !only_a.has_byte(b'b'));
        assert_eq!(only_a.missing_bytes().len(), 255);
        assert!(!tiny(&[]).lacks_bytes && tiny(&[]).missing_bytes().is_empty());
        let blob: Vec<u8> = (0..=255u8).chain([b'a']).collect();
        let ids: Vec<u32> = (0..257).collect();
        let lens = vec![1u32; 257];
        assert!(MergeTables::new(&blob, &ids, &lens, &[true; 257], 257, None, true).is_err());
        // Two literals may share an id, and a literal may name a BPE token's id (which then
        // keeps the BPE token's bytes); two BPE tokens may not share one.
        let blob: Vec<u8> = (0..=255u8).chain(*b"<s><t>").collect();
        let lens: Vec<u32> = [1; 256].into_iter().chain([3, 3]).collect();
        let kinds: Vec<bool> = [true; 256].into_iter().chain([false, false]).collect();
        let shared: Vec<u32> = (0..256).chain([256, 256]).collect();
        assert!(MergeTables::new(&blob, &shared, &lens, &kinds, 257, None, true).is_ok());
        let named: Vec<u32> = (0..256).chain([256, 7]).collect();
        let t = MergeTables::new(&blob, &named, &lens, &kinds, 257, None, true).unwrap();
        assert_eq!(t.token(7), Some(&[7u8][..]));
        let kinds: Vec<bool> = [true; 258].into();
        assert!(MergeTables::new(&blob, &named, &lens, &kinds, 257, None, true).is_err());
    }
}
