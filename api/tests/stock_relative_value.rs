//! `/relative-value/{ticker}`, `/relative-value-scan` and `/correlation/{ticker}/compare/{ticker2}`
//! through the real router, over hand-built vol_daily histories and daily bars, recomputed
//! here with plain loops.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::NaiveDate;
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{
    MemoryMarket, app, assert_close, correlation_and_beta, flat_bars, noise, num, quoted_at,
    result_tickers, weekdays_before,
};
use optics_schemas::{AssetClass, Company, VolDailyRow};
use serde_json::Value;

const PREFIX: &str = "/api/mcp/data";
const SESSIONS: usize = 300;

fn company(symbol: &str, class: AssetClass, sector: Option<(&str, &str)>) -> Company {
    Company {
        symbol: symbol.to_owned(),
        name: symbol.to_owned(),
        asset_class: class,
        sector: sector.map(|s| s.0.to_owned()),
        sector_etf: sector.map(|s| s.1.to_owned()),
        market_cap: None,
        beta_spy: 1.0,
        corr_spy: 0.5,
        priced_on_forward: false,
        industry: None,
    }
}

/// Rows of `symbol` on the sessions before the clock with iv30d = `iv(i)`.
fn history(symbol: &str, iv: impl Fn(usize) -> f64) -> Vec<VolDailyRow> {
    weekdays_before(SESSIONS)
        .into_iter()
        .enumerate()
        .map(|(i, date)| {
            let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
            let mut row = VolDailyRow::new(symbol, date, as_of, 100.0);
            row.iv30d_pct = Some(iv(i));
            row.vrp_30d_pct = Some(3.5);
            row.iv_percentile = Some(88.0);
            row
        })
        .collect()
}

fn spy_iv(i: usize) -> f64 {
    15.0 + 3.0 * noise(i as u64, 1)
}
fn xlk_iv(i: usize) -> f64 {
    20.0 + 3.0 * noise(i as u64, 2)
}
/// AAPL: about 2 x SPY, stretched to 2.6 x on the last session.
fn aapl_iv(i: usize) -> f64 {
    let ratio = if i == SESSIONS - 1 {
        2.6
    } else {
        2.0 + 0.1 * noise(i as u64, 3)
    };
    ratio * spy_iv(i)
}
/// MSFT: about 1.5 x SPY throughout, nothing stretched.
fn msft_iv(i: usize) -> f64 {
    (1.5 + 0.05 * noise(i as u64, 4)) * spy_iv(i)
}
/// NVDA: about 3 x SPY, squeezed to 2.4 x on the last session.
fn nvda_iv(i: usize) -> f64 {
    let ratio = if i == SESSIONS - 1 {
        2.4
    } else {
        3.0 + 0.1 * noise(i as u64, 5)
    };
    ratio * spy_iv(i)
}

fn reader() -> MemoryMarket {
    let tech = Some(("Information Technology", "XLK"));
    let mut m = MemoryMarket::default();
    for s in ["SPY", "XLK", "AAPL", "MSFT", "NVDA", "IWM"] {
        m = m.covering(s);
    }
    m.with_company(company("SPY", AssetClass::Etf, None))
        .with_company(company("XLK", AssetClass::Etf, None))
        .with_company(company("AAPL", AssetClass::Stock, tech))
        .with_company(company("MSFT", AssetClass::Stock, tech))
        .with_company(company("NVDA", AssetClass::Stock, tech))
        .with_company(company("IWM", AssetClass::Etf, None))
        .with_vol_history("SPY", history("SPY", spy_iv))
        .with_vol_history("XLK", history("XLK", xlk_iv))
        .with_vol_history("AAPL", history("AAPL", aapl_iv))
        .with_vol_history("MSFT", history("MSFT", msft_iv))
        .with_vol_history("NVDA", history("NVDA", nvda_iv))
        .with_bars(
            "SPY",
            flat_bars(&weekdays_before(SESSIONS), |i| 0.01 * noise(i, 11)),
        )
        .with_bars(
            "AAPL",
            flat_bars(&weekdays_before(SESSIONS), |i| {
                0.013 * noise(i, 11) + 0.01 * noise(i, 12)
            }),
        )
}

