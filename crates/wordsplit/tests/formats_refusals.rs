//! Every refusal of the Rust vocabulary readers, on small inputs made here, and a loop over
//! truncated and corrupted inputs that asserts an answer (a vocabulary or an error), never a
//! panic. The Python loaders refuse each malformed input here too, with the matching kind
//! (`VocabFormatError` for [`FormatError::Malformed`], `UnsupportedTokenizerError` for
//! [`FormatError::Unsupported`]); what Python accepts and these readers call unsupported is
//! what the Python package runs as a split program or a normalizer program (or NFD and NFKC).

#[path = "support/hf_json.rs"]
mod hf_json;
mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use hf_json::{byte_char, read};
use serde_json::{json, Value};
use wordsplit::formats::derived::checksum;
use wordsplit::formats::{
    read_derived, read_file, read_hf_tokenizer_json, read_named, read_tiktoken,
    read_tiktoken_ranks, read_vocab_merges, with_tokenizer_config, FileKind, FormatError,
    TiktokenFacts, VocabData,
};
use wordsplit::NormalizeStage;

// ------------------------------------------------------------------------------------------
// tiktoken rank files

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// A rank file of the 256 single bytes (rank = byte) and `extra` lines.
fn rank_file(extra: &str) -> Vec<u8> {
    let mut text: String = (0..=255u8)
        .map(|b| format!("{} {b}\n", base64(&[b])))
        .collect();
    text.push_str(extra);
    text.into_bytes()
}

fn with_pattern() -> TiktokenFacts {
    TiktokenFacts {
        pattern: Some(r"\S+|\s+".into()),
        ..TiktokenFacts::default()
    }
}

#[test]
fn a_rank_file_with_its_facts_reads() {
    let facts = TiktokenFacts {
        special_tokens: Some(vec![
            ("<|end|>".into(), 257),
            ("<|end|>".into(), 258),
            ("<|x|>".into(), 259),
        ]),
        added_tokens: Some(vec![("<think>".into(), 260)]),
        eos_token: Some("<|end|>".into()),
        n_vocab: Some(300),
        name: Some("mine".into()),
        ..with_pattern()
    };
    let vocab = read_tiktoken(&rank_file(&format!("{} 256\n", base64(b"ab"))), &facts).unwrap();
    assert_eq!(
        (vocab.name.as_str(), vocab.n_vocab, vocab.tokens.len()),
        ("mine", 300, 257)
    );
    // A text listed twice keeps its first place and its last id, as a Python dict does.
    let literals: Vec<(&str, u32, bool)> = vocab
        .literals
        .iter()
        .map(|l| (l.text.as_str(), l.id, l.special))
        .collect();
    assert_eq!(
        literals,
        [
            ("<|end|>", 258, true),
            ("<|x|>", 259, true),
            ("<think>", 260, false)
        ]
    );
    assert_eq!(vocab.eos_token_id, Some(258));
    assert_eq!(vocab.normalizer, NormalizeStage::None);
}

#[test]
fn rank_lines_that_are_not_base64_and_rank_are_refused_with_their_line() {
    for (extra, line) in [
        ("YWI=\n", 257),
        ("YWI= 256 7\n", 257),
        ("Y 256\n", 257),
        ("YWI= x\n", 257),
        ("\n\nYWI= 1.5", 259),
    ] {
        match read_tiktoken_ranks(&rank_file(extra)) {
            Err(FormatError::BadRankLine { line: got, .. }) => assert_eq!(got, line, "{extra:?}"),
            other => panic!("{extra:?}: {other:?}"),
        }
    }
    let message = read_tiktoken_ranks(b"YQ== 0\nnot a line\n")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("line 2") && message.contains("not a line"),
        "{message}"
    );
}

#[test]
fn a_sentencepiece_model_is_named() {
    let model = b"\x0a\x05\x0a\x01a\x00\x00junk";
    assert_eq!(read_tiktoken_ranks(model), Err(FormatError::SentencePiece));
}

