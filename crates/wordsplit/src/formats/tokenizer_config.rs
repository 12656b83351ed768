//! What a `tokenizer_config.json` beside an HF file adds to its vocabulary: the eos and bos
//! tokens and the chat template.
//!
//! ```
//! use wordsplit::formats::{read_hf_tokenizer_json, with_tokenizer_config};
//! let json = br#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
//!     "pre_tokenizer": {"type": "ByteLevel"}, "added_tokens": [{"id": 2, "content": "</s>", "special": true}]}"#;
//! let config = br#"{"eos_token": {"content": "</s>"}, "bos_token": "a", "chat_template": "{{ x }}"}"#;
//! let vocab = with_tokenizer_config(read_hf_tokenizer_json(json).unwrap(), config).unwrap();
//! assert_eq!((vocab.eos_token_id, vocab.bos_token_id), (Some(2), Some(0)));
//! assert_eq!(vocab.chat_template.as_deref(), Some("{{ x }}"));
//! ```

use serde_json::{Map, Value};

use super::{FileKind, FormatError, TextMap, VocabData};

const FILE: FileKind = FileKind::TokenizerConfig;

fn malformed(at: &str, problem: impl Into<String>) -> FormatError {
    FormatError::Malformed {
        file: FILE,
        at: at.into(),
        problem: problem.into(),
    }
}

/// `vocab` with the eos, bos and chat template of `tokenizer_config.json` bytes. A token the
/// config names is looked up among the literals (an added token before a special one of the
/// same text), then the BPE tokens; one the vocabulary does not have leaves that field as it
/// was.
///
/// Errors: not a JSON object; `eos_token` / `bos_token` neither a string, an AddedToken object
/// with a string `content`, nor null; `chat_template` neither a string, a list of named
/// templates whose `default` is a string or absent, nor null.
pub fn with_tokenizer_config(mut vocab: VocabData, data: &[u8]) -> Result<VocabData, FormatError> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let config: Value = serde_json::from_slice(data).map_err(|e| FormatError::Json {
        file: FILE,
        detail: e.to_string(),
    })?;
    let Value::Object(config) = config else {
        return Err(malformed(
            "the top level",
            "a tokenizer_config.json is a JSON object",
        ));
    };
    let eos = token_text(&config, "eos_token")?;
    let bos = token_text(&config, "bos_token")?;
    let template = chat_template(&config)?;
    let token_id = |text: &str| {
        let literal = vocab
            .literals
            .iter()
            .rev()
            .find(|lit| lit.text == text)
            .map(|lit| lit.id);
        literal.or_else(|| {
            vocab
                .tokens
                .iter()
                .find(|(piece, _)| piece == text.as_bytes())
                .map(|(_, id)| *id)
        })
    };
    let (eos_id, bos_id) = (eos.and_then(token_id), bos.and_then(token_id));
    vocab.eos_token_id = eos_id.or(vocab.eos_token_id);
    vocab.bos_token_id = bos_id.or(vocab.bos_token_id);
    if template.is_some() {
        vocab.chat_template = template;
    }
    Ok(vocab)
}

/// An `eos_token` / `bos_token`: a string, an AddedToken object (its `content`), or null; an
/// empty string is none.
fn token_text<'a>(
    config: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, FormatError> {
    let text = match config.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.as_str()),
        Some(Value::Object(token)) => match token.get("content") {
            Some(Value::String(text)) => Some(text.as_str()),
            _ => return Err(malformed(key, "an object without a string 'content'")),
        },
        Some(other) => {
            return Err(malformed(
                key,
                format!("must be a string, an AddedToken object or null, not {other}"),
            ))
        }
    };
    Ok(text.filter(|text| !text.is_empty()))
}

/// The `chat_template`: a string, or a list of `{"name", "template"}` of which the one named
/// `default` is the template (as transformers picks it).
fn chat_template(config: &Map<String, Value>) -> Result<Option<String>, FormatError> {
    match config.get("chat_template") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(template)) => return Ok(Some(template.clone())),
        Some(Value::Array(items)) if items.iter().all(Value::is_object) => {
            let mut templates = TextMap::new();
            for item in items {
                // (A name that is not a string is never "default".)
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("\u{0}not a name");
                templates.insert(name, item.get("template").cloned().unwrap_or(Value::Null));
            }
            let default = templates
                .into_entries()
                .into_iter()
                .find(|(name, _)| name == "default");
            match default.map(|(_, template)| template) {
                None | Some(Value::Null) => return Ok(None),
                Some(Value::String(template)) => return Ok(Some(template)),
                Some(_) => {}
            }
        }
        Some(_) => {}
    }
    Err(malformed(
        "chat_template",
        "must be a string, or a list of {\"name\", \"template\"} whose \"default\" template is a string",
    ))
}
