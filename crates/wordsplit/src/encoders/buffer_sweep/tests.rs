//! buffer-sweep's tests: every build and buffer size against heap-merge, the register
//! sweeps against the array's, the pairs looked up together against one at a time.

#[cfg(target_arch = "x86_64")]
use super::lanes::Lanes;
use super::ranks::lowest;
use super::*;
use crate::encoders::heap_merge;
use crate::tables::tests::{tiny, tiny_ranked};
use crate::tables::NO_RANK;
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
            let rank = [NO_RANK, step() % 8, top - step() % 4, step() % top][step() as usize % 4];
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
    // (only x86-64 has builds per instruction set to add)
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut builds: Vec<(&str, Build)> = vec![("encode", encode), ("any CPU", encode_with_any_cpu)];
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
