//! The loaders' fast paths: the core's readers of vocabulary file formats
//! (`wordsplit::formats`) for the Python loaders (`wordsplit.formats`), which keep their own
//! reference code for every refusal: a fast path that finds the input wrong returns `None`,
//! and the Python reference reads the same bytes and raises its typed error.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use wordsplit::formats::gguf::{read_metadata, scan_head, Gemma4Table, HeadScan, Value};
use wordsplit::formats::sentencepiece::{self as sp, bpe_tables, read_pieces, score_merges};

/// gguf_scan_head(buf) -> (status, n): how far the GGUF header and metadata at the start of
/// `buf` go: `(0, end)` when they end at `end`, `(1, need)` when the walk needs the file's
/// first `need` bytes, `(2, 0)` when the bytes cannot be walked (the reference says why).
/// `buf` is any contiguous byte buffer (the reader's growing `bytearray`); it is read with the
/// GIL held, so no Python code can resize it meanwhile.
#[pyfunction]
pub(crate) fn gguf_scan_head(buf: PyBuffer<u8>) -> PyResult<(u8, u64)> {
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "gguf_scan_head reads contiguous bytes",
        ));
    }
    // SAFETY: `buf` keeps the exported memory valid and unmoved for this call, and with the
    // GIL held (it is never released here) nothing resizes or writes the bytearray.
    let bytes = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.len_bytes()) };
    Ok(match scan_head(bytes) {
        HeadScan::End(end) => (0, end as u64),
        HeadScan::Need(need) => (1, need),
        HeadScan::Invalid => (2, 0),
    })
}

/// gguf_metadata(data, packed=()) -> dict | None: the key-value metadata of GGUF bytes, as
/// the Python reader `read_gguf_metadata` returns it (ints, floats, bools, strs, bytes, lists), or
/// None when the bytes are not well-formed (the reference then raises the error). An array of
/// strings under a key in `packed` is a `PackedStrings` instead of a list (no str per item).
#[pyfunction]
#[pyo3(signature = (data, packed=Vec::new()))]
pub(crate) fn gguf_metadata<'py>(
    py: Python<'py>,
    data: &[u8],
    packed: Vec<String>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(metadata) = py.allow_threads(|| read_metadata(data)) else {
        return Ok(None);
    };
    let out = PyDict::new(py);
    for (key, value) in &metadata {
        match value {
            Value::Strings(items) if packed.iter().any(|k| k == key) => {
                out.set_item(key, PackedStrings::of(items))?
            }
            _ => out.set_item(key, python_value(py, value)?)?,
        }
    }
    Ok(Some(out))
}

/// A list of strings kept as one UTF-8 blob (GGUF's 515,000 merges): a read-only sequence
/// whose items are made as they are read; the native loaders read the blob itself.
#[pyclass(frozen, module = "wordsplit._native")]
pub(crate) struct PackedStrings {
    blob: String,
    /// Where each string ends in `blob`.
    ends: Vec<usize>,
}

impl PackedStrings {
    fn of(items: &[&str]) -> Self {
        let mut blob = String::with_capacity(items.iter().map(|s| s.len()).sum());
        let mut ends = Vec::with_capacity(items.len());
        for item in items {
            blob.push_str(item);
            ends.push(blob.len());
        }
        Self { blob, ends }
    }

    fn items(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let item = &self.blob[start..end];
                start = end;
                item
            })
            .collect()
    }
}

#[pymethods]
impl PackedStrings {
    fn __len__(&self) -> usize {
        self.ends.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<&str> {
        let n = self.ends.len() as isize;
        let i = if index < 0 { index + n } else { index };
        if !(0..n).contains(&i) {
            return Err(PyIndexError::new_err("index out of range"));
        }
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Ok(&self.blob[start..self.ends[i]])
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.tolist(py)?.as_any().try_iter()?.into_any())
    }

    /// The strings as a list.
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.items())
    }
}

/// Packed merge pairs, and `(rank, left, right)` of each merge of newlines.
type ResolvedMerges<'py> = (Bound<'py, PyBytes>, Vec<(u32, String, String)>);

/// gemma4_merge_pairs(tokens, types, merges) -> (bytes, list) | None: the merges of a
/// `gemma4` GGUF vocabulary (`tokens` and `merges` are `PackedStrings`) resolved to ids
/// (`wordsplit::formats::gguf::gemma4_merges`, on two threads): the pairs as little-endian uint32 triples
/// `(left, right, rank)`, and `(rank, left, right)` of each merge of newlines; None when a
/// merge is refused (the Python reference then raises the error).
#[pyfunction]
pub(crate) fn gemma4_merge_pairs<'py>(
    py: Python<'py>,
    tokens: &PackedStrings,
    types: Vec<i64>,
    merges: &PackedStrings,
) -> PyResult<Option<ResolvedMerges<'py>>> {
    let items = merges.items();
    let tokens = tokens.items();
    let resolved = py.allow_threads(|| {
        let table = Gemma4Table::new(&tokens, &types)?;
        // Two halves at once: 515k merges, each a few hash lookups that miss the cache.
        let (front, back) = items.split_at(items.len() / 2);
        let (front, back) = std::thread::scope(|scope| {
            let back = scope.spawn(|| table.resolve(back, front.len()));
            (
                table.resolve(front, 0),
                back.join().expect("resolving merges does not panic"),
            )
        });
        Some(Gemma4Table::combine(vec![front?, back?]))
    });
    let Some(resolved) = resolved else {
        return Ok(None);
    };
    let packed = packed_triples(&resolved.pairs);
    let runs = resolved
        .newline_runs
        .into_iter()
        .map(|(rank, left, right)| (rank, left.to_owned(), right.to_owned()))
        .collect();
    Ok(Some((PyBytes::new(py, &packed), runs)))
}

