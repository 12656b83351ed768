//! The keys the piece loop's scan makes for the [`PieceTable`] ahead of their lookups
//! ([`TableLines`]), requesting their sets' lines as it finds the pieces, and the chunk that
//! holds them until they are looked up ([`ChunkKeys`]).

use super::{line_of, PieceTable, TableKey};
#[cfg(target_arch = "x86_64")]
use super::{LINE_SHIFT, MIX, OUTSIDE};
use crate::pipeline::piece_cache::entries::CompactEntry;
use crate::pipeline::piece_cache::{PieceCache, COMPACT_MAX_PIECE, WIDE_PIECES};

impl PieceTable {
    /// Where the table's sets are and how keys find them, for the scan to make keys and ask
    /// for their lines ([`TableLines::prefetch`]) while the table is borrowed elsewhere.
    /// Valid until the table grows.
    #[inline(always)]
    pub fn lines(&self) -> TableLines {
        TableLines {
            sets: self.sets.as_ptr(),
            lines_mask: self.lines_mask,
            vector: vector_keys(),
        }
    }

    /// The key of `bytes[start..end]` in this table (see [`TableLines::key`]).
    #[cfg(test)]
    pub fn key(&self, bytes: &[u8], start: usize, end: usize) -> TableKey {
        self.lines().key(bytes, start, end)
    }
}

/// The address of a [`PieceTable`]'s sets and the mask of their offsets, for the scan to make
/// keys and request their lines: a copy the scan keeps in registers, where asking the table
/// itself reloads the address through the cache's borrow on every piece. Valid as long as
/// the table lives and does not grow.
#[derive(Clone, Copy)]
pub(in crate::pipeline) struct TableLines {
    sets: *const [CompactEntry; 2],
    lines_mask: usize,
    /// Whether [`Self::window_keys`] makes keys eight at a time ([`vector_keys`]).
    vector: bool,
}

impl TableLines {
    /// The key of `bytes[start..end]` (`start < end`): the piece's compact
    /// [`PieceKey`](crate::pipeline::piece_cache::entries::PieceKey)'s two words and the offset of its set, when the piece has at most 15 bytes and 16
    /// bytes can be read from `start`, else a key that matches nothing ([`TableKey::fits`]
    /// is false; the last piece of a text may not be held, which costs one lookup
    /// elsewhere).
    #[cfg(test)]
    #[inline(always)]
    pub fn key(self, bytes: &[u8], start: usize, end: usize) -> TableKey {
        if !Self::in_place(bytes, start, end) {
            return TableKey::OUTSIDE;
        }
        self.key_in_place(bytes, start, end)
    }

    /// [`Self::key`], and for a piece of [`WIDE_PIECES`] bytes, which the table cannot hold,
    /// the lines of the tables of `behind` that will be asked for it requested
    /// ([`PieceCache::prefetch_wide`]): in the branch a long piece takes anyway, so the
    /// pieces the table holds pay nothing for it.
    #[inline(always)]
    fn key_asking(self, bytes: &[u8], start: usize, end: usize, behind: &PieceCache) -> TableKey {
        if !Self::in_place(bytes, start, end) {
            if WIDE_PIECES.contains(&(end - start)) {
                behind.prefetch_wide(bytes, start, end);
            }
            return TableKey::OUTSIDE;
        }
        self.key_in_place(bytes, start, end)
    }

    /// Whether the table can hold `bytes[start..end]` and its key is read in place: at
    /// most 15 bytes, with 16 bytes readable from `start`.
    #[inline(always)]
    fn in_place(bytes: &[u8], start: usize, end: usize) -> bool {
        end - start <= COMPACT_MAX_PIECE && start + 16 <= bytes.len()
    }

    /// [`Self::key`] of a piece [`Self::in_place`] accepts.
    #[inline(always)]
    fn key_in_place(self, bytes: &[u8], start: usize, end: usize) -> TableKey {
        // Read in place: the 16 bytes from `start` are in `bytes`.
        let key = PieceCache::key_in(bytes, start, end);
        let [lo, hi, ..] = key.words;
        TableKey {
            lo,
            hi,
            line: line_of(lo, hi, self.lines_mask),
        }
    }

    /// Asks the CPU for the line of `key`'s set.
    #[inline(always)]
    fn prefetch(self, key: &TableKey) {
        self.prefetch_line(key.line);
    }

