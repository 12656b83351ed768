//! The regex helpers of the equivalence tests: the native regex spanner, split programs and
//! scanners run on lists of texts, as the Python spanners' twins.

use pyo3::prelude::*;
use wordsplit::pipeline::regex_unsupported;
use wordsplit::spanners::{self, hf_program::StepSpec};

use crate::errors::{no_scanner, to_py, ws_error};

/// UnsupportedTokenizerError: the native regex spanner cannot run this pattern.
fn unsupported(py: Python<'_>, reason: String) -> PyErr {
    to_py(py, regex_unsupported(reason))
}

/// `regex_plan(pattern)`: how the native regex spanner runs an expanded pattern, "dfa" or
/// "backtracking"; UnsupportedTokenizerError if it cannot (the Python spanner is used then).
#[pyfunction]
pub(crate) fn regex_plan(py: Python<'_>, pattern: &str) -> PyResult<&'static str> {
    let spanner = spanners::RegexSpanner::new(pattern).map_err(|e| unsupported(py, e))?;
    Ok(if spanner.is_planned() {
        "dfa"
    } else {
        "backtracking"
    })
}

/// `regex_split(patterns, texts, sequence=False)`: each text's pieces by the native regex
/// spanner (one expanded pattern), or by the sequence of `patterns`; for the equivalence
/// tests. A text the pattern does not cover gives None.
#[pyfunction]
#[pyo3(signature = (patterns, texts, sequence=false))]
pub(crate) fn regex_split(
    py: Python<'_>,
    patterns: Vec<String>,
    texts: Vec<String>,
    sequence: bool,
) -> PyResult<Vec<Option<Vec<String>>>> {
    type Split =
        Box<dyn Fn(&str, &mut Vec<usize>) -> Result<(), spanners::SplitError> + Send + Sync>;
    let split: Split = if sequence {
        let spanner = spanners::RegexSequence::new(&patterns).map_err(|e| unsupported(py, e))?;
        Box::new(move |text, ends| spanner.split(text, ends))
    } else {
        let [pattern] = patterns.as_slice() else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "regex_split takes one pattern unless sequence=True",
            ));
        };
        let spanner = spanners::RegexSpanner::new(pattern).map_err(|e| unsupported(py, e))?;
        Box::new(move |text, ends| spanner.split(text, ends))
    };
    Ok(py.allow_threads(|| {
        texts
            .iter()
            .map(|text| {
                let mut ends = Vec::new();
                split(text, &mut ends).ok()?;
                Some(
                    spanners::pieces_at(text, &ends)
                        .map(str::to_owned)
                        .collect(),
                )
            })
            .collect()
    }))
}

/// `hf_program_spans(steps, texts)`: each text's pieces by the native split program, as the
/// Python `HFSplitSpanner.spans` gives them: `(start, end)` char offsets, or `(start, end,
/// " ")` for a piece after an inserted space; for the equivalence tests. `steps`: per step
/// `None` (`add_prefix_space`) or `(pattern, behavior, invert)`, the pattern expanded (or one a
/// scanner is registered for). UnsupportedTokenizerError if a step cannot run natively.
/// One piece of `hf_program_spans`: char offsets, and the inserted space if any.
type ProgramSpan = (usize, usize, Option<&'static str>);

#[pyfunction]
pub(crate) fn hf_program_spans(
    py: Python<'_>,
    steps: Vec<StepSpec>,
    texts: Vec<String>,
) -> PyResult<Vec<Vec<ProgramSpan>>> {
    let program = spanners::HfProgram::new(&steps).map_err(|e| unsupported(py, e))?;
    let results = py.allow_threads(|| {
        texts
            .iter()
            .map(|text| {
                let mut pieces = Vec::new();
                program.pieces(text, &mut pieces)?;
                // Byte offsets to char offsets, walking forward (the pieces are in order).
                let (mut byte, mut chars) = (0, 0);
                let mut char_of = |at: usize| {
                    chars += text[byte..at].chars().count();
                    byte = at;
                    chars
                };
                Ok(pieces
                    .iter()
                    .map(|p| (char_of(p.start), char_of(p.end), p.space.then_some(" ")))
                    .collect())
            })
            .collect::<Result<Vec<_>, spanners::SplitError>>()
    });
    results.map_err(|e| match e {
        spanners::SplitError::Engine(message) => ws_error(py, "ComponentError", message),
        spanners::SplitError::Gap(at) => {
            ws_error(py, "ComponentError", format!("no match at byte {at}"))
        }
    })
}

/// `hf_program_is_bert(steps)`: whether the native split program of `steps` (as
/// `hf_program_spans` takes them) runs them as BERT's pre-tokenizer, in one scan.
#[pyfunction]
pub(crate) fn hf_program_is_bert(py: Python<'_>, steps: Vec<StepSpec>) -> PyResult<bool> {
    let program = spanners::HfProgram::new(&steps).map_err(|e| unsupported(py, e))?;
    Ok(program.is_bert())
}

/// `scan(pattern, texts)`: each text cut into pieces by the scanner registered for `pattern`
/// (for the equivalence proofs against the regex); UnsupportedTokenizerError if there is none.
#[pyfunction]
pub(crate) fn scan(
    py: Python<'_>,
    pattern: &str,
    texts: Vec<String>,
) -> PyResult<Vec<Vec<String>>> {
    let spanner = spanners::scanner_for_pattern(pattern).ok_or_else(|| no_scanner(py, pattern))?;
    Ok(py.allow_threads(|| {
        texts
            .iter()
            .map(|text| {
                let mut ends = Vec::new();
                spanner.split(text, &mut ends);
                spanners::pieces_at(text, &ends)
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
    }))
}
