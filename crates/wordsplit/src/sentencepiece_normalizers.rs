//! The normalizers of SentencePiece vocabularies, native twins of
//! `wordsplit/sentencepiece_normalizers.py` under the same registry names:
//!
//! * `sentencepiece-normalizer:` + JSON flags: SentencePiece's `Normalizer::Normalize` for an
//!   `identity` character map (the dummy prefix, whitespace escaping to `▁`, extra whitespace
//!   removal);
//! * `hf-metaspace:` + JSON: HF's `Metaspace` pre-tokenizer (`split: false`) after the file's
//!   normalizer, with its prepend schemes (`first` puts no `▁` before a stretch that follows
//!   an added token: [`crate::Normalizer::normalize_later`]);
//! * the `hf-normalizer:` programs made only of `Replace` of a literal string and `Prepend`
//!   (the layouts transformers writes for SentencePiece-style tokenizer.json files, and a
//!   Gemma 4 GGUF's); any other program stays with the Python normalizer.
//!
//! [`sentencepiece_normalizer`] makes the one a name describes.
//!
//! ```
//! use wordsplit::sentencepiece_normalizers::sentencepiece_normalizer;
//! let name = r#"sentencepiece-normalizer:{"add_dummy_prefix":true,"escape_whitespaces":true,"remove_extra_whitespaces":false,"treat_whitespace_as_suffix":false}"#;
//! let normalizer = sentencepiece_normalizer(name).unwrap().unwrap();
//! assert_eq!(normalizer.normalize("Hello  world").unwrap(), "▁Hello▁▁world");
//! ```

use serde_json::Value;

use crate::error::Error;
use crate::normalizers::{AlignmentParts, Normalizer};

/// `wordsplit.sentencepiece.NORMALIZER_PREFIX`.
pub const NORMALIZER_PREFIX: &str = "sentencepiece-normalizer:";
/// `wordsplit.sentencepiece.METASPACE_PREFIX`.
pub const METASPACE_PREFIX: &str = "hf-metaspace:";
/// `wordsplit.normalizer_programs.NORMALIZER_PREFIX`.
pub const PROGRAM_PREFIX: &str = "hf-normalizer:";

/// The native normalizer registered as `name`: `Ok(None)` when the name is not one of the
/// families above, or a program with a step the core does not run.
pub fn sentencepiece_normalizer(name: &str) -> Result<Option<Box<dyn Normalizer>>, Error> {
    Ok(if let Some(json) = name.strip_prefix(NORMALIZER_PREFIX) {
        Some(Box::new(SentencePieceNormalizer::parse(name, json)?))
    } else if let Some(json) = name.strip_prefix(METASPACE_PREFIX) {
        MetaspaceNormalizer::parse(name, json)?.map(|m| Box::new(m) as Box<dyn Normalizer>)
    } else if name.starts_with(PROGRAM_PREFIX) {
        LiteralProgram::parse(name)?.map(|p| Box::new(p) as Box<dyn Normalizer>)
    } else {
        None
    })
}

fn malformed(kind: &str, name: &str) -> Error {
    let shown: String = name.chars().take(80).collect();
    Error::VocabFormat(format!("malformed {kind} normalizer {shown:?}"))
}

/// SentencePiece's normalizer for the identity character map: only spaces (U+0020) change.
///
/// In order, as `normalizer.cc` does it: with `remove_extra_whitespaces`, leading spaces are
/// dropped (text of spaces only is empty) and a space after a space is dropped; each space
/// becomes `▁` with `escape_whitespaces`; `add_dummy_prefix` puts one `▁` before non-empty
/// text (after it, with `treat_whitespace_as_suffix`); with `remove_extra_whitespaces`
/// trailing `▁` (typed ones too) are dropped before that.
pub struct SentencePieceNormalizer {
    name: String,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    suffix: bool,
    /// `▁`, or a space when whitespace is not escaped.
    space: &'static str,
}

