//! Tests of [`super::Unigram`]: the trie's search against an exhaustive one (every
//! segmentation scored), the unknown runs of each style, and `sentencepiece`'s rebasing.

use super::*;

/// Tables of `pieces` at ids 0.. (byte tokens `<0xNN>` after them when `bytes`).
fn tables(pieces: &[&str], bytes: bool) -> Arc<MergeTables> {
    let mut tokens: Vec<(Vec<u8>, u32)> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_bytes().to_vec(), i as u32))
        .collect();
    if bytes {
        let first = pieces.len() as u32;
        tokens.extend((0..=255u8).map(|b| (byte_token(b).into_bytes(), first + u32::from(b))));
    }
    let n = tokens.len();
    let tokens = tokens.iter().map(|(b, i)| (b.as_slice(), *i));
    Arc::new(MergeTables::from_tokens(tokens, &[], n, None, false).unwrap())
}

/// The model of `pieces` (the first the unknown token, no byte fallback) in `style`.
fn plain(pieces: &[&str], style: Style, scores: &[f64]) -> Unigram {
    Unigram::with_style(tables(pieces, false), style, scores, Some(0), false, "t").unwrap()
}

fn encode(model: &Unigram, text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    model.encode_piece(text.as_bytes(), &mut out).unwrap();
    out
}

/// The best score of any segmentation of `text` into `pieces` (by character, f64, unknown
/// characters at `unk`), by trying them all: what the search must reach.
fn exhaustive_best(text: &[char], pieces: &[&str], scores: &[f64], unk: f64) -> f64 {
    let n = text.len();
    let mut best = vec![f64::NEG_INFINITY; n + 1];
    best[0] = 0.0;
    for start in 0..n {
        let mut single = false;
        for (p, score) in pieces.iter().zip(scores) {
            let chars: Vec<char> = p.chars().collect();
            if !chars.is_empty() && text[start..].starts_with(&chars) {
                let end = start + chars.len();
                best[end] = best[end].max(best[start] + score);
                single |= chars.len() == 1;
            }
        }
        if !single {
            best[start + 1] = best[start + 1].max(best[start] + unk);
        }
    }
    best[n]
}

/// The score of the tokens `ids` the encoder gave for `text` (no unknown characters).
fn score_of(ids: &[u32], text: &[char], pieces: &[&str], scores: &[f64]) -> f64 {
    let mut at = 0;
    let mut total = 0.0;
    for &id in ids {
        let chars: Vec<char> = pieces[id as usize].chars().collect();
        assert!(
            text[at..].starts_with(&chars),
            "{ids:?} do not spell {text:?}"
        );
        at += chars.len();
        total += scores[id as usize];
    }
    assert_eq!(at, text.len());
    total
}

#[test]
fn the_search_finds_the_best_segmentation() {
    let pieces = [
        "<unk>", "a", "b", "é", "ab", "bé", "aba", "éa", "abéa", "aé", "ba",
    ];
    let scores = [
        0.0, -1.0, -1.5, -2.0, -1.75, -2.5, -2.0, -3.0, -3.5, -2.25, -2.75,
    ];
    let model = plain(&pieces, Style::Hf, &scores);
    let mut state = 7u64;
    for _ in 0..2000 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 1 + (state >> 59) as usize;
        let mut letters = state;
        let text: String = (0..len)
            .map(|_| {
                letters = letters.wrapping_mul(6364136223846793005).wrapping_add(1);
                ['a', 'b', 'é', 'a', 'b'][(letters >> 61) as usize % 5]
            })
            .collect();
        let chars: Vec<char> = text.chars().collect();
        let ids = encode(&model, &text);
        let want = exhaustive_best(&chars, &pieces[1..], &scores[1..], -13.5);
        let got = score_of(&ids, &chars, &pieces, &scores);
        assert_eq!(got, want, "{text:?}: {ids:?}");
    }
}

