//! The `sentencepiece` spanner: a SentencePiece vocabulary's user-defined pieces cut out of
//! the normalized text, and [`SentencePieceModel`], what it and the `score-merge` and
//! `rank-merge` encoders read of a SentencePiece [`PipelineSpec`].
//!
//! SentencePiece BPE has no pre-tokenizer: it merges over the whole normalized text, and the
//! only boundaries are its user-defined pieces, matched leftmost first, the longest at each
//! place, and never merged with their neighbours. Where the model says so (`words`: no token
//! has a `▁` right after another character, so no merge crosses such a place), each piece is
//! also cut before every `▁` that follows another character: the same ids, and repeated words
//! come from the piece cache.
//!
//! ```
//! use wordsplit::spanners::sentencepiece::SentencePieceSpanner;
//! use wordsplit::spec::PipelineSpec;
//! use wordsplit::Spanner;
//! let spec = PipelineSpec::from_text(
//!     r#"{"normalizer":{"type":"None"},"spanner":{"type":"SentencePiece","user_defined":["<br>","<b>"],"words":true},"model":{"type":"SentencePieceBpe"},"decoder":{"type":"SentencePiece"},"post_processor":{"type":"None"}}"#,
//! ).unwrap();
//! let spanner = SentencePieceSpanner::new(&spec).unwrap();
//! let mut ends = vec![];
//! spanner.spans("▁a▁b<br><b>c", &mut ends).unwrap();
//! assert_eq!(ends, [4, 8, 12, 15, 16]); // "▁a", "▁b", "<br>", "<b>", "c"
//! ```

use crate::error::Error;
use crate::pipeline::SpannedText;
use crate::spanners::Spanner;
use crate::spec::{ModelSpec, PipelineSpec, SpannerSpec};
use aho_corasick::{AhoCorasick, MatchKind};

/// `▁` (U+2581), how SentencePiece writes a space inside pieces.
pub const SPACE: &str = "\u{2581}";

/// What a SentencePiece vocabulary's spanner and encoders read beyond its tokens, from its
/// [`PipelineSpec`]'s spanner and model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SentencePieceModel {
    /// Matched in the normalized text (longest first) and never merged.
    pub user_defined: Vec<String>,
    /// The UNUSED pieces a merge that makes one splits back (sentencepiece's rule).
    pub unused: Vec<String>,
    /// HF's `ignore_merges`: a piece that is a token is that token.
    pub ignore_merges: bool,
    /// Cut before each `▁` that follows another character (no merge joins the two)...
    pub words: bool,
    /// ... but inside a place of the text that spells one of these tokens (the few that have
    /// a `▁` right after another character).
    pub joined: Vec<String>,
    /// HF's `Metaspace` with `split: true`: cut before every `▁` but at the start.
    pub metaspace_split: bool,
    /// A symbol left that is no piece is its byte pieces (else `unk_token`, one per run).
    pub byte_fallback: bool,
    /// The unknown piece's text.
    pub unk_token: String,
}

impl SentencePieceModel {
    /// The model of a SentencePiece pipeline; [`Error::Unsupported`] for another kind.
    pub fn of(spec: &PipelineSpec) -> Result<Self, Error> {
        match (&spec.spanner, &spec.model) {
            (
                SpannerSpec::SentencePiece(split),
                ModelSpec::SentencePieceBpe {
                    unused,
                    ignore_merges,
                    byte_fallback,
                    unk_token,
                    ..
                },
            ) => Ok(Self {
                byte_fallback: *byte_fallback,
                unk_token: unk_token.clone(),
                user_defined: split.user_defined.clone(),
                unused: unused.clone(),
                ignore_merges: *ignore_merges,
                words: split.words,
                joined: split.joined.clone(),
                metaspace_split: split.metaspace_split,
            }),
            _ => Err(Error::Unsupported(format!(
                "this component reads SentencePiece BPE vocabularies only (a SentencePiece spanner \
                 and a SentencePieceBpe model), not one whose spanner is {} and model {}",
                spec.spanner.kind(),
                spec.model.kind()
            ))),
        }
    }
}

/// Cuts the user-defined pieces out of normalized text, and each stretch at words when the
/// model allows it (see the module docs).
pub struct SentencePieceSpanner {
    /// Leftmost-longest over the user-defined pieces (None: the model has none).
    matcher: Option<AhoCorasick>,
    words: bool,
    /// Cut before every `▁` (Metaspace's split), not only those after another character.
    every_space: bool,
    /// Every place of the model's joined tokens (overlapping; None: it has none).
    joined: Option<AhoCorasick>,
    /// Whether a user-defined piece holds a space or a `▁`.
    spaced_pieces: bool,
}

