//! The wordsplit core as a WebAssembly module with a plain C ABI, for the hand-written
//! JavaScript glue in `wasm/js/wordsplit.js` (no wasm-bindgen: the exports take and return
//! numbers only, so any runtime that instantiates WebAssembly can use them).
//!
//! Conventions:
//! * strings and byte strings go in as `(ptr, len)` into memory the caller got from
//!   [`ws_alloc`] and gives back with [`ws_free`];
//! * a tokenizer is an opaque handle (a boxed [`Tokenizer`]), freed by [`ws_tokenizer_free`];
//! * a call that fails returns a negative status (or a null handle) and leaves the core's
//!   error in [`ws_error_code`] and the message bytes at [`ws_result_ptr`]/[`ws_result_len`];
//! * a call that succeeds leaves its output there too: bytes (UTF-8 text or JSON) at
//!   `ws_result_ptr`, or ids at [`ws_ids_ptr`]/[`ws_ids_len`]. The next call overwrites them.

use std::cell::RefCell;

pub mod mem;

use serde_json::{json, Value};
use wordsplit::explain::{explain, Explanation};
use wordsplit::formats::sentencepiece::read_pieces;
use wordsplit::formats::{read_hf_tokenizer_json, read_named, read_sentencepiece_unigram};
use wordsplit::{Error, SpecialPolicy, Tokenizer};

/// The output of the last call, read by the glue before its next call.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    ids: Vec<u32>,
    error_code: u32,
}

thread_local! {
    static OUTPUT: RefCell<Output> = RefCell::default();
}

/// Error codes, one per kind of [`Error`] a JavaScript caller tells apart.
const ERR_FORMAT: u32 = 1;
const ERR_DISALLOWED_SPECIAL: u32 = 2;
const ERR_UNKNOWN_ID: u32 = 3;
const ERR_UNSUPPORTED: u32 = 4;
const ERR_OTHER: u32 = 5;

fn error_code(error: &Error) -> u32 {
    match error {
        Error::Format(_) | Error::VocabFormat(_) => ERR_FORMAT,
        Error::DisallowedSpecial(_) => ERR_DISALLOWED_SPECIAL,
        Error::UnknownId(_) => ERR_UNKNOWN_ID,
        Error::Unsupported(_) => ERR_UNSUPPORTED,
        _ => ERR_OTHER,
    }
}

fn set_bytes(bytes: Vec<u8>) {
    OUTPUT.with(|out| {
        let mut out = out.borrow_mut();
        out.bytes = bytes;
        out.error_code = 0;
    });
}

fn set_ids(ids: Vec<u32>) {
    OUTPUT.with(|out| {
        let mut out = out.borrow_mut();
        out.ids = ids;
        out.error_code = 0;
    });
}

/// Record `error` for the glue and return the failure status.
fn fail(error: Error) -> i32 {
    OUTPUT.with(|out| {
        let mut out = out.borrow_mut();
        out.error_code = error_code(&error);
        out.bytes = error.to_string().into_bytes();
    });
    -1
}

/// The bytes at `(ptr, len)`.
///
/// # Safety
/// `ptr` must point to `len` initialized bytes the caller owns for the duration of the call.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    std::slice::from_raw_parts(ptr, len)
}

/// The text at `(ptr, len)`; the glue writes it with `TextEncoder`, so it is UTF-8 (invalid
/// sequences are refused, not guessed at).
unsafe fn text<'a>(ptr: *const u8, len: usize) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes(ptr, len))
        .map_err(|e| Error::Unsupported(format!("the text is not valid UTF-8: {e}")))
}

unsafe fn tokenizer<'a>(handle: *const Tokenizer) -> &'a Tokenizer {
    &*handle
}

/// `len` bytes of memory for the caller to fill (or null for 0 bytes).
#[no_mangle]
pub extern "C" fn ws_alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return std::ptr::null_mut();
    }
    let mut buffer = std::mem::ManuallyDrop::new(Vec::<u8>::with_capacity(len));
    buffer.as_mut_ptr()
}

/// Give back memory from [`ws_alloc`].
///
/// # Safety
/// `(ptr, len)` must be exactly what one [`ws_alloc`] call returned and was given.
#[no_mangle]
pub unsafe extern "C" fn ws_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() && len > 0 {
        drop(Vec::from_raw_parts(ptr, 0, len));
    }
}