#[test]
fn a_token_listed_twice_is_refused() {
    match read_tiktoken_ranks(&rank_file("YQ== 256\n")) {
        Err(FormatError::DuplicateToken {
            file: FileKind::Tiktoken,
            at,
            token,
            ids,
        }) => {
            assert_eq!(
                (at.as_str(), token.as_slice(), ids),
                ("line 257", &b"a"[..], (97, 256))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn ranks_out_of_range_are_refused() {
    for extra in [
        "YWI= -1\n",
        "YWI= 99999999999999999999999\n",
        "YWI= 66050\n",
    ] {
        assert!(
            matches!(
                read_tiktoken_ranks(&rank_file(extra)),
                Err(FormatError::IdOutOfRange { .. })
            ),
            "{extra:?}"
        );
    }
    // 257 lines: ranks stay below 2 x 257 + 65536.
    assert!(read_tiktoken_ranks(&rank_file("YWI= 66049")).is_ok());
}

#[test]
fn an_id_used_twice_is_refused() {
    let err = read_tiktoken(&rank_file("YWI= 97\n"), &with_pattern()).unwrap_err();
    assert!(
        matches!(err, FormatError::DuplicateId { id: 97, .. }),
        "{err:?}"
    );
    // A special token may share an id with a BPE token or with another special token, an
    // added token with neither.
    let special = |pairs: &[(&str, u32)]| {
        pairs
            .iter()
            .map(|(t, i)| (t.to_string(), *i))
            .collect::<Vec<_>>()
    };
    let facts = TiktokenFacts {
        special_tokens: Some(special(&[("<a>", 97), ("<b>", 300), ("<c>", 300)])),
        ..with_pattern()
    };
    assert!(read_tiktoken(&rank_file(""), &facts).is_ok());
    let facts = TiktokenFacts {
        added_tokens: Some(special(&[("<d>", 300)])),
        ..facts
    };
    assert!(matches!(
        read_tiktoken(&rank_file(""), &facts),
        Err(FormatError::DuplicateId { id: 300, .. })
    ));
    let facts = TiktokenFacts {
        special_tokens: Some(special(&[("", 300)])),
        ..with_pattern()
    };
    assert!(matches!(
        read_tiktoken(&rank_file(""), &facts),
        Err(FormatError::Malformed { .. })
    ));
}

#[test]
fn n_vocab_must_cover_the_ids_and_stay_near_them() {
    let facts = TiktokenFacts {
        n_vocab: Some(200),
        ..with_pattern()
    };
    assert!(matches!(
        read_tiktoken(&rank_file(""), &facts),
        Err(FormatError::Malformed { .. })
    ));
    let facts = TiktokenFacts {
        n_vocab: Some(2 * 256 + 65_537),
        ..with_pattern()
    };
    assert!(matches!(
        read_tiktoken(&rank_file(""), &facts),
        Err(FormatError::IdOutOfRange { .. })
    ));
    let facts = TiktokenFacts {
        special_tokens: Some(vec![("<x>".into(), 70_000)]),
        ..with_pattern()
    };
    assert!(matches!(
        read_tiktoken(&rank_file(""), &facts),
        Err(FormatError::IdOutOfRange { .. })
    ));
}

#[test]
fn an_unknown_rank_file_needs_a_pattern_and_an_empty_one_tokens() {
    match read_tiktoken(&rank_file(""), &TiktokenFacts::default()) {
        Err(err @ FormatError::PatternRequired { .. }) => {
            assert!(err.to_string().contains("pass the pattern"))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        read_tiktoken(b"\n\n", &with_pattern()),
        Err(FormatError::Malformed { .. })
    ));
    let deep = TiktokenFacts {
        pattern: Some("(".repeat(101) + &")".repeat(101)),
        ..TiktokenFacts::default()
    };
    assert!(matches!(
        read_tiktoken(&rank_file(""), &deep),
        Err(FormatError::Unsupported { .. })
    ));
}

#[test]
fn read_named_refuses_unknown_names_and_other_files() {
    assert!(matches!(
        read_named("cl100k", b""),
        Err(FormatError::UnknownName { .. })
    ));
    let err = read_named("gpt2", &rank_file("")).unwrap_err();
    assert!(
        matches!(&err, FormatError::WrongRankFile { name, .. } if name == "r50k_base"),
        "{err:?}"
    );
    assert!(err.to_string().contains("official file"));
}

// ------------------------------------------------------------------------------------------
// tokenizer.json

/// A tokenizer.json of the 256 bytes (id = byte), "ab" (256) and "abc" (257) made by two merges.
fn spec() -> Value {
    let mut vocab = serde_json::Map::new();
    for b in 0..=255u8 {
        vocab.insert(byte_char(b).to_string(), json!(b));
    }
    vocab.insert("ab".into(), json!(256));
    vocab.insert("abc".into(), json!(257));
    json!({
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "ab c"]},
    })
}

fn split(regex: &str, behavior: &str) -> Value {
    json!({"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": false})
}

fn byte_level(use_regex: bool) -> Value {
    json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": use_regex})
}

fn added(id: u64, content: &str, special: bool) -> Value {
    json!({"id": id, "content": content, "special": special, "lstrip": false, "rstrip": false,
           "single_word": false, "normalized": !special})
}

const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

#[test]
fn the_plain_layouts_read() {
    let vocab = read(&spec()).unwrap();
    assert_eq!(
        (
            vocab.n_vocab,
            vocab.merges.is_none(),
            vocab.whole_piece_lookup
        ),
        (258, true, true)
    );
    assert!(
        vocab.pattern.starts_with("'(?:[sdmt]|ll|ve|re)"),
        "GPT-2's pattern as tiktoken spells it"
    );

    let mut s = spec();
    s["pre_tokenizer"] = json!({"type": "Sequence", "pretokenizers": [byte_level(true)]});
    assert!(
        read(&s).unwrap().pattern.starts_with("'s|'t|'re"),
        "GPT-2's original spelling"
    );

    s["pre_tokenizer"] =
        json!({"type": "Sequence", "pretokenizers": [split(QWEN2, "Isolated"), byte_level(false)]});
    s["normalizer"] = json!({"type": "Sequence", "normalizers": [{"type": "Sequence", "normalizers": [{"type": "NFC"}]}]});
    s["model"]["merges"] = json!([["a", "b"], ["ab", "c"]]);
    let vocab = read(&s).unwrap();
    assert_eq!(
        (vocab.pattern.as_str(), vocab.normalizer),
        (QWEN2, NormalizeStage::Nfc)
    );

    s["normalizer"] = json!({"type": "Sequence", "normalizers": []});
    assert_eq!(read(&s).unwrap().normalizer, NormalizeStage::None);
}

#[test]
fn merges_out_of_merged_id_order_are_pair_ranked() {
    let mut s = spec();
    s["model"]["vocab"]["ab"] = json!(257);
    s["model"]["vocab"]["abc"] = json!(256);
    let vocab = read(&s).unwrap();
    assert_eq!(vocab.merges, Some(vec![(97, 98, 0), (257, 99, 1)]));
    assert!(!vocab.whole_piece_lookup);
    s["model"]["ignore_merges"] = json!(true);
    assert!(read(&s).unwrap().whole_piece_lookup);
    // A pair listed twice keeps its last rank, as HF's map.
    let mut s = spec();
    s["model"]["merges"] = json!(["a b", "ab c", "a b"]);
    assert_eq!(
        read(&s).unwrap().merges,
        Some(vec![(97, 98, 2), (256, 99, 1)])
    );
}

#[test]
fn added_tokens_get_hfs_ids_and_flags() {
    let mut s = spec();
    let mut think = added(999, "<think>", false);
    think["rstrip"] = json!(true);
    s["added_tokens"] = json!([
        added(5, "<|end|>", true),
        think,
        added(7, "ab", false),
        added(1, "<|end|>", true)
    ]);
    let vocab = read(&s).unwrap();
    let literals: Vec<(&str, u32, bool, u8)> = vocab
        .literals
        .iter()
        .map(|l| (l.text.as_str(), l.id, l.special, l.flags))
        .collect();
    // New contents get the next ids from the vocab's size; "ab" its vocab entry's id.
    assert_eq!(
        literals,
        [
            ("<|end|>", 258, true, 0),
            ("<think>", 259, false, 10),
            ("ab", 256, false, 8)
        ]
    );
    assert_eq!(vocab.n_vocab, 260);
}

#[test]
fn a_vocab_entry_only_an_added_token_reaches_is_left_out_of_the_bpe_tokens() {
    let mut s = spec();
    s["model"]["vocab"]["<|endoftext|>"] = json!(258);
    s["added_tokens"] = json!([added(258, "<|endoftext|>", true)]);
    let vocab = read(&s).unwrap();
    assert_eq!(
        vocab.tokens.len(),
        258,
        "GPT-2's <|endoftext|> is a special token only"
    );
    s["model"]["ignore_merges"] = json!(true);
    assert_eq!(
        read(&s).unwrap().tokens.len(),
        259,
        "with ignore_merges a whole piece can find it"
    );
}

#[test]
fn a_missing_byte_is_its_unk_token_or_dropped() {
    let mut s = spec();
    s["model"]["vocab"].as_object_mut().unwrap().remove("x");
    assert_eq!(read(&s).unwrap().unk_token_id, None);
    s["model"]["vocab"]["<unk>"] = json!(120);
    s["model"]["unk_token"] = json!("<unk>");
    s["model"]["fuse_unk"] = json!(1);
    let vocab = read(&s).unwrap();
    assert_eq!((vocab.unk_token_id, vocab.fuse_unk), (Some(120), true));
}

fn expect(spec: &Value, what: &str, check: impl Fn(&FormatError) -> bool) {
    match read(spec) {
        Err(err) => {
            assert!(check(&err), "{what}: {err:?}");
            let message = err.to_string();
            assert!(
                message.starts_with("tokenizer.json"),
                "{what}: the message names the file kind: {message}"
            );
        }
        Ok(vocab) => panic!("{what}: read as {:?}", vocab.pattern),
    }
}

fn unsupported(construct_part: &'static str) -> impl Fn(&FormatError) -> bool {
    move |err| matches!(err, FormatError::Unsupported { construct, .. } if construct.contains(construct_part))
}

fn malformed(at_part: &'static str) -> impl Fn(&FormatError) -> bool {
    move |err| matches!(err, FormatError::Malformed { at, .. } if at.contains(at_part))
}

#[test]
fn json_that_is_not_a_tokenizer_is_refused() {
    assert!(matches!(
        read_hf_tokenizer_json(b"{\"model\": "),
        Err(FormatError::Json { .. })
    ));
    expect(&json!([1]), "an array", malformed("top level"));
    expect(
        &json!({"model": "BPE"}),
        "a model that is not an object",
        malformed("top level"),
    );
    let mut s = spec();
    s["model"].as_object_mut().unwrap().remove("vocab");
    expect(&s, "no vocab", malformed("model.vocab"));
}

#[test]
fn other_models_and_bpe_options_are_unsupported() {
    for (key, value, what) in [
        // (a word model is read, and refuses the byte-level pre-tokenizer)
        (
            "type",
            json!("WordPiece"),
            "ByteLevel pre-tokenizer before a WordPiece",
        ),
        (
            "type",
            json!("WordLevel"),
            "ByteLevel pre-tokenizer before a WordLevel",
        ),
        // (a Unigram model is read, and refuses the byte-level pre-tokenizer)
        (
            "type",
            json!("Unigram"),
            "[\"ByteLevel\"] with a Unigram model",
        ),
        ("type", json!(null), "model type"),
        ("dropout", json!(0.1), "dropout"),
        // (HF's BPE over characters is read, and refuses GPT-2's split before its BPE over
        // bytes; tests/character_bpe_files.rs reads such files)
        ("end_of_word_suffix", json!("</w>"), "CharacterBpe"),
        ("byte_fallback", json!(true), "byte_fallback"),
    ] {
        let mut s = spec();
        s["model"][key] = value;
        expect(&s, what, unsupported(what));
    }
    // Python's `value not in (None, "", 0, 0.0)`: these are unset.
    for (key, value) in [
        ("dropout", json!(0)),
        ("dropout", json!(false)),
        ("end_of_word_suffix", json!("")),
    ] {
        let mut s = spec();
        s["model"][key] = value;
        assert!(read(&s).is_ok(), "{key}");
    }
}

#[test]
fn other_decoders_are_unsupported_and_a_decoder_is_an_object() {
    let mut s = spec();
    // (a Metaspace decoder makes the file SentencePiece-style: a BPE without byte fallback,
    // whose reader refuses the ByteLevel pre-tokenizer first)
    s["decoder"] = json!({"type": "Metaspace"});
    expect(&s, "Metaspace decoder", unsupported("[\"ByteLevel\"]"));
    s["decoder"] = json!("ByteLevel");
    expect(&s, "a string decoder", malformed("decoder"));
}

#[test]
fn malformed_added_tokens_are_refused() {
    for (value, at) in [
        (json!({"id": 1}), "added_tokens"),
        (json!([5]), "added_tokens[0]"),
        (json!([{"content": "<x>"}]), "added_tokens[0]"),
        (json!([{"content": "<x>", "id": 1.0}]), "added_tokens[0]"),
        (json!([{"content": 5, "id": 1}]), "added_tokens[0]"),
    ] {
        let mut s = spec();
        s["added_tokens"] = value.clone();
        expect(&s, &value.to_string(), malformed(at));
    }
    let mut s = spec();
    s["model"]["vocab"]["<x>"] = json!("7");
    s["added_tokens"] = json!([added(0, "<x>", true)]);
    expect(
        &s,
        "an added token whose vocab id is text",
        malformed("model.vocab"),
    );
}

#[test]
fn an_added_id_a_vocab_entry_also_has_is_unsupported() {
    // 258 entries with a gap at 100 and one at 258: HF gives <new> 258, the id of "zz".
    let mut s = spec();
    s["model"]["vocab"].as_object_mut().unwrap().remove("d");
    s["model"]["vocab"]["zz"] = json!(258);
    s["added_tokens"] = json!([added(0, "<new>", true)]);
    expect(&s, "gap", unsupported("the added token"));
}

#[test]
fn normalizers_other_than_nfc_are_unsupported() {
    for normalizer in [
        json!({"type": "Lowercase"}),
        json!({"type": "NFD"}),
        json!({"type": "NFKC"}),
        json!({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}),
        json!({"type": "BertNormalizer"}),
        json!({"type": "Precompiled"}),
    ] {
        let mut s = spec();
        s["normalizer"] = normalizer.clone();
        expect(&s, &normalizer.to_string(), unsupported("normalizer"));
    }
    for (normalizer, at) in [
        (json!("NFC"), "normalizer"),
        (
            json!({"type": "Sequence", "normalizers": {"type": "NFC"}}),
            "normalizer",
        ),
        (
            json!({"type": "Sequence", "normalizers": [7]}),
            "normalizer.normalizers[0]",
        ),
    ] {
        let mut s = spec();
        s["normalizer"] = normalizer.clone();
        expect(&s, &normalizer.to_string(), malformed(at));
    }
    let mut deep = json!({"type": "NFC"});
    for _ in 0..18 {
        deep = json!({"type": "Sequence", "normalizers": [deep]});
    }
    let mut s = spec();
    s["normalizer"] = deep;
    expect(&s, "Sequences 18 deep", malformed("normalizer"));
}

#[test]
fn added_tokens_hf_does_not_tokenize_deterministically_are_unsupported() {
    let mut s = spec();
    s["normalizer"] = json!({"type": "NFC"});
    s["added_tokens"] = json!([added(0, "<\u{e9}>", false), added(1, "<e\u{301}>", false)]);
    expect(
        &s,
        "two normalized tokens NFC makes one",
        unsupported("NFC makes"),
    );
    s["added_tokens"] = json!([added(0, "<x>", false), added(0, "<x>", true)]);
    s["added_tokens"][1]["normalized"] = json!(true);
    expect(
        &s,
        "a normalized token listed twice",
        unsupported("listed both"),
    );
    let mut s = spec();
    let (mut right, mut space) = (added(0, "[r]", true), added(0, "  ", true));
    right["rstrip"] = json!(true);
    space["lstrip"] = json!(true);
    s["added_tokens"] = json!([right, space]);
    expect(&s, "rstrip then lstrip whitespace", unsupported("rstrip"));
}

#[test]
fn pre_tokenizers_that_need_a_split_program_or_are_unknown_are_unsupported() {
    let cases = [
        // Without ByteLevel, a BPE model is HF's BPE over characters, whose reader refuses
        // the split programs the core does not run (tests/character_bpe_files.rs reads the
        // others); with Metaspace, its reader refuses the byte-level file's ByteLevel decoder.
        (
            json!({"type": "Metaspace", "replacement": "▁"}),
            "decoder \"ByteLevel\"",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [byte_level(false), split(QWEN2, "Isolated")]}),
            "sequence",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [split(QWEN2, "Isolated")]}),
            "split program",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [byte_level(true), byte_level(true)]}),
            "sequence",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [{"type": "Digits"}, byte_level(false)]}),
            "split program",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [split(QWEN2, "Removed"), byte_level(false)]}),
            "split program",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [split(r"\s+", "Isolated"), byte_level(false)]}),
            "split program",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [split(QWEN2, "Isolated"), byte_level(true)]}),
            "split program",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "UnicodeScripts"}, byte_level(true)]}),
            "UnicodeScripts",
        ),
        (byte_level(false), "without use_regex"),
        (
            json!({"type": "ByteLevel", "add_prefix_space": true}),
            "add_prefix_space",
        ),
    ];
    for (pre_tokenizer, construct) in cases {
        let mut s = spec();
        s["pre_tokenizer"] = pre_tokenizer.clone();
        expect(&s, &pre_tokenizer.to_string(), unsupported(construct));
    }
    let malformed_cases = [
        (
            json!({"type": "Sequence", "pretokenizers": [5]}),
            "pre_tokenizer",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": {"type": "ByteLevel"}}),
            "pre_tokenizer",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": QWEN2, "behavior": "Isolated"}, byte_level(false)]}),
            "pretokenizers[0].pattern",
        ),
        (
            json!({"type": "Sequence", "pretokenizers": [split(QWEN2, "Isolate"), byte_level(false)]}),
            "pretokenizers[0]",
        ),
    ];
    for (pre_tokenizer, at) in malformed_cases {
        let mut s = spec();
        s["pre_tokenizer"] = pre_tokenizer.clone();
        expect(&s, &pre_tokenizer.to_string(), malformed(at));
    }
    let mut s = spec();
    let mut inverted = split(QWEN2, "Isolated");
    inverted["invert"] = json!("no");
    s["pre_tokenizer"] =
        json!({"type": "Sequence", "pretokenizers": [inverted, byte_level(false)]});
    expect(&s, "invert not a bool", malformed("pretokenizers[0]"));
}

