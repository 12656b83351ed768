//! Native span encoders: piece bytes → token ids, each exact BPE: the ids of repeatedly
//! merging the adjacent pair of lowest rank, leftmost first, found at different costs. Each
//! is tested equal to the others and to the Python package's encoder of the same name.

pub mod backtrack;
pub mod backtrack_tables;
pub mod buffer_sweep;
pub mod character_bpe;
pub mod heap_merge;
pub mod prefix_trie;
pub mod rank_merge;
pub mod score_merge;
pub mod sentencepiece;
pub mod unigram;
pub mod unigram_spans;
pub mod wordpiece;

use std::sync::Arc;

use crate::error::Error;
use crate::tables::MergeTables;

/// A span encoder: the ids of one piece of text.
///
/// The native encoders are [`EncoderKind`]s, which the pipeline matches on directly so that
/// its loop pays no dynamic call per piece; this trait is what an encoder supplied from
/// outside the core implements (a Python plug-in, through the bindings), and what
/// [`NativeEncoder`] offers for one native encoder used on its own.
pub trait Encoder: Send + Sync {
    /// The name it is registered under (for messages).
    fn name(&self) -> &str;

    /// Appends the ids of `piece` to `out`. On `Err`, what it appended is discarded.
    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error>;

    /// Whether it runs in the core (a native encoder given as a trait object, such as
    /// [`score_merge::ScoreMerge`]): then a pipeline using it calls nothing outside the core.
    fn is_native(&self) -> bool {
        false
    }

    /// Whether a piece that is one of the vocabulary's tokens of up to 15 bytes is always
    /// that token alone (WordPiece's longest match and WordLevel's lookup): then each
    /// thread's piece table starts with the tokens, as the native encoders' does, and the
    /// first time a text meets a token costs no call.
    fn takes_tokens_whole(&self) -> bool {
        false
    }

    /// For an encoder whose tokens do not spell their piece (a word model's `##` tokens and
    /// unknown token): appends to `out` the length in bytes of the part of `piece` each token
    /// of [`Self::encode_piece`] stands for, and returns true (offsets place the tokens by
    /// them); false, appending nothing, for an encoder whose tokens' bytes spell the piece.
    fn token_lengths(&self, piece: &[u8], out: &mut Vec<usize>) -> Result<bool, Error> {
        let _ = (piece, out);
        Ok(false)
    }

    /// For an encoder whose tokens' places need not tile the piece (HF's BPE over characters,
    /// which places the tokens after a dropped character by the lengths of the symbols kept):
    /// appends to `out` each token's `(start, end)` in bytes of `piece`, and returns true
    /// (offsets place the tokens there, before [`Self::token_lengths`]); false, appending
    /// nothing, otherwise.
    fn token_spans(&self, piece: &[u8], out: &mut Vec<(usize, usize)>) -> Result<bool, Error> {
        let _ = (piece, out);
        Ok(false)
    }

    /// Where a piece may be cut with no change to its ids (a SentencePiece BPE model's
    /// [`sentencepiece::PieceCuts`]): the pipeline cuts the spanner's pieces there, so that
    /// more of them are pieces its cache has seen. None: nowhere.
    fn piece_cuts(&self) -> Option<&sentencepiece::PieceCuts> {
        None
    }

    /// [`Self::encode_piece`] and [`Self::token_lengths`] of `piece` in one call, for an
    /// encoder whose search gives both at once (the Unigram model's path): appends the ids to
    /// `out` and their lengths to `lengths`, and returns true; false, appending nothing, for
    /// every other encoder (the default), whose offsets call the two apart. On `Err`, what it
    /// appended is discarded.
    fn encode_with_lengths(
        &self,
        piece: &[u8],
        out: &mut Vec<u32>,
        lengths: &mut Vec<usize>,
    ) -> Result<bool, Error> {
        let _ = (piece, out, lengths);
        Ok(false)
    }
}