#[no_mangle]
pub extern "C" fn ws_result_ptr() -> *const u8 {
    OUTPUT.with(|out| out.borrow().bytes.as_ptr())
}

#[no_mangle]
pub extern "C" fn ws_result_len() -> usize {
    OUTPUT.with(|out| out.borrow().bytes.len())
}

#[no_mangle]
pub extern "C" fn ws_ids_ptr() -> *const u32 {
    OUTPUT.with(|out| out.borrow().ids.as_ptr())
}

#[no_mangle]
pub extern "C" fn ws_ids_len() -> usize {
    OUTPUT.with(|out| out.borrow().ids.len())
}

/// The error code of the last failed call (0 after a success).
#[no_mangle]
pub extern "C" fn ws_error_code() -> u32 {
    OUTPUT.with(|out| out.borrow().error_code)
}

/// A tokenizer from a vocabulary file's bytes: a tokenizer.json (the bytes start with `{`) is
/// read as HF's (byte-level BPE, WordPiece, WordLevel, Unigram or BPE over characters); a SentencePiece `.model`
/// (a protobuf whose first field is a piece) as a Unigram model; anything else is the rank
/// file of the registered vocabulary `name`, checked against its official sha256. Null on
/// error.
///
/// # Safety
/// Both `(ptr, len)` pairs must be readable.
#[no_mangle]
pub unsafe extern "C" fn ws_tokenizer_new(
    name_ptr: *const u8,
    name_len: usize,
    data_ptr: *const u8,
    data_len: usize,
) -> *mut Tokenizer {
    let made = text(name_ptr, name_len).and_then(|name| {
        let data = bytes(data_ptr, data_len);
        let is_json = data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        // (a rank file is base64 text: it never starts with the byte of a ModelProto's field 1)
        let is_model = data.first() == Some(&0x0a) && read_pieces(data).is_some();
        let named = |mut vocab: wordsplit::formats::VocabData| {
            vocab.name = name.to_string();
            vocab
        };
        let vocab = if is_json {
            read_hf_tokenizer_json(data).map(named)
        } else if is_model {
            read_sentencepiece_unigram(data).map(named)
        } else {
            read_named(name, data)
        };
        Tokenizer::from_vocab(vocab.map_err(Error::Format)?)
    });
    match made {
        Ok(tok) => Box::into_raw(Box::new(tok)),
        Err(error) => {
            fail(error);
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `handle` must come from [`ws_tokenizer_new`] and not be used again.
#[no_mangle]
pub unsafe extern "C" fn ws_tokenizer_free(handle: *mut Tokenizer) {
    if !handle.is_null() {
        drop(Box::from_raw(handle));
    }
}

/// Special-token text is plain text (tiktoken's `encode_ordinary`).
pub const MODE_ORDINARY: u32 = 0;
/// Every special token's text is its id (`allowed_special="all"`).
pub const MODE_ALLOW_ALL: u32 = 1;
/// Special-token text is an error (tiktoken's `encode` defaults).
pub const MODE_REFUSE: u32 = 2;

fn policy(tok: &Tokenizer, mode: u32, allowed: &[&str]) -> SpecialPolicy {
    let literals = tok.literals();
    match mode {
        MODE_ALLOW_ALL => SpecialPolicy::AllowAll,
        MODE_REFUSE => SpecialPolicy::Mixed {
            allowed: literals
                .iter()
                .map(|l| allowed.contains(&l.text.as_str()))
                .collect(),
            disallowed: literals.iter().map(|l| l.special).collect(),
        },
        _ => SpecialPolicy::Mixed {
            allowed: literals
                .iter()
                .map(|l| allowed.contains(&l.text.as_str()))
                .collect(),
            disallowed: vec![false; literals.len()],
        },
    }
}

/// The special tokens in `allowed` (newline-separated) that are matched in `mode`'s other
/// cases; each must be one of the vocabulary's special tokens.
fn allowed_list<'a>(tok: &Tokenizer, allowed: &'a str) -> Result<Vec<&'a str>, Error> {
    let names: Vec<&str> = allowed.split('\n').filter(|s| !s.is_empty()).collect();
    for name in &names {
        if !tok.special_tokens().any(|(text, _)| text == *name) {
            return Err(Error::Unsupported(format!(
                "{name:?} is not a special token of {}: allowedSpecial takes \"all\" or a list \
                 of getSpecialTokens() keys",
                tok.name()
            )));
        }
    }
    Ok(names)
}

/// Encode text under `mode` (a `MODE_*`), with the special tokens listed in `allowed`
/// (newline-separated, may be empty) matched too. The ids are at [`ws_ids_ptr`]; status 0 or -1.
///
/// # Safety
/// `handle` must be live; the `(ptr, len)` pairs readable.
#[no_mangle]
pub unsafe extern "C" fn ws_encode(
    handle: *const Tokenizer,
    text_ptr: *const u8,
    text_len: usize,
    mode: u32,
    allowed_ptr: *const u8,
    allowed_len: usize,
) -> i32 {
    let tok = tokenizer(handle);
    let encoded = text(text_ptr, text_len).and_then(|t| {
        let allowed = allowed_list(tok, text(allowed_ptr, allowed_len)?)?;
        tok.encode_with(t, &policy(tok, mode, &allowed))
    });
    match encoded {
        Ok(ids) => {
            set_ids(ids);
            0
        }
        Err(error) => fail(error),
    }
}

/// The number of ids [`ws_encode`] gives (as a float: exact up to 2^53), or -1.
///
/// # Safety
/// As [`ws_encode`].
#[no_mangle]
pub unsafe extern "C" fn ws_count(
    handle: *const Tokenizer,
    text_ptr: *const u8,
    text_len: usize,
    mode: u32,
) -> f64 {
    let tok = tokenizer(handle);
    match text(text_ptr, text_len).and_then(|t| tok.encode_with(t, &policy(tok, mode, &[]))) {
        Ok(ids) => ids.len() as f64,
        Err(error) => fail(error) as f64,
    }
}

/// The text of `n` ids at `ids_ptr` (invalid UTF-8 as U+FFFD; a word model's tokens as its
/// decoder joins them) at [`ws_result_ptr`], without the special tokens when
/// `skip_special` is 1; 0 or -1.
///
/// # Safety
/// `handle` live; `ids_ptr` must hold `n` u32s.
#[no_mangle]
pub unsafe extern "C" fn ws_decode(
    handle: *const Tokenizer,
    ids_ptr: *const u32,
    n: usize,
    skip_special: u32,
) -> i32 {
    let ids = if n == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(ids_ptr, n)
    };
    let tok = tokenizer(handle);
    let decoded = if skip_special == 1 {
        tok.decode_skipping_special(ids)
    } else {
        tok.decode(ids)
    };
    match decoded {
        Ok(text) => {
            set_bytes(text.into_bytes());
            0
        }
        Err(error) => fail(error),
    }
}

