//! tiktoken rank files (`.tiktoken`, Meta's Llama 3/4 `tokenizer.model`): one
//! `base64(token) rank` line per token, rank = id.
//!
//! Lines are read as tiktoken's `load_tiktoken_bpe` (Python code) reads them: split
//! on `\n`, `\r\n` and `\r`, blank lines skipped, each line split on ASCII whitespace into
//! exactly two fields, the token decoded with Python's non-strict base64 (characters outside
//! the alphabet skipped, so `=` is the empty token), the rank read as Python's `int()` reads
//! it. Where tiktoken accepts a file that cannot be a vocabulary (a token listed twice, an id
//! used twice, a negative rank or one far beyond the number of lines) this refuses it.
//!
//! A rank file carries no pattern and no special tokens: [`TiktokenFacts`] supplies them, and
//! the files recognized by their sha256 (OpenAI's, Qwen's, whisper's, Llama 3/4's) get their
//! official facts for whatever the caller leaves out.
//!
//! ```
//! use wordsplit::formats::read_tiktoken_ranks;
//! let ranks = read_tiktoken_ranks(b"YQ== 0\n\nYg== 1\n= 2\n").unwrap();
//! assert_eq!(ranks, vec![(b"a".to_vec(), 0), (b"b".to_vec(), 1), (Vec::new(), 2)]);
//! ```

use std::collections::HashMap;
use std::path::Path;

use super::named::{known_rank_file, Facts};
use super::{file_stem, id_limit, parent_name, read_file, FileKind, FormatError};
use super::{TextMap, VocabData};
use crate::literal::Literal;
use crate::normalizers::NormalizeStage;

/// The facts a rank file does not carry. `None` fields of a recognized file (by sha256) take
/// its official facts; an unrecognized file needs at least `pattern`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TiktokenFacts {
    /// The vocabulary's name (default: the recognized tokenizer's, else `"tiktoken"`).
    pub name: Option<String>,
    /// The split regex (tiktoken's `pat_str`).
    pub pattern: Option<String>,
    /// Special tokens, text → id (a text listed twice keeps its last id, as a Python dict).
    pub special_tokens: Option<Vec<(String, u32)>>,
    /// Non-special added tokens, always matched in text (as HF does).
    pub added_tokens: Option<Vec<(String, u32)>>,
    /// The declared vocabulary size (tiktoken's `explicit_n_vocab`); a recognized file's
    /// official n_vocab goes with its official special tokens only.
    pub n_vocab: Option<u32>,
    /// The normalizer (default none).
    pub normalizer: Option<NormalizeStage>,
    /// The text of the end-of-sequence token (ignored when no literal has it).
    pub eos_token: Option<String>,
}

/// The deepest group nesting a caller's pattern may have (the regex compiler recurses per level).
const MAX_GROUP_DEPTH: usize = 100;

/// Parse a rank file into `(token bytes, rank)` in file order.
///
/// Errors: a line that is not `base64 rank` ([`FormatError::BadRankLine`], or
/// [`FormatError::SentencePiece`] for a protobuf model), a token listed twice, a negative
/// rank or one at or beyond 2 × lines + 65,536.
pub fn read_tiktoken_ranks(data: &[u8]) -> Result<Vec<(Vec<u8>, u32)>, FormatError> {
    let lines = split_lines(data);
    let limit = id_limit(lines.len());
    let mut ranks = Vec::with_capacity(lines.len());
    let mut seen: HashMap<Vec<u8>, u32> = HashMap::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        let lineno = index + 1;
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&[u8]> = line
            .split(|b| is_ascii_space(*b))
            .filter(|field| !field.is_empty())
            .collect();
        if fields.len() != 2 {
            return Err(bad_line(data, lineno, line, "expected 'base64 rank'"));
        }
        let (Some(piece), Some(rank)) = (base64_decode(fields[0]), parse_int(fields[1])) else {
            return Err(bad_line(
                data,
                lineno,
                line,
                "cannot parse as 'base64 rank'",
            ));
        };
        if let Some(first) = seen.get(&piece) {
            return Err(FormatError::DuplicateToken {
                file: FileKind::Tiktoken,
                at: format!("line {lineno}"),
                token: piece,
                ids: (u64::from(*first), rank.clamp(0, u64::MAX as i128) as u64),
            });
        }
        if rank < 0 || rank >= i128::from(limit) {
            return Err(FormatError::IdOutOfRange {
                file: FileKind::Tiktoken,
                what: format!(
                    "line {lineno}: the rank {rank} of the token {}",
                    super::show_bytes(&piece)
                ),
                limit,
            });
        }
        let rank = rank as u32; // (below `limit`)
        seen.insert(piece.clone(), rank);
        ranks.push((piece, rank));
    }
    Ok(ranks)
}

