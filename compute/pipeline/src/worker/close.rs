//! The session close: once a session's last chain snapshots are in the store, the market-wide
//! `vol_daily` partition of that trade date and its `vol_term` partition (the ATM term
//! structure per expiration) are computed from them (see [`optics_compute::vol::vol_daily_rows`]) and
//! published, `vol_term` first: a `vol_daily` partition marks the session closed.
//!
//! Inputs come from the store — the closing chain of every underlying of the trade date, the
//! latest `daily_bars` and `earnings` reference tables on or before it, and the earlier
//! `vol_daily` partitions (the IV rank lookback) — or, for seeding and backfill, which hold the
//! history in memory already, partly from the caller ([`CloseReference`]).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::columns::{vol_daily, vol_term};
use optics_schemas::{
    ChainRow, DailyBar, Dataset, EarningsEvent, Record, SnapshotEvent, VolDailyRow, VolTermRow,
};
use rayon::prelude::*;

use super::WorkerError;
use crate::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_compute::time::NyseCalendar;
use optics_compute::vol::close::{SymbolSeries, iv30_by_underlying, reaction_sessions};
use optics_compute::vol::{
    BENCHMARK_SYMBOL, ConstantMaturityIv, DailyVolInputs, EarningsMove, IV_RANK_LOOKBACK_SESSIONS,
    SessionCloseInputs, SmileShape, VolError, earnings_moves, iv_rank_against_prior, vol_daily_row,
    vol_daily_rows, vrp,
};

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
    /// The publication of the `vol_daily` partition.
    pub event: SnapshotEvent,
    /// The rows written, sorted by underlying.
    pub rows: Vec<VolDailyRow>,
    /// The publication of the `vol_term` partition (none when no closing chain had an
    /// expiration to describe).
    pub term_event: Option<SnapshotEvent>,
    /// Its rows, sorted by underlying then nearest expiration.
    pub term: Vec<VolTermRow>,
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
    let term_event = if computed.term.is_empty() {
        None
    } else {
        let batch = VolTermRow::to_batch(&computed.term)?;
        let key = SnapshotKey::new(snapshot_datasets::VOL_TERM, trade_date, MARKET_WIDE);
        let sort = [vol_term::UNDERLYING];
        Some(store.publish(&key, &batch, &sort, published_at).await?)
    };
    let batch = VolDailyRow::to_batch(&computed.rows)?;
    let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, trade_date, MARKET_WIDE);
    let event = store
        .publish(&key, &batch, &[vol_daily::UNDERLYING], published_at)
        .await?;
    Ok(Some(SessionClose {
        event,
        rows: computed.rows,
        term_event,
        term: computed.term,
        skipped: computed.skipped,
    }))
}

/// One underlying's constant-maturity at-the-money-forward IVs at a past session's close,
/// from a source other than a closing chain (the simulator's surface history, a vendor's IV
/// history), in percentage points like the chain-derived figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelIv {
    /// Underlying symbol.
    pub underlying: String,
    /// The session.
    pub trade_date: NaiveDate,
    /// IV at 10 … 365 calendar days.
    pub iv: ConstantMaturityIv,
    /// Slope and curvature of the source's 30-day smile at the money, points (the
    /// `skew_slope_30d` and `smile_curvature_30d` of the row); `None` when it has none.
    pub smile_30d: Option<SmileShape>,
}

/// The `vol_daily` rows of past sessions without closing chains, and the underlyings left out.
#[derive(Debug, Default)]
pub struct HistoryRows {
    /// Per session, one row per underlying with a bar that day, sorted by underlying.
    pub by_date: BTreeMap<NaiveDate, Vec<VolDailyRow>>,
    /// Underlyings and sessions without a row, with the reason.
    pub skipped: Vec<(String, NaiveDate, VolError)>,
}

