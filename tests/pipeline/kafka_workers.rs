//! Compute workers on Kafka (librdkafka's mock cluster): two workers in one consumer group split
//! the underlyings; a worker crashes mid-session and the other in the group takes over from the
//! committed offsets; after the takeover no underlying's snapshot is lost or stale beyond one
//! cycle. Reference rows reach both workers' books, but each is merged into the store's
//! market-wide tables by one of them (one new version per merge), and by the other once the
//! merging worker has died.
//!
//! # Time
//!
//! Market time is injected: a round of quotes is stamped with the market clock's reading, and
//! each worker's clock reads market time plus an offset of its own (less than a cycle), so a
//! snapshot's `as_of` names the worker that built it. Until the takeover is complete the market
//! clock only moves between rounds. After it, market time runs one cycle interval per
//! publishing cycle of the surviving worker: the test advances the clock each time it sees a
//! chain of the current round built at the current reading. A snapshot built `n` cycles after
//! its quotes therefore has `as_of = quote time + n × CYCLE + offset`, and "stale beyond one
//! cycle" means `n > 1`. Cycles are counted conservatively (two cycles at one reading count as
//! one), so an observed `n > 1` is never a miscount.
//!
//! Every wait polls the store against one deadline per test, generous for a loaded CI machine.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_compute::time::{Clock, ManualClock};
use optics_ingest::bus::kafka::{KafkaBus, KafkaBusConfig};
use optics_pipeline::store::{MARKET_WIDE, Snapshot, SnapshotKey, SnapshotStore};
use optics_pipeline::worker::{ComputeWorker, WorkerConfig, WorkerStats};
use optics_schemas::bus::{snapshot_datasets, topics};
use optics_schemas::{
    AssetClass, BorrowRate, Bus, ChainRow, Company, Dataset, Dividend, EarningsEvent,
    EarningsTiming, ExposureRow, ExposureSummaryRow, FlowSnapshotRow, MARKET_WIDE_KEY, OptionQuote,
    PricingModelCode, Record, Subscription,
};
use optics_tests::fixtures::synthetic_chain;
use rdkafka::mocking::MockCluster;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::support::{
    Decode, borrow_fee, data, earnings_report, memory_store, next_snapshot_events,
    quarterly_dividend, rows_of, versions_written,
};

const UNDERLYINGS: [&str; 8] = ["AAA", "BBB", "CCC", "DDD", "EEE", "FFF", "GGG", "HHH"];
/// The workers' cycle interval, and the market time one cycle stands for.
const CYCLE: Duration = Duration::from_millis(100);
/// Rounds measured after a takeover.
const MEASURED_ROUNDS: usize = 3;
/// Bound of each test, far above its usual duration.
const DEADLINE: Duration = Duration::from_secs(120);
/// Pause between two reads of the store while waiting.
const POLL: Duration = Duration::from_millis(10);
/// The consumers' session timeout. The mock group coordinator waits this long less 1 s for the
/// members to rejoin after one leaves, so it sets the takeover time; but it cannot be lower:
/// the mock delays a new group's first join by a fixed 3 s, without heartbeats meanwhile, and
/// a shorter session expires the joining member. Heartbeats every 100 ms keep a live member
/// well inside it.
const SESSION_TIMEOUT_MS: u32 = 3_000;

fn cycle() -> TimeDelta {
    TimeDelta::from_std(CYCLE).unwrap()
}

fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

fn session_start() -> DateTime<Utc> {
    trade_date().and_hms_opt(15, 0, 0).unwrap().and_utc()
}

fn bus_on(bootstrap: &str) -> Arc<dyn Bus> {
    let mut config = KafkaBusConfig::from_url(&format!("kafka://{bootstrap}")).unwrap();
    config.consumer_properties = vec![
        (
            "session.timeout.ms".to_owned(),
            SESSION_TIMEOUT_MS.to_string(),
        ),
        ("heartbeat.interval.ms".to_owned(), "100".to_owned()),
        ("fetch.wait.max.ms".to_owned(), "20".to_owned()),
    ];
    config.producer_properties = vec![("linger.ms".to_owned(), "1".to_owned())];
    config.group_join_timeout = DEADLINE;
    Arc::new(KafkaBus::new(config).unwrap())
}

/// The overall deadline of a test.
#[derive(Debug, Clone, Copy)]
struct Deadline(Instant);

