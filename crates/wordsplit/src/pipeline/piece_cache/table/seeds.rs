//! A [`PieceTable`] of a vocabulary's short tokens, which every thread's table over those
//! tables starts as a copy of.

use super::{line_of, PieceTable, SET_BYTES, TABLE_MAX_SETS, TABLE_SETS};
use crate::pipeline::piece_cache::entries::{CompactEntry, Entry, COUNT_SHIFT};
use crate::pipeline::piece_cache::COMPACT_MAX_PIECE;
use crate::tables::MergeTables;

impl PieceTable {
    /// A table of the vocabulary's tokens of up to 15 bytes, each with its id, for a
    /// vocabulary whose rule takes a piece that is a token as that token (whole-piece
    /// lookup, which the piece loop answers without merging,
    /// [`crate::tables::TokenIndex::shortcut`]; no two tokens have the same bytes). Where
    /// a set's two ways cannot hold all its tokens, the two lowest ids stay (the most
    /// frequent, under the rank-based rule), the lowest in way 0. The table has at least
    /// five ways for every four such tokens (4 MB for cl100k_base, 8 MB for o200k_base and
    /// qwen3): in a smaller one, each token it lacks is a probe of the token index the first
    /// time a text meets it, and each new piece put evicts a token.
    ///
    /// ```text
    /// cl100k_base: " hello" -> [24748], "h" -> [71] before the thread's first encode
    /// ```
    pub fn seeds(tables: &MergeTables) -> Self {
        let short = tables
            .short_tokens()
            .filter(|&(_, _, len, _)| len <= COMPACT_MAX_PIECE)
            .count();
        let sets = (short * 5 / 8).next_power_of_two();
        Self::seeds_in(tables, sets.clamp(TABLE_SETS, TABLE_MAX_SETS))
    }

    /// [`Self::seeds`] in a table of `sets` sets (a power of two, at most
    /// [`TABLE_MAX_SETS`]).
    fn seeds_in(tables: &MergeTables, sets: usize) -> Self {
        debug_assert!(tables.whole_piece_lookup(), "seeds are whole tokens");
        let mut table = Self::with_sets(sets);
        // A batch of seeds at a time, their sets' lines requested before any is written:
        // one token after another, each write waited on its own line.
        const BATCH: usize = 16;
        let mut batch = [(0usize, CompactEntry::default()); BATCH];
        let mut n = 0;
        let lines = table.lines();
        let put = |table: &mut PieceTable, batch: &[(usize, CompactEntry)]| {
            for &(line, seed) in batch {
                let id = seed.ids[0];
                let ways = &mut table.sets[line / SET_BYTES];
                if ways[0].is_empty() {
                    ways[0] = seed;
                } else if ways[1].is_empty() || id < ways[1].ids[0] {
                    ways[1] = seed;
                    if id < ways[0].ids[0] {
                        ways.swap(0, 1);
                    }
                }
            }
        };
        for (lo, hi, len, id) in tables.short_tokens() {
            if len > COMPACT_MAX_PIECE {
                continue;
            }
            let hi = hi | (len as u64) << 56;
            let line = line_of(lo, hi, table.lines_mask);
            lines.prefetch_line(line);
            batch[n] = (
                line,
                CompactEntry {
                    key: [lo, hi | 1 << COUNT_SHIFT],
                    ids: [id, 0, 0, 0],
                },
            );
            n += 1;
            if n == BATCH {
                put(&mut table, &batch);
                n = 0;
            }
        }
        put(&mut table, &batch[..n]);
        table
    }

    /// A new table holding what `seeds` holds (its sets copied; no ghost, nothing evicted).
    pub(in crate::pipeline::piece_cache) fn copy_of(seeds: &PieceTable) -> Self {
        let mut table = Self::with_sets(seeds.sets.len());
        table.sets.copy_from_slice(&seeds.sets);
        table
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::table_ids;
    use super::*;
    use crate::tables::tests::tiny;
    use std::collections::HashMap;

    /// The ids `table` holds for the piece `piece` (at most 15 bytes), if it holds it.
    fn ids_of_piece(table: &mut PieceTable, piece: &[u8]) -> Option<Vec<u32>> {
        let key = table.key(&[piece, &[0; 16]].concat(), 0, piece.len());
        table_ids(table, &key)
    }

    #[test]
    fn seeds_are_the_vocabularys_tokens_of_up_to_15_bytes() {
        // Every length of 1 to 16 bytes; a 16-byte token whose 16th byte's low half is all
        // ones, so that a seed keyed on its first 15 bytes with that byte spilled into the
        // length would answer for them.
        let sixteen: &[u8] = b"sixteen bytes!!o";
        let extra: Vec<Vec<u8>> = (2..=15)
            .map(|n| (0..n).map(|i| b'a' + i as u8).collect())
            .chain([sixteen.to_vec()])
            .collect();
        let refs: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
        let mut seeded = PieceTable::copy_of(&PieceTable::seeds(&tiny(&refs)));
        for b in 0..=255u8 {
            assert_eq!(ids_of_piece(&mut seeded, &[b]), Some(vec![u32::from(b)]));
        }
        for (i, token) in refs.iter().enumerate() {
            if token.len() <= COMPACT_MAX_PIECE {
                assert_eq!(ids_of_piece(&mut seeded, token), Some(vec![256 + i as u32]));
            }
        }
        assert_eq!(
            ids_of_piece(&mut seeded, &sixteen[..15]),
            None,
            "a prefix, not a token"
        );
        assert_eq!(ids_of_piece(&mut seeded, b"ba"), None, "not a token");
    }

    #[test]
    fn a_set_of_more_tokens_than_ways_keeps_its_two_lowest_ids_lowest_first() {
        // More two- and three-byte tokens than the table has ways: every set is asked for
        // several.
        let extra: Vec<Vec<u8>> = (0..=255u8)
            .flat_map(|a| (0..=255u8).map(move |b| vec![a, b]))
            .chain((0..=255u8).flat_map(|a| (0..=255u8).map(move |b| vec![a, b, b'!'])))
            .collect();
        let refs: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
        let tables = tiny(&refs);
        // 131,328 tokens of up to 15 bytes: seeds have at least five ways for every four,
        // twice the table's first size (a small vocabulary's take the first size).
        assert_eq!(PieceTable::seeds(&tables).sets.len(), 2 * TABLE_SETS);
        assert_eq!(PieceTable::seeds(&tiny(&[b"ab"])).sets.len(), TABLE_SETS);
        // In the first size, sets that cannot hold all their tokens.
        let seeds = PieceTable::seeds_in(&tables, TABLE_SETS);
        let mut per_set: HashMap<usize, Vec<u32>> = HashMap::new();
        for id in 0..tables.n_vocab() as u32 {
            let token = tables.token(id).unwrap();
            let key = seeds.key(&[token, &[0; 16]].concat(), 0, token.len());
            per_set.entry(key.line / SET_BYTES).or_default().push(id);
        }
        assert!(per_set.values().any(|ids| ids.len() > 2));
        for (set, mut ids) in per_set {
            ids.sort_unstable();
            let ways = &seeds.sets[set];
            let held: Vec<u32> = ways
                .iter()
                .filter(|e| !e.is_empty())
                .map(|e| e.ids[0])
                .collect();
            assert_eq!(held, ids[..ids.len().min(2)], "set {set}");
        }
    }
}
