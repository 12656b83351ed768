//! `unigram`: the Unigram language model's segmentation (Viterbi) as `sentencepiece`
//! (`unigram_model.cc`, `Model::EncodeOptimized`), HF `tokenizers` (`models/unigram`) and
//! llama.cpp (`llm_tokenizer_ugm`) compute it; the Python package's
//! `encoders/unigram.py` is the reference the tests hold it to, and its module docstring
//! states the rules of the three styles.
//!
//! Every character start of a piece, in order, extends the best path that ends there by each
//! piece the text goes on with there (a walk down the [`PrefixTrie`] of the pieces, a step
//! per byte, shortest piece first, each piece's score read in the slot that ends it); a candidate replaces the best path where it ends
//! when none is there yet or when its score is strictly higher. Where no piece of exactly one
//! character starts, the unknown token covers that character. The path is read back from the
//! end; each run of unknown tokens becomes one token, the token that spells it (HF), or its
//! bytes' `<0xNN>` pieces (byte fallback).
//!
//! The styles differ in arithmetic: `hf` and `llama.cpp` add in `f64`; `sentencepiece` in
//! `f32` (C++ `float`), and it rebases the scores of the lattice when the best score at a
//! start leaves ±100,000 (what `EncodeOptimized` does so that a long text's sums keep their
//! precision). And in which pieces are whose: `sentencepiece`'s user-defined pieces (the
//! model's `user_defined`) score `0.1 × (bytes − 1)` and its byte pieces are out of the
//! search; llama.cpp's added tokens score 0. Positions are byte offsets; the buffers are each thread's, reused from piece
//! to piece.
//!
//! ```
//! use std::sync::Arc;
//! use wordsplit::encoders::unigram::{Style, Unigram};
//! use wordsplit::encoders::Encoder;
//! use wordsplit::MergeTables;
//!
//! let pieces = ["<unk>", "a", "b", "c", "d", "cd", "ab", "abc", "abcd"];
//! let tokens = pieces.iter().enumerate().map(|(i, p)| (p.as_bytes(), i as u32));
//! let tables = Arc::new(MergeTables::from_tokens(tokens, &[], 9, None, false).unwrap());
//! let scores = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 5.0, 10.0];
//! let model = Unigram::with_style(tables, Style::Hf, &scores, Some(0), false, "tiny").unwrap();
//! let mut out = Vec::new();
//! model.encode_piece(b"abcdacdxx", &mut out).unwrap();
//! assert_eq!(out, [8, 1, 5, 0]);
//! ```

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use super::prefix_trie::{PrefixTrie, TrieValue, NONE};
use super::Encoder;
use crate::error::Error;
use crate::spec::{DecoderSpec, DecoderStyle, ModelSpec, PipelineSpec};
use crate::tables::{prefetch_address, MergeTables};
use crate::Literal;

/// The unknown token's score below the lowest score (`kUnkPenalty`, `K_UNK_PENALTY`).
pub const UNK_PENALTY: f64 = 10.0;

/// `sentencepiece` rebases the lattice's scores when the best score at a start is beyond
/// ±this (`EncodeOptimized`'s `kRebaseThreshold`).
const REBASE: f32 = 100_000.0;

/// A path score's arithmetic: `f32` is sentencepiece's (its sums rebased past ±[`REBASE`]),
/// `f64` HF's and llama.cpp's (never rebased).
trait Score:
    Copy + Default + PartialOrd + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + 'static
{
    /// Zero (`Default::default` is no `const`).
    const ZERO: Self;
    /// Whether a path's score `here` is to be rebased before the search goes on from it.
    fn past_rebase(here: Self) -> bool;
}

impl Score for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn past_rebase(here: f32) -> bool {
        !(-REBASE..=REBASE).contains(&here)
    }
}

impl Score for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn past_rebase(_: f64) -> bool {
        false
    }
}

/// Whose Viterbi the encoder runs (the vocabulary's decoder style).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// HF `tokenizers`: `f64` scores and sums; an unknown run is the token that spells it,
    /// else its bytes, else the unknown token.
    Hf,
    /// `sentencepiece` 0.2.3: `f32` scores and sums, rebased; user-defined pieces score by
    /// their length.
    SentencePiece,
    /// llama.cpp's `ugm`: `f64` sums of `f32` scores; added tokens score 0.
    LlamaCpp,
}