/// One native encoder over one vocabulary's tables, as an [`Encoder`].
pub struct NativeEncoder {
    tables: Arc<MergeTables>,
    kind: EncoderKind,
}

impl NativeEncoder {
    /// The encoder `kind`, its tables built if it needs them (backtrack needs a rank-ordered
    /// vocabulary: [`Error::Unsupported`] otherwise).
    pub fn new(tables: Arc<MergeTables>, kind: EncoderKind) -> Result<Self, Error> {
        if kind == EncoderKind::Backtrack {
            tables
                .backtrack_tables()
                .map_err(|e| Error::Unsupported(e.to_owned()))?;
        }
        Ok(Self { tables, kind })
    }

    pub fn kind(&self) -> EncoderKind {
        self.kind
    }

    /// The ids of `piece`, bytes without a token dropped first (as a pipeline without an unk
    /// token drops them).
    pub fn encode(&self, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::with_capacity(piece.len() / 3 + 1);
        let tables = &*self.tables;
        if tables.lacks_bytes() {
            let kept: Vec<u8> = piece
                .iter()
                .copied()
                .filter(|&b| tables.has_byte(b))
                .collect();
            if !kept.is_empty() {
                encode_piece(self.kind, tables, &kept, &mut out);
            }
        } else {
            encode_piece(self.kind, tables, piece, &mut out);
        }
        out
    }
}

impl Encoder for NativeEncoder {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
        out.extend(self.encode(piece));
        Ok(())
    }
}

/// The encoder strategies, by their registry names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncoderKind {
    BufferSweep,
    HeapMerge,
    Backtrack,
    /// buffer-sweep for short pieces (fastest there), a linear-time encoder for long ones.
    Auto,
}

/// Pieces up to this long go to buffer-sweep under `auto`, whatever they hold: with its ranks
/// in registers or on the stack it is the fastest encoder on them (benches/TUNING.md).
const AUTO_SHORT_PIECE: usize = 128;

/// Longer pieces, up to this long, go to buffer-sweep's sweep over blocks (O(n·√n)), unless
/// backtrack leads on them ([`backtrack_leads`]: runs, white space beyond ASCII): the
/// fastest on new pieces of a thousand bytes and level with the best at ten thousand. Beyond
/// it a piece goes to backtrack (linear) or, on a pair-ranked vocabulary, heap-merge.
const AUTO_BLOCKED_PIECE: usize = 16 * 1024;

/// Under `auto`, a piece backtrack leads on that is longer than this builds the backtrack
/// tables if they do not exist yet; shorter ones go to buffer-sweep until then: the build
/// (tens of milliseconds, once per vocabulary) would stall the first `=====` line…
const AUTO_BUILDS_BACKTRACK: usize = 4096;

/// … but buffer-sweep is several times slower on those pieces, so once it has taken this
/// many bytes of them above [`AUTO_SHORT_PIECE`], `auto` builds the tables anyway: by then it
/// has cost about as much extra as the build does.
const AUTO_SWEPT_BUDGET: usize = 256 * 1024;

/// Whether `piece` is a run: in its first 64 pairs of adjacent bytes, at least 48 are of one
/// byte twice (a line of `=` or `-`, indentation, a run of one letter), where backtrack's
/// remembered matches make it much faster than the sweeps. Text of words, random letters,
/// hex or base64 has few such pairs.
fn is_run(piece: &[u8]) -> bool {
    let pairs = piece.windows(2).take(64);
    pairs.filter(|pair| pair[0] == pair[1]).count() >= 48
}

/// Whether `piece` is white space with a character beyond ASCII in its first 64 bytes
/// (U+00A0, U+3000, ...): each such character is two or three bytes the sweeps merge one
/// round at a time, where backtrack matches whole tokens (several times faster on them;
/// white space of ASCII alone is level in the two).
fn is_wide_white_space(piece: &[u8]) -> bool {
    // The head's UTF-8 up to its first invalid byte: a character cut at byte 64 is left
    // out, and a piece that does not start as UTF-8 is not white space.
    let head = &piece[..piece.len().min(64)];
    let text = head.utf8_chunks().next().map_or("", |chunk| chunk.valid());
    !text.is_ascii() && text.chars().all(char::is_whitespace)
}

