//! The cl100k family's pieces found 64 bytes at a time, with whole-word bit operations.
//!
//! [`super::cl100k`] decides each piece's kind with branches that depend on the text, one
//! piece at a time; on prose (a piece every 4-5 bytes) most of its time goes to mispredicted
//! branches. This module computes the same pieces differently: each 64-byte block of the
//! text becomes a few class bitmaps (one bit per byte: letter, digit, white space, CR/LF,
//! space, apostrophe, non-ASCII, UTF-8 continuation byte), the piece starts of the block are
//! derived from those with shifts, ANDs and additions, and the loop over pieces is a
//! `trailing_zeros` per start. A character outside ASCII gets its class on all of its bytes
//! (one table lookup per character), so multilingual text runs the same bit program.
//!
//! The start rules, with the classes of [`super::cl100k`] (L letters, N numbers, O
//! `[^\s\p{L}\p{N}]`, G white space other than CR/LF, the "space" being U+0020 only). A
//! position is a piece start when it is (each claim follows from the scanner's module docs):
//!
//! * the first character of a letter run, unless the character before it is G, or is the
//!   only character of an O run that no space precedes: that character is then the piece's
//!   `P` prefix (or an apostrophe starting a contraction, which ends inside the letters);
//! * the end of a contraction: an apostrophe that starts an O run no space precedes,
//!   followed by `s d m t ſ ll ve re` in any case;
//! * the first character of an O run not preceded by a space (after a space, the space
//!   starts ` ?O+`);
//! * every `max_digits`-th character of a digit run, counting from its first;
//! * the first character of a white-space run, unless the run starts with CR/LF right after
//!   O: those CR/LF end the O piece (`[\r\n]*`), and the first G character after them is a
//!   start;
//! * a G character right after a CR/LF (not one an O piece took) when the run of G
//!   characters from it is followed by a non-space character, or ends the text under the
//!   original spelling: the piece `\s*[\r\n]` ends after the LAST CR/LF of the run; under
//!   tiktoken's `\s++$` a run ending the text is one piece;
//! * the last character of a run of G characters followed by a non-space character
//!   (`\s+(?!\S)` leaves it, and it prefixes letters or a space prefixes O).
//!
//! The rules look at most one character before a position (carried from the previous block)
//! and at most one character after, except for the third white-space rule, which asks what
//! follows a run of G characters: answered from the next block's bitmaps (classified one
//! block ahead), and by a scan of the run for the rare run longer than that.

use super::blocks::{
    after, classifier, digit_starts, first_other_chars, white_space_starts, Classes, Classify,
};
use super::cl100k::Cl100kScanner;
use super::classes::{self, CharTable};

/// What a block's starts need from the block before it: its bitmaps (only their top bits
/// are read: "the character before"), the runs that continue into this block, and starts
/// found beyond its end.
#[derive(Default)]
struct Carry {
    prev: Classes,
    /// O bytes.
    other: u64,
    /// Bytes of the first character of an O run that no space precedes.
    first_other: u64,
    /// CR/LF bytes an O piece takes (`[\r\n]*`).
    eaten: u64,
    /// Digit characters of the run at the end of the block since its last start, mod 3.
    digits: u32,
    /// Starts past the block's end (contraction ends), relative to the next block.
    spill: u64,
}

