//! The regex spanners in a build without the `regex` feature: types without values, whose
//! constructors refuse every pattern (the builder reports [`crate::Error::Unsupported`]), so
//! fancy-regex and regex-automata are left out of the build. The WebAssembly module is built so:
//! every vocabulary its readers accept has a hand-written scanner (see
//! [`super::scanner_for_pattern`]).

use super::SplitError;
use crate::pipeline::SpannedText;

/// Why every constructor here fails.
const NOT_BUILT: &str = "this build of wordsplit has no regex engine (the `regex` feature of the \
    wordsplit crate is off, as in the WebAssembly module): only the patterns of the hand-written \
    scanners (GPT-2, cl100k, Qwen2, o200k) run; the Python package runs any pattern";

/// The regex spanner: not in this build.
pub enum RegexSpanner {}

impl RegexSpanner {
    /// Always `Err` (no regex engine in this build).
    pub fn new(_pattern: &str) -> Result<Self, String> {
        Err(NOT_BUILT.into())
    }

    /// Never called: there is no value to call it on.
    pub fn split(&self, _text: &str, _out: &mut Vec<usize>) -> Result<(), SplitError> {
        match *self {}
    }
}

/// The llama.cpp-style sequence of regexes: not in this build.
pub enum RegexSequence {}

impl RegexSequence {
    /// Always `Err` (no regex engine in this build).
    pub fn new(_patterns: &[String]) -> Result<Self, String> {
        Err(NOT_BUILT.into())
    }

    /// Never called: there is no value to call it on.
    pub fn split(&self, _text: &str, _out: &mut Vec<usize>) -> Result<(), SplitError> {
        match *self {}
    }
}

/// The native run of a HuggingFace split program: not in this build (nothing makes one).
pub enum HfProgram {}

impl HfProgram {
    /// Never called: there is no value to call it on.
    pub fn is_bert(&self) -> bool {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub fn spans(
        &self,
        _text: &str,
        _ends: &mut Vec<usize>,
    ) -> Result<Option<SpannedText>, SplitError> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_is_refused_with_the_reason() {
        for result in [
            RegexSpanner::new(r"\w+|\s+").err(),
            RegexSequence::new(&[r"\w+".to_string()]).err(),
        ] {
            assert!(result.unwrap().contains("no regex engine"));
        }
    }
}
