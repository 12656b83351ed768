//! Offsets: where each token of an encode came from in the text. Mirrors
//! `wordsplit/offsets.py` and the Python engine's `encode_with_offsets`, the reference.
//!
//! The encode is the pipeline's own (literals → normalizer → spanner → encoder); offsets
//! come from a walk over each segment's ids afterwards: the tokens of a segment spell its
//! normalized bytes in order, so a token's byte range within its piece is the running sum of
//! the token lengths. Each token gets `[byte start, byte end, char start, char end, word]`:
//!
//! * where the normalizer left the text as it was, the byte range is exactly the token's
//!   bytes in the text, and the char range the characters those bytes touch (a token that
//!   holds part of a character gets the whole character, as HF tokenizers reports it);
//! * where the normalizer changed it, each normalized character is aligned to original
//!   characters as HF tokenizers aligns them (a Unicode form: `unicode-normalization-alignments`'s
//!   changes, applied the way HF's `NormalizedString::transform` applies them; a normalizer
//!   program: the alignment its `alignment_parts` method carries through every step in Python; a
//!   plug-in normalizer: the text outside the common prefix and suffix maps to the whole
//!   changed middle, text put before the whole segment to its first character), and a token
//!   gets the span from its first character's start to its last one's end;
//! * a spanner that drops text gives the text its pieces make, aligned through its spans
//!   (see `spanned_alignment`): dropped text is in no token's range;
//! * `word` is the index of the token's piece: pieces of the spanner and literal tokens,
//!   counted in order over the whole text (HF's word ids).
//!
//! Byte positions count in the text's UTF-8, char positions in its code points.

use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

use super::second_pass::Step;
use super::{EncodeStage, NormalizeStage, Pipeline, SpannedText, SpecialPolicy};
use crate::error::Error;
use crate::normalizers::{normalizer_error, Normalizer};

/// One token's place: `[byte start, byte end, char start, char end, word]`.
pub type TokenPlace = [u64; 5];

/// Counts the characters that start before a byte position; cheap for positions asked in
/// increasing order (it walks on from the last one), correct for any.
struct CharCounter<'a> {
    bytes: &'a [u8],
    byte: usize,
    chars: usize,
    /// All of the text is ASCII: a char position is its byte position.
    ascii: bool,
}

#[inline]
fn starts_char(byte: u8) -> bool {
    (byte as i8) >= -0x40
}

impl<'a> CharCounter<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            byte: 0,
            chars: 0,
            ascii: text.is_ascii(),
        }
    }

    /// The number of characters that start before byte `pos`.
    #[inline]
    fn before(&mut self, pos: usize) -> usize {
        if self.ascii {
            return pos;
        }
        if pos >= self.byte {
            self.chars += self.bytes[self.byte..pos]
                .iter()
                .filter(|&&b| starts_char(b))
                .count();
        } else {
            self.chars -= self.bytes[pos..self.byte]
                .iter()
                .filter(|&&b| starts_char(b))
                .count();
        }
        self.byte = pos;
        self.chars
    }

    /// Record that `chars` characters start before byte `pos` (known from elsewhere).
    #[inline]
    fn set(&mut self, pos: usize, chars: usize) {
        self.byte = pos;
        self.chars = chars;
    }
}

/// A normalized character's origin: its original byte range (relative to the segment), its
/// byte start in the normalized segment, and whether it is that original character itself
/// (then a token that starts or ends inside it maps byte for byte).
#[derive(Clone, Copy)]
struct Aligned {
    start: usize,
    end: usize,
    normalized_start: usize,
    identical: bool,
}

/// A segment the normalizer changed: its normalized text, each normalized character's
/// origin, and the character index of each normalized byte.
struct Alignment {
    normalized: String,
    chars: Vec<Aligned>,
    char_of_byte: Vec<u32>,
}

impl AsRef<str> for Alignment {
    fn as_ref(&self) -> &str {
        &self.normalized
    }
}

