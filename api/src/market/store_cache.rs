//! [`StoreMarketData`]: the latest snapshots of the store held decoded in memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::SystemTime;

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::flow::{ExpirationFlow, StrikeFlow};
use optics_compute::vol::{VIX_UNDERLYING, chain_vix};
use optics_pipeline::store::{MARKET_WIDE, Snapshot, SnapshotKey, SnapshotStore, StoreError};
use optics_pipeline::worker::{BatchTimes, PublishedSnapshots};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::memory::{HeapBytes, HeldMemory, MemoryHolder};
use optics_schemas::{
    BorrowRate, ChainRow, Company, DailyBar, Dataset, Dividend, EarningsEvent, EconomicEvent,
    ExposureRow, ExposureSummaryRow, FlowAggregateRow, FlowSnapshotRow, Record, SchemaError,
    SnapshotEvent,
};

use super::history::ChainHistory;
use super::{
    ChainView, Coverage, ExposureView, FlowAggregatesView, FlowView, SessionBar, VixPrint,
    VixSession, VixTape,
};
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::state::{MarketDataReader, ReadFuture, VolSeries};
use crate::ticker::Ticker;
use optics_compute::cores::CoresHistory;

/// Why a snapshot could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The store failed.
    #[error("snapshot store: {0}")]
    Store(#[from] StoreError),
    /// A snapshot did not decode.
    #[error("snapshot rows: {0}")]
    Schema(#[from] SchemaError),
}

/// Per-ticker entries with the trade date they belong to (a newer session replaces an older
/// one; an older session's late event never replaces a newer one).
type ByTicker<T> = HashMap<String, Held<T>>;

/// One ticker's snapshot of a dataset: the newest installed, and what it holds.
#[derive(Debug)]
struct Held<T> {
    trade_date: NaiveDate,
    version: u64,
    value: Arc<T>,
    /// Rows (or groups) held.
    items: usize,
    /// Bytes held, estimated when installed.
    bytes: usize,
}

impl<T> Held<T> {
    fn stamp(&self) -> (NaiveDate, u64) {
        (self.trade_date, self.version)
    }
}

/// A snapshot decoded for the cache, with what it holds.
struct Decoded<T> {
    value: T,
    items: usize,
    bytes: usize,
}

/// Items and bytes of every entry of `map`, as [`HeldMemory`] of `holder`.
fn held_of<T>(holder: &'static str, map: &ByTicker<T>) -> HeldMemory {
    let (items, bytes) = map.iter().fold((0, 0), |(items, bytes), (ticker, held)| {
        (
            items + held.items,
            bytes + held.bytes + ticker.capacity() + std::mem::size_of::<Held<T>>(),
        )
    });
    HeldMemory::new(holder, items, bytes)
}

#[derive(Debug, Default)]
struct Latest {
    chains: ByTicker<ChainView>,
    exposure_rows: ByTicker<Vec<ExposureRow>>,
    exposure_summaries: ByTicker<Vec<ExposureSummaryRow>>,
    exposures: HashMap<String, Arc<ExposureView>>,
    flows: ByTicker<FlowView>,
    flow_aggregates: ByTicker<FlowAggregatesView>,
    coverage: Arc<Coverage>,
    /// Companies, report dates, daily bars and releases of `coverage`, and their bytes.
    coverage_held: (usize, usize),
    /// Trade date and version of the `companies` snapshot behind `coverage.companies`.
    companies_stamp: Option<(NaiveDate, u64)>,
    /// Trade date and version of the `earnings` snapshot behind `coverage.earnings`.
    earnings_stamp: Option<(NaiveDate, u64)>,
    /// Trade date and version of the `daily_bars` snapshot behind `coverage.bars`.
    bars_stamp: Option<(NaiveDate, u64)>,
    /// Trade date and version of the `economic_calendar` snapshot behind `coverage.economic`.
    economic_stamp: Option<(NaiveDate, u64)>,
    /// Trade date and version of the `dividends` snapshot behind `coverage.dividends`.
    dividends_stamp: Option<(NaiveDate, u64)>,
    /// Trade date and version of the `borrow_rates` snapshot behind `coverage.borrow`.
    borrow_stamp: Option<(NaiveDate, u64)>,
}

/// A reference table newer than the one held, with its (trade date, version); `None` when
/// the held one is still the newest.
type Changed<T> = Option<((NaiveDate, u64), T)>;

/// The snapshot store seen by the API: see the [module documentation](super).
#[derive(Debug)]
pub struct StoreMarketData {
    store: SnapshotStore,
    history: ChainHistory,
    latest: RwLock<Latest>,
    /// Told the market time (`as_of`) of every snapshot installed, for the snapshot-age gauge.
    metrics: Metrics,
    /// Bumped after every swap (see [`MarketDataReader::generation`]).
    generation: AtomicU64,
    /// Bumped when a `vol_daily` partition is published (its event, or a newer newest
    /// partition found by [`load`](Self::load)): the held `vol_daily` series are then read
    /// again on their next use.
    vol_generation: AtomicU64,
    /// The newest `vol_daily` partition and version [`load`](Self::load) saw.
    vol_daily_newest: std::sync::Mutex<Option<(NaiveDate, u64)>>,
    /// The VIX of every SPX chain installed, this session.
    vix_tape: VixTape,
    /// Per live dataset (in [`LIVE_DATASETS`] order), the newest trade date the last
    /// [`load`](Self::load) or [`refresh`](Self::refresh) listed.
    newest_trade_dates: std::sync::Mutex<[Option<NaiveDate>; LIVE_DATASETS.len()]>,
}

/// The datasets held in memory.
const LIVE_DATASETS: [&str; 5] = [
    snapshot_datasets::CHAIN,
    snapshot_datasets::EXPOSURES,
    snapshot_datasets::EXPOSURE_SUMMARY,
    snapshot_datasets::FLOW,
    snapshot_datasets::FLOW_AGGREGATES,
];

impl StoreMarketData {
    /// An empty cache over `store`; call [`load`](Self::load) before serving.
    pub fn new(store: SnapshotStore) -> Self {
        Self {
            history: ChainHistory::new(store.clone()),
            store,
            latest: RwLock::new(Latest::default()),
            metrics: Metrics::new(),
            generation: AtomicU64::new(0),
            vol_generation: AtomicU64::new(0),
            vol_daily_newest: std::sync::Mutex::new(None),
            vix_tape: VixTape::default(),
            newest_trade_dates: std::sync::Mutex::new([None; LIVE_DATASETS.len()]),
        }
    }

    /// The metrics this cache reports snapshot ages to: give them to the API state
    /// ([`crate::AppState::with_metrics`]) so `/metrics` serves `optics_snapshot_age_seconds`.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The store read.
    pub fn store(&self) -> &SnapshotStore {
        &self.store
    }

    /// Loads the newest snapshot of every live dataset of every underlying, and the company
    /// map, skipping what is already held. Returns the number of snapshots loaded. Run once at
    /// start; then [`refresh`](Self::refresh).
    pub async fn load(&self) -> Result<usize, LoadError> {
        self.load_trade_dates(false).await
    }

    /// [`load`](Self::load) for a running server, looking only at the trade dates from the
    /// newest one the previous look found: workers publish on the current session's date, so
    /// a year of older partitions (a listing each) is not read again every second. A version
    /// written later under an older date (a replay of a past session) reaches the server
    /// through its snapshot event, or at its next start.
    pub async fn refresh(&self) -> Result<usize, LoadError> {
        self.load_trade_dates(true).await
    }

    async fn load_trade_dates(&self, from_newest_seen: bool) -> Result<usize, LoadError> {
        let mut loaded = 0;
        // A reference table whose every version fails to decode is logged and left out: the
        // live datasets (and the previous reference tables held) keep serving.
        if let Err(error) = self.load_coverage().await {
            tracing::warn!(%error, "reference tables not loaded");
        }
        self.check_vol_daily().await?;
        for (index, dataset) in LIVE_DATASETS.into_iter().enumerate() {
            let dates = self.store.trade_dates(dataset).await?;
            let floor = {
                let mut newest = self
                    .newest_trade_dates
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let floor = newest[index].filter(|_| from_newest_seen);
                if let Some(&date) = dates.last() {
                    newest[index] = Some(date);
                }
                floor
            };
            // Newest trade date first: the first partition found per underlying wins.
            let mut seen = std::collections::HashSet::new();
            let from_floor = dates
                .into_iter()
                .rev()
                .take_while(|date| floor.is_none_or(|f| *date >= f));
            for date in from_floor {
                for underlying in self.store.underlyings(dataset, date).await? {
                    if !seen.insert(underlying.clone()) {
                        continue;
                    }
                    let key = SnapshotKey::new(dataset, date, underlying);
                    // Re-reading what is already held is the expensive part of a poll.
                    let latest = self.store.latest(&key).await?;
                    if latest.is_none_or(|file| self.holds(&key, file.version)) {
                        continue;
                    }
                    // One snapshot that does not decode (in any version) is logged and
                    // skipped: it must not stop the start, nor the refresh of the partitions
                    // listed after it.
                    let installed = match self.store.read(&key).await {
                        Ok(Some(snapshot)) => self.install(&key, &snapshot).map(|()| true),
                        Ok(None) => Ok(false),
                        Err(error) => Err(LoadError::Store(error)),
                    };
                    match installed {
                        Ok(true) => loaded += 1,
                        Ok(false) => {}
                        Err(error) => {
                            tracing::warn!(%key, %error, "snapshot skipped: it does not load");
                        }
                    }
                }
            }
        }
        Ok(loaded)
    }

    /// Whether the cache holds `key` at `version` or newer.
    fn holds(&self, key: &SnapshotKey, version: u64) -> bool {
        let latest = self.read();
        let held = match key.dataset.as_str() {
            snapshot_datasets::CHAIN => latest.chains.get(&key.underlying).map(Held::stamp),
            snapshot_datasets::EXPOSURES => {
                latest.exposure_rows.get(&key.underlying).map(Held::stamp)
            }
            snapshot_datasets::EXPOSURE_SUMMARY => latest
                .exposure_summaries
                .get(&key.underlying)
                .map(Held::stamp),
            snapshot_datasets::FLOW => latest.flows.get(&key.underlying).map(Held::stamp),
            snapshot_datasets::FLOW_AGGREGATES => {
                latest.flow_aggregates.get(&key.underlying).map(Held::stamp)
            }
            _ => None,
        };
        held.is_some_and(|stamp| stamp >= (key.trade_date, version))
    }

    /// Bumps the `vol_daily` generation when the newest partition or its version changed.
    async fn check_vol_daily(&self) -> Result<(), LoadError> {
        let dataset = snapshot_datasets::VOL_DAILY;
        let Some(date) = self
            .store
            .latest_trade_date(dataset, MARKET_WIDE, None)
            .await?
        else {
            return Ok(());
        };
        let key = SnapshotKey::new(dataset, date, MARKET_WIDE);
        let newest = self.store.latest(&key).await?.map(|f| (date, f.version));
        let mut seen = self
            .vol_daily_newest
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if *seen != newest {
            *seen = newest;
            self.bump_vol_daily();
        }
        Ok(())
    }

    /// Reloads what `event` announces (a newer version of a partition). Events of datasets
    /// the API does not hold are ignored; a `vol_daily` event marks the held series stale.
    pub async fn apply(&self, event: &SnapshotEvent) -> Result<(), LoadError> {
        if event.dataset == snapshot_datasets::VOL_DAILY {
            self.bump_vol_daily();
            return Ok(());
        }
        if event.dataset == Dataset::Companies.name()
            || event.dataset == Dataset::Earnings.name()
            || event.dataset == Dataset::DailyBars.name()
            || event.dataset == Dataset::EconomicCalendar.name()
            || event.dataset == Dataset::Dividends.name()
            || event.dataset == Dataset::BorrowRates.name()
        {
            return self.load_coverage().await;
        }
        if !LIVE_DATASETS.contains(&event.dataset.as_str()) {
            return Ok(());
        }
        let key = SnapshotKey::new(
            event.dataset.as_str(),
            event.trade_date,
            event.underlying.as_str(),
        );
        // Handed over in process already (see `PublishedSnapshots`), or a newer one is held.
        if self.holds(&key, event.version) {
            return Ok(());
        }
        // The announced version itself, without a listing; when it is gone (pruned by a newer
        // publication) or does not decode, the partition's newest readable one.
        let snapshot = match self.store.read_version(&key, event.version).await {
            Ok(Some(snapshot)) => Some(snapshot),
            Ok(None) | Err(_) => self.store.read(&key).await?,
        };
        if let Some(snapshot) = snapshot {
            self.install(&key, &snapshot)?;
        }
        Ok(())
    }

    /// Reloads the coverage: the company map and the reference tables, each from its newest
    /// market-wide partition (a store with reports or releases imported but no company map yet
    /// still serves them).
    /// Reloads the reference tables (companies, earnings, daily bars, the economic calendar)
    /// from the store, for a process that takes its snapshots from the bus rather than by
    /// polling (`optics run`): what `optics import` merged into the store reaches its API.
    pub async fn load_reference(&self) -> Result<(), LoadError> {
        self.load_coverage().await
    }

    async fn load_coverage(&self) -> Result<(), LoadError> {
        let companies = self.load_companies().await?;
        let earnings = self.load_earnings().await?;
        let bars = self.load_bars().await?;
        let economic = self.load_economic().await?;
        let dividends = self.load_dividends().await?;
        let borrow = self.load_borrow().await?;
        // Nothing newer in the store: keep the held coverage and the generation (a poll must
        // not invalidate every cached answer).
        if companies.is_none()
            && earnings.is_none()
            && bars.is_none()
            && economic.is_none()
            && dividends.is_none()
            && borrow.is_none()
        {
            return Ok(());
        }
        let held = Arc::clone(&self.read().coverage);
        let mut latest = self.write();
        let mut coverage = Coverage {
            companies: held.companies.clone(),
            earnings: held.earnings.clone(),
            bars: Arc::clone(&held.bars),
            economic: Arc::clone(&held.economic),
            dividends: held.dividends.clone(),
            borrow: held.borrow.clone(),
        };
        if let Some((stamp, companies)) = companies {
            coverage.companies = companies;
            latest.companies_stamp = Some(stamp);
        }
        if let Some((stamp, earnings)) = earnings {
            coverage.earnings = earnings;
            latest.earnings_stamp = Some(stamp);
        }
        if let Some((stamp, bars)) = bars {
            coverage.bars = bars;
            latest.bars_stamp = Some(stamp);
        }
        if let Some((stamp, economic)) = economic {
            coverage.economic = economic;
            latest.economic_stamp = Some(stamp);
        }
        if let Some((stamp, dividends)) = dividends {
            coverage.dividends = dividends;
            latest.dividends_stamp = Some(stamp);
        }
        if let Some((stamp, borrow)) = borrow {
            coverage.borrow = borrow;
            latest.borrow_stamp = Some(stamp);
        }
        latest.coverage_held = coverage_held(&coverage);
        latest.coverage = Arc::new(coverage);
        drop(latest);
        self.bump();
        Ok(())
    }

    /// The company map from the `companies` snapshot, by symbol, when a newer one than the
    /// held is stored.
    async fn load_companies(&self) -> Result<Changed<Vec<Arc<Company>>>, LoadError> {
        let held = self.read().companies_stamp;
        let Some((stamp, snapshot)) = self
            .changed_market_wide(Dataset::Companies.name(), held)
            .await?
        else {
            return Ok(None);
        };
        let mut companies = Vec::new();
        for batch in &snapshot.batches {
            companies.extend(Company::from_batch(batch)?.into_iter().map(Arc::new));
        }
        companies.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        Ok(Some((stamp, companies)))
    }

    /// Every release of the `economic_calendar` snapshot, by date, time (untimed last),
    /// country and event, when a newer one than the held is stored (an import, a seeding).
    async fn load_economic(&self) -> Result<Changed<Arc<Vec<EconomicEvent>>>, LoadError> {
        let held = self.read().economic_stamp;
        let Some((stamp, snapshot)) = self
            .changed_market_wide(Dataset::EconomicCalendar.name(), held)
            .await?
        else {
            return Ok(None);
        };
        let mut events = Vec::new();
        for batch in &snapshot.batches {
            events.extend(EconomicEvent::from_batch(batch)?);
        }
        events.sort_by(|a, b| {
            (a.date, a.time.is_none(), a.time, &a.country, &a.event).cmp(&(
                b.date,
                b.time.is_none(),
                b.time,
                &b.country,
                &b.event,
            ))
        });
        Ok(Some((stamp, Arc::new(events))))
    }

    /// Dividends per symbol, ascending by ex-date (one per ex-date), from the `dividends`
    /// snapshot when a newer one than the held is stored.
    async fn load_dividends(&self) -> Result<Changed<BTreeMap<String, Vec<Dividend>>>, LoadError> {
        let held = self.read().dividends_stamp;
        let Some((stamp, snapshot)) = self
            .changed_market_wide(Dataset::Dividends.name(), held)
            .await?
        else {
            return Ok(None);
        };
        let mut by_symbol: BTreeMap<String, Vec<Dividend>> = BTreeMap::new();
        for batch in &snapshot.batches {
            for dividend in Dividend::from_batch(batch)? {
                by_symbol
                    .entry(dividend.symbol.clone())
                    .or_default()
                    .push(dividend);
            }
        }
        for paid in by_symbol.values_mut() {
            paid.sort_by_key(|d| d.ex_date);
            paid.dedup_by_key(|d| d.ex_date);
        }
        Ok(Some((stamp, by_symbol)))
    }

    /// Borrow fees per symbol, ascending by date (one per date), from the `borrow_rates`
    /// snapshot when a newer one than the held is stored.
    async fn load_borrow(&self) -> Result<Changed<BTreeMap<String, Vec<BorrowRate>>>, LoadError> {
        let held = self.read().borrow_stamp;
        let Some((stamp, snapshot)) = self
            .changed_market_wide(Dataset::BorrowRates.name(), held)
            .await?
        else {
            return Ok(None);
        };
        let mut by_symbol: BTreeMap<String, Vec<BorrowRate>> = BTreeMap::new();
        for batch in &snapshot.batches {
            for rate in BorrowRate::from_batch(batch)? {
                by_symbol.entry(rate.symbol.clone()).or_default().push(rate);
            }
        }
        for rates in by_symbol.values_mut() {
            rates.sort_by_key(|r| r.date);
            rates.dedup_by_key(|r| r.date);
        }
        Ok(Some((stamp, by_symbol)))
    }

    /// Reports per symbol, ascending by date, from the `earnings` snapshot when a newer one
    /// than the held is stored (without one, earnings dates are unknown, reported as null).
    async fn load_earnings(
        &self,
    ) -> Result<Changed<BTreeMap<String, Vec<EarningsEvent>>>, LoadError> {
        let held = self.read().earnings_stamp;
        let Some((stamp, snapshot)) = self
            .changed_market_wide(Dataset::Earnings.name(), held)
            .await?
        else {
            return Ok(None);
        };
        let mut by_symbol: BTreeMap<String, Vec<EarningsEvent>> = BTreeMap::new();
        for batch in &snapshot.batches {
            for event in EarningsEvent::from_batch(batch)? {
                by_symbol
                    .entry(event.symbol.clone())
                    .or_default()
                    .push(event);
            }
        }
        for reports in by_symbol.values_mut() {
            reports.sort_by_key(|r| r.report_date);
            reports.dedup_by_key(|r| r.report_date);
        }
        Ok(Some((stamp, by_symbol)))
    }

    /// Bars per symbol and session from the `daily_bars` snapshot when a newer one than the
    /// held is stored: years of bars are not decoded again on every poll.
    async fn load_bars(
        &self,
    ) -> Result<Changed<Arc<BTreeMap<String, Vec<SessionBar>>>>, LoadError> {
        let held = self.read().bars_stamp;
        let Some((stamp, snapshot)) = self
            .changed_market_wide(Dataset::DailyBars.name(), held)
            .await?
        else {
            return Ok(None);
        };
        let mut by_symbol: BTreeMap<String, Vec<SessionBar>> = BTreeMap::new();
        for batch in &snapshot.batches {
            for bar in DailyBar::from_batch(batch)? {
                by_symbol.entry(bar.symbol).or_default().push(SessionBar {
                    date: bar.date,
                    open: bar.open,
                    high: bar.high,
                    low: bar.low,
                    close: bar.close,
                    volume: bar.volume,
                });
            }
        }
        for sessions in by_symbol.values_mut() {
            sessions.sort_by_key(|b| b.date);
            sessions.dedup_by_key(|b| b.date);
        }
        Ok(Some((stamp, Arc::new(by_symbol))))
    }

    /// The newest market-wide snapshot of `dataset` with its (trade date, version), unless
    /// that is `held` (the one already decoded) or there is none.
    async fn changed_market_wide(
        &self,
        dataset: &str,
        held: Option<(NaiveDate, u64)>,
    ) -> Result<Option<((NaiveDate, u64), Snapshot)>, LoadError> {
        let Some(date) = self
            .store
            .latest_trade_date(dataset, MARKET_WIDE, None)
            .await?
        else {
            return Ok(None);
        };
        let key = SnapshotKey::new(dataset, date, MARKET_WIDE);
        let Some(file) = self.store.latest(&key).await? else {
            return Ok(None);
        };
        if held == Some((date, file.version)) {
            return Ok(None);
        }
        Ok(self
            .store
            .read(&key)
            .await?
            .map(|snapshot| ((date, snapshot.file.version), snapshot)))
    }

    /// Decodes a snapshot and swaps it in, unless a newer one is already held.
    fn install(&self, key: &SnapshotKey, snapshot: &Snapshot) -> Result<(), LoadError> {
        self.install_batches(key, snapshot.file.version, &snapshot.batches)
            .map(|_| ())
    }

    /// Decodes version `version` of `key`, whose rows are `batches`, and swaps it in unless a
    /// newer one (or this one) is already held; whether it did.
    fn install_batches(
        &self,
        key: &SnapshotKey,
        version: u64,
        batches: &[RecordBatch],
    ) -> Result<bool, LoadError> {
        if self.holds(key, version) {
            return Ok(false);
        }
        let stamp = (key.trade_date, version);
        let ticker = key.underlying.clone();
        match key.dataset.as_str() {
            snapshot_datasets::CHAIN => {
                let rows = decode::<ChainRow>(batches, ChainRow::from_batch)?;
                let Some(view) = ChainView::new(rows) else {
                    return Ok(false);
                };
                self.report_published(key, view.as_of);
                // Computed before the swap (outside the lock); recorded once it is installed.
                let print = (key.underlying == VIX_UNDERLYING)
                    .then(|| chain_vix(&view.rows, view.as_of).ok())
                    .flatten()
                    .map(|v| VixPrint {
                        at: view.as_of,
                        vix: v.vix(),
                    });
                let trade_date = view.trade_date;
                let decoded = Decoded {
                    items: view.rows.len(),
                    bytes: view.rows.heap_bytes()
                        + view.expirations.capacity() * std::mem::size_of::<NaiveDate>()
                        + view.underlying.capacity(),
                    value: view,
                };
                let installed = put(&mut self.write().chains, ticker, stamp, decoded);
                if let (true, Some(print)) = (installed, print) {
                    self.vix_tape.record(trade_date, print);
                }
            }
            snapshot_datasets::EXPOSURES => {
                let rows = decode(batches, ExposureRow::from_batch)?;
                self.report_published(key, rows.iter().map(|r| r.as_of).max());
                let mut latest = self.write();
                if put(
                    &mut latest.exposure_rows,
                    ticker.clone(),
                    stamp,
                    rows_held(rows),
                ) {
                    refresh_exposures(&mut latest, &ticker);
                }
            }
            snapshot_datasets::EXPOSURE_SUMMARY => {
                let rows = decode(batches, ExposureSummaryRow::from_batch)?;
                self.report_published(key, rows.iter().map(|r| r.as_of).max());
                let mut latest = self.write();
                let held = rows_held(rows);
                if put(&mut latest.exposure_summaries, ticker.clone(), stamp, held) {
                    refresh_exposures(&mut latest, &ticker);
                }
            }
            snapshot_datasets::FLOW => {
                let rows = decode(batches, FlowSnapshotRow::from_batch)?;
                self.report_published(key, rows.iter().map(|r| r.as_of).max());
                let decoded = Decoded {
                    items: rows.len(),
                    bytes: rows.heap_bytes(),
                    value: FlowView { rows },
                };
                put(&mut self.write().flows, ticker, stamp, decoded);
            }
            snapshot_datasets::FLOW_AGGREGATES => {
                let rows = decode(batches, FlowAggregateRow::from_batch)?;
                self.report_published(key, rows.iter().map(|r| r.as_of).max());
                let view = FlowAggregatesView::from_rows(&rows);
                let decoded = Decoded {
                    items: view.strikes.len() + view.expirations.len(),
                    bytes: view.strikes.capacity() * std::mem::size_of::<StrikeFlow>()
                        + view.expirations.capacity() * std::mem::size_of::<ExpirationFlow>(),
                    value: view,
                };
                put(&mut self.write().flow_aggregates, ticker, stamp, decoded);
            }
            _ => return Ok(false),
        }
        self.bump();
        Ok(true)
    }

    /// A new generation, after the swap is visible: an answer built from the old data can
    /// then only be kept under the old number.
    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// The stored `vol_daily` series changed: held series are stale, and so is everything
    /// built from the reader (the universe table's histories, cached answers).
    fn bump_vol_daily(&self) {
        self.vol_generation.fetch_add(1, Ordering::AcqRel);
        self.bump();
    }

    /// Reports the market time of a snapshot of `key`'s dataset to the age gauge (the gauge
    /// keeps the newest per dataset, so an older session loaded later does not age it).
    fn report_published(&self, key: &SnapshotKey, as_of: impl Into<Option<DateTime<Utc>>>) {
        if let Some(as_of) = as_of.into() {
            self.metrics.set_snapshot_published_at(&key.dataset, as_of);
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Latest> {
        // A poisoned lock means a panic while swapping an Arc: the map is still consistent.
        self.latest.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Latest> {
        self.latest.write().unwrap_or_else(|p| p.into_inner())
    }
}

fn decode<T>(
    batches: &[RecordBatch],
    read: impl Fn(&RecordBatch) -> Result<Vec<T>, SchemaError>,
) -> Result<Vec<T>, LoadError> {
    // A snapshot is one batch (as the worker writes it): its rows as read, not copied again.
    if let [batch] = batches {
        return Ok(read(batch)?);
    }
    let mut rows = Vec::with_capacity(batches.iter().map(RecordBatch::num_rows).sum());
    for batch in batches {
        rows.extend(read(batch)?);
    }
    Ok(rows)
}

/// Rows decoded for the cache, with what they hold.
fn rows_held<T: HeapBytes>(rows: Vec<T>) -> Decoded<Vec<T>> {
    Decoded {
        items: rows.len(),
        bytes: rows.heap_bytes(),
        value: rows,
    }
}

/// What the cache's coverage holds: companies, report dates, daily bars, macro releases,
/// dividends and borrow fees, and their bytes.
fn coverage_held(coverage: &Coverage) -> (usize, usize) {
    use std::mem::size_of;
    let companies = coverage.companies.len();
    let company_bytes = coverage.companies.capacity() * size_of::<Arc<Company>>()
        + coverage
            .companies
            .iter()
            .map(|c| size_of::<Company>() + c.heap_bytes())
            .sum::<usize>();
    let reports: usize = coverage.earnings.values().map(Vec::len).sum();
    let report_bytes: usize = coverage
        .earnings
        .iter()
        .map(|(symbol, reports)| {
            symbol.capacity()
                + reports.capacity() * size_of::<EarningsEvent>()
                + reports
                    .iter()
                    .map(|r| r.symbol.capacity() + r.fiscal_quarter.capacity())
                    .sum::<usize>()
                + size_of::<usize>() * 4
        })
        .sum();
    let releases = coverage.economic.len();
    let release_bytes: usize = coverage
        .economic
        .iter()
        .map(|e| {
            size_of::<EconomicEvent>()
                + e.country.capacity()
                + e.event.capacity()
                + [&e.actual, &e.forecast, &e.previous]
                    .iter()
                    .map(|t| t.as_ref().map_or(0, String::capacity))
                    .sum::<usize>()
        })
        .sum();
    let sessions: usize = coverage.bars.values().map(Vec::len).sum();
    let session_bytes: usize = coverage
        .bars
        .iter()
        .map(|(symbol, bars)| {
            symbol.capacity() + bars.capacity() * size_of::<SessionBar>() + size_of::<usize>() * 4
        })
        .sum();
    let dividends: usize = coverage.dividends.values().map(Vec::len).sum();
    let dividend_bytes: usize = coverage
        .dividends
        .iter()
        .map(|(symbol, paid)| {
            symbol.capacity()
                + paid.capacity() * size_of::<Dividend>()
                + paid.iter().map(|d| d.symbol.capacity()).sum::<usize>()
                + size_of::<usize>() * 4
        })
        .sum();
    let fees: usize = coverage.borrow.values().map(Vec::len).sum();
    let fee_bytes: usize = coverage
        .borrow
        .iter()
        .map(|(symbol, rates)| {
            symbol.capacity()
                + rates.capacity() * size_of::<BorrowRate>()
                + rates.iter().map(|r| r.symbol.capacity()).sum::<usize>()
                + size_of::<usize>() * 4
        })
        .sum();
    (
        companies + reports + sessions + releases + dividends + fees,
        company_bytes + report_bytes + session_bytes + release_bytes + dividend_bytes + fee_bytes,
    )
}

/// Installs `decoded` unless the held entry is newer; `true` when installed. The entry it
/// replaces is dropped here: its memory is freed once no request still reads it.
fn put<T>(
    map: &mut ByTicker<T>,
    ticker: String,
    stamp: (NaiveDate, u64),
    decoded: Decoded<T>,
) -> bool {
    if map.get(&ticker).is_some_and(|held| held.stamp() > stamp) {
        return false;
    }
    let held = Held {
        trade_date: stamp.0,
        version: stamp.1,
        value: Arc::new(decoded.value),
        items: decoded.items,
        bytes: decoded.bytes,
    };
    map.insert(ticker, held);
    true
}

/// Pairs the strike rows and the summary of one ticker once both are of the same session.
fn refresh_exposures(latest: &mut Latest, ticker: &str) {
    let (Some(rows), Some(summary)) = (
        latest.exposure_rows.get(ticker),
        latest.exposure_summaries.get(ticker),
    ) else {
        return;
    };
    if rows.trade_date != summary.trade_date {
        return;
    }
    let view = ExposureView {
        rows: Arc::clone(&rows.value),
        summary: Arc::clone(&summary.value),
    };
    latest.exposures.insert(ticker.to_owned(), Arc::new(view));
}

/// A worker in the same process hands each snapshot over as it publishes it: decoded from the
/// batch it built, not read back from the file (the snapshot event that follows finds it
/// held). A snapshot that does not decode is left to the event, which reads the file and
/// reports the error.
impl PublishedSnapshots for StoreMarketData {
    fn published(&self, key: &SnapshotKey, version: u64, batch: &RecordBatch) -> bool {
        if !LIVE_DATASETS.contains(&key.dataset.as_str()) {
            return false;
        }
        match self.install_batches(key, version, std::slice::from_ref(batch)) {
            Ok(installed) => installed,
            Err(error) => {
                tracing::warn!(dataset = %key.dataset, underlying = %key.underlying, %error,
                    "a snapshot handed over in process did not decode");
                false
            }
        }
    }

    fn quotes_served(&self, _: &str, batch_times: &[BatchTimes], served_at: DateTime<Utc>) {
        // Entry into the bus is stamped on the wall clock (the bus does not know the
        // worker's), so its age is taken on the wall clock too.
        let now = SystemTime::now();
        for batch in batch_times {
            let since_bus_entry = batch
                .entered_bus
                .map(|entered| now.duration_since(entered).unwrap_or_default());
            self.metrics
                .observe_quote_served(batch.quoted_at, served_at, since_bus_entry);
        }
    }
}

/// What the cache holds: the newest snapshot of each dataset and ticker, one each (a newer one
/// replaces it), and the coverage. `api_chains` (items: chain rows, a strike of an expiration
/// each), `api_exposures` (items: strike rows and summary rows), `api_flows` (items: contracts
/// that traded), `api_flow_aggregates` (items: strike and expiration groups), `api_coverage`
/// (items: companies, report dates, daily bars and macro releases), `api_vol_history_memo`
/// (items: one underlying's `vol_daily` series each, read on first use; at most 512),
/// `api_chain_footers` (items: chain files whose footer `/chain-at-time` holds; at most 128).
impl MemoryHolder for StoreMarketData {
    fn held_memory(&self, out: &mut Vec<HeldMemory>) {
        let latest = self.read();
        out.push(held_of("api_chains", &latest.chains));
        let rows = held_of("api_exposures", &latest.exposure_rows);
        let summaries = held_of("api_exposures", &latest.exposure_summaries);
        // The paired views share both halves' rows: only their maps' slots add up.
        let views = latest.exposures.capacity()
            * (std::mem::size_of::<(String, Arc<ExposureView>)>()
                + std::mem::size_of::<ExposureView>());
        out.push(HeldMemory {
            holder: "api_exposures",
            items: rows.items + summaries.items,
            bytes: rows.bytes + summaries.bytes + views as u64,
        });
        out.push(held_of("api_flows", &latest.flows));
        out.push(held_of("api_flow_aggregates", &latest.flow_aggregates));
        let (items, bytes) = latest.coverage_held;
        out.push(HeldMemory::new("api_coverage", items, bytes));
        drop(latest);
        let (entries, bytes) = self.history.held();
        out.push(HeldMemory::new("api_vol_history_memo", entries, bytes));
        let (files, bytes) = self.history.chain_footers_held();
        out.push(HeldMemory::new("api_chain_footers", files, bytes));
    }
}

impl MarketDataReader for StoreMarketData {
    fn covers(&self, ticker: &Ticker) -> bool {
        let latest = self.read();
        latest.coverage.get(ticker.as_str()).is_some()
            || latest.chains.contains_key(ticker.as_str())
    }

    fn chain(&self, ticker: &Ticker) -> Option<Arc<ChainView>> {
        self.read()
            .chains
            .get(ticker.as_str())
            .map(|e| Arc::clone(&e.value))
    }

    fn exposures(&self, ticker: &Ticker) -> Option<Arc<ExposureView>> {
        self.read().exposures.get(ticker.as_str()).cloned()
    }

    fn flow(&self, ticker: &Ticker) -> Option<Arc<FlowView>> {
        self.read()
            .flows
            .get(ticker.as_str())
            .map(|e| Arc::clone(&e.value))
    }

    fn flow_aggregates(&self, ticker: &Ticker) -> Option<Arc<FlowAggregatesView>> {
        self.read()
            .flow_aggregates
            .get(ticker.as_str())
            .map(|e| Arc::clone(&e.value))
    }

    fn coverage(&self) -> Arc<Coverage> {
        Arc::clone(&self.read().coverage)
    }

    fn generation(&self) -> Option<u64> {
        Some(self.generation.load(Ordering::Acquire))
    }

    fn vix_session(&self) -> Option<VixSession> {
        self.vix_tape.session()
    }

    fn chain_at_time<'a>(
        &'a self,
        ticker: &'a Ticker,
        trade_date: NaiveDate,
        expiration: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async move {
            self.history
                .chain_at_time(ticker.as_str(), trade_date, expiration)
                .await
                .map_err(ApiError::from)
        })
    }

    fn expirations_at<'a>(
        &'a self,
        ticker: &'a Ticker,
        trade_date: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<NaiveDate>>, ApiError>> {
        Box::pin(async move {
            self.history
                .expirations_on(ticker.as_str(), trade_date)
                .await
                .map_err(ApiError::from)
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

    fn vol_generation(&self) -> Option<u64> {
        Some(self.vol_generation.load(Ordering::Acquire))
    }

    fn vol_history<'a>(
        &'a self,
        ticker: &'a Ticker,
    ) -> ReadFuture<'a, Result<VolSeries, ApiError>> {
        Box::pin(async move {
            let generation = self.vol_generation.load(Ordering::Acquire);
            self.history
                .vol_series(ticker.as_str(), generation)
                .await
                .map_err(ApiError::from)
        })
    }
}
