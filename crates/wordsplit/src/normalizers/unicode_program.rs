//! [`UnicodeProgram`]: HF's normalizers in sequence when every step is a Unicode form (`NFC`,
//! `NFD`, `NFKC`, `NFKD`), `Lowercase`, `StripAccents`, `Strip`, `Precompiled` or a `Replace`
//! of a literal string, of white space or of a run of one character (the layout of BERT-style files trained with HF
//! tokenizers, such as its docs' `Sequence[NFD, Lowercase, StripAccents]`, of T5's
//! `Precompiled` alone, and of CLIP's `Sequence[NFC, Replace(\s+ → " "), Lowercase]`), with
//! HF's alignment of each character (the Python package's `program_alignment_parts` gives the
//! same).
//!
//! `Replace` runs here when its pattern is a non-empty string, the regex `\s+` or `\s`
//! (Oniguruma's `\s` is Unicode's White_Space, `char::is_whitespace`, so their matches are
//! the maximal runs of white space, or each white space character), or the regex of a run of
//! one character (`c+`, `c{n,}`: the converters' `" {2,}"`). Each match is replaced by the
//! content, whose characters all align to the last character of the match (HF's
//! `NormalizedString::replace`). Any other regex is left to the caller's normalizer.
//!
//! Each step is run as HF's `NormalizedString` runs it, a character at a time with the change
//! each makes to the length: a form with `unicode-normalization-alignments` (the crate and
//! tables HF uses), `Lowercase` with Rust's `char::to_lowercase` (a character at a time, so no
//! final-sigma rule), `StripAccents` dropping the characters the crate's `is_combining_mark`
//! names (General_Category M), `Strip` Rust's white space at either end, `Precompiled` its
//! character map per grapheme cluster ([`precompiled`]). A character that
//! replaces one keeps that one's place in the original text; a character a step inserts (the
//! second of a decomposition, `İ`'s dot) takes the place of the one before it.
//!
//! ```
//! use wordsplit::normalizers::unicode_program::UnicodeProgram;
//! use wordsplit::spec::NormalizerSpec;
//! use wordsplit::Normalizer;
//!
//! let spec = NormalizerSpec::Sequence(vec![NormalizerSpec::Nfd, NormalizerSpec::Lowercase, NormalizerSpec::StripAccents]);
//! let program = UnicodeProgram::new(&spec).unwrap();
//! assert_eq!(program.normalize("Ångström").unwrap(), "angstrom");
//! ```

use unicode_normalization_alignments::char::is_combining_mark;
use unicode_normalization_alignments::UnicodeNormalization;

use std::borrow::Cow;
use std::sync::Arc;

use super::charsmap::CharsMap;
use super::{nfc_of, precompiled, AlignmentParts, Normalizer};
use crate::error::Error;
use crate::spec::NormalizerSpec;

#[derive(Clone)]
enum Step {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    StripAccents,
    Strip {
        left: bool,
        right: bool,
    },
    /// HF's `Precompiled` with a map of rules (an empty map is no step).
    Precompiled(Arc<CharsMap>),
    /// HF's `Replace`: every match of `find`, leftmost first and not overlapping, replaced by
    /// `content` (each of its characters in the place of the match's last character).
    Replace {
        find: Find,
        content: String,
    },
}

/// What a `Replace` step the core runs matches.
#[derive(Clone)]
enum Find {
    /// A literal string (not empty).
    Literal(String),
    /// A run of `min` or more of one character: the regexes `c+` and `c{n,}` with `c` a
    /// character that is no regex syntax (the ` {2,}` of the converters' files); Oniguruma's
    /// greedy leftmost match of one is each whole run that long.
    Run { c: char, min: usize },
    /// Each maximal run of white space (the regex `\s+`), or with `runs` false each white
    /// space character (`\s`).
    WhiteSpace { runs: bool },
}

