//! The encoders of SentencePiece vocabularies, and what the two share:
//!
//! * `score-merge` ([`ScoreMerge`]): SentencePiece's BPE,
//!   the pair of highest score first.
//! * `rank-merge` ([`RankMerge`]): HF `tokenizers`'
//!   character-level BPE with `byte_fallback`, the pair of lowest merge rank first.
//!
//! Both keep every mergeable adjacent pair in a heap and skip an entry whose symbols changed
//! since it was pushed (lazy invalidation): O(n log n) per piece, on any piece; pieces of up
//! to `SWEEP_SYMBOLS` symbols are merged by sweeps over arrays on the stack instead.
//!
//! Here: [`sentencepiece_encoder`], which makes the encoder registered under a name, and
//! the parts both encoders use: the sweep, each thread's memo of the pairs the sweeps looked
//! up, the ids of characters and of byte pieces, and the check that a vocabulary's merges
//! are pair-ranked.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::encoders::Encoder;
use crate::error::Error;
use crate::pipeline::most_recent;
use crate::spec::PipelineSpec;
use crate::tables::{MergeTables, Rank, NO_RANK};

use super::rank_merge::RankMerge;
use super::score_merge::ScoreMerge;

/// No symbol / no id.
pub(super) const NONE: u32 = u32::MAX;

/// A pair waiting in a heap: its rank, its left symbol, two fields that tell whether it is
/// still current, and the token it makes.
pub(super) type HeapEntry = Reverse<(Rank, u32, u32, u32, u32)>;

/// Pieces of up to this many symbols are merged by a sweep over arrays on the stack (find
/// the pair of lowest rank, leftmost first; merge; look up its two new neighbours' pairs):
/// quadratic, but without the heap's pushes and pops and with no allocation, it is the
/// fastest way for the words most pieces are. The live symbols are the bits of one `u64`, so
/// a merge moves nothing: its neighbours are a count of zero bits away. Longer pieces go to
/// the heap.
pub(super) const SWEEP_SYMBOLS: usize = 64;

/// Each thread's memo of the pairs the sweeps looked up, per encoder (the most recently used
/// [`MEMO_ENCODERS`]): the same few pairs (`▁▁`, `▁t`, `he`...) come up in word after word,
/// and a memo hit is two reads where the lookup is a hash of the joined text and a probe.
pub(super) struct PairMemo {
    /// Per slot: `left << 32 | right` of its pair (`u64::MAX`: empty), the pair's rank and
    /// the token it makes, side by side so that a lookup touches one cache line.
    slots: Box<[MemoSlot]>,
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct MemoSlot {
    key: u64,
    rank: Rank,
    made: u32,
}

/// 16,384 slots of 16 bytes: 256 KB, which stays in a core's L2 cache beside the piece
/// table's lines, where a larger memo's loads miss it.
const MEMO_BITS: u32 = 14;
const MEMO_SLOTS: usize = 1 << MEMO_BITS;
const MEMO_ENCODERS: usize = 4;

impl PairMemo {
    fn new() -> Self {
        let empty = MemoSlot {
            key: u64::MAX,
            rank: NO_RANK,
            made: NONE,
        };
        Self {
            slots: vec![empty; MEMO_SLOTS].into_boxed_slice(),
        }
    }

    /// The memo of pair `(left, right)`, or `lookup()` remembered.
    #[inline(always)]
    pub(super) fn get(
        &mut self,
        left: u32,
        right: u32,
        lookup: impl FnOnce() -> (Rank, u32),
    ) -> (Rank, u32) {
        let key = u64::from(left) << 32 | u64::from(right);
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MEMO_BITS)) as usize;
        let entry = &mut self.slots[slot];
        if entry.key == key {
            return (entry.rank, entry.made);
        }
        let (rank, made) = lookup();
        *entry = MemoSlot { key, rank, made };
        (rank, made)
    }
}

thread_local! {
    static PAIR_MEMOS: RefCell<Vec<(u64, PairMemo)>> = const { RefCell::new(Vec::new()) };
}

/// Names each encoder's memos (never reused, so a new encoder never reads an old one's).
pub(super) static NEXT_ENCODER_ID: AtomicU64 = AtomicU64::new(0);

