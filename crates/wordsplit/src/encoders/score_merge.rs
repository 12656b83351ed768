//! The encoders of SentencePiece vocabularies, native twins of
//! `wordsplit/encoders/score_merge.py` under the same names:
//!
//! * `score-merge` ([`ScoreMerge`]): SentencePiece's BPE (`bpe_model.cc`). The symbols start as
//!   the characters of the piece; two adjacent symbols merge when together they spell a piece,
//!   the pair of highest score first (the vocabulary's pair-ranked table holds that order:
//!   rank 0 is the highest score), the leftmost on ties. Then each symbol is its id: an UNUSED
//!   piece is split back into the two symbols it was last proposed from, a symbol that is no
//!   piece is its UTF-8 bytes as byte pieces (byte fallback), a one-character symbol that is a
//!   control piece's text is that piece.
//! * `rank-merge` ([`RankMerge`]): HF `tokenizers`' character-level BPE with `byte_fallback`:
//!   each character is a symbol, or each of its UTF-8 bytes when it is no token; then the pair
//!   of lowest merge rank merges, the leftmost on ties; with `ignore_merges` a piece that is a
//!   token is that token.
//!
//! Both keep every mergeable adjacent pair in a heap and skip an entry whose symbols changed
//! since it was pushed (lazy invalidation): O(n log n) per piece, on any piece.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::encoders::Encoder;
use crate::error::Error;
use crate::pipeline::most_recent;
use crate::spanners::sentencepiece::SentencePieceModel;
use crate::tables::{Beside, MergeTables, Rank, NO_RANK};

/// No symbol / no id.
const NONE: u32 = u32::MAX;

/// A pair waiting in a heap: its rank, its left symbol, two fields that tell whether it is
/// still current, and the token it makes.
type HeapEntry = Reverse<(Rank, u32, u32, u32, u32)>;

/// Pieces of up to this many symbols are merged by a sweep over arrays on the stack (find
/// the pair of lowest rank, leftmost first; merge; look up its two new neighbours' pairs):
/// quadratic, but without the heap's pushes and pops and with no allocation, it is the
/// fastest way for the words most pieces are. The live symbols are the bits of one `u64`, so
/// a merge moves nothing: its neighbours are a count of zero bits away. Longer pieces go to
/// the heap.
const SWEEP_SYMBOLS: usize = 64;

/// Each thread's memo of the pairs the sweeps looked up, per encoder (the most recently used
/// [`MEMO_ENCODERS`]): the same few pairs (`▁▁`, `▁t`, `he`...) come up in word after word,
/// and a memo hit is two reads where the lookup is a hash of the joined text and a probe.
struct PairMemo {
    /// Per slot: `left << 32 | right` of its pair (`u64::MAX`: empty), the pair's rank and
    /// the token it makes, side by side so that a lookup touches one cache line.
    slots: Box<[MemoSlot]>,
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct MemoSlot {
    key: u64,
    rank: Rank,
    made: u32,
}

/// 16,384 slots of 16 bytes: 256 KB, which stays in a core's L2 cache beside the piece
/// table's lines. Against 65,536 slots (1 MB, mostly outside it: its loads were about half
/// of a sweep's time in a first pass), paired in one process, first passes over 4 MB ran
/// 1.01-1.05x faster on Gemma-class prose, code and multilingual text and 1.05-1.06x on
/// Llama 2-class.
const MEMO_BITS: u32 = 14;
const MEMO_SLOTS: usize = 1 << MEMO_BITS;
const MEMO_ENCODERS: usize = 4;

impl PairMemo {
    fn new() -> Self {
        let empty = MemoSlot {
            key: u64::MAX,
            rank: NO_RANK,
            made: NONE,
        };
        Self {
            slots: vec![empty; MEMO_SLOTS].into_boxed_slice(),
        }
    }

