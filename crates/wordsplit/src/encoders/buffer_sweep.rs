//! `buffer-sweep`: after every merge, sweep the buffer for the lowest-priority adjacent pair
//! (leftmost on ties) and merge it. O(n²) but with tiny constants, so it is the fastest
//! choice for the short pieces of ordinary text (it is tiktoken's `_byte_pair_merge`); pieces
//! over 128 bytes sweep blocks of ranks and their minima instead (`blocked`, O(n·√n)).

use crate::char_merges::CharMerges;
use crate::tables::{MergeTables, NO_RANK};

/// Pieces up to this length work in stack buffers (no allocation); nearly all pieces do.
const STACK_PIECE: usize = 128;

/// Zero bytes after a piece's copy: a lookup reads a key of up to 16 bytes with two 8-byte
/// loads and masks ([`MergeTables::rank_in`]).
const PAD: usize = 16;

pub fn encode(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if (65..=STACK_PIECE).contains(&piece.len()) && has!("avx512f") && has!("avx2") {
            // SAFETY: this CPU has AVX-512F and AVX2, checked just above.
            return unsafe { encode_avx512(t, piece, out) };
        }
        if has!("avx2") {
            // SAFETY: this CPU has AVX2, checked just above.
            return unsafe { encode_avx2(t, piece, out) };
        }
        if has!("sse4.1") {
            // SAFETY: this CPU has SSE4.1, checked just above.
            return unsafe { encode_sse41(t, piece, out) };
        }
    }
    encode_with_any_cpu(t, piece, out);
}

/// [`encode_with_any_cpu`] compiled for CPUs with SSE4.1 (nearly all x86-64 CPUs since 2008;
/// the x86-64 baseline has SSE2 only): the sweeps' compare-and-select sequences on
/// [`Lanes`] become single min and blend instructions (`pminsd`, `pblendvb`), 7 % fewer
/// instructions per byte of a one-pass encode of multilingual text, where merging takes half
/// the time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1")]
unsafe fn encode_sse41(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    encode_with_any_cpu(t, piece, out);
}

/// Buffer-sweep on CPUs with AVX2 (x86-64 CPUs since 2013-2015): pieces of 17 to 64 bytes
/// keep their ranks in AVX2 registers ([`Lanes`]), where SSE has registers enough for 32
/// ranks and pieces of 33 to 64 bytes swept them in memory; shorter ones as
/// [`encode_with_any_cpu`], whose instructions take three operands here. Merged alone, the
/// distinct non-token pieces of 7.7 MB of multilingual text, against [`encode_sse41`]: 9 to
/// 16 bytes 2-4 % faster, 17 to 32 bytes 12-13 %, 33 to 64 bytes 23-25 %.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn encode_avx2(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    use std::arch::x86_64::__m256i;
    let rank_bound = t.rank_bound();
    match piece.len() {
        17..=32 if packs::<32>(rank_bound) => {
            on_stack::<32, { 32 + PAD }, Lanes<__m256i, 4>>(t, piece, out)
        }
        33..=64 if packs::<64>(rank_bound) => {
            on_stack::<64, { 64 + PAD }, Lanes<__m256i, 8>>(t, piece, out)
        }
        _ => encode_with_any_cpu(t, piece, out),
    }
}

/// Pieces of 65 to 128 bytes on CPUs with AVX-512: their ranks in eight AVX-512 registers
/// ([`Lanes`]), 31-37 % faster than swept in memory (the long words of multilingual text,
/// a twentieth of a first pass's merging over it with o200k_base). Shorter pieces stay with
/// [`encode_avx2`]: in four AVX-512 registers, 33 to 64 bytes were no faster than in eight
/// AVX2 ones.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
unsafe fn encode_avx512(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    use std::arch::x86_64::__m512i;
    match piece.len() {
        65..=STACK_PIECE if packs::<STACK_PIECE>(t.rank_bound()) => {
            on_stack::<STACK_PIECE, { STACK_PIECE + PAD }, Lanes<__m512i, 8>>(t, piece, out)
        }
        _ => encode_avx2(t, piece, out),
    }
}

#[inline(always)]
fn encode_with_any_cpu(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    // Buffers sized to the piece's class: a short piece neither clears nor sweeps 128 slots.
    // The register sweeps keep each rank with its position in one word (see [`Lanes`]),
    // which leaves room for ranks below 2^31 / N: vocabularies with more (none real) sweep
    // in memory.
    let rank_bound = t.rank_bound();
    match piece.len() {
        0..=8 if packs::<8>(rank_bound) => on_stack::<8, { 8 + PAD }, Ranks8>(t, piece, out),
        9..=16 if packs::<16>(rank_bound) => on_stack::<16, { 16 + PAD }, Ranks16>(t, piece, out),
        0..=16 => on_stack::<16, { 16 + PAD }, [u32; 16]>(t, piece, out),
        17..=32 if packs::<32>(rank_bound) => on_stack::<32, { 32 + PAD }, Ranks32>(t, piece, out),
        17..=32 => on_stack::<32, { 32 + PAD }, [u32; 32]>(t, piece, out),
        33..=64 => on_stack::<64, { 64 + PAD }, [u32; 64]>(t, piece, out),
        65..=STACK_PIECE => {
            on_stack::<STACK_PIECE, { STACK_PIECE + PAD }, [u32; STACK_PIECE]>(t, piece, out)
        }
        _ if t.merges().is_none() => blocked::<RankBased>(t, piece, out),
        _ => blocked::<PairRanked>(t, piece, out),
    }
}

/// Whether every rank below `rank_bound` fits a [`Lanes`] word of `N` lanes beside its lane's
/// position, below `2^31` (so no word is `NO_RANK`).
#[inline(always)]
fn packs<const N: usize>(rank_bound: u64) -> bool {
    rank_bound <= 1 << (31 - N.trailing_zeros())
}

