//! `Metaspace` with `prepend_scheme: "first"` after a normalizer that drops the input's first
//! characters, read by the core's own reader: HF's second pass slices each stretch out of the
//! normalized text even when it finds no added token, so Metaspace prepends `▁` only when the
//! text's first normalized character comes from the input's first (`offsets_original().0 ==
//! 0`). The expected ids and (char) offsets are HF tokenizers 0.23.3's for these small files.

use serde_json::{json, Value};
use wordsplit::formats::read_hf_tokenizer_json;
use wordsplit::Tokenizer;

fn file(normalizer: Value) -> Tokenizer {
    let metaspace = json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "first",
                           "split": false});
    let spec = json!({
        "model": {"type": "Unigram", "unk_id": 0,
                  "vocab": [["<unk>", 0.0], ["\u{2581}a", -1.0], ["a", -2.0], ["\u{2581}", -3.0], ["b", -2.0]]},
        "normalizer": normalizer,
        "pre_tokenizer": metaspace,
        "decoder": metaspace,
        "added_tokens": [],
    });
    let vocab = read_hf_tokenizer_json(spec.to_string().as_bytes()).unwrap();
    Tokenizer::from_vocab(vocab).unwrap()
}

type Case = (&'static str, &'static [u32], &'static [(usize, usize)]);

fn check(tok: &Tokenizer, cases: &[Case]) {
    for &(text, ids, offsets) in cases {
        assert_eq!(tok.encode(text).unwrap(), ids, "{text:?}");
        let encoding = tok.encoding(text, None, false).unwrap();
        assert_eq!(encoding.ids, ids, "{text:?}");
        assert_eq!(encoding.offsets, offsets, "{text:?}");
    }
}

#[test]
fn strip_leaves_no_replacement_before_what_it_kept() {
    let strip = file(json!({"type": "Strip", "strip_left": true, "strip_right": true}));
    check(
        &strip,
        &[
            ("  a b", &[2, 3, 4], &[(2, 3), (3, 4), (4, 5)]),
            ("a b", &[1, 3, 4], &[(0, 1), (1, 2), (2, 3)]),
            (" ab", &[2, 4], &[(1, 2), (2, 3)]),
            // (Strip keeps a leading mark: the ▁ stays)
            (
                "\u{301}ab",
                &[3, 0, 2, 4],
                &[(0, 1), (0, 1), (1, 2), (2, 3)],
            ),
        ],
    );
}

#[test]
fn strip_accents_leaves_none_before_what_follows_a_leading_mark() {
    let accents = file(json!({"type": "Sequence", "normalizers": [{"type": "NFD"},
                                                                   {"type": "StripAccents"}]}));
    check(
        &accents,
        &[
            ("\u{301}ab", &[2, 4], &[(1, 2), (2, 3)]),
            ("\u{301} ab", &[1, 4], &[(1, 3), (3, 4)]),
            ("  a b", &[3, 1, 3, 4], &[(0, 1), (1, 3), (3, 4), (4, 5)]),
        ],
    );
}

#[test]
fn nfkc_never_drops_the_first_character() {
    let nfkc = file(json!({"type": "NFKC"}));
    check(
        &nfkc,
        &[
            (
                "\u{301}ab",
                &[3, 0, 2, 4],
                &[(0, 1), (0, 1), (1, 2), (2, 3)],
            ),
            (" ab", &[1, 4], &[(0, 2), (2, 3)]),
        ],
    );
}
