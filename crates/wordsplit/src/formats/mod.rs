//! Vocabulary files read in Rust alone: tiktoken rank files ([`read_tiktoken`]), HF
//! `tokenizer.json` in the layouts that give a plain split pattern, and its WordPiece,
//! WordLevel and Unigram files with their pipeline ([`read_hf_tokenizer_json`]), SentencePiece
//! Unigram `.model` files with their pipeline ([`read_sentencepiece_unigram`]),
//! `vocab.json` + `merges.txt` ([`read_vocab_merges`]) and the eos, bos and chat template of a
//! `tokenizer_config.json` ([`with_tokenizer_config`]), wordsplit's compact derived entries
//! ([`read_derived`]), and the registered vocabularies from their rank files ([`read_named`]);
//! and, as fast paths for the Python package's loaders (which read what these leave and word
//! every error), GGUF metadata and `gemma4` merges ([`gguf`]) and a SentencePiece `.model`'s
//! pieces, tokens and score-ranked merges ([`sentencepiece`]).
//! They use std, `serde_json`, `sha2` and `flate2` (miniz_oxide) only, and build for
//! WebAssembly.
//!
//! Each reader takes the file's bytes and returns a [`VocabData`]: what the engine needs to
//! build its tables, in the engine's own types ([`Literal`], [`NormalizeStage`]), checked with
//! the invariants [`VocabData`] lists. Each module states how it reads its format (which
//! fields, which leniencies, which refusals). The Python package's loaders read the same files
//! by the same rules, and the tests hold the two to each other: on every vocabulary file of
//! the repository the same tokens, ids, literals, merges and pattern (`tests/formats.rs`,
//! against digests of what the Python loaders make), and a [`FormatError`] for each
//! malformed input those loaders refuse (`tests/formats_refusals.rs`). A file in a form the
//! core does not run (a split program, a normalizer program, a normalizer other than NFC,
//! which the Python package runs) is a [`FormatError::Unsupported`] that names it.
//!
//! Nothing here touches the file system except [`read_file`] and the `load_*` functions, which
//! read a file (gunzipped when its name ends in `.gz`, at most [`MAX_FILE_BYTES`]) and name the
//! vocabulary after it (`cl100k_base.tiktoken.gz` → `cl100k_base`).
//!
//! ```
//! use wordsplit::formats::{read_tiktoken, TiktokenFacts};
//! use wordsplit::NormalizeStage;
//!
//! let lines: String = (0u8..=255)
//!     .map(|b| format!("{} {}\n", base64_of(&[b]), b))
//!     .collect();
//! let facts = TiktokenFacts { pattern: Some(r"\S+|\s+".into()), ..TiktokenFacts::default() };
//! let vocab = read_tiktoken(lines.as_bytes(), &facts).unwrap();
//! assert_eq!((vocab.n_vocab, vocab.normalizer), (256, NormalizeStage::None));
//! # fn base64_of(bytes: &[u8]) -> String {
//! #     const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
//! #     let b = bytes[0] as usize;
//! #     format!("{}{}==", A[b >> 2] as char, A[(b & 3) << 4] as char)
//! # }
//! ```

pub mod derived;
pub mod gguf;
pub mod hf;
pub mod named;
pub mod sentencepiece;
pub mod sentencepiece_unigram;
#[rustfmt::skip]
pub(crate) mod named_table;
pub mod tiktoken;
pub mod tokenizer_config;
pub mod vocab_merges;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::literal::Literal;
use crate::normalizers::NormalizeStage;
use crate::spec::{ModelSpec, PipelineSpec};

pub use derived::{load_derived, read_derived};
pub use hf::{load_hf_tokenizer_json, read_hf_tokenizer_json};
pub use named::{named_vocabularies, read_named};
pub use sentencepiece_unigram::{load_sentencepiece_unigram, read_sentencepiece_unigram};
pub use tiktoken::{load_tiktoken, read_tiktoken, read_tiktoken_ranks, TiktokenFacts};
pub use tokenizer_config::with_tokenizer_config;
pub use vocab_merges::{load_vocab_merges, read_vocab_merges};

