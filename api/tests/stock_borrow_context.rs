//! `/borrow-rate` through the real router: figures recomputed by hand from a planted series
//! (a 3 % spike after 99 days near 0.51 %), a series without a spike, the sector comparison,
//! an index without borrow, bad `days` and an unknown ticker, and the documented fields.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{NaiveDate, TimeDelta};
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{MemoryMarket, app, assert_close, num, quoted_at};
use optics_schemas::{AssetClass, BorrowRate, Company};
use serde_json::Value;

/// The clock's New York date.
fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

fn company(symbol: &str, asset_class: AssetClass, sector: Option<&str>) -> Company {
    Company {
        symbol: symbol.to_owned(),
        name: symbol.to_owned(),
        asset_class,
        sector: sector.map(str::to_owned),
        sector_etf: None,
        market_cap: None,
        beta_spy: 1.0,
        corr_spy: 0.5,
        priced_on_forward: false,
        industry: None,
    }
}

/// The planted AAPL fees, percent: 0.50, 0.51, 0.52 repeating for 99 days, then 3.0 today.
fn aapl_fees() -> Vec<f64> {
    let mut fees: Vec<f64> = (0..99).map(|i| 0.50 + 0.01 * f64::from(i % 3)).collect();
    fees.push(3.0);
    fees
}

/// MSFT: 1.00, 1.01, 0.99 repeating for 80 days (ends on 1.01), no spike.
fn msft_fees() -> Vec<f64> {
    (0..80)
        .map(|i| [1.00, 1.01, 0.99][i % 3])
        .collect::<Vec<f64>>()
}

fn with_fees(mut reader: MemoryMarket, symbol: &str, fees: &[f64]) -> MemoryMarket {
    let n = fees.len() as i64;
    for (i, fee) in fees.iter().enumerate() {
        reader = reader.with_borrow(BorrowRate {
            symbol: symbol.to_owned(),
            date: today() - TimeDelta::days(n - 1 - i as i64),
            borrow_rate: fee / 100.0,
            is_hard_to_borrow: false,
        });
    }
    reader
}

fn reader() -> MemoryMarket {
    let tech = Some("Information Technology");
    let mut reader = MemoryMarket::default()
        .covering("AAPL")
        .covering("MSFT")
        .covering("NVDA")
        .covering("SPX")
        .with_company(company("AAPL", AssetClass::Stock, tech))
        .with_company(company("MSFT", AssetClass::Stock, tech))
        .with_company(company("NVDA", AssetClass::Stock, tech))
        .with_company(company("SPX", AssetClass::Index, None));
    reader = with_fees(reader, "AAPL", &aapl_fees());
    reader = with_fees(reader, "MSFT", &msft_fees());
    reader = with_fees(reader, "NVDA", &[0.25; 30]);
    // A fee dated after the clock is not read.
    reader.with_borrow(BorrowRate {
        symbol: "AAPL".to_owned(),
        date: today() + TimeDelta::days(1),
        borrow_rate: 0.5,
        is_hard_to_borrow: true,
    })
}

