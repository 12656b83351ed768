//! The Python stages: Python components (plug-ins, or the Python regex spanner for a pattern
//! the native one refuses) as implementations of the core's stage traits, [`Normalizer`],
//! [`Spanner`] and [`Encoder`]; and the core's SentencePiece stages, which are native
//! implementations of the same traits, made from the pipeline's typed description. Each call
//! into Python takes the GIL; a Python exception travels through
//! the core as [`Error::Foreign`] and comes out of it as itself (`errors.rs`). The contract
//! checks (types, coverage, ids in range) raise ComponentError worded as the Python engine
//! words them.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use wordsplit::encoders::sentencepiece;
use wordsplit::normalizers::AlignmentParts;
use wordsplit::pipeline::SpannedText;
use wordsplit::spanners::llamacpp::LlamaCppWordPieceSpanner;
use wordsplit::spanners::sentencepiece::SentencePieceSpanner;
use wordsplit::spec::{NormalizerSpec, PipelineSpec};
use wordsplit::{Encoder, Error, Literal, MergeTables, NormalizeStage, Normalizer, Spanner};

use crate::errors::{component_error, py_repr, to_py};

/// The registry name of the SentencePiece spanner (`wordsplit.spanners.sentencepiece`).
pub(crate) const SENTENCEPIECE_SPANNER: &str = "sentencepiece";
/// The registry name of llama.cpp's WordPiece spanner (`wordsplit.spanners.llamacpp`).
pub(crate) const LLAMACPP_WORDPIECE_SPANNER: &str = "llamacpp-wordpiece";

/// Whether the core runs a normalizer stage (its JSON object) itself: the Unicode forms,
/// SentencePiece's normalizer (with its character map), Metaspace, programs of literal Replace
/// and Prepend steps, programs of Unicode forms, Lowercase, StripAccents, Strip and Precompiled,
/// BertNormalizer, LlamaCppBert and LlamaCppUnigram. `wordsplit.engines.native` asks, and passes
/// no Python normalizer for it.
#[pyfunction]
pub(crate) fn has_native_normalizer(py: Python<'_>, normalizer: &str) -> PyResult<bool> {
    let spec = NormalizerSpec::from_text(normalizer).map_err(|e| to_py(py, e.into()))?;
    Ok(NormalizeStage::from_spec(&spec).is_some())
}

/// The core's stage of a normalizer (its JSON object); UnsupportedTokenizerError when the core
/// does not run it.
fn native_stage(py: Python<'_>, normalizer: &str) -> PyResult<NormalizeStage> {
    let spec = NormalizerSpec::from_text(normalizer).map_err(|e| to_py(py, e.into()))?;
    NormalizeStage::from_spec(&spec).ok_or_else(|| {
        let message = format!("the core does not run the normalizer {}", spec.kind());
        to_py(py, Error::Unsupported(message))
    })
}

/// `native_normalize(normalizer, texts)`: each text as the core's stage of `normalizer` (its
/// JSON object) normalizes it, for the equivalence tests against the Python stages.
#[pyfunction]
pub(crate) fn native_normalize(
    py: Python<'_>,
    normalizer: &str,
    texts: Vec<String>,
) -> PyResult<Vec<String>> {
    let stage = native_stage(py, normalizer)?;
    texts
        .iter()
        .map(|text| stage.normalized(text).map_err(|e| to_py(py, e)))
        .collect()
}

/// A normalized text, its head's alignment (per character: the original char range, and
/// whether it is that text unchanged) and how many last characters follow, each itself.
type AlignedText = (String, Vec<(usize, usize, bool)>, usize);

