//! `Pipeline`: the whole encode of one tokenizer in one native call, for
//! `wordsplit/engines/native.py`; and `Policy`, a resolved special-token policy.

use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use pyo3::{PyTraverseError, PyVisit};
use wordsplit::encoders::character_bpe::character_bpe_encoder;
use wordsplit::encoders::unigram_spans::unigram_spans_encoder;
use wordsplit::encoders::wordpiece::word_model_encoder;
use wordsplit::pipeline::regex_unsupported;
use wordsplit::spanners::hf_program::StepSpec;
use wordsplit::spanners::llamacpp::LlamaCppWordPieceSpanner;
use wordsplit::spanners::{self, HfProgram, Scanner};
use wordsplit::spec::{ModelSpec, PipelineSpec};
use wordsplit::{EncoderKind, Literal, MergeTables, NormalizeStage, Pipeline, SpecialPolicy};

use crate::array::read_only_ids;
use crate::arrow::ArrowChunk;
use crate::batch::TextArg;
use crate::errors::{py_repr, to_py, unknown_component, ws_error};
use crate::ids::IdInts;
use crate::stages::{
    sentencepiece_encoder, sentencepiece_spanner, PyEncoderStage, PyNormalizer, PySpanner, Shared,
    LLAMACPP_WORDPIECE_SPANNER, SENTENCEPIECE_SPANNER,
};
use crate::tables::PyTables;

/// A resolved special-token policy for one [`PyPipeline`], cached by the Python side.
#[pyclass(frozen, module = "wordsplit._native", name = "Policy")]
pub(crate) struct PyPolicy {
    pub(crate) inner: SpecialPolicy,
}

/// The encode calls of one [`PyPipeline`] under one [`PyPolicy`], bound once: what a
/// tokenizer's default calls (`encode(text)`, `encode_ordinary`) run, without resolving the
/// policy's arguments and looking its compiled form up on every call, which on a short text
/// took more time than the native encode.
#[pyclass(frozen, module = "wordsplit._native", name = "PolicyCalls")]
pub(crate) struct PyPolicyCalls {
    pipeline: Py<PyPipeline>,
    policy: Py<PyPolicy>,
}

#[pymethods]
impl PyPolicyCalls {
    /// The ids of `text` as a list ([`PyPipeline::encode`]).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.pipeline.get().encode(py, text, self.policy.get())
    }

    /// The ids of `text` as a read-only numpy array ([`PyPipeline::encode_numpy`]).
    fn encode_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.pipeline
            .get()
            .encode_numpy(py, text, self.policy.get())
    }

    /// The number of ids of `text` ([`PyPipeline::count`]).
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.pipeline.get().count(py, text, self.policy.get())
    }

    /// Its pipeline, shown to the garbage collector (a cycle through the pipeline's Python
    /// stages can pass through these calls).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.pipeline)?;
        visit.call(&self.policy)
    }
}

/// The whole encode in one call; see `wordsplit/engines/native.py`.
///
/// `Pipeline(tables, *, encoder, spanner, pattern, literals, normalizer, encoder_impl=None,
/// spanner_impl=None, normalizer_impl=None, patterns=None)`: each stage is native (a native
/// encoder name or "auto"; the scanner `spanner`, which must be registered for exactly
/// `pattern`, or `spanner="regex"` with `pattern` in its expanded form, or, given `patterns`
/// (expanded), a llama.cpp-style sequence of regexes named `spanner`; "none" or "nfc") unless
/// its `*_impl` Python object is given, the name then naming it in messages.
/// `literals` is `[(text, id, special)]`. `unk=(id, fuse)`: a byte no token spells is that
/// token (one per run of them with `fuse`) instead of being dropped. `program`: the steps of
/// the split program that the Python `spanner_impl` (an `hf-split` spanner) runs, as
/// `hf_program_spans` takes them; encoding and offsets then run it natively.
#[pyclass(frozen, module = "wordsplit._native", name = "Pipeline")]
pub(crate) struct PyPipeline {
    pub(crate) inner: Pipeline,
    pub(crate) ints: IdInts,
    /// The Python objects of its stages, shown to the garbage collector: a component that
    /// refers back to its tokenizer makes a cycle through this object, which the collector
    /// can only free if it sees these references. Each is the one reference its stage holds.
    python: Vec<Shared>,
}

