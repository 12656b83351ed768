//! SentencePiece's precompiled character maps ([`CharsMap`]): the format, checked whole when
//! read, and the lookups [`sentencepiece`](super::sentencepiece) and
//! [`precompiled`](super::precompiled) run a map with.
//!
//! A map is `<trie size: u32 LE><a Darts double-array trie: u32 LE units><outputs>`: the trie's
//! keys are the texts a rule replaces, each leaf's value the offset of its output in the outputs,
//! a NUL-terminated UTF-8 string (`normalizer.cc`'s `DecodePrecompiledCharsMap`; HF's crate
//! `spm_precompiled`). A unit is decoded as Darts does: `has_leaf` is bit 8, `value` the low 31
//! bits, `label` bit 31 and the low byte, `offset` `(unit >> 10) << ((unit & 0x200) >> 6)`; the
//! child of a node whose children start at `base` for byte `c` (1 to 255) is the unit at
//! `base ^ c` when its label is `c`.
//!
//! [`CharsMap::parse`] walks every key once, as the Python package's `read_charsmap` does, and
//! refuses what that refuses (sizes that do not add up, an index or an output outside the map,
//! a key or an output that is not whole UTF-8 characters, links that loop, more than 32 keys
//! that are prefixes of one text): a map it accepts is one whose lookups stay inside it, and
//! whose keys and outputs are whole characters.
//!
//! ```
//! use wordsplit::normalizers::charsmap::CharsMap;
//! assert!(CharsMap::parse(&[1, 2]).is_err());
//! ```

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::error::Error;

/// sentencepiece keeps at most this many prefix matches (`kMaxTrieResultsSize`).
const MAX_PREFIX_KEYS: usize = 32;
/// How many key prefixes a map may have per unit of its trie (nmt_nfkc has 6), and how long a
/// key may be: past these the trie's links loop.
const MAX_NODES_PER_UNIT: usize = 64;
const MAX_KEY_BYTES: usize = 1024;
/// The code points of the Basic Multilingual Plane, which [`CharsMap::is_char_key`] answers
/// for.
pub const BMP: usize = 0x1_0000;

/// The rules of a precompiled character map: its trie, and each leaf value's output.
pub struct CharsMap {
    units: Vec<u32>,
    /// Where the root's children start.
    root: usize,
    /// Each leaf value → its output's range in `arena`.
    outputs: FxHashMap<u32, (u32, u32)>,
    arena: String,
    /// Whether some key starts with this byte (text between such bytes stays as it is).
    starts: [bool; 256],
    /// Whether this byte alone is a key.
    byte_keys: [bool; 256],
    /// A bit per character of the Basic Multilingual Plane: whether it alone is a key
    /// ([`Self::is_char_key`]).
    char_keys: Vec<u64>,
    /// The widest range of ASCII bytes, CR not among them, of which none is a key alone:
    /// its first byte and its length less one ([`Self::plain_ascii`]).
    plain: (u8, u8),
    keys: usize,
}

/// [`CharsMap::plain_ascii`] of a map whose one-byte keys are `byte_keys`.
fn plain_range(byte_keys: &[bool; 256]) -> (u8, u8) {
    // (the bytes that end a run: the ASCII keys, CR, and the end of ASCII)
    let ends = (byte_keys[..0x80].iter().enumerate())
        .filter(|&(b, &key)| key || b == usize::from(b'\r'))
        .map(|(b, _)| b)
        .chain([0x80]);
    let (mut best, mut run_start) = ((0, 0), 0);
    for end in ends {
        if end - run_start > best.1 {
            best = (run_start, end - run_start);
        }
        run_start = end + 1;
    }
    // (never empty: NUL is no key, a label is 1 to 255)
    (best.0 as u8, best.1.saturating_sub(1) as u8)
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
}

fn has_leaf(unit: u32) -> bool {
    unit >> 8 & 1 == 1
}

