//! The stock-analytics family through the real router: `/correlation/{ticker}` recomputed
//! here from the fixture bars with plain loops, its benchmark choice, IV ratio and empty cases.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{Datelike, NaiveDate, Weekday};
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{
    MemoryMarket, app, assert_close, correlation_and_beta, flat_bars, market, noise, num,
    quoted_at, trade_date,
};
use optics_api::market::SessionBar;
use optics_schemas::{AssetClass, Company, VolDailyRow};
use serde_json::Value;

const PREFIX: &str = "/api/mcp/data";

/// A deterministic shock in about ±1.5 %.
fn shock(i: u64, seed: u64) -> f64 {
    noise(i, seed) * 0.03
}

/// Weekdays from 2025-01-02 to 2026-11-27 (a week past the clock).
fn weekdays() -> Vec<NaiveDate> {
    let mut out = Vec::new();
    let mut day = NaiveDate::from_ymd_opt(2025, 1, 2).unwrap();
    while day <= NaiveDate::from_ymd_opt(2026, 11, 27).unwrap() {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            out.push(day);
        }
        day = day.succ_opt().unwrap();
    }
    out
}

fn company(symbol: &str, class: AssetClass, sector_etf: Option<&str>) -> Company {
    Company {
        symbol: symbol.to_owned(),
        name: symbol.to_owned(),
        asset_class: class,
        sector: sector_etf.map(|_| "Information Technology".to_owned()),
        sector_etf: sector_etf.map(str::to_owned),
        market_cap: None,
        beta_spy: 1.0,
        corr_spy: 0.5,
        priced_on_forward: false,
        industry: None,
    }
}

/// SPY, XLK (SPY plus its own noise) and QQQ (independent noise) bars, and AAPL = 1.3 x SPY +
/// 0.8 x XLK's own noise + its own noise (DIA, uncovered, copies AAPL). SPY misses one session (2026-06-15) to prove the join.
fn reader() -> MemoryMarket {
    let dates = weekdays();
    let spy_dates: Vec<NaiveDate> = dates
        .iter()
        .copied()
        .filter(|d| *d != NaiveDate::from_ymd_opt(2026, 6, 15).unwrap())
        .collect();
    MemoryMarket::default()
        .covering("AAPL")
        .covering("SPY")
        .covering("XLK")
        .covering("QQQ")
        .with_company(company("AAPL", AssetClass::Stock, Some("XLK")))
        .with_company(company("SPY", AssetClass::Etf, None))
        .with_company(company("XLK", AssetClass::Etf, None))
        .with_company(company("QQQ", AssetClass::Etf, None))
        .with_bars("SPY", flat_bars(&spy_dates, |i| shock(i, 1)))
        .with_bars("XLK", flat_bars(&dates, |i| shock(i, 1) + shock(i, 2)))
        .with_bars("QQQ", flat_bars(&dates, |i| shock(i, 3)))
        // An ETF of the company map outside the coverage: never a candidate, however close.
        .with_company(company("DIA", AssetClass::Etf, None))
        .with_bars(
            "DIA",
            flat_bars(&dates, |i| {
                1.3 * shock(i, 1) + 0.8 * shock(i, 2) + shock(i, 4)
            }),
        )
        .with_bars(
            "AAPL",
            flat_bars(&dates, |i| {
                1.3 * shock(i, 1) + 0.8 * shock(i, 2) + shock(i, 4)
            }),
        )
}

/// (date, log return) of the bars up to the clock's date, by a plain loop.
fn returns(bars: &[SessionBar]) -> Vec<(NaiveDate, f64)> {
    let mut out = Vec::new();
    for i in 1..bars.len() {
        if bars[i].date > trade_date() {
            break;
        }
        out.push((bars[i].date, (bars[i].close / bars[i - 1].close).ln()));
    }
    out
}

/// The last `n` shared returns of `x` and `y`: correlation and beta of x on y.
fn by_hand(x: &[(NaiveDate, f64)], y: &[(NaiveDate, f64)], n: usize) -> (f64, f64) {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for (d, a) in x {
        for (e, b) in y {
            if d == e {
                xs.push(*a);
                ys.push(*b);
            }
        }
    }
    correlation_and_beta(&xs[xs.len() - n..], &ys[ys.len() - n..])
}

/// `/correlation/AAPL` served from `reader`.
async fn aapl_correlation(reader: MemoryMarket) -> Value {
    get(
        &app(reader, quoted_at()),
        &format!("{PREFIX}/correlation/AAPL"),
        &[],
    )
    .await
    .data()
}