/// Whether backtrack is several times faster than the sweeps on `piece` (once its tables
/// are built): runs, and white space with characters beyond ASCII.
fn backtrack_leads(piece: &[u8]) -> bool {
    is_run(piece) || is_wide_white_space(piece)
}

impl EncoderKind {
    /// The encoders both languages implement (the shared names, `names.rs`).
    pub const NAMES: &'static [&'static str] = crate::names::ENCODER_NAMES;

    /// The encoder of a registry name or alias (`names::ENCODER_ALIASES`), or the native-only
    /// `auto` strategy.
    pub fn from_name(name: &str) -> Option<Self> {
        let name = crate::names::ENCODER_ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name, |(_, target)| target);
        [
            Self::BufferSweep,
            Self::HeapMerge,
            Self::Backtrack,
            Self::Auto,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::BufferSweep => "buffer-sweep",
            Self::HeapMerge => "heap-merge",
            Self::Backtrack => "backtrack",
            Self::Auto => "auto",
        }
    }
}

/// Appends the ids of `piece` to `out` with the chosen strategy.
#[inline]
pub fn encode_piece(kind: EncoderKind, tables: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    if !shortcut(tables, piece, 0, piece.len(), out) {
        merge_piece(kind, tables, piece, out);
    }
}

/// The native encoders' shortcuts for the piece `bytes[start..end]`: a single byte is its
/// id, a piece that is a whole token (when the vocabulary looks them up) that token; `false`
/// for any other piece (nothing pushed). `bytes` may run past the piece: the whole-token
/// lookup then reads its key with two padded loads ([`MergeTables::whole_in`]).
#[inline(always)]
pub fn shortcut(
    tables: &MergeTables,
    bytes: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<u32>,
) -> bool {
    // A single byte first: its id is one read, the whole-token lookup a probe.
    let id = if end - start == 1 {
        tables.byte_id(bytes[start])
    } else if let Some(id) = tables.whole_in(bytes, start, end) {
        id
    } else {
        return false;
    };
    out.push(id);
    true
}

/// The merge loop alone, for a piece of two or more bytes that is not looked up whole.
#[inline]
pub fn merge_piece(kind: EncoderKind, tables: &MergeTables, piece: &[u8], out: &mut Vec<u32>) {
    match kind {
        EncoderKind::BufferSweep => buffer_sweep::encode(tables, piece, out),
        EncoderKind::HeapMerge => heap_merge::encode(tables, piece, out),
        EncoderKind::Backtrack => backtrack::encode(tables, piece, out),
        EncoderKind::Auto => merge_piece(auto_strategy(tables, piece), tables, piece, out),
    }
}