/// `f` with this thread's pair memo of encoder `id`.
pub(super) fn with_memo<R>(id: u64, f: impl FnOnce(&mut PairMemo) -> R) -> R {
    PAIR_MEMOS.with_borrow_mut(|memos| f(most_recent(memos, id, MEMO_ENCODERS, PairMemo::new)))
}

/// The id of each byte's byte piece (`<0xNN>`, which is
/// the token of the byte itself unless a one-character piece spells that byte).
pub(super) fn byte_pieces(tables: &MergeTables) -> [u32; 256] {
    let mut ids = [NONE; 256];
    for (b, id) in ids.iter_mut().enumerate() {
        let text = format!("<0x{b:02X}>");
        *id = tables
            .rank_of(text.as_bytes())
            .unwrap_or(tables.byte_id(b as u8));
    }
    ids
}

/// The pair-ranked merges of a SentencePiece vocabulary, or why the encoder cannot run.
pub(super) fn merges<'a>(
    tables: &'a MergeTables,
    name: &str,
) -> Result<&'a FxHashMap<(u32, u32), Rank>, Error> {
    tables.merges().ok_or_else(|| {
        Error::Unsupported(format!(
            "the {name} encoder reads SentencePiece vocabularies, whose merges are a pair-ranked table"
        ))
    })
}

/// The bits of a sweep key that hold the left symbol's index ([`sweep_merge`]).
const KEY_BITS: u32 = SWEEP_SYMBOLS.trailing_zeros();

/// The highest rank a sweep key holds above [`KEY_BITS`] bits (a key is then never `NO_RANK`);
/// a vocabulary with higher ranks (more than 67 million merges) is merged by the heap.
const MAX_SWEEP_RANK: Rank = (NO_RANK >> KEY_BITS) - 1;

/// The sweep both encoders run on a piece of `n` symbols, at most [`SWEEP_SYMBOLS`]: symbol
/// `k` starts at byte `starts[k]` (`starts[n]` is the piece's end) and has id `ids[k]`;
/// `pair(left id, right id, start, end)` is the rank of merging two adjacent symbols that
/// cover bytes `start..end` together, and the token it makes (`NO_RANK`: none). The pair of
/// lowest rank merges, the leftmost on ties, until none is left; returns the live symbols,
/// one bit each (a merged symbol keeps its start, and its id becomes the token made), or
/// None (and `ids` changed) for a rank above [`MAX_SWEEP_RANK`].
///
/// Each pair is kept as one key, its rank above its left symbol's index, so the least key
/// is the lowest rank's leftmost pair: a round is one minimum over the keys, which the
/// compiler vectorizes, with no search for where the minimum is (a loop whose exit branch
/// mispredicted in most rounds).
pub(super) fn sweep_merge(
    starts: &[u32; SWEEP_SYMBOLS + 1],
    ids: &mut [u32; SWEEP_SYMBOLS],
    n: usize,
    mut pair: impl FnMut(u32, u32, u32, u32) -> (Rank, u32),
) -> Option<u64> {
    debug_assert!(n <= SWEEP_SYMBOLS);
    if n == 0 {
        return Some(0);
    }
    let mut alive = u64::MAX >> (64 - n);
    // The live symbol after `k`, or `n`; the one before it.
    let next = |alive: u64, k: usize| {
        let above = alive >> k >> 1;
        if above == 0 {
            n
        } else {
            k + 1 + above.trailing_zeros() as usize
        }
    };
    let prev = |alive: u64, k: usize| {
        let below = alive & ((1u64 << k) - 1);
        (below != 0).then(|| 63 - below.leading_zeros() as usize)
    };
    // keys[k], made[k]: merging live symbol k with the next live one (NO_RANK for the last
    // live symbol and the absorbed ones).
    let mut keys = [NO_RANK; SWEEP_SYMBOLS];
    let mut made = [NONE; SWEEP_SYMBOLS];
    let keyed = |keys: &mut [u32; SWEEP_SYMBOLS],
                 made: &mut [u32; SWEEP_SYMBOLS],
                 k: usize,
                 (rank, token): (Rank, u32)| {
        made[k] = token;
        keys[k] = match rank {
            NO_RANK => NO_RANK,
            rank if rank <= MAX_SWEEP_RANK => rank << KEY_BITS | k as u32,
            _ => return None,
        };
        Some(())
    };
    for k in 0..n - 1 {
        let joined = pair(ids[k], ids[k + 1], starts[k], starts[k + 2]);
        keyed(&mut keys, &mut made, k, joined)?;
    }
    loop {
        let best = keys[..n - 1]
            .iter()
            .fold(NO_RANK, |best, &key| best.min(key));
        if best == NO_RANK {
            return Some(alive);
        }
        let at = (best & (SWEEP_SYMBOLS as u32 - 1)) as usize;
        let right = next(alive, at);
        ids[at] = made[at];
        alive &= !(1u64 << right);
        keys[right] = NO_RANK;
        let after = next(alive, at);
        if after < n {
            let end = starts[next(alive, after)];
            let joined = pair(ids[at], ids[after], starts[at], end);
            keyed(&mut keys, &mut made, at, joined)?;
        } else {
            keys[at] = NO_RANK;
        }
        if let Some(before) = prev(alive, at) {
            let joined = pair(ids[before], ids[at], starts[before], starts[after]);
            keyed(&mut keys, &mut made, before, joined)?;
        }
    }
}

