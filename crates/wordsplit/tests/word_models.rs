//! The Rust core alone runs HF's word-model tokenizer.json files (WordPiece: BERT, all-MiniLM,
//! the multilingual and Chinese BERTs; WordLevel; HF's BPE over characters) as HF tokenizers 0.23.3 does: every file of
//! tests/data/wordpiece/ read by `formats::load_hf_tokenizer_json` and run by `Tokenizer`,
//! against the goldens HF made of it (the `wordpiece-` and `wordlevel-` files of tests/golden/,
//! written by tools/gen_family_goldens.py; the Python suite checks the same files): the ids, the ids with
//! special tokens, their type ids and offsets, for single texts and pairs, and the decoded
//! text with and without the special tokens; and the folder's files of HF's BPE over
//! characters (CharacterBpe: CLIP's, tokenizer-wiki's, Tortoise's) against their `bpe-`
//! goldens, the same way.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::repo_root;
use wordsplit::formats::{load_hf_tokenizer_json, read_file};
use wordsplit::Tokenizer;

/// Each tokenizer.json of tests/data/wordpiece/ and the golden HF made of it.
fn files() -> Vec<(PathBuf, Value)> {
    let root = repo_root();
    let mut out = Vec::new();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root.join("tests/data/wordpiece"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let path = ["tokenizer.json.gz", "tokenizer.json"]
            .iter()
            .map(|file| folder.join(file))
            .find(|path| path.is_file())
            .unwrap_or_else(|| panic!("{name}: no tokenizer.json"));
        let golden = ["wordpiece", "wordlevel", "bpe"]
            .iter()
            .map(|family| root.join(format!("tests/golden/{family}-{name}.json.gz")))
            .find(|path| path.is_file())
            .unwrap_or_else(|| panic!("{name}: no golden"));
        let golden = serde_json::from_slice(&read_file(&golden).unwrap()).unwrap();
        out.push((path, golden));
    }
    assert!(out.len() >= 9, "{} files", out.len());
    out
}

fn ids(value: &Value) -> Vec<u32> {
    let ids = value.as_array().unwrap();
    ids.iter().map(|id| id.as_u64().unwrap() as u32).collect()
}

fn offsets(value: &Value) -> Vec<(usize, usize)> {
    let offsets = value.as_array().unwrap();
    offsets
        .iter()
        .map(|pair| {
            let pair = ids(pair);
            (pair[0] as usize, pair[1] as usize)
        })
        .collect()
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap()
}

/// The encoding (`ids`, `type_ids`, `offsets`, `decoded`, `decoded_skip_special`) HF gave.
fn check_encoding(tok: &Tokenizer, a: &str, b: Option<&str>, expected: &Value) {
    let got = tok.encoding(a, b, true).unwrap();
    let what = format!("{}: {a:?} {b:?}", tok.name());
    assert_eq!(got.ids, ids(&expected["ids"]), "{what}");
    assert_eq!(got.type_ids, ids(&expected["type_ids"]), "{what}");
    assert_eq!(got.offsets, offsets(&expected["offsets"]), "{what}");
    assert_eq!(
        tok.decode(&got.ids).unwrap(),
        text(&expected["decoded"]),
        "{what}"
    );
    assert_eq!(
        tok.decode_skipping_special(&got.ids).unwrap(),
        text(&expected["decoded_skip_special"]),
        "{what}"
    );
}

/// Every file of `models` checked against its golden: the ids with and without special
/// tokens, type ids and offsets, for single texts and pairs, and the decoded text with and
/// without the special tokens. Returns how many files were checked.
fn check_files(models: &[&str]) -> usize {
    let mut checked = 0;
    for (path, golden) in files() {
        let model = text(&golden["model"]);
        if !models.contains(&model) {
            continue;
        }
        let vocab = load_hf_tokenizer_json(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let tok = Tokenizer::from_vocab(vocab).unwrap();
        // (HF's BPE over characters is the CharacterBpe model here)
        let kind = if model == "BPE" {
            "CharacterBpe"
        } else {
            model
        };
        assert_eq!(tok.model().kind(), kind);
        assert_eq!(tok.n_vocab() as u64, golden["n_vocab"].as_u64().unwrap());
        let cases = golden["cases"].as_array().unwrap();
        assert!(cases.len() > 1000, "{} cases", cases.len());
        for case in cases {
            let text = text(&case["text"]);
            // HF matches special tokens in the text too.
            assert_eq!(
                tok.encode_with_special_tokens(text).unwrap(),
                ids(&case["ids"]),
                "{}: {text:?}",
                tok.name()
            );
            let plain = tok.encoding(text, None, false).unwrap();
            assert_eq!(plain.ids, ids(&case["ids"]), "{}: {text:?}", tok.name());
            assert_eq!(
                tok.decode(&plain.ids).unwrap(),
                self::text(&case["decoded"]),
                "{}: {text:?}",
                tok.name()
            );
            check_encoding(&tok, text, None, &case["with_specials"]);
        }
        for case in golden["pair_cases"].as_array().unwrap() {
            check_encoding(&tok, text(&case["text"]), Some(text(&case["pair"])), case);
        }
        for case in golden["decode_cases"].as_array().unwrap() {
            let ids = ids(&case["ids"]);
            assert_eq!(tok.decode(&ids).unwrap(), text(&case["decoded"]), "{ids:?}");
            assert_eq!(
                tok.decode_skipping_special(&ids).unwrap(),
                text(&case["decoded_skip_special"]),
                "{ids:?}"
            );
        }
        checked += 1;
    }
    checked
}

#[test]
fn word_model_files_give_hfs_ids_offsets_and_text() {
    assert_eq!(
        check_files(&["WordPiece", "WordLevel"]),
        6,
        "the WordPiece and WordLevel files"
    );
}

#[test]
fn character_bpe_files_give_hfs_ids_offsets_and_text() {
    // CLIP's (its `</w>` suffix over bytes), tokenizer-wiki's and Tortoise's (over characters)
    assert_eq!(check_files(&["BPE"]), 3, "HF's BPE over characters");
}

#[test]
fn a_megabyte_word_or_run_stays_linear() {
    for folder in ["all-MiniLM-L6-v2", "bert-wiki"] {
        let path = repo_root().join(format!("tests/data/wordpiece/{folder}/tokenizer.json.gz"));
        let tok = Tokenizer::from_vocab(load_hf_tokenizer_json(&path).unwrap()).unwrap();
        for text in [
            "a".repeat(1 << 20),
            "!".repeat(1 << 20),
            "ab ".repeat(1 << 18),
            "中".repeat(1 << 18),
            "É".repeat(1 << 18),
        ] {
            let start = std::time::Instant::now();
            let ids = tok.encode(&text).unwrap();
            let encoding = tok.encoding(&text, None, true).unwrap();
            let decoded = tok.decode(&ids).unwrap();
            let seconds = start.elapsed().as_secs_f64();
            assert!(seconds < 30.0, "{folder} {:?}: {seconds:.1} s", &text[..3]);
            assert_eq!(encoding.ids[1..encoding.ids.len() - 1], ids[..]);
            assert!(!decoded.is_empty());
        }
    }
}
