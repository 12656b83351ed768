//! The backtrack encoder's tables: the `bpe` crate's (byte_pair_encoding.rs:
//! `next_prefix_match`, `split_table`, `pair_lookup`), built differently. The crate finds the longest token with
//! an Aho-Corasick automaton over the vocabulary; building one for 200k tokens takes half a
//! second, paid by the first long piece. Here the longest match walks the piece with an
//! incremental hash through one small table (`TokenTable`) that tells at each length
//! whether a token may still start there and which token the prefix is. The hash is
//! polynomial, so the hash of a token's rest after a prefix follows from two prefix hashes:
//! one pass over the token bytes, a probe per prefix and per rest, also yields
//! `next_prefix` and the split candidates (`Scan`).
//!
//! Hashes only ever propose. Everything the tables keep is checked against the token bytes
//! or comes from the exact index ([`MergeTables::rank_of`]); nothing rests on hashes being
//! unique.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::tables::MergeTables;

pub(crate) const NONE: u32 = u32::MAX;

/// The derived tables of the `bpe` crate; needs rank-based merges (priority = id).
pub struct BacktrackTables {
    /// Byte length of each BPE token; 0 for ids that are not BPE tokens.
    pub(crate) token_len: Vec<u32>,
    /// The longest token that is a strict prefix of each token, or `NONE`.
    pub(crate) next_prefix: Vec<u32>,
    pub(crate) merges: Merges,
    /// The longest-match table.
    tokens: TokenTable,
    /// No token is longer: bounds a walk wherever the table errs.
    pub(crate) max_len: usize,
}

/// Which merge makes each token, and which pairs merge.
pub(crate) struct Merges {
    /// The pair whose merge makes each token; `(t, t)` for tokens BPE never makes.
    pub(crate) split: Vec<(u32, u32)>,
    /// `(left, right)` → the token BPE makes of them when they are adjacent.
    pub(crate) pair_lookup: PairLookup,
}

impl BacktrackTables {
    pub fn new(t: &MergeTables) -> Result<Self, String> {
        Self::build(t, false)
    }

    /// `collide` (tests) gives every token the same fingerprint and marks every string as
    /// a possible prefix, so that hashes mislead everywhere and only the exact checks keep
    /// the tables right.
    pub(crate) fn build(t: &MergeTables, collide: bool) -> Result<Self, String> {
        if t.merges().is_some() {
            return Err(
                "the backtrack encoder needs merges ordered by merged id; this vocabulary is \
                        pair-ranked, use encoder='heap-merge'"
                    .into(),
            );
        }
        let n = t.n_vocab();
        if n >= AMBIGUOUS as usize {
            return Err("too many token ids for the backtrack tables".into());
        }
        let mut token_len = vec![0u32; n];
        for id in t.bpe_ids() {
            token_len[id as usize] = t.token(id).map_or(0, <[u8]>::len) as u32;
        }
        // The tokens in id order, without sorting: ids of special literals have length 0
        // (as does an empty BPE token, which no match returns and no merge makes).
        let ids: Vec<u32> = (0..n as u32)
            .filter(|&id| token_len[id as usize] > 0)
            .collect();
        let max_len = token_len.iter().copied().max().unwrap_or(0) as usize;
        let mut tokens = TokenTable::build(t, &ids, collide);
        let mut merges = Merges {
            split: (0..n as u32).map(|i| (i, i)).collect(),
            pair_lookup: PairLookup::with_capacity(ids.len()),
        };
        let scan = Scan::run(t, &tokens, &ids, &token_len, max_len, &mut merges);
        tokens.mark_prefixes(&scan.prefix_marks, collide);
        let mut tables = Self {
            token_len,
            next_prefix: scan.next_prefix,
            merges,
            tokens,
            max_len,
        };
        if !tables.splits_spell_tokens(t) {
            // A shared fingerprint made a false candidate win: redo it with exact lookups.
            let (span, pairs) = tables.exact_candidates(t);
            tables.merges.split = (0..n as u32).map(|i| (i, i)).collect();
            tables.merges.pair_lookup.clear();
            tables.merges.choose(0, &span, &pairs);
        }
        Ok(tables)
    }

