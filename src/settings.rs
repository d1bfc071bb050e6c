//! Argument groups shared by the subcommands that need them (every flag also reads an
//! `OPTICS_*` environment variable), and the small conversions they imply.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use chrono::{NaiveDate, TimeDelta};
use clap::Args;
use optics_ingest::archive::QuoteArchive;
use optics_ingest::simulator::live::LiveConfig;
use optics_ingest::simulator::session::MAX_TAIL_EVERY;
use optics_ingest::simulator::universe::Universe;
use optics_pipeline::store::SnapshotStore;

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

/// Where the quote archive lives (`run`, `ingest`, `import`, `replay`).
#[derive(Debug, Clone, Args)]
pub(crate) struct ArchiveArgs {
    /// The quote archive: a directory, file:///dir, memory:// or s3://bucket/prefix (as
    /// --store; s3 is configured from AWS_* variables). Default: `<data-dir>/archive`.
    #[arg(long, env = "OPTICS_ARCHIVE")]
    pub(crate) archive: Option<String>,
}

impl ArchiveArgs {
    /// Opens the quote archive: `--archive`, else `<data_dir>/archive`.
    pub(crate) fn open_archive(&self, data_dir: &Path) -> anyhow::Result<QuoteArchive> {
        match &self.archive {
            Some(url) => QuoteArchive::from_url(url)
                .with_context(|| format!("cannot open the quote archive {url}")),
            None => {
                let dir = data_dir.join("archive");
                QuoteArchive::local(&dir)
                    .with_context(|| format!("cannot open the quote archive at {}", dir.display()))
            }
        }
    }

    /// Where the archive is, for messages.
    pub(crate) fn describe(&self, data_dir: &Path) -> String {
        self.archive
            .clone()
            .unwrap_or_else(|| data_dir.join("archive").display().to_string())
    }
}

/// The default of `--blocking-threads`: enough for the publications of a compute cycle and the
/// API's reads of a local store to overlap on a small machine, and few enough that the
/// allocator's per-thread caches stay small (see [`RuntimeArgs`]).
pub(crate) const DEFAULT_BLOCKING_THREADS: usize = 8;

/// The most `--blocking-threads` accepts (tokio's own default).
pub(crate) const MAX_BLOCKING_THREADS: usize = 512;

/// The async runtime of a long-running command (`run`, `serve`, `compute`, `ingest`, `replay`,
/// `backfill`).
#[derive(Debug, Clone, Args)]
pub(crate) struct RuntimeArgs {
    /// Threads for blocking work (local file reads and writes, password hashing). Every thread
    /// keeps its own allocator cache: tokio's default of up to 512 let a live `optics run` grow
    /// to ~120 such threads and ~8 GB of resident memory (docs/performance.md).
    #[arg(
        long = "blocking-threads",
        env = "OPTICS_BLOCKING_THREADS",
        default_value_t = DEFAULT_BLOCKING_THREADS,
        value_parser = parse_blocking_threads
    )]
    pub(crate) blocking_threads: usize,
}

impl RuntimeArgs {
    /// A multi-threaded tokio runtime (one worker per core) with at most
    /// `--blocking-threads` blocking threads.
    pub(crate) fn runtime(&self) -> anyhow::Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_multi_thread()
            .max_blocking_threads(self.blocking_threads)
            .enable_all()
            .build()
            .context("tokio runtime")
    }
}

/// A `--blocking-threads` count: 1 up to [`MAX_BLOCKING_THREADS`].
fn parse_blocking_threads(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_BLOCKING_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?}: give a whole number of threads from 1 to {MAX_BLOCKING_THREADS}"
        )),
    }
}

/// The largest `--universe`: the scale knob is for benchmarks of thousands of underlyings;
/// far beyond this a seeded store and a worker cycle no longer fit a machine's memory.
pub(crate) const MAX_UNIVERSE: usize = 20_000;

