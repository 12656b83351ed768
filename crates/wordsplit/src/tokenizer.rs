//! [`Tokenizer`]: a vocabulary file's tokenizer in one value, with tiktoken's encode methods.
//!
//! It is the short way from a parsed file ([`VocabData`], see [`crate::formats`]) to ids: the
//! tables, the literal tokens, the pattern's spanner, the normalizer and the unknown-byte rule
//! the file defines, in a [`Pipeline`] with the `auto` encoder. What it does not do: read
//! files (the readers do), run foreign stages (build a [`Pipeline`] for that), or expand
//! `\p{..}` classes for the regex spanner: a pattern needs a hand-written scanner (every
//! registered vocabulary's has one) or its classes spelled as explicit ranges.
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

use std::sync::Arc;

use crate::error::Error;
use crate::formats::VocabData;
use crate::literal::Literal;
use crate::pipeline::{Pipeline, SpecialPolicy};
use crate::tables::MergeTables;

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
}

impl Tokenizer {
    /// The tokenizer of a parsed vocabulary.
    ///
    /// Errors: [`Error::VocabFormat`] when the tables cannot be built, [`Error::Unsupported`]
    /// when the pattern has neither a scanner nor a form the regex spanner runs.
    pub fn from_vocab(vocab: VocabData) -> Result<Self, Error> {
        let bpe = vocab.tokens.iter().map(|(bytes, id)| (&bytes[..], *id));
        let tables = MergeTables::from_tokens(
            bpe,
            &vocab.literals,
            vocab.n_vocab as usize,
            vocab.merges,
            vocab.whole_piece_lookup,
        )?;
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
        let pipeline = Pipeline::builder(Arc::new(tables))
            .pattern(&vocab.pattern)
            .literals(literals)
            .normalizer(vocab.normalizer)
            .unk(vocab.unk_token_id.map(|id| (id, vocab.fuse_unk)))
            .build()?;
        Ok(Self {
            pipeline,
            name: vocab.name,
            eos_token_id: vocab.eos_token_id,
            bos_token_id: vocab.bos_token_id,
            refuse_special,
            special_as_text,
        })
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

    /// The bytes of `ids`, concatenated ([`Error::UnknownId`] names an id not in the vocabulary).
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, Error> {
        self.pipeline.tables().decode(ids)
    }

    /// The text of `ids`: their bytes as UTF-8, each invalid sequence replaced by U+FFFD (the
    /// default of tiktoken's and wordsplit's `decode`).
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned())
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

    /// The pipeline that does the work (offsets, batches, other policies).
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }
}
