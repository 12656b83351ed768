//! HF's second literal pass on normalized text, tested against HF `tokenizers` itself (ids
//! and offsets, by the Python package's tests).
//!
//! HF's `AddedVocabulary` finds the added tokens without the `normalized` flag in the text,
//! normalizes each stretch they leave, and finds the tokens with the flag in that normalized
//! stretch, by their contents as the normalizer makes them (`Ünï` is found as `ünï` under
//! `Lowercase`); the pre-tokenizer and the model then run on the pieces of the normalized
//! stretch between those tokens. With no normalizer the normalized stretch is the stretch
//! itself, and [`Pipeline::walk_literals`] runs both passes on the text; any other normalizer
//! runs this module's order, which the pipeline sets up when it is built (only a vocabulary
//! with such tokens pays for it: [`Pipeline::normalizing_scan`] is None for the others).
//!
//! A token found in the normalized text is placed at the original text its characters are
//! aligned to (HF's `NormalizedString::slice`), and the pieces between tokens keep their
//! characters' alignments (`offsets/`).

use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};

use super::literals::FlaggedScan;
use super::{Pipeline, SpecialPolicy};
use crate::error::Error;
use crate::literal::{Literal, NORMALIZED};
use crate::normalizers::NormalizeStage;

/// The leftmost-longest automaton of the `normalized` literals' normalized contents, and the
/// literal index of each pattern. Err (the words of `wordsplit.specials.normalized_contents`):
/// a content the normalizer makes empty, or two it makes the same.
pub(super) fn normalized_automaton(
    literals: &[Literal],
    normalizer: &NormalizeStage,
) -> Result<(AhoCorasick, Vec<usize>), Error> {
    let mut contents: Vec<String> = Vec::new();
    let mut indices: Vec<usize> = Vec::new();
    for (i, literal) in literals.iter().enumerate() {
        if literal.flags & NORMALIZED == 0 {
            continue;
        }
        // A normalizer that fails on a token's content fails the vocabulary (its message
        // says why).
        let content = normalizer
            .literal_content(&literal.text)
            .map_err(|e| Error::VocabFormat(e.to_string()))?;
        if content.is_empty() {
            return Err(Error::NormalizedLiteralEmpty {
                literal: literal.text.clone(),
            });
        }
        if let Some(k) = contents.iter().position(|c| *c == content) {
            return Err(Error::NormalizedLiteralsCollide {
                first: literals[indices[k]].text.clone(),
                second: literal.text.clone(),
                content,
            });
        }
        contents.push(content);
        indices.push(i);
    }
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(contents.iter().map(String::as_bytes))
        .map_err(|e| Error::VocabFormat(format!("cannot build the special-token matcher: {e}")))?;
    Ok((ac, indices))
}

impl Pipeline {
    /// The flagged scan and its second pass when that pass runs on normalized text.
    #[inline]
    pub(super) fn normalizing_scan(&self) -> Option<(&FlaggedScan, &(AhoCorasick, Vec<usize>))> {
        let flagged = self.flagged.as_deref()?;
        if !flagged.normalizes {
            return None;
        }
        Some((flagged, flagged.normalized.as_ref()?))
    }

    /// The normalizer's text for `text`, or None when it is `text` itself (as `encode_plain`
    /// normalizes; `later`: `text` does not start the text, see
    /// [`crate::Normalizer::normalize_later`]).
    pub(super) fn normalized_text(&self, text: &str, later: bool) -> Result<Option<String>, Error> {
        self.normalizer.normalize_at(text, later)
    }

    /// The text the second pass searches in a stretch (`later`: it does not start the text):
    /// the normalizer's, or before a [`crate::Normalizer::metaspace`] the text of the
    /// normalizer before it (None: the stretch itself).
    pub(super) fn second_pass_text(
        &self,
        text: &str,
        later: bool,
    ) -> Result<Option<String>, Error> {
        match self.normalizer.metaspace() {
            Some(metaspace) => Ok(metaspace.before(text)),
            None => self.normalized_text(text, later),
        }
    }

