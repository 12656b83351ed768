//! The `tokenizer.json` models that look words up: `WordPiece` (BERT, all-MiniLM, BGE, E5,
//! GTE...) and `WordLevel`, read into the vocabulary's typed pipeline ([`VocabData::pipeline`])
//! by the rules of the Python package's reader (`formats/hf_word_models.py`), which the tests
//! hold this one to (the same tokens, literals and pipeline text on every such file):
//!
//! - `model`: its `vocab` is the vocabulary's tokens (every entry, the special ones too: the
//!   model looks only these up), each token's UTF-8; WordPiece's `unk_token` (default
//!   `[UNK]`), `continuing_subword_prefix` (`##`) and `max_input_chars_per_word` (100),
//!   WordLevel's `unk_token` (`<unk>`). A file without a `type` is WordPiece when it has either
//!   WordPiece field, else WordLevel (as HF reads it).
//! - `added_tokens`: as for byte-level BPE (HF's ids, flags), and refused where HF does not
//!   match them deterministically (two `normalized` tokens the normalizer makes the same).
//! - `normalizer`: none, a Unicode form, `BertNormalizer` (`strip_accents: null` follows
//!   `lowercase`), or a `Sequence` of HF's steps; read as the Python package reads it, and
//!   refused when the core does not run it (a regex `Replace`, or a program that mixes
//!   `Replace` and `Prepend` with the other steps: the Python package runs those).
//! - `pre_tokenizer`: read into a split program as the Python package writes it; the core runs
//!   none, `BertPreTokenizer`, `Whitespace` and `WhitespaceSplit`
//!   ([`WordSpanner`](crate::spanners::words::WordSpanner)), and refuses the others (`Split`,
//!   `Digits`, `Punctuation` and sequences of steps, which the Python package runs), and a
//!   `ByteLevel` or `Metaspace` before a word model (which neither runs).
//! - `decoder`: `WordPiece` (its `prefix` and `cleanup`), or none (the tokens joined by spaces).
//! - `post_processor`: `TemplateProcessing`, `BertProcessing`, `RobertaProcessing`,
//!   `ByteLevel` or a `Sequence` of them ([`super::post_processor`]).
//!
//! Truncation and padding, which some files set (all-MiniLM-L6-v2's), are not read: the ids
//! are those of HF's tokenizer without them.

use serde_json::{Map, Value};

use super::post_processor::post_processor;
use super::{
    added_tokens, check_strippers, flat_pre_tokenizers, hf_added_ids, integer, json_type,
    malformed, normalizer_steps, show, split_step, unsupported, Added, FILE, PYTHON_ONLY,
};
use crate::formats::{FormatError, VocabData};
use crate::literal::{Literal, NORMALIZED};
use crate::normalizers::NormalizeStage;
use crate::spanners::words::{
    bert_steps, punctuation_class, whitespace_split_steps, whitespace_steps, WordSpanner,
};
use crate::spec::{
    Behavior, DecoderSpec, ModelSpec, NormalizerSpec, PipelineSpec, SpannerSpec, SplitStep,
};

/// HF's `Digits`: Rust's `char::is_numeric` as tokenizers 0.23.3 has it (the Python package's
/// `DIGIT_CLASS`, character for character).
const DIGIT_CLASS: &str = r"[\p{N}\x{11DE0}-\x{11DE9}\x{16FF4}-\x{16FF6}]";

/// The model type of a tokenizer.json's `model`: its `"type"` (None when that is not a
/// string), or for a model without one the type HF's untagged reading finds by the fields each
/// type has.
pub(super) fn model_type(model: &Map<String, Value>) -> Option<&str> {
    if let Some(kind) = model.get("type") {
        return kind.as_str();
    }
    Some(if model.contains_key("merges") {
        "BPE"
    } else if model.get("vocab").is_some_and(Value::is_array) {
        "Unigram"
    } else if model.contains_key("max_input_chars_per_word")
        || model.contains_key("continuing_subword_prefix")
    {
        "WordPiece"
    } else {
        "WordLevel"
    })
}

