//! The GGUF container (llama.cpp's model format): how far its header and key-value metadata
//! go ([`scan_head`]), and the metadata itself ([`read_metadata`]), read from untrusted bytes
//! with every count and length checked against what remains before anything is allocated or
//! looped over. Where they find the bytes wrong they say only that (`None`,
//! [`HeadScan::Invalid`]): they are fast paths for the Python package's GGUF reader
//! (`formats/gguf/reader.py`), which then reads the same bytes and words the error, and its
//! tests hold the two to the same metadata and the same refusals.
//!
//! Layout (little-endian): magic `GGUF`, version u32 (2 or 3), tensor count u64, key-value
//! count u64, then per pair a key string, a value type u32 and the value. A string is a u64
//! byte length and UTF-8 bytes; an array is an element type u32, a count u64 and the elements.
//!
//! ```
//! use wordsplit::formats::gguf::{read_metadata, scan_head, HeadScan, Value};
//!
//! let mut data = b"GGUF".to_vec();
//! data.extend(3u32.to_le_bytes());
//! data.extend(0u64.to_le_bytes());
//! data.extend(1u64.to_le_bytes());
//! data.extend(4u64.to_le_bytes());
//! data.extend(b"name");
//! data.extend(8u32.to_le_bytes());
//! data.extend(4u64.to_le_bytes());
//! data.extend(b"tiny");
//! assert_eq!(scan_head(&data), HeadScan::End(data.len()));
//! assert_eq!(scan_head(&data[..30]), HeadScan::Need(32)); // the key ends at byte 32
//! assert_eq!(read_metadata(&data), Some(vec![("name", Value::Str("tiny"))]));
//! ```

use std::collections::HashSet;

use rustc_hash::{FxHashMap, FxHashSet};

const MAGIC: &[u8; 4] = b"GGUF";
const TYPE_BOOL: u32 = 7;
const TYPE_STRING: u32 = 8;
const TYPE_ARRAY: u32 = 9;
/// Arrays nest at most this deep (the Python reader's bound too; no real file nests at all).
const MAX_ARRAY_DEPTH: usize = 8;

/// The fewest bytes one value of `value_type` takes, or `None` for an unknown type.
fn min_size(value_type: u32) -> Option<u64> {
    Some(match value_type {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        TYPE_STRING => 8,
        TYPE_ARRAY => 12,
        _ => return None,
    })
}

/// How far the metadata of the bytes read so far goes.
#[derive(Debug, PartialEq, Eq)]
pub enum HeadScan {
    /// The header and metadata end at this offset.
    End(usize),
    /// The walk needs the file's first this many bytes (more than it was given).
    Need(u64),
    /// Not a GGUF whose metadata can be walked (a wrong magic or version, an unknown value
    /// type, an empty key, arrays nested too deep).
    Invalid,
}

/// Walk the header and metadata of `buf` (the start of a GGUF file) without decoding them.
pub fn scan_head(buf: &[u8]) -> HeadScan {
    let mut scan = Scan { buf, pos: 0 };
    match scan.walk() {
        Ok(()) => HeadScan::End(scan.pos as usize),
        Err(stop) => stop,
    }
}

struct Scan<'a> {
    buf: &'a [u8],
    pos: u64,
}

