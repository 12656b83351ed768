//! The `llamacpp-wordpiece` spanner: llama.cpp's words of a GGUF WordPiece (`bert`) vocabulary
//! (`llm_tokenizer_wpm_session::preprocess`), after its normalizer
//! ([`LlamaCppBertNormalizer`](crate::normalizers::llamacpp::LlamaCppBertNormalizer)); the twin
//! of the Python package's `wordsplit.spanners.llamacpp` (the specification; the tests hold the
//! two equal).
//!
//! White space (llama.cpp's 25 code points) ends a word and is dropped; a punctuation character
//! (Unicode 15.1's categories P, llama.cpp's table), an ASCII symbol (``$+<=>^`|~``) or a CJK
//! ideograph (llama.cpp's `is_chinese_char` blocks, with the start of CJK Extension E at
//! U+2B920 as HF's BERT has it) is a word alone. Each word is the piece `▁` + the word
//! (llama.cpp's "phantom space", which the vocabulary's first token of a word starts with): the
//! spanner gives the text its pieces make ([`SpannedText`]), each piece's prefix the `▁`.
//!
//! ```
//! use wordsplit::spanners::llamacpp::LlamaCppWordPieceSpanner;
//! use wordsplit::Spanner;
//! let mut ends = Vec::new();
//! let spanned = LlamaCppWordPieceSpanner.spans("hi, 世界 a+b", &mut ends).unwrap().unwrap();
//! assert_eq!(spanned.text, "▁hi▁,▁世▁界▁a▁+▁b");
//! assert_eq!(spanned.pieces[..2], [(0, 2, 3), (2, 3, 3)]);
//! ```

use std::sync::OnceLock;

use super::Spanner;
use crate::code_points::contains;
use crate::error::Error;
use crate::normalizers::llamacpp::WHITESPACE;
use crate::normalizers::llamacpp_tables::{PUNCTUATION, SYMBOL};
use crate::pipeline::SpannedText;

// llama.cpp's `is_chinese_char`: HF's BERT blocks (U+2B920, not U+2B820, starts the fifth).
use crate::normalizers::bert_chars::CJK_RANGES as CJK;

/// A character of a word.
const WORD: u8 = 0;
/// White space: ends a word, dropped.
const SPACE: u8 = 1;
/// Punctuation, an ASCII symbol or a CJK ideograph: a word alone.
const ALONE: u8 = 2;

/// The kind of a code point (`WORD`, `SPACE` or `ALONE`).
pub fn kind(cp: u32) -> u8 {
    if contains(&WHITESPACE, cp) {
        SPACE
    } else if contains(PUNCTUATION, cp)
        || cp < 0x7F && contains(SYMBOL, cp)
        || CJK.iter().any(|&(a, b)| (a..=b).contains(&cp))
    {
        ALONE
    } else {
        WORD
    }
}

/// [`kind`] of every code point of the Basic Multilingual Plane (made once per process).
fn bmp_kinds() -> &'static [u8] {
    static KINDS: OnceLock<Box<[u8]>> = OnceLock::new();
    KINDS.get_or_init(|| (0..0x10000u32).map(kind).collect())
}

/// llama.cpp's words of a GGUF WordPiece vocabulary, each with `▁` before it (see the module
/// docs).
pub struct LlamaCppWordPieceSpanner;

impl LlamaCppWordPieceSpanner {
    /// Calls `emit(start, end)` with the byte range of each word of `text`, in order.
    pub fn words(text: &str, mut emit: impl FnMut(usize, usize)) {
        let kinds = bmp_kinds();
        let mut word: Option<usize> = None;
        for (i, c) in text.char_indices() {
            let cp = c as u32;
            let class = match kinds.get(cp as usize) {
                Some(&class) => class,
                None => kind(cp),
            };
            if class == WORD {
                word.get_or_insert(i);
                continue;
            }
            if let Some(start) = word.take() {
                emit(start, i);
            }
            if class == ALONE {
                emit(i, i + c.len_utf8());
            }
        }
        if let Some(start) = word {
            emit(start, text.len());
        }
    }
}

impl Spanner for LlamaCppWordPieceSpanner {
    fn name(&self) -> &str {
        "llamacpp-wordpiece"
    }

    fn spans(&self, text: &str, ends: &mut Vec<usize>) -> Result<Option<SpannedText>, Error> {
        if text.is_empty() {
            return Ok(None);
        }
        const PREFIX: &str = "\u{2581}";
        let mut kept = String::with_capacity(text.len() + text.len() / 2);
        let mut pieces = Vec::new();
        Self::words(text, |start, end| {
            kept.push_str(PREFIX);
            kept.push_str(&text[start..end]);
            ends.push(kept.len());
            pieces.push((start, end, PREFIX.len()));
        });
        Ok(Some(SpannedText { text: kept, pieces }))
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<String> {
        let mut ends = Vec::new();
        let Some(spanned) = LlamaCppWordPieceSpanner.spans(text, &mut ends).unwrap() else {
            return Vec::new();
        };
        let mut start = 0;
        ends.iter()
            .map(|&end| {
                let piece = spanned.text[start..end].to_owned();
                start = end;
                piece
            })
            .collect()
    }

    #[test]
    fn words_split_at_white_space_and_alone_characters() {
        assert_eq!(
            split("hi, 世界 a+b\u{3000}é"),
            ["▁hi", "▁,", "▁世", "▁界", "▁a", "▁+", "▁b", "▁é"]
        );
        // ASCII symbols alone; others (a Sm beyond ASCII) in the word; ▁ is a word character
        assert_eq!(split("x$y±z▁w"), ["▁x", "▁$", "▁y±z▁w"]);
        // CJK Extension E starts at U+2B920: U+2B820 is a word character
        assert_eq!(split("\u{2b820}\u{2b920}"), ["▁\u{2b820}", "▁\u{2b920}"]);
        assert!(split("").is_empty());
        assert!(split(" \t\u{2028} ").is_empty());
    }

    #[test]
    fn spaced_text_places_each_piece() {
        let mut ends = Vec::new();
        let spanned = LlamaCppWordPieceSpanner
            .spans(" ab  c", &mut ends)
            .unwrap()
            .unwrap();
        assert_eq!(spanned.text, "▁ab▁c");
        assert_eq!(spanned.pieces, [(1, 3, 3), (5, 6, 3)]);
        assert_eq!(ends, [5, 9]);
        let spaces = LlamaCppWordPieceSpanner.spans("  ", &mut ends).unwrap();
        assert!(spaces.is_some_and(|s| s.text.is_empty() && s.pieces.is_empty()));
    }

    #[test]
    fn the_bmp_kinds_equal_the_lookups() {
        let kinds = bmp_kinds();
        for cp in 0..0x10000u32 {
            assert_eq!(kinds[cp as usize], kind(cp), "{cp:#x}");
        }
        assert_eq!(kind(0x3000), SPACE);
        assert_eq!(kind(u32::from('`')), ALONE);
        assert_eq!(kind(0x2B81F), ALONE);
    }
}
