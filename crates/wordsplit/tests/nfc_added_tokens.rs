//! A tokenizer.json under HF's NFC normalizer with `normalized` added tokens of any text, read
//! and run by the Rust core alone: such a token matches wherever the text's NFC form holds its
//! content's NFC form (precomposed or not, as HF matches it, and as the Python package's
//! tests check against HF tokenizers), and two tokens that NFC makes the same text are refused
//! (HF would match one or the other at random).

#[path = "support/hf_json.rs"]
mod hf_json;

use hf_json::byte_char;
use serde_json::{json, Value};
use wordsplit::formats::{read_hf_tokenizer_json, FormatError};
use wordsplit::Tokenizer;

fn added(id: u64, content: &str) -> Value {
    json!({"id": id, "content": content, "special": false, "lstrip": false, "rstrip": false,
           "single_word": false, "normalized": true})
}

/// The 256 bytes (id = byte) and "ca" (256), NFC, ByteLevel, with these added tokens.
fn spec(added_tokens: Value) -> Value {
    let mut vocab = serde_json::Map::new();
    for b in 0..=255u8 {
        vocab.insert(byte_char(b).to_string(), json!(b));
    }
    vocab.insert("ca".into(), json!(256));
    json!({
        "added_tokens": added_tokens,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": ["c a"]},
    })
}

#[test]
fn normalized_tokens_match_the_texts_nfc_makes_them() {
    let file = spec(json!([added(257, "cafe\u{301}"), added(258, "na\u{ef}ve")]));
    let vocab = read_hf_tokenizer_json(file.to_string().as_bytes()).unwrap();
    let tok = Tokenizer::from_vocab(vocab).unwrap();
    let ids = |text: &str| tok.encode(text).unwrap();
    for cafe in ["caf\u{e9}", "cafe\u{301}"] {
        let text = format!("a {cafe} b");
        let expected = [ids("a "), vec![257], ids(" b")].concat();
        assert_eq!(ids(&text), expected, "{text:?}");
    }
    for naive in ["na\u{ef}ve", "nai\u{308}ve"] {
        assert_eq!(ids(naive), [258], "{naive:?}");
    }
    // Not the token: "cafe" alone, or a mark NFC does not compose with it.
    assert!(!ids("a cafe b").contains(&257));
    assert!(!ids("cafe\u{300}").contains(&257));
}

#[test]
fn two_tokens_nfc_makes_the_same_text_are_refused() {
    let file = spec(json!([added(257, "caf\u{e9}"), added(258, "cafe\u{301}")]));
    match read_hf_tokenizer_json(file.to_string().as_bytes()) {
        Err(FormatError::Unsupported { construct, .. }) => {
            assert!(construct.contains("NFC makes the same text"), "{construct}")
        }
        other => panic!("{other:?}"),
    }
}