#[test]
fn the_module_example_and_ties_keep_the_first_candidate() {
    let pieces = ["<unk>", "a", "b", "c", "d", "cd", "ab", "abc", "abcd"];
    let scores = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 5.0, 10.0];
    let model = plain(&pieces, Style::Hf, &scores);
    assert_eq!(encode(&model, "abcdacdxx"), [8, 1, 5, 0]);
    assert_eq!(encode(&model, "abxcd"), [6, 0, 5]);
    // "ab" = "a" + "b" in score: the path whose last token starts earliest stays.
    let scores = [0.0, -1.0, -1.0, -1.0, -1.0, -1.0, -2.0, -9.0, -9.0];
    let model = plain(&pieces, Style::Hf, &scores);
    assert_eq!(encode(&model, "ab"), [6]);
    assert_eq!(encode(&model, ""), [] as [u32; 0]);
}

#[test]
fn scores_that_are_f32_exactly_are_kept_narrow_and_give_the_same_ids() {
    // (-ln(i + 2) rounded to f32: sums of them round in f64 as they would not in f32)
    let pieces = [
        "<unk>", "a", "b", "é", "ab", "bé", "aba", "éa", "abéa", "aé", "ba", "zz",
    ];
    let mut exact: Vec<f64> = (0..pieces.len())
        .map(|i| f64::from(-((i + 2) as f32).ln()))
        .collect();
    // ("zz" above the lowest score in both models, so the unknown token's is the same)
    exact[11] = -0.5;
    let narrow = plain(&pieces, Style::Hf, &exact);
    assert!(matches!(narrow.search, Search::F64Narrow(_)));
    // "zz" (never in the texts) at a score no f32 is: the search keeps f64 slots.
    let mut wide_scores = exact.clone();
    wide_scores[11] = -0.1;
    let wide = plain(&pieces, Style::Hf, &wide_scores);
    assert!(matches!(wide.search, Search::F64(_)));
    let llama = plain(&pieces, Style::LlamaCpp, &exact);
    assert!(matches!(llama.search, Search::F64Narrow(_)));
    let mut state = 11u64;
    for _ in 0..3000 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 1 + (state >> 58) as usize;
        let mut letters = state;
        let text: String = (0..len)
            .map(|_| {
                letters = letters.wrapping_mul(6364136223846793005).wrapping_add(1);
                ['a', 'b', 'é', 'a', 'b', 'x'][(letters >> 61) as usize % 6]
            })
            .collect();
        assert_eq!(encode(&narrow, &text), encode(&wide, &text), "{text:?}");
    }
}

#[test]
fn unknown_runs_by_style() {
    let pieces = ["<unk>", "a", "xy"];
    let scores = [[0.0, -1.0, -1.0].as_slice(), &[-1.0; 256]].concat();
    let t = tables(&pieces, true);
    let bytes = |s: &str| s.bytes().map(|b| 3 + u32::from(b)).collect::<Vec<_>>();
    // HF: a run that is no token ("zé") is its bytes with byte fallback.
    let hf = Unigram::with_style(t.clone(), Style::Hf, &scores, Some(0), true, "t").unwrap();
    assert_eq!(
        encode(&hf, "azéa"),
        [[1].as_slice(), &bytes("zé"), &[1]].concat()
    );
    let hf_plain = Unigram::with_style(t.clone(), Style::Hf, &scores, Some(0), false, "t").unwrap();
    assert_eq!(encode(&hf_plain, "azéqa"), [1, 0, 1]);
    // The run "<unk>" spells the unknown token itself.
    assert_eq!(encode(&hf_plain, "a<unk>"), [1, 0]);
    let spm =
        Unigram::with_style(t.clone(), Style::SentencePiece, &scores, Some(0), true, "t").unwrap();
    assert_eq!(encode(&spm, "zéa"), [bytes("zé").as_slice(), &[1]].concat());
    let llama = Unigram::with_style(t, Style::LlamaCpp, &scores, Some(0), false, "t").unwrap();
    assert_eq!(encode(&llama, "zéa"), [0, 1]);
}

#[test]
fn no_unknown_token_is_an_error_where_one_is_needed() {
    let pieces = ["a", "b"];
    let model = Unigram::with_style(
        tables(&pieces, false),
        Style::Hf,
        &[-1.0, -1.0],
        None,
        false,
        "t",
    )
    .unwrap();
    assert_eq!(encode(&model, "ab"), [0, 1]);
    let mut out = vec![7];
    let error = model.encode_piece(b"abc", &mut out).unwrap_err();
    assert!(
        matches!(error, Error::MissingUnknownToken { .. }),
        "{error}"
    );
    assert_eq!(out, [7], "what it appended is dropped");
}

