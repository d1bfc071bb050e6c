//! History for a fresh store: the simulator's reference tables (company map, daily bars,
//! earnings, dividends, borrow, economic calendar) and the end-of-day snapshots of past
//! sessions, built by the same compute code the live worker runs.

use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use indicatif::ProgressBar;
use optics_compute::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_compute::time::{ManualClock, NyseCalendar};
use optics_compute::worker::close::read_prior_vol_daily;
use optics_compute::worker::{CloseReference, ComputeWorker, WorkerConfig, publish_vol_daily};
use optics_ingest::simulator::history::{HistoryConfig, MarketHistory, history_from_tape};
use optics_ingest::simulator::market::MarketTape;
use optics_ingest::simulator::quotes::OpenInterestBook;
use optics_ingest::simulator::session::{SessionConfig, SessionSimulator};
use optics_ingest::simulator::universe::Universe;
use optics_schemas::{
    BorrowRate, Company, DailyBar, Dataset, Dividend, EarningsEvent, EconomicEvent, Record,
};

/// What seeding did.
#[derive(Debug, Default)]
pub(crate) struct SeedSummary {
    pub(crate) sessions: usize,
    pub(crate) snapshots: u64,
    pub(crate) contracts: u64,
    /// `vol_daily` rows published (one per underlying and session).
    pub(crate) vol_rows: u64,
}

/// The `count` trading days up to and including `last`, oldest first.
pub(crate) fn last_sessions(last: NaiveDate, count: usize) -> Vec<NaiveDate> {
    let calendar = NyseCalendar;
    let mut day = if calendar.is_trading_day(last) {
        last
    } else {
        calendar.previous_trading_day(last)
    };
    let mut days = Vec::with_capacity(count);
    while days.len() < count {
        days.push(day);
        day = calendar.previous_trading_day(day);
    }
    days.reverse();
    days
}

/// The trading days from `from` to `to`, both inclusive.
pub(crate) fn sessions_between(from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    NyseCalendar.trading_days(from, to).collect()
}

/// Writes the history's reference tables as market-wide partitions of `trade_date`.
pub(crate) async fn publish_reference(
    store: &SnapshotStore,
    history: &MarketHistory,
    trade_date: NaiveDate,
    published_at: DateTime<Utc>,
) -> anyhow::Result<()> {
    async fn put<R: Record>(
        store: &SnapshotStore,
        rows: &[R],
        trade_date: NaiveDate,
        published_at: DateTime<Utc>,
    ) -> anyhow::Result<()> {
        let dataset = R::DATASET.name();
        let batch = R::to_batch(rows).with_context(|| format!("{dataset} rows"))?;
        let key = SnapshotKey::new(dataset, trade_date, MARKET_WIDE);
        store
            .publish(&key, &batch, &[], published_at)
            .await
            .with_context(|| format!("publishing {dataset}"))?;
        Ok(())
    }
    put::<Company>(store, &history.companies, trade_date, published_at).await?;
    put::<DailyBar>(store, &history.bars, trade_date, published_at).await?;
    put::<EarningsEvent>(store, &history.earnings, trade_date, published_at).await?;
    put::<Dividend>(store, &history.dividends, trade_date, published_at).await?;
    put::<BorrowRate>(store, &history.borrow, trade_date, published_at).await?;
    put::<EconomicEvent>(store, &history.economic, trade_date, published_at).await?;
    debug_assert_eq!(Dataset::Companies.name(), "companies");
    Ok(())
}

/// Simulates the history through `last` and the end-of-day snapshots of `sessions` (oldest
/// first, all on or before `last`), publishing both. Each session is simulated from the
/// previous one's closing open interest, jumped to its close, and built by an offline worker
/// at the closing instant; its `vol_daily` partition follows from the closing chains, the
/// history and the earlier sessions' rows (those already in the store included).
pub(crate) async fn seed(
    store: &SnapshotStore,
    universe: &Arc<Universe>,
    seed: u64,
    rate: f64,
    history_years: u32,
    sessions: &[NaiveDate],
    progress: &ProgressBar,
) -> anyhow::Result<(SeedSummary, Arc<MarketTape>)> {
    let last = *sessions.last().context("no sessions to seed")?;
    let universe_for_tape = Arc::clone(universe);
    let tape = tokio::task::spawn_blocking(move || {
        Arc::new(MarketTape::simulate(&universe_for_tape, seed, last))
    })
    .await
    .context("market tape")?;
    let history = history_from_tape(
        universe,
        &tape,
        &HistoryConfig {
            seed,
            end: last,
            years: history_years,
        },
    )
    .context("simulating the history")?;
    let close_of = |date: NaiveDate| {
        NyseCalendar
            .session(date)
            .map(|s| s.close.to_utc())
            .context("not a trading day")
    };
    publish_reference(store, &history, last, close_of(last)?).await?;

    let mut close_reference = CloseReference {
        prior: read_prior_vol_daily(store, sessions[0]).await?,
        bars: history.bars.clone(),
        earnings: history.earnings.clone(),
    };
    let mut summary = SeedSummary::default();
    let mut carried: Option<OpenInterestBook> = None;
    progress.set_length(sessions.len() as u64);
    for &date in sessions {
        let close = close_of(date)?;
        let is_last = date == last;
        let config = SessionConfig {
            // The closing snapshot is all a past session keeps; a coarse grid makes the jump
            // to it cheap (the close itself is always on the grid).
            interval: TimeDelta::minutes(30),
            rate,
            ..SessionConfig::new(seed, date)
        };
        let (universe, tape) = (Arc::clone(universe), Arc::clone(&tape));
        let carried_in = carried.take();
        let (event, closing_oi) = tokio::task::spawn_blocking(move || {
            let mut session =
                SessionSimulator::with_tape(universe, tape, config, carried_in.as_ref())?;
            let event = session.advance_to(close).transpose()?;
            anyhow::Ok((event, session.closing_open_interest()))
        })
        .await
        .context("session task")?
        .with_context(|| format!("simulating {date}"))?;
        carried = Some(closing_oi);
        let Some(event) = event else { continue };
        let clock = Arc::new(ManualClock::new(close));
        // Past sessions keep their end-of-day chain; exposures and flow are live datasets,
        // built for the last session only.
        let config = WorkerConfig {
            rate,
            chain_only: !is_last,
            ..WorkerConfig::default()
        };
        let mut worker = ComputeWorker::offline(store.clone(), clock, config);
        for message in &event.messages {
            worker
                .apply(message)
                .context("applying a simulated message")?;
        }
        worker
            .publish_dirty(close)
            .await
            .with_context(|| format!("building the snapshots of {date}"))?;
        if let Some(closed) = publish_vol_daily(store, date, close, close, &close_reference)
            .await
            .with_context(|| format!("the session close of {date}"))?
        {
            summary.snapshots += 1;
            summary.vol_rows += closed.rows.len() as u64;
            close_reference.prior.extend(closed.rows);
        }
        summary.sessions += 1;
        summary.snapshots += worker.stats().snapshots;
        summary.contracts += worker.stats().quotes_accepted;
        progress.inc(1);
    }
    Ok((summary, tape))
}
