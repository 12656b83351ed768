//! The whole encode in one native call: special/added literals → normalizer → spanner →
//! span encoder → ids. Mirrors the Python engine (`wordsplit/engines/python.py`), the
//! reference, stage for stage and error for error.
//!
//! Each stage is native when the core has it (the scanners, the encoders, the none/NFC
//! normalizers) or a Python component that the pipeline calls for its stage (a plug-in, or
//! the regex spanner for a pattern no scanner handles). A pipeline with a Python stage is run
//! with the GIL held ([`Pipeline::is_native`] tells the glue which); an all-native one with the
//! GIL released. The Python side resolves the allowed/disallowed policy into a
//! [`SpecialPolicy`].

use aho_corasick::{AhoCorasick, Input, MatchKind};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

use std::cell::RefCell;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::encoders::{self, merge_piece, EncoderKind};
use crate::spanners::classes::decode_multibyte;
use crate::spanners::{HfProgram, RegexSequence, RegexSpanner, Spanner, SplitError};
use crate::tables::MergeTables;

mod literals;
mod offsets;
mod piece_cache;

use piece_cache::{LongPieces, PieceCache, CACHE_MAX_PIECE, LONG_MAX_PIECE};

/// One special or added token literal.
pub struct Literal {
    pub text: String,
    pub id: u32,
    /// Special tokens follow the allowed/disallowed policy; added tokens always match.
    pub special: bool,
    /// HF's added-token flags: bits [`LSTRIP`], [`RSTRIP`], [`SINGLE_WORD`], [`NORMALIZED`]
    /// (`Vocab.literal_flags`).
    pub flags: u8,
}

/// The whitespace before the token is part of its match.
pub const LSTRIP: u8 = 1;
/// The whitespace after the token is part of its match.
pub const RSTRIP: u8 = 2;
/// The token matches only with no word character right before or after it.
pub const SINGLE_WORD: u8 = 4;
/// The token is matched in a second pass, in the stretches the others left.
pub const NORMALIZED: u8 = 8;

