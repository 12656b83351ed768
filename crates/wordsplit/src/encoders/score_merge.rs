//! `score-merge`: SentencePiece's BPE (`bpe_model.cc`). The symbols start as the
//! characters of the piece; two adjacent symbols merge when together they spell a piece, the
//! pair of highest score first (the vocabulary's pair-ranked table holds that order: rank 0
//! is the highest score), the leftmost on ties. Then each symbol is its id: an UNUSED piece is
//! split back into the two symbols it was last proposed from, a symbol that is no piece is
//! its UTF-8 bytes as byte pieces (byte fallback) or, without byte fallback, the unknown piece
//! (a run of such symbols one unknown piece), a one-character symbol that is a control
//! piece's text is that piece. A character that is no piece still merges where pieces hold
//! it: such a model carries its scores, which rank its pieces, and such a character has a
//! hidden id past the vocabulary, unknown when it is left alone. What it
//! shares with `rank-merge` (the sweep, the pair memos, the characters' ids) is in
//! [`super::sentencepiece`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::code_points::utf8_width;
use crate::encoders::Encoder;
use crate::error::Error;
use crate::spanners::sentencepiece::SentencePieceModel;
use crate::spec::PipelineSpec;
use crate::tables::{Beside, MergeTables, Rank, NO_RANK};

use super::sentencepiece::{
    byte_pieces, id_of, live_symbols, merges, sweep_merge, with_memo, CharIds, HeapEntry,
    PieceCuts, NEXT_ENCODER_ID, NONE, SWEEP_SYMBOLS,
};

/// SentencePiece's BPE merge with byte fallback (see the module docs).
pub struct ScoreMerge {
    /// Names its pair memos.
    id: u64,
    tables: Arc<MergeTables>,
    /// The merge rank of each piece a merge makes (`NO_RANK` for the others): two adjacent
    /// symbols merge exactly when their joined text is such a piece (the vocabulary's table
    /// lists every split of each piece into two pieces, at the piece's rank), so a pair is
    /// one lookup of its text, which also gives the piece it makes. Kept beside the token
    /// index's slots for pieces of up to 16 bytes and read with the slot, so the two reads
    /// wait together; in `long_rank` for the longer ones.
    rank_beside: Beside,
    long_rank: FxHashMap<u32, Rank>,
    byte_pieces: [u32; 256],
    char_ids: CharIds,
    /// The user-defined pieces: a piece that is one is its id (the spanner cuts them out).
    user_defined: FxHashMap<Box<[u8]>, u32>,
    /// The control pieces of one character: such a final symbol is that piece.
    reserved: FxHashMap<char, u32>,
    /// The model's UNUSED pieces, split back after merging (sentencepiece's rule; llama.cpp's
    /// files keep one a merge made, and their model lists none).
    unused: FxHashSet<u32>,
    /// Ids from here on are no piece: [`NONE`] and the hidden ids of characters.
    n_vocab: u32,
    /// A symbol left that is no piece is its byte pieces; else `unk`, one per run.
    byte_fallback: bool,
    /// The unknown piece ([`NONE`]: none, with byte fallback).
    unk: u32,
    /// Where a piece may be cut (with byte fallback only: without it, a cut between two
    /// symbols that are no piece would make two unknown pieces of their run).
    cuts: Option<PieceCuts>,
}

