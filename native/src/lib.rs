//! `wordsplit._native`: the Rust core of wordsplit, and its PyO3 glue (this file only).
//!
//! The parts mirror the Python package under the same names: `vocab` (the shared tables),
//! `encoders` (buffer-sweep, heap-merge, backtrack), `spanners` (hand-written scanners) and
//! `pipeline` (the whole encode in one call). Errors become the Python exception classes of
//! `wordsplit.errors`. Work on text or id lists runs with the GIL released; batches run on
//! native threads.

pub mod encoders;
pub mod pipeline;
pub mod spanners;
pub mod unicode_tables;
pub mod vocab;

use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyList, PyString};

use encoders::{encode_piece, EncoderKind};
use pipeline::{Disallowed, Literal, Pipeline, SpecialPolicy};
use vocab::VocabTables;

/// mimalloc for every Rust allocation of the extension (see Cargo.toml for why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Work through items `0..count` on this thread and `threads - 1` helpers of the shared pool,
/// largest first (by `size`, so that the last items taken are small and no thread waits long
/// for another at the end), turn each result into its final form with `keep` on this thread,
/// and return those in item order, or the first error `keep` gave (in the order results
/// finish). When the sizes add up to less than `alone_below`, this thread works alone: a
/// helper that sleeps takes 50–300 µs to wake here (a virtual machine), more than it would save.
///
/// This thread takes items too, and runs `keep` on the helpers' results between two items of
/// its own: `keep` may need the GIL (building Python objects, which only one thread can do),
/// and this way that work overlaps the helpers' instead of waiting for the last item. The GIL
/// is released while this thread works or waits. Once all items are taken, this thread waits
/// for the helpers' last results by spinning (see [`receive`]).
fn run_shared<R: Send, T>(
    py: Python<'_>,
    count: usize,
    threads: usize,
    size: impl Fn(usize) -> usize,
    alone_below: usize,
    work: impl Fn(usize) -> R + Sync,
    mut keep: impl FnMut(R) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    let mut kept: Vec<Option<T>> = (0..count).map(|_| None).collect();
    let mut first_error = None;
    let mut store = |i: usize, result: R| {
        if first_error.is_none() {
            match keep(result) {
                Ok(value) => kept[i] = Some(value),
                Err(err) => first_error = Some(err),
            }
        }
    };
    let small = (0..count).map(&size).sum::<usize>() < alone_below;
    let threads = if small {
        1
    } else {
        threads.clamp(1, count.max(1))
    };
    let helpers = helper_pool(threads - 1);
    let helper_count = helpers.as_ref().map_or(0, |_| threads - 1);
    let mut order: Vec<usize> = (0..count).collect();
    if helper_count > 0 {
        order.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    let receiver = Mutex::new(receiver); // a &Mutex may cross into allow_threads
    let helper_senders: Vec<_> = (0..helper_count).map(|_| sender.clone()).collect();
    let next = AtomicUsize::new(0);
    let running = AtomicUsize::new(0); // helpers between the start and the end of their job
    let (next, order, work, running) = (&next, &order, &work, &running);
    let work_here = move || {
        loop {
            while let Ok((i, result)) = receiver.lock().expect("one receiver").try_recv() {
                store(i, result);
            }
            let Some(&i) = order.get(next.fetch_add(1, Relaxed)) else {
                break;
            };
            store(i, py.allow_threads(|| work(i)));
        }
        drop(sender); // the helpers hold the last senders: the loop below ends with them
        let wait = || receive(&receiver.lock().expect("one receiver"), running);
        while let Ok((i, result)) = py.allow_threads(wait) {
            store(i, result);
        }
    };
    match &helpers {
        None => work_here(),
        Some(pool) => pool.in_place_scope(|scope| {
            for sender in helper_senders {
                scope.spawn(move |_| {
                    running.fetch_add(1, Relaxed);
                    while let Some(&i) = order.get(next.fetch_add(1, Relaxed)) {
                        if sender.send((i, work(i))).is_err() {
                            break;
                        }
                    }
                    // Hang up, then leave `running`: a waiter that sees 0 blocks in `recv`, which
                    // the hang-up ends (`running` is only a hint for spinning; the channel
                    // carries the results and the hang-up).
                    drop(sender);
                    running.fetch_sub(1, Relaxed);
                });
            }
            work_here();
        }),
    }
    match first_error {
        Some(err) => Err(err),
        None => Ok(kept
            .into_iter()
            .map(|value| value.expect("every item was kept"))
            .collect()),
    }
}

/// Batches smaller than these (bytes of text to encode, ids to decode: about 0.3 ms of work
/// on one thread) are not worth waking a helper for.
const ALONE_BELOW_TEXT_BYTES: usize = 32 * 1024;
const ALONE_BELOW_IDS: usize = 16 * 1024;

/// How long the calling thread spins for a helper's result before it sleeps.
const SPIN_LIMIT: std::time::Duration = std::time::Duration::from_millis(1);

/// The next message from the helpers, or `Err` once they have all hung up.
///
/// While a helper is working (`running` > 0) its result is due within one item, so this spins
/// for up to [`SPIN_LIMIT`] before it sleeps: waking a thread that sleeps costs 50–300 µs on a
/// virtual machine (measured here), a real share of a batch of a few milliseconds. While no
/// helper has started yet it sleeps at once: a waking helper may need the CPU this thread
/// would spin on.
fn receive<T>(receiver: &Receiver<T>, running: &AtomicUsize) -> Result<T, RecvError> {
    let deadline = Instant::now() + SPIN_LIMIT;
    loop {
        match receiver.try_recv() {
            Ok(message) => return Ok(message),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) if running.load(Relaxed) > 0 && Instant::now() < deadline => {
                std::hint::spin_loop()
            }
            Err(TryRecvError::Empty) => return receiver.recv(),
        }
    }
}

