//! HF's slow-tokenizer files: `vocab.json` + `merges.txt` (+ `tokenizer_config.json`), which
//! also reads GPT-2's `encoder.json` + `vocab.bpe`.
//!
//! The pattern and normalizer come from the config's `tokenizer_class` (`GPT2Tokenizer`,
//! `Qwen2Tokenizer`), else GPT-2's; the special and added tokens from its
//! `added_tokens_decoder` (id → token); without a config, a `<|endoftext|>` entry of the vocab
//! is GPT-2's special token. The eos token is the config's `eos_token` (a string or an
//! AddedToken object), else `<|endoftext|>` when it is special. The merges follow the rules
//! of tokenizer.json's (see [`super::hf`]).
//!
//! ```
//! let vocab = br#"{"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}"#;
//! let data = wordsplit::formats::read_vocab_merges(vocab, b"#version: 0.2\na b\n", None).unwrap();
//! assert_eq!((data.n_vocab, data.eos_token_id, data.literals[0].special), (4, Some(3), true));
//! ```

use std::path::Path;

use serde_json::{Map, Value};

use super::hf::bpe::{bpe_vocab, Layout, Rest};
use super::hf::Added;
use super::named_table::{GPT2_PATTERN, TOKENIZER_CLASS_FACTS};
use super::{file_stem, read_file, truthy, FileKind, FormatError, TextMap, VocabData};
use crate::normalizers::NormalizeStage;

const LAYOUT: Layout = Layout {
    file: FileKind::VocabMerges,
    vocab: "vocab.json",
    merges: "merges.txt",
};

fn malformed(at: &str, problem: impl Into<String>) -> FormatError {
    FormatError::Malformed {
        file: FileKind::VocabMerges,
        at: at.into(),
        problem: problem.into(),
    }
}

fn json(data: &[u8], what: &str) -> Result<Value, FormatError> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    serde_json::from_slice(data).map_err(|e| FormatError::Json {
        file: FileKind::VocabMerges,
        detail: format!("{what}: {e}"),
    })
}

/// Parse `vocab.json` + `merges.txt` (the vocabulary is named `vocab`; see
/// [`load_vocab_merges`] for names from a path), with the added tokens, pattern, normalizer and
/// eos of `tokenizer_config.json` when given.
pub fn read_vocab_merges(
    vocab_json: &[u8],
    merges_txt: &[u8],
    tokenizer_config: Option<&[u8]>,
) -> Result<VocabData, FormatError> {
    read(vocab_json, merges_txt, tokenizer_config, "vocab".into())
}

/// Read `vocab.json` + `merges.txt` (or `encoder.json` + `vocab.bpe`), and a
/// `tokenizer_config.json`, each gunzipped when its name ends in `.gz`; the vocabulary is named
/// after the vocab file (`gpt2-encoder.json` is `gpt2-encoder`).
pub fn load_vocab_merges(
    vocab_path: impl AsRef<Path>,
    merges_path: impl AsRef<Path>,
    tokenizer_config_path: Option<&Path>,
) -> Result<VocabData, FormatError> {
    let config = tokenizer_config_path.map(read_file).transpose()?;
    let vocab_path = vocab_path.as_ref();
    let (vocab, merges) = (read_file(vocab_path)?, read_file(merges_path.as_ref())?);
    read(&vocab, &merges, config.as_deref(), file_stem(vocab_path))
}

