//! `optics run`: everything in one process — simulator → embedded bus → compute worker →
//! local snapshot store → API. A fresh data directory is seeded first (history and the
//! end-of-day snapshots of recent sessions); a local Pro account and its token are created
//! on first start.
//!
//! The market runs on the market clock (`--speed`, `--start`); accounts, tokens, sessions and
//! rate limits run on the real clock (see [`crate::serve_command`]).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, Utc};
use clap::Args;
use indicatif::ProgressBar;
use optics_api::accounts::admin::{AdminContext, LOCAL_TOKEN_FILE, bootstrap_local_account};
use optics_api::market::StoreMarketData;
use optics_compute::time::{Clock, NyseCalendar, SystemClock};
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_ingest::pump::PumpCounters;
use optics_ingest::simulator::live::{ClockSleeper, LiveConfig, LiveSimulator};
use optics_ingest::simulator::market::MarketTape;
use optics_ingest::simulator::universe::Universe;
use optics_pipeline::store::{MARKET_WIDE, SnapshotStore};
use optics_pipeline::worker::{ComputeWorker, PublishedSnapshots, WorkerConfig};
use optics_schemas::bus::topics;
use optics_schemas::health::{HealthTracker, components};
use optics_schemas::memory::MemoryHolder;
use optics_schemas::{Bus, Dataset};

use crate::ingest_command::{Routing, pump};
use crate::seeding::{last_sessions, seed};
use crate::serve_command::{ApiArgs, access_control, app, follow_snapshot_events, shutdown_signal};
use crate::settings::{
    ArchiveArgs, ClockArgs, MarketArgs, QuotingArgs, RuntimeArgs, StoreArgs, ensure_period_ms,
};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    archive: ArchiveArgs,
    #[command(flatten)]
    market: MarketArgs,
    #[command(flatten)]
    api: ApiArgs,
    #[command(flatten)]
    clock: ClockArgs,
    #[command(flatten)]
    quoting: QuotingArgs,
    /// Real milliseconds between compute cycles (chain, exposures, flow of the underlyings
    /// quoted since the last one), as `optics compute --cycle-ms`.
    #[arg(long, env = "OPTICS_CYCLE_MS", default_value_t = 1000)]
    cycle_ms: u64,
    /// Least market seconds between two snapshot files of one underlying in the store: the
    /// API gets every cycle's snapshots in process, the files serve the history and `optics
    /// sql` (0: every cycle; the session's closing snapshots are always written).
    #[arg(long, env = "OPTICS_STORE_EVERY_SECS", default_value_t = 10)]
    store_every_secs: u64,
    /// Past sessions whose end-of-day snapshots a fresh store is seeded with.
    #[arg(long, env = "OPTICS_SEED_SESSIONS", default_value_t = 20)]
    seed_sessions: usize,
    /// Years of daily history a fresh store is seeded with.
    #[arg(long, env = "OPTICS_HISTORY_YEARS", default_value_t = 3)]
    history_years: u32,
    /// Market seconds between the quote snapshots kept in the quote archive (the input of
    /// `optics replay`); the closing snapshot is always kept; 0 keeps only the close. Every
    /// snapshot of a one-second stream would be ~130 GB a day.
    #[arg(long, env = "OPTICS_ARCHIVE_EVERY_SECS", default_value_t = 300)]
    archive_every_secs: u64,
}

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<()> {
    args.market.validate()?;
    let live_config = args.quoting.live_config(&args.market)?;
    ensure_period_ms("--cycle-ms", args.cycle_ms)?;
    anyhow::ensure!(
        args.store_every_secs <= 86_400,
        "--store-every-secs must be between 0 and 86400"
    );
    let runtime = args.runtime.runtime()?;
    runtime.block_on(run_async(args, live_config))
}

/// How often `optics run` reads the stored reference tables again.
const REFERENCE_REFRESH: Duration = Duration::from_secs(5);

