//! [`LongPieces`]: the pieces too long for the two-way tables' entries, or of more ids than
//! they hold, in a bounded table whose keys and ids live in two arenas.

use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

use crate::huge_pages::{HugeSlice, Zeroable};

/// The longest piece kept: runs of white space this long (padding) come back, and hashing
/// one costs a fraction of its merge; the byte arena holds 64, so none empties it alone.
pub(in crate::pipeline) const LONG_MAX_PIECE: usize = 16 * 1024;
/// The table's sets: enough that few long pieces of a megabyte of text share one, where
/// three or more that share a set evict each other in turn.
const LONG_SETS: usize = 65536;
/// The arenas' room, for the long pieces of a megabyte of text: 1 MB of bytes, 2 MB of ids.
const LONG_MAX_BYTES: usize = 1 << 20;
const LONG_MAX_IDS: usize = 512 * 1024;

/// One long piece: its hash, where its bytes and ids are in the arenas (`len` 0: empty).
#[derive(Clone, Copy, Default)]
pub(super) struct LongSlot {
    hash: u64,
    start: u32,
    len: u32,
    ids_start: u32,
    ids_len: u32,
}

// SAFETY: integers only; all zeros is an empty slot (len 0 matches no piece).
unsafe impl Zeroable for LongSlot {}

/// Pieces of `CACHE_MAX_PIECE + 1` to [`LONG_MAX_PIECE`] bytes, and shorter pieces of more
/// than `WIDE_MAX_IDS` ids → ids.
///
/// Longer pieces repeat too: the ruled lines and box drawing of tables (`+------+----`,
/// ` =====`, `├──┼──`), long identifiers and paths, and words of scripts without spaces
/// between them. They are few, but merging one costs microseconds (buffer-sweep is
/// quadratic in the piece's length), so merged again on each pass they take a large share
/// of its time. So do the pieces of up to 32 bytes that encode to more ids than a
/// [`PieceCache`](super::PieceCache) entry holds (mostly Chinese and Japanese, and rare
/// characters of two or three byte tokens each).
///
/// They are held apart from the fixed entries: a two-way set-associative table of
/// [`LONG_SETS`] sets whose keys and ids live in two arenas, vectors emptied all at once
/// when one fills, so the memory stays bounded (6.3 MB: 3.3 MB of sets and tags and 3 MB of
/// arenas, each page touched when first written) and nothing is allocated per piece. The
/// short ones are answered from the [`PieceTable`](super::PieceTable) too, as where the
/// arena holds their ids ([`HeldIds`]), until the arena is emptied.
///
/// Any 64-bit hash of the piece's bytes serves, as long as [`Self::get`] and [`Self::put`]
/// of one piece are given the same: [`Self::hash`] for long pieces,
/// [`PieceCache::key_in`](super::PieceCache::key_in)'s for the short ones.
pub(in crate::pipeline) struct LongPieces {
    /// In each set, way 0 is the piece last found (or the first put into the empty set),
    /// way 1 the one a new piece replaces. Zeroed memory from the allocator, whose pages are
    /// touched as they are written: every piece cache of every thread has this table, and
    /// most never hold a long piece.
    pub(super) sets: HugeSlice<[LongSlot; 2]>,
    /// Per set, each way's tag ([`Self::tag`]; 0: empty): 2 bytes where the set is 48, more
    /// often in the CPU's cache. A piece the table does not hold is answered here, without
    /// reading its set, which is rarely in the CPU's cache (on a first pass over prose, every
    /// piece of 8 to 32 bytes that merges is asked for here).
    pub(super) tags: Box<[[u8; 2]]>,
    /// The arenas, with room for all they hold ([`LONG_MAX_BYTES`], [`LONG_MAX_IDS`]) from
    /// the start: the allocator's fresh pages are touched once, as pieces are put, where
    /// growing by doubling would copy them into fresh pages each time. Pages never written
    /// are never resident.
    bytes: Vec<u8>,
    ids: Vec<u32>,
    /// How many times the arenas were emptied: ids held elsewhere ([`HeldIds`]) of an
    /// earlier generation are gone.
    pub generation: u64,
    /// The ids of the piece last answered or put.
    last: HeldIds,
}

