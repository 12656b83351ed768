//! `character-bpe`: HF tokenizers' BPE model with the options byte-level BPE does not have
//! (CLIP's `</w>` end-of-word suffix, a continuing-subword prefix, the unknown token with or
//! without `fuse_unk`), the native twin of the Python package's `encoders/character_bpe.py`,
//! the reference the tests hold it to.
//!
//! As HF's `BPE::merge_word`: each character of a piece (each byte, for a byte-level model)
//! is a symbol, every one after the first spelled with the prefix and the last one with the
//! suffix; a symbol that is no token becomes the unknown token (a run of them one token with
//! `fuse_unk`), or is dropped when the model has none, and a piece that needs an unknown token
//! the vocabulary lacks is an error ([`Error::MissingUnknownToken`]), as in HF. Then
//! `Word::merge_all`: the adjacent pair of lowest rank in the merge list becomes one symbol,
//! the leftmost on ties, until no listed pair is left. A merge makes the token of the left
//! symbol's bytes and the right one's after the prefix's length (HF's `BpeBuilder` rule; the
//! readers checked that it is a token). HF's cache of words and its `ignore_merges` shortcut
//! change no ids; the pipeline's piece caches stand for the first, and files with the second
//! are refused at load, as is `dropout`.
//!
//! Short pieces merge by sweeping their pairs' ranks ([`SWEEP_SYMBOLS`]), longer ones with
//! HF's own heap of pairs, O(n log n); the two give the same merges (tested below).
//!
//! ```
//! use std::sync::Arc;
//! use wordsplit::encoders::character_bpe::CharacterBpe;
//! use wordsplit::encoders::Encoder;
//! use wordsplit::spec::ModelSpec;
//! use wordsplit::MergeTables;
//!
//! let tokens = ["[UNK]", "l", "o", "w", "o</w>", "w</w>", "lo", "low</w>"];
//! let bpe = tokens.iter().enumerate().map(|(i, t)| (t.as_bytes(), i as u32));
//! // (l, o) and (lo, w</w>) merge, in that order.
//! let tables = MergeTables::from_tokens(bpe, &[], 8, Some(vec![(1, 2, 0), (6, 5, 1)]), false);
//! let model = ModelSpec::CharacterBpe {
//!     unk_token: "[UNK]".into(),
//!     fuse_unk: false,
//!     end_of_word_suffix: "</w>".into(),
//!     byte_level: false,
//!     continuing_subword_prefix: String::new(),
//! };
//! let encoder = CharacterBpe::new(&Arc::new(tables.unwrap()), &model, "tiny").unwrap();
//! let mut out = Vec::new();
//! encoder.encode_piece(b"low", &mut out).unwrap();
//! encoder.encode_piece("lxéo".as_bytes(), &mut out).unwrap();
//! assert_eq!(out, [7, 1, 0, 0, 4]);
//! ```

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::wordpiece::Unknown;
use super::Encoder;
use crate::error::Error;
use crate::spec::ModelSpec;
use crate::tables::MergeTables;

/// Pieces of up to this many symbols merge by sweeping the ranks of their pairs (each merge
/// one pass over them: quadratic, but on a word's few symbols faster than a heap); longer
/// ones with a heap of pairs, as HF does.
pub const SWEEP_SYMBOLS: usize = 48;

/// No token, no rank, no symbol.
const NONE: u32 = u32::MAX;

/// The encoder registered as `name` (`character-bpe`) for the CharacterBpe model `model`
/// over a vocabulary's tables; `vocab` names it in errors. None for another name; an error
/// when the model is not the encoder's, or another model of HF's BPE is given to it.
pub fn character_bpe_encoder(
    name: &str,
    tables: &Arc<MergeTables>,
    model: &ModelSpec,
    vocab: &str,
) -> Option<Result<Box<dyn Encoder>, Error>> {
    match (name, model) {
        ("character-bpe", ModelSpec::CharacterBpe { .. }) => {
            Some(CharacterBpe::new(tables, model, vocab).map(|e| Box::new(e) as Box<dyn Encoder>))
        }
        ("character-bpe", other) => Some(Err(Error::Unsupported(format!(
            "the character-bpe encoder runs a CharacterBpe model, not {}",
            other.kind()
        )))),
        (_, ModelSpec::CharacterBpe { .. }) => Some(Err(Error::Unsupported(format!(
            "a CharacterBpe model runs on the character-bpe encoder, not {name}"
        )))),
        _ => None,
    }
}