/// What a literal pass calls for each token: the plain text before it, its span and literal.
type TokenSink<'a, 'b> =
    dyn FnMut(Range<usize>, (Range<usize>, &'a Literal)) -> Result<(), EncodeError> + 'b;

/// The literal scan of a vocabulary with flags: HF's two passes, each a leftmost-longest
/// automaton and the literal index of each of its patterns.
struct FlaggedScan {
    raw: (AhoCorasick, Vec<usize>),
    normalized: Option<(AhoCorasick, Vec<usize>)>,
    /// The second pass searches each stretch's normalized text for the literals' normalized
    /// contents (HF's order, `literals.rs`), not the stretch itself.
    normalizes: bool,
}

fn literal_automaton(
    literals: &[Literal],
    pick: impl Fn(&Literal) -> bool,
) -> Result<(AhoCorasick, Vec<usize>), String> {
    let indices: Vec<usize> = (0..literals.len())
        .filter(|&i| pick(&literals[i]))
        .collect();
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(indices.iter().map(|&i| literals[i].text.as_bytes()))
        .map_err(|e| format!("cannot build the special-token matcher: {e}"))?;
    Ok((ac, indices))
}

/// What to do with each special literal in one call (indexes into the literal list).
pub enum SpecialPolicy {
    /// Every special literal is a token; none is an error.
    AllowAll,
    /// `allowed[i]` / `disallowed[i]` per literal (added literals ignore both).
    Mixed {
        allowed: Vec<bool>,
        disallowed: Vec<bool>,
    },
}

/// The entry of `id` in a thread's list of per-object caches, moved to the front (most
/// recently used first), or made by `make` in front of the `limit - 1` most recent others:
/// caches of objects that were dropped stay behind until they are the least recently used.
pub(crate) fn most_recent<T>(
    caches: &mut Vec<(u64, T)>,
    id: u64,
    limit: usize,
    make: impl FnOnce() -> T,
) -> &mut T {
    match caches.iter().position(|(key, _)| *key == id) {
        Some(0) => {}
        Some(i) => {
            let entry = caches.remove(i);
            caches.insert(0, entry);
        }
        None => {
            caches.truncate(limit - 1);
            caches.insert(0, (id, make()));
        }
    }
    &mut caches[0].1
}

/// Why an encode stopped (the caller discards the ids made so far).
pub enum EncodeError {
    /// A disallowed special literal (its text); the glue raises DisallowedSpecialError.
    Disallowed(String),
    /// A Python stage raised this, or broke its contract (a ComponentError).
    Python(PyErr),
    /// A native stage broke its contract (the glue raises ComponentError with this message).
    Component(String),
}

/// The normalizer stage.
pub enum NormalizeStage {
    None,
    /// HF's NFC (the `unicode-normalization-alignments` tables HF uses).
    Nfc,
    /// HF's NFD, NFKC and NFKD (the same crate and tables).
    Nfd,
    Nfkc,
    Nfkd,
    /// A Python callable `str -> str`, and its registry name.
    Python(Py<PyAny>, String),
}

/// The spanner stage.
pub enum SpanStage {
    Native(Box<dyn Spanner>),
    /// Any pattern (spanner `regex`), and its registry name; see [`RegexSpanner`].
    Regex(Box<RegexSpanner>, String),
    /// A llama.cpp-style sequence of patterns, and its name; see [`RegexSequence`].
    RegexSequence(RegexSequence, String),
    /// A Python object with `split(str) -> list[str]`, and its registry name.
    Python(Py<PyAny>, String),
    /// A Python object that drops text (`drops_text` is true): its `spans(str)` gives
    /// `(start, end)` or `(start, end, prefix)` spans, and its registry name.
    PythonSpans(Py<PyAny>, String),
}

impl SpanStage {
    /// The stage of a Python spanner object: [`SpanStage::PythonSpans`] when it declares
    /// `drops_text`, else [`SpanStage::Python`] (its pieces must cover the text).
    pub fn python(py: Python<'_>, object: Py<PyAny>, name: String) -> PyResult<Self> {
        // As Python's getattr(spanner, "drops_text", False): only a missing attribute is False.
        let drops = match object.bind(py).getattr("drops_text") {
            Ok(value) => value.is_truthy()?,
            Err(error) if error.is_instance_of::<pyo3::exceptions::PyAttributeError>(py) => false,
            Err(error) => return Err(error),
        };
        Ok(if drops {
            SpanStage::PythonSpans(object, name)
        } else {
            SpanStage::Python(object, name)
        })
    }
}

/// The pieces of a text-dropping spanner: the text they make (each span's prefix and text,
/// in order) and, per piece, its span's byte range in the spanner's input and its prefix's
/// length in bytes.
pub(crate) struct SpannedText {
    pub text: String,
    pub pieces: Vec<(usize, usize, usize)>,
}

/// The span-encoder stage.
pub enum EncodeStage {
    Native(EncoderKind),
    /// A Python object with `encode_piece(bytes) -> list[int]`, and its registry name.
    Python(Py<PyAny>, String),
}

/// Each thread keeps the piece caches of this many pipelines, the most recently used.
const CACHED_PIPELINES: usize = 8;

thread_local! {
    static PIECE_CACHES: RefCell<Vec<(u64, PieceCache)>> = const { RefCell::new(Vec::new()) };
}

static NEXT_PIPELINE_ID: AtomicU64 = AtomicU64::new(0);

pub struct Pipeline {
    /// Names this pipeline's entries in the per-thread piece caches (never reused).
    id: u64,
    pub tables: std::sync::Arc<MergeTables>,
    pub encoder: EncodeStage,
    pub spanner: SpanStage,
    pub literals: Vec<Literal>,
    literal_matcher: Option<AhoCorasick>,
    /// Set only when a literal has flags; the common case keeps the one plain scan.
    flagged: Option<Box<FlaggedScan>>,
    pub normalizer: NormalizeStage,
    /// `(id, fuse)`: a byte no token spells is this token (HF's BPE `unk_token`; one per run
    /// of such bytes with `fuse`), or, when None, dropped before merging.
    pub unk: Option<(u32, bool)>,
    /// The native run of the Python spanner stage's split program (an `hf-split` spanner, which
    /// may drop text): encoding uses it, the offsets (`pipeline/offsets.rs`) the Python stage,
    /// which gives the same pieces.
    pub program: Option<Box<HfProgram>>,
}

impl Pipeline {
    /// The Python objects among the stages (for the garbage collector's traversal).
    pub fn python_stages(&self) -> impl Iterator<Item = &Py<PyAny>> {
        let normalizer = match &self.normalizer {
            NormalizeStage::Python(object, _) => Some(object),
            _ => None,
        };
        let spanner = match &self.spanner {
            SpanStage::Python(object, _) | SpanStage::PythonSpans(object, _) => Some(object),
            _ => None,
        };
        let encoder = match &self.encoder {
            EncodeStage::Python(object, _) => Some(object),
            EncodeStage::Native(_) => None,
        };
        normalizer.into_iter().chain(spanner).chain(encoder)
    }

    pub fn new(
        tables: std::sync::Arc<MergeTables>,
        encoder: EncodeStage,
        spanner: SpanStage,
        literals: Vec<Literal>,
        normalizer: NormalizeStage,
    ) -> Result<Self, String> {
        let literal_matcher = if literals.is_empty() {
            None
        } else {
            // Leftmost-longest, as HF's added-vocabulary matcher.
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(literals.iter().map(|l| l.text.as_bytes()))
                .map_err(|e| format!("cannot build the special-token matcher: {e}"))?;
            Some(ac)
        };
        let flagged = if literals.iter().any(|l| l.flags != 0) {
            let has = |l: &Literal| l.flags & NORMALIZED != 0;
            let normalized = literals.iter().any(has);
            let normalizes = normalized && literals::second_pass_normalizes(&normalizer);
            Some(Box::new(FlaggedScan {
                raw: literal_automaton(&literals, |l| !has(l))?,
                normalized: if normalizes {
                    Some(literals::normalized_automaton(&literals, &normalizer)?)
                } else if normalized {
                    Some(literal_automaton(&literals, has)?)
                } else {
                    None
                },
                normalizes,
            }))
        } else {
            None
        };
        let id = NEXT_PIPELINE_ID.fetch_add(1, Ordering::Relaxed);
        Ok(Self {
            id,
            tables,
            encoder,
            spanner,
            literals,
            literal_matcher,
            flagged,
            normalizer,
            unk: None,
            program: None,
        })
    }

    /// Whether every stage is native: then encoding needs no GIL.
    pub fn is_native(&self) -> bool {
        (self.program.is_some()
            || !matches!(
                self.spanner,
                SpanStage::Python(..) | SpanStage::PythonSpans(..)
            ))
            && matches!(self.encoder, EncodeStage::Native(_))
            && !matches!(self.normalizer, NormalizeStage::Python(..))
    }

    /// Encode `text`; `Err` names the first disallowed special literal found (the caller
    /// discards `out` then, so nothing half-done escapes).
    pub fn encode(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<u32>,
    ) -> Result<(), EncodeError> {
        let Some(matcher) = &self.literal_matcher else {
            return self.encode_plain(text, out);
        };
        if let Some(scan) = self.normalizing_scan() {
            return self.encode_normalizing(scan, text, policy, out);
        }
        self.walk_literals(matcher, text, policy, |plain, literal| {
            self.encode_plain(&text[plain], out)?;
            if let Some((_, literal)) = literal {
                out.push(literal.id);
            }
            Ok(())
        })
    }

    /// Walk `text` by the literals that are tokens under `policy`, leftmost-longest:
    /// `each(plain, Some((span, literal)))` for each such literal with the plain text before
    /// it, then `each(plain, None)` for the plain text after the last. A special literal that
    /// is not a token is plain text (the search resumes one character after its start).
    /// Err: the first disallowed special literal, or what `each` returned.
    pub(crate) fn walk_literals(
        &self,
        matcher: &AhoCorasick,
        text: &str,
        policy: &SpecialPolicy,
        mut each: impl FnMut(Range<usize>, Option<(Range<usize>, &Literal)>) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
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
    fn is_token(&self, i: usize, policy: &SpecialPolicy) -> Result<bool, EncodeError> {
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
                if disallowed[i] {
                    return Err(EncodeError::Disallowed(literal.text.clone()));
                }
                Ok(allowed[i])
            }
        }
    }

    /// [`Pipeline::walk_literals`] with HF's flags: the literals without [`NORMALIZED`] in
    /// `text`, then those with it in each stretch the first pass left (as the Python engine's
    /// `LiteralScan`, which says what each flag does).
    fn walk_flagged(
        &self,
        flagged: &FlaggedScan,
        text: &str,
        policy: &SpecialPolicy,
        mut each: impl FnMut(Range<usize>, Option<(Range<usize>, &Literal)>) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
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
    fn literal_pass<'a>(
        &'a self,
        (matcher, indices): &(AhoCorasick, Vec<usize>),
        text: &str,
        range: Range<usize>,
        policy: &SpecialPolicy,
        token: &mut TokenSink<'a, '_>,
    ) -> Result<Range<usize>, EncodeError> {
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
                    .take_while(|c| c.is_whitespace())
                    .map(char::len_utf8)
                    .sum();
                start = (start - taken).max(plain_start);
            }
            if literal.flags & RSTRIP != 0 {
                stop += text[stop..hi]
                    .chars()
                    .take_while(|c| c.is_whitespace())
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

    /// Normalize, split and merge text that holds no literal token.
    fn encode_plain(&self, text: &str, out: &mut Vec<u32>) -> Result<(), EncodeError> {
        if text.is_empty() {
            return Ok(());
        }
        // ASCII text is in all four forms; so is text the crate's quick check passes (it reads
        // the crate's own tables), so both skip the work.
        let unchanged = |quick: &dyn Fn(&str) -> IsNormalized| {
            text.is_ascii() || quick(text) == IsNormalized::Yes
        };
        match &self.normalizer {
            NormalizeStage::Nfc => match nfc_of(text) {
                Some(normalized) => self.encode_split(&normalized, out),
                None => self.encode_split(text, out),
            },
            NormalizeStage::Nfd if !unchanged(&|t| is_nfd_quick(t.chars())) => {
                let normalized: String = text.nfd().map(|(c, _)| c).collect();
                self.encode_split(&normalized, out)
            }
            NormalizeStage::Nfkc if !unchanged(&|t| is_nfkc_quick(t.chars())) => {
                let normalized: String = text.nfkc().map(|(c, _)| c).collect();
                self.encode_split(&normalized, out)
            }
            NormalizeStage::Nfkd if !unchanged(&|t| is_nfkd_quick(t.chars())) => {
                let normalized: String = text.nfkd().map(|(c, _)| c).collect();
                self.encode_split(&normalized, out)
            }
            NormalizeStage::Python(function, name) => {
                let normalized = python_normalize(function, name, text)?;
                self.encode_split(&normalized, out)
            }
            _ => self.encode_split(text, out),
        }
    }

    fn encode_split(&self, text: &str, out: &mut Vec<u32>) -> Result<(), EncodeError> {
        let mut ends = Vec::with_capacity(text.len() / 4 + 1);
        let mut spanned = None;
        match &self.spanner {
            _ if self.program.is_some() => spanned = self.program_spans(text, &mut ends)?,
            SpanStage::Native(spanner) => spanner.split(text, &mut ends),
            SpanStage::Regex(spanner, name) => spanner
                .split(text, &mut ends)
                .map_err(|e| split_error(name, e))?,
            SpanStage::RegexSequence(spanner, name) => spanner
                .split(text, &mut ends)
                .map_err(|e| split_error(name, e))?,
            SpanStage::Python(spanner, name) => python_split(spanner, name, text, &mut ends)?,
            SpanStage::PythonSpans(spanner, name) => {
                spanned = python_spans(spanner, name, text, &mut ends)?;
            }
        }
        // A dropping spanner's pieces are encoded from the text they make.
        let text = spanned.as_ref().map_or(text, |s| s.text.as_str());
        let tables = &*self.tables;
        match &self.encoder {
            EncodeStage::Native(kind) => {
                self.encode_pieces::<true>(text, &ends, out, |piece, out| {
                    merge_piece(*kind, tables, piece, out);
                    Ok(())
                })
            }
            // The Python encoder sees every piece (no whole-token or single-byte shortcut: it
            // is the encoder's to decide); the cache spares it repeated ones.
            EncodeStage::Python(encoder, name) => {
                self.encode_pieces::<false>(text, &ends, out, |piece, out| {
                    python_encode(encoder, name, tables.n_vocab(), piece, out)
                })
            }
        }
    }

    /// The pieces of [`Self::program`] (see [`HfProgram::spans`]); none without a program.
    fn program_spans(
        &self,
        text: &str,
        ends: &mut Vec<usize>,
    ) -> Result<Option<SpannedText>, EncodeError> {
        let Some(program) = &self.program else {
            return Ok(None);
        };
        program.spans(text, ends).map_err(|e| {
            let name = match &self.spanner {
                SpanStage::Python(_, name) | SpanStage::PythonSpans(_, name) => name.as_str(),
                _ => "hf-split",
            };
            split_error(name, e)
        })
    }

    /// Encode the pieces of `text` ending at `ends`, through this thread's piece cache;
    /// `merge` encodes a piece the cache does not hold. `SHORTCUTS`: a whole-token piece is
    /// one lookup and a single byte its id, without `merge` (the native encoders' rule).
    ///
    /// A piece holding a byte no token spells (vocabularies that lack some,
    /// `tables.lacks_bytes`; complete ones never look) goes to [`Self::encode_unknown`].
    #[inline(always)]
    fn encode_pieces<const SHORTCUTS: bool>(
        &self,
        text: &str,
        ends: &[usize],
        out: &mut Vec<u32>,
        mut merge: impl FnMut(&[u8], &mut Vec<u32>) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        let text_bytes = text.as_bytes();
        let tables = &*self.tables;
        let lacks_bytes = tables.lacks_bytes;
        let mut kept: Vec<u8> = Vec::new();
        PIECE_CACHES.with_borrow_mut(|caches| {
            let cache = most_recent(caches, self.id, CACHED_PIPELINES, PieceCache::new);
            // A piece that is one byte or a whole token (most pieces of most text: 93 % of
            // English prose's) is handled in the loop itself ([`encoders::shortcut`],
            // inlined); the cache and the merge are a call away, so the common case pays no
            // call, no spilled registers and no `Result` written to memory and read back.
            let shortcut = |bytes: &[u8], start: usize, end: usize, out: &mut Vec<u32>| {
                SHORTCUTS && encoders::shortcut(tables, bytes, start, end, out)
            };
            // `bytes[start..end]`, a piece no shortcut takes; the whole buffer is passed for the
            // padded reads of the cache key.
            let mut cached_or_merged =
                |bytes: &[u8], start: usize, end: usize, out: &mut Vec<u32>| {
                    let piece = &bytes[start..end];
                    if piece.len() > LONG_MAX_PIECE {
                        merge(piece, out)
                    } else if piece.len() > CACHE_MAX_PIECE {
                        let hash = LongPieces::hash(piece);
                        if let Some(ids) = cache.long.get(piece, hash) {
                            out.extend_from_slice(ids);
                        } else {
                            let first = out.len();
                            merge(piece, out)?;
                            cache.long.put(piece, hash, &out[first..]);
                        }
                        Ok(())
                    } else {
                        let (key, hash) = PieceCache::key_in(bytes, start, end);
                        if let Some(ids) = cache.get(&key, piece.len(), hash) {
                            // One to seven ids: pushed one by one, not a `memcpy` call.
                            for &id in ids {
                                out.push(id);
                            }
                        } else {
                            let first = out.len();
                            merge(piece, out)?;
                            cache.put(key, piece.len(), hash, &out[first..]);
                        }
                        Ok(())
                    }
                };
            let mut start = 0;
            for &end in ends {
                let piece_start = start;
                start = end;
                if lacks_bytes
                    && !text_bytes[piece_start..end]
                        .iter()
                        .all(|&b| tables.has_byte(b))
                {
                    self.encode_unknown(
                        text_bytes,
                        piece_start,
                        end,
                        &mut kept,
                        out,
                        &mut |bytes: &[u8], start: usize, end: usize, out: &mut Vec<u32>| {
                            if shortcut(bytes, start, end, out) {
                                Ok(())
                            } else {
                                cached_or_merged(bytes, start, end, out)
                            }
                        },
                    )?;
                } else if !shortcut(text_bytes, piece_start, end, out) {
                    cached_or_merged(text_bytes, piece_start, end, out)?;
                }
            }
            Ok(())
        })
    }

    /// A piece holding bytes no token spells, as HF encodes it: a piece that is itself a token
    /// is that token (whole-piece lookup, HF's `ignore_merges`); else, with an unk token, each
    /// such byte is the unk token (a run of them one, with `fuse`) and the bytes between them
    /// merge on their own (no merge holds the unk token); without one, the bytes are dropped
    /// before merging (`axb` merges as `ab`, and a piece of such bytes alone gives no ids).
    #[cold]
    fn encode_unknown(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        kept: &mut Vec<u8>,
        out: &mut Vec<u32>,
        encode_one: &mut impl FnMut(&[u8], usize, usize, &mut Vec<u32>) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        let tables = &*self.tables;
        let piece = &text[start..end];
        if let Some(id) = tables.whole_in(text, start, end) {
            out.push(id);
            return Ok(());
        }
        let Some((unk, fuse)) = self.unk else {
            kept.clear();
            kept.extend(piece.iter().copied().filter(|&b| tables.has_byte(b)));
            return if kept.is_empty() {
                Ok(())
            } else {
                encode_one(kept, 0, kept.len(), out)
            };
        };
        let mut i = 0;
        while i < piece.len() {
            let known = tables.has_byte(piece[i]);
            let run_end = piece[i..]
                .iter()
                .position(|&b| tables.has_byte(b) != known)
                .map_or(piece.len(), |n| i + n);
            if known {
                encode_one(text, start + i, start + run_end, out)?;
            } else if fuse {
                out.push(unk);
            } else {
                out.extend(std::iter::repeat_n(unk, run_end - i));
            }
            i = run_end;
        }
        Ok(())
    }
}

/// One bit per code point of the Basic Multilingual Plane: set for a starter (canonical
/// combining class 0) that passes NFC's quick check, the characters [`nfc_of`] passes over.
/// Made once per process from the normalization crate's own lookups (65,536 of each, under
/// 2 ms), so that text in CJK, Cyrillic, Greek or Arabic costs [`nfc_of`] a bit test per
/// character rather than two perfect-hash lookups (a tenth of a one-pass encode of
/// multilingual text with Qwen3's NFC).
fn plain_starters() -> &'static [u64; 1024] {
    static STARTERS: OnceLock<Box<[u64; 1024]>> = OnceLock::new();
    STARTERS.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for c in (0..0x1_0000).filter_map(char::from_u32) {
            if canonical_combining_class(c) == 0
                && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes
            {
                bits[c as usize / 64] |= 1 << (c as usize % 64);
            }
        }
        bits
    })
}