impl Scan<'_> {
    fn skip(&mut self, size: u64) -> Result<u64, HeadScan> {
        let end = self.pos.saturating_add(size);
        if end > self.buf.len() as u64 {
            return Err(HeadScan::Need(end));
        }
        let start = self.pos;
        self.pos = end;
        Ok(start)
    }

    fn u32(&mut self) -> Result<u32, HeadScan> {
        let at = self.skip(4)? as usize;
        Ok(u32::from_le_bytes(self.buf[at..at + 4].try_into().unwrap()))
    }

    fn u64(&mut self) -> Result<u64, HeadScan> {
        let at = self.skip(8)? as usize;
        Ok(u64::from_le_bytes(self.buf[at..at + 8].try_into().unwrap()))
    }

    fn walk(&mut self) -> Result<(), HeadScan> {
        let at = self.skip(4)? as usize;
        if &self.buf[at..at + 4] != MAGIC || !matches!(self.u32()?, 2 | 3) {
            return Err(HeadScan::Invalid);
        }
        self.u64()?; // the tensor count
        let kv_count = self.u64()?;
        for _ in 0..kv_count {
            let key_size = self.u64()?;
            if key_size == 0 {
                return Err(HeadScan::Invalid); // an empty key is an error; this also bounds the loop
            }
            self.skip(key_size)?;
            let value_type = self.u32()?;
            self.value(value_type, 0)?;
        }
        Ok(())
    }

    fn value(&mut self, value_type: u32, depth: usize) -> Result<(), HeadScan> {
        match value_type {
            TYPE_STRING => {
                let size = self.u64()?;
                self.skip(size)?;
            }
            TYPE_ARRAY if depth < MAX_ARRAY_DEPTH => {
                let element_type = self.u32()?;
                let count = self.u64()?;
                let size = min_size(element_type).ok_or(HeadScan::Invalid)?;
                // Checked before looping: a declared count the file cannot hold asks for
                // more bytes than it has, at once.
                let need = self.pos.saturating_add(count.saturating_mul(size));
                if need > self.buf.len() as u64 {
                    return Err(HeadScan::Need(need));
                }
                match element_type {
                    TYPE_STRING => {
                        for _ in 0..count {
                            let size = self.u64()?;
                            self.skip(size)?;
                        }
                    }
                    TYPE_ARRAY => {
                        for _ in 0..count {
                            self.value(TYPE_ARRAY, depth + 1)?;
                        }
                    }
                    _ => {
                        self.skip(count * size)?;
                    }
                }
            }
            TYPE_ARRAY => return Err(HeadScan::Invalid),
            other => {
                self.skip(min_size(other).ok_or(HeadScan::Invalid)?)?;
            }
        }
        Ok(())
    }
}