/// Mean, sample std, z and percentile (strictly below) of the last 252 of `r`.
fn stats(r: &[f64]) -> (f64, f64, f64, f64) {
    let w = &r[r.len() - 252..];
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let mut ss = 0.0;
    for v in w {
        ss += (v - mean) * (v - mean);
    }
    let std = (ss / (n - 1.0)).sqrt();
    let cur = *r.last().unwrap();
    let below = w.iter().filter(|v| **v < cur).count() as f64;
    (mean, std, (cur - mean) / std, 100.0 * below / n)
}

#[tokio::test]
async fn relative_value_matches_a_hand_computation() {
    let data = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/relative-value/AAPL"),
        &[],
    )
    .await
    .data();
    let spy: Vec<f64> = (0..SESSIONS).map(|i| aapl_iv(i) / spy_iv(i)).collect();
    let etf: Vec<f64> = (0..SESSIONS).map(|i| aapl_iv(i) / xlk_iv(i)).collect();
    let (m, s, z, p) = stats(&spy);
    let (em, _, ez, ep) = stats(&etf);
    let r = &data["ratios"];
    assert_close(num(&r["iv_spy_ratio"], "r"), 2.6, 1e-12, "iv_spy_ratio");
    assert_close(num(&r["iv_spy_ratio_avg_1y"], "a"), m, 1e-12, "avg_1y");
    let m1 = spy[SESSIONS - 21..].iter().sum::<f64>() / 21.0;
    assert_close(num(&r["iv_spy_ratio_avg_1m"], "a"), m1, 1e-12, "avg_1m");
    assert_close(num(&r["iv_etf_ratio_avg_1y"], "e"), em, 1e-12, "etf avg_1y");
    assert_close(num(&data["z_scores"]["spy_ratio_z"], "z"), z, 1e-9, "z");
    assert_close(
        num(&data["z_scores"]["etf_ratio_z"], "z"),
        ez,
        1e-9,
        "etf z",
    );
    assert_close(
        num(&data["z_scores"]["percentiles"]["spy_ratio"], "p"),
        p,
        1e-12,
        "pct",
    );
    assert_close(
        num(&data["z_scores"]["percentiles"]["etf_ratio"], "p"),
        ep,
        1e-12,
        "etf pct",
    );
    assert!(z > 1.5, "{z}");
    assert_eq!(data["signal"], "RICH");
    assert_eq!(data["signal_threshold"], 1.5);
    let top = &data["sigma_bands"]["spy"][3];
    assert_close(num(&top["ratio"], "b"), m + 2.0 * s, 1e-12, "+2 sigma");
    assert_close(
        num(&top["implied_iv30d"], "b"),
        (m + 2.0 * s) * spy_iv(SESSIONS - 1),
        1e-12,
        "+2 sigma iv",
    );
    let ts = data["timeseries"].as_array().unwrap();
    assert_eq!(ts.len(), 252);
    let last = &ts[251];
    assert_close(
        num(&last["spy_iv30d"], "s"),
        spy_iv(SESSIONS - 1),
        1e-12,
        "spy iv",
    );
    assert_close(
        num(&last["etf_iv30d"], "e"),
        xlk_iv(SESSIONS - 1),
        1e-12,
        "etf iv",
    );
    assert_eq!(data["context"]["vrp"], 3.5);
    assert_eq!(data["reason"], Value::Null);
    assert_documented_fields_served("relative-value", &data);

    // Compact detail keeps the most recent sessions and says so.
    let data = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/relative-value/AAPL?detail=compact&limit=5"),
        &[],
    )
    .await
    .data();
    assert_eq!(data["timeseries"].as_array().unwrap().len(), 5);
    assert_eq!(data["window"]["rows_total"], 252);
    assert_eq!(data["timeseries"][4]["date"], last["date"]);
}

#[tokio::test]
async fn short_history_gives_nulls_with_a_reason() {
    let data = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/relative-value/IWM"),
        &[],
    )
    .await
    .data();
    assert_eq!(data["ratios"]["iv_spy_ratio"], Value::Null);
    assert_eq!(data["z_scores"]["spy_ratio_z"], Value::Null);
    assert_eq!(data["signal"], "NEUTRAL");
    let reason = data["reason"].as_str().unwrap();
    assert!(reason.contains("no stored or live iv30d"), "{reason}");
    assert!(reason.contains("no sector ETF"), "{reason}");
}