/// `native_alignment(normalizer, text)`: `(normalized, head, tail)` as the core's stage of
/// `normalizer` aligns `text` (`Normalizer::alignment_parts`: per character of `head` its
/// original char range and whether it is that text unchanged, then the text's last `tail`
/// characters, each itself), or None when it leaves `text` as it is or aligns nothing itself.
#[pyfunction]
pub(crate) fn native_alignment(
    py: Python<'_>,
    normalizer: &str,
    text: &str,
) -> PyResult<Option<AlignedText>> {
    let NormalizeStage::Foreign(stage) = native_stage(py, normalizer)? else {
        return Ok(None);
    };
    if !stage.tracks_alignment() {
        return Ok(None);
    }
    let parts = stage.alignment_parts(text).map_err(|e| to_py(py, e))?;
    Ok(parts.map(|p| (p.normalized, p.head, p.tail)))
}

/// `native_spanner_pieces(spanner, text)`: the pieces (each with its prefix) the core's spanner
/// of that name cuts `text` into, for the equivalence tests against the Python spanners; only
/// the spanners the core runs for a kind of spanner stage (`llamacpp-wordpiece`).
#[pyfunction]
pub(crate) fn native_spanner_pieces(
    py: Python<'_>,
    spanner: &str,
    text: &str,
) -> PyResult<Vec<String>> {
    if spanner != LLAMACPP_WORDPIECE_SPANNER {
        let message = format!("the core has no spanner {spanner} to run alone");
        return Err(to_py(py, Error::Unsupported(message)));
    }
    let mut ends = Vec::new();
    let spanned = LlamaCppWordPieceSpanner
        .spans(text, &mut ends)
        .map_err(|e| to_py(py, e))?;
    let made = spanned
        .as_ref()
        .map_or(text, |spanned| spanned.text.as_str());
    let mut start = 0;
    Ok(ends
        .iter()
        .map(|&end| {
            let piece = made[start..end].to_owned();
            start = end;
            piece
        })
        .collect())
}

/// A pipeline's JSON text as the core reads it and writes it back (its canonical text): the
/// Python package's tests check it is the text the package writes, for any pipeline.
#[pyfunction]
pub(crate) fn pipeline_spec_text(py: Python<'_>, text: &str) -> PyResult<String> {
    PipelineSpec::from_text(text)
        .map(|spec| spec.to_text())
        .map_err(|e| to_py(py, e.into()))
}

/// The native `sentencepiece` spanner of a SentencePiece pipeline.
pub(crate) fn sentencepiece_spanner(
    py: Python<'_>,
    spec: &PipelineSpec,
) -> PyResult<Box<dyn Spanner>> {
    SentencePieceSpanner::new(spec)
        .map(|spanner| Box::new(spanner) as Box<dyn Spanner>)
        .map_err(|e| to_py(py, e))
}

/// The native `score-merge` or `rank-merge` encoder of a vocabulary (its tables, pipeline,
/// special literals and, for a model that has them, its scores by id), or None for another
/// encoder name.
pub(crate) fn sentencepiece_encoder(
    py: Python<'_>,
    tables: &Arc<MergeTables>,
    name: &str,
    spec: &PipelineSpec,
    literals: &[Literal],
    scores: Option<&[f64]>,
) -> Option<PyResult<Box<dyn Encoder>>> {
    let specials: Vec<(String, u32)> = literals
        .iter()
        .filter(|l| l.special)
        .map(|l| (l.text.clone(), l.id))
        .collect();
    sentencepiece::sentencepiece_encoder(name, tables.clone(), spec, &specials, scores)
        .map(|made| made.map_err(|e| to_py(py, e)))
}

/// A Python exception as a core error.
fn foreign(error: PyErr) -> Error {
    Error::Foreign(Box::new(error))
}

/// A Python object shared by a stage and the pipeline that shows it to the garbage collector.
pub(crate) type Shared = Arc<Py<PyAny>>;

