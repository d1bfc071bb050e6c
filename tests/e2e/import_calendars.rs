//! `optics import earnings` and `optics import economic-calendar` run as a user runs them, into
//! a fresh data directory, then read back through `optics serve`: `/earnings-calendar` and
//! `/economic-calendar` answer from the imported rows, a later import reaches the running
//! server on its next poll, and a bad file is refused whole with its line.
//!
//! The server reads the real clock (an API replica has no other), so the files are dated
//! relative to today's New York date and the windows are wide enough that a midnight passing
//! during the test changes nothing asserted.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{NaiveDate, TimeDelta, Utc};
use optics_compute::time::new_york_date;
use optics_pipeline::store::SnapshotStore;
use optics_pipeline::worker::close::read_reference;
use optics_schemas::{EarningsEvent, EconomicEvent};
use optics_tests::run_optics;
use serde_json::Value;

use crate::import_cli::serve;
use crate::support::{OPTICS, TempDir, backfill, get};

fn today() -> NaiveDate {
    new_york_date(Utc::now())
}

fn days(n: i64) -> NaiveDate {
    today() + TimeDelta::days(n)
}

/// `optics import KIND FILE --data-dir DIR --quiet`.
fn import(kind: &str, file: &Path, data_dir: &Path) -> std::process::Output {
    run_optics(
        OPTICS,
        &[
            "import",
            kind,
            file.to_str().unwrap(),
            "--data-dir",
            data_dir.to_str().unwrap(),
            "--quiet",
        ],
    )
}

/// `import` that must succeed; its stdout.
fn imported(kind: &str, file: &Path, data_dir: &Path) -> String {
    let output = import(kind, file, data_dir);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The newest stored market-wide rows of `R` (what the API loads).
fn stored<R: optics_schemas::Record>(data_dir: &Path) -> Vec<R> {
    stored_on(data_dir, NaiveDate::MAX)
}

/// The market-wide rows of `R` a session close of `on` reads (the newest partition on or
/// before it).
fn stored_on<R: optics_schemas::Record>(data_dir: &Path, on: NaiveDate) -> Vec<R> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SnapshotStore::local(&data_dir.join("snapshots")).unwrap();
        read_reference::<R>(&store, on).await.unwrap()
    })
}

fn rows<'a>(body: &'a Value, list: &str) -> &'a Vec<Value> {
    body["data"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list}: {body}"))
}

