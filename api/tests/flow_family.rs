//! The flow endpoints over an in-memory market: totals and rankings checked against values
//! recomputed here from the chain's volume, open interest and quotes.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::get;
use exposure_support::{Market, MemoryMarket, app, assert_close, market};
use optics_schemas::ChainSide;
use serde_json::Value;

const SPOT: f64 = 100.0;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 45, 0).unwrap()
}

fn spy() -> Market {
    market("SPY", SPOT, 61, 11)
}

fn num(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// One traded contract recomputed from the chain: (is call, strike, expiration, dte, volume,
/// open interest, premium in dollars).
#[derive(Debug, Clone, Copy)]
struct Traded {
    call: bool,
    strike: f64,
    expiration: NaiveDate,
    dte: i32,
    volume: u64,
    oi: u64,
    premium: f64,
}

/// Premium = volume × price × 100, the price being the mid or, for a one-sided quote with
/// both fields, the average of bid and ask.
fn traded(spy: &Market) -> Vec<Traded> {
    let mut out = Vec::new();
    for row in &spy.chain.rows {
        for (side, call) in [(&row.call, true), (&row.put, false)] {
            let volume = side.volume.unwrap_or(0);
            if volume == 0 || !side.is_listed() {
                continue;
            }
            out.push(Traded {
                call,
                strike: row.strike,
                expiration: row.expiration,
                dte: row.dte,
                volume,
                oi: side.open_interest.unwrap_or(0),
                premium: volume as f64 * price(side) * 100.0,
            });
        }
    }
    out
}

fn price(side: &ChainSide) -> f64 {
    side.mid
        .or(match (side.bid, side.ask) {
            (Some(b), Some(a)) => Some(0.5 * (b + a)),
            _ => None,
        })
        .unwrap_or(0.0)
}

#[tokio::test]
async fn flow_summary_and_lists_match_the_chain() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/flow/SPY", &[]).await.data();
    let traded = traded(&spy);

    let call_premium: f64 = traded.iter().filter(|t| t.call).map(|t| t.premium).sum();
    let put_premium: f64 = traded.iter().filter(|t| !t.call).map(|t| t.premium).sum();
    let call_volume: u64 = traded.iter().filter(|t| t.call).map(|t| t.volume).sum();
    let put_volume: u64 = traded.iter().filter(|t| !t.call).map(|t| t.volume).sum();
    let summary = &data["summary"];
    assert_close(
        num(&summary["total_call_premium"], "c"),
        call_premium,
        1e-9,
        "calls",
    );
    assert_close(
        num(&summary["total_put_premium"], "p"),
        put_premium,
        1e-9,
        "puts",
    );
    assert_eq!(summary["total_call_volume"], call_volume);
    assert_eq!(summary["total_put_volume"], put_volume);
    assert_eq!(summary["total_flow_count"], traded.len());
    let net = call_premium - put_premium;
    assert_close(
        num(&summary["net_premium"], "net"),
        net,
        1e-9,
        "net_premium",
    );
    assert_close(
        num(&summary["call_put_ratio"], "cpr"),
        call_volume as f64 / put_volume as f64,
        1e-12,
        "call_put_ratio",
    );
    let total = call_premium + put_premium;
    let sentiment = if net > 0.1 * total {
        "BULLISH"
    } else if net < -0.1 * total {
        "BEARISH"
    } else {
        "NEUTRAL"
    };
    assert_eq!(summary["sentiment"], sentiment);

    // Full REST payload: every list whole.
    let all = data["all_flow"].as_array().unwrap();
    assert_eq!(all.len(), traded.len());
    let largest = data["largest_flows"].as_array().unwrap();
    let top_premium = traded.iter().map(|t| t.premium).fold(0.0, f64::max);
    assert_close(
        num(&largest[0]["premium"], "top"),
        top_premium,
        1e-9,
        "largest",
    );
    assert!(
        largest
            .windows(2)
            .all(|w| num(&w[0]["premium"], "a") >= num(&w[1]["premium"], "b"))
    );
    // Unusual: volume ≥ 100 and ≥ 2 × open interest (or no open interest).
    let unusual_expected = traded
        .iter()
        .filter(|t| t.volume >= 100 && (t.oi == 0 || t.volume >= 2 * t.oi))
        .count();
    assert!(unusual_expected > 0, "the fixture has unusual contracts");
    let unusual = data["unusual_activity"].as_array().unwrap();
    assert_eq!(unusual.len(), unusual_expected);
    for row in unusual {
        assert_eq!(row["is_unusual"], true);
        let (volume, oi) = (num(&row["volume"], "v"), num(&row["oi"], "oi"));
        assert!(
            volume >= 100.0 && (oi == 0.0 || volume >= 2.0 * oi),
            "{row}"
        );
    }
    // A row carries the spec's fields.
    let row = &all[0];
    for field in [
        "ask",
        "bid",
        "mid",
        "delta",
        "dte",
        "expiration",
        "is_unusual",
        "moneyness",
        "oi",
        "premium",
        "strike",
        "ticker",
        "timestamp",
        "type",
        "volume",
        "volume_oi_ratio",
    ] {
        assert!(row.get(field).is_some(), "flow row lacks {field}: {row}");
    }
    let first = traded[0];
    assert_eq!(num(&row["strike"], "strike"), first.strike);
    assert_eq!(row["expiration"], first.expiration.to_string());
    assert_eq!(row["dte"], first.dte);
    assert_eq!(row["type"], if first.call { "CALL" } else { "PUT" });
    let moneyness = match (first.call, first.strike < SPOT, first.strike > SPOT) {
        (true, true, _) | (false, _, true) => "ITM",
        _ => "OTM",
    };
    assert_eq!(row["moneyness"], moneyness);

    // Clusters: [expiration, {premium, volume}] and [strike, {calls, premium, puts, volume}].
    let expirations = data["top_expirations"].as_array().unwrap();
    assert_eq!(expirations.len(), 3);
    let (date, flow) = (&expirations[0][0], &expirations[0][1]);
    let premium_of = |e: &str| -> f64 {
        traded
            .iter()
            .filter(|t| t.expiration.to_string() == e)
            .map(|t| t.premium)
            .sum()
    };
    let best = spy
        .chain
        .expirations
        .iter()
        .map(|e| premium_of(&e.to_string()))
        .fold(0.0, f64::max);
    assert_close(
        num(&flow["premium"], "premium"),
        best,
        1e-9,
        "top expiration",
    );
    assert_close(premium_of(date.as_str().unwrap()), best, 1e-9, "its date");
    let strike = &data["top_strikes"][0];
    let k = num(&strike[0], "strike");
    let calls: u64 = traded
        .iter()
        .filter(|t| t.call && t.strike == k)
        .map(|t| t.volume)
        .sum();
    assert_eq!(strike[1]["calls"], calls);

    assert_eq!(data["data_freshness"], "LIVE");
    assert_eq!(data["is_market_hours"], true);
    assert!(data["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(data["window"]["detail"], "full");
    assert_eq!(data["window"]["truncated"], false);
    assert_eq!(data["stock_price"], SPOT);
    assert_eq!(data["success"], true);
}

#[tokio::test]
async fn compact_flow_caps_the_lists() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(
        &app,
        "/api/mcp/data/flow/SPY",
        &[("x-service-client", "mcp")],
    )
    .await
    .data();
    let traded = traded(&spy);
    assert_eq!(data["all_flow"].as_array().unwrap().len(), 25);
    assert_eq!(data["largest_flows"].as_array().unwrap().len(), 10);
    let unusual = data["unusual_activity"].as_array().unwrap().len();
    assert!(unusual <= 10 && unusual > 0);
    let window = &data["window"];
    assert_eq!(window["detail"], "compact");
    assert_eq!(window["truncated"], true);
    assert_eq!(window["rows_returned"], 25 + 10 + unusual);
    // Summary is never trimmed.
    assert_eq!(data["summary"]["total_flow_count"], traded.len());

    let data = get(&app, "/api/mcp/data/flow/SPY?detail=compact&limit=5", &[])
        .await
        .data();
    assert_eq!(data["all_flow"].as_array().unwrap().len(), 5);
    assert_eq!(data["window"]["limit"], 5);
}

#[tokio::test]
async fn flow_answers_503_when_the_volume_feed_is_down() {
    let spy = spy();
    let mut reader = MemoryMarket::default().with(&spy).covering("QQQ");
    reader.flows.clear();
    let app = app(reader, now());
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["data_unavailable"], true);
    // No chain at all is an upstream failure, not the flow feed.
    let body = get(&app, "/api/mcp/data/flow/QQQ", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    get(&app, "/api/mcp/data/flow/NOPE", &[])
        .await
        .error(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn smart_money_applies_its_filters() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/smart-money/SPY", &[]).await.data();
    let traded = traded(&spy);
    // Size is required; then likely opening (volume > OI) or OTM with ≥ 7 days.
    let expected: Vec<&Traded> = traded
        .iter()
        .filter(|t| {
            let otm = if t.call {
                t.strike >= SPOT
            } else {
                t.strike <= SPOT
            };
            t.premium >= 100_000.0 && (t.volume > t.oi || (otm && t.dte >= 7))
        })
        .collect();
    assert!(
        !expected.is_empty(),
        "the fixture has smart-money contracts"
    );
    assert_eq!(data["total_smart_trades"], expected.len());
    let trades = data["smart_money_trades"].as_array().unwrap();
    assert_eq!(trades.len(), expected.len());
    for trade in trades {
        let criteria = trade["criteria"].as_array().unwrap();
        assert!(criteria.contains(&Value::from("large_premium")), "{trade}");
        let score = (100 * criteria.len() as u64 + 1) / 3;
        assert_eq!(trade["smart_money_score"], score);
        assert!(num(&trade["premium"], "premium") >= 100_000.0);
    }
    let total: f64 = expected.iter().map(|t| t.premium).sum();
    assert_close(
        num(&data["total_smart_premium"], "sum"),
        total,
        1e-9,
        "premium",
    );
}

#[tokio::test]
async fn volume_profile_sums_one_expiration() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/volume-profile/SPY", &[])
        .await
        .data();
    let nearest = spy.chain.expirations[0];
    assert_eq!(data["expiration"], nearest.to_string());
    let rows = spy.chain.rows_of(nearest);
    let calls: u64 = rows.iter().map(|r| r.call.volume.unwrap_or(0)).sum();
    let puts: u64 = rows.iter().map(|r| r.put.volume.unwrap_or(0)).sum();
    assert_eq!(data["total_call_volume"], calls);
    assert_eq!(data["total_put_volume"], puts);
    assert_close(
        num(&data["put_call_ratio"], "pcr"),
        puts as f64 / calls as f64,
        1e-12,
        "put_call_ratio",
    );
    let profile = data["volume_profile"].as_array().unwrap();
    assert_eq!(profile.len(), rows.len());
    let busiest = rows
        .iter()
        .map(|r| r.call.volume.unwrap_or(0) + r.put.volume.unwrap_or(0))
        .max()
        .unwrap();
    let leader = num(&data["top_volume_strikes"][0], "leader");
    let at_leader = rows.iter().find(|r| r.strike == leader).unwrap();
    assert_eq!(
        at_leader.call.volume.unwrap_or(0) + at_leader.put.volume.unwrap_or(0),
        busiest
    );
    let point = &profile[0];
    assert_eq!(point["call_oi"], rows[0].call.open_interest.unwrap_or(0));
    assert_close(
        num(&point["distance_from_spot_pct"], "d"),
        100.0 * (rows[0].strike - SPOT) / SPOT,
        1e-12,
        "distance",
    );

    let uri = format!(
        "/api/mcp/data/volume-profile/SPY?expiration={}",
        spy.chain.expirations[2]
    );
    let data = get(&app, &uri, &[]).await.data();
    assert_eq!(data["expiration"], spy.chain.expirations[2].to_string());
    get(
        &app,
        "/api/mcp/data/volume-profile/SPY?expiration=2026-11-21",
        &[],
    )
    .await
    .error(StatusCode::BAD_REQUEST);
}
