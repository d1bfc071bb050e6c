//! The dealer-exposure endpoints over an in-memory market: values checked against sums
//! recomputed here from the chain's per-share Greeks and open interest.

mod common;
mod exposure_support;

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::get;
use exposure_support::{
    FlowTotals, Market, MemoryMarket, app, assert_close, assert_flow_summary, market, num,
};
use optics_api::market::ChainView;
use serde_json::Value;

const SPOT: f64 = 100.0;
/// GEX relative tolerance: the worker recomputes Greeks from the IV with the chain's closed
/// forms, so the two agree to rounding.
const GEX_TOLERANCE: f64 = 1e-7;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 45, 0).unwrap()
}

fn spy() -> Market {
    market("SPY", SPOT, 61, 7)
}

fn spy_app() -> axum::Router {
    app(MemoryMarket::default().with(&spy()).covering("QQQ"), now())
}

/// Dealer GEX of one side recomputed from the chain: ±γ·OI·100·S²·0.01 (calls +, puts −).
fn side_gex(gamma: Option<f64>, oi: Option<u64>, spot: f64, sign: f64) -> f64 {
    match (gamma, oi) {
        (Some(g), Some(oi)) => sign * g * oi as f64 * 100.0 * spot * spot * 0.01,
        _ => 0.0,
    }
}

/// (call GEX, put GEX, open interest) per strike over the chain rows of `expiration` (all when
/// `None`).
fn expected_by_strike(
    chain: &ChainView,
    expiration: Option<NaiveDate>,
) -> BTreeMap<i64, (f64, f64, u64)> {
    let mut out: BTreeMap<i64, (f64, f64, u64)> = BTreeMap::new();
    for row in &chain.rows {
        if expiration.is_some_and(|e| e != row.expiration) {
            continue;
        }
        let entry = out.entry((row.strike * 1000.0) as i64).or_default();
        entry.0 += side_gex(row.call.greeks.gamma, row.call.open_interest, row.spot, 1.0);
        entry.1 += side_gex(row.put.greeks.gamma, row.put.open_interest, row.spot, -1.0);
        entry.2 += row.call.open_interest.unwrap_or(0) + row.put.open_interest.unwrap_or(0);
    }
    out
}

/// Asserts `data`'s `call_<greek>`, `put_<greek>` and `total_<greek>` are `calls`, `puts` and
/// their sum, within `tolerance`.
fn assert_call_put_total(data: &Value, greek: &str, calls: f64, puts: f64, tolerance: f64) {
    for (field, expected) in [
        (format!("call_{greek}"), calls),
        (format!("put_{greek}"), puts),
        (format!("total_{greek}"), calls + puts),
    ] {
        assert_close(num(&data[&field], &field), expected, tolerance, &field);
    }
}

#[tokio::test]
async fn gex_aggregate_totals_and_profile_match_the_chain() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/gex/SPY", &[]).await.data();

    let by_strike = expected_by_strike(&spy.chain, None);
    let call: f64 = by_strike.values().map(|v| v.0).sum();
    let put: f64 = by_strike.values().map(|v| v.1).sum();
    assert!(call > 0.0 && put < 0.0, "{call} {put}");
    assert_call_put_total(&data, "gex", call, put, GEX_TOLERANCE);
    let total = call + put;
    assert_close(
        num(&data["total_gex_billions"], "billions"),
        total / 1e9,
        GEX_TOLERANCE,
        "total_gex_billions",
    );
    assert_close(
        num(&data["gex_ratio"], "gex_ratio"),
        call / put.abs(),
        1e-6,
        "gex_ratio",
    );
    assert_eq!(data["aggregate"], true);
    assert!(data["expiration"].is_null());
    assert_eq!(data["expirations_included"], 3);
    assert_eq!(data["expirations_total"], 3);
    let listed: Vec<String> = spy
        .chain
        .expirations
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(data["expirations_selected"], serde_json::json!(listed));
    // The aggregate runs through the last listed expiration.
    assert_eq!(data["expirations_through"], listed[2]);
    assert_eq!(data["ticker"], "SPY");
    assert_eq!(data["stock_price"], SPOT);
    assert!(
        data.get("window").is_none(),
        "full REST payload has no window"
    );

    // Every strike, summed across expirations.
    let strikes = data["gex_by_strike"].as_array().unwrap();
    let profile = data["gex_profile"].as_array().unwrap();
    assert_eq!(strikes.len(), by_strike.len());
    assert_eq!(profile.len(), by_strike.len());
    for ((point, row), (key, expected)) in profile.iter().zip(strikes).zip(&by_strike) {
        let strike = *key as f64 / 1000.0;
        assert_eq!(num(&row["strike"], "strike"), strike);
        assert_eq!(row["oi"], expected.2);
        assert_close(
            num(&row["gex"], "gex"),
            expected.0 + expected.1,
            GEX_TOLERANCE,
            "gex",
        );
        assert_close(
            num(&point["call_gex"], "c"),
            expected.0,
            GEX_TOLERANCE,
            "call",
        );
        assert_close(
            num(&point["put_gex"], "p"),
            expected.1,
            GEX_TOLERANCE,
            "put",
        );
        assert_close(
            num(&point["net_gex"], "n"),
            expected.0 + expected.1,
            GEX_TOLERANCE,
            "net",
        );
    }

    // Walls: the strikes of the largest call GEX and the largest |put GEX|.
    let call_wall = by_strike
        .iter()
        .max_by(|a, b| a.1.0.total_cmp(&b.1.0))
        .map(|(k, _)| *k as f64 / 1000.0)
        .unwrap();
    let put_wall = by_strike
        .iter()
        .max_by(|a, b| a.1.1.abs().total_cmp(&b.1.1.abs()))
        .map(|(k, _)| *k as f64 / 1000.0)
        .unwrap();
    let levels = &data["key_levels"];
    assert_eq!(num(&levels["call_wall"], "call_wall"), call_wall);
    assert_eq!(num(&levels["put_wall"], "put_wall"), put_wall);
    assert_eq!(levels["spot"], SPOT);

    // The regime follows the sign of net GEX.
    let regime = if total > 0.0 {
        "SUPPRESSED"
    } else {
        "AMPLIFIED"
    };
    assert_eq!(data["implications"]["volatility_regime"], regime);
    assert_eq!(data["by_expiration"].as_array().unwrap().len(), 3);
    assert_eq!(data["data_freshness"], "LIVE");
    assert_eq!(data["is_market_hours"], true);
}

