//! Arrow string arrays as documents, and the framed flat buffer of their ids.
//!
//! [`StringChunk`] is one Arrow `string` (32-bit offsets) or `large_string` (64-bit offsets)
//! array, given by its three buffers as pyarrow's `Array.buffers()` hands them over (validity
//! bitmap, offsets, UTF-8 data), its `offset` (a sliced array starts there) and its length.
//! [`documents`] checks those buffers (they come from the caller, so they are untrusted: every
//! offset is checked against the data before a slice is made) and returns each row's bytes, or
//! None for a null row. The bytes are checked as UTF-8 by the caller, on the thread that
//! encodes them.
//!
//! [`Framing`] lays out the ids of many documents as one little-endian buffer of 2- or 4-byte
//! ids, with an optional id before (bos) and after (eos) each document, which is what the
//! dataset writers store. The rows are encoded in [`runs`] of consecutive rows, one thread per
//! run at a time: [`encode_run`] checks each row's UTF-8, encodes it into one scratch vector and
//! frames its ids straight into the run's buffer, so a thread reads its text in order (which
//! the hardware prefetcher follows) and nothing is allocated or handed between threads per row.
//!
//! It does not: read Arrow's C data interface, handle other types (the caller casts binary
//! and string views to strings first, as the Python package does), or encode (the caller
//! gives the encoder).

use std::ops::Range;

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
    // Room for the rows the offsets buffers can hold (a length is checked against its buffer
    // below, so a claimed length alone reserves nothing).
    let room = chunks
        .iter()
        .map(|c| c.length.min(c.offsets.len() / if c.large { 8 } else { 4 }))
        .fold(0, usize::saturating_add);
    let mut rows = Vec::with_capacity(room);
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

/// Text bytes per run of rows, at most: about 1.5 ms of encoding, so the threads of a batch
/// finish within that of each other, while the per-run cost (one hand-off, one buffer) stays
/// negligible.
pub const RUN_BYTES: usize = 64 * 1024;
/// Text bytes per run of rows, at least (when many threads share a small batch).
pub const MIN_RUN_BYTES: usize = 4 * 1024;

/// The run size for `total` text bytes on `threads` threads: at least 16 runs per thread, so
/// that the last run taken is a small part of any thread's share, within
/// [`MIN_RUN_BYTES`]..=[`RUN_BYTES`].
pub fn run_bytes(total: usize, threads: usize) -> usize {
    (total / (16 * threads.max(1))).clamp(MIN_RUN_BYTES, RUN_BYTES)
}

