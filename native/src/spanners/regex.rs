//! The regex spanner: any split pattern, natively, with the semantics of the Python
//! `RegexSpanner` (tiktoken's: the successive leftmost-first matches, backtracking preference
//! order), and the llama.cpp-style sequence of regexes built on it.
//!
//! **Where the Unicode classes come from.** This module receives patterns whose classes are
//! already spelled as explicit Unicode 16.0 ranges: `wordsplit.spanners.regex.native_pattern`
//! writes them, with the same parser, the same list of accepted constructs and the same class
//! tables (`_unicode16.py`, generated with `unicode_tables.rs` by one script) as the Python
//! `RegexSpanner`. Expanding `\p{..}` here from `unicode_tables.rs` would need a second
//! translator, and two translators can disagree on what they accept or how they read an
//! escape; one translator cannot. The crate is built without the regex crates' Unicode class
//! tables (only simple case folding, for `(?i)`), and [`RegexSpanner::new`] refuses any class
//! escape that was left in, so no class can be read with other Unicode data by accident.
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
//!   computed once at construction into a plain table ([`DfaTable`]: one load per byte);
//!   else the lazy DFA is walked;
//! - `S+(?!C)` with `S` and `C` disjoint one-character classes (`\s+(?!\S)`, in every
//!   tokenizer pattern) is matched by hand: the whole run of `S`, or the run minus its last
//!   character when a `C` follows, which is where backtracking would stop;
//! - if any other alternative remains, the whole pattern runs on fancy-regex instead (as in
//!   tiktoken), with no backtracking limit, as Python's `regex` module has none.
//!
//! A sequence of regexes searches (a piece's matches may leave text between them): on the
//! plan, the leftmost match is the first position where the plan matches anchored, and only
//! positions whose byte can start a match (precomputed from the DFAs' start states and the
//! runs' classes) are tried, so most pieces of most steps cost one table lookup per byte.
//! Tries that fail after reading far (a long run that a pattern rejects at its end) have a
//! budget linear in the piece; past it the piece goes to regex-automata's unanchored search
//! (or fancy-regex's), which is linear.
//!
//! A pattern that can match the empty string is refused (the glue then keeps the Python
//! spanner): engines differ on where the search resumes after an empty match, and no
//! tokenizer pattern has one.

use fancy_regex::{Expr, LookAround};
use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::util::start;
use regex_automata::{meta, nfa::thompson, Anchored, Input};
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The regex-crate size limits: explicit Unicode classes make big (but lazy) automata.
const SIZE_LIMIT: usize = 1 << 28;

/// A set of code points: an ASCII bitmap and the sorted, merged ranges.
#[derive(Clone, Debug)]
pub(crate) struct CharSet {
    /// Bit `c` set: ASCII `c` is in the set.
    ascii: u128,
    ranges: Vec<(u32, u32)>,
}

impl CharSet {
    fn new(mut ranges: Vec<(u32, u32)>) -> Self {
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        let mut ascii = 0u128;
        for &(lo, hi) in &merged {
            for cp in lo..=hi.min(127) {
                ascii |= 1 << cp;
            }
        }
        Self {
            ascii,
            ranges: merged,
        }
    }