/// HF's BPE over characters (see the module docs).
pub struct CharacterBpe {
    tables: Arc<MergeTables>,
    /// `(left id, right id)` → `(rank, id of the token the merge makes)`.
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    /// None: the model has no unknown token, and a symbol that is no token is dropped.
    unknown: Option<Unknown>,
    fuse_unk: bool,
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    byte_level: bool,
    /// The id of each byte as a whole symbol (an ASCII character, or any byte of a
    /// byte-level model) spelled four ways: alone, after the prefix, before the suffix, and
    /// both; [`NONE`] when that is no token. Most symbols are found here without hashing.
    units: Box<[[u32; 4]; 256]>,
}

/// A piece's symbols while it merges: each one's token and the end of the bytes of the
/// piece it stands for, and the links of HF's heap merge. Each thread's, reused.
#[derive(Default)]
struct Scratch {
    ids: Vec<u32>,
    ends: Vec<usize>,
    /// The sweep's rank of each symbol's pair with the next one.
    ranks: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    heap: BinaryHeap<Reverse<(u32, u32)>>,
    key: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl CharacterBpe {
    /// The encoder of a CharacterBpe `model` over `tables` (its tokens and pair-ranked
    /// merges), named `vocab` in errors. A merge whose tokens are not the vocabulary's, or
    /// that makes no token, is a [`Error::VocabFormat`] (the readers refuse such files).
    pub fn new(tables: &Arc<MergeTables>, model: &ModelSpec, vocab: &str) -> Result<Self, Error> {
        let ModelSpec::CharacterBpe {
            unk_token,
            fuse_unk,
            end_of_word_suffix,
            byte_level,
            continuing_subword_prefix,
        } = model
        else {
            return Err(Error::Unsupported(format!(
                "the character-bpe encoder runs a CharacterBpe model, not {}",
                model.kind()
            )));
        };
        let prefix = continuing_subword_prefix.as_bytes().to_vec();
        let mut merges = FxHashMap::default();
        let mut made = Vec::new();
        for (&(left, right), &rank) in tables.merges().into_iter().flatten() {
            let (Some(a), Some(b)) = (tables.token(left), tables.token(right)) else {
                return Err(Error::VocabFormat(format!(
                    "{vocab}: merge #{rank} ({left}, {right}) names an id that is not a token"
                )));
            };
            made.clear();
            made.extend_from_slice(a);
            made.extend_from_slice(b.get(prefix.len()..).unwrap_or_default());
            let Some(id) = tables.rank_of(&made) else {
                return Err(Error::VocabFormat(format!(
                    "{vocab}: merge #{rank} ({left}, {right}) makes {:?}, which is not a token",
                    String::from_utf8_lossy(&made)
                )));
            };
            merges.insert((left, right), (rank, id));
        }
        let mut encoder = Self {
            tables: Arc::clone(tables),
            merges,
            unknown: (!unk_token.is_empty()).then(|| Unknown::new(tables, unk_token, vocab)),
            fuse_unk: *fuse_unk,
            prefix,
            suffix: end_of_word_suffix.as_bytes().to_vec(),
            byte_level: *byte_level,
            units: Box::new([[NONE; 4]; 256]),
        };
        let mut units = Box::new([[NONE; 4]; 256]);
        let mut key = Vec::new();
        for (byte, ids) in units.iter_mut().enumerate() {
            if byte < 0x80 || encoder.byte_level {
                for (way, id) in ids.iter_mut().enumerate() {
                    *id = encoder.lookup(&[byte as u8], way & 1 != 0, way & 2 != 0, &mut key);
                }
            }
        }
        encoder.units = units;
        Ok(encoder)
    }

    /// The id of the symbol `unit`, after the prefix when `prefixed`, before the suffix when
    /// `suffixed`; [`NONE`] when that is no token. `key` is room for the spelling.
    fn lookup(&self, unit: &[u8], prefixed: bool, suffixed: bool, key: &mut Vec<u8>) -> u32 {
        key.clear();
        if prefixed {
            key.extend_from_slice(&self.prefix);
        }
        key.extend_from_slice(unit);
        if suffixed {
            key.extend_from_slice(&self.suffix);
        }
        self.tables.rank_of(key).unwrap_or(NONE)
    }

    /// The id of the symbol `piece[start..end]`, the first when `start` is 0 and the last
    /// when `end` is the piece's end.
    #[inline]
    fn symbol(&self, piece: &[u8], start: usize, end: usize, key: &mut Vec<u8>) -> u32 {
        let (prefixed, suffixed) = (start > 0, end == piece.len());
        if end - start == 1 && (self.byte_level || piece[start] < 0x80) {
            let way = usize::from(prefixed) | usize::from(suffixed) << 1;
            return self.units[usize::from(piece[start])][way];
        }
        self.lookup(&piece[start..end], prefixed, suffixed, key)
    }

    /// Fills `scratch.ids` and `scratch.ends` with the symbols of `piece` (HF's
    /// `merge_word` before merging), each with the end of its bytes in the piece.
    fn symbols(&self, piece: &[u8], scratch: &mut Scratch) -> Result<(), Error> {
        let Scratch { ids, ends, key, .. } = scratch;
        ids.clear();
        ends.clear();
        // The end of a run of symbols that are no token, waiting for its unknown token.
        let mut unknown: Option<usize> = None;
        let mut start = 0;
        while start < piece.len() {
            let end = if self.byte_level {
                start + 1
            } else {
                next_char(piece, start)
            };
            let id = self.symbol(piece, start, end, key);
            if id != NONE {
                if let Some(at) = unknown.take() {
                    self.push_unknown(piece, at, ids, ends)?;
                }
                ids.push(id);
                ends.push(end);
            } else if self.unknown.is_some() {
                if let Some(at) = unknown.filter(|_| !self.fuse_unk) {
                    self.push_unknown(piece, at, ids, ends)?;
                }
                unknown = Some(end);
            }
            start = end;
        }
        if let Some(at) = unknown {
            self.push_unknown(piece, at, ids, ends)?;
        }
        Ok(())
    }

    #[cold]
    fn push_unknown(
        &self,
        piece: &[u8],
        end: usize,
        ids: &mut Vec<u32>,
        ends: &mut Vec<usize>,
    ) -> Result<(), Error> {
        let unknown = self
            .unknown
            .as_ref()
            .expect("a model with an unknown token");
        unknown.push(piece, ids)?;
        ends.push(end);
        Ok(())
    }

    /// The rank of merging `left` and `right`, and the token it makes.
    #[inline]
    fn merge_of(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        self.merges.get(&(left, right)).copied()
    }

    /// Calls `emit(id, end)` for each token of `piece`, with the end of the bytes of the
    /// piece it stands for.
    fn tokens(&self, piece: &[u8], mut emit: impl FnMut(u32, usize)) -> Result<(), Error> {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            self.symbols(piece, scratch)?;
            if scratch.ids.len() <= SWEEP_SYMBOLS {
                self.merge_sweeping(scratch);
                for (&id, &end) in scratch.ids.iter().zip(&scratch.ends) {
                    emit(id, end);
                }
            } else {
                self.merge_heap(scratch);
                let mut at = 0;
                while at != NONE {
                    let i = at as usize;
                    emit(scratch.ids[i], scratch.ends[i]);
                    at = scratch.next[i];
                }
            }
            Ok(())
        })
    }

    /// Merges the symbols in place: the pair of lowest rank, leftmost first, each time.
    fn merge_sweeping(&self, scratch: &mut Scratch) {
        let Scratch {
            ids, ends, ranks, ..
        } = scratch;
        ranks.clear();
        ranks.extend(
            ids.windows(2)
                .map(|pair| self.merge_of(pair[0], pair[1]).map_or(NONE, |m| m.0)),
        );
        // (the first of the lowest: `min_by_key` keeps the first of equals)
        while let Some((at, _)) = ranks
            .iter()
            .enumerate()
            .min_by_key(|&(_, &rank)| rank)
            .filter(|&(_, &rank)| rank != NONE)
        {
            let (_, made) = self
                .merge_of(ids[at], ids[at + 1])
                .expect("a ranked pair merges");
            ids[at] = made;
            ids.remove(at + 1);
            ends.remove(at);
            ranks.remove(at);
            let rank_at = |i: usize| self.merge_of(ids[i], ids[i + 1]).map_or(NONE, |m| m.0);
            if at > 0 {
                ranks[at - 1] = rank_at(at - 1);
            }
            if at < ranks.len() {
                ranks[at] = rank_at(at);
            }
        }
    }

    /// HF's `Word::merge_all`: a heap of the adjacent pairs that merge, by rank and then
    /// position; a pair taken whose symbols changed since it was pushed is skipped. The
    /// symbols are left linked from the first (`next`, ending with [`NONE`]).
    fn merge_heap(&self, scratch: &mut Scratch) {
        let Scratch {
            ids,
            ends,
            prev,
            next,
            heap,
            ..
        } = scratch;
        let n = ids.len() as u32;
        prev.clear();
        next.clear();
        prev.extend((0..n).map(|i| i.checked_sub(1).unwrap_or(NONE)));
        next.extend((1..=n).map(|i| if i == n { NONE } else { i }));
        heap.clear();
        for at in 0..ids.len().saturating_sub(1) {
            if let Some((rank, _)) = self.merge_of(ids[at], ids[at + 1]) {
                heap.push(Reverse((rank, at as u32)));
            }
        }
        while let Some(Reverse((rank, at))) = heap.pop() {
            let i = at as usize;
            // A symbol merged into the one before it has no `prev` link to it any more.
            let alive = i == 0 || prev[i] != NONE;
            let right = next[i];
            if !alive || right == NONE {
                continue;
            }
            let r = right as usize;
            let Some((now, made)) = self.merge_of(ids[i], ids[r]) else {
                continue;
            };
            if now != rank {
                continue;
            }
            ids[i] = made;
            ends[i] = ends[r];
            next[i] = next[r];
            prev[r] = NONE;
            next[r] = NONE;
            if next[i] != NONE {
                prev[next[i] as usize] = at;
            }
            if prev[i] != NONE {
                let p = prev[i] as usize;
                if let Some((rank, _)) = self.merge_of(ids[p], ids[i]) {
                    heap.push(Reverse((rank, prev[i])));
                }
            }
            if next[i] != NONE {
                if let Some((rank, _)) = self.merge_of(ids[i], ids[next[i] as usize]) {
                    heap.push(Reverse((rank, at)));
                }
            }
        }
    }
}

