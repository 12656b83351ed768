//! Token ids as a read-only numpy uint32 array that owns a Vec of them: no copy into numpy's
//! own memory and no Python int per id (tiktoken's `encode_to_numpy`).
//!
//! The array is made through numpy's C API, not by `numpy.asarray` on a buffer object from
//! Python: that took 0.25 µs of a 1.1 µs call for a short text (the buffer protocol's
//! exports and a memoryview), against about 0.1 µs here. Four entries of numpy's API table
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
const SET_BASE_OBJECT: usize = 282;
/// `NPY_UINT`, C's `unsigned int`: 32 bits on every platform the extension builds for.
const NPY_UINT: c_int = 6;
/// `NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED`, without `NPY_ARRAY_WRITEABLE`: read-only.
const READ_ONLY_FLAGS: c_int = 0x0001 | 0x0100;

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
type SetBaseObject = unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::PyObject) -> c_int;

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

/// The owner of an array's ids: the array's base object, which frees them with it.
#[pyclass(frozen, module = "wordsplit._native", name = "IdsOwner")]
pub struct IdsOwner {
    _ids: Vec<u32>,
}

/// `ids` as a one-dimensional, read-only uint32 numpy array whose base object owns them.
/// Fails (an `ImportError`) when numpy cannot be imported.
pub fn read_only_ids(py: Python<'_>, mut ids: Vec<u32>) -> PyResult<Bound<'_, PyAny>> {
    let table = api(py)?;
    let mut dims = [ids.len() as NpyIntp];
    // The Vec's buffer does not move when the Vec moves into its owner.
    let data = ids.as_mut_ptr().cast::<c_void>();
    let owner = Bound::new(py, IdsOwner { _ids: ids })?;
    // SAFETY: `table` is numpy's API table (a capsule kept alive for the process), whose
    // entries at these places have these signatures in every numpy release since 1.7. The
    // dtype reference `DescrFromType` returns is stolen by `NewFromDescr`; the array gets
    // `data` (valid, aligned, `dims[0]` u32s owned by `owner`) without a copy, read-only;
    // `SetBaseObject` steals the reference to `owner` it is given, so the array keeps the
    // ids alive and frees them with itself.
    unsafe {
        let entry = |place: usize| *table.add(place);
        let array_type = entry(PYARRAY_TYPE) as *mut ffi::PyTypeObject;
        let descr_from_type: DescrFromType = std::mem::transmute(entry(DESCR_FROM_TYPE));
        let new_from_descr: NewFromDescr = std::mem::transmute(entry(NEW_FROM_DESCR));
        let set_base_object: SetBaseObject = std::mem::transmute(entry(SET_BASE_OBJECT));
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
            data,
            READ_ONLY_FLAGS,
            ptr::null_mut(),
        );
        let array = Bound::from_owned_ptr_or_err(py, array)?;
        if set_base_object(array.as_ptr(), owner.into_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(array)
    }
}