/// The piece starts of the block `c` at `base` (`q` is the next block's classes).
#[inline(always)]
fn block_starts(
    cfg: &Cl100kScanner,
    b: &[u8],
    base: usize,
    c: &Classes,
    q: &Classes,
    carry: &mut Carry,
) -> u64 {
    let p = carry.prev;
    let other = c.valid & !(c.letter | c.digit | c.space);
    let g = c.space & !c.newline;
    let p_g = p.space & !p.newline;

    // O runs, and the first character of those no space precedes.
    let other_starts = other & !after(other, carry.other) & !after(c.blank, p.blank);
    let first_other = first_other_chars(other, other_starts, c.cont, carry.first_other);
    let mut starts = other_starts;

    // Letter runs, unless prefixed.
    let letter_starts = c.letter & !after(c.letter, p.letter);
    starts |= letter_starts & !(after(g, p_g) | after(first_other, carry.first_other));

    // Contractions: an apostrophe starting such an O run, then a letter.
    let next_letter = (c.letter >> 1) | (q.letter << 63);
    let mut candidates = c.apostrophe & other_starts & next_letter;
    let mut spill = 0u64;
    while candidates != 0 {
        let i = candidates.trailing_zeros() as usize;
        if let Some(end) = classes::contraction(b, base + i, true) {
            let bit = 1u128 << (end - base);
            starts |= bit as u64;
            spill |= (bit >> 64) as u64;
        }
        candidates &= candidates - 1;
    }

    // Digits.
    starts |= digit_starts(cfg.max_digits, c, &p, &mut carry.digits);

    // White space: CR/LF an O piece takes, then the white-space rules.
    let seeds = c.newline & after(other, carry.other);
    let eaten = (c.newline.wrapping_add(seeds | (carry.eaten >> 63)) ^ c.newline) & c.newline;
    starts |= white_space_starts(
        cfg.whole_trailing_space,
        b,
        base,
        c,
        q,
        &p,
        eaten,
        carry.eaten,
    );

    starts = (starts | carry.spill) & c.valid;
    *carry = Carry {
        prev: *c,
        other,
        first_other,
        eaten,
        digits: carry.digits,
        spill,
    };
    starts
}

/// Calls `each(base, ends)` with the ends of the pieces of `text` in each window of 64 bytes
/// from `base` (bit `i` of `ends` set: `base + i` ends a piece), in order: the ends
/// [`Cl100kScanner::piece_end`] gives, found a block at a time.
#[inline(always)]
pub(crate) fn each_window<E>(
    cfg: &Cl100kScanner,
    text: &str,
    each: impl FnMut(usize, u64) -> Result<(), E>,
) -> Result<(), E> {
    each_window_with(classifier(), cfg, text, each)
}