/// One metadata value, borrowing its strings from the file's bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// u8, u16, u32, u64.
    Unsigned(u64),
    /// i8, i16, i32, i64.
    Signed(i64),
    /// f32 (widened) and f64.
    Float(f64),
    Bool(bool),
    Str(&'a str),
    /// An array of strings (the token and merge lists: hundreds of thousands).
    Strings(Vec<&'a str>),
    /// An array of u8 or i8 (i8 as its two's complement byte): a SentencePiece character map.
    Bytes(&'a [u8]),
    /// Any other array.
    Array(Vec<Value<'a>>),
}

/// The key-value metadata of a GGUF v2/v3 file, in file order, or `None` when the bytes are
/// not well-formed GGUF metadata (truncated, invalid UTF-8, an unknown value type, an
/// invalid bool, an empty or repeated key, arrays nested too deep): the Python reader then
/// reads them and says what is wrong.
pub fn read_metadata(data: &[u8]) -> Option<Vec<(&str, Value<'_>)>> {
    let mut reader = Reader { data, pos: 0 };
    if reader.take(4)? != MAGIC || !matches!(reader.u32()?, 2 | 3) {
        return None;
    }
    reader.u64()?; // the tensor count: only the metadata is read
    let kv_count = reader.u64()?;
    // A key-value pair is at least an empty key (8), a value type (4) and a one-byte value.
    if kv_count > reader.remaining() / 13 {
        return None;
    }
    let mut keys = HashSet::new();
    let mut out = Vec::with_capacity(kv_count as usize);
    for _ in 0..kv_count {
        let key = reader.string()?;
        if key.is_empty() || !keys.insert(key) {
            return None;
        }
        let value_type = reader.u32()?;
        out.push((key, reader.value(value_type, 0)?));
    }
    Some(out)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> u64 {
        (self.data.len() - self.pos) as u64
    }

    fn take(&mut self, size: u64) -> Option<&'a [u8]> {
        if size > self.remaining() {
            return None;
        }
        let start = self.pos;
        self.pos += size as usize;
        Some(&self.data[start..self.pos])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn string(&mut self) -> Option<&'a str> {
        let size = self.u64()?;
        std::str::from_utf8(self.take(size)?).ok()
    }

    fn fixed(&mut self, value_type: u32) -> Option<Value<'a>> {
        let size = min_size(value_type)?;
        let bytes = self.take(size)?;
        let mut word = [0u8; 8];
        word[..bytes.len()].copy_from_slice(bytes);
        let raw = u64::from_le_bytes(word);
        Some(match value_type {
            0 | 2 | 4 | 10 => Value::Unsigned(raw),
            1 => Value::Signed(raw as u8 as i8 as i64),
            3 => Value::Signed(raw as u16 as i16 as i64),
            5 => Value::Signed(raw as u32 as i32 as i64),
            11 => Value::Signed(raw as i64),
            6 => Value::Float(f32::from_bits(raw as u32) as f64),
            12 => Value::Float(f64::from_bits(raw)),
            TYPE_BOOL => match raw {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                _ => return None, // GGUF bools are 0 or 1
            },
            _ => return None,
        })
    }

    fn value(&mut self, value_type: u32, depth: usize) -> Option<Value<'a>> {
        match value_type {
            TYPE_STRING => Some(Value::Str(self.string()?)),
            TYPE_ARRAY => self.array(depth),
            _ => self.fixed(value_type),
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value<'a>> {
        if depth >= MAX_ARRAY_DEPTH {
            return None;
        }
        let element_type = self.u32()?;
        let count = self.u64()?;
        // Checked before allocating or looping.
        if count > self.remaining() / min_size(element_type)? {
            return None;
        }
        let count = count as usize;
        Some(match element_type {
            0 | 1 => Value::Bytes(self.take(count as u64)?),
            TYPE_STRING => {
                let mut strings = Vec::with_capacity(count);
                for _ in 0..count {
                    strings.push(self.string()?);
                }
                Value::Strings(strings)
            }
            TYPE_ARRAY => {
                let mut items = Vec::with_capacity(count);
                for _ in 0..count {
                    items.push(self.array(depth + 1)?);
                }
                Value::Array(items)
            }
            _ => {
                let mut items = Vec::with_capacity(count);
                for _ in 0..count {
                    items.push(self.fixed(element_type)?);
                }
                Value::Array(items)
            }
        })
    }
}

/// llama.h `enum llama_token_type`: a NORMAL token (the only kind a merge may make).
const NORMAL: i64 = 1;

/// The merges of a `gemma4` GGUF vocabulary resolved to token ids (the same ids the Python
/// package's `read_gemma4_gguf` resolves): `pairs` holds `(left id, right id, rank)` of each
/// distinct pair at its first rank, in that order, and `newline_runs` the `(rank, left, right)`
/// of every merge of newlines.
#[derive(Debug, PartialEq, Eq)]
pub struct Gemma4Merges<'a> {
    pub pairs: Vec<(u32, u32, u32)>,
    pub newline_runs: Vec<(u32, &'a str, &'a str)>,
}

/// Resolve the `merges` of a `gemma4` vocabulary of `tokens` (unique, non-empty) with the
/// token `types` llama.cpp goes by, or `None` when a merge is refused (the Python reader then
/// words the error): no space after the first character, a merge that
/// makes a token that is not NORMAL, one that joins a newline to other text, one that uses a
/// byte token (`<0xNN>`), one of tokens that are not in the vocabulary or that make no token.
/// ([`Gemma4Table`] does it in parts, for threads.)
pub fn gemma4_merges<'a>(
    tokens: &[&str],
    types: &[i64],
    merges: &[&'a str],
) -> Option<Gemma4Merges<'a>> {
    let table = Gemma4Table::new(tokens, types)?;
    Some(Gemma4Table::combine(vec![table.resolve(merges, 0)?]))
}