/// The live symbols of a sweep's result (`alive` from [`sweep_merge`]), as `(start, end, id)`.
pub(super) fn live_symbols<'a>(
    starts: &'a [u32; SWEEP_SYMBOLS + 1],
    ids: &'a [u32; SWEEP_SYMBOLS],
    n: usize,
    mut alive: u64,
) -> impl Iterator<Item = (usize, usize, u32)> + 'a {
    std::iter::from_fn(move || {
        if alive == 0 {
            return None;
        }
        let k = alive.trailing_zeros() as usize;
        alive &= alive - 1;
        let end = if alive == 0 {
            starts[n]
        } else {
            starts[alive.trailing_zeros() as usize]
        };
        Some((starts[k] as usize, end as usize, ids[k]))
    })
}

/// The id of the token spelled by `text` (a character or a merged symbol), or [`NONE`].
#[inline]
pub(super) fn id_of(tables: &MergeTables, text: &[u8]) -> u32 {
    if text.len() == 1 {
        tables.byte_id(text[0])
    } else {
        tables.rank_of(text).unwrap_or(NONE)
    }
}

/// The id of each character of the Basic Multilingual Plane that is a token ([`NONE`] for
/// the others): a piece's first step, one id per character, is then an array read where
/// [`id_of`] hashes and probes the token table (a run of `▁`, a line of CJK text). A
/// character may also have a hidden id ([`Self::hide`]): one past the vocabulary that
/// `score-merge` gives a character that pieces hold but that is no token of its own.
pub(super) struct CharIds {
    bmp: Box<[u32]>,
    /// The hidden ids of characters past the plane (empty for most vocabularies).
    astral: FxHashMap<u32, u32>,
}

impl CharIds {
    pub(super) fn new(tables: &MergeTables) -> Self {
        let mut bmp = vec![NONE; 0x1_0000].into_boxed_slice();
        for id in tables.bpe_ids() {
            // (a character of the plane is at most three bytes)
            let Some(text) = tables.token(id).filter(|text| text.len() <= 3) else {
                continue;
            };
            if let Ok(text) = std::str::from_utf8(text) {
                let mut chars = text.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    if let Some(slot) = bmp.get_mut(c as usize) {
                        *slot = id;
                    }
                }
            }
        }
        for (b, slot) in bmp.iter_mut().take(0x80).enumerate() {
            *slot = tables.byte_id(b as u8);
        }
        Self {
            bmp,
            astral: FxHashMap::default(),
        }
    }

    /// The id of the character of `width` bytes at `bytes[i..]` ([`id_of`] of it, or its
    /// hidden id).
    #[inline(always)]
    pub(super) fn get(&self, tables: &MergeTables, bytes: &[u8], i: usize, width: usize) -> u32 {
        let at = |k: usize| u32::from(bytes[i + k] & 0x3F);
        match width {
            1 => self.bmp[usize::from(bytes[i])],
            2 => self.bmp[(u32::from(bytes[i] & 0x1F) << 6 | at(1)) as usize],
            3 => self.bmp[(u32::from(bytes[i] & 0x0F) << 12 | at(1) << 6 | at(2)) as usize],
            _ => {
                let id = id_of(tables, &bytes[i..i + width]);
                if id != NONE || self.astral.is_empty() {
                    return id;
                }
                let code = u32::from(bytes[i] & 0x07) << 18 | at(1) << 12 | at(2) << 6 | at(3);
                self.astral.get(&code).copied().unwrap_or(NONE)
            }
        }
    }

    /// The id of character `c`.
    pub(super) fn of_char(&self, tables: &MergeTables, c: char) -> u32 {
        let mut buffer = [0u8; 4];
        let bytes = c.encode_utf8(&mut buffer).as_bytes();
        self.get(tables, bytes, 0, bytes.len())
    }

    /// Give `c`, which has no id, the hidden id `id`.
    pub(super) fn hide(&mut self, c: char, id: u32) {
        match self.bmp.get_mut(c as usize) {
            Some(slot) => *slot = id,
            None => {
                self.astral.insert(c as u32, id);
            }
        }
    }
}

