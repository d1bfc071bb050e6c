//! `optics serve`: the API over a snapshot store (an API replica), and the API wiring that
//! `optics run` shares: account store, limiter, access control, market data, router.
//!
//! Two clocks meet here. The market data (freshness, the simulated session) follows the
//! market clock, which `optics run --speed/--start` may accelerate or set in the past; accounts,
//! tokens, sessions and rate limits always follow the real one, so a minute of the limit is a
//! minute of the caller's time and a token is stamped when it was really made.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::accounts_command::{AccountDbArgs, LimiterArgs};
use anyhow::Context;
use clap::Args;
use optics_api::AppState;
use optics_api::accounts::{AccountStore, open_store};
use optics_api::auth::{AccessConfig, AccessControl, PasswordCost, PasswordHasher, SessionPolicy};
use optics_api::limits::{
    InMemoryLimiter, Limiter, PlanBudgets, RateLimits, RedisLimiter, redacted_url,
};
use optics_api::market::{LoadError, StoreMarketData};
use optics_api::serve::{ServeLimits, serve_with_limits};
use optics_compute::time::{Clock, SystemClock};
use optics_pipeline::store::SnapshotStore;
use optics_schemas::health::{HealthTracker, components};
use optics_schemas::{BusError, Message, SnapshotEvent, Subscription};
use tokio::task::JoinError;

use crate::settings::{ClockArgs, RuntimeArgs, StoreArgs};

/// How often the in-memory limiter's month is written to the account store (and once more at
/// shutdown): a crash loses at most this much of the month's metering.
pub(crate) const USAGE_WRITE_EVERY: Duration = Duration::from_secs(5);

/// Pause after a failed read of the snapshot events before the next.
const EVENT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Announced snapshots a follower reads at once (see [`follow_snapshot_events`]).
const CONCURRENT_EVENT_READS: usize = 16;

/// Where the API listens, its connection bounds, and who may call it.
#[derive(Debug, Clone, Args)]
pub(crate) struct ApiArgs {
    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, env = "OPTICS_LISTEN", default_value = "127.0.0.1:8080")]
    pub(crate) listen: String,
    #[command(flatten)]
    pub(crate) access: AccessArgs,
    /// Open connections at most; one past the cap is closed at once.
    #[arg(
        long = "max-connections",
        env = "OPTICS_MAX_CONNECTIONS",
        default_value_t = 4096,
        value_parser = clap::value_parser!(u32).range(1..=1_000_000)
    )]
    pub(crate) max_connections: u32,
    /// Seconds a client may take to send a request's headers (idle keep-alive included).
    #[arg(
        long = "header-timeout-secs",
        env = "OPTICS_HEADER_TIMEOUT_SECS",
        default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub(crate) header_timeout_secs: u64,
    /// Seconds an answer may take before it is a 503 with Retry-After.
    #[arg(
        long = "request-timeout-secs",
        env = "OPTICS_REQUEST_TIMEOUT_SECS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub(crate) request_timeout_secs: u64,
    /// Reverse proxies whose X-Forwarded-For names the client, comma-separated addresses or
    /// blocks (`172.28.0.10,10.0.0.0/8`); from any other peer the header is ignored.
    #[arg(
        long = "trusted-proxies",
        env = "OPTICS_TRUSTED_PROXIES",
        value_delimiter = ',',
        num_args = 1..
    )]
    pub(crate) trusted_proxies: Vec<optics_api::serve::IpNetwork>,
    /// Also serve the store's tables over Arrow Flight SQL on this address (ADBC, JDBC,
    /// DBeaver; port 0 picks a free port, printed). Calls carry an API token. Off unless set.
    #[arg(long = "flight-sql", env = "OPTICS_FLIGHT_SQL")]
    pub(crate) flight_sql: Option<String>,
}

