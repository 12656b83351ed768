//! HF's `BertPreTokenizer` as one scan: the split program of two steps that it is (white
//! space removed, `char::is_whitespace`; then each punctuation character its own piece,
//! ASCII punctuation and the crate `unicode_categories` 0.1.1's P classes), which the Python
//! package writes as `[{"pattern": "\s", "behavior": "Removed"}, {"pattern": <HF's
//! punctuation class>, "behavior": "Isolated"}]`.
//!
//! [`HfProgram`](super::HfProgram) runs a program with this scan when its steps are exactly
//! these two ([`is_bert_step`]: each pattern one character class of exactly that set, neither
//! inverted); any other program runs step by step.

use crate::normalizers::bert_chars::{BertChars, ASCII, PUNCT, WHITE};
use crate::pipeline::SpannedText;
use crate::spec::Behavior;

/// `char::is_whitespace` as code point ranges (a test checks every code point).
pub const WHITE_SPACE_RANGES: [(u32, u32); 10] = [
    (0x9, 0xD),
    (0x20, 0x20),
    (0x85, 0x85),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
];

/// The ASCII punctuation (`char::is_ascii_punctuation`) as code point ranges.
pub const ASCII_PUNCTUATION_RANGES: [(u32, u32); 4] =
    [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)];

/// Which of BERT's two steps a program's step is, given the sorted, merged ranges of its
/// one-character class, its behavior and `invert`: 0 for the white space it removes, 1 for
/// the punctuation it isolates, None for neither.
pub fn is_bert_step(ranges: &[(u32, u32)], behavior: Behavior, invert: bool) -> Option<usize> {
    match (behavior, invert) {
        (Behavior::Removed, false) if ranges == WHITE_SPACE_RANGES => Some(0),
        (Behavior::Isolated, false) if ranges == punctuation_ranges().as_slice() => Some(1),
        _ => None,
    }
}

/// BERT's punctuation, sorted and merged.
fn punctuation_ranges() -> &'static Vec<(u32, u32)> {
    static RANGES: std::sync::OnceLock<Vec<(u32, u32)>> = std::sync::OnceLock::new();
    RANGES.get_or_init(|| {
        crate::code_points::union(&[
            &ASCII_PUNCTUATION_RANGES,
            crate::normalizers::hf_char_classes::PUNCTUATION_RANGES,
        ])
    })
}

/// Calls `emit(start, end)` for each piece of `text`, in order: each run of characters that
/// are neither white space nor punctuation, and each punctuation character.
#[inline]
pub fn bert_pieces(text: &str, mut emit: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let table = (!text.is_ascii()).then(BertChars::get);
    let mut word: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let (flags, width) = match bytes[i] {
            lead @ 0..=0x7F => (ASCII[usize::from(lead)], 1),
            _ => table.expect("text beyond ASCII").at(bytes, i),
        };
        if flags & (WHITE | PUNCT) == 0 {
            word.get_or_insert(i);
        } else {
            if let Some(start) = word.take() {
                emit(start, i);
            }
            if flags & PUNCT != 0 {
                emit(i, i + width);
            }
        }
        i += width;
    }
    if let Some(start) = word {
        emit(start, bytes.len());
    }
}

/// The pieces of `text` as the pipeline encodes them (see `HfProgram::spans`): None, with the
/// ends in `text`, when they cover it (no white space); else the text they make, each piece
/// after the one before, its ends in that text.
pub fn bert_spans(text: &str, ends: &mut Vec<usize>) -> Option<SpannedText> {
    let mut kept = String::with_capacity(text.len());
    let mut placed = Vec::with_capacity(text.len() / 4 + 1);
    let first = ends.len();
    bert_pieces(text, |start, end| {
        kept.push_str(&text[start..end]);
        ends.push(kept.len());
        placed.push((start, end, 0));
    });
    if kept.len() == text.len() {
        // No white space: the pieces tile the text, and their ends are the same in it.
        debug_assert!(ends[first..].iter().zip(&placed).all(|(&e, p)| e == p.1));
        return None;
    }
    Some(SpannedText {
        text: kept,
        pieces: placed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        bert_pieces(text, |start, end| out.push(&text[start..end]));
        out
    }

    #[test]
    fn white_space_goes_and_punctuation_stands_alone() {
        assert_eq!(
            pieces("Hello, world!  don't\u{3000}x\u{a0}y…z"),
            ["Hello", ",", "world", "!", "don", "'", "t", "x", "y", "…", "z"]
        );
        assert_eq!(pieces(" \t\n"), Vec::<&str>::new());
        assert_eq!(pieces("ab"), ["ab"]);
        assert_eq!(pieces("$+^`|~"), ["$", "+", "^", "`", "|", "~"]);
        // U+166D is punctuation in the crate's tables (it is So in later Unicode).
        assert_eq!(pieces("a\u{166d}b、c"), ["a", "\u{166d}", "b", "、", "c"]);
        assert_eq!(
            pieces("\u{1c}a\u{85}b"),
            ["\u{1c}a", "b"],
            "U+001C is not white space"
        );
    }

    #[test]
    fn spans_make_the_text_of_the_pieces() {
        let mut ends = Vec::new();
        let spanned = bert_spans("a b, c", &mut ends).unwrap();
        assert_eq!(
            (spanned.text.as_str(), ends.as_slice()),
            ("ab,c", &[1, 2, 3, 4][..])
        );
        assert_eq!(spanned.pieces, [(0, 1, 0), (2, 3, 0), (3, 4, 0), (5, 6, 0)]);
        let mut ends = Vec::new();
        assert!(bert_spans("a,b", &mut ends).is_none());
        assert_eq!(ends, [1, 2, 3]);
    }

    #[test]
    fn the_classes_are_rusts_white_space_and_the_crates_punctuation() {
        let table = BertChars::get();
        let inside =
            |ranges: &[(u32, u32)], cp: u32| ranges.iter().any(|&(a, b)| a <= cp && cp <= b);
        for c in (0..0x3400)
            .chain(0xFE00..0x1_0000)
            .filter_map(char::from_u32)
        {
            let cp = c as u32;
            assert_eq!(inside(&WHITE_SPACE_RANGES, cp), c.is_whitespace(), "{c:?}");
            assert_eq!(
                inside(punctuation_ranges(), cp),
                table.flags(cp) & PUNCT != 0,
                "{c:?}"
            );
        }
        assert!(!(0x1_0000..0x11_0000)
            .filter_map(char::from_u32)
            .any(char::is_whitespace));
        let (removed, isolated) = (Behavior::Removed, Behavior::Isolated);
        assert_eq!(is_bert_step(&WHITE_SPACE_RANGES, removed, false), Some(0));
        assert_eq!(is_bert_step(&WHITE_SPACE_RANGES, removed, true), None);
        assert_eq!(is_bert_step(&WHITE_SPACE_RANGES, isolated, false), None);
        assert_eq!(is_bert_step(punctuation_ranges(), isolated, false), Some(1));
        assert_eq!(
            is_bert_step(&punctuation_ranges()[1..], isolated, false),
            None
        );
    }
}
