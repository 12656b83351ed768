//! `tokenizer.json` files with a `Unigram` model (T5, ALBERT, XLM-R, Marian, and the files
//! transformers converts from SentencePiece models), read into the vocabulary's typed pipeline
//! ([`VocabData::pipeline`]) and scores ([`VocabData::scores`]) by the rules of the Python
//! package's reader (`formats/hf_unigram.py`), which the tests hold this one to (the same
//! pipeline text, and HF's ids, on the repository's files):
//!
//! - `model`: its `vocab` (a list of `[piece, score]`; a piece's id is its place) is the
//!   vocabulary's tokens, every entry (HF's search finds the special ones too), and the scores,
//!   read as HF reads them (`serde_json` without `float_roundtrip`, as here); `unk_id` (null:
//!   none) names the unknown token; `byte_fallback`.
//! - `normalizer`: `Precompiled`, `Replace`, `Prepend`, the Unicode forms, `Lowercase`,
//!   `StripAccents`, `Strip`, `BertNormalizer`, a `Sequence` of them.
//! - `pre_tokenizer`: `Metaspace` (a [`NormalizerSpec::Metaspace`] after the normalizer, and
//!   with `split` the text cut before every `▁`), T5's `WhitespaceSplit` then `Metaspace` (the
//!   Metaspace's `whitespace_split`, any `prepend_scheme` and `split`: with `always` and
//!   `split` the words joined, each with its `▁`, and cut before every `▁`; otherwise the
//!   white space kept, `keep_white_space` for `always`, and the spanner a split program of
//!   `WhitespaceSplit` then, with `split`, the cut before every `▁`, as the Python package
//!   reads it), or none.
//! - `decoder`: `Metaspace` (HF's decode: the first token's `▁` dropped, the others' made
//!   spaces), or transformers' `Sequence` of `Replace("▁", " ")`, `ByteFallback`, `Fuse` and
//!   an optional `Strip(" ", 1, 0)`.
//! - `post_processor`: as for the word models ([`super::post_processor`]).
//! - `added_tokens`: HF's ids and flags (XLM-R's and ALBERT's `<mask>`/`[MASK]` have
//!   `lstrip`; `normalized` ones found in the text before the `Metaspace`, which runs on each
//!   part between them, after `WhitespaceSplit` on each word of it, as HF runs it).
//!
//! A pipeline whose normalizer the core does not run (a `Replace` with a regex other than
//! white space or a run of one character: the `Replace(" {2,}", "▁")` transformers writes into
//! XLM-R's and ALBERT's files runs) is refused with [`FormatError::Unsupported`] naming that
//! step: the Python package runs it.

use serde_json::{Map, Value};

use super::post_processor::post_processor;
use super::word_models::{describe_normalizer, normalizer_step};
use super::{
    added_tokens, flat_pre_tokenizers, hf_added_ids, integer, json_type, malformed, show,
    unsupported, FILE, PYTHON_ONLY,
};
use crate::formats::{FormatError, Scores, VocabData};
use crate::literal::Literal;
use crate::normalizers::charsmap::CharsMap;
use crate::normalizers::NormalizeStage;
use crate::spanners::words::{metaspace_cut_step, whitespace_split_steps};
use crate::spec::{
    DecoderSpec, DecoderStyle, ModelSpec, NormalizerSpec, PipelineSpec, PrependScheme,
    SentencePieceSplit, SpannerSpec, StripLeadingSpace,
};

/// SentencePiece's meta space, `▁` (U+2581).
pub(crate) const SPACE: char = '\u{2581}';
/// What sentencepiece and HF decode the unknown piece to by default (` ⁇ `).
pub(crate) const UNK_SURFACE: &str = " \u{2047} ";
/// What the messages call the model.
const MODEL: &str = "a Unigram model";
/// The deepest nesting of normalizer `Sequence`s followed.
const MAX_DEPTH: usize = 16;

