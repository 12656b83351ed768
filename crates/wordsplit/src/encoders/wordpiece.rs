//! `wordpiece` and `word-level`: the models that look a piece up in the vocabulary, as HF
//! tokenizers runs them (the Python package's `encoders/wordpiece.py` is the reference the
//! tests hold them to).
//!
//! [`WordPiece`] (BERT) cuts a piece from the left into the longest tokens the vocabulary has,
//! every token after the first spelled with the continuing-subword prefix (`##`). A piece of
//! more than `max_input_chars_per_word` characters, or with a position where no token starts,
//! is the unknown token. HF tries the candidates at a position longest first, shortening
//! them a character at a time, each a hash lookup; here one walk along the piece in a
//! [`PrefixTrie`] of the tokens finds the longest, and tokens after the first walk on from
//! the trie's state of the prefix. [`WordLevel`] looks the whole piece up, else the unknown
//! token. A piece that needs the unknown token when the vocabulary has none is an error
//! ([`Error::MissingUnknownToken`]), as in HF.
//!
//! Both are [`Encoder`]s the pipeline's piece loop asks for the pieces its caches do not hold.

use std::sync::Arc;

use super::prefix_trie::{Cursor, PrefixTrie, NONE};
use super::Encoder;
use crate::error::Error;
use crate::spec::ModelSpec;
use crate::tables::MergeTables;

/// The encoder registered as `name` (`wordpiece`, `word-level`) for the model of `spec` over
/// a vocabulary's tables; `vocab` names it in errors. None for another name; an error when
/// the model is not the encoder's.
pub fn word_model_encoder(
    name: &str,
    tables: &Arc<MergeTables>,
    model: &ModelSpec,
    vocab: &str,
) -> Option<Result<Box<dyn Encoder>, Error>> {
    let made: Result<Box<dyn Encoder>, Error> = match (name, model) {
        ("wordpiece", ModelSpec::WordPiece { .. }) => WordPiece::new(tables, model, vocab)
            .map(|encoder| Box::new(encoder) as Box<dyn Encoder>),
        ("word-level", ModelSpec::WordLevel { unk_token }) => {
            Ok(Box::new(WordLevel::new(tables, unk_token, vocab)))
        }
        ("wordpiece" | "word-level", other) => Err(Error::Unsupported(format!(
            "the {name} encoder runs a {} model, not {}",
            if name == "wordpiece" {
                "WordPiece"
            } else {
                "WordLevel"
            },
            other.kind()
        ))),
        (_, ModelSpec::WordPiece { .. } | ModelSpec::WordLevel { .. }) => {
            Err(Error::Unsupported(format!(
                "a {} model runs on the {} encoder, not {name}",
                model.kind(),
                if matches!(model, ModelSpec::WordPiece { .. }) {
                    "wordpiece"
                } else {
                    "word-level"
                }
            )))
        }
        _ => return None,
    };
    Some(made)
}

/// The unknown token of a model: its id, or the error of a piece that needs it when the
/// vocabulary lacks it (also `character_bpe`'s).
pub(super) struct Unknown {
    id: Option<u32>,
    token: String,
    vocab: String,
}

impl Unknown {
    pub(super) fn new(tables: &MergeTables, token: &str, vocab: &str) -> Self {
        Self {
            id: tables.rank_of(token.as_bytes()),
            token: token.to_owned(),
            vocab: vocab.to_owned(),
        }
    }

    /// The unknown token for `piece`, appended to `out`.
    #[cold]
    pub(super) fn push(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        match self.id {
            Some(id) => {
                out.push(id);
                Ok(())
            }
            None => Err(Error::MissingUnknownToken {
                vocab: self.vocab.clone(),
                piece: String::from_utf8_lossy(piece).chars().take(40).collect(),
                token: self.token.clone(),
            }),
        }
    }
}

/// WordPiece's greedy longest match (see the module docs).
pub struct WordPiece {
    trie: PrefixTrie,
    /// The trie's root, where a piece's first token is looked for.
    root: Cursor,
    /// The trie's cursor after the continuing-subword prefix: where the tokens after a
    /// piece's first are looked for (None: no token starts with it, so none follows a first).
    continuing: Option<Cursor>,
    max_chars: usize,
    unknown: Unknown,
}

impl WordPiece {
    /// The encoder of a WordPiece `model` over `tables` (its tokens), named `vocab` in errors.
    pub fn new(tables: &MergeTables, model: &ModelSpec, vocab: &str) -> Result<Self, Error> {
        let ModelSpec::WordPiece {
            unk_token,
            continuing_subword_prefix,
            max_input_chars_per_word,
        } = model
        else {
            return Err(Error::Unsupported(format!(
                "the wordpiece encoder runs a WordPiece model, not {}",
                model.kind()
            )));
        };
        // Tokens that are not UTF-8 are left out: no text spells them (the Python encoder's
        // tokens, decoded with surrogate escapes, never equal a piece of text either), and
        // the trie's matches of UTF-8 tokens end on character boundaries.
        let trie = PrefixTrie::new(tables.bpe_ids().filter_map(|id| {
            let token = tables.token(id)?;
            std::str::from_utf8(token).is_ok().then_some((token, id))
        }));
        let root = trie.root();
        let continuing = continuing_subword_prefix
            .bytes()
            .try_fold(root, |mut cursor, byte| {
                trie.advance(&mut cursor, byte).map(|_| cursor)
            });
        Ok(Self {
            trie,
            root,
            continuing,
            max_chars: usize::try_from(*max_input_chars_per_word).unwrap_or(usize::MAX),
            unknown: Unknown::new(tables, unk_token, vocab),
        })
    }

