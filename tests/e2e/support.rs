//! What every end-to-end test needs: the binary's path, a scratch directory, a process that is
//! killed when the test ends (even by a panic), and plain HTTP/1.1 GETs over loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The `optics` binary Cargo built for these tests.
pub const OPTICS: &str = env!("CARGO_BIN_EXE_optics");

/// A fresh directory under the system temp dir, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory named after `tag`, this process and the instant (tests of one
    /// binary run in parallel threads of one process).
    pub fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("optics-e2e-{tag}-{}-{nanos}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `optics run` on `data_dir` as the end-to-end tests start it: port 0, `universe`
/// underlyings, one seeded session and one year of history, the market clock at a fixed Friday
/// morning (2026-11-20 15:00 UTC), cycles every 500 ms, no inherited `RUST_LOG`, and the
/// service's request log written to `run-log.txt` in the data directory.
pub fn optics_run(data_dir: &Path, universe: usize) -> Command {
    let mut command = Command::new(OPTICS);
    command
        .args(["run", "--listen", "127.0.0.1:0", "--universe"])
        .arg(universe.to_string())
        .args([
            "--seed-sessions",
            "1",
            "--history-years",
            "1",
            "--start",
            "2026-11-20T15:00:00Z",
            "--cycle-ms",
            "500",
            "--data-dir",
        ])
        .arg(data_dir)
        .env_remove("RUST_LOG")
        .stderr(Stdio::from(
            std::fs::File::create(data_dir.join("run-log.txt")).expect("log file"),
        ));
    command
}

/// A started `optics` process, killed when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` (an `optics` server on port 0) with stdout piped and reads stdout until it
/// prints `listening on http://ADDRESS`; returns the process, the address and every line
/// printed up to and with that one. Panics if the process exits first.
pub fn start_listening(mut command: Command) -> (Running, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .expect("start optics");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let mut printed = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("stdout line");
        printed.push_str(&line);
        printed.push('\n');
        if let Some(address) = line.strip_prefix("listening on http://") {
            return (running, address.to_owned(), printed);
        }
    }
    panic!("optics exited without listening: {printed}");
}

/// One GET over a fresh connection, with the bearer `token` if given: the status and the body
/// parsed as JSON (null when it is not JSON).
pub fn get(address: &str, path: &str, token: Option<&str>) -> (u16, serde_json::Value) {
    let (status, body) = fetch(address, path, token);
    let body = serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
    (status, body)
}

/// One GET over a fresh connection, with the bearer `token` if given: the status and the body
/// text.
pub fn fetch(address: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    let (head, body) = response.split_once("\r\n\r\n").expect("HTTP response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    (status, body.to_owned())
}

/// `optics backfill` of `sessions` sessions ending `to` for the first `universe` underlyings
/// of the coverage universe (SPY among the first five), with one year of history, into
/// `data_dir`; panics with its stderr when it fails.
pub fn backfill(data_dir: &str, to: &str, universe: usize, sessions: usize) {
    let (universe, sessions) = (universe.to_string(), sessions.to_string());
    let output = optics_tests::run_optics(
        OPTICS,
        &[
            "backfill",
            "--data-dir",
            data_dir,
            "--to",
            to,
            "--sessions",
            &sessions,
            "--universe",
            &universe,
            "--history-years",
            "1",
            "--quiet",
        ],
    );
    assert!(
        output.status.success(),
        "backfill failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
