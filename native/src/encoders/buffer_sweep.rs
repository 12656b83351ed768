//! `buffer-sweep`: after every merge, sweep the buffer for the lowest-priority adjacent pair
//! (leftmost on ties) and merge it. O(n²) but with tiny constants, so it is the fastest
//! choice for the short pieces of ordinary text (it is tiktoken's `_byte_pair_merge`).

use crate::tables::{MergeTables, NO_RANK};

/// Pieces up to this length work in stack buffers (no allocation); nearly all pieces do.
const STACK_PIECE: usize = 128;

pub fn encode(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    if n <= STACK_PIECE {
        let (mut starts, mut ids, mut ranks) = (
            [0u32; STACK_PIECE + 1],
            [0u32; STACK_PIECE],
            [0u32; STACK_PIECE],
        );
        sweep(
            t,
            piece,
            &mut starts[..=n],
            &mut ids[..n],
            &mut ranks[..n - 1],
            out,
        );
    } else {
        let (mut starts, mut ids, mut ranks) =
            (vec![0u32; n + 1], vec![0u32; n], vec![0u32; n - 1]);
        sweep(t, piece, &mut starts, &mut ids, &mut ranks, out);
    }
}

/// The sweep over caller-provided buffers: symbol i covers piece[starts[i]..starts[i + 1]]
/// and has id ids[i]; ranks[i] is the priority of merging symbols i and i + 1. `len` counts
/// the live symbols; a merge shifts the tails left by one.
fn sweep(
    t: &MergeTables,
    piece: &[u8],
    starts: &mut [u32],
    ids: &mut [u32],
    ranks: &mut [u32],
    out: &mut Vec<u32>,
) {
    let mut len = piece.len();
    for (i, &b) in piece.iter().enumerate() {
        starts[i] = i as u32;
        ids[i] = t.byte_ids[b as usize];
    }
    starts[len] = len as u32;
    for (rank, pair) in ranks.iter_mut().zip(piece.windows(2)) {
        *rank = t.byte_pair_rank(pair[0], pair[1]);
    }
    loop {
        let (mut best, mut best_rank) = (0, NO_RANK);
        for (i, &r) in ranks[..len - 1].iter().enumerate() {
            if r < best_rank {
                best_rank = r;
                best = i;
            }
        }
        if best_rank == NO_RANK {
            break;
        }
        ids[best] = t.merged_id(
            piece,
            starts[best] as usize,
            starts[best + 2] as usize,
            best_rank,
        );
        ids.copy_within(best + 2..len, best + 1);
        starts.copy_within(best + 2..=len, best + 1);
        ranks.copy_within(best + 1..len - 1, best);
        len -= 1;
        let span = |i: usize| (starts[i] as usize, starts[i + 2] as usize);
        if best + 1 < len {
            let (s, e) = span(best);
            ranks[best] = t.pair_rank(piece, s, e, ids[best], ids[best + 1]);
        }
        if best > 0 {
            let (s, e) = span(best - 1);
            ranks[best - 1] = t.pair_rank(piece, s, e, ids[best - 1], ids[best]);
        }
    }
    out.extend_from_slice(&ids[..len]);
}
