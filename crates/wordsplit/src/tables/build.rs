//! The construction of [`MergeTables`] from a vocabulary's parts, and the checks of those
//! parts (counts that agree, ids below `n_vocab`, no id or bytes used by two BPE tokens).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::filter::{add_to_filter, FILTER_WORDS, LONG_FILTER_WORDS};
use super::pair_grid::PairGrid;
use super::probe_table::ProbeTable;
use super::token_index::ShortKey;
use super::{MergeTables, Rank, NEXT_TABLES_ID, NO_RANK, UNUSED};

/// Why a vocabulary's parts make no tables.
#[derive(Debug)]
pub struct TablesError(pub String);

impl MergeTables {
    /// Build the tables from a vocabulary's parts, as its file readers give them: the BPE
    /// tokens as `(bytes, id)`, the special and added literals, `n_vocab` (every id is below
    /// it), the pair merges `(left, right, rank)` of a pair-ranked vocabulary (None: the
    /// token ids are the merge ranks, tiktoken's rule) and whether a piece that is a whole
    /// token is that token without merging (tiktoken and HF's `ignore_merges`).
    pub fn from_tokens<'a>(
        bpe: impl IntoIterator<Item = (&'a [u8], u32)>,
        literals: &[crate::literal::Literal],
        n_vocab: usize,
        merges: Option<Vec<(u32, u32, Rank)>>,
        whole_piece_lookup: bool,
    ) -> Result<Self, crate::Error> {
        let (mut blob, mut ids, mut lens, mut is_bpe) = (vec![], vec![], vec![], vec![]);
        let literal_parts = literals.iter().map(|l| (l.text.as_bytes(), l.id, false));
        for (bytes, id, bpe) in bpe
            .into_iter()
            .map(|(b, id)| (b, id, true))
            .chain(literal_parts)
        {
            blob.extend_from_slice(bytes);
            ids.push(id);
            lens.push(u32::try_from(bytes.len()).map_err(|_| {
                crate::Error::VocabFormat(format!("token {id} is longer than 4 GiB"))
            })?);
            is_bpe.push(bpe);
        }
        Ok(Self::new(
            &blob,
            &ids,
            &lens,
            &is_bpe,
            n_vocab,
            merges,
            whole_piece_lookup,
        )?)
    }