#[test]
fn vocab_entries_and_merges_that_are_not_byte_level_bpe_are_refused() {
    let cases: [(&str, Value, Value, &str); 8] = [
        (
            "\u{2603}",
            json!(258),
            json!(["a b", "ab c"]),
            "model.vocab",
        ),
        ("zz", json!(1.5), json!(["a b", "ab c"]), "model.vocab"),
        ("zz", json!(-1), json!(["a b", "ab c"]), "vocab entry"),
        ("zz", json!(258), json!("a b"), "model.merges"),
        ("zz", json!(258), json!(["a b c"]), "model.merges[0]"),
        ("zz", json!(258), json!([["a", 5]]), "model.merges[0]"),
        ("zz", json!(258), json!(["b a"]), "model.merges[0]"),
        ("zz", json!(258), json!(["a \u{2603}"]), "model.merges[0]"),
    ];
    for (text, id, merges, at) in cases {
        let mut s = spec();
        s["model"]["vocab"][text] = id.clone();
        s["model"]["merges"] = merges.clone();
        expect(&s, &format!("{text} {id} {merges}"), malformed(at));
    }
    let mut s = spec();
    s["model"]["vocab"]["zz"] = json!(4_000_000_000u64);
    assert!(matches!(read(&s), Err(FormatError::IdOutOfRange { .. })));
    let mut s = spec();
    s["model"]["vocab"] = json!({});
    s["model"]["merges"] = json!([]);
    expect(&s, "no tokens", malformed("tokens"));
}