    /// Whether every split spells its token. The candidates come from hash lookups, which
    /// can only add false pairs among the true ones (a true token is always found), so the
    /// choices differ from the exact ones only if a false pair is chosen; and as a kept
    /// pair's first token has the length it was found at, a false pair does not spell its
    /// token. (A pass of its own: in [`Merges::choose`] the byte reads would slow the
    /// dependent lookups.)
    fn splits_spell_tokens(&self, t: &MergeTables) -> bool {
        (0..self.token_len.len() as u32).all(|id| {
            let (first, second) = self.merges.split[id as usize];
            first == id || {
                let piece = t.token(id).expect("a split token has bytes");
                let first_len = self.token_len[first as usize] as usize;
                first_len < piece.len()
                    && t.token(first) == Some(&piece[..first_len])
                    && t.token(second) == Some(&piece[first_len..])
            }
        })
    }

    /// The split candidates by exact lookups alone, as the `bpe` crate finds them: along
    /// `next_prefix` (which is exact), each prefix whose rest is a token; as `(span, pairs)`
    /// for [`Merges::choose`].
    #[allow(clippy::type_complexity)]
    fn exact_candidates(&self, t: &MergeTables) -> (Vec<(u32, u32)>, Vec<(u32, u32)>) {
        let mut span = vec![(0, 0); self.token_len.len()];
        let mut pairs = vec![];
        for id in 0..self.token_len.len() as u32 {
            let from = pairs.len() as u32;
            if let Some(piece) = t.token(id).filter(|_| self.token_len[id as usize] > 0) {
                let mut first = self.next_prefix[id as usize];
                while first != NONE {
                    let rest = &piece[self.token_len[first as usize] as usize..];
                    if let Some(second) = t.rank_of(rest) {
                        if first < id && second < id {
                            pairs.push((first, second));
                        }
                    }
                    first = self.next_prefix[first as usize];
                }
            }
            span[id as usize] = (from, pairs.len() as u32 - from);
        }
        (span, pairs)
    }

    /// Heap bytes held by the tables (for reports).
    pub fn heap_bytes(&self) -> usize {
        // hashbrown: a power of two of buckets, up to 7/8 full, each an id and a control
        // byte.
        let pair_buckets = (self.merges.pair_lookup.0.capacity() * 8 / 7).next_power_of_two();
        self.token_len.capacity() * 4
            + self.next_prefix.capacity() * 4
            + self.merges.split.capacity() * 8
            + pair_buckets * 5
            + self.tokens.slots.capacity() * 8
    }

    /// The longest token that starts `text`, or `NONE`.
    ///
    /// Walks the prefixes of `text` while the table may hold them as token prefixes (it
    /// never misses one, so the walk never stops short) and remembers the last one it
    /// names as a token. Only that one is checked against the bytes: a true token found
    /// longer would have named itself (or [`AMBIGUOUS`]). A failed check or an ambiguous
    /// entry means a shared fingerprint; then the exact index answers, over the lengths
    /// walked.
    #[inline]
    pub(crate) fn longest_match(&self, t: &MergeTables, text: &[u8]) -> u32 {
        let text = &text[..text.len().min(self.max_len)];
        let mut hash = 0;
        let mut walked = 0;
        let mut best = NONE;
        let mut best_len = 0;
        for &byte in text {
            hash = hash_step(hash, byte);
            match self.tokens.walk(mix(hash)) {
                Step::Stop => break,
                Step::Token(id) => {
                    best = id;
                    best_len = walked + 1;
                }
                Step::Prefix => {}
            }
            walked += 1;
        }
        if best == NONE
            || (best != AMBIGUOUS
                && self.token_len[best as usize] as usize == best_len
                && t.token(best) == Some(&text[..best_len]))
        {
            return best;
        }
        (1..=walked)
            .rev()
            .find_map(|len| t.rank_of(&text[..len]))
            .unwrap_or(NONE)
    }
}

impl Merges {
    /// Each token's last merge, in rank order (byte_pair_encoding.rs): the first candidate
    /// pair that BPE leaves adjacent. For the ids from `first_id` on, in order and after
    /// all before them, with candidates `pairs[from..from + count]`, `(from, count) =
    /// span[id - first_id]`.
    fn choose(&mut self, first_id: u32, span: &[(u32, u32)], pairs: &[(u32, u32)]) {
        for (id, &(from, count)) in (first_id..).zip(span) {
            for &(first, second) in &pairs[from as usize..(from + count) as usize] {
                if self.fresh_pair_is_valid(first, second) {
                    self.split[id as usize] = (first, second);
                    self.pair_lookup.insert(first, second, id, &self.split);
                    break;
                }
            }
        }
    }