#[inline(always)]
fn is_plain_starter(starters: &[u64; 1024], c: char) -> bool {
    let c = c as usize;
    c < 0x1_0000 && starters[c / 64] & (1 << (c % 64)) != 0
}

/// The character starting at byte `i` of `bytes`, the bytes of a `str`, and its length.
#[inline(always)]
fn char_at(bytes: &[u8], i: usize) -> (char, usize) {
    let (code, width) = match bytes[i] {
        lead @ 0..=0x7f => (u32::from(lead), 1),
        _ => decode_multibyte(bytes, i),
    };
    // SAFETY: `bytes` is valid UTF-8 and `i` the start of one of its characters, so these
    // are the bytes of one scalar value, decoded as UTF-8 encodes it.
    (unsafe { char::from_u32_unchecked(code) }, width)
}

/// HF's NFC of `text` (the crate's), or None when `text` is already in NFC.
///
/// Only the stretches that can change are normalized. The text is cut before every starter
/// whose NFC quick check is Yes: nothing before such a character can reorder past it or
/// compose with it, so NFC of the whole is NFC of each stretch, concatenated. A stretch whose
/// characters all pass the quick check in canonical order is already NFC. Text with a few
/// characters that the quick check calls Maybe (Tamil and Bengali vowel signs, kana voicing
/// marks...) thus costs a few short normalizations instead of one of the whole document.
pub(crate) fn nfc_of(text: &str) -> Option<String> {
    if text.is_ascii() {
        return None;
    }
    let mut out: Option<String> = None;
    let mut copied = 0; // text[..copied] is in `out` already
    let mut flush = |start: usize, end: usize, out: &mut Option<String>| {
        let stretch = &text[start..end];
        let normalized: String = stretch.nfc().map(|(c, _)| c).collect();
        if normalized != stretch {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..start]);
            o.push_str(&normalized);
            copied = end;
        }
    };
    let starters = plain_starters();
    let bytes = text.as_bytes();
    let (mut stretch, mut suspect, mut last_class) = (0, false, 0u8);
    let mut i = 0;
    while i < bytes.len() {
        // Outside a suspect stretch, eight ASCII characters (plain starters all) at a time:
        // the last of them starts the stretch.
        if !suspect {
            if let Some(word) = bytes.get(i..i + 8) {
                let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
                if word & 0x8080_8080_8080_8080 == 0 {
                    stretch = i + 7;
                    last_class = 0;
                    i += 8;
                    continue;
                }
            }
        }
        let (c, width) = char_at(bytes, i);
        // Below U+0300 every character is a starter that passes the quick check.
        let (class, yes) = if c < '\u{300}' || is_plain_starter(starters, c) {
            (0, true)
        } else {
            let yes = is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes;
            (canonical_combining_class(c), yes)
        };
        if class == 0 && yes {
            if suspect {
                flush(stretch, i, &mut out);
            }
            stretch = i;
            suspect = false;
        } else if !yes || (class != 0 && class < last_class) {
            suspect = true;
        }
        last_class = class;
        i += width;
    }
    if suspect {
        flush(stretch, text.len(), &mut out);
    }
    if let Some(o) = out.as_mut() {
        o.push_str(&text[copied..]);
    }
    out
}

