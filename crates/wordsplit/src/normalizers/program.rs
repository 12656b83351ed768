//! [`LiteralProgram`]: HF's normalizers in sequence when every step is a `Replace` of a
//! literal string or a `Prepend` (the layouts transformers writes for SentencePiece-style
//! tokenizer.json files, and a Gemma 4 GGUF's), with HF's alignment of each character; any
//! other program is run by the caller's normalizer.

use super::AlignmentParts;
use crate::error::Error;
use crate::normalizers::Normalizer;
use crate::spec::NormalizerSpec;

/// `text` with every occurrence of `from` (non-empty) replaced by `to`, appended to `out`.
fn push_replaced(out: &mut String, text: &str, from: &str, to: &str) {
    let mut done = 0;
    for (at, _) in text.match_indices(from) {
        out.push_str(&text[done..at]);
        out.push_str(to);
        done = at + from.len();
    }
    out.push_str(&text[done..]);
}

/// The `(start, end)` character ranges of the occurrences of `from` (non-empty) in `text`:
/// every non-overlapping one, leftmost first (as [`push_replaced`] replaces them).
fn char_matches(text: &str, from: &str) -> Vec<(usize, usize)> {
    let width = from.chars().count();
    let (mut byte, mut char) = (0, 0);
    let mut out = Vec::new();
    for (at, _) in text.match_indices(from) {
        char += text[byte..at].chars().count();
        out.push((char, char + width));
        char += width;
        byte = at + from.len();
    }
    out
}

/// One step of a [`LiteralProgram`].
enum Step {
    /// HF's `Replace` of a non-empty literal string: every non-overlapping occurrence,
    /// leftmost first.
    Replace(String, String),
    /// HF's `Prepend`: before non-empty text.
    Prepend(String),
}

/// HF's normalizers in sequence, when they are `Replace` (of a literal string) and `Prepend`
/// steps only.
pub struct LiteralProgram {
    steps: Vec<Step>,
}

impl LiteralProgram {
    /// The program of `spec` (a [`NormalizerSpec::Sequence`], or one step alone), or None
    /// when a step is not a literal, non-empty `Replace` or a `Prepend`.
    pub fn new(spec: &NormalizerSpec) -> Option<Self> {
        let steps = match spec {
            NormalizerSpec::Sequence(steps) => steps.as_slice(),
            step => std::slice::from_ref(step),
        };
        let steps = steps
            .iter()
            .map(|step| match step {
                NormalizerSpec::Prepend(prefix) => Some(Step::Prepend(prefix.clone())),
                NormalizerSpec::Replace {
                    pattern,
                    content,
                    regex: false,
                } if !pattern.is_empty() => Some(Step::Replace(pattern.clone(), content.clone())),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { steps })
    }

    pub(super) fn run(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for step in &self.steps {
            if text.is_empty() {
                break; // (neither step changes empty text)
            }
            match step {
                Step::Replace(from, to) => {
                    if text.contains(from.as_str()) {
                        let mut out = String::with_capacity(text.len() + text.len() / 2);
                        push_replaced(&mut out, &text, from, to);
                        text = out;
                    }
                }
                Step::Prepend(prefix) => text.insert_str(0, prefix),
            }
        }
        text
    }
}

impl Normalizer for LiteralProgram {
    fn name(&self) -> &str {
        "Sequence"
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        Ok(self.run(text))
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    /// HF's alignment carried through the steps, as HF's `NormalizedString` carries it (the
    /// Python package's `program_alignment_parts` gives the same): `Prepend` aligns its text to
    /// the first character (HF's `NormalizedString::prepend`), `Replace` each replacement's
    /// characters to the last character of the text it replaces, the rest to itself.
    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        let length = text.chars().count();
        // The alignment is `head` followed by the last `tail` characters of `text`, each itself.
        let mut head: Vec<(usize, usize, bool)> = Vec::new();
        let mut tail = length;
        let mut current = text.to_owned();
        for step in &self.steps {
            if current.is_empty() {
                break; // (neither step changes empty text)
            }
            match step {
                Step::Prepend(prefix) => {
                    if prefix.is_empty() {
                        continue;
                    }
                    let first = head.first().copied();
                    let (start, end, _) = first.unwrap_or((length - tail, length - tail + 1, true));
                    let added = std::iter::repeat_n((start, end, false), prefix.chars().count());
                    head.splice(0..0, added);
                    current.insert_str(0, prefix);
                }
                Step::Replace(from, to) => {
                    let matches = char_matches(&current, from);
                    if matches.is_empty() {
                        continue;
                    }
                    let mut base = std::mem::take(&mut head);
                    base.extend((length - tail..length).map(|i| (i, i + 1, true)));
                    tail = 0;
                    let width = to.chars().count();
                    let mut done = 0;
                    for (start, end) in matches {
                        head.extend_from_slice(&base[done..start]);
                        let (s, e, _) = base[end - 1];
                        head.extend(std::iter::repeat_n((s, e, false), width));
                        done = end;
                    }
                    head.extend_from_slice(&base[done..]);
                    let mut out = String::with_capacity(current.len() + current.len() / 2);
                    push_replaced(&mut out, &current, from, to);
                    current = out;
                }
            }
        }
        let identity = head
            .iter()
            .enumerate()
            .all(|(i, &(start, end, same))| (start, end, same) == (i, i + 1, true));
        if (tail == length && head.is_empty()) || (current == text && identity) {
            return Ok(None);
        }
        Ok(Some(AlignmentParts {
            normalized: current,
            head,
            tail,
        }))
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_programs_and_their_alignment() {
        let replace = |from: &str, to: &str| NormalizerSpec::Replace {
            pattern: from.into(),
            content: to.into(),
            regex: false,
        };
        let legacy =
            NormalizerSpec::Sequence(vec![NormalizerSpec::Prepend("▁".into()), replace(" ", "▁")]);
        let program: Box<dyn Normalizer> = Box::new(LiteralProgram::new(&legacy).unwrap());
        assert_eq!(program.normalize(" a  b").unwrap(), "▁▁a▁▁b");
        assert_eq!(program.normalize("").unwrap(), "");
        let parts = |program: &dyn Normalizer, text: &str| {
            program
                .alignment_parts(text)
                .unwrap()
                .map(|p| (p.normalized, p.head, p.tail))
        };
        // Prepend aligns to the first character; each ▁ is the space it replaces.
        let (n, f, t) = (false, false, true);
        assert_eq!(
            parts(&*program, " a"),
            Some(("▁▁a".into(), vec![(0, 1, n), (0, 1, f), (1, 2, t)], 0))
        );
        assert_eq!(parts(&*program, ""), None);
        let longer = NormalizerSpec::Sequence(vec![replace("é", "xyz"), replace("b", "")]);
        let longer: Box<dyn Normalizer> = Box::new(LiteralProgram::new(&longer).unwrap());
        assert_eq!(
            parts(&*longer, "aébc"),
            Some((
                "axyzc".into(),
                vec![(0, 1, t), (1, 2, f), (1, 2, f), (1, 2, f), (3, 4, t)],
                0
            ))
        );
        assert_eq!(parts(&*longer, "ac"), None);
        assert!(
            LiteralProgram::new(&NormalizerSpec::Sequence(vec![NormalizerSpec::Nfkc])).is_none()
        );
        assert!(LiteralProgram::new(&replace("", "x")).is_none());
        let regex = NormalizerSpec::Replace {
            pattern: "a".into(),
            content: "b".into(),
            regex: true,
        };
        assert!(LiteralProgram::new(&regex).is_none());
    }
}
