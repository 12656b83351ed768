//! The o200k pre-tokenizer (GPT-4o), as a hand-written scanner.
//!
//! Replaces, with identical splits, the "|"-join of
//!
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//! 5. `\s*[\r\n]+`, 6. `\s+(?!\S)`, 7. `\s+`
//!
//! (tiktoken's o200k_base spelling; it has no possessive rewrite). Write P for
//! `[^\r\n\p{L}\p{N}]`, U for the first bracket (Lu Lt Lm Lo M), W for the second (Ll Lm
//! Lo M), B = U ∩ W = Lm Lo M, and C for the case-insensitive contraction group. P
//! contains the marks, so a mark can be the prefix and also part of the U/W runs, which is
//! where the backtracking order becomes visible. The scanner replays that order exactly: at each position it tries
//!
//! * alternative 1 with the prefix (when the first character is P), then without it (a
//!   greedy `?` tries the longer option first). With the letters starting at `s`: `U*`
//!   takes the maximal U run `s..u`; if the character at `u` is W the `W+` takes the
//!   maximal W run from there. Otherwise `U*` gives back characters one at a time until a
//!   W character follows it, i.e. `W+` starts at the LAST B character of the run and
//!   stops right after it (the next character is Lu/Lt, or the one at `u`, neither W).
//!   With no B in the run the alternative fails. The optional `C` then takes a contraction
//!   if one follows (it cannot fail, so nothing earlier is revisited). E.g. a mark followed
//!   by `"A"` and then a non-letter matches only the mark here (without the prefix: the
//!   mark is the last B), even though alternative 2 would have matched both.
//! * alternative 2 with the prefix, then without: the maximal U run (at least one
//!   character), then the maximal W run (possibly empty), then an optional contraction.
//! * alternative 3: up to three numbers.
//! * alternative 4: a space then O (O is `[^\s\p{L}\p{N}]`, marks included), or O itself,
//!   then the maximal O run, then the maximal run of `\r`, `\n`, `/` (O and `[\r\n]` are
//!   disjoint, and backtracking into O+ cannot help a `*` that always matches).
//! * alternatives 5-7 on white space, exactly as cl100k's original spelling (see
//!   [`super::cl100k`]): up to the last CR/LF of the white-space run; else the run if it
//!   ends the text; else the run minus its last character when that leaves one; else one
//!   character.
//!
//! Every character is matched by some alternative, so the pieces cover the text.

use super::cl100k::space_piece_end;
use super::classes::{
    self, CharTable, FAST, F_ALPHA, F_APOSTROPHE, F_ASCII, F_PREFIX, F_PUNCT, F_SPACE, LETTER,
    LOWERISH, NUMBER, UPPERISH, WS,
};
use super::Scanner;

/// The o200k scanner (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct O200kScanner;

impl super::PieceScanner for &O200kScanner {
    #[inline(always)]
    fn piece_end(self, t: &CharTable, b: &[u8], i: usize) -> usize {
        piece_end(t, b, i)
    }

    /// The same ends as `piece_end`, found 64 bytes at a time with whole-word bit
    /// operations where no character of both of o200k's letter brackets is right before an
    /// uppercase letter and every mark follows a letter (the `o200k_blocks` module).
    #[inline(always)]
    fn each_window<E>(
        self,
        text: &str,
        each: impl FnMut(usize, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        super::o200k_blocks::each_window(text, each)
    }
}

impl Scanner for O200kScanner {
    fn name(&self) -> &'static str {
        "o200k-scanner"
    }

    fn split(&self, text: &str, out: &mut Vec<usize>) {
        super::split_by_each_end(self, text, out);
    }

    fn byte_level(&self) -> Option<super::ByteLevelScanner<'_>> {
        Some(super::ByteLevelScanner::O200k(self))
    }
}

