//! The whole encode: special/added literals → normalizer → spanner → span encoder → ids,
//! each error a final message naming its stage. The Python package's tests hold it and the
//! package's pure-Python engine to the same ids and the same errors, word for word.
//!
//! Each stage is native when the core has it (the scanners and the regex spanner, the encoders,
//! the Unicode normalizers) or a foreign implementation of its trait
//! ([`Normalizer`](crate::Normalizer), [`Spanner`], [`Encoder`]) that the caller supplies (a
//! plug-in through the Python bindings, or their regex spanner for a pattern the native one
//! refuses). The native stages are enum variants the encode loop matches on, so they cost no
//! dynamic call per piece; [`Pipeline::is_native`] tells the bindings whether a call may run
//! without their language's lock. The caller resolves its allowed/disallowed policy into a
//! [`SpecialPolicy`]. A pipeline is made by [`Pipeline::builder`].
//!
//! The parts: `builder.rs` (making a pipeline), `literals.rs` (finding special and added
//! tokens) and `second_pass.rs` (HF's pass on normalized text), `pieces.rs` (the per-piece
//! loop and its cache, `piece_cache/`), `offsets/` (where each token came from).

use aho_corasick::AhoCorasick;

use std::sync::Arc;

use crate::encoders::{merge_piece, Encoder, EncoderKind};
use crate::error::{Error, Stage};
use crate::literal::Literal;
use crate::normalizers::NormalizeStage;
use crate::spanners::{
    ByteLevelScanner, HfProgram, PieceScanner, RegexSequence, RegexSpanner, Scanner, Spanner,
    SplitError,
};
use crate::tables::MergeTables;

mod builder;
mod literals;
mod offsets;
mod piece_cache;
mod pieces;
mod second_pass;

pub use builder::{regex_unsupported, PipelineBuilder};
use literals::FlaggedScan;
pub use offsets::TokenPlace;

/// A vocabulary's tokens of up to 15 bytes as a piece table
/// ([`piece_cache::PieceTable::seeds`]), which every thread's piece table over those tables
/// starts as a copy of; kept by the tables ([`MergeTables::piece_seeds`]).
pub(crate) struct PieceSeeds(piece_cache::PieceTable);

impl PieceSeeds {
    pub(crate) fn of(tables: &MergeTables) -> Self {
        Self(piece_cache::PieceTable::seeds(tables))
    }
}

/// What to do with each special literal in one call (indexes into the literal list).
pub enum SpecialPolicy {
    /// Every special literal is a token; none is an error.
    AllowAll,
    /// `allowed[i]` / `disallowed[i]` per literal (added literals ignore both).
    Mixed {
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    },
}

/// The entry of `id` in a thread's list of per-object caches, moved to the front (most
/// recently used first), or made by `make` in front of the `limit - 1` most recent others:
/// caches of objects that were dropped stay behind until they are the least recently used.
pub(crate) fn most_recent<T>(
    caches: &mut Vec<(u64, T)>,
    id: u64,
    limit: usize,
    make: impl FnOnce() -> T,
) -> &mut T {
    match caches.iter().position(|(key, _)| *key == id) {
        Some(0) => {}
        Some(i) => {
            let entry = caches.remove(i);
            caches.insert(0, entry);
        }
        None => {
            caches.truncate(limit - 1);
            caches.insert(0, (id, make()));
        }
    }
    &mut caches[0].1
}

/// The spanner stage.
pub enum SpanStage {
    /// A hand-written scanner (see [`crate::spanners::scanner_for_pattern`]).
    Scanner(Box<dyn Scanner>),
    /// Any pattern (spanner `regex`), and its registry name; see [`RegexSpanner`].
    Regex(Box<RegexSpanner>, String),
    /// A llama.cpp-style sequence of patterns, and its name; see [`RegexSequence`].
    RegexSequence(RegexSequence, String),
    /// A spanner supplied by the caller.
    Foreign(Box<dyn Spanner>),
}