impl Deadline {
    fn start() -> Self {
        Self(Instant::now() + DEADLINE)
    }

    /// Panics once the deadline has passed, naming the round of quotes stamped `quoted` that
    /// `newest` does not carry everywhere yet; otherwise pauses one poll.
    async fn pause_for_round(
        self,
        quoted: DateTime<Utc>,
        newest: &BTreeMap<&'static str, NewestChain>,
    ) {
        self.pause(|| format!("every chain to carry the quotes of {quoted}; newest: {newest:?}"))
            .await;
    }

    /// Panics once the deadline has passed, saying what was awaited; otherwise pauses one poll.
    async fn pause(self, awaited: impl FnOnce() -> String) {
        assert!(
            Instant::now() < self.0,
            "still waiting after {DEADLINE:?}: {}",
            awaited()
        );
        tokio::time::sleep(POLL).await;
    }
}

/// A worker's clock: market time plus `offset`.
#[derive(Debug)]
struct WorkerClock {
    name: &'static str,
    offset: TimeDelta,
    clock: Arc<ManualClock>,
}

/// The market clock and the workers' clocks that follow it.
#[derive(Debug)]
struct Market {
    now: DateTime<Utc>,
    workers: Vec<WorkerClock>,
    /// Errors the workers stopped with: a wait fails at once on one rather than at the
    /// deadline.
    worker_errors: Arc<Mutex<Vec<String>>>,
}

impl Market {
    /// Worker `a` reads market time + 1 ms, `b` + 2 ms.
    fn new() -> Self {
        let now = session_start();
        let workers = [("a", 1), ("b", 2)]
            .into_iter()
            .map(|(name, offset_ms)| {
                let offset = TimeDelta::milliseconds(offset_ms);
                WorkerClock {
                    name,
                    offset,
                    clock: Arc::new(ManualClock::new(now + offset)),
                }
            })
            .collect();
        Self {
            now,
            workers,
            worker_errors: Arc::default(),
        }
    }

    fn assert_workers_ok(&self) {
        let errors = self.worker_errors.lock().unwrap();
        assert!(errors.is_empty(), "a worker failed: {errors:?}");
    }

    fn worker(&self, name: &str) -> &WorkerClock {
        self.workers.iter().find(|w| w.name == name).unwrap()
    }

    /// Moves market time on by one cycle.
    fn advance(&mut self) {
        self.now += cycle();
        for worker in &self.workers {
            worker.clock.set(self.now + worker.offset);
        }
    }

    /// The worker whose clock reads `reading` (market time on the cycle grid, plus its offset).
    fn clock_of(&self, reading: DateTime<Utc>) -> &'static str {
        self.built(session_start(), reading).0
    }

    /// Which worker built a snapshot of quotes stamped `quoted` at `as_of`, and how many
    /// cycles after the quotes.
    fn built(&self, quoted: DateTime<Utc>, as_of: DateTime<Utc>) -> (&'static str, i64) {
        let after = as_of - quoted;
        let step = cycle().num_microseconds().unwrap();
        for worker in &self.workers {
            let cycles = (after - worker.offset).num_microseconds().unwrap();
            if cycles >= 0 && cycles % step == 0 {
                return (worker.name, cycles / step);
            }
        }
        panic!("a snapshot of the quotes of {quoted} built at {as_of}: by no worker's clock");
    }
}

/// Each underlying's quotes, all stamped `at`.
fn quotes(at: DateTime<Utc>) -> Vec<(String, Vec<OptionQuote>)> {
    UNDERLYINGS
        .iter()
        .enumerate()
        .map(|(i, symbol)| {
            let spot = 100.0 + 10.0 * i as f64;
            let mut rows = synthetic_chain(symbol, spot, 2, 20, spot - 10.0, i as u64, 80);
            for row in &mut rows {
                row.quote_time = at;
            }
            ((*symbol).to_owned(), rows)
        })
        .collect()
}

fn quotes_per_round() -> u64 {
    quotes(session_start())
        .iter()
        .map(|q| q.1.len() as u64)
        .sum()
}

/// Moves market time on by one cycle and publishes a round of quotes stamped with it; returns
/// the stamp. The fresh reading is one no worker has built at yet.
async fn send_round(ingest: &Arc<dyn Bus>, market: &mut Market) -> DateTime<Utc> {
    market.advance();
    for (symbol, rows) in quotes(market.now) {
        ingest
            .publish(topics::OPTION_QUOTES, data(&symbol, &rows))
            .await
            .unwrap();
    }
    ingest.flush().await.unwrap();
    market.now
}