/// A searched piece's id and its score in the search, in the trie's slot where it ends: the
/// step that finds a piece reads its score in the same cache line.
#[derive(Clone, Copy)]
struct Leaf<F> {
    id: u32,
    score: F,
}

impl<F: Score> TrieValue for Leaf<F> {
    const NONE: Self = Leaf {
        id: NONE,
        score: F::ZERO,
    };
    #[inline(always)]
    fn is_none(&self) -> bool {
        self.id == NONE
    }
    fn rank(&self) -> u32 {
        self.id
    }
}

/// The searched pieces in a style's arithmetic: their bytes to their ids and scores.
enum Search {
    /// `sentencepiece`'s.
    F32(PrefixTrie<Leaf<f32>>),
    /// HF's and llama.cpp's.
    F64(PrefixTrie<Leaf<f64>>),
    /// HF's and llama.cpp's where every searched score is an `f32` exactly (llama.cpp's
    /// always; HF's converted from a `.model`, T5's and ALBERT's): kept as `f32` and widened
    /// for the `f64` sums, which are then the same sums; a slot is 16 bytes, not 24 (no slot
    /// straddles two cache lines, and a third more of the trie fits a cache).
    F64Narrow(PrefixTrie<Leaf<f32>>),
}

/// A Unigram model's encoder (see the module docs).
pub struct Unigram {
    tables: Arc<MergeTables>,
    search: Search,
    style: Style,
    unk: Option<u32>,
    unk64: f64,
    unk32: f32,
    /// The most bytes a candidate covers: the longest searched piece's, or a character's (the
    /// unknown token's).
    reach: usize,
    byte_fallback: bool,
    /// The `<0xNN>` token of each byte ([`NONE`]: none).
    byte_ids: [u32; 256],
    vocab: String,
}

/// The best path that ends at a byte position of the piece: what a candidate that ends there
/// reads and writes, side by side.
#[derive(Clone, Copy)]
struct Node<F> {
    score: F,
    /// Where its last token starts ([`NONE`]: not reached).
    start: u32,
    /// That token.
    id: u32,
}

impl<F: Score> Node<F> {
    const UNREACHED: Self = Node {
        score: F::ZERO,
        start: NONE,
        id: NONE,
    };
}

/// The reused buffers of one thread's searches, by byte position of the piece.
#[derive(Default)]
struct Scratch {
    nodes32: Vec<Node<f32>>,
    nodes64: Vec<Node<f64>>,
    /// The ends of the best path's tokens, last first.
    path: Vec<u32>,
    /// The piece searched, and [`END`] after it.
    text: Vec<u8>,
}

/// How many positions before a node of the best path [`Unigram::read_back`] asks for: a
/// token is about 4 bytes of text, so some 16 steps of the path ahead.
const READ_AHEAD: usize = 64;

/// The byte after a searched piece's copy: no piece has it (they are UTF-8), so every walk
/// stops there at the latest and a step tests no bound.
const END: u8 = 0xFF;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The text of a byte's token: `<0x` + two uppercase hex digits + `>`.
fn byte_token(byte: u8) -> String {
    format!("<0x{byte:02X}>")
}