/// The end of the piece starting at `i < b.len()`: the reference the block scanner
/// ([`super::o200k_blocks`]) is tested against, and its scanner where a letter of both of
/// o200k's letter brackets (Lm, Lo, a mark) is right before an uppercase one, or a mark
/// follows no letter.
#[inline(always)]
pub(super) fn piece_end(t: &CharTable, b: &[u8], i: usize) -> usize {
    let c0 = b[i];
    // ASCII fast paths for the common pieces, decided from one table load per byte: an
    // ASCII letter run, or a space / ASCII punctuation prefix followed by ASCII letters,
    // ending on an ASCII byte. Same result as the general path: ASCII letters are Lu or Ll
    // only (no B), so the word is `[A-Z]*[a-z]+` (alternative 1) or `[A-Z]+[a-z]*`
    // (alternative 2). Then ASCII punctuation runs (",", ". ", " (", "();"), which the
    // general path reaches only after trying both word alternatives twice.
    let f0 = FAST[c0 as usize];
    if f0 & F_ALPHA != 0 {
        if let Some(end) = ascii_word(b, i) {
            return end;
        }
    } else if f0 & (F_PREFIX | F_SPACE | F_APOSTROPHE) != 0 && i + 1 < b.len() {
        let f1 = FAST[b[i + 1] as usize];
        if f1 & F_ALPHA != 0 {
            if let Some(end) = ascii_word(b, i + 1) {
                return end;
            }
        } else if f0 & (F_PUNCT | F_APOSTROPHE) != 0 && f1 & F_ASCII != 0 {
            // `c0` is O (an apostrophe too: o200k's contractions only follow letters) and
            // `c1` an ASCII non-letter: alternatives 1-3 fail, 4 applies.
            return tail_run(b, t.run_not(b, i + 1, WS | LETTER | NUMBER));
        } else if f0 & F_SPACE != 0 && f1 & (F_PUNCT | F_APOSTROPHE) != 0 {
            // A space then O: alternative 4 with the space.
            return tail_run(b, t.run_not(b, i + 2, WS | LETTER | NUMBER));
        }
    }
    general_piece_end(t, b, i)
}

/// [`piece_end`] for the pieces its fast paths leave. Kept out of line: the fast paths
/// then inline into the split loop, instead of the whole scanner becoming one function
/// call per piece.
#[inline(never)]
fn general_piece_end(t: &CharTable, b: &[u8], i: usize) -> usize {
    let c0 = b[i];
    let (class0, len0) = t.at(b, i);
    let is_prefix = class0 & (LETTER | NUMBER) == 0 && c0 != b'\r' && c0 != b'\n';
    let starts_word = class0 & (UPPERISH | LOWERISH) != 0;
    let after = i + len0;
    // 1. Prefix? U* W+ C?
    if is_prefix {
        if let Some(end) = upper_lower(t, b, after) {
            return end;
        }
    }
    if starts_word {
        if let Some(end) = upper_lower(t, b, i) {
            return end;
        }
    }
    // 2. Prefix? U+ W* C?
    if is_prefix {
        if let Some(end) = upper_then_lower(t, b, after) {
            return end;
        }
    }
    if starts_word {
        if let Some(end) = upper_then_lower(t, b, i) {
            return end;
        }
    }
    // 3. Numbers.
    if class0 & NUMBER != 0 {
        return t.run_at_most(b, after, NUMBER, 2);
    }
    // 4. ` ?O+[\r\n/]*`.
    if class0 & WS == 0 {
        return tail_run(b, t.run_not(b, after, WS | LETTER | NUMBER));
    }
    if c0 == b' ' && after < b.len() {
        let (class1, len1) = t.at(b, after);
        if class1 & (WS | LETTER | NUMBER) == 0 {
            return tail_run(b, t.run_not(b, after + len1, WS | LETTER | NUMBER));
        }
    }
    // 5-7. White space.
    space_piece_end(t, b, i, len0, false)
}

/// `U* W+ C?` at `s`: the end of the match, or `None`.
#[inline(always)]
fn upper_lower(t: &CharTable, b: &[u8], s: usize) -> Option<usize> {
    let mut j = s;
    let mut after_last_b = None; // just after the last U∩W character of the U run
    while j < b.len() {
        let (class, len) = t.at(b, j);
        if class & UPPERISH == 0 {
            if class & LOWERISH != 0 {
                // `W+` from `j` (the character is Ll): its maximal run.
                let end = t.run(b, j + len, LOWERISH);
                return Some(contraction_end(b, end));
            }
            break;
        }
        j += len;
        if class & LOWERISH != 0 {
            after_last_b = Some(j);
        }
    }
    after_last_b.map(|end| contraction_end(b, end))
}

