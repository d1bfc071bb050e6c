//! A running `optics run` for the benchmarks that measure the real binary (`live_memory`,
//! `freshness`): started on a data directory of its own, read through `/proc` and `/metrics`,
//! killed and cleaned up when dropped. Linux only.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat`'s CPU times (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// A setting from the environment, or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `optics` binary to run: `OPTICS_BENCH_BINARY`, or the one this bench was built with.
pub fn binary() -> PathBuf {
    std::env::var_os("OPTICS_BENCH_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_optics")))
}

/// A running `optics run` on a data directory of its own.
pub struct Service {
    child: Child,
    address: String,
    data_dir: PathBuf,
}

impl Service {
    /// Starts `optics run` with `args` and waits (at most `patience`) until it listens.
    pub fn start(name: &str, args: &[&str], patience: Duration) -> Self {
        let data_dir =
            std::env::temp_dir().join(format!("optics-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data_dir);
        let mut child = Command::new(binary())
            .arg("run")
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&data_dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", binary().display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (found, address) = mpsc::channel();
        // Reads the announcement, then keeps draining so the service never blocks on output.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(address) = line.strip_prefix("listening on http://") {
                    let _ = found.send(address.to_owned());
                }
            }
        });
        let address = address
            .recv_timeout(patience)
            .unwrap_or_else(|_| panic!("{name}: the service did not listen within {patience:?}"));
        Self {
            child,
            address,
            data_dir,
        }
    }

    /// (resident, peak resident) bytes.
    pub fn resident(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/<pid>/status (Linux)");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map_or(0, |kib| kib * 1024)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// The text `/metrics` answers.
    pub fn metrics_text(&self) -> String {
        let mut stream = TcpStream::connect(&self.address).expect("connect");
        write!(
            stream,
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.address
        )
        .expect("request");
        let mut text = String::new();
        stream.read_to_string(&mut text).expect("response");
        text
    }

    /// CPU time the process has used, user and system, seconds.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("/proc/<pid>/stat (Linux)");
        // Fields after the command name (which may hold spaces) closed by the last ')'.
        let after = &stat[stat.rfind(')').expect("stat's command") + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        // utime and stime: fields 14 and 15 of the line, 12 and 13 after the command.
        let ticks: u64 =
            fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0);
        ticks as f64 / TICKS_PER_SECOND
    }

    /// The memory holders `/metrics` reports: name → (items, bytes).
    pub fn holders(&self) -> BTreeMap<String, (u64, u64)> {
        let text = self.metrics_text();
        let mut holders: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for line in text.lines() {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.parse::<u64>() else {
                continue;
            };
            let holder = |prefix: &str| {
                series
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_prefix("{holder=\""))
                    .and_then(|rest| rest.strip_suffix("\"}"))
                    .map(str::to_owned)
            };
            if let Some(name) = holder("optics_memory_held_items") {
                holders.entry(name).or_default().0 = value;
            } else if let Some(name) = holder("optics_memory_held_bytes") {
                holders.entry(name).or_default().1 = value;
            }
        }
        holders
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}