impl SpanStage {
    /// The ends of the pieces of `text` in `ends`; for a spanner that drops or inserts text,
    /// the text its pieces make (the ends are in that text then).
    fn split(&self, text: &str, ends: &mut Vec<usize>) -> Result<Option<SpannedText>, Error> {
        match self {
            SpanStage::Scanner(scanner) => scanner.split(text, ends),
            SpanStage::Regex(spanner, name) => spanner
                .split(text, ends)
                .map_err(|e| split_error(name, e))?,
            SpanStage::RegexSequence(spanner, name) => spanner
                .split(text, ends)
                .map_err(|e| split_error(name, e))?,
            SpanStage::Foreign(spanner) => return spanner.spans(text, ends),
        }
        Ok(None)
    }

    /// The name of the stage (for messages).
    pub fn name(&self) -> &str {
        match self {
            SpanStage::Scanner(scanner) => scanner.name(),
            SpanStage::Regex(_, name) | SpanStage::RegexSequence(_, name) => name,
            SpanStage::Foreign(spanner) => spanner.name(),
        }
    }
}

/// The pieces of a text-dropping spanner: the text they make (each span's prefix and text,
/// in order) and, per piece, its span's byte range in the spanner's input and its prefix's
/// length in bytes.
pub struct SpannedText {
    pub text: String,
    pub pieces: Vec<(usize, usize, usize)>,
}

/// The span-encoder stage.
pub enum EncodeStage {
    Native(EncoderKind),
    /// An encoder supplied by the caller.
    Foreign(Box<dyn Encoder>),
}

impl EncodeStage {
    /// The name of the stage (for messages).
    pub fn name(&self) -> &str {
        match self {
            EncodeStage::Native(kind) => kind.name(),
            EncodeStage::Foreign(encoder) => encoder.name(),
        }
    }
}

/// The encode of one vocabulary with one set of stages; see the module docs.
pub struct Pipeline {
    /// Unique in the process: names the piece caches of this pipeline when its encoder is
    /// foreign (native encoders share theirs, [`Self::cache_key`]).
    id: u64,
    tables: Arc<MergeTables>,
    encoder: EncodeStage,
    spanner: SpanStage,
    literals: Vec<Literal>,
    literal_matcher: Option<AhoCorasick>,
    /// Set only when a literal has flags; the common case keeps the one plain scan.
    flagged: Option<Box<FlaggedScan>>,
    normalizer: NormalizeStage,
    /// `(id, fuse)`: a byte no token spells is this token (HF's BPE `unk_token`; one per run
    /// of such bytes with `fuse`), or, when None, dropped before merging.
    unk: Option<(u32, bool)>,
    /// Whether the model reads whole pieces of text (WordPiece, Unigram...): bytes no
    /// single-byte token spells are left in its pieces ([`Self::drops_missing_bytes`]).
    reads_text: bool,
    /// The native run of the foreign spanner stage's split program (an `hf-split` spanner,
    /// which may drop text): encoding and the offsets (`offsets/`) use it; the foreign stage
    /// gives the same pieces (the Python package's tests hold them equal).
    program: Option<Box<HfProgram>>,
    /// Asked between blocks of [`POLL_PIECES`] pieces of a long text whether to go on; its
    /// error ends the encode (the Python bindings check for Ctrl-C here).
    interrupt: Option<Interrupt>,
    /// Whether each thread's piece table starts with the vocabulary's tokens
    /// ([`MergeTables::piece_seeds`]): for a native encoder on a vocabulary with every byte
    /// and whole-piece lookup.
    seeded: bool,
}

/// A check a long encode calls between blocks of pieces: `Err` stops the encode with that error.
pub type Interrupt = Box<dyn Fn() -> Result<(), Error> + Send + Sync>;

/// The pieces encoded between two calls of a pipeline's [`Interrupt`]: about 256 KB of
/// prose, a millisecond of work, so a check costs nothing measurable and answers fast.
pub const POLL_PIECES: usize = 1 << 16;