/// A vocabulary as its file defines it, checked: the input of the engine's tables.
///
/// Invariants every reader establishes (the Python package's `Vocab` checks the same): at
/// least one BPE token; BPE ids and BPE bytes unique; a literal's id is a BPE id, or unique
/// among the literals (two special literals may share one, as o200k_harmony's do); every id
/// below `n_vocab`, which stays below 2 × tokens + 65,536; merges name BPE tokens whose
/// concatenation is one; `eos_token_id`, `bos_token_id` and `unk_token_id` are ids of tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VocabData {
    /// A short name for messages: the registered name, or the file's (see the `load_*` functions).
    pub name: String,
    /// Every BPE token: its bytes and its id (= its rank: lower merges first), in file order.
    pub tokens: Vec<(Vec<u8>, u32)>,
    /// The special tokens, then the non-special added tokens, each in file order, with HF's
    /// matching flags.
    pub literals: Vec<Literal>,
    /// Pair-ranked merges `(left id, right id, rank)`: present exactly when the merge list is
    /// not in merged-id order (HF semantics, the lowest rank merges first); `None` means
    /// token-rank BPE on `tokens` (tiktoken's rule, which such files give the same ids).
    pub merges: Option<Vec<(u32, u32, u32)>>,
    /// A piece that is itself a token is that token (tiktoken, HF `ignore_merges`); false only
    /// for pair-ranked merges without `ignore_merges`.
    pub whole_piece_lookup: bool,
    /// The number of ids: the declared size, else the largest id + 1.
    pub n_vocab: u32,
    /// The split regex (tiktoken's `pat_str`, `\p{..}` classes allowed).
    pub pattern: String,
    /// The normalization applied to text before splitting: `None` or `Nfc` (the readers
    /// refuse the others as [`FormatError::Unsupported`]).
    pub normalizer: NormalizeStage,
    /// The end-of-sequence token, where the vocabulary declares one.
    pub eos_token_id: Option<u32>,
    /// The beginning-of-sequence token, where the vocabulary declares one.
    pub bos_token_id: Option<u32>,
    /// The id a byte without a single-byte token is encoded as (HF's `unk_token`); `None`
    /// drops such a byte before merging.
    pub unk_token_id: Option<u32>,
    /// Consecutive such bytes of one piece make one unk token (HF's `fuse_unk`).
    pub fuse_unk: bool,
    /// The model's Jinja chat template, where the file carries one (derived entries,
    /// [`with_tokenizer_config`]).
    pub chat_template: Option<String>,
    /// The pipeline of a vocabulary that is not byte-level BPE (a WordPiece, WordLevel or
    /// Unigram tokenizer.json, a SentencePiece Unigram `.model`): its normalizer, spanner,
    /// model, decoder and post-processor, which
    /// [`Tokenizer::from_vocab`](crate::Tokenizer::from_vocab) runs; `tokens` are then the
    /// model's vocab (every entry the model searches or looks up), `pattern` is empty and
    /// `normalizer` is `None` (the pipeline's stages say both). `None` for byte-level BPE,
    /// whose pipeline is `pattern` and `normalizer`.
    pub pipeline: Option<PipelineSpec>,
    /// A Unigram model's score of each id (its log probability, as the file gives it; 0 for
    /// an id the model does not score): present exactly when the pipeline's model is
    /// [`ModelSpec::Unigram`].
    pub scores: Option<Scores>,
}

/// A Unigram model's scores by id. Two are equal when every score has the same bits (the
/// readers give finite scores only, so this is an equivalence, as [`VocabData`]'s `Eq` needs).
#[derive(Clone, Debug, Default)]
pub struct Scores(pub Vec<f64>);

impl PartialEq for Scores {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for Scores {}

/// The kind of file a [`FormatError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A tiktoken rank file (`.tiktoken`, Meta's `tokenizer.model`).
    Tiktoken,
    /// A HuggingFace `tokenizer.json`.
    TokenizerJson,
    /// HF's `vocab.json` + `merges.txt` (+ `tokenizer_config.json`), or GPT-2's `encoder.json` + `vocab.bpe`.
    VocabMerges,
    /// The `tokenizer_config.json` beside an HF file (eos, bos, chat template).
    TokenizerConfig,
    /// A wordsplit derived entry (the compact form of a parsed vocabulary).
    Derived,
    /// A SentencePiece model (`.model`, a serialized `ModelProto`).
    SentencePiece,
}

