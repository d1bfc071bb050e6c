//! Restating stored `vol_daily` rows after a symbol's daily bars changed (`optics import bars`
//! of a vendor's history): every figure that follows from the closes is recomputed from the
//! market-wide bars, every figure that came from a closing chain is kept as stored.
//!
//! A row's realized windows reach back 252 sessions, so the rows restated are those of every
//! session of the symbol from the first changed bar to the last session the store has closed
//! (the newest `vol_daily` partition): rows after it are the session close's to write, and
//! a partition written ahead of it would mark its session closed
//! ([`super::close::close_latest_session`]).
//!
//! Per session and underlying, the fresh row is what [`vol_daily_history_rows`] computes
//! without a chain or an IV source (the rule of a session close: [`vol_daily_row`]); laid over
//! the stored row by [`with_close_figures`]. A session without a stored row of the symbol gets
//! the fresh row (IV columns null). A partition whose rows come out equal to the stored ones is
//! not written again, so restating twice from the same bars publishes nothing the second time;
//! a changed one is a new version of its partition, as every publication is.
//!
//! [`vol_daily_row`]: optics_compute::vol::vol_daily_row

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::time::NyseCalendar;
use optics_compute::vol::{BENCHMARK_SYMBOL, VolError, vrp};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::columns::vol_daily;
use optics_schemas::{DailyBar, EarningsEvent, VolDailyRow};

use super::WorkerError;
use super::close::{read_reference, vol_daily_history_rows};
use crate::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};

/// Sessions read, merged and published at once.
const RESTATE_CONCURRENCY: usize = 8;

/// What [`restate_vol_daily`] did.
#[derive(Debug, Default)]
pub struct RestatedVolDaily {
    /// The sessions recomputed (the symbol's bars from the first changed one to the last
    /// closed session), oldest first.
    pub sessions: Vec<NaiveDate>,
    /// Stored rows of the symbol whose close-derived figures changed.
    pub updated: usize,
    /// Sessions that had no row of the symbol and got one.
    pub added: usize,
    /// Rows of other underlyings whose beta and correlation to the benchmark changed (when
    /// the symbol is the benchmark).
    pub benchmark_updated: usize,
    /// Partitions published (a new version each); the others came out identical.
    pub published: usize,
    /// Rows that could not be computed, with the reason (their stored rows are kept).
    pub skipped: Vec<(String, NaiveDate, VolError)>,
    /// Wall time of the whole restatement.
    pub elapsed: Duration,
}