impl ApiArgs {
    /// Starts the Flight SQL server when `--flight-sql` asks for it; it stops on Ctrl-C or
    /// SIGTERM, as the HTTP API does.
    pub(crate) async fn start_flight_sql(
        &self,
        store: &SnapshotStore,
        access: &AccessControl,
    ) -> anyhow::Result<()> {
        let Some(listen) = &self.flight_sql else {
            return Ok(());
        };
        let service = optics_flight::StoreFlightSql::new(
            store.clone(),
            access.clone(),
            optics_flight::FlightSqlSettings::default(),
        )
        .context("the Flight SQL query runtime")?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen} for Flight SQL"))?;
        let address = listener.local_addr().context("local address")?;
        println!("flight sql on grpc://{address}");
        tokio::spawn(async move {
            if let Err(e) =
                optics_flight::serve_flight_sql(listener, service, shutdown_signal()).await
            {
                eprintln!("the Flight SQL server stopped: {e}");
            }
        });
        Ok(())
    }
}

/// Who may call the data (accounts, limits, budgets) and where clients reach the service:
/// shared by the HTTP API and the stdio tool server.
#[derive(Debug, Clone, Args)]
pub(crate) struct AccessArgs {
    #[command(flatten)]
    pub(crate) accounts: AccountDbArgs,
    #[command(flatten)]
    pub(crate) limiter: LimiterArgs,
    /// Monthly budget of each plan in upstream data units, e.g.
    /// `basic=10000,premium=20000,pro=50000,trial=2000`; plans left out keep 10000. An
    /// account's own budget (`optics accounts set-budget`) overrides its plan's.
    #[arg(long = "plan-budgets", env = "OPTICS_PLAN_BUDGETS")]
    pub(crate) plan_budgets: Option<PlanBudgets>,
    /// Requests per calendar minute per token (the interface's limit is 60).
    #[arg(
        long = "rate-per-minute",
        env = "OPTICS_RATE_PER_MINUTE",
        default_value_t = RateLimits::default().per_minute,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(crate) rate_per_minute: u32,
    /// Requests per calendar hour per token (the interface's limit is 1,000).
    #[arg(
        long = "rate-per-hour",
        env = "OPTICS_RATE_PER_HOUR",
        default_value_t = RateLimits::default().per_hour,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(crate) rate_per_hour: u32,
    /// The address clients reach the service at (`https://options.example.com`), when a proxy
    /// in front of it terminates TLS; an `https` URL turns the session cookie's `Secure` on.
    #[arg(long = "public-url", env = "OPTICS_PUBLIC_URL")]
    pub(crate) public_url: Option<String>,
    /// `Secure` on the account area's session cookie (sent over HTTPS only): `true` or
    /// `false`; default: on when `--public-url` is https.
    #[arg(long = "secure-cookie", env = "OPTICS_SECURE_COOKIE")]
    pub(crate) secure_cookie: Option<bool>,
}

impl ApiArgs {
    /// The HTTP server's bounds.
    pub(crate) fn serve_limits(&self) -> ServeLimits {
        ServeLimits {
            max_connections: self.max_connections as usize,
            header_read_timeout: Duration::from_secs(self.header_timeout_secs),
            request_timeout: Duration::from_secs(self.request_timeout_secs),
            trusted_proxies: self.trusted_proxies.clone(),
        }
    }
}

impl AccessArgs {
    /// The per-token request limits.
    fn rate_limits(&self) -> RateLimits {
        RateLimits {
            per_minute: self.rate_per_minute,
            per_hour: self.rate_per_hour,
        }
    }

    /// The rules the access control applies.
    pub(crate) fn access_config(&self) -> AccessConfig {
        let https = self
            .public_url
            .as_deref()
            .is_some_and(|url| url.trim().to_ascii_lowercase().starts_with("https://"));
        let defaults = AccessConfig::default();
        AccessConfig {
            budgets: self.plan_budgets.unwrap_or_default(),
            sessions: SessionPolicy {
                secure_cookie: self.secure_cookie.unwrap_or(https),
                ..defaults.sessions
            },
            ..defaults
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    api: ApiArgs,
    /// The Kafka bus whose snapshot events this replica follows
    /// (kafka://host:9092[,host2…][?topic_prefix=…&group_prefix=…]): each snapshot is read as
    /// soon as a worker announces it. Without it the replica finds new snapshots by polling.
    #[arg(long, env = "OPTICS_BUS")]
    bus: Option<String>,
    /// How often to look for new snapshots in the store, milliseconds: default 1000, or 30000
    /// with `--bus`, where the poll only catches what the events missed (a broker outage).
    #[arg(
        long,
        env = "OPTICS_POLL_MS",
        value_parser = clap::value_parser!(u64).range(100..=3_600_000)
    )]
    poll_ms: Option<u64>,
    /// On an account store without accounts, create a local Pro account and write its token
    /// to `<data-dir>/api-token` (what `optics run` does on first start). Off by default: an
    /// API replica on a shared database must not invent accounts.
    #[arg(long, env = "OPTICS_BOOTSTRAP_LOCAL_ACCOUNT")]
    bootstrap_local_account: bool,
    /// The market clock freshness is told by: the ingest's (`--start`, `--speed`,
    /// `--clock-anchor`) when it replays a day. Accounts and limits keep the real clock.
    #[command(flatten)]
    clock: ClockArgs,
}

