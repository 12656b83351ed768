//! The Rust reader of word-model tokenizer.json files (WordPiece, WordLevel) on small files
//! made here: what it reads into the pipeline, and each malformed entry or construct the core
//! does not run refused with a typed error that says where (the Python package's loader
//! refuses the same malformed files, `tests/test_wordpiece.py`).

#[path = "support/hf_json.rs"]
mod hf_json;

use hf_json::{read, with};
use serde_json::{json, Value};
use wordsplit::formats::{read_hf_tokenizer_json, FormatError};
use wordsplit::spec::{DecoderSpec, ModelSpec, NormalizerSpec, PostProcessorSpec};
use wordsplit::{Error, Tokenizer};

/// A small BERT-style file: `[UNK]`, `[CLS]`, `[SEP]`, a few words and continuations.
fn spec() -> Value {
    json!({
        "added_tokens": [
            {"id": 0, "content": "[UNK]", "special": true, "normalized": false},
            {"id": 1, "content": "[CLS]", "special": true, "normalized": false},
            {"id": 2, "content": "[SEP]", "special": true, "normalized": false},
        ],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "world": 4, "un": 5,
                            "##able": 6, "!": 7, ",": 8, "cafe": 9}},
    })
}

#[test]
fn a_bert_file_reads_into_its_pipeline_and_runs() {
    let vocab = read(&spec()).unwrap();
    assert_eq!((vocab.tokens.len(), vocab.n_vocab), (10, 10));
    let pipeline = vocab.pipeline.clone().unwrap();
    assert_eq!(
        pipeline.normalizer,
        NormalizerSpec::BertNormalizer {
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents: true,
            lowercase: true
        }
    );
    assert_eq!(
        pipeline.decoder,
        DecoderSpec::WordPiece {
            prefix: "##".into(),
            cleanup: true
        }
    );
    assert!(matches!(
        pipeline.post_processor,
        PostProcessorSpec::BertProcessing { cls_id: 1, .. }
    ));
    let tok = Tokenizer::from_vocab(vocab).unwrap();
    assert_eq!(
        tok.encode("Hello, Café unable!").unwrap(),
        [3, 8, 9, 5, 6, 7]
    );
    assert_eq!(tok.encoding("hello", None, true).unwrap().ids, [1, 3, 2]);
    assert_eq!(
        tok.decode(&[1, 3, 8, 5, 6, 7, 2]).unwrap(),
        "[CLS] hello, unable! [SEP]"
    );
    // A word no token spells is the unknown token; without one in the vocab, an error.
    assert_eq!(tok.encode("xyz").unwrap(), [0]);
    let mut no_unk = spec();
    no_unk["model"]["unk_token"] = json!("<unk>");
    let tok = Tokenizer::from_vocab(read(&no_unk).unwrap()).unwrap();
    assert!(matches!(
        tok.encode("xyz"),
        Err(Error::MissingUnknownToken { .. })
    ));
}

#[test]
fn a_model_without_a_type_is_read_as_hf_reads_it() {
    let mut wordpiece = spec();
    wordpiece["model"].as_object_mut().unwrap().remove("type");
    let vocab = read(&wordpiece).unwrap();
    assert!(matches!(
        vocab.pipeline.unwrap().model,
        ModelSpec::WordPiece { .. }
    ));
    let level = json!({"model": {"vocab": {"<unk>": 0, "a": 1}, "unk_token": "<unk>"},
                       "pre_tokenizer": {"type": "WhitespaceSplit"}});
    let vocab = read(&level).unwrap();
    assert_eq!(
        vocab.pipeline.clone().unwrap().model,
        ModelSpec::WordLevel {
            unk_token: "<unk>".into()
        }
    );
    let tok = Tokenizer::from_vocab(vocab).unwrap();
    assert_eq!(tok.encode(" a b\ta").unwrap(), [1, 0, 1]);
    assert_eq!(tok.decode(&[1, 0, 1]).unwrap(), "a <unk> a");
}

fn malformed(at_part: &str, spec: &Value) {
    match read(spec) {
        Err(FormatError::Malformed { at, .. }) if at.contains(at_part) => {}
        Err(FormatError::DuplicateId { .. }) if at_part == "duplicate" => {}
        other => panic!("{at_part}: {other:?}"),
    }
}

fn unsupported(construct_part: &str, spec: &Value) {
    match read(spec) {
        Err(FormatError::Unsupported { construct, .. }) if construct.contains(construct_part) => {}
        other => panic!("{construct_part}: {other:?}"),
    }
}

