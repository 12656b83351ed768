//! Prefetch hints: the lookups ask for the cache lines they will read before they read them.

/// Asks the CPU to start loading the cache line holding `value` (a hint: no effect on
/// what the program computes).
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_address(value as *const T);
}

/// [`prefetch`] of an address that need not point at anything.
#[inline(always)]
pub fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; SSE is part of
    // the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as on x86-64, `prfm` reads nothing the program sees and cannot fault. (The
    // intrinsic, `_prefetch`, is not stable Rust; the instruction is in every aarch64 CPU.)
    unsafe {
        std::arch::asm!(
            "prfm pldl1keep, [{address}]",
            address = in(reg) address,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = address;
}
