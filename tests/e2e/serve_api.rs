//! `optics backfill` then `optics serve` on port 0, called over HTTP as a user calls it: a
//! store built by the real pipeline, the real binary, the real account bootstrap.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use optics_compute::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::{ChainRow, EarningsEvent, Record};
use optics_tests::run_optics;

const OPTICS: &str = env!("CARGO_BIN_EXE_optics");

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The server process, killed when dropped.
struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `optics serve` on port 0 and returns it with the address it printed.
fn serve(data_dir: &Path) -> (Server, String) {
    let mut child = Command::new(OPTICS)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start optics serve");
    let stdout = child.stdout.take().expect("stdout");
    let server = Server(child);
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("stdout line");
        if let Some(address) = line.strip_prefix("listening on http://") {
            return (server, address.to_owned());
        }
    }
    panic!("optics serve exited without listening");
}

/// One HTTP/1.1 GET; returns the status and the body parsed as JSON.
fn get(address: &str, path: &str, token: Option<&str>) -> (u16, serde_json::Value) {
    let (status, body) = fetch(address, path, token);
    let body = serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
    (status, body)
}

/// One GET over a fresh connection: the status and the body text.
fn fetch(address: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n"
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
    (status, body.to_owned())
}

/// The stored end-of-day chain of `ticker` on 2026-11-20.
fn stored_chain(data_dir: &Path, ticker: &str) -> Vec<ChainRow> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(&data_dir.join("snapshots")).unwrap();
        let date = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let key = SnapshotKey::new("chain", date, ticker);
        let snapshot = store.read(&key).await.unwrap().expect("a stored chain");
        snapshot
            .batches
            .iter()
            .flat_map(|b| ChainRow::from_batch(b).unwrap())
            .collect()
    })
}

/// The underlyings with a stored chain on 2026-11-20, and every stored earnings event.
fn stored_underlyings_and_earnings(data_dir: &Path) -> (Vec<String>, Vec<EarningsEvent>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(&data_dir.join("snapshots")).unwrap();
        let date = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let underlyings = store.underlyings("chain", date).await.unwrap();
        let earnings_date = store
            .latest_trade_date("earnings", MARKET_WIDE, None)
            .await
            .unwrap()
            .expect("stored earnings");
        let key = SnapshotKey::new("earnings", earnings_date, MARKET_WIDE);
        let snapshot = store.read(&key).await.unwrap().expect("earnings snapshot");
        let events = snapshot
            .batches
            .iter()
            .flat_map(|b| EarningsEvent::from_batch(b).unwrap())
            .collect();
        (underlyings, events)
    })
}

