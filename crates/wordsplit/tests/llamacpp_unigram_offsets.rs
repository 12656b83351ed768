//! `Tokenizer::encoding` of a GGUF Unigram model (llama.cpp's `t5` tokenizer): the tokens
//! placed through the alignment of llama.cpp's normalizer (`LlamaCppUnigram`), on a small
//! vocabulary made here, for each layout of its spaces and with a character map. The offsets
//! are those of the Python package's `encode_with_offsets` (its
//! `LlamaCppUnigramNormalizer.alignment`: an added `▁` is aligned to the character it is put
//! before, the `▁` of a space to that space, a key's output to the key), which
//! `tests/test_llamacpp_unigram_offsets_native.py` holds the core's to on nomic-bert-moe's file.

#[path = "support/hf_json.rs"]
mod hf_json;

use hf_json::read;
use serde_json::{json, Value};
use wordsplit::normalizers::charsmap_build::compile;
use wordsplit::spec::PipelineSpec;
use wordsplit::Tokenizer;

/// `data` in standard base64 (a stage's `charsmap` is).
fn base64(data: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for k in 0..4 {
            out.push(match k <= chunk.len() {
                true => DIGITS[(n >> (18 - 6 * k) & 63) as usize] as char,
                false => '=',
            });
        }
    }
    out
}

/// A Unigram vocabulary with `<s>` special, under llama.cpp's normalizer with these flags and
/// a map of full-width `Ａ` to `a` and `①` to `1 1` (an output with a space).
fn tokenizer(add_space_prefix: bool, remove_extra_whitespaces: bool) -> Tokenizer {
    let pieces = [
        ("<unk>", 0.0),
        ("<s>", 0.0),
        ("\u{2581}", -2.0),
        ("\u{2581}a", -1.0),
        ("a", -2.0),
        ("b", -2.0),
        ("\u{2581}ab", -0.5),
        ("1", -2.0),
    ];
    let vocab: Vec<Value> = pieces.iter().map(|(p, s)| json!([p, s])).collect();
    let metaspace =
        json!({"type": "Metaspace", "replacement": "\u{2581}", "add_prefix_space": true});
    let file = json!({
        "added_tokens": [
            {"id": 0, "content": "<unk>", "special": true, "normalized": false,
             "lstrip": false, "rstrip": false, "single_word": false},
            {"id": 1, "content": "<s>", "special": true, "normalized": false,
             "lstrip": false, "rstrip": false, "single_word": false},
        ],
        "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab},
        "normalizer": null, "pre_tokenizer": metaspace.clone(), "decoder": metaspace,
    });
    let mut data = read(&file).unwrap();
    let charsmap = base64(&compile(&[("Ａ", "a"), ("①", "1 1")]));
    let pipeline = json!({
        "normalizer": {"type": "LlamaCppUnigram", "add_space_prefix": add_space_prefix,
                       "remove_extra_whitespaces": remove_extra_whitespaces,
                       "charsmap": charsmap},
        "spanner": {"type": "SentencePiece", "joined": [], "metaspace_split": false,
                    "user_defined": [], "words": false},
        "model": {"type": "Unigram", "unk_token": "<unk>", "byte_fallback": false,
                  "user_defined": []},
        "decoder": {"type": "SentencePiece", "style": "llama.cpp", "strip_leading_space": "first",
                    "unk_surface": " \u{2047} ", "unused": []},
        "post_processor": {"type": "None"},
    });
    data.pipeline = Some(PipelineSpec::from_json(&pipeline).unwrap());
    Tokenizer::from_vocab(data).unwrap()
}

/// The ids and char offsets of `text` (special tokens matched, none added).
fn placed(tok: &Tokenizer, text: &str) -> Vec<(u32, (usize, usize))> {
    let encoding = tok.encoding(text, None, false).unwrap();
    encoding.ids.into_iter().zip(encoding.offsets).collect()
}

const SPACE: u32 = 2;
const SPACE_AB: u32 = 6;

#[test]
fn merged_spaces_put_each_words_space_at_its_first_character() {
    let tok = tokenizer(true, true);
    // "▁ab▁ab": each ▁ is aligned to the word's first character, not to the spaces before it
    // (which are dropped); Ａ is its key's output.
    assert_eq!(
        placed(&tok, "  ab  Ａb"),
        [(SPACE_AB, (2, 4)), (SPACE_AB, (6, 8))]
    );
    // an unknown character is the unknown token, over its character
    assert_eq!(placed(&tok, "ab☃"), [(SPACE_AB, (0, 2)), (0, (2, 3))]);
    // "1 1" of ① makes two words of the one key: both tokens span it
    assert_eq!(
        placed(&tok, "a①"),
        [(3, (0, 1)), (7, (1, 2)), (SPACE, (1, 2)), (7, (1, 2))]
    );
}

#[test]
fn each_space_is_its_own_with_a_prefix_before_the_first_word() {
    let tok = tokenizer(true, false);
    // "▁▁▁ab▁▁ab": the spaces each a ▁ of their own, the prefix ▁ aligned to the "a"
    assert_eq!(
        placed(&tok, "  ab  Ａb"),
        [
            (SPACE, (0, 1)),
            (SPACE, (1, 2)),
            (SPACE_AB, (2, 4)),
            (SPACE, (4, 5)),
            (SPACE_AB, (5, 8))
        ]
    );
    // without the prefix, "ab" is not a "▁ab"
    let plain = tokenizer(false, false);
    assert_eq!(
        placed(&plain, "ab b"),
        [(4, (0, 1)), (5, (1, 2)), (SPACE, (2, 3)), (5, (3, 4))]
    );
}

#[test]
fn a_special_token_is_its_text_and_the_text_after_it_its_own_stretch() {
    let tok = tokenizer(true, true);
    // llama.cpp normalizes each stretch between special tokens alone: the ▁ of "ab" again
    assert_eq!(
        placed(&tok, "<s>ab <s>"),
        [(1, (0, 3)), (SPACE_AB, (3, 5)), (1, (6, 9))]
    );
}