impl SentencePieceNormalizer {
    fn parse(name: &str, json: &str) -> Result<Self, Error> {
        let bad = || malformed("SentencePiece", name);
        let flags: Value = serde_json::from_str(json).map_err(|_| bad())?;
        let flag = |key: &str| flags.get(key).and_then(Value::as_bool).ok_or_else(bad);
        Ok(Self {
            name: name.to_owned(),
            add_dummy_prefix: flag("add_dummy_prefix")?,
            remove_extra_whitespaces: flag("remove_extra_whitespaces")?,
            suffix: flag("treat_whitespace_as_suffix")?,
            space: if flag("escape_whitespaces")? {
                "\u{2581}"
            } else {
                " "
            },
        })
    }
}

impl Normalizer for SentencePieceNormalizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        let extra = self.remove_extra_whitespaces;
        let space = self.space;
        let text = if extra {
            text.trim_start_matches(' ')
        } else {
            text
        };
        if text.is_empty() {
            return Ok(String::new());
        }
        let mut out = String::with_capacity((text.len() + 2) * space.len() + 4);
        if self.add_dummy_prefix && !self.suffix {
            out.push_str(space);
        }
        escape_spaces(&mut out, text, space, extra);
        if extra {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.add_dummy_prefix && self.suffix {
            out.push_str(space);
        }
        Ok(out)
    }

    fn is_native(&self) -> bool {
        true
    }
}

/// `text` appended to `out` with each space (U+0020) replaced by `space` (one to four
/// bytes), and with `collapse` a space after a space (or at the start) dropped: one store
/// and one add per byte, with no branch on the byte (a branch per space, mispredicted at
/// most words, and a copy call per word took an eighth of a first pass over prose with a
/// Gemma-class vocabulary).
fn escape_spaces(out: &mut String, text: &str, space: &str, collapse: bool) {
    let width = space.len();
    debug_assert!((1..=4).contains(&width));
    let mut pattern = [0u8; 4];
    pattern[..width].copy_from_slice(space.as_bytes());
    let pattern = u32::from_le_bytes(pattern);
    // SAFETY: the bytes written are `text`'s and whole copies of `space`, both UTF-8, with
    // each space (a one-byte character) replaced whole; the vector's length is set to what
    // was written, below the room reserved for the widest output and a 4-byte store past it.
    unsafe {
        let bytes = out.as_mut_vec();
        bytes.reserve(text.len() * width + 4);
        let base = bytes.as_mut_ptr();
        let mut len = bytes.len();
        let mut previous_space = collapse;
        for &b in text.as_bytes() {
            let is_space = b == b' ';
            let word = if is_space { pattern } else { u32::from(b) };
            base.add(len).cast::<u32>().write_unaligned(word);
            len += if !is_space {
                1
            } else if previous_space {
                0
            } else {
                width
            };
            previous_space = is_space & collapse;
        }
        bytes.set_len(len);
    }
}

/// HF's `Metaspace` pre-tokenizer with `split: false`, after the file's normalizer: every
/// space becomes the replacement, which is put before a stretch that does not start with it
/// (`always`; for `first` only before the stretch that starts the text; never for `never`).
pub struct MetaspaceNormalizer {
    name: String,
    inner: Option<LiteralProgram>,
    replacement: char,
    /// 0: never, 1: first, 2: always.
    scheme: u8,
}