impl Find {
    /// What a `Replace` step's `pattern` matches, when the core runs it (see [`Find`]).
    fn of(pattern: &str, regex: bool) -> Option<Self> {
        match (pattern, regex) {
            (_, false) => return (!pattern.is_empty()).then(|| Find::Literal(pattern.to_owned())),
            ("\\s+", true) => return Some(Find::WhiteSpace { runs: true }),
            ("\\s", true) => return Some(Find::WhiteSpace { runs: false }),
            _ => {}
        }
        let mut chars = pattern.chars();
        let c = chars.next()?;
        if "\\^$.|?*+()[]{}#".contains(c) {
            return None;
        }
        let quantifier = chars.as_str();
        let min = match quantifier {
            "+" => 1,
            _ => {
                let digits = quantifier.strip_prefix('{')?.strip_suffix(",}")?;
                if digits.is_empty()
                    || digits.len() > 6
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                digits.parse().ok().filter(|&n: &usize| n >= 1)?
            }
        };
        Some(Find::Run { c, min })
    }

    /// The `(start, end)` char ranges of its matches in `chars`.
    fn matches(&self, chars: &[char]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut at = 0;
        match self {
            Find::Literal(literal) => {
                let literal: Vec<char> = literal.chars().collect();
                while at + literal.len() <= chars.len() {
                    if chars[at..].starts_with(&literal) {
                        found.push((at, at + literal.len()));
                        at += literal.len();
                    } else {
                        at += 1;
                    }
                }
            }
            &Find::Run { c, min } => {
                while at < chars.len() {
                    let run = chars[at..].iter().take_while(|&&x| x == c).count();
                    if run >= min {
                        found.push((at, at + run));
                    }
                    at += run.max(1);
                }
            }
            &Find::WhiteSpace { runs } => {
                while at < chars.len() {
                    if !chars[at].is_whitespace() {
                        at += 1;
                        continue;
                    }
                    let start = at;
                    at += 1;
                    while runs && at < chars.len() && chars[at].is_whitespace() {
                        at += 1;
                    }
                    found.push((start, at));
                }
            }
        }
        found
    }

    /// `text` with every match replaced by `content`, or None when that leaves it as it is
    /// (nothing matches, or every match is `content` already: CLIP's text, whose white space
    /// is mostly single spaces).
    fn replace(&self, text: &str, content: &str) -> Option<String> {
        match self {
            Find::Literal(literal) => (literal != content && text.contains(literal.as_str()))
                .then(|| text.replace(literal.as_str(), content)),
            &Find::WhiteSpace { runs } => {
                let matches = white_space_matches(text, runs);
                if matches
                    .iter()
                    .all(|&(start, end)| &text[start..end] == content)
                {
                    return None;
                }
                let mut out = String::with_capacity(text.len());
                let mut done = 0;
                for (start, end) in matches {
                    out.push_str(&text[done..start]);
                    out.push_str(content);
                    done = end;
                }
                out.push_str(&text[done..]);
                Some(out)
            }
            &Find::Run { c, min } => {
                let mut out: Option<String> = None;
                let mut done = 0; // the end of the text copied (or matched) so far
                let mut run: Option<(usize, usize)> = None; // (start, count) of the run of `c`
                let mut end_run =
                    |out: &mut Option<String>, start: usize, count: usize, end: usize| {
                        if count >= min {
                            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                            out.push_str(&text[done..start]);
                            out.push_str(content);
                            done = end;
                        }
                    };
                for (at, x) in text.char_indices() {
                    match (x == c, run) {
                        (true, Some((start, count))) => run = Some((start, count + 1)),
                        (true, None) => run = Some((at, 1)),
                        (false, Some((start, count))) => {
                            end_run(&mut out, start, count, at);
                            run = None;
                        }
                        (false, None) => {}
                    }
                }
                if let Some((start, count)) = run {
                    end_run(&mut out, start, count, text.len());
                }
                let mut out = out?;
                out.push_str(&text[done..]);
                Some(out)
            }
        }
    }
}