/// An underlying's newest chain snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
struct NewestChain {
    /// The quote time of every row, `None` when the rows' quote times differ.
    quoted: Option<DateTime<Utc>>,
    as_of: DateTime<Utc>,
    /// Every row priced on the forward (Black-76): its builder had the [`company_map`].
    on_forward: bool,
}

async fn newest_chains(store: &SnapshotStore) -> BTreeMap<&'static str, NewestChain> {
    let mut newest = BTreeMap::new();
    for symbol in UNDERLYINGS {
        let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), symbol);
        let Some(snapshot) = store.read(&key).await.unwrap() else {
            continue;
        };
        let rows = ChainRow::from_batch(&snapshot.batches[0]).unwrap();
        let first = rows[0].call.quote_time;
        let same = rows.iter().all(|r| r.call.quote_time == first);
        let quoted = if same { first } else { None };
        let as_of = rows[0].as_of;
        assert!(rows.iter().all(|r| r.as_of == as_of), "{symbol}: one as_of");
        let on_forward = rows.iter().all(|r| r.model == PricingModelCode::Black76);
        newest.insert(
            symbol,
            NewestChain {
                quoted,
                as_of,
                on_forward,
            },
        );
    }
    newest
}

/// One poll of a round: the newest chains, and when each of those carrying the quotes stamped
/// `quoted` was built. Fails at once when a worker has stopped with an error.
async fn poll_round(
    store: &SnapshotStore,
    market: &Market,
    quoted: DateTime<Utc>,
) -> (
    BTreeMap<&'static str, NewestChain>,
    BTreeMap<&'static str, DateTime<Utc>>,
) {
    market.assert_workers_ok();
    let newest = newest_chains(store).await;
    let fresh = newest
        .iter()
        .filter(|(_, chain)| chain.quoted == Some(quoted))
        .map(|(&symbol, chain)| (symbol, chain.as_of))
        .collect();
    (newest, fresh)
}

/// Waits, market time standing still, until every underlying's newest chain carries the quotes
/// stamped `quoted`; returns which worker built each.
async fn wait_for_round(
    store: &SnapshotStore,
    market: &Market,
    quoted: DateTime<Utc>,
    deadline: Deadline,
) -> BTreeMap<&'static str, &'static str> {
    loop {
        let (newest, fresh) = poll_round(store, market, quoted).await;
        let built: BTreeMap<_, _> = fresh
            .into_iter()
            .map(|(symbol, as_of)| (symbol, market.built(quoted, as_of).0))
            .collect();
        if built.len() == UNDERLYINGS.len() {
            return built;
        }
        deadline.pause_for_round(quoted, &newest).await;
    }
}

/// Sends a round with market time running one cycle per publishing cycle of `survivor`, the
/// only live worker, and waits until every underlying's newest chain carries it; returns how
/// many cycles after its quotes (the returned stamp) each underlying's chain was built.
async fn measured_round(
    store: &SnapshotStore,
    ingest: &Arc<dyn Bus>,
    market: &mut Market,
    survivor: &str,
    deadline: Deadline,
) -> (DateTime<Utc>, BTreeMap<&'static str, i64>) {
    let quoted = send_round(ingest, market).await;
    loop {
        let (newest, fresh) = poll_round(store, market, quoted).await;
        if fresh.len() == UNDERLYINGS.len() {
            let lags = fresh
                .into_iter()
                .map(|(symbol, as_of)| {
                    let (builder, cycles) = market.built(quoted, as_of);
                    assert_eq!(builder, survivor, "{symbol} at {as_of}");
                    (symbol, cycles)
                })
                .collect();
            return (quoted, lags);
        }
        let reading = market.worker(survivor).clock.now();
        if fresh.values().any(|&as_of| as_of == reading) {
            // A cycle at this reading built part of the round: the next cycle reads one more.
            market.advance();
        }
        deadline.pause_for_round(quoted, &newest).await;
    }
}