/// [`linked`] on stack buffers of `N >= piece.len()` symbols (`P = N + PAD` bytes), with
/// the pair priorities of the vocabulary's rule.
#[inline(always)]
fn on_stack<const N: usize, const P: usize, S: Ranks<N>>(
    t: &MergeTables,
    piece: &[u8],
    out: &mut Vec<u32>,
) {
    let mut bytes = [0u8; P];
    bytes[..piece.len()].copy_from_slice(piece);
    if t.merges().is_none() {
        linked::<N, RankBased, S>(t, &bytes, piece.len(), out);
    } else {
        linked::<N, PairRanked, S>(t, &bytes, piece.len(), out);
    }
}

/// How a vocabulary ranks a pair of adjacent symbols, decided once per piece.
trait Rule {
    /// Whether its ranks come from the token index (by the pair's bytes), whose lines
    /// [`ask_ahead`] can request before the rounds.
    const ASKS_INDEX: bool;
    /// The characters a piece may start with whole, under this rule.
    fn char_merges(t: &MergeTables) -> Option<&CharMerges>;
    /// The priority of merging `bytes[start..mid]` and `bytes[mid..end]` (ids `left` and
    /// `right`), or `NO_RANK`.
    fn rank(t: &MergeTables, bytes: &[u8], start: usize, end: usize, left: u32, right: u32) -> u32;
    /// [`Self::rank`] of the pairs either side of a merge, `bytes[l.0..l.1]` (split where the
    /// ids `l.2` and `l.3` meet) and `bytes[r.0..r.1]` (ids `r.2`, `r.3`): both lookups are
    /// asked for together, so the second does not wait behind the first.
    fn ranks_around(t: &MergeTables, bytes: &[u8], l: Pair, r: Pair) -> (u32, u32);
    /// The id the merge of `bytes[start..end]` at priority `rank` makes.
    fn merged(t: &MergeTables, bytes: &[u8], start: usize, end: usize, rank: u32) -> u32;
}

/// A pair of adjacent symbols: the start and end of its bytes, and the two symbols' ids.
type Pair = (usize, usize, u32, u32);

/// Rank-based (tiktoken): a pair's priority is the id of its bytes' token, and that id is
/// what the merge makes.
struct RankBased;

impl Rule for RankBased {
    const ASKS_INDEX: bool = true;
    #[inline(always)]
    fn char_merges(t: &MergeTables) -> Option<&CharMerges> {
        t.char_merges()
    }
    #[inline(always)]
    fn rank(t: &MergeTables, bytes: &[u8], start: usize, end: usize, left: u32, right: u32) -> u32 {
        let grid = t.pair_grid();
        match grid.get(left, right) {
            Some(rank) => rank,
            None => grid.keep(left, right, t.rank_padded(bytes, start, end)),
        }
    }
    /// Each pair from the grid of pairs of frequent tokens ([`crate::tables::PairGrid`]) if
    /// it holds it, else from the index (and then kept in the grid).
    #[inline(always)]
    fn ranks_around(t: &MergeTables, bytes: &[u8], l: Pair, r: Pair) -> (u32, u32) {
        let grid = t.pair_grid();
        match (grid.get(l.2, l.3), grid.get(r.2, r.3)) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => (a, grid.keep(r.2, r.3, t.rank_padded(bytes, r.0, r.1))),
            (None, Some(b)) => (grid.keep(l.2, l.3, t.rank_padded(bytes, l.0, l.1)), b),
            (None, None) => {
                let (a, b) = t.pair_ranks_padded(bytes, (l.0, l.1), (r.0, r.1));
                (grid.keep(l.2, l.3, a), grid.keep(r.2, r.3, b))
            }
        }
    }
    #[inline(always)]
    fn merged(_: &MergeTables, _: &[u8], _: usize, _: usize, rank: u32) -> u32 {
        rank
    }
}

/// Pair-ranked (an HF merge list not in merged-id order).
struct PairRanked;

impl Rule for PairRanked {
    const ASKS_INDEX: bool = false;
    #[inline(always)]
    fn char_merges(_: &MergeTables) -> Option<&CharMerges> {
        None
    }
    #[inline(always)]
    fn rank(t: &MergeTables, bytes: &[u8], start: usize, end: usize, left: u32, right: u32) -> u32 {
        t.pair_rank(bytes, start, end, left, right)
    }
    #[inline(always)]
    fn ranks_around(t: &MergeTables, bytes: &[u8], l: Pair, r: Pair) -> (u32, u32) {
        (
            t.pair_rank(bytes, l.0, l.1, l.2, l.3),
            t.pair_rank(bytes, r.0, r.1, r.2, r.3),
        )
    }
    #[inline(always)]
    fn merged(t: &MergeTables, bytes: &[u8], start: usize, end: usize, rank: u32) -> u32 {
        t.merged_id(bytes, start, end, rank)
    }
}

