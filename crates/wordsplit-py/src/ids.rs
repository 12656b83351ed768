//! Token ids between Python and Rust: result lists that share one Python int per id
//! ([`IdInts`]), and ids read from Python sequences ([`token_id`]).

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering::Relaxed};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::errors::ws_error;

/// Little-endian uint32s from bytes (array('I').tobytes() on every platform we build for).
pub(crate) fn le_u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A Python int per token id, made the first time the id is returned and then shared by every
/// result list: a list of n ids costs n reference increments instead of n allocations (which
/// would be the largest cost of returning ids). Only touched with the GIL held; the atomics are
/// there to make the type `Sync`, not for ordering.
pub(crate) struct IdInts {
    ints: Box<[AtomicPtr<ffi::PyObject>]>,
}

/// How far ahead [`IdInts::list`] asks for an id's slot, and for its int: far enough that the
/// slot is loaded when the int is asked for, and the int when it is taken. The hints cost a
/// few instructions per id, nothing measurable where they are not needed.
const PREFETCH_SLOT: usize = 96;
const PREFETCH_INT: usize = 48;

impl IdInts {
    pub(crate) fn new(n_vocab: usize) -> Self {
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
            wordsplit::tables::prefetch(slot);
        }
        if let Some(slot) = self.ints.get(int_ahead as usize) {
            let obj = slot.load(Relaxed);
            if !obj.is_null() {
                // SAFETY: a stored pointer is a live int (this table holds a reference).
                wordsplit::tables::prefetch(unsafe { &*obj });
            }
        }
    }

    /// `ids` as a Python list.
    ///
    /// On CPython with the GIL the list's item array is built before the list gets it, which
    /// spares `PyList_New(n)`'s zeroing of 8 bytes per id; elsewhere (free-threaded CPython,
    /// whose lists allocate their arrays differently, PyPy, GraalPy) the portable
    /// `PyList_New` + `PyList_SET_ITEM`.
    pub(crate) fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
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
pub(crate) enum IdItem {
    Id(u32),
    /// Negative or beyond u32: outside every vocabulary.
    Outside(String),
}

/// One token id of a Python sequence: an int, or anything with `__index__` (numpy integers).
/// Anything else is a DecodeInputError, worded as the Python engine words it.
pub(crate) fn token_id(item: &Bound<'_, PyAny>) -> PyResult<IdItem> {
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
