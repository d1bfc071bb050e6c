//! `/screen` against the independent reference of scripts/reference/screen_vectors.py: a
//! seeded universe of 16 stocks stored as the script wrote it, every preset the script can
//! compute from the raw series (IV rank both ways, VRP, skew, contango, mean reversion), at
//! two market-cap floors: the same members, in the same order, with the same ranking figure.

mod common;
mod exposure_support;

use chrono::NaiveDate;
use common::get;
use exposure_support::{MemoryMarket, app, quoted_at};
use optics_api::market::SessionBar;
use optics_schemas::{AssetClass, Company, VolDailyRow};
use serde_json::Value;

const VECTORS: &str = include_str!("../../compute/tests/data/screen_vectors.json");

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn reader(vectors: &Value) -> MemoryMarket {
    let dates: Vec<NaiveDate> = vectors["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().parse().unwrap())
        .collect();
    let mut reader = MemoryMarket::default();
    for name in vectors["names"].as_array().unwrap() {
        let symbol = name["symbol"].as_str().unwrap();
        let (closes, iv30, iv90, slope) = (
            numbers(&name["closes"]),
            numbers(&name["iv30d"]),
            numbers(&name["iv90d"]),
            numbers(&name["slope"]),
        );
        let rows = dates
            .iter()
            .enumerate()
            .map(|(i, date)| {
                let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
                let mut row = VolDailyRow::new(symbol, *date, as_of, closes[i]);
                row.iv30d_pct = Some(iv30[i]);
                row.iv90d_pct = Some(iv90[i]);
                row.skew_slope_30d = Some(slope[i]);
                row
            })
            .collect();
        let bars = dates
            .iter()
            .enumerate()
            .map(|(i, date)| SessionBar {
                date: *date,
                open: closes[i],
                high: closes[i],
                low: closes[i],
                close: closes[i],
                volume: 1_000_000,
            })
            .collect();
        reader = reader
            .covering(symbol)
            .with_company(Company {
                symbol: symbol.to_owned(),
                name: symbol.to_owned(),
                asset_class: AssetClass::Stock,
                sector: name["sector"].as_str().map(str::to_owned),
                sector_etf: None,
                market_cap: name["market_cap"].as_f64(),
                beta_spy: 1.0,
                corr_spy: 0.5,
                priced_on_forward: false,
                industry: None,
            })
            .with_vol_history(symbol, rows)
            .with_bars(symbol, bars);
    }
    reader
}

#[tokio::test]
async fn screens_match_the_pandas_reference() {
    let vectors: Value = serde_json::from_str(VECTORS).unwrap();
    let app = app(reader(&vectors), quoted_at());
    let screens = vectors["screens"].as_object().unwrap();
    assert_eq!(screens.len(), 12);
    for (key, expected) in screens {
        let (preset, floor) = key.split_once('@').unwrap();
        let uri =
            format!("/api/mcp/data/screen?screen_type={preset}&limit=200&min_market_cap={floor}");
        let data = get(&app, &uri, &[]).await.data();
        let members: Vec<&str> = data["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["ticker"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = expected["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert_eq!(members, want, "{key}");
        assert!(!want.is_empty(), "{key}: the reference planted members");
        assert_eq!(data["total_scanned"], expected["scanned"], "{key}");
        let metrics = data["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["metric_value"].as_f64().unwrap());
        for (got, want) in metrics.zip(numbers(&expected["metric"])) {
            let tolerance = 1e-9 * want.abs().max(1.0);
            assert!((got - want).abs() <= tolerance, "{key}: {got} vs {want}");
        }
    }
}