    /// Walk `text` in HF's order: the first pass's literals in the text (all of them first,
    /// so that a disallowed literal of the first pass is reported before any of the second's,
    /// wherever it lies); then for each stretch between them, its normalized text
    /// (`normalize(stretch, later)` gives it, None when it is the stretch itself; `later`
    /// when the stretch does not start the text, as the Python engine normalizes it) and the
    /// second pass's literals in that, reporting each token and the plain pieces between them
    /// (never empty) to `each`, in text order.
    pub(super) fn walk_normalizing<N: AsRef<str>>(
        &self,
        (flagged, second): (&FlaggedScan, &(AhoCorasick, Vec<usize>)),
        text: &str,
        policy: &SpecialPolicy,
        mut normalize: impl FnMut(&str, bool) -> Result<Option<N>, Error>,
        mut each: impl FnMut(Step<'_, '_, N>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut firsts: Vec<(Range<usize>, Range<usize>, &Literal)> = Vec::new();
        let tail = self.literal_pass(&flagged.raw, text, 0..text.len(), policy, &mut |p, t| {
            firsts.push((p, t.0, t.1));
            Ok(())
        })?;
        let mut stretch = |plain: Range<usize>,
                           each: &mut dyn FnMut(Step<'_, '_, N>) -> Result<(), Error>|
         -> Result<(), Error> {
            if plain.is_empty() {
                return Ok(());
            }
            let normalized = normalize(&text[plain.clone()], plain.start > 0)?;
            let (haystack, range) = match &normalized {
                Some(n) => (n.as_ref(), 0..n.as_ref().len()),
                None => (text, plain.clone()),
            };
            let normalized = normalized.as_ref();
            let tail = self.literal_pass(second, haystack, range, policy, &mut |piece,
                                                                                 (
                span,
                literal,
            )| {
                if !piece.is_empty() {
                    each(Step::Plain {
                        stretch: plain.clone(),
                        normalized,
                        piece,
                    })?;
                }
                each(Step::Second {
                    stretch: plain.clone(),
                    normalized,
                    span,
                    literal,
                })
            })?;
            if !tail.is_empty() {
                each(Step::Plain {
                    stretch: plain.clone(),
                    normalized,
                    piece: tail,
                })?;
            }
            Ok(())
        };
        for (plain, span, literal) in firsts {
            stretch(plain, &mut each)?;
            each(Step::First { span, literal })?;
        }
        stretch(tail, &mut each)
    }

    /// [`Pipeline::encode`] of a vocabulary whose second pass runs on normalized text.
    pub(super) fn encode_normalizing(
        &self,
        scan: (&FlaggedScan, &(AhoCorasick, Vec<usize>)),
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        // The stretch whose Metaspace heads were found last, and them (once a stretch).
        let mut heads_of: Option<(usize, usize)> = None;
        self.walk_normalizing(
            scan,
            text,
            policy,
            |stretch, later| self.second_pass_text(stretch, later),
            |step| match step {
                Step::Plain {
                    stretch,
                    normalized,
                    piece,
                } => {
                    let haystack = normalized.map_or(text, String::as_str);
                    match self.normalizer.metaspace() {
                        Some(metaspace) => {
                            let start = if normalized.is_some() {
                                0
                            } else {
                                stretch.start
                            };
                            let heads = match heads_of {
                                Some((at, heads)) if at == stretch.start => heads,
                                _ => {
                                    let later = stretch.start > 0;
                                    let heads = metaspace.heads(&text[stretch.clone()], later)?;
                                    heads_of = Some((stretch.start, heads));
                                    heads
                                }
                            };
                            let heads = heads.saturating_sub(piece.start - start);
                            self.encode_split(&metaspace.part(&haystack[piece], heads), out)
                        }
                        None => self.encode_split(&haystack[piece], out),
                    }
                }
                Step::Second { literal, .. } | Step::First { literal, .. } => {
                    out.push(literal.id);
                    Ok(())
                }
            },
        )
    }
}

/// One step of [`Pipeline::walk_normalizing`]. `stretch` is the range of the text between
/// first-pass tokens that a second-pass step lies in, `normalized` its normalized text (None:
/// the stretch itself); `piece` and a second-pass `span` index that text (or `text` itself).
pub(super) enum Step<'n, 'a, N> {
    /// Plain text between second-pass tokens.
    Plain {
        stretch: Range<usize>,
        normalized: Option<&'n N>,
        piece: Range<usize>,
    },
    /// A second-pass token, its span with the whitespace it strips.
    Second {
        stretch: Range<usize>,
        normalized: Option<&'n N>,
        span: Range<usize>,
        literal: &'a Literal,
    },
    /// A first-pass token, its span in the text.
    First {
        span: Range<usize>,
        literal: &'a Literal,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::literal::{LSTRIP, RSTRIP};

    fn pipeline(literals: &[(&str, u8)], normalizer: NormalizeStage) -> Pipeline {
        let literals = literals
            .iter()
            .enumerate()
            .map(|(i, &(text, flags))| Literal {
                text: text.to_owned(),
                id: 300 + i as u32,
                special: false,
                flags,
            })
            .collect();
        Pipeline::builder(std::sync::Arc::new(crate::tables::tests::tiny(&[])))
            .scanner(Box::new(crate::spanners::Gpt2Scanner))
            .literals(literals)
            .normalizer(normalizer)
            .build()
            .unwrap()
    }

    /// The steps of `walk_normalizing` as text: `[token]` for a first-pass token, `{token}`
    /// for a second-pass one (the text of its span), plain pieces as they are.
    fn walked(pipeline: &Pipeline, text: &str) -> Vec<String> {
        let scan = pipeline.normalizing_scan().expect("a normalizing scan");
        let mut out = vec![];
        pipeline
            .walk_normalizing(
                scan,
                text,
                &SpecialPolicy::AllowAll,
                |stretch, later| pipeline.normalized_text(stretch, later),
                |step| {
                    out.push(match step {
                        Step::Plain {
                            normalized, piece, ..
                        } => normalized.map_or(text, String::as_str)[piece].to_owned(),
                        Step::Second {
                            normalized, span, ..
                        } => format!("{{{}}}", &normalized.map_or(text, String::as_str)[span]),
                        Step::First { span, .. } => format!("[{}]", &text[span]),
                    });
                    Ok(())
                },
            )
            .unwrap_or_else(|_| panic!("no error expected"));
        out
    }

    #[test]
    fn second_pass_finds_normalized_contents_in_normalized_text() {
        // Under NFC the token "e\u{301}" is looked for as "\u{e9}", in each NFC'd stretch.
        let nfc = pipeline(
            &[("e\u{301}x", NORMALIZED | LSTRIP), ("<r>", RSTRIP)],
            NormalizeStage::Nfc,
        );
        assert!(nfc.normalizer.normalizes_literals());
        assert_eq!(
            walked(&nfc, "a \u{e9}x<r>  e\u{301}xb"),
            ["a", "{ \u{e9}x}", "[<r>  ]", "{\u{e9}x}", "b"]
        );
        // A stretch NFC leaves as it is is searched in place.
        assert_eq!(walked(&nfc, "ab"), ["ab"]);
        // Without a normalizer the second pass runs on the text (walk_literals).
        let none = pipeline(&[("x", NORMALIZED)], NormalizeStage::None);
        assert!(none.normalizing_scan().is_none());
    }

    #[test]
    fn metaspace_runs_on_each_part_the_second_pass_leaves() {
        // HF's order: the flagged "x" is looked for in the text before the Metaspace
        // pre-tokenizer ("x", not "▁x"), then Metaspace runs on each part left: with "first"
        // only the part that starts the input gets a ▁ ("a " is "▁a▁", "b " after the
        // first-pass token "<r>" is "b▁"), in the ids and the offsets.
        use crate::normalizers::sentencepiece::MetaspaceNormalizer;
        use crate::spec::{NormalizerSpec, PrependScheme};
        let metaspace =
            MetaspaceNormalizer::new('\u{2581}', PrependScheme::First, &NormalizerSpec::None);
        let stage = NormalizeStage::Foreign(std::sync::Arc::new(metaspace.unwrap()));
        let p = pipeline(&[("<r>", 0), ("x", NORMALIZED)], stage);
        let text = "a x<r>b x";
        let scan = p.normalizing_scan().expect("a normalizing scan");
        let mut walked = vec![];
        p.walk_normalizing(
            scan,
            text,
            &SpecialPolicy::AllowAll,
            |stretch, later| p.second_pass_text(stretch, later),
            |step| {
                walked.push(match step {
                    Step::Plain {
                        normalized, piece, ..
                    } => normalized.map_or(text, String::as_str)[piece].to_owned(),
                    Step::Second { literal, .. } => format!("{{{}}}", literal.text),
                    Step::First { span, .. } => format!("[{}]", &text[span]),
                });
                Ok(())
            },
        )
        .unwrap_or_else(|_| panic!("no error expected"));
        assert_eq!(walked, ["a ", "{x}", "[<r>]", "b ", "{x}"]);
        let mut ids = Vec::new();
        p.encode(text, &SpecialPolicy::AllowAll, &mut ids).unwrap();
        let space = [0xE2, 0x96, 0x81];
        let (a, b) = (u32::from(b'a'), u32::from(b'b'));
        let expected: Vec<u32> =
            [&space[..], &[a], &space, &[301, 300, b], &space, &[301]].concat();
        assert_eq!(ids, expected);
        let (mut placed_ids, mut places) = (Vec::new(), Vec::new());
        p.encode_with_offsets(text, &SpecialPolicy::AllowAll, &mut placed_ids, &mut places)
            .unwrap();
        assert_eq!(placed_ids, ids);
        let spans: Vec<(u64, u64)> = places.iter().map(|p| (p[2], p[3])).collect();
        // (the prepended ▁ is aligned to the "a"; the ▁ of a space to it)
        let expected = [
            [(0, 1); 4].as_slice(),
            &[(1, 2); 3],
            &[(2, 3), (3, 6), (6, 7)],
            &[(7, 8); 3],
            &[(8, 9)],
        ]
        .concat();
        assert_eq!(spans, expected);
    }

    #[test]
    fn contents_are_normalized_as_hf_normalizes_them() {
        let literal = |text: &str| Literal {
            text: text.to_owned(),
            id: 0,
            special: false,
            flags: NORMALIZED,
        };
        assert_eq!(
            NormalizeStage::Nfd.normalized("\u{e9}").unwrap(),
            "e\u{301}"
        );
        assert_eq!(NormalizeStage::Nfkc.normalized("\u{fb01}").unwrap(), "fi");
        assert!(
            normalized_automaton(&[literal("\u{e9}"), literal("x")], &NormalizeStage::Nfd).is_ok()
        );
    }

    #[test]
    fn a_match_inside_stripped_whitespace_overlaps_as_in_hf() {
        // "[x]" takes the spaces after it; HF's search goes on after "[x]", so "  " matches
        // inside them, and the plain text after it starts at its end.
        let walk = |literals: &[(&str, u8)], text: &str| {
            let pipeline = pipeline(literals, NormalizeStage::None);
            let matcher = pipeline.literal_matcher.as_ref().unwrap();
            let mut out = vec![];
            pipeline
                .walk_literals(matcher, text, &SpecialPolicy::AllowAll, |plain, token| {
                    if !plain.is_empty() {
                        out.push(text[plain].to_owned());
                    }
                    if let Some((span, _)) = token {
                        out.push(format!("[{}]", &text[span]));
                    }
                    Ok(())
                })
                .unwrap_or_else(|_| panic!("no error expected"));
            out
        };
        assert_eq!(
            walk(&[("[x]", RSTRIP), ("  ", 0)], "[x]   y"),
            ["[[x]   ]", "[  ]", " y"]
        );
        // An lstrip token inside it starts at its end; with nothing left it is dropped.
        assert_eq!(
            walk(&[("[x]", RSTRIP), (" y", LSTRIP)], "[x]  y"),
            ["[[x]  ]", "[y]"]
        );
        assert_eq!(
            walk(&[("[x]", RSTRIP), (" ", LSTRIP | RSTRIP)], "[x] y"),
            ["[[x] ]", "y"]
        );
    }
}