#[test]
fn an_unk_token_that_cannot_stand_for_a_missing_byte_is_refused() {
    let mut s = spec();
    s["model"]["vocab"].as_object_mut().unwrap().remove("x");
    s["model"]["unk_token"] = json!("<unk>");
    expect(
        &s,
        "an unk token not in the vocab",
        malformed("model.unk_token"),
    );
    s["model"]["vocab"]["a"] = json!(97);
    s["model"]["unk_token"] = json!("a");
    expect(&s, "an unk token in a merge", unsupported("unk_token"));
}

// ------------------------------------------------------------------------------------------
// vocab.json + merges.txt

fn vocab_json() -> Vec<u8> {
    let mut vocab = spec()["model"]["vocab"].clone();
    vocab["<|endoftext|>"] = json!(258);
    vocab.to_string().into_bytes()
}

#[test]
fn vocab_json_with_and_without_a_config_reads() {
    let vocab = read_vocab_merges(&vocab_json(), b"#version: 0.2\na b\nab c\n", None).unwrap();
    assert_eq!(
        (vocab.name.as_str(), vocab.n_vocab, vocab.eos_token_id),
        ("vocab", 259, Some(258))
    );
    assert_eq!(
        (vocab.literals.len(), vocab.literals[0].special),
        (1, true),
        "GPT-2's <|endoftext|>"
    );
    let config = json!({"tokenizer_class": "Qwen2Tokenizer", "eos_token": {"content": "<x>"},
        "added_tokens_decoder": {"300": {"content": "<x>", "special": true}, " 301": {"content": "<y>"}}});
    let vocab = read_vocab_merges(
        &vocab_json(),
        b"a b\nab c",
        Some(config.to_string().as_bytes()),
    )
    .unwrap();
    let literals: Vec<(&str, u32, bool)> = vocab
        .literals
        .iter()
        .map(|l| (l.text.as_str(), l.id, l.special))
        .collect();
    assert_eq!(literals, [("<x>", 300, true), ("<y>", 301, false)]);
    assert_eq!(
        (vocab.normalizer, vocab.eos_token_id),
        (NormalizeStage::Nfc, Some(300))
    );
    assert!(vocab.pattern.starts_with("(?i:'s|'t"), "Qwen2's pattern");
    // An empty config is no config; an eos that is not text names no token.
    let vocab = read_vocab_merges(&vocab_json(), b"a b", Some(b"{}")).unwrap();
    assert_eq!(vocab.eos_token_id, Some(258));
    let vocab = read_vocab_merges(&vocab_json(), b"a b", Some(br#"{"eos_token": 5}"#)).unwrap();
    assert_eq!((vocab.eos_token_id, vocab.literals.len()), (None, 0));
}

#[test]
fn malformed_vocab_json_merges_and_configs_are_refused() {
    let config = |c: Value| c.to_string().into_bytes();
    // (vocab.json, merges.txt, tokenizer_config.json, where the error is)
    type Case<'a> = (&'a [u8], &'a [u8], Option<Vec<u8>>, &'a str);
    let cases: [Case; 8] = [
        (b"[1]", b"a b", None, "vocab.json"),
        (
            &vocab_json(),
            b"a b",
            Some(config(json!([1]))),
            "tokenizer_config.json",
        ),
        (
            &vocab_json(),
            b"a b",
            Some(config(json!({"added_tokens_decoder": [1]}))),
            "added_tokens_decoder",
        ),
        (
            &vocab_json(),
            b"a b",
            Some(config(
                json!({"added_tokens_decoder": {"x": {"content": "<a>"}}}),
            )),
            "added_tokens_decoder",
        ),
        (
            &vocab_json(),
            b"a b",
            Some(config(
                json!({"added_tokens_decoder": {"300": {"special": true}}}),
            )),
            "added_tokens_decoder",
        ),
        (&vocab_json(), b"a b\n\xff", None, "merges.txt"),
        (&vocab_json(), b"a b\r\n", None, "merges.txt[0]"),
        (&vocab_json(), b"a b c\n", None, "merges.txt[0]"),
    ];
    for (vocab, merges, config, at_part) in cases {
        match read_vocab_merges(vocab, merges, config.as_deref()) {
            Err(FormatError::Malformed {
                file: FileKind::VocabMerges,
                at,
                ..
            }) => assert!(at.contains(at_part), "{at}"),
            other => panic!("{at_part}: {other:?}"),
        }
    }
    assert!(matches!(
        read_vocab_merges(b"{", b"", None),
        Err(FormatError::Json { .. })
    ));
}

#[test]
fn a_tokenizer_config_sets_eos_bos_and_the_template_or_is_refused() {
    let mut s = spec();
    s["added_tokens"] = json!([added(0, "</s>", true)]);
    let vocab = read(&s).unwrap();
    let with = |config: Value| with_tokenizer_config(vocab.clone(), config.to_string().as_bytes());
    let templates =
        json!([{"name": "tool_use", "template": "t"}, {"name": "default", "template": "d"}]);
    let got = with(
        json!({"eos_token": "</s>", "bos_token": {"content": "ab"}, "chat_template": templates}),
    )
    .unwrap();
    assert_eq!(
        (
            got.eos_token_id,
            got.bos_token_id,
            got.chat_template.as_deref()
        ),
        (Some(258), Some(256), Some("d"))
    );
    // A token the vocabulary lacks, an empty one, and a list without "default" change nothing.
    let got = with(
        json!({"eos_token": "<none>", "bos_token": "", "chat_template": [{"name": "x", "template": "t"}]}),
    );
    assert_eq!(got.unwrap(), vocab);
    for (config, at) in [
        (json!([1]), "top level"),
        (json!({"eos_token": 5}), "eos_token"),
        (json!({"bos_token": {"id": 1}}), "bos_token"),
        (json!({"chat_template": 5}), "chat_template"),
        (
            json!({"chat_template": [{"name": "default", "template": 5}]}),
            "chat_template",
        ),
        (json!({"chat_template": ["t"]}), "chat_template"),
    ] {
        match with(config.clone()) {
            Err(FormatError::Malformed {
                file: FileKind::TokenizerConfig,
                at: got,
                ..
            }) => assert!(got.contains(at)),
            other => panic!("{config}: {other:?}"),
        }
    }
    assert!(matches!(
        with_tokenizer_config(vocab, b"{"),
        Err(FormatError::Json { .. })
    ));
}

// ------------------------------------------------------------------------------------------
// derived entries

fn entry_parts() -> (Value, Vec<u8>) {
    let data = read_file(&support::test_file(
        "formats/qwen-slice-pair-ranked.vocab.gz",
    ))
    .unwrap();
    let rest = &data[16..];
    let head = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
    (
        serde_json::from_slice(&rest[4..4 + head]).unwrap(),
        rest[4 + head..].to_vec(),
    )
}

fn entry(header: &Value, body: &[u8]) -> Vec<u8> {
    let head = header.to_string().into_bytes();
    [
        b"wordsplit-vocab\n".as_slice(),
        &(head.len() as u32).to_le_bytes(),
        &head,
        body,
    ]
    .concat()
}

#[test]
fn a_derived_entry_reads_and_every_corruption_is_refused() {
    let (header, body) = entry_parts();
    let vocab = read_derived(&entry(&header, &body)).unwrap();
    assert_eq!(
        (vocab.name.as_str(), vocab.unk_token_id, vocab.fuse_unk),
        ("qwen-slice-pair-ranked", Some(3000), true)
    );
    // The header's pipeline gives the pattern (its Regex spanner's) and the normalizer.
    assert_eq!(header["format"], json!(6));
    assert_eq!(
        header["pipeline"]["spanner"]["type"].as_str(),
        Some("Regex")
    );
    assert_eq!(
        Some(vocab.pattern.as_str()),
        header["pipeline"]["spanner"]["pattern"].as_str()
    );
    assert_eq!(vocab.normalizer, NormalizeStage::Nfc);
    let mut plain = header.clone();
    plain["pipeline"]["normalizer"] = json!({"type": "None"});
    assert_eq!(
        read_derived(&entry(&plain, &body)).unwrap().normalizer,
        NormalizeStage::None
    );
    // The post-processor is read and checked, and not kept (the core adds no special tokens).
    assert_eq!(
        header["pipeline"]["post_processor"],
        json!({"type": "None"})
    );
    let mut bert = header.clone();
    bert["pipeline"]["post_processor"] = json!({"type": "BertProcessing", "sep": "[SEP]", "sep_id": 102, "cls": "[CLS]", "cls_id": 101});
    assert_eq!(read_derived(&entry(&bert, &body)).unwrap(), vocab);
    let corrupt = |data: &[u8], what: &str| match read_derived(data) {
        Err(FormatError::CorruptDerived { .. }) => {}
        other => panic!("{what}: {other:?}"),
    };
    corrupt(b"wordsplit-vocab\n\x01", "no header length");
    corrupt(&entry(&header, &body)[1..], "no magic");
    corrupt(&entry(&header, &body)[..100], "truncated header");
    corrupt(
        &[b"wordsplit-vocab\n\x02\x00\x00\x00{]".as_slice(), &body].concat(),
        "unreadable header",
    );
    corrupt(&entry(&json!([1]), &body), "a header that is not an object");
    let mut without = header.clone();
    without
        .as_object_mut()
        .unwrap()
        .remove("whole_piece_lookup");
    corrupt(
        &entry(&without, &body),
        "a header without whole_piece_lookup",
    );
    let mut flipped = body.clone();
    flipped[10] ^= 1;
    corrupt(&entry(&header, &flipped), "a flipped body byte");
    corrupt(&entry(&header, &body[..body.len() - 1]), "a truncated body");
    let patched = |key: &str, value: Value| {
        let mut h = header.clone();
        h[key] = value;
        entry(&h, &body)
    };
    for (key, value) in [
        ("format", json!(2)),
        ("format", json!(5)),
        ("n_tokens", json!(-1)),
        ("n_tokens", json!(1_000_000)),
        ("n_merges", json!("3")),
        ("body_checksum", json!("00")),
        ("pipeline", json!(7)),
        ("pipeline", json!(r"\S+")),
        ("special_tokens", json!({"<unk>": 3000})),
        ("special_tokens", json!([["<unk>"]])),
        ("literal_flags", json!({"<nope>": 1})),
        ("literal_flags", json!({"<unk>": 32})),
        ("chat_template", json!(5)),
        ("n_vocab", json!(0)),
        ("eos_token_id", json!(-3)),
    ] {
        corrupt(&patched(key, value.clone()), &format!("{key} = {value}"));
    }
    // A format-3 header (pattern and normalizer, no pipeline) under the current format.
    let mut older = header.clone();
    let older_fields = older.as_object_mut().unwrap();
    older_fields.remove("pipeline");
    older_fields.insert("pattern".into(), json!(r"\S+"));
    older_fields.insert("normalizer".into(), json!("none"));
    corrupt(
        &entry(&older, &body),
        "a pattern and a normalizer, no pipeline",
    );
    // A pipeline of other than exactly the five stages, or a malformed stage: the Python
    // reader refuses these too.
    let with_pipeline = |change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut h = header.clone();
        change(h["pipeline"].as_object_mut().unwrap());
        entry(&h, &body)
    };
    corrupt(
        &with_pipeline(&|p| {
            p.remove("decoder");
        }),
        "a pipeline without a decoder",
    );
    corrupt(
        &with_pipeline(&|p| {
            p.remove("post_processor");
        }),
        "a pipeline without a post-processor",
    );
    corrupt(
        &with_pipeline(&|p| {
            p.insert("extra".into(), json!({"type": "None"}));
        }),
        "a pipeline with a sixth stage",
    );
    for (stage, value) in [
        ("spanner", json!("Regex")),
        ("spanner", json!({"pattern": r"\S+"})),
        ("spanner", json!({"type": 7, "pattern": r"\S+"})),
        ("spanner", json!({"type": "Regex"})),
        ("spanner", json!({"type": "Regex", "pattern": 7})),
        (
            "spanner",
            json!({"type": "Regex", "pattern": r"\S+", "flags": "i"}),
        ),
        ("normalizer", json!(null)),
        ("normalizer", json!({"type": "NFC", "form": "C"})),
        ("model", json!({"type": "BPE", "dropout": 0.1})),
        ("decoder", json!({})),
        (
            "post_processor",
            json!({"type": "BertProcessing", "sep": "[SEP]", "sep_id": "102", "cls": "[CLS]", "cls_id": 101}),
        ),
    ] {
        corrupt(
            &with_pipeline(&|p| {
                p.insert(stage.into(), value.clone());
            }),
            &format!("{stage} = {value}"),
        );
    }
    // Lengths that do not add up to the token bytes (the checksum recomputed to match).
    let mut lengths = body.clone();
    let n = header["n_tokens"].as_u64().unwrap() as usize;
    lengths[4 * n] += 1;
    let mut h = header.clone();
    h["body_checksum"] = json!(checksum(&lengths));
    corrupt(&entry(&h, &lengths), "lengths");
    // What a valid entry may say and the Rust core does not run, and broken invariants.
    for (stage, value) in [
        ("spanner", json!({"type": "SplitProgram", "steps": []})),
        (
            "spanner",
            json!({"type": "SplitProgram", "steps": [{"type": "Split", "pattern": r"\s+", "behavior": "Removed", "invert": false}]}),
        ),
        ("normalizer", json!({"type": "NFD"})),
        (
            "normalizer",
            json!({"type": "Sequence", "normalizers": [{"type": "NFC"}]}),
        ),
        ("normalizer", json!({"type": "Plugin", "name": "lowercase"})),
        ("normalizer", json!({"type": "BertNormalizer"})),
        ("normalizer", json!({"type": "Precompiled", "charsmap": ""})),
        ("model", json!({"type": "WordPiece"})),
        ("model", json!({"type": "Unigram"})),
        ("model", json!({"type": "WordLevel"})),
        ("decoder", json!({"type": "WordPiece"})),
        ("decoder", json!({"type": "SentencePiece"})),
    ] {
        let mut h = header.clone();
        h["pipeline"][stage] = value.clone();
        match read_derived(&entry(&h, &body)) {
            Err(FormatError::Unsupported {
                file: FileKind::Derived,
                at,
                ..
            }) => assert_eq!(at, format!("pipeline.{stage}"), "{stage} = {value}"),
            other => panic!("{stage} = {value}: {other:?}"),
        }
    }
    // A SentencePiece pipeline (its spanner, model and decoder together) is one the core does
    // not read from an entry; its spanner or model alone makes no pipeline: the entry is
    // corrupt (its decoder alone is unsupported, above).
    let sentencepiece = [
        (
            "spanner",
            json!({"type": "SentencePiece", "user_defined": [], "words": false, "joined": [], "metaspace_split": false}),
        ),
        (
            "model",
            json!({"type": "SentencePieceBpe", "merge_by": "score", "unused": [], "ignore_merges": false}),
        ),
        (
            "decoder",
            json!({"type": "SentencePiece", "style": "sentencepiece", "unk_surface": " \u{2047} ", "strip_leading_space": "first", "unused": []}),
        ),
    ];
    let mut h = header.clone();
    for (stage, value) in &sentencepiece {
        h["pipeline"][*stage] = value.clone();
    }
    assert!(matches!(
        read_derived(&entry(&h, &body)),
        Err(FormatError::Unsupported { at, .. }) if at == "pipeline.spanner"
    ));
    for (stage, value) in sentencepiece.into_iter().take(2) {
        let mut h = header.clone();
        h["pipeline"][stage] = value.clone();
        let err = read_derived(&entry(&h, &body)).unwrap_err();
        assert!(
            matches!(err, FormatError::CorruptDerived { .. }),
            "{stage} = {value}: {err:?}"
        );
    }
    for (key, value) in [
        ("n_vocab", json!(2)),
        ("eos_token_id", json!(5000)),
        ("added_tokens", json!([["<b>", 3000]])),
    ] {
        let err = read_derived(&patched(key, value.clone())).unwrap_err();
        assert!(
            matches!(
                err,
                FormatError::Malformed {
                    file: FileKind::Derived,
                    ..
                } | FormatError::DuplicateId { .. }
            ),
            "{key} = {value}: {err:?}"
        );
    }
}