impl CharsMap {
    /// The map of `data` (see the module docs).
    ///
    /// Errors: [`Error::VocabFormat`] for a malformed map.
    pub fn parse(data: &[u8]) -> Result<Self, Error> {
        let bad = |why: String| {
            Error::VocabFormat(format!(
                "the character map: a malformed precompiled character map ({why})"
            ))
        };
        if data.len() < 4 {
            return Err(Error::VocabFormat(format!(
                "the character map: a precompiled character map starts with its trie's size \
                 (4 bytes); this one has {} bytes",
                data.len()
            )));
        }
        let trie_size = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize;
        if trie_size < 4 || !trie_size.is_multiple_of(4) || trie_size > data.len() - 4 {
            return Err(bad(format!(
                "a trie of {trie_size} bytes in a map of {}",
                data.len()
            )));
        }
        let units: Vec<u32> = data[4..4 + trie_size]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let raw_outputs = &data[4 + trie_size..];
        let mut map = CharsMap {
            root: offset(units[0]),
            units,
            outputs: FxHashMap::default(),
            arena: String::new(),
            starts: [false; 256],
            byte_keys: [false; 256],
            char_keys: vec![0; BMP / 64],
            plain: (0, 0),
            keys: 0,
        };
        // The units that are some node's child: label c in 1..=255 (bit 31 clear) at i, child
        // of the node whose children start at i ^ c; sorted by that node.
        let mut children: Vec<(usize, u8)> = (map.units.iter().enumerate())
            .filter_map(|(i, &unit)| {
                let label = unit & 0x8000_00FF;
                (1..256)
                    .contains(&label)
                    .then_some((i ^ label as usize, label as u8))
            })
            .collect();
        children.sort_unstable();
        // Depth-first over the keys: (where a node's children start, its key, keys above it).
        let mut stack = vec![(map.root, Vec::<u8>::new(), 0usize)];
        let mut budget = MAX_NODES_PER_UNIT * map.units.len();
        while let Some((base, key, depth)) = stack.pop() {
            if budget == 0 || key.len() > MAX_KEY_BYTES {
                return Err(bad("its links loop".into()));
            }
            budget -= 1;
            let first = children.partition_point(|&(b, _)| b < base);
            for &(_, label) in children[first..].iter().take_while(|&&(b, _)| b == base) {
                let Some((child_base, leaf)) = map.child(base, label) else {
                    continue;
                };
                let mut below = key.clone();
                below.push(label);
                let mut count = depth;
                if leaf {
                    let Some(&value_unit) = map.units.get(child_base) else {
                        return Err(bad(format!(
                            "the value of key {below:?} is outside the trie"
                        )));
                    };
                    if std::str::from_utf8(&below).is_err() {
                        return Err(bad(format!(
                            "the key {below:?} is not whole UTF-8 characters"
                        )));
                    }
                    map.add_output(raw_outputs, value_unit & 0x7FFF_FFFF, &bad)?;
                    map.keys += 1;
                    map.note_char_key(&below);
                    count += 1;
                    if count > MAX_PREFIX_KEYS {
                        return Err(bad(format!(
                            "more than {MAX_PREFIX_KEYS} keys are prefixes of {below:?}"
                        )));
                    }
                }
                if below.len() == 1 {
                    map.starts[usize::from(label)] = true;
                    map.byte_keys[usize::from(label)] = leaf;
                }
                stack.push((child_base, below, count));
            }
        }
        map.plain = plain_range(&map.byte_keys);
        Ok(map)
    }

    /// The map of `charsmap` (base64, as a stage's `charsmap` holds it), read once for the
    /// last few maps asked for (the bindings ask whether a stage is native, then make it).
    ///
    /// Errors: [`Error::VocabFormat`] for a malformed map or base64.
    pub fn of_base64(charsmap: &str) -> Result<Arc<Self>, Error> {
        static CACHE: Mutex<Vec<(String, Arc<CharsMap>)>> = Mutex::new(Vec::new());
        if let Ok(cache) = CACHE.lock() {
            if let Some((_, map)) = cache.iter().find(|(text, _)| text == charsmap) {
                return Ok(map.clone());
            }
        }
        let data = crate::formats::tiktoken::base64_decode(charsmap.as_bytes())
            .ok_or_else(|| Error::VocabFormat("the character map: not base64".into()))?;
        let map = Arc::new(Self::parse(&data)?);
        if let Ok(mut cache) = CACHE.lock() {
            if cache.len() >= 8 {
                cache.remove(0);
            }
            cache.push((charsmap.to_owned(), map.clone()));
        }
        Ok(map)
    }

    /// Records `key` (whole UTF-8 characters) in [`Self::char_keys`] when it is one
    /// character of the Basic Multilingual Plane.
    fn note_char_key(&mut self, key: &[u8]) {
        let mut chars = std::str::from_utf8(key).into_iter().flat_map(str::chars);
        if let (Some(c), None) = (chars.next(), chars.next()) {
            let cp = c as usize;
            if cp < BMP {
                self.char_keys[cp / 64] |= 1 << (cp % 64);
            }
        }
    }

    /// The child of the node whose children start at `base` for `label`: where its own
    /// children start, and whether it ends a key.
    #[inline]
    fn child(&self, base: usize, label: u8) -> Option<(usize, bool)> {
        let i = base ^ usize::from(label);
        let unit = *self.units.get(i)?;
        (unit & 0x8000_00FF == u32::from(label)).then(|| (i ^ offset(unit), has_leaf(unit)))
    }

