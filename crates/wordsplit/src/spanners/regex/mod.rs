//! The regex spanner: any split pattern, natively, with tiktoken's semantics (the successive
//! leftmost-first matches, in backtracking preference order), and the llama.cpp-style
//! sequence of regexes built on it.
//!
//! **Where the Unicode classes come from.** This module receives patterns whose classes are
//! already spelled as explicit Unicode 16.0 ranges: the Python package's
//! `wordsplit.spanners.regex.native_pattern` writes them, with the parser, the list of accepted
//! constructs and the class tables of its own regex spanner (`_unicode16.py`, generated with
//! `unicode_tables.rs` by one script). Expanding `\p{..}` here from `unicode_tables.rs` would
//! need a second translator, and two translators can disagree on what they accept or how they
//! read an escape; one translator cannot. The crate is built without the regex crates' Unicode
//! class tables (only simple case folding, for `(?i)`), and [`RegexSpanner::new`] refuses any
//! class escape that was left in, so no class can be read with other Unicode data by accident.
//!
//! **How a pattern runs.** [`RegexSpanner::new`] parses the pattern with fancy-regex (the
//! engine tiktoken uses) and plans its top-level alternatives:
//!
//! - an alternative without lookaround, backreferences or atomic groups is *regular*, and so
//!   is one whose atomic groups and possessive quantifiers provably change nothing (an atomic
//!   group with nothing after it in its alternative; a possessive repeat of one character class
//!   whose continuation either always matches empty or cannot start with that class, so
//!   backtracking into the repeat could never succeed either). Consecutive regular
//!   alternatives become one anchored lazy-DFA search (regex-automata), which gives exactly
//!   the backtracking preference order for regular expressions. When that DFA is small and
//!   its start state does not depend on the text before the piece (no `\A`), every state is
//!   computed once at construction into a plain table (`DfaTable`, `dfa.rs`: one load per byte);
//!   else the lazy DFA is walked;
//! - `S+(?!C)` with `S` and `C` disjoint one-character classes (`\s+(?!\S)`, in every
//!   tokenizer pattern) is matched by hand: the whole run of `S`, or the run minus its last
//!   character when a `C` follows, which is where backtracking would stop;
//! - if any other alternative remains, the whole pattern runs on fancy-regex instead (as in
//!   tiktoken), with no backtracking limit, so that every text gets the regex's own matches.
//!
//! A sequence of regexes searches (a piece's matches may leave text between them): on the
//! plan, the leftmost match is the first position where the plan matches anchored, and only
//! positions whose byte can start a match (precomputed from the DFAs' start states and the
//! runs' classes) are tried, so most pieces of most steps cost one table lookup per byte.
//! Tries that fail after reading far (a long run that a pattern rejects at its end) have a
//! budget linear in the piece; past it the piece goes to regex-automata's unanchored search
//! (or fancy-regex's), which is linear.
//!
//! A pattern that can match the empty string is refused (a caller with a spanner of its own,
//! such as the Python package, runs it there): engines differ on where the search resumes
//! after an empty match, and no tokenizer pattern has one.

mod dfa;
mod plan;

use fancy_regex::Expr;
use regex_automata::hybrid::dfa::Cache as DfaCache;
use regex_automata::{meta, Input};

pub use super::SplitError;
use dfa::{dfa_regex, AnchoredDfa, SIZE_LIMIT};
pub(crate) use dfa::{next_cache_id, with_caches};
use plan::{may_be_empty, regularize, reject_class_escapes, run_not_followed, RunNotFollowed};
pub(crate) use plan::{one_char_class, CharSet};

/// One step of the plan at a position: the first step that matches there gives the piece.
enum Segment {
    Dfa(Box<AnchoredDfa>),
    Run(RunNotFollowed),
}

enum Plan {
    /// The segments, and the bytes a match of any of them can start with.
    Segments(Vec<Segment>, Box<[bool; 256]>),
    /// Some alternative needs backtracking: the whole pattern on fancy-regex.
    Fancy,
}