/// Recomputes the `vol_daily` rows of `symbol` for its sessions on and after `from` (the
/// first bar that changed) through the newest `vol_daily` partition, from the newest
/// market-wide `daily_bars` and `earnings` tables, keeping each stored row's chain-derived
/// figures (see the module docs), and publishes the partitions that changed. When `symbol` is
/// the benchmark ([`BENCHMARK_SYMBOL`]), the beta and correlation of the other underlyings'
/// rows on those sessions are recomputed too. A store without any `vol_daily` partition is left alone: the
/// seeding or the session close computes its rows from the same bars.
pub async fn restate_vol_daily(
    store: &SnapshotStore,
    symbol: &str,
    from: NaiveDate,
    published_at: DateTime<Utc>,
) -> Result<RestatedVolDaily, WorkerError> {
    let started = Instant::now();
    let mut out = RestatedVolDaily::default();
    let Some(&last_closed) = store
        .trade_dates(snapshot_datasets::VOL_DAILY)
        .await?
        .last()
    else {
        return Ok(out);
    };
    let benchmark = symbol == BENCHMARK_SYMBOL;
    let mut bars: Vec<DailyBar> = read_reference(store, NaiveDate::MAX).await?;
    if !benchmark {
        bars.retain(|b| b.symbol == symbol || b.symbol == BENCHMARK_SYMBOL);
    }
    let earnings: Vec<EarningsEvent> = read_reference(store, NaiveDate::MAX).await?;
    let mut sessions: Vec<NaiveDate> = bars
        .iter()
        .filter(|b| b.symbol == symbol && (from..=last_closed).contains(&b.date))
        .map(|b| b.date)
        .collect();
    sessions.sort_unstable();
    sessions.dedup();
    if sessions.is_empty() {
        return Ok(out);
    }
    let wanted = sessions.clone();
    let computed = tokio::task::spawn_blocking(move || {
        vol_daily_history_rows(
            &wanted,
            |date| NyseCalendar.session(date).map(|s| s.close.to_utc()),
            &bars,
            &earnings,
            &[],
            &[],
        )
    })
    .await
    .map_err(|e| WorkerError::Task(e.to_string()))?;
    out.skipped = computed
        .skipped
        .into_iter()
        .filter(|(s, _, _)| s == symbol || benchmark)
        .collect();
    out.sessions = sessions;

    let mut fresh_by_date: BTreeMap<NaiveDate, Vec<VolDailyRow>> = computed.by_date;
    let mut pending = tokio::task::JoinSet::new();
    for date in out.sessions.clone() {
        let Some(fresh) = fresh_by_date.remove(&date) else {
            continue;
        };
        if pending.len() >= RESTATE_CONCURRENCY
            && let Some(done) = pending.join_next().await
        {
            add_up(&mut out, done)?;
        }
        let (store, symbol) = (store.clone(), symbol.to_owned());
        pending.spawn(
            async move { restate_session(&store, &symbol, date, &fresh, published_at).await },
        );
    }
    while let Some(done) = pending.join_next().await {
        add_up(&mut out, done)?;
    }
    out.elapsed = started.elapsed();
    Ok(out)
}

/// Adds one session's [`Tally`] (or its failure) to `out`.
fn add_up(
    out: &mut RestatedVolDaily,
    done: Result<Result<Tally, WorkerError>, tokio::task::JoinError>,
) -> Result<(), WorkerError> {
    let tally = done.map_err(|e| WorkerError::Task(e.to_string()))??;
    out.updated += tally.updated;
    out.added += tally.added;
    out.benchmark_updated += tally.benchmark_updated;
    out.published += usize::from(tally.published);
    out.skipped.extend(tally.skipped);
    Ok(())
}

/// What restating one session did.
#[derive(Debug, Default)]
struct Tally {
    updated: usize,
    added: usize,
    benchmark_updated: usize,
    published: bool,
    skipped: Vec<(String, NaiveDate, VolError)>,
}

/// Reads the `vol_daily` partition of `date`, lays `fresh` over it ([`restate_rows`]) and
/// publishes it when anything changed.
async fn restate_session(
    store: &SnapshotStore,
    symbol: &str,
    date: NaiveDate,
    fresh: &[VolDailyRow],
    published_at: DateTime<Utc>,
) -> Result<Tally, WorkerError> {
    let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, date, MARKET_WIDE);
    let mut stored = Vec::new();
    if let Some(snapshot) = store.read(&key).await? {
        for batch in &snapshot.batches {
            stored.extend(VolDailyRow::from_batch(batch)?);
        }
    }
    let (rows, mut tally) = restate_rows(&stored, symbol, fresh);
    if rows != stored {
        let batch = VolDailyRow::to_batch(&rows)?;
        store
            .publish(&key, &batch, &[vol_daily::UNDERLYING], published_at)
            .await?;
        tally.published = true;
    }
    Ok(tally)
}

