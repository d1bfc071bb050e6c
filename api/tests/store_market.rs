//! The store-backed reader (`StoreMarketData`) over an in-memory object store: it loads the
//! newest snapshot of each ticker and the reference data at start, swaps in a newer chain or
//! earnings table when its `snapshot` event arrives or a refresh finds it, and never lets an
//! older session's late event replace a newer one.

mod common;

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::get;
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_api::market::StoreMarketData;
use optics_api::{MarketDataReader, Ticker};
use optics_compute::chain::{ChainMarket, build_chain};
use optics_compute::pricing::PricingModel;
use optics_compute::time::{Clock, ManualClock};
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::{
    AssetClass, BorrowRate, ChainRow, Company, Dividend, DividendFrequency, EarningsEvent,
    EarningsTiming, Record, SnapshotEvent,
};

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

fn at(d: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, d, hour, 0, 0).unwrap()
}

fn chain_rows(trade_date: NaiveDate, as_of: DateTime<Utc>, spot: f64) -> Vec<ChainRow> {
    synthetic_rows(trade_date, as_of, spot, 2, 80)
}

/// The chain of a synthetic SPY listing: `expirations` weekly expirations of 21 strikes from
/// ten dollars below spot, at most `quotes` quotes.
fn synthetic_rows(
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
    spot: f64,
    expirations: u64,
    quotes: usize,
) -> Vec<ChainRow> {
    let quotes = optics_tests::fixtures::synthetic_chain(
        "SPY",
        spot,
        expirations,
        21,
        spot - 10.0,
        5,
        quotes,
    );
    build_chain(
        &quotes,
        &ChainMarket {
            underlying: "SPY".to_owned(),
            trade_date,
            as_of,
            spot: Some(spot),
            rate: 0.04,
            dividend_yield: 0.01,
            model: PricingModel::BlackScholesMerton,
        },
    )
    .unwrap()
    .rows
}

fn companies() -> Vec<Company> {
    ["AAPL", "SPY"]
        .into_iter()
        .map(|symbol| Company {
            symbol: symbol.to_owned(),
            name: format!("{symbol} Inc."),
            asset_class: if symbol == "SPY" {
                AssetClass::Etf
            } else {
                AssetClass::Stock
            },
            sector: None,
            sector_etf: None,
            market_cap: None,
            beta_spy: 1.0,
            corr_spy: 0.9,
            priced_on_forward: false,
            industry: None,
        })
        .collect()
}

fn earnings(dates: &[(&str, NaiveDate)]) -> Vec<EarningsEvent> {
    dates
        .iter()
        .map(|(symbol, date)| EarningsEvent {
            symbol: (*symbol).to_owned(),
            report_date: *date,
            timing: EarningsTiming::AfterClose,
            fiscal_quarter: "FY2026 Q4".to_owned(),
            eps_estimate: 1.0,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        })
        .collect()
}

async fn publish_chain(store: &SnapshotStore, rows: &[ChainRow]) -> SnapshotEvent {
    let key = SnapshotKey::new("chain", rows[0].trade_date, "SPY");
    store
        .publish(&key, &ChainRow::to_batch(rows).unwrap(), &[], rows[0].as_of)
        .await
        .unwrap()
}

async fn publish_reference<R: Record>(
    store: &SnapshotStore,
    rows: &[R],
    trade_date: NaiveDate,
) -> SnapshotEvent {
    let key = SnapshotKey::new(R::DATASET.name(), trade_date, MARKET_WIDE);
    store
        .publish(&key, &R::to_batch(rows).unwrap(), &[], at(20, 21))
        .await
        .unwrap()
}