#[tokio::test]
async fn one_expiration_agrees_with_the_chain_strike_by_strike() {
    let spy = spy();
    let expiration = spy.chain.expirations[1];
    let app = app(MemoryMarket::default().with(&spy), now());
    let uri = format!("/api/mcp/data/gex/SPY?expiration={expiration}");
    let data = get(&app, &uri, &[]).await.data();
    assert_eq!(data["aggregate"], false);
    assert_eq!(data["expiration"], expiration.to_string());
    assert_eq!(data["expirations_included"], 1);
    assert_eq!(data["expirations_through"], expiration.to_string());
    // An expiration given: it alone is broken out.
    assert_eq!(data["by_expiration"].as_array().unwrap().len(), 1);

    let by_strike = expected_by_strike(&spy.chain, Some(expiration));
    let total: f64 = by_strike.values().map(|v| v.0 + v.1).sum();
    assert_close(
        num(&data["total_gex"], "total"),
        total,
        GEX_TOLERANCE,
        "total_gex",
    );

    let entry = &data["by_expiration"][0];
    assert_eq!(entry["expiration"], expiration.to_string());
    assert_eq!(entry["dte"], 7);
    // Cumulative GEX is the running sum of the strike GEX.
    let mut running = 0.0;
    for (row, (_, expected)) in entry["gex_by_strike"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&by_strike)
    {
        running += expected.0 + expected.1;
        assert_close(
            num(&row["cumulative_gex"], "cum"),
            running,
            1e-6,
            "cumulative",
        );
    }

    // The same strike's gamma in the chain view and in /gex agree, contract by contract.
    let detailed = entry["detailed"].as_array().unwrap();
    let rows = spy.chain.rows_of(expiration);
    let mut checked = 0;
    for row in rows {
        for (side, code, sign) in [(&row.call, "C", 1.0), (&row.put, "P", -1.0)] {
            let (Some(gamma), Some(oi)) = (side.greeks.gamma, side.open_interest) else {
                continue;
            };
            if oi == 0 {
                continue;
            }
            let found = detailed
                .iter()
                .find(|d| d["strike"] == row.strike && d["type"] == code)
                .unwrap_or_else(|| panic!("no detailed {code} {}", row.strike));
            assert_close(num(&found["gamma"], "gamma"), gamma, 1e-9, "gamma");
            assert_eq!(found["oi"], oi);
            assert_close(
                num(&found["gex"], "gex"),
                side_gex(Some(gamma), Some(oi), row.spot, sign),
                GEX_TOLERANCE,
                "contract gex",
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
    assert_eq!(detailed.len(), checked);

    // Max pain: the strike minimising holders' intrinsic value at settlement.
    let pain = |settle: f64| -> f64 {
        rows.iter()
            .map(|r| {
                let c = r.call.open_interest.unwrap_or(0) as f64 * (settle - r.strike).max(0.0);
                let p = r.put.open_interest.unwrap_or(0) as f64 * (r.strike - settle).max(0.0);
                100.0 * (c + p)
            })
            .sum()
    };
    let least = rows
        .iter()
        .map(|r| pain(r.strike))
        .fold(f64::INFINITY, f64::min);
    let max_pain = num(&data["key_levels"]["max_pain"], "max_pain");
    assert_close(pain(max_pain), least, 1e-12, "pain at max_pain");
}

#[tokio::test]
async fn aggregate_false_reads_the_nearest_expiration_and_breaks_every_one_out() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/gex/SPY?aggregate=false", &[])
        .await
        .data();
    // The top level is the nearest expiration alone (the reference's "one only").
    let nearest = spy.chain.expirations[0];
    assert_eq!(data["aggregate"], false);
    assert_eq!(data["expiration"], nearest.to_string());
    assert_eq!(data["expirations_included"], 1);
    assert_eq!(
        data["expirations_selected"],
        serde_json::json!([nearest.to_string()])
    );
    assert_eq!(data["expirations_through"], nearest.to_string());
    let nearest_strikes = expected_by_strike(&spy.chain, Some(nearest));
    let nearest_total: f64 = nearest_strikes.values().map(|v| v.0 + v.1).sum();
    assert_close(
        num(&data["total_gex"], "total"),
        nearest_total,
        GEX_TOLERANCE,
        "nearest total",
    );
    assert_eq!(
        data["gex_by_strike"].as_array().unwrap().len(),
        nearest_strikes.len()
    );
    // ... and every expiration is broken out, each with its own totals from the chain.
    let entries = data["by_expiration"].as_array().unwrap();
    assert_eq!(entries.len(), spy.chain.expirations.len());
    for (entry, expiration) in entries.iter().zip(&spy.chain.expirations) {
        assert_eq!(entry["expiration"], expiration.to_string());
        let by_strike = expected_by_strike(&spy.chain, Some(*expiration));
        let call: f64 = by_strike.values().map(|v| v.0).sum();
        let put: f64 = by_strike.values().map(|v| v.1).sum();
        assert_close(num(&entry["call_gex"], "c"), call, GEX_TOLERANCE, "call");
        assert_close(num(&entry["put_gex"], "p"), put, GEX_TOLERANCE, "put");
        assert_close(
            num(&entry["total_gex"], "t"),
            call + put,
            GEX_TOLERANCE,
            "total",
        );
        assert_eq!(
            entry["gex_by_strike"].as_array().unwrap().len(),
            by_strike.len()
        );
        assert!(entry.get("window").is_none(), "full detail: no window");
    }
}

#[tokio::test]
async fn compact_detail_windows_strikes_around_spot() {
    let app = spy_app();
    // A service client gets 25 strikes per side (the original client's header is the same
    // signal).
    let data = get(
        &app,
        "/api/mcp/data/gex/SPY",
        &[("x-apexvol-client", "claude")],
    )
    .await
    .data();
    let strikes: Vec<f64> = data["gex_by_strike"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| num(&r["strike"], "strike"))
        .collect();
    assert_eq!(strikes.len(), 50);
    assert_eq!(data["gex_profile"].as_array().unwrap().len(), 50);
    assert_eq!(strikes.iter().filter(|&&k| k < SPOT).count(), 25);
    assert_eq!(strikes.iter().filter(|&&k| k >= SPOT).count(), 25);
    let window = &data["window"];
    assert_eq!(window["detail"], "compact");
    assert_eq!(window["rows_total"], 61);
    assert_eq!(window["rows_returned"], 50);
    assert_eq!(window["truncated"], true);
    assert_eq!(window["strikes_around"], 25);
    // Scalars are never trimmed: the same totals as the full payload.
    let full = get(&app, "/api/mcp/data/gex/SPY", &[]).await.data();
    assert_eq!(data["total_gex"], full["total_gex"]);
    assert_eq!(data["key_levels"], full["key_levels"]);
    // Each by_expiration entry is windowed the same way and says so in its own window.
    for entry in data["by_expiration"].as_array().unwrap() {
        assert_eq!(entry["gex_by_strike"].as_array().unwrap().len(), 50);
        assert!(
            entry["detailed"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| num(&d["strike"], "k") >= strikes[0]
                    && num(&d["strike"], "k") <= strikes[49])
        );
        let window = &entry["window"];
        assert_eq!(window["detail"], "compact");
        assert_eq!(window["rows_total"], 61);
        assert_eq!(window["rows_returned"], 50);
        assert_eq!(window["truncated"], true);
        assert_eq!(window["strikes_around"], 25);
    }
    // The X-Service-Client header is the same signal.
    let same = get(
        &app,
        "/api/mcp/data/gex/SPY",
        &[("x-service-client", "mcp")],
    )
    .await
    .data();
    assert_eq!(same["window"], data["window"]);

    // detail=full overrides the header; detail=compact with strikes_around sizes the window.
    let full = get(
        &app,
        "/api/mcp/data/gex/SPY?detail=full",
        &[("x-service-client", "mcp")],
    )
    .await
    .data();
    assert_eq!(full["gex_by_strike"].as_array().unwrap().len(), 61);
    assert!(full.get("window").is_none());
    let small = get(
        &app,
        "/api/mcp/data/gex/SPY?detail=compact&strikes_around=5",
        &[],
    )
    .await
    .data();
    assert_eq!(small["gex_by_strike"].as_array().unwrap().len(), 10);
    assert_eq!(small["window"]["rows_returned"], 10);
    assert_eq!(small["by_expiration"][1]["window"]["rows_returned"], 10);
}

#[tokio::test]
async fn gex_errors_name_the_cause() {
    let app = spy_app();
    let body = get(&app, "/api/mcp/data/gex/SPY?expiration=2026-11-21", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"].as_str().unwrap().contains("2026-11-27"),
        "{body}"
    );
    get(&app, "/api/mcp/data/gex/SPY?expiration=tomorrow", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    get(&app, "/api/mcp/data/gex/ZZZZ", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    // Covered but nothing priced yet.
    let body = get(&app, "/api/mcp/data/gex/QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
}

/// The straddle recomputed from the chain rows of `expiration`: call + put mid, linear in
/// strike between the listed strikes bracketing the expiration's forward.
fn straddle_at_forward(chain: &ChainView, expiration: NaiveDate) -> (f64, f64) {
    let rows: Vec<_> = chain
        .rows_of(expiration)
        .iter()
        .filter(|r| r.call.mid.is_some() && r.put.mid.is_some())
        .collect();
    let forward = rows[0].forward;
    let straddle = |i: usize| rows[i].call.mid.unwrap() + rows[i].put.mid.unwrap();
    let above = rows.iter().position(|r| r.strike >= forward).unwrap();
    assert!(above > 0, "forward below the strikes");
    let (lo, hi) = (rows[above - 1].strike, rows[above].strike);
    let weight = (forward - lo) / (hi - lo);
    (
        straddle(above - 1) + weight * (straddle(above) - straddle(above - 1)),
        forward,
    )
}

#[tokio::test]
async fn expected_move_skips_the_same_day_expiry_and_prices_the_straddle() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy).covering("QQQ"), now());
    let data = get(&app, "/api/mcp/data/expected-move/SPY", &[])
        .await
        .data();
    // 2026-11-20 expires today: skipped.
    let next = spy.chain.expirations[1];
    assert_eq!(data["expiration"], next.to_string());
    assert_eq!(data["dte"], 7);
    let (straddle, forward) = straddle_at_forward(&spy.chain, next);
    let spot = spy.chain.stock_price();
    assert_close(
        num(&data["expected_move_dollars"], "em"),
        straddle,
        1e-12,
        "move",
    );
    // expected_move_percent is a fraction of spot (spec 2.7); expected_move_pct in percent.
    assert_close(
        num(&data["expected_move_percent"], "fraction"),
        straddle / spot,
        1e-12,
        "fraction of spot",
    );
    assert!(num(&data["expected_move_percent"], "fraction") < 0.5);
    assert_close(
        num(&data["expected_move_pct"], "pct"),
        100.0 * straddle / spot,
        1e-12,
        "percent of spot",
    );
    assert_eq!(
        data["units"]["expected_move_percent"],
        "fraction of spot (0.0191 = 1.91%)"
    );
    assert_close(
        num(&data["upper_bound"], "up"),
        spot + straddle,
        1e-12,
        "upper",
    );
    assert_close(
        num(&data["lower_bound"], "lo"),
        spot - straddle,
        1e-12,
        "lower",
    );
    assert_close(num(&data["forward"], "fwd"), forward, 1e-12, "forward");
    assert_eq!(data["stock_price"], spot);

    // Asked for by date, today's expiry is priced.
    let today = spy.chain.expirations[0];
    let uri = format!("/api/mcp/data/expected-move/SPY?expiration={today}");
    let data = get(&app, &uri, &[]).await.data();
    assert_eq!(data["dte"], 0);
    let (straddle, _) = straddle_at_forward(&spy.chain, today);
    assert_close(
        num(&data["expected_move_dollars"], "em"),
        straddle,
        1e-12,
        "0dte",
    );

    get(
        &app,
        "/api/mcp/data/expected-move/SPY?expiration=2026-11-21",
        &[],
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    let body = get(&app, "/api/mcp/data/expected-move/QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
}

#[tokio::test]
async fn max_pain_minimises_holders_payout_at_every_strike() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let expiration = spy.chain.expirations[2];
    let uri = format!("/api/mcp/data/max-pain/SPY?expiration={expiration}");
    let data = get(&app, &uri, &[]).await.data();
    let rows = spy.chain.rows_of(expiration);
    let pain = |settle: f64| -> f64 {
        rows.iter()
            .map(|r| {
                let c = r.call.open_interest.unwrap_or(0) as f64 * (settle - r.strike).max(0.0);
                let p = r.put.open_interest.unwrap_or(0) as f64 * (r.strike - settle).max(0.0);
                100.0 * (c + p)
            })
            .sum()
    };
    let all = data["all_strikes"].as_array().unwrap();
    assert_eq!(all.len(), rows.len());
    for (entry, row) in all.iter().zip(rows) {
        assert_eq!(num(&entry["strike"], "strike"), row.strike);
        assert_close(
            num(&entry["total_pain"], "pain"),
            pain(row.strike),
            1e-12,
            "pain",
        );
    }
    let least = rows
        .iter()
        .min_by(|a, b| pain(a.strike).total_cmp(&pain(b.strike)))
        .unwrap();
    assert_eq!(num(&data["max_pain_strike"], "mp"), least.strike);
    assert_close(
        num(&data["max_pain_value"], "v"),
        pain(least.strike),
        1e-12,
        "value",
    );
    let distance = least.strike - SPOT;
    assert_close(
        num(&data["distance_from_spot"], "d"),
        distance,
        1e-12,
        "distance",
    );
    assert_close(
        num(&data["distance_pct"], "dp"),
        100.0 * distance / SPOT,
        1e-12,
        "pct",
    );
    let strength = match (100.0 * distance / SPOT).abs() {
        d if d <= 1.0 => "STRONG",
        d if d <= 3.0 => "MODERATE",
        _ => "WEAK",
    };
    assert_eq!(data["magnet_strength"], strength);
    assert_eq!(data["dte"], 14);
    // Default: the nearest expiration.
    let data = get(&app, "/api/mcp/data/max-pain/SPY", &[]).await.data();
    assert_eq!(data["expiration"], spy.chain.expirations[0].to_string());
}

#[tokio::test]
async fn charm_sums_dealer_charm_from_the_chain() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let expiration = spy.chain.expirations[1];
    let uri = format!("/api/mcp/data/charm/SPY?expiration={expiration}");
    let data = get(&app, &uri, &[]).await.data();
    // Dealer charm: ±charm·OI·100 (calls +, puts −), delta shares per day (BSM: k = 1).
    let (mut calls, mut puts) = (0.0, 0.0);
    let mut by_strike = Vec::new();
    for row in spy.chain.rows_of(expiration) {
        let side = |side: &optics_schemas::ChainSide, sign: f64| match (
            side.greeks.charm,
            side.open_interest,
        ) {
            (Some(c), Some(oi)) => sign * c * oi as f64 * 100.0,
            _ => 0.0,
        };
        let (c, p) = (side(&row.call, 1.0), side(&row.put, -1.0));
        calls += c;
        puts += p;
        by_strike.push((row.strike, c + p));
    }
    let tolerance = 1e-7;
    assert_call_put_total(&data, "charm", calls, puts, tolerance);
    let listed = data["charm_by_strike"].as_array().unwrap();
    assert_eq!(listed.len(), by_strike.len());
    for (entry, (strike, expected)) in listed.iter().zip(&by_strike) {
        assert_eq!(num(&entry["strike"], "k"), *strike);
        assert_close(
            num(&entry["charm_exposure"], "e"),
            *expected,
            tolerance,
            "strike",
        );
    }
    let detail = &data["detailed"][0];
    let row = &spy.chain.rows_of(expiration)[0];
    assert_eq!(num(&detail["strike"], "k"), row.strike);
    assert_eq!(detail["type"], "C");
    assert_close(
        num(&detail["iv"], "iv"),
        100.0 * row.call.iv.unwrap(),
        1e-9,
        "iv in percentage points",
    );
    assert_eq!(data["iv_units"], "percent");
    assert_eq!(data["data_status"], "LIVE");
    assert_eq!(data["dte"], 7);
}

fn total_gex_of(market: &Market) -> f64 {
    expected_by_strike(&market.chain, None)
        .values()
        .map(|v| v.0 + v.1)
        .sum()
}

#[tokio::test]
async fn batch_gex_answers_per_symbol_and_lists_failures() {
    let (spy, iwm) = (spy(), market("IWM", 240.0, 41, 3));
    let reader = MemoryMarket::default()
        .with(&spy)
        .with(&iwm)
        .covering("QQQ");
    let app = app(reader, now());
    let data = get(
        &app,
        "/api/mcp/data/batch/gex?tickers=spy,QQQ,IWM,SPY",
        &[("x-service-client", "mcp")],
    )
    .await
    .data();
    assert_eq!(data["tickers"], serde_json::json!(["SPY", "QQQ", "IWM"]));
    assert_eq!(data["requested"], 3);
    assert_eq!(data["succeeded"], 2);
    assert_eq!(data["failed"], 1);
    assert!(
        data["errors"]["QQQ"]
            .as_str()
            .is_some_and(|e| !e.is_empty())
    );
    for (symbol, market) in [("SPY", &spy), ("IWM", &iwm)] {
        let result = &data["results"][symbol];
        assert_close(
            num(&result["total_gex"], "total"),
            total_gex_of(market),
            GEX_TOLERANCE,
            symbol,
        );
        // Compact batch window: 10 strikes each side of spot.
        assert_eq!(result["gex_by_strike"].as_array().unwrap().len(), 20);
        assert_eq!(result["window"]["strikes_around"], 10);
        assert!(result["key_levels"]["max_pain"].is_number());
    }
    // A symbol with no listed options fails the whole call and is named.
    let body = get(&app, "/api/mcp/data/batch/gex?tickers=SPY,NOPE", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert!(body["error"].as_str().unwrap().contains("NOPE"), "{body}");
    // Nobody answers: 424.
    let body = get(&app, "/api/mcp/data/batch/gex?tickers=QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    get(&app, "/api/mcp/data/batch/gex", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn batch_expected_move_prices_each_symbol() {
    let (spy, iwm) = (spy(), market("IWM", 240.0, 41, 3));
    let app = app(MemoryMarket::default().with(&spy).with(&iwm), now());
    let data = get(
        &app,
        "/api/mcp/data/batch/expected-move?tickers=SPY,IWM",
        &[],
    )
    .await
    .data();
    assert_eq!(data["succeeded"], 2);
    for (symbol, market) in [("SPY", &spy), ("IWM", &iwm)] {
        let result = &data["results"][symbol];
        let next = market.chain.expirations[1];
        assert_eq!(result["expiration"], next.to_string());
        let (straddle, _) = straddle_at_forward(&market.chain, next);
        assert_close(
            num(&result["expected_move_dollars"], "em"),
            straddle,
            1e-12,
            symbol,
        );
        let spot = market.chain.stock_price();
        assert_close(
            num(&result["expected_move_percent"], "fraction"),
            straddle / spot,
            1e-12,
            symbol,
        );
        assert_close(
            num(&result["expected_move_pct"], "pct"),
            100.0 * straddle / spot,
            1e-12,
            symbol,
        );
    }
    // One shared horizon when expiration is given.
    let last = spy.chain.expirations[2];
    let uri = format!("/api/mcp/data/batch/expected-move?tickers=SPY,IWM&expiration={last}");
    let data = get(&app, &uri, &[]).await.data();
    assert_eq!(data["results"]["IWM"]["expiration"], last.to_string());
    assert_eq!(data["results"]["SPY"]["dte"], 14);
}

#[tokio::test]
async fn cross_index_gex_normalises_by_option_notional() {
    let markets = [
        spy(),
        market("QQQ", 500.0, 41, 5),
        market("IWM", 240.0, 41, 3),
        market("DIA", 440.0, 41, 9),
    ];
    let reader = markets
        .iter()
        .fold(MemoryMarket::default(), |reader, m| reader.with(m));
    let app = app(reader, now());
    let data = get(&app, "/api/mcp/data/cross-index-gex", &[]).await.data();
    for market in &markets {
        let symbol = market.chain.underlying.as_str();
        let row = &data["comparison"][symbol];
        let total = total_gex_of(market);
        assert_close(
            num(&row["total_gex"], "total"),
            total,
            GEX_TOLERANCE,
            symbol,
        );
        let open_interest: u64 = market
            .chain
            .rows
            .iter()
            .map(|r| r.call.open_interest.unwrap_or(0) + r.put.open_interest.unwrap_or(0))
            .sum();
        let spot = market.chain.stock_price();
        assert_close(
            num(&row["normalized_gex"], "normalized"),
            total / (open_interest as f64 * 100.0 * spot),
            1e-7,
            symbol,
        );
        assert_eq!(row["stock_price"], spot);
        assert_eq!(data["indices"][symbol]["aggregate"], true);
    }
    let data = get(&app, "/api/mcp/data/cross-index-gex?tickers=SPY,QQQ", &[])
        .await
        .data();
    assert_eq!(data["comparison"].as_object().unwrap().len(), 2);
    // REST: every strike of each index, no window.
    assert_eq!(
        data["indices"]["SPY"]["gex_by_strike"]
            .as_array()
            .unwrap()
            .len(),
        61
    );
    assert!(data["indices"]["SPY"].get("window").is_none());
}

#[tokio::test]
async fn cross_index_gex_detail_overrides_the_client_default() {
    let app = app(
        MemoryMarket::default()
            .with(&spy())
            .with(&market("QQQ", 500.0, 81, 5)),
        now(),
    );
    let strikes = |data: &Value, symbol: &str| {
        data["indices"][symbol]["gex_by_strike"]
            .as_array()
            .unwrap()
            .len()
    };
    let client = [("x-service-client", "mcp")];
    // A service client: each index windowed to 25 strikes each side of its spot.
    let compact = get(
        &app,
        "/api/mcp/data/cross-index-gex?tickers=SPY,QQQ",
        &client,
    )
    .await
    .data();
    assert_eq!(strikes(&compact, "SPY"), 50);
    assert_eq!(strikes(&compact, "QQQ"), 50);
    assert_eq!(compact["indices"]["QQQ"]["window"]["rows_total"], 81);
    assert_eq!(compact["indices"]["QQQ"]["window"]["truncated"], true);
    // detail=full overrides the header: every strike, no window.
    let full = get(
        &app,
        "/api/mcp/data/cross-index-gex?tickers=SPY,QQQ&detail=full",
        &client,
    )
    .await
    .data();
    assert_eq!(strikes(&full, "SPY"), 61);
    assert_eq!(strikes(&full, "QQQ"), 81);
    assert!(full["indices"]["QQQ"].get("window").is_none());
    // detail=compact trims for a REST caller too; the comparison is never trimmed.
    let asked = get(
        &app,
        "/api/mcp/data/cross-index-gex?tickers=SPY,QQQ&detail=compact",
        &[],
    )
    .await
    .data();
    assert_eq!(strikes(&asked, "QQQ"), 50);
    assert_eq!(asked["comparison"], full["comparison"]);
    get(&app, "/api/mcp/data/cross-index-gex?detail=brief", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
}

/// Σ over the chain of ±greek·OI·100 (calls +, puts −) with `greek` read from each side; and
/// the net per strike, ascending.
fn dealer_sum(
    chain: &ChainView,
    greek: impl Fn(&optics_schemas::ChainSide, f64) -> Option<f64>,
) -> (f64, f64, Vec<(f64, f64)>) {
    let (mut calls, mut puts) = (0.0, 0.0);
    let mut by_strike: BTreeMap<i64, f64> = BTreeMap::new();
    for row in &chain.rows {
        for (side, sign) in [(&row.call, 1.0), (&row.put, -1.0)] {
            let (Some(value), Some(oi)) = (greek(side, row.spot), side.open_interest) else {
                continue;
            };
            let exposure = sign * value * oi as f64 * 100.0;
            if sign > 0.0 {
                calls += exposure;
            } else {
                puts += exposure;
            }
            *by_strike.entry((row.strike * 1000.0) as i64).or_default() += exposure;
        }
    }
    let by_strike = by_strike
        .into_iter()
        .map(|(k, v)| (k as f64 / 1000.0, v))
        .collect();
    (calls, puts, by_strike)
}

fn largest_abs(values: impl Iterator<Item = (f64, f64)>) -> f64 {
    values
        .fold(None, |best: Option<(f64, f64)>, (k, v)| match best {
            Some((_, b)) if b >= v.abs() => best,
            _ => Some((k, v.abs())),
        })
        .unwrap()
        .0
}

#[tokio::test]
async fn greeks_exposure_totals_and_levels_match_the_chain() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/greeks-exposure/SPY", &[])
        .await
        .data();
    let exposures = data["exposures"].as_object().unwrap();
    let names: Vec<&str> = exposures.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "charm", "color", "delta", "gamma", "speed", "theta", "ultima", "vanna", "vega",
            "vomma", "zomma"
        ]
    );
    assert_eq!(data["greek_levels"].as_object().unwrap().len(), 10);
    assert!(data["greek_levels"].get("gamma").is_none());
    assert_eq!(data["expirations_included"], 3);

    let tolerance = 1e-7;
    for (name, read) in [
        (
            "delta",
            (|s: &optics_schemas::ChainSide| s.greeks.delta) as fn(&_) -> _,
        ),
        ("vanna", |s| s.greeks.vanna),
        ("theta", |s| s.greeks.theta),
        ("vega", |s| s.greeks.vega),
    ] {
        let (calls, puts, by_strike) = dealer_sum(&spy.chain, |side, _| read(side));
        let block = &data["exposures"][name];
        assert_close(num(&block["call_total"], name), calls, tolerance, name);
        assert_close(num(&block["put_total"], name), puts, tolerance, name);
        assert_close(num(&block["total"], name), calls + puts, tolerance, name);
        let profile = block["profile"].as_array().unwrap();
        assert_eq!(profile.len(), by_strike.len());
        for (point, (strike, net)) in profile.iter().zip(&by_strike) {
            assert_eq!(num(&point["strike"], "k"), *strike);
            assert_close(num(&point["net"], name), *net, tolerance, name);
        }
        let key = largest_abs(by_strike.iter().copied());
        assert_eq!(
            num(&data["greek_levels"][name]["key_strike"]["strike"], name),
            key,
            "{name} key strike"
        );
    }

    // Delta-adjusted GEX: each contract's GEX weighted by |delta|.
    let (calls, puts, _) = dealer_sum(&spy.chain, |side, spot| {
        Some(side.greeks.gamma? * spot * spot * 0.01 * side.greeks.delta?.abs())
    });
    let gamma = &data["exposures"]["gamma"];
    assert_close(
        num(&gamma["delta_adj_call_total"], "c"),
        calls,
        tolerance,
        "adj call",
    );
    assert_close(
        num(&gamma["delta_adj_put_total"], "p"),
        puts,
        tolerance,
        "adj put",
    );
    let total_gex = total_gex_of(&spy);
    assert_close(
        num(&gamma["total"], "gex"),
        total_gex,
        GEX_TOLERANCE,
        "gamma total",
    );
    assert_close(
        num(&gamma["gex_billions"], "b"),
        total_gex / 1e9,
        GEX_TOLERANCE,
        "bn",
    );

    // Vanna resistance: the largest |net vanna| at or above spot; support below.
    let (_, _, vanna) = dealer_sum(&spy.chain, |side, _| side.greeks.vanna);
    let resistance = largest_abs(vanna.iter().copied().filter(|(k, _)| *k >= SPOT));
    let support = largest_abs(vanna.iter().copied().filter(|(k, _)| *k < SPOT));
    let levels = &data["key_levels"];
    assert_eq!(num(&levels["vanna_resistance"]["strike"], "r"), resistance);
    assert_eq!(num(&levels["vanna_support"]["strike"], "s"), support);
    assert_close(
        num(&levels["vanna_resistance"]["distance_pct"], "d"),
        100.0 * (resistance - SPOT) / SPOT,
        1e-12,
        "distance",
    );
    assert!(levels["call_wall"]["gex"].as_f64().is_some_and(|g| g > 0.0));
    assert_eq!(data["units"]["charm"], "delta shares per day");

    // One expiration.
    let expiration = spy.chain.expirations[2];
    let uri = format!("/api/mcp/data/greeks-exposure/SPY?expiration={expiration}");
    let one = get(&app, &uri, &[]).await.data();
    assert_eq!(
        one["expirations"],
        serde_json::json!([expiration.to_string()])
    );
    assert_eq!(one["aggregate"], false);
    // The aggregate read has no per-expiration breakdown.
    assert!(data.get("by_expiration").is_none());
    assert!(one.get("by_expiration").is_none());
}

/// `dealer_sum` over the rows of one expiration.
fn dealer_sum_of(
    chain: &ChainView,
    expiration: NaiveDate,
    greek: impl Fn(&optics_schemas::ChainSide) -> Option<f64>,
) -> (f64, f64, Vec<(f64, f64)>) {
    let rows = chain.rows_of(expiration).to_vec();
    let one = ChainView::new(rows).unwrap();
    dealer_sum(&one, |side, _| greek(side))
}

#[tokio::test]
async fn greeks_exposure_aggregate_false_breaks_out_every_expiration() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(
        &app,
        "/api/mcp/data/greeks-exposure/SPY?aggregate=false",
        &[],
    )
    .await
    .data();
    let nearest = spy.chain.expirations[0];
    // Top level: the nearest expiration alone.
    assert_eq!(data["aggregate"], false);
    assert_eq!(
        data["expirations"],
        serde_json::json!([nearest.to_string()])
    );
    let (calls, puts, _) = dealer_sum_of(&spy.chain, nearest, |s| s.greeks.delta);
    assert_close(
        num(&data["exposures"]["delta"]["total"], "delta"),
        calls + puts,
        1e-7,
        "nearest delta",
    );
    // One block per expiration, each Greek's totals and profile from that expiration's rows.
    let blocks = data["by_expiration"].as_array().unwrap();
    assert_eq!(blocks.len(), spy.chain.expirations.len());
    for (block, expiration) in blocks.iter().zip(&spy.chain.expirations) {
        assert_eq!(block["expiration"], expiration.to_string());
        assert_eq!(
            block["dte"],
            (*expiration - spy.chain.trade_date).num_days()
        );
        for (name, read) in [
            (
                "delta",
                (|s: &optics_schemas::ChainSide| s.greeks.delta) as fn(&_) -> _,
            ),
            ("vanna", |s| s.greeks.vanna),
            ("charm", |s| s.greeks.charm),
            ("vega", |s| s.greeks.vega),
        ] {
            let (calls, puts, by_strike) = dealer_sum_of(&spy.chain, *expiration, read);
            let greek = &block["exposures"][name];
            assert_close(num(&greek["call_total"], name), calls, 1e-7, name);
            assert_close(num(&greek["put_total"], name), puts, 1e-7, name);
            assert_close(num(&greek["total"], name), calls + puts, 1e-7, name);
            let profile = greek["profile"].as_array().unwrap();
            assert_eq!(profile.len(), by_strike.len(), "{name} {expiration}");
            for (point, (strike, net)) in profile.iter().zip(&by_strike) {
                assert_eq!(num(&point["strike"], "k"), *strike);
                assert_close(num(&point["net"], name), *net, 1e-7, name);
            }
        }
        let gex: f64 = expected_by_strike(&spy.chain, Some(*expiration))
            .values()
            .map(|v| v.0 + v.1)
            .sum();
        assert_close(
            num(&block["exposures"]["gamma"]["total"], "gex"),
            gex,
            GEX_TOLERANCE,
            "gamma",
        );
    }
    // With an expiration named, aggregate=false breaks out that one alone.
    let last = spy.chain.expirations[2];
    let uri = format!("/api/mcp/data/greeks-exposure/SPY?aggregate=false&expiration={last}");
    let one = get(&app, &uri, &[]).await.data();
    assert_eq!(one["by_expiration"].as_array().unwrap().len(), 1);
    assert_eq!(one["by_expiration"][0]["expiration"], last.to_string());
    assert_eq!(
        one["by_expiration"][0]["exposures"]["delta"]["total"],
        one["exposures"]["delta"]["total"]
    );
}

/// Standard normal CDF from Abramowitz & Stegun 7.1.26 (|erf error| < 1.5e-7, so a straddle on
/// a $100 forward is off by at most ~3e-5 dollars: the theta-burn checks use 1e-5 relative).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-z * z).exp();
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// Tolerance of checks against [`black_straddle`] (see [`normal_cdf`]).
const BLACK_TOLERANCE: f64 = 1e-5;

/// Black-76 straddle (call + put) on forward `f`, strike `k`, vol `v`, years `t`, rate `r`.
fn black_straddle(f: f64, k: f64, v: f64, t: f64, r: f64) -> f64 {
    let sd = v * t.sqrt();
    let d1 = ((f / k).ln() + 0.5 * sd * sd) / sd;
    let d2 = d1 - sd;
    let call = f * normal_cdf(d1) - k * normal_cdf(d2);
    let put = k * normal_cdf(-d2) - f * normal_cdf(-d1);
    (-r * t).exp() * (call + put)
}

#[tokio::test]
async fn zero_dte_reads_the_same_day_expiration() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/zero-dte/SPY", &[]).await.data();
    let today = spy.chain.expirations[0];
    assert_eq!(data["expiration"], today.to_string());
    assert_eq!(data["dte"], 0);
    assert_eq!(data["is_same_day"], true);

    let (straddle, forward) = straddle_at_forward(&spy.chain, today);
    let metrics = &data["metrics"];
    assert_close(
        num(&metrics["expected_move_dollars"], "em"),
        straddle,
        1e-12,
        "em",
    );
    assert_close(
        num(&metrics["expected_move"], "em%"),
        100.0 * straddle / SPOT,
        1e-12,
        "em%",
    );
    assert_close(
        num(&data["key_levels"]["em_upper"], "up"),
        SPOT + straddle,
        1e-12,
        "up",
    );
    // 15:30 UTC is 10:30 in New York: 5.5 hours to the close.
    assert_close(num(&metrics["hours_to_expiry"], "h"), 5.5, 1e-6, "hours");

    // ATM: the strike nearest the forward; its mean IV in points.
    let rows = spy.chain.rows_of(today);
    let atm = rows
        .iter()
        .min_by(|a, b| {
            (a.strike - forward)
                .abs()
                .total_cmp(&(b.strike - forward).abs())
        })
        .unwrap();
    let atm_iv = 0.5 * (atm.call.iv.unwrap() + atm.put.iv.unwrap());
    assert_eq!(num(&metrics["atm_strike"], "k"), atm.strike);
    assert_close(
        num(&metrics["atm_iv"], "iv"),
        100.0 * atm_iv,
        1e-12,
        "atm iv",
    );

    // Theta burn: Black-76 straddle hour by hour, down to intrinsic at the close.
    let burn = &data["theta_burn"];
    let hours = burn["hourly_decay"].as_array().unwrap();
    assert_eq!(hours.len(), 6);
    let value_at = |hours_left: f64| {
        black_straddle(forward, atm.strike, atm_iv, hours_left / 8760.0, atm.rate)
    };
    assert_close(
        num(&burn["straddle_value_now"], "now"),
        value_at(5.5),
        BLACK_TOLERANCE,
        "now",
    );
    assert_close(
        num(&hours[0]["straddle_value"], "h1"),
        value_at(4.5),
        BLACK_TOLERANCE,
        "hour 1",
    );
    let last = &hours[5];
    assert_eq!(num(&last["hours_to_expiry"], "left"), 0.0);
    assert_close(
        num(&last["straddle_value"], "close"),
        (forward - atm.strike).abs(),
        1e-12,
        "intrinsic at the close",
    );
    let decayed: f64 = hours.iter().map(|h| num(&h["decay"], "d")).sum();
    assert_close(
        decayed,
        value_at(5.5) - (forward - atm.strike).abs(),
        BLACK_TOLERANCE,
        "decay sums to the time value",
    );

    // Gamma regime of the expiration.
    let total: f64 = expected_by_strike(&spy.chain, Some(today))
        .values()
        .map(|v| v.0 + v.1)
        .sum();
    let regime = &data["gamma_regime"];
    assert_close(
        num(&regime["total_net_gex"], "gex"),
        total,
        GEX_TOLERANCE,
        "gex",
    );
    let expected = if total > 0.0 {
        "POSITIVE_GAMMA"
    } else {
        "NEGATIVE_GAMMA"
    };
    assert_eq!(regime["regime"], expected);

    // 25-delta risk reversal.
    let nearest = |target: f64, call: bool| {
        rows.iter()
            .filter_map(|r| {
                let side = if call { &r.call } else { &r.put };
                Some((side.greeks.delta?, side.iv?))
            })
            .min_by(|a, b| (a.0 - target).abs().total_cmp(&(b.0 - target).abs()))
            .unwrap()
            .1
    };
    let rr = 100.0 * (nearest(-0.25, false) - nearest(0.25, true));
    assert_close(
        num(&data["skew_signal"]["risk_reversal_25d"], "rr"),
        rr,
        1e-12,
        "risk reversal",
    );
    // No stored session history in this market: the scored read is null, each with a reason.
    for field in ["em_hit_rate", "iv_forecast", "edge_score"] {
        assert!(data[field].is_null(), "{field}: {}", data[field]);
        assert!(data["scored_read"][format!("{field}_reason")].is_string());
    }

    // Full REST: every strike; compact windows both lists around spot.
    assert_eq!(data["by_strike"].as_array().unwrap().len(), 61);
    let compact = get(
        &app,
        "/api/mcp/data/zero-dte/SPY?strikes_around=5",
        &[("x-service-client", "mcp")],
    )
    .await
    .data();
    assert_eq!(compact["by_strike"].as_array().unwrap().len(), 10);
    assert_eq!(compact["chain_table"].as_array().unwrap().len(), 10);
    assert_eq!(compact["window"]["truncated"], true);
    let row = &compact["chain_table"][5];
    let strike = num(&row["strike"], "k");
    assert_eq!(strike, SPOT);
    let chain_row = rows.iter().find(|r| r.strike == strike).unwrap();
    assert_eq!(num(&row["call_bid"], "bid"), chain_row.call.bid.unwrap());
}