/// HF tokenizers' encode of the text (and of the pair when `has_pair` is 1): every special
/// token in it matched, the post-processor's special tokens added when `add_special_tokens`
/// is 1. JSON at [`ws_result_ptr`]: `{"ids", "typeIds", "specialTokensMask", "offsets"}`,
/// each offset `[start, end]` in code points of its own text (HF's); 0 or -1.
///
/// # Safety
/// `handle` live; the `(ptr, len)` pairs readable.
#[no_mangle]
pub unsafe extern "C" fn ws_encoding(
    handle: *const Tokenizer,
    text_ptr: *const u8,
    text_len: usize,
    pair_ptr: *const u8,
    pair_len: usize,
    has_pair: u32,
    add_special_tokens: u32,
) -> i32 {
    let tok = tokenizer(handle);
    let encoded = text(text_ptr, text_len).and_then(|t| {
        let pair = if has_pair == 1 {
            Some(text(pair_ptr, pair_len)?)
        } else {
            None
        };
        tok.encoding(t, pair, add_special_tokens == 1)
    });
    match encoded {
        Ok(encoding) => {
            let offsets: Vec<[usize; 2]> = encoding.offsets.iter().map(|&(a, b)| [a, b]).collect();
            let out = json!({
                "ids": encoding.ids,
                "typeIds": encoding.type_ids,
                "specialTokensMask": encoding.special_tokens_mask,
                "offsets": offsets,
            });
            set_bytes(out.to_string().into_bytes());
            0
        }
        Err(error) => fail(error),
    }
}