impl SentencePieceSpanner {
    /// The spanner of a SentencePiece pipeline: a SentencePiece BPE model's, or a Unigram or
    /// CharacterBpe model's (which cuts where its split says, the same way).
    pub fn new(spec: &PipelineSpec) -> Result<Self, Error> {
        let model = match (&spec.spanner, &spec.model) {
            (
                SpannerSpec::SentencePiece(split),
                ModelSpec::Unigram { .. } | ModelSpec::CharacterBpe { .. },
            ) => SentencePieceModel {
                user_defined: split.user_defined.clone(),
                words: split.words,
                joined: split.joined.clone(),
                metaspace_split: split.metaspace_split,
                ..SentencePieceModel::default()
            },
            _ => SentencePieceModel::of(spec)?,
        };
        let matcher = if model.user_defined.is_empty() {
            None
        } else {
            let built = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&model.user_defined)
                .map_err(|e| {
                    Error::VocabFormat(format!("cannot build the user-defined piece matcher: {e}"))
                })?;
            Some(built)
        };
        let joined = if model.joined.is_empty() || model.metaspace_split {
            None
        } else {
            let built = AhoCorasick::new(&model.joined).map_err(|e| {
                Error::VocabFormat(format!("cannot build the joined-token matcher: {e}"))
            })?;
            Some(built)
        };
        let spaced_pieces = model
            .user_defined
            .iter()
            .any(|piece| piece.contains([' ', '\u{2581}']));
        Ok(Self {
            matcher,
            spaced_pieces,
            words: model.words || model.metaspace_split,
            every_space: model.metaspace_split,
            joined,
        })
    }

    /// Push the end of each part of `text[start..end]`: cut before every `▁` whose previous
    /// character is not `▁`, when the model cuts at words.
    fn push_parts(&self, text: &str, start: usize, end: usize, ends: &mut Vec<usize>) {
        if start == end {
            return;
        }
        if self.words {
            // The places joined tokens spell, by start (no cut strictly inside one).
            let mut inside: Vec<(usize, usize)> = match &self.joined {
                Some(joined) => joined
                    .find_overlapping_iter(&text[start..end])
                    .map(|m| (start + m.start(), start + m.end()))
                    .collect(),
                None => Vec::new(),
            };
            inside.sort_unstable();
            let (mut next, mut covered_to) = (0, 0);
            // `▁` is E2 96 81, and E2 only ever starts a character: the `▁`s are found by
            // their first byte with a vector search (a loop over the bytes, whose branch
            // mispredicted at most words, took a tenth of a first pass over prose).
            let bytes = &text.as_bytes()[..end];
            // Where the last `▁` ends: a `▁` that starts there follows one (the stretch's
            // start counts as one: no cut there).
            let mut space_end = start;
            for i in memchr::memchr_iter(0xE2, &bytes[start..]).map(|at| start + at) {
                if bytes.get(i + 1..i + 3) != Some(&[0x96, 0x81]) {
                    continue;
                }
                while next < inside.len() && inside[next].0 < i {
                    covered_to = covered_to.max(inside[next].1);
                    next += 1;
                }
                let after_space = i == space_end;
                if (!after_space || self.every_space && i > start) && covered_to <= i {
                    ends.push(i);
                }
                space_end = i + 3;
            }
        }
        ends.push(end);
    }
}

impl SentencePieceSpanner {
    /// Whether it cuts at words and nowhere else (no user-defined pieces, no joined tokens):
    /// `Some(every_space)`, where [`crate::normalizers::metaspace_words::words_and_ends`]
    /// gives its cuts as it writes the words; None otherwise.
    pub fn words_only(&self) -> Option<bool> {
        (self.words && self.matcher.is_none() && self.joined.is_none()).then_some(self.every_space)
    }

    /// Its user-defined pieces' matcher, when cutting them out of the text before its spaces
    /// are escaped finds the same places and this spanner's only other cuts are at words
    /// (which cuts at the vocabulary's pairs include): `Some(None)` when it has none, None
    /// when the text must be split by [`Spanner::spans`] (HF's Metaspace split, or a piece
    /// holding a space or a `▁`).
    pub fn one_pass_matcher(&self) -> Option<Option<&AhoCorasick>> {
        if self.every_space || self.spaced_pieces {
            return None;
        }
        Some(self.matcher.as_ref())
    }
}

impl Spanner for SentencePieceSpanner {
    fn name(&self) -> &str {
        "sentencepiece"
    }

    fn spans(&self, text: &str, ends: &mut Vec<usize>) -> Result<Option<SpannedText>, Error> {
        let mut done = 0;
        if let Some(matcher) = &self.matcher {
            for found in matcher.find_iter(text) {
                self.push_parts(text, done, found.start(), ends);
                self.push_parts(text, found.start(), found.end(), ends);
                done = found.end();
            }
        }
        self.push_parts(text, done, text.len(), ends);
        Ok(None)
    }

    fn is_native(&self) -> bool {
        true
    }

    fn sentencepiece(&self) -> Option<&SentencePieceSpanner> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sentencepiece_spec;

    fn pattern(user_defined: &[&str], words: bool) -> PipelineSpec {
        sentencepiece_spec(&serde_json::json!({"user_defined": user_defined, "words": words}))
    }

