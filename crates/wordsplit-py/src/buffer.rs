//! `IdBuffer`: token ids that stay in the Vec the encoder wrote, exported through Python's
//! buffer protocol as a read-only, one-dimensional uint32 array (format `"I"`), so that
//! `numpy.frombuffer` / `numpy.asarray` wrap them without a copy and without a Python int per
//! id (tiktoken's `encode_to_numpy`).

use std::ffi::{c_int, c_void};
use std::ptr;

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;

/// Ids owned by Rust, readable as a buffer (`memoryview(buf)`, `numpy.asarray(buf)`).
#[pyclass(frozen, module = "wordsplit._native", name = "IdBuffer")]
pub struct IdBuffer {
    ids: Vec<u32>,
    /// The buffer's shape and strides: the protocol hands out pointers to them, so they live
    /// in the object, beside the ids.
    shape: [ffi::Py_ssize_t; 1],
    strides: [ffi::Py_ssize_t; 1],
}

impl IdBuffer {
    pub fn new(ids: Vec<u32>) -> Self {
        let len = ids.len() as ffi::Py_ssize_t;
        Self {
            ids,
            shape: [len],
            strides: [std::mem::size_of::<u32>() as ffi::Py_ssize_t],
        }
    }
}

#[pymethods]
impl IdBuffer {
    fn __len__(&self) -> usize {
        self.ids.len()
    }

    /// Fill `view` with the ids: read-only, C-contiguous, uint32 (`"I"`), one dimension.
    ///
    /// # Safety
    /// Called by CPython with a valid `view` to fill (the buffer protocol's contract).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no Py_buffer to fill"));
        }
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("token ids are read-only"));
        }
        let this = slf.get();
        let view = &mut *view;
        view.buf = this.ids.as_ptr() as *mut c_void;
        view.len = (this.ids.len() * std::mem::size_of::<u32>()) as ffi::Py_ssize_t;
        view.readonly = 1;
        view.itemsize = std::mem::size_of::<u32>() as ffi::Py_ssize_t;
        view.format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
            c"I".as_ptr() as *mut _
        } else {
            ptr::null_mut()
        };
        view.ndim = 1;
        view.shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
            this.shape.as_ptr() as *mut _
        } else {
            ptr::null_mut()
        };
        view.strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
            this.strides.as_ptr() as *mut _
        } else {
            ptr::null_mut()
        };
        view.suboffsets = ptr::null_mut();
        view.internal = ptr::null_mut();
        // The view keeps the object (and so the ids) alive until it is released.
        view.obj = slf.into_any().into_ptr();
        Ok(())
    }
}
