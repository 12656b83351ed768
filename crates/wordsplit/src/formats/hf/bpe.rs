//! The byte-level BPE model of a `tokenizer.json`: `model.vocab` and `model.merges` (with the
//! added tokens' ids) → the BPE tokens, pair-ranked merges where the merge list needs them, and
//! the unk token.
//!
//! Files that list merges define BPE by *pair rank* (merge the adjacent pair that comes first
//! in the list); tiktoken's rule is *token rank* (merge the pair whose concatenation has the
//! lowest id). The two give the same ids when the merge list is in merged-id order and makes
//! every non-byte token exactly once; then the vocabulary is rank-based, else it keeps the
//! pair-ranked table.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{integer, Added};
use crate::formats::{show_bytes, truthy, FileKind, FormatError, VocabData};
use crate::literal::Literal;
use crate::normalizers::NormalizeStage;
use crate::train::rank_pairs;

/// Where the model's parts sit in the file, for messages.
pub(crate) struct Layout {
    pub file: FileKind,
    /// The vocab (`model.vocab`, `vocab.json`).
    pub vocab: &'static str,
    /// The merges (`model.merges`, `merges.txt`).
    pub merges: &'static str,
}

/// A tokenizer.json's model.
pub(crate) const TOKENIZER_JSON: Layout = Layout {
    file: FileKind::TokenizerJson,
    vocab: "model.vocab",
    merges: "model.merges",
};

impl Layout {
    fn malformed(&self, at: impl Into<String>, problem: impl Into<String>) -> FormatError {
        FormatError::Malformed {
            file: self.file,
            at: at.into(),
            problem: problem.into(),
        }
    }

    fn unsupported(&self, at: &str, construct: String, hint: &str) -> FormatError {
        FormatError::Unsupported {
            file: self.file,
            at: at.into(),
            construct,
            hint: hint.into(),
        }
    }
}

/// GPT-2's byte ↔ character table: printable Latin-1 bytes stand for themselves, the other 68
/// are U+0100 and up, in byte order. `CHAR_TO_BYTE[c]` for c below U+0144.
pub(super) fn char_to_byte() -> [Option<u8>; 0x144] {
    let mut table = [None; 0x144];
    let mut shifted = 0usize;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        if printable {
            table[b as usize] = Some(b);
        } else {
            table[0x100 + shifted] = Some(b);
            shifted += 1;
        }
    }
    table
}

/// The bytes a byte-level token text stands for, or `None` if it is not byte-level.
pub(super) fn token_bytes(table: &[Option<u8>; 0x144], text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| table.get(c as usize).copied().flatten())
        .collect()
}

/// BPE tokens in order, with an index by bytes: bytes → id, each bytes once, at its first
/// place.
#[derive(Default)]
struct Ranks {
    tokens: Vec<(Vec<u8>, i128)>,
    index: HashMap<Vec<u8>, usize>,
}

impl Ranks {
    fn get(&self, piece: &[u8]) -> Option<i128> {
        self.index.get(piece).map(|&at| self.tokens[at].1)
    }

    /// `ranks[piece] = id`: a new piece goes last, a known one keeps its place.
    fn set(&mut self, piece: Vec<u8>, id: i128) {
        match self.index.get(&piece) {
            Some(&at) => self.tokens[at].1 = id,
            None => {
                self.index.insert(piece.clone(), self.tokens.len());
                self.tokens.push((piece, id));
            }
        }
    }
}

/// What a file says outside its model, which the vocabulary takes as it is.
pub(crate) struct Rest<'a> {
    pub pattern: String,
    pub normalizer: NormalizeStage,
    pub name: String,
    /// The text of the eos token (its id is the literal's of that text, if any).
    pub eos_token: Option<&'a str>,
}

