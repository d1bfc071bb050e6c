//! `optics import <kind> <file>…`: vendor files into the quote archive (or, for bars, earnings
//! reports and the economic calendar, the snapshot store), one all-or-nothing commit per file,
//! each streamed through its reader with a progress bar on a terminal.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use chrono::{TimeDelta, Utc};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use optics_ingest::archive::{ArchiveSink, QuoteArchive};
use optics_ingest::vendor::{
    ImportError, ImportKind, ImportOptions, ImportSink, ImportSummary, MemorySink, Progress,
    import_file_with,
};
use optics_pipeline::store::SnapshotKey;
use optics_pipeline::worker::reference::{
    IMPORTED, ReferenceRow, merge_into_market_wide, merge_into_partition,
};
use optics_pipeline::worker::restate::{RestatedVolDaily, restate_vol_daily};
use optics_schemas::{DailyBar, Dataset, EarningsEvent, EconomicEvent, Record};

use crate::seeding::merge_bars_into_market_wide;
use crate::settings::{ArchiveArgs, StoreArgs};

/// An uncommitted import idle this long is a crashed one: `optics import` removes its objects
/// before importing (an import in flight writes a part at least every few seconds).
const ABANDONED_IMPORT_IDLE: TimeDelta = TimeDelta::days(1);

/// Vendor layouts that land in the quote archive.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CliImportKind {
    /// ORATS "strikes" end-of-day chains (one row per strike, call and put side by side).
    OratsStrikes,
    /// Cboe DataShop Option EOD Summary.
    CboeEod,
    /// Daily bars of one underlying (date, open, high, low, close, volume[, adj_close]); needs
    /// --symbol. They go to the snapshot store's `daily_bars` dataset, merged into the
    /// market-wide bars every reader uses.
    Bars,
    /// Earnings reports (symbol, date, timing, fiscal_quarter, eps_estimate[, eps_actual,
    /// revenue_estimate, revenue_actual]), merged into the stored `earnings` table.
    Earnings,
    /// Macro releases (date[, time], [country,] event, importance[, actual, forecast,
    /// previous]), merged into the stored `economic_calendar` table.
    EconomicCalendar,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// File layout.
    #[arg(value_enum)]
    kind: CliImportKind,
    /// One or more CSV files; each is validated completely and committed on its own.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Data directory, --store (where bars go) and --archive (where option files go).
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    archive: ArchiveArgs,
    /// The underlying of a bars file (the layout has no symbol column).
    #[arg(long, env = "OPTICS_IMPORT_SYMBOL")]
    symbol: Option<String>,
    /// Hide the progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long, env = "OPTICS_QUIET", default_value_t = false)]
    quiet: bool,
}

pub(crate) fn run(args: &ImportArgs) -> anyhow::Result<()> {
    match args.kind {
        CliImportKind::Bars => return import_bars(args),
        CliImportKind::Earnings => {
            return import_reference(args, &ImportKind::Earnings, |sink| {
                sink.earnings().cloned().collect::<Vec<EarningsEvent>>()
            });
        }
        CliImportKind::EconomicCalendar => {
            return import_reference(args, &ImportKind::EconomicCalendar, |sink| {
                sink.economic().cloned().collect::<Vec<EconomicEvent>>()
            });
        }
        CliImportKind::OratsStrikes | CliImportKind::CboeEod => {}
    }
    let archive = args.archive.open_archive(&args.store.data_dir)?;
    let archive_name = args.archive.describe(&args.store.data_dir);
    let kind = match args.kind {
        CliImportKind::OratsStrikes => ImportKind::OratsStrikes,
        CliImportKind::CboeEod => ImportKind::CboeEod,
        CliImportKind::Bars | CliImportKind::Earnings | CliImportKind::EconomicCalendar => {
            unreachable!("imported into the snapshot store above")
        }
    };
    remove_abandoned_imports(&archive)?;
    // Unique per file, process and instant: an import id names the import's objects for good.
    let started = Utc::now().format("%Y%m%dT%H%M%S%.f");
    let mut failures = 0usize;
    for (index, file) in args.files.iter().enumerate() {
        let import_id = format!("{started}-{}-{index}", std::process::id());
        let mut sink = ArchiveSink::new(archive.clone(), &import_id)
            .context("cannot prepare the import in the quote archive")?;
        match import_with_progress(file, &kind, &mut sink, args.quiet) {
            Ok(summary) => {
                let parts = sink.published().len();
                println!(
                    "{}: {} rows from {} lines committed to {} ({} part file{})",
                    summary.file,
                    summary.rows,
                    summary.lines,
                    archive_name,
                    parts,
                    if parts == 1 { "" } else { "s" }
                );
            }
            Err(error) => {
                eprintln!("error: {error} — nothing of this file was imported");
                failures += 1;
            }
        }
    }
    if failures > 0 {
        bail!("{failures} of {} file(s) failed", args.files.len());
    }
    Ok(())
}