/// A rank file with the facts it does not carry (see [`TiktokenFacts`]) as a [`VocabData`].
///
/// Errors: those of [`read_tiktoken_ranks`]; [`FormatError::PatternRequired`] for a file that
/// is not recognized, read without a pattern; the [`VocabData`] invariants (an id used twice, an
/// `n_vocab` not above the largest id, an id far beyond the tokens).
pub fn read_tiktoken(data: &[u8], facts: &TiktokenFacts) -> Result<VocabData, FormatError> {
    let tokens = read_tiktoken_ranks(data)?;
    let given = [
        facts.pattern.is_some(),
        facts.special_tokens.is_some(),
        facts.added_tokens.is_some(),
        facts.normalizer.is_some(),
        facts.eos_token.is_some(),
    ];
    // A recognized file supplies what the caller left out; with nothing left out, the hash of
    // the whole file is not worth computing.
    let known: Option<&Facts> = if given.iter().all(|g| *g) {
        None
    } else {
        known_rank_file(&super::sha256_hex(data))
    };
    let pattern = match (&facts.pattern, known) {
        (Some(pattern), _) => {
            if group_depth(pattern) > MAX_GROUP_DEPTH {
                return Err(FormatError::Unsupported {
                    file: FileKind::Tiktoken,
                    at: "pattern".into(),
                    construct: format!(
                        "a pattern that nests groups more than {MAX_GROUP_DEPTH} deep"
                    ),
                    hint: "flatten the pattern's groups".into(),
                });
            }
            pattern.clone()
        }
        (None, Some(known)) => known.pattern.to_string(),
        (None, None) => {
            return Err(FormatError::PatternRequired {
                sha256: super::sha256_hex(data),
            })
        }
    };
    let owned = |table: &[(&str, u32)]| {
        table
            .iter()
            .map(|(t, i)| (t.to_string(), *i))
            .collect::<Vec<_>>()
    };
    let mut special = facts.special_tokens.clone();
    let mut added = facts.added_tokens.clone();
    let mut n_vocab = facts.n_vocab;
    let mut normalizer = facts.normalizer.clone();
    let mut eos = facts.eos_token.clone();
    if let Some(known) = known {
        if special.is_none() {
            special = Some(owned(known.special_tokens));
            n_vocab = n_vocab.or(known.n_vocab);
        }
        added = added.or_else(|| Some(owned(known.added_tokens)));
        // (the generated table's "none" or "nfc")
        normalizer = normalizer.or_else(|| NormalizeStage::from_name(known.normalizer));
        eos = eos.or_else(|| known.eos_token.map(str::to_string));
    }
    let literals = literals_of(special.unwrap_or_default(), added.unwrap_or_default());
    // {**special, **added}[eos]: an added token of the same text wins.
    let eos_token_id = eos.and_then(|eos| {
        literals
            .iter()
            .rev()
            .find(|lit| lit.text == eos)
            .map(|lit| lit.id)
    });
    let name = facts
        .name
        .clone()
        .or_else(|| known.map(|k| k.name.to_string()));
    VocabData {
        name: name.unwrap_or_else(|| "tiktoken".into()),
        tokens,
        literals,
        merges: None,
        whole_piece_lookup: true,
        n_vocab: 0,
        pattern,
        normalizer: normalizer.unwrap_or(NormalizeStage::None),
        eos_token_id,
        bos_token_id: None,
        unk_token_id: None,
        fuse_unk: false,
        chat_template: None,
        pipeline: None,
        scores: None,
    }
    .finish(FileKind::Tiktoken, n_vocab.map(i128::from))
}

