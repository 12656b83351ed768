//! [`Tokenizer`]: a vocabulary file's tokenizer in one value, with tiktoken's encode methods
//! and HF tokenizers' [`Tokenizer::encoding`].
//!
//! It is the short way from a parsed file ([`VocabData`], see [`crate::formats`]) to ids: the
//! tables, the literal tokens, the pattern's spanner, the normalizer and the unknown-byte rule
//! the file defines, in a [`Pipeline`] with the `auto` encoder; for a vocabulary with a
//! pipeline of its own (a WordPiece or WordLevel tokenizer.json, [`VocabData::pipeline`]) its
//! normalizer, pre-tokenizer ([`WordSpanner`]), model ([`word_model_encoder`]), decoder
//! ([`TextDecoder`]) and post-processor ([`post_process`]); for a Unigram model (a
//! tokenizer.json, a SentencePiece `.model`) its normalizer, the SentencePiece spanner, the
//! [`Unigram`](crate::encoders::unigram::Unigram) encoder over the vocabulary's scores (with
//! its tokens' offsets, [`UnigramSpans`]), and SentencePiece's decoder
//! ([`PieceDecoder`]). What it does not do: read files
//! (the readers do), run foreign stages (build a [`Pipeline`] for that), or expand `\p{..}`
//! classes for the regex spanner: a pattern needs a hand-written scanner (every registered
//! vocabulary's has one) or its classes spelled as explicit ranges.
//!
//! ```
//! use wordsplit::formats::read_named;
//! use wordsplit::Tokenizer;
//!
//! # let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/vocabs/r50k_base.tiktoken.gz");
//! let ranks = wordsplit::formats::read_file(&path)?; // the file, gunzipped
//! let tok = Tokenizer::from_vocab(read_named("gpt2", &ranks)?)?;
//! assert_eq!(tok.encode("hello world")?, [31373, 995]);
//! assert_eq!(tok.decode(&[31373, 995])?, "hello world");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A BERT tokenizer.json (all-MiniLM-L6-v2's), with HF's special tokens and offsets:
//!
//! ```
//! use wordsplit::formats::load_hf_tokenizer_json;
//! use wordsplit::Tokenizer;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wordpiece/all-MiniLM-L6-v2.tokenizer.json.gz");
//! let tok = Tokenizer::from_vocab(load_hf_tokenizer_json(&path)?)?;
//! assert_eq!(tok.encode("Hello, world!")?, [7592, 1010, 2088, 999]);
//! let encoding = tok.encoding("Unaffable!", None, true)?;
//! assert_eq!(encoding.ids, [101, 14477, 20961, 3468, 999, 102]); // [CLS] una ##ffa ##ble ! [SEP]
//! assert_eq!(encoding.offsets[1..5], [(0, 3), (3, 6), (6, 9), (9, 10)]);
//! assert_eq!(tok.decode(&encoding.ids)?, "[CLS] unaffable! [SEP]");
//! assert_eq!(tok.decode_skipping_special(&encoding.ids)?, "unaffable!");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A SentencePiece Unigram model (ALBERT's `spiece.model`), with sentencepiece's ids and decode,
//! and offsets:
//!
//! ```
//! use wordsplit::formats::load_sentencepiece_unigram;
//! use wordsplit::Tokenizer;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/unigram/spiece.model.gz");
//! let tok = Tokenizer::from_vocab(load_sentencepiece_unigram(&path)?)?;
//! assert_eq!(tok.model().kind(), "Unigram");
//! let ids = tok.encode("hello world!")?;
//! assert_eq!(ids, [10975, 126, 187]);
//! assert_eq!(tok.decode(&ids)?, "hello world!");
//! // Offsets in characters, through the normalizer (the ▁ of a space is aligned to it).
//! assert_eq!(tok.encoding("hello world!", None, false)?.offsets, [(0, 5), (5, 11), (11, 12)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;
use std::sync::Arc;