/// The vocabulary of a parsed tokenizer.json whose model is `Unigram` (see the module docs).
pub(super) fn read_unigram(
    spec: &Map<String, Value>,
    model: &Map<String, Value>,
    name: String,
) -> Result<VocabData, FormatError> {
    pre_tokenizer_steps(spec.get("pre_tokenizer"), MODEL)?; // (what is not supported, named first)
    let (tokens, scores, table) = model_vocab(model.get("vocab"))?;
    let unk_id = match model.get("unk_id") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            integer(value)
                .filter(|id| (0..tokens.len() as i128).contains(id))
                .ok_or_else(|| {
                    malformed(
                        "model.unk_id",
                        format!("the unk_id {value} is not the index of a vocab entry"),
                    )
                })? as usize,
        ),
    };
    let byte_fallback = match model.get("byte_fallback") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(malformed(
                "model.byte_fallback",
                "the Unigram model's byte_fallback is true or false",
            ))
        }
    };
    let added = hf_added_ids(added_tokens(spec.get("added_tokens"))?, &table)?;
    let texts: Vec<&str> = table.keys().map(String::as_str).collect();
    let unk_token = unk_id.map_or_else(String::new, |id| texts[id].to_owned());
    let (normalizer, spanner, decoder) = metaspace_stages(spec, &texts, MODEL)?;
    let pipeline = PipelineSpec {
        normalizer,
        spanner,
        model: ModelSpec::Unigram {
            unk_token,
            byte_fallback,
            user_defined: Vec::new(),
        },
        decoder,
        post_processor: post_processor(spec.get("post_processor"))?,
    }
    .checked()
    .map_err(|e| malformed("the top level", e.0))?;
    let mut literals = Vec::with_capacity(added.len());
    for (token, id) in added {
        let id = u32::try_from(id).map_err(|_| FormatError::IdOutOfRange {
            file: FILE,
            what: format!("the added token {:?} has the id {id}", token.content),
            limit: u64::from(u32::MAX),
        })?;
        literals.push(Literal {
            id,
            text: token.content,
            special: token.special,
            flags: token.flags,
        });
    }
    let n_vocab = literals
        .iter()
        .map(|l| l.id as usize + 1)
        .chain([tokens.len()])
        .max()
        .unwrap_or(0);
    VocabData {
        name,
        tokens,
        literals,
        merges: None,
        whole_piece_lookup: true,
        n_vocab: 0,
        pattern: String::new(),
        normalizer: NormalizeStage::None,
        eos_token_id: None,
        bos_token_id: None,
        unk_token_id: unk_id.map(|id| id as u32),
        fuse_unk: false,
        chat_template: None,
        pipeline: Some(pipeline),
        scores: Some(Scores(scores)),
    }
    .finish(FILE, Some(n_vocab as i128))
}

/// The normalizer, spanner and decoder of a tokenizer.json converted from a SentencePiece
/// model (the Python package's `formats/hf_metaspace.py`): the normalizer with the
/// pre-tokenizer's `Metaspace` after it, the SentencePiece split, and the decoder; `model`
/// names the file's model in messages.
pub(super) fn metaspace_stages(
    spec: &Map<String, Value>,
    texts: &[&str],
    model: &str,
) -> Result<(NormalizerSpec, SpannerSpec, DecoderSpec), FormatError> {
    let pre_steps = pre_tokenizer_steps(spec.get("pre_tokenizer"), model)?;
    let normalizer = normalizer_spec(spec.get("normalizer"), model)?;
    let (mut normalizer, metaspace_split) = with_metaspace(pre_steps.last(), normalizer, model)?;
    let mut spanner = SpannerSpec::SentencePiece(SentencePieceSplit {
        metaspace_split,
        ..SentencePieceSplit::default()
    });
    if let (
        [_, _],
        NormalizerSpec::Metaspace {
            replacement,
            prepend_scheme,
            whitespace_split,
            keep_white_space,
            ..
        },
    ) = (pre_steps.as_slice(), &mut normalizer)
    {
        // HF's WhitespaceSplit before the Metaspace, which runs on each word. With `always`
        // and `split` every word starts with a ▁ and is cut at each one: the words are
        // joined and the SentencePiece split cuts them apart. Otherwise the white space stays
        // for a split program to drop, then (`split`) to cut before every ▁.
        *whitespace_split = true;
        *keep_white_space = !metaspace_split && *prepend_scheme == PrependScheme::Always;
        if !metaspace_split || *prepend_scheme != PrependScheme::Always {
            let mut steps = whitespace_split_steps();
            if metaspace_split {
                steps.push(metaspace_cut_step(*replacement));
            }
            spanner = SpannerSpec::SplitProgram(steps);
        }
    }
    if NormalizeStage::from_spec(&normalizer).is_none() {
        return Err(unsupported(
            "normalizer",
            format!("the normalizer {}", not_native(&normalizer)),
            format!("the Rust core does not run it; {PYTHON_ONLY}"),
        ));
    }
    Ok((
        normalizer,
        spanner,
        decoder_spec(spec.get("decoder"), texts, model)?,
    ))
}

