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

/// Every Parquet file under `dir` (published snapshots, archive parts).
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
    assert_whole_parquet(&data_dir.join("snapshots"))
}

/// Panics naming the first Parquet file under `dir` that is not whole (its magic at both
/// ends); returns how many there are.
fn assert_whole_parquet(dir: &Path) -> usize {
    let mut files = Vec::new();
    published_files(dir, &mut files);
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
    let body = poll_until("a chain", within, || {
        let (status, body) = get(address, "/api/mcp/data/chain/SPX", Some(token));
        (status == 200).then_some(body)
    });
    assert_eq!(body["success"], true);
}

/// Calls `attempt` every 200 ms until it gives a value; panics naming `what` after `within`.
fn poll_until<T>(what: &str, within: Duration, mut attempt: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = attempt() {
            return value;
        }
        assert!(started.elapsed() < within, "no {what} within {within:?}");
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

/// The unprivileged user and group the store tests run `optics` as when they run as root
/// (CI does): permission bits do not stop root, and they must stop the service's writes.
const NOBODY: u32 = 65_534;

/// Runs `command` as [`NOBODY`], owning everything under `dir`, when this test runs as root
/// (the owner of a file it creates says so); as the current user otherwise.
fn unprivileged(command: &mut std::process::Command, dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    let is_root = std::fs::metadata(dir).expect("temp dir").uid() == 0;
    if is_root {
        chown_tree(dir);
        command.uid(NOBODY).gid(NOBODY);
    }
}

fn chown_tree(path: &Path) {
    std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).expect("chown");
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("read dir").flatten() {
            chown_tree(&entry.path());
        }
    }
}