impl FileKind {
    /// How a file of this kind with a broken entry is mended.
    fn repair(self) -> &'static str {
        match self {
            FileKind::Tiktoken => "correct that line, or get the file again from its source",
            FileKind::TokenizerJson => {
                "correct that entry, or save the tokenizer again with HF tokenizers' Tokenizer.save"
            }
            FileKind::VocabMerges => {
                "correct that entry, or save the tokenizer again with transformers' save_pretrained"
            }
            FileKind::TokenizerConfig => {
                "correct that entry, or save the tokenizer again with transformers"
            }
            FileKind::Derived => "remove the entry and parse its source file again",
            FileKind::SentencePiece => "get the file again from its source",
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Tiktoken => "tiktoken rank file",
            FileKind::TokenizerJson => "tokenizer.json",
            FileKind::VocabMerges => "vocab.json + merges.txt",
            FileKind::TokenizerConfig => "tokenizer_config.json",
            FileKind::Derived => "derived vocabulary entry",
            FileKind::SentencePiece => "SentencePiece model",
        })
    }
}

/// Why a vocabulary file was refused. Each message says what was wrong, where (the kind of
/// file and the line, JSON path or entry) and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// A rank file line that is not `base64 rank` (`line` counts from 1).
    BadRankLine {
        line: usize,
        text: String,
        reason: String,
    },
    /// The bytes are not JSON (`detail`: the parser's message, with its line and column).
    Json { file: FileKind, detail: String },
    /// An entry of the wrong shape or value: `at` is a line or JSON path, `problem` what is wrong.
    Malformed {
        file: FileKind,
        at: String,
        problem: String,
    },
    /// Two tokens spell the same bytes.
    DuplicateToken {
        file: FileKind,
        at: String,
        token: Vec<u8>,
        ids: (u64, u64),
    },
    /// Two tokens have the same id (`first` and `second` describe them).
    DuplicateId {
        file: FileKind,
        id: u32,
        first: String,
        second: String,
    },
    /// An id or `n_vocab` outside what the vocabulary can hold (`what` names it).
    IdOutOfRange {
        file: FileKind,
        what: String,
        limit: u64,
    },
    /// A construct the Rust readers do not run (other models, normalizers and pre-tokenizers,
    /// such as the split and normalizer programs the Python package runs).
    Unsupported {
        file: FileKind,
        at: String,
        construct: String,
        hint: String,
    },
    /// A SentencePiece model (protobuf) given as a rank file.
    SentencePiece,
    /// A rank file that is not one of the recognized files, read without a pattern.
    PatternRequired { sha256: String },
    /// A derived entry that fails a check (magic, format, sizes, checksum, header fields).
    CorruptDerived { problem: String },
    /// [`read_named`] of a name that is not registered.
    UnknownName { name: String },
    /// [`read_named`] given a rank file other than the name's official one.
    WrongRankFile {
        name: String,
        expected_sha256: String,
        got_sha256: String,
    },
    /// A file that could not be read (`load_*`), or is larger than [`MAX_FILE_BYTES`].
    Io { path: String, detail: String },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::BadRankLine { line, text, reason } => write!(
                f,
                "tiktoken rank file, line {line}: {reason}: {text:?}; each line must be \
                 'base64(token) rank' (tiktoken's format)"
            ),
            FormatError::Json { file, detail } => {
                write!(f, "{file}: not valid JSON ({detail}); is the file complete?")
            }
            FormatError::Malformed { file, at, problem } => {
                write!(f, "{file}, {at}: {problem} ({})", file.repair())
            }
            FormatError::DuplicateToken { file, at, token, ids } => write!(
                f,
                "{file}, {at}: the token {} is listed twice (ids {} and {}); a token has one id: \
                 remove one of them",
                show_bytes(token),
                ids.0,
                ids.1
            ),
            FormatError::DuplicateId { file, id, first, second } => write!(
                f,
                "{file}: id {id} is used twice, by {first} and by {second}; give each token its own id"
            ),
            FormatError::IdOutOfRange { file, what, limit } => write!(
                f,
                "{file}: {what}, which is negative or far beyond the tokens of the vocabulary (ids \
                 must stay below 2 x tokens + 65536 = {limit}); the file is corrupt, or its ids \
                 are not token ids"
            ),
            FormatError::Unsupported { file, at, construct, hint } => {
                write!(f, "{file}, {at}: {construct} is not supported by the Rust readers; {hint}")
            }
            FormatError::SentencePiece => f.write_str(
                "the file is a SentencePiece model (protobuf), not a tiktoken rank file; only \
                 byte-level BPE is read (a Llama 2, T5 or Gemma tokenizer.model is SentencePiece)",
            ),
            FormatError::PatternRequired { sha256 } => write!(
                f,
                "tiktoken rank file (sha256 {sha256}): it carries no split pattern and no special \
                 tokens, and it is not one of the recognized files; pass the pattern the \
                 tokenizer was trained with (TiktokenFacts::pattern, tiktoken's pat_str), its \
                 special tokens and n_vocab"
            ),
            FormatError::CorruptDerived { problem } => write!(
                f,
                "derived vocabulary entry: {problem}; the entry is damaged or from another \
                 version: remove it and parse the source file again"
            ),
            FormatError::UnknownName { name } => write!(
                f,
                "{name:?} is not a registered vocabulary; known: {}",
                named_vocabularies().join(", ")
            ),
            FormatError::WrongRankFile { name, expected_sha256, got_sha256 } => write!(
                f,
                "{name}: the rank file given has sha256 {got_sha256}, not that of {name}'s \
                 official file ({expected_sha256}); pass the uncompressed official file"
            ),
            FormatError::Io { path, detail } => write!(f, "{path}: {detail}"),
        }
    }
}

