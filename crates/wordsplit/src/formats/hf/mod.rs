//! HuggingFace `tokenizer.json` with a byte-level BPE model, in the layouts that give a plain
//! split pattern and a normalizer the Rust core runs (none or NFC); and with a model that looks
//! words up, `WordPiece` (BERT, all-MiniLM, BGE) or `WordLevel`, read into its pipeline
//! ([`VocabData::pipeline`]) by `word_models.rs` (its normalizer, pre-tokenizer, decoder and
//! post-processor: see there); and with a `Unigram` model (T5, ALBERT, XLM-R), read into its
//! pipeline and scores by `unigram.rs`; and HF's BPE over characters, `CharacterBpe` (CLIP's
//! `</w>` suffix, a subword prefix, or no `ByteLevel` pre-tokenizer, and the SentencePiece BPE
//! models without byte fallback that NLLB's and mBART's tokenizers write, after the Metaspace
//! stages of `unigram.rs`), read into its pipeline by `character_bpe.rs`. A model without a
//! `type` is the one HF's reading finds by its fields.
//!
//! What is read of a byte-level BPE file:
//! - `model`: `BPE` with `vocab` (byte-level text → id) and `merges` (`"a b"` strings or
//!   `["a", "b"]` pairs), `ignore_merges`, `unk_token` and `fuse_unk`. The merges are rank-based
//!   when they are in merged-id order and make every non-byte token once (then token-rank BPE
//!   gives the same ids), else [`VocabData::merges`] holds the pair-ranked table.
//! - `added_tokens`: special and non-special, with their flags; their ids are the ones HF gives
//!   them on load (a content that is a vocab key gets that entry's id, any other the next id
//!   from the vocab's size up), and a vocab entry only such a token can reach is left out of
//!   the BPE tokens.
//! - `normalizer`: null, or `NFC` (alone or in nested `Sequence`s).
//! - `pre_tokenizer`: `ByteLevel` with `use_regex` (GPT-2's pattern), a `Sequence` holding only
//!   a `ByteLevel` with `use_regex` (GPT-2's original spelling), or a `Sequence` of one
//!   `Split` (`Regex` one of the patterns a scanner is proven for, `Isolated`) and a
//!   `ByteLevel` without `use_regex` (that pattern).
//! - `decoder`: null or `ByteLevel`.
//!
//! Refused with [`FormatError::Unsupported`] naming the construct: other models,
//! `byte_fallback`, `dropout`, other decoders, normalizers and pre-tokenizers
//! (`Metaspace`, `Digits`, ...), `add_prefix_space`, and every other layout of normalizers and
//! pre-tokenizers (a split program or a normalizer program, which the Python package runs). A
//! file the Python package's loader refuses is refused here too.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

pub(crate) mod bpe;
mod character_bpe;
mod post_processor;
mod unigram;
pub(crate) use unigram::UNK_SURFACE;
mod word_models;

use super::named_table::{GPT2_ORIGINAL_PATTERN, GPT2_PATTERN, SCANNED_PATTERNS};
use super::tiktoken::group_depth;
use super::{file_stem, parent_name, read_file, truthy, FileKind, FormatError};
use super::{TextMap, VocabData};
use crate::literal::{LSTRIP, NORMALIZED, RSTRIP, SINGLE_WORD};
use crate::normalizers::{nfc_of, NormalizeStage};

pub(super) const FILE: FileKind = FileKind::TokenizerJson;
/// The deepest nesting of `Sequence`s followed (a deeper one is refused).
const MAX_SEQUENCE_DEPTH: usize = 16;
/// The normalizer types the Python package runs (byte-level BPE reads NFC alone; word models
/// read those the core runs, see [`word_models`]).
const NORMALIZER_TYPES: [&str; 10] = [
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "Strip",
    "StripAccents",
    "Replace",
    "Prepend",
    "BertNormalizer",
];
/// The pre-tokenizers the Python package runs before a final ByteLevel.
const SPLIT_TYPES: [&str; 5] = [
    "Split",
    "Digits",
    "Punctuation",
    "Whitespace",
    "WhitespaceSplit",
];
const BEHAVIORS: [&str; 5] = [
    "Isolated",
    "Removed",
    "MergedWithPrevious",
    "MergedWithNext",
    "Contiguous",
];
/// Unicode White_Space (what lstrip/rstrip take).
const WHITE_SPACE: &str =
    "\t\n\u{b}\u{c}\r \u{85}\u{a0}\u{1680}\u{2000}\u{2001}\u{2002}\u{2003}\u{2004}\
    \u{2005}\u{2006}\u{2007}\u{2008}\u{2009}\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}";

