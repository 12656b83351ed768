//! SentencePiece `tokenizer.model` files (a serialized `ModelProto`): the pieces read from the
//! protobuf ([`read_pieces`]) and a BPE model's tokens and score-ranked merges
//! ([`bpe_tables`]). Where they find the model wrong or unusual they say only that (`None`):
//! they are fast paths, for the 262,144 pieces of a Gemma-class model, of the Python
//! package's loader (`src/wordsplit/formats/sentencepiece.py`), which then reads the same
//! bytes and raises its typed error, and whose tests hold the two to the same vocabulary.
//!
//! ```
//! use wordsplit::formats::sentencepiece::read_pieces;
//!
//! // One piece: text "▁", score -1.0, type NORMAL (1).
//! let piece = b"\x0a\x03\xe2\x96\x81\x15\x00\x00\x80\xbf\x18\x01";
//! let mut model = vec![0x0a, piece.len() as u8];
//! model.extend(piece);
//! let proto = read_pieces(&model).unwrap();
//! assert_eq!((proto.pieces[0].text, proto.pieces[0].score, proto.pieces[0].kind), ("▁", -1.0, 1));
//! ```

use rustc_hash::{FxHashMap, FxHashSet};

/// sentencepiece's `ModelProto.SentencePiece.Type`.
pub const NORMAL: u8 = 1;
pub const UNKNOWN: u8 = 2;
pub const CONTROL: u8 = 3;
pub const USER_DEFINED: u8 = 4;
pub const UNUSED: u8 = 5;
pub const BYTE: u8 = 6;

/// One piece of a model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece<'a> {
    pub text: &'a str,
    pub score: f32,
    pub kind: u8,
}

/// What [`read_pieces`] reads of a `ModelProto`.
#[derive(Debug, PartialEq)]
pub struct Pieces<'a> {
    pub pieces: Vec<Piece<'a>>,
    /// `(field number, bytes)` of each `TrainerSpec` (2) and `NormalizerSpec` (3) message,
    /// in file order (the Python loader reads their few fields).
    pub specs: Vec<(u8, &'a [u8])>,
}

/// A protobuf field's value.
pub(crate) enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// The fields `(number, wire type, value)` of one message, or `None` for a truncated field,
/// an unknown wire type or a varint of more than 64 bits.
pub(crate) fn fields(data: &[u8]) -> Option<Vec<(u64, u8, Field<'_>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let key = varint(data, &mut pos)?;
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let value = match wire {
            0 => Field::Varint(varint(data, &mut pos)?),
            1 | 5 => {
                let size = if wire == 1 { 8 } else { 4 };
                let bytes = data.get(pos..pos + size)?;
                pos += size;
                Field::Bytes(bytes)
            }
            2 => {
                let size = usize::try_from(varint(data, &mut pos)?).ok()?;
                let bytes = data.get(pos..pos.checked_add(size)?)?;
                pos += size;
                Field::Bytes(bytes)
            }
            _ => return None,
        };
        out.push((number, wire, value));
    }
    Some(out)
}

fn varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut result = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*pos)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return None; // past 64 bits: left to the Python loader, whose ints have no bound
        }
        result |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Some(result);
        }
    }
    None
}

/// The pieces and the spec messages of a serialized `ModelProto`, or `None` for a malformed
/// field, a piece without text, with text that is not UTF-8, or of an unknown type.
pub fn read_pieces(data: &[u8]) -> Option<Pieces<'_>> {
    let mut out = Pieces {
        pieces: Vec::new(),
        specs: Vec::new(),
    };
    for (number, wire, value) in fields(data)? {
        let (2, Field::Bytes(message)) = (wire, value) else {
            continue; // (only length-delimited fields are read)
        };
        match number {
            1 => out.pieces.push(piece(message)?),
            2 | 3 => out.specs.push((number as u8, message)),
            _ => {}
        }
    }
    Some(out)
}

fn piece(message: &[u8]) -> Option<Piece<'_>> {
    let (mut text, mut score, mut kind) = ("", 0.0f32, u64::from(NORMAL));
    for (number, wire, value) in fields(message)? {
        match (number, wire, value) {
            (1, 2, Field::Bytes(bytes)) => text = std::str::from_utf8(bytes).ok()?,
            (2, 5, Field::Bytes(bytes)) => score = f32::from_le_bytes(bytes.try_into().ok()?),
            (3, 0, Field::Varint(value)) => kind = value,
            _ => {}
        }
    }
    if text.is_empty() || !(1..=6).contains(&kind) {
        return None;
    }
    Some(Piece {
        text,
        score,
        kind: kind as u8,
    })
}

