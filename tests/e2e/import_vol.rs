//! `optics import bars` of a real close series flows into the symbol's `vol_daily` rows and the
//! volatility endpoints: the last 1,300 sessions of the S&P 500 (2013-10-31 .. 2018-12-31,
//! `arch.data.sp500`, NCSA licence; see `scripts/reference/README.md`) as bundled in
//! `compute/tests/data/vol_vectors.json`, with the numpy / pandas reference HVs and cones
//! `scripts/reference/vol_vectors.py` computed from the same closes.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::NaiveDate;
use optics_compute::time::NyseCalendar;
use optics_compute::vol::distribution;
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::VolDailyRow;
use optics_schemas::bus::snapshot_datasets;
use serde_json::Value;

use crate::import_cli::{files_under, import_spy_bars, serve};
use crate::support::{TempDir, backfill, get};

/// Relative tolerance of every figure against the reference.
const REL: f64 = 1e-9;

/// The windows the reference holds.
const WINDOWS: [usize; 4] = [10, 20, 60, 252];

/// The cone statistics the reference holds (besides `count`).
const CONE_STATS: [&str; 8] = ["min", "p10", "p25", "p50", "p75", "p90", "max", "mean"];

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/compute/tests/data/vol_vectors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("vol_vectors.json")).unwrap()
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn assert_close(what: &str, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("{what}: null, want {want}"));
    assert!(
        ((got - want) / want).abs() <= REL,
        "{what}: {got} vs numpy {want} (rel {:e})",
        ((got - want) / want).abs()
    );
}

fn date(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

/// Every stored `vol_daily` row, by underlying and session.
fn stored_vol_rows(store_dir: &Path) -> BTreeMap<(String, NaiveDate), VolDailyRow> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(store_dir).unwrap();
        let mut rows = BTreeMap::new();
        for day in store
            .trade_dates(snapshot_datasets::VOL_DAILY)
            .await
            .unwrap()
        {
            let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, day, MARKET_WIDE);
            let snapshot = store.read(&key).await.unwrap().unwrap();
            for batch in &snapshot.batches {
                for row in VolDailyRow::from_batch(batch).unwrap() {
                    rows.insert((row.underlying.clone(), row.trade_date), row);
                }
            }
        }
        rows
    })
}

