//! The pipeline descriptions both languages share
//! (`crates/wordsplit/tests/data/pipeline-specs.json`, which the Python package's tests read too): each valid one reads and writes back to exactly its text,
//! each invalid one is refused.

use serde_json::Value;

use super::*;

fn examples() -> Value {
    serde_json::from_str(include_str!("../../tests/data/pipeline-specs.json")).unwrap()
}

#[test]
fn every_valid_description_writes_back_to_the_same_text() {
    let examples = examples();
    let valid = examples["valid"].as_array().unwrap();
    assert!(valid.len() >= 10);
    for text in valid {
        let text = text.as_str().unwrap();
        let spec = PipelineSpec::from_text(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(spec.to_text(), text);
    }
}

#[test]
fn every_invalid_description_is_refused() {
    let examples = examples();
    for case in examples["invalid"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        assert!(
            PipelineSpec::from_text(text).is_err(),
            "accepted {}: {text}",
            case["why"]
        );
    }
}

#[test]
fn a_description_with_defaults_left_out_reads_as_written_out() {
    let short = r#"{"normalizer":{"type":"SentencePiece"},"spanner":{"type":"SentencePiece"},"model":{"type":"SentencePieceBpe"},"decoder":{"type":"SentencePiece"}}"#;
    let spec = PipelineSpec::from_text(short).unwrap();
    assert_eq!(
        spec.normalizer,
        NormalizerSpec::SentencePiece(SentencePieceFlags::default())
    );
    assert_eq!(
        spec.spanner,
        SpannerSpec::SentencePiece(SentencePieceSplit::default())
    );
    assert!(spec.is_sentencepiece());
    assert_eq!(PipelineSpec::from_text(&spec.to_text()).unwrap(), spec);
}

#[test]
fn errors_say_which_stage_and_what() {
    let text = r#"{"normalizer":{"type":"Strip","left":1},"spanner":{"type":"Regex","pattern":"."},"model":{"type":"BPE"},"decoder":{"type":"ByteLevel"}}"#;
    let error = PipelineSpec::from_text(text).unwrap_err().to_string();
    assert!(
        error.contains("normalizer \"Strip\"") && error.contains("\"left\""),
        "{error}"
    );
}
