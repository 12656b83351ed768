//! The Rust core alone reads the files of the models that are not byte-level BPE and gives
//! their official tokenizer's ids and text, from the crate's own test data (each file and
//! golden of `tests/data/` links to the repository's, and the packaged crate holds them as
//! files): a SentencePiece Unigram `.model` (sentencepiece 0.2.3's ids and decode), a Unigram
//! tokenizer.json, a WordPiece and a WordLevel one (HF tokenizers 0.23.3's). The goldens are
//! the oracles' own output, written by the repository's `tools/gen_family_goldens.py`. The
//! Unigram files whose pipeline has a stage the core does not run yet are refused, naming it.

mod support;

use serde_json::{json, Value};
use support::test_file;
use wordsplit::formats::{
    load_hf_tokenizer_json, load_sentencepiece_unigram, read_file, read_hf_tokenizer_json,
    FormatError, VocabData,
};
use wordsplit::spec::ModelSpec;
use wordsplit::Tokenizer;

fn golden(name: &str) -> Value {
    let path = test_file(&format!("golden/{name}.json.gz"));
    serde_json::from_slice(&read_file(&path).unwrap()).unwrap()
}

fn ids(value: &Value) -> Vec<u32> {
    let ids = value.as_array().unwrap();
    ids.iter().map(|id| id.as_u64().unwrap() as u32).collect()
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap()
}

/// Every case of `golden`: the ids of its text (special-token text as text: the oracle's
/// `encode`), and the decode of those ids and of its decode cases.
fn check_ids_and_text(tok: &Tokenizer, golden: &Value, special_as_text: bool) -> usize {
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() > 1000, "{} cases", cases.len());
    for case in cases {
        let text = text(&case["text"]);
        let got = if special_as_text {
            tok.encode_ordinary(text)
        } else {
            tok.encode_with_special_tokens(text)
        };
        let got = got.unwrap_or_else(|e| panic!("{}: {text:?}: {e}", tok.name()));
        assert_eq!(got, ids(&case["ids"]), "{}: {text:?}", tok.name());
        let decoded = tok.decode(&got).unwrap();
        assert_eq!(
            decoded,
            self::text(&case["decoded"]),
            "{}: {text:?}",
            tok.name()
        );
    }
    for case in golden["decode_cases"].as_array().unwrap() {
        let ids = ids(&case["ids"]);
        assert_eq!(tok.decode(&ids).unwrap(), text(&case["decoded"]), "{ids:?}");
        if let Some(skipped) = case.get("decoded_skip_special") {
            assert_eq!(
                tok.decode_skipping_special(&ids).unwrap(),
                text(skipped),
                "{ids:?}"
            );
        }
    }
    cases.len()
}

fn unigram(vocab: VocabData) -> Tokenizer {
    assert!(matches!(
        vocab.pipeline.as_ref().map(|p| &p.model),
        Some(ModelSpec::Unigram { .. })
    ));
    assert_eq!(
        vocab.scores.as_ref().map(|s| s.0.len()),
        Some(vocab.n_vocab as usize)
    );
    Tokenizer::from_vocab(vocab).unwrap()
}

#[test]
fn sentencepiece_unigram_models_give_sentencepieces_ids_and_text() {
    for (file, name) in [
        ("test_sentencepiece.model.gz", "unigram-test_sentencepiece"),
        ("spiece.model.gz", "unigram-spiece"), // ALBERT's
    ] {
        let vocab = load_sentencepiece_unigram(test_file(&format!("unigram/{file}"))).unwrap();
        let golden = golden(name);
        assert_eq!(text(&golden["oracle"]), "sentencepiece 0.2.3");
        let tok = unigram(vocab);
        assert_eq!(tok.n_vocab() as u64, golden["n_vocab"].as_u64().unwrap());
        let unk = golden["unk_id"].as_u64().map(|id| id as u32);
        assert_eq!(tok.token_to_id(b"<unk>"), unk);
        assert_eq!(
            tok.bos_token_id(),
            golden["bos_id"].as_u64().map(|id| id as u32)
        );
        assert_eq!(
            tok.eos_token_id(),
            golden["eos_id"].as_u64().map(|id| id as u32)
        );
        // (sentencepiece never finds a control piece's text in the text)
        check_ids_and_text(&tok, &golden, true);
    }
}

