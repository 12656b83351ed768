//! `buffer-sweep`: after every merge, sweep the buffer for the lowest-priority adjacent pair
//! (leftmost on ties) and merge it. O(n²) but with tiny constants, so it is the fastest
//! choice for the short pieces of ordinary text (it is tiktoken's `_byte_pair_merge`); pieces
//! over 128 bytes sweep blocks of ranks and their minima instead (`blocked`, O(n·√n)).
//!
//! Here: [`encode`], which picks the build for the CPU and the buffers for the piece's
//! length. The parts, a file each: how a vocabulary ranks a pair (`rules`); the sweep of
//! short pieces in stack buffers (`linked`); the ranks it sweeps, in memory (`ranks`) or in
//! SIMD registers (`lanes`), with the registers and the build of each x86-64 instruction set
//! (`sse`, `avx2`, `avx512`); the sweep of long pieces over blocks (`blocked`).

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod blocked;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod linked;
mod ranks;
mod rules;
#[cfg(target_arch = "x86_64")]
mod sse;
#[cfg(test)]
mod tests;

use crate::tables::MergeTables;

use blocked::blocked;
use linked::linked;
use ranks::{Ranks, Ranks16, Ranks32, Ranks8};
use rules::{PairRanked, RankBased};
#[cfg(target_arch = "x86_64")]
use {avx2::encode_avx2, avx512::encode_avx512, sse::encode_sse41};

/// Pieces up to this length work in stack buffers (no allocation); nearly all pieces do.
const STACK_PIECE: usize = 128;

/// Zero bytes after a piece's copy: a lookup reads a key of up to 16 bytes with two 8-byte
/// loads and masks ([`MergeTables::rank_in`]).
const PAD: usize = 16;

pub fn encode(t: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if (65..=STACK_PIECE).contains(&piece.len())
            && has!("avx512f")
            && has!("avx2")
            && crate::cpu::avx512_allowed()
        {
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

/// Whether every rank below `rank_bound` fits a [`Lanes`](lanes::Lanes) word of `N` lanes
/// beside its lane's position, below `2^31` (so no word is `NO_RANK`).
#[inline(always)]
fn packs<const N: usize>(rank_bound: u64) -> bool {
    rank_bound <= 1 << (31 - N.trailing_zeros())
}

/// [`linked()`] on stack buffers of `N >= piece.len()` symbols (`P = N + PAD` bytes), with
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
