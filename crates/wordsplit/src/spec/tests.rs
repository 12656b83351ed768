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
    let short = r#"{"normalizer":{"type":"SentencePiece"},"spanner":{"type":"SentencePiece"},"model":{"type":"SentencePieceBpe"},"decoder":{"type":"SentencePiece"},"post_processor":{"type":"None"}}"#;
    let spec = PipelineSpec::from_text(short).unwrap();
    assert_eq!(
        spec.normalizer,
        NormalizerSpec::SentencePiece {
            flags: SentencePieceFlags::default(),
            charsmap: String::new(),
            user_defined: Vec::new(),
        }
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
    let text = r#"{"normalizer":{"type":"Strip","left":1},"spanner":{"type":"Regex","pattern":"."},"model":{"type":"BPE"},"decoder":{"type":"ByteLevel"},"post_processor":{"type":"None"}}"#;
    let error = PipelineSpec::from_text(text).unwrap_err().to_string();
    assert!(
        error.contains("normalizer \"Strip\"") && error.contains("\"left\""),
        "{error}"
    );
}

/// A pipeline of these stages (JSON objects) around a Regex spanner, as text.
fn pipeline(normalizer: &str, model: &str, decoder: &str, post_processor: &str) -> String {
    format!(
        r#"{{"normalizer":{normalizer},"spanner":{{"type":"Regex","pattern":"."}},"model":{model},"decoder":{decoder},"post_processor":{post_processor}}}"#
    )
}

#[test]
fn the_new_kinds_with_defaults_left_out_read_as_written_out() {
    let text = pipeline(
        r#"{"type":"BertNormalizer","lowercase":false}"#,
        r#"{"type":"WordPiece"}"#,
        r#"{"type":"WordPiece"}"#,
        r#"{"type":"RobertaProcessing","sep":"</s>","sep_id":2,"cls":"<s>","cls_id":0}"#,
    );
    let spec = PipelineSpec::from_text(&text).unwrap();
    assert_eq!(
        spec.normalizer,
        NormalizerSpec::BertNormalizer {
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents: true,
            lowercase: false
        }
    );
    assert_eq!(
        spec.model,
        ModelSpec::WordPiece {
            unk_token: "[UNK]".into(),
            continuing_subword_prefix: "##".into(),
            max_input_chars_per_word: 100
        }
    );
    assert_eq!(
        spec.decoder,
        DecoderSpec::WordPiece {
            prefix: "##".into(),
            cleanup: true
        }
    );
    assert_eq!(
        spec.post_processor,
        PostProcessorSpec::RobertaProcessing {
            sep: "</s>".into(),
            sep_id: 2,
            cls: "<s>".into(),
            cls_id: 0,
            trim_offsets: true,
            add_prefix_space: true
        }
    );
    assert_eq!(PipelineSpec::from_text(&spec.to_text()).unwrap(), spec);
    let models = [
        (
            r#"{"type":"Unigram"}"#,
            r#"{"byte_fallback":false,"type":"Unigram","unk_token":"<unk>","user_defined":[]}"#,
        ),
        (
            r#"{"type":"WordLevel"}"#,
            r#"{"type":"WordLevel","unk_token":"<unk>"}"#,
        ),
    ];
    for (short, long) in models {
        let text = pipeline(
            r#"{"type":"None"}"#,
            short,
            r#"{"type":"ByteLevel"}"#,
            r#"{"type":"ByteLevel"}"#,
        );
        let spec = PipelineSpec::from_text(&text).unwrap();
        assert_eq!(spec.model.to_json().to_string(), long);
        assert_eq!(
            spec.post_processor.to_json().to_string(),
            r#"{"add_prefix_space":true,"trim_offsets":true,"type":"ByteLevel"}"#
        );
    }
}

