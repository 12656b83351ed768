//! CLIP's pre-tokenizer, natively and without the regex engines (so that the WebAssembly
//! module runs it too): the split program the Python package reads from CLIP's tokenizer.json
//! ([`clip_steps`]), HF's `Split` of CLIP's pattern (`Removed`, `invert`: its matches kept,
//! the rest dropped) and then `ByteLevel`'s GPT-2 pattern (`Isolated`) on each match.
//!
//! **The first step.** At each place Oniguruma tries the pattern's alternatives in order:
//! the two special tokens' text, the contractions `'s 't 're 've 'm 'll 'd`, a run of
//! letters (`\p{L}+`), one number character (`\p{N}`), a run of characters that are none of
//! white space, letters and numbers. Only white space (Unicode's White_Space, Oniguruma's
//! `\s`) matches none, so the text between matches, which the step drops, is white space.
//!
//! **The second step.** GPT-2's pattern finds each first-step match whole but the special
//! tokens' text: a run of letters is ` ?\p{L}+` from its start, a number character
//! ` ?\p{N}+`, a run of other characters ` ?[^\s\p{L}\p{N}]+` (its contraction alternatives
//! need a letter, which such a run lacks), a contraction itself; `<|endoftext|>` is cut into
//! `<|`, `endoftext` and `|>`.
//!
//! The classes are the Unicode 16.0 tables of [`crate::unicode_tables`], the ones the Python
//! package's translation of the pattern spells out for the regex spanner (tested equal to it
//! on random text below, and to HF through the files' goldens).
//!
//! ```
//! use wordsplit::spanners::clip::{clip_steps, ClipSpanner};
//! use wordsplit::Spanner;
//!
//! let mut ends = Vec::new();
//! let spanned = ClipSpanner.spans("it's a<|endoftext|>!?  42", &mut ends).unwrap().unwrap();
//! assert_eq!(spanned.text, "it'sa<|endoftext|>!?42");
//! assert_eq!(ends, [2, 4, 5, 7, 16, 18, 20, 21, 22]);
//! assert_eq!(clip_steps().len(), 2);
//! ```

use super::Spanner;
use crate::code_points::contains;
use crate::error::Error;
use crate::formats::named_table::GPT2_ORIGINAL_PATTERN;
use crate::pipeline::SpannedText;
use crate::spec::{Behavior, SplitStep};
use crate::unicode_tables::{L, N, WHITE_SPACE};

/// The pattern of CLIP's `Split` pre-tokenizer, as its tokenizer.json spells it.
pub const CLIP_PATTERN: &str =
    r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+";

/// The special tokens' text the first step matches whole (and the second cuts in three).
const SPECIALS: [&str; 2] = ["<|startoftext|>", "<|endoftext|>"];
/// The contractions, in the pattern's order.
const CONTRACTIONS: [&str; 7] = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"];

/// CLIP's program: its `Split` (`Removed`, `invert`), then ByteLevel's GPT-2 pattern
/// (`Isolated`), as the Python package writes a tokenizer.json's `Split` then `ByteLevel`.
pub fn clip_steps() -> Vec<SplitStep> {
    vec![
        SplitStep::Split {
            pattern: CLIP_PATTERN.into(),
            behavior: Behavior::Removed,
            invert: true,
        },
        SplitStep::Split {
            pattern: GPT2_ORIGINAL_PATTERN.into(),
            behavior: Behavior::Isolated,
            invert: false,
        },
    ]
}

/// What a character is to the pattern.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Space,
    Letter,
    Number,
    Other,
}

fn kind_of(c: char) -> Kind {
    let cp = c as u32;
    if c.is_ascii() {
        return if c.is_ascii_alphabetic() {
            Kind::Letter
        } else if c.is_ascii_digit() {
            Kind::Number
        } else if matches!(c, '\t'..='\r' | ' ') {
            Kind::Space
        } else {
            Kind::Other
        };
    }
    if contains(L, cp) {
        Kind::Letter
    } else if contains(N, cp) {
        Kind::Number
    } else if contains(WHITE_SPACE, cp) {
        Kind::Space
    } else {
        Kind::Other
    }
}

/// The end of the run of characters of `kind` that starts at `at`.
fn run_end(text: &str, at: usize, kind: Kind) -> usize {
    text[at..]
        .char_indices()
        .find(|&(_, c)| kind_of(c) != kind)
        .map_or(text.len(), |(i, _)| at + i)
}

/// Calls `emit(start, end)` for each piece of the program, in order.
fn pieces(text: &str, mut emit: impl FnMut(usize, usize)) {
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        let rest = &text[at..];
        if let Some(special) = SPECIALS.iter().find(|s| rest.starts_with(*s)) {
            // (the second step: "<|", the name, "|>")
            let end = at + special.len();
            emit(at, at + 2);
            emit(at + 2, end - 2);
            emit(end - 2, end);
            at = end;
            continue;
        }
        if let Some(contraction) = CONTRACTIONS.iter().find(|s| rest.starts_with(*s)) {
            emit(at, at + contraction.len());
            at += contraction.len();
            continue;
        }
        let end = match kind_of(c) {
            Kind::Space => {
                at += c.len_utf8();
                continue;
            }
            Kind::Number => at + c.len_utf8(),
            kind => run_end(text, at, kind),
        };
        emit(at, end);
        at = end;
    }
}

/// CLIP's pre-tokenizer (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClipSpanner;

impl Spanner for ClipSpanner {
    fn name(&self) -> &str {
        "clip-pre-tokenizer"
    }

    fn spans(&self, text: &str, ends: &mut Vec<usize>) -> Result<Option<SpannedText>, Error> {
        let mut kept = String::with_capacity(text.len());
        let mut placed = Vec::new();
        pieces(text, |start, end| {
            kept.push_str(&text[start..end]);
            ends.push(kept.len());
            placed.push((start, end, 0));
        });
        Ok((kept.len() != text.len()).then_some(SpannedText {
            text: kept,
            pieces: placed,
        }))
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(all(test, feature = "regex"))]
#[path = "clip_tests.rs"]
mod tests;
