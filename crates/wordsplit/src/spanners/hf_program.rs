//! HuggingFace `Split` programs, natively: a tokenizer.json's `Split` steps as HF's
//! pre-tokenizers run them, with every behavior and `invert`, the `Removed` behavior that
//! deletes text and the `add_prefix_space` step that inserts a space before a piece. Tested
//! against HF `tokenizers` itself (by the Python package's tests, whose `hf-split` spanner
//! runs the same programs).
//!
//! A program is a list of steps; each step cuts every piece of the one before. A piece is a
//! byte range of the input, possibly after a space that an `add_prefix_space` step gave it
//! ([`Piece`]): its text is that space and the range. A regex only ever sees one piece as its
//! whole haystack, as in HF.
//!
//! **Matches.** A step's regex is either one a hand-written scanner is proven equal to
//! (ByteLevel's GPT-2 pattern, the last step of most programs): such a pattern matches at every
//! position, so its matches are the scanner's pieces; or an expanded pattern that
//! [`RegexSpanner`] runs, whose matches are Oniguruma's (leftmost, searched for again from the
//! end of the last one). A pattern that can match the empty string is refused, as
//! [`RegexSpanner`] refuses it (a caller with a spanner of its own, such as the Python
//! package, runs the whole program there): Oniguruma and the other engines differ on where a
//! search resumes after an empty match.
//!
//! **Pieces.** The matches and the stretches between them are flagged (match or not, swapped
//! by `invert`), then kept, dropped or joined by the behavior, and empty parts dropped, as HF's
//! `NormalizedString::split` does.
//!
//! **BERT.** A program of exactly `BertPreTokenizer`'s two steps runs as one scan
//! ([`super::bert`]), which gives the same pieces.

use regex_automata::hybrid::dfa::Cache as DfaCache;

use super::bert::{bert_pieces, bert_spans, is_bert_step};
use super::regex::{next_cache_id, one_char_class, with_caches, CharSet, RegexSpanner, SplitError};
use super::{scanner_for_pattern, Scanner};
use crate::pipeline::SpannedText;
use crate::spec::Behavior;

/// How a step finds its matches.
enum Matcher {
    /// A scanner proven equal to the step's pattern, which matches at every position.
    Scanner(Box<dyn Scanner>),
    /// A pattern that is one character class (HF's `WhitespaceSplit`, `Punctuation`,
    /// `Digits`): each character in the set is a match.
    Chars(CharSet),
    /// Any other pattern, expanded (see [`RegexSpanner`]).
    Regex(Box<RegexSpanner>),
}

enum Step {
    /// ByteLevel's `add_prefix_space` after other steps: a space before each piece that does
    /// not start with one.
    PrefixSpace,
    Split {
        matcher: Matcher,
        behavior: Behavior,
        invert: bool,
    },
}

/// One piece of a program's output: `text[start..end]`, after a space when `space` (a piece
/// may then be the space alone, `start == end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub start: usize,
    pub end: usize,
    pub space: bool,
}

/// One step of a program as the glue passes it: `None` for `add_prefix_space`, else the
/// pattern (expanded, or a scanner's own pattern), the behavior's name and `invert`.
pub type StepSpec = Option<(String, String, bool)>;

/// A compiled split program; see the module docs.
pub struct HfProgram {
    /// Names this program's entry in the per-thread DFA caches (never reused).
    id: u64,
    steps: Vec<Step>,
    /// Whether the steps are `BertPreTokenizer`'s, run as one scan ([`super::bert`]).
    bert: bool,
}

