//! HF's `Precompiled` normalizer (`normalizers/precompiled.rs` in HF tokenizers, on the crate
//! `spm_precompiled`), as the Python package's `hf_changes` runs it: the text is cut into
//! extended grapheme clusters ([`graphemes`](super::graphemes)); a cluster of more than one
//! character and fewer than [`HF_GRAPHEME_BYTES`] UTF-8 bytes that starts with a key is replaced
//! as a whole by the output of the *shortest* such key (HF's `transform` takes the first result
//! of the prefix search, which may leave the rest of the cluster out); any other cluster is
//! looked up a character at a time, each character that is a key replaced by its output. Each
//! replacement is recorded as HF's `replace` records it ([`changes`]), which the alignment of
//! [`UnicodeProgram`](super::unicode_program::UnicodeProgram) reads.
//!
//! ```
//! use wordsplit::normalizers::charsmap::CharsMap;
//! use wordsplit::normalizers::charsmap_build::compile;
//! use wordsplit::normalizers::precompiled::normalize;
//! let map = CharsMap::parse(&compile(&[("Ａ", "A"), ("e\u{301}", "é"), ("①", "1")])).unwrap();
//! assert_eq!(normalize(&map, "Ａe\u{301}①x"), Some("Aé1x".to_owned()));
//! assert_eq!(normalize(&map, "plain"), None);
//! ```

use std::sync::OnceLock;

use super::charsmap::{CharsMap, BMP};
use super::grapheme_classes;
use super::graphemes::graphemes;

/// HF looks a whole grapheme cluster up only when it has fewer UTF-8 bytes than this.
pub const HF_GRAPHEME_BYTES: usize = 6;

/// Whether no key can start in `text` (then HF leaves it as it is).
fn untouched(map: &CharsMap, text: &str) -> bool {
    !text.bytes().any(|b| map.starts_with_byte(b))
}

