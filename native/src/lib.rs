//! `wordsplit._native`: the Rust core of wordsplit, and its PyO3 glue (this file only).
//!
//! The parts mirror the Python package under the same names: `vocab` (the shared tables),
//! `encoders` (buffer-sweep, heap-merge, backtrack), `spanners` (hand-written scanners) and
//! `pipeline` (the whole encode in one call). Errors become the Python exception classes of
//! `wordsplit.errors`. Work on text or id lists runs with the GIL released; batches run on
//! native threads.

pub mod arrow;
pub mod batch;
pub mod encoders;
pub mod formats;
#[rustfmt::skip]
pub mod names;
pub mod pipeline;
pub mod spanners;
pub mod tables;
pub mod train;
pub mod unicode_tables;

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering::Relaxed};
use std::sync::Arc;

use batch::{default_threads, run_shared, ALONE_BELOW_IDS, ALONE_BELOW_TEXT_BYTES};

use pyo3::buffer::PyBuffer;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit};

use encoders::{encode_piece, EncoderKind};
use pipeline::{
    EncodeError, EncodeStage, Literal, NormalizeStage, Pipeline, SpanStage, SpecialPolicy,
};
use tables::MergeTables;

/// mimalloc for every Rust allocation of the extension (see Cargo.toml for why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Little-endian uint32s from bytes (array('I').tobytes() on every platform we build for).
fn le_u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// An instance of a `wordsplit.errors` class, so both backends raise the same exceptions.
pub(crate) fn ws_error(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py
        .import("wordsplit.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.clone(),)))
    {
        Ok(instance) => PyErr::from_value(instance),
        Err(err) => err,
    }
}

/// A Python int per token id, made the first time the id is returned and then shared by every
/// result list: a list of n ids costs n reference increments instead of n allocations (which
/// were the largest cost of returning ids). Only touched with the GIL held; the atomics are
/// there to make the type `Sync`, not for ordering.
struct IdInts {
    ints: Box<[AtomicPtr<ffi::PyObject>]>,
}

/// How far ahead [`IdInts::list`] asks for an id's slot, and for its int: far enough that the
/// slot is loaded when the int is asked for, and the int when it is taken (one pass over
/// cl100k prose and code, each distance ÷ the one before: 16/8 → 48/24 1.04–1.06×, → 96/48
/// 1.02–1.03×, → 192/96 1.01×). The hints cost a few instructions per id: a list of one id
/// repeated (1 MiB of spaces) takes as long as without them.
const PREFETCH_SLOT: usize = 96;
const PREFETCH_INT: usize = 48;

impl IdInts {
    fn new(n_vocab: usize) -> Self {
        Self {
            ints: (0..n_vocab)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
        }
    }

    /// A new reference to the int `id`, or null with a Python error set.
    #[inline]
    fn new_ref(&self, _py: Python<'_>, id: u32) -> *mut ffi::PyObject {
        let Some(slot) = self.ints.get(id as usize) else {
            return unsafe { ffi::PyLong_FromUnsignedLong(id.into()) };
        };
        let mut obj = slot.load(Relaxed);
        if obj.is_null() {
            obj = unsafe { ffi::PyLong_FromUnsignedLong(id.into()) };
            if obj.is_null() {
                return obj;
            }
            slot.store(obj, Relaxed);
        }
        unsafe { ffi::Py_INCREF(obj) };
        obj
    }

    /// Asks the CPU for the slot of `slot_ahead`'s int and for the int of `int_ahead` (whose
    /// slot was asked for earlier), ids [`PREFETCH_SLOT`] and [`PREFETCH_INT`] places after
    /// the one being taken, so that taking each int is not two cache misses in a row. On text
    /// never seen before the ints of a document's ids are spread over a few MB: taking them
    /// was a seventh of a one-pass encode, almost all of it waiting for those two loads.
    #[inline(always)]
    fn prefetch(&self, slot_ahead: u32, int_ahead: u32) {
        if let Some(slot) = self.ints.get(slot_ahead as usize) {
            crate::tables::prefetch(slot);
        }
        if let Some(slot) = self.ints.get(int_ahead as usize) {
            let obj = slot.load(Relaxed);
            if !obj.is_null() {
                // SAFETY: a stored pointer is a live int (this table holds a reference).
                crate::tables::prefetch(unsafe { &*obj });
            }
        }
    }

    /// `ids` as a Python list.
    ///
    /// On CPython with the GIL the list's item array is built before the list gets it, which
    /// spares `PyList_New(n)`'s zeroing of 8 bytes per id; elsewhere (free-threaded CPython,
    /// whose lists allocate their arrays differently, PyPy, GraalPy) the portable
    /// `PyList_New` + `PyList_SET_ITEM`.
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        #[cfg(not(any(Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API)))]
        {
            self.list_in_place(py, ids)
        }
        #[cfg(any(Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API))]
        {
            self.list_portable(py, ids)
        }
    }

    #[cfg(not(any(Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API)))]
    fn list_in_place<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let n = ids.len();
        // SAFETY: the GIL is held (`py`). The item array is made here with PyMem_Malloc, the
        // allocator CPython's lists use (PyList_New(n) takes it zeroed from PyMem_Calloc, a
        // clearing pass over 8 bytes per id that would be overwritten at once), filled with
        // one new reference per slot, and only then handed to the empty list with its size,
        // with no Python code running in between. On an error the references taken so far
        // are released and the array freed; the empty list is dropped.
        unsafe {
            let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(0))?;
            if n == 0 {
                return Ok(list.downcast_into_unchecked());
            }
            let items = if n <= isize::MAX as usize / std::mem::size_of::<usize>() {
                ffi::PyMem_Malloc(n * std::mem::size_of::<*mut ffi::PyObject>())
                    .cast::<*mut ffi::PyObject>()
            } else {
                ptr::null_mut()
            };
            if items.is_null() {
                return Err(pyo3::exceptions::PyMemoryError::new_err(
                    "cannot allocate the list of ids",
                ));
            }
            // Each slot of `items` gets a new reference to its id's int; false (with a
            // Python error set) if an int could not be made.
            let put = |i: usize, id: u32| {
                let obj = self.new_ref(py, id);
                *items.add(i) = obj;
                !obj.is_null()
            };
            // The ids with an id PREFETCH_SLOT places after them (asking for the ints ahead),
            // then the last ones.
            let with_ahead = ids
                .iter()
                .zip(ids.get(PREFETCH_INT..).unwrap_or_default())
                .zip(ids.get(PREFETCH_SLOT..).unwrap_or_default());
            let mut done = 0;
            let mut ok = true;
            for ((&id, &int_ahead), &slot_ahead) in with_ahead {
                self.prefetch(slot_ahead, int_ahead);
                ok = put(done, id);
                if !ok {
                    break;
                }
                done += 1;
            }
            while ok && done < n {
                ok = put(done, ids[done]);
                if ok {
                    done += 1;
                }
            }
            if !ok {
                for j in 0..done {
                    ffi::Py_DECREF(*items.add(j));
                }
                ffi::PyMem_Free(items.cast());
                return Err(PyErr::fetch(py));
            }
            let raw = list.as_ptr().cast::<ffi::PyListObject>();
            (*raw).ob_item = items;
            (*raw).allocated = n as ffi::Py_ssize_t;
            (*raw).ob_base.ob_size = n as ffi::Py_ssize_t;
            Ok(list.downcast_into_unchecked())
        }
    }

    #[cfg(any(Py_GIL_DISABLED, PyPy, GraalPy, Py_LIMITED_API))]
    fn list_portable<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        // SAFETY: the GIL is held (`py`); PyList_New returns a list of `len` empty slots that
        // we own, and each slot is set once with a new reference (a list with empty slots
        // left by an error is still valid to drop).
        unsafe {
            let list =
                Bound::from_owned_ptr_or_err(py, ffi::PyList_New(ids.len() as ffi::Py_ssize_t))?;
            for (i, &id) in ids.iter().enumerate() {
                let obj = self.new_ref(py, id);
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, obj);
            }
            Ok(list.downcast_into_unchecked())
        }
    }
}