    /// Build the tables from `blob`, the bytes of tokens `ids[i]` of lengths `lens[i]`
    /// concatenated; `is_bpe[i]` tells BPE tokens from special/added literals (which are
    /// decoded but never merged or looked up). Two literals may share an id; the first wins.
    pub fn new(
        blob: &[u8],
        ids: &[u32],
        lens: &[u32],
        is_bpe: &[bool],
        n_vocab: usize,
        merges: Option<Vec<(u32, u32, Rank)>>,
        whole_piece_lookup: bool,
    ) -> Result<Self, TablesError> {
        if ids.len() != lens.len() || ids.len() != is_bpe.len() {
            return Err(TablesError("ids, lengths and kinds differ in count".into()));
        }
        if lens.iter().map(|&l| l as usize).sum::<usize>() != blob.len() {
            return Err(TablesError(
                "token lengths do not add up to the bytes given".into(),
            ));
        }
        let count = |lengths: std::ops::RangeInclusive<u32>| {
            lens.iter()
                .zip(is_bpe)
                .filter(|&(len, &bpe)| bpe && lengths.contains(len))
                .count()
        };
        let mut seeds = [0; 2];
        for (i, seed) in seeds.iter_mut().enumerate() {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(i);
            *seed = hasher.finish();
        }
        let pair_grid = PairGrid::new(merges.is_none());
        let rank_bound = match &merges {
            Some(list) => list.iter().map(|m| u64::from(m.2) + 1).max().unwrap_or(0),
            None => n_vocab as u64,
        };
        let mut tables = Self {
            arena: Vec::with_capacity(blob.len()),
            spans: vec![(UNUSED, 0); n_vocab],
            small: ProbeTable::with_capacity(count(1..=8)),
            mid: ProbeTable::with_capacity(count(9..=16)),
            filter: vec![0; FILTER_WORDS]
                .into_boxed_slice()
                .try_into()
                .expect("FILTER_WORDS words"),
            seeds,
            long: HashTable::new(),
            long_filter: Box::new([0; LONG_FILTER_WORDS]),
            hasher: FxBuildHasher,
            merges: merges.map(|list| {
                list.into_iter()
                    .map(|(l, r, rank)| ((l, r), rank))
                    .collect()
            }),
            rank_bound,
            whole_piece_lookup,
            byte_ids: [UNUSED; 256],
            lacks_bytes: false,
            byte_pairs: vec![NO_RANK; 1 << 16]
                .into_boxed_slice()
                .try_into()
                .expect("a slice of 1 << 16 ranks"),
            backtrack: OnceLock::new(),
            pair_grid,
            char_merges: OnceLock::new(),
            auto_swept_backtrack_bytes: AtomicUsize::new(0),
            id: NEXT_TABLES_ID.fetch_add(1, Relaxed),
            piece_seeds: OnceLock::new(),
        };
        // Each token's insert misses the CPU's caches twice, at random in several MB (its
        // filter word and its home slot): asking for the lines of the token AHEAD places on
        // lets the misses overlap instead of following one another (o200k_base's tables
        // Each token's insert misses the CPU's caches twice, at random in several MB (its
        // filter word and its home slot): asking for the lines of the token AHEAD places on
        // lets the misses overlap instead of following one another.
        const AHEAD: usize = 32;
        let mut ahead_offset: usize = lens.iter().take(AHEAD).map(|&l| l as usize).sum();
        let mut offset = 0usize;
        for (i, ((&id, &len), &bpe)) in ids.iter().zip(lens).zip(is_bpe).enumerate() {
            if let Some(&ahead_len) = lens.get(i + AHEAD) {
                if is_bpe[i + AHEAD] {
                    tables.request_insert_lines(
                        &blob[ahead_offset..ahead_offset + ahead_len as usize],
                    );
                }
                ahead_offset += ahead_len as usize;
            }
            let piece = &blob[offset..offset + len as usize];
            offset += len as usize;
            let span = tables.spans.get_mut(id as usize).ok_or_else(|| {
                TablesError(format!("token id {id} is not below n_vocab {n_vocab}"))
            })?;
            if span.0 != UNUSED {
                // Two literals may share an id (o200k_harmony), and a literal may name a BPE
                // token (an HF added token that is also in the model's vocab): the id keeps the
                // bytes it got first, the BPE token's, which come before the literals. Two BPE
                // tokens never share an id.
                if bpe {
                    return Err(TablesError(format!("token id {id} is used twice")));
                }
                continue;
            }
            *span = (tables.arena.len() as u32, len);
            tables.arena.extend_from_slice(piece);
            if !bpe {
                continue;
            }
            match *piece {
                [byte] => tables.byte_ids[usize::from(byte)] = id,
                // Under the rank-based rule a two-byte token's id is its pair's rank.
                [a, b] if tables.merges.is_none() => {
                    tables.byte_pairs[usize::from(a) << 8 | usize::from(b)] = id;
                }
                _ => {}
            }
            let repeated =
                || TablesError(format!("token id {id} repeats the bytes of another token"));
            // One probe per token: the entry is either the repeat (an error) or the free slot.
            if let Some(key) = ShortKey::of(piece) {
                let hash = tables.hash(&key);
                add_to_filter(&mut tables.filter, hash);
                let fresh = if key.len <= 8 {
                    tables.small.insert(hash, &key, id)
                } else {
                    tables.mid.insert(hash, &key, id)
                };
                if !fresh {
                    return Err(repeated());
                }
                continue;
            }
            let hash = tables.hasher.hash_one(piece);
            add_to_filter(&mut tables.long_filter, hash);
            let (arena, spans) = (&tables.arena, &tables.spans);
            let bytes_of = |other: u32| {
                let (start, len) = spans[other as usize];
                &arena[start as usize..(start + len) as usize]
            };
            match tables.long.entry(
                hash,
                |&other| other != id && bytes_of(other) == piece,
                |&other| FxBuildHasher.hash_one(bytes_of(other)),
            ) {
                Entry::Occupied(_) => return Err(repeated()),
                Entry::Vacant(slot) => slot.insert(id),
            };
        }
        // Some vocabularies (GPT-NeoX's, a few GGUF files) lack a token for some bytes: the
        // pipeline drops those bytes from a piece before merging, as HF does.
        tables.lacks_bytes = tables.byte_ids.contains(&UNUSED);
        tables.fill_byte_pairs();
        Ok(tables)
    }

    /// The ranks of pairs of byte tokens under the pair-ranked rule, read from the merges
    /// (under the rank-based rule the token loop wrote them, a two-byte token's id).
    fn fill_byte_pairs(&mut self) {
        let Some(merges) = &self.merges else {
            return;
        };
        let mut byte_of = FxHashMap::default();
        for (byte, &id) in self.byte_ids.iter().enumerate() {
            if id != UNUSED {
                byte_of.insert(id, byte);
            }
        }
        for (&(left, right), &rank) in merges {
            if let (Some(&a), Some(&b)) = (byte_of.get(&left), byte_of.get(&right)) {
                self.byte_pairs[a << 8 | b] = rank;
            }
        }
    }

    /// Asks the CPU for the lines inserting the BPE token `piece` writes first (its home
    /// slot and its filter word), if it is short enough for the slot tables.
    #[inline(always)]
    fn request_insert_lines(&self, piece: &[u8]) {
        if let Some(key) = ShortKey::of(piece) {
            self.request_key_lines(&key);
        }
    }
}
