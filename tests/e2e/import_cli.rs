//! `optics import`: vendor files into the quote archive, run as a user runs it.

use std::process::{Command, Stdio};

use chrono::NaiveDate;
use optics_ingest::archive::QuoteArchive;
use optics_pipeline::store::SnapshotStore;
use optics_pipeline::worker::close::read_reference;
use optics_schemas::DailyBar;
use optics_tests::run_optics;

use crate::support::{OPTICS, Running, TempDir, backfill, get, start_listening};

pub(crate) fn sample(name: &str) -> String {
    format!(
        "{}/ingest/tests/data/vendor/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

pub(crate) fn archived_rows(data_dir: &std::path::Path) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let archive = QuoteArchive::local(&data_dir.join("archive")).unwrap();
        let mut rows = 0;
        for session in archive.list_sessions().await.unwrap() {
            rows += archive
                .read_session(session.trade_date, &session.underlying)
                .await
                .unwrap()
                .len();
        }
        rows
    })
}

#[test]
fn imports_an_orats_file_into_the_archive() {
    let dir = TempDir::new("import-ok");
    let data_dir = dir.path().to_str().unwrap();
    let output = run_optics(
        OPTICS,
        &[
            "import",
            "orats-strikes",
            &sample("orats_strikes_sample.csv"),
            "--data-dir",
            data_dir,
            "--quiet",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Two quotes (call and put) per data line of the sample.
    let lines = std::fs::read_to_string(sample("orats_strikes_sample.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert!(
        stdout.contains(&format!("{} rows from {lines} lines", 2 * lines)),
        "{stdout}"
    );
    assert_eq!(archived_rows(dir.path()), 2 * lines);
}

#[test]
fn a_bad_file_is_rejected_whole_with_its_line() {
    let dir = TempDir::new("import-bad");
    let mut text = std::fs::read_to_string(sample("orats_strikes_sample.csv")).unwrap();
    let good_lines = text.lines().count();
    // Repeat the last line with a call bid that is not a number.
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "callBidPrice").unwrap();
    let mut fields: Vec<String> = text
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    fields[column] = "abc".to_owned();
    let broken = fields.join(",");
    text.push_str(&broken);
    text.push('\n');
    let bad_file = dir.path().join("bad.csv");
    std::fs::write(&bad_file, text).unwrap();
    let output = run_optics(
        OPTICS,
        &[
            "import",
            "orats-strikes",
            bad_file.to_str().unwrap(),
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("bad.csv:{}", good_lines + 1)),
        "{stderr}"
    );
    assert!(
        stderr.contains("nothing of this file was imported"),
        "{stderr}"
    );
    assert_eq!(archived_rows(dir.path()), 0);
}

#[test]
fn an_unknown_kind_is_refused() {
    let output = run_optics(OPTICS, &["import", "bloomberg", "x.csv"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid value"));
}

#[test]
fn an_imported_session_replays_into_end_of_day_snapshots() {
    let dir = TempDir::new("import-replay");
    let data_dir = dir.path().to_str().unwrap();
    let import = run_optics(
        OPTICS,
        &[
            "import",
            "orats-strikes",
            &sample("orats_strikes_sample.csv"),
            "--data-dir",
            data_dir,
            "--quiet",
        ],
    );
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    let replay = run_optics(
        OPTICS,
        &[
            "replay",
            "--date",
            "2024-03-14",
            "--data-dir",
            data_dir,
            "--quiet",
        ],
    );
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let stdout = String::from_utf8_lossy(&replay.stdout);
    // The sample holds SPY and SPX.
    assert!(
        stdout.contains("2024-03-14: 2 underlyings, 12 archived quotes, 10 snapshot files"),
        "{stdout}"
    );
    for underlying in ["SPY", "SPX"] {
        for dataset in [
            "chain",
            "exposures",
            "exposure_summary",
            "flow",
            "flow_aggregates",
        ] {
            let partition = dir.path().join(format!(
                "snapshots/{dataset}/trade_date=2024-03-14/underlying={underlying}"
            ));
            assert!(partition.is_dir(), "no {dataset} snapshot of {underlying}");
        }
    }
    // A day the archive does not hold: a clear error, exit 2.
    let missing = run_optics(
        OPTICS,
        &[
            "replay",
            "--date",
            "2024-03-13",
            "--data-dir",
            data_dir,
            "--quiet",
        ],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("no session on 2024-03-13"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

#[test]
fn a_bars_file_lands_in_the_snapshot_store() {
    let dir = TempDir::new("import-bars");
    let data_dir = dir.path().to_str().unwrap();
    let file = sample("spy_bars_sample.csv");
    let missing_symbol = run_optics(
        OPTICS,
        &["import", "bars", &file, "--data-dir", data_dir, "--quiet"],
    );
    assert_eq!(missing_symbol.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing_symbol.stderr).contains("--symbol"));

    let output = run_optics(
        OPTICS,
        &[
            "import",
            "bars",
            &file,
            "--symbol",
            "spy",
            "--data-dir",
            data_dir,
            "--quiet",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("bars of SPY through 2024-03-15"),
        "{stdout}"
    );
    // The import's own partition and the market-wide one readers use, both of the last bar.
    for underlying in ["SPY", "_all"] {
        let partition = dir.path().join(format!(
            "snapshots/daily_bars/trade_date=2024-03-15/underlying={underlying}"
        ));
        assert!(partition.is_dir(), "no {underlying} partition");
    }
    // What the session close reads for SPY: the file's rows, as written in it.
    let file_rows: Vec<Vec<String>> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| line.split(',').map(str::to_owned).collect())
        .collect();
    let stored = stored_bars(&dir.path().join("snapshots"), date("2024-03-15"));
    assert_eq!(stored.len(), file_rows.len());
    for (bar, fields) in stored.iter().zip(&file_rows) {
        assert_eq!(bar.symbol, "SPY");
        assert_eq!(bar.date.to_string(), fields[0]);
        assert_eq!(bar.close, fields[4].parse::<f64>().unwrap());
        assert_eq!(bar.volume, fields[6].parse::<u64>().unwrap());
    }
}

fn date(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

/// The market-wide daily bars the session close of `on` reads (the newest partition on or
/// before it), sorted by symbol and date.
fn stored_bars(store_dir: &std::path::Path, on: NaiveDate) -> Vec<DailyBar> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(store_dir).unwrap();
        let mut bars: Vec<DailyBar> = read_reference(&store, on).await.unwrap();
        bars.sort_by(|a, b| (&a.symbol, a.date).cmp(&(&b.symbol, b.date)));
        bars
    })
}

/// `optics serve` on port 0 over `data_dir` with the local account; returns it, its address
/// and the local token.
pub(crate) fn serve(data_dir: &std::path::Path) -> (Running, String, String) {
    let mut command = Command::new(OPTICS);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env("OPTICS_BOOTSTRAP_LOCAL_ACCOUNT", "true")
        .env("OPTICS_LOG", "warn")
        .stderr(Stdio::null());
    let (server, address, _) = start_listening(command);
    let token = std::fs::read_to_string(data_dir.join("api-token")).expect("token file");
    (server, address, token.trim().to_owned())
}

/// `optics import bars FILE --symbol SPY --data-dir DATA_DIR --quiet` with `extra` arguments;
/// its stdout (it must succeed).
pub(crate) fn import_spy_bars(data_dir: &str, file: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![
        "import",
        "bars",
        file.to_str().unwrap(),
        "--symbol",
        "SPY",
        "--data-dir",
        data_dir,
        "--quiet",
    ];
    args.extend(extra);
    let output = run_optics(OPTICS, &args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Bars imported over a seeded store reach `/stock/{ticker}` through `optics serve`, every
/// other stored bar is kept, and a later backfill keeps the imported ones.
#[test]
fn imported_bars_reach_the_stock_endpoint_and_survive_a_backfill() {
    let dir = TempDir::new("import-bars-served");
    let data_dir = dir.path().to_str().unwrap();
    backfill(data_dir, "2026-11-20", 5, 1);
    let session = date("2026-11-20");
    let before = stored_bars(&dir.path().join("snapshots"), session);
    let simulated = before
        .iter()
        .find(|b| b.symbol == "SPY" && b.date == session)
        .expect("a simulated SPY bar")
        .clone();
    // Two sessions of SPY with volumes the simulator (round lots, ~70 M) would not draw.
    let imported_volume = 123_456_789u64;
    let file = dir.path().join("spy.csv");
    std::fs::write(
        &file,
        "date,open,high,low,close,volume\n\
         2026-11-19,600.00,605.00,598.00,601.11,98765432\n\
         2026-11-20,601.50,610.00,600.00,608.88,123456789\n",
    )
    .unwrap();
    let store = format!("file://{}", dir.path().join("snapshots").display());
    let stdout = import_spy_bars(data_dir, &file, &["--store", &store]);
    assert!(stdout.contains("2 replaced"), "{stdout}");

    // Every stored bar is still there; SPY's two sessions are the file's.
    let after = stored_bars(&dir.path().join("snapshots"), session);
    assert_eq!(after.len(), before.len());
    for (old, new) in before.iter().zip(&after) {
        assert_eq!((&old.symbol, old.date), (&new.symbol, new.date));
        if new.symbol == "SPY" && new.date >= date("2026-11-19") {
            continue;
        }
        assert_eq!(old, new);
    }
    let spy = after
        .iter()
        .find(|b| b.symbol == "SPY" && b.date == session)
        .unwrap();
    assert_eq!((spy.close, spy.volume), (608.88, imported_volume));
    assert_ne!(simulated.volume, imported_volume);

    // The API serves the imported session's volume.
    {
        let (_server, address, token) = serve(dir.path());
        let (status, body) = get(&address, "/api/mcp/data/stock/SPY", Some(&token));
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body["data"]["volume_shares"].as_u64(),
            Some(imported_volume)
        );
        assert_eq!(body["data"]["volume_date"], "2026-11-20");
        assert_eq!(body["data"]["volume"], "123.46M");
    }

    // A backfill rewrites the market-wide bars from the simulator and lays the import over it.
    backfill(data_dir, "2026-11-20", 5, 1);
    let rewritten = stored_bars(&dir.path().join("snapshots"), session);
    assert_eq!(rewritten.len(), before.len());
    let spy = rewritten
        .iter()
        .find(|b| b.symbol == "SPY" && b.date == session)
        .unwrap();
    assert_eq!((spy.close, spy.volume), (608.88, imported_volume));
}

/// Files under `dir`, recursively (a local archive keeps empty directories).
pub(crate) fn files_under(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .map(|e| e.unwrap().path())
            .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
            .sum()
    })
}

/// Sets the modification time of every file under `dir` to 2020-01-01.
fn age_files(dir: &std::path::Path) {
    let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_577_836_800);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            age_files(&path);
        } else {
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(long_ago).unwrap();
        }
    }
}

