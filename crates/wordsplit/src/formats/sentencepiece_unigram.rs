//! SentencePiece Unigram `.model` files (T5's `spiece.model`, ALBERT's, XLM-R's
//! `sentencepiece.bpe.model`, Marian's `source.spm`...), read into the vocabulary's typed
//! pipeline and scores by the rules of the Python package's reader
//! (`formats/sentencepiece_unigram.py`), which the tests hold this one to (the same pipeline
//! text, and sentencepiece's ids, on the repository's files). What each piece type becomes:
//!
//! - NORMAL and USER_DEFINED pieces are the tokens the segmentation searches (their UTF-8
//!   text, `▁` included); the user-defined ones are also the model's `user_defined`, which the
//!   search scores by their length, and the normalizer copies unmapped;
//! - BYTE pieces (`<0x41>`, with `byte_fallback`) are tokens spelled so, out of the search: an
//!   unknown character is its bytes' pieces;
//! - CONTROL and UNKNOWN pieces (`<s>`, `</s>`, `<unk>`) are special tokens, which
//!   sentencepiece never finds in text;
//! - every piece's score is [`VocabData::scores`] (by id); the normalizer spec (its flags and
//!   character map) is a [`NormalizerSpec::SentencePiece`], the decoder sentencepiece's.
//!
//! Refused as [`FormatError::Unsupported`]: a BPE, WORD or CHAR model (the Python package
//! reads SentencePiece BPE), UNUSED pieces, a denormalizer, a piece spelled like a byte piece
//! in a model without byte fallback, and user-defined pieces that hold a space (see the Python
//! reader for why). Malformed models are [`FormatError::Malformed`].
//!
//! ```
//! use wordsplit::formats::read_sentencepiece_unigram;
//! use wordsplit::Tokenizer;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/unigram/test_sentencepiece.model.gz");
//! let model = wordsplit::formats::read_file(path.as_ref())?; // the file, gunzipped
//! let tok = Tokenizer::from_vocab(read_sentencepiece_unigram(&model)?)?;
//! let ids = tok.encode("Hello world")?;
//! assert_eq!(tok.decode(&ids)?, "Hello world");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use super::sentencepiece::{
    fields, read_pieces, Field, BYTE, CONTROL, UNKNOWN, UNUSED, USER_DEFINED,
};
use super::{file_stem, parent_name, read_file, FileKind, FormatError, Scores, VocabData};
use crate::literal::Literal;
use crate::normalizers::charsmap::CharsMap;
use crate::normalizers::NormalizeStage;
use crate::spec::{
    DecoderSpec, DecoderStyle, ModelSpec, NormalizerSpec, PipelineSpec, PostProcessorSpec,
    SentencePieceFlags, SentencePieceSplit, SpannerSpec, StripLeadingSpace,
};

const FILE: FileKind = FileKind::SentencePiece;

/// The fields of a `ModelProto`'s specs that decide tokenization (the proto's defaults).
struct Specs {
    model_type: u64,
    byte_fallback: bool,
    bos_id: i64,
    eos_id: i64,
    unk_surface: String,
    flags: SentencePieceFlags,
    charsmap: Vec<u8>,
    denormalizer: bool,
}

impl Default for Specs {
    fn default() -> Self {
        Self {
            model_type: 1,
            byte_fallback: false,
            bos_id: 1,
            eos_id: 2,
            unk_surface: super::hf::UNK_SURFACE.to_owned(),
            flags: SentencePieceFlags::default(),
            charsmap: Vec::new(),
            denormalizer: false,
        }
    }
}

fn malformed(at: impl Into<String>, problem: impl Into<String>) -> FormatError {
    FormatError::Malformed {
        file: FILE,
        at: at.into(),
        problem: problem.into(),
    }
}

fn unsupported(construct: impl Into<String>, hint: impl Into<String>) -> FormatError {
    FormatError::Unsupported {
        file: FILE,
        at: "the model".into(),
        construct: construct.into(),
        hint: hint.into(),
    }
}