/// The API's access control, and the writer that keeps the in-memory limiter's month in the
/// account store (none with the Redis limiter: Redis keeps the month itself).
#[derive(Debug)]
pub(crate) struct ApiAccess {
    pub(crate) control: AccessControl,
    usage_writer: Option<UsageWriter>,
}

impl ApiAccess {
    /// Stops the usage writer and writes what it has not written yet.
    pub(crate) async fn shutdown(self) -> anyhow::Result<()> {
        if let Some(writer) = self.usage_writer {
            writer.finish().await?;
        }
        Ok(())
    }
}

/// Writes the in-memory limiter's month to the account store behind the requests: every
/// `every`, and once more when finished. A failed write keeps its rows for the next one.
#[derive(Debug)]
pub(crate) struct UsageWriter {
    limiter: Arc<InMemoryLimiter>,
    store: Arc<dyn AccountStore>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl UsageWriter {
    pub(crate) fn spawn(
        limiter: Arc<InMemoryLimiter>,
        store: Arc<dyn AccountStore>,
        every: Duration,
    ) -> Self {
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn({
            let limiter = Arc::clone(&limiter);
            let store = Arc::clone(&store);
            async move {
                loop {
                    // Stop only between writes: a write cut off half-way (a PostgreSQL
                    // transaction dropped) would lose the rows it had taken.
                    tokio::select! {
                        _ = &mut stopped => return,
                        () = tokio::time::sleep(every) => {}
                    }
                    if let Err(e) = limiter.save_to(&*store).await {
                        eprintln!(
                            "writing the monthly usage counters (kept for the next try): {e}"
                        );
                    }
                }
            }
        });
        Self {
            limiter,
            store,
            stop,
            task,
        }
    }

    /// Stops the periodic writes and writes what is left.
    pub(crate) async fn finish(self) -> anyhow::Result<usize> {
        let _ = self.stop.send(());
        let _ = self.task.await;
        self.limiter
            .save_to(&*self.store)
            .await
            .context("writing the monthly usage counters at shutdown")
    }
}

/// The API's access control over the configured account store and limiter, on `real_clock`
/// (never the market clock; see the module documentation).
pub(crate) async fn access_control(
    args: &AccessArgs,
    data_dir: &Path,
    real_clock: Arc<dyn Clock>,
) -> anyhow::Result<ApiAccess> {
    args.limiter.check_shared(args.accounts.db.as_deref())?;
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let accounts = open_store(args.accounts.db.as_deref(), data_dir)
        .await
        .context("cannot open the account store")?;
    let (limiter, usage_writer): (Arc<dyn Limiter>, _) = match &args.limiter.limiter {
        Some(url) => (
            Arc::new(
                RedisLimiter::connect(url, &args.limiter.limiter_prefix, args.rate_limits())
                    .await
                    .with_context(|| {
                        format!("cannot reach the Redis limiter at {}", redacted_url(url))
                    })?,
            ),
            None,
        ),
        None => {
            let limiter = Arc::new(
                InMemoryLimiter::restored(args.rate_limits(), &*accounts, real_clock.now())
                    .await
                    .context("cannot read this month's usage from the account store")?,
            );
            let writer = UsageWriter::spawn(
                Arc::clone(&limiter),
                Arc::clone(&accounts),
                USAGE_WRITE_EVERY,
            );
            (limiter, Some(writer))
        }
    };
    // Built here, at start: the hasher makes its decoy hash now, not on the first login.
    let hasher = PasswordHasher::new(PasswordCost::default()).context("password hasher")?;
    Ok(ApiAccess {
        control: AccessControl::new(accounts, limiter, real_clock, hasher, args.access_config()),
        usage_writer,
    })
}

/// The whole HTTP service: data routes behind the token gate, the account area, metrics, and
/// the MCP tool server at `/mcp-server` (answering through the same router). The data follow
/// `market_clock`; `access` carries the real clock.
pub(crate) async fn app(
    market_clock: Arc<dyn Clock>,
    market: Arc<StoreMarketData>,
    access: AccessControl,
    public_url: Option<String>,
) -> axum::Router {
    let data = data_app(market_clock, market, access.clone()).await;
    let tools = optics_mcp::mcp_routes(data.clone(), access, public_url);
    data.merge(tools)
}

/// [`app`] without the tool server: what `optics mcp` answers its stdio tools with.
pub(crate) async fn data_app(
    market_clock: Arc<dyn Clock>,
    market: Arc<StoreMarketData>,
    access: AccessControl,
) -> axum::Router {
    let state = AppState::new(market_clock)
        .with_metrics(market.metrics().clone())
        .with_market_data(market);
    // The screens' universe table is built once before the service answers (no screen waits
    // for the first build), then rebuilt in the background when the reader's generation
    // moved, spaced by the builds' own cost, so no request pays for a build.
    if let Err(e) = state.refresh_universe_table().await {
        eprintln!("universe table build failed: {e}");
    }
    let refresher = state.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(refresher.universe_refresh_pause()).await;
            if let Err(e) = refresher.refresh_universe_table().await {
                eprintln!("universe table refresh failed: {e}");
            }
        }
    });
    optics_api::auth::service_router(state, access)
}