/// The `vol_daily` rows of `trade_dates` (past sessions that have no closing chain: the years
/// of history a fresh store is seeded with), one per underlying with a bar that day.
///
/// Each row is what [`vol_daily_rows`] computes for the session without a chain — closes from
/// `bars` up to that day, realized vols, the ex-earnings HV, beta and correlation to SPY — with
/// the IV columns taken from `model_iv` instead of a chain (`iv10d_pct` … `iv1yr_pct`), and
/// IV rank, percentile and VRP computed from them by the same rule as a session close
/// ([`vol_daily_row`]): rank and percentile of today's `iv30d_pct` among the last
/// [`IV_RANK_LOOKBACK_SESSIONS`] sessions including today, null below [`IV_RANK_MIN_SESSIONS`].
/// The lookback is `prior` (earlier rows, e.g. already in the store; those on one of
/// `trade_dates` are replaced) and the rows computed here for earlier `trade_dates`. Front
/// expiration, front ATM IV and the 25-delta skew need a chain and stay null (and there are no
/// `vol_term` rows); the log return and the earnings-move statistics (the reports reacted by
/// each day, [`earnings_moves`]) come from the bars as at a session close.
///
/// `close_of` gives each session's close instant (the rows' `as_of`); a date it has none for
/// gets no rows.
pub fn vol_daily_history_rows(
    trade_dates: &[NaiveDate],
    close_of: impl Fn(NaiveDate) -> Option<DateTime<Utc>> + Sync,
    bars: &[DailyBar],
    earnings: &[EarningsEvent],
    model_iv: &[ModelIv],
    prior: &[VolDailyRow],
) -> HistoryRows {
    let wanted: BTreeSet<NaiveDate> = trade_dates.iter().copied().collect();
    let series = SymbolSeries::new(bars, earnings);
    let closes_by_symbol = &series.closes;
    let mut iv_by_symbol: BTreeMap<&str, BTreeMap<NaiveDate, &ModelIv>> = BTreeMap::new();
    for row in model_iv {
        iv_by_symbol
            .entry(row.underlying.as_str())
            .or_default()
            .insert(row.trade_date, row);
    }
    let prior_iv30 = iv30_by_underlying(prior.iter().filter(|r| !wanted.contains(&r.trade_date)));
    let benchmark = closes_by_symbol.get(BENCHMARK_SYMBOL);
    let per_symbol: Vec<Vec<(NaiveDate, Result<VolDailyRow, VolError>)>> = closes_by_symbol
        .par_iter()
        .map(|(&symbol, closes_by_date)| {
            let dates: Vec<NaiveDate> = closes_by_date.keys().copied().collect();
            let closes: Vec<f64> = closes_by_date.values().copied().collect();
            let symbol_reports = series.reports_of(symbol);
            let reactions = reaction_sessions(&dates, symbol_reports);
            let opens = series.opens_on(symbol, &dates);
            // Every move of the history once; each day takes those reacted by then.
            let (move_sessions, moves): (Vec<usize>, Vec<EarningsMove>) =
                earnings_moves(&dates, &opens, &closes, symbol_reports)
                    .into_iter()
                    .unzip();
            // SPY on every date of the symbol up to the day, as a session close requires.
            let spy: Vec<f64> = benchmark.map_or_else(Vec::new, |spy| {
                dates.iter().map_while(|d| spy.get(d).copied()).collect()
            });
            let ivs = iv_by_symbol.get(symbol);
            let mut iv30_series = prior_iv30.get(symbol).cloned().unwrap_or_default();
            let mut out = Vec::new();
            for (i, &day) in dates.iter().enumerate() {
                if !wanted.contains(&day) {
                    continue;
                }
                let Some(as_of) = close_of(day) else { continue };
                let inputs = DailyVolInputs {
                    underlying: symbol,
                    trade_date: day,
                    as_of,
                    closes: &closes[..=i],
                    reaction_sessions: &reactions[..reactions.partition_point(|&s| s <= i)],
                    chain: &[],
                    prior_iv30d_pct: &[],
                    spy_closes: spy.get(..=i),
                    earnings_moves: (!symbol_reports.is_empty())
                        .then(|| &moves[..move_sessions.partition_point(|&s| s <= i)]),
                };
                let row = vol_daily_row(&inputs).and_then(|mut row| {
                    if let Some(iv) = ivs.and_then(|by_date| by_date.get(&day)) {
                        with_model_iv(&mut row, iv, &iv30_series)?;
                    }
                    Ok(row)
                });
                if let Ok(VolDailyRow {
                    iv30d_pct: Some(iv30),
                    ..
                }) = &row
                {
                    iv30_series.insert(day, *iv30);
                }
                out.push((day, row));
            }
            out
        })
        .collect();
    let mut rows = HistoryRows::default();
    for (symbol, results) in closes_by_symbol.keys().zip(per_symbol) {
        for (day, result) in results {
            match result {
                Ok(row) => rows.by_date.entry(day).or_default().push(row),
                Err(e) => rows.skipped.push(((*symbol).to_owned(), day, e)),
            }
        }
    }
    rows
}

/// Sets the IV columns of `row` from `iv`, and the IV rank, percentile and VRP that follow
/// from them and the earlier `iv30d_pct` values (`earlier`, by date; those before the row's
/// date are used), by the rule of [`vol_daily_row`].
fn with_model_iv(
    row: &mut VolDailyRow,
    model: &ModelIv,
    earlier: &BTreeMap<NaiveDate, f64>,
) -> Result<(), VolError> {
    let iv = &model.iv;
    row.skew_slope_30d = model.smile_30d.map(|s| s.slope);
    row.smile_curvature_30d = model.smile_30d.map(|s| s.curvature);
    row.iv10d_pct = iv.iv10d_pct;
    row.iv20d_pct = iv.iv20d_pct;
    row.iv30d_pct = iv.iv30d_pct;
    row.iv60d_pct = iv.iv60d_pct;
    row.iv90d_pct = iv.iv90d_pct;
    row.iv6m_pct = iv.iv6m_pct;
    row.iv1yr_pct = iv.iv1yr_pct;
    let Some(today) = iv.iv30d_pct else {
        return Ok(());
    };
    let mut prior: Vec<f64> = earlier
        .range(..row.trade_date)
        .rev()
        .take(IV_RANK_LOOKBACK_SESSIONS - 1)
        .map(|(_, iv)| *iv)
        .collect();
    prior.reverse();
    (row.iv_rank, row.iv_percentile) = iv_rank_against_prior(&prior, today)?;
    if let Some(realized) = row.hv_30d_pct {
        let premium = vrp(today, realized)?;
        row.vrp_30d_pct = Some(premium.premium_pct);
        row.vrp_ratio = premium.ratio;
    }
    Ok(())
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