/// The vocabulary of a parsed tokenizer.json whose model is `kind`, `WordPiece` or `WordLevel`.
pub(super) fn read_word_model(
    spec: &Map<String, Value>,
    model: &Map<String, Value>,
    kind: &str,
    name: String,
) -> Result<VocabData, FormatError> {
    let (tokens, vocab) = vocab_tokens(model.get("vocab"))?;
    let added = hf_added_ids(added_tokens(spec.get("added_tokens"))?, vocab)?;
    let normalizer = normalizer_spec(spec.get("normalizer"))?;
    let Some(stage) = NormalizeStage::from_spec(&normalizer) else {
        return Err(unsupported(
            "normalizer",
            format!("the normalizer {}", describe_normalizer(&normalizer)),
            format!(
                "the Rust core runs a Unicode form, BertNormalizer, and sequences of either \
                 Replace (of a string) and Prepend steps or Unicode forms, Lowercase, \
                 StripAccents and Strip; {PYTHON_ONLY}"
            ),
        ));
    };
    check_word_literals(&added, &normalizer, &stage)?;
    let spanner = spanner_spec(spec.get("pre_tokenizer"), kind)?;
    let model = model_spec(model, kind)?;
    let decoder = decoder_spec(spec.get("decoder"))?;
    let post_processor = post_processor(spec.get("post_processor"))?;
    let pipeline = PipelineSpec {
        normalizer,
        spanner,
        model,
        decoder,
        post_processor,
    };
    word_model_vocab(name, tokens, added, None, pipeline)
}

/// The vocabulary of a word model (or HF's BPE over characters, with its `merges`): its
/// tokens, added tokens and pipeline, checked.
pub(super) fn word_model_vocab(
    name: String,
    tokens: Tokens,
    added: Vec<(Added, i128)>,
    merges: Option<Vec<(u32, u32, u32)>>,
    pipeline: PipelineSpec,
) -> Result<VocabData, FormatError> {
    let pipeline = pipeline
        .checked()
        .map_err(|e| malformed("the top level", e.0))?;
    let literals = word_literals(added)?;
    VocabData {
        name,
        tokens,
        literals,
        merges,
        whole_piece_lookup: true,
        n_vocab: 0,
        pattern: String::new(),
        normalizer: NormalizeStage::None,
        eos_token_id: None,
        bos_token_id: None,
        unk_token_id: None,
        fuse_unk: false,
        chat_template: None,
        pipeline: Some(pipeline),
        scores: None,
    }
    .finish(FILE, None)
}

/// The added tokens with their HF ids as the [`Literal`]s of a word model's (or a
/// CharacterBpe model's) vocabulary.
pub(super) fn word_literals(added: Vec<(Added, i128)>) -> Result<Vec<Literal>, FormatError> {
    added
        .into_iter()
        .map(|(token, id)| {
            Ok(Literal {
                id: id_of(id, &token)?,
                text: token.content,
                special: token.special,
                flags: token.flags,
            })
        })
        .collect()
}

/// An added token's id as a `u32` (one HF gave it from the vocab's size up may pass it).
fn id_of(id: i128, token: &Added) -> Result<u32, FormatError> {
    u32::try_from(id).map_err(|_| FormatError::IdOutOfRange {
        file: FILE,
        what: format!("the added token {:?} has the id {id}", token.content),
        limit: u64::from(u32::MAX),
    })
}

/// Refuse the added tokens HF does not tokenize deterministically (the Python package's
/// `_check_added_tokens`): where the second pass looks for `normalized` tokens in normalized
/// text, a content the normalizer makes empty or two it makes the same; and in each pass an
/// `rstrip` token together with an `lstrip` token whose content is only white space.
pub(super) fn check_word_literals(
    added: &[(Added, i128)],
    spec: &NormalizerSpec,
    stage: &NormalizeStage,
) -> Result<(), FormatError> {
    let normalizes = *spec != NormalizerSpec::None && added.iter().any(|(t, _)| t.has(NORMALIZED));
    let mut contents: Vec<String> = Vec::with_capacity(added.len());
    let mut owner: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for (token, _) in added {
        if !(normalizes && token.has(NORMALIZED)) {
            contents.push(token.content.clone());
            continue;
        }
        let content = stage.normalized(&token.content).map_err(|e| {
            unsupported("added_tokens", e.to_string(), "the normalizer fails on it")
        })?;
        if content.is_empty() {
            return Err(unsupported(
                "added_tokens",
                format!(
                    "the normalized added token {:?}, which the normalizer makes empty",
                    token.content
                ),
                "HF cannot match it; set its normalized flag to false or remove it",
            ));
        }
        if let Some(first) = owner.insert(content.clone(), &token.content) {
            return Err(unsupported(
                "added_tokens",
                format!(
                    "the normalized added tokens {first:?} and {:?}, which the normalizer makes the same ({content:?})",
                    token.content
                ),
                "HF then matches one or the other at random; set the normalized flag of one to false or remove it",
            ));
        }
        contents.push(content);
    }
    check_strippers(
        added
            .iter()
            .zip(&contents)
            .map(|((t, _), content)| (t, content.as_str())),
    )
}