/// Parse a `tokenizer.json` (the vocabulary is named `tokenizer`; see
/// [`load_hf_tokenizer_json`] for names from a path).
///
/// ```
/// use wordsplit::formats::{read_hf_tokenizer_json, FormatError};
/// let json = br#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
///     "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
///     "added_tokens": [{"id": 3, "content": "<|end|>", "special": true}]}"#;
/// let vocab = read_hf_tokenizer_json(json).unwrap();
/// assert_eq!((vocab.n_vocab, vocab.literals[0].id), (4, 3));
/// assert!(vocab.merges.is_none()); // the merges are in merged-id order: rank-based
///
/// let fallback = br#"{"model": {"type": "BPE", "vocab": {"a": 0}, "byte_fallback": true}}"#;
/// assert!(matches!(read_hf_tokenizer_json(fallback), Err(FormatError::Unsupported { .. })));
/// ```
pub fn read_hf_tokenizer_json(data: &[u8]) -> Result<VocabData, FormatError> {
    read(data, "tokenizer".into())
}

/// Read a `tokenizer.json` (gunzipped when its name ends in `.gz`); the vocabulary is named
/// after its directory (`.../Qwen3-8B/tokenizer.json` is `Qwen3-8B`), or after the file when its
/// name says more than the format.
pub fn load_hf_tokenizer_json(path: impl AsRef<Path>) -> Result<VocabData, FormatError> {
    let path = path.as_ref();
    let stem = file_stem(path);
    let name = if stem == "tokenizer" {
        parent_name(path)
    } else {
        stem
    };
    read(&read_file(path)?, name)
}

fn read(data: &[u8], name: String) -> Result<VocabData, FormatError> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data); // (Python's json reads a BOM)
    let spec: Value = serde_json::from_slice(data).map_err(|e| FormatError::Json {
        file: FILE,
        detail: e.to_string(),
    })?;
    let Some(model) = spec
        .as_object()
        .and_then(|s| s.get("model"))
        .and_then(Value::as_object)
    else {
        return Err(malformed(
            "the top level",
            "no 'model' object; is this a tokenizer.json?",
        ));
    };
    let spec = spec.as_object().expect("checked above");
    let kind = word_models::model_type(model);
    if let Some(kind @ ("WordPiece" | "WordLevel")) = kind {
        return word_models::read_word_model(spec, model, kind, name);
    }
    if kind == Some("Unigram") {
        return unigram::read_unigram(spec, model, name);
    }
    if kind == Some("BPE") {
        if sentencepiece_style(spec, model) && !truthy(model.get("byte_fallback")) {
            return character_bpe::read_metaspace_bpe(spec, model, name);
        }
        if let Some(byte_level) = character_bpe(spec, model) {
            return character_bpe::read_character_bpe(spec, model, byte_level, name);
        }
    }
    check_model(model, kind)?;
    match spec.get("decoder") {
        None | Some(Value::Null) => {}
        Some(Value::Object(decoder)) if decoder.get("type") == Some(&Value::from("ByteLevel")) => {}
        Some(Value::Object(decoder)) => {
            return Err(unsupported(
                "decoder",
                format!("decoder {}", show(decoder.get("type"))),
                "only the ByteLevel decoder of byte-level BPE is read",
            ))
        }
        Some(other) => {
            return Err(malformed(
                "decoder",
                format!("must be a JSON object, not {}", json_type(other)),
            ))
        }
    }
    let added = added_tokens(spec.get("added_tokens"))?;
    let Some(vocab) = model.get("vocab").and_then(Value::as_object) else {
        return Err(malformed("model.vocab", "must be an object of token → id"));
    };
    let added = hf_added_ids(added, vocab)?;
    let normalizer = normalizer(spec.get("normalizer"))?;
    check_added_tokens(&added, &normalizer)?;
    let pattern = pattern(spec.get("pre_tokenizer"))?;
    let rest = bpe::Rest {
        pattern,
        normalizer,
        name,
        eos_token: None,
    };
    bpe::bpe_vocab(&bpe::TOKENIZER_JSON, model, vocab, added, rest)
}

