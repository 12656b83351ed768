//! The Rust reader of HF's BPE over characters (CharacterBpe: an end-of-word suffix, a
//! continuing-subword prefix, or no `ByteLevel` pre-tokenizer) on small files made here: what
//! it reads and runs (the ids and text HF tokenizers 0.23.3 gives these files, noted by each
//! case), and each option or stage it refuses with a typed error that says where (the Python
//! package's reader refuses the same, `tests/test_character_bpe.py`). The real files (CLIP's,
//! tokenizer-wiki's, Tortoise's) are held to HF's goldens by `tests/word_models.rs` and to the
//! Python reader by `tests/formats.rs`.

#[path = "support/hf_json.rs"]
mod hf_json;

use hf_json::{read, with};
use serde_json::{json, Value};
use wordsplit::formats::FormatError;
use wordsplit::spec::{ModelSpec, SpannerSpec};
use wordsplit::Tokenizer;

/// A tokenizers-quicktour-style file: BPE over characters after `Whitespace`, `[UNK]`.
fn spec() -> Value {
    json!({
        "added_tokens": [{"id": 0, "content": "[UNK]", "special": true, "normalized": false,
                          "lstrip": false, "rstrip": false, "single_word": false}],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "decoder": null,
        "post_processor": null,
        "model": {"type": "BPE", "unk_token": "[UNK]", "fuse_unk": false,
                  "vocab": {"[UNK]": 0, "a": 1, "b": 2, "c": 3, "é": 4, "ab": 5, "abc": 6, "bé": 7},
                  "merges": ["a b", "ab c", "b é"]},
    })
}

#[test]
fn a_file_over_characters_reads_and_runs_as_hf() {
    let tok = Tokenizer::from_vocab(read(&spec()).unwrap()).unwrap();
    assert_eq!(tok.model().kind(), "CharacterBpe");
    // HF: ['abc', 'ab', '[UNK]', 'bé', '[UNK]', 'a'], decoded with the tokens joined by spaces
    let ids = tok.encode("abc ab, bé xa").unwrap();
    assert_eq!(ids, [6, 5, 0, 7, 0, 1]);
    assert_eq!(tok.decode(&ids).unwrap(), "abc ab [UNK] bé [UNK] a");
    assert_eq!(tok.decode_skipping_special(&ids).unwrap(), "abc ab bé a");
    // HF: ['ab', 'é'] (a+b ranks before b+é)
    assert_eq!(tok.encode("abé").unwrap(), [5, 4]);
    let encoding = tok.encoding("abc ab", None, false).unwrap();
    assert_eq!(encoding.offsets, [(0, 3), (4, 6)]);
}

#[test]
fn a_prefix_and_a_suffix_are_read_and_merged_as_hf() {
    let s = with(
        spec(),
        &["model"],
        json!({"type": "BPE", "unk_token": "[UNK]", "fuse_unk": true,
               "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
               "vocab": {"[UNK]": 0, "a": 1, "##b": 2, "##c</w>": 3, "ab": 4, "abc</w>": 5,
                         "a</w>": 6, "##b</w>": 7, "ab</w>": 8},
               "merges": ["a ##b", "ab ##c</w>", "a ##b</w>"]}),
    );
    let vocab = read(&s).unwrap();
    let model = &vocab.pipeline.as_ref().unwrap().model;
    assert!(
        matches!(model, ModelSpec::CharacterBpe { fuse_unk: true, continuing_subword_prefix, end_of_word_suffix, .. }
        if continuing_subword_prefix == "##" && end_of_word_suffix == "</w>")
    );
    let tok = Tokenizer::from_vocab(vocab).unwrap();
    // HF: ['abc</w>', 'ab</w>', 'a</w>', 'a', '[UNK]', '##b</w>'] ("xy" one fused [UNK])
    assert_eq!(tok.encode("abc ab a axyb").unwrap(), [5, 8, 6, 1, 0, 7]);
}

#[test]
fn no_pre_tokenizer_or_an_empty_sequence_is_the_whole_text() {
    for pre_tokenizer in [
        json!(null),
        json!({"type": "Sequence", "pretokenizers": []}),
    ] {
        let vocab = read(&with(spec(), &["pre_tokenizer"], pre_tokenizer)).unwrap();
        let spanner = &vocab.pipeline.as_ref().unwrap().spanner;
        assert_eq!(*spanner, SpannerSpec::SplitProgram(Vec::new()));
    }
}

fn unsupported(spec: &Value, part: &str) {
    match read(spec) {
        Err(FormatError::Unsupported { construct, .. }) => {
            assert!(construct.contains(part), "{part}: {construct}")
        }
        other => panic!("{part}: {other:?}"),
    }
}

fn malformed(spec: &Value, part: &str) {
    match read(spec) {
        Err(FormatError::Malformed { at, .. }) => assert!(at.contains(part), "{part}: {at}"),
        other => panic!("{part}: {other:?}"),
    }
}

#[test]
fn options_hf_does_not_run_deterministically_or_fails_on_are_refused() {
    unsupported(&with(spec(), &["model", "dropout"], json!(0.1)), "dropout");
    unsupported(
        &with(spec(), &["model", "ignore_merges"], json!(true)),
        "ignore_merges",
    );
    unsupported(
        &with(spec(), &["model", "unk_token"], json!("")),
        "unk_token",
    );
    malformed(
        &with(spec(), &["model", "unk_token"], json!(5)),
        "model.unk_token",
    );
    // A byte-level file's suffix is its bytes in both spellings only when printable ASCII.
    let clip_like = with(
        with(spec(), &["model", "end_of_word_suffix"], json!("é")),
        &["pre_tokenizer"],
        json!({"type": "ByteLevel"}),
    );
    unsupported(&clip_like, "end_of_word_suffix");
    malformed(
        &with(spec(), &["model", "merges"], json!(["a x"])),
        "model.merges[0]",
    );
    malformed(
        &with(spec(), &["model", "merges"], json!(["a c"])),
        "model.merges[0]",
    );
    malformed(
        &with(spec(), &["model", "merges"], json!(["a b c"])),
        "model.merges[0]",
    );
    malformed(
        &with(spec(), &["model", "merges"], json!({})),
        "model.merges",
    );
}

#[test]
fn stages_the_core_does_not_run_are_refused_naming_them() {
    unsupported(
        &with(spec(), &["decoder"], json!({"type": "WordPiece"})),
        "decoder \"WordPiece\"",
    );
    // (ByteLevel decodes only a byte-level model)
    unsupported(
        &with(spec(), &["decoder"], json!({"type": "ByteLevel"})),
        "decoder \"ByteLevel\"",
    );
    let regex = json!({"type": "Replace", "pattern": {"Regex": "\\d+"}, "content": "0"});
    unsupported(&with(spec(), &["normalizer"], regex), "Replace");
    unsupported(
        &with(spec(), &["pre_tokenizer"], json!({"type": "Punctuation"})),
        "split program",
    );
    // Before a byte-level model, GPT-2's split alone (the Python package runs it).
    let byte_level = with(
        with(spec(), &["model", "end_of_word_suffix"], json!("</w>")),
        &["pre_tokenizer"],
        json!({"type": "ByteLevel", "add_prefix_space": false}),
    );
    unsupported(&byte_level, "byte-level CharacterBpe");
    let prefix_space = with(
        byte_level,
        &["pre_tokenizer", "add_prefix_space"],
        json!(true),
    );
    unsupported(&prefix_space, "add_prefix_space");
}
