//! HF's BPE over characters, `CharacterBpe` (CLIP's `</w>` end-of-word suffix, a
//! `continuing_subword_prefix`, or no `ByteLevel` pre-tokenizer: the tokenizers quicktour's
//! `tokenizer-wiki`, Tortoise TTS's), read into its pipeline by the rules of the Python
//! package's reader (`formats/hf_character_bpe.py`), which the tests hold this one to (the same
//! tokens, merges, literals and pipeline text on every such file of tests/data):
//!
//! - `model`: its `vocab`, every entry, as its bytes (byte-level text with a `ByteLevel`
//!   pre-tokenizer, else its UTF-8); `merges` as the pair-ranked merges (a pair listed twice
//!   has its last rank, as HF's map of them keeps), each checked to make the token HF's
//!   `BpeBuilder` makes (the left token and the right one after the prefix's length);
//!   `unk_token`, `fuse_unk`, `end_of_word_suffix`, `continuing_subword_prefix`. Refused:
//!   `dropout`, `ignore_merges`, `unk_token: ""`, a byte-level file whose prefix or suffix is
//!   not printable ASCII, and a merge HF fails to load.
//! - `added_tokens`, `normalizer`, `post_processor`: as for the word models
//!   ([`super::word_models`]).
//! - `pre_tokenizer`: with a final `ByteLevel` (its GPT-2 pattern unless `use_regex` is
//!   false) the split program of the steps before it, else the word models' split program;
//!   the core runs CLIP's ([`crate::spanners::clip`]) and those of
//!   [`WordSpanner`](crate::spanners::words::WordSpanner), and refuses the others (which the
//!   Python package runs).
//! - `decoder`: `ByteLevel` (a byte-level model's: the tokens' bytes), or none (the tokens
//!   joined by spaces).
//!
//! A BPE model without byte fallback after the stages of a file converted from a SentencePiece
//! model (NLLB's, mBART's: a `Metaspace` pre-tokenizer or decoder) is read by
//! [`read_metaspace_bpe`]: the same model, the stages of [`super::unigram`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::bpe::{char_to_byte, token_bytes};
use super::post_processor::post_processor;
use super::unigram::metaspace_stages;
use super::word_models::{
    check_word_literals, describe_normalizer, normalizer_spec, spanner_spec, split_steps,
    vocab_tokens, word_model_vocab, Tokens,
};
use super::{
    added_tokens, flat_pre_tokenizers, hf_added_ids, json_type, malformed, show, truthy,
    unsupported, PYTHON_ONLY,
};
use crate::formats::named_table::GPT2_ORIGINAL_PATTERN;
use crate::formats::{FormatError, VocabData};
use crate::normalizers::NormalizeStage;
use crate::spanners::words::WordSpanner;
use crate::spec::{Behavior, DecoderSpec, ModelSpec, PipelineSpec, SpannerSpec, SplitStep};

/// The vocabulary of a parsed tokenizer.json whose BPE model is HF's BPE over characters
/// (see the module docs); `byte_level`: it has a `ByteLevel` pre-tokenizer.
pub(super) fn read_character_bpe(
    spec: &Map<String, Value>,
    model: &Map<String, Value>,
    byte_level: bool,
    name: String,
) -> Result<VocabData, FormatError> {
    let [unk_token, suffix, prefix] = model_strings(model, byte_level)?;
    let (mut tokens, vocab) = vocab_tokens(model.get("vocab"))?;
    if byte_level {
        let table = char_to_byte();
        for (token, _) in &mut tokens {
            let text = String::from_utf8(std::mem::take(token)).expect("a JSON key is UTF-8");
            *token = token_bytes(&table, &text).ok_or_else(|| {
                malformed(
                    format!("model.vocab[{text:?}]"),
                    "is not a byte-level token",
                )
            })?;
        }
    }
    let merges = merges(model.get("merges"), vocab, &tokens, &prefix, byte_level)?;
    let added = hf_added_ids(added_tokens(spec.get("added_tokens"))?, vocab)?;
    let normalizer = normalizer_spec(spec.get("normalizer"))?;
    let Some(stage) = NormalizeStage::from_spec(&normalizer) else {
        return Err(unsupported(
            "normalizer",
            format!("the normalizer {}", describe_normalizer(&normalizer)),
            format!("the Rust core does not run it; {PYTHON_ONLY}"),
        ));
    };
    check_word_literals(&added, &normalizer, &stage)?;
    let spanner = if byte_level {
        byte_level_program(spec.get("pre_tokenizer"))?
    } else {
        spanner_spec(spec.get("pre_tokenizer"), "character-level BPE")?
    };
    let pipeline = PipelineSpec {
        normalizer,
        spanner,
        model: character_bpe_model(model, [unk_token, suffix, prefix], byte_level),
        decoder: decoder(spec.get("decoder"), byte_level)?,
        post_processor: post_processor(spec.get("post_processor"))?,
    };
    word_model_vocab(name, tokens, added, Some(merges), pipeline)
}

