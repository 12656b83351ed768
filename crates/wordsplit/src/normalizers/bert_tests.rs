use super::*;

fn all_options() -> impl Iterator<Item = BertNormalizer> {
    (0..16)
        .map(|bits| BertNormalizer::new(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0))
}

fn normalized(normalizer: &BertNormalizer, text: &str) -> String {
    normalizer.normalize(text).unwrap()
}

#[test]
fn the_four_steps_as_hf_runs_them() {
    let bert = BertNormalizer::new(true, true, true, true);
    assert_eq!(
        normalized(&bert, "Héllo\tWORLD\u{ad} 中文!"),
        "hello world  中  文 !"
    );
    assert_eq!(normalized(&bert, "\0a\u{fffd}b\u{200b}\r\n"), "ab  ");
    // NFD reorders marks and decomposes Hangul and CJK compatibility ideographs; marks go.
    assert_eq!(
        normalized(&bert, "a\u{323}\u{302}ÅΩ\u{f900}한"),
        "aaω 豈 \u{1112}\u{1161}\u{11ab}"
    );
    // Lowercasing comes after accents: İ's dot is stripped, else its lowercase keeps it.
    assert_eq!(normalized(&bert, "İ"), "i");
    let accents_kept = BertNormalizer::new(true, true, false, true);
    assert_eq!(normalized(&accents_kept, "İ"), "i\u{307}");
    let cased = BertNormalizer::new(true, true, false, false);
    assert_eq!(normalized(&cased, "Héllo\u{3000}中"), "Héllo  中 ");
    assert_eq!(cased.normalize_changed("Héllo, World"), None);
    let none = BertNormalizer::new(false, false, false, false);
    assert_eq!(none.normalize_changed("A\0\t中é\u{301}"), None);
}

#[test]
fn eight_bytes_at_a_time_say_what_one_at_a_time_says() {
    for normalizer in all_options() {
        for byte in 0..=255u8 {
            for at in 0..8 {
                let mut word = *b"abcdefgh";
                word[at] = byte;
                let plain = normalizer.plain_word(u64::from_le_bytes(word));
                let each = word
                    .iter()
                    .all(|&b| b < 0x80 && normalizer.ascii[b as usize] == b);
                // (the words may call a control character changed that is not: then the
                // byte-at-a-time path decides)
                assert!(!plain || each, "{byte:#x} at {at}");
                if byte >= 0x80 || byte.is_ascii_uppercase() && normalizer.lowercase {
                    assert!(!plain, "{byte:#x} at {at}");
                }
                if byte.is_ascii_graphic() && !byte.is_ascii_uppercase() {
                    assert!(plain, "{byte:#x} at {at}");
                }
            }
        }
    }
}

/// Texts over characters every step treats apart, from a fixed generator.
fn texts() -> Vec<String> {
    // (ç, ã and ệ wait for NFD one after another; U+0344 is no starter and decomposes)
    let alphabet: Vec<char> = "çãệ\u{344}aZé É\u{301}\u{323}\u{302}\u{327}ßİıǅ中文\u{f900}\u{2f800}𠀀한\t\n\r\u{b}\u{85}\u{a0}\u{3000}\u{2028}\0\u{1}\u{7f}\u{ad}\u{200b}\u{200d}\u{feff}\u{fffd}\u{e000}\u{e0041}ΣΟ\u{1c89}Ⅻ①Ｆﬁ\u{f71}\u{f72}\u{f73}\u{1d165}\u{1d16d}x!,.-"
        .chars()
        .collect();
    let mut state: u64 = 11;
    (0..3000)
        .map(|round| {
            (0..round % 29)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect()
        })
        .collect()
}

#[test]
fn one_pass_gives_what_the_steps_one_by_one_give() {
    for normalizer in all_options() {
        for text in texts() {
            let (stepwise, alignment) = normalizer.alignment(&text);
            assert_eq!(normalized(&normalizer, &text), stepwise, "{text:?}");
            assert_eq!(alignment.len(), stepwise.chars().count(), "{text:?}");
            let changed = normalizer.normalize_changed(&text);
            assert!(changed.is_some() || stepwise == text, "{text:?}");
        }
    }
}

#[test]
fn alignments_as_hf_carries_them() {
    let bert = BertNormalizer::new(true, true, true, true);
    let (t, f) = (true, false);
    assert_eq!(
        bert.alignment("a中"),
        (
            "a 中 ".into(),
            vec![(0, 1, t), (1, 2, f), (1, 2, f), (1, 2, f)]
        )
    );
    // HF's changes for an ideograph, (' ', 0), (c, +1), (' ', +1): the space before it takes
    // its place, so all three are aligned to it, at the start too (HF tokenizers 0.23.3 gives
    // "中" the offsets (0, 1) after a Metaspace); dropped characters are in no range; a
    // lowercase's extra characters follow the character they come from.
    assert_eq!(
        bert.alignment("中\u{ad}É\tİ"),
        (
            " 中 e i".into(),
            vec![
                (0, 1, f),
                (0, 1, f),
                (0, 1, f),
                (2, 3, f),
                (3, 4, f),
                (4, 5, f)
            ]
        )
    );
    let accents_kept = BertNormalizer::new(true, true, false, true);
    assert_eq!(
        accents_kept.alignment("xİ"),
        ("xi\u{307}".into(), vec![(0, 1, t), (1, 2, f), (1, 2, f)])
    );
    assert!(bert.alignment_parts("plain text").unwrap().is_none());
    let parts = bert.alignment_parts("A").unwrap().unwrap();
    assert_eq!(
        (parts.normalized, parts.head, parts.tail),
        ("a".into(), vec![(0, 1, f)], 0)
    );
}

#[test]
fn a_character_alone_decomposes_as_the_crates_nfd_orders_it() {
    for c in (0..0x11_0000).filter_map(char::from_u32) {
        let mut decomposed = String::new();
        decompose_canonical(c, |d| decomposed.push(d));
        let nfd: String = c.to_string().nfd().map(|(d, _)| d).collect();
        assert_eq!(decomposed, nfd, "{c:?}");
    }
}
