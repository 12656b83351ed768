//! o200k's pieces found 64 bytes at a time, with whole-word bit operations, where no
//! character of both of o200k's letter brackets is right before an uppercase letter and
//! every mark follows a letter.
//!
//! The block scanner of the cl100k family ([`super::cl100k_blocks`]) carried over to o200k
//! ([`super::o200k`]): each window of 64 bytes becomes class bitmaps ([`Classes`]), its
//! piece starts come from shifts, ANDs and additions, and the loop over pieces is a
//! `trailing_zeros` per start.
//!
//! The bit program models letters that are in one of o200k's two letter brackets only: Lu
//! and Lt (uppercase, the first), Ll (lowercase, the second), as every ASCII letter is; and
//! any character that is no letter and no mark. That is the text of ASCII, Latin, Greek,
//! Cyrillic and Armenian scripts with their punctuation, numbers and white space. An Lm or
//! Lo letter (in both brackets: Chinese, Japanese, Korean, Arabic, Hebrew) is modelled as a
//! lowercase one unless an Lu or Lt letter follows it. That is exact: the first
//! alternative's `U*` takes the maximal run of uppercase and Lm/Lo letters, and when no
//! uppercase letter follows an Lm/Lo one, that run is some uppercase letters then only
//! Lm/Lo ones. If a lowercase letter follows the run, `W+` goes on to the end of the
//! lowercase and Lm/Lo letters after it; else the piece ends after the run's last Lm/Lo
//! letter, which is its last (or, with none, the second alternative takes the uppercase
//! run): the same pieces as with the Lm/Lo letters lowercase. A mark (in both brackets, and
//! in `[^\r\n\p{L}\p{N}]` too) right after a letter, or after a mark that is, is part of
//! that letter's run in every alternative, and is modelled the same way (the words of
//! Indic scripts, letters with combining accents). An uppercase letter after an Lm/Lo
//! letter or a mark (`"B中CDe"` is one piece, as the `U*` runs through `中`), and a mark
//! after anything else (a word's prefix, or part of a run of punctuation), make the regex
//! backtrack in ways the scanner's module docs list; a window holding one is scanned
//! instead with
//! [`super::o200k`]'s `piece_end`, from the start of the piece under way (the last end
//! given) to the first end at or past the window's end, and on (at least [`SCAN_ON`] bytes
//! at a time) while the 64 bytes after the last end hold one. The next window then starts
//! at that end, `R`, with the carry of the text's start. That is exact: the pattern has no
//! look-behind, so the pieces from a piece start depend only on the text from there on, and
//! are those of that suffix as a whole text; the bit program is exact on a text's first
//! window, and on each next window given the carry of the one before. It reads past its
//! window only to look ahead: whether white space follows (from the next window's class
//! bitmaps, non-ASCII characters included) and a contraction's bytes.
//!
//! A character outside ASCII has its class on each of its bytes, so the rules below read
//! "the character before" as the byte before, with two exceptions: a word's prefix is the
//! whole first character of an O run (all its bytes, found with an addition that carries
//! from its lead byte through its continuation bytes), and digit runs and trailing white
//! space count characters ([`super::blocks`]).
//!
//! The start rules. Classes: U uppercase letters (Lu, Lt), W lowercase letters (Ll), N
//! numbers, G white space other than CR/LF, O `[^\s\p{L}\p{N}]` (every other character
//! modelled). A word is `[^\r\n\p{L}\p{N}]?U*W+C?` or `...U+W*C?`: with no
//! letter in both brackets, both are an optional prefix, the maximal U run, the maximal W
//! run (at least one letter in all), then `C`, a contraction `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
//! if one follows. O pieces are ` ?O+[\r\n/]*`; `/` is itself O, so their tail starts with
//! a CR/LF right after the O run and then takes every CR, LF and `/` that follows (these
//! bytes are "eaten"). A position is a piece start when it is:
//!
//! * the first letter of a letter run, unless the character before it is G, or is an O
//!   start (below) no space precedes: that character is then the word's prefix. A G before
//!   letters is always a start (`\s+(?!\S)` leaves it); an O run of one character no space
//!   precedes starts at that character, which `[^\r\n\p{L}\p{N}]?` then takes. After a
//!   longer O run, a space-led one, a CR/LF or an eaten byte, the letters start alone;
//! * an uppercase letter right after a lowercase one (the W run has ended: `"camelCase"`
//!   is `"camel"`, `"Case"`; `"HTTPServer"` is one U run then one W run);
//! * the end of a contraction: an apostrophe right after a letter, whose word ends there,
//!   followed by `s t m d ll ve re` in any case (or `ſ`, non-ASCII). The apostrophe and the
//!   contraction are inside the word's piece (no start there); the byte after it starts a
//!   piece (possibly in the next window). An apostrophe that is itself a contraction's end
//!   starts a piece and is not a contraction (`"x's's"` is `"x's"`, `"'s"`): the
//!   candidates are taken in order;
//! * the first character of an O run (not counting eaten bytes) that no space precedes
//!   (after a space, the space starts ` ?O+`);
//! * every third character of a digit run, counting from its first (`\p{N}{1,3}`);
//! * the white-space starts of cl100k's original spelling (`\s*[\r\n]+|\s+(?!\S)|\s+`),
//!   with o200k's eaten bytes: the first character of a white-space run unless eaten, a G
//!   character right after an eaten byte, a G character right after a CR/LF not eaten
//!   whose run of G characters is followed by a non-space character or ends the text, and
//!   the last G character before a non-space character.
//!
//! Eaten bytes: a CR/LF right after an O byte is eaten (that O byte ends an O piece's O
//! run: a prefix or a contraction's apostrophe is followed by a letter), and so is every CR,
//! LF or `/` after it up to the end of their run. A run of those bytes is not eaten before
//! its first such CR/LF: its CR/LF are white space there, its `/` are O.