#[tokio::test]
async fn loads_the_newest_snapshots_and_swaps_on_events() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_chain(&store, &chain_rows(day(19), at(19, 21), 100.0)).await;
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    publish_reference(&store, &companies(), day(20)).await;
    publish_reference(
        &store,
        &earnings(&[("AAPL", day(3)), ("AAPL", day(27)), ("AAPL", day(30))]),
        day(20),
    )
    .await;

    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let spy = Ticker::parse("SPY").unwrap();
    let chain = market.chain(&spy).expect("a chain");
    assert_eq!(chain.trade_date, day(20), "the newest session wins");
    assert_eq!(chain.stock_price(), 101.0);
    assert!(market.covers(&spy));
    let coverage = market.coverage();
    assert_eq!(coverage.next_earnings("AAPL", day(20)), Some(day(27)));
    assert_eq!(coverage.next_earnings("AAPL", day(27)), Some(day(27)));
    assert_eq!(coverage.next_earnings("AAPL", day(28)), Some(day(30)));
    assert_eq!(coverage.next_earnings("SPY", day(20)), None);

    // A newer chain of the same session, announced: swapped in.
    let event = publish_chain(&store, &chain_rows(day(20), at(20, 16), 102.0)).await;
    market.apply(&event).await.unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 102.0);

    // An older session's late event does not replace it.
    let late = publish_chain(&store, &chain_rows(day(19), at(19, 21), 99.0)).await;
    market.apply(&late).await.unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 102.0);

    // A new earnings table, announced: the next report moves.
    let event = publish_reference(&store, &earnings(&[("AAPL", day(24))]), day(20)).await;
    market.apply(&event).await.unwrap();
    assert_eq!(
        market.coverage().next_earnings("AAPL", day(20)),
        Some(day(24))
    );
    assert_eq!(market.coverage().next_earnings("AAPL", day(25)), None);
}

#[tokio::test]
async fn dividends_and_borrow_fees_load_and_swap_on_events() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    let paid = |ex: u32, amount: f64| Dividend {
        symbol: "AAPL".to_owned(),
        ex_date: day(ex),
        pay_date: day(ex + 2),
        amount,
        frequency: DividendFrequency::Quarterly,
    };
    // Stored out of order, with a duplicate ex-date: one per ex-date, ascending.
    publish_reference(
        &store,
        &[paid(9, 0.25), paid(2, 0.24), paid(9, 0.25)],
        day(20),
    )
    .await;
    let fee = |d: u32, rate: f64| BorrowRate {
        symbol: "AAPL".to_owned(),
        date: day(d),
        borrow_rate: rate,
        is_hard_to_borrow: false,
    };
    publish_reference(&store, &[fee(19, 0.004), fee(18, 0.003)], day(20)).await;
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let coverage = market.coverage();
    let ex: Vec<NaiveDate> = coverage
        .dividends_of("AAPL")
        .iter()
        .map(|d| d.ex_date)
        .collect();
    assert_eq!(ex, [day(2), day(9)]);
    let dates: Vec<NaiveDate> = coverage.borrow_of("AAPL").iter().map(|r| r.date).collect();
    assert_eq!(dates, [day(18), day(19)]);
    assert!(coverage.dividends_of("SPY").is_empty());

    // A newer dividends table, announced: swapped in, the borrow fees kept.
    let event = publish_reference(&store, &[paid(16, 0.26)], day(20)).await;
    market.apply(&event).await.unwrap();
    let coverage = market.coverage();
    assert_eq!(coverage.dividends_of("AAPL").len(), 1);
    assert_eq!(coverage.dividends_of("AAPL")[0].amount, 0.26);
    assert_eq!(coverage.borrow_of("AAPL").len(), 2);
}

#[tokio::test]
async fn a_poll_that_finds_no_newer_reference_table_keeps_the_generation() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    publish_reference(&store, &companies(), day(20)).await;
    publish_reference(&store, &earnings(&[("AAPL", day(27))]), day(20)).await;
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let loaded = market.generation();
    let held = market.coverage();
    // Nothing new: the held coverage (the same allocation) and the same generation, so the
    // response cache keeps its answers across polls.
    market.load_reference().await.unwrap();
    market.load().await.unwrap();
    assert_eq!(market.generation(), loaded);
    assert!(Arc::ptr_eq(&held, &market.coverage()));
    // A newer earnings version (an import, say) is read on the next refresh, and only it: the
    // companies are the ones already held.
    publish_reference(&store, &earnings(&[("AAPL", day(24))]), day(20)).await;
    market.load_reference().await.unwrap();
    assert_ne!(market.generation(), loaded);
    let coverage = market.coverage();
    assert_eq!(coverage.next_earnings("AAPL", day(20)), Some(day(24)));
    assert!(Arc::ptr_eq(&held.companies[0], &coverage.companies[0]));
}

