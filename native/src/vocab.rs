//! VocabTables: the one precomputed dictionary every native encoder of a vocabulary reads.
//!
//! Mirrors `wordsplit/encoders/tables.py` (MergeTables): BPE token bytes → id, the optional
//! pair-ranked merge table (HF files whose merge list is not in merged-id order), and every
//! id's bytes for decoding. Built once per vocabulary and shared (`Arc`) by all encoders and
//! threads.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::encoders::backtrack::BacktrackTables;

/// A merge priority or token id; `u32::MAX` is "never merges".
pub type Rank = u32;
pub const NO_RANK: Rank = Rank::MAX;

pub struct VocabTables {
    /// BPE token bytes → id (= rank under the rank-based rule).
    pub ranks: FxHashMap<Box<[u8]>, Rank>,
    /// `(left id, right id)` → merge rank, for pair-ranked vocabularies only.
    pub merges: Option<FxHashMap<(u32, u32), Rank>>,
    /// A piece that is itself a token is one lookup (tiktoken; HF with ignore_merges).
    pub whole_piece_lookup: bool,
    /// The bytes of every id (special and added tokens included); `None` for unused ids.
    pub token_bytes: Vec<Option<Box<[u8]>>>,
    /// The id of each single byte.
    pub byte_ids: [u32; 256],
    /// The backtrack encoder's tables, built on first use.
    backtrack: OnceLock<Result<BacktrackTables, String>>,
}

#[derive(Debug)]
pub struct TablesError(pub String);

impl VocabTables {
    /// Build the tables; `bpe` lists `(token bytes, id)`, `extra` the special/added literals.
    pub fn new(
        bpe: Vec<(Vec<u8>, u32)>,
        extra: Vec<(Vec<u8>, u32)>,
        n_vocab: usize,
        merges: Option<Vec<(u32, u32, Rank)>>,
        whole_piece_lookup: bool,
    ) -> Result<Self, TablesError> {
        let mut token_bytes: Vec<Option<Box<[u8]>>> = vec![None; n_vocab];
        let mut ranks = FxHashMap::with_capacity_and_hasher(bpe.len(), Default::default());
        let mut byte_ids = [u32::MAX; 256];
        for (piece, id) in bpe {
            let slot = token_bytes.get_mut(id as usize).ok_or_else(|| {
                TablesError(format!("token id {id} is not below n_vocab {n_vocab}"))
            })?;
            if piece.len() == 1 {
                byte_ids[piece[0] as usize] = id;
            }
            *slot = Some(piece.clone().into_boxed_slice());
            if ranks.insert(piece.into_boxed_slice(), id).is_some() {
                return Err(TablesError(format!(
                    "token id {id} repeats the bytes of another token"
                )));
            }
        }
        if let Some(b) = byte_ids.iter().position(|&id| id == u32::MAX) {
            return Err(TablesError(format!("no token for the byte 0x{b:02x}")));
        }
        for (piece, id) in extra {
            let slot = token_bytes.get_mut(id as usize).ok_or_else(|| {
                TablesError(format!("token id {id} is not below n_vocab {n_vocab}"))
            })?;
            // Two special literals may share an id; the first one decodes (as in Python).
            if slot.is_none() {
                *slot = Some(piece.into_boxed_slice());
            }
        }
        let merges = merges.map(|list| {
            list.into_iter()
                .map(|(l, r, rank)| ((l, r), rank))
                .collect()
        });
        Ok(Self {
            ranks,
            merges,
            whole_piece_lookup,
            token_bytes,
            byte_ids,
            backtrack: OnceLock::new(),
        })
    }

    #[inline]
    pub fn rank_of(&self, piece: &[u8]) -> Option<Rank> {
        self.ranks.get(piece).copied()
    }

    /// The id of `piece` when the vocabulary encodes a whole-token piece in one lookup.
    #[inline]
    pub fn whole(&self, piece: &[u8]) -> Option<u32> {
        if self.whole_piece_lookup {
            self.rank_of(piece)
        } else {
            None
        }
    }

    /// Priority of merging the adjacent symbols `piece[start..mid]` and `piece[mid..end]`
    /// (whose ids are `left`, `right`), or `NO_RANK`.
    #[inline]
    pub fn pair_rank(&self, piece: &[u8], start: usize, end: usize, left: u32, right: u32) -> Rank {
        match &self.merges {
            None => self.rank_of(&piece[start..end]).unwrap_or(NO_RANK),
            Some(merges) => merges.get(&(left, right)).copied().unwrap_or(NO_RANK),
        }
    }

    /// The id of the token that merging `piece[start..end]` at priority `rank` makes: under
    /// the rank-based rule the priority is the id itself, so no second lookup is needed.
    #[inline]
    pub fn merged_id(&self, piece: &[u8], start: usize, end: usize, rank: Rank) -> u32 {
        if self.merges.is_none() {
            rank
        } else {
            self.id_of(&piece[start..end])
        }
    }

    /// The id of the token spelled by `piece` (which must be one).
    #[inline]
    pub fn id_of(&self, piece: &[u8]) -> u32 {
        if piece.len() == 1 {
            self.byte_ids[piece[0] as usize]
        } else {
            self.ranks[piece]
        }
    }

    /// The backtrack tables, or why this vocabulary cannot have them.
    pub fn backtrack_tables(&self) -> Result<&BacktrackTables, &str> {
        self.backtrack
            .get_or_init(|| BacktrackTables::new(self))
            .as_ref()
            .map_err(|e| e.as_str())
    }

    /// The backtrack tables; callers check [`Self::backtrack_tables`] when choosing the encoder.
    pub fn backtrack(&self) -> &BacktrackTables {
        self.backtrack_tables()
            .expect("backtrack encoder chosen for a vocabulary that cannot use it")
    }

    /// Append the bytes of `ids` to `out`; the first unknown id is the error.
    pub fn decode_into(&self, ids: &[u32], out: &mut Vec<u8>) -> Result<(), u32> {
        for &id in ids {
            match self.token_bytes.get(id as usize) {
                Some(Some(bytes)) => out.extend_from_slice(bytes),
                _ => return Err(id),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// 256 byte tokens plus `extra` multi-byte tokens with ids from 256 on.
    pub fn tiny(extra: &[&[u8]]) -> VocabTables {
        let mut bpe: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (i, piece) in extra.iter().enumerate() {
            bpe.push((piece.to_vec(), 256 + i as u32));
        }
        let n = bpe.len();
        VocabTables::new(bpe, vec![], n, None, true).unwrap()
    }

    #[test]
    fn decode_and_errors() {
        let t = tiny(&[b"ab"]);
        let mut out = vec![];
        t.decode_into(&[256, 99], &mut out).unwrap();
        assert_eq!(out, b"abc");
        assert_eq!(t.decode_into(&[7, 999], &mut out), Err(999));
    }

    #[test]
    fn missing_byte_is_an_error() {
        let bpe = vec![(vec![0u8], 0u32)];
        assert!(VocabTables::new(bpe, vec![], 1, None, true).is_err());
    }
}