impl Alignment {
    /// The alignment of `self.normalized[range]` (a range of whole characters), to the same
    /// original text.
    fn slice(&self, range: std::ops::Range<usize>) -> Self {
        let first = self.char_of_byte[range.start] as usize;
        let last = self.char_of_byte[range.end - 1] as usize;
        let chars = self.chars[first..=last]
            .iter()
            .map(|a| Aligned {
                normalized_start: a.normalized_start - range.start,
                ..*a
            })
            .collect();
        Self::new(self.normalized[range].to_owned(), chars)
    }

    fn new(normalized: String, chars: Vec<Aligned>) -> Self {
        let mut char_of_byte = Vec::with_capacity(normalized.len());
        for (i, c) in normalized.chars().enumerate() {
            char_of_byte.extend(std::iter::repeat_n(i as u32, c.len_utf8()));
        }
        Self {
            normalized,
            chars,
            char_of_byte,
        }
    }
}

/// The byte starts of the characters of `text`, and its length at the end.
fn char_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect()
}

/// HF's NFC of `segment` with HF's alignments, or None when NFC leaves it as it is.
fn nfc_alignment(segment: &str) -> Option<Alignment> {
    if segment.is_ascii() || is_nfc_quick(segment.chars()) == IsNormalized::Yes {
        return None;
    }
    changes_alignment(segment, segment.nfc())
}

/// HF's NFD, NFKC or NFKD of `segment` with HF's alignments (see [`changes_alignment`]), or
/// None when the form leaves it as it is.
fn form_alignment(segment: &str, stage: &NormalizeStage) -> Option<Alignment> {
    if segment.is_ascii() {
        return None;
    }
    let chars = || segment.chars();
    match stage {
        NormalizeStage::Nfd if is_nfd_quick(chars()) != IsNormalized::Yes => {
            changes_alignment(segment, segment.nfd())
        }
        NormalizeStage::Nfkc if is_nfkc_quick(chars()) != IsNormalized::Yes => {
            changes_alignment(segment, segment.nfkc())
        }
        NormalizeStage::Nfkd if is_nfkd_quick(chars()) != IsNormalized::Yes => {
            changes_alignment(segment, segment.nfkd())
        }
        _ => None,
    }
}

/// The text the crate's `changes` make of `segment`, aligned as HF aligns it, or None when it
/// is `segment` itself. Mirrors `apply_changes` in `wordsplit/offsets.py`.
///
/// The crate yields each output character with a change: 0 replaces the next original
/// character, -n replaces it and removes the n after it, +1 is inserted. HF gives a
/// replacing character the range of the original character it replaces, and an inserted one
/// the range of the original character before it (nothing at the very start).
fn changes_alignment(
    segment: &str,
    changes: impl Iterator<Item = (char, isize)>,
) -> Option<Alignment> {
    let starts = char_starts(segment);
    let originals: Vec<char> = segment.chars().collect();
    let count = originals.len();
    // The byte range of original character `k` (clamped, as the changes always stay in range).
    let range = |k: usize| (starts[k.min(count)], starts[(k + 1).min(count)]);
    let mut normalized = String::with_capacity(segment.len() + 8);
    let mut chars = Vec::with_capacity(count + 4);
    let mut offset = 0usize;
    for (c, change) in changes {
        let (start, end, identical) = if change > 0 {
            if offset == 0 {
                (0, 0, false)
            } else {
                let (start, end) = range(offset - 1);
                (start, end, false)
            }
        } else {
            let (start, end) = range(offset);
            let identical = change == 0 && originals.get(offset) == Some(&c);
            offset += 1 + change.unsigned_abs();
            (start, end, identical)
        };
        chars.push(Aligned {
            start,
            end,
            normalized_start: normalized.len(),
            identical,
        });
        normalized.push(c);
    }
    (normalized != segment).then(|| Alignment::new(normalized, chars))
}