use super::blocks::{
    after, classifier, digit_starts, first_other_chars, white_space_starts, Classes, Classify,
};
use super::classes::{self, CharTable};

/// What a window's starts need from the window before it: its bitmaps (only their top
/// bits are read: "the character before"), the runs that continue into this window, and
/// what a contraction does past its end.
#[derive(Default)]
struct Carry {
    prev: Classes,
    /// O bytes, not eaten.
    other: u64,
    /// Bytes of the first character of an O run that no space precedes.
    first_other: u64,
    /// Eaten bytes (the `[\r\n/]*` of O pieces).
    eaten: u64,
    /// CR, LF and `/` bytes of runs not eaten before their first CR/LF after an O byte.
    uneaten: u64,
    /// Digit characters of the run at the window's end since its last start, mod 3.
    digits: u32,
    /// Contraction ends past the window's end, relative to the next window.
    spill: u64,
    /// Bytes of the next window inside a contraction (none of them starts a piece).
    kill: u64,
}

/// The piece starts of the window `c` at `base`, whose characters the bit program models
/// (`q` is the next window's classes; those of its non-ASCII characters are read only when
/// `c` ends with a G character).
#[inline(always)]
fn block_starts(b: &[u8], base: usize, c: &Classes, q: &Classes, carry: &mut Carry) -> u64 {
    let p = carry.prev;
    let o_bytes = c.valid & !(c.letter | c.digit | c.space);
    let g = c.space & !c.newline;
    let p_g = p.space & !p.newline;

    // Eaten bytes: in each run of CR/LF/`/`, from its first CR/LF after an O byte on.
    let tail = c.newline | c.slash;
    let seeds = c.newline & after(o_bytes, carry.other | carry.eaten);
    let unseeded = tail & !seeds;
    // The first byte of each run (or the run from the previous window, not yet eaten):
    // adding it carries through the run up to its first seed.
    let firsts =
        (unseeded & !after(tail, p.newline | p.slash)) | (unseeded & (carry.uneaten >> 63));
    let uneaten = (unseeded.wrapping_add(firsts) ^ unseeded) & unseeded;
    let eaten = tail & !uneaten;

    // O runs, and their first characters no space precedes.
    let other = o_bytes & !eaten;
    let other_starts = other & !after(other, carry.other) & !after(c.blank, p.blank);
    let first_other = first_other_chars(other, other_starts, c.cont, carry.first_other);
    let mut starts = other_starts;

    // Letter runs, unless prefixed; an uppercase letter after a lowercase one.
    let letter_starts = c.letter & !after(c.letter, p.letter);
    starts |= letter_starts & !(after(g, p_g) | after(first_other, carry.first_other));
    starts |= c.upper & after(c.letter & !c.upper, p.letter & !p.upper);

    // Digits.
    starts |= digit_starts(3, c, &p, &mut carry.digits);

    // White space.
    starts |= white_space_starts(false, b, base, c, q, &p, eaten, carry.eaten);

    // Contractions: an apostrophe right after a letter, unless a contraction ends there.
    let mut candidates = c.apostrophe & after(c.letter, p.letter);
    let mut ends = carry.spill;
    let (mut inside, mut spill, mut kill) = (0u64, 0u64, 0u64);
    while candidates != 0 {
        let i = candidates.trailing_zeros();
        if ends >> i & 1 == 0 {
            if let Some(end) = classes::contraction(b, base + i as usize, true) {
                let e = (end - base) as u32; // i + 2 or i + 3
                let bytes = (1u128 << e) - (1u128 << i);
                inside |= bytes as u64;
                kill |= (bytes >> 64) as u64;
                let bit = 1u128 << e;
                ends |= bit as u64;
                spill |= (bit >> 64) as u64;
            }
        }
        candidates &= candidates - 1;
    }

    starts = ((starts & !(inside | carry.kill)) | ends) & c.valid;
    *carry = Carry {
        prev: *c,
        other,
        first_other,
        eaten,
        uneaten,
        digits: carry.digits,
        spill,
        kill,
    };
    starts
}

