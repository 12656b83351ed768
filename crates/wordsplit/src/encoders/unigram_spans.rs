//! `unigram` with offsets: the [`Unigram`] encoder, and the part of its piece each of its
//! tokens stands for ([`Encoder::token_lengths`]), which the offsets walk places through the
//! normalizer's alignment (`pipeline/offsets`).
//!
//! A Unigram token spells its text, except three kinds: the unknown token stands for a run of
//! one or more unknown characters; a byte-fallback token (`<0xNN>`) for one byte of such a
//! run; an unknown run that is a token's text (HF's rule) is that token, which spells it. So
//! the lengths follow from the ids: each token that spells the text at the current position
//! takes its length, a byte token the one byte it is, and the unknown token the shortest run
//! of whole characters after which the tokens that follow still spell the rest of the piece
//! (tried in that order, backtracking where the rest does not tile). That is the Viterbi
//! path's run: a run holds no character a piece of one character spells (the search gives
//! such a character its piece, not the unknown token), so when the token after it starts with
//! such a character, it starts at the first place the rest tiles from. (Every character of a
//! piece is a piece of its own in the models sentencepiece's and HF's trainers make; in a model
//! where a piece starts with a character that is not, the same ids could tile the piece with a
//! run that ends earlier than the search's.) The lengths are those the Python package's
//! engine reads off its Viterbi path (`UnigramEncoder.tokens`): byte-fallback tokens one byte
//! each, where HF gives each the whole run's offsets ([`crate::Tokenizer::encoding`] widens
//! them so).
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
//! let model = Unigram::with_style(tables.clone(), Style::Hf, &scores, Some(0), false, "tiny");
//! let spans = UnigramSpans::wrap(model.unwrap(), tables, Some(0), false);
//! let (mut ids, mut lengths) = (Vec::new(), Vec::new());
//! spans.encode_piece("abxyé".as_bytes(), &mut ids).unwrap();
//! assert_eq!(ids, [3, 0]); // "ab", then the unknown run "xyé"
//! assert!(spans.token_lengths("abxyé".as_bytes(), &mut lengths).unwrap());
//! assert_eq!(lengths, [2, 4]);
//! ```

use std::sync::Arc;

use super::prefix_trie::NONE;
use super::unigram::Unigram;
use super::Encoder;
use crate::error::Error;
use crate::spec::{ModelSpec, PipelineSpec};
use crate::tables::MergeTables;
use crate::Literal;

/// The [`Unigram`] encoder with [`Encoder::token_lengths`] (see the module docs).
pub struct UnigramSpans {
    inner: Unigram,
    tables: Arc<MergeTables>,
    unk: Option<u32>,
    /// The `<0xNN>` token of each byte when the model falls back to bytes ([`NONE`]: none).
    byte_ids: [u32; 256],
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
        let inner = Unigram::new(tables, spec, literals, scores, vocab)?;
        let ModelSpec::Unigram {
            unk_token,
            byte_fallback,
            ..
        } = &spec.model
        else {
            unreachable!("Unigram::new takes only a Unigram model");
        };
        // (the unknown token as Unigram::new finds it: a piece, else a special literal)
        let unk = (!unk_token.is_empty())
            .then(|| {
                let special = literals.iter().find(|l| l.special && l.text == *unk_token);
                tables
                    .rank_of(unk_token.as_bytes())
                    .or(special.map(|l| l.id))
            })
            .flatten();
        Ok(Self::wrap(inner, tables.clone(), unk, *byte_fallback))
    }

    /// `inner`, a Unigram encoder over `tables` whose unknown token is `unk` and which falls
    /// back to `<0xNN>` tokens with `byte_fallback`, with offsets.
    pub fn wrap(
        inner: Unigram,
        tables: Arc<MergeTables>,
        unk: Option<u32>,
        byte_fallback: bool,
    ) -> Self {
        let mut byte_ids = [NONE; 256];
        if byte_fallback {
            for (b, id) in byte_ids.iter_mut().enumerate() {
                let token = format!("<0x{b:02X}>");
                *id = tables.rank_of(token.as_bytes()).unwrap_or(NONE);
            }
        }
        Self {
            inner,
            tables,
            unk,
            byte_ids,
        }
    }

    /// The length in bytes of the part of `piece` each of `ids` (its tokens) stands for, or
    /// None when they do not tile it.
    fn lengths(&self, piece: &[u8], ids: &[u32]) -> Option<Vec<usize>> {
        let n = piece.len();
        let mut lengths = Vec::with_capacity(ids.len());
        // The unknown tokens whose run may still end further: (index, start, end taken).
        let mut open: Vec<(usize, usize, usize)> = Vec::new();
        let (mut k, mut p) = (0, 0);
        loop {
            if k == ids.len() && p == n {
                return Some(lengths);
            }
            let end = ids.get(k).and_then(|&id| self.first_end(piece, id, p));
            let Some(end) = end else {
                // Back to the last unknown token whose run can take one more character.
                let (at, start, longer) = loop {
                    let (at, start, taken) = open.pop()?;
                    if taken < n {
                        break (at, start, next_char(piece, taken));
                    }
                };
                open.push((at, start, longer));
                lengths.truncate(at);
                lengths.push(longer - start);
                (k, p) = (at + 1, longer);
                continue;
            };
            if Some(ids[k]) == self.unk {
                open.push((k, p, end));
            }
            lengths.push(end - p);
            (k, p) = (k + 1, end);
        }
    }

    /// Where token `id` ends when it starts at `p` of `piece`, its shortest reading: the text
    /// it spells, else the byte it stands for, else (the unknown token) one character; None if
    /// it can start there in none of these ways.
    fn first_end(&self, piece: &[u8], id: u32, p: usize) -> Option<usize> {
        let rest = &piece[p..];
        if rest.is_empty() {
            return None;
        }
        if Some(id) == self.unk {
            // A run of one character first (the unknown token's own text is not a piece the
            // search finds in sentencepiece's models, and HF's find it as a piece, whose
            // text is then a longer run of the same start: tried on backtracking).
            return Some(next_char(piece, p));
        }
        if let Some(text) = self.tables.token(id) {
            if !text.is_empty() && rest.starts_with(text) {
                return Some(p + text.len());
            }
        }
        (self.byte_ids[usize::from(rest[0])] == id).then_some(p + 1)
    }
}

/// The end of the UTF-8 character that starts at `start` (a stray continuation byte is a
/// character of its own).
fn next_char(piece: &[u8], start: usize) -> usize {
    let mut end = start + 1;
    while end < piece.len() && piece[end] & 0xC0 == 0x80 {
        end += 1;
    }
    end
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
        self.inner.encode_piece(piece, &mut ids)?;
        let lengths = self.lengths(piece, &ids).ok_or_else(|| Error::Untiled {
            encoder: "unigram".to_owned(),
            piece: piece.to_vec(),
        })?;
        out.extend(lengths);
        Ok(true)
    }
}

#[cfg(test)]
#[path = "unigram_spans_tests.rs"]
mod tests;
