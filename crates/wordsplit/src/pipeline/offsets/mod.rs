//! Offsets: where each token of an encode came from in the text, as HF tokenizers reports it
//! (`Encoding.offsets` and word ids). The Python package's tests hold these offsets to HF's
//! and to its pure-Python engine's (`encode_with_offsets`).
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
//!   program: the alignment its `alignment_parts` method carries through every step; a
//!   plug-in normalizer: the text outside the common prefix and suffix maps to the whole
//!   changed middle, text put before the whole segment to its first character), and a token
//!   gets the span from its first character's start to its last one's end;
//! * a spanner that drops text gives the text its pieces make, aligned through its spans
//!   (see `spanned_alignment`): dropped text is in no token's range;
//! * `word` is the index of the token's piece: pieces of the spanner and literal tokens,
//!   counted in order over the whole text (HF's word ids).
//!
//! Byte positions count in the text's UTF-8, char positions in its code points.
//!
//! `alignment.rs` aligns normalized text to the original, `char_counter.rs` counts characters
//! up to a byte position; the walk that places each token is here, its tests in `tests.rs`.

mod alignment;
mod char_counter;
#[cfg(test)]
mod tests;

use self::alignment::{
    form_alignment, nfc_alignment, parts_alignment, prefix_suffix_alignment, program_alignment,
    spanned_alignment, Alignment,
};
use self::char_counter::{starts_char, CharCounter};
use super::second_pass::Step;
use super::{EncodeStage, NormalizeStage, Pipeline, SpannedText, SpecialPolicy};
use crate::error::Error;

/// One token's place: `[byte start, byte end, char start, char end, word]`.
pub type TokenPlace = [u64; 5];

/// Where an encoder says a token is: `(piece, start, end)`, bytes of the normalized text.
type TokenSpan = (usize, usize, usize);

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
    if let Some(lengths) = state.lengths.as_deref_mut() {
        lengths.push(0);
    }
    state.word += 1;
}

/// The place of the token at bytes `range` of a normalized text that `alignment` aligns to
/// the segment at byte `start` of the text, in piece `word`: from its first character's start
/// to its last one's end, byte for byte inside a character that is the original one itself.
fn aligned_place(
    alignment: &Alignment,
    range: std::ops::Range<usize>,
    start: usize,
    state: &mut Places<'_>,
    word: u64,
) -> TokenPlace {
    let (a, b) = (range.start, range.end);
    let head = alignment.chars[alignment.char_of_byte[a] as usize];
    let tail = alignment.chars[alignment.char_of_byte[b - 1] as usize];
    let byte_start = match head.identical {
        true => head.start + (a - head.normalized_start),
        false => head.start,
    };
    let byte_end = match tail.identical {
        true => tail.start + (b - tail.normalized_start),
        false => tail.end,
    };
    [
        (start + byte_start) as u64,
        (start + byte_end) as u64,
        state.starts.before(start + head.start) as u64,
        state.ends.before(start + tail.end) as u64,
        word,
    ]
}

