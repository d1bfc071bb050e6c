//! The compute pipeline's figures: one worker cycle over the default universe (chain, IV and
//! Greeks, exposures with every flip level, flow) on 1 and 2 threads; snapshot write rate to a
//! local directory; replay speed of an archived session against real time; then the same cycle
//! over a scaled universe of synthetic underlyings (`OPTICS_BENCH_SCALE_UNDERLYINGS`, default
//! 960: about 1.5 M contracts) — IV + Greeks alone and with exposures, flips and flow. Prints
//! medians; asserts nothing about time. `cargo bench --bench pipeline` (or `make bench`).
//! `OPTICS_BENCH_CYCLES_ONLY=N` runs only N default-universe cycles (on
//! `OPTICS_BENCH_CYCLE_THREADS` threads, default 1) and prints their median and fastest: for a
//! profiler, or to interleave two builds on a noisy machine. `OPTICS_BENCH_DIGEST=1` prints a
//! digest of one cycle's snapshots per dataset and stops: two builds that print the same
//! digests wrote the same bits (to check that a speed-up changed no value).

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;
use chrono::{NaiveDate, TimeDelta};
use optics_compute::exposure::{
    ExposureConfig, compute_exposures, exposure_batch, exposure_summary_rows,
};
use optics_compute::flow::{FlowConfig, flow_batch, flow_rows};
use optics_compute::time::ManualClock;
use optics_compute::time::NyseCalendar;
use optics_ingest::archive::QuoteArchive;
use optics_ingest::replay::replay_session;
use optics_ingest::simulator::session::{SessionConfig, SessionSimulator};
use optics_ingest::simulator::universe::Universe;
use optics_pipeline::store::{SnapshotKey, SnapshotStore};
use optics_pipeline::worker::cycle::{CycleContext, build_all, chain_of};
use optics_pipeline::worker::{
    ComputeWorker, DatasetSnapshot, PUBLISH_CONCURRENCY, UnderlyingBook, WorkerConfig, WorkerError,
};
use optics_schemas::ExposureSummaryRow;
use optics_schemas::{Dataset, Message, OptionQuote};
use optics_tests::bench::median;
use rayon::prelude::*;

// The binary's allocator and its setting, so the cycle measured allocates as the worker does.
// (Its unit test is dead code here: this harness runs no tests.)
#[path = "../src/allocator.rs"]
#[allow(dead_code, unused_imports)]
mod allocator;

const REPEATS: usize = 3;

/// Books as the worker holds them after the option-quote messages of one instant.
fn books_of(event: &optics_ingest::SourceEvent) -> (Vec<(String, Arc<UnderlyingBook>)>, usize) {
    let mut books = Vec::new();
    let mut contracts = 0;
    for message in event.messages_of(Dataset::OptionQuotes) {
        let Message::Data(batch) = message else {
            continue;
        };
        let rows: Vec<OptionQuote> = batch.rows().expect("rows");
        contracts += rows.len();
        let mut book = UnderlyingBook::default();
        book.apply_quotes(rows);
        books.push((batch.key().to_owned(), Arc::new(book)));
    }
    (books, contracts)
}

/// A cycle's snapshots, every underlying built (a failure is a broken benchmark).
fn every_built(
    built: Vec<(String, Result<Vec<DatasetSnapshot>, WorkerError>)>,
) -> Vec<(String, Vec<DatasetSnapshot>)> {
    built
        .into_iter()
        .map(|(underlying, snapshots)| {
            let snapshots = snapshots.unwrap_or_else(|e| panic!("building {underlying}: {e}"));
            (underlying, snapshots)
        })
        .collect()
}

/// Median wall time of one cycle over `books` on the current rayon pool.
fn cycle_wall(books: &[(String, Arc<UnderlyingBook>)], ctx: &CycleContext) -> Duration {
    median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                let built = every_built(build_all(books, ctx));
                let wall = start.elapsed();
                drop(built);
                wall
            })
            .collect(),
    )
}