impl Drop for IdInts {
    fn drop(&mut self) {
        Python::with_gil(|_| {
            for slot in self.ints.iter() {
                let obj = slot.load(Relaxed);
                if !obj.is_null() {
                    // SAFETY: each stored pointer holds the one reference this table owns.
                    unsafe { ffi::Py_DECREF(obj) };
                }
            }
        });
    }
}

/// A token id read from Python: in range of u32, or the Python int itself (for the message).
enum IdItem {
    Id(u32),
    /// Negative or beyond u32: outside every vocabulary.
    Outside(String),
}

/// One token id of a Python sequence: an int, or anything with `__index__` (numpy integers).
/// Anything else is a DecodeInputError, worded as the Python engine words it.
fn token_id(item: &Bound<'_, PyAny>) -> PyResult<IdItem> {
    let py = item.py();
    // SAFETY: GIL held; PyLong_Check only reads the type.
    let int = if unsafe { ffi::PyLong_Check(item.as_ptr()) } != 0 {
        item.clone()
    } else {
        // SAFETY: GIL held; PyNumber_Index returns a new reference or NULL with an error set.
        match unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyNumber_Index(item.as_ptr())) } {
            Ok(int) => int,
            Err(_) => {
                let message = format!(
                    "token ids are ints, got {} ({})",
                    item.repr()?,
                    item.get_type().name()?
                );
                return Err(ws_error(py, "DecodeInputError", message));
            }
        }
    };
    match int.extract::<u32>() {
        Ok(id) => Ok(IdItem::Id(id)),
        Err(_) => Ok(IdItem::Outside(int.str()?.to_string())),
    }
}

/// The vocabulary tables shared by every native pipeline of one vocabulary.
#[pyclass(frozen, module = "wordsplit._native", name = "MergeTables")]
struct PyTables {
    inner: Arc<MergeTables>,
    /// The vocabulary's name, as Python's repr shows it (for messages).
    name: String,
}

