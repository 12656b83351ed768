//! The Rust core alone gives the official tokenizers' ids: every bundled vocabulary, read by
//! `formats::read_named` from its rank file and run by `Tokenizer`, against the golden ids
//! that tiktoken and HF tokenizers made (the repository's tests/golden/, which the Python suite
//! reads too; the crate's tests/data/golden/ holds those this test reads).

mod support;

use serde_json::Value;
use wordsplit::formats::{read_file, read_named};
use wordsplit::{Error, Tokenizer};

fn tokenizer(name: &str) -> Tokenizer {
    let ranks = read_file(&support::rank_file(name)).unwrap();
    Tokenizer::from_vocab(read_named(name, &ranks).unwrap()).unwrap()
}

fn golden(file: &str) -> Value {
    let bytes = read_file(&support::test_file("golden").join(file)).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn ids(case: &Value) -> Vec<u32> {
    let ids = case["ids"].as_array().unwrap();
    ids.iter().map(|id| id.as_u64().unwrap() as u32).collect()
}

/// Every case of `cases` encodes to its ids with `encode`, and decodes back to its text
/// where the ids spell it.
fn check(name: &str, cases: &Value, encode: impl Fn(&str) -> Result<Vec<u32>, Error>) -> usize {
    let cases = cases.as_array().unwrap();
    for case in cases {
        let text = case["text"].as_str().unwrap();
        assert_eq!(encode(text).unwrap(), ids(case), "{name}: {text:?}");
    }
    cases.len()
}

#[test]
fn tiktoken_goldens() {
    for name in [
        "cl100k_base",
        "o200k_base",
        "o200k_harmony",
        "r50k_base",
        "gpt2",
        "p50k_base",
        "p50k_edit",
    ] {
        let file = golden(&format!("tiktoken-{name}.json.gz"));
        let tok = tokenizer(name);
        assert_eq!(tok.n_vocab() as u64, file["n_vocab"].as_u64().unwrap());
        let n = check(name, &file["cases"], |t| tok.encode_ordinary(t));
        let m = check(name, &file["special_cases"], |t| {
            tok.encode_with_special_tokens(t)
        });
        assert!(n > 100 && m > 0, "{name}: {n} cases, {m} special cases");
        for case in file["cases"].as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            assert_eq!(tok.decode_bytes(&ids(case)).unwrap(), text.as_bytes());
        }
    }
}

#[test]
fn qwen3_golden() {
    // HF matches every added token in text, special ones too: allow them all.
    let file = golden("qwen3-tokenizers.json.gz");
    let tok = tokenizer("qwen3");
    let n = check("qwen3", &file["cases"], |t| {
        tok.encode_with_special_tokens(t)
    });
    assert!(n > 100, "{n} cases");
}

#[test]
fn special_token_text_is_refused_by_encode_and_plain_text_by_encode_ordinary() {
    let tok = tokenizer("cl100k_base");
    let error = tok.encode("hi<|endoftext|>").unwrap_err();
    assert!(matches!(error, Error::DisallowedSpecial(ref t) if t == "<|endoftext|>"));
    assert_eq!(
        tok.encode_with_special_tokens("hi<|endoftext|>").unwrap(),
        [6151, 100257]
    );
    assert_eq!(tok.encode_ordinary("<|endoftext|>").unwrap().len(), 7);
    assert_eq!(tok.count("hello world").unwrap(), 2);
    assert_eq!(tok.token_to_id(b"<|endoftext|>"), Some(100257));
    assert_eq!(tok.token_to_id(b"hello"), Some(15339));
    assert_eq!(tok.id_to_token(15339), Some(&b"hello"[..]));
    let specials: Vec<_> = tok.special_tokens().map(|(text, _)| text).collect();
    assert!(specials.contains(&"<|endofprompt|>"));
    assert_eq!(tok.eos_token_id(), Some(100257));
    assert!(matches!(
        tok.decode(&[u32::MAX]),
        Err(Error::UnknownId(u32::MAX))
    ));
    // An invalid UTF-8 sequence decodes as U+FFFD, as tiktoken's decode does.
    assert_eq!(
        tok.decode(&[tok.token_to_id(&[0xE2]).unwrap()]).unwrap(),
        "\u{FFFD}"
    );
}

#[test]
fn qwen3_added_tokens_always_match_and_text_is_nfc() {
    let tok = tokenizer("qwen3");
    let think = tok.token_to_id(b"<think>").unwrap();
    // A non-special added token is matched by every encode method, as HF does.
    assert_eq!(tok.encode("<think>").unwrap(), [think]);
    assert_eq!(tok.encode_ordinary("<think>").unwrap(), [think]);
    // NFC: "e" + U+0301 is "é".
    assert_eq!(tok.encode("e\u{301}").unwrap(), tok.encode("é").unwrap());
}
