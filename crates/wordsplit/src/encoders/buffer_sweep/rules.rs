//! How a vocabulary ranks a pair of adjacent symbols: by its bytes' token id (rank-based,
//! tiktoken) or from its merge list (pair-ranked), decided once per piece.

use crate::char_merges::CharMerges;
use crate::tables::MergeTables;

/// How a vocabulary ranks a pair of adjacent symbols, decided once per piece.
pub(super) trait Rule {
    /// Whether its ranks come from the token index (by the pair's bytes), whose lines
    /// `ask_ahead` can request before the rounds.
    const ASKS_INDEX: bool;
    /// The characters a piece may start with whole, under this rule.
    fn char_merges(t: &MergeTables) -> Option<&CharMerges>;
    /// The priority of merging `bytes[start..mid]` and `bytes[mid..end]` (ids `left` and
    /// `right`), or `NO_RANK`.
    fn rank(t: &MergeTables, bytes: &[u8], start: usize, end: usize, left: u32, right: u32) -> u32;
    /// [`Self::rank`] of the pairs either side of a merge, `bytes[l.0..l.1]` (split where the
    /// ids `l.2` and `l.3` meet) and `bytes[r.0..r.1]` (ids `r.2`, `r.3`): both lookups are
    /// asked for together, so the second does not wait behind the first.
    fn ranks_around(t: &MergeTables, bytes: &[u8], l: Pair, r: Pair) -> (u32, u32);
    /// The id the merge of `bytes[start..end]` at priority `rank` makes.
    fn merged(t: &MergeTables, bytes: &[u8], start: usize, end: usize, rank: u32) -> u32;
}

/// A pair of adjacent symbols: the start and end of its bytes, and the two symbols' ids.
pub(super) type Pair = (usize, usize, u32, u32);

/// Rank-based (tiktoken): a pair's priority is the id of its bytes' token, and that id is
/// what the merge makes.
pub(super) struct RankBased;

impl Rule for RankBased {
    const ASKS_INDEX: bool = true;
    #[inline(always)]
    fn char_merges(t: &MergeTables) -> Option<&CharMerges> {
        t.char_merges()
    }
    #[inline(always)]
    fn rank(t: &MergeTables, bytes: &[u8], start: usize, end: usize, left: u32, right: u32) -> u32 {
        let grid = t.pair_grid();
        match grid.get(left, right) {
            Some(rank) => rank,
            None => grid.keep(left, right, t.rank_padded(bytes, start, end)),
        }
    }
    /// Each pair from the grid of pairs of frequent tokens ([`crate::tables::PairGrid`]) if
    /// it holds it, else from the index (and then kept in the grid).
    #[inline(always)]
    fn ranks_around(t: &MergeTables, bytes: &[u8], l: Pair, r: Pair) -> (u32, u32) {
        let grid = t.pair_grid();
        match (grid.get(l.2, l.3), grid.get(r.2, r.3)) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => (a, grid.keep(r.2, r.3, t.rank_padded(bytes, r.0, r.1))),
            (None, Some(b)) => (grid.keep(l.2, l.3, t.rank_padded(bytes, l.0, l.1)), b),
            (None, None) => {
                let (a, b) = t.pair_ranks_padded(bytes, (l.0, l.1), (r.0, r.1));
                (grid.keep(l.2, l.3, a), grid.keep(r.2, r.3, b))
            }
        }
    }
    #[inline(always)]
    fn merged(_: &MergeTables, _: &[u8], _: usize, _: usize, rank: u32) -> u32 {
        rank
    }
}

/// Pair-ranked (an HF merge list not in merged-id order).
pub(super) struct PairRanked;

impl Rule for PairRanked {
    const ASKS_INDEX: bool = false;
    #[inline(always)]
    fn char_merges(_: &MergeTables) -> Option<&CharMerges> {
        None
    }
    #[inline(always)]
    fn rank(t: &MergeTables, bytes: &[u8], start: usize, end: usize, left: u32, right: u32) -> u32 {
        t.pair_rank(bytes, start, end, left, right)
    }
    #[inline(always)]
    fn ranks_around(t: &MergeTables, bytes: &[u8], l: Pair, r: Pair) -> (u32, u32) {
        (
            t.pair_rank(bytes, l.0, l.1, l.2, l.3),
            t.pair_rank(bytes, r.0, r.1, r.2, r.3),
        )
    }
    #[inline(always)]
    fn merged(t: &MergeTables, bytes: &[u8], start: usize, end: usize, rank: u32) -> u32 {
        t.merged_id(bytes, start, end, rank)
    }
}
