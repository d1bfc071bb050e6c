//! History for a fresh store: the simulator's reference tables (company map, daily bars,
//! earnings, dividends, borrow, economic calendar), the `vol_daily` rows of the history's
//! sessions (realized vols from the bars, IV from the simulator's surface history) and the
//! end-of-day snapshots of recent sessions, built by the same compute code the live worker runs.
//!
//! Daily bars imported with `optics import bars` live in per-symbol `daily_bars` partitions
//! (the import's record) and are merged into the market-wide partition every reader reads
//! ([`merge_bars_into_market_wide`]); seeding writes that partition again, so it lays the
//! imported bars over the simulated ones ([`imported_bars`], [`reference::overlay`]). Imported
//! earnings reports and economic releases are laid over the simulated ones the same way, from
//! their imports' record ([`reference::IMPORTED`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use indicatif::ProgressBar;
use optics_compute::time::{ManualClock, NyseCalendar};
use optics_compute::vol::{ConstantMaturityIv, SmileShape};
use optics_ingest::simulator::history::{DailyIv, HistoryConfig, MarketHistory, history_from_tape};
use optics_ingest::simulator::market::MarketTape;
use optics_ingest::simulator::quotes::OpenInterestBook;
use optics_ingest::simulator::session::{SessionConfig, SessionSimulator};
use optics_ingest::simulator::universe::Universe;
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_pipeline::worker::close::{ModelIv, read_prior_vol_daily, vol_daily_history_rows};
use optics_pipeline::worker::reference;
use optics_pipeline::worker::{CloseReference, ComputeWorker, WorkerConfig, publish_vol_daily};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::columns::vol_daily;
use optics_schemas::{
    BorrowRate, Company, DailyBar, Dataset, Dividend, EarningsEvent, EconomicEvent, Record,
    VolDailyRow,
};

