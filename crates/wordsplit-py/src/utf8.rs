//! The UTF-8 of a Python str, made here when CPython has none ready.
//!
//! CPython keeps a str as one, two or four bytes per character (PEP 393); its UTF-8 exists
//! only for ASCII strs (their bytes) or once something asked for it, when CPython converts
//! the whole str one character at a time and keeps the copy with the str. A text encoded
//! once (every document of a corpus read from disk) pays that conversion: 0.26 ns per byte
//! of the benchmarks' English prose (a fifth of its documents hold a curly quote or a dash)
//! and 0.9 ns on multilingual text, 4-6 % of an encode (callgrind, a first pass: 39.0 ->
//! 36.6 instructions per byte of prose, 94.7 -> 90.2 of multilingual text). Here runs of
//! ASCII characters are narrowed 16 at a time with SSE2 and the rest written one character
//! at a time, and the result is kept with the str exactly as CPython keeps its own, so a
//! str encoded again (or read by other code) finds it there.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyString;

thread_local! {
    /// The UTF-8 being made, before its copy is kept with the str (reused: room for a long
    /// text is allocated and faulted in once per thread, up to [`SCRATCH_KEEP`] bytes).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The most bytes of room [`SCRATCH`] keeps between calls (16 MiB).
const SCRATCH_KEEP: usize = 16 << 20;

/// The UTF-8 of `string` when CPython would have to make it (not ASCII, none kept with it
/// yet): made here and kept with the str, as `PyUnicode_AsUTF8AndSize` keeps its own (the
/// same allocator, fields and terminating NUL, freed with the str). `None` when
/// `PyString::to_str` costs nothing (ASCII, or made before), or the str holds a surrogate,
/// which has no UTF-8 (the caller's path reports or fixes it).
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
        let chars = ffi::PyUnicode_GET_LENGTH(op) as usize;
        let data = ffi::PyUnicode_DATA(op);
        SCRATCH.with_borrow_mut(|utf8| {
            let made = match ffi::PyUnicode_KIND(op) {
                ffi::PyUnicode_1BYTE_KIND => {
                    latin1(std::slice::from_raw_parts(data.cast::<u8>(), chars), utf8);
                    true
                }
                ffi::PyUnicode_2BYTE_KIND => {
                    ucs2(std::slice::from_raw_parts(data.cast::<u16>(), chars), utf8)
                }
                ffi::PyUnicode_4BYTE_KIND => {
                    ucs4(std::slice::from_raw_parts(data.cast::<u32>(), chars), utf8)
                }
                _ => false,
            };
            let kept = if made { keep(compact, utf8) } else { None };
            if utf8.capacity() > SCRATCH_KEEP {
                *utf8 = Vec::new();
            }
            kept
        })
    }
}

/// Keeps a copy of `utf8` with the str `compact` (as CPython does: `PyObject_Malloc`, a NUL
/// after it) and returns it; `None` if the allocation fails (the caller's path then asks
/// CPython, which reports the error).
///
/// # Safety
/// `compact` must be a live, compact, non-ASCII str whose `utf8` is null, the GIL held.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED)))]
unsafe fn keep<'a>(
    compact: *mut pyo3::ffi::PyCompactUnicodeObject,
    utf8: &[u8],
) -> Option<&'a str> {
    use pyo3::ffi;
    // SAFETY: the caller's; the copy has room for the bytes and the NUL.
    unsafe {
        let copy = ffi::PyObject_Malloc(utf8.len() + 1).cast::<u8>();
        if copy.is_null() {
            return None;
        }
        std::ptr::copy_nonoverlapping(utf8.as_ptr(), copy, utf8.len());
        *copy.add(utf8.len()) = 0;
        (*compact).utf8_length = utf8.len() as ffi::Py_ssize_t;
        (*compact).utf8 = copy.cast();
        // The bytes are UTF-8 (see `Utf8Buffer`) and live as long as the str.
        Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
            copy,
            utf8.len(),
        )))
    }
}

/// Without CPython's object layout (or with threads running without the GIL): always
/// `None` (`PyString::to_str` converts).
#[cfg(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED))]
pub(crate) fn utf8_of<'a>(_string: &'a Bound<'_, PyString>) -> Option<&'a str> {
    None
}

/// The UTF-8 of Latin-1 characters (each below 256), into `out` (emptied first).
pub(crate) fn latin1(chars: &[u8], out: &mut Vec<u8>) {
    transcode(chars, 2, out);
}

/// The UTF-8 of UCS-2 characters into `out` (emptied first); false if one is a surrogate.
pub(crate) fn ucs2(chars: &[u16], out: &mut Vec<u8>) -> bool {
    transcode(chars, 3, out)
}

/// The UTF-8 of UCS-4 characters into `out` (emptied first); false if one is a surrogate
/// (or above U+10FFFF, which no str holds).
pub(crate) fn ucs4(chars: &[u32], out: &mut Vec<u8>) -> bool {
    transcode(chars, 4, out)
}

