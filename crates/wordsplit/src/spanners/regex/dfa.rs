//! The DFA driver of the regex spanner: consecutive regular alternatives of a pattern,
//! matched anchored by regex-automata's lazy DFA walked byte by byte here, or by a table of
//! its states made at construction (see the spanner's module docs), and the per-thread caches
//! the lazy DFAs need.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::util::start;
use regex_automata::{meta, nfa::thompson, Anchored, Input};

/// The regex-crate size limits: explicit Unicode classes make big (but lazy) automata.
pub(super) const SIZE_LIMIT: usize = 1 << 28;

/// The first byte of the UTF-8 encoding of code point `cp` (>= 128).
pub(super) fn utf8_lead(cp: u32) -> u8 {
    match cp {
        0..=0x7FF => 0xC0 | (cp >> 6) as u8,
        0x800..=0xFFFF => 0xE0 | (cp >> 12) as u8,
        _ => 0xF0 | (cp >> 18).min(7) as u8,
    }
}

/// Consecutive regular alternatives, searched anchored (leftmost-first) by a lazy DFA that
/// this module drives byte by byte: a piece is ~5 bytes, and the general search routine's
/// setup (prefilters, unrolled loops, the cache pool) cost more than the walk itself.
pub(super) struct AnchoredDfa {
    pub(super) dfa: DFA,
    /// The same DFA with every state computed, when it is small and its start state does
    /// not depend on the text before the piece: the walk is then one table load per byte.
    pub(super) table: Option<DfaTable>,
    /// The same alternatives for the rare search the lazy DFA gives up on.
    pub(super) fallback: meta::Regex,
}

/// Most states a [`DfaTable`] may have (a tokenizer pattern's anchored DFA has a few hundred).
pub(super) const MAX_TABLE_STATES: usize = 4096;

/// A fully computed anchored DFA: `next[state + class[byte]]`, states premultiplied by the
/// stride (a power of two, so `state >> shift` indexes the per-state flags).
pub(super) struct DfaTable {
    pub(super) classes: [u8; 256],
    pub(super) shift: u32,
    pub(super) next: Vec<u32>,
    /// Per state: [`MATCH`] (a match ended one byte before), [`DEAD`], [`EOI_MATCH`] (a match
    /// ends at the end of the text if the text ends here).
    pub(super) flags: Vec<u8>,
    pub(super) start: u32,
}

pub(super) const MATCH: u8 = 1;
pub(super) const DEAD: u8 = 2;
pub(super) const EOI_MATCH: u8 = 4;

impl DfaTable {
    /// Every state of `dfa` reachable from its anchored start, or `None` if there are too
    /// many, the start depends on the look-behind, or the lazy DFA cannot say.
    pub(super) fn build(dfa: &DFA) -> Option<Self> {
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
    pub(super) fn walk(&self, bytes: &[u8], pos: usize) -> (Option<usize>, usize) {
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
    pub(super) fn new(alternatives: &[String]) -> Result<Self, String> {
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
    pub(super) fn match_at(
        &self,
        cache: &mut DfaCache,
        text: &str,
        pos: usize,
    ) -> (Option<usize>, usize) {
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
    pub(super) fn walk(
        &self,
        cache: &mut DfaCache,
        text: &str,
        pos: usize,
    ) -> Option<(Option<usize>, usize)> {
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
    pub(super) fn first_bytes(&self) -> [bool; 256] {
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

/// The lazy DFAs' caches of one spanner or sequence on one thread (most recently used first):
/// one list per pattern (a sequence has several), one cache per DFA segment of its plan.
pub(super) const CACHED_SPANNERS: usize = 8;
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

/// A regex-automata meta regex for the alternation of the regular `alternatives`.
pub(super) fn dfa_regex(alternatives: &[String]) -> Result<meta::Regex, String> {
    let pattern = alternatives.join("|");
    let config = meta::Config::new()
        .nfa_size_limit(Some(SIZE_LIMIT))
        .hybrid_cache_capacity(8 << 20);
    meta::Regex::builder()
        .configure(config)
        .build(&pattern)
        .map_err(|e| format!("the regex crate cannot compile {pattern:?}: {e}"))
}