impl std::error::Error for FormatError {}

/// Bytes as a message shows them: the text when it is UTF-8, else escaped.
fn show_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => format!("{text:?}"),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

/// How far ids may run past the number of tokens (`id_limit`).
pub const ID_SLACK: u64 = 1 << 16;

/// The bound every id of a vocabulary of `n_tokens` tokens stays below (and `n_vocab` at
/// most): 2 × tokens + 65,536. Tables indexed by id then stay proportional to the file, while
/// real vocabularies, which are dense, are far inside it.
///
/// ```
/// assert_eq!(wordsplit::formats::id_limit(100_000), 265_536);
/// ```
pub fn id_limit(n_tokens: usize) -> u64 {
    2 * n_tokens as u64 + ID_SLACK
}

/// The most bytes a `load_*` function reads from one file, gunzipped (256 MiB, the Python
/// package's default cap too): a gzip bomb costs at most about that much memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// A file's bytes, gunzipped when its name ends in `.gz`, at most [`MAX_FILE_BYTES`].
pub fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    let io_error = |detail: String| FormatError::Io {
        path: path.display().to_string(),
        detail,
    };
    let file = std::fs::File::open(path).map_err(|e| io_error(e.to_string()))?;
    let gzipped = path.extension().is_some_and(|ext| ext == "gz");
    let reader: Box<dyn Read> = if gzipped {
        // Every member of a multi-member gzip, concatenated (as gunzip reads it).
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut data = Vec::new();
    reader
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| io_error(format!("cannot read it ({e})")))?;
    if data.len() as u64 > MAX_FILE_BYTES {
        return Err(io_error(format!(
            "larger than {} MiB{}; no vocabulary file is this large",
            MAX_FILE_BYTES >> 20,
            if gzipped { " gunzipped" } else { "" }
        )));
    }
    Ok(data)
}

/// The stem a vocabulary read from `path` is named after: its file name without `.gz`, then
/// `.tiktoken`, then `.json` (`cl100k_base.tiktoken.gz` → `cl100k_base`).
pub(crate) fn file_stem(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for suffix in [".gz", ".tiktoken", ".json"] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            name.truncate(stripped.len());
        }
    }
    name
}