/// `sentencepiece`'s search written plainly (every piece tried at every start, `f32`, the
/// rebase as `EncodeOptimized` does it), to hold the trie's version to.
fn plain_sentencepiece(text: &[u8], pieces: &[(&[u8], u32, f32)], unk: f32) -> Vec<u32> {
    let n = text.len();
    let mut best = vec![0.0f32; n + 1];
    let mut starts = vec![NONE; n + 1];
    let mut ids = vec![NONE; n + 1];
    let mut frontier = 0;
    for start in 0..n {
        let mut here = best[start];
        if !(-REBASE..=REBASE).contains(&here) {
            for i in start..=frontier {
                if i == start || starts[i] != NONE {
                    best[i] -= here;
                }
            }
            here = 0.0;
        }
        let mut sorted: Vec<_> = pieces
            .iter()
            .filter(|p| text[start..].starts_with(p.0))
            .collect();
        sorted.sort_by_key(|p| p.0.len());
        let mut single = false;
        for &&(p, id, score) in &sorted {
            let end = start + p.len();
            frontier = frontier.max(end);
            let candidate = score + here;
            if starts[end] == NONE || candidate > best[end] {
                (best[end], starts[end], ids[end]) = (candidate, start as u32, id);
            }
            single |= p.len() == 1;
        }
        if !single {
            frontier = frontier.max(start + 1);
            let candidate = unk + here;
            if starts[start + 1] == NONE || candidate > best[start + 1] {
                (best[start + 1], starts[start + 1], ids[start + 1]) = (candidate, start as u32, 0);
            }
        }
    }
    let mut out = vec![];
    let mut end = n;
    while end > 0 {
        out.push(ids[end]);
        end = starts[end] as usize;
    }
    out.reverse();
    out.dedup_by(|a, b| *a == 0 && *b == 0);
    out
}

#[test]
fn sentencepiece_rebases_long_texts_as_encode_optimized_does() {
    // Scores whose sums lose precision in f32 past 100,000: without the rebase the ties
    // and near-ties of a long run of "a" come out otherwise.
    let pieces = ["<unk>", "a", "aa", "aaa", "b", "ab"];
    let scores = [0.0, -3.3, -6.600_001, -9.9, -4.1, -7.35];
    let model = plain(&pieces, Style::SentencePiece, &scores);
    let plain: Vec<(&[u8], u32, f32)> = pieces[1..]
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_bytes(), i as u32 + 1, scores[i + 1] as f32))
        .collect();
    let unk = (-9.9f64 - UNK_PENALTY) as f32;
    let mut state = 3u64;
    for len in [10, 1000, 40_000, 120_000] {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut text = "a".repeat(len).into_bytes();
        for k in 0..len / 97 {
            let at = (state >> (k % 40)) as usize % len;
            text[at] = b"bxa"[k % 3];
        }
        let want = plain_sentencepiece(&text, &plain, unk);
        let mut got = Vec::new();
        model.encode_piece(&text, &mut got).unwrap();
        assert_eq!(got, want, "{len} bytes");
    }
}

#[test]
fn a_megabyte_run_of_one_character_is_searched_in_linear_work() {
    // Each start walks the trie as far as its longest piece (3 bytes) and each rebase shifts
    // the scores up to the frontier (3 bytes ahead): a constant per byte, so this completes
    // in a few milliseconds; a quadratic rebase would take hours.
    let pieces = ["<unk>", "a", "aa", "aaa"];
    let scores = [0.0, -3.0, -5.0, -7.0];
    for style in [Style::SentencePiece, Style::Hf, Style::LlamaCpp] {
        let model = plain(&pieces, style, &scores);
        let mut out = Vec::new();
        model.encode_piece(&b"a".repeat(1 << 20), &mut out).unwrap();
        assert_eq!(out.len(), (1 << 20) / 3 + 1, "{style:?}");
    }
}