/// Read a rank file (gunzipped when its name ends in `.gz`) with [`read_tiktoken`]; the
/// vocabulary is named after the file (`cl100k_base.tiktoken` is `cl100k_base`), or after its
/// directory for a `tokenizer.model`, unless `facts.name` says otherwise.
pub fn load_tiktoken(
    path: impl AsRef<Path>,
    facts: &TiktokenFacts,
) -> Result<VocabData, FormatError> {
    let path = path.as_ref();
    let data = read_file(path)?;
    let mut facts = facts.clone();
    if facts.name.is_none() {
        let stem = file_stem(path);
        let stem = stem.strip_suffix(".model").unwrap_or(&stem).to_string();
        let name = if stem == "tokenizer" {
            parent_name(path)
        } else {
            stem.clone()
        };
        facts.name = Some(if name.is_empty() { stem } else { name });
    }
    read_tiktoken(&data, &facts)
}

/// Special tokens, then added tokens, each with Python dict semantics (a text listed twice
/// keeps its first position and its last id).
fn literals_of(special: Vec<(String, u32)>, added: Vec<(String, u32)>) -> Vec<Literal> {
    let mut literals = Vec::with_capacity(special.len() + added.len());
    for (table, special) in [(special, true), (added, false)] {
        let mut map = TextMap::new();
        for (text, id) in table {
            map.insert(&text, id);
        }
        literals.extend(map.into_entries().into_iter().map(|(text, id)| Literal {
            text,
            id,
            special,
            flags: 0,
        }));
    }
    literals
}

fn bad_line(data: &[u8], lineno: usize, line: &[u8], reason: &str) -> FormatError {
    // SentencePiece .model files are protobuf: binary from the first byte (field 1, type 2).
    if data.first() == Some(&0x0a) && data[..data.len().min(4096)].contains(&0) {
        return FormatError::SentencePiece;
    }
    let shown = &line[..line.len().min(60)];
    FormatError::BadRankLine {
        line: lineno,
        text: String::from_utf8_lossy(shown).into_owned(),
        reason: reason.into(),
    }
}