/// The name of the directory holding `path` (for files whose name only says the format).
pub(crate) fn parent_name(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute
        .parent()
        .and_then(|dir| dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl VocabData {
    /// The largest id of any token, BPE or literal.
    fn max_id(&self) -> Option<u32> {
        let bpe = self.tokens.iter().map(|(_, id)| *id);
        bpe.chain(self.literals.iter().map(|lit| lit.id)).max()
    }

    /// Sets `n_vocab` (the declared size, else the largest id + 1) and checks every invariant
    /// of [`VocabData`]; each reader ends with it. `declared` may be any integer the file holds.
    pub(crate) fn finish(
        mut self,
        file: FileKind,
        declared: Option<i128>,
    ) -> Result<Self, FormatError> {
        if self.tokens.is_empty() {
            return Err(FormatError::Malformed {
                file,
                at: "tokens".into(),
                problem: "the vocabulary has no BPE tokens; a byte-level BPE vocabulary has at \
                          least its single-byte tokens"
                    .into(),
            });
        }
        self.check_ids(file)?;
        self.check_merges(file)?;
        let n_tokens = self.tokens.len() + self.literals.len();
        let limit = id_limit(n_tokens);
        let max_id = self.max_id().unwrap_or(0);
        if u64::from(max_id) >= limit {
            let owner = self.describe_id(max_id);
            return Err(FormatError::IdOutOfRange {
                file,
                what: format!("{owner} has the id {max_id}"),
                limit,
            });
        }
        let n_vocab = match declared {
            None => i128::from(max_id) + 1,
            Some(n) if n <= i128::from(max_id) => {
                return Err(FormatError::Malformed {
                    file,
                    at: "n_vocab".into(),
                    problem: format!(
                        "n_vocab {n} is not above the largest id {max_id}; n_vocab counts every id"
                    ),
                })
            }
            Some(n) => n,
        };
        if n_vocab > i128::from(limit) {
            return Err(FormatError::IdOutOfRange {
                file,
                what: format!("n_vocab is {n_vocab}"),
                limit,
            });
        }
        self.n_vocab = n_vocab as u32; // (below `limit`, which is far below u32::MAX here)
        self.check_special_ids(file)?;
        Ok(self)
    }

    fn describe_id(&self, id: u32) -> String {
        if let Some((piece, _)) = self.tokens.iter().find(|(_, i)| *i == id) {
            return format!("token {}", show_bytes(piece));
        }
        match self.literals.iter().find(|lit| lit.id == id) {
            Some(lit) => format!(
                "{} token {:?}",
                if lit.special { "special" } else { "added" },
                lit.text
            ),
            None => format!("id {id}"),
        }
    }

    /// BPE ids and bytes unique; literals non-empty, each naming a BPE id or an id no other
    /// literal has (two special literals may share one).
    fn check_ids(&self, file: FileKind) -> Result<(), FormatError> {
        let mut bpe_ids: HashMap<u32, &[u8]> = HashMap::with_capacity(self.tokens.len());
        let mut pieces: HashMap<&[u8], u32> = HashMap::with_capacity(self.tokens.len());
        for (piece, id) in &self.tokens {
            if let Some(other) = bpe_ids.insert(*id, piece) {
                return Err(FormatError::DuplicateId {
                    file,
                    id: *id,
                    first: format!("token {}", show_bytes(other)),
                    second: format!("token {}", show_bytes(piece)),
                });
            }
            if let Some(other) = pieces.insert(piece, *id) {
                return Err(FormatError::DuplicateToken {
                    file,
                    at: format!("id {id}"),
                    token: piece.clone(),
                    ids: (u64::from(other), u64::from(*id)),
                });
            }
        }
        let mut seen: HashMap<u32, &Literal> = HashMap::new();
        for lit in &self.literals {
            let kind = if lit.special {
                "special token"
            } else {
                "added token"
            };
            if lit.text.is_empty() {
                return Err(FormatError::Malformed {
                    file,
                    at: format!("{kind} {}", lit.id),
                    problem: "a special or added token must be a non-empty string".into(),
                });
            }
            if bpe_ids.contains_key(&lit.id) {
                continue;
            }
            match seen.get(&lit.id) {
                Some(first) if !(first.special && lit.special) => {
                    let first_kind = if first.special {
                        "special token"
                    } else {
                        "added token"
                    };
                    return Err(FormatError::DuplicateId {
                        file,
                        id: lit.id,
                        first: format!("{first_kind} {:?}", first.text),
                        second: format!("{kind} {:?}", lit.text),
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert(lit.id, lit);
                }
            }
        }
        Ok(())
    }

    fn check_merges(&self, file: FileKind) -> Result<(), FormatError> {
        let Some(merges) = &self.merges else {
            return Ok(());
        };
        let by_id: HashMap<u32, &[u8]> = self
            .tokens
            .iter()
            .map(|(p, i)| (*i, p.as_slice()))
            .collect();
        let pieces: HashSet<&[u8]> = self.tokens.iter().map(|(p, _)| p.as_slice()).collect();
        // (HF's BPE over characters makes the left token and the right one after its prefix)
        let cut = match &self.pipeline {
            Some(PipelineSpec {
                model:
                    ModelSpec::CharacterBpe {
                        continuing_subword_prefix,
                        ..
                    },
                ..
            }) => continuing_subword_prefix.len(),
            _ => 0,
        };
        for &(left, right, rank) in merges {
            let (Some(l), Some(r)) = (by_id.get(&left), by_id.get(&right)) else {
                return Err(FormatError::Malformed {
                    file,
                    at: format!("merge #{rank}"),
                    problem: format!("({left}, {right}) names an id that is not a BPE token"),
                });
            };
            let tail = r.get(cut..).unwrap_or_default();
            if !pieces.contains([*l, tail].concat().as_slice()) {
                return Err(FormatError::Malformed {
                    file,
                    at: format!("merge #{rank}"),
                    problem: format!(
                        "{} + {} makes a token that is not in the vocabulary",
                        show_bytes(l),
                        show_bytes(r)
                    ),
                });
            }
        }
        Ok(())
    }

    fn check_special_ids(&self, file: FileKind) -> Result<(), FormatError> {
        let has = |id: u32| {
            id < self.n_vocab
                && (self.tokens.iter().any(|(_, i)| *i == id)
                    || self.literals.iter().any(|l| l.id == id))
        };
        for (label, value) in [
            ("eos_token_id", self.eos_token_id),
            ("bos_token_id", self.bos_token_id),
            ("unk_token_id", self.unk_token_id),
        ] {
            if let Some(id) = value.filter(|id| !has(*id)) {
                return Err(FormatError::Malformed {
                    file,
                    at: label.into(),
                    problem: format!("{id} is not a token id of this vocabulary"),
                });
            }
        }
        Ok(())
    }
}

/// The lowercase hex sha256 of `data` (the key of recognized rank files).
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether a JSON value counts as set: not for a missing key, null, false, 0 or an empty
/// string, array or object (Python's truthiness, as the Python package's loaders read these
/// fields).
pub(crate) fn truthy(value: Option<&serde_json::Value>) -> bool {
    use serde_json::Value;
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// Text-keyed entries in insertion order: a key set again keeps its first place and takes the
/// new value (a Python dict's semantics, with which the Python loaders keep literals).
pub(crate) struct TextMap<V> {
    entries: Vec<(String, V)>,
    place: HashMap<String, usize>,
}

impl<V> TextMap<V> {
    pub(crate) fn new() -> Self {
        TextMap {
            entries: Vec::new(),
            place: HashMap::new(),
        }
    }

    pub(crate) fn insert(&mut self, key: &str, value: V) {
        match self.place.get(key) {
            Some(&at) => self.entries[at].1 = value,
            None => {
                self.place.insert(key.to_string(), self.entries.len());
                self.entries.push((key.to_string(), value));
            }
        }
    }

    pub(crate) fn into_entries(self) -> Vec<(String, V)> {
        self.entries
    }
}