/// The model's `[[piece, score], ...]`: each piece's UTF-8 and id, the scores by id, and the
/// pieces as an object of piece → id (for HF's ids of the added tokens).
#[allow(clippy::type_complexity)]
fn model_vocab(
    entries: Option<&Value>,
) -> Result<(Vec<(Vec<u8>, u32)>, Vec<f64>, Map<String, Value>), FormatError> {
    let Some(entries) = entries.and_then(Value::as_array).filter(|e| !e.is_empty()) else {
        return Err(malformed(
            "model.vocab",
            "a Unigram model's vocab is a non-empty list of [piece, score]",
        ));
    };
    let mut tokens = Vec::with_capacity(entries.len());
    let mut scores = Vec::with_capacity(entries.len());
    let mut table = Map::new();
    for (i, entry) in entries.iter().enumerate() {
        let pair = entry.as_array().filter(|pair| pair.len() == 2);
        let (Some(text), Some(score)) = (
            pair.and_then(|p| p[0].as_str()).filter(|t| !t.is_empty()),
            pair.and_then(|p| p[1].as_f64()).filter(|s| s.is_finite()),
        ) else {
            return Err(malformed(
                format!("model.vocab[{i}]"),
                format!("is {entry}, not [a non-empty piece, a finite score]"),
            ));
        };
        if let Some(first) = table.insert(text.to_owned(), Value::from(i)) {
            return Err(malformed(
                format!("model.vocab[{i}]"),
                format!("the piece {text:?} is listed twice (ids {first} and {i})"),
            ));
        }
        tokens.push((text.as_bytes().to_vec(), i as u32));
        scores.push(score);
    }
    Ok((tokens, scores, table))
}

/// The normalizer stage: none, a Unicode form alone, else a `Sequence` of the steps (nested
/// sequences flattened; a `Precompiled` map read, and so checked, here).
fn normalizer_spec(value: Option<&Value>, model: &str) -> Result<NormalizerSpec, FormatError> {
    let mut steps = Vec::new();
    if let Some(value) = value.filter(|v| !v.is_null()) {
        normalizer_steps(value, "normalizer", 0, &mut steps, model)?;
    }
    Ok(match steps.as_slice() {
        [] => NormalizerSpec::None,
        [NormalizerSpec::Nfc | NormalizerSpec::Nfd | NormalizerSpec::Nfkc | NormalizerSpec::Nfkd] => {
            steps.remove(0)
        }
        _ => NormalizerSpec::Sequence(steps),
    })
}

fn normalizer_steps(
    value: &Value,
    at: &str,
    depth: usize,
    steps: &mut Vec<NormalizerSpec>,
    model: &str,
) -> Result<(), FormatError> {
    let Some(step) = value.as_object() else {
        return Err(malformed(
            at,
            format!("a normalizer is an object, not {}", json_type(value)),
        ));
    };
    match step.get("type").and_then(Value::as_str) {
        Some("Sequence") => {
            let Some(members) = step
                .get("normalizers")
                .and_then(Value::as_array)
                .filter(|_| depth <= MAX_DEPTH)
            else {
                return Err(malformed(
                    at,
                    "a normalizer Sequence needs an array 'normalizers' (nested 16 deep at most)",
                ));
            };
            for (i, member) in members.iter().enumerate() {
                normalizer_steps(
                    member,
                    &format!("{at}.normalizers[{i}]"),
                    depth + 1,
                    steps,
                    model,
                )?;
            }
            Ok(())
        }
        Some("Precompiled") => {
            let charsmap = step.get("precompiled_charsmap").and_then(Value::as_str);
            let Some(charsmap) = charsmap else {
                return Err(malformed(
                    at,
                    "the Precompiled normalizer's precompiled_charsmap is not base64",
                ));
            };
            // (an empty map too: HF refuses it)
            CharsMap::of_base64(charsmap)
                .map_err(|e| malformed(at, format!("its Precompiled normalizer: {e}")))?;
            steps.push(NormalizerSpec::Precompiled(charsmap.to_owned()));
            Ok(())
        }
        Some(
            "NFC" | "NFD" | "NFKC" | "NFKD" | "Lowercase" | "StripAccents" | "Strip" | "Replace"
            | "Prepend" | "BertNormalizer",
        ) => {
            steps.push(normalizer_step(at, step)?);
            Ok(())
        }
        _ => Err(unsupported(
            at,
            format!("normalizer {}", show(step.get("type"))),
            format!("it is not read with {model} (neither package runs it)"),
        )),
    }
}