    /// The memo of pair `(left, right)`, or `lookup()` remembered.
    #[inline(always)]
    fn get(&mut self, left: u32, right: u32, lookup: impl FnOnce() -> (Rank, u32)) -> (Rank, u32) {
        let key = u64::from(left) << 32 | u64::from(right);
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MEMO_BITS)) as usize;
        let entry = &mut self.slots[slot];
        if entry.key == key {
            return (entry.rank, entry.made);
        }
        let (rank, made) = lookup();
        *entry = MemoSlot { key, rank, made };
        (rank, made)
    }
}

thread_local! {
    static PAIR_MEMOS: RefCell<Vec<(u64, PairMemo)>> = const { RefCell::new(Vec::new()) };
}

/// Names each encoder's memos (never reused, so a new encoder never reads an old one's).
static NEXT_ENCODER_ID: AtomicU64 = AtomicU64::new(0);

/// `f` with this thread's pair memo of encoder `id`.
fn with_memo<R>(id: u64, f: impl FnOnce(&mut PairMemo) -> R) -> R {
    PAIR_MEMOS.with_borrow_mut(|memos| f(most_recent(memos, id, MEMO_ENCODERS, PairMemo::new)))
}

/// The tables both encoders read, and the id of each byte's byte piece (`<0xNN>`, which is
/// the token of the byte itself unless a one-character piece spells that byte).
fn byte_pieces(tables: &MergeTables) -> [u32; 256] {
    let mut ids = [NONE; 256];
    for (b, id) in ids.iter_mut().enumerate() {
        let text = format!("<0x{b:02X}>");
        *id = tables
            .rank_of(text.as_bytes())
            .unwrap_or(tables.byte_id(b as u8));
    }
    ids
}

/// The pair-ranked merges of a SentencePiece vocabulary, or why the encoder cannot run.
fn merges<'a>(
    tables: &'a MergeTables,
    name: &str,
) -> Result<&'a FxHashMap<(u32, u32), Rank>, Error> {
    tables.merges().ok_or_else(|| {
        Error::Unsupported(format!(
            "the {name} encoder reads SentencePiece vocabularies, whose merges are a pair-ranked table"
        ))
    })
}

/// The sweep both encoders run on a piece of `n` symbols, at most [`SWEEP_SYMBOLS`]: symbol
/// `k` starts at byte `starts[k]` (`starts[n]` is the piece's end) and has id `ids[k]`;
/// `pair(left id, right id, start, end)` is the rank of merging two adjacent symbols that
/// cover bytes `start..end` together, and the token it makes (`NO_RANK`: none). The pair of
/// lowest rank merges, the leftmost on ties, until none is left; returns the live symbols,
/// one bit each (a merged symbol keeps its start, and its id becomes the token made).
fn sweep_merge(
    starts: &[u32; SWEEP_SYMBOLS + 1],
    ids: &mut [u32; SWEEP_SYMBOLS],
    n: usize,
    mut pair: impl FnMut(u32, u32, u32, u32) -> (Rank, u32),
) -> u64 {
    debug_assert!(n <= SWEEP_SYMBOLS);
    if n == 0 {
        return 0;
    }
    let mut alive = u64::MAX >> (64 - n);
    // The live symbol after `k`, or `n`; the one before it.
    let next = |alive: u64, k: usize| {
        let above = alive >> k >> 1;
        if above == 0 {
            n
        } else {
            k + 1 + above.trailing_zeros() as usize
        }
    };
    let prev = |alive: u64, k: usize| {
        let below = alive & ((1u64 << k) - 1);
        (below != 0).then(|| 63 - below.leading_zeros() as usize)
    };
    // ranks[k], made[k]: merging live symbol k with the next live one (NO_RANK for the
    // last live symbol and the absorbed ones).
    let mut ranks = [NO_RANK; SWEEP_SYMBOLS];
    let mut made = [NONE; SWEEP_SYMBOLS];
    for k in 0..n - 1 {
        (ranks[k], made[k]) = pair(ids[k], ids[k + 1], starts[k], starts[k + 2]);
    }
    loop {
        // (the lowest rank, then where it first is: the first loop has no data-dependent
        // branch, and the compiler vectorizes it)
        let live = &ranks[..n - 1];
        let best = live.iter().fold(NO_RANK, |best, &r| best.min(r));
        if best == NO_RANK {
            return alive;
        }
        let at = live.iter().position(|&r| r == best).unwrap_or_default();
        let right = next(alive, at);
        ids[at] = made[at];
        alive &= !(1u64 << right);
        ranks[right] = NO_RANK;
        let after = next(alive, at);
        (ranks[at], made[at]) = if after < n {
            let end = starts[next(alive, after)];
            pair(ids[at], ids[after], starts[at], end)
        } else {
            (NO_RANK, NONE)
        };
        if let Some(before) = prev(alive, at) {
            (ranks[before], made[before]) =
                pair(ids[before], ids[at], starts[before], starts[after]);
        }
    }
}

