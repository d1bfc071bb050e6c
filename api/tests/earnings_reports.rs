//! The per-report earnings endpoints through the real router: `/earnings-history`,
//! `/post-earnings-drift`, `/iv-crush` and `/earnings-verdict`, their figures recomputed here
//! from the gaps, closes and IVs the fixture sets, with the point-in-time cut (bars, reports
//! and IVs stored after the clock's date are never seen) and the edges (no report, a report
//! today, a report beyond 30 days, clamped bounds, an unknown ticker).

mod common;
mod exposure_support;

use std::f64::consts::PI;

use axum::http::StatusCode;
use chrono::{Datelike, NaiveDate, TimeDelta, Weekday};
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{MemoryMarket, app, assert_close, market, num, quoted_at};
use optics_api::market::SessionBar;
use optics_compute::time::NyseCalendar;
use optics_schemas::{EarningsEvent, EarningsTiming, VolDailyRow};
use serde_json::Value;

/// The gap of each fixture report, percent, oldest first.
const GAPS: [f64; 12] = [
    6.0, -4.0, 3.0, 8.0, -2.5, 5.0, -7.0, 1.5, 4.0, -3.5, 2.0, 6.5,
];
/// The fixture's IV on ordinary sessions and its realized vol without reactions.
const BASE_IV: f64 = 30.0;
const HV_EX: f64 = 25.0;
/// The stored front ATM IV at the close before each reaction.
const FRONT_IV: f64 = 50.0;

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// The clock's date.
fn today() -> NaiveDate {
    day(2026, 11, 20)
}

/// NYSE sessions from 2024-01-02 to 2026-11-27: a week of bars past the clock's date is
/// stored (a read as of 2026-11-20 must not see them).
fn sessions() -> Vec<NaiveDate> {
    let calendar = NyseCalendar;
    day(2024, 1, 2)
        .iter_days()
        .take_while(|d| *d <= day(2026, 11, 27))
        .filter(|d| calendar.is_trading_day(*d))
        .collect()
}

/// The reaction session index of report `k`: 20 + 60 k (the last, k = 11, on 2026-10-…).
fn reaction_index(k: usize) -> usize {
    20 + 60 * k
}

/// A session index 8 sessions before the clock's date: a reaction whose 10- and 20-session
/// drifts lie past the clock.
fn late_reaction(dates: &[NaiveDate]) -> usize {
    dates.partition_point(|d| *d <= today()) - 1 - 7
}

/// Bars: closes drift by a fixed small pattern, every open is the previous close except on
/// reaction sessions, where it is the previous close moved by the report's gap.
fn bars() -> Vec<SessionBar> {
    let dates = sessions();
    let late = late_reaction(&dates);
    let mut out = Vec::new();
    let mut prev_close = 200.0;
    for (i, date) in dates.iter().enumerate() {
        let gap = (0..GAPS.len())
            .find(|k| reaction_index(*k) == i)
            .map(|k| GAPS[k])
            .or((i == late).then_some(-5.0));
        let open = prev_close * (1.0 + gap.unwrap_or(0.0) / 100.0);
        let close = open * (1.0 + 0.004 * ((i % 7) as f64 - 3.0) / 3.0);
        out.push(SessionBar {
            date: *date,
            open,
            high: open.max(close),
            low: open.min(close),
            close,
            volume: 1_000,
        });
        prev_close = close;
    }
    out
}