/// A Python normalizer: a callable `str -> str` running a normalizer stage.
pub(crate) struct PyNormalizer {
    function: Shared,
    /// How messages name it: a plug-in by its registered name, another by its kind.
    name: String,
    /// HF's normalizers (a `Sequence`, or a step alone) run by Python's `ProgramNormalizer`,
    /// which aligns its output itself (`alignment_parts`).
    program: bool,
    /// Whether the `normalized` added tokens are looked for in its output: not for a program
    /// of ByteLevel's `add_prefix_space` alone, whose second pass runs on the text as it is,
    /// as in the Python engine (`wordsplit.vocab.RAW_SECOND_PASS_NORMALIZERS`).
    normalizes_literals: bool,
}

impl PyNormalizer {
    /// The stage of `function`, which runs `spec`.
    pub(crate) fn new(function: Shared, spec: &NormalizerSpec) -> Self {
        let name = match spec {
            NormalizerSpec::Plugin(name) => name.clone(),
            other => other.kind().to_owned(),
        };
        let program = matches!(spec, NormalizerSpec::Sequence(_))
            || spec.is_step()
                && !matches!(
                    spec,
                    NormalizerSpec::Nfc
                        | NormalizerSpec::Nfd
                        | NormalizerSpec::Nfkc
                        | NormalizerSpec::Nfkd
                );
        let prefix_space_only = matches!(spec, NormalizerSpec::Sequence(steps) if steps == &[NormalizerSpec::PrefixSpace]);
        Self {
            function,
            name,
            program,
            normalizes_literals: !prefix_space_only && *spec != NormalizerSpec::None,
        }
    }
}

impl Normalizer for PyNormalizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        python_normalize(&self.function, &self.name, text)
    }

    fn tracks_alignment(&self) -> bool {
        self.program
    }

    /// From its `alignment_parts` method (Python's `wordsplit.offsets.program_alignment_parts`:
    /// HF's alignment carried through every step).
    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        Python::with_gil(|py| {
            let result = self
                .function
                .bind(py)
                .call_method1("alignment_parts", (text,))
                .map_err(foreign)?;
            type Parts<'py> = (
                Bound<'py, PyString>,
                Option<Vec<(usize, usize, bool)>>,
                usize,
            );
            let (normalized, head, tail): Parts<'_> = result.extract().map_err(foreign)?;
            let Some(head) = head else {
                return Ok(None);
            };
            let normalized = text_without_surrogates(&normalized).map_err(foreign)?;
            Ok(Some(AlignmentParts {
                normalized,
                head,
                tail,
            }))
        })
    }

    fn normalizes_literals(&self) -> bool {
        self.normalizes_literals
    }
}

/// A Python spanner: `split(str) -> list[str]`, or, when it declares `drops_text`,
/// `spans(str)` giving `(start, end)` or `(start, end, prefix)` spans; and its registry name.
pub(crate) struct PySpanner {
    pub(crate) object: Shared,
    pub(crate) name: String,
    drops_text: bool,
}

impl PySpanner {
    /// The stage of a Python spanner object, its `drops_text` read once, here.
    pub(crate) fn new(py: Python<'_>, object: Shared, name: String) -> PyResult<Self> {
        // As Python's getattr(spanner, "drops_text", False): only a missing attribute is False.
        let drops_text = match object.bind(py).getattr("drops_text") {
            Ok(value) => value.is_truthy()?,
            Err(error) if error.is_instance_of::<pyo3::exceptions::PyAttributeError>(py) => false,
            Err(error) => return Err(error),
        };
        Ok(Self {
            object,
            name,
            drops_text,
        })
    }
}

impl Spanner for PySpanner {
    fn name(&self) -> &str {
        &self.name
    }

    fn spans(&self, text: &str, ends: &mut Vec<usize>) -> Result<Option<SpannedText>, Error> {
        if self.drops_text {
            python_spans(&self.object, &self.name, text, ends)
        } else {
            python_split(&self.object, &self.name, text, ends).map(|()| None)
        }
    }
}

