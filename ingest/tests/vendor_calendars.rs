//! Earnings and economic calendar files: the samples read field by field, the header rules
//! (any order and case, aliases, defaults, unknown columns ignored) and each bad line
//! rejected with its file, line and reason, nothing of the file committed.

mod vendor_support;

use chrono::{NaiveDate, NaiveTime};
use optics_ingest::vendor::{
    ImportError, ImportKind, ImportOptions, MemorySink, Reason, import_reader,
};
use optics_schemas::{EarningsEvent, EarningsTiming, EconomicEvent, Importance};
use vendor_support::{data, date, import_sample, rejected_in_batches};

/// Imports `text` in batches of one row (earlier lines are staged before the bad one) and
/// checks nothing was committed.
fn rejected(text: &str, kind: &ImportKind) -> ImportError {
    rejected_in_batches(text, kind, 1)
}

fn read(text: &str, kind: &ImportKind) -> MemorySink {
    let mut sink = MemorySink::new();
    import_reader(
        text.as_bytes(),
        "file.csv",
        None,
        kind,
        &mut sink,
        ImportOptions::default(),
    )
    .unwrap();
    sink
}

#[test]
fn earnings_sample_imports_field_by_field() {
    let (summary, sink) = import_sample("earnings_sample.csv", &ImportKind::Earnings);
    assert_eq!(
        (summary.kind, summary.lines, summary.rows),
        ("earnings", 4, 4)
    );
    let report = |symbol: &str, day: NaiveDate, timing, quarter: &str, est, act, rev_est, rev| {
        EarningsEvent {
            symbol: symbol.into(),
            report_date: day,
            timing,
            fiscal_quarter: quarter.into(),
            eps_estimate: est,
            eps_actual: act,
            revenue_estimate: rev_est,
            revenue_actual: rev,
        }
    };
    let want = [
        report(
            "AAPL",
            date(2026, 10, 29),
            EarningsTiming::AfterClose,
            "FY2026 Q4",
            1.76,
            Some(1.85),
            Some(101_900_000_000.0),
            Some(102_470_000_000.0),
        ),
        report(
            "MSFT",
            date(2026, 10, 28),
            EarningsTiming::AfterClose,
            "FY2027 Q1",
            3.67,
            None,
            Some(77_300_000_000.0),
            None,
        ),
        report(
            "JPM",
            date(2026, 10, 14),
            EarningsTiming::BeforeOpen,
            "2026 Q3",
            4.85,
            Some(5.07),
            None,
            None,
        ),
        report(
            "NVDA",
            date(2026, 11, 19),
            EarningsTiming::Unknown,
            "FY2027 Q3",
            1.25,
            None,
            None,
            None,
        ),
    ];
    let got: Vec<&EarningsEvent> = sink.earnings().collect();
    assert_eq!(got, want.iter().collect::<Vec<_>>());
}

#[test]
fn earnings_headers_in_any_order_and_case_with_optional_columns_left_out() {
    let text = "Fiscal Quarter,EPS_Estimate,Timing,Note,Report Date,Symbol\n\
                Q3,0.5,BMO,anything,11/20/2026,amd\n";
    let sink = read(text, &ImportKind::Earnings);
    let got: Vec<&EarningsEvent> = sink.earnings().collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].symbol, "AMD");
    assert_eq!(got[0].report_date, date(2026, 11, 20));
    assert_eq!(got[0].timing, EarningsTiming::BeforeOpen);
    assert_eq!(
        (
            got[0].eps_actual,
            got[0].revenue_estimate,
            got[0].revenue_actual
        ),
        (None, None, None)
    );
}

#[test]
fn a_bad_earnings_line_names_its_line_and_keeps_nothing() {
    let good = std::fs::read_to_string(data("earnings_sample.csv")).unwrap();
    // Line 3 (the second report) with a timing that is not bmo, amc or tbd.
    let text = good.replacen("AMC", "during", 1);
    let err = rejected(&text, &ImportKind::Earnings);
    assert_eq!(err.line, 3);
    assert_eq!(
        err.to_string(),
        "bad.csv:3: column `timing`: \"during\" is not bmo, amc or tbd"
    );
    // Other bad values, each on line 2.
    let header = good.lines().next().unwrap();
    for (line, want) in [
        (
            "AAPL,2026-13-01,amc,Q4,1.0,,,",
            Reason::BadDate {
                column: "date",
                value: "2026-13-01".into(),
            },
        ),
        ("AAPL,2026-10-29,amc,Q4,,,,", Reason::Empty("eps_estimate")),
        (
            "AAPL,2026-10-29,amc,Q4,1.0,x,,",
            Reason::BadNumber {
                column: "eps_actual",
                value: "x".into(),
            },
        ),
        (
            "AAPL,2026-10-29,amc,,1.0,,,",
            Reason::Empty("fiscal_quarter"),
        ),
    ] {
        let err = rejected(&format!("{header}\n{line}\n"), &ImportKind::Earnings);
        assert_eq!((err.line, &err.reason), (2, &want), "{line}");
    }
    // Negative revenue breaks the schema's rule, reported on its line.
    let err = rejected(
        &format!("{header}\nAAPL,2026-10-29,amc,Q4,1.0,,-5,\n"),
        &ImportKind::Earnings,
    );
    assert_eq!(err.line, 2, "{err}");
    // A required column missing: line 1, named.
    let err = rejected(
        "symbol,date,fiscal_quarter,eps_estimate\nAAPL,2026-10-29,Q4,1.0\n",
        &ImportKind::Earnings,
    );
    assert_eq!((err.line, err.reason), (1, Reason::MissingColumn("timing")));
}