#[tokio::test]
async fn a_snapshot_handed_over_in_process_is_served_and_not_read_back() {
    use optics_pipeline::worker::PublishedSnapshots;
    use optics_schemas::memory::MemoryHolder;

    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    let market = StoreMarketData::new(store.clone());
    let spy = Ticker::parse("SPY").unwrap();
    // The file of version 1 holds the chain at 101; the worker hands over its batch, built at
    // 102, as that version (in a real cycle the two are the same rows).
    let event = publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    let key = SnapshotKey::new("chain", day(20), "SPY");
    let handed = ChainRow::to_batch(&chain_rows(day(20), at(20, 15), 102.0)).unwrap();
    market.published(&key, event.version, &handed);
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 102.0);
    // The event that follows finds the version held: the file is not read (it would say 101).
    market.apply(&event).await.unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 102.0);
    // An older version handed over late does not replace the newer one; a newer one does.
    market.published(
        &key,
        event.version - 1,
        &ChainRow::to_batch(&chain_rows(day(20), at(20, 14), 99.0)).unwrap(),
    );
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 102.0);
    let newer = publish_chain(&store, &chain_rows(day(20), at(20, 16), 103.0)).await;
    market.apply(&newer).await.unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 103.0);
    // Datasets the cache does not hold are ignored.
    let other = SnapshotKey::new("vol_daily", day(20), "SPY");
    market.published(&other, 7, &handed);

    // What it holds: one chain, its rows; the replaced ones are not counted.
    let mut held = Vec::new();
    market.held_memory(&mut held);
    let chains = held.iter().find(|h| h.holder == "api_chains").unwrap();
    let rows = market.chain(&spy).unwrap().rows.len() as u64;
    assert_eq!(chains.items, rows);
    assert!(chains.bytes >= rows * std::mem::size_of::<ChainRow>() as u64);
}

async fn ok_json(app: &axum::Router, uri: &str) -> serde_json::Value {
    let answer = get(app, uri, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    answer.json()
}

#[tokio::test]
async fn a_swapped_snapshot_is_served_at_once_despite_the_response_cache() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    publish_reference(&store, &companies(), day(20)).await;
    let market = Arc::new(StoreMarketData::new(store.clone()));
    market.load().await.unwrap();
    let clock = Arc::new(ManualClock::new(at(20, 15)));
    let state =
        optics_api::AppState::new(clock.clone() as Arc<dyn Clock>).with_market_data(market.clone());
    let app = optics_api::router(state);

    let uri = "/api/mcp/data/chain/SPY";
    let first = ok_json(&app, uri).await;
    assert_eq!(first["data"]["stock_price"], 101.0);
    assert_eq!(ok_json(&app, uri).await, first, "the held answer");

    let event = publish_chain(&store, &chain_rows(day(20), at(20, 16), 102.0)).await;
    market.apply(&event).await.unwrap();
    let swapped = ok_json(&app, uri).await;
    assert_eq!(
        swapped["data"]["stock_price"], 102.0,
        "no stale answer after a swap"
    );

    // Freshness follows the clock: after the close the same data is labelled end of day.
    assert_eq!(swapped["data"]["freshness"]["data_freshness"], "LIVE");
    clock.set(at(20, 22));
    let after_close = ok_json(&app, uri).await;
    assert_eq!(after_close["data"]["freshness"]["data_freshness"], "EOD");
}

#[tokio::test]
async fn chain_at_time_reads_a_stored_session_through_the_parquet_reader() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    let rows = chain_rows(day(19), at(19, 21), 100.0);
    publish_chain(&store, &rows).await;
    let market = StoreMarketData::new(store.clone());
    let spy = Ticker::parse("SPY").unwrap();
    let expiration = rows.iter().map(|r| r.expiration).max().unwrap();
    let read = market
        .chain_at_time(&spy, day(19), expiration)
        .await
        .unwrap()
        .expect("the stored session");
    let mut expected: Vec<ChainRow> = rows
        .iter()
        .filter(|r| r.expiration == expiration)
        .cloned()
        .collect();
    expected.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    assert_eq!(read, expected, "every field as stored");
    assert!(
        market
            .chain_at_time(&spy, day(18), expiration)
            .await
            .unwrap()
            .is_none(),
        "a session not carried"
    );
    // The session's listing, read from the same file: every expiration of the rows, once.
    let mut listed: Vec<NaiveDate> = rows.iter().map(|r| r.expiration).collect();
    listed.sort_unstable();
    listed.dedup();
    assert!(listed.len() >= 2, "{listed:?}");
    assert_eq!(
        market.expirations_at(&spy, day(19)).await.unwrap(),
        Some(listed)
    );
    assert_eq!(market.expirations_at(&spy, day(18)).await.unwrap(), None);
}

