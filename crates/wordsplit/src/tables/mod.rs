//! MergeTables: the one precomputed dictionary every native encoder of a vocabulary reads.
//!
//! Mirrors `wordsplit/tables.py` (MergeTables): BPE token bytes → id, the optional
//! pair-ranked merge table (HF files whose merge list is not in merged-id order), and every
//! id's bytes for decoding. All token bytes live in one arena. The index by bytes has three
//! parts: tokens of up to 8 bytes (most of them) and of 9 to 16 bytes are packed inline as
//! fixed-size keys in two open-addressing tables, so a lookup reads one slot (usually one
//! cache line, nothing to follow); longer ones are ids in a table that hashes the arena's
//! bytes.
//! Built once per vocabulary and shared (`Arc`) by all encoders and threads.
//!
//! The parts, a file each: [`MergeTables`] and what it hands out (here); its construction
//! and the checks of a vocabulary's parts (`build`); its lookups by bytes (`lookup`); the
//! packed keys and the index as plain values ([`TokenIndex`], `token_index`); the slot
//! tables of the two length classes (`probe_table`); their filters (`filter`); the ranks of
//! pairs of low ids (`PairGrid`, `pair_grid`); values kept beside the slots (`Beside`,
//! `beside`); prefetch hints ([`prefetch()`], `prefetch`).

mod beside;
mod build;
mod filter;
mod lookup;
mod pair_grid;
mod prefetch;
mod probe_table;
mod token_index;

#[cfg(test)]
pub(crate) mod tests;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use hashbrown::hash_table::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::char_merges::CharMerges;
use crate::encoders::backtrack_tables::BacktrackTables;
use crate::pipeline::PieceSeeds;

pub(crate) use beside::Beside;
pub use build::TablesError;
use filter::{FILTER_WORDS, LONG_FILTER_WORDS};
pub(crate) use pair_grid::PairGrid;
pub use prefetch::{prefetch, prefetch_address};
use probe_table::{MidSlot, ProbeTable, SmallSlot};
pub use token_index::{ShortKey, TokenIndex};

/// A merge priority or token id; `u32::MAX` is "never merges".
pub type Rank = u32;
pub const NO_RANK: Rank = Rank::MAX;
/// The span of an id no token uses, and the id of a byte no token spells.
const UNUSED: u32 = u32::MAX;

/// A vocabulary's tables (see the module docs). Its fields are private to this module's
/// files: the encoders read them through methods, and those the merge loops call per byte
/// or per pair are `#[inline(always)]`, so a read through them costs what the field's did.
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
    /// One bit per hash class of the tokens of 1 to 16 bytes (`filter`): most pieces that
    /// are not tokens (most of the pairs a merge loop asks about, and the whole-piece lookup
    /// of a word that needs merging) get their answer from this small table without probing
    /// the slots, where a miss runs on to the next empty slot. Indexed by the hash's top bits
    /// (the tables' slots by its low bits); its fixed size makes the index a shift with no
    /// bounds check.
    filter: Box<[u64; FILTER_WORDS]>,
    /// Random per table: the slots a vocabulary file's tokens land in cannot be chosen by
    /// whoever wrote it (colliding on purpose would make building the index quadratic).
    seeds: [u64; 2],
    /// The longer BPE token ids, found by hashing their bytes in the arena.
    long: HashTable<u32>,
    /// One bit per hash class of the longer tokens, as `filter` is for the shorter ones:
    /// most pieces of more than 16 bytes that are asked about (runs of spaces and rules of
    /// dashes, the long words a merge loop works on) are not tokens, and this table answers
    /// for them without probing `long`, a cache miss.
    long_filter: Box<[u64; LONG_FILTER_WORDS]>,
    hasher: FxBuildHasher,
    /// `(left id, right id)` → merge rank, for pair-ranked vocabularies only.
    merges: Option<FxHashMap<(u32, u32), Rank>>,
    /// Every merge priority is below this: the token ids (rank-based) or the merge list's
    /// ranks (pair-ranked). Buffer-sweep packs a rank and its position into one word when
    /// the ranks leave it room.
    rank_bound: u64,
    /// A piece that is itself a token is one lookup (tiktoken; HF with ignore_merges).
    whole_piece_lookup: bool,
    /// The id of each single byte (`UNUSED` for a byte no token spells).
    byte_ids: [u32; 256],
    /// Whether some byte has no token ([`Self::missing_bytes`]): only then does the
    /// pipeline look for such bytes in a piece.
    lacks_bytes: bool,
    /// The priority of merging byte `a` with byte `b`, at `a << 8 | b`: every piece starts as
    /// bytes, so its first round of pair lookups is one read each from this 256 KB table.
    /// A fixed-size array, so that indexing it by a byte pair needs no bounds check.
    byte_pairs: Box<[Rank; 1 << 16]>,
    /// The backtrack encoder's tables, built on first use.
    backtrack: OnceLock<Result<BacktrackTables, String>>,
    /// Rank-based vocabularies: the ranks of the pairs of tokens with ids below
    /// [`GRID_IDS`](pair_grid::GRID_IDS) that merges have asked about.
    pair_grid: PairGrid,
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

impl MergeTables {
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

    /// `(left id, right id)` → merge rank for a pair-ranked vocabulary (an HF merge list not
    /// in merged-id order); `None` under the rank-based rule, where a token's id is its rank.
    #[inline(always)]
    pub fn merges(&self) -> Option<&FxHashMap<(u32, u32), Rank>> {
        self.merges.as_ref()
    }

    /// Every merge priority is below this: the token ids (rank-based) or the merge list's
    /// ranks (pair-ranked).
    #[inline(always)]
    pub fn rank_bound(&self) -> u64 {
        self.rank_bound
    }

    /// Whether a piece that is itself a token is that token, found in one lookup (tiktoken;
    /// HF with ignore_merges).
    #[inline(always)]
    pub fn whole_piece_lookup(&self) -> bool {
        self.whole_piece_lookup
    }

    /// The id of the token of the single byte `b`, or `u32::MAX` when no token spells it
    /// ([`Self::has_byte`]).
    #[inline(always)]
    pub fn byte_id(&self, b: u8) -> u32 {
        self.byte_ids[usize::from(b)]
    }

    /// Whether some byte has no token ([`Self::missing_bytes`]): only then does the
    /// pipeline look for such bytes in a piece.
    #[inline(always)]
    pub fn lacks_bytes(&self) -> bool {
        self.lacks_bytes
    }

    /// The ranks of pairs of low ids that merges have asked about ([`PairGrid`]); it has no
    /// cells in a pair-ranked vocabulary.
    #[inline(always)]
    pub(crate) fn pair_grid(&self) -> &PairGrid {
        &self.pair_grid
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

    /// The characters of two and three bytes a merge loop may take whole from the start
    /// ([`CharMerges`]), for rank-based vocabularies (`None` for pair-ranked ones): built on
    /// first use, by the first merge of a piece that is not ASCII (768 KB, milliseconds to
    /// build), so that a tokenizer that never meets one never pays for them.
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