/// A normalizer program's text and alignment, from its `alignment_parts` method (Python's
/// `wordsplit.offsets.program_alignment_parts`: HF's alignment carried through every step, as
/// the alignment of the first characters followed by the segment's last `tail` characters,
/// each itself), or None when it left `segment` as it is.
fn program_alignment(
    normalizer: &dyn Normalizer,
    segment: &str,
) -> Result<Option<Alignment>, Error> {
    {
        let Some(parts) = normalizer.alignment_parts(segment)? else {
            return Ok(None);
        };
        let (normalized, head, tail) = (parts.normalized, parts.head, parts.tail);
        let starts = char_starts(segment);
        let count = starts.len() - 1;
        if tail > count
            || head.len() + tail != normalized.chars().count()
            || head
                .iter()
                .any(|&(start, end, _)| start > end || end > count)
        {
            return Err(normalizer_error(
                normalizer.name(),
                "alignment_parts() must align each normalized character within the text",
            ));
        }
        let mut chars = Vec::with_capacity(head.len() + tail);
        let mut normalized_start = 0;
        let mut normalized_chars = normalized.chars();
        for ((start, end, identical), c) in head.into_iter().zip(normalized_chars.by_ref()) {
            chars.push(Aligned {
                start: starts[start],
                end: starts[end],
                normalized_start,
                identical,
            });
            normalized_start += c.len_utf8();
        }
        for k in count - tail..count {
            chars.push(Aligned {
                start: starts[k],
                end: starts[k + 1],
                normalized_start,
                identical: true,
            });
            normalized_start += starts[k + 1] - starts[k];
        }
        Ok(Some(Alignment::new(normalized, chars)))
    }
}

/// The alignment of a normalizer that gives no alignments of its own: the characters of the
/// common prefix and suffix are themselves, every other normalized character maps to the
/// whole changed middle of the original. Text put before the whole segment (HF's `Prepend`,
/// ByteLevel's `add_prefix_space`) is aligned to its first character, as HF's
/// `NormalizedString::prepend` aligns it.
fn prefix_suffix_alignment(segment: &str, normalized: String) -> Alignment {
    if normalized.len() > segment.len() && !segment.is_empty() && normalized.ends_with(segment) {
        let inserted = normalized.len() - segment.len();
        let first_end = segment.chars().next().map_or(0, char::len_utf8);
        let mut chars = Vec::with_capacity(normalized.len());
        for (i, _) in normalized[..inserted].char_indices() {
            chars.push(Aligned {
                start: 0,
                end: first_end,
                normalized_start: i,
                identical: false,
            });
        }
        for (i, c) in segment.char_indices() {
            chars.push(Aligned {
                start: i,
                end: i + c.len_utf8(),
                normalized_start: inserted + i,
                identical: true,
            });
        }
        return Alignment::new(normalized, chars);
    }
    let originals: Vec<char> = segment.chars().collect();
    let new: Vec<char> = normalized.chars().collect();
    let prefix = originals
        .iter()
        .zip(&new)
        .take_while(|(a, b)| a == b)
        .count();
    let room = originals.len().min(new.len()) - prefix;
    let suffix = originals
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let starts = char_starts(segment);
    let middle = (starts[prefix], starts[originals.len() - suffix]);
    let mut chars = Vec::with_capacity(new.len());
    let mut normalized_start = 0;
    for (i, c) in new.iter().enumerate() {
        let (start, end, identical) = if i < prefix {
            (starts[i], starts[i + 1], true)
        } else if i >= new.len() - suffix {
            let k = i + originals.len() - new.len();
            (starts[k], starts[k + 1], true)
        } else {
            (middle.0, middle.1, false)
        };
        chars.push(Aligned {
            start,
            end,
            normalized_start,
            identical,
        });
        normalized_start += c.len_utf8();
    }
    Alignment::new(normalized, chars)
}

/// The alignment of the text a dropping spanner's pieces make of `normalized`, through the
/// normalizer's `base` alignment of it (None: it is the segment itself, `segment_len` bytes).
///
/// A character from the text keeps its alignment; a prefix character is aligned, not
/// identical, to the character at its span's start, as HF aligns a prepended character
/// (`NormalizedString::prepend`), or to the empty end of the segment after the last one.
/// Mirrors `spans_alignment` in `wordsplit/offsets.py`.
fn spanned_alignment(
    spanned: SpannedText,
    normalized: &str,
    base: Option<&Alignment>,
    segment_len: usize,
) -> Alignment {
    let origin = |p: usize| -> Aligned {
        match base {
            Some(base) => base.chars[base.char_of_byte[p] as usize],
            None => {
                let length = normalized[p..].chars().next().map_or(1, char::len_utf8);
                Aligned {
                    start: p,
                    end: p + length,
                    normalized_start: p,
                    identical: true,
                }
            }
        }
    };
    let mut chars = Vec::with_capacity(spanned.text.len());
    let mut position = 0;
    for &(start, end, prefix_len) in &spanned.pieces {
        if prefix_len > 0 {
            let (first_start, first_end) = if start < normalized.len() {
                let first = origin(start);
                (first.start, first.end)
            } else {
                (segment_len, segment_len)
            };
            for c in spanned.text[position..position + prefix_len].chars() {
                chars.push(Aligned {
                    start: first_start,
                    end: first_end,
                    normalized_start: position,
                    identical: false,
                });
                position += c.len_utf8();
            }
        }
        for (i, c) in normalized[start..end].char_indices() {
            chars.push(Aligned {
                normalized_start: position,
                ..origin(start + i)
            });
            position += c.len_utf8();
        }
    }
    Alignment::new(spanned.text, chars)
}