/// Installs into `market` every snapshot the `events` announce (a worker published it), until
/// the bus closes; each outcome goes to `health`. An event that cannot be read (a record that
/// does not decode, a snapshot the store refuses) is logged and passed over: the next event
/// of that underlying, or the store poll, brings it.
///
/// A batch's events are reduced to the newest per partition and read
/// [`CONCURRENT_EVENT_READS`] at a time: over S3 a read takes tens of milliseconds, and one
/// after another the reads of a cycle's snapshots would take longer than the cycle.
pub(crate) async fn follow_snapshot_events(
    market: Arc<StoreMarketData>,
    mut events: Box<dyn Subscription>,
    clock: Arc<dyn Clock>,
    health: Arc<HealthTracker>,
) {
    loop {
        let batch = match events.next_batch(256).await {
            Ok(Some(batch)) => batch,
            Ok(None) | Err(BusError::Closed) => return,
            Err(e) => {
                eprintln!("snapshot events: {e}");
                health.record(clock.now(), &Err::<(), _>(e), "receiving snapshot events");
                // A failure that repeats at once must not spin a core.
                tokio::time::sleep(EVENT_ERROR_PAUSE).await;
                continue;
            }
        };
        let mut newest: HashMap<(String, String), SnapshotEvent> = HashMap::new();
        for delivery in batch {
            if let Message::Snapshot(event) = delivery.message {
                let partition = (event.dataset.clone(), event.underlying.clone());
                match newest.entry(partition) {
                    Entry::Occupied(mut held) => {
                        let stamp = |e: &SnapshotEvent| (e.trade_date, e.version);
                        if stamp(&event) >= stamp(held.get()) {
                            held.insert(event);
                        }
                    }
                    Entry::Vacant(slot) => {
                        slot.insert(event);
                    }
                }
            }
        }
        let report = |read: Result<(SnapshotEvent, Result<(), LoadError>), JoinError>| match read {
            Ok((event, applied)) => {
                if let Err(e) = &applied {
                    eprintln!("snapshot {} {}: {e}", event.dataset, event.underlying);
                }
                health.record(clock.now(), &applied, "reading a published snapshot");
            }
            Err(e) => eprintln!("reading a published snapshot stopped: {e}"),
        };
        let mut reads = tokio::task::JoinSet::new();
        for event in newest.into_values() {
            if reads.len() >= CONCURRENT_EVENT_READS
                && let Some(read) = reads.join_next().await
            {
                report(read);
            }
            let market = Arc::clone(&market);
            reads.spawn(async move {
                let applied = market.apply(&event).await;
                (event, applied)
            });
        }
        while let Some(read) = reads.join_next().await {
            report(read);
        }
        // The embedded bus holds what is not committed; a Kafka follower commits nothing.
        let _ = events.commit().await;
    }
}

