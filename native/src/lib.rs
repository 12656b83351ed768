//! `wordsplit._native`: the Rust core of wordsplit, and its PyO3 glue (this file only).
//!
//! The parts mirror the Python package under the same names: `vocab` (the shared tables),
//! `encoders` (buffer-sweep, heap-merge, backtrack). Errors become the Python exception
//! classes of `wordsplit.errors`. Work on text or id lists runs with the GIL released.

pub mod encoders;
pub mod unicode_tables;
pub mod vocab;

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use encoders::{encode_piece, EncoderKind};
use vocab::VocabTables;

/// An instance of a `wordsplit.errors` class, so both backends raise the same exceptions.
fn ws_error(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py.import("wordsplit.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((message.clone(),))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(err) => err,
    }
}

/// The vocabulary tables shared by every native encoder of one vocabulary.
#[pyclass(frozen, module = "wordsplit._native", name = "Tables")]
struct PyTables {
    inner: Arc<VocabTables>,
}

#[pymethods]
impl PyTables {
    /// Tables(bpe, extra, n_vocab, merges, whole_piece_lookup): `bpe` is [(bytes, id)] for
    /// BPE tokens, `extra` the special/added literals, `merges` [(left, right, rank)] or None.
    #[new]
    #[pyo3(signature = (bpe, extra, n_vocab, merges, whole_piece_lookup))]
    fn new(
        py: Python<'_>,
        bpe: Vec<(Vec<u8>, u32)>,
        extra: Vec<(Vec<u8>, u32)>,
        n_vocab: usize,
        merges: Option<Vec<(u32, u32, u32)>>,
        whole_piece_lookup: bool,
    ) -> PyResult<Self> {
        let tables = py
            .allow_threads(|| VocabTables::new(bpe, extra, n_vocab, merges, whole_piece_lookup))
            .map_err(|e| ws_error(py, "VocabFormatError", e.0))?;
        Ok(Self { inner: Arc::new(tables) })
    }

    /// The bytes of `ids`, concatenated; UnknownTokenError names the first bad id.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<i64>) -> PyResult<Bound<'py, PyBytes>> {
        let tables = &self.inner;
        let result = py.allow_threads(|| {
            let mut out = Vec::with_capacity(ids.len() * 4);
            for &id in &ids {
                let known = u32::try_from(id).ok().and_then(|i| tables.token_bytes.get(i as usize)?.as_deref());
                match known {
                    Some(bytes) => out.extend_from_slice(bytes),
                    None => return Err(id),
                }
            }
            Ok(out)
        });
        match result {
            Ok(bytes) => Ok(PyBytes::new(py, &bytes)),
            Err(id) => Err(ws_error(py, "UnknownTokenError", format!("token id {id} is not in the vocabulary"))),
        }
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.token_bytes.len()
    }
}

/// A native span encoder: `Encoder(tables, name)` with name in buffer-sweep, heap-merge, backtrack.
#[pyclass(frozen, module = "wordsplit._native", name = "Encoder")]
struct PyEncoder {
    tables: Arc<VocabTables>,
    kind: EncoderKind,
}

#[pymethods]
impl PyEncoder {
    #[new]
    fn new(py: Python<'_>, tables: &PyTables, name: &str) -> PyResult<Self> {
        let kind = EncoderKind::from_name(name).ok_or_else(|| {
            ws_error(
                py,
                "UnknownComponentError",
                format!("unknown native encoder {name:?}; known: {}", EncoderKind::NAMES.join(", ")),
            )
        })?;
        let tables = tables.inner.clone();
        if kind == EncoderKind::Backtrack {
            let ready = py.allow_threads(|| tables.backtrack_tables().map(|_| ()).map_err(str::to_owned));
            ready.map_err(|e| ws_error(py, "UnsupportedTokenizerError", e))?;
        }
        Ok(Self { tables, kind })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The ids of one piece.
    fn encode_piece(&self, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::with_capacity(piece.len() / 3 + 1);
        encode_piece(self.kind, &self.tables, piece, &mut out);
        out
    }

    /// The ids of many pieces, concatenated, in one call with the GIL released.
    fn encode_pieces<'py>(&self, py: Python<'py>, pieces: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| {
            let mut out = Vec::with_capacity(pieces.len() + pieces.len() / 2);
            for piece in &pieces {
                encode_piece(self.kind, &self.tables, piece, &mut out);
            }
            out
        });
        PyList::new(py, ids)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTables>()?;
    m.add_class::<PyEncoder>()?;
    m.add("ENCODERS", EncoderKind::NAMES.to_vec())?;
    m.add("UNICODE_VERSION", unicode_tables::UNICODE_VERSION)?;
    Ok(())
}