async fn answer(uri: &str) -> common::Answer {
    let app = app(reader(), quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn sample_std(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

#[tokio::test]
async fn a_planted_spike_is_found_with_hand_checked_figures() {
    let data = answer("/borrow-rate/AAPL").await.data();
    let fees = aapl_fees();
    let current = &data["current"];
    assert_close(num(&current["borrow30"], "b30"), 3.0, 1e-12, "borrow30");
    assert_eq!(current["date"], "2026-11-20");
    assert_close(num(&current["borrow2yr"], "b2y"), mean(&fees), 1e-12, "2yr");
    assert_eq!(current["borrow2yr_sessions"], 100);
    assert_eq!(current["borrow_class"], "WARM");
    // 99 of the 100 fees are strictly below 3.0.
    assert_close(num(&current["borrow_pctile"], "pct"), 99.0, 1e-12, "pctile");
    let prior = &fees[40..99];
    let prior60 = &fees[39..99];
    assert_eq!(prior.len() + 1, 60);
    let z = (3.0 - mean(prior60)) / sample_std(prior60);
    assert_close(num(&current["z_score"], "z"), z, 1e-9, "z");
    assert_eq!(data["spike_detected"], true);
    assert_eq!(data["spike_severity"], "EXTREME");
    assert_eq!(data["spikes_in_period"], 1);
    // 0.4 × 99 + 0.3 × 100 × min(z/6, 1) + 0.3 × 100 × 0.
    assert_close(num(&data["squeeze_score"], "sq"), 69.6, 1e-9, "squeeze");
    // Sector: 3.0, 1.01 (MSFT) and 0.25 (NVDA): median 1.01, two below.
    let sector = &data["sector_comparison"];
    assert_eq!(sector["count"], 3);
    assert_close(num(&sector["sector_median"], "med"), 1.01, 1e-12, "median");
    assert_close(num(&sector["ratio"], "ratio"), 3.0 / 1.01, 1e-12, "ratio");
    assert_close(
        num(&sector["pctile_in_sector"], "p"),
        200.0 / 3.0,
        1e-9,
        "pctile_in_sector",
    );
    // The default 252 days hold all 100 stored fees (not the future one), oldest first.
    let series = data["timeseries"].as_array().unwrap();
    assert_eq!(series.len(), 100);
    assert_eq!(series[99]["date"], "2026-11-20");
    assert_eq!(series[99]["is_spike"], true);
    assert!(series[..99].iter().all(|d| d["is_spike"] == false));
    assert_eq!(series[19]["z_score"], Value::Null);
    assert!(series[20]["z_score"].is_number());
    assert!(data["rules"]["spike"].as_str().unwrap().contains("z >= 3"));
    assert_eq!(data["reason"], Value::Null);
}

#[tokio::test]
async fn a_series_without_a_spike_is_not_flagged() {
    let data = answer("/borrow-rate/MSFT?days=20").await.data();
    assert_eq!(data["spike_detected"], false);
    assert_eq!(data["spike_severity"], "NONE");
    assert_eq!(data["spikes_in_period"], 0);
    assert_eq!(data["current"]["borrow_class"], "WARM");
    assert_eq!(data["timeseries"].as_array().unwrap().len(), 20);
    let sector = &data["sector_comparison"];
    assert_close(num(&sector["ratio"], "ratio"), 1.0, 1e-12, "ratio");
}

#[tokio::test]
async fn compact_keeps_the_latest_sessions() {
    let data = answer("/borrow-rate/AAPL?detail=compact&limit=10")
        .await
        .data();
    let series = data["timeseries"].as_array().unwrap();
    assert_eq!(series.len(), 10);
    assert_eq!(series[9]["date"], "2026-11-20");
    assert_eq!(data["window"]["rows_total"], 100);
    assert_eq!(data["window"]["truncated"], true);
}

#[tokio::test]
async fn an_index_answers_nulls_with_a_reason() {
    let data = answer("/borrow-rate/SPX").await.data();
    assert_eq!(data["current"]["borrow30"], Value::Null);
    assert_eq!(data["squeeze_score"], Value::Null);
    assert_eq!(data["sector_comparison"], Value::Null);
    assert_eq!(data["spike_detected"], false);
    let reason = data["reason"].as_str().unwrap();
    assert!(reason.contains("cash index"), "{reason}");
}

#[tokio::test]
async fn days_are_clamped_malformed_days_400_and_unknown_ticker_404() {
    // Numeric parameters are clamped to their documented range and the clamp reported.
    let data = answer("/borrow-rate/AAPL?days=5").await.data();
    assert_eq!(data["days"], 20);
    assert_eq!(data["timeseries"].as_array().unwrap().len(), 20);
    assert_eq!(data["clamped"][0]["parameter"], "days");
    assert_eq!(
        answer("/borrow-rate/AAPL?days=abc").await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        answer("/borrow-rate/ZZZZ").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn borrow_rate_serves_every_documented_field() {
    let data = answer("/borrow-rate/AAPL").await.data();
    assert_documented_fields_served("borrow-rate", &data);
}