/// The id of the token whose bytes are at `(ptr, len)`, or -1 if there is none.
///
/// # Safety
/// `handle` live; `(ptr, len)` readable.
#[no_mangle]
pub unsafe extern "C" fn ws_token_to_id(
    handle: *const Tokenizer,
    ptr: *const u8,
    len: usize,
) -> f64 {
    tokenizer(handle)
        .token_to_id(bytes(ptr, len))
        .map_or(-1.0, f64::from)
}

/// The bytes of token `id` at [`ws_result_ptr`]: 1, or 0 if the vocabulary has no such id.
///
/// # Safety
/// `handle` live.
#[no_mangle]
pub unsafe extern "C" fn ws_id_to_token(handle: *const Tokenizer, id: u32) -> i32 {
    match tokenizer(handle).id_to_token(id) {
        Some(token) => {
            set_bytes(token.to_vec());
            1
        }
        None => 0,
    }
}

/// The number of ids (one more than the largest).
///
/// # Safety
/// `handle` live.
#[no_mangle]
pub unsafe extern "C" fn ws_n_vocab(handle: *const Tokenizer) -> u32 {
    tokenizer(handle).n_vocab() as u32
}

/// JSON at [`ws_result_ptr`]: `{"name", "model", "nVocab", "eosTokenId", "bosTokenId",
/// "specialTokens": {text: id}, "addedTokens": {text: id}}` (`model`: `"BPE"`, `"WordPiece"`,
/// `"WordLevel"`, `"Unigram"` or `"CharacterBpe"`).
///
/// # Safety
/// `handle` live.
#[no_mangle]
pub unsafe extern "C" fn ws_info(handle: *const Tokenizer) {
    let tok = tokenizer(handle);
    let mut special = serde_json::Map::new();
    let mut added = serde_json::Map::new();
    for literal in tok.literals() {
        let map = if literal.special {
            &mut special
        } else {
            &mut added
        };
        map.insert(literal.text.clone(), json!(literal.id));
    }
    let info = json!({
        "name": tok.name(),
        "model": tok.model().kind(),
        "nVocab": tok.n_vocab(),
        "eosTokenId": tok.eos_token_id(),
        "bosTokenId": tok.bos_token_id(),
        "specialTokens": special,
        "addedTokens": added,
    });
    set_bytes(info.to_string().into_bytes());
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The JSON form of an explanation (bytes as hex strings).
pub fn explanation_json(trace: &Explanation) -> Value {
    let pieces: Vec<Value> = trace
        .pieces
        .iter()
        .map(|piece| {
            let passes: Vec<Value> = piece
                .passes
                .iter()
                .map(|pass| {
                    let candidates: Vec<Value> = pass
                        .candidates
                        .iter()
                        .map(|c| json!({"rank": c.rank, "mergedId": c.merged_id}))
                        .collect();
                    let symbols: Vec<String> = pass.symbols.iter().map(|s| hex(s)).collect();
                    json!({"symbols": symbols, "candidates": candidates, "winner": pass.winner})
                })
                .collect();
            json!({
                "start": piece.start,
                "end": piece.end,
                "bytes": hex(&piece.bytes),
                "kind": piece.kind.name(),
                "wholeTokenId": piece.whole_token_id,
                "passes": passes,
                "mergeIds": piece.merge_ids,
                "ids": piece.ids,
            })
        })
        .collect();
    json!({"ids": trace.ids, "rankBase": trace.rank_base, "pieces": pieces})
}

/// The explanation of encoding the text under `mode`, as JSON at [`ws_result_ptr`]; 0 or -1.
///
/// # Safety
/// As [`ws_encode`].
#[no_mangle]
pub unsafe extern "C" fn ws_explain(
    handle: *const Tokenizer,
    text_ptr: *const u8,
    text_len: usize,
    mode: u32,
) -> i32 {
    let tok = tokenizer(handle);
    match text(text_ptr, text_len).and_then(|t| explain(tok, t, &policy(tok, mode, &[]))) {
        Ok(trace) => {
            set_bytes(explanation_json(&trace).to_string().into_bytes());
            0
        }
        Err(error) => fail(error),
    }
}
