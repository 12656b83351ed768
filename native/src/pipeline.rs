//! The whole encode in one native call: special/added literals → normalizer → spanner →
//! span encoder → ids. Mirrors `wordsplit/tokenizer.py` (`Tokenizer._encode`) and
//! `wordsplit/specials.py`; the Python side resolves the allowed/disallowed policy into a
//! [`SpecialPolicy`] and calls [`Pipeline::encode`] with the GIL released.

use aho_corasick::{AhoCorasick, Input, MatchKind};
use unicode_normalization_alignments::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::encoders::{merge_piece, EncoderKind};
use crate::spanners::Spanner;
use crate::vocab::VocabTables;

/// One special or added token literal.
pub struct Literal {
    pub text: String,
    pub id: u32,
    /// Special tokens follow the allowed/disallowed policy; added tokens always match.
    pub special: bool,
}

/// What to do with each special literal in one call (indexes into the literal list).
pub enum SpecialPolicy {
    /// Every special literal is a token; none is an error.
    AllowAll,
    /// `allowed[i]` / `disallowed[i]` per literal (added literals ignore both).
    Mixed {
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    },
}

/// `encode` found a disallowed special literal; the Python side turns this into
/// DisallowedSpecialError with the usual message.
pub struct Disallowed(pub String);

/// Pieces that need merging repeat a lot in real text (a word seen before, a run of spaces),
/// so each thread remembers the ids of recent ones, per pipeline, in a fixed two-way
/// set-associative table (a CPU cache's layout): a lookup reads one set of two 64-byte entries,
/// an insert evicts the set's least recently used entry, nothing is allocated after the table
/// itself. Text where nothing repeats (random Unicode) then costs a store per piece, not a
/// hash-map insert that allocates. 32,768 entries (2 MB, touched lazily) hold the distinct
/// pieces of a few MB of multilingual text.
const CACHE_SETS: usize = 1 << 14;
const CACHE_MAX_PIECE: usize = 32;
const CACHE_MAX_IDS: usize = 7;
const CACHED_PIPELINES: usize = 8;

/// One cached piece: its bytes zero-padded to 32 and its length (0: empty), and its ids.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct CacheEntry {
    key: [u64; 4],
    len: u8,
    count: u8,
    ids: [u32; CACHE_MAX_IDS],
}

impl CacheEntry {
    #[inline]
    fn holds(&self, key: &[u64; 4], len: usize) -> bool {
        self.key == *key && usize::from(self.len) == len
    }
}

/// Piece bytes → ids, for one pipeline on one thread. In each set, way 0 is the most
/// recently used entry.
struct PieceCache {
    sets: Box<[[CacheEntry; 2]]>,
}

impl PieceCache {
    fn new() -> Self {
        // SAFETY: all-zero bytes are a valid CacheEntry (integers only), and an empty one
        // (len 0 matches no piece). Zeroed memory comes from the OS untouched, so the pages
        // of a cache that stays small are never written.
        let sets = unsafe { Box::<[[CacheEntry; 2]]>::new_zeroed_slice(CACHE_SETS).assume_init() };
        Self { sets }
    }

    /// The padded key of a piece of 1 to 32 bytes, and its set.
    #[inline]
    fn key(piece: &[u8]) -> ([u64; 4], usize) {
        let mut bytes = [0u8; 32];
        bytes[..piece.len()].copy_from_slice(piece);
        let key: [u64; 4] = std::array::from_fn(|i| {
            u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap())
        });
        // Multiply-folds: every key bit and the length reach the low bits that pick the set.
        let fold = |a: u64, b: u64| {
            let product = u128::from(a) * u128::from(b);
            (product as u64) ^ ((product >> 64) as u64)
        };
        let first = fold(
            key[0] ^ 0x243f_6a88_85a3_08d3,
            key[1] ^ 0x1319_8a2e_0370_7345,
        );
        let mixed = fold(
            key[2] ^ first ^ 0xa409_3822_299f_31d1,
            key[3] ^ piece.len() as u64 ^ 0x082e_fa98_ec4e_6c89,
        );
        (key, mixed as usize % CACHE_SETS)
    }

    /// The cached ids of the piece with this key and length, in set `set`.
    #[inline]
    fn get(&mut self, key: &[u64; 4], len: usize, set: usize) -> Option<&[u32]> {
        let ways = &mut self.sets[set];
        if !ways[0].holds(key, len) {
            if !ways[1].holds(key, len) {
                return None;
            }
            ways.swap(0, 1);
        }
        Some(&ways[0].ids[..usize::from(ways[0].count)])
    }

    #[inline]
    fn put(&mut self, key: [u64; 4], len: usize, set: usize, ids: &[u32]) {
        if ids.len() <= CACHE_MAX_IDS {
            let ways = &mut self.sets[set];
            ways[1] = ways[0];
            let entry = &mut ways[0];
            entry.key = key;
            entry.len = len as u8;
            entry.count = ids.len() as u8;
            entry.ids[..ids.len()].copy_from_slice(ids);
        }
    }
}

thread_local! {
    static PIECE_CACHES: RefCell<Vec<(u64, PieceCache)>> = const { RefCell::new(Vec::new()) };
}

static NEXT_PIPELINE_ID: AtomicU64 = AtomicU64::new(0);

pub struct Pipeline {
    /// Names this pipeline's entries in the per-thread piece caches (never reused).
    id: u64,
    pub tables: std::sync::Arc<VocabTables>,
    pub encoder: EncoderKind,
    pub spanner: Box<dyn Spanner>,
    pub literals: Vec<Literal>,
    literal_matcher: Option<AhoCorasick>,
    pub nfc: bool,
}