impl ScoreMerge {
    /// The encoder of a vocabulary's tables, its SentencePiece pipeline, its special tokens
    /// `(text, id)` (the control and unknown pieces) and, for a model whose pieces hold
    /// characters that are no piece, the scores of its pieces by id (which rank them where the
    /// pair-ranked table cannot: a piece with no split into two pieces).
    pub fn new(
        tables: Arc<MergeTables>,
        spec: &PipelineSpec,
        specials: &[(String, u32)],
        scores: Option<&[f64]>,
    ) -> Result<Self, Error> {
        let model = SentencePieceModel::of(spec)?;
        let pairs = merges(&tables, "score-merge")?;
        let mut char_ids = CharIds::new(&tables);
        let piece_rank = match scores {
            Some(scores) => score_ranks(&tables, scores, &mut char_ids)?,
            None => pair_ranks(&tables, pairs),
        };
        let unk = specials
            .iter()
            .find(|(text, _)| *text == model.unk_token)
            .map_or(NONE, |&(_, id)| id);
        if unk == NONE && !model.byte_fallback {
            return Err(Error::VocabFormat(format!(
                "the model's unk_token {:?} is not one of its special tokens (a model without \
                 byte fallback needs it)",
                model.unk_token
            )));
        }
        let user_defined = model
            .user_defined
            .iter()
            .filter_map(|text| Some((text.as_bytes().into(), tables.rank_of(text.as_bytes())?)))
            .collect();
        let unused = model
            .unused
            .iter()
            .filter_map(|text| tables.rank_of(text.as_bytes()))
            .collect();
        let mut reserved = FxHashMap::default();
        for (text, id) in specials {
            let mut chars = text.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                reserved.insert(c, *id);
            }
        }
        let rank_beside = tables.beside(|id| piece_rank[id as usize]);
        let long_rank = piece_rank
            .iter()
            .enumerate()
            .filter(|&(id, &rank)| {
                rank != NO_RANK && tables.token(id as u32).is_some_and(|t| t.len() > 16)
            })
            .map(|(id, &rank)| (id as u32, rank))
            .collect();
        Ok(Self {
            id: NEXT_ENCODER_ID.fetch_add(1, Ordering::Relaxed),
            rank_beside,
            long_rank,
            byte_pieces: byte_pieces(&tables),
            char_ids,
            n_vocab: tables.n_vocab() as u32,
            cuts: model.byte_fallback.then(|| PieceCuts::of(&tables)),
            tables,
            user_defined,
            reserved,
            unused,
            byte_fallback: model.byte_fallback,
            unk,
        })
    }

    /// The ids of a symbol left that is no piece (`bytes`): its byte pieces, or the unknown
    /// piece unless the symbol before was unknown too (`after_unknown`, set here).
    #[inline]
    fn unknown(&self, bytes: &[u8], after_unknown: &mut bool, out: &mut Vec<u32>) {
        if self.byte_fallback {
            out.extend(bytes.iter().map(|&b| self.byte_pieces[b as usize]));
        } else if !*after_unknown {
            out.push(self.unk);
        }
        *after_unknown = true;
    }

    /// The rank of merging two adjacent symbols whose joined text is `joined`, and the piece
    /// it makes; `(NO_RANK, NONE)` when they do not merge.
    #[inline]
    fn pair(&self, joined: &[u8]) -> (Rank, u32) {
        if joined.len() <= 16 {
            return match self.tables.find_beside(joined, &self.rank_beside) {
                Some((made, rank)) => (rank, made),
                None => (NO_RANK, NONE),
            };
        }
        match self.tables.rank_of(joined) {
            Some(made) => (*self.long_rank.get(&made).unwrap_or(&NO_RANK), made),
            None => (NO_RANK, NONE),
        }
    }

    /// The ids of one piece (valid UTF-8), appended to `out`.
    pub fn encode(&self, piece: &[u8], out: &mut Vec<u32>) {
        if !self.user_defined.is_empty() {
            if let Some(&id) = self.user_defined.get(piece) {
                out.push(id);
                return;
            }
        }
        // (the sweep gives the heap's ids, but not the order in which the heap proposes the
        // pairs, which decides how an UNUSED piece is split back)
        if self.unused.is_empty() && self.sweep(piece, out) {
            return;
        }
        self.merge_by_heap(piece, out);
    }

    /// The merge of any piece (valid UTF-8) with a heap of its pairs, appended to `out`.
    fn merge_by_heap(&self, piece: &[u8], out: &mut Vec<u32>) {
        let Ok(text) = std::str::from_utf8(piece) else {
            // (pieces are cut from text at character boundaries: never reached)
            out.extend(piece.iter().map(|&b| self.byte_pieces[b as usize]));
            return;
        };
        let tables = &*self.tables;
        // Symbol k covers the characters k..end[k] (bytes starts[k]..starts[end[k]]); an
        // absorbed symbol's end is NONE. prev links the live symbols backwards.
        let mut starts: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
        let n = starts.len() as u32;
        starts.push(piece.len() as u32);
        let bytes =
            |a: u32, b: u32| &piece[starts[a as usize] as usize..starts[b as usize] as usize];
        let mut end: Vec<u32> = (1..=n).collect();
        let mut prev: Vec<u32> = (0..n).map(|k| k.wrapping_sub(1)).collect();
        let mut ids: Vec<u32> = (0..n)
            .map(|k| {
                let (a, b) = (starts[k as usize] as usize, starts[k as usize + 1] as usize);
                self.char_ids.get(tables, piece, a, b - a)
            })
            .collect();
        // For each UNUSED piece proposed, the symbols it was last proposed from (left start,
        // middle, right end).
        let mut made_from: FxHashMap<u32, (u32, u32, u32)> = FxHashMap::default();
        let mut heap: BinaryHeap<HeapEntry> = BinaryHeap::with_capacity(n as usize);
        with_memo(self.id, |memo| {
            let mut propose = |heap: &mut BinaryHeap<_>, end: &[u32], ids: &[u32], left: u32| {
                let right = end[left as usize];
                if right >= n {
                    return;
                }
                let (l, r) = (ids[left as usize], ids[right as usize]);
                if l == NONE || r == NONE {
                    return;
                }
                let right_end = end[right as usize];
                let (rank, made) = memo.get(l, r, || self.pair(bytes(left, right_end)));
                if rank == NO_RANK {
                    return;
                }
                heap.push(Reverse((rank, left, right, right_end, made)));
                if self.unused.contains(&made) {
                    made_from.insert(made, (left, right, right_end));
                }
            };
            for k in 0..n.saturating_sub(1) {
                propose(&mut heap, &end, &ids, k);
            }
            while let Some(Reverse((_, left, right, right_end, made))) = heap.pop() {
                // Stale if the left symbol was absorbed or grew, or its right neighbour changed.
                if end[left as usize] != right || right >= n || end[right as usize] != right_end {
                    continue;
                }
                end[left as usize] = right_end;
                end[right as usize] = NONE;
                ids[left as usize] = made;
                if right_end < n {
                    prev[right_end as usize] = left;
                }
                let before = prev[left as usize];
                if before != NONE {
                    propose(&mut heap, &end, &ids, before);
                }
                propose(&mut heap, &end, &ids, left);
            }
        });
        let (mut k, mut after_unknown) = (0, false);
        while k < n {
            let next = end[k as usize];
            let symbol = (k, next, ids[k as usize]);
            self.emit(text, &starts, symbol, &made_from, &mut after_unknown, out);
            k = next;
        }
    }

    /// The merge of a piece of at most [`SWEEP_SYMBOLS`] characters by sweeps, for a model
    /// without UNUSED pieces; false (nothing done) for a longer piece or one whose ranks
    /// are past the sweep's keys.
    fn sweep(&self, bytes: &[u8], out: &mut Vec<u32>) -> bool {
        let tables = &*self.tables;
        // Symbol i starts at byte starts[i] and has id ids[i] (NONE: no piece spells it).
        let mut starts = [0u32; SWEEP_SYMBOLS + 1];
        let mut ids = [NONE; SWEEP_SYMBOLS];
        let mut n = 0;
        let mut i = 0;
        while i < bytes.len() {
            if n == SWEEP_SYMBOLS {
                return false;
            }
            let width = utf8_width(bytes[i]);
            starts[n] = i as u32;
            ids[n] = self.char_ids.get(tables, bytes, i, width);
            n += 1;
            i += width;
        }
        starts[n] = bytes.len() as u32;
        let alive = with_memo(self.id, |memo| {
            let pair = |left: u32, right: u32, start: u32, end: u32| {
                if left == NONE || right == NONE {
                    return (NO_RANK, NONE);
                }
                // (a symbol's text is its token's, so the pair's ids decide its text)
                memo.get(left, right, || {
                    self.pair(&bytes[start as usize..end as usize])
                })
            };
            sweep_merge(&starts, &mut ids, n, pair)
        });
        let Some(alive) = alive else {
            return false;
        };
        let mut after_unknown = false;
        for (a, b, id) in live_symbols(&starts, &ids, n, alive) {
            let one_char = a + utf8_width(bytes[a]) == b;
            let mut unknown = id >= self.n_vocab;
            if one_char && !self.reserved.is_empty() {
                if let Some(&reserved) = std::str::from_utf8(&bytes[a..b])
                    .ok()
                    .and_then(|c| c.chars().next())
                    .and_then(|c| self.reserved.get(&c))
                {
                    if reserved != self.unk {
                        out.push(reserved);
                        after_unknown = false;
                        continue;
                    }
                    unknown = true;
                }
            }
            if unknown {
                self.unknown(&bytes[a..b], &mut after_unknown, out);
            } else {
                out.push(id);
                after_unknown = false;
            }
        }
        true
    }

    /// The ids of one final symbol `(first char, end char, id)`: SentencePiece's `resegment`
    /// of UNUSED pieces, then its byte fallback or unknown piece (`after_unknown`: whether the
    /// symbol before was unknown, updated).
    fn emit(
        &self,
        text: &str,
        starts: &[u32],
        symbol: (u32, u32, u32),
        made_from: &FxHashMap<u32, (u32, u32, u32)>,
        after_unknown: &mut bool,
        out: &mut Vec<u32>,
    ) {
        let mut stack = vec![symbol];
        while let Some((a, b, id)) = stack.pop() {
            let span = &text[starts[a as usize] as usize..starts[b as usize] as usize];
            if b - a == 1 {
                if let Some(&reserved) = span.chars().next().and_then(|c| self.reserved.get(&c)) {
                    if reserved == self.unk {
                        self.unknown(span.as_bytes(), after_unknown, out);
                    } else {
                        out.push(reserved);
                        *after_unknown = false;
                    }
                    continue;
                }
            }
            let unused = id < self.n_vocab && self.unused.contains(&id);
            if unused {
                if let Some(&(left, mid, right)) = made_from.get(&id) {
                    let piece = |x: u32, y: u32| {
                        id_of(
                            &self.tables,
                            &text.as_bytes()
                                [starts[x as usize] as usize..starts[y as usize] as usize],
                        )
                    };
                    stack.push((mid, right, piece(mid, right)));
                    stack.push((left, mid, piece(left, mid)));
                    continue;
                }
            }
            if id >= self.n_vocab || unused {
                self.unknown(span.as_bytes(), after_unknown, out);
            } else {
                out.push(id);
                *after_unknown = false;
            }
        }
    }
}