/// `U+ W* C?` at `s`: the end of the match, or `None`.
#[inline(always)]
fn upper_then_lower(t: &CharTable, b: &[u8], s: usize) -> Option<usize> {
    let u = t.run(b, s, UPPERISH);
    if u == s {
        return None;
    }
    let end = t.run(b, u, LOWERISH);
    Some(contraction_end(b, end))
}

/// `end` extended by the optional case-insensitive contraction that may follow it.
#[inline(always)]
fn contraction_end(b: &[u8], end: usize) -> usize {
    if end < b.len() && b[end] == b'\'' {
        classes::contraction(b, end, true).unwrap_or(end)
    } else {
        end
    }
}

/// The end of the run of `\r`, `\n` and `/` starting at `i`.
#[inline(always)]
fn tail_run(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b'\r' | b'\n' | b'/') {
        i += 1;
    }
    i
}

/// ASCII-only fast path: the piece whose ASCII letters start at `s` (after at most one
/// prefix character), if the byte after the word (if any) is ASCII. `None` means "use the
/// general path".
#[inline(always)]
fn ascii_word(b: &[u8], s: usize) -> Option<usize> {
    // `[A-Z]*` then `[a-z]+` (alternative 1), else `[A-Z]+[a-z]*` (alternative 2): both
    // are "uppercase run, then lowercase run", with at least one letter in all.
    let mut j = s;
    while j < b.len() && b[j].is_ascii_uppercase() {
        j += 1;
    }
    let j = classes::ascii_lower_end(b, j);
    if j < b.len() && b[j] >= 0x80 {
        return None; // a non-ASCII letter or mark may continue the word
    }
    Some(contraction_end(b, j))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::pieces;
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        pieces(&O200kScanner, text)
    }

    #[test]
    fn words_and_case() {
        assert_eq!(split(""), Vec::<&str>::new());
        assert_eq!(
            split("Hello World, it's HTTPServer's JSONparser"),
            [
                "Hello",
                " World",
                ",",
                " it's",
                " HTTPServer's",
                " JSONparser"
            ]
        );
        assert_eq!(split("camelCaseWORD"), ["camel", "Case", "WORD"]);
        assert_eq!(split("DON'T don't"), ["DON'T", " don't"]);
        assert_eq!(split("a'S"), ["a'S"]);
        assert_eq!(split("'ſ"), ["'ſ"]);
        assert_eq!(split("x'ſ"), ["x'ſ"]);
        assert_eq!(split("'s"), ["'s"]);
        assert_eq!(split("'"), ["'"]);
    }

    #[test]
    fn spaces_digits_punctuation() {
        assert_eq!(
            split("   Hello\n    Hello"),
            ["  ", " Hello", "\n", "   ", " Hello"]
        );
        assert_eq!(split("\t\n"), ["\t\n"]);
        assert_eq!(split("\r\n\r\n"), ["\r\n\r\n"]);
        assert_eq!(split("a\n "), ["a", "\n", " "]);
        assert_eq!(split("a  "), ["a", "  "]);
        assert_eq!(split("1234567"), ["123", "456", "7"]);
        assert_eq!(split("a/b //\n/x"), ["a", "/b", " //\n/", "x"]);
        assert_eq!(split("\tfoo"), ["\tfoo"]);
    }

    #[test]
    fn unicode() {
        assert_eq!(split("😀😀 😀x"), ["😀😀", " 😀", "x"]);
        assert_eq!(split("中文 字"), ["中文", " 字"]);
        // Marks are in both letter classes: Arabic words stay whole.
        assert_eq!(split("كَتَبَ كتب"), ["كَتَبَ", " كتب"]);
        assert_eq!(split("Éa\u{301}"), ["Éa\u{301}"]);
        // A mark before an uppercase letter and a non-letter: alternative 1 without the
        // prefix matches the mark alone, before alternative 2 is tried.
        assert_eq!(split("\u{301}A."), ["\u{301}", "A", "."]);
        assert_eq!(split("\u{301}Ab"), ["\u{301}Ab"]);
        assert_eq!(split("ǅx ǅ"), ["ǅx", " ǅ"]);
        assert_eq!(split("a\u{85}b\u{A0}c"), ["a", "\u{85}b", "\u{A0}c"]);
        assert_eq!(
            split("a\u{3000}\u{3000}\u{3000}"),
            ["a", "\u{3000}\u{3000}\u{3000}"]
        );
    }
}
