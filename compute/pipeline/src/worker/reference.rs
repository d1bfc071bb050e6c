//! The reference series a live worker keeps: daily bars, earnings reports, dividends and
//! borrow fees arrive on the bus (bars at each session's close, the rest at its start and
//! after-close reports at its end) and are laid over the store's market-wide partitions — the
//! tables the session close ([`super::close::CloseReference::read`]) and the API read — so a
//! session run live extends the series the seeding or backfill wrote. Of the workers of a group,
//! the one holding a row's partition of the shared reference subscription keeps it for the
//! store (see "Scaling out" in [`super`]), so each row is merged once, not once per worker.
//!
//! One rule for every writer ([`merge_into_market_wide`]): the newest market-wide partition
//! of the dataset is read, the new rows laid over it by their key ([`ReferenceRow`]: a row
//! with the key of a stored row replaces it, the others are added) and the result published as
//! a new version of the partition of the later of that partition's date and the given trade
//! date. `optics import bars`, `optics import earnings` and `optics import economic-calendar`
//! merge imported rows the same way; the imports of reports and releases also keep their own
//! record, the [`IMPORTED`] partition ([`merge_into_partition`]), which seeding lays over the
//! simulated tables it writes.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{BorrowRate, DailyBar, Dividend, EarningsEvent, EconomicEvent, Record};

use super::WorkerError;
use crate::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};

/// A reference row with a key: the row of a newer publication with the same key replaces the
/// stored one.
pub trait ReferenceRow: Record + Clone + Send + Sync + 'static {
    /// What identifies a row (the table is sorted by it).
    type Key: Ord + Clone;
    /// This row's key.
    fn key(&self) -> Self::Key;
}

impl ReferenceRow for DailyBar {
    type Key = (String, NaiveDate);
    fn key(&self) -> Self::Key {
        (self.symbol.clone(), self.date)
    }
}

/// A report is its symbol and date: the actuals published after the report replace the
/// estimate-only row.
impl ReferenceRow for EarningsEvent {
    type Key = (String, NaiveDate);
    fn key(&self) -> Self::Key {
        (self.symbol.clone(), self.report_date)
    }
}

/// A release is its date, country and name: a row carrying the actual replaces the scheduled
/// one.
impl ReferenceRow for EconomicEvent {
    type Key = (NaiveDate, String, String);
    fn key(&self) -> Self::Key {
        (self.date, self.country.clone(), self.event.clone())
    }
}

impl ReferenceRow for Dividend {
    type Key = (String, NaiveDate);
    fn key(&self) -> Self::Key {
        (self.symbol.clone(), self.ex_date)
    }
}

impl ReferenceRow for BorrowRate {
    type Key = (String, NaiveDate);
    fn key(&self) -> Self::Key {
        (self.symbol.clone(), self.date)
    }
}

/// `base` with `overlay` laid over it: a row of `overlay` replaces the row of `base` with the
/// same key, or is added. Sorted by key; returns the rows and how many of `base` were replaced.
/// Later duplicates within `overlay` win.
pub fn overlay<R: ReferenceRow>(base: Vec<R>, overlay: &[R]) -> (Vec<R>, usize) {
    let mut by_key: BTreeMap<R::Key, R> = base.into_iter().map(|row| (row.key(), row)).collect();
    let new_keys: BTreeSet<R::Key> = overlay.iter().map(ReferenceRow::key).collect();
    let replaced = new_keys.iter().filter(|k| by_key.contains_key(k)).count();
    for row in overlay {
        by_key.insert(row.key(), row.clone());
    }
    (by_key.into_values().collect(), replaced)
}

/// What [`merge_into_market_wide`] did.
#[derive(Debug)]
pub struct ReferenceMerge {
    /// The market-wide partition written.
    pub trade_date: NaiveDate,
    /// Rows it holds.
    pub rows: usize,
    /// Rows of the previous partition replaced by the new ones (same key).
    pub replaced: usize,
    /// The publication.
    pub event: optics_schemas::SnapshotEvent,
}