#[tokio::test]
async fn scan_finds_the_stretched_names_and_not_the_flat_one() {
    let data = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/relative-value-scan"),
        &[],
    )
    .await
    .data();
    let tickers = result_tickers(&data);
    assert!(
        tickers.contains(&"AAPL") && tickers.contains(&"NVDA"),
        "{tickers:?}"
    );
    assert!(!tickers.contains(&"MSFT"), "{tickers:?}");
    // XLK, AAPL, MSFT, NVDA, IWM (SPY excluded).
    assert_eq!(data["total_scanned"], 5);
    assert_eq!(data["total_matches"], tickers.len());
    let aapl = data["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ticker"] == "AAPL")
        .unwrap();
    let spy: Vec<f64> = (0..SESSIONS).map(|i| aapl_iv(i) / spy_iv(i)).collect();
    let (m, _, z, _) = stats(&spy);
    assert_close(num(&aapl["z_score"], "z"), z, 1e-9, "scan z");
    assert_close(num(&aapl["iv_spy_ratio_avg_1y"], "m"), m, 1e-12, "scan avg");
    assert_eq!(aapl["direction"], "rich");
    let nvda = data["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ticker"] == "NVDA")
        .unwrap();
    assert_eq!(nvda["direction"], "cheap");
    assert_documented_fields_served("relative-value-scan", &data);

    let data = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/relative-value-scan?view=pairs"),
        &[],
    )
    .await
    .data();
    let pair = &data["pairs"][0];
    assert_eq!(pair["rich"]["ticker"], "AAPL");
    assert_eq!(pair["cheap"]["ticker"], "NVDA");
    assert_eq!(pair["same_sector"], true);

    // A threshold above every stretch finds nothing.
    let data = get(
        &app(reader(), quoted_at()),
        &format!("{PREFIX}/relative-value-scan?threshold=1000"),
        &[],
    )
    .await
    .data();
    assert_eq!(data["total_matches"], 0);
}

#[tokio::test]
async fn compare_matches_a_hand_computation() {
    let r = reader();
    let returns = |s: &str| -> Vec<f64> {
        let b = &r.bars[s];
        (1..b.len())
            .map(|i| (b[i].close / b[i - 1].close).ln())
            .collect()
    };
    let (x, y) = (returns("AAPL"), returns("SPY"));
    let data = get(
        &app(r, quoted_at()),
        &format!("{PREFIX}/correlation/AAPL/compare/SPY?days=30"),
        &[],
    )
    .await
    .data();
    assert_eq!(data["ticker1"], "AAPL");
    assert_eq!(data["ticker2"], "SPY");
    let ts = data["timeseries"].as_array().unwrap();
    assert_eq!(ts.len(), 30);
    let by_hand = |n: usize| correlation_and_beta(&x[x.len() - n..], &y[y.len() - n..]);
    let (c1m, b1m) = by_hand(21);
    let (c1y, _) = by_hand(252);
    assert_close(num(&ts[29]["correl1m"], "c"), c1m, 1e-9, "correl1m");
    assert_close(num(&ts[29]["correl1y"], "c"), c1y, 1e-9, "correl1y");
    assert_close(num(&ts[29]["beta1m"], "b"), b1m, 1e-9, "beta1m");
    let last = weekdays_before(1)[0];
    assert_eq!(ts[29]["date"], last.to_string());
    assert!(data["basis"].as_str().unwrap().contains("{date, correl1m"));
    assert_documented_fields_served("correlation-compare", &data);
}

#[tokio::test]
async fn bad_params_are_400() {
    for path in [
        "/relative-value/AAPL?days=abc",
        "/relative-value-scan?view=bogus",
        "/relative-value-scan?limit=abc",
        "/correlation/AAPL/compare/SPY?days=abc",
        "/relative-value-scan?threshold=-1",
        "/relative-value-scan?threshold=x",
        "/correlation/AAPL/compare/%21%21",
    ] {
        let answer = get(&app(reader(), quoted_at()), &format!("{PREFIX}{path}"), &[]).await;
        answer.error(StatusCode::BAD_REQUEST);
    }
}

#[tokio::test]
async fn unknown_tickers_are_404() {
    for path in [
        "/relative-value/ZZZZ",
        "/correlation/ZZZZ/compare/SPY",
        // ticker2 outside the coverage, then covered without stored bars.
        "/correlation/AAPL/compare/ZZZZ",
        "/correlation/AAPL/compare/MSFT",
    ] {
        let answer = get(&app(reader(), quoted_at()), &format!("{PREFIX}{path}"), &[]).await;
        let err = answer.error(StatusCode::NOT_FOUND);
        assert!(err.to_string().contains("search"), "{path}: {err}");
    }
    let _ = NaiveDate::MIN;
}
