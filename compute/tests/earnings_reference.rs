//! Earnings and seasonality math against independent references on a real series.
//!
//! `tests/data/earnings_vectors.json` was written by `scripts/reference/earnings_vectors.py`
//! (pandas and numpy) from the S&P 500 bars bundled with `arch`, with synthetic reports and a
//! synthetic 30-day IV laid on them. Nothing in it comes from this crate.
//!
//! Tolerances: gaps, drifts, the move statistics, the crush and the seasonality figures to
//! 1e-9 relative (the same ratios and sums, pandas summing in a different order); reaction
//! sessions, counts and rates' numerators exactly.

mod reference_support;

use reference_support::{close, close_opt, date, floats};

use chrono::NaiveDate;
use optics_compute::earnings::{DriftEvent, IvAroundReport, drift_path, drift_statistics};
use optics_compute::seasonality::seasonality;
use optics_compute::vol::close::reactions;
use optics_compute::vol::stats::{EarningsMove, earnings_move_stats};
use optics_schemas::{EarningsEvent, EarningsTiming};
use serde_json::Value;

struct Inputs {
    dates: Vec<NaiveDate>,
    opens: Vec<Option<f64>>,
    closes: Vec<f64>,
    iv30d: Vec<f64>,
    reports: Vec<EarningsEvent>,
}

fn inputs(v: &Value) -> Inputs {
    let i = &v["inputs"];
    Inputs {
        dates: i["dates"].as_array().unwrap().iter().map(date).collect(),
        opens: floats(&i["opens"]).into_iter().map(Some).collect(),
        closes: floats(&i["closes"]),
        iv30d: floats(&i["iv30d"]),
        reports: i["reports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| EarningsEvent {
                symbol: "SPX".to_owned(),
                report_date: date(&r["date"]),
                timing: match r["timing"].as_str().unwrap() {
                    "bmo" => EarningsTiming::BeforeOpen,
                    "amc" => EarningsTiming::AfterClose,
                    _ => EarningsTiming::Unknown,
                },
                fiscal_quarter: "Q".to_owned(),
                eps_estimate: r["eps_estimate"].as_f64().unwrap(),
                eps_actual: r["eps_actual"].as_f64(),
                revenue_estimate: None,
                revenue_actual: None,
            })
            .collect(),
    }
}

fn vectors() -> Value {
    reference_support::vectors("earnings_vectors.json")
}

#[test]
fn reactions_gaps_and_move_statistics_match_pandas() {
    let v = vectors();
    let inp = inputs(&v);
    let refs: Vec<&EarningsEvent> = inp.reports.iter().collect();
    let found = reactions(&inp.dates, &inp.opens, &inp.closes, &refs);
    let expected = v["reactions"].as_array().unwrap();
    assert_eq!(found.len(), expected.len());
    assert!(found.len() >= 10, "the vectors hold a real sample");
    for (r, e) in found.iter().zip(expected) {
        assert_eq!(r.session as u64, e["session"].as_u64().unwrap());
        assert_eq!(inp.reports[r.report].report_date, date(&e["report_date"]));
        close(r.gap_move_pct, e["gap"].as_f64().unwrap(), "gap");
    }
    let moves: Vec<EarningsMove> = found
        .iter()
        .map(|r| {
            let report = &inp.reports[r.report];
            let iv = IvAroundReport::read(
                &[(-1, inp.iv30d[r.session - 1]), (0, inp.iv30d[r.session])],
                30,
                30,
            );
            EarningsMove {
                gap_move_pct: r.gap_move_pct,
                eps_estimate: Some(report.eps_estimate),
                eps_actual: report.eps_actual,
                iv_before_pct: iv.iv_before,
                iv_after_pct: iv.iv_after,
            }
        })
        .collect();
    let s = earnings_move_stats(&moves).unwrap();
    let e = &v["statistics"];
    for (name, value) in [
        ("total_earnings", s.total_earnings),
        ("up_count", s.up_count),
        ("down_count", s.down_count),
        ("beat_count", s.beat_count),
        ("miss_count", s.miss_count),
    ] {
        assert_eq!(value as u64, e[name].as_u64().unwrap(), "{name}");
    }
    for (name, value) in [
        ("avg_move_pct", s.avg_move_pct),
        ("avg_abs_move_pct", s.avg_abs_move_pct),
        ("avg_up_move_pct", s.avg_up_move_pct),
        ("avg_down_move_pct", s.avg_down_move_pct),
        ("avg_beat_move_pct", s.avg_beat_move_pct),
        ("avg_miss_move_pct", s.avg_miss_move_pct),
        ("max_up_pct", s.max_up_pct),
        ("max_down_pct", s.max_down_pct),
        ("avg_iv_crush_pct", s.avg_iv_crush_pct),
        ("median_iv_crush_pct", s.median_iv_crush_pct),
    ] {
        close_opt(value, &e[name], name);
    }
}