/// A literal token's id and place: its span in the text (with the whitespace it strips), a
/// word of its own.
fn place_literal(
    span: std::ops::Range<usize>,
    literal: &super::Literal,
    state: &mut Places<'_>,
    out: &mut Vec<u32>,
    places: &mut Vec<TokenPlace>,
) {
    out.push(literal.id);
    places.push([
        span.start as u64,
        span.end as u64,
        state.starts.before(span.start) as u64,
        state.ends.before(span.end) as u64,
        state.word,
    ]);
    state.word += 1;
}

/// What an offsets encode carries from segment to segment.
struct Places<'a> {
    starts: CharCounter<'a>,
    ends: CharCounter<'a>,
    word: u64,
}

impl Pipeline {
    /// Encode `text` as [`Pipeline::encode`] does, and give each token its place (see the
    /// module docs) in `places`.
    pub fn encode_with_offsets(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
        places: &mut Vec<TokenPlace>,
    ) -> Result<(), Error> {
        let mut state = Places {
            starts: CharCounter::new(text),
            ends: CharCounter::new(text),
            word: 0,
        };
        let Some(matcher) = &self.literal_matcher else {
            return self.place_plain(text, 0, text.len(), &mut state, out, places);
        };
        if let Some(scan) = self.normalizing_scan() {
            return self.place_normalizing(scan, text, policy, &mut state, out, places);
        }
        self.walk_literals(matcher, text, policy, |plain, literal| {
            self.place_plain(text, plain.start, plain.end, &mut state, out, places)?;
            if let Some((span, literal)) = literal {
                place_literal(span, literal, &mut state, out, places);
            }
            Ok(())
        })
    }

    /// [`Pipeline::encode_with_offsets`] of a vocabulary whose second literal pass runs on
    /// normalized text (`literals.rs`): a token that pass finds is placed at the original text
    /// its normalized characters are aligned to, as HF places it.
    fn place_normalizing(
        &self,
        scan: (
            &super::FlaggedScan,
            &(aho_corasick::AhoCorasick, Vec<usize>),
        ),
        text: &str,
        policy: &SpecialPolicy,
        state: &mut Places<'_>,
        out: &mut Vec<u32>,
        places: &mut Vec<TokenPlace>,
    ) -> Result<(), Error> {
        self.walk_normalizing(
            scan,
            text,
            policy,
            |stretch| self.segment_alignment(stretch),
            |step| match step {
                Step::Plain {
                    normalized: None,
                    piece,
                    ..
                } => {
                    // (Already normalized: the normalizer left the stretch as it is.)
                    self.place_aligned(text, piece.start, piece.end, None, state, out, places)
                }
                Step::Plain {
                    stretch,
                    normalized: Some(alignment),
                    piece,
                } => {
                    let part = alignment.slice(piece);
                    self.place_aligned(
                        text,
                        stretch.start,
                        stretch.end,
                        Some(part),
                        state,
                        out,
                        places,
                    )
                }
                Step::Second {
                    stretch,
                    normalized: Some(alignment),
                    span,
                    literal,
                } => {
                    let head = alignment.chars[alignment.char_of_byte[span.start] as usize];
                    let tail = alignment.chars[alignment.char_of_byte[span.end - 1] as usize];
                    let span = stretch.start + head.start..stretch.start + tail.end;
                    place_literal(span, literal, state, out, places);
                    Ok(())
                }
                Step::Second { span, literal, .. } | Step::First { span, literal } => {
                    place_literal(span, literal, state, out, places);
                    Ok(())
                }
            },
        )
    }

