//! Tests of [`super::CharacterBpe`]: HF's rules on small vocabularies (the suffix, the prefix
//! and the tokens its merges make, the unknown token with and without `fuse_unk`, bytes as
//! symbols), where HF's offsets place each token (and the offsets walk with them), and the
//! sweep and the heap against a plain merge loop on random vocabularies and words.

use super::*;
use crate::testing::xorshift;

/// Tables of `tokens` at ids 0.., with the merges `(left, right)` ranked in list order (a
/// pair listed twice keeps its last rank, as HF's map does).
fn tables(tokens: &[&str], merges: &[(&str, &str)]) -> Arc<MergeTables> {
    let id = |t: &str| tokens.iter().position(|x| *x == t).unwrap() as u32;
    let merges = merges
        .iter()
        .enumerate()
        .map(|(rank, (a, b))| (id(a), id(b), rank as u32))
        .collect();
    let bpe = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_bytes(), i as u32));
    Arc::new(MergeTables::from_tokens(bpe, &[], tokens.len(), Some(merges), false).unwrap())
}

fn model(unk: &str, fuse: bool, suffix: &str, prefix: &str, byte_level: bool) -> ModelSpec {
    ModelSpec::CharacterBpe {
        unk_token: unk.into(),
        fuse_unk: fuse,
        end_of_word_suffix: suffix.into(),
        byte_level,
        continuing_subword_prefix: prefix.into(),
    }
}

fn ids(encoder: &CharacterBpe, piece: &str) -> Result<Vec<u32>, Error> {
    let mut out = vec![99];
    encoder.encode_piece(piece.as_bytes(), &mut out)?;
    assert_eq!(out[0], 99, "what was there stays");
    Ok(out.split_off(1))
}

/// The length of each token's span, where the spans tile the piece.
fn lengths(encoder: &CharacterBpe, piece: &[u8]) -> Vec<usize> {
    let spans = spans(encoder, piece);
    assert!(spans.windows(2).all(|w| w[0].1 == w[1].0), "{spans:?}");
    assert_eq!(spans.last().map_or(0, |s| s.1), piece.len());
    spans.iter().map(|(a, b)| b - a).collect()
}

fn spans(encoder: &CharacterBpe, piece: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    assert!(encoder.token_spans(piece, &mut out).unwrap());
    out
}

#[test]
fn the_suffix_spells_the_last_symbol() {
    let t = tables(
        &[
            "[UNK]", "l", "o", "w", "o</w>", "w</w>", "lo", "low</w>", "lo</w>",
        ],
        &[("l", "o"), ("lo", "w</w>"), ("l", "o</w>")],
    );
    let encoder = CharacterBpe::new(&t, &model("[UNK]", false, "</w>", "", false), "t").unwrap();
    assert_eq!(ids(&encoder, "low").unwrap(), [7]);
    assert_eq!(ids(&encoder, "lo").unwrap(), [8]);
    assert_eq!(ids(&encoder, "lowo").unwrap(), [6, 3, 4]);
    // "w" alone is "w</w>"; "ow" is "o" then "w</w>", which do not merge.
    assert_eq!(ids(&encoder, "w").unwrap(), [5]);
    assert_eq!(ids(&encoder, "ow").unwrap(), [2, 5]);
    assert_eq!(ids(&encoder, "").unwrap(), [] as [u32; 0]);
    assert_eq!(lengths(&encoder, b"lowo"), [2, 1, 1]);
}

#[test]
fn the_prefix_spells_every_symbol_after_the_first_and_merges_drop_it() {
    let tokens = ["[UNK]", "a", "##b", "##c", "ab", "##bc", "abc", "b", "bc"];
    let t = tables(
        &tokens,
        &[("##b", "##c"), ("a", "##b"), ("a", "##bc"), ("b", "##c")],
    );
    let encoder = CharacterBpe::new(&t, &model("[UNK]", false, "", "##", false), "t").unwrap();
    // (##b ##c) first: a + ##bc makes "abc".
    assert_eq!(ids(&encoder, "abc").unwrap(), [6]);
    assert_eq!(ids(&encoder, "ab").unwrap(), [4]);
    assert_eq!(ids(&encoder, "bc").unwrap(), [8]);
    assert_eq!(ids(&encoder, "cb").unwrap(), [0, 2]);
    // A merge makes the left bytes and the right ones after the prefix's length.
    assert_eq!(encoder.merge_of(7, 3), Some((3, 8)));
    assert_eq!(ids(&encoder, "abcb").unwrap(), [6, 2]);
    assert_eq!(lengths(&encoder, b"abcb"), [3, 1]);
}