#[test]
fn economic_sample_imports_field_by_field() {
    let (summary, sink) = import_sample("economic_sample.csv", &ImportKind::EconomicCalendar);
    assert_eq!((summary.kind, summary.rows), ("economic-calendar", 4));
    let text = |s: &str| Some(s.to_owned());
    let time = |h, m| NaiveTime::from_hms_opt(h, m, 0);
    let want = [
        EconomicEvent {
            date: date(2026, 11, 6),
            time: time(8, 30),
            country: "US".into(),
            event: "Nonfarm Payrolls".into(),
            importance: Importance::High,
            actual: text("254K"),
            forecast: text("150K"),
            previous: text("159K"),
        },
        EconomicEvent {
            date: date(2026, 11, 13),
            time: time(8, 30),
            country: "US".into(),
            event: "CPI YoY".into(),
            importance: Importance::High,
            actual: text("3.2%"),
            forecast: text("3.1%"),
            previous: text("3.0%"),
        },
        EconomicEvent {
            date: date(2026, 11, 18),
            time: time(14, 0),
            country: "US".into(),
            event: "FOMC Minutes".into(),
            importance: Importance::Medium,
            actual: None,
            forecast: None,
            previous: None,
        },
        EconomicEvent {
            date: date(2026, 11, 19),
            time: None,
            country: "EU".into(),
            event: "ECB Account of the Monetary Policy Meeting".into(),
            importance: Importance::Low,
            actual: None,
            forecast: None,
            previous: None,
        },
    ];
    let got: Vec<&EconomicEvent> = sink.economic().collect();
    assert_eq!(got, want.iter().collect::<Vec<_>>());
}

#[test]
fn economic_files_may_head_the_forecast_estimate_and_leave_the_country_out() {
    let text = "Event,Importance,Date,Estimate,Source\nISM Manufacturing,low,2026-12-01,48.5,x\n";
    let sink = read(text, &ImportKind::EconomicCalendar);
    let got: Vec<&EconomicEvent> = sink.economic().collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].country, "US");
    assert_eq!(got[0].forecast.as_deref(), Some("48.5"));
    assert_eq!((got[0].time, got[0].actual.as_deref()), (None, None));
    // Both names at once is ambiguous.
    let err = rejected(
        "date,event,importance,forecast,estimate\n2026-12-01,ISM,low,1,2\n",
        &ImportKind::EconomicCalendar,
    );
    assert_eq!(err.line, 1);
    assert!(matches!(err.reason, Reason::DuplicateColumn(_)), "{err}");
}

#[test]
fn a_bad_economic_line_names_its_line_and_keeps_nothing() {
    let header = "date,time,country,event,importance,actual,forecast,previous";
    for (line, column) in [
        ("2026-11-06,08:30,US,NFP,urgent,,,", "importance"),
        ("2026-11-06,8.30,US,NFP,high,,,", "time"),
        ("2026-11-06,25:00,US,NFP,high,,,", "time"),
        ("2026-11-06,08:30,USA,NFP,high,,,", "country"),
    ] {
        let text = format!("{header}\n2026-11-05,08:30,US,Claims,low,,,\n{line}\n");
        let err = rejected(&text, &ImportKind::EconomicCalendar);
        assert_eq!(err.line, 3, "{line}: {err}");
        assert!(
            matches!(&err.reason, Reason::Invalid { column: c, .. } if *c == column),
            "{line}: {err}"
        );
    }
    let err = rejected(
        &format!("{header}\n2026-11-06,08:30,US,,high,,,\n"),
        &ImportKind::EconomicCalendar,
    );
    assert_eq!((err.line, err.reason), (2, Reason::Empty("event")));
}