/// Report `k`: after the close of the session before its reaction for even k, before the
/// open of the reaction session for odd k; EPS beats when the gap is up, except report 3.
fn reports() -> Vec<EarningsEvent> {
    let dates = sessions();
    let report = |date: NaiveDate, timing, estimate: f64, actual: Option<f64>| EarningsEvent {
        symbol: "AAPL".to_owned(),
        report_date: date,
        timing,
        fiscal_quarter: format!("Q{}", date.month().div_ceil(3)),
        eps_estimate: estimate,
        eps_actual: actual,
        revenue_estimate: None,
        revenue_actual: None,
    };
    let mut out: Vec<EarningsEvent> = GAPS
        .iter()
        .enumerate()
        .map(|(k, gap)| {
            let estimate = 1.0 + 0.1 * k as f64;
            let beat = (*gap > 0.0) != (k == 3);
            let actual = estimate + if beat { 0.05 } else { -0.05 };
            let (date, timing) = if k % 2 == 0 {
                (dates[reaction_index(k) - 1], EarningsTiming::AfterClose)
            } else {
                (dates[reaction_index(k)], EarningsTiming::BeforeOpen)
            };
            report(date, timing, estimate, Some(actual))
        })
        .collect();
    // Reacted 8 sessions before the clock (its drift is cut at the clock's date).
    out.push(report(
        dates[late_reaction(&dates)],
        EarningsTiming::BeforeOpen,
        2.5,
        Some(2.4),
    ));
    // Next Monday, before the open, with an actual already in the file: the read as of Friday
    // must not show it anywhere.
    out.push(report(
        day(2026, 11, 23),
        EarningsTiming::BeforeOpen,
        2.6,
        Some(9.9),
    ));
    out
}

/// The first Friday after `date`: the fixture's stored front expiration.
fn front_after(date: NaiveDate) -> NaiveDate {
    let mut d = date + TimeDelta::days(1);
    while d.weekday() != Weekday::Fri {
        d += TimeDelta::days(1);
    }
    d
}

/// IV of report `k` at the close before its reaction and at the reaction close.
fn iv_before(k: usize) -> f64 {
    40.0 + k as f64
}
fn iv_after(k: usize) -> f64 {
    30.0 + k as f64 / 2.0
}

/// A `vol_daily` row per session: BASE_IV, except around each reaction; rows after the clock's
/// date carry 99 (never to be seen).
fn vol_rows() -> Vec<VolDailyRow> {
    let dates = sessions();
    let bars = bars();
    let as_of = quoted_at();
    dates
        .iter()
        .enumerate()
        .map(|(i, date)| {
            let mut row = VolDailyRow::new("AAPL", *date, as_of, bars[i].close);
            let mut iv = BASE_IV;
            for k in 0..GAPS.len() {
                if i + 1 == reaction_index(k) {
                    iv = iv_before(k);
                } else if i == reaction_index(k) {
                    iv = iv_after(k);
                }
            }
            if *date > today() {
                iv = 99.0;
            }
            row.iv30d_pct = Some(iv);
            row.front_expiration = Some(front_after(*date));
            row.front_atm_iv_pct = Some(if *date > today() { 99.0 } else { FRONT_IV });
            row.hv_30d_ex_earnings_pct = Some(HV_EX);
            row
        })
        .collect()
}

fn reader() -> MemoryMarket {
    let mut reader = MemoryMarket::default()
        .with(&market("AAPL", 200.0, 41, 7))
        .with(&market("MSFT", 400.0, 41, 8))
        .with(&market("NVDA", 150.0, 41, 9))
        .with(&market("SPY", 600.0, 21, 3))
        .with_bars("AAPL", bars())
        .with_vol_history("AAPL", vol_rows())
        .with_earnings("NVDA", day(2027, 1, 5))
        .with_report(EarningsEvent {
            symbol: "MSFT".to_owned(),
            report_date: today(),
            timing: EarningsTiming::BeforeOpen,
            fiscal_quarter: "Q4".to_owned(),
            eps_estimate: 3.0,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        });
    for report in reports() {
        reader = reader.with_report(report);
    }
    reader
}

