//! The flow endpoints over an in-memory market: totals and rankings checked against values
//! recomputed here from the chain's volume, open interest and quotes; and the 503 state over
//! the store-backed reader, with snapshots published by the real compute worker.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use common::get;
use exposure_support::{
    FlowTotals, Market, MemoryMarket, app, assert_close, assert_flow_summary, market, num,
};
use optics_schemas::ChainSide;
use serde_json::Value;

const SPOT: f64 = 100.0;

/// Two minutes after the fixtures' quotes (15:30 UTC): the market is open and the flow current.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 32, 0).unwrap()
}

fn spy() -> Market {
    market("SPY", SPOT, 61, 11)
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
    let totals = FlowTotals {
        call_premium,
        put_premium,
        call_volume,
        put_volume,
        count: traded.len(),
    };
    assert_flow_summary(&data["summary"], totals, 1e-9);

    // Full REST payload: all_flow and unusual_activity whole, largest_flows the top 50.
    let all = data["all_flow"].as_array().unwrap();
    assert_eq!(all.len(), traded.len());
    let largest = data["largest_flows"].as_array().unwrap();
    assert!(
        traded.len() > 50,
        "the fixture has more than 50 traded contracts"
    );
    assert_eq!(largest.len(), 50);
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
    // timestamp: ISO 8601 without a zone (spec 2.1), the instant of the quotes in UTC.
    let quoted = exposure_support::quoted_at();
    for stamp in [&data["timestamp"], &row["timestamp"]] {
        let text = stamp.as_str().unwrap();
        assert!(!text.ends_with('Z') && !text.contains('+'), "{text}");
        let parsed: chrono::NaiveDateTime = text.parse().unwrap();
        assert_eq!(parsed, quoted.naive_utc());
    }
    assert_eq!(
        data["as_of"]
            .as_str()
            .unwrap()
            .parse::<DateTime<Utc>>()
            .unwrap(),
        quoted
    );
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
    // The window counts the full payload's rows: nothing was left out of it.
    let full_rows = all.len() + largest.len() + unusual.len();
    assert_eq!(data["window"]["rows_total"], full_rows);
    assert_eq!(data["window"]["rows_returned"], full_rows);
    // Full detail (the REST default) has no strike window.
    assert!(data["window"].get("strikes_around").is_none());
    assert_eq!(data["stock_price"], SPOT);
    assert_eq!(data["success"], true);
}

/// Premium of a flow row as served (null when the contract has no price).
fn premium_of(row: &Value) -> f64 {
    row["premium"].as_f64().unwrap_or(0.0)
}

#[tokio::test]
async fn full_largest_flows_is_the_top_50_of_all_flow_by_premium() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(&app, "/api/mcp/data/flow/SPY?detail=full", &[])
        .await
        .data();
    let traded = traded(&spy);
    assert!(traded.len() > 50, "{} traded contracts", traded.len());
    let all = data["all_flow"].as_array().unwrap();
    let largest = data["largest_flows"].as_array().unwrap();
    assert_eq!(all.len(), traded.len(), "all_flow stays complete");
    assert_eq!(largest.len(), 50);
    // Descending premium.
    for pair in largest.windows(2) {
        assert!(premium_of(&pair[0]) >= premium_of(&pair[1]), "{pair:?}");
    }
    // The 50 largest premiums recomputed from the chain.
    let mut premiums: Vec<f64> = traded.iter().map(|t| t.premium).collect();
    premiums.sort_by(|a, b| b.total_cmp(a));
    for (row, premium) in largest.iter().zip(&premiums) {
        assert_close(premium_of(row), *premium, 1e-9, "largest premium");
    }
    // The head of all_flow sorted by the documented order (premium, then volume, both
    // descending, then expiration, strike, call before put): the same rows, field for field.
    let mut sorted: Vec<&Value> = all.iter().collect();
    sorted.sort_by(|a, b| {
        premium_of(b)
            .total_cmp(&premium_of(a))
            .then(b["volume"].as_u64().cmp(&a["volume"].as_u64()))
            .then(a["expiration"].as_str().cmp(&b["expiration"].as_str()))
            .then(num(&a["strike"], "k").total_cmp(&num(&b["strike"], "k")))
            .then(a["type"].as_str().cmp(&b["type"].as_str()))
    });
    for (rank, (row, expected)) in largest.iter().zip(&sorted).enumerate() {
        assert_eq!(row, *expected, "largest_flows[{rank}]");
    }
    // Nothing left out ranks above the last one kept.
    let last = premium_of(&largest[49]);
    assert!(sorted[50..].iter().all(|row| premium_of(row) <= last));
}