async fn run_async(args: &RunArgs, live_config: LiveConfig) -> anyhow::Result<()> {
    let clock = args.clock.market_clock(Utc::now())?;
    let store = args.store.open_store()?;
    let universe = args.market.universe();

    // 1. History for a fresh store.
    let tape = seed_if_empty(args, &store, &universe, clock.now()).await?;

    // 2. The API's view of the store, and who may call it.
    let market = Arc::new(StoreMarketData::new(store.clone()));
    market.load().await.context("loading snapshots")?;
    // Accounts and limits on the real clock: with --speed 60 a market minute lasts a second,
    // and with --start in the past the market's "now" is long gone.
    let real_clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let access = access_control(&args.api.access, &args.store.data_dir, real_clock).await?;
    // Bound before anything is announced, so the curl line names the port actually bound
    // (`--listen 127.0.0.1:0` picks a free one).
    let listener = tokio::net::TcpListener::bind(&args.api.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.api.listen))?;
    let address: SocketAddr = listener.local_addr().context("local address")?;
    announce_token(&args.store.data_dir, &address.to_string(), &access.control).await?;
    args.api.start_flight_sql(&store, &access.control).await?;

    // 3. The live pipeline on the embedded bus.
    let embedded_bus = Arc::new(EmbeddedBus::new(EmbeddedBusConfig::default()));
    let bus: Arc<dyn Bus> = Arc::clone(&embedded_bus) as Arc<dyn Bus>;
    let announcements = bus
        .subscribe(topics::SNAPSHOTS, "optics-api")
        .await
        .context("subscribing to snapshot events")?;
    let follow_health = Arc::new(HealthTracker::new(components::SNAPSHOT_REFRESH));
    market.metrics().watch_health(Arc::clone(&follow_health));
    tokio::spawn(follow_snapshot_events(
        Arc::clone(&market),
        announcements,
        Arc::clone(&clock),
        follow_health,
    ));
    // Reference tables merged into the store by another process (`optics import earnings`,
    // `economic-calendar`, `bars`) arrive on no bus: read them again every few seconds.
    let reference = Arc::clone(&market);
    let reference_health = Arc::new(HealthTracker::new(components::REFERENCE_REFRESH));
    market.metrics().watch_health(Arc::clone(&reference_health));
    let reference_clock = Arc::clone(&clock);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(REFERENCE_REFRESH);
        every.tick().await;
        loop {
            every.tick().await;
            let loaded = reference.load_reference().await;
            if let Err(e) = &loaded {
                eprintln!("reference refresh failed: {e}");
            }
            reference_health.record(reference_clock.now(), &loaded, "reading the store");
        }
    });
    // The API takes each snapshot from the worker as it is published, not from its file.
    let worker = ComputeWorker::new(
        Arc::clone(&bus),
        store.clone(),
        Arc::clone(&clock),
        WorkerConfig {
            interval: Duration::from_millis(args.cycle_ms),
            rate: args.market.rate,
            store_every: Duration::from_secs(args.store_every_secs),
            ..WorkerConfig::default()
        },
    )
    .with_local_reader(Arc::clone(&market) as Arc<dyn PublishedSnapshots>);
    // What each long-lived part holds, on /metrics (see `optics_api::metrics`).
    let metrics = market.metrics();
    metrics.watch_health(worker.health());
    metrics.watch_memory(embedded_bus);
    metrics.watch_memory(worker.memory());
    metrics.watch_memory(Arc::new(store.clone()));
    metrics.watch_memory_of(&market);
    let closer_task = tokio::spawn(crate::compute_command::publish_session_closes(
        store.clone(),
        Arc::clone(&bus),
        Arc::clone(&clock),
    ));
    let (stop_worker, worker_stopped) = tokio::sync::oneshot::channel::<()>();
    let worker_task = tokio::spawn(worker.run(async {
        let _ = worker_stopped.await;
    }));
    let mut live = LiveSimulator::new(
        Arc::clone(&universe),
        live_config,
        Arc::clone(&clock),
        Arc::new(ClockSleeper::new(Arc::clone(&clock), args.clock.speed)),
    );
    if let Some(tape) = tape {
        live = live.with_tape(tape);
    }
    metrics.watch_memory(live.memory());
    let pump_counters = Arc::new(PumpCounters::default());
    metrics.watch_memory(Arc::clone(&pump_counters) as Arc<dyn MemoryHolder>);
    let archive = args.archive.open_archive(&args.store.data_dir)?;
    let archive_health = Arc::new(HealthTracker::new(components::QUOTE_ARCHIVE));
    metrics.watch_health(Arc::clone(&archive_health));
    let source_task = tokio::spawn(pump(
        Box::new(live),
        Arc::clone(&bus),
        archive,
        args.archive_every_secs,
        // Ticks and calendars have no consumer in the embedded service yet, and a topic
        // without a consumer group would hold publishers back.
        Routing::ComputeInputs,
        pump_counters,
        archive_health,
    ));

    // 4. Serve until Ctrl-C, once the router (and its first universe table) is ready.
    let router = app(
        Arc::clone(&clock),
        market,
        access.control.clone(),
        args.api.access.public_url.clone(),
    )
    .await;
    println!("listening on http://{address}");
    // Within the server's bounds; the handlers see the peer address (the login throttle
    // counts attempts per address).
    let served = optics_api::serve::serve_with_limits(
        listener,
        router,
        args.api.serve_limits(),
        shutdown_signal(),
    )
    .await
    .context("server");
    source_task.abort();
    closer_task.abort();
    let _ = stop_worker.send(());
    bus.close();
    let _ = worker_task.await;
    // The month's metering goes back to the account store even when serving failed.
    let saved = access.shutdown().await;
    served?;
    saved
}