/// Where one cycle's time goes on one thread: each stage of `build_underlying` summed over the
/// underlyings, in the order chain (IV + Greeks, its batch and the exposure inputs), exposures
/// with flip levels, exposure batches, flow (rows and batch).
fn stage_times(
    books: &[(String, Arc<UnderlyingBook>)],
    ctx: &CycleContext,
    trade_date: NaiveDate,
) -> [Duration; 4] {
    let mut times = [Duration::ZERO; 4];
    for (underlying, book) in books {
        let mut lap = Instant::now();
        let mut split = |stage: usize| {
            times[stage] += lap.elapsed();
            lap = Instant::now();
        };
        let Some(mut chain) = chain_of(underlying, book, ctx).expect("chain") else {
            continue;
        };
        split(0);
        let (contracts, context) = chain.exposure_inputs.take().expect("exposure inputs");
        let report =
            compute_exposures(&contracts, &context, &ExposureConfig::default()).expect("exposures");
        split(1);
        let rows = exposure_batch(&report, trade_date).expect("exposure batch");
        let summary =
            ExposureSummaryRow::to_batch_trusted(&exposure_summary_rows(&report, trade_date))
                .expect("summary batch");
        split(2);
        let flow = flow_rows(&contracts, context.spot, &FlowConfig::default()).expect("flow");
        let flow = flow_batch(&flow, underlying, trade_date, context.as_of).expect("flow batch");
        split(3);
        drop((chain, rows, summary, flow));
    }
    times
}

/// The worker's cycle without the flow dataset (the scale goal's "IV + Greeks + exposures"):
/// per underlying the chain and its batch, then exposures with every flip level and their
/// batches.
fn chains_and_exposures(
    books: &[(String, Arc<UnderlyingBook>)],
    ctx: &CycleContext,
    trade_date: NaiveDate,
) -> Vec<(RecordBatch, RecordBatch, RecordBatch)> {
    books
        .par_iter()
        .filter_map(|(underlying, book)| {
            let mut chain = chain_of(underlying, book, ctx).expect("chain")?;
            let (contracts, context) = chain.exposure_inputs.take().expect("exposure inputs");
            let report = compute_exposures(&contracts, &context, &ExposureConfig::default())
                .expect("exposures");
            let rows = exposure_batch(&report, trade_date).expect("exposure batch");
            let summary =
                ExposureSummaryRow::to_batch_trusted(&exposure_summary_rows(&report, trade_date))
                    .expect("summary batch");
            Some((chain.batch, rows, summary))
        })
        .collect()
}