use crate::decode_pieces::{PieceDecoder, PieceKind};
use crate::decode_text::TextDecoder;
use crate::encoders::character_bpe::character_bpe_encoder;
use crate::encoders::unigram_spans::UnigramSpans;
use crate::encoders::wordpiece::word_model_encoder;
use crate::error::Error;
use crate::formats::VocabData;
use crate::literal::{Literal, LSTRIP, RSTRIP};
use crate::normalizers::NormalizeStage;
use crate::pipeline::TokenPlace;
use crate::pipeline::{Pipeline, PipelineBuilder, SpecialPolicy};
use crate::post_process::{post_process, trim_matched, trim_passes, Encoding};
use crate::spanners::sentencepiece::SentencePieceSpanner;
use crate::spanners::words::WordSpanner;
use crate::spec::{
    DecoderSpec, DecoderStyle, ModelSpec, PipelineSpec, PostProcessorSpec, SpannerSpec,
};
use crate::tables::MergeTables;
use crate::Spanner;

/// A vocabulary's tokenizer: encode text to ids and decode ids back, exactly as the file's
/// official tokenizer does for the layouts [`crate::formats`] reads.
pub struct Tokenizer {
    pipeline: Pipeline,
    name: String,
    eos_token_id: Option<u32>,
    bos_token_id: Option<u32>,
    /// Each policy a method uses, made once (a policy indexes the literals).
    refuse_special: SpecialPolicy,
    special_as_text: SpecialPolicy,
    /// The model (byte-level BPE, or the one the vocabulary's pipeline names).
    model: ModelSpec,
    /// The decode of a model whose tokens are texts (WordPiece's decoder, or the tokens joined
    /// by spaces); None: the tokens' bytes, concatenated.
    text_decoder: Option<TextDecoder>,
    /// A SentencePiece decoder (a Unigram model's) and each id's kind for it.
    piece_decoder: Option<(PieceDecoder, Vec<PieceKind>)>,
    /// What [`Self::encoding`] adds with `add_special_tokens` (none for byte-level BPE).
    post_processor: PostProcessorSpec,
}

impl Tokenizer {
    /// The tokenizer of a parsed vocabulary.
    ///
    /// Errors: [`Error::VocabFormat`] when the tables cannot be built, [`Error::Unsupported`]
    /// when the pattern has neither a scanner nor a form the regex spanner runs, or a stage of
    /// the vocabulary's pipeline is not one the core runs (see [`Self::word_model_pipeline`]).
    pub fn from_vocab(vocab: VocabData) -> Result<Self, Error> {
        let bpe = vocab.tokens.iter().map(|(bytes, id)| (&bytes[..], *id));
        let tables = Arc::new(MergeTables::from_tokens(
            bpe,
            &vocab.literals,
            vocab.n_vocab as usize,
            vocab.merges,
            vocab.whole_piece_lookup,
        )?);
        let literals = vocab.literals;
        let specials = literals.iter().map(|l| l.special);
        let refuse_special = SpecialPolicy::Mixed {
            allowed: vec![false; literals.len()],
            disallowed: specials.collect(),
        };
        let special_as_text = SpecialPolicy::Mixed {
            allowed: vec![false; literals.len()],
            disallowed: vec![false; literals.len()],
        };
        let mut piece_decoder = None;
        let (builder, model, text_decoder, post_processor) = match vocab.pipeline {
            None => (
                Pipeline::builder(tables)
                    .pattern(&vocab.pattern)
                    .normalizer(vocab.normalizer)
                    .unk(vocab.unk_token_id.map(|id| (id, vocab.fuse_unk))),
                ModelSpec::Bpe,
                None,
                PostProcessorSpec::None,
            ),
            Some(spec) if matches!(spec.model, ModelSpec::Unigram { .. }) => {
                let scores = vocab.scores.as_ref().map(|s| s.0.as_slice());
                let Some(scores) = scores else {
                    return Err(Error::VocabFormat(format!(
                        "{}: a Unigram model needs the score of each token",
                        vocab.name
                    )));
                };
                piece_decoder = Some(Self::piece_decoder(
                    &tables,
                    &spec,
                    &literals,
                    vocab.unk_token_id,
                )?);
                let builder =
                    Self::unigram_pipeline(tables, &spec, &literals, scores, &vocab.name)?;
                (builder, spec.model, None, spec.post_processor)
            }
            Some(spec) if matches!(spec.decoder, DecoderSpec::SentencePiece { .. }) => {
                // (a tokenizer.json of a SentencePiece BPE model without byte fallback: HF's
                // BPE over characters after the Metaspace stages, decoded as a Unigram file is)
                let ModelSpec::CharacterBpe { unk_token, .. } = &spec.model else {
                    return Err(Error::Unsupported(format!(
                        "the SentencePiece decoder after a {} model",
                        spec.model.kind()
                    )));
                };
                let unk = tables.rank_of(unk_token.as_bytes());
                piece_decoder = Some(Self::piece_decoder(&tables, &spec, &literals, unk)?);
                let builder = Self::word_model_pipeline(tables, &spec, &vocab.name)?;
                (builder, spec.model, None, spec.post_processor)
            }
            Some(spec) => {
                let builder = Self::word_model_pipeline(tables, &spec, &vocab.name)?;
                // (a byte-level model's ByteLevel decoder: the tokens' bytes, concatenated)
                let bytes = matches!(
                    (&spec.model, &spec.decoder),
                    (
                        ModelSpec::CharacterBpe {
                            byte_level: true,
                            ..
                        },
                        DecoderSpec::ByteLevel
                    )
                );
                let decoder = TextDecoder::new(&spec.decoder).filter(|_| !bytes);
                if decoder.is_none() && !bytes {
                    return Err(Error::Unsupported(format!(
                        "the {} decoder does not decode a {} model",
                        spec.decoder.kind(),
                        spec.model.kind()
                    )));
                }
                (builder, spec.model, decoder, spec.post_processor)
            }
        };
        let pipeline = builder.literals(literals).build()?;
        Ok(Self {
            pipeline,
            name: vocab.name,
            eos_token_id: vocab.eos_token_id,
            bos_token_id: vocab.bos_token_id,
            refuse_special,
            special_as_text,
            model,
            text_decoder,
            piece_decoder,
            post_processor,
        })
    }