    /// The ids of `piece` (UTF-8 text), appended to `out`.
    #[inline]
    pub fn encode(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        let first = out.len();
        if !self.longest_matches(piece, |id, _| out.push(id)) {
            out.truncate(first);
            return self.unknown.push(piece, out);
        }
        Ok(())
    }

    /// Calls `emit(id, length)` for each token of `piece`, longest first from the left, with
    /// the bytes of the piece it stands for; false when the piece is the unknown token instead
    /// (too long, or a position no token starts at: what was emitted is then to be dropped).
    #[inline]
    fn longest_matches(&self, piece: &[u8], mut emit: impl FnMut(u32, usize)) -> bool {
        // (a piece of no more bytes than the limit has no more characters)
        if piece.len() > self.max_chars && char_count(piece) > self.max_chars {
            return false;
        }
        let mut cursor = self.root;
        let mut start = 0;
        while start < piece.len() {
            let Some((len, id)) = self.longest(cursor, &piece[start..]) else {
                return false;
            };
            emit(id, len);
            start += len;
            match self.continuing {
                Some(continuing) => cursor = continuing,
                None if start < piece.len() => return false,
                None => {}
            }
        }
        true
    }

    /// The longest non-empty prefix of `bytes` that is a token from `cursor` on: (its length,
    /// its id). The walk keeps each slot's base ([`PrefixTrie::advance`]), so a step waits on
    /// one read, not on its state's slot and then its child's.
    #[inline(always)]
    fn longest(&self, mut cursor: Cursor, bytes: &[u8]) -> Option<(usize, u32)> {
        let (mut best_len, mut best) = (0, NONE);
        for (i, &byte) in bytes.iter().enumerate() {
            let Some(id) = self.trie.advance(&mut cursor, byte) else {
                break;
            };
            if id != NONE {
                (best_len, best) = (i + 1, id);
            }
        }
        (best != NONE).then_some((best_len, best))
    }
}

/// The characters of `bytes` (UTF-8): the bytes that start one.
fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

impl Encoder for WordPiece {
    fn name(&self) -> &str {
        "wordpiece"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        self.encode(piece, out)
    }

    fn is_native(&self) -> bool {
        true
    }

    /// A token is its own longest match, unless it has more characters than a word may.
    fn takes_tokens_whole(&self) -> bool {
        self.max_chars >= 15
    }

    /// A token after a piece's first stands for its bytes without the prefix; the unknown
    /// token for the whole piece.
    fn token_lengths(&self, piece: &[u8], out: &mut Vec<usize>) -> Result<bool, Error> {
        let first = out.len();
        if !self.longest_matches(piece, |_, len| out.push(len)) {
            out.truncate(first);
            self.unknown.push(piece, &mut Vec::new())?;
            out.push(piece.len());
        }
        Ok(true)
    }
}

/// WordLevel's lookup of the whole piece (see the module docs).
pub struct WordLevel {
    tables: Arc<MergeTables>,
    unknown: Unknown,
}

impl WordLevel {
    /// The encoder of a WordLevel model with `unk_token` over `tables`, named `vocab` in errors.
    pub fn new(tables: &Arc<MergeTables>, unk_token: &str, vocab: &str) -> Self {
        Self {
            tables: Arc::clone(tables),
            unknown: Unknown::new(tables, unk_token, vocab),
        }
    }
}

impl Encoder for WordLevel {
    fn name(&self) -> &str {
        "word-level"
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        match self.tables.rank_of(piece) {
            Some(id) => {
                out.push(id);
                Ok(())
            }
            None => self.unknown.push(piece, out),
        }
    }

    fn is_native(&self) -> bool {
        true
    }

    fn takes_tokens_whole(&self) -> bool {
        true
    }