/// The sweep for short pieces, with the symbols in a linked list over byte positions: the
/// symbol starting at byte `i` covers `bytes[i..next[i]]`, has id `ids[i]`, and `ranks[i]`
/// is the priority of merging it with the symbol after it, under the rule `R`. A merge
/// unlinks the right
/// symbol and gives its position `NO_RANK`, so nothing is ever moved, and every sweep reads
/// all `N` positions (those past the piece hold `NO_RANK`) with vector instructions; the
/// ranks live in `S` (registers for short pieces, see [`Lanes`]). `bytes` is the piece
/// followed by at least `PAD` zero bytes.
#[inline(always)]
fn linked<const N: usize, R: Rule, S: Ranks<N>>(
    t: &MergeTables,
    bytes: &[u8],
    n: usize,
    out: &mut Vec<u32>,
) {
    // The links are the same for every piece (and unread past it): constants the compiler
    // stores a vector at a time. The byte loop looks up one pair per byte, the last (the
    // piece's last byte and the padding) then cleared, with no test in the loop.
    let mut next: [u32; N] = std::array::from_fn(|i| i as u32 + 1);
    let mut prev: [u32; N] = std::array::from_fn(|i| (i as u32).wrapping_sub(1));
    let (mut ids, mut first) = ([0u32; N], [NO_RANK; N]);
    // A pair inside a piece of at most N bytes is at most N bytes long. Said so with a `min`
    // (which changes nothing), it lets the compiler drop the lookup's branches on the key's
    // length class: for pieces of up to 8 bytes the key is one word, for up to 16 two.
    let within = |start: usize, end: usize| start + (end - start).min(N);
    let ascii = bytes[..n].is_ascii();
    // Asked only for a piece that is not ASCII: the tables are built on first use.
    match if ascii { None } else { R::char_merges(t) } {
        Some(chars) => {
            // Characters taken whole where that changes nothing (see `crate::char_merges`).
            let mut last: Option<usize> = None;
            let mut i = 0;
            while i < n {
                let len = match chars.at(bytes, i, n) {
                    Some((id, len)) => {
                        ids[i] = id;
                        len
                    }
                    None => {
                        ids[i] = t.byte_id(bytes[i]);
                        1
                    }
                };
                next[i] = (i + len) as u32;
                if let Some(last) = last {
                    prev[i] = last as u32;
                    first[last] = if i - last == 1 && len == 1 {
                        t.byte_pair_rank(bytes[last], bytes[i])
                    } else {
                        R::rank(t, bytes, last, within(last, i + len), ids[last], ids[i])
                    };
                }
                last = Some(i);
                i += len;
            }
        }
        None => {
            for i in 0..n {
                ids[i] = t.byte_id(bytes[i]);
                first[i] = t.byte_pair_rank(bytes[i], bytes[i + 1]);
            }
            if n > 0 {
                first[n - 1] = NO_RANK;
            }
        }
    }
    if R::ASKS_INDEX && N <= 16 && ascii {
        ask_ahead(t, bytes, n);
    }
    let mut ranks = S::from_array(&first);
    loop {
        let (best, best_rank) = ranks.lowest();
        if best_rank == NO_RANK {
            break;
        }
        let right = next[best] as usize;
        let end = next[right] as usize;
        ids[best] = R::merged(t, bytes, best, end, best_rank);
        next[best] = end as u32;
        ranks.set(right, NO_RANK);
        // The pairs either side of the merged symbol; when both exist (most rounds), both
        // lookups are asked for together.
        let p = prev[best] as usize;
        if end < n {
            prev[end] = best as u32;
            let after = (best, within(best, next[end] as usize), ids[best], ids[end]);
            if best > 0 {
                let before = (p, within(p, end), ids[p], ids[best]);
                let (left_rank, right_rank) = R::ranks_around(t, bytes, before, after);
                ranks.set(p, left_rank);
                ranks.set(best, right_rank);
            } else {
                ranks.set(best, R::rank(t, bytes, after.0, after.1, after.2, after.3));
            }
        } else {
            ranks.set(best, NO_RANK);
            if best > 0 {
                ranks.set(p, R::rank(t, bytes, p, within(p, end), ids[p], ids[best]));
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}

/// The longest pairs whose index lines [`ask_ahead`] requests.
const ASK_AHEAD_LEN: usize = 8;

/// Requests the token index's lines (filter word and home slot) of every run of 3 to
/// [`ASK_AHEAD_LEN`] bytes of the piece `bytes[..n]` before its rounds: any pair of up to 8
/// bytes a later round asks about is one of them, and a round can only ask once the round
/// before has merged, so in a first pass, where the index's lines are not in the CPU's
/// caches, the rounds waited on them one after another. Asked together they arrive
/// together. For
/// pieces of up to 16 ASCII bytes (most of prose's and code's new pieces): o200k_base first
/// passes in turns (`examples/passes.rs`) over prose 1.10x and code 1.14x as fast, where
/// over multilingual text, whose pieces merge more and are mostly not ASCII, asking for
/// every piece made passes 2-5 % slower. Runs longer than 8 bytes add requests for pairs
/// the rounds seldom reach.
#[inline(always)]
fn ask_ahead(t: &MergeTables, bytes: &[u8], n: usize) {
    for len in 3..=ASK_AHEAD_LEN.min(n) {
        for start in 0..=n - len {
            t.prefetch_rank(bytes, start, start + len);
        }
    }
}

/// The merge priorities of a sweep's `N` positions.
trait Ranks<const N: usize> {
    fn from_array(ranks: &[u32; N]) -> Self;
    fn set(&mut self, at: usize, rank: u32);
    /// The first position of the lowest rank, and that rank (`NO_RANK` when nothing merges).
    fn lowest(&self) -> (usize, u32);
}

/// Ranks in memory, swept by [`lowest`].
impl<const N: usize> Ranks<N> for [u32; N] {
    #[inline(always)]
    fn from_array(ranks: &[u32; N]) -> Self {
        *ranks
    }
    #[inline(always)]
    fn set(&mut self, at: usize, rank: u32) {
        self[at] = rank;
    }
    #[inline(always)]
    fn lowest(&self) -> (usize, u32) {
        lowest(self)
    }
}

/// The ranks of sweeps of pieces of up to 8, 16 and 32 bytes: in SSE registers on x86-64
/// ([`Lanes`]), else in memory. Pieces of 17 to 32 bytes (the long words of multilingual
/// text: a fifth of the merge rounds of a first pass over it with o200k_base) merged 8-12 %
/// faster in eight registers than swept in memory. Longer ones would need more registers
/// than SSE has (in sixteen, pieces of 33 to 64 bytes merged at half the speed): they take
/// the wider registers of AVX2 and AVX-512 ([`encode_avx2`], [`encode_avx512`]) where the
/// CPU has them.
#[cfg(target_arch = "x86_64")]
type Ranks8 = Lanes<std::arch::x86_64::__m128i, 2>;
#[cfg(target_arch = "x86_64")]
type Ranks16 = Lanes<std::arch::x86_64::__m128i, 4>;
#[cfg(target_arch = "x86_64")]
type Ranks32 = Lanes<std::arch::x86_64::__m128i, 8>;
#[cfg(not(target_arch = "x86_64"))]
type Ranks8 = [u32; 8];
#[cfg(not(target_arch = "x86_64"))]
type Ranks16 = [u32; 16];
#[cfg(not(target_arch = "x86_64"))]
type Ranks32 = [u32; 32];

/// `R::WORDS * G` ranks in `G` SIMD registers `R` (SSE, AVX2 or AVX-512), each lane holding
/// its rank above `log2(N)` bits of its own position (and `NO_RANK` as it is), with the top
/// bit flipped so that signed compares order them as unsigned: the lowest word is then the
/// lowest rank and, among equal ranks, the leftmost, and it names its lane itself, so a
/// sweep is a minimum with no search for where it was (a quarter of a round's latency, which
/// chains round after round). Written one lane at a time by masking, never through memory:
/// after a merge stored two or three ranks, the next sweep's 16-byte loads of the array
/// could not take them from the pending 4-byte stores (no store-to-load forwarding from
/// narrower stores) and waited for the stores to reach the cache, every round. Ranks must be
/// below `2^31 / N` ([`packs`], [`MergeTables::rank_bound`]), so that a word is never
/// `NO_RANK` (2^27 - 1 at lane 15 of 16 is `0x7FFF_FFFF`).
///
/// Lanes of SSE registers run on every x86-64 CPU; those of AVX2 and AVX-512 registers only
/// inside [`encode_avx2`] and [`encode_avx512`], compiled for those instruction sets, into
/// which their methods are inlined.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Lanes<R: Register, const G: usize>([R; G]);

/// `rank` at lane `at` of `N` as a [`Lanes`] word (before the top bit is flipped).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tagged<const N: usize>(rank: u32, at: usize) -> u32 {
    if rank == NO_RANK {
        NO_RANK
    } else {
        rank << N.trailing_zeros() | at as u32
    }
}

#[cfg(target_arch = "x86_64")]
impl<const N: usize, R: Register, const G: usize> Ranks<N> for Lanes<R, G> {
    #[inline(always)]
    fn from_array(ranks: &[u32; N]) -> Self {
        const { assert!(N == R::WORDS * G && N.is_power_of_two()) };
        let words: [u32; N] = std::array::from_fn(|i| tagged::<N>(ranks[i], i) ^ 0x8000_0000);
        // SAFETY: the CPU has `R`'s instruction set (see `Lanes`); load k reads the words
        // from `R::WORDS * k`, in `words`.
        Self(std::array::from_fn(|k| unsafe {
            R::load(words.as_ptr().add(R::WORDS * k))
        }))
    }

    #[inline(always)]
    fn set(&mut self, at: usize, rank: u32) {
        // SAFETY: as in `from_array`.
        unsafe {
            let at_lane = R::splat(at as u32);
            let value = R::splat(tagged::<N>(rank, at) ^ 0x8000_0000);
            for (k, group) in self.0.iter_mut().enumerate() {
                let lanes = R::counting_from((R::WORDS * k) as u32);
                *group = group.put_where_equal(lanes, at_lane, value);
            }
        }
    }

    #[inline(always)]
    fn lowest(&self) -> (usize, u32) {
        // Halving, so the minimum takes log2(G) steps rather than G - 1 in a chain.
        let mut groups = self.0;
        let mut width = G;
        while width > 1 {
            width /= 2;
            for k in 0..width {
                // SAFETY: as in `from_array`.
                groups[k] = unsafe { groups[k].min(groups[k + width]) };
            }
        }
        // SAFETY: as in `from_array`.
        let word = unsafe { groups[0].least() } ^ 0x8000_0000;
        if word == NO_RANK {
            (0, NO_RANK)
        } else {
            ((word as usize) & (N - 1), word >> N.trailing_zeros())
        }
    }
}

/// A SIMD register of 32-bit words, and what [`Lanes`] does with it: each method one or a
/// few instructions of the register's instruction set.
///
/// # Safety
/// Each method may be called only on a CPU with the register's instruction set.
#[cfg(target_arch = "x86_64")]
trait Register: Copy {
    /// Words per register.
    const WORDS: usize;
    /// The `WORDS` words at `from`.
    unsafe fn load(from: *const u32) -> Self;
    /// `word` in every lane.
    unsafe fn splat(word: u32) -> Self;
    /// `first`, `first + 1`, ... lane by lane.
    unsafe fn counting_from(first: u32) -> Self;
    /// `self`, with `value`'s word in the lanes where `lanes` and `at` are equal.
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self;
    /// The lane-wise minimum of signed words.
    unsafe fn min(self, other: Self) -> Self;
    /// The least of its words, as signed words.
    unsafe fn least(self) -> u32;
}

/// SSE2, part of the x86-64 baseline: the minimum and the masked write are three
/// instructions each here, one (`pminsd`, `pblendvb`) where the caller is compiled for
/// SSE4.1 or later.
#[cfg(target_arch = "x86_64")]
impl Register for std::arch::x86_64::__m128i {
    const WORDS: usize = 4;
    #[inline(always)]
    unsafe fn load(from: *const u32) -> Self {
        // SAFETY: the caller's: four words at `from`.
        unsafe { std::arch::x86_64::_mm_loadu_si128(from.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(word: u32) -> Self {
        // SAFETY: SSE2.
        unsafe { std::arch::x86_64::_mm_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn counting_from(first: u32) -> Self {
        let k = first as i32;
        // SAFETY: SSE2.
        unsafe { std::arch::x86_64::_mm_setr_epi32(k, k + 1, k + 2, k + 3) }
    }
    #[inline(always)]
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: SSE2.
        unsafe {
            let here = _mm_cmpeq_epi32(lanes, at);
            _mm_or_si128(_mm_and_si128(here, value), _mm_andnot_si128(here, self))
        }
    }
    #[inline(always)]
    unsafe fn min(self, other: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: SSE2.
        unsafe {
            let above = _mm_cmpgt_epi32(self, other);
            _mm_or_si128(_mm_and_si128(above, other), _mm_andnot_si128(above, self))
        }
    }
    #[inline(always)]
    unsafe fn least(self) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: SSE2.
        unsafe {
            let low = self.min(_mm_shuffle_epi32::<0b01_00_11_10>(self));
            let low = low.min(_mm_shuffle_epi32::<0b10_11_00_01>(low));
            _mm_cvtsi128_si32(low) as u32
        }
    }
}

/// AVX2 ([`encode_avx2`]).
#[cfg(target_arch = "x86_64")]
impl Register for std::arch::x86_64::__m256i {
    const WORDS: usize = 8;
    #[inline(always)]
    unsafe fn load(from: *const u32) -> Self {
        // SAFETY: the caller's: AVX2, eight words at `from`.
        unsafe { std::arch::x86_64::_mm256_loadu_si256(from.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(word: u32) -> Self {
        // SAFETY: the caller's: AVX2.
        unsafe { std::arch::x86_64::_mm256_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn counting_from(first: u32) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX2.
        unsafe {
            _mm256_add_epi32(
                _mm256_set1_epi32(first as i32),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            )
        }
    }
    #[inline(always)]
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX2.
        unsafe { _mm256_blendv_epi8(self, value, _mm256_cmpeq_epi32(lanes, at)) }
    }
    #[inline(always)]
    unsafe fn min(self, other: Self) -> Self {
        // SAFETY: the caller's: AVX2.
        unsafe { std::arch::x86_64::_mm256_min_epi32(self, other) }
    }
    #[inline(always)]
    unsafe fn least(self) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX2, which has SSE2.
        unsafe {
            let low = _mm256_castsi256_si128(self);
            low.min(_mm256_extracti128_si256::<1>(self)).least()
        }
    }
}

/// AVX-512F ([`encode_avx512`]).
#[cfg(target_arch = "x86_64")]
impl Register for std::arch::x86_64::__m512i {
    const WORDS: usize = 16;
    #[inline(always)]
    unsafe fn load(from: *const u32) -> Self {
        // SAFETY: the caller's: AVX-512F, sixteen words at `from`.
        unsafe { std::arch::x86_64::_mm512_loadu_si512(from.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(word: u32) -> Self {
        // SAFETY: the caller's: AVX-512F.
        unsafe { std::arch::x86_64::_mm512_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn counting_from(first: u32) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX-512F.
        unsafe {
            _mm512_add_epi32(
                _mm512_set1_epi32(first as i32),
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            )
        }
    }
    #[inline(always)]
    unsafe fn put_where_equal(self, lanes: Self, at: Self, value: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX-512F.
        unsafe { _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(lanes, at), self, value) }
    }
    #[inline(always)]
    unsafe fn min(self, other: Self) -> Self {
        // SAFETY: the caller's: AVX-512F.
        unsafe { std::arch::x86_64::_mm512_min_epi32(self, other) }
    }
    #[inline(always)]
    unsafe fn least(self) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's: AVX-512F, which has AVX2.
        unsafe {
            let low = _mm512_castsi512_si256(self);
            low.min(_mm512_extracti64x4_epi64::<1>(self)).least()
        }
    }
}

/// The first of the `4 * groups` lanes of `group(0..groups)` (at most 16 groups, a constant
/// once inlined) that equals `low` (whose lanes are all the same), one of which does.
/// Without a branch per group: the compares (each lane all ones or zero) are narrowed by
/// saturating packs to one byte per lane, which keeps them all ones or zero, and 16 lanes
/// at a time become one bit mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn first_equal(
    groups: usize,
    group: impl Fn(usize) -> std::arch::x86_64::__m128i,
    low: std::arch::x86_64::__m128i,
) -> usize {
    use std::arch::x86_64::*;
    debug_assert!(groups <= 16);
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        let equal = |k: usize| {
            if k < groups {
                _mm_cmpeq_epi32(group(k), low)
            } else {
                _mm_setzero_si128()
            }
        };
        let mut hits = 0u64;
        for c in 0..groups.div_ceil(4) {
            let k = 4 * c;
            let halves = (
                _mm_packs_epi32(equal(k), equal(k + 1)),
                _mm_packs_epi32(equal(k + 2), equal(k + 3)),
            );
            let bytes = _mm_packs_epi16(halves.0, halves.1);
            hits |= u64::from(_mm_movemask_epi8(bytes) as u32) << (16 * c);
        }
        hits.trailing_zeros() as usize
    }
}

/// The first position of the lowest rank, and that rank (`NO_RANK` when nothing merges).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn lowest<const N: usize>(ranks: &[u32; N]) -> (usize, u32) {
    let min = ranks.iter().fold(NO_RANK, |m, &r| m.min(r));
    (ranks.iter().position(|&r| r == min).unwrap_or(0), min)
}

/// The first position of the lowest rank, and that rank (`NO_RANK` when nothing merges),
/// four ranks at a time with SSE2 (part of every x86-64 CPU): the minimum of all `N`
/// without a branch, then the first group of four that holds it. (Left to itself, the
/// compiler unrolls the scalar loop into a chain of compares and branches, which
/// mispredict on the data.) SSE2 compares signed integers only, so ranks are compared
/// with their top bit flipped, which orders them as unsigned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lowest<const N: usize>(ranks: &[u32; N]) -> (usize, u32) {
    use std::arch::x86_64::*;
    const { assert!(N.is_multiple_of(4) && N > 0) };
    // SAFETY: SSE2 is part of the x86-64 baseline; every load reads four u32 inside
    // `ranks` (k < N / 4).
    unsafe {
        let flip = _mm_set1_epi32(i32::MIN);
        let group = |k: usize| {
            let at = ranks.as_ptr().add(4 * k).cast::<__m128i>();
            _mm_xor_si128(_mm_loadu_si128(at), flip)
        };
        let min = |a: __m128i, b: __m128i| {
            let a_above = _mm_cmpgt_epi32(a, b);
            _mm_or_si128(_mm_and_si128(a_above, b), _mm_andnot_si128(a_above, a))
        };
        let mut low = group(0);
        for k in 1..N / 4 {
            low = min(low, group(k));
        }
        // Fold the four lanes: afterwards every lane holds the minimum.
        low = min(low, _mm_shuffle_epi32::<0b01_00_11_10>(low));
        low = min(low, _mm_shuffle_epi32::<0b10_11_00_01>(low));
        let rank = (_mm_cvtsi128_si32(low) as u32) ^ 0x8000_0000;
        if N <= 64 {
            // The position without a branch per group (which group holds it is data).
            return (first_equal(N / 4, group, low), rank);
        }
        for k in 0..N / 4 {
            let hits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(group(k), low)));
            if hits != 0 {
                return (4 * k + hits.trailing_zeros() as usize, rank);
            }
        }
        (0, NO_RANK)
    }
}

/// The sweep for long pieces (heap buffers), over blocks: symbol `i` covers
/// `piece[i..next[i]]` and keeps its place when it merges (its right neighbour's slot goes
/// dead), `ranks[i]` is the priority of merging it with the next symbol, and each block of
/// `block` slots keeps the lowest rank in it. A round reads the blocks' minima, then one
/// block; after the merge the two new pairs are looked up together ([`Rule::ranks_around`])
/// and the merged symbol's block's minimum is computed again (another block's only where
/// its old minimum changed): about `n / block + 2 * block` ranks a round, `3 * sqrt(n)`,
/// where a sweep of every rank (shifting the tails left after each merge) read `n`. The
/// lowest rank found is still the first lowest of the piece, as a full sweep finds it.
/// New pieces of random letters, merged alone (cl100k_base, a Zen 3): 1,000 bytes 55-63 ns
/// a byte, 10,000 bytes 70, where the full sweep took 210 and 1,620.
fn blocked<R: Rule>(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    // The lookups read keys of up to 16 bytes with two 8-byte loads ([`PAD`]).
    let mut bytes = Vec::with_capacity(n + PAD);
    bytes.extend_from_slice(piece);
    bytes.resize(n + PAD, 0);
    // Blocks of about sqrt(n) slots (a power of two, at least 16): the two reads of a round
    // balance.
    let block = 1usize << (n.isqrt().max(16).ilog2());
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    let mut ids: Vec<u32> = piece.iter().map(|&b| t.byte_id(b)).collect();
    let mut ranks: Vec<u32> = piece
        .windows(2)
        .map(|pair| t.byte_pair_rank(pair[0], pair[1]))
        .chain([NO_RANK])
        .collect();
    let block_min = |ranks: &[u32], b: usize| {
        ranks[b * block..((b + 1) * block).min(n)]
            .iter()
            .fold(NO_RANK, |m, &r| m.min(r))
    };
    let mut mins: Vec<u32> = (0..n.div_ceil(block))
        .map(|b| block_min(&ranks, b))
        .collect();
    // The minimum of block `b` after slot `slot` of it changed from `old` (the new rank is
    // in `ranks`): computed again only when `old` may have been its only minimum.
    let update = |mins: &mut [u32], ranks: &[u32], slot: usize, old: u32| {
        let b = slot / block;
        if ranks[slot] < mins[b] {
            mins[b] = ranks[slot];
        } else if old == mins[b] && ranks[slot] != old {
            mins[b] = block_min(ranks, b);
        }
    };
    loop {
        let lowest = mins.iter().fold(NO_RANK, |m, &r| m.min(r));
        if lowest == NO_RANK {
            break;
        }
        // The first block holding it, and its first slot there: the leftmost lowest pair.
        let b = mins.iter().position(|&m| m == lowest).unwrap_or(0);
        let i = b * block
            + ranks[b * block..]
                .iter()
                .position(|&r| r == lowest)
                .unwrap_or(0);
        let j = next[i] as usize;
        let k = next[j] as usize;
        let merged = R::merged(t, &bytes, i, k, lowest);
        ids[i] = merged;
        next[i] = k as u32;
        let left_of = (prev[i] != u32::MAX).then_some(prev[i] as usize);
        // The pairs either side of the merged symbol, asked for together.
        let (left, right) = match (left_of, k < n) {
            (Some(p), true) => {
                let right_end = next[k] as usize;
                R::ranks_around(
                    t,
                    &bytes,
                    (p, k, ids[p], merged),
                    (i, right_end, merged, ids[k]),
                )
            }
            (Some(p), false) => (R::rank(t, &bytes, p, k, ids[p], merged), NO_RANK),
            (None, true) => (
                NO_RANK,
                R::rank(t, &bytes, i, next[k] as usize, merged, ids[k]),
            ),
            (None, false) => (NO_RANK, NO_RANK),
        };
        if k < n {
            prev[k] = i as u32;
        }
        let old_j = std::mem::replace(&mut ranks[j], NO_RANK);
        ranks[i] = right;
        // The left neighbour and its rank before.
        let left_changed = left_of.map(|p| (p, std::mem::replace(&mut ranks[p], left)));
        // Slot `i` held its block's minimum: that block is computed again; the others only
        // when what changed there was theirs.
        mins[b] = block_min(&ranks, b);
        if j / block != b {
            update(&mut mins, &ranks, j, old_j);
        }
        if let Some((p, old_p)) = left_changed {
            if p / block != b {
                update(&mut mins, &ranks, p, old_p);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoders::heap_merge;
    use crate::tables::tests::{tiny, tiny_ranked};
    use crate::testing::xorshift;

    #[test]
    fn lowest_is_the_first_minimum() {
        let mut ranks = [NO_RANK; 16];
        assert_eq!(lowest(&ranks).1, NO_RANK);
        for (at, value) in [(15, 7), (3, 0x8000_0001), (9, 0x7FFF_FFFF), (12, 5), (2, 5)] {
            ranks[at] = value;
            let want = (0..16).fold((0, NO_RANK), |(i, m), j| {
                if ranks[j] < m {
                    (j, ranks[j])
                } else {
                    (i, m)
                }
            });
            assert_eq!(lowest(&ranks), want, "{ranks:?}");
        }
        assert_eq!(lowest(&ranks), (2, 5));
        assert_eq!(lowest(&[0u32; 8]), (0, 0));
    }

    #[test]
    fn lanes_equal_the_array() {
        // Random writes (runs of equal ranks, NO_RANK, values up to the largest rank the
        // lanes hold, 2^31 / N - 1), each followed by the lowest of both stores.
        fn check<const N: usize, S: Ranks<N>>() {
            let top = (1u32 << (31 - N.trailing_zeros())) - 1;
            assert!(packs::<N>(u64::from(top) + 1) && !packs::<N>(u64::from(top) + 2));
            let mut state = 11u32;
            let mut step = || {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                state >> 8
            };
            let mut array = [NO_RANK; N];
            array[1] = 3;
            let mut lanes = S::from_array(&array);
            assert_eq!(lanes.lowest(), (1, 3));
            for _ in 0..2000 {
                let at = step() as usize % N;
                let rank =
                    [NO_RANK, step() % 8, top - step() % 4, step() % top][step() as usize % 4];
                array[at] = rank;
                lanes.set(at, rank);
                assert_eq!(lanes.lowest(), lowest(&array), "{array:?}");
            }
            // The largest rank the lanes hold, alone in the last lane, is a rank, not NO_RANK.
            let mut array = [NO_RANK; N];
            array[N - 1] = top;
            assert_eq!(S::from_array(&array).lowest(), (N - 1, top));
        }
        check::<8, Ranks8>();
        check::<16, Ranks16>();
        check::<32, Ranks32>();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") {
                check::<32, Lanes<std::arch::x86_64::__m256i, 4>>();
                check::<64, Lanes<std::arch::x86_64::__m256i, 8>>();
            }
            if has!("avx512f") {
                check::<128, Lanes<std::arch::x86_64::__m512i, 8>>();
            }
        }
    }

    #[test]
    fn neighbours_looked_up_together_equal_one_at_a_time() {
        // The prefixes of a sentence as tokens (2 to 20 bytes: both key tables and the long
        // tokens), and every pair of its spans of up to 20 bytes, tokens or not.
        let sentence = b"the quick brown fox jumps over the lazy dog";
        let t = tiny(&(2..=20).map(|len| &sentence[..len]).collect::<Vec<_>>());
        let bytes = [sentence.as_slice(), &[0; PAD]].concat();
        let spans: Vec<(usize, usize)> = (0..sentence.len())
            .flat_map(|s| (s + 1..=sentence.len().min(s + 20)).map(move |e| (s, e)))
            .collect();
        let mut tokens = 0;
        for (i, &a) in spans.iter().enumerate() {
            let b = spans[(i * 7 + 3) % spans.len()];
            let one = |(s, e): (usize, usize)| t.rank_padded(&bytes, s, e);
            assert_eq!(
                t.pair_ranks_padded(&bytes, a, b),
                (one(a), one(b)),
                "{a:?} {b:?}"
            );
            tokens += usize::from(one(a) != NO_RANK);
        }
        // Every byte, every prefix, and "th", "the" and "the " again before "lazy".
        assert_eq!(tokens, sentence.len() + 19 + 3);
    }

    /// One build of buffer-sweep's encode.
    type Build = fn(&MergeTables, &[u8], &mut Vec<u32>);

    /// `encode` (the build for this CPU), then each build this CPU can run.
    fn builds() -> Vec<(&'static str, Build)> {
        let mut builds: Vec<(&str, Build)> =
            vec![("encode", encode), ("any CPU", encode_with_any_cpu)];
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            // SAFETY (each call below): only where the CPU has the build's features.
            if has!("sse4.1") {
                builds.push(("SSE4.1", |t, p, o| unsafe { encode_sse41(t, p, o) }));
            }
            if has!("avx2") {
                builds.push(("AVX2", |t, p, o| unsafe { encode_avx2(t, p, o) }));
            }
            if has!("avx512f") && has!("avx2") {
                builds.push(("AVX-512", |t, p, o| unsafe { encode_avx512(t, p, o) }));
            }
        }
        builds
    }

    #[test]
    fn every_buffer_size_equals_heap_merge() {
        // Pieces of 1 to 200 bytes: each stack buffer size, its edges, and the heap path;
        // tokens of several lengths, so merges happen at every position of the buffers.
        let t = tiny(&[
            b"ab", b"abab", b"ba", b"bab", b"abc", b"cab", b"cc", b"ccc", b"cccc",
        ]);
        let mut state = 7u32;
        for len in 1..=200 {
            let piece: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    b"abcx"[(state >> 16) as usize % 4]
                })
                .collect();
            let mut want = vec![];
            heap_merge::encode(&t, &piece, &mut want);
            for (build, encode) in builds() {
                let mut got = vec![];
                encode(&t, &piece, &mut got);
                assert_eq!(got, want, "{build}: {:?}", String::from_utf8_lossy(&piece));
            }
        }
    }

    #[test]
    fn characters_taken_whole_merge_as_heap_merge_does() {
        // Cyrillic and CJK characters that are tokens, among tokens across their edges
        // ranked below, between and above them (0xBE 0xD0 first: "а" after "о" stays bytes;
        // "xб" below "wx", below "б"; "文" below its bytes' merge 0x96 0x87, and 0x87 "x"
        // between them), and tokens holding them. Heap-merge starts from bytes.
        let t = tiny(&[
            b"\xBE\xD0",
            "а".as_bytes(),
            "xб".as_bytes(),
            b"\xE4\xB8",
            b"wx",
            "о".as_bytes(),
            b"x\xD0",
            "中".as_bytes(),
            "文".as_bytes(),
            b"\x87x",
            b"\x96\x87",
            "б".as_bytes(),
            b"\xAD\xE6",
            "аб".as_bytes(),
            "оа".as_bytes(),
            "中文".as_bytes(),
            "xа".as_bytes(),
            b"\xB1x",
        ]);
        let alphabet: [&[u8]; 10] = [
            "а".as_bytes(),
            "о".as_bytes(),
            "б".as_bytes(),
            "中".as_bytes(),
            "文".as_bytes(),
            b"w",
            b"x",
            b" ",
            b"\xD0",
            b"\xB8",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d;
        for _ in 0..3000 {
            let len = 1 + xorshift(&mut state) as usize % 60;
            let piece: Vec<u8> = (0..len)
                .flat_map(|_| alphabet[xorshift(&mut state) as usize % alphabet.len()])
                .copied()
                .collect();
            let mut want = vec![];
            heap_merge::encode(&t, &piece, &mut want);
            for (build, encode) in builds() {
                let mut got = vec![];
                encode(&t, &piece, &mut got);
                assert_eq!(got, want, "{build}: {:?}", String::from_utf8_lossy(&piece));
            }
        }
        // The pieces above took characters whole, and kept them as bytes.
        let chars = t.char_merges().expect("a rank-based vocabulary");
        assert_eq!(chars.at("ба\0\0".as_bytes(), 2, 4), Some((257, 2)));
        assert_eq!(chars.at("оа\0\0".as_bytes(), 2, 4), None);
    }

    #[test]
    fn long_pieces_swept_in_blocks_merge_as_heap_merge_does() {
        // Pieces over 128 bytes (`blocked`): either side of block sizes' edges (blocks of 16
        // from 256 bytes, 32 from 1,024, 64 from 4,096), of random `a`/`b`/`c` (many merges
        // and ties of rank, leftmost first), alternations and runs; under the rank-based
        // rule and a pair-ranked one whose list merges `ba` before `ab`.
        let extra: [&[u8]; 7] = [b"ab", b"ba", b"abab", b"aa", b"aaaa", b"ca", b"bab"];
        let rank_based = tiny(&extra);
        let merges = vec![
            (98, 97, 0),
            (97, 98, 1),
            (256, 256, 2),
            (97, 97, 3),
            (259, 259, 4),
            (99, 97, 5),
            (98, 256, 6),
        ];
        let pair_ranked = tiny_ranked(&extra, Some(merges));
        let mut state = 7u32;
        let mut random = |len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    b"abcab"[(state >> 16) as usize % 5]
                })
                .collect()
        };
        for len in [
            129, 130, 255, 256, 257, 600, 1023, 1024, 1025, 4095, 4096, 4097,
        ] {
            let pieces = [
                random(len),
                random(len),
                b"ab".repeat(len).split_off(len),
                b"a".repeat(len),
                [&b"c"[..], &b"a".repeat(len - 1)].concat(),
            ];
            for t in [&rank_based, &pair_ranked] {
                for piece in &pieces {
                    let (mut got, mut want) = (vec![], vec![]);
                    encode(t, piece, &mut got);
                    heap_merge::encode(t, piece, &mut want);
                    assert_eq!(
                        got,
                        want,
                        "{len} bytes: {:?}",
                        String::from_utf8_lossy(piece)
                    );
                }
            }
        }
    }

    #[test]
    fn ranks_too_large_for_the_lanes_sweep_in_memory() {
        // A pair-ranked vocabulary whose ranks are more than any lanes hold: the short
        // pieces sweep in arrays instead, and merge in the same order as heap-merge.
        let merges = vec![
            (98, 97, 1 << 29),
            (97, 98, (1 << 29) + 1),
            (256, 256, u32::MAX - 1),
        ];
        let t = tiny_ranked(&[b"ab", b"ba", b"abab"], Some(merges));
        assert!(t.rank_bound() > 1 << 27);
        let long = [b"ab".repeat(12), b"ba".repeat(15), b"aab".repeat(10)];
        let pieces = [
            &b"abab"[..],
            b"ababab",
            b"babab",
            b"aabbab",
            b"abababababababab",
        ];
        for piece in pieces.into_iter().chain(long.iter().map(Vec::as_slice)) {
            let (mut got, mut want) = (vec![], vec![]);
            encode(&t, piece, &mut got);
            heap_merge::encode(&t, piece, &mut want);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(piece));
        }
        // Ranks the 8- and 16-lane sweeps hold but the 32-lane one does not (above 2^26):
        // pieces of up to 16 bytes in registers, of 17 to 32 in an array, alike.
        let merges = vec![
            (98, 97, 1 << 26),
            (97, 98, (1 << 26) + 1),
            (256, 256, (1 << 26) + 2),
        ];
        let t = tiny_ranked(&[b"ab", b"ba", b"abab"], Some(merges));
        assert!(packs::<16>(t.rank_bound()) && !packs::<32>(t.rank_bound()));
        for piece in pieces.into_iter().chain(long.iter().map(Vec::as_slice)) {
            let (mut got, mut want) = (vec![], vec![]);
            encode(&t, piece, &mut got);
            heap_merge::encode(&t, piece, &mut want);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(piece));
        }
    }
}
