//! wordsplit's derived entries: a parsed vocabulary in the compact form the Python package's
//! disk cache stores (`src/wordsplit/store/derived.py`, format 6), little-endian:
//!
//! ```text
//! MAGIC | header length (u32) | header (JSON) | body
//! body = ids (u32 × n) | lengths (u32 × n) | token bytes, concatenated | merges (u32 × 3m)
//!        [| scores (f64 × s), when the header has `n_scores`: a Unigram model's]
//! ```
//!
//! The header holds the recipe the package made it from (which its disk cache compares), the
//! other fields, the counts and the [`checksum`] of the body. An entry is not trusted: the
//! magic, the format, the sizes, the counts and the checksum are checked before anything is
//! built, then every [`VocabData`] invariant.
//!
//! The header's `pipeline` is the vocabulary's pipeline in its one JSON form
//! ([`crate::spec::PipelineSpec`]): `{"normalizer": ..., "spanner": ..., "model": ...,
//! "decoder": ..., "post_processor": ...}`, each stage an object tagged by its `"type"`. The
//! core runs a `Regex` spanner (`{"type": "Regex", "pattern": ...}`), the normalizers `None`
//! and `NFC`, the `BPE` model and the `ByteLevel` decoder; an entry with a stage of any other
//! kind (a split program, a normalizer program, a SentencePiece or WordPiece pipeline) is
//! [`FormatError::Unsupported`] (the Python package runs those). The post-processor is read
//! and checked, and not kept: it adds special tokens only when they are asked for, which the
//! Python package does.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{read_file, truthy, FileKind, FormatError, TextMap, VocabData};
use crate::literal::{Literal, ALL_FLAGS};
use crate::normalizers::NormalizeStage;
use crate::spec::{DecoderSpec, ModelSpec, NormalizerSpec, PipelineSpec, SpannerSpec};

/// The first bytes of every derived entry.
pub const MAGIC: &[u8] = b"wordsplit-vocab\n";

/// A body's checksum as the header holds it: CRC-32 and Adler-32 (zlib's), 16 lowercase hex
/// digits, a check against damage (the Python package's `store/digests.py`: zlib is loaded
/// there anyway, and OpenSSL's start-up for a sha256 was a tenth of a warm load).
///
/// ```
/// assert_eq!(wordsplit::formats::derived::checksum(b"abc"), "352441c2024d0127");
/// ```
pub fn checksum(data: &[u8]) -> String {
    let adler = data
        .chunks(5552)
        .fold((1u32, 0u32), |(mut a, mut b), chunk| {
            // (5552: the most bytes whose sums cannot overflow a u32 before the modulo, zlib's NMAX)
            for &byte in chunk {
                a += u32::from(byte);
                b += a;
            }
            (a % 65521, b % 65521)
        });
    format!(
        "{:08x}{:04x}{:04x}",
        crc32fast::hash(data),
        adler.1,
        adler.0
    )
}
/// The header format this reader reads (the Python writer's `FORMAT`).
pub const FORMAT: u64 = 6;

fn corrupt(problem: impl Into<String>) -> FormatError {
    FormatError::CorruptDerived {
        problem: problem.into(),
    }
}