/// After a takeover by `survivor`: rounds of quotes, each reaching every underlying's chain at
/// most one cycle after it was sent. Returns the largest lag seen, in cycles, and the stamp of
/// the last round.
async fn assert_fresh_within_one_cycle(
    store: &SnapshotStore,
    ingest: &Arc<dyn Bus>,
    market: &mut Market,
    survivor: &str,
    deadline: Deadline,
) -> (i64, DateTime<Utc>) {
    let mut worst = 0;
    let mut last = market.now;
    for round in 0..MEASURED_ROUNDS {
        let (quoted, lags) = measured_round(store, ingest, market, survivor, deadline).await;
        last = quoted;
        for (symbol, &cycles) in &lags {
            assert!(
                cycles <= 1,
                "round {round} after the takeover: {symbol}'s chain built {cycles} cycles \
                 after its quotes ({lags:?})"
            );
        }
        worst = worst.max(lags.values().copied().max().unwrap_or_default());
    }
    (worst, last)
}

/// Every dataset of every underlying is in the store, and each underlying's files are of one
/// cycle: the one whose chain carries the newest quotes.
async fn assert_none_lost(store: &SnapshotStore, newest_quotes: DateTime<Utc>) {
    let chains = newest_chains(store).await;
    let all: Vec<String> = UNDERLYINGS.iter().map(|s| (*s).to_owned()).collect();
    for dataset in [
        snapshot_datasets::CHAIN,
        snapshot_datasets::EXPOSURES,
        snapshot_datasets::EXPOSURE_SUMMARY,
        snapshot_datasets::FLOW,
    ] {
        let present = store.underlyings(dataset, trade_date()).await.unwrap();
        assert_eq!(present, all, "{dataset}");
        for symbol in UNDERLYINGS {
            let chain = chains[symbol];
            assert_eq!(chain.quoted, Some(newest_quotes), "{symbol}");
            let key = SnapshotKey::new(dataset, trade_date(), symbol);
            let snapshot = store.read(&key).await.unwrap().unwrap();
            let as_of = as_of_column(dataset, &snapshot);
            assert!(!as_of.is_empty(), "{dataset} of {symbol} has rows");
            assert!(
                as_of.iter().all(|&t| t == chain.as_of),
                "{dataset} of {symbol} is of the cycle of its chain ({})",
                chain.as_of
            );
        }
    }
}

fn as_of_column(dataset: &str, snapshot: &Snapshot) -> Vec<DateTime<Utc>> {
    fn column<R>(
        snapshot: &Snapshot,
        decode: Decode<R>,
        as_of: fn(&R) -> DateTime<Utc>,
    ) -> Vec<DateTime<Utc>> {
        rows_of(snapshot, decode).iter().map(as_of).collect()
    }
    match dataset {
        snapshot_datasets::CHAIN => column(snapshot, ChainRow::from_batch, |r| r.as_of),
        snapshot_datasets::EXPOSURES => column(snapshot, ExposureRow::from_batch, |r| r.as_of),
        snapshot_datasets::EXPOSURE_SUMMARY => {
            column(snapshot, ExposureSummaryRow::from_batch, |r| r.as_of)
        }
        snapshot_datasets::FLOW => column(snapshot, FlowSnapshotRow::from_batch, |r| r.as_of),
        other => panic!("no as_of reader for {other}"),
    }
}

/// Whether both workers built part of a round.
fn built_by_both(built: &BTreeMap<&'static str, &'static str>) -> bool {
    ["a", "b"]
        .iter()
        .all(|worker| built.values().any(|builder| builder == worker))
}

/// Every underlying as a cash index priced on the forward: a chain built after its worker
/// applied this company map says so (Black-76), so that worker has read the reference topic up
/// to it.
fn company_map() -> Vec<Company> {
    UNDERLYINGS
        .iter()
        .map(|symbol| Company {
            symbol: (*symbol).to_owned(),
            name: format!("{symbol} index"),
            asset_class: AssetClass::Index,
            sector: None,
            sector_etf: None,
            market_cap: None,
            beta_spy: 1.0,
            corr_spy: 0.9,
            priced_on_forward: true,
            industry: None,
        })
        .collect()
}

/// Rows for each market-wide table the workers merge: a report, a dividend and a borrow fee of
/// every underlying, dated `day`.
#[derive(Debug)]
struct StoreRows {
    earnings: Vec<EarningsEvent>,
    dividends: Vec<Dividend>,
    borrow: Vec<BorrowRate>,
}