/// Tokens as [`VocabData::tokens`] holds them: each one's bytes and id.
pub(super) type Tokens = Vec<(Vec<u8>, u32)>;

/// The model's `vocab`: each token's UTF-8 and id, in file order, and the object itself.
pub(super) fn vocab_tokens(
    vocab: Option<&Value>,
) -> Result<(Tokens, &Map<String, Value>), FormatError> {
    let Some(table) = vocab.and_then(Value::as_object).filter(|t| !t.is_empty()) else {
        return Err(malformed(
            "model.vocab",
            "must be a non-empty object of token → id",
        ));
    };
    let mut tokens = Vec::with_capacity(table.len());
    let mut seen = std::collections::HashMap::with_capacity(table.len());
    for (text, value) in table {
        let id = integer(value).filter(|id| *id >= 0).ok_or_else(|| {
            malformed(
                format!("model.vocab[{text:?}]"),
                format!("has the id {value}; ids are non-negative integers"),
            )
        })?;
        let id = u32::try_from(id).map_err(|_| FormatError::IdOutOfRange {
            file: FILE,
            what: format!("the vocab entry {text:?} has the id {id}"),
            limit: u64::from(u32::MAX),
        })?;
        if let Some(first) = seen.insert(id, text) {
            return Err(FormatError::DuplicateId {
                file: FILE,
                id,
                first: format!("the vocab entry {first:?}"),
                second: format!("the vocab entry {text:?}"),
            });
        }
        tokens.push((text.as_bytes().to_vec(), id));
    }
    Ok((tokens, table))
}

/// The normalizer stage, as the Python package's `_normalizer` makes it: none, a Unicode form
/// or `BertNormalizer` alone, else a `Sequence` of the steps (nested sequences flattened).
pub(super) fn normalizer_spec(value: Option<&Value>) -> Result<NormalizerSpec, FormatError> {
    let mut steps = Vec::new();
    if let Some(value) = value.filter(|v| !v.is_null()) {
        normalizer_steps(value, "normalizer".into(), 0, &mut steps)?;
    }
    let mut specs = steps
        .iter()
        .map(|(at, step)| normalizer_step(at, step))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match specs.as_slice() {
        [] => NormalizerSpec::None,
        [NormalizerSpec::Nfc
        | NormalizerSpec::Nfd
        | NormalizerSpec::Nfkc
        | NormalizerSpec::Nfkd
        | NormalizerSpec::BertNormalizer { .. }] => specs.remove(0),
        _ => NormalizerSpec::Sequence(specs),
    })
}