#[test]
fn a_unigram_tokenizer_json_gives_hfs_ids_and_text() {
    let path = test_file("unigram/test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz");
    let tok = unigram(load_hf_tokenizer_json(path).unwrap());
    let golden = golden("unigram-test_sentencepiece_with_bytefallback.llama");
    assert_eq!(text(&golden["oracle"]), "tokenizers 0.23.3");
    assert_eq!(tok.n_vocab() as u64, golden["n_vocab"].as_u64().unwrap());
    check_ids_and_text(&tok, &golden, false);
}

fn offsets(value: &Value) -> Vec<(usize, usize)> {
    let pairs = value.as_array().unwrap().iter().map(|pair| {
        let pair = ids(pair);
        (pair[0] as usize, pair[1] as usize)
    });
    pairs.collect()
}

/// HF's `encode(text)` and `encode(a, b)` with the special tokens, offsets included, for the
/// Unigram tokenizer.json layouts: Llama's with byte fallback (each byte token of an unknown
/// run with the whole run's offsets), T5's (`WhitespaceSplit`, then `Metaspace`), ALBERT's
/// (`Replace`s and a character map before `Metaspace`), XLM-R's (a character map).
#[test]
fn unigram_tokenizer_jsons_give_hfs_offsets() {
    for stem in [
        "test_sentencepiece_with_bytefallback.llama",
        "test_sentencepiece.t5",
        "spiece.albert",
        "test_sentencepiece.xlmroberta",
    ] {
        let path = test_file(&format!("unigram/{stem}.tokenizer.json.gz"));
        let tok = unigram(load_hf_tokenizer_json(path).unwrap());
        let golden = golden(&format!("unigram-{stem}"));
        let mut fallback = 0;
        for case in golden["cases"].as_array().unwrap() {
            let text = text(&case["text"]);
            let expected = &case["with_specials"];
            let got = tok.encoding(text, None, true).unwrap();
            assert_eq!(got.ids, ids(&expected["ids"]), "{stem}: {text:?}");
            assert_eq!(
                got.offsets,
                offsets(&expected["offsets"]),
                "{stem}: {text:?}"
            );
            fallback += got.ids.iter().filter(|&&id| (3..259).contains(&id)).count();
        }
        if stem.ends_with("llama") {
            assert!(fallback > 100, "{fallback} byte-fallback tokens"); // (ids 3 to 258)
        }
        for case in golden["pair_cases"].as_array().unwrap() {
            let (a, b) = (text(&case["text"]), text(&case["pair"]));
            let got = tok.encoding(a, Some(b), true).unwrap();
            assert_eq!(got.ids, ids(&case["ids"]), "{stem}: {a:?} {b:?}");
            assert_eq!(
                got.offsets,
                offsets(&case["offsets"]),
                "{stem}: {a:?} {b:?}"
            );
            assert_eq!(got.type_ids, ids(&case["type_ids"]), "{stem}: {a:?} {b:?}");
        }
    }
}

#[test]
fn word_model_files_give_hfs_ids_and_text() {
    for (file, name, model) in [
        (
            "wordpiece/all-MiniLM-L6-v2.tokenizer.json.gz",
            "wordpiece-all-MiniLM-L6-v2",
            "WordPiece",
        ),
        (
            "wordpiece/genslm-codon-wordlevel.tokenizer.json",
            "wordlevel-genslm-codon-wordlevel",
            "WordLevel",
        ),
    ] {
        let tok = Tokenizer::from_vocab(load_hf_tokenizer_json(test_file(file)).unwrap()).unwrap();
        let golden = golden(name);
        assert_eq!(tok.model().kind(), model);
        assert_eq!(text(&golden["model"]), model);
        check_ids_and_text(&tok, &golden, false);
    }
}

