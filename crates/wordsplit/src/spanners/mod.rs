//! Hand-written pre-tokenizer scanners: exact, fast replacements for known split regexes.
//!
//! A spanner cuts text into pieces: the successive leftmost-first matches of the
//! tokenizer's split pattern (tiktoken's `find_iter`), which for these patterns cover the
//! whole text. Each scanner here is registered against the exact pattern strings it was
//! checked equal to (against fancy-regex, the engine tiktoken uses, with Unicode 16.0
//! tables): [`scanner_for_pattern`] returns one only for those strings, so any other
//! pattern, even a near-identical one, falls back to the general regex path.
//!
//! Scanners work on the UTF-8 bytes, classify characters through [`classes`] (Unicode
//! 16.0, from [`crate::unicode_tables`]), never allocate per piece, and run in time linear
//! in the text (no backtracking over long runs: every run is scanned a bounded number of
//! times).
//!
//! | scanner | patterns |
//! | --- | --- |
//! | `gpt2-scanner` | GPT-2/r50k/p50k, tiktoken's possessive spelling and the original |
//! | `cl100k-scanner` | cl100k, tiktoken's spelling and the original (these two differ on a trailing `"\n "`; the scanner is configured per spelling) |
//! | `qwen2-scanner` | Qwen2/Qwen3 (cl100k original with one digit per number piece) |
//! | `o200k-scanner` | o200k (one spelling) |
//!
//! Any other pattern runs on [`RegexSpanner`] (spanner `regex`), llama.cpp-style sequences of
//! patterns on [`RegexSequence`], and HuggingFace `Split` programs (which may delete text or
//! insert a space) on [`HfProgram`], which runs BERT's program of two steps as one scan
//! ([`bert`]). These need the crate's `regex` feature (on by default):
//! without it (the WebAssembly module, whose readers only give scanners' patterns) they are
//! types without values whose constructors refuse every pattern, and the regex engines are not
//! compiled in.

pub mod bert;
mod blocks;
pub mod cl100k;
mod cl100k_blocks;
pub mod classes;
pub mod clip;
pub mod gpt2;
#[cfg(feature = "regex")]
pub mod hf_program;
pub mod llamacpp;
pub mod o200k;
mod o200k_blocks;
#[cfg(feature = "regex")]
pub mod regex;
pub mod sentencepiece;
#[cfg(not(feature = "regex"))]
mod without_regex;
pub mod words;

pub use cl100k::Cl100kScanner;
pub use gpt2::Gpt2Scanner;
#[cfg(feature = "regex")]
pub use hf_program::HfProgram;
pub use o200k::O200kScanner;
#[cfg(feature = "regex")]
pub use regex::{RegexSequence, RegexSpanner};
#[cfg(not(feature = "regex"))]
pub use without_regex::{HfProgram, RegexSequence, RegexSpanner};

/// Why a regex split stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum SplitError {
    /// No match starts at this byte offset: the pattern does not cover the text (the matches
    /// alone would drop that text; the split raises instead).
    Gap(usize),
    /// fancy-regex gave up (not expected: it runs without a backtracking limit).
    Engine(String),
}

/// A spanner stage: cuts text into the pieces the encoder merges separately.
///
/// The native spanners are matched on directly by the pipeline; this trait is what a spanner
/// supplied from outside the core implements (a Python plug-in, through the bindings). Every
/// [`Scanner`] is one too.
pub trait Spanner: Send + Sync {
    /// The name it is registered under (for messages).
    fn name(&self) -> &str;

    /// The pieces of `text`: appends to `ends` the end byte offset of each (as
    /// [`Scanner::split`]) and returns None when they cover `text`; a spanner that drops or
    /// inserts text returns the text its pieces make instead, `ends` then being offsets in
    /// it. Err when it fails, or breaks this contract (a [`crate::Error::Component`]).
    fn spans(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<crate::pipeline::SpannedText>, crate::Error>;

    /// Whether it runs in the core (a native spanner given as a trait object, such as
    /// [`sentencepiece::SentencePieceSpanner`]): then a pipeline using it calls nothing
    /// outside the core.
    fn is_native(&self) -> bool {
        false
    }

    /// This spanner as the core's SentencePiece spanner (see
    /// [`crate::normalizers::Normalizer::sentencepiece`]); None for every other.
    fn sentencepiece(&self) -> Option<&sentencepiece::SentencePieceSpanner> {
        None
    }
}

impl<S: Scanner + ?Sized> Spanner for S {
    fn name(&self) -> &str {
        Scanner::name(self)
    }

    fn spans(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<crate::pipeline::SpannedText>, crate::Error> {
        self.split(text, ends);
        Ok(None)
    }
}

/// A hand-written scanner: cuts any text into pieces that cover it, and cannot fail.
pub trait Scanner: Send + Sync {
    /// The scanner's name, e.g. `"gpt2-scanner"`.
    fn name(&self) -> &'static str;