/// Where a SentencePiece piece may be cut with no change to its ids: between two characters
/// that no token of the vocabulary holds side by side. A merge only ever makes a token, so
/// no symbol ever spans such a place, and the merges on its two sides are the same ones, in
/// the same order, as on each side alone. The pipeline cuts the spanner's pieces there
/// ([`Encoder::piece_cuts`]): code's `▁self.assertEqual(x,` is five pieces the piece cache
/// has seen before, not one it has not (4 MB of code with Mistral's vocabulary: 81k distinct
/// pieces cut at words, 27k cut here too).
///
/// Two characters are told by the last byte of the first and the first byte of the second,
/// with a `▁` also read as a space (text before its spaces are escaped,
/// [`crate::normalizers::sentencepiece::SentencePieceNormalizer::normalized_pieces`]): a
/// pair some token holds in either reading is never cut.
///
/// ```
/// # use wordsplit::encoders::sentencepiece::PieceCuts;
/// let cuts = PieceCuts::from_tokens([&b"ab"[..], b"b(", "▁a".as_bytes()]);
/// let mut ends = vec![];
/// cuts.refine(b"ab(c)", &[5], &mut ends);
/// assert_eq!(ends, [3, 4, 5]); // "ab(", "c", ")": only `b(` is held by a token
/// assert_eq!((cuts.apart(b' ', b'a'), cuts.apart(b' ', b'b')), (0, 1));
/// ```
pub struct PieceCuts {
    /// Bit `x << 8 | y`: a cut between bytes `x` and `y` is safe.
    apart: Box<[u64; 1024]>,
}

impl PieceCuts {
    /// The cuts of a vocabulary whose tokens' texts are `tokens`.
    pub fn from_tokens<'a>(tokens: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut apart = Box::new([u64::MAX; 1024]);
        let mut clear = |x: u8, y: u8| {
            let bit = usize::from(x) << 8 | usize::from(y);
            apart[bit >> 6] &= !(1u64 << (bit & 63));
        };
        for token in tokens {
            let Ok(text) = std::str::from_utf8(token) else {
                token.windows(2).for_each(|pair| clear(pair[0], pair[1]));
                continue;
            };
            let mut chars = text.chars().peekable();
            while let (Some(c), Some(&d)) = (chars.next(), chars.peek()) {
                let mut buffer = [0u8; 4];
                let last = *c.encode_utf8(&mut buffer).as_bytes().last().unwrap_or(&0);
                let first = d.encode_utf8(&mut buffer).as_bytes()[0];
                let spaced = |c: char, byte: u8| if c == '\u{2581}' { b' ' } else { byte };
                for x in [last, spaced(c, last)] {
                    for y in [first, spaced(d, first)] {
                        clear(x, y);
                    }
                }
            }
        }
        // (never inside a character)
        for x in 0..=255u8 {
            for y in 0x80..0xC0u8 {
                clear(x, y);
            }
        }
        Self { apart }
    }

    /// The cuts of `tables`' tokens.
    pub(super) fn of(tables: &MergeTables) -> Self {
        Self::from_tokens((0..tables.n_vocab() as u32).filter_map(|id| tables.token(id)))
    }

    /// 1 when a cut between bytes `x` and `y` (the last byte of a character and the first of
    /// the next) is safe, else 0.
    #[inline(always)]
    pub fn apart(&self, x: u8, y: u8) -> usize {
        let bit = usize::from(x) << 8 | usize::from(y);
        (self.apart[bit >> 6] >> (bit & 63)) as usize & 1
    }

    /// The pieces of `text` ending at `ends`, each cut where this allows, their ends
    /// appended to `out`.
    pub fn refine(&self, text: &[u8], ends: &[usize], out: &mut Vec<usize>) {
        let mut start = 0;
        for &end in ends {
            // Each end is written, and kept when it is a cut: no branch per byte (pieces of
            // code are cut every few bytes, a branch that would be mispredicted).
            out.reserve(end - start + 1);
            let spare = out.spare_capacity_mut();
            let mut n = 0;
            for i in start + 1..end {
                spare[n].write(i);
                n += self.apart(text[i - 1], text[i]);
            }
            spare[n].write(end);
            // SAFETY: the first n + 1 spare slots were written above (at most end - start
            // of them, within the room reserved).
            unsafe { out.set_len(out.len() + n + 1) };
            start = end;
        }
    }
}