/// Sets the write bits of everything under `path` (directories keep r-x, files r--): `on`
/// gives them back to the owner.
fn set_writable(path: &Path, on: bool) {
    use std::os::unix::fs::PermissionsExt;
    let is_dir = path.is_dir();
    let mode = match (is_dir, on) {
        (true, true) => 0o755,
        (true, false) => 0o555,
        (false, true) => 0o644,
        (false, false) => 0o444,
    };
    // A directory is opened up before its children are visited and locked after them, so
    // listing it works either way.
    if is_dir && on {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    if is_dir {
        for entry in std::fs::read_dir(path).expect("read dir").flatten() {
            set_writable(&entry.path(), on);
        }
    }
    if !(is_dir && on) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

/// The `/health` document once `ready` holds for its part named `component` (polled).
fn wait_for_component(
    address: &str,
    component: &str,
    within: Duration,
    ready: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    poll_until(&format!("{component} as expected"), within, || {
        let (status, body) = get(address, "/health", None);
        assert_eq!(status, 200, "{body}");
        let part = body["components"]
            .as_array()?
            .iter()
            .find(|p| p["component"] == component)?;
        ready(part).then_some(body)
    })
}

#[test]
fn a_read_only_store_keeps_reads_serving_and_health_says_why() {
    let dir = TempDir::new("read-only-store");
    let mut command = optics_run(dir.path(), 3);
    unprivileged(&mut command, dir.path());
    let (mut service, address, _) = start_listening(command);
    let token = std::fs::read_to_string(dir.path().join("api-token")).expect("token");
    let token = token.trim().to_owned();
    wait_for_chain(&address, &token, Duration::from_secs(120));
    let healthy = wait_for_component(
        &address,
        "snapshot_publication",
        Duration::from_secs(60),
        |part| part["status"] == "ok" && !part["last_success_at"].is_null(),
    );
    assert_eq!(healthy["status"], "ok", "{healthy}");

    set_writable(&dir.path().join("snapshots"), false);
    let degraded = wait_for_component(
        &address,
        "snapshot_publication",
        Duration::from_secs(60),
        |part| part["status"] == "failing",
    );
    assert_eq!(degraded["status"], "degraded", "{degraded}");
    let part = degraded["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["component"] == "snapshot_publication")
        .unwrap();
    assert_eq!(
        part["last_error"], "writing to the snapshot store: permission denied",
        "{part}"
    );
    // The category only: the store's path is for the log, not for an unauthenticated route.
    assert!(!degraded.to_string().contains(dir.path().to_str().unwrap()));
    // Reads go on from the snapshots already held, and the process keeps running.
    for _ in 0..3 {
        wait_for_chain(&address, &token, Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        service.0.try_wait().expect("status").is_none(),
        "optics exited"
    );
    let log = std::fs::read_to_string(dir.path().join("run-log.txt")).expect("log");
    assert!(
        log.contains("writing snapshots to the store failed"),
        "no error in the log: {log}"
    );

    // Writable again: the next cycle publishes what the failed ones could not.
    let newest_before = degraded["newest_snapshot_published_at"].clone();
    set_writable(&dir.path().join("snapshots"), true);
    let recovered = wait_for_component(
        &address,
        "snapshot_publication",
        Duration::from_secs(60),
        |part| part["status"] == "ok",
    );
    assert_eq!(recovered["status"], "ok", "{recovered}");
    poll_until(
        "publication after the store took writes again",
        Duration::from_secs(30),
        || {
            let (_, health) = get(&address, "/health", None);
            (health["newest_snapshot_published_at"] != newest_before).then_some(())
        },
    );
    service.0.kill().expect("SIGKILL");
    service.0.wait().expect("reap");
    assert!(assert_whole_snapshots(dir.path()) > 0);
}

/// An ORATS strikes file of `expirations` × `strikes` lines (two quotes each) for one SPY
/// session: the sample's first line with its expiration, days to expiry and strike varied.
fn large_orats_file(path: &Path, expirations: u32, strikes: u32) -> usize {
    use std::io::Write;
    let sample =
        std::fs::read_to_string(crate::import_cli::sample("orats_strikes_sample.csv")).unwrap();
    let mut lines = sample.lines();
    let header = lines.next().unwrap();
    let template: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.split(',').position(|h| h == name).unwrap();
    let (expiry_at, dte_at, strike_at) = (column("expirDate"), column("dte"), column("strike"));
    let trade_date = chrono::NaiveDate::from_ymd_opt(2024, 3, 14).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "{header}").unwrap();
    let mut fields: Vec<String> = template.iter().map(|f| (*f).to_owned()).collect();
    for week in 0..expirations {
        let expiry = trade_date + chrono::TimeDelta::days(1 + 7 * i64::from(week));
        fields[expiry_at] = expiry.format("%m/%d/%Y").to_string();
        fields[dte_at] = (expiry - trade_date).num_days().to_string();
        for step in 0..strikes {
            fields[strike_at] = format!("{}", 300 + step);
            writeln!(out, "{}", fields.join(",")).unwrap();
        }
    }
    out.flush().unwrap();
    (expirations * strikes) as usize
}

/// `optics import orats-strikes FILE` on `data_dir`, started.
fn start_import(file: &Path, data_dir: &Path) -> std::process::Child {
    std::process::Command::new(crate::support::OPTICS)
        .args(["import", "orats-strikes"])
        .arg(file)
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--quiet")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start optics import")
}

#[test]
fn an_import_killed_at_any_point_is_whole_or_absent() {
    let scratch = TempDir::new("import-kill-file");
    let file = scratch.path().join("spy.csv");
    // 260,000 quotes: two parts staged (128 Ki rows each) before the last one and the commit.
    let lines = large_orats_file(&file, 100, 1_300);
    let whole = 2 * lines;
    let mut killed_before_commit = 0;
    // Kills after these delays from the first staged object land while parts are staged,
    // around the commit record and after it.
    for delay_ms in [0u64, 150, 600, 2_000] {
        let dir = TempDir::new("import-kill");
        let mut import = start_import(&file, dir.path());
        let imports = dir.path().join("archive/imports");
        let started = Instant::now();
        while crate::import_cli::files_under(&imports) == 0 {
            if import.try_wait().expect("status").is_some() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no staged object"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = import.kill();
        import.wait().expect("reap");
        let rows = crate::import_cli::archived_rows(dir.path());
        assert!(
            rows == 0 || rows == whole,
            "after a kill at +{delay_ms} ms readers see {rows} of {whole} rows"
        );
        assert_whole_parquet(&dir.path().join("archive"));
        if rows == 0 {
            killed_before_commit += 1;
            // Run again on the same archive: the new import is whole, the killed one's
            // objects are still ignored.
            let status = start_import(&file, dir.path()).wait().expect("import");
            assert!(status.success());
            assert_eq!(crate::import_cli::archived_rows(dir.path()), whole);
        }
    }
    assert!(
        killed_before_commit > 0,
        "every kill landed after the commit: the file is too small to test a kill mid-import"
    );
}
