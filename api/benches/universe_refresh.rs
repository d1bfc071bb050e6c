//! The screens' universe table refreshed over a real store at full scale: `n` synthetic stocks
//! (`OPTICS_BENCH_UNIVERSE`, default 20,000) with `sessions` market-wide `vol_daily`
//! partitions (`OPTICS_BENCH_SESSIONS`, default 756: the three years `optics run --universe
//! 20000` seeds) in a local directory, read through the store reader's `vol_daily` path
//! ([`ChainHistory`]) as `optics serve` reads it.
//!
//! Prints, one build each, timed on the machine's clock:
//! - the **first build** after a start: every underlying's cut history read in one pass over
//!   the newest sessions, then every row computed;
//! - a **rebuild after every row's inputs moved** (what a cycle that moved every chain costs)
//!   on the same day and stored series: no file read, every row computed again;
//! - a **rebuild after a session closed** (the stored series changed): the histories read
//!   again, every row computed;
//! - the table's held memory (`api_universe_table`) and the process's resident memory;
//! - the peer, measured in the same run: the per-underlying read the table made before it kept
//!   cut histories (one listing and one scan of every session filtered on the ticker, for each
//!   underlying beyond the 512 the series memo holds), median of 20 underlyings, and what that
//!   comes to for the whole universe.
//!
//! Figures print; nothing asserts on time. The directory is removed at the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{NaiveDate, TimeZone, Utc};
use optics_api::market::{
    ChainHistory, ChainView, Coverage, ExposureView, FlowView, UniverseCache,
};
use optics_api::{ApiError, MarketDataReader, ReadFuture, Ticker, VolSeries};
use optics_compute::cores::CoresHistory;
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::memory::{HeldMemory, MemoryHolder};
use optics_schemas::{ChainRow, VolDailyRow};

#[path = "support/universe.rs"]
mod universe;
use universe::UniverseMarket;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The synthetic universe's companies and bars, its `vol_daily` read from the store, and
/// generations a build can be told moved.
struct StoreUniverse {
    coverage: std::sync::RwLock<Arc<Coverage>>,
    history: ChainHistory,
    generation: AtomicU64,
    vol_generation: AtomicU64,
}

impl std::fmt::Debug for StoreUniverse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreUniverse")
    }
}

impl StoreUniverse {
    fn coverage_now(&self) -> Arc<Coverage> {
        Arc::clone(&self.coverage.read().expect("coverage"))
    }

    /// Every row's inputs move: a new coverage allocation, a new generation.
    fn move_every_row(&self) {
        let copy = Arc::new(Coverage::clone(&self.coverage_now()));
        *self.coverage.write().expect("coverage") = copy;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

impl MarketDataReader for StoreUniverse {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.coverage_now().get(ticker.as_str()).is_some()
    }

    fn chain(&self, _: &Ticker) -> Option<Arc<ChainView>> {
        None
    }

    fn exposures(&self, _: &Ticker) -> Option<Arc<ExposureView>> {
        None
    }

    fn flow(&self, _: &Ticker) -> Option<Arc<FlowView>> {
        None
    }

    fn coverage(&self) -> Arc<Coverage> {
        self.coverage_now()
    }

    fn generation(&self) -> Option<u64> {
        Some(self.generation.load(Ordering::Acquire))
    }

    fn vol_generation(&self) -> Option<u64> {
        Some(self.vol_generation.load(Ordering::Acquire))
    }

    fn chain_at_time<'a>(
        &'a self,
        _: &'a Ticker,
        _: NaiveDate,
        _: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }

    fn vol_history<'a>(
        &'a self,
        ticker: &'a Ticker,
    ) -> ReadFuture<'a, Result<VolSeries, ApiError>> {
        Box::pin(async move {
            let generation = self.vol_generation.load(Ordering::Acquire);
            Ok(self.history.vol_series(ticker.as_str(), generation).await?)
        })
    }

    fn cores_histories<'a>(
        &'a self,
        tickers: &'a [Ticker],
        today: NaiveDate,
    ) -> ReadFuture<'a, Result<Vec<CoresHistory>, ApiError>> {
        Box::pin(async move {
            let generation = self.vol_generation.load(Ordering::Acquire);
            Ok(self
                .history
                .cores_histories(tickers, today, generation)
                .await?)
        })
    }
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
/// underlying's row in each.
async fn write_sessions(store: &SnapshotStore, market: &UniverseMarket) {
    let symbols: Vec<(String, usize)> = market
        .coverage
        .companies
        .iter()
        .filter_map(|c| {
            let ticker = Ticker::parse(&c.symbol).ok()?;
            Some((c.symbol.clone(), market.variant(&ticker)?))
        })
        .collect();
    let sessions = market.histories[0].len();
    for i in 0..sessions {
        let rows: Vec<VolDailyRow> = symbols
            .iter()
            .map(|(symbol, variant)| {
                let mut row = market.histories[*variant][i].clone();
                row.underlying.clone_from(symbol);
                row
            })
            .collect();
        let key = SnapshotKey::new("vol_daily", rows[0].trade_date, MARKET_WIDE);
        let batch = VolDailyRow::to_batch(&rows).expect("batch");
        store
            .publish(&key, &batch, &[], rows[0].as_of)
            .await
            .expect("publish");
    }
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
        let market = UniverseMarket::new(n, sessions);
        let started = Instant::now();
        write_sessions(&store, &market).await;
        let bytes = dir_bytes(&dir);
        println!(
            "wrote {sessions} market-wide vol_daily sessions of {n} underlyings: {:.1} MB in \
             {:.1} s",
            bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
        let reader = StoreUniverse {
            coverage: std::sync::RwLock::new(Arc::clone(&market.coverage)),
            history: ChainHistory::new(store.clone()),
            generation: AtomicU64::new(0),
            vol_generation: AtomicU64::new(0),
        };
        drop(market);
        let now = Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        let cache = UniverseCache::default();
        let resident_before = resident_mb();
        let timed = |label: &'static str, elapsed: Duration, cache: &UniverseCache| {
            let held = held(cache);
            println!(
                "{label}: {:.2} s; table {} rows, {:.1} MB held; resident {:.0} MB (+{:.0} MB \
                 since the sessions were written)",
                elapsed.as_secs_f64(),
                held.items,
                held.bytes as f64 / 1e6,
                resident_mb(),
                resident_mb() - resident_before
            );
        };

        let started = Instant::now();
        assert!(cache.refresh(&reader, now).await.expect("first build"));
        timed("first build (histories read)", started.elapsed(), &cache);

        reader.move_every_row();
        let started = Instant::now();
        assert!(cache.refresh(&reader, now).await.expect("rebuild"));
        timed(
            "rebuild, every row moved, same series (no file read)",
            started.elapsed(),
            &cache,
        );

        reader.move_every_row();
        reader.vol_generation.fetch_add(1, Ordering::AcqRel);
        let started = Instant::now();
        assert!(cache.refresh(&reader, now).await.expect("rebuild"));
        timed(
            "rebuild after a session closed (histories read again)",
            started.elapsed(),
            &cache,
        );

        // The peer: the per-underlying series read a build made for each underlying beyond
        // the series memo's 512, before the table kept cut histories.
        let mut times = Vec::new();
        for i in 0..20 {
            let ticker = format!("U{:05}", 1 + i * (n / 20).max(1));
            let started = Instant::now();
            let series = reader
                .history
                .vol_series(&ticker, 1_000 + i as u64)
                .await
                .expect("series");
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