    #[inline]
    pub(crate) fn contains(&self, c: char) -> bool {
        let cp = c as u32;
        if cp < 128 {
            return self.ascii >> cp & 1 != 0;
        }
        self.ranges
            .binary_search_by(|&(lo, hi)| {
                if hi < cp {
                    std::cmp::Ordering::Less
                } else if lo > cp {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }

    fn intersects(&self, other: &[(u32, u32)]) -> bool {
        other
            .iter()
            .any(|&(lo, hi)| self.ranges.iter().any(|&(a, b)| a.max(lo) <= b.min(hi)))
    }
}

/// `S+(?!C)` (or `S{lo,}(?!C)`), `S` and `C` disjoint one-character classes.
#[derive(Debug)]
struct RunNotFollowed {
    run: CharSet,
    min: usize,
    not_followed: CharSet,
}

impl RunNotFollowed {
    /// The end of the match at `pos`, as backtracking finds it: the longest run whose next
    /// character is not in `C`. Shorter runs are followed by an `S`, never a `C`, so that is
    /// the whole run, or the run minus its last character. Also the end of the bytes read.
    #[inline]
    fn match_at(&self, text: &str, pos: usize) -> (Option<usize>, usize) {
        let mut count = 0;
        let mut end = pos;
        let mut last_start = pos;
        let mut next = None;
        for (offset, c) in text[pos..].char_indices() {
            if !self.run.contains(c) {
                next = Some(c);
                break;
            }
            count += 1;
            last_start = end;
            end = pos + offset + c.len_utf8();
        }
        let read = end + next.map_or(0, char::len_utf8);
        if count < self.min {
            return (None, read);
        }
        let found = match next {
            Some(c) if self.not_followed.contains(c) => (count > self.min).then_some(last_start),
            _ => Some(end),
        };
        (found, read)
    }

    /// The bytes a match can start with: the first bytes of the run's characters.
    fn first_bytes(&self) -> [bool; 256] {
        let mut set = [false; 256];
        for &(lo, hi) in &self.run.ranges {
            for cp in lo..=hi.min(127) {
                set[cp as usize] = true;
            }
            if hi >= 128 {
                // UTF-8 lead bytes grow with the code point.
                for byte in utf8_lead(lo.max(128))..=utf8_lead(hi) {
                    set[usize::from(byte)] = true;
                }
            }
        }
        set
    }
}

/// The first byte of the UTF-8 encoding of code point `cp` (>= 128).
fn utf8_lead(cp: u32) -> u8 {
    match cp {
        0..=0x7FF => 0xC0 | (cp >> 6) as u8,
        0x800..=0xFFFF => 0xE0 | (cp >> 12) as u8,
        _ => 0xF0 | (cp >> 18).min(7) as u8,
    }
}

/// Consecutive regular alternatives, searched anchored (leftmost-first) by a lazy DFA that
/// this module drives byte by byte: a piece is ~5 bytes, and the general search routine's
/// setup (prefilters, unrolled loops, the cache pool) cost more than the walk itself.
struct AnchoredDfa {
    dfa: DFA,
    /// The same DFA with every state computed, when it is small and its start state does
    /// not depend on the text before the piece: the walk is then one table load per byte.
    table: Option<DfaTable>,
    /// The same alternatives for the rare search the lazy DFA gives up on.
    fallback: meta::Regex,
}

/// Most states a [`DfaTable`] may have (a tokenizer pattern's anchored DFA has a few hundred).
const MAX_TABLE_STATES: usize = 4096;

/// A fully computed anchored DFA: `next[state + class[byte]]`, states premultiplied by the
/// stride (a power of two, so `state >> shift` indexes the per-state flags).
struct DfaTable {
    classes: [u8; 256],
    shift: u32,
    next: Vec<u32>,
    /// Per state: [`MATCH`] (a match ended one byte before), [`DEAD`], [`EOI_MATCH`] (a match
    /// ends at the end of the text if the text ends here).
    flags: Vec<u8>,
    start: u32,
}

const MATCH: u8 = 1;
const DEAD: u8 = 2;
const EOI_MATCH: u8 = 4;

impl DfaTable {
    /// Every state of `dfa` reachable from its anchored start, or `None` if there are too
    /// many, the start depends on the look-behind, or the lazy DFA cannot say.
    fn build(dfa: &DFA) -> Option<Self> {
        let mut cache = dfa.create_cache();
        let start_config = |look_behind| {
            start::Config::new()
                .anchored(Anchored::Yes)
                .look_behind(look_behind)
        };
        let start = dfa.start_state(&mut cache, &start_config(None)).ok()?;
        for byte in 0..=255u8 {
            if dfa
                .start_state(&mut cache, &start_config(Some(byte)))
                .ok()?
                != start
            {
                return None;
            }
        }
        let byte_classes = dfa.byte_classes();
        let mut classes = [0u8; 256];
        let mut representatives: Vec<u8> = Vec::new();
        for byte in 0..=255u8 {
            let class = byte_classes.get(byte);
            classes[usize::from(byte)] = class;
            if usize::from(class) == representatives.len() {
                representatives.push(byte);
            }
        }
        let stride = representatives.len().next_power_of_two();
        let shift = stride.trailing_zeros();
        let clears = cache.clear_count();
        let mut ids = vec![start];
        let mut index: std::collections::HashMap<_, u32> = [(start, 0)].into();
        let mut next = Vec::new();
        let mut flags = Vec::new();
        let mut i = 0;
        while i < ids.len() {
            let sid = ids[i];
            i += 1;
            let mut state_flags = 0;
            if sid.is_match() {
                state_flags |= MATCH;
            }
            if sid.is_dead() {
                state_flags |= DEAD;
            }
            if sid.is_quit() || sid.is_unknown() {
                return None;
            }
            if dfa.next_eoi_state(&mut cache, sid).ok()?.is_match() {
                state_flags |= EOI_MATCH;
            }
            flags.push(state_flags);
            let row = next.len();
            next.resize(row + stride, 0);
            for (class, &byte) in representatives.iter().enumerate() {
                let to = dfa.next_state(&mut cache, sid, byte).ok()?;
                let n = ids.len() as u32;
                let to_index = *index.entry(to).or_insert_with(|| {
                    ids.push(to);
                    n
                });
                next[row + class] = to_index << shift;
            }
            if ids.len() > MAX_TABLE_STATES || cache.clear_count() != clears {
                return None;
            }
        }
        Some(Self {
            classes,
            shift,
            next,
            flags,
            start: 0,
        })
    }

    /// As [`AnchoredDfa::walk`].
    #[inline]
    fn walk(&self, bytes: &[u8], pos: usize) -> (Option<usize>, usize) {
        let mut state = self.start as usize;
        let mut end = None;
        for (at, &byte) in bytes.iter().enumerate().skip(pos) {
            state = self.next[state + usize::from(self.classes[usize::from(byte)])] as usize;
            let flags = self.flags[state >> self.shift];
            if flags != 0 {
                if flags & MATCH != 0 {
                    end = Some(at);
                }
                if flags & DEAD != 0 {
                    return (end, at + 1);
                }
            }
        }
        if self.flags[state >> self.shift] & EOI_MATCH != 0 {
            end = Some(bytes.len());
        }
        (end, bytes.len())
    }
}

impl AnchoredDfa {
    fn new(alternatives: &[String]) -> Result<Self, String> {
        let pattern = alternatives.join("|");
        let dfa = DFA::builder()
            .configure(DFA::config().cache_capacity(8 << 20))
            .thompson(thompson::Config::new().nfa_size_limit(Some(SIZE_LIMIT)))
            .build(&pattern)
            .map_err(|e| format!("the regex crate cannot compile {pattern:?}: {e}"))?;
        Ok(Self {
            table: DfaTable::build(&dfa),
            dfa,
            fallback: dfa_regex(alternatives)?,
        })
    }

    /// The end of the leftmost-first match starting at `pos`, if any, and the end of the
    /// bytes the search read (a failed search's cost, for [`RegexSpanner::split_with_gaps`]).
    #[inline]
    fn match_at(&self, cache: &mut DfaCache, text: &str, pos: usize) -> (Option<usize>, usize) {
        if let Some(table) = &self.table {
            return table.walk(text.as_bytes(), pos);
        }
        self.walk(cache, text, pos).unwrap_or_else(|| {
            let found = self
                .fallback
                .search_half(&Input::new(text).range(pos..).anchored(Anchored::Yes))
                .map(|m| m.offset());
            (found, text.len())
        })
    }

    /// The DFA walk; `None` when the lazy DFA gives up (then the meta regex answers).
    #[inline]
    fn walk(&self, cache: &mut DfaCache, text: &str, pos: usize) -> Option<(Option<usize>, usize)> {
        let bytes = text.as_bytes();
        let input = Input::new(text).range(pos..).anchored(Anchored::Yes);
        let mut sid = self.dfa.start_state_forward(cache, &input).ok()?;
        let mut end = None;
        for (at, &byte) in bytes.iter().enumerate().skip(pos) {
            sid = self.dfa.next_state(cache, sid, byte).ok()?;
            if sid.is_tagged() {
                // Match states come one byte late: this one says a match ended at `at`.
                if sid.is_match() {
                    end = Some(at);
                } else if sid.is_dead() {
                    return Some((end, at + 1));
                } else if sid.is_quit() {
                    return None;
                }
            }
        }
        sid = self.dfa.next_eoi_state(cache, sid).ok()?;
        if sid.is_match() {
            end = Some(bytes.len());
        }
        Some((end, bytes.len()))
    }

    /// The bytes a match can start with, in any context (look-behind): those whose
    /// transition from a start state is not dead. A match is never empty (the planner refuses
    /// such patterns), so the match state one byte late is never the start's own.
    fn first_bytes(&self) -> [bool; 256] {
        let mut cache = self.dfa.create_cache();
        let mut set = [false; 256];
        for look_behind in std::iter::once(None).chain((0..=255u8).map(Some)) {
            let config = start::Config::new()
                .anchored(Anchored::Yes)
                .look_behind(look_behind);
            let Ok(sid) = self.dfa.start_state(&mut cache, &config) else {
                return [true; 256];
            };
            if sid.is_dead() {
                continue;
            }
            for byte in 0..=255u8 {
                match self.dfa.next_state(&mut cache, sid, byte) {
                    Ok(next) if next.is_dead() => {}
                    _ => set[usize::from(byte)] = true,
                }
            }
        }
        set
    }
}

/// One step of the plan at a position: the first step that matches there gives the piece.
enum Segment {
    Dfa(Box<AnchoredDfa>),
    Run(RunNotFollowed),
}

/// The lazy DFAs' caches of one spanner or sequence on one thread (most recently used first):
/// one list per pattern (a sequence has several), one cache per DFA segment of its plan.
const CACHED_SPANNERS: usize = 8;
pub(crate) type SpannerCaches = Vec<Vec<DfaCache>>;
thread_local! {
    static DFA_CACHES: RefCell<Vec<(u64, SpannerCaches)>> = const { RefCell::new(Vec::new()) };
}
static NEXT_SPANNER_ID: AtomicU64 = AtomicU64::new(0);

/// A new id for an object's entry in the per-thread DFA caches (never reused).
pub(crate) fn next_cache_id() -> u64 {
    NEXT_SPANNER_ID.fetch_add(1, Ordering::Relaxed)
}

/// Runs `f` with this thread's caches of the object `id`, made by `make` on first use.
pub(crate) fn with_caches<R>(
    id: u64,
    make: impl FnOnce() -> SpannerCaches,
    f: impl FnOnce(&mut SpannerCaches) -> R,
) -> R {
    DFA_CACHES.with_borrow_mut(|caches| {
        f(crate::pipeline::most_recent(
            caches,
            id,
            CACHED_SPANNERS,
            make,
        ))
    })
}

enum Plan {
    /// The segments, and the bytes a match of any of them can start with.
    Segments(Vec<Segment>, Box<[bool; 256]>),
    /// Some alternative needs backtracking: the whole pattern on fancy-regex.
    Fancy,
}

/// Why a split stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum SplitError {
    /// No match starts at this byte offset: the pattern does not cover the text (the Python
    /// spanner would drop the text; both engines raise instead).
    Gap(usize),
    /// fancy-regex gave up (not expected: it runs without a backtracking limit).
    Engine(String),
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
    /// natively; the caller then keeps the Python spanner.
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

/// Class escapes must have been expanded to ranges before the pattern gets here.
fn reject_class_escapes(pattern: &str) -> Result<(), String> {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            continue;
        }
        if let Some(e @ ('p' | 'P' | 's' | 'S' | 'd' | 'D' | 'w' | 'W' | 'b' | 'B' | 'h' | 'H')) =
            chars.next()
        {
            return Err(format!(
                "the pattern still has the class escape \\{e}; pass the expanded form \
                 (wordsplit.spanners.regex.native_pattern)"
            ));
        }
    }
    Ok(())
}

/// Whether `e` might match the empty string (assertions and lookarounds count as passable,
/// so this errs towards yes).
fn may_be_empty(e: &Expr) -> bool {
    match e {
        Expr::Literal { val, .. } => val.is_empty(),
        Expr::Any { .. } | Expr::Delegate { .. } => false,
        Expr::Concat(children) => children.iter().all(may_be_empty),
        Expr::Alt(children) => children.iter().any(may_be_empty),
        Expr::Group(child) | Expr::AtomicGroup(child) => may_be_empty(child),
        Expr::Repeat { child, lo, .. } => *lo == 0 || may_be_empty(child),
        _ => true,
    }
}

/// The regex-crate form of a leaf (a literal, a class, `.`), grouped.
fn leaf_string(e: &Expr) -> String {
    let mut s = String::from("(?:");
    e.to_str(&mut s, 3);
    s.push(')');
    s
}

fn parse_hir(pattern: &str) -> Option<Hir> {
    regex_syntax::ParserBuilder::new()
        .utf8(true)
        .unicode(true)
        .build()
        .parse(pattern)
        .ok()
}

/// The code points `pattern` matches when it is one character class or one character (its
/// matches are then exactly the characters in the set), else `None`.
pub(crate) fn one_char_class(pattern: &str) -> Option<CharSet> {
    single_char_set(&Expr::parse_tree(pattern).ok()?.expr)
}

/// The code points `e` matches, if it is one character from a class or a literal.
fn single_char_set(e: &Expr) -> Option<CharSet> {
    match e {
        Expr::Delegate { size: 1, .. } | Expr::Literal { .. } => {}
        _ => return None,
    }
    let hir = parse_hir(&leaf_string(e))?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(CharSet::new(
            class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
        )),
        HirKind::Literal(lit) => {
            let s = std::str::from_utf8(&lit.0).ok()?;
            let mut chars = s.chars();
            let c = chars.next()?;
            chars
                .next()
                .is_none()
                .then(|| CharSet::new(vec![(c as u32, c as u32)]))
        }
        _ => None,
    }
}