    fn pieces(spanner: &SentencePieceSpanner, text: &str) -> Vec<String> {
        let mut ends = vec![];
        assert!(spanner.spans(text, &mut ends).unwrap().is_none());
        crate::spanners::pieces_at(text, &ends)
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn user_defined_pieces_longest_first_then_words() {
        let spanner = SentencePieceSpanner::new(&pattern(&["<b>", "<br>", "[REF]"], true)).unwrap();
        assert_eq!(
            pieces(&spanner, "▁▁a▁b<br><b>▁c▁▁[REF]d"),
            ["▁▁a", "▁b", "<br>", "<b>", "▁c", "▁▁", "[REF]", "d"]
        );
        assert!(pieces(&spanner, "").is_empty());
    }

    #[test]
    fn no_cut_inside_a_joined_token() {
        let model = serde_json::json!({
            "strip_leading_space": "none", "unk_surface": "?", "unused": [], "user_defined": [],
            "words": true, "joined": [">▁</"],
        });
        let spanner = SentencePieceSpanner::new(&sentencepiece_spec(&model)).unwrap();
        assert_eq!(
            pieces(&spanner, "▁<a>▁</a>▁x▁▁y>▁<"),
            ["▁<a>▁</a>", "▁x", "▁▁y>", "▁<"]
        );
    }

    #[test]
    fn metaspace_split_cuts_before_every_space() {
        let model = serde_json::json!({
            "strip_leading_space": "none", "unk_surface": "?", "unused": [], "user_defined": [],
            "words": false, "metaspace_split": true, "semantics": "hf",
        });
        let spanner = SentencePieceSpanner::new(&sentencepiece_spec(&model)).unwrap();
        assert_eq!(pieces(&spanner, "▁▁a▁▁b▁"), ["▁", "▁a", "▁", "▁b", "▁"]);
        assert_eq!(pieces(&spanner, "a▁▁b"), ["a", "▁", "▁b"]);
    }

    #[test]
    fn words_are_cut_before_each_space_that_follows_something_else() {
        // Read character by character: a cut before each `▁` after a character that is not
        // one (none at the start). `▂` (E2 96 82) and `—` (E2 80 94) share `▁`'s first bytes.
        let reference = |text: &str| {
            let mut ends = vec![];
            let mut after_space = true;
            for (at, c) in text.char_indices() {
                if c == '▁' && !after_space {
                    ends.push(at);
                }
                after_space = c == '▁';
            }
            ends.push(text.len());
            ends
        };
        let spanner = SentencePieceSpanner::new(&pattern(&[], true)).unwrap();
        let alphabet = ["▁", "▁▁", "a", "▂", "—", "é", "😀", "x▁"];
        for text in crate::testing::texts(11, &alphabet, 500, 20) {
            let mut ends = vec![];
            spanner.spans(&text, &mut ends).unwrap();
            assert_eq!(ends, reference(&text), "{text:?}");
        }
    }

    #[test]
    fn the_words_written_with_their_cuts_are_cut_as_this_spanner_cuts_them() {
        use crate::normalizers::metaspace_words::{words_and_ends, words_with_replacement};
        let split = serde_json::json!({
            "strip_leading_space": "none", "unk_surface": "?", "unused": [], "user_defined": [],
            "words": false, "metaspace_split": true, "semantics": "hf",
        });
        let alphabet = ["▁", "▁▁", " ", "\t", "a", "é", "\u{3000}", "x▁", "▂"];
        for spec in [pattern(&[], true), sentencepiece_spec(&split)] {
            let spanner = SentencePieceSpanner::new(&spec).unwrap();
            let every_space = spanner.words_only().unwrap();
            for text in crate::testing::texts(3, &alphabet, 1000, 30) {
                let words = words_with_replacement(&text, "▁");
                let mut expected = vec![];
                spanner.spans(&words, &mut expected).unwrap();
                expected.retain(|&end| end > 0);
                let mut ends = vec![];
                assert_eq!(words_and_ends(&text, every_space, &mut ends), words);
                assert_eq!(ends, expected, "{text:?}");
            }
        }
        // Not with user-defined pieces, or without words.
        assert_eq!(
            SentencePieceSpanner::new(&pattern(&["<b>"], true))
                .unwrap()
                .words_only(),
            None
        );
        assert_eq!(
            SentencePieceSpanner::new(&pattern(&[], false))
                .unwrap()
                .words_only(),
            None
        );
    }

    #[test]
    fn without_words_a_stretch_is_one_piece() {
        let spanner = SentencePieceSpanner::new(&pattern(&[], false)).unwrap();
        assert_eq!(pieces(&spanner, "▁a▁b▁"), ["▁a▁b▁"]);
    }

    #[test]
    fn a_pipeline_of_another_kind_is_refused() {
        let regex = PipelineSpec::regex("\\s+", crate::spec::NormalizerSpec::None);
        assert!(matches!(
            SentencePieceSpanner::new(&regex),
            Err(Error::Unsupported(_))
        ));
    }
}