/// The merge rank of each piece a merge makes (`NO_RANK` for the others), from the
/// vocabulary's pair-ranked table: two adjacent symbols merge exactly when their joined text
/// is such a piece (the table lists every split of each piece into two pieces, at the
/// piece's rank).
fn pair_ranks(tables: &MergeTables, pairs: &FxHashMap<(u32, u32), Rank>) -> Vec<Rank> {
    let mut piece_rank = vec![NO_RANK; tables.n_vocab()];
    let mut joined = Vec::new();
    for (&(left, right), &rank) in pairs {
        let (Some(l), Some(r)) = (tables.token(left), tables.token(right)) else {
            continue;
        };
        joined.clear();
        joined.extend_from_slice(l);
        joined.extend_from_slice(r);
        if let Some(made) = tables.rank_of(&joined) {
            let slot = &mut piece_rank[made as usize];
            *slot = (*slot).min(rank);
        }
    }
    piece_rank
}

/// The merge rank of each piece of more than one character (`NO_RANK` for the others): its
/// score's place among theirs (0 = highest; equal scores, equal ranks), the rank the
/// pair-ranked table gives its splits; the byte pieces spelled `<0xNN>` are no merge's. Each
/// character these pieces hold that has no id gets a hidden one in `char_ids`, from the
/// vocabulary's size on.
fn score_ranks(
    tables: &MergeTables,
    scores: &[f64],
    char_ids: &mut CharIds,
) -> Result<Vec<Rank>, Error> {
    if scores.len() != tables.n_vocab() || scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::VocabFormat(format!(
            "a SentencePiece model's scores are one finite number per id: {} for {} ids",
            scores.len(),
            tables.n_vocab()
        )));
    }
    let byte_pieces: FxHashSet<u32> = (0..=255u8)
        .filter_map(|b| tables.rank_of(format!("<0x{b:02X}>").as_bytes()))
        .collect();
    let mut made: Vec<(u32, &str)> = tables
        .bpe_ids()
        .filter(|id| !byte_pieces.contains(id))
        .filter_map(|id| {
            let text = std::str::from_utf8(tables.token(id)?).ok()?;
            text.chars().nth(1).map(|_| (id, text))
        })
        .collect();
    made.sort_unstable_by_key(|&(id, _)| id);
    // (+ 0.0 makes -0.0 the 0.0 it equals: one distinct score)
    let mut distinct: Vec<f64> = made
        .iter()
        .map(|&(id, _)| scores[id as usize] + 0.0)
        .collect();
    distinct.sort_by(|a, b| b.total_cmp(a));
    distinct.dedup();
    let mut piece_rank = vec![NO_RANK; tables.n_vocab()];
    let mut hidden = tables.n_vocab() as u32;
    for (id, text) in made {
        let score = scores[id as usize] + 0.0;
        piece_rank[id as usize] = distinct.partition_point(|&s| s > score) as Rank;
        for c in text.chars() {
            if char_ids.of_char(tables, c) == NONE {
                char_ids.hide(c, hidden);
                hidden += 1;
            }
        }
    }
    Ok(piece_rank)
}