impl StoreRows {
    fn of(day: NaiveDate) -> Self {
        Self {
            earnings: UNDERLYINGS
                .iter()
                .map(|s| earnings_report(s, day, EarningsTiming::AfterClose, None))
                .collect(),
            dividends: UNDERLYINGS
                .iter()
                .map(|s| quarterly_dividend(s, day, 0.5))
                .collect(),
            borrow: UNDERLYINGS
                .iter()
                .map(|s| borrow_fee(s, day, 0.004))
                .collect(),
        }
    }

    fn len(&self) -> u64 {
        (self.earnings.len() + self.dividends.len() + self.borrow.len()) as u64
    }

    /// Publishes one market-wide message per table.
    async fn send(&self, ingest: &Arc<dyn Bus>) {
        for message in [
            data(MARKET_WIDE_KEY, &self.earnings),
            data(MARKET_WIDE_KEY, &self.dividends),
            data(MARKET_WIDE_KEY, &self.borrow),
        ] {
            ingest.publish(topics::REFERENCE, message).await.unwrap();
        }
        ingest.flush().await.unwrap();
    }
}

/// The tables of [`StoreRows`].
const STORE_TABLES: [Dataset; 3] = [Dataset::Earnings, Dataset::Dividends, Dataset::BorrowRates];

/// Whether the market-wide partition of `R` on the trade date holds every row of `rows`.
async fn holds<R: Record + PartialEq>(store: &SnapshotStore, rows: &[R]) -> bool {
    let key = SnapshotKey::new(R::DATASET.name(), trade_date(), MARKET_WIDE);
    let Some(snapshot) = store.read(&key).await.unwrap() else {
        return false;
    };
    let stored = rows_of(&snapshot, R::from_batch);
    rows.iter().all(|row| stored.contains(row))
}

/// Waits until the market-wide tables hold every row of `sent`; returns how many versions of
/// each of [`STORE_TABLES`] were written.
async fn wait_for_merge(
    store: &SnapshotStore,
    market: &Market,
    sent: &[&StoreRows],
    deadline: Deadline,
) -> [u64; 3] {
    loop {
        market.assert_workers_ok();
        let mut merged = true;
        for rows in sent {
            merged &= holds(store, &rows.earnings).await
                && holds(store, &rows.dividends).await
                && holds(store, &rows.borrow).await;
        }
        if merged {
            return store_versions(store).await;
        }
        deadline
            .pause(|| format!("the market-wide tables to hold {sent:?}"))
            .await;
    }
}

/// How many versions of each of [`STORE_TABLES`] were written on the trade date.
async fn store_versions(store: &SnapshotStore) -> [u64; 3] {
    let mut versions = [0; 3];
    for (count, table) in versions.iter_mut().zip(STORE_TABLES) {
        *count = versions_written(store, table.name(), trade_date()).await;
    }
    versions
}

/// Reads `events` until a publication of each of [`STORE_TABLES`] is announced; returns the
/// worker that published them (the one of the shared reference partition: all by one).
async fn reference_merger(events: &mut Box<dyn Subscription>, market: &Market) -> &'static str {
    let mut mergers: BTreeMap<&str, &'static str> = BTreeMap::new();
    while mergers.len() < STORE_TABLES.len() {
        for event in next_snapshot_events(events, 256).await {
            if let Some(table) = STORE_TABLES.iter().find(|t| t.name() == event.dataset) {
                assert_eq!(event.underlying, MARKET_WIDE, "{event:?}");
                let merger = market.clock_of(event.published_at);
                let first = *mergers.entry(table.name()).or_insert(merger);
                assert_eq!(first, merger, "{} merged by both workers", table.name());
            }
        }
    }
    let merger = mergers[Dataset::Earnings.name()];
    assert!(mergers.values().all(|&m| m == merger), "{mergers:?}");
    merger
}

type WorkerTask = JoinHandle<Result<WorkerStats, optics_pipeline::worker::WorkerError>>;