/// The simulated market.
#[derive(Debug, Clone, Args)]
pub(crate) struct MarketArgs {
    /// Simulator seed: the same seed and dates give byte-identical data.
    #[arg(long, env = "OPTICS_SEED", default_value_t = 7)]
    pub(crate) seed: u64,
    /// Underlyings to simulate: 0 = the built-in coverage universe (indices, ETFs and 40+
    /// stocks); N = exactly N (the real ones first, then synthetic stocks), for benchmarks;
    /// at most 20000.
    #[arg(long, env = "OPTICS_UNIVERSE", default_value_t = 0, value_parser = parse_universe)]
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

/// A `--universe` size: 0 (the coverage universe) up to [`MAX_UNIVERSE`].
pub(crate) fn parse_universe(text: &str) -> Result<usize, String> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number of underlyings"))?;
    if n > MAX_UNIVERSE {
        return Err(format!(
            "{n} underlyings is more than the simulator's limit of {MAX_UNIVERSE} \
             (0 = the built-in coverage universe)"
        ));
    }
    Ok(n)
}

/// A period flag in milliseconds: at least 1 ms, at most an hour.
pub(crate) fn ensure_period_ms(flag: &str, millis: u64) -> anyhow::Result<()> {
    anyhow::ensure!(
        (1..=3_600_000).contains(&millis),
        "{flag} must be between 1 and 3600000"
    );
    Ok(())
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
    Err(without_kafka(url))
}

#[cfg(not(feature = "kafka"))]
fn without_kafka(url: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "bus {url}: this optics binary was built without Kafka support (the embedded build of \
         `make run`); `make build-distributed` builds one with it"
    )
}

/// A follower of the snapshot events on the Kafka bus at `url` (see
/// `KafkaBus::follow`): every event published from now on, for an API replica.
#[cfg(feature = "kafka")]
pub(crate) async fn snapshot_event_follower(
    url: &str,
) -> anyhow::Result<Box<dyn optics_schemas::Subscription>> {
    let bus =
        optics_ingest::bus::kafka::KafkaBus::from_url(url).with_context(|| format!("bus {url}"))?;
    let follower = bus
        .follow(optics_schemas::bus::topics::SNAPSHOTS, "optics-api")
        .await
        .with_context(|| format!("following the snapshot events on {url}"))?;
    Ok(Box::new(follower))
}