fn main() {
    allocator::keep_freed_memory();
    let trade_date = NaiveDate::from_ymd_opt(2026, 11, 18).expect("date");
    let session = NyseCalendar.session(trade_date).expect("trading day");
    let close = session.close.to_utc();
    let universe = Arc::new(Universe::real());
    let config = SessionConfig {
        interval: TimeDelta::minutes(30),
        ..SessionConfig::new(7, trade_date)
    };
    let mut simulator =
        SessionSimulator::new(Arc::clone(&universe), config, None).expect("session");
    let mut instants = Vec::new();
    while let Some(event) = simulator.step() {
        instants.push(event.expect("event"));
    }
    let closing = instants.last().expect("a closing event");

    // Books as the worker holds them at the close.
    let (books, contracts) = books_of(closing);
    let ctx = CycleContext {
        as_of: close,
        rate: 0.04,
        chain_only: false,
    };
    println!(
        "optics pipeline benchmark: {} underlyings, {contracts} contracts, median of {REPEATS}",
        books.len()
    );
    // To check that two builds write the same bits: one cycle's digests, then stop.
    if env_count("OPTICS_BENCH_DIGEST").is_some_and(|on| on > 0) {
        for (dataset, digest) in snapshot_digests(&every_built(build_all(&books, &ctx))) {
            println!("{dataset}: {digest:016x}");
        }
        return;
    }
    // For a profiler or an A/B of two builds: only the cycle, this many times on
    // OPTICS_BENCH_CYCLE_THREADS threads (default 1), then stop.
    if let Some(cycles) = env_count("OPTICS_BENCH_CYCLES_ONLY") {
        let threads = env_count("OPTICS_BENCH_CYCLE_THREADS").unwrap_or(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let walls: Vec<Duration> = (0..cycles.max(1))
            .map(|_| {
                let start = Instant::now();
                drop(every_built(pool.install(|| build_all(&books, &ctx))));
                start.elapsed()
            })
            .collect();
        let fastest = walls.iter().min().copied().unwrap_or_default();
        println!(
            "{} cycles on {threads} thread(s), median {:.1} ms, fastest {:.1} ms",
            walls.len(),
            median(walls).as_secs_f64() * 1e3,
            fastest.as_secs_f64() * 1e3
        );
        return;
    }
    let mut built = Vec::new();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let wall = median(
            (0..REPEATS)
                .map(|_| {
                    let start = Instant::now();
                    built = every_built(pool.install(|| build_all(&books, &ctx)));
                    start.elapsed()
                })
                .collect(),
        );
        println!(
            "one compute cycle (chain + IV + Greeks + exposures + flips + flow), {threads} thread(s): {:.1} ms",
            wall.as_secs_f64() * 1e3
        );
    }
    let stages: Vec<[Duration; 4]> = (0..REPEATS)
        .map(|_| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("pool")
                .install(|| stage_times(&books, &ctx, trade_date))
        })
        .collect();
    let stage = |i: usize| median(stages.iter().map(|s| s[i]).collect()).as_secs_f64() * 1e3;
    println!(
        "  by stage, 1 thread (ms): chain (IV + Greeks, batch, exposure inputs) {:.1}, exposures with flip levels {:.1}, exposure batches {:.1}, flow {:.1}",
        stage(0),
        stage(1),
        stage(2),
        stage(3)
    );
    let chain_only = CycleContext {
        chain_only: true,
        ..ctx
    };
    let wall = median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                let _ = every_built(build_all(&books, &chain_only));
                start.elapsed()
            })
            .collect(),
    );
    println!(
        "one chain-only cycle (IV + Greeks), 2 threads: {:.1} ms",
        wall.as_secs_f64() * 1e3
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("optics-bench-pipeline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = SnapshotStore::local(&dir.join("snapshots")).expect("store");
    let (files, bytes, wall) = runtime.block_on(async {
        let start = Instant::now();
        let (mut files, mut bytes) = (0usize, 0u64);
        for (underlying, snapshots) in &built {
            for snap in snapshots {
                let key = SnapshotKey::new(snap.dataset, snap.trade_date, underlying.as_str());
                store
                    .publish(&key, &snap.batch, snap.sort_columns, close)
                    .await
                    .expect("publish");
                let file = store.latest(&key).await.expect("list").expect("file");
                files += 1;
                bytes += file.bytes;
            }
        }
        (files, bytes, start.elapsed())
    });
    println!(
        "snapshot write (Parquet to a local directory): {files} files, {:.1} MB in {:.0} ms — {:.1} MB/s",
        bytes as f64 / 1e6,
        wall.as_secs_f64() * 1e3,
        bytes as f64 / 1e6 / wall.as_secs_f64()
    );
    // The worker's own path: build, encode on rayon, publish concurrently, as one cycle does.
    let worker_cycle_wall = runtime.block_on(async {
        let mut worker = ComputeWorker::offline(
            store.clone(),
            Arc::new(ManualClock::new(close)),
            WorkerConfig::default(),
        );
        for message in closing.messages_of(Dataset::OptionQuotes) {
            worker.apply(message).expect("apply");
        }
        let start = Instant::now();
        let events = worker.publish_dirty(close).await.expect("cycle");
        assert_eq!(events.len(), files);
        start.elapsed()
    });
    println!(
        "one worker cycle end to end (build, encode on rayon, {PUBLISH_CONCURRENCY} concurrent publications, {files} files to a local directory), 2 threads: {:.0} ms",
        worker_cycle_wall.as_secs_f64() * 1e3
    );

    // Replay: the session's half-hour snapshots archived, then replayed.
    let archive = QuoteArchive::local(&dir.join("archive")).expect("archive");
    let replay_wall = runtime.block_on(async {
        for event in &instants {
            let mut rows = Vec::new();
            for message in event.messages_of(Dataset::OptionQuotes) {
                if let Message::Data(batch) = message {
                    rows.extend(batch.rows::<OptionQuote>().expect("rows"));
                }
            }
            archive.append(&rows).await.expect("archive");
        }
        let start = Instant::now();
        replay_session(
            &archive,
            &store,
            trade_date,
            WorkerConfig::default(),
            |_| {},
        )
        .await
        .expect("replay");
        start.elapsed()
    });
    let session_length: Duration = session.duration().to_std().unwrap_or_default();
    println!(
        "replay of the session ({} archived instants): {:.2} s — {:.0}× real time",
        instants.len(),
        replay_wall.as_secs_f64(),
        session_length.as_secs_f64() / replay_wall.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The scale universe: synthetic underlyings jumped to the close.
    let underlyings = env_count("OPTICS_BENCH_SCALE_UNDERLYINGS").unwrap_or(960);
    let scaled = Arc::new(Universe::scaled(underlyings, 7));
    let mut simulator = SessionSimulator::new(
        Arc::clone(&scaled),
        SessionConfig {
            interval: TimeDelta::minutes(30),
            ..SessionConfig::new(7, trade_date)
        },
        None,
    )
    .expect("session");
    let event = simulator
        .advance_to(close)
        .expect("a closing instant")
        .expect("event");
    let (books, contracts) = books_of(&event);
    drop(event);
    println!(
        "scale universe: {} underlyings, {contracts} contracts, 2 threads, median of {REPEATS}",
        books.len()
    );
    let chain_only_wall = cycle_wall(&books, &chain_only);
    println!(
        "  IV + Greeks (chain only): {:.0} ms wall ({:.0} ns/contract)",
        chain_only_wall.as_secs_f64() * 1e3,
        chain_only_wall.as_secs_f64() * 1e9 / contracts as f64
    );
    let exposures_wall = median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                let built = chains_and_exposures(&books, &ctx, trade_date);
                let wall = start.elapsed();
                drop(built);
                wall
            })
            .collect(),
    );
    println!(
        "  IV + Greeks + exposures (chain batch, exposures, flip levels, levels, exposure batches): {:.0} ms wall ({:.0} ns/contract)",
        exposures_wall.as_secs_f64() * 1e3,
        exposures_wall.as_secs_f64() * 1e9 / contracts as f64
    );
    let full_wall = cycle_wall(&books, &ctx);
    println!(
        "  IV + Greeks + exposures + flip levels + flow: {:.0} ms wall ({:.0} ns/contract)",
        full_wall.as_secs_f64() * 1e3,
        full_wall.as_secs_f64() * 1e9 / contracts as f64
    );
}