#[test]
fn user_defined_and_unused_pieces_by_style() {
    let pieces = ["<unk>", "a", "b", "<br>", "ab"];
    let t = tables(&pieces, false);
    let scores = [0.0, -1.0, -1.0, -50.0, -1.5];
    let kinds = |style, user_defined: &[&'static str], unused: &[&'static str]| PieceKinds {
        style,
        byte_fallback: false,
        user_defined: user_defined.iter().map(|t| t.as_bytes()).collect(),
        unused: unused.iter().map(|t| t.as_bytes()).collect(),
    };
    // sentencepiece: "<br>" scores 0.1 x 3 and wins over its characters; an UNUSED "ab" is
    // out of the search.
    let spm = Unigram::build(
        t.clone(),
        &kinds(Style::SentencePiece, &["<br>"], &["ab"]),
        &scores,
        Some(0),
        "t",
    )
    .unwrap();
    let Search::F32(trie) = &spm.search else {
        panic!("sentencepiece searches in f32");
    };
    let br = trie.walk(PrefixTrie::ROOT, b"<br>").unwrap();
    assert_eq!(
        trie.value(br).map(|leaf| (leaf.id, leaf.score)),
        Some((3, 0.3f32))
    );
    assert_eq!(encode(&spm, "ab<br>"), [1, 2, 3]);
    // llama.cpp: an added token scores 0; an UNUSED one is searched.
    let llama = Unigram::build(
        t,
        &kinds(Style::LlamaCpp, &["<br>"], &["ab"]),
        &scores,
        Some(0),
        "t",
    )
    .unwrap();
    assert_eq!(encode(&llama, "ab<br>"), [4, 3]);
    // (the lowest NORMAL score: not the UNUSED "ab"'s)
    assert_eq!(llama.unk64, f64::from((-1.0f64 - 10.0) as f32));
}

#[test]
#[ignore = "a timing probe for the load of a large model; run with --release --ignored --nocapture"]
fn probe_build_time_of_a_large_model() {
    let mut state = 11u64;
    let mut texts: Vec<String> = (0..262_000)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = 1 + (state >> 60) as usize % 10;
            let mut letters = state;
            (0..len)
                .map(|_| {
                    letters = letters.wrapping_mul(6364136223846793005).wrapping_add(7);
                    char::from(b'a' + (letters >> 59) as u8 % 26)
                })
                .collect()
        })
        .collect();
    texts.sort();
    texts.dedup();
    let n = texts.len();
    let tokens = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_bytes(), i as u32));
    let start = std::time::Instant::now();
    let t = Arc::new(MergeTables::from_tokens(tokens, &[], n, None, false).unwrap());
    eprintln!("tables: {:?}", start.elapsed());
    let scores: Vec<f64> = (0..n).map(|i| -((i + 2) as f64).ln()).collect();
    let start = std::time::Instant::now();
    let trie = PrefixTrie::new(
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_bytes(), i as u32)),
    );
    eprintln!("trie of {n}: {:?}, {} bytes", start.elapsed(), trie.size());
    let start = std::time::Instant::now();
    Unigram::with_style(t, Style::SentencePiece, &scores, Some(0), false, "t").unwrap();
    eprintln!("encoder: {:?}", start.elapsed());
}

#[test]
fn tokens_that_are_no_utf8_alone_are_left_out_of_the_search() {
    let check = |tokens: &[&[u8]]| all_utf8(&tokens.iter().map(|&t| (t, 0)).collect::<Vec<_>>());
    let e = "é".as_bytes();
    assert!(check(&[b"a", e, b"", "▁x".as_bytes()]));
    // (joined they are "é", but the second begins inside it)
    assert!(!check(&[&e[..1], &e[1..]]));
    assert!(!check(&[&e[..1]]));
    assert!(!check(&[b"\xff"]));
    // A model whose tokens hold the first byte of "é" alone: that token is no piece.
    let tokens: [&[u8]; 4] = [b"<unk>", &e[..1], e, b"a"];
    let tokens = tokens.iter().enumerate().map(|(i, &t)| (t, i as u32));
    let tables = Arc::new(MergeTables::from_tokens(tokens, &[], 4, None, false).unwrap());
    let scores = [0.0, 5.0, -1.0, -1.0];
    let model = Unigram::with_style(tables, Style::Hf, &scores, Some(0), false, "t").unwrap();
    assert_eq!(encode(&model, "éa"), [2, 3]);
}