/// The vocabulary of a parsed tokenizer.json whose BPE model has no byte fallback after the
/// stages of a file converted from a SentencePiece model (NLLB's, mBART's: the Python
/// package's `read_hf_metaspace_bpe`): the Metaspace stages of [`super::unigram`], then HF's
/// BPE over each `▁`-led word's characters with the unknown token.
pub(super) fn read_metaspace_bpe(
    spec: &Map<String, Value>,
    model: &Map<String, Value>,
    name: String,
) -> Result<VocabData, FormatError> {
    const MODEL: &str = "a BPE model without byte_fallback";
    let [unk_token, suffix, prefix] = model_strings(model, false)?;
    let (tokens, vocab) = vocab_tokens(model.get("vocab"))?;
    let merges = merges(model.get("merges"), vocab, &tokens, &prefix, false)?;
    let added = hf_added_ids(added_tokens(spec.get("added_tokens"))?, vocab)?;
    let texts: Vec<&str> = vocab.keys().map(String::as_str).collect();
    let (normalizer, spanner, decoder) = metaspace_stages(spec, &texts, MODEL)?;
    let pipeline = PipelineSpec {
        normalizer,
        spanner,
        model: character_bpe_model(model, [unk_token, suffix, prefix], false),
        decoder,
        post_processor: post_processor(spec.get("post_processor"))?,
    };
    word_model_vocab(name, tokens, added, Some(merges), pipeline)
}

/// The model stage of the file's `model` and its strings ([`model_strings`]).
fn character_bpe_model(
    model: &Map<String, Value>,
    strings: [String; 3],
    byte_level: bool,
) -> ModelSpec {
    let [unk_token, end_of_word_suffix, continuing_subword_prefix] = strings;
    ModelSpec::CharacterBpe {
        unk_token,
        fuse_unk: truthy(model.get("fuse_unk")),
        end_of_word_suffix,
        byte_level,
        continuing_subword_prefix,
    }
}

/// The model's options checked, and its `unk_token`, `end_of_word_suffix` and
/// `continuing_subword_prefix` (null: empty).
fn model_strings(model: &Map<String, Value>, byte_level: bool) -> Result<[String; 3], FormatError> {
    let dropout = model.get("dropout");
    if !matches!(dropout, None | Some(Value::Null)) && dropout.and_then(Value::as_f64) != Some(0.0)
    {
        return Err(unsupported(
            "model.dropout",
            format!("BPE dropout={}", show(dropout)),
            "dropout makes a text's ids random; set it to null, as at inference",
        ));
    }
    if !matches!(
        model.get("ignore_merges"),
        None | Some(Value::Null) | Some(Value::Bool(false))
    ) {
        return Err(unsupported(
            "model.ignore_merges",
            format!(
                "BPE ignore_merges={} with a character-level BPE",
                show(model.get("ignore_merges"))
            ),
            "the Python package refuses it too",
        ));
    }
    let mut strings = [String::new(), String::new(), String::new()];
    for (key, out) in [
        "unk_token",
        "end_of_word_suffix",
        "continuing_subword_prefix",
    ]
    .into_iter()
    .zip(&mut strings)
    {
        match model.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => *out = text.clone(),
            Some(other) => {
                return Err(malformed(
                    format!("model.{key}"),
                    format!("must be a string or null, not {}", json_type(other)),
                ))
            }
        }
    }
    if model.get("unk_token") == Some(&Value::from("")) {
        return Err(unsupported(
            "model.unk_token",
            "BPE unk_token \"\"",
            "HF looks it up as a token (and fails when a character has none); set unk_token to \
             null, or to a token of the vocab",
        ));
    }
    for (key, affix) in [
        ("end_of_word_suffix", &strings[1]),
        ("continuing_subword_prefix", &strings[2]),
    ] {
        if byte_level && !affix.chars().all(|c| ('!'..='~').contains(&c)) {
            return Err(unsupported(
                format!("model.{key}"),
                format!("BPE {key}={affix:?} with a ByteLevel pre-tokenizer"),
                "only printable ASCII is the same bytes as byte-level text and as UTF-8",
            ));
        }
    }
    Ok(strings)
}

