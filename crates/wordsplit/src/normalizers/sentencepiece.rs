//! SentencePiece's normalizer ([`SentencePieceNormalizer`]) and HF's `Metaspace`
//! pre-tokenizer run as a normalizer ([`MetaspaceNormalizer`]): the stages of
//! [`NormalizerSpec::SentencePiece`] and [`NormalizerSpec::Metaspace`].
//!
//! ```
//! use wordsplit::normalizers::sentencepiece::SentencePieceNormalizer;
//! use wordsplit::spec::SentencePieceFlags;
//! use wordsplit::Normalizer;
//! let flags = SentencePieceFlags { remove_extra_whitespaces: false, ..Default::default() };
//! let normalizer = SentencePieceNormalizer::new(flags);
//! assert_eq!(normalizer.normalize("Hello  world").unwrap(), "▁Hello▁▁world");
//! ```

use std::sync::Arc;

use aho_corasick::AhoCorasick;

use super::charsmap::CharsMap;
use super::metaspace_words::{words_and_ends, words_with_replacement};
use super::program::LiteralProgram;
use super::unicode_program::UnicodeProgram;
use crate::encoders::sentencepiece::PieceCuts;
use crate::error::Error;
use crate::normalizers::{AlignmentParts, Normalizer};

#[path = "sentencepiece_alignment.rs"]
pub(in crate::normalizers) mod alignment;
#[path = "metaspace_parts.rs"]
mod metaspace_parts;
use crate::spec::{NormalizerSpec, PrependScheme, SentencePieceFlags};

/// SentencePiece's normalizer (`Normalizer::Normalize`): the character map, then the spaces.
///
/// In order, as `normalizer.cc` does it, over the text cut into chunks (each place where the
/// map's longest key matches is one chunk, its output, as `NormalizePrefix` finds it; every
/// other character is one chunk, itself; with the identity map, only spaces (U+0020) change):
/// with `remove_extra_whitespaces`, leading chunks that are exactly a space are dropped (text
/// of such chunks only is empty), and each chunk loses its leading spaces after a chunk that
/// ended with one; each space becomes `▁` with `escape_whitespaces`; `add_dummy_prefix` puts
/// one `▁` before non-empty text (after it, with `treat_whitespace_as_suffix`); with
/// `remove_extra_whitespaces` trailing `▁` (typed ones too) are dropped before that. (The
/// Python package's `SentencePieceNormalizer` is the reference; text is valid UTF-8 here, so
/// sentencepiece's handling of malformed bytes never applies.)
pub struct SentencePieceNormalizer {
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    suffix: bool,
    /// `▁`, or a space when whitespace is not escaped.
    space: &'static str,
    map: Option<Arc<CharsMap>>,
    /// The model's user-defined pieces, longest first, matched before the map at each place
    /// (none holds a space: [`NormalizeStage::from_spec`](super::NormalizeStage::from_spec)
    /// leaves such a model to the Python package).
    user_defined: Vec<String>,
    /// Whether a user-defined piece starts with the byte.
    user_defined_starts: [bool; 256],
}

impl SentencePieceNormalizer {
    /// The normalizer of SentencePiece's normalizer spec `flags`, with the identity map.
    pub fn new(flags: SentencePieceFlags) -> Self {
        Self {
            add_dummy_prefix: flags.add_dummy_prefix,
            remove_extra_whitespaces: flags.remove_extra_whitespaces,
            suffix: flags.treat_whitespace_as_suffix,
            space: if flags.escape_whitespaces {
                "\u{2581}"
            } else {
                " "
            },
            map: None,
            user_defined: Vec::new(),
            user_defined_starts: [false; 256],
        }
    }

    /// The normalizer of `flags` with the character map `map` (None: the identity).
    pub fn with_map(flags: SentencePieceFlags, map: Option<Arc<CharsMap>>) -> Self {
        Self {
            map: map.filter(|map| !map.is_empty()),
            ..Self::new(flags)
        }
    }

