//! optics-tests: helpers shared by the end-to-end tests in `tests/e2e/` (which run under the
//! root `optics` package so they can start the real binary).

#![forbid(unsafe_code)]

pub mod bench;
#[cfg(feature = "object-store")]
pub mod faulty_store;
pub mod fixtures;
pub mod reference;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `optics` binary at `binary` with `args` and returns its output.
///
/// # Panics
/// When the binary cannot be started at all (a broken build, not a test failure).
pub fn run_optics(binary: &str, args: &[&str]) -> Output {
    Command::new(binary)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("could not start {binary}: {e}"))
}

/// Parses stdout of a successful run as JSON.
///
/// # Panics
/// When the run failed or stdout is not JSON; the message carries stderr for diagnosis.
pub fn stdout_json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "optics exited with {:?}; stderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// Path of a file under the workspace's `tests/data` directory.
pub fn data_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(relative)
}