#[test]
fn an_import_removes_what_a_crashed_import_left_and_ignores_it_until_then() {
    use optics_ingest::archive::ArchiveSink;
    use optics_ingest::vendor::{ImportKind, import_file};

    let dir = TempDir::new("import-crashed");
    let archive_dir = dir.path().join("archive");
    // A crashed import: parts staged, never committed (the sink is dropped mid-way).
    {
        let archive = QuoteArchive::local(&archive_dir).unwrap();
        let mut sink = ArchiveSink::new(archive, "crashed-1")
            .unwrap()
            .with_flush_rows(1);
        let mut staging_only = CrashBeforeCommit(&mut sink);
        let _ = import_file(
            std::path::Path::new(&sample("orats_strikes_sample.csv")),
            &ImportKind::OratsStrikes,
            &mut staging_only,
        );
    }
    let debris = archive_dir.join("imports/crashed-1");
    assert!(debris.is_dir());
    assert_eq!(
        archived_rows(dir.path()),
        0,
        "readers ignore an uncommitted import"
    );
    age_files(&debris);

    let output = run_optics(
        OPTICS,
        &[
            "import",
            "orats-strikes",
            &sample("orats_strikes_sample.csv"),
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("removed abandoned import crashed-1"),
        "{stderr}"
    );
    assert_eq!(files_under(&debris), 0);
    let lines = std::fs::read_to_string(sample("orats_strikes_sample.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(archived_rows(dir.path()), 2 * lines);
}

/// A sink that stages through `ArchiveSink` and fails its commit before writing anything, as
/// a process killed at that moment would (abort is not called by a dead process either).
struct CrashBeforeCommit<'a>(&'a mut optics_ingest::archive::ArchiveSink);

impl optics_ingest::vendor::ImportSink for CrashBeforeCommit<'_> {
    fn stage(
        &mut self,
        batch: optics_ingest::vendor::ImportBatch,
    ) -> Result<(), optics_ingest::vendor::SinkError> {
        self.0.stage(batch)
    }

    fn commit(&mut self) -> Result<(), optics_ingest::vendor::SinkError> {
        Err("killed".into())
    }

    fn abort(&mut self) {}
}

#[test]
fn a_bars_file_with_a_bad_line_is_rejected_whole_with_its_line() {
    let dir = TempDir::new("import-bars-bad");
    let mut text = std::fs::read_to_string(sample("spy_bars_sample.csv")).unwrap();
    let good_lines = text.lines().count();
    text.push_str("2024-12-31,1.0,2.0,0.5,not-a-price,1.0,100\n");
    let bad_file = dir.path().join("spy.csv");
    std::fs::write(&bad_file, text).unwrap();
    let output = run_optics(
        OPTICS,
        &[
            "import",
            "bars",
            bad_file.to_str().unwrap(),
            "--symbol",
            "SPY",
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("spy.csv:{}", good_lines + 1)),
        "{stderr}"
    );
    assert!(
        stderr.contains("nothing of this file was imported"),
        "{stderr}"
    );
    assert!(!dir.path().join("snapshots/daily_bars").exists());
}
