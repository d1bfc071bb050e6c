//! The compute worker: consumes quotes from the bus, keeps per-underlying state, and each
//! cycle turns what changed into chain, exposure and flow snapshots in the store.
//!
//! # Cycle
//!
//! 1. Messages are applied as they arrive: option-quote batches update their underlying's
//!    [`UnderlyingBook`]; reference data (the company map: which symbols are cash indices
//!    priced on the forward; dividend yields) updates the books' metadata; daily bars,
//!    earnings reports, dividends and borrow fees are kept for the store (see [`reference`];
//!    which worker keeps which rows: "Scaling out").
//! 2. About every `interval` (default 1 s; a cycle starts as soon as a burst of quotes is in,
//!    [`cycle_start`], rather than at a fixed phase), the dirty underlyings are built in
//!    parallel (rayon, on a blocking thread so the async runtime keeps serving) — see
//!    [`cycle`] — and their files
//!    encoded (rayon too), in waves of about [`WAVE_CONTRACTS`] contracts, each wave published
//!    while the next builds; an underlying that fails to build is skipped and logged. A reader
//!    in the same process, if there is one ([`PublishedSnapshots`]), takes each underlying's
//!    batches as soon as they are built, before any file is encoded: the Parquet publication
//!    runs beside what the API serves, not between a computation and the reader's swap. Each
//!    dataset of each underlying is then published to the [`SnapshotStore`] (one atomic file
//!    per partition, [`PUBLISH_CONCURRENCY`] at a time) and announced with a `snapshot` event
//!    on the bus once its file is visible.
//!    A live worker ([`run`](ComputeWorker::run)) then merges the reference rows received
//!    since the last cycle into the store's market-wide tables
//!    ([`publish_reference`](ComputeWorker::publish_reference)), so the series the session
//!    close and the API read go on past the seeded history.
//! 3. Only then are the consumed offsets committed: a worker that dies mid-cycle is replaced
//!    by one that re-reads everything since the last published cycle (at least once; the
//!    snapshot files are versioned, so a re-publication is a newer identical version).
//!
//! # Scaling out
//!
//! Workers sharing a consumer group split the quote topic's partitions, i.e. the underlyings
//! (the bus keys by underlying), and the daily-bar topic (keyed by symbol) the same way: each
//! merges the bars it receives. When the group moves a quote partition to another worker, this
//! one forgets the quotes of its underlyings before it reads or publishes anything else
//! ([`Subscription::take_revoked`]): the bus hands the partition over only once the old owner
//! has been told, so its last publication of those underlyings precedes the new owner's first.
//!
//! The reference topic is read twice by every worker. Its books need all of the metadata (the
//! company map, dividend yields), so each worker reads the topic in a group of its own
//! (`<group>-ref-<worker id>`, [`WorkerConfig::books_reference_group`]) and applies those
//! deliveries to its books only. The earnings, dividend and borrow rows for the store's
//! market-wide tables come through a second subscription, in one group every worker joins
//! (`<group>-reference-store`, [`WorkerConfig::store_reference_group`]): the bus gives each
//! partition of a group to one member at a time, so each row is merged by exactly one live
//! worker — one new version of a table per merge, not one per worker — and when that worker
//! leaves or dies, its partition and the rows it had not committed go to another member. Those
//! offsets are committed after the merge, like the quotes' after their snapshots (at least
//! once: rows merged but not committed before a crash are merged again by the next owner, an
//! identical new version).
//!
//! A lone worker (the embedded bus of `optics run`) is the only member of both groups and
//! merges every row. An offline worker ([`ComputeWorker::offline`]) has no subscriptions: it
//! keeps what it is [`apply`](ComputeWorker::apply)-ed for both, and its caller decides about
//! [`publish_reference`](ComputeWorker::publish_reference).

mod book;
pub mod close;
pub mod cycle;
pub mod reference;
pub mod restate;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::time::{Duration, SystemTime};

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::bus::topics;
use optics_schemas::health::{HealthTracker, components, failure_category};
use optics_schemas::memory::{HeldMemory, MemoryHolder};
use optics_schemas::{
    BorrowRate, Bus, BusError, Company, DailyBar, Dataset, Delivery, Dividend, EarningsEvent,
    Message, OptionQuote, Record, SchemaError, SnapshotEvent, Subscription,
};

pub use book::{ApplyStats, BatchTimes, UnderlyingBook};
pub use close::{
    CloseReference, SESSION_CLOSE_GRACE, SessionClose, close_latest_session, publish_vol_daily,
};
pub use cycle::{CycleContext, DatasetSnapshot};

use rayon::prelude::*;

use crate::store::{EncodedSnapshot, SnapshotKey, SnapshotStore, StoreError};
use optics_compute::time::{Clock, NyseCalendar};
use reference::PendingReference;

/// Most snapshot files of a cycle written at once (object stores answer many requests in
/// parallel; a local directory's writes run on the blocking threads).
pub const PUBLISH_CONCURRENCY: usize = 16;

/// How long quotes must have stopped arriving before a cycle takes them: the rest of their
/// burst is in (a source publishes an instant's quotes as one burst of messages, an underlying
/// each). See [`cycle_start`].
pub const ARRIVAL_SETTLE: Duration = Duration::from_millis(25);

