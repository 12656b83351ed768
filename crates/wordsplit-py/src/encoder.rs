//! `Encoder`: one native span encoder on its own, for tests and benchmarks of one strategy.

use pyo3::prelude::*;
use wordsplit::encoders::NativeEncoder;

use crate::errors::to_py;
use crate::pipeline::native_encoder;
use crate::tables::PyTables;

/// A native span encoder on its own: `Encoder(tables, name)` (buffer-sweep, heap-merge,
/// backtrack, auto), for tests and benchmarks of one strategy; tokenizers use `Pipeline`.
#[pyclass(frozen, module = "wordsplit._native", name = "Encoder")]
pub(crate) struct PyEncoder {
    inner: NativeEncoder,
}

#[pymethods]
impl PyEncoder {
    #[new]
    fn new(py: Python<'_>, tables: &PyTables, name: &str) -> PyResult<Self> {
        let tables = tables.inner.clone();
        let kind = native_encoder(py, &tables, name)?;
        let inner = NativeEncoder::new(tables, kind).map_err(|e| to_py(py, e))?;
        Ok(Self { inner })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.inner.kind().name()
    }

    /// The ids of one piece (bytes without a token dropped first, as the pipeline does for a
    /// vocabulary without an unk token; the unk token is the pipeline's, not the encoder's).
    fn encode_piece(&self, piece: &[u8]) -> Vec<u32> {
        self.inner.encode(piece)
    }
}