/// The fields of the trainer (2), normalizer (3) and denormalizer (5) specs.
fn specs(data: &[u8]) -> Result<Specs, FormatError> {
    let bad = || malformed("the protobuf", "not a well-formed SentencePiece model");
    let mut out = Specs::default();
    for (number, wire, value) in fields(data).ok_or_else(bad)? {
        let (2, 2 | 3 | 5, Field::Bytes(message)) = (wire, number, value) else {
            continue;
        };
        for (field, _, value) in fields(message).ok_or_else(bad)? {
            match (number, field, value) {
                (2, 3, Field::Varint(v)) => out.model_type = v,
                (2, 35, Field::Varint(v)) => out.byte_fallback = v != 0,
                // (int32 fields: a negative one travels as 64-bit two's complement)
                (2, 41, Field::Varint(v)) => out.bos_id = v as i64,
                (2, 42, Field::Varint(v)) => out.eos_id = v as i64,
                (2, 44, Field::Bytes(b)) => {
                    out.unk_surface = String::from_utf8(b.to_vec())
                        .map_err(|_| malformed("unk_surface", "not UTF-8"))?
                }
                (2, 24, Field::Varint(v)) => out.flags.treat_whitespace_as_suffix = v != 0,
                (3, 2, Field::Bytes(b)) => out.charsmap = b.to_vec(),
                (3, 3, Field::Varint(v)) => out.flags.add_dummy_prefix = v != 0,
                (3, 4, Field::Varint(v)) => out.flags.remove_extra_whitespaces = v != 0,
                (3, 5, Field::Varint(v)) => out.flags.escape_whitespaces = v != 0,
                (5, 2, Field::Bytes(b)) => out.denormalizer = !b.is_empty(),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The byte a byte piece's text stands for: `<0x` + two uppercase hex digits + `>`, the one
/// spelling sentencepiece takes.
pub(crate) fn byte_piece_value(text: &str) -> Option<u8> {
    let digits = text.strip_prefix("<0x")?.strip_suffix('>')?;
    let upper = |c: u8| c.is_ascii_digit() || (b'A'..=b'F').contains(&c);
    if digits.len() != 2 || !digits.bytes().all(upper) {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// Read a SentencePiece Unigram model's bytes (a serialized `ModelProto`; the vocabulary is
/// named `tokenizer`, see [`load_sentencepiece_unigram`] for names from a path).
pub fn read_sentencepiece_unigram(data: &[u8]) -> Result<VocabData, FormatError> {
    read(data, "tokenizer".into())
}

/// The stems of model files named for their role, not their model: such a file is named after
/// its directory (the Python package's `GENERIC_STEMS`).
const GENERIC_STEMS: [&str; 7] = [
    "tokenizer",
    "spiece",
    "source",
    "target",
    "sentencepiece.bpe",
    "spm",
    "vocab.joint",
];

/// Read a SentencePiece Unigram `.model` or `.spm` file (gunzipped when its name ends in
/// `.gz`), named after the file (`test_sentencepiece.model` → `test_sentencepiece`), or after
/// its directory when the name says only its role (`tokenizer.model`, `spiece.model`,
/// Marian's `source.spm`), as the Python package names it.
pub fn load_sentencepiece_unigram(path: impl AsRef<Path>) -> Result<VocabData, FormatError> {
    let path = path.as_ref();
    let stem = file_stem(path);
    let stem = stem.strip_suffix(".model").unwrap_or(&stem);
    let stem = stem.strip_suffix(".spm").unwrap_or(stem).to_owned();
    let name = if GENERIC_STEMS.contains(&stem.as_str()) {
        Some(parent_name(path))
            .filter(|n| !n.is_empty())
            .unwrap_or(stem)
    } else {
        stem
    };
    read(&read_file(path)?, name)
}

fn read(data: &[u8], name: String) -> Result<VocabData, FormatError> {
    let proto = read_pieces(data).ok_or_else(|| {
        malformed(
            "the protobuf",
            "not a well-formed SentencePiece model (a truncated or unknown field, or a piece \
             without text, not UTF-8 or of an unknown type)",
        )
    })?;
    let specs = specs(data)?;
    if specs.model_type != 1 {
        let kind = match specs.model_type {
            2 => "BPE".to_owned(),
            3 => "WORD".to_owned(),
            4 => "CHAR".to_owned(),
            other => format!("type {other}"),
        };
        return Err(unsupported(
            format!("a SentencePiece {kind} model"),
            "the Rust readers read SentencePiece Unigram models; the Python package \
             (wordsplit.load_vocab) reads SentencePiece BPE",
        ));
    }
    let pieces = &proto.pieces;
    if pieces.is_empty() {
        return Err(malformed("pieces", "the model has no pieces"));
    }
    if specs.denormalizer {
        return Err(unsupported(
            "a denormalizer (a character map sentencepiece applies to decoded text)",
            "wordsplit does not apply it",
        ));
    }
    let mut seen = std::collections::HashMap::with_capacity(pieces.len());
    let (mut tokens, mut literals) = (Vec::with_capacity(pieces.len()), Vec::new());
    let mut byte_values = [false; 256];
    let mut n_bytes = 0;
    for (i, piece) in pieces.iter().enumerate() {
        if let Some(first) = seen.insert(piece.text, i) {
            return Err(malformed(
                format!("piece {i}"),
                format!(
                    "the piece {:?} is listed twice (ids {first} and {i})",
                    piece.text
                ),
            ));
        }
        match piece.kind {
            UNUSED => {
                return Err(unsupported(
                    format!("piece {i} ({:?}), which is UNUSED", piece.text),
                    "a Unigram model wordsplit reads has no UNUSED pieces",
                ))
            }
            CONTROL | UNKNOWN => {
                literals.push(Literal {
                    id: i as u32,
                    text: piece.text.to_owned(),
                    special: true,
                    flags: 0,
                });
                continue;
            }
            BYTE => {
                let value = byte_piece_value(piece.text)
                    .filter(|v| specs.byte_fallback && !byte_values[*v as usize]);
                let Some(value) = value else {
                    return Err(malformed(
                        format!("piece {i}"),
                        format!(
                            "the byte piece {:?} is not a distinct <0xNN> of a model with \
                             byte_fallback",
                            piece.text
                        ),
                    ));
                };
                byte_values[value as usize] = true;
                n_bytes += 1;
            }
            _ if !specs.byte_fallback && byte_piece_value(piece.text).is_some() => {
                return Err(unsupported(
                    format!(
                        "piece {i} {:?}, spelled like a byte piece in a model without \
                         byte_fallback",
                        piece.text
                    ),
                    "sentencepiece decodes it as text, wordsplit's decoder as a byte",
                ))
            }
            _ => {}
        }
        tokens.push((piece.text.as_bytes().to_vec(), i as u32));
    }
    if specs.byte_fallback && n_bytes != 256 {
        return Err(malformed(
            "pieces",
            format!("byte_fallback is on but {n_bytes} of the 256 byte pieces are listed"),
        ));
    }
    let unknown: Vec<&str> = pieces
        .iter()
        .filter(|p| p.kind == UNKNOWN)
        .map(|p| p.text)
        .collect();
    let [unk_token] = unknown.as_slice() else {
        return Err(malformed(
            "pieces",
            format!(
                "a SentencePiece model has exactly one UNKNOWN piece, this one {}",
                unknown.len()
            ),
        ));
    };
    if tokens.is_empty() {
        return Err(malformed("pieces", "the model has no NORMAL pieces"));
    }
    let user_defined: Vec<String> = pieces
        .iter()
        .filter(|p| p.kind == USER_DEFINED)
        .map(|p| p.text.to_owned())
        .collect();
    if !specs.charsmap.is_empty() {
        CharsMap::parse(&specs.charsmap)
            .map_err(|e| malformed("the normalizer spec", format!("its character map: {e}")))?;
    }
    if let Some(text) = user_defined.iter().find(|t| t.contains(' ')) {
        return Err(unsupported(
            format!("the user-defined piece {text:?}, which holds a space"),
            "sentencepiece copies it unnormalized and escapes its spaces, which wordsplit does \
             not do",
        ));
    }
    let flags = specs.flags;
    let strip_leading_space = if flags.remove_extra_whitespaces {
        StripLeadingSpace::All
    } else if flags.add_dummy_prefix {
        StripLeadingSpace::First
    } else {
        StripLeadingSpace::None
    };
    let pipeline = PipelineSpec {
        normalizer: NormalizerSpec::SentencePiece {
            flags,
            charsmap: base64(&specs.charsmap),
            user_defined: user_defined.clone(),
        },
        spanner: SpannerSpec::SentencePiece(SentencePieceSplit::default()),
        model: ModelSpec::Unigram {
            unk_token: (*unk_token).to_owned(),
            byte_fallback: specs.byte_fallback,
            user_defined,
        },
        decoder: DecoderSpec::SentencePiece {
            style: DecoderStyle::SentencePiece,
            unk_surface: specs.unk_surface,
            strip_leading_space,
            unused: Vec::new(),
        },
        post_processor: PostProcessorSpec::None,
    }
    .checked()
    .map_err(|e| malformed("the model", e.0))?;
    let control = |index: i64| {
        usize::try_from(index)
            .ok()
            .filter(|&i| pieces.get(i).is_some_and(|p| p.kind == CONTROL))
            .map(|i| i as u32)
    };
    VocabData {
        name,
        tokens,
        unk_token_id: Some(seen[unk_token] as u32),
        literals,
        merges: None,
        whole_piece_lookup: true,
        n_vocab: 0,
        pattern: String::new(),
        normalizer: NormalizeStage::None,
        eos_token_id: control(specs.eos_id),
        bos_token_id: control(specs.bos_id),
        fuse_unk: false,
        chat_template: None,
        pipeline: Some(pipeline),
        scores: Some(Scores(pieces.iter().map(|p| f64::from(p.score)).collect())),
    }
    .finish(FILE, Some(pieces.len() as i128))
}

/// Standard base64 with padding (the character map as tokenizer.json and the Python package
/// write it).
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.len();
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u32, |w, (i, b)| w | u32::from(*b) << (16 - 8 * i));
        for k in 0..4 {
            if k <= n {
                out.push(ALPHABET[(word >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_as_pythons() {
        for (data, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"\xff\xfe\x00\x01", "//4AAQ=="),
        ] {
            assert_eq!(base64(data), text);
        }
    }

    #[test]
    fn byte_pieces_are_spelled_one_way() {
        assert_eq!(byte_piece_value("<0x0A>"), Some(10));
        for other in ["<0x0a>", "<0x+A>", "<s>", "<0xAAA>"] {
            assert_eq!(byte_piece_value(other), None);
        }
    }
}
