//! The lookups of [`MergeTables`] by bytes: a piece's token (its rank under the rank-based
//! rule), the ranks of pairs of adjacent symbols, and the prefetch hints that ask for the
//! lines a lookup will read before it reads them.

use std::hash::BuildHasher;

use super::filter::{filter_bit, may_hold, FILTER_WORDS};
use super::prefetch::prefetch;
use super::token_index::{hash_key, ShortKey, TokenIndex};
use super::{MergeTables, Rank, NO_RANK};

impl MergeTables {
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
    pub(super) fn hash(&self, key: &ShortKey) -> u64 {
        hash_key(self.seeds, key)
    }

    /// Whether the filter lets `hash` through (some token has its filter bit).
    #[inline(always)]
    pub(super) fn may_hold(&self, hash: u64) -> bool {
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
    pub(super) fn request_key_lines(&self, key: &ShortKey) {
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
}
