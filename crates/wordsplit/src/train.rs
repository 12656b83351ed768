//! BPE training with HuggingFace `BpeTrainer`'s exact rules (`models/bpe/trainer.rs`), so that
//! the merges and the ids are HF's, ties and corner cases included:
//! * the vocabulary starts with the special tokens, then the 256 byte tokens in GPT-2's byte
//!   order ([`byte_order`]);
//! * the pair merged next has the highest count, weighted by its words' counts (on a tie, the
//!   smaller `(left id, right id)`); a merge whose bytes are already a token reuses its id;
//! * with a `max_token_length`, a pair a merge forms is a candidate only when its two tokens
//!   together are shorter than that, in bytes (HF's `<`);
//! * training stops at `vocab_size` tokens, when no pair is left, or when the best count is
//!   below `min_frequency` (or below 1).
//!
//! The Python package's tests hold it to HF's `BpeTrainer` itself, and to that package's own
//! trainer, which states the rules step by step.
//!
//! Two parts:
//! * [`WordTable`]: the distinct words of a corpus (pieces of the split pattern, as bytes) and
//!   their 64-bit counts, filled in parallel by a native scanner; tables of shards merge.
//! * [`train`]: the merges. Words are lists of token ids; an incremental pair-count index
//!   (pair → count, and a max-heap of (count, pair, words) entries refreshed lazily) means a
//!   merge touches only the words that contain its pair, never a full recount. Counts are
//!   64-bit (HF's are 32-bit and overflow past 2^31 occurrences).
//!
//! Memory grows with the number of distinct words, not with the corpus.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use unicode_normalization_alignments::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::spanners::Scanner;
use crate::tables::NO_RANK;

/// Word bytes → count.
#[derive(Default)]
pub struct WordTable {
    pub counts: FxHashMap<Box<[u8]>, u64>,
}

impl WordTable {
    /// Count the pieces of one text (NFC-normalized first when `nfc`), at most `budget` of
    /// them (the first ones); returns how many were counted.
    pub fn add_text(
        &mut self,
        spanner: &dyn Scanner,
        text: &str,
        nfc: bool,
        ends: &mut Vec<usize>,
        budget: u64,
    ) -> u64 {
        let normalized: String;
        let text = if nfc && !text.is_ascii() && is_nfc_quick(text.chars()) != IsNormalized::Yes {
            normalized = text.nfc().map(|(c, _)| c).collect();
            normalized.as_str()
        } else {
            text
        };
        ends.clear();
        spanner.split(text, ends);
        let n = ends
            .len()
            .min(usize::try_from(budget).unwrap_or(usize::MAX));
        let mut start = 0;
        for &end in &ends[..n] {
            self.add(&text.as_bytes()[start..end], 1);
            start = end;
        }
        n as u64
    }

    /// Count the pieces of `texts` in order, at most `budget` of them; returns how many.
    pub fn add_texts_in_order(
        &mut self,
        spanner: &dyn Scanner,
        texts: &[String],
        nfc: bool,
        budget: u64,
    ) -> u64 {
        let mut ends = Vec::new();
        let mut counted = 0;
        for text in texts {
            if counted == budget {
                break;
            }
            counted += self.add_text(spanner, text, nfc, &mut ends, budget - counted);
        }
        counted
    }

    /// Add `count` occurrences of `word`.
    pub fn add(&mut self, word: &[u8], count: u64) {
        if let Some(c) = self.counts.get_mut(word) {
            *c += count;
        } else {
            self.counts.insert(word.into(), count);
        }
    }

    /// Add every count of `other` (merge two shards).
    pub fn merge(&mut self, other: WordTable) {
        if other.counts.len() > self.counts.len() {
            let mine = std::mem::replace(&mut self.counts, other.counts);
            for (word, count) in mine {
                *self.counts.entry(word).or_insert(0) += count;
            }
        } else {
            for (word, count) in other.counts {
                *self.counts.entry(word).or_insert(0) += count;
            }
        }
    }

