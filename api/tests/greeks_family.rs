//! `/third-order-greeks` and `/greeks-heatmap` over an in-memory market: the higher-order
//! Greeks recomputed here from closed forms at each contract's IV, the heatmap cells, sums and
//! levels recomputed from the chain rows, and the same strike's gamma agreeing across
//! `/chain`, `/greeks-heatmap` and `/gex` (and batch answers agreeing with single ones).

mod common;
mod exposure_support;

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::get;
use exposure_support::{Market, MemoryMarket, app, assert_close, market, num};
use optics_schemas::{ChainRow, ChainSide};
use serde_json::Value;

const SPOT: f64 = 100.0;
/// The chain's Greeks come from the library's closed forms, evaluated with shared
/// exponentials; the textbook forms below agree to rounding.
const GREEK_TOLERANCE: f64 = 1e-9;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 45, 0).unwrap()
}

fn spy() -> Market {
    market("SPY", SPOT, 61, 7)
}

fn date(value: &Value) -> NaiveDate {
    value.as_str().unwrap().parse().unwrap()
}

/// Higher-order Black–Scholes–Merton Greeks of one side, from the textbook closed forms
/// (Haug, "The Complete Guide to Option Pricing Formulas", 2nd ed., ch. 2) in the service's
/// units: speed per $1, zomma/vanna/vomma/ultima per vol point (σ in decimal, so 1e-2 per
/// order in σ), color per calendar day of time passing (T in years of 365 days).
struct TextbookGreeks {
    speed: f64,
    zomma: f64,
    color: f64,
    vomma: f64,
    ultima: f64,
    vanna: f64,
}

fn textbook(row: &ChainRow, sigma: f64) -> TextbookGreeks {
    let (s, k, t, r, q) = (
        row.spot,
        row.strike,
        row.years_to_expiry,
        row.rate,
        row.carry_yield,
    );
    let sqrt_t = t.sqrt();
    let d1 = ((s / k).ln() + (r - q + 0.5 * sigma * sigma) * t) / (sigma * sqrt_t);
    let d2 = d1 - sigma * sqrt_t;
    let pdf = (-0.5 * d1 * d1).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let carry = (-q * t).exp();
    let gamma = carry * pdf / (s * sigma * sqrt_t);
    let vega = s * carry * pdf * sqrt_t;
    let vomma = vega * d1 * d2 / sigma;
    TextbookGreeks {
        speed: -gamma / s * (d1 / (sigma * sqrt_t) + 1.0),
        zomma: gamma * (d1 * d2 - 1.0) / sigma * 1e-2,
        // Haug's color is ∂Γ/∂T (maturity); one day of time passing is −∂Γ/∂T / 365.
        color: carry * pdf / (2.0 * s * t * sigma * sqrt_t)
            * (2.0 * q * t
                + 1.0
                + d1 * (2.0 * (r - q) * t - d2 * sigma * sqrt_t) / (sigma * sqrt_t))
            / 365.0,
        vomma: vomma * 1e-4,
        ultima: -vega / (sigma * sigma) * (d1 * d2 * (1.0 - d1 * d2) + d1 * d1 + d2 * d2) * 1e-6,
        vanna: -carry * pdf * d2 / sigma * 1e-2,
    }
}

fn row_at(rows: &[ChainRow], strike: f64) -> &ChainRow {
    rows.iter()
        .find(|r| r.strike == strike)
        .unwrap_or_else(|| panic!("no row at {strike}"))
}

