//! `optics replay --date D…`: recorded sessions from the quote archive through the compute code,
//! rewriting their end-of-day snapshots, as fast as the CPUs allow.

use std::time::Instant;

use anyhow::Context;
use chrono::NaiveDate;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use optics_ingest::replay::replay_session;
use optics_pipeline::worker::WorkerConfig;

use crate::settings::{ArchiveArgs, RuntimeArgs, StoreArgs, parse_date};

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    archive: ArchiveArgs,
    /// Sessions to replay (repeat the flag for several).
    #[arg(long = "date", env = "OPTICS_REPLAY_DATES", value_delimiter = ',', required = true, value_parser = parse_date)]
    dates: Vec<NaiveDate>,
    /// Continuously compounded risk-free rate, decimal.
    #[arg(long, env = "OPTICS_RATE", default_value_t = 0.04)]
    rate: f64,
    /// Hide the progress bar.
    #[arg(long, env = "OPTICS_QUIET", default_value_t = false)]
    quiet: bool,
}

pub(crate) fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.rate.is_finite() && args.rate.abs() < 1.0,
        "--rate must be a decimal between -1 and 1"
    );
    let archive = args.archive.open_archive(&args.store.data_dir)?;
    let store = args.store.open_store()?;
    let runtime = args.runtime.runtime()?;
    for &date in &args.dates {
        let progress = if args.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} replay {msg} ({elapsed})")
                    .context("progress template")?,
            )
        };
        let started = Instant::now();
        let config = WorkerConfig {
            rate: args.rate,
            ..WorkerConfig::default()
        };
        let summary = runtime
            .block_on(replay_session(
                &archive,
                &store,
                date,
                config,
                |underlying| {
                    progress.set_message(format!("{date} {underlying}"));
                    progress.tick();
                },
            ))
            .with_context(|| format!("replaying {date}"))?;
        progress.finish_and_clear();
        println!(
            "{date}: {} underlyings, {} archived quotes, {} snapshot files in {:.2} s",
            summary.underlyings,
            summary.quotes,
            summary.events.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
