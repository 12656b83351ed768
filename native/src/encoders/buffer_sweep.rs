//! `buffer-sweep`: after every merge, sweep the buffer for the lowest-priority adjacent pair
//! (leftmost on ties) and merge it. O(n²) but with tiny constants, so it is the fastest
//! choice for the short pieces of ordinary text (it is tiktoken's `_byte_pair_merge`).

use crate::vocab::{VocabTables, NO_RANK};

pub fn encode(t: &VocabTables, piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    // Symbol i covers piece[starts[i]..starts[i + 1]]; ranks[i] merges symbols i and i + 1.
    let mut starts: Vec<usize> = (0..=n).collect();
    let mut ids: Vec<u32> = piece.iter().map(|&b| t.byte_ids[b as usize]).collect();
    let mut ranks: Vec<u32> = (0..n - 1)
        .map(|i| t.pair_rank(piece, i, i + 2, ids[i], ids[i + 1]))
        .collect();
    loop {
        let mut best = usize::MAX;
        let mut best_rank = NO_RANK;
        for (i, &r) in ranks.iter().enumerate() {
            if r < best_rank {
                best_rank = r;
                best = i;
            }
        }
        if best_rank == NO_RANK {
            break;
        }
        ids[best] = t.merged_id(piece, starts[best], starts[best + 2], best_rank);
        ids.remove(best + 1);
        starts.remove(best + 1);
        ranks.remove(best);
        if best + 1 < ids.len() {
            ranks[best] = t.pair_rank(
                piece,
                starts[best],
                starts[best + 2],
                ids[best],
                ids[best + 1],
            );
        }
        if best > 0 {
            ranks[best - 1] = t.pair_rank(
                piece,
                starts[best - 1],
                starts[best + 1],
                ids[best - 1],
                ids[best],
            );
        }
    }
    out.extend_from_slice(&ids);
}
