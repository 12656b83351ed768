//! Arrow string arrays as documents, and the framed flat buffer of their ids.
//!
//! [`StringChunk`] is one Arrow `string` (32-bit offsets) or `large_string` (64-bit offsets)
//! array, given by its three buffers as pyarrow's `Array.buffers()` hands them over (validity
//! bitmap, offsets, UTF-8 data), its `offset` (a sliced array starts there) and its length.
//! [`documents`] checks those buffers (they come from Python, so they are untrusted: every
//! offset is checked against the data before a slice is made) and returns each row's bytes, or
//! None for a null row. The bytes are checked as UTF-8 by the caller, on the thread that
//! encodes them.
//!
//! [`Framing`] lays out the ids of many documents as one little-endian buffer of 2- or 4-byte
//! ids, with an optional id before (bos) and after (eos) each document, which is what the
//! dataset writers store; [`frame`] fills it.
//!
//! It does not: read Arrow's C data interface, handle other types (the Python side casts
//! binary and string views to strings first), or encode.

/// One Arrow string array, by its buffers.
pub struct StringChunk<'a> {
    /// The validity bitmap (bit i of byte i / 8, least significant first), or None: no nulls.
    pub validity: Option<&'a [u8]>,
    /// `length + 1` offsets (from `offset` on), little-endian i32 or i64.
    pub offsets: &'a [u8],
    /// The UTF-8 bytes the offsets point into.
    pub data: &'a [u8],
    /// 64-bit offsets (`large_string`).
    pub large: bool,
    /// The first row of this array in its buffers (pyarrow's `Array.offset`).
    pub offset: usize,
    /// The number of rows.
    pub length: usize,
}

/// Each row's bytes of every chunk, in order (None: a null row), or a message saying what is
/// wrong with the buffers.
pub fn documents<'a>(chunks: &[StringChunk<'a>]) -> Result<Vec<Option<&'a [u8]>>, String> {
    let mut rows = Vec::with_capacity(chunks.iter().map(|c| c.length).sum());
    for (n, chunk) in chunks.iter().enumerate() {
        let width = if chunk.large { 8 } else { 4 };
        let end_row = chunk
            .offset
            .checked_add(chunk.length)
            .ok_or_else(|| format!("array {n}: offset {} is too large", chunk.offset))?;
        if chunk.length == 0 {
            continue;
        }
        let needed = (end_row + 1).checked_mul(width);
        if needed.is_none_or(|needed| chunk.offsets.len() < needed) {
            return Err(format!(
                "array {n}: its offsets buffer holds {} bytes, fewer than {} rows from row {} need",
                chunk.offsets.len(),
                chunk.length,
                chunk.offset
            ));
        }
        if let Some(bits) = chunk.validity {
            if bits.len() < end_row.div_ceil(8) {
                return Err(format!(
                    "array {n}: its validity bitmap holds {} bytes, fewer than {end_row} rows need",
                    bits.len()
                ));
            }
        }
        let at = |row: usize| -> Result<usize, String> {
            let raw = &chunk.offsets[row * width..(row + 1) * width];
            let value = if chunk.large {
                i64::from_le_bytes(raw.try_into().expect("8 bytes"))
            } else {
                i32::from_le_bytes(raw.try_into().expect("4 bytes")) as i64
            };
            usize::try_from(value).map_err(|_| format!("array {n}: offset {value} is negative"))
        };
        let mut start = at(chunk.offset)?;
        for row in chunk.offset..end_row {
            let end = at(row + 1)?;
            if start > end || end > chunk.data.len() {
                return Err(format!(
                    "array {n}: row {} spans bytes {start}..{end} of a data buffer of {} bytes",
                    row - chunk.offset,
                    chunk.data.len()
                ));
            }
            let valid = chunk
                .validity
                .is_none_or(|bits| bits[row / 8] >> (row % 8) & 1 == 1);
            rows.push(valid.then(|| &chunk.data[start..end]));
            start = end;
        }
    }
    Ok(rows)
}

/// How the ids of documents are laid out in one buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Framing {
    /// Bytes per id: 2 or 4 (little-endian).
    pub width: usize,
    /// An id before each document.
    pub bos: Option<u32>,
    /// An id after each document.
    pub eos: Option<u32>,
    /// A document without ids gets no bos and eos either (Megatron's layout).
    pub empty_is_nothing: bool,
}

impl Framing {
    /// How many ids a document takes: None (a null row) takes none.
    pub fn length(&self, ids: Option<&[u32]>) -> usize {
        match ids {
            None => 0,
            Some([]) if self.empty_is_nothing => 0,
            Some(ids) => ids.len() + self.bos.is_some() as usize + self.eos.is_some() as usize,
        }
    }

