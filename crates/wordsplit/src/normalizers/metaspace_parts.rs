//! HF's `Metaspace` after its second literal pass: with added tokens flagged `normalized`, HF
//! finds them in each stretch's text as the normalizer before the `Metaspace` pre-tokenizer
//! makes it, then runs the pre-tokenizer on each part that search leaves, so each part gets
//! its own `▁` (`prepend_scheme` `always`; `first` only the part that starts the input). The
//! pipeline's second pass (`pipeline/second_pass.rs`) asks a [`MetaspaceNormalizer`] for the
//! text before it ([`MetaspaceNormalizer::before`]) and for each part's
//! ([`MetaspaceNormalizer::part`]), as the Python package's engine does
//! (`MetaspaceNormalizer.part`).
//!
//! ```
//! use wordsplit::normalizers::sentencepiece::MetaspaceNormalizer;
//! use wordsplit::spec::{NormalizerSpec, PrependScheme};
//! let metaspace = MetaspaceNormalizer::new('▁', PrependScheme::Always, &NormalizerSpec::None).unwrap();
//! assert_eq!(metaspace.part("a b", metaspace.prepends_part(false)), "▁a▁b");
//! assert_eq!(metaspace.part(" b", true), "▁b");
//! ```

use super::{escape_spaces, Before, MetaspaceNormalizer};
use crate::error::Error;
use crate::normalizers::{AlignmentParts, Normalizer};
use crate::spec::PrependScheme;

impl MetaspaceNormalizer {
    /// The replacement of a space (`▁`).
    pub fn replacement(&self) -> char {
        self.replacement
    }

    /// Whether this Metaspace runs after HF's second pass as [`Self::part`] says: every one
    /// but `WhitespaceSplit` then `Metaspace`, which cuts words again (the readers refuse
    /// `normalized` added tokens with it).
    pub fn runs_on_parts(&self) -> bool {
        !self.whitespace_split
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

    /// Whether HF puts the replacement before a part (that does not start with one): every
    /// part for `always`, for `first` one that starts the input (`starts_input`).
    pub fn prepends_part(&self, starts_input: bool) -> bool {
        match self.scheme {
            PrependScheme::Always => true,
            PrependScheme::First => starts_input,
            PrependScheme::Never => false,
        }
    }

    /// The Metaspace of a part of [`Self::before`]'s text: each space made the replacement,
    /// which `prepends` puts before a part that does not start with it (a leading space
    /// becomes one, so it counts).
    pub fn part(&self, normalized: &str, prepends: bool) -> String {
        let mut buffer = [0u8; 4];
        let replacement: &str = self.replacement.encode_utf8(&mut buffer);
        let mut out = String::with_capacity((normalized.len() + 1) * replacement.len() + 4);
        let starts_with_it =
            normalized.starts_with(' ') || normalized.starts_with(self.replacement);
        if prepends && !normalized.is_empty() && !starts_with_it {
            out.push_str(replacement);
        }
        escape_spaces(&mut out, normalized, replacement, false, false);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::NormalizerSpec;

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
            assert_eq!(m.part("a b", m.prepends_part(true)), first);
            assert_eq!(m.part("a b", m.prepends_part(false)), later);
            assert_eq!(m.part("", true), "");
            assert_eq!(m.part("▁x", true), "▁x");
        }
        let plain = MetaspaceNormalizer::new('▁', PrependScheme::Always, &NormalizerSpec::None);
        assert_eq!(plain.unwrap().before("A B"), None);
    }
}