/// The ComponentError of a native regex stage, worded as the Python engine words it for the
/// Python spanner of the same name (a gap is text its split() would have dropped).
fn split_error(name: &str, error: SplitError) -> EncodeError {
    EncodeError::Component(match error {
        SplitError::Gap(_) => format!(
            "spanner '{name}': split() must return a list of str that concatenate to its input"
        ),
        SplitError::Engine(message) => format!("spanner '{name}': {message}"),
    })
}

/// A ComponentError with `message`.
fn component_error(py: Python<'_>, message: String) -> EncodeError {
    EncodeError::Python(crate::ws_error(py, "ComponentError", message))
}

/// `text` as a Rust string: lone surrogates become U+FFFD and surrogate pairs their character,
/// as tiktoken does (`text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`).
pub fn text_without_surrogates(text: &Bound<'_, PyString>) -> PyResult<String> {
    if let Ok(plain) = text.to_str() {
        return Ok(plain.to_owned());
    }
    let utf16 = text.call_method1("encode", ("utf-16", "surrogatepass"))?;
    utf16
        .call_method1("decode", ("utf-16", "replace"))?
        .downcast_into::<PyString>()?
        .to_str()
        .map(str::to_owned)
}

/// The Python normalizer's output for `text` (surrogates fixed as in the input).
fn python_normalize(function: &Py<PyAny>, name: &str, text: &str) -> Result<String, EncodeError> {
    Python::with_gil(|py| {
        let result = function
            .bind(py)
            .call1((text,))
            .map_err(EncodeError::Python)?;
        let Ok(normalized) = result.downcast::<PyString>() else {
            let kind = result.get_type().name().map_err(EncodeError::Python)?;
            return Err(component_error(
                py,
                format!(
                    "normalizer {} must return a str, not {kind}",
                    py_repr(py, name)
                ),
            ));
        };
        text_without_surrogates(normalized).map_err(EncodeError::Python)
    })
}

