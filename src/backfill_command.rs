//! `optics backfill`: simulated history and end-of-day snapshots for a range of sessions,
//! written to the snapshot store (what chain-at-time and the history endpoints read).

use std::time::Instant;

use anyhow::Context;
use chrono::NaiveDate;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::seeding::{last_sessions, seed, sessions_between};
use crate::settings::{MarketArgs, RuntimeArgs, StoreArgs, parse_date};

#[derive(Debug, Args)]
pub(crate) struct BackfillArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    market: MarketArgs,
    /// Last session to build (default: the last completed session before today, UTC date).
    #[arg(long, env = "OPTICS_BACKFILL_TO", value_parser = parse_date)]
    to: Option<NaiveDate>,
    /// First session to build; without it, --sessions counts back from --to.
    #[arg(long, env = "OPTICS_BACKFILL_FROM", value_parser = parse_date)]
    from: Option<NaiveDate>,
    /// Sessions to build, ending at --to (ignored when --from is given).
    #[arg(long, env = "OPTICS_BACKFILL_SESSIONS", default_value_t = 20)]
    sessions: usize,
    /// Years of daily history (bars, earnings, dividends, borrow, calendar, and the `vol_daily`
    /// rows of its sessions) before --to.
    #[arg(long, env = "OPTICS_HISTORY_YEARS", default_value_t = 3)]
    history_years: u32,
    /// Hide the progress bar.
    #[arg(long, env = "OPTICS_QUIET", default_value_t = false)]
    quiet: bool,
}

pub(crate) fn run(args: &BackfillArgs) -> anyhow::Result<()> {
    args.market.validate()?;
    let to = match args.to {
        Some(to) => to,
        None => chrono::Utc::now().date_naive().pred_opt().context("date")?,
    };
    let sessions = match args.from {
        Some(from) => {
            anyhow::ensure!(from <= to, "--from {from} is after --to {to}");
            sessions_between(from, to)
        }
        None => {
            anyhow::ensure!(args.sessions > 0, "--sessions must be at least 1");
            last_sessions(to, args.sessions)
        }
    };
    anyhow::ensure!(
        !sessions.is_empty(),
        "no trading day between the dates given"
    );
    let store = args.store.open_store()?;
    let universe = args.market.universe();
    let progress = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(sessions.len() as u64).with_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} sessions ({eta})")
                .context("progress template")?,
        )
    };
    progress.set_message("backfill");
    let runtime = args.runtime.runtime()?;
    let started = Instant::now();
    let (summary, _) = runtime.block_on(seed(
        &store,
        &universe,
        args.market.seed,
        args.market.rate,
        args.history_years,
        &sessions,
        &progress,
    ))?;
    progress.finish_and_clear();
    println!(
        "{} sessions ({} → {}) of {} underlyings: {} contracts, {} vol_daily rows ({} of them over {} history sessions), {} snapshot files in {:.1} s",
        summary.sessions,
        sessions
            .first()
            .map(ToString::to_string)
            .unwrap_or_default(),
        sessions.last().map(ToString::to_string).unwrap_or_default(),
        universe.len(),
        summary.contracts,
        summary.vol_rows,
        summary.history_vol_rows,
        summary.history_vol_sessions,
        summary.snapshots,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
