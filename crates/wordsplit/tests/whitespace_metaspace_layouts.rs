//! HF's `WhitespaceSplit` then `Metaspace`, every `prepend_scheme` with `split` true and false,
//! read by the core's own tokenizer.json reader: HF cuts the text into words at runs of white
//! space, runs Metaspace on each word (the `▁` put before it as the scheme says; with `split`
//! the word cut before every `▁`, without it a word's own `▁` cuts nothing) and encodes each
//! piece alone. The reader gives the Python package's pipeline (`always` with `split`: the
//! words joined and the SentencePiece split; otherwise the white space kept and a split
//! program), and the tokenizer HF's ids, (char) offsets and decoded text: HF tokenizers
//! 0.23's for this small file, and for the NLLB file (a SentencePiece BPE model read as
//! `CharacterBpe`, whose `<mask>` is a `normalized` added token) with each layout.

use std::io::Read;

use serde_json::{json, Value};
use wordsplit::formats::read_hf_tokenizer_json;
use wordsplit::spec::ModelSpec;
use wordsplit::Tokenizer;

mod support;

const VOCAB: &str = r#"[["<unk>", 0.0], ["\u2581a", -1.0], ["a", -2.0], ["\u2581", -3.0], ["b", -2.0],
                        ["\u2581b", -1.5], ["ab", -1.2], ["a\u2581b", -0.5]]"#;

fn file(scheme: &str, split: bool) -> Vec<u8> {
    let metaspace = json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": scheme,
                           "split": split});
    let vocab: Value = serde_json::from_str(VOCAB).unwrap();
    json!({
        "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": false},
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]},
        "decoder": metaspace,
        "added_tokens": [{"id": 8, "content": "<s>", "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}],
    })
    .to_string()
    .into_bytes()
}

#[test]
fn the_reader_gives_the_python_packages_stages() {
    let white_space =
        json!({"type": "Split", "pattern": "\\s", "behavior": "Removed", "invert": false});
    let cut = json!({"type": "Split", "pattern": "\\x{2581}", "behavior": "MergedWithNext", "invert": false});
    for (scheme, split) in LAYOUTS {
        let vocab = read_hf_tokenizer_json(&file(scheme, split)).unwrap();
        let pipeline = vocab.pipeline.as_ref().unwrap().to_json();
        let keep = scheme == "always" && !split;
        assert_eq!(
            pipeline["normalizer"],
            json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": scheme,
                   "before": {"type": "None"}, "whitespace_split": true, "keep_white_space": keep}),
            "{scheme} {split}"
        );
        let spanner = match (scheme, split) {
            ("always", true) => json!({"type": "SentencePiece", "user_defined": [], "words": false,
                                        "joined": [], "metaspace_split": true}),
            (_, true) => json!({"type": "SplitProgram", "steps": [white_space, cut]}),
            (_, false) => json!({"type": "SplitProgram", "steps": [white_space]}),
        };
        assert_eq!(pipeline["spanner"], spanner, "{scheme} {split}");
    }
}

const LAYOUTS: [(&str, bool); 6] = [
    ("always", true),
    ("always", false),
    ("first", true),
    ("first", false),
    ("never", true),
    ("never", false),
];

type Case = (
    &'static str,
    bool,
    &'static str,
    &'static [u32],
    &'static [(usize, usize)],
    &'static str,
);