/// Per dataset, a hash of every snapshot's columns in order: their values, offsets and
/// validity as stored (a null slot's value included, so it errs toward a difference). std's
/// hasher has fixed keys but may change between Rust releases: compare builds of one toolchain.
fn snapshot_digests(built: &[(String, Vec<DatasetSnapshot>)]) -> BTreeMap<&'static str, u64> {
    fn hash_data(data: &ArrayData, hasher: &mut DefaultHasher) {
        data.data_type().hash(hasher);
        data.len().hash(hasher);
        data.offset().hash(hasher);
        data.nulls().map(|n| n.validity()).hash(hasher);
        for buffer in data.buffers() {
            buffer.as_slice().hash(hasher);
        }
        for child in data.child_data() {
            hash_data(child, hasher);
        }
    }
    let mut hashers: BTreeMap<&'static str, DefaultHasher> = BTreeMap::new();
    for (underlying, snapshots) in built {
        for snapshot in snapshots {
            let hasher = hashers.entry(snapshot.dataset).or_default();
            underlying.hash(hasher);
            for column in snapshot.batch.columns() {
                hash_data(&column.to_data(), hasher);
            }
        }
    }
    hashers
        .into_iter()
        .map(|(dataset, hasher)| (dataset, hasher.finish()))
        .collect()
}

/// A count from the environment variable `name`, when it is set to one.
fn env_count(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}