#[tokio::test]
async fn zero_dte_compact_default_keeps_30_strikes_each_side() {
    // 121 one-dollar strikes from 40 to 160: 60 below spot, 61 at or above.
    let wide = market("SPY", SPOT, 121, 7);
    let app = app(MemoryMarket::default().with(&wide), now());
    let full = get(&app, "/api/mcp/data/zero-dte/SPY", &[]).await.data();
    assert_eq!(full["by_strike"].as_array().unwrap().len(), 121);
    assert!(full.get("window").is_none());
    for header in ["x-apexvol-client", "x-service-client"] {
        let data = get(&app, "/api/mcp/data/zero-dte/SPY", &[(header, "assistant")])
            .await
            .data();
        let strikes: Vec<f64> = data["by_strike"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| num(&r["strike"], "k"))
            .collect();
        assert_eq!(strikes.len(), 60, "{header}");
        assert_eq!(strikes.iter().filter(|&&k| k < SPOT).count(), 30);
        assert_eq!(strikes.iter().filter(|&&k| k >= SPOT).count(), 30);
        assert_eq!(strikes[0], SPOT - 30.0);
        assert_eq!(strikes[59], SPOT + 29.0);
        let table: Vec<f64> = data["chain_table"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| num(&r["strike"], "k"))
            .collect();
        assert_eq!(table, strikes, "chain_table keeps the same strikes");
        let window = &data["window"];
        assert_eq!(window["detail"], "compact");
        assert_eq!(window["strikes_around"], 30);
        assert_eq!(window["rows_total"], 121);
        assert_eq!(window["rows_returned"], 60);
        assert_eq!(window["truncated"], true);
        // Scalars are never trimmed.
        assert_eq!(data["metrics"], full["metrics"]);
        assert_eq!(data["gamma_regime"], full["gamma_regime"]);
    }
}

