//! HF's `WhitespaceSplit` then `Metaspace` (`prepend_scheme: "always"`) of a text, joined
//! ([`words_with_replacement`]): what [`super::sentencepiece::MetaspaceNormalizer`] runs for
//! T5-like tokenizer.json files; and the same words with the SentencePiece spanner's cuts
//! written as they go ([`words_and_ends`]), which the pipeline runs for such files instead of
//! the two stages one after the other.
//!
//! ```text
//! " a\u{3000} ▁b  c\t" -> "▁a▁b▁c"
//! ```

/// The words of `text` between runs of white space (Rust's `char::is_whitespace`), each with
/// `replacement` (one character) before it unless it starts with one, joined.
///
/// One pass writes straight into the output's reserved room: an ASCII byte (a table lookup)
/// is stored as it comes and the replacement is stored before it at every place and kept
/// only where a word starts, so the loop has no branch but the ASCII test; other characters
/// are decoded.
///
/// ```
/// use wordsplit::normalizers::metaspace_words::words_with_replacement;
/// assert_eq!(words_with_replacement(" a\u{3000} ▁b  c\t", "▁"), "▁a▁b▁c");
/// ```
pub fn words_with_replacement(text: &str, replacement: &str) -> String {
    words::<false, false>(text, replacement, &mut Vec::new())
}

/// [`words_with_replacement`] of `text` with `▁` (T5's layout), and the ends of its pieces
/// as the SentencePiece spanner cuts the result at words, pushed to `ends`: before each `▁`
/// past the start that follows another character (`every_space`, HF's Metaspace split:
/// that follows any character), and at the end. One pass for the two, where the spanner
/// would search the text again for the `▁`s the words put there.
///
/// ```
/// use wordsplit::normalizers::metaspace_words::words_and_ends;
/// let mut ends = vec![];
/// assert_eq!(words_and_ends(" a\u{3000} ▁b  c▁▁\t", false, &mut ends), "▁a▁b▁c▁▁");
/// assert_eq!(ends, [4, 8, 12, 18]);
/// ends.clear();
/// words_and_ends(" a\u{3000} ▁b  c▁▁\t", true, &mut ends);
/// assert_eq!(ends, [4, 8, 12, 15, 18]);
/// ```
pub fn words_and_ends(text: &str, every_space: bool, ends: &mut Vec<usize>) -> String {
    // (an ASCII replacement may start a word without being put there, which the ASCII loop
    // does not track: `▁` is not ASCII)
    if every_space {
        words::<true, true>(text, "\u{2581}", ends)
    } else {
        words::<true, false>(text, "\u{2581}", ends)
    }
}

/// [`words_with_replacement`], with the pieces' ends when `ENDS` (see [`words_and_ends`];
/// `EVERY_SPACE` its `every_space`, a constant so that the common case, T5's, tracks no
/// replacement before a word in its ASCII loop).
#[inline(always)]
fn words<const ENDS: bool, const EVERY_SPACE: bool>(
    text: &str,
    replacement: &str,
    ends: &mut Vec<usize>,
) -> String {
    let width = replacement.len();
    assert!((1..=4).contains(&width), "a replacement is one character");
    let mut pattern = [0u8; 4];
    pattern[..width].copy_from_slice(replacement.as_bytes());
    let pattern = u32::from_le_bytes(pattern);
    // An ASCII replacement's byte (a word that starts with it takes no other), else none.
    let ascii_replacement = if width == 1 { pattern } else { 0x100 };
    let bytes = text.as_bytes();
    // A word starts after white space, so at most one in two bytes starts one; 4 bytes of
    // room for the last 4-byte store.
    let room = bytes.len() + bytes.len().div_ceil(2) * width + 4;
    let mut out: Vec<u8> = Vec::with_capacity(room);
    let base = out.as_mut_ptr();
    let mut len = 0;
    let mut in_word = false;
    // Whether the last character out is the replacement (a cut before the next one that
    // is kept only with `every_space`).
    let mut after_replacement = false;
    if ENDS {
        // (a cut at most before each replacement put, one per two bytes, and the end)
        ends.reserve(bytes.len().div_ceil(2) + 1);
    }
    let cuts = ends.as_mut_ptr();
    let mut n = ends.len();
    let mut at = 0;
    // SAFETY: every store is within `room` (the most the output can take, plus the 4 bytes
    // of a replacement stored and not kept); the bytes kept are `text`'s whole characters and
    // whole copies of `replacement`, so the output is UTF-8. `ends` has room for an end per
    // word and the last one, and its length is set to the ends written.
    unsafe {
        while at < bytes.len() {
            let b = *bytes.get_unchecked(at);
            if b < 0x80 {
                let white = ASCII_WHITE_SPACE[usize::from(b)];
                let starts = !white & !in_word & (u32::from(b) != ascii_replacement);
                if ENDS {
                    cuts.add(n).write(len);
                    if EVERY_SPACE {
                        n += usize::from(starts & (len > 0));
                    } else {
                        n += usize::from(starts & (len > 0) & !after_replacement);
                        after_replacement &= !starts & white;
                    }
                }
                base.add(len).cast::<u32>().write_unaligned(pattern);
                len += if starts { width } else { 0 };
                *base.add(len) = b;
                len += usize::from(!white);
                in_word = !white;
                at += 1;
                continue;
            }
            // (`at` is a character boundary: every step is a whole character)
            let c = text.get_unchecked(at..).chars().next().unwrap_or(' ');
            let w = c.len_utf8();
            if c.is_whitespace() {
                in_word = false;
            } else {
                let is_replacement = bytes
                    .get_unchecked(at..)
                    .starts_with(replacement.as_bytes());
                // A replacement goes out here: the word's own, or one put before the word.
                let puts = !in_word && !is_replacement;
                if ENDS
                    && (puts || is_replacement)
                    && len > 0
                    && (EVERY_SPACE || !after_replacement)
                {
                    cuts.add(n).write(len);
                    n += 1;
                }
                if puts {
                    base.add(len).cast::<u32>().write_unaligned(pattern);
                    len += width;
                }
                std::ptr::copy_nonoverlapping(bytes.as_ptr().add(at), base.add(len), w);
                len += w;
                after_replacement = is_replacement;
                in_word = true;
            }
            at += w;
        }
        out.set_len(len);
        if ENDS {
            if len > 0 {
                cuts.add(n).write(len);
                n += 1;
            }
            ends.set_len(n);
        }
        String::from_utf8_unchecked(out)
    }
}