#[pymethods]
impl PyTables {
    /// MergeTables(blob, ids, lengths, is_bpe, n_vocab, merges, whole_piece_lookup, name):
    /// `blob` holds the bytes of tokens `ids` of `lengths` concatenated (both little-endian
    /// uint32 bytes); `is_bpe` (bytes of 0/1) tells BPE tokens from special/added literals;
    /// `merges` is [(left, right, rank)] or None; `name` names the vocabulary in messages.
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
        merges: Option<Vec<(u32, u32, u32)>>,
        whole_piece_lookup: bool,
        name: &str,
    ) -> PyResult<Self> {
        let (ids, lengths) = (le_u32s(ids), le_u32s(lengths));
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
            name: pipeline::py_repr(py, name),
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
        let parts = self.decoded_batch(py, batch, num_threads)?;
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

impl PyTables {
    /// The ids of a Python sequence, each checked to be a token id of this vocabulary; the
    /// first bad one raises its final error (DecodeInputError, UnknownTokenError).
    fn token_ids(&self, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let py = ids.py();
        let slow = |item: &Bound<'_, PyAny>, out: &mut Vec<u32>| -> PyResult<()> {
            match token_id(item)? {
                IdItem::Id(id) => out.push(id),
                IdItem::Outside(shown) => return Err(self.outside(py, &shown)),
            }
            Ok(())
        };
        let Ok(list) = ids.downcast::<PyList>() else {
            let mut out = Vec::with_capacity(ids.len().unwrap_or(0));
            for item in ids.try_iter()? {
                slow(&item?, &mut out)?;
            }
            return Ok(out);
        };
        let mut out = Vec::with_capacity(list.len());
        for i in 0..list.len() {
            // SAFETY: GIL held; `i` is below the list's length, read just now, and nothing in
            // this loop runs Python code before the item is used, except on the slow path,
            // which holds its own reference to the item.
            let item = unsafe { ffi::PyList_GET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t) };
            // Fast path, without touching the reference count: a small int (nearly every id).
            if unsafe { ffi::PyLong_CheckExact(item) } != 0 {
                let value = unsafe { ffi::PyLong_AsLong(item) };
                if let Ok(id) = u32::try_from(value) {
                    out.push(id);
                    continue;
                }
                let _ = PyErr::take(py); // an overflow: token_id words it
            }
            slow(unsafe { &Bound::from_borrowed_ptr(py, item) }, &mut out)?;
        }
        Ok(out)
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
    fn unknown(&self, py: Python<'_>, id: u32) -> PyErr {
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

    /// The bytes of each id sequence of `batch`, on native threads; the error is that of the
    /// first bad id of the lowest-index sequence, as a loop over the batch would give.
    fn decoded_batch(
        &self,
        py: Python<'_>,
        batch: &Bound<'_, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Vec<u8>>> {
        let tables = &self.inner;
        let mut lists: Vec<Vec<u32>> = Vec::new();
        for ids in batch.try_iter()? {
            match self.token_ids(&ids?) {
                Ok(ids) => lists.push(ids),
                Err(err) => {
                    // An earlier sequence with an unused id fails first, as in a loop.
                    let mut scratch = Vec::new();
                    for ids in &lists {
                        if let Err(id) = tables.decode_into(ids, &mut scratch) {
                            return Err(self.unknown(py, id));
                        }
                        scratch.clear();
                    }
                    return Err(err);
                }
            }
        }
        let batch = lists;
        let decode = |i: usize| {
            let mut out = Vec::new();
            tables.decode_into(&batch[i], &mut out).map(|_| out)
        };
        run_shared(
            py,
            batch.len(),
            default_threads(num_threads),
            |i| batch[i].len(),
            ALONE_BELOW_IDS,
            decode,
            |result| result.map_err(|id| self.unknown(py, id)),
        )
    }
}

/// A native span encoder on its own: `Encoder(tables, name)` (buffer-sweep, heap-merge,
/// backtrack, auto), for tests and benchmarks of one strategy; tokenizers use [`PyPipeline`].
#[pyclass(frozen, module = "wordsplit._native", name = "Encoder")]
struct PyEncoder {
    tables: Arc<MergeTables>,
    kind: EncoderKind,
}

/// The native encoder `name`, its tables built if it needs them.
fn native_encoder(py: Python<'_>, tables: &Arc<MergeTables>, name: &str) -> PyResult<EncoderKind> {
    let kind = EncoderKind::from_name(name).ok_or_else(|| {
        ws_error(
            py,
            "UnknownComponentError",
            format!(
                "unknown native encoder {}; known: {}",
                pipeline::py_repr(py, name),
                EncoderKind::NAMES.join(", ")
            ),
        )
    })?;
    if kind == EncoderKind::Backtrack {
        let ready =
            py.allow_threads(|| tables.backtrack_tables().map(|_| ()).map_err(str::to_owned));
        ready.map_err(|e| ws_error(py, "UnsupportedTokenizerError", e))?;
    }
    Ok(kind)
}

#[pymethods]
impl PyEncoder {
    #[new]
    fn new(py: Python<'_>, tables: &PyTables, name: &str) -> PyResult<Self> {
        let tables = tables.inner.clone();
        let kind = native_encoder(py, &tables, name)?;
        Ok(Self { tables, kind })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The ids of one piece (bytes without a token dropped first, as the pipeline does for a
    /// vocabulary without an unk token; the unk token is the pipeline's, not the encoder's).
    fn encode_piece(&self, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::with_capacity(piece.len() / 3 + 1);
        let tables = &self.tables;
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

/// A resolved special-token policy for one [`PyPipeline`], cached by the Python side.
#[pyclass(frozen, module = "wordsplit._native", name = "Policy")]
struct PyPolicy {
    inner: SpecialPolicy,
}

/// The whole encode in one call; see `wordsplit/engines/native.py`.
///
/// `Pipeline(tables, *, encoder, spanner, pattern, literals, normalizer, encoder_impl=None,
/// spanner_impl=None, normalizer_impl=None, patterns=None)`: each stage is native (a native
/// encoder name or "auto"; the scanner `spanner`, which must be registered for exactly
/// `pattern`, or `spanner="regex"` with `pattern` in its expanded form, or, given `patterns`
/// (expanded), a llama.cpp-style sequence of regexes named `spanner`; "none" or "nfc") unless
/// its `*_impl` Python object is given, the name then naming it in messages.
/// `literals` is `[(text, id, special)]`. `unk=(id, fuse)`: a byte no token spells is that
/// token (one per run of them with `fuse`) instead of being dropped. `program`: the steps of
/// the split program that the Python `spanner_impl` (an `hf-split` spanner) runs, as
/// `hf_program_spans` takes them; encoding then runs it natively (offsets ask `spanner_impl`).
#[pyclass(frozen, module = "wordsplit._native", name = "Pipeline")]
struct PyPipeline {
    inner: Pipeline,
    ints: IdInts,
}

impl PyPipeline {
    /// The ids of `text`, with the GIL released when every stage is native.
    fn run(&self, py: Python<'_>, text: &str, policy: &SpecialPolicy) -> PyResult<Vec<u32>> {
        // Text of non-Latin scripts makes up to ~0.45 ids per byte: room for half an id per
        // byte spares the copies of growing the vector, up to 1 MiB of text (beyond, a third,
        // so a very long text does not reserve twice its size).
        let per_byte = if text.len() <= 1 << 20 { 2 } else { 3 };
        let mut out = Vec::with_capacity(text.len() / per_byte + 4);
        let result = if self.inner.is_native() {
            py.allow_threads(|| self.inner.encode(text, policy, &mut out))
        } else {
            self.inner.encode(text, policy, &mut out)
        };
        result.map_err(|e| encode_error(py, e))?;
        Ok(out)
    }

    /// The text of a Python str (surrogates fixed); EncodeInputError for anything else.
    fn text<'a>(text: &'a Bound<'_, PyAny>, batch_index: Option<usize>) -> PyResult<TextArg<'a>> {
        let Ok(string) = text.downcast::<PyString>() else {
            let kind = text.get_type().name()?;
            let hint = if text.is_instance_of::<PyBytes>()
                || text.is_instance_of::<pyo3::types::PyByteArray>()
            {
                " (decode bytes to str first, e.g. data.decode('utf-8'))"
            } else {
                ""
            };
            let message = match batch_index {
                None => format!("encode takes a str, not {kind}{hint}"),
                Some(i) => format!("text {i} of the batch is a {kind}, not a str{hint}"),
            };
            return Err(ws_error(text.py(), "EncodeInputError", message));
        };
        match string.to_str() {
            Ok(plain) => Ok(TextArg::Borrowed(plain)),
            Err(_) => Ok(TextArg::Owned(pipeline::text_without_surrogates(string)?)),
        }
    }

    /// The texts of a batch (any iterable of str), each checked and fixed.
    fn texts<'a>(items: &'a [Bound<'a, PyAny>]) -> PyResult<Vec<TextArg<'a>>> {
        items
            .iter()
            .enumerate()
            .map(|(i, text)| Self::text(text, Some(i)))
            .collect()
    }

    /// Encode `texts` with [`run_shared`] (all native) or in order on this thread: each text's
    /// ids, made into its result by `keep` on this thread, in text order; the error is that of
    /// the lowest-index text that fails.
    fn run_batch<T>(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        policy: &SpecialPolicy,
        num_threads: Option<usize>,
        mut keep: impl FnMut(Vec<u32>) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let items: Vec<Bound<'_, PyAny>> = match texts.downcast::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => texts.try_iter()?.collect::<PyResult<_>>()?,
        };
        let texts = Self::texts(&items)?;
        if !self.inner.is_native() {
            return texts
                .iter()
                .map(|text| keep(self.run(py, text.as_str(), policy)?))
                .collect();
        }
        let encode = |i: usize| {
            let mut out = Vec::with_capacity(texts[i].as_str().len() / 3 + 4);
            self.inner
                .encode(texts[i].as_str(), policy, &mut out)
                .map(|_| out)
        };
        run_shared(
            py,
            texts.len(),
            default_threads(num_threads),
            |i| texts[i].as_str().len(),
            ALONE_BELOW_TEXT_BYTES,
            encode,
            |result| keep(result.map_err(|e| encode_error(py, e))?),
        )
    }
}

/// A text argument: borrowed from the Python str, or fixed (surrogates) into a new String.
enum TextArg<'a> {
    Borrowed(&'a str),
    Owned(String),
}

impl TextArg<'_> {
    fn as_str(&self) -> &str {
        match self {
            TextArg::Borrowed(text) => text,
            TextArg::Owned(text) => text,
        }
    }
}

/// The Python exception of a failed encode, with its final message.
fn encode_error(py: Python<'_>, error: EncodeError) -> PyErr {
    match error {
        EncodeError::Python(err) => err,
        EncodeError::Component(message) => ws_error(py, "ComponentError", message),
        EncodeError::Disallowed(token) => {
            let token = pipeline::py_repr(py, &token);
            ws_error(
                py,
                "DisallowedSpecialError",
                format!(
                    "text contains the special token {token}, which is disallowed; pass \
                     allowed_special={{{token}}} (or allowed_special='all') to encode it as a special \
                     token, or disallowed_special=() to encode it as plain text"
                ),
            )
        }
    }
}

#[pymethods]
impl PyPipeline {
    /// The Python stages this pipeline holds, for the garbage collector: a component that
    /// refers back to its tokenizer makes a cycle through this object, which the collector can
    /// only free if it sees these references (it breaks the cycle by clearing the component).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.inner
            .python_stages()
            .try_for_each(|object| visit.call(object))
    }

    #[new]
    #[pyo3(signature = (tables, *, encoder, spanner, pattern, literals, normalizer,
                        encoder_impl=None, spanner_impl=None, normalizer_impl=None, patterns=None,
                        unk=None, program=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tables: &PyTables,
        encoder: &str,
        spanner: &str,
        pattern: &str,
        literals: Vec<(String, u32, bool, u8)>,
        normalizer: &str,
        encoder_impl: Option<Py<PyAny>>,
        spanner_impl: Option<Py<PyAny>>,
        normalizer_impl: Option<Py<PyAny>>,
        patterns: Option<Vec<String>>,
        unk: Option<(u32, bool)>,
        program: Option<Vec<spanners::hf_program::StepSpec>>,
    ) -> PyResult<Self> {
        if program.is_some() && spanner_impl.is_none() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "a native split program needs the Python spanner that runs it (spanner_impl)",
            ));
        }
        let encoder = match encoder_impl {
            Some(object) => EncodeStage::Python(object, encoder.to_owned()),
            None => EncodeStage::Native(native_encoder(py, &tables.inner, encoder)?),
        };
        let spanner = match spanner_impl {
            Some(object) => SpanStage::python(py, object, spanner.to_owned())?,
            None => match patterns {
                Some(patterns) => SpanStage::RegexSequence(
                    spanners::RegexSequence::new(&patterns)
                        .map_err(|e| regex_unsupported(py, &e))?,
                    spanner.to_owned(),
                ),
                None if spanner == "regex" => SpanStage::Regex(
                    Box::new(
                        spanners::RegexSpanner::new(pattern)
                            .map_err(|e| regex_unsupported(py, &e))?,
                    ),
                    spanner.to_owned(),
                ),
                None => SpanStage::Native(scanner(py, spanner, pattern)?),
            },
        };
        let normalizer = match (normalizer_impl, normalizer) {
            (Some(object), name) => NormalizeStage::Python(object, name.to_owned()),
            (None, "none") => NormalizeStage::None,
            (None, "nfc") => NormalizeStage::Nfc,
            (None, "nfd") => NormalizeStage::Nfd,
            (None, "nfkc") => NormalizeStage::Nfkc,
            (None, "nfkd") => NormalizeStage::Nfkd,
            (None, name) => {
                return Err(ws_error(
                    py,
                    "UnknownComponentError",
                    format!(
                        "unknown native normalizer {}; known: nfc, nfd, nfkc, nfkd, none",
                        pipeline::py_repr(py, name)
                    ),
                ))
            }
        };
        let literals = literals
            .into_iter()
            .map(|(text, id, special, flags)| Literal {
                text,
                id,
                special,
                flags,
            })
            .collect();
        let mut inner = Pipeline::new(tables.inner.clone(), encoder, spanner, literals, normalizer)
            .map_err(|e| ws_error(py, "VocabFormatError", e))?;
        inner.unk = unk;
        if let Some(steps) = program {
            let program =
                spanners::HfProgram::new(&steps).map_err(|e| regex_unsupported(py, &e))?;
            inner.program = Some(Box::new(program));
        }
        Ok(Self {
            ints: IdInts::new(inner.tables.n_vocab()),
            inner,
        })
    }

    /// Whether every stage is native (the GIL is released, batches run on threads).
    #[getter]
    fn native(&self) -> bool {
        self.inner.is_native()
    }

    /// A policy: `allowed`/`disallowed` are sets of literal texts; `allowed=None` allows all.
    #[pyo3(signature = (allowed, disallowed))]
    fn policy(&self, allowed: Option<Vec<String>>, disallowed: Vec<String>) -> PyPolicy {
        let Some(allowed) = allowed else {
            return PyPolicy {
                inner: SpecialPolicy::AllowAll,
            };
        };
        let flags = |set: &[String]| {
            self.inner
                .literals
                .iter()
                .map(|l| set.contains(&l.text))
                .collect()
        };
        PyPolicy {
            inner: SpecialPolicy::Mixed {
                allowed: flags(&allowed),
                disallowed: flags(&disallowed),
            },
        }
    }

    /// The ids of `text` under `policy`.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        policy: &PyPolicy,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = Self::text(text, None)?;
        let ids = self.run(py, text.as_str(), &policy.inner)?;
        self.ints.list(py, &ids)
    }

    /// The number of tokens of `text`, without building the list.
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>, policy: &PyPolicy) -> PyResult<usize> {
        let text = Self::text(text, None)?;
        Ok(self.run(py, text.as_str(), &policy.inner)?.len())
    }

    /// `(ids, places, fixed)`: the ids of `text` under `policy`; per token `[byte start, byte
    /// end, char start, char end, word]` as little-endian uint64 bytes (see
    /// `pipeline/offsets.rs`); and whether the text had surrogates (then the char offsets
    /// count in the fixed text, and the caller maps them back to the str it gave).
    fn encode_with_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        policy: &PyPolicy,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyBytes>, bool)> {
        let text = Self::text(text, None)?;
        let fixed = matches!(text, TextArg::Owned(_));
        let text = text.as_str();
        let mut out = Vec::with_capacity(text.len() / 3 + 4);
        let mut places = Vec::with_capacity(text.len() / 3 + 4);
        let result = if self.inner.is_native() {
            py.allow_threads(|| {
                self.inner
                    .encode_with_offsets(text, &policy.inner, &mut out, &mut places)
            })
        } else {
            self.inner
                .encode_with_offsets(text, &policy.inner, &mut out, &mut places)
        };
        result.map_err(|e| encode_error(py, e))?;
        let ids = self.ints.list(py, &out)?;
        let places = PyBytes::new_with(py, places.len() * 40, |buf| {
            for (chunk, value) in buf.chunks_exact_mut(8).zip(places.iter().flatten()) {
                chunk.copy_from_slice(&value.to_le_bytes());
            }
            Ok(())
        })?;
        Ok((ids, places, fixed))
    }

    /// Encode many texts (on native threads when every stage is native): a list of id lists.
    #[pyo3(signature = (texts, policy, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.run_batch(py, texts, &policy.inner, num_threads, |ids| {
            self.ints.list(py, &ids)
        })
    }

    /// Encode many texts into one flat buffer: `(ids, offsets)` as little-endian uint32 and
    /// uint64 bytes; text i has ids[offsets[i]:offsets[i + 1]]. No Python int per token.
    #[pyo3(signature = (texts, policy, num_threads=None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let parts = self.run_batch(py, texts, &policy.inner, num_threads, Ok)?;
        let total: usize = parts.iter().map(Vec::len).sum();
        // Written straight into the bytes objects, four (eight) bytes per id (offset).
        let ids = PyBytes::new_with(py, total * 4, |buf| {
            for (chunk, &id) in buf.chunks_exact_mut(4).zip(parts.iter().flatten()) {
                chunk.copy_from_slice(&id.to_le_bytes());
            }
            Ok(())
        })?;
        let offsets = PyBytes::new_with(py, (parts.len() + 1) * 8, |buf| {
            let ends = std::iter::once(0).chain(parts.iter().scan(0u64, |end, part| {
                *end += part.len() as u64;
                Some(*end)
            }));
            for (chunk, end) in buf.chunks_exact_mut(8).zip(ends) {
                chunk.copy_from_slice(&end.to_le_bytes());
            }
            Ok(())
        })?;
        Ok((ids, offsets))
    }

    /// Encode the rows of Arrow string arrays (see `arrow.rs`) straight from their buffers,
    /// with no Python str per row, into one buffer framed for a dataset writer: `(data,
    /// lengths)`, `data` the ids as little-endian `width`-byte ints with `bos` before and `eos`
    /// after each row (none for an empty row when `empty_is_nothing`; nothing at all for a null
    /// row), `lengths` each row's count of those ids as little-endian uint64 bytes. `chunks` is
    /// `[(validity, offsets, data, large, offset, length)]`, the buffers as contiguous bytes
    /// (None for a missing one). The rows are checked as UTF-8 on the threads that encode them.
    #[pyo3(signature = (chunks, policy, num_threads=None, width=4, bos=None, eos=None,
                        empty_is_nothing=false))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn encode_arrow_flat<'py>(
        &self,
        py: Python<'py>,
        chunks: Vec<(
            Option<PyBuffer<u8>>,
            PyBuffer<u8>,
            Option<PyBuffer<u8>>,
            bool,
            usize,
            usize,
        )>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
        width: usize,
        bos: Option<u32>,
        eos: Option<u32>,
        empty_is_nothing: bool,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        if width != 2 && width != 4 {
            let message = format!("width must be 2 or 4 (bytes per id), not {width}");
            return Err(ws_error(py, "OptionValueError", message));
        }
        let framing = arrow::Framing {
            width,
            bos,
            eos,
            empty_is_nothing,
        };
        let bytes = |buffer: &PyBuffer<u8>| -> PyResult<&[u8]> {
            if !buffer.is_c_contiguous() {
                let message = "an Arrow buffer must be contiguous bytes".to_owned();
                return Err(ws_error(py, "EncodeInputError", message));
            }
            // SAFETY: the PyBuffer (in `chunks`, alive for this call) keeps the exported memory
            // valid and unmoved; Arrow buffers are not written once built.
            Ok(unsafe {
                std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes())
            })
        };
        let columns = chunks
            .iter()
            .map(|(validity, offsets, data, large, offset, length)| {
                Ok(arrow::StringChunk {
                    validity: validity.as_ref().map(bytes).transpose()?,
                    offsets: bytes(offsets)?,
                    data: data.as_ref().map(bytes).transpose()?.unwrap_or(&[]),
                    large: *large,
                    offset: *offset,
                    length: *length,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let rows = arrow::documents(&columns).map_err(|e| ws_error(py, "EncodeInputError", e))?;
        let policy = &policy.inner;
        // Runs of consecutive rows, not single rows, are what the threads take (see arrow.rs).
        let threads = default_threads(num_threads);
        let text_bytes = rows.iter().map(|row| row.map_or(0, <[u8]>::len)).sum();
        let runs = arrow::runs(&rows, arrow::run_bytes(text_bytes, threads));
        let encode_run = |r: usize| {
            let (range, bytes) = runs[r].clone();
            arrow::encode_run(&framing, &rows, range, bytes, |text, out| {
                self.inner.encode(text, policy, out)
            })
        };
        let fail = |e: arrow::RunError<EncodeError>| match e {
            arrow::RunError::Utf8(row, at) => {
                let message = format!("row {row} of the arrays is not valid UTF-8 (byte {at})");
                ws_error(py, "EncodeInputError", message)
            }
            arrow::RunError::Encode(_, e) => encode_error(py, e),
        };
        let parts: Vec<arrow::FramedRun> = if self.inner.is_native() {
            run_shared(
                py,
                runs.len(),
                threads,
                |r| runs[r].1,
                ALONE_BELOW_TEXT_BYTES,
                encode_run,
                |result| result.map_err(fail),
            )?
        } else {
            (0..runs.len())
                .map(|r| encode_run(r).map_err(fail))
                .collect::<PyResult<_>>()?
        };
        let too_wide = framing
            .too_wide(std::iter::empty())
            .or_else(|| parts.iter().find_map(|part| part.too_wide));
        if let Some(id) = too_wide {
            let message = format!("the id {id} does not fit in width={width} bytes; use width=4");
            return Err(ws_error(py, "OptionValueError", message));
        }
        let total: usize = parts.iter().map(|part| part.data.len()).sum();
        let rows_total: usize = parts.iter().map(|part| part.lengths.len()).sum();
        // Filled with the GIL released: the bytes objects are not visible to Python yet.
        let data = PyBytes::new_with(py, total, |buf| {
            py.allow_threads(|| {
                let mut at = 0;
                for part in &parts {
                    buf[at..at + part.data.len()].copy_from_slice(&part.data);
                    at += part.data.len();
                }
            });
            Ok(())
        })?;
        let lengths = PyBytes::new_with(py, rows_total * 8, |buf| {
            let all = parts.iter().flat_map(|part| &part.lengths);
            for (chunk, &n) in buf.chunks_exact_mut(8).zip(all) {
                chunk.copy_from_slice(&n.to_le_bytes());
            }
            Ok(())
        })?;
        Ok((data, lengths))
    }
}

/// The scanner `name`, registered for exactly `pattern`, or UnsupportedTokenizerError.
fn scanner(py: Python<'_>, name: &str, pattern: &str) -> PyResult<Box<dyn spanners::Spanner>> {
    let registered = spanners::SCANNER_PATTERNS
        .iter()
        .any(|&(scanner, proven)| scanner == name && proven == pattern);
    match spanners::scanner_for_pattern(pattern) {
        Some(spanner) if registered => Ok(spanner),
        _ => Err(ws_error(
            py,
            "UnsupportedTokenizerError",
            format!(
                "the {name} handles only the patterns it was proven equal to, not {}; \
                 use spanner='auto' or spanner='regex'",
                pipeline::py_repr(py, pattern)
            ),
        )),
    }
}

/// UnsupportedTokenizerError: the native regex spanner cannot run this pattern.
fn regex_unsupported(py: Python<'_>, reason: &str) -> PyErr {
    ws_error(
        py,
        "UnsupportedTokenizerError",
        format!("the native regex spanner cannot run this pattern: {reason}"),
    )
}

/// `regex_plan(pattern)`: how the native regex spanner runs an expanded pattern, "dfa" or
/// "backtracking"; UnsupportedTokenizerError if it cannot (the Python spanner is used then).
#[pyfunction]
fn regex_plan(py: Python<'_>, pattern: &str) -> PyResult<&'static str> {
    let spanner = spanners::RegexSpanner::new(pattern).map_err(|e| regex_unsupported(py, &e))?;
    Ok(if spanner.is_planned() {
        "dfa"
    } else {
        "backtracking"
    })
}

/// `regex_split(patterns, texts, sequence=False)`: each text's pieces by the native regex
/// spanner (one expanded pattern), or by the sequence of `patterns`; for the equivalence
/// tests. A text the pattern does not cover gives None.
#[pyfunction]
#[pyo3(signature = (patterns, texts, sequence=false))]
fn regex_split(
    py: Python<'_>,
    patterns: Vec<String>,
    texts: Vec<String>,
    sequence: bool,
) -> PyResult<Vec<Option<Vec<String>>>> {
    type Split =
        Box<dyn Fn(&str, &mut Vec<usize>) -> Result<(), spanners::SplitError> + Send + Sync>;
    let split: Split = if sequence {
        let spanner =
            spanners::RegexSequence::new(&patterns).map_err(|e| regex_unsupported(py, &e))?;
        Box::new(move |text, ends| spanner.split(text, ends))
    } else {
        let [pattern] = patterns.as_slice() else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "regex_split takes one pattern unless sequence=True",
            ));
        };
        let spanner =
            spanners::RegexSpanner::new(pattern).map_err(|e| regex_unsupported(py, &e))?;
        Box::new(move |text, ends| spanner.split(text, ends))
    };
    Ok(py.allow_threads(|| {
        texts
            .iter()
            .map(|text| {
                let mut ends = Vec::new();
                split(text, &mut ends).ok()?;
                let mut start = 0;
                Some(
                    ends.iter()
                        .map(|&end| {
                            let piece = text[start..end].to_owned();
                            start = end;
                            piece
                        })
                        .collect(),
                )
            })
            .collect()
    }))
}