pub(super) fn malformed(at: impl Into<String>, problem: impl Into<String>) -> FormatError {
    FormatError::Malformed {
        file: FILE,
        at: at.into(),
        problem: problem.into(),
    }
}

pub(super) fn unsupported(
    at: impl Into<String>,
    construct: impl Into<String>,
    hint: impl Into<String>,
) -> FormatError {
    FormatError::Unsupported {
        file: FILE,
        at: at.into(),
        construct: construct.into(),
        hint: hint.into(),
    }
}

/// The hint for what the Python package runs and the Rust core does not (yet).
const PYTHON_ONLY: &str = "the Python package (wordsplit.load_vocab) runs it";

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
        Value::Number(_) => "a number",
    }
}

pub(super) fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "null".into(), Value::to_string)
}

/// A JSON integer (not a bool, and not a number written as a float, such as `1.0`).
pub(crate) fn integer(value: &Value) -> Option<i128> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

/// Whether a BPE model that is not SentencePiece-style is HF's BPE over characters (the
/// Python package's `is_character_bpe`: an end-of-word suffix, a continuing-subword prefix, or
/// no `ByteLevel` pre-tokenizer), and then whether it has a `ByteLevel` pre-tokenizer. None
/// for byte-level BPE, and for SentencePiece-style files (byte fallback, `Metaspace`), whose
/// refusals name those.
fn character_bpe(spec: &Map<String, Value>, model: &Map<String, Value>) -> Option<bool> {
    if sentencepiece_style(spec, model) {
        return None;
    }
    if let Some(Value::Object(pre_tokenizer)) = spec.get("pre_tokenizer") {
        if flat_pre_tokenizers(pre_tokenizer, String::new(), 0, &mut Vec::new()).is_err() {
            return None; // (malformed: the pre-tokenizer's reader says how)
        }
    }
    let byte_level = has_part(spec, "pre_tokenizer", &["ByteLevel"]);
    let affixed = ["end_of_word_suffix", "continuing_subword_prefix"]
        .iter()
        .any(|key| truthy(model.get(*key)));
    (affixed || !byte_level).then_some(byte_level)
}

/// Whether a tokenizer.json is SentencePiece-style (the Python package's
/// `is_sentencepiece_style`): byte fallback, or a `Metaspace` or `ByteFallback` step in its
/// pre-tokenizer or decoder.
fn sentencepiece_style(spec: &Map<String, Value>, model: &Map<String, Value>) -> bool {
    let kinds = ["Metaspace", "ByteFallback"];
    truthy(model.get("byte_fallback"))
        || has_part(spec, "pre_tokenizer", &kinds)
        || has_part(spec, "decoder", &kinds)
}

/// Whether the tokenizer.json's `part` (`pre_tokenizer` or `decoder`) has a step of `kinds`.
fn has_part(spec: &Map<String, Value>, part: &str, kinds: &[&str]) -> bool {
    let key = ["pretokenizers", "decoders"][usize::from(part == "decoder")];
    spec.get(part)
        .is_some_and(|value| has_step(value, key, kinds, 0))
}

/// Whether `value` is a step of one of `kinds`, or a `Sequence` (its steps under `key`) with one.
fn has_step(value: &Value, key: &str, kinds: &[&str], depth: usize) -> bool {
    let kind = value.get("type").and_then(Value::as_str);
    if kind == Some("Sequence") && depth <= MAX_SEQUENCE_DEPTH {
        let steps = value.get(key).and_then(Value::as_array);
        return steps.is_some_and(|steps| steps.iter().any(|s| has_step(s, key, kinds, depth + 1)));
    }
    kind.is_some_and(|kind| kinds.contains(&kind))
}