    /// The first id that does not fit in `width` bytes, if any (bos and eos included).
    pub fn too_wide<'a>(&self, parts: impl Iterator<Item = &'a [u32]>) -> Option<u32> {
        if self.width >= 4 {
            return None;
        }
        let fits = |id: &u32| *id <= u16::MAX as u32;
        self.bos
            .iter()
            .chain(self.eos.iter())
            .find(|id| !fits(id))
            .copied()
            .or_else(|| {
                parts
                    .flat_map(|ids| ids.iter())
                    .find(|id| !fits(id))
                    .copied()
            })
    }
}

/// Write the documents' framed ids into `out` (exactly the sum of their [`Framing::length`]s
/// times the width, which the caller allocated; ids were checked by [`Framing::too_wide`]).
pub fn frame(framing: &Framing, parts: &[Option<Vec<u32>>], out: &mut [u8]) {
    let width = framing.width;
    let mut chunks = out.chunks_exact_mut(width);
    let mut put = |id: u32| {
        let chunk = chunks.next().expect("out has room for every framed id");
        chunk.copy_from_slice(&id.to_le_bytes()[..width]);
    };
    for part in parts {
        if framing.length(part.as_deref()) == 0 {
            continue;
        }
        let ids = part.as_deref().expect("a framed document is not null");
        if let Some(bos) = framing.bos {
            put(bos);
        }
        for &id in ids {
            put(id);
        }
        if let Some(eos) = framing.eos {
            put(eos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets32(values: &[i32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn offsets64(values: &[i64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn rows_of_plain_sliced_and_null_arrays() {
        let data = b"helloworld!";
        let offs = offsets32(&[0, 5, 10, 10, 11]);
        let big = offsets64(&[0, 5, 10, 10, 11]);
        let validity = [0b1011u8]; // row 2 is null
        let chunks = [
            StringChunk {
                validity: None,
                offsets: &offs,
                data,
                large: false,
                offset: 0,
                length: 2,
            },
            StringChunk {
                validity: Some(&validity),
                offsets: &big,
                data,
                large: true,
                offset: 1,
                length: 3,
            },
        ];
        let rows = documents(&chunks).unwrap();
        let expected: Vec<Option<&[u8]>> = vec![
            Some(b"hello"),
            Some(b"world"),
            Some(b"world"),
            None,
            Some(b"!"),
        ];
        assert_eq!(rows, expected);
    }

    #[test]
    fn bad_buffers_are_errors_not_slices() {
        let data = b"abc";
        let past_end = offsets32(&[0, 4]);
        let backwards = offsets32(&[2, 1]);
        let negative = offsets32(&[-1, 1]);
        let short = offsets32(&[0]);
        for (offsets, needle) in [
            (&past_end, "spans"),
            (&backwards, "spans"),
            (&negative, "negative"),
            (&short, "offsets buffer"),
        ] {
            let chunk = StringChunk {
                validity: None,
                offsets,
                data,
                large: false,
                offset: 0,
                length: 1,
            };
            let error = documents(&[chunk]).unwrap_err();
            assert!(error.contains(needle), "{error}");
        }
        let ok = offsets32(&[0, 1, 2, 3, 3, 3, 3, 3, 3, 3]);
        let chunk = StringChunk {
            validity: Some(&[0xff]),
            offsets: &ok,
            data,
            large: false,
            offset: 0,
            length: 9,
        };
        assert!(documents(&[chunk]).unwrap_err().contains("validity"));
    }

    #[test]
    fn framing_puts_bos_and_eos_and_skips_empty_when_asked() {
        let parts = vec![Some(vec![1, 2]), Some(vec![]), None, Some(vec![3])];
        let framing = Framing {
            width: 2,
            bos: Some(7),
            eos: Some(9),
            empty_is_nothing: true,
        };
        let lengths: Vec<usize> = parts.iter().map(|p| framing.length(p.as_deref())).collect();
        assert_eq!(lengths, [4, 0, 0, 3]);
        let mut out = vec![0u8; 7 * 2];
        frame(&framing, &parts, &mut out);
        let ids: Vec<u16> = out
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(ids, [7, 1, 2, 9, 7, 3, 9]);
        let keep_empty = Framing {
            empty_is_nothing: false,
            ..framing
        };
        assert_eq!(keep_empty.length(Some(&[])), 2);
        assert_eq!(keep_empty.length(None), 0);
        assert_eq!(
            framing.too_wide([&[1u32, 70000][..]].into_iter()),
            Some(70000)
        );
        let wide = Framing {
            width: 4,
            ..framing
        };
        assert_eq!(wide.too_wide([&[70000u32][..]].into_iter()), None);
    }
}
