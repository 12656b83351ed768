//! Explain an encode: the pieces a text is split into and, for each piece, every merge pass
//! of byte-level BPE with the merge ranks of its adjacent pairs, for callers without the
//! Python package (Rust programs, the WebAssembly module); that package's `wordsplit.explain`
//! gives the same trace. A word model's pieces (WordPiece, WordLevel) come with their ids and
//! no merge passes.
//!
//! The ids and pieces are the pipeline's own run ([`Pipeline::encode_with_offsets`](crate::Pipeline::encode_with_offsets): a token's
//! `word` is its piece), so they equal [`Tokenizer::encode_with`]; a piece's bytes are its
//! tokens' bytes (the text after the normalizer). The merge passes are the reference
//! encoder's (one merge per pass: the pair of lowest rank, leftmost on ties), which every
//! built-in encoder equals.
//!
//! **Merge rank**: in a pair-ranked vocabulary (an HF merge list
//! not in merged-id order) the listed rank of the pair; in a rank-based one (tiktoken files,
//! Qwen3) the merged token's id minus the id of the first multi-byte token (256 in every
//! bundled vocabulary).
//!
//! The trace keeps every pass of every piece (quadratic in a piece's length): it is meant for
//! short texts, such as one piece of a longer one.
//!
//! ```
//! use wordsplit::explain::{explain, PieceKind};
//! use wordsplit::formats::{read_file, read_named};
//! use wordsplit::{SpecialPolicy, Tokenizer};
//!
//! # let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/vocabs/qwen3.tiktoken.gz");
//! let tok = Tokenizer::from_vocab(read_named("qwen3", &read_file(&path)?)?)?;
//! let trace = explain(&tok, "hello", &SpecialPolicy::AllowAll)?;
//! assert_eq!(trace.ids, [14990]);
//! let first = &trace.pieces[0].passes[0];
//! let ranks: Vec<_> = first.candidates.iter().map(|c| c.rank).collect();
//! assert_eq!(ranks, [Some(127), Some(45), Some(398), Some(129)]); // (e,l) merges first
//! assert_eq!(trace.pieces[0].kind, PieceKind::Bpe);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::Error;
use crate::pipeline::SpecialPolicy;
use crate::spec::ModelSpec;
use crate::tables::{MergeTables, NO_RANK};
use crate::tokenizer::Tokenizer;

/// What a piece is: a special or added token matched as one literal, a piece of plain text
/// that BPE encodes, or a word a word model looks up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceKind {
    Special,
    Added,
    Bpe,
    /// A WordPiece model's piece: its longest matches from the left (no merge passes).
    WordPiece,
    /// A WordLevel model's piece: one lookup.
    WordLevel,
}

impl PieceKind {
    /// `"special"`, `"added"`, `"bpe"`, `"wordpiece"` or `"word-level"`: the kind as a
    /// trace's text forms name it (the WebAssembly module's JSON, the Python package's traces).
    pub fn name(self) -> &'static str {
        match self {
            PieceKind::Special => "special",
            PieceKind::Added => "added",
            PieceKind::Bpe => "bpe",
            PieceKind::WordPiece => "wordpiece",
            PieceKind::WordLevel => "word-level",
        }
    }
}

/// One adjacent pair of symbols in a pass: its merge rank and the token it makes, both
/// `None` when the pair never merges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub rank: Option<u32>,
    pub merged_id: Option<u32>,
}

/// One pass over a piece's symbols: candidate `k` is the pair of symbols `k` and `k + 1`;
/// `winner` indexes the pair merged, `None` in a last pass where two or more symbols are left
/// and no pair merges (a piece that merges into one symbol has no such pass).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergePass {
    pub symbols: Vec<Vec<u8>>,
    pub candidates: Vec<Candidate>,
    pub winner: Option<usize>,
}

/// How one piece became ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PieceTrace {
    /// The byte range of the piece in the text (a literal's match; for normalized text, the
    /// original text its tokens are aligned to).
    pub start: usize,
    pub end: usize,
    /// The bytes BPE ran on (the literal's text for a literal; for a word model's piece, the
    /// original text its tokens are aligned to, whose normalized form the model looked up).
    pub bytes: Vec<u8>,
    pub kind: PieceKind,
    /// The id of the piece as one token, where the vocabulary looks whole pieces up first.
    pub whole_token_id: Option<u32>,
    /// The merge passes (none for a literal).
    pub passes: Vec<MergePass>,
    /// The ids the merge passes end with.
    pub merge_ids: Vec<u32>,
    /// The ids the tokenizer gave the piece.
    pub ids: Vec<u32>,
}

/// The trace of one encode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    pub pieces: Vec<PieceTrace>,
    pub ids: Vec<u32>,
    /// What a merged id minus gives its merge rank (rank-based vocabularies); `None` when
    /// the ranks come from a merge list.
    pub rank_base: Option<u32>,
}