    /// Would BPE leave `left` and `right` adjacent and unmerged? Unwinds both tokens' merges
    /// from the last one back and checks that no pair across the boundary merges first.
    pub(crate) fn is_valid_pair(&self, left: u32, right: u32) -> bool {
        self.pair_lookup.get(left, right, &self.split).is_none()
            && self.fresh_pair_is_valid(left, right)
    }

    /// [`Self::is_valid_pair`] without its first lookup, of the pair itself. The split
    /// search skips it: while a token's split is being chosen, a pair that spells the token
    /// cannot merge yet, as what it makes is the token being split. (A false candidate can
    /// only win wrongly, and [`BacktrackTables::splits_spell_tokens`] catches that.)
    fn fresh_pair_is_valid(&self, mut left: u32, mut right: u32) -> bool {
        let mut limit;
        loop {
            if left > right {
                limit = left;
                left = self.split[left as usize].1;
                if left == limit {
                    limit = right + 1;
                    right = self.split[right as usize].0;
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = self.split[right as usize].0;
                if right + 1 == limit {
                    limit = left;
                    left = self.split[left as usize].1;
                    if left == limit {
                        return true;
                    }
                }
            }
            if let Some(combined) = self.pair_lookup.get(left, right, &self.split) {
                if combined < limit {
                    return false;
                }
            }
        }
    }
}

/// `(left, right)` → the token BPE makes of them: a hash table of the made tokens alone,
/// found by their pair, which is their split (`split[made] == (left, right)`), so that an
/// entry is 4 bytes.
pub(crate) struct PairLookup(HashTable<u32>);

impl PairLookup {
    fn with_capacity(n: usize) -> Self {
        Self(HashTable::with_capacity(n))
    }

    #[inline(always)]
    fn hash(left: u32, right: u32) -> u64 {
        FxBuildHasher.hash_one((left, right))
    }

    #[inline]
    pub(crate) fn get(&self, left: u32, right: u32, split: &[(u32, u32)]) -> Option<u32> {
        self.0
            .find(Self::hash(left, right), |&made| {
                split[made as usize] == (left, right)
            })
            .copied()
    }