/// The S&P 500's closes imported as SPY over a store backfilled through 2018-12-31 (a year of
/// simulated history, one session with chains): SPY's `vol_daily` rows of all 1,300 sessions
/// carry HV at 10/20/60/252 sessions equal to pandas' rolling figures, their distribution is
/// numpy's cone, the stored chain figures and the other underlyings' rows are kept, a second
/// import publishes nothing, and `/volatility-cone/SPY` and `/vrp/SPY` of `optics serve`
/// answer from the imported closes — all to 1e-9 relative.
#[test]
fn imported_closes_restate_vol_daily_and_the_volatility_endpoints() {
    let vectors = vectors();
    let dates: Vec<NaiveDate> = vectors["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| date(d.as_str().unwrap()))
        .collect();
    let [open, high, low, close] = ["open", "high", "low", "close"].map(|k| floats(&vectors[k]));
    // The series has a bar every NYSE session of its span, so the import replaces every
    // simulated SPY bar there.
    let sessions: Vec<NaiveDate> = NyseCalendar
        .trading_days(dates[0], *dates.last().unwrap())
        .collect();
    assert_eq!(sessions, dates);

    let dir = TempDir::new("import-vol");
    let data_dir = dir.path().to_str().unwrap();
    let store_dir = dir.path().join("snapshots");
    backfill(data_dir, "2018-12-31", 5, 1);
    let before = stored_vol_rows(&store_dir);
    let spy_before = before.keys().filter(|(s, _)| s == "SPY").count();
    assert!(spy_before > 200, "{spy_before} seeded SPY rows");

    // The importer's layout; `{}` writes the shortest text that reads back as the same double.
    let file = dir.path().join("sp500.csv");
    let mut text = String::from("date,open,high,low,close,volume\n");
    for (i, day) in dates.iter().enumerate() {
        text.push_str(&format!(
            "{day},{},{},{},{},0\n",
            open[i], high[i], low[i], close[i]
        ));
    }
    std::fs::write(&file, text).unwrap();
    let stdout = import_spy_bars(data_dir, &file, &[]);
    assert!(
        stdout.contains(&format!(
            "vol_daily of SPY: 1300 sessions 2013-10-31..2018-12-31 recomputed from the bars \
             ({spy_before} rows updated, {} added; 1300 partitions published)",
            1300 - spy_before
        )),
        "{stdout}"
    );

    let after = stored_vol_rows(&store_dir);
    let spy: Vec<&VolDailyRow> = after
        .iter()
        .filter(|((s, _), _)| s == "SPY")
        .map(|(_, row)| row)
        .collect();
    assert_eq!(
        spy.iter().map(|r| r.trade_date).collect::<Vec<_>>(),
        dates,
        "a SPY row every session of the file, none elsewhere"
    );
    for (row, want) in spy.iter().zip(&close) {
        assert_eq!(row.close, *want, "{}", row.trade_date);
    }
    // HV per session and window against pandas' rolling series.
    for window in WINDOWS {
        let reference = &vectors["hv"]["series"][window.to_string()];
        let stored: Vec<Option<f64>> = spy
            .iter()
            .map(|r| match window {
                10 => r.hv_10d_pct,
                20 => r.hv_20d_pct,
                60 => r.hv_60d_pct,
                _ => r.hv_252d_pct,
            })
            .collect();
        for (i, (got, want)) in stored.iter().zip(reference.as_array().unwrap()).enumerate() {
            match want.as_f64() {
                Some(want) => assert_close(&format!("hv{window} on {}", dates[i]), *got, want),
                None => assert_eq!(*got, None, "hv{window} on {}", dates[i]),
            }
        }
        assert_close(
            &format!("last hv{window}"),
            *stored.last().unwrap(),
            vectors["hv"]["last"][window.to_string()].as_f64().unwrap(),
        );
        // The cone: numpy's linear percentiles of the stored rolling series.
        let cone = &vectors["hv"]["cone"][window.to_string()];
        let values: Vec<f64> = stored.iter().flatten().copied().collect();
        let spread = distribution(&values).unwrap();
        assert_eq!(spread.count as u64, cone["count"].as_u64().unwrap());
        let got = [
            spread.min,
            spread.p10,
            spread.p25,
            spread.p50,
            spread.p75,
            spread.p90,
            spread.max,
            spread.mean,
        ];
        for (stat, got) in CONE_STATS.iter().zip(got) {
            let want = cone[*stat].as_f64().unwrap();
            assert_close(&format!("cone {window} {stat}"), Some(got), want);
        }
    }

    // Chain figures of the seeded SPY rows are kept; VRP follows the new 30-session HV.
    let mut with_iv = 0;
    for row in &spy {
        let Some(old) = before.get(&("SPY".to_owned(), row.trade_date)) else {
            assert_eq!(row.iv30d_pct, None, "a new row has no IV");
            continue;
        };
        let kept = |r: &VolDailyRow| {
            (
                r.as_of,
                [
                    r.iv10d_pct,
                    r.iv30d_pct,
                    r.iv1yr_pct,
                    r.iv_rank,
                    r.iv_percentile,
                ],
                (r.front_expiration, r.front_atm_iv_pct, r.skew25_30d_pct),
            )
        };
        assert_eq!(kept(row), kept(old), "{}", row.trade_date);
        if let (Some(iv), Some(hv30)) = (row.iv30d_pct, row.hv_30d_pct) {
            with_iv += 1;
            assert_eq!(row.vrp_30d_pct, Some(iv - hv30), "{}", row.trade_date);
            assert_eq!(row.vrp_ratio, Some(iv / hv30), "{}", row.trade_date);
        }
    }
    assert_eq!(
        with_iv, spy_before,
        "every seeded row had an iv30d and keeps it"
    );
    // Other underlyings: only beta and correlation to SPY may change.
    for (key, old) in before.iter().filter(|((s, _), _)| s != "SPY") {
        let new = &after[key];
        let old = VolDailyRow {
            beta_spy_1y: new.beta_spy_1y,
            correlation_spy_1y: new.correlation_spy_1y,
            ..old.clone()
        };
        assert_eq!(*new, old, "{key:?}");
    }

    // The same file again: identical rows, nothing published.
    let files = files_under(&store_dir.join("vol_daily"));
    let again = import_spy_bars(data_dir, &file, &[]);
    assert!(
        again.contains("(0 rows updated, 0 added; 0 partitions published)"),
        "{again}"
    );
    assert_eq!(files_under(&store_dir.join("vol_daily")), files);
    assert_eq!(stored_vol_rows(&store_dir), after);

    // The endpoints read the restated rows.
    let (_server, address, token) = serve(dir.path());
    let token = Some(token.as_str());
    let (status, body) = get(
        &address,
        "/api/mcp/data/volatility-cone/SPY?periods=10,20,60,252",
        token,
    );
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["trade_date"], "2018-12-31", "{data}");
    assert_eq!(data["sessions"], 1300, "{data}");
    for window in WINDOWS {
        let tenor = &data["volatility_cone"][format!("{window}d")];
        let cone = &vectors["hv"]["cone"][window.to_string()];
        assert_eq!(tenor["observations"], cone["count"], "{tenor}");
        for stat in CONE_STATS {
            assert_close(
                &format!("/volatility-cone {window}d {stat}"),
                tenor[stat].as_f64(),
                cone[stat].as_f64().unwrap(),
            );
        }
        assert_close(
            &format!("/volatility-cone {window}d current_rv"),
            tenor["current_rv"].as_f64(),
            vectors["hv"]["last"][window.to_string()].as_f64().unwrap(),
        );
    }
    let (status, body) = get(&address, "/api/mcp/data/vrp/SPY?lookback_days=20", token);
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    let realized = vectors["hv"]["last"]["20"].as_f64().unwrap();
    assert_close(
        "/vrp realized",
        data["realized_volatility"].as_f64(),
        realized,
    );
    let implied = data["implied_volatility"]
        .as_f64()
        .expect("iv30d of the chain");
    // The premium is a difference: its error is relative to the realized figure.
    let premium = data["volatility_risk_premium"].as_f64().expect("premium");
    assert!(
        (premium - (implied - realized)).abs() <= REL * realized,
        "/vrp premium {premium} vs {implied} - {realized}"
    );
}
