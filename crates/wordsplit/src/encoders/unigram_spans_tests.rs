//! The lengths of a Unigram encoder's tokens: each token's part of its piece, for runs of
//! unknown characters, byte fallback, a run that is a token's text and the unknown token's own
//! text in the piece.

use std::sync::Arc;

use super::UnigramSpans;
use crate::encoders::unigram::{Style, Unigram};
use crate::encoders::Encoder;
use crate::tables::MergeTables;

/// A model of `pieces` (id = index, `<unk>` first) with `scores`, in `style`.
fn model(pieces: &[&str], scores: &[f64], style: Style, byte_fallback: bool) -> UnigramSpans {
    let tokens = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_bytes(), i as u32));
    let n = pieces.len();
    let tables = Arc::new(MergeTables::from_tokens(tokens, &[], n, None, false).unwrap());
    let inner = Unigram::with_style(tables, style, scores, Some(0), byte_fallback, "t");
    UnigramSpans::wrap(inner.unwrap())
}

/// The ids of `piece` and the length of each one's part of it.
fn parts(model: &UnigramSpans, piece: &str) -> (Vec<u32>, Vec<usize>) {
    let (mut ids, mut lengths) = (Vec::new(), Vec::new());
    model.encode_piece(piece.as_bytes(), &mut ids).unwrap();
    assert!(model.token_lengths(piece.as_bytes(), &mut lengths).unwrap());
    assert_eq!(ids.len(), lengths.len(), "{piece:?}");
    assert_eq!(lengths.iter().sum::<usize>(), piece.len(), "{piece:?}");
    (ids, lengths)
}

const PIECES: [&str; 8] = ["<unk>", "a", "b", "ab", "▁", "▁ab", "<0xC3>", "<0xA9>"];
const SCORES: [f64; 8] = [0.0, -2.0, -2.0, -1.0, -3.0, -1.5, -9.0, -9.0];

#[test]
fn an_unknown_run_is_the_unknown_tokens_part() {
    let m = model(&PIECES, &SCORES, Style::Hf, false);
    assert_eq!(parts(&m, "abxyb"), (vec![3, 0, 2], vec![2, 2, 1]));
    assert_eq!(parts(&m, "x😀ax"), (vec![0, 1, 0], vec![5, 1, 1]));
    assert_eq!(parts(&m, "▁abé"), (vec![5, 0], vec![5, 2]));
}

#[test]
fn byte_fallback_tokens_are_a_byte_each() {
    let m = model(&PIECES, &SCORES, Style::SentencePiece, true);
    assert_eq!(parts(&m, "aéb"), (vec![1, 6, 7, 2], vec![1, 1, 1, 1]));
    // A run with a character that has no byte token is the unknown token.
    assert_eq!(parts(&m, "a😀é"), (vec![1, 0], vec![1, 6]));
}

#[test]
fn a_token_spelling_a_byte_token_or_the_unknown_token_is_its_text() {
    // HF's search finds `<0xC3>` and `<unk>` as pieces where the text spells them.
    let m = model(&PIECES, &SCORES, Style::Hf, true);
    assert_eq!(parts(&m, "<0xC3>éa"), (vec![6, 6, 7, 1], vec![6, 1, 1, 1]));
    // (the piece `<unk>` after an unknown character joins its run, as the search reads it)
    assert_eq!(parts(&m, "<0xC3>é<unk>"), (vec![6, 0], vec![6, 7]));
    assert_eq!(parts(&m, "<unk>xa"), (vec![0, 1], vec![6, 1]));
}

#[test]
fn a_run_after_the_unknown_token_ends_where_the_rest_tiles() {
    // (the shortest run "x" leaves "ya", which the next token does not spell)
    let pieces = ["<unk>", "a", "ab"];
    let m = model(&pieces, &[0.0, -1.0, -1.0], Style::Hf, false);
    assert_eq!(parts(&m, "xyab"), (vec![0, 2], vec![2, 2]));
    assert_eq!(
        parts(&m, "xyabzzaa"),
        (vec![0, 2, 0, 1, 1], vec![2, 2, 2, 1, 1])
    );
}

#[test]
fn the_lengths_search_gives_the_encoders_ids_and_tiles_the_piece() {
    // Every style, with and without byte fallback, on pseudo-random pieces of pieces, unknown
    // characters (with and without byte tokens) and the special tokens' texts.
    let alphabet = ["a", "b", "ab", "▁", "x", "é", "😀", "<unk>", "<0xC3>", "y"];
    for style in [Style::Hf, Style::SentencePiece, Style::LlamaCpp] {
        for byte_fallback in [false, true] {
            let m = model(&PIECES, &SCORES, style, byte_fallback);
            for text in crate::testing::texts(0x5eed, &alphabet, 300, 8) {
                let (mut ids, mut with_lengths, mut lengths) = (Vec::new(), Vec::new(), Vec::new());
                m.encode_piece(text.as_bytes(), &mut ids).unwrap();
                let given = m.encode_with_lengths(text.as_bytes(), &mut with_lengths, &mut lengths);
                assert!(given.unwrap());
                assert_eq!(with_lengths, ids, "{style:?} {text:?}");
                assert_eq!(lengths.len(), ids.len(), "{style:?} {text:?}");
                assert_eq!(
                    lengths.iter().sum::<usize>(),
                    text.len(),
                    "{style:?} {text:?}"
                );
                assert!(lengths.iter().all(|&n| n > 0), "{style:?} {text:?}");
            }
        }
    }
}
