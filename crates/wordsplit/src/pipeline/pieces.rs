//! The per-piece loop of an encode: each piece through this thread's piece table (every short
//! piece seen, tokens included), then the token index and the cache of merged pieces, to the
//! encoder only when none holds it. The pieces come from a vector of ends, or straight from a
//! byte-level scanner as it finds them ([`Scanned`]).

use std::cell::{Cell, RefCell};

use super::piece_cache::{
    ChunkKeys, LongPieces, PieceCache, CACHE_MAX_PIECE, CHUNK, LONG_MAX_PIECE, TABLE_MAX_IDS,
    TABLE_WRITES,
};
use super::{most_recent, EncodeStage, Pipeline};
use crate::error::Error;
use crate::spanners::PieceScanner;

/// Each thread keeps this many piece caches (see [`Pipeline::cache_key`]), the most
/// recently used.
const CACHED_PIPELINES: usize = 8;

thread_local! {
    static PIECE_CACHES: RefCell<Vec<(u64, PieceCache)>> = const { RefCell::new(Vec::new()) };
    /// The piece loop's [`ChunkKeys`], kept from one call to the next so that its 6 KB of
    /// arrays are not zeroed on every call (a real share of a call on a short text).
    /// Taken out for a call (a call that fails drops it, and the next makes another).
    static CHUNK_KEYS: Cell<Option<Box<ChunkKeys>>> = const { Cell::new(None) };
}

/// Where the piece loop takes the ends of its pieces from: a vector a spanner filled, or a
/// byte-level scanner that finds each piece as the loop asks for it ([`Scanned`]).
pub(super) trait PieceEnds {
    /// Calls `each` with each piece's end, in order; stops at the first error.
    fn each(self, each: impl FnMut(usize) -> Result<(), Error>) -> Result<(), Error>;

    /// The ends of [`Self::each`] as [`PieceScanner::each_window`] gives them: `each(base,
    /// ends)`, bit `i` of `ends` set for the end `base + i`.
    fn each_window(self, each: impl FnMut(usize, u64) -> Result<(), Error>) -> Result<(), Error>;
}

impl PieceEnds for &[usize] {
    #[inline(always)]
    fn each(self, mut each: impl FnMut(usize) -> Result<(), Error>) -> Result<(), Error> {
        self.iter().try_for_each(|&end| each(end))
    }

    #[inline(always)]
    fn each_window(
        self,
        mut each: impl FnMut(usize, u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.iter().try_for_each(|&end| each(end, 1))
    }
}

/// The pieces of `text` as `scanner` finds them, one at a time: the scan and the piece
/// loop are one loop, with no vector of ends written by one and read back by the other.
pub(super) struct Scanned<'a, S> {
    pub scanner: S,
    pub text: &'a str,
}

impl<S: PieceScanner> PieceEnds for Scanned<'_, S> {
    #[inline(always)]
    fn each(self, each: impl FnMut(usize) -> Result<(), Error>) -> Result<(), Error> {
        self.scanner.each_end(self.text, each)
    }

    #[inline(always)]
    fn each_window(self, each: impl FnMut(usize, u64) -> Result<(), Error>) -> Result<(), Error> {
        self.scanner.each_window(self.text, each)
    }
}

/// `bytes[start..end]`, a piece no shortcut takes: its ids from `cache`'s tables, or merged
/// by `merge` and kept there. The whole buffer is passed for the padded reads of the key.
#[inline(always)]
fn cached_or_merged(
    cache: &mut PieceCache,
    merge: &mut impl FnMut(&[u8], &mut Vec<u32>) -> Result<(), Error>,
    bytes: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<u32>,
) -> Result<(), Error> {
    cached_or_encoded(cache, bytes, start, end, out, |out| {
        merge(&bytes[start..end], out)
    })
}

/// `bytes[start..end]`: its ids from `cache`'s tables, or encoded by `encode` (which
/// appends them to the vector it is given) and kept there.
#[inline(always)]
fn cached_or_encoded(
    cache: &mut PieceCache,
    bytes: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<u32>,
    encode: impl FnOnce(&mut Vec<u32>) -> Result<(), Error>,
) -> Result<(), Error> {
    let piece = &bytes[start..end];
    if piece.len() > LONG_MAX_PIECE {
        encode(out)
    } else if piece.len() > CACHE_MAX_PIECE {
        let hash = LongPieces::hash(piece);
        if let Some(ids) = cache.long.get(piece, hash) {
            out.extend_from_slice(ids);
            return Ok(());
        }
        let first = out.len();
        encode(out)?;
        cache.long.put(piece, hash, &out[first..]);
        Ok(())
    } else {
        let key = PieceCache::key_in(bytes, start, end);
        if let Some(ids) = cache.get(&key, piece) {
            // Pushed one by one (an entry holds one to seven), not a `memcpy` call.
            for &id in ids {
                out.push(id);
            }
            return Ok(());
        }
        let first = out.len();
        encode(out)?;
        cache.put(&key, piece, &out[first..]);
        Ok(())
    }
}

