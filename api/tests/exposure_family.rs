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
    assert_eq!(data["expirations_included"], 3);
    assert_eq!(data["expirations_total"], 3);
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
    assert_eq!(data["flip_degenerate"], data["flip_level"].is_null());
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
async fn aggregate_false_takes_the_nearest_expiration() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/gex/SPY?aggregate=false", &[])
        .await
        .data();
    assert_eq!(data["aggregate"], false);
    assert_eq!(data["expiration"], spy.chain.expirations[0].to_string());
    assert_eq!(data["expirations_selected"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn compact_detail_windows_strikes_around_spot() {
    let app = spy_app();
    // A service client gets 25 strikes per side.
    let data = get(
        &app,
        "/api/mcp/data/gex/SPY",
        &[("x-service-client", "mcp")],
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
    let entry = &data["by_expiration"][0];
    assert_eq!(entry["gex_by_strike"].as_array().unwrap().len(), 50);
    assert!(
        entry["detailed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| num(&d["strike"], "k") >= strikes[0] && num(&d["strike"], "k") <= strikes[49])
    );

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
    assert_close(
        num(&data["expected_move_percent"], "pct"),
        100.0 * straddle / spot,
        1e-12,
        "percent",
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
    get(&app, "/api/mcp/data/expected-move/QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
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
    get(&app, "/api/mcp/data/batch/gex?tickers=QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
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
    assert!(data["em_hit_rate"].is_null());
    assert!(data["unavailable"]["em_hit_rate"].is_string());

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
