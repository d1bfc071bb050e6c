//! `optics import <kind> <file>…`: vendor files into the quote archive, one all-or-nothing
//! commit per file, with a progress bar on a terminal.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use optics_ingest::archive::{ArchiveSink, QuoteArchive};
use optics_ingest::vendor::{ImportKind, ImportOptions, Progress, import_file_with};

/// Vendor layouts that land in the quote archive.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CliImportKind {
    /// ORATS "strikes" end-of-day chains (one row per strike, call and put side by side).
    OratsStrikes,
    /// Cboe DataShop Option EOD Summary.
    CboeEod,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// File layout.
    #[arg(value_enum)]
    kind: CliImportKind,
    /// One or more CSV files; each is validated completely and committed on its own.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Data directory; the quote archive lives under `<data-dir>/archive`.
    #[arg(long, env = "OPTICS_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// Hide the progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long, env = "OPTICS_QUIET", default_value_t = false)]
    quiet: bool,
}

pub(crate) fn run(args: &ImportArgs) -> anyhow::Result<()> {
    let archive_dir = args.data_dir.join("archive");
    let archive = QuoteArchive::local(&archive_dir)
        .with_context(|| format!("cannot open the quote archive at {}", archive_dir.display()))?;
    let kind = match args.kind {
        CliImportKind::OratsStrikes => ImportKind::OratsStrikes,
        CliImportKind::CboeEod => ImportKind::CboeEod,
    };
    let mut failures = 0usize;
    for (index, file) in args.files.iter().enumerate() {
        // Unique per file and process: concurrent imports never share a staging directory.
        let staging_id = format!("import-{}-{index}", std::process::id());
        let mut sink = ArchiveSink::new(archive.clone(), &staging_id)
            .context("cannot prepare the import staging area")?;
        let total = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        let bar = progress_bar(total, args.quiet, file);
        let mut on_progress = |p: Progress| bar.set_position(p.bytes_read);
        let options = ImportOptions {
            progress: Some(&mut on_progress),
            ..ImportOptions::default()
        };
        match import_file_with(file, &kind, &mut sink, options) {
            Ok(summary) => {
                bar.finish_and_clear();
                let parts = sink.published().len();
                println!(
                    "{}: {} rows from {} lines committed to {} ({} part file{})",
                    summary.file,
                    summary.rows,
                    summary.lines,
                    archive_dir.display(),
                    parts,
                    if parts == 1 { "" } else { "s" }
                );
            }
            Err(error) => {
                bar.abandon();
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

fn progress_bar(total_bytes: u64, quiet: bool, file: &std::path::Path) -> ProgressBar {
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