impl Unigram {
    /// The encoder of `spec`'s Unigram model (registered as `unigram`:
    /// [`super::unigram_spans::unigram_spans_encoder`]).
    pub fn new(
        tables: &Arc<MergeTables>,
        spec: &PipelineSpec,
        literals: &[Literal],
        scores: &[f64],
        vocab: &str,
    ) -> Result<Self, Error> {
        let ModelSpec::Unigram {
            unk_token,
            byte_fallback,
            user_defined,
        } = &spec.model
        else {
            return Err(Error::Unsupported(format!(
                "the unigram encoder runs a Unigram model, not {}",
                spec.model.kind()
            )));
        };
        let (style, unused) = match &spec.decoder {
            DecoderSpec::SentencePiece { style, unused, .. } => (
                match style {
                    DecoderStyle::SentencePiece => Style::SentencePiece,
                    DecoderStyle::LlamaCpp => Style::LlamaCpp,
                    _ => Style::Hf,
                },
                unused.as_slice(),
            ),
            _ => (Style::Hf, &[][..]),
        };
        let user_defined: HashSet<&[u8]> = match style {
            Style::SentencePiece => user_defined.iter().map(|t| t.as_bytes()).collect(),
            Style::LlamaCpp => literals
                .iter()
                .filter(|l| !l.special)
                .map(|l| l.text.as_bytes())
                .collect(),
            Style::Hf => HashSet::new(),
        };
        let unused: HashSet<&[u8]> = unused.iter().map(|t| t.as_bytes()).collect();
        let unk = if unk_token.is_empty() {
            None
        } else {
            let special = literals
                .iter()
                .find(|l| l.special && l.text == *unk_token)
                .map(|l| l.id);
            match tables.rank_of(unk_token.as_bytes()).or(special) {
                Some(id) => Some(id),
                None => {
                    return Err(Error::VocabFormat(format!(
                        "{vocab}: the Unigram model's unk_token {unk_token:?} is no token"
                    )))
                }
            }
        };
        let kinds = PieceKinds {
            style,
            byte_fallback: *byte_fallback,
            user_defined,
            unused,
        };
        Self::build(tables.clone(), &kinds, scores, unk, vocab)
    }

    /// The encoder of a vocabulary whose every token is a piece of no special kind, in
    /// `style` (for tests and the example; [`Self::new`] reads a pipeline's).
    pub fn with_style(
        tables: Arc<MergeTables>,
        style: Style,
        scores: &[f64],
        unk: Option<u32>,
        byte_fallback: bool,
        vocab: &str,
    ) -> Result<Self, Error> {
        let kinds = PieceKinds {
            style,
            byte_fallback,
            user_defined: HashSet::new(),
            unused: HashSet::new(),
        };
        Self::build(tables, &kinds, scores, unk, vocab)
    }