    /// This normalizer with a model's user-defined pieces, which sentencepiece's
    /// `PrefixMatcher` copies unmapped: at each place the longest one that starts there is one
    /// chunk, before any key of the map (under the identity map that is the same text).
    pub fn with_user_defined(mut self, pieces: &[String]) -> Self {
        let mut pieces: Vec<String> = pieces.iter().filter(|p| !p.is_empty()).cloned().collect();
        pieces.sort_by_key(|piece| std::cmp::Reverse(piece.len()));
        for piece in &pieces {
            self.user_defined_starts[usize::from(piece.as_bytes()[0])] = true;
        }
        self.user_defined = pieces;
        self
    }

    /// The longest user-defined piece that starts at byte `at` of `text`, if any.
    fn user_defined_at(&self, text: &str, at: usize) -> Option<&str> {
        // (a piece's first byte is never a UTF-8 continuation byte, so `at` is a character
        // boundary once it holds one)
        if !self.user_defined_starts[usize::from(text.as_bytes()[at])] {
            return None;
        }
        let rest = &text[at..];
        self.user_defined
            .iter()
            .find(|piece| rest.starts_with(piece.as_str()))
            .map(String::as_str)
    }

    /// [`Normalizer::normalize`] with a character map: the chunks as the type's docs say.
    fn normalize_mapped(&self, map: &CharsMap, text: &str) -> String {
        let (squeeze, space) = (self.remove_extra_whitespaces, self.space);
        if text.is_empty() {
            return String::new();
        }
        let mut out = String::with_capacity(text.len() + 8);
        // Whether a chunk other than a space alone came (the text is not empty), and whether
        // the last chunk written ended with a space.
        let (mut started, mut previous_space) = (!squeeze, squeeze);
        let start = |out: &mut String| {
            if self.add_dummy_prefix && !self.suffix {
                out.push_str(space);
            }
        };
        if started {
            start(&mut out);
        }
        let bytes = text.as_bytes();
        let (mut at, mut run) = (0, 0); // `text[run..at]`: characters no key matched
        while at < bytes.len() {
            let found = if let Some(piece) = self.user_defined_at(text, at) {
                Some((piece.len(), piece))
            } else if map.starts_with_byte(bytes[at]) {
                map.longest(&bytes[at..])
            } else {
                None
            };
            let Some((length, output)) = found else {
                at += 1;
                continue;
            };
            let mut unmatched = &text[run..at];
            if !started {
                unmatched = unmatched.trim_start_matches(' ');
                if !unmatched.is_empty() {
                    started = true;
                    start(&mut out);
                }
            }
            previous_space = escape_run(&mut out, unmatched, space, squeeze, previous_space);
            if !started && (output != " " || !squeeze) {
                started = true;
                start(&mut out);
            }
            let output = if previous_space {
                output.trim_start_matches(' ')
            } else {
                output
            };
            if !output.is_empty() {
                escape_spaces(&mut out, output, space, false, false);
                previous_space = squeeze && output.ends_with(' ');
            }
            at += length;
            run = at;
        }
        let mut unmatched = &text[run..];
        if !started {
            unmatched = unmatched.trim_start_matches(' ');
            if unmatched.is_empty() {
                return String::new();
            }
            start(&mut out);
        }
        escape_run(&mut out, unmatched, space, squeeze, previous_space);
        if squeeze {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.add_dummy_prefix && self.suffix {
            out.push_str(space);
        }
        out
    }
}

impl SentencePieceNormalizer {
    /// The normalized text of `text` cut into pieces as the SentencePiece spanner would cut
    /// it (the user-defined pieces `matcher` finds, which hold no space or `▁`) and then at
    /// `cuts`, in one pass over `text` with no branch per byte: the ends in `ends`. None
    /// (nothing done) for a normalizer other than the identity map with escaped spaces and no
    /// squeezing or suffix (Llama 2's and Gemma's), which [`Normalizer::normalize`] runs.
    /// The cuts are read on the text before its spaces are escaped, where a space stands for
    /// the `▁` it becomes ([`PieceCuts`]).
    ///
    /// ```
    /// use wordsplit::encoders::sentencepiece::PieceCuts;
    /// use wordsplit::normalizers::sentencepiece::SentencePieceNormalizer;
    /// use wordsplit::spec::SentencePieceFlags;
    /// let flags = SentencePieceFlags { remove_extra_whitespaces: false, ..Default::default() };
    /// let cuts = PieceCuts::from_tokens(["▁▁".as_bytes(), "▁a".as_bytes(), b"ab"]);
    /// let mut ends = vec![];
    /// let text = SentencePieceNormalizer::new(flags).normalized_pieces("ab  a.", None, &cuts, &mut ends);
    /// assert_eq!((text.as_deref(), ends), (Some("▁ab▁▁a."), vec![5, 12, 13]));
    /// ```
    pub fn normalized_pieces(
        &self,
        text: &str,
        matcher: Option<&AhoCorasick>,
        cuts: &PieceCuts,
        ends: &mut Vec<usize>,
    ) -> Option<String> {
        if self.map.is_some() || self.remove_extra_whitespaces || self.suffix || self.space == " " {
            return None;
        }
        if text.is_empty() {
            return Some(String::new());
        }
        let bytes = text.as_bytes();
        // (each byte one to three bytes out, the dummy prefix, a 4-byte store past the end)
        let mut out: Vec<u8> = Vec::with_capacity(3 * bytes.len() + 8);
        let mut prev = None;
        if self.add_dummy_prefix {
            out.extend_from_slice(self.space.as_bytes());
            prev = Some(b' ');
        }
        let mut done = 0;
        for found in matcher.into_iter().flat_map(|m| m.find_iter(text)) {
            escape_and_cut(&bytes[done..found.start()], prev, cuts, &mut out, ends);
            push_end(ends, out.len());
            out.extend_from_slice(&bytes[found.start()..found.end()]);
            push_end(ends, out.len());
            (done, prev) = (found.end(), None);
        }
        escape_and_cut(&bytes[done..], prev, cuts, &mut out, ends);
        push_end(ends, out.len());
        // SAFETY: `out` is `text` with each space (one byte) replaced by `▁`, and `▁`s.
        Some(unsafe { String::from_utf8_unchecked(out) })
    }
}

/// `ends` with `end` pushed unless it is the last end already (or 0: no empty piece).
fn push_end(ends: &mut Vec<usize>, end: usize) {
    if end > ends.last().copied().unwrap_or(0) {
        ends.push(end);
    }
}

/// `text` appended to `out` with each space escaped as `▁`, and the end in `out` of each
/// piece before a cut `cuts` allows pushed to `ends` (`prev`: the byte before `text`, a space
/// for the dummy prefix; None: `text` starts a piece). One store per byte and per end, and no
/// branch on the byte (see [`escape_spaces`]).
fn escape_and_cut(
    text: &[u8],
    prev: Option<u8>,
    cuts: &PieceCuts,
    out: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) {
    let Some((&first, _)) = text.split_first() else {
        return;
    };
    let (mut prev, rest) = match prev {
        Some(prev) => (prev, text),
        None => {
            out.extend_from_slice(if first == b' ' {
                "\u{2581}".as_bytes()
            } else {
                &text[..1]
            });
            (first, &text[1..])
        }
    };
    let pattern = u32::from_le_bytes([0xE2, 0x96, 0x81, 0]);
    out.reserve(3 * rest.len() + 4);
    ends.reserve(rest.len());
    // SAFETY: `out` has room for three bytes per byte of `rest` and a 4-byte store past
    // them, `ends` for one end per byte; both lengths are set to what was written, whole
    // characters (a space replaced whole by `▁`).
    unsafe {
        let base = out.as_mut_ptr();
        let mut len = out.len();
        let at = ends.as_mut_ptr();
        let mut n = ends.len();
        for &b in rest {
            at.add(n).write(len);
            n += cuts.apart(prev, b);
            let is_space = b == b' ';
            let word = if is_space { pattern } else { u32::from(b) };
            base.add(len).cast::<u32>().write_unaligned(word);
            len += if is_space { 3 } else { 1 };
            prev = b;
        }
        out.set_len(len);
        ends.set_len(n);
    }
}

/// `text`, characters no key matched, appended as single chunks: each space escaped, with
/// `collapse` a space after a space dropped (`previous_space`: the text before ended with
/// one); whether it then ends with a kept or dropped space.
fn escape_run(
    out: &mut String,
    text: &str,
    space: &str,
    collapse: bool,
    previous_space: bool,
) -> bool {
    if text.is_empty() {
        return previous_space;
    }
    let text = if previous_space && collapse {
        text.trim_start_matches(' ')
    } else {
        text
    };
    if text.is_empty() {
        return previous_space;
    }
    escape_spaces(out, text, space, collapse, false);
    collapse && text.ends_with(' ')
}

impl Normalizer for SentencePieceNormalizer {
    fn name(&self) -> &str {
        "SentencePiece"
    }

