use super::*;

fn pieces(spanner: WordSpanner, text: &str) -> Vec<String> {
    let mut ends = Vec::new();
    let spanned = spanner.spans(text, &mut ends).unwrap();
    let made = spanned.as_ref().map_or(text, |s| s.text.as_str());
    crate::spanners::pieces_at(made, &ends)
        .map(str::to_owned)
        .collect()
}

#[test]
fn each_program_is_recognized_and_nothing_else() {
    let of = |steps: Vec<SplitStep>| WordSpanner::of(&SpannerSpec::SplitProgram(steps));
    assert_eq!(of(Vec::new()), Some(WordSpanner::Whole));
    assert_eq!(of(bert_steps()), Some(WordSpanner::Bert));
    assert_eq!(of(whitespace_steps()), Some(WordSpanner::Whitespace));
    assert_eq!(
        of(whitespace_split_steps()),
        Some(WordSpanner::WhitespaceSplit)
    );
    let mut inverted = whitespace_split_steps();
    if let SplitStep::Split { invert, .. } = &mut inverted[0] {
        *invert = true;
    }
    assert_eq!(of(inverted), None);
    assert_eq!(of(bert_steps()[1..].to_vec()), None);
    assert_eq!(WordSpanner::of(&SpannerSpec::Regex(r"\S+".into())), None);
}

#[test]
fn the_spanners_cut_as_hf_pre_tokenizers_do() {
    let text = "Hello, wörld!  don't\u{3000}x_y 42nd\u{a0}…z";
    assert_eq!(pieces(WordSpanner::Whole, text), [text]);
    assert_eq!(pieces(WordSpanner::Whole, ""), Vec::<String>::new());
    assert_eq!(
        pieces(WordSpanner::Whitespace, text),
        ["Hello", ",", "wörld", "!", "don", "'", "t", "x_y", "42nd", "…", "z"]
    );
    assert_eq!(
        pieces(WordSpanner::WhitespaceSplit, text),
        ["Hello,", "wörld!", "don't", "x_y", "42nd", "…z"]
    );
    assert_eq!(
        pieces(WordSpanner::Bert, text),
        ["Hello", ",", "wörld", "!", "don", "'", "t", "x", "_", "y", "42nd", "…", "z"]
    );
    // Runs of non-word characters stay together in Whitespace; white space of every kind goes.
    assert_eq!(
        pieces(WordSpanner::Whitespace, "a...!?b\u{b}c\u{85}d"),
        ["a", "...!?", "b", "c", "d"]
    );
    // Text without white space comes back as it is (no copy): its ends are in the text.
    let mut ends = Vec::new();
    assert!(WordSpanner::Whitespace
        .spans("ab,c", &mut ends)
        .unwrap()
        .is_none());
    assert_eq!(ends, [2, 3, 4]);
}

#[test]
fn characters_are_of_the_classes_the_python_package_spells() {
    let tables: [&[(u32, u32)]; 4] = [L, M, ND, NL];
    for c in (0..0x11_0000).filter_map(char::from_u32) {
        let cp = c as u32;
        let word = tables.iter().any(|t| contains(t, cp)) || contains(&WORD_EXTRA, cp);
        let expected = if word {
            Kind::Word
        } else if contains(WHITE_SPACE, cp) {
            Kind::Space
        } else {
            Kind::Other
        };
        assert!(kind_of(c) == expected, "{c:?}");
        assert_eq!(contains(WHITE_SPACE, cp), c.is_whitespace(), "{c:?}");
    }
}

/// The pattern with its classes spelled as explicit ranges, for the regex spanner.
#[cfg(feature = "regex")]
fn expanded(pattern: &str) -> String {
    let class = |ranges: &[(u32, u32)]| -> String {
        ranges
            .iter()
            .map(|&(a, b)| format!("\\x{{{a:X}}}-\\x{{{b:X}}}"))
            .collect()
    };
    if pattern == WHITE_SPACE_PATTERN {
        return format!("[{}]", class(WHITE_SPACE));
    }
    pattern
        .replace(WORD_CLASS_INNER, &class(word_ranges()))
        .replace(r"\s", &class(WHITE_SPACE))
}

#[cfg(feature = "regex")]
#[test]
fn the_spanners_cut_as_the_split_programs_run_by_the_regex_engines() {
    use crate::spanners::HfProgram;
    use crate::testing::texts;

    let alphabet = [
        "a", "Z", "é", "_", "9", "٣", "Ⅻ", "中", "ⓐ", "\u{200d}", "\u{301}", ".", ",", "'", "…",
        "$", "😀", " ", "\t", "\n", "\u{3000}", "\u{a0}", "\u{85}", "\u{b}", "\u{1c}", "‿",
    ];
    let programs = [
        (WordSpanner::Whitespace, whitespace_steps()),
        (WordSpanner::WhitespaceSplit, whitespace_split_steps()),
        (WordSpanner::Bert, bert_steps()),
    ];
    for (spanner, steps) in programs {
        let specs: Vec<_> = steps
            .iter()
            .map(|step| match step {
                SplitStep::Split {
                    pattern,
                    behavior,
                    invert,
                } => {
                    let pattern = expanded(pattern);
                    Some((pattern, behavior.name().to_owned(), *invert))
                }
                SplitStep::PrefixSpace => None,
            })
            .collect();
        let program = HfProgram::new(&specs).unwrap();
        for text in texts(0x5eed, &alphabet, 400, 24) {
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            let a = spanner.spans(&text, &mut ours).unwrap();
            let b = program.spans(&text, &mut theirs).unwrap();
            assert_eq!(
                (a.map(|s| (s.text, s.pieces)), ours),
                (b.map(|s| (s.text, s.pieces)), theirs),
                "{spanner:?} {text:?}"
            );
        }
    }
}

#[test]
fn whitespace_split_then_metaspace_cuts_each_word_before_every_replacement() {
    // (HF tokenizers 0.23: WhitespaceSplit then Metaspace(split: true) on text whose
    // replacements the Metaspace normalizer put in, the white space kept for the spanner)
    let mut steps = whitespace_split_steps();
    steps.push(metaspace_cut_step('▁'));
    let spanner = WordSpanner::of(&SpannerSpec::SplitProgram(steps.clone())).unwrap();
    assert_eq!(spanner, WordSpanner::WhitespaceSplitMetaspace('▁'));
    assert_eq!(
        pieces(spanner, " ▁a▁b  c ▁d▁\u{3000}▁▁e"),
        ["▁a", "▁b", "c", "▁d", "▁", "▁", "▁e"]
    );
    assert_eq!(pieces(spanner, "ab"), ["ab"]);
    assert_eq!(pieces(spanner, "  "), Vec::<String>::new());
    let other = WordSpanner::of(&SpannerSpec::SplitProgram(vec![
        steps[0].clone(),
        metaspace_cut_step('_'),
    ]));
    assert_eq!(other, Some(WordSpanner::WhitespaceSplitMetaspace('_')));
    // (another behavior, or a pattern that is not one code point's escape, is no such program)
    let mut merged_before = steps.clone();
    if let SplitStep::Split { behavior, .. } = &mut merged_before[1] {
        *behavior = Behavior::MergedWithPrevious;
    }
    assert_eq!(
        WordSpanner::of(&SpannerSpec::SplitProgram(merged_before)),
        None
    );
    let mut two = steps;
    if let SplitStep::Split { pattern, .. } = &mut two[1] {
        *pattern = r"\x{2581}\x{2581}".into();
    }
    assert_eq!(WordSpanner::of(&SpannerSpec::SplitProgram(two)), None);
}