    fn build(
        tables: Arc<MergeTables>,
        kinds: &PieceKinds<'_>,
        scores: &[f64],
        unk: Option<u32>,
        vocab: &str,
    ) -> Result<Self, Error> {
        let style = kinds.style;
        let mut byte_ids = [NONE; 256];
        for (b, id) in byte_ids.iter_mut().enumerate() {
            *id = tables
                .rank_of(byte_token(b as u8).as_bytes())
                .unwrap_or(NONE);
        }
        let score_of = |id: u32| {
            scores.get(id as usize).copied().ok_or_else(|| {
                Error::VocabFormat(format!(
                    "{vocab}: token {id} of the Unigram model has no score"
                ))
            })
        };
        // The pieces the search finds (UTF-8 tokens: no text spells another), with their
        // kinds; the lowest score of the NORMAL ones.
        // (by id: the tables' spans, their bytes and the scores are then read in turn, not
        // at random as the index holds the ids)
        let mut ids: Vec<u32> = tables.bpe_ids().collect();
        ids.sort_unstable();
        let tokens: Vec<(&[u8], u32)> = ids
            .iter()
            .filter_map(|&id| Some((tables.token(id)?, id)))
            .collect();
        let every_utf8 = all_utf8(&tokens);
        let mut pieces: Vec<(&[u8], u32, Kind)> = Vec::with_capacity(tokens.len());
        for (token, id) in tokens {
            if !every_utf8 && std::str::from_utf8(token).is_err() {
                continue;
            }
            pieces.push((token, id, kinds.kind(token, id, &byte_ids)));
        }
        let mut min_normal = f64::INFINITY;
        for &(_, id, kind) in &pieces {
            if kind == Kind::Normal {
                min_normal = min_normal.min(score_of(id)?);
            }
        }
        let (unk64, unk32) = match style {
            Style::Hf => {
                let lowest = scores.iter().copied().fold(f64::INFINITY, f64::min);
                let lowest = if lowest.is_finite() { lowest } else { 0.0 };
                (lowest - UNK_PENALTY, 0.0)
            }
            Style::SentencePiece => {
                let lowest = if min_normal.is_finite() {
                    min_normal
                } else {
                    0.0
                };
                (0.0, (lowest - UNK_PENALTY) as f32)
            }
            Style::LlamaCpp => {
                if !min_normal.is_finite() {
                    return Err(Error::VocabFormat(format!(
                        "{vocab}: a llama.cpp Unigram model needs a NORMAL token"
                    )));
                }
                (f64::from((min_normal - UNK_PENALTY) as f32), 0.0)
            }
        };
        let mut searched32: Vec<(&[u8], Leaf<f32>)> = Vec::new();
        let mut searched64: Vec<(&[u8], Leaf<f64>)> = Vec::new();
        for &(token, id, kind) in &pieces {
            match (style, kind) {
                (_, Kind::Skipped) => continue,
                (Style::SentencePiece, Kind::UserDefined) => {
                    // (float)(0.1 * (bytes - 1)): computed in double, stored as float.
                    let score = (0.1 * (token.len() as f64 - 1.0)) as f32;
                    searched32.push((token, Leaf { id, score }));
                }
                (Style::SentencePiece, _) => {
                    let score = score_of(id)? as f32;
                    searched32.push((token, Leaf { id, score }));
                }
                (Style::LlamaCpp, Kind::UserDefined) => {
                    searched64.push((token, Leaf { id, score: 0.0 }));
                }
                _ => searched64.push((
                    token,
                    Leaf {
                        id,
                        score: score_of(id)?,
                    },
                )),
            }
        }
        let longest = searched32.iter().map(|(t, _)| t.len());
        let reach = longest
            .chain(searched64.iter().map(|(t, _)| t.len()))
            .fold(4, usize::max);
        let narrow = |score: f64| f64::from(score as f32) == score;
        let search = match style {
            Style::SentencePiece => Search::F32(PrefixTrie::new(searched32)),
            _ if searched64.iter().all(|(_, leaf)| narrow(leaf.score)) => {
                Search::F64Narrow(PrefixTrie::new(searched64.into_iter().map(|(t, leaf)| {
                    let score = leaf.score as f32;
                    (t, Leaf { id: leaf.id, score })
                })))
            }
            _ => Search::F64(PrefixTrie::new(searched64)),
        };
        Ok(Self {
            search,
            tables,
            style,
            unk,
            unk64,
            unk32,
            reach,
            byte_fallback: kinds.byte_fallback,
            byte_ids,
            vocab: vocab.to_owned(),
        })
    }

    /// The ids of `piece` (UTF-8 text), appended to `out`.
    pub fn encode(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        self.search_and_read(piece, out, None)
    }

    /// The search of `piece` in the model's arithmetic and the best path's tokens appended
    /// to `out` ([`Self::read_back`]), with their lengths to `lengths` when asked.
    fn search_and_read(
        &self,
        piece: &[u8],
        out: &mut Vec<u32>,
        lengths: Option<&mut Vec<usize>>,
    ) -> Result<(), Error> {
        if piece.is_empty() {
            return Ok(());
        }
        SCRATCH.with_borrow_mut(|s| {
            match &self.search {
                Search::F32(trie) => {
                    self.viterbi(piece, trie, self.unk32, &mut s.nodes32, &mut s.text)?;
                    self.read_back(piece, &s.nodes32, &mut s.path, out, lengths);
                }
                Search::F64(trie) => {
                    self.viterbi(piece, trie, self.unk64, &mut s.nodes64, &mut s.text)?;
                    self.read_back(piece, &s.nodes64, &mut s.path, out, lengths);
                }
                Search::F64Narrow(trie) => {
                    self.viterbi(piece, trie, self.unk64, &mut s.nodes64, &mut s.text)?;
                    self.read_back(piece, &s.nodes64, &mut s.path, out, lengths);
                }
            }
            Ok(())
        })
    }