/// The shared pool of helper threads, with at least `helpers` threads, or None when none are
/// wanted or the OS refuses threads (the caller then works alone).
///
/// One pool for the process, grown to the largest count asked for: its threads keep their
/// per-thread caches (merged pieces) from one batch call to the next, as the calling thread's
/// do for single encodes. A call uses only as many of them as it spawns jobs for. After a
/// `fork` the pool's threads do not exist in the child, so a child builds its own.
fn helper_pool(helpers: usize) -> Option<Arc<rayon::ThreadPool>> {
    struct Shared {
        pid: u32,
        size: usize,
        pool: Arc<rayon::ThreadPool>,
    }
    static POOL: Mutex<Option<Shared>> = Mutex::new(None);
    if helpers == 0 {
        return None;
    }
    let mut shared = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let pid = std::process::id();
    let mut size = helpers;
    if let Some(current) = shared.take() {
        if current.pid != pid {
            // Inherited through fork: its threads are not in this process, and dropping it
            // would wait on them.
            std::mem::forget(current.pool);
        } else if current.size >= helpers {
            let pool = current.pool.clone();
            *shared = Some(current);
            return Some(pool);
        } else {
            size = helpers.max(current.size); // the smaller pool ends once its jobs are done
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(size)
        .thread_name(|i| format!("wordsplit-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    *shared = Some(Shared {
        pid,
        size,
        pool: pool.clone(),
    });
    Some(pool)
}

/// Little-endian uint32s from bytes (array('I').tobytes() on every platform we build for).
fn le_u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn default_threads(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// An instance of a `wordsplit.errors` class, so both backends raise the same exceptions.
fn ws_error(py: Python<'_>, class: &str, message: String) -> PyErr {
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

    /// `ids` as a Python list.
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
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

/// Token ids from a Python list of ints (read in place) or any other iterable of ints.
/// TypeError for a non-int, OverflowError for an int that is not a u32 (the Python side then
/// names the offending id).
fn token_ids(ids: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let Ok(list) = ids.downcast::<PyList>() else {
        return ids.extract();
    };
    let mut out = Vec::with_capacity(list.len());
    for i in 0..list.len() {
        // SAFETY: GIL held; `i` is below the list's length, read just now, and nothing here
        // runs Python code that could shrink the list. The item is borrowed, not stored.
        let item = unsafe { ffi::PyList_GET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t) };
        if unsafe { ffi::PyLong_Check(item) } == 0 {
            let item = unsafe { Bound::from_borrowed_ptr(ids.py(), item) };
            return Err(PyTypeError::new_err(format!(
                "token ids are ints, got {}",
                item.get_type().name()?
            )));
        }
        let value = unsafe { ffi::PyLong_AsLong(item) };
        match u32::try_from(value) {
            Ok(id) if !(value == -1 && PyErr::occurred(ids.py())) => out.push(id),
            _ => {
                let _ = PyErr::take(ids.py());
                return Err(PyOverflowError::new_err(format!(
                    "token id {value} out of range"
                )));
            }
        }
    }
    Ok(out)
}

/// The vocabulary tables shared by every native encoder of one vocabulary.
#[pyclass(frozen, module = "wordsplit._native", name = "Tables")]
struct PyTables {
    inner: Arc<VocabTables>,
}

#[pymethods]
impl PyTables {
    /// Tables(blob, ids, lengths, is_bpe, n_vocab, merges, whole_piece_lookup): `blob` holds
    /// the bytes of tokens `ids` of `lengths` concatenated (both little-endian uint32 bytes);
    /// `is_bpe` (bytes of 0/1) tells BPE tokens from special/added literals; `merges` is
    /// [(left, right, rank)] or None.
    #[new]
    #[pyo3(signature = (blob, ids, lengths, is_bpe, n_vocab, merges, whole_piece_lookup))]
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
    ) -> PyResult<Self> {
        let (ids, lengths) = (le_u32s(ids), le_u32s(lengths));
        let is_bpe: Vec<bool> = is_bpe.iter().map(|&b| b != 0).collect();
        let tables = py
            .allow_threads(|| {
                VocabTables::new(
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
        })
    }

    /// The bytes of `ids`, concatenated; UnknownTokenError names the first bad id.
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.decoded(py, ids)?))
    }

    /// The text of `ids`: their bytes as UTF-8, invalid sequences replaced by U+FFFD exactly
    /// as Python's `bytes.decode("utf-8", "replace")` does (it is CPython's decoder), without
    /// an intermediate bytes object.
    fn decode_text<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        let bytes = self.decoded(py, ids)?;
        // CPython's own decoder, straight from our buffer: one pass over the bytes, and its
        // "replace" is exactly `bytes.decode("utf-8", "replace")`.
        // SAFETY: the pointer and length describe `bytes`, alive for the call; the GIL is held.
        unsafe {
            let text = ffi::PyUnicode_DecodeUTF8(
                bytes.as_ptr().cast(),
                bytes.len() as ffi::Py_ssize_t,
                c"replace".as_ptr(),
            );
            Ok(Bound::from_owned_ptr_or_err(py, text)?.downcast_into_unchecked())
        }
    }

    /// Decode many id lists on native threads: a list of bytes.
    #[pyo3(signature = (batch, num_threads=None))]
    fn decode_batch_bytes<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<Vec<u32>>,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let tables = &self.inner;
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
            |result| match result {
                Ok(bytes) => Ok(PyBytes::new(py, &bytes)),
                Err(id) => Err(unknown_token(py, id)),
            },
        )
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }
}