/// Without the `kafka` feature: the same refusal as [`kafka_bus`].
#[cfg(not(feature = "kafka"))]
pub(crate) async fn snapshot_event_follower(
    url: &str,
) -> anyhow::Result<Box<dyn optics_schemas::Subscription>> {
    Err(without_kafka(url))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        archive: ArchiveArgs,
        #[command(flatten)]
        market: MarketArgs,
        #[command(flatten)]
        runtime: RuntimeArgs,
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("optics-settings-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_archive_defaults_to_the_data_directory() {
        let data = temp_dir("default");
        let cli = Cli::try_parse_from(["optics", "--data-dir", data.to_str().unwrap()]).unwrap();
        assert_eq!(cli.archive.archive, None);
        cli.archive.open_archive(&cli.store.data_dir).unwrap();
        assert!(data.join("archive").is_dir());
        assert_eq!(
            cli.archive.describe(&cli.store.data_dir),
            data.join("archive").display().to_string()
        );
        let _ = std::fs::remove_dir_all(&data);
    }

    #[test]
    fn the_archive_takes_the_locations_the_store_takes() {
        // A plain directory and a file URL: local, created.
        let plain = temp_dir("plain");
        let file_url = temp_dir("file-url");
        for (location, dir) in [
            (plain.display().to_string(), &plain),
            (format!("file://{}", file_url.display()), &file_url),
        ] {
            let cli = Cli::try_parse_from(["optics", "--archive", &location]).unwrap();
            let archive = cli.archive.open_archive(Path::new("unused")).unwrap();
            assert!(dir.is_dir(), "{location}");
            assert_eq!(archive.prefix().as_ref(), "");
            let _ = std::fs::remove_dir_all(dir);
        }
        assert!(!Path::new("unused").exists());
        // In memory, and S3 with its prefix (no request is made until the archive is used).
        let memory = Cli::try_parse_from(["optics", "--archive", "memory://"]).unwrap();
        memory.archive.open_archive(Path::new("unused")).unwrap();
        let s3 =
            Cli::try_parse_from(["optics", "--archive", "s3://bucket/optics/archive"]).unwrap();
        let archive = s3.archive.open_archive(Path::new("unused")).unwrap();
        assert_eq!(archive.prefix().as_ref(), "optics/archive");
        // What is not a location: refused with the reason.
        for (bad, reason) in [
            ("ftp://host/dir", "unsupported scheme"),
            ("file://relative/dir", "absolute path"),
            ("s3://", "no bucket"),
            ("  ", "empty"),
        ] {
            let cli = Cli::try_parse_from(["optics", "--archive", bad]).unwrap();
            let error = cli.archive.open_archive(Path::new("unused")).unwrap_err();
            let text = format!("{error:#}");
            assert!(text.contains("cannot open the quote archive"), "{text}");
            assert!(text.contains(reason), "{bad}: {text}");
        }
    }

    #[test]
    fn the_universe_is_bounded() {
        let at_limit = MAX_UNIVERSE.to_string();
        let cli = Cli::try_parse_from(["optics", "--universe", &at_limit]).unwrap();
        assert_eq!(cli.market.universe, 20_000);
        assert_eq!(
            Cli::try_parse_from(["optics", "--universe", "0"])
                .unwrap()
                .market
                .universe,
            0
        );
        let error = Cli::try_parse_from(["optics", "--universe", "20001"]).unwrap_err();
        assert!(error.to_string().contains("limit of 20000"), "{error}");
        let error = Cli::try_parse_from(["optics", "--universe", "lots"]).unwrap_err();
        assert!(error.to_string().contains("not a whole number"), "{error}");
    }

    #[test]
    fn blocking_threads_are_bounded() {
        let cli = Cli::try_parse_from(["optics"]).unwrap();
        assert_eq!(cli.runtime.blocking_threads, DEFAULT_BLOCKING_THREADS);
        let cli = Cli::try_parse_from(["optics", "--blocking-threads", "3"]).unwrap();
        assert_eq!(cli.runtime.blocking_threads, 3);
        for bad in ["0", "513", "many"] {
            let error = Cli::try_parse_from(["optics", "--blocking-threads", bad]).unwrap_err();
            assert!(
                error.to_string().contains("from 1 to 512"),
                "{bad}: {error}"
            );
        }
        // The runtime it builds runs blocking work on no more threads than that.
        let runtime = Cli::try_parse_from(["optics", "--blocking-threads", "2"])
            .unwrap()
            .runtime
            .runtime()
            .unwrap();
        let peak = runtime.block_on(async {
            let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let tasks: Vec<_> = (0..8)
                .map(|_| {
                    let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
                    tokio::task::spawn_blocking(move || {
                        use std::sync::atomic::Ordering::SeqCst;
                        let now = running.fetch_add(1, SeqCst) + 1;
                        peak.fetch_max(now, SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        running.fetch_sub(1, SeqCst);
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            peak.load(std::sync::atomic::Ordering::SeqCst)
        });
        assert!((1..=2).contains(&peak), "{peak} blocking tasks at once");
    }
}

/// Where a process without an API (`optics ingest`, `optics compute`) answers `/health` and
/// `/metrics`, for a container's health check and a Prometheus scrape.
#[derive(Debug, Clone, Args)]
pub(crate) struct HealthArgs {
    /// Address to answer `/health` and `/metrics` on (e.g. `0.0.0.0:9100`); none by default.
    #[arg(long, env = "OPTICS_HEALTH_LISTEN")]
    health_listen: Option<String>,
}

impl HealthArgs {
    /// Starts answering `/health` and `/metrics` from `metrics` when `--health-listen` is set;
    /// the task runs as long as the runtime.
    pub(crate) async fn serve(
        &self,
        metrics: optics_api::metrics::Metrics,
        clock: std::sync::Arc<dyn optics_compute::time::Clock>,
    ) -> anyhow::Result<()> {
        let Some(listen) = &self.health_listen else {
            return Ok(());
        };
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("--health-listen: cannot listen on {listen}"))?;
        println!(
            "health and metrics on http://{}",
            listener.local_addr().context("local address")?
        );
        let router = optics_api::observability_router(metrics, clock);
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, router).await {
                eprintln!("health listener stopped: {e}");
            }
        });
        Ok(())
    }
}

/// The market clock of the processes that simulate, compute or label market time (`run`,
/// `ingest`, `compute`, `serve`). By default the real clock. Processes of one deployment given
/// the same `--start`, `--speed` and `--clock-anchor` read the same market instant at the same
/// real instant, so a replayed day is one day for the simulator, the workers and the replicas.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClockArgs {
    /// Market time per wall-clock second (60 plays an hour of the session per minute).
    #[arg(long, env = "OPTICS_SPEED", default_value_t = 1.0)]
    pub(crate) speed: f64,
    /// Start the market clock at this instant instead of now (RFC 3339, e.g.
    /// 2026-11-20T14:30:00Z): replays that day live.
    #[arg(long, env = "OPTICS_START")]
    pub(crate) start: Option<chrono::DateTime<chrono::Utc>>,
    /// The real instant (RFC 3339) at which the market clock reads --start; default: when the
    /// process starts. Give every process of a deployment the same one.
    #[arg(long, env = "OPTICS_CLOCK_ANCHOR", requires = "start")]
    pub(crate) clock_anchor: Option<chrono::DateTime<chrono::Utc>>,
}