/// One merge resolved: its rank, its tokens' ids, and its texts when it joins newlines.
pub type Resolved<'a> = (u32, u32, u32, Option<(&'a str, &'a str)>);

/// The token table of a `gemma4` vocabulary, for resolving its merges in parts.
pub struct Gemma4Table<'t> {
    ids: FxHashMap<&'t str, u32>,
    types: &'t [i64],
}

impl<'t> Gemma4Table<'t> {
    /// `None` when `tokens` and `types` differ in length.
    pub fn new(tokens: &[&'t str], types: &'t [i64]) -> Option<Self> {
        if tokens.len() != types.len() {
            return None;
        }
        let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
        ids.reserve(tokens.len());
        ids.extend(tokens.iter().enumerate().map(|(i, &text)| (text, i as u32)));
        Some(Self { ids, types })
    }

    /// The merges `merges` (whose first has the rank `first_rank`) resolved, in order; `None`
    /// when one is refused (see [`gemma4_merges`]).
    pub fn resolve<'a>(&self, merges: &[&'a str], first_rank: usize) -> Option<Vec<Resolved<'a>>> {
        let is_byte_token = |text: &str| {
            let b = text.as_bytes();
            b.len() == 6
                && b.starts_with(b"<0x")
                && b[5] == b'>'
                && b[3..5]
                    .iter()
                    .all(|c| matches!(c, b'0'..=b'9' | b'A'..=b'F'))
        };
        let table = &self.ids;
        let mut out = Vec::with_capacity(merges.len());
        let mut joined = String::new();
        for (k, &merge) in merges.iter().enumerate() {
            // llama.cpp's split: the first space after the first character.
            let first = merge.chars().next()?.len_utf8();
            let cut = first + merge[first..].find(' ')?;
            let (left, right) = (&merge[..cut], &merge[cut + 1..]);
            joined.clear();
            joined.push_str(left);
            joined.push_str(right);
            let made = table.get(joined.as_str());
            if made.is_some_and(|&id| self.types[id as usize] != NORMAL) {
                return None;
            }
            let mut newlines = None;
            if joined.contains('\n') {
                if joined.bytes().any(|b| b != b'\n') {
                    return None;
                }
                newlines = Some((left, right));
            }
            let byte_token = |text: &str| is_byte_token(text) && table.contains_key(text);
            if byte_token(left) || byte_token(right) {
                return None;
            }
            let (&l, &r) = (table.get(left)?, table.get(right)?);
            made?;
            out.push(((first_rank + k) as u32, l, r, newlines));
        }
        Some(out)
    }

    /// The [`Gemma4Merges`] of the resolved parts of the merges, in order.
    pub fn combine(parts: Vec<Vec<Resolved<'_>>>) -> Gemma4Merges<'_> {
        let total = parts.iter().map(Vec::len).sum();
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        seen.reserve(total);
        let mut pairs = Vec::with_capacity(total);
        let mut newline_runs = Vec::new();
        for (rank, l, r, newlines) in parts.into_iter().flatten() {
            if let Some((left, right)) = newlines {
                newline_runs.push((rank, left, right));
            }
            if seen.insert(u64::from(l) << 32 | u64::from(r)) {
                pairs.push((l, r, rank));
            }
        }
        Gemma4Merges {
            pairs,
            newline_runs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str) -> Vec<u8> {
        let mut out = (s.len() as u64).to_le_bytes().to_vec();
        out.extend(s.as_bytes());
        out
    }

    fn file(pairs: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
        let mut data = b"GGUF".to_vec();
        data.extend(3u32.to_le_bytes());
        data.extend(0u64.to_le_bytes());
        data.extend((pairs.len() as u64).to_le_bytes());
        for (key, value_type, value) in pairs {
            data.extend(string(key));
            data.extend(value_type.to_le_bytes());
            data.extend(value);
        }
        data
    }

    fn strings(items: &[&str]) -> Vec<u8> {
        let mut out = TYPE_STRING.to_le_bytes().to_vec();
        out.extend((items.len() as u64).to_le_bytes());
        for item in items {
            out.extend(string(item));
        }
        out
    }

    #[test]
    fn reads_values_of_every_kind() {
        let mut ints = 5u32.to_le_bytes().to_vec(); // i32
        ints.extend(2u64.to_le_bytes());
        ints.extend((-1i32).to_le_bytes());
        ints.extend(7i32.to_le_bytes());
        let mut bytes = 1u32.to_le_bytes().to_vec(); // i8
        bytes.extend(2u64.to_le_bytes());
        bytes.extend([0xFF, 7]);
        let data = file(&[
            ("f", TYPE_ARRAY, bytes),
            ("a", 4, 9u32.to_le_bytes().to_vec()),
            ("b", 6, 1.5f32.to_le_bytes().to_vec()),
            ("c", TYPE_BOOL, vec![1]),
            ("d", TYPE_ARRAY, strings(&["x y", "▁z"])),
            ("e", TYPE_ARRAY, ints),
        ]);
        let metadata = read_metadata(&data).unwrap();
        assert_eq!(
            metadata,
            vec![
                ("f", Value::Bytes(&[0xFF, 7])),
                ("a", Value::Unsigned(9)),
                ("b", Value::Float(1.5)),
                ("c", Value::Bool(true)),
                ("d", Value::Strings(vec!["x y", "▁z"])),
                ("e", Value::Array(vec![Value::Signed(-1), Value::Signed(7)])),
            ]
        );
        assert_eq!(scan_head(&data), HeadScan::End(data.len()));
    }

    #[test]
    fn refuses_what_the_reference_refuses() {
        let bad_bool = file(&[("a", TYPE_BOOL, vec![2])]);
        let repeated = file(&[("a", 4, vec![0; 4]), ("a", 4, vec![0; 4])]);
        let bad_utf8 = file(&[("a", TYPE_STRING, {
            let mut v = 1u64.to_le_bytes().to_vec();
            v.push(0xFF);
            v
        })]);
        let mut huge = TYPE_STRING.to_le_bytes().to_vec();
        huge.extend((1u64 << 60).to_le_bytes());
        let huge = file(&[("a", TYPE_ARRAY, huge)]);
        for data in [&bad_bool, &repeated, &bad_utf8, &huge] {
            assert_eq!(read_metadata(data), None);
        }
        assert!(matches!(scan_head(&huge), HeadScan::Need(n) if n > 1 << 60));
        assert_eq!(scan_head(b"GGUF\x01\0\0\0"), HeadScan::Invalid);
        assert_eq!(scan_head(b"GG"), HeadScan::Need(4));
    }

    #[test]
    fn resolves_gemma4_merges_as_the_reference() {
        let tokens = ["a", "b", "ab", "\n", "\n\n", "<0x41>", "<eos>"];
        let types = [1, 1, 1, 1, 1, 6, 3];
        let merges = ["a b", "\n \n", "a b"];
        let resolved = gemma4_merges(&tokens, &types, &merges).unwrap();
        assert_eq!(resolved.pairs, vec![(0, 1, 0), (3, 3, 1)]); // a repeated pair: its first rank
        assert_eq!(resolved.newline_runs, vec![(1, "\n", "\n")]);
        for bad in ["ab", "a <0x41>", "b a", "a \n", "a c"] {
            assert_eq!(gemma4_merges(&tokens, &types, &[bad]), None, "{bad}");
        }
        let parts = Gemma4Table::new(&tokens, &types).unwrap();
        let halves = vec![
            parts.resolve(&merges[..1], 0).unwrap(),
            parts.resolve(&merges[1..], 1).unwrap(),
        ];
        assert_eq!(Gemma4Table::combine(halves), resolved);
    }
}
