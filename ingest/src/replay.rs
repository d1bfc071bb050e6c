//! Replay: a recorded session from the quote archive through the same compute code as the live
//! worker, rewriting that session's end-of-day snapshots.
//!
//! The archive holds every archived quote of the session (its committed parts only: an
//! import that has not committed is not replayed); the worker's book keeps the latest
//! quote of each contract by quote time whatever the order they are read in, so feeding the
//! whole session and building once at the session's close gives the end-of-day state the live
//! worker had at the close. The build runs at the close instant with the configured rate, so
//! the same archive and configuration give identical snapshot files (only the event's
//! `published_at`, which is not in the files, differs).

use std::sync::Arc;

use chrono::NaiveDate;
use optics_compute::time::{ManualClock, NyseCalendar};
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_pipeline::worker::{ComputeWorker, WorkerConfig, WorkerError};
use optics_schemas::{
    Company, DataBatch, Dataset, MARKET_WIDE_KEY, Message, Record, SnapshotEvent,
};

use crate::archive::{ArchiveError, QuoteArchive};

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The date is not a trading day.
    #[error("{0} is not a trading day")]
    NotATradingDay(NaiveDate),
    /// The archive has nothing for the date.
    #[error("the quote archive has no session on {0}")]
    NothingRecorded(NaiveDate),
    /// Reading the archive failed.
    #[error("quote archive: {0}")]
    Archive(#[from] ArchiveError),
    /// Building or publishing failed.
    #[error("compute: {0}")]
    Worker(#[from] WorkerError),
    /// Reading the company map from the store failed.
    #[error("company map: {0}")]
    Reference(String),
}

/// What a replay of one session did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Underlyings replayed.
    pub underlyings: usize,
    /// Archived quotes read.
    pub quotes: u64,
    /// The snapshot events of the files written.
    pub events: Vec<SnapshotEvent>,
}

/// Replays `trade_date` from `archive` into `store`, pricing with `config` (its rate and
/// whether to build the chain only). The company map (which underlyings are priced on the
/// forward) is read from the store's newest `companies` table, if any.
pub async fn replay_session(
    archive: &QuoteArchive,
    store: &SnapshotStore,
    trade_date: NaiveDate,
    config: WorkerConfig,
    mut on_underlying: impl FnMut(&str),
) -> Result<ReplaySummary, ReplayError> {
    let close = NyseCalendar
        .session(trade_date)
        .map(|s| s.close.to_utc())
        .ok_or(ReplayError::NotATradingDay(trade_date))?;
    let underlyings: Vec<String> = archive
        .list_sessions_on(trade_date)
        .await?
        .into_iter()
        .map(|s| s.underlying)
        .collect();
    if underlyings.is_empty() {
        return Err(ReplayError::NothingRecorded(trade_date));
    }
    let clock = Arc::new(ManualClock::new(close));
    let mut summary = ReplaySummary {
        underlyings: underlyings.len(),
        ..ReplaySummary::default()
    };
    let companies = company_map(store).await?;
    for underlying in &underlyings {
        // One worker per underlying keeps memory to one session of one underlying.
        let mut worker = ComputeWorker::offline(store.clone(), clock.clone(), config.clone());
        if let Some(companies) = &companies {
            worker.apply(companies)?;
        }
        for batch in archive.read_session_batches(trade_date, underlying).await? {
            summary.quotes += batch.num_rows() as u64;
            let message = DataBatch::try_new(Dataset::OptionQuotes, underlying.as_str(), &batch)
                .map_err(|e| ReplayError::Archive(ArchiveError::Schema(e)))?;
            worker.apply(&Message::Data(message))?;
        }
        summary.events.extend(worker.publish_dirty(close).await?);
        on_underlying(underlying);
    }
    Ok(summary)
}

/// The store's newest company map as a bus message, if one is stored.
async fn company_map(store: &SnapshotStore) -> Result<Option<Message>, ReplayError> {
    let reference = |e: &dyn std::fmt::Display| ReplayError::Reference(e.to_string());
    let dataset = Dataset::Companies.name();
    let Some(date) = store
        .latest_trade_date(dataset, MARKET_WIDE, None)
        .await
        .map_err(|e| reference(&e))?
    else {
        return Ok(None);
    };
    let key = SnapshotKey::new(dataset, date, MARKET_WIDE);
    let Some(snapshot) = store.read(&key).await.map_err(|e| reference(&e))? else {
        return Ok(None);
    };
    let mut companies = Vec::new();
    for batch in &snapshot.batches {
        companies.extend(Company::from_batch(batch).map_err(|e| reference(&e))?);
    }
    let batch = DataBatch::from_rows(MARKET_WIDE_KEY, &companies).map_err(|e| reference(&e))?;
    Ok(Some(Message::Data(batch)))
}