#[tokio::test]
async fn third_order_greeks_match_the_closed_forms_at_each_iv() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let expiration = spy.chain.expirations[1];
    let uri = format!("/api/mcp/data/third-order-greeks/SPY?expiration={expiration}");
    let data = get(&app, &uri, &[]).await.data();
    let rows = spy.chain.rows_of(expiration);

    assert_eq!(data["ticker"], "SPY");
    assert_eq!(date(&data["expiration"]), expiration);
    assert_eq!(data["dte"], rows[0].dte);
    assert_eq!(data["stock_price"], SPOT);
    assert_eq!(data["model"], "bsm");
    assert_eq!(data["greeks_with_respect_to"], "spot");
    assert_eq!(data["iv_units"], "percent");
    for greek in [
        "speed", "zomma", "color", "vomma", "ultima", "vanna", "charm",
    ] {
        assert!(
            data["definitions"][greek]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "definition of {greek}"
        );
    }

    // Every contract with an IV is listed once, with Greeks recomputed here at its IV.
    let detailed = data["detailed"].as_array().unwrap();
    let mut compared: Vec<(&str, f64, &str, f64, f64)> = Vec::new();
    let mut with_iv = 0;
    let mut without_iv = 0;
    for row in rows {
        for (code, side) in [("C", &row.call), ("P", &row.put)] {
            if !side.is_listed() {
                continue;
            }
            let Some(iv) = side.iv else {
                without_iv += 1;
                continue;
            };
            with_iv += 1;
            let entry = detailed
                .iter()
                .find(|d| num(&d["strike"], "strike") == row.strike && d["type"] == code)
                .unwrap_or_else(|| panic!("no detailed {code} {}", row.strike));
            assert_close(num(&entry["iv"], "iv"), 100.0 * iv, 1e-12, "iv");
            assert_eq!(
                entry["open_interest"],
                serde_json::json!(side.open_interest)
            );
            let expected = textbook(row, iv);
            for (name, want) in [
                ("speed", expected.speed),
                ("zomma", expected.zomma),
                ("color", expected.color),
                ("vomma", expected.vomma),
                ("ultima", expected.ultima),
                ("vanna", expected.vanna),
            ] {
                compared.push((name, row.strike, code, num(&entry[name], name), want));
            }
            // Charm: its own closed form differs by side; the chain's value is reported as is.
            assert_eq!(
                entry["charm"],
                serde_json::json!(side.greeks.charm.unwrap())
            );
        }
    }
    // Relative agreement, with an absolute floor of the Greek's largest size in the
    // expiration: far-wing values and the zeros of zomma and ultima are differences of
    // large terms, where the two evaluations may differ in the last bits of those terms.
    for (name, strike, code, got, want) in &compared {
        let largest = compared
            .iter()
            .filter(|c| c.0 == *name)
            .map(|c| c.4.abs())
            .fold(0.0, f64::max);
        assert!(
            (got - want).abs() <= GREEK_TOLERANCE * want.abs() + 1e-12 * largest,
            "{name} {code} {strike}: {got} vs textbook {want}"
        );
    }
    assert!(with_iv > 50, "{with_iv} contracts with an IV");
    assert_eq!(detailed.len(), with_iv);
    assert_eq!(data["contracts_without_iv"], without_iv);

    // By strike: the out-of-the-money contract (call at or above the forward, put below).
    let by_strike = data["greeks_by_strike"].as_array().unwrap();
    assert!(!by_strike.is_empty());
    let mut previous = f64::NEG_INFINITY;
    for entry in by_strike {
        let strike = num(&entry["strike"], "strike");
        assert!(strike > previous, "ascending strikes");
        previous = strike;
        let row = row_at(rows, strike);
        let otm_call = strike >= row.forward;
        let (preferred, code): (&ChainSide, &str) = if otm_call {
            (&row.call, "C")
        } else {
            (&row.put, "P")
        };
        if preferred.iv.is_some() {
            assert_eq!(entry["side"], code, "side at {strike}");
            assert_eq!(entry["speed"], serde_json::json!(preferred.greeks.speed));
            assert_eq!(entry["vomma"], serde_json::json!(preferred.greeks.vomma));
        } else {
            assert_ne!(entry["side"], code, "fallback side at {strike}");
        }
    }
}