/// One normalizer step object (its type already checked) as a stage, with HF's defaults.
pub(super) fn normalizer_step(
    at: &str,
    step: &Map<String, Value>,
) -> Result<NormalizerSpec, FormatError> {
    let bad = |why: &str| malformed(at, format!("normalizer step {}: {why}", show_object(step)));
    let flag = |key: &str, default: bool| match step.get(key) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(()),
    };
    Ok(
        match step.get("type").and_then(Value::as_str).unwrap_or("") {
            "NFC" => NormalizerSpec::Nfc,
            "NFD" => NormalizerSpec::Nfd,
            "NFKC" => NormalizerSpec::Nfkc,
            "NFKD" => NormalizerSpec::Nfkd,
            "Lowercase" => NormalizerSpec::Lowercase,
            "StripAccents" => NormalizerSpec::StripAccents,
            "Strip" => match (flag("strip_left", true), flag("strip_right", true)) {
                (Ok(left), Ok(right)) => NormalizerSpec::Strip { left, right },
                _ => return Err(bad("strip_left and strip_right are booleans")),
            },
            "Replace" => {
                let pattern = step.get("pattern").and_then(Value::as_object);
                let pattern = pattern.filter(|p| p.len() == 1).and_then(|p| {
                    let (key, value) = p.iter().next()?;
                    Some((key == "Regex", value.as_str()?))
                        .filter(|_| key == "Regex" || key == "String")
                });
                match (pattern, step.get("content").and_then(Value::as_str)) {
                (Some((regex, pattern)), Some(content)) => NormalizerSpec::Replace {
                    pattern: pattern.to_owned(),
                    content: content.to_owned(),
                    regex,
                },
                _ => {
                    return Err(bad(
                        "Replace needs a pattern {\"String\": ...} or {\"Regex\": ...} and a string content",
                    ))
                }
            }
            }
            "Prepend" => match step.get("prepend").and_then(Value::as_str) {
                Some(prepend) => NormalizerSpec::Prepend(prepend.to_owned()),
                None => return Err(bad("Prepend needs a string 'prepend'")),
            },
            "BertNormalizer" => {
                let flags = (
                    flag("clean_text", true),
                    flag("handle_chinese_chars", true),
                    flag("lowercase", true),
                );
                let (Ok(clean_text), Ok(handle_chinese_chars), Ok(lowercase)) = flags else {
                    return Err(bad(BERT_FLAGS));
                };
                // HF's strip_accents: null (or missing) follows lowercase.
                let strip_accents = match step.get("strip_accents") {
                    None | Some(Value::Null) => lowercase,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(bad(BERT_FLAGS)),
                };
                NormalizerSpec::BertNormalizer {
                    clean_text,
                    handle_chinese_chars,
                    strip_accents,
                    lowercase,
                }
            }
            other => return Err(bad(&format!("no normalizer step {other:?}"))),
        },
    )
}

const BERT_FLAGS: &str =
    "BertNormalizer's clean_text, handle_chinese_chars, strip_accents and lowercase are booleans";

fn show_object(object: &Map<String, Value>) -> String {
    Value::Object(object.clone()).to_string()
}

/// A normalizer for messages: its kind, a sequence with the kinds of its steps.
pub(super) fn describe_normalizer(spec: &NormalizerSpec) -> String {
    match spec {
        NormalizerSpec::Sequence(steps) => format!(
            "Sequence [{}]",
            steps
                .iter()
                .map(NormalizerSpec::kind)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.kind().to_owned(),
    }
}

/// The split program of a pre-tokenizer before a `model` that reads text (none: the text is
/// one piece), as the Python package's `_spanner` writes it; refused when the core does not
/// run it.
pub(super) fn spanner_spec(value: Option<&Value>, model: &str) -> Result<SpannerSpec, FormatError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(SpannerSpec::SplitProgram(Vec::new())),
        Some(Value::Object(object)) => object,
        Some(other) => {
            return Err(malformed(
                "pre_tokenizer",
                format!("must be an object or null, not {}", json_type(other)),
            ))
        }
    };
    let mut flat = Vec::new();
    flat_pre_tokenizers(object, "pre_tokenizer".into(), 0, &mut flat)?;
    let mut steps = Vec::new();
    for (at, step) in &flat {
        match step.get("type").and_then(Value::as_str) {
            Some("BertPreTokenizer") => steps.extend(bert_steps()),
            Some(kind @ ("ByteLevel" | "Metaspace")) => {
                return Err(unsupported(
                    at.clone(),
                    format!("a {kind} pre-tokenizer before a {model} model"),
                    "neither wordsplit nor its Python package runs it",
                ))
            }
            _ => steps.extend(split_steps(step, at)?),
        }
    }
    let spanner = SpannerSpec::SplitProgram(steps);
    if WordSpanner::of(&spanner).is_none() {
        let kinds: Vec<String> = flat.iter().map(|(_, s)| show(s.get("type"))).collect();
        return Err(unsupported(
            "pre_tokenizer",
            format!(
                "the pre_tokenizer steps [{}] (a split program)",
                kinds.join(", ")
            ),
            format!(
                "the Rust core runs BertPreTokenizer, Whitespace, WhitespaceSplit or no \
                 pre-tokenizer before a word model; {PYTHON_ONLY}"
            ),
        ));
    }
    Ok(spanner)
}

