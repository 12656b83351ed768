//! A `tokenizer.json`'s `post_processor` (null, `TemplateProcessing`, `BertProcessing`,
//! `RobertaProcessing`, `ByteLevel` or a `Sequence` of them) as a [`PostProcessorSpec`], by the
//! rules of the Python package's `post_processor_programs.py`: the file's form is rewritten in
//! the pipeline's one JSON form and read by [`PostProcessorSpec::from_json`], whose checks
//! (a template holds its texts, names only special tokens it defines) apply to it.

use serde_json::{json, Map, Value};

use super::{integer, json_type, malformed, show, truthy, unsupported};
use crate::formats::FormatError;
use crate::spec::PostProcessorSpec;

/// The post-processor stage of a `post_processor` value (`None` for null or a missing one).
pub(super) fn post_processor(value: Option<&Value>) -> Result<PostProcessorSpec, FormatError> {
    let canonical = match value {
        None | Some(Value::Null) => json!({"type": "None"}),
        Some(value) => canonical(value, "post_processor")?,
    };
    PostProcessorSpec::from_json(&canonical).map_err(|e| malformed("post_processor", e.0))
}

/// The pipeline's JSON form of one processor (a `Sequence`'s members too), at `at`.
fn canonical(value: &Value, at: &str) -> Result<Value, FormatError> {
    let Value::Object(processor) = value else {
        return Err(malformed(
            at,
            format!("must be an object or null, not {}", json_type(value)),
        ));
    };
    let kind = processor.get("type").and_then(Value::as_str);
    let flag = |key: &str| processor.get(key).is_none_or(|v| truthy(Some(v)));
    Ok(match kind {
        Some("ByteLevel") => json!({
            "type": "ByteLevel",
            "trim_offsets": flag("trim_offsets"),
            "add_prefix_space": flag("add_prefix_space"),
        }),
        Some("TemplateProcessing") => {
            let specials = template_specials(processor.get("special_tokens"), at)?;
            let names: Vec<&str> = specials.iter().filter_map(|s| s["id"].as_str()).collect();
            json!({
                "type": "TemplateProcessing",
                "single": template(processor.get("single"), &format!("{at}.single"), &names)?,
                "pair": template(processor.get("pair"), &format!("{at}.pair"), &names)?,
                "special_tokens": specials,
            })
        }
        Some(kind @ ("BertProcessing" | "RobertaProcessing")) => {
            let (sep, sep_id) = token_pair(processor.get("sep"), &format!("{at}.sep"))?;
            let (cls, cls_id) = token_pair(processor.get("cls"), &format!("{at}.cls"))?;
            let mut out =
                json!({"type": kind, "sep": sep, "sep_id": sep_id, "cls": cls, "cls_id": cls_id});
            if kind == "RobertaProcessing" {
                out["trim_offsets"] = json!(flag("trim_offsets"));
                out["add_prefix_space"] = json!(flag("add_prefix_space"));
            }
            out
        }
        Some("Sequence") => {
            let Some(Value::Array(steps)) = processor.get("processors") else {
                return Err(malformed(
                    at,
                    "a post_processor Sequence needs a list 'processors'",
                ));
            };
            let mut processors = Vec::with_capacity(steps.len());
            for (i, step) in steps.iter().enumerate() {
                let at = format!("{at}.processors[{i}]");
                if step.is_null() {
                    return Err(malformed(at, "a post_processor Sequence has no null step"));
                }
                processors.push(canonical(step, &at)?);
            }
            // HF numbers the sequences of a template's output oddly when another processor
            // runs after it; real files put the one that adds tokens last.
            let adds = |p: &Value| {
                matches!(
                    p["type"].as_str(),
                    Some("TemplateProcessing" | "BertProcessing" | "RobertaProcessing")
                )
            };
            if processors.iter().rev().skip(1).any(adds) {
                return Err(unsupported(
                    at,
                    "a post_processor Sequence with a processor after one that adds tokens",
                    "put TemplateProcessing last, as Llama 3's file does",
                ));
            }
            json!({"type": "Sequence", "processors": processors})
        }
        _ => {
            return Err(unsupported(
                at,
                format!("post_processor {}", show(processor.get("type"))),
                "the post-processors wordsplit runs are TemplateProcessing, ByteLevel, \
                 RobertaProcessing, BertProcessing and a Sequence of them",
            ))
        }
    })
}