impl Encoder for ScoreMerge {
    fn name(&self) -> &str {
        "score-merge"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        self.encode(piece, out);
        Ok(())
    }

    fn is_native(&self) -> bool {
        true
    }

    fn piece_cuts(&self) -> Option<&PieceCuts> {
        self.cuts.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoders::sentencepiece::tests::{
        encode, pattern, sweep_texts, sweep_vocab, tables,
    };

    #[test]
    fn a_pair_is_the_piece_its_text_spells_at_that_pieces_lowest_rank() {
        // Pieces of up to 8 bytes, of 9 to 16 and longer (their ranks are kept in three
        // places), one piece made by two splits at different ranks, one made by none.
        let pieces = [
            "▁",
            "a",
            "b",
            "ab",
            "abab",
            "abababab",
            "▁ab",
            "▁abab",
            "▁abababab",
            "▁abababab▁abababab",
            "ba",
        ];
        let merges = [
            ("a", "b", 0),
            ("ab", "ab", 1),
            ("abab", "abab", 2),
            ("▁", "ab", 3),
            ("▁", "abababab", 4),
            ("▁abababab", "▁abababab", 5),
            ("▁ab", "ab", 6),
            ("▁", "abab", 7),
        ];
        let t = tables(1, &pieces, &merges);
        let e =
            ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &[], None).unwrap();
        let id = |text: &str| {
            pieces
                .iter()
                .position(|p| *p == text)
                .map(|i| 257 + i as u32)
        };
        for x in pieces {
            for y in pieces {
                let joined = format!("{x}{y}");
                let rank = merges
                    .iter()
                    .filter(|(l, r, _)| format!("{l}{r}") == joined)
                    .map(|&(_, _, rank)| rank)
                    .min()
                    .unwrap_or(NO_RANK);
                let expected = match id(&joined) {
                    Some(made) => (rank, made),
                    None => (NO_RANK, NONE),
                };
                assert_eq!(e.pair(joined.as_bytes()), expected, "{joined}");
            }
        }
        assert_eq!(e.pair("▁abab".as_bytes()), (6, 264));
        assert_eq!(e.pair("ba".as_bytes()), (NO_RANK, 267));
        assert_eq!(e.pair("▁abababab▁abababab".as_bytes()), (5, 266));
    }

