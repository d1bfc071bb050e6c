//! The stock-analytics family through the real router: `/dividend` recomputed here by hand
//! from the stored payments and the chain rows, with its non-payer, no-chain and unknown
//! ticker cases and the reference records' documented fields.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::NaiveDate;
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{Market, MemoryMarket, app, apple, assert_close, market, num, quoted_at};
use optics_schemas::{Dividend, DividendFrequency};
use serde_json::Value;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn aapl() -> Market {
    market("AAPL", 230.0, 41, 11)
}

/// Quarterly amounts per year: 0.23 in 2023 rising a cent a year to 0.26 in 2026.
const AMOUNTS: [(i32, f64); 4] = [(2023, 0.23), (2024, 0.24), (2025, 0.25), (2026, 0.26)];

/// AAPL pays on the 10th of February, May, August and November 2023–2026, and has declared
/// 0.26 for 2027-02-10 (after the clock's 2026-11-20). SPY has a chain and no dividend; IWM
/// no chain.
fn reader() -> MemoryMarket {
    let mut reader = MemoryMarket::default()
        .with(&aapl())
        .with(&market("SPY", 600.0, 21, 3))
        .with_company(apple())
        .covering("IWM");
    for (year, amount) in AMOUNTS {
        for month in [2, 5, 8, 11] {
            reader = reader.with_dividend(dividend(d(year, month, 10), amount));
        }
    }
    reader.with_dividend(dividend(d(2027, 2, 10), 0.26))
}

fn dividend(ex_date: NaiveDate, amount: f64) -> Dividend {
    Dividend {
        symbol: "AAPL".to_owned(),
        ex_date,
        pay_date: ex_date + chrono::TimeDelta::days(14),
        amount,
        frequency: DividendFrequency::Quarterly,
    }
}

async fn answer(uri: &str) -> common::Answer {
    let app = app(reader(), quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await
}

#[tokio::test]
async fn dividend_figures_match_a_hand_computation() {
    let data = answer("/dividend/AAPL").await.data();
    let current = &data["current"];
    assert_eq!(data["pays_dividends"], true);
    assert_eq!(data["sector"], "Information Technology");

    // History: the 16 past payments, newest first; the declared one is not history.
    let history = data["history"].as_array().unwrap();
    assert_eq!(history.len(), 16);
    assert_eq!(history[0]["ex_date"], "2026-11-10");
    assert_eq!(history[0]["pay_date"], "2026-11-24");
    assert_eq!(history[15]["ex_date"], "2023-02-10");
    assert_eq!(history[0]["frequency"], "QUARTERLY");
    assert_close(num(&history[0]["amount"], "amount"), 0.26, 1e-12, "amount");

    // The price is the chain's spot (a stock, priced on spot).
    let spot = aapl().chain.rows[0].spot;
    assert_close(num(&current["price"], "price"), spot, 1e-12, "price");
    assert_close(
        num(&current["div_amount"], "amount"),
        0.26,
        1e-12,
        "div_amount",
    );
    assert_eq!(current["div_freq"], "QUARTERLY");
    // 0.26 × 4 / spot × 100.
    assert_close(
        num(&current["div_yield"], "yield"),
        1.04 / spot * 100.0,
        1e-9,
        "div_yield",
    );
    // Ex-dates in (2025-11-20, 2026-11-20]: the four of 2026.
    assert_eq!(current["annual_actual_basis"], "trailing_12m");
    assert_close(
        num(&current["annual_actual"], "actual"),
        4.0 * 0.26,
        1e-12,
        "annual_actual",
    );
    // 2026-11-10 against 2025-11-10: 0.26 / 0.25 − 1.
    assert_close(
        num(&current["div_growth"], "growth"),
        4.0,
        1e-9,
        "div_growth",
    );
    assert_eq!(current["next_div_date"], "2027-02-10");
    assert_close(
        num(&current["next_div_amount"], "next"),
        0.26,
        1e-12,
        "next",
    );

    // Complete years: 2024 and 2025 (2023 holds the first ex-date, 2026 is running).
    let totals = data["annual_totals"].as_array().unwrap();
    assert_eq!(totals.len(), 2);
    assert_eq!(totals[0]["year"], 2024);
    assert_close(
        num(&data["cagr"], "cagr"),
        (1.00 / 0.96 - 1.0) * 100.0,
        1e-9,
        "cagr",
    );

    // Implied: S − F·e^(−rT) per open expiration from the rows; the annual figure from the
    // one nearest a year (here the longest, at least a week out).
    let chain = aapl().chain;
    let mut expected = Vec::new();
    for &expiration in chain.open_expirations() {
        let row = &chain.rows_of(expiration)[0];
        let pv = row.spot - row.forward * (-row.rate * row.years_to_expiry).exp();
        expected.push((
            expiration,
            row.years_to_expiry,
            pv,
            pv / row.years_to_expiry,
        ));
    }
    let implied = data["implied"].as_array().unwrap();
    assert_eq!(implied.len(), expected.len());
    for (served, (expiration, years, pv, annual)) in implied.iter().zip(&expected) {
        assert_eq!(served["expiration"], expiration.to_string());
        assert_close(num(&served["years_to_expiry"], "t"), *years, 1e-12, "t");
        assert_close(num(&served["pv_dividends"], "pv"), *pv, 1e-9, "pv");
        assert_close(
            num(&served["annualised"], "annual"),
            *annual,
            1e-9,
            "annual",
        );
    }
    let (_, years, _, annual) = *expected.last().unwrap();
    assert!((7.0 / 365.0..1.0).contains(&years));
    assert_close(
        num(&current["annual_implied"], "implied"),
        annual,
        1e-9,
        "annual_implied",
    );
    assert_close(
        num(&current["implied_vs_actual"], "vs"),
        (annual / 1.04 - 1.0) * 100.0,
        1e-9,
        "implied_vs_actual",
    );
    assert_close(
        num(&current["next_div_implied"], "next implied"),
        annual / 4.0,
        1e-9,
        "next_div_implied",
    );
}

#[tokio::test]
async fn dividend_serves_every_documented_field() {
    let data = answer("/dividend/AAPL").await.data();
    assert_documented_fields_served("dividend", &data);
}

#[tokio::test]
async fn a_non_payer_says_so_with_a_reason() {
    let data = answer("/dividend/SPY").await.data();
    assert_eq!(data["pays_dividends"], false);
    assert_eq!(data["history"].as_array().unwrap().len(), 0);
    assert_eq!(data["cagr"], Value::Null);
    assert_eq!(data["current"]["div_yield"], Value::Null);
    assert_eq!(data["current"]["annual_actual"], Value::Null);
    assert_eq!(data["current"]["next_div_date"], Value::Null);
    assert_eq!(data["current"]["next_div_implied"], Value::Null);
    assert_eq!(data["sector"], Value::Null);
    let reason = data["reason"].as_str().unwrap();
    assert!(reason.contains("no dividend on record for SPY"), "{reason}");
}

#[tokio::test]
async fn no_chain_is_424_and_unknown_ticker_404() {
    assert_eq!(
        answer("/dividend/IWM").await.status,
        StatusCode::FAILED_DEPENDENCY
    );
    assert_eq!(answer("/dividend/ZZZZ").await.status, StatusCode::NOT_FOUND);
}