/// Python's `bytes.splitlines()`: lines end at `\n`, `\r\n` or `\r`; no empty last line.
fn split_lines(data: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            b'\n' => {
                lines.push(&data[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&data[start..i]);
                if data.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < data.len() {
        lines.push(&data[start..]);
    }
    lines
}

/// The whitespace of Python's `bytes.split()`.
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Python's `base64.b64decode(text)` (non-strict `binascii.a2b_base64`): characters outside the
/// alphabet are skipped; a pad after two or three data characters of a quad ends the input;
/// `None` where Python raises (one data character left over, or a quad without its padding).
pub(crate) fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut quad_pos = 0u8;
    let mut left = 0u32;
    let mut pads = 0u8;
    for &c in text {
        if c == b'=' {
            if quad_pos >= 2 {
                pads += 1;
                if quad_pos + pads >= 4 {
                    return Some(out);
                }
            }
            continue;
        }
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        pads = 0;
        match quad_pos {
            0 => {
                left = value;
                quad_pos = 1;
            }
            1 => {
                out.push(((left << 2) | (value >> 4)) as u8);
                left = value & 0x0f;
                quad_pos = 2;
            }
            2 => {
                out.push(((left << 4) | (value >> 2)) as u8);
                left = value & 0x03;
                quad_pos = 3;
            }
            _ => {
                out.push(((left << 6) | value) as u8);
                quad_pos = 0;
            }
        }
    }
    (quad_pos == 0).then_some(out)
}

/// Python's `int(field)` for a field without whitespace: an optional sign, then decimal digits
/// with single underscores between them. Saturates far beyond any id (the caller refuses it).
pub(crate) fn parse_int(field: &[u8]) -> Option<i128> {
    let (negative, digits) = match field.first() {
        Some(b'-') => (true, &field[1..]),
        Some(b'+') => (false, &field[1..]),
        _ => (false, field),
    };
    if digits.is_empty()
        || !digits[0].is_ascii_digit()
        || !digits[digits.len() - 1].is_ascii_digit()
    {
        return None;
    }
    let mut value: i128 = 0;
    let mut previous_underscore = false;
    for &c in digits {
        if c == b'_' {
            if previous_underscore {
                return None;
            }
            previous_underscore = true;
            continue;
        }
        if !c.is_ascii_digit() {
            return None;
        }
        previous_underscore = false;
        value = value
            .saturating_mul(10)
            .saturating_add(i128::from(c - b'0'));
    }
    Some(if negative { -value } else { value })
}

/// How deeply the groups of `pattern` nest (escapes and classes skipped).
pub(crate) fn group_depth(pattern: &str) -> usize {
    let chars: Vec<char> = pattern.chars().collect();
    let (mut depth, mut deepest) = (0isize, 0isize);
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            i += 2;
            continue;
        }
        if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
            let rest = &chars[i + 1..];
            if rest.starts_with(&[']']) || rest.starts_with(&['^', ']']) {
                i += 2; // a leading "]" is a member, not the end
            }
        } else if c == '(' {
            depth += 1;
            deepest = deepest.max(depth);
        } else if c == ')' {
            depth -= 1;
        }
        i += 1;
    }
    deepest.max(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_follows_pythons_non_strict_decoder() {
        // Each expectation is what base64.b64decode gives (None: binascii.Error).
        let cases: &[(&[u8], Option<&[u8]>)] = &[
            (b"YQ==", Some(b"a")),
            (b"YQ", None),
            (b"YQ=", None),
            (b"=", Some(b"")),
            (b"", Some(b"")),
            (b"Y", None),
            (b"YWJj", Some(b"abc")),
            (b"YW=Jj", Some(b"abc")),
            (b"YQ==YWJj", Some(b"a")),
            (b"Y!Q==", Some(b"a")),
            (b"YWI=", Some(b"ab")),
            (b"YWI", None),
            (b"Y=Q==", Some(b"a")),
        ];
        for (text, expected) in cases {
            assert_eq!(
                base64_decode(text).as_deref(),
                *expected,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn ranks_parse_as_pythons_int() {
        assert_eq!(parse_int(b"12"), Some(12));
        assert_eq!(parse_int(b"+1_000"), Some(1000));
        assert_eq!(parse_int(b"-3"), Some(-3));
        assert_eq!(parse_int(b"007"), Some(7));
        for bad in [
            &b"1__0"[..],
            b"_1",
            b"1_",
            b"",
            b"-",
            b"1a",
            b"0x10",
            b"1.0",
        ] {
            assert_eq!(parse_int(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn lines_split_as_python_splitlines() {
        assert_eq!(
            split_lines(b"a\r\nb\rc\n\nd"),
            vec![&b"a"[..], b"b", b"c", b"", b"d"]
        );
        assert_eq!(split_lines(b"a\n"), vec![&b"a"[..]]);
        assert!(split_lines(b"").is_empty());
    }

    #[test]
    fn group_depth_skips_escapes_and_classes() {
        assert_eq!(group_depth(r"(?i:'s|(a\(b)[(])"), 2);
        assert_eq!(group_depth(r"[]()]x"), 0);
    }
}