/// Calls `each(base, ends)` with the ends of the pieces of `text`, in order: a window's ends
/// as bits (bit `i` set: `base + i` ends a piece), and those of the per-piece scan one at a
/// time (`ends` is 1); the ends `piece_end` ([`super::o200k`]) gives.
#[inline(always)]
pub(crate) fn each_window<E>(
    text: &str,
    each: impl FnMut(usize, u64) -> Result<(), E>,
) -> Result<(), E> {
    each_window_with(classifier(), text, each)
}

/// [`each_window`] with the classes computed by `classify`.
#[inline(always)]
fn each_window_with<E>(
    classify: impl Classify,
    text: &str,
    mut each: impl FnMut(usize, u64) -> Result<(), E>,
) -> Result<(), E> {
    let b = text.as_bytes();
    let len = b.len();
    if len == 0 {
        return Ok(());
    }
    let t = CharTable::get();
    let mut cur = Classes::of_ascii(classify, b, 0);
    let modelled = cur.complete_cased(b, 0, t);
    let mut windows = Windows {
        classify,
        b,
        t,
        base: 0,
        cur,
        modelled,
        carry: Carry::default(),
        given: 1,
    };
    // The start of the piece under way: the last end given, or 0.
    let mut last = 0;
    // Pieces are taken one at a time with `piece_end` while `last < scan_end`.
    let mut scan_end = 0;
    // One call of `each` in the loop, the text's end included as the last end of either
    // way: the piece loop's body is then inlined here once. The windows' classes and carry
    // stay in `windows`, out of the loop's registers, and the loop ends when it asks for a
    // window past the text's end.
    loop {
        let (base, ends);
        if last < scan_end {
            // A window the bit program does not model: pieces one at a time from the piece
            // under way, up to the first end at or past the window's end; then on while the
            // 64 bytes after such an end are not modelled either, else the next window
            // starts there.
            let end = super::o200k::piece_end(t, b, last);
            last = end;
            if end >= scan_end {
                scan_end = windows.after_scan(end);
            }
            (base, ends) = (end, 1);
        } else {
            if windows.base > len {
                return Ok(());
            }
            (base, ends, scan_end) = windows.next(last);
            if ends == 0 {
                continue;
            }
            last = base + 63 - ends.leading_zeros() as usize;
        }
        each(base, ends)?;
    }
}

