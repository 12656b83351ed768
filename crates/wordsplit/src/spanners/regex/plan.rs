//! The pattern planner of the regex spanner: which top-level alternatives of a pattern are
//! regular (DFA), which are a run not followed by a class (matched by hand), and whether the
//! pattern must run on fancy-regex instead; and the checks a pattern must pass first.

use fancy_regex::{Expr, LookAround};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::dfa::utf8_lead;

/// A set of code points: an ASCII bitmap and the sorted, merged ranges.
#[derive(Clone, Debug)]
pub(crate) struct CharSet {
    /// Bit `c` set: ASCII `c` is in the set.
    pub(super) ascii: u128,
    pub(super) ranges: Vec<(u32, u32)>,
}

impl CharSet {
    /// Its code points as sorted, merged ranges.
    pub(crate) fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    pub(super) fn new(mut ranges: Vec<(u32, u32)>) -> Self {
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

    pub(super) fn intersects(&self, other: &[(u32, u32)]) -> bool {
        other
            .iter()
            .any(|&(lo, hi)| self.ranges.iter().any(|&(a, b)| a.max(lo) <= b.min(hi)))
    }
}

/// `S+(?!C)` (or `S{lo,}(?!C)`), `S` and `C` disjoint one-character classes.
#[derive(Debug)]
pub(super) struct RunNotFollowed {
    pub(super) run: CharSet,
    pub(super) min: usize,
    pub(super) not_followed: CharSet,
}

impl RunNotFollowed {
    /// The end of the match at `pos`, as backtracking finds it: the longest run whose next
    /// character is not in `C`. Shorter runs are followed by an `S`, never a `C`, so that is
    /// the whole run, or the run minus its last character. Also the end of the bytes read.
    #[inline]
    pub(super) fn match_at(&self, text: &str, pos: usize) -> (Option<usize>, usize) {
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
    pub(super) fn first_bytes(&self) -> [bool; 256] {
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

/// Class escapes must have been expanded to ranges before the pattern gets here.
pub(super) fn reject_class_escapes(pattern: &str) -> Result<(), String> {
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
pub(super) fn may_be_empty(e: &Expr) -> bool {
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
pub(super) fn leaf_string(e: &Expr) -> String {
    let mut s = String::from("(?:");
    e.to_str(&mut s, 3);
    s.push(')');
    s
}

pub(super) fn parse_hir(pattern: &str) -> Option<Hir> {
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
pub(super) fn single_char_set(e: &Expr) -> Option<CharSet> {
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
pub(super) fn first_chars(h: &Hir) -> Option<(Vec<(u32, u32)>, bool)> {
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
pub(super) fn possessive_is_greedy(x: &CharSet, continuation: &str) -> bool {
    match parse_hir(continuation).as_ref().and_then(first_chars) {
        Some((_, true)) => true,
        Some((set, false)) => !x.intersects(&set),
        None => false,
    }
}

/// `{lo,hi}` (and `?` when lazy) in the regex crate's syntax.
pub(super) fn quantifier(lo: usize, hi: usize, greedy: bool) -> String {
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
pub(super) fn regularize(e: &Expr, tail: bool) -> Option<String> {
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
pub(super) fn run_not_followed(e: &Expr) -> Option<RunNotFollowed> {
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