/// (scheme, split, text, HF's ids, offsets, decoded ids).
const CASES: &[Case] = &[
    ("always", true, "a b", &[1, 5], &[(0, 1), (2, 3)], "a b"),
    (
        "always",
        true,
        "  a▁b  ab ",
        &[1, 5, 1, 4],
        &[(2, 3), (3, 5), (7, 8), (8, 9)],
        "a b ab",
    ),
    ("always", true, "▁▁a", &[3, 1], &[(0, 1), (1, 3)], " a"),
    ("always", true, "", &[], &[], ""),
    ("always", true, "a　b", &[1, 5], &[(0, 1), (2, 3)], "a b"),
    ("always", true, "\tb▁", &[5, 3], &[(1, 2), (2, 3)], "b "),
    (
        "always",
        true,
        "ab▁ab",
        &[1, 4, 1, 4],
        &[(0, 1), (1, 2), (2, 4), (4, 5)],
        "ab ab",
    ),
    (
        "always",
        true,
        "x <s> ab",
        &[3, 0, 8, 1, 4],
        &[(0, 1), (0, 1), (2, 5), (6, 7), (7, 8)],
        "<unk><s> ab",
    ),
    ("always", false, "a b", &[1, 5], &[(0, 1), (2, 3)], "a b"),
    (
        "always",
        false,
        "  a▁b  ab ",
        &[1, 5, 1, 4],
        &[(2, 3), (3, 5), (7, 8), (8, 9)],
        "a b ab",
    ),
    ("always", false, "▁▁a", &[3, 1], &[(0, 1), (1, 3)], " a"),
    ("always", false, "", &[], &[], ""),
    ("always", false, "a　b", &[1, 5], &[(0, 1), (2, 3)], "a b"),
    ("always", false, "\tb▁", &[5, 3], &[(1, 2), (2, 3)], "b "),
    (
        "always",
        false,
        "ab▁ab",
        &[1, 4, 1, 4],
        &[(0, 1), (1, 2), (2, 4), (4, 5)],
        "ab ab",
    ),
    (
        "always",
        false,
        "x <s> ab",
        &[3, 0, 8, 1, 4],
        &[(0, 1), (0, 1), (2, 5), (6, 7), (7, 8)],
        "<unk><s> ab",
    ),
    ("first", true, "a b", &[1, 4], &[(0, 1), (2, 3)], "ab"),
    (
        "first",
        true,
        "  a▁b  ab ",
        &[2, 5, 6],
        &[(2, 3), (3, 5), (7, 9)],
        "a bab",
    ),
    ("first", true, "▁▁a", &[3, 1], &[(0, 1), (1, 3)], " a"),
    ("first", true, "", &[], &[], ""),
    ("first", true, "a　b", &[1, 4], &[(0, 1), (2, 3)], "ab"),
    ("first", true, "\tb▁", &[4, 3], &[(1, 2), (2, 3)], "b "),
    (
        "first",
        true,
        "ab▁ab",
        &[1, 4, 1, 4],
        &[(0, 1), (1, 2), (2, 4), (4, 5)],
        "ab ab",
    ),
    (
        "first",
        true,
        "x <s> ab",
        &[3, 0, 8, 6],
        &[(0, 1), (0, 1), (2, 5), (6, 8)],
        "<unk><s>ab",
    ),
    ("first", false, "a b", &[1, 4], &[(0, 1), (2, 3)], "ab"),
    (
        "first",
        false,
        "  a▁b  ab ",
        &[7, 6],
        &[(2, 5), (7, 9)],
        "abab",
    ),
    ("first", false, "▁▁a", &[3, 1], &[(0, 1), (1, 3)], " a"),
    ("first", false, "", &[], &[], ""),
    ("first", false, "a　b", &[1, 4], &[(0, 1), (2, 3)], "ab"),
    ("first", false, "\tb▁", &[4, 3], &[(1, 2), (2, 3)], "b "),
    (
        "first",
        false,
        "ab▁ab",
        &[1, 4, 1, 4],
        &[(0, 1), (1, 2), (2, 4), (4, 5)],
        "ab ab",
    ),
    (
        "first",
        false,
        "x <s> ab",
        &[3, 0, 8, 6],
        &[(0, 1), (0, 1), (2, 5), (6, 8)],
        "<unk><s>ab",
    ),
    ("never", true, "a b", &[2, 4], &[(0, 1), (2, 3)], "ab"),
    (
        "never",
        true,
        "  a▁b  ab ",
        &[2, 5, 6],
        &[(2, 3), (3, 5), (7, 9)],
        "a bab",
    ),
    ("never", true, "▁▁a", &[3, 1], &[(0, 1), (1, 3)], "  a"),
    ("never", true, "", &[], &[], ""),
    ("never", true, "a　b", &[2, 4], &[(0, 1), (2, 3)], "ab"),
    ("never", true, "\tb▁", &[4, 3], &[(1, 2), (2, 3)], "b "),
    (
        "never",
        true,
        "ab▁ab",
        &[6, 1, 4],
        &[(0, 2), (2, 4), (4, 5)],
        "ab ab",
    ),
    (
        "never",
        true,
        "x <s> ab",
        &[0, 8, 6],
        &[(0, 1), (2, 5), (6, 8)],
        "<unk><s>ab",
    ),
    ("never", false, "a b", &[2, 4], &[(0, 1), (2, 3)], "ab"),
    (
        "never",
        false,
        "  a▁b  ab ",
        &[7, 6],
        &[(2, 5), (7, 9)],
        "a bab",
    ),
    ("never", false, "▁▁a", &[3, 1], &[(0, 1), (1, 3)], "  a"),
    ("never", false, "", &[], &[], ""),
    ("never", false, "a　b", &[2, 4], &[(0, 1), (2, 3)], "ab"),
    ("never", false, "\tb▁", &[4, 3], &[(1, 2), (2, 3)], "b "),
    (
        "never",
        false,
        "ab▁ab",
        &[6, 1, 4],
        &[(0, 2), (2, 4), (4, 5)],
        "ab ab",
    ),
    (
        "never",
        false,
        "x <s> ab",
        &[0, 8, 6],
        &[(0, 1), (2, 5), (6, 8)],
        "<unk><s>ab",
    ),
];

