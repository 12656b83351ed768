//! `wordsplit._native`: the Python bindings of the `wordsplit` core crate (module
//! registration only; one file per concept).
//!
//! `ids` (result lists, ids read from Python), `array` (ids as a numpy array), `tables` (vocabulary tables, decode),
//! `formats` (the loaders' fast paths), `encoder` (one native encoder), `pipeline` (the whole encode), `batch` (batches on native
//! threads), `arrow` (Arrow arrays), `documents` (a file's buffer of documents), `train` (word counts, merges), `regex` (the regex helpers
//! of the equivalence tests), `stages` (Python components as the core's stages) and `errors`
//! (core errors as `wordsplit.errors` exceptions). Work on text or id lists runs with the GIL
//! released.

mod array;
mod arrow;
mod batch;
mod documents;
mod encoder;
mod errors;
mod formats;
mod ids;
mod pipeline;
mod regex;
mod stages;
mod tables;
mod train;
mod utf8;

use pyo3::prelude::*;
use wordsplit::batch::{ALONE_BELOW_IDS, ALONE_BELOW_TEXT_BYTES};
use wordsplit::{spanners, unicode_tables, EncoderKind};

/// mimalloc for every Rust allocation of the extension (see Cargo.toml for why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pipeline::offset_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(regex::scan, m)?)?;
    m.add_function(wrap_pyfunction!(train::rank_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(regex::regex_plan, m)?)?;
    m.add_function(wrap_pyfunction!(regex::regex_split, m)?)?;
    m.add_function(wrap_pyfunction!(regex::hf_program_spans, m)?)?;
    m.add_function(wrap_pyfunction!(regex::hf_program_is_bert, m)?)?;
    m.add_function(wrap_pyfunction!(stages::has_native_normalizer, m)?)?;
    m.add_function(wrap_pyfunction!(stages::native_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(stages::native_alignment, m)?)?;
    m.add_function(wrap_pyfunction!(stages::native_spanner_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(stages::pipeline_spec_text, m)?)?;
    m.add_function(wrap_pyfunction!(tables::first_bad_merge, m)?)?;
    m.add_function(wrap_pyfunction!(formats::gguf_scan_head, m)?)?;
    m.add_function(wrap_pyfunction!(formats::gguf_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(formats::gemma4_merge_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(formats::sentencepiece_model, m)?)?;
    m.add_function(wrap_pyfunction!(formats::score_merge_pairs, m)?)?;
    m.add_class::<formats::PackedStrings>()?;
    m.add_class::<tables::PyTables>()?;
    m.add_class::<encoder::PyEncoder>()?;
    m.add_class::<pipeline::PyPolicy>()?;
    m.add_class::<pipeline::PyPipeline>()?;
    m.add_class::<pipeline::PyPolicyCalls>()?;
    m.add_class::<train::PyWordCounter>()?;
    m.add(
        "SCANNERS",
        spanners::SCANNER_PATTERNS
            .iter()
            .map(|&(name, pattern)| (name, pattern))
            .collect::<Vec<_>>(),
    )?;
    m.add("ENCODERS", EncoderKind::NAMES.to_vec())?;
    m.add("ALONE_BELOW_TEXT_BYTES", ALONE_BELOW_TEXT_BYTES)?;
    m.add("ALONE_BELOW_IDS", ALONE_BELOW_IDS)?;
    m.add("UNICODE_VERSION", unicode_tables::UNICODE_VERSION)?;
    Ok(())
}