/// The windows of the text, one after the other.
struct Windows<'a, K> {
    classify: K,
    b: &'a [u8],
    t: &'a CharTable,
    /// The next window: its start (past the text's end once the text's end is given),
    /// classes, carry, and whether its bit 0 is an end already given (or the text's start).
    base: usize,
    /// Its classes, non-ASCII characters included ([`Classes::complete_cased`]), and whether
    /// the bit program models it (what that said).
    cur: Classes,
    modelled: bool,
    carry: Carry,
    given: u64,
}

impl<K: Classify> Windows<'_, K> {
    /// The next window's start and its ends as bits (the text's end included, in the last
    /// window or in one more, empty window when the text fills its last); or, when it holds
    /// a character the bit program does not model, no ends and where the per-piece scan from
    /// `last` (the start of the piece under way) is to go at least (the window's end, or the
    /// text's).
    #[inline(never)]
    fn next(&mut self, last: usize) -> (usize, u64, usize) {
        let (b, base) = (self.b, self.base);
        let rest = b.len() - base;
        if rest > 0 && !self.modelled {
            return (base, 0, b.len().min(base + 64));
        }
        let mut found = 0;
        if rest > 0 {
            let mut next = Classes::of_ascii(self.classify, b, base + 64);
            let next_modelled = next.complete_cased(b, base + 64, self.t);
            found = block_starts(b, base, &self.cur, &next, &mut self.carry);
            self.cur = next;
            self.modelled = next_modelled;
        }
        found &= !self.given;
        self.given = 0;
        if rest < 64 {
            found |= 1 << rest;
            self.base = b.len() + 1;
        } else {
            self.base += 64;
        }
        (base, found, last)
    }

    /// Where the per-piece scan is to go on to from the piece end `end`: on to
    /// `end + SCAN_ON` (or the text's end) if the 64 bytes from `end` hold a character the
    /// bit program does not model; else nowhere (0), the next window starting at `end` with
    /// the carry of the text's start (or none: `end` is the text's end).
    #[inline(never)]
    fn after_scan(&mut self, end: usize) -> usize {
        let b = self.b;
        if end == b.len() {
            self.base = end + 1;
            return 0;
        }
        let mut cur = Classes::of_ascii(self.classify, b, end);
        if !cur.complete_cased(b, end, self.t) {
            return b.len().min(end + SCAN_ON);
        }
        self.base = end;
        self.cur = cur;
        self.modelled = true;
        self.carry = Carry::default();
        self.given = 1;
        0
    }
}

/// How far the per-piece scan goes on, at least, from a piece end with a character the bit
/// program does not model in the 64 bytes after it, before it looks again: text with such
/// characters every few words (Chinese, Arabic, Indic scripts) then asks once per 256 bytes
/// rather than per 64.
const SCAN_ON: usize = 256;

#[cfg(test)]
mod tests {
    use super::super::blocks::testing::{assert_same_ends, ends_of, every_string, Driver, DEPTH};
    use super::*;
    use crate::testing::xorshift;

    fn scalar(text: &str) -> Vec<usize> {
        let t = CharTable::get();
        let b = text.as_bytes();
        let mut out = Vec::new();
        crate::spanners::split_with(b.len(), &mut out, |i| {
            super::super::o200k::piece_end(t, b, i)
        });
        out
    }

    struct Blocks;

    impl Driver for Blocks {
        fn ends_with(&self, classify: impl Classify, text: &str) -> Vec<usize> {
            let mut out = Vec::new();
            each_window_with::<()>(classify, text, |base, ends| {
                crate::spanners::each_bit(base, ends, |end| {
                    out.push(end);
                    Ok(())
                })
            })
            .unwrap();
            out
        }

