//! `sentencepiece`'s search of a whole text, a word at a time, each word's best path kept in
//! a per-thread cache and used again wherever it cannot differ.
//!
//! Where no piece crosses the start of a word (a `▁` after another character,
//! [`WordCuts`]), every path of the text passes through each word's start, so the search
//! of the whole text is the search of each word in turn, started at the best path's score
//! where the word starts (`g`). In real arithmetic a word's best path would not depend on `g`;
//! in `f32` it can: sentencepiece rounds every sum, and two near-equal paths may swap as `g`
//! grows (a long text's sums reach ±100,000 before the search rebases them). So a kept path
//! is used again only where rounding cannot change any choice made in the word. The word's
//! first search runs in `f64` from 0 and records, at each end, the margin between the best
//! candidate and the runner-up ([`Margins`]). The `f32` search from `g` makes the same
//! choices when every margin exceeds what rounding can move two candidates apart: at most
//! half an ulp per addition, `2 (d + 1) 2^-24 M` for paths of at most `d` tokens whose sums
//! stay within `±M` (`M`: `|g|` plus the largest candidate score within the word).
//! [`Line::fits`] asks for twice that, and that no sum in the word reaches the rebase. A word
//! that does not fit, or is too long to keep, is searched in `f32` from `g`, as the whole
//! text's search would search it; a kept word's tokens' scores are added to `g` in order, as
//! the search adds them, so `g` is always the score sentencepiece has there.
//!
//! The path of a word is its tokens, with each run of unknown characters read back as in the
//! whole text: no run crosses a word's start, as `▁` is a piece of its own.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use aho_corasick::AhoCorasick;
use memchr::memmem;

use super::{reset, Error, Leaf, Node, PrefixTrie, Score, Scratch, Unigram, NONE, REBASE};

/// `▁` (U+2581), a space in pieces.
const SPACE: &[u8] = "\u{2581}".as_bytes();
/// The caches a thread keeps: those of the encoders it used last.
const CACHES: usize = 4;
/// The most pieces holding a `▁` after another character that the word cuts look for (a
/// real model has a handful, if any).
const MOST_JOINED: usize = 1024;

static INSTANCES: AtomicU64 = AtomicU64::new(0);

/// A key no other encoder of the process has, for its caches.
pub(super) fn new_instance() -> u64 {
    INSTANCES.fetch_add(1, Ordering::Relaxed)
}

/// Where the words of a text start, for a model whose pieces allow it (see
/// [`Self::of`]): before each `▁` that follows another character, but inside a place that
/// spells one of the few pieces that hold such a `▁` (`>▁</`: a cut there would split it).
pub(super) struct WordCuts {
    /// Those pieces (None: the model has none).
    joined: Option<AhoCorasick>,
}

impl WordCuts {
    /// The cuts of a model of `pieces` (the searched ones): None when `▁` is no piece of its
    /// own (an unknown run could cross a cut) or too many pieces hold a `▁` after another
    /// character.
    pub(super) fn of<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> Option<Self> {
        let mut space = false;
        let mut joined: Vec<&[u8]> = Vec::new();
        for piece in pieces {
            space |= piece == SPACE;
            let mut rest = piece;
            while let Some(after) = rest.strip_prefix(SPACE) {
                rest = after;
            }
            if memmem::find(rest, SPACE).is_some() {
                joined.push(piece);
            }
        }
        if !space || joined.len() > MOST_JOINED {
            return None;
        }
        let joined = match joined.is_empty() {
            true => None,
            false => Some(AhoCorasick::new(&joined).ok()?),
        };
        Some(Self { joined })
    }

    /// The end of each word of `text`, in order, to `ends` (the last is the text's end).
    fn ends(&self, text: &[u8], ends: &mut Vec<usize>) {
        ends.clear();
        // (the places joined pieces spell, by start: no cut strictly inside one)
        let mut inside: Vec<(usize, usize)> = match &self.joined {
            Some(joined) => joined
                .find_overlapping_iter(text)
                .map(|m| (m.start(), m.end()))
                .collect(),
            None => Vec::new(),
        };
        inside.sort_unstable();
        let (mut next, mut covered_to) = (0, 0);
        // (where the last `▁` ends: one that starts there follows a `▁`; none at the start)
        let mut space_end = 0;
        for at in memchr::memchr_iter(SPACE[0], text) {
            if text.get(at + 1..at + 3) != Some(&SPACE[1..]) {
                continue;
            }
            while next < inside.len() && inside[next].0 < at {
                covered_to = covered_to.max(inside[next].1);
                next += 1;
            }
            if at != space_end && covered_to <= at {
                ends.push(at);
            }
            space_end = at + 3;
        }
        ends.push(text.len());
    }
}

