//! Native span encoders: piece bytes → token ids, each exact BPE (see the Python twins in
//! `wordsplit/encoders/`, which are the reference). Registered under the same names.

pub mod backtrack;
pub mod buffer_sweep;
pub mod heap_merge;

use crate::vocab::VocabTables;

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

/// Under `auto`, a piece longer than this builds the backtrack tables if they do not exist
/// yet; shorter long pieces go to heap-merge until then. Building them takes 30–120 ms once
/// per vocabulary (cl100k … o200k), a stall on the first `=====` line of a process; heap-merge
/// is only ~1.6× slower than backtrack on a piece of this size (0.5 ms vs 0.3 ms).
const AUTO_BUILDS_BACKTRACK: usize = 4096;

impl EncoderKind {
    pub const NAMES: &'static [&'static str] = &["buffer-sweep", "heap-merge", "backtrack"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "buffer-sweep" | "reference" => Some(Self::BufferSweep),
            "heap-merge" => Some(Self::HeapMerge),
            "backtrack" => Some(Self::Backtrack),
            "auto" => Some(Self::Auto),
            _ => None,
        }
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
pub fn encode_piece(kind: EncoderKind, tables: &VocabTables, piece: &[u8], out: &mut Vec<u32>) {
    if let Some(id) = tables.whole(piece) {
        out.push(id);
        return;
    }
    if piece.len() == 1 {
        out.push(tables.byte_ids[piece[0] as usize]);
        return;
    }
    merge_piece(kind, tables, piece, out);
}

/// The merge loop alone, for a piece of two or more bytes that is not looked up whole.
#[inline]
pub fn merge_piece(kind: EncoderKind, tables: &VocabTables, piece: &[u8], out: &mut Vec<u32>) {
    match kind {
        EncoderKind::BufferSweep => buffer_sweep::encode(tables, piece, out),
        EncoderKind::HeapMerge => heap_merge::encode(tables, piece, out),
        EncoderKind::Backtrack => backtrack::encode(tables, piece, out),
        EncoderKind::Auto if piece.len() <= AUTO_SHORT_PIECE => {
            buffer_sweep::encode(tables, piece, out)
        }
        // backtrack is O(n) but needs rank-ordered merges (and its tables); heap-merge, O(n log n),
        // handles the rest.
        EncoderKind::Auto
            if tables.merges.is_none()
                && (piece.len() > AUTO_BUILDS_BACKTRACK || tables.backtrack_built()) =>
        {
            backtrack::encode(tables, piece, out)
        }
        EncoderKind::Auto => heap_merge::encode(tables, piece, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::tests::tiny;

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
    fn auto_builds_the_backtrack_tables_only_for_a_very_long_piece() {
        let t = tiny(&[b"aa", b"aaaa", b"ab"]);
        let encode = |kind, piece: &[u8]| {
            let mut out = vec![];
            encode_piece(kind, &t, piece, &mut out);
            out
        };
        let long = b"ab".repeat(AUTO_SHORT_PIECE);
        assert_eq!(
            encode(EncoderKind::Auto, &long),
            encode(EncoderKind::BufferSweep, &long)
        );
        assert!(!t.backtrack_built());
        let very_long = b"a".repeat(AUTO_BUILDS_BACKTRACK + 1);
        assert_eq!(
            encode(EncoderKind::Auto, &very_long),
            encode(EncoderKind::HeapMerge, &very_long)
        );
        assert!(t.backtrack_built());
        assert_eq!(
            encode(EncoderKind::Auto, &long),
            encode(EncoderKind::BufferSweep, &long)
        );
    }
}