impl Pipeline {
    pub fn new(
        tables: std::sync::Arc<VocabTables>,
        encoder: EncoderKind,
        spanner: Box<dyn Spanner>,
        literals: Vec<Literal>,
        nfc: bool,
    ) -> Result<Self, String> {
        let literal_matcher = if literals.is_empty() {
            None
        } else {
            // Leftmost-longest, as HF's added-vocabulary matcher.
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(literals.iter().map(|l| l.text.as_bytes()))
                .map_err(|e| format!("cannot build the special-token matcher: {e}"))?;
            Some(ac)
        };
        let id = NEXT_PIPELINE_ID.fetch_add(1, Ordering::Relaxed);
        Ok(Self {
            id,
            tables,
            encoder,
            spanner,
            literals,
            literal_matcher,
            nfc,
        })
    }

    /// Encode `text`; `Err` names the first disallowed special literal found (the caller
    /// discards `out` then, so nothing half-done escapes).
    pub fn encode(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
    ) -> Result<(), Disallowed> {
        let Some(matcher) = &self.literal_matcher else {
            self.encode_plain(text, out);
            return Ok(());
        };
        let mut plain_start = 0;
        let mut search_from = 0;
        while search_from < text.len() {
            let Some(m) = matcher.find(Input::new(text).span(search_from..text.len())) else {
                break;
            };
            let i = m.pattern().as_usize();
            let literal = &self.literals[i];
            let is_token = !literal.special
                || match policy {
                    SpecialPolicy::AllowAll => true,
                    SpecialPolicy::Mixed {
                        allowed,
                        disallowed,
                    } => {
                        if disallowed[i] {
                            return Err(Disallowed(literal.text.clone()));
                        }
                        allowed[i]
                    }
                };
            if !is_token {
                // Plain text here: look for a literal starting one character later.
                search_from =
                    m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            self.encode_plain(&text[plain_start..m.start()], out);
            out.push(literal.id);
            plain_start = m.end();
            search_from = m.end();
        }
        self.encode_plain(&text[plain_start..], out);
        Ok(())
    }

    /// Normalize, split and merge text that holds no literal token.
    fn encode_plain(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        if self.nfc && !text.is_ascii() && is_nfc_quick(text.chars()) != IsNormalized::Yes {
            let normalized: String = text.nfc().map(|(c, _)| c).collect();
            self.encode_split(&normalized, out);
        } else {
            self.encode_split(text, out);
        }
    }

    fn encode_split(&self, text: &str, out: &mut Vec<u32>) {
        let mut ends = Vec::with_capacity(text.len() / 4 + 1);
        self.spanner.split(text, &mut ends);
        let bytes = text.as_bytes();
        let tables = &*self.tables;
        PIECE_CACHES.with_borrow_mut(|caches| {
            // Most recently used first. Caches of pipelines that were dropped stay behind until
            // they are the least recently used of more than a few.
            match caches.iter().position(|(id, _)| *id == self.id) {
                Some(0) => {}
                Some(i) => {
                    let entry = caches.remove(i);
                    caches.insert(0, entry);
                }
                None => {
                    caches.truncate(CACHED_PIPELINES - 1);
                    caches.insert(0, (self.id, PieceCache::new()));
                }
            }
            let cache = &mut caches[0].1;
            let mut start = 0;
            for end in ends {
                let piece = &bytes[start..end];
                start = end;
                if let Some(id) = tables.whole(piece) {
                    out.push(id);
                } else if piece.len() == 1 {
                    out.push(tables.byte_ids[piece[0] as usize]);
                } else if piece.len() > CACHE_MAX_PIECE {
                    merge_piece(self.encoder, tables, piece, out);
                } else {
                    let (key, set) = PieceCache::key(piece);
                    if let Some(ids) = cache.get(&key, piece.len(), set) {
                        out.extend_from_slice(ids);
                    } else {
                        let first = out.len();
                        merge_piece(self.encoder, tables, piece, out);
                        cache.put(key, piece.len(), set, &out[first..]);
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_cache_keys_are_exact() {
        let mut cache = PieceCache::new();
        let pieces: [&[u8]; 5] = [b"a", b"a\0", b"a\0\0", b"abcdefgh", &[7u8; 32]];
        for (i, piece) in pieces.iter().enumerate() {
            let (key, set) = PieceCache::key(piece);
            cache.put(key, piece.len(), set, &[i as u32, 99]);
        }
        for (i, piece) in pieces.iter().enumerate() {
            let (key, set) = PieceCache::key(piece);
            // A later piece may have evicted this one from its set, never answered for it.
            if let Some(ids) = cache.get(&key, piece.len(), set) {
                assert_eq!(ids, &[i as u32, 99]);
            }
        }
        let (key, set) = PieceCache::key(b"a");
        assert_eq!(cache.get(&key, 1, set), Some(&[0u32, 99][..]));
        let (key, set) = PieceCache::key(b"xyz");
        cache.put(key, 3, set, &[1; CACHE_MAX_IDS + 1]);
        assert_eq!(cache.get(&key, 3, set), None, "too many ids to keep");
        // Two pieces in one set both stay; a third evicts the least recently used.
        let mut cache = PieceCache::new();
        let (k1, k2, k3) = ([1, 0, 0, 0], [2, 0, 0, 0], [3, 0, 0, 0]);
        cache.put(k1, 1, 5, &[1]);
        cache.put(k2, 1, 5, &[2]);
        assert_eq!(cache.get(&k1, 1, 5), Some(&[1u32][..]));
        cache.put(k3, 1, 5, &[3]);
        assert_eq!(cache.get(&k2, 1, 5), None);
        assert_eq!(cache.get(&k1, 1, 5), Some(&[1u32][..]));
        assert_eq!(cache.get(&k3, 1, 5), Some(&[3u32][..]));
    }
}