/// What a search with margins records: at each end the best score of the candidates that lost
/// there (the runner-up), and the range of every candidate's score.
#[derive(Default)]
pub(super) struct Margins {
    runner_up: Vec<f64>,
    lowest: f64,
    highest: f64,
}

impl Margins {
    /// Ready for a search of `ends` ends.
    pub(super) fn reset(&mut self, ends: usize) {
        reset(&mut self.runner_up, ends, f64::NEG_INFINITY);
        self.lowest = f64::INFINITY;
        self.highest = f64::NEG_INFINITY;
    }

    /// `candidate` offered at end `at`, whose best so far is `node` (before the offer).
    #[inline(always)]
    pub(super) fn offer<F: Score>(&mut self, at: usize, node: &Node<F>, candidate: F) {
        let wide = candidate.wide();
        self.lowest = self.lowest.min(wide);
        self.highest = self.highest.max(wide);
        if node.start == NONE {
            return;
        }
        let loser = if candidate > node.score {
            node.score.wide()
        } else {
            wide
        };
        let runner_up = &mut self.runner_up[at];
        *runner_up = runner_up.max(loser);
    }

    /// The smallest margin of any end reached: its best score over its runner-up's.
    fn least(&self, nodes: &[Node<f64>]) -> f64 {
        nodes
            .iter()
            .zip(&self.runner_up)
            .skip(1)
            .filter(|(node, _)| node.start != NONE)
            .map(|(node, runner_up)| node.score - runner_up)
            .fold(f64::INFINITY, f64::min)
    }
}

/// A cache line: a kept word of up to [`LINE_WORD`] bytes and [`LINE_TOKENS`] tokens (each
/// a piece of the path: no unknown run), its tokens' scores, and what [`Self::fits`] weighs.
/// A hit reads one line of memory.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line {
    /// The word, zeros after it.
    word: [u8; LINE_WORD],
    /// Its length (0: an empty line; no word is empty).
    len: u8,
    tokens: u8,
    ids: [u32; LINE_TOKENS],
    scores: [f32; LINE_TOKENS],
    /// The smallest margin of the word's search ([`Margins::least`]) over its depth + 2 (the
    /// most tokens a path of it has, plus 2), rounded down.
    slack: f32,
    /// The largest magnitude of a candidate's score in it, from 0, rounded up.
    reach: f32,
}

/// The longest word a [`Line`] holds, in bytes (most words are shorter; `▁` is three).
const LINE_WORD: usize = 20;
/// The most tokens a [`Line`] holds.
const LINE_TOKENS: usize = 4;
/// The lines of a cache (2 MB), one place per word (a word replaces the one there).
const LINES: usize = 1 << 15;

impl Line {
    const EMPTY: Self = Line {
        word: [0; LINE_WORD],
        len: 0,
        tokens: 0,
        ids: [0; LINE_TOKENS],
        scores: [0.0; LINE_TOKENS],
        slack: 0.0,
        reach: 0.0,
    };

    /// Whether the `f32` search of the word from `g` makes the kept path's choices (see the
    /// module docs): no sum reaches the rebase, and every margin is over twice the rounding.
    fn fits(&self, g: f32) -> bool {
        fits(f64::from(self.slack), f64::from(self.reach), g)
    }
}

/// [`Line::fits`] of a word whose margin over its depth + 2 is `slack`.
fn fits(slack: f64, reach: f64, g: f32) -> bool {
    let most = f64::from(g).abs() + reach + 1.0;
    most < f64::from(REBASE) && slack > most * f64::powi(2.0, -22)
}

