//! `GET /vix` through the real router and the store-backed reader: the served index against
//! the white-paper formula written out here (term choice and minutes worked out by hand), the
//! previous close from a stored closing chain read through DataFusion, the session's
//! open/high/low from the tape the reader records as chains arrive, the close once the session
//! is over, and the refusals.

mod chain_support;
mod common;

use std::sync::Arc;

use axum::http::StatusCode;
use chain_support::{priced_rows, spx_quoting};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::get;
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_api::market::{ChainView, Coverage, StoreMarketData, VixPrint, VixTape};
use optics_api::{AppState, MarketDataReader};
use optics_compute::time::ManualClock;
use optics_pipeline::store::{SnapshotKey, SnapshotStore};
use optics_pipeline::worker::PublishedSnapshots;
use optics_schemas::{ChainRow, ChainSide, SettlementStyle, SnapshotEvent};
use serde_json::Value;

const URI: &str = "/api/mcp/data/vix";

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// The live session: Monday 2026-11-16.
fn session() -> NaiveDate {
    date(2026, 11, 16)
}

/// The session before it: Friday 2026-11-13.
fn previous() -> NaiveDate {
    date(2026, 11, 13)
}

/// `hour`:00 New York on the live session (EST: UTC − 5).
fn ny(hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 16, hour + 5, 0, 0).unwrap()
}

/// SPX's series on both sessions: (expiration, settlement, forward, vol multiplier). Weeklies
/// 11-20, 11-27 (a 13:00 early close), 12-11; a Thursday daily 12-17; the December standard
/// 12-18 AM beside the SPXW 12-18 PM (priced at a different vol, so using it would show); the
/// January standard.
fn series() -> Vec<(NaiveDate, SettlementStyle, f64, f64)> {
    use SettlementStyle::{Am, Pm};
    vec![
        (date(2026, 11, 20), Pm, 6012.0, 0.95),
        (date(2026, 11, 27), Pm, 6016.0, 1.0),
        (date(2026, 12, 11), Pm, 6024.0, 1.05),
        (date(2026, 12, 17), Pm, 6027.0, 1.5),
        (date(2026, 12, 18), Am, 6028.0, 1.1),
        (date(2026, 12, 18), Pm, 6028.5, 1.6),
        (date(2027, 1, 15), Am, 6040.0, 1.15),
    ]
}

