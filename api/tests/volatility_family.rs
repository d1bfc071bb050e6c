//! The implied-volatility family through the real router: every figure recomputed here from
//! the stored sessions by plain arithmetic (sample standard deviations, ranks, linear
//! percentiles), every parameter edge (clamps with a notice, 400s, 404s) and too little history
//! answered 200 with nulls and a reason.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{DateTime, NaiveDate, Utc};
use common::get;
use exposure_support::{MemoryMarket, app, assert_close, market, num, quoted_at, weekdays_before};
use optics_api::market::SessionBar;
use optics_schemas::{EarningsEvent, EarningsTiming, VolDailyRow};
use serde_json::Value;

const PREFIX: &str = "/api/mcp/data";

/// A deterministic daily log return in about ±2 % (a fixed linear congruential sequence).
fn daily_return(i: usize) -> f64 {
    let x = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04
}

/// `count` stored sessions of `symbol` with closes from [`daily_return`] and an iv30d that
/// wanders between 12 and 30 points.
fn history(symbol: &str, count: usize) -> Vec<VolDailyRow> {
    let mut close: f64 = 100.0;
    weekdays_before(count)
        .into_iter()
        .enumerate()
        .map(|(i, date)| {
            close *= daily_return(i).exp();
            let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
            let mut row = VolDailyRow::new(symbol, date, as_of, close);
            row.iv30d_pct = Some(21.0 + 9.0 * ((i as f64) * 0.37).sin());
            // Stored HVs are passed through by the dashboard: distinct markers per window.
            row.hv_5d_pct = Some(5.0 + i as f64 / 1000.0);
            row.hv_20d_pct = Some(20.0 + i as f64 / 1000.0);
            row.hv_252d_pct = Some(252.0 + i as f64 / 1000.0);
            row.earnings_avg_abs_move_pct = Some(4.0);
            row.skew_slope_30d = Some(slope_at(i));
            row.smile_curvature_30d = Some(40.0 + 10.0 * ((i as f64) * 0.3).cos());
            row
        })
        .collect()
}

/// Bars whose closes are [`history`]'s: each session opens a gap away from the previous close
/// and trades a range around its open and close.
fn bars(symbol: &str, count: usize) -> Vec<SessionBar> {
    let rows = history(symbol, count);
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let previous = if i == 0 { row.close } else { rows[i - 1].close };
            let open = previous * (daily_return(i + 7_000) * 0.3).exp();
            let spread = 0.004 + daily_return(i + 9_000).abs() * 0.2;
            SessionBar {
                date: row.trade_date,
                open,
                high: open.max(row.close) * (1.0 + spread),
                low: open.min(row.close) * (1.0 - spread),
                close: row.close,
                volume: 1_000_000,
            }
        })
        .collect()
}

/// The stored 30-day slope of session `i`: mean-reverting around −30.
fn slope_at(i: usize) -> f64 {
    -30.0 + 5.0 * ((i as f64) * 0.2).sin() + 2.0 * daily_return(i + 3_000) * 25.0
}

fn report(symbol: &str, date: NaiveDate, timing: EarningsTiming) -> EarningsEvent {
    EarningsEvent {
        symbol: symbol.to_owned(),
        report_date: date,
        timing,
        fiscal_quarter: "FY2026 Q3".to_owned(),
        eps_estimate: 1.2,
        eps_actual: Some(1.3),
        revenue_estimate: None,
        revenue_actual: None,
    }
}

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

/// SPY with 400 stored sessions, a before-open report 10 sessions ago and one on 2026-11-24; QQQ covered with a
/// chain but 12 sessions; IWM covered without a chain.
fn reader() -> MemoryMarket {
    let spy = history("SPY", 400);
    let report_date = spy[spy.len() - 10].trade_date;
    MemoryMarket::default()
        .with(&market("SPY", 600.0, 41, 7))
        .with(&market("QQQ", 500.0, 41, 11))
        .covering("IWM")
        .with_vol_history("SPY", spy)
        .with_bars("SPY", bars("SPY", 400))
        .with_vol_history("QQQ", history("QQQ", 12))
        .with_report(report("SPY", report_date, EarningsTiming::BeforeOpen))
        .with_report(report("SPY", day(24), EarningsTiming::BeforeOpen))
}

fn now() -> DateTime<Utc> {
    quoted_at()
}

async fn data(uri: &str) -> Value {
    let app = app(reader(), now());
    get(&app, &format!("{PREFIX}{uri}"), &[]).await.data()
}

async fn error(uri: &str, status: StatusCode) -> String {
    let app = app(reader(), now());
    let body = get(&app, &format!("{PREFIX}{uri}"), &[])
        .await
        .error(status);
    body["error"].as_str().unwrap().to_owned()
}

