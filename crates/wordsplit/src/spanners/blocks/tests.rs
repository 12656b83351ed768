use super::bitmaps::Classes;
use super::decode::code_point_of_word;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
use super::neon::Neon;
use super::portable::Portable;
#[cfg(target_arch = "x86_64")]
use super::x86::{Avx2, Avx512, Sse2};
use super::Classify;
use crate::spanners::classes::{CharTable, LETTER, LM, LO, LT, LU, MARK, NUMBER, WS};

/// The classifiers' bitmaps of a block, every field.
fn fields(c: &Classes) -> [u64; 11] {
    [
        c.valid,
        c.letter,
        c.upper,
        c.digit,
        c.space,
        c.newline,
        c.blank,
        c.apostrophe,
        c.slash,
        c.non_ascii,
        c.cont,
    ]
}

/// The byte-at-a-time definition of each class, for one byte.
fn classes_of_byte(x: u8) -> [bool; 10] {
    [
        x.is_ascii_alphabetic(),
        x.is_ascii_uppercase(),
        x.is_ascii_digit(),
        matches!(x, 0x09..=0x0D | b' '),
        x == b'\n' || x == b'\r',
        x == b' ',
        x == b'\'',
        x == b'/',
        x >= 0x80,
        x & 0xC0 == 0x80,
    ]
}

#[test]
fn classifiers_agree_on_every_byte_in_every_lane() {
    // Every byte value in every position of a block, its neighbours other values (so a
    // carry or borrow between lanes would show).
    for x in 0..=255u8 {
        for at in 0..64 {
            let mut block = [0u8; 64];
            for (i, b) in block.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(97).wrapping_add(x ^ 0x5A);
            }
            block[at] = x;
            let want: Vec<[bool; 10]> = block.iter().map(|&b| classes_of_byte(b)).collect();
            let got = fields(&Portable.classify(&block));
            assert_eq!(got[0], u64::MAX);
            for (field, bits) in got[1..].iter().enumerate() {
                for (i, classes) in want.iter().enumerate() {
                    assert_eq!(
                        bits >> i & 1 == 1,
                        classes[field],
                        "byte {:#x} lane {i} class {field}",
                        block[i]
                    );
                }
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            assert_eq!(
                fields(&Neon.classify(&block)),
                got,
                "NEON, byte {x:#x} at {at}"
            );
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(
                    fields(&Sse2.classify(&block)),
                    got,
                    "SSE2, byte {x:#x} at {at}"
                );
                if std::arch::is_x86_feature_detected!("avx2") {
                    assert_eq!(
                        fields(&Avx2.classify(&block)),
                        got,
                        "AVX2, byte {x:#x} at {at}"
                    );
                }
                if std::arch::is_x86_feature_detected!("avx512bw") {
                    assert_eq!(
                        fields(&Avx512.classify(&block)),
                        got,
                        "AVX-512, byte {x:#x} at {at}"
                    );
                }
            }
        }
    }
}