    fn sentencepiece(&self) -> Option<&SentencePieceNormalizer> {
        Some(self)
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        Ok(self.alignment_of(text))
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        if let Some(map) = &self.map {
            return Ok(self.normalize_mapped(map, text));
        }
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
        escape_spaces(&mut out, text, space, extra, true);
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
/// bytes), and with `collapse` a space after a space (or at the start, when `initial`) dropped: one store
/// and one add per byte, with no branch on the byte (a branch per space, mispredicted at
/// most words, and a copy call per word took an eighth of a first pass over prose with a
/// Gemma-class vocabulary).
fn escape_spaces(out: &mut String, text: &str, space: &str, collapse: bool, initial: bool) {
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
        let mut previous_space = collapse && initial;
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
/// (`always`; for `first` only before the stretch that starts the text, when its first
/// character comes from the input's first, see [`Self::heads`]; never for `never`).
/// With `whitespace_split` (HF's `WhitespaceSplit` before it), the words between runs of
/// white space, each with the replacement before it unless it starts with one, joined
/// (`always`); or, when it keeps the white space (`first`, `never`, `keep_white_space`: see
/// [`Self::keeps_white_space`]), the text with its white space (the spanner drops it) and the
/// replacement only where HF puts one: before every word for `always`, before the words of
/// the input's first character for `first`, nowhere for `never` (see
/// [`NormalizerSpec::Metaspace`]).
pub struct MetaspaceNormalizer {
    inner: Option<Before>,
    replacement: char,
    scheme: PrependScheme,
    whitespace_split: bool,
    /// With `whitespace_split` and `always`: the white space kept, the words not joined
    /// (HF's `split: false`).
    keep_white_space: bool,
    /// Whether `inner` may leave the input's first character out of its text's first one
    /// (`metaspace_parts::drops_start`): then `first` prepends only as [`Self::heads`] says.
    drops_start: bool,
}

/// The normalizer before `Metaspace`, which the core runs.
enum Before {
    Literal(LiteralProgram),
    Unicode(UnicodeProgram),
}

impl MetaspaceNormalizer {
    /// HF's `Metaspace` after the normalizer `before`, or None when the core does not run
    /// `before` (none, a program of literal `Replace` and `Prepend` steps, or one of Unicode
    /// forms, `Lowercase`, `StripAccents`, `Strip` and `Precompiled`).
    pub fn new(replacement: char, scheme: PrependScheme, before: &NormalizerSpec) -> Option<Self> {
        let inner = match before {
            NormalizerSpec::None => None,
            program => Some(match LiteralProgram::new(program) {
                Some(literal) => Before::Literal(literal),
                None => Before::Unicode(UnicodeProgram::new(program).or_else(|| {
                    // (a lone step, such as NFKC: the program of that one step)
                    let lone = NormalizerSpec::Sequence(vec![program.clone()]);
                    program
                        .is_step()
                        .then(|| UnicodeProgram::new(&lone))
                        .flatten()
                })?),
            }),
        };
        Some(Self {
            inner,
            replacement,
            scheme,
            whitespace_split: false,
            keep_white_space: false,
            drops_start: metaspace_parts::drops_start(before),
        })
    }

    /// This normalizer with HF's `WhitespaceSplit` before the Metaspace, or not.
    pub fn with_whitespace_split(mut self, whitespace_split: bool) -> Self {
        self.whitespace_split = whitespace_split;
        self
    }

    /// This normalizer keeping the white space after `WhitespaceSplit` with `always` (HF's
    /// Metaspace with `split: false`, whose words are not cut at their replacements), or not.
    pub fn with_keep_white_space(mut self, keep_white_space: bool) -> Self {
        self.keep_white_space = keep_white_space;
        self
    }

    fn run(&self, text: &str, prepends: bool) -> Result<String, Error> {
        let original = text;
        let prepends = prepends && self.prepends_start(text)?;
        let (inner, unicode);
        let text = match &self.inner {
            Some(Before::Literal(program)) => {
                inner = program.run(text);
                inner.as_str()
            }
            Some(Before::Unicode(program)) => {
                unicode = program.run_cow(text);
                &unicode
            }
            None => text,
        };
        let mut buffer = [0u8; 4];
        let replacement: &str = self.replacement.encode_utf8(&mut buffer);
        if self.keeps_white_space() {
            let starts = self.word_starts(original, text, prepends)?;
            let mut out = String::with_capacity(text.len() + starts.len() * replacement.len());
            let mut from = 0;
            for (_, at) in starts {
                out.push_str(&text[from..at]);
                out.push_str(replacement);
                from = at;
            }
            out.push_str(&text[from..]);
            return Ok(out);
        }
        if self.whitespace_split {
            return Ok(words_with_replacement(text, replacement));
        }
        let mut out = String::with_capacity((text.len() + 1) * replacement.len() + 4);
        // (a leading space becomes the replacement, so it counts as one)
        let starts_with_it = text.starts_with(' ') || text.starts_with(self.replacement);
        if prepends && !text.is_empty() && !starts_with_it {
            out.push_str(replacement);
        }
        escape_spaces(&mut out, text, replacement, false, false);
        Ok(out)
    }

    /// The normalized text of `text` and the ends of its pieces in one pass, when this is
    /// HF's `WhitespaceSplit` then `Metaspace` with `always`, its words joined and the
    /// replacement `▁` (T5's layout): the text [`Normalizer::normalize`] gives, cut as the
    /// SentencePiece spanner cuts it at words ([`words_and_ends`]; `every_space`: HF's
    /// Metaspace split). None (nothing done) for every other layout.
    pub fn words_in_one_pass(
        &self,
        text: &str,
        every_space: bool,
        ends: &mut Vec<usize>,
    ) -> Option<String> {
        if !self.whitespace_split || self.keeps_white_space() || self.replacement != '\u{2581}' {
            return None;
        }
        Some(match &self.inner {
            Some(Before::Literal(program)) => words_and_ends(&program.run(text), every_space, ends),
            Some(Before::Unicode(program)) => {
                words_and_ends(&program.run_cow(text), every_space, ends)
            }
            None => words_and_ends(text, every_space, ends),
        })
    }
}

impl Normalizer for MetaspaceNormalizer {
    fn name(&self) -> &str {
        "Metaspace"
    }

    fn normalize(&self, text: &str) -> Result<String, Error> {
        self.run(text, self.scheme != PrependScheme::Never)
    }

    fn normalize_later(&self, text: &str) -> Result<String, Error> {
        self.run(text, self.scheme == PrependScheme::Always)
    }

    fn tracks_alignment(&self) -> bool {
        true
    }

    fn alignment_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        self.alignment_of(text, self.scheme != PrependScheme::Never)
    }

    fn alignment_parts_later(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        self.alignment_of(text, self.scheme == PrependScheme::Always)
    }

    fn metaspace(&self) -> Option<&MetaspaceNormalizer> {
        Some(self)
    }

    fn is_native(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spm(dummy: bool, extra: bool, escape: bool, suffix: bool) -> Box<dyn Normalizer> {
        Box::new(SentencePieceNormalizer::new(SentencePieceFlags {
            add_dummy_prefix: dummy,
            remove_extra_whitespaces: extra,
            escape_whitespaces: escape,
            treat_whitespace_as_suffix: suffix,
        }))
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
    fn a_character_map_runs_before_the_spaces() {
        // (the expected texts are the Python package's SentencePieceNormalizer's)
        let rules = [
            ("\u{3000}", " "),
            ("ﬁ", "fi"),
            ("\u{200b}", ""),
            ("a b", "a  b "),
        ];
        let map =
            Arc::new(CharsMap::parse(&super::super::charsmap_build::compile(&rules)).unwrap());
        let n = |flags: u8, text: &str| {
            let [dummy, extra, escape, suffix] = [1, 2, 4, 8].map(|bit| flags & bit != 0);
            let flags = SentencePieceFlags {
                add_dummy_prefix: dummy,
                remove_extra_whitespaces: extra,
                escape_whitespaces: escape,
                treat_whitespace_as_suffix: suffix,
            };
            let normalizer = SentencePieceNormalizer::with_map(flags, Some(map.clone()));
            normalizer.normalize(text).unwrap()
        };
        assert_eq!(n(7, "\u{3000} \u{3000}ﬁx  \u{3000}"), "▁fix");
        // A text the map empties is empty, but still gets the suffix's space.
        assert_eq!(n(7, "\u{200b}"), "");
        assert_eq!(n(15, "\u{200b}"), "▁");
        // An output's own spaces are kept; the text's after it are squeezed.
        assert_eq!(n(5, " a b\u{3000}"), "▁▁a▁▁b▁▁");
        assert_eq!(n(7, "x a b  y"), "▁x▁a▁▁b▁y");
        assert_eq!(n(3, "\u{3000}ﬁ\u{3000}"), " fi");
    }

    #[test]
    fn user_defined_pieces_are_matched_before_the_map() {
        // (the expected texts are the Python package's SentencePieceNormalizer's)
        let rules = [("ﬁ", "fi"), ("e\u{301}", "é"), ("xe", "X")];
        let map =
            Arc::new(CharsMap::parse(&super::super::charsmap_build::compile(&rules)).unwrap());
        let normalizer =
            SentencePieceNormalizer::with_map(SentencePieceFlags::default(), Some(map))
                .with_user_defined(&["ﬁ".into(), "e".into(), "<ﬁx>".into()]);
        let n = |text: &str| normalizer.normalize(text).unwrap();
        // A piece stays as it is, the longest one at a place wins, and a key that would start
        // inside a piece never matches.
        assert_eq!(n("ﬁ <ﬁx> ﬁx"), "▁ﬁ▁<ﬁx>▁ﬁx");
        assert_eq!(n("e\u{301}"), "▁e\u{301}");
        // A key that starts before a piece still takes its characters.
        assert_eq!(n("xe\u{301}"), "▁X\u{301}");
    }

    #[test]
    fn whitespace_split_drops_white_space_and_starts_each_word_with_the_replacement() {
        let metaspace = MetaspaceNormalizer::new('▁', PrependScheme::Always, &NormalizerSpec::None)
            .unwrap()
            .with_whitespace_split(true);
        let n = |text: &str| metaspace.normalize(text).unwrap();
        assert_eq!(n(" a\u{3000} ▁b  c\t"), "▁a▁b▁c");
        assert_eq!(n("a▁▁b\u{85}\u{2028}x"), "▁a▁▁b▁x");
        // U+001C is no white space for Rust (Python's str.isspace says it is); U+200B neither.
        assert_eq!(n("\u{1c}a\u{200b} b"), "▁\u{1c}a\u{200b}▁b");
        assert_eq!(n(" \n\u{a0}"), "");
        assert_eq!(metaspace.normalize_later("x y").unwrap(), "▁x▁y");
        // Rust's white space, every one of them.
        let white: String = (0..=0x3000u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .collect();
        assert_eq!(n(&format!("a{white}b")), "▁a▁b");
    }

    #[test]
    fn whitespace_split_first_prepends_only_to_a_word_at_the_input_start() {
        let first = |before: &NormalizerSpec| {
            MetaspaceNormalizer::new('▁', PrependScheme::First, before)
                .unwrap()
                .with_whitespace_split(true)
        };
        // (HF tokenizers 0.23.3 after WhitespaceSplit: ▁ before "a" of "a  b" only)
        let plain = first(&NormalizerSpec::None);
        assert_eq!(plain.normalize("a  b").unwrap(), "▁a  b");
        assert_eq!(plain.normalize(" a b").unwrap(), " a b");
        assert_eq!(plain.normalize("▁a b").unwrap(), "▁a b");
        assert_eq!(plain.normalize_later("a b").unwrap(), "a b");
        assert_eq!(plain.normalize("").unwrap(), "");
        // Strip drops the white space before "a": its first character is the input's third.
        let strip = NormalizerSpec::Sequence(vec![NormalizerSpec::Strip {
            left: true,
            right: true,
        }]);
        assert_eq!(first(&strip).normalize("  a b").unwrap(), "a b");
        assert_eq!(first(&strip).normalize("a b ").unwrap(), "▁a b");
        let lower = NormalizerSpec::Sequence(vec![NormalizerSpec::Lowercase]);
        assert_eq!(first(&lower).normalize("A B").unwrap(), "▁a b");
        // NFKC spells "¨" as a space and a mark, "ﷺ" as four words: each word of the first
        // character gets one (HF: its offsets_original start at 0)
        assert_eq!(
            first(&NormalizerSpec::Nfkc).normalize("¨a").unwrap(),
            " ▁\u{308}a"
        );
        let words = first(&NormalizerSpec::Nfkc)
            .normalize("\u{fdfa} x")
            .unwrap();
        assert_eq!(words.matches('▁').count(), 4, "{words}");
    }

    #[test]
    fn metaspace_schemes() {
        let metaspace =
            |scheme| MetaspaceNormalizer::new('▁', scheme, &NormalizerSpec::None).unwrap();
        let first = metaspace(PrependScheme::First);
        assert_eq!(first.normalize("Hello world").unwrap(), "▁Hello▁world");
        assert_eq!(first.normalize_later("Hello world").unwrap(), "Hello▁world");
        assert_eq!(first.normalize("▁x").unwrap(), "▁x");
        let always = metaspace(PrependScheme::Always);
        assert_eq!(always.normalize_later(" x").unwrap(), "▁x");
        let never = metaspace(PrependScheme::Never);
        assert_eq!(never.normalize("a b").unwrap(), "a▁b");
        let nfkc = NormalizerSpec::Sequence(vec![NormalizerSpec::Nfkc]);
        let after_nfkc = MetaspaceNormalizer::new('▁', PrependScheme::First, &nfkc).unwrap();
        assert_eq!(after_nfkc.normalize("ﬁ x").unwrap(), "▁fi▁x");
        let lone = MetaspaceNormalizer::new('▁', PrependScheme::First, &NormalizerSpec::Nfkc);
        assert_eq!(lone.unwrap().normalize("ﬁ x").unwrap(), "▁fi▁x");
        let plugin = NormalizerSpec::Plugin("casefold".into());
        assert!(MetaspaceNormalizer::new('▁', PrependScheme::First, &plugin).is_none());
        let prepend = NormalizerSpec::Sequence(vec![NormalizerSpec::Prepend("x".into())]);
        let after = MetaspaceNormalizer::new('▁', PrependScheme::Never, &prepend).unwrap();
        assert_eq!(after.normalize("a b").unwrap(), "xa▁b");
    }
}