/// Removes what crashed imports left in the archive (objects no reader follows).
fn remove_abandoned_imports(archive: &QuoteArchive) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let removed = runtime
        .block_on(archive.cleanup_uncommitted(Utc::now() - ABANDONED_IMPORT_IDLE))
        .context("cannot clean up abandoned imports in the quote archive")?;
    for import in removed {
        eprintln!(
            "removed abandoned import {} ({} objects, last written {})",
            import.import_id,
            import.objects.len(),
            import.last_modified
        );
    }
    Ok(())
}

/// Streams `file` through the reader of `kind` into `sink` with a progress bar over its
/// bytes (hidden with `quiet` or when stderr is not a terminal).
fn import_with_progress(
    file: &Path,
    kind: &ImportKind,
    sink: &mut dyn ImportSink,
    quiet: bool,
) -> Result<ImportSummary, ImportError> {
    let total = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    let bar = progress_bar(total, quiet, file);
    let mut on_progress = |p: Progress| bar.set_position(p.bytes_read);
    let options = ImportOptions {
        progress: Some(&mut on_progress),
        ..ImportOptions::default()
    };
    let result = import_file_with(file, kind, sink, options);
    match &result {
        Ok(_) => bar.finish_and_clear(),
        Err(_) => bar.abandon(),
    }
    result
}

/// A bars file streams through its reader like the option files (bounded batches, the
/// progress bar); the validated bars — one per session, a few MB for a century — are kept,
/// sorted by date, and published twice, each an atomic file, so a bad file leaves nothing
/// behind:
/// 1. as the import's own record, `daily_bars/trade_date=<last bar>/underlying=<symbol>`,
///    which seeding and backfill lay over the simulated bars when they rewrite the market-wide
///    bars;
/// 2. merged into the newest market-wide partition (`underlying=_all`), the one the API's
///    share volumes and the session close read: the symbol's sessions in the file replace the
///    stored ones, every other row is kept (see [`merge_bars_into_market_wide`]);
///
/// and then the symbol's stored `vol_daily` rows from the file's first session to the last
/// closed one are recomputed from the merged bars, their chain figures kept
/// ([`restate_vol_daily`]), so every volatility endpoint reads the imported closes.
fn import_bars(args: &ImportArgs) -> anyhow::Result<()> {
    let symbol = args
        .symbol
        .as_deref()
        .context("a bars file has no symbol column: pass --symbol")?
        .trim()
        .to_uppercase();
    let store = args.store.open_store()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let kind = ImportKind::Bars {
        symbol: symbol.clone(),
    };
    import_each_file(
        args,
        &kind,
        |sink| {
            let mut bars: Vec<DailyBar> = sink.bars().cloned().collect();
            bars.sort_by_key(|b| b.date);
            let last = bars
                .last()
                .map(|b| b.date)
                .context("the file has no bars")?;
            let batch = DailyBar::to_batch(&bars)?;
            let key = SnapshotKey::new(Dataset::DailyBars.name(), last, symbol.as_str());
            let now = Utc::now();
            runtime.block_on(store.publish(&key, &batch, &[], now))?;
            // From here the file is stored: a failed merge or restatement is repeated by
            // importing again (or, for the merge, by the next backfill, which lays the
            // import over the simulated bars).
            let merged = runtime
                .block_on(merge_bars_into_market_wide(&store, &bars, now))
                .map_err(|e| {
                    e.context(format!(
                        "the bars are stored as the import of {symbol} ({key}) but not \
                             merged into the market-wide bars the API reads; import the file \
                             again"
                    ))
                })
                .and_then(|merged| {
                    let first = bars[0].date;
                    let restated = runtime
                        .block_on(restate_vol_daily(&store, &symbol, first, now))
                        .with_context(|| {
                            format!(
                                "the bars of {symbol} are stored and merged, but its \
                                     vol_daily rows from {first} are not recomputed; import the \
                                     file again"
                            )
                        })?;
                    Ok((last, merged, restated))
                });
            Ok(merged)
        },
        |summary, (last, merged, restated)| {
            println!(
                "{}: {} bars of {symbol} through {last} committed to the snapshot store \
                     (market-wide daily bars of {}: {} rows, {} replaced)",
                summary.file, summary.rows, merged.trade_date, merged.rows, merged.replaced
            );
            println!("{}", describe_restated(&symbol, &restated));
            if let Some((underlying, date, error)) = restated.skipped.first() {
                eprintln!(
                    "vol_daily: {} rows kept as stored, e.g. {underlying} on {date}: {error}",
                    restated.skipped.len()
                );
            }
        },
    )
}

