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
//! idle process still returns it. An operator who sets the delay through mimalloc's own
//! environment variable (`MIMALLOC_PURGE_DELAY`, milliseconds) keeps that value.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long freed memory stays with the process before mimalloc returns it to the kernel:
/// several of the worker's default 1 s cycles.
pub const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v3 `include/mimalloc.h`; the Rust
/// bindings name the options around it but not this one). Checked by the test below against
/// the option's documented default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The names, lower-cased, under which mimalloc reads the purge delay from the environment
/// when it starts (the second one deprecated but still read); it matches them ignoring case.
const PURGE_DELAY_VARIABLES: [&str; 2] = ["mimalloc_purge_delay", "mimalloc_reset_delay"];

/// Whether this process's environment sets mimalloc's purge delay.
fn purge_delay_from_environment() -> bool {
    environment_sets_purge_delay(std::env::vars_os().map(|(name, _)| name))
}

/// Whether the environment whose variable names are `names` sets mimalloc's purge delay.
fn environment_sets_purge_delay(names: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    names.into_iter().any(|name| {
        name.to_str().is_some_and(|name| {
            PURGE_DELAY_VARIABLES
                .iter()
                .any(|variable| name.eq_ignore_ascii_case(variable))
        })
    })
}

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`], unless the environment set it. Call
/// first thing in `main`.
pub fn keep_freed_memory() {
    if purge_delay_from_environment() {
        return;
    }
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
        // The option at this index has mimalloc v3's purge-delay default (1000 ms) until set;
        // when the environment set it, that value stays.
        let from_environment = purge_delay_from_environment();
        let before = purge_delay_ms();
        if !from_environment {
            assert_eq!(before, 1_000);
        }
        keep_freed_memory();
        let expected = if from_environment {
            before
        } else {
            PURGE_DELAY_MS
        };
        assert_eq!(purge_delay_ms(), expected);
    }

    #[test]
    fn an_operators_purge_delay_is_recognised_in_any_case_and_by_its_old_name() {
        let sets = |names: &[&str]| {
            environment_sets_purge_delay(names.iter().map(std::ffi::OsString::from))
        };
        assert!(sets(&["PATH", "MIMALLOC_PURGE_DELAY"]));
        assert!(sets(&["mimalloc_purge_delay"]));
        assert!(sets(&["MIMALLOC_RESET_DELAY"]));
        assert!(!sets(&[
            "PATH",
            "MIMALLOC_PURGE_DECOMMITS",
            "MIMALLOC_PURGE_DELAY_X"
        ]));
    }
}