/// The live symbols of a sweep's result (`alive` from [`sweep_merge`]), as `(start, end, id)`.
fn live_symbols<'a>(
    starts: &'a [u32; SWEEP_SYMBOLS + 1],
    ids: &'a [u32; SWEEP_SYMBOLS],
    n: usize,
    mut alive: u64,
) -> impl Iterator<Item = (usize, usize, u32)> + 'a {
    std::iter::from_fn(move || {
        if alive == 0 {
            return None;
        }
        let k = alive.trailing_zeros() as usize;
        alive &= alive - 1;
        let end = if alive == 0 {
            starts[n]
        } else {
            starts[alive.trailing_zeros() as usize]
        };
        Some((starts[k] as usize, end as usize, ids[k]))
    })
}

/// The length of the UTF-8 character whose first byte is `lead`.
#[inline]
fn utf8_width(lead: u8) -> usize {
    match lead {
        0..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The id of the token spelled by `text` (a character or a merged symbol), or [`NONE`].
#[inline]
fn id_of(tables: &MergeTables, text: &[u8]) -> u32 {
    if text.len() == 1 {
        tables.byte_id(text[0])
    } else {
        tables.rank_of(text).unwrap_or(NONE)
    }
}

/// The id of each character of the Basic Multilingual Plane that is a token ([`NONE`] for
/// the others): a piece's first step, one id per character, is then an array read where
/// [`id_of`] hashes and probes the token table (a run of `▁`, a line of CJK text).
struct CharIds {
    bmp: Box<[u32]>,
}

impl CharIds {
    fn new(tables: &MergeTables) -> Self {
        let mut bmp = vec![NONE; 0x1_0000].into_boxed_slice();
        for id in tables.bpe_ids() {
            // (a character of the plane is at most three bytes)
            let Some(text) = tables.token(id).filter(|text| text.len() <= 3) else {
                continue;
            };
            if let Ok(text) = std::str::from_utf8(text) {
                let mut chars = text.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    if let Some(slot) = bmp.get_mut(c as usize) {
                        *slot = id;
                    }
                }
            }
        }
        for (b, slot) in bmp.iter_mut().take(0x80).enumerate() {
            *slot = tables.byte_id(b as u8);
        }
        Self { bmp }
    }

    /// The id of the character of `width` bytes at `bytes[i..]` ([`id_of`] of it).
    #[inline(always)]
    fn get(&self, tables: &MergeTables, bytes: &[u8], i: usize, width: usize) -> u32 {
        let at = |k: usize| u32::from(bytes[i + k] & 0x3F);
        match width {
            1 => tables.byte_id(bytes[i]),
            2 => self.bmp[(u32::from(bytes[i] & 0x1F) << 6 | at(1)) as usize],
            3 => self.bmp[(u32::from(bytes[i] & 0x0F) << 12 | at(1) << 6 | at(2)) as usize],
            _ => id_of(tables, &bytes[i..i + width]),
        }
    }
}

/// SentencePiece's BPE merge with byte fallback (see the module docs).
pub struct ScoreMerge {
    /// Names its pair memos.
    id: u64,
    tables: Arc<MergeTables>,
    /// The merge rank of each piece a merge makes (`NO_RANK` for the others): two adjacent
    /// symbols merge exactly when their joined text is such a piece (the vocabulary's table
    /// lists every split of each piece into two pieces, at the piece's rank), so a pair is
    /// one lookup of its text, which also gives the piece it makes. Kept beside the token
    /// index's slots for pieces of up to 16 bytes and read with the slot (paired first passes
    /// over 4 MB, against a vector by id read once the slot had answered: Gemma-class prose,
    /// multilingual text and code 1.03, 1.05 and 1.02x faster, Llama 2-class 1.01-1.03x);
    /// in `long_rank` for the longer ones.
    rank_beside: Beside,
    long_rank: FxHashMap<u32, Rank>,
    byte_pieces: [u32; 256],
    char_ids: CharIds,
    /// The user-defined pieces: a piece that is one is its id (the spanner cuts them out).
    user_defined: FxHashMap<Box<[u8]>, u32>,
    /// The control pieces of one character: such a final symbol is that piece.
    reserved: FxHashMap<char, u32>,
    /// The UNUSED pieces, split back after merging (`sentencepiece` semantics only: llama.cpp
    /// keeps one a merge made).
    unused: FxHashSet<u32>,
}

impl ScoreMerge {
    /// The encoder of a vocabulary's tables, its SentencePiece pattern, and its special
    /// tokens `(text, id)` (the control and unknown pieces).
    pub fn new(
        tables: Arc<MergeTables>,
        pattern: &str,
        specials: &[(String, u32)],
    ) -> Result<Self, Error> {
        let model = SentencePieceModel::parse(pattern)?;
        let mut piece_rank = vec![NO_RANK; tables.n_vocab()];
        let mut joined = Vec::new();
        for (&(left, right), &rank) in merges(&tables, "score-merge")? {
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
        let user_defined = model
            .user_defined
            .iter()
            .filter_map(|text| Some((text.as_bytes().into(), tables.rank_of(text.as_bytes())?)))
            .collect();
        let unused = if model.semantics == "sentencepiece" {
            model
                .unused
                .iter()
                .filter_map(|text| tables.rank_of(text.as_bytes()))
                .collect()
        } else {
            FxHashSet::default()
        };
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
            char_ids: CharIds::new(&tables),
            tables,
            user_defined,
            reserved,
            unused,
        })
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
        let mut k = 0;
        while k < n {
            let next = end[k as usize];
            self.emit(text, &starts, (k, next, ids[k as usize]), &made_from, out);
            k = next;
        }
    }

    /// The merge of a piece of at most [`SWEEP_SYMBOLS`] characters by sweeps, for a model
    /// without UNUSED pieces; false (nothing done) for a longer piece.
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
        for (a, b, id) in live_symbols(&starts, &ids, n, alive) {
            let one_char = a + utf8_width(bytes[a]) == b;
            if one_char && !self.reserved.is_empty() {
                if let Some(&reserved) = std::str::from_utf8(&bytes[a..b])
                    .ok()
                    .and_then(|c| c.chars().next())
                    .and_then(|c| self.reserved.get(&c))
                {
                    out.push(reserved);
                    continue;
                }
            }
            if id == NONE {
                out.extend(bytes[a..b].iter().map(|&b| self.byte_pieces[b as usize]));
            } else {
                out.push(id);
            }
        }
        true
    }

    /// The ids of one final symbol `(first char, end char, id)`: SentencePiece's `resegment`
    /// of UNUSED pieces and its byte fallback.
    fn emit(
        &self,
        text: &str,
        starts: &[u32],
        symbol: (u32, u32, u32),
        made_from: &FxHashMap<u32, (u32, u32, u32)>,
        out: &mut Vec<u32>,
    ) {
        let mut stack = vec![symbol];
        while let Some((a, b, id)) = stack.pop() {
            let span = &text[starts[a as usize] as usize..starts[b as usize] as usize];
            if b - a == 1 {
                if let Some(&reserved) = span.chars().next().and_then(|c| self.reserved.get(&c)) {
                    out.push(reserved);
                    continue;
                }
            }
            let unused = id != NONE && self.unused.contains(&id);
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
            if id == NONE || unused {
                out.extend(span.bytes().map(|b| self.byte_pieces[b as usize]));
            } else {
                out.push(id);
            }
        }
    }
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
}

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
    /// The encoder of a vocabulary's tables and its SentencePiece pattern.
    pub fn new(tables: Arc<MergeTables>, pattern: &str) -> Result<Self, Error> {
        let model = SentencePieceModel::parse(pattern)?;
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
    /// done) for a longer piece.
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

/// The SentencePiece encoder registered as `name` (`score-merge` or `rank-merge`) over a
/// vocabulary's tables, pattern and special tokens; None for another name.
pub fn sentencepiece_encoder(
    name: &str,
    tables: Arc<MergeTables>,
    pattern: &str,
    specials: &[(String, u32)],
) -> Option<Result<Box<dyn Encoder>, Error>> {
    match name {
        "score-merge" => Some(
            ScoreMerge::new(tables, pattern, specials).map(|e| Box::new(e) as Box<dyn Encoder>),
        ),
        "rank-merge" => {
            Some(RankMerge::new(tables, pattern).map(|e| Box::new(e) as Box<dyn Encoder>))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::texts;
    use crate::Literal;

    /// Byte tokens at ids `first + b` (`<0xNN>` where a piece spells that byte's character),
    /// then `pieces` from id `first + 256` on, and these merges `(left, right, rank)` by text.
    fn tables(first: u32, pieces: &[&str], merges: &[(&str, &str, Rank)]) -> Arc<MergeTables> {
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .map(|b| {
                let own = pieces.iter().any(|p| p.as_bytes() == [b]);
                let bytes = if own {
                    format!("<0x{b:02X}>").into_bytes()
                } else {
                    vec![b]
                };
                (bytes, first + u32::from(b))
            })
            .collect();
        let id = |text: &str| first + 256 + pieces.iter().position(|p| *p == text).unwrap() as u32;
        tokens.extend(pieces.iter().map(|p| (p.as_bytes().to_vec(), id(p))));
        let merges = merges
            .iter()
            .map(|&(l, r, rank)| (id(l), id(r), rank))
            .collect();
        let literals = [Literal {
            text: "<unk>".into(),
            id: 0,
            special: true,
            flags: 0,
        }];
        let n_vocab = first as usize + 256 + pieces.len() + 1;
        let bpe = tokens.iter().map(|(b, i)| (b.as_slice(), *i));
        Arc::new(MergeTables::from_tokens(bpe, &literals, n_vocab, Some(merges), false).unwrap())
    }

    fn pattern(fields: &str) -> String {
        format!(r#"{MODEL_PREFIX}{{"strip_leading_space":"first","unk_surface":" ⁇ ",{fields}}}"#)
    }

    use crate::spanners::sentencepiece::MODEL_PREFIX;

    fn encode(encoder: &dyn Encoder, text: &str) -> Vec<u32> {
        let mut out = vec![];
        encoder.encode_piece(text.as_bytes(), &mut out).unwrap();
        out
    }

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
        let e = ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &[]).unwrap();
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
        let e =
            ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &specials).unwrap();
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
        let e = ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &[]).unwrap();
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
        let e = ScoreMerge::new(t.clone(), &pattern(fields), &[]).unwrap();
        assert_eq!(encode(&e, "ab"), [257, 258]); // made, then split back
        assert_eq!(encode(&e, "abc"), [261]); // merged on into a piece that is used
        assert_eq!(encode(&e, "[X]"), [262]);
        // llama.cpp keeps an unused piece a merge made.
        let llama = pattern(&format!(r#"{fields},"semantics":"llama.cpp""#));
        assert_eq!(
            encode(&ScoreMerge::new(t, &llama, &[]).unwrap(), "ab"),
            [260]
        );
    }

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
    fn sweeps_give_the_heaps_ids_on_every_length() {
        // Pieces of ▁, a, b, é with merges of equal ranks (ties go leftmost) and a chain that
        // makes long tokens, up to and past the sweep's 64 symbols (the heap takes those).
        let pieces = [
            "▁",
            "a",
            "b",
            "é",
            "▁▁",
            "▁a",
            "ab",
            "ba",
            "aa",
            "▁▁▁",
            "▁ab",
            "aba",
            "▁▁▁▁",
            "éa",
            "abab",
            "▁aba",
        ];
        let merges = [
            ("▁", "▁", 3),
            ("▁", "a", 1),
            ("a", "b", 1),
            ("b", "a", 2),
            ("a", "a", 0),
            ("▁▁", "▁", 4),
            ("▁", "▁▁", 4),
            ("▁a", "b", 5),
            ("▁", "ab", 5),
            ("ab", "a", 6),
            ("a", "ba", 6),
            ("▁▁", "▁▁", 7),
            ("▁▁▁", "▁", 7),
            ("▁", "▁▁▁", 7),
            ("é", "a", 2),
            ("ab", "ab", 8),
            ("aba", "b", 8),
            ("▁ab", "a", 9),
            ("▁", "aba", 9),
        ];
        let t = tables(1, &pieces, &merges);
        let fields = r#""unused":[],"user_defined":[]"#;
        let score = ScoreMerge::new(t.clone(), &pattern(fields), &[]).unwrap();
        let hf = format!(r#"{fields},"semantics":"hf""#);
        let rank = RankMerge::new(t, &pattern(&hf)).unwrap();
        let alphabet = ["▁", "a", "b", "é", "c", "😀"];
        for text in texts(7, &alphabet, 3000, 80) {
            let (mut swept, mut heaped) = (vec![], vec![]);
            score.encode(text.as_bytes(), &mut swept);
            score.merge_by_heap(text.as_bytes(), &mut heaped);
            assert_eq!(swept, heaped, "score-merge {text:?}");
            let (mut swept, mut heaped) = (vec![], vec![]);
            rank.encode(text.as_bytes(), &mut swept);
            rank.merge_by_heap(text.as_bytes(), &mut heaped);
            assert_eq!(swept, heaped, "rank-merge {text:?}");
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
        let e = ScoreMerge::new(t, &pattern(r#""unused":[],"user_defined":[]"#), &[]).unwrap();
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
    fn pair_memo_slots_answer_only_for_their_own_pair() {
        let mut memo = PairMemo::new();
        // Find two pairs that share a slot: the second must not get the first's answer.
        let slot = |left: u32, right: u32| {
            let key = u64::from(left) << 32 | u64::from(right);
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MEMO_BITS)) as usize
        };
        let first = slot(1, 2);
        let other = (3..).find(|&r| slot(1, r) == first).unwrap();
        assert_eq!(memo.get(1, 2, || (5, 50)), (5, 50));
        assert_eq!(memo.get(1, 2, || unreachable!()), (5, 50));
        assert_eq!(memo.get(1, other, || (NO_RANK, NONE)), (NO_RANK, NONE));
        assert_eq!(
            memo.get(1, 2, || (5, 50)),
            (5, 50),
            "evicted, looked up again"
        );
    }

    #[test]
    fn char_ids_are_the_token_of_each_character() {
        let t = tables(1, &["▁", "é", "中", "😀", "ab"], &[]);
        let ids = CharIds::new(&t);
        for text in ["▁", "é", "中", "😀", "a", "ж", "ab"] {
            let bytes = text.as_bytes();
            let width = utf8_width(bytes[0]);
            if width == bytes.len() {
                assert_eq!(ids.get(&t, bytes, 0, width), id_of(&t, bytes), "{text:?}");
            }
        }
        assert_eq!(ids.get(&t, "ж".as_bytes(), 0, 2), NONE);
    }

    #[test]
    fn a_vocabulary_without_pair_merges_is_refused() {
        let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let tokens = bytes.iter().zip(0..).map(|(b, id)| (b.as_slice(), id));
        let t = Arc::new(MergeTables::from_tokens(tokens, &[], 256, None, false).unwrap());
        let p = pattern(r#""unused":[],"user_defined":[]"#);
        assert!(matches!(
            ScoreMerge::new(t.clone(), &p, &[]),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(RankMerge::new(t, &p), Err(Error::Unsupported(_))));
    }
}