/// Where the long pieces' arena holds a piece's ids, for a [`PieceTable`](super::PieceTable)
/// entry: their place and the arena's generation then.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(in crate::pipeline) struct HeldIds {
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) generation: u64,
}

impl LongPieces {
    pub(super) fn new() -> Self {
        Self {
            sets: HugeSlice::zeroed_ordinary(LONG_SETS),
            tags: vec![[0; 2]; LONG_SETS].into_boxed_slice(),
            bytes: Vec::with_capacity(LONG_MAX_BYTES),
            ids: Vec::with_capacity(LONG_MAX_IDS),
            generation: 0,
            last: HeldIds::default(),
        }
    }

    /// The ids at `held`, unless the arena was emptied since they were put there.
    #[inline]
    pub fn held(&self, held: HeldIds) -> Option<&[u32]> {
        if held.generation != self.generation {
            return None;
        }
        let start = held.start as usize;
        self.ids.get(start..start + held.len as usize)
    }

    /// Where the arena holds `ids`, if they are those of the piece last answered or put.
    #[inline]
    pub(super) fn last_held(&self, ids: &[u32]) -> Option<HeldIds> {
        (self.held(self.last)? == ids).then_some(self.last)
    }

    /// A hash for [`Self::get`] and [`Self::put`] of pieces of any length.
    #[inline]
    pub fn hash(piece: &[u8]) -> u64 {
        FxBuildHasher.hash_one(piece)
    }

    #[inline]
    pub(super) fn set(hash: u64) -> usize {
        (hash % LONG_SETS as u64) as usize
    }

    /// The hash's top bits, never 0 (an empty way's tag).
    #[inline]
    fn tag(hash: u64) -> u8 {
        (hash >> 56) as u8 | 1
    }

    /// The cached ids of `piece`, whose hash is `hash`.
    #[inline]
    pub fn get(&mut self, piece: &[u8], hash: u64) -> Option<&[u32]> {
        let (set, tag) = (Self::set(hash), Self::tag(hash));
        if !self.tags[set].contains(&tag) {
            return None;
        }
        let holds = |slot: &LongSlot| {
            let start = slot.start as usize;
            slot.hash == hash
                && slot.len as usize == piece.len()
                && self.bytes[start..start + piece.len()] == *piece
        };
        let way = self.sets[set].iter().position(holds)?;
        if way == 1 {
            // Found in the way a new piece takes: now the one it keeps.
            self.sets[set].swap(0, 1);
            self.tags[set].swap(0, 1);
        }
        let slot = self.sets[set][0];
        self.last = HeldIds {
            start: slot.ids_start,
            len: slot.ids_len,
            generation: self.generation,
        };
        let ids_start = slot.ids_start as usize;
        Some(&self.ids[ids_start..ids_start + slot.ids_len as usize])
    }