impl PyTables {
    /// The bytes of the ids in the Python sequence `ids`, decoded with the GIL released.
    fn decoded(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        let ids = token_ids(ids)?;
        let tables = &self.inner;
        py.allow_threads(|| {
            let mut out = Vec::new();
            tables.decode_into(&ids, &mut out).map(|_| out)
        })
        .map_err(|id| unknown_token(py, id))
    }
}

fn unknown_token(py: Python<'_>, id: u32) -> PyErr {
    ws_error(
        py,
        "UnknownTokenError",
        format!("token id {id} is not in the vocabulary"),
    )
}

/// A native span encoder: `Encoder(tables, name)` with name in buffer-sweep, heap-merge, backtrack.
#[pyclass(frozen, module = "wordsplit._native", name = "Encoder")]
struct PyEncoder {
    tables: Arc<VocabTables>,
    kind: EncoderKind,
}

#[pymethods]
impl PyEncoder {
    #[new]
    fn new(py: Python<'_>, tables: &PyTables, name: &str) -> PyResult<Self> {
        let kind = EncoderKind::from_name(name).ok_or_else(|| {
            ws_error(
                py,
                "UnknownComponentError",
                format!(
                    "unknown native encoder {name:?}; known: {}",
                    EncoderKind::NAMES.join(", ")
                ),
            )
        })?;
        let tables = tables.inner.clone();
        if kind == EncoderKind::Backtrack {
            let ready =
                py.allow_threads(|| tables.backtrack_tables().map(|_| ()).map_err(str::to_owned));
            ready.map_err(|e| ws_error(py, "UnsupportedTokenizerError", e))?;
        }
        Ok(Self { tables, kind })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The ids of one piece.
    fn encode_piece(&self, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::with_capacity(piece.len() / 3 + 1);
        encode_piece(self.kind, &self.tables, piece, &mut out);
        out
    }

    /// The ids of many pieces, concatenated, in one call with the GIL released.
    fn encode_pieces<'py>(
        &self,
        py: Python<'py>,
        pieces: Vec<Vec<u8>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| {
            let mut out = Vec::with_capacity(pieces.len() + pieces.len() / 2);
            for piece in &pieces {
                encode_piece(self.kind, &self.tables, piece, &mut out);
            }
            out
        });
        PyList::new(py, ids)
    }
}

