//! `heap-merge`: BPE with a min-heap of adjacent pairs, O(n log n) per piece.
//!
//! Symbols form a linked list over the piece. Each mergeable adjacent pair sits in the heap
//! keyed by (priority, start), so ties go leftmost as the BPE rule says. Merges invalidate
//! neighbouring entries lazily: a popped entry is used only if both of its symbols still
//! have the extents it was pushed with.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::tables::{MergeTables, NO_RANK};

const NONE: u32 = u32::MAX;

pub fn encode(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    // Symbol k (alive iff end[k] != NONE) covers piece[k..end[k]] and has id ids[k].
    let mut end: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|k| k.wrapping_sub(1)).collect();
    let mut ids: Vec<u32> = piece.iter().map(|&b| t.byte_id(b)).collect();
    let mut heap: BinaryHeap<Reverse<(u32, u32, u32, u32)>> = BinaryHeap::with_capacity(n);

    let push = |heap: &mut BinaryHeap<_>, end: &[u32], ids: &[u32], left: u32| {
        let right = end[left as usize];
        if (right as usize) < n {
            let right_end = end[right as usize];
            let rank = t.pair_rank(
                piece,
                left as usize,
                right_end as usize,
                ids[left as usize],
                ids[right as usize],
            );
            if rank != NO_RANK {
                heap.push(Reverse((rank, left, right, right_end)));
            }
        }
    };
    for k in 0..n as u32 - 1 {
        push(&mut heap, &end, &ids, k);
    }
    while let Some(Reverse((rank, left, right, right_end))) = heap.pop() {
        let (l, r) = (left as usize, right as usize);
        // Stale: the left symbol died or grew, or its right neighbour changed.
        if end[l] != right || end[r] != right_end {
            continue;
        }
        end[l] = right_end;
        end[r] = NONE;
        ids[l] = t.merged_id(piece, l, right_end as usize, rank);
        if (right_end as usize) < n {
            prev[right_end as usize] = left;
        }
        if prev[l] != NONE {
            push(&mut heap, &end, &ids, prev[l]);
        }
        push(&mut heap, &end, &ids, left);
    }
    let mut k = 0usize;
    while k < n {
        out.push(ids[k]);
        k = end[k] as usize;
    }
}
