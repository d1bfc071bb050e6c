//! The session close: once a session's last chain snapshots are in the store, the market-wide
//! `vol_daily` partition of that trade date is computed from them (see
//! [`crate::vol::vol_daily_rows`]) and published.
//!
//! Inputs come from the store — the closing chain of every underlying of the trade date, the
//! latest `daily_bars` and `earnings` reference tables on or before it, and the earlier
//! `vol_daily` partitions (the IV rank lookback) — or, for seeding and backfill, which hold the
//! history in memory already, partly from the caller ([`CloseReference`]).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::columns::vol_daily;
use optics_schemas::{
    ChainRow, DailyBar, Dataset, EarningsEvent, Record, SnapshotEvent, VolDailyRow,
};

use super::WorkerError;
use crate::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use crate::time::NyseCalendar;
use crate::vol::{IV_RANK_LOOKBACK_SESSIONS, SessionCloseInputs, VolError, vol_daily_rows};

/// The reference data of a session close.
#[derive(Debug, Clone, Default)]
pub struct CloseReference {
    /// Daily bars (any symbols and dates).
    pub bars: Vec<DailyBar>,
    /// Earnings reports.
    pub earnings: Vec<EarningsEvent>,
    /// Earlier `vol_daily` rows (the IV rank lookback).
    pub prior: Vec<VolDailyRow>,
}

impl CloseReference {
    /// Reads the latest `daily_bars` and `earnings` tables on or before `trade_date` and the
    /// `vol_daily` rows of the sessions before it (at most a year of them) from `store`.
    pub async fn read(store: &SnapshotStore, trade_date: NaiveDate) -> Result<Self, WorkerError> {
        Ok(Self {
            bars: read_reference::<DailyBar>(store, trade_date).await?,
            earnings: read_reference::<EarningsEvent>(store, trade_date).await?,
            prior: read_prior_vol_daily(store, trade_date).await?,
        })
    }
}

/// What a session close published.
#[derive(Debug)]
pub struct SessionClose {
    /// The publication.
    pub event: SnapshotEvent,
    /// The rows written, sorted by underlying.
    pub rows: Vec<VolDailyRow>,
    /// Underlyings left out, with the reason.
    pub skipped: Vec<(String, VolError)>,
}

/// Computes and publishes the `vol_daily` partition of `trade_date` from the closing chains in
/// `store` and `reference`; `as_of` is the session close, `published_at` the caller's clock.
/// `None` when the trade date has no chain and no bar (nothing to describe).
pub async fn publish_vol_daily(
    store: &SnapshotStore,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
    published_at: DateTime<Utc>,
    reference: &CloseReference,
) -> Result<Option<SessionClose>, WorkerError> {
    let chains = read_closing_chains(store, trade_date).await?;
    let computed = {
        let inputs = SessionCloseInputs {
            trade_date,
            as_of,
            bars: &reference.bars,
            earnings: &reference.earnings,
            chains: &chains,
            prior: &reference.prior,
        };
        // A few milliseconds once per session (rayon across underlyings): not worth moving the
        // borrowed inputs to a blocking thread.
        vol_daily_rows(&inputs)
    };
    if computed.rows.is_empty() {
        return Ok(None);
    }
    let batch = VolDailyRow::to_batch(&computed.rows)?;
    let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, trade_date, MARKET_WIDE);
    let event = store
        .publish(&key, &batch, &[vol_daily::UNDERLYING], published_at)
        .await?;
    Ok(Some(SessionClose {
        event,
        rows: computed.rows,
        skipped: computed.skipped,
    }))
}

/// The closing (latest) chain of every underlying with a chain partition on `trade_date`.
pub async fn read_closing_chains(
    store: &SnapshotStore,
    trade_date: NaiveDate,
) -> Result<BTreeMap<String, Vec<ChainRow>>, WorkerError> {
    let mut chains = BTreeMap::new();
    for underlying in store
        .underlyings(snapshot_datasets::CHAIN, trade_date)
        .await?
    {
        let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date, underlying.as_str());
        let Some(snapshot) = store.read(&key).await? else {
            continue;
        };
        let mut rows = Vec::with_capacity(snapshot.num_rows());
        for batch in &snapshot.batches {
            rows.extend(ChainRow::from_batch(batch)?);
        }
        chains.insert(underlying, rows);
    }
    Ok(chains)
}

/// The rows of the latest market-wide partition of `R`'s dataset on or before `trade_date`
/// (empty when there is none).
pub async fn read_reference<R: Record>(
    store: &SnapshotStore,
    trade_date: NaiveDate,
) -> Result<Vec<R>, WorkerError> {
    let dataset: Dataset = R::DATASET;
    let Some(date) = store
        .latest_trade_date(dataset.name(), MARKET_WIDE, Some(trade_date))
        .await?
    else {
        return Ok(Vec::new());
    };
    let key = SnapshotKey::new(dataset.name(), date, MARKET_WIDE);
    let mut rows = Vec::new();
    if let Some(snapshot) = store.read(&key).await? {
        for batch in &snapshot.batches {
            rows.extend(R::from_batch(batch)?);
        }
    }
    Ok(rows)
}

/// The `vol_daily` rows of the (at most a year of) sessions before `trade_date`.
pub async fn read_prior_vol_daily(
    store: &SnapshotStore,
    trade_date: NaiveDate,
) -> Result<Vec<VolDailyRow>, WorkerError> {
    let dates = store.trade_dates(snapshot_datasets::VOL_DAILY).await?;
    let before: Vec<NaiveDate> = dates.into_iter().filter(|d| *d < trade_date).collect();
    let skip = before.len().saturating_sub(IV_RANK_LOOKBACK_SESSIONS - 1);
    let mut rows = Vec::new();
    for date in &before[skip..] {
        let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, *date, MARKET_WIDE);
        if let Some(snapshot) = store.read(&key).await? {
            for batch in &snapshot.batches {
                rows.extend(VolDailyRow::from_batch(batch)?);
            }
        }
    }
    Ok(rows)
}

/// Market time between a session's close and the publication of its `vol_daily` partition:
/// the closing quotes' last cycle (one worker interval after the close) has landed by then.
pub const SESSION_CLOSE_GRACE: TimeDelta = TimeDelta::minutes(5);

/// Publishes the `vol_daily` partition of the most recent session that closed at least
/// [`SESSION_CLOSE_GRACE`] before `now`, unless it is published already or the store holds no
/// chain of that session. Idempotent: a caller polls it (the embedded service every few
/// seconds), and a restart after the close catches up.
pub async fn close_latest_session(
    store: &SnapshotStore,
    now: DateTime<Utc>,
) -> Result<Option<SessionClose>, WorkerError> {
    let calendar = NyseCalendar;
    let state = calendar.market_state(now - SESSION_CLOSE_GRACE);
    let trade_date = if state.is_open {
        calendar.previous_trading_day(state.trade_date)
    } else {
        state.trade_date
    };
    let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, trade_date, MARKET_WIDE);
    if store.latest(&key).await?.is_some()
        || store
            .underlyings(snapshot_datasets::CHAIN, trade_date)
            .await?
            .is_empty()
    {
        return Ok(None);
    }
    let Some(session) = calendar.session(trade_date) else {
        return Ok(None);
    };
    let reference = CloseReference::read(store, trade_date).await?;
    publish_vol_daily(store, trade_date, session.close.to_utc(), now, &reference).await
}
