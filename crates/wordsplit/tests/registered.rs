//! The crate's generated names (`src/names.rs`, `src/formats/named_table.rs`) against the data
//! file they are made from (`data/registered.json`, by `tools/gen_registered.py`), without Python:
//! the patterns and scanners, the encoders, and the registered names with their rank files'
//! sha256. (A pytest also checks the generated files byte for byte.)

use serde_json::Value;
use wordsplit::formats::{named_vocabularies, read_named, FormatError};
use wordsplit::names;

fn data() -> Value {
    serde_json::from_str(include_str!("../data/registered.json")).unwrap()
}

fn object(value: &Value) -> &serde_json::Map<String, Value> {
    value.as_object().unwrap()
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn the_patterns_and_scanners_are_the_data_files() {
    let data = data();
    let patterns = object(&data["patterns"]);
    let pattern = |name: &str| patterns[name]["pattern"].as_str().unwrap();
    let consts = [
        ("gpt2", names::GPT2_PATTERN),
        ("gpt2-original", names::GPT2_ORIGINAL_PATTERN),
        ("cl100k", names::CL100K_PATTERN),
        ("cl100k-original", names::CL100K_ORIGINAL_PATTERN),
        ("qwen2", names::QWEN2_PATTERN),
        ("o200k", names::O200K_PATTERN),
    ];
    assert_eq!(patterns.len(), consts.len());
    for (name, value) in consts {
        assert_eq!(pattern(name), value, "{name}");
    }
    let registrations: Vec<(&str, &str)> = object(&data["scanners"])
        .iter()
        .flat_map(|(scanner, names)| {
            strings(names)
                .into_iter()
                .map(move |n| (scanner.as_str(), n))
        })
        .map(|(scanner, name)| (scanner, pattern(name)))
        .collect();
    assert_eq!(registrations, names::SCANNER_PATTERNS);
}

#[test]
fn the_encoders_and_aliases_are_the_data_files() {
    let data = data();
    let encoders = object(&data["encoders"]);
    assert_eq!(encoders.keys().collect::<Vec<_>>(), names::ENCODER_NAMES);
    let aliases: Vec<(&str, &str)> = encoders
        .iter()
        .flat_map(|(name, aliases)| {
            strings(aliases)
                .into_iter()
                .map(move |a| (a, name.as_str()))
        })
        .collect();
    assert_eq!(aliases, names::ENCODER_ALIASES);
}

#[test]
fn the_registered_names_and_their_rank_files_are_the_data_files() {
    let data = data();
    let vocabularies = object(&data["vocabularies"]);
    let mut expected: Vec<&str> = vocabularies.keys().map(String::as_str).collect();
    expected.extend(object(&data["aliases"]).keys().map(String::as_str));
    expected.sort_unstable();
    assert_eq!(named_vocabularies(), expected);
    for (name, entry) in vocabularies {
        let owner = entry["rank_file_of"]
            .as_str()
            .map_or(entry, |of| &vocabularies[of]);
        // Any other bytes are refused with the sha256 the table holds for the name.
        match read_named(name, b"") {
            Err(FormatError::WrongRankFile {
                expected_sha256, ..
            }) => {
                assert_eq!(expected_sha256, owner["sha256"].as_str().unwrap(), "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}