/// A resolved special-token policy for one [`PyPipeline`], cached by the Python side.
#[pyclass(frozen, module = "wordsplit._native", name = "Policy")]
struct PyPolicy {
    inner: SpecialPolicy,
}

/// The whole encode in one call: `Pipeline(tables, encoder, pattern, literals, nfc)`.
///
/// `literals` is `[(text, id, special)]`. Raises UnsupportedTokenizerError when no native
/// scanner is registered for `pattern` (the Python side then uses its regex spanner).
#[pyclass(frozen, module = "wordsplit._native", name = "Pipeline")]
struct PyPipeline {
    inner: Pipeline,
    ints: IdInts,
}

impl PyPipeline {
    fn run(&self, text: &str, policy: &SpecialPolicy) -> Result<Vec<u32>, Disallowed> {
        let mut out = Vec::with_capacity(text.len() / 3 + 4);
        self.inner.encode(text, policy, &mut out)?;
        Ok(out)
    }

    /// Encode `texts` with [`run_shared`]: each text's ids, made into its result by `keep` on
    /// this thread, in text order (or the first error).
    fn run_batch<T>(
        &self,
        py: Python<'_>,
        texts: &[PyBackedStr],
        policy: &SpecialPolicy,
        num_threads: Option<usize>,
        mut keep: impl FnMut(Vec<u32>) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let size = |i: usize| texts[i].len();
        run_shared(
            py,
            texts.len(),
            default_threads(num_threads),
            size,
            ALONE_BELOW_TEXT_BYTES,
            |i| self.run(&texts[i], policy),
            |result| keep(result.map_err(|d| disallowed_error(py, d))?),
        )
    }
}

fn disallowed_error(py: Python<'_>, d: Disallowed) -> PyErr {
    ws_error(
        py,
        "DisallowedSpecialError",
        format!(
            "text contains the special token {:?}, which is disallowed",
            d.0
        ),
    )
}

#[pymethods]
impl PyPipeline {
    #[new]
    fn new(
        py: Python<'_>,
        tables: &PyTables,
        encoder: &str,
        pattern: &str,
        literals: Vec<(String, u32, bool)>,
        nfc: bool,
    ) -> PyResult<Self> {
        let kind = PyEncoder::new(py, tables, encoder)?.kind;
        let spanner = scanner(py, pattern)?;
        let literals = literals
            .into_iter()
            .map(|(text, id, special)| Literal { text, id, special })
            .collect();
        let inner = Pipeline::new(tables.inner.clone(), kind, spanner, literals, nfc)
            .map_err(|e| ws_error(py, "VocabFormatError", e))?;
        Ok(Self {
            ints: IdInts::new(inner.tables.n_vocab()),
            inner,
        })
    }