#[test]
fn malformed_entries_are_refused_where_they_are() {
    let cases = [
        ("model.vocab", with(spec(), &["model", "vocab"], json!({}))),
        (
            "model.vocab[\"a\"]",
            with(spec(), &["model", "vocab"], json!({"a": "0"})),
        ),
        (
            "duplicate",
            with(spec(), &["model", "vocab"], json!({"a": 0, "b": 0})),
        ),
        (
            "model",
            with(spec(), &["model", "max_input_chars_per_word"], json!(-1)),
        ),
        (
            "model",
            with(spec(), &["model", "continuing_subword_prefix"], json!(3)),
        ),
        (
            "model.unk_token",
            with(spec(), &["model", "unk_token"], json!(null)),
        ),
        (
            "decoder",
            with(spec(), &["decoder", "cleanup"], json!("yes")),
        ),
        (
            "normalizer",
            with(spec(), &["normalizer", "lowercase"], json!(1)),
        ),
        (
            "normalizer.normalizers[0]",
            with(
                spec(),
                &["normalizer"],
                json!({"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": 1}]}),
            ),
        ),
        ("pre_tokenizer", with(spec(), &["pre_tokenizer"], json!(5))),
        (
            "post_processor.sep",
            with(spec(), &["post_processor", "sep"], json!(["[SEP]"])),
        ),
        (
            "post_processor.single[0]",
            with(
                spec(),
                &["post_processor"],
                json!({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}],
                       "pair": [], "special_tokens": {}}),
            ),
        ),
        // A template must hold its texts (the pipeline's own check).
        (
            "post_processor",
            with(
                spec(),
                &["post_processor"],
                json!({"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {}}),
            ),
        ),
    ];
    for (at, spec) in &cases {
        malformed(at, spec);
    }
}

#[test]
fn what_the_core_does_not_run_is_unsupported_and_named() {
    let normalized =
        |content: &str, id: u64| json!({"id": id, "content": content, "special": false});
    let cases = [
        (
            "ByteLevel pre-tokenizer before a WordPiece",
            with(spec(), &["pre_tokenizer"], json!({"type": "ByteLevel"})),
        ),
        (
            "Metaspace pre-tokenizer",
            with(spec(), &["pre_tokenizer"], json!({"type": "Metaspace"})),
        ),
        (
            "split program",
            with(spec(), &["pre_tokenizer"], json!({"type": "Digits"})),
        ),
        (
            "pre_tokenizer \"UnicodeScripts\"",
            with(
                spec(),
                &["pre_tokenizer"],
                json!({"type": "UnicodeScripts"}),
            ),
        ),
        (
            "decoder \"ByteLevel\"",
            with(spec(), &["decoder"], json!({"type": "ByteLevel"})),
        ),
        (
            "normalizer Sequence [Replace]",
            with(
                spec(),
                &["normalizer"],
                json!({"type": "Replace", "pattern": {"Regex": "\\d+"}, "content": " "}),
            ),
        ),
        (
            "normalizer Sequence [NFD, Prepend]",
            with(
                spec(),
                &["normalizer"],
                json!({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Prepend", "prepend": "_"}]}),
            ),
        ),
        (
            "post_processor \"Other\"",
            with(spec(), &["post_processor"], json!({"type": "Other"})),
        ),
        (
            "after one that adds tokens",
            with(
                spec(),
                &["post_processor"],
                json!({"type": "Sequence", "processors": [
                    {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
                    {"type": "ByteLevel"}]}),
            ),
        ),
        // Two normalized added tokens the lowercasing normalizer makes the same.
        (
            "the same",
            with(
                spec(),
                &["added_tokens"],
                json!([normalized("<A>", 10), normalized("<a>", 11)]),
            ),
        ),
        (
            "makes empty",
            with(spec(), &["added_tokens"], json!([normalized("\u{0}", 10)])),
        ),
    ];
    for (construct, spec) in &cases {
        unsupported(construct, spec);
    }
}

#[test]
fn broken_word_model_files_give_an_answer_never_a_panic() {
    let text = spec().to_string().into_bytes();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        let mut data = text.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % data.len() as u64) as usize;
            let alphabet = b"{}[]\",:0-9ae \\";
            data[at] = alphabet[(state >> 32) as usize % alphabet.len()];
        }
        if let Ok(vocab) = read_hf_tokenizer_json(&data) {
            if let Ok(tok) = Tokenizer::from_vocab(vocab) {
                let _ = tok.encode("Hello, world! unable");
                let _ = tok.decode(&[0, 1, 2, 3]);
            }
        }
    }
}
