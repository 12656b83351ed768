//! HF's `Metaspace` after its second literal pass: with added tokens flagged `normalized`, HF
//! finds them in each stretch's text as the normalizer before the `Metaspace` pre-tokenizer
//! makes it, then runs the pre-tokenizer on each part that search leaves, so each part (after
//! `WhitespaceSplit`, each word of it) gets its own `▁` (`prepend_scheme` `always`; `first`
//! only one whose first character comes from the input's first). The pipeline's second pass
//! (`pipeline/second_pass.rs`) asks a [`MetaspaceNormalizer`] for the text before it
//! ([`MetaspaceNormalizer::before`]), how much of that may get a `▁`
//! ([`MetaspaceNormalizer::heads`]) and each part's text ([`MetaspaceNormalizer::part`]), as
//! the Python package's engine does (`MetaspaceNormalizer.heads` and `.part`).
//!
//! ```
//! use wordsplit::normalizers::sentencepiece::MetaspaceNormalizer;
//! use wordsplit::spec::{NormalizerSpec, PrependScheme};
//! let metaspace = MetaspaceNormalizer::new('▁', PrependScheme::Always, &NormalizerSpec::None).unwrap();
//! assert_eq!(metaspace.part("a b", metaspace.heads("a b", true).unwrap()), "▁a▁b");
//! assert_eq!(metaspace.part(" b", usize::MAX), "▁b");
//! let t5 = metaspace.with_whitespace_split(true);
//! assert_eq!(t5.part(" a  b", usize::MAX), "▁a▁b");
//! ```

use super::{escape_spaces, Before, MetaspaceNormalizer};
use crate::error::Error;
use crate::normalizers::metaspace_words::words_with_replacement;
use crate::normalizers::{AlignmentParts, Normalizer};
use crate::spec::{NormalizerSpec, PrependScheme};

impl MetaspaceNormalizer {
    /// The replacement of a space (`▁`).
    pub fn replacement(&self) -> char {
        self.replacement
    }

    /// Whether HF's `WhitespaceSplit` runs before this Metaspace (T5's older files).
    pub fn whitespace_split(&self) -> bool {
        self.whitespace_split
    }

    /// Whether the white space stays in [`Self::part`]'s text after `WhitespaceSplit` (for a
    /// spanner that drops it: every scheme but `always`, whose words are joined unless
    /// `keep_white_space` says so, HF's `split: false`).
    pub fn keeps_white_space(&self) -> bool {
        self.whitespace_split && (self.scheme != PrependScheme::Always || self.keep_white_space)
    }

    /// The text of the normalizer before the Metaspace, or None when it is `text` itself.
    pub fn before(&self, text: &str) -> Option<String> {
        match &self.inner {
            None => None,
            Some(Before::Literal(program)) => Some(program.run(text)),
            Some(Before::Unicode(program)) => Some(program.run_cow(text).into_owned()),
        }
    }

    /// [`Self::before`]'s text aligned to `text` (None: `text` itself).
    pub fn before_parts(&self, text: &str) -> Result<Option<AlignmentParts>, Error> {
        match &self.inner {
            None => Ok(None),
            Some(Before::Literal(program)) => program.alignment_parts(text),
            Some(Before::Unicode(program)) => program.alignment_parts(text),
        }
    }

    /// Whether HF puts the replacement before a part or word (that does not start with one):
    /// every one for `always`; for `first` one whose first character comes from the input's
    /// first (`starts_input`: HF's `offsets_original().0 == 0` of the slice it is).
    pub fn prepends_part(&self, starts_input: bool) -> bool {
        match self.scheme {
            PrependScheme::Always => true,
            PrependScheme::First => starts_input,
            PrependScheme::Never => false,
        }
    }