/// `hf_program_spans(steps, texts)`: each text's pieces by the native split program, as the
/// Python `HFSplitSpanner.spans` gives them: `(start, end)` char offsets, or `(start, end,
/// " ")` for a piece after an inserted space; for the equivalence tests. `steps`: per step
/// `None` (`add_prefix_space`) or `(pattern, behavior, invert)`, the pattern expanded (or one a
/// scanner is registered for). UnsupportedTokenizerError if a step cannot run natively.
/// One piece of `hf_program_spans`: char offsets, and the inserted space if any.
type ProgramSpan = (usize, usize, Option<&'static str>);

#[pyfunction]
fn hf_program_spans(
    py: Python<'_>,
    steps: Vec<spanners::hf_program::StepSpec>,
    texts: Vec<String>,
) -> PyResult<Vec<Vec<ProgramSpan>>> {
    let program = spanners::HfProgram::new(&steps).map_err(|e| regex_unsupported(py, &e))?;
    let results = py.allow_threads(|| {
        texts
            .iter()
            .map(|text| {
                let mut pieces = Vec::new();
                program.pieces(text, &mut pieces)?;
                // Byte offsets to char offsets, walking forward (the pieces are in order).
                let (mut byte, mut chars) = (0, 0);
                let mut char_of = |at: usize| {
                    chars += text[byte..at].chars().count();
                    byte = at;
                    chars
                };
                Ok(pieces
                    .iter()
                    .map(|p| (char_of(p.start), char_of(p.end), p.space.then_some(" ")))
                    .collect())
            })
            .collect::<Result<Vec<_>, spanners::SplitError>>()
    });
    results.map_err(|e| match e {
        spanners::SplitError::Engine(message) => ws_error(py, "ComponentError", message),
        spanners::SplitError::Gap(at) => {
            ws_error(py, "ComponentError", format!("no match at byte {at}"))
        }
    })
}

/// `scan(pattern, texts)`: each text cut into pieces by the scanner registered for `pattern`
/// (for the equivalence proofs against the regex); UnsupportedTokenizerError if there is none.
#[pyfunction]
fn scan(py: Python<'_>, pattern: &str, texts: Vec<String>) -> PyResult<Vec<Vec<String>>> {
    let spanner = spanners::scanner_for_pattern(pattern).ok_or_else(|| {
        ws_error(
            py,
            "UnsupportedTokenizerError",
            format!(
                "no native scanner for the pattern {}",
                pipeline::py_repr(py, pattern)
            ),
        )
    })?;
    Ok(py.allow_threads(|| {
        texts
            .iter()
            .map(|text| {
                let mut ends = Vec::new();
                spanner.split(text, &mut ends);
                let mut start = 0;
                ends.iter()
                    .map(|&end| {
                        let piece = text[start..end].to_owned();
                        start = end;
                        piece
                    })
                    .collect()
            })
            .collect()
    }))
}

/// `WordCounter.train`'s result: every token's bytes by id (None for specials), and the merges.
type TrainedPy = (Vec<Option<Py<PyBytes>>>, Vec<(u32, u32, u32)>);

/// The distinct words of a corpus and their counts (`wordsplit.training.native` drives it):
/// texts are counted in parallel by the native scanner of `pattern`, counts from Python added,
/// and `train` learns the merges from the table.
#[pyclass(module = "wordsplit._native", name = "WordCounter")]
struct PyWordCounter {
    table: train::WordTable,
    spanner: Option<Box<dyn spanners::Spanner>>,
    nfc: bool,
    /// The counting pool and its size, made on the first parallel `add_texts` and kept.
    pool: Option<(usize, rayon::ThreadPool)>,
}

#[pymethods]
impl PyWordCounter {
    /// `WordCounter(pattern, normalizer)`: `pattern` None for a table that only takes counts;
    /// else it must have a native scanner. `normalizer` is "none" or "nfc".
    #[new]
    #[pyo3(signature = (pattern=None, normalizer="none"))]
    fn new(py: Python<'_>, pattern: Option<&str>, normalizer: &str) -> PyResult<Self> {
        let spanner = match pattern {
            None => None,
            Some(p) => Some(spanners::scanner_for_pattern(p).ok_or_else(|| {
                ws_error(
                    py,
                    "UnsupportedTokenizerError",
                    format!(
                        "no native scanner for the pattern {}",
                        pipeline::py_repr(py, p)
                    ),
                )
            })?),
        };
        let nfc = match normalizer {
            "none" => false,
            "nfc" => true,
            other => {
                return Err(ws_error(
                    py,
                    "UnsupportedTokenizerError",
                    format!(
                        "the native word counter normalizes with 'none' or 'nfc', not {other:?}"
                    ),
                ))
            }
        };
        Ok(Self {
            table: train::WordTable::default(),
            spanner,
            nfc,
            pool: None,
        })
    }

    /// Count the words of `texts` on `num_threads` threads (None: all cores), at most
    /// `max_words` of them (the first ones, in order; None: all); returns how many were counted.
    #[pyo3(signature = (texts, num_threads=None, max_words=None))]
    fn add_texts(
        &mut self,
        py: Python<'_>,
        texts: Vec<String>,
        num_threads: Option<usize>,
        max_words: Option<u64>,
    ) -> PyResult<u64> {
        let Some(spanner) = self.spanner.as_deref() else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "this WordCounter has no pattern to split texts with",
            ));
        };
        let threads = default_threads(num_threads);
        if threads > 1 && self.pool.as_ref().is_none_or(|(n, _)| *n != threads) {
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .ok()
                .map(|pool| (threads, pool));
        }
        let pool = if threads > 1 {
            self.pool.as_ref().map(|(_, pool)| pool)
        } else {
            None
        };
        let (table, nfc) = (&mut self.table, self.nfc);
        let budget = max_words.unwrap_or(u64::MAX);
        Ok(py.allow_threads(|| train::count_parallel(table, spanner, &texts, nfc, pool, budget)))
    }

    /// Add `(word bytes, count)` items (counts made elsewhere: a Python spanner, another shard).
    fn add_counts(&mut self, items: Vec<(Vec<u8>, u64)>) {
        for (word, count) in items {
            self.table.add(&word, count);
        }
    }

    /// Every `(word bytes, count)`.
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        self.table
            .counts
            .iter()
            .map(|(w, &c)| (PyBytes::new(py, w), c))
            .collect()
    }

    fn __len__(&self) -> usize {
        self.table.counts.len()
    }

    /// Learn merges (HF BpeTrainer's rules, see train.rs): returns `(tokens, merges)` with
    /// `tokens` the bytes of every id (None for the specials) and `merges` (left, right, merged).
    /// `specials` are the specials' byte-level bytes (None when not byte-level text); a merge
    /// that makes one raises ValueError naming its index. `progress(n_tokens)` is called now and then.
    #[pyo3(signature = (vocab_size, specials, min_frequency, max_token_length, progress=None))]
    fn train(
        &self,
        py: Python<'_>,
        vocab_size: usize,
        specials: Vec<Option<Vec<u8>>>,
        min_frequency: u64,
        max_token_length: Option<usize>,
        progress: Option<PyObject>,
    ) -> PyResult<TrainedPy> {
        let opts = train::TrainOptions {
            vocab_size,
            specials,
            min_frequency,
            max_token_length,
        };
        // Words in a fixed order (by bytes): the result does not depend on it, but runs repeat.
        let mut words: Vec<(&[u8], u64)> = self
            .table
            .counts
            .iter()
            .map(|(w, &c)| (&w[..], c))
            .collect();
        words.sort_unstable();
        // The callback, and Ctrl-C, are seen every few hundred merges (with the GIL).
        let mut failed: Option<PyErr> = None;
        let result = py.allow_threads(|| {
            train::train(&words, &opts, |n| {
                Python::with_gil(|py| {
                    let outcome = py.check_signals().and_then(|()| match &progress {
                        Some(callback) => callback.call1(py, (n, vocab_size)).map(|_| ()),
                        None => Ok(()),
                    });
                    match outcome {
                        Ok(()) => true,
                        Err(err) => {
                            failed = Some(err);
                            false
                        }
                    }
                })
            })
        });
        let trained = match result {
            Ok(trained) => trained,
            Err(train::TrainError::Stopped) => {
                return Err(failed.unwrap_or_else(|| {
                    pyo3::exceptions::PyRuntimeError::new_err("training stopped")
                }))
            }
            Err(train::TrainError::MakesSpecial(i)) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "a merge makes the text of special token {i}"
                )))
            }
        };
        let tokens = trained
            .tokens
            .iter()
            .map(|t| t.as_ref().map(|b| PyBytes::new(py, b).unbind()))
            .collect();
        Ok((tokens, trained.merges))
    }
}

