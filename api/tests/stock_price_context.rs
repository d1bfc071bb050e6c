//! `/price-context` through the real router: returns, the 52-week range, labels, flow and
//! option activity recomputed by hand from the planted bars and the synthetic chain and flow;
//! a symbol without bars, an unknown ticker and the documented fields.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{NaiveDate, TimeDelta};
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{Market, MemoryMarket, app, assert_close, market, num, quoted_at};
use optics_api::market::SessionBar;
use optics_schemas::OptionType;
use serde_json::Value;

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

fn aapl() -> Market {
    market("AAPL", 230.0, 41, 11)
}

/// 300 sessions closing at 100, 101, … 399 (today).
fn bars() -> Vec<SessionBar> {
    (0..300u32)
        .map(|i| {
            let close = 100.0 + f64::from(i);
            SessionBar {
                date: today() - TimeDelta::days(i64::from(299 - i)),
                open: close,
                high: close + 1.0,
                low: close - 1.0,
                close,
                volume: 1_000,
            }
        })
        .collect()
}

fn reader() -> MemoryMarket {
    MemoryMarket::default()
        .with(&aapl())
        .with_bars("AAPL", bars())
        .with_earnings("AAPL", NaiveDate::from_ymd_opt(2026, 12, 1).unwrap())
        .covering("SPX")
}

async fn answer(uri: &str) -> common::Answer {
    let app = app(reader(), quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await
}

#[tokio::test]
async fn price_context_figures_match_a_hand_computation() {
    let data = answer("/price-context/AAPL").await.data();
    assert_close(num(&data["price"], "price"), 399.0, 1e-12, "price");
    for (field, base) in [
        ("return_1w", 394.0),
        ("return_1m", 378.0),
        ("return_3m", 336.0),
        ("return_6m", 273.0),
        ("return_1y", 147.0),
    ] {
        assert_close(
            num(&data[field], field),
            (399.0 / base - 1.0) * 100.0,
            1e-9,
            field,
        );
    }
    // The last 252 closes: 148 … 399.
    assert_close(num(&data["high_52w"], "h"), 399.0, 1e-12, "high");
    assert_close(num(&data["low_52w"], "l"), 148.0, 1e-12, "low");
    assert_close(num(&data["range_position"], "pos"), 100.0, 1e-12, "pos");
    assert_close(num(&data["pct_from_high"], "fh"), 0.0, 1e-12, "from high");
    assert_close(
        num(&data["pct_from_low"], "fl"),
        (399.0 / 148.0 - 1.0) * 100.0,
        1e-9,
        "from low",
    );
    // 3m return 18.75 % >= 10 %.
    assert_eq!(data["momentum_regime"], "STRONG_UPTREND");
    assert_eq!(data["momentum_color"], "green");
    assert_eq!(data["next_earnings"], "2026-12-01");
    assert_eq!(data["days_to_earnings"], 11);

    // Flow: call share of premium.
    let flow = aapl().flow;
    let (mut call, mut put) = (0.0, 0.0);
    for row in &flow.rows {
        match row.option_type {
            OptionType::Call => call += row.premium_usd.unwrap_or(0.0),
            OptionType::Put => put += row.premium_usd.unwrap_or(0.0),
        }
    }
    if call + put > 0.0 {
        let share = call / (call + put);
        assert_close(
            num(&data["flow_call_premium_share"], "share"),
            share,
            1e-12,
            "share",
        );
        let label = if share >= 0.6 {
            "BULLISH"
        } else if share <= 0.4 {
            "BEARISH"
        } else {
            "NEUTRAL"
        };
        assert_eq!(data["flow_sentiment"], label);
    }

    // Option activity: the chain's sums.
    let chain = aapl().chain;
    let call_vol: u64 = chain.rows.iter().filter_map(|r| r.call.volume).sum();
    let put_vol: u64 = chain.rows.iter().filter_map(|r| r.put.volume).sum();
    let call_oi: u64 = chain.rows.iter().filter_map(|r| r.call.open_interest).sum();
    let put_oi: u64 = chain.rows.iter().filter_map(|r| r.put.open_interest).sum();
    assert_eq!(data["call_volume"], call_vol);
    assert_eq!(data["put_volume"], put_vol);
    assert_eq!(data["call_oi"], call_oi);
    assert_eq!(data["put_oi"], put_oi);
    if call_oi > 0 {
        assert_close(
            num(&data["put_call_oi_ratio"], "pcr"),
            put_oi as f64 / call_oi as f64,
            1e-12,
            "pc oi",
        );
    }
    // IV from the live chain; no stored vol_daily, so no HV and a reason.
    assert_eq!(
        data["iv_30d"].as_f64(),
        chain.implied().constant_maturity.iv30d_pct
    );
    assert_eq!(data["hv_20d"], Value::Null);
    assert!(data["reason"].as_str().unwrap().contains("vol_daily"));
    let take = data["quick_take"].as_str().unwrap();
    assert!(
        take.starts_with("AAPL at $399.00, +5.6% over 1 month, momentum STRONG_UPTREND"),
        "{take}"
    );
    assert!(
        data["essentials_summary"]
            .as_str()
            .unwrap()
            .contains("100% of its 52-week range")
    );
    assert!(
        data["rules"]["momentum_regime"]
            .as_str()
            .unwrap()
            .contains(">= 10%")
    );
}

#[tokio::test]
async fn no_bars_answers_nulls_with_a_reason_and_unknown_is_404() {
    let data = answer("/price-context/SPX").await.data();
    assert_eq!(data["price"], Value::Null);
    assert_eq!(data["return_1w"], Value::Null);
    assert_eq!(data["range_position"], Value::Null);
    assert!(data["reason"].as_str().unwrap().contains("no daily bars"));
    assert_eq!(
        answer("/price-context/ZZZZ").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn price_context_serves_every_documented_field() {
    let data = answer("/price-context/AAPL").await.data();
    assert_documented_fields_served("price-context", &data);
}