    /// Count `texts` on the current rayon pool, at most `budget` pieces (the first ones, in
    /// the order of the texts, as a count on one thread would); returns how many. One
    /// contiguous share of the texts and one table per thread, merged at the end (a table per
    /// rayon task would mean merging many tables that each hold most of the words). When the
    /// budget ends inside a share, that share is counted again, up to the rest of the budget.
    pub fn add_texts(
        &mut self,
        spanner: &dyn Scanner,
        texts: &[String],
        nfc: bool,
        budget: u64,
    ) -> u64 {
        let share = texts
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1);
        let tables: Vec<(WordTable, u64)> = texts
            .par_chunks(share)
            .map(|chunk| {
                let mut table = WordTable::default();
                let counted = table.add_texts_in_order(spanner, chunk, nfc, budget);
                (table, counted)
            })
            .collect();
        let mut counted = 0;
        for ((table, n), chunk) in tables.into_iter().zip(texts.chunks(share)) {
            if counted == budget {
                break;
            }
            if n <= budget - counted {
                self.merge(table);
                counted += n;
            } else {
                counted += self.add_texts_in_order(spanner, chunk, nfc, budget - counted);
            }
        }
        counted
    }
}

/// GPT-2's byte order: the printable bytes (`!`..`~`, `¡`..`¬`, `®`..`ÿ`), then the others, each
/// group ascending. HF sorts its alphabet by the code points of the byte-level characters,
/// which is this order.
pub fn byte_order() -> Vec<u8> {
    let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || b >= 0xAE;
    let mut order: Vec<u8> = (0..=255u8).filter(|&b| printable(b)).collect();
    order.extend((0..=255u8).filter(|&b| !printable(b)));
    order
}

type Pair = (u32, u32);

/// A heap entry: a pair, its count when pushed, and the slot of [`WordLists`] holding the
/// words it was pushed for. The lists live outside the heap so that an entry is 24 bytes:
/// sifting through the heap is the trainer's largest cost, in cache misses.
struct Entry {
    count: u64,
    pair: Pair,
    slot: u32,
}

/// The word lists of the heap entries, by slot; the slots of merged entries are reused.
#[derive(Default)]
struct WordLists {
    lists: Vec<Vec<u32>>,
    free: Vec<u32>,
}

impl WordLists {
    fn store(&mut self, words: Vec<u32>) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.lists[slot as usize] = words;
                slot
            }
            None => {
                self.lists.push(words);
                (self.lists.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, slot: u32) -> Vec<u32> {
        self.free.push(slot);
        std::mem::take(&mut self.lists[slot as usize])
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.pair == other.pair
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// The larger count first, then the smaller pair (HF's order).
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| other.pair.cmp(&self.pair))
    }
}

/// What training learned: every token's bytes by id (`None` for the specials' ids) and the
/// merges `(left, right, merged)` in order.
pub struct Trained {
    pub tokens: Vec<Option<Vec<u8>>>,
    pub merges: Vec<(u32, u32, u32)>,
}

/// Options of [`train`].
pub struct TrainOptions {
    pub vocab_size: usize,
    /// Each special token's byte-level bytes (its text read as GPT-2 byte characters), or
    /// `None` when it is not byte-level text: a merge that makes those bytes reuses its id.
    pub specials: Vec<Option<Vec<u8>>>,
    pub min_frequency: u64,
    pub max_token_length: Option<usize>,
}

/// Record one count change of `pair` in word `w` (HF's `changes`, applied at once).
#[inline]
fn change(
    pair_counts: &mut FxHashMap<Pair, i64>,
    gained: &mut FxHashMap<Pair, Vec<u32>>,
    pair: Pair,
    delta: i64,
    w: u32,
) {
    *pair_counts.entry(pair).or_insert(0) += delta;
    if delta > 0 {
        let words = gained.entry(pair).or_default();
        if words.last() != Some(&w) {
            words.push(w);
        }
    }
}