/// The end of the UTF-8 character that starts at `start` (a piece of text is UTF-8; a
/// stray continuation byte is a character of its own).
#[inline]
fn next_char(piece: &[u8], start: usize) -> usize {
    let mut end = start + 1;
    while end < piece.len() && piece[end] & 0xC0 == 0x80 {
        end += 1;
    }
    end
}

impl Encoder for CharacterBpe {
    fn name(&self) -> &str {
        "character-bpe"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        let first = out.len();
        let done = self.tokens(piece, |id, _| out.push(id));
        if done.is_err() {
            out.truncate(first);
        }
        done
    }

    fn is_native(&self) -> bool {
        true
    }

    /// Where HF's offsets place each token (see [`CharacterBpe::spans`]).
    fn token_spans(&self, piece: &[u8], out: &mut Vec<(usize, usize)>) -> Result<bool, Error> {
        self.spans(piece, out)?;
        Ok(true)
    }
}

/// The UTF-8 length of byte `b`'s character in ByteLevel's alphabet: printable ASCII is
/// itself, every other byte a character from U+00A1 on.
fn byte_level_width(b: u8) -> usize {
    if (0x21..=0x7E).contains(&b) {
        1
    } else {
        2
    }
}

impl CharacterBpe {
    /// Where HF's offsets place each token of `piece`, `(start, end)` in its bytes, appended
    /// to `out`: HF adds up the lengths of the symbols kept from the piece's start, so a
    /// character dropped (no token, and no unknown token) has no length and the tokens after
    /// it are placed that much earlier; a byte-level vocabulary's lengths are its bytes'
    /// characters in ByteLevel's alphabet (one or two bytes), a place read back as the byte
    /// whose character holds it. (The Python package's `CharacterBpeEncoder.token_spans`.)
    pub fn spans(&self, piece: &[u8], out: &mut Vec<(usize, usize)>) -> Result<(), Error> {
        // The length kept up to each symbol's end, by byte position of the piece.
        let mut kept_at = vec![0; piece.len() + 1];
        let (mut start, mut kept, mut key) = (0, 0, Vec::new());
        while start < piece.len() {
            let end = if self.byte_level {
                start + 1
            } else {
                next_char(piece, start)
            };
            if self.unknown.is_some() || self.symbol(piece, start, end, &mut key) != NONE {
                kept += if self.byte_level {
                    byte_level_width(piece[start])
                } else {
                    end - start
                };
            }
            kept_at[end] = kept;
            start = end;
        }
        let first = out.len();
        let mut from = 0;
        let done = self.tokens(piece, |_, end| {
            out.push((from, kept_at[end]));
            from = kept_at[end];
        });
        if let Err(error) = done {
            out.truncate(first);
            return Err(error);
        }
        if self.byte_level {
            let owner: Vec<usize> = (0..piece.len())
                .flat_map(|k| std::iter::repeat_n(k, byte_level_width(piece[k])))
                .collect();
            for span in &mut out[first..] {
                *span = (owner[span.0], owner[span.1 - 1] + 1);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "character_bpe_tests.rs"]
mod tests;