/// `word` zero-padded, and its line's place.
fn key_of(word: &[u8]) -> ([u8; LINE_WORD], usize) {
    let mut key = [0u8; LINE_WORD];
    key[..word.len()].copy_from_slice(word);
    let at = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
    let tail = u32::from_le_bytes(key[16..20].try_into().expect("4 bytes"));
    let mixed = at(0) ^ at(8).rotate_left(23) ^ (u64::from(tail) << 29) ^ word.len() as u64;
    // (Fibonacci hashing: the product's high bits mix every bit of the key)
    let place = mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LINES.trailing_zeros());
    (key, place as usize)
}

/// One encoder's kept words on one thread.
struct WordCache {
    owner: u64,
    lines: Box<[Line]>,
}

thread_local! {
    static WORD_CACHES: RefCell<Vec<WordCache>> = const { RefCell::new(Vec::new()) };
}

/// `owner`'s cache among a thread's, the last of them (made if missing, the oldest dropped).
fn cache_of(caches: &mut Vec<WordCache>, owner: u64) -> &mut WordCache {
    match caches.iter().position(|c| c.owner == owner) {
        Some(at) => {
            let cache = caches.remove(at);
            caches.push(cache);
        }
        None => {
            if caches.len() == CACHES {
                caches.remove(0);
            }
            let lines = vec![Line::EMPTY; LINES].into_boxed_slice();
            caches.push(WordCache { owner, lines });
        }
    }
    caches.last_mut().expect("a cache was just pushed")
}

/// `g` with each of `scores` added in turn, in `f32`, as the search adds them.
fn add_scores(g: f32, scores: &[f32]) -> f32 {
    scores.iter().fold(g, |g, &score| score + g)
}

impl Unigram {
    /// The ids of `piece` in `sentencepiece`'s arithmetic, a word at a time (see the module
    /// docs), appended to `out`.
    pub(super) fn encode_words(
        &self,
        cuts: &WordCuts,
        piece: &[u8],
        trie: &PrefixTrie<Leaf<f32>>,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let mut ends = std::mem::take(&mut scratch.word_ends);
        cuts.ends(piece, &mut ends);
        let done = WORD_CACHES.with_borrow_mut(|caches| {
            let cache = cache_of(caches, self.instance);
            let mut g = 0.0f32;
            let mut start = 0;
            for &end in &ends {
                g = self.encode_word(&piece[start..end], trie, scratch, cache, g, out)?;
                start = end;
            }
            Ok(())
        });
        scratch.word_ends = ends;
        done
    }

    /// The ids of `word`, whose path starts at `g`, appended to `out`; the score at its end.
    fn encode_word(
        &self,
        word: &[u8],
        trie: &PrefixTrie<Leaf<f32>>,
        scratch: &mut Scratch,
        cache: &mut WordCache,
        g: f32,
        out: &mut Vec<u32>,
    ) -> Result<f32, Error> {
        if word.len() > LINE_WORD {
            return self.search_from(word, trie, scratch, g, out);
        }
        let (key, place) = key_of(word);
        let line = &cache.lines[place];
        if usize::from(line.len) == word.len() && line.word == key {
            if !line.fits(g) {
                return self.search_from(word, trie, scratch, g, out);
            }
            let tokens = usize::from(line.tokens);
            out.extend_from_slice(&line.ids[..tokens]);
            return Ok(add_scores(g, &line.scores[..tokens]));
        }
        self.search_and_keep(word, key, trie, scratch, &mut cache.lines[place], g, out)
    }

