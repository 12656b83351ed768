//! Post-processing: what HF tokenizers' `encode(text, pair, add_special_tokens)` adds around the
//! ids of a text or a pair of texts, run from a [`PostProcessorSpec`] as HF tokenizers 0.23
//! runs its post-processors (the Python package's `wordsplit.postprocess` is the reference the
//! tests hold it to, with HF's goldens): the special tokens of a template (BERT's `[CLS]` and
//! `[SEP]`), the type ids, the mask of the added tokens, and the ByteLevel and RoBERTa
//! processors' trimming of spaces off the offsets. Truncation and padding are not run.
//!
//! ```
//! use wordsplit::post_process::{post_process, Encoding};
//! use wordsplit::spec::PostProcessorSpec;
//!
//! let bert = PostProcessorSpec::BertProcessing { sep: "[SEP]".into(), sep_id: 102, cls: "[CLS]".into(), cls_id: 101 };
//! let a = Encoding::of_text(vec![7592], vec![(0, 5)], 0);
//! let b = Encoding::of_text(vec![2088], vec![(0, 5)], 1);
//! let both = post_process(&bert, a, Some(b), true, |_| String::new());
//! assert_eq!(both.ids, [101, 7592, 102, 2088, 102]);
//! assert_eq!(both.type_ids, [0, 0, 0, 1, 1]);
//! assert_eq!(both.offsets, [(0, 0), (0, 5), (0, 0), (0, 5), (0, 0)]);
//! ```

use crate::spec::{PostProcessorSpec, TemplateItem, TemplateText};

/// The lists of an encoding, token by token, as HF's `Encoding` has them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoding {
    pub ids: Vec<u32>,
    /// The type (segment) id of each token: which text of a pair it belongs to, as the
    /// post-processor numbers them.
    pub type_ids: Vec<u32>,
    /// Each token's `(start, end)` in characters (code points) of its own text; `(0, 0)` for a
    /// special token the post-processor added.
    pub offsets: Vec<(usize, usize)>,
    /// 1 for a special token the post-processor added, else 0.
    pub special_tokens_mask: Vec<u8>,
}

impl Encoding {
    /// The encoding of one text before post-processing: every token of type `type_id`.
    pub fn of_text(ids: Vec<u32>, offsets: Vec<(usize, usize)>, type_id: u32) -> Self {
        let n = ids.len();
        Self {
            ids,
            type_ids: vec![type_id; n],
            offsets,
            special_tokens_mask: vec![0; n],
        }
    }

    /// Special tokens a processor adds: offsets `(0, 0)`, mask 1.
    fn special(ids: &[u64], type_id: u64) -> Self {
        let n = ids.len();
        Self {
            ids: ids.iter().map(|&id| id as u32).collect(),
            type_ids: vec![type_id as u32; n],
            offsets: vec![(0, 0); n],
            special_tokens_mask: vec![1; n],
        }
    }

    fn append(&mut self, other: Encoding) {
        self.ids.extend(other.ids);
        self.type_ids.extend(other.type_ids);
        self.offsets.extend(other.offsets);
        self.special_tokens_mask.extend(other.special_tokens_mask);
    }

    fn set_type(&mut self, type_id: u32) {
        self.type_ids.iter_mut().for_each(|t| *t = type_id);
    }

    /// `self` between `head` (if any) and `tail`, as BERT's and RoBERTa's processors build it.
    fn wrapped(self, head: Option<(u64, u64)>, tail: (u64, u64)) -> Encoding {
        let mut out = Encoding::default();
        if let Some((id, type_id)) = head {
            out.append(Encoding::special(&[id], type_id));
        }
        out.append(self);
        out.append(Encoding::special(&[tail.0], tail.1));
        out
    }
}

/// The encoding of `a` (and `pair`) after the post-processor `spec`, as HF's `post_process`:
/// each text's tokens numbered as its sequence (type 0, then 1), the processor run (its special
/// tokens added only with `add_special_tokens`), the results joined. `token` gives an id's
/// token text, for the processors that trim offsets.
pub fn post_process(
    spec: &PostProcessorSpec,
    mut a: Encoding,
    pair: Option<Encoding>,
    add_special_tokens: bool,
    token: impl Fn(u32) -> String,
) -> Encoding {
    a.set_type(0);
    let mut encodings = vec![a];
    if let Some(mut b) = pair {
        b.set_type(1);
        encodings.push(b);
    }
    let mut out = Encoding::default();
    for encoding in process(spec, encodings, add_special_tokens, &token) {
        out.append(encoding);
    }
    out
}

