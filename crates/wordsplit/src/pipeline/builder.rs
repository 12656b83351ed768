//! [`PipelineBuilder`]: a pipeline's stages, chosen one by one, checked together by `build`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

use super::literals::{literal_automaton, FlaggedScan};
use super::second_pass::normalized_automaton;
use super::{EncodeStage, Interrupt, Pipeline, SpanStage};
use crate::encoders::{Encoder, EncoderKind};
use crate::error::Error;
use crate::literal::{Literal, NORMALIZED};
use crate::normalizers::{NormalizeStage, Normalizer};
use crate::spanners::{
    scanner_for_pattern, HfProgram, RegexSequence, RegexSpanner, Scanner, Spanner,
};
use crate::tables::MergeTables;

static NEXT_PIPELINE_ID: AtomicU64 = AtomicU64::new(0);

/// The stages of a [`Pipeline`] over one vocabulary's tables; made by [`Pipeline::builder`].
///
/// By default the encoder is `auto`, there is no normalizer and no literal, and no byte is
/// unknown; the spanner must be chosen ([`Self::pattern`], or one of the more specific ones).
pub struct PipelineBuilder {
    tables: Arc<MergeTables>,
    encoder: EncodeStage,
    spanner: Option<Result<SpanStage, Error>>,
    literals: Vec<Literal>,
    normalizer: NormalizeStage,
    unk: Option<(u32, bool)>,
    reads_text: bool,
    program: Option<HfProgram>,
    interrupt: Option<Interrupt>,
}

impl PipelineBuilder {
    pub(super) fn new(tables: Arc<MergeTables>) -> Self {
        Self {
            tables,
            encoder: EncodeStage::Native(EncoderKind::Auto),
            spanner: None,
            literals: Vec::new(),
            normalizer: NormalizeStage::None,
            unk: None,
            reads_text: false,
            program: None,
            interrupt: None,
        }
    }

    /// The native encoder `kind` (backtrack needs a rank-ordered vocabulary: `build` says so).
    pub fn encoder(mut self, kind: EncoderKind) -> Self {
        self.encoder = EncodeStage::Native(kind);
        self
    }

    /// An encoder supplied by the caller.
    pub fn foreign_encoder(mut self, encoder: Box<dyn Encoder>) -> Self {
        self.encoder = EncodeStage::Foreign(encoder);
        self
    }

    /// The split pattern: the scanner registered for exactly this pattern, else the native
    /// regex spanner (which needs its classes spelled as explicit ranges, and refuses
    /// patterns it cannot run exactly: `build` reports that as [`Error::Unsupported`]).
    pub fn pattern(mut self, pattern: &str) -> Self {
        self.spanner = Some(match scanner_for_pattern(pattern) {
            Some(scanner) => Ok(SpanStage::Scanner(scanner)),
            None => regex_stage(pattern, "regex"),
        });
        self
    }

    /// A scanner (see [`crate::spanners::scanner_for_pattern`]).
    pub fn scanner(mut self, scanner: Box<dyn Scanner>) -> Self {
        self.spanner = Some(Ok(SpanStage::Scanner(scanner)));
        self
    }

    /// The native regex spanner of an expanded `pattern`, named `name` in messages.
    pub fn regex(mut self, pattern: &str, name: &str) -> Self {
        self.spanner = Some(regex_stage(pattern, name));
        self
    }

    /// A llama.cpp-style sequence of expanded patterns, named `name` in messages.
    pub fn regex_sequence(mut self, patterns: &[String], name: &str) -> Self {
        self.spanner = Some(
            RegexSequence::new(patterns)
                .map(|sequence| SpanStage::RegexSequence(sequence, name.to_owned()))
                .map_err(regex_unsupported),
        );
        self
    }

    /// A spanner supplied by the caller.
    pub fn foreign_spanner(mut self, spanner: Box<dyn Spanner>) -> Self {
        self.spanner = Some(Ok(SpanStage::Foreign(spanner)));
        self
    }

    /// The native run of the foreign spanner's split program (an `hf-split` spanner):
    /// encoding runs it, offsets ask the foreign spanner, which gives the same pieces.
    pub fn program(mut self, program: HfProgram) -> Self {
        self.program = Some(program);
        self
    }

    /// The special and added token literals (a policy indexes them in this order).
    pub fn literals(mut self, literals: Vec<Literal>) -> Self {
        self.literals = literals;
        self
    }

    /// The normalizer.
    pub fn normalizer(mut self, normalizer: NormalizeStage) -> Self {
        self.normalizer = normalizer;
        self
    }