impl PyPipeline {
    /// The ids of `text`, with the GIL released when every stage is native and the text has
    /// [`RELEASE_GIL_FROM`] bytes or more.
    pub(crate) fn run(
        &self,
        py: Python<'_>,
        text: &str,
        policy: &SpecialPolicy,
    ) -> PyResult<Vec<u32>> {
        let mut out = Vec::new();
        self.run_into(py, text, policy, &mut out)?;
        Ok(out)
    }

    /// [`Self::run`] into `out` (emptied first).
    fn run_into(
        &self,
        py: Python<'_>,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
    ) -> PyResult<()> {
        out.clear();
        out.reserve(Pipeline::ids_capacity(text));
        let result = if self.inner.is_native() && text.len() >= RELEASE_GIL_FROM {
            py.allow_threads(|| self.inner.encode(text, policy, out))
        } else {
            self.inner.encode(text, policy, out)
        };
        result.map_err(|e| to_py(py, e))
    }

    /// `f` of the ids of `text` under `policy`, encoded into this thread's scratch vector:
    /// its room for the ids (half an id per byte of text, twice what prose needs) is
    /// allocated and faulted in once, not per call, and a numpy array gets an exact-size
    /// copy, where it held the whole room of a vector of its own for as long as it lived
    /// (tiktoken's arrays are exact too). A short call: list 0.45 -> 0.41 us, numpy 0.75 ->
    /// 0.72 us; 1 MB of prose, warm, the same. The vector is taken out of its cell for the
    /// call, so an encode that runs Python code which encodes again on this thread gets a
    /// vector of its own; one grown past [`SCRATCH_KEEP`] ids is not kept.
    fn with_scratch<R>(
        &self,
        py: Python<'_>,
        text: &str,
        policy: &SpecialPolicy,
        f: impl FnOnce(&[u32]) -> PyResult<R>,
    ) -> PyResult<R> {
        let mut out = SCRATCH.take();
        let result = self
            .run_into(py, text, policy, &mut out)
            .and_then(|()| f(&out));
        if out.capacity() <= SCRATCH_KEEP {
            SCRATCH.set(out);
        }
        result
    }
}

/// Texts of fewer bytes are encoded with the GIL held: releasing and taking it back took
/// about 60 ns, a fifth of a native call on "hello world", while such a text encodes in
/// about 2 µs or less, too short for another thread to do much meanwhile.
const RELEASE_GIL_FROM: usize = 1024;