fn read(
    vocab_json: &[u8],
    merges_txt: &[u8],
    config: Option<&[u8]>,
    name: String,
) -> Result<VocabData, FormatError> {
    let Value::Object(vocab) = json(vocab_json, "vocab.json")? else {
        return Err(malformed("vocab.json", "must be an object of token → id"));
    };
    let config = match config.filter(|c| !c.is_empty()) {
        None => Map::new(),
        Some(data) => match json(data, "tokenizer_config.json")? {
            Value::Object(config) => config,
            other => {
                return Err(malformed(
                    "tokenizer_config.json",
                    format!("must be an object, not {other}"),
                ))
            }
        },
    };
    let mut literals = literals_of_config(&config)?;
    if config.is_empty() {
        if let Some(value) = vocab.get("<|endoftext|>") {
            // GPT-2's special token, at its vocab id.
            let id = super::hf::integer(value).ok_or_else(|| {
                malformed(
                    "vocab.json[\"<|endoftext|>\"]",
                    format!("has the id {value}; ids are non-negative integers"),
                )
            })?;
            let token = Added {
                content: "<|endoftext|>".into(),
                special: true,
                flags: 0,
            };
            literals.push((token, id)); // (no config: no other literal)
        }
    }
    let class = config.get("tokenizer_class").and_then(Value::as_str);
    let (pattern, normalizer) = TOKENIZER_CLASS_FACTS
        .iter()
        .find(|(name, _, _)| Some(*name) == class)
        .map_or((GPT2_PATTERN, "none"), |(_, pattern, normalizer)| {
            (*pattern, *normalizer)
        });
    let eos = match config.get("eos_token") {
        Some(Value::Object(token)) => token.get("content"),
        other => other,
    };
    let eos = match eos {
        Some(value) if truthy(Some(value)) => value.as_str(),
        _ if literals
            .iter()
            .any(|(t, _)| t.special && t.content == "<|endoftext|>") =>
        {
            Some("<|endoftext|>")
        }
        _ => None,
    };
    let text = std::str::from_utf8(merges_txt)
        .map_err(|e| malformed("merges.txt", format!("not UTF-8 ({e})")))?;
    let merges: Vec<Value> = text
        .split('\n')
        .filter(|line| !line.is_empty() && !line.starts_with("#version"))
        .map(Value::from)
        .collect();
    let model = Map::from_iter([("merges".to_string(), Value::Array(merges))]);
    let normalizer = if normalizer == "nfc" {
        NormalizeStage::Nfc
    } else {
        NormalizeStage::None
    };
    let rest = Rest {
        pattern: pattern.into(),
        normalizer,
        name,
        eos_token: eos,
    };
    bpe_vocab(&LAYOUT, &model, &vocab, literals, rest)
}

/// `added_tokens_decoder` (id → token) as the literals, special then added, each content once
/// (at its first place, with its last id).
fn literals_of_config(config: &Map<String, Value>) -> Result<Vec<(Added, i128)>, FormatError> {
    let at = "tokenizer_config.json added_tokens_decoder";
    let entries = match config.get("added_tokens_decoder") {
        value if !truthy(value) => return Ok(Vec::new()),
        Some(Value::Object(entries)) => entries,
        Some(_) | None => return Err(malformed(at, "must be an object of id → token")),
    };
    let (mut special, mut plain) = (TextMap::new(), TextMap::new());
    for (key, entry) in entries {
        let id = parse_id(key);
        let content = entry.get("content").and_then(Value::as_str);
        let (Some(id), Some(content), true) = (id, content, entry.is_object()) else {
            return Err(malformed(
                at,
                format!("bad entry {key:?}: an id → {{\"content\": text, \"special\": bool}}"),
            ));
        };
        let group = if truthy(entry.get("special")) {
            &mut special
        } else {
            &mut plain
        };
        group.insert(content, id);
    }
    let tokens = special
        .into_entries()
        .into_iter()
        .map(|t| (t, true))
        .chain(plain.into_entries().into_iter().map(|t| (t, false)));
    Ok(tokens
        .map(|((content, id), special)| {
            (
                Added {
                    content,
                    special,
                    flags: 0,
                },
                id,
            )
        })
        .collect())
}

/// An id key as an integer: ASCII whitespace around it, an optional sign, then decimal digits
/// with single underscores between them (what Python's `int(key)` reads, as transformers
/// reads these keys).
fn parse_id(key: &str) -> Option<i128> {
    let key = key.trim_matches(|c: char| c.is_ascii_whitespace());
    super::tiktoken::parse_int(key.as_bytes())
}
