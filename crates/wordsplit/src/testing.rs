//! Helpers shared by the crate's unit tests: pseudo-random values and texts, and where the
//! test files are ([`data`], the module the integration tests use too).

#[path = "../tests/support/mod.rs"]
pub(crate) mod data;

/// The next value of a xorshift64 generator whose state is `state` (not 0): the same
/// pseudo-random sequence on every run, with no dependency.
///
/// ```text
/// let mut state = 0x2545_f491_4f6c_dd1d;
/// let roll = xorshift(&mut state) % 6;
/// ```
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// `count` texts of 1 to `max_len` of `alphabet`'s strings, drawn by [`xorshift`] from
/// `seed`: the same pseudo-random texts on every run.
pub(crate) fn texts(seed: u64, alphabet: &[&str], count: usize, max_len: usize) -> Vec<String> {
    let mut state = seed;
    let mut next = move || xorshift(&mut state) as usize;
    (0..count)
        .map(|_| {
            let len = 1 + next() % max_len;
            (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect()
        })
        .collect()
}

/// A SentencePiece [`crate::spec::PipelineSpec`] of flat fields: the split's (`user_defined`,
/// `words`, `joined`, `metaspace_split`), the model's (`unused`, `ignore_merges`,
/// `byte_fallback`; its `unk_token` is `<unk>`), and
/// `semantics`, the files' kind (`sentencepiece`, `hf`, `llama.cpp`, `llama.cpp-bpe`;
/// default `sentencepiece`), which gives the model's `merge_by` and the decoder's style.
pub(crate) fn sentencepiece_spec(fields: &serde_json::Value) -> crate::spec::PipelineSpec {
    use serde_json::json;
    let get = |key: &str, default: serde_json::Value| fields.get(key).cloned().unwrap_or(default);
    let (merge_by, style) = match fields.get("semantics").and_then(|s| s.as_str()) {
        None | Some("sentencepiece") => ("score", "sentencepiece"),
        Some("hf") => ("rank", "hf"),
        Some("llama.cpp") => ("score", "llama.cpp"),
        Some("llama.cpp-bpe") => ("rank", "llama.cpp"),
        Some(other) => panic!("no semantics {other:?}"),
    };
    let spec = json!({
        "normalizer": {"type": "None"},
        "spanner": {"type": "SentencePiece", "user_defined": get("user_defined", json!([])),
                    "words": get("words", json!(false)), "joined": get("joined", json!([])),
                    "metaspace_split": get("metaspace_split", json!(false))},
        "model": {"type": "SentencePieceBpe", "merge_by": merge_by, "unused": get("unused", json!([])),
                  "ignore_merges": get("ignore_merges", json!(false)),
                  "byte_fallback": get("byte_fallback", json!(true))},
        "decoder": {"type": "SentencePiece", "style": style},
        "post_processor": {"type": "None"},
    });
    crate::spec::PipelineSpec::from_json(&spec).unwrap()
}