/// A hand-built book: strikes, open interest, session volume and IVs chosen here, quotes
/// derived here from the test's own Black–Scholes–Merton price, and every expected value
/// recomputed here with closed forms (not the seeded fixture, not the service's pricing code).
mod hand_built {
    use chrono::{DateTime, NaiveDate, TimeZone, Utc};
    use optics_schemas::{ChainRow, ChainSide, ForwardSource, PricingModelCode, SettlementStyle};

    pub const SPOT: f64 = 100.0;
    pub const RATE: f64 = 0.04;
    pub const YIELD: f64 = 0.01;
    /// Half the quoted spread around the model price, dollars.
    const HALF_SPREAD: f64 = 0.05;

    /// One strike of a book: strike, call IV, call OI, call volume, put IV, put OI, put volume.
    type Strike = (f64, f64, u64, u64, f64, u64, u64);
    /// One expiration of a book.
    type Expiration = (NaiveDate, [Strike; 5]);

    /// One listed contract of the book.
    #[derive(Debug, Clone, Copy)]
    pub struct Contract {
        pub expiration: NaiveDate,
        pub years: f64,
        pub strike: f64,
        pub is_call: bool,
        pub iv: f64,
        pub oi: u64,
        pub volume: u64,
        pub bid: f64,
        pub ask: f64,
    }

    impl Contract {
        /// (bid + ask) / 2, the mid the chain row carries.
        pub fn mid(&self) -> f64 {
            0.5 * (self.bid + self.ask)
        }

        /// +1 for calls (dealers long), −1 for puts.
        pub fn sign(&self) -> f64 {
            if self.is_call { 1.0 } else { -1.0 }
        }
    }