/// A pre-tokenizer step and its JSON path.
type Step = (String, Map<String, Value>);

/// The pre-tokenizer's steps with their JSON paths: none, `Metaspace`, or `WhitespaceSplit`
/// then `Metaspace`.
fn pre_tokenizer_steps(value: Option<&Value>, model: &str) -> Result<Vec<Step>, FormatError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
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
    let kinds: Vec<&str> = flat
        .iter()
        .map(|(_, step)| step.get("type").and_then(Value::as_str).unwrap_or(""))
        .collect();
    if !matches!(
        kinds.as_slice(),
        [] | ["Metaspace"] | ["WhitespaceSplit", "Metaspace"]
    ) {
        let shown: Vec<String> = flat.iter().map(|(_, s)| show(s.get("type"))).collect();
        return Err(unsupported(
            "pre_tokenizer",
            format!("the pre_tokenizer [{}] with {model}", shown.join(", ")),
            format!("{model} reads Metaspace, WhitespaceSplit then Metaspace, or none"),
        ));
    }
    Ok(flat
        .into_iter()
        .map(|(at, step)| (at, step.clone()))
        .collect())
}

/// The normalizer with the pre-tokenizer's `Metaspace` after it, and whether that cuts the
/// text before every `▁` (the Python package's `_with_metaspace`).
fn with_metaspace(
    step: Option<&Step>,
    normalizer: NormalizerSpec,
    model: &str,
) -> Result<(NormalizerSpec, bool), FormatError> {
    let Some((at, step)) = step else {
        return Ok((normalizer, false));
    };
    let split = match step.get("split") {
        None => true, // (HF's default)
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(malformed(
                format!("{at}.split"),
                format!("Metaspace split is true or false, not {other}"),
            ))
        }
    };
    let scheme = match step.get("prepend_scheme") {
        None | Some(Value::Null) => {
            // (files from before prepend_scheme: add_prefix_space)
            let prefix = step.get("add_prefix_space").is_none_or(|v| v != false);
            Some(if prefix { "always" } else { "never" })
        }
        Some(value) => value.as_str(),
    };
    let scheme = match scheme {
        Some("always") => Some(PrependScheme::Always),
        Some("first") => Some(PrependScheme::First),
        Some("never") => Some(PrependScheme::Never),
        _ => None,
    };
    let replacement = match step.get("replacement") {
        None => Some(SPACE),
        Some(value) => value.as_str().and_then(|text| {
            let mut chars = text.chars();
            chars.next().filter(|_| chars.next().is_none())
        }),
    };
    match (scheme, replacement) {
        (Some(prepend_scheme), Some(replacement)) if !split || replacement == SPACE => Ok((
            NormalizerSpec::Metaspace {
                replacement,
                prepend_scheme,
                before: Box::new(normalizer),
                whitespace_split: false,
                keep_white_space: false,
            },
            split,
        )),
        _ => Err(unsupported(
            at.clone(),
            format!("the Metaspace {} with {model}", Value::Object(step.clone())),
            "neither package runs it (a replacement of one character, ▁ when it splits; \
             prepend_scheme always, first or never)",
        )),
    }
}

