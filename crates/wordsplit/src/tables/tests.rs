//! The merge tables' tests, and the small vocabularies the other modules' tests build.

use std::hash::BuildHasher;

use super::filter::may_hold;
use super::pair_grid::GRID_IDS;
use super::probe_table::{ProbeTable, SmallSlot};
use super::*;

/// 256 byte tokens plus `extra` multi-byte tokens with ids from 256 on.
pub fn tiny(extra: &[&[u8]]) -> MergeTables {
    tiny_ranked(extra, None)
}

/// [`tiny`] with `merges` as a pair-ranked vocabulary's list (no whole-piece lookup), or
/// rank-based with `None`.
pub fn tiny_ranked(extra: &[&[u8]], merges: Option<Vec<(u32, u32, Rank)>>) -> MergeTables {
    let mut pieces: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    pieces.extend(extra.iter().map(|p| p.to_vec()));
    let ids: Vec<u32> = (0..pieces.len() as u32).collect();
    let lens: Vec<u32> = pieces.iter().map(|p| p.len() as u32).collect();
    let kinds = vec![true; pieces.len()];
    let whole_piece_lookup = merges.is_none();
    MergeTables::new(
        &pieces.concat(),
        &ids,
        &lens,
        &kinds,
        pieces.len(),
        merges,
        whole_piece_lookup,
    )
    .unwrap()
}

#[test]
fn char_merges_are_built_by_the_first_merge_of_a_piece_that_is_not_ascii() {
    use crate::encoders::buffer_sweep;
    let t = tiny(&["а".as_bytes(), b"ab"]);
    let mut out = vec![];
    buffer_sweep::encode(&t, b"abab", &mut out);
    assert!(t.char_merges.get().is_none());
    buffer_sweep::encode(&t, "аа".as_bytes(), &mut out);
    assert!(t.char_merges.get().is_some());
    assert_eq!(out, [257, 257, 256, 256]);
    let pair_ranked = tiny_ranked(&[b"ab"], Some(vec![(97, 98, 0)]));
    assert!(pair_ranked.char_merges().is_none());
}

#[test]
fn pair_grid_keeps_ranks_of_low_ids_only() {
    let t = tiny(&[b"ab", b"ba"]);
    let grid = &t.pair_grid;
    assert_eq!(grid.get(97, 98), None);
    assert_eq!(grid.keep(97, 98, 256), 256);
    assert_eq!(grid.get(97, 98), Some(256));
    // A pair that is no token, the lowest rank, and ids past the grid.
    grid.keep(98, 98, NO_RANK);
    grid.keep(0, 0, 0);
    assert_eq!((grid.get(98, 98), grid.get(0, 0)), (Some(NO_RANK), Some(0)));
    let past = GRID_IDS as u32;
    assert_eq!(grid.keep(past, 97, 7), 7);
    assert_eq!((grid.get(past, 97), grid.get(97, past)), (None, None));
    assert_eq!(grid.get(98, 97), None);
    // A pair-ranked vocabulary's grid has no cells: nothing is kept.
    let ranked = tiny_ranked(&[b"ab"], Some(vec![(97, 98, 0)]));
    assert_eq!(ranked.pair_grid.keep(97, 98, 0), 0);
    assert_eq!(ranked.pair_grid.get(97, 98), None);
}

#[test]
fn lookup_decode_and_errors() {
    let t = tiny(&[b"ab"]);
    assert_eq!(t.rank_of(b"ab"), Some(256));
    assert_eq!(t.rank_of(b"abc"), None);
    let mut out = vec![];
    t.decode_into(&[256, 99], &mut out).unwrap();
    assert_eq!(out, b"abc");
    assert_eq!(t.decode_into(&[7, 999], &mut out), Err(999));
}