#[test]
fn drift_paths_and_rates_match_pandas() {
    let v = vectors();
    let inp = inputs(&v);
    let horizons: Vec<usize> = v["drift_horizons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_u64().unwrap() as usize)
        .collect();
    let refs: Vec<&EarningsEvent> = inp.reports.iter().collect();
    let found = reactions(&inp.dates, &inp.opens, &inp.closes, &refs);
    let mut events = Vec::new();
    for (r, e) in found.iter().zip(v["drift_events"].as_array().unwrap()) {
        let path = drift_path(&inp.opens, &inp.closes, r.session, &horizons);
        for (got, want) in path.iter().zip(e["drift"].as_array().unwrap()) {
            close_opt(*got, want, "drift");
        }
        events.push(DriftEvent {
            gap_pct: r.gap_move_pct,
            drift: path,
        });
    }
    let stats = drift_statistics(&events, &horizons);
    for (s, e) in stats.iter().zip(v["drift_statistics"].as_array().unwrap()) {
        assert_eq!(s.events as u64, e["events"].as_u64().unwrap());
        close_opt(s.continuation_rate, &e["continuation_rate"], "continuation");
        close_opt(s.reversal_rate, &e["reversal_rate"], "reversal");
        close_opt(
            s.avg_drift_positive_gap,
            &e["avg_drift_positive_gap"],
            "positive",
        );
        close_opt(
            s.avg_drift_negative_gap,
            &e["avg_drift_negative_gap"],
            "negative",
        );
    }
}

#[test]
fn seasonality_matches_pandas_month_and_quarter_ends() {
    let v = vectors();
    let inp = inputs(&v);
    let closes: Vec<(NaiveDate, f64)> = inp.dates.iter().copied().zip(inp.closes).collect();
    let e = &v["seasonality"];
    let found = seasonality(&closes, e["years"].as_u64().unwrap() as u32);
    let (first, last) = found.months_measured.unwrap();
    assert_eq!(
        [first.0 as i64, first.1 as i64],
        [
            e["first_month"][0].as_i64().unwrap(),
            e["first_month"][1].as_i64().unwrap()
        ]
    );
    assert_eq!(
        [last.0 as i64, last.1 as i64],
        [
            e["last_month"][0].as_i64().unwrap(),
            e["last_month"][1].as_i64().unwrap()
        ]
    );
    for (period, by) in [
        (&found.monthly, &e["monthly"]),
        (&found.quarterly, &e["quarterly"]),
    ] {
        let by = by.as_object().unwrap();
        assert_eq!(period.len(), by.len());
        for (key, stats) in period {
            let want = &by[&key.to_string()];
            let returns = floats(&want["returns"]);
            assert_eq!(stats.returns_pct.len(), returns.len(), "{key}");
            for (a, b) in stats.returns_pct.iter().zip(&returns) {
                close(*a, *b, "period return");
            }
            close(stats.avg_return_pct, want["avg"].as_f64().unwrap(), "mean");
            close(
                stats.median_return_pct,
                want["median"].as_f64().unwrap(),
                "median",
            );
            close_opt(stats.volatility_pct, &want["std"], "std");
            close(
                stats.positive_pct,
                want["positive_pct"].as_f64().unwrap(),
                "positive",
            );
        }
    }
}
