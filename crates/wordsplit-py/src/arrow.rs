//! Arrow string arrays from Python (pyarrow's buffers, by the buffer protocol) encoded
//! straight from their memory into one framed buffer; the reading and framing are the core's
//! (`wordsplit::arrow`).

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use wordsplit::batch::{default_threads, run_shared, ALONE_BELOW_TEXT_BYTES};
use wordsplit::{Error, SpecialPolicy};

use crate::batch::Gil;
use crate::errors::{to_py, ws_error};
use crate::pipeline::PyPipeline;

/// One Arrow string array: `(validity, offsets, data, large, offset, length)`, the buffers
/// as contiguous bytes (None for a missing one).
pub(crate) type ArrowChunk = (
    Option<PyBuffer<u8>>,
    PyBuffer<u8>,
    Option<PyBuffer<u8>>,
    bool,
    usize,
    usize,
);

/// The rows of `chunks` encoded under `policy` into one buffer framed for a dataset writer:
/// `(data, lengths)`, `data` the ids as little-endian `width`-byte ints with `bos` before and
/// `eos` after each row (none for an empty row when `empty_is_nothing`; nothing at all for a
/// null row), `lengths` each row's count of those ids as little-endian uint64 bytes. No Python
/// str is made per row; the rows are checked as UTF-8 on the threads that encode them.
pub(crate) fn encode_arrow_flat<'py>(
    pipeline: &PyPipeline,
    py: Python<'py>,
    chunks: &[ArrowChunk],
    policy: &SpecialPolicy,
    num_threads: Option<usize>,
    framing: wordsplit::arrow::Framing,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    if framing.width != 2 && framing.width != 4 {
        let message = format!("width must be 2 or 4 (bytes per id), not {}", framing.width);
        return Err(ws_error(py, "OptionValueError", message));
    }
    let bytes =
        |buffer: &PyBuffer<u8>| -> PyResult<&[u8]> {
            if !buffer.is_c_contiguous() {
                let message = "an Arrow buffer must be contiguous bytes".to_owned();
                return Err(ws_error(py, "EncodeInputError", message));
            }
            // SAFETY: the PyBuffer (in `chunks`, alive for this call) keeps the exported memory
            // valid and unmoved. Arrow buffers are not written once built, but a buffer whose
            // owner writes it anyway (a bytearray under the array) yields no more than other
            // bytes: the offsets are read here, with the GIL held and no Python code
            // running, and each row is copied before it is checked and encoded
            // (`wordsplit::arrow::encode_run`).
            Ok(unsafe {
                std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes())
            })
        };
    let columns = chunks
        .iter()
        .map(|(validity, offsets, data, large, offset, length)| {
            Ok(wordsplit::arrow::StringChunk {
                validity: validity.as_ref().map(bytes).transpose()?,
                offsets: bytes(offsets)?,
                data: data.as_ref().map(bytes).transpose()?.unwrap_or(&[]),
                large: *large,
                offset: *offset,
                length: *length,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let rows =
        wordsplit::arrow::documents(&columns).map_err(|e| ws_error(py, "EncodeInputError", e))?;
    let parts = encode_rows(pipeline, py, &rows, policy, num_threads, &framing, &|row| {
        format!("row {row} of the arrays")
    })?;
    let data = joined_data(py, &parts)?;
    let rows_total: usize = parts.iter().map(|part| part.lengths.len()).sum();
    let lengths = PyBytes::new_with(py, rows_total * 8, |buf| {
        let all = parts.iter().flat_map(|part| &part.lengths);
        for (chunk, &n) in buf.chunks_exact_mut(8).zip(all) {
            chunk.copy_from_slice(&n.to_le_bytes());
        }
        Ok(())
    })?;
    Ok((data, lengths))
}

/// The rows encoded under `policy` and framed as `framing` says, in runs of consecutive rows
/// (see `wordsplit::arrow`) on native threads when every stage is native; a row that is not
/// UTF-8 is an EncodeInputError naming it as `name(index)` does, an id too wide for
/// `framing.width` an OptionValueError.
pub(crate) fn encode_rows(
    pipeline: &PyPipeline,
    py: Python<'_>,
    rows: &[Option<&[u8]>],
    policy: &SpecialPolicy,
    num_threads: Option<usize>,
    framing: &wordsplit::arrow::Framing,
    name: &dyn Fn(usize) -> String,
) -> PyResult<Vec<wordsplit::arrow::FramedRun>> {
    // Runs of consecutive rows, not single rows, are what the threads take (see arrow.rs).
    let threads = default_threads(num_threads);
    let text_bytes = rows.iter().map(|row| row.map_or(0, <[u8]>::len)).sum();
    let runs = wordsplit::arrow::runs(rows, wordsplit::arrow::run_bytes(text_bytes, threads));
    let encode_run = |r: usize| {
        let (range, bytes) = runs[r].clone();
        wordsplit::arrow::encode_run(framing, rows, range, bytes, |text, out| {
            pipeline.inner.encode(text, policy, out)
        })
    };
    let fail = |e: wordsplit::arrow::RunError<Error>| match e {
        wordsplit::arrow::RunError::Utf8(row, at) => {
            let message = format!("{} is not valid UTF-8 (byte {at})", name(row));
            ws_error(py, "EncodeInputError", message)
        }
        wordsplit::arrow::RunError::Encode(_, e) => to_py(py, e),
    };
    let parts: Vec<wordsplit::arrow::FramedRun> = if pipeline.inner.is_native() {
        run_shared(
            &Gil(py),
            runs.len(),
            threads,
            |r| runs[r].1,
            ALONE_BELOW_TEXT_BYTES,
            encode_run,
            |result| result.map_err(fail),
        )?
    } else {
        (0..runs.len())
            .map(|r| encode_run(r).map_err(fail))
            .collect::<PyResult<_>>()?
    };
    let too_wide = framing
        .too_wide(std::iter::empty())
        .or_else(|| parts.iter().find_map(|part| part.too_wide));
    if let Some(id) = too_wide {
        let message = format!(
            "the id {id} does not fit in width={} bytes; use width=4",
            framing.width
        );
        return Err(ws_error(py, "OptionValueError", message));
    }
    Ok(parts)
}

/// The framed ids of all runs, in order, in one bytes object (filled with the GIL released:
/// the object is not visible to Python yet).
pub(crate) fn joined_data<'py>(
    py: Python<'py>,
    parts: &[wordsplit::arrow::FramedRun],
) -> PyResult<Bound<'py, PyBytes>> {
    let total: usize = parts.iter().map(|part| part.data.len()).sum();
    PyBytes::new_with(py, total, |buf| {
        py.allow_threads(|| {
            let mut at = 0;
            for part in parts {
                buf[at..at + part.data.len()].copy_from_slice(&part.data);
                at += part.data.len();
            }
        });
        Ok(())
    })
}