    #[test]
    fn score_merge_highest_score_first_and_byte_fallback() {
        // ids: <unk> 0, bytes 1..=256, then ▁ 257, a 258, b 259, ab 260, ▁ab 261.
        let t = tables(
            1,
            &["▁", "a", "b", "ab", "▁ab"],
            &[("a", "b", 0), ("▁", "ab", 1)],
        );
        let specials = [("<unk>".to_owned(), 0), ("~".to_owned(), 300)];
        let e = ScoreMerge::new(
            t,
            &pattern(r#""unused":[],"user_defined":[]"#),
            &specials,
            None,
        )
        .unwrap();
        assert_eq!(encode(&e, "▁abab"), [261, 260]);
        assert_eq!(encode(&e, "é"), [1 + 0xC3, 1 + 0xA9]); // no piece: its bytes' pieces
        assert_eq!(encode(&e, "~"), [300]); // a control piece's one character is that piece
                                            // Long pieces go to the heap: the same merges.
        assert_eq!(encode(&e, &"▁ab".repeat(100)), [261; 100]);
        assert_eq!(encode(&e, &"ab".repeat(100)), [260; 100]);
    }

    #[test]
    fn score_merge_ties_go_leftmost_on_both_paths() {
        // aa and a+aa/aa+a: "aaa" merges its left pair first, then nothing joins aa and a.
        let t = tables(1, &["a", "aa"], &[("a", "a", 0)]);
        let e =
            ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &[], None).unwrap();
        assert_eq!(encode(&e, "aaa"), [258, 257]);
        let long = encode(&e, &"a".repeat(1001));
        assert_eq!(long.len(), 501);
        assert!(long[..500].iter().all(|&id| id == 258) && long[500] == 257);
    }