/// The ends of the pieces the Python spanner cuts `text` into (empty pieces skipped), after
/// checking that they are str and concatenate to `text`.
fn python_split(
    spanner: &Py<PyAny>,
    name: &str,
    text: &str,
    ends: &mut Vec<usize>,
) -> Result<(), EncodeError> {
    Python::with_gil(|py| {
        let broken = || {
            component_error(
                py,
                format!(
                    "spanner {}: split() must return a list of str that concatenate to its input",
                    py_repr(py, name)
                ),
            )
        };
        let pieces = spanner
            .bind(py)
            .call_method1("split", (text,))
            .map_err(EncodeError::Python)?;
        let pieces = pieces.downcast::<PyList>().map_err(|_| broken())?;
        let mut position = 0;
        for piece in pieces.iter() {
            let piece = piece.downcast::<PyString>().map_err(|_| broken())?;
            let piece = piece.to_str().map_err(|_| broken())?;
            if !text[position..].starts_with(piece) {
                return Err(broken());
            }
            if !piece.is_empty() {
                position += piece.len();
                ends.push(position);
            }
        }
        if position != text.len() {
            return Err(broken());
        }
        Ok(())
    })
}

/// The pieces of a Python spanner that drops text, from its `spans(text)`, checked: a list of
/// `(start, end)` or `(start, end, prefix)` tuples, int char offsets in order within `text`, a
/// str prefix. `ends` gets the piece ends (empty pieces without a prefix skipped) in `text`
/// when the spans cover it without prefixes (then `None`: the common case costs no copy), else
/// in the text the pieces make, which is returned.
fn python_spans(
    spanner: &Py<PyAny>,
    name: &str,
    text: &str,
    ends: &mut Vec<usize>,
) -> Result<Option<SpannedText>, EncodeError> {
    Python::with_gil(|py| {
        let broken = || {
            component_error(
                py,
                format!(
                    "spanner {}: spans() must return a list of (start, end) or (start, end, prefix) \
                     tuples: int offsets in order within its input, a str prefix",
                    py_repr(py, name)
                ),
            )
        };
        let spans = spanner
            .bind(py)
            .call_method1("spans", (text,))
            .map_err(EncodeError::Python)?;
        let spans = spans.downcast::<PyList>().map_err(|_| broken())?;
        // Char offsets → byte offsets, walking forward (the spans are in order).
        let ascii = text.is_ascii();
        let (mut at_char, mut at_byte) = (0usize, 0usize);
        let mut byte_of = |index: usize| -> Option<usize> {
            if ascii {
                return (index <= text.len()).then_some(index);
            }
            while at_char < index {
                at_byte += text[at_byte..].chars().next()?.len_utf8();
                at_char += 1;
            }
            Some(at_byte)
        };
        let mut pieces: Vec<(usize, usize, Option<String>)> = Vec::with_capacity(spans.len());
        let (mut position, mut previous_end, mut covering) = (0usize, 0usize, true);
        for span in spans.iter() {
            let span = span.downcast::<PyTuple>().map_err(|_| broken())?;
            if span.len() != 2 && span.len() != 3 {
                return Err(broken());
            }
            let offset = |i: usize| -> Option<usize> {
                let item = span.get_item(i).ok()?;
                if !item.is_exact_instance_of::<pyo3::types::PyInt>() {
                    return None;
                }
                item.extract::<usize>().ok()
            };
            let (Some(start), Some(end)) = (offset(0), offset(1)) else {
                return Err(broken());
            };
            let prefix = if span.len() == 3 {
                let item = span.get_item(2).map_err(|_| broken())?;
                let prefix = item.downcast::<PyString>().map_err(|_| broken())?;
                Some(prefix.to_str().map_err(|_| broken())?.to_owned())
            } else {
                None
            }
            .filter(|p| !p.is_empty());
            if start < position || end < start {
                return Err(broken());
            }
            let (Some(start_byte), Some(end_byte)) = (byte_of(start), byte_of(end)) else {
                return Err(broken());
            };
            position = end;
            if start_byte == end_byte && prefix.is_none() {
                continue;
            }
            covering &= prefix.is_none() && start_byte == previous_end;
            previous_end = end_byte;
            pieces.push((start_byte, end_byte, prefix));
        }
        if covering && previous_end == text.len() {
            ends.extend(pieces.iter().map(|piece| piece.1));
            return Ok(None);
        }
        let mut kept = String::with_capacity(text.len() + pieces.len());
        let mut placed = Vec::with_capacity(pieces.len());
        for (start, end, prefix) in pieces {
            let prefix = prefix.unwrap_or_default();
            kept.push_str(&prefix);
            kept.push_str(&text[start..end]);
            ends.push(kept.len());
            placed.push((start, end, prefix.len()));
        }
        Ok(Some(SpannedText {
            text: kept,
            pieces: placed,
        }))
    })
}