impl HfProgram {
    /// Compiles the steps; `Err` says which one cannot run natively (a caller with a spanner
    /// of its own, such as the Python package, runs the program there).
    pub fn new(specs: &[StepSpec]) -> Result<Self, String> {
        let steps = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let Some((pattern, behavior, invert)) = spec else {
                    return Ok(Step::PrefixSpace);
                };
                let behavior = Behavior::from_name(behavior).ok_or_else(|| {
                    format!(
                        "step {i}: unknown split behavior {behavior:?}; known: Isolated, Removed, \
                         MergedWithPrevious, MergedWithNext, Contiguous"
                    )
                })?;
                let matcher = match scanner_for_pattern(pattern) {
                    Some(scanner) => Matcher::Scanner(scanner),
                    None => {
                        // Compiled first in any case: it checks (and refuses) the pattern.
                        let regex = RegexSpanner::compile(pattern, true)
                            .map_err(|e| format!("step {i}: {e}"))?;
                        match one_char_class(pattern) {
                            Some(set) => Matcher::Chars(set),
                            None => Matcher::Regex(Box::new(regex)),
                        }
                    }
                };
                Ok(Step::Split {
                    matcher,
                    behavior,
                    invert: *invert,
                })
            })
            .collect::<Result<Vec<Step>, String>>()?;
        let bert = steps.len() == 2
            && steps.iter().enumerate().all(|(i, step)| {
                matches!(step, Step::Split {
                    matcher: Matcher::Chars(set),
                    behavior,
                    invert,
                } if is_bert_step(set.ranges(), *behavior, *invert) == Some(i))
            });
        Ok(Self {
            id: next_cache_id(),
            steps,
            bert,
        })
    }

    /// Whether it runs `BertPreTokenizer`'s steps as one scan.
    pub fn is_bert(&self) -> bool {
        self.bert
    }

    /// Whether the program can delete or insert text (a `Removed` or `add_prefix_space` step):
    /// its pieces then make a text of their own rather than cover the input.
    pub fn drops_text(&self) -> bool {
        self.steps.iter().any(|step| {
            matches!(
                step,
                Step::PrefixSpace
                    | Step::Split {
                        behavior: Behavior::Removed,
                        ..
                    }
            )
        })
    }

    /// The lazy DFAs' caches of each step (none for scanners and prefix steps).
    fn new_caches(&self) -> Vec<Vec<DfaCache>> {
        self.steps
            .iter()
            .map(|step| match step {
                Step::Split {
                    matcher: Matcher::Regex(regex),
                    ..
                } => regex.new_caches(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// Appends the pieces of `text` to `out`, in order (none for an empty text).
    pub fn pieces(&self, text: &str, out: &mut Vec<Piece>) -> Result<(), SplitError> {
        if text.is_empty() {
            return Ok(());
        }
        if self.bert {
            bert_pieces(text, |start, end| {
                out.push(Piece {
                    start,
                    end,
                    space: false,
                })
            });
            return Ok(());
        }
        with_caches(
            self.id,
            || self.new_caches(),
            |caches| {
                let bytes = text.as_bytes();
                let mut pieces = vec![Piece {
                    start: 0,
                    end: text.len(),
                    space: false,
                }];
                let mut next: Vec<Piece> = Vec::with_capacity(text.len() / 4 + 1);
                let mut matches: Vec<(usize, usize)> = Vec::new();
                let mut ends: Vec<usize> = Vec::new();
                let mut spaced = String::new();
                for (step, caches) in self.steps.iter().zip(caches.iter_mut()) {
                    let Step::Split {
                        matcher,
                        behavior,
                        invert,
                    } = step
                    else {
                        // A piece is never empty unless it has its space already.
                        for piece in pieces.iter_mut().filter(|piece| !piece.space) {
                            piece.space = bytes[piece.start] != b' ';
                        }
                        continue;
                    };
                    next.clear();
                    for &piece in &pieces {
                        // The haystack: the piece's text, its space included. The space is
                        // the input's own when one comes right before the piece (no copy).
                        let (haystack, skip) = if !piece.space {
                            (&text[piece.start..piece.end], 0)
                        } else if piece.start > 0 && bytes[piece.start - 1] == b' ' {
                            (&text[piece.start - 1..piece.end], 1)
                        } else {
                            spaced.clear();
                            spaced.push(' ');
                            spaced.push_str(&text[piece.start..piece.end]);
                            (spaced.as_str(), 1)
                        };
                        // A part (a, b) of the haystack: the piece's bytes from a, b, after
                        // the space if the part starts with it.
                        let base = piece.start;
                        let mut emit = |a: usize, b: usize| {
                            next.push(Piece {
                                start: base + a.saturating_sub(skip),
                                end: base + b.saturating_sub(skip),
                                space: a < skip,
                            })
                        };
                        match (matcher, behavior) {
                            // Isolated keeps every match and every stretch between them: the
                            // scanner's pieces as they are.
                            (Matcher::Scanner(scanner), Behavior::Isolated) => {
                                ends.clear();
                                scanner.split(haystack, &mut ends);
                                let mut start = 0;
                                for &end in &ends {
                                    emit(start, end);
                                    start = end;
                                }
                            }
                            (Matcher::Chars(set), Behavior::Isolated) => {
                                matches.clear();
                                char_matches(set, haystack, &mut matches);
                                let mut position = 0;
                                for &(start, end) in &matches {
                                    if position < start {
                                        emit(position, start);
                                    }
                                    emit(start, end);
                                    position = end;
                                }
                                if position < haystack.len() {
                                    emit(position, haystack.len());
                                }
                            }
                            (Matcher::Regex(regex), Behavior::Isolated) => {
                                let mut position = 0;
                                regex.matches_in(caches, haystack, |start, end| {
                                    if position < start {
                                        emit(position, start);
                                    }
                                    emit(start, end);
                                    position = end;
                                })?;
                                if position < haystack.len() {
                                    emit(position, haystack.len());
                                }
                            }
                            (matcher, &behavior) => {
                                matches.clear();
                                match matcher {
                                    Matcher::Scanner(scanner) => {
                                        ends.clear();
                                        scanner.split(haystack, &mut ends);
                                        let mut start = 0;
                                        matches.extend(ends.iter().map(|&end| {
                                            let m = (start, end);
                                            start = end;
                                            m
                                        }));
                                    }
                                    Matcher::Chars(set) => {
                                        char_matches(set, haystack, &mut matches)
                                    }
                                    Matcher::Regex(regex) => {
                                        regex.matches_in(caches, haystack, |s, e| {
                                            matches.push((s, e))
                                        })?
                                    }
                                }
                                cut(haystack.len(), &matches, behavior, *invert, emit);
                            }
                        }
                    }
                    std::mem::swap(&mut pieces, &mut next);
                }
                out.extend_from_slice(&pieces);
                Ok(())
            },
        )
    }

    /// The pieces of `text` as the pipeline encodes them: `ends` gets the end of each piece in
    /// `text` when they cover it without spaces (then `None`: no copy), else in the text the
    /// pieces make (each one's space and bytes, in order), which is returned.
    pub fn spans(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<SpannedText>, SplitError> {
        if self.bert {
            return Ok(bert_spans(text, ends));
        }
        let mut pieces = Vec::new();
        self.pieces(text, &mut pieces)?;
        let mut position = 0;
        let covering = pieces.iter().all(|piece| {
            let tiles = !piece.space && piece.start == position;
            position = piece.end;
            tiles
        }) && position == text.len();
        if covering {
            ends.extend(pieces.iter().map(|piece| piece.end));
            return Ok(None);
        }
        let mut kept = String::with_capacity(text.len() + pieces.len());
        let mut placed = Vec::with_capacity(pieces.len());
        for piece in pieces {
            if piece.space {
                kept.push(' ');
            }
            kept.push_str(&text[piece.start..piece.end]);
            ends.push(kept.len());
            placed.push((piece.start, piece.end, usize::from(piece.space)));
        }
        Ok(Some(SpannedText {
            text: kept,
            pieces: placed,
        }))
    }
}

/// Appends the matches of a one-character class in `haystack`: each character in `set`.
#[inline]
fn char_matches(set: &CharSet, haystack: &str, matches: &mut Vec<(usize, usize)>) {
    let bytes = haystack.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let (c, len) = if byte < 0x80 {
            (char::from(byte), 1)
        } else {
            let c = haystack[at..].chars().next().unwrap_or_default();
            (c, c.len_utf8())
        };
        if set.contains(c) {
            matches.push((at, at + len));
        }
        at += len;
    }
}

/// The flagged stretches of a haystack: each match and each stretch of text between matches
/// (or before the first, or after the last), in order, as `(start, end, is_match)`, the flag
/// swapped by `invert` (HF's `Pattern::find_matches`, then `Invert`).
struct Stretches<'m> {
    matches: std::slice::Iter<'m, (usize, usize)>,
    /// The end of the last stretch given.
    previous: usize,
    len: usize,
    invert: bool,
    /// A match to give after the gap before it.
    pending: Option<(usize, usize)>,
}

impl Iterator for Stretches<'_> {
    type Item = (usize, usize, bool);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some((start, end)) = self.pending.take() {
            return Some((start, end, !self.invert));
        }
        let previous = self.previous;
        match self.matches.next() {
            Some(&(start, end)) => {
                self.previous = end;
                if previous < start {
                    self.pending = Some((start, end));
                    Some((previous, start, self.invert))
                } else {
                    Some((start, end, !self.invert))
                }
            }
            None if previous < self.len => {
                self.previous = self.len;
                Some((previous, self.len, self.invert))
            }
            None => None,
        }
    }
}