#[tokio::test]
async fn third_order_greeks_default_and_errors() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy).covering("QQQ"), now());
    let data = get(&app, "/api/mcp/data/third-order-greeks/SPY", &[])
        .await
        .data();
    assert_eq!(date(&data["expiration"]), spy.chain.expirations[0]);

    let body = get(
        &app,
        "/api/mcp/data/third-order-greeks/SPY?expiration=2026-11-21",
        &[],
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"].as_str().unwrap().contains("2026-11-21"),
        "{body}"
    );
    get(
        &app,
        "/api/mcp/data/third-order-greeks/SPY?expiration=soon",
        &[],
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    let body = get(&app, "/api/mcp/data/third-order-greeks/NOPE", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert!(body["error"].as_str().unwrap().contains("NOPE"), "{body}");
    let body = get(&app, "/api/mcp/data/third-order-greeks/QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
}

/// The heatmap grid recomputed from the chain: (expirations, strikes, row lookup).
fn expected_grid(market: &Market) -> (Vec<NaiveDate>, Vec<f64>) {
    let chain = &market.chain;
    let expirations: Vec<NaiveDate> = chain
        .expirations
        .iter()
        .copied()
        .filter(|e| *e >= chain.trade_date)
        .take(12)
        .collect();
    let mut strikes: Vec<f64> = chain
        .rows
        .iter()
        .filter(|r| expirations.contains(&r.expiration))
        .map(|r| r.strike)
        .filter(|k| (SPOT * 0.85..=SPOT * 1.15).contains(k))
        .collect();
    strikes.sort_by(f64::total_cmp);
    strikes.dedup();
    (expirations, strikes)
}

fn cell(
    market: &Market,
    expiration: NaiveDate,
    strike: f64,
    calls: bool,
    greek: &str,
) -> Option<f64> {
    let row = market
        .chain
        .rows_of(expiration)
        .iter()
        .find(|r| r.strike == strike)?;
    let side = if calls { &row.call } else { &row.put };
    let g = &side.greeks;
    match greek {
        "charm" => g.charm,
        "delta" => g.delta,
        "gamma" => g.gamma,
        "iv" => side.iv,
        "rho" => g.rho,
        "theta" => g.theta,
        "vanna" => g.vanna,
        "vega" => g.vega,
        other => panic!("{other}"),
    }
}

fn as_option(value: &Value) -> Option<f64> {
    if value.is_null() {
        None
    } else {
        Some(num(value, "cell"))
    }
}

#[tokio::test]
async fn heatmap_cells_sums_and_levels_match_the_chain() {
    let spy = spy();
    let earnings = NaiveDate::from_ymd_opt(2026, 12, 3).unwrap();
    let reader = MemoryMarket::default()
        .with(&spy)
        .with_earnings("SPY", NaiveDate::from_ymd_opt(2026, 10, 20).unwrap())
        .with_earnings("SPY", earnings);
    let app = app(reader, now());
    let (expirations, strikes) = expected_grid(&spy);

    for (calls, query) in [(true, ""), (false, "?option_type=puts&greek=vega")] {
        let uri = format!("/api/mcp/data/greeks-heatmap/SPY{query}");
        let data = get(&app, &uri, &[]).await.data();
        assert_eq!(data["option_type"], if calls { "calls" } else { "puts" });
        let got_strikes: Vec<f64> = data["strikes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| num(s, "strike"))
            .collect();
        assert_eq!(got_strikes, strikes);
        let raw: Vec<NaiveDate> = data["expirations_raw"]
            .as_array()
            .unwrap()
            .iter()
            .map(date)
            .collect();
        assert_eq!(raw, expirations);
        for (label, expiration) in data["expirations"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&expirations)
        {
            let dte = spy.chain.rows_of(*expiration)[0].dte;
            assert_eq!(label.as_str().unwrap(), format!("{expiration} ({dte}d)"));
        }
        assert_eq!(date(&data["earnings_date"]), earnings);

        let mut points = 0;
        for greek in [
            "charm", "delta", "gamma", "iv", "rho", "theta", "vanna", "vega",
        ] {
            let matrix = data["greek_matrices"][greek].as_array().unwrap();
            assert_eq!(matrix.len(), expirations.len(), "{greek} rows");
            let mut by_strike = vec![0.0; strikes.len()];
            for (i, (row, expiration)) in matrix.iter().zip(&expirations).enumerate() {
                let row = row.as_array().unwrap();
                assert_eq!(row.len(), strikes.len(), "{greek} columns");
                let mut sum = 0.0;
                for (j, (value, strike)) in row.iter().zip(&strikes).enumerate() {
                    let expected = cell(&spy, *expiration, *strike, calls, greek);
                    assert_eq!(as_option(value), expected, "{greek} {expiration} {strike}");
                    if let Some(v) = expected {
                        sum += v;
                        by_strike[j] += v;
                        if greek == "gamma" {
                            points += 1;
                        }
                    }
                }
                if greek != "iv" {
                    let agg = &data["aggregates"][greek];
                    assert_eq!(date(&agg["by_expiration"][i]["expiration"]), *expiration);
                    assert_close(
                        num(&agg["by_expiration"][i]["value"], "sum"),
                        sum,
                        1e-12,
                        "by expiration",
                    );
                }
            }
            if greek != "iv" {
                let agg = data["aggregates"][greek]["by_strike"].as_array().unwrap();
                for ((entry, strike), want) in agg.iter().zip(&strikes).zip(&by_strike) {
                    assert_eq!(num(&entry["strike"], "strike"), *strike);
                    assert_close(num(&entry["value"], "sum"), *want, 1e-12, "by strike");
                }
            } else {
                assert!(data["aggregates"].get("iv").is_none(), "IV has no sums");
            }
        }
        assert!(points > 60, "{points} points");
        assert_eq!(data["data_points"], points);
        let selected = if calls { "gamma" } else { "vega" };
        assert_eq!(data["greek"], selected);
        assert_eq!(data["greek_matrix"], data["greek_matrices"][selected]);

        // Walls: most call / put open interest over the grid's expirations, every strike.
        let mut oi: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
        for row in spy
            .chain
            .rows
            .iter()
            .filter(|r| expirations.contains(&r.expiration))
        {
            let entry = oi.entry((row.strike * 100.0) as i64).or_default();
            entry.0 += row.call.open_interest.unwrap_or(0);
            entry.1 += row.put.open_interest.unwrap_or(0);
        }
        let wall = |pick: fn(&(u64, u64)) -> u64| {
            let most = oi.values().map(pick).max().unwrap();
            *oi.iter().find(|(_, v)| pick(v) == most).unwrap().0 as f64 / 100.0
        };
        assert_eq!(
            num(&data["levels"]["oi_call_wall"], "call wall"),
            wall(|v| v.0)
        );
        assert_eq!(
            num(&data["levels"]["oi_put_wall"], "put wall"),
            wall(|v| v.1)
        );
        let pain = get(&app, "/api/mcp/data/max-pain/SPY", &[]).await.data();
        assert_eq!(data["levels"]["max_pain"], pain["max_pain_strike"]);
        assert_eq!(data["levels"]["max_pain_expiration"], pain["expiration"]);
    }
}

#[tokio::test]
async fn heatmap_rejects_bad_choices_and_reports_missing_data() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy).covering("QQQ"), now());
    let body = get(&app, "/api/mcp/data/greeks-heatmap/SPY?greek=lambda", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("lambda"), "{body}");
    get(
        &app,
        "/api/mcp/data/greeks-heatmap/SPY?option_type=both",
        &[],
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    // Case-insensitive words; no earnings scheduled → null.
    let data = get(
        &app,
        "/api/mcp/data/greeks-heatmap/SPY?option_type=PUTS",
        &[],
    )
    .await
    .data();
    assert_eq!(data["option_type"], "puts");
    assert!(data["earnings_date"].is_null());
    let body = get(&app, "/api/mcp/data/greeks-heatmap/QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    get(&app, "/api/mcp/data/greeks-heatmap/NOPE", &[])
        .await
        .error(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_same_strikes_gamma_agrees_across_chain_heatmap_and_gex() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let expiration = spy.chain.expirations[1];
    let chain = get(
        &app,
        &format!("/api/mcp/data/chain/SPY?expiration={expiration}&strikes_around=0"),
        &[],
    )
    .await
    .data();
    let heatmap = get(&app, "/api/mcp/data/greeks-heatmap/SPY", &[])
        .await
        .data();
    let gex = get(
        &app,
        &format!("/api/mcp/data/gex/SPY?expiration={expiration}"),
        &[],
    )
    .await
    .data();
    let third = get(
        &app,
        &format!("/api/mcp/data/third-order-greeks/SPY?expiration={expiration}"),
        &[],
    )
    .await
    .data();

    let row_index = heatmap["expirations_raw"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| date(e) == expiration)
        .unwrap();
    let heat_strikes = heatmap["strikes"].as_array().unwrap();
    let heat_row = heatmap["greek_matrices"]["gamma"][row_index]
        .as_array()
        .unwrap();
    let gex_contracts = gex["by_expiration"][0]["detailed"].as_array().unwrap();
    let mut compared = 0;
    for row in chain["chains"][expiration.to_string()].as_array().unwrap() {
        let strike = num(&row["Strike"], "Strike");
        let Some(gamma) = row["Gamma Call"].as_f64() else {
            continue;
        };
        let Some(column) = heat_strikes.iter().position(|s| num(s, "s") == strike) else {
            continue;
        };
        assert_eq!(
            num(&heat_row[column], "heatmap gamma"),
            gamma,
            "heatmap {strike}"
        );
        if let Some(contract) = gex_contracts
            .iter()
            .find(|c| num(&c["strike"], "s") == strike && c["type"] == "C")
        {
            assert_eq!(num(&contract["gamma"], "gex gamma"), gamma, "gex {strike}");
            compared += 1;
        }
        // Speed is the derivative of that gamma: present wherever it is.
        assert!(
            third["detailed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| num(&c["strike"], "s") == strike && c["type"] == "C"),
            "third-order {strike}"
        );
    }
    assert!(compared > 20, "{compared} strikes compared");
}

#[tokio::test]
async fn batch_answers_agree_with_single_ones() {
    let (spy, iwm) = (spy(), market("IWM", 240.0, 41, 3));
    let app = app(MemoryMarket::default().with(&spy).with(&iwm), now());
    let batch = get(&app, "/api/mcp/data/batch/gex?tickers=SPY,IWM", &[])
        .await
        .data();
    let moves = get(
        &app,
        "/api/mcp/data/batch/expected-move?tickers=SPY,IWM",
        &[],
    )
    .await
    .data();
    for symbol in ["SPY", "IWM"] {
        let single = get(&app, &format!("/api/mcp/data/gex/{symbol}"), &[])
            .await
            .data();
        let result = &batch["results"][symbol];
        for key in [
            "total_gex",
            "call_gex",
            "put_gex",
            "flip_level",
            "gex_ratio",
            "max_gex_strike",
            "expirations_included",
            "expirations_through",
            "key_levels",
            "implications",
            "stock_price",
            "as_of",
        ] {
            assert_eq!(result[key], single[key], "{symbol} gex {key}");
        }
        let single = get(&app, &format!("/api/mcp/data/expected-move/{symbol}"), &[])
            .await
            .data();
        let result = &moves["results"][symbol];
        for key in [
            "expiration",
            "expected_move_dollars",
            "expected_move_percent",
            "expected_move_pct",
            "upper_bound",
            "lower_bound",
            "straddle_price",
            "stock_price",
        ] {
            assert_eq!(result[key], single[key], "{symbol} expected move {key}");
        }
    }
}

#[tokio::test]
async fn cached_answers_are_keyed_by_query_and_client_kind() {
    let spy = spy();
    let reader = MemoryMarket {
        generation: Some(7),
        ..MemoryMarket::default().with(&spy).covering("QQQ")
    };
    let app = app(reader, now());
    let client = [("x-service-client", "mcp")];
    let full = get(&app, "/api/mcp/data/gex/SPY", &[]).await.data();
    let compact = get(&app, "/api/mcp/data/gex/SPY", &client).await.data();
    assert!(full.get("window").is_none(), "full answer has no window");
    assert_eq!(compact["window"]["strikes_around"], 25);
    // Again: the held answers, each for its own kind of caller and query.
    assert_eq!(get(&app, "/api/mcp/data/gex/SPY", &[]).await.data(), full);
    assert_eq!(
        get(&app, "/api/mcp/data/gex/SPY", &client).await.data(),
        compact
    );
    let puts = get(
        &app,
        "/api/mcp/data/greeks-heatmap/SPY?option_type=puts",
        &[],
    )
    .await
    .data();
    assert_eq!(puts["option_type"], "puts");
    let calls = get(&app, "/api/mcp/data/greeks-heatmap/SPY", &[])
        .await
        .data();
    assert_eq!(calls["option_type"], "calls");
    // Errors are rebuilt, not held.
    for _ in 0..2 {
        let body = get(&app, "/api/mcp/data/gex/QQQ", &[])
            .await
            .error(StatusCode::FAILED_DEPENDENCY);
        assert_eq!(body["upstream"], true);
    }
}
