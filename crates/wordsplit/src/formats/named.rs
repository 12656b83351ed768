//! The registered vocabularies (`cl100k_base`, `o200k_base`, `o200k_harmony`, `r50k_base` and
//! its alias `gpt2`, `p50k_base`, `p50k_edit`, `qwen3`): the facts their tokenizers define in
//! code, around their official rank files. The table (`named_table.rs`) is generated from the
//! crate's `data/registered.json` by `tools/gen_registered.py`, and the Python package reads the
//! same file, so both languages read one definition.
//!
//! ```
//! assert!(wordsplit::formats::named_vocabularies().contains(&"cl100k_base"));
//! ```

use super::named_table::{ALIASES, KNOWN_RANK_FILES, PRETRAINED};
use super::tiktoken::{read_tiktoken, TiktokenFacts};
use super::{FormatError, VocabData};
use crate::normalizers::NormalizeStage;

/// What a tokenizer defines in code around its rank file (a record of the generated table).
#[derive(Debug)]
pub(crate) struct Facts {
    pub name: &'static str,
    pub pattern: &'static str,
    pub special_tokens: &'static [(&'static str, u32)],
    pub added_tokens: &'static [(&'static str, u32)],
    pub n_vocab: Option<u32>,
    /// `"none"` or `"nfc"` (the generator refuses any other).
    pub normalizer: &'static str,
    pub eos_token: Option<&'static str>,
}

/// The registered names and their aliases, sorted.
pub fn named_vocabularies() -> Vec<&'static str> {
    let mut names: Vec<&str> = PRETRAINED.iter().map(|(name, _, _)| *name).collect();
    names.extend(ALIASES.iter().map(|(alias, _)| *alias));
    names.sort_unstable();
    names
}

/// The registered vocabulary `name` (or an alias: `gpt2` is `r50k_base`) from the bytes of its
/// official rank file, uncompressed (the Python package bundles it as
/// `vocabs/data/<file>.tiktoken.gz`; `p50k_edit` uses p50k_base's, `o200k_harmony` o200k_base's).
///
/// Errors: [`FormatError::UnknownName`]; [`FormatError::WrongRankFile`] when the bytes are not
/// the official file (checked by sha256: other ranks would give wrong ids without a word).
pub fn read_named(name: &str, tiktoken_data: &[u8]) -> Result<VocabData, FormatError> {
    let registered = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, target)| *target);
    let Some((_, sha256, facts)) = PRETRAINED.iter().find(|(n, _, _)| *n == registered) else {
        return Err(FormatError::UnknownName { name: name.into() });
    };
    let got = super::sha256_hex(tiktoken_data);
    if got != *sha256 {
        return Err(FormatError::WrongRankFile {
            name: registered.into(),
            expected_sha256: sha256.to_string(),
            got_sha256: got,
        });
    }
    let owned = |table: &[(&str, u32)]| table.iter().map(|(t, i)| (t.to_string(), *i)).collect();
    read_tiktoken(
        tiktoken_data,
        &TiktokenFacts {
            name: Some(facts.name.into()),
            pattern: Some(facts.pattern.into()),
            special_tokens: Some(owned(facts.special_tokens)),
            added_tokens: Some(owned(facts.added_tokens)),
            n_vocab: facts.n_vocab,
            normalizer: NormalizeStage::from_name(facts.normalizer),
            eos_token: facts.eos_token.map(str::to_string),
        },
    )
}

/// The facts of a rank file recognized by the sha256 (hex) of its uncompressed bytes.
pub(crate) fn known_rank_file(sha256: &str) -> Option<&'static Facts> {
    KNOWN_RANK_FILES
        .iter()
        .find(|(sha, _)| *sha == sha256)
        .map(|(_, facts)| *facts)
}
