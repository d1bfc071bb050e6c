//! `optics run` — the all-in-one service a newcomer starts with `make run` — on a fresh data
//! directory: it seeds a tiny store, prints where it listens and where its token is, and
//! answers an authenticated chain request. The market clock starts at a fixed instant (a
//! Friday morning session), so the test does not depend on the wall clock's session state.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const OPTICS: &str = env!("CARGO_BIN_EXE_optics");

/// Seeding a year of history and one session for three underlyings, in a debug build on a
/// busy two-core machine: generous.
const LISTEN_WITHIN: Duration = Duration::from_secs(420);
/// From listening to the first 200 on /chain: the seeded session is loaded before listening.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The service, killed when dropped.
struct Service(Child);
impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One GET over a fresh connection: the status and the body as JSON (null if it is not).
fn get(address: &str, path: &str, token: &str) -> (u16, serde_json::Value) {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
         Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    let (head, body) = response.split_once("\r\n\r\n").expect("HTTP response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let body = serde_json::from_str(body).unwrap_or(serde_json::Value::Null);
    (status, body)
}

#[test]
fn optics_run_seeds_says_how_to_call_it_and_answers_a_chain() {
    let dir = TempDir(std::env::temp_dir().join(format!("optics-e2e-run-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let log = std::fs::File::create(dir.0.join("run-log.txt")).unwrap();
    let started = Instant::now();
    let mut child = Command::new(OPTICS)
        .args([
            "run",
            "--listen",
            "127.0.0.1:0",
            "--universe",
            "3",
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
        .arg(&dir.0)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("start optics run");
    let stdout = child.stdout.take().expect("stdout");
    let service = Service(child);

    // Lines as they come (a reader thread keeps the pipe drained while the service runs).
    let (lines_tx, lines_rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = Vec::new();
    let address = loop {
        let left = LISTEN_WITHIN.saturating_sub(started.elapsed());
        let line = lines_rx.recv_timeout(left).unwrap_or_else(|_| {
            panic!(
                "optics run did not print its address within {LISTEN_WITHIN:?}; it printed:\n{}\n\
                 stderr:\n{}",
                printed.join("\n"),
                std::fs::read_to_string(dir.0.join("run-log.txt")).unwrap_or_default()
            )
        });
        printed.push(line.clone());
        if let Some(address) = line.strip_prefix("listening on http://") {
            break address.to_owned();
        }
    };
    let listening_after = started.elapsed();
    // The curl line names the port bound, not the `:0` asked for.
    let curl = format!("http://{address}/api/mcp/data/chain/SPY");
    assert!(
        printed
            .iter()
            .any(|l| l.starts_with("try: curl") && l.contains(&curl)),
        "no curl line with {curl}:\n{}",
        printed.join("\n")
    );

    // It said where the token is, and the token is there.
    let token_path = dir.0.join("api-token");
    let token_path_text = token_path.display().to_string();
    assert!(
        printed.iter().any(|l| l.contains(&token_path_text)),
        "no line names {token_path_text}:\n{}",
        printed.join("\n")
    );
    let token = std::fs::read_to_string(&token_path).expect("token file");
    let token = token.trim();
    assert!(token.starts_with("optx_"), "{token}");
    assert!(
        printed.iter().any(|l| l.starts_with("seeded 1 sessions")),
        "{}",
        printed.join("\n")
    );

    // The first indices of the universe are cash indices; SPX is one of the three.
    let answered = Instant::now();
    let (status, body) = loop {
        let (status, body) = get(&address, "/api/mcp/data/chain/SPX", token);
        if status == 200 || answered.elapsed() > ANSWER_WITHIN {
            break (status, body);
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["ticker"], "SPX");
    assert_eq!(data["priced_on_forward"], true);
    let nearest = data["expirations"][0].as_str().expect("an expiration");
    let rows = data["chains"][nearest].as_array().expect("rows");
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["Strike"].is_number()));
    // Without the token: 401.
    let (status, _) = get(&address, "/api/mcp/data/chain/SPX", "optx_not-a-token");
    assert_eq!(status, 401);
    eprintln!(
        "optics run: listening after {:.1} s, first chain after {:.1} s more",
        listening_after.as_secs_f64(),
        answered.elapsed().as_secs_f64()
    );
    drop(service);
}