#[test]
fn short_keys_are_exact() {
    // Every length from 1 to 16, and pieces that differ only in length or trailing zeros.
    let all: Vec<u8> = (1..=40u8).collect();
    let mut seen = std::collections::HashSet::new();
    for len in 1..=16 {
        let key = ShortKey::of(&all[..len]).unwrap();
        let unpacked: Vec<u8> = key
            .lo
            .to_le_bytes()
            .iter()
            .chain(&key.hi.to_le_bytes())
            .copied()
            .collect();
        assert_eq!(&unpacked[..len], &all[..len]);
        assert!(unpacked[len..].iter().all(|&b| b == 0));
        assert!(seen.insert((key.lo, key.hi, key.len)));
    }
    assert!(ShortKey::of(b"a\0") != ShortKey::of(b"a"));
    assert!(ShortKey::of(b"").is_none() && ShortKey::of(&all[..17]).is_none());
    let t = tiny(&[b"0123456789abcdef", b"0123456789abcdefg", b"\0\0"]);
    assert_eq!(t.rank_of(b"0123456789abcdef"), Some(256));
    assert_eq!(t.rank_of(b"0123456789abcdefg"), Some(257));
    assert_eq!(t.rank_of(b"\0\0"), Some(258));
    assert_eq!(t.rank_of(b"\0\0\0"), None);
    assert_eq!(t.bpe_ids().count(), 259);
}

#[test]
fn padded_keys_equal_plain_keys() {
    let mut bytes: Vec<u8> = (0..40u8).map(|b| b.wrapping_mul(37) | 1).collect();
    bytes.extend([0u8; 16]);
    for start in 0..40 {
        for len in 1..=16 {
            let plain = ShortKey::of(&bytes[start..start + len]).unwrap();
            assert!(
                ShortKey::of_padded(&bytes, start, len) == plain,
                "{start} {len}"
            );
        }
    }
}

#[test]
fn every_lookup_path_agrees() {
    // Tokens of every length from 2 to 20 (the small, mid and long tables), and pieces
    // that are not tokens next to them: longer, shorter, one byte changed.
    let text: Vec<u8> = (0..64u8)
        .map(|b| b"abcdefghijklmnopqrstuvwxyz"[b as usize % 26] ^ (b / 26))
        .collect();
    let tokens: Vec<&[u8]> = (2..=20).map(|len| &text[len..2 * len]).collect();
    let t = tiny(&tokens);
    let mut padded = text.clone();
    padded.extend([0u8; 16]);
    for start in 0..text.len() {
        for end in start + 1..=text.len().min(start + 24) {
            let piece = &text[start..end];
            let want = tokens
                .iter()
                .position(|tok| *tok == piece)
                .map(|i| 256 + i as u32)
                .or_else(|| (piece.len() == 1).then(|| u32::from(piece[0])));
            assert_eq!(t.rank_of(piece), want, "{piece:?}");
            assert_eq!(t.rank_in(&text, start, end), want, "{piece:?}");
            assert_eq!(t.rank_in(&padded, start, end), want, "{piece:?}");
            assert_eq!(t.rank_padded(&padded, start, end), want.unwrap_or(NO_RANK));
            let index = t.index();
            assert_eq!(index.shortcut(&t, &text, start, end), want, "{piece:?}");
            assert_eq!(index.shortcut(&t, &padded, start, end), want, "{piece:?}");
        }
    }
}

#[test]
fn long_tokens_pass_their_filter_and_most_other_pieces_do_not() {
    // 2,000 tokens of 17 to 80 bytes; the pieces one byte longer are not tokens.
    let pieces: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| {
            let len = 17 + (i % 64) as usize;
            let mut piece: Vec<u8> = (0..len).map(|j| (i as usize * 31 + j * 7) as u8).collect();
            piece[..2].copy_from_slice(&(i as u16).to_le_bytes());
            piece
        })
        .collect();
    let t = tiny(&pieces.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let mut passed = 0;
    for (i, piece) in pieces.iter().enumerate() {
        assert_eq!(t.rank_of(piece), Some(256 + i as u32));
        let longer = [piece.as_slice(), b"!"].concat();
        assert_eq!(t.rank_of(&longer), None);
        passed += usize::from(may_hold(&t.long_filter, t.hasher.hash_one(&longer)));
    }
    // About 3 % of the filter's bits are set.
    assert!(passed < pieces.len() / 10, "{passed}");
}