impl MetaspaceNormalizer {
    /// `Ok(None)` when its inner normalizer is not native.
    fn parse(name: &str, json: &str) -> Result<Option<Self>, Error> {
        let bad = || malformed("Metaspace", name);
        let fields: Value = serde_json::from_str(json).map_err(|_| bad())?;
        let text = |key: &str| fields.get(key).and_then(Value::as_str).ok_or_else(bad);
        let scheme = match text("prepend_scheme")? {
            "never" => 0,
            "first" => 1,
            "always" => 2,
            _ => return Err(bad()),
        };
        let mut chars = text("replacement")?.chars();
        let (Some(replacement), None) = (chars.next(), chars.next()) else {
            return Err(bad());
        };
        let inner = match text("normalizer")? {
            "none" => None,
            program if program.starts_with(PROGRAM_PREFIX) => {
                match LiteralProgram::parse(program)? {
                    Some(program) => Some(program),
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(Self {
            name: name.to_owned(),
            inner,
            replacement,
            scheme,
        }))
    }

    fn run(&self, text: &str, prepends: bool) -> String {
        let inner;
        let text = match &self.inner {
            Some(program) => {
                inner = program.run(text);
                inner.as_str()
            }
            None => text,
        };
        let mut buffer = [0u8; 4];
        let replacement: &str = self.replacement.encode_utf8(&mut buffer);
        let mut out = String::with_capacity((text.len() + 1) * replacement.len() + 4);
        // (a leading space becomes the replacement, so it counts as one)
        let starts_with_it = text.starts_with(' ') || text.starts_with(self.replacement);
        if prepends && !text.is_empty() && !starts_with_it {
            out.push_str(replacement);
        }
        escape_spaces(&mut out, text, replacement, false);
        out
    }
}

impl Normalizer for MetaspaceNormalizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        Ok(self.run(text, self.scheme != 0))
    }

    fn normalize_later(&self, text: &str) -> Result<String, Error> {
        Ok(self.run(text, self.scheme == 2))
    }

    fn is_native(&self) -> bool {
        true
    }
}

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

/// An `hf-normalizer:` program of `Replace` (literal string) and `Prepend` steps only.
pub struct LiteralProgram {
    name: String,
    steps: Vec<Step>,
}

impl LiteralProgram {
    /// `Ok(None)` when a step is of another kind (the Python program runs it).
    fn parse(name: &str) -> Result<Option<Self>, Error> {
        let bad = || malformed("program", name);
        let json = name.strip_prefix(PROGRAM_PREFIX).ok_or_else(bad)?;
        let steps: Value = serde_json::from_str(json).map_err(|_| bad())?;
        let mut out = Vec::new();
        for step in steps.as_array().ok_or_else(bad)? {
            let text = |key: &str| step.get(key).and_then(Value::as_str);
            match text("type") {
                Some("Prepend") => out.push(Step::Prepend(text("prepend").ok_or_else(bad)?.into())),
                Some("Replace") => {
                    let pattern = step.get("pattern").and_then(|p| p.get("String"));
                    match (pattern.and_then(Value::as_str), text("content")) {
                        (Some(from), Some(to)) if !from.is_empty() => {
                            out.push(Step::Replace(from.into(), to.into()))
                        }
                        _ => return Ok(None),
                    }
                }
                _ => return Ok(None),
            }
        }
        Ok(Some(Self {
            name: name.to_owned(),
            steps: out,
        }))
    }

