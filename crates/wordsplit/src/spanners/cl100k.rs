//! The cl100k pre-tokenizer and its one-digit variant (Qwen2/Qwen3), as a hand-written
//! scanner.
//!
//! Replaces, with identical splits, three patterns (`Cl100kScanner` settings in brackets):
//!
//! * tiktoken's cl100k `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
//!   ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s` (3 digits, `\s++$` on),
//! * the original cl100k `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//!   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+` (3 digits, `\s++$` off),
//! * Qwen2's, the original with `\p{N}` for `\p{N}{1,3}` (1 digit, `\s++$` off).
//!
//! The tiktoken and original cl100k spellings are NOT equivalent: at the end of the text a
//! white-space run with a line break followed by other white space, e.g. `"a\n "`, is one
//! piece `"\n "` under `\s++$` but `"\n"`, `" "` under the original `\s*[\r\n]+`, which is
//! tried first there. Everything else splits the same; the scanner has a switch for it.
//!
//! Why the scanner gives the regex's leftmost-first match (`c0` is the character at the
//! position, `c1` the next; O is `[^\s\p{L}\p{N}]`, which includes the marks `\p{M}`; P is
//! `[^\r\n\p{L}\p{N}]`, i.e. O or white space other than CR and LF):
//!
//! 1. Contractions, case-insensitive with simple case folding: `'` then `s d m t ſ` (either
//!    case) or `ll ve re` (any case mix). The second characters differ, so at most one
//!    matches; both spellings list the same seven contractions.
//! 2. `P?\p{L}+` (possessive or not): if `c0` is a letter, the letter run (P and L are
//!    disjoint, so no prefix can be taken). If `c0` is P and `c1` a letter, `c0` and the
//!    letter run after it. If `c0` is P but `c1` is not a letter, dropping the prefix
//!    cannot help (the run would start at `c0`, not a letter): no match. Nothing follows
//!    the letters, so greedy and possessive agree. This is how `" Hello"`, `"\tHello"`,
//!    `"'Hello"` or `"«Hello"` become one piece.
//! 3. `\p{N}{1,3}`: up to `max_digits` numbers (tiktoken's `{1,3}+` is possessive in
//!    fancy-regex, not Oniguruma's `({1,3})+`, and is greedy with nothing after it).
//! 4. ` ?O+[\r\n]*`: a space followed by O, or O itself, then the maximal O run and the
//!    maximal CR/LF run after it (O and CR/LF are disjoint: no backtracking changes it).
//! 5. Otherwise `c0` is white space (a CR or LF, or a space/other white space not
//!    followed by a letter, nor a space followed by O). Let `c0..j` be the maximal `\s`
//!    run:
//!    * tiktoken only, `\s++$`: if `j` is the end of the text, the whole run.
//!    * `\s*[\r\n]` / `\s*[\r\n]+`: the greedy `\s*` gives back characters from the end
//!      of the run until a CR or LF follows it, so the piece ends just after the LAST
//!      CR/LF of the run (the `+` cannot extend it: no CR/LF comes later in the run).
//!    * `\s+(?!\S)`: as in GPT-2, the whole run at the end of the text, else the run
//!      minus its last character if that leaves at least one.
//!    * `\s` / `\s+`: a single character (reached only for a one-character run with no
//!      CR/LF, followed by `\S`, where both take that character).

use super::classes::{
    self, CharTable, FAST, F_ALPHA, F_APOSTROPHE, F_ASCII, F_PREFIX, F_PUNCT, F_SPACE, LETTER,
    NUMBER, WS,
};
use super::Scanner;

/// cl100k (`max_digits: 3`) and Qwen2 (`max_digits: 1`) scanner; see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct Cl100kScanner {
    /// The `n` of `\p{N}{1,n}`.
    pub max_digits: usize,
    /// Whether the pattern has tiktoken's `\s++$` before `\s*[\r\n]` (so a white-space
    /// run that ends the text is always one piece).
    pub whole_trailing_space: bool,
    /// The name this scanner reports.
    pub name: &'static str,
}

