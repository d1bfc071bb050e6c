//! The binary's allocator, shared with the pipeline benchmark (`#[path]`-included there) so
//! that the cycle it measures allocates as the worker does.
//!
//! mimalloc: each compute cycle allocates and frees its snapshots' columns (tens of MB) every
//! second; mimalloc does that faster than glibc's malloc (see Cargo.toml).
//!
//! Its one setting changed here: by default it hands freed memory back to the kernel 1 s after
//! it was freed, which for a cycle every second means the next cycle takes all of it back page
//! by page, each page zeroed by the kernel on first touch (tens of thousands of faults a
//! minute, and the kernel's page clearing up to a fifth of the samples of a benchmark cycle).
//! Held for [`PURGE_DELAY_MS`] instead, the memory a running worker needs stays mapped, and an
//! idle process still returns it.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long freed memory stays with the process before mimalloc returns it to the kernel:
/// several of the worker's default 1 s cycles.
pub const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v3 `include/mimalloc.h`; the Rust
/// bindings name the options around it but not this one). Checked by the test below against
/// the option's documented default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`]. Call first thing in `main`.
pub fn keep_freed_memory() {
    // SAFETY: `mi_option_set` only stores a value in mimalloc's option table (an atomic
    // store); it takes no pointer and is valid at any time, before or after allocation starts.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
    }
}

/// The purge delay mimalloc is using, milliseconds.
#[cfg(test)]
fn purge_delay_ms() -> std::ffi::c_long {
    // SAFETY: as for `mi_option_set`: a read of the option table.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // The option at this index has mimalloc v3's purge-delay default (1000 ms) until set,
        // unless the environment set it when the process started.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(purge_delay_ms(), 1_000);
        }
        keep_freed_memory();
        assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
    }
}