/// Seeds history and recent end-of-day snapshots when the store has no company map yet;
/// returns the market tape when it simulated one (the live session continues it).
async fn seed_if_empty(
    args: &RunArgs,
    store: &SnapshotStore,
    universe: &Arc<Universe>,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<Arc<MarketTape>>> {
    let seeded = store
        .latest_trade_date(Dataset::Companies.name(), MARKET_WIDE, None)
        .await?
        .is_some();
    if seeded || args.seed_sessions == 0 {
        return Ok(None);
    }
    let state = NyseCalendar.market_state(now);
    // The session in progress is the live one; seed the ones before it.
    let last = if state.is_open {
        NyseCalendar.previous_trading_day(state.trade_date)
    } else {
        state.trade_date
    };
    let sessions = last_sessions(last, args.seed_sessions);
    println!(
        "seeding {} years of history and {} sessions ({} → {}) for {} underlyings…",
        args.history_years,
        sessions.len(),
        sessions[0],
        last,
        universe.len()
    );
    let started = Instant::now();
    let progress = ProgressBar::new(sessions.len() as u64);
    let (summary, tape) = seed(
        store,
        universe,
        args.market.seed,
        args.market.rate,
        args.history_years,
        &sessions,
        &progress,
    )
    .await?;
    progress.finish_and_clear();
    println!(
        "seeded {} sessions ({} contracts, {} vol_daily rows, of which {} over {} history \
         sessions) in {:.1} s",
        summary.sessions,
        summary.contracts,
        summary.vol_rows,
        summary.history_vol_rows,
        summary.history_vol_sessions,
        started.elapsed().as_secs_f64()
    );
    Ok(Some(tape))
}

/// Creates the local account when the account store is empty (first start) and says how to
/// authenticate; returns the lines it printed. Runs on the access control's clock (the real
/// one), so the token is stamped with the instant it was made. A token file is named only
/// when it exists.
pub(crate) async fn announce_token(
    data_dir: &Path,
    listen: &str,
    access: &optics_api::auth::AccessControl,
) -> anyhow::Result<Vec<String>> {
    let token_path = data_dir.join(LOCAL_TOKEN_FILE);
    let ctx = AdminContext::new(
        Arc::clone(access.store()),
        access.hasher().clone(),
        Arc::clone(access.clock()),
    );
    let created = bootstrap_local_account(&ctx, &token_path)
        .await
        .context("creating the local account")?;
    let mut lines = Vec::new();
    if let Some(created) = &created {
        lines.push(format!(
            "created the local account {} (Pro); its API token is in {} (password in {})",
            created.email,
            created.token_path.display(),
            created.password_path.display()
        ));
    }
    if token_path.is_file() {
        if created.is_none() {
            lines.push(format!(
                "API token of the local account: {}",
                token_path.display()
            ));
        }
        lines.push(format!(
            "try: curl -H \"Authorization: Bearer $(cat {})\" http://{listen}/api/mcp/data/chain/SPY",
            token_path.display()
        ));
    } else {
        // Accounts exist but not the local token file (they were made with the admin CLI, or
        // the file was removed).
        lines.push(
            "accounts exist already and there is no local token file: create a token with \
             `optics tokens create --email <account email>`"
                .to_owned(),
        );
    }
    for line in &lines {
        println!("{line}");
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{RunArgs, run};

    #[derive(Debug, Parser)]
    struct Wrapper {
        #[command(flatten)]
        run: RunArgs,
    }

    fn parse(args: &[&str]) -> RunArgs {
        Wrapper::try_parse_from(std::iter::once("run").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .run
    }

    #[test]
    fn the_compute_cycle_is_a_setting_of_run() {
        assert_eq!(parse(&["--cycle-ms", "250"]).cycle_ms, 250);
        // Refused before anything starts (no runtime, no store, no port).
        let error = run(&parse(&["--cycle-ms", "0"])).unwrap_err();
        assert!(error.to_string().contains("--cycle-ms"), "{error}");
        let error = run(&parse(&["--interval-ms", "0"])).unwrap_err();
        assert!(error.to_string().contains("--interval-ms"), "{error}");
    }
}