/// What an offsets encode carries from segment to segment.
struct Places<'a> {
    starts: CharCounter<'a>,
    ends: CharCounter<'a>,
    word: u64,
    /// Each token's length in bytes of the normalized text, when asked for (a literal's: 0).
    lengths: Option<&'a mut Vec<u32>>,
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
        self.encode_with_places(text, policy, out, places, None)
    }

    /// [`Pipeline::encode_with_offsets`], and the length of each token in the normalized
    /// text's bytes in `lengths` (0 for a literal): what tells a byte-fallback token (one
    /// byte) from a token that spells `<0xNN>` (six).
    pub fn encode_with_normalized_lengths(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
        places: &mut Vec<TokenPlace>,
        lengths: &mut Vec<u32>,
    ) -> Result<(), Error> {
        self.encode_with_places(text, policy, out, places, Some(lengths))
    }

    fn encode_with_places(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
        places: &mut Vec<TokenPlace>,
        lengths: Option<&mut Vec<u32>>,
    ) -> Result<(), Error> {
        let mut state = Places {
            starts: CharCounter::new(text),
            ends: CharCounter::new(text),
            word: 0,
            lengths,
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
        let metaspace = self.normalizer.metaspace();
        self.walk_normalizing(
            scan,
            text,
            policy,
            |stretch, later| match metaspace {
                // (the second pass searches the text before HF's Metaspace pre-tokenizer, which
                // then runs on each part: aligned once a stretch, itself when left as it is)
                Some(m) => Ok(Some(
                    parts_alignment("Metaspace", m.before_parts(stretch)?, stretch)?
                        .unwrap_or_else(|| Alignment::identity(stretch)),
                )),
                None => self.segment_alignment(stretch, later),
            },
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
                    let mut part = alignment.slice(piece.clone());
                    if let Some(m) = metaspace {
                        // (Metaspace on the part: `Alignment::metaspace_part`; a ▁ for `first`
                        // before what comes from the input's first character)
                        let first = stretch.start == 0;
                        part = part.metaspace_part(m, |a| m.prepends_part(first && a.start == 0));
                    }
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
        let alignment = self.segment_alignment(segment, start > 0)?;
        self.place_aligned(text, start, end, alignment, state, out, places)
    }

    /// The normalizer's text for `segment` aligned to it as HF aligns it, or None when it is
    /// `segment` itself (`later`: the segment does not start the text, see
    /// [`crate::Normalizer::normalize_later`]).
    fn segment_alignment(&self, segment: &str, later: bool) -> Result<Option<Alignment>, Error> {
        Ok(match &self.normalizer {
            NormalizeStage::None => None,
            NormalizeStage::Nfc => nfc_alignment(segment),
            NormalizeStage::Nfd | NormalizeStage::Nfkc | NormalizeStage::Nfkd => {
                form_alignment(segment, &self.normalizer)
            }
            // A normalizer program aligns its steps itself (as HF aligns each).
            NormalizeStage::Foreign(normalizer) if normalizer.tracks_alignment() => {
                program_alignment(&**normalizer, segment, later)?
            }
            NormalizeStage::Foreign(normalizer) => {
                let normalized = if later {
                    normalizer.normalize_later(segment)?
                } else {
                    normalizer.normalize(segment)?
                };
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
        // A word model's tokens (and Unigram's unknown ones) stand for parts of their piece
        // their bytes do not spell: their lengths say which.
        let mut lengths = self.encode_with_lengths(normalized, &ends, out)?;
        if lengths.is_none() {
            self.encode_piece_ends(normalized, &ends, out)?;
            if let Some(spans) = self.token_spans(normalized, &ends)? {
                let placed = (segment, start, alignment.as_ref());
                return self.place_spans(text, placed, &ends, &spans, &out[first..], state, places);
            }
            lengths = self.token_lengths(normalized, &ends)?;
        }
        if lengths
            .as_ref()
            .is_some_and(|l| l.len() != out.len() - first)
        {
            return Err(self.untiled(normalized.as_bytes()));
        }
        let tables = &*self.tables;
        let (mut position, mut piece) = (0usize, 0usize);
        // Characters before the current token (for the unnormalized case).
        let ascii = state.starts.ascii;
        let mut chars = state.starts.before(start);
        let bytes_of = normalized.as_bytes();
        // A vocabulary that lacks some bytes drops them from a piece before merging: they are
        // in no token's range (skipped before a token, or inside one between its bytes).
        // With an unk token they are that token instead, which spans them (HF's range).
        let lacks = tables.lacks_bytes() && self.unk.is_none() && lengths.is_none();
        let (unk_id, fuse) = match self.unk {
            Some((id, fuse)) if tables.lacks_bytes() && lengths.is_none() => (Some(id), fuse),
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
        for (k, &id) in out[first..].iter().enumerate() {
            let length = match &lengths {
                Some(lengths) => lengths[k],
                None => tables.token(id).map_or(0, <[u8]>::len),
            };
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
                Some(alignment) => aligned_place(alignment, a..b, start, state, word),
            });
            if let Some(lengths) = state.lengths.as_deref_mut() {
                lengths.push((b - a) as u32);
            }
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

    /// The ends of the pieces the spanner cuts `text` into (as `encode_split` cuts it: by the
    /// native run of a split program when there is one, which gives the foreign stage's
    /// pieces without a call out of the core), and the text a dropping spanner's pieces make
    /// (ends are in it then).
    fn split_pieces(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<SpannedText>, Error> {
        match &self.program {
            Some(_) => self.program_spans(text, ends),
            None => self.spanner.split(text, ends),
        }
    }

    /// Each token's `(piece, start, end)`, bytes of the normalized text, when the encoder says
    /// where its tokens are ([`crate::Encoder::token_spans`]); None when it does not.
    fn token_spans(&self, text: &str, ends: &[usize]) -> Result<Option<Vec<TokenSpan>>, Error> {
        let EncodeStage::Foreign(encoder) = &self.encoder else {
            return Ok(None);
        };
        let (mut spans, mut all) = (Vec::new(), Vec::new());
        let mut start = 0;
        for (piece, &end) in ends.iter().enumerate() {
            spans.clear();
            if !encoder.token_spans(&text.as_bytes()[start..end], &mut spans)? {
                return Ok(None);
            }
            all.extend(spans.iter().map(|&(a, b)| (piece, start + a, start + b)));
            start = end;
        }
        Ok(Some(all))
    }

    /// Places the tokens `ids` of the segment `text[start..end]` (`placed`: the segment, its
    /// start, its normalized text's alignment) at their `spans` ([`Self::token_spans`]).
    #[allow(clippy::too_many_arguments)]
    fn place_spans(
        &self,
        text: &str,
        (segment, start, alignment): (&str, usize, Option<&Alignment>),
        ends: &[usize],
        spans: &[TokenSpan],
        ids: &[u32],
        state: &mut Places<'_>,
        places: &mut Vec<TokenPlace>,
    ) -> Result<(), Error> {
        let normalized = alignment.map_or(segment, |a| a.normalized.as_str());
        if spans.len() != ids.len() {
            return Err(self.untiled(normalized.as_bytes()));
        }
        for &(piece, a, b) in spans {
            let piece_start = if piece == 0 { 0 } else { ends[piece - 1] };
            if a < piece_start || a >= b || b > ends[piece] {
                return Err(self.untiled(&normalized.as_bytes()[piece_start..ends[piece]]));
            }
            let word = state.word + piece as u64;
            places.push(match alignment {
                None => {
                    // (a token that starts inside a character gets the whole character)
                    let inside = !starts_char(text.as_bytes()[start + a]);
                    let char_start = state.starts.before(start + a) - usize::from(inside);
                    let char_end = state.ends.before(start + b);
                    let (a, b) = ((start + a) as u64, (start + b) as u64);
                    [a, b, char_start as u64, char_end as u64, word]
                }
                Some(alignment) => aligned_place(alignment, a..b, start, state, word),
            });
            if let Some(lengths) = state.lengths.as_deref_mut() {
                lengths.push((b - a) as u32);
            }
        }
        state.word += ends.len() as u64;
        Ok(())
    }

    /// The ids of the pieces of `text` (ending at `ends`) appended to `out`, and the length in
    /// bytes of the part of its piece each stands for, when the encoder gives both in one call
    /// ([`crate::Encoder::encode_with_lengths`]: one search per piece, where
    /// [`Self::encode_piece_ends`] and [`Self::token_lengths`] would search twice); None,
    /// with `out` as it was, when it does not.
    fn encode_with_lengths(
        &self,
        text: &str,
        ends: &[usize],
        out: &mut Vec<u32>,
    ) -> Result<Option<Vec<usize>>, Error> {
        let EncodeStage::Foreign(encoder) = &self.encoder else {
            return Ok(None);
        };
        let first = out.len();
        let mut lengths = Vec::with_capacity(ends.len());
        let mut start = 0;
        for &end in ends {
            if !encoder.encode_with_lengths(&text.as_bytes()[start..end], out, &mut lengths)? {
                out.truncate(first);
                return Ok(None);
            }
            start = end;
        }
        Ok(Some(lengths))
    }

    /// The length in bytes of the part of its piece each token stands for, when the encoder's
    /// tokens do not spell their pieces ([`crate::Encoder::token_lengths`]); None when they do.
    fn token_lengths(&self, text: &str, ends: &[usize]) -> Result<Option<Vec<usize>>, Error> {
        let EncodeStage::Foreign(encoder) = &self.encoder else {
            return Ok(None);
        };
        let mut lengths = Vec::with_capacity(ends.len());
        let mut start = 0;
        for &end in ends {
            if !encoder.token_lengths(&text.as_bytes()[start..end], &mut lengths)? {
                return Ok(None);
            }
            start = end;
        }
        Ok(Some(lengths))
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
