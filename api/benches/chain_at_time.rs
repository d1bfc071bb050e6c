//! Chain-at-time over a year of history: the read `/chain-at-time/{ticker}` performs (the
//! Parquet reader over the end-of-day chain file of one session, the pages of one expiration),
//! and the same read planned through DataFusion, the peer, in the same run.
//!
//! The store is a local directory (the embedded default) holding 252 end-of-day SPY chain
//! snapshots, one per session, each written exactly as the compute worker writes them
//! (`ChainRow::to_batch`, the worker's sort order, `SnapshotStore::publish`). Every session
//! holds the same synthetic chain relabelled with its trade date: 30 weekly expirations × 241
//! strikes, calls and puts (14,460 quotes; more contracts than SPY's end-of-day chain), so
//! every file has the size and layout of a real one.
//!
//! Figures: the write time of the year, then p50/p90/p99 of `chain_at_time` over random
//! (session, expiration) pairs, first read and warm, the rows returned, the footers held; then
//! the DataFusion peer over the same pairs. Goal (issue 42): p50 ≤ 10 ms in the `make run`
//! build (`--profile service`). `OPTICS_BENCH_QUERIES` (default 200) sets the number of timed
//! reads. Nothing asserts on time.

use std::time::{Duration, Instant};

use chrono::{Datelike, NaiveDate, TimeZone, Utc, Weekday};
use datafusion::common::ScalarValue;
use datafusion::prelude::{ParquetReadOptions, SessionContext, col, lit};
use optics_api::market::{ChainHistory, snapshot_session_config, store_file_url};
use optics_compute::chain::{ChainMarket, build_chain};
use optics_compute::pricing::PricingModel;
use optics_pipeline::store::{SnapshotKey, SnapshotStore};
use optics_pipeline::worker::cycle::CHAIN_SORT;
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::{ChainRow, date_to_days};
use optics_tests::bench::XorShift;

const SESSIONS: usize = 252;