/// What can start a match of `h`: the possible first characters, and whether it can match
/// empty (anywhere). End of text is neither (it fails whenever a character follows); any
/// other assertion is unknown (`None`).
fn first_chars(h: &Hir) -> Option<(Vec<(u32, u32)>, bool)> {
    Some(match h.kind() {
        HirKind::Empty => (Vec::new(), true),
        HirKind::Literal(lit) => {
            let c = std::str::from_utf8(&lit.0).ok()?.chars().next()?;
            (vec![(c as u32, c as u32)], false)
        }
        HirKind::Class(Class::Unicode(class)) => (
            class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            false,
        ),
        HirKind::Class(Class::Bytes(_)) => return None,
        HirKind::Look(Look::End) => (Vec::new(), false),
        HirKind::Look(_) => return None,
        HirKind::Repetition(rep) => {
            let (set, nullable) = first_chars(&rep.sub)?;
            (set, nullable || rep.min == 0)
        }
        HirKind::Capture(cap) => first_chars(&cap.sub)?,
        HirKind::Concat(hs) => {
            let mut set = Vec::new();
            for h in hs {
                let (s, nullable) = first_chars(h)?;
                set.extend(s);
                if !nullable {
                    return Some((set, false));
                }
            }
            (set, true)
        }
        HirKind::Alternation(hs) => {
            let mut set = Vec::new();
            let mut any_nullable = false;
            for h in hs {
                let (s, nullable) = first_chars(h)?;
                set.extend(s);
                any_nullable |= nullable;
            }
            (set, any_nullable)
        }
    })
}

