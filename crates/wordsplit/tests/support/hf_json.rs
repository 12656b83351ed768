//! Small tokenizer.json files a test makes: read them, and change one field. The integration
//! tests' (`#[path = "support/hf_json.rs"] mod hf_json;`): the crate's unit tests, which
//! include `support/mod.rs` too, reach the reader as `crate::formats`.
#![allow(dead_code)] // each test binary uses some of them

use serde_json::Value;
use wordsplit::formats::{read_hf_tokenizer_json, FormatError, VocabData};

/// The vocabulary of the tokenizer.json `spec`.
pub fn read(spec: &Value) -> Result<VocabData, FormatError> {
    read_hf_tokenizer_json(spec.to_string().as_bytes())
}

/// `spec` with the field at `path` (keys from the top) set to `value`.
pub fn with(mut spec: Value, path: &[&str], value: Value) -> Value {
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut spec;
    for key in parents {
        at = &mut at[*key];
    }
    at[*last] = value;
    spec
}

/// GPT-2's printable character for byte `b` (ByteLevel's alphabet): a byte-level vocabulary's
/// keys.
pub fn byte_char(b: u8) -> char {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable(b) {
        char::from(b)
    } else {
        char::from_u32(256 + (0..b).filter(|x| !printable(*x)).count() as u32).unwrap()
    }
}