    pub fn as_of() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, 15, 30, 0).unwrap()
    }

    pub fn trade_date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
    }

    pub fn near() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, 18).unwrap()
    }

    pub fn far() -> NaiveDate {
        NaiveDate::from_ymd_opt(2027, 1, 15).unwrap()
    }

    /// Years (ACT/365) from `as_of` to 16:00 New York (21:00 UTC in winter) on `expiration`.
    pub fn years_to(expiration: NaiveDate) -> f64 {
        let close = expiration.and_hms_opt(21, 0, 0).unwrap().and_utc();
        (close - as_of()).num_seconds() as f64 / (365.0 * 86_400.0)
    }

    /// The forward of an expiration `years` away: S·e^{(r − q)T}, as the rows carry it.
    pub fn forward(years: f64) -> f64 {
        SPOT * ((RATE - YIELD) * years).exp()
    }

    /// Two expirations × five strikes: puts heavy below spot, calls heavy above, so dealer
    /// GEX is negative for spots in the put strikes and positive in the call strikes. The
    /// far expiration's put OI at 110 moves its max pain to 110 and the pooled one to 105 (the
    /// near one is 100). Volumes put contracts on each edge of the unusual rule (volume ≥ 100
    /// and volume ≥ 2 × OI, or OI = 0): near 90 C exactly 2 × OI (unusual), near 95 C one
    /// contract short of it (not), near 110 P no OI but 40 contracts (not), far 90 C no OI and
    /// 150 contracts (unusual), far 95 C 2.475 × OI but 99 contracts (not), far 100 C exactly
    /// 100 contracts at 2 × OI (unusual); near 110 C did not trade.
    pub fn two_sided() -> Vec<Contract> {
        let book: [Expiration; 2] = [
            (
                near(),
                [
                    (90.0, 0.30, 200, 400, 0.32, 9_000, 1_500),
                    (95.0, 0.26, 800, 1_599, 0.27, 12_000, 3_000),
                    (100.0, 0.22, 4_000, 2_500, 0.23, 5_000, 2_200),
                    (105.0, 0.20, 7_000, 1_800, 0.21, 900, 150),
                    (110.0, 0.19, 6_500, 0, 0.20, 0, 40),
                ],
            ),
            (
                far(),
                [
                    (90.0, 0.29, 0, 150, 0.31, 4_000, 200),
                    (95.0, 0.25, 40, 99, 0.26, 2_500, 100),
                    (100.0, 0.22, 50, 100, 0.22, 1_200, 400),
                    (105.0, 0.21, 2_000, 300, 0.21, 400, 50),
                    (110.0, 0.20, 3_000, 120, 0.20, 6_000, 500),
                ],
            ),
        ];
        contracts(&book)
    }

    /// Calls only (puts listed without open interest): GEX is positive at every spot.
    pub fn calls_only() -> Vec<Contract> {
        contracts(&[(
            near(),
            [
                (95.0, 0.25, 1_000, 0, 0.26, 0, 0),
                (100.0, 0.22, 3_000, 0, 0.23, 0, 0),
                (105.0, 0.20, 2_000, 0, 0.21, 0, 0),
                (110.0, 0.19, 500, 0, 0.20, 0, 0),
                (115.0, 0.19, 100, 0, 0.20, 0, 0),
            ],
        )])
    }

    /// [`two_sided`] with a same-day expiration in front of it (expiring at today's close).
    pub fn with_same_day() -> Vec<Contract> {
        let mut book = contracts(&[(
            trade_date(),
            [
                (90.0, 0.40, 500, 20, 0.45, 3_000, 900),
                (95.0, 0.30, 1_500, 300, 0.33, 6_000, 2_600),
                (100.0, 0.24, 8_000, 9_000, 0.25, 7_500, 8_200),
                (105.0, 0.27, 5_000, 1_200, 0.29, 800, 60),
                (110.0, 0.35, 2_000, 100, 0.38, 100, 10),
            ],
        )]);
        book.extend(two_sided());
        book
    }

    fn round_cents(x: f64) -> f64 {
        (x * 100.0).round() / 100.0
    }

    fn contracts(book: &[Expiration]) -> Vec<Contract> {
        let mut out = Vec::new();
        for (expiration, strikes) in book {
            let years = years_to(*expiration);
            for &(strike, call_iv, call_oi, call_volume, put_iv, put_oi, put_volume) in strikes {
                for (is_call, iv, oi, volume) in [
                    (true, call_iv, call_oi, call_volume),
                    (false, put_iv, put_oi, put_volume),
                ] {
                    let mut contract = Contract {
                        expiration: *expiration,
                        years,
                        strike,
                        is_call,
                        iv,
                        oi,
                        volume,
                        bid: 0.0,
                        ask: 0.0,
                    };
                    // Quoted a nickel either side of the model price, in cents, bid ≥ 0.
                    let value = price(&contract, SPOT);
                    contract.bid = round_cents(value - HALF_SPREAD).max(0.0);
                    contract.ask = round_cents(value + HALF_SPREAD);
                    out.push(contract);
                }
            }
        }
        out
    }

    /// Chain rows of `underlying` carrying the book's IVs, open interest, volumes and quotes
    /// (the Greeks are left for the service to derive from the IVs).
    pub fn chain_rows(underlying: &str, book: &[Contract]) -> Vec<ChainRow> {
        let mut rows: Vec<ChainRow> = Vec::new();
        for pair in book.chunks(2) {
            let (call, put) = (pair[0], pair[1]);
            let side = |c: &Contract, code: char| ChainSide {
                option_symbol: Some(format!("{underlying}{}{code}{}", c.expiration, c.strike)),
                bid: Some(c.bid),
                ask: Some(c.ask),
                mid: Some(c.mid()),
                iv: Some(c.iv),
                open_interest: Some(c.oi),
                volume: Some(c.volume),
                ..ChainSide::default()
            };
            rows.push(ChainRow {
                underlying: underlying.to_owned(),
                trade_date: trade_date(),
                as_of: as_of(),
                expiration: call.expiration,
                settlement: SettlementStyle::Pm,
                dte: (call.expiration - trade_date()).num_days() as i32,
                years_to_expiry: call.years,
                strike: call.strike,
                spot: SPOT,
                forward: forward(call.years),
                forward_source: ForwardSource::Carry,
                forward_strike_count: 0,
                rate: RATE,
                carry_yield: YIELD,
                model: PricingModelCode::Bsm,
                call: side(&call, 'C'),
                put: side(&put, 'P'),
            });
        }
        rows
    }

    /// Standard normal density.
    pub fn pdf(x: f64) -> f64 {
        (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
    }

    /// Standard normal distribution by Marsaglia's series (J. Stat. Softw. 11(4), 2004):
    /// Φ(x) = ½ + φ(x)·(x + x³/3 + x⁵/(3·5) + …), every term positive; absolute error near
    /// 1e-15 for |x| ≤ 8, and 0 or 1 beyond (below 1e-15 from either).
    pub fn cdf(x: f64) -> f64 {
        if x < -8.0 {
            return 0.0;
        }
        if x > 8.0 {
            return 1.0;
        }
        let (mut sum, mut term, mut i) = (x, x, 1.0);
        while term.abs() > 1e-17 * sum.abs().max(1e-300) {
            i += 2.0;
            term *= x * x / i;
            sum += term;
        }
        0.5 + sum * pdf(x)
    }

    /// d1 and d2 of `c` at spot `s` (Black–Scholes–Merton with yield q).
    fn d1_d2(c: &Contract, s: f64) -> (f64, f64) {
        let vol_time = c.iv * c.years.sqrt();
        let d1 = ((s / c.strike).ln() + (RATE - YIELD + 0.5 * c.iv * c.iv) * c.years) / vol_time;
        (d1, d1 - vol_time)
    }

    /// Black–Scholes–Merton value at spot `s` (Hull, ch. 17).
    pub fn price(c: &Contract, s: f64) -> f64 {
        let (d1, d2) = d1_d2(c, s);
        let (qd, rd) = ((-YIELD * c.years).exp(), (-RATE * c.years).exp());
        if c.is_call {
            s * qd * cdf(d1) - c.strike * rd * cdf(d2)
        } else {
            c.strike * rd * cdf(-d2) - s * qd * cdf(-d1)
        }
    }

    /// Black–Scholes–Merton gamma per $1 at spot `s` (Hull, ch. 19):
    /// e^{−qT}·φ(d1)/(s·σ·√T), d1 = (ln(s/K) + (r − q + σ²/2)T)/(σ√T).
    pub fn gamma(c: &Contract, s: f64) -> f64 {
        let (d1, _) = d1_d2(c, s);
        (-YIELD * c.years).exp() * pdf(d1) / (s * c.iv * c.years.sqrt())
    }

    /// Dealer GEX of one contract at spot `s`: ±γ·OI·100·s²·0.01 (calls +, puts −), each
    /// contract keeping its IV and time.
    pub fn gex(c: &Contract, s: f64) -> f64 {
        c.sign() * gamma(c, s) * c.oi as f64 * 100.0 * s * s * 0.01
    }

    /// Spot delta: e^{−qT}·N(d1) for a call, −e^{−qT}·N(−d1) for a put.
    pub fn delta(c: &Contract, s: f64) -> f64 {
        let (d1, _) = d1_d2(c, s);
        let qd = (-YIELD * c.years).exp();
        if c.is_call {
            qd * cdf(d1)
        } else {
            -qd * cdf(-d1)
        }
    }

    /// Dealer delta-adjusted GEX at spot `s`: GEX × |spot delta|.
    pub fn delta_adjusted_gex(c: &Contract, s: f64) -> f64 {
        gex(c, s) * delta(c, s).abs()
    }

    /// The per-share Greeks of the service's units, from the textbook closed forms
    /// (Hull ch. 19; Haug 2007 §2.2 for the higher orders), each written out here: time Greeks
    /// per calendar day of time passing, vol Greeks per vol point (0.01).
    #[derive(Debug, Clone, Copy)]
    pub struct Greeks {
        pub delta: f64,
        pub gamma: f64,
        pub vega: f64,
        pub theta: f64,
        pub vanna: f64,
        pub charm: f64,
        pub speed: f64,
        pub color: f64,
        pub ultima: f64,
    }

    pub fn greeks(c: &Contract, s: f64) -> Greeks {
        let (d1, d2) = d1_d2(c, s);
        let (t, sigma, k) = (c.years, c.iv, c.strike);
        let sqrt_t = t.sqrt();
        let (qd, rd) = ((-YIELD * t).exp(), (-RATE * t).exp());
        let n1 = pdf(d1);
        let gamma = qd * n1 / (s * sigma * sqrt_t);
        let vega_per_unit = s * qd * n1 * sqrt_t;
        // Time passing: −∂/∂T, per year, then per day.
        let theta_year = if c.is_call {
            -s * qd * n1 * sigma / (2.0 * sqrt_t) - RATE * k * rd * cdf(d2)
                + YIELD * s * qd * cdf(d1)
        } else {
            -s * qd * n1 * sigma / (2.0 * sqrt_t) + RATE * k * rd * cdf(-d2)
                - YIELD * s * qd * cdf(-d1)
        };
        let drift =
            qd * n1 * (2.0 * (RATE - YIELD) * t - d2 * sigma * sqrt_t) / (2.0 * t * sigma * sqrt_t);
        let charm_year = if c.is_call {
            YIELD * qd * cdf(d1) - drift
        } else {
            -YIELD * qd * cdf(-d1) - drift
        };
        let color_year =
            gamma * (YIELD + (RATE - YIELD) * d1 / (sigma * sqrt_t) + (1.0 - d1 * d2) / (2.0 * t));
        Greeks {
            delta: delta(c, s),
            gamma,
            vega: vega_per_unit * 0.01,
            theta: theta_year / 365.0,
            vanna: -qd * n1 * d2 / sigma * 0.01,
            charm: charm_year / 365.0,
            speed: -gamma / s * (d1 / (sigma * sqrt_t) + 1.0),
            color: color_year / 365.0,
            ultima: -vega_per_unit / (sigma * sigma)
                * (d1 * d2 * (1.0 - d1 * d2) + d1 * d1 + d2 * d2)
                * 1e-6,
        }
    }

    /// Total dealer GEX of the book re-priced at spot `s`.
    pub fn total_gex(book: &[Contract], s: f64) -> f64 {
        book.iter().map(|c| gex(c, s)).sum()
    }

    /// Total delta-adjusted dealer GEX of the book re-priced at spot `s`.
    pub fn total_delta_adjusted_gex(book: &[Contract], s: f64) -> f64 {
        book.iter().map(|c| delta_adjusted_gex(c, s)).sum()
    }

    /// The flip level of `curve`: every sign change over 4,001 spots evenly spaced across
    /// ±20 % of spot, each bisected to 1e-12 × spot; the one nearest spot. `None` when the
    /// curve never changes sign.
    pub fn flip_of(curve: impl Fn(f64) -> f64) -> Option<f64> {
        let points = 4_001;
        let grid: Vec<f64> = (0..points)
            .map(|i| SPOT * (0.8 + 0.4 * i as f64 / (points - 1) as f64))
            .collect();
        let mut crossings = Vec::new();
        for pair in grid.windows(2) {
            let (mut lo, mut hi) = (pair[0], pair[1]);
            let (f_lo, f_hi) = (curve(lo), curve(hi));
            if f_lo == 0.0 || f_lo.signum() == f_hi.signum() {
                continue;
            }
            while hi - lo > 1e-12 * SPOT {
                let mid = 0.5 * (lo + hi);
                if curve(mid).signum() == f_lo.signum() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            crossings.push(0.5 * (lo + hi));
        }
        crossings
            .into_iter()
            .min_by(|a, b| (a - SPOT).abs().total_cmp(&(b - SPOT).abs()))
    }

    /// The gamma flip level of the book.
    pub fn flip_level(book: &[Contract]) -> Option<f64> {
        flip_of(|s| total_gex(book, s))
    }

    /// Max pain over (strike, call OI, put OI): the strike P minimising
    /// 100·[Σ call OI·max(P − K, 0) + Σ put OI·max(K − P, 0)], the lower on a tie; with the
    /// pain at every strike.
    pub fn max_pain(open_interest: &[(f64, u64, u64)]) -> (f64, Vec<(f64, f64)>) {
        let pain: Vec<(f64, f64)> = open_interest
            .iter()
            .map(|&(settle, _, _)| {
                let paid: f64 = open_interest
                    .iter()
                    .map(|&(k, call, put)| {
                        call as f64 * (settle - k).max(0.0) + put as f64 * (k - settle).max(0.0)
                    })
                    .sum();
                (settle, 100.0 * paid)
            })
            .collect();
        let least = pain
            .iter()
            .fold(None, |best: Option<(f64, f64)>, &(k, p)| match best {
                Some((_, b)) if b <= p => best,
                _ => Some((k, p)),
            })
            .unwrap();
        (least.0, pain)
    }

    /// (strike, call OI, put OI) of the contracts of `book` that `keep` selects, pooled by
    /// strike, ascending.
    pub fn open_interest(
        book: &[Contract],
        keep: impl Fn(&Contract) -> bool,
    ) -> Vec<(f64, u64, u64)> {
        let mut by_strike: std::collections::BTreeMap<i64, (f64, u64, u64)> = Default::default();
        for c in book.iter().filter(|c| keep(c)) {
            let entry = by_strike
                .entry((c.strike * 1000.0) as i64)
                .or_insert((c.strike, 0, 0));
            if c.is_call {
                entry.1 += c.oi;
            } else {
                entry.2 += c.oi;
            }
        }
        by_strike.into_values().collect()
    }
}

/// The re-priced flip level is compared within this fraction of spot: the service refines to
/// 1e-9 × spot and the test bisects to 1e-12 × spot.
const FLIP_TOLERANCE: f64 = 1e-7;

#[tokio::test]
async fn gex_of_a_hand_built_book_matches_black_scholes_recomputed_here() {
    use hand_built::{Contract, SPOT as BOOK_SPOT};

    let book = hand_built::two_sided();
    let one_sided = hand_built::calls_only();
    let reader = MemoryMarket::default()
        .with(&exposure_support::market_from_rows(hand_built::chain_rows(
            "AAA", &book,
        )))
        .with(&exposure_support::market_from_rows(hand_built::chain_rows(
            "BBB", &one_sided,
        )));
    let app = app(reader, now());
    let data = get(&app, "/api/mcp/data/gex/AAA", &[]).await.data();

    // Per strike (both expirations summed) and totals, from the test's own gamma.
    let mut by_strike: BTreeMap<i64, (f64, f64, u64)> = BTreeMap::new();
    for c in &book {
        let entry = by_strike.entry(c.strike as i64).or_default();
        let g = hand_built::gex(c, BOOK_SPOT);
        if c.is_call {
            entry.0 += g;
        } else {
            entry.1 += g;
        }
        entry.2 += c.oi;
    }
    let call: f64 = by_strike.values().map(|v| v.0).sum();
    let put: f64 = by_strike.values().map(|v| v.1).sum();
    let tolerance = 1e-8;
    assert_call_put_total(&data, "gex", call, put, tolerance);
    let rows = data["gex_by_strike"].as_array().unwrap();
    let profile = data["gex_profile"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for ((row, point), (strike, (c, p, oi))) in rows.iter().zip(profile).zip(&by_strike) {
        assert_eq!(num(&row["strike"], "strike"), *strike as f64);
        assert_eq!(row["oi"], *oi);
        assert_close(num(&row["gex"], "gex"), c + p, tolerance, "strike gex");
        assert_close(num(&point["call_gex"], "c"), *c, tolerance, "strike call");
        assert_close(num(&point["put_gex"], "p"), *p, tolerance, "strike put");
    }
    // Per expiration, contract by contract (the `detailed` gamma is per share).
    for entry in data["by_expiration"].as_array().unwrap() {
        let expiration: NaiveDate = entry["expiration"].as_str().unwrap().parse().unwrap();
        let of: Vec<&Contract> = book.iter().filter(|c| c.expiration == expiration).collect();
        let total: f64 = of.iter().map(|c| hand_built::gex(c, BOOK_SPOT)).sum();
        assert_close(
            num(&entry["total_gex"], "t"),
            total,
            tolerance,
            "expiration",
        );
        for c in of {
            let code = if c.is_call { "C" } else { "P" };
            let found = entry["detailed"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| num(&d["strike"], "k") == c.strike && d["type"] == code);
            // Contracts without open interest carry no exposure and are not listed.
            let Some(found) = found else {
                assert_eq!(c.oi, 0, "no {code} {} {expiration}", c.strike);
                continue;
            };
            assert!(c.oi > 0, "{code} {} {expiration} listed", c.strike);
            assert_close(
                num(&found["gamma"], "gamma"),
                hand_built::gamma(c, BOOK_SPOT),
                1e-9,
                "per-share gamma",
            );
        }
    }

    // Walls, key strike and the strike of the most positive net GEX.
    let strike_of = |key: fn(&(f64, f64, u64)) -> f64| {
        by_strike
            .iter()
            .max_by(|a, b| key(a.1).total_cmp(&key(b.1)))
            .map(|(k, _)| *k as f64)
            .unwrap()
    };
    let call_wall = strike_of(|v| v.0);
    let put_wall = strike_of(|v| v.1.abs());
    let key_strike = strike_of(|v| (v.0 + v.1).abs());
    let max_gex_strike = strike_of(|v| v.0 + v.1);
    let levels = &data["key_levels"];
    assert_eq!(num(&levels["call_wall"], "call_wall"), call_wall);
    assert_eq!(num(&levels["put_wall"], "put_wall"), put_wall);
    assert_eq!(num(&levels["key_strike"], "key"), key_strike);
    assert_eq!(num(&data["max_gex_strike"], "max"), max_gex_strike);
    // The book is built so that these are distinct strikes: a mix-up cannot pass.
    assert_eq!((call_wall, put_wall), (105.0, 95.0));

    // Max pain: the aggregate pools call and put OI by strike over both expirations (one
    // settlement price for all); one expiration's is its own. The book makes the three differ.
    let (pooled, _) = hand_built::max_pain(&hand_built::open_interest(&book, |_| true));
    let near = hand_built::near();
    let far = hand_built::far();
    let (near_pain, _) =
        hand_built::max_pain(&hand_built::open_interest(&book, |c| c.expiration == near));
    let (far_pain, _) =
        hand_built::max_pain(&hand_built::open_interest(&book, |c| c.expiration == far));
    assert_eq!((near_pain, pooled, far_pain), (100.0, 105.0, 110.0));
    assert_eq!(num(&levels["max_pain"], "max_pain"), pooled);
    for (expiration, expected) in [(near, near_pain), (far, far_pain)] {
        let uri = format!("/api/mcp/data/gex/AAA?expiration={expiration}");
        let one = get(&app, &uri, &[]).await.data();
        assert_eq!(num(&one["key_levels"]["max_pain"], "mp"), expected);
    }

    // The flip level, re-priced over a grid and bisected here.
    let flip = hand_built::flip_level(&book).expect("the two-sided book changes sign");
    assert!(
        (flip - BOOK_SPOT).abs() > 0.5,
        "a flip away from spot: {flip}"
    );
    let served = num(&data["flip_level"], "flip_level");
    assert!(
        (served - flip).abs() <= FLIP_TOLERANCE * BOOK_SPOT,
        "flip {served} vs recomputed {flip}"
    );
    assert_eq!(data["flip_degenerate"], false);
    assert!(data["flip_degeneracy"].is_null());

    // Implications by their documented rules: regime from the sign of net GEX, positioning
    // from gex_ratio against 1 ± 10 %, bias from the two.
    let ratio = call / put.abs();
    assert_close(num(&data["gex_ratio"], "ratio"), ratio, 1e-9, "gex_ratio");
    let regime = if call + put > 0.0 {
        "SUPPRESSED"
    } else {
        "AMPLIFIED"
    };
    let positioning = if ratio > 1.1 {
        "CALL_DOMINATED"
    } else if ratio < 1.0 / 1.1 {
        "PUT_DOMINATED"
    } else {
        "BALANCED"
    };
    let bias = match (regime, positioning) {
        ("SUPPRESSED", "CALL_DOMINATED") => "BULLISH",
        ("AMPLIFIED", "PUT_DOMINATED") => "BEARISH",
        _ => "NEUTRAL",
    };
    let implications = &data["implications"];
    assert_eq!(implications["volatility_regime"], regime);
    assert_eq!(implications["positioning"], positioning);
    assert_eq!(implications["directional_bias"], bias);

    // One-sided book: re-priced GEX never changes sign, so there is no flip.
    assert_eq!(hand_built::flip_level(&one_sided), None);
    let calls_only: f64 = one_sided
        .iter()
        .map(|c| hand_built::gex(c, BOOK_SPOT))
        .sum();
    let data = get(&app, "/api/mcp/data/gex/BBB", &[]).await.data();
    assert_close(
        num(&data["total_gex"], "total"),
        calls_only,
        tolerance,
        "calls only",
    );
    assert!(data["flip_level"].is_null(), "{}", data["flip_level"]);
    assert_eq!(data["flip_degenerate"], true);
    assert_eq!(data["flip_degeneracy"], "always_positive");
    assert!(data["gex_ratio"].is_null(), "no put GEX to divide by");
    let implications = &data["implications"];
    assert_eq!(implications["volatility_regime"], "SUPPRESSED");
    assert_eq!(implications["positioning"], "CALL_DOMINATED");
    assert_eq!(implications["directional_bias"], "BULLISH");
    assert!(data["key_levels"]["put_wall"].is_null());
}

/// The hand-built books' reader: AAA the two-sided book, BBB calls only, EEE the two-sided book
/// behind a same-day expiration.
fn hand_built_reader() -> MemoryMarket {
    let market = |symbol: &str, book: &[hand_built::Contract]| {
        exposure_support::market_from_rows(hand_built::chain_rows(symbol, book))
    };
    MemoryMarket::default()
        .with(&market("AAA", &hand_built::two_sided()))
        .with(&market("BBB", &hand_built::calls_only()))
        .with(&market("EEE", &hand_built::with_same_day()))
}

#[tokio::test]
async fn max_pain_of_the_hand_built_book_is_recomputed_strike_by_strike() {
    use hand_built::SPOT as BOOK_SPOT;
    let app = app(hand_built_reader(), now());
    let book = hand_built::with_same_day();
    let today = hand_built::trade_date();
    // Default: the nearest expiration that has not expired, the same-day one included.
    let data = get(&app, "/api/mcp/data/max-pain/EEE", &[]).await.data();
    assert_eq!(data["expiration"], today.to_string());
    assert_eq!(data["dte"], 0);
    for (uri, expiration) in [
        ("/api/mcp/data/max-pain/EEE".to_owned(), today),
        (
            format!(
                "/api/mcp/data/max-pain/EEE?expiration={}",
                hand_built::far()
            ),
            hand_built::far(),
        ),
        ("/api/mcp/data/max-pain/AAA".to_owned(), hand_built::near()),
    ] {
        let data = get(&app, &uri, &[]).await.data();
        assert_eq!(data["expiration"], expiration.to_string(), "{uri}");
        let open_interest = hand_built::open_interest(&book, |c| c.expiration == expiration);
        let (strike, pain) = hand_built::max_pain(&open_interest);
        let value = pain.iter().find(|p| p.0 == strike).unwrap().1;
        assert_eq!(num(&data["max_pain_strike"], "mp"), strike, "{uri}");
        assert_close(num(&data["max_pain_value"], "v"), value, 1e-12, "value");
        let all = data["all_strikes"].as_array().unwrap();
        assert_eq!(all.len(), pain.len());
        for (entry, (k, p)) in all.iter().zip(&pain) {
            assert_eq!(num(&entry["strike"], "k"), *k);
            assert_close(num(&entry["total_pain"], "pain"), *p, 1e-12, "pain");
            let call: f64 = open_interest
                .iter()
                .map(|&(ks, c, _)| 100.0 * c as f64 * (k - ks).max(0.0))
                .sum();
            assert_close(num(&entry["call_pain"], "cp"), call, 1e-12, "call pain");
        }
        let calls: u64 = open_interest.iter().map(|o| o.1).sum();
        let puts: u64 = open_interest.iter().map(|o| o.2).sum();
        assert_eq!(data["total_call_oi"], calls);
        assert_eq!(data["total_put_oi"], puts);
        let distance = strike - BOOK_SPOT;
        assert_close(num(&data["distance_from_spot"], "d"), distance, 1e-12, "d");
        let direction = match distance {
            d if d > 0.0 => "UP",
            d if d < 0.0 => "DOWN",
            _ => "AT_SPOT",
        };
        assert_eq!(data["likely_direction"], direction, "{uri}");
    }
    // The hand arithmetic of the near expiration (its strikes 90..110): pain at 100 is
    // 100·(200·10 + 800·5 + 900·5) = 1,050,000, the least.
    let data = get(&app, "/api/mcp/data/max-pain/AAA", &[]).await.data();
    assert_eq!(num(&data["max_pain_strike"], "mp"), 100.0);
    assert_close(
        num(&data["max_pain_value"], "v"),
        1_050_000.0,
        1e-12,
        "by hand",
    );
    assert_eq!(data["magnet_strength"], "STRONG");
}

#[tokio::test]
async fn expected_move_of_the_hand_built_book_is_its_atm_straddle_by_hand() {
    use hand_built::{Contract, SPOT as BOOK_SPOT};
    let app = app(hand_built_reader(), now());
    let book = hand_built::with_same_day();
    // The straddle of `expiration` at its forward, by hand: call and put mids linear in
    // strike between the listed strikes bracketing the forward.
    let straddle = |expiration: NaiveDate| -> (f64, f64, f64, f64, [f64; 2]) {
        let of: Vec<&Contract> = book.iter().filter(|c| c.expiration == expiration).collect();
        let forward = hand_built::forward(of[0].years);
        let mut strikes: Vec<f64> = of.iter().map(|c| c.strike).collect();
        strikes.dedup();
        let upper = *strikes.iter().find(|&&k| k >= forward).unwrap();
        let lower = *strikes.iter().rev().find(|&&k| k <= forward).unwrap();
        let mid_of = |k: f64, call: bool| {
            of.iter()
                .find(|c| c.strike == k && c.is_call == call)
                .unwrap()
                .mid()
        };
        let weight = (forward - lower) / (upper - lower);
        let call = mid_of(lower, true) + weight * (mid_of(upper, true) - mid_of(lower, true));
        let put = mid_of(lower, false) + weight * (mid_of(upper, false) - mid_of(lower, false));
        (call, put, forward, weight, [lower, upper])
    };

    // Default: the same-day expiration is skipped, the next one is priced.
    let data = get(&app, "/api/mcp/data/expected-move/EEE", &[])
        .await
        .data();
    let near = hand_built::near();
    assert_eq!(data["expiration"], near.to_string());
    assert_eq!(data["dte"], 28);
    let (call, put, forward, weight, strikes) = straddle(near);
    assert_eq!(strikes, [100.0, 105.0]);
    assert!(weight > 0.0 && weight < 1.0, "{weight}");
    let em = call + put;
    assert_close(num(&data["call_price"], "c"), call, 1e-12, "call mid");
    assert_close(num(&data["put_price"], "p"), put, 1e-12, "put mid");
    assert_close(num(&data["straddle_price"], "s"), em, 1e-12, "straddle");
    assert_close(num(&data["expected_move_dollars"], "em"), em, 1e-12, "move");
    assert_close(
        num(&data["expected_move_percent"], "fraction"),
        em / BOOK_SPOT,
        1e-12,
        "fraction of spot",
    );
    assert_close(
        num(&data["expected_move_pct"], "pct"),
        100.0 * em / BOOK_SPOT,
        1e-12,
        "percent",
    );
    assert_close(num(&data["upper_bound"], "u"), BOOK_SPOT + em, 1e-12, "up");
    assert_close(
        num(&data["lower_bound"], "l"),
        BOOK_SPOT - em,
        1e-12,
        "down",
    );
    assert_close(num(&data["forward"], "f"), forward, 1e-12, "forward");
    assert_eq!(data["atm_strikes"], serde_json::json!(strikes));

    // Asked for by date, the same-day straddle is priced.
    let today = hand_built::trade_date();
    let uri = format!("/api/mcp/data/expected-move/EEE?expiration={today}");
    let data = get(&app, &uri, &[]).await.data();
    assert_eq!(data["dte"], 0);
    let (call, put, _, _, _) = straddle(today);
    assert_close(
        num(&data["expected_move_dollars"], "em"),
        call + put,
        1e-12,
        "same-day move",
    );
    // zero-dte reads the same-day straddle too (in percent of spot).
    let zero = get(&app, "/api/mcp/data/zero-dte/EEE", &[]).await.data();
    assert_eq!(zero["expiration"], today.to_string());
    assert_close(
        num(&zero["metrics"]["expected_move"], "zero"),
        100.0 * (call + put) / BOOK_SPOT,
        1e-12,
        "zero-dte move",
    );
}

/// `all` rows of a JSON list keyed by (strike, type code, expiration).
fn flow_row<'a>(list: &'a [Value], c: &hand_built::Contract) -> Option<&'a Value> {
    let code = if c.is_call { "CALL" } else { "PUT" };
    list.iter().find(|r| {
        num(&r["strike"], "k") == c.strike
            && r["type"] == code
            && r["expiration"] == c.expiration.to_string()
    })
}