    /// The search in `F`'s arithmetic (`f64` for `hf` and `llama.cpp`, `f32` with
    /// sentencepiece's rebasing), of pieces whose scores the trie keeps as `S` (`F`, or `f32`
    /// widened exactly to `f64`): fills `nodes` by end position.
    fn viterbi<F: Score, S: Score + Into<F>>(
        &self,
        piece: &[u8],
        trie: &PrefixTrie<Leaf<S>>,
        unk_score: F,
        nodes: &mut Vec<Node<F>>,
        text: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let n = piece.len();
        reset(nodes, n + 1, Node::UNREACHED);
        let nodes = &mut nodes[..=n];
        text.clear();
        text.extend_from_slice(piece);
        text.push(END);
        let text = &text[..=n];
        let root = trie.root();
        let mut start = 0;
        while start < n {
            let mut here = nodes[start].score;
            if F::past_rebase(here) {
                // Every reached node from here on holds a score relative to `here` (the
                // nodes before `start` are final): subtracting it keeps the sums small, so
                // their f32 rounding stays what sentencepiece's is. No candidate so far ends
                // further than `reach` past `start`. Each rebase costs that many nodes at
                // most, and sums drop by at least REBASE between two.
                let last = n.min(start + self.reach);
                for (i, node) in nodes.iter_mut().enumerate().take(last + 1).skip(start) {
                    if i == start || node.start != NONE {
                        node.score = node.score - here;
                    }
                }
                here = F::ZERO;
            }
            let end = start + char_width(piece[start]).min(n - start);
            let mut single = false;
            let mut cursor = root;
            let mut pos = start;
            loop {
                // SAFETY: `pos` is at most `n` (no step is taken on the `END` at `n`), and
                // `text` has `n + 1` bytes.
                let byte = unsafe { *text.get_unchecked(pos) };
                let Some(leaf) = trie.advance(&mut cursor, byte) else {
                    break;
                };
                pos += 1;
                if leaf.id == NONE {
                    continue;
                }
                let candidate = leaf.score.into() + here;
                // SAFETY: `pos` is at most `n`, and `nodes` has `n + 1` nodes.
                let node = unsafe { nodes.get_unchecked_mut(pos) };
                if node.start == NONE || candidate > node.score {
                    *node = Node {
                        score: candidate,
                        start: start as u32,
                        id: leaf.id,
                    };
                }
                single |= pos == end;
            }
            if !single {
                let candidate = unk_score + here;
                let node = &mut nodes[end];
                if node.start == NONE || candidate > node.score {
                    let Some(unk) = self.unk else {
                        return Err(self.no_unknown(&piece[start..end]));
                    };
                    *node = Node {
                        score: candidate,
                        start: start as u32,
                        id: unk,
                    };
                }
            }
            start = end;
        }
        Ok(())
    }

    /// The best path's tokens, each run of unknown ones joined ([`Self::unknown_run`]), and
    /// with `lengths` each token's length in bytes of `piece` (see
    /// [`Self::encode_with_lengths`]).
    fn read_back<F>(
        &self,
        piece: &[u8],
        nodes: &[Node<F>],
        path: &mut Vec<u32>,
        out: &mut Vec<u32>,
        mut lengths: Option<&mut Vec<usize>>,
    ) {
        path.clear();
        let mut end = piece.len();
        while end > 0 {
            path.push(end as u32);
            // Each step's node is where the one before points, a load after a load: the
            // nodes some tokens before are asked for ahead (12 lines of `f32` nodes).
            prefetch_address(nodes.as_ptr().wrapping_add(end.saturating_sub(READ_AHEAD)));
            end = nodes[end].start as usize;
        }
        let unk = self.unk.unwrap_or(NONE);
        let mut run_start = None;
        for k in (0..path.len()).rev() {
            let end = path[k] as usize;
            let (start, id) = (nodes[end].start as usize, nodes[end].id);
            if id != unk {
                out.push(id);
                if let Some(lengths) = lengths.as_deref_mut() {
                    lengths.push(end - start);
                }
                continue;
            }
            let first = *run_start.get_or_insert(start);
            if k == 0 || nodes[path[k - 1] as usize].id != unk {
                let before = out.len();
                self.unknown_run(&piece[first..end], out);
                if let Some(lengths) = lengths.as_deref_mut() {
                    match out.len() - before {
                        1 => lengths.push(end - first),
                        bytes => lengths.extend(std::iter::repeat_n(1, bytes)),
                    }
                }
                run_start = None;
            }
        }
    }