/// GETs `path` until `ready` holds of the 200 body (the server polls the store every second),
/// for at most 20 s.
fn poll(address: &str, path: &str, token: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = get(address, path, Some(token));
        assert_eq!(status, 200, "{body}");
        if ready(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} never got there: {body}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn imported_calendars_are_served_and_a_bad_file_keeps_nothing() {
    let dir = TempDir::new("import-calendars");
    let data_dir = dir.path();

    // Two reports in the next days, one past (with its actuals) and one months out; the header
    // in its own order with a column the importer does not know.
    let earnings = data_dir.join("earnings.csv");
    std::fs::write(
        &earnings,
        format!(
            "Symbol,Timing,Date,Fiscal_Quarter,EPS_Estimate,EPS_Actual,Revenue_Estimate,\
             Revenue_Actual,Source\n\
             aapl,AMC,{},FY2026 Q1,2.35,,124000000000,,vendor\n\
             MSFT,bmo,{},FY2026 Q2,3.10,,,,vendor\n\
             NVDA,amc,{},FY2026 Q3,1.10,1.25,36000000000,37500000000,vendor\n\
             ORCL,tbd,{},FY2026 Q3,1.60,,,,vendor\n",
            days(3),
            days(4),
            days(-30),
            days(60),
        ),
    )
    .unwrap();
    let stdout = imported("earnings", &earnings, data_dir);
    assert!(
        stdout.contains(
            "4 rows from 4 lines committed to the snapshot store (market-wide earnings of"
        ),
        "{stdout}"
    );
    assert!(stdout.contains(": 4 rows, 0 replaced)"), "{stdout}");

    // A released figure, one scheduled with its actual already filed (the point-in-time rule
    // hides it until its day has passed), and a European release; no country column.
    let economic = data_dir.join("economic.csv");
    std::fs::write(
        &economic,
        format!(
            "date,time,event,importance,actual,estimate,previous\n\
             {},08:30,Nonfarm Payrolls,high,254K,150K,159K\n\
             {},,Consumer Credit,Low,12.5B,10.0B,8.9B\n",
            days(-2),
            days(1),
        ),
    )
    .unwrap();
    let stdout = imported("economic-calendar", &economic, data_dir);
    assert!(
        stdout.contains(
            "2 rows from 2 lines committed to the snapshot store (market-wide economic_calendar of"
        ),
        "{stdout}"
    );
    let europe = data_dir.join("europe.csv");
    std::fs::write(
        &europe,
        format!(
            "date,time,country,event,importance,actual,forecast,previous\n\
             {},04:00,eu,ECB Rate Decision,HIGH,,2.0%,2.15%\n",
            days(2),
        ),
    )
    .unwrap();
    imported("economic-calendar", &europe, data_dir);
    assert_eq!(stored::<EconomicEvent>(data_dir).len(), 3);

    // A bad file: line 3's timing is not bmo, amc or tbd. Refused whole, nothing stored.
    let bad = data_dir.join("bad.csv");
    std::fs::write(
        &bad,
        format!(
            "symbol,date,timing,fiscal_quarter,eps_estimate\n\
             AMD,{},bmo,Q4,0.9\n\
             INTC,{},during,Q4,0.1\n",
            days(5),
            days(5),
        ),
    )
    .unwrap();
    let output = import("earnings", &bad, data_dir);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.csv:3: column `timing`: \"during\" is not bmo, amc or tbd"),
        "{stderr}"
    );
    assert!(
        stderr.contains("nothing of this file was imported"),
        "{stderr}"
    );
    let kept: Vec<EarningsEvent> = stored(data_dir);
    assert_eq!(kept.len(), 4);
    assert!(kept.iter().all(|r| r.symbol != "AMD" && r.symbol != "INTC"));
    // Into a fresh directory: not even the dataset appears.
    let fresh = TempDir::new("import-calendars-bad");
    assert_eq!(
        import("earnings", &bad, fresh.path()).status.code(),
        Some(2)
    );
    assert!(!fresh.path().join("snapshots/earnings").exists());

    let (_server, address, token) = serve(data_dir);
    let calendar = poll(
        &address,
        "/api/mcp/data/earnings-calendar?days_ahead=10",
        &token,
        |b| b["data"]["total_count"] == 2,
    );
    let earnings_rows = rows(&calendar, "earnings");
    assert_eq!(earnings_rows[0]["symbol"], "AAPL");
    assert_eq!(earnings_rows[0]["date"], days(3).to_string());
    assert_eq!(earnings_rows[0]["timing"], "amc");
    assert_eq!(earnings_rows[0]["fiscal_quarter"], "FY2026 Q1");
    assert_eq!(earnings_rows[0]["eps_estimate"], 2.35);
    assert_eq!(earnings_rows[0]["revenue_estimate"], 124e9);
    assert_eq!(earnings_rows[0]["implied_move_basis"], "expected_abs_move");
    // No chains in this store: the implied move is null with its reason.
    assert_eq!(earnings_rows[0]["implied_move"], Value::Null);
    assert!(earnings_rows[0]["implied_move_reason"].is_string());
    assert_eq!(earnings_rows[1]["symbol"], "MSFT");
    assert_eq!(earnings_rows[1]["timing"], "bmo");

    let path = format!(
        "/api/mcp/data/economic-calendar?from_date={}&to_date={}",
        days(-7),
        days(7)
    );
    let body = poll(&address, &path, &token, |b| b["data"]["total_count"] == 2);
    let events = rows(&body, "events");
    assert_eq!(events[0]["event"], "Nonfarm Payrolls");
    assert_eq!(events[0]["country"], "US");
    assert_eq!(events[0]["time"], "08:30");
    assert_eq!(events[0]["impact"], "HIGH");
    assert_eq!(
        (
            &events[0]["actual"],
            &events[0]["estimate"],
            &events[0]["unit"]
        ),
        (&Value::from(254.0), &Value::from(150.0), &Value::from("K"))
    );
    assert_eq!(events[1]["event"], "Consumer Credit");
    assert_eq!(
        events[1]["actual"],
        Value::Null,
        "tomorrow's actual is not out"
    );
    assert_eq!(events[1]["estimate"], 10.0);
    assert_eq!(body["data"]["high_count"], 1);
    let (status, eu) = get(&address, &format!("{path}&country=EU"), Some(&token));
    assert_eq!(status, 200, "{eu}");
    assert_eq!(rows(&eu, "events")[0]["event"], "ECB Rate Decision");
    assert_eq!(rows(&eu, "events")[0]["previous"], 2.15);

    // An import while the server runs: the new version of each table is served after a poll;
    // the report of the same symbol and date replaces the stored one.
    let update = data_dir.join("update.csv");
    std::fs::write(
        &update,
        format!(
            "symbol,date,timing,fiscal_quarter,eps_estimate\n\
             AAPL,{},amc,FY2026 Q1,2.40\n\
             AMD,{},bmo,FY2026 Q4,0.95\n",
            days(3),
            days(5),
        ),
    )
    .unwrap();
    let stdout = imported("earnings", &update, data_dir);
    assert!(stdout.contains(": 5 rows, 1 replaced)"), "{stdout}");
    let calendar = poll(
        &address,
        "/api/mcp/data/earnings-calendar?days_ahead=10",
        &token,
        |b| b["data"]["total_count"] == 3,
    );
    let aapl = rows(&calendar, "earnings")
        .iter()
        .find(|r| r["symbol"] == "AAPL")
        .unwrap();
    assert_eq!(aapl["eps_estimate"], 2.40);
    let more = data_dir.join("more.csv");
    std::fs::write(
        &more,
        format!(
            "date,time,event,importance,estimate\n{},10:00,ISM Services,medium,52.1\n",
            days(6),
        ),
    )
    .unwrap();
    imported("economic-calendar", &more, data_dir);
    let body = poll(&address, &path, &token, |b| b["data"]["total_count"] == 3);
    assert_eq!(body["data"]["medium_count"], 1);
}