    fn run(&self, text: &str) -> String {
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
        &self.name
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        Ok(self.run(text))
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    /// HF's alignment carried through the steps, as the Python reference
    /// (`wordsplit.offsets.program_alignment_parts`) carries it: `Prepend` aligns its text to
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

    fn spm(dummy: bool, extra: bool, escape: bool, suffix: bool) -> Box<dyn Normalizer> {
        let name = format!(
            "{NORMALIZER_PREFIX}{}",
            serde_json::json!({"add_dummy_prefix": dummy, "escape_whitespaces": escape,
                               "remove_extra_whitespaces": extra, "treat_whitespace_as_suffix": suffix})
        );
        sentencepiece_normalizer(&name).unwrap().unwrap()
    }

    #[test]
    fn sentencepiece_flags() {
        let n = |n: &dyn Normalizer, t: &str| n.normalize(t).unwrap();
        assert_eq!(n(&*spm(true, true, true, false), "  a   b  "), "▁a▁b");
        assert_eq!(n(&*spm(true, false, true, false), " a  b "), "▁▁a▁▁b▁");
        assert_eq!(n(&*spm(false, true, true, false), "   "), "");
        assert_eq!(n(&*spm(true, true, true, false), "  ▁▁"), "");
        assert_eq!(n(&*spm(true, true, false, true), " a b "), "a b ");
        assert_eq!(n(&*spm(true, false, true, false), ""), "");
    }

    #[test]
    fn spaces_escape_as_a_character_by_character_reading_does() {
        // SentencePiece's reading: each space escaped, with `extra` one of a run and none
        // at the start (after the trim) or, once escaped, at the end.
        let reference = |text: &str, dummy: bool, extra: bool, escape: bool, suffix: bool| {
            let space = if escape { "▁" } else { " " };
            let text = if extra {
                text.trim_start_matches(' ')
            } else {
                text
            };
            if text.is_empty() {
                return String::new();
            }
            let mut out = String::new();
            if dummy && !suffix {
                out.push_str(space);
            }
            let mut previous = extra;
            for c in text.chars() {
                if c != ' ' {
                    out.push(c);
                    previous = false;
                } else if !previous {
                    out.push_str(space);
                    previous = extra;
                }
            }
            while extra && out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
            if dummy && suffix {
                out.push_str(space);
            }
            out
        };
        let alphabet = [" ", "  ", "a", "bc", "é", "—", "▁", "😀", "\n"];
        for text in crate::testing::texts(7, &alphabet, 400, 24) {
            for flags in 0..16 {
                let [dummy, extra, escape, suffix] = [1, 2, 4, 8].map(|bit| flags & bit != 0);
                let normalizer = spm(dummy, extra, escape, suffix);
                assert_eq!(
                    normalizer.normalize(&text).unwrap(),
                    reference(&text, dummy, extra, escape, suffix),
                    "{text:?} with flags {flags:04b}"
                );
            }
        }
    }

    #[test]
    fn metaspace_schemes_and_programs() {
        let name = |scheme: &str, inner: &str| {
            format!(
                "{METASPACE_PREFIX}{}",
                serde_json::json!({"normalizer": inner, "prepend_scheme": scheme, "replacement": "▁"})
            )
        };
        let first = sentencepiece_normalizer(&name("first", "none"))
            .unwrap()
            .unwrap();
        assert_eq!(first.normalize("Hello world").unwrap(), "▁Hello▁world");
        assert_eq!(first.normalize_later("Hello world").unwrap(), "Hello▁world");
        assert_eq!(first.normalize("▁x").unwrap(), "▁x");
        let always = sentencepiece_normalizer(&name("always", "none"))
            .unwrap()
            .unwrap();
        assert_eq!(always.normalize_later(" x").unwrap(), "▁x");
        let never = sentencepiece_normalizer(&name("never", "none"))
            .unwrap()
            .unwrap();
        assert_eq!(never.normalize("a b").unwrap(), "a▁b");
        let legacy = r#"hf-normalizer:[{"prepend":"▁","type":"Prepend"},{"content":"▁","pattern":{"String":" "},"type":"Replace"}]"#;
        let program = sentencepiece_normalizer(legacy).unwrap().unwrap();
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
        let longer = r#"hf-normalizer:[{"content":"xyz","pattern":{"String":"é"},"type":"Replace"},{"content":"","pattern":{"String":"b"},"type":"Replace"}]"#;
        let longer = sentencepiece_normalizer(longer).unwrap().unwrap();
        assert_eq!(
            parts(&*longer, "aébc"),
            Some((
                "axyzc".into(),
                vec![(0, 1, t), (1, 2, f), (1, 2, f), (1, 2, f), (3, 4, t)],
                0
            ))
        );
        assert_eq!(parts(&*longer, "ac"), None);
        let other = r#"hf-normalizer:[{"type":"NFKC"}]"#;
        assert!(sentencepiece_normalizer(other).unwrap().is_none());
        assert!(sentencepiece_normalizer(&name("first", other))
            .unwrap()
            .is_none());
        assert!(sentencepiece_normalizer("nfc").unwrap().is_none());
    }
}