// ------------------------------------------------------------------------------------------
// Truncated and corrupted inputs: an answer, never a panic.

/// xorshift64*: deterministic, so a failure repeats.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

fn mutations(data: &[u8], seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    let interesting = [
        b'0', b'9', b'-', b'=', b'\n', b' ', b'"', b'{', b'}', b'[', b']', b',', b':', 0, 0xff,
        0xc3,
    ];
    (0..count)
        .map(|_| {
            let mut d = data.to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(d.len());
                match rng.below(5) {
                    0 => d.truncate(at),
                    1 if !d.is_empty() => d[at] ^= 1 << rng.below(8),
                    2 if !d.is_empty() => d[at] = interesting[rng.below(interesting.len())],
                    3 => d.insert(at.min(d.len()), interesting[rng.below(interesting.len())]),
                    _ if !d.is_empty() => {
                        d.remove(at);
                    }
                    _ => {}
                }
            }
            d
        })
        .collect()
}

fn never_panics(
    what: &str,
    inputs: &[Vec<u8>],
    reader: impl Fn(&[u8]) -> Result<VocabData, FormatError>,
) -> usize {
    let mut refused = 0;
    for (i, input) in inputs.iter().enumerate() {
        match catch_unwind(AssertUnwindSafe(|| reader(input))) {
            Ok(Ok(vocab)) => assert!(
                vocab.n_vocab as usize > vocab.tokens.len().saturating_sub(1),
                "{what} #{i}"
            ),
            Ok(Err(err)) => {
                refused += 1;
                assert!(!err.to_string().is_empty());
            }
            Err(_) => panic!(
                "{what}: input #{i} panicked: {:?}",
                String::from_utf8_lossy(&input[..input.len().min(200)])
            ),
        }
    }
    refused
}