        fn ends(&self, text: &str) -> Vec<usize> {
            let mut out = Vec::new();
            let _ = crate::spanners::PieceScanner::each_end(
                &crate::spanners::o200k::O200kScanner,
                text,
                |end| {
                    out.push(end);
                    Ok::<(), ()>(())
                },
            );
            out
        }
    }

    fn check(text: &str) {
        assert_same_ends("o200k", text, &scalar(text), &ends_of(&Blocks, text));
    }

    /// `text` at every offset of a window (so that each of its positions meets the window
    /// edges), after ASCII letters, white space, digits, punctuation and line breaks.
    fn check_shifted(text: &str) {
        check(text);
        for pad in [1, 2, 3, 30, 58, 59, 60, 61, 62, 63, 64, 65, 127] {
            for fill in ["a", "A", " ", "1", ".", "\n", "/"] {
                check(&(fill.repeat(pad) + text));
            }
        }
    }

    #[test]
    fn known_cases() {
        for text in [
            "",
            "Hello World, it's HTTPServer's JSONparser",
            "camelCaseWORD aB aBC ABc",
            "DON'T don't a'S 's ' x's's's x'l'll x'sa x'rE x'lL x'Sa I'llama",
            "'ſ x'ſ x'ſ's",
            "x'",
            "x''s",
            "1's",
            "'s'",
            "   Hello\n    Hello",
            "\t\n",
            "\r\n\r\nx",
            "a\n ",
            "a  ",
            "a \n",
            "x \n \n y",
            "!\n \n ",
            "!\n\n  a",
            "1234567",
            "a/b //\n/x",
            "./\n",
            ".\n/.\nx",
            ".\n/a",
            ".\n/ x",
            "\n/\n",
            "/\n/\n//x",
            " /\n/x",
            "..a .a  .a \t.a",
            "\tfoo",
            "😀😀 😀x",
            "中文 字",
            "B中CDe 中BCd AB中c 中B ʰA Aʰb ʰʰC 中'S ー",
            "a\u{301}B A\u{301}\u{302}c .\u{301}a ..\u{301}a 1\u{301} \u{301}a x's\u{301}b x's\u{301}'s",
            "नमस्ते दुनिया সুপ্রভাত สวัสดีครับ བཀྲ་ཤིས་ Ελλάδα\u{301} café\u{301}X",
            "ありがとうGoogleさん テストCase 한국어Korean العربيةArabic Ωμέγα中Ω",
            "كَتَبَ كتب",
            "Éa\u{301}",
            "\u{301}A.",
            "\u{301}Ab",
            "\u{301}\n",
            "«.a",
            "ǅx ǅ",
            "a\u{85}b\u{A0}c",
            "a\u{3000}\u{3000}\u{3000}",
            "١٢٣٤٥ 12٣4567",
            "«a «A .«a  «a —a —Привет ,—x",
            "ДомDom дОм ΣΑΣ'S σας'ſ Привет, мир! «Ёлки»\n—",
            "a\u{85}б \u{A0}Б\u{2003}\u{2003}в",
            "Ⅻ½x ①②③④ д1234",
        ] {
            check_shifted(text);
        }
    }

    /// Strings whose rules reach across bytes (contractions, camelCase, O tails, white space
    /// before a break, digit runs, a non-ASCII character) at every offset of two windows.
    #[test]
    fn every_offset() {
        for text in [
            "don't x's's'LL",
            "camelCaseHTTPServer",
            "a.\n/\n/b .\n x",
            "  \n x\t\ty",
            "1234567 89",
            "x'ſ é's É.a",
            "Привет, Мир! «Ёлки» — это ΑΒΓαβγ ΣΑΣ'S д'ſ",
            "中Ab 中A 中B's ʰAb Aʰ AB中c 中文字Xy",
        ] {
            for pad in 0..=130 {
                for fill in ["a", " ", "é"] {
                    check(&(fill.repeat(pad) + text + &fill.repeat(pad % 7)));
                }
            }
        }
    }

