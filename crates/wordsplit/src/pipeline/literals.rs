//! Special and added tokens in the text ([`Literal`]s): the walk that finds the literals that
//! are tokens under a policy (leftmost-longest, as HF's added-vocabulary matcher), in one pass
//! or in HF's two (`second_pass.rs`).

use std::ops::Range;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use super::{Pipeline, SpecialPolicy};
use crate::error::Error;
use crate::literal::{strips, Literal, LSTRIP, RSTRIP, SINGLE_WORD};

/// What a literal pass calls for each token: the plain text before it, its span and literal.
type TokenSink<'a, 'b> =
    dyn FnMut(Range<usize>, (Range<usize>, &'a Literal)) -> Result<(), Error> + 'b;

/// The literal scan of a vocabulary with flags: HF's two passes, each a leftmost-longest
/// automaton and the literal index of each of its patterns.
pub(super) struct FlaggedScan {
    pub(super) raw: (AhoCorasick, Vec<usize>),
    pub(super) normalized: Option<(AhoCorasick, Vec<usize>)>,
    /// The second pass searches each stretch's normalized text for the literals' normalized
    /// contents (HF's order, `literals.rs`), not the stretch itself.
    pub(super) normalizes: bool,
}

pub(super) fn literal_automaton(
    literals: &[Literal],
    pick: impl Fn(&Literal) -> bool,
) -> Result<(AhoCorasick, Vec<usize>), Error> {
    let indices: Vec<usize> = (0..literals.len())
        .filter(|&i| pick(&literals[i]))
        .collect();
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(indices.iter().map(|&i| literals[i].text.as_bytes()))
        .map_err(|e| Error::VocabFormat(format!("cannot build the special-token matcher: {e}")))?;
    Ok((ac, indices))
}

impl Pipeline {
    /// Walk `text` by the literals that are tokens under `policy`, leftmost-longest:
    /// `each(plain, Some((span, literal)))` for each such literal with the plain text before
    /// it, then `each(plain, None)` for the plain text after the last. A special literal that
    /// is not a token is plain text (the search resumes one character after its start).
    /// Err: the first disallowed special literal, or what `each` returned.
    pub(super) fn walk_literals(
        &self,
        matcher: &AhoCorasick,
        text: &str,
        policy: &SpecialPolicy,
        mut each: impl FnMut(Range<usize>, Option<(Range<usize>, &Literal)>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if let Some(flagged) = &self.flagged {
            return self.walk_flagged(flagged, text, policy, each);
        }
        let mut plain_start = 0;
        let mut search_from = 0;
        while search_from < text.len() {
            let Some(m) = matcher.find(Input::new(text).span(search_from..text.len())) else {
                break;
            };
            let i = m.pattern().as_usize();
            let literal = &self.literals[i];
            if !self.is_token(i, policy)? {
                // Plain text here: look for a literal starting one character later.
                search_from =
                    m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            each(plain_start..m.start(), Some((m.start()..m.end(), literal)))?;
            plain_start = m.end();
            search_from = m.end();
        }
        each(plain_start..text.len(), None)
    }

    /// Whether literal `i`, matched, is a token under `policy` (an added literal always is);
    /// a disallowed special is an error.
    #[inline]
    fn is_token(&self, i: usize, policy: &SpecialPolicy) -> Result<bool, Error> {
        let literal = &self.literals[i];
        if !literal.special {
            return Ok(true);
        }
        match policy {
            SpecialPolicy::AllowAll => Ok(true),
            SpecialPolicy::Mixed {
                allowed,
                disallowed,
            } => {
                // A policy's flags are per literal of the pipeline that made it.
                let (Some(&allowed), Some(&disallowed)) = (allowed.get(i), disallowed.get(i))
                else {
                    let message = "a special-token policy made for another pipeline (its flags \
                                   are one per literal of the pipeline that made it)";
                    return Err(Error::Unsupported(message.into()));
                };
                if disallowed {
                    return Err(Error::DisallowedSpecial(literal.text.clone()));
                }
                Ok(allowed)
            }
        }
    }

    /// [`Pipeline::walk_literals`] with HF's flags: the literals without [`NORMALIZED`](crate::literal::NORMALIZED) in
    /// `text`, then those with it in each stretch the first pass left (HF's `AddedVocabulary`
    /// order; [`crate::literal`] says what each flag does).
    fn walk_flagged(
        &self,
        flagged: &FlaggedScan,
        text: &str,
        policy: &SpecialPolicy,
        mut each: impl FnMut(Range<usize>, Option<(Range<usize>, &Literal)>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let second = flagged.normalized.as_ref();
        let mut first_token = |plain: Range<usize>, token: (Range<usize>, &Literal)| {
            let plain = match second {
                Some(pass) => {
                    self.literal_pass(pass, text, plain, policy, &mut |p, t| each(p, Some(t)))?
                }
                None => plain,
            };
            each(plain, Some(token))
        };
        let tail =
            self.literal_pass(&flagged.raw, text, 0..text.len(), policy, &mut first_token)?;
        let tail = match second {
            Some(pass) => {
                self.literal_pass(pass, text, tail, policy, &mut |p, t| each(p, Some(t)))?
            }
            None => tail,
        };
        each(tail, None)
    }

    /// One pass of [`Pipeline::walk_flagged`] over `text[range]`: `token(plain, (span, literal))`
    /// for each token, `span` with the whitespace it strips; returns the plain text after the
    /// last token.
    pub(super) fn literal_pass<'a>(
        &'a self,
        (matcher, indices): &(AhoCorasick, Vec<usize>),
        text: &str,
        range: Range<usize>,
        policy: &SpecialPolicy,
        token: &mut TokenSink<'a, '_>,
    ) -> Result<Range<usize>, Error> {
        let (lo, hi) = (range.start, range.end);
        let mut plain_start = lo;
        let mut search_from = lo;
        while search_from < hi {
            let Some(m) = matcher.find(Input::new(text).span(search_from..hi)) else {
                break;
            };
            let i = indices[m.pattern().as_usize()];
            let literal = &self.literals[i];
            if !self.is_token(i, policy)? {
                search_from =
                    m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            // HF's search goes on after the match, whatever the flags take or drop.
            search_from = m.end();
            let (mut start, mut stop) = (m.start(), m.end());
            if literal.flags & SINGLE_WORD != 0 {
                let word = regex_syntax::is_word_character;
                if text[lo..start].chars().next_back().is_some_and(word)
                    || text[stop..hi].chars().next().is_some_and(word)
                {
                    continue;
                }
            }
            if literal.flags & LSTRIP != 0 {
                // Back over whitespace, not into the previous token's span (a match inside
                // the whitespace that token took starts at its end).
                let taken: usize = text[plain_start.min(start)..start]
                    .chars()
                    .rev()
                    .take_while(|&c| strips(literal.flags, c))
                    .map(char::len_utf8)
                    .sum();
                start = (start - taken).max(plain_start);
            }
            if literal.flags & RSTRIP != 0 {
                stop += text[stop..hi]
                    .chars()
                    .take_while(|&c| strips(literal.flags, c))
                    .map(char::len_utf8)
                    .sum::<usize>();
            }
            if start >= stop {
                // Nothing left of an lstrip match inside that whitespace: HF drops it.
                continue;
            }
            // A token starting with whitespace can match inside the whitespace an rstrip
            // token took: its span overlaps that token's, and, as in HF, the plain text
            // after it starts at its end.
            token(plain_start..start.max(plain_start), (start..stop, literal))?;
            plain_start = stop;
        }
        Ok(plain_start..hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::literal::NORMALIZED;

    /// The pieces `walk_literals` gives for `text`: plain text as `(text, None)`, a token as
    /// `(its span's text, Some(literal text))`.
    fn walked(literals: &[(&str, u8)], text: &str) -> Vec<(String, Option<String>)> {
        let literals = literals
            .iter()
            .enumerate()
            .map(|(i, &(t, flags))| Literal {
                text: t.to_owned(),
                id: 300 + i as u32,
                special: false,
                flags,
            })
            .collect();
        let pipeline = Pipeline::builder(std::sync::Arc::new(crate::tables::tests::tiny(&[])))
            .scanner(Box::new(crate::spanners::Gpt2Scanner))
            .literals(literals)
            .build()
            .unwrap();
        let mut out = vec![];
        let matcher = pipeline.literal_matcher.as_ref().unwrap();
        pipeline
            .walk_literals(matcher, text, &SpecialPolicy::AllowAll, |plain, token| {
                if !plain.is_empty() {
                    out.push((text[plain].to_owned(), None));
                }
                if let Some((span, literal)) = token {
                    out.push((text[span].to_owned(), Some(literal.text.clone())));
                }
                Ok(())
            })
            .unwrap_or_else(|_| panic!("no error expected"));
        out
    }

    fn piece(text: &str, literal: Option<&str>) -> (String, Option<String>) {
        (text.to_owned(), literal.map(str::to_owned))
    }

    #[test]
    fn c_space_strips_ascii_whitespace_only() {
        use crate::literal::C_SPACE;

        let got = walked(
            &[("<e>", RSTRIP | C_SPACE), ("<b>", LSTRIP | C_SPACE)],
            "<e> \x0b\u{3000}x \t<b>",
        );
        assert_eq!(
            got,
            vec![
                piece("<e> \x0b", Some("<e>")),
                piece("\u{3000}x", None),
                piece(" \t<b>", Some("<b>")),
            ]
        );
    }

    #[test]
    fn flags_strip_whitespace_and_keep_single_words() {
        let got = walked(
            &[("<m>", LSTRIP | RSTRIP), ("w", SINGLE_WORD)],
            "a \u{3000}<m>\t b w aw w_ w",
        );
        assert_eq!(
            got,
            vec![
                piece("a", None),
                piece(" \u{3000}<m>\t ", Some("<m>")),
                piece("b ", None),
                piece("w", Some("w")),
                piece(" aw w_ ", None),
                piece("w", Some("w")),
            ]
        );
        // lstrip stops at the previous token; U+001C is no White_Space.
        let got = walked(&[("<m>", LSTRIP), ("x", RSTRIP)], "x  <m>\u{1c}<m>");
        assert_eq!(
            got,
            vec![
                piece("x  ", Some("x")),
                piece("<m>", Some("<m>")),
                piece("\u{1c}", None),
                piece("<m>", Some("<m>")),
            ]
        );
    }

    #[test]
    fn normalized_literals_come_second() {
        // One pass would take "kqv"; HF's first pass takes "qv", the second finds no "kqv".
        let got = walked(&[("kqv", NORMALIZED), ("qv", 0)], "kqv kqz kqv");
        assert_eq!(got[0..2], [piece("k", None), piece("qv", Some("qv"))]);
        assert_eq!(
            walked(&[("kqv", NORMALIZED)], "akqv")[1],
            piece("kqv", Some("kqv"))
        );
    }

    #[test]
    fn a_policy_that_makes_every_literal_text_needs_no_scan() {
        // Two specials and, in the second vocabulary, an added literal (always a token).
        let build = |added: bool| {
            let literal = |text: &str, id: u32, special: bool| Literal {
                text: text.to_owned(),
                id,
                special,
                flags: 0,
            };
            let mut literals = vec![literal("<s>", 300, true), literal("</s>", 301, true)];
            if added {
                literals.push(literal("<t>", 302, false));
            }
            Pipeline::builder(std::sync::Arc::new(crate::tables::tests::tiny(&[b"<s"])))
                .scanner(Box::new(crate::spanners::Gpt2Scanner))
                .literals(literals)
                .build()
                .unwrap()
        };
        let mixed = |n: usize, allowed: bool, disallowed: bool| SpecialPolicy::Mixed {
            allowed: vec![allowed; n],
            disallowed: vec![disallowed; n],
        };
        let text = "a<s>b</s><t>";
        let encode = |pipeline: &Pipeline, policy: &SpecialPolicy| {
            let mut out = vec![];
            pipeline.encode(text, policy, &mut out).map(|()| out)
        };
        let specials = build(false);
        assert!(specials.all_text_under(&mixed(2, false, false)));
        let mut plain = vec![];
        specials.encode_plain(text, false, &mut plain).unwrap();
        assert_eq!(encode(&specials, &mixed(2, false, false)).unwrap(), plain);
        // Allowed, disallowed: the scan finds them.
        assert!(!specials.all_text_under(&mixed(2, true, false)));
        assert!(!specials.all_text_under(&SpecialPolicy::AllowAll));
        assert!(encode(&specials, &mixed(2, true, false))
            .unwrap()
            .contains(&300));
        assert!(encode(&specials, &mixed(2, false, true)).is_err());
        // An added literal is a token under any policy.
        let added = build(true);
        assert!(!added.all_text_under(&mixed(3, false, false)));
        assert!(encode(&added, &mixed(3, false, false))
            .unwrap()
            .contains(&302));
    }
}