impl Pipeline {
    /// A builder of a pipeline over `tables`: by default the `auto` encoder, no normalizer,
    /// no literals, and the spanner the caller must set.
    pub fn builder(tables: Arc<MergeTables>) -> PipelineBuilder {
        PipelineBuilder::new(tables)
    }

    /// The vocabulary tables.
    pub fn tables(&self) -> &Arc<MergeTables> {
        &self.tables
    }

    /// The special and added literals, in the order policies index them.
    pub fn literals(&self) -> &[Literal] {
        &self.literals
    }

    /// Whether every stage is native: then encoding calls nothing outside the core.
    pub fn is_native(&self) -> bool {
        let spanner = match &self.spanner {
            SpanStage::Foreign(spanner) => self.program.is_some() || spanner.is_native(),
            _ => true,
        };
        let encoder = match &self.encoder {
            EncodeStage::Foreign(encoder) => encoder.is_native(),
            EncodeStage::Native(_) => true,
        };
        spanner && encoder && self.normalizer.is_native()
    }

    /// Room for the ids of `text` in one allocation, for a vector [`Self::encode`] fills:
    /// text of non-Latin scripts makes up to ~0.45 ids per byte, so half an id per byte
    /// spares the copies of growing the vector, up to 1 MiB of text (beyond, a third, so a
    /// very long text does not reserve twice its size).
    ///
    /// ```
    /// assert_eq!(wordsplit::Pipeline::ids_capacity("hello world"), 9);
    /// ```
    pub fn ids_capacity(text: &str) -> usize {
        let per_byte = if text.len() <= 1 << 20 { 2 } else { 3 };
        text.len() / per_byte + 4
    }

    /// Append the ids of `text` to `out`. On `Err` (the first disallowed special literal
    /// found, or a stage's failure) `out` holds part of the ids: the caller discards them.
    pub fn encode(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let Some(matcher) = &self.literal_matcher else {
            return self.encode_plain(text, false, out);
        };
        if let Some(scan) = self.normalizing_scan() {
            return self.encode_normalizing(scan, text, policy, out);
        }
        if self.all_text_under(policy) {
            // No literal the scan could find would be a token or an error (tiktoken's
            // `encode_ordinary`): the scan would find none, at 2 % of a pass over prose.
            return self.encode_plain(text, false, out);
        }
        self.walk_literals(matcher, text, policy, |plain, literal| {
            let later = plain.start > 0;
            self.encode_plain(&text[plain], later, out)?;
            if let Some((_, literal)) = literal {
                out.push(literal.id);
            }
            Ok(())
        })
    }

    /// Whether `policy` makes every literal plain text, neither a token nor an error: every
    /// literal is special and neither allowed nor disallowed, and no literal has HF's flags
    /// (whose scan this does not reason about).
    fn all_text_under(&self, policy: &SpecialPolicy) -> bool {
        match policy {
            SpecialPolicy::AllowAll => false,
            SpecialPolicy::Mixed {
                allowed,
                disallowed,
            } => {
                self.flagged.is_none()
                    && self.literals.iter().all(|l| l.special)
                    && !allowed.iter().chain(disallowed).any(|&b| b)
            }
        }
    }