thread_local! {
    /// This thread's scratch vector of ids ([`PyPipeline::with_scratch`]).
    static SCRATCH: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The most ids a thread's scratch vector keeps room for between calls (4 MiB): a text of
/// 8 MB or more gets a vector of its own, freed after it.
const SCRATCH_KEEP: usize = 1 << 20;

#[pymethods]
impl PyPipeline {
    /// The Python stages this pipeline holds, for the garbage collector: a component that
    /// refers back to its tokenizer makes a cycle through this object, which the collector can
    /// only free if it sees these references (it breaks the cycle by clearing the component).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.python
            .iter()
            .try_for_each(|object| visit.call(&**object))
    }

    #[new]
    /// `spec` is the vocabulary's pipeline in its JSON form; `pattern` the regex a native
    /// regex spanner or scanner runs (the expanded form of the spec's), else empty; `scores`
    /// the vocabulary's scores by id, for a SentencePiece model that ranks its pieces by them.
    #[pyo3(signature = (tables, *, spec, encoder, spanner, pattern, literals,
                        encoder_impl=None, spanner_impl=None, normalizer_impl=None, patterns=None,
                        unk=None, program=None, scores=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tables: &PyTables,
        spec: &str,
        encoder: &str,
        spanner: &str,
        pattern: &str,
        literals: Vec<(String, u32, bool, u8)>,
        encoder_impl: Option<Py<PyAny>>,
        spanner_impl: Option<Py<PyAny>>,
        normalizer_impl: Option<Py<PyAny>>,
        patterns: Option<Vec<String>>,
        unk: Option<(u32, bool)>,
        program: Option<Vec<StepSpec>>,
        scores: Option<Vec<f64>>,
    ) -> PyResult<Self> {
        if program.is_some() && spanner_impl.is_none() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "a native split program needs the Python spanner that runs it (spanner_impl)",
            ));
        }
        let spec = PipelineSpec::from_text(spec).map_err(|e| to_py(py, e.into()))?;
        let literals: Vec<Literal> = literals
            .into_iter()
            .map(|(text, id, special, flags)| Literal {
                text,
                id,
                special,
                flags,
            })
            .collect();
        let mut python: Vec<Shared> = Vec::new();
        let mut builder = Pipeline::builder(tables.inner.clone());
        builder = match encoder_impl {
            Some(object) => {
                let object = Arc::new(object);
                python.push(object.clone());
                builder.foreign_encoder(Box::new(PyEncoderStage {
                    object,
                    name: encoder.to_owned(),
                    n_vocab: tables.inner.n_vocab(),
                }))
            }
            None => {
                let model_encoder = sentencepiece_encoder(
                    py,
                    &tables.inner,
                    encoder,
                    &spec,
                    &literals,
                    scores.as_deref(),
                )
                .or_else(|| {
                    word_model_encoder(encoder, &tables.inner, &spec.model, &tables.vocab_name)
                        .map(|made| made.map_err(|e| to_py(py, e)))
                })
                .or_else(|| {
                    character_bpe_encoder(encoder, &tables.inner, &spec.model, &tables.vocab_name)
                        .map(|made| made.map_err(|e| to_py(py, e)))
                })
                .or_else(|| {
                    let vocab = &tables.vocab_name;
                    unigram_spans_encoder(
                        encoder,
                        &tables.inner,
                        &spec,
                        &literals,
                        scores.as_deref(),
                        vocab,
                    )
                    .map(|made| made.map_err(|e| to_py(py, e)))
                });
                match model_encoder {
                    Some(stage) => builder.foreign_encoder(stage?),
                    None if matches!(spec.model, ModelSpec::Unigram { .. }) => {
                        let message =
                            format!("a Unigram model runs on the unigram encoder, not {encoder}");
                        return Err(ws_error(py, "UnsupportedTokenizerError", message));
                    }
                    None => builder.encoder(native_encoder(py, &tables.inner, encoder)?),
                }
            }
        };
        builder = match spanner_impl {
            Some(object) => {
                let object = Arc::new(object);
                python.push(object.clone());
                let stage = PySpanner::new(py, object, spanner.to_owned())?;
                builder.foreign_spanner(Box::new(stage))
            }
            None => match patterns {
                Some(patterns) => builder.regex_sequence(&patterns, spanner),
                None if spanner == "regex" => builder.regex(pattern, spanner),
                None if spanner == SENTENCEPIECE_SPANNER => {
                    builder.foreign_spanner(sentencepiece_spanner(py, &spec)?)
                }
                None if spanner == LLAMACPP_WORDPIECE_SPANNER => {
                    builder.foreign_spanner(Box::new(LlamaCppWordPieceSpanner))
                }
                None => builder.scanner(scanner(py, spanner, pattern)?),
            },
        };
        builder = match normalizer_impl {
            Some(object) => {
                let function = Arc::new(object);
                python.push(function.clone());
                builder.foreign_normalizer(Box::new(PyNormalizer::new(function, &spec.normalizer)))
            }
            None => match NormalizeStage::from_spec(&spec.normalizer) {
                Some(stage) => builder.normalizer(stage),
                None => {
                    let message = format!(
                        "the core does not run the normalizer {}; pass the Python normalizer \
                         that runs it (normalizer_impl)",
                        spec.normalizer.kind()
                    );
                    return Err(ws_error(py, "UnsupportedTokenizerError", message));
                }
            },
        };
        builder = builder
            .literals(literals)
            .unk(unk)
            .reads_text(spec.model.reads_text())
            .interrupt(Box::new(check_signals));
        if let Some(steps) = program {
            let program = HfProgram::new(&steps).map_err(|e| to_py(py, regex_unsupported(e)))?;
            builder = builder.program(program);
        }
        let inner = builder.build().map_err(|e| to_py(py, e))?;
        Ok(Self {
            ints: IdInts::new(inner.tables().n_vocab()),
            inner,
            python,
        })
    }

    /// Whether every stage is native (the GIL is released, batches run on threads).
    #[getter]
    fn native(&self) -> bool {
        self.inner.is_native()
    }

    /// This pipeline's encode calls under `policy`, bound once ([`PyPolicyCalls`]).
    fn bind(slf: Bound<'_, Self>, policy: Bound<'_, PyPolicy>) -> PyPolicyCalls {
        PyPolicyCalls {
            pipeline: slf.unbind(),
            policy: policy.unbind(),
        }
    }

    /// A policy: `allowed`/`disallowed` are sets of literal texts; `allowed=None` allows all.
    #[pyo3(signature = (allowed, disallowed))]
    fn policy(&self, allowed: Option<Vec<String>>, disallowed: Vec<String>) -> PyPolicy {
        let Some(allowed) = allowed else {
            return PyPolicy {
                inner: SpecialPolicy::AllowAll,
            };
        };
        // A set of the texts first: o200k_harmony's default policy disallows 1,091 of its
        // 1,091 literals, which a search of the list per literal made 1.2 million compares.
        let flags = |set: &[String]| {
            let set: std::collections::HashSet<&str> = set.iter().map(String::as_str).collect();
            self.inner
                .literals()
                .iter()
                .map(|l| set.contains(l.text.as_str()))
                .collect()
        };
        PyPolicy {
            inner: SpecialPolicy::Mixed {
                allowed: flags(&allowed),
                disallowed: flags(&disallowed),
            },
        }
    }

    /// The ids of `text` under `policy`.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        policy: &PyPolicy,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = Self::text(text, None)?;
        self.with_scratch(py, text.as_str(), &policy.inner, |ids| {
            self.ints.list(py, ids)
        })
    }

    /// The ids of `text` under `policy` as a read-only numpy uint32 array that owns an
    /// exact-size copy of them in numpy's memory (no Python int per id); an ImportError
    /// without numpy (the Python side checks first).
    fn encode_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        policy: &PyPolicy,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = Self::text(text, None)?;
        // The array owns an exact-size copy of the ids (4 bytes per id copied: about 1 % of
        // a call on prose).
        self.with_scratch(py, text.as_str(), &policy.inner, |ids| {
            read_only_ids(py, ids)
        })
    }

    /// The number of tokens of `text`, without building the list.
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>, policy: &PyPolicy) -> PyResult<usize> {
        let text = Self::text(text, None)?;
        self.with_scratch(py, text.as_str(), &policy.inner, |ids| Ok(ids.len()))
    }

    /// `(ids, places, fixed)`: the ids of `text` under `policy`; per token `[byte start, byte
    /// end, char start, char end, word]` as little-endian uint64 bytes (see
    /// `pipeline/offsets/`); and whether the text had surrogates (then the char offsets
    /// count in the fixed text, and the caller maps them back to the str it gave).
    fn encode_with_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        policy: &PyPolicy,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyBytes>, bool)> {
        let text = Self::text(text, None)?;
        let fixed = matches!(text, TextArg::Owned(_));
        let text = text.as_str();
        let mut out = Vec::with_capacity(text.len() / 3 + 4);
        let mut places = Vec::with_capacity(text.len() / 3 + 4);
        let result = if self.inner.is_native() {
            py.allow_threads(|| {
                self.inner
                    .encode_with_offsets(text, &policy.inner, &mut out, &mut places)
            })
        } else {
            self.inner
                .encode_with_offsets(text, &policy.inner, &mut out, &mut places)
        };
        result.map_err(|e| to_py(py, e))?;
        let ids = self.ints.list(py, &out)?;
        let places = PyBytes::new_with(py, places.len() * 40, |buf| {
            for (chunk, value) in buf.chunks_exact_mut(8).zip(places.iter().flatten()) {
                chunk.copy_from_slice(&value.to_le_bytes());
            }
            Ok(())
        })?;
        Ok((ids, places, fixed))
    }

    /// Encode many texts (on native threads when every stage is native): a list of id lists.
    #[pyo3(signature = (texts, policy, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.run_batch(py, texts, &policy.inner, num_threads, |ids| {
            self.ints.list(py, ids)
        })
    }

    /// Encode many texts into one flat buffer: `(ids, offsets)` as little-endian uint32 and
    /// uint64 bytes; text i has ids[offsets[i]:offsets[i + 1]]. No Python int per token.
    #[pyo3(signature = (texts, policy, num_threads=None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let runs = self.encode_runs(py, texts, &policy.inner, num_threads, Ok)?;
        let total: usize = runs.iter().map(|run| run.ids.len()).sum();
        let count: usize = runs.iter().map(|run| run.ends.len()).sum();
        // Written straight into the bytes objects, four (eight) bytes per id (offset).
        let ids = PyBytes::new_with(py, total * 4, |buf| {
            let all = runs.iter().flat_map(|run| &run.ids);
            for (chunk, &id) in buf.chunks_exact_mut(4).zip(all) {
                chunk.copy_from_slice(&id.to_le_bytes());
            }
            Ok(())
        })?;
        let offsets = PyBytes::new_with(py, (count + 1) * 8, |buf| {
            let mut base = 0;
            let ends = runs.iter().flat_map(|run| {
                let start = base;
                base += run.ids.len();
                run.ends.iter().map(move |&end| (start + end) as u64)
            });
            for (chunk, end) in buf.chunks_exact_mut(8).zip(std::iter::once(0).chain(ends)) {
                chunk.copy_from_slice(&end.to_le_bytes());
            }
            Ok(())
        })?;
        Ok((ids, offsets))
    }

    /// Encode the rows of Arrow string arrays straight from their buffers into one framed
    /// buffer; see [`crate::arrow::encode_arrow_flat`].
    #[pyo3(signature = (chunks, policy, num_threads=None, width=4, bos=None, eos=None,
                        empty_is_nothing=false))]
    #[allow(clippy::too_many_arguments)]
    fn encode_arrow_flat<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<ArrowChunk>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
        width: usize,
        bos: Option<u32>,
        eos: Option<u32>,
        empty_is_nothing: bool,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let framing = wordsplit::arrow::Framing {
            width,
            bos,
            eos,
            empty_is_nothing,
        };
        crate::arrow::encode_arrow_flat(self, py, &chunks, &policy.inner, num_threads, framing)
    }

    /// Encode the documents of a buffer read from a file, cut at `separator`, into one flat
    /// buffer; see [`crate::documents::encode_documents_flat`].
    #[pyo3(signature = (buffer, separator, limit, last, policy, num_threads=None, width=4,
                        eos=None, start=0))]
    #[allow(clippy::too_many_arguments)]
    fn encode_documents_flat<'py>(
        &self,
        py: Python<'py>,
        buffer: PyBuffer<u8>,
        separator: &[u8],
        limit: usize,
        last: bool,
        policy: &PyPolicy,
        num_threads: Option<usize>,
        width: usize,
        eos: Option<u32>,
        start: u64,
    ) -> PyResult<(usize, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        crate::documents::encode_documents_flat(
            self,
            py,
            &buffer,
            separator,
            limit,
            last,
            &policy.inner,
            num_threads,
            width,
            eos,
            start,
        )
    }
}

