//! The GPT-2 pre-tokenizer (r50k, p50k, gpt2), as a hand-written scanner.
//!
//! Replaces, with identical splits, both spellings of the pattern:
//!
//! * tiktoken's `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
//! * the original `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
//!
//! At each position the regex engine tries the alternatives in order and takes the first
//! that matches (leftmost-first, as in fancy-regex, Oniguruma and Python's `regex`). Why the
//! scanner below gives that same first match, alternative by alternative (`c0` is the
//! character at the position, `c1` the next one; "O" is `[^\s\p{L}\p{N}]`, so every
//! character is exactly one of L, N, O or `\s`):
//!
//! 1. Contractions, case-sensitive: an apostrophe followed by `s d m t` or `ll ve re`.
//!    The second characters differ, so at most one can match.
//! 2. ` ?\p{L}+`, ` ?\p{N}+`, ` ?O+`: if `c0` is a space and `c1` is L, N or O (that is,
//!    not `\s`), the space and the maximal run of `c1`'s class. If the optional space is
//!    dropped the run would have to start at the space itself, which is `\s`, so that
//!    fails; otherwise `c0` in L, N or O starts the maximal run of its own class. Nothing
//!    follows the run in the alternative, so greedy and possessive take the same maximal
//!    run. O includes the apostrophe: `'x` or a lone `'` is an O run (`'` then `s` is a
//!    contraction only at the start of a piece, e.g. `.'s` is `.'` then `s`).
//! 3. Otherwise `c0` is `\s`. Let the maximal white-space run be `c0..j` and `k` the
//!    start of its last character.
//!    * `\s++$` / `\s+(?!\S)` at `j == end`: the whole run (the original form reaches the
//!      same piece through `\s+(?!\S)`, as nothing follows the run).
//!    * `\s+(?!\S)` with `j < end`: the next character is `\S`, so the greedy `\s+`
//!      backtracks one character to `k`, where the lookahead sees white space: the piece
//!      is `c0..k`, provided it is not empty (the run has 2 or more characters).
//!    * a run of one character followed by `\S`: `\s` or `\s+` takes that one character.
//!
//!    The last character of a longer run is left for the next piece, where a space joins
//!    the following word (`"   Hello"` -> `"  "`, `" Hello"`).
//!
//! So the two spellings split every text identically (checked exhaustively against
//! fancy-regex on all strings of up to 4 characters over a representative alphabet).

use super::classes::{self, CharTable, FAST, F_APOSTROPHE, F_PUNCT, F_SPACE, LETTER, NUMBER, WS};
use super::Scanner;

/// The GPT-2 scanner (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct Gpt2Scanner;

impl super::PieceScanner for &Gpt2Scanner {
    #[inline(always)]
    fn piece_end(self, t: &CharTable, b: &[u8], i: usize) -> usize {
        piece_end(t, b, i)
    }
}

impl Scanner for Gpt2Scanner {
    fn name(&self) -> &'static str {
        "gpt2-scanner"
    }

    fn split(&self, text: &str, out: &mut Vec<usize>) {
        let t = CharTable::get();
        let b = text.as_bytes();
        super::split_with(b.len(), out, |i| piece_end(t, b, i));
    }

    fn byte_level(&self) -> Option<super::ByteLevelScanner<'_>> {
        Some(super::ByteLevelScanner::Gpt2(self))
    }
}