/// When the cycle for quotes should start, given when the first of them since the last cycle
/// arrived (`first`), when the latest did (`latest`) and when the last cycle that built
/// something started (`last_cycle`): once no quote has arrived for `settle` (the burst is in),
/// or `patience` after the first (a feed that never pauses), whichever is sooner; but not
/// before `spacing` after the last cycle, so cycles stay about one an interval.
///
/// Quotes that arrive before `spacing` has passed are scheduled for the moment it has, not
/// left to the interval's tick: waiting for the tick would lock the cycles to an arbitrary
/// phase behind the feed, adding up to a whole interval to every answer's age. From that
/// moment on, each cycle starts at least `interval − spacing` earlier relative to its burst
/// than the last, until it follows the burst by `settle`.
pub fn cycle_start<T>(
    first: T,
    latest: T,
    last_cycle: T,
    CycleTiming {
        settle,
        patience,
        spacing,
    }: CycleTiming,
) -> T
where
    T: Copy + Ord + std::ops::Add<Duration, Output = T>,
{
    (latest + settle)
        .min(first + patience)
        .max(last_cycle + spacing)
}

/// The durations [`cycle_start`] weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleTiming {
    /// Quiet time that ends a burst ([`ARRIVAL_SETTLE`], at most a quarter interval).
    pub settle: Duration,
    /// Longest wait after the first quote of a burst (half an interval).
    pub patience: Duration,
    /// Shortest time between cycle starts (the interval less two settles).
    pub spacing: Duration,
}

impl CycleTiming {
    /// The timing of cycles about every `interval`.
    pub fn for_interval(interval: Duration) -> Self {
        let settle = (interval / 4).min(ARRIVAL_SETTLE);
        Self {
            settle,
            patience: interval / 2,
            spacing: interval.saturating_sub(settle * 2),
        }
    }
}

/// Contracts a cycle builds at once, about: the underlyings of a cycle are built and published
/// in waves of this size ([`ComputeWorker::publish_dirty`]), so what a cycle holds does not grow
/// with the universe. The largest chains (index options) are a wave of their own.
pub const WAVE_CONTRACTS: usize = 32 * 1024;

/// One dataset's snapshot of an underlying, encoded.
struct EncodedDataset {
    dataset: &'static str,
    trade_date: NaiveDate,
    file: EncodedSnapshot,
}

/// One wave's underlyings, each with its encoded files or why it could not be built.
type BuiltWave = Vec<(String, Result<Vec<EncodedDataset>, WorkerError>)>;

/// A reader in the worker's process (the API of `optics run`) that takes each snapshot as the
/// worker builds it: the batch itself, handed over as soon as its underlying is built, before
/// the file is encoded and written, so what the API serves never waits for the store. It
/// then need not read the file back and decode its Parquet for every snapshot of every cycle
/// (hundreds of megabytes a minute for the default universe). The version handed over is one
/// past the last written or handed over ([`SnapshotStore::next_handover_version`]): each
/// handover is newer than the last, and a file announced later with a version the reader
/// already holds, or an older one, is passed over. Called on the worker's compute threads, for
/// many snapshots at once: be quick and do not block.
pub trait PublishedSnapshots: Send + Sync {
    /// Version `version` of `key`, whose rows are `batch`, is built (its file, if any, follows);
    /// whether the reader now answers with it (not when it holds this version or a newer one,
    /// nor for a dataset it does not serve).
    fn published(&self, key: &SnapshotKey, version: u64, batch: &RecordBatch) -> bool;

    /// The snapshots of `underlying` the reader just took serve for the first time the quote
    /// batches of `batch_times` (each batch's newest quote time and its entry into the bus),
    /// as of `served_at` on the worker's clock: how old each batch is when the reader first
    /// answers with it. Called only when the reader took one of them
    /// ([`published`](Self::published)).
    fn quotes_served(
        &self,
        underlying: &str,
        batch_times: &[BatchTimes],
        served_at: DateTime<Utc>,
    ) {
        let _ = (underlying, batch_times, served_at);
    }
}

/// A wave being built on the blocking threads.
type BuildTask = tokio::task::JoinHandle<BuiltWave>;

/// Worker settings.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Consumer group of the quote topic, shared by the workers that split the underlyings.
    pub group: String,
    /// This worker's id, unique within the group (names its own reference-topic group).
    pub worker_id: String,
    /// Time between cycles.
    pub interval: Duration,
    /// Continuously compounded risk-free rate, decimal (the carry fallback and discounting).
    pub rate: f64,
    /// Most messages taken from the bus per read.
    pub max_batch_messages: usize,
    /// Publish the chain only (no exposures, exposure summary or flow): for past sessions,
    /// where only the end-of-day chain is kept (chain-at-time) and the live datasets would be
    /// overwritten by the next session anyway.
    pub chain_only: bool,
    /// Contracts built at once, about (see [`WAVE_CONTRACTS`], the default).
    pub wave_contracts: usize,
    /// Least market time between two snapshots of one underlying written to the store, for a
    /// worker with a reader in its process ([`ComputeWorker::with_local_reader`]): that reader
    /// takes every cycle's batches directly, so the Parquet files (the history, `optics sql`,
    /// a restart) need not be written every cycle. An underlying is still written at its first
    /// cycle, once its quotes reach the session's close (the session close reads that
    /// snapshot), and when the worker stops. Zero (the default), and always without a reader
    /// in the process: every cycle's snapshots are written, as replicas on the bus need.
    pub store_every: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            group: "optics-compute".into(),
            worker_id: "0".into(),
            interval: Duration::from_secs(1),
            rate: 0.04,
            max_batch_messages: 256,
            chain_only: false,
            wave_contracts: WAVE_CONTRACTS,
            store_every: Duration::ZERO,
        }
    }
}

impl WorkerConfig {
    /// The worker's own group on the reference topic: every worker receives all of the
    /// metadata its books need.
    pub fn books_reference_group(&self) -> String {
        format!("{}-ref-{}", self.group, self.worker_id)
    }