#[tokio::test]
async fn correlation_and_beta_match_a_hand_computation() {
    let r = reader();
    let aapl = returns(&r.bars["AAPL"]);
    let spy = returns(&r.bars["SPY"]);
    let xlk = returns(&r.bars["XLK"]);
    let data = aapl_correlation(r).await;
    let (c1m, b1m) = by_hand(&aapl, &spy, 21);
    let (c1y, b1y) = by_hand(&aapl, &spy, 252);
    let (e1m, _) = by_hand(&aapl, &xlk, 21);
    let (e1y, _) = by_hand(&aapl, &xlk, 252);
    for (value, expected, name) in [
        (&data["correlations"]["spy_1m"], c1m, "spy_1m"),
        (&data["correlations"]["spy_1y"], c1y, "spy_1y"),
        (&data["correlations"]["etf_1m"], e1m, "etf_1m"),
        (&data["correlations"]["etf_1y"], e1y, "etf_1y"),
        (&data["beta"]["beta_1m"], b1m, "beta_1m"),
        (&data["beta"]["beta_1y"], b1y, "beta_1y"),
    ] {
        assert_close(num(value, name), expected, 1e-9, name);
    }
    // XLK carries AAPL's second factor, so it fits better than SPY or QQQ.
    assert_eq!(data["best_etf"], "XLK");
    assert_eq!(data["sector_etf"], "XLK");
    assert_eq!(data["sector"], "Information Technology");
    let basis = data["best_etf_basis"].as_str().unwrap();
    assert!(basis.contains("QQQ") && !basis.contains("DIA"), "{basis}");
    // One session missing from SPY removes one return there and reshapes the next.
    let spy_shared = aapl
        .iter()
        .filter(|(d, _)| spy.iter().any(|(e, _)| e == d))
        .count();
    assert_eq!(data["sample_sizes"]["spy"], spy_shared);
    assert_eq!(data["sample_sizes"]["etf"], aapl.len());
    // Bars after the clock's date are not read.
    assert_eq!(data["last_bar"], "2026-11-20");
    assert_documented_fields_served("correlation", &data);
}

#[tokio::test]
async fn iv_ratio_uses_live_chains_else_stored_rows() {
    let aapl_chain = market("AAPL", 230.0, 40, 7);
    let spy_chain = market("SPY", 600.0, 40, 8);
    let live =
        |m: &exposure_support::Market| m.chain.implied().constant_maturity.iv30d_pct.unwrap();
    let expected = live(&aapl_chain) / live(&spy_chain);
    let data = aapl_correlation(reader().with(&aapl_chain).with(&spy_chain)).await;
    assert_close(
        num(&data["iv_spy_ratio"], "ratio"),
        expected,
        1e-12,
        "live ratio",
    );

    let row = |s: &str, iv: f64| {
        let date = NaiveDate::from_ymd_opt(2026, 11, 19).unwrap();
        let mut r = VolDailyRow::new(s, date, date.and_hms_opt(21, 0, 0).unwrap().and_utc(), 1.0);
        r.iv30d_pct = Some(iv);
        r
    };
    let data = aapl_correlation(
        reader()
            .with_vol_history("AAPL", vec![row("AAPL", 30.0)])
            .with_vol_history("SPY", vec![row("SPY", 12.0)]),
    )
    .await;
    assert_close(
        num(&data["iv_spy_ratio"], "ratio"),
        2.5,
        1e-12,
        "stored ratio",
    );
    assert!(
        data["iv_basis"]
            .as_str()
            .unwrap()
            .contains("stored vol_daily")
    );
}

#[tokio::test]
async fn no_bars_gives_nulls_with_a_reason() {
    let data = get(
        &app(MemoryMarket::default().covering("IWM"), quoted_at()),
        &format!("{PREFIX}/correlation/IWM"),
        &[],
    )
    .await
    .data();
    for key in ["spy_1m", "spy_1y", "etf_1m", "etf_1y"] {
        assert_eq!(data["correlations"][key], Value::Null, "{key}");
    }
    assert_eq!(data["beta"]["beta_1y"], Value::Null);
    assert_eq!(data["best_etf"], Value::Null);
    assert_eq!(data["iv_spy_ratio"], Value::Null);
    assert!(data["reason"].as_str().unwrap().contains("no daily bars"));
}

#[tokio::test]
async fn uncovered_ticker_is_404() {
    let answer = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/correlation/ZZZZ"),
        &[],
    )
    .await;
    answer.error(StatusCode::NOT_FOUND);
}