impl Cl100kScanner {
    /// tiktoken's cl100k_base pattern.
    pub const CL100K_TIKTOKEN: Self = Self {
        max_digits: 3,
        whole_trailing_space: true,
        name: "cl100k-scanner",
    };
    /// The original cl100k pattern (HF tokenizer.json files).
    pub const CL100K_ORIGINAL: Self = Self {
        max_digits: 3,
        whole_trailing_space: false,
        name: "cl100k-scanner",
    };
    /// The Qwen2/Qwen3 pattern.
    pub const QWEN2: Self = Self {
        max_digits: 1,
        whole_trailing_space: false,
        name: "qwen2-scanner",
    };
}

impl super::PieceScanner for &Cl100kScanner {
    #[inline(always)]
    fn piece_end(self, t: &CharTable, b: &[u8], i: usize) -> usize {
        Cl100kScanner::piece_end(self, t, b, i)
    }

    /// The same ends as `piece_end`, found 64 bytes at a time with whole-word bit
    /// operations (the `cl100k_blocks` module).
    #[inline(always)]
    fn each_window<E>(
        self,
        text: &str,
        each: impl FnMut(usize, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        super::cl100k_blocks::each_window(self, text, each)
    }
}

impl Scanner for Cl100kScanner {
    fn name(&self) -> &'static str {
        self.name
    }

    fn split(&self, text: &str, out: &mut Vec<usize>) {
        super::split_by_each_end(self, text, out);
    }

    fn byte_level(&self) -> Option<super::ByteLevelScanner<'_>> {
        Some(super::ByteLevelScanner::Cl100k(self))
    }
}

impl Cl100kScanner {
    /// The end of the piece starting at `i < b.len()`: the reference the block scanner
    /// ([`super::cl100k_blocks`]) is tested against.
    #[inline(always)]
    pub(crate) fn piece_end(&self, t: &CharTable, b: &[u8], i: usize) -> usize {
        let c0 = b[i];
        // Fast paths for the most common pieces, decided from one table load per byte
        // (fewer instructions and branches than a chain of compares): ASCII letters after at
        // most one ASCII P character ("word", " word", "(word"), and ASCII punctuation runs
        // (",", ". ", " (", "();"). A non-ASCII character after the letters may continue the
        // run; anything else (digits, white space, apostrophes, non-ASCII) takes the general
        // path below.
        let f0 = FAST[c0 as usize];
        if f0 & F_ALPHA != 0 {
            return word_end(t, b, i + 1);
        }
        if f0 & (F_PREFIX | F_SPACE) != 0 && i + 1 < b.len() {
            let f1 = FAST[b[i + 1] as usize];
            if f1 & F_ALPHA != 0 {
                return word_end(t, b, i + 2);
            }
            if f0 & F_PUNCT != 0 && f1 & F_ASCII != 0 {
                // `c0` is O and `c1` an ASCII non-letter: rules 1-3 fail, rule 4 applies.
                return crlf_run(b, t.run_not(b, i + 1, WS | LETTER | NUMBER));
            }
            if f0 & F_SPACE != 0 && f1 & (F_PUNCT | F_APOSTROPHE) != 0 {
                // A space then O: rule 4 with the space.
                return crlf_run(b, t.run_not(b, i + 2, WS | LETTER | NUMBER));
            }
        }
        if c0 == b'\'' {
            if let Some(end) = classes::contraction(b, i, true) {
                return end;
            }
        }
        let (class0, len0) = t.at(b, i);
        // 2. Letters, with an optional P prefix.
        if class0 & LETTER != 0 {
            return t.run(b, i + len0, LETTER);
        }
        let is_prefix = class0 & NUMBER == 0 && c0 != b'\r' && c0 != b'\n';
        if is_prefix && i + len0 < b.len() {
            let (class1, len1) = t.at(b, i + len0);
            if class1 & LETTER != 0 {
                return t.run(b, i + len0 + len1, LETTER);
            }
        }
        // 3. Numbers.
        if class0 & NUMBER != 0 {
            return t.run_at_most(b, i + len0, NUMBER, self.max_digits - 1);
        }
        // 4. Other, with an optional leading space, then line breaks.
        if class0 & WS == 0 {
            return crlf_run(b, t.run_not(b, i + len0, WS | LETTER | NUMBER));
        }
        if c0 == b' ' && i + 1 < b.len() {
            let (class1, len1) = t.at(b, i + 1);
            if class1 & (WS | LETTER | NUMBER) == 0 {
                return crlf_run(b, t.run_not(b, i + 1 + len1, WS | LETTER | NUMBER));
            }
        }
        // 5. White space.
        self.space_end(t, b, i, len0)
    }

