//! A normalized segment aligned to the original text, character by character, as HF
//! tokenizers aligns it: each normalizer's alignment (a Unicode form, a normalizer program, a
//! plug-in normalizer) and that of the text a dropping spanner's pieces make.

use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

use crate::error::Error;
use crate::normalizers::sentencepiece::MetaspaceNormalizer;
use crate::normalizers::{normalizer_error, AlignmentParts, Normalizer};
use crate::pipeline::{NormalizeStage, SpannedText};

/// A normalized character's origin: its original byte range (relative to the segment), its
/// byte start in the normalized segment, and whether it is that original character itself
/// (then a token that starts or ends inside it maps byte for byte).
#[derive(Clone, Copy)]
pub(super) struct Aligned {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) normalized_start: usize,
    pub(super) identical: bool,
}

/// A segment the normalizer changed: its normalized text, each normalized character's
/// origin, and the character index of each normalized byte.
pub(super) struct Alignment {
    pub(super) normalized: String,
    pub(super) chars: Vec<Aligned>,
    pub(super) char_of_byte: Vec<u32>,
}

impl AsRef<str> for Alignment {
    fn as_ref(&self) -> &str {
        &self.normalized
    }
}

impl Alignment {
    /// The alignment of `self.normalized[range]` (a range of whole characters), to the same
    /// original text.
    pub(super) fn slice(&self, range: std::ops::Range<usize>) -> Self {
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

    /// `segment` aligned to itself, character by character.
    pub(super) fn identity(segment: &str) -> Self {
        let chars = segment
            .char_indices()
            .map(|(i, c)| Aligned {
                start: i,
                end: i + c.len_utf8(),
                normalized_start: i,
                identical: true,
            })
            .collect();
        Self::new(segment.to_owned(), chars)
    }

    /// HF's `Metaspace` on this text (a part its second pass leaves, see
    /// [`MetaspaceNormalizer::part`]), aligned as HF aligns it: each space's replacement to
    /// that space, one put before the part (after `WhitespaceSplit`, before each word of it)
    /// to its first character, when `prepends` says so of that character's origin and it is
    /// not a space or the replacement; after `WhitespaceSplit` with `always` the white space
    /// dropped.
    pub(super) fn metaspace_part(
        &self,
        metaspace: &MetaspaceNormalizer,
        prepends: impl Fn(&Aligned) -> bool,
    ) -> Self {
        let replacement = metaspace.replacement();
        let words = metaspace.whitespace_split();
        let keeps_white = metaspace.keeps_white_space();
        let mut normalized = String::with_capacity(self.normalized.len() + 8);
        let mut chars = Vec::with_capacity(self.chars.len() + 1);
        let mut in_word = false;
        for (k, (c, aligned)) in self.normalized.chars().zip(&self.chars).enumerate() {
            let starts = if words {
                let white = c.is_whitespace();
                let starts = !white && !in_word;
                in_word = !white;
                if white && !keeps_white {
                    continue;
                }
                starts
            } else {
                k == 0 && c != ' '
            };
            if starts && c != replacement && prepends(aligned) {
                chars.push(Aligned {
                    normalized_start: normalized.len(),
                    identical: false,
                    ..*aligned
                });
                normalized.push(replacement);
            }
            let space = !words && c == ' ';
            chars.push(Aligned {
                normalized_start: normalized.len(),
                identical: aligned.identical && !space,
                ..*aligned
            });
            normalized.push(if space { replacement } else { c });
        }
        Self::new(normalized, chars)
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
pub(super) fn nfc_alignment(segment: &str) -> Option<Alignment> {
    if segment.is_ascii() || is_nfc_quick(segment.chars()) == IsNormalized::Yes {
        return None;
    }
    changes_alignment(segment, segment.nfc())
}

/// HF's NFD, NFKC or NFKD of `segment` with HF's alignments (see [`changes_alignment`]), or
/// None when the form leaves it as it is.
pub(super) fn form_alignment(segment: &str, stage: &NormalizeStage) -> Option<Alignment> {
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
/// is `segment` itself.
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

/// A normalizer program's text and alignment, from its `alignment_parts` method (HF's
/// alignment carried through every step, as the alignment of the first characters followed
/// by the segment's last `tail` characters, each itself), or None when it left `segment` as
/// it is.
pub(super) fn program_alignment(
    normalizer: &dyn Normalizer,
    segment: &str,
    later: bool,
) -> Result<Option<Alignment>, Error> {
    let parts = if later {
        normalizer.alignment_parts_later(segment)?
    } else {
        normalizer.alignment_parts(segment)?
    };
    parts_alignment(normalizer.name(), parts, segment)
}

/// The alignment of `parts` (a normalizer's [`AlignmentParts`] of `segment`; None: it left
/// the segment as it is), checked (`name`: the normalizer's, for its error).
pub(super) fn parts_alignment(
    name: &str,
    parts: Option<AlignmentParts>,
    segment: &str,
) -> Result<Option<Alignment>, Error> {
    {
        let Some(parts) = parts else {
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
                name,
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
pub(super) fn prefix_suffix_alignment(segment: &str, normalized: String) -> Alignment {
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
pub(super) fn spanned_alignment(
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
