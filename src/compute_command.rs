//! `optics compute`: a compute worker on a Kafka bus, publishing to a snapshot store. Several
//! share the underlyings as one consumer group.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use optics_compute::time::{Clock, SystemClock};
use optics_compute::worker::{ComputeWorker, WorkerConfig};
use optics_ingest::bus::kafka::KafkaBus;
use optics_schemas::Bus;

use crate::settings::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct ComputeArgs {
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
}

pub(crate) fn run(args: &ComputeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.rate.is_finite() && args.rate.abs() < 1.0,
        "--rate must be a decimal between -1 and 1"
    );
    anyhow::ensure!(args.cycle_ms > 0, "--cycle-ms must be positive");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    runtime.block_on(async {
        let bus: Arc<dyn Bus> =
            Arc::new(KafkaBus::from_url(&args.bus).with_context(|| format!("bus {}", args.bus))?);
        let store = args.store.open_store()?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let worker = ComputeWorker::new(
            bus,
            store,
            clock,
            WorkerConfig {
                group: args.group.clone(),
                worker_id: args.worker_id.clone(),
                interval: Duration::from_millis(args.cycle_ms),
                rate: args.rate,
                ..WorkerConfig::default()
            },
        );
        println!(
            "compute worker {} of group {} on {}",
            args.worker_id, args.group, args.bus
        );
        let stats = worker.run(crate::serve_command::shutdown_signal()).await?;
        println!("stopped: {stats:?}");
        Ok(())
    })
}