/// One session's `vol_daily` rows after `symbol`'s bars changed: `stored` (the partition as
/// stored, any order) with `symbol`'s row replaced by [`with_close_figures`] of its fresh row
/// in `fresh` (added when there was none), and — when `symbol` is the benchmark — every other
/// stored row's beta and correlation taken from its fresh row. Sorted by underlying.
fn restate_rows(
    stored: &[VolDailyRow],
    symbol: &str,
    fresh: &[VolDailyRow],
) -> (Vec<VolDailyRow>, Tally) {
    let mut tally = Tally::default();
    let fresh_of = |underlying: &str| fresh.iter().find(|r| r.underlying == underlying);
    let mut rows: Vec<VolDailyRow> = Vec::with_capacity(stored.len() + 1);
    for row in stored {
        let restated = match fresh_of(&row.underlying) {
            Some(new) if row.underlying == symbol => match with_close_figures(row, new) {
                Ok(restated) => restated,
                Err(e) => {
                    tally.skipped.push((symbol.to_owned(), row.trade_date, e));
                    row.clone()
                }
            },
            Some(new) if symbol == BENCHMARK_SYMBOL => VolDailyRow {
                beta_spy_1y: new.beta_spy_1y,
                correlation_spy_1y: new.correlation_spy_1y,
                ..row.clone()
            },
            _ => row.clone(),
        };
        if restated != *row {
            if row.underlying == symbol {
                tally.updated += 1;
            } else {
                tally.benchmark_updated += 1;
            }
        }
        rows.push(restated);
    }
    if !stored.iter().any(|r| r.underlying == symbol)
        && let Some(new) = fresh_of(symbol)
    {
        rows.push(new.clone());
        tally.added += 1;
    }
    rows.sort_by(|a, b| a.underlying.cmp(&b.underlying));
    (rows, tally)
}

