//! A buffer of documents read from a file (one per line, or between occurrences of another
//! separator) encoded in one call: the documents found by the core (`wordsplit::documents`),
//! encoded on native threads and framed into one flat buffer as Arrow rows are
//! ([`crate::arrow::encode_rows`]). No Python object is made per document.

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use wordsplit::SpecialPolicy;

use crate::arrow::{encode_rows, joined_data};
use crate::errors::ws_error;
use crate::pipeline::PyPipeline;

/// A chunk of the documents of `buffer`, cut at `separator`, up to the first whose end is
/// `limit` bytes or more into it (see `wordsplit::documents::split`: none when no document
/// reaches `limit` and this is not the `last` buffer), encoded under `policy`:
/// `(consumed, data, ends)`, `consumed` the bytes of `buffer` they take (separators
/// included), `data` their ids as little-endian
/// `width`-byte ints with `eos` after each, `ends` each document's end in ids as
/// little-endian uint64 bytes, counted from `start` (the ids written before).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_documents_flat<'py>(
    pipeline: &PyPipeline,
    py: Python<'py>,
    buffer: &PyBuffer<u8>,
    separator: &[u8],
    limit: usize,
    last: bool,
    policy: &SpecialPolicy,
    num_threads: Option<usize>,
    width: usize,
    eos: Option<u32>,
    start: u64,
) -> PyResult<(usize, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    if width != 2 && width != 4 {
        let message = format!("width must be 2 or 4 (bytes per id), not {width}");
        return Err(ws_error(py, "OptionValueError", message));
    }
    if separator.is_empty() {
        let message = "the document separator must not be empty".to_owned();
        return Err(ws_error(py, "OptionValueError", message));
    }
    if !buffer.is_c_contiguous() {
        let message = "the documents' buffer must be contiguous bytes".to_owned();
        return Err(ws_error(py, "EncodeInputError", message));
    }
    // SAFETY: the PyBuffer (borrowed for this call) keeps the exported memory valid and
    // unmoved (a bytearray cannot be resized while it is exported). Its owner could still
    // write it from another thread while the GIL is released: the documents are found here,
    // with the GIL held, and each is copied before it is checked and encoded
    // (`wordsplit::arrow::encode_run`), so such a write yields other ids, never unchecked text.
    let data =
        unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes()) };
    let split = wordsplit::documents::split(data, separator, limit, last);
    let framing = wordsplit::arrow::Framing {
        width,
        bos: None,
        eos,
        empty_is_nothing: false,
    };
    let parts = encode_rows(
        pipeline,
        py,
        &split.rows,
        policy,
        num_threads,
        &framing,
        &|row| format!("document {} of the buffer", row + 1),
    )?;
    let ids = joined_data(py, &parts)?;
    let ends = PyBytes::new_with(py, split.rows.len() * 8, |buf| {
        let lengths = parts.iter().flat_map(|part| &part.lengths);
        let mut end = start;
        for (chunk, &n) in buf.chunks_exact_mut(8).zip(lengths) {
            end += n;
            chunk.copy_from_slice(&end.to_le_bytes());
        }
        Ok(())
    })?;
    Ok((split.consumed, ids, ends))
}