/// The merge list as `(left id, right id, rank)`, a pair listed twice with its last rank,
/// each merge checked as the Python reader checks it.
fn merges(
    value: Option<&Value>,
    vocab: &Map<String, Value>,
    tokens: &Tokens,
    prefix: &str,
    byte_level: bool,
) -> Result<Vec<(u32, u32, u32)>, FormatError> {
    let Some(Value::Array(list)) = value else {
        return Err(malformed("model.merges", "must be a list"));
    };
    let ids: HashMap<&str, u32> = vocab
        .keys()
        .zip(tokens)
        .map(|(text, (_, id))| (text.as_str(), *id))
        .collect();
    let by_bytes: HashMap<&[u8], u32> = tokens.iter().map(|(t, id)| (t.as_slice(), *id)).collect();
    let by_id: HashMap<u32, &[u8]> = tokens.iter().map(|(t, id)| (*id, t.as_slice())).collect();
    let cut = prefix.len();
    let mut ranked: HashMap<(u32, u32), u32> = HashMap::with_capacity(list.len());
    for (rank, merge) in list.iter().enumerate() {
        let at = || format!("model.merges[{rank}]");
        let parts: Option<Vec<&str>> = match merge {
            Value::String(text) => Some(text.split(' ').collect()),
            Value::Array(parts) => parts.iter().map(Value::as_str).collect(),
            _ => None,
        };
        let Some([left, right]) = parts.as_deref().and_then(|p| <[&str; 2]>::try_from(p).ok())
        else {
            return Err(malformed(at(), format!("{merge} is not a pair of tokens")));
        };
        let (Some(&l), Some(&r)) = (ids.get(left), ids.get(right)) else {
            return Err(malformed(
                at(),
                format!("{left:?} + {right:?} names a token the vocab does not have"),
            ));
        };
        let Some(tail) = right.get(cut..).filter(|_| right.len() >= cut) else {
            return Err(malformed(
                at(),
                format!(
                    "{left:?} + {right:?}: the right token is shorter than the \
                     continuing_subword_prefix {prefix:?} or cut by it inside a character (HF \
                     fails to load it)"
                ),
            ));
        };
        let made = format!("{left}{tail}");
        let Some(&made_id) = ids.get(made.as_str()) else {
            return Err(malformed(
                at(),
                format!("{left:?} + {right:?} makes {made:?}, which is not in the vocab"),
            ));
        };
        if byte_level {
            let bytes = [by_id[&l], &by_id[&r][cut..]].concat();
            if by_bytes.get(bytes.as_slice()) != Some(&made_id) {
                return Err(unsupported(
                    at(),
                    format!(
                        "the merge {left:?} + {right:?}, which makes {made:?}, not the token of \
                         their bytes (the right one's after the prefix)"
                    ),
                    "the Python package refuses it too",
                ));
            }
        }
        let rank = u32::try_from(rank).map_err(|_| malformed(at(), "too many merges"))?;
        ranked.insert((l, r), rank);
    }
    let mut merges: Vec<(u32, u32, u32)> =
        ranked.into_iter().map(|((l, r), k)| (l, r, k)).collect();
    merges.sort_unstable_by_key(|&(_, _, rank)| rank);
    Ok(merges)
}

/// The split program of a pre-tokenizer whose last step is `ByteLevel`: the steps before it,
/// then its GPT-2 pattern (`Isolated`) unless `use_regex` is false; refused unless the core
/// runs it natively (CLIP's).
fn byte_level_program(value: Option<&Value>) -> Result<SpannerSpec, FormatError> {
    let Some(Value::Object(object)) = value else {
        return Err(malformed("pre_tokenizer", "must be an object"));
    };
    let mut flat = Vec::new();
    flat_pre_tokenizers(object, "pre_tokenizer".into(), 0, &mut flat)?;
    let kinds: Vec<String> = flat.iter().map(|(_, s)| show(s.get("type"))).collect();
    let refused = || {
        unsupported(
            "pre_tokenizer",
            format!(
                "the pre_tokenizer steps [{}] before a byte-level CharacterBpe model",
                kinds.join(", ")
            ),
            format!("the Rust core runs CLIP's Split then ByteLevel before one; {PYTHON_ONLY}"),
        )
    };
    let Some(((at, last), before)) = flat.split_last() else {
        return Err(refused());
    };
    let is_byte_level =
        |step: &Map<String, Value>| step.get("type") == Some(&Value::from("ByteLevel"));
    if !is_byte_level(last) || before.iter().any(|(_, s)| is_byte_level(s)) {
        return Err(refused());
    }
    if truthy(last.get("add_prefix_space")) {
        return Err(unsupported(
            format!("{at}.add_prefix_space"),
            "ByteLevel add_prefix_space before a CharacterBpe model",
            format!("the Rust core does not run it; {PYTHON_ONLY}"),
        ));
    }
    let mut steps = Vec::new();
    for (at, step) in before {
        steps.extend(split_steps(step, at)?);
    }
    if last.get("use_regex").is_none_or(|v| truthy(Some(v))) {
        steps.push(SplitStep::Split {
            pattern: GPT2_ORIGINAL_PATTERN.into(),
            behavior: Behavior::Isolated,
            invert: false,
        });
    }
    let spanner = SpannerSpec::SplitProgram(steps);
    match WordSpanner::of(&spanner) {
        Some(_) => Ok(spanner),
        None => Err(refused()),
    }
}

/// The decoder: `ByteLevel` of a byte-level model, or none.
fn decoder(value: Option<&Value>, byte_level: bool) -> Result<DecoderSpec, FormatError> {
    match value {
        None | Some(Value::Null) => Ok(DecoderSpec::None),
        Some(Value::Object(decoder))
            if byte_level && decoder.get("type") == Some(&Value::from("ByteLevel")) =>
        {
            Ok(DecoderSpec::ByteLevel)
        }
        Some(other) => Err(unsupported(
            "decoder",
            format!(
                "decoder {} with a CharacterBpe model",
                show(other.get("type").or(Some(other)))
            ),
            "ByteLevel decodes a byte-level one, and none (the tokens joined by spaces) the others",
        )),
    }
}