/// A byte-level BPE model's options checked; `kind` is its type (HF's reading of a model
/// without one, see [`word_models::model_type`]).
fn check_model(model: &Map<String, Value>, kind: Option<&str>) -> Result<(), FormatError> {
    if kind != Some("BPE") {
        return Err(unsupported(
            "model.type",
            format!(
                "model type {}",
                kind.map_or_else(|| show(model.get("type")), |k| format!("{k:?}"))
            ),
            "the Rust readers read byte-level BPE, WordPiece, WordLevel and Unigram",
        ));
    }
    for key in ["dropout", "continuing_subword_prefix"] {
        // Unset: missing, null, false, "", 0 or 0.0.
        let unset = match model.get(key) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            Some(_) => false,
        };
        if !unset {
            return Err(unsupported(
                format!("model.{key}"),
                format!("BPE {key}={}", show(model.get(key))),
                "wordsplit gives each text its one deterministic byte-level encoding",
            ));
        }
    }
    if truthy(model.get("byte_fallback")) {
        return Err(unsupported(
            "model.byte_fallback",
            "BPE byte_fallback",
            "byte_fallback belongs to SentencePiece-style BPE over characters, not byte-level BPE",
        ));
    }
    Ok(())
}

/// An added token as listed, before HF's ids.
pub(crate) struct Added {
    pub content: String,
    pub special: bool,
    /// HF's flags, as [`crate::literal::Literal::flags`].
    pub flags: u8,
}

impl Added {
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// `added_tokens` → the literals: the special ones then the others, each content once (at
/// its first position in its group), with the flags of its last entry; and every listed
/// content in order (for HF's ids).
fn added_tokens(entries: Option<&Value>) -> Result<(Vec<Added>, Vec<String>), FormatError> {
    let entries = match entries {
        None | Some(Value::Null) => return Ok((Vec::new(), Vec::new())),
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            return Err(malformed(
                "added_tokens",
                format!("must be an array, not {}", json_type(other)),
            ))
        }
    };
    let (mut special, mut plain) = (TextMap::new(), TextMap::new());
    let mut flags: HashMap<String, u8> = HashMap::new();
    let mut listed = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let at = || format!("added_tokens[{index}]");
        let Value::Object(entry) = entry else {
            return Err(malformed(
                at(),
                format!(
                    "an added token must be a JSON object, not {}",
                    json_type(entry)
                ),
            ));
        };
        let (Some(content), Some(_)) = (
            entry.get("content").and_then(Value::as_str),
            entry.get("id").and_then(integer),
        ) else {
            return Err(malformed(
                at(),
                "an added token needs a string 'content' and an integer 'id'",
            ));
        };
        let is_special = truthy(entry.get("special"));
        let group = if is_special { &mut special } else { &mut plain };
        group.insert(content, is_special);
        // HF's defaults: a token without "normalized" is normalized unless it is special.
        let normalized = match entry.get("normalized") {
            None => !is_special,
            value => truthy(value),
        };
        let flag = |key: &str, bit: u8| if truthy(entry.get(key)) { bit } else { 0 };
        flags.insert(
            content.to_string(),
            flag("lstrip", LSTRIP)
                | flag("rstrip", RSTRIP)
                | flag("single_word", SINGLE_WORD)
                | if normalized { NORMALIZED } else { 0 },
        );
        listed.push(content.to_string());
    }
    let literals = special
        .into_entries()
        .into_iter()
        .chain(plain.into_entries())
        .map(|(content, special)| Added {
            flags: flags[&content],
            content,
            special,
        })
        .collect();
    Ok((literals, listed))
}

/// The ids HF gives the added tokens of a tokenizer.json: in the order listed, a content that is
/// a key of the vocab gets that entry's id, any other the next id from the vocab's size up
/// (after the largest id given so far, when that is at or above the size).
fn hf_added_ids(
    (literals, listed): (Vec<Added>, Vec<String>),
    vocab: &Map<String, Value>,
) -> Result<Vec<(Added, i128)>, FormatError> {
    let size = vocab.len() as i128;
    let mut ids: HashMap<&str, i128> = HashMap::new();
    let mut fresh: HashMap<i128, &str> = HashMap::new();
    let mut top = -1i128;
    for content in &listed {
        if ids.contains_key(content.as_str()) {
            continue;
        }
        let id = match vocab.get(content) {
            Some(value) => integer(value).ok_or_else(|| {
                malformed(
                    format!("model.vocab[{content:?}]"),
                    format!("has the id {value}; ids are non-negative integers"),
                )
            })?,
            None => {
                let id = if top >= size { top + 1 } else { size };
                fresh.insert(id, content);
                id
            }
        };
        top = top.max(id);
        ids.insert(content, id);
    }
    // Only a vocab with gaps in its ids has one at or above its size.
    if !fresh.is_empty()
        && vocab
            .values()
            .any(|v| integer(v).is_some_and(|i| i >= size))
    {
        for (text, value) in vocab {
            if let Some(token) = integer(value).and_then(|i| fresh.get(&i)) {
                return Err(unsupported(
                    format!("model.vocab[{text:?}]"),
                    format!(
                        "the added token {token:?} gets the id {} (the next one after the {size} vocab \
                         entries), which the vocab entry {text:?} also has; HF would read that id as \
                         the added token",
                        integer(value).unwrap_or_default()
                    ),
                    "renumber the vocab so that its ids run from 0 without gaps, or list the token in model.vocab",
                ));
            }
        }
    }
    Ok(literals
        .into_iter()
        .map(|added| {
            let id = ids[added.content.as_str()];
            (added, id)
        })
        .collect())
}