    /// The stages of a Unigram model's pipeline over its tables, as the Python package's
    /// native engine builds them: the normalizer the core runs for it, the SentencePiece
    /// spanner (for T5's `WhitespaceSplit` layouts that keep the white space, their split
    /// program, a [`WordSpanner`]), the [`Unigram`](crate::encoders::unigram::Unigram)
    /// encoder over `scores` (by id), with its tokens' offsets ([`UnigramSpans`]).
    /// [`Error::Unsupported`] names a normalizer the core does not run.
    pub fn unigram_pipeline(
        tables: Arc<MergeTables>,
        spec: &PipelineSpec,
        literals: &[Literal],
        scores: &[f64],
        vocab: &str,
    ) -> Result<PipelineBuilder, Error> {
        let normalizer = NormalizeStage::from_spec(&spec.normalizer).ok_or_else(|| {
            Error::Unsupported(format!(
                "the core does not run the normalizer {} of {vocab}",
                spec.normalizer.kind()
            ))
        })?;
        let spanner: Box<dyn Spanner> = match &spec.spanner {
            SpannerSpec::SplitProgram(_) => {
                Box::new(WordSpanner::of(&spec.spanner).ok_or_else(|| {
                    Error::Unsupported(format!(
                        "the split program before the Unigram model of {vocab}: the core runs \
                     WhitespaceSplit's, with Metaspace's split after it or not"
                    ))
                })?)
            }
            _ => Box::new(SentencePieceSpanner::new(spec)?),
        };
        let encoder = UnigramSpans::new(&tables, spec, literals, scores, vocab)?;
        Ok(Pipeline::builder(tables)
            .foreign_encoder(Box::new(encoder))
            .foreign_spanner(spanner)
            .normalizer(normalizer)
            .reads_text(true))
    }

    /// The SentencePiece decoder of a Unigram pipeline and the kind of each id for it.
    fn piece_decoder(
        tables: &MergeTables,
        spec: &PipelineSpec,
        literals: &[Literal],
        unk: Option<u32>,
    ) -> Result<(PieceDecoder, Vec<PieceKind>), Error> {
        let DecoderSpec::SentencePiece {
            style,
            unk_surface,
            strip_leading_space,
            ..
        } = &spec.decoder
        else {
            return Err(Error::Unsupported(format!(
                "the {} decoder does not decode a Unigram model",
                spec.decoder.kind()
            )));
        };
        let decoder = PieceDecoder::new(*style, *strip_leading_space, unk_surface);
        let special: HashSet<u32> = literals
            .iter()
            .filter(|l| l.special)
            .map(|l| l.id)
            .collect();
        let byte_spelled = |b: u8| tables.rank_of(format!("<0x{b:02X}>").as_bytes()).is_some();
        let kinds = (0..tables.n_vocab() as u32)
            .map(|id| match tables.token(id) {
                None => PieceKind::Control,
                Some(data) => {
                    decoder.kind_of(data, special.contains(&id), Some(id) == unk, byte_spelled)
                }
            })
            .collect();
        Ok((decoder, kinds))
    }