/// The vocabulary of a byte-level BPE model: `model` holds `merges` (and `ignore_merges`,
/// `unk_token`, `fuse_unk`), `vocab` the token texts → ids, `added` the literals with their ids.
pub(crate) fn bpe_vocab(
    layout: &Layout,
    model: &Map<String, Value>,
    vocab: &Map<String, Value>,
    added: Vec<(Added, i128)>,
    rest: Rest,
) -> Result<VocabData, FormatError> {
    let Rest {
        pattern,
        normalizer,
        name,
        eos_token,
    } = rest;
    let table = char_to_byte();
    // {**special, **added}: the id a literal text names (an added one wins over a special one).
    let mut literal_ids: HashMap<&str, i128> = HashMap::new();
    for (token, id) in &added {
        literal_ids.insert(&token.content, *id);
    }
    let eos_id = eos_token.and_then(|eos| literal_ids.get(eos).copied());
    // Entries an added token also names, longer than a byte and spelled as its text, are set
    // aside: only the added token reaches them unless a merge makes them (or ignore_merges).
    let mut ranks = Ranks::default();
    let mut aside = Ranks::default();
    for (text, value) in vocab {
        let at = || format!("{}[{text:?}]", layout.vocab);
        let id = integer(value).ok_or_else(|| {
            layout.malformed(
                at(),
                format!("has the id {value}; ids are non-negative integers"),
            )
        })?;
        let piece = token_bytes(&table, text).ok_or_else(|| {
            layout.malformed(at(), format!("(id {id}) is not byte-level BPE text"))
        })?;
        if let Some(other) = ranks.get(&piece).or_else(|| aside.get(&piece)) {
            return Err(FormatError::DuplicateToken {
                file: layout.file,
                at: at(),
                token: piece,
                ids: (
                    other.clamp(0, u64::MAX as i128) as u64,
                    id.clamp(0, u64::MAX as i128) as u64,
                ),
            });
        }
        if literal_ids.get(text.as_str()) == Some(&id)
            && piece.len() > 1
            && piece == text.as_bytes()
        {
            aside.set(piece, id);
        } else {
            ranks.set(piece, id);
        }
    }
    let pairs = merge_pairs(layout, &table, model.get("merges"))?;
    let ignore_merges = truthy(model.get("ignore_merges"));
    if ignore_merges {
        for (piece, id) in aside.tokens.drain(..) {
            ranks.set(piece, id);
        }
    } else if !aside.tokens.is_empty() {
        let lengths: HashSet<usize> = aside.tokens.iter().map(|(p, _)| p.len()).collect();
        for (left, right) in &pairs {
            if lengths.contains(&(left.len() + right.len())) {
                let merged = [left.as_slice(), right.as_slice()].concat();
                if let Some(id) = aside.get(&merged) {
                    ranks.set(merged, id);
                }
            }
        }
    }
    let missing: Vec<u8> = (0..=255u8).filter(|b| ranks.get(&[*b]).is_none()).collect();
    // HF looks the unk token up in the model's vocab (only for a byte without a token).
    let unk_token = model.get("unk_token").filter(|v| !v.is_null());
    let unk_id = unk_token
        .and_then(Value::as_str)
        .and_then(|t| vocab.get(t))
        .and_then(integer);
    if let (false, Some(unk)) = (missing.is_empty(), unk_token) {
        let shown: Vec<String> = missing
            .iter()
            .take(8)
            .map(|b| format!("0x{b:02X}"))
            .collect();
        if unk_id.is_none() {
            return Err(layout.malformed(
                "model.unk_token",
                format!(
                    "the vocabulary has no token for {} single byte(s) ({}{}) and the unk_token {unk} is \
                     not in model.vocab (HF fails on any text with such a byte); add it to model.vocab, \
                     or remove unk_token to drop such bytes",
                    missing.len(),
                    shown.join(", "),
                    if missing.len() > 8 { ", ..." } else { "" }
                ),
            ));
        }
        let unk_bytes = unk.as_str().and_then(|t| token_bytes(&table, t));
        if let Some(unk_bytes) = unk_bytes.filter(|u| pairs.iter().any(|(l, r)| l == u || r == u)) {
            return Err(layout.unsupported(
                "model.unk_token",
                format!("an unk_token ({}) that is part of a merge", show_bytes(&unk_bytes)),
                "HF would merge an unknown byte's unk token with its neighbours, which wordsplit does not do",
            ));
        }
    }
    let rank_ordered = merges_are_rank_ordered(&ranks, &pairs);
    let merges = if rank_ordered {
        None
    } else {
        Some(pair_ranked_merges(layout, &ranks, &pairs)?)
    };
    let tokens = ranks
        .tokens
        .into_iter()
        .map(|(piece, id)| Ok((piece, id_of(layout, id, "a vocab entry")?)))
        .collect::<Result<_, _>>()?;
    let literals = added
        .into_iter()
        .map(|(token, id)| {
            Ok(Literal {
                id: id_of(layout, id, &format!("the added token {:?}", token.content))?,
                text: token.content,
                special: token.special,
                flags: token.flags,
            })
        })
        .collect::<Result<_, FormatError>>()?;
    VocabData {
        name,
        tokens,
        literals,
        merges,
        whole_piece_lookup: rank_ordered || ignore_merges,
        n_vocab: 0,
        pattern,
        normalizer,
        eos_token_id: eos_id
            .map(|id| id_of(layout, id, "the eos token"))
            .transpose()?,
        bos_token_id: None,
        unk_token_id: unk_id
            .map(|id| id_of(layout, id, "the unk_token"))
            .transpose()?,
        fuse_unk: truthy(model.get("fuse_unk")),
        chat_template: None,
        pipeline: None,
        scores: None,
    }
    .finish(layout.file, None)
}

/// An id the file gave as any integer, as a `u32` (a negative one is malformed, a huge one far
/// beyond the vocabulary).
fn id_of(layout: &Layout, id: i128, what: &str) -> Result<u32, FormatError> {
    if id < 0 {
        return Err(layout.malformed(
            what.to_string(),
            format!("has the invalid id {id}; ids are non-negative integers"),
        ));
    }
    u32::try_from(id).map_err(|_| FormatError::IdOutOfRange {
        file: layout.file,
        what: format!("{what} has the id {id}"),
        limit: u64::from(u32::MAX),
    })
}

/// Merges as `"a b"` strings or `["a", "b"]` pairs → byte pairs.
/// A merge: the bytes of its left and right tokens.
type BytePair = (Vec<u8>, Vec<u8>);