/// The id of the first multi-byte token of a rank-based vocabulary; `None` if pair-ranked.
pub fn rank_base(tables: &MergeTables) -> Option<u32> {
    if tables.merges().is_some() {
        return None;
    }
    let multi_byte = tables
        .bpe_ids()
        .filter(|&id| tables.token(id).is_some_and(|t| t.len() > 1));
    Some(multi_byte.min().unwrap_or(0))
}

/// Encode `text` under `policy` as [`Tokenizer::encode_with`] does, recording each piece and
/// its merge passes.
pub fn explain(tok: &Tokenizer, text: &str, policy: &SpecialPolicy) -> Result<Explanation, Error> {
    let pipeline = tok.pipeline();
    let tables = pipeline.tables();
    let mut ids = Vec::new();
    let mut places = Vec::new();
    pipeline.encode_with_offsets(text, policy, &mut ids, &mut places)?;
    let base = rank_base(tables);
    let word_kind = match tok.model() {
        ModelSpec::WordPiece { .. } => Some(PieceKind::WordPiece),
        ModelSpec::WordLevel { .. } => Some(PieceKind::WordLevel),
        _ => None,
    };
    let mut pieces = Vec::new();
    let mut first = 0;
    while first < ids.len() {
        let word = places[first][4];
        let last = (first..ids.len())
            .take_while(|&k| places[k][4] == word)
            .last()
            .unwrap_or(first);
        let piece_ids = &ids[first..=last];
        let (start, end) = (places[first][0] as usize, places[last][1] as usize);
        let source = &text[start..end];
        // (a word's unknown token may be a special token's id: a literal is its own text)
        let literal = matches!(piece_ids, [id] if tok.literals().iter().any(|l| l.id == *id && l.text == source.trim()));
        pieces.push(match word_kind {
            Some(kind) if !literal => PieceTrace {
                start,
                end,
                bytes: source.as_bytes().to_vec(),
                kind,
                whole_token_id: None,
                passes: Vec::new(),
                merge_ids: piece_ids.to_vec(),
                ids: piece_ids.to_vec(),
            },
            _ => trace_piece(tok, tables, base, piece_ids, start, end)?,
        });
        first = last + 1;
    }
    Ok(Explanation {
        pieces,
        ids,
        rank_base: base,
    })
}

fn trace_piece(
    tok: &Tokenizer,
    tables: &MergeTables,
    base: Option<u32>,
    ids: &[u32],
    start: usize,
    end: usize,
) -> Result<PieceTrace, Error> {
    let literal = match ids {
        [id] => tok.literals().iter().find(|l| l.id == *id),
        _ => None,
    };
    if let Some(literal) = literal {
        let kind = if literal.special {
            PieceKind::Special
        } else {
            PieceKind::Added
        };
        return Ok(PieceTrace {
            start,
            end,
            bytes: literal.text.as_bytes().to_vec(),
            kind,
            whole_token_id: None,
            passes: Vec::new(),
            merge_ids: ids.to_vec(),
            ids: ids.to_vec(),
        });
    }
    let bytes = tables.decode(ids)?;
    let (passes, merge_ids) = merge_passes(tables, base, &bytes);
    Ok(PieceTrace {
        start,
        end,
        whole_token_id: tables.whole(&bytes),
        bytes,
        kind: PieceKind::Bpe,
        passes,
        merge_ids,
        ids: ids.to_vec(),
    })
}

/// The id of a symbol's bytes, if they are a token.
fn symbol_id(tables: &MergeTables, symbol: &[u8]) -> Option<u32> {
    match symbol {
        [byte] => tables.has_byte(*byte).then(|| tables.id_of(symbol)),
        _ => tables.rank_of(symbol),
    }
}

