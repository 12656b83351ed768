//! The alignment's normalized text is the normalizer's own, for every flag, with and without a
//! character map; its places are within the text, in order; and a few places spelled out.

use std::sync::Arc;

use super::super::{LlamaCppBertNormalizer, LlamaCppUnigramNormalizer};
use crate::normalizers::charsmap::CharsMap;
use crate::normalizers::charsmap_build::compile;
use crate::normalizers::Normalizer;

const TEXTS: [&str; 13] = [
    "",
    " ",
    "a",
    "  a  b  ",
    "Hello world",
    "▁x ▁",
    "Ａｱﾞ x①",
    "ｱx  ",
    "é\u{301} ①  ",
    "a\tb\u{3000}c",
    "日本  語 ",
    "q~r",
    "\u{2581}\u{2581}",
];

/// A map with keys of one and two characters, an output with spaces in it, an output that is
/// a space, and a key that maps to nothing.
fn map() -> Arc<CharsMap> {
    let rules = [
        ("Ａ", "A"),
        ("ｱ", "ア"),
        ("ｱﾞ", "ア゙"),
        ("x", "y  z"),
        ("①", "1"),
        ("\u{3000}", " "),
        ("~", ""),
    ];
    Arc::new(CharsMap::parse(&compile(&rules)).unwrap())
}

fn normalizers() -> Vec<LlamaCppUnigramNormalizer> {
    let mut all = Vec::new();
    for map in [None, Some(map())] {
        for (prefix, merge) in [(false, false), (true, false), (false, true), (true, true)] {
            all.push(LlamaCppUnigramNormalizer::new(prefix, merge, map.clone()));
        }
    }
    all
}

#[test]
fn alignments_spell_the_normalized_text() {
    for normalizer in normalizers() {
        for text in TEXTS {
            let normalized = normalizer.normalize(text).unwrap();
            let count = text.chars().count();
            match normalizer.alignment_parts(text).unwrap() {
                None => assert_eq!(normalized, text),
                Some(parts) => {
                    assert_eq!(parts.normalized, normalized, "{text:?}");
                    assert_eq!(parts.tail, 0);
                    assert_eq!(parts.head.len(), normalized.chars().count(), "{text:?}");
                    let inside = |&(a, b, _): &(usize, usize, bool)| a < b && b <= count;
                    assert!(parts.head.iter().all(inside), "{text:?}");
                    assert!(parts.head.windows(2).all(|w| w[0].0 <= w[1].0), "{text:?}");
                }
            }
        }
    }
}

#[test]
fn an_added_space_aligns_to_what_it_is_put_before() {
    // add_space_prefix alone: one ▁ before the first other character; each space its own ▁.
    let prefix = LlamaCppUnigramNormalizer::new(true, false, None);
    let parts = prefix.alignment_parts(" ab c").unwrap().unwrap();
    assert_eq!(parts.normalized, "▁▁ab▁c");
    assert_eq!(
        parts.head,
        [
            (0, 1, false),
            (1, 2, false),
            (1, 2, true),
            (2, 3, true),
            (3, 4, false),
            (4, 5, true)
        ]
    );
    // remove_extra_whitespaces: one ▁ per run, to its first key; a key's output to the key,
    // the spaces inside an output making runs of their own.
    let merge = LlamaCppUnigramNormalizer::new(true, true, Some(map()));
    let parts = merge.alignment_parts("Ａｱﾞ x①").unwrap().unwrap();
    assert_eq!(parts.normalized, "▁Aア゙▁y▁z1");
    assert_eq!(
        parts.head,
        [
            (0, 1, false),
            (0, 1, false),
            (1, 3, false),
            (1, 3, false),
            (4, 5, false),
            (4, 5, false),
            (4, 5, false),
            (4, 5, false),
            (5, 6, false)
        ]
    );
    // A text the normalizer leaves as it is has no alignment of its own.
    let plain = LlamaCppUnigramNormalizer::new(false, false, Some(map()));
    assert!(plain.alignment_parts("abc").unwrap().is_none());
    assert!(plain.alignment_parts("").unwrap().is_none());
    // (a key whose output drops it is in no character's place)
    let parts = plain.alignment_parts("a~b").unwrap().unwrap();
    assert_eq!(parts.normalized, "ab");
    assert_eq!(parts.head, [(0, 1, true), (2, 3, true)]);
}

#[test]
fn bert_alignments_place_each_kept_character_on_its_own() {
    let texts = [
        "",
        "abc",
        "Héllo, WORLD! 你好",
        "ÀB  cd\u{301}é",
        "a\u{0}b\u{fffd}c\u{7}d\te",
        "\u{301}\u{301}x",
        "ǅ ẞ İ",
    ];
    for (lowercase, strip_accents) in [(false, false), (true, false), (false, true), (true, true)] {
        let normalizer = LlamaCppBertNormalizer::new(lowercase, strip_accents);
        for text in texts {
            let normalized = normalizer.normalize(text).unwrap();
            let chars: Vec<char> = text.chars().collect();
            match normalizer.alignment_parts(text).unwrap() {
                None => assert_eq!(normalized, text),
                Some(parts) => {
                    assert_eq!(parts.normalized, normalized, "{text:?}");
                    let kept = normalized.chars().count();
                    assert_eq!(parts.head.len() + parts.tail, kept, "{text:?}");
                    // each place is one character of the text, in order, `same` when unchanged
                    let mut last = None;
                    for (&(start, end, same), out) in parts.head.iter().zip(normalized.chars()) {
                        assert_eq!(end, start + 1, "{text:?}");
                        assert!(last < Some(start), "{text:?}");
                        assert_eq!(same, chars[start] == out, "{text:?}");
                        last = Some(start);
                    }
                }
            }
        }
    }
    // lowercased and stripped: "À" becomes "a" in its place, the dropped U+0301 has none
    let parts = LlamaCppBertNormalizer::new(true, true)
        .alignment_parts("ÀB cd\u{301}")
        .unwrap()
        .unwrap();
    assert_eq!(parts.normalized, "ab cd");
    assert_eq!(parts.head[..2], [(0, 1, false), (1, 2, false)]);
}
