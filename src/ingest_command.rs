//! `optics ingest`: the market simulator on the clock, published to a Kafka bus (and a quote
//! archive); and the source pump `optics run` shares.

use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, TimeDelta, Utc};
use clap::Args;
use optics_compute::time::{AcceleratedClock, Clock, SystemClock};
use optics_ingest::archive::QuoteArchive;
use optics_ingest::pump::{PumpConfig, PumpCounters, PumpEnd, PumpError, PumpNotice};
use optics_ingest::simulator::live::{ClockSleeper, LiveConfig, LiveSimulator};
use optics_ingest::source::QuoteSource;
use optics_schemas::Bus;

use crate::settings::{ArchiveArgs, MarketArgs, RuntimeArgs, StoreArgs, kafka_bus};

pub(crate) use optics_ingest::pump::Routing;

/// Runs the [pump](optics_ingest::pump) of `source` until it ends or the bus closes, printing
/// every archive or source failure; `archive_every_secs` spaces the simulator's archived
/// snapshots (0: session closes only). Returns the pump's error when the archive kept failing
/// (the pump stops then: see `optics_ingest::pump`).
pub(crate) async fn pump(
    mut source: Box<dyn QuoteSource>,
    bus: Arc<dyn Bus>,
    archive: QuoteArchive,
    archive_every_secs: u64,
    routing: Routing,
    counters: Arc<PumpCounters>,
) -> Result<PumpEnd, PumpError> {
    let config = PumpConfig::new(archive_every_secs, routing);
    let result = optics_ingest::pump::pump(
        source.as_mut(),
        bus.as_ref(),
        &archive,
        &config,
        &counters,
        print_notice,
    )
    .await;
    if let Err(e) = &result {
        eprintln!("{}: {e}", source.name());
    }
    result
}

fn print_notice(notice: PumpNotice<'_>) {
    match notice {
        PumpNotice::ArchiveFailed {
            at,
            error,
            consecutive,
            stats,
        } => eprintln!(
            "quote archive: the quotes of {at} were not archived: {error} \
             ({consecutive} in a row, {} failed writes in all)",
            stats.archive_failures
        ),
        PumpNotice::SourceFailed { source, error } => eprintln!("{source}: {error}"),
    }
}

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    /// The Kafka bus: kafka://host:9092[,host2…][?topic_prefix=…].
    #[arg(long, env = "OPTICS_BUS")]
    bus: String,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    archive: ArchiveArgs,
    #[command(flatten)]
    market: MarketArgs,
    /// Market time per wall-clock second.
    #[arg(long, env = "OPTICS_SPEED", default_value_t = 1.0)]
    speed: f64,
    /// Start the market clock at this instant (RFC 3339) instead of now.
    #[arg(long, env = "OPTICS_START")]
    start: Option<DateTime<Utc>>,
    /// Market time between quote snapshots, milliseconds.
    #[arg(long, env = "OPTICS_INTERVAL_MS", default_value_t = 1000)]
    interval_ms: u64,
    /// Market seconds between the simulator's quote snapshots kept in the archive (0: closes
    /// only; equal to the interval: every snapshot). Other sources archive every batch.
    #[arg(long, env = "OPTICS_ARCHIVE_EVERY_SECS", default_value_t = 300)]
    archive_every_secs: u64,
}

/// The clock `--start` and `--speed` describe.
pub(crate) fn market_clock(
    start: Option<DateTime<Utc>>,
    speed: f64,
) -> anyhow::Result<Arc<dyn Clock>> {
    Ok(if start.is_none() && speed == 1.0 {
        Arc::new(SystemClock)
    } else {
        Arc::new(AcceleratedClock::new(start.unwrap_or_else(Utc::now), speed).context("--speed")?)
    })
}

pub(crate) fn run(args: &IngestArgs) -> anyhow::Result<()> {
    args.market.validate()?;
    anyhow::ensure!(
        (1..=3_600_000).contains(&args.interval_ms),
        "--interval-ms must be between 1 and 3600000"
    );
    let runtime = args.runtime.runtime()?;
    runtime.block_on(async {
        let clock = market_clock(args.start, args.speed)?;
        let bus = kafka_bus(&args.bus)?;
        let archive = args.archive.open_archive(&args.store.data_dir)?;
        let live = LiveSimulator::new(
            args.market.universe(),
            LiveConfig {
                interval: TimeDelta::milliseconds(i64::try_from(args.interval_ms).unwrap_or(1000)),
                rate: args.market.rate,
                ..LiveConfig::new(args.market.seed)
            },
            Arc::clone(&clock),
            Arc::new(ClockSleeper::new(Arc::clone(&clock), args.speed)),
        );
        println!("ingesting the simulated market into {}", args.bus);
        let pumped = tokio::select! {
            ended = pump(Box::new(live), Arc::clone(&bus), archive, args.archive_every_secs, Routing::Everything, Arc::default()) => Some(ended),
            () = crate::serve_command::shutdown_signal() => None,
        };
        bus.flush().await.context("flushing the bus")?;
        bus.close();
        // A pump stopped by a failing archive ends the process with an error.
        if let Some(ended) = pumped {
            ended.context("ingest stopped")?;
        }
        Ok(())
    })
}
