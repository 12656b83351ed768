//! `backtrack`: the O(n) BPE of GitHub's `bpe` crate (github.com/github/rust-gems).
//!
//! Walk the piece taking the longest matching token; keep it only if an encoding may still
//! end where it ends and BPE would leave it next to the previous token
//! ([`BacktrackTables`]' `is_valid_pair`); else try the next shorter prefix token, and when
//! none is left drop the previous token and mark its end as a dead end. A BPE encoding is
//! exactly a token sequence whose adjacent pairs are all valid, so this finds it. The tables
//! it walks are built in [`super::backtrack_tables`].

use crate::tables::MergeTables;

use super::backtrack_tables::{BacktrackTables, NONE};

#[inline]
pub fn encode(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    encode_with(t, t.backtrack(), piece, out)
}

fn encode_with(t: &MergeTables, bt: &BacktrackTables, piece: &[u8], out: &mut Vec<u32>) {
    let base = out.len();
    // reachable[p]: an encoding of piece[..p] may still end at p (cleared at dead ends).
    let mut reachable = vec![true; piece.len() + 1];
    let mut pos = 0usize;
    let mut longest = LongestMatches::default();
    let mut token = longest.at(t, bt, piece, pos);
    let mut checked = PairChecks::new(piece.len());
    while token != NONE {
        let last = if out.len() > base {
            out[out.len() - 1]
        } else {
            NONE
        };
        loop {
            if last != NONE {
                // The first candidate from `token` on (itself, then its shorter prefixes)
                // that BPE would leave next to `last`: one lookup where it was asked before.
                token = checked.first_valid(bt, last, token);
            }
            if token != NONE {
                let end = pos + bt.token_len[token as usize] as usize;
                if reachable[end] {
                    out.push(token);
                    pos = end;
                    token = if pos < piece.len() {
                        longest.at(t, bt, piece, pos)
                    } else {
                        NONE
                    };
                    break;
                }
                token = bt.next_prefix[token as usize];
                if token != NONE {
                    continue;
                }
            }
            // No token fits here: undo the previous one and never end there again.
            reachable[pos] = false;
            out.pop();
            pos -= bt.token_len[last as usize] as usize;
            token = last;
            break;
        }
    }
}

/// [`Merges::is_valid_pair`] with recent answers remembered (direct-mapped tables): runs of
/// a character, or of a few alternating ones, ask about the same pairs again and again, and
/// the check walks both tokens' merge trees. A run of `-` in cl100k, whose run tokens come in
/// 26 lengths, tries hundreds of distinct pairs while it backtracks, so the tables grow with
/// the piece (a short piece should not pay for clearing a big one).
struct PairChecks {
    recent: Vec<(u32, u32, bool)>,
    /// `(last, from, first)`: [`Self::first_valid`]'s answers.
    firsts: Vec<(u32, u32, u32)>,
    shift: u32,
}

impl PairChecks {
    fn new(piece_len: usize) -> Self {
        let size = piece_len.next_power_of_two().clamp(64, 4096);
        Self {
            recent: vec![(NONE, NONE, false); size],
            firsts: vec![(NONE, NONE, NONE); size],
            shift: 32 - size.trailing_zeros(),
        }
    }

    #[inline]
    fn slot(&self, left: u32, right: u32) -> usize {
        let hash = (left.wrapping_mul(0x9E37_79B9) ^ right).wrapping_mul(0x85EB_CA6B);
        (hash >> self.shift) as usize
    }

    #[inline]
    fn is_valid(&mut self, bt: &BacktrackTables, left: u32, right: u32) -> bool {
        let slot = self.slot(left, right);
        let entry = &mut self.recent[slot];
        if (entry.0, entry.1) != (left, right) {
            *entry = (left, right, bt.merges.is_valid_pair(left, right));
        }
        entry.2
    }

    /// The first of `from`, `next_prefix[from]`, `next_prefix[next_prefix[from]]`, ... that
    /// BPE would leave next to `last` (`NONE` if none). Inside a run of a character a wrong
    /// token stays valid with the one before it and no candidate is valid after it, which the
    /// walk finds only after trying all of them (the 26 of `-` in cl100k, at each of the 15
    /// positions a wrong 96-dash token leaves: 900 checks per token of 1 MiB of dashes); the
    /// run asks the same `(last, from)` at every period, so remembering the answer makes
    /// each of those one lookup.
    #[inline]
    fn first_valid(&mut self, bt: &BacktrackTables, last: u32, from: u32) -> u32 {
        let slot = self.slot(last, from);
        let (l, f, first) = self.firsts[slot];
        if (l, f) == (last, from) {
            return first;
        }
        let mut token = from;
        while token != NONE && !self.is_valid(bt, last, token) {
            token = bt.next_prefix[token as usize];
        }
        self.firsts[slot] = (last, from, token);
        token
    }
}

/// [`BacktrackTables::longest_match`] with the last answer remembered: the longest match
/// depends only on the next `max_len` bytes, so where they repeat the bytes of the previous
/// query (inside a run of one character), comparing them replaces the walk.
#[derive(Default)]
struct LongestMatches {
    last: Option<(usize, u32)>,
}

