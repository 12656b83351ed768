//! Where the crate's tests find their files: the one place, used by the integration tests
//! (`mod support;`) and the unit tests (`crate::testing::data`).
//!
//! A test reads only files inside the crate, so it also runs in the packaged crate (`cargo
//! package`, then `cargo test` in the unpacked `.crate`, as a crates.io user would):
//! - `data/vocabs/`: the registered vocabularies' files (the Python package's
//!   `src/wordsplit/vocabs/data/`, which the crate's `data/vocabs` links to and the packaged
//!   crate holds as files);
//! - `tests/data/`: the crate's own test files, and links to the few files of the repository's
//!   `tests/` its tests read (the packaged crate holds them as files). A test that needs more
//!   of the repository's test data uses [`repo_root`] and is left out of the package
//!   (`exclude` in Cargo.toml).
#![allow(dead_code)] // each test binary uses some of them

use std::path::{Path, PathBuf};

/// The crate's directory.
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A bundled vocabulary file by name, e.g. `cl100k_base.tiktoken.gz`.
pub fn vocab_file(file: &str) -> PathBuf {
    crate_dir().join("data/vocabs").join(file)
}

/// The bundled rank file a registered vocabulary (or alias) is read from.
pub fn rank_file(name: &str) -> PathBuf {
    let file = match name {
        "gpt2" | "r50k_base" => "r50k_base",
        "p50k_base" | "p50k_edit" => "p50k_base",
        "o200k_base" | "o200k_harmony" => "o200k_base",
        "cl100k_base" => "cl100k_base",
        "qwen3" => "qwen3",
        other => panic!("no bundled rank file for {other}"),
    };
    vocab_file(&format!("{file}.tiktoken.gz"))
}

/// A file of the crate's test data, by its path below `tests/data/`.
pub fn test_file(path: &str) -> PathBuf {
    crate_dir().join("tests/data").join(path)
}

/// The repository's root (the first directory above the crate holding `tests/data/formats`),
/// for the differential tests against the Python package, which read its test data and are not
/// in the packaged crate. Panics outside the repository.
pub fn repo_root() -> PathBuf {
    crate_dir()
        .ancestors()
        .find(|dir| dir.join("tests/data/formats/digests.json").is_file())
        .unwrap_or_else(|| {
            panic!(
                "no tests/data/formats/digests.json above {}",
                crate_dir().display()
            )
        })
        .to_path_buf()
}