    /// The one token stands for the whole piece.
    fn token_lengths(&self, piece: &[u8], out: &mut Vec<usize>) -> Result<bool, Error> {
        out.push(piece.len());
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(tokens: &[&str]) -> Arc<MergeTables> {
        let tokens: Vec<(&[u8], u32)> = tokens
            .iter()
            .enumerate()
            .map(|(id, t)| (t.as_bytes(), id as u32))
            .collect();
        let n_vocab = tokens.len();
        Arc::new(MergeTables::from_tokens(tokens, &[], n_vocab, None, true).unwrap())
    }

    fn wordpiece(unk: &str, prefix: &str, max: u64) -> ModelSpec {
        ModelSpec::WordPiece {
            unk_token: unk.into(),
            continuing_subword_prefix: prefix.into(),
            max_input_chars_per_word: max,
        }
    }

    fn ids(encoder: &dyn Encoder, piece: &str) -> Result<Vec<u32>, Error> {
        let mut out = vec![99];
        encoder.encode_piece(piece.as_bytes(), &mut out)?;
        Ok(out.split_off(1))
    }

    #[test]
    fn greedy_longest_match_with_the_prefix() {
        let t = tables(&[
            "[UNK]", "un", "##aff", "##able", "a", "una", "##ff", "é", "##é",
        ]);
        let encoder = word_model_encoder("wordpiece", &t, &wordpiece("[UNK]", "##", 100), "tiny")
            .unwrap()
            .unwrap();
        assert!(encoder.is_native());
        assert_eq!(ids(&*encoder, "unaffable").unwrap(), [5, 6, 3]);
        assert_eq!(ids(&*encoder, "unaffablex").unwrap(), [0]);
        assert_eq!(ids(&*encoder, "éé").unwrap(), [7, 8]);
        assert_eq!(ids(&*encoder, "a").unwrap(), [4]);
        assert_eq!(ids(&*encoder, "x").unwrap(), [0]);
        // The limit counts characters: four of two bytes each.
        let short = WordPiece::new(&t, &wordpiece("[UNK]", "##", 4), "tiny").unwrap();
        assert_eq!(ids(&short, "éééé").unwrap(), [7, 8, 8, 8]);
        assert_eq!(ids(&short, "ééééé").unwrap(), [0]);
        // No token starts with the prefix: a piece of more than one token is unknown.
        let other = WordPiece::new(&t, &wordpiece("[UNK]", "@@", 100), "tiny").unwrap();
        assert_eq!(ids(&other, "un").unwrap(), [1]);
        assert_eq!(ids(&other, "unaff").unwrap(), [0]);
        // An empty prefix: the tokens after the first are the first ones.
        let bare = WordPiece::new(&t, &wordpiece("[UNK]", "", 100), "tiny").unwrap();
        assert_eq!(ids(&bare, "unaa").unwrap(), [5, 4]);
    }

    #[test]
    fn a_token_that_is_not_utf8_never_matches() {
        let tokens: Vec<(&[u8], u32)> = vec![(b"[UNK]", 0), (b"\xc3", 1), (b"##\xa9", 2)];
        let t = Arc::new(MergeTables::from_tokens(tokens, &[], 3, None, true).unwrap());
        let encoder = WordPiece::new(&t, &wordpiece("[UNK]", "##", 100), "tiny").unwrap();
        assert_eq!(ids(&encoder, "é").unwrap(), [0]);
    }

    #[test]
    fn a_piece_that_needs_a_missing_unknown_token_is_an_error() {
        let t = tables(&["a"]);
        let encoder = WordPiece::new(&t, &wordpiece("[UNK]", "##", 100), "tiny").unwrap();
        assert_eq!(ids(&encoder, "a").unwrap(), [0]);
        let error = ids(&encoder, &"bé".repeat(30)).unwrap_err();
        let Error::MissingUnknownToken {
            vocab,
            piece,
            token,
        } = &error
        else {
            panic!("{error:?}");
        };
        assert_eq!((vocab.as_str(), token.as_str()), ("tiny", "[UNK]"));
        assert_eq!(piece.chars().count(), 40);
        let level = WordLevel::new(&t, "<unk>", "tiny");
        assert_eq!(ids(&level, "a").unwrap(), [0]);
        assert!(ids(&level, "ab").is_err());
    }

    #[test]
    fn word_level_looks_the_whole_piece_up() {
        let t = tables(&["<unk>", "ATG", "GCG"]);
        let model = ModelSpec::WordLevel {
            unk_token: "<unk>".into(),
        };
        let encoder = word_model_encoder("word-level", &t, &model, "codons")
            .unwrap()
            .unwrap();
        assert_eq!(ids(&*encoder, "ATG").unwrap(), [1]);
        assert_eq!(ids(&*encoder, "ATGGCG").unwrap(), [0]);
    }

    #[test]
    fn each_word_model_runs_on_its_own_encoder() {
        let t = tables(&["a"]);
        let piece = wordpiece("[UNK]", "##", 100);
        assert!(word_model_encoder("word-level", &t, &piece, "x")
            .unwrap()
            .is_err());
        assert!(word_model_encoder("buffer-sweep", &t, &piece, "x")
            .unwrap()
            .is_err());
        assert!(word_model_encoder("wordpiece", &t, &ModelSpec::Bpe, "x")
            .unwrap()
            .is_err());
        assert!(word_model_encoder("buffer-sweep", &t, &ModelSpec::Bpe, "x").is_none());
    }

    #[test]
    fn a_megabyte_word_is_linear() {
        let t = tables(&["[UNK]", "a", "##a", "aa", "##aa"]);
        let encoder = WordPiece::new(&t, &wordpiece("[UNK]", "##", u64::MAX), "tiny").unwrap();
        let word = "a".repeat(1 << 20);
        let ids = ids(&encoder, &word).unwrap();
        assert_eq!(ids.len(), 1 << 19);
        assert!(ids[1..].iter().all(|&id| id == 4));
    }
}