    /// Every string of up to four (five) characters from one character of each class that
    /// matters: ASCII upper and lower case, contraction letters, digits, each white space
    /// kind, the apostrophe, the slash, punctuation, and a non-ASCII Lu, Ll, Lt, Lm, Lo,
    /// mark, number, white space and punctuation of two and three bytes; and every ASCII
    /// string of one more.
    #[test]
    fn exhaustive_short() {
        let alphabet = [
            "a", "S", "l", "1", " ", "\t", "\n", "\r", "'", "/", ".", "é", "É", "ǅ", "ʰ", "中",
            "\u{301}", "٣", "\u{A0}", "«", "—",
        ];
        every_string(&alphabet, DEPTH, "", "", check);
        let alphabet = [
            "a", "B", "s", "L", "1", " ", "\n", "\r", "'", "/", ".", "\t",
        ];
        every_string(&alphabet, DEPTH + 1, "", "", check);
    }

    /// Short strings placed across a window edge, and ending the text there.
    #[test]
    fn exhaustive_across_edges() {
        let alphabet = [
            "a", "B", "s", "1", " ", "\n", "'", "/", ".", "é", "É", "\u{301}", "\u{3000}", "中",
        ];
        for pad in [60, 61, 62, 63] {
            for before in ["x".repeat(pad - 2) + ". ", "x".repeat(pad - 1) + "\n"] {
                every_string(&alphabet, DEPTH, &before, "", check);
                every_string(&alphabet, DEPTH - 1, &before, "\n b", check);
            }
        }
    }

    #[test]
    fn long_runs() {
        for unit in [
            " ", "1", "a", "A", "aB", "\n", "\t", ".", "/", "\n/", "'s", "é", "\u{3000}", "٣",
            " \n", "\n ", ".\n", "中", "ʰ",
        ] {
            for count in [1, 2, 3, 63, 64, 65, 127, 128, 129, 200] {
                let run = unit.repeat(count);
                for around in ["", "x", "X", " ", "\n", "!", "1", "é", "中", "Xy"] {
                    check_shifted(&format!("{around}{run}{around}"));
                    check(&format!("{around}{run}"));
                    check(&format!("\n{run}\n"));
                    check(&format!("!\n{run}x"));
                }
            }
        }
    }

    #[test]
    fn random_mixes() {
        let pieces = [
            "a",
            "Hello",
            " world",
            "World",
            "HTTP",
            "camelCase",
            "'s",
            "'LL",
            "'ve",
            "'re",
            "'",
            "''",
            " '",
            "1",
            "123",
            "4567",
            " ",
            "  ",
            "   ",
            "\t",
            "\n",
            "\r\n",
            "\n\n",
            " \n",
            "\n ",
            ".",
            ",",
            "...",
            "(",
            " (",
            "/",
            "//",
            "\n/",
            "é",
            "É",
            "中文",
            "ǅ",
            "ʰ",
            "\u{3000}",
            "\u{A0}",
            "\u{85}",
            "\u{2028}",
            "٣",
            "½",
            "\u{301}",
            "😀",
            "ſ",
            "'ſ",
            "\u{B}",
            "\u{C}",
            "x",
            "«",
            "Привет",
            " мир",
            "ΑΒΓ",
            "—",
            "“",
            "Ж",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..25_000 {
            // Mostly ASCII in half of the rounds (the windows the bit program runs).
            let ascii_only = round % 2 == 0;
            let len = (xorshift(&mut seed) % 80) as usize;
            let mut text = String::new();
            for _ in 0..len {
                let r = xorshift(&mut seed) as usize;
                let mut piece = pieces[r % pieces.len()];
                if ascii_only && !piece.is_ascii() && r >> 40 & 63 != 0 {
                    piece = pieces[(r >> 8) % 33];
                }
                // Runs now and then.
                let repeat = if r >> 20 & 15 == 0 {
                    1 + (r >> 24) % 70
                } else {
                    1
                };
                for _ in 0..repeat {
                    text.push_str(piece);
                }
            }
            check(&text);
        }
    }
}