/// The strategy `auto` uses for `piece` (counting the runs it gives buffer-sweep).
fn auto_strategy(tables: &MergeTables, piece: &[u8]) -> EncoderKind {
    let len = piece.len();
    if len <= AUTO_SHORT_PIECE {
        return EncoderKind::BufferSweep;
    }
    // backtrack is O(n) but needs rank-ordered merges (and its tables); heap-merge, O(n log n),
    // takes the longest pieces of the others.
    if tables.merges().is_some() {
        return if len <= AUTO_BLOCKED_PIECE {
            EncoderKind::BufferSweep
        } else {
            EncoderKind::HeapMerge
        };
    }
    if len > AUTO_BLOCKED_PIECE {
        return EncoderKind::Backtrack;
    }
    if !backtrack_leads(piece) {
        return EncoderKind::BufferSweep;
    }
    if len > AUTO_BUILDS_BACKTRACK
        || tables.backtrack_built()
        || tables.count_auto_swept_backtrack_bytes(len) > AUTO_SWEPT_BUDGET
    {
        EncoderKind::Backtrack
    } else {
        EncoderKind::BufferSweep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::tests::tiny;

    #[test]
    fn all_strategies_agree_on_small_vocab() {
        let t = tiny(&[b"aa", b"ab", b"aaa", b"ba", b"aab", b"bab"]);
        let inputs: &[&[u8]] = &[
            b"aaaa",
            b"abab",
            b"aabab",
            b"babaab",
            b"aaaaaaab",
            b"xyz",
            b"aaaaaaaaaaaaaaaaaaaa",
        ];
        for input in inputs {
            let mut want = vec![];
            encode_piece(EncoderKind::BufferSweep, &t, input, &mut want);
            for kind in [
                EncoderKind::HeapMerge,
                EncoderKind::Backtrack,
                EncoderKind::Auto,
            ] {
                let mut got = vec![];
                encode_piece(kind, &t, input, &mut got);
                assert_eq!(got, want, "{kind:?} on {input:?}");
            }
        }
    }

    #[test]
    fn auto_sweeps_text_and_gives_runs_to_backtrack_once_its_tables_are_worth_building() {
        use EncoderKind::*;
        let t = tiny(&[b"aa", b"aaaa", b"ab"]);
        let mixed = |len: usize| b"abcdefghij".repeat(len).split_off(9 * len);
        let run = |len: usize| b"a".repeat(len);
        assert!(
            !is_run(&mixed(200)) && is_run(&run(200)) && is_run(&[b" ", &run(199)[..]].concat())
        );
        assert_eq!(auto_strategy(&t, &run(AUTO_SHORT_PIECE)), BufferSweep);
        assert_eq!(auto_strategy(&t, &mixed(AUTO_SHORT_PIECE + 1)), BufferSweep);
        assert_eq!(auto_strategy(&t, &mixed(AUTO_BLOCKED_PIECE)), BufferSweep);
        assert_eq!(auto_strategy(&t, &run(AUTO_SHORT_PIECE + 1)), BufferSweep);
        assert_eq!(auto_strategy(&t, &run(AUTO_BUILDS_BACKTRACK)), BufferSweep);
        assert!(!t.backtrack_built());
        let very_long = run(AUTO_BUILDS_BACKTRACK + 1);
        let mut got = vec![];
        encode_piece(Auto, &t, &very_long, &mut got);
        assert!(t.backtrack_built());
        let mut want = vec![];
        encode_piece(HeapMerge, &t, &very_long, &mut want);
        assert_eq!(got, want);
        // Once built, the tables take the runs past the short pieces, and only those.
        assert_eq!(auto_strategy(&t, &run(AUTO_SHORT_PIECE + 1)), Backtrack);
        assert_eq!(auto_strategy(&t, &run(AUTO_SHORT_PIECE)), BufferSweep);
        assert_eq!(auto_strategy(&t, &mixed(AUTO_BLOCKED_PIECE)), BufferSweep);
        assert_eq!(auto_strategy(&t, &mixed(AUTO_BLOCKED_PIECE + 1)), Backtrack);
    }

    #[test]
    fn every_strategy_agrees_at_the_crossovers() {
        // Pieces either side of each length where `auto` or buffer-sweep's buffers change
        // (8, 16, 32, 64, 128; blocks of 32 from 1,024 bytes; 16 KiB), before and after the
        // backtrack tables are built: runs of one letter (repeated pairs, ties of rank
        // everywhere) and mixed text.
        let t = tiny(&[
            b"aa",
            b"aaaa",
            b"ab",
            b"ba",
            b"bab",
            b"aab",
            b"abab",
            b"aaaaaaaa",
            b"ca",
            b"cab",
        ]);
        let pieces = |len: usize| {
            let mut state = len as u32;
            let mixed: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    b"abca"[(state >> 16) as usize % 4]
                })
                .collect();
            [b"a".repeat(len), b"ab".repeat(len).split_off(len), mixed]
        };
        let lengths = [8, 16, 32, 64, AUTO_SHORT_PIECE, 1024, AUTO_BLOCKED_PIECE]
            .into_iter()
            .flat_map(|edge| [edge - 1, edge, edge + 1]);
        for built in [false, true] {
            if built {
                t.backtrack_tables().unwrap();
            }
            for len in lengths.clone() {
                for piece in pieces(len) {
                    let mut want = vec![];
                    encode_piece(EncoderKind::HeapMerge, &t, &piece, &mut want);
                    for kind in [
                        EncoderKind::BufferSweep,
                        EncoderKind::Auto,
                        EncoderKind::Backtrack,
                    ] {
                        let mut got = vec![];
                        encode_piece(kind, &t, &piece, &mut got);
                        assert_eq!(got, want, "{kind:?}, {len} bytes, built {built}: {piece:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn auto_gives_white_space_beyond_ascii_to_backtrack_once_its_tables_are_built() {
        use EncoderKind::*;
        let t = tiny(&[
            b" \n",
            b"\n\n",
            b"\xc2\xa0",
            b"\xc2\xa0 ",
            b"\xe3\x80",
            b"\xe3\x80\x80",
            b"\xe3\x80\x80\t",
        ]);
        let wide = " \u{a0}\n\u{3000}\t\u{a0} \n\n".repeat(30).into_bytes();
        let ascii = " \n\t\r\n".repeat(40).into_bytes();
        assert!(is_wide_white_space(&wide) && !is_wide_white_space(&ascii));
        assert!(!is_wide_white_space("\u{3000}x".repeat(60).as_bytes()));
        assert!(!is_wide_white_space("漢字".repeat(40).as_bytes()));
        assert!(!is_wide_white_space(b"\xff\xa0\xa0 "), "not UTF-8");
        // Only the first 64 bytes count, and a character cut at byte 64 is not among them.
        let after = |spaces: usize| [" ".repeat(spaces), "\u{3000}".repeat(50)].concat();
        assert!(is_wide_white_space(after(61).as_bytes()));
        assert!(!is_wide_white_space(after(62).as_bytes()));
        assert!(!is_wide_white_space(after(64).as_bytes()));

        assert_eq!(
            auto_strategy(&t, &wide),
            BufferSweep,
            "tables not built yet"
        );
        encode_piece(
            Auto,
            &t,
            &b"a".repeat(AUTO_BUILDS_BACKTRACK + 1),
            &mut vec![],
        );
        assert!(t.backtrack_built());
        assert_eq!(auto_strategy(&t, &wide), Backtrack);
        assert_eq!(auto_strategy(&t, &wide[..AUTO_SHORT_PIECE]), BufferSweep);
        assert_eq!(auto_strategy(&t, &ascii), BufferSweep);
        for piece in [&wide[..], &wide[..AUTO_SHORT_PIECE + 1], &ascii[..]] {
            let mut want = vec![];
            encode_piece(HeapMerge, &t, piece, &mut want);
            for kind in [Auto, BufferSweep, Backtrack] {
                let mut got = vec![];
                encode_piece(kind, &t, piece, &mut got);
                assert_eq!(got, want, "{kind:?} on {piece:?}");
            }
        }
    }

    #[test]
    fn auto_builds_the_backtrack_tables_once_buffer_sweep_has_taken_its_budget_of_runs() {
        let t = tiny(&[b"aa", b"ab"]);
        let mid = AUTO_BUILDS_BACKTRACK;
        let run = b"ab".repeat(mid / 2);
        assert!(!is_run(&run), "alternating bytes are text");
        let run = b"a".repeat(mid);
        let mut given = 0;
        while auto_strategy(&t, &run) == EncoderKind::BufferSweep {
            given += mid;
        }
        assert!(given <= AUTO_SWEPT_BUDGET && given + mid > AUTO_SWEPT_BUDGET);
        let mut out = vec![];
        encode_piece(EncoderKind::Auto, &t, &run, &mut out);
        assert!(t.backtrack_built());
        assert_eq!(out, vec![256; mid / 2]); // one "aa" token per pair
    }
}
