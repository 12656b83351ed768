//! The UTF-8 of a Python str, made here when CPython has none ready.
//!
//! CPython keeps a str as one, two or four bytes per character (PEP 393); its UTF-8 exists
//! only for ASCII strs (their bytes) or once something asked for it, when CPython converts
//! the whole str one character at a time and keeps the copy with the str. A text encoded
//! once (every document of a corpus read from disk) pays that conversion. Here it is made
//! in one pass straight into the copy kept with the str (allocated for the widest UTF-8 the
//! str could have, then shrunk to what it has): runs of ASCII characters 16 at a time;
//! eight characters of one or two bytes at a time (each one's bytes made in a 16-bit lane,
//! then packed by one byte shuffle chosen by the eight widths); four of up to three bytes
//! at a time likewise in 32-bit lanes; a group of eight with a character above U+FFFF one
//! at a time. Surrogates, which have no UTF-8, are looked for in the same pass.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The UTF-8 of `string` when CPython would have to make it (not ASCII, none kept with it
/// yet): made here and kept with the str, as `PyUnicode_AsUTF8AndSize` keeps its own (the
/// same allocator, fields and terminating NUL, freed with the str). `None` when
/// `PyString::to_str` costs nothing (ASCII, or made before), the str is not one CPython
/// lays out compactly (a subclass's instance) or the allocation fails (`to_str` then makes
/// it, or reports the error), or the str holds a surrogate, which has no UTF-8 (the
/// caller's path reports or fixes it).
///
/// ```text
/// utf8_of("naïve")  -> Some("naïve")      (one byte per character in CPython)
/// utf8_of("hello")  -> None                 (ASCII: its bytes are its UTF-8)
/// utf8_of("\ud800") -> None                 (a lone surrogate)
/// ```
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED)))]
pub(crate) fn utf8_of<'a>(string: &'a Bound<'_, PyString>) -> Option<&'a str> {
    use pyo3::ffi;
    let op = string.as_ptr();
    // SAFETY: `op` is a live str (borrowed by `string`, the GIL held); the fields read and
    // written are those CPython's own accessors and `unicode_fill_utf8` use, on a ready,
    // compact, non-ASCII str (checked first), whose `utf8` is null until filled once.
    unsafe {
        #[cfg(not(Py_3_12))]
        if ffi::PyUnicode_IS_READY(op) == 0 {
            return None;
        }
        if ffi::PyUnicode_IS_COMPACT(op) == 0 || ffi::PyUnicode_IS_ASCII(op) != 0 {
            return None;
        }
        let compact = op.cast::<ffi::PyCompactUnicodeObject>();
        if !(*compact).utf8.is_null() {
            return None;
        }
        let len = ffi::PyUnicode_GET_LENGTH(op) as usize;
        let data = ffi::PyUnicode_DATA(op);
        match ffi::PyUnicode_KIND(op) {
            ffi::PyUnicode_1BYTE_KIND => keep(compact, chars_at::<u8>(data, len)),
            ffi::PyUnicode_2BYTE_KIND => keep(compact, chars_at::<u16>(data, len)),
            ffi::PyUnicode_4BYTE_KIND => keep(compact, chars_at::<u32>(data, len)),
            _ => None,
        }
    }
}

/// Without CPython's object layout (or with threads running without the GIL): always
/// `None` (`PyString::to_str` converts).
#[cfg(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED))]
pub(crate) fn utf8_of<'a>(_string: &'a Bound<'_, PyString>) -> Option<&'a str> {
    None
}

/// The `len` characters of a str's data.
///
/// # Safety
/// `data` must hold `len` units of type `U`, alive and unchanged for `'a`.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED)))]
unsafe fn chars_at<'a, U>(data: *mut std::ffi::c_void, len: usize) -> &'a [U] {
    // SAFETY: the caller's.
    unsafe { std::slice::from_raw_parts(data.cast::<U>(), len) }
}