#[tokio::test]
async fn flow_of_the_hand_built_book_is_recomputed_from_volume_and_mid() {
    use hand_built::Contract;
    // Two minutes after the book's quotes: the flow is current.
    let at = Utc.with_ymd_and_hms(2026, 11, 20, 15, 32, 0).unwrap();
    let app = app(hand_built_reader(), at);
    let book = hand_built::two_sided();
    let data = get(&app, "/api/mcp/data/flow/AAA", &[]).await.data();
    let traded: Vec<&Contract> = book.iter().filter(|c| c.volume > 0).collect();
    let premium = |c: &Contract| c.volume as f64 * c.mid() * 100.0;
    let (mut call_premium, mut put_premium, mut call_volume, mut put_volume) = (0.0, 0.0, 0, 0);
    for c in &traded {
        if c.is_call {
            call_premium += premium(c);
            call_volume += c.volume;
        } else {
            put_premium += premium(c);
            put_volume += c.volume;
        }
    }
    let summary = &data["summary"];
    let totals = FlowTotals {
        call_premium,
        put_premium,
        call_volume,
        put_volume,
        count: traded.len(),
    };
    assert_flow_summary(summary, totals, 1e-12);
    assert_close(
        num(&summary["put_call_ratio"], "pcr"),
        put_volume as f64 / call_volume as f64,
        1e-12,
        "put/call",
    );

    // Every traded contract, with its premium, ratio and flag by the documented rule.
    let all = data["all_flow"].as_array().unwrap();
    assert_eq!(all.len(), traded.len());
    let unusual = |c: &Contract| c.volume >= 100 && (c.oi == 0 || c.volume >= 2 * c.oi);
    for c in &traded {
        let row = flow_row(all, c).unwrap_or_else(|| panic!("{c:?} not in all_flow"));
        assert_close(
            num(&row["premium"], "premium"),
            premium(c),
            1e-12,
            "premium",
        );
        assert_close(num(&row["mid"], "mid"), c.mid(), 1e-15, "mid");
        assert_eq!(row["volume"], c.volume);
        assert_eq!(row["oi"], c.oi);
        assert_eq!(row["is_unusual"], unusual(c), "{c:?}");
        if c.oi == 0 {
            assert!(row["volume_oi_ratio"].is_null());
        } else {
            assert_close(
                num(&row["volume_oi_ratio"], "ratio"),
                c.volume as f64 / c.oi as f64,
                1e-15,
                "ratio",
            );
        }
        let itm = if c.is_call {
            c.strike < hand_built::SPOT
        } else {
            c.strike > hand_built::SPOT
        };
        assert_eq!(row["moneyness"], if itm { "ITM" } else { "OTM" });
    }
    // A contract that did not trade is not flow.
    let idle = book.iter().find(|c| c.volume == 0).unwrap();
    assert!(flow_row(all, idle).is_none());
    // The edge cases of the rule, named.
    let flag = |expiration: NaiveDate, strike: f64, is_call: bool| {
        let c = book
            .iter()
            .find(|c| c.expiration == expiration && c.strike == strike && c.is_call == is_call)
            .unwrap();
        (
            c.volume,
            c.oi,
            flow_row(all, c).unwrap()["is_unusual"] == true,
        )
    };
    let (near, far) = (hand_built::near(), hand_built::far());
    // Exactly 2 × OI (400 on 200): unusual.
    assert_eq!(flag(near, 90.0, true), (400, 200, true));
    // One contract short of 2 × OI (1,599 on 800): not.
    assert_eq!(flag(near, 95.0, true), (1_599, 800, false));
    // Exactly the 100-contract minimum at exactly 2 × OI: unusual.
    assert_eq!(flag(far, 100.0, true), (100, 50, true));
    // 2.475 × OI but 99 contracts, below the minimum: not.
    assert_eq!(flag(far, 95.0, true), (99, 40, false));
    // No open interest and 150 contracts: unusual.
    assert_eq!(flag(far, 90.0, true), (150, 0, true));
    // No open interest but 40 contracts, below the minimum: not.
    assert_eq!(flag(near, 110.0, false), (40, 0, false));
    assert!(
        summary["unusual_rule"]
            .as_str()
            .is_some_and(|r| r.contains("100 contracts") && r.contains("2x open interest")),
        "{}",
        summary["unusual_rule"]
    );

    // unusual_activity: the flagged contracts, highest volume/OI first (no OI ranks first).
    let mut flagged: Vec<&&Contract> = traded.iter().filter(|c| unusual(c)).collect();
    let rank = |c: &Contract| {
        if c.oi == 0 {
            f64::INFINITY
        } else {
            c.volume as f64 / c.oi as f64
        }
    };
    flagged.sort_by(|a, b| {
        rank(b)
            .total_cmp(&rank(a))
            .then(premium(b).total_cmp(&premium(a)))
    });
    let listed = data["unusual_activity"].as_array().unwrap();
    assert_eq!(listed.len(), flagged.len());
    for (row, c) in listed.iter().zip(&flagged) {
        assert_eq!(num(&row["strike"], "k"), c.strike);
        assert_eq!(row["expiration"], c.expiration.to_string());
        assert_eq!(row["type"], if c.is_call { "CALL" } else { "PUT" });
    }
    // largest_flows: by premium.
    let mut by_premium: Vec<f64> = traded.iter().map(|c| premium(c)).collect();
    by_premium.sort_by(|a, b| b.total_cmp(a));
    let largest = data["largest_flows"].as_array().unwrap();
    for (row, expected) in largest.iter().zip(&by_premium) {
        assert_close(num(&row["premium"], "p"), *expected, 1e-12, "largest");
    }
    // top_expirations: premium and volume per expiration.
    for entry in data["top_expirations"].as_array().unwrap() {
        let expiration: NaiveDate = entry[0].as_str().unwrap().parse().unwrap();
        let of = traded.iter().filter(|c| c.expiration == expiration);
        let (p, v) = of.fold((0.0, 0), |(p, v), c| (p + premium(c), v + c.volume));
        assert_close(
            num(&entry[1]["premium"], "p"),
            p,
            1e-12,
            "expiration premium",
        );
        assert_eq!(entry[1]["volume"], v);
    }
}