async fn data(uri: &str) -> Value {
    let app = app(reader(), quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await.data()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The last `n` fixture reports that reacted by the clock's date, oldest first: (report
/// index or `None` for the late one, gap).
fn reacted(n: usize) -> Vec<(Option<usize>, f64)> {
    let mut all: Vec<(Option<usize>, f64)> = GAPS
        .iter()
        .enumerate()
        .map(|(k, g)| (Some(k), *g))
        .collect();
    all.push((None, -5.0));
    all[all.len().saturating_sub(n)..].to_vec()
}

#[tokio::test]
async fn earnings_history_lists_the_gaps_surprises_and_crush_as_of_the_clock() {
    let d = data("/earnings-history/AAPL").await;
    assert_eq!(d["num_quarters"], 8);
    let rows = d["earnings_moves"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    let expected = reacted(8);
    // Newest first: the late report, then reports 11, 10, …
    for (row, (k, gap)) in rows.iter().zip(expected.iter().rev()) {
        assert_close(num(&row["gap_move_pct"], "gap"), *gap, 1e-9, "gap");
        let up = *gap >= 0.0;
        assert_eq!(row["direction"], if up { "up" } else { "down" });
        let dollars = num(&row["next_open"], "open") - num(&row["prev_close"], "close");
        assert_close(
            num(&row["gap_move_dollar"], "$"),
            dollars,
            1e-6,
            "gap dollars",
        );
        if let Some(k) = k {
            let (b, a) = (iv_before(*k), iv_after(*k));
            assert_close(num(&row["iv_before"], "before"), b, 1e-12, "iv before");
            assert_close(num(&row["iv_after"], "after"), a, 1e-12, "iv after");
            assert_close(
                num(&row["iv_crush_pct"], "crush"),
                (b - a) / b * 100.0,
                1e-12,
                "crush",
            );
            let estimate = 1.0 + 0.1 * *k as f64;
            let beat = (*gap > 0.0) != (*k == 3);
            assert_eq!(
                row["surprise_direction"],
                if beat { "beat" } else { "miss" }
            );
            let actual = estimate + if beat { 0.05 } else { -0.05 };
            assert_close(
                num(&row["surprise_pct"], "surprise"),
                (actual - estimate) / estimate * 100.0,
                1e-9,
                "surprise",
            );
            assert_eq!(row["timing"], if k % 2 == 0 { "amc" } else { "bmo" });
        } else {
            // The late report: its reaction session's IV is an ordinary one.
            assert_close(num(&row["iv_before"], "before"), BASE_IV, 0.0, "late iv");
        }
    }
    // Point in time: the report of 2026-11-23 (actual 9.9 in the file) is not listed.
    assert!(rows.iter().all(|r| r["earnings_date"] != "2026-11-23"));
    assert!(rows.iter().all(|r| r["eps_actual"] != 9.9));
    let s = &d["statistics"];
    let gaps: Vec<f64> = expected.iter().map(|(_, g)| *g).collect();
    assert_eq!(s["total_earnings"], 8);
    assert_eq!(s["up_count"], gaps.iter().filter(|g| **g >= 0.0).count());
    let abs: Vec<f64> = gaps.iter().map(|g| g.abs()).collect();
    assert_close(
        num(&s["avg_abs_move_pct"], "abs"),
        mean(&abs),
        1e-9,
        "avg abs",
    );
    let ups: Vec<f64> = gaps.iter().copied().filter(|g| *g >= 0.0).collect();
    let downs: Vec<f64> = gaps.iter().copied().filter(|g| *g < 0.0).collect();
    assert_close(num(&s["avg_up_move_pct"], "up"), mean(&ups), 1e-9, "avg up");
    assert_close(
        num(&s["avg_down_move_pct"], "down"),
        mean(&downs),
        1e-9,
        "avg down",
    );
    assert_close(num(&s["max_down_pct"], "max down"), -7.0, 1e-9, "max down");
    // Crush over the seven reports with both IVs (the late one has BASE_IV before and after).
    let crushes: Vec<f64> = expected
        .iter()
        .map(|(k, _)| match k {
            Some(k) => (iv_before(*k) - iv_after(*k)) / iv_before(*k) * 100.0,
            None => 0.0,
        })
        .collect();
    assert_close(
        num(&s["avg_iv_crush_pct"], "crush"),
        mean(&crushes),
        1e-9,
        "avg crush",
    );
}

#[tokio::test]
async fn post_earnings_drift_measures_from_the_reaction_open_and_stops_at_the_clock() {
    let d = data("/post-earnings-drift/AAPL?quarters=40").await;
    assert_eq!(d["quarters"], 40);
    let events = d["events"].as_array().unwrap();
    assert_eq!(events.len(), 13);
    let bars = bars();
    let dates = sessions();
    let drift =
        |session: usize, h: usize| (bars[session + h - 1].close / bars[session].open - 1.0) * 100.0;
    // The oldest event is report 0.
    let oldest = events.last().unwrap();
    for h in [1, 5, 10, 20] {
        assert_close(
            num(&oldest["drift"][format!("{h}d")], "drift"),
            drift(reaction_index(0), h),
            1e-9,
            "drift",
        );
    }
    // The late event: 8 sessions to the clock, so its 10- and 20-session drifts are unknown
    // even though the store holds later bars.
    let late = &events[0];
    assert_eq!(
        late["reaction_date"],
        dates[late_reaction(&dates)].to_string()
    );
    assert!(late["drift"]["5d"].is_number());
    assert_eq!(late["drift"]["10d"], Value::Null);
    assert_eq!(late["drift"]["20d"], Value::Null);
    // Continuation at 5 sessions, by hand over the 13 events.
    let mut pairs = Vec::new();
    for (k, gap) in GAPS.iter().enumerate() {
        pairs.push((*gap, drift(reaction_index(k), 5)));
    }
    pairs.push((-5.0, drift(late_reaction(&dates), 5)));
    let continued = pairs.iter().filter(|(g, dr)| g * dr > 0.0).count();
    assert_close(
        num(&d["statistics"]["continuation_rate_5d"], "c5"),
        continued as f64 / 13.0 * 100.0,
        1e-9,
        "continuation 5d",
    );
    assert_eq!(d["statistics"]["events_by_horizon"]["20d"], 12);
    let positive: Vec<f64> = pairs
        .iter()
        .filter(|(g, _)| *g > 0.0)
        .map(|p| p.1)
        .collect();
    assert_close(
        num(&d["avg_drift_positive_gap"]["5d"], "pos"),
        mean(&positive),
        1e-9,
        "positive gap drift",
    );
    let rate = continued as f64 / 13.0 * 100.0;
    let action = if rate >= 60.0 {
        "FOLLOW_GAP"
    } else if rate <= 40.0 {
        "FADE_GAP"
    } else {
        "NO_EDGE"
    };
    assert_eq!(d["signal"]["action"], action);
}

#[tokio::test]
async fn iv_crush_estimates_from_past_reports_and_prices_the_next_one() {
    let d = data("/iv-crush/AAPL?days_before=500&days_after=10").await;
    assert_eq!(d["days_before"], 120);
    assert_eq!(d["clamped"][0]["parameter"], "days_before");
    assert_eq!(d["earnings_date"], "2026-11-23");
    assert_eq!(d["reaction_date"], "2026-11-23");
    assert_eq!(d["days_to_earnings"], 3);
    assert_eq!(d["event_expiration"], "2026-11-27");
    assert_eq!(d["reference_expiration"], "2026-12-04");
    // The nearest open expiration (today's) ends before the report.
    assert_eq!(d["is_earnings_play"], false);
    // The last twelve reports: eleven fixture reports (1…11) with a crush and the late one
    // (flat IV: 0 %).
    let mut crushes: Vec<f64> = (1..GAPS.len())
        .map(|k| (iv_before(k) - iv_after(k)) / iv_before(k) * 100.0)
        .collect();
    crushes.push(0.0);
    let crush = mean(&crushes);
    assert_close(
        num(&d["estimated_iv_crush_pct"], "crush"),
        crush,
        1e-9,
        "crush",
    );
    let current = num(&d["current_iv"], "current iv");
    assert_close(
        num(&d["estimated_iv_after_event"], "after"),
        current * (1.0 - crush / 100.0),
        1e-12,
        "iv after",
    );
    // Ten days after each reaction the IV is back at BASE_IV.
    let changes: Vec<f64> = (1..GAPS.len())
        .map(|k| (BASE_IV / iv_before(k) - 1.0) * 100.0)
        .chain([0.0])
        .collect();
    assert_close(
        num(&d["avg_iv_change_after_pct"], "after"),
        mean(&changes),
        1e-9,
        "change",
    );
    let atm = num(&d["atm_iv"], "atm");
    // The wings of the verdict read the same expirations' forward-ATM IVs.
    let verdict = data("/earnings-verdict/AAPL").await;
    assert_close(
        atm,
        num(&verdict["wings"]["event"]["atm_iv"], "event atm"),
        0.0,
        "atm",
    );
    let reference_atm = num(&verdict["wings"]["reference"]["atm_iv"], "ref atm");
    assert_close(
        num(&d["iv_premium"], "premium"),
        atm - reference_atm,
        1e-9,
        "premium",
    );
    let moved = data("/expected-move/AAPL?expiration=2026-11-27").await;
    assert_close(
        num(&d["expected_move_pct"], "move"),
        num(&moved["expected_move_pct"], "move"),
        1e-12,
        "event straddle",
    );
}

#[tokio::test]
async fn earnings_verdict_splits_the_straddle_and_scores_the_edge() {
    let d = data("/earnings-verdict/AAPL").await;
    let t = &d["timing"];
    assert_eq!(t["earnings_date"], "2026-11-23");
    assert_eq!(t["days_to_earnings"], 3);
    assert_eq!(d["verdict"]["preliminary"], false);
    // No listed expiration ends before the report with time left: the diffusion is the
    // stored realized vol without reactions.
    assert_close(
        num(&t["diffusion_iv"], "diffusion iv"),
        HV_EX,
        0.0,
        "diffusion iv",
    );
    let straddle = num(&t["straddle_move_pct"], "straddle");
    let dte = num(&t["straddle_dte"], "dte");
    assert_eq!(dte, 7.0);
    let diffusion = (2.0 / PI).sqrt() * HV_EX * ((dte - 1.0) / 365.0).sqrt();
    assert_close(
        num(&t["diffusion_move_pct"], "diffusion"),
        diffusion,
        1e-12,
        "diffusion",
    );
    let event = (straddle * straddle - diffusion * diffusion)
        .max(0.0)
        .sqrt();
    assert_close(
        num(&t["implied_move_pct"], "event"),
        event,
        1e-12,
        "event move",
    );
    assert_close(
        num(&t["event_variance_share"], "share"),
        event * event / (straddle * straddle),
        1e-12,
        "share",
    );
    // The past straddles: bought at the close before each reaction at the front IV.
    let dates = sessions();
    let mut returns = Vec::new();
    let mut abs_gaps = Vec::new();
    for (k, gap) in reacted(12) {
        let session = k.map_or(late_reaction(&dates), reaction_index);
        let before = dates[session - 1];
        let days = (front_after(before) - before).num_days() as f64;
        let priced = (2.0 / PI).sqrt() * FRONT_IV * (days / 365.0).sqrt();
        returns.push((gap.abs() - priced) / priced * 100.0);
        abs_gaps.push(gap.abs());
    }
    let e = &d["edge"];
    assert_eq!(e["reports_priced"], 12);
    assert_close(
        num(&e["avg_straddle_return"], "ret"),
        mean(&returns),
        1e-9,
        "avg return",
    );
    let hist = mean(&abs_gaps);
    assert_close(
        num(&d["historical"]["historical_avg_move_pct"], "h"),
        hist,
        1e-9,
        "hist",
    );
    let current_edge = (hist / event - 1.0) * 100.0;
    assert_close(
        num(&e["current_edge_pct"], "edge"),
        current_edge,
        1e-9,
        "current edge",
    );
    let score = (50.0 + (mean(&returns) + current_edge) / 2.0 / 2.0).clamp(0.0, 100.0);
    assert_close(num(&e["edge_score"], "score"), score, 1e-9, "edge score");
    let signal = if score >= 60.0 {
        "BUY_STRADDLE"
    } else if score <= 40.0 {
        "SELL_STRADDLE"
    } else {
        "NEUTRAL"
    };
    assert_eq!(d["verdict"]["signal"], signal);
    assert_eq!(d["verdict"]["confidence"], d["confidence"]);
    assert!(!d["reasons"].as_array().unwrap().is_empty());
    assert_eq!(d["wings"]["event"]["expiration"], "2026-11-27");
    assert_eq!(d["wings"]["reference"]["expiration"], "2026-12-04");
    // The drift block reads the same 5-session continuation as /post-earnings-drift over the
    // same twelve reports.
    let drift = data("/post-earnings-drift/AAPL?quarters=12").await;
    assert_eq!(
        d["drift"]["continuation_rate_5d"],
        drift["statistics"]["continuation_rate_5d"]
    );
    assert_eq!(d["drift"]["action"], drift["signal"]["action"]);
    // Direction over the last twelve gaps.
    let ups = reacted(12).iter().filter(|(_, g)| *g >= 0.0).count();
    assert_eq!(d["direction"]["up_count"], ups);
    assert_close(
        num(&d["direction"]["confidence"], "consistency"),
        ups.max(12 - ups) as f64 / 12.0 * 100.0,
        1e-12,
        "consistency",
    );
}

#[tokio::test]
async fn verdict_edges_no_report_today_and_far_out() {
    let none = data("/earnings-verdict/SPY").await;
    assert_eq!(none["verdict"]["signal"], "NO_EARNINGS");
    assert_eq!(none["timing"], Value::Null);
    assert_eq!(none["confidence"], 0.0);
    let history = data("/earnings-history/SPY").await;
    assert!(history["earnings_moves"].as_array().unwrap().is_empty());
    assert!(history["reason"].is_string());
    let drift = data("/post-earnings-drift/SPY").await;
    assert_eq!(drift["signal"]["action"], "INSUFFICIENT_DATA");
    let crush = data("/iv-crush/SPY").await;
    assert_eq!(crush["earnings_date"], Value::Null);
    assert!(crush["reason"].as_str().unwrap().contains("no report"));

    let today_report = data("/earnings-verdict/MSFT").await;
    assert_eq!(today_report["timing"]["days_to_earnings"], 0);
    assert_eq!(today_report["timing"]["earnings_date"], "2026-11-20");
    assert_eq!(today_report["timing"]["event_expiration"], "2026-11-20");

    let far = data("/earnings-verdict/NVDA").await;
    assert_eq!(far["timing"]["days_to_earnings"], 46);
    assert_eq!(far["verdict"]["preliminary"], true);
    // No listed expiration reaches the report: no straddle, said so.
    assert_eq!(far["timing"]["implied_move_pct"], Value::Null);
    assert!(
        far["reason"]
            .as_str()
            .unwrap()
            .contains("carries the reaction")
    );
}

#[tokio::test]
async fn bounds_and_unknown_tickers() {
    let d = data("/earnings-history/AAPL?num_quarters=0").await;
    assert_eq!(d["num_quarters"], 1);
    assert_eq!(d["earnings_moves"].as_array().unwrap().len(), 1);
    let d = data("/post-earnings-drift/AAPL?quarters=99").await;
    assert_eq!(d["quarters"], 40);
    assert_eq!(d["clamped"][0]["parameter"], "quarters");
    let app = app(reader(), quoted_at());
    for path in [
        "earnings-history",
        "post-earnings-drift",
        "iv-crush",
        "earnings-verdict",
    ] {
        let answer = get(&app, &format!("/api/mcp/data/{path}/AAPLX"), &[]).await;
        let body = answer.error(StatusCode::NOT_FOUND);
        assert!(body.to_string().contains("AAPL"), "{path}: {body}");
    }
    get(&app, "/api/mcp/data/iv-crush/AAPL?days_after=x", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn every_documented_field_is_served() {
    for (slug, uri) in [
        ("earnings-history", "/earnings-history/AAPL"),
        ("post-earnings-drift", "/post-earnings-drift/AAPL"),
        ("iv-crush", "/iv-crush/AAPL"),
        ("earnings-verdict", "/earnings-verdict/AAPL"),
    ] {
        assert_documented_fields_served(slug, &data(uri).await);
    }
}