/// The normalizer: none, or NFC alone (`Sequence`s flattened).
fn normalizer(spec: Option<&Value>) -> Result<NormalizeStage, FormatError> {
    let mut steps = Vec::new();
    if let Some(spec) = spec.filter(|s| !s.is_null()) {
        normalizer_steps(spec, "normalizer".into(), 0, &mut steps)?;
    }
    fn kind(step: &Map<String, Value>) -> &str {
        step.get("type").and_then(Value::as_str).unwrap_or("")
    }
    match steps.as_slice() {
        [] => Ok(NormalizeStage::None),
        [(_, step)] if kind(step) == "NFC" => Ok(NormalizeStage::Nfc),
        [(at, step)] => Err(unsupported(
            at.clone(),
            format!("normalizer {}", kind(step)),
            format!("the Rust core runs NFC only; {PYTHON_ONLY}"),
        )),
        _ => Err(unsupported(
            "normalizer",
            format!(
                "a normalizer of several steps ({})",
                steps
                    .iter()
                    .map(|(_, step)| kind(step))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("the Rust core runs NFC only; {PYTHON_ONLY}"),
        )),
    }
}

/// The steps of a normalizer, each with its JSON path (`Sequence`s flattened), their types
/// checked.
fn normalizer_steps<'a>(
    spec: &'a Value,
    at: String,
    depth: usize,
    steps: &mut Vec<(String, &'a Map<String, Value>)>,
) -> Result<(), FormatError> {
    let Value::Object(spec) = spec else {
        return Err(malformed(
            at,
            format!(
                "a normalizer must be a JSON object, not {}",
                json_type(spec)
            ),
        ));
    };
    let kind = spec.get("type");
    if kind == Some(&Value::from("Sequence")) {
        let members =
            match spec.get("normalizers") {
                None if depth <= MAX_SEQUENCE_DEPTH => return Ok(()),
                Some(Value::Array(members)) if depth <= MAX_SEQUENCE_DEPTH => members,
                _ => return Err(malformed(
                    at,
                    "a normalizer Sequence needs an array 'normalizers' (nested 16 deep at most)",
                )),
            };
        for (i, member) in members.iter().enumerate() {
            normalizer_steps(member, format!("{at}.normalizers[{i}]"), depth + 1, steps)?;
        }
        return Ok(());
    }
    match kind.and_then(Value::as_str) {
        Some(kind) if NORMALIZER_TYPES.contains(&kind) => {
            steps.push((at, spec));
            Ok(())
        }
        _ => Err(unsupported(
            at,
            format!("normalizer {}", show(kind)),
            format!(
                "the normalizers wordsplit runs are {} and Sequence",
                NORMALIZER_TYPES.join(", ")
            ),
        )),
    }
}

/// Refuse the added tokens HF does not tokenize deterministically: two `normalized` tokens
/// the normalizer makes the same text, and in each pass an `rstrip` token together with an
/// `lstrip` token made only of whitespace.
fn check_added_tokens(
    added: &[(Added, i128)],
    normalizer: &NormalizeStage,
) -> Result<(), FormatError> {
    if *normalizer == NormalizeStage::Nfc && added.iter().any(|(t, _)| t.has(NORMALIZED)) {
        // Each normalized token's NFC form (what HF matches it as) to the token that has it.
        let mut owner: HashMap<String, &str> = HashMap::new();
        for (token, _) in added.iter().filter(|(t, _)| t.has(NORMALIZED)) {
            let form = nfc_of(&token.content).unwrap_or_else(|| token.content.clone());
            match owner.insert(form, &token.content) {
                Some(other) if other == token.content => {
                    return Err(unsupported(
                        "added_tokens",
                        format!(
                            "the normalized added token {:?} listed both as special and not",
                            token.content
                        ),
                        "HF then matches one or the other at random; list it once",
                    ))
                }
                Some(other) => {
                    return Err(unsupported(
                        "added_tokens",
                        format!(
                            "the normalized added tokens {other:?} and {:?}, which NFC makes the \
                             same text",
                            token.content
                        ),
                        "HF then matches one or the other at random; remove one, or set its \
                         normalized flag to false",
                    ))
                }
                None => {}
            }
        }
    }
    // (NFC keeps text made only of White_Space so, and changes no other text into it.)
    check_strippers(added.iter().map(|(t, _)| (t, t.content.as_str())))
}

/// Refuse, in each pass over the text (the `normalized` added tokens', the others'), an
/// `rstrip` token together with an `lstrip` token whose text is only white space: HF fails
/// on text where the second follows the first. `added`: each added token with the text the
/// pass matches (its content, normalized where the normalizer changes it).
pub(super) fn check_strippers<'a>(
    added: impl Iterator<Item = (&'a Added, &'a str)> + Clone,
) -> Result<(), FormatError> {
    for group in [true, false] {
        let members = added.clone().filter(|(t, _)| t.has(NORMALIZED) == group);
        let stripper = members.clone().find(|(t, _)| t.has(RSTRIP));
        let spaces = members.clone().find(|(t, text)| {
            t.has(LSTRIP) && !t.has(RSTRIP) && text.chars().all(|c| WHITE_SPACE.contains(c))
        });
        if let (Some((stripper, _)), Some((spaces, _))) = (stripper, spaces) {
            return Err(unsupported(
                "added_tokens",
                format!(
                    "the added token {:?} with rstrip=true and the whitespace token {:?} with lstrip=true",
                    stripper.content, spaces.content
                ),
                "HF fails on text where the second follows the first; set lstrip=false on the second, or remove one",
            ));
        }
    }
    Ok(())
}

