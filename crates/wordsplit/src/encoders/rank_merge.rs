//! `rank-merge`: HF `tokenizers`' character-level BPE with `byte_fallback`: each character is
//! a symbol, or each of its UTF-8 bytes when it is no token; then the pair of lowest merge
//! rank merges, the leftmost on ties; with `ignore_merges` a piece that is a token is that
//! token. What it shares with `score-merge` (the sweep, the pair memos, the characters' ids)
//! is in [`super::sentencepiece`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::code_points::utf8_width;
use crate::encoders::Encoder;
use crate::error::Error;
use crate::spanners::sentencepiece::SentencePieceModel;
use crate::spec::PipelineSpec;
use crate::tables::{MergeTables, Rank, NO_RANK};

use super::sentencepiece::{
    byte_pieces, live_symbols, merges, sweep_merge, with_memo, CharIds, HeapEntry, NEXT_ENCODER_ID,
    NONE, SWEEP_SYMBOLS,
};

/// HF's character-level BPE with byte fallback, by merge rank (see the module docs).
pub struct RankMerge {
    /// Names its pair memos.
    id: u64,
    tables: Arc<MergeTables>,
    byte_pieces: [u32; 256],
    char_ids: CharIds,
    /// `ignore_merges`: a piece that is a token is that token.
    whole: bool,
}

impl RankMerge {
    /// The encoder of a vocabulary's tables and its SentencePiece pipeline.
    pub fn new(tables: Arc<MergeTables>, spec: &PipelineSpec) -> Result<Self, Error> {
        let model = SentencePieceModel::of(spec)?;
        merges(&tables, "rank-merge")?;
        Ok(Self {
            id: NEXT_ENCODER_ID.fetch_add(1, Ordering::Relaxed),
            byte_pieces: byte_pieces(&tables),
            char_ids: CharIds::new(&tables),
            tables,
            whole: model.ignore_merges,
        })
    }

    /// Whether token `id` has no text (a byte piece of a byte 0x80-0xFF): no merge makes a
    /// token from it, as HF joins the tokens' texts.
    #[inline]
    fn textless(&self, id: u32) -> bool {
        matches!(self.tables.token(id), Some(&[b]) if b >= 0x80)
    }

    /// The ids of one piece (valid UTF-8), appended to `out`.
    pub fn encode(&self, piece: &[u8], out: &mut Vec<u32>) {
        let tables = &*self.tables;
        if self.whole {
            if let Some(id) = tables.rank_of(piece) {
                out.push(id);
                return;
            }
        }
        if !self.sweep(piece, out) {
            self.merge_by_heap(piece, out);
        }
    }

    /// The merge of any piece (valid UTF-8) with a heap of its pairs, appended to `out`.
    fn merge_by_heap(&self, piece: &[u8], out: &mut Vec<u32>) {
        let tables = &*self.tables;
        let merges = tables.merges().expect("checked by new");
        // Symbol k has id ids[k] and covers the bytes starts[k]..ends[k]; next/prev link the
        // live ones, alive[k] says whether it was not absorbed.
        let (mut ids, mut starts, mut ends) = (Vec::new(), Vec::new(), Vec::new());
        let text = std::str::from_utf8(piece).unwrap_or_default();
        for (i, c) in text.char_indices() {
            let width = c.len_utf8();
            let id = self.char_ids.get(tables, piece, i, width);
            if id != NONE {
                ids.push(id);
                starts.push(i as u32);
                ends.push((i + width) as u32);
            } else {
                for (j, &b) in piece.iter().enumerate().skip(i).take(width) {
                    ids.push(self.byte_pieces[b as usize]);
                    starts.push(j as u32);
                    ends.push(j as u32 + 1);
                }
            }
        }
        let n = ids.len() as u32;
        let mut next: Vec<u32> = (1..=n).collect();
        let mut prev: Vec<u32> = (0..n).map(|k| k.wrapping_sub(1)).collect();
        let mut alive = vec![true; n as usize];
        let mut heap: BinaryHeap<HeapEntry> = BinaryHeap::with_capacity(n as usize);
        let propose =
            |heap: &mut BinaryHeap<_>, next: &[u32], ids: &[u32], ends: &[u32], left: u32| {
                let right = next[left as usize];
                if right >= n {
                    return;
                }
                let pair = (ids[left as usize], ids[right as usize]);
                let Some(&rank) = merges.get(&pair) else {
                    return;
                };
                if self.textless(pair.0) || self.textless(pair.1) {
                    return;
                }
                let span = &piece[starts[left as usize] as usize..ends[right as usize] as usize];
                if let Some(made) = tables.rank_of(span) {
                    heap.push(Reverse((rank, left, pair.0, pair.1, made)));
                }
            };
        for k in 0..n.saturating_sub(1) {
            propose(&mut heap, &next, &ids, &ends, k);
        }
        while let Some(Reverse((_, left, left_id, right_id, made))) = heap.pop() {
            let right = if alive[left as usize] {
                next[left as usize]
            } else {
                n
            };
            // Stale if the left symbol is gone or changed, or its right neighbour did.
            if right >= n || ids[left as usize] != left_id || ids[right as usize] != right_id {
                continue;
            }
            ids[left as usize] = made;
            ends[left as usize] = ends[right as usize];
            alive[right as usize] = false;
            next[left as usize] = next[right as usize];
            if next[left as usize] < n {
                prev[next[left as usize] as usize] = left;
            }
            let before = prev[left as usize];
            if before != NONE {
                propose(&mut heap, &next, &ids, &ends, before);
            }
            propose(&mut heap, &next, &ids, &ends, left);
        }
        out.extend((0..n as usize).filter(|&k| alive[k]).map(|k| ids[k]));
    }
}