    /// Encode the plain text `text[start..end]` and place its tokens.
    fn place_plain(
        &self,
        text: &str,
        start: usize,
        end: usize,
        state: &mut Places<'_>,
        out: &mut Vec<u32>,
        places: &mut Vec<TokenPlace>,
    ) -> Result<(), Error> {
        let segment = &text[start..end];
        if segment.is_empty() {
            return Ok(());
        }
        let alignment = self.segment_alignment(segment)?;
        self.place_aligned(text, start, end, alignment, state, out, places)
    }

    /// The normalizer's text for `segment` aligned to it as HF aligns it, or None when it is
    /// `segment` itself.
    fn segment_alignment(&self, segment: &str) -> Result<Option<Alignment>, Error> {
        Ok(match &self.normalizer {
            NormalizeStage::None => None,
            NormalizeStage::Nfc => nfc_alignment(segment),
            NormalizeStage::Nfd | NormalizeStage::Nfkc | NormalizeStage::Nfkd => {
                form_alignment(segment, &self.normalizer)
            }
            // A normalizer program aligns its steps itself (as HF aligns each).
            NormalizeStage::Foreign(normalizer) if normalizer.tracks_alignment() => {
                program_alignment(&**normalizer, segment)?
            }
            NormalizeStage::Foreign(normalizer) => {
                let normalized = normalizer.normalize(segment)?;
                (normalized != segment).then(|| prefix_suffix_alignment(segment, normalized))
            }
        })
    }