/// The UTF-8 of `chars`, each at most `widest` bytes of it, into `out` (emptied first);
/// false if one is a surrogate or above U+10FFFF.
#[inline(always)]
fn transcode<U: Unit>(chars: &[U], widest: usize, out: &mut Vec<u8>) -> bool {
    let mut out = Utf8Buffer::with_room(out, widest * chars.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let c: u32 = c.into();
        if c < 0x80 {
            i += out.ascii_run(chars, i);
        } else if (0xD800..0xE000).contains(&c) || c > 0x10_FFFF {
            return false;
        } else {
            out.char(c);
            i += 1;
        }
    }
    true
}

/// A code unit of a PEP 393 str: one, two or four bytes.
trait Unit: Copy + Into<u32> {
    /// The 16 characters from `chars[i]` narrowed to bytes at `dst`; returns how many of
    /// them lead with ASCII characters (whose bytes those are: the bytes after them are
    /// filler).
    ///
    /// # Safety
    /// `chars` must hold 16 characters from `i`, and `dst` must be valid for writing 16
    /// bytes.
    unsafe fn narrow16(chars: &[Self], i: usize, dst: *mut u8) -> usize;
}

/// Output with room for every byte it will get (reserved at the start from the count of
/// characters: at most two, three or four bytes each), so each write is unchecked. Only
/// ASCII bytes and whole UTF-8 encodings of scalar values are written: the bytes are UTF-8.
struct Utf8Buffer<'a> {
    bytes: &'a mut Vec<u8>,
}

impl<'a> Utf8Buffer<'a> {
    fn with_room(bytes: &'a mut Vec<u8>, room: usize) -> Self {
        bytes.clear();
        // 16 bytes more: a run of ASCII is written 16 bytes at a time.
        bytes.reserve(room + 16);
        Self { bytes }
    }

    /// Writes the run of ASCII characters from `chars[i]` (one) on, 16 at a time (the last
    /// 15 characters of the text one at a time); returns how many it wrote.
    #[inline(always)]
    fn ascii_run<U: Unit>(&mut self, chars: &[U], i: usize) -> usize {
        if i + 16 > chars.len() {
            self.char(chars[i].into());
            return 1;
        }
        let mut done = 0;
        while i + done + 16 <= chars.len() {
            let len = self.bytes.len();
            debug_assert!(len + 16 <= self.bytes.capacity());
            // SAFETY: 16 characters from `i + done` are in `chars` (the loop's test); the
            // room reserved covers the rest of the characters at their widest plus 16 bytes,
            // and a run's bytes are one per character.
            let wrote = unsafe { U::narrow16(chars, i + done, self.bytes.as_mut_ptr().add(len)) };
            // SAFETY: the `wrote` bytes after `len` were just written.
            unsafe { self.bytes.set_len(len + wrote) };
            done += wrote;
            if wrote < 16 {
                break;
            }
        }
        done
    }