/// A Python encoder: `encode_piece(bytes) -> list[int]`, its registry name, and the size of
/// the vocabulary its ids must be below.
pub(crate) struct PyEncoderStage {
    pub(crate) object: Shared,
    pub(crate) name: String,
    pub(crate) n_vocab: usize,
}

impl Encoder for PyEncoderStage {
    fn name(&self) -> &str {
        &self.name
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        python_encode(&self.object, &self.name, self.n_vocab, piece, out)
    }
}

/// `text` as a Rust string: lone surrogates become U+FFFD and surrogate pairs their character,
/// as tiktoken does (`text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`).
pub(crate) fn text_without_surrogates(text: &Bound<'_, PyString>) -> PyResult<String> {
    if let Ok(plain) = text.to_str() {
        return Ok(plain.to_owned());
    }
    let utf16 = text.call_method1("encode", ("utf-16", "surrogatepass"))?;
    utf16
        .call_method1("decode", ("utf-16", "replace"))?
        .downcast_into::<PyString>()?
        .to_str()
        .map(str::to_owned)
}

/// The Python normalizer's output for `text` (surrogates fixed as in the input).
fn python_normalize(function: &Py<PyAny>, name: &str, text: &str) -> Result<String, Error> {
    Python::with_gil(|py| {
        let result = function.bind(py).call1((text,)).map_err(foreign)?;
        let Ok(normalized) = result.downcast::<PyString>() else {
            let kind = result.get_type().name().map_err(foreign)?;
            return Err(component_error(
                py,
                format!(
                    "normalizer {} must return a str, not {kind}",
                    py_repr(py, name)
                ),
            ));
        };
        text_without_surrogates(normalized).map_err(foreign)
    })
}

/// The ends of the pieces the Python spanner cuts `text` into (empty pieces skipped), after
/// checking that they are str and concatenate to `text`.
fn python_split(
    spanner: &Py<PyAny>,
    name: &str,
    text: &str,
    ends: &mut Vec<usize>,
) -> Result<(), Error> {
    Python::with_gil(|py| {
        let broken = || {
            component_error(
                py,
                format!(
                    "spanner {}: split() must return a list of str that concatenate to its input",
                    py_repr(py, name)
                ),
            )
        };
        let pieces = spanner
            .bind(py)
            .call_method1("split", (text,))
            .map_err(foreign)?;
        let pieces = pieces.downcast::<PyList>().map_err(|_| broken())?;
        let mut position = 0;
        for piece in pieces.iter() {
            let piece = piece.downcast::<PyString>().map_err(|_| broken())?;
            let piece = piece.to_str().map_err(|_| broken())?;
            if !text[position..].starts_with(piece) {
                return Err(broken());
            }
            if !piece.is_empty() {
                position += piece.len();
                ends.push(position);
            }
        }
        if position != text.len() {
            return Err(broken());
        }
        Ok(())
    })
}

