use super::*;
use crate::spanners::HfProgram;
use crate::testing::texts;

/// `ranges` as the inside of a regex class of code point escapes.
fn class(ranges: &[(u32, u32)]) -> String {
    ranges
        .iter()
        .map(|&(a, b)| format!("\\x{{{a:X}}}-\\x{{{b:X}}}"))
        .collect()
}

/// CLIP's program as the regex spanner runs it: its classes spelled as the Unicode 16.0
/// ranges (the Python package's translation writes the same), GPT-2's pattern on its scanner.
fn reference() -> HfProgram {
    let (l, n, s) = (class(L), class(N), class(WHITE_SPACE));
    let clip = CLIP_PATTERN
        .replace(r"[\p{L}]+", &format!("[{l}]+"))
        .replace(r"[\p{N}]", &format!("[{n}]"))
        .replace(r"[^\s\p{L}\p{N}]+", &format!("[^{s}{l}{n}]+"));
    assert!(!clip.contains(r"\p") && !clip.contains(r"\s"));
    HfProgram::new(&[
        Some((clip, "Removed".into(), true)),
        Some((GPT2_ORIGINAL_PATTERN.into(), "Isolated".into(), false)),
    ])
    .unwrap()
}

fn spans(text: &str, run: impl Fn(&str, &mut Vec<usize>) -> Option<SpannedText>) -> Vec<String> {
    let mut ends = Vec::new();
    let spanned = run(text, &mut ends);
    let made = spanned.as_ref().map_or(text, |s| s.text.as_str());
    let mut start = 0;
    let mut out: Vec<String> = ends
        .iter()
        .map(|&end| {
            let piece = made[start..end].to_owned();
            start = end;
            piece
        })
        .collect();
    // (where each piece came from, which the pipeline's offsets use)
    if let Some(spanned) = spanned {
        out.extend(spanned.pieces.iter().map(|p| format!("{p:?}")));
    }
    out
}

#[test]
fn the_spanner_cuts_as_the_regex_program_does() {
    let alphabet = [
        "a",
        "Z",
        "é",
        "e\u{301}",
        "中",
        "한",
        "ß",
        "Σ",
        "0",
        "9",
        "٣",
        "Ⅻ",
        "½",
        "²",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\u{b}",
        "\u{c}",
        "\u{85}",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "\u{1c}",
        "\u{200b}",
        "'",
        "'s",
        "'t",
        "'re",
        "'ve",
        "'m",
        "'ll",
        "'d",
        "'S",
        "'x",
        ".",
        ",",
        "!",
        "?",
        "-",
        "_",
        "<",
        "|",
        ">",
        "<|",
        "|>",
        "<|endoftext|>",
        "<|startoftext|>",
        "<|endoftext",
        "startoftext|>",
        "😀",
        "\u{1f980}",
        "\u{0}",
        "ﬁ",
        "\u{301}",
        "$",
    ];
    let program = reference();
    for text in texts(7, &alphabet, 3000, 24) {
        let ours = spans(&text, |t, ends| ClipSpanner.spans(t, ends).unwrap());
        let regex = spans(&text, |t, ends| program.spans(t, ends).unwrap());
        assert_eq!(ours, regex, "{text:?}");
    }
}

#[test]
fn a_text_of_white_space_has_no_piece_and_a_covered_one_is_not_copied() {
    let mut ends = Vec::new();
    let spanned = ClipSpanner.spans(" \u{3000}\n", &mut ends).unwrap();
    assert_eq!(
        (spanned.map(|s| s.text), ends.len()),
        (Some(String::new()), 0)
    );
    assert!(ClipSpanner.spans("ab,c", &mut ends).unwrap().is_none());
    assert_eq!(ends, [2, 3, 4]);
}