    #[test]
    fn score_merge_splits_unused_pieces_back_and_keeps_user_defined_whole() {
        // ids: a 257, b 258, c 259, ab 260 (UNUSED), abc 261, [X] 262 (user-defined)
        let t = tables(
            1,
            &["a", "b", "c", "ab", "abc", "[X]"],
            &[("a", "b", 0), ("ab", "c", 1)],
        );
        let fields = r#""unused":["ab"],"user_defined":["[X]"]"#;
        let e = ScoreMerge::new(t.clone(), &pattern(fields), &[], None).unwrap();
        assert_eq!(encode(&e, "ab"), [257, 258]); // made, then split back
        assert_eq!(encode(&e, "abc"), [261]); // merged on into a piece that is used
        assert_eq!(encode(&e, "[X]"), [262]);
        // llama.cpp keeps an unused piece a merge made: its files' models list none.
        let llama = pattern(r#""unused":[],"user_defined":["[X]"],"semantics":"llama.cpp""#);
        assert_eq!(
            encode(&ScoreMerge::new(t, &llama, &[], None).unwrap(), "ab"),
            [260]
        );
    }

    #[test]
    fn score_merge_sweeps_give_the_heaps_ids_on_every_length() {
        let t = sweep_vocab();
        let fields = r#""unused":[],"user_defined":[]"#;
        let score = ScoreMerge::new(t, &pattern(fields), &[], None).unwrap();
        for text in sweep_texts() {
            let (mut swept, mut heaped) = (vec![], vec![]);
            score.encode(text.as_bytes(), &mut swept);
            score.merge_by_heap(text.as_bytes(), &mut heaped);
            assert_eq!(swept, heaped, "score-merge {text:?}");
        }
        // Exactly 64 symbols (the last sweep) and 65 (the first heap).
        for len in [63, 64, 65] {
            let text = "▁".repeat(len);
            let (mut swept, mut heaped) = (vec![], vec![]);
            score.encode(text.as_bytes(), &mut swept);
            score.merge_by_heap(text.as_bytes(), &mut heaped);
            assert_eq!(swept, heaped, "{len} spaces");
        }
    }

    #[test]
    fn long_runs_of_one_character_merge_whole() {
        // 1 MiB of one letter, of spaces, of one emoji (no piece: byte fallback).
        let t = tables(1, &["▁", "a", "▁▁", "aa"], &[("a", "a", 0), ("▁", "▁", 1)]);
        let e =
            ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &[], None).unwrap();
        let mib = 1 << 20;
        let ids = encode(&e, &"a".repeat(mib));
        assert_eq!(ids.len(), mib / 2);
        assert!(ids.iter().all(|&id| id == 260));
        let ids = encode(&e, &"▁".repeat(mib / 3));
        assert_eq!(ids.len(), (mib / 3).div_ceil(2));
        let ids = encode(&e, &"😀".repeat(mib / 4));
        assert_eq!(ids.len(), mib);
        assert_eq!(ids[..4], [1 + 0xF0, 1 + 0x9F, 1 + 0x98, 1 + 0x80]);
    }