    /// Split and encode the normalized text of the segment `text[start..end]` (its
    /// `alignment`'s text, aligned to the segment; None: the segment itself) and place its
    /// tokens. The alignment may be that of a part of the segment's normalized text (the
    /// pieces between HF's second-pass literals, `literals.rs`).
    #[allow(clippy::too_many_arguments)]
    fn place_aligned(
        &self,
        text: &str,
        start: usize,
        end: usize,
        alignment: Option<Alignment>,
        state: &mut Places<'_>,
        out: &mut Vec<u32>,
        places: &mut Vec<TokenPlace>,
    ) -> Result<(), Error> {
        let segment = &text[start..end];
        let normalized = alignment
            .as_ref()
            .map_or(segment, |a| a.normalized.as_str());
        let mut ends = Vec::with_capacity(normalized.len() / 4 + 1);
        let spanned = self.split_pieces(normalized, &mut ends)?;
        // A dropping spanner's pieces make their own text, aligned through the spans.
        let alignment = match spanned {
            Some(spanned) => Some(spanned_alignment(
                spanned,
                normalized,
                alignment.as_ref(),
                segment.len(),
            )),
            None => alignment,
        };
        let normalized = alignment
            .as_ref()
            .map_or(segment, |a| a.normalized.as_str());
        let first = out.len();
        self.encode_piece_ends(normalized, &ends, out)?;
        let tables = &*self.tables;
        let (mut position, mut piece) = (0usize, 0usize);
        // Characters before the current token (for the unnormalized case).
        let ascii = state.starts.ascii;
        let mut chars = state.starts.before(start);
        let bytes_of = normalized.as_bytes();
        // A vocabulary that lacks some bytes drops them from a piece before merging: they are
        // in no token's range (skipped before a token, or inside one between its bytes).
        // With an unk token they are that token instead, which spans them (HF's range).
        let lacks = tables.lacks_bytes() && self.unk.is_none();
        let (unk_id, fuse) = match self.unk {
            Some((id, fuse)) if tables.lacks_bytes() => (Some(id), fuse),
            _ => (None, false),
        };
        let skip_missing = |position: &mut usize, piece: &mut usize, chars: &mut usize| {
            while *piece < ends.len() {
                let from = *position;
                while *position < ends[*piece] && !tables.has_byte(bytes_of[*position]) {
                    *position += 1;
                }
                if alignment.is_none() {
                    let skipped = &text.as_bytes()[start + from..start + *position];
                    *chars += skipped.iter().filter(|&&x| starts_char(x)).count();
                }
                if *position == ends[*piece] {
                    *piece += 1;
                } else {
                    break;
                }
            }
        };
        for &id in &out[first..] {
            let length = tables.token(id).map_or(0, <[u8]>::len);
            if lacks {
                skip_missing(&mut position, &mut piece, &mut chars);
            }
            let a = position;
            let at_unknown = |p: usize| p < ends[piece] && !tables.has_byte(bytes_of[p]);
            let (length, b) = if unk_id == Some(id) && piece < ends.len() && at_unknown(a) {
                // The unknown byte, or the run of them a fused unk token stands for.
                let mut b = a + 1;
                while fuse && at_unknown(b) {
                    b += 1;
                }
                (b - a, b)
            } else if lacks && piece < ends.len() {
                // The token's `length` bytes, with the missing bytes between them.
                let (mut b, mut count) = (a, 0);
                while count < length && b < ends[piece] {
                    count += usize::from(tables.has_byte(bytes_of[b]));
                    b += 1;
                }
                if count < length {
                    (length, ends[piece] + 1) // does not tile: the error below
                } else {
                    (length, b)
                }
            } else {
                (length, position + length)
            };
            if length == 0 || piece >= ends.len() || b > ends[piece] {
                let piece_start = if piece == 0 { 0 } else { ends[piece - 1] };
                let piece_end = ends.get(piece).copied().unwrap_or(normalized.len());
                return Err(self.untiled(&normalized.as_bytes()[piece_start..piece_end]));
            }
            let word = state.word + piece as u64;
            places.push(match &alignment {
                None => {
                    // One pass over the token's bytes: the characters that start in it.
                    let bytes = &text.as_bytes()[start + a..start + b];
                    let char_start = if ascii || starts_char(bytes[0]) {
                        chars
                    } else {
                        chars - 1
                    };
                    chars += if ascii {
                        b - a // the token's bytes, and any missing bytes dropped between them
                    } else {
                        bytes.iter().filter(|&&x| starts_char(x)).count()
                    };
                    [
                        (start + a) as u64,
                        (start + b) as u64,
                        char_start as u64,
                        chars as u64,
                        word,
                    ]
                }
                Some(alignment) => {
                    let head = alignment.chars[alignment.char_of_byte[a] as usize];
                    let tail = alignment.chars[alignment.char_of_byte[b - 1] as usize];
                    let byte_start = if head.identical {
                        head.start + (a - head.normalized_start)
                    } else {
                        head.start
                    };
                    let byte_end = if tail.identical {
                        tail.start + (b - tail.normalized_start)
                    } else {
                        tail.end
                    };
                    [
                        (start + byte_start) as u64,
                        (start + byte_end) as u64,
                        state.starts.before(start + head.start) as u64,
                        state.ends.before(start + tail.end) as u64,
                        word,
                    ]
                }
            });
            position = b;
            if position == ends[piece] {
                piece += 1;
            }
        }
        if lacks {
            skip_missing(&mut position, &mut piece, &mut chars);
        }
        if piece != ends.len() {
            let piece_start = if piece == 0 { 0 } else { ends[piece - 1] };
            return Err(self.untiled(&normalized.as_bytes()[piece_start..ends[piece]]));
        }
        if alignment.is_none() {
            // The counters move on to the segment's end without counting it again.
            state.starts.set(end, chars);
            state.ends.set(end, chars);
        }
        state.word += ends.len() as u64;
        Ok(())
    }

