//! The sweep of short pieces (up to 128 bytes) in stack buffers, the symbols linked over
//! byte positions, and the requests for the token index's lines it reads.

use crate::tables::{MergeTables, NO_RANK};

use super::ranks::Ranks;
use super::rules::Rule;

/// The sweep for short pieces, with the symbols in a linked list over byte positions: the
/// symbol starting at byte `i` covers `bytes[i..next[i]]`, has id `ids[i]`, and `ranks[i]`
/// is the priority of merging it with the symbol after it, under the rule `R`. A merge
/// unlinks the right symbol and gives its position `NO_RANK`, so nothing is ever moved, and
/// every sweep reads all `N` positions (those past the piece hold `NO_RANK`) with vector
/// instructions; the ranks live in `S` (registers for short pieces, see
/// [`Lanes`](super::lanes::Lanes)). `bytes` is the piece followed by at least `PAD` zero
/// bytes.
#[inline(always)]
pub(super) fn linked<const N: usize, R: Rule, S: Ranks<N>>(
    t: &MergeTables,
    bytes: &[u8],
    n: usize,
    out: &mut Vec<u32>,
) {
    // The links are the same for every piece (and unread past it): constants the compiler
    // stores a vector at a time. The byte loop looks up one pair per byte, the last (the
    // piece's last byte and the padding) then cleared, with no test in the loop.
    let mut next: [u32; N] = std::array::from_fn(|i| i as u32 + 1);
    let mut prev: [u32; N] = std::array::from_fn(|i| (i as u32).wrapping_sub(1));
    let (mut ids, mut first) = ([0u32; N], [NO_RANK; N]);
    // A pair inside a piece of at most N bytes is at most N bytes long. Said so with a `min`
    // (which changes nothing), it lets the compiler drop the lookup's branches on the key's
    // length class: for pieces of up to 8 bytes the key is one word, for up to 16 two.
    let within = |start: usize, end: usize| start + (end - start).min(N);
    let ascii = bytes[..n].is_ascii();
    // Asked only for a piece that is not ASCII: the tables are built on first use.
    match if ascii { None } else { R::char_merges(t) } {
        Some(chars) => {
            // Characters taken whole where that changes nothing (see `crate::char_merges`).
            let mut last: Option<usize> = None;
            let mut i = 0;
            while i < n {
                let len = match chars.at(bytes, i, n) {
                    Some((id, len)) => {
                        ids[i] = id;
                        len
                    }
                    None => {
                        ids[i] = t.byte_id(bytes[i]);
                        1
                    }
                };
                next[i] = (i + len) as u32;
                if let Some(last) = last {
                    prev[i] = last as u32;
                    first[last] = if i - last == 1 && len == 1 {
                        t.byte_pair_rank(bytes[last], bytes[i])
                    } else {
                        R::rank(t, bytes, last, within(last, i + len), ids[last], ids[i])
                    };
                }
                last = Some(i);
                i += len;
            }
        }
        None => {
            for i in 0..n {
                ids[i] = t.byte_id(bytes[i]);
                first[i] = t.byte_pair_rank(bytes[i], bytes[i + 1]);
            }
            if n > 0 {
                first[n - 1] = NO_RANK;
            }
        }
    }
    if R::ASKS_INDEX && N <= 16 && ascii {
        ask_ahead(t, bytes, n);
    }
    let mut ranks = S::from_array(&first);
    loop {
        let (best, best_rank) = ranks.lowest();
        if best_rank == NO_RANK {
            break;
        }
        let right = next[best] as usize;
        let end = next[right] as usize;
        ids[best] = R::merged(t, bytes, best, end, best_rank);
        next[best] = end as u32;
        ranks.set(right, NO_RANK);
        // The pairs either side of the merged symbol; when both exist (most rounds), both
        // lookups are asked for together.
        let p = prev[best] as usize;
        if end < n {
            prev[end] = best as u32;
            let after = (best, within(best, next[end] as usize), ids[best], ids[end]);
            if best > 0 {
                let before = (p, within(p, end), ids[p], ids[best]);
                let (left_rank, right_rank) = R::ranks_around(t, bytes, before, after);
                ranks.set(p, left_rank);
                ranks.set(best, right_rank);
            } else {
                ranks.set(best, R::rank(t, bytes, after.0, after.1, after.2, after.3));
            }
        } else {
            ranks.set(best, NO_RANK);
            if best > 0 {
                ranks.set(p, R::rank(t, bytes, p, within(p, end), ids[p], ids[best]));
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}

/// The longest pairs whose index lines [`ask_ahead`] requests: longer runs add requests for
/// pairs the rounds seldom reach.
const ASK_AHEAD_LEN: usize = 8;

/// Requests the token index's lines (filter word and home slot) of every run of 3 to
/// [`ASK_AHEAD_LEN`] bytes of the piece `bytes[..n]` before its rounds: any pair of up to 8
/// bytes a later round asks about is one of them, and a round can only ask once the round
/// before has merged, so in a first pass, where the index's lines are not in the CPU's
/// caches, the rounds waited on them one after another. Asked together they arrive
/// together. Only for pieces of up to 16 ASCII bytes (most of prose's and code's new
/// pieces): multilingual text's pieces merge more and are mostly not ASCII, and asking for
/// every piece made its passes slower.
#[inline(always)]
fn ask_ahead(t: &MergeTables, bytes: &[u8], n: usize) {
    for len in 3..=ASK_AHEAD_LEN.min(n) {
        for start in 0..=n - len {
            t.prefetch_rank(bytes, start, start + len);
        }
    }
}
