//! The screens' universe table refreshed over a real store at full scale: `n` synthetic stocks
//! (`OPTICS_BENCH_UNIVERSE`, default 20,000) with `sessions` market-wide `vol_daily`
//! partitions (`OPTICS_BENCH_SESSIONS`, default 756: the three years `optics run --universe
//! 20000` seeds), their companies and daily bars in a local directory, read by the store
//! reader `optics serve` runs ([`StoreMarketData`]).
//!
//! Prints, one build each, timed on the machine's clock:
//! - the **first build** after a start: every underlying's cut history read in one pass over
//!   the newest sessions, then every row computed;
//! - a **rebuild after every row's inputs moved** (a new version of the company table: what a
//!   cycle that moved every chain costs) on the same day and stored series: no file read,
//!   every row computed again;
//! - a **rebuild after a `vol_daily` publication** (the stored series changed): the histories
//!   read again, every row computed;
//! - the table's held memory (`api_universe_table`) and the process's resident memory;
//! - the peer, measured in the same run: the per-underlying read the table made before it kept
//!   cut histories (one listing and one scan of every session filtered on the ticker, for each
//!   underlying beyond the 512 the series memo holds), median of 20 underlyings, and what that
//!   comes to for the whole universe.
//!
//! Figures print; nothing asserts on time. The directory is removed at the end.

use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use chrono::{NaiveDate, TimeZone, Utc};
use optics_api::market::{StoreMarketData, UniverseCache};
use optics_api::{MarketDataReader, Ticker};
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::memory::{HeldMemory, MemoryHolder};
use optics_schemas::{Company, DailyBar, Record, SnapshotEvent, VolDailyRow};

#[path = "support/universe.rs"]
mod universe;
use universe::UniverseMarket;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Resident memory of this process, MB (Linux).
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |pages| pages * 4096.0 / 1e6)
}

fn held(cache: &UniverseCache) -> HeldMemory {
    let mut out = Vec::new();
    cache.held_memory(&mut out);
    out.pop().expect("one holder")
}

/// Bytes of the files under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => dir_bytes(&e.path()),
                _ => e.metadata().map_or(0, |m| m.len()),
            })
            .sum()
    })
}

/// Writes one market-wide `vol_daily` partition per session of `market`'s histories, every
/// underlying's row in each; returns the newest session's publication.
async fn write_sessions(store: &SnapshotStore, market: &UniverseMarket) -> SnapshotEvent {
    let symbols: Vec<(String, usize)> = market
        .coverage
        .companies
        .iter()
        .filter_map(|c| {
            let ticker = Ticker::parse(&c.symbol).ok()?;
            Some((c.symbol.clone(), market.variant(&ticker)?))
        })
        .collect();
    let mut newest = None;
    for i in 0..market.histories[0].len() {
        let rows: Vec<VolDailyRow> = symbols
            .iter()
            .map(|(symbol, variant)| {
                let mut row = market.histories[*variant][i].clone();
                row.underlying.clone_from(symbol);
                row
            })
            .collect();
        let batch = VolDailyRow::to_batch(&rows).expect("batch");
        newest = Some(publish(store, "vol_daily", rows[0].trade_date, &batch).await);
    }
    newest.expect("at least one session")
}

/// Publishes `batch` as the market-wide partition of `dataset` on `day`.
async fn publish(
    store: &SnapshotStore,
    dataset: &str,
    day: NaiveDate,
    batch: &RecordBatch,
) -> SnapshotEvent {
    let as_of = day.and_hms_opt(21, 0, 0).expect("time").and_utc();
    store
        .publish(
            &SnapshotKey::new(dataset, day, MARKET_WIDE),
            batch,
            &[],
            as_of,
        )
        .await
        .expect("publish")
}

/// A reference table of `rows`, as seeding publishes it (on the stored history's last day).
async fn publish_table<R: Record>(store: &SnapshotStore, rows: &[R]) -> SnapshotEvent {
    let day = NaiveDate::from_ymd_opt(2026, 11, 19).expect("date");
    publish(
        store,
        R::DATASET.name(),
        day,
        &R::to_batch(rows).expect("batch"),
    )
    .await
}

