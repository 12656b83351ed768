use super::*;
use crate::spec::TemplateSpecial;

fn text(ids: &[u32], type_id: u32) -> Encoding {
    let offsets = (0..ids.len()).map(|i| (i, i + 1)).collect();
    Encoding::of_text(ids.to_vec(), offsets, type_id)
}

fn no_text(_: u32) -> String {
    String::new()
}

fn template() -> PostProcessorSpec {
    let special = |name: &str, ids: Vec<u64>| TemplateSpecial {
        id: name.into(),
        tokens: ids.iter().map(|_| name.to_owned()).collect(),
        ids,
    };
    let token = |id: &str, type_id| TemplateItem::SpecialToken {
        id: id.into(),
        type_id,
    };
    let text = |id, type_id| TemplateItem::Sequence { id, type_id };
    PostProcessorSpec::TemplateProcessing {
        single: vec![token("<s>", 0), text(TemplateText::A, 0)],
        pair: vec![
            text(TemplateText::A, 0),
            token("<sep>", 0),
            text(TemplateText::B, 1),
            text(TemplateText::A, 2),
        ],
        special_tokens: vec![special("<s>", vec![1]), special("<sep>", vec![2, 3])],
    }
}

#[test]
fn a_template_adds_its_tokens_and_types_only_when_asked() {
    let one = post_process(&template(), text(&[5, 6], 0), None, true, no_text);
    assert_eq!(one.ids, [1, 5, 6]);
    assert_eq!(one.offsets, [(0, 0), (0, 1), (1, 2)]);
    assert_eq!(one.special_tokens_mask, [1, 0, 0]);
    let bare = post_process(&template(), text(&[5, 6], 0), None, false, no_text);
    assert_eq!((bare.ids, bare.type_ids), (vec![5, 6], vec![0, 0]));
    // A pair: a template may use a text twice, each time with its own type id.
    let two = post_process(
        &template(),
        text(&[5], 0),
        Some(text(&[7], 0)),
        true,
        no_text,
    );
    assert_eq!(two.ids, [5, 2, 3, 7, 5]);
    assert_eq!(two.type_ids, [0, 0, 0, 1, 2]);
    assert_eq!(two.special_tokens_mask, [0, 1, 1, 0, 0]);
}

#[test]
fn without_a_processor_a_pair_is_typed_zero_then_one() {
    let none = PostProcessorSpec::None;
    let two = post_process(&none, text(&[5], 0), Some(text(&[7, 8], 0)), true, no_text);
    assert_eq!((two.ids, two.type_ids), (vec![5, 7, 8], vec![0, 1, 1]));
    let bert = PostProcessorSpec::BertProcessing {
        sep: "[SEP]".into(),
        sep_id: 102,
        cls: "[CLS]".into(),
        cls_id: 101,
    };
    let bare = post_process(&bert, text(&[5], 0), Some(text(&[7], 0)), false, no_text);
    assert_eq!((bare.ids, bare.type_ids), (vec![5, 7], vec![0, 1]));
}

#[test]
fn roberta_types_everything_zero_and_trims_spaces_off_offsets() {
    let roberta = PostProcessorSpec::RobertaProcessing {
        sep: "</s>".into(),
        sep_id: 2,
        cls: "<s>".into(),
        cls_id: 0,
        trim_offsets: true,
        add_prefix_space: false,
    };
    // Token 9 is "Ġhi" (a leading byte-level space), token 8 "x " (a trailing space).
    let token = |id: u32| match id {
        9 => "\u{120}hi".to_owned(),
        8 => "x ".to_owned(),
        _ => "y".to_owned(),
    };
    let a = Encoding::of_text(vec![9, 8], vec![(0, 3), (3, 5)], 0);
    let b = Encoding::of_text(vec![7], vec![(0, 1)], 1);
    let two = post_process(&roberta, a, Some(b), true, token);
    assert_eq!(two.ids, [0, 9, 8, 2, 2, 7, 2]);
    assert_eq!(two.type_ids, [0; 7]);
    assert_eq!(
        two.offsets,
        [(0, 0), (1, 3), (3, 4), (0, 0), (0, 0), (0, 1), (0, 0)]
    );
    // A Sequence runs each in turn: ByteLevel's trim, then the template.
    let sequence = PostProcessorSpec::Sequence(vec![
        PostProcessorSpec::ByteLevel {
            trim_offsets: true,
            add_prefix_space: true,
        },
        template(),
    ]);
    let a = Encoding::of_text(vec![9], vec![(0, 3)], 0);
    let one = post_process(&sequence, a, None, true, token);
    assert_eq!((one.ids, one.offsets), (vec![1, 9], vec![(0, 0), (0, 3)]));
}