/// `stored` with every figure that follows from the closes taken from `fresh` (the row
/// recomputed from the bars): the close, the realized vols, the ex-earnings HV and its flag,
/// the 1-day log return, beta and correlation to SPY and the earnings-move statistics; and the
/// VRP recomputed from the stored `iv30d_pct` against the new 30-session HV (the rule of a
/// session close). The chain's figures (IVs, front expiration, skew, IV rank and percentile,
/// anything else a closing chain adds) and `as_of` stay as stored.
pub fn with_close_figures(
    stored: &VolDailyRow,
    fresh: &VolDailyRow,
) -> Result<VolDailyRow, VolError> {
    let mut row = VolDailyRow {
        close: fresh.close,
        hv_5d_pct: fresh.hv_5d_pct,
        hv_10d_pct: fresh.hv_10d_pct,
        hv_20d_pct: fresh.hv_20d_pct,
        hv_30d_pct: fresh.hv_30d_pct,
        hv_60d_pct: fresh.hv_60d_pct,
        hv_90d_pct: fresh.hv_90d_pct,
        hv_120d_pct: fresh.hv_120d_pct,
        hv_180d_pct: fresh.hv_180d_pct,
        hv_252d_pct: fresh.hv_252d_pct,
        hv_30d_ex_earnings_pct: fresh.hv_30d_ex_earnings_pct,
        earnings_in_hv_30d_window: fresh.earnings_in_hv_30d_window,
        beta_spy_1y: fresh.beta_spy_1y,
        correlation_spy_1y: fresh.correlation_spy_1y,
        log_return_1d: fresh.log_return_1d,
        earnings_count: fresh.earnings_count,
        earnings_up_count: fresh.earnings_up_count,
        earnings_down_count: fresh.earnings_down_count,
        earnings_beat_count: fresh.earnings_beat_count,
        earnings_miss_count: fresh.earnings_miss_count,
        earnings_avg_move_pct: fresh.earnings_avg_move_pct,
        earnings_avg_abs_move_pct: fresh.earnings_avg_abs_move_pct,
        earnings_avg_up_move_pct: fresh.earnings_avg_up_move_pct,
        earnings_avg_down_move_pct: fresh.earnings_avg_down_move_pct,
        earnings_avg_beat_move_pct: fresh.earnings_avg_beat_move_pct,
        earnings_avg_miss_move_pct: fresh.earnings_avg_miss_move_pct,
        earnings_max_up_pct: fresh.earnings_max_up_pct,
        earnings_max_down_pct: fresh.earnings_max_down_pct,
        ..stored.clone()
    };
    (row.vrp_30d_pct, row.vrp_ratio) = match (row.iv30d_pct, row.hv_30d_pct) {
        (Some(iv), Some(realized)) => {
            let premium = vrp(iv, realized)?;
            (Some(premium.premium_pct), premium.ratio)
        }
        _ => (None, None),
    };
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn row(underlying: &str, close: f64) -> VolDailyRow {
        let date = day("2026-11-20");
        let as_of = NyseCalendar.session(date).unwrap().close.to_utc();
        VolDailyRow::new(underlying, date, as_of, close)
    }

    #[test]
    fn close_figures_are_replaced_and_chain_figures_kept() {
        let mut stored = row("AAPL", 200.0);
        stored.iv30d_pct = Some(30.0);
        stored.iv_rank = Some(55.0);
        stored.iv_percentile = Some(60.0);
        stored.front_atm_iv_pct = Some(31.0);
        stored.hv_30d_pct = Some(20.0);
        stored.vrp_30d_pct = Some(10.0);
        stored.vrp_ratio = Some(1.5);
        let mut fresh = row("AAPL", 205.0);
        fresh.hv_30d_pct = Some(24.0);
        fresh.hv_252d_pct = Some(22.0);
        fresh.log_return_1d = Some(0.01);
        let restated = with_close_figures(&stored, &fresh).unwrap();
        assert_eq!(restated.close, 205.0);
        assert_eq!(restated.hv_30d_pct, Some(24.0));
        assert_eq!(restated.hv_252d_pct, Some(22.0));
        assert_eq!(restated.log_return_1d, Some(0.01));
        assert_eq!(
            (
                restated.iv30d_pct,
                restated.iv_rank,
                restated.iv_percentile,
                restated.front_atm_iv_pct
            ),
            (Some(30.0), Some(55.0), Some(60.0), Some(31.0))
        );
        assert_eq!(restated.vrp_30d_pct, Some(6.0));
        assert_eq!(restated.vrp_ratio, Some(1.25));
        // Without a 30-session HV there is no premium.
        fresh.hv_30d_pct = None;
        let restated = with_close_figures(&stored, &fresh).unwrap();
        assert_eq!((restated.vrp_30d_pct, restated.vrp_ratio), (None, None));
    }

    #[test]
    fn a_session_gets_the_symbol_row_it_lacked_and_keeps_the_others() {
        let stored = vec![row("QQQ", 500.0), row("SPY", 600.0)];
        let mut fresh = vec![row("AAPL", 205.0), row("SPY", 601.0)];
        fresh[0].hv_10d_pct = Some(18.0);
        fresh[1].beta_spy_1y = Some(1.0);
        let (rows, tally) = restate_rows(&stored, "AAPL", &fresh);
        let got: Vec<(&str, f64)> = rows
            .iter()
            .map(|r| (r.underlying.as_str(), r.close))
            .collect();
        assert_eq!(got, [("AAPL", 205.0), ("QQQ", 500.0), ("SPY", 600.0)]);
        assert_eq!(
            (tally.added, tally.updated, tally.benchmark_updated),
            (1, 0, 0)
        );
        assert_eq!(rows[0].hv_10d_pct, Some(18.0));
        // The same fresh rows over the result change nothing.
        let (again, tally) = restate_rows(&rows, "AAPL", &fresh);
        assert_eq!(again, rows);
        assert_eq!((tally.added, tally.updated), (0, 0));
    }

    #[test]
    fn the_benchmark_restates_the_others_beta_only() {
        let stored = vec![row("QQQ", 500.0), row("SPY", 600.0)];
        let mut fresh = vec![row("QQQ", 499.0), row("SPY", 610.0)];
        fresh[0].beta_spy_1y = Some(1.2);
        fresh[0].correlation_spy_1y = Some(0.9);
        let (rows, tally) = restate_rows(&stored, "SPY", &fresh);
        assert_eq!(rows[0].close, 500.0, "QQQ keeps its close");
        assert_eq!(
            (rows[0].beta_spy_1y, rows[0].correlation_spy_1y),
            (Some(1.2), Some(0.9))
        );
        assert_eq!(rows[1].close, 610.0);
        assert_eq!((tally.updated, tally.benchmark_updated), (1, 1));
    }
}
