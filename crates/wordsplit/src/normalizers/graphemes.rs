//! Extended grapheme clusters, the units HF's `Precompiled` looks a character map up by
//! ([`precompiled`](super::precompiled)): UAX #29's rules as the Python package writes them,
//! the pattern of `wordsplit.normalizers.precompiled._graphemes()`
//!
//! ```text
//! \r\n | [Control CR LF] | Prepend* core [Extend ZWJ SpacingMark]*
//! core = hangul | RI RI | ExtPict (Extend* ZWJ ExtPict)* | conjunct | [^Control CR LF]
//! hangul = L* (V+ | LV V* | LVT) T* | L+ | T+
//! conjunct = InCB=Consonant ([InCB=Extend InCB=Linker]* InCB=Linker [...]* InCB=Consonant)+
//! ```
//!
//! matched here as that pattern matches (its alternatives in order, the first that matches
//! wins; `Prepend*` gives a character back when no core follows it), with the properties of
//! `grapheme_classes`, generated from the same `regex` module.
//!
//! ```
//! use wordsplit::normalizers::graphemes::graphemes;
//! let clusters: Vec<&str> = graphemes("e\u{301}\r\n\u{a0}\u{94d}\u{915}").collect();
//! assert_eq!(clusters, ["e\u{301}", "\r\n", "\u{a0}\u{94d}", "\u{915}"]);
//! ```

use super::grapheme_classes as g;

/// The class byte of `c` (see `tools/gen_grapheme_tables.py`): 0 for most characters.
#[inline]
fn class(c: char) -> u8 {
    let cp = c as u32;
    if cp < 0x7F {
        return match cp {
            0x0A => g::LF,
            0x0D => g::CR,
            0x00..=0x1F => g::CONTROL,
            _ => 0,
        };
    }
    let table = class_table();
    let block = usize::from(table.index[(cp >> BLOCK_BITS) as usize]);
    table.blocks[block << BLOCK_BITS | (cp as usize & (BLOCK - 1))]
}

/// The class byte of `cp` from the runs themselves (a binary search), what the table holds.
#[cfg(test)]
fn class_of_runs(cp: u32) -> u8 {
    let runs = g::RUNS;
    let i = runs.partition_point(|&(_, last, _)| last < cp);
    match runs.get(i) {
        Some(&(first, _, byte)) if first <= cp => byte,
        _ => 0,
    }
}

/// Code points per block of the class table: 128 (8,704 blocks, of which a few hundred differ).
const BLOCK_BITS: u32 = 7;
const BLOCK: usize = 1 << BLOCK_BITS;

/// Every code point's class byte in two loads: each block of [`BLOCK`] code points is an index
/// into the distinct blocks' bytes. A cluster's end reads its characters' classes several
/// times, which a binary search over the 1,641 runs made a tenth of a Precompiled normalizer's
/// time over multilingual text.
struct ClassTable {
    index: Vec<u16>,
    blocks: Vec<u8>,
}

fn class_table() -> &'static ClassTable {
    static TABLE: std::sync::OnceLock<ClassTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut bytes = vec![0u8; (char::MAX as usize + 1).next_multiple_of(BLOCK)];
        for &(first, last, byte) in g::RUNS {
            bytes[first as usize..=last as usize].fill(byte);
        }
        let mut seen: std::collections::HashMap<&[u8], u16> = std::collections::HashMap::new();
        let mut table = ClassTable {
            index: Vec::with_capacity(bytes.len() / BLOCK),
            blocks: Vec::new(),
        };
        for block in bytes.chunks_exact(BLOCK) {
            let next = seen.len() as u16;
            let at = *seen.entry(block).or_insert(next);
            if at == next {
                table.blocks.extend_from_slice(block);
            }
            table.index.push(at);
        }
        table
    })
}

fn gcb(byte: u8) -> u8 {
    byte & 0x0F
}

fn incb(byte: u8) -> u8 {
    byte >> 5
}

/// The text's characters from a byte index, with their classes.
struct Reader<'a> {
    text: &'a str,
}

