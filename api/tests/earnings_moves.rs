//! The move endpoints of the earnings family through the real router: `/historical-moves`,
//! `/expected-vs-actual` and `/mispricing-assessment`. Every distribution is recomputed here
//! from the bars by plain loops (close ratios, a sort, linear percentiles), the assessment and
//! the composite score by hand from the documented thresholds and weights, and the composite's
//! inputs are checked against the endpoints they come from (`/iv-rank`, `/vrp`,
//! `/expected-move`). Edges: parameter bounds (clamped with a notice, 400s), too little or no
//! history (200 with a reason or `error`), no chain (424), unknown ticker (404), and a bar dated
//! after today (not history yet).

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::NaiveDate;
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{MemoryMarket, app, assert_close, market, num, quoted_at, weekdays_before};
use optics_api::market::SessionBar;
use optics_schemas::{EarningsEvent, EarningsTiming, VolDailyRow};
use serde_json::Value;

const PREFIX: &str = "/api/mcp/data";

/// Stored sessions of SPY.
const SPY_SESSIONS: usize = 320;

/// A deterministic daily log return in about ±3 % (a fixed linear congruential sequence), with
/// a 7 % jump every 50 sessions so that some moves exceed 5 %.
fn daily_return(i: usize) -> f64 {
    let x = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let noise = ((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.06;
    if i % 50 == 25 {
        noise + if i % 100 == 25 { 0.07 } else { -0.07 }
    } else {
        noise
    }
}

/// `count` sessions before today with closes from [`daily_return`].
fn sessions(count: usize) -> Vec<(NaiveDate, f64)> {
    let mut close: f64 = 100.0;
    weekdays_before(count)
        .into_iter()
        .enumerate()
        .map(|(i, date)| {
            close *= daily_return(i).exp();
            (date, close)
        })
        .collect()
}

fn bars_of(sessions: &[(NaiveDate, f64)]) -> Vec<SessionBar> {
    sessions
        .iter()
        .map(|&(date, close)| SessionBar {
            date,
            open: close,
            high: close,
            low: close,
            close,
            volume: 1_000_000,
        })
        .collect()
}

/// The `vol_daily` rows of `sessions`, with an iv30d wandering between 12 and 30 points.
fn vol_rows(symbol: &str, sessions: &[(NaiveDate, f64)]) -> Vec<VolDailyRow> {
    sessions
        .iter()
        .enumerate()
        .map(|(i, &(date, close))| {
            let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
            let mut row = VolDailyRow::new(symbol, date, as_of, close);
            row.iv30d_pct = Some(21.0 + 9.0 * ((i as f64) * 0.37).sin());
            row
        })
        .collect()
}

/// SPY: a chain, 320 stored sessions (bars and `vol_daily`), a before-open report 10 sessions
/// ago and one bar dated Monday 2026-11-23, after today. QQQ: a chain, the same `vol_daily`
/// history but only 3 bars. IWM: covered, 5 bars, no chain.
fn reader() -> MemoryMarket {
    let spy = sessions(SPY_SESSIONS);
    let mut spy_bars = bars_of(&spy);
    spy_bars.push(SessionBar {
        date: NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(),
        open: 1.0e6,
        high: 1.0e6,
        low: 1.0e6,
        close: 1.0e6,
        volume: 1,
    });
    let report_date = spy[spy.len() - 10].0;
    MemoryMarket::default()
        .with(&market("SPY", 600.0, 41, 7))
        .with(&market("QQQ", 500.0, 41, 11))
        .covering("IWM")
        .with_bars("SPY", spy_bars)
        .with_vol_history("SPY", vol_rows("SPY", &spy))
        .with_report(EarningsEvent {
            symbol: "SPY".to_owned(),
            report_date,
            timing: EarningsTiming::BeforeOpen,
            fiscal_quarter: "FY2026 Q3".to_owned(),
            eps_estimate: 1.2,
            eps_actual: Some(1.3),
            revenue_estimate: None,
            revenue_actual: None,
        })
        .with_bars("QQQ", bars_of(&spy[spy.len() - 3..]))
        .with_vol_history("QQQ", vol_rows("QQQ", &spy))
        .with_bars("IWM", bars_of(&spy[..5]))
}

async fn data(uri: &str) -> Value {
    let app = app(reader(), quoted_at());
    get(&app, &format!("{PREFIX}{uri}"), &[]).await.data()
}

async fn error(uri: &str, status: StatusCode) -> String {
    let app = app(reader(), quoted_at());
    let body = get(&app, &format!("{PREFIX}{uri}"), &[])
        .await
        .error(status);
    body["error"].as_str().unwrap().to_owned()
}

/// SPY's closes as history: the bar after today is not among them.
fn spy_closes() -> Vec<f64> {
    sessions(SPY_SESSIONS).iter().map(|s| s.1).collect()
}

/// Every `h`-session move, percent, by a plain loop.
fn moves_by_hand(closes: &[f64], h: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for t in h..closes.len() {
        out.push((closes[t] / closes[t - h] - 1.0) * 100.0);
    }
    out
}

/// numpy's default (linear) percentile.
fn percentile_by_hand(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn std_by_hand(values: &[f64]) -> f64 {
    let m = mean(values);
    (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() as f64 - 1.0)).sqrt()
}

/// Asserts a `move_analysis` block against the moves of `h` sessions over `closes`.
fn assert_block(block: &Value, closes: &[f64], h: usize) {
    let moves = moves_by_hand(closes, h);
    assert_eq!(block["days"], h);
    assert_eq!(block["sample_size"], moves.len());
    let abs: Vec<f64> = moves.iter().map(|r| r.abs()).collect();
    let what = |f: &str| format!("{h}d {f}");
    let check = |field: &str, want: f64| {
        assert_close(num(&block[field], field), want, 1e-12, &what(field));
    };
    check("avg_abs_move_pct", mean(&abs));
    check("mean_move_pct", mean(&moves));
    check("median_move_pct", percentile_by_hand(&moves, 50.0));
    check("std_dev_pct", std_by_hand(&moves));
    check("p10", percentile_by_hand(&moves, 10.0));
    check("p25", percentile_by_hand(&moves, 25.0));
    check("p75", percentile_by_hand(&moves, 75.0));
    check("p90", percentile_by_hand(&moves, 90.0));
    let max = moves.iter().copied().fold(f64::MIN, f64::max);
    let min = moves.iter().copied().fold(f64::MAX, f64::min);
    check("max_up_move_pct", max);
    check("max_down_move_pct", min);
    let large = moves.iter().filter(|r| r.abs() > 5.0).count() as f64;
    check("pct_moves_above_5", large / moves.len() as f64 * 100.0);
    assert_eq!(block["reason"], Value::Null);
}

#[tokio::test]
async fn historical_moves_are_the_distribution_of_every_rolling_window() {
    let closes = spy_closes();
    let d = data("/historical-moves/SPY").await;
    assert_eq!(d["periods"], serde_json::json!([7, 14, 21, 30]));
    for h in [7, 14, 21, 30] {
        assert_block(&d["move_analysis"][h.to_string()], &closes, h);
    }
    // Windows start at the first stored session and end at the last one before today: the bar
    // dated after today is not history.
    let dates = weekdays_before(SPY_SESSIONS);
    let block = &d["move_analysis"]["30"];
    assert_eq!(block["first_session"], dates[0].to_string());
    assert_eq!(block["last_session"], "2026-11-19");
    assert_eq!(d["sessions"], SPY_SESSIONS);
    assert_eq!(d["last_bar"], "2026-11-19");
    assert_eq!(d["large_move_pct"], 5.0);
    // The jumps make some 7-session moves larger than 5 %, and the sample is not all of them.
    let share = num(&d["move_analysis"]["7"]["pct_moves_above_5"], "share");
    assert!(share > 0.0 && share < 100.0, "{share}");
    assert!(
        d["basis"]
            .as_str()
            .unwrap()
            .contains("close_t / close_(t-h)")
    );
    assert_eq!(d["reason"], Value::Null);
    assert_eq!(d["clamped"], serde_json::json!([]));
    assert!(d["data_freshness"].is_string());
}

#[tokio::test]
async fn historical_moves_periods_are_sorted_deduplicated_and_clamped() {
    let closes = spy_closes();
    let d = data("/historical-moves/SPY?periods=30,1,30,252").await;
    assert_eq!(d["periods"], serde_json::json!([1, 30, 252]));
    for h in [1, 30, 252] {
        assert_block(&d["move_analysis"][h.to_string()], &closes, h);
    }
    assert_eq!(d["move_analysis"].as_object().unwrap().len(), 3);

    let d = data("/historical-moves/SPY?periods=0,253").await;
    assert_eq!(d["periods"], serde_json::json!([1, 252]));
    let clamped = d["clamped"].as_array().unwrap();
    assert_eq!(clamped.len(), 2);
    assert_eq!(clamped[0]["parameter"], "periods");
    assert_eq!(clamped[0]["requested"], "0");
    assert_eq!(clamped[0]["used"], 1);
    assert_eq!(clamped[1]["requested"], "253");
    assert_eq!(clamped[1]["used"], 252);
    assert_eq!(clamped[1]["max"], 252);

    let message = error(
        "/historical-moves/SPY?periods=1,2,3,4,5,6,7,8,9",
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(message.contains("at most 8"), "{message}");
    for junk in ["abc", "7,x", "7.5", "-"] {
        let message = error(
            &format!("/historical-moves/SPY?periods={junk}"),
            StatusCode::BAD_REQUEST,
        )
        .await;
        assert!(message.contains("periods"), "{junk}: {message}");
    }
    error("/historical-moves/SPY?period=7", StatusCode::BAD_REQUEST).await;
}

#[tokio::test]
async fn historical_moves_without_enough_bars_answer_nulls_with_a_reason() {
    // QQQ holds 3 closes: a 2-session horizon has one move, a 7-session one none.
    let d = data("/historical-moves/QQQ?periods=2,7").await;
    let short = &d["move_analysis"]["2"];
    assert_eq!(short["sample_size"], 1);
    assert_eq!(short["std_dev_pct"], Value::Null, "one move has no spread");
    assert!(short["avg_abs_move_pct"].is_number());
    let none = &d["move_analysis"]["7"];
    assert_eq!(none["sample_size"], 0);
    for field in [
        "avg_abs_move_pct",
        "p10",
        "p90",
        "max_up_move_pct",
        "first_session",
    ] {
        assert_eq!(none[field], Value::Null, "{field}");
    }
    let reason = none["reason"].as_str().unwrap();
    assert!(
        reason.contains("3 daily closes") && reason.contains("at least 8"),
        "{reason}"
    );
    assert_eq!(d["reason"], Value::Null);

    // No bars at all: every block null and a top-level reason, still a 200.
    let app = app(reader().covering("DIA"), quoted_at());
    let d = get(&app, &format!("{PREFIX}/historical-moves/DIA"), &[])
        .await
        .data();
    assert_eq!(d["sessions"], 0);
    assert_eq!(d["move_analysis"]["30"]["avg_abs_move_pct"], Value::Null);
    assert!(d["reason"].as_str().unwrap().contains("no daily bars"));

    let message = error("/historical-moves/ZZZZ", StatusCode::NOT_FOUND).await;
    assert!(message.contains("ZZZZ"), "{message}");
}

/// The nearest expiration after Friday 2026-11-20 is Friday 2026-11-27: Monday 23, Tuesday 24,
/// Wednesday 25 and Friday 27 are sessions, Thursday 26 (Thanksgiving) is not.
const SESSIONS_TO_EXPIRATION: usize = 4;

#[tokio::test]
async fn expected_vs_actual_compares_the_straddle_with_the_average_move_of_its_horizon() {
    let d = data("/expected-vs-actual/SPY").await;
    let em = data("/expected-move/SPY").await;
    assert_eq!(d["expiration"], "2026-11-27");
    assert_eq!(d["expiration"], em["expiration"]);
    assert_eq!(d["days_to_expiration"], SESSIONS_TO_EXPIRATION);
    assert_eq!(d["dte"], 7);
    for (field, from) in [
        ("expected_move_pct", "expected_move_pct"),
        ("straddle_price", "straddle_price"),
        ("stock_price", "stock_price"),
        ("expected_move_dollars", "expected_move_dollars"),
    ] {
        assert_eq!(d[field], em[from], "{field}");
    }
    let expected = num(&d["expected_move_pct"], "expected");
    let expected_by_hand =
        num(&em["straddle_price"], "straddle") / num(&em["stock_price"], "spot") * 100.0;
    assert_close(expected, expected_by_hand, 1e-12, "straddle / spot");

    let moves = moves_by_hand(&spy_closes(), SESSIONS_TO_EXPIRATION);
    let historical = mean(&moves.iter().map(|r| r.abs()).collect::<Vec<_>>());
    assert_close(
        num(&d["historical_avg_move_pct"], "hist"),
        historical,
        1e-12,
        "historical average",
    );
    assert_eq!(d["sample_size"], moves.len());
    assert_close(
        num(&d["difference_pct"], "diff"),
        expected - historical,
        1e-12,
        "difference",
    );
    let ratio = expected / historical;
    assert_close(num(&d["ratio"], "ratio"), ratio, 1e-12, "ratio");
    let assessment = if ratio >= 1.15 {
        "OVERPRICED"
    } else if ratio <= 0.85 {
        "UNDERPRICED"
    } else {
        "FAIRLY_PRICED"
    };
    assert_eq!(d["assessment"], assessment);
    let rule = d["assessment_rule"].as_str().unwrap();
    assert!(rule.contains(">= 1.15: OVERPRICED") && rule.contains("<= 0.85: UNDERPRICED"));
    assert_eq!(d["error"], Value::Null);
    assert_eq!(d["history_last_session"], "2026-11-19");
    assert_eq!(d["trade_date"], "2026-11-20");

    // The same figure is historical-moves' average for that horizon.
    let h = data(&format!(
        "/historical-moves/SPY?periods={SESSIONS_TO_EXPIRATION}"
    ))
    .await;
    assert_eq!(
        h["move_analysis"][SESSIONS_TO_EXPIRATION.to_string()]["avg_abs_move_pct"],
        d["historical_avg_move_pct"]
    );
}

#[tokio::test]
async fn expected_vs_actual_without_history_is_a_200_with_an_error_sentence() {
    // QQQ: a chain but 3 closes, too few for a 4-session move.
    let d = data("/expected-vs-actual/QQQ").await;
    assert!(d["expected_move_pct"].is_number());
    for field in [
        "historical_avg_move_pct",
        "difference_pct",
        "ratio",
        "assessment",
    ] {
        assert_eq!(d[field], Value::Null, "{field}");
    }
    assert_eq!(d["sample_size"], 0);
    let sentence = d["error"].as_str().unwrap();
    assert!(
        sentence.contains("3 daily closes") && sentence.contains("4 trading sessions"),
        "{sentence}"
    );
    // No chain yet: 424, as every chain endpoint; unknown ticker: 404.
    error("/expected-vs-actual/IWM", StatusCode::FAILED_DEPENDENCY).await;
    error("/expected-vs-actual/ZZZZ", StatusCode::NOT_FOUND).await;
    error("/expected-vs-actual/SPY?periods=7", StatusCode::BAD_REQUEST).await;
}

/// The composite from its three inputs, written out from the documented formulas.
fn score_by_hand(iv_rank: Option<f64>, vrp: Option<f64>, ratio: Option<f64>) -> (f64, f64, f64) {
    let terms = [
        (vrp.map(|v| (100.0 * v / 10.0).clamp(-100.0, 100.0)), 0.40),
        (
            iv_rank.map(|r| (2.0 * (r - 50.0)).clamp(-100.0, 100.0)),
            0.30,
        ),
        (
            ratio.map(|m| (100.0 * (m - 1.0) / 0.5).clamp(-100.0, 100.0)),
            0.30,
        ),
    ];
    let (mut ws, mut w, mut wabs) = (0.0, 0.0, 0.0);
    for (s, weight) in terms {
        if let Some(s) = s {
            ws += weight * s;
            w += weight;
            wabs += weight * f64::abs(s);
        }
    }
    let agreement = if wabs > 0.0 { ws.abs() / wabs } else { 0.0 };
    (ws / w, 100.0 * agreement * w, w)
}

fn signal_by_hand(score: f64) -> &'static str {
    if score >= 25.0 {
        "SELL_PREMIUM"
    } else if score <= -25.0 {
        "BUY_PREMIUM"
    } else {
        "NEUTRAL"
    }
}

/// Realized vol over the last 30 returns, × √252 × 100.
fn hv30_by_hand(closes: &[f64]) -> f64 {
    let tail = &closes[closes.len() - 31..];
    let returns: Vec<f64> = tail.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
    std_by_hand(&returns) * 252f64.sqrt() * 100.0
}

#[tokio::test]
async fn mispricing_weighs_the_volatility_endpoints_figures_into_one_signal() {
    let d = data("/mispricing-assessment/SPY").await;
    let c = &d["components"];
    // Inputs as their own endpoints answer them.
    let rank = data("/iv-rank/SPY").await;
    assert_eq!(c["iv_rank"], rank["iv_rank"]);
    assert_eq!(c["iv_percentile"], rank["iv_percentile"]);
    assert_eq!(c["current_iv"], rank["current_iv"]);
    let vrp = data("/vrp/SPY").await;
    assert_eq!(c["current_iv"], vrp["implied_volatility"]);
    assert_eq!(c["vrp"], vrp["volatility_risk_premium"]);
    assert_eq!(c["earnings_in_window"], true, "a report 10 sessions ago");
    assert_eq!(c["earnings_in_window"], vrp["earnings_in_window"]);
    let eva = data("/expected-vs-actual/SPY").await;
    assert_eq!(c["expected_move_pct"], eva["expected_move_pct"]);
    assert_eq!(c["historical_avg_move_pct"], eva["historical_avg_move_pct"]);
    assert_eq!(c["move_ratio"], eva["ratio"]);
    assert_eq!(c["days_to_expiration"], SESSIONS_TO_EXPIRATION);
    assert_eq!(c["expiration"], "2026-11-27");
    // The realized leg and the premium by hand.
    let hv = hv30_by_hand(&spy_closes());
    assert_close(num(&c["hv"], "hv"), hv, 1e-12, "hv");
    let current = num(&c["current_iv"], "iv");
    assert_close(num(&c["vrp"], "vrp"), current - hv, 1e-12, "vrp");
    assert!(c["iv_basis"].as_str().unwrap().contains("iv30d"));
    assert!(c["hv_basis"].as_str().unwrap().contains("sqrt(252)"));

    // The composite by hand.
    let (score, confidence, coverage) = score_by_hand(
        Some(num(&c["iv_rank"], "rank")),
        Some(current - hv),
        Some(num(&c["move_ratio"], "ratio")),
    );
    assert!((coverage - 1.0).abs() < 1e-12);
    assert_close(num(&d["mispricing_score"], "score"), score, 1e-12, "score");
    assert_close(
        num(&d["confidence"], "conf"),
        confidence,
        1e-12,
        "confidence",
    );
    assert_eq!(d["signal"], signal_by_hand(score));
    assert_close(num(&d["weight_coverage"], "cov"), 1.0, 1e-12, "coverage");
    let scores = &d["component_scores"];
    assert_eq!(scores["vrp"]["weight"], 0.4);
    assert_eq!(scores["iv_rank"]["weight"], 0.3);
    assert_eq!(scores["expected_vs_actual"]["weight"], 0.3);
    assert_close(
        num(&scores["iv_rank"]["score"], "rank score"),
        (2.0 * (num(&c["iv_rank"], "rank") - 50.0)).clamp(-100.0, 100.0),
        1e-12,
        "iv_rank score",
    );
    assert!(
        scores["vrp"]["formula"]
            .as_str()
            .unwrap()
            .contains("/ 10 points")
    );
    assert_close(
        num(&d["weights_used"]["vrp"], "w"),
        0.4,
        1e-12,
        "vrp weight",
    );
    assert!(
        d["signal_rule"]
            .as_str()
            .unwrap()
            .contains(">= 25: SELL_PREMIUM")
    );
    assert_eq!(d["reason"], Value::Null);

    // The distribution used is historical-moves' block for the expiration's horizon.
    let h = data(&format!(
        "/historical-moves/SPY?periods={SESSIONS_TO_EXPIRATION}"
    ))
    .await;
    assert_eq!(
        d["historical_moves"],
        h["move_analysis"][SESSIONS_TO_EXPIRATION.to_string()]
    );
}

#[tokio::test]
async fn mispricing_renormalises_the_weights_when_a_term_is_missing() {
    // QQQ: IV history and closes for rank and VRP, but 3 bars: no move term.
    let d = data("/mispricing-assessment/QQQ").await;
    let c = &d["components"];
    assert_eq!(c["move_ratio"], Value::Null);
    assert_eq!(c["historical_avg_move_pct"], Value::Null);
    assert!(c["expected_move_pct"].is_number());
    let scores = &d["component_scores"];
    assert_eq!(scores["expected_vs_actual"]["score"], Value::Null);
    assert!(
        scores["expected_vs_actual"]["reason"]
            .as_str()
            .unwrap()
            .contains("3 daily closes")
    );
    assert_eq!(d["weights_used"]["expected_vs_actual"], 0.0);
    assert_close(
        num(&d["weights_used"]["vrp"], "w"),
        0.4 / 0.7,
        1e-12,
        "vrp weight renormalised",
    );
    assert_close(
        num(&d["weights_used"]["iv_rank"], "w"),
        0.3 / 0.7,
        1e-12,
        "rank weight renormalised",
    );
    assert_close(num(&d["weight_coverage"], "cov"), 0.7, 1e-12, "coverage");
    let (score, confidence, _) = score_by_hand(
        Some(num(&c["iv_rank"], "rank")),
        Some(num(&c["vrp"], "vrp")),
        None,
    );
    assert_close(num(&d["mispricing_score"], "score"), score, 1e-12, "score");
    assert_close(
        num(&d["confidence"], "conf"),
        confidence,
        1e-12,
        "confidence",
    );
    assert_eq!(d["signal"], signal_by_hand(score));
    assert!(
        d["reason"]
            .as_str()
            .unwrap()
            .starts_with("expected_vs_actual:")
    );
    assert_eq!(d["historical_moves"]["sample_size"], 0);

    error("/mispricing-assessment/IWM", StatusCode::FAILED_DEPENDENCY).await;
    error("/mispricing-assessment/ZZZZ", StatusCode::NOT_FOUND).await;
}

#[tokio::test]
async fn every_documented_field_is_served() {
    for (slug, uri) in [
        ("historical-moves", "/historical-moves/SPY"),
        ("expected-vs-actual", "/expected-vs-actual/SPY"),
        ("mispricing-assessment", "/mispricing-assessment/SPY"),
    ] {
        assert_documented_fields_served(slug, &data(uri).await);
    }
}
