//! Batches from Python: texts checked and fixed on the calling thread, encoded (or id lists
//! decoded) on native threads by the core's [`run_shared`] with the GIL released, and each
//! result made a Python object on the calling thread.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use wordsplit::batch::{
    default_threads, run_shared, Unlock, ALONE_BELOW_IDS, ALONE_BELOW_TEXT_BYTES,
};
use wordsplit::SpecialPolicy;

use crate::errors::{to_py, ws_error};
use crate::pipeline::PyPipeline;
use crate::stages::text_without_surrogates;
use crate::tables::PyTables;
use crate::utf8::utf8_of;

/// The GIL, released while the core works.
pub(crate) struct Gil<'py>(pub(crate) Python<'py>);

impl Unlock for Gil<'_> {
    fn unlocked<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
        self.0.allow_threads(f)
    }
}

impl PyPipeline {
    /// The text of a Python str (surrogates fixed); EncodeInputError for anything else.
    /// Its UTF-8 is made here when CPython has none ready ([`utf8_of`]), and kept with it.
    pub(crate) fn text<'a>(
        text: &'a Bound<'_, PyAny>,
        batch_index: Option<usize>,
    ) -> PyResult<TextArg<'a>> {
        let Ok(string) = text.downcast::<PyString>() else {
            let kind = text.get_type().name()?;
            let hint = if text.is_instance_of::<PyBytes>()
                || text.is_instance_of::<pyo3::types::PyByteArray>()
            {
                " (decode bytes to str first, e.g. data.decode('utf-8'))"
            } else {
                ""
            };
            let message = match batch_index {
                None => format!("encode takes a str, not {kind}{hint}"),
                Some(i) => format!("text {i} of the batch is a {kind}, not a str{hint}"),
            };
            return Err(ws_error(text.py(), "EncodeInputError", message));
        };
        if let Some(utf8) = utf8_of(string) {
            return Ok(TextArg::Borrowed(utf8));
        }
        match string.to_str() {
            Ok(plain) => Ok(TextArg::Borrowed(plain)),
            Err(_) => Ok(TextArg::Owned(text_without_surrogates(string)?)),
        }
    }

    /// The texts of a batch (any iterable of str), each checked and fixed.
    fn texts<'a>(items: &'a [Bound<'a, PyAny>]) -> PyResult<Vec<TextArg<'a>>> {
        items
            .iter()
            .enumerate()
            .map(|(i, text)| Self::text(text, Some(i)))
            .collect()
    }

    /// Encode `texts` with [`run_shared`] (all native) or in order on this thread: each text's
    /// ids, made into its result by `keep` on this thread, in text order; the error is that of
    /// the lowest-index text that fails.
    pub(crate) fn run_batch<T>(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        policy: &SpecialPolicy,
        num_threads: Option<usize>,
        mut keep: impl FnMut(&[u32]) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let runs = self.encode_runs(py, texts, policy, num_threads, |run| {
            run.texts().map(&mut keep).collect::<PyResult<Vec<T>>>()
        })?;
        Ok(runs.into_iter().flatten().collect())
    }

    /// Encode `texts` in runs of consecutive texts (one run at a time per thread, as Arrow
    /// rows are: see `wordsplit::arrow::runs`), with [`run_shared`] when every stage is native,
    /// else one text per run in order on this thread; each run's ids made into its result by
    /// `keep` on this thread, in text order. The error is that of the lowest-index text that
    /// fails. A run, not a text, is what is handed between threads: for short texts the
    /// hand-off and a vector per text cost more than their encode, and more on two threads
    /// than on one.
    pub(crate) fn encode_runs<T>(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        policy: &SpecialPolicy,
        num_threads: Option<usize>,
        mut keep: impl FnMut(IdRun) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let items: Vec<Bound<'_, PyAny>> = match texts.downcast::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => texts.try_iter()?.collect::<PyResult<_>>()?,
        };
        let texts = Self::texts(&items)?;
        if !self.inner.is_native() {
            return texts
                .iter()
                .map(|text| {
                    let ids = self.run(py, text.as_str(), policy)?;
                    let ends = vec![ids.len()];
                    keep(IdRun { ids, ends })
                })
                .collect();
        }
        let threads = default_threads(num_threads);
        let rows: Vec<Option<&[u8]>> = texts.iter().map(|t| Some(t.as_str().as_bytes())).collect();
        let total = texts.iter().map(|t| t.as_str().len()).sum();
        let runs = wordsplit::arrow::runs(&rows, wordsplit::arrow::run_bytes(total, threads));
        let encode = |r: usize| {
            let (range, bytes) = runs[r].clone();
            let mut run = IdRun {
                ids: Vec::with_capacity(bytes / 2 + 4 * range.len()),
                ends: Vec::with_capacity(range.len()),
            };
            for text in &texts[range] {
                self.inner.encode(text.as_str(), policy, &mut run.ids)?;
                run.ends.push(run.ids.len());
            }
            Ok::<IdRun, wordsplit::Error>(run)
        };
        run_shared(
            &Gil(py),
            runs.len(),
            threads,
            |r| runs[r].1,
            ALONE_BELOW_TEXT_BYTES,
            encode,
            |result| keep(result.map_err(|e| to_py(py, e))?),
        )
    }
}

/// The ids of a run of consecutive texts: all in one vector, and where each text's end.
pub(crate) struct IdRun {
    pub(crate) ids: Vec<u32>,
    pub(crate) ends: Vec<usize>,
}

impl IdRun {
    /// Each text's ids, in order.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &[u32]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.ids[start..end])
    }
}

/// A text argument: borrowed from the Python str, or fixed (surrogates) into a new String.
pub(crate) enum TextArg<'a> {
    Borrowed(&'a str),
    Owned(String),
}

impl TextArg<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            TextArg::Borrowed(text) => text,
            TextArg::Owned(text) => text,
        }
    }
}

/// The bytes of each id sequence of `batch`, on native threads; the error is that of the
/// first bad id of the lowest-index sequence, as a loop over the batch would give.
pub(crate) fn decoded_batch(
    tables_py: &PyTables,
    py: Python<'_>,
    batch: &Bound<'_, PyAny>,
    num_threads: Option<usize>,
) -> PyResult<Vec<Vec<u8>>> {
    let tables = &tables_py.inner;
    let mut lists: Vec<Vec<u32>> = Vec::new();
    for ids in batch.try_iter()? {
        match tables_py.token_ids(&ids?) {
            Ok(ids) => lists.push(ids),
            Err(err) => {
                // An earlier sequence with an unused id fails first, as in a loop.
                let mut scratch = Vec::new();
                for ids in &lists {
                    if let Err(id) = tables.decode_into(ids, &mut scratch) {
                        return Err(tables_py.unknown(py, id));
                    }
                    scratch.clear();
                }
                return Err(err);
            }
        }
    }
    let batch = lists;
    let decode = |i: usize| {
        let mut out = Vec::new();
        tables.decode_into(&batch[i], &mut out).map(|_| out)
    };
    run_shared(
        &Gil(py),
        batch.len(),
        default_threads(num_threads),
        |i| batch[i].len(),
        ALONE_BELOW_IDS,
        decode,
        |result| result.map_err(|id| tables_py.unknown(py, id)),
    )
}