/// The reference BPE on `piece`, one merge a pass, and the ids it ends with (a symbol that
/// is no token, a byte the vocabulary lacks, has no id and is left out).
fn merge_passes(
    tables: &MergeTables,
    base: Option<u32>,
    piece: &[u8],
) -> (Vec<MergePass>, Vec<u32>) {
    // Symbols as byte ranges of `piece`.
    let mut bounds: Vec<usize> = (0..=piece.len()).collect();
    let mut passes = Vec::new();
    loop {
        let symbols: Vec<Vec<u8>> = bounds
            .windows(2)
            .map(|w| piece[w[0]..w[1]].to_vec())
            .collect();
        let candidates: Vec<Candidate> = bounds
            .windows(3)
            .map(|w| {
                let left = symbol_id(tables, &piece[w[0]..w[1]]);
                let right = symbol_id(tables, &piece[w[1]..w[2]]);
                let rank = match (left, right) {
                    (Some(l), Some(r)) => tables.pair_rank(piece, w[0], w[2], l, r),
                    _ => NO_RANK,
                };
                if rank == NO_RANK {
                    return Candidate {
                        rank: None,
                        merged_id: None,
                    };
                }
                let merged = tables.merged_id(piece, w[0], w[2], rank);
                Candidate {
                    rank: Some(base.map_or(rank, |b| rank - b)),
                    merged_id: Some(merged),
                }
            })
            .collect();
        let winner = candidates
            .iter()
            .enumerate()
            .filter_map(|(k, c)| c.rank.map(|r| (r, k)))
            .min()
            .map(|(_, k)| k);
        if winner.is_none() && symbols.len() < 2 {
            break; // one symbol (or none) left, and no merge: nothing to show
        }
        passes.push(MergePass {
            symbols,
            candidates,
            winner,
        });
        match winner {
            Some(k) => {
                bounds.remove(k + 1);
            }
            None => break,
        }
    }
    let merge_ids = bounds
        .windows(2)
        .filter_map(|w| symbol_id(tables, &piece[w[0]..w[1]]))
        .collect();
    (passes, merge_ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{read_file, read_named};

    fn tokenizer(name: &str) -> Tokenizer {
        let path = crate::testing::data::rank_file(name);
        Tokenizer::from_vocab(read_named(name, &read_file(&path).unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn pieces_tile_the_ids_and_merges_reach_them() {
        let tok = tokenizer("cl100k_base");
        let text = "hello world<|endoftext|> ünïcode  \n\t12345 🤗";
        let trace = explain(&tok, text, &SpecialPolicy::AllowAll).unwrap();
        assert_eq!(trace.ids, tok.encode_with_special_tokens(text).unwrap());
        assert_eq!(trace.rank_base, Some(256));
        let tiled: Vec<u32> = trace.pieces.iter().flat_map(|p| p.ids.clone()).collect();
        assert_eq!(tiled, trace.ids);
        let texts: Vec<&[u8]> = trace.pieces.iter().map(|p| &p.bytes[..]).collect();
        assert_eq!(texts.concat(), text.as_bytes());
        let special = &trace.pieces[2];
        assert_eq!(
            (special.kind, &special.ids[..]),
            (PieceKind::Special, &[100257][..])
        );
        assert_eq!((special.start, special.end), (11, 24));
        for piece in trace.pieces.iter().filter(|p| p.kind == PieceKind::Bpe) {
            // tiktoken's rule: a whole-token piece is that token, else the merges decide.
            let expected = piece
                .whole_token_id
                .map_or(piece.merge_ids.clone(), |id| vec![id]);
            assert_eq!(
                piece.ids,
                expected,
                "{:?}",
                String::from_utf8_lossy(&piece.bytes)
            );
            // One merge a pass, and a last pass that merges nothing where symbols are left.
            let merges = piece.bytes.len() - piece.merge_ids.len();
            let stuck = usize::from(piece.merge_ids.len() > 1);
            assert_eq!(piece.passes.len(), merges + stuck);
            if stuck == 1 {
                assert_eq!(piece.passes.last().unwrap().winner, None);
            }
        }
    }

    #[test]
    fn a_word_models_pieces_are_its_words_with_their_ids() {
        let path = crate::testing::data::test_file("wordpiece/all-MiniLM-L6-v2.tokenizer.json.gz");
        let vocab = crate::formats::load_hf_tokenizer_json(path).unwrap();
        let tok = Tokenizer::from_vocab(vocab).unwrap();
        let text = "Unaffable [SEP] x🦀!";
        let trace = explain(&tok, text, &SpecialPolicy::AllowAll).unwrap();
        let kinds: Vec<_> = trace
            .pieces
            .iter()
            .map(|p| (p.kind, &p.bytes[..], &p.ids[..]))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    PieceKind::WordPiece,
                    &b"Unaffable"[..],
                    &[14477, 20961, 3468][..]
                ),
                (PieceKind::Special, b"[SEP]", &[102]),
                (PieceKind::WordPiece, "x🦀".as_bytes(), &[100]),
                (PieceKind::WordPiece, b"!", &[999]),
            ]
        );
        assert!(trace.pieces.iter().all(|p| p.passes.is_empty()));
    }

    #[test]
    fn a_pass_merges_the_lowest_rank_leftmost() {
        let tok = tokenizer("gpt2");
        let trace = explain(&tok, "aaaa", &SpecialPolicy::AllowAll).unwrap();
        let passes = &trace.pieces[0].passes;
        // Three equal pairs: the leftmost wins, then "aa"+"aa".
        assert_eq!(passes[0].winner, Some(0));
        assert_eq!(
            passes[1].symbols,
            [b"aa".to_vec(), b"a".to_vec(), b"a".to_vec()]
        );
        assert_eq!(passes[1].winner, Some(1));
        assert_eq!(trace.pieces[0].merge_ids, tok.encode("aaaa").unwrap());
    }
}