/// Why [`train`] stopped without a result.
#[derive(Debug, PartialEq, Eq)]
pub enum TrainError {
    /// A merge made the text of this special token (HF would give that merge the special's id,
    /// which no byte-level vocabulary file can hold).
    MakesSpecial(usize),
    /// `progress` returned false (the caller was interrupted).
    Stopped,
}

/// Learn merges from `words` (bytes, count) with HF's rules. `progress(n_tokens)` is called
/// every few hundred merges; training stops when it returns false.
pub fn train(
    words: &[(&[u8], u64)],
    opts: &TrainOptions,
    mut progress: impl FnMut(usize) -> bool,
) -> Result<Trained, TrainError> {
    let n_special = opts.specials.len() as u32;
    let mut tokens: Vec<Option<Vec<u8>>> = vec![None; opts.specials.len()];
    let mut index: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
    for (i, special) in opts.specials.iter().enumerate() {
        if let Some(bytes) = special {
            index.entry(bytes.clone()).or_insert(i as u32);
        }
    }
    let mut byte_id = [0u32; 256];
    for (i, b) in byte_order().into_iter().enumerate() {
        byte_id[b as usize] = n_special + i as u32;
        tokens.push(Some(vec![b]));
        index.insert(vec![b], n_special + i as u32);
    }
    let mut lengths: Vec<usize> = tokens
        .iter()
        .map(|t| t.as_ref().map_or(0, Vec::len))
        .collect();
    let max_length = opts.max_token_length.unwrap_or(usize::MAX);
    let mut n_tokens = tokens.len();

    // Every word's token ids, one after the other in one arena (a merge shortens a word in
    // place), and where each starts and how long it is now: one allocation, not one per word.
    let mut arena: Vec<u32> = Vec::with_capacity(words.iter().map(|(w, _)| w.len()).sum());
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(words.len());
    for (w, _) in words {
        spans.push((arena.len(), w.len()));
        arena.extend(w.iter().map(|&b| byte_id[b as usize]));
    }
    let counts: Vec<i64> = words.iter().map(|&(_, c)| c as i64).collect();

    let mut pair_counts: FxHashMap<Pair, i64> = FxHashMap::default();
    let mut where_: FxHashMap<Pair, Vec<u32>> = FxHashMap::default();
    for (w, &(start, len)) in spans.iter().enumerate() {
        for pair in arena[start..start + len].windows(2) {
            change(
                &mut pair_counts,
                &mut where_,
                (pair[0], pair[1]),
                counts[w],
                w as u32,
            );
        }
    }
    let mut lists = WordLists::default();
    let mut heap: BinaryHeap<Entry> = where_
        .drain()
        .filter_map(|(pair, words)| {
            let count = pair_counts[&pair];
            (count > 0).then(|| Entry {
                count: count as u64,
                pair,
                slot: lists.store(words),
            })
        })
        .collect();

    let mut merges = Vec::new();
    let mut gained: FxHashMap<Pair, Vec<u32>> = FxHashMap::default();
    while n_tokens < opts.vocab_size {
        let Some(mut top) = heap.pop() else { break };
        let current = pair_counts[&top.pair] as u64; // (HF's cast; counts of candidates are >= 0)
        if top.count != current {
            top.count = current;
            heap.push(top);
            continue;
        }
        if top.count < 1 || top.count < opts.min_frequency {
            break;
        }
        let (left, right) = top.pair;
        let mut piece = tokens[left as usize].clone().unwrap_or_default();
        piece.extend_from_slice(tokens[right as usize].as_deref().unwrap_or_default());
        let new = match index.get(&piece) {
            Some(&id) if id < n_special => return Err(TrainError::MakesSpecial(id as usize)),
            Some(&id) => id,
            None => {
                let id = tokens.len() as u32;
                lengths.push(piece.len());
                index.insert(piece.clone(), id);
                tokens.push(Some(piece));
                n_tokens += 1;
                id
            }
        };
        merges.push((left, right, new));

        let merged_length = lengths[left as usize] + lengths[right as usize];
        for w in lists.take(top.slot) {
            let (start, len) = spans[w as usize];
            let word = &mut arena[start..start + len];
            let count = counts[w as usize];
            // HF's Word::merge: every occurrence left to right; -1 for the pairs it breaks, +1
            // for the pairs it makes when the two tokens are shorter than max_length. `n` is
            // the word's length as it shrinks.
            let mut n = len;
            let mut i = 0;
            while i < n {
                if word[i] == left && i + 1 < n && word[i + 1] == right {
                    if i > 0 {
                        let prev = word[i - 1];
                        change(&mut pair_counts, &mut gained, (prev, left), -count, w);
                        if lengths[prev as usize] + merged_length < max_length {
                            change(&mut pair_counts, &mut gained, (prev, new), count, w);
                        }
                    }
                    word[i] = new;
                    word.copy_within(i + 2..n, i + 1);
                    n -= 1;
                    if i + 1 < n {
                        let next = word[i + 1];
                        change(&mut pair_counts, &mut gained, (right, next), -count, w);
                        if lengths[next as usize] + merged_length < max_length {
                            change(&mut pair_counts, &mut gained, (new, next), count, w);
                        }
                    }
                }
                i += 1;
            }
            spans[w as usize].1 = n;
        }
        for (pair, words) in gained.drain() {
            let count = pair_counts[&pair];
            if count > 0 {
                heap.push(Entry {
                    count: count as u64,
                    pair,
                    slot: lists.store(words),
                });
            }
        }
        if merges.len() % 256 == 0 && !progress(n_tokens) {
            return Err(TrainError::Stopped);
        }
    }
    if !progress(n_tokens) {
        return Err(TrainError::Stopped);
    }
    Ok(Trained { tokens, merges })
}