    /// The tokens of a run of unknown characters (see the module docs).
    #[cold]
    fn unknown_run(&self, run: &[u8], out: &mut Vec<u32>) {
        if self.style == Style::Hf {
            if let Some(id) = self.tables.rank_of(run) {
                out.push(id);
                return;
            }
        }
        if self.byte_fallback && run.iter().all(|&b| self.byte_ids[usize::from(b)] != NONE) {
            out.extend(run.iter().map(|&b| self.byte_ids[usize::from(b)]));
            return;
        }
        out.push(self.unk.unwrap_or(NONE));
    }

    /// The error of a character no piece covers in a model without an unknown token.
    #[cold]
    fn no_unknown(&self, char: &[u8]) -> Error {
        Error::MissingUnknownToken {
            vocab: self.vocab.clone(),
            piece: String::from_utf8_lossy(char).into_owned(),
            token: String::new(),
        }
    }

    /// [`Self::encode`], and the length in bytes of the part of `piece` each token stands for,
    /// appended to `lengths`, from the same search's path: a token its bytes of the path, a
    /// run of unknown characters the whole run when it is one token, a byte each when it is
    /// its bytes' tokens.
    pub fn encode_with_lengths(
        &self,
        piece: &[u8],
        out: &mut Vec<u32>,
        lengths: &mut Vec<usize>,
    ) -> Result<(), Error> {
        self.search_and_read(piece, out, Some(lengths))
    }
}

/// `buffer` as `len` copies of `value`, reusing its memory.
#[inline]
fn reset<T: Copy>(buffer: &mut Vec<T>, len: usize, value: T) {
    buffer.clear();
    buffer.resize(len, value);
}

/// Whether every one of `tokens` is UTF-8 on its own, in one check of them all rather than
/// one per token: their bytes joined are UTF-8 and each token begins a character (so each
/// ends one as well, where the next begins or the bytes end).
fn all_utf8(tokens: &[(&[u8], u32)]) -> bool {
    let begins = |t: &[u8]| t.first().is_none_or(|&b| !(0x80..0xC0).contains(&b));
    if !tokens.iter().all(|&(t, _)| begins(t)) {
        return false;
    }
    let joined: Vec<u8> = tokens
        .iter()
        .flat_map(|&(t, _)| t.iter().copied())
        .collect();
    std::str::from_utf8(&joined).is_ok()
}

/// The bytes of the UTF-8 character whose first byte is `lead`.
#[inline(always)]
fn char_width(lead: u8) -> usize {
    match lead {
        0..=0x7F => 1,
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        _ => 2,
    }
}

/// What the search does with a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Normal,
    /// `sentencepiece`'s USER_DEFINED pieces, llama.cpp's added tokens.
    UserDefined,
    /// In the search, not among the NORMAL pieces' lowest score (llama.cpp's UNUSED).
    Unused,
    /// Out of the search (`sentencepiece`'s UNUSED and BYTE pieces).
    Skipped,
}

/// Which pieces are of which [`Kind`] in a style.
struct PieceKinds<'a> {
    style: Style,
    byte_fallback: bool,
    user_defined: HashSet<&'a [u8]>,
    unused: HashSet<&'a [u8]>,
}

impl PieceKinds<'_> {
    fn kind(&self, token: &[u8], id: u32, byte_ids: &[u32; 256]) -> Kind {
        match self.style {
            Style::Hf => Kind::Normal,
            Style::SentencePiece => {
                let byte_piece = token.len() == 6
                    && token.starts_with(b"<0x")
                    && byte_ids.contains(&id)
                    && self.byte_fallback;
                if byte_piece || self.unused.contains(token) {
                    Kind::Skipped
                } else if self.user_defined.contains(token) {
                    Kind::UserDefined
                } else {
                    Kind::Normal
                }
            }
            Style::LlamaCpp => {
                if self.user_defined.contains(token) {
                    Kind::UserDefined
                } else if self.unused.contains(token) {
                    Kind::Unused
                } else {
                    Kind::Normal
                }
            }
        }
    }
}

impl Encoder for Unigram {
    fn name(&self) -> &str {
        "unigram"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        let first = out.len();
        self.encode(piece, out).inspect_err(|_| out.truncate(first))
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
#[path = "unigram_tests.rs"]
mod tests;