    /// The stages of a word model's pipeline (WordPiece, WordLevel, and HF's BPE over
    /// characters, CharacterBpe) over its tables: the normalizer the core runs for it, the
    /// pre-tokenizer as a [`WordSpanner`], the model's encoder. [`Error::Unsupported`] names a
    /// stage the core does not run (the Python package runs the other normalizers and split
    /// programs; no one runs the others here).
    pub fn word_model_pipeline(
        tables: Arc<MergeTables>,
        spec: &PipelineSpec,
        vocab: &str,
    ) -> Result<PipelineBuilder, Error> {
        let name = match spec.model {
            ModelSpec::WordPiece { .. } => "wordpiece",
            ModelSpec::WordLevel { .. } => "word-level",
            ModelSpec::CharacterBpe { .. } => "character-bpe",
            _ => {
                return Err(Error::Unsupported(format!(
                    "a {} model from a vocabulary's pipeline: the Rust Tokenizer runs WordPiece, \
                     WordLevel and CharacterBpe ones (byte-level BPE comes as a pattern)",
                    spec.model.kind()
                )))
            }
        };
        let spanner: Box<dyn Spanner> = match &spec.spanner {
            SpannerSpec::SentencePiece(_) => Box::new(SentencePieceSpanner::new(spec)?),
            other => Box::new(WordSpanner::of(other).ok_or_else(|| {
                Error::Unsupported(format!(
                    "the {} spanner before a {} model: the core runs BERT's, Whitespace's and \
                     WhitespaceSplit's split programs, the SentencePiece split, or none",
                    spec.spanner.kind(),
                    spec.model.kind()
                ))
            })?),
        };
        let normalizer = NormalizeStage::from_spec(&spec.normalizer).ok_or_else(|| {
            Error::Unsupported(format!(
                "the core does not run the normalizer {}",
                spec.normalizer.kind()
            ))
        })?;
        let encoder = word_model_encoder(name, &tables, &spec.model, vocab)
            .or_else(|| character_bpe_encoder(name, &tables, &spec.model, vocab))
            .expect("a word model's encoder")?;
        Ok(Pipeline::builder(tables)
            .foreign_encoder(encoder)
            .foreign_spanner(spanner)
            .normalizer(normalizer)
            .reads_text(true))
    }