/// Sample standard deviation (n − 1) of the last `window` log returns × √252 × 100.
fn hv_by_hand(closes: &[f64], window: usize) -> f64 {
    let tail = &closes[closes.len() - window - 1..];
    let returns: Vec<f64> = tail.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
    std_by_hand(&returns) * 252f64.sqrt() * 100.0
}

fn std_by_hand(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// numpy's default (linear) percentile.
fn percentile_by_hand(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

fn spy_closes() -> Vec<f64> {
    history("SPY", 400).iter().map(|r| r.close).collect()
}

fn spy_ivs() -> Vec<f64> {
    history("SPY", 400)
        .iter()
        .map(|r| r.iv30d_pct.unwrap())
        .collect()
}

#[tokio::test]
async fn iv_rank_ranks_today_against_its_lookback() {
    let d = data("/iv-rank/SPY").await;
    let current = num(&d["current_iv"], "current_iv");
    assert_eq!(d["iv30d"], d["current_iv"]);
    assert!(current > 5.0 && current < 80.0, "{current}");
    let ivs = spy_ivs();
    let mut lookback: Vec<f64> = ivs[ivs.len() - 251..].to_vec();
    lookback.push(current);
    let (min, max) = lookback
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let rank = ((current - min) / (max - min) * 100.0).clamp(0.0, 100.0);
    assert_close(num(&d["iv_rank"], "rank"), rank, 1e-12, "iv_rank");
    let below = lookback.iter().filter(|v| **v < current).count() as f64;
    assert_close(
        num(&d["iv_percentile"], "pct"),
        below / 252.0 * 100.0,
        1e-12,
        "iv_percentile",
    );
    assert_eq!(d["iv_percentile_1y"], d["iv_percentile"]);
    assert!(
        d["iv_percentile_source"]
            .as_str()
            .unwrap()
            .contains("iv30d")
    );
    assert_close(num(&d["iv_min_52w"], "min"), min, 1e-12, "min");
    assert_close(num(&d["iv_max_52w"], "max"), max, 1e-12, "max");
    assert_close(
        num(&d["iv_std"], "std"),
        std_by_hand(&lookback),
        1e-12,
        "std",
    );
    assert_eq!(d["observations"], 252);
    let state = d["iv_state"].as_str().unwrap();
    let expected = match rank {
        r if r < 10.0 => "VERY_LOW",
        r if r < 30.0 => "LOW",
        r if r < 70.0 => "NORMAL",
        r if r < 90.0 => "HIGH",
        _ => "VERY_HIGH",
    };
    assert_eq!(state, expected);
    // The month: 20 prior sessions and today.
    let mut month: Vec<f64> = ivs[ivs.len() - 20..].to_vec();
    month.push(current);
    let (lo, hi) = month
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    assert_close(
        num(&d["iv_rank_1m"], "1m"),
        ((current - lo) / (hi - lo) * 100.0).clamp(0.0, 100.0),
        1e-12,
        "iv_rank_1m",
    );
    assert_eq!(d["reason"], Value::Null);
    assert_eq!(d["trade_date"], "2026-11-20");
    assert!(d["iv_basis"].as_str().unwrap().contains("30 calendar days"));
    assert_eq!(d["clamped"], serde_json::json!([]));
}

#[tokio::test]
async fn iv_rank_clamps_the_lookback_and_says_why_a_short_history_has_no_rank() {
    let d = data("/iv-rank/SPY?lookback_days=5000").await;
    assert_eq!(d["lookback_days"], 1260);
    assert_eq!(d["clamped"][0]["parameter"], "lookback_days");
    assert_eq!(d["clamped"][0]["used"], 1260);
    // 400 stored sessions: the whole history and today.
    assert_eq!(d["observations"], 401);

    let d = data("/iv-rank/QQQ").await;
    assert!(d["current_iv"].is_number());
    assert_eq!(d["iv_rank"], Value::Null);
    assert_eq!(d["iv_state"], Value::Null);
    assert!(
        d["reason"].as_str().unwrap().contains("12 sessions"),
        "{}",
        d["reason"]
    );

    assert!(
        error("/iv-rank/SPY?lookback_days=abc", StatusCode::BAD_REQUEST)
            .await
            .contains("lookback_days")
    );
    assert!(
        error("/iv-rank/ZZZZ", StatusCode::NOT_FOUND)
            .await
            .contains("ZZZZ")
    );
    assert!(
        error("/iv-rank/IWM", StatusCode::FAILED_DEPENDENCY)
            .await
            .contains("IWM")
    );
}

#[tokio::test]
async fn batch_iv_rank_answers_per_symbol_and_fails_only_on_an_uncovered_one() {
    let d = data("/batch/iv-rank?tickers=SPY,iwm,QQQ,SPY").await;
    assert_eq!(d["tickers"], serde_json::json!(["SPY", "IWM", "QQQ"]));
    assert_eq!(
        (d["requested"].as_u64(), d["succeeded"].as_u64()),
        (Some(3), Some(2))
    );
    let single = data("/iv-rank/SPY").await;
    assert_eq!(d["results"]["SPY"], single);
    assert!(d["errors"]["IWM"].as_str().unwrap().contains("IWM"));
    assert!(d["note"].as_str().unwrap().contains("per symbol"));

    let message = error("/batch/iv-rank?tickers=SPY,ZZZZ", StatusCode::NOT_FOUND).await;
    assert!(message.contains("ZZZZ"), "{message}");
    let message = error("/batch/iv-rank?tickers=IWM", StatusCode::FAILED_DEPENDENCY).await;
    assert!(message.contains("No symbol in the batch"), "{message}");
    let many: Vec<String> = (0..26).map(|i| format!("A{i}")).collect();
    error(
        &format!("/batch/iv-rank?tickers={}", many.join(",")),
        StatusCode::BAD_REQUEST,
    )
    .await;
}

#[tokio::test]
async fn iv_opportunities_reads_the_z_score_of_today_and_of_each_expiration() {
    let d = data("/iv-opportunities/SPY").await;
    let current = num(&d["current_iv"], "current");
    let ivs = spy_ivs();
    let mut lookback: Vec<f64> = ivs[ivs.len() - 251..].to_vec();
    lookback.push(current);
    let mean = lookback.iter().sum::<f64>() / 252.0;
    let std = std_by_hand(&lookback);
    let z = (current - mean) / std;
    assert_close(num(&d["z_score"], "z"), z, 1e-12, "z");
    assert_close(num(&d["reversion_target"], "target"), mean, 1e-12, "target");
    assert_close(
        num(&d["expected_iv_move"], "move"),
        mean - current,
        1e-12,
        "move",
    );
    let expected = if z >= 1.5 {
        "SELL_VOL"
    } else if z <= -1.5 {
        "BUY_VOL"
    } else {
        "NO_EXTREME"
    };
    assert_eq!(d["opportunity"], expected);
    let terms = d["term_structure"].as_array().unwrap();
    assert!(!terms.is_empty());
    for t in terms {
        let atm = num(&t["atm_iv"], "atm");
        assert_close(num(&t["z_score"], "z"), (atm - mean) / std, 1e-12, "term z");
    }
}

#[tokio::test]
async fn term_structure_prices_the_straddle_nearest_spot() {
    let d = data("/term-structure/SPY?num_expirations=50").await;
    assert_eq!(d["clamped"][0]["used"], 20);
    let spot = num(&d["stock_price"], "spot");
    let market = market("SPY", 600.0, 41, 7);
    let points = d["term_structure"].as_array().unwrap();
    assert_eq!(points.len(), market.chain.open_expirations().len());
    for p in points {
        let expiration: NaiveDate = p["expiration"].as_str().unwrap().parse().unwrap();
        let rows = market.chain.rows_of(expiration);
        let atm = rows
            .iter()
            .filter(|r| r.call.mid.is_some() && r.put.mid.is_some())
            .min_by(|a, b| (a.strike - spot).abs().total_cmp(&(b.strike - spot).abs()))
            .unwrap();
        let straddle = atm.call.mid.unwrap() + atm.put.mid.unwrap();
        assert_eq!(num(&p["atm_strike"], "strike"), atm.strike);
        assert_close(
            num(&p["straddle_price"], "straddle"),
            straddle,
            1e-12,
            "straddle",
        );
        assert_close(
            num(&p["upper_1sigma"], "up"),
            spot + straddle,
            1e-12,
            "upper",
        );
        assert_close(
            num(&p["lower_2sigma"], "down"),
            spot - 2.0 * straddle,
            1e-12,
            "lower 2",
        );
        assert_close(
            num(&p["expected_move_pct"], "pct"),
            straddle / spot * 100.0,
            1e-12,
            "pct",
        );
        let iv = num(&p["atm_iv"], "iv");
        let years = atm.years_to_expiry;
        assert_close(
            num(&p["iv_expected_move"], "iv move"),
            spot * iv / 100.0 * years.sqrt(),
            1e-12,
            "iv move",
        );
    }
    let d = data("/term-structure/SPY?num_expirations=1").await;
    assert_eq!(d["term_structure"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn vrp_measures_realized_over_exactly_the_window_and_drops_the_report() {
    let closes = spy_closes();
    let d = data("/vrp/SPY?lookback_days=20").await;
    let iv = num(&d["implied_volatility"], "iv");
    let rv = hv_by_hand(&closes, 20);
    assert_close(num(&d["realized_volatility"], "rv"), rv, 1e-12, "rv");
    assert_close(
        num(&d["volatility_risk_premium"], "vrp"),
        iv - rv,
        1e-12,
        "vrp",
    );
    assert_close(num(&d["vrp_ratio"], "ratio"), iv / rv, 1e-12, "ratio");
    assert_eq!(d["hv_window"], 20);
    assert_eq!(d["hv_window_end"], "2026-11-19");
    // The before-open report 10 sessions back: its own session's return is dropped.
    assert_eq!(d["earnings_in_window"], true);
    let reaction = closes.len() - 10;
    let tail_start = closes.len() - 21;
    let returns: Vec<f64> = (tail_start + 1..closes.len())
        .filter(|i| *i != reaction)
        .map(|i| (closes[i] / closes[i - 1]).ln())
        .collect();
    assert_eq!(returns.len(), 19);
    let rv_ex = std_by_hand(&returns) * 252f64.sqrt() * 100.0;
    assert_close(
        num(&d["realized_volatility_ex_earnings"], "ex"),
        rv_ex,
        1e-12,
        "rv ex earnings",
    );
    // The premium's percentile among the last 252 stored sessions' own premiums.
    let ivs = spy_ivs();
    let history: Vec<f64> = (closes.len() - 252..closes.len())
        .map(|i| ivs[i] - hv_by_hand(&closes[..=i], 20))
        .collect();
    let below = history.iter().filter(|p| **p < iv - rv).count() as f64;
    assert_close(
        num(&d["vrp_percentile"], "pct"),
        below / 252.0 * 100.0,
        1e-12,
        "vrp percentile",
    );
    assert!(d["hv_basis"].as_str().unwrap().contains("sqrt(252)"));

    // A window the report is not in: no ex-earnings figures.
    let d = data("/vrp/SPY?lookback_days=5").await;
    assert_eq!(d["earnings_in_window"], false);
    assert_eq!(d["realized_volatility_ex_earnings"], Value::Null);
    // Clamped, and too little history for the window.
    let d = data("/vrp/QQQ?lookback_days=999").await;
    assert_eq!(d["hv_window"], 252);
    assert_eq!(d["clamped"][0]["parameter"], "lookback_days");
    assert_eq!(d["realized_volatility"], Value::Null);
    assert!(
        d["reason"].as_str().unwrap().contains("253"),
        "{}",
        d["reason"]
    );
}

#[tokio::test]
async fn vrp_timeseries_and_expirations_match_the_stored_sessions() {
    let closes = spy_closes();
    let ivs = spy_ivs();
    let d = data("/vrp/SPY/timeseries?lookback_days=15&hv_period=10").await;
    let series = d["timeseries"].as_array().unwrap();
    assert_eq!(series.len(), 15);
    for (k, point) in series.iter().enumerate() {
        let i = closes.len() - 15 + k;
        assert_close(
            num(&point["hv"], "hv"),
            hv_by_hand(&closes[..=i], 10),
            1e-12,
            "hv",
        );
        assert_close(num(&point["iv"], "iv"), ivs[i], 1e-12, "iv");
    }
    assert_eq!(d["last_date"], "2026-11-19");
    assert_eq!(d["current"]["hv_period"], 10);
    let d = data("/vrp/SPY/timeseries?hv_period=1").await;
    assert_eq!(d["current"]["hv_period"], 5);
    assert_eq!(d["timeseries"].as_array().unwrap().len(), 60);

    let d = data("/vrp/SPY/expirations?max_expirations=2").await;
    let rows = d["vrp_by_expiration"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let window = row["hv_window"].as_u64().unwrap() as usize;
        assert!((5..=252).contains(&window));
        let hv = hv_by_hand(&closes, window);
        assert_close(num(&row["hv"], "hv"), hv, 1e-12, "matched hv");
        let vrp = num(&row["iv"], "iv") - hv;
        assert_close(
            num(&row["vrp_pct"], "pct"),
            vrp / hv * 100.0,
            1e-12,
            "vrp pct",
        );
    }
    assert!(d["regime"].is_string());
}

#[tokio::test]
async fn the_cone_spreads_each_window_over_the_stored_history() {
    let closes = spy_closes();
    let d = data("/volatility-cone/SPY?periods=10,60,10").await;
    assert_eq!(d["periods"], serde_json::json!([10, 60]));
    for window in [10usize, 60] {
        let tenor = &d["volatility_cone"][format!("{window}d")];
        let series: Vec<f64> = (window..closes.len())
            .map(|i| hv_by_hand(&closes[..=i], window))
            .collect();
        assert_eq!(tenor["observations"], series.len());
        for (key, p) in [("p10", 10.0), ("p25", 25.0), ("p50", 50.0), ("p90", 90.0)] {
            assert_close(
                num(&tenor[key], key),
                percentile_by_hand(&series, p),
                1e-9,
                key,
            );
        }
        assert_close(
            num(&tenor["current_rv"], "rv"),
            hv_by_hand(&closes, window),
            1e-12,
            "current",
        );
        assert!(tenor["iv"].is_number());
    }
    assert_eq!(d["volatility_cone"]["60d"]["earnings_in_window"], true);
    assert_eq!(d["volatility_cone"]["10d"]["earnings_in_window"], true);
    assert_close(
        num(&d["realized_vol_30d"], "30"),
        hv_by_hand(&closes, 30),
        1e-12,
        "30d",
    );
    let message = error(
        "/volatility-cone/SPY?periods=2,3,4,5,6,7,8,9,10",
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(message.contains("periods"), "{message}");
    let d = data("/volatility-cone/SPY?periods=1,400").await;
    assert_eq!(d["periods"], serde_json::json!([2, 252]));
    assert_eq!(d["clamped"].as_array().unwrap().len(), 2);
    let d = data("/volatility-cone/QQQ").await;
    assert_eq!(d["volatility_cone"]["90d"]["current_rv"], Value::Null);
    assert!(d["reason"].is_string());
}

#[tokio::test]
async fn every_documented_field_is_served() {
    for (slug, uri) in [
        ("iv-rank", "/iv-rank/SPY"),
        ("iv-rank-batch", "/batch/iv-rank?tickers=SPY,IWM"),
        ("iv-opportunities", "/iv-opportunities/SPY"),
        ("term-structure", "/term-structure/SPY"),
        ("vrp", "/vrp/SPY?lookback_days=20"),
        ("vrp-expirations", "/vrp/SPY/expirations"),
        ("vrp-timeseries", "/vrp/SPY/timeseries"),
        ("volatility-cone", "/volatility-cone/SPY"),
        ("hv-regimes", "/hv-regimes/SPY"),
        ("monies", "/monies/SPY"),
        ("skew", "/skew/SPY"),
    ] {
        common::reference_fields::assert_documented_fields_served(slug, &data(uri).await);
    }
}

/// Yang–Zhang over the last `window` sessions of `bars`, written out from the paper's formula.
fn yang_zhang_by_hand(bars: &[SessionBar], window: usize) -> f64 {
    let tail = &bars[bars.len() - window - 1..];
    let o: Vec<f64> = (1..tail.len())
        .map(|t| (tail[t].open / tail[t - 1].close).ln())
        .collect();
    let c: Vec<f64> = (1..tail.len())
        .map(|t| (tail[t].close / tail[t].open).ln())
        .collect();
    let rs: f64 = tail[1..]
        .iter()
        .map(|b| {
            (b.high / b.close).ln() * (b.high / b.open).ln()
                + (b.low / b.close).ln() * (b.low / b.open).ln()
        })
        .sum::<f64>()
        / window as f64;
    let n = window as f64;
    let k = 0.34 / (1.34 + (n + 1.0) / (n - 1.0));
    let variance = std_by_hand(&o).powi(2) + k * std_by_hand(&c).powi(2) + (1.0 - k) * rs;
    (variance * 252.0).sqrt() * 100.0
}

#[tokio::test]
async fn hv_regimes_dashboard_carries_the_stored_hvs_the_range_estimator_and_a_garch_fit() {
    let closes = spy_closes();
    let spy_bars = bars("SPY", 400);
    let d = data("/hv-regimes/SPY?days=30").await;
    assert_eq!(d["view"], "dashboard");
    let series = d["timeseries"].as_array().unwrap();
    assert_eq!(series.len(), 30);
    let last = series.last().unwrap();
    assert_eq!(last["date"], "2026-11-19");
    assert_close(
        num(&last["clsHv20d"], "20"),
        20.399,
        1e-12,
        "stored hv20 passed through",
    );
    assert_close(
        num(&last["clsHv252d"], "252"),
        252.399,
        1e-12,
        "stored hv252",
    );
    assert_eq!(last["clsHv60d"], Value::Null);
    for point in d["term_structure"].as_array().unwrap() {
        let window = point["window"].as_u64().unwrap() as usize;
        assert_close(
            num(&point["cls_hv"], "cls"),
            hv_by_hand(&closes, window),
            1e-12,
            "cls",
        );
        assert_close(
            num(&point["or_hv"], "or"),
            yang_zhang_by_hand(&spy_bars, window),
            1e-10,
            "yang-zhang",
        );
    }
    assert_eq!(d["or_estimator"], "yang_zhang");
    let forecast = &d["forecast"];
    assert_eq!(forecast["model"], "GARCH(1,1)");
    assert_eq!(forecast["observations"], 399);
    let (alpha, beta) = (num(&forecast["alpha"], "a"), num(&forecast["beta"], "b"));
    assert!(
        alpha >= 0.0 && beta >= 0.0 && alpha + beta < 1.0,
        "{forecast}"
    );
    assert!(num(&forecast["forecast_vol"], "f") > 0.0);
    assert_eq!(d.get("signals"), None);

    // Too few returns for a fit: a reason, not a 500.
    let d = data("/hv-regimes/QQQ").await;
    assert_eq!(d["forecast"]["forecast_vol"], Value::Null);
    assert!(
        d["forecast"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("insufficient_history"),
        "{}",
        d["forecast"]
    );
    let message = error("/hv-regimes/SPY?view=nope", StatusCode::BAD_REQUEST).await;
    assert!(
        message.contains("dashboard, signals, decomposition, ex_earnings"),
        "{message}"
    );
    let d = data("/hv-regimes/SPY?days=3").await;
    assert_eq!(d["days"], 20);
    assert_eq!(d["clamped"][0]["parameter"], "days");
}

#[tokio::test]
async fn hv_regimes_signals_decomposition_and_ex_earnings_views() {
    let closes = spy_closes();
    let d = data("/hv-regimes/SPY?view=signals&days=100").await;
    let s = &d["signals"];
    let (short, long) = (hv_by_hand(&closes, 10), hv_by_hand(&closes, 60));
    assert_close(
        num(&s["short_long_ratio"], "ratio"),
        short / long,
        1e-12,
        "ratio",
    );
    let trend = match short / long {
        r if r >= 1.2 => "EXPANDING",
        r if r <= 0.8 => "CONTRACTING",
        _ => "STABLE",
    };
    assert_eq!(s["trend"], trend);
    let level_now = hv_by_hand(&closes, 30);
    let history: Vec<f64> = (closes.len() - 100..closes.len())
        .map(|i| hv_by_hand(&closes[..=i], 30))
        .collect();
    let below = history.iter().filter(|v| **v < level_now).count() as f64;
    assert_close(
        num(&s["level_percentile"], "pct"),
        below,
        1e-12,
        "level percentile",
    );
    // Crossovers by hand: sign changes of hv10 − hv60 over the last 100 sessions.
    let mut expected = Vec::new();
    let mut side = None;
    for i in closes.len() - 100..closes.len() {
        let diff = hv_by_hand(&closes[..=i], 10) - hv_by_hand(&closes[..=i], 60);
        let above = diff > 0.0;
        if side.is_some_and(|was| was != above) {
            expected.push(i);
        }
        side = Some(above);
    }
    assert_eq!(s["crossovers"].as_array().unwrap().len(), expected.len());

    let d = data("/hv-regimes/SPY?view=decomposition&days=60").await;
    let parts = &d["decomposition"];
    let total = num(&parts["overnight_share_pct"], "o")
        + num(&parts["intraday_share_pct"], "i")
        + num(&parts["covariance_share_pct"], "c");
    assert_close(total, 100.0, 1e-9, "shares add up");
    assert_close(
        num(&parts["close_to_close_vol"], "cc"),
        hv_by_hand(&closes, 60),
        1e-9,
        "the window's close-to-close vol",
    );
    assert_eq!(parts["earnings_sessions"], 1);
    assert!(d.get("timeseries").is_none());

    let d = data("/hv-regimes/SPY?view=ex_earnings&days=20").await;
    let days = d["ex_earnings"].as_array().unwrap();
    assert_eq!(days.len(), 20);
    let last = days.last().unwrap();
    assert_eq!(last["earnings_in_window"], true);
    assert_close(
        num(&last["cls_hv_30d"], "30"),
        hv_by_hand(&closes, 30),
        1e-12,
        "hv30",
    );
    assert!(num(&last["cls_hv_30d_ex_earnings"], "ex") != num(&last["cls_hv_30d"], "30"));
}

#[tokio::test]
async fn monies_fits_each_smile_and_compares_it_with_the_forecast() {
    let implied = data("/monies/SPY").await;
    assert_eq!(implied["surface"], "implied");
    assert_eq!(implied["delta_points"].as_array().unwrap().len(), 19);
    let market = market("SPY", 600.0, 41, 7);
    let rows = implied["expirations"].as_array().unwrap();
    assert_eq!(rows.len(), market.chain.open_expirations().len());
    let mut fitted = 0;
    for row in rows {
        let expiration: NaiveDate = row["expiration"].as_str().unwrap().parse().unwrap();
        let chain_rows = market.chain.rows_of(expiration);
        // The quotes fitted: strikes with an out-of-the-money (or, failing it, the other) IV.
        let usable = |iv: Option<f64>| iv.filter(|v| v.is_finite() && *v > 0.0);
        let quotes = chain_rows
            .iter()
            .filter(|r| usable(r.call.iv).is_some() || usable(r.put.iv).is_some())
            .count();
        if row["fit"].is_null() {
            assert!(row["reason"].is_string(), "{row}");
            continue;
        }
        fitted += 1;
        assert_eq!(row["fit"]["points"], quotes);
        let atm = num(&row["atm_iv"], "atm");
        assert_eq!(row["implied_atm_iv"], row["atm_iv"]);
        // The fitted ATM IV sits within the fit's own error of the quotes around the forward.
        let forward = chain_rows[0].forward;
        let nearest = chain_rows
            .iter()
            .filter(|r| usable(r.call.iv).is_some() && usable(r.put.iv).is_some())
            .min_by(|a, b| {
                (a.strike - forward)
                    .abs()
                    .total_cmp(&(b.strike - forward).abs())
            })
            .unwrap();
        let quoted = 50.0 * (nearest.call.iv.unwrap() + nearest.put.iv.unwrap());
        let slack = num(&row["fit"]["max_abs_error_iv"], "err") + 1.0;
        assert!(
            (atm - quoted).abs() <= slack,
            "{expiration}: {atm} vs {quoted}"
        );
        assert_eq!(row["smile"].as_array().unwrap().len(), 19);
        // The report on the 24th sits inside the later expirations only.
        let inside = expiration >= day(24);
        assert_eq!(row["earnings_date"].is_string(), inside, "{expiration}");
        let effect = num(&row["earn_effect"], "effect");
        if inside {
            let years = num(&row["years_to_expiry"], "years");
            let event = 0.04 * (std::f64::consts::PI / 2.0).sqrt();
            let total = (atm / 100.0).powi(2) * years;
            let ex = ((total - event * event).max(0.0) / years).sqrt() * 100.0;
            assert_close(effect, atm - ex, 1e-12, "earn_effect");
        } else {
            assert_eq!(effect, 0.0);
        }
    }
    assert!(fitted >= 2, "{fitted} smiles fitted");

    let forecast = data("/monies/SPY?surface=forecast").await;
    let comparison = data("/monies/SPY?surface=COMPARISON").await;
    assert_eq!(comparison["surface"], "comparison");
    for ((i, f), c) in rows
        .iter()
        .zip(forecast["expirations"].as_array().unwrap())
        .zip(comparison["expirations"].as_array().unwrap())
    {
        if i["fit"].is_null() {
            continue;
        }
        let level = num(&f["forecast_atm_iv"], "forecast");
        assert_eq!(f["atm_iv"], f["forecast_atm_iv"]);
        assert!(
            f["smile"]
                .as_array()
                .unwrap()
                .iter()
                .all(|v| num(v, "flat") == level)
        );
        for (implied_iv, diff) in i["smile"]
            .as_array()
            .unwrap()
            .iter()
            .zip(c["smile"].as_array().unwrap())
        {
            if let (Some(iv), Some(d)) = (implied_iv.as_f64(), diff.as_f64()) {
                assert_close(d, iv - level, 1e-12, "implied - forecast");
            }
        }
        let premium = (num(&i["atm_iv"], "atm") - level) / level * 100.0;
        let signal = if premium >= 15.0 {
            "RICH"
        } else if premium <= -10.0 {
            "CHEAP"
        } else {
            "NEUTRAL"
        };
        assert_eq!(c["signal"], signal);
    }
    let message = error("/monies/SPY?surface=smooth", StatusCode::BAD_REQUEST).await;
    assert!(
        message.contains("implied, forecast, comparison"),
        "{message}"
    );
    let short = data("/monies/QQQ?surface=forecast").await;
    let first = &short["expirations"][0];
    assert_eq!(first["forecast_atm_iv"], Value::Null);
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .contains("insufficient_history"),
        "{first}"
    );
}

fn mean_and_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (mean, std_by_hand(values))
}

#[tokio::test]
async fn skew_reads_todays_smile_against_its_stored_year() {
    let d = data("/skew/SPY").await;
    assert_eq!(d["view"], "analysis");
    let slope = num(&d["current"]["slope"], "slope");
    // The chain's expirations end before 30 days: the last one's fit alone, as /monies fits it.
    let monies = data("/monies/SPY").await;
    let last = monies["expirations"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_close(slope, num(&last["slope"], "monies slope"), 1e-12, "slope");
    assert_close(
        num(&d["current"]["curvature"], "curv"),
        num(&last["curvature"], "monies curvature"),
        1e-12,
        "curvature",
    );
    let history = history("SPY", 400);
    let year: Vec<f64> = history[400 - 252..]
        .iter()
        .map(|r| r.skew_slope_30d.unwrap())
        .collect();
    let below = year.iter().filter(|v| **v < slope).count() as f64;
    let p = &d["percentile"];
    assert_close(
        num(&p["current"], "pct"),
        below / 252.0 * 100.0,
        1e-12,
        "percentile",
    );
    let (mean, std) = mean_and_std(&year);
    assert_close(num(&p["avg_1y"], "avg"), mean, 1e-12, "avg_1y");
    assert_close(num(&p["stdv_1y"], "std"), std, 1e-12, "stdv_1y");
    assert_close(
        num(&p["avg_1m"], "1m"),
        mean_and_std(&year[252 - 21..]).0,
        1e-12,
        "avg_1m",
    );
    // The AR(1) by hand: OLS of x[t+1] on x[t].
    let (x, y) = (&year[..251], &year[1..]);
    let (mx, my) = (mean_and_std(x).0, mean_and_std(y).0);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let phi = sxy / sxx;
    let mu = (my - phi * mx) / (1.0 - phi);
    assert_close(
        num(&d["current"]["slope_persistence"], "phi"),
        phi,
        1e-9,
        "phi",
    );
    assert_close(
        num(&d["current"]["slope_forecast"], "forecast"),
        mu + phi.powi(21) * (slope - mu),
        1e-9,
        "forecast",
    );
    let curvatures: Vec<f64> = history[400 - 252..]
        .iter()
        .map(|r| r.smile_curvature_30d.unwrap())
        .collect();
    let today = num(&d["curvature"]["value"], "curvature");
    let pct = curvatures.iter().filter(|v| **v < today).count() as f64 / 252.0 * 100.0;
    assert_close(
        num(&d["curvature"]["percentile"], "cpct"),
        pct,
        1e-12,
        "curvature pct",
    );
    let expected = if pct >= 80.0 {
        "STEEP_WINGS"
    } else if pct < 20.0 {
        "FLAT_WINGS"
    } else {
        "NORMAL"
    };
    assert_eq!(d["curvature"]["interpretation"], expected);
    // No company data in the fixture: no sector ETF, said so.
    assert!(
        d["sector_relative"]["reason"]
            .as_str()
            .unwrap()
            .contains("sector ETF")
    );

    let d = data("/skew/SPY?view=history&days=30").await;
    let days = d["history"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_close(
        num(&days[29]["slope"], "s"),
        slope_at(399),
        1e-12,
        "stored slope",
    );
    assert!(d.get("current").is_none());
    let d = data("/skew/SPY?view=curvature").await;
    assert!(d["curvature"].is_object() && d.get("percentile").is_none());
    let d = data("/skew/SPY?view=history&days=5").await;
    assert_eq!(d["days"], 20);
    let message = error("/skew/SPY?view=all", StatusCode::BAD_REQUEST).await;
    assert!(
        message.contains("analysis, history, curvature"),
        "{message}"
    );
}

#[tokio::test]
async fn day_series_are_windowed_for_assistant_clients() {
    let app = app(reader(), now());
    let assistant = [("x-service-client", "tests")];
    for (uri, list) in [
        ("/hv-regimes/SPY?days=100", "timeseries"),
        ("/hv-regimes/SPY?days=100&view=ex_earnings", "ex_earnings"),
        ("/vrp/SPY/timeseries?lookback_days=100", "timeseries"),
        ("/skew/SPY?view=history&days=100", "history"),
    ] {
        let path = format!("{PREFIX}{uri}");
        let full = get(&app, &path, &[]).await.data();
        assert_eq!(full[list].as_array().unwrap().len(), 100, "{uri}");
        assert!(full.get("window").is_none(), "{uri}");
        let compact = get(&app, &path, &assistant).await.data();
        let kept = compact[list].as_array().unwrap();
        assert_eq!(kept.len(), 30, "{uri}");
        // The most recent sessions, in time order.
        assert_eq!(kept[29], full[list][99], "{uri}");
        assert_eq!(compact["window"]["rows_total"], 100);
        assert_eq!(compact["window"]["truncated"], true);
        let sized = get(&app, &format!("{path}&limit=5"), &assistant)
            .await
            .data();
        assert_eq!(sized[list].as_array().unwrap().len(), 5, "{uri}");
        let forced = get(&app, &format!("{path}&detail=full"), &assistant)
            .await
            .data();
        assert_eq!(forced[list].as_array().unwrap().len(), 100, "{uri}");
    }
}