    /// Remembers that `piece` (hash `hash`) encodes as `ids`, in way 1 of its set (way 0 when
    /// the set is empty), in place of the piece there.
    pub fn put(&mut self, piece: &[u8], hash: u64, ids: &[u32]) {
        if piece.len() > LONG_MAX_PIECE || ids.len() > LONG_MAX_IDS {
            return;
        }
        if self.bytes.len() + piece.len() > LONG_MAX_BYTES
            || self.ids.len() + ids.len() > LONG_MAX_IDS
        {
            // The arenas hold every piece put since they were last emptied, including the
            // ones whose slots were taken since: start again.
            self.bytes.clear();
            self.ids.clear();
            self.sets.fill([LongSlot::default(); 2]);
            self.tags.fill([0; 2]);
            self.generation += 1;
        }
        let set = Self::set(hash);
        let slot = LongSlot {
            hash,
            start: self.bytes.len() as u32,
            len: piece.len() as u32,
            ids_start: self.ids.len() as u32,
            ids_len: ids.len() as u32,
        };
        self.bytes.extend_from_slice(piece);
        self.ids.extend_from_slice(ids);
        self.last = HeldIds {
            start: slot.ids_start,
            len: slot.ids_len,
            generation: self.generation,
        };
        // A new piece takes way 1 (way 0 when the set is empty) and moves to way 0 on its
        // first hit ([`Self::get`]), as in `Ways`: pieces that come back in turn, more of
        // them than ways, then keep one answered, where putting each in front evicted each
        // before it came back.
        // Whether way 0 holds a piece, from its tag: the set's line is rarely in the CPU's
        // cache, the tags more often.
        let way = usize::from(self.tags[set][0] != 0);
        self.sets[set][way] = slot;
        self.tags[set][way] = Self::tag(hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::piece_cache::table::TableKey;
    use crate::pipeline::piece_cache::tests::key_of;
    use crate::pipeline::piece_cache::{PieceCache, TABLE_WRITES};

    /// A megabyte of distinct long pieces of many ids each (white-space runs of 60 ids,
    /// multilingual phrases) is held whole: every piece put is found on the next pass; and
    /// the arenas never move (their room is made at the start, not grown by copying).
    #[test]
    fn long_pieces_hold_a_megabyte_of_text() {
        let mut long = LongPieces::new();
        let arenas = (long.bytes.as_ptr(), long.ids.as_ptr());
        let pieces: Vec<(Vec<u8>, Vec<u32>)> = (0..1_500u32)
            .map(|i| {
                let len = 100 + (i as usize * 37) % 1_000;
                // Runs of four white-space bytes, distinct by their first ten (i in base 4).
                let piece = (0..len)
                    .map(|j| b" \t\n\r"[((i as usize >> (2 * (j % 10))) % 4) ^ (j / 10 % 4)])
                    .collect();
                let ids = (0..60).map(|k| i * 64 + k).collect();
                (piece, ids)
            })
            .collect();
        let bytes: usize = pieces.iter().map(|(p, _)| p.len()).sum();
        assert!(bytes > 800_000, "{bytes}");
        for (piece, ids) in &pieces {
            long.put(piece, LongPieces::hash(piece), ids);
        }
        for (piece, ids) in &pieces {
            assert_eq!(long.get(piece, LongPieces::hash(piece)), Some(&ids[..]));
        }
        assert_eq!((long.bytes.as_ptr(), long.ids.as_ptr()), arenas);
        // Past the arenas' room they are emptied, still in place.
        for (piece, ids) in &pieces {
            long.put(
                &[piece.as_slice(), b"!"].concat(),
                LongPieces::hash(piece) ^ 1,
                ids,
            );
        }
        assert_eq!(long.generation, 1);
        assert_eq!((long.bytes.as_ptr(), long.ids.as_ptr()), arenas);
    }

    #[test]
    fn long_pieces_are_exact_and_bounded() {
        let mut long = LongPieces::new();
        let piece = |fill: u8, len: usize| vec![fill; len];
        let a = piece(b'=', 74);
        let ha = LongPieces::hash(&a);
        assert_eq!(long.get(&a, ha), None);
        long.put(&a, ha, &[1, 2, 3]);
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        // A hash of the same set with another tag is answered by the tags alone.
        let other_tag = ha ^ 0x8000_0000_0000_0000;
        assert_eq!(LongPieces::set(other_tag), LongPieces::set(ha));
        assert_eq!(long.get(&a, other_tag), None);
        // Same length, same slot and hash, other bytes: not this piece's ids.
        let mut b = a.clone();
        b[40] = b'-';
        assert_eq!(long.get(&b, ha), None);
        // A shorter piece that is a prefix of a cached one is not it either.
        assert_eq!(long.get(&a[..60], LongPieces::hash(&a[..60])), None);
        // Two pieces of one set both stay; a third replaces the one found less recently.
        long.put(&b, ha, &[4]);
        assert_eq!(long.get(&b, ha), Some(&[4u32][..]));
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        let mut c = a.clone();
        c[0] = b'~';
        long.put(&c, ha, &[5, 6]);
        assert_eq!(long.get(&c, ha), Some(&[5u32, 6][..]));
        assert_eq!(long.get(&a, ha), Some(&[1u32, 2, 3][..]));
        assert_eq!(long.get(&b, ha), None);
        // Three pieces of one set asked for in turn, each put again when missed: one of
        // them stays answered (a new piece takes the way of the one found less recently).
        let mut found = 0;
        for _ in 0..10 {
            for (p, ids) in [(&a, [1u32, 2, 3].as_slice()), (&b, &[4]), (&c, &[5, 6])] {
                match long.get(p, ha) {
                    Some(got) => {
                        assert_eq!(got, ids);
                        found += 1;
                    }
                    None => long.put(p, ha, ids),
                }
            }
        }
        assert!(found >= 10, "{found}");
        // Filling the arenas empties them: the memory stays bounded, the answers exact.
        let mut put = 0;
        for i in 0..(2 * LONG_MAX_BYTES / LONG_MAX_PIECE) {
            let p: Vec<u8> = (0..LONG_MAX_PIECE).map(|j| (i * 7 + j) as u8).collect();
            let h = LongPieces::hash(&p);
            long.put(&p, h, &[i as u32]);
            assert_eq!(long.get(&p, h), Some(&[i as u32][..]));
            assert!(long.bytes.len() <= LONG_MAX_BYTES && long.ids.len() <= LONG_MAX_IDS);
            put += 1;
        }
        assert!(put > LONG_MAX_BYTES / LONG_MAX_PIECE);
        assert_eq!(long.get(&b, ha), None, "emptied when the arenas filled");
        // Pieces past the limit are not kept.
        let too_long = piece(b'x', LONG_MAX_PIECE + 1);
        let h = LongPieces::hash(&too_long);
        long.put(&too_long, h, &[9]);
        assert_eq!(long.get(&too_long, h), None);
    }

    /// A [`PieceCache`] whose table holds `piece` (of more than seven ids) as where its long
    /// pieces' arena has them, as the piece loop puts it after merging it.
    fn held_piece(piece: &[u8], ids: &[u32]) -> (PieceCache, TableKey) {
        let mut cache = PieceCache::new(None);
        let mut padded = piece.to_vec();
        padded.resize(piece.len() + 16, b' ');
        let key = cache.table.key(&padded, 0, piece.len());
        assert!(key.fits());
        let cache_key = key_of(piece);
        assert_eq!(cache.get(&cache_key, piece), None);
        cache.put(&cache_key, piece, ids);
        cache.put_table(&key, ids);
        (cache, key)
    }

    /// The ids the piece table gives for `key`, from its entry or the long pieces' arena;
    /// `None` where it holds the piece's ids in an arena since emptied.
    fn table_answer(cache: &mut PieceCache, key: &TableKey) -> Option<Vec<u32>> {
        let ids = cache.table.get(key)?;
        let mut room = [0u32; TABLE_WRITES];
        // SAFETY: `room` holds `TABLE_WRITES` ids.
        match unsafe { ids.write(room.as_mut_ptr()) } {
            Some(count) => Some(room[..count].to_vec()),
            None => {
                let held = ids.held();
                cache.long.held(held).map(<[u32]>::to_vec)
            }
        }
    }

    #[test]
    fn piece_table_answers_pieces_of_more_ids_from_the_long_pieces_arena() {
        let ids: Vec<u32> = (1..=12).collect();
        let (mut cache, key) = held_piece("žluťoučký".as_bytes(), &ids);
        assert_eq!(table_answer(&mut cache, &key), Some(ids.clone()));
        // Emptied by long pieces that fill it: the entry no longer answers.
        for fill in 0..=LONG_MAX_BYTES / LONG_MAX_PIECE {
            let long = vec![fill as u8; LONG_MAX_PIECE];
            cache.long.put(&long, LongPieces::hash(&long), &[7]);
        }
        assert_eq!(cache.long.generation, 1);
        assert_eq!(table_answer(&mut cache, &key), None);
        // Put again, from the arena it is in now.
        let piece = "žluťoučký".as_bytes();
        assert_eq!(cache.get(&key_of(piece), piece), None);
        cache.put(&key_of(piece), piece, &ids);
        cache.put_table(&key, &ids);
        assert_eq!(table_answer(&mut cache, &key), Some(ids));
    }

    #[test]
    fn piece_table_keeps_a_piece_of_more_ids_only_as_the_arena_has_them() {
        let ids: Vec<u32> = (1..=9).collect();
        let (mut cache, key) = held_piece(b"wordsplitx", &ids);
        let other: Vec<u32> = (2..=10).collect();
        let mut padded = b"splitwordx".to_vec();
        padded.resize(26, b' ');
        let other_key = cache.table.key(&padded, 0, 10);
        // The arena's last piece has other ids: nothing is kept for this one.
        cache.put_table(&other_key, &other);
        assert_eq!(table_answer(&mut cache, &other_key), None);
        assert_eq!(table_answer(&mut cache, &key), Some(ids));
    }
}