    /// How many bytes at the start of [`Self::before`]'s text of the stretch `text` may have
    /// the replacement put before them ([`Self::part`]; `later`: the stretch does not start
    /// the input): all for `always`, none for `never`; for `first` those of the characters
    /// that come from the input's first (none when the normalizer dropped it, as `Strip`
    /// drops white space; several when it spelled it as several, as NFKC spells `¨`).
    pub fn heads(&self, text: &str, later: bool) -> Result<usize, Error> {
        match self.scheme {
            PrependScheme::Always => return Ok(usize::MAX),
            PrependScheme::First if !later && !text.is_empty() => {}
            _ => return Ok(0),
        }
        let Some(parts) = self.before_parts(text)? else {
            return Ok(text.chars().next().map_or(0, char::len_utf8));
        };
        let count = text.chars().count();
        let mut bytes = 0;
        for (i, c) in parts.normalized.chars().enumerate() {
            let origin = match parts.head.get(i) {
                Some(&(start, _, _)) => start,
                None => count - parts.tail + (i - parts.head.len()),
            };
            if origin > 0 {
                break; // (places only grow)
            }
            bytes += c.len_utf8();
        }
        Ok(bytes)
    }

    /// Where HF's Metaspace after `WhitespaceSplit` puts the replacement in `normalized` (the
    /// normalized `original`), when it keeps the white space: before each word that does not
    /// start with it (`always`), the words [`Self::first_words`] finds (`first`), none
    /// (`never`, or not `prepends`: a stretch after an added token). As (character, byte)
    /// indices into `normalized`, in order.
    pub(super) fn word_starts(
        &self,
        original: &str,
        normalized: &str,
        prepends: bool,
    ) -> Result<Vec<(usize, usize)>, Error> {
        match self.scheme {
            _ if !prepends => Ok(Vec::new()),
            PrependScheme::Never => Ok(Vec::new()),
            PrependScheme::First => self.first_words(original, normalized),
            PrependScheme::Always => Ok(word_heads(normalized)
                .filter(|&(_, _, c)| c != self.replacement)
                .map(|(i, at, _)| (i, at))
                .collect()),
        }
    }

    /// Where HF's `prepend_scheme: "first"` after `WhitespaceSplit` puts the replacement in
    /// `normalized` (the normalized `original`): before each word (between runs of white
    /// space) that does not start with the replacement and whose first character comes from
    /// the input's first (HF's `offsets_original().0 == 0`): the first word, unless the
    /// normalizer dropped what came before it (`Strip`'s white space), and each word of a
    /// first character the normalizer spelled as several (NFKC's `¨` is a space and a
    /// combining mark). Each as (character, byte) index into `normalized`, in order.
    ///
    /// ```text
    /// "a  b" -> [(0, 0)]; " a b" -> []; "¨" under NFKC, " \u{308}" -> [(1, 1)]
    /// ```
    pub(super) fn first_words(
        &self,
        original: &str,
        normalized: &str,
    ) -> Result<Vec<(usize, usize)>, Error> {
        let parts = match &self.inner {
            None => None,
            Some(Before::Literal(program)) => program.alignment_parts(original)?,
            Some(Before::Unicode(program)) => program.alignment_parts(original)?,
        };
        let count = original.chars().count();
        // The first original character of normalized character `i`.
        let origin = |i: usize| match &parts {
            None => i,
            Some(parts) if i < parts.head.len() => parts.head[i].0,
            Some(parts) => count - parts.tail + (i - parts.head.len()),
        };
        // (places only grow: after a word not from the first character, no later one is)
        Ok(word_heads(normalized)
            .take_while(|&(i, _, _)| origin(i) == 0)
            .filter(|&(_, _, c)| c != self.replacement)
            .map(|(i, at, _)| (i, at))
            .collect())
    }