    /// Normalize, split and merge text that holds no literal token (`later`: it does not
    /// start the text, see [`crate::Normalizer::normalize_later`]).
    fn encode_plain(&self, text: &str, later: bool, out: &mut Vec<u32>) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        if let Some(bert) = self.bert_in_one_pass() {
            let mut ends = Vec::with_capacity(text.len() / 4 + 1);
            let kept = bert.normalized_pieces(text, &mut ends);
            return self.encode_ends(&kept, &mut ends, out);
        }
        if let Some((normalizer, matcher, cuts)) = self.sentencepiece_in_one_pass() {
            let mut ends = Vec::new();
            if let Some(normalized) = normalizer.normalized_pieces(text, matcher, cuts, &mut ends) {
                return self.encode_ends(&normalized, &mut ends, out);
            }
        }
        if let Some((metaspace, every_space)) = self.metaspace_words_in_one_pass() {
            let mut ends = Vec::with_capacity(text.len() / 4 + 1);
            if let Some(normalized) = metaspace.words_in_one_pass(text, every_space, &mut ends) {
                return self.encode_ends(&normalized, &mut ends, out);
            }
        }
        match self.normalizer.normalize_at(text, later)? {
            Some(normalized) => self.encode_split(&normalized, out),
            None => self.encode_split(text, out),
        }
    }

    /// The BERT normalizer that cuts the text into BERT's pieces as it normalizes it, when
    /// the pipeline's normalizer is it and its split program BERT's pre-tokenizer.
    fn bert_in_one_pass(&self) -> Option<&crate::normalizers::bert::BertNormalizer> {
        let NormalizeStage::Foreign(normalizer) = &self.normalizer else {
            return None;
        };
        let program = self.program.as_deref()?;
        program.is_bert().then(|| normalizer.bert()).flatten()
    }

    /// The SentencePiece normalizer, user-defined pieces' matcher and encoder's cuts that
    /// normalize and cut the text in one pass, when the pipeline is a SentencePiece one whose
    /// encoder has cuts (see [`crate::encoders::sentencepiece::PieceCuts`]).
    #[allow(clippy::type_complexity)]
    fn sentencepiece_in_one_pass(
        &self,
    ) -> Option<(
        &crate::normalizers::sentencepiece::SentencePieceNormalizer,
        Option<&AhoCorasick>,
        &crate::encoders::sentencepiece::PieceCuts,
    )> {
        let (normalizer, spanner) = self.sentencepiece_stages()?;
        let EncodeStage::Foreign(encoder) = &self.encoder else {
            return None;
        };
        let matcher = spanner.one_pass_matcher()?;
        Some((normalizer.sentencepiece()?, matcher, encoder.piece_cuts()?))
    }

    /// The normalizer and the SentencePiece spanner, when both are foreign stages and no
    /// split program runs: what the one-pass paths of SentencePiece pipelines start from.
    fn sentencepiece_stages(
        &self,
    ) -> Option<(
        &dyn crate::normalizers::Normalizer,
        &crate::spanners::sentencepiece::SentencePieceSpanner,
    )> {
        let (NormalizeStage::Foreign(normalizer), SpanStage::Foreign(spanner)) =
            (&self.normalizer, &self.spanner)
        else {
            return None;
        };
        if self.program.is_some() {
            return None;
        }
        Some((normalizer.as_ref(), spanner.sentencepiece()?))
    }

    /// The Metaspace normalizer that writes the words and the SentencePiece spanner's cuts in
    /// one pass ([`crate::normalizers::sentencepiece::MetaspaceNormalizer::words_in_one_pass`]),
    /// and the spanner's `every_space`, when the pipeline is that normalizer, a spanner that
    /// cuts at words only, and an encoder with no cuts of its own.
    fn metaspace_words_in_one_pass(
        &self,
    ) -> Option<(
        &crate::normalizers::sentencepiece::MetaspaceNormalizer,
        bool,
    )> {
        let (normalizer, spanner) = self.sentencepiece_stages()?;
        if let EncodeStage::Foreign(encoder) = &self.encoder {
            if encoder.piece_cuts().is_some() {
                return None;
            }
        }
        Some((normalizer.metaspace()?, spanner.words_only()?))
    }

    fn encode_split(&self, text: &str, out: &mut Vec<u32>) -> Result<(), Error> {
        if let Some(scanner) = self.one_loop_scanner(text) {
            return match scanner {
                ByteLevelScanner::Gpt2(scanner) => self.encode_scanned(scanner, text, out),
                ByteLevelScanner::Cl100k(scanner) => self.encode_scanned(scanner, text, out),
                ByteLevelScanner::O200k(scanner) => self.encode_scanned(scanner, text, out),
            };
        }
        let mut ends = Vec::with_capacity(text.len() / 4 + 1);
        let spanned = match &self.program {
            Some(_) => self.program_spans(text, &mut ends)?,
            None => self.spanner.split(text, &mut ends)?,
        };
        // A dropping spanner's pieces are encoded from the text they make.
        let text = spanned.as_ref().map_or(text, |s| s.text.as_str());
        if let EncodeStage::Foreign(encoder) = &self.encoder {
            if let Some(cuts) = encoder.piece_cuts() {
                let mut cut = Vec::with_capacity(text.len() / 2 + 1);
                cuts.refine(text.as_bytes(), &ends, &mut cut);
                return self.encode_ends(text, &mut cut, out);
            }
        }
        self.encode_ends(text, &mut ends, out)
    }

    /// The ids of the pieces of `text` ending at `ends`, a block of them at a time when there
    /// is an interrupt to ask and more than one block.
    fn encode_ends(&self, text: &str, ends: &mut [usize], out: &mut Vec<u32>) -> Result<(), Error> {
        match &self.interrupt {
            Some(interrupt) if ends.len() > POLL_PIECES => {
                self.encode_piece_blocks(text, ends, interrupt, out)
            }
            _ => self.encode_piece_ends(text, ends, out),
        }
    }

    /// The scanner whose pieces of `text` the piece loop takes one at a time as the scanner
    /// finds them ([`Self::encode_scanned`]), when that gives the same ids: a byte-level
    /// scanner of the core's, a native encoder, a vocabulary with a token for every byte, no
    /// split program, and a text with fewer pieces than the interrupt's block if there is an
    /// interrupt.
    /// Whether a piece's bytes that no single-byte token spells are taken out before its
    /// encoder sees it (a byte-level vocabulary that lacks some; never for a model that
    /// reads text, whose own unknown token stands for them).
    pub(super) fn drops_missing_bytes(&self) -> bool {
        self.tables.lacks_bytes() && !self.reads_text
    }

    fn one_loop_scanner(&self, text: &str) -> Option<ByteLevelScanner<'_>> {
        let SpanStage::Scanner(scanner) = &self.spanner else {
            return None;
        };
        let one_loop = self.program.is_none()
            && matches!(self.encoder, EncodeStage::Native(_))
            && !self.tables.lacks_bytes()
            && (self.interrupt.is_none() || text.len() <= POLL_PIECES);
        one_loop.then(|| scanner.byte_level()).flatten()
    }

    /// The ids of `text`, each piece encoded as `scanner` finds it: one loop, with no
    /// vector of piece ends for the scanner to write and the piece loop to read back (a
    /// large share of the two loops' per-piece work). Compiled once per scanner type, so
    /// each copy's per-piece code is inlined into its loop.
    fn encode_scanned(
        &self,
        scanner: impl PieceScanner,
        text: &str,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let tables = &*self.tables;
        let EncodeStage::Native(kind) = &self.encoder else {
            unreachable!("one_loop_scanner is only Some with a native encoder")
        };
        let scanned = pieces::Scanned { scanner, text };
        self.encode_pieces::<true>(text, scanned, out, |piece, out| {
            merge_piece(*kind, tables, piece, out);
            Ok(())
        })
    }

    /// [`Self::encode_piece_ends`] a block of [`POLL_PIECES`] pieces at a time, asking
    /// `interrupt` before each block after the first. Each block's ends are made relative to
    /// its own start (a piece end is a char boundary), so the piece loop stays as it is.
    fn encode_piece_blocks(
        &self,
        text: &str,
        ends: &mut [usize],
        interrupt: &Interrupt,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let mut base = 0;
        for block in ends.chunks_mut(POLL_PIECES) {
            let last = block[block.len() - 1];
            if base > 0 {
                interrupt()?;
                block.iter_mut().for_each(|end| *end -= base);
            }
            self.encode_piece_ends(&text[base..last], block, out)?;
            base = last;
        }
        Ok(())
    }

    /// The ids of the pieces of `text` ending at `ends`.
    fn encode_piece_ends(
        &self,
        text: &str,
        ends: &[usize],
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let tables = &*self.tables;
        match &self.encoder {
            EncodeStage::Native(kind) => {
                self.encode_pieces::<true>(text, ends, out, |piece, out| {
                    merge_piece(*kind, tables, piece, out);
                    Ok(())
                })
            }
            // A foreign encoder sees every piece (no whole-token or single-byte shortcut: it
            // is the encoder's to decide); the cache spares it repeated ones.
            EncodeStage::Foreign(encoder) => {
                self.encode_pieces::<false>(text, ends, out, |piece, out| {
                    encoder.encode_piece(piece, out)
                })
            }
        }
    }

    /// The pieces of [`Self::program`] (see [`HfProgram::spans`]); none without a program.
    fn program_spans(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<SpannedText>, Error> {
        let Some(program) = &self.program else {
            return Ok(None);
        };
        program.spans(text, ends).map_err(|e| {
            let name = match &self.spanner {
                SpanStage::Foreign(spanner) => spanner.name(),
                _ => "hf-split",
            };
            split_error(name, e)
        })
    }
}