/// The byte ranges of [`Find::WhiteSpace`]'s matches in `text`.
fn white_space_matches(text: &str, runs: bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut joins = false; // whether the last character was white space in the last match
    for (at, c) in text.char_indices() {
        if !c.is_whitespace() {
            joins = false;
            continue;
        }
        let end = at + c.len_utf8();
        match out.last_mut() {
            Some(last) if runs && joins => last.1 = end,
            _ => out.push((at, end)),
        }
        joins = true;
    }
    out
}

/// HF's normalizers in sequence, when they are the steps above only.
pub struct UnicodeProgram {
    steps: Vec<Step>,
}

/// Where a character of the normalized text comes from: the range of original characters
/// (char indices), and whether it is that range's text unchanged.
type Place = (usize, usize, bool);

impl UnicodeProgram {
    /// The program of `spec` (a [`NormalizerSpec::Sequence`], or `Precompiled` alone), or
    /// None when a step is not one of the steps above (or has a malformed character map, which
    /// the Python package refuses when the vocabulary loads).
    pub fn new(spec: &NormalizerSpec) -> Option<Self> {
        let steps = match spec {
            NormalizerSpec::Sequence(steps) => steps.as_slice(),
            NormalizerSpec::Precompiled(_) => std::slice::from_ref(spec),
            _ => return None,
        };
        let steps = steps
            .iter()
            .filter(|step| !matches!(step, NormalizerSpec::Precompiled(map) if map.is_empty()))
            .map(|step| {
                Some(match step {
                    NormalizerSpec::Precompiled(map) => {
                        Step::Precompiled(CharsMap::of_base64(map).ok()?)
                    }
                    NormalizerSpec::Nfc => Step::Nfc,
                    NormalizerSpec::Nfd => Step::Nfd,
                    NormalizerSpec::Nfkc => Step::Nfkc,
                    NormalizerSpec::Nfkd => Step::Nfkd,
                    NormalizerSpec::Lowercase => Step::Lowercase,
                    NormalizerSpec::StripAccents => Step::StripAccents,
                    NormalizerSpec::Strip { left, right } => Step::Strip {
                        left: *left,
                        right: *right,
                    },
                    NormalizerSpec::Replace {
                        pattern,
                        content,
                        regex,
                    } => Step::Replace {
                        find: Find::of(pattern, *regex)?,
                        content: content.clone(),
                    },
                    _ => return None,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { steps })
    }

    /// The text the steps make, as `run` makes it without the places. ASCII text is in every
    /// Unicode form and has no combining mark, so those steps leave it as it is.
    pub fn run_text(&self, text: &str) -> String {
        self.run_cow(text).into_owned()
    }

    /// [`Self::run_text`], borrowing `text` while no step changes it (no copy of text the
    /// steps leave as it is, such as prose under a character map that keeps it).
    pub fn run_cow<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut text = Cow::Borrowed(text);
        for step in &self.steps {
            let changed: Option<String> = match step {
                Step::Nfc | Step::Nfd | Step::Nfkc | Step::Nfkd | Step::StripAccents
                    if text.is_ascii() =>
                {
                    None
                }
                // (the fast NFC the pipeline's own NFC stage runs: only what can change)
                Step::Nfc => nfc_of(&text),
                Step::Nfd => Some(text.nfd().map(|(c, _)| c).collect()),
                Step::Nfkc => Some(text.nfkc().map(|(c, _)| c).collect()),
                Step::Nfkd => Some(text.nfkd().map(|(c, _)| c).collect()),
                Step::Lowercase if text.is_ascii() => text
                    .bytes()
                    .any(|b| b.is_ascii_uppercase())
                    .then(|| text.to_ascii_lowercase()),
                Step::Lowercase => Some(text.chars().flat_map(char::to_lowercase).collect()),
                Step::StripAccents => {
                    Some(text.chars().filter(|&c| !is_combining_mark(c)).collect())
                }
                Step::Precompiled(map) => precompiled::normalize(map, &text),
                Step::Replace { find, content } => find.replace(&text, content),
                &Step::Strip { left, right } => {
                    let mut kept: &str = &text;
                    if left {
                        kept = kept.trim_start_matches(char::is_whitespace);
                    }
                    if right {
                        kept = kept.trim_end_matches(char::is_whitespace);
                    }
                    (kept.len() != text.len()).then(|| kept.to_owned())
                }
            };
            if let Some(changed) = changed {
                text = Cow::Owned(changed);
            }
        }
        text
    }

    /// The characters of `text` after every step, each with its place.
    fn run(&self, text: &str) -> Vec<(char, Place)> {
        let mut chars: Vec<(char, Place)> = text
            .chars()
            .enumerate()
            .map(|(i, c)| (c, (i, i + 1, true)))
            .collect();
        for step in &self.steps {
            chars = match step {
                Step::Nfc => changed(&chars, |s| s.nfc().collect()),
                Step::Nfd => changed(&chars, |s| s.nfd().collect()),
                Step::Nfkc => changed(&chars, |s| s.nfkc().collect()),
                Step::Nfkd => changed(&chars, |s| s.nfkd().collect()),
                Step::Lowercase => changed(&chars, |s| {
                    s.chars()
                        .flat_map(|c| {
                            c.to_lowercase()
                                .enumerate()
                                .map(|(i, lower)| (lower, isize::from(i > 0)))
                        })
                        .collect()
                }),
                Step::StripAccents => chars
                    .into_iter()
                    .filter(|(c, _)| !is_combining_mark(*c))
                    .collect(),
                Step::Precompiled(map) => changed(&chars, |s| precompiled::changes(map, s)),
                Step::Replace { find, content } => {
                    let text: Vec<char> = chars.iter().map(|&(c, _)| c).collect();
                    let mut out = Vec::with_capacity(chars.len());
                    let mut done = 0;
                    for (start, end) in find.matches(&text) {
                        out.extend_from_slice(&chars[done..start]);
                        let (from, to, _) = chars[end - 1].1;
                        out.extend(content.chars().map(|c| (c, (from, to, false))));
                        done = end;
                    }
                    out.extend_from_slice(&chars[done..]);
                    out
                }
                &Step::Strip { left, right } => {
                    let lead = if left {
                        chars.iter().take_while(|(c, _)| c.is_whitespace()).count()
                    } else {
                        0
                    };
                    let trail = if right {
                        let rest = &chars[lead..];
                        rest.iter()
                            .rev()
                            .take_while(|(c, _)| c.is_whitespace())
                            .count()
                    } else {
                        0
                    };
                    chars[lead..chars.len() - trail].to_vec()
                }
            };
        }
        chars
    }
}

/// The characters HF's `NormalizedString::transform` makes of `chars` with `transform`'s
/// `(character, change)` pairs: a change of 0 or less replaces the next character (and drops
/// as many after it as the change says), taking its place; a positive one is inserted, in the
/// place of the character before it.
fn changed(
    chars: &[(char, Place)],
    transform: impl FnOnce(&str) -> Vec<(char, isize)>,
) -> Vec<(char, Place)> {
    let text: String = chars.iter().map(|(c, _)| c).collect();
    let pairs = transform(&text);
    let mut out = Vec::with_capacity(pairs.len());
    let mut next = 0usize; // the next character of `chars` to replace
    for (c, change) in pairs {
        if change > 0 {
            let place = next.checked_sub(1).map_or((0, 0, false), |i| chars[i].1);
            out.push((c, (place.0, place.1, false)));
            continue;
        }
        let Some(&(old, (start, end, same))) = chars.get(next) else {
            break; // (a transform never gives more replacing characters than there are)
        };
        // (a character that also removes others is not that character unchanged)
        out.push((c, (start, end, same && change == 0 && c == old)));
        next += 1 + change.unsigned_abs();
    }
    out
}

impl Normalizer for UnicodeProgram {
    fn name(&self) -> &str {
        "Sequence"
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        Ok(self.run_text(text))
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        let chars = self.run(text);
        let identity = chars.len() == text.chars().count()
            && chars
                .iter()
                .enumerate()
                .all(|(i, &(_, place))| place == (i, i + 1, true));
        if identity {
            return Ok(None);
        }
        Ok(Some(AlignmentParts {
            normalized: chars.iter().map(|(c, _)| c).collect(),
            head: chars.into_iter().map(|(_, place)| place).collect(),
            tail: 0,
        }))
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bert_wiki() -> UnicodeProgram {
        UnicodeProgram::new(&NormalizerSpec::Sequence(vec![
            NormalizerSpec::Nfd,
            NormalizerSpec::Lowercase,
            NormalizerSpec::StripAccents,
        ]))
        .unwrap()
    }

    fn parts(program: &UnicodeProgram, text: &str) -> Option<(String, Vec<Place>)> {
        let parts = program.alignment_parts(text).unwrap()?;
        Some((parts.normalized, parts.head))
    }

    #[test]
    fn each_character_keeps_the_place_of_the_one_it_comes_from() {
        let program = bert_wiki();
        let (t, f) = (true, false);
        // é decomposes into e + U+0301, which is dropped: e takes é's place.
        assert_eq!(
            parts(&program, "Aé"),
            Some(("ae".into(), vec![(0, 1, f), (1, 2, f)]))
        );
        // İ lowercases to i + U+0307 (after NFD, İ is I + U+0307): both marks dropped.
        assert_eq!(
            parts(&program, "xİ"),
            Some(("xi".into(), vec![(0, 1, t), (1, 2, f)]))
        );
        assert_eq!(parts(&program, "abc"), None);
        assert_eq!(
            program.normalize("ÉCOLE Straße ǅ").unwrap(),
            "ecole straße ǆ"
        );
        // Compatibility forms make several characters of one: each in its place.
        let nfkc = UnicodeProgram::new(&NormalizerSpec::Sequence(vec![NormalizerSpec::Nfkc]));
        assert_eq!(
            parts(&nfkc.unwrap(), "ﬁx"),
            Some(("fix".into(), vec![(0, 1, f), (0, 1, f), (1, 2, t)]))
        );
    }

    fn replace(pattern: &str, content: &str, regex: bool) -> NormalizerSpec {
        NormalizerSpec::Replace {
            pattern: pattern.into(),
            content: content.into(),
            regex,
        }
    }

    #[test]
    fn white_space_is_replaced_by_runs_or_by_character() {
        let program = |steps| UnicodeProgram::new(&NormalizerSpec::Sequence(steps)).unwrap();
        let clip = program(vec![
            NormalizerSpec::Nfc,
            replace("\\s+", " ", true),
            NormalizerSpec::Lowercase,
        ]);
        assert_eq!(clip.normalize("A \t\u{3000}B\u{85}C  ").unwrap(), "a b c ");
        assert_eq!(clip.normalize("a b").unwrap(), "a b");
        // Each replacement character is placed at the last character of its match.
        let (f, t) = (false, true);
        assert_eq!(
            parts(&clip, "a \tb"),
            Some(("a b".into(), vec![(0, 1, t), (2, 3, f), (3, 4, t)]))
        );
        let each = program(vec![replace("\\s", "<>", true)]);
        assert_eq!(each.normalize(" a\n").unwrap(), "<>a<>");
        assert!(
            UnicodeProgram::new(&NormalizerSpec::Sequence(vec![replace("\\d", "", true)]))
                .is_none()
        );
        assert!(
            UnicodeProgram::new(&NormalizerSpec::Sequence(vec![replace("", "x", false)])).is_none()
        );
    }

    #[test]
    fn the_text_alone_is_the_text_of_the_places() {
        let steps = [
            NormalizerSpec::Nfc,
            NormalizerSpec::Nfd,
            NormalizerSpec::Nfkc,
            NormalizerSpec::Nfkd,
            NormalizerSpec::Lowercase,
            NormalizerSpec::StripAccents,
            NormalizerSpec::Strip {
                left: true,
                right: true,
            },
            NormalizerSpec::Strip {
                left: false,
                right: true,
            },
            replace("\\s+", " ", true),
            replace("\\s+", "", true),
            replace("\\s", "\u{3000}", true),
            replace("a", "a\u{301}b", false),
            replace(" ", " ", false),
            replace(" {2,}", "\u{2581}", true),
        ];
        let alphabet = [
            "a",
            "É",
            "e\u{301}",
            "İ",
            "ẞ",
            "Σ",
            "ǅ",
            "ﬁ",
            "Ⅻ",
            "\u{f73}",
            " ",
            "\u{3000}",
            "\t",
            "中",
            "\u{1d165}",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d;
        for text in crate::testing::texts(7, &alphabet, 300, 12) {
            let mut pick =
                || steps[crate::testing::xorshift(&mut state) as usize % steps.len()].clone();
            let program =
                UnicodeProgram::new(&NormalizerSpec::Sequence(vec![pick(), pick(), pick()]));
            let program = program.unwrap();
            let placed: String = program.run(&text).into_iter().map(|(c, _)| c).collect();
            assert_eq!(program.normalize(&text).unwrap(), placed, "{text:?}");
        }
    }

    #[test]
    fn replace_runs_literals_and_runs_of_one_character() {
        let replace = |pattern: &str, content: &str, regex: bool| {
            UnicodeProgram::new(&NormalizerSpec::Sequence(vec![NormalizerSpec::Replace {
                pattern: pattern.into(),
                content: content.into(),
                regex,
            }]))
        };
        let runs = replace(" {2,}", "\u{2581}", true).unwrap();
        assert_eq!(
            runs.normalize("a  b c   d ").unwrap(),
            "a\u{2581}b c\u{2581}d "
        );
        assert_eq!(runs.normalize("  ").unwrap(), "\u{2581}");
        // Each character of the content takes the place of the match's last character.
        assert_eq!(
            parts(&runs, "a   b"),
            Some((
                "a\u{2581}b".into(),
                vec![(0, 1, true), (3, 4, false), (4, 5, true)]
            ))
        );
        let literal = replace("ab", "xyz", false).unwrap();
        assert_eq!(literal.normalize("aab ab").unwrap(), "axyz xyz");
        assert_eq!(
            replace("é+", "", true).unwrap().normalize("aéé").unwrap(),
            "a"
        );
        // Other regexes (and the empty literal) are left to the Python package.
        for pattern in ["\\d+", " {2}", " {2,3}", "x*", "ab+", "[ ]+", " {0,}", ""] {
            assert!(
                replace(pattern, " ", !pattern.is_empty()).is_none(),
                "{pattern}"
            );
        }
        assert!(replace("", " ", false).is_none());
    }

    #[test]
    fn strip_drops_white_space_at_the_ends_it_is_asked_to() {
        let strip = |left, right| {
            UnicodeProgram::new(&NormalizerSpec::Sequence(vec![NormalizerSpec::Strip {
                left,
                right,
            }]))
            .unwrap()
        };
        assert_eq!(
            strip(true, true).normalize(" \u{3000}a b\n").unwrap(),
            "a b"
        );
        assert_eq!(strip(false, true).normalize(" a ").unwrap(), " a");
        assert_eq!(strip(true, false).normalize(" a ").unwrap(), "a ");
        assert_eq!(strip(true, true).normalize("  ").unwrap(), "");
        assert_eq!(
            parts(&strip(true, true), " a "),
            Some(("a".into(), vec![(1, 2, true)]))
        );
        assert!(UnicodeProgram::new(&NormalizerSpec::Nfd).is_none());
        assert!(UnicodeProgram::new(&NormalizerSpec::Sequence(vec![
            NormalizerSpec::Nfd,
            NormalizerSpec::Prepend("x".into()),
        ]))
        .is_none());
    }
}