/// Makes the UTF-8 of `chars` in a copy kept with the str `compact` (as CPython does: from
/// the allocator that frees it with the str, a NUL after it) and returns it; `None` if a
/// character is a surrogate, or an allocation fails (the caller's path then asks CPython,
/// which reports the error).
///
/// # Safety
/// `compact` must be a live, compact, non-ASCII str whose `utf8` is null and whose
/// characters are `chars`, the GIL held.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED)))]
unsafe fn keep<'a, U: Unit>(
    compact: *mut pyo3::ffi::PyCompactUnicodeObject,
    chars: &[U],
) -> Option<&'a str> {
    use pyo3::ffi;
    // CPython frees a str's UTF-8 with the allocator it made it with: the object allocator
    // up to 3.12, the memory one from 3.13 (a mismatch aborts under `PYTHONMALLOC=debug`
    // or `-X dev`).
    #[cfg(Py_3_13)]
    use ffi::{PyMem_Free as free, PyMem_Malloc as malloc, PyMem_Realloc as realloc};
    #[cfg(not(Py_3_13))]
    use ffi::{PyObject_Free as free, PyObject_Malloc as malloc, PyObject_Realloc as realloc};
    // SAFETY: the caller's; the copy has the room `write_utf8` needs, then the room for
    // the bytes it wrote and the NUL.
    unsafe {
        let room = chars.len().checked_mul(U::WIDEST)?.checked_add(SPILL)?;
        let copy = malloc(room).cast::<u8>();
        if copy.is_null() {
            return None;
        }
        let Some(len) = write_utf8(chars, copy) else {
            free(copy.cast());
            return None;
        };
        // Shrunk to its bytes and the NUL (small blocks may move, or keep up to a quarter
        // of their room: pymalloc's rule).
        let copy = match realloc(copy.cast(), len + 1).cast::<u8>() {
            shrunk if shrunk.is_null() => copy,
            shrunk => shrunk,
        };
        *copy.add(len) = 0;
        (*compact).utf8_length = len as ffi::Py_ssize_t;
        (*compact).utf8 = copy.cast();
        // The bytes are UTF-8 (only whole encodings of scalar values are written) and
        // live as long as the str.
        Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
            copy, len,
        )))
    }
}

/// The bytes [`write_utf8`] may store past the UTF-8 it writes: its stores are 16 bytes
/// wide.
const SPILL: usize = 16;

/// Writes the UTF-8 of `chars` at `dst` and returns its length, or `None` if a character
/// is a surrogate (which has none; what was written is then of no use).
///
/// # Safety
/// `dst` must be valid for writing `U::WIDEST * chars.len() + SPILL` bytes.
unsafe fn write_utf8<U: Unit>(chars: &[U], dst: *mut u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the caller's; this CPU has SSSE3, checked just above.
        return unsafe { simd::write_utf8(chars, dst) };
    }
    // SAFETY: the caller's.
    unsafe { write_chars(chars, dst) }
}

/// Writes the UTF-8 of `chars` at `dst` one character at a time; returns its length, or
/// `None` at the first surrogate.
///
/// # Safety
/// `dst` must be valid for writing `U::WIDEST * chars.len() + 3` bytes.
#[inline(always)]
unsafe fn write_chars<U: Unit>(chars: &[U], dst: *mut u8) -> Option<usize> {
    let mut wrote = 0;
    for &c in chars {
        let c: u32 = c.into();
        if c & !0x7FF == 0xD800 {
            return None;
        }
        // SAFETY: the caller's room; a str's characters are at most U+10FFFF.
        wrote += unsafe { write_char(c, dst.add(wrote)) };
    }
    Some(wrote)
}

/// Writes the UTF-8 of the code point `c` (not a surrogate, at most U+10FFFF) at `dst`:
/// four bytes stored, one to four of them its UTF-8 (returned), with no call or loop on the
/// width.
///
/// # Safety
/// `dst` must be valid for writing 4 bytes.
#[inline(always)]
unsafe fn write_char(c: u32, dst: *mut u8) -> usize {
    let (word, width) = if c < 0x80 {
        (c, 1)
    } else if c < 0x800 {
        (0x80C0 | c >> 6 | (c & 0x3F) << 8, 2)
    } else if c < 0x1_0000 {
        (
            0x80_80E0 | c >> 12 | (c >> 6 & 0x3F) << 8 | (c & 0x3F) << 16,
            3,
        )
    } else {
        let tail = (c >> 12 & 0x3F) << 8 | (c >> 6 & 0x3F) << 16 | (c & 0x3F) << 24;
        (0x8080_80F0 | c >> 18 | tail, 4)
    };
    // SAFETY: the caller's.
    unsafe { dst.cast::<[u8; 4]>().write_unaligned(word.to_le_bytes()) };
    width
}