    /// The group every worker of `group` joins on the reference topic: each reference row
    /// reaches one of them, which merges it into the store. (No worker id can make a
    /// [`books_reference_group`](Self::books_reference_group) equal to it: `-ref-` vs
    /// `-refe`.)
    pub fn store_reference_group(&self) -> String {
        format!("{}-reference-store", self.group)
    }
}

/// What a delivery is applied to (see "Scaling out" in the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ApplyTo {
    /// The books and the rows kept for the store: quotes, daily bars, offline workers.
    Everything,
    /// The books only: the worker's own reference subscription.
    Books,
    /// The rows kept for the store only: the shared reference subscription.
    Store,
}

impl ApplyTo {
    fn books(self) -> bool {
        self != Self::Store
    }

    fn store(self) -> bool {
        self != Self::Books
    }
}

/// What can stop a worker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The bus failed.
    #[error("bus: {0}")]
    Bus(#[from] BusError),
    /// The store failed.
    #[error("snapshot store: {0}")]
    Store(#[from] StoreError),
    /// A message did not decode into its rows.
    #[error("message: {0}")]
    Schema(#[from] SchemaError),
    /// Building an underlying's snapshots failed.
    #[error("building {underlying}: {reason}")]
    Build {
        /// The underlying.
        underlying: String,
        /// Why.
        reason: String,
    },
    /// [`ComputeWorker::run`] on a worker built without a bus.
    #[error("an offline worker has no bus to consume")]
    Offline,
    /// The blocking build task panicked or was cancelled.
    #[error("compute task: {0}")]
    Task(String),
    /// A market-wide reference table kept changing while it was being merged into.
    #[error("{dataset}: the market-wide table kept changing while merging ({attempts} attempts)")]
    Contended {
        /// The dataset.
        dataset: &'static str,
        /// Merges tried.
        attempts: usize,
    },
}

/// Counters of a worker's life, for logs and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Deliveries applied (a reference message may arrive twice: for the books and for the
    /// store).
    pub messages: u64,
    /// Quotes accepted into books.
    pub quotes_accepted: u64,
    /// Quotes ignored as stale or of an earlier session.
    pub quotes_ignored: u64,
    /// Cycles that published something.
    pub cycles: u64,
    /// Snapshot files published.
    pub snapshots: u64,
    /// Underlyings skipped in a cycle because their snapshots could not be built.
    pub build_failures: u64,
    /// Books whose quotes were forgotten because the group moved their partition to another
    /// worker.
    pub books_released: u64,
    /// Reference rows (daily bars, earnings, dividends, borrow fees) received for the store:
    /// those this worker merges.
    pub reference_rows: u64,
    /// Cycles of [`ComputeWorker::run`] whose writes to the store failed (nothing consumed
    /// was committed; the next cycle tries again).
    pub publish_failures: u64,
}

/// What a running worker holds, as of its last cycle's start (the worker runs in a task of its
/// own, so it keeps these counters and `/metrics` reads them): `worker_books` (items:
/// contracts whose latest quote the books hold — one session's listing, replaced when the
/// next session starts; bytes: the books) and `worker_pending_reference` (items: reference
/// rows received and not merged into the store yet; emptied by every cycle).
#[derive(Debug, Default)]
pub struct WorkerMemory {
    contracts: AtomicUsize,
    book_bytes: AtomicUsize,
    reference_rows: AtomicUsize,
    reference_bytes: AtomicUsize,
}

impl WorkerMemory {
    fn record(&self, books: &BTreeMap<String, Arc<UnderlyingBook>>, pending: &PendingReference) {
        use optics_schemas::memory::HeapBytes;
        let contracts = books.values().map(|b| b.len()).sum();
        let bytes = books
            .iter()
            .map(|(symbol, book)| {
                symbol.capacity() + std::mem::size_of::<UnderlyingBook>() + book.heap_bytes()
            })
            .sum();
        self.contracts.store(contracts, AtomicOrdering::Relaxed);
        self.book_bytes.store(bytes, AtomicOrdering::Relaxed);
        self.reference_rows
            .store(pending.rows(), AtomicOrdering::Relaxed);
        self.reference_bytes
            .store(pending.heap_bytes(), AtomicOrdering::Relaxed);
    }
}

impl MemoryHolder for WorkerMemory {
    fn held_memory(&self, out: &mut Vec<HeldMemory>) {
        out.push(HeldMemory::new(
            "worker_books",
            self.contracts.load(AtomicOrdering::Relaxed),
            self.book_bytes.load(AtomicOrdering::Relaxed),
        ));
        out.push(HeldMemory::new(
            "worker_pending_reference",
            self.reference_rows.load(AtomicOrdering::Relaxed),
            self.reference_bytes.load(AtomicOrdering::Relaxed),
        ));
    }
}

/// A compute worker over a bus, a store and a clock.
pub struct ComputeWorker {
    /// `None` for an offline worker (replay, backfill): snapshots only, no events.
    bus: Option<Arc<dyn Bus>>,
    store: SnapshotStore,
    clock: Arc<dyn Clock>,
    config: WorkerConfig,
    books: BTreeMap<String, Arc<UnderlyingBook>>,
    /// The quote topic's partition each underlying's quotes came from (the bus keys quotes by
    /// underlying), to release the books of partitions the group moves to another worker.
    quote_partitions: BTreeMap<String, u32>,
    /// Reference rows not merged into the store yet.
    pending_reference: PendingReference,
    stats: WorkerStats,
    /// What it holds, as of the last cycle.
    memory: Arc<WorkerMemory>,
    /// The reader in this process that takes each snapshot as it is published, if any.
    local_reader: Option<Arc<dyn PublishedSnapshots>>,
    /// Whether the cycles of [`run`](Self::run) manage to write to the store.
    health: Arc<HealthTracker>,
}

impl fmt::Debug for ComputeWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComputeWorker")
            .field("config", &self.config)
            .field("underlyings", &self.books.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl ComputeWorker {
    /// A worker with no state yet.
    pub fn new(
        bus: Arc<dyn Bus>,
        store: SnapshotStore,
        clock: Arc<dyn Clock>,
        config: WorkerConfig,
    ) -> Self {
        Self {
            bus: Some(bus),
            store,
            clock,
            config,
            books: BTreeMap::new(),
            quote_partitions: BTreeMap::new(),
            pending_reference: PendingReference::default(),
            stats: WorkerStats::default(),
            memory: Arc::default(),
            local_reader: None,
            health: Arc::new(HealthTracker::new(components::SNAPSHOT_PUBLICATION)),
        }
    }

    /// A worker without a bus, fed by [`apply`](Self::apply) and publishing with
    /// [`publish_dirty`](Self::publish_dirty): replay and backfill, where nobody listens for
    /// events. [`run`](Self::run) on it fails. The reference rows it is fed are kept until
    /// [`publish_reference`](Self::publish_reference), which its caller may leave out when
    /// it writes the reference tables itself (seeding writes the whole history at once).
    pub fn offline(store: SnapshotStore, clock: Arc<dyn Clock>, config: WorkerConfig) -> Self {
        Self {
            bus: None,
            store,
            clock,
            config,
            books: BTreeMap::new(),
            quote_partitions: BTreeMap::new(),
            pending_reference: PendingReference::default(),
            stats: WorkerStats::default(),
            memory: Arc::default(),
            local_reader: None,
            health: Arc::new(HealthTracker::new(components::SNAPSHOT_PUBLICATION)),
        }
    }

    /// Hands every snapshot published to `reader` as well (see [`PublishedSnapshots`]).
    #[must_use]
    pub fn with_local_reader(mut self, reader: Arc<dyn PublishedSnapshots>) -> Self {
        self.local_reader = Some(reader);
        self
    }

    /// The counters so far.
    pub fn stats(&self) -> &WorkerStats {
        &self.stats
    }

    /// What the worker holds, updated at the start of every cycle of [`run`](Self::run) (and by
    /// [`record_memory`](Self::record_memory)): take it before `run` consumes the worker.
    pub fn memory(&self) -> Arc<WorkerMemory> {
        Arc::clone(&self.memory)
    }

    /// Whether the cycles of [`run`](Self::run) manage to write to the store (`/health`): take
    /// it before `run` consumes the worker.
    pub fn health(&self) -> Arc<HealthTracker> {
        Arc::clone(&self.health)
    }

    /// Updates [`memory`](Self::memory) to what the worker holds now.
    pub fn record_memory(&self) {
        self.memory.record(&self.books, &self.pending_reference);
    }

    /// The book of `underlying`, if any quote or reference row arrived for it.
    pub fn book(&self, underlying: &str) -> Option<&UnderlyingBook> {
        self.books.get(underlying).map(Arc::as_ref)
    }

    fn book_mut(&mut self, underlying: &str) -> &mut UnderlyingBook {
        Arc::make_mut(self.books.entry(underlying.to_owned()).or_default())
    }

    /// Applies one bus message to the state. Daily bars, earnings reports, dividends and borrow
    /// fees are kept for [`publish_reference`](Self::publish_reference) (dividends also set
    /// the books' dividend yields). Messages the worker does not use (ticks, calendars,
    /// snapshot events) are accepted and ignored. (A running worker applies each of its two
    /// reference subscriptions to one side only: see "Scaling out" in the module documentation.)
    pub fn apply(&mut self, message: &Message) -> Result<(), WorkerError> {
        self.apply_to(message, None, ApplyTo::Everything)
    }

    /// [`apply`](Self::apply) of a message that entered the bus at `entered_bus`, restricted
    /// to the books or to the rows kept for the store.
    fn apply_to(
        &mut self,
        message: &Message,
        entered_bus: Option<SystemTime>,
        to: ApplyTo,
    ) -> Result<(), WorkerError> {
        self.stats.messages += 1;
        let Message::Data(data) = message else {
            return Ok(());
        };
        match data.dataset() {
            Dataset::OptionQuotes if to.books() => {
                let rows = data.rows::<OptionQuote>()?;
                let applied = self
                    .book_mut(data.key())
                    .apply_quote_batch(rows, entered_bus);
                self.stats.quotes_accepted += applied.accepted as u64;
                self.stats.quotes_ignored += (applied.stale + applied.previous_session) as u64;
            }
            Dataset::Companies if to.books() => {
                for company in Company::from_batch(data.batch())? {
                    let symbol = company.symbol.clone();
                    self.book_mut(&symbol).set_company(company);
                }
            }
            Dataset::Dividends => {
                let dividends = Dividend::from_batch(data.batch())?;
                if to.books() {
                    for dividend in &dividends {
                        if let Some(per_year) = annual_dividend(dividend) {
                            let symbol = dividend.symbol.clone();
                            self.book_mut(&symbol).set_annual_dividend(per_year);
                        }
                    }
                }
                if to.store() {
                    self.keep_for_store(dividends, |p| &mut p.dividends);
                }
            }
            Dataset::DailyBars if to.store() => {
                let bars = DailyBar::from_batch(data.batch())?;
                self.keep_for_store(bars, |p| &mut p.bars);
            }
            Dataset::Earnings if to.store() => {
                let reports = EarningsEvent::from_batch(data.batch())?;
                self.keep_for_store(reports, |p| &mut p.earnings);
            }
            Dataset::BorrowRates if to.store() => {
                let fees = BorrowRate::from_batch(data.batch())?;
                self.keep_for_store(fees, |p| &mut p.borrow);
            }
            // Not for this subscription, or not used by the worker (ticks, calendars).
            Dataset::OptionQuotes
            | Dataset::Companies
            | Dataset::DailyBars
            | Dataset::Earnings
            | Dataset::BorrowRates
            | Dataset::UnderlyingTicks
            | Dataset::EconomicCalendar => {}
        }
        Ok(())
    }

    /// Adds `rows` to their table of the pending reference rows (`table`), counted in
    /// [`WorkerStats::reference_rows`].
    fn keep_for_store<R>(&mut self, rows: Vec<R>, table: fn(&mut PendingReference) -> &mut Vec<R>) {
        self.stats.reference_rows += rows.len() as u64;
        table(&mut self.pending_reference).extend(rows);
    }

    /// Builds and publishes every dirty underlying as of `now`; returns the events published
    /// (also put on the bus's snapshot topic), in the order of the underlyings and datasets.
    ///
    /// The underlyings are built in waves of about [`WorkerConfig::wave_contracts`] contracts, largest book
    /// first ([`cycle::waves`]), and each wave is published while the next one builds: a
    /// cycle holds the snapshots of at most two waves, not of the whole universe (the
    /// default universe's were ~160 MB a cycle; at `--universe 960`, gigabytes), and the
    /// first underlyings are served before the last are computed.
    ///
    /// An underlying whose snapshots cannot be built is skipped (logged, counted in
    /// [`WorkerStats::build_failures`]) and the others are published; its book is built again
    /// once it changes. Every file is visible in the store before its event is published, and
    /// every file of the cycle before this returns (the caller commits after that).
    pub async fn publish_dirty(
        &mut self,
        now: DateTime<Utc>,
    ) -> Result<Vec<SnapshotEvent>, WorkerError> {
        self.publish_books(now, false).await
    }

    /// [`publish_dirty`](Self::publish_dirty), also writing to the store every underlying
    /// whose latest snapshot only the in-process reader has (see [`WorkerConfig::store_every`]):
    /// what a stopping worker runs last.
    pub async fn publish_all_unstored(
        &mut self,
        now: DateTime<Utc>,
    ) -> Result<Vec<SnapshotEvent>, WorkerError> {
        self.publish_books(now, true).await
    }

    /// Builds the dirty books, and the books due for the store whose latest state the store
    /// does not have; hands every one built to the in-process reader; writes the files of
    /// those due for the store (all of them without a reader in the process, or with `flush`).
    async fn publish_books(
        &mut self,
        now: DateTime<Utc>,
        flush: bool,
    ) -> Result<Vec<SnapshotEvent>, WorkerError> {
        let store_every = self.store_every();
        let store_due = |book: &UnderlyingBook| {
            flush
                || store_every.is_zero()
                || book.quoted_at_close()
                || book
                    .stored_at()
                    .is_none_or(|at| (now - at).to_std().unwrap_or_default() >= store_every)
        };
        let mut to_store = std::collections::BTreeSet::new();
        let mut dirty: Vec<(String, Arc<UnderlyingBook>)> = Vec::new();
        for (underlying, book) in self.books.iter().filter(|(_, b)| !b.is_empty()) {
            let due = store_due(book);
            if book.is_dirty() || (book.is_unstored() && due) {
                if due {
                    to_store.insert(underlying.clone());
                }
                dirty.push((underlying.clone(), Arc::clone(book)));
            }
        }
        if dirty.is_empty() {
            return Ok(Vec::new());
        }
        let to_store = Arc::new(to_store);
        let ctx = CycleContext {
            as_of: now,
            rate: self.config.rate,
            chain_only: self.config.chain_only,
        };
        let position: BTreeMap<String, usize> = dirty
            .iter()
            .enumerate()
            .map(|(i, (underlying, _))| (underlying.clone(), i))
            .collect();
        let mut waves = cycle::waves(dirty, self.config.wave_contracts.max(1)).into_iter();
        let mut building = waves
            .next()
            .map(|wave| self.build_wave(wave, ctx, Arc::clone(&to_store)));
        let mut events = Vec::new();
        while let Some(wave) = building.take() {
            let built = wave.await.map_err(|e| WorkerError::Task(e.to_string()))?;
            building = waves
                .next()
                .map(|wave| self.build_wave(wave, ctx, Arc::clone(&to_store)));
            events.extend(self.publish_wave(built, &to_store, now).await?);
        }
        // Waves go largest book first; the caller gets the underlyings' order back (a stable
        // sort keeps each underlying's datasets in order).
        events.sort_by_key(|event| position.get(&event.underlying).copied());
        self.stats.cycles += 1;
        Ok(events)
    }

    /// How often an underlying's files go to the store ([`WorkerConfig::store_every`]): zero
    /// (every cycle) without a reader in the process, which takes the cycles in between.
    fn store_every(&self) -> Duration {
        if self.local_reader.is_some() {
            self.config.store_every
        } else {
            Duration::ZERO
        }
    }

    /// Builds and encodes one wave of underlyings off the async threads (the API may share this
    /// runtime), on rayon: each underlying's build, handed to a reader in the same process the
    /// moment it is done, then the Parquet encoding of every file.
    fn build_wave(
        &self,
        wave: Vec<(String, Arc<UnderlyingBook>)>,
        ctx: CycleContext,
        to_store: Arc<std::collections::BTreeSet<String>>,
    ) -> BuildTask {
        let store = self.store.clone();
        let reader = self.local_reader.clone();
        let clock = Arc::clone(&self.clock);
        tokio::task::spawn_blocking(move || {
            let built = match reader {
                Some(reader) => cycle::build_all_then(&wave, &ctx, &|underlying, book, built| {
                    hand_over(&*reader, &store, &*clock, underlying, book, built);
                }),
                None => cycle::build_all(&wave, &ctx),
            };
            encode_all(&store, built, &to_store)
        })
    }

    /// Publishes one built wave (the files of the underlyings `to_store`, written at `now`);
    /// an underlying that failed to build is skipped and waits for its book to change. Returns
    /// the events of the files published.
    async fn publish_wave(
        &mut self,
        built: BuiltWave,
        to_store: &std::collections::BTreeSet<String>,
        now: DateTime<Utc>,
    ) -> Result<Vec<SnapshotEvent>, WorkerError> {
        let mut files = Vec::new();
        let mut built_underlyings = Vec::with_capacity(built.len());
        for (underlying, outcome) in built {
            match outcome {
                Ok(encoded) => {
                    files.extend(encoded.into_iter().map(|encoded| {
                        let key =
                            SnapshotKey::new(encoded.dataset, encoded.trade_date, &*underlying);
                        (key, encoded.file)
                    }));
                    built_underlyings.push(underlying);
                }
                Err(error) => {
                    tracing::warn!(
                        underlying = %underlying,
                        %error,
                        "skipping an underlying whose snapshots could not be built"
                    );
                    self.stats.build_failures += 1;
                    // The same book would fail the same way: wait for it to change.
                    if let Some(book) = self.books.get_mut(&underlying) {
                        Arc::make_mut(book).mark_published();
                    }
                }
            }
        }
        let events = self.publish_files(files).await?;
        let store_every = self.store_every();
        for underlying in &built_underlyings {
            if let Some(book) = self.books.get_mut(underlying) {
                let book = Arc::make_mut(book);
                if !to_store.contains(underlying) {
                    book.mark_handed_over();
                } else if book.stored_at().is_none() {
                    // The first write of every underlying comes in one cycle; counted from a
                    // phase of its own, the later ones spread evenly over `store_every`
                    // instead of all falling in one long cycle.
                    book.mark_stored(now - store_phase(underlying, store_every));
                } else {
                    book.mark_stored(now);
                }
            }
        }
        self.stats.snapshots += events.len() as u64;
        Ok(events)
    }

    /// Merges the reference rows applied since the last call into the store's market-wide
    /// `daily_bars`, `earnings`, `dividends` and `borrow_rates` tables
    /// ([`reference::merge_into_market_wide`], the rule `optics import bars` uses too): the
    /// partition of the trade date `now` belongs to (bars: of their last date, when later), or
    /// of a later stored one. Each publication is announced on the bus; returns the events.
    /// On a failure the rows not merged stay pending.
    pub async fn publish_reference(
        &mut self,
        now: DateTime<Utc>,
    ) -> Result<Vec<SnapshotEvent>, WorkerError> {
        if self.pending_reference.is_empty() {
            return Ok(Vec::new());
        }
        let trade_date = NyseCalendar.market_state(now).trade_date;
        let (events, merged) = self
            .pending_reference
            .publish(&self.store, trade_date, self.clock.now())
            .await;
        if let Some(bus) = &self.bus {
            for event in &events {
                announce(&**bus, event).await?;
            }
        }
        self.stats.snapshots += events.len() as u64;
        merged?;
        Ok(events)
    }

    /// Publishes `files`, up to [`PUBLISH_CONCURRENCY`] at a time, each announced on the bus
    /// once its file is visible; returns the events in the order of `files`. The first failure
    /// stops the rest (the files already written stay: each is a complete version).
    async fn publish_files(
        &self,
        files: Vec<(SnapshotKey, EncodedSnapshot)>,
    ) -> Result<Vec<SnapshotEvent>, WorkerError> {
        let mut events: Vec<Option<SnapshotEvent>> = vec![None; files.len()];
        let mut pending = files.into_iter().enumerate();
        let mut running = tokio::task::JoinSet::new();
        loop {
            while running.len() < PUBLISH_CONCURRENCY
                && let Some((index, (key, file))) = pending.next()
            {
                let store = self.store.clone();
                let bus = self.bus.clone();
                let clock = Arc::clone(&self.clock);
                running.spawn(async move {
                    let event = store.publish_encoded(&key, file, clock.now()).await?;
                    if let Some(bus) = bus {
                        announce(&*bus, &event).await?;
                    }
                    Ok::<_, WorkerError>((index, event))
                });
            }
            let Some(joined) = running.join_next().await else {
                break;
            };
            let (index, event) = joined.map_err(|e| WorkerError::Task(e.to_string()))??;
            events[index] = Some(event);
        }
        Ok(events.into_iter().flatten().collect())
    }

    /// Consumes the bus until `shutdown` resolves or the bus closes, publishing every
    /// `interval` and committing after each publication. A last cycle runs before returning.
    ///
    /// Subscribes to the quotes and daily bars in the worker group, and to the reference topic
    /// twice: in the worker's own group for its books, and in the group shared by the workers
    /// for the store (see "Scaling out" in the module documentation).
    pub async fn run(
        mut self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<WorkerStats, WorkerError> {
        let bus = Arc::clone(self.bus.as_ref().ok_or(WorkerError::Offline)?);
        let mut subscriptions = Subscriptions::join(&*bus, &self.config).await?;
        let max = self.config.max_batch_messages.max(1);
        let interval = self.config.interval;
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Cycles follow the feed ([`cycle_start`]): quotes start one once the rest of their
        // burst is in, rather than waiting out the tick's phase. The tick runs one when nothing
        // arrives. Only a cycle that built something counts as the last one: a tick that finds
        // nothing to build must not lock the cycles to its phase, just ahead of every burst.
        let timing = CycleTiming::for_interval(interval);
        let mut last_cycle = tokio::time::Instant::now();
        let settle = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(settle);
        // When the first quotes since the last cycle arrived, while a cycle is scheduled.
        let mut settling: Option<tokio::time::Instant> = None;
        tokio::pin!(shutdown);
        let (mut quotes_open, mut bars_open) = (true, true);
        let (mut books_reference_open, mut store_reference_open) = (true, true);
        loop {
            let Subscriptions {
                quotes,
                bars,
                books_reference,
                store_reference,
            } = &mut subscriptions;
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                batch = books_reference.next_batch(max), if books_reference_open => {
                    books_reference_open = self.apply_deliveries(batch?, ApplyTo::Books)?;
                }
                batch = store_reference.next_batch(max), if store_reference_open => {
                    store_reference_open = self.apply_deliveries(batch?, ApplyTo::Store)?;
                }
                batch = bars.next_batch(max), if bars_open => {
                    bars_open = self.apply_deliveries(batch?, ApplyTo::Everything)?;
                }
                () = &mut settle, if settling.is_some() => {
                    settling = None;
                    let started = tokio::time::Instant::now();
                    if self.cycle_built(&mut subscriptions, false).await? {
                        last_cycle = started;
                        tick.reset();
                    }
                }
                _ = tick.tick() => {
                    // Takes whatever has arrived: a scheduled cycle would find nothing left.
                    settling = None;
                    let started = tokio::time::Instant::now();
                    if self.cycle_built(&mut subscriptions, false).await? {
                        last_cycle = started;
                    }
                }
                batch = quotes.next_batch(max), if quotes_open => {
                    self.release_revoked(&mut **quotes);
                    quotes_open = self.apply_deliveries(batch?, ApplyTo::Everything)?;
                    if !quotes_open {
                        break;
                    }
                    let now = tokio::time::Instant::now();
                    let first = *settling.get_or_insert(now);
                    settle
                        .as_mut()
                        .reset(cycle_start(first, now, last_cycle, timing));
                }
            }
        }
        self.cycle(&mut subscriptions, true).await?;
        Ok(self.stats)
    }

    /// One cycle (see [`cycle`](Self::cycle)), started now: whether it built any underlying.
    async fn cycle_built(
        &mut self,
        subscriptions: &mut Subscriptions,
        flush: bool,
    ) -> Result<bool, WorkerError> {
        let built_before = self.stats.cycles;
        self.cycle(subscriptions, flush).await?;
        Ok(self.stats.cycles > built_before)
    }

    /// Applies a read to `to`; `false` when the subscription has ended.
    fn apply_deliveries(
        &mut self,
        batch: Option<Vec<Delivery>>,
        to: ApplyTo,
    ) -> Result<bool, WorkerError> {
        let Some(deliveries) = batch else {
            return Ok(false);
        };
        for delivery in &deliveries {
            if let Message::Data(data) = &delivery.message
                && data.dataset() == Dataset::OptionQuotes
                && self.quote_partitions.get(data.key()) != Some(&delivery.partition)
            {
                self.quote_partitions
                    .insert(data.key().to_owned(), delivery.partition);
            }
            self.apply_to(&delivery.message, delivery.entered_bus, to)?;
        }
        Ok(true)
    }

    /// Forgets the quotes of the underlyings whose quote partitions the group has moved to
    /// another worker ([`Subscription::take_revoked`]): their new owner builds them from the
    /// quotes after the group's last commit, and a build of the quotes held here, published
    /// after the new owner's, would replace newer snapshots with older ones. Called after
    /// every read of the quotes (before applying it) and before every cycle.
    fn release_revoked(&mut self, quotes: &mut dyn Subscription) {
        let revoked = quotes.take_revoked();
        if revoked.is_empty() {
            return;
        }
        let released: Vec<String> = self
            .quote_partitions
            .iter()
            .filter(|(_, partition)| revoked.contains(partition))
            .map(|(underlying, _)| underlying.clone())
            .collect();
        for underlying in &released {
            self.quote_partitions.remove(underlying);
            if let Some(book) = self.books.get_mut(underlying) {
                Arc::make_mut(book).release_quotes();
                self.stats.books_released += 1;
            }
        }
        tracing::info!(
            partitions = ?revoked,
            underlyings = ?released,
            "quote partitions moved to another worker; their books released"
        );
    }

    /// What a cycle publishes: the dirty books' snapshots, then the reference rows received for
    /// the store.
    async fn publish_cycle(&mut self, now: DateTime<Utc>, flush: bool) -> Result<(), WorkerError> {
        self.publish_books(now, flush).await?;
        self.publish_reference(now).await?;
        Ok(())
    }

    /// One cycle: publish what changed (snapshots, then the reference rows received for the
    /// store), then commit what was consumed.
    ///
    /// A store that refuses writes (read-only, full, unreachable) does not stop the worker:
    /// the failure is logged as an error and reported by [`health`](Self::health), nothing is
    /// committed, and the books stay dirty, so the next cycle publishes them once the store
    /// takes writes again. Readers keep serving the last snapshots meanwhile.
    async fn cycle(
        &mut self,
        subscriptions: &mut Subscriptions,
        flush: bool,
    ) -> Result<(), WorkerError> {
        let now = self.clock.now();
        self.release_revoked(&mut *subscriptions.quotes);
        // Before publishing: the books as this cycle builds them, and the reference rows it is
        // about to merge (what the worker holds at its fullest).
        self.record_memory();
        match self.publish_cycle(now, flush).await {
            Ok(()) => self.health.succeeded(now),
            Err(WorkerError::Store(error)) => {
                tracing::error!(%error, "writing snapshots to the store failed; retrying next cycle");
                self.stats.publish_failures += 1;
                self.health.failed(
                    now,
                    failure_category(&error, "writing to the snapshot store"),
                );
                return Ok(());
            }
            Err(other) => return Err(other),
        }
        subscriptions.commit().await?;
        Ok(())
    }
}

/// What a running worker consumes (see "Scaling out" in the module documentation).
struct Subscriptions {
    /// Option quotes, in the worker group.
    quotes: Box<dyn Subscription>,
    /// Daily bars, in the worker group.
    bars: Box<dyn Subscription>,
    /// The reference topic in the worker's own group: for its books.
    books_reference: Box<dyn Subscription>,
    /// The reference topic in the group shared by the workers: for the store.
    store_reference: Box<dyn Subscription>,
}

impl Subscriptions {
    /// Joins the four groups at once: on Kafka each join waits for the group's rebalance
    /// (seconds for a new group), so one after the other would add those waits up before the
    /// worker serves anything.
    async fn join(bus: &dyn Bus, config: &WorkerConfig) -> Result<Self, BusError> {
        let (books_group, store_group) = (
            config.books_reference_group(),
            config.store_reference_group(),
        );
        let (quotes, bars, books_reference, store_reference) = tokio::try_join!(
            bus.subscribe(topics::OPTION_QUOTES, &config.group),
            bus.subscribe(topics::DAILY_BARS, &config.group),
            bus.subscribe(topics::REFERENCE, &books_group),
            bus.subscribe(topics::REFERENCE, &store_group),
        )?;
        Ok(Self {
            quotes,
            bars,
            books_reference,
            store_reference,
        })
    }

    /// Commits everything received so far: call it once all of it is published.
    async fn commit(&mut self) -> Result<(), BusError> {
        for subscription in [
            &mut self.quotes,
            &mut self.bars,
            &mut self.books_reference,
            &mut self.store_reference,
        ] {
            subscription.commit().await?;
        }
        Ok(())
    }
}

/// The snapshots of every built underlying `to_store` encoded as Parquet files (on rayon; the
/// others have none to write); an encoding failure fails its underlying like a build failure.
fn encode_all(
    store: &SnapshotStore,
    built: Vec<(String, Result<Vec<DatasetSnapshot>, WorkerError>)>,
    to_store: &std::collections::BTreeSet<String>,
) -> BuiltWave {
    built
        .into_par_iter()
        .map(|(underlying, outcome)| {
            if !to_store.contains(&underlying) {
                return (underlying, outcome.map(|_| Vec::new()));
            }
            let encoded = outcome.and_then(|snapshots| {
                snapshots
                    .into_par_iter()
                    .map(|snap| {
                        let file = store.encode(&snap.batch, snap.sort_columns)?;
                        Ok(EncodedDataset {
                            dataset: snap.dataset,
                            trade_date: snap.trade_date,
                            file,
                        })
                    })
                    .collect::<Result<Vec<_>, WorkerError>>()
            });
            (underlying, encoded)
        })
        .collect()
}

/// Where in `store_every` an underlying's writes to the store fall: a fixed share of it per
/// underlying (from its name), so that the underlyings written first in the same cycle are
/// written again at different cycles.
fn store_phase(underlying: &str, store_every: Duration) -> chrono::TimeDelta {
    // FNV-1a: stable across runs and platforms (the std hasher is neither).
    let hash = underlying.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let millis = u64::try_from(store_every.as_millis()).unwrap_or(u64::MAX);
    chrono::TimeDelta::milliseconds(i64::try_from(hash % millis.max(1)).unwrap_or(0))
}

/// Hands one built underlying to the reader in the same process: each dataset's batch at its
/// handover version, then, if the reader took any, the quote batches those snapshots serve for
/// the first time, at the instant they are served. An underlying that failed to build hands over
/// nothing.
fn hand_over(
    reader: &dyn PublishedSnapshots,
    store: &SnapshotStore,
    clock: &dyn Clock,
    underlying: &str,
    book: &UnderlyingBook,
    built: &Result<Vec<DatasetSnapshot>, WorkerError>,
) {
    let Ok(snapshots) = built else {
        return;
    };
    let mut taken = false;
    for snapshot in snapshots {
        let key = SnapshotKey::new(snapshot.dataset, snapshot.trade_date, underlying);
        taken |= reader.published(&key, store.next_handover_version(&key), &snapshot.batch);
    }
    if taken {
        reader.quotes_served(underlying, book.unserved_batches(), clock.now());
    }
}

/// Puts a publication's event on the snapshot topic. A closed bus (shutdown) has no one left to
/// tell; the file is published.
async fn announce(bus: &dyn Bus, event: &SnapshotEvent) -> Result<(), WorkerError> {
    match bus
        .publish(topics::SNAPSHOTS, Message::Snapshot(event.clone()))
        .await
    {
        Ok(()) | Err(BusError::Closed) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Dollars per share per year a dividend record implies at its schedule (none for a special
/// or irregular one).
fn annual_dividend(dividend: &Dividend) -> Option<f64> {
    let per_year = dividend.frequency.payments_per_year()?;
    let annual = dividend.amount * f64::from(per_year);
    (annual.is_finite() && annual >= 0.0).then_some(annual)
}
