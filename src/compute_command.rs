//! `optics compute`: a compute worker on a Kafka bus, publishing to a snapshot store. Several
//! share the underlyings as one consumer group.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use optics_compute::time::Clock;
use optics_pipeline::store::SnapshotStore;
use optics_pipeline::worker::{ComputeWorker, WorkerConfig, close_latest_session};
use optics_schemas::bus::topics;
use optics_schemas::{Bus, Message};

use crate::settings::{ClockArgs, HealthArgs, RuntimeArgs, StoreArgs, kafka_bus};

#[derive(Debug, Args)]
pub(crate) struct ComputeArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    /// The Kafka bus: kafka://host:9092[,host2…][?topic_prefix=…&group_prefix=…].
    #[arg(long, env = "OPTICS_BUS")]
    bus: String,
    #[command(flatten)]
    store: StoreArgs,
    /// Consumer group shared by the workers that split the underlyings.
    #[arg(long, env = "OPTICS_COMPUTE_GROUP", default_value = "optics-compute")]
    group: String,
    /// This worker's id, unique in the group.
    #[arg(long, env = "OPTICS_WORKER_ID", default_value = "0")]
    worker_id: String,
    /// Milliseconds between cycles.
    #[arg(long, env = "OPTICS_CYCLE_MS", default_value_t = 1000)]
    cycle_ms: u64,
    /// Continuously compounded risk-free rate, decimal.
    #[arg(long, env = "OPTICS_RATE", default_value_t = 0.04)]
    rate: f64,
    /// Also publish each session's market-wide `vol_daily` partition after its close (from
    /// the closing chains in the store). Turn it on for one worker of the group.
    #[arg(long, env = "OPTICS_SESSION_CLOSE", default_value_t = false)]
    session_close: bool,
    #[command(flatten)]
    health: HealthArgs,
    /// The market clock the snapshots are computed at: the ingest's (`--start`, `--speed`,
    /// `--clock-anchor`) when it replays a day.
    #[command(flatten)]
    clock: ClockArgs,
}

/// Real time between two checks for a session close to publish.
const SESSION_CLOSE_POLL: Duration = Duration::from_secs(5);

/// Publishes the `vol_daily` partition of every session close as it passes (see
/// [`close_latest_session`]) and announces it on the bus; runs until the task is dropped.
pub(crate) async fn publish_session_closes(
    store: SnapshotStore,
    bus: Arc<dyn Bus>,
    clock: Arc<dyn Clock>,
) {
    let mut poll = tokio::time::interval(SESSION_CLOSE_POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        poll.tick().await;
        match close_latest_session(&store, clock.now()).await {
            Ok(Some(closed)) => {
                println!(
                    "session close {}: vol_daily for {} underlyings ({} skipped)",
                    closed.event.trade_date,
                    closed.rows.len(),
                    closed.skipped.len()
                );
                for (underlying, reason) in &closed.skipped {
                    eprintln!("  {underlying}: {reason}");
                }
                for event in closed.term_event.into_iter().chain([closed.event]) {
                    if let Err(e) = bus
                        .publish(topics::SNAPSHOTS, Message::Snapshot(event))
                        .await
                    {
                        eprintln!("announcing the session close: {e}");
                    }
                }
            }
            Ok(None) => {}
            Err(e) => eprintln!("session close: {e}"),
        }
    }
}

pub(crate) fn run(args: &ComputeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.rate.is_finite() && args.rate.abs() < 1.0,
        "--rate must be a decimal between -1 and 1"
    );
    anyhow::ensure!(args.cycle_ms > 0, "--cycle-ms must be positive");
    let runtime = args.runtime.runtime()?;
    runtime.block_on(async {
        let bus = kafka_bus(&args.bus)?;
        let store = args.store.open_store()?;
        let clock = args.clock.market_clock(chrono::Utc::now())?;
        let closer = args.session_close.then(|| {
            tokio::spawn(publish_session_closes(
                store.clone(),
                Arc::clone(&bus),
                Arc::clone(&clock),
            ))
        });
        let worker = ComputeWorker::new(
            bus,
            store,
            Arc::clone(&clock),
            WorkerConfig {
                group: args.group.clone(),
                worker_id: args.worker_id.clone(),
                interval: Duration::from_millis(args.cycle_ms),
                rate: args.rate,
                ..WorkerConfig::default()
            },
        );
        // `/health`: the worker's writes to the store; `/metrics`: its books.
        let metrics = optics_api::metrics::Metrics::new();
        metrics.watch_health(worker.health());
        metrics.watch_memory(worker.memory());
        args.health.serve(metrics, clock).await?;
        println!(
            "compute worker {} of group {} on {}",
            args.worker_id, args.group, args.bus
        );
        let stats = worker.run(crate::serve_command::shutdown_signal()).await?;
        if let Some(closer) = closer {
            closer.abort();
        }
        println!("stopped: {stats:?}");
        Ok(())
    })
}