impl LongestMatches {
    #[inline]
    fn at(&mut self, t: &MergeTables, bt: &BacktrackTables, piece: &[u8], pos: usize) -> u32 {
        let window = bt.max_len;
        if let Some((from, token)) = self.last {
            if pos + window <= piece.len()
                && from + window <= piece.len()
                && piece[pos..pos + window] == piece[from..from + window]
            {
                return token;
            }
        }
        let token = bt.longest_match(t, &piece[pos..]);
        self.last = Some((pos, token));
        token
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoders::buffer_sweep;
    use rustc_hash::FxHashMap;

    /// A vocabulary trained as BPE is (merge the most frequent adjacent pair, again and
    /// again) on `corpus`, so that the backtrack encoder must equal BPE on it. Ids: the 256
    /// bytes, then the merges in order; `specials` literals are interleaved as non-BPE ids
    /// every 50 ids, and an id is left unused after them, to check that ids need not be
    /// BPE tokens or used.
    fn trained(corpus: &[u8], merges: usize, specials: bool) -> MergeTables {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut seen: FxHashMap<Vec<u8>, u32> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let mut seq: Vec<u32> = corpus.iter().map(|&b| u32::from(b)).collect();
        for _ in 0..merges {
            let mut counts: FxHashMap<(u32, u32), usize> = FxHashMap::default();
            for pair in seq.windows(2) {
                *counts.entry((pair[0], pair[1])).or_default() += 1;
            }
            let Some((&(a, b), _)) = counts
                .iter()
                .filter(|(&(a, b), _)| {
                    !seen.contains_key(&[&tokens[a as usize][..], &tokens[b as usize]].concat())
                })
                .max_by_key(|(&pair, &count)| (count, std::cmp::Reverse(pair)))
            else {
                break;
            };
            let bytes = [&tokens[a as usize][..], &tokens[b as usize]].concat();
            let id = tokens.len() as u32;
            seen.insert(bytes.clone(), id);
            tokens.push(bytes);
            let mut merged = Vec::with_capacity(seq.len());
            let mut i = 0;
            while i < seq.len() {
                if i + 1 < seq.len() && (seq[i], seq[i + 1]) == (a, b) {
                    merged.push(id);
                    i += 2;
                } else {
                    merged.push(seq[i]);
                    i += 1;
                }
            }
            seq = merged;
        }
        // BPE ranks follow training order; with specials, ids still rise with the rank.
        let (mut blob, mut ids, mut lens, mut kinds) = (vec![], vec![], vec![], vec![]);
        let mut add = |bytes: &[u8], id: u32, bpe: bool| {
            blob.extend_from_slice(bytes);
            ids.push(id);
            lens.push(bytes.len() as u32);
            kinds.push(bpe);
        };
        let mut next = 0u32;
        for (rank, token) in tokens.iter().enumerate() {
            if specials && rank % 50 == 49 {
                add(format!("<|special {rank}|>").as_bytes(), next, false);
                next += 2; // and one id unused
            }
            add(token, next, true);
            next += 1;
        }
        MergeTables::new(&blob, &ids, &lens, &kinds, next as usize + 3, None, true).unwrap()
    }

    fn corpus(seed: u64, len: usize, alphabet: &[u8]) -> Vec<u8> {
        let mut state = seed;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            crate::testing::xorshift(&mut state);
            let c = alphabet[(state % alphabet.len() as u64) as usize];
            // Runs, as long pieces have them.
            let run = if state >> 60 == 0 {
                (state >> 40) % 40
            } else {
                1
            };
            out.extend(std::iter::repeat_n(c, run as usize + 1));
        }
        out.truncate(len);
        out
    }

    /// The tables as the `bpe` crate derives them, by exact lookups only.
    fn reference(t: &MergeTables) -> (Vec<u32>, Vec<(u32, u32)>) {
        let n = t.n_vocab();
        let mut ids: Vec<u32> = t.bpe_ids().collect();
        ids.sort_unstable();
        let mut next_prefix = vec![NONE; n];
        for &id in &ids {
            let piece = t.token(id).unwrap();
            next_prefix[id as usize] = (1..piece.len())
                .rev()
                .find_map(|k| t.rank_of(&piece[..k]))
                .unwrap_or(NONE);
        }
        let mut split: Vec<(u32, u32)> = (0..n as u32).map(|i| (i, i)).collect();
        let mut pairs: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let valid =
            |pairs: &FxHashMap<(u32, u32), u32>, split: &[(u32, u32)], mut l: u32, mut r: u32| {
                let mut limit = u32::MAX;
                loop {
                    if pairs.get(&(l, r)).is_some_and(|&c| c < limit) {
                        return false;
                    }
                    if l > r {
                        limit = l;
                        l = split[l as usize].1;
                        if l == limit {
                            limit = r + 1;
                            r = split[r as usize].0;
                            if r + 1 == limit {
                                return true;
                            }
                        }
                    } else {
                        limit = r + 1;
                        r = split[r as usize].0;
                        if r + 1 == limit {
                            limit = l;
                            l = split[l as usize].1;
                            if l == limit {
                                return true;
                            }
                        }
                    }
                }
            };
        for &id in &ids {
            let piece = t.token(id).unwrap();
            let mut first = next_prefix[id as usize];
            while first != NONE {
                let rest = &piece[t.token(first).unwrap().len()..];
                if let Some(second) = t.rank_of(rest) {
                    if first < id && second < id && valid(&pairs, &split, first, second) {
                        pairs.insert((first, second), id);
                        split[id as usize] = (first, second);
                        break;
                    }
                }
                first = next_prefix[first as usize];
            }
        }
        (next_prefix, split)
    }