/// The SentencePiece encoder registered as `name` (`score-merge` or `rank-merge`) over a
/// vocabulary's tables, pipeline, special tokens and scores (by id: a model whose pieces hold
/// characters that are no piece has them, see [`ScoreMerge::new`]); None for another name.
pub fn sentencepiece_encoder(
    name: &str,
    tables: Arc<MergeTables>,
    spec: &PipelineSpec,
    specials: &[(String, u32)],
    scores: Option<&[f64]>,
) -> Option<Result<Box<dyn Encoder>, Error>> {
    match name {
        "score-merge" => Some(
            ScoreMerge::new(tables, spec, specials, scores)
                .map(|e| Box::new(e) as Box<dyn Encoder>),
        ),
        "rank-merge" => Some(RankMerge::new(tables, spec).map(|e| Box::new(e) as Box<dyn Encoder>)),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::code_points::utf8_width;
    use crate::testing::sentencepiece_spec;
    use crate::testing::texts;
    use crate::Literal;

    /// Byte tokens at ids `first + b` (`<0xNN>` where a piece spells that byte's character),
    /// then `pieces` from id `first + 256` on, and these merges `(left, right, rank)` by text.
    pub(crate) fn tables(
        first: u32,
        pieces: &[&str],
        merges: &[(&str, &str, Rank)],
    ) -> Arc<MergeTables> {
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .map(|b| {
                let own = pieces.iter().any(|p| p.as_bytes() == [b]);
                let bytes = if own {
                    format!("<0x{b:02X}>").into_bytes()
                } else {
                    vec![b]
                };
                (bytes, first + u32::from(b))
            })
            .collect();
        let id = |text: &str| first + 256 + pieces.iter().position(|p| *p == text).unwrap() as u32;
        tokens.extend(pieces.iter().map(|p| (p.as_bytes().to_vec(), id(p))));
        let merges = merges
            .iter()
            .map(|&(l, r, rank)| (id(l), id(r), rank))
            .collect();
        let literals = [Literal {
            text: "<unk>".into(),
            id: 0,
            special: true,
            flags: 0,
        }];
        let n_vocab = first as usize + 256 + pieces.len() + 1;
        let bpe = tokens.iter().map(|(b, i)| (b.as_slice(), *i));
        Arc::new(MergeTables::from_tokens(bpe, &literals, n_vocab, Some(merges), false).unwrap())
    }

    /// The SentencePiece pipeline of these flat fields (see [`sentencepiece_spec`]), written
    /// as the inside of a JSON object.
    pub(crate) fn pattern(fields: &str) -> PipelineSpec {
        sentencepiece_spec(&serde_json::from_str(&format!("{{{fields}}}")).unwrap())
    }

    pub(crate) fn encode(encoder: &dyn Encoder, text: &str) -> Vec<u32> {
        let mut out = vec![];
        encoder.encode_piece(text.as_bytes(), &mut out).unwrap();
        out
    }

    /// The vocabulary of the tests that sweeps give the heaps' ids: pieces of ▁, a, b, é with
    /// merges of equal ranks (ties go leftmost) and a chain that makes long tokens, up to and
    /// past the sweep's 64 symbols (the heap takes those).
    pub(crate) fn sweep_vocab() -> Arc<MergeTables> {
        let pieces = [
            "▁",
            "a",
            "b",
            "é",
            "▁▁",
            "▁a",
            "ab",
            "ba",
            "aa",
            "▁▁▁",
            "▁ab",
            "aba",
            "▁▁▁▁",
            "éa",
            "abab",
            "▁aba",
        ];
        let merges = [
            ("▁", "▁", 3),
            ("▁", "a", 1),
            ("a", "b", 1),
            ("b", "a", 2),
            ("a", "a", 0),
            ("▁▁", "▁", 4),
            ("▁", "▁▁", 4),
            ("▁a", "b", 5),
            ("▁", "ab", 5),
            ("ab", "a", 6),
            ("a", "ba", 6),
            ("▁▁", "▁▁", 7),
            ("▁▁▁", "▁", 7),
            ("▁", "▁▁▁", 7),
            ("é", "a", 2),
            ("ab", "ab", 8),
            ("aba", "b", 8),
            ("▁ab", "a", 9),
            ("▁", "aba", 9),
        ];
        tables(1, &pieces, &merges)
    }

    /// The texts the sweeps and the heaps encode in those tests: 3,000 of up to 80 characters.
    pub(crate) fn sweep_texts() -> Vec<String> {
        texts(7, &["▁", "a", "b", "é", "c", "😀"], 3000, 80)
    }

    #[test]
    fn pair_memo_slots_answer_only_for_their_own_pair() {
        let mut memo = PairMemo::new();
        // Find two pairs that share a slot: the second must not get the first's answer.
        let slot = |left: u32, right: u32| {
            let key = u64::from(left) << 32 | u64::from(right);
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MEMO_BITS)) as usize
        };
        let first = slot(1, 2);
        let other = (3..).find(|&r| slot(1, r) == first).unwrap();
        assert_eq!(memo.get(1, 2, || (5, 50)), (5, 50));
        assert_eq!(memo.get(1, 2, || unreachable!()), (5, 50));
        assert_eq!(memo.get(1, other, || (NO_RANK, NONE)), (NO_RANK, NONE));
        assert_eq!(
            memo.get(1, 2, || (5, 50)),
            (5, 50),
            "evicted, looked up again"
        );
    }

    #[test]
    fn sweeps_merge_the_lowest_rank_leftmost_and_leave_ranks_past_their_keys_to_the_heap() {
        // Four symbols "a a a a" (id 1), where "aa" (id 2) merges at `rank` and nothing else.
        let starts: [u32; SWEEP_SYMBOLS + 1] = std::array::from_fn(|k| k as u32);
        let sweep = |rank: Rank| {
            let mut ids = [NONE; SWEEP_SYMBOLS];
            ids[..4].fill(1);
            let pair = |l: u32, r: u32, _, _| {
                if (l, r) == (1, 1) {
                    (rank, 2)
                } else {
                    (NO_RANK, NONE)
                }
            };
            sweep_merge(&starts, &mut ids, 4, pair).map(|alive| (alive, ids[0], ids[2]))
        };
        // The leftmost pair first: "aa" "aa", symbols 0 and 2 alive.
        assert_eq!(sweep(7), Some((0b0101, 2, 2)));
        assert_eq!(sweep(MAX_SWEEP_RANK), Some((0b0101, 2, 2)));
        assert_eq!(sweep(MAX_SWEEP_RANK + 1), None);
    }

    #[test]
    fn char_ids_are_the_token_of_each_character() {
        let t = tables(1, &["▁", "é", "中", "😀", "ab"], &[]);
        let ids = CharIds::new(&t);
        for text in ["▁", "é", "中", "😀", "a", "ж", "ab"] {
            let bytes = text.as_bytes();
            let width = utf8_width(bytes[0]);
            if width == bytes.len() {
                assert_eq!(ids.get(&t, bytes, 0, width), id_of(&t, bytes), "{text:?}");
            }
        }
        assert_eq!(ids.get(&t, "ж".as_bytes(), 0, 2), NONE);
    }

    #[test]
    fn a_vocabulary_without_pair_merges_is_refused() {
        let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let tokens = bytes.iter().zip(0..).map(|(b, id)| (b.as_slice(), id));
        let t = Arc::new(MergeTables::from_tokens(tokens, &[], 256, None, false).unwrap());
        let p = pattern(r#""unused":[],"user_defined":[]"#);
        assert!(matches!(
            ScoreMerge::new(t.clone(), &p, &[], None),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(RankMerge::new(t, &p), Err(Error::Unsupported(_))));
    }
}