/// The pre-tokenizers of a (nested) Sequence, in order, with their JSON paths.
fn flat_pre_tokenizers<'a>(
    spec: &'a Map<String, Value>,
    at: String,
    depth: usize,
    steps: &mut Vec<(String, &'a Map<String, Value>)>,
) -> Result<(), FormatError> {
    if spec.get("type") != Some(&Value::from("Sequence")) {
        steps.push((at, spec));
        return Ok(());
    }
    let members = match spec.get("pretokenizers") {
        Some(Value::Array(members))
            if depth <= MAX_SEQUENCE_DEPTH && members.iter().all(Value::is_object) =>
        {
            members
        }
        _ => {
            return Err(malformed(
                at,
                "a pre_tokenizer Sequence needs a list 'pretokenizers' of objects",
            ))
        }
    };
    for (i, member) in members.iter().enumerate() {
        let member = member.as_object().expect("checked above");
        flat_pre_tokenizers(member, format!("{at}.pretokenizers[{i}]"), depth + 1, steps)?;
    }
    Ok(())
}

/// A `Split` as `(regex, behavior)`, checked: a `Regex` or `String` pattern (a `String` as
/// its escaped regex), a known behavior, a bool `invert`, groups nested at most 100 deep.
fn split_step(spec: &Map<String, Value>, at: &str) -> Result<(String, String), FormatError> {
    let regex = match spec.get("pattern") {
        Some(Value::Object(p)) if p.len() == 1 && p.get("Regex").is_some_and(Value::is_string) => {
            p["Regex"].as_str().expect("checked").to_string()
        }
        Some(Value::Object(p)) if p.len() == 1 && p.get("String").is_some_and(Value::is_string) => {
            // HF escapes a String pattern (regex::escape); each character as a code point escape.
            let text = p["String"].as_str().expect("checked");
            text.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_string()
                    } else {
                        format!("\\x{{{:X}}}", c as u32)
                    }
                })
                .collect()
        }
        other => {
            return Err(malformed(
                format!("{at}.pattern"),
                format!(
                    "Split needs a pattern {{\"Regex\": ...}} or {{\"String\": ...}}, got {}",
                    show(other)
                ),
            ))
        }
    };
    let behavior = spec
        .get("behavior")
        .and_then(Value::as_str)
        .filter(|b| BEHAVIORS.contains(b));
    let invert_ok = matches!(spec.get("invert"), None | Some(Value::Bool(_)));
    let Some(behavior) = behavior.filter(|_| invert_ok) else {
        return Err(malformed(
            at,
            format!(
                "bad Split (behavior {}, invert {}): behavior is one of {}, invert a bool",
                show(spec.get("behavior")),
                show(spec.get("invert")),
                BEHAVIORS.join(", ")
            ),
        ));
    };
    if group_depth(&regex) > 100 {
        return Err(unsupported(
            at,
            "a split pattern that nests groups more than 100 deep",
            "flatten its groups",
        ));
    }
    Ok((regex, behavior.to_string()))
}