impl RankMerge {
    /// The rank of merging the symbols `left` and `right` that cover `span` together, and
    /// the token they make; None when they do not merge.
    #[inline]
    fn pair(&self, left: u32, right: u32, span: &[u8]) -> Option<(Rank, u32)> {
        let rank = *self.tables.merges()?.get(&(left, right))?;
        if self.textless(left) || self.textless(right) {
            return None;
        }
        Some((rank, self.tables.rank_of(span)?))
    }

    /// The merge of a piece of at most [`SWEEP_SYMBOLS`] symbols by sweeps; false (nothing
    /// done) for a longer piece or one whose ranks are past the sweep's keys.
    fn sweep(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        let tables = &*self.tables;
        // Symbol i starts at byte starts[i] and has id ids[i].
        let mut starts = [0u32; SWEEP_SYMBOLS + 1];
        let mut ids = [NONE; SWEEP_SYMBOLS];
        let mut n = 0;
        let mut i = 0;
        while i < piece.len() {
            let width = utf8_width(piece[i]);
            let id = self.char_ids.get(tables, piece, i, width);
            if id != NONE {
                if n == SWEEP_SYMBOLS {
                    return false;
                }
                (starts[n], ids[n]) = (i as u32, id);
                n += 1;
            } else {
                for (j, &b) in piece.iter().enumerate().skip(i).take(width) {
                    if n == SWEEP_SYMBOLS {
                        return false;
                    }
                    (starts[n], ids[n]) = (j as u32, self.byte_pieces[b as usize]);
                    n += 1;
                }
            }
            i += width;
        }
        starts[n] = piece.len() as u32;
        let alive = with_memo(self.id, |memo| {
            let pair = |left: u32, right: u32, start: u32, end: u32| {
                memo.get(left, right, || {
                    let span = &piece[start as usize..end as usize];
                    self.pair(left, right, span).unwrap_or((NO_RANK, NONE))
                })
            };
            sweep_merge(&starts, &mut ids, n, pair)
        });
        let Some(alive) = alive else {
            return false;
        };
        out.extend(live_symbols(&starts, &ids, n, alive).map(|(_, _, id)| id));
        true
    }
}

impl Encoder for RankMerge {
    fn name(&self) -> &str {
        "rank-merge"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        self.encode(piece, out);
        Ok(())
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoders::sentencepiece::tests::{
        encode, pattern, sweep_texts, sweep_vocab, tables,
    };

    #[test]
    fn rank_merge_by_merge_rank_with_byte_fallback_and_ignore_merges() {
        // ids: bytes 0..=255, ▁ 256, a 257, b 258, ab 259, ▁ab 260, ba 261 (no merge makes it)
        let t = tables(
            0,
            &["▁", "a", "b", "ab", "▁ab", "ba"],
            &[("a", "b", 0), ("▁", "ab", 1)],
        );
        let hf = |ignore: bool| {
            pattern(&format!(
                r#""unused":[],"user_defined":[],"semantics":"hf","ignore_merges":{ignore}"#
            ))
        };
        let e = RankMerge::new(t.clone(), &hf(false)).unwrap();
        assert_eq!(encode(&e, "▁abé"), [260, 0xC3, 0xA9]);
        assert_eq!(encode(&e, "ba"), [258, 257]);
        assert_eq!(encode(&e, &"▁ab".repeat(100)), [260; 100]);
        let whole = RankMerge::new(t, &hf(true)).unwrap();
        assert_eq!(encode(&whole, "ba"), [261]);
        assert_eq!(encode(&whole, "▁abé"), [260, 0xC3, 0xA9]);
    }

    #[test]
    fn rank_merge_sweeps_give_the_heaps_ids_on_every_length() {
        let fields = r#""unused":[],"user_defined":[]"#;
        let hf = format!(r#"{fields},"semantics":"hf""#);
        let rank = RankMerge::new(sweep_vocab(), &pattern(&hf)).unwrap();
        for text in sweep_texts() {
            let (mut swept, mut heaped) = (vec![], vec![]);
            rank.encode(text.as_bytes(), &mut swept);
            rank.merge_by_heap(text.as_bytes(), &mut heaped);
            assert_eq!(swept, heaped, "rank-merge {text:?}");
        }
    }
}
