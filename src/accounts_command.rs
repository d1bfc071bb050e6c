//! `optics accounts …` and `optics tokens …`: the operators' account administration over the
//! same account store the API uses (SQLite beside the data by default, PostgreSQL by `--db`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use optics_api::accounts::admin::AdminContext;
use optics_api::accounts::cli::{
    AccountDbArgs, AccountsCommand, TokensCommand, run_accounts, run_tokens,
};
use optics_api::accounts::open_store;
use optics_api::auth::{PasswordCost, PasswordHasher};
use optics_compute::time::SystemClock;

#[derive(Debug, Args)]
pub(crate) struct AccountsArgs {
    #[command(subcommand)]
    command: AccountsCommand,
    #[command(flatten)]
    db: AccountDbArgs,
    /// Data directory (the default account database lives here).
    #[arg(long, env = "OPTICS_DATA_DIR", default_value = "./data", global = true)]
    data_dir: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct TokensArgs {
    #[command(subcommand)]
    command: TokensCommand,
    #[command(flatten)]
    db: AccountDbArgs,
    /// Data directory (the default account database lives here).
    #[arg(long, env = "OPTICS_DATA_DIR", default_value = "./data", global = true)]
    data_dir: PathBuf,
}

async fn context(db: &AccountDbArgs, data_dir: &std::path::Path) -> anyhow::Result<AdminContext> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let store = open_store(db.db.as_deref(), data_dir)
        .await
        .context("cannot open the account store")?;
    let hasher = PasswordHasher::new(PasswordCost::default()).context("password hasher")?;
    Ok(AdminContext::new(store, hasher, Arc::new(SystemClock)))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")
}

pub(crate) fn run_accounts_command(args: AccountsArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let ctx = context(&args.db, &args.data_dir).await?;
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut out = std::io::stdout();
        run_accounts(&ctx, args.command, &mut input, &mut out).await?;
        Ok(())
    })
}

pub(crate) fn run_tokens_command(args: TokensArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let ctx = context(&args.db, &args.data_dir).await?;
        let mut out = std::io::stdout();
        run_tokens(&ctx, args.command, &mut out).await?;
        Ok(())
    })
}