/// Count `texts` on `pool` (or on this thread when there is none or one text), at most
/// `budget` pieces, the first ones in order; returns how many were counted.
pub fn count_parallel(
    table: &mut WordTable,
    spanner: &dyn Scanner,
    texts: &[String],
    nfc: bool,
    pool: Option<&rayon::ThreadPool>,
    budget: u64,
) -> u64 {
    match pool {
        Some(pool) if texts.len() > 1 => {
            pool.install(|| table.add_texts(spanner, texts, nfc, budget))
        }
        _ => table.add_texts_in_order(spanner, texts, nfc, budget),
    }
}

/// For each token id (`tokens[id]`, `None` for ids without bytes): the pair of ids token-rank
/// BPE ends with when it encodes the token's bytes using only lower ids (merge the adjacent
/// pair whose concatenation has the lowest id, until none is left), if it ends with exactly two
/// parts; `None` for single bytes and tokens it cannot make from two. This is the merge list of
/// a rank-based vocabulary (and, compared with trained merges, whether one is rank-based).
pub fn rank_pairs(tokens: &[Option<&[u8]>]) -> Vec<Option<(u32, u32)>> {
    let mut index: FxHashMap<&[u8], u32> = FxHashMap::default();
    for (id, token) in tokens.iter().enumerate() {
        if let Some(t) = token {
            index.insert(t, id as u32);
        }
    }
    // bounds: the start of each part, then the end of the piece; ranks[k]: the id of parts k
    // and k + 1 together, if a lower id than the token's (NO_RANK otherwise). A merge changes
    // only the pairs beside it, so only those are looked up again.
    let (mut bounds, mut ranks): (Vec<usize>, Vec<u32>) = (Vec::new(), Vec::new());
    tokens
        .iter()
        .enumerate()
        .map(|(id, token)| {
            let piece = (*token)?;
            if piece.len() < 2 {
                return None;
            }
            let rank_of =
                |bounds: &[usize], k: usize| match index.get(&piece[bounds[k]..bounds[k + 2]]) {
                    Some(&rank) if rank < id as u32 => rank,
                    _ => NO_RANK,
                };
            bounds.clear();
            bounds.extend(0..=piece.len());
            ranks.clear();
            ranks.extend((0..piece.len() - 1).map(|k| rank_of(&bounds, k)));
            while ranks.len() > 1 {
                // The lowest rank, leftmost on ties.
                let (k, &rank) = ranks.iter().enumerate().min_by_key(|&(k, &r)| (r, k))?;
                if rank == NO_RANK {
                    return None;
                }
                bounds.remove(k + 1);
                ranks.remove(k);
                if k > 0 {
                    ranks[k - 1] = rank_of(&bounds, k - 1);
                }
                if k < ranks.len() {
                    ranks[k] = rank_of(&bounds, k);
                }
            }
            let left = *index.get(&piece[..bounds[1]])?;
            let right = *index.get(&piece[bounds[1]..])?;
            Some((left, right))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(vocab_size: usize) -> TrainOptions {
        TrainOptions {
            vocab_size,
            specials: vec![],
            min_frequency: 0,
            max_token_length: None,
        }
    }

    #[test]
    fn rank_pairs_follow_the_lowest_id() {
        let tokens: Vec<Option<&[u8]>> = vec![
            Some(b"a"),
            Some(b"b"),
            Some(b"c"),
            Some(b"bc"),
            Some(b"ab"),
            Some(b"abc"),
            None,
        ];
        assert_eq!(
            rank_pairs(&tokens),
            vec![
                None,
                None,
                None,
                Some((1, 2)),
                Some((0, 1)),
                Some((0, 3)),
                None
            ]
        );
    }

    #[test]
    fn byte_order_is_gpt2s() {
        let order = byte_order();
        assert_eq!(order.len(), 256);
        assert_eq!(
            (order[0], order[93], order[188], order[255]),
            (b'!', b'~', 0x00, 0xAD)
        );
    }

    #[test]
    fn merges_the_most_frequent_pair_first_and_breaks_ties_by_smaller_pair() {
        let words: Vec<(&[u8], u64)> = vec![
            (b"hug", 10),
            (b"pug", 5),
            (b"pun", 12),
            (b"bun", 4),
            (b"hugs", 5),
        ];
        let trained = train(&words, &opts(259), |_| true).unwrap();
        let made: Vec<&[u8]> = trained
            .merges
            .iter()
            .map(|m| trained.tokens[m.2 as usize].as_deref().unwrap())
            .collect();
        assert_eq!(made, vec![&b"ug"[..], b"un", b"hug"]);
    }

    #[test]
    fn a_word_budget_counts_the_first_words_in_order_on_any_pool() {
        let scanner =
            crate::spanners::scanner_for_pattern(crate::spanners::CL100K_PATTERN).unwrap();
        let texts: Vec<String> = (0..40u8)
            .map(|i| format!("w{} x y z", char::from(b'a' + i % 26)))
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut whole = WordTable::default();
        assert_eq!(
            count_parallel(&mut whole, &*scanner, &texts, false, Some(&pool), u64::MAX),
            160
        );
        for budget in [0, 1, 5, 79, 80, 81, 159, 160, 161] {
            let mut one = WordTable::default();
            let mut many = WordTable::default();
            let counted = one.add_texts_in_order(&*scanner, &texts, false, budget);
            assert_eq!(counted, budget.min(160));
            assert_eq!(
                count_parallel(&mut many, &*scanner, &texts, false, Some(&pool), budget),
                counted
            );
            assert_eq!(one.counts, many.counts, "budget {budget}");
            assert_eq!(one.counts.values().sum::<u64>(), counted);
        }
        // 6 words: "wa", " x", " y", " z", "wb", " x".
        let mut table = WordTable::default();
        table.add_texts_in_order(&*scanner, &texts, false, 6);
        assert_eq!(table.counts.get(&b"wb"[..]), Some(&1));
        assert_eq!(table.counts.get(&b" x"[..]), Some(&2));
        assert_eq!(table.counts.get(&b" y"[..]), Some(&1));
    }

    #[test]
    fn overlapping_pairs_merge_left_to_right() {
        let words: Vec<(&[u8], u64)> = vec![(b"aaaa", 3)];
        let trained = train(&words, &opts(258), |_| true).unwrap();
        assert_eq!(trained.tokens[257].as_deref(), Some(&b"aaaa"[..]));
    }
}