#[test]
fn unknown_symbols_are_one_token_each_or_one_per_run_with_fuse_unk() {
    let t = tables(&["<unk>", "a", "b", "ab"], &[("a", "b")]);
    let plain = CharacterBpe::new(&t, &model("<unk>", false, "", "", false), "t").unwrap();
    let fused = CharacterBpe::new(&t, &model("<unk>", true, "", "", false), "t").unwrap();
    assert_eq!(ids(&plain, "xéyab中").unwrap(), [0, 0, 0, 3, 0]);
    assert_eq!(ids(&fused, "xéyab中").unwrap(), [0, 3, 0]);
    assert_eq!(lengths(&fused, "xéyab中".as_bytes()), [4, 2, 3]);
    assert_eq!(lengths(&plain, "xéyab中".as_bytes()), [1, 2, 1, 2, 3]);
    // The unknown token is a symbol like the others: it merges when a merge lists it.
    let t = tables(&["<unk>", "a", "a<unk>"], &[("a", "<unk>")]);
    let merging = CharacterBpe::new(&t, &model("<unk>", false, "", "", false), "t").unwrap();
    assert_eq!(ids(&merging, "aé").unwrap(), [2]);
    // Without an unknown token, such a symbol is dropped: its neighbours merge.
    let t = tables(&["a", "b", "ab"], &[("a", "b")]);
    let none = CharacterBpe::new(&t, &model("", false, "", "", false), "t").unwrap();
    assert_eq!(ids(&none, "axb").unwrap(), [2]);
    assert_eq!(ids(&none, "aébxa").unwrap(), [2, 0]);
    // HF's places add up the kept symbols' lengths: "ab" at 0..2, "a" at 2..3 (in "é").
    assert_eq!(spans(&none, "aébxa".as_bytes()), [(0, 2), (2, 3)]);
}

#[test]
fn a_piece_that_needs_a_missing_unknown_token_is_an_error() {
    let t = tables(&["a", "b"], &[]);
    let encoder = CharacterBpe::new(&t, &model("[UNK]", true, "", "", false), "tiny").unwrap();
    assert_eq!(ids(&encoder, "ab").unwrap(), [0, 1]);
    let mut out = vec![7];
    let error = encoder.encode_piece(b"abx", &mut out).unwrap_err();
    assert_eq!(out, [7], "nothing of the piece is left");
    assert!(matches!(error, Error::MissingUnknownToken { ref token, .. } if token == "[UNK]"));
    let mut spans = vec![(5, 6)];
    assert!(encoder.token_spans(b"abx", &mut spans).is_err());
    assert_eq!(spans, [(5, 6)]);
}

#[test]
fn a_byte_level_model_reads_bytes() {
    // "é" is two bytes: two symbols, merged by the list.
    let bytes: Vec<(Vec<u8>, u32)> = vec![
        (vec![0xC3], 0),
        (vec![0xA9], 1),
        ("é".into(), 2),
        (vec![0xA9, b'!'], 3),
        (b"!".to_vec(), 4),
    ];
    let tokens = bytes.iter().map(|(b, i)| (b.as_slice(), *i));
    let t =
        Arc::new(MergeTables::from_tokens(tokens, &[], 5, Some(vec![(0, 1, 0)]), false).unwrap());
    let encoder = CharacterBpe::new(&t, &model("", false, "!", "", true), "t").unwrap();
    assert_eq!(ids(&encoder, "éé").unwrap(), [2, 0, 3]);
    assert_eq!(lengths(&encoder, "éé".as_bytes()), [2, 1, 1]);
    // Over characters, the same vocabulary has no "é!" and no unknown token: dropped.
    let chars = CharacterBpe::new(&t, &model("", false, "!", "", false), "t").unwrap();
    assert_eq!(ids(&chars, "éé").unwrap(), [2]);
}

#[test]
fn each_name_runs_its_model() {
    let t = tables(&["a"], &[]);
    let bpe = model("", false, "", "", false);
    assert!(character_bpe_encoder("character-bpe", &t, &bpe, "t")
        .unwrap()
        .is_ok());
    assert!(character_bpe_encoder("auto", &t, &bpe, "t")
        .unwrap()
        .is_err());
    assert!(
        character_bpe_encoder("character-bpe", &t, &ModelSpec::Bpe, "t")
            .unwrap()
            .is_err()
    );
    assert!(character_bpe_encoder("auto", &t, &ModelSpec::Bpe, "t").is_none());
    let bad = tables(&["a", "b"], &[("a", "b")]);
    assert!(matches!(
        CharacterBpe::new(&bad, &bpe, "t"),
        Err(Error::VocabFormat(_))
    ));
}

