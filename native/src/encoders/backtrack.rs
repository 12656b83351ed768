//! `backtrack`: the O(n) BPE of GitHub's `bpe` crate (rust-gems, crates/bpe), mirroring
//! `wordsplit/encoders/backtrack.py`.
//!
//! Walk the piece taking the longest matching token; keep it only if an encoding may still
//! end where it ends and BPE would leave it next to the previous token
//! ([`BacktrackTables::is_valid_pair`]); else try the next shorter prefix token, and when
//! none is left drop the previous token and mark its end as a dead end. A BPE encoding is
//! exactly a token sequence whose adjacent pairs are all valid, so this finds it.

use aho_corasick::{AhoCorasick, AhoCorasickKind, Anchored, Input, MatchKind, StartKind};
use rustc_hash::FxHashMap;

use crate::vocab::VocabTables;

const NONE: u32 = u32::MAX;

/// The derived tables of the `bpe` crate; needs rank-based merges (priority = id).
pub struct BacktrackTables {
    token_len: Vec<u32>,
    next_prefix: Vec<u32>,
    split: Vec<(u32, u32)>,
    pair_lookup: FxHashMap<(u32, u32), u32>,
    longest: AhoCorasick,
    pattern_ids: Vec<u32>,
}

impl BacktrackTables {
    pub fn new(t: &VocabTables) -> Result<Self, String> {
        if t.merges.is_some() {
            return Err(
                "the backtrack encoder needs merges ordered by merged id; this vocabulary is \
                        pair-ranked, use encoder='heap-merge'"
                    .into(),
            );
        }
        let n = t.n_vocab();
        let mut by_id: Vec<(u32, &[u8])> = t
            .bpe_ids()
            .map(|id| (id, t.token(id).expect("a BPE id has bytes")))
            .collect();
        by_id.sort_unstable_by_key(|&(id, _)| id);
        let mut token_len = vec![0u32; n];
        let mut next_prefix = vec![NONE; n];
        for &(id, piece) in &by_id {
            token_len[id as usize] = piece.len() as u32;
            next_prefix[id as usize] = (1..piece.len())
                .rev()
                .find_map(|k| t.rank_of(&piece[..k]))
                .unwrap_or(NONE);
        }
        let mut tables = Self {
            token_len,
            next_prefix,
            split: (0..n as u32).map(|i| (i, i)).collect(),
            pair_lookup: FxHashMap::default(),
            longest: AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .start_kind(StartKind::Anchored)
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(by_id.iter().map(|&(_, piece)| piece))
                .map_err(|e| format!("cannot build the longest-match automaton: {e}"))?,
            pattern_ids: by_id.iter().map(|&(id, _)| id).collect(),
        };
        // Reverse-engineer each token's last merge, in rank order (byte_pair_encoding.rs).
        for &(id, piece) in &by_id {
            let mut first = tables.next_prefix[id as usize];
            while first != NONE {
                let rest = &piece[tables.token_len[first as usize] as usize..];
                if let Some(second) = t.rank_of(rest) {
                    if first < id && second < id && tables.is_valid_pair(first, second) {
                        tables.pair_lookup.insert((first, second), id);
                        tables.split[id as usize] = (first, second);
                        break;
                    }
                }
                first = tables.next_prefix[first as usize];
            }
        }
        Ok(tables)
    }

    /// Would BPE leave `left` and `right` adjacent and unmerged? Unwinds both tokens' merges
    /// from the last one back and checks that no pair across the boundary merges first.
    fn is_valid_pair(&self, mut left: u32, mut right: u32) -> bool {
        let mut limit = u32::MAX;
        loop {
            if let Some(&combined) = self.pair_lookup.get(&(left, right)) {
                if combined < limit {
                    return false;
                }
            }
            if left > right {
                limit = left;
                left = self.split[left as usize].1;
                if left == limit {
                    limit = right + 1;
                    right = self.split[right as usize].0;
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = self.split[right as usize].0;
                if right + 1 == limit {
                    limit = left;
                    left = self.split[left as usize].1;
                    if left == limit {
                        return true;
                    }
                }
            }
        }
    }

    fn longest_match(&self, text: &[u8]) -> u32 {
        self.longest
            .find(Input::new(text).anchored(Anchored::Yes))
            .map_or(NONE, |m| self.pattern_ids[m.pattern().as_usize()])
    }
}

pub fn encode(t: &VocabTables, piece: &[u8], out: &mut Vec<u32>) {
    let bt = t.backtrack();
    let base = out.len();
    // reachable[p]: an encoding of piece[..p] may still end at p (cleared at dead ends).
    let mut reachable = vec![true; piece.len() + 1];
    let mut pos = 0usize;
    let mut token = bt.longest_match(piece);
    while token != NONE {
        let last = if out.len() > base {
            out[out.len() - 1]
        } else {
            NONE
        };
        loop {
            let end = pos + bt.token_len[token as usize] as usize;
            if reachable[end] && (last == NONE || bt.is_valid_pair(last, token)) {
                out.push(token);
                pos = end;
                token = if pos < piece.len() {
                    bt.longest_match(&piece[pos..])
                } else {
                    NONE
                };
                break;
            }
            let shorter = bt.next_prefix[token as usize];
            if shorter != NONE {
                token = shorter;
                continue;
            }
            // No token fits here: undo the previous one and never end there again.
            reachable[pos] = false;
            out.pop();
            pos -= bt.token_len[last as usize] as usize;
            token = last;
            break;
        }
    }
}
