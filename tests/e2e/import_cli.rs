//! `optics import`: vendor files into the quote archive, run as a user runs it.

use std::path::PathBuf;

use optics_ingest::archive::QuoteArchive;
use optics_tests::run_optics;

const OPTICS: &str = env!("CARGO_BIN_EXE_optics");

fn sample(name: &str) -> String {
    format!(
        "{}/ingest/tests/data/vendor/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("optics-e2e-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Self(dir)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn archived_rows(data_dir: &std::path::Path) -> usize {
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
    let data_dir = dir.0.to_str().unwrap();
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
    assert_eq!(archived_rows(&dir.0), 2 * lines);
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
    let bad_file = dir.0.join("bad.csv");
    std::fs::write(&bad_file, text).unwrap();
    let output = run_optics(
        OPTICS,
        &[
            "import",
            "orats-strikes",
            bad_file.to_str().unwrap(),
            "--data-dir",
            dir.0.to_str().unwrap(),
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
    assert_eq!(archived_rows(&dir.0), 0);
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
    let data_dir = dir.0.to_str().unwrap();
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
        stdout.contains("2024-03-14: 2 underlyings, 12 archived quotes, 8 snapshot files"),
        "{stdout}"
    );
    for underlying in ["SPY", "SPX"] {
        for dataset in ["chain", "exposures", "exposure_summary", "flow"] {
            let partition = dir.0.join(format!(
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
    let data_dir = dir.0.to_str().unwrap();
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
    assert!(stdout.contains("bars of SPY through"), "{stdout}");
    let dataset = dir.0.join("snapshots/daily_bars");
    let partitions: Vec<_> = std::fs::read_dir(&dataset).unwrap().collect();
    assert_eq!(partitions.len(), 1, "one trade_date partition");
}
