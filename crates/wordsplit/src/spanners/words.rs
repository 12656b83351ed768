//! [`WordSpanner`]: the pre-tokenizers HF runs before a model that looks words up (WordPiece,
//! WordLevel), natively and without the regex engines, so that the WebAssembly module runs
//! them too.
//!
//! A tokenizer.json's pre-tokenizer is read into a split program ([`SpannerSpec::SplitProgram`],
//! the form the Python package writes and runs); the programs here are the ones HF's
//! pre-tokenizers make, each recognized by its exact steps ([`WordSpanner::of`]):
//!
//! | HF pre-tokenizer | program | pieces |
//! | --- | --- | --- |
//! | none | no step | the whole text |
//! | `BertPreTokenizer` | [`bert_steps`] | runs between white space and punctuation, each punctuation character ([`super::bert`]) |
//! | `Whitespace` | [`whitespace_steps`] | HF's `\w+\|[^\w\s]+`: runs of word characters, runs of the others that are not white space |
//! | `WhitespaceSplit` | [`whitespace_split_steps`] | runs between white space |
//! | `WhitespaceSplit` then `Metaspace` with `split` | [`whitespace_split_steps`], [`metaspace_cut_step`] | runs between white space, each cut before every replacement (`▁`) |
//! | CLIP's `Split` then `ByteLevel` | [`clip_steps`] | CLIP's pattern's matches ([`super::clip`]) |
//!
//! White space is dropped, so each spanner but the whole-text one gives the text its pieces
//! make ([`SpannedText`]) when it drops any. Word characters are Oniguruma's Unicode `\w` (the
//! engine HF's `Whitespace` runs on), as the Python package spells them
//! (`wordsplit.formats.hf.WORD_CLASS_INNER`): Alphabetic, Mark, Decimal_Number,
//! Connector_Punctuation and Join_Control, from the Unicode 16.0 tables of
//! [`crate::unicode_tables`]; white space is Unicode's White_Space.
//!
//! ```
//! use wordsplit::spanners::words::{whitespace_steps, WordSpanner};
//! use wordsplit::spec::SpannerSpec;
//! use wordsplit::Spanner;
//!
//! let spanner = WordSpanner::of(&SpannerSpec::SplitProgram(whitespace_steps())).unwrap();
//! let mut ends = Vec::new();
//! let spanned = spanner.spans("don't stop", &mut ends).unwrap().unwrap();
//! assert_eq!((spanned.text.as_str(), ends), ("don'tstop", vec![3, 4, 5, 9]));
//! ```

use std::sync::OnceLock;

use super::bert::{bert_spans, ASCII_PUNCTUATION_RANGES};
use super::clip::{clip_steps, ClipSpanner};
use super::Spanner;
use crate::code_points::{self, contains};
use crate::error::Error;
use crate::normalizers::hf_char_classes::PUNCTUATION_RANGES;
use crate::pipeline::SpannedText;
use crate::spec::{Behavior, SpannerSpec, SplitStep};
use crate::unicode_tables::{L, M, ND, NL, WHITE_SPACE};

/// HF's split at `char::is_whitespace`, which drops it (`WhitespaceSplit`, `BertPreTokenizer`'s
/// first step): the Python package's `WHITESPACE_STEP`.
pub const WHITE_SPACE_PATTERN: &str = r"\s";

/// The code points Oniguruma's `\w` has beyond `\p{L}\p{M}\p{Nd}\p{Nl}`: Connector_Punctuation,
/// Join_Control, and the circled, squared and negative squared Latin letters (Alphabetic So);
/// sorted.
const WORD_EXTRA: [(u32, u32); 11] = [
    (0x5F, 0x5F),
    (0x200C, 0x200D),
    (0x203F, 0x2040),
    (0x2054, 0x2054),
    (0x24B6, 0x24E9),
    (0xFE33, 0xFE34),
    (0xFE4D, 0xFE4F),
    (0xFF3F, 0xFF3F),
    (0x1F130, 0x1F149),
    (0x1F150, 0x1F169),
    (0x1F170, 0x1F189),
];