#[test]
fn probe_table_runs_past_collisions_and_wraps() {
    // Every key in one slot (the last): found by walking on, around the end.
    let mut table = ProbeTable::<SmallSlot>::with_capacity(4);
    let last = 0xffff_ffff;
    assert_eq!(table.home(last), table.slots.len() - 1);
    let keys: Vec<ShortKey> = (1..=5u8).map(|b| ShortKey::of(&[b; 3]).unwrap()).collect();
    for (id, key) in keys.iter().enumerate() {
        assert!(table.insert(last, key, id as u32));
    }
    assert!(!table.insert(last, &keys[2], 9), "a repeat is refused");
    for (id, key) in keys.iter().enumerate() {
        assert_eq!(table.find(last, key), Some(id as u32));
    }
    assert_eq!(table.find(last, &ShortKey::of(b"zzz").unwrap()), None);
    assert_eq!(table.ids().count(), 5);
}

#[test]
fn byte_pair_table_equals_pair_rank() {
    let rank_based = tiny(&[b"ab", b"\xe4\xb8", b"aa"]);
    // Pair-ranked: "ba" merges first although its id is higher.
    let pair_ranked = tiny_ranked(&[b"ab", b"ba"], Some(vec![(98, 97, 0), (97, 98, 1)]));
    for t in [&rank_based, &pair_ranked] {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let (left, right) = (t.byte_ids[a as usize], t.byte_ids[b as usize]);
                assert_eq!(
                    t.byte_pair_rank(a, b),
                    t.pair_rank(&[a, b], 0, 2, left, right)
                );
            }
        }
    }
    assert_eq!(pair_ranked.byte_pair_rank(b'b', b'a'), 0);
    // Without whole-piece lookups only a single byte is a shortcut.
    let text = [b"ab".as_slice(), &[0; 16]].concat();
    assert_eq!(
        pair_ranked.index().shortcut(&pair_ranked, &text, 0, 2),
        None
    );
    assert_eq!(
        pair_ranked.index().shortcut(&pair_ranked, &text, 0, 1),
        Some(97)
    );
    assert_eq!(rank_based.byte_pair_rank(0xe4, 0xb8), 257);
}

#[test]
fn missing_bytes_are_recorded_and_duplicates_are_errors() {
    let only_a = MergeTables::new(b"a", &[0], &[1], &[true], 1, None, true).unwrap();
    assert!(only_a.lacks_bytes && only_a.has_byte(b'a') && !only_a.has_byte(b'b'));
    assert_eq!(only_a.missing_bytes().len(), 255);
    assert!(!tiny(&[]).lacks_bytes && tiny(&[]).missing_bytes().is_empty());
    let blob: Vec<u8> = (0..=255u8).chain([b'a']).collect();
    let ids: Vec<u32> = (0..257).collect();
    let lens = vec![1u32; 257];
    assert!(MergeTables::new(&blob, &ids, &lens, &[true; 257], 257, None, true).is_err());
    // Two literals may share an id, and a literal may name a BPE token's id (which then
    // keeps the BPE token's bytes); two BPE tokens may not share one.
    let blob: Vec<u8> = (0..=255u8).chain(*b"<s><t>").collect();
    let lens: Vec<u32> = [1; 256].into_iter().chain([3, 3]).collect();
    let kinds: Vec<bool> = [true; 256].into_iter().chain([false, false]).collect();
    let shared: Vec<u32> = (0..256).chain([256, 256]).collect();
    assert!(MergeTables::new(&blob, &shared, &lens, &kinds, 257, None, true).is_ok());
    let named: Vec<u32> = (0..256).chain([256, 7]).collect();
    let t = MergeTables::new(&blob, &named, &lens, &kinds, 257, None, true).unwrap();
    assert_eq!(t.token(7), Some(&[7u8][..]));
    let kinds: Vec<bool> = [true; 258].into();
    assert!(MergeTables::new(&blob, &named, &lens, &kinds, 257, None, true).is_err());
}