/// Whether a possessive repeat of the one-character class `x`, followed by `continuation`
/// (the rest of its alternative, already regular), matches what the greedy repeat matches.
/// They differ only if the continuation fails after the longest run but succeeds after a
/// shorter one, where the next character is an `x`: impossible if it always matches empty or
/// cannot start with an `x`.
fn possessive_is_greedy(x: &CharSet, continuation: &str) -> bool {
    match parse_hir(continuation).as_ref().and_then(first_chars) {
        Some((_, true)) => true,
        Some((set, false)) => !x.intersects(&set),
        None => false,
    }
}

/// `{lo,hi}` (and `?` when lazy) in the regex crate's syntax.
fn quantifier(lo: usize, hi: usize, greedy: bool) -> String {
    let mut q = if hi == usize::MAX {
        format!("{{{lo},}}")
    } else {
        format!("{{{lo},{hi}}}")
    };
    if !greedy {
        q.push('?');
    }
    q
}

/// An equivalent regular expression (regex-crate syntax) with no atomic groups, lookaround or
/// backreferences, or `None`. `tail`: nothing follows `e` in its alternative.
fn regularize(e: &Expr, tail: bool) -> Option<String> {
    Some(match e {
        Expr::Empty => "(?:)".into(),
        Expr::Any { .. } | Expr::Literal { .. } | Expr::Delegate { .. } => leaf_string(e),
        Expr::Assertion(fancy_regex::Assertion::StartText) => r"\A".into(),
        Expr::Assertion(fancy_regex::Assertion::EndText) => r"\z".into(),
        Expr::Group(child) => format!("({})", regularize(child, tail)?),
        // An atomic group that ends its alternative commits to the match it would have
        // returned first anyway.
        Expr::AtomicGroup(child) if tail => regularize(child, true)?,
        Expr::Alt(children) => {
            let parts: Option<Vec<String>> = children.iter().map(|c| regularize(c, tail)).collect();
            format!("(?:{})", parts?.join("|"))
        }
        Expr::Repeat {
            child,
            lo,
            hi,
            greedy,
        } => format!(
            "(?:{}){}",
            regularize(child, false)?,
            quantifier(*lo, *hi, *greedy)
        ),
        Expr::Concat(children) => {
            let mut parts = vec![String::new(); children.len()];
            // Right to left: a possessive repeat is judged by its (regular) continuation.
            for i in (0..children.len()).rev() {
                let last = i + 1 == children.len();
                parts[i] = match &children[i] {
                    Expr::AtomicGroup(inner) if tail && !last => match &**inner {
                        Expr::Repeat {
                            child,
                            lo,
                            hi,
                            greedy: true,
                        } => {
                            let x = single_char_set(child)?;
                            if !possessive_is_greedy(&x, &parts[i + 1..].concat()) {
                                return None;
                            }
                            format!("{}{}", leaf_string(child), quantifier(*lo, *hi, true))
                        }
                        _ => return None,
                    },
                    child => regularize(child, tail && last)?,
                };
            }
            format!("(?:{})", parts.concat())
        }
        _ => return None,
    })
}