/// What seeding did.
#[derive(Debug, Default)]
pub(crate) struct SeedSummary {
    pub(crate) sessions: usize,
    pub(crate) snapshots: u64,
    pub(crate) contracts: u64,
    /// `vol_daily` rows published (one per underlying and session).
    pub(crate) vol_rows: u64,
    /// Of those, the rows of the history's sessions before the first seeded one (no chain:
    /// IV from the simulator's surface history).
    pub(crate) history_vol_rows: u64,
    /// The sessions those rows cover.
    pub(crate) history_vol_sessions: usize,
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

/// Writes the history's reference tables as market-wide partitions of `trade_date` (the
/// daily bars with the imported ones laid over the simulated ones, at the later of
/// `trade_date` and the last imported bar); returns the daily bars written.
pub(crate) async fn publish_reference(
    store: &SnapshotStore,
    history: &MarketHistory,
    trade_date: NaiveDate,
    published_at: DateTime<Utc>,
) -> anyhow::Result<Vec<DailyBar>> {
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
    let imported = imported_bars(store).await?;
    let bars_date = imported
        .iter()
        .map(|b| b.date)
        .max()
        .map_or(trade_date, |last| last.max(trade_date));
    let (bars, _) = reference::overlay(history.bars.clone(), &imported);
    put::<DailyBar>(store, &bars, bars_date, published_at).await?;
    let (earnings, imported_on) = with_imported::<EarningsEvent>(store, &history.earnings).await?;
    for date in partition_dates(trade_date, imported_on) {
        put::<EarningsEvent>(store, &earnings, date, published_at).await?;
    }
    put::<Dividend>(store, &history.dividends, trade_date, published_at).await?;
    put::<BorrowRate>(store, &history.borrow, trade_date, published_at).await?;
    let (economic, imported_on) = with_imported::<EconomicEvent>(store, &history.economic).await?;
    for date in partition_dates(trade_date, imported_on) {
        put::<EconomicEvent>(store, &economic, date, published_at).await?;
    }
    debug_assert_eq!(Dataset::Companies.name(), "companies");
    Ok(bars)
}

/// `simulated` with every row `optics import earnings` / `economic-calendar` stored (the
/// newest [`reference::IMPORTED`] partition) laid over it, and that partition's date.
async fn with_imported<R: reference::ReferenceRow>(
    store: &SnapshotStore,
    simulated: &[R],
) -> anyhow::Result<(Vec<R>, Option<NaiveDate>)> {
    let imported = reference::imported_rows::<R>(store)
        .await
        .with_context(|| format!("imported {} rows", R::DATASET.name()))?;
    Ok(match imported {
        Some((date, rows)) => (reference::overlay(simulated.to_vec(), &rows).0, Some(date)),
        None => (simulated.to_vec(), None),
    })
}

/// The market-wide partitions a reference table with imported rows is written to: the
/// seeded session's (what its close reads) and, when the import's record is later, the
/// import's too, so the newest table still holds the imported rows.
fn partition_dates(trade_date: NaiveDate, imported_on: Option<NaiveDate>) -> Vec<NaiveDate> {
    match imported_on {
        Some(date) if date > trade_date => vec![trade_date, date],
        _ => vec![trade_date],
    }
}

/// Every bar of the per-symbol `daily_bars` partitions (what `optics import bars` wrote),
/// older imports first so a later import of the same session wins in [`reference::overlay`].
pub(crate) async fn imported_bars(store: &SnapshotStore) -> anyhow::Result<Vec<DailyBar>> {
    let dataset = Dataset::DailyBars.name();
    let mut bars = Vec::new();
    for date in store.trade_dates(dataset).await? {
        for underlying in store.underlyings(dataset, date).await? {
            if underlying == MARKET_WIDE {
                continue;
            }
            let key = SnapshotKey::new(dataset, date, underlying.as_str());
            if let Some(snapshot) = store.read(&key).await? {
                for batch in &snapshot.batches {
                    bars.extend(
                        DailyBar::from_batch(batch)
                            .with_context(|| format!("imported bars of {underlying}"))?,
                    );
                }
            }
        }
    }
    Ok(bars)
}

/// Lays `bars` over the newest market-wide `daily_bars` partition — the one the API's share
/// volumes and the session close read — and publishes the result as a new version (of that
/// partition, or of the partition of `bars`' last date when that is later): one atomic file,
/// every other symbol's rows kept, a concurrent publication merged onto
/// ([`reference::merge_into_market_wide`], the rule the live worker's bars follow too).
pub(crate) async fn merge_bars_into_market_wide(
    store: &SnapshotStore,
    bars: &[DailyBar],
    published_at: DateTime<Utc>,
) -> anyhow::Result<reference::ReferenceMerge> {
    let last = bars
        .iter()
        .map(|b| b.date)
        .max()
        .context("no bars to merge")?;
    Ok(reference::merge_into_market_wide(store, bars, last, published_at).await?)
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
    let bars = publish_reference(store, &history, last, close_of(last)?).await?;
    let mut summary = SeedSummary::default();
    let (history_sessions, history_rows) =
        seed_vol_history(store, &history, &bars, sessions[0]).await?;
    summary.history_vol_sessions = history_sessions;
    summary.history_vol_rows = history_rows;
    summary.vol_rows += history_rows;
    summary.snapshots += history_sessions as u64;

    // The history's rows just written are the IV rank lookback of the first sessions.
    let mut close_reference = CloseReference {
        prior: read_prior_vol_daily(store, sessions[0]).await?,
        bars,
        earnings: history.earnings.clone(),
    };
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

/// Sessions of `vol_daily` partitions published at once while seeding the history.
const HISTORY_PUBLISH_CONCURRENCY: usize = 8;

/// Publishes the `vol_daily` partitions of the history's sessions before `first_session` that
/// the store does not hold yet (a partition already there — a replayed or earlier seeded
/// session — is kept): realized vols from `bars` and the simulator's IV history at constant
/// maturities ([`vol_daily_history_rows`]); no chains are built for these sessions. Returns
/// the sessions and rows written.
pub(crate) async fn seed_vol_history(
    store: &SnapshotStore,
    history: &MarketHistory,
    bars: &[DailyBar],
    first_session: NaiveDate,
) -> anyhow::Result<(usize, u64)> {
    let Some(before_first) = first_session.pred_opt() else {
        return Ok((0, 0));
    };
    if history.start > before_first {
        return Ok((0, 0));
    }
    let stored: BTreeSet<NaiveDate> = store
        .trade_dates(snapshot_datasets::VOL_DAILY)
        .await?
        .into_iter()
        .collect();
    let window: Vec<NaiveDate> = sessions_between(history.start, before_first);
    let missing: Vec<NaiveDate> = window
        .iter()
        .copied()
        .filter(|d| !stored.contains(d))
        .collect();
    if missing.is_empty() {
        return Ok((0, 0));
    }
    // Stored rows of the window: the rank lookback of the rows computed here.
    let mut prior: Vec<VolDailyRow> = Vec::new();
    for date in window.iter().filter(|d| stored.contains(d)) {
        let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, *date, MARKET_WIDE);
        if let Some(snapshot) = store.read(&key).await? {
            for batch in &snapshot.batches {
                prior.extend(VolDailyRow::from_batch(batch)?);
            }
        }
    }
    let model_iv: Vec<ModelIv> = history.iv.iter().map(model_iv).collect();
    let (bars, earnings) = (bars.to_vec(), history.earnings.clone());
    let rows = tokio::task::spawn_blocking(move || {
        vol_daily_history_rows(
            &missing,
            |date| NyseCalendar.session(date).map(|s| s.close.to_utc()),
            &bars,
            &earnings,
            &model_iv,
            &prior,
        )
    })
    .await
    .context("history vol rows")?;
    if let Some((symbol, date, error)) = rows.skipped.first() {
        // A simulator bar or IV that is not a usable number is a bug; say so, keep the rest.
        eprintln!(
            "vol history: {} rows left out, e.g. {symbol} on {date}: {error}",
            rows.skipped.len()
        );
    }
    let sessions = rows.by_date.len();
    let mut written = 0u64;
    let mut pending = tokio::task::JoinSet::new();
    for (date, day_rows) in rows.by_date {
        if pending.len() >= HISTORY_PUBLISH_CONCURRENCY
            && let Some(done) = pending.join_next().await
        {
            written += done.context("vol history task")??;
        }
        let store = store.clone();
        pending.spawn(async move {
            let close = NyseCalendar
                .session(date)
                .map(|s| s.close.to_utc())
                .context("not a trading day")?;
            let batch = VolDailyRow::to_batch(&day_rows)?;
            let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, date, MARKET_WIDE);
            store
                .publish(&key, &batch, &[vol_daily::UNDERLYING], close)
                .await
                .with_context(|| format!("vol_daily of {date}"))?;
            anyhow::Ok(day_rows.len() as u64)
        });
    }
    while let Some(done) = pending.join_next().await {
        written += done.context("vol history task")??;
    }
    Ok((sessions, written))
}