/// Earnings reports or economic releases: each file streams through its reader into memory
/// (a few thousand rows a year), is validated whole, and only then is stored, so a bad file
/// leaves nothing behind. Its rows are merged twice, each merge one atomic file that keeps
/// every other row ([`merge_into_partition`], a row with the key of a stored one replacing
/// it — a report is its symbol and date, a release its date, country and event):
/// 1. into the imports' own record, the newest `<dataset>/…/underlying=_imported` partition,
///    which seeding and backfill lay over the simulated rows when they rewrite the table;
/// 2. into the newest market-wide partition (`underlying=_all`), the one the API polls and
///    the session close reads, dated today in New York at the earliest.
fn import_reference<R: ReferenceRow>(
    args: &ImportArgs,
    kind: &ImportKind,
    rows_of: impl Fn(&MemorySink) -> Vec<R>,
) -> anyhow::Result<()> {
    let store = args.store.open_store()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let dataset = R::DATASET.name();
    import_each_file(
        args,
        kind,
        |sink| {
            let rows = rows_of(sink);
            anyhow::ensure!(!rows.is_empty(), "the file has no rows");
            let now = Utc::now();
            let today = optics_compute::time::new_york_date(now);
            let record =
                runtime.block_on(merge_into_partition(&store, &rows, today, IMPORTED, now))?;
            // From here the file is stored: a failed merge is repeated by importing again
            // (or by the next backfill, which lays the imports over the simulated rows).
            let merged = runtime
                .block_on(merge_into_market_wide(&store, &rows, today, now))
                .map_err(|e| {
                    anyhow::Error::from(e).context(format!(
                        "the rows are stored as imported {dataset} ({}) but not merged \
                             into the market-wide table the API reads; import the file \
                             again",
                        record.event.path
                    ))
                });
            Ok(merged)
        },
        |summary, merged| {
            println!(
                "{}: {} rows from {} lines committed to the snapshot store (market-wide \
                 {dataset} of {}: {} rows, {} replaced)",
                summary.file,
                summary.rows,
                summary.lines,
                merged.trade_date,
                merged.rows,
                merged.replaced
            );
        },
    )
}

/// Reads each file into memory and hands it to `store`, then says what became of it; the
/// command fails when any file did. `store` fails when nothing of the file was kept, and
/// returns `Ok(Err)` when the rows are stored but a later step failed (importing the file
/// again repeats that step).
fn import_each_file<T>(
    args: &ImportArgs,
    kind: &ImportKind,
    mut store: impl FnMut(&MemorySink) -> anyhow::Result<anyhow::Result<T>>,
    report: impl Fn(&ImportSummary, T),
) -> anyhow::Result<()> {
    let mut failures = 0usize;
    for file in &args.files {
        let mut sink = MemorySink::new();
        let outcome = import_with_progress(file, kind, &mut sink, args.quiet)
            .map_err(anyhow::Error::from)
            .and_then(|summary| Ok((summary, store(&sink)?)));
        match outcome {
            Ok((summary, Ok(stored))) => report(&summary, stored),
            Ok((_, Err(error))) => {
                eprintln!("error: {error:#}");
                failures += 1;
            }
            Err(error) => {
                eprintln!("error: {error:#} — nothing of this file was imported");
                failures += 1;
            }
        }
    }
    if failures > 0 {
        bail!("{failures} of {} file(s) failed", args.files.len());
    }
    Ok(())
}

/// One line on what [`restate_vol_daily`] did.
fn describe_restated(symbol: &str, restated: &RestatedVolDaily) -> String {
    let (Some(first), Some(last)) = (restated.sessions.first(), restated.sessions.last()) else {
        return format!(
            "vol_daily of {symbol}: no closed session to recompute (the seeding or the \
             session close computes it from these bars)"
        );
    };
    let mut line = format!(
        "vol_daily of {symbol}: {} sessions {first}..{last} recomputed from the bars \
         ({} rows updated, {} added",
        restated.sessions.len(),
        restated.updated,
        restated.added
    );
    if restated.benchmark_updated > 0 {
        line.push_str(&format!(
            ", {} other rows' beta to {symbol}",
            restated.benchmark_updated
        ));
    }
    line.push_str(&format!(
        "; {} partitions published) in {:.2} s",
        restated.published,
        restated.elapsed.as_secs_f64()
    ));
    line
}

fn progress_bar(total_bytes: u64, quiet: bool, file: &Path) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total_bytes)
    };
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(file.display().to_string());
    bar
}