/// `[token, id]`: BERT's and RoBERTa's `sep` and `cls`.
fn token_pair(value: Option<&Value>, at: &str) -> Result<(String, u64), FormatError> {
    if let Some(Value::Array(pair)) = value {
        if let [Value::String(token), id] = pair.as_slice() {
            if let Some(id) = integer(id).and_then(|id| u64::try_from(id).ok()) {
                return Ok((token.clone(), id));
            }
        }
    }
    Err(malformed(
        at,
        format!("must be [token, id], not {}", show(value)),
    ))
}

/// A template's `special_tokens` object as the pipeline's list, each named by its key.
fn template_specials(value: Option<&Value>, at: &str) -> Result<Vec<Value>, FormatError> {
    let empty = Map::new();
    let specials = match value {
        None => &empty,
        Some(Value::Object(specials)) => specials,
        Some(other) => {
            return Err(malformed(
                format!("{at}.special_tokens"),
                format!("must be an object, not {}", json_type(other)),
            ))
        }
    };
    let mut out = Vec::with_capacity(specials.len());
    for (name, entry) in specials {
        let ids = entry.get("ids").and_then(Value::as_array);
        let tokens = entry.get("tokens").and_then(Value::as_array);
        let ids: Option<Vec<u64>> = ids.and_then(|ids| {
            ids.iter()
                .map(|id| integer(id).and_then(|id| u64::try_from(id).ok()))
                .collect()
        });
        let tokens: Option<Vec<&str>> = tokens.and_then(|tokens| {
            tokens
                .iter()
                .map(|t| t.as_str().filter(|t| !t.is_empty()))
                .collect()
        });
        match (ids, tokens) {
            (Some(ids), Some(tokens)) if ids.len() == tokens.len() => out.push(json!({
                "type": "Special", "id": name, "ids": ids, "tokens": tokens,
            })),
            _ => {
                return Err(malformed(
                    format!("{at}.special_tokens[{name:?}]"),
                    "a template special token needs lists 'ids' (non-negative integers) and \
                     'tokens' (non-empty strings) of the same length",
                ))
            }
        }
    }
    Ok(out)
}

/// A template's pieces: `{"Sequence": {"id": "A" | "B", "type_id": n}}` and
/// `{"SpecialToken": {"id": name, "type_id": n}}` (a name `names` holds).
fn template(value: Option<&Value>, at: &str, names: &[&str]) -> Result<Vec<Value>, FormatError> {
    let Some(Value::Array(pieces)) = value else {
        return Err(malformed(at, "must be a list of pieces"));
    };
    let mut out = Vec::with_capacity(pieces.len());
    for (i, piece) in pieces.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let item = piece.as_object().filter(|p| p.len() == 1).and_then(|p| {
            let (key, body) = p.iter().next()?;
            let body = body.as_object()?;
            let type_id = match body.get("type_id") {
                None => Some(0),
                Some(value) => integer(value).and_then(|n| u64::try_from(n).ok()),
            }?;
            let id = body.get("id")?.as_str()?;
            match key.as_str() {
                "Sequence" if id == "A" || id == "B" => {
                    Some(json!({"type": "Sequence", "id": id, "type_id": type_id}))
                }
                "SpecialToken" => {
                    Some(json!({"type": "SpecialToken", "id": id, "type_id": type_id}))
                }
                _ => None,
            }
        });
        match item {
            Some(item) if item["type"] == "SpecialToken" && !names.contains(&item["id"].as_str().unwrap_or("")) => {
                return Err(malformed(
                    at,
                    format!(
                        "the template uses the special token {}, which its special_tokens does not define",
                        item["id"]
                    ),
                ))
            }
            Some(item) => out.push(item),
            None => {
                return Err(malformed(
                    at,
                    format!("the piece {piece} is not a Sequence or a SpecialToken"),
                ))
            }
        }
    }
    Ok(out)
}