/// The companies and daily bars of `market`, as the reference tables the reader loads.
async fn write_reference(store: &SnapshotStore, market: &UniverseMarket) -> Vec<Company> {
    let companies: Vec<Company> = market
        .coverage
        .companies
        .iter()
        .map(|c| Company::clone(c))
        .collect();
    let bars: Vec<DailyBar> = market
        .coverage
        .bars
        .iter()
        .flat_map(|(symbol, sessions)| {
            sessions.iter().map(move |b| DailyBar {
                symbol: symbol.clone(),
                date: b.date,
                open: b.open,
                high: b.high,
                low: b.low,
                close: b.close,
                volume: b.volume,
                adj_close: b.close,
            })
        })
        .collect();
    publish_table(store, &bars).await;
    publish_table(store, &companies).await;
    companies
}

fn main() {
    let n = setting("OPTICS_BENCH_UNIVERSE", 20_000);
    let sessions = setting("OPTICS_BENCH_SESSIONS", 756).max(60);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let dir = std::env::temp_dir().join(format!(
            "optics-bench-universe-refresh-{}",
            std::process::id()
        ));
        let store = SnapshotStore::local(&dir).expect("store");
        let synthetic = UniverseMarket::new(n, sessions);
        let started = Instant::now();
        let newest_session = write_sessions(&store, &synthetic).await;
        let companies = write_reference(&store, &synthetic).await;
        drop(synthetic);
        println!(
            "wrote {sessions} market-wide vol_daily sessions of {n} underlyings and their \
             reference tables: {:.1} MB in {:.1} s",
            dir_bytes(&dir) as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
        let market = StoreMarketData::new(store.clone());
        market.load().await.expect("load");
        let now = Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        let cache = UniverseCache::default();
        let resident_before = resident_mb();
        let timed = |label: &'static str, elapsed: Duration, cache: &UniverseCache| {
            let held = held(cache);
            println!(
                "{label}: {:.2} s; table {} rows, {:.1} MB held; resident {:.0} MB (+{:.0} MB \
                 since the store was loaded)",
                elapsed.as_secs_f64(),
                held.items,
                held.bytes as f64 / 1e6,
                resident_mb(),
                resident_mb() - resident_before
            );
        };

        let started = Instant::now();
        assert!(cache.refresh(&market, now).await.expect("first build"));
        timed("first build (histories read)", started.elapsed(), &cache);

        // A new version of the company table: a new coverage, every row's inputs moved.
        let republished = publish_table(&store, &companies).await;
        market.apply(&republished).await.expect("companies");
        let started = Instant::now();
        assert!(cache.refresh(&market, now).await.expect("rebuild"));
        timed(
            "rebuild, every row moved, same series (no file read)",
            started.elapsed(),
            &cache,
        );

        market.apply(&newest_session).await.expect("vol_daily");
        let started = Instant::now();
        assert!(cache.refresh(&market, now).await.expect("rebuild"));
        timed(
            "rebuild after a vol_daily publication (histories read again)",
            started.elapsed(),
            &cache,
        );

        // The peer: the per-underlying series read a build made for each underlying beyond
        // the series memo's 512, before the table kept cut histories (this universe's build
        // holds none of them, so each read here is a whole one).
        let mut times = Vec::new();
        for i in 0..20 {
            let ticker = Ticker::parse(&format!("U{:05}", 1 + i * (n / 20).max(1))).unwrap();
            let started = Instant::now();
            let series = market.vol_history(&ticker).await.expect("series");
            times.push(started.elapsed());
            assert_eq!(series.len(), sessions, "{ticker}");
        }
        times.sort_unstable();
        let median = times[times.len() / 2];
        println!(
            "peer: one underlying's whole series read on its own (listing + scan of {sessions} \
             sessions): median {:.1} ms; for the {} underlyings beyond the memo's 512, {:.0} s \
             per rebuild",
            median.as_secs_f64() * 1e3,
            n.saturating_sub(512),
            median.as_secs_f64() * n.saturating_sub(512) as f64
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}
