//! The dealer-exposure endpoints over an in-memory market: values checked against sums
//! recomputed here from the chain's per-share Greeks and open interest.

mod common;
mod exposure_support;

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::get;
use exposure_support::{Market, MemoryMarket, app, assert_close, market};
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

fn num(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
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
    assert_close(
        num(&data["call_gex"], "call_gex"),
        call,
        GEX_TOLERANCE,
        "call_gex",
    );
    assert_close(
        num(&data["put_gex"], "put_gex"),
        put,
        GEX_TOLERANCE,
        "put_gex",
    );
    let total = call + put;
    assert_close(
        num(&data["total_gex"], "total_gex"),
        total,
        GEX_TOLERANCE,
        "total_gex",
    );
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
    assert_close(
        num(&data["call_charm"], "c"),
        calls,
        tolerance,
        "call_charm",
    );
    assert_close(num(&data["put_charm"], "p"), puts, tolerance, "put_charm");
    assert_close(
        num(&data["total_charm"], "t"),
        calls + puts,
        tolerance,
        "total",
    );
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
    // Not computed, so not presented: no null placeholders.
    for absent in ["em_hit_rate", "iv_forecast", "edge_score", "unavailable"] {
        assert!(data.get(absent).is_none(), "{absent} is in the payload");
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

/// A hand-built book: strikes, open interest and IVs chosen here, priced by the test's own
/// Black–Scholes–Merton gamma (not the seeded fixture, not the service's pricing code).
mod hand_built {
    use chrono::{DateTime, NaiveDate, TimeZone, Utc};
    use optics_schemas::{ChainRow, ChainSide, ForwardSource, PricingModelCode, SettlementStyle};

    pub const SPOT: f64 = 100.0;
    pub const RATE: f64 = 0.04;
    pub const YIELD: f64 = 0.01;

    /// One expiration of a book: per strike (strike, call IV, call OI, put IV, put OI).
    type Expiration = (NaiveDate, [(f64, f64, u64, f64, u64); 5]);

    /// One listed contract of the book.
    #[derive(Debug, Clone, Copy)]
    pub struct Contract {
        pub expiration: NaiveDate,
        pub years: f64,
        pub strike: f64,
        pub is_call: bool,
        pub iv: f64,
        pub oi: u64,
    }

    pub fn as_of() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, 15, 30, 0).unwrap()
    }

    fn trade_date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
    }

    /// Years (ACT/365) from `as_of` to 16:00 New York (21:00 UTC in winter) on `expiration`.
    fn years_to(expiration: NaiveDate) -> f64 {
        let close = expiration.and_hms_opt(21, 0, 0).unwrap().and_utc();
        (close - as_of()).num_seconds() as f64 / (365.0 * 86_400.0)
    }

    /// Two expirations × five strikes: puts heavy below spot, calls heavy above, so dealer
    /// GEX is negative for spots in the put strikes and positive in the call strikes. Each
    /// tuple: strike, call IV, call OI, put IV, put OI.
    pub fn two_sided() -> Vec<Contract> {
        let near = NaiveDate::from_ymd_opt(2026, 12, 18).unwrap();
        let far = NaiveDate::from_ymd_opt(2027, 1, 15).unwrap();
        let book: [Expiration; 2] = [
            (
                near,
                [
                    (90.0, 0.30, 200, 0.32, 9_000),
                    (95.0, 0.26, 800, 0.27, 12_000),
                    (100.0, 0.22, 4_000, 0.23, 5_000),
                    (105.0, 0.20, 7_000, 0.21, 900),
                    (110.0, 0.19, 6_500, 0.20, 300),
                ],
            ),
            (
                far,
                [
                    (90.0, 0.29, 100, 0.31, 4_000),
                    (95.0, 0.25, 300, 0.26, 2_500),
                    (100.0, 0.22, 1_500, 0.22, 1_200),
                    (105.0, 0.21, 2_000, 0.21, 400),
                    (110.0, 0.20, 3_000, 0.20, 100),
                ],
            ),
        ];
        contracts(&book)
    }

    /// Calls only (puts listed without open interest): GEX is positive at every spot.
    pub fn calls_only() -> Vec<Contract> {
        let near = NaiveDate::from_ymd_opt(2026, 12, 18).unwrap();
        contracts(&[(
            near,
            [
                (95.0, 0.25, 1_000, 0.26, 0),
                (100.0, 0.22, 3_000, 0.23, 0),
                (105.0, 0.20, 2_000, 0.21, 0),
                (110.0, 0.19, 500, 0.20, 0),
                (115.0, 0.19, 100, 0.20, 0),
            ],
        )])
    }

    fn contracts(book: &[Expiration]) -> Vec<Contract> {
        let mut out = Vec::new();
        for (expiration, strikes) in book {
            let years = years_to(*expiration);
            for &(strike, call_iv, call_oi, put_iv, put_oi) in strikes {
                for (is_call, iv, oi) in [(true, call_iv, call_oi), (false, put_iv, put_oi)] {
                    out.push(Contract {
                        expiration: *expiration,
                        years,
                        strike,
                        is_call,
                        iv,
                        oi,
                    });
                }
            }
        }
        out
    }

    /// Chain rows of `underlying` carrying the book's IVs and open interest (prices and Greeks
    /// are left for the service to derive from the IVs).
    pub fn chain_rows(underlying: &str, book: &[Contract]) -> Vec<ChainRow> {
        let mut rows: Vec<ChainRow> = Vec::new();
        for pair in book.chunks(2) {
            let (call, put) = (pair[0], pair[1]);
            let side = |c: &Contract, code: char| ChainSide {
                option_symbol: Some(format!("{underlying}{}{code}{}", c.expiration, c.strike)),
                iv: Some(c.iv),
                open_interest: Some(c.oi),
                volume: Some(0),
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
                forward: SPOT * ((RATE - YIELD) * call.years).exp(),
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

    /// Black–Scholes–Merton gamma per $1 at spot `s` (Hull, ch. 19):
    /// e^{−qT}·φ(d1)/(s·σ·√T), d1 = (ln(s/K) + (r − q + σ²/2)T)/(σ√T).
    pub fn gamma(c: &Contract, s: f64) -> f64 {
        let vol_time = c.iv * c.years.sqrt();
        let d1 = ((s / c.strike).ln() + (RATE - YIELD + 0.5 * c.iv * c.iv) * c.years) / vol_time;
        let density = (-0.5 * d1 * d1).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (-YIELD * c.years).exp() * density / (s * vol_time)
    }

    /// Dealer GEX of one contract at spot `s`: ±γ·OI·100·s²·0.01 (calls +, puts −), each
    /// contract keeping its IV and time.
    pub fn gex(c: &Contract, s: f64) -> f64 {
        let sign = if c.is_call { 1.0 } else { -1.0 };
        sign * gamma(c, s) * c.oi as f64 * 100.0 * s * s * 0.01
    }

    /// Total dealer GEX of the book re-priced at spot `s`.
    pub fn total_gex(book: &[Contract], s: f64) -> f64 {
        book.iter().map(|c| gex(c, s)).sum()
    }

    /// The flip level: every sign change of the re-priced total over 4,001 spots evenly spaced
    /// across ±20 % of spot, each bisected to 1e-12 × spot; the one nearest spot. `None` when
    /// the total never changes sign.
    pub fn flip_level(book: &[Contract]) -> Option<f64> {
        let points = 4_001;
        let grid: Vec<f64> = (0..points)
            .map(|i| SPOT * (0.8 + 0.4 * i as f64 / (points - 1) as f64))
            .collect();
        let mut crossings = Vec::new();
        for pair in grid.windows(2) {
            let (mut lo, mut hi) = (pair[0], pair[1]);
            let (f_lo, f_hi) = (total_gex(book, lo), total_gex(book, hi));
            if f_lo == 0.0 || f_lo.signum() == f_hi.signum() {
                continue;
            }
            while hi - lo > 1e-12 * SPOT {
                let mid = 0.5 * (lo + hi);
                if total_gex(book, mid).signum() == f_lo.signum() {
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
    assert_close(num(&data["call_gex"], "call"), call, tolerance, "call_gex");
    assert_close(num(&data["put_gex"], "put"), put, tolerance, "put_gex");
    assert_close(
        num(&data["total_gex"], "total"),
        call + put,
        tolerance,
        "total_gex",
    );
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
                .find(|d| num(&d["strike"], "k") == c.strike && d["type"] == code)
                .unwrap_or_else(|| panic!("no {code} {} {expiration}", c.strike));
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