/// The ids of merging `symbols` the plain way: each round, every pair's rank looked up and
/// the first of the lowest merged.
fn plain_merge(encoder: &CharacterBpe, mut symbols: Vec<u32>) -> Vec<u32> {
    loop {
        let best = (0..symbols.len().saturating_sub(1))
            .filter_map(|i| Some((encoder.merge_of(symbols[i], symbols[i + 1])?, i)))
            .min_by_key(|&((rank, _), i)| (rank, i));
        let Some(((_, made), i)) = best else {
            return symbols;
        };
        symbols[i] = made;
        symbols.remove(i + 1);
    }
}

#[test]
fn the_sweep_and_the_heap_merge_as_the_plain_loop_does() {
    let mut state = 0x9E37_79B9_7F4A_7C15;
    for round in 0..40 {
        let mut next = || xorshift(&mut state) as usize;
        // Tokens over "abc" (and the prefix's), merges of random pairs that make tokens.
        let prefix = ["", "#"][round % 2];
        let mut tokens: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
        tokens.extend(["a", "b", "c"].map(|c| format!("{prefix}{c}")));
        let mut merges: Vec<(String, String)> = Vec::new();
        for _ in 0..30 {
            let (a, b) = (
                tokens[next() % tokens.len()].clone(),
                tokens[next() % tokens.len()].clone(),
            );
            if !b.starts_with(prefix) {
                continue;
            }
            let made = format!("{a}{}", &b[prefix.len()..]);
            if !tokens.contains(&made) {
                tokens.push(made);
            }
            merges.push((a, b));
        }
        tokens.sort();
        tokens.dedup();
        let names: Vec<&str> = tokens.iter().map(String::as_str).collect();
        let pairs: Vec<(&str, &str)> = merges
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let t = tables(&names, &pairs);
        let encoder = CharacterBpe::new(&t, &model("", false, "", prefix, false), "t").unwrap();
        for len in [1, 2, 3, 7, SWEEP_SYMBOLS, SWEEP_SYMBOLS + 1, 200] {
            let word: String = (0..len).map(|_| ['a', 'b', 'c'][next() % 3]).collect();
            let scratch = &mut Scratch::default();
            encoder.symbols(word.as_bytes(), scratch).unwrap();
            let want = plain_merge(&encoder, scratch.ids.clone());
            let mut swept = Scratch::default();
            encoder.symbols(word.as_bytes(), &mut swept).unwrap();
            encoder.merge_sweeping(&mut swept);
            assert_eq!(swept.ids, want, "sweep: {word}");
            encoder.merge_heap(scratch);
            let mut linked = Vec::new();
            let mut at = 0;
            while at != NONE {
                linked.push(scratch.ids[at as usize]);
                at = scratch.next[at as usize];
            }
            assert_eq!(linked, want, "heap: {word}");
            assert_eq!(ids(&encoder, &word).unwrap(), want);
        }
    }
}

#[test]
fn a_long_run_merges_on_the_heap() {
    let t = tables(&["a", "aa", "aaaa"], &[("a", "a"), ("aa", "aa")]);
    let encoder = CharacterBpe::new(&t, &model("", false, "", "", false), "t").unwrap();
    let word = "a".repeat((1 << 18) + 3);
    let got = ids(&encoder, &word).unwrap();
    assert_eq!(got.len(), (1 << 16) + 2);
    assert!(got[..1 << 16].iter().all(|&id| id == 2));
    assert_eq!(got[1 << 16..], [1, 0]);
}

#[test]
fn offsets_place_the_tokens_after_a_dropped_character_as_hf() {
    use crate::pipeline::{Pipeline, SpecialPolicy};
    use crate::spanners::words::WordSpanner;
    // (HF: "axb c" is "ab" at (0, 2) and "c" at (4, 5); "aébc" is "ab" at (0, 2) and "c"
    // at byte 2, inside "é": (1, 2))
    let t = tables(&["a", "b", "ab", "c"], &[("a", "b")]);
    let encoder = CharacterBpe::new(&t, &model("", false, "", "", false), "t").unwrap();
    let pipeline = Pipeline::builder(t)
        .foreign_encoder(Box::new(encoder))
        .foreign_spanner(Box::new(WordSpanner::WhitespaceSplit))
        .reads_text(true)
        .build()
        .unwrap();
    for (text, expected) in [
        ("axb c", vec![(0, 2), (4, 5)]),
        ("aébc", vec![(0, 2), (1, 2)]),
        ("abx x", vec![(0, 2)]),
    ] {
        let (mut ids, mut places) = (Vec::new(), Vec::new());
        let policy = SpecialPolicy::AllowAll;
        pipeline
            .encode_with_offsets(text, &policy, &mut ids, &mut places)
            .unwrap();
        let chars: Vec<(u64, u64)> = places.iter().map(|p| (p[2], p[3])).collect();
        let expected: Vec<(u64, u64)> = expected.into_iter().collect();
        assert_eq!(chars, expected, "{text:?}");
    }
}