    /// Whether the text `text` normalizes to may get the replacement at its start (when the
    /// scheme prepends there): not for `first` (without `WhitespaceSplit`, whose words
    /// [`Self::first_words`] finds) when the normalizer before dropped the input's first
    /// character, HF's `offsets_original().0 == 0` of the text; its alignment is computed
    /// only for a normalizer that may drop it (`drops_start`).
    pub(super) fn prepends_start(&self, text: &str) -> Result<bool, Error> {
        if !self.drops_start || self.whitespace_split || self.scheme != PrependScheme::First {
            return Ok(true);
        }
        Ok(self.heads(text, false)? > 0)
    }

    /// The Metaspace of a part of [`Self::before`]'s text: each space made the replacement,
    /// which is put before the part, when it does not start with one, if the part starts in
    /// its first `heads` bytes (the stretch's [`Self::heads`] less the part's start; a
    /// leading space becomes one, so it counts). After `WhitespaceSplit`, each word of the
    /// part gets it so instead: the words joined for `always`, else the white space kept (its
    /// spanner drops it, see [`Self::keeps_white_space`]).
    pub fn part(&self, normalized: &str, heads: usize) -> String {
        let mut buffer = [0u8; 4];
        let replacement: &str = self.replacement.encode_utf8(&mut buffer);
        if self.whitespace_split && !self.keeps_white_space() {
            return words_with_replacement(normalized, replacement);
        }
        let mut out = String::with_capacity((normalized.len() + 1) * replacement.len() + 4);
        if self.whitespace_split {
            let mut in_word = false;
            for (at, c) in normalized.char_indices() {
                if c.is_whitespace() {
                    in_word = false;
                } else if !in_word {
                    in_word = true;
                    if at < heads && c != self.replacement {
                        out.push(self.replacement);
                    }
                }
                out.push(c);
            }
            return out;
        }
        let starts_with_it =
            normalized.starts_with(' ') || normalized.starts_with(self.replacement);
        if heads > 0 && !normalized.is_empty() && !starts_with_it {
            out.push_str(replacement);
        }
        escape_spaces(&mut out, normalized, replacement, false, false);
        out
    }
}

/// Whether the normalizer `before` may leave the input's first character out of its text's
/// first character (HF's alignment of that one then starts past 0, and `prepend_scheme:
/// "first"` puts no `▁`): `Strip` on the left, a `Replace` by nothing (or of a regex),
/// `StripAccents`, `BertNormalizer`'s cleaning or accents, any other normalizer. Not Unicode
/// forms, `Lowercase`, `Prepend`, nor a precompiled map: HF's `Precompiled` aligns a first
/// character it drops (T5's U+200B) to the next one's.
pub(super) fn drops_start(before: &NormalizerSpec) -> bool {
    match before {
        NormalizerSpec::Sequence(steps) => steps.iter().any(drops_start),
        NormalizerSpec::None
        | NormalizerSpec::Nfc
        | NormalizerSpec::Nfd
        | NormalizerSpec::Nfkc
        | NormalizerSpec::Nfkd
        | NormalizerSpec::Lowercase
        | NormalizerSpec::Prepend(_)
        | NormalizerSpec::PrefixSpace
        | NormalizerSpec::Precompiled(_) => false,
        NormalizerSpec::Strip { left, .. } => *left,
        NormalizerSpec::Replace { content, regex, .. } => *regex || content.is_empty(),
        NormalizerSpec::BertNormalizer {
            clean_text,
            strip_accents,
            ..
        } => *clean_text || *strip_accents,
        _ => true,
    }
}