fn prefixes(data: &[u8], step: usize) -> Vec<Vec<u8>> {
    (0..data.len())
        .step_by(step.max(1))
        .map(|n| data[..n].to_vec())
        .collect()
}

#[test]
fn corrupted_rank_files_give_an_answer_never_a_panic() {
    let data = rank_file(&format!("{} 256\n{} 257\n", base64(b"ab"), base64(b"abc")));
    let read = |d: &[u8]| read_tiktoken(d, &with_pattern());
    never_panics("rank file prefix", &prefixes(&data, 7), read);
    let refused = never_panics("rank file mutation", &mutations(&data, 1, 3000), read);
    assert!(refused > 1000, "most corruptions are refused ({refused})");
}

#[test]
fn corrupted_tokenizer_json_gives_an_answer_never_a_panic() {
    let mut s = spec();
    s["added_tokens"] = json!([added(0, "<|end|>", true), added(0, "<t>", false)]);
    s["pre_tokenizer"] =
        json!({"type": "Sequence", "pretokenizers": [split(QWEN2, "Isolated"), byte_level(false)]});
    s["normalizer"] = json!({"type": "NFC"});
    let data = s.to_string().into_bytes();
    assert!(read_hf_tokenizer_json(&data).is_ok());
    let refused = never_panics(
        "tokenizer.json prefix",
        &prefixes(&data, 13),
        read_hf_tokenizer_json,
    );
    assert_eq!(
        refused,
        data.len().div_ceil(13),
        "every proper prefix of JSON is refused"
    );
    never_panics(
        "tokenizer.json mutation",
        &mutations(&data, 2, 3000),
        read_hf_tokenizer_json,
    );
}