/// Each byte of each block gets the classes of the character it is part of, whose lead
/// byte may be in the block before: every UTF-8 length, and letters of each case,
/// numbers, white space, marks and punctuation outside ASCII, in random order; and
/// `complete_cased` tells the blocks holding an Lm, Lo or mark character before an Lu
/// or Lt letter, or a mark after no letter.
#[test]
fn completed_blocks_give_each_byte_its_characters_classes() {
    let chars = [
        "a",
        "A",
        "1",
        " ",
        "\n",
        ".",
        "é",
        "É",
        "ǅ",
        "ʰ",
        "ª",
        "中",
        "\u{301}",
        "٣",
        "½",
        "\u{A0}",
        "\u{85}",
        "\u{3000}",
        "«",
        "—",
        "😀",
        "𝐀",
        "𝟙",
        "\u{E0100}",
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..300 {
        let mut text = String::new();
        while text.len() < 300 {
            text.push_str(
                chars[(crate::testing::xorshift(&mut seed) % chars.len() as u64) as usize],
            );
        }
        assert_completed(&text);
    }
}

/// Blocks of characters of one length, decoded at that length, and a character of
/// another length at every place, the block's last bytes included (where its
/// continuation bytes pass the block's end): each byte still gets its character's
/// classes. The runs alternate classes, so a character decoded at the wrong length or
/// offset shows.
#[test]
fn blocks_of_one_character_length_and_an_intruder_at_each_place() {
    for (run, intruders) in [
        ("é٣", ["中", "\u{3000}", "𝟙", "😀"]),
        ("中\u{3000}", ["é", "٣", "𝟙", "\u{A0}"]),
        ("中\u{3000}", ["a", "1", " ", "😀"]),
    ] {
        for intruder in intruders {
            for at in 0..140 {
                let mut text = run.repeat(60);
                let at = text.floor_char_boundary(at);
                text.insert_str(at, intruder);
                assert_completed(&text);
            }
        }
    }
}

/// [`Classes::of`] and [`Classes::complete_cased`] of each block of `text` against
/// each character's own flags.
fn assert_completed(text: &str) {
    let t = CharTable::get();
    let b = text.as_bytes();
    // Each byte's character's flags.
    let mut flags = vec![0u8; b.len()];
    let mut i = 0;
    while i < b.len() {
        let (class, n) = t.at(b, i);
        flags[i..i + n].fill(class);
        i += n;
    }
    for base in (0..b.len()).step_by(64) {
        let plain = Classes::of(Portable, b, base, t);
        let mut cased = Classes::of_ascii(Portable, b, base);
        let modelled = cased.complete_cased(b, base, t);
        let end = b.len().min(base + 64);
        let mut unmodelled = false;
        let marks = (base..end)
            .filter(|&i| flags[i] & MARK != 0)
            .fold(0u64, |bits, i| bits | 1 << (i - base));
        for (bit, &f) in flags[base..end].iter().enumerate() {
            let has = |bits: u64| bits >> bit & 1 == 1;
            let at = format!("{text:?} byte {}", base + bit);
            assert_eq!(has(plain.letter), f & LETTER != 0, "letter, {at}");
            assert_eq!(has(plain.digit), f & NUMBER != 0, "digit, {at}");
            assert_eq!(has(plain.space), f & WS != 0, "space, {at}");
            assert_eq!(
                [cased.letter, cased.digit, cased.space],
                [plain.letter | marks, plain.digit, plain.space]
            );
            assert_eq!(has(cased.upper), f & (LU | LT) != 0, "upper, {at}");
            assert_eq!(has(plain.upper), b[base + bit].is_ascii_uppercase(), "{at}");
            // An Lm, Lo or mark character right before an Lu or Lt one (which may
            // start in the next block): the character after this byte's.
            let next = (base + bit + 1..b.len()).find(|&i| b[i] & 0xC0 != 0x80);
            let upper_next = next.is_some_and(|i| flags[i] & (LU | LT) != 0);
            unmodelled |= f & (LM | LO | MARK) != 0 && upper_next;
            // A mark after a character that is no letter (nor a mark, inside the
            // block): the character before this byte's.
            let lead = (0..=base + bit)
                .rev()
                .find(|&i| b[i] & 0xC0 != 0x80)
                .unwrap();
            let before = (lead > 0).then(|| flags[lead - 1]);
            let allowed = if lead <= base { LETTER } else { LETTER | MARK };
            unmodelled |= f & MARK != 0 && before.is_none_or(|g| g & allowed == 0);
        }
        assert_eq!(
            modelled, !unmodelled,
            "Lm, Lo, marks before Lu, Lt or marks after no letter: {text:?} block {base}"
        );
    }
}

#[test]
fn every_multibyte_character_read_as_a_word_gives_its_code_point() {
    // The bytes after the character are another's: all ones, every bit to mask off.
    for c in (0x80..=0x10_FFFF).filter_map(char::from_u32) {
        let mut word = [0xFFu8; 4];
        c.encode_utf8(&mut word);
        let read = code_point_of_word(u32::from_be_bytes(word));
        assert_eq!(read, c as u32, "U+{:04X}", c as u32);
    }
}
