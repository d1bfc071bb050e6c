//! `optics mcp`: the tool server over stdio, for an assistant client on the same machine.
//!
//! It reads the same snapshot store and account store as `optics serve` (an API replica with
//! stdin/stdout instead of a socket) and answers each tool through the API's router in
//! process, with one token: `OPTICS_API_TOKEN`, or the local account's token file that
//! `optics run` writes. Stdout carries the protocol only; everything else goes to stderr.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use optics_api::accounts::admin::LOCAL_TOKEN_FILE;
use optics_api::market::StoreMarketData;
use optics_compute::time::{Clock, SystemClock};
use optics_mcp::OpticsTools;
use optics_schemas::health::{HealthTracker, components};

use crate::serve_command::{AccessArgs, access_control, data_app, poll_store};
use crate::settings::{RuntimeArgs, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    access: AccessArgs,
    /// The API token every tool call carries (metered like REST calls); default: the local
    /// account's token in `<data-dir>/api-token`, when `optics run` made one.
    #[arg(long = "api-token", env = "OPTICS_API_TOKEN", hide_env_values = true)]
    api_token: Option<String>,
    /// How often to look for new snapshots in the store, milliseconds.
    #[arg(long, env = "OPTICS_POLL_MS", default_value_t = 1000)]
    poll_ms: u64,
}

pub(crate) fn run(args: &McpArgs) -> anyhow::Result<()> {
    let token = match &args.api_token {
        Some(token) => token.clone(),
        None => {
            let path = args.store.data_dir.join(LOCAL_TOKEN_FILE);
            std::fs::read_to_string(&path)
                .with_context(|| {
                    format!(
                        "no API token: set OPTICS_API_TOKEN (or --api-token), or run `optics \
                         run` once so {} exists",
                        path.display()
                    )
                })?
                .trim()
                .to_owned()
        }
    };
    let runtime = args.runtime.runtime()?;
    runtime.block_on(async {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let store = args.store.open_store()?;
        let market = Arc::new(StoreMarketData::new(store));
        let loaded = market.load().await.context("loading snapshots")?;
        eprintln!("optics mcp: {loaded} snapshots loaded; serving tools on stdio");
        let access = access_control(&args.access, &args.store.data_dir, Arc::clone(&clock)).await?;
        let polling = tokio::spawn(poll_store(
            Arc::clone(&market),
            Duration::from_millis(args.poll_ms.max(100)),
            Arc::clone(&clock),
            Arc::new(HealthTracker::new(components::SNAPSHOT_REFRESH)),
        ));
        let router = data_app(clock, market, access.control.clone()).await;
        let tools = OpticsTools::with_token(router, &token)?;
        let served = optics_mcp::serve_stdio(tools).await;
        polling.abort();
        // Write the month's metering back even when the session ended in an error.
        let saved = access.shutdown().await;
        served.context("the stdio tool server")?;
        saved
    })
}