    /// The scanner's registry name.
    #[getter]
    fn spanner(&self) -> &'static str {
        self.inner.spanner.name()
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

    /// The ids of `text` under `policy`, with the GIL released.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        policy: &PyPolicy,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .allow_threads(|| self.run(text, &policy.inner))
            .map_err(|d| disallowed_error(py, d))?;
        self.ints.list(py, &ids)
    }

    /// The number of tokens of `text`, without building the list.
    fn count(&self, py: Python<'_>, text: &str, policy: &PyPolicy) -> PyResult<usize> {
        py.allow_threads(|| self.run(text, &policy.inner))
            .map(|ids| ids.len())
            .map_err(|d| disallowed_error(py, d))
    }

    /// Encode many texts on native threads: a list of id lists.
    #[pyo3(signature = (texts, policy, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.run_batch(py, &texts, &policy.inner, num_threads, |ids| {
            self.ints.list(py, &ids)
        })
    }

    /// Encode many texts into one flat buffer: `(ids, offsets)` as little-endian uint32 and
    /// uint64 bytes; text i has ids[offsets[i]:offsets[i + 1]]. No Python int per token.
    #[pyo3(signature = (texts, policy, num_threads=None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        policy: &PyPolicy,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let parts = self.run_batch(py, &texts, &policy.inner, num_threads, Ok)?;
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
}

/// The scanner registered for exactly `pattern`, or UnsupportedTokenizerError.
fn scanner(py: Python<'_>, pattern: &str) -> PyResult<Box<dyn spanners::Spanner>> {
    spanners::scanner_for_pattern(pattern).ok_or_else(|| {
        ws_error(
            py,
            "UnsupportedTokenizerError",
            format!("no native scanner for the pattern {pattern:?}"),
        )
    })
}

/// `scan(pattern, texts)`: each text cut into pieces by the scanner registered for `pattern`
/// (for the equivalence proofs against the regex); UnsupportedTokenizerError if there is none.
#[pyfunction]
fn scan(py: Python<'_>, pattern: &str, texts: Vec<String>) -> PyResult<Vec<Vec<String>>> {
    let spanner = scanner(py, pattern)?;
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_class::<PyTables>()?;
    m.add_class::<PyEncoder>()?;
    m.add_class::<PyPolicy>()?;
    m.add_class::<PyPipeline>()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receive_returns_messages_then_hangs_up() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let running = AtomicUsize::new(0);
        sender.send(1).unwrap();
        sender.send(2).unwrap();
        drop(sender);
        assert_eq!(receive(&receiver, &running), Ok(1));
        assert_eq!(receive(&receiver, &running), Ok(2));
        assert_eq!(receive(&receiver, &running), Err(RecvError));
    }

    /// CPU time of the calling thread.
    fn thread_cpu_time() -> std::time::Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) },
            0
        );
        std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// Waits for a result that a helper thread sends after `delay`, with `running` helpers;
    /// returns the CPU time the wait took.
    fn wait_cpu_time(delay: std::time::Duration, running: usize) -> std::time::Duration {
        let (sender, receiver) = std::sync::mpsc::channel();
        let running = AtomicUsize::new(running);
        let helper = std::thread::spawn(move || {
            std::thread::sleep(delay);
            sender.send("late").unwrap();
        });
        let start = thread_cpu_time();
        assert_eq!(receive(&receiver, &running), Ok("late"));
        let spent = thread_cpu_time() - start;
        helper.join().unwrap();
        assert_eq!(receive(&receiver, &running), Err(RecvError));
        spent
    }

    #[test]
    fn receive_spins_only_briefly_and_only_for_a_running_helper() {
        // A running helper that answers long after SPIN_LIMIT: the wait spins at most about
        // SPIN_LIMIT, then sleeps (a spin to the end would cost ~20 × SPIN_LIMIT).
        let wait = SPIN_LIMIT * 20;
        assert!(wait_cpu_time(wait, 1) < SPIN_LIMIT * 5);
        // No helper running yet: no spin at all.
        assert!(wait_cpu_time(wait, 0) < SPIN_LIMIT / 2);
    }
}