/// A pre-tokenizer other than BERT's as the steps of a split program (HF's character
/// predicates are a `Split` on a one-character class: each matching character is one match).
pub(super) fn split_steps(
    step: &Map<String, Value>,
    at: &str,
) -> Result<Vec<SplitStep>, FormatError> {
    let one = |pattern: String, behavior: &str, invert: bool| {
        let behavior = Behavior::from_name(behavior).expect("checked or constant");
        Ok(vec![SplitStep::Split {
            pattern,
            behavior,
            invert,
        }])
    };
    match step.get("type").and_then(Value::as_str) {
        Some("Split") => {
            let (pattern, behavior) = split_step(step, at)?;
            let invert = step.get("invert").and_then(Value::as_bool).unwrap_or(false);
            one(pattern, &behavior, invert)
        }
        Some("Digits") => {
            let individual = super::truthy(step.get("individual_digits"));
            let behavior = if individual { "Isolated" } else { "Contiguous" };
            one(DIGIT_CLASS.into(), behavior, false)
        }
        Some("Punctuation") => {
            let behavior = match step.get("behavior") {
                None => Some("Isolated"),
                Some(value) => value.as_str().filter(|b| Behavior::from_name(b).is_some()),
            };
            match behavior {
                Some(behavior) => one(punctuation_class(), behavior, false),
                None => Err(malformed(
                    at,
                    format!(
                        "bad Punctuation behavior {}: one of Isolated, Removed, \
                         MergedWithPrevious, MergedWithNext, Contiguous",
                        show(step.get("behavior"))
                    ),
                )),
            }
        }
        Some("Whitespace") => Ok(whitespace_steps()),
        Some("WhitespaceSplit") => Ok(whitespace_split_steps()),
        _ => Err(unsupported(
            at,
            format!("pre_tokenizer {}", show(step.get("type"))),
            "the pre-tokenizers wordsplit runs before a word model are BertPreTokenizer, Split, \
             Digits, Punctuation, Whitespace and WhitespaceSplit",
        )),
    }
}

/// The model stage, with HF's defaults.
fn model_spec(model: &Map<String, Value>, kind: &str) -> Result<ModelSpec, FormatError> {
    let default_unk = if kind == "WordPiece" {
        "[UNK]"
    } else {
        "<unk>"
    };
    let unk_token = match model.get("unk_token") {
        None => default_unk.to_owned(),
        Some(Value::String(unk)) => unk.clone(),
        Some(other) => {
            return Err(malformed(
                "model.unk_token",
                format!("must be a string, not {}", json_type(other)),
            ))
        }
    };
    if kind == "WordLevel" {
        return Ok(ModelSpec::WordLevel { unk_token });
    }
    let prefix = match model.get("continuing_subword_prefix") {
        None => Some("##".to_owned()),
        Some(value) => value.as_str().map(str::to_owned),
    };
    let longest = match model.get("max_input_chars_per_word") {
        None => Some(100),
        Some(value) => integer(value)
            .filter(|n| *n >= 0)
            .map(|n| u64::try_from(n).unwrap_or(u64::MAX)),
    };
    match (prefix, longest) {
        (Some(continuing_subword_prefix), Some(max_input_chars_per_word)) => {
            Ok(ModelSpec::WordPiece {
                unk_token,
                continuing_subword_prefix,
                max_input_chars_per_word,
            })
        }
        _ => Err(malformed(
            "model",
            "WordPiece needs a string continuing_subword_prefix and a non-negative integer \
             max_input_chars_per_word",
        )),
    }
}

/// The decoder stage: `WordPiece`, or none.
fn decoder_spec(value: Option<&Value>) -> Result<DecoderSpec, FormatError> {
    let decoder = match value {
        None | Some(Value::Null) => return Ok(DecoderSpec::None),
        Some(Value::Object(decoder)) => decoder,
        Some(other) => {
            return Err(unsupported(
                "decoder",
                format!("decoder {other} with a word model"),
                "only the WordPiece decoder (or none) decodes a word model",
            ))
        }
    };
    if decoder.get("type").and_then(Value::as_str) != Some("WordPiece") {
        return Err(unsupported(
            "decoder",
            format!("decoder {} with a word model", show(decoder.get("type"))),
            "only the WordPiece decoder (or none) decodes a word model",
        ));
    }
    let prefix = match decoder.get("prefix") {
        None => Some("##".to_owned()),
        Some(value) => value.as_str().map(str::to_owned),
    };
    let cleanup = match decoder.get("cleanup") {
        None => Some(true),
        Some(value) => value.as_bool(),
    };
    match (prefix, cleanup) {
        (Some(prefix), Some(cleanup)) => Ok(DecoderSpec::WordPiece { prefix, cleanup }),
        _ => Err(malformed(
            "decoder",
            "the WordPiece decoder has a string prefix and a boolean cleanup",
        )),
    }
}
