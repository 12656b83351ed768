//! HF's NFC, fast: only the stretches of text that can change are normalized ([`nfc_of`]).

use std::sync::OnceLock;

use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::spanners::classes::decode_multibyte;

/// One bit per code point of the Basic Multilingual Plane: set for a starter (canonical
/// combining class 0) that passes NFC's quick check, the characters [`nfc_of`] passes over.
/// Made once per process from the normalization crate's own lookups (65,536 of each, under
/// 2 ms), so that text in CJK, Cyrillic, Greek or Arabic costs [`nfc_of`] a bit test per
/// character rather than two perfect-hash lookups (a tenth of a one-pass encode of
/// multilingual text with Qwen3's NFC).
fn plain_starters() -> &'static [u64; 1024] {
    static STARTERS: OnceLock<Box<[u64; 1024]>> = OnceLock::new();
    STARTERS.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for c in (0..0x1_0000).filter_map(char::from_u32) {
            if canonical_combining_class(c) == 0
                && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes
            {
                bits[c as usize / 64] |= 1 << (c as usize % 64);
            }
        }
        bits
    })
}

#[inline(always)]
fn is_plain_starter(starters: &[u64; 1024], c: char) -> bool {
    let c = c as usize;
    c < 0x1_0000 && starters[c / 64] & (1 << (c % 64)) != 0
}

/// The character starting at byte `i` of `bytes`, the bytes of a `str`, and its length.
#[inline(always)]
fn char_at(bytes: &[u8], i: usize) -> (char, usize) {
    let (code, width) = match bytes[i] {
        lead @ 0..=0x7f => (u32::from(lead), 1),
        _ => decode_multibyte(bytes, i),
    };
    // SAFETY: `bytes` is valid UTF-8 and `i` the start of one of its characters, so these
    // are the bytes of one scalar value, decoded as UTF-8 encodes it.
    (unsafe { char::from_u32_unchecked(code) }, width)
}

/// HF's NFC of `text` (the crate's), or None when `text` is already in NFC.
///
/// Only the stretches that can change are normalized. The text is cut before every starter
/// whose NFC quick check is Yes: nothing before such a character can reorder past it or
/// compose with it, so NFC of the whole is NFC of each stretch, concatenated. A stretch whose
/// characters all pass the quick check in canonical order is already NFC. Text with a few
/// characters that the quick check calls Maybe (Tamil and Bengali vowel signs, kana voicing
/// marks...) thus costs a few short normalizations instead of one of the whole document.
pub fn nfc_of(text: &str) -> Option<String> {
    if text.is_ascii() {
        return None;
    }
    let mut out: Option<String> = None;
    let mut copied = 0; // text[..copied] is in `out` already
    let mut flush = |start: usize, end: usize, out: &mut Option<String>| {
        let stretch = &text[start..end];
        let normalized: String = stretch.nfc().map(|(c, _)| c).collect();
        if normalized != stretch {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..start]);
            o.push_str(&normalized);
            copied = end;
        }
    };
    let starters = plain_starters();
    let bytes = text.as_bytes();
    let (mut stretch, mut suspect, mut last_class) = (0, false, 0u8);
    let mut i = 0;
    while i < bytes.len() {
        // Outside a suspect stretch, eight ASCII characters (plain starters all) at a time:
        // the last of them starts the stretch.
        if !suspect {
            if let Some(word) = bytes.get(i..i + 8) {
                let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
                if word & 0x8080_8080_8080_8080 == 0 {
                    stretch = i + 7;
                    last_class = 0;
                    i += 8;
                    continue;
                }
            }
        }
        let (c, width) = char_at(bytes, i);
        // Below U+0300 every character is a starter that passes the quick check.
        let (class, yes) = if c < '\u{300}' || is_plain_starter(starters, c) {
            (0, true)
        } else {
            let yes = is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes;
            (canonical_combining_class(c), yes)
        };
        if class == 0 && yes {
            if suspect {
                flush(stretch, i, &mut out);
            }
            stretch = i;
            suspect = false;
        } else if !yes || (class != 0 && class < last_class) {
            suspect = true;
        }
        last_class = class;
        i += width;
    }
    if suspect {
        flush(stretch, text.len(), &mut out);
    }
    if let Some(o) = out.as_mut() {
        o.push_str(&text[copied..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_at_decodes_as_char_indices() {
        let text = "a\u{7f}\u{80}é\u{7ff}\u{800}中\u{ffff}\u{10000}😀\u{10ffff}z";
        let mut i = 0;
        for (at, c) in text.char_indices() {
            assert_eq!(i, at);
            assert_eq!(char_at(text.as_bytes(), i), (c, c.len_utf8()));
            i += c.len_utf8();
        }
    }

    #[test]
    fn plain_starters_are_the_crates_starters_that_pass_the_quick_check() {
        let starters = plain_starters();
        for c in (0..0x1_0000).filter_map(char::from_u32) {
            let plain = canonical_combining_class(c) == 0
                && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes;
            assert_eq!(is_plain_starter(starters, c), plain, "{c:?}");
        }
        assert!(is_plain_starter(starters, '中') && is_plain_starter(starters, 'Й'));
        assert!(!is_plain_starter(starters, '\u{301}') && !is_plain_starter(starters, '\u{3099}'));
        assert!(
            !is_plain_starter(starters, '\u{f900}'),
            "a singleton decomposition"
        );
        assert!(
            !is_plain_starter(starters, '😀'),
            "outside the table: the lookups decide"
        );
    }

    #[test]
    fn nfc_by_stretches_is_nfc_of_the_whole() {
        // Characters that compose, reorder, decompose or start stretches, in random orders
        // (a fixed linear congruential generator, so the test is the same on every run).
        let alphabet: Vec<char> = "ae\u{301}\u{327}\u{323}\u{344}\u{f73}\u{ba4}\u{bbe}\u{bca}\u{bc6}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{1e0a}\u{304b}\u{3099}\u{212b}\u{2126} z\u{5d0}\u{5b4}\u{5b7}"
            .chars()
            .collect();
        let mut state: u64 = 7;
        for round in 0..20_000 {
            let length = 1 + round % 12;
            let text: String = (0..length)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect();
            let whole: String = text.nfc().map(|(c, _)| c).collect();
            let by_stretches = nfc_of(&text).unwrap_or_else(|| text.clone());
            assert_eq!(by_stretches, whole, "{text:?}");
            assert_eq!(nfc_of(&text).is_none(), whole == text, "{text:?}");
        }
    }
}