    /// The ids of `text`; text that spells a special token is an error
    /// ([`Error::DisallowedSpecial`]), as tiktoken's `encode` with its defaults. Added
    /// (non-special) tokens are always matched, as HF does.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.encode_with(text, &self.refuse_special)
    }

    /// The ids of `text` with special-token text encoded as plain text (tiktoken's
    /// `encode_ordinary`).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.encode_with(text, &self.special_as_text)
    }

    /// The ids of `text` with every special token's text made its id (tiktoken's
    /// `allowed_special="all"`).
    pub fn encode_with_special_tokens(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.encode_with(text, &SpecialPolicy::AllowAll)
    }

    /// The ids of `text` under `policy` (which indexes [`Pipeline::literals`]).
    pub fn encode_with(&self, text: &str, policy: &SpecialPolicy) -> Result<Vec<u32>, Error> {
        let mut ids = Vec::with_capacity(Pipeline::ids_capacity(text));
        self.pipeline.encode(text, policy, &mut ids)?;
        Ok(ids)
    }

    /// The number of ids [`Self::encode`] gives.
    pub fn count(&self, text: &str) -> Result<usize, Error> {
        Ok(self.encode(text)?.len())
    }

    /// The bytes of `ids`, concatenated ([`Error::UnknownId`] names an id not in the
    /// vocabulary); for a model whose tokens are texts, the UTF-8 of [`Self::decode`].
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, Error> {
        if self.text_decoder.is_none() && self.piece_decoder.is_none() {
            return self.pipeline.tables().decode(ids);
        }
        self.decode(ids).map(String::into_bytes)
    }

    /// The text of `ids`: their bytes as UTF-8, each invalid sequence replaced by U+FFFD (the
    /// default of tiktoken's and wordsplit's `decode`); for a model whose tokens are texts
    /// (WordPiece, WordLevel), what its decoder makes of them, as HF's
    /// `decode(ids, skip_special_tokens=False)`; for a Unigram model, what sentencepiece's or
    /// HF's decoder makes of its pieces ([`PieceDecoder`]).
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        if let Some((decoder, kinds)) = &self.piece_decoder {
            let tables = self.pipeline.tables();
            let tokens = ids
                .iter()
                .map(|&id| {
                    let token = tables.token(id).ok_or(Error::UnknownId(id))?;
                    Ok((kinds[id as usize], token))
                })
                .collect::<Result<Vec<_>, Error>>()?;
            return Ok(decoder.text(tokens));
        }
        let Some(decoder) = &self.text_decoder else {
            return Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned());
        };
        let tables = self.pipeline.tables();
        let tokens = ids
            .iter()
            .map(|&id| {
                let token = tables.token(id).ok_or(Error::UnknownId(id))?;
                Ok(String::from_utf8_lossy(token))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(decoder.text(tokens.iter().map(|t| &**t)))
    }

    /// [`Self::decode`] of `ids` without the special tokens' (HF's `skip_special_tokens=True`).
    pub fn decode_skipping_special(&self, ids: &[u32]) -> Result<String, Error> {
        let special: std::collections::HashSet<u32> =
            self.special_tokens().map(|(_, id)| id).collect();
        let kept: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|id| !special.contains(id))
            .collect();
        self.decode(&kept)
    }

    /// HF tokenizers' `encode(text, pair, add_special_tokens)` without truncation and padding:
    /// every special and added token in the text matched, the ids of `text` (and `pair`) with
    /// their offsets in characters, and the post-processor of the vocabulary's pipeline run
    /// ([`post_process`]: BERT's `[CLS] … [SEP]` with `add_special_tokens`, the type ids).
    /// A Unigram model's offsets are HF's for a tokenizer.json (the byte-fallback tokens of an
    /// unknown run each with the whole run's), and for a SentencePiece `.model` or a GGUF
    /// Unigram model the Python package's `encode_with_offsets`' (each byte-fallback token its
    /// character; a GGUF model's text aligned through llama.cpp's normalizer as that
    /// package's `LlamaCppUnigramNormalizer.alignment` aligns it).
    pub fn encoding(
        &self,
        text: &str,
        pair: Option<&str>,
        add_special_tokens: bool,
    ) -> Result<Encoding, Error> {
        let encode = |text: &str, type_id: u32| -> Result<Encoding, Error> {
            let (mut ids, mut places) = (Vec::new(), Vec::new());
            let policy = &SpecialPolicy::AllowAll;
            if !self.hf_byte_runs() {
                self.pipeline
                    .encode_with_offsets(text, policy, &mut ids, &mut places)?;
                return Ok(Encoding::of_text(ids, char_offsets(&places), type_id));
            }
            let mut lengths = Vec::new();
            self.pipeline.encode_with_normalized_lengths(
                text,
                policy,
                &mut ids,
                &mut places,
                &mut lengths,
            )?;
            let mut offsets = char_offsets(&places);
            let tables = self.pipeline.tables();
            widen_byte_runs(&ids, &places, &lengths, tables, &mut offsets);
            Ok(Encoding::of_text(ids, offsets, type_id))
        };
        let mut first = encode(text, 0)?;
        let mut second = pair.map(|pair| encode(pair, 1)).transpose()?;
        // HF's token string of an lstrip or rstrip added token is the text it matched, white
        // space included, which trim_offsets then moves its offsets past.
        let passes = trim_passes(&self.post_processor);
        let stripping: HashSet<u32> = self
            .literals()
            .iter()
            .filter(|l| l.flags & (LSTRIP | RSTRIP) != 0)
            .map(|l| l.id)
            .collect();
        if !passes.is_empty() && !stripping.is_empty() {
            for (encoding, text) in [(Some(&mut first), Some(text)), (second.as_mut(), pair)] {
                let (Some(encoding), Some(text)) = (encoding, text) else {
                    continue;
                };
                let positions: Vec<usize> = (0..encoding.ids.len())
                    .filter(|&i| stripping.contains(&encoding.ids[i]))
                    .collect();
                if positions.is_empty() {
                    continue;
                }
                let chars: Vec<char> = text.chars().collect();
                for &add_prefix_space in &passes {
                    trim_matched(encoding, &positions, &chars, add_prefix_space);
                }
            }
        }
        let tables = self.pipeline.tables();
        let token =
            |id: u32| String::from_utf8_lossy(tables.token(id).unwrap_or_default()).into_owned();
        Ok(post_process(
            &self.post_processor,
            first,
            second,
            add_special_tokens,
            token,
        ))
    }

    /// Whether the vocabulary is a Unigram tokenizer.json with byte fallback, whose byte
    /// tokens HF places at their whole unknown run.
    fn hf_byte_runs(&self) -> bool {
        let byte_fallback = matches!(
            self.model,
            ModelSpec::Unigram {
                byte_fallback: true,
                ..
            }
        );
        let hf = |(decoder, _): &(PieceDecoder, _)| decoder.style() == DecoderStyle::Hf;
        byte_fallback && self.piece_decoder.as_ref().is_some_and(hf)
    }

    /// The bytes of token `id`, if the vocabulary has it.
    pub fn id_to_token(&self, id: u32) -> Option<&[u8]> {
        self.pipeline.tables().token(id)
    }

    /// The id of the token whose bytes are `token` (a BPE token, or a literal's text).
    pub fn token_to_id(&self, token: &[u8]) -> Option<u32> {
        let literal = self.literals().iter().find(|l| l.text.as_bytes() == token);
        literal
            .map(|l| l.id)
            .or_else(|| self.pipeline.tables().rank_of(token))
    }

    /// The special tokens (text and id), in the vocabulary's order.
    pub fn special_tokens(&self) -> impl Iterator<Item = (&str, u32)> {
        let special = self.literals().iter().filter(|l| l.special);
        special.map(|l| (l.text.as_str(), l.id))
    }

    /// The special and added tokens, as the pipeline matches them.
    pub fn literals(&self) -> &[Literal] {
        self.pipeline.literals()
    }

    /// The number of ids (one more than the largest).
    pub fn n_vocab(&self) -> usize {
        self.pipeline.tables().n_vocab()
    }

    /// The vocabulary's name (for messages).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The end-of-sequence token's id, where the vocabulary declares one.
    pub fn eos_token_id(&self) -> Option<u32> {
        self.eos_token_id
    }

    /// The beginning-of-sequence token's id, where the vocabulary declares one.
    pub fn bos_token_id(&self) -> Option<u32> {
        self.bos_token_id
    }

    /// The model: byte-level BPE, or the model of the vocabulary's pipeline (WordPiece,
    /// WordLevel, Unigram).
    pub fn model(&self) -> &ModelSpec {
        &self.model
    }

    /// The pipeline that does the work (offsets, batches, other policies).
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }
}