/// Append the Python encoder's ids of `piece` to `out`, after checking they are token ids.
fn python_encode(
    encoder: &Py<PyAny>,
    name: &str,
    n_vocab: usize,
    piece: &[u8],
    out: &mut Vec<u32>,
) -> Result<(), EncodeError> {
    Python::with_gil(|py| {
        let bytes = PyBytes::new(py, piece);
        let ids = encoder
            .bind(py)
            .call_method1("encode_piece", (&bytes,))
            .map_err(EncodeError::Python)?;
        let broken = || {
            let shown = bytes
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| format!("{piece:?}"));
            component_error(
                py,
                format!(
                    "encoder {}: encode_piece({shown}) must return a list of token ids below {n_vocab}",
                    py_repr(py, name)
                ),
            )
        };
        let ids = ids.downcast::<PyList>().map_err(|_| broken())?;
        let start = out.len();
        for id in ids.iter() {
            // `type(id) is int`, as the Python engine checks
            if !id.is_exact_instance_of::<pyo3::types::PyInt>() {
                out.truncate(start);
                return Err(broken());
            }
            match id.extract::<u64>() {
                Ok(value) if (value as usize) < n_vocab => out.push(value as u32),
                _ => {
                    out.truncate(start);
                    return Err(broken());
                }
            }
        }
        Ok(())
    })
}

