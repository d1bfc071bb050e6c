//! The events family through the real router: `/seasonality` recomputed here from the bars by
//! plain grouping, with its bounds and its empty case.

mod common;
mod exposure_support;

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::{Datelike, NaiveDate, Weekday};
use common::get;
use exposure_support::{MemoryMarket, app, assert_close, market, num, quoted_at};
use optics_api::market::SessionBar;
use serde_json::Value;

/// Weekday bars from 2021-01-04 to 2026-11-20 with closes from a fixed pseudo-random walk.
fn bars() -> Vec<SessionBar> {
    let mut out = Vec::new();
    let mut day = NaiveDate::from_ymd_opt(2021, 1, 4).unwrap();
    let mut close: f64 = 100.0;
    let mut i: u64 = 0;
    while day <= NaiveDate::from_ymd_opt(2026, 11, 20).unwrap() {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            let x = i
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            close *= (((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.03).exp();
            out.push(SessionBar {
                date: day,
                open: close,
                high: close,
                low: close,
                close,
                volume: 1,
            });
            i += 1;
        }
        day = day.succ_opt().unwrap();
    }
    out
}

fn reader() -> MemoryMarket {
    MemoryMarket::default()
        .with(&market("SPY", 600.0, 21, 3))
        .with_bars("SPY", bars())
        .covering("IWM")
}

async fn data(uri: &str) -> Value {
    let app = app(reader(), quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await.data()
}

/// Month returns by hand: the last close of each (year, month), then consecutive ratios.
/// November 2026 is still running on 2026-11-20 and is left out.
fn month_returns() -> Vec<((i32, u32), f64)> {
    let mut last: BTreeMap<(i32, u32), f64> = BTreeMap::new();
    for bar in bars() {
        last.insert((bar.date.year(), bar.date.month()), bar.close);
    }
    last.remove(&(2026, 11));
    let months: Vec<_> = last.into_iter().collect();
    months
        .windows(2)
        .map(|w| (w[1].0, (w[1].1 / w[0].1 - 1.0) * 100.0))
        .collect()
}

#[tokio::test]
async fn seasonality_groups_complete_months_and_quarters() {
    let d = data("/seasonality/SPY?years=3").await;
    assert_eq!(d["analysis_years"], 3);
    // The last 36 complete months: November 2023 to October 2026.
    let window: Vec<_> = month_returns().into_iter().rev().take(36).collect();
    assert_eq!(d["first_month"], "2023-11-01");
    assert_eq!(d["last_month"], "2026-10-01");
    let march: Vec<f64> = window
        .iter()
        .filter(|((_, m), _)| *m == 3)
        .map(|(_, r)| *r)
        .collect();
    assert_eq!(march.len(), 3);
    let m = &d["monthly_seasonality"]["March"];
    assert_eq!(m["sample_size"], 3);
    let mean = march.iter().sum::<f64>() / 3.0;
    assert_close(num(&m["avg_return_pct"], "avg"), mean, 1e-12, "March mean");
    let mut sorted = march.clone();
    sorted.sort_by(f64::total_cmp);
    assert_close(
        num(&m["median_return_pct"], "median"),
        sorted[1],
        1e-12,
        "median",
    );
    let std = (march.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert_close(num(&m["volatility_pct"], "vol"), std, 1e-12, "volatility");
    // Best and worst by mean.
    let means: BTreeMap<u32, f64> = (1..=12)
        .map(|month| {
            let r: Vec<f64> = window
                .iter()
                .filter(|((_, m), _)| *m == month)
                .map(|(_, r)| *r)
                .collect();
            (month, r.iter().sum::<f64>() / r.len() as f64)
        })
        .collect();
    let best = means.iter().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    assert_close(
        num(&d["best_month"]["avg_return_pct"], "best"),
        *best.1,
        1e-12,
        "best",
    );
    let worst = means.iter().min_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    assert_close(
        num(&d["worst_month"]["avg_return_pct"], "worst"),
        *worst.1,
        1e-12,
        "worst",
    );
    // Q3: the last close of September over the last close of June, three complete years
    // (2024, 2025, 2026); Q4 2025 and 2024 and 2023 are the complete fourth quarters.
    assert_eq!(d["quarterly_seasonality"]["Q3"]["sample_size"], 3);
    assert_eq!(d["quarterly_seasonality"]["Q4"]["sample_size"], 3);
}

#[tokio::test]
async fn seasonality_bounds_and_empty_history() {
    let d = data("/seasonality/SPY?years=40").await;
    assert_eq!(d["analysis_years"], 10);
    assert_eq!(d["clamped"][0]["parameter"], "years");
    // Fewer years are stored than asked: every complete month with an earlier month's close,
    // February 2021 … October 2026 (January 2021 has none before it).
    assert_eq!(d["first_month"], "2021-02-01");
    let d = data("/seasonality/IWM").await;
    assert!(d["monthly_seasonality"].as_object().unwrap().is_empty());
    assert!(d["reason"].as_str().unwrap().contains("0 daily bars"));
    let app = app(reader(), quoted_at());
    get(&app, "/api/mcp/data/seasonality/ZZZZ", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    get(&app, "/api/mcp/data/seasonality/SPY?years=x", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn every_documented_seasonality_field_is_served() {
    common::reference_fields::assert_documented_fields_served(
        "seasonality",
        &data("/seasonality/SPY").await,
    );
}