/// Attempts of [`merge_into_market_wide`] before it gives up on a partition that keeps
/// changing under it.
const MERGE_ATTEMPTS: usize = 5;

/// The `underlying` partition of a reference dataset that holds every row imported from files
/// (`optics import earnings`, `optics import economic-calendar`), merged like the market-wide
/// table: what seeding lays over the simulated rows when it rewrites that table.
pub const IMPORTED: &str = "_imported";

/// Lays `rows` over the newest market-wide partition of `R`'s dataset and publishes the result
/// as a new version of the partition of the later of that partition's date and `trade_date`:
/// one atomic file, every other row kept. A publication of the same partition by someone else
/// between our read and our write (another worker, an import), or a newer partition appearing
/// meanwhile, is detected and the merge redone on top of it.
pub async fn merge_into_market_wide<R: ReferenceRow>(
    store: &SnapshotStore,
    rows: &[R],
    trade_date: NaiveDate,
    published_at: DateTime<Utc>,
) -> Result<ReferenceMerge, WorkerError> {
    merge_into_partition(store, rows, trade_date, MARKET_WIDE, published_at).await
}

/// [`merge_into_market_wide`] into the partitions of `underlying` (`MARKET_WIDE` or
/// [`IMPORTED`]) instead.
pub async fn merge_into_partition<R: ReferenceRow>(
    store: &SnapshotStore,
    rows: &[R],
    trade_date: NaiveDate,
    underlying: &str,
    published_at: DateTime<Utc>,
) -> Result<ReferenceMerge, WorkerError> {
    let dataset = R::DATASET.name();
    // (trade date, version, rows) of the partition merged onto.
    let mut base = match store.latest_trade_date(dataset, underlying, None).await? {
        Some(date) => read_partition::<R>(store, date, underlying).await?,
        None => None,
    };
    for _attempt in 0..MERGE_ATTEMPTS {
        let base_date = base.as_ref().map(|(date, _, _)| *date);
        let target = base_date.map_or(trade_date, |date| date.max(trade_date));
        let (base_version, base_rows) = match base.take() {
            Some((date, version, rows)) if date == target => (version, rows),
            Some((_, _, rows)) => (0, rows),
            None => (0, Vec::new()),
        };
        let (merged, replaced) = overlay(base_rows, rows);
        let batch = R::to_batch(&merged)?;
        let key = SnapshotKey::new(dataset, target, underlying);
        let event = store.publish(&key, &batch, &[], published_at).await?;
        // A version someone else published between the one we read and ours would be lost
        // under ours, and a newer market-wide date would shadow ours: merge onto either.
        let interleaved = store
            .versions(&key)
            .await?
            .into_iter()
            .rfind(|f| f.version > base_version && f.version < event.version);
        let newer_date = store
            .latest_trade_date(dataset, underlying, None)
            .await?
            .filter(|date| *date > target);
        if let Some(date) = newer_date
            && let Some(newer) = read_partition(store, date, underlying).await?
        {
            base = Some(newer);
            continue;
        }
        if let Some(file) = interleaved {
            let theirs = decode(&store.read_file(&file).await?)?;
            // Merge onto theirs; our own version is then superseded.
            base = Some((target, event.version, theirs));
            continue;
        }
        return Ok(ReferenceMerge {
            trade_date: target,
            rows: merged.len(),
            replaced,
            event,
        });
    }
    Err(WorkerError::Contended {
        dataset,
        attempts: MERGE_ATTEMPTS,
    })
}

/// The date, version and rows of the newest version of `R`'s partition of `date` and
/// `underlying` (none when there is no such partition).
async fn read_partition<R: ReferenceRow>(
    store: &SnapshotStore,
    date: NaiveDate,
    underlying: &str,
) -> Result<Option<(NaiveDate, u64, Vec<R>)>, WorkerError> {
    let key = SnapshotKey::new(R::DATASET.name(), date, underlying);
    let Some(snapshot) = store.read(&key).await? else {
        return Ok(None);
    };
    Ok(Some((
        date,
        snapshot.file.version,
        decode(&snapshot.batches)?,
    )))
}

