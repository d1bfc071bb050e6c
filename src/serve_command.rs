//! `optics serve`: the API over a snapshot store (an API replica), and the API wiring that
//! `optics run` shares: account store, limiter, access control, market data, router.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use optics_api::accounts::cli::{AccountDbArgs, LimiterArgs};
use optics_api::accounts::http::account_router;
use optics_api::accounts::open_store;
use optics_api::auth::{AccessConfig, AccessControl, PasswordCost, PasswordHasher};
use optics_api::limits::{InMemoryLimiter, Limiter, RateLimits, RedisLimiter};
use optics_api::market::StoreMarketData;
use optics_api::{AppState, RouteGate};
use optics_compute::time::{Clock, SystemClock};

use crate::settings::StoreArgs;

/// Where the API listens and who may call it.
#[derive(Debug, Clone, Args)]
pub(crate) struct ApiArgs {
    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, env = "OPTICS_LISTEN", default_value = "127.0.0.1:8080")]
    pub(crate) listen: String,
    #[command(flatten)]
    pub(crate) accounts: AccountDbArgs,
    #[command(flatten)]
    pub(crate) limiter: LimiterArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    api: ApiArgs,
    /// How often to look for new snapshots in the store, milliseconds.
    #[arg(long, env = "OPTICS_POLL_MS", default_value_t = 1000)]
    poll_ms: u64,
}

/// The API's access control over the configured account store and limiter.
pub(crate) async fn access_control(
    args: &ApiArgs,
    data_dir: &Path,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<AccessControl> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let accounts = open_store(args.accounts.db.as_deref(), data_dir)
        .await
        .context("cannot open the account store")?;
    let limiter: Arc<dyn Limiter> = match &args.limiter.limiter {
        Some(url) => Arc::new(
            RedisLimiter::connect(url, &args.limiter.limiter_prefix, RateLimits::default())
                .await
                .with_context(|| format!("cannot reach the Redis limiter at {url}"))?,
        ),
        None => Arc::new(InMemoryLimiter::new(RateLimits::default())),
    };
    let hasher = PasswordHasher::new(PasswordCost::default()).context("password hasher")?;
    Ok(AccessControl::new(
        accounts,
        limiter,
        clock,
        hasher,
        AccessConfig::default(),
    ))
}

/// The whole HTTP service: data routes behind the token gate, the account area, metrics.
pub(crate) fn app(
    clock: Arc<dyn Clock>,
    market: Arc<StoreMarketData>,
    access: AccessControl,
) -> axum::Router {
    let gate_access = access.clone();
    let state = AppState::new(clock)
        .with_metrics(market.metrics().clone())
        .with_market_data(market)
        .with_gate(RouteGate::new(move |request, next| {
            optics_api::auth::gate(gate_access.clone(), request, next)
        }));
    optics_api::router(state).merge(account_router(access))
}

/// Binds `listen`, prints the address, serves until `shutdown`.
pub(crate) async fn serve_app(
    listen: &str,
    app: axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr().context("local address")?;
    println!("listening on http://{address}");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    runtime.block_on(async {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let store = args.store.open_store()?;
        let market = Arc::new(StoreMarketData::new(store));
        let loaded = market.load().await.context("loading snapshots")?;
        println!("{loaded} snapshots loaded");
        let access = access_control(&args.api, &args.store.data_dir, Arc::clone(&clock)).await?;
        crate::run_command::announce_token(&args.store.data_dir, &args.api.listen, &access, &clock)
            .await?;
        // A replica learns of new snapshots by looking at the store.
        let poller = Arc::clone(&market);
        let every = Duration::from_millis(args.poll_ms.max(100));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                if let Err(e) = poller.load().await {
                    eprintln!("snapshot refresh failed: {e}");
                }
            }
        });
        serve_app(
            &args.api.listen,
            app(clock, market, access),
            shutdown_signal(),
        )
        .await?;
        Ok(())
    })
}