    fn check_tables(t: &MergeTables, texts: &[Vec<u8>]) {
        let (next_prefix, split) = reference(t);
        for collide in [false, true] {
            let bt = BacktrackTables::build(t, collide).unwrap();
            for (name, got, want) in [
                ("next_prefix", &bt.next_prefix, &next_prefix),
                (
                    "split first",
                    &bt.merges.split.iter().map(|s| s.0).collect(),
                    &split.iter().map(|s| s.0).collect(),
                ),
                (
                    "split second",
                    &bt.merges.split.iter().map(|s| s.1).collect(),
                    &split.iter().map(|s| s.1).collect(),
                ),
            ] {
                let wrong: Vec<_> = (0..want.len())
                    .filter(|&i| got[i] != want[i])
                    .take(5)
                    .map(|i| (i, got[i], want[i], t.token(i as u32)))
                    .collect();
                assert!(
                    wrong.is_empty(),
                    "{name}, collide={collide}: (id, got, want, bytes) {wrong:?}"
                );
            }
            for (id, &(first, second)) in split.iter().enumerate() {
                if first != id as u32 {
                    assert_eq!(
                        bt.merges.pair_lookup.get(first, second, &bt.merges.split),
                        Some(id as u32)
                    );
                }
            }
            for text in texts {
                for start in 0..text.len() {
                    let rest = &text[start..];
                    let want = (1..=rest.len().min(bt.max_len))
                        .rev()
                        .find_map(|len| t.rank_of(&rest[..len]))
                        .unwrap_or(NONE);
                    assert_eq!(bt.longest_match(t, rest), want, "collide={collide}");
                }
            }
        }
    }

    #[test]
    fn tables_equal_the_bpe_crate_derivation() {
        let text = corpus(7, 6000, b"ab c\n");
        let t = trained(&text, 300, true);
        check_tables(&t, &[corpus(8, 300, b"ab c\nd"), vec![b' '; 200]]);
    }

    #[test]
    fn tables_equal_the_bpe_crate_derivation_in_shares() {
        // Enough tokens for the scan to run in more than one share (if there are cores):
        // pieces of a text, in order of first appearance as if that were their rank.
        let text = corpus(11, 40_000, b"abcdefghij \n");
        let mut seen: FxHashMap<&[u8], ()> = FxHashMap::default();
        let mut blob: Vec<u8> = (0..=255u8).collect();
        let mut lens = vec![1u32; 256];
        for start in 0..text.len() {
            for len in 2..=(2 + start % 13).min(text.len() - start) {
                let piece = &text[start..start + len];
                if lens.len() < 9000 && seen.insert(piece, ()).is_none() {
                    blob.extend_from_slice(piece);
                    lens.push(piece.len() as u32);
                }
            }
        }
        let n = lens.len();
        let ids: Vec<u32> = (0..n as u32).collect();
        let t = MergeTables::new(&blob, &ids, &lens, &vec![true; n], n, None, true).unwrap();
        assert!(n > 2 * 4096);
        check_tables(&t, &[corpus(12, 200, b"abcdefghij \nk")]);
    }

    #[test]
    fn encodes_as_bpe() {
        let text = corpus(3, 8000, b"aab  \n-");
        let t = trained(&text, 400, false);
        let tables = [
            BacktrackTables::build(&t, false).unwrap(),
            BacktrackTables::build(&t, true).unwrap(),
        ];
        for seed in 0..200 {
            let piece = corpus(100 + seed, 1 + (seed as usize * 7) % 300, b"aab  \n-x");
            let mut want = vec![];
            buffer_sweep::encode(&t, &piece, &mut want);
            for bt in &tables {
                let mut got = vec![];
                encode_with(&t, bt, &piece, &mut got);
                assert_eq!(got, want, "{piece:?}");
            }
        }
    }

    #[test]
    fn pair_ranked_vocabularies_are_refused() {
        let t = MergeTables::new(
            &(0..=255u8).collect::<Vec<_>>(),
            &(0..256).collect::<Vec<_>>(),
            &[1; 256],
            &[true; 256],
            256,
            Some(vec![]),
            false,
        )
        .unwrap();
        assert!(BacktrackTables::new(&t).is_err());
    }
}