/// The `(char start, char end)` of each place.
fn char_offsets(places: &[TokenPlace]) -> Vec<(usize, usize)> {
    places
        .iter()
        .map(|p| (p[2] as usize, p[3] as usize))
        .collect()
}

/// HF's offsets of byte-fallback tokens (HF's Unigram `tokenize`): each token of an unknown
/// run gets the whole run's. The tokens of one run are the consecutive byte tokens of one
/// piece that stand for one byte each of the normalized text (a token that spells `<0xNN>`
/// stands for six); two runs of one piece are never adjacent (the search joins them).
fn widen_byte_runs(
    ids: &[u32],
    places: &[TokenPlace],
    lengths: &[u32],
    tables: &MergeTables,
    offsets: &mut [(usize, usize)],
) {
    let fallback = |k: usize| {
        let token = tables.token(ids[k]).unwrap_or_default();
        lengths[k] == 1 && token.len() == 6 && token.starts_with(b"<0x")
    };
    let mut k = 0;
    while k < ids.len() {
        if !fallback(k) {
            k += 1;
            continue;
        }
        let mut end = k + 1;
        while end < ids.len() && fallback(end) && places[end][4] == places[k][4] {
            end += 1;
        }
        let span = (offsets[k].0, offsets[end - 1].1);
        offsets[k..end].fill(span);
        k = end;
    }
}