/// The SPX chain of `trade_date` priced at `as_of` with ATM vols `level` × each series'
/// multiplier.
fn chain(trade_date: NaiveDate, as_of: DateTime<Utc>, level: f64) -> Vec<ChainRow> {
    let quote = spx_quoting();
    series()
        .into_iter()
        .flat_map(|(expiration, settlement, forward, multiplier)| {
            let mut rows = priced_rows(
                "SPX",
                &quote,
                trade_date,
                as_of,
                expiration,
                forward,
                level * multiplier,
            );
            for row in &mut rows {
                row.settlement = settlement;
                for side in [&mut row.call, &mut row.put] {
                    side.oi_date = Some(trade_date);
                    side.quote_time = Some(as_of);
                }
            }
            rows
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The white paper, written out

/// One term by the white paper's steps.
#[derive(Debug, Clone, Copy)]
struct Term {
    minutes: f64,
    rate: f64,
    forward: f64,
    k0: f64,
    strikes_used: usize,
    variance: f64,
}

fn bid(side: &ChainSide) -> f64 {
    side.bid.unwrap_or(0.0)
}

fn mid(side: &ChainSide) -> f64 {
    (side.bid.unwrap() + side.ask.unwrap()) / 2.0
}

/// σ² of the series (`expiration`, `settlement`) of `rows`, `minutes` from settlement.
fn term_by_hand(
    rows: &[ChainRow],
    expiration: NaiveDate,
    settlement: SettlementStyle,
    minutes: f64,
) -> Term {
    let mut rows: Vec<&ChainRow> = rows
        .iter()
        .filter(|r| r.expiration == expiration && r.settlement == settlement)
        .collect();
    rows.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let t = minutes / 525_600.0;
    let r = rows[0].rate;
    let growth = (r * t).exp();
    // Step 1: the forward at the strike where |C − P| is smallest (both sides bid).
    let at = rows
        .iter()
        .filter(|row| bid(&row.call) > 0.0 && bid(&row.put) > 0.0)
        .min_by(|a, b| {
            let da = (mid(&a.call) - mid(&a.put)).abs();
            let db = (mid(&b.call) - mid(&b.put)).abs();
            da.total_cmp(&db)
        })
        .unwrap();
    let forward = at.strike + growth * (mid(&at.call) - mid(&at.put));
    let i0 = rows.iter().rposition(|row| row.strike <= forward).unwrap();
    let k0 = rows[i0].strike;
    // Step 2: puts below K0 walking down, calls above walking up, two zero bids in a row end
    // a side; K0 takes the average of its call and put.
    let mut puts = Vec::new();
    let mut zeros = 0;
    for row in rows[..i0].iter().rev() {
        if bid(&row.put) > 0.0 {
            zeros = 0;
            puts.push((row.strike, mid(&row.put)));
        } else {
            zeros += 1;
            if zeros == 2 {
                break;
            }
        }
    }
    puts.reverse();
    let mut strip = puts;
    strip.push((k0, (mid(&rows[i0].call) + mid(&rows[i0].put)) / 2.0));
    zeros = 0;
    for row in &rows[i0 + 1..] {
        if bid(&row.call) > 0.0 {
            zeros = 0;
            strip.push((row.strike, mid(&row.call)));
        } else {
            zeros += 1;
            if zeros == 2 {
                break;
            }
        }
    }
    // ΔK over the strikes kept; σ².
    let n = strip.len();
    let mut sum = 0.0;
    for j in 0..n {
        let dk = if j == 0 {
            strip[1].0 - strip[0].0
        } else if j == n - 1 {
            strip[j].0 - strip[j - 1].0
        } else {
            (strip[j + 1].0 - strip[j - 1].0) / 2.0
        };
        sum += dk / (strip[j].0 * strip[j].0) * growth * strip[j].1;
    }
    let variance = 2.0 / t * sum - (forward / k0 - 1.0).powi(2) / t;
    Term {
        minutes,
        rate: r,
        forward,
        k0,
        strikes_used: n,
        variance,
    }
}

/// Step 3: the 30-day interpolation in minutes.
fn vix_by_hand(near: Term, next: Term) -> f64 {
    let (n1, n2, n30, n365) = (near.minutes, next.minutes, 43_200.0, 525_600.0);
    let (t1, t2) = (n1 / n365, n2 / n365);
    let variance = (t1 * near.variance * (n2 - n30) / (n2 - n1)
        + t2 * next.variance * (n30 - n1) / (n2 - n1))
        * n365
        / n30;
    100.0 * variance.sqrt()
}

/// The live session's terms at `hour`:00 New York: the 12-11 PM weekly (16:00) and the 12-18
/// AM standard (09:30), with the minutes counted by hand: to midnight, whole days between,
/// after midnight on the settlement day. From 2026-11-16, 12-11 is 24 whole days after
/// midnight and 12-18 is 31; the window (23–37 days) holds both (25.x and 31.x days) and no
/// other Friday-cycle series (11-27 is 11 days out, 12-17 is a Thursday daily, 2027-01-15 is 60
/// days out); the 12-18 PM series gives way to the AM standard.
fn live_vix(rows: &[ChainRow], hour: u32) -> (Term, Term, f64) {
    let to_midnight = f64::from(24 - hour) * 60.0;
    let near = term_by_hand(
        rows,
        date(2026, 12, 11),
        SettlementStyle::Pm,
        to_midnight + 24.0 * 1440.0 + 960.0,
    );
    let next = term_by_hand(
        rows,
        date(2026, 12, 18),
        SettlementStyle::Am,
        to_midnight + 31.0 * 1440.0 + 570.0,
    );
    (near, next, vix_by_hand(near, next))
}

/// The previous session's close (16:00 on Friday 2026-11-13): 480 minutes to midnight, then
/// 27 whole days to 12-11 and 34 to 12-18.
fn previous_vix(rows: &[ChainRow]) -> f64 {
    let near = term_by_hand(
        rows,
        date(2026, 12, 11),
        SettlementStyle::Pm,
        480.0 + 27.0 * 1440.0 + 960.0,
    );
    let next = term_by_hand(
        rows,
        date(2026, 12, 18),
        SettlementStyle::Am,
        480.0 + 34.0 * 1440.0 + 570.0,
    );
    vix_by_hand(near, next)
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn close(actual: &Value, expected: f64, what: &str) {
    let actual = actual
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {actual}"));
    assert!(
        (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{what}: served {actual}, by hand {expected}"
    );
}

async fn publish(store: &SnapshotStore, rows: &[ChainRow]) -> SnapshotEvent {
    let key = SnapshotKey::new("chain", rows[0].trade_date, "SPX");
    store
        .publish(&key, &ChainRow::to_batch(rows).unwrap(), &[], rows[0].as_of)
        .await
        .unwrap()
}

fn app(reader: Arc<dyn MarketDataReader>, clock: Arc<ManualClock>) -> axum::Router {
    optics_api::router(AppState::new(clock).with_market_data(reader))
}

// ---------------------------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn the_served_vix_is_the_white_paper_figure_with_the_days_range_and_previous_close() {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    let prev_rows = chain(
        previous(),
        Utc.with_ymd_and_hms(2026, 11, 13, 21, 0, 0).unwrap(),
        0.16,
    );
    publish(&store, &prev_rows).await;
    // The session's chains: 10:00 (the first the reader sees), 11:00 (the high), 12:00 (the
    // low), 13:00 (now).
    let levels = [(10, 0.17), (11, 0.21), (12, 0.13), (13, 0.16)];
    let chains: Vec<Vec<ChainRow>> = levels
        .iter()
        .map(|&(hour, level)| chain(session(), ny(hour), level))
        .collect();
    publish(&store, &chains[0]).await;
    let market = Arc::new(StoreMarketData::new(store.clone()));
    market.load().await.unwrap();
    // 11:00 announced by its event; 12:00 handed over in process; 13:00 by its event, twice.
    let event = publish(&store, &chains[1]).await;
    market.apply(&event).await.unwrap();
    let event = publish(&store, &chains[2]).await;
    let key = SnapshotKey::new("chain", session(), "SPX");
    market.published(
        &key,
        event.version,
        &ChainRow::to_batch(&chains[2]).unwrap(),
    );
    market.apply(&event).await.unwrap();
    let event = publish(&store, &chains[3]).await;
    market.apply(&event).await.unwrap();
    market.apply(&event).await.unwrap();

    let by_hand: Vec<f64> = levels
        .iter()
        .zip(&chains)
        .map(|(&(hour, _), rows)| live_vix(rows, hour).2)
        .collect();
    assert!(by_hand[1] > by_hand[0] && by_hand[2] < by_hand[3] && by_hand[3] < by_hand[0]);
    assert!((10.0..40.0).contains(&by_hand[3]), "{by_hand:?}");

    // The tape the reader keeps.
    let tape = market.vix_session().expect("the reader records SPX prints");
    assert_eq!(tape.trade_date, session());
    assert_eq!(tape.prints, 4, "a re-announced chain adds no print");
    assert_eq!(tape.first.at, ny(10));
    assert!((tape.high.vix - by_hand[1]).abs() < 1e-9);
    assert!((tape.low.vix - by_hand[2]).abs() < 1e-9);

    let clock = Arc::new(ManualClock::new(ny(13) + chrono::TimeDelta::minutes(2)));
    let router = app(market.clone(), clock.clone());
    let d = get(&router, URI, &[]).await.data();
    let (near, next, price) = live_vix(&chains[3], 13);
    close(&d["price"], price, "price");
    close(&d["open"], by_hand[0], "open");
    close(&d["high"], by_hand[1], "high");
    close(&d["low"], by_hand[2], "low");
    assert_eq!(d["prints"], 4);
    assert_eq!(d["first_print_at"], "2026-11-16T15:00:00Z");
    let prev = previous_vix(&prev_rows);
    close(&d["prev_close"], prev, "prev_close");
    close(&d["change"], price - prev, "change");
    close(
        &d["change_pct"],
        (price - prev) / prev * 100.0,
        "change_pct",
    );
    assert_eq!(d["close"], Value::Null, "the session trades");
    assert!(d["reason"].as_str().unwrap().contains("close is null"));
    assert_eq!(d["prev_close_source"]["session"], "2026-11-13");
    assert_eq!(d["prev_close_source"]["as_of"], "2026-11-13T21:00:00Z");
    assert_eq!(d["prev_close_source"]["near_expiration"], "2026-12-11");
    assert_eq!(d["prev_close_source"]["next_expiration"], "2026-12-18");
    assert_eq!(d["data_freshness"], "LIVE");
    assert_eq!(d["symbol"], "VIX");
    assert_eq!(d["underlying"], "SPX");

    // The terms and the intermediates a quant checks the figure with.
    assert_eq!(d["term_selection"], "WINDOW_23_37");
    for (served, term, expiration, settlement, settles_at) in [
        (
            &d["near_term"],
            near,
            "2026-12-11",
            "PM",
            "2026-12-11T21:00:00Z",
        ),
        (
            &d["next_term"],
            next,
            "2026-12-18",
            "AM",
            "2026-12-18T14:30:00Z",
        ),
    ] {
        assert_eq!(served["expiration"], expiration);
        assert_eq!(served["settlement"], settlement);
        assert_eq!(served["settles_at"], settles_at);
        close(&served["minutes_to_settlement"], term.minutes, "minutes");
        close(&served["years"], term.minutes / 525_600.0, "T");
        close(&served["rate"], term.rate, "R");
        close(&served["forward"], term.forward, "F");
        close(&served["k0"], term.k0, "K0");
        close(&served["variance"], term.variance, "sigma^2");
        assert_eq!(served["strikes_used"], term.strikes_used);
    }
    let (n1, n2) = (near.minutes, next.minutes);
    close(
        &d["near_weight"],
        (n2 - 43_200.0) / (n2 - n1),
        "near weight",
    );
    close(
        &d["next_weight"],
        (43_200.0 - n1) / (n2 - n1),
        "next weight",
    );
    close(
        &d["variance_30d"],
        (price / 100.0).powi(2),
        "30-day variance",
    );

    common::reference_fields::assert_documented_fields_served("vix", &d);

    // The closing chain at 16:00, served after the close: `close` is its VIX and the tape
    // holds it.
    let closing = chain(session(), ny(16), 0.15);
    let event = publish(&store, &closing).await;
    market.apply(&event).await.unwrap();
    clock.set(ny(17));
    let d = get(&router, URI, &[]).await.data();
    let (_, _, at_close) = live_vix(&closing, 16);
    close(&d["price"], at_close, "price at the close");
    close(&d["close"], at_close, "close");
    close(&d["change"], at_close - prev, "change at the close");
    close(&d["low"], at_close.min(by_hand[2]), "low");
    assert_eq!(d["prints"], 5);
    assert_eq!(d["data_freshness"], "EOD");
    assert_eq!(d["reason"], Value::Null);
}

#[tokio::test]
async fn without_the_previous_session_prev_close_is_null_with_a_reason() {
    let mut reader = chain_support::MemoryMarket::default();
    let rows = chain(session(), ny(11), 0.18);
    reader.chains.insert(
        "SPX".to_owned(),
        Arc::new(ChainView::new(rows.clone()).unwrap()),
    );
    reader.covered.insert("SPX".to_owned());
    reader.coverage = Arc::new(Coverage::default());
    let router = app(Arc::new(reader), Arc::new(ManualClock::new(ny(11))));
    let d = get(&router, URI, &[]).await.data();
    let (_, _, price) = live_vix(&rows, 11);
    close(&d["price"], price, "price");
    // A reader without a tape: the range is the current print alone, and says so.
    close(&d["open"], price, "open");
    close(&d["high"], price, "high");
    close(&d["low"], price, "low");
    assert_eq!(d["prints"], 1);
    assert_eq!(d["first_print_at"], "2026-11-16T16:00:00Z");
    assert_eq!(d["prev_close"], Value::Null);
    assert_eq!(d["change"], Value::Null);
    assert_eq!(d["change_pct"], Value::Null);
    assert_eq!(d["prev_close_source"], Value::Null);
    let reason = d["reason"].as_str().unwrap();
    assert!(
        reason.contains("2026-11-13 session is not stored"),
        "{reason}"
    );
}

#[tokio::test]
async fn refusals_name_the_reason() {
    let clock = || Arc::new(ManualClock::new(ny(11)));
    // SPX not covered: 404.
    let router = app(Arc::new(chain_support::MemoryMarket::default()), clock());
    get(&router, URI, &[]).await.error(StatusCode::NOT_FOUND);

    // Covered, no chain yet: 424.
    let mut reader = chain_support::MemoryMarket::default();
    reader.covered.insert("SPX".to_owned());
    let router = app(Arc::new(reader), clock());
    let body = get(&router, URI, &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("No option chain for SPX")
    );

    // A chain whose expirations stop before 30 days (the chain family's SPX fixture: 11-20,
    // 11-27 and 12-18 seen from 2026-11-20): no index, 424 with the reason.
    let router = app(
        Arc::new(chain_support::MemoryMarket::spy()),
        Arc::new(ManualClock::new(chain_support::as_of())),
    );
    let body = get(&router, URI, &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("No VIX can be computed"), "{error}");
    assert!(error.contains("bracket 30 days"), "{error}");

    // A chain whose next term has no put quotes: 424 naming the term.
    let mut rows = chain(session(), ny(11), 0.18);
    for row in rows
        .iter_mut()
        .filter(|r| r.expiration == date(2026, 12, 18))
    {
        row.put = ChainSide::default();
    }
    let mut reader = chain_support::MemoryMarket::default();
    reader
        .chains
        .insert("SPX".to_owned(), Arc::new(ChainView::new(rows).unwrap()));
    reader.covered.insert("SPX".to_owned());
    let router = app(Arc::new(reader), clock());
    let body = get(&router, URI, &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("2026-12-18 AM term"), "{error}");
}

#[test]
fn the_tape_keeps_one_record_per_session() {
    let print = |hour: u32, vix: f64| VixPrint { at: ny(hour), vix };
    let tape = VixTape::default();
    assert!(tape.session().is_none());
    assert!(tape.record(session(), print(10, 18.0)));
    assert!(tape.record(session(), print(11, 21.0)));
    assert!(tape.record(session(), print(12, 16.0)));
    // The same instant again, an earlier one, a non-finite value: nothing added.
    assert!(!tape.record(session(), print(12, 30.0)));
    assert!(!tape.record(session(), print(9, 30.0)));
    assert!(!tape.record(session(), print(13, f64::NAN)));
    // A print of an older session is ignored.
    assert!(!tape.record(previous(), print(14, 40.0)));
    let s = tape.session().unwrap();
    assert_eq!(
        (s.first.vix, s.high.vix, s.low.vix, s.last.vix),
        (18.0, 21.0, 16.0, 16.0)
    );
    assert_eq!((s.high.at, s.low.at, s.prints), (ny(11), ny(12), 3));
    // Including a print the record already holds changes nothing; a later one is counted.
    assert_eq!(s.including(print(12, 16.0)), s);
    assert_eq!(s.including(print(13, 15.0)).low.vix, 15.0);
    // The next session starts a new record.
    let next = date(2026, 11, 17);
    let at = Utc.with_ymd_and_hms(2026, 11, 17, 15, 0, 0).unwrap();
    assert!(tape.record(next, VixPrint { at, vix: 19.0 }));
    let s = tape.session().unwrap();
    assert_eq!((s.trade_date, s.prints, s.first.vix), (next, 1, 19.0));
}