/// The 252 weekdays ending on Friday 2026-11-20 (holidays are irrelevant to the read).
fn sessions() -> Vec<NaiveDate> {
    let mut dates = Vec::with_capacity(SESSIONS);
    let mut day = NaiveDate::from_ymd_opt(2026, 11, 20).expect("date");
    while dates.len() < SESSIONS {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            dates.push(day);
        }
        day = day.pred_opt().expect("date");
    }
    dates.reverse();
    dates
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let queries = std::env::var("OPTICS_BENCH_QUERIES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|v| *v > 0)
        .unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let dir = std::env::temp_dir().join(format!("optics-chain-at-time-{}", std::process::id()));
    let store = SnapshotStore::local(&dir).expect("local store");

    // The synthetic chain, priced once by the chain builder.
    let quotes =
        optics_tests::fixtures::synthetic_chain("SPY", 600.0, 30, 241, 480.0, 11, usize::MAX);
    let close = Utc
        .with_ymd_and_hms(2026, 11, 20, 21, 0, 0)
        .single()
        .expect("instant");
    let market = ChainMarket {
        underlying: "SPY".to_owned(),
        trade_date: NaiveDate::from_ymd_opt(2026, 11, 20).expect("date"),
        as_of: close,
        spot: None,
        rate: 0.043,
        dividend_yield: 0.013,
        model: PricingModel::BlackScholesMerton,
    };
    let chain = build_chain(&quotes, &market).expect("synthetic chain builds");
    let expirations: Vec<NaiveDate> = {
        let mut e: Vec<NaiveDate> = chain.rows.iter().map(|r| r.expiration).collect();
        e.sort_unstable();
        e.dedup();
        e
    };
    let dates = sessions();

    let started = Instant::now();
    let mut bytes = 0u64;
    runtime.block_on(async {
        for date in &dates {
            let rows: Vec<ChainRow> = chain
                .rows
                .iter()
                .cloned()
                .map(|mut row| {
                    // The same chain relabelled to each session: the calendar fields follow.
                    row.trade_date = *date;
                    row.dte =
                        i32::try_from((row.expiration - *date).num_days()).unwrap_or(i32::MAX);
                    for side in [&mut row.call, &mut row.put] {
                        if side.oi_date.is_some() {
                            side.oi_date = date.pred_opt();
                        }
                    }
                    row
                })
                .collect();
            let batch = ChainRow::to_batch(&rows).expect("rows encode");
            let key = SnapshotKey::new(snapshot_datasets::CHAIN, *date, "SPY");
            store
                .publish(&key, &batch, CHAIN_SORT, close)
                .await
                .expect("publish");
            if let Some(file) = store.latest(&key).await.expect("listing") {
                bytes += file.bytes;
            }
        }
    });
    let written = started.elapsed();
    println!(
        "chain-at-time store: {SESSIONS} sessions × {} rows, {:.1} MB in {:.1} s",
        chain.rows.len(),
        bytes as f64 / 1e6,
        written.as_secs_f64()
    );

    let history = ChainHistory::new(store.clone());
    let mut rng = XorShift(0x5eed_2026);
    let mut pick = || {
        let date = dates[(rng.next_f64() * dates.len() as f64) as usize % dates.len()];
        let expiration =
            expirations[(rng.next_f64() * expirations.len() as f64) as usize % expirations.len()];
        (date, expiration)
    };
    // The first read pays the one-time set-up (and reads its file's footer): report it apart.
    let (date, expiration) = pick();
    let started = Instant::now();
    let first = runtime
        .block_on(history.chain_at_time("SPY", date, expiration))
        .expect("read")
        .expect("session stored");
    println!(
        "first read (footer not held): {:.2} ms, {} rows",
        ms(started.elapsed()),
        first.len()
    );

    let mut samples = Vec::with_capacity(queries);
    let mut rows = 0usize;
    for _ in 0..queries {
        let (date, expiration) = pick();
        let started = Instant::now();
        let read = runtime
            .block_on(history.chain_at_time("SPY", date, expiration))
            .expect("read")
            .expect("session stored");
        samples.push(started.elapsed());
        rows += read.len();
    }
    samples.sort_unstable();
    println!(
        "chain_at_time over {SESSIONS} sessions, {queries} random (session, expiration) reads: \
         p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, {:.0} rows per read (goal: p50 ≤ 10 ms)",
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.9)),
        ms(percentile(&samples, 0.99)),
        rows as f64 / queries as f64
    );
    let (footers, footer_bytes) = history.chain_footers_held();
    println!(
        "footers held: {footers} files, {:.1} KB each",
        footer_bytes as f64 / footers.max(1) as f64 / 1e3
    );

    // The peer: the same reads planned and run by DataFusion over the same files (what
    // chain_at_time did before it read the pages itself).
    let ctx = datafusion_context(&store);
    let mut rng = XorShift(0x5eed_2026);
    let mut peer = Vec::with_capacity(queries);
    for _ in 0..queries {
        let date = dates[(rng.next_f64() * dates.len() as f64) as usize % dates.len()];
        let expiration =
            expirations[(rng.next_f64() * expirations.len() as f64) as usize % expirations.len()];
        let started = Instant::now();
        let read = runtime.block_on(datafusion_read(&ctx, &store, date, expiration));
        peer.push(started.elapsed());
        assert!(!read.is_empty(), "the peer read rows");
    }
    peer.sort_unstable();
    println!(
        "peer, the same reads through DataFusion: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms \
         (the Parquet reader {:.1}x faster at p50)",
        ms(percentile(&peer, 0.5)),
        ms(percentile(&peer, 0.9)),
        ms(percentile(&peer, 0.99)),
        ms(percentile(&peer, 0.5)) / ms(percentile(&samples, 0.5))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const PEER_URL: &str = "optics://bench";

fn datafusion_context(store: &SnapshotStore) -> SessionContext {
    let config = snapshot_session_config().with_target_partitions(1);
    let ctx = SessionContext::new_with_config(config);
    let url = url::Url::parse(PEER_URL).expect("url");
    ctx.register_object_store(&url, std::sync::Arc::clone(store.object_store()));
    ctx
}

async fn datafusion_read(
    ctx: &SessionContext,
    store: &SnapshotStore,
    date: NaiveDate,
    expiration: NaiveDate,
) -> Vec<ChainRow> {
    let key = SnapshotKey::new(snapshot_datasets::CHAIN, date, "SPY");
    let file = store.latest(&key).await.expect("listing").expect("stored");
    let frame = ctx
        .read_parquet(
            store_file_url(PEER_URL, file.path.as_ref()),
            ParquetReadOptions::default(),
        )
        .await
        .expect("read")
        .filter(col("expiration").eq(lit(ScalarValue::Date32(Some(date_to_days(expiration))))))
        .expect("filter");
    let mut rows = Vec::new();
    for batch in frame.collect().await.expect("collect") {
        rows.extend(ChainRow::from_batch(&batch).expect("rows"));
    }
    rows
}