/// The simulator's IV of one session as constant-maturity percentage points (its IVs are
/// decimals at the `vol_daily` tenors: 10, 20, 30, 60, 90, 180 and 365 days).
fn model_iv(iv: &DailyIv) -> ModelIv {
    let pct = |decimal: f64| Some(decimal * 100.0).filter(|v| v.is_finite() && *v > 0.0);
    ModelIv {
        underlying: iv.symbol.clone(),
        trade_date: iv.date,
        iv: ConstantMaturityIv {
            iv10d_pct: pct(iv.iv10),
            iv20d_pct: pct(iv.iv20),
            iv30d_pct: pct(iv.iv30),
            iv60d_pct: pct(iv.iv60),
            iv90d_pct: pct(iv.iv90),
            iv6m_pct: pct(iv.iv180),
            iv1yr_pct: pct(iv.iv365),
        },
        smile_30d: Some(SmileShape {
            slope: iv.smile_slope_30d * 100.0,
            curvature: iv.smile_curvature_30d * 100.0,
        })
        .filter(|s| s.slope.is_finite() && s.curvature.is_finite()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use optics_ingest::simulator::universe::Universe;
    use optics_pipeline::worker::close::read_reference;

    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn bar(symbol: &str, date: &str, close: f64, volume: u64) -> DailyBar {
        DailyBar {
            symbol: symbol.to_owned(),
            date: day(date),
            open: close,
            high: close,
            low: close,
            close,
            volume,
            adj_close: close,
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn an_overlay_replaces_the_same_sessions_and_keeps_the_rest() {
        let base = vec![
            bar("SPY", "2026-11-19", 600.0, 1),
            bar("AAPL", "2026-11-19", 200.0, 2),
            bar("AAPL", "2026-11-20", 201.0, 3),
        ];
        let overlay = [
            bar("AAPL", "2026-11-20", 205.0, 30),
            bar("AAPL", "2026-11-23", 206.0, 40),
        ];
        let (rows, replaced) = reference::overlay(base, &overlay);
        assert_eq!(replaced, 1);
        let got: Vec<(&str, NaiveDate, u64)> = rows
            .iter()
            .map(|b| (b.symbol.as_str(), b.date, b.volume))
            .collect();
        assert_eq!(
            got,
            [
                ("AAPL", day("2026-11-19"), 2),
                ("AAPL", day("2026-11-20"), 30),
                ("AAPL", day("2026-11-23"), 40),
                ("SPY", day("2026-11-19"), 1),
            ]
        );
    }

    #[test]
    fn imported_bars_are_merged_into_the_market_wide_partition_readers_use() {
        runtime().block_on(async {
            let store = SnapshotStore::from_url("memory://").unwrap();
            let dataset = Dataset::DailyBars.name();
            let now = Utc::now();
            let base = vec![
                bar("SPY", "2026-11-19", 600.0, 1),
                bar("SPY", "2026-11-20", 601.0, 2),
                bar("QQQ", "2026-11-20", 500.0, 3),
            ];
            let key = SnapshotKey::new(dataset, day("2026-11-20"), MARKET_WIDE);
            store
                .publish(&key, &DailyBar::to_batch(&base).unwrap(), &[], now)
                .await
                .unwrap();

            // The same session: a new version of the same partition.
            let imported = [bar("SPY", "2026-11-20", 602.5, 77_700)];
            let merge = merge_bars_into_market_wide(&store, &imported, now)
                .await
                .unwrap();
            assert_eq!(
                (merge.trade_date, merge.rows, merge.replaced),
                (day("2026-11-20"), 3, 1)
            );
            let read: Vec<DailyBar> = read_reference(&store, day("2026-11-20")).await.unwrap();
            assert_eq!(read.len(), 3);
            let spy = read
                .iter()
                .find(|b| b.symbol == "SPY" && b.date == day("2026-11-20"))
                .unwrap();
            assert_eq!((spy.close, spy.volume), (602.5, 77_700));
            assert!(read.iter().any(|b| b.symbol == "QQQ" && b.volume == 3));

            // A later session: the partition of that date, every earlier row carried over.
            let later = [bar("IWM", "2026-11-23", 230.0, 5)];
            let merge = merge_bars_into_market_wide(&store, &later, now)
                .await
                .unwrap();
            assert_eq!(
                (merge.trade_date, merge.rows, merge.replaced),
                (day("2026-11-23"), 4, 0)
            );
            let read: Vec<DailyBar> = read_reference(&store, day("2026-11-23")).await.unwrap();
            assert_eq!(read.len(), 4);
            assert!(read.iter().any(|b| b.symbol == "SPY" && b.volume == 77_700));
            // Closes of earlier sessions still read the partition of their date.
            let earlier: Vec<DailyBar> = read_reference(&store, day("2026-11-20")).await.unwrap();
            assert_eq!(earlier.len(), 3);
        });
    }

    /// Seeds two sessions after three years of history and checks the `vol_daily` history:
    /// partitions for (almost) every session of the three years, IVs at every tenor, and the
    /// IV rank and percentile of the last session ranked within the year of stored rows
    /// before it (recomputed here from the stored `iv30d_pct` values).
    #[test]
    fn seeding_stores_three_years_of_vol_history_that_iv_rank_uses() {
        runtime().block_on(async {
            let store = SnapshotStore::from_url("memory://").unwrap();
            let universe = Arc::new(Universe::scaled(5, 7));
            let sessions = last_sessions(day("2026-11-20"), 2);
            let started = std::time::Instant::now();
            let (summary, _) = seed(
                &store,
                &universe,
                7,
                0.04,
                3,
                &sessions,
                &ProgressBar::hidden(),
            )
            .await
            .unwrap();
            eprintln!(
                "seeded {} history sessions ({} rows) + {} sessions in {:.2} s (test build)",
                summary.history_vol_sessions,
                summary.history_vol_rows,
                summary.sessions,
                started.elapsed().as_secs_f64()
            );
            let dates = store
                .trade_dates(snapshot_datasets::VOL_DAILY)
                .await
                .unwrap();
            // Three years of sessions before the two seeded ones: about 3 × 252.
            let history_sessions = sessions_between(
                HistoryConfig {
                    seed: 7,
                    end: day("2026-11-20"),
                    years: 3,
                }
                .start()
                .unwrap(),
                day("2026-11-18"),
            )
            .len();
            assert!(
                (745..=760).contains(&history_sessions),
                "{history_sessions}"
            );
            assert_eq!(summary.history_vol_sessions, history_sessions);
            assert_eq!(dates.len(), history_sessions + 2);
            assert!(
                dates[0] <= day("2023-11-27"),
                "first vol_daily {}",
                dates[0]
            );

            let mut spy: BTreeMap<NaiveDate, VolDailyRow> = BTreeMap::new();
            for date in &dates {
                let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, *date, MARKET_WIDE);
                let snapshot = store.read(&key).await.unwrap().unwrap();
                for batch in &snapshot.batches {
                    for row in VolDailyRow::from_batch(batch).unwrap() {
                        if row.underlying == "SPY" {
                            spy.insert(row.trade_date, row);
                        }
                    }
                }
            }
            assert_eq!(spy.len(), dates.len(), "a SPY row every session");
            // History rows carry the surface's IV at every tenor and the realized vols.
            let old = &spy[&dates[300]];
            for iv in [
                old.iv10d_pct,
                old.iv20d_pct,
                old.iv30d_pct,
                old.iv60d_pct,
                old.iv90d_pct,
                old.iv6m_pct,
                old.iv1yr_pct,
            ] {
                assert!(iv.is_some_and(|v| v > 1.0 && v < 200.0), "{old:?}");
            }
            assert!(old.hv_252d_pct.is_some() && old.iv_percentile.is_some());
            assert!(
                old.front_expiration.is_none(),
                "no chain behind a history row"
            );

            // The last session's rank and percentile: within its 251 predecessors and itself.
            let last = &spy[&day("2026-11-20")];
            let today = last.iv30d_pct.unwrap();
            let window: Vec<f64> = spy
                .range(..day("2026-11-20"))
                .rev()
                .take(251)
                .map(|(_, row)| row.iv30d_pct.unwrap())
                .chain([today])
                .collect();
            assert_eq!(window.len(), 252);
            let below = window.iter().filter(|v| **v < today).count() as f64;
            let percentile = below / 252.0 * 100.0;
            assert!(
                (last.iv_percentile.unwrap() - percentile).abs() < 1e-9,
                "{:?} vs {percentile}",
                last.iv_percentile
            );
            let (min, max) = window
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
            let rank = ((today - min) / (max - min) * 100.0).clamp(0.0, 100.0);
            assert!((last.iv_rank.unwrap() - rank).abs() < 1e-9);

            // Seeding again keeps what is stored and writes no history partition twice.
            let (again, _) = seed(
                &store,
                &universe,
                7,
                0.04,
                3,
                &sessions,
                &ProgressBar::hidden(),
            )
            .await
            .unwrap();
            assert_eq!(again.history_vol_rows, 0);
        });
    }
}