/// Runs a worker on `market`'s clock `name` until `shutdown` resolves.
fn spawn_worker(
    bootstrap: &str,
    store: &SnapshotStore,
    market: &Market,
    name: &'static str,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> WorkerTask {
    let clock: Arc<dyn Clock> = Arc::clone(&market.worker(name).clock) as Arc<dyn Clock>;
    let worker = ComputeWorker::new(
        bus_on(bootstrap),
        store.clone(),
        clock,
        WorkerConfig {
            worker_id: name.to_owned(),
            interval: CYCLE,
            ..WorkerConfig::default()
        },
    );
    let errors = Arc::clone(&market.worker_errors);
    tokio::spawn(async move {
        let result = worker.run(shutdown).await;
        if let Err(error) = &result {
            errors.lock().unwrap().push(format!("{name}: {error}"));
        }
        result
    })
}

/// [`spawn_worker`] until the returned signal is sent (or dropped).
fn spawn_stoppable_worker(
    bootstrap: &str,
    store: &SnapshotStore,
    market: &Market,
    name: &'static str,
) -> (WorkerTask, oneshot::Sender<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = spawn_worker(bootstrap, store, market, name, async {
        let _ = stopped.await;
    });
    (task, stop)
}

/// Kills a worker mid-session: its task is aborted, so it runs no last cycle and commits
/// nothing more. (Dropping its consumers still sends Kafka's LeaveGroup, as a worker process
/// stopped by a signal would.)
async fn kill(task: WorkerTask) {
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
}