    /// Records the output of a leaf's value `start` (checked: inside the outputs, UTF-8).
    fn add_output(
        &mut self,
        raw: &[u8],
        start: u32,
        bad: &dyn Fn(String) -> Error,
    ) -> Result<(), Error> {
        if self.outputs.contains_key(&start) {
            return Ok(());
        }
        let at = start as usize;
        if at >= raw.len() {
            return Err(bad(format!(
                "an output at {at}, past the {} bytes of outputs",
                raw.len()
            )));
        }
        // (the end of the map ends an output too, as HF reads it)
        let end = memchr::memchr(0, &raw[at..]).map_or(raw.len(), |n| at + n);
        let text = std::str::from_utf8(&raw[at..end])
            .map_err(|_| bad(format!("the output at {at} is not UTF-8")))?;
        let first = self.arena.len() as u32;
        self.arena.push_str(text);
        self.outputs.insert(start, (first, self.arena.len() as u32));
        Ok(())
    }

    /// The output of the leaf whose children start at `base`.
    fn output_at(&self, base: usize) -> &str {
        let value = self.units.get(base).map_or(0, |unit| unit & 0x7FFF_FFFF);
        self.outputs
            .get(&value)
            .and_then(|&(a, b)| self.arena.get(a as usize..b as usize))
            .unwrap_or("")
    }

    /// How many keys (rules) the map has.
    pub fn len(&self) -> usize {
        self.keys
    }

    /// Whether the map has no rules.
    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    /// Whether some key starts with the byte `b`.
    #[inline]
    pub fn starts_with_byte(&self, b: u8) -> bool {
        self.starts[usize::from(b)]
    }

    /// Whether the byte `b` alone is a key (of a text, the one-byte prefix is looked up).
    #[inline]
    pub fn is_byte_key(&self, b: u8) -> bool {
        self.byte_keys[usize::from(b)]
    }

    /// Whether the character `cp`, of the Basic Multilingual Plane (below 0x10000) and not
    /// NUL, alone is a key: one load, where [`Self::get`] walks the trie (the lookup of a
    /// character that is a grapheme cluster of its own).
    #[inline(always)]
    pub fn is_char_key(&self, cp: u32) -> bool {
        debug_assert!((cp as usize) < BMP);
        // SAFETY: `char_keys` has a bit per code point below `BMP`, and `cp` is below it.
        let word = unsafe { *self.char_keys.get_unchecked(cp as usize / 64) };
        word >> (cp % 64) & 1 == 1
    }

    /// The widest range of ASCII bytes, CR not among them, of which none is a key alone, as
    /// `(first, length - 1)`: a byte `b` is in it when `b.wrapping_sub(first) <= length - 1`,
    /// a test of 16 bytes at once (nmt_nfkc's: the printable ASCII and the space).
    #[inline]
    pub fn plain_ascii(&self) -> (u8, u8) {
        self.plain
    }

    /// Each key that is a prefix of `bytes`, shortest first, with its output: `(key length in
    /// bytes, output)` (Darts' `commonPrefixSearch`).
    pub fn prefixes<'b>(&self, bytes: &'b [u8]) -> Prefixes<'_, 'b> {
        Prefixes {
            map: self,
            bytes,
            at: 0,
            base: Some(self.root),
        }
    }

    /// The longest key that is a prefix of `bytes`, and its output (sentencepiece's choice).
    pub fn longest(&self, bytes: &[u8]) -> Option<(usize, &str)> {
        self.prefixes(bytes).last()
    }

    /// The shortest key that is a prefix of `bytes`, and its output (HF's `transform`).
    pub fn shortest(&self, bytes: &[u8]) -> Option<(usize, &str)> {
        self.prefixes(bytes).next()
    }

    /// The output of the key `key` exactly.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.prefixes(key.as_bytes())
            .find(|&(n, _)| n == key.len())
            .map(|(_, out)| out)
    }
}

/// The keys that are prefixes of a text ([`CharsMap::prefixes`]).
pub struct Prefixes<'m, 'b> {
    map: &'m CharsMap,
    bytes: &'b [u8],
    at: usize,
    /// Where the children of the node of `bytes[..at]` start; None past the last node.
    base: Option<usize>,
}

impl<'m> Iterator for Prefixes<'m, '_> {
    type Item = (usize, &'m str);

    fn next(&mut self) -> Option<Self::Item> {
        while let (Some(base), Some(&b)) = (self.base, self.bytes.get(self.at)) {
            self.at += 1;
            self.base = None;
            let (child, leaf) = self.map.child(base, b)?;
            self.base = Some(child);
            if leaf {
                return Some((self.at, self.map.output_at(child)));
            }
        }
        None
    }
}

#[cfg(test)]
#[path = "charsmap_tests.rs"]
mod tests;
