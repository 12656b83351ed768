//! The sweep of long pieces (over 128 bytes) in heap buffers, over blocks of ranks and their
//! minima: O(n·√n) where a sweep of every rank is O(n²).

use crate::tables::{MergeTables, NO_RANK};

use super::rules::Rule;
use super::PAD;

/// The sweep for long pieces (heap buffers), over blocks: symbol `i` covers
/// `piece[i..next[i]]` and keeps its place when it merges (its right neighbour's slot goes
/// dead), `ranks[i]` is the priority of merging it with the next symbol, and each block of
/// `block` slots keeps the lowest rank in it. A round reads the blocks' minima, then one
/// block; after the merge the two new pairs are looked up together ([`Rule::ranks_around`])
/// and the merged symbol's block's minimum is computed again (another block's only where
/// its old minimum changed): about `n / block + 2 * block` ranks a round, `3 * sqrt(n)`,
/// where a sweep of every rank (shifting the tails left after each merge) read `n`. The
/// lowest rank found is still the first lowest of the piece, as a full sweep finds it.
pub(super) fn blocked<R: Rule>(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    // The lookups read keys of up to 16 bytes with two 8-byte loads ([`PAD`]).
    let mut bytes = Vec::with_capacity(n + PAD);
    bytes.extend_from_slice(piece);
    bytes.resize(n + PAD, 0);
    // Blocks of about sqrt(n) slots (a power of two, at least 16): the two reads of a round
    // balance.
    let block = 1usize << (n.isqrt().max(16).ilog2());
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    let mut ids: Vec<u32> = piece.iter().map(|&b| t.byte_id(b)).collect();
    let mut ranks: Vec<u32> = piece
        .windows(2)
        .map(|pair| t.byte_pair_rank(pair[0], pair[1]))
        .chain([NO_RANK])
        .collect();
    let block_min = |ranks: &[u32], b: usize| {
        ranks[b * block..((b + 1) * block).min(n)]
            .iter()
            .fold(NO_RANK, |m, &r| m.min(r))
    };
    let mut mins: Vec<u32> = (0..n.div_ceil(block))
        .map(|b| block_min(&ranks, b))
        .collect();
    // The minimum of block `b` after slot `slot` of it changed from `old` (the new rank is
    // in `ranks`): computed again only when `old` may have been its only minimum.
    let update = |mins: &mut [u32], ranks: &[u32], slot: usize, old: u32| {
        let b = slot / block;
        if ranks[slot] < mins[b] {
            mins[b] = ranks[slot];
        } else if old == mins[b] && ranks[slot] != old {
            mins[b] = block_min(ranks, b);
        }
    };
    loop {
        let lowest = mins.iter().fold(NO_RANK, |m, &r| m.min(r));
        if lowest == NO_RANK {
            break;
        }
        // The first block holding it, and its first slot there: the leftmost lowest pair.
        let b = mins.iter().position(|&m| m == lowest).unwrap_or(0);
        let i = b * block
            + ranks[b * block..]
                .iter()
                .position(|&r| r == lowest)
                .unwrap_or(0);
        let j = next[i] as usize;
        let k = next[j] as usize;
        let merged = R::merged(t, &bytes, i, k, lowest);
        ids[i] = merged;
        next[i] = k as u32;
        let left_of = (prev[i] != u32::MAX).then_some(prev[i] as usize);
        // The pairs either side of the merged symbol, asked for together.
        let (left, right) = match (left_of, k < n) {
            (Some(p), true) => {
                let right_end = next[k] as usize;
                R::ranks_around(
                    t,
                    &bytes,
                    (p, k, ids[p], merged),
                    (i, right_end, merged, ids[k]),
                )
            }
            (Some(p), false) => (R::rank(t, &bytes, p, k, ids[p], merged), NO_RANK),
            (None, true) => (
                NO_RANK,
                R::rank(t, &bytes, i, next[k] as usize, merged, ids[k]),
            ),
            (None, false) => (NO_RANK, NO_RANK),
        };
        if k < n {
            prev[k] = i as u32;
        }
        let old_j = std::mem::replace(&mut ranks[j], NO_RANK);
        ranks[i] = right;
        // The left neighbour and its rank before.
        let left_changed = left_of.map(|p| (p, std::mem::replace(&mut ranks[p], left)));
        // Slot `i` held its block's minimum: that block is computed again; the others only
        // when what changed there was theirs.
        mins[b] = block_min(&ranks, b);
        if j / block != b {
            update(&mut mins, &ranks, j, old_j);
        }
        if let Some((p, old_p)) = left_changed {
            if p / block != b {
                update(&mut mins, &ranks, p, old_p);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}