    /// Asks the CPU for the line of the set at offset `line`.
    #[inline(always)]
    pub(super) fn prefetch_line(self, line: usize) {
        // `wrapping_byte_add`: no dereference, and `line` is inside the table anyway (see
        // `PieceTable::set`); a prefetch of any address reads nothing and cannot fault.
        crate::tables::prefetch_address(self.sets.wrapping_byte_add(line));
    }

    /// Adds to `keys` the pieces that end in the window at `base`, at the bits of `ends`
    /// (not 0), the first of them starting at `start`: each one's key ([`Self::key_asking`])
    /// and start, its set's line requested. Returns the last piece's end. Where the
    /// processor has AVX-512 with VBMI2 ([`vector_keys`]), eight keys at a time.
    #[inline(always)]
    pub fn window_keys(
        self,
        bytes: &[u8],
        base: usize,
        ends: u64,
        start: usize,
        keys: &mut ChunkKeys,
        behind: &PieceCache,
    ) -> usize {
        debug_assert!(ends != 0 && keys.n < CHUNK);
        // A window of one piece (o200k's per-piece scan, or a spanner's vector of ends)
        // costs less one at a time.
        if self.vector && ends & (ends - 1) != 0 {
            // SAFETY: `vector` says the processor has the features; `keys` has room for
            // 64 more pieces and the eight-lane stores past them (`CHUNK_ROOM`).
            #[cfg(target_arch = "x86_64")]
            return unsafe { self.window_keys_avx512(bytes, base, ends, start, keys, behind) };
        }
        let mut start = start;
        let mut n = keys.n;
        let _ = crate::spanners::each_bit(base, ends, |end| {
            let key = self.key_asking(bytes, start, end, behind);
            self.prefetch(&key);
            keys.write(n, start, key);
            n += 1;
            start = end;
            Ok::<(), std::convert::Infallible>(())
        });
        keys.n = n;
        start
    }

