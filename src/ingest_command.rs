//! `optics ingest`: the market simulator on the clock, published to a Kafka bus (and a quote
//! archive); and the source pump `optics run` shares.

use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, TimeDelta, Utc};
use clap::Args;
use optics_compute::time::{AcceleratedClock, Clock, SystemClock};
use optics_ingest::archive::QuoteArchive;
use optics_ingest::bus::kafka::KafkaBus;
use optics_ingest::simulator::live::{ClockSleeper, LiveConfig, LiveSimulator};
use optics_ingest::source::{QuoteSource, SourceEvent};
use optics_schemas::{Bus, Dataset, Message, MessageKind};

use crate::settings::{MarketArgs, StoreArgs};

/// Which messages of a source go on the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Routing {
    /// Everything (a Kafka deployment: topics exist for every dataset).
    Everything,
    /// Option quotes and the reference data pricing needs (company map, dividends).
    QuotesAndPricingReference,
}

impl Routing {
    fn keeps(self, message: &Message) -> bool {
        match self {
            Self::Everything => true,
            Self::QuotesAndPricingReference => matches!(
                message.kind(),
                MessageKind::Data(Dataset::OptionQuotes | Dataset::Companies | Dataset::Dividends)
            ),
        }
    }
}

/// Pulls `source` until it ends or the bus closes: publishes its messages per `routing`, and
/// archives the option quotes of one event every `archive_every_secs` of market time and of
/// every session's closing event (0: closing events only).
pub(crate) async fn pump(
    mut source: Box<dyn QuoteSource>,
    bus: Arc<dyn Bus>,
    archive: QuoteArchive,
    archive_every_secs: u64,
    routing: Routing,
) {
    let archive_every = i64::try_from(archive_every_secs).unwrap_or(i64::MAX);
    let mut last_archived: Option<DateTime<Utc>> = None;
    loop {
        match source.next_event().await {
            Ok(Some(event)) => {
                let due = event.session_close
                    || (archive_every > 0
                        && last_archived
                            .is_none_or(|t| (event.at - t).num_seconds() >= archive_every));
                if due {
                    last_archived = Some(event.at);
                    if let Err(e) = archive_quotes(&archive, &event).await {
                        eprintln!("quote archive: {e:#}");
                    }
                }
                for message in event.messages {
                    if routing.keeps(&message)
                        && bus.publish(message.topic(), message).await.is_err()
                    {
                        return;
                    }
                }
            }
            Ok(None) => return,
            Err(e) => eprintln!("{}: {e}", source.name()),
        }
    }
}

/// Appends the option quotes of `event` to the archive.
async fn archive_quotes(archive: &QuoteArchive, event: &SourceEvent) -> anyhow::Result<()> {
    let mut rows = Vec::with_capacity(event.quote_count());
    for message in event.messages_of(Dataset::OptionQuotes) {
        if let Message::Data(batch) = message {
            rows.extend(batch.rows::<optics_schemas::OptionQuote>()?);
        }
    }
    archive.append(&rows).await?;
    Ok(())
}

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// The Kafka bus: kafka://host:9092[,host2…][?topic_prefix=…].
    #[arg(long, env = "OPTICS_BUS")]
    bus: String,
    #[command(flatten)]
    store: StoreArgs,
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
    /// Market seconds between the quote snapshots kept in the archive (0: closes only).
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    runtime.block_on(async {
        let clock = market_clock(args.start, args.speed)?;
        let bus: Arc<dyn Bus> = Arc::new(
            KafkaBus::from_url(&args.bus).with_context(|| format!("bus {}", args.bus))?,
        );
        let archive_dir = args.store.data_dir.join("archive");
        let archive = QuoteArchive::local(&archive_dir).with_context(|| {
            format!("cannot open the quote archive at {}", archive_dir.display())
        })?;
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
        tokio::select! {
            () = pump(Box::new(live), Arc::clone(&bus), archive, args.archive_every_secs, Routing::Everything) => {}
            () = crate::serve_command::shutdown_signal() => {}
        }
        bus.flush().await.context("flushing the bus")?;
        bus.close();
        Ok(())
    })
}
