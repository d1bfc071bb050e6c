//! `optics ingest`: the market simulator on the clock, published to a Kafka bus (and a quote
//! archive); and the source pump `optics run` shares.

use std::sync::Arc;

use anyhow::Context;
use chrono::{TimeDelta, Utc};
use clap::Args;
use optics_ingest::archive::QuoteArchive;
use optics_ingest::pump::{PumpConfig, PumpCounters, PumpEnd, PumpError, PumpNotice};
use optics_ingest::simulator::live::{ClockSleeper, LiveConfig, LiveSimulator};
use optics_ingest::source::QuoteSource;
use optics_schemas::Bus;
use optics_schemas::health::{HealthTracker, components, failure_category};
use optics_schemas::memory::MemoryHolder;

use crate::settings::{
    ArchiveArgs, ClockArgs, HealthArgs, MarketArgs, RuntimeArgs, StoreArgs, ensure_period_ms,
    kafka_bus,
};

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
    archive_health: Arc<HealthTracker>,
) -> Result<PumpEnd, PumpError> {
    let config = PumpConfig::new(archive_every_secs, routing);
    let result = optics_ingest::pump::pump(
        source.as_mut(),
        bus.as_ref(),
        &archive,
        &config,
        &counters,
        |notice| {
            match &notice {
                PumpNotice::Archived { at } => archive_health.succeeded(*at),
                PumpNotice::ArchiveFailed { at, error, .. } => archive_health.failed(
                    *at,
                    failure_category(*error, "writing to the quote archive"),
                ),
                PumpNotice::SourceFailed { .. } => {}
            }
            print_notice(notice);
        },
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
        PumpNotice::Archived { .. } => {}
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
    #[command(flatten)]
    clock: ClockArgs,
    /// Market time between quote snapshots, milliseconds.
    #[arg(long, env = "OPTICS_INTERVAL_MS", default_value_t = 1000)]
    interval_ms: u64,
    /// Market seconds between the simulator's quote snapshots kept in the archive (0: closes
    /// only; equal to the interval: every snapshot). Other sources archive every batch.
    #[arg(long, env = "OPTICS_ARCHIVE_EVERY_SECS", default_value_t = 300)]
    archive_every_secs: u64,
    #[command(flatten)]
    health: HealthArgs,
}

pub(crate) fn run(args: &IngestArgs) -> anyhow::Result<()> {
    args.market.validate()?;
    ensure_period_ms("--interval-ms", args.interval_ms)?;
    let runtime = args.runtime.runtime()?;
    runtime.block_on(async {
        let clock = args.clock.market_clock(Utc::now())?;
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
            Arc::new(ClockSleeper::new(Arc::clone(&clock), args.clock.speed)),
        );
        // `/health`: the archive's writes; `/metrics`: what the simulator and the pump hold.
        let metrics = optics_api::metrics::Metrics::new();
        let archive_health = Arc::new(HealthTracker::new(components::QUOTE_ARCHIVE));
        metrics.watch_health(Arc::clone(&archive_health));
        metrics.watch_memory(live.memory());
        let counters = Arc::new(PumpCounters::default());
        metrics.watch_memory(Arc::clone(&counters) as Arc<dyn MemoryHolder>);
        args.health.serve(metrics, Arc::clone(&clock)).await?;
        println!("ingesting the simulated market into {}", args.bus);
        let pumped = tokio::select! {
            ended = pump(Box::new(live), Arc::clone(&bus), archive, args.archive_every_secs, Routing::Everything, Arc::clone(&counters), archive_health) => Some(ended),
            () = crate::serve_command::shutdown_signal() => None,
        };
        bus.flush().await.context("flushing the bus")?;
        bus.close();
        // After the flush every message published is acknowledged by the brokers (or the
        // flush failed above): what an operator compares with the topics' end offsets.
        let stats = counters.stats();
        println!(
            "stopped: {} messages delivered to the bus ({} option quotes) from {} events; \
             {} quotes archived, {} archive writes failed",
            stats.published_messages,
            stats.published_quotes,
            stats.events,
            stats.archived_quotes,
            stats.archive_failures
        );
        // A pump stopped by a failing archive ends the process with an error.
        if let Some(ended) = pumped {
            ended.context("ingest stopped")?;
        }
        Ok(())
    })
}
