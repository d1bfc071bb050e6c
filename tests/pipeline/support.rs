//! Fixtures the pipeline tests share: the session's dates, an in-memory store, the simulator's
//! chains, a compute worker running on a bus, and reads of what it published.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_compute::time::{ManualClock, NyseCalendar};
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_ingest::simulator::quotes::{ChainSpec, SimulatedQuote, simulate_chain};
use optics_ingest::simulator::surface::{Surface, SurfaceInputs};
use optics_ingest::simulator::universe::Universe;
use optics_pipeline::store::{MARKET_WIDE, Snapshot, SnapshotKey, SnapshotStore};
use optics_pipeline::worker::{ComputeWorker, WorkerConfig, WorkerError, WorkerStats};
use optics_schemas::bus::topics;
use optics_schemas::{
    BorrowRate, Bus, DataBatch, Dividend, DividendFrequency, EarningsEvent, EarningsTiming,
    Message, OptionQuote, Record, SchemaError, SnapshotEvent, Subscription,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The rate the simulator prices its quotes at and the workers build chains with.
pub const RATE: f64 = 0.04;

/// The session the tests run (a Wednesday).
pub fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 18).unwrap()
}

/// 14:30 New York on the trade date: mid-session.
pub fn instant() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 18, 19, 30, 0).unwrap()
}

/// 16:00 New York on the trade date.
pub fn close() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 18, 21, 0, 0).unwrap()
}

/// The `count` sessions before the trade date, oldest first.
pub fn sessions_before(count: usize) -> Vec<NaiveDate> {
    let mut days = Vec::with_capacity(count);
    let mut day = trade_date();
    while days.len() < count {
        day = NyseCalendar.previous_trading_day(day);
        days.push(day);
    }
    days.reverse();
    days
}

/// Two worker threads: the worker's cycles and the test's waits run side by side.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}

/// The coverage universe's `symbols` alone, in that order.
pub fn universe_of(symbols: &[&str]) -> Arc<Universe> {
    let real = Universe::real();
    let picked = symbols
        .iter()
        .map(|s| real.get(s).unwrap().clone())
        .collect();
    Arc::new(Universe::new(picked).unwrap())
}

/// An empty snapshot store in memory.
pub fn memory_store() -> SnapshotStore {
    SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"))
}

/// `got` is present and equal to `want` up to rounding (relative 1e-9, absolute below 1).
pub fn close_enough(what: &str, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("{what} is null"));
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

/// Publishes `rows` as the market-wide partition of their dataset on `date`, stamped at the
/// close.
pub async fn publish_reference<R: Record>(store: &SnapshotStore, rows: &[R], date: NaiveDate) {
    let key = SnapshotKey::new(R::DATASET.name(), date, MARKET_WIDE);
    store
        .publish(&key, &R::to_batch(rows).unwrap(), &[], close())
        .await
        .unwrap();
}

/// How many versions of the market-wide partition of `dataset` on `date` were written: version
/// numbers count from 1 and each publication takes the next, so the newest number is the count
/// (older versions are pruned). 0 when none was.
pub async fn versions_written(store: &SnapshotStore, dataset: &str, date: NaiveDate) -> u64 {
    let key = SnapshotKey::new(dataset, date, MARKET_WIDE);
    store
        .latest(&key)
        .await
        .unwrap()
        .map_or(0, |file| file.version)
}

/// A bus message of `rows` under `key`.
pub fn data<R: Record>(key: &str, rows: &[R]) -> Message {
    Message::Data(DataBatch::from_rows(key, rows).unwrap())
}

/// An earnings report of `symbol` on `day`, estimated at 1.50 a share, with `actual` once
/// reported.
pub fn earnings_report(
    symbol: &str,
    day: NaiveDate,
    timing: EarningsTiming,
    actual: Option<f64>,
) -> EarningsEvent {
    EarningsEvent {
        symbol: symbol.to_owned(),
        report_date: day,
        timing,
        fiscal_quarter: format!("Q {day}"),
        eps_estimate: 1.5,
        eps_actual: actual,
        revenue_estimate: None,
        revenue_actual: None,
    }
}

/// A quarterly dividend of `symbol` going ex on `ex_date`, paid two weeks later.
pub fn quarterly_dividend(symbol: &str, ex_date: NaiveDate, amount: f64) -> Dividend {
    Dividend {
        symbol: symbol.to_owned(),
        ex_date,
        pay_date: ex_date + chrono::Days::new(14),
        amount,
        frequency: DividendFrequency::Quarterly,
    }
}