#[tokio::test]
async fn large_held_answers_go_out_gzip_encoded_to_clients_that_accept_it() {
    use std::io::Read as _;
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    publish_reference(&store, &companies(), day(20)).await;
    let market = Arc::new(StoreMarketData::new(store.clone()));
    market.load().await.unwrap();
    let state = optics_api::AppState::new(Arc::new(ManualClock::new(at(20, 15))) as Arc<dyn Clock>)
        .with_market_data(market);
    let app = optics_api::router(state);
    let uri = "/api/mcp/data/chain/SPY";

    let plain = get(&app, uri, &[]).await;
    assert_eq!(plain.status, 200);
    assert!(plain.body.len() >= optics_api::response_cache::MIN_GZIP_BYTES);
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(plain.header("vary"), Some("accept-encoding"));

    // The first gzip request (the answer is held already) and a later one (the held encoding).
    for _ in 0..2 {
        let encoded = get(&app, uri, &[("accept-encoding", "br;q=1.0, gzip;q=0.8")]).await;
        assert_eq!(encoded.status, 200);
        assert_eq!(encoded.header("content-encoding"), Some("gzip"));
        assert_eq!(encoded.header("vary"), Some("accept-encoding"));
        assert_eq!(
            encoded.header("content-length"),
            Some(encoded.body.len().to_string().as_str())
        );
        assert!(
            encoded.body.len() * 3 < plain.body.len() * 2,
            "JSON shrinks: {} of {}",
            encoded.body.len(),
            plain.body.len()
        );
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(encoded.body.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, plain.body, "the same answer, byte for byte");
        // The gate's headers are still there.
        assert_eq!(encoded.header("content-type"), plain.header("content-type"));
    }

    // Refused explicitly: identity.
    let refused = get(&app, uri, &[("accept-encoding", "gzip;q=0, identity")]).await;
    assert_eq!(refused.header("content-encoding"), None);
    assert_eq!(refused.body, plain.body);

    // Small answers are never encoded.
    let small = get(
        &app,
        "/api/mcp/data/expirations/SPY",
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(small.status, 200, "{}", small.text());
    assert!(small.body.len() < optics_api::response_cache::MIN_GZIP_BYTES);
    assert_eq!(small.header("content-encoding"), None);
}

/// `rows` of the synthetic SPY chain (weekly expirations from 2026-11-20) as priced at `as_of`
/// on trade date `trade_date`.
#[tokio::test]
async fn after_an_early_close_the_nearest_expiration_is_the_next_one_with_time_left() {
    // Friday 2026-11-27 closes at 13:00 New York (18:00 UTC).
    let (friday, weekly) = (day(27), NaiveDate::from_ymd_opt(2026, 12, 4).unwrap());
    let before = Utc.with_ymd_and_hms(2026, 11, 27, 17, 30, 0).unwrap();
    let after = Utc.with_ymd_and_hms(2026, 11, 27, 19, 0, 0).unwrap();

    // Half an hour before the close the day's expiration has time left and is the nearest.
    let early = synthetic_rows(friday, before, 100.0, 4, 1_000);
    let row = early.iter().find(|r| r.expiration == friday).unwrap();
    let half_hour = 1_800.0 / (365.0 * 86_400.0);
    assert!(
        (row.years_to_expiry - half_hour).abs() < 1e-12,
        "{}",
        row.years_to_expiry
    );

    // An hour after it, the same expiration has expired: no IV, and the defaults move on.
    let late = synthetic_rows(friday, after, 100.0, 4, 1_000);
    let row = late.iter().find(|r| r.expiration == friday).unwrap();
    assert!(row.years_to_expiry < 0.0);
    assert_eq!(row.call.iv, None);
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_chain(&store, &late).await;
    publish_reference(&store, &companies(), friday).await;
    let market = Arc::new(StoreMarketData::new(store.clone()));
    market.load().await.unwrap();
    let spy = Ticker::parse("SPY").unwrap();
    assert_eq!(
        market.chain(&spy).unwrap().open_expirations(),
        [weekly, NaiveDate::from_ymd_opt(2026, 12, 11).unwrap()]
    );
    let clock = Arc::new(ManualClock::new(after));
    let state = optics_api::AppState::new(clock as Arc<dyn Clock>).with_market_data(market.clone());
    let app = optics_api::router(state);
    let expirations = ok_json(&app, "/api/mcp/data/expirations/SPY").await;
    assert_eq!(expirations["data"]["expirations"][0], "2026-12-04");
    assert_eq!(expirations["data"]["count"], 2);
    let chain = ok_json(&app, "/api/mcp/data/chain/SPY").await;
    assert_eq!(chain["data"]["expirations"][0], "2026-12-04", "{chain}");
    // Asked for by date, the expired one is still served.
    let asked = ok_json(&app, "/api/mcp/data/chain/SPY?expiration=2026-11-27").await;
    assert_eq!(asked["data"]["expirations"][0], "2026-11-27");
}

/// Publishes the `vol_daily` rows of SPY and QQQ for `date`, SPY's close `close`.
/// Underlyings whose whole `vol_daily` series the reader holds (`api_vol_history_memo`).
fn vol_series_held(market: &StoreMarketData) -> u64 {
    let mut held = Vec::new();
    optics_schemas::memory::MemoryHolder::held_memory(market, &mut held);
    held.iter()
        .find(|h| h.holder == "api_vol_history_memo")
        .unwrap()
        .items
}

async fn publish_vol_daily(store: &SnapshotStore, date: NaiveDate, close: f64) -> SnapshotEvent {
    let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
    let mut spy = optics_schemas::VolDailyRow::new("SPY", date, as_of, close);
    spy.iv30d_pct = Some(close / 4.0);
    let rows = vec![
        optics_schemas::VolDailyRow::new("QQQ", date, as_of, 500.0),
        spy,
    ];
    let key = SnapshotKey::new("vol_daily", date, MARKET_WIDE);
    store
        .publish(
            &key,
            &optics_schemas::VolDailyRow::to_batch(&rows).unwrap(),
            &[],
            as_of,
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn the_vol_daily_series_is_read_once_and_again_after_a_vol_daily_publication() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    for (d, close) in [(17, 100.0), (18, 101.0), (19, 102.0)] {
        publish_vol_daily(&store, day(d), close).await;
    }
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let spy = Ticker::parse("SPY").unwrap();
    let closes =
        |series: &optics_api::VolSeries| -> Vec<f64> { series.iter().map(|r| r.close).collect() };
    let first = market.vol_history(&spy).await.unwrap();
    assert_eq!(closes(&first), [100.0, 101.0, 102.0]);
    assert!(first.iter().all(|r| r.underlying == "SPY"));
    // Held: the same series, not read again.
    assert!(Arc::ptr_eq(
        &first,
        &market.vol_history(&spy).await.unwrap()
    ));

    // A new session and a restated one: seen once their events arrive.
    let new_session = publish_vol_daily(&store, day(20), 103.0).await;
    let restated = publish_vol_daily(&store, day(18), 111.0).await;
    assert!(Arc::ptr_eq(
        &first,
        &market.vol_history(&spy).await.unwrap()
    ));
    market.apply(&new_session).await.unwrap();
    market.apply(&restated).await.unwrap();
    let second = market.vol_history(&spy).await.unwrap();
    assert_eq!(closes(&second), [100.0, 111.0, 102.0, 103.0]);

    // A server without events finds a newer newest session when it polls.
    publish_vol_daily(&store, day(23), 104.0).await;
    market.load().await.unwrap();
    let third = market.vol_history(&spy).await.unwrap();
    assert_eq!(closes(&third).last(), Some(&104.0));
    assert_eq!(vol_series_held(&market), 1);
}

#[tokio::test]
async fn cores_histories_of_many_tickers_come_from_one_scan_of_the_sessions() {
    let counted = optics_tests::faulty_store::FaultyStore::new();
    let store = SnapshotStore::new(counted.clone(), Path::from("snapshots"));
    for (d, close) in [(17, 100.0), (18, 101.0), (19, 102.0), (20, 103.0)] {
        publish_vol_daily(&store, day(d), close).await;
    }
    // A restated session: only its newest version counts.
    publish_vol_daily(&store, day(18), 111.0).await;
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let tickers: Vec<Ticker> = ["SPY", "QQQ", "IWM"]
        .iter()
        .map(|t| Ticker::parse(t).unwrap())
        .collect();
    let before = counted.listings();
    // A row computed on the 19th reads nothing of the 20th.
    let histories = market.cores_histories(&tickers, day(19)).await.unwrap();
    assert_eq!(counted.listings() - before, 1, "one listing of the dataset");
    let iv30 = |history: &optics_compute::cores::CoresHistory| -> Vec<f64> {
        history
            .values(optics_compute::cores::StoredSeries::Iv30d, day(30), None)
            .collect()
    };
    assert_eq!(iv30(&histories[0]), [25.0, 27.75, 25.5]);
    assert!(!histories[1].is_empty(), "QQQ has rows");
    assert!(iv30(&histories[1]).is_empty(), "QQQ stores no IV");
    assert!(histories[2].is_empty(), "IWM has no rows");
    // What a universe build is told to key its held histories on.
    assert!(market.vol_generation().is_some());
    // A universe the series memo holds is read into it: the routes of one ticker that follow
    // answer from memory.
    let before = counted.listings();
    let spy = market.vol_history(&tickers[0]).await.unwrap();
    assert_eq!(spy.len(), 4);
    assert_eq!(counted.listings() - before, 0);
}

/// A universe larger than the series memo: every history from one pass over the sessions'
/// files, nothing held in the memo.
#[tokio::test]
async fn cores_histories_of_a_large_universe_come_from_one_pass() {
    let counted = optics_tests::faulty_store::FaultyStore::new();
    let store = SnapshotStore::new(counted.clone(), Path::from("snapshots"));
    let symbols: Vec<String> = (0..600).map(|i| format!("S{i:03}")).collect();
    let publish = |date: NaiveDate, level: f64| {
        let store = store.clone();
        let symbols = symbols.clone();
        async move {
            let as_of = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
            let rows: Vec<optics_schemas::VolDailyRow> = symbols
                .iter()
                .enumerate()
                .map(|(i, symbol)| {
                    let mut row = optics_schemas::VolDailyRow::new(symbol, date, as_of, 100.0);
                    row.iv30d_pct = Some(level + i as f64);
                    row
                })
                .collect();
            store
                .publish(
                    &SnapshotKey::new("vol_daily", date, MARKET_WIDE),
                    &optics_schemas::VolDailyRow::to_batch(&rows).unwrap(),
                    &[],
                    as_of,
                )
                .await
                .unwrap();
        }
    };
    publish(day(18), 10.0).await;
    publish(day(19), 20.0).await;
    publish(day(19), 30.0).await; // restated: the newest version counts
    publish(day(20), 40.0).await;
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let mut tickers: Vec<Ticker> = symbols.iter().map(|s| Ticker::parse(s).unwrap()).collect();
    tickers.push(Ticker::parse("NONE").unwrap());
    let before = counted.listings();
    let histories = market.cores_histories(&tickers, day(19)).await.unwrap();
    assert_eq!(counted.listings() - before, 1, "one listing of the dataset");
    let iv30 = |i: usize| -> Vec<f64> {
        histories[i]
            .values(optics_compute::cores::StoredSeries::Iv30d, day(19), None)
            .collect()
    };
    assert_eq!(iv30(0), [10.0, 30.0]);
    assert_eq!(iv30(599), [609.0, 629.0]);
    assert!(histories[600].is_empty(), "a ticker without rows");
    assert_eq!(vol_series_held(&market), 0, "no full series held");
}

/// A `vol_daily` publication is a change of what the reader serves: the binary's refresh task,
/// which rebuilds the universe table only when the reader's generation moved, rebuilds it
/// (after the close nothing else moves, so the screens would otherwise keep the day before).
#[tokio::test]
async fn a_vol_daily_publication_makes_the_refresh_task_rebuild_the_universe_table() {
    use optics_api::market::UniverseCache;
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_reference(&store, &companies(), day(20)).await;
    publish_vol_daily(&store, day(19), 100.0).await;
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let cache = UniverseCache::default();
    let now = at(20, 22);
    assert!(cache.refresh(&market, now).await.unwrap(), "first build");
    assert!(!cache.refresh(&market, now).await.unwrap(), "nothing moved");
    let closed = publish_vol_daily(&store, day(20), 104.0).await;
    market.apply(&closed).await.unwrap();
    assert!(
        cache.refresh(&market, now).await.unwrap(),
        "the session closed"
    );
    let table = cache.table(&market, now).await.unwrap();
    let spy = table.rows.iter().find(|r| r.ticker == "SPY").unwrap();
    // No live chain: the 30-day IV is the 20th's stored one (close / 4 in the fixture).
    assert_eq!(spy.cores.get("iv30d"), Some(26.0));
}

/// The universe table keeps each row's cut `vol_daily` history: a rebuild after a chain
/// swap reads no `vol_daily` file, and a new session's publication makes the next build read
/// them again.
#[tokio::test]
async fn a_universe_rebuild_reads_the_vol_daily_sessions_only_when_they_change() {
    use optics_api::market::UniverseTable;
    let counted = optics_tests::faulty_store::FaultyStore::new();
    let store = SnapshotStore::new(counted.clone(), Path::from("snapshots"));
    publish_reference(&store, &companies(), day(20)).await;
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    for (d, close) in [(17, 100.0), (18, 101.0), (19, 102.0)] {
        publish_vol_daily(&store, day(d), close).await;
    }
    let market = StoreMarketData::new(store.clone());
    market.load().await.unwrap();
    let now = at(20, 16);
    let listings = || counted.listings();

    let before = listings();
    let first = UniverseTable::build(&market, now, None).await.unwrap();
    assert_eq!(
        listings() - before,
        1,
        "the first build lists vol_daily once"
    );
    // The live 30-day IV against the stored one of the 19th.
    let change_from_stored = |table: &UniverseTable, stored: f64| {
        let spy = table.rows.iter().find(|r| r.ticker == "SPY").unwrap();
        let live = spy.cores.get("iv30d").unwrap();
        let change = spy.cores.get("iv30dChng1d").unwrap();
        assert!(
            (change - (live - stored)).abs() < 1e-9,
            "{change} {live} {stored}"
        );
    };
    change_from_stored(&first, 25.5);

    let moved = publish_chain(
        &store,
        &chain_rows(day(20), at(20, 15) + chrono::TimeDelta::minutes(5), 102.0),
    )
    .await;
    market.apply(&moved).await.unwrap();
    let before = listings();
    let second = UniverseTable::build(&market, now, Some(&first))
        .await
        .unwrap();
    assert_eq!(
        listings() - before,
        0,
        "a chain swap reads no vol_daily file"
    );
    assert_eq!(second.rows.len(), first.rows.len());
    change_from_stored(&second, 25.5);

    // The 19th restated (as a replay does): the next build reads the sessions again.
    let restated = publish_vol_daily(&store, day(19), 140.0).await;
    market.apply(&restated).await.unwrap();
    let before = listings();
    let third = UniverseTable::build(&market, now, Some(&second))
        .await
        .unwrap();
    assert_eq!(listings() - before, 1, "a restated session is read");
    change_from_stored(&third, 35.0);
}

#[tokio::test]
async fn a_snapshot_that_does_not_decode_is_skipped_not_fatal() {
    // The newest SPY chain is corrupt (the previous one is served); a second underlying whose
    // only chain is corrupt is skipped; the start succeeds and later partitions still load.
    let objects = Arc::new(InMemory::new());
    let store = SnapshotStore::new(objects.clone(), Path::from("snapshots"));
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    let newest = publish_chain(&store, &chain_rows(day(20), at(20, 16), 102.0)).await;
    use object_store::ObjectStoreExt;
    objects
        .put(
            &Path::from(newest.path.as_str()),
            b"cut short".to_vec().into(),
        )
        .await
        .unwrap();
    let broken = SnapshotKey::new("chain", day(20), "AAA");
    let bad = store
        .publish(
            &broken,
            &ChainRow::to_batch(&chain_rows(day(20), at(20, 15), 50.0)).unwrap(),
            &[],
            at(20, 15),
        )
        .await
        .unwrap();
    objects
        .put(
            &Path::from(bad.path.as_str()),
            b"not parquet".to_vec().into(),
        )
        .await
        .unwrap();
    publish_reference(&store, &companies(), day(20)).await;

    let market = StoreMarketData::new(store.clone());
    market
        .load()
        .await
        .expect("one bad snapshot does not stop the start");
    let spy = Ticker::parse("SPY").unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 101.0);
    assert!(market.chain(&Ticker::parse("AAA").unwrap()).is_none());
    assert!(!market.coverage().companies.is_empty());
}

#[tokio::test]
async fn a_refresh_lists_from_the_newest_trade_date_and_still_finds_what_is_new() {
    let counted = optics_tests::faulty_store::FaultyStore::new();
    let store = SnapshotStore::new(counted.clone(), Path::from("snapshots"));
    for d in 1..=20 {
        publish_chain(&store, &chain_rows(day(d), at(d, 21), 100.0 + f64::from(d))).await;
    }
    let market = StoreMarketData::new(store.clone());
    let before = counted.listings();
    assert_eq!(market.load().await.unwrap(), 1);
    let load_listings = counted.listings() - before;
    let spy = Ticker::parse("SPY").unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 120.0);

    // A newer version of the newest session: found, without listing the 19 older dates.
    publish_chain(&store, &chain_rows(day(20), at(20, 22), 130.0)).await;
    let before = counted.listings();
    assert_eq!(market.refresh().await.unwrap(), 1);
    let refresh_listings = counted.listings() - before;
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 130.0);
    assert!(
        refresh_listings + 19 <= load_listings,
        "a refresh listed {refresh_listings} prefixes, a load {load_listings}"
    );

    // A new session: found too, and nothing newer is read twice.
    publish_chain(&store, &chain_rows(day(21), at(21, 15), 131.0)).await;
    assert_eq!(market.refresh().await.unwrap(), 1);
    assert_eq!(market.chain(&spy).unwrap().trade_date, day(21));
    assert_eq!(market.refresh().await.unwrap(), 0);

    // An announced version is read by its name, without a listing.
    let event = publish_chain(&store, &chain_rows(day(21), at(21, 16), 132.0)).await;
    let before = counted.listings();
    market.apply(&event).await.unwrap();
    assert_eq!(counted.listings(), before);
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 132.0);
    // An announced version the store does not hold (pruned since): the newest stored one is
    // read instead.
    let gone = SnapshotEvent {
        version: event.version + 5,
        ..event
    };
    publish_chain(&store, &chain_rows(day(21), at(21, 17), 133.0)).await;
    market.apply(&gone).await.unwrap();
    assert_eq!(market.chain(&spy).unwrap().stock_price(), 133.0);
}

