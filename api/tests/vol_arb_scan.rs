//! `/vol-arb-scan` through the real router on a hand-built chain: discounted Black–Scholes
//! prices on a smooth smile (no static arbitrage) finds nothing; with one butterfly, one
//! calendar and one parity violation planted it finds exactly those three.

mod chain_support;
mod common;
mod exposure_support;

use std::sync::Arc;

use axum::http::StatusCode;
use chain_support::norm_cdf as n;
use chrono::{NaiveDate, TimeDelta};
use common::get;
use common::reference_fields::assert_documented_fields_served;
use exposure_support::{MemoryMarket, app, num, quoted_at, trade_date};
use optics_api::market::ChainView;
use optics_schemas::{
    ChainGreeks, ChainRow, ChainSide, ForwardSource, PricingModelCode, SettlementStyle,
};
use serde_json::Value;

const SPOT: f64 = 100.0;
const RATE: f64 = 0.04;

fn side(mid: f64, iv: f64, delta: f64) -> ChainSide {
    let half = 0.01 + 0.005 * mid;
    ChainSide {
        bid: Some(mid - half),
        ask: Some(mid + half),
        mid: Some(mid),
        iv: Some(iv),
        greeks: ChainGreeks {
            delta: Some(delta),
            ..ChainGreeks::default()
        },
        ..ChainSide::default()
    }
}

/// One expiration `days` out at ATM vol `atm`: strikes 80…120 by 2.5 on the smile
/// σ(k) = atm + 0.3·k², k = ln(K/F), discounted Black–Scholes prices, quotes a cent plus half
/// a percent either side of the mid.
fn expiration(days: i64, atm: f64) -> Vec<ChainRow> {
    let years = days as f64 / 365.0;
    let forward = SPOT * (RATE * years).exp();
    let discount = (-RATE * years).exp();
    (0..=16)
        .map(|i| {
            let strike = 80.0 + 2.5 * f64::from(i);
            let k = (strike / forward).ln();
            let vol = atm + 0.3 * k * k;
            let sd = vol * years.sqrt();
            let d1 = -k / sd + 0.5 * sd;
            let d2 = d1 - sd;
            let call = discount * (forward * n(d1) - strike * n(d2));
            let put = discount * (strike * n(-d2) - forward * n(-d1));
            ChainRow {
                underlying: "SPY".to_owned(),
                trade_date: trade_date(),
                as_of: quoted_at(),
                expiration: trade_date() + TimeDelta::days(days),
                settlement: SettlementStyle::Pm,
                dte: i32::try_from(days).unwrap(),
                years_to_expiry: years,
                strike,
                spot: SPOT,
                forward,
                forward_source: ForwardSource::Parity,
                forward_strike_count: 6,
                rate: RATE,
                carry_yield: 0.0,
                model: PricingModelCode::Bsm,
                call: side(call, vol, n(d1)),
                put: side(put, vol, n(d1) - 1.0),
            }
        })
        .collect()
}

fn expirations() -> [NaiveDate; 3] {
    [30, 60, 90].map(|d| trade_date() + TimeDelta::days(d))
}

/// Three expirations (30, 60, 90 days) at a flat 20 % ATM: no arbitrage anywhere.
fn clean() -> Vec<ChainRow> {
    [
        expiration(30, 0.20),
        expiration(60, 0.20),
        expiration(90, 0.20),
    ]
    .concat()
}

/// `clean` with three planted: the 30-day 105 body raised 0.60 on both sides (a butterfly
/// that pays, parity kept), the 30-day 95 put lowered 0.10 (call − put above parity), and the
/// 90-day expiration at 12 % ATM (total variance below the 60-day one's).
fn planted() -> Vec<ChainRow> {
    let mut rows = [
        expiration(30, 0.20),
        expiration(60, 0.20),
        expiration(90, 0.12),
    ]
    .concat();
    let shift = |side: &mut ChainSide, by: f64| {
        for v in [&mut side.bid, &mut side.ask, &mut side.mid] {
            *v = v.map(|x| x + by);
        }
    };
    for r in rows.iter_mut().filter(|r| r.expiration == expirations()[0]) {
        if r.strike == 105.0 {
            shift(&mut r.call, 0.60);
            shift(&mut r.put, 0.60);
        }
        if r.strike == 95.0 {
            shift(&mut r.put, -0.10);
        }
    }
    rows
}

fn reader(rows: Vec<ChainRow>) -> MemoryMarket {
    let mut reader = MemoryMarket::default().covering("SPY");
    reader
        .chains
        .insert("SPY".to_owned(), Arc::new(ChainView::new(rows).unwrap()));
    reader
}

async fn scan(rows: Vec<ChainRow>, uri: &str) -> Value {
    let app = app(reader(rows), quoted_at());
    get(&app, &format!("/api/mcp/data{uri}"), &[]).await.data()
}

fn list<'a>(d: &'a Value, name: &str) -> &'a Vec<Value> {
    d[name]
        .as_array()
        .unwrap_or_else(|| panic!("no {name}: {d}"))
}