/// `rank_pairs(tokens)`: see `train::rank_pairs` (tokens by id, None for ids without bytes).
#[pyfunction]
fn rank_pairs(py: Python<'_>, tokens: Vec<Option<Vec<u8>>>) -> Vec<Option<(u32, u32)>> {
    py.allow_threads(|| {
        let views: Vec<Option<&[u8]>> = tokens.iter().map(|t| t.as_deref()).collect();
        train::rank_pairs(&views)
    })
}

/// `offset_pairs(places, field)`: the `(start, end)` tuples of fields `field` and `field + 1`
/// of the token places `Pipeline.encode_with_offsets` returns (5 little-endian uint64 per
/// token). Adjacent tokens share the int object where one ends and the next starts.
#[pyfunction]
fn offset_pairs<'py>(py: Python<'py>, places: &[u8], field: usize) -> PyResult<Bound<'py, PyList>> {
    let read = |i: usize| {
        let at = 8 * i;
        u64::from_le_bytes(places[at..at + 8].try_into().expect("8 bytes"))
    };
    if field > 3 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "offset_pairs: field {field} has no end field after it (0: bytes, 2: chars)"
        )));
    }
    let count = places.len() / 40;
    let mut pairs = Vec::with_capacity(count);
    let mut last: Option<(u64, Bound<'py, PyAny>)> = None;
    for token in 0..count {
        let (start, end) = (read(5 * token + field), read(5 * token + field + 1));
        let start_int = match &last {
            Some((value, int)) if *value == start => int.clone(),
            _ => start.into_pyobject(py)?.into_any(),
        };
        let end_int = if end == start {
            start_int.clone()
        } else {
            end.into_pyobject(py)?.into_any()
        };
        pairs.push(pyo3::types::PyTuple::new(py, [start_int, end_int.clone()])?);
        last = Some((end, end_int));
    }
    PyList::new(py, pairs)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(offset_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(rank_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(regex_plan, m)?)?;
    m.add_function(wrap_pyfunction!(regex_split, m)?)?;
    m.add_function(wrap_pyfunction!(hf_program_spans, m)?)?;
    m.add_class::<PyTables>()?;
    m.add_class::<PyEncoder>()?;
    m.add_class::<PyPolicy>()?;
    m.add_class::<PyPipeline>()?;
    m.add_class::<PyWordCounter>()?;
    m.add(
        "SCANNERS",
        spanners::SCANNER_PATTERNS
            .iter()
            .map(|&(name, pattern)| (name, pattern))
            .collect::<Vec<_>>(),
    )?;
    m.add("ENCODERS", EncoderKind::NAMES.to_vec())?;
    m.add("ALONE_BELOW_TEXT_BYTES", ALONE_BELOW_TEXT_BYTES)?;
    m.add("ALONE_BELOW_IDS", ALONE_BELOW_IDS)?;
    m.add("UNICODE_VERSION", unicode_tables::UNICODE_VERSION)?;
    Ok(())
}