/// Stops a worker through its shutdown signal; returns its counters.
async fn stop(task: WorkerTask, signal: oneshot::Sender<()>) -> WorkerStats {
    signal.send(()).unwrap();
    tokio::time::timeout(DEADLINE, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
}

fn mock_cluster() -> MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    let cluster = MockCluster::new(1).unwrap();
    cluster.create_topic(topics::OPTION_QUOTES, 4, 1).unwrap();
    // Workers split the daily bars like the quotes.
    cluster.create_topic(topics::DAILY_BARS, 4, 1).unwrap();
    cluster.create_topic(topics::REFERENCE, 1, 1).unwrap();
    cluster.create_topic(topics::SNAPSHOTS, 1, 1).unwrap();
    cluster
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_worker_takes_over_the_underlyings_of_one_that_crashed() {
    let cluster = mock_cluster();
    let bootstrap = cluster.bootstrap_servers();
    runtime().block_on(async {
        let started = Instant::now();
        let deadline = Deadline::start();
        let store = memory_store();
        let mut market = Market::new();
        let ingest = bus_on(&bootstrap);

        // Worker A serves every underlying, then crashes.
        let a = spawn_worker(&bootstrap, &store, &market, "a", std::future::pending());
        let first = send_round(&ingest, &mut market).await;
        let built = wait_for_round(&store, &market, first, deadline).await;
        assert!(built.values().all(|&w| w == "a"), "{built:?}");
        kill(a).await;

        // Worker B joins the same group: it resumes from A's committed offsets and serves the
        // newer quotes of every underlying.
        let crashed = Instant::now();
        let (b, stop_b) = spawn_stoppable_worker(&bootstrap, &store, &market, "b");
        let takeover = send_round(&ingest, &mut market).await;
        let built = wait_for_round(&store, &market, takeover, deadline).await;
        assert!(built.values().all(|&w| w == "b"), "{built:?}");
        let took_over_after = crashed.elapsed();

        let (worst, newest) =
            assert_fresh_within_one_cycle(&store, &ingest, &mut market, "b", deadline).await;
        let stats = stop(b, stop_b).await;
        assert_none_lost(&store, newest).await;

        // B saw the takeover round and the measured ones, plus at most the first round again
        // where A had not committed it when it crashed.
        let seen = quotes_per_round() * (1 + MEASURED_ROUNDS as u64);
        assert!(stats.quotes_accepted >= seen, "{stats:?}");
        assert!(
            stats.quotes_accepted <= seen + quotes_per_round(),
            "{stats:?}"
        );
        eprintln!(
            "crash → B serving everything: {took_over_after:?}; worst lag after: {worst} \
             cycle(s); test {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn two_workers_split_the_underlyings_merge_each_reference_row_once_and_one_takes_over() {
    let cluster = mock_cluster();
    let bootstrap = cluster.bootstrap_servers();
    runtime().block_on(async {
        let started = Instant::now();
        let deadline = Deadline::start();
        let store = memory_store();
        let mut market = Market::new();
        let ingest = bus_on(&bootstrap);
        // The workers' announcements: who merged the reference rows.
        let mut events = ingest.subscribe(topics::SNAPSHOTS, "test").await.unwrap();
        let mut workers: BTreeMap<&str, (WorkerTask, oneshot::Sender<()>)> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let worker = spawn_stoppable_worker(&bootstrap, &store, &market, name);
                (name, worker)
            })
            .collect();

        // Rounds until the group has settled with both workers serving: each round every
        // underlying is built by exactly one of them.
        let mut split: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut rounds = 0;
        while split.len() < 2 {
            assert!(
                rounds < 100,
                "the group never split the underlyings: {split:?}"
            );
            let quoted = send_round(&ingest, &mut market).await;
            split.clear();
            for (symbol, builder) in wait_for_round(&store, &market, quoted, deadline).await {
                split.entry(builder).or_default().push(symbol);
            }
            rounds += 1;
        }
        let (served_by_a, served_by_b) = (split["a"].clone(), split["b"].clone());
        assert_eq!(served_by_a.len() + served_by_b.len(), UNDERLYINGS.len());

        // Reference rows for the store, then the company map behind them on the topic's one
        // partition: a worker whose chains are priced on the forward has read the rows too.
        let first_rows = StoreRows::of(trade_date());
        first_rows.send(&ingest).await;
        ingest
            .publish(topics::REFERENCE, data(MARKET_WIDE_KEY, &company_map()))
            .await
            .unwrap();
        ingest.flush().await.unwrap();
        for round in 0.. {
            assert!(
                round < 100,
                "the workers never priced every chain on the forward: {:?}",
                newest_chains(&store).await
            );
            let quoted = send_round(&ingest, &mut market).await;
            let built = wait_for_round(&store, &market, quoted, deadline).await;
            let on_forward = newest_chains(&store).await.values().all(|c| c.on_forward);
            if on_forward && built_by_both(&built) {
                break;
            }
        }
        let versions = wait_for_merge(&store, &market, &[&first_rows], deadline).await;
        let merger = reference_merger(&mut events, &market).await;
        // A round built by both after that: each has finished the cycles in which it had the
        // rows (and would have merged them, were it merging), and the merger has committed.
        let quoted = send_round(&ingest, &mut market).await;
        let built = wait_for_round(&store, &market, quoted, deadline).await;
        assert!(built_by_both(&built), "{built:?}");
        assert_eq!(versions, [1, 1, 1], "one version per table, by {merger}");
        assert_eq!(
            store_versions(&store).await,
            [1, 1, 1],
            "none by the other worker"
        );

        // The merger dies mid-session. The next round reaches every underlying through the
        // other, and so do the reference rows sent after the death.
        let survivor = if merger == "a" { "b" } else { "a" };
        // (Its stop signal is kept until the end: dropping it would stop it gracefully.)
        let (task, _merger_signal) = workers.remove(merger).unwrap();
        kill(task).await;
        let crashed = Instant::now();
        let later_rows = StoreRows::of(trade_date() + chrono::Days::new(1));
        later_rows.send(&ingest).await;
        let takeover = send_round(&ingest, &mut market).await;
        let built = wait_for_round(&store, &market, takeover, deadline).await;
        assert!(built.values().all(|&w| w == survivor), "{built:?}");
        let took_over_after = crashed.elapsed();

        // From then on every round reaches every underlying within one cycle, and nothing is
        // missing from the store.
        let (worst, newest) =
            assert_fresh_within_one_cycle(&store, &ingest, &mut market, survivor, deadline).await;
        let versions = wait_for_merge(&store, &market, &[&first_rows, &later_rows], deadline).await;
        assert_eq!(reference_merger(&mut events, &market).await, survivor);
        assert_eq!(versions, [2, 2, 2], "one more version per table");
        let (task, signal) = workers.remove(survivor).unwrap();
        let stats = stop(task, signal).await;
        assert!(stats.snapshots > 0, "{stats:?}");
        // The survivor merged the later rows only: its own group's copy of the first went to
        // its books, and the merger had committed them in the shared group.
        assert_eq!(stats.reference_rows, later_rows.len(), "{stats:?}");
        assert_none_lost(&store, newest).await;
        eprintln!(
            "split after {rounds} round(s): a served {served_by_a:?}, b served {served_by_b:?}; \
             reference rows merged by {merger}, then {survivor}; crash → {survivor} serving \
             everything: {took_over_after:?}; worst lag after: {worst} cycle(s); test {:?}",
            started.elapsed()
        );
    });
}