/// Dealer exposures of one contract at spot, from the test's closed-form Greeks, in the
/// service's units (the module table of `optics_compute::exposure`; BSM, so k = 1):
/// (delta, GEX, delta-adjusted GEX, vanna, charm, vega, theta, speed, color, ultima).
fn contract_exposures_by_hand(c: &hand_built::Contract) -> [f64; 10] {
    let s = hand_built::SPOT;
    let g = hand_built::greeks(c, s);
    let n = c.sign() * c.oi as f64 * 100.0;
    let gex = g.gamma * s * s * 0.01 * n;
    [
        g.delta * n,
        gex,
        gex * g.delta.abs(),
        g.vanna * n,
        g.charm * n,
        g.vega * n,
        g.theta * n,
        g.speed * s * s * s * 1e-4 * n,
        g.color * s * s * 0.01 * n,
        g.ultima * n,
    ]
}

/// The index of each Greek in [`contract_exposures_by_hand`], by the API's name.
const BY_HAND: [(&str, usize); 10] = [
    ("delta", 0),
    ("gamma", 1),
    ("delta_adjusted_gamma", 2),
    ("vanna", 3),
    ("charm", 4),
    ("vega", 5),
    ("theta", 6),
    ("speed", 7),
    ("color", 8),
    ("ultima", 9),
];

/// The strike of the largest `value` (the lowest on a tie); `None` when every value is 0.
fn strike_of_largest(profile: &[(f64, f64)]) -> Option<(f64, f64)> {
    profile
        .iter()
        .filter(|(_, v)| *v != 0.0)
        .fold(None, |best: Option<(f64, f64)>, &(k, v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((k, v)),
        })
}

/// Where the running sum of `net` by strike changes sign, linearly interpolated; the crossing
/// nearest `spot` (the lower on a tie).
fn cumulative_flip(net: &[(f64, f64)], spot: f64) -> Option<f64> {
    let mut running = 0.0;
    let mut last: Option<(f64, f64)> = None;
    let mut best: Option<f64> = None;
    for &(k, v) in net {
        running += v;
        if running == 0.0 {
            continue;
        }
        if let Some((k0, c0)) = last
            && (c0 > 0.0) != (running > 0.0)
        {
            let x = k0 + (k - k0) * c0 / (c0 - running);
            if best.is_none_or(|b| (x - spot).abs() < (b - spot).abs()) {
                best = Some(x);
            }
        }
        last = Some((k, running));
    }
    best
}

#[tokio::test]
async fn charm_of_the_hand_built_book_matches_closed_form_charm() {
    let app = app(hand_built_reader(), now());
    let book = hand_built::two_sided();
    let near = hand_built::near();
    let uri = format!("/api/mcp/data/charm/AAA?expiration={near}");
    let data = get(&app, &uri, &[]).await.data();
    let of: Vec<&hand_built::Contract> = book.iter().filter(|c| c.expiration == near).collect();
    let charm = |c: &hand_built::Contract| contract_exposures_by_hand(c)[4];
    let calls: f64 = of.iter().filter(|c| c.is_call).map(|c| charm(c)).sum();
    let puts: f64 = of.iter().filter(|c| !c.is_call).map(|c| charm(c)).sum();
    let tolerance = 1e-8;
    assert_call_put_total(&data, "charm", calls, puts, tolerance);
    let by_strike = data["charm_by_strike"].as_array().unwrap();
    assert_eq!(by_strike.len(), 5);
    for entry in by_strike {
        let k = num(&entry["strike"], "k");
        let at: Vec<&&hand_built::Contract> = of.iter().filter(|c| c.strike == k).collect();
        let net: f64 = at.iter().map(|c| charm(c)).sum();
        assert_close(num(&entry["charm_exposure"], "e"), net, tolerance, "strike");
        assert_eq!(entry["oi"], at.iter().map(|c| c.oi).sum::<u64>());
    }
    for entry in data["detailed"].as_array().unwrap() {
        let k = num(&entry["strike"], "k");
        let c = of
            .iter()
            .find(|c| c.strike == k && (entry["type"] == "C") == c.is_call)
            .unwrap();
        let per_share = hand_built::greeks(c, hand_built::SPOT).charm;
        assert_close(
            num(&entry["charm"], "charm"),
            per_share,
            1e-9,
            "per-share charm",
        );
        assert_close(num(&entry["iv"], "iv"), 100.0 * c.iv, 1e-12, "iv");
        assert_close(
            num(&entry["charm_exposure"], "e"),
            charm(c),
            tolerance,
            "exposure",
        );
    }
    assert_eq!(data["dte"], 28);
}