/// The non-empty parts of a haystack of `len` bytes that HF's `split(behavior)` keeps, given
/// its (non-empty, ordered) `matches`: each passed to `emit(start, end)` in order.
#[inline]
fn cut(
    len: usize,
    matches: &[(usize, usize)],
    behavior: Behavior,
    invert: bool,
    mut emit: impl FnMut(usize, usize),
) {
    let stretches = Stretches {
        matches: matches.iter(),
        previous: 0,
        len,
        invert,
        pending: None,
    };
    match behavior {
        Behavior::Isolated => stretches.for_each(|(a, b, _)| emit(a, b)),
        Behavior::Removed => stretches
            .filter(|&(_, _, is_match)| !is_match)
            .for_each(|(a, b, _)| emit(a, b)),
        Behavior::Contiguous => {
            let mut current: Option<(usize, usize, bool)> = None;
            for (a, b, is_match) in stretches {
                match &mut current {
                    Some(run) if run.2 == is_match => run.1 = b,
                    _ => {
                        if let Some((start, end, _)) = current {
                            emit(start, end);
                        }
                        current = Some((a, b, is_match));
                    }
                }
            }
            if let Some((start, end, _)) = current {
                emit(start, end);
            }
        }
        Behavior::MergedWithPrevious => {
            // A match right after a non-match joins it.
            let mut current: Option<(usize, usize)> = None;
            let mut previous_match = false;
            for (a, b, is_match) in stretches {
                match &mut current {
                    Some(piece) if is_match && !previous_match => piece.1 = b,
                    _ => {
                        if let Some((start, end)) = current {
                            emit(start, end);
                        }
                        current = Some((a, b));
                    }
                }
                previous_match = is_match;
            }
            if let Some((start, end)) = current {
                emit(start, end);
            }
        }
        Behavior::MergedWithNext => {
            // HF walks backwards: a match right before a non-match joins it. Forwards, a match
            // waits to see what follows it.
            let mut waiting: Option<(usize, usize)> = None;
            for (a, b, is_match) in stretches {
                if let Some((start, end)) = waiting.take() {
                    if !is_match {
                        emit(start, b);
                        continue;
                    }
                    emit(start, end);
                }
                if is_match {
                    waiting = Some((a, b));
                } else {
                    emit(a, b);
                }
            }
            if let Some((start, end)) = waiting {
                emit(start, end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(steps: &[Option<(&str, &str, bool)>]) -> HfProgram {
        let specs: Vec<StepSpec> = steps
            .iter()
            .map(|s| s.map(|(p, b, i)| (p.to_owned(), b.to_owned(), i)))
            .collect();
        HfProgram::new(&specs).unwrap()
    }

    fn split(program: &HfProgram, text: &str) -> Vec<String> {
        let mut pieces = Vec::new();
        program.pieces(text, &mut pieces).unwrap();
        pieces
            .iter()
            .map(|p| {
                format!(
                    "{}{}",
                    if p.space { " " } else { "" },
                    &text[p.start..p.end]
                )
            })
            .collect()
    }

    #[test]
    fn behaviors_as_hf_documents_them() {
        // HF's docs: "the-final--countdown" split on "-".
        let text = "the-final--countdown";
        let want: [(&str, &[&str]); 5] = [
            ("Removed", &["the", "final", "countdown"]),
            ("Isolated", &["the", "-", "final", "-", "-", "countdown"]),
            ("MergedWithPrevious", &["the-", "final-", "-", "countdown"]),
            ("MergedWithNext", &["the", "-final", "-", "-countdown"]),
            ("Contiguous", &["the", "-", "final", "--", "countdown"]),
        ];
        for (behavior, pieces) in want {
            let p = program(&[Some(("-", behavior, false))]);
            assert_eq!(split(&p, text), pieces, "{behavior}");
        }
        // invert: the text between dashes is the delimiter.
        let p = program(&[Some(("-", "Removed", true))]);
        assert_eq!(split(&p, text), ["-", "-", "-"]);
        let p = program(&[Some(("-", "MergedWithNext", true))]);
        assert_eq!(split(&p, text), ["the-", "final-", "-", "countdown"]);
    }

    #[test]
    fn prefix_space_then_split() {
        // WhitespaceSplit, then a space before each piece, then a split that sees the space.
        let p = program(&[
            Some((r"[\x{20}\x{9}]", "Removed", false)),
            None,
            Some(("[a-z]+", "Isolated", false)),
        ]);
        assert_eq!(split(&p, "ab  c\tx1"), [" ", "ab", " ", "c", " ", "x", "1"]);
        let mut pieces = Vec::new();
        p.pieces("ab  c", &mut pieces).unwrap();
        // " " before "ab" is inserted (no text before it); the one before "c" too, although
        // the input has a space there (it was removed, the piece starts at "c").
        assert_eq!(
            pieces,
            [
                Piece {
                    start: 0,
                    end: 0,
                    space: true
                },
                Piece {
                    start: 0,
                    end: 2,
                    space: false
                },
                Piece {
                    start: 4,
                    end: 4,
                    space: true
                },
                Piece {
                    start: 4,
                    end: 5,
                    space: false
                },
            ]
        );
        // A piece that starts with a space gets none.
        let p = program(&[Some(("x", "Removed", false)), None]);
        assert_eq!(split(&p, "a x bx"), [" a ", " b"]);
        assert!(p.drops_text());
    }

    #[test]
    fn spans_cover_without_copy_when_nothing_is_dropped() {
        let p = program(&[Some(("[0-9]", "Contiguous", false))]);
        assert!(!p.drops_text());
        let mut ends = Vec::new();
        assert!(p.spans("ab12c", &mut ends).unwrap().is_none());
        assert_eq!(ends, [2, 4, 5]);
        let p = program(&[Some(("[0-9]", "Removed", false)), None]);
        let mut ends = Vec::new();
        let spanned = p.spans("ab12c", &mut ends).unwrap().unwrap();
        assert_eq!(spanned.text, " ab c");
        assert_eq!(ends, [3, 5]);
        assert_eq!(spanned.pieces, [(0, 2, 1), (4, 5, 1)]);
    }

    /// A one-character class of `ranges`, spelled as the Python package expands patterns.
    fn class(ranges: &[(u32, u32)]) -> String {
        let spelled: String = ranges
            .iter()
            .map(|&(a, b)| match b - a {
                0 => format!("\\x{{{a:X}}}"),
                1 => format!("\\x{{{a:X}}}\\x{{{b:X}}}"),
                _ => format!("\\x{{{a:X}}}-\\x{{{b:X}}}"),
            })
            .collect();
        format!("[{spelled}]")
    }

    #[test]
    fn berts_two_steps_run_as_one_scan_with_the_same_pieces() {
        use crate::spanners::bert::{ASCII_PUNCTUATION_RANGES, WHITE_SPACE_RANGES};
        let white = class(&WHITE_SPACE_RANGES);
        let mut punctuation = ASCII_PUNCTUATION_RANGES.to_vec();
        punctuation.extend_from_slice(crate::normalizers::hf_char_classes::PUNCTUATION_RANGES);
        let punctuation = class(&punctuation);
        let bert = program(&[
            Some((&white, "Removed", false)),
            Some((&punctuation, "Isolated", false)),
        ]);
        assert!(bert.is_bert() && bert.drops_text());
        let mut stepwise = program(&[
            Some((&white, "Removed", false)),
            Some((&punctuation, "Isolated", false)),
        ]);
        stepwise.bert = false;
        for text in [
            "Hello, world!  don't\u{3000}x\u{a0}y…z\n",
            "",
            "   ",
            "a",
            "(\u{166d})、。 \u{1c}\u{85}ab\u{2028}c-d",
        ] {
            assert_eq!(split(&bert, text), split(&stepwise, text), "{text:?}");
            let (mut ends, mut stepwise_ends) = (Vec::new(), Vec::new());
            let spans = bert.spans(text, &mut ends).unwrap();
            let stepwise_spans = stepwise.spans(text, &mut stepwise_ends).unwrap();
            assert_eq!(ends, stepwise_ends, "{text:?}");
            assert_eq!(
                spans.map(|s| (s.text, s.pieces)),
                stepwise_spans.map(|s| (s.text, s.pieces)),
                "{text:?}"
            );
        }
        // Another behavior, an inverted step, a third step or another class: step by step.
        for steps in [
            vec![
                Some((white.as_str(), "Removed", false)),
                Some((&punctuation, "Contiguous", false)),
            ],
            vec![
                Some((&white, "Removed", false)),
                Some((&punctuation, "Isolated", true)),
            ],
            vec![
                Some((&white, "Removed", false)),
                Some((&punctuation, "Isolated", false)),
                None,
            ],
            vec![
                Some(("[ ]", "Removed", false)),
                Some((&punctuation, "Isolated", false)),
            ],
            vec![
                Some((&punctuation, "Isolated", false)),
                Some((&white, "Removed", false)),
            ],
        ] {
            assert!(!program(&steps).is_bert());
        }
    }

    #[test]
    fn refusals() {
        let specs = [Some(("a*".to_owned(), "Isolated".to_owned(), false))];
        assert!(HfProgram::new(&specs).is_err());
        let specs = [Some(("a".to_owned(), "Split".to_owned(), false))];
        assert!(HfProgram::new(&specs).is_err());
    }
}