/// Reports and releases imported over a seeded store join the simulated ones, and a later
/// backfill, which rewrites both tables from the simulator, lays the imports over them again:
/// in the table of the session it seeds (what that session's close reads) as in the newest.
#[test]
fn imported_reports_and_releases_survive_a_backfill() {
    let dir = TempDir::new("import-calendars-backfill");
    let data_dir = dir.path();
    let session = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    backfill(data_dir.to_str().unwrap(), "2026-11-20", 5, 1);
    // The five underlyings are indices and funds: no simulated report, but macro releases.
    let simulated_reports = stored::<EarningsEvent>(data_dir).len();
    let simulated_releases = stored::<EconomicEvent>(data_dir).len();
    assert!(simulated_releases > 0);

    let earnings = data_dir.join("earnings.csv");
    std::fs::write(
        &earnings,
        "symbol,date,timing,fiscal_quarter,eps_estimate\nQQQQ,2027-02-02,amc,FY2027 Q1,0.42\n",
    )
    .unwrap();
    imported("earnings", &earnings, data_dir);
    let economic = data_dir.join("economic.csv");
    std::fs::write(
        &economic,
        "date,time,event,importance\n2027-02-03,10:00,Imported Release,medium\n",
    )
    .unwrap();
    imported("economic-calendar", &economic, data_dir);

    let check = |when: &str, on: NaiveDate| {
        let reports: Vec<EarningsEvent> = stored_on(data_dir, on);
        assert_eq!(reports.len(), simulated_reports + 1, "{when}");
        assert!(reports.iter().any(|r| r.symbol == "QQQQ"), "{when}");
        let releases: Vec<EconomicEvent> = stored_on(data_dir, on);
        assert_eq!(releases.len(), simulated_releases + 1, "{when}");
        assert!(
            releases.iter().any(|r| r.event == "Imported Release"),
            "{when}"
        );
    };
    check("after the imports", NaiveDate::MAX);
    backfill(data_dir.to_str().unwrap(), "2026-11-20", 5, 1);
    check("after a second backfill", NaiveDate::MAX);
    check("the seeded session's table", session);
}