#[test]
fn every_layout_gives_hfs_ids_offsets_and_text() {
    for (scheme, split) in LAYOUTS {
        let tok =
            Tokenizer::from_vocab(read_hf_tokenizer_json(&file(scheme, split)).unwrap()).unwrap();
        let cases = CASES.iter().filter(|c| (c.0, c.1) == (scheme, split));
        let mut count = 0;
        for &(_, _, text, ids, offsets, decoded) in cases {
            let encoding = tok.encoding(text, None, false).unwrap();
            assert_eq!(encoding.ids, ids, "{scheme} {split} {text:?}");
            assert_eq!(encoding.offsets, offsets, "{scheme} {split} {text:?}");
            if !text.contains("<s>") {
                assert_eq!(tok.encode(text).unwrap(), ids, "{scheme} {split} {text:?}");
            }
            assert_eq!(
                tok.decode(ids).unwrap(),
                decoded,
                "{scheme} {split} {text:?}"
            );
            count += 1;
        }
        assert_eq!(count, 8, "{scheme} {split}");
    }
}

/// The NLLB file's tokenizer.json with its pre-tokenizer `WhitespaceSplit` then the Metaspace
/// of `scheme` and `split`, and that Metaspace as its decoder.
fn nllb(scheme: &str, split: bool) -> Vec<u8> {
    let path = support::test_file("unigram/test_sentencepiece_bpe.nllb.tokenizer.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut spec: Value = serde_json::from_str(&text).unwrap();
    let metaspace = json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": scheme,
                           "split": split});
    spec["pre_tokenizer"] =
        json!({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]});
    spec["decoder"] = metaspace;
    spec.to_string().into_bytes()
}