/// A split pattern compiled for native matching; see the module docs.
pub struct RegexSpanner {
    /// Names this spanner's entry in the per-thread DFA caches (never reused).
    id: u64,
    plan: Plan,
    /// The whole pattern, for the fancy plan and for searches that may skip text.
    fancy: fancy_regex::Regex,
    /// The whole pattern when every alternative is regular: unanchored search (sequences).
    regular: Option<meta::Regex>,
}

impl RegexSpanner {
    /// Compiles an expanded pattern (see the module docs). `Err` says why it cannot run
    /// natively (a caller with a spanner of its own, such as the Python package, runs it
    /// there).
    pub fn new(pattern: &str) -> Result<Self, String> {
        Self::compile(pattern, false)
    }

    /// `unanchored`: also compile the whole pattern for [`Self::split_with_gaps`]'s searches.
    pub(crate) fn compile(pattern: &str, unanchored: bool) -> Result<Self, String> {
        reject_class_escapes(pattern)?;
        let fancy = fancy_regex::RegexBuilder::new(pattern)
            .backtrack_limit(usize::MAX)
            .delegate_size_limit(SIZE_LIMIT)
            .delegate_dfa_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| format!("fancy-regex cannot compile the pattern: {e}"))?;
        let tree = Expr::parse_tree(pattern).map_err(|e| format!("cannot parse: {e}"))?;
        if may_be_empty(&tree.expr) {
            return Err("the pattern can match the empty string".into());
        }
        let alternatives: Vec<&Expr> = match &tree.expr {
            Expr::Alt(alternatives) => alternatives.iter().collect(),
            other => vec![other],
        };
        let mut segments = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut all_regular = true;
        let mut plan_ok = true;
        for &alternative in &alternatives {
            if let Some(regular) = regularize(alternative, true) {
                pending.push(regular);
                continue;
            }
            all_regular = false;
            match run_not_followed(alternative) {
                Some(run) => {
                    if !pending.is_empty() {
                        segments.push(Segment::Dfa(Box::new(AnchoredDfa::new(&std::mem::take(
                            &mut pending,
                        ))?)));
                    }
                    segments.push(Segment::Run(run));
                }
                None => plan_ok = false,
            }
        }
        let regular = if all_regular && unanchored {
            Some(dfa_regex(&pending)?)
        } else {
            None
        };
        if !pending.is_empty() {
            segments.push(Segment::Dfa(Box::new(AnchoredDfa::new(&pending)?)));
        }
        let plan = if plan_ok {
            let mut first = Box::new([false; 256]);
            for segment in &segments {
                let set = match segment {
                    Segment::Dfa(dfa) => dfa.first_bytes(),
                    Segment::Run(run) => run.first_bytes(),
                };
                for (byte, can) in first.iter_mut().zip(set) {
                    *byte |= can;
                }
            }
            // A match starts on a character: never on a UTF-8 continuation byte.
            first[0x80..0xC0].fill(false);
            Plan::Segments(segments, first)
        } else {
            Plan::Fancy
        };
        Ok(Self {
            id: next_cache_id(),
            plan,
            fancy,
            regular,
        })
    }

    /// Whether the pattern runs on the DFA plan (else on fancy-regex's backtracking).
    pub fn is_planned(&self) -> bool {
        matches!(self.plan, Plan::Segments(..))
    }

    /// Fresh lazy-DFA caches for this spanner's plan.
    pub(crate) fn new_caches(&self) -> Vec<DfaCache> {
        match &self.plan {
            Plan::Segments(segments, _) => segments
                .iter()
                .filter_map(|s| match s {
                    Segment::Dfa(dfa) => Some(dfa.dfa.create_cache()),
                    Segment::Run(_) => None,
                })
                .collect(),
            Plan::Fancy => Vec::new(),
        }
    }

    /// Appends the end of each piece of `text` (the successive matches, which must cover it).
    pub fn split(&self, text: &str, out: &mut Vec<usize>) -> Result<(), SplitError> {
        let mut pos = 0;
        match &self.plan {
            Plan::Segments(segments, _) => with_caches(
                self.id,
                || vec![self.new_caches()],
                |caches| {
                    let caches = &mut caches[0];
                    while pos < text.len() {
                        match plan_match_at(segments, caches, text, pos).0 {
                            Some(end) => {
                                out.push(end);
                                pos = end;
                            }
                            None => return Err(SplitError::Gap(pos)),
                        }
                    }
                    Ok(())
                },
            )?,
            Plan::Fancy => {
                while pos < text.len() {
                    match self.fancy.find_from_pos(text, pos) {
                        Ok(Some(m)) if m.start() == pos => {
                            out.push(m.end());
                            pos = m.end();
                        }
                        Ok(_) => return Err(SplitError::Gap(pos)),
                        Err(e) => return Err(SplitError::Engine(e.to_string())),
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends the pieces of `text` as llama.cpp cuts a piece with one regex: each match, and
    /// each stretch of text between matches, is a piece (`text` alone is the haystack).
    pub fn split_with_gaps(&self, text: &str, out: &mut Vec<usize>) -> Result<(), SplitError> {
        with_caches(
            self.id,
            || vec![self.new_caches()],
            |caches| self.split_with_gaps_in(&mut caches[0], text, 0, out),
        )
    }

    /// [`Self::split_with_gaps`] with this thread's caches, each end pushed plus `base`.
    fn split_with_gaps_in(
        &self,
        caches: &mut [DfaCache],
        text: &str,
        base: usize,
        out: &mut Vec<usize>,
    ) -> Result<(), SplitError> {
        let mut pos = 0;
        self.matches_in(caches, text, |start, end| {
            if start > pos {
                out.push(base + start);
            }
            out.push(base + end);
            pos = end;
        })?;
        if pos < text.len() {
            out.push(base + text.len());
        }
        Ok(())
    }

    /// Calls `each(start, end)` for each match in `text` (alone the haystack), in order, as
    /// Oniguruma's and the `regex` module's searches find them: the leftmost match, searched
    /// for again from where the last one ended. No match is empty (the pattern cannot match
    /// the empty string). `caches`: this thread's caches of the plan ([`Self::new_caches`]).
    ///
    /// On the DFA plan the leftmost match is the first position where the plan matches
    /// anchored (as at the start of every piece in [`Self::split`]): only positions whose
    /// byte can start a match are tried. Failed tries that read too much in all (e.g.
    /// `\s+\z` tried at each space of a long run of them followed by a letter: quadratic)
    /// hand the rest of the text to the unanchored engine, which is linear.
    #[inline(always)]
    pub(crate) fn matches_in(
        &self,
        caches: &mut [DfaCache],
        text: &str,
        mut each: impl FnMut(usize, usize),
    ) -> Result<(), SplitError> {
        let Plan::Segments(segments, first) = &self.plan else {
            return self.search_matches(text, 0, each);
        };
        let bytes = text.as_bytes();
        // One fully computed DFA (most regexes of a sequence): its walk inlined in the loop.
        let tried = match segments.as_slice() {
            [Segment::Dfa(dfa)] => match &dfa.table {
                Some(table) => {
                    matches_by_tries(first, bytes, &mut each, |at| table.walk(bytes, at))
                }
                None => matches_by_tries(first, bytes, &mut each, |at| {
                    plan_match_at(segments, caches, text, at)
                }),
            },
            _ => matches_by_tries(first, bytes, &mut each, |at| {
                plan_match_at(segments, caches, text, at)
            }),
        };
        match tried {
            Ok(()) => Ok(()),
            Err(at) => self.search_matches(text, at, each),
        }
    }

    /// The matches of `text` from `from` on, by unanchored searches: `each(start, end)`.
    fn search_matches(
        &self,
        text: &str,
        mut from: usize,
        mut each: impl FnMut(usize, usize),
    ) -> Result<(), SplitError> {
        while from < text.len() {
            let found = match &self.regular {
                Some(regex) => regex
                    .find(Input::new(text).range(from..))
                    .map(|m| m.range()),
                None => match self.fancy.find_from_pos(text, from) {
                    Ok(m) => m.map(|m| m.range()),
                    Err(e) => return Err(SplitError::Engine(e.to_string())),
                },
            };
            let Some(range) = found else { break };
            each(range.start, range.end);
            from = range.end;
        }
        Ok(())
    }
}

/// The end of the plan's match at `pos` (the first segment that matches there), and the end
/// of the bytes the segments read.
#[inline]
fn plan_match_at(
    segments: &[Segment],
    caches: &mut [DfaCache],
    text: &str,
    pos: usize,
) -> (Option<usize>, usize) {
    let mut dfa_index = 0;
    let mut read = pos;
    for segment in segments {
        let (end, segment_read) = match segment {
            Segment::Dfa(dfa) => {
                dfa_index += 1;
                dfa.match_at(&mut caches[dfa_index - 1], text, pos)
            }
            Segment::Run(run) => run.match_at(text, pos),
        };
        read = read.max(segment_read);
        if end.is_some() {
            return (end, read);
        }
    }
    (None, read)
}

/// The matches in `bytes`, each given to `each(start, end)`: at each position whose byte is
/// in `first`, `try_at` gives the end of the match starting there (if any) and the end of
/// the bytes it read. `Err(at)`: the failed tries read more than 4 bytes per byte of text;
/// the matches before `at` were given and no match starts in the text from the last one's
/// end to `at`.
#[inline(always)]
fn matches_by_tries(
    first: &[bool; 256],
    bytes: &[u8],
    each: &mut impl FnMut(usize, usize),
    mut try_at: impl FnMut(usize) -> (Option<usize>, usize),
) -> Result<(), usize> {
    let mut at = 0;
    let mut budget = 4 * bytes.len() + 256;
    while at < bytes.len() {
        if !first[usize::from(bytes[at])] {
            at += 1;
            continue;
        }
        match try_at(at) {
            (Some(end), _) => {
                each(at, end);
                at = end;
            }
            (None, read) => {
                let cost = read - at;
                if cost > budget {
                    return Err(at);
                }
                budget -= cost;
                at += 1;
            }
        }
    }
    Ok(())
}

/// A sequence of regexes, llama.cpp-style: the first cuts the text, each next one cuts every
/// piece of the previous one (matches and the text between them are pieces).
pub struct RegexSequence {
    /// Names this sequence's entry in the per-thread DFA caches (never reused).
    id: u64,
    steps: Vec<RegexSpanner>,
}

impl RegexSequence {
    /// Compiles each expanded pattern; `Err` says which one cannot run natively.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        if patterns.is_empty() {
            return Err("a sequence of regexes needs at least one pattern".into());
        }
        let steps = patterns
            .iter()
            .enumerate()
            .map(|(i, p)| RegexSpanner::compile(p, true).map_err(|e| format!("pattern {i}: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            id: next_cache_id(),
            steps,
        })
    }

    /// Appends the end of each piece of `text`.
    pub fn split(&self, text: &str, out: &mut Vec<usize>) -> Result<(), SplitError> {
        if text.is_empty() {
            return Ok(());
        }
        let make = || self.steps.iter().map(RegexSpanner::new_caches).collect();
        with_caches(self.id, make, |caches| {
            let mut ends = vec![text.len()];
            let mut next = Vec::with_capacity(text.len() / 4 + 1);
            for (step, caches) in self.steps.iter().zip(caches.iter_mut()) {
                next.clear();
                let mut start = 0;
                for &end in &ends {
                    step.split_with_gaps_in(caches, &text[start..end], start, &mut next)?;
                    start = end;
                }
                std::mem::swap(&mut ends, &mut next);
            }
            out.extend_from_slice(&ends);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'t>(spanner: &RegexSpanner, text: &'t str) -> Vec<&'t str> {
        let mut ends = Vec::new();
        spanner.split(text, &mut ends).unwrap();
        let mut start = 0;
        ends.iter()
            .map(|&e| {
                let piece = &text[start..e];
                start = e;
                piece
            })
            .collect()
    }

    // GPT-2's pattern with its classes written out for ASCII text only (enough for a test).
    const LETTER: &str = "[A-Za-z]";
    const DIGIT: &str = "[0-9]";
    const SPACE: &str = r"[\x{9}-\x{D}\x{20}]";
    const NOT_SPACE: &str = r"[^\x{9}-\x{D}\x{20}]";

    fn gpt2_like(possessive: bool) -> String {
        let p = if possessive { "+" } else { "" };
        format!(
            r"'(?:[sdmt]|ll|ve|re)| ?{LETTER}+{p}| ?{DIGIT}+{p}| ?[^\x{{9}}-\x{{D}}\x{{20}}A-Za-z0-9]+{p}|{SPACE}+{p}\z|{SPACE}+(?!{NOT_SPACE})|{SPACE}"
        )
    }

    #[test]
    fn plans_possessive_and_lookahead_patterns() {
        for possessive in [false, true] {
            let spanner = RegexSpanner::new(&gpt2_like(possessive)).unwrap();
            assert!(spanner.is_planned());
            assert_eq!(
                pieces(&spanner, "Hello world's  2024!\n"),
                ["Hello", " world", "'s", " ", " 2024", "!", "\n"]
            );
            assert_eq!(pieces(&spanner, "a   b  "), ["a", "  ", " b", "  "]);
        }
    }

    #[test]
    fn planned_equals_fancy_regex() {
        let pattern = gpt2_like(true);
        let spanner = RegexSpanner::new(&pattern).unwrap();
        let fancy = fancy_regex::Regex::new(&pattern).unwrap();
        let alphabet = ['a', 'B', '1', ' ', '\n', '\'', 's', '!', 'é', '\t'];
        let mut text = String::new();
        let mut state = 12345u64;
        for _ in 0..2000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push(alphabet[(state >> 33) as usize % alphabet.len()]);
        }
        let expected: Vec<_> = fancy.find_iter(&text).map(|m| m.unwrap().end()).collect();
        let mut ends = Vec::new();
        spanner.split(&text, &mut ends).unwrap();
        assert_eq!(ends, expected);
    }

    #[test]
    fn computed_table_walks_as_the_lazy_dfa() {
        let spanner = RegexSpanner::new(&gpt2_like(false)).unwrap();
        let Plan::Segments(segments, _) = &spanner.plan else {
            panic!("not planned")
        };
        let alphabet = [
            'a', 'B', '1', ' ', '\n', '\'', 's', '!', 'é', '\t', '中', '😀',
        ];
        let mut text = String::new();
        let mut state = 7u64;
        for _ in 0..3000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push(alphabet[(state >> 33) as usize % alphabet.len()]);
        }
        let mut tables = 0;
        for segment in segments {
            let Segment::Dfa(dfa) = segment else { continue };
            let Some(table) = &dfa.table else { continue };
            tables += 1;
            let mut cache = dfa.dfa.create_cache();
            for (pos, _) in text.char_indices() {
                let lazy = dfa.walk(&mut cache, &text, pos).unwrap();
                assert_eq!(table.walk(text.as_bytes(), pos), lazy, "at {pos}");
            }
        }
        assert_eq!(tables, 2);
        // `\A` makes the start depend on what precedes: no table, the lazy DFA walks.
        let spanner = RegexSpanner::new(r"\Aa|a|b").unwrap();
        let Plan::Segments(segments, _) = &spanner.plan else {
            panic!("not planned")
        };
        assert!(matches!(&segments[..], [Segment::Dfa(dfa)] if dfa.table.is_none()));
        assert_eq!(pieces(&spanner, "aab"), ["a", "a", "b"]);
    }

    #[test]
    fn possessive_that_matters_is_not_regularized() {
        // `a++a` never matches; `a+a` does: the planner must not drop the possessive.
        let spanner = RegexSpanner::new("a++a|a|b").unwrap();
        assert!(!spanner.is_planned());
        assert_eq!(pieces(&spanner, "aab"), ["a", "a", "b"]);
        // Atomic at the end of its alternative is harmless.
        let spanner = RegexSpanner::new("(?>ab|a)|b").unwrap();
        assert!(spanner.is_planned());
        assert_eq!(pieces(&spanner, "abab"), ["ab", "ab"]);
    }

    #[test]
    fn run_lookahead_edges() {
        let spanner = RegexSpanner::new(&format!("{SPACE}+(?!{NOT_SPACE})|{SPACE}|x")).unwrap();
        assert!(spanner.is_planned());
        assert_eq!(pieces(&spanner, " x"), [" ", "x"]);
        assert_eq!(pieces(&spanner, "   x"), ["  ", " ", "x"]);
        assert_eq!(pieces(&spanner, "x  "), ["x", "  "]);
    }

    #[test]
    fn refusals() {
        assert!(RegexSpanner::new(r"\p{L}+|x").is_err());
        assert!(RegexSpanner::new(r"\s+").is_err());
        assert!(RegexSpanner::new(r"a*").is_err());
        assert!(RegexSpanner::new(r"(a").is_err());
        // Escaped backslash before p is a literal backslash and p.
        assert!(RegexSpanner::new(r"\\p|x").is_ok());
    }

    #[test]
    fn gaps_are_errors_and_lookbehind_runs_on_fancy() {
        let spanner = RegexSpanner::new("a|b").unwrap();
        let mut ends = Vec::new();
        assert_eq!(spanner.split("abca", &mut ends), Err(SplitError::Gap(2)));
        let spanner = RegexSpanner::new("(?<=a)b|a|b").unwrap();
        assert!(!spanner.is_planned());
        assert_eq!(pieces(&spanner, "abb"), ["a", "b", "b"]);
    }

    fn gap_pieces<'t>(spanner: &RegexSpanner, text: &'t str) -> Vec<&'t str> {
        let mut ends = Vec::new();
        spanner.split_with_gaps(text, &mut ends).unwrap();
        let mut start = 0;
        ends.iter()
            .map(|&e| {
                let piece = &text[start..e];
                start = e;
                piece
            })
            .collect()
    }

    #[test]
    fn first_bytes_cover_every_match_start() {
        let spanner =
            RegexSpanner::compile(&format!("x[0-9]+|{SPACE}+(?!{NOT_SPACE})|é"), true).unwrap();
        let Plan::Segments(_, first) = &spanner.plan else {
            panic!("not planned")
        };
        let starts: Vec<u8> = (0..=255u8).filter(|&b| first[usize::from(b)]).collect();
        // x, the five ASCII spaces, and é's lead byte: never a continuation byte.
        assert_eq!(starts, [9, 10, 11, 12, 13, 32, b'x', 0xC3]);
    }

    #[test]
    fn searches_with_gaps_equal_fancy_regex_and_fall_back_on_costly_tries() {
        let spanner = RegexSpanner::compile(&format!("{SPACE}+\\z|x[0-9]+|é"), true).unwrap();
        assert!(spanner.is_planned());
        assert_eq!(gap_pieces(&spanner, "ax12 b  "), ["a", "x12", " b", "  "]);
        assert_eq!(gap_pieces(&spanner, "éaé"), ["é", "a", "é"]);
        // Each try of `\s+\z` on the spaces reads to the `!`: the budget runs out and the
        // unanchored engine finishes, with the same pieces.
        let long = format!("{}!x1 {}", " ".repeat(5000), " ".repeat(3));
        let want: Vec<_> = {
            let fancy = fancy_regex::Regex::new(&format!("{SPACE}+\\z|x[0-9]+|é")).unwrap();
            let mut pos = 0;
            let mut out = Vec::new();
            for m in fancy.find_iter(&long) {
                let m = m.unwrap();
                if m.start() > pos {
                    out.push(&long[pos..m.start()]);
                }
                out.push(m.as_str());
                pos = m.end();
            }
            out
        };
        assert_eq!(want.len(), 3);
        assert_eq!(gap_pieces(&spanner, &long), want);
    }

    #[test]
    fn sequence_keeps_gaps() {
        let seq = RegexSequence::new(&[
            r"[\x{A}]".to_string(),
            "[0-9]+".to_string(),
            "b+(?!c)".to_string(),
        ])
        .unwrap();
        let text = "ab12\nbbc3";
        let mut ends = Vec::new();
        seq.split(text, &mut ends).unwrap();
        let mut start = 0;
        let got: Vec<_> = ends
            .iter()
            .map(|&e| {
                let p = &text[start..e];
                start = e;
                p
            })
            .collect();
        assert_eq!(got, ["a", "b", "12", "\n", "b", "bc", "3"]);
    }
}
