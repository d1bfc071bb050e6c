//! Faults of the process itself: `optics run` killed with SIGKILL at several points of its
//! publication cycle and started again on the same data directory. Every restart must find a
//! store it can serve from — every published snapshot a whole Parquet file (its magic at both
//! ends), no half-written file under a published name — and answer the chain and the token
//! check as before.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{Running, TempDir, get, optics_run, start_listening};

/// Parquet's magic, at the start and the end of every whole file.
const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// Every published snapshot file under `dir` (`v-<version>.parquet`).
fn published_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            published_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
}

/// Panics naming the first published snapshot that is not a whole Parquet file.
fn assert_whole_snapshots(data_dir: &Path) -> usize {
    let mut files = Vec::new();
    published_files(&data_dir.join("snapshots"), &mut files);
    for file in &files {
        let bytes = std::fs::read(file).expect("read snapshot");
        assert!(
            bytes.len() >= 12
                && &bytes[..4] == PARQUET_MAGIC
                && &bytes[bytes.len() - 4..] == PARQUET_MAGIC,
            "{} is not a whole Parquet file ({} bytes)",
            file.display(),
            bytes.len()
        );
    }
    files.len()
}

/// Polls `/chain/SPX` (a cash index, one of the first three underlyings) until it answers 200
/// (the store was loaded and the token is valid).
fn wait_for_chain(address: &str, token: &str, within: Duration) {
    let started = Instant::now();
    loop {
        let (status, body) = get(address, "/api/mcp/data/chain/SPX", Some(token));
        if status == 200 {
            assert_eq!(body["success"], true);
            return;
        }
        assert!(
            started.elapsed() < within,
            "no chain within {within:?}: {status} {body}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_kill_at_any_point_of_a_cycle_leaves_a_store_that_serves() {
    let dir = TempDir::new("faults");
    let (first, address, _) = start_listening(optics_run(dir.path(), 3));
    let token = std::fs::read_to_string(dir.path().join("api-token")).expect("token");
    let token = token.trim().to_owned();
    wait_for_chain(&address, &token, Duration::from_secs(120));
    // Cycles run every 500 ms: kills after these delays land at different points of writing,
    // linking and pruning snapshots.
    let mut service: Running = first;
    for delay_ms in [130u64, 460, 790, 1_240] {
        std::thread::sleep(Duration::from_millis(delay_ms));
        service.0.kill().expect("SIGKILL");
        service.0.wait().expect("reap");
        let published = assert_whole_snapshots(dir.path());
        assert!(published > 0, "nothing published before the kill");
        let (next, address, _) = start_listening(optics_run(dir.path(), 3));
        wait_for_chain(&address, &token, Duration::from_secs(120));
        service = next;
    }
    drop(service);
    assert_whole_snapshots(dir.path());
}