/// Rust's `char::is_whitespace` of each ASCII byte: tab, line feed, vertical tab, form feed,
/// carriage return and space (not U+001C to U+001F, which Python's `str.isspace` counts).
const ASCII_WHITE_SPACE: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8 as char).is_whitespace();
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of `text` one by one, as `str::split_whitespace` gives them.
    fn reference(text: &str, replacement: &str) -> String {
        let mut out = String::new();
        for word in text.split_whitespace() {
            if !word.starts_with(replacement) {
                out.push_str(replacement);
            }
            out.push_str(word);
        }
        out
    }

    #[test]
    fn every_mix_of_white_space_words_and_replacements_is_the_reference() {
        let alphabet = [
            "a", " ", "\t", "\n", "▁", "_", "é", "\u{3000}", "\u{85}", "\u{1c}", "😀", "\u{a0}",
            "x",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..400 {
            let mut text = String::new();
            for _ in 0..len % 40 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            for replacement in ["▁", "_", "é", "😀"] {
                assert_eq!(
                    words_with_replacement(&text, replacement),
                    reference(&text, replacement),
                    "{text:?} {replacement:?}"
                );
            }
        }
    }

    /// The ends of `normalized`'s pieces as the SentencePiece spanner cuts them at words.
    fn spanner_ends(normalized: &str, every_space: bool) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut after_space = true; // (the start counts as one: no cut there)
        for (i, c) in normalized.char_indices() {
            if c == '\u{2581}' {
                if !after_space || every_space && i > 0 {
                    ends.push(i);
                }
                after_space = true;
            } else {
                after_space = false;
            }
        }
        if !normalized.is_empty() {
            ends.push(normalized.len());
        }
        ends
    }

    #[test]
    fn words_and_ends_are_the_words_cut_as_the_spanner_cuts_them() {
        let alphabet = [
            "a", " ", "\t", "\n", "▁", "▁▁", "_", "é", "\u{3000}", "\u{85}", "😀", "\u{a0}", "x",
        ];
        for text in crate::testing::texts(11, &alphabet, 4000, 40) {
            let words = reference(&text, "▁");
            for every_space in [false, true] {
                let mut ends = vec![];
                assert_eq!(
                    words_and_ends(&text, every_space, &mut ends),
                    words,
                    "{text:?}"
                );
                assert_eq!(
                    ends,
                    spanner_ends(&words, every_space),
                    "{text:?} {every_space}"
                );
            }
        }
        let mut ends = vec![7];
        assert_eq!(words_and_ends(" \t", false, &mut ends), "");
        assert_eq!(ends, [7]); // nothing pushed for no words
    }

    #[test]
    fn ascii_replacement_starting_a_word_is_not_doubled() {
        assert_eq!(words_with_replacement("_a b _", "_"), "_a_b_");
        assert_eq!(words_with_replacement("", "▁"), "");
        assert_eq!(words_with_replacement("   ", "▁"), "");
        assert_eq!(words_with_replacement("▁", "▁"), "▁");
    }
}