    /// A normalizer supplied by the caller.
    pub fn foreign_normalizer(self, normalizer: Box<dyn Normalizer>) -> Self {
        self.normalizer(NormalizeStage::Foreign(Arc::from(normalizer)))
    }

    /// `(id, fuse)`: a byte no token spells is encoded as this token (HF's BPE `unk_token`;
    /// one per run of such bytes with `fuse`); without it such bytes are dropped.
    pub fn unk(mut self, unk: Option<(u32, bool)>) -> Self {
        self.unk = unk;
        self
    }

    /// Whether the model reads whole pieces of text ([`crate::spec::ModelSpec::reads_text`]):
    /// a byte no single-byte token spells is then the model's to handle (its unknown token),
    /// not dropped or made the unk token before it.
    pub fn reads_text(mut self, reads_text: bool) -> Self {
        self.reads_text = reads_text;
        self
    }

    /// A check that a long encode calls between blocks of [`super::POLL_PIECES`] pieces; its
    /// error ends the encode (the Python bindings raise KeyboardInterrupt through it).
    pub fn interrupt(mut self, interrupt: Interrupt) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    /// The pipeline, or what is wrong with the stages chosen.
    pub fn build(self) -> Result<Pipeline, Error> {
        let spanner = self.spanner.unwrap_or_else(|| {
            Err(Error::Unsupported(
                "a pipeline needs a spanner: give its split pattern".to_owned(),
            ))
        })?;
        if self.program.is_some() && !matches!(spanner, SpanStage::Foreign(_)) {
            return Err(Error::Unsupported(
                "a native split program needs the foreign spanner that runs it".to_owned(),
            ));
        }
        if let EncodeStage::Native(EncoderKind::Backtrack) = self.encoder {
            self.tables
                .backtrack_tables()
                .map_err(|e| Error::Unsupported(e.to_owned()))?;
        }
        let literals = self.literals;
        let normalizer = self.normalizer;
        let literal_matcher = if literals.is_empty() {
            None
        } else {
            // Leftmost-longest, as HF's added-vocabulary matcher.
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(literals.iter().map(|l| l.text.as_bytes()))
                .map_err(|e| {
                    Error::VocabFormat(format!("cannot build the special-token matcher: {e}"))
                })?;
            Some(ac)
        };
        let flagged = if literals.iter().any(|l| l.flags != 0) {
            let has = |l: &Literal| l.flags & NORMALIZED != 0;
            let normalized = literals.iter().any(has);
            let normalizes = normalized && normalizer.normalizes_literals();
            Some(Box::new(FlaggedScan {
                raw: literal_automaton(&literals, |l| !has(l))?,
                normalized: if normalizes {
                    Some(normalized_automaton(&literals, &normalizer)?)
                } else if normalized {
                    Some(literal_automaton(&literals, has)?)
                } else {
                    None
                },
                normalizes,
            }))
        } else {
            None
        };
        // The piece table is asked first only on vocabularies with every byte, and answers a
        // whole token without merging only for the native encoders (a foreign one decides
        // every piece) under whole-piece lookup (elsewhere a token's bytes may merge into
        // other tokens; single bytes alone, the index answers from an array); and for an
        // encoder that takes every token whole (WordPiece, WordLevel) wherever the piece table
        // is asked (a model that reads text has it asked whatever bytes the vocabulary lacks).
        let seeded = self.tables.whole_piece_lookup()
            && match &self.encoder {
                EncodeStage::Native(_) => !self.tables.lacks_bytes(),
                EncodeStage::Foreign(encoder) => {
                    encoder.takes_tokens_whole() && (!self.tables.lacks_bytes() || self.reads_text)
                }
            };
        if seeded {
            // Made here, once per tables, rather than in the first encode.
            self.tables.piece_seeds();
        }
        Ok(Pipeline {
            id: NEXT_PIPELINE_ID.fetch_add(1, Ordering::Relaxed),
            seeded,
            tables: self.tables,
            encoder: self.encoder,
            spanner,
            literals,
            literal_matcher,
            flagged,
            normalizer,
            unk: self.unk,
            reads_text: self.reads_text,
            program: self.program.map(Box::new),
            interrupt: self.interrupt,
        })
    }
}

fn regex_stage(pattern: &str, name: &str) -> Result<SpanStage, Error> {
    RegexSpanner::new(pattern)
        .map(|spanner| SpanStage::Regex(Box::new(spanner), name.to_owned()))
        .map_err(regex_unsupported)
}

/// [`Error::Unsupported`]: the native regex spanner cannot run this pattern.
pub fn regex_unsupported(reason: String) -> Error {
    Error::Unsupported(format!(
        "the native regex spanner cannot run this pattern: {reason}"
    ))
}