/// The pieces of a Python spanner that drops text, from its `spans(text)`, checked: a list of
/// `(start, end)` or `(start, end, prefix)` tuples, int char offsets in order within `text`, a
/// str prefix. `ends` gets the piece ends (empty pieces without a prefix skipped) in `text`
/// when the spans cover it without prefixes (then `None`: the common case costs no copy), else
/// in the text the pieces make, which is returned.
fn python_spans(
    spanner: &Py<PyAny>,
    name: &str,
    text: &str,
    ends: &mut Vec<usize>,
) -> Result<Option<SpannedText>, Error> {
    Python::with_gil(|py| {
        let broken = || {
            component_error(
                py,
                format!(
                    "spanner {}: spans() must return a list of (start, end) or (start, end, prefix) \
                     tuples: int offsets in order within its input, a str prefix",
                    py_repr(py, name)
                ),
            )
        };
        let spans = spanner
            .bind(py)
            .call_method1("spans", (text,))
            .map_err(foreign)?;
        let spans = spans.downcast::<PyList>().map_err(|_| broken())?;
        // Char offsets → byte offsets, walking forward (the spans are in order).
        let ascii = text.is_ascii();
        let (mut at_char, mut at_byte) = (0usize, 0usize);
        let mut byte_of = |index: usize| -> Option<usize> {
            if ascii {
                return (index <= text.len()).then_some(index);
            }
            while at_char < index {
                at_byte += text[at_byte..].chars().next()?.len_utf8();
                at_char += 1;
            }
            Some(at_byte)
        };
        let mut pieces: Vec<(usize, usize, Option<String>)> = Vec::with_capacity(spans.len());
        let (mut position, mut previous_end, mut covering) = (0usize, 0usize, true);
        for span in spans.iter() {
            let span = span.downcast::<PyTuple>().map_err(|_| broken())?;
            if span.len() != 2 && span.len() != 3 {
                return Err(broken());
            }
            let offset = |i: usize| -> Option<usize> {
                let item = span.get_item(i).ok()?;
                if !item.is_exact_instance_of::<pyo3::types::PyInt>() {
                    return None;
                }
                item.extract::<usize>().ok()
            };
            let (Some(start), Some(end)) = (offset(0), offset(1)) else {
                return Err(broken());
            };
            let prefix = if span.len() == 3 {
                let item = span.get_item(2).map_err(|_| broken())?;
                let prefix = item.downcast::<PyString>().map_err(|_| broken())?;
                Some(prefix.to_str().map_err(|_| broken())?.to_owned())
            } else {
                None
            }
            .filter(|p| !p.is_empty());
            if start < position || end < start {
                return Err(broken());
            }
            let (Some(start_byte), Some(end_byte)) = (byte_of(start), byte_of(end)) else {
                return Err(broken());
            };
            position = end;
            if start_byte == end_byte && prefix.is_none() {
                continue;
            }
            covering &= prefix.is_none() && start_byte == previous_end;
            previous_end = end_byte;
            pieces.push((start_byte, end_byte, prefix));
        }
        if covering && previous_end == text.len() {
            ends.extend(pieces.iter().map(|piece| piece.1));
            return Ok(None);
        }
        let mut kept = String::with_capacity(text.len() + pieces.len());
        let mut placed = Vec::with_capacity(pieces.len());
        for (start, end, prefix) in pieces {
            let prefix = prefix.unwrap_or_default();
            kept.push_str(&prefix);
            kept.push_str(&text[start..end]);
            ends.push(kept.len());
            placed.push((start, end, prefix.len()));
        }
        Ok(Some(SpannedText {
            text: kept,
            pieces: placed,
        }))
    })
}

/// Append the Python encoder's ids of `piece` to `out`, after checking they are token ids.
fn python_encode(
    encoder: &Py<PyAny>,
    name: &str,
    n_vocab: usize,
    piece: &[u8],
    out: &mut Vec<u32>,
) -> Result<(), Error> {
    Python::with_gil(|py| {
        let bytes = PyBytes::new(py, piece);
        let ids = encoder
            .bind(py)
            .call_method1("encode_piece", (&bytes,))
            .map_err(foreign)?;
        let broken = || {
            let shown = bytes
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| format!("{piece:?}"));
            component_error(
                py,
                format!(
                    "encoder {}: encode_piece({shown}) must return a list of token ids below {n_vocab}",
                    py_repr(py, name)
                ),
            )
        };
        let ids = ids.downcast::<PyList>().map_err(|_| broken())?;
        let start = out.len();
        for id in ids.iter() {
            // `type(id) is int`, as the Python engine checks
            if !id.is_exact_instance_of::<pyo3::types::PyInt>() {
                out.truncate(start);
                return Err(broken());
            }
            match id.extract::<u64>() {
                Ok(value) if (value as usize) < n_vocab => out.push(value as u32),
                _ => {
                    out.truncate(start);
                    return Err(broken());
                }
            }
        }
        Ok(())
    })
}