/// `bytes[start..end]`, a piece the piece table can hold but lacks and no shortcut takes:
/// merged by `merge`, for the caller to put in the table, its only cache (see
/// `PieceTable`). Ids more than a table entry holds go to the long pieces' arena, where the
/// table's entry will point.
#[inline(always)]
fn merged_for_table(
    cache: &mut PieceCache,
    merge: &mut impl FnMut(&[u8], &mut Vec<u32>) -> Result<(), Error>,
    bytes: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<u32>,
) -> Result<(), Error> {
    let first = out.len();
    merge(&bytes[start..end], out)?;
    if out.len() - first > TABLE_MAX_IDS {
        cache.put_long_ids(bytes, start, end, &out[first..]);
    }
    Ok(())
}

impl Pipeline {
    /// The key of this pipeline's piece cache in a thread's list. Pipelines over the same
    /// tables with the same native encoder give every piece the same ids, whatever their
    /// spanner, normalizer, literals and unknown-byte rule (the caches only ever hold a
    /// piece's merge, or a whole token), so they share one: a program that builds several
    /// tokenizers on one vocabulary keeps one set of caches per thread, warm for all of
    /// them. Different encoders keep theirs apart, so each one's speed is its own; a
    /// foreign encoder's pipeline has its own.
    fn cache_key(&self) -> u64 {
        match &self.encoder {
            EncodeStage::Native(kind) => self.tables.id() << 8 | (*kind as u64 + 1),
            EncodeStage::Foreign(_) => self.id << 8,
        }
    }