/// `S{lo,}(?!C)` with `S`, `C` disjoint one-character classes and `lo >= 1`, or `None`.
fn run_not_followed(e: &Expr) -> Option<RunNotFollowed> {
    let Expr::Concat(children) = e else {
        return None;
    };
    let [Expr::Repeat {
        child,
        lo,
        hi: usize::MAX,
        greedy: true,
    }, Expr::LookAround(ahead, LookAround::LookAheadNeg)] = children.as_slice()
    else {
        return None;
    };
    let run = single_char_set(child)?;
    let not_followed = single_char_set(ahead)?;
    if *lo == 0 || run.intersects(&not_followed.ranges) {
        return None;
    }
    Some(RunNotFollowed {
        run,
        min: *lo,
        not_followed,
    })
}

/// A regex-automata meta regex for the alternation of the regular `alternatives`.
fn dfa_regex(alternatives: &[String]) -> Result<meta::Regex, String> {
    let pattern = alternatives.join("|");
    let config = meta::Config::new()
        .nfa_size_limit(Some(SIZE_LIMIT))
        .hybrid_cache_capacity(8 << 20);
    meta::Regex::builder()
        .configure(config)
        .build(&pattern)
        .map_err(|e| format!("the regex crate cannot compile {pattern:?}: {e}"))
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