    #[test]
    fn without_byte_fallback_a_run_of_unknown_symbols_is_one_unk() {
        // ids: <unk> 0, bytes 1..=256, then ▁ 257, a 258, b 259, ab 260.
        let t = tables(1, &["▁", "a", "b", "ab"], &[("a", "b", 0)]);
        let fields = r#""unused":[],"user_defined":[],"byte_fallback":false"#;
        let specials = [("<unk>".to_owned(), 0)];
        let e = ScoreMerge::new(t.clone(), &pattern(fields), &specials, None).unwrap();
        assert_eq!(encode(&e, "aé😀b"), [258, 0, 259]);
        assert_eq!(encode(&e, "abéé"), [260, 0]);
        for text in ["éaé😀😀b▁é", &"é😀".repeat(50), &"aé".repeat(50)] {
            let (mut swept, mut heaped) = (vec![], vec![]);
            e.encode(text.as_bytes(), &mut swept);
            e.merge_by_heap(text.as_bytes(), &mut heaped);
            assert_eq!(swept, heaped, "{text:?}");
        }
        assert_eq!(encode(&e, &"é😀".repeat(50)), [0]);
        // It needs its unknown piece.
        assert!(matches!(
            ScoreMerge::new(t, &pattern(fields), &[], None),
            Err(Error::VocabFormat(_))
        ));
    }

