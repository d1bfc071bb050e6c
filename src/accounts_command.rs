//! `optics accounts …` and `optics tokens …`: the operators' account administration over the
//! same account store the API uses (SQLite beside the data by default, PostgreSQL by `--db`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use chrono::NaiveDate;
use clap::{Args, Subcommand};
use optics_api::accounts::admin::AdminContext;
use optics_api::accounts::cli::{AccountsCommand, TokensCommand, run_accounts, run_tokens};
use optics_api::accounts::{Plan, open_store};
use optics_api::auth::{PasswordCost, PasswordHasher};
use optics_compute::time::SystemClock;

#[derive(Debug, Args)]
pub(crate) struct AccountsArgs {
    #[command(subcommand)]
    command: AccountsCli,
    #[command(flatten)]
    db: AccountDbArgs,
    /// Data directory (the default account database lives here).
    #[arg(long, env = "OPTICS_DATA_DIR", default_value = "./data", global = true)]
    data_dir: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct TokensArgs {
    #[command(subcommand)]
    command: TokensCli,
    #[command(flatten)]
    db: AccountDbArgs,
    /// Data directory (the default account database lives here).
    #[arg(long, env = "OPTICS_DATA_DIR", default_value = "./data", global = true)]
    data_dir: PathBuf,
}

/// The plans as CLI values (`none`, `trial`, `basic`, `premium`, `pro`), each with its help line.
fn plan_parser() -> impl clap::builder::TypedValueParser<Value = Plan> {
    use clap::builder::TypedValueParser as _;
    let values = Plan::ALL
        .map(|plan| clap::builder::PossibleValue::new(plan.as_str()).help(plan.describe()));
    clap::builder::PossibleValuesParser::new(values)
        .map(|name: String| Plan::parse(&name).unwrap_or(Plan::None))
}

/// Where the accounts live (shared by `run`, `serve`, `accounts` and `tokens`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct AccountDbArgs {
    /// Account store: `postgres://user@host/db` for a shared PostgreSQL, or `sqlite://<file>`;
    /// default: `accounts.sqlite3` in the data directory.
    #[arg(long = "db", env = "OPTICS_DB", global = true)]
    pub(crate) db: Option<String>,
}

/// Where the rate-limit counters live.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct LimiterArgs {
    /// Rate-limit counters: `redis://host:6379` to share them between API replicas; default:
    /// in this process.
    #[arg(long = "limiter", env = "OPTICS_LIMITER")]
    pub(crate) limiter: Option<String>,
    /// Prefix of every Redis key (deployments sharing one Redis).
    #[arg(
        long = "limiter-prefix",
        env = "OPTICS_LIMITER_PREFIX",
        default_value = "optics:rl"
    )]
    pub(crate) limiter_prefix: String,
    /// Keep the rate limits in this process even with a shared (PostgreSQL) account store:
    /// every replica then counts on its own, so each limit is multiplied by the replica count.
    /// For a single replica only.
    #[arg(
        long = "allow-local-limits",
        env = "OPTICS_ALLOW_LOCAL_LIMITS",
        default_value_t = false
    )]
    pub(crate) allow_local_limits: bool,
}

impl LimiterArgs {
    /// Refuses a shared account store with limits counted in this process (each replica would
    /// grant the full limits) unless `--allow-local-limits` says there is one replica.
    pub(crate) fn check_shared(&self, db: Option<&str>) -> anyhow::Result<()> {
        let shared = db
            .is_some_and(|url| url.starts_with("postgres://") || url.starts_with("postgresql://"));
        if shared && self.limiter.is_none() && !self.allow_local_limits {
            anyhow::bail!(
                "--db postgres://… shares accounts between API replicas, but without --limiter \
                 (OPTICS_LIMITER) each replica counts rate limits on its own and every limit is \
                 multiplied by the replica count: pass --limiter redis://host:6379, or \
                 --allow-local-limits (OPTICS_ALLOW_LOCAL_LIMITS) for a single replica"
            );
        }
        Ok(())
    }
}

/// `optics accounts …`
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum AccountsCli {
    /// Create an account. The password is read from stdin with `--password-stdin`; without
    /// it a random one is generated and printed once.
    Create {
        /// Login email.
        #[arg(long)]
        email: String,
        /// Plan.
        #[arg(long, value_parser = plan_parser(), default_value = "basic")]
        plan: Plan,
        /// Last day of the plan (YYYY-MM-DD, inclusive, UTC); default: no end.
        #[arg(long)]
        until: Option<NaiveDate>,
        /// Own monthly budget in data units; default: the plan's.
        #[arg(long)]
        monthly_budget: Option<u64>,
        /// Read the password from the first line of stdin.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Change an account's plan.
    SetPlan {
        /// Login email.
        #[arg(long)]
        email: String,
        /// New plan.
        #[arg(long, value_parser = plan_parser())]
        plan: Plan,
        /// Last day of the plan (YYYY-MM-DD, inclusive, UTC); default: no end.
        #[arg(long)]
        until: Option<NaiveDate>,
    },
    /// Set (or with no `--units`, clear) an account's own monthly budget.
    SetBudget {
        /// Login email.
        #[arg(long)]
        email: String,
        /// Units per month; omit to use the plan's budget.
        #[arg(long)]
        units: Option<u64>,
    },
    /// List accounts.
    List,
}

/// `optics tokens …`
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum TokensCli {
    /// Create a token; it is printed once and only its hash is kept.
    Create {
        /// The owner's email.
        #[arg(long)]
        email: String,
        /// A label.
        #[arg(long)]
        name: Option<String>,
        /// Lifetime in days (0 = never expires; default 365).
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
    /// List an account's tokens (ids and prefixes only).
    List {
        /// The owner's email.
        #[arg(long)]
        email: String,
    },
    /// Revoke a token by id.
    Revoke {
        /// Token id (`tok_…`).
        id: String,
    },
}

impl From<AccountsCli> for AccountsCommand {
    fn from(command: AccountsCli) -> Self {
        match command {
            AccountsCli::Create {
                email,
                plan,
                until,
                monthly_budget,
                password_stdin,
            } => Self::Create {
                email,
                plan,
                until,
                monthly_budget,
                password_stdin,
            },
            AccountsCli::SetPlan { email, plan, until } => Self::SetPlan { email, plan, until },
            AccountsCli::SetBudget { email, units } => Self::SetBudget { email, units },
            AccountsCli::List => Self::List,
        }
    }
}

impl From<TokensCli> for TokensCommand {
    fn from(command: TokensCli) -> Self {
        match command {
            TokensCli::Create {
                email,
                name,
                expires_in_days,
            } => Self::Create {
                email,
                name,
                expires_in_days,
            },
            TokensCli::List { email } => Self::List { email },
            TokensCli::Revoke { id } => Self::Revoke { id },
        }
    }
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
        run_accounts(&ctx, args.command.into(), &mut input, &mut out).await?;
        Ok(())
    })
}

pub(crate) fn run_tokens_command(args: TokensArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let ctx = context(&args.db, &args.data_dir).await?;
        let mut out = std::io::stdout();
        run_tokens(&ctx, args.command.into(), &mut out).await?;
        Ok(())
    })
}