#[tokio::test]
async fn compact_flow_caps_the_lists() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let data = get(
        &app,
        "/api/mcp/data/flow/SPY",
        &[("x-apexvol-client", "claude")],
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
    // Compact keeps the contracts of 20 traded strikes each side of spot by default (spec §8).
    assert_eq!(window["strikes_around"], 20);
    let mut strikes: Vec<f64> = traded.iter().map(|t| t.strike).collect();
    strikes.sort_by(f64::total_cmp);
    strikes.dedup();
    let split = strikes.iter().position(|k| *k >= SPOT).unwrap();
    assert!(split > 20 && strikes.len() - split > 20, "{strikes:?}");
    let (low, high) = (strikes[split - 20], strikes[split + 19]);
    let in_band = |row: &Value| {
        let k = num(&row["strike"], "strike");
        k >= low && k <= high
    };
    for list in ["all_flow", "largest_flows", "unusual_activity"] {
        assert!(data[list].as_array().unwrap().iter().all(in_band), "{list}");
    }
    // The largest flows inside the band, by premium.
    let mut inside: Vec<f64> = traded
        .iter()
        .filter(|t| t.strike >= low && t.strike <= high)
        .map(|t| t.premium)
        .collect();
    assert!(inside.len() < traded.len(), "the band leaves contracts out");
    inside.sort_by(|a, b| b.total_cmp(a));
    let largest = data["largest_flows"].as_array().unwrap();
    for (row, premium) in largest.iter().zip(&inside) {
        assert_close(num(&row["premium"], "premium"), *premium, 1e-9, "largest");
    }
    // Summary is never trimmed.
    assert_eq!(data["summary"]["total_flow_count"], traded.len());
    // X-Service-Client is the same signal.
    let same = get(
        &app,
        "/api/mcp/data/flow/SPY",
        &[("x-service-client", "mcp")],
    )
    .await
    .data();
    assert_eq!(same["window"], data["window"]);

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
    // Smart money reads the same flow: an upstream failure there.
    let body = get(&app, "/api/mcp/data/smart-money/SPY", &[])
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

#[tokio::test]
async fn strikes_around_windows_the_flow_lists_around_spot() {
    let spy = spy();
    let app = app(MemoryMarket::default().with(&spy), now());
    let traded = traded(&spy);
    // The traded strikes, and the 5 below spot and the 5 at or above it.
    let mut strikes: Vec<f64> = traded.iter().map(|t| t.strike).collect();
    strikes.sort_by(f64::total_cmp);
    strikes.dedup();
    let split = strikes.iter().position(|k| *k >= SPOT).unwrap();
    assert!(split >= 5 && strikes.len() - split >= 5, "{strikes:?}");
    let (low, high) = (strikes[split - 5], strikes[split + 4]);
    let inside: Vec<&Traded> = traded
        .iter()
        .filter(|t| t.strike >= low && t.strike <= high)
        .collect();
    assert!(inside.len() < traded.len());

    let data = get(
        &app,
        "/api/mcp/data/flow/SPY?detail=compact&strikes_around=5&limit=500",
        &[],
    )
    .await
    .data();
    let all = data["all_flow"].as_array().unwrap();
    assert_eq!(all.len(), inside.len());
    let in_band = |row: &Value| {
        let k = num(&row["strike"], "strike");
        k >= low && k <= high
    };
    assert!(all.iter().all(in_band));
    // The ranked lists keep their order within the band: the 10 largest premiums in it.
    let mut premiums: Vec<f64> = inside.iter().map(|t| t.premium).collect();
    premiums.sort_by(|a, b| b.total_cmp(a));
    let largest = data["largest_flows"].as_array().unwrap();
    assert_eq!(largest.len(), 10);
    assert!(largest.iter().all(in_band));
    for (row, premium) in largest.iter().zip(&premiums) {
        assert_close(num(&row["premium"], "premium"), *premium, 1e-9, "largest");
    }
    let unusual_inside = inside
        .iter()
        .filter(|t| t.volume >= 100 && (t.oi == 0 || t.volume >= 2 * t.oi))
        .count();
    let unusual = data["unusual_activity"].as_array().unwrap();
    assert_eq!(unusual.len(), unusual_inside.min(10));
    assert!(unusual.iter().all(in_band));
    // The window reports the strike window and the cap over the three lists.
    let unusual_total = traded
        .iter()
        .filter(|t| t.volume >= 100 && (t.oi == 0 || t.volume >= 2 * t.oi))
        .count();
    let window = &data["window"];
    assert_eq!(window["detail"], "compact");
    assert_eq!(window["strikes_around"], 5);
    assert_eq!(window["limit"], 500);
    // rows_total is what the full payload carries: every traded contract, the top 50 by
    // premium and every unusual contract.
    assert_eq!(window["rows_total"], traded.len() + 50 + unusual_total);
    assert_eq!(window["rows_returned"], all.len() + 10 + unusual.len());
    assert_eq!(window["truncated"], true);
    // The summary and the clusters are never trimmed.
    assert_eq!(data["summary"]["total_flow_count"], traded.len());
    assert_eq!(data["top_expirations"].as_array().unwrap().len(), 3);

    // 0 keeps every strike; above the bound it is clamped and said so.
    let every = get(
        &app,
        "/api/mcp/data/flow/SPY?detail=compact&strikes_around=0&limit=500",
        &[],
    )
    .await
    .data();
    assert_eq!(every["all_flow"].as_array().unwrap().len(), traded.len());
    assert!(every["window"].get("strikes_around").is_none());
    let clamped = get(
        &app,
        "/api/mcp/data/flow/SPY?detail=compact&strikes_around=9999&limit=500",
        &[],
    )
    .await
    .data();
    assert_eq!(clamped["window"]["strikes_around"], 500);
    assert_eq!(clamped["all_flow"].as_array().unwrap().len(), traded.len());
    assert_eq!(clamped["clamped"][0]["parameter"], "strikes_around");
    assert_eq!(clamped["clamped"][0]["used"], 500);
    get(&app, "/api/mcp/data/flow/SPY?strikes_around=five", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
}

/// The flow's 503 state in the real system: the compute worker publishes into a store and the
/// API reads it through the store-backed reader.
mod store_backed {
    use std::sync::Arc;

    use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use optics_api::market::StoreMarketData;
    use optics_compute::time::ManualClock;
    use optics_pipeline::store::SnapshotStore;
    use optics_pipeline::worker::{ComputeWorker, WorkerConfig};
    use optics_schemas::{DataBatch, Message, OptionQuote};

    pub fn store() -> SnapshotStore {
        SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"))
    }

    /// November 2026 at `hour:minute` UTC.
    pub fn at(day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, day, hour, minute, 0)
            .unwrap()
    }

    /// SPY quotes observed at `quoted`, session volume included unless `volume` is false.
    fn quotes(quoted: DateTime<Utc>, volume: bool) -> Vec<OptionQuote> {
        let mut quotes =
            optics_tests::fixtures::synthetic_chain("SPY", 100.0, 3, 21, 90.0, 4, usize::MAX);
        let session: NaiveDate = quoted.date_naive();
        for quote in &mut quotes {
            quote.quote_time = quoted;
            quote.oi_date = session - Duration::days(1);
            if !volume {
                quote.volume = 0;
            }
        }
        quotes
    }

    /// One compute cycle at `quoted` by a fresh offline worker: the chain only, or every
    /// dataset (chain, exposures, flow).
    pub async fn publish(
        store: &SnapshotStore,
        quoted: DateTime<Utc>,
        chain_only: bool,
        volume: bool,
    ) {
        let mut worker = ComputeWorker::offline(
            store.clone(),
            Arc::new(ManualClock::new(quoted)),
            WorkerConfig {
                chain_only,
                ..WorkerConfig::default()
            },
        );
        let batch = DataBatch::from_rows("SPY", &quotes(quoted, volume)).unwrap();
        worker.apply(&Message::Data(batch)).unwrap();
        let events = worker.publish_dirty(quoted).await.unwrap();
        assert!(!events.is_empty(), "the worker published");
    }

    /// The router over the store's newest snapshots, with the clock at `now`.
    pub async fn app(store: &SnapshotStore, now: DateTime<Utc>) -> axum::Router {
        app_and_market(store, now).await.0
    }

    /// [`app`] and the reader behind it (to hand it snapshot events).
    pub async fn app_and_market(
        store: &SnapshotStore,
        now: DateTime<Utc>,
    ) -> (axum::Router, Arc<StoreMarketData>) {
        let market = Arc::new(StoreMarketData::new(store.clone()));
        market.load().await.unwrap();
        let state = optics_api::AppState::new(Arc::new(ManualClock::new(now)))
            .with_market_data(market.clone());
        (optics_api::router(state), market)
    }
}

fn unavailable(body: &Value, contains: &str) {
    assert_eq!(body["data_unavailable"], true, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains(contains),
        "{contains:?} not in {body}"
    );
}

#[tokio::test]
async fn flow_is_503_when_the_worker_published_a_chain_without_flow() {
    use store_backed::{at, publish, store};
    let store = store();
    // The worker's chain-only mode: a chain of the session, no flow.
    publish(&store, at(20, 15, 30), true, true).await;
    let app = store_backed::app(&store, at(20, 15, 31)).await;
    assert_eq!(
        get(&app, "/api/mcp/data/chain/SPY", &[]).await.status,
        StatusCode::OK
    );
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    unavailable(&body, "no flow has been computed");

    // A full cycle publishes the flow: served, labelled live.
    publish(&store, at(20, 15, 31), false, true).await;
    let app = store_backed::app(&store, at(20, 15, 32)).await;
    let data = get(&app, "/api/mcp/data/flow/SPY", &[]).await.data();
    assert_eq!(data["data_freshness"], "LIVE");
    assert_eq!(data["timestamp"], "2026-11-20T15:31:00");
    assert!(data["summary"]["total_flow_count"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn flow_behind_the_chain_is_503_not_live() {
    use store_backed::{at, publish, store};
    // Thursday's full cycle, then Friday's quotes built into a chain only: the flow held is
    // the earlier session's.
    let store = store();
    publish(&store, at(19, 20, 0), false, true).await;
    publish(&store, at(20, 15, 30), true, true).await;
    let app = store_backed::app(&store, at(20, 15, 31)).await;
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    unavailable(&body, "2026-11-19 session");

    // Same session, but the flow stopped at 15:00 while the chain moved on to 15:30.
    let store = store_backed::store();
    publish(&store, at(20, 15, 0), false, true).await;
    publish(&store, at(20, 15, 30), true, true).await;
    let app = store_backed::app(&store, at(20, 15, 31)).await;
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    unavailable(&body, "is stale");

    // Chain and flow agree but the whole feed stopped: in the session, not current.
    let store = store_backed::store();
    publish(&store, at(20, 15, 0), false, true).await;
    let app = store_backed::app(&store, at(20, 15, 31)).await;
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    unavailable(&body, "not current");
    // Smart money answers 424 over the same stale flow.
    let body = get(&app, "/api/mcp/data/smart-money/SPY", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);

    // Thursday's data during Friday's session is not labelled live: it is refused. On Saturday
    // it is served, labelled EOD of its own session (Friday's has not arrived).
    let store = store_backed::store();
    publish(&store, at(19, 20, 0), false, true).await;
    let app = store_backed::app(&store, at(20, 15, 31)).await;
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    unavailable(&body, "market is open for the 2026-11-20 session");
    let app = store_backed::app(&store, at(21, 15, 0)).await;
    let data = get(&app, "/api/mcp/data/flow/SPY", &[]).await.data();
    assert_eq!(data["data_freshness"], "EOD");
    assert_eq!(data["trade_date"], "2026-11-19");
    assert_eq!(data["is_market_hours"], false);
    assert!(
        data["message"].as_str().unwrap().contains("2026-11-19"),
        "{}",
        data["message"]
    );
}

#[tokio::test]
async fn flow_is_503_when_no_contract_carries_a_session_volume() {
    use store_backed::{at, publish, store};
    // Quotes keep coming but every volume is zero: the volume feed is down.
    let store = store();
    publish(&store, at(20, 15, 30), false, false).await;
    let app = store_backed::app(&store, at(20, 15, 31)).await;
    assert_eq!(
        get(&app, "/api/mcp/data/gex/SPY", &[]).await.status,
        StatusCode::OK,
        "the chain and exposures are served"
    );
    let body = get(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    unavailable(
        &body,
        "no contract of the 2026-11-20 chain carries a session volume",
    );
}

/// The rows of the newest `dataset` snapshot of SPY on the 20th.
async fn stored_rows<R>(
    store: &optics_pipeline::store::SnapshotStore,
    dataset: &str,
    read: fn(&arrow_array::RecordBatch) -> Result<Vec<R>, optics_schemas::SchemaError>,
) -> Vec<R> {
    let key = optics_pipeline::store::SnapshotKey::new(
        dataset,
        store_backed::at(20, 0, 0).date_naive(),
        "SPY",
    );
    let snapshot = store.read(&key).await.unwrap().expect("stored");
    snapshot
        .batches
        .iter()
        .flat_map(|b| read(b).unwrap())
        .collect()
}

/// The `/flow` bodies, full and compact, over `store` at 15:31 on the 20th (the bytes, as
/// text).
async fn flow_bodies(store: &optics_pipeline::store::SnapshotStore) -> Vec<String> {
    let app = store_backed::app(store, store_backed::at(20, 15, 31)).await;
    let mut bodies = Vec::new();
    for uri in [
        "/api/mcp/data/flow/SPY",
        "/api/mcp/data/flow/SPY?detail=compact",
    ] {
        let answer = get(&app, uri, &[]).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
        bodies.push(String::from_utf8(answer.body).unwrap());
    }
    bodies
}

/// `top_strikes` and `top_expirations` rank the `flow_aggregates` the worker stored for the
/// flow's own cycle; without any (a store written before the worker published them) or with
/// another cycle's, the flow rows' own sums, ranked alike.
#[tokio::test]
async fn flow_clusters_rank_the_stored_aggregates_of_the_flows_cycle() {
    use optics_pipeline::store::SnapshotKey;
    use optics_schemas::bus::snapshot_datasets::{CHAIN, FLOW, FLOW_AGGREGATES};
    use optics_schemas::{ChainRow, FlowAggregateKey, FlowAggregateRow, FlowSnapshotRow};
    use store_backed::{at, publish, store};

    let quoted = at(20, 15, 30);
    let key = |dataset| SnapshotKey::new(dataset, quoted.date_naive(), "SPY");
    let with_aggregates = store();
    publish(&with_aggregates, quoted, false, true).await;
    // The same chain and flow, without aggregates.
    let without = store();
    let chain = stored_rows(&with_aggregates, CHAIN, ChainRow::from_batch).await;
    let flow = stored_rows(&with_aggregates, FLOW, FlowSnapshotRow::from_batch).await;
    for (dataset, batch) in [
        (CHAIN, ChainRow::to_batch(&chain).unwrap()),
        (FLOW, FlowSnapshotRow::to_batch(&flow).unwrap()),
    ] {
        without
            .publish(&key(dataset), &batch, &[], quoted)
            .await
            .unwrap();
    }
    let sums = flow_bodies(&without).await;
    assert_eq!(
        flow_bodies(&with_aggregates).await,
        sums,
        "the stored aggregates are the rows' sums: the same bytes"
    );

    // Stored aggregates that are not the rows' sums are what is served: the strike and the
    // expiration with the least premium are given the most.
    let mut aggregates = stored_rows(
        &with_aggregates,
        FLOW_AGGREGATES,
        FlowAggregateRow::from_batch,
    )
    .await;
    let mut boost = |strike_rows: bool, dollars: f64| -> FlowAggregateRow {
        let row = aggregates
            .iter_mut()
            .filter(|r| matches!(r.key, FlowAggregateKey::Strike(_)) == strike_rows)
            .min_by(|a, b| a.totals.premium_usd.total_cmp(&b.totals.premium_usd))
            .unwrap();
        row.totals.call_premium_usd += dollars;
        row.totals.premium_usd += dollars;
        row.totals.call_volume += 1;
        row.totals.volume += 1;
        row.clone()
    };
    let strike = boost(true, 1e9);
    let expiration = boost(false, 2e9);
    let batch = FlowAggregateRow::to_batch(&aggregates).unwrap();
    with_aggregates
        .publish(&key(FLOW_AGGREGATES), &batch, &[], quoted)
        .await
        .unwrap();
    let app = store_backed::app(&with_aggregates, at(20, 15, 31)).await;
    let data = get(&app, "/api/mcp/data/flow/SPY", &[]).await.data();
    let top_strike = &data["top_strikes"][0];
    assert_eq!(top_strike[0], strike.key.strike().unwrap());
    assert_eq!(top_strike[1]["premium"], strike.totals.premium_usd);
    assert_eq!(top_strike[1]["calls"], strike.totals.call_volume);
    assert_eq!(top_strike[1]["puts"], strike.totals.put_volume);
    assert_eq!(top_strike[1]["volume"], strike.totals.volume);
    let top_expiration = &data["top_expirations"][0];
    assert_eq!(
        top_expiration[0],
        expiration.key.expiration().unwrap().to_string()
    );
    assert_eq!(top_expiration[1]["premium"], expiration.totals.premium_usd);
    assert_eq!(top_expiration[1]["volume"], expiration.totals.volume);
    // The rest is the rows'.
    let rows_data = &serde_json::from_str::<Value>(&sums[0]).unwrap()["data"];
    assert_ne!(data["top_strikes"], rows_data["top_strikes"]);
    for field in ["summary", "all_flow", "largest_flows", "unusual_activity"] {
        assert_eq!(data[field], rows_data[field], "{field}");
    }

    // Aggregates of another cycle (a minute before the flow's): the rows' sums again.
    for row in &mut aggregates {
        row.as_of = quoted - Duration::minutes(1);
    }
    let batch = FlowAggregateRow::to_batch(&aggregates).unwrap();
    with_aggregates
        .publish(&key(FLOW_AGGREGATES), &batch, &[], quoted)
        .await
        .unwrap();
    assert_eq!(flow_bodies(&with_aggregates).await, sums);
}

/// The zero-dte scored read over the store-backed reader: the `vol_daily` partitions the
/// session close publishes (one market-wide file per session) are read back for one symbol,
/// up to the chain's session.
#[tokio::test]
async fn zero_dte_reads_the_stored_vol_daily_history_of_its_symbol() {
    use optics_pipeline::store::{MARKET_WIDE, SnapshotKey};
    use optics_schemas::VolDailyRow;
    use optics_schemas::bus::snapshot_datasets;

    let store = store_backed::store();
    store_backed::publish(&store, store_backed::at(20, 15, 30), false, true).await;
    // Twelve sessions before the chain's (Nov 4 .. Nov 19, weekdays) and one after it.
    let mut dates: Vec<NaiveDate> = (4..=19)
        .map(|d| NaiveDate::from_ymd_opt(2026, 11, d).unwrap())
        .filter(|d| !matches!(d.format("%a").to_string().as_str(), "Sat" | "Sun"))
        .collect();
    dates.push(NaiveDate::from_ymd_opt(2026, 11, 23).unwrap());
    let spy_close = |i: usize| 100.0 * (1.0 + 0.01 * ((i % 3) as f64 - 1.0));
    for (i, date) in dates.iter().enumerate() {
        let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
        let row = |symbol: &str, close: f64, iv: f64| {
            let mut row = VolDailyRow::new(symbol, *date, as_of, close);
            row.front_atm_iv_pct = Some(iv);
            row.front_expiration = Some(*date + Duration::days(1));
            row
        };
        let rows = [
            row("QQQ", 400.0 + i as f64, 30.0),
            row("SPY", spy_close(i), 18.0),
        ];
        let batch = VolDailyRow::to_batch(&rows).unwrap();
        let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, *date, MARKET_WIDE);
        store
            .publish(&key, &batch, &["underlying"], as_of)
            .await
            .unwrap();
    }
    let (app, market) = store_backed::app_and_market(&store, store_backed::at(20, 15, 32)).await;
    let data = get(&app, "/api/mcp/data/zero-dte/SPY", &[]).await.data();
    let read = &data["scored_read"];
    // The twelve sessions through Nov 19 are read; Nov 23 is after the chain's session.
    let stored = dates.len() - 1;
    assert_eq!(read["sessions_read"], stored);
    assert_eq!(read["sessions_scored"], stored - 1);
    assert_eq!(read["last_session"], "2026-11-19");
    // By hand over SPY's closes: a hit when |move| ≤ close × 18 % × √(days/365).
    let hits = (1..stored)
        .filter(|&i| {
            let days = (dates[i] - dates[i - 1]).num_days() as f64;
            (spy_close(i) - spy_close(i - 1)).abs()
                <= spy_close(i - 1) * 0.18 * (days / 365.0).sqrt()
        })
        .count();
    assert_eq!(read["hits"], hits);
    assert_close(
        num(&data["em_hit_rate"], "rate"),
        100.0 * hits as f64 / (stored - 1) as f64,
        1e-12,
        "em_hit_rate",
    );
    // Twelve closes are fewer than the 23 of the HAR vol.
    assert!(data["iv_forecast"].is_null());
    assert!(read["iv_forecast_reason"].as_str().unwrap().contains("23"));

    // A session published again (a new file of Nov 19) is read anew once its publication is
    // announced, not served from the series the reader holds: its close is moved so that its
    // hit becomes a miss or its miss a hit.
    let last = stored - 1;
    let days = (dates[last] - dates[last - 1]).num_days() as f64;
    let last_was_hit = (spy_close(last) - spy_close(last - 1)).abs()
        <= spy_close(last - 1) * 0.18 * (days / 365.0).sqrt();
    let (moved, expected_hits) = if last_was_hit {
        (spy_close(last - 1) * 1.3, hits - 1)
    } else {
        (spy_close(last - 1), hits + 1)
    };
    let as_of = dates[last].and_hms_opt(21, 30, 0).unwrap().and_utc();
    let mut row = VolDailyRow::new("SPY", dates[last], as_of, moved);
    row.front_atm_iv_pct = Some(18.0);
    row.front_expiration = Some(dates[last] + Duration::days(1));
    let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, dates[last], MARKET_WIDE);
    let batch = VolDailyRow::to_batch(&[row]).unwrap();
    let event = store
        .publish(&key, &batch, &["underlying"], as_of)
        .await
        .unwrap();
    market.apply(&event).await.unwrap();
    // Another query string: the held answer of the first call is not reused.
    let again = get(&app, "/api/mcp/data/zero-dte/SPY?detail=full", &[])
        .await
        .data();
    assert_eq!(
        again["scored_read"]["hits"], expected_hits,
        "the republished session's close is the one scored"
    );
}