impl ClockArgs {
    /// The clock these settings describe, the real instant being `now`.
    pub(crate) fn market_clock(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> anyhow::Result<Arc<dyn optics_compute::time::Clock>> {
        use optics_compute::time::{AcceleratedClock, SystemClock};
        let Some(start) = self.start else {
            return Ok(if self.speed == 1.0 {
                Arc::new(SystemClock)
            } else {
                Arc::new(AcceleratedClock::new(now, self.speed).context("--speed")?)
            });
        };
        Ok(Arc::new(
            AcceleratedClock::new(self.market_instant(start, now), self.speed)
                .context("--speed")?,
        ))
    }

    /// The market instant at real instant `now`: `start`, plus `speed` times the real time
    /// since the anchor (none: `now` is the anchor).
    fn market_instant(
        &self,
        start: chrono::DateTime<chrono::Utc>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> chrono::DateTime<chrono::Utc> {
        let Some(anchor) = self.clock_anchor else {
            return start;
        };
        let real = (now - anchor).num_microseconds().unwrap_or(i64::MAX) as f64;
        let market = (real * self.speed).clamp(-9.0e15, 9.0e15) as i64;
        start + chrono::TimeDelta::microseconds(market)
    }
}

#[cfg(test)]
mod clock_tests {
    use chrono::{TimeZone, Utc};

    use super::ClockArgs;

    #[test]
    fn processes_with_one_anchor_read_one_market_instant() {
        let start = Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        let anchor = Utc.with_ymd_and_hms(2026, 11, 29, 4, 0, 0).unwrap();
        let args = ClockArgs {
            speed: 60.0,
            start: Some(start),
            clock_anchor: Some(anchor),
        };
        // Started 10 real seconds after the anchor: 10 market minutes into the replay.
        let later = anchor + chrono::TimeDelta::seconds(10);
        assert_eq!(
            args.market_instant(start, later),
            start + chrono::TimeDelta::minutes(10)
        );
        // Without an anchor the process's own start is the anchor.
        let unanchored = ClockArgs {
            clock_anchor: None,
            ..args
        };
        assert_eq!(unanchored.market_instant(start, later), start);
    }
}

/// How the simulator quotes (`optics ingest`, `optics run`).
#[derive(Debug, Args)]
pub(crate) struct QuotingArgs {
    /// Market time between the simulator's quote snapshots, milliseconds.
    #[arg(long, env = "OPTICS_INTERVAL_MS", default_value_t = 1000)]
    pub(crate) interval_ms: u64,
    /// The update mix: the liquid fifth of the universe (by listed contracts) is quoted at
    /// every snapshot, the other underlyings at one snapshot in N, staggered (1: every
    /// underlying at every snapshot).
    #[arg(long, env = "OPTICS_TAIL_EVERY", default_value_t = 1)]
    pub(crate) tail_every: u32,
}

impl QuotingArgs {
    /// The live simulator's settings for `market`, once the flags are checked.
    pub(crate) fn live_config(&self, market: &MarketArgs) -> anyhow::Result<LiveConfig> {
        ensure_period_ms("--interval-ms", self.interval_ms)?;
        anyhow::ensure!(
            (1..=MAX_TAIL_EVERY).contains(&self.tail_every),
            "--tail-every must be between 1 and {MAX_TAIL_EVERY}"
        );
        Ok(LiveConfig {
            interval: TimeDelta::milliseconds(i64::try_from(self.interval_ms).unwrap_or(1000)),
            rate: market.rate,
            tail_every: self.tail_every,
            ..LiveConfig::new(market.seed)
        })
    }
}