    /// This pipeline's piece cache in a thread's `caches`, made (its table a copy of the
    /// vocabulary's seeds, if the pipeline uses them) when the thread has none.
    fn piece_cache<'a>(&self, caches: &'a mut Vec<(u64, PieceCache)>) -> &'a mut PieceCache {
        most_recent(caches, self.cache_key(), CACHED_PIPELINES, || {
            PieceCache::new(self.seeded.then(|| &self.tables.piece_seeds().0))
        })
    }

    /// Encode the pieces of `text` ending at `ends`, through this thread's piece cache;
    /// `merge` encodes a piece the cache does not hold. `SHORTCUTS`: a whole-token piece is
    /// one lookup and a single byte its id, without `merge` (the native encoders' rule; a
    /// foreign encoder, SentencePiece's included, sees every piece the caches do not hold).
    /// On a vocabulary with a token for every byte, each piece is first looked up in the
    /// piece table ([`PieceTable`]), a chunk of pieces at a time ([`CHUNK`]), whichever the
    /// encoder, so that the lookups wait on memory once per chunk rather than once per piece.
    ///
    /// A piece holding a byte no token spells (vocabularies that lack some,
    /// [`Pipeline::drops_missing_bytes`]; complete ones never look) goes to
    /// [`Self::encode_unknown`].
    #[inline(always)]
    pub(super) fn encode_pieces<const SHORTCUTS: bool>(
        &self,
        text: &str,
        ends: impl PieceEnds,
        out: &mut Vec<u32>,
        mut merge: impl FnMut(&[u8], &mut Vec<u32>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let text_bytes = text.as_bytes();
        let tables = &*self.tables;
        let lacks_bytes = self.drops_missing_bytes();
        let index = tables.index();
        let mut kept: Vec<u8> = Vec::new();
        let pieces = |cache: &mut PieceCache| {
            // A piece that is one byte or a whole token (most pieces of most text: 93 % of
            // English prose's) is handled in the loop itself ([`crate::tables::TokenIndex::shortcut`],
            // inlined, on the index's plain copy whose fields stay in registers); the cache
            // and the merge are a call away, so the common case pays no call, no spilled
            // registers and no `Result` written to memory and read back.
            let shortcut = |bytes: &[u8], start: usize, end: usize, out: &mut Vec<u32>| {
                if !SHORTCUTS {
                    return false;
                }
                match index.shortcut(tables, bytes, start, end) {
                    Some(id) => {
                        out.push(id);
                        true
                    }
                    None => false,
                }
            };
            if !lacks_bytes {
                // The pieces in chunks: each piece's line of the piece table is requested as
                // the scanner finds it (a window of 64 bytes at a time), and the chunk's
                // pieces are looked up once the scanner has found them all, by then from
                // lines that have arrived (the lookups wait on memory one chunk at a time,
                // not one piece at a time).
                let mut keys = CHUNK_KEYS
                    .take()
                    .unwrap_or_else(|| Box::new(ChunkKeys::new()));
                keys.n = 0;
                let mut start = 0;
                let mut emit = |cache: &mut PieceCache,
                                keys: &ChunkKeys,
                                out: &mut Vec<u32>|
                 -> Result<(), Error> {
                    let count = keys.n;
                    // Room for the ids a lookup writes per piece: a piece found writes
                    // them all and keeps as many as it has, with no loop on the count.
                    out.reserve(TABLE_WRITES * count);
                    // The vector's end stays in registers while the table answers.
                    let mut len = out.len();
                    let mut ids_at = out.as_mut_ptr();
                    let mut i = 0;
                    while i < count {
                        // Where the long pieces' arena has the ids of a piece held there.
                        let mut held = None;
                        // The pieces the set's ways hold, with ids in their entry (most
                        // pieces of text seen before), in a loop of their own with no call,
                        // so that its values stay in registers (in one loop with the rest,
                        // whose paths call out, they would live on the stack, reloaded and
                        // stored again each piece).
                        while i < count {
                            // SAFETY: `i < count`, the chunk's `n`.
                            let key = unsafe { keys.key_unchecked(i) };
                            let Some(ids) = cache.table.get_in_ways(&key) else {
                                break;
                            };
                            // SAFETY: room for the ids, as for the write below.
                            let Some(written) = (unsafe { ids.write(ids_at.add(len)) }) else {
                                held = Some(ids.held());
                                break;
                            };
                            len += written;
                            i += 1;
                        }
                        if i == count {
                            break;
                        }
                        // The rest, one piece: ids held in the long pieces' arena, the
                        // evicted piece its set kept, or a piece the table does not hold.
                        // SAFETY: `i < count`, the chunk's `n`.
                        let key = unsafe { keys.key_unchecked(i) };
                        let at = i;
                        i += 1;
                        if held.is_none() {
                            if let Some(ids) = cache.table.get_missed(&key) {
                                // SAFETY: room for `TABLE_WRITES` ids per piece left is
                                // reserved (above, and again after each piece the table did
                                // not hold); `ids_at` is `out`'s buffer since then.
                                if let Some(written) = unsafe { ids.write(ids_at.add(len)) } {
                                    len += written;
                                    continue;
                                }
                                held = Some(ids.held());
                            }
                        }
                        // SAFETY: the ids below `len` are written.
                        unsafe { out.set_len(len) };
                        if let Some(ids) = held.and_then(|held| cache.long.held(held)) {
                            out.extend_from_slice(ids);
                        } else {
                            let (start, end) = (keys.starts[at], keys.starts[at + 1]);
                            // Read again rather than kept from the lookup: a key kept for
                            // this rare path would be stored on the stack for every piece.
                            let key = keys.key(at);
                            if key.fits() {
                                // While the table keeps evicted pieces (they come back),
                                // one that may have more ids than an entry holds (more
                                // than seven bytes) is asked of the long pieces' arena,
                                // where such ids were kept, rather than merged again (the
                                // rare characters of random Unicode are two or three ids
                                // each).
                                let answered = shortcut(text_bytes, start, end, out)
                                    || (cache.table.keeps_evicted()
                                        && end - start > TABLE_MAX_IDS
                                        && cache.long_ids(text_bytes, start, end, out));
                                if !answered {
                                    merged_for_table(
                                        cache, &mut merge, text_bytes, start, end, out,
                                    )?;
                                }
                                cache.put_table(&key, &out[len..]);
                            } else {
                                // A piece the table cannot hold (over 15 bytes, or the last
                                // of a text) is asked of the tables of merged pieces first,
                                // which keep such whole tokens too: the runs of spaces of
                                // code are tokens, which the index would answer by hashing
                                // their bytes and probing its long tokens every time, where
                                // their table's lines were requested as the scan found them.
                                cached_or_encoded(cache, text_bytes, start, end, out, |out| {
                                    if shortcut(text_bytes, start, end, out) {
                                        Ok(())
                                    } else {
                                        merge(&text_bytes[start..end], out)
                                    }
                                })?;
                            }
                        }
                        out.reserve(TABLE_WRITES * (count - i + 1));
                        len = out.len();
                        ids_at = out.as_mut_ptr();
                    }
                    // SAFETY: as above.
                    unsafe { out.set_len(len) };
                    Ok(())
                };
                let mut lines = cache.table.lines();
                ends.each_window(|base, ends| {
                    start = lines.window_keys(text_bytes, base, ends, start, &mut keys, cache);
                    if keys.n >= CHUNK {
                        keys.starts[keys.n] = start;
                        emit(cache, &keys, out)?;
                        // Between chunks, where no key of the old table is left to look up.
                        if cache.table.grow_due(keys.n) {
                            cache.table.grow();
                            lines = cache.table.lines();
                        }
                        keys.n = 0;
                    }
                    Ok(())
                })?;
                keys.starts[keys.n] = start;
                emit(cache, &keys, out)?;
                if cache.table.grow_due(keys.n) {
                    cache.table.grow();
                }
                CHUNK_KEYS.set(Some(keys));
                return Ok(());
            }
            let mut start = 0;
            ends.each(|end| {
                let piece_start = start;
                start = end;
                if !text_bytes[piece_start..end]
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
                                cached_or_merged(cache, &mut merge, bytes, start, end, out)
                            }
                        },
                    )?;
                } else if !shortcut(text_bytes, piece_start, end, out) {
                    cached_or_merged(cache, &mut merge, text_bytes, piece_start, end, out)?;
                }
                Ok(())
            })
        };
        if SHORTCUTS {
            // Native merges: no other code runs on this thread during the loop.
            return PIECE_CACHES.with_borrow_mut(|caches| pieces(self.piece_cache(caches)));
        }
        // A foreign encoder's merge may run code that encodes on this thread again (a
        // caller's encoder that falls back to another tokenizer): this pipeline's cache is
        // taken out of the thread's list for the loop, so those calls find the list free (and
        // theirs in it, or make one), and put back after.
        let mut cache = PIECE_CACHES.with_borrow_mut(|caches| {
            self.piece_cache(caches); // found or made, first in the list
            caches.remove(0).1
        });
        let result = pieces(&mut cache);
        PIECE_CACHES.with_borrow_mut(|caches| {
            // A call inside the loop on this same pipeline made one of its own: ours stays.
            let key = self.cache_key();
            caches.retain(|(id, _)| *id != key);
            most_recent(caches, key, CACHED_PIPELINES, || cache);
        });
        result
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
        encode_one: &mut impl FnMut(&[u8], usize, usize, &mut Vec<u32>) -> Result<(), Error>,
    ) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::encoders::{EncoderKind, NativeEncoder};
    use crate::pipeline::piece_cache::PieceTable;
    use crate::pipeline::SpecialPolicy;
    use crate::spanners::GPT2_PATTERN;
    use crate::tables::tests::{tiny, tiny_ranked};
    use crate::tables::MergeTables;

    /// `f` on this thread's piece cache of `pipeline`.
    fn with_cache<T>(pipeline: &Pipeline, f: impl FnOnce(&mut PieceCache) -> T) -> T {
        PIECE_CACHES.with_borrow_mut(|caches| f(pipeline.piece_cache(caches)))
    }

    fn encode(pipeline: &Pipeline, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        pipeline
            .encode(text, &SpecialPolicy::AllowAll, &mut out)
            .unwrap();
        out
    }

    /// Whether this thread's piece table of `pipeline` holds `piece` (at most 15 bytes).
    fn table_holds(pipeline: &Pipeline, piece: &[u8]) -> bool {
        let padded = [piece, &[0; 16]].concat();
        with_cache(pipeline, |cache| {
            let key = cache.table.key(&padded, 0, piece.len());
            cache.table.get(&key).is_some()
        })
    }

    #[test]
    fn a_native_encoders_piece_table_starts_with_the_tokens_on_every_thread() {
        let tables = Arc::new(tiny(&[b" hello"]));
        let native = Pipeline::builder(tables.clone())
            .pattern(GPT2_PATTERN)
            .build()
            .unwrap();
        let sweep = NativeEncoder::new(tables.clone(), EncoderKind::BufferSweep).unwrap();
        let foreign = Pipeline::builder(tables)
            .pattern(GPT2_PATTERN)
            .foreign_encoder(Box::new(sweep))
            .build()
            .unwrap();
        // Pair-ranked: a piece that is a token may merge into others, so no token is put
        // before its piece is encoded.
        let ranked = Pipeline::builder(Arc::new(tiny_ranked(&[b" hello"], Some(vec![]))))
            .pattern(GPT2_PATTERN)
            .build()
            .unwrap();
        for _ in 0..2 {
            std::thread::scope(|s| {
                s.spawn(|| {
                    assert!(table_holds(&native, b" hello") && table_holds(&native, b"h"));
                    assert!(!table_holds(&native, b" hell"), "not a token");
                    // A foreign encoder decides every piece itself: nothing is put for it.
                    assert!(!table_holds(&foreign, b" hello") && !table_holds(&foreign, b"h"));
                    assert!(!table_holds(&ranked, b" hello") && !table_holds(&ranked, b"h"));
                    assert_eq!(encode(&native, " hello"), [256]);
                    assert_eq!(encode(&foreign, " hello"), [256]);
                });
            });
        }
    }

    #[test]
    fn pipelines_over_the_same_tables_with_the_same_native_encoder_share_their_piece_caches() {
        let tables = Arc::new(tiny(&[]));
        let build = |tables: &Arc<MergeTables>, kind| {
            Pipeline::builder(tables.clone())
                .pattern(GPT2_PATTERN)
                .encoder(kind)
                .build()
                .unwrap()
        };
        let first = build(&tables, EncoderKind::Auto);
        // Another spanner changes the pieces, not what a piece's ids are.
        let other_spanner = Pipeline::builder(tables.clone())
            .pattern(crate::names::CL100K_PATTERN)
            .build()
            .unwrap();
        let other_encoder = build(&tables, EncoderKind::HeapMerge);
        let other_tables = build(&Arc::new(tiny(&[])), EncoderKind::Auto);
        let sweep = NativeEncoder::new(tables.clone(), EncoderKind::Auto).unwrap();
        let foreign = Pipeline::builder(tables.clone())
            .pattern(GPT2_PATTERN)
            .foreign_encoder(Box::new(sweep))
            .build()
            .unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                // Not a token: merged, then kept in the piece table of the caches used (a
                // piece is read 16 bytes at a time, so the text is longer).
                let text = " xyzw, and more text after it.";
                let bytes: Vec<u32> = text.bytes().map(u32::from).collect();
                assert_eq!(encode(&first, text), bytes);
                assert!(table_holds(&first, b" xyzw"));
                assert!(table_holds(&other_spanner, b" xyzw"), "shared");
                assert!(
                    !table_holds(&other_encoder, b" xyzw"),
                    "each encoder its own"
                );
                assert!(!table_holds(&other_tables, b" xyzw"), "other tables");
                assert!(
                    !table_holds(&foreign, b" xyzw"),
                    "a foreign encoder its own"
                );
                assert_eq!(encode(&other_spanner, text), bytes);
            });
        });
        // The seeds are made once, for the first pipeline that uses them.
        assert!(std::ptr::eq(tables.piece_seeds(), tables.piece_seeds()));
    }

    #[test]
    fn whole_tokens_too_long_for_the_piece_table_are_kept_with_the_merged_pieces() {
        let token: &[u8] = b" abcdefghijklmnopqrst";
        let pipeline = Pipeline::builder(Arc::new(tiny(&[token])))
            .pattern(GPT2_PATTERN)
            .build()
            .unwrap();
        // The token's id follows the 256 bytes'; the shorter word is its bytes.
        let text = " abcdefghijklmnopqrst abcdefghijklmnopqrs.";
        let expected: Vec<u32> = [256]
            .into_iter()
            .chain(text.bytes().skip(token.len()).map(u32::from))
            .collect();
        assert_eq!(encode(&pipeline, text), expected);
        with_cache(&pipeline, |cache| {
            let padded = [token, &[0; 32]].concat();
            let key = PieceCache::key_in(&padded, 0, token.len());
            assert_eq!(cache.get(&key, token), Some(&[256][..]));
        });
        assert_eq!(encode(&pipeline, text), expected, "answered from there");
    }

    /// An encoder of the caller's that counts the times it is asked for each piece: a piece
    /// of up to three bytes is an id per byte, each wider than a packed entry's 18 bits, a
    /// longer one its bytes' values (eight or more ids for pieces of eight or more bytes),
    /// and a piece that starts with `" z"` no id at all.
    struct Counting(Arc<std::sync::Mutex<std::collections::HashMap<Vec<u8>, usize>>>);

    impl Counting {
        fn ids(piece: &[u8]) -> Vec<u32> {
            if piece.starts_with(b" z") {
                vec![]
            } else if piece.len() <= 3 {
                piece.iter().map(|&b| (1 << 20) + u32::from(b)).collect()
            } else {
                piece.iter().map(|&b| u32::from(b)).collect()
            }
        }
    }

    impl crate::Encoder for Counting {
        fn name(&self) -> &str {
            "counting"
        }

        fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), Error> {
            *self.0.lock().unwrap().entry(piece.to_vec()).or_default() += 1;
            out.extend(Self::ids(piece));
            Ok(())
        }
    }

    #[test]
    fn a_foreign_encoder_is_asked_for_each_piece_once_and_its_ids_come_back_exactly() {
        let asked = Arc::new(std::sync::Mutex::default());
        let pipeline = Pipeline::builder(Arc::new(tiny(&[b"ab"])))
            .pattern(GPT2_PATTERN)
            .foreign_encoder(Box::new(Counting(asked.clone())))
            .build()
            .unwrap();
        // Pieces of 1 to 20 bytes (the longest beyond the piece table), some with no ids, most
        // more than once.
        let words: Vec<String> = (0..120)
            .map(|i: usize| {
                let first = [b'm', b'n', b'z'][i % 3] as char;
                format!(" {first}{}", "q".repeat(i % 19))
            })
            .chain([",".to_owned(), "x".to_owned()])
            .collect();
        let text = words.concat() + "   ";
        let mut pieces = vec![];
        let mut expected = vec![];
        for word in words.iter().map(String::as_bytes).chain([&b"   "[..]]) {
            pieces.push(word.to_vec());
            expected.extend(Counting::ids(word));
        }
        assert_eq!(encode(&pipeline, &text), expected);
        assert_eq!(encode(&pipeline, &text), expected, "from the caches");
        let asked = asked.lock().unwrap();
        // Pieces come back within a text and in the second: each is asked for once, but a
        // piece of no ids, which the piece table does not keep (up to 15 bytes).
        for piece in pieces
            .iter()
            .filter(|piece| !Counting::ids(piece).is_empty())
        {
            let times = asked[piece];
            assert_eq!(times, 1, "{:?}", String::from_utf8_lossy(piece));
        }
    }

    #[test]
    fn pieces_the_piece_table_holds_are_kept_only_there_and_answered_exactly() {
        // Letters without merges: a piece's ids are its bytes (the 256 byte tokens come
        // first), 3 to 14 of them, so some fit a table entry and some are held in the long
        // pieces' arena. 196 distinct pieces, then white space after the last so that every
        // piece's key fits.
        let pipeline = Pipeline::builder(Arc::new(tiny(&[b"ab"])))
            .pattern(GPT2_PATTERN)
            .build()
            .unwrap();
        let letters = b"mnopqrstuvwxyz";
        let words: Vec<String> = (0..196)
            .map(|i| {
                let mut word = vec![b' ', letters[i / 14], letters[i % 14]];
                word.resize(3 + i % 12, b'x');
                String::from_utf8(word).unwrap()
            })
            .collect();
        let text = words.concat() + &" ".repeat(20);
        let expected: Vec<u32> = text.bytes().map(u32::from).collect();
        assert_eq!(encode(&pipeline, &text), expected);
        with_cache(&pipeline, |cache| {
            assert_eq!(
                cache.merged_pieces_kept(),
                0,
                "the piece table is the only cache of the pieces it holds"
            );
            for word in &words {
                let padded = [word.as_bytes(), &[b' '; 16]].concat();
                let key = cache.table.key(&padded, 0, word.len());
                assert!(cache.table.get(&key).is_some(), "{word:?} is in the table");
            }
        });
        assert_eq!(
            encode(&pipeline, &text),
            expected,
            "answered by the piece table"
        );
        let held = with_cache(&pipeline, |cache| {
            cache.table = PieceTable::new();
            cache.long.generation
        });
        assert_eq!(held, 0, "the long pieces' arena was not emptied");
        assert_eq!(encode(&pipeline, &text), expected, "merged again");
        // Lost again while the table keeps evicted pieces: those of more ids than an entry
        // holds come from the long pieces' arena.
        with_cache(&pipeline, |cache| {
            cache.table = PieceTable::new();
            cache.table.keep_evicted();
        });
        assert_eq!(encode(&pipeline, &text), expected, "from the arena");
        assert_eq!(
            encode(&pipeline, &text),
            expected,
            "by the piece table again"
        );
    }
}