/// The tokens and merges of a SentencePiece BPE model.
#[derive(Debug, PartialEq)]
pub struct BpeTables {
    /// The BPE tokens' bytes and ids, in this order: the NORMAL, USER_DEFINED and UNUSED
    /// pieces, then the BYTE pieces (each its byte, or its own
    /// text where a one-character piece is that byte already).
    pub tokens: Vec<(Vec<u8>, u32)>,
    /// `(left, right, rank)` of every split of a piece into two pieces, ranked by the piece's
    /// score (0 = highest; equal scores, equal ranks), as [`score_merges`] orders them.
    pub merges: Vec<(u32, u32, u32)>,
    /// The mergeable pieces that hold a `▁` right after another character, sorted.
    pub joined: Vec<String>,
}

/// [`BpeTables`] of `pieces`, or `None` for pieces that make no vocabulary (a repeated text,
/// byte pieces that are not 256 distinct `<0xNN>`, not exactly one UNKNOWN piece, a piece
/// holding a character that is no piece) or have no one order (a NaN score).
pub fn bpe_tables(pieces: &[Piece<'_>]) -> Option<BpeTables> {
    let mut index: FxHashMap<&str, u32> = FxHashMap::default();
    index.reserve(pieces.len());
    for (i, piece) in pieces.iter().enumerate() {
        if index.insert(piece.text, i as u32).is_some() || piece.score.is_nan() {
            return None;
        }
    }
    let mergeable = |kind: u8| matches!(kind, NORMAL | USER_DEFINED | UNUSED);
    if pieces.iter().filter(|p| p.kind == UNKNOWN).count() != 1 {
        return None;
    }
    let mut tokens: Vec<(Vec<u8>, u32)> = Vec::with_capacity(pieces.len());
    let mut single_bytes = [false; 256];
    for (i, piece) in pieces.iter().enumerate() {
        if mergeable(piece.kind) {
            if piece.text.len() == 1 {
                single_bytes[piece.text.as_bytes()[0] as usize] = true;
            }
            tokens.push((piece.text.as_bytes().to_vec(), i as u32));
        }
    }
    let mut bytes_seen = [false; 256];
    for (i, piece) in pieces.iter().enumerate() {
        if piece.kind != BYTE {
            continue;
        }
        let value = byte_piece_value(piece.text)?;
        if std::mem::replace(&mut bytes_seen[value as usize], true) {
            return None;
        }
        let key = if single_bytes[value as usize] {
            piece.text.as_bytes().to_vec()
        } else {
            single_bytes[value as usize] = true;
            vec![value]
        };
        tokens.push((key, i as u32));
    }
    if !bytes_seen.iter().all(|&seen| seen) {
        return None;
    }
    let texts: Vec<&str> = pieces.iter().map(|p| p.text).collect();
    let scores: Vec<f64> = pieces.iter().map(|p| f64::from(p.score)).collect();
    let kinds: Vec<u8> = pieces.iter().map(|p| p.kind).collect();
    let merges = score_merges(&texts, &scores, &kinds)?;
    let mut joined = Vec::new();
    for piece in pieces.iter().filter(|p| mergeable(p.kind)) {
        let mut previous: Option<char> = None;
        for c in piece.text.chars() {
            if c == '\u{2581}' && previous.is_some_and(|p| p != '\u{2581}') {
                joined.push(piece.text.to_owned());
                break;
            }
            previous = Some(c);
        }
    }
    joined.sort();
    Some(BpeTables {
        tokens,
        merges,
        joined,
    })
}

/// SentencePiece's merge rule as a pair-ranked table: two adjacent symbols merge when together
/// they spell a mergeable piece (NORMAL, USER_DEFINED, UNUSED), the piece of highest score
/// first, so every split of such a piece into two such pieces is a pair `(left, right, rank)`,
/// ranked among the distinct scores of the mergeable pieces longer than one character (0 =
/// highest), in the pieces' order, each piece's splits from left to right. `None` for pieces
/// that make no such table (a piece holding a character that is no mergeable piece) or have no
/// one order (a repeated mergeable text, a NaN score).
pub fn score_merges(texts: &[&str], scores: &[f64], kinds: &[u8]) -> Option<Vec<(u32, u32, u32)>> {
    if texts.len() != scores.len() || texts.len() != kinds.len() {
        return None;
    }
    let mergeable = |i: usize| matches!(kinds[i], NORMAL | USER_DEFINED | UNUSED);
    let mut index: FxHashMap<&str, u32> = FxHashMap::default();
    index.reserve(texts.len());
    // The one-character pieces again, as characters: the check that each character of a piece
    // is a piece looks in this small set, not in the index of all pieces.
    let mut chars: FxHashSet<char> = FxHashSet::default();
    for (i, &text) in texts.iter().enumerate() {
        if mergeable(i) && (index.insert(text, i as u32).is_some() || scores[i].is_nan()) {
            return None;
        }
        let mut cs = text.chars();
        if let (true, Some(c), None) = (mergeable(i), cs.next(), cs.next()) {
            chars.insert(c);
        }
    }
    let long = |i: usize| texts[i].chars().nth(1).is_some();
    let merged: Vec<usize> = (0..texts.len())
        .filter(|&i| mergeable(i) && long(i))
        .collect();
    // (+ 0.0 makes -0.0 the 0.0 it equals: one distinct score)
    let mut distinct: Vec<f64> = merged.iter().map(|&i| scores[i] + 0.0).collect();
    distinct.sort_by(|a, b| b.total_cmp(a));
    distinct.dedup();
    let mut merges = Vec::new();
    for i in merged {
        let text = texts[i];
        if text.chars().any(|c| !chars.contains(&c)) {
            return None;
        }
        let score = scores[i] + 0.0;
        let rank = distinct.partition_point(|&s| s > score) as u32;
        for (cut, _) in text.char_indices().skip(1) {
            if let Some(&left) = index.get(&text[..cut]) {
                if let Some(&right) = index.get(&text[cut..]) {
                    merges.push((left, right, rank));
                }
            }
        }
    }
    Some(merges)
}

/// The byte of a byte piece's text: `<0x` + two uppercase hex digits + `>`.
fn byte_piece_value(text: &str) -> Option<u8> {
    let b = text.as_bytes();
    if b.len() == 6 && b.starts_with(b"<0x") && b[5] == b'>' {
        let hex = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        };
        return Some(hex(b[3])? << 4 | hex(b[4])?);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(text: &str, score: f32, kind: u8) -> Piece<'_> {
        Piece { text, score, kind }
    }

    fn model<'a>(extra: &[Piece<'a>], names: &'a [String]) -> Vec<Piece<'a>> {
        let mut pieces = vec![piece("<unk>", 0.0, UNKNOWN)];
        pieces.extend(names.iter().map(|n| piece(n, 0.0, BYTE)));
        pieces.extend_from_slice(extra);
        pieces
    }

    #[test]
    fn merges_by_score_and_spells_bytes() {
        let names: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
        let extra = [
            piece("a", 0.0, NORMAL),
            piece("b", 0.0, NORMAL),
            piece("ab", -1.0, NORMAL),
            piece("abb", -2.0, NORMAL),
        ];
        let pieces = model(&extra, &names);
        let tables = bpe_tables(&pieces).unwrap();
        let (a, b, ab, abb) = (257, 258, 259, 260);
        assert_eq!(tables.merges, vec![(a, b, 0), (ab, b, 1)]);
        // "a" is a piece, so the byte piece <0x61> keeps its text as its token.
        assert!(tables.tokens.contains(&(b"<0x61>".to_vec(), 1 + 0x61)));
        assert!(tables.tokens.contains(&(vec![0x0A], 1 + 0x0A)));
        assert!(tables.tokens.contains(&(b"abb".to_vec(), abb)));
        assert!(tables.joined.is_empty());
    }

    #[test]
    fn refuses_what_the_reference_refuses() {
        let names: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
        let fine = [piece("a", 0.0, NORMAL)];
        assert!(bpe_tables(&model(&fine, &names)).is_some());
        let repeated = [piece("a", 0.0, NORMAL), piece("a", 0.0, NORMAL)];
        let unpieced = [piece("xy", 0.0, NORMAL)];
        for extra in [&repeated[..], &unpieced[..]] {
            assert_eq!(bpe_tables(&model(extra, &names)), None);
        }
        assert_eq!(bpe_tables(&model(&fine, &names[1..])), None); // a byte piece missing
        assert_eq!(read_pieces(b"\x0a\x02\x0a\x00"), None); // a piece without text
        assert_eq!(read_pieces(b"\x0b"), None); // wire type 3
    }
}