#[tokio::test]
async fn an_unreachable_store_answers_history_with_424_and_recovers_by_itself() {
    let reachable = optics_tests::faulty_store::FaultyStore::new();
    let store = SnapshotStore::new(reachable.clone(), Path::from("snapshots"));
    let rows = chain_rows(day(19), at(19, 21), 100.0);
    publish_chain(&store, &rows).await;
    publish_chain(&store, &chain_rows(day(20), at(20, 15), 101.0)).await;
    publish_reference(&store, &companies(), day(20)).await;
    let market = Arc::new(StoreMarketData::new(store.clone()));
    market.load().await.unwrap();
    let clock = Arc::new(ManualClock::new(at(20, 15)));
    let state = optics_api::AppState::new(clock as Arc<dyn Clock>).with_market_data(market.clone());
    let app = optics_api::router(state);
    let mut expirations: Vec<NaiveDate> = rows.iter().map(|r| r.expiration).collect();
    expirations.sort_unstable();
    expirations.dedup();
    let at_time = |e: NaiveDate| {
        format!("/api/mcp/data/chain-at-time/SPY?expiration={e}&trade_date=2026-11-19")
    };
    ok_json(&app, &at_time(expirations[0])).await;

    reachable.set_unreachable(true);
    let refused = get(&app, &at_time(expirations[1]), &[]).await;
    assert_eq!(refused.status, 424, "{}", refused.text());
    let body = refused.json();
    assert_eq!(body["success"], false);
    assert_eq!(body["upstream"], true, "{body}");
    assert!(
        !body["error"].as_str().unwrap().contains("snapshots/"),
        "{body}"
    );
    // Live answers come from the snapshots held in memory.
    assert_eq!(
        ok_json(&app, "/api/mcp/data/chain/SPY").await["data"]["stock_price"],
        101.0
    );
    // A replica's refresh fails (and /health reports it) without dropping what it holds.
    assert!(market.load().await.is_err());
    assert_eq!(
        ok_json(&app, "/api/mcp/data/chain/SPY").await["data"]["stock_price"],
        101.0
    );

    reachable.set_unreachable(false);
    ok_json(&app, &at_time(expirations[1])).await;
    market.load().await.unwrap();
}