fn merge_pairs(
    layout: &Layout,
    table: &[Option<u8>; 0x144],
    merges: Option<&Value>,
) -> Result<Vec<BytePair>, FormatError> {
    let merges = match merges {
        None => return Ok(Vec::new()),
        Some(Value::Array(merges)) => merges,
        Some(_) => return Err(layout.malformed(layout.merges, "the merges must be a list")),
    };
    let mut pairs = Vec::with_capacity(merges.len());
    for (rank, merge) in merges.iter().enumerate() {
        let parts: Vec<Option<&str>> = match merge {
            Value::String(s) => s.split(' ').map(Some).collect(),
            Value::Array(items) => items.iter().map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let pair = match parts.as_slice() {
            [Some(left), Some(right)] => token_bytes(table, left).zip(token_bytes(table, right)),
            _ => None,
        };
        let Some(pair) = pair else {
            return Err(layout.malformed(
                format!("{}[{rank}]", layout.merges),
                format!("{merge} is not a pair of byte-level tokens"),
            ));
        };
        pairs.push(pair);
    }
    Ok(pairs)
}

/// True when token-rank BPE on `ranks` equals pair-rank BPE on `merges`: the merges are in
/// merged-id order, each part exists before the merge that uses it, every non-byte token is
/// made by exactly one merge, and token-rank BPE makes each token from the very pair its merge
/// lists. (Token-rank BPE makes a token from whatever two adjacent parts spell it; with
/// merges `b c`, `a b`, `ab c` it makes `abc` from `a` + `bc`, which HF never merges.)
fn merges_are_rank_ordered(ranks: &Ranks, merges: &[(Vec<u8>, Vec<u8>)]) -> bool {
    // Each merge's ids: the token it makes, then its two parts.
    let mut listed: Vec<(i128, i128, i128)> = Vec::with_capacity(merges.len());
    let mut last = -1i128;
    for (left, right) in merges {
        let Some(merged) = ranks.get(&[left.as_slice(), right.as_slice()].concat()) else {
            return false;
        };
        let (left, right) = (
            ranks.get(left).unwrap_or(merged),
            ranks.get(right).unwrap_or(merged),
        );
        if merged <= last || left >= merged || right >= merged {
            return false;
        }
        listed.push((merged, left, right));
        last = merged;
    }
    // The merged ids rise strictly, so each merge makes a token of its own.
    let multi_byte = ranks.tokens.iter().filter(|(piece, _)| piece.len() > 1);
    if listed.len() != multi_byte.count() {
        return false;
    }
    // Ids far sparser than the tokens (the id checks report those past u32 later), or
    // negative: not taken as rank-ordered, so no table by id is made for them.
    let Some(size) = ranks.tokens.iter().map(|t| t.1).max().map(|top| top + 1) else {
        return true;
    };
    if size > 2 * ranks.tokens.len() as i128 + 65_536 || ranks.tokens.iter().any(|t| t.1 < 0) {
        return false;
    }
    let mut by_id: Vec<Option<&[u8]>> = vec![None; size as usize];
    for (piece, id) in &ranks.tokens {
        by_id[*id as usize] = Some(piece);
    }
    let splits = rank_pairs(&by_id);
    listed
        .iter()
        .all(|&(merged, left, right)| splits[merged as usize] == Some((left as u32, right as u32)))
}

/// The `(left id, right id, rank)` table (a pair listed twice keeps its last rank, at its first
/// place, as HF's map); a merge of tokens that are not in the vocabulary is malformed.
fn pair_ranked_merges(
    layout: &Layout,
    ranks: &Ranks,
    merges: &[(Vec<u8>, Vec<u8>)],
) -> Result<Vec<(u32, u32, u32)>, FormatError> {
    let mut table: Vec<(u32, u32, u32)> = Vec::with_capacity(merges.len());
    let mut place: HashMap<(i128, i128), usize> = HashMap::with_capacity(merges.len());
    for (rank, (left, right)) in merges.iter().enumerate() {
        let at = || format!("{}[{rank}]", layout.merges);
        let (Some(l), Some(r)) = (ranks.get(left), ranks.get(right)) else {
            let missing = if ranks.get(left).is_none() {
                left
            } else {
                right
            };
            return Err(layout.malformed(
                at(),
                format!(
                    "uses {}, which is not in the vocabulary",
                    show_bytes(missing)
                ),
            ));
        };
        if ranks
            .get(&[left.as_slice(), right.as_slice()].concat())
            .is_none()
        {
            return Err(layout.malformed(
                at(),
                format!(
                    "makes {}, which is not in the vocabulary",
                    show_bytes(&[left.as_slice(), right.as_slice()].concat())
                ),
            ));
        }
        let entry = (
            id_of(layout, l, "a merge's token")?,
            id_of(layout, r, "a merge's token")?,
            rank as u32,
        );
        match place.get(&(l, r)) {
            Some(&at) => table[at].2 = rank as u32,
            None => {
                place.insert((l, r), table.len());
                table.push(entry);
            }
        }
    }
    Ok(table)
}
