//! `optics sql` over a store `optics backfill` built: the tables it lists, a query's rows
//! against the snapshot files read directly, each output format, and a bad query refused with
//! the tables named.

use chrono::NaiveDate;
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::{ChainRow, VolDailyRow};
use optics_tests::run_optics;

use crate::support::{OPTICS, TempDir, backfill};

fn sql(data_dir: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["sql", "--data-dir", data_dir];
    all.extend_from_slice(args);
    run_optics(OPTICS, &all)
}

fn stdout_of(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "optics sql failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn sql_reads_the_current_snapshots_in_every_format() {
    let dir = TempDir::new("sql");
    let data_dir = dir.path().to_str().unwrap().to_owned();
    // SPX and NDX, the first two of the coverage universe.
    backfill(&data_dir, "2026-11-20", 2, 2);

    let tables = stdout_of(&sql(&data_dir, &["--tables"]));
    for name in ["chain", "vol_daily", "daily_bars", "companies"] {
        assert!(
            tables.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} not listed:\n{tables}"
        );
    }

    // The store read directly: SPX's chain of the 20th and the vol_daily sessions.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = SnapshotStore::local(&dir.path().join("snapshots")).unwrap();
    let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let (chain, vol_sessions) = runtime.block_on(async {
        let chain = store
            .read(&SnapshotKey::new("chain", day, "SPX"))
            .await
            .unwrap()
            .expect("SPX chain of the 20th");
        let rows: Vec<ChainRow> = chain
            .batches
            .iter()
            .flat_map(|b| ChainRow::from_batch(b).unwrap())
            .collect();
        let sessions = store
            .newest_versions("vol_daily", MARKET_WIDE)
            .await
            .unwrap()
            .len();
        (rows, sessions)
    });
    let max_strike = chain.iter().map(|r| r.strike).fold(f64::MIN, f64::max);

    let csv = stdout_of(&sql(
        &data_dir,
        &[
            "--format",
            "csv",
            "SELECT count(*) AS n, max(strike) AS top FROM chain \
             WHERE underlying = 'SPX' AND trade_date = DATE '2026-11-20'",
        ],
    ));
    assert_eq!(csv, format!("n,top\n{},{max_strike:?}\n", chain.len()));

    // One row per underlying and session: a restated or republished session counts once.
    let json = stdout_of(&sql(
        &data_dir,
        &[
            "--format",
            "json",
            "SELECT count(DISTINCT trade_date) AS sessions, count(*) AS n FROM vol_daily \
             WHERE underlying = 'SPX'",
        ],
    ));
    let row: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(row["sessions"], serde_json::json!(vol_sessions));
    assert_eq!(row["n"], serde_json::json!(vol_sessions));

    let table = stdout_of(&sql(
        &data_dir,
        &["SELECT symbol FROM companies ORDER BY symbol"],
    ));
    assert!(table.contains("| SPX "), "{table}");

    let file = dir.path().join("spy.parquet");
    let written = sql(
        &data_dir,
        &[
            "--format",
            "parquet",
            "--output",
            file.to_str().unwrap(),
            "SELECT * FROM vol_daily WHERE underlying = 'SPX' ORDER BY trade_date",
        ],
    );
    stdout_of(&written);
    let batches =
        optics_pipeline::store::decode_parquet(std::fs::read(&file).unwrap().into()).unwrap();
    let rows: Vec<VolDailyRow> = batches
        .iter()
        .flat_map(|b| VolDailyRow::from_batch(b).unwrap())
        .collect();
    assert_eq!(rows.len(), vol_sessions);
    assert!(rows.windows(2).all(|w| w[0].trade_date < w[1].trade_date));

    let refused = sql(&data_dir, &["SELECT * FROM greeks"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("greeks") && stderr.contains("the tables: chain"),
        "{stderr}"
    );
}