    /// Appends the UTF-8 of the code point `c` (not a surrogate, at most U+10FFFF): four
    /// bytes written, one to four kept, with no call or loop on the width.
    #[inline(always)]
    fn char(&mut self, c: u32) {
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
        let len = self.bytes.len();
        debug_assert!(len + 4 <= self.bytes.capacity());
        // SAFETY: the room reserved covers this character at its widest, and 16 bytes more.
        unsafe {
            self.bytes
                .as_mut_ptr()
                .add(len)
                .cast::<[u8; 4]>()
                .write_unaligned(word.to_le_bytes());
            self.bytes.set_len(len + width);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod narrow {
    use super::Unit;
    use std::arch::x86_64::*;

    // SAFETY (all three): SSE2 is part of the x86-64 baseline; the loads read the 16 units
    // from `i` (inside `chars`, the caller's) and the store writes 16 bytes at `dst` (the
    // caller's room).
    impl Unit for u8 {
        #[inline(always)]
        unsafe fn narrow16(chars: &[u8], i: usize, dst: *mut u8) -> usize {
            let v = _mm_loadu_si128(chars.as_ptr().add(i).cast());
            _mm_storeu_si128(dst.cast(), v);
            // A bit per byte at or above 0x80.
            (_mm_movemask_epi8(v) as u32 | 1 << 16).trailing_zeros() as usize
        }
    }

    impl Unit for u16 {
        #[inline(always)]
        unsafe fn narrow16(chars: &[u16], i: usize, dst: *mut u8) -> usize {
            let at = chars.as_ptr().add(i);
            let (a, b) = (
                _mm_loadu_si128(at.cast()),
                _mm_loadu_si128(at.add(8).cast()),
            );
            _mm_storeu_si128(dst.cast(), _mm_packus_epi16(a, b));
            // One byte per unit, all ones if it is ASCII (none of the bits of 0xFF80 set).
            let high = _mm_set1_epi16(0xFF80u16 as i16);
            let ascii = |v| _mm_cmpeq_epi16(_mm_and_si128(v, high), _mm_setzero_si128());
            let bytes = _mm_packs_epi16(ascii(a), ascii(b));
            (_mm_movemask_epi8(bytes) as u32).trailing_ones() as usize
        }
    }

    impl Unit for u32 {
        #[inline(always)]
        unsafe fn narrow16(chars: &[u32], i: usize, dst: *mut u8) -> usize {
            let at = chars.as_ptr().add(i);
            let v: [__m128i; 4] = std::array::from_fn(|k| _mm_loadu_si128(at.add(4 * k).cast()));
            // The signed packs keep each unit below 0x80 as it is (the others are filler).
            let halves = (_mm_packs_epi32(v[0], v[1]), _mm_packs_epi32(v[2], v[3]));
            _mm_storeu_si128(dst.cast(), _mm_packus_epi16(halves.0, halves.1));
            // One byte per ASCII unit, all ones.
            let high = _mm_set1_epi32(!0x7F);
            let ascii = |v| _mm_cmpeq_epi32(_mm_and_si128(v, high), _mm_setzero_si128());
            let words = (
                _mm_packs_epi32(ascii(v[0]), ascii(v[1])),
                _mm_packs_epi32(ascii(v[2]), ascii(v[3])),
            );
            let bytes = _mm_packs_epi16(words.0, words.1);
            (_mm_movemask_epi8(bytes) as u32).trailing_ones() as usize
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod narrow {
    use super::Unit;

    /// 16 units at a time without vector instructions: a byte per unit if all are ASCII.
    unsafe fn narrow16_any<U: Unit>(chars: &[U], i: usize, dst: *mut u8) -> usize {
        let run = &chars[i..i + 16];
        let ascii = run.iter().take_while(|&&c| c.into() < 0x80).count();
        for (k, &c) in run[..ascii].iter().enumerate() {
            // SAFETY: the caller's room for 16 bytes at `dst`.
            unsafe { *dst.add(k) = c.into() as u8 };
        }
        ascii
    }

    impl Unit for u8 {
        unsafe fn narrow16(chars: &[u8], i: usize, dst: *mut u8) -> usize {
            narrow16_any(chars, i, dst)
        }
    }

    impl Unit for u16 {
        unsafe fn narrow16(chars: &[u16], i: usize, dst: *mut u8) -> usize {
            narrow16_any(chars, i, dst)
        }
    }

    impl Unit for u32 {
        unsafe fn narrow16(chars: &[u32], i: usize, dst: *mut u8) -> usize {
            narrow16_any(chars, i, dst)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts with runs of ASCII of every length around 16 and 32 between characters of
    /// each UTF-8 width, at every offset.
    fn texts() -> Vec<String> {
        let others = [
            'é',
            'ÿ',
            '—',
            '“',
            'Ж',
            '中',
            '\u{FFFF}',
            '😀',
            '\u{10FFFF}',
        ];
        let mut texts = vec![String::new(), "a".into(), "é".into()];
        for (k, &other) in others.iter().enumerate() {
            for run in [0, 1, 7, 15, 16, 17, 31, 32, 33, 47] {
                let ascii: String = (0..run)
                    .map(|i| (b'a' + ((i + k) % 26) as u8) as char)
                    .collect();
                texts.push(format!("{ascii}{other}{ascii}"));
                texts.push(format!("{other}{ascii}{other}{other}{ascii}"));
            }
        }
        texts
    }

    #[test]
    fn each_width_of_unit_gives_the_text_s_utf8() {
        // One buffer for all: each call empties it first.
        let mut out = b"left over".to_vec();
        for text in texts() {
            let chars: Vec<u32> = text.chars().map(u32::from).collect();
            assert!(ucs4(&chars, &mut out));
            assert_eq!(out, text.as_bytes(), "{text:?}");
            if chars.iter().all(|&c| c < 0x10000) {
                let units: Vec<u16> = chars.iter().map(|&c| c as u16).collect();
                assert!(ucs2(&units, &mut out));
                assert_eq!(out, text.as_bytes(), "{text:?}");
            }
            if chars.iter().all(|&c| c < 0x100) {
                let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
                latin1(&bytes, &mut out);
                assert_eq!(out, text.as_bytes(), "{text:?}");
            }
        }
    }

    #[test]
    fn surrogates_have_no_utf8() {
        for surrogate in [0xD800u32, 0xDBFF, 0xDC00, 0xDFFF] {
            for at in [0, 5, 16, 20] {
                let mut chars: Vec<u32> = "a".repeat(24).chars().map(u32::from).collect();
                chars[at] = surrogate;
                let mut out = Vec::new();
                assert!(!ucs4(&chars, &mut out));
                let units: Vec<u16> = chars.iter().map(|&c| c as u16).collect();
                assert!(!ucs2(&units, &mut out));
            }
        }
    }
}