impl Reader<'_> {
    /// The class of the character at `at` and where it ends, or None at the end.
    #[inline]
    fn at(&self, at: usize) -> Option<(u8, usize)> {
        let c = self.text.get(at..)?.chars().next()?;
        Some((class(c), at + c.len_utf8()))
    }

    fn gcb_at(&self, at: usize) -> Option<(u8, usize)> {
        self.at(at).map(|(byte, end)| (gcb(byte), end))
    }

    /// Past the characters from `at` whose Grapheme_Cluster_Break is `value`.
    fn skip(&self, mut at: usize, value: u8) -> usize {
        while let Some((v, end)) = self.gcb_at(at) {
            if v != value {
                break;
            }
            at = end;
        }
        at
    }

    /// The end of the cluster that starts at `start` (not the end of the text).
    fn cluster_end(&self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        if bytes[start] == b'\r' && bytes.get(start + 1) == Some(&b'\n') {
            return start + 2;
        }
        let Some((first, next)) = self.gcb_at(start) else {
            return self.text.len();
        };
        if matches!(first, g::CR | g::LF | g::CONTROL) {
            return next;
        }
        // Prepend*, greedy: the core after them, else the last of them is the core.
        let (mut at, mut last_prepend) = (start, None);
        while let Some((g::PREPEND, end)) = self.gcb_at(at) {
            last_prepend = Some(at);
            at = end;
        }
        let core_end = match self.core(at) {
            Some(end) => end,
            None => match last_prepend {
                Some(at) => self.core(at).unwrap_or(self.text.len()),
                None => return next, // (unreachable: a non-control character is a core)
            },
        };
        let mut at = core_end;
        while let Some((v, end)) = self.gcb_at(at) {
            if !matches!(v, g::EXTEND | g::ZWJ | g::SPACING_MARK) {
                break;
            }
            at = end;
        }
        at
    }

    /// The end of the pattern's `core` at `at`, the first of its alternatives that matches.
    fn core(&self, at: usize) -> Option<usize> {
        let (byte, next) = self.at(at)?;
        if matches!(gcb(byte), g::CR | g::LF | g::CONTROL) {
            return None;
        }
        if let Some(end) = self.hangul(at) {
            return Some(end);
        }
        if gcb(byte) == g::REGIONAL_INDICATOR {
            if let Some((g::REGIONAL_INDICATOR, end)) = self.gcb_at(next) {
                return Some(end);
            }
        }
        if byte & g::PICTOGRAPHIC != 0 {
            return Some(self.pictographs(next));
        }
        if incb(byte) == g::INCB_CONSONANT {
            if let Some(end) = self.conjunct(next) {
                return Some(end);
            }
        }
        Some(next)
    }

    /// `L* (V+ | LV V* | LVT) T* | L+ | T+` at `at`.
    fn hangul(&self, at: usize) -> Option<usize> {
        let after_l = self.skip(at, g::L);
        let syllable = match self.gcb_at(after_l) {
            Some((g::V, _)) => Some(self.skip(after_l, g::V)),
            Some((g::LV, end)) => Some(self.skip(end, g::V)),
            Some((g::LVT, end)) => Some(end),
            _ => None,
        };
        match syllable {
            Some(end) => Some(self.skip(end, g::T)),
            None if after_l > at => Some(after_l),
            None => {
                let after_t = self.skip(at, g::T);
                (after_t > at).then_some(after_t)
            }
        }
    }

    /// `(Extend* ZWJ ExtPict)*` from `at`, after a pictograph.
    fn pictographs(&self, mut at: usize) -> usize {
        loop {
            let after_extend = self.skip(at, g::EXTEND);
            let Some((g::ZWJ, after_zwj)) = self.gcb_at(after_extend) else {
                return at;
            };
            match self.at(after_zwj) {
                Some((byte, end)) if byte & g::PICTOGRAPHIC != 0 => at = end,
                _ => return at,
            }
        }
    }

    /// `(joiners* Linker joiners* Consonant)+` from `at`, after a consonant: each run of
    /// joiners must hold a linker.
    fn conjunct(&self, mut at: usize) -> Option<usize> {
        let mut joined = false;
        loop {
            let (mut end, mut linker) = (at, false);
            while let Some((byte, next)) = self.at(end) {
                match incb(byte) {
                    g::INCB_LINKER => linker = true,
                    g::INCB_EXTEND => {}
                    _ => break,
                }
                end = next;
            }
            match self.at(end) {
                Some((byte, next)) if linker && incb(byte) == g::INCB_CONSONANT => {
                    at = next;
                    joined = true;
                }
                _ => return joined.then_some(at),
            }
        }
    }
}

/// The extended grapheme clusters of `text`, in order.
pub fn graphemes(text: &str) -> impl Iterator<Item = &str> + '_ {
    let reader = Reader { text };
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let end = reader.cluster_end(at);
        let cluster = &text[at..end];
        at = end;
        Some(cluster)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Vec<&str> {
        graphemes(text).collect()
    }

    #[test]
    fn the_class_table_holds_the_runs_classes() {
        for cp in (0..=char::MAX as u32).filter_map(char::from_u32) {
            assert_eq!(class(cp), class_of_runs(cp as u32), "U+{:04X}", cp as u32);
        }
    }

    #[test]
    fn clusters_follow_uax_29() {
        // Hangul syllables and jamo, flags in pairs, emoji ZWJ sequences, CR LF.
        assert_eq!(
            cut("\u{1100}\u{1161}\u{11a8}각"),
            ["\u{1100}\u{1161}\u{11a8}", "각"]
        );
        assert_eq!(cut("🇫🇷🇩🇪🇺"), ["🇫🇷", "🇩🇪", "🇺"]);
        assert_eq!(
            cut("👩\u{200d}👩\u{200d}👧!"),
            ["👩\u{200d}👩\u{200d}👧", "!"]
        );
        assert_eq!(cut("a\u{200d}👧"), ["a\u{200d}", "👧"]);
        assert_eq!(cut("\r\n\r\r\na\n"), ["\r\n", "\r", "\r\n", "a", "\n"]);
        assert_eq!(cut("\u{1}\u{301}"), ["\u{1}", "\u{301}"]);
        // GB9c: a conjunct joins consonants through a virama, only after a consonant.
        assert_eq!(cut("\u{915}\u{94d}\u{937}ि"), ["\u{915}\u{94d}\u{937}ि"]);
        assert_eq!(cut("\u{a0}\u{94d}\u{915}"), ["\u{a0}\u{94d}", "\u{915}"]);
        // Prepend joins what follows, but not a control.
        assert_eq!(cut("\u{600}1\u{600}\n"), ["\u{600}1", "\u{600}", "\n"]);
        assert_eq!(cut(""), Vec::<&str>::new());
    }
}