/// The rows cut into runs of consecutive rows of at least `target` text bytes each (the last
/// one may be shorter; a row longer than that is a run of its own), with each run's bytes.
pub fn runs(rows: &[Option<&[u8]>], target: usize) -> Vec<(Range<usize>, usize)> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, row) in rows.iter().enumerate() {
        bytes += row.map_or(0, <[u8]>::len);
        if bytes >= target.max(1) {
            runs.push((start..i + 1, bytes));
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < rows.len() {
        runs.push((start..rows.len(), bytes));
    }
    runs
}

/// The framed ids of one run of rows ([`encode_run`]).
#[derive(Debug, Default)]
pub struct FramedRun {
    /// The ids, framed, as little-endian `width`-byte ints.
    pub data: Vec<u8>,
    /// Each row's count of ids in `data` (0 for a null row).
    pub lengths: Vec<u64>,
    /// The first id of the run that does not fit in `width` bytes, if any (bos and eos are
    /// checked once by the caller, with [`Framing::too_wide`]).
    pub too_wide: Option<u32>,
}

/// Why a run failed: the first row whose bytes are not UTF-8 (row, first bad byte), or whose
/// encode failed.
#[derive(Debug)]
pub enum RunError<E> {
    Utf8(usize, usize),
    Encode(usize, E),
}

/// Encode rows `range` of `rows` (`bytes` of text, to size the buffer) with `encode` (which
/// appends a text's ids to the vector it is given) and frame them as `framing` says.
pub fn encode_run<E>(
    framing: &Framing,
    rows: &[Option<&[u8]>],
    range: Range<usize>,
    bytes: usize,
    mut encode: impl FnMut(&str, &mut Vec<u32>) -> Result<(), E>,
) -> Result<FramedRun, RunError<E>> {
    let width = framing.width;
    let mut run = FramedRun {
        // About one id per 3-4 bytes of text in most languages: rarely grown.
        data: Vec::with_capacity((bytes / 3 + 2 * range.len()) * width),
        lengths: Vec::with_capacity(range.len()),
        too_wide: None,
    };
    let mut ids = Vec::with_capacity(1024);
    // Each row is copied before it is checked and encoded: the buffers may be memory their
    // owner can still write (a Python bytearray under an array, written by a Python stage
    // of the encode or by another thread), and a row changed after its check could be UTF-8
    // only where it was checked, or leave ids in the piece cache under bytes it no longer
    // has. The copy is hot when the row is read again, so it costs no more than reading in
    // place.
    let mut row_copy = Vec::new();
    for i in range {
        let Some(row) = rows[i] else {
            run.lengths.push(0);
            continue;
        };
        row_copy.clear();
        row_copy.extend_from_slice(row);
        let text =
            std::str::from_utf8(&row_copy).map_err(|e| RunError::Utf8(i, e.valid_up_to()))?;
        ids.clear();
        encode(text, &mut ids).map_err(|e| RunError::Encode(i, e))?;
        let n = framing.length(Some(&ids));
        run.lengths.push(n as u64);
        if n == 0 {
            continue;
        }
        if width < 4 && run.too_wide.is_none() {
            run.too_wide = ids.iter().find(|&&id| id > u16::MAX as u32).copied();
        }
        let start = run.data.len();
        run.data.resize(start + n * width, 0);
        let out = &mut run.data[start..];
        let framed = framing.bos.iter().chain(&ids).chain(framing.eos.iter());
        if width == 2 {
            for (chunk, &id) in out.chunks_exact_mut(2).zip(framed) {
                chunk.copy_from_slice(&(id as u16).to_le_bytes());
            }
        } else {
            for (chunk, &id) in out.chunks_exact_mut(4).zip(framed) {
                chunk.copy_from_slice(&id.to_le_bytes());
            }
        }
    }
    Ok(run)
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
        // A length no buffer backs is refused before anything is reserved for it.
        for length in [1 << 46, usize::MAX / 2] {
            let claims = || StringChunk {
                validity: None,
                offsets: &ok,
                data,
                large: false,
                offset: 0,
                length,
            };
            let error = documents(&[claims(), claims()]).unwrap_err();
            assert!(error.contains("offsets buffer"), "{error}");
        }
    }

    /// A toy encoder: each byte is an id, "!" fails.
    fn bytes_as_ids(text: &str, out: &mut Vec<u32>) -> Result<(), String> {
        if text.contains('!') {
            return Err(format!("cannot encode {text:?}"));
        }
        out.extend(text.bytes().map(u32::from));
        Ok(())
    }

    fn framed(framing: &Framing, rows: &[Option<&[u8]>], target: usize) -> (Vec<u32>, Vec<u64>) {
        let mut ids = Vec::new();
        let mut lengths = Vec::new();
        for (range, bytes) in runs(rows, target) {
            let run = encode_run(framing, rows, range, bytes, bytes_as_ids).unwrap();
            let width = framing.width;
            ids.extend(run.data.chunks_exact(width).map(|c| {
                let mut id = [0u8; 4];
                id[..width].copy_from_slice(c);
                u32::from_le_bytes(id)
            }));
            lengths.extend(run.lengths);
        }
        (ids, lengths)
    }

    #[test]
    fn runs_cover_the_rows_in_order() {
        let rows: Vec<Option<&[u8]>> =
            vec![Some(b"ab"), None, Some(b"cdef"), Some(b""), Some(b"g")];
        let cut = |target| -> Vec<(Range<usize>, usize)> { runs(&rows, target) };
        assert_eq!(cut(3), [(0..3, 6), (3..5, 1)]);
        assert_eq!(cut(1), [(0..1, 2), (1..3, 4), (3..5, 1)]);
        assert_eq!(cut(100), [(0..5, 7)]);
        assert_eq!(runs(&[], 4), []);
        assert_eq!(run_bytes(4 << 20, 2), RUN_BYTES);
        assert_eq!(run_bytes(4 << 20, 32), 8 * 1024);
        assert_eq!(run_bytes(1000, 64), MIN_RUN_BYTES);
    }

    #[test]
    fn framing_puts_bos_and_eos_and_skips_empty_when_asked() {
        let rows: Vec<Option<&[u8]>> = vec![Some(b"\x01\x02"), Some(b""), None, Some(b"\x03")];
        let framing = Framing {
            width: 2,
            bos: Some(7),
            eos: Some(9),
            empty_is_nothing: true,
        };
        for target in [1, 2, 100] {
            let (ids, lengths) = framed(&framing, &rows, target);
            assert_eq!(lengths, [4, 0, 0, 3]);
            assert_eq!(ids, [7, 1, 2, 9, 7, 3, 9]);
        }
        let keep_empty = Framing {
            empty_is_nothing: false,
            width: 4,
            ..framing
        };
        let (ids, lengths) = framed(&keep_empty, &rows, 2);
        assert_eq!(lengths, [4, 2, 0, 3]);
        assert_eq!(ids, [7, 1, 2, 9, 7, 9, 7, 3, 9]);
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

    #[test]
    fn a_run_reports_its_first_bad_row_and_too_wide_id() {
        let framing = Framing {
            width: 2,
            ..Framing::default()
        };
        let wide = |text: &str, out: &mut Vec<u32>| -> Result<(), String> {
            out.extend(text.bytes().map(|b| u32::from(b) * 1000));
            Ok(())
        };
        let rows: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"B"), Some(b"c")];
        let run = encode_run(&framing, &rows, 0..3, 3, wide).unwrap();
        assert_eq!(run.too_wide, Some(97_000));
        assert_eq!(run.lengths, [1, 1, 1]);
        let rows: Vec<Option<&[u8]>> = vec![Some(b"ok"), Some(b"\xff"), Some(b"no!")];
        match encode_run(&framing, &rows, 0..3, 7, bytes_as_ids) {
            Err(RunError::Utf8(1, 0)) => {}
            other => panic!("{other:?}"),
        }
        match encode_run(&framing, &rows, 2..3, 3, bytes_as_ids) {
            Err(RunError::Encode(2, message)) => assert!(message.contains("no!")),
            other => panic!("{other:?}"),
        }
    }
}