    #[test]
    fn characters_that_are_no_piece_merge_by_the_scores_of_the_pieces_that_hold_them() {
        // ids: <unk> 0, bytes 1..=256, a 257, éé 258, aé 259, 😀😀 260; no é, no 😀.
        let t = tables(1, &["a", "éé", "aé", "😀😀"], &[]);
        let mut scores = vec![0.0; t.n_vocab()];
        scores[258..=260].copy_from_slice(&[-1.0, -2.0, -3.0]);
        let specials = [("<unk>".to_owned(), 0)];
        let fallback = ScoreMerge::new(
            t.clone(),
            &pattern(r#""unused":[],"user_defined":[]"#),
            &specials,
            Some(&scores),
        )
        .unwrap();
        assert_eq!(encode(&fallback, "aéé"), [257, 258]); // éé scores higher than aé
        assert_eq!(encode(&fallback, "aé"), [259]);
        let crab = "😀".as_bytes().iter().map(|&b| 1 + u32::from(b));
        let expected: Vec<u32> = [260].into_iter().chain(crab).collect();
        assert_eq!(encode(&fallback, "😀😀😀"), expected);
        let fields = r#""unused":[],"user_defined":[],"byte_fallback":false"#;
        let unk = ScoreMerge::new(t, &pattern(fields), &specials, Some(&scores)).unwrap();
        assert_eq!(encode(&unk, "é😀😀😀é"), [0, 260, 0]);
        for e in [&fallback, &unk] {
            for text in sweep_texts().iter().chain([&"😀é".repeat(40)]) {
                let (mut swept, mut heaped) = (vec![], vec![]);
                e.encode(text.as_bytes(), &mut swept);
                e.merge_by_heap(text.as_bytes(), &mut heaped);
                assert_eq!(swept, heaped, "{text:?}");
            }
        }
    }

    #[test]
    fn pieces_cut_in_one_pass_give_the_ids_of_the_spanners_pieces() {
        use crate::normalizers::sentencepiece::SentencePieceNormalizer;
        use crate::normalizers::Normalizer;
        use crate::spanners::sentencepiece::SentencePieceSpanner;
        use crate::spanners::{pieces_at, Spanner};
        use crate::spec::SentencePieceFlags;
        // Pairs that merge across `▁`, punctuation and a user-defined piece, ties and long
        // runs (the heap), and characters that are no piece (byte fallback).
        let pieces = [
            "▁", "a", "b", ".", "(", "[X]", "▁▁", "▁a", "ab", "a.", "(a", "▁(", "▁▁a", "ba",
        ];
        let merges = [
            ("▁", "▁", 0),
            ("▁", "a", 1),
            ("a", "b", 2),
            ("a", ".", 3),
            ("(", "a", 4),
            ("▁", "(", 5),
            ("▁▁", "a", 6),
            ("▁", "▁a", 6),
            ("b", "a", 7),
        ];
        let t = tables(1, &pieces, &merges);
        let alphabet = [
            " ", "  ", "▁", "a", "b", ".", "(", "[X]", "é", "😀", "ab", "\n",
        ];
        for (words, user_defined) in [(true, r#"["[X]"]"#), (false, "[]")] {
            let fields = format!(r#""unused":[],"user_defined":{user_defined},"words":{words}"#);
            let spec = pattern(&fields);
            let e = ScoreMerge::new(t.clone(), &spec, &[], None).unwrap();
            let cuts = e.piece_cuts().unwrap();
            let spanner = SentencePieceSpanner::new(&spec).unwrap();
            let matcher = spanner.one_pass_matcher().unwrap();
            let ids = |text: &str, ends: &[usize]| -> Vec<u32> {
                pieces_at(text, ends).flat_map(|p| encode(&e, p)).collect()
            };
            for dummy in [false, true] {
                let flags = SentencePieceFlags {
                    add_dummy_prefix: dummy,
                    remove_extra_whitespaces: false,
                    ..Default::default()
                };
                let normalizer = SentencePieceNormalizer::new(flags);
                for text in crate::testing::texts(17, &alphabet, 2000, 60) {
                    let normalized = normalizer.normalize(&text).unwrap();
                    let mut spans = vec![];
                    spanner.spans(&normalized, &mut spans).unwrap();
                    let expected = ids(&normalized, &spans);
                    // The whole stretch merged at once, as sentencepiece does without words.
                    if !words {
                        assert_eq!(expected, encode(&e, &normalized), "{text:?}");
                    }
                    let mut refined = vec![];
                    cuts.refine(normalized.as_bytes(), &spans, &mut refined);
                    assert_eq!(ids(&normalized, &refined), expected, "refined {text:?}");
                    let mut ends = vec![];
                    let one = normalizer.normalized_pieces(&text, matcher, cuts, &mut ends);
                    assert_eq!(one.as_deref(), Some(normalized.as_str()), "{text:?}");
                    assert_eq!(ids(&normalized, &ends), expected, "one pass {text:?}");
                }
            }
        }
    }
}