    /// The ends of the pieces the spanner cuts `text` into (as `encode_split` cuts it, but
    /// always by the spanner stage), and the text a dropping spanner's pieces make (ends are
    /// in it then).
    fn split_pieces(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<SpannedText>, Error> {
        self.spanner.split(text, ends)
    }

    /// The error for ids whose bytes do not spell their piece (only a foreign encoder can
    /// return such ids).
    fn untiled(&self, piece: &[u8]) -> Error {
        let encoder = match &self.encoder {
            EncodeStage::Foreign(encoder) => encoder.name(),
            EncodeStage::Native(_) => "auto",
        };
        Error::Untiled {
            encoder: encoder.to_owned(),
            piece: piece.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_counter_any_order() {
        let text = "aé😀b";
        let mut counter = CharCounter::new(text);
        assert_eq!(counter.before(3), 2);
        assert_eq!(counter.before(1), 1);
        assert_eq!(counter.before(text.len()), 4);
        counter.set(3, 2);
        assert_eq!(counter.before(7), 3);
    }

    #[test]
    fn nfc_alignment_as_hf() {
        // "e" + U+0301 composes: the result is aligned to the "e" alone (HF drops the mark).
        let alignment = nfc_alignment("xe\u{301}").expect("changed");
        assert_eq!(alignment.normalized, "x\u{e9}");
        let spans: Vec<_> = alignment
            .chars
            .iter()
            .map(|a| (a.start, a.end, a.identical))
            .collect();
        assert_eq!(spans, [(0, 1, true), (1, 2, false)]);
        assert!(nfc_alignment("caf\u{e9}").is_none());
    }

    #[test]
    fn form_alignment_as_hf() {
        // NFKC makes "fi" of the ligature: "f" replaces it, "i" is inserted after it, so both
        // are aligned to it; "!" is itself.
        let alignment = form_alignment("\u{fb01}!", &NormalizeStage::Nfkc).expect("changed");
        assert_eq!(alignment.normalized, "fi!");
        let spans: Vec<_> = alignment
            .chars
            .iter()
            .map(|a| (a.start, a.end, a.identical))
            .collect();
        assert_eq!(spans, [(0, 3, false), (0, 3, false), (3, 4, true)]);
        assert!(form_alignment("e\u{301}", &NormalizeStage::Nfd).is_none());
        assert!(form_alignment("caf\u{e9}", &NormalizeStage::Nfkd).is_some());
    }

    #[test]
    fn spanned_alignment_as_hf_prepend() {
        // "ab  c" as the pieces " ab" and " c": each prefix space is aligned to its piece's
        // first character, not identical to it; the dropped spaces are in no character.
        let spanned = SpannedText {
            text: " ab c".to_owned(),
            pieces: vec![(0, 2, 1), (4, 5, 1)],
        };
        let alignment = spanned_alignment(spanned, "ab  c", None, 5);
        let spans: Vec<_> = alignment
            .chars
            .iter()
            .map(|a| (a.start, a.end, a.normalized_start, a.identical))
            .collect();
        assert_eq!(
            spans,
            [
                (0, 1, 0, false),
                (0, 1, 1, true),
                (1, 2, 2, true),
                (4, 5, 3, false),
                (4, 5, 4, true)
            ]
        );
        // Through a normalizer's alignment: "xe\u{301}" is NFC "x\u{e9}"; a prefix before
        // "\u{e9}" takes the "e" it is aligned to.
        let base = nfc_alignment("xe\u{301}").expect("changed");
        let spanned = SpannedText {
            text: " \u{e9}".to_owned(),
            pieces: vec![(1, 3, 1)],
        };
        let alignment = spanned_alignment(spanned, "x\u{e9}", Some(&base), 4);
        let spans: Vec<_> = alignment
            .chars
            .iter()
            .map(|a| (a.start, a.end, a.normalized_start, a.identical))
            .collect();
        assert_eq!(spans, [(1, 2, 0, false), (1, 2, 1, false)]);
    }

    #[test]
    fn prefix_suffix_alignment_maps_the_middle() {
        let alignment = prefix_suffix_alignment("aXYb", "aZb".to_owned());
        let spans: Vec<_> = alignment
            .chars
            .iter()
            .map(|a| (a.start, a.end, a.identical))
            .collect();
        assert_eq!(spans, [(0, 1, true), (1, 3, false), (3, 4, true)]);
        // Text put before the segment is aligned to its first character.
        let alignment = prefix_suffix_alignment("\u{e9}x", "\u{2581}\u{2581}\u{e9}x".to_owned());
        let spans: Vec<_> = alignment
            .chars
            .iter()
            .map(|a| (a.start, a.end, a.normalized_start, a.identical))
            .collect();
        assert_eq!(
            spans,
            [
                (0, 2, 0, false),
                (0, 2, 3, false),
                (0, 2, 6, true),
                (2, 3, 8, true)
            ]
        );
    }
}