    /// A word not kept: its search in `f64` from 0 with its margins, its path kept in `line`
    /// when one holds it, and its ids appended to `out` when its path fits `g` (else its
    /// search from `g`); the score at its end.
    #[allow(clippy::too_many_arguments)]
    fn search_and_keep(
        &self,
        word: &[u8],
        key: [u8; LINE_WORD],
        trie: &PrefixTrie<Leaf<f32>>,
        scratch: &mut Scratch,
        line: &mut Line,
        g: f32,
        out: &mut Vec<u32>,
    ) -> Result<f32, Error> {
        let unk = f64::from(self.unk32);
        let (nodes, margins) = (&mut scratch.nodes64, &mut scratch.margins);
        self.viterbi::<_, _, true>(word, trie, unk, 0.0, nodes, &mut scratch.text, margins)?;
        let nodes = &scratch.nodes64[..=word.len()];
        let margins = &scratch.margins;
        let depth = word.iter().filter(|&&b| b & 0xC0 != 0x80).count() as f64;
        let slack = margins.least(nodes) / (depth + 2.0);
        let reach = margins.lowest.abs().max(margins.highest.abs());
        let first = out.len();
        self.read_back(word, nodes, &mut scratch.path, out, None);
        // (the path's ends, last first: each token's score is its sum's step, exact in f64)
        let path = &scratch.path;
        let score = |end: u32| {
            let node = nodes[end as usize];
            (node.score - nodes[node.start as usize].score) as f32
        };
        let tokens = out.len() - first;
        // (kept when each token is a piece of the path: an unknown run's tokens are not)
        if tokens <= LINE_TOKENS && tokens == path.len() {
            let mut kept = Line {
                word: key,
                len: word.len() as u8,
                tokens: tokens as u8,
                slack: round_down(slack),
                reach: round_up(reach),
                ..Line::EMPTY
            };
            kept.ids[..tokens].copy_from_slice(&out[first..]);
            for (slot, &end) in kept.scores.iter_mut().zip(path.iter().rev()) {
                *slot = score(end);
            }
            *line = kept;
        }
        if fits(slack, reach, g) {
            return Ok(path.iter().rev().fold(g, |g, &end| score(end) + g));
        }
        out.truncate(first);
        self.search_from(word, trie, scratch, g, out)
    }

    /// The `f32` search of `word` from `g`, as the search of the whole text makes it: its
    /// ids appended to `out`, and the score at its end.
    fn search_from(
        &self,
        word: &[u8],
        trie: &PrefixTrie<Leaf<f32>>,
        scratch: &mut Scratch,
        g: f32,
        out: &mut Vec<u32>,
    ) -> Result<f32, Error> {
        let (nodes, margins) = (&mut scratch.nodes32, &mut scratch.margins);
        self.viterbi::<_, _, false>(word, trie, self.unk32, g, nodes, &mut scratch.text, margins)?;
        self.read_back(word, &scratch.nodes32, &mut scratch.path, out, None);
        Ok(scratch.nodes32[word.len()].score)
    }
}

/// `value` as an `f32` no larger.
fn round_down(value: f64) -> f32 {
    let narrow = value as f32;
    if f64::from(narrow) > value {
        narrow.next_down()
    } else {
        narrow
    }
}

/// `value` as an `f32` no smaller.
fn round_up(value: f64) -> f32 {
    let narrow = value as f32;
    if f64::from(narrow) < value {
        narrow.next_up()
    } else {
        narrow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(pieces: &[&str], text: &str) -> Option<Vec<usize>> {
        let cuts = WordCuts::of(pieces.iter().map(|p| p.as_bytes()))?;
        let mut ends = Vec::new();
        cuts.ends(text.as_bytes(), &mut ends);
        Some(ends)
    }

    #[test]
    fn words_start_at_a_space_after_another_character() {
        let pieces = ["▁", "▁▁a", "b"];
        assert_eq!(ends(&pieces, "▁a▁▁b▁c").unwrap(), [4, 11, 15]);
        assert_eq!(ends(&pieces, "ab").unwrap(), [2]);
        assert_eq!(ends(&pieces, "a▁").unwrap(), [1, 4]);
        assert_eq!(ends(&pieces, "").unwrap(), [0]);
    }

    #[test]
    fn no_cut_inside_a_piece_with_a_space_after_another_character() {
        let pieces = ["▁", "a▁", ">▁</"];
        assert_eq!(ends(&pieces, "▁xa▁b▁y").unwrap(), [9, 13]);
        assert_eq!(ends(&pieces, ">▁</p>▁q").unwrap(), [8, 12]);
        // (no `▁` of its own: an unknown run could cross a cut)
        assert!(ends(&["a", "b"], "a▁b").is_none());
    }

    #[test]
    fn a_margin_fits_while_rounding_cannot_reach_it() {
        // (a margin of 0.01 over a depth of 4)
        let slack = 0.01 / 6.0;
        assert!(fits(slack, 20.0, -100.0));
        // (|g| of 90,000: an ulp of 2^-7, so rounding may move 0.01)
        assert!(!fits(slack, 20.0, -90_000.0));
        // (sums would pass the rebase)
        assert!(!fits(1e9, 20.0, -99_990.0));
    }

    #[test]
    fn a_line_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Line>(), 64);
    }
}