/// Rebuild the vocabulary of a derived entry, checking everything first.
///
/// ```
/// use wordsplit::formats::{read_derived, FormatError};
/// assert!(matches!(read_derived(b"not an entry"), Err(FormatError::CorruptDerived { .. })));
/// ```
pub fn read_derived(data: &[u8]) -> Result<VocabData, FormatError> {
    let (header, body) = split(data)?;
    let header = &header;
    // The fields the Python reader reads with header[key] (a missing one is corrupt there too).
    let required = [
        "name",
        "source",
        "pipeline",
        "special_tokens",
        "added_tokens",
        "n_vocab",
        "eos_token_id",
        "bos_token_id",
        "whole_piece_lookup",
        "chat_template",
        "unk_token_id",
        "fuse_unk",
        "pair_ranked",
    ];
    if let Some(key) = required.iter().find(|key| !header.contains_key(**key)) {
        return Err(corrupt(format!("the header has no {key}")));
    }
    let count = |key: &str| {
        header
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| corrupt(format!("the header's {key} is not a count")))
    };
    let (n, m) = (count("n_tokens")?, count("n_merges")?);
    // (the scores of a Unigram model, last: the core does not run such a model, see below)
    let s = if header.contains_key("n_scores") {
        count("n_scores")?
    } else {
        0
    };
    let fixed = n
        .checked_mul(8)
        .zip(m.checked_mul(12))
        .and_then(|(a, b)| a.checked_add(b))
        .zip(s.checked_mul(8))
        .and_then(|(a, b)| a.checked_add(b));
    let blob_size = fixed.and_then(|fixed| (body.len() as u64).checked_sub(fixed));
    let Some(blob_size) = blob_size else {
        return Err(corrupt(format!(
            "{n} tokens and {m} merges do not fit in a body of {} bytes",
            body.len()
        )));
    };
    if header.get("body_checksum").and_then(Value::as_str) != Some(checksum(body).as_str()) {
        return Err(corrupt(
            "the body's checksum is not the header's body_checksum",
        ));
    }
    let (n, blob_size) = (n as usize, blob_size as usize);
    let ids = u32s(&body[..4 * n]);
    let lengths = u32s(&body[4 * n..8 * n]);
    let blob = &body[8 * n..8 * n + blob_size];
    let mut tokens = Vec::with_capacity(n);
    let mut start = 0usize;
    for (id, length) in ids.into_iter().zip(lengths) {
        let end = start
            .checked_add(length as usize)
            .filter(|end| *end <= blob.len());
        let Some(end) = end else {
            return Err(corrupt("token lengths do not add up to the token bytes"));
        };
        tokens.push((blob[start..end].to_vec(), id));
        start = end;
    }
    if start != blob.len() {
        return Err(corrupt("token lengths do not add up to the token bytes"));
    }
    let text = |key: &str| {
        header
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| corrupt(format!("the header's {key} is not a string")))
    };
    let optional_id = |key: &str| match header.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .map(Some)
            .ok_or_else(|| corrupt(format!("the header's {key} is not a token id"))),
    };
    let (pattern, normalizer) = pipeline(header)?;
    let mut literals = literal_table(header, "special_tokens", true)?;
    literals.extend(literal_table(header, "added_tokens", false)?);
    apply_flags(header, &mut literals)?;
    let chat_template = match header.get("chat_template") {
        None | Some(Value::Null) => None,
        Some(Value::String(template)) => Some(template.clone()),
        Some(_) => {
            return Err(corrupt(
                "the header's chat_template is not a string or null",
            ))
        }
    };
    let merges = if truthy(header.get("pair_ranked")) {
        let merges_start = 8 * n + blob_size;
        Some(merge_table(
            &body[merges_start..merges_start + 12 * m as usize],
        ))
    } else {
        None
    };
    let n_vocab = header
        .get("n_vocab")
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1);
    let Some(n_vocab) = n_vocab else {
        return Err(corrupt("the header's n_vocab is not a positive count"));
    };
    VocabData {
        name: text("name")?,
        tokens,
        literals,
        merges,
        whole_piece_lookup: truthy(header.get("whole_piece_lookup")),
        n_vocab: 0,
        pattern,
        normalizer,
        eos_token_id: optional_id("eos_token_id")?,
        bos_token_id: optional_id("bos_token_id")?,
        unk_token_id: optional_id("unk_token_id")?,
        fuse_unk: header.get("fuse_unk") == Some(&Value::Bool(true)),
        chat_template,
        pipeline: None,
        scores: None,
    }
    .finish(FileKind::Derived, Some(i128::from(n_vocab)))
}

/// The split regex and the normalizer of the header's `pipeline`: a malformed description
/// makes the entry corrupt (as the Python reader finds it), a pipeline of a kind the core does
/// not run makes it unsupported.
fn pipeline(header: &Map<String, Value>) -> Result<(String, NormalizeStage), FormatError> {
    let value = header
        .get("pipeline")
        .ok_or_else(|| corrupt("the header has no pipeline"))?;
    let spec = PipelineSpec::from_json(value).map_err(|e| corrupt(e.to_string()))?;
    let unsupported = |name: &str, construct: String, hint: &str| FormatError::Unsupported {
        file: FileKind::Derived,
        at: format!("pipeline.{name}"),
        construct,
        hint: hint.into(),
    };
    let pattern = match spec.spanner {
        SpannerSpec::Regex(pattern) => pattern,
        SpannerSpec::SplitProgram(_) => {
            return Err(unsupported(
                "spanner",
                "a split program".into(),
                "the Rust core splits by one regex; the Python package (wordsplit.load_vocab) runs the others",
            ))
        }
        other => {
            return Err(unsupported(
                "spanner",
                format!("the spanner {:?}", other.kind()),
                "the Rust core splits by one regex; the Python package (wordsplit.load_vocab) runs the others",
            ))
        }
    };
    let normalize = match spec.normalizer {
        NormalizerSpec::None => NormalizeStage::None,
        NormalizerSpec::Nfc => NormalizeStage::Nfc,
        other => {
            return Err(unsupported(
                "normalizer",
                format!("the normalizer {:?}", other.kind()),
                "the Rust core runs none and NFC; the Python package (wordsplit.load_vocab) runs the others",
            ))
        }
    };
    if spec.model != ModelSpec::Bpe {
        return Err(unsupported(
            "model",
            format!("the model {:?}", spec.model.kind()),
            "the Rust core runs byte-level BPE; the Python package (wordsplit.load_vocab) runs the others",
        ));
    }
    if spec.decoder != DecoderSpec::ByteLevel {
        return Err(unsupported(
            "decoder",
            format!("the decoder {:?}", spec.decoder.kind()),
            "the Rust core decodes token bytes (ByteLevel); the Python package (wordsplit.load_vocab) runs the others",
        ));
    }
    Ok((pattern, normalize))
}