/// T5's layout (`WhitespaceSplit` before `Metaspace`, with `prepend_scheme` `never` too: no
/// word gets a `▁`) and ALBERT's (a regex `Replace` of a run of spaces in its normalizer) read
/// and run on a small vocabulary; a stage the core does not
/// run is refused, naming it (`tests/formats.rs` checks the real files, which the repository
/// has, against the Python loader's pipeline of each).
#[test]
fn unigram_files_with_a_stage_the_core_lacks_are_refused_naming_it() {
    let metaspace =
        json!({"type": "Metaspace", "replacement": "\u{2581}", "add_prefix_space": true});
    let file = |normalizer: Value, pre_tokenizer: Value| {
        json!({
            "model": {"type": "Unigram", "unk_id": 0,
                      "vocab": [["<unk>", 0.0], ["\u{2581}a", -1.0], ["a", -2.0]]},
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "decoder": metaspace.clone(),
        })
    };
    let t5 = file(
        Value::Null,
        json!({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace.clone()]}),
    );
    let albert = file(
        json!({"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"String": "``"}, "content": "\""}, {"type": "NFKD"},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}),
        metaspace.clone(),
    );
    let never = json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "never"});
    let t5_never = file(
        Value::Null,
        json!({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, never]}),
    );
    for (what, spec, ids) in [
        ("T5's", t5, [1, 1]),
        ("ALBERT's", albert, [1, 1]),
        ("T5's never", t5_never, [2, 2]),
    ] {
        let tok = unigram(read_hf_tokenizer_json(spec.to_string().as_bytes()).unwrap());
        assert_eq!(tok.encode("a  a").unwrap(), ids, "{what}");
    }
    let digits = file(
        json!({"type": "Replace", "pattern": {"Regex": "\\d+"}, "content": "0"}),
        metaspace.clone(),
    );
    for (what, spec, at, names) in [(
        "a regex Replace",
        digits,
        "normalizer",
        "Replace of the regex \"\\\\d+\"",
    )] {
        match read_hf_tokenizer_json(spec.to_string().as_bytes()) {
            Err(FormatError::Unsupported {
                at: where_,
                construct,
                ..
            }) => {
                assert_eq!(where_, at, "{what}");
                assert!(construct.contains(names), "{what}: {construct}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    // Without them, the same file reads and runs.
    let plain = file(Value::Null, metaspace.clone());
    let tok = unigram(read_hf_tokenizer_json(plain.to_string().as_bytes()).unwrap());
    assert_eq!(tok.encode("a a").unwrap(), [1, 1]);
    assert_eq!(tok.decode(&[1, 1]).unwrap(), "a a");
}

/// XLM-R's and ALBERT's files give their mask token `lstrip` (it takes the white space before
/// it, as HF's `tests/test_sentencepiece_added_flags.py` checks on the real files): the flags
/// are read; `normalized` under a `Metaspace` pre-tokenizer too (HF finds such a token in each
/// stretch's normalized text, then runs the Metaspace on each part left), after
/// `WhitespaceSplit` too (then on each word of a part).
#[test]
fn unigram_added_token_flags_are_read() {
    let file = |mask: Value| {
        json!({
            "model": {"type": "Unigram", "unk_id": 0,
                      "vocab": [["<unk>", 0.0], ["\u{2581}a", -1.0], ["a", -2.0], ["<mask>", 0.0]]},
            "pre_tokenizer": {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always"},
            "decoder": {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always"},
            "added_tokens": [mask],
        })
    };
    let flagged = |lstrip: bool, normalized: bool| {
        json!({"id": 3, "content": "<mask>", "special": true, "lstrip": lstrip, "rstrip": false,
               "single_word": false, "normalized": normalized})
    };
    let plain = unigram(
        read_hf_tokenizer_json(file(flagged(false, false)).to_string().as_bytes()).unwrap(),
    );
    let lstrip =
        unigram(read_hf_tokenizer_json(file(flagged(true, false)).to_string().as_bytes()).unwrap());
    let text = "a  \t<mask> a";
    let mut expected = plain.encode("a").unwrap();
    expected.push(3);
    expected.extend(plain.encode(" a").unwrap());
    assert_eq!(lstrip.encode_with_special_tokens(text).unwrap(), expected);
    assert_ne!(plain.encode_with_special_tokens(text).unwrap(), expected);
    // HF's token string of the mask is the text it matched ("  \t<mask>"), which a
    // RobertaProcessing that trims offsets moves the start past: the span of "<mask>" alone
    // (HF: [(0, 0), (0, 1), (4, 10), (10, 12), (0, 0), (0, 0), (0, 7), (0, 0)]).
    let mut roberta = file(flagged(true, false));
    roberta["post_processor"] = json!({"type": "RobertaProcessing", "sep": ["<unk>", 0],
        "cls": ["<unk>", 0], "trim_offsets": true, "add_prefix_space": true});
    let roberta = unigram(read_hf_tokenizer_json(roberta.to_string().as_bytes()).unwrap());
    let encoding = roberta.encoding(text, Some(" <mask>"), true).unwrap();
    let mask = |i: usize| {
        encoding.offsets[encoding
            .ids
            .iter()
            .enumerate()
            .filter(|(_, &id)| id == 3)
            .nth(i)
            .unwrap()
            .0]
    };
    let at = text.find("<mask>").unwrap();
    assert_eq!(mask(0), (at, at + 6));
    assert_eq!(mask(1), (0, 7)); // (HF's rule: one leading space of a first token is its own)
    let untrimmed = lstrip.encoding(text, None, true).unwrap();
    assert_eq!(
        untrimmed.offsets[untrimmed.ids.iter().position(|&id| id == 3).unwrap()],
        (1, at + 6)
    );
    // `normalized` under Metaspace: found in the text before the Metaspace, which then runs
    // on each part left (HF's order), so each part gets its own ▁ ("a<mask>a" is ▁a <mask> ▁a).
    let normalized = file(flagged(false, true));
    let normalized = unigram(read_hf_tokenizer_json(normalized.to_string().as_bytes()).unwrap());
    assert_eq!(
        normalized.encode_with_special_tokens("a<mask>a").unwrap(),
        [1, 3, 1]
    );
    for text in ["<mask> a", "a <mask>", "a<mask><mask>a"] {
        assert_eq!(
            normalized.encode_with_special_tokens(text).unwrap(),
            plain.encode_with_special_tokens(text).unwrap(),
            "{text:?}"
        );
    }
    // After WhitespaceSplit then Metaspace (T5's older layout, one stage here) each word of
    // a part gets its ▁ and the white space goes (HF tokenizers 0.23.3: "a  <mask> a" is
    // ▁a <mask> ▁a at (0, 1), (3, 9), (10, 11); with Metaspace alone the spaces are ▁s, the
    // unknown token here, [1, 0, 0, 3, 1]).
    let mut t5 = file(flagged(false, true));
    t5["pre_tokenizer"] = json!({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always"}]});
    let t5 = unigram(read_hf_tokenizer_json(t5.to_string().as_bytes()).unwrap());
    let text = "a  <mask> a";
    assert_eq!(t5.encode_with_special_tokens(text).unwrap(), [1, 3, 1]);
    assert_eq!(
        normalized.encode_with_special_tokens(text).unwrap(),
        [1, 0, 0, 3, 1]
    );
    let encoding = t5.encoding(text, None, true).unwrap();
    assert_eq!(encoding.offsets, [(0, 1), (3, 9), (10, 11)]);
}

/// A SentencePiece BPE model without byte fallback in a tokenizer.json (the file NLLB's
/// tokenizer class writes): HF's BPE over each `▁`-led word's characters, after the Metaspace
/// stages of a converted model, gives HF's ids, decoded text, and `encode(text)` with NLLB's
/// template, offsets included.
#[test]
fn a_metaspace_bpe_tokenizer_json_gives_hfs_ids_text_and_offsets() {
    let stem = "test_sentencepiece_bpe.nllb";
    let path = test_file(&format!("unigram/{stem}.tokenizer.json.gz"));
    let vocab = load_hf_tokenizer_json(path).unwrap();
    assert!(matches!(
        vocab.pipeline.as_ref().map(|p| &p.model),
        Some(ModelSpec::CharacterBpe { fuse_unk: true, .. })
    ));
    let tok = Tokenizer::from_vocab(vocab).unwrap();
    let golden = golden(&format!("unigram-{stem}"));
    check_ids_and_text(&tok, &golden, false);
    let mut unknown = 0;
    for case in golden["cases"].as_array().unwrap() {
        let text = text(&case["text"]);
        let expected = &case["with_specials"];
        let got = tok.encoding(text, None, true).unwrap();
        assert_eq!(got.ids, ids(&expected["ids"]), "{text:?}");
        assert_eq!(got.offsets, offsets(&expected["offsets"]), "{text:?}");
        unknown += got.ids[1..].iter().filter(|&&id| id == 3).count(); // (<unk>; id 3 leads too)
    }
    assert!(unknown > 100, "{unknown} unknown tokens");
}