/// The decoder: HF's `Metaspace`, or transformers' byte fallback chain.
fn decoder_spec(
    value: Option<&Value>,
    texts: &[&str],
    model: &str,
) -> Result<DecoderSpec, FormatError> {
    let decoder = |strip_leading_space| DecoderSpec::SentencePiece {
        style: DecoderStyle::Hf,
        unk_surface: UNK_SURFACE.into(),
        strip_leading_space,
        unused: Vec::new(),
    };
    let object = value.and_then(Value::as_object);
    if let Some(step) = object.filter(|d| d.get("type") == Some(&Value::from("Metaspace"))) {
        let replacement = step
            .get("replacement")
            .map_or(Some("\u{2581}"), Value::as_str);
        let scheme = match step.get("prepend_scheme") {
            None | Some(Value::Null) => {
                let prefix = step.get("add_prefix_space").is_none_or(|v| v != false);
                Some(if prefix { "always" } else { "never" })
            }
            Some(value) => value.as_str(),
        };
        match (replacement, scheme) {
            (Some("\u{2581}"), Some("always" | "first")) => {
                return Ok(decoder(StripLeadingSpace::All))
            }
            (Some("\u{2581}"), Some("never")) if !texts.iter().any(|t| t.starts_with("<0x")) => {
                return Ok(decoder(StripLeadingSpace::None))
            }
            _ => {}
        }
    } else if let Some(strips) = byte_fallback_decoder_strips(value) {
        return Ok(decoder(if strips {
            StripLeadingSpace::First
        } else {
            StripLeadingSpace::None
        }));
    }
    Err(unsupported(
        "decoder",
        format!(
            "decoder {} with {model}",
            value.map_or_else(|| "null".into(), describe_decoder)
        ),
        "only Metaspace with the replacement ▁, or Sequence[Replace('▁', ' '), ByteFallback, \
         Fuse] with an optional Strip(' ', 1, 0)",
    ))
}

/// For exactly transformers' decoder chain `Sequence[Replace("▁", " "), ByteFallback, Fuse]`
/// with an optional `Strip(" ", 1, 0)`: whether it ends with that `Strip`; None for any other.
fn byte_fallback_decoder_strips(decoder: Option<&Value>) -> Option<bool> {
    let decoder = decoder?.as_object()?;
    if decoder.get("type")? != "Sequence" {
        return None;
    }
    let steps = decoder.get("decoders")?.as_array()?;
    let is = |step: &Value, expected: Value| {
        let plain: Map<String, Value> = match step.get("type").and_then(Value::as_str) {
            // (the keys HF writes that do not change what Strip does are left out)
            Some("Strip") => ["type", "content", "start", "stop"]
                .iter()
                .filter_map(|key| Some(((*key).to_owned(), step.get(*key)?.clone())))
                .collect(),
            _ => step.as_object()?.clone(),
        };
        Some(Value::Object(plain) == expected)
    };
    let replace =
        serde_json::json!({"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "});
    let chain = [
        replace,
        serde_json::json!({"type": "ByteFallback"}),
        serde_json::json!({"type": "Fuse"}),
    ];
    if steps.len() < 3 || steps.len() > 4 {
        return None;
    }
    for (step, expected) in steps.iter().zip(chain) {
        if is(step, expected) != Some(true) {
            return None;
        }
    }
    if let Some(strip) = steps.get(3) {
        let expected = serde_json::json!({"type": "Strip", "content": " ", "start": 1, "stop": 0});
        if is(strip, expected) != Some(true) {
            return None;
        }
    }
    Some(steps.len() == 4)
}

/// A decoder's steps by type, for messages.
fn describe_decoder(decoder: &Value) -> String {
    match decoder.get("type").and_then(Value::as_str) {
        Some("Sequence") => {
            let steps = decoder.get("decoders").and_then(Value::as_array);
            let inner: Vec<String> = steps.into_iter().flatten().map(describe_decoder).collect();
            format!("\"Sequence\"[{}]", inner.join(", "))
        }
        _ => show(decoder.get("type")),
    }
}

/// The step of a normalizer the core does not run, for the refusal: the first regex
/// `Replace`, else the whole normalizer.
fn not_native(spec: &NormalizerSpec) -> String {
    let steps = match spec {
        NormalizerSpec::Metaspace { before, .. } => match &**before {
            NormalizerSpec::Sequence(steps) => steps.as_slice(),
            one => std::slice::from_ref(one),
        },
        other => std::slice::from_ref(other),
    };
    for step in steps {
        if let NormalizerSpec::Replace {
            pattern,
            content,
            regex: true,
        } = step
        {
            return format!("step Replace of the regex {pattern:?} by {content:?}");
        }
    }
    match spec {
        NormalizerSpec::Metaspace { before, .. } => {
            format!("{} (before Metaspace)", describe_normalizer(before))
        }
        other => describe_normalizer(other),
    }
}