/// Read a derived entry from a file (gunzipped when its name ends in `.gz`).
pub fn load_derived(path: impl AsRef<Path>) -> Result<VocabData, FormatError> {
    read_derived(&read_file(path.as_ref())?)
}

/// `(header, body)` of entry bytes: the magic, the header's format and the body's size checked.
fn split(data: &[u8]) -> Result<(Map<String, Value>, &[u8]), FormatError> {
    let Some(rest) = data.strip_prefix(MAGIC).filter(|rest| rest.len() >= 4) else {
        return Err(corrupt("not a derived vocabulary entry (no magic)"));
    };
    let head_size = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
    let Some(head) = rest[4..].get(..head_size) else {
        return Err(corrupt("truncated header"));
    };
    let body = &rest[4 + head_size..];
    let header: Value =
        serde_json::from_slice(head).map_err(|e| corrupt(format!("unreadable header ({e})")))?;
    let Value::Object(header) = header else {
        return Err(corrupt("the header is not a JSON object"));
    };
    if header.get("format").and_then(Value::as_u64) != Some(FORMAT) {
        return Err(corrupt(format!(
            "format {} is not {FORMAT}",
            header
                .get("format")
                .map_or("missing".into(), Value::to_string)
        )));
    }
    if header.get("body_size").and_then(Value::as_u64) != Some(body.len() as u64) {
        return Err(corrupt(
            "truncated body (its size is not the header's body_size)",
        ));
    }
    Ok((header, body))
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

/// Pair-ranked merges from `(left, right, rank)` triples (a pair listed twice keeps its last
/// rank at its first place, as the Python reader's dict).
fn merge_table(bytes: &[u8]) -> Vec<(u32, u32, u32)> {
    let values = u32s(bytes);
    let mut table: Vec<(u32, u32, u32)> = Vec::with_capacity(values.len() / 3);
    let mut place: HashMap<(u32, u32), usize> = HashMap::with_capacity(values.len() / 3);
    for triple in values.chunks_exact(3) {
        let (left, right, rank) = (triple[0], triple[1], triple[2]);
        match place.get(&(left, right)) {
            Some(&at) => table[at].2 = rank,
            None => {
                place.insert((left, right), table.len());
                table.push((left, right, rank));
            }
        }
    }
    table
}

/// A header list of `[text, id]` pairs as literals (a text listed twice keeps its first place
/// and its last id, as a Python dict).
fn literal_table(
    header: &Map<String, Value>,
    key: &str,
    special: bool,
) -> Result<Vec<Literal>, FormatError> {
    let bad = || {
        corrupt(format!(
            "the header's {key} is not a list of [text, id] pairs"
        ))
    };
    let Some(Value::Array(pairs)) = header.get(key) else {
        return Err(bad());
    };
    let mut literals = TextMap::new();
    for pair in pairs {
        let Some([Value::String(text), id]) = pair.as_array().map(Vec::as_slice) else {
            return Err(bad());
        };
        let Some(id) = id.as_u64().and_then(|id| u32::try_from(id).ok()) else {
            return Err(bad());
        };
        literals.insert(text, id);
    }
    let literals = literals.into_entries().into_iter();
    Ok(literals
        .map(|(text, id)| Literal {
            text,
            id,
            special,
            flags: 0,
        })
        .collect())
}

/// The header's `literal_flags` (text → bitmask 0-15), each naming a literal.
fn apply_flags(header: &Map<String, Value>, literals: &mut [Literal]) -> Result<(), FormatError> {
    let flags = match header.get("literal_flags") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(flags)) => flags,
        Some(_) => return Err(corrupt("the header's literal_flags is not an object")),
    };
    for (text, bits) in flags {
        let bits = bits.as_u64().and_then(|bits| u8::try_from(bits).ok());
        let Some(bits) = bits.filter(|bits| bits & !ALL_FLAGS == 0) else {
            return Err(corrupt(format!(
                "the literal_flags of {text:?} are not an int 0-15"
            )));
        };
        let mut named = false;
        for literal in literals.iter_mut().filter(|lit| lit.text == *text) {
            literal.flags = bits;
            named = true;
        }
        if !named {
            return Err(corrupt(format!(
                "literal_flags names {text:?}, which is no special or added token"
            )));
        }
    }
    Ok(())
}