    /// The end of the white-space piece starting at `i` (whose character is `len0` bytes).
    #[inline(always)]
    fn space_end(&self, t: &CharTable, b: &[u8], i: usize, len0: usize) -> usize {
        space_piece_end(t, b, i, len0, self.whole_trailing_space)
    }
}

/// The end of the white-space piece at `i` for `\s++$|\s*[\r\n]|\s+(?!\S)|\s` (with
/// `whole_trailing_space`) or `\s*[\r\n]+|\s+(?!\S)|\s+` (without); see the module docs.
/// Shared with o200k, whose white-space alternatives are the latter.
#[inline(always)]
pub(crate) fn space_piece_end(
    t: &CharTable,
    b: &[u8],
    i: usize,
    len0: usize,
    whole_trailing_space: bool,
) -> usize {
    // Start of the run's last character, and the end of its last CR/LF (if any).
    let mut last = i;
    let mut after_break = (b[i] == b'\r' || b[i] == b'\n').then_some(i + 1);
    let mut j = i + len0;
    while j < b.len() {
        let c = b[j];
        if c == b' ' || c == b'\r' || c == b'\n' {
            // Runs of one byte (indentation, blank lines, padding) eight bytes at a time.
            j = byte_run_end(b, j, c);
            last = j - 1;
            if c != b' ' {
                after_break = Some(j);
            }
            continue;
        }
        let (class, len) = t.at(b, j);
        if class & WS == 0 {
            break;
        }
        last = j;
        j += len;
    }
    if j == b.len() && whole_trailing_space {
        j
    } else if let Some(end) = after_break {
        end
    } else if j == b.len() || last == i {
        j
    } else {
        last
    }
}

