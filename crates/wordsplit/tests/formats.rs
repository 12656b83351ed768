//! The Rust vocabulary readers against the Python loaders, on every real vocabulary file of the
//! repository: `tests/data/formats/digests.json` holds what the Python loaders make of each
//! (written by `tools/gen_format_digests.py`; a pytest fails when it is stale), and each case is
//! read here with the Rust reader and digested the same way (a WordPiece, WordLevel, CharacterBpe
//! or Unigram file with its pipeline's text, which both languages write alike, and a Unigram model's
//! scores).

mod support;

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use wordsplit::formats::{
    load_derived, load_hf_tokenizer_json, load_sentencepiece_unigram, load_tiktoken,
    load_vocab_merges, read_file, read_named, with_tokenizer_config, FormatError, TiktokenFacts,
    VocabData,
};
use wordsplit::spec::PipelineSpec;
use wordsplit::{Literal, NormalizeStage};

fn hex(digest: impl AsRef<[u8]>) -> String {
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn literal_digest<'a>(literals: impl Iterator<Item = &'a Literal>) -> Value {
    let mut hash = Sha256::new();
    let mut count = 0;
    for literal in literals {
        hash.update(literal.id.to_le_bytes());
        hash.update((literal.text.len() as u32).to_le_bytes());
        hash.update(literal.text.as_bytes());
        count += 1;
    }
    json!({"count": count, "sha256": hex(hash.finalize())})
}

/// The digest `tools/gen_format_digests.py` makes of a Python Vocab, of a [`VocabData`].
fn digest(vocab: &VocabData) -> Value {
    let mut tokens: Vec<&(Vec<u8>, u32)> = vocab.tokens.iter().collect();
    tokens.sort_by_key(|(_, id)| *id);
    let mut hash = Sha256::new();
    for (piece, id) in tokens {
        hash.update(id.to_le_bytes());
        hash.update((piece.len() as u32).to_le_bytes());
        hash.update(piece);
    }
    let merges = vocab.merges.as_ref().map(|merges| {
        let mut sorted = merges.clone();
        sorted.sort_unstable();
        let mut hash = Sha256::new();
        for (left, right, rank) in sorted {
            hash.update(left.to_le_bytes());
            hash.update(right.to_le_bytes());
            hash.update(rank.to_le_bytes());
        }
        json!({"count": merges.len(), "sha256": hex(hash.finalize())})
    });
    let mut flags: Vec<(&str, u8)> = vocab
        .literals
        .iter()
        .filter(|lit| lit.flags != 0)
        .map(|lit| (lit.text.as_str(), lit.flags))
        .collect();
    flags.sort_unstable();
    flags.dedup();
    let flags: serde_json::Map<String, Value> = flags
        .into_iter()
        .map(|(t, b)| (t.to_string(), json!(b)))
        .collect();
    let mut digest = json!({
        "name": vocab.name,
        "pattern": vocab.pattern,
        "normalizer": vocab.normalizer.name(),
        "n_vocab": vocab.n_vocab,
        "n_tokens": vocab.tokens.len(),
        "tokens_sha256": hex(hash.finalize()),
        "special_tokens": literal_digest(vocab.literals.iter().filter(|lit| lit.special)),
        "added_tokens": literal_digest(vocab.literals.iter().filter(|lit| !lit.special)),
        "literal_flags": flags,
        "merges": merges,
        "whole_piece_lookup": vocab.whole_piece_lookup,
        "eos_token_id": vocab.eos_token_id,
        "bos_token_id": vocab.bos_token_id,
        "unk_token_id": vocab.unk_token_id,
        "fuse_unk": vocab.fuse_unk,
        "chat_template_sha256": vocab.chat_template.as_ref().map(|t| hex(Sha256::digest(t.as_bytes()))),
    });
    // A word model, HF's BPE over characters, Unigram: its pipeline's text, which holds the pattern's and normalizer's stages.
    if let Some(pipeline) = &vocab.pipeline {
        let fields = digest.as_object_mut().unwrap();
        fields.remove("pattern");
        fields.remove("normalizer");
        fields.insert("pipeline".into(), json!(pipeline.to_text()));
    }
    if let Some(scores) = &vocab.scores {
        let mut hash = Sha256::new();
        for score in &scores.0 {
            hash.update(score.to_le_bytes());
        }
        let fields = digest.as_object_mut().unwrap();
        fields.insert("scores_sha256".into(), json!(hex(hash.finalize())));
    }
    digest
}