/// The native encoder `name`, its tables built if it needs them.
pub(crate) fn native_encoder(
    py: Python<'_>,
    tables: &Arc<MergeTables>,
    name: &str,
) -> PyResult<EncoderKind> {
    let kind = EncoderKind::from_name(name)
        .ok_or_else(|| unknown_component(py, "encoder", name, &EncoderKind::NAMES.join(", ")))?;
    if kind == EncoderKind::Backtrack {
        let ready =
            py.allow_threads(|| tables.backtrack_tables().map(|_| ()).map_err(str::to_owned));
        ready.map_err(|e| ws_error(py, "UnsupportedTokenizerError", e))?;
    }
    Ok(kind)
}

/// The scanner `name`, registered for exactly `pattern`, or UnsupportedTokenizerError.
fn scanner(py: Python<'_>, name: &str, pattern: &str) -> PyResult<Box<dyn Scanner>> {
    let registered = spanners::SCANNER_PATTERNS
        .iter()
        .any(|&(scanner, proven)| scanner == name && proven == pattern);
    match spanners::scanner_for_pattern(pattern) {
        Some(spanner) if registered => Ok(spanner),
        _ => Err(ws_error(
            py,
            "UnsupportedTokenizerError",
            format!(
                "the {name} handles only the patterns it was proven equal to, not {}; \
                 use spanner='auto' or spanner='regex'",
                py_repr(py, pattern)
            ),
        )),
    }
}