#[tokio::test]
async fn greeks_exposure_of_the_hand_built_book_carries_spec_2_5_recomputed_here() {
    use hand_built::SPOT as BOOK_SPOT;
    let app = app(hand_built_reader(), now());
    let book = hand_built::two_sided();
    let data = get(&app, "/api/mcp/data/greeks-exposure/AAA", &[])
        .await
        .data();
    // Per strike: (strike, call exposures, put exposures), both expirations summed.
    let mut strikes: BTreeMap<i64, (f64, [f64; 10], [f64; 10])> = BTreeMap::new();
    for c in &book {
        let entry = strikes
            .entry((c.strike * 1000.0) as i64)
            .or_insert((c.strike, [0.0; 10], [0.0; 10]));
        let side = if c.is_call {
            &mut entry.1
        } else {
            &mut entry.2
        };
        for (total, value) in side.iter_mut().zip(contract_exposures_by_hand(c)) {
            *total += value;
        }
    }
    let strikes: Vec<(f64, [f64; 10], [f64; 10])> = strikes.into_values().collect();
    let profile = |i: usize, pick: fn(f64, f64) -> f64| -> Vec<(f64, f64)> {
        strikes
            .iter()
            .map(|(k, c, p)| (*k, pick(c[i], p[i])))
            .collect()
    };
    let tolerance = 1e-8;
    for (name, i) in BY_HAND {
        if name == "delta_adjusted_gamma" {
            continue;
        }
        let block = &data["exposures"][name];
        let call: f64 = strikes.iter().map(|s| s.1[i]).sum();
        let put: f64 = strikes.iter().map(|s| s.2[i]).sum();
        assert_close(num(&block["call_total"], name), call, tolerance, name);
        assert_close(num(&block["put_total"], name), put, tolerance, name);
        assert_close(num(&block["total"], name), call + put, tolerance, name);
        let points = block["profile"].as_array().unwrap();
        assert_eq!(points.len(), strikes.len());
        for (point, (k, c, p)) in points.iter().zip(&strikes) {
            assert_eq!(num(&point["strike"], "k"), *k);
            assert_close(num(&point["call"], name), c[i], tolerance, name);
            assert_close(num(&point["put"], name), p[i], tolerance, name);
            assert_close(num(&point["net"], name), c[i] + p[i], tolerance, name);
        }
    }

    // Gamma's delta-adjusted figures and both re-priced flips.
    let gamma = &data["exposures"]["gamma"];
    let adjusted = 2;
    let call: f64 = strikes.iter().map(|s| s.1[adjusted]).sum();
    let put: f64 = strikes.iter().map(|s| s.2[adjusted]).sum();
    assert_close(
        num(&gamma["delta_adj_call_total"], "c"),
        call,
        tolerance,
        "adj call",
    );
    assert_close(
        num(&gamma["delta_adj_put_total"], "p"),
        put,
        tolerance,
        "adj put",
    );
    assert_close(
        num(&gamma["delta_adj_total"], "t"),
        call + put,
        tolerance,
        "adj total",
    );
    let points = gamma["delta_adj_profile"].as_array().unwrap();
    assert_eq!(points.len(), strikes.len());
    for (point, (k, c, p)) in points.iter().zip(&strikes) {
        assert_eq!(num(&point["strike"], "k"), *k);
        assert_close(
            num(&point["net"], "adj"),
            c[adjusted] + p[adjusted],
            tolerance,
            "adj",
        );
    }
    let flip = hand_built::flip_level(&book).expect("gamma flips");
    let adjusted_flip = hand_built::flip_of(|s| hand_built::total_delta_adjusted_gex(&book, s))
        .expect("delta-adjusted gamma flips");
    assert!(
        (flip - adjusted_flip).abs() > 0.01,
        "{flip} {adjusted_flip}"
    );
    for (field, expected) in [
        ("flip_level", flip),
        ("delta_adj_flip_level", adjusted_flip),
    ] {
        let served = num(&gamma[field], field);
        assert!(
            (served - expected).abs() <= FLIP_TOLERANCE * BOOK_SPOT,
            "{field}: {served} vs recomputed {expected}"
        );
    }
    let gex_total: f64 = strikes.iter().map(|s| s.1[1] + s.2[1]).sum();
    assert_close(
        num(&gamma["gex_billions"], "bn"),
        gex_total / 1e9,
        tolerance,
        "bn",
    );

    // greek_levels: per Greek, the strikes of the largest |net|, |call| and |put|, the
    // |call total| / |put total| ratio and the cumulative-by-strike flip.
    for (name, i) in BY_HAND {
        if matches!(name, "gamma" | "delta_adjusted_gamma") {
            assert!(data["greek_levels"].get(name).is_none(), "{name}");
            continue;
        }
        let levels = &data["greek_levels"][name];
        for (field, values, signed) in [
            (
                "key_strike",
                profile(i, |c, p| (c + p).abs()),
                profile(i, |c, p| c + p),
            ),
            ("max_call", profile(i, |c, _| c.abs()), profile(i, |c, _| c)),
            ("max_put", profile(i, |_, p| p.abs()), profile(i, |_, p| p)),
        ] {
            let (strike, _) = strike_of_largest(&values).unwrap();
            let level = &levels[field];
            assert_eq!(num(&level["strike"], field), strike, "{name}.{field}");
            let exposure = signed.iter().find(|v| v.0 == strike).unwrap().1;
            assert_close(num(&level["exposure"], field), exposure, tolerance, name);
            assert_close(
                num(&level["distance_pct"], field),
                100.0 * (strike - BOOK_SPOT) / BOOK_SPOT,
                1e-12,
                name,
            );
        }
        let call: f64 = strikes.iter().map(|s| s.1[i]).sum();
        let put: f64 = strikes.iter().map(|s| s.2[i]).sum();
        assert_close(
            num(&levels["ratio"], "ratio"),
            call.abs() / put.abs(),
            tolerance,
            name,
        );
        match cumulative_flip(&profile(i, |c, p| c + p), BOOK_SPOT) {
            Some(x) => {
                assert_close(num(&levels["flip_level"]["strike"], name), x, 1e-9, name);
                assert_close(
                    num(&levels["flip_level"]["distance_pct"], name),
                    100.0 * (x - BOOK_SPOT) / BOOK_SPOT,
                    1e-7,
                    name,
                );
            }
            None => assert!(levels["flip_level"].is_null(), "{name}"),
        }
    }
    // At least one Greek of the book has a cumulative flip, so the branch above is exercised.
    assert!(
        BY_HAND
            .iter()
            .filter(|(name, _)| !matches!(*name, "gamma" | "delta_adjusted_gamma"))
            .any(|(_, i)| cumulative_flip(&profile(*i, |c, p| c + p), BOOK_SPOT).is_some())
    );

    // key_levels.
    let levels = &data["key_levels"];
    let (key_gamma, _) = strike_of_largest(&profile(1, |c, p| (c + p).abs())).unwrap();
    assert_eq!(num(&levels["key_gamma_strike"]["strike"], "kg"), key_gamma);
    let net_at = |i: usize, k: f64| {
        profile(i, |c, p| c + p)
            .iter()
            .find(|v| v.0 == k)
            .unwrap()
            .1
    };
    assert_close(
        num(&levels["key_gamma_strike"]["gex"], "kg"),
        net_at(1, key_gamma),
        tolerance,
        "key gamma gex",
    );
    let (charm_pressure, _) = strike_of_largest(&profile(4, |c, p| (c + p).abs())).unwrap();
    assert_eq!(
        num(&levels["charm_pressure"]["strike"], "cp"),
        charm_pressure
    );
    assert_close(
        num(&levels["charm_pressure"]["exposure"], "cp"),
        net_at(4, charm_pressure),
        tolerance,
        "charm pressure",
    );
    // The vol trigger: the listed strike nearest the re-priced flip (the lower on a tie).
    let trigger = strikes
        .iter()
        .map(|s| s.0)
        .fold(None, |best: Option<f64>, k| match best {
            Some(b) if (b - flip).abs() <= (k - flip).abs() => Some(b),
            _ => Some(k),
        })
        .unwrap();
    assert_eq!(num(&levels["vol_trigger"]["strike"], "vt"), trigger);
    assert_close(
        num(&levels["vol_trigger"]["distance_pct"], "vt"),
        100.0 * (trigger - BOOK_SPOT) / BOOK_SPOT,
        1e-12,
        "vol trigger distance",
    );
    let (call_wall, _) = strike_of_largest(&profile(1, |c, _| c)).unwrap();
    let (put_wall, _) = strike_of_largest(&profile(1, |_, p| p.abs())).unwrap();
    assert_eq!(num(&levels["call_wall"]["strike"], "cw"), call_wall);
    assert_eq!(num(&levels["put_wall"]["strike"], "pw"), put_wall);
    let vanna = profile(3, |c, p| c + p);
    let above: Vec<(f64, f64)> = vanna
        .iter()
        .filter(|v| v.0 >= BOOK_SPOT)
        .map(|v| (v.0, v.1.abs()))
        .collect();
    let below: Vec<(f64, f64)> = vanna
        .iter()
        .filter(|v| v.0 < BOOK_SPOT)
        .map(|v| (v.0, v.1.abs()))
        .collect();
    assert_eq!(
        num(&levels["vanna_resistance"]["strike"], "vr"),
        strike_of_largest(&above).unwrap().0
    );
    assert_eq!(
        num(&levels["vanna_support"]["strike"], "vs"),
        strike_of_largest(&below).unwrap().0
    );
}

/// A stored session history of `symbol`: `count` weekdays ending on the day before the books'
/// session (Thursday 2026-11-19), skipping the weekdays in `missing` (a hole in the store),
/// with closes stepping through a fixed cycle of returns and a front ATM IV cycling through
/// 16–22 % (absent on every 17th session).
fn stored_sessions(
    symbol: &str,
    count: usize,
    missing: std::ops::Range<usize>,
) -> Vec<optics_schemas::VolDailyRow> {
    use chrono::{Datelike, Weekday};
    let mut dates = Vec::new();
    let mut day = NaiveDate::from_ymd_opt(2026, 11, 19).unwrap();
    while dates.len() < count {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            dates.push(day);
        }
        day = day.pred_opt().unwrap();
    }
    dates.reverse();
    let returns = [
        0.004, -0.012, 0.007, -0.002, 0.015, -0.009, 0.001, 0.011, -0.006,
    ];
    let mut close = 95.0;
    let mut rows = Vec::new();
    for (i, date) in dates.into_iter().enumerate() {
        close *= 1.0 + returns[i % returns.len()];
        if missing.contains(&i) {
            continue;
        }
        let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
        let mut row = optics_schemas::VolDailyRow::new(symbol, date, as_of, close);
        if i % 17 != 5 {
            row.front_atm_iv_pct = Some(16.0 + 2.0 * (i % 4) as f64);
            row.front_expiration = Some(date + chrono::Duration::days(1));
        }
        rows.push(row);
    }
    rows
}

/// The scored read recomputed from `rows` (the last 61 stored sessions): (sessions scored,
/// hits, hit rate %, edge score, HAR vol %), the scores `None` below 10 scored sessions and the
/// HAR vol `None` below 23 closes.
#[allow(clippy::type_complexity)]
fn scored_read_by_hand(
    rows: &[optics_schemas::VolDailyRow],
) -> (usize, usize, Option<f64>, Option<f64>, Option<f64>) {
    let rows = &rows[rows.len().saturating_sub(61)..];
    // (hit, expected move², realized move²) as fractions of the previous close.
    let mut scored: Vec<(bool, f64, f64)> = Vec::new();
    for pair in rows.windows(2) {
        let (previous, current) = (&pair[0], &pair[1]);
        let Some(iv) = previous.front_atm_iv_pct else {
            continue;
        };
        let days = (current.trade_date - previous.trade_date).num_days();
        if days > 5 {
            continue;
        }
        let expected = iv / 100.0 * (days as f64 / 365.0).sqrt();
        let realized = (current.close - previous.close) / previous.close;
        scored.push((
            (current.close - previous.close).abs() <= previous.close * expected,
            expected * expected,
            realized * realized,
        ));
    }
    let scored = &scored[scored.len().saturating_sub(60)..];
    let n = scored.len();
    let hits = scored.iter().filter(|s| s.0).count();
    let (rate, edge) = if n >= 10 {
        let implied = scored.iter().map(|s| s.1).sum::<f64>() / n as f64;
        let realized = scored.iter().map(|s| s.2).sum::<f64>() / n as f64;
        (
            Some(100.0 * hits as f64 / n as f64),
            Some(100.0 * implied / (implied + realized)),
        )
    } else {
        (None, None)
    };
    let har = (rows.len() >= 23).then(|| {
        let closes: Vec<f64> = rows[rows.len() - 23..].iter().map(|r| r.close).collect();
        let squared: Vec<f64> = closes
            .windows(2)
            .map(|w| (w[1] / w[0]).ln().powi(2))
            .collect();
        let mean_last = |k: usize| squared[squared.len() - k..].iter().sum::<f64>() / k as f64;
        let blend = 0.2 * mean_last(1) + 0.3 * mean_last(5) + 0.5 * mean_last(22);
        100.0 * (252.0 * blend).sqrt()
    });
    (n, hits, rate, edge, har)
}

#[tokio::test]
async fn zero_dte_scores_the_stored_sessions_and_says_why_when_it_cannot() {
    // AAA: 76 weekdays with a hole of six (an eight-day gap), more than the 61 read.
    let long = stored_sessions("AAA", 76, 41..47);
    // BBB: ten sessions, nine scored at most: too few.
    let short = stored_sessions("BBB", 10, 0..0);
    let reader = hand_built_reader()
        .with_vol_history("AAA", long.clone())
        .with_vol_history("BBB", short.clone());
    let app = app(reader, now());

    let data = get(&app, "/api/mcp/data/zero-dte/AAA", &[]).await.data();
    // The ATM IV of the read expiration (the near one: no same-day expiry in AAA), by hand:
    // the strike nearest its forward (100.23) is 100, call 22 % and put 23 %.
    let atm_iv = 0.5 * (22.0 + 23.0);
    assert_close(
        num(&data["metrics"]["atm_iv"], "atm"),
        atm_iv,
        1e-12,
        "atm iv",
    );
    let (scored, hits, rate, edge, har) = scored_read_by_hand(&long);
    let (rate, edge, har) = (rate.unwrap(), edge.unwrap(), har.unwrap());
    // The window is full, the gap and the sessions after an IV-less one are not scored.
    assert!((50..60).contains(&scored), "{scored}");
    assert!(hits > 0 && hits < scored, "{hits} of {scored}");
    assert_close(
        num(&data["em_hit_rate"], "rate"),
        rate,
        1e-12,
        "em_hit_rate",
    );
    assert_close(num(&data["edge_score"], "edge"), edge, 1e-12, "edge_score");
    assert_close(
        num(&data["iv_forecast"], "forecast"),
        0.5 * atm_iv + 0.5 * har,
        1e-12,
        "iv_forecast",
    );
    let read = &data["scored_read"];
    assert_eq!(read["sessions_read"], 61);
    assert_eq!(read["sessions_scored"], scored);
    assert_eq!(read["hits"], hits);
    assert_eq!(read["window_sessions"], 60);
    assert_eq!(read["min_sessions"], 10);
    assert_eq!(read["last_session"], "2026-11-19");
    assert_close(num(&read["har_realized_vol_pct"], "har"), har, 1e-12, "har");
    assert!(read["em_hit_rate_reason"].is_null());
    assert!(read["iv_forecast_reason"].is_null());
    for rule in ["em_hit_rate_rule", "edge_score_rule", "iv_forecast_rule"] {
        assert!(read[rule].as_str().is_some_and(|r| !r.is_empty()), "{rule}");
    }
    assert!(edge > 0.0 && edge < 100.0);

    // Ten sessions: nine scored, under the minimum of ten; eleven closes, under 23.
    let data = get(&app, "/api/mcp/data/zero-dte/BBB", &[]).await.data();
    let (scored, _, rate, edge, har) = scored_read_by_hand(&short);
    assert_eq!((rate, edge, har), (None, None, None));
    assert_eq!(data["scored_read"]["sessions_scored"], scored);
    for field in ["em_hit_rate", "edge_score", "iv_forecast"] {
        assert!(data[field].is_null(), "{field}: {}", data[field]);
        let reason = data["scored_read"][format!("{field}_reason")].as_str();
        assert!(
            reason.is_some_and(|r| r.contains("needs")),
            "{field}: {reason:?}"
        );
    }
    assert!(
        data["scored_read"]["em_hit_rate_reason"]
            .as_str()
            .unwrap()
            .contains(&format!("{scored} stored"))
    );

    // No history at all: nulls with reasons, the rest of the payload as ever.
    let data = get(&app, "/api/mcp/data/zero-dte/EEE", &[]).await.data();
    assert_eq!(data["scored_read"]["sessions_read"], 0);
    assert!(data["em_hit_rate"].is_null() && data["iv_forecast"].is_null());
    assert!(data["scored_read"]["edge_score_reason"].is_string());
    assert!(data["metrics"]["expected_move"].is_number());
}
