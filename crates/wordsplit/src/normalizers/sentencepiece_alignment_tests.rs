//! The alignments' normalized text is the normalizers' own, for every flag and layout, and
//! their places are within the text, in order.

use super::super::{MetaspaceNormalizer, SentencePieceNormalizer};
use crate::normalizers::Normalizer;
use crate::spec::{NormalizerSpec, PrependScheme, SentencePieceFlags};

const TEXTS: [&str; 12] = [
    "",
    " ",
    "a",
    "  a  b  ",
    "Hello world",
    "▁x",
    " ▁ y",
    "é\u{301} ①",
    "a\tb\u{3000}c",
    "日本  語 ",
    "x  ",
    "\u{2581}\u{2581}",
];

fn check(normalizer: &dyn Normalizer, text: &str, later: bool) {
    let (normalized, parts) = if later {
        (
            normalizer.normalize_later(text).unwrap(),
            normalizer.alignment_parts_later(text),
        )
    } else {
        (
            normalizer.normalize(text).unwrap(),
            normalizer.alignment_parts(text),
        )
    };
    let count = text.chars().count();
    match parts.unwrap() {
        None => assert_eq!(normalized, text),
        Some(parts) => {
            assert_eq!(parts.normalized, normalized, "{text:?}");
            assert_eq!(parts.head.len() + parts.tail, normalized.chars().count());
            assert!(
                parts.head.iter().all(|&(a, b, _)| a < b && b <= count),
                "{text:?}"
            );
            assert!(parts.head.windows(2).all(|w| w[0].0 <= w[1].0), "{text:?}");
        }
    }
}

#[test]
fn sentencepiece_alignments_spell_the_normalized_text() {
    for bits in 0..16u8 {
        let flags = SentencePieceFlags {
            add_dummy_prefix: bits & 1 != 0,
            remove_extra_whitespaces: bits & 2 != 0,
            escape_whitespaces: bits & 4 != 0,
            treat_whitespace_as_suffix: bits & 8 != 0,
        };
        let normalizer = SentencePieceNormalizer::new(flags);
        for text in TEXTS {
            check(&normalizer, text, false);
        }
    }
}

#[test]
fn metaspace_alignments_spell_the_normalized_text() {
    let lowercase = NormalizerSpec::Sequence(vec![NormalizerSpec::Lowercase]);
    for before in [NormalizerSpec::None, NormalizerSpec::Nfkc, lowercase] {
        for scheme in [
            PrependScheme::Always,
            PrependScheme::First,
            PrependScheme::Never,
        ] {
            for split in [false, true] {
                let normalizer = MetaspaceNormalizer::new('\u{2581}', scheme, &before)
                    .unwrap()
                    .with_whitespace_split(split);
                for text in TEXTS {
                    check(&normalizer, text, false);
                    check(&normalizer, text, true);
                }
            }
        }
    }
}

#[test]
fn a_prepended_replacement_aligns_to_the_first_character() {
    let normalizer =
        MetaspaceNormalizer::new('\u{2581}', PrependScheme::First, &NormalizerSpec::None).unwrap();
    let parts = normalizer.alignment_parts("ab c").unwrap().unwrap();
    assert_eq!(parts.normalized, "▁ab▁c");
    assert_eq!(
        parts.head,
        [
            (0, 1, false),
            (0, 1, true),
            (1, 2, true),
            (2, 3, false),
            (3, 4, true)
        ]
    );
    assert!(normalizer.alignment_parts_later("ab").unwrap().is_none());
}