/// (scheme, split, text, HF's ids, offsets, decoded ids) on the NLLB file.
const NLLB_CASES: &[Case] = &[
    (
        "always",
        true,
        "Hello world",
        &[286, 36, 935, 179, 55],
        &[(0, 2), (2, 4), (4, 5), (6, 9), (9, 11)],
        "Hello world",
    ),
    (
        "always",
        true,
        "  a▁b  c ▁d▁ 　e",
        &[6, 13, 27, 31, 67],
        &[(2, 3), (4, 5), (7, 8), (10, 11), (14, 15)],
        "a b c d e",
    ),
    (
        "always",
        true,
        "<mask> a<mask>b ▁<mask>▁",
        &[1001, 6, 1001, 13, 1001],
        &[(0, 6), (7, 8), (8, 14), (14, 15), (16, 23)],
        "<mask> a<mask> b<mask>",
    ),
    (
        "always",
        true,
        "x </s> y",
        &[932, 970, 2, 69],
        &[(0, 1), (0, 1), (2, 6), (7, 8)],
        "x</s> y",
    ),
    (
        "always",
        false,
        "Hello world",
        &[286, 36, 935, 179, 55],
        &[(0, 2), (2, 4), (4, 5), (6, 9), (9, 11)],
        "Hello world",
    ),
    (
        "always",
        false,
        "  a▁b  c ▁d▁ 　e",
        &[6, 13, 27, 31, 67],
        &[(2, 3), (4, 5), (7, 8), (10, 11), (14, 15)],
        "a b c d e",
    ),
    (
        "always",
        false,
        "<mask> a<mask>b ▁<mask>▁",
        &[1001, 6, 1001, 13, 1001],
        &[(0, 6), (7, 8), (8, 14), (14, 15), (16, 23)],
        "<mask> a<mask> b<mask>",
    ),
    (
        "always",
        false,
        "x </s> y",
        &[932, 970, 2, 69],
        &[(0, 1), (0, 1), (2, 6), (7, 8)],
        "x</s> y",
    ),
    (
        "first",
        true,
        "Hello world",
        &[286, 36, 935, 947, 28, 55],
        &[(0, 2), (2, 4), (4, 5), (6, 7), (7, 9), (9, 11)],
        "Helloworld",
    ),
    (
        "first",
        true,
        "  a▁b  c ▁d▁ 　e",
        &[936, 953, 946, 942, 933],
        &[(2, 3), (4, 5), (7, 8), (10, 11), (14, 15)],
        "abcde",
    ),
    (
        "first",
        true,
        "<mask> a<mask>b ▁<mask>▁",
        &[1001, 936, 1001, 953, 1001],
        &[(0, 6), (7, 8), (8, 14), (14, 15), (16, 23)],
        "<mask>a<mask>b<mask>",
    ),
    (
        "first",
        true,
        "x </s> y",
        &[932, 970, 2, 950],
        &[(0, 1), (0, 1), (2, 6), (7, 8)],
        "x</s>y",
    ),
    (
        "first",
        false,
        "Hello world",
        &[286, 36, 935, 947, 28, 55],
        &[(0, 2), (2, 4), (4, 5), (6, 7), (7, 9), (9, 11)],
        "Helloworld",
    ),
    (
        "first",
        false,
        "  a▁b  c ▁d▁ 　e",
        &[936, 953, 946, 942, 933],
        &[(2, 3), (4, 5), (7, 8), (10, 11), (14, 15)],
        "abcde",
    ),
    (
        "first",
        false,
        "<mask> a<mask>b ▁<mask>▁",
        &[1001, 936, 1001, 953, 1001],
        &[(0, 6), (7, 8), (8, 14), (14, 15), (16, 23)],
        "<mask>a<mask>b<mask>",
    ),
    (
        "first",
        false,
        "x </s> y",
        &[932, 970, 2, 950],
        &[(0, 1), (0, 1), (2, 6), (7, 8)],
        "x</s>y",
    ),
    (
        "never",
        true,
        "Hello world",
        &[964, 542, 935, 947, 28, 55],
        &[(0, 1), (1, 4), (4, 5), (6, 7), (7, 9), (9, 11)],
        "Helloworld",
    ),
    (
        "never",
        true,
        "  a▁b  c ▁d▁ 　e",
        &[936, 953, 946, 942, 933],
        &[(2, 3), (4, 5), (7, 8), (10, 11), (14, 15)],
        "abcde",
    ),
    (
        "never",
        true,
        "<mask> a<mask>b ▁<mask>▁",
        &[1001, 936, 1001, 953, 1001],
        &[(0, 6), (7, 8), (8, 14), (14, 15), (16, 23)],
        "<mask>a<mask>b<mask>",
    ),
    (
        "never",
        true,
        "x </s> y",
        &[970, 2, 950],
        &[(0, 1), (2, 6), (7, 8)],
        "x</s>y",
    ),
    (
        "never",
        false,
        "Hello world",
        &[964, 542, 935, 947, 28, 55],
        &[(0, 1), (1, 4), (4, 5), (6, 7), (7, 9), (9, 11)],
        "Helloworld",
    ),
    (
        "never",
        false,
        "  a▁b  c ▁d▁ 　e",
        &[936, 953, 946, 942, 933],
        &[(2, 3), (4, 5), (7, 8), (10, 11), (14, 15)],
        "abcde",
    ),
    (
        "never",
        false,
        "<mask> a<mask>b ▁<mask>▁",
        &[1001, 936, 1001, 953, 1001],
        &[(0, 6), (7, 8), (8, 14), (14, 15), (16, 23)],
        "<mask>a<mask>b<mask>",
    ),
    (
        "never",
        false,
        "x </s> y",
        &[970, 2, 950],
        &[(0, 1), (2, 6), (7, 8)],
        "x</s>y",
    ),
];

#[test]
fn every_layout_of_the_nllb_file_gives_hfs_ids_offsets_and_text() {
    for (scheme, split) in LAYOUTS {
        let vocab = read_hf_tokenizer_json(&nllb(scheme, split)).unwrap();
        assert!(matches!(
            vocab.pipeline.as_ref().map(|p| &p.model),
            Some(ModelSpec::CharacterBpe { .. })
        ));
        let tok = Tokenizer::from_vocab(vocab).unwrap();
        let cases = NLLB_CASES.iter().filter(|c| (c.0, c.1) == (scheme, split));
        let mut count = 0;
        for &(_, _, text, ids, offsets, decoded) in cases {
            let encoding = tok.encoding(text, None, false).unwrap();
            assert_eq!(encoding.ids, ids, "{scheme} {split} {text:?}");
            assert_eq!(encoding.offsets, offsets, "{scheme} {split} {text:?}");
            assert_eq!(
                tok.decode(ids).unwrap(),
                decoded,
                "{scheme} {split} {text:?}"
            );
            count += 1;
        }
        assert_eq!(count, 4, "{scheme} {split}");
    }
}