/// A code unit of a PEP 393 str: one, two or four bytes.
trait Unit: Copy + Into<u32> + Lanes {
    /// The most bytes of UTF-8 one unit has.
    const WIDEST: usize;
}

impl Unit for u8 {
    const WIDEST: usize = 2;
}

impl Unit for u16 {
    const WIDEST: usize = 3;
}

impl Unit for u32 {
    const WIDEST: usize = 4;
}

#[cfg(target_arch = "x86_64")]
use simd::Lanes;

/// Nothing to load into registers where there are none used.
#[cfg(not(target_arch = "x86_64"))]
trait Lanes {}
#[cfg(not(target_arch = "x86_64"))]
impl<U> Lanes for U {}

/// [`write_utf8`] with SSSE3 (x86-64 CPUs since 2006-2011; the baseline has SSE2 only).
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{write_chars, Unit};
    use std::arch::x86_64::*;

    /// Units loaded into SSE registers.
    pub(super) trait Lanes: Sized {
        /// Whether a unit can be above U+FFFF (four bytes of UTF-8).
        const ASTRAL: bool;
        /// The 16 units from `at` narrowed to bytes (those of units above 0x7F are filler),
        /// and a bit per unit above 0x7F.
        ///
        /// # Safety
        /// SSE2; 16 units readable at `at`.
        unsafe fn narrow16(at: *const Self) -> (__m128i, u32);
        /// The 8 units from `at` in 16-bit lanes, and whether all are at most U+FFFF (else
        /// the lanes are of no use).
        ///
        /// # Safety
        /// SSSE3; 8 units readable at `at`.
        unsafe fn load8(at: *const Self) -> (__m128i, bool);
    }

    // SAFETY (all three): the callers' (the instruction sets, units readable).
    impl Lanes for u8 {
        const ASTRAL: bool = false;
        #[inline(always)]
        unsafe fn narrow16(at: *const u8) -> (__m128i, u32) {
            let v = _mm_loadu_si128(at.cast());
            (v, _mm_movemask_epi8(v) as u32)
        }
        #[inline(always)]
        unsafe fn load8(at: *const u8) -> (__m128i, bool) {
            let v = _mm_loadl_epi64(at.cast());
            (_mm_unpacklo_epi8(v, _mm_setzero_si128()), true)
        }
    }

    impl Lanes for u16 {
        const ASTRAL: bool = false;
        #[inline(always)]
        unsafe fn narrow16(at: *const u16) -> (__m128i, u32) {
            let (a, b) = (
                _mm_loadu_si128(at.cast()),
                _mm_loadu_si128(at.add(8).cast()),
            );
            let flags = _mm_packs_epi16(above(a, 0xFF80), above(b, 0xFF80));
            (_mm_packus_epi16(a, b), _mm_movemask_epi8(flags) as u32)
        }
        #[inline(always)]
        unsafe fn load8(at: *const u16) -> (__m128i, bool) {
            (_mm_loadu_si128(at.cast()), true)
        }
    }

    impl Lanes for u32 {
        const ASTRAL: bool = true;
        #[inline(always)]
        unsafe fn narrow16(at: *const u32) -> (__m128i, u32) {
            let v: [__m128i; 4] = std::array::from_fn(|k| _mm_loadu_si128(at.add(4 * k).cast()));
            // The signed packs keep each unit below 0x80 as it is (the others are filler).
            let halves = (_mm_packs_epi32(v[0], v[1]), _mm_packs_epi32(v[2], v[3]));
            let high = _mm_set1_epi32(!0x7F);
            let zero = _mm_setzero_si128();
            let wide = |v| {
                _mm_xor_si128(
                    _mm_cmpeq_epi32(_mm_and_si128(v, high), zero),
                    _mm_set1_epi32(-1),
                )
            };
            let words = (
                _mm_packs_epi32(wide(v[0]), wide(v[1])),
                _mm_packs_epi32(wide(v[2]), wide(v[3])),
            );
            let flags = _mm_packs_epi16(words.0, words.1);
            (
                _mm_packus_epi16(halves.0, halves.1),
                _mm_movemask_epi8(flags) as u32,
            )
        }
        #[inline(always)]
        unsafe fn load8(at: *const u32) -> (__m128i, bool) {
            let (a, b) = (
                _mm_loadu_si128(at.cast()),
                _mm_loadu_si128(at.add(4).cast()),
            );
            let astral = _mm_or_si128(_mm_srli_epi32(a, 16), _mm_srli_epi32(b, 16));
            // Each lane's low half, in order.
            let low = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
            let v = _mm_unpacklo_epi64(_mm_shuffle_epi8(a, low), _mm_shuffle_epi8(b, low));
            let none = _mm_movemask_epi8(_mm_cmpeq_epi32(astral, _mm_setzero_si128())) == 0xFFFF;
            (v, none)
        }
    }

    /// All ones in each 16-bit lane of `v` with a bit of `bits` set.
    #[inline(always)]
    unsafe fn above(v: __m128i, bits: u16) -> __m128i {
        let zero = _mm_setzero_si128();
        let none = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(bits as i16)), zero);
        _mm_xor_si128(none, _mm_set1_epi16(-1))
    }

    /// `yes` where `mask`'s bits are set, `no` elsewhere.
    #[inline(always)]
    unsafe fn pick(mask: __m128i, yes: __m128i, no: __m128i) -> __m128i {
        _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no))
    }

    /// A byte shuffle that packs lanes' UTF-8 (each lane's first bytes) together, and the
    /// length it packs.
    type Pack = ([u8; 16], u8);

    /// The shuffle for each mask of lanes of `LANE` bytes: bit `k` (and, for 32-bit lanes,
    /// bit `k + 4`) adds one byte to lane `k`'s one.
    const fn packs<const LANE: usize>() -> [Pack; 256] {
        let mut table = [([0x80u8; 16], 0u8); 256];
        let lanes = 16 / LANE;
        let mut index = 0;
        while index < 256 {
            let (mut out, mut lane) = (0, 0);
            while lane < lanes {
                let mut width = 1 + (index >> lane & 1);
                if LANE == 4 {
                    width += index >> (lane + 4) & 1;
                }
                let mut k = 0;
                while k < width {
                    table[index].0[out] = (LANE * lane + k) as u8;
                    out += 1;
                    k += 1;
                }
                lane += 1;
            }
            table[index].1 = out as u8;
            index += 1;
        }
        table
    }

    /// [`write2`]'s shuffles: bit `k` set where lane `k`'s character has two bytes.
    static PACK_TWO: [Pack; 256] = packs::<2>();
    /// [`write3`]'s shuffles: bit `k` set where lane `k`'s character has two bytes or more,
    /// bit `k + 4` where it has three.
    static PACK_THREE: [Pack; 256] = packs::<4>();

    /// Packs `words` by `pack` at `dst` (16 bytes stored); returns the length packed.
    #[inline(always)]
    unsafe fn store_packed(words: __m128i, pack: &Pack, dst: *mut u8) -> usize {
        let shuffle = _mm_loadu_si128(pack.0.as_ptr().cast());
        _mm_storeu_si128(dst.cast(), _mm_shuffle_epi8(words, shuffle));
        usize::from(pack.1)
    }

    /// Writes the UTF-8 of the eight characters in `c`'s 16-bit lanes, each below U+0800, at
    /// `dst` (16 bytes stored); returns its length (8 to 16).
    #[inline(always)]
    unsafe fn write2(c: __m128i, dst: *mut u8) -> usize {
        let set = _mm_set1_epi16;
        let two = above(c, 0xFF80);
        // 110xxxxx 10xxxxxx, first byte lowest.
        let low6 = _mm_or_si128(_mm_and_si128(c, set(0x3F)), set(0x80));
        let as_two = _mm_or_si128(
            _mm_or_si128(_mm_srli_epi16(c, 6), set(0xC0)),
            _mm_slli_epi16(low6, 8),
        );
        let words = pick(two, as_two, c);
        let index = _mm_movemask_epi8(_mm_packs_epi16(two, _mm_setzero_si128()));
        // The mask of eight lanes, below 256: no bounds check.
        store_packed(words, &PACK_TWO[index as usize & 0xFF], dst)
    }

    /// Writes the UTF-8 of the four characters in `c`'s 32-bit lanes, each at most U+FFFF
    /// and not a surrogate, at `dst` (16 bytes stored); returns its length (4 to 12).
    #[inline(always)]
    unsafe fn write3(c: __m128i, dst: *mut u8) -> usize {
        let set = _mm_set1_epi32;
        let two = _mm_cmpgt_epi32(c, set(0x7F));
        let three = _mm_cmpgt_epi32(c, set(0x7FF));
        let low6 = _mm_or_si128(_mm_and_si128(c, set(0x3F)), set(0x80));
        let mid6 = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(c, 6), set(0x3F)), set(0x80));
        // 110xxxxx 10xxxxxx and 1110xxxx 10xxxxxx 10xxxxxx, first byte lowest.
        let as_two = _mm_or_si128(
            _mm_or_si128(_mm_srli_epi32(c, 6), set(0xC0)),
            _mm_slli_epi32(low6, 8),
        );
        let as_three = _mm_or_si128(
            _mm_or_si128(_mm_srli_epi32(c, 12), set(0xE0)),
            _mm_or_si128(_mm_slli_epi32(mid6, 8), _mm_slli_epi32(low6, 16)),
        );
        let words = pick(three, as_three, pick(two, as_two, c));
        let index =
            _mm_movemask_ps(_mm_castsi128_ps(two)) | _mm_movemask_ps(_mm_castsi128_ps(three)) << 4;
        store_packed(words, &PACK_THREE[index as usize], dst)
    }

    /// [`super::write_utf8`]: blocks of 16 characters, all ASCII narrowed at once; else the
    /// ASCII ones that lead it, then up to two groups of eight: all below U+0800 at once
    /// ([`write2`]), else as two groups of four ([`write3`]), or one at a time where one is
    /// above U+FFFF. The last few one at a time.
    ///
    /// # Safety
    /// As [`super::write_utf8`]'s; SSSE3.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn write_utf8<U: Unit>(chars: &[U], dst: *mut u8) -> Option<usize> {
        let (mut i, mut wrote) = (0, 0);
        let mut surrogates = _mm_setzero_si128();
        // SAFETY: every read is inside `chars` (the loops' tests); every store is at most 16
        // bytes at the end of what is written so far, whose UTF-8 is at most `U::WIDEST`
        // bytes a character read, inside the caller's room.
        unsafe {
            while i + 16 <= chars.len() {
                let (bytes, wide) = U::narrow16(chars.as_ptr().add(i));
                _mm_storeu_si128(dst.add(wrote).cast(), bytes);
                // All 16 ASCII, or the ASCII ones before the first that is not.
                let ascii = (wide | 1 << 16).trailing_zeros() as usize;
                i += ascii;
                wrote += ascii;
                let mut groups = 2;
                while ascii < 16 && groups > 0 && i + 8 <= chars.len() {
                    let (c, narrow) = U::load8(chars.as_ptr().add(i));
                    if U::ASTRAL && !narrow {
                        wrote += write_chars(&chars[i..i + 8], dst.add(wrote))?;
                    } else if _mm_movemask_epi8(above(c, 0xF800)) == 0 {
                        wrote += write2(c, dst.add(wrote));
                    } else {
                        let top5 = _mm_and_si128(c, _mm_set1_epi16(0xF800u16 as i16));
                        let surrogate = _mm_cmpeq_epi16(top5, _mm_set1_epi16(0xD800u16 as i16));
                        surrogates = _mm_or_si128(surrogates, surrogate);
                        let zero = _mm_setzero_si128();
                        wrote += write3(_mm_unpacklo_epi16(c, zero), dst.add(wrote));
                        wrote += write3(_mm_unpackhi_epi16(c, zero), dst.add(wrote));
                    }
                    i += 8;
                    groups -= 1;
                }
            }
            if _mm_movemask_epi8(surrogates) != 0 {
                return None;
            }
            Some(wrote + write_chars(&chars[i..], dst.add(wrote))?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts with runs of ASCII of every length around 16 and 32 between characters of
    /// each UTF-8 width, at every offset, and runs of each width mixed.
    fn texts() -> Vec<String> {
        let others = [
            'é',
            'ÿ',
            '\u{80}',
            '\u{7FF}',
            '\u{800}',
            '—',
            '“',
            'Ж',
            '中',
            '\u{D7FF}',
            '\u{E000}',
            '\u{FFFF}',
            '😀',
            '\u{10000}',
            '\u{10FFFF}',
        ];
        let mut texts = vec![String::new(), "a".into(), "é".into()];
        for (k, &other) in others.iter().enumerate() {
            for run in [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47] {
                let ascii: String = (0..run)
                    .map(|i| (b'a' + ((i + k) % 26) as u8) as char)
                    .collect();
                let many: String = std::iter::repeat_n(other, run).collect();
                texts.push(format!("{ascii}{other}{ascii}"));
                texts.push(format!("{other}{ascii}{other}{other}{ascii}"));
                texts.push(format!("{many}{ascii}{many}"));
                let mixed: String = (0..run)
                    .map(|i| others[(i * 7 + k) % others.len()])
                    .collect();
                texts.push(format!("{mixed}{ascii}{mixed}{many}"));
            }
        }
        texts
    }

    /// The UTF-8 [`write_utf8`] (or `write`) makes of `chars` in room as `keep` gives it,
    /// or `None`.
    fn utf8<U: Unit>(
        chars: &[U],
        write: unsafe fn(&[U], *mut u8) -> Option<usize>,
    ) -> Option<Vec<u8>> {
        let mut out = vec![0xAAu8; U::WIDEST * chars.len() + SPILL];
        // SAFETY: `out` has the room.
        let len = unsafe { write(chars, out.as_mut_ptr()) }?;
        out.truncate(len);
        Some(out)
    }

    /// Each width of unit that holds `text`'s characters gives its UTF-8, with vector
    /// instructions or one character at a time.
    fn check(text: &str) {
        let chars: Vec<u32> = text.chars().map(u32::from).collect();
        let expected = Some(text.as_bytes());
        assert_eq!(utf8(&chars, write_utf8).as_deref(), expected, "{text:?}");
        assert_eq!(utf8(&chars, write_chars).as_deref(), expected, "{text:?}");
        if chars.iter().all(|&c| c < 0x10000) {
            let units: Vec<u16> = chars.iter().map(|&c| c as u16).collect();
            assert_eq!(utf8(&units, write_utf8).as_deref(), expected, "{text:?}");
            assert_eq!(utf8(&units, write_chars).as_deref(), expected, "{text:?}");
        }
        if chars.iter().all(|&c| c < 0x100) {
            let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
            assert_eq!(utf8(&bytes, write_utf8).as_deref(), expected, "{text:?}");
            assert_eq!(utf8(&bytes, write_chars).as_deref(), expected, "{text:?}");
        }
    }

    #[test]
    fn each_width_of_unit_gives_the_text_s_utf8() {
        texts().iter().for_each(|text| check(text));
    }

    #[test]
    fn every_code_point_in_every_lane() {
        // Each code point that is not a surrogate, after 8 ASCII letters, at each place of
        // a group of eight, among letters or among characters of three bytes.
        let bmp = (0x80..0x1_0000).step_by(5);
        let astral = (0x1_0000..0x11_0000).step_by(4099);
        let points = bmp
            .chain(astral)
            .chain([0x7FF, 0x800, 0xFFFF, 0x1_0000, 0x10_FFFF]);
        for c in points.filter_map(char::from_u32) {
            for lane in 0..8 {
                for filler in ['x', '中'] {
                    let mut text: Vec<char> = std::iter::repeat_n('x', 8)
                        .chain(std::iter::repeat_n(filler, 9))
                        .collect();
                    text[8 + lane] = c;
                    check(&text.into_iter().collect::<String>());
                }
            }
        }
    }

    #[test]
    fn surrogates_have_no_utf8() {
        for surrogate in [0xD800u32, 0xDBFF, 0xDC00, 0xDFFF] {
            for at in [0, 5, 16, 20, 23] {
                for filler in ['a', 'é', '中', '😀'] {
                    let mut chars: Vec<u32> = std::iter::repeat_n(u32::from(filler), 24).collect();
                    chars[at] = surrogate;
                    assert_eq!(utf8(&chars, write_utf8), None);
                    assert_eq!(utf8(&chars, write_chars), None);
                    if filler != '😀' {
                        let units: Vec<u16> = chars.iter().map(|&c| c as u16).collect();
                        assert_eq!(utf8(&units, write_utf8), None);
                        assert_eq!(utf8(&units, write_chars), None);
                    }
                }
            }
        }
    }
}