/// The Rust reader's vocabulary of a case's input.
fn read_case(root: &Path, case: &Value) -> Result<VocabData, FormatError> {
    let input = root.join(case["input"].as_str().expect("input"));
    match case["reader"].as_str().expect("reader") {
        "tiktoken" => load_tiktoken(&input, &TiktokenFacts::default()),
        "named" => read_named(
            case["name"].as_str().expect("name"),
            &read_file(&input).expect("readable"),
        ),
        "tokenizer.json" => {
            load_hf_tokenizer_json(&input).and_then(|vocab| match case["config"].as_str() {
                Some(config) => with_tokenizer_config(vocab, &read_file(&root.join(config))?),
                None => Ok(vocab),
            })
        }
        "vocab.json" => {
            let config = case["config"].as_str().map(|config| root.join(config));
            load_vocab_merges(
                &input,
                root.join(case["merges"].as_str().expect("merges")),
                config.as_deref(),
            )
        }
        "derived" => load_derived(&input),
        "word model" | "character bpe" => load_hf_tokenizer_json(&input),
        "unigram" if input.to_string_lossy().ends_with(".model.gz") => {
            load_sentencepiece_unigram(&input)
        }
        "unigram" => {
            load_hf_tokenizer_json(&input).and_then(|vocab| match case["config"].as_str() {
                Some(config) => with_tokenizer_config(vocab, &read_file(&root.join(config))?),
                None => Ok(vocab),
            })
        }
        other => panic!("unknown reader {other}"),
    }
}

/// Reads every case of `reader` and compares its digest with the Python loader's.
fn check_reader(reader: &str) {
    let root = support::repo_root();
    let digests: Value = serde_json::from_slice(
        &std::fs::read(root.join("tests/data/formats/digests.json")).unwrap(),
    )
    .unwrap();
    let cases: Vec<&Value> = digests["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["reader"] == reader)
        .collect();
    assert!(!cases.is_empty(), "no {reader} cases in digests.json");
    let (n_cases, mut refused) = (cases.len(), 0);
    let mut mismatches = Vec::new();
    for case in cases {
        let got = match read_case(&root, case) {
            // The Rust reader refuses a Unigram file whose pipeline (the Python package's) has a
            // normalizer the core does not run, and no other.
            Err(FormatError::Unsupported { construct, .. }) if reader == "unigram" => {
                let text = case["expected"]["pipeline"].as_str().expect("pipeline");
                let pipeline = PipelineSpec::from_text(text).unwrap();
                assert!(
                    NormalizeStage::from_spec(&pipeline.normalizer).is_none(),
                    "{}: refused ({construct}), yet the core runs its normalizer",
                    case["input"]
                );
                refused += 1;
                continue;
            }
            other => digest(&other.unwrap_or_else(|e| panic!("{}: {e}", case["input"]))),
        };
        let expected = case["expected"].as_object().expect("expected");
        for (key, value) in expected {
            if got[key] != *value {
                mismatches.push(format!(
                    "{}: {key} is {} (Python: {value})",
                    case["input"], got[key]
                ));
            }
        }
        assert_eq!(
            got.as_object().unwrap().len(),
            expected.len(),
            "the same fields"
        );
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(refused < n_cases, "every {reader} case refused");
}

#[test]
fn rank_files_read_as_the_python_loader_reads_them() {
    check_reader("tiktoken");
}

#[test]
fn registered_names_read_as_the_python_package_loads_them() {
    check_reader("named");
}

#[test]
fn tokenizer_json_files_read_as_the_python_loader_reads_them() {
    check_reader("tokenizer.json");
}

#[test]
fn vocab_json_and_merges_txt_read_as_the_python_loader_reads_them() {
    check_reader("vocab.json");
}

#[test]
fn word_model_tokenizer_json_files_read_as_the_python_loader_reads_them() {
    check_reader("word model");
}

#[test]
fn character_bpe_tokenizer_json_files_read_as_the_python_loader_reads_them() {
    check_reader("character bpe");
}

#[test]
fn unigram_files_read_as_the_python_loader_reads_them() {
    check_reader("unigram");
}

#[test]
fn derived_entries_read_as_the_python_reader_reads_them() {
    check_reader("derived");
}