/// The error of a native split stage under the spanner's `name`. A gap (text no piece
/// covers) breaks the spanners' rule that the pieces concatenate to the input and is worded
/// as that rule, in the words the Python package gives for a spanner of that name, so that
/// either backend raises the same error.
fn split_error(name: &str, error: SplitError) -> Error {
    Error::Component {
        stage: Stage::Spanner,
        name: name.to_owned(),
        message: match error {
            SplitError::Gap(_) => {
                "split() must return a list of str that concatenate to its input".to_owned()
            }
            SplitError::Engine(message) => message,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::Arc;

    use super::*;
    use crate::spanners::GPT2_PATTERN;
    use crate::tables::tests::tiny;

    fn pipeline(interrupt: Option<Interrupt>) -> Pipeline {
        let tables = Arc::new(tiny(&[b"ab", b" ab", b"abab"]));
        let builder = Pipeline::builder(tables).pattern(GPT2_PATTERN);
        match interrupt {
            Some(interrupt) => builder.interrupt(interrupt),
            None => builder,
        }
        .build()
        .unwrap()
    }

    fn encode(pipeline: &Pipeline, text: &str) -> Result<Vec<u32>, Error> {
        let mut out = Vec::new();
        pipeline.encode(text, &SpecialPolicy::AllowAll, &mut out)?;
        Ok(out)
    }

    /// Pieces of every length class (whole tokens, merged, one byte, multi-byte characters).
    fn long_text(pieces: usize) -> String {
        let words = ["ab", "abab", "é", "xyz", "  ", "\n", "a"];
        (0..pieces)
            .map(|i| format!(" {}", words[i % words.len()]))
            .collect()
    }

    #[test]
    fn an_interrupt_between_blocks_changes_no_id() {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&calls);
        let checked = pipeline(Some(Box::new(move || {
            seen.fetch_add(1, Relaxed);
            Ok(())
        })));
        let plain = pipeline(None);
        let text = long_text(3 * POLL_PIECES + 123);
        assert_eq!(
            encode(&checked, &text).unwrap(),
            encode(&plain, &text).unwrap()
        );
        // Asked before each block but the first; a short text never asks.
        // (whitespace joins some pieces, so the text has fewer pieces than words).
        let asked = calls.load(Relaxed);
        assert!(
            asked >= 2 && asked < text.len() / POLL_PIECES,
            "{asked} checks"
        );
        encode(&checked, "ab abab").unwrap();
        assert_eq!(calls.load(Relaxed), asked);
    }

    #[test]
    fn one_loop_over_the_scanner_equals_the_loop_over_its_ends() {
        // Every scanner pattern, tokens of several lengths, and text with every kind of piece:
        // letters after a space or punctuation, digits, apostrophes, runs of spaces and line
        // breaks, non-ASCII letters and marks, and pieces at the very end of the text.
        let tokens: &[&[u8]] = &[
            b"ab", b" ab", b"abab", b" abab", b"'s", b"12", b"\n\n", b"  ",
        ];
        let texts = [
            "ab abab, it's 12345 \n\n  ab\r\n\t x",
            "Hello WORLD's ab-ab (abab) 1 22 333 4444",
            "caf\u{e9} \u{4f60}\u{597d}\u{1f980} \u{5d0}\u{5b7} ab",
            "   ",
            "a",
            "ab ",
            "\n",
        ];
        let long: String = texts.concat().repeat(40);
        for &(_, pattern) in crate::spanners::SCANNER_PATTERNS {
            let tables = Arc::new(tiny(tokens));
            let pipeline = Pipeline::builder(tables).pattern(pattern).build().unwrap();
            for text in texts.iter().copied().chain([long.as_str()]) {
                assert!(pipeline.one_loop_scanner(text).is_some(), "{pattern}");
                let one_loop = encode(&pipeline, text).unwrap();
                let SpanStage::Scanner(scanner) = &pipeline.spanner else {
                    panic!("{pattern} has no scanner");
                };
                let mut ends = Vec::new();
                scanner.split(text, &mut ends);
                let mut over_ends = Vec::new();
                pipeline
                    .encode_piece_ends(text, &ends, &mut over_ends)
                    .unwrap();
                assert_eq!(one_loop, over_ends, "{pattern} on {text:?}");
            }
        }
    }

    /// An encoder giving one id per byte of a piece, counting the pieces it is asked for.
    struct CountingEncoder(Arc<AtomicUsize>);

    impl Encoder for CountingEncoder {
        fn name(&self) -> &str {
            "counting"
        }
        fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
            self.0.fetch_add(1, Relaxed);
            out.extend(piece.iter().map(|&b| u32::from(b)));
            Ok(())
        }
    }

    #[test]
    fn a_piece_seen_before_is_not_encoded_again_whatever_its_length_and_ids() {
        // Pieces of a space and 1 to LONG_MAX_PIECE + 44 letters, so of as many ids: in the
        // fixed entries (up to 32 bytes and 7 ids), with the long pieces (more ids, or up to
        // LONG_MAX_PIECE bytes), and never cached (the last two).
        let calls = Arc::new(AtomicUsize::new(0));
        let pipeline = Pipeline::builder(Arc::new(tiny(&[b"ab"])))
            .pattern(GPT2_PATTERN)
            .foreign_encoder(Box::new(CountingEncoder(Arc::clone(&calls))))
            .build()
            .unwrap();
        let long = super::piece_cache::LONG_MAX_PIECE;
        let mut lengths = vec![1, 2, 7, 8, 15, 16, 31, 32, 33, 100, 256, 257];
        lengths.extend([long - 1, long, long + 44]);
        let text: String = lengths
            .iter()
            .map(|&n| format!(" {}", "x".repeat(n)))
            .collect();
        let expected: Vec<u32> = text.bytes().map(u32::from).collect();
        assert_eq!(encode(&pipeline, &text).unwrap(), expected);
        assert_eq!(calls.load(Relaxed), lengths.len());
        for _ in 0..3 {
            assert_eq!(encode(&pipeline, &text).unwrap(), expected);
        }
        // Again only the pieces too long for any cache (over LONG_MAX_PIECE bytes with their
        // space), on every pass.
        assert_eq!(calls.load(Relaxed), lengths.len() + 3 * 2);
    }

    #[test]
    fn an_interrupt_error_ends_the_encode() {
        let stop: Interrupt = Box::new(|| Err(Error::Unsupported("stopped".into())));
        let error = encode(&pipeline(Some(stop)), &long_text(2 * POLL_PIECES)).unwrap_err();
        assert!(matches!(error, Error::Unsupported(m) if m == "stopped"));
    }
}
