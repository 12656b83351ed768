//! `MergeTables`: a vocabulary's tables for Python, and decoding ids to bytes and text.

use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use wordsplit::MergeTables;

use crate::batch::decoded_batch;
use crate::errors::{py_repr, ws_error};
use crate::ids::{le_u32s, token_id, IdItem};

/// The vocabulary tables shared by every native pipeline of one vocabulary.
#[pyclass(frozen, module = "wordsplit._native", name = "MergeTables")]
pub(crate) struct PyTables {
    pub(crate) inner: Arc<MergeTables>,
    /// The vocabulary's name, as Python's repr shows it (for messages).
    name: String,
    /// The vocabulary's name as it is (for the messages that show it so).
    pub(crate) vocab_name: String,
}

#[pymethods]
impl PyTables {
    /// MergeTables(blob, ids, lengths, is_bpe, n_vocab, merges, whole_piece_lookup, name):
    /// `blob` holds the bytes of tokens `ids` of `lengths` concatenated (both little-endian
    /// uint32 bytes); `is_bpe` (bytes of 0/1) tells BPE tokens from special/added literals;
    /// `merges` is None or the pair-ranked merges as little-endian uint32 triples
    /// `(left, right, rank)` (bytes; checked by `first_bad_merge`); `name` names the
    /// vocabulary in messages.
    #[new]
    #[pyo3(signature = (blob, ids, lengths, is_bpe, n_vocab, merges, whole_piece_lookup, name))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        blob: &[u8],
        ids: &[u8],
        lengths: &[u8],
        is_bpe: &[u8],
        n_vocab: usize,
        merges: Option<&[u8]>,
        whole_piece_lookup: bool,
        name: &str,
    ) -> PyResult<Self> {
        let (ids, lengths) = (le_u32s(ids), le_u32s(lengths));
        let merges = merges.map(merge_triples);
        let is_bpe: Vec<bool> = is_bpe.iter().map(|&b| b != 0).collect();
        let tables = py
            .allow_threads(|| {
                MergeTables::new(
                    blob,
                    &ids,
                    &lengths,
                    &is_bpe,
                    n_vocab,
                    merges,
                    whole_piece_lookup,
                )
            })
            .map_err(|e| ws_error(py, "VocabFormatError", e.0))?;
        Ok(Self {
            inner: Arc::new(tables),
            name: py_repr(py, name),
            vocab_name: name.to_owned(),
        })
    }

    /// The bytes of `ids`, concatenated.
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.decoded(py, ids)?))
    }

    /// The text of `ids`: their bytes decoded by CPython's UTF-8 decoder with the `errors`
    /// handler, straight from the native buffer (exactly `bytes.decode("utf-8", errors)`).
    #[pyo3(signature = (ids, errors="replace"))]
    fn decode_text<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyString>> {
        let bytes = self.decoded(py, ids)?;
        utf8_text(py, &bytes, errors)
    }

    /// Decode many id sequences on native threads: a list of str (`errors` as for decode_text).
    #[pyo3(signature = (batch, errors="replace", num_threads=None))]
    fn decode_batch<'py>(
        &self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
        errors: &str,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyString>>> {
        let parts = decoded_batch(self, py, batch, num_threads)?;
        parts
            .iter()
            .map(|bytes| utf8_text(py, bytes, errors))
            .collect()
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    /// The bytes no single-byte token spells (empty for most vocabularies).
    fn missing_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.missing_bytes())
    }
}

/// Little-endian uint32 triples `(left, right, rank)` (a trailing partial triple is ignored:
/// the Python side checks the length).
fn merge_triples(bytes: &[u8]) -> Vec<(u32, u32, u32)> {
    le_u32s(bytes)
        .chunks_exact(3)
        .map(|t| (t[0], t[1], t[2]))
        .collect()
}