#[test]
fn a_backfilled_store_is_served_with_auth_and_the_envelope() {
    let dir =
        TempDir(std::env::temp_dir().join(format!("optics-e2e-serve-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    let data_dir = dir.0.to_str().unwrap().to_owned();
    let output = run_optics(
        OPTICS,
        &[
            "backfill",
            "--data-dir",
            &data_dir,
            "--to",
            "2026-11-20",
            "--sessions",
            "1",
            "--universe",
            "5",
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
    assert!(dir.0.join("snapshots/chain/trade_date=2026-11-20").is_dir());
    // The session close: the market-wide volatility row of every underlying.
    assert!(
        dir.0
            .join("snapshots/vol_daily/trade_date=2026-11-20/underlying=_all")
            .is_dir()
    );

    let (_server, address) = serve(&dir.0);
    let token = std::fs::read_to_string(dir.0.join("api-token")).expect("bootstrap token file");
    let token = token.trim();
    assert!(token.starts_with("optx_"));

    // The index, authenticated.
    let (status, body) = get(&address, "/api/mcp/data/", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    let count = body["data"]["endpoint_count"].as_u64().unwrap();
    assert_eq!(
        count as usize,
        body["data"]["endpoints"].as_array().unwrap().len()
    );

    // No token, a malformed token: 401 in the envelope.
    for bad in [None, Some("optx_not-a-token")] {
        let (status, body) = get(&address, "/api/mcp/data/", bad);
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["success"], false);
        assert!(body["error"].is_string());
    }

    // The caller's usage report (free, any plan).
    let (status, body) = get(&address, "/api/mcp/data/me/usage", Some(token));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert!(body["data"]["limit"].as_u64().unwrap() > 0, "{body}");

    // /chain/SPY with the full strike list of its nearest expiration, field by field against
    // the snapshot the pipeline stored.
    let (status, body) = get(
        &address,
        "/api/mcp/data/chain/SPY?strikes_around=0",
        Some(token),
    );
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["ticker"], "SPY");
    let stored = stored_chain(&dir.0, "SPY");
    let nearest = stored.iter().map(|r| r.expiration).min().unwrap();
    let expiration = nearest.to_string();
    assert_eq!(data["expirations"][0], expiration.as_str());
    let rows = data["chains"][expiration.as_str()].as_array().unwrap();
    let stored_rows: Vec<&ChainRow> = stored.iter().filter(|r| r.expiration == nearest).collect();
    assert_eq!(rows.len(), stored_rows.len());
    for (row, stored) in rows.iter().zip(&stored_rows) {
        assert_eq!(row["Strike"].as_f64(), Some(stored.strike));
        assert_eq!(row["Call Bid"].as_f64(), stored.call.bid);
        assert_eq!(row["Put Ask"].as_f64(), stored.put.ask);
        assert_eq!(row["IV Call"].as_f64(), stored.call.iv);
        assert_eq!(row["Delta Put"].as_f64(), stored.put.greeks.delta);
        assert_eq!(row["Gamma Call"].as_f64(), stored.call.greeks.gamma);
        assert_eq!(row["Call OI"].as_u64(), stored.call.open_interest);
    }
    assert_eq!(data["stock_price"].as_f64(), Some(stored_rows[0].spot));

    // Earnings dates come from the stored reference data: the first report on or after the
    // session, or null (this small universe is indices and ETFs; api/tests/store_market.rs
    // covers stocks with reports).
    let (underlyings, events) = stored_underlyings_and_earnings(&dir.0);
    let session = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    for symbol in &underlyings {
        let next = events
            .iter()
            .filter(|e| e.symbol == *symbol && e.report_date >= session)
            .map(|e| e.report_date.to_string())
            .min();
        let expected = next.map_or(serde_json::Value::Null, serde_json::Value::from);
        for endpoint in ["stock", "greeks-heatmap"] {
            let path = format!("/api/mcp/data/{endpoint}/{symbol}");
            let (status, body) = get(&address, &path, Some(token));
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["data"]["earnings_date"], expected, "{path}");
        }
    }
    assert!(!underlyings.is_empty());

    // The heatmap's gamma cells are the stored chain's call gammas.
    let (status, body) = get(&address, "/api/mcp/data/greeks-heatmap/SPY", Some(token));
    assert_eq!(status, 200, "{body}");
    let heatmap = &body["data"];
    assert_eq!(heatmap["expirations_raw"][0], expiration.as_str());
    let mut cells = 0;
    for (strike, cell) in heatmap["strikes"]
        .as_array()
        .unwrap()
        .iter()
        .zip(heatmap["greek_matrices"]["gamma"][0].as_array().unwrap())
    {
        let strike = strike.as_f64().unwrap();
        let row = stored_rows
            .iter()
            .filter(|r| r.strike == strike)
            // The PM series where an expiration lists both.
            .max_by_key(|r| r.settlement.as_str() == "PM");
        assert_eq!(
            cell.as_f64(),
            row.and_then(|r| r.call.greeks.gamma),
            "{strike}"
        );
        cells += usize::from(cell.is_number());
    }
    assert!(cells > 10, "{cells} gamma cells");

    // Chain-at-time through DataFusion over the stored Parquet: the same rows.
    let (status, body) = get(
        &address,
        &format!("/api/mcp/data/chain-at-time/SPY?expiration={expiration}&trade_date=2026-11-20"),
        Some(token),
    );
    assert_eq!(status, 200, "{body}");
    let at_time = body["data"]["chain"].as_array().expect("chain rows");
    assert_eq!(at_time.len(), stored_rows.len());
    for (row, stored) in at_time.iter().zip(&stored_rows) {
        assert_eq!(row["Strike"].as_f64(), Some(stored.strike));
        assert_eq!(row["Call Bid"].as_f64(), stored.call.bid);
        assert_eq!(row["Gamma Call"].as_f64(), stored.call.greeks.gamma);
    }

    // An uncovered ticker: a 4xx that names it.
    let (status, body) = get(&address, "/api/mcp/data/chain/NOPE", Some(token));
    assert_eq!(status, 404, "{body}");
    assert!(body["error"].as_str().unwrap().contains("NOPE"), "{body}");

    // An unknown path: 404 with suggestions, the docs link and the count.
    let (status, body) = get(&address, "/api/mcp/data/no-such-endpoint", Some(token));
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["endpoint_count"].as_u64(), Some(count));
    assert!(body["did_you_mean"].is_array());

    // The snapshot-age gauge is fed by the snapshots the server loaded.
    let (status, metrics) = fetch(&address, "/metrics", None);
    assert_eq!(status, 200, "{metrics}");
    for dataset in ["chain", "exposures", "flow"] {
        assert!(
            metrics.contains(&format!(
                "optics_snapshot_age_seconds{{dataset=\"{dataset}\"}}"
            )),
            "{dataset}: {metrics}"
        );
    }
}