/// The first character of each word of `text` (between runs of white space, HF's
/// `WhitespaceSplit`), as (character index, byte index, character), in order.
fn word_heads(text: &str) -> impl Iterator<Item = (usize, usize, char)> + '_ {
    let mut in_word = false;
    text.char_indices()
        .enumerate()
        .filter_map(move |(i, (at, c))| {
            let head = !c.is_whitespace() && !in_word;
            in_word = !c.is_whitespace();
            head.then_some((i, at, c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_gets_the_replacement_as_its_scheme_says() {
        let lower = NormalizerSpec::Sequence(vec![NormalizerSpec::Lowercase]);
        for (scheme, first, later) in [
            (PrependScheme::Always, "▁a▁b", "▁a▁b"),
            (PrependScheme::First, "▁a▁b", "a▁b"),
            (PrependScheme::Never, "a▁b", "a▁b"),
        ] {
            let m = MetaspaceNormalizer::new('▁', scheme, &lower).unwrap();
            assert_eq!(m.before("A B").as_deref(), Some("a b"));
            assert_eq!(m.part("a b", m.heads("A B", false).unwrap()), first);
            assert_eq!(m.part("a b", m.heads("A B", true).unwrap()), later);
            assert_eq!(m.part("", usize::MAX), "");
            assert_eq!(m.part("▁x", usize::MAX), "▁x");
        }
        let plain = MetaspaceNormalizer::new('▁', PrependScheme::Always, &NormalizerSpec::None);
        assert_eq!(plain.unwrap().before("A B"), None);
    }

    #[test]
    fn first_prepends_only_where_the_input_s_first_character_is() {
        // (HF tokenizers 0.23.3: Strip's dropped white space leaves no ▁ before "a"; NFKC's
        // "¨" is a space and a mark, both from the input's first character)
        let first = |before: NormalizerSpec| {
            MetaspaceNormalizer::new('▁', PrependScheme::First, &before).unwrap()
        };
        let strip = NormalizerSpec::Sequence(vec![NormalizerSpec::Strip {
            left: true,
            right: true,
        }]);
        assert_eq!(first(strip.clone()).heads("  a<x>", false).unwrap(), 0);
        assert_eq!(first(strip).heads("a<x> ", false).unwrap(), 1);
        let nfkc = first(NormalizerSpec::Sequence(vec![NormalizerSpec::Nfkc]));
        assert_eq!(nfkc.before("¨a").as_deref(), Some(" \u{308}a"));
        assert_eq!(nfkc.heads("¨a", false).unwrap(), 3);
        assert_eq!(nfkc.heads("¨a", true).unwrap(), 0);
        let plain = first(NormalizerSpec::None);
        assert_eq!(plain.heads("éa", false).unwrap(), 2);
        assert_eq!(plain.heads("", false).unwrap(), 0);
    }

    #[test]
    fn after_whitespace_split_each_word_of_a_part_gets_it() {
        let t5 = |scheme| {
            MetaspaceNormalizer::new('▁', scheme, &NormalizerSpec::None)
                .unwrap()
                .with_whitespace_split(true)
        };
        // always: the words joined, each led by the replacement (the spanner cuts there).
        let always = t5(PrependScheme::Always);
        assert!(!always.keeps_white_space());
        assert_eq!(always.part(" a\u{3000}b  ▁c\t", usize::MAX), "▁a▁b▁c");
        assert_eq!(always.part("  ", usize::MAX), "");
        // first: the white space kept, a replacement only before a word in the heads.
        let first = t5(PrependScheme::First);
        assert!(first.keeps_white_space());
        assert_eq!(
            first.part("a b", first.heads("a b", false).unwrap()),
            "▁a b"
        );
        assert_eq!(first.part("a b", first.heads("a b", true).unwrap()), "a b");
        assert_eq!(
            first.part(" a b", first.heads(" a b", false).unwrap()),
            " a b"
        );
        assert_eq!(first.part("▁a b", 1), "▁a b");
        // never: the white space kept, no replacement; always with keep_white_space (HF's
        // split: false): the white space kept, a replacement before every word.
        let never = t5(PrependScheme::Never);
        assert!(never.keeps_white_space());
        assert_eq!(
            never.part(" a▁b  c", never.heads(" a▁b  c", false).unwrap()),
            " a▁b  c"
        );
        assert_eq!(never.normalize(" a▁b  c").unwrap(), " a▁b  c");
        let kept = t5(PrependScheme::Always).with_keep_white_space(true);
        assert!(kept.keeps_white_space());
        assert_eq!(kept.part(" a▁b  ▁c", usize::MAX), " ▁a▁b  ▁c");
        for later in [false, true] {
            let run = if later {
                kept.normalize_later(" a b")
            } else {
                kept.normalize(" a b")
            };
            assert_eq!(run.unwrap(), " ▁a ▁b");
        }
        let parts = kept.alignment_parts("a b").unwrap().unwrap();
        assert_eq!(parts.normalized, "▁a ▁b");
    }

    #[test]
    fn first_puts_no_replacement_where_the_normalizer_dropped_the_first_character() {
        // (HF tokenizers 0.23.3: its second pass slices the normalized text even with no
        // token found, so "  ab" after Strip starts at original offset 2: no ▁)
        use crate::normalizers::Normalizer;
        let first = |before: NormalizerSpec| {
            MetaspaceNormalizer::new('▁', PrependScheme::First, &before).unwrap()
        };
        let strip = NormalizerSpec::Sequence(vec![
            NormalizerSpec::Strip {
                left: true,
                right: false,
            },
            NormalizerSpec::Nfkc,
        ]);
        let empty = NormalizerSpec::Sequence(vec![NormalizerSpec::Replace {
            pattern: "x".into(),
            content: String::new(),
            regex: false,
        }]);
        let accents =
            NormalizerSpec::Sequence(vec![NormalizerSpec::Nfd, NormalizerSpec::StripAccents]);
        for (before, text, normalized) in [
            (strip.clone(), "  a b", "a▁b"),
            (strip.clone(), "a b", "▁a▁b"),
            (empty.clone(), "xab", "ab"),
            (empty, "ab", "▁ab"),
            (accents, "\u{301}ab", "ab"),
        ] {
            let m = first(before);
            assert!(m.drops_start);
            assert_eq!(m.normalize(text).unwrap(), normalized, "{text:?}");
            let parts = m.alignment_parts(text).unwrap().unwrap();
            assert_eq!(parts.normalized, normalized, "{text:?}");
        }
        let parts = first(strip.clone())
            .alignment_parts("  a")
            .unwrap()
            .unwrap();
        assert_eq!(parts.head.first(), Some(&(2, 3, true)));
        // (the later stretches, and "always", as before)
        assert_eq!(first(strip.clone()).normalize_later("a").unwrap(), "a");
        let always = MetaspaceNormalizer::new('▁', PrependScheme::Always, &strip).unwrap();
        assert_eq!(always.normalize("  a").unwrap(), "▁a");
    }

    #[test]
    fn only_a_normalizer_that_may_drop_the_first_character_is_aligned_for_it() {
        let replace = |content: &str, regex| NormalizerSpec::Replace {
            pattern: "x".into(),
            content: content.into(),
            regex,
        };
        for (before, drops) in [
            (NormalizerSpec::None, false),
            (NormalizerSpec::Nfkc, false),
            (NormalizerSpec::Precompiled(String::new()), false),
            (NormalizerSpec::Prepend("▁".into()), false),
            (replace("y", false), false),
            (replace("", false), true),
            (replace("y", true), true),
            (NormalizerSpec::StripAccents, true),
            (
                NormalizerSpec::Strip {
                    left: false,
                    right: true,
                },
                false,
            ),
            (
                NormalizerSpec::Strip {
                    left: true,
                    right: false,
                },
                true,
            ),
            (
                NormalizerSpec::Sequence(vec![
                    NormalizerSpec::Lowercase,
                    NormalizerSpec::StripAccents,
                ]),
                true,
            ),
        ] {
            assert_eq!(drops_start(&before), drops, "{before:?}");
        }
        // (NFKC never drops one: "  a" keeps its ▁, from its first space)
        let nfkc = MetaspaceNormalizer::new('▁', PrependScheme::First, &NormalizerSpec::Nfkc);
        assert_eq!(nfkc.unwrap().normalize("é").unwrap(), "▁é");
    }
}