fn process(
    spec: &PostProcessorSpec,
    mut encodings: Vec<Encoding>,
    add: bool,
    token: &dyn Fn(u32) -> String,
) -> Vec<Encoding> {
    match spec {
        PostProcessorSpec::None => encodings,
        PostProcessorSpec::ByteLevel {
            trim_offsets,
            add_prefix_space,
        } => {
            if *trim_offsets {
                encodings
                    .iter_mut()
                    .for_each(|e| trim(e, *add_prefix_space, token));
            }
            encodings
        }
        PostProcessorSpec::TemplateProcessing {
            single,
            pair,
            special_tokens,
        } => {
            let template = if encodings.len() == 2 { pair } else { single };
            let mut out = Vec::with_capacity(template.len());
            for item in template {
                match item {
                    TemplateItem::Sequence { id, type_id } => {
                        let index = usize::from(*id == TemplateText::B);
                        let mut encoding = encodings[index].clone();
                        encoding.set_type(*type_id as u32);
                        out.push(encoding);
                    }
                    TemplateItem::SpecialToken { id, type_id } if add => {
                        let special = special_tokens.iter().find(|s| s.id == *id);
                        let ids = special.map_or(&[][..], |s| &s.ids[..]);
                        out.push(Encoding::special(ids, *type_id));
                    }
                    TemplateItem::SpecialToken { .. } => {}
                }
            }
            out
        }
        PostProcessorSpec::BertProcessing { sep_id, cls_id, .. } => {
            if !add {
                return encodings;
            }
            let mut out = Vec::with_capacity(encodings.len());
            for (i, encoding) in encodings.into_iter().enumerate() {
                out.push(if i == 0 {
                    encoding.wrapped(Some((*cls_id, 0)), (*sep_id, 0))
                } else {
                    encoding.wrapped(None, (*sep_id, 1))
                });
            }
            out
        }
        PostProcessorSpec::RobertaProcessing {
            sep_id,
            cls_id,
            trim_offsets,
            add_prefix_space,
            ..
        } => {
            for encoding in &mut encodings {
                if *trim_offsets {
                    trim(encoding, *add_prefix_space, token);
                }
                encoding.set_type(0);
            }
            if !add {
                return encodings;
            }
            let mut out = Vec::with_capacity(encodings.len());
            for (i, encoding) in encodings.into_iter().enumerate() {
                let head = if i == 0 { *cls_id } else { *sep_id };
                out.push(encoding.wrapped(Some((head, 0)), (*sep_id, 0)));
            }
            out
        }
        PostProcessorSpec::Sequence(processors) => {
            for processor in processors {
                encodings = process(processor, encodings, add, token);
            }
            encodings
        }
    }
}

/// The `add_prefix_space` of each offset-trimming pass of `spec`, in order (ByteLevel's and
/// RobertaProcessing's with `trim_offsets`, inside a `Sequence` too).
pub(crate) fn trim_passes(spec: &PostProcessorSpec) -> Vec<bool> {
    match spec {
        PostProcessorSpec::ByteLevel {
            trim_offsets: true,
            add_prefix_space,
        }
        | PostProcessorSpec::RobertaProcessing {
            trim_offsets: true,
            add_prefix_space,
            ..
        } => vec![*add_prefix_space],
        PostProcessorSpec::Sequence(processors) => {
            processors.iter().flat_map(trim_passes).collect()
        }
        _ => Vec::new(),
    }
}

/// HF's trim of the offsets of the tokens at `positions` (added tokens with `lstrip` or
/// `rstrip`), whose token string is the text they matched, `text`'s characters `start..end`
/// with the white space they took: the trim [`post_process`] gives the others by their id.
pub(crate) fn trim_matched(
    encoding: &mut Encoding,
    positions: &[usize],
    chars: &[char],
    add_prefix_space: bool,
) {
    for &i in positions {
        let (start, end) = encoding.offsets[i];
        let matched = chars.get(start..end).unwrap_or_default();
        let mut leading = matched.iter().take_while(|c| c.is_whitespace()).count();
        let trailing = matched
            .iter()
            .rev()
            .take_while(|c| c.is_whitespace())
            .count();
        let (mut start, mut end) = (start, end);
        if leading > 0 {
            if (i == 0 || start == 0) && add_prefix_space && leading == 1 {
                leading = 0; // (HF's rule for the space add_prefix_space added)
            }
            start = (start + leading).min(end);
        }
        if trailing > 0 && end >= trailing {
            end = (end - trailing).max(start);
        }
        encoding.offsets[i] = (start, end);
    }
}

/// HF's ByteLevel `process_offsets`: each offset moved past the token's leading spaces and
/// before its trailing ones (in characters; a space in a token's text is `Ġ` or white space).
fn trim(encoding: &mut Encoding, add_prefix_space: bool, token: &dyn Fn(u32) -> String) {
    let is_space = |c: &char| *c == '\u{120}' || c.is_whitespace();
    for i in 0..encoding.ids.len() {
        let text = token(encoding.ids[i]);
        let mut leading = text.chars().take_while(is_space).count();
        let trailing = text.chars().rev().take_while(is_space).count();
        if leading == 0 && trailing == 0 {
            continue;
        }
        let (mut start, mut end) = encoding.offsets[i];
        if leading > 0 {
            let is_first = i == 0 || start == 0;
            if is_first && add_prefix_space && leading == 1 {
                leading = 0; // the space add_prefix_space added is the token's own
            }
            start = (start + leading).min(end);
        }
        if trailing > 0 && end >= trailing {
            end = (end - trailing).max(start);
        }
        encoding.offsets[i] = (start, end);
    }
}

#[cfg(test)]
#[path = "post_process_tests.rs"]
mod tests;
