//! What BERT's last two steps (strip accents, lowercase) make of each character alone,
//! remembered per code point of the Basic Multilingual Plane ([`AloneMemo`]): a character
//! waiting alone for NFD (an accented letter, a Hangul syllable) or a capital costs one read
//! once it has been seen, instead of a decomposition and a case lookup each time.
//!
//! One memo per combination of the two steps, shared by every normalizer and thread (an
//! entry is written once, with the same value by whichever thread computes it first).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use unicode_normalization_alignments::char::decompose_canonical;

use super::bert_chars::{BertChars, MARK};

/// An entry: bit 63 set once computed; then up to three characters, each plus one in 21 bits
/// (0: none), in order. [`MANY`]: more than three (computed each time).
const COMPUTED: u64 = 1 << 63;
const MANY: u64 = COMPUTED | ((1 << 63) - 1);
const FIELD: u32 = 21;
const FIELD_MASK: u64 = (1 << FIELD) - 1;

/// The remembered results of one combination of the steps (see the module docs).
pub(super) struct AloneMemo {
    strip_accents: bool,
    lowercase: bool,
    entries: Box<[AtomicU64]>,
}

/// Up to three characters, in order.
#[derive(Clone, Copy)]
pub(super) struct Alone(u64);

impl Iterator for Alone {
    type Item = char;

    #[inline(always)]
    fn next(&mut self) -> Option<char> {
        let field = self.0 & FIELD_MASK;
        if field == 0 {
            return None;
        }
        self.0 >>= FIELD;
        // (the fields hold scalar values plus one, written by `AloneMemo::compute`)
        char::from_u32(field as u32 - 1)
    }
}

impl AloneMemo {
    /// The memo of these steps, made on first use.
    pub(super) fn get(strip_accents: bool, lowercase: bool) -> &'static AloneMemo {
        static MEMOS: [OnceLock<AloneMemo>; 4] = [const { OnceLock::new() }; 4];
        let which = usize::from(strip_accents) << 1 | usize::from(lowercase);
        MEMOS[which].get_or_init(|| AloneMemo {
            strip_accents,
            lowercase,
            entries: (0..0x1_0000).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// The characters `c` becomes alone through the two steps (its canonical decomposition
    /// without nonspacing marks when stripping accents, then each lowercased); None when it
    /// is beyond the Basic Multilingual Plane or becomes more than three characters.
    #[inline(always)]
    pub(super) fn alone(&self, c: char) -> Option<Alone> {
        let entry = self.entries.get(c as usize)?;
        let mut value = entry.load(Relaxed);
        if value == 0 {
            value = self.compute(c);
            entry.store(value, Relaxed);
        }
        (value != MANY).then_some(Alone(value & !COMPUTED))
    }

    #[cold]
    fn compute(&self, c: char) -> u64 {
        let table = BertChars::get();
        let mut chars = Vec::with_capacity(4);
        let mut each = |d: char| {
            if self.lowercase {
                chars.extend(d.to_lowercase());
            } else {
                chars.push(d);
            }
        };
        if self.strip_accents {
            decompose_canonical(c, |d| {
                if table.flags(d as u32) & MARK == 0 {
                    each(d);
                }
            });
        } else {
            each(c);
        }
        if chars.len() > 3 {
            return MANY;
        }
        chars.iter().rev().fold(COMPUTED, |value, &d| {
            value << FIELD & !COMPUTED | COMPUTED | (u64::from(d) + 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_character_alone_as_computed() {
        for (strip, lower) in [(false, false), (false, true), (true, false), (true, true)] {
            let memo = AloneMemo::get(strip, lower);
            for c in "aAéÉ한İ\u{301}Σǅﬁẞΐ\u{1f82}".chars() {
                let mut want = String::new();
                let table = BertChars::get();
                let mut each = |d: char| match lower {
                    true => want.extend(d.to_lowercase()),
                    false => want.push(d),
                };
                if strip {
                    decompose_canonical(c, |d| {
                        if table.flags(d as u32) & MARK == 0 {
                            each(d)
                        }
                    });
                } else {
                    each(c);
                }
                for _ in 0..2 {
                    match memo.alone(c) {
                        Some(chars) => assert_eq!(chars.collect::<String>(), want, "{c:?}"),
                        None => assert!(want.chars().count() > 3, "{c:?}"),
                    }
                }
            }
            assert!(memo.alone('😀').is_none(), "beyond the plane");
        }
        let all = AloneMemo::get(true, true);
        assert_eq!(
            all.alone('한').unwrap().collect::<String>(),
            "\u{1112}\u{1161}\u{11ab}"
        );
        assert_eq!(
            all.alone('\u{301}').unwrap().count(),
            0,
            "a mark alone goes"
        );
    }
}