    /// Appends to `out` the end byte offset of each piece of `text`, in order: the first
    /// piece starts at 0, each next one where the previous ended, and the last ends at
    /// `text.len()` (nothing is pushed for an empty text). Offsets are on char boundaries.
    fn split(&self, text: &str, out: &mut Vec<usize>);

    /// This scanner as one of the core's own, whose pieces a caller can take one at a time
    /// as they are found ([`PieceScanner::each_end`]); None for others.
    fn byte_level(&self) -> Option<ByteLevelScanner<'_>> {
        None
    }
}

/// The core's byte-level scanners, by type, so that a loop over their pieces is compiled
/// for each ([`PieceScanner::each_end`]: no dynamic call per piece).
#[derive(Clone, Copy)]
pub enum ByteLevelScanner<'a> {
    Gpt2(&'a Gpt2Scanner),
    Cl100k(&'a Cl100kScanner),
    O200k(&'a O200kScanner),
}

/// A scanner whose pieces can be taken one at a time ([`PieceScanner::each_end`]).
pub trait PieceScanner: Copy {
    /// The end of the piece of `b` starting at `i < b.len()`.
    fn piece_end(self, t: &classes::CharTable, b: &[u8], i: usize) -> usize;

    /// Calls `each` with the end of each piece of `text`, in order (the ends
    /// [`Scanner::split`] appends); stops at the first error. The ends of
    /// [`Self::each_window`], one at a time.
    #[inline(always)]
    fn each_end<E>(
        self,
        text: &str,
        mut each: impl FnMut(usize) -> Result<(), E>,
    ) -> Result<(), E> {
        self.each_window(text, |base, ends| each_bit(base, ends, &mut each))
    }

    /// The ends of [`Self::each_end`], in order, a window at a time: `each(base, ends)`
    /// for each window, where bit `i` of `ends` set is the end `base + i` (`ends` is not 0).
    /// By default [`Self::piece_end`] from each end to the next, one end per call; a
    /// scanner that finds its pieces 64 bytes at a time overrides it, giving a window's ends
    /// at once, for the piece loop to make their keys together.
    #[inline(always)]
    fn each_window<E>(
        self,
        text: &str,
        mut each: impl FnMut(usize, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let t = classes::CharTable::get();
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            i = self.piece_end(t, b, i);
            each(i, 1)?;
        }
        Ok(())
    }
}

/// Calls `each` with `base + i` for each bit `i` set in `ends`, lowest first.
#[inline(always)]
pub(crate) fn each_bit<E>(
    base: usize,
    mut ends: u64,
    mut each: impl FnMut(usize) -> Result<(), E>,
) -> Result<(), E> {
    while ends != 0 {
        each(base + ends.trailing_zeros() as usize)?;
        ends &= ends - 1;
    }
    Ok(())
}

/// The pieces of `text` ending at `ends` (the ends a spanner appends, in order), as slices.
///
/// ```
/// let pieces: Vec<&str> = wordsplit::spanners::pieces_at("hello world", &[5, 11]).collect();
/// assert_eq!(pieces, ["hello", " world"]);
/// ```
pub fn pieces_at<'a>(text: &'a str, ends: &'a [usize]) -> impl Iterator<Item = &'a str> + 'a {
    let mut start = 0;
    ends.iter().map(move |&end| {
        let piece = &text[start..end];
        start = end;
        piece
    })
}

/// Appends to `out` the end of each piece of `text` as `scanner`'s
/// [`PieceScanner::each_end`] finds them: [`Scanner::split`] of the scanners that find their
/// pieces a block at a time.
pub(crate) fn split_by_each_end(scanner: impl PieceScanner, text: &str, out: &mut Vec<usize>) {
    let result = scanner.each_end(text, |end| {
        out.push(end);
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(()) = result;
}

/// Runs `piece_end` from offset 0 to `len`, appending each piece's end to `out`.
///
/// The ends are written into `out`'s spare capacity, a batch at a time, instead of by
/// `push`: the loop then checks one counter per piece rather than the vector's length
/// against its capacity and storing the new length back. Every piece is at least one byte
/// long, so a batch never writes more than `len - i` ends.
#[inline(always)]
pub(crate) fn split_with(
    len: usize,
    out: &mut Vec<usize>,
    mut piece_end: impl FnMut(usize) -> usize,
) {
    let mut i = 0;
    while i < len {
        // About one end per 4 bytes of text, the density of prose and code, once the
        // capacity the caller made (the pipeline's is that) runs low: reserving more while
        // it lasts would reallocate the whole vector for text whose pieces are long (1 MiB
        // of spaces is one piece, and would pay for a 4 MB reallocation).
        if out.capacity() - out.len() < 16 {
            out.reserve((len - i) / 4 + 16);
        }
        let mut written = 0;
        for slot in out.spare_capacity_mut() {
            i = piece_end(i);
            slot.write(i);
            written += 1;
            if i >= len {
                break;
            }
        }
        // SAFETY: the first `written` slots of the spare capacity were just initialized.
        unsafe { out.set_len(out.len() + written) };
    }
}

// The patterns and which scanner is proven for each: generated from the crate's
// data/registered.json, the one source both languages read.
pub use crate::names::{
    CL100K_ORIGINAL_PATTERN, CL100K_PATTERN, GPT2_ORIGINAL_PATTERN, GPT2_PATTERN, O200K_PATTERN,
    QWEN2_PATTERN, SCANNER_PATTERNS,
};

/// The scanner registered for exactly `pattern` (byte-for-byte), or `None`.
pub fn scanner_for_pattern(pattern: &str) -> Option<Box<dyn Scanner>> {
    Some(match pattern {
        GPT2_PATTERN | GPT2_ORIGINAL_PATTERN => Box::new(Gpt2Scanner),
        CL100K_PATTERN => Box::new(Cl100kScanner::CL100K_TIKTOKEN),
        CL100K_ORIGINAL_PATTERN => Box::new(Cl100kScanner::CL100K_ORIGINAL),
        QWEN2_PATTERN => Box::new(Cl100kScanner::QWEN2),
        O200K_PATTERN => Box::new(O200kScanner),
        _ => return None,
    })
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::Scanner;

    /// The pieces `spanner` cuts `text` into, checking the offsets' invariants.
    pub fn pieces<'t>(spanner: &dyn Scanner, text: &'t str) -> Vec<&'t str> {
        let mut ends = Vec::new();
        spanner.split(text, &mut ends);
        let mut start = 0;
        let mut out = Vec::new();
        for &end in &ends {
            assert!(end > start, "empty or backward piece in {text:?}");
            out.push(&text[start..end]);
            start = end;
        }
        assert_eq!(start, text.len(), "pieces do not cover {text:?}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_with_keeps_the_callers_capacity_while_it_lasts() {
        // One piece of 1 MiB (a run of spaces): the pipeline's len / 4 + 1 ends are plenty.
        let len = 1 << 20;
        let mut ends = Vec::with_capacity(len / 4 + 1);
        let capacity = ends.capacity();
        split_with(len, &mut ends, |_| len);
        assert_eq!((ends.as_slice(), ends.capacity()), (&[len][..], capacity));
        // One-byte pieces beyond the capacity still all get their ends.
        let mut ends = Vec::with_capacity(3);
        split_with(100, &mut ends, |i| i + 1);
        assert_eq!(ends, (1..=100).collect::<Vec<_>>());
        let mut ends = Vec::new();
        split_with(5, &mut ends, |i| i + 1);
        assert_eq!(ends, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn registry() {
        for &(name, pattern) in SCANNER_PATTERNS {
            let scanner = scanner_for_pattern(pattern).expect(pattern);
            assert_eq!(scanner.name(), name);
        }
        assert!(scanner_for_pattern(r"\p{L}+|\p{N}|\s+").is_none());
        // One character off is not the same pattern.
        assert!(scanner_for_pattern(&GPT2_PATTERN.replace("++", "+")).is_none());
        assert!(scanner_for_pattern("").is_none());
    }

    #[test]
    fn patterns_are_the_published_strings() {
        // The o200k pattern is the "|"-join of its seven alternatives.
        assert_eq!(O200K_PATTERN.split('|').count(), 7 + 2 * 6);
        assert!(O200K_PATTERN.starts_with(r"[^\r\n\p{L}\p{N}]?[\p{Lu}"));
        assert!(O200K_PATTERN.ends_with(r"|\s*[\r\n]+|\s+(?!\S)|\s+"));
        let cl = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|";
        assert!(CL100K_ORIGINAL_PATTERN.starts_with(cl));
        assert_eq!(
            QWEN2_PATTERN,
            CL100K_ORIGINAL_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")
        );
    }

    #[test]
    fn pieces_cover_text_and_reuse_the_buffer() {
        let text = "Hello, wörld! 123 \u{301}x\n\n  ";
        for &(_, pattern) in SCANNER_PATTERNS {
            let scanner = scanner_for_pattern(pattern).unwrap();
            let mut out = vec![7usize];
            scanner.split(text, &mut out);
            assert_eq!(out[0], 7, "split appends, it does not clear");
            assert_eq!(*out.last().unwrap(), text.len());
            assert!(out[1..].windows(2).all(|w| w[0] < w[1]));
            assert!(out[1..].iter().all(|&e| text.is_char_boundary(e)));
        }
    }
}