/// The plain pattern of the pre-tokenizer (see the module documentation for the layouts).
fn pattern(spec: Option<&Value>) -> Result<String, FormatError> {
    let Some(Value::Object(spec)) = spec else {
        return Err(unsupported(
            "pre_tokenizer",
            "a tokenizer without pre_tokenizer",
            "byte-level BPE needs ByteLevel",
        ));
    };
    let mut steps = Vec::new();
    flat_pre_tokenizers(spec, "pre_tokenizer".into(), 0, &mut steps)?;
    let kind_of =
        |step: &Map<String, Value>| step.get("type").and_then(Value::as_str).map(str::to_string);
    let is_byte_level = |step: &Map<String, Value>| kind_of(step).as_deref() == Some("ByteLevel");
    let n = steps.len();
    let last_is_byte_level = steps.last().is_some_and(|(_, s)| is_byte_level(s));
    // Each step before the ByteLevel, checked (an unsupported type is named first).
    let mut program = Vec::new();
    for (at, step) in &steps {
        if is_byte_level(step) {
            continue;
        }
        match kind_of(step).as_deref() {
            Some("Split") => program.push(split_step(step, at)?),
            Some(kind) if SPLIT_TYPES.contains(&kind) => {
                program.push((String::new(), kind.to_string()))
            }
            _ => return Err(unsupported(
                at.clone(),
                format!("pre_tokenizer {}", show(step.get("type"))),
                "the pre-tokenizers wordsplit runs are Split, Digits, Punctuation, Whitespace and \
                     WhitespaceSplit, then ByteLevel",
            )),
        }
    }
    if !last_is_byte_level || steps[..n - 1].iter().any(|(_, s)| is_byte_level(s)) {
        let kinds: Vec<String> = steps.iter().map(|(_, s)| show(s.get("type"))).collect();
        return Err(unsupported(
            "pre_tokenizer",
            format!("the pre_tokenizer sequence [{}]", kinds.join(", ")),
            "wordsplit runs Split, Digits, Punctuation, Whitespace and WhitespaceSplit steps, then one ByteLevel",
        ));
    }
    let (at, byte_level) = &steps[n - 1];
    if truthy(byte_level.get("add_prefix_space")) {
        return Err(unsupported(
            format!("{at}.add_prefix_space"),
            "ByteLevel add_prefix_space",
            format!("it is a normalizer or split-program step; {PYTHON_ONLY}"),
        ));
    }
    let use_regex = byte_level.get("use_regex").is_none_or(|v| truthy(Some(v)));
    let top_is_byte_level = is_byte_level(spec);
    if top_is_byte_level && program.is_empty() {
        return if use_regex {
            Ok(GPT2_PATTERN.to_string())
        } else {
            Err(unsupported(
                format!("{at}.use_regex"),
                "ByteLevel without use_regex (no split at all)",
                format!("it is an empty split program; {PYTHON_ONLY}"),
            ))
        };
    }
    if use_regex {
        program.push((GPT2_ORIGINAL_PATTERN.to_string(), "Isolated".into()));
    }
    match program.as_slice() {
        [(regex, behavior)]
            if behavior == "Isolated" && SCANNED_PATTERNS.contains(&regex.as_str()) =>
        {
            Ok(regex.clone())
        }
        _ => Err(unsupported(
            "pre_tokenizer",
            format!(
                "the pre_tokenizer steps [{}] (a split program)",
                steps
                    .iter()
                    .map(|(_, s)| show(s.get("type")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "the Rust readers map one Isolated Split of a scanner's pattern, then ByteLevel \
                 without use_regex, or ByteLevel alone; {PYTHON_ONLY}"
            ),
        )),
    }
}