/// `symbol`'s borrow fee on `date` (easy to borrow).
pub fn borrow_fee(symbol: &str, date: NaiveDate, rate: f64) -> BorrowRate {
    BorrowRate {
        symbol: symbol.to_owned(),
        date,
        borrow_rate: rate,
        is_hard_to_borrow: false,
    }
}

/// The price `symbol` starts the simulated session at.
pub fn start_price(symbol: &str) -> f64 {
    Universe::real().get(symbol).unwrap().start_price
}

/// The simulator's chain of `symbol` at `at` of the trade date, at `spot` (also the previous
/// close), priced at [`RATE`].
pub fn simulated_chain(
    symbol: &str,
    at: DateTime<Utc>,
    spot: f64,
    seed: u64,
) -> Vec<SimulatedQuote> {
    let universe = Universe::real();
    let underlying = universe.get(symbol).unwrap();
    let surface = Surface::for_underlying(underlying, &SurfaceInputs::normal());
    let spec = ChainSpec {
        underlying,
        trade_date: trade_date(),
        instant: at,
        spot,
        previous_close: spot,
        surface: &surface,
        rate: RATE,
        seed,
    };
    simulate_chain(&spec, &NyseCalendar)
}

/// The quotes of [`simulated_chain`].
pub fn simulated_quotes(symbol: &str, at: DateTime<Utc>, spot: f64, seed: u64) -> Vec<OptionQuote> {
    simulated_chain(symbol, at, spot, seed)
        .into_iter()
        .map(|q| q.quote)
        .collect()
}

/// A compute worker consuming a bus in a task of its own.
pub struct RunningWorker {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<WorkerStats, WorkerError>>,
}

/// Starts a worker on `bus` publishing to `store`, its clock standing at `now`.
pub fn start_worker(
    bus: &Arc<dyn Bus>,
    store: &SnapshotStore,
    now: DateTime<Utc>,
    config: WorkerConfig,
) -> RunningWorker {
    let clock = Arc::new(ManualClock::new(now));
    let worker = ComputeWorker::new(Arc::clone(bus), store.clone(), clock, config);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(worker.run(async {
        let _ = stopped.await;
    }));
    RunningWorker { stop, task }
}

/// An embedded bus with a worker on it (as [`start_worker`]), and a subscription to the bus's
/// `snapshot` events taken before the worker starts, so it sees every announcement.
pub async fn worker_on_embedded_bus(
    store: &SnapshotStore,
    now: DateTime<Utc>,
    config: WorkerConfig,
) -> (Arc<dyn Bus>, Box<dyn Subscription>, RunningWorker) {
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(EmbeddedBusConfig::default()));
    let announcements = bus.subscribe(topics::SNAPSHOTS, "test").await.unwrap();
    let worker = start_worker(&bus, store, now, config);
    (bus, announcements, worker)
}

impl RunningWorker {
    /// Signals the worker to stop and returns its counters once it has (it runs a last cycle).
    pub async fn stop(self) -> WorkerStats {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().unwrap()
    }
}

/// The `snapshot` events of the next batch of at most `max` deliveries on `announcements`.
///
/// # Panics
/// When no batch arrives within a minute.
pub async fn next_snapshot_events(
    announcements: &mut Box<dyn Subscription>,
    max: usize,
) -> Vec<SnapshotEvent> {
    let batch = tokio::time::timeout(Duration::from_secs(60), announcements.next_batch(max))
        .await
        .expect("snapshot events within a minute")
        .unwrap()
        .unwrap();
    batch
        .into_iter()
        .filter_map(|delivery| match delivery.message {
            Message::Snapshot(event) => Some(event),
            _ => None,
        })
        .collect()
}

/// A snapshot row type's reader (`ChainRow::from_batch`, …).
pub type Decode<R> = fn(&RecordBatch) -> Result<Vec<R>, SchemaError>;

/// The rows of every batch of `snapshot`.
pub fn rows_of<R>(snapshot: &Snapshot, decode: Decode<R>) -> Vec<R> {
    snapshot
        .batches
        .iter()
        .flat_map(|b| decode(b).unwrap())
        .collect()
}

/// The rows of the published partition `key`.
///
/// # Panics
/// When nothing is published there.
pub async fn read_rows<R>(store: &SnapshotStore, key: &SnapshotKey, decode: Decode<R>) -> Vec<R> {
    let snapshot = store
        .read(key)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{key:?} is not published"));
    rows_of(&snapshot, decode)
}