/// The inside of the word class as the Python package writes it (`WORD_CLASS_INNER`).
const WORD_CLASS_INNER: &str = concat!(
    r"\p{L}\p{M}\p{Nd}\p{Nl}_\x{203F}\x{2040}\x{2054}\x{FE33}\x{FE34}\x{FE4D}-\x{FE4F}\x{FF3F}",
    r"\x{200C}\x{200D}\x{24B6}-\x{24E9}\x{1F130}-\x{1F149}\x{1F150}-\x{1F169}\x{1F170}-\x{1F189}"
);

/// HF's `Whitespace` pattern `\w+|[^\w\s]+`, with `\w` spelled out (`WHITESPACE_PATTERN`).
pub fn whitespace_pattern() -> String {
    format!("[{WORD_CLASS_INNER}]+|[^{WORD_CLASS_INNER}\\s]+")
}

/// The class of HF's `Punctuation`: the ASCII punctuation, then General_Category P as the
/// crate `unicode_categories` 0.1.1 has it, each range a code point escape (the Python
/// package's `punctuation_class()`, character for character).
pub fn punctuation_class() -> String {
    let escape = |&(a, b): &(u32, u32)| {
        if a == b {
            format!("\\x{{{a:X}}}")
        } else {
            format!("\\x{{{a:X}}}-\\x{{{b:X}}}")
        }
    };
    let ranges = ASCII_PUNCTUATION_RANGES.iter().chain(PUNCTUATION_RANGES);
    format!("[{}]", ranges.map(escape).collect::<String>())
}

fn split(pattern: String, behavior: Behavior, invert: bool) -> SplitStep {
    SplitStep::Split {
        pattern,
        behavior,
        invert,
    }
}

/// `WhitespaceSplit`'s program: white space removed.
pub fn whitespace_split_steps() -> Vec<SplitStep> {
    vec![split(WHITE_SPACE_PATTERN.into(), Behavior::Removed, false)]
}

/// Metaspace's `split` after `WhitespaceSplit` (the Python package's cut in
/// `formats/hf_metaspace.py` `metaspace_spanner`): each piece cut before every `replacement`,
/// which starts the next piece (`MergedWithNext`).
pub fn metaspace_cut_step(replacement: char) -> SplitStep {
    split(
        format!("\\x{{{:X}}}", u32::from(replacement)),
        Behavior::MergedWithNext,
        false,
    )
}

/// `BertPreTokenizer`'s program: white space removed, then each punctuation character isolated.
pub fn bert_steps() -> Vec<SplitStep> {
    let mut steps = whitespace_split_steps();
    steps.push(split(punctuation_class(), Behavior::Isolated, false));
    steps
}

/// `Whitespace`'s program: everything but the pattern's matches removed.
pub fn whitespace_steps() -> Vec<SplitStep> {
    vec![split(whitespace_pattern(), Behavior::Removed, true)]
}

/// A word model's pre-tokenizer, run natively (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordSpanner {
    /// No pre-tokenizer: the text is one piece.
    Whole,
    /// `BertPreTokenizer`.
    Bert,
    /// `Whitespace`.
    Whitespace,
    /// `WhitespaceSplit`.
    WhitespaceSplit,
    /// `WhitespaceSplit` then Metaspace's `split` at this replacement (the Metaspace
    /// normalizer, which keeps the white space, put the replacements in).
    WhitespaceSplitMetaspace(char),
    /// CLIP's `Split`, then `ByteLevel`'s pattern (before its BPE over bytes).
    Clip,
}

impl WordSpanner {
    /// The spanner that runs `spec`, or None when it is not one of the programs above.
    pub fn of(spec: &SpannerSpec) -> Option<Self> {
        let SpannerSpec::SplitProgram(steps) = spec else {
            return None;
        };
        if let [white_space, SplitStep::Split { pattern, .. }] = steps.as_slice() {
            let replacement = pattern
                .strip_prefix("\\x{")
                .and_then(|hex| hex.strip_suffix('}'))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .and_then(char::from_u32);
            if let Some(replacement) = replacement {
                let program = [
                    whitespace_split_steps()[0].clone(),
                    metaspace_cut_step(replacement),
                ];
                if [white_space.clone(), steps[1].clone()] == program {
                    return Some(Self::WhitespaceSplitMetaspace(replacement));
                }
            }
        }
        [
            (Vec::new(), Self::Whole),
            (bert_steps(), Self::Bert),
            (whitespace_steps(), Self::Whitespace),
            (whitespace_split_steps(), Self::WhitespaceSplit),
            (clip_steps(), Self::Clip),
        ]
        .into_iter()
        .find(|(program, _)| program == steps)
        .map(|(_, spanner)| spanner)
    }