#[tokio::test]
async fn an_arbitrage_free_chain_has_no_arbitrage_row() {
    let d = scan(clean(), "/vol-arb-scan?ticker=SPY").await;
    assert_eq!(d["expirations_scanned"], 3);
    for name in [
        "butterfly_mispricings",
        "calendar_spreads",
        "put_call_parity_violations",
    ] {
        assert!(list(&d, name).is_empty(), "{name}: {d}");
    }
    assert_eq!(d["arbitrage_count"], 0);
}

#[tokio::test]
async fn the_three_planted_arbitrages_are_found_and_nothing_else() {
    let d = scan(planted(), "/vol-arb-scan").await;
    assert_eq!(d["ticker"], "SPY", "SPY is the default");
    let near = expirations()[0].to_string();

    let flies = list(&d, "butterfly_mispricings");
    assert_eq!(flies.len(), 1, "{flies:?}");
    let fly = &flies[0];
    assert_eq!(fly["expiration"], near);
    assert_eq!(
        [
            &fly["lower_strike"],
            &fly["middle_strike"],
            &fly["upper_strike"]
        ],
        [102.5, 105.0, 107.5]
    );
    // Executable cost by hand from the quotes served in the planted chain.
    let rows = planted();
    let quote = |k: f64, call: bool| {
        let r = rows
            .iter()
            .find(|r| r.expiration == expirations()[0] && r.strike == k)
            .unwrap();
        let s = if call { &r.call } else { &r.put };
        (s.bid.unwrap(), s.ask.unwrap())
    };
    let call = fly["option_type"] == "call";
    let cost = 0.5 * quote(102.5, call).1 + 0.5 * quote(107.5, call).1 - quote(105.0, call).0;
    assert!(cost < -0.01);
    assert!((num(&fly["butterfly_cost"], "cost") - cost).abs() < 1e-12);
    assert!((num(&fly["edge"], "edge") + cost).abs() < 1e-12);

    let calendars = list(&d, "calendar_spreads");
    assert_eq!(calendars.len(), 1, "{calendars:?}");
    let c = &calendars[0];
    assert_eq!(c["near_expiration"], expirations()[1].to_string());
    assert_eq!(c["far_expiration"], expirations()[2].to_string());
    let (s1, s2) = (
        num(&c["near_atm_iv"], "near") / 100.0,
        num(&c["far_atm_iv"], "far") / 100.0,
    );
    let (t1, t2) = (num(&c["near_years"], "t1"), num(&c["far_years"], "t2"));
    let forward_variance = (s2 * s2 * t2 - s1 * s1 * t1) / (t2 - t1);
    assert!(forward_variance < 0.0);
    assert!((num(&c["forward_variance"], "fv") - forward_variance).abs() < 1e-12);

    let parity = list(&d, "put_call_parity_violations");
    assert_eq!(parity.len(), 1, "{parity:?}");
    let p = &parity[0];
    assert_eq!(p["expiration"], near);
    assert_eq!(p["strike"], 95.0);
    assert_eq!(p["direction"], "sell_synthetic");
    let r = rows
        .iter()
        .find(|r| r.expiration == expirations()[0] && r.strike == 95.0)
        .unwrap();
    let value = (-RATE * r.years_to_expiry).exp() * (r.forward - 95.0);
    let sell = r.call.bid.unwrap() - r.put.ask.unwrap();
    assert!((num(&p["edge"], "edge") - (sell - value)).abs() < 1e-12);

    assert_eq!(d["arbitrage_count"], 3);
    assert_eq!(d["total_opportunities"], 3 + list(&d, "skew_trades").len());
}

#[tokio::test]
async fn unknown_tickers_and_the_reference_fields() {
    let app = app(reader(clean()), quoted_at());
    let body = get(&app, "/api/mcp/data/vol-arb-scan?ticker=SPYY", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert!(body.to_string().contains("SPY"), "{body}");
    get(&app, "/api/mcp/data/vol-arb-scan?ticker=1$", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    // The reference documents a skew row's fields: a chain with a steep put wing has one.
    let mut steep = clean();
    for r in steep.iter_mut().filter(|r| r.strike < 100.0) {
        r.put.iv = r.put.iv.map(|v| v + 0.10);
        r.call.iv = r.call.iv.map(|v| v + 0.10);
    }
    let d = scan(steep, "/vol-arb-scan?ticker=SPY").await;
    assert!(!list(&d, "skew_trades").is_empty(), "{d}");
    let mut with_rows = d.clone();
    for (name, rows) in [
        (
            "butterfly_mispricings",
            planted_rows("butterfly_mispricings").await,
        ),
        ("calendar_spreads", planted_rows("calendar_spreads").await),
        (
            "put_call_parity_violations",
            planted_rows("put_call_parity_violations").await,
        ),
    ] {
        with_rows[name] = rows;
    }
    assert_documented_fields_served("vol-arb-scan", &with_rows);
}

async fn planted_rows(name: &str) -> Value {
    scan(planted(), "/vol-arb-scan").await[name].clone()
}
