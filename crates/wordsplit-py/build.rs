//! Exposes PyO3's interpreter cfgs (`Py_GIL_DISABLED`, `PyPy`, ...) to this crate, so code that
//! relies on CPython's object layout with the GIL can be compiled only there.
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