    /// [`Self::window_keys`], eight pieces at a time in AVX-512 registers: each piece's end
    /// from the window's bits (compressed into bytes), its first 16 bytes taken from the
    /// window's 128 with a byte permute (where a gather is slow), masked to its length and
    /// hashed as [`Self::key_in_place`] does one: a fraction of the instructions a piece of
    /// one at a time.
    ///
    /// # Safety
    /// The processor has AVX-512 F, BW, DQ, VBMI and VBMI2, BMI2 and POPCNT; `keys.n < CHUNK`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vbmi,avx512vbmi2,bmi2,popcnt")]
    unsafe fn window_keys_avx512(
        self,
        bytes: &[u8],
        base: usize,
        ends: u64,
        start: usize,
        keys: &mut ChunkKeys,
        behind: &PieceCache,
    ) -> usize {
        use std::arch::x86_64::*;
        const IOTA: [u8; 64] = {
            let mut iota = [0u8; 64];
            let mut i = 0;
            while i < 64 {
                iota[i] = i as u8;
                i += 1;
            }
            iota
        };
        let splat = |x: u64| _mm512_set1_epi64(x as i64);
        // SAFETY: 64 bytes read from `IOTA`.
        let iota = unsafe { _mm512_loadu_si512(IOTA.as_ptr().cast()) };
        // The ends' offsets in the window, in order, a byte each. (Kept in registers: a
        // vector stored and read back in parts waits for the store to complete.)
        let offsets = _mm512_maskz_compress_epi8(ends, iota);
        let count = ends.count_ones() as usize;
        // A piece is read in place when it starts at most here (see `in_place`); none when
        // the text is shorter than 16 bytes.
        let readable: __mmask8 = if bytes.len() >= 16 { 0xff } else { 0 };
        let last_start = splat(bytes.len().saturating_sub(16) as u64);
        let ones = splat(u64::MAX);
        let sets = splat(self.sets as u64);
        // The window's 128 bytes (zeros past the text's end).
        let window = |at: usize| {
            let rest = bytes.len().saturating_sub(at);
            let valid = if rest >= 64 {
                u64::MAX
            } else {
                (1u64 << rest) - 1
            };
            // SAFETY: a masked load reads only the bytes of `valid`, in `bytes`.
            unsafe {
                _mm512_maskz_loadu_epi8(valid, bytes.as_ptr().add(at.min(bytes.len())).cast())
            }
        };
        let (near_bytes, far_bytes) = (window(base), window(base + 64));
        // The ends before the eight pieces at hand (the last lane is the first one's start).
        let mut before = splat(start as u64);
        let mut i = 0;
        while i < count {
            let lanes = (count - i).min(8);
            let live: __mmask8 = (0xffu16 >> (8 - lanes)) as __mmask8;
            // Offsets `i..i + 8` to the low bytes, then to eight words.
            let near =
                _mm512_permutexvar_epi8(_mm512_add_epi8(iota, _mm512_set1_epi8(i as i8)), offsets);
            let end = _mm512_add_epi64(
                _mm512_cvtepu8_epi64(_mm512_castsi512_si128(near)),
                splat(base as u64),
            );
            // Each piece starts where the one before it ended.
            let begin = _mm512_alignr_epi64::<7>(end, before);
            before = end;
            let len = _mm512_sub_epi64(end, begin);
            let fits = live
                & readable
                & _mm512_cmple_epu64_mask(len, splat(COMPACT_MAX_PIECE as u64))
                & _mm512_cmple_epu64_mask(begin, last_start);
            // Each piece's two words from the window's 128 bytes: byte `j` of a piece's lane
            // is the window's byte at its offset plus `j` (offsets below 64, plus 15 at most).
            let offset = _mm512_sub_epi64(begin, splat(base as u64));
            let index = _mm512_add_epi64(
                _mm512_mullo_epi64(offset, splat(0x0101_0101_0101_0101)),
                splat(0x0706_0504_0302_0100),
            );
            let mut lo = _mm512_permutex2var_epi8(near_bytes, index, far_bytes);
            let mut hi = _mm512_permutex2var_epi8(
                near_bytes,
                _mm512_add_epi64(index, splat(0x0808_0808_0808_0808)),
                far_bytes,
            );
            if i == 0 && start < base && fits & 1 != 0 {
                // The window's first piece began in a window before: its words read here.
                // SAFETY: `fits` says the 16 bytes from `start` are in `bytes`.
                let [word_lo, word_hi] = unsafe {
                    bytes
                        .as_ptr()
                        .add(start)
                        .cast::<[u64; 2]>()
                        .read_unaligned()
                };
                lo = _mm512_mask_mov_epi64(lo, 1, splat(word_lo));
                hi = _mm512_mask_mov_epi64(hi, 1, splat(word_hi));
            }
            // The first `len` bytes kept (a shift by 64 bits or more gives 0), the length in
            // the top byte; a piece that does not fit gets `TableKey::OUTSIDE`.
            let keep = |word: __m512i, bits: __m512i| {
                _mm512_andnot_si512(_mm512_sllv_epi64(ones, bits), word)
            };
            let lo = _mm512_maskz_mov_epi64(fits, keep(lo, _mm512_slli_epi64::<3>(len)));
            let hi_bytes = _mm512_sub_epi64(_mm512_max_epu64(len, splat(8)), splat(8));
            let hi = _mm512_or_si512(
                keep(hi, _mm512_slli_epi64::<3>(hi_bytes)),
                _mm512_slli_epi64::<56>(len),
            );
            let hi = _mm512_mask_mov_epi64(splat(OUTSIDE), fits, hi);
            let mixed =
                _mm512_mullo_epi64(_mm512_xor_si512(lo, _mm512_rol_epi64::<29>(hi)), splat(MIX));
            let line = _mm512_maskz_and_epi64(
                fits,
                _mm512_srli_epi64::<LINE_SHIFT>(mixed),
                splat(self.lines_mask as u64),
            );
            let n = keys.n + i;
            // SAFETY: `n + 8 <= CHUNK_ROOM`: `keys.n < CHUNK` and `i < 64`.
            unsafe {
                _mm512_storeu_si512(keys.lo.as_mut_ptr().add(n).cast(), lo);
                _mm512_storeu_si512(keys.hi.as_mut_ptr().add(n).cast(), hi);
                _mm512_storeu_si512(keys.line.as_mut_ptr().add(n).cast(), line);
                _mm512_storeu_si512(keys.starts.as_mut_ptr().add(n).cast(), begin);
            }
            // The sets' lines requested from the register (lanes past the pieces ask for the
            // table's first line, as a key that does not fit does).
            let at = _mm512_add_epi64(sets, line);
            let quarters = [
                _mm512_extracti64x2_epi64::<0>(at),
                _mm512_extracti64x2_epi64::<1>(at),
                _mm512_extracti64x2_epi64::<2>(at),
                _mm512_extracti64x2_epi64::<3>(at),
            ];
            for (q, quarter) in quarters.into_iter().enumerate() {
                if 2 * q < lanes {
                    crate::tables::prefetch_address(_mm_cvtsi128_si64(quarter) as *const u8);
                    crate::tables::prefetch_address(_mm_extract_epi64::<1>(quarter) as *const u8);
                }
            }
            let mut wide = live
                & _mm512_cmpge_epu64_mask(len, splat(*WIDE_PIECES.start() as u64))
                & _mm512_cmple_epu64_mask(len, splat(*WIDE_PIECES.end() as u64));
            while wide != 0 {
                // The window's `k`th end (`k < count`).
                let nth_end = |k: usize| base + _pdep_u64(1 << k, ends).trailing_zeros() as usize;
                let piece = i + wide.trailing_zeros() as usize;
                let piece_start = if piece == 0 {
                    start
                } else {
                    nth_end(piece - 1)
                };
                behind.prefetch_wide(bytes, piece_start, nth_end(piece));
                wide &= wide - 1;
            }
            i += 8;
        }
        keys.n += count;
        base + 63 - ends.leading_zeros() as usize
    }
}