/// [`each_window`] with the classes computed by `classify`.
#[inline(always)]
fn each_window_with<E>(
    classify: impl Classify,
    cfg: &Cl100kScanner,
    text: &str,
    mut each: impl FnMut(usize, u64) -> Result<(), E>,
) -> Result<(), E> {
    let b = text.as_bytes();
    if b.is_empty() {
        return Ok(());
    }
    let t = CharTable::get();
    let mut carry = Carry::default();
    let mut cur = Classes::of(classify, b, 0, t);
    let mut base = 0;
    // The text's end is a start bit of the last block (or of one more, empty block when
    // the text fills its last).
    loop {
        let rest = b.len() - base;
        let mut starts = 0;
        if rest > 0 {
            let next = Classes::of(classify, b, base + 64, t);
            starts = block_starts(cfg, b, base, &cur, &next, &mut carry);
            cur = next;
        }
        if base == 0 {
            starts &= !1; // The text's start ends no piece.
        }
        let end = if rest < 64 { 1u64 << rest } else { 0 };
        starts |= end;
        if starts != 0 {
            each(base, starts)?;
        }
        if end != 0 {
            return Ok(());
        }
        base += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::blocks::testing::{assert_same_ends, ends_of, every_string, Driver, DEPTH};
    use super::*;
    use crate::testing::xorshift;

    fn scalar(cfg: &Cl100kScanner, text: &str) -> Vec<usize> {
        let t = CharTable::get();
        let b = text.as_bytes();
        let mut out = Vec::new();
        crate::spanners::split_with(b.len(), &mut out, |i| cfg.piece_end(t, b, i));
        out
    }

    impl Driver for &Cl100kScanner {
        fn ends_with(&self, classify: impl Classify, text: &str) -> Vec<usize> {
            let mut out = Vec::new();
            each_window_with::<()>(classify, self, text, |base, ends| {
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
            let _ = crate::spanners::PieceScanner::each_end(*self, text, |end| {
                out.push(end);
                Ok::<(), ()>(())
            });
            out
        }
    }

    const CONFIGS: [Cl100kScanner; 3] = [
        Cl100kScanner::CL100K_TIKTOKEN,
        Cl100kScanner::CL100K_ORIGINAL,
        Cl100kScanner::QWEN2,
    ];

    fn check(text: &str) {
        for cfg in &CONFIGS {
            assert_same_ends(cfg.name, text, &scalar(cfg, text), &ends_of(&cfg, text));
        }
    }

    /// `text` at every offset of a block (so that each of its positions meets the block
    /// edges), after ASCII letters and after white space.
    fn check_shifted(text: &str) {
        check(text);
        for pad in [1, 2, 3, 30, 58, 59, 60, 61, 62, 63, 64, 65, 127] {
            for fill in ["a", " ", "1", ".", "\n"] {
                check(&(fill.repeat(pad) + text));
            }
        }
    }

    #[test]
    fn known_cases() {
        for text in [
            "",
            "Hello world, it's",
            "   Hello\n    Hello",
            "\t\n",
            "\r\n\r\nx",
            "a\tb",
            "a  ",
            "x \n \n y",
            "«Hello»",
            "\"'x",
            " ...\n\nA",
            " 1",
            "a\n ",
            "a\n \n  ",
            "a \n",
            "1234567",
            "12½Ⅻ3",
            "a'S",
            "'ſ",
            "I'LL",
            "we'Ve",
            "'x",
            "'1",
            "😀😀 😀x",
            "中文 字",
            "كَتَبَ",
            "\u{85}x\u{85}\u{85}",
            "a\u{A0}b",
            "a\u{3000}\u{3000}\u{3000}b",
            "a\u{2028}\nb",
            "!\n \n ",
            "!\n\n  a",
            "x's 'sand ''s  's (a  (a \t(a",
            "\u{3000}\u{3000}(",
            "١٢٣٤٥ 12٣4567",
        ] {
            check_shifted(text);
        }
    }

    /// Every string of up to five characters from one character of each class that
    /// matters (and the contraction letters), and of up to six from a smaller set.
    #[test]
    fn exhaustive_short() {
        let alphabet = [
            "a", "s", "l", "e", "1", " ", "\t", "\n", "\r", "'", ".", "é", "\u{3000}", "٣",
            "\u{301}",
        ];
        every_string(&alphabet, DEPTH, "", "", check);
        let alphabet = ["a", "s", "1", " ", "\n", "'", ".", "\u{A0}"];
        every_string(&alphabet, DEPTH + 1, "", "", check);
    }

    /// Short strings placed across a block edge, and ending the text there.
    #[test]
    fn exhaustive_across_edges() {
        let alphabet = ["a", "1", " ", "\n", "'", ".", "\u{A0}", "s"];
        for pad in [60, 61, 62, 63] {
            let before = "x".repeat(pad - 2) + ". ";
            every_string(&alphabet, DEPTH, &before, "", check);
            every_string(&alphabet, DEPTH - 1, &before, "\n b", check);
        }
    }

    #[test]
    fn long_runs() {
        for unit in [
            " ", "1", "a", "\n", "\t", ".", "é", "\u{3000}", "٣", " \n", "\n ",
        ] {
            for count in [1, 2, 3, 63, 64, 65, 127, 128, 129, 200] {
                let run = unit.repeat(count);
                for around in ["", "x", " ", "\n", "!", "1"] {
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
            "a", "Hello", " world", "'s", "'LL", "'ve", "'", "''", " '", "1", "123", "4567", " ",
            "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\n ", ".", ",", "...", "(", " (", "é",
            "中文", "\u{3000}", "\u{A0}", "\u{85}", "\u{2028}", "٣", "½", "\u{301}", "😀", "ſ",
            "'ſ", "\u{B}", "\u{C}", "x",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let len = (xorshift(&mut seed) % 80) as usize;
            let mut text = String::new();
            for _ in 0..len {
                let r = xorshift(&mut seed) as usize;
                let piece = pieces[r % pieces.len()];
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
