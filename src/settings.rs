//! Argument groups shared by the subcommands that need them (every flag also reads an
//! `OPTICS_*` environment variable), and the small conversions they imply.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use chrono::NaiveDate;
use clap::Args;
use optics_compute::store::SnapshotStore;
use optics_ingest::simulator::universe::Universe;

/// Where data lives.
#[derive(Debug, Clone, Args)]
pub(crate) struct StoreArgs {
    /// Data directory: the snapshot store (`<dir>/snapshots`, unless --store says otherwise),
    /// the quote archive (`<dir>/archive`) and the account database live here.
    #[arg(long, env = "OPTICS_DATA_DIR", default_value = "./data")]
    pub(crate) data_dir: PathBuf,
    /// The snapshot store: a directory, file:///dir, memory:// or s3://bucket/prefix
    /// (configured from AWS_* variables). Default: `<data-dir>/snapshots`.
    #[arg(long, env = "OPTICS_STORE")]
    pub(crate) store: Option<String>,
}

impl StoreArgs {
    /// Opens the snapshot store.
    pub(crate) fn open_store(&self) -> anyhow::Result<SnapshotStore> {
        match &self.store {
            Some(url) => {
                SnapshotStore::from_url(url).with_context(|| format!("cannot open store {url}"))
            }
            None => {
                let dir = self.data_dir.join("snapshots");
                SnapshotStore::local(&dir)
                    .with_context(|| format!("cannot open the store at {}", dir.display()))
            }
        }
    }
}

/// The simulated market.
#[derive(Debug, Clone, Args)]
pub(crate) struct MarketArgs {
    /// Simulator seed: the same seed and dates give byte-identical data.
    #[arg(long, env = "OPTICS_SEED", default_value_t = 7)]
    pub(crate) seed: u64,
    /// Underlyings to simulate: 0 = the built-in coverage universe (indices, ETFs and 40+
    /// stocks); N = exactly N (the real ones first, then synthetic stocks), for benchmarks.
    #[arg(long, env = "OPTICS_UNIVERSE", default_value_t = 0)]
    pub(crate) universe: usize,
    /// Continuously compounded risk-free rate, decimal.
    #[arg(long, env = "OPTICS_RATE", default_value_t = 0.04)]
    pub(crate) rate: f64,
}

impl MarketArgs {
    /// The universe the flags name.
    pub(crate) fn universe(&self) -> Arc<Universe> {
        Arc::new(if self.universe == 0 {
            Universe::real()
        } else {
            Universe::scaled(self.universe, self.seed)
        })
    }

    /// Checks the rate is usable.
    pub(crate) fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.rate.is_finite() && self.rate.abs() < 1.0,
            "--rate must be a decimal between -1 and 1 (0.04 is 4%), got {}",
            self.rate
        );
        Ok(())
    }
}

/// `YYYY-MM-DD`.
pub(crate) fn parse_date(text: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| format!("{text:?} is not a date (YYYY-MM-DD)"))
}

/// The Kafka bus at `url` (`kafka://host:9092[,host2…][?…]`), for the distributed-mode commands.
#[cfg(feature = "kafka")]
pub(crate) fn kafka_bus(url: &str) -> anyhow::Result<Arc<dyn optics_schemas::Bus>> {
    let bus =
        optics_ingest::bus::kafka::KafkaBus::from_url(url).with_context(|| format!("bus {url}"))?;
    Ok(Arc::new(bus))
}

/// Without the `kafka` feature (the embedded binary `make run` builds) there is no Kafka client:
/// say so and how to get one, instead of failing later.
#[cfg(not(feature = "kafka"))]
pub(crate) fn kafka_bus(url: &str) -> anyhow::Result<Arc<dyn optics_schemas::Bus>> {
    anyhow::bail!(
        "bus {url}: this optics binary was built without Kafka support (the embedded build of \
         `make run`); `make build-distributed` builds one with it"
    )
}