/// Calls `each` with each piece of HF's output: `(piece, Some(output), length in chars)` for
/// a replacement, `(piece, None, _)` for characters kept as they are.
///
/// An ASCII character between two ASCII characters (the text's ends count as such), other
/// than either half of a CR LF, is a cluster of its own: no rule of UAX #29 joins it to a
/// neighbour (ASCII has no Extend, ZWJ, SpacingMark, Prepend, Hangul, regional indicator or
/// pictographic character), and no rule looks back or ahead past it. So such characters are
/// looked up a byte at a time, those no key starts passed on in whole stretches, and only the
/// stretches between them are cut into clusters (each alone: it starts and ends at a cluster
/// boundary that no context moves). Prose is mostly such characters; cutting all of it into
/// clusters took three fifths of an encode of T5's files.
fn run(map: &CharsMap, text: &str, mut each: impl FnMut(&str, Option<&str>, usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let alone = |k: usize| {
        let b = bytes[k];
        b < 0x80
            && (k + 1 == n || bytes[k + 1] < 0x80 && !(b == b'\r' && bytes[k + 1] == b'\n'))
            && (k == 0 || bytes[k - 1] < 0x80 && !(bytes[k - 1] == b'\r' && b == b'\n'))
    };
    let (first, span) = map.plain_ascii();
    let plain = |b: u8| b.wrapping_sub(first) <= span;
    let mut at = 0;
    while at < n {
        let start = at;
        if alone(at) {
            let mut kept = at;
            loop {
                // The common case in a tight loop: an ASCII character, not CR, that is no
                // key alone, before another ASCII character (its own predecessor was checked,
                // as this character or by `alone`) is alone, so its lookup is its own, and
                // it is kept. First 16 at a time where they are all of the map's plain
                // ASCII (a test the compiler makes one vector compare), then one at a time.
                while at + 16 < n {
                    let chunk = &bytes[at..at + 16];
                    if !(chunk.iter().fold(true, |all, &b| all & plain(b)) && bytes[at + 16] < 0x80)
                    {
                        break;
                    }
                    at += 16;
                }
                while at + 1 < n {
                    let (b, next) = (bytes[at], bytes[at + 1]);
                    if (b | next) >= 0x80 || b == b'\r' || map.is_byte_key(b) {
                        break;
                    }
                    at += 1;
                }
                if at >= n || !alone(at) {
                    break;
                }
                if map.is_byte_key(bytes[at]) {
                    if kept < at {
                        each(&text[kept..at], None, at - kept);
                    }
                    let one = &text[at..at + 1];
                    each(one, map.get(one), 1);
                    kept = at + 1;
                }
                at += 1;
            }
            if kept < at {
                each(&text[kept..at], None, at - kept);
            }
        } else {
            // (`at` only stops at an ASCII byte, a character boundary)
            while at < n && !alone(at) {
                at += 1;
            }
            clusters(map, &text[start..at], &mut each);
        }
    }
}

/// [`run`] of a stretch cut into clusters (see the module docs).
///
/// A character whose every grapheme property is the default (Grapheme_Cluster_Break Other,
/// not Extended_Pictographic, no Indic_Conjunct_Break: [`other_char`]) followed by such a
/// character or by ASCII (or by the stretch's end, which an alone ASCII character or the
/// text's end follows) is a cluster of its own when one starts at it: no rule of UAX #29
/// joins it to what follows (that is not Extend, ZWJ or SpacingMark), and as the core of a
/// cluster it takes nothing more (it is no Prepend, Hangul jamo, regional indicator,
/// pictograph or conjunct consonant). Most letters of most scripts are such characters, so
/// those runs are looked up a character at a time, the character's bit in the map
/// ([`CharsMap::is_char_key`]) saying whether it is a key, kept characters passed on in whole
/// stretches; only the other characters' clusters are cut by [`graphemes`] (a binary search
/// of the property tables per rule a character is tried against), from the boundary reached.
fn clusters(map: &CharsMap, text: &str, each: &mut impl FnMut(&str, Option<&str>, usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let others = other_chars();
    let (mut at, mut kept, mut kept_chars) = (0, 0, 0);
    // `at` is where a cluster starts; `kept..at` the characters kept since the last piece.
    while at < n {
        if let Some((cp, width)) = other_char(bytes, at, others) {
            let next = at + width;
            if next == n || bytes[next] < 0x80 || other_char(bytes, next, others).is_some() {
                if (cp < 0x80 && map.is_byte_key(cp as u8)) || (cp >= 0x80 && map.is_char_key(cp)) {
                    if kept < at {
                        each(&text[kept..at], None, kept_chars);
                    }
                    let one = &text[at..next];
                    each(one, map.get(one), 1);
                    (kept, kept_chars) = (next, 0);
                } else {
                    kept_chars += 1;
                }
                at = next;
                continue;
            }
        }
        if kept < at {
            each(&text[kept..at], None, kept_chars);
        }
        let cluster = graphemes(&text[at..]).next().unwrap_or(&text[at..]);
        cluster_pieces(map, cluster, each);
        at += cluster.len();
        (kept, kept_chars) = (at, 0);
    }
    if kept < at {
        each(&text[kept..at], None, kept_chars);
    }
}

/// [`run`] of one grapheme cluster (see the module docs).
fn cluster_pieces(map: &CharsMap, cluster: &str, each: &mut impl FnMut(&str, Option<&str>, usize)) {
    let mut chars = cluster.chars();
    let (first, second) = (chars.next(), chars.next());
    if second.is_some() && cluster.len() < HF_GRAPHEME_BYTES {
        if let Some((_, out)) = map.shortest(cluster.as_bytes()) {
            each(cluster, Some(out), cluster.chars().count());
            return;
        }
    }
    if second.is_none()
        && first.is_some_and(|c| c.is_ascii())
        && !map.starts_with_byte(cluster.as_bytes()[0])
    {
        each(cluster, None, 1);
        return;
    }
    for (i, c) in cluster.char_indices() {
        let one = &cluster[i..i + c.len_utf8()];
        each(one, map.get(one), 1);
    }
}

/// The code point and UTF-8 width of the character at `at` (a character boundary of
/// `bytes`, UTF-8) when it is a printable ASCII character or a character of the Basic
/// Multilingual Plane whose grapheme properties are all the default (`others`, a bit per
/// such character: [`other_chars`]).
#[inline(always)]
fn other_char(bytes: &[u8], at: usize, others: &[u64]) -> Option<(u32, usize)> {
    let b = bytes[at];
    let (cp, width) = if b < 0x80 {
        return (0x20..0x7F).contains(&b).then_some((u32::from(b), 1));
    } else if b < 0xE0 {
        (
            u32::from(b & 0x1F) << 6 | u32::from(bytes[at + 1] & 0x3F),
            2,
        )
    } else if b < 0xF0 {
        let (b1, b2) = (bytes[at + 1], bytes[at + 2]);
        (
            u32::from(b & 0x0F) << 12 | u32::from(b1 & 0x3F) << 6 | u32::from(b2 & 0x3F),
            3,
        )
    } else {
        return None;
    };
    // SAFETY: `cp` is below 0x10000 (two or three UTF-8 bytes), and `others` has a bit for
    // each such code point.
    let word = unsafe { *others.get_unchecked(cp as usize / 64) };
    (word >> (cp % 64) & 1 == 1).then_some((cp, width))
}

/// A bit per code point of the Basic Multilingual Plane: whether its class in the grapheme
/// tables is 0 (Grapheme_Cluster_Break Other, not Extended_Pictographic, no
/// Indic_Conjunct_Break), made once from the tables' runs.
fn other_chars() -> &'static [u64] {
    static BITS: OnceLock<Vec<u64>> = OnceLock::new();
    BITS.get_or_init(|| {
        let mut bits = vec![u64::MAX; BMP / 64];
        for &(first, last, _) in grapheme_classes::RUNS {
            for cp in first as usize..=(last as usize).min(BMP - 1) {
                bits[cp / 64] &= !(1 << (cp % 64));
            }
        }
        bits
    })
}

/// HF's `Precompiled` of `text`, or None when no rule applies.
pub fn normalize(map: &CharsMap, text: &str) -> Option<String> {
    if untouched(map, text) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut modified = false;
    run(map, text, |piece, output, _| match output {
        Some(output) => {
            out.push_str(output);
            modified = true;
        }
        None => out.push_str(piece),
    });
    modified.then_some(out)
}

/// HF's `Precompiled` of `text` as `(character, change)` pairs, HF's transformations (a
/// character replacing one: 0; inserted: +1; replacing one and removing `n` after it: `-n`).
pub fn changes(map: &CharsMap, text: &str) -> Vec<(char, isize)> {
    if untouched(map, text) {
        return text.chars().map(|c| (c, 0)).collect();
    }
    let mut changes: Vec<(char, isize)> = Vec::with_capacity(text.len());
    run(map, text, |piece, output, old_length| match output {
        Some(output) => replace(&mut changes, old_length, output),
        None => changes.extend(piece.chars().map(|c| (c, 0))),
    });
    changes
}

/// HF's `replace` (`normalizers/precompiled.rs`): `new` replaces `old_length` characters; with
/// more characters, the last extra ones are insertions (+1); with fewer, the last change so
/// far (an earlier character's, when `new` is empty) removes the rest.
fn replace(changes: &mut Vec<(char, isize)>, old_length: usize, new: &str) {
    let before = changes.len();
    changes.extend(new.chars().map(|c| (c, 0)));
    let added = changes.len() - before;
    if added > old_length {
        let inserted = added - old_length;
        let n = changes.len();
        for change in &mut changes[n - inserted..] {
            change.1 = 1;
        }
    } else if added < old_length {
        if let Some(last) = changes.last_mut() {
            last.1 -= (old_length - added) as isize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::charsmap_build::compile;

    fn small_map() -> CharsMap {
        let rules = [
            ("Ａ", "A"),
            ("e\u{301}", "é"),
            ("①", "1"),
            ("ﬀ", "ff"),
            ("\u{200b}", ""),
        ];
        CharsMap::parse(&compile(&rules)).unwrap()
    }

    #[test]
    fn clusters_are_replaced_whole_when_short_and_a_key_starts_them() {
        let map = small_map();
        // e + U+0301 is one cluster of 3 bytes: its key replaces it whole.
        assert_eq!(changes(&map, "e\u{301}"), vec![('é', -1)]);
        // Ａ is a key, one character: replaced; x stays.
        assert_eq!(changes(&map, "Ａx"), vec![('A', 0), ('x', 0)]);
        // ① grows to nothing longer; "ﬀ" → "ff" inserts one.
        assert_eq!(changes(&map, "ﬀ"), vec![('f', 0), ('f', 1)]);
        assert_eq!(normalize(&map, "ﬀ①"), Some("ff1".into()));
        // A removal at the very start records nothing; later it shortens the last change.
        assert_eq!(changes(&map, "\u{200b}a"), vec![('a', 0)]);
        assert_eq!(changes(&map, "a\u{200b}"), vec![('a', -1)]);
    }

    #[test]
    fn ascii_stretches_are_cut_as_the_clusters_cut_them() {
        // Keys that start with ASCII (CR LF, controls, letters, a letter with its mark), and
        // text where ASCII meets marks, ZWJ sequences, regional indicators, Hangul and CR LF.
        let rules = [
            ("\r", "R"),
            ("\r\n", "N"),
            ("\n", " "),
            ("\t", " "),
            ("a", "A"),
            ("e\u{301}", "é"),
            ("ab", "X"),
            ("Ａ", "A"),
            ("\u{200b}", ""),
            ("ж", "Ж"),
            ("\u{915}\u{94d}", "K"),
        ];
        let map = CharsMap::parse(&compile(&rules)).unwrap();
        // (the reference: every cluster cut by `graphemes`, each looked up alone)
        let by_clusters = |text: &str| {
            let mut out = Vec::new();
            for cluster in graphemes(text) {
                cluster_pieces(&map, cluster, &mut |piece, output, length| {
                    out.push((piece.to_owned(), output.map(str::to_owned), length));
                });
            }
            out
        };
        let pieces = |text: &str| {
            let mut out: Vec<(String, Option<String>, usize)> = Vec::new();
            run(&map, text, |piece, output, length| {
                // (kept stretches come whole here, a character at a time from the clusters)
                match output {
                    None => out.extend(piece.chars().map(|c| (c.to_string(), None, 1))),
                    Some(o) => out.push((piece.to_owned(), Some(o.to_owned()), length)),
                }
            });
            out
        };
        let alphabet = [
            "a",
            "b",
            "x",
            " ",
            "\r",
            "\n",
            "\r\n",
            "\t",
            "e",
            "\u{301}",
            "\u{200d}",
            "😀",
            "\u{1f1eb}",
            "\u{1f1f7}",
            "\u{1100}",
            "\u{1161}",
            "\u{600}",
            "\u{903}",
            "Ａ",
            "\u{200b}",
            "é",
            "ab",
            "ж",
            "д",
            "中",
            "\u{915}",
            "\u{94d}",
            "\u{a9}",
            "\u{7f}",
            "\u{1f}",
            "\u{ac00}",
            "\u{11a8}",
        ];
        // (and runs of plain ASCII long enough for the loop's 16 bytes at a time, which
        // end at each kind of byte it stops at)
        let mut long = alphabet.to_vec();
        long.extend([
            "PLAIN TEXT, 17 BYTES",
            "~ AND MORE ASCII TEXT!",
            "plain text",
        ]);
        let texts = crate::testing::texts(5, &alphabet, 2000, 12);
        for text in texts
            .into_iter()
            .chain(crate::testing::texts(6, &long, 2000, 16))
        {
            let expected: Vec<_> = by_clusters(&text)
                .into_iter()
                .flat_map(|(piece, output, length)| match output {
                    None => piece.chars().map(|c| (c.to_string(), None, 1)).collect(),
                    Some(o) => vec![(piece, Some(o), length)],
                })
                .collect();
            assert_eq!(pieces(&text), expected, "{text:?}");
        }
    }
}