    /// Adds `made`, whose split must already be `(left, right)`.
    fn insert(&mut self, left: u32, right: u32, made: u32, split: &[(u32, u32)]) {
        self.0
            .insert_unique(Self::hash(left, right), made, |&other| {
                let (left, right) = split[other as usize];
                Self::hash(left, right)
            });
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// The base of the polynomial prefix hash (odd, so multiplying by it loses no bits).
const BASE: u64 = 0x9e37_79b9_7f4a_7c15;
const MIX: u64 = 0xf135_7aea_2e62_a9c5;

/// The polynomial hash of `text[..k + 1]` from that of `text[..k]`: `h(a ++ b) =
/// h(a) * BASE^len(b) + h(b)`, so a token's rest after a prefix has a hash without reading
/// it. Bytes count from 1 so that runs of zero bytes differ.
#[inline(always)]
fn hash_step(hash: u64, byte: u8) -> u64 {
    hash.wrapping_mul(BASE).wrapping_add(u64::from(byte) + 1)
}

/// Spreads a polynomial hash over all bits (its low bits only see the bytes' low bits):
/// the key of a string in the [`TokenTable`].
#[inline(always)]
fn mix(hash: u64) -> u64 {
    (hash ^ hash >> 29).wrapping_mul(MIX)
}

/// Entry values besides token ids: two tokens with one fingerprint, and no token found.
const AMBIGUOUS: u32 = u32::MAX - 1;
const ABSENT: u32 = u32::MAX;

const FP_SHIFT: u32 = 40;
const MARKS: u64 = 0xff << 32;

/// What a walk step learns from the table about a prefix.
pub(crate) enum Step {
    /// No token starts with it.
    Stop,
    /// It is (or, through a shared fingerprint, seems to be) this token, or [`AMBIGUOUS`].
    Token(u32),
    /// Some token may start with it.
    Prefix,
}

/// The tokens by key, and which keys are token prefixes: open addressing with linear
/// probing over `u64` slots, at most half full of tokens. A slot holds a 24-bit fingerprint
/// of a token's key (never 0; the slot comes from the key's high bits), eight prefix marks,
/// and the token id or [`AMBIGUOUS`] when two tokens share the fingerprint. A slot without
/// a fingerprint holds no token (probes stop there) but may hold marks.
///
/// The marks are a Bloom filter of all token prefixes that lives where a walk step looks
/// anyway: a prefix marks one of the eight bits (by its key's low bits) in its home slot.
/// About eight marks per prefix exist, so a string that is no prefix is let through about
/// one time in eight, which costs one more step.
///
/// A lookup of a token finds its id or [`AMBIGUOUS`]; a lookup of another string finds
/// [`ABSENT`] or, through a shared fingerprint, some token's id.
struct TokenTable {
    slots: Vec<u64>,
    mask: usize,
    shift: u32,
    fp_mask: u32,
}

/// Tokens whose probes are gathered and loaded together (see [`TokenTable::touch`]).
const BATCH: usize = 32;

impl TokenTable {
    /// Every token in, without the prefix marks.
    pub(crate) fn build(t: &MergeTables, ids: &[u32], collide: bool) -> Self {
        let size = (ids.len() * 2).next_power_of_two().max(2);
        let mut table = Self {
            slots: vec![0; size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
            fp_mask: if collide { 0 } else { u32::MAX },
        };
        let mut keys = Vec::with_capacity(BATCH);
        for batch in ids.chunks(BATCH) {
            keys.clear();
            keys.extend(batch.iter().map(|&id| {
                let piece = t.token(id).expect("a BPE id has bytes");
                mix(piece.iter().fold(0, |hash, &byte| hash_step(hash, byte)))
            }));
            table.touch(&keys);
            for (&id, &key) in batch.iter().zip(&keys) {
                table.insert(key, id);
            }
        }
        table
    }

    /// The home slot of `key`, its fingerprint in place, and its prefix mark in place.
    #[inline(always)]
    fn place(&self, key: u64) -> (usize, u64, u64) {
        let fp = ((key >> 8) as u32 & 0xff_ffff & self.fp_mask) | 1;
        let mark = 1 << (32 + (key & 7));
        (
            (key >> self.shift) as usize,
            u64::from(fp) << FP_SHIFT,
            mark,
        )
    }

    /// The id of the token with key `key`, [`AMBIGUOUS`], or [`ABSENT`].
    #[inline(always)]
    fn find(&self, key: u64) -> u32 {
        let (home, fp, _) = self.place(key);
        self.find_from(home, fp)
    }

    #[inline(always)]
    fn find_from(&self, mut i: usize, fp: u64) -> u32 {
        loop {
            // Two slots at a time and no branch on either: the one branch is taken only
            // where both hold other tokens (what a probe finds is hard to predict).
            let (a, b) = (self.slots[i], self.slots[(i + 1) & self.mask]);
            let (fp_a, fp_b) = (a >> FP_SHIFT << FP_SHIFT, b >> FP_SHIFT << FP_SHIFT);
            let found_b = if fp_b == fp { b as u32 } else { ABSENT };
            let found = if fp_a == fp {
                a as u32
            } else if fp_a == 0 {
                ABSENT
            } else {
                found_b
            };
            if (fp_a == fp) | (fp_a == 0) | (fp_b == fp) | (fp_b == 0) {
                return found;
            }
            i = (i + 2) & self.mask;
        }
    }

    /// One step of the longest-match walk: one slot read, mostly.
    #[inline(always)]
    fn walk(&self, key: u64) -> Step {
        let (home, fp, mark) = self.place(key);
        let slot = self.slots[home];
        if slot & mark == 0 {
            return Step::Stop;
        }
        let found = match slot >> FP_SHIFT << FP_SHIFT {
            own if own == fp => slot as u32,
            0 => ABSENT,
            _ => self.find_from(home, fp),
        };
        if found == ABSENT {
            Step::Prefix
        } else {
            Step::Token(found)
        }
    }

    fn insert(&mut self, key: u64, id: u32) {
        let (mut i, fp, _) = self.place(key);
        loop {
            let slot = self.slots[i];
            match slot >> FP_SHIFT << FP_SHIFT {
                0 => {
                    self.slots[i] = slot & MARKS | fp | u64::from(id);
                    return;
                }
                own if own == fp => {
                    self.slots[i] = slot & MARKS | fp | u64::from(AMBIGUOUS);
                    return;
                }
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    /// The mark of `key` as one byte of its home slot's eight, for [`Self::mark_prefixes`].
    #[inline(always)]
    fn mark_byte(&self, key: u64) -> (usize, u8) {
        let (home, _, mark) = self.place(key);
        (home, (mark >> 32) as u8)
    }

    /// Sets the prefix marks gathered by the scan (a byte per slot per share).
    fn mark_prefixes(&mut self, marks: &[Vec<u8>], collide: bool) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let byte = if collide {
                0xff
            } else {
                marks.iter().fold(0, |byte, share| byte | share[i])
            };
            *slot |= u64::from(byte) << 32;
        }
    }

    /// Loads the home slots of `keys` together before they are probed: loads that do not
    /// wait on each other overlap their cache misses, where probes (which branch on what
    /// they read) would take them one at a time.
    fn touch(&self, keys: &[u64]) {
        let sum = keys.iter().fold(0u64, |sum, &key| {
            sum.wrapping_add(self.slots[self.place(key).0])
        });
        std::hint::black_box(sum);
    }
}

/// What one pass over the token bytes finds, besides the splits (see [`Scan::share`]).
struct Scan {
    next_prefix: Vec<u32>,
    /// Each share's prefix marks, a byte per table slot.
    prefix_marks: Vec<Vec<u8>>,
}

/// A share of the scan: its first id, its tokens, and its ids' `next_prefix` and spans.
type Share<'a> = (u32, &'a [u32], &'a mut [u32], &'a mut [(u32, u32)]);
/// A scanned share: its first id, its ids' spans and its pairs, and its prefix marks.
type Scanned<'a> = (u32, &'a mut [(u32, u32)], Vec<(u32, u32)>, Vec<u8>);

/// Ties the closure's borrows to one lifetime (closures infer their own for each call).
fn one_lifetime<'a, F: Fn(Share<'a>) -> Scanned<'a>>(scan: F) -> F {
    scan
}

/// Fewer tokens than this to a share, and a thread costs more than it saves.
const MIN_SHARE: usize = 4096;

impl Scan {
    /// Scans the tokens in as many shares as there are cores (up to 4), and chooses their
    /// splits into `merges` in id order as the shares come in. The shares only read the
    /// token table and write their own ids' entries; the calling thread's share is the
    /// first and smaller one, as it then chooses its splits while the others still scan
    /// (choosing takes about a third of the time of scanning).
    fn run(
        t: &MergeTables,
        tokens: &TokenTable,
        ids: &[u32],
        token_len: &[u32],
        max_len: usize,
        merges: &mut Merges,
    ) -> Self {
        let powers: Vec<u64> = std::iter::successors(Some(1u64), |&p| Some(p.wrapping_mul(BASE)))
            .take(max_len + 1)
            .collect();
        let n = t.n_vocab();
        let mut next_prefix = vec![NONE; n];
        let mut span = vec![(0, 0); n];
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get().min(4))
            .min(ids.len() / MIN_SHARE)
            .max(1);
        let mut bounds = vec![0, ids.len() * 3 / (4 * threads - 1)];
        if threads > 1 {
            let others = (ids.len() - bounds[1]).div_ceil(threads - 1);
            while bounds[bounds.len() - 1] < ids.len() {
                bounds.push((bounds[bounds.len() - 1] + others).min(ids.len()));
            }
        }
        // Each share owns the ids from its first token (from 0 for the first share) to the
        // next share's first token.
        let mut work = vec![];
        let (mut next_prefix_rest, mut span_rest) = (&mut next_prefix[..], &mut span[..]);
        for (k, pair) in bounds.windows(2).enumerate() {
            let share_ids = &ids[pair[0]..pair[1]];
            let base = if k == 0 { 0 } else { share_ids[0] };
            let end = ids.get(pair[1]).map_or(n as u32, |&id| id);
            let (next_prefix_share, rest) = next_prefix_rest.split_at_mut((end - base) as usize);
            next_prefix_rest = rest;
            let (span_share, rest) = span_rest.split_at_mut((end - base) as usize);
            span_rest = rest;
            work.push((base, share_ids, next_prefix_share, span_share));
        }
        let scan = one_lifetime(|(base, share_ids, next_prefix, span)| {
            let (pairs, marks) = Self::share(
                t,
                tokens,
                token_len,
                &powers,
                base,
                share_ids,
                next_prefix,
                span,
            );
            (base, span, pairs, marks)
        });
        let mut work = work.into_iter();
        let first = work.next().expect("a share at least");
        let prefix_marks = std::thread::scope(|scope| {
            let others: Vec<_> = work.map(|share| scope.spawn(move || scan(share))).collect();
            let shares = std::iter::once(scan(first)).chain(others.into_iter().map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            }));
            let mut prefix_marks = vec![];
            for (base, span, pairs, marks) in shares {
                merges.choose(base, span, &pairs);
                prefix_marks.push(marks);
            }
            prefix_marks
        });
        Self {
            next_prefix,
            prefix_marks,
        }
    }

    /// For each token of `ids`: its prefixes' marks; at each length `k`, whether
    /// `token[..k]` is a token and, if so, whether `token[k..]` is one too (one probe each,
    /// by the polynomial hash), which gives the split candidates, longest prefix first (into
    /// the returned pairs and `span`), and `next_prefix`, the longest prefix token, checked
    /// against the bytes. `next_prefix` and `span` start at the id `base`.
    ///
    /// Each batch's probes are gathered and touched first ([`TokenTable::touch`]).
    #[allow(clippy::too_many_arguments)]
    fn share(
        t: &MergeTables,
        tokens: &TokenTable,
        token_len: &[u32],
        powers: &[u64],
        base: u32,
        ids: &[u32],
        next_prefix: &mut [u32],
        span: &mut [(u32, u32)],
    ) -> (Vec<(u32, u32)>, Vec<u8>) {
        let bytes = |id: u32| t.token(id).expect("a BPE id has bytes");
        let at = |id: u32| (id - base) as usize;
        let mut pairs = Vec::with_capacity(ids.len() * 2);
        let mut marks = vec![0u8; tokens.slots.len()];
        let mut hashes: Vec<u64> = Vec::new();
        let mut prefix_keys: Vec<u64> = Vec::new();
        // (token, k, token[..k] as a token, key of token[k..])
        let mut rests: Vec<(u32, u32, u32, u64)> = Vec::new();
        let mut rest_keys: Vec<u64> = Vec::new();
        for batch in ids.chunks(BATCH) {
            hashes.clear();
            prefix_keys.clear();
            for &id in batch {
                let mut hash = 0;
                for &byte in bytes(id) {
                    hash = hash_step(hash, byte);
                    let key = mix(hash);
                    let (slot, mark) = tokens.mark_byte(key);
                    marks[slot] |= mark;
                    hashes.push(hash);
                    prefix_keys.push(key);
                }
            }
            tokens.touch(&prefix_keys);
            rests.clear();
            let mut start = 0;
            for &id in batch {
                let piece = bytes(id);
                let len = piece.len();
                let (hashes, keys) = (
                    &hashes[start..start + len],
                    &prefix_keys[start..start + len],
                );
                start += len;
                let mut longest = NONE;
                for k in (1..len).rev() {
                    let first = match tokens.find(keys[k - 1]) {
                        AMBIGUOUS => t.rank_of(&piece[..k]).unwrap_or(ABSENT),
                        // A token of another length came through a shared fingerprint:
                        // dropped, so no false pair takes the place of a true one.
                        other if other != ABSENT && token_len[other as usize] as usize != k => {
                            ABSENT
                        }
                        other => other,
                    };
                    if first != ABSENT {
                        if longest == NONE {
                            longest = first;
                        }
                        let rest = hashes[len - 1]
                            .wrapping_sub(hashes[k - 1].wrapping_mul(powers[len - k]));
                        rests.push((id, k as u32, first, mix(rest)));
                    }
                }
                next_prefix[at(id)] = longest;
            }
            rest_keys.clear();
            rest_keys.extend(rests.iter().map(|&(.., key)| key));
            tokens.touch(&rest_keys);
            // Every pair is written and kept by advancing a count: no branch on the probe.
            let mut kept = pairs.len();
            pairs.resize(kept + rests.len(), (0, 0));
            let mut current = NONE;
            for &(id, k, first, key) in &rests {
                let second = match tokens.find(key) {
                    AMBIGUOUS => t.rank_of(&bytes(id)[k as usize..]).unwrap_or(ABSENT),
                    other => other,
                };
                let span = &mut span[at(id)];
                if id != current {
                    current = id;
                    span.0 = kept as u32;
                }
                pairs[kept] = (first, second);
                kept += usize::from(first < id && second < id);
                span.1 = kept as u32 - span.0;
            }
            pairs.truncate(kept);
        }
        // A longest prefix named through a shared fingerprint: ask the exact index. (Its
        // length is right already, and a true prefix token names itself or is ambiguous
        // and was asked, so no longer one was missed.)
        for &id in ids {
            let prefix = next_prefix[at(id)];
            if prefix != NONE {
                let piece = bytes(id);
                if !piece.starts_with(bytes(prefix)) {
                    next_prefix[at(id)] = (1..piece.len())
                        .rev()
                        .find_map(|k| t.rank_of(&piece[..k]))
                        .unwrap_or(NONE);
                }
            }
        }
        (pairs, marks)
    }
}