/// The end of the run of byte `c` starting at `j`, comparing eight bytes at a time.
#[inline(always)]
fn byte_run_end(b: &[u8], mut j: usize, c: u8) -> usize {
    let repeated = u64::from_le_bytes([c; 8]);
    while let Some(chunk) = b.get(j..j + 8) {
        let differ = u64::from_le_bytes(chunk.try_into().unwrap()) ^ repeated;
        if differ != 0 {
            return j + (differ.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < b.len() && b[j] == c {
        j += 1;
    }
    j
}

/// The end of the letter run whose ASCII letters start at (or before) `s`.
#[inline(always)]
fn word_end(t: &CharTable, b: &[u8], s: usize) -> usize {
    let j = classes::ascii_letters_end(b, s);
    if j < b.len() && b[j] >= 0x80 {
        t.run(b, j, LETTER)
    } else {
        j
    }
}

/// The end of the run of `\r` and `\n` starting at `i`.
#[inline(always)]
fn crlf_run(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b'\r' || b[i] == b'\n') {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::super::test_util::pieces;
    use super::*;

    fn cl(text: &str) -> Vec<&str> {
        pieces(&Cl100kScanner::CL100K_TIKTOKEN, text)
    }
    fn orig(text: &str) -> Vec<&str> {
        pieces(&Cl100kScanner::CL100K_ORIGINAL, text)
    }
    fn qwen(text: &str) -> Vec<&str> {
        pieces(&Cl100kScanner::QWEN2, text)
    }

    #[test]
    fn words_and_spaces() {
        for split in [cl, orig, qwen] {
            assert_eq!(split(""), Vec::<&str>::new());
            assert_eq!(
                split("Hello world, it's"),
                ["Hello", " world", ",", " it", "'s"]
            );
            assert_eq!(
                split("   Hello\n    Hello"),
                ["  ", " Hello", "\n", "   ", " Hello"]
            );
            assert_eq!(split("\t\n"), ["\t\n"]);
            assert_eq!(split("\r\n\r\n"), ["\r\n\r\n"]);
            assert_eq!(split("\r\n\r\nx"), ["\r\n\r\n", "x"]);
            assert_eq!(split("a\tb"), ["a", "\tb"]);
            assert_eq!(split("a  "), ["a", "  "]);
            assert_eq!(split("x \n \n y"), ["x", " \n \n", " y"]);
            assert_eq!(split("«Hello»"), ["«Hello", "»"]);
            assert_eq!(split("\"'x"), ["\"'", "x"]);
            assert_eq!(split(" ...\n\nA"), [" ...\n\n", "A"]);
            assert_eq!(split(" 1"), [" ", "1"]);
        }
    }

    #[test]
    fn trailing_space_after_a_break() {
        // The one difference between tiktoken's spelling and the original.
        assert_eq!(cl("a\n "), ["a", "\n "]);
        assert_eq!(orig("a\n "), ["a", "\n", " "]);
        assert_eq!(qwen("a\n "), ["a", "\n", " "]);
        assert_eq!(cl("a\n \n  "), ["a", "\n \n  "]);
        assert_eq!(orig("a\n \n  "), ["a", "\n \n", "  "]);
        // A run ending in a break is the same piece either way.
        assert_eq!(cl("a \n"), ["a", " \n"]);
        assert_eq!(orig("a \n"), ["a", " \n"]);
    }

    #[test]
    fn digits() {
        assert_eq!(cl("1234567"), ["123", "456", "7"]);
        assert_eq!(qwen("1234567"), ["1", "2", "3", "4", "5", "6", "7"]);
        assert_eq!(cl("12½Ⅻ3"), ["12½", "Ⅻ3"]);
    }

    #[test]
    fn contractions_ignore_case() {
        for split in [cl, orig, qwen] {
            assert_eq!(split("a'S"), ["a", "'S"]);
            assert_eq!(split("'ſ"), ["'ſ"]);
            assert_eq!(split("I'LL"), ["I", "'LL"]);
            assert_eq!(split("we'Ve"), ["we", "'Ve"]);
            assert_eq!(split("'x"), ["'x"]);
            assert_eq!(split("'1"), ["'", "1"]);
        }
    }

    #[test]
    fn unicode() {
        for split in [cl, orig, qwen] {
            assert_eq!(split("😀😀 😀x"), ["😀😀", " 😀", "x"]);
            assert_eq!(split("中文 字"), ["中文", " 字"]);
            // A mark is P, not a letter: it prefixes the following letters.
            assert_eq!(split("كَتَبَ"), ["ك", "\u{64E}ت", "\u{64E}ب", "\u{64E}"]);
            assert_eq!(split("\u{85}x\u{85}\u{85}"), ["\u{85}x", "\u{85}\u{85}"]);
            assert_eq!(split("a\u{A0}b"), ["a", "\u{A0}b"]);
            assert_eq!(
                split("a\u{3000}\u{3000}\u{3000}b"),
                ["a", "\u{3000}\u{3000}", "\u{3000}b"]
            );
            assert_eq!(split("a\u{2028}\nb"), ["a", "\u{2028}\n", "b"]);
        }
    }
}
