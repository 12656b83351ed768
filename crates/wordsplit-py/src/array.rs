//! Token ids as a read-only numpy uint32 array with no Python int per id (tiktoken's
//! `encode_to_numpy`).
//!
//! The array is made through numpy's C API, not by `numpy.asarray` on a buffer object from
//! Python, whose buffer protocol's exports and memoryview are a large share of a call on a
//! short text. Three entries of numpy's API table
//! are all it needs, so they are declared here (their places in the table are fixed since
//! numpy 1.7 and the same in numpy 2).

use std::ffi::{c_int, c_void};
use std::ptr;

use pyo3::exceptions::PyImportError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyCapsule;

/// numpy's `npy_intp`: a pointer-sized signed integer.
type NpyIntp = isize;

/// The places of the entries used, in numpy's `PyArray_API` table.
const PYARRAY_TYPE: usize = 2;
const DESCR_FROM_TYPE: usize = 45;
const NEW_FROM_DESCR: usize = 94;
/// `NPY_UINT`, C's `unsigned int`: 32 bits on every platform the extension builds for.
const NPY_UINT: c_int = 6;

type DescrFromType = unsafe extern "C" fn(c_int) -> *mut ffi::PyObject;
type NewFromDescr = unsafe extern "C" fn(
    *mut ffi::PyTypeObject,
    *mut ffi::PyObject,
    c_int,
    *mut NpyIntp,
    *mut NpyIntp,
    *mut c_void,
    c_int,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// numpy's API table, from the `_ARRAY_API` capsule of its multiarray module (numpy 2's
/// `numpy._core`, numpy 1's `numpy.core`); its address, kept for the process (the capsule
/// is never released).
static API: GILOnceCell<usize> = GILOnceCell::new();

fn api(py: Python<'_>) -> PyResult<*const *const c_void> {
    let table = API.get_or_try_init(py, || -> PyResult<usize> {
        let module = PyModule::import(py, "numpy._core.multiarray")
            .or_else(|_| PyModule::import(py, "numpy.core.multiarray"))
            .map_err(|err| PyImportError::new_err(format!("numpy's C API: {err}")))?;
        let capsule = module.getattr("_ARRAY_API")?.downcast_into::<PyCapsule>()?;
        let table = capsule.pointer() as usize;
        // The table lives inside the capsule: keep the capsule for the process.
        std::mem::forget(capsule);
        Ok(table)
    })?;
    Ok(*table as *const *const c_void)
}

/// The start of numpy's `PyArrayObject_fields`, up to `flags`: the layout numpy's inline
/// accessors (`PyArray_DATA`, `PyArray_CLEARFLAGS`) compile into every extension, the same
/// since numpy 1.7 and in numpy 2.
#[repr(C)]
struct ArrayFields {
    ob_base: ffi::PyObject,
    data: *mut c_void,
    nd: c_int,
    dimensions: *mut NpyIntp,
    strides: *mut NpyIntp,
    base: *mut ffi::PyObject,
    descr: *mut ffi::PyObject,
    flags: c_int,
}

/// `NPY_ARRAY_WRITEABLE`.
const WRITEABLE: c_int = 0x0400;

/// A copy of `ids` as a one-dimensional, read-only uint32 numpy array, in memory numpy
/// allocates (and frees with the array). Fails (an `ImportError`) when numpy cannot be
/// imported.
///
/// numpy's allocator is the C library's `malloc`, which keeps the memory a freed array
/// held for the next, so arrays made and freed in turn fault no pages in again (the
/// extension's own allocator hands freed pages back to the kernel).
pub fn read_only_ids<'py>(py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyAny>> {
    let table = api(py)?;
    let mut dims = [ids.len() as NpyIntp];
    // SAFETY: `table` is numpy's API table (a capsule kept alive for the process), whose
    // entries at these places have these signatures in every numpy release since 1.7. The
    // dtype reference `DescrFromType` returns is stolen by `NewFromDescr`, which allocates a
    // C-ordered array of `dims[0]` u32s (no data given); the copy writes exactly those, and
    // the flags are then cleared of `WRITEABLE` as `PyArray_CLEARFLAGS` does.
    unsafe {
        let entry = |place: usize| *table.add(place);
        let array_type = entry(PYARRAY_TYPE) as *mut ffi::PyTypeObject;
        let descr_from_type: DescrFromType = std::mem::transmute(entry(DESCR_FROM_TYPE));
        let new_from_descr: NewFromDescr = std::mem::transmute(entry(NEW_FROM_DESCR));
        let descr = descr_from_type(NPY_UINT);
        if descr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let array = new_from_descr(
            array_type,
            descr,
            1,
            dims.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
        );
        let array = Bound::from_owned_ptr_or_err(py, array)?;
        let fields = array.as_ptr().cast::<ArrayFields>();
        ptr::copy_nonoverlapping(ids.as_ptr(), (*fields).data.cast::<u32>(), ids.len());
        (*fields).flags &= !WRITEABLE;
        Ok(array)
    }
}