/// Python's `repr()` of a string (as the Python engine's messages show names and literals).
pub fn py_repr(py: Python<'_>, text: &str) -> String {
    PyString::new(py, text)
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| format!("{text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let pipeline = Pipeline::new(
            std::sync::Arc::new(crate::tables::tests::tiny(&[])),
            EncodeStage::Native(EncoderKind::Auto),
            SpanStage::Native(Box::new(crate::spanners::Gpt2Scanner)),
            literals,
            NormalizeStage::None,
        )
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
    fn char_at_decodes_as_char_indices() {
        let text = "a\u{7f}\u{80}é\u{7ff}\u{800}中\u{ffff}\u{10000}😀\u{10ffff}z";
        let mut i = 0;
        for (at, c) in text.char_indices() {
            assert_eq!(i, at);
            assert_eq!(char_at(text.as_bytes(), i), (c, c.len_utf8()));
            i += c.len_utf8();
        }
    }

    #[test]
    fn plain_starters_are_the_crates_starters_that_pass_the_quick_check() {
        let starters = plain_starters();
        for c in (0..0x1_0000).filter_map(char::from_u32) {
            let plain = canonical_combining_class(c) == 0
                && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes;
            assert_eq!(is_plain_starter(starters, c), plain, "{c:?}");
        }
        assert!(is_plain_starter(starters, '中') && is_plain_starter(starters, 'Й'));
        assert!(!is_plain_starter(starters, '\u{301}') && !is_plain_starter(starters, '\u{3099}'));
        assert!(
            !is_plain_starter(starters, '\u{f900}'),
            "a singleton decomposition"
        );
        assert!(
            !is_plain_starter(starters, '😀'),
            "outside the table: the lookups decide"
        );
    }

    #[test]
    fn nfc_by_stretches_is_nfc_of_the_whole() {
        // Characters that compose, reorder, decompose or start stretches, in random orders
        // (a fixed linear congruential generator, so the test is the same on every run).
        let alphabet: Vec<char> = "ae\u{301}\u{327}\u{323}\u{344}\u{f73}\u{ba4}\u{bbe}\u{bca}\u{bc6}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{1e0a}\u{304b}\u{3099}\u{212b}\u{2126} z\u{5d0}\u{5b4}\u{5b7}"
            .chars()
            .collect();
        let mut state: u64 = 7;
        for round in 0..20_000 {
            let length = 1 + round % 12;
            let text: String = (0..length)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect();
            let whole: String = text.nfc().map(|(c, _)| c).collect();
            let by_stretches = nfc_of(&text).unwrap_or_else(|| text.clone());
            assert_eq!(by_stretches, whole, "{text:?}");
            assert_eq!(nfc_of(&text).is_none(), whole == text, "{text:?}");
        }
    }
}