/// first_bad_merge(tables, merges, cut=0): the index of the first of the packed merges (as
/// for `MergeTables`) that names an id that is not a BPE token of `tables`, or whose two
/// tokens together, the right one without its first `cut` bytes (HF's BPE with a
/// continuing-subword prefix of that length), are no BPE token; None when every merge is
/// sound. (The Python side words the error, as its check of a dict of merges does.)
#[pyfunction]
#[pyo3(signature = (tables, merges, cut=0))]
pub(crate) fn first_bad_merge(
    py: Python<'_>,
    tables: &PyTables,
    merges: &[u8],
    cut: usize,
) -> Option<usize> {
    let tables = &tables.inner;
    let triples = merge_triples(merges);
    py.allow_threads(|| {
        let mut is_bpe = vec![false; tables.n_vocab()];
        for id in tables.bpe_ids() {
            is_bpe[id as usize] = true;
        }
        let bpe = |id: u32| {
            is_bpe
                .get(id as usize)
                .is_some_and(|&b| b)
                .then(|| tables.token(id))
                .flatten()
        };
        let first_bad = |part: &[(u32, u32, u32)]| {
            let mut joined = Vec::new();
            part.iter().position(|&(left, right, _)| {
                let (Some(a), Some(b)) = (bpe(left), bpe(right)) else {
                    return true;
                };
                joined.clear();
                joined.extend_from_slice(a);
                joined.extend_from_slice(b.get(cut..).unwrap_or_default());
                tables.rank_of(&joined).is_none()
            })
        };
        // Two halves at once (a 262k-token vocabulary has 515k merges, each a few cache
        // misses); the first bad merge of the first half that has one.
        let (front, back) = triples.split_at(triples.len() / 2);
        let (in_front, in_back) = std::thread::scope(|scope| {
            let back = scope.spawn(|| first_bad(back));
            (
                first_bad(front),
                back.join().expect("the merge check does not panic"),
            )
        });
        in_front.or(in_back.map(|i| front.len() + i))
    })
}

/// `bytes` as a str, by CPython's UTF-8 decoder with the `errors` handler.
fn utf8_text<'py>(py: Python<'py>, bytes: &[u8], errors: &str) -> PyResult<Bound<'py, PyString>> {
    let owned;
    let errors: &std::ffi::CStr = match errors {
        "replace" => c"replace", // the default: no allocation
        "strict" => c"strict",
        other => {
            owned = std::ffi::CString::new(other).map_err(|_| {
                pyo3::exceptions::PyValueError::new_err("errors must not contain NUL")
            })?;
            &owned
        }
    };
    // SAFETY: the pointer and length describe `bytes`, alive for the call; the GIL is held.
    unsafe {
        let text = ffi::PyUnicode_DecodeUTF8(
            bytes.as_ptr().cast(),
            bytes.len() as ffi::Py_ssize_t,
            errors.as_ptr(),
        );
        Ok(Bound::from_owned_ptr_or_err(py, text)?.downcast_into_unchecked())
    }
}

/// The value of `obj`, an exact `int`, when it is in 0..2^32 (None otherwise, or with a Python
/// error set when CPython's conversion raised).
///
/// With `THIRTY` (CPython 3.10 and 3.11 with the GIL, keeping ints in 30-bit digits:
/// [`thirty_bit_digits`]) the value is read from the int's digits: an int is its object
/// header, the signed count of its digits, then the digits, least significant first
/// (`Include/cpython/longintrepr.h`), and a token id has at most two. That is a few
/// instructions where `PyLong_AsLong`'s general conversion was half the time of a decode.
/// Elsewhere (other layouts, 15-bit digits) CPython's conversion.
///
/// # Safety
/// `obj` is a live exact int and the GIL is held; `THIRTY` only where
/// [`thirty_bit_digits`] says so.
#[inline(always)]
unsafe fn exact_int_u32<const THIRTY: bool>(obj: *mut ffi::PyObject) -> Option<u32> {
    #[cfg(not(any(Py_3_12, Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API)))]
    if THIRTY {
        const DIGIT_BITS: u32 = 30;
        let size = (*obj.cast::<ffi::PyVarObject>()).ob_size;
        let digits = obj
            .cast::<u8>()
            .add(std::mem::size_of::<ffi::PyVarObject>())
            .cast::<u32>();
        return match size {
            0 => Some(0),
            1 => Some(*digits),
            2 => u32::try_from(u64::from(*digits) | u64::from(*digits.add(1)) << DIGIT_BITS).ok(),
            _ => None,
        };
    }
    u32::try_from(ffi::PyLong_AsLong(obj)).ok()
}