    /// The HF pre-tokenizer it is (for messages).
    pub fn hf_name(self) -> &'static str {
        match self {
            Self::Whole => "none",
            Self::Bert => "BertPreTokenizer",
            Self::Whitespace => "Whitespace",
            Self::WhitespaceSplit => "WhitespaceSplit",
            Self::WhitespaceSplitMetaspace(_) => "WhitespaceSplit then Metaspace",
            Self::Clip => "CLIP's Split then ByteLevel",
        }
    }
}

/// What a character is to these spanners.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Word,
    Space,
    Other,
}

/// The word class, sorted and merged.
fn word_ranges() -> &'static [(u32, u32)] {
    static RANGES: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    RANGES.get_or_init(|| code_points::union(&[L, M, ND, NL, &WORD_EXTRA[..]]))
}

fn kind_of(c: char) -> Kind {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() || c == '_' {
            Kind::Word
        } else if c.is_ascii_whitespace() || c == '\u{b}' {
            Kind::Space
        } else {
            Kind::Other
        };
    }
    let cp = c as u32;
    if contains(word_ranges(), cp) {
        Kind::Word
    } else if contains(WHITE_SPACE, cp) {
        Kind::Space
    } else {
        Kind::Other
    }
}

/// Calls `emit(start, end)` for each run of characters of one kind other than white space;
/// with `one_kind`, every character that is not white space counts as one kind
/// (`WhitespaceSplit`); each run cut before every `cut` character after its start
/// (Metaspace's `split`, `MergedWithNext`).
fn runs(text: &str, one_kind: bool, cut: Option<char>, mut emit: impl FnMut(usize, usize)) {
    let mut emit = |start: usize, end: usize| {
        let mut from = start;
        if let Some(cut) = cut {
            for (at, c) in text[start..end].char_indices().skip(1) {
                if c == cut {
                    emit(from, start + at);
                    from = start + at;
                }
            }
        }
        emit(from, end);
    };
    let mut run: Option<(usize, Kind)> = None;
    for (at, c) in text.char_indices() {
        let kind = match kind_of(c) {
            Kind::Other if one_kind => Kind::Word,
            kind => kind,
        };
        match run {
            Some((_, current)) if current == kind => continue,
            Some((start, current)) if current != Kind::Space => emit(start, at),
            _ => {}
        }
        run = Some((at, kind));
    }
    if let Some((start, kind)) = run {
        if kind != Kind::Space {
            emit(start, text.len());
        }
    }
}

/// The pieces `runs` finds as the pipeline takes them (as [`bert_spans`] gives BERT's).
fn run_spans(
    text: &str,
    one_kind: bool,
    cut: Option<char>,
    ends: &mut Vec<usize>,
) -> Option<SpannedText> {
    let mut kept = String::with_capacity(text.len());
    let mut placed = Vec::new();
    runs(text, one_kind, cut, |start, end| {
        kept.push_str(&text[start..end]);
        ends.push(kept.len());
        placed.push((start, end, 0));
    });
    (kept.len() != text.len()).then_some(SpannedText {
        text: kept,
        pieces: placed,
    })
}

impl Spanner for WordSpanner {
    fn name(&self) -> &str {
        match self {
            Self::Whole => "whole-text",
            Self::Bert => "bert-pre-tokenizer",
            Self::Whitespace => "whitespace",
            Self::WhitespaceSplit => "whitespace-split",
            Self::WhitespaceSplitMetaspace(_) => "whitespace-split-metaspace",
            Self::Clip => ClipSpanner.name(),
        }
    }

    fn spans(&self, text: &str, ends: &mut Vec<usize>) -> Result<Option<SpannedText>, Error> {
        Ok(match self {
            Self::Whole => {
                if !text.is_empty() {
                    ends.push(text.len());
                }
                None
            }
            Self::Bert => bert_spans(text, ends),
            Self::Whitespace => run_spans(text, false, None, ends),
            Self::WhitespaceSplit => run_spans(text, true, None, ends),
            Self::WhitespaceSplitMetaspace(cut) => run_spans(text, true, Some(*cut), ends),
            Self::Clip => return ClipSpanner.spans(text, ends),
        })
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