/// Whether [`TableLines::window_keys`] can make eight keys at a time on this processor.
#[inline]
fn vector_keys() -> bool {
    #[cfg(target_arch = "x86_64")]
    return crate::cpu::avx512_allowed()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512vbmi2")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Pieces found ahead of their lookups in the piece table (see
/// [`Pipeline::encode_pieces`](crate::pipeline::Pipeline::encode_pieces)): enough that their
/// lines arrive meanwhile, few enough that the chunk's keys stay in the CPU's first-level
/// cache (6 KB). A chunk is looked up once it has this many or more (a window adds up to 64).
pub(in crate::pipeline) const CHUNK: usize = 128;
/// The room of a [`ChunkKeys`]: a chunk one short of [`CHUNK`], a window's 64 pieces more,
/// which the eight-lane stores of [`TableLines::window_keys`] never pass.
const CHUNK_ROOM: usize = CHUNK - 1 + 64;

/// The pieces of a chunk of the piece loop, found and not yet looked up: each one's
/// [`TableKey`] (its parts in three arrays, which eight-lane stores fill) and its start;
/// `starts[n]` is set to the last one's end before the chunk is looked up.
pub(in crate::pipeline) struct ChunkKeys {
    lo: [u64; CHUNK_ROOM],
    hi: [u64; CHUNK_ROOM],
    line: [usize; CHUNK_ROOM],
    pub starts: [usize; CHUNK_ROOM + 1],
    /// The pieces held.
    pub n: usize,
}

impl ChunkKeys {
    pub fn new() -> Self {
        Self {
            lo: [0; CHUNK_ROOM],
            hi: [0; CHUNK_ROOM],
            line: [0; CHUNK_ROOM],
            starts: [0; CHUNK_ROOM + 1],
            n: 0,
        }
    }

    /// The key of piece `i`.
    #[inline(always)]
    pub fn key(&self, i: usize) -> TableKey {
        TableKey {
            lo: self.lo[i],
            hi: self.hi[i],
            line: self.line[i],
        }
    }

    /// [`Self::key`] without the bounds check, for the piece loop's lookups.
    ///
    /// # Safety
    /// `i < self.n` (at most `CHUNK_ROOM`, the arrays' length: a chunk holds fewer than
    /// `CHUNK` pieces before a window adds at most 64).
    #[inline(always)]
    pub unsafe fn key_unchecked(&self, i: usize) -> TableKey {
        debug_assert!(i < self.n && self.n <= CHUNK_ROOM);
        // SAFETY: the caller's: `i` is below the arrays' length.
        unsafe {
            TableKey {
                lo: *self.lo.get_unchecked(i),
                hi: *self.hi.get_unchecked(i),
                line: *self.line.get_unchecked(i),
            }
        }
    }

    /// Writes the piece starting at `start`, of key `key`, in slot `n`. The caller counts
    /// the slots it writes in a register and sets [`Self::n`] once per window: kept here,
    /// the count would be read back from memory after each piece's stores to the slots,
    /// which may hold it as far as the compiler knows.
    #[inline(always)]
    fn write(&mut self, n: usize, start: usize, key: TableKey) {
        debug_assert!(n < CHUNK_ROOM);
        // SAFETY: `n < CHUNK_ROOM`: a window adds at most 64 pieces to fewer than `CHUNK`.
        unsafe {
            *self.lo.get_unchecked_mut(n) = key.lo;
            *self.hi.get_unchecked_mut(n) = key.hi;
            *self.line.get_unchecked_mut(n) = key.line;
            *self.starts.get_unchecked_mut(n) = start;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::piece_cache::tests::key_of;

    #[test]
    fn piece_table_keys_hold_pieces_of_up_to_15_bytes_read_in_place() {
        let text: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) | 1).collect();
        let cache = PieceCache::new(None);
        let table = &cache.table;
        for start in 0..text.len() {
            for end in start + 1..=text.len().min(start + 40) {
                let key = table.key(&text, start, end);
                // The scan's key, which asks for the lines behind the table for a long
                // piece, is the same key.
                assert_eq!(table.lines().key_asking(&text, start, end, &cache), key);
                let fits = end - start <= COMPACT_MAX_PIECE && start + 16 <= text.len();
                assert_eq!(key.fits(), fits, "{start}..{end}");
                if fits {
                    // The compact key of the same piece, read from a copy of it alone.
                    let copied = key_of(&text[start..end]);
                    assert_eq!([key.lo, key.hi], [copied.words[0], copied.words[1]]);
                    assert_eq!(
                        key.line,
                        line_of(copied.words[0], copied.words[1], table.lines_mask)
                    );
                }
            }
        }
    }

    /// The pieces of one call of [`TableLines::window_keys`], and where the last ends.
    fn window_keys_made(
        text: &[u8],
        base: usize,
        ends: u64,
        start: usize,
        vector: bool,
    ) -> (Vec<(usize, TableKey)>, usize) {
        let cache = PieceCache::new(None);
        let mut keys = ChunkKeys::new();
        // A chunk that already holds some pieces: the window's go after them.
        let held = (base + start) % 7;
        keys.n = held;
        let lines = TableLines {
            vector,
            ..cache.table.lines()
        };
        let last = lines.window_keys(text, base, ends, start, &mut keys, &cache);
        let made = (held..keys.n)
            .map(|i| (keys.starts[i], keys.key(i)))
            .collect();
        (made, last)
    }

    #[test]
    fn window_keys_made_eight_at_a_time_equal_the_keys_made_one_at_a_time() {
        // Random bytes (keys do not read characters), texts shorter than a key's 16 bytes
        // to several windows long, windows at any offset (o200k's restart at a piece's end)
        // and pieces that began windows before (a long run of spaces).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || crate::testing::xorshift(&mut state);
        let mut compared = 0;
        for round in 0..3000 {
            let len = 1 + (next() % if round % 4 == 0 { 24 } else { 300 }) as usize;
            let text: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut last = 0;
            while last < len {
                let base = last.saturating_sub((next() % 90) as usize) + (next() % 3) as usize;
                // Ends after the last one, in the window, in the text; dense or sparse.
                let density = next() % 4;
                let mut ends = 0u64;
                for i in 0..64 {
                    let end = base + i;
                    if end > last && end <= len && (next() % 4 <= density || end == len) {
                        ends |= 1 << i;
                    }
                }
                if ends == 0 {
                    continue;
                }
                let one_at_a_time = window_keys_made(&text, base, ends, last, false);
                if vector_keys() {
                    let eight_at_a_time = window_keys_made(&text, base, ends, last, true);
                    assert_eq!(
                        eight_at_a_time, one_at_a_time,
                        "text {text:?} base {base} ends {ends:b}"
                    );
                    compared += 1;
                }
                let (pieces, end) = one_at_a_time;
                assert_eq!(pieces.len(), ends.count_ones() as usize);
                assert_eq!(end, base + 63 - ends.leading_zeros() as usize);
                last = end;
            }
        }
        // This machine's processor has the vector path (the benches' and CI's does).
        assert!(
            compared > 10_000 || !vector_keys(),
            "{compared} windows compared"
        );
    }
}