#[test]
fn corrupted_vocab_json_merges_and_configs_give_an_answer_never_a_panic() {
    let merges = b"#version: 0.2\na b\nab c\n".to_vec();
    let config = br#"{"tokenizer_class": "Qwen2Tokenizer", "added_tokens_decoder": {"300": {"content": "<x>", "special": true}}, "eos_token": "<x>"}"#.to_vec();
    let vocab = vocab_json();
    assert!(read_vocab_merges(&vocab, &merges, Some(&config)).is_ok());
    never_panics("vocab.json", &mutations(&vocab, 5, 1000), |d| {
        read_vocab_merges(d, &merges, Some(&config))
    });
    never_panics("merges.txt", &mutations(&merges, 6, 1000), |d| {
        read_vocab_merges(&vocab, d, Some(&config))
    });
    never_panics("tokenizer_config.json", &mutations(&config, 7, 1000), |d| {
        read_vocab_merges(&vocab, &merges, Some(d))
    });
}

#[test]
fn corrupted_derived_entries_are_refused_never_a_panic() {
    let (header, body) = entry_parts();
    let data = entry(&header, &body);
    let inputs = prefixes(&data, 97);
    assert_eq!(
        never_panics("derived prefix", &inputs, read_derived),
        inputs.len(),
        "every prefix is refused"
    );
    never_panics("derived mutation", &mutations(&data, 3, 1000), read_derived);
    // Mutations of the body alone are always refused (the checksum).
    let start = data.len() - body.len();
    let mut rng = Rng(4);
    for _ in 0..300 {
        let mut d = data.clone();
        d[start + rng.below(body.len())] ^= 1 << rng.below(8);
        assert!(read_derived(&d).is_err());
    }
}

// ------------------------------------------------------------------------------------------
// Files

#[test]
fn read_file_gunzips_every_member_and_stops_at_the_size_cap() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("wordsplit-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = |data: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    };
    let two_members = dir.join("two.tiktoken.gz");
    std::fs::write(&two_members, [gz(b"YQ== 0\n"), gz(b"Yg== 1\n")].concat()).unwrap();
    assert_eq!(read_file(&two_members).unwrap(), b"YQ== 0\nYg== 1\n");

    let bomb = dir.join("bomb.json.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..=(wordsplit::formats::MAX_FILE_BYTES >> 20) {
        encoder.write_all(&zeros).unwrap();
    }
    std::fs::write(&bomb, encoder.finish().unwrap()).unwrap();
    let err = read_file(&bomb).unwrap_err();
    assert!(
        matches!(&err, FormatError::Io { detail, .. } if detail.contains("larger than 256 MiB")),
        "{err:?}"
    );

    assert!(matches!(
        read_file(&dir.join("absent.tiktoken")),
        Err(FormatError::Io { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}