/// Looks for snapshots newer than those held every `every`, recording each look in `health`.
pub(crate) async fn poll_store(
    market: Arc<StoreMarketData>,
    every: Duration,
    clock: Arc<dyn Clock>,
    health: Arc<HealthTracker>,
) {
    loop {
        tokio::time::sleep(every).await;
        let refreshed = market.refresh().await;
        if let Err(e) = &refreshed {
            eprintln!("snapshot refresh failed: {e}");
        }
        health.record(clock.now(), &refreshed, "reading the store");
    }
}

/// Binds `listen`, prints the address, serves within `limits` until `shutdown`.
pub(crate) async fn serve_app(
    listen: &str,
    app: axum::Router,
    limits: ServeLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr().context("local address")?;
    println!("listening on http://{address}");
    // The handlers see the peer address (the login throttle counts attempts per address).
    serve_with_limits(listener, app, limits, shutdown)
        .await
        .context("server")?;
    Ok(address)
}

/// Resolves on Ctrl-C (or SIGTERM).
pub(crate) async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let runtime = args.runtime.runtime()?;
    runtime.block_on(async {
        // Accounts, tokens and limits on the real clock; the data on the market clock (the
        // real one unless the deployment replays a day).
        let real_clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let clock = args.clock.market_clock(chrono::Utc::now())?;
        let store = args.store.open_store()?;
        let market = Arc::new(StoreMarketData::new(store.clone()));
        market.metrics().watch_memory_of(&market);
        // Following the events before loading: what is published during the load is then
        // announced too (an event for what the load already read costs one comparison).
        let events = match &args.bus {
            Some(url) => Some(crate::settings::snapshot_event_follower(url).await?),
            None => None,
        };
        let loaded = market.load().await.context("loading snapshots")?;
        println!("{loaded} snapshots loaded");
        let access = access_control(&args.api.access, &args.store.data_dir, real_clock).await?;
        if args.bootstrap_local_account {
            crate::run_command::announce_token(
                &args.store.data_dir,
                &args.api.listen,
                &access.control,
            )
            .await?;
        } else if access.control.store().count_accounts().await? == 0 {
            println!(
                "the account store has no accounts yet: create one with `optics accounts create` \
                 and a token with `optics tokens create` (or start with --bootstrap-local-account)"
            );
        }
        // A replica learns of new snapshots from the workers' events, and by looking at the
        // store (every second without events; with them, only to catch what they missed).
        let refresh_health = Arc::new(HealthTracker::new(components::SNAPSHOT_REFRESH));
        market.metrics().watch_health(Arc::clone(&refresh_health));
        let poll_ms = args
            .poll_ms
            .unwrap_or(if events.is_some() { 30_000 } else { 1_000 });
        if let Some(events) = events {
            println!("following snapshot events; polling the store every {poll_ms} ms");
            tokio::spawn(follow_snapshot_events(
                Arc::clone(&market),
                events,
                Arc::clone(&clock),
                Arc::clone(&refresh_health),
            ));
        }
        tokio::spawn(poll_store(
            Arc::clone(&market),
            Duration::from_millis(poll_ms),
            Arc::clone(&clock),
            refresh_health,
        ));
        args.api.start_flight_sql(&store, &access.control).await?;
        let served = serve_app(
            &args.api.listen,
            app(
                clock,
                market,
                access.control.clone(),
                args.api.access.public_url.clone(),
            )
            .await,
            args.api.serve_limits(),
            shutdown_signal(),
        )
        .await;
        // Write the month back even when serving failed part-way.
        let saved = access.shutdown().await;
        served?;
        saved
    })
}

#[cfg(test)]
mod tests;
