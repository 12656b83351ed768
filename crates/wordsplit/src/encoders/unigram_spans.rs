//! `unigram` with offsets: the [`Unigram`] encoder, and the part of its piece each of its
//! tokens stands for ([`Encoder::token_lengths`]), which the offsets walk places through the
//! normalizer's alignment (`pipeline/offsets`).
//!
//! A Unigram token spells its text, except three kinds: the unknown token stands for a run of
//! one or more unknown characters; a byte-fallback token (`<0xNN>`) for one byte of such a
//! run; an unknown run that is a token's text (HF's rule) is that token, which spells it. The
//! lengths are read off the search's own path ([`Unigram::encode_with_lengths`]), as the
//! Python package's engine reads them off its Viterbi path (`UnigramEncoder.tokens`):
//! byte-fallback tokens one byte each, where HF gives each the whole run's offsets
//! ([`crate::Tokenizer::encoding`] widens them so).
//!
//! ```
//! use std::sync::Arc;
//! use wordsplit::encoders::unigram::{Style, Unigram};
//! use wordsplit::encoders::unigram_spans::UnigramSpans;
//! use wordsplit::encoders::Encoder;
//! use wordsplit::MergeTables;
//!
//! let pieces = ["<unk>", "a", "b", "ab", "<0xC3>", "<0xA9>"];
//! let tokens = pieces.iter().enumerate().map(|(i, p)| (p.as_bytes(), i as u32));
//! let tables = Arc::new(MergeTables::from_tokens(tokens, &[], 6, None, false).unwrap());
//! let scores = [0.0, -1.0, -1.0, -0.5, -9.0, -9.0];
//! let model = Unigram::with_style(tables, Style::Hf, &scores, Some(0), false, "tiny");
//! let spans = UnigramSpans::wrap(model.unwrap());
//! let (mut ids, mut lengths) = (Vec::new(), Vec::new());
//! spans.encode_piece("abxyé".as_bytes(), &mut ids).unwrap();
//! assert_eq!(ids, [3, 0]); // "ab", then the unknown run "xyé"
//! assert!(spans.token_lengths("abxyé".as_bytes(), &mut lengths).unwrap());
//! assert_eq!(lengths, [2, 4]);
//! ```

use std::sync::Arc;

use super::unigram::Unigram;
use super::Encoder;
use crate::error::Error;
use crate::spec::PipelineSpec;
use crate::tables::MergeTables;
use crate::Literal;

/// The [`Unigram`] encoder with [`Encoder::token_lengths`] (see the module docs).
pub struct UnigramSpans {
    inner: Unigram,
}

/// The encoder registered as `unigram`: the [`Unigram`] model of `spec` over a vocabulary's
/// tables, `scores` by id, with its tokens' offsets; `literals` give the special tokens (where
/// the unknown token may be) and the added ones. None for another name.
pub fn unigram_spans_encoder(
    name: &str,
    tables: &Arc<MergeTables>,
    spec: &PipelineSpec,
    literals: &[Literal],
    scores: Option<&[f64]>,
    vocab: &str,
) -> Option<Result<Box<dyn Encoder>, Error>> {
    if name != "unigram" {
        return None;
    }
    let Some(scores) = scores else {
        return Some(Err(Error::VocabFormat(format!(
            "{vocab}: a Unigram model needs the score of each token"
        ))));
    };
    Some(
        UnigramSpans::new(tables, spec, literals, scores, vocab)
            .map(|e| Box::new(e) as Box<dyn Encoder>),
    )
}

impl UnigramSpans {
    /// The encoder of `spec`'s Unigram model ([`Unigram::new`]), with offsets.
    pub fn new(
        tables: &Arc<MergeTables>,
        spec: &PipelineSpec,
        literals: &[Literal],
        scores: &[f64],
        vocab: &str,
    ) -> Result<Self, Error> {
        Unigram::new(tables, spec, literals, scores, vocab).map(Self::wrap)
    }

    /// `inner`, with offsets.
    pub fn wrap(inner: Unigram) -> Self {
        Self { inner }
    }
}

impl Encoder for UnigramSpans {
    fn name(&self) -> &str {
        "unigram"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        self.inner.encode_piece(piece, out)
    }

    fn is_native(&self) -> bool {
        true
    }

    fn token_lengths(&self, piece: &[u8], out: &mut Vec<usize>) -> Result<bool, Error> {
        let mut ids = Vec::new();
        let first = out.len();
        self.inner
            .encode_with_lengths(piece, &mut ids, out)
            .inspect_err(|_| out.truncate(first))?;
        Ok(true)
    }

    fn encode_with_lengths(
        &self,
        piece: &[u8],
        out: &mut Vec<u32>,
        lengths: &mut Vec<usize>,
    ) -> Result<bool, Error> {
        let (first, first_length) = (out.len(), lengths.len());
        self.inner
            .encode_with_lengths(piece, out, lengths)
            .inspect_err(|_| {
                out.truncate(first);
                lengths.truncate(first_length);
            })?;
        Ok(true)
    }
}

#[cfg(test)]
#[path = "unigram_spans_tests.rs"]
mod tests;