fn decode<R: Record>(batches: &[arrow_array::RecordBatch]) -> Result<Vec<R>, WorkerError> {
    let mut rows = Vec::new();
    for batch in batches {
        rows.extend(R::from_batch(batch)?);
    }
    Ok(rows)
}

/// The rows of the newest [`IMPORTED`] partition of `R`'s dataset, with its date (none when
/// nothing was imported).
pub async fn imported_rows<R: ReferenceRow>(
    store: &SnapshotStore,
) -> Result<Option<(NaiveDate, Vec<R>)>, WorkerError> {
    let Some(date) = store
        .latest_trade_date(R::DATASET.name(), IMPORTED, None)
        .await?
    else {
        return Ok(None);
    };
    Ok(read_partition::<R>(store, date, IMPORTED)
        .await?
        .map(|(date, _, rows)| (date, rows)))
}

/// Reference rows received since the last [`publish`](Self::publish).
#[derive(Debug, Clone, Default)]
pub(crate) struct PendingReference {
    pub(crate) bars: Vec<DailyBar>,
    pub(crate) earnings: Vec<EarningsEvent>,
    pub(crate) dividends: Vec<Dividend>,
    pub(crate) borrow: Vec<BorrowRate>,
}

impl PendingReference {
    /// Rows held, all tables together.
    pub(crate) fn rows(&self) -> usize {
        self.bars.len() + self.earnings.len() + self.dividends.len() + self.borrow.len()
    }

    /// Bytes held, all tables together.
    pub(crate) fn heap_bytes(&self) -> usize {
        use optics_schemas::memory::HeapBytes;
        self.bars.heap_bytes()
            + self.earnings.heap_bytes()
            + self.dividends.heap_bytes()
            + self.borrow.heap_bytes()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.bars.is_empty()
            && self.earnings.is_empty()
            && self.dividends.is_empty()
            && self.borrow.is_empty()
    }

    /// Merges every non-empty table into the store (bars into the partition of their last
    /// date at the latest, the others into `trade_date`'s) and returns the publications in
    /// dataset order. A table whose merge fails stays pending (the next cycle retries it);
    /// the first error is returned after the others were tried.
    pub(crate) async fn publish(
        &mut self,
        store: &SnapshotStore,
        trade_date: NaiveDate,
        published_at: DateTime<Utc>,
    ) -> (Vec<optics_schemas::SnapshotEvent>, Result<(), WorkerError>) {
        let bars_date = self
            .bars
            .iter()
            .map(|b| b.date)
            .max()
            .map_or(trade_date, |last| last.max(trade_date));
        let merges = [
            merge_pending(store, &mut self.bars, bars_date, published_at).await,
            merge_pending(store, &mut self.earnings, trade_date, published_at).await,
            merge_pending(store, &mut self.dividends, trade_date, published_at).await,
            merge_pending(store, &mut self.borrow, trade_date, published_at).await,
        ];
        let mut events = Vec::new();
        let mut first_error = Ok(());
        for merge in merges {
            match merge {
                Ok(event) => events.extend(event),
                Err(e) if first_error.is_ok() => first_error = Err(e),
                Err(_) => {}
            }
        }
        (events, first_error)
    }
}

/// Merges `rows` (when there are any) and empties it; on a failure `rows` stays as it was.
async fn merge_pending<R: ReferenceRow>(
    store: &SnapshotStore,
    rows: &mut Vec<R>,
    trade_date: NaiveDate,
    published_at: DateTime<Utc>,
) -> Result<Option<optics_schemas::SnapshotEvent>, WorkerError> {
    if rows.is_empty() {
        return Ok(None);
    }
    let merge = merge_into_market_wide(store, rows, trade_date, published_at).await?;
    rows.clear();
    Ok(Some(merge.event))
}