fn python_value<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Unsigned(v) => v.into_pyobject(py)?.into_any(),
        Value::Signed(v) => v.into_pyobject(py)?.into_any(),
        Value::Float(v) => v.into_pyobject(py)?.into_any(),
        Value::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Value::Str(v) => v.into_pyobject(py)?.into_any(),
        Value::Strings(items) => PyList::new(py, items)?.into_any(),
        Value::Bytes(bytes) => PyBytes::new(py, bytes).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(python_value(py, item)?)?;
            }
            list.into_any()
        }
    })
}

/// sentencepiece_model(data) -> dict | None: a SentencePiece `tokenizer.model`'s pieces read
/// natively (`wordsplit::formats::sentencepiece`): `specs` (`(field number, bytes)` of its
/// trainer and normalizer specs, for the reference to read), `kinds` (each piece's type, one
/// byte each), `special` (`(text, id)` of the CONTROL and UNKNOWN pieces), `user_defined` and
/// `unused` (their texts), and `tables`: a BPE model's `(blob, ids, lengths, merges, joined)`
/// (tokens and merges packed as `Vocab.from_packed` takes them), or None where the reference
/// refuses the pieces. None for bytes the reference reads otherwise or refuses.
#[pyfunction]
pub(crate) fn sentencepiece_model<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some((proto, tables)) = py.allow_threads(|| {
        let proto = read_pieces(data)?;
        let tables = bpe_tables(&proto.pieces);
        Some((proto, tables))
    }) else {
        return Ok(None);
    };
    let out = PyDict::new(py);
    let specs: Vec<(u8, Bound<'py, PyBytes>)> = proto
        .specs
        .iter()
        .map(|&(number, bytes)| (number, PyBytes::new(py, bytes)))
        .collect();
    out.set_item("specs", specs)?;
    let kinds: Vec<u8> = proto.pieces.iter().map(|p| p.kind).collect();
    out.set_item("kinds", PyBytes::new(py, &kinds))?;
    let of_kind = |wanted: &[u8]| -> Vec<(&str, u32)> {
        proto
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| wanted.contains(&p.kind))
            .map(|(i, p)| (p.text, i as u32))
            .collect()
    };
    out.set_item("special", of_kind(&[sp::CONTROL, sp::UNKNOWN]))?;
    let texts = |kind: u8| -> Vec<&str> { of_kind(&[kind]).into_iter().map(|(t, _)| t).collect() };
    out.set_item("user_defined", texts(sp::USER_DEFINED))?;
    out.set_item("unused", texts(sp::UNUSED))?;
    let tables = match tables {
        None => None,
        Some(tables) => {
            let mut blob = Vec::new();
            let (mut ids, mut lengths) = (Vec::new(), Vec::new());
            for (bytes, id) in &tables.tokens {
                blob.extend_from_slice(bytes);
                ids.extend(id.to_le_bytes());
                lengths.extend((bytes.len() as u32).to_le_bytes());
            }
            let merges = packed_triples(&tables.merges);
            Some((
                PyBytes::new(py, &blob),
                PyBytes::new(py, &ids),
                PyBytes::new(py, &lengths),
                PyBytes::new(py, &merges),
                tables.joined,
            ))
        }
    };
    out.set_item("tables", tables)?;
    Ok(Some(out))
}

/// score_merge_pairs(texts, scores, kinds) -> bytes | None: SentencePiece's merge rule over
/// pieces (`wordsplit::formats::sentencepiece::score_merges`) as little-endian uint32 triples
/// `(left, right, rank)`; None where the reference (`_score_merges`) refuses the pieces.
#[pyfunction]
pub(crate) fn score_merge_pairs<'py>(
    py: Python<'py>,
    texts: Vec<String>,
    scores: Vec<f64>,
    kinds: Vec<u8>,
) -> Option<Bound<'py, PyBytes>> {
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let merges = py.allow_threads(|| score_merges(&texts, &scores, &kinds))?;
    Some(PyBytes::new(py, &packed_triples(&merges)))
}

/// Merges `(left, right, rank)` as little-endian uint32 triples (Python's `pack_merges`).
fn packed_triples(merges: &[(u32, u32, u32)]) -> Vec<u8> {
    let mut packed = Vec::with_capacity(merges.len() * 12);
    for (left, right, rank) in merges {
        packed.extend(left.to_le_bytes());
        packed.extend(right.to_le_bytes());
        packed.extend(rank.to_le_bytes());
    }
    packed
}