/// The ids of the list `list` ([`PyTables::token_ids`]): exact ints in 0..2^32 read in
/// place (from their 30-bit digits if `THIRTY`), every other item through `slow`.
fn list_ids<const THIRTY: bool>(
    list: &Bound<'_, PyList>,
    slow: impl Fn(&Bound<'_, PyAny>, &mut Vec<u32>) -> PyResult<()>,
) -> PyResult<Vec<u32>> {
    let py = list.py();
    let mut len = list.len();
    let mut out = Vec::with_capacity(len);
    let mut i = 0;
    while i < len {
        // SAFETY: GIL held; `i` is below the list's length, read after the last Python code
        // that ran (the slow path, which holds its own reference to its item).
        let item = unsafe { ffi::PyList_GET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t) };
        i += 1;
        // Fast path, without touching the reference count: a small int (nearly every id).
        if unsafe { ffi::PyLong_CheckExact(item) } != 0 {
            // SAFETY: an exact int, the GIL held; `THIRTY` is the caller's word.
            if let Some(id) = unsafe { exact_int_u32::<THIRTY>(item) } {
                out.push(id);
                continue;
            }
            let _ = PyErr::take(py); // an overflow: token_id words it
        }
        slow(unsafe { &Bound::from_borrowed_ptr(py, item) }, &mut out)?;
        // An item's `__index__` is Python code, which may have shrunk (or grown) the list.
        len = list.len();
    }
    Ok(out)
}

/// Whether this interpreter's ints may be read from 30-bit digits ([`exact_int_u32`]),
/// asked of `sys.int_info` once: CPython keeps ints in 30-bit digits by default, in 15-bit
/// ones when built with `--enable-big-digits=15` (and on some 32-bit platforms), and in
/// another layout from 3.12.
fn thirty_bit_digits(py: Python<'_>) -> bool {
    #[cfg(not(any(Py_3_12, Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API)))]
    {
        // A cell the GIL guards, not a lock: the value is asked of Python code (an import),
        // during which another thread may take the GIL and come here too.
        static THIRTY: pyo3::sync::GILOnceCell<bool> = pyo3::sync::GILOnceCell::new();
        *THIRTY.get_or_init(py, || {
            let bits = py.import("sys").and_then(|sys| {
                sys.getattr("int_info")?
                    .getattr("bits_per_digit")?
                    .extract::<u32>()
            });
            matches!(bits, Ok(30))
        })
    }
    #[cfg(any(Py_3_12, Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API))]
    {
        let _ = py;
        false
    }
}

impl PyTables {
    /// The ids of a Python sequence, each checked to be a token id of this vocabulary; the
    /// first bad one raises its final error (DecodeInputError, UnknownTokenError).
    pub(crate) fn token_ids(&self, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let py = ids.py();
        let slow = |item: &Bound<'_, PyAny>, out: &mut Vec<u32>| -> PyResult<()> {
            match token_id(item)? {
                IdItem::Id(id) => out.push(id),
                IdItem::Outside(shown) => return Err(self.outside(py, &shown)),
            }
            Ok(())
        };
        let Ok(list) = ids.downcast::<PyList>() else {
            // `__len__` is only a hint (an object may claim any length): room for at most
            // 65,536 ids up front.
            let mut out = Vec::with_capacity(ids.len().unwrap_or(0).min(1 << 16));
            for item in ids.try_iter()? {
                slow(&item?, &mut out)?;
            }
            return Ok(out);
        };
        if thirty_bit_digits(py) {
            list_ids::<true>(list, slow)
        } else {
            list_ids::<false>(list, slow)
        }
    }

    /// UnknownTokenError for an id outside the vocabulary (`shown` as Python prints it).
    fn outside(&self, py: Python<'_>, shown: &str) -> PyErr {
        let last = self.inner.n_vocab().saturating_sub(1);
        let message = format!(
            "token id {shown} is outside the vocabulary {} (ids 0..{last})",
            self.name
        );
        ws_error(py, "UnknownTokenError", message)
    }

    /// UnknownTokenError for `id`, found missing by the tables.
    pub(crate) fn unknown(&self, py: Python<'_>, id: u32) -> PyErr {
        if (id as usize) < self.inner.n_vocab() {
            let message = format!("token id {id} is unused in the vocabulary {}", self.name);
            ws_error(py, "UnknownTokenError", message)
        } else {
            self.outside(py, &id.to_string())
        }
    }

    /// The bytes of the ids in the Python sequence `ids`, decoded with the GIL released.
    fn decoded(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        let ids = self.token_ids(ids)?;
        let tables = &self.inner;
        py.allow_threads(|| {
            let mut out = Vec::new();
            tables.decode_into(&ids, &mut out).map(|_| out)
        })
        .map_err(|id| self.unknown(py, id))
    }
}