#[test]
fn integer_fields_take_json_integers_only() {
    let bert = |sep_id: &str| {
        pipeline(
            r#"{"type":"None"}"#,
            r#"{"type":"BPE"}"#,
            r#"{"type":"ByteLevel"}"#,
            &format!(
                r#"{{"type":"BertProcessing","sep":"[SEP]","sep_id":{sep_id},"cls":"[CLS]","cls_id":101}}"#
            ),
        )
    };
    for id in ["102", "0", "9223372036854775807", "18446744073709551615"] {
        let spec = PipelineSpec::from_text(&bert(id)).unwrap();
        assert!(
            spec.to_text().contains(&format!(r#""sep_id":{id},"#)),
            "{id}"
        );
    }
    for id in [
        "102.0", "1e2", "true", "null", "\"102\"", "[102]", "-0", "-1",
    ] {
        assert!(PipelineSpec::from_text(&bert(id)).is_err(), "{id}");
    }
    let wordpiece = |count: &str| {
        pipeline(
            r#"{"type":"None"}"#,
            &format!(r#"{{"type":"WordPiece","max_input_chars_per_word":{count}}}"#),
            r#"{"type":"ByteLevel"}"#,
            r#"{"type":"None"}"#,
        )
    };
    assert!(PipelineSpec::from_text(&wordpiece("0")).is_ok());
    assert!(PipelineSpec::from_text(&wordpiece("18446744073709551615")).is_ok());
    for count in ["-1", "1.5", "false"] {
        assert!(
            PipelineSpec::from_text(&wordpiece(count)).is_err(),
            "{count}"
        );
    }
}

#[test]
fn a_character_map_is_base64_as_python_checks_it() {
    let accepted = [
        "", "AAAA", "AAAA=", "AAAA==", "AAAA===", "AA==", "AAA=", "AB==", "+/+/", "AAAAAA==",
    ];
    let refused = [
        "=", "==", "A", "AA", "AAA", "AA=", "AAA==", "AA===", "AAAAA", "A=AA", "AA=A", "é",
        " AAAA", "AAAA\n", "-_-_",
    ];
    for (texts, valid) in [(&accepted[..], true), (&refused[..], false)] {
        for charsmap in texts {
            assert_eq!(json::is_base64(charsmap), valid, "{charsmap:?}");
            let normalizer = serde_json::json!({"type": "Precompiled", "charsmap": charsmap});
            let text = pipeline(
                &normalizer.to_string(),
                r#"{"type":"BPE"}"#,
                r#"{"type":"ByteLevel"}"#,
                r#"{"type":"None"}"#,
            );
            assert_eq!(
                PipelineSpec::from_text(&text).is_ok(),
                valid,
                "{charsmap:?}"
            );
        }
    }
}

#[test]
fn templates_are_checked_as_python_checks_them() {
    let template = |single: &str, pair: &str, specials: &str| {
        pipeline(
            r#"{"type":"None"}"#,
            r#"{"type":"BPE"}"#,
            r#"{"type":"ByteLevel"}"#,
            &format!(
                r#"{{"type":"TemplateProcessing","single":[{single}],"pair":[{pair}],"special_tokens":[{specials}]}}"#
            ),
        )
    };
    let a = r#"{"type":"Sequence","id":"A"}"#;
    let b = r#"{"type":"Sequence","id":"B","type_id":1}"#;
    let cls = r#"{"type":"SpecialToken","id":"[CLS]"}"#;
    let special = r#"{"type":"Special","id":"[CLS]","ids":[101],"tokens":["[CLS]"]}"#;
    let ab = format!("{a},{b}");
    let good = template(
        &format!("{cls},{a}"),
        &format!("{cls},{a},{a},{b}"),
        special,
    );
    let spec = PipelineSpec::from_text(&good).unwrap();
    assert!(spec.to_text().contains(
        r#"{"id":"A","type":"Sequence","type_id":0},{"id":"A","type":"Sequence","type_id":0},{"id":"B","type":"Sequence","type_id":1}"#
    ));
    for (single, pair, specials, why) in [
        (a, a, "", "a pair template without B"),
        (ab.as_str(), ab.as_str(), "", "a single template with B"),
        ("", ab.as_str(), "", "a single template without A"),
        (
            a,
            ab.as_str(),
            &format!("{special},{special}")[..],
            "one id twice",
        ),
        (
            a,
            &format!("{ab},{cls}")[..],
            "",
            "an undefined special token",
        ),
        (
            a,
            ab.as_str(),
            r#"{"type":"Special","id":"x","ids":[],"tokens":[]}"#,
            "",
        ),
        (
            r#"{"type":"Sequence","id":"C"}"#,
            ab.as_str(),
            "",
            "a text C",
        ),
        (
            r#"{"type":"Sequence","id":"A","type_id":-1}"#,
            ab.as_str(),
            "",
            "a negative type id",
        ),
        (
            a,
            ab.as_str(),
            r#"{"type":"Special","id":"x","ids":[-1],"tokens":["x"]}"#,
            "a negative id",
        ),
        (
            a,
            ab.as_str(),
            r#"{"type":"Special","id":"x","ids":[1],"tokens":[""]}"#,
            "an empty token",
        ),
        (
            a,
            ab.as_str(),
            r#"{"type":"Special","id":"x","tokens":["x"]}"#,
            "no ids",
        ),
    ] {
        let accepted = PipelineSpec::from_text(&template(single, pair, specials)).is_ok();
        assert_eq!(
            accepted,
            why.is_empty(),
            "{why}: {single} / {pair} / {specials}"
        );
    }
}

#[test]
fn a_sentencepiece_spanner_cuts_for_sentencepiece_bpe_unigram_and_character_bpe_only() {
    let with = |model: &str, decoder: &str| {
        format!(
            r#"{{"normalizer":{{"type":"None"}},"spanner":{{"type":"SentencePiece"}},"model":{model},"decoder":{decoder},"post_processor":{{"type":"None"}}}}"#
        )
    };
    let sentencepiece = r#"{"type":"SentencePiece"}"#;
    assert!(PipelineSpec::from_text(&with(r#"{"type":"Unigram"}"#, sentencepiece)).is_ok());
    assert!(
        PipelineSpec::from_text(&with(r#"{"type":"Unigram"}"#, r#"{"type":"ByteLevel"}"#)).is_ok()
    );
    assert!(PipelineSpec::from_text(&with(r#"{"type":"CharacterBpe"}"#, sentencepiece)).is_ok());
    let error = PipelineSpec::from_text(&with(r#"{"type":"WordLevel"}"#, sentencepiece))
        .unwrap_err()
        .to_string();
    assert!(error.contains("not WordLevel"), "{error}");
    // A SentencePiece decoder after another model is a pipeline too (as in Python).
    let decoder = pipeline(
        r#"{"type":"None"}"#,
        r#"{"type":"BPE"}"#,
        sentencepiece,
        r#"{"type":"None"}"#,
    );
    assert!(PipelineSpec::from_text(&decoder).is_ok());
}