/// `offset_pairs(places, field)`: the `(start, end)` tuples of fields `field` and `field + 1`
/// of the token places `Pipeline.encode_with_offsets` returns (5 little-endian uint64 per
/// token). Adjacent tokens share the int object where one ends and the next starts.
#[pyfunction]
pub(crate) fn offset_pairs<'py>(
    py: Python<'py>,
    places: &[u8],
    field: usize,
) -> PyResult<Bound<'py, PyList>> {
    let read = |i: usize| {
        let at = 8 * i;
        u64::from_le_bytes(places[at..at + 8].try_into().expect("8 bytes"))
    };
    if field > 3 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "offset_pairs: field {field} has no end field after it (0: bytes, 2: chars)"
        )));
    }
    let count = places.len() / 40;
    let mut pairs = Vec::with_capacity(count);
    let mut last: Option<(u64, Bound<'py, PyAny>)> = None;
    for token in 0..count {
        let (start, end) = (read(5 * token + field), read(5 * token + field + 1));
        let start_int = match &last {
            Some((value, int)) if *value == start => int.clone(),
            _ => start.into_pyobject(py)?.into_any(),
        };
        let end_int = if end == start {
            start_int.clone()
        } else {
            end.into_pyobject(py)?.into_any()
        };
        pairs.push(pyo3::types::PyTuple::new(py, [start_int, end_int.clone()])?);
        last = Some((end, end_int));
    }
    PyList::new(py, pairs)
}

/// Ctrl-C during a long encode: CPython's signal handler only sets a flag, which a native
/// call has to look at itself, so the pipeline calls this between blocks of pieces (about
/// every millisecond of work); the KeyboardInterrupt (or a handler's exception) ends the
/// encode as the error of the call.
fn check_signals() -> Result<(), wordsplit::Error> {
    Python::with_gil(|py| py.check_signals()).map_err(|e| wordsplit::Error::Foreign(Box::new(e)))
}