/// The end of the piece starting at `i < b.len()`.
#[inline(always)]
fn piece_end(t: &CharTable, b: &[u8], i: usize) -> usize {
    let c0 = b[i];
    // Fast path for the most common piece, an ASCII word with an optional leading space
    // (alternative 2); a non-ASCII character after it may continue the letter run.
    let s = i + (c0 == b' ') as usize;
    if s < b.len() && b[s].is_ascii_alphabetic() {
        let j = classes::ascii_letters_end(b, s + 1);
        return if j < b.len() && b[j] >= 0x80 {
            t.run(b, j, LETTER)
        } else {
            j
        };
    }
    // ASCII punctuation (not the apostrophe, which may start a contraction), with an
    // optional leading space: the maximal O run, whatever follows (alternative 2).
    let f0 = FAST[c0 as usize];
    if f0 & F_PUNCT != 0 {
        return t.run_not(b, i + 1, WS | LETTER | NUMBER);
    }
    if f0 & F_SPACE != 0 && s < b.len() && FAST[b[s] as usize] & (F_PUNCT | F_APOSTROPHE) != 0 {
        return t.run_not(b, s + 1, WS | LETTER | NUMBER);
    }
    if c0 == b'\'' {
        if let Some(end) = classes::contraction(b, i, false) {
            return end;
        }
    }
    if c0 == b' ' && i + 1 < b.len() {
        let (class1, _) = t.at(b, i + 1);
        if class1 & WS == 0 {
            return class_run(t, b, i + 1, class1);
        }
    }
    let (class0, len0) = t.at(b, i);
    if class0 & WS == 0 {
        return class_run(t, b, i, class0);
    }
    // White space: find the run's end and the start of its last character.
    let mut last = i;
    let mut j = i + len0;
    while j < b.len() {
        let (class, len) = t.at(b, j);
        if class & WS == 0 {
            break;
        }
        last = j;
        j += len;
    }
    if j == b.len() || last == i {
        j
    } else {
        last
    }
}

/// The end of the maximal run of `class`'s kind (L, N or O) starting at `i`, where the
/// character at `i` is known to be of that kind.
#[inline(always)]
fn class_run(t: &CharTable, b: &[u8], i: usize, class: u8) -> usize {
    if class & LETTER != 0 {
        t.run(b, i, LETTER)
    } else if class & NUMBER != 0 {
        t.run(b, i, NUMBER)
    } else {
        t.run_not(b, i, WS | LETTER | NUMBER)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::pieces;
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        pieces(&Gpt2Scanner, text)
    }

    #[test]
    fn words_and_spaces() {
        assert_eq!(split(""), Vec::<&str>::new());
        assert_eq!(
            split("Hello world, it's 2024!"),
            ["Hello", " world", ",", " it", "'s", " 2024", "!"]
        );
        assert_eq!(
            split("   Hello\n    Hello"),
            ["  ", " Hello", "\n   ", " Hello"]
        );
        assert_eq!(split("\t\n"), ["\t\n"]);
        assert_eq!(split("a  "), ["a", "  "]);
        assert_eq!(split("a \n"), ["a", " \n"]);
        assert_eq!(split("\r\n\r\n"), ["\r\n\r\n"]);
        assert_eq!(split("\r\n\r\nx"), ["\r\n\r", "\n", "x"]);
        assert_eq!(split("a\tb"), ["a", "\t", "b"]);
        assert_eq!(split("1234567"), ["1234567"]);
        assert_eq!(split(" 12 ab"), [" 12", " ab"]);
    }

    #[test]
    fn contractions_are_case_sensitive() {
        assert_eq!(split("a'S"), ["a", "'", "S"]);
        assert_eq!(split("a's"), ["a", "'s"]);
        assert_eq!(split("'ſ"), ["'", "ſ"]);
        assert_eq!(split("we'll've'd"), ["we", "'ll", "'ve", "'d"]);
        assert_eq!(split(".'s"), [".'", "s"]);
        assert_eq!(split(" 's"), [" '", "s"]);
        assert_eq!(split("'"), ["'"]);
    }

    #[test]
    fn unicode() {
        assert_eq!(split("😀😀 😀x"), ["😀😀", " 😀", "x"]);
        assert_eq!(split("中文 字"), ["中文", " 字"]);
        // Marks are not letters: Arabic with harakat breaks at each mark.
        assert_eq!(
            split("كَتَبَ"),
            ["ك", "\u{64E}", "ت", "\u{64E}", "ب", "\u{64E}"]
        );
        assert_eq!(split("a\u{85}b"), ["a", "\u{85}", "b"]);
        assert_eq!(split("a\u{A0}\u{A0}b"), ["a", "\u{A0}", "\u{A0}", "b"]);
        assert_eq!(
            split("a\u{3000}\u{3000}\u{3000}"),
            ["a", "\u{3000}\u{3000}\u{3000}"]
        );
        // U+001C and U+200B are not white space.
        assert_eq!(split(" \u{1C}\u{200B}x"), [" \u{1C}\u{200B}", "x"]);
    }
}
