//! Zeroed tables on 2 MiB pages: the large tables read at random, one line per piece (the
//! token index's slots, the piece cache), where 4 KiB pages cost a TLB miss on most lookups
//! of text not seen before (a 2 MB table spans 512 such pages, more than the CPU's first-level
//! TLB holds). On Linux the memory is mapped 2 MiB-aligned and marked `MADV_HUGEPAGE` before
//! it is first touched, which is what the kernel's `madvise` policy for transparent huge
//! pages (the common default) asks for; a part of a table smaller than 2 MiB past its last
//! 2 MiB boundary stays on ordinary pages, so no memory is spent on padding. Elsewhere (and
//! where the kernel has no huge pages) it is ordinary zeroed memory.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A type whose all-zero bytes are a valid value (integers and arrays of them).
///
/// # Safety
/// Every field of an implementing type must accept the all-zero bit pattern.
pub(crate) unsafe trait Zeroable: Copy {}

// SAFETY: integers.
unsafe impl Zeroable for u8 {}
// SAFETY: integers.
unsafe impl Zeroable for u64 {}
// SAFETY: arrays of zeroable values.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}

/// The huge page size of x86-64 and aarch64 Linux.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// A fixed-length slice of zero-initialised `T`, on huge pages where the OS gives them.
pub(crate) struct HugeSlice<T: Zeroable> {
    ptr: NonNull<T>,
    len: usize,
    /// Whether the memory came from the global allocator ([`Self::zeroed_ordinary`]).
    ordinary: bool,
}

// SAFETY: the slice owns its memory, as a `Box<[T]>` does.
unsafe impl<T: Zeroable + Send> Send for HugeSlice<T> {}
// SAFETY: shared access only reads, as through a `&[T]`.
unsafe impl<T: Zeroable + Sync> Sync for HugeSlice<T> {}

impl<T: Zeroable> HugeSlice<T> {
    /// `len` zeroed values. Pages are not touched here: a table that stays mostly empty
    /// costs only the pages written.
    pub fn zeroed(len: usize) -> Self {
        Self::new(len, false)
    }

    /// `len` zeroed values from the global allocator, on ordinary pages: for a table made
    /// often and mostly left small (a piece cache's first wide table and its table of long
    /// pieces, one per thread, vocabulary and encoder), where the allocator's recycled memory
    /// costs fewer page faults than a fresh mapping.
    pub fn zeroed_ordinary(len: usize) -> Self {
        Self::new(len, true)
    }

    fn new(len: usize, ordinary: bool) -> Self {
        let bytes = std::mem::size_of::<T>()
            .checked_mul(len)
            .expect("table size overflows usize");
        if bytes == 0 {
            return Self {
                ptr: NonNull::dangling(),
                len,
                ordinary,
            };
        }
        let align = std::mem::align_of::<T>();
        let ptr = if ordinary {
            alloc_zeroed(bytes, align)
        } else {
            map_zeroed(bytes, align)
        };
        Self {
            ptr: ptr.cast::<T>(),
            len,
            ordinary,
        }
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<T>() * self.len
    }
}

impl<T: Zeroable> Deref for HugeSlice<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised values (zeroed, then written through
        // `deref_mut` only), alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> DerefMut for HugeSlice<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        let bytes = self.bytes();
        let (ptr, align) = (self.ptr.cast::<u8>(), std::mem::align_of::<T>());
        if bytes != 0 {
            // SAFETY: allocated by `alloc_zeroed` or mapped by `map_zeroed` with these sizes
            // (as `ordinary` says), and not used after this.
            unsafe {
                if self.ordinary {
                    dealloc(ptr, bytes, align);
                } else {
                    unmap(ptr, bytes, align);
                }
            }
        }
    }
}

/// `bytes` (non-zero) of zeroed memory aligned to 2 MiB, marked for huge pages; the part
/// of the mapping past the last page of `bytes` is unmapped again.
#[cfg(target_os = "linux")]
fn map_zeroed(bytes: usize, _align: usize) -> NonNull<u8> {
    let span = mapped_len(bytes);
    let padded = span + HUGE_PAGE;
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing; the
    // result is checked before use.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            padded,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        std::alloc::handle_alloc_error(
            std::alloc::Layout::from_size_align(bytes, HUGE_PAGE).expect("a valid layout"),
        );
    }
    let base = base as usize;
    let start = base.next_multiple_of(HUGE_PAGE);
    // SAFETY: both ranges lie in the mapping just made and are not used: the part before
    // the first 2 MiB boundary, and the part after the table's last page.
    unsafe {
        if start > base {
            libc::munmap(base as *mut libc::c_void, start - base);
        }
        let end = start + span;
        if base + padded > end {
            libc::munmap(end as *mut libc::c_void, base + padded - end);
        }
        // A hint: where the kernel has no transparent huge pages this fails and the
        // table is on ordinary pages, which is still correct.
        libc::madvise(start as *mut libc::c_void, span, libc::MADV_HUGEPAGE);
    }
    NonNull::new(start as *mut u8).expect("mmap does not map address 0")
}

/// `bytes` rounded up to whole 4 KiB pages.
#[cfg(target_os = "linux")]
fn mapped_len(bytes: usize) -> usize {
    bytes.next_multiple_of(4096)
}

#[cfg(target_os = "linux")]
unsafe fn unmap(ptr: NonNull<u8>, bytes: usize, _align: usize) {
    libc::munmap(ptr.as_ptr().cast(), mapped_len(bytes));
}

fn layout(bytes: usize, align: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(bytes, align).expect("a valid layout")
}

/// `bytes` (non-zero) of zeroed memory from the global allocator.
fn alloc_zeroed(bytes: usize, align: usize) -> NonNull<u8> {
    let layout = layout(bytes, align);
    // SAFETY: `layout` has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

unsafe fn dealloc(ptr: NonNull<u8>, bytes: usize, align: usize) {
    std::alloc::dealloc(ptr.as_ptr(), layout(bytes, align));
}

/// Without huge pages: memory from the global allocator.
#[cfg(not(target_os = "linux"))]
fn map_zeroed(bytes: usize, align: usize) -> NonNull<u8> {
    alloc_zeroed(bytes, align)
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(ptr: NonNull<u8>, bytes: usize, align: usize) {
    dealloc(ptr, bytes, align);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_slices_are_zeroed_writable_and_aligned() {
        for len in [0, 1, 511, 4096, (3 << 20) / 8 + 5] {
            let mut table = HugeSlice::<u64>::zeroed(len);
            assert_eq!(table.len(), len);
            assert!(table.iter().all(|&w| w == 0));
            for (i, w) in table.iter_mut().enumerate() {
                *w = i as u64;
            }
            assert!(table.iter().enumerate().all(|(i, &w)| w == i as u64));
            #[cfg(target_os = "linux")]
            if len != 0 {
                assert_eq!(table.as_ptr() as usize % HUGE_PAGE, 0);
            }
        }
        let mut ordinary = HugeSlice::<u64>::zeroed_ordinary(1000);
        assert!(ordinary.iter().all(|&w| w == 0));
        ordinary[999] = 7;
        assert_eq!(ordinary.iter().sum::<u64>(), 7);
        let pairs = HugeSlice::<[u8; 2]>::zeroed(3);
        assert_eq!(&pairs[..], &[[0, 0]; 3]);
    }
}
