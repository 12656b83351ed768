//! Native span encoders: piece bytes → token ids, each exact BPE (see the Python twins in
//! `wordsplit/encoders/`, which are the reference). Registered under the same names.

pub mod backtrack;
pub mod backtrack_tables;
pub mod buffer_sweep;
pub mod heap_merge;
pub mod score_merge;

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
        if tables.lacks_bytes {
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

/// Pieces longer than this go to the linear-time encoder under `auto`: measured on cl100k,
/// buffer-sweep is the fastest up to ~128 bytes and falls behind quadratically after.
const AUTO_SHORT_PIECE: usize = 128;

/// Pieces longer than this and up to [`AUTO_SHORT_PIECE`] go to backtrack when its tables
/// are built already (they are not built for such pieces): on pieces of 65 to 128 bytes it
/// is as fast as buffer-sweep on multilingual text (within ±5 % on cl100k, o200k and qwen3)
/// and 1.6–2.9× faster on those of prose and code (runs of one character, long words),
/// where buffer-sweep's rounds each sweep the whole piece; on 43 to 64 bytes buffer-sweep is
/// still 8–10 % faster on multilingual text.
const AUTO_SWEEP_PIECE: usize = 64;

/// Under `auto`, a piece longer than this builds the backtrack tables if they do not exist
/// yet; shorter long pieces go to heap-merge until then. Building them takes 30–120 ms once
/// per vocabulary (cl100k … o200k), a stall on the first `=====` line of a process; heap-merge
/// is ~1.6× slower than backtrack on such pieces of text (0.5 ms vs 0.3 ms for 4 KB)…
const AUTO_BUILDS_BACKTRACK: usize = 4096;

/// … but several times slower on long runs of one character (whitespace, `-`), so once
/// heap-merge has taken this many bytes of pieces above [`AUTO_SHORT_PIECE`], `auto` builds
/// the tables anyway: by then heap-merge has cost about as much extra as the build does.
const AUTO_HEAP_MERGE_BUDGET: usize = 256 * 1024;

impl EncoderKind {
    /// The encoders both languages implement (generated from the Python package).
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
        tables.byte_ids[bytes[start] as usize]
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
        EncoderKind::Auto => merge_piece(auto_strategy(tables, piece.len()), tables, piece, out),
    }
}

/// The strategy `auto` uses for a piece of `len` bytes (counting what it gives heap-merge).
fn auto_strategy(tables: &MergeTables, len: usize) -> EncoderKind {
    if len <= AUTO_SWEEP_PIECE {
        return EncoderKind::BufferSweep;
    }
    if len <= AUTO_SHORT_PIECE {
        return if tables.merges.is_none() && tables.backtrack_built() {
            EncoderKind::Backtrack
        } else {
            EncoderKind::BufferSweep
        };
    }
    // backtrack is O(n) but needs rank-ordered merges (and its tables); heap-merge, O(n log n),
    // takes the rest.
    if tables.merges.is_some() {
        return EncoderKind::HeapMerge;
    }
    if len > AUTO_BUILDS_BACKTRACK
        || tables.backtrack_built()
        || tables.count_auto_heap_merged(len) > AUTO_HEAP_MERGE_BUDGET
    {
        EncoderKind::Backtrack
    } else {
        EncoderKind::HeapMerge
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
    fn auto_builds_the_backtrack_tables_for_a_very_long_piece() {
        use EncoderKind::*;
        let t = tiny(&[b"aa", b"aaaa", b"ab"]);
        assert_eq!(auto_strategy(&t, AUTO_SHORT_PIECE), BufferSweep);
        assert_eq!(auto_strategy(&t, AUTO_SHORT_PIECE + 1), HeapMerge);
        assert_eq!(auto_strategy(&t, AUTO_BUILDS_BACKTRACK), HeapMerge);
        assert!(!t.backtrack_built());
        let very_long = b"a".repeat(AUTO_BUILDS_BACKTRACK + 1);
        let mut got = vec![];
        encode_piece(Auto, &t, &very_long, &mut got);
        assert!(t.backtrack_built());
        let mut want = vec![];
        encode_piece(BufferSweep, &t, &very_long, &mut want);
        assert_eq!(got, want);
        assert_eq!(auto_strategy(&t, AUTO_SHORT_PIECE + 1), Backtrack);
        // Once built, the tables take the pieces between the two crossovers too.
        assert_eq!(auto_strategy(&t, AUTO_SHORT_PIECE), Backtrack);
        assert_eq!(auto_strategy(&t, AUTO_SWEEP_PIECE + 1), Backtrack);
        assert_eq!(auto_strategy(&t, AUTO_SWEEP_PIECE), BufferSweep);
    }

    #[test]
    fn every_strategy_agrees_at_the_crossovers() {
        // Pieces either side of each length where `auto` or buffer-sweep's buffers change
        // (8, 16, 32, 64, 128), before and after the backtrack tables are built: runs of
        // one letter (repeated pairs, ties of rank everywhere) and mixed text.
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
        let lengths = [8, 16, 32, AUTO_SWEEP_PIECE, AUTO_SHORT_PIECE]
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
    fn auto_builds_the_backtrack_tables_once_heap_merge_has_taken_its_budget() {
        let t = tiny(&[b"aa", b"ab"]);
        let mid = AUTO_BUILDS_BACKTRACK;
        let mut given = 0;
        while auto_strategy(&t, mid) == EncoderKind::HeapMerge {
            given += mid;
        }
        assert!(given <= AUTO_HEAP_MERGE_BUDGET && given + mid > AUTO_HEAP_MERGE_BUDGET);
        let mut out = vec![];
        encode_piece(EncoderKind::Auto, &t, &b"ab".repeat(mid / 2), &mut out);
        assert!(t.backtrack_built());
        assert_eq!(out, vec![257; mid / 2]); // one "ab" token per repeat
    }
}
