//! `WordCounter`: a corpus's words counted on native threads, and BPE merges learned from
//! the counts by the core's trainer (`wordsplit::train`); `rank_pairs`.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use wordsplit::batch::default_threads;
use wordsplit::{spanners, train};

use crate::errors::{no_scanner, ws_error};

/// `WordCounter.train`'s result: every token's bytes by id (None for specials), and the merges.
type TrainedPy = (Vec<Option<Py<PyBytes>>>, Vec<(u32, u32, u32)>);

/// The distinct words of a corpus and their counts (`wordsplit.training.native` drives it):
/// texts are counted in parallel by the native scanner of `pattern`, counts from Python added,
/// and `train` learns the merges from the table.
#[pyclass(module = "wordsplit._native", name = "WordCounter")]
pub(crate) struct PyWordCounter {
    table: train::WordTable,
    spanner: Option<Box<dyn spanners::Scanner>>,
    nfc: bool,
    /// The counting pool and its size, made on the first parallel `add_texts` and kept.
    pool: Option<(usize, rayon::ThreadPool)>,
}

#[pymethods]
impl PyWordCounter {
    /// `WordCounter(pattern, normalizer)`: `pattern` None for a table that only takes counts;
    /// else it must have a native scanner. `normalizer` is "none" or "nfc".
    #[new]
    #[pyo3(signature = (pattern=None, normalizer="none"))]
    fn new(py: Python<'_>, pattern: Option<&str>, normalizer: &str) -> PyResult<Self> {
        let spanner = match pattern {
            None => None,
            Some(p) => Some(spanners::scanner_for_pattern(p).ok_or_else(|| no_scanner(py, p))?),
        };
        let nfc = match normalizer {
            "none" => false,
            "nfc" => true,
            other => {
                return Err(ws_error(
                    py,
                    "UnsupportedTokenizerError",
                    format!(
                        "the native word counter normalizes with 'none' or 'nfc', not {other:?}"
                    ),
                ))
            }
        };
        Ok(Self {
            table: train::WordTable::default(),
            spanner,
            nfc,
            pool: None,
        })
    }

    /// Count the words of `texts` on `num_threads` threads (None: all cores), at most
    /// `max_words` of them (the first ones, in order; None: all); returns how many were counted.
    #[pyo3(signature = (texts, num_threads=None, max_words=None))]
    fn add_texts(
        &mut self,
        py: Python<'_>,
        texts: Vec<String>,
        num_threads: Option<usize>,
        max_words: Option<u64>,
    ) -> PyResult<u64> {
        let Some(spanner) = self.spanner.as_deref() else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "this WordCounter has no pattern to split texts with",
            ));
        };
        let threads = default_threads(num_threads);
        if threads > 1 && self.pool.as_ref().is_none_or(|(n, _)| *n != threads) {
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .ok()
                .map(|pool| (threads, pool));
        }
        let pool = if threads > 1 {
            self.pool.as_ref().map(|(_, pool)| pool)
        } else {
            None
        };
        let (table, nfc) = (&mut self.table, self.nfc);
        let budget = max_words.unwrap_or(u64::MAX);
        Ok(py.allow_threads(|| train::count_parallel(table, spanner, &texts, nfc, pool, budget)))
    }

    /// Add `(word bytes, count)` items (counts made elsewhere: a Python spanner, another shard).
    fn add_counts(&mut self, items: Vec<(Vec<u8>, u64)>) {
        for (word, count) in items {
            self.table.add(&word, count);
        }
    }

    /// Every `(word bytes, count)`.
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        self.table
            .counts
            .iter()
            .map(|(w, &c)| (PyBytes::new(py, w), c))
            .collect()
    }

    fn __len__(&self) -> usize {
        self.table.counts.len()
    }

    /// Learn merges (HF BpeTrainer's rules, see train.rs): returns `(tokens, merges)` with
    /// `tokens` the bytes of every id (None for the specials) and `merges` (left, right, merged).
    /// `specials` are the specials' byte-level bytes (None when not byte-level text); a merge
    /// that makes one raises ValueError naming its index. `progress(n_tokens)` is called now and then.
    #[pyo3(signature = (vocab_size, specials, min_frequency, max_token_length, progress=None))]
    fn train(
        &self,
        py: Python<'_>,
        vocab_size: usize,
        specials: Vec<Option<Vec<u8>>>,
        min_frequency: u64,
        max_token_length: Option<usize>,
        progress: Option<PyObject>,
    ) -> PyResult<TrainedPy> {
        let opts = train::TrainOptions {
            vocab_size,
            specials,
            min_frequency,
            max_token_length,
        };
        // Words in a fixed order (by bytes): the result does not depend on it, but runs repeat.
        let mut words: Vec<(&[u8], u64)> = self
            .table
            .counts
            .iter()
            .map(|(w, &c)| (&w[..], c))
            .collect();
        words.sort_unstable();
        // The callback, and Ctrl-C, are seen every few hundred merges (with the GIL).
        let mut failed: Option<PyErr> = None;
        let result = py.allow_threads(|| {
            train::train(&words, &opts, |n| {
                Python::with_gil(|py| {
                    let outcome = py.check_signals().and_then(|()| match &progress {
                        Some(callback) => callback.call1(py, (n, vocab_size)).map(|_| ()),
                        None => Ok(()),
                    });
                    match outcome {
                        Ok(()) => true,
                        Err(err) => {
                            failed = Some(err);
                            false
                        }
                    }
                })
            })
        });
        let trained = match result {
            Ok(trained) => trained,
            Err(train::TrainError::Stopped) => {
                return Err(failed.unwrap_or_else(|| {
                    pyo3::exceptions::PyRuntimeError::new_err("training stopped")
                }))
            }
            Err(train::TrainError::MakesSpecial(i)) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "a merge makes the text of special token {i}"
                )))
            }
        };
        let tokens = trained
            .tokens
            .iter()
            .map(|t| t.as_ref().map(|b| PyBytes::new(py, b).unbind()))
            .collect();
        Ok((tokens, trained.merges))
    }
}

/// `rank_pairs(tokens)`: see `train::rank_pairs` (tokens by id, None for ids without bytes).
#[pyfunction]
pub(crate) fn rank_pairs(py: Python<'_>, tokens: Vec<Option<Vec<u8>>>) -> Vec<Option<(u32, u32)>> {
    py.allow_threads(|| {
        let views: Vec<Option<&[u8]>> = tokens.iter().map(|t| t.as_deref()).collect();
        train::rank_pairs(&views)
    })
}
