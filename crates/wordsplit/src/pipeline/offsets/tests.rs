use super::alignment::{form_alignment, nfc_alignment, prefix_suffix_alignment, spanned_alignment};
use super::char_counter::CharCounter;
use crate::pipeline::{NormalizeStage, SpannedText};

#[test]
fn char_counter_any_order() {
    let text = "aé😀b";
    let mut counter = CharCounter::new(text);
    assert_eq!(counter.before(3), 2);
    assert_eq!(counter.before(1), 1);
    assert_eq!(counter.before(text.len()), 4);
    counter.set(3, 2);
    assert_eq!(counter.before(7), 3);
}

#[test]
fn nfc_alignment_as_hf() {
    // "e" + U+0301 composes: the result is aligned to the "e" alone (HF drops the mark).
    let alignment = nfc_alignment("xe\u{301}").expect("changed");
    assert_eq!(alignment.normalized, "x\u{e9}");
    let spans: Vec<_> = alignment
        .chars
        .iter()
        .map(|a| (a.start, a.end, a.identical))
        .collect();
    assert_eq!(spans, [(0, 1, true), (1, 2, false)]);
    assert!(nfc_alignment("caf\u{e9}").is_none());
}

#[test]
fn form_alignment_as_hf() {
    // NFKC makes "fi" of the ligature: "f" replaces it, "i" is inserted after it, so both
    // are aligned to it; "!" is itself.
    let alignment = form_alignment("\u{fb01}!", &NormalizeStage::Nfkc).expect("changed");
    assert_eq!(alignment.normalized, "fi!");
    let spans: Vec<_> = alignment
        .chars
        .iter()
        .map(|a| (a.start, a.end, a.identical))
        .collect();
    assert_eq!(spans, [(0, 3, false), (0, 3, false), (3, 4, true)]);
    assert!(form_alignment("e\u{301}", &NormalizeStage::Nfd).is_none());
    assert!(form_alignment("caf\u{e9}", &NormalizeStage::Nfkd).is_some());
}

#[test]
fn spanned_alignment_as_hf_prepend() {
    // "ab  c" as the pieces " ab" and " c": each prefix space is aligned to its piece's
    // first character, not identical to it; the dropped spaces are in no character.
    let spanned = SpannedText {
        text: " ab c".to_owned(),
        pieces: vec![(0, 2, 1), (4, 5, 1)],
    };
    let alignment = spanned_alignment(spanned, "ab  c", None, 5);
    let spans: Vec<_> = alignment
        .chars
        .iter()
        .map(|a| (a.start, a.end, a.normalized_start, a.identical))
        .collect();
    assert_eq!(
        spans,
        [
            (0, 1, 0, false),
            (0, 1, 1, true),
            (1, 2, 2, true),
            (4, 5, 3, false),
            (4, 5, 4, true)
        ]
    );
    // Through a normalizer's alignment: "xe\u{301}" is NFC "x\u{e9}"; a prefix before
    // "\u{e9}" takes the "e" it is aligned to.
    let base = nfc_alignment("xe\u{301}").expect("changed");
    let spanned = SpannedText {
        text: " \u{e9}".to_owned(),
        pieces: vec![(1, 3, 1)],
    };
    let alignment = spanned_alignment(spanned, "x\u{e9}", Some(&base), 4);
    let spans: Vec<_> = alignment
        .chars
        .iter()
        .map(|a| (a.start, a.end, a.normalized_start, a.identical))
        .collect();
    assert_eq!(spans, [(1, 2, 0, false), (1, 2, 1, false)]);
}

#[test]
fn prefix_suffix_alignment_maps_the_middle() {
    let alignment = prefix_suffix_alignment("aXYb", "aZb".to_owned());
    let spans: Vec<_> = alignment
        .chars
        .iter()
        .map(|a| (a.start, a.end, a.identical))
        .collect();
    assert_eq!(spans, [(0, 1, true), (1, 3, false), (3, 4, true)]);
    // Text put before the segment is aligned to its first character.
    let alignment = prefix_suffix_alignment("\u{e9}x", "\u{2581}\u{2581}\u{e9}x".to_owned());
    let spans: Vec<_> = alignment
        .chars
        .iter()
        .map(|a| (a.start, a.end, a.normalized_start, a.identical))
        .collect();
    assert_eq!(
        spans,
        [
            (0, 2, 0, false),
            (0, 2, 3, false),
            (0, 2, 6, true),
            (2, 3, 8, true)
        ]
    );
}

/// A spanner that fails whenever it is asked for pieces: a pipeline whose split program runs
/// natively must never ask it.
#[cfg(feature = "regex")]
struct Refusing;

#[cfg(feature = "regex")]
impl crate::spanners::Spanner for Refusing {
    fn name(&self) -> &str {
        "refusing"
    }

    fn spans(&self, _: &str, _: &mut Vec<usize>) -> Result<Option<SpannedText>, crate::Error> {
        Err(crate::Error::Unsupported(
            "the foreign spanner was asked".to_owned(),
        ))
    }
}

#[cfg(feature = "regex")] // (split programs run on the regex spanners)
#[test]
fn a_split_program_places_word_model_tokens_natively() {
    use std::sync::Arc;

    use crate::encoders::wordpiece::word_model_encoder;
    use crate::pipeline::{Pipeline, SpecialPolicy};
    use crate::spanners::HfProgram;
    use crate::spec::ModelSpec;
    use crate::tables::MergeTables;

    let tokens = ["[UNK]", "un", "##aff", "##able", "é", "##é"];
    let tokens: Vec<(&[u8], u32)> = (0..).zip(tokens).map(|(i, t)| (t.as_bytes(), i)).collect();
    let tables = Arc::new(MergeTables::from_tokens(tokens, &[], 6, None, true).unwrap());
    let model = ModelSpec::WordPiece {
        unk_token: "[UNK]".into(),
        continuing_subword_prefix: "##".into(),
        max_input_chars_per_word: 100,
    };
    let encoder = word_model_encoder("wordpiece", &tables, &model, "tiny")
        .unwrap()
        .unwrap();
    // Spaces removed (HF's `Split(" ", Removed)`): the program's pieces, not the foreign
    // spanner's, which refuses.
    let removed = Some((" ".to_owned(), "Removed".to_owned(), false));
    let pipeline = Pipeline::builder(tables)
        .foreign_encoder(encoder)
        .foreign_spanner(Box::new(Refusing))
        .program(HfProgram::new(&[removed]).unwrap())
        .reads_text(true)
        .build()
        .unwrap();
    assert!(pipeline.is_native());
    let (mut ids, mut places) = (Vec::new(), Vec::new());
    let text = " unaffable  éé x";
    pipeline
        .encode_with_offsets(text, &SpecialPolicy::AllowAll, &mut ids, &mut places)
        .unwrap();
    // un ##aff ##able é ##é [UNK]: each token the part of its word it stands for, its `##` not
    // counted; "x" (no token) is [UNK], the whole word.
    assert_eq!(ids, [1, 2, 3, 4, 5, 0]);
    assert_eq!(
        places,
        [
            [1, 3, 1, 3, 0],
            [3, 6, 3, 6, 0],
            [6, 10, 6, 10, 0],
            [12, 14, 12, 13, 1],
            [14, 16, 13, 14, 1],
            [17, 18, 15, 16, 2],
        ]
    );
}
