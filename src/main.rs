//! The `optics` binary: argument parsing and wiring only; the logic lives in the crates.

mod accounts_command;
mod allocator;
mod backfill_command;
#[cfg(test)]
mod compose_check;
mod compute_command;
mod import_command;
mod ingest_command;
mod mcp_command;
mod price_command;
mod replay_command;
mod run_command;
mod seeding;
mod serve_command;
mod settings;
mod sql_command;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// optics — options analytics: chains, Greeks, dealer exposures, flow and volatility.
#[derive(Debug, Parser)]
#[command(name = "optics", version, about, long_about = None)]
struct Cli {
    /// What to log to stderr: a level (error, warn, info, debug, trace) or per-target
    /// directives (`warn,optics_api=debug`). At `info` the API logs one line per request.
    #[arg(long, global = true, env = "OPTICS_LOG", default_value = "info")]
    log_level: String,
    /// Log line format: `text` for people, `json` (one object per line) for log collectors.
    #[arg(long, global = true, env = "OPTICS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Installs the process's tracing subscriber: `filter` lines in `format` on stderr (stdout
/// stays for the commands' output). Each API request is logged when its span closes, with the
/// method, route template, path and status the router records on it and the time it took;
/// the router never records the query string or headers, so tokens stay out of the log.
fn init_logging(filter: &str, format: LogFormat) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(filter)
        .with_context(|| format!("--log-level / OPTICS_LOG: cannot read {filter:?}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::CLOSE);
    let installed = match format {
        LogFormat::Text => builder.finish().try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_span_list(false)
            .finish()
            .try_init(),
    };
    installed.context("installing the log subscriber")
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Price one contract and print its value and every Greek as JSON; with --price instead of
    /// --iv, solve the implied volatility first.
    Price(price_command::PriceArgs),
    /// Import vendor end-of-day option files (ORATS strikes, Cboe EOD) into the quote archive,
    /// or daily bars, earnings reports and economic calendars into the snapshot store; a file
    /// with any bad row is rejected whole, with its line and reason.
    Import(import_command::ImportArgs),
    /// Build simulated history and end-of-day snapshots (chains, exposures, flow) for a range
    /// of sessions into the snapshot store, with a progress bar.
    Backfill(backfill_command::BackfillArgs),
    /// Everything in one process: simulator → embedded bus → compute → local store → API.
    /// Seeds a fresh data directory first and creates a local account with an API token.
    Run(run_command::RunArgs),
    /// The market simulator on the clock, published to a Kafka bus (distributed mode).
    Ingest(ingest_command::IngestArgs),
    /// A compute worker on a Kafka bus writing snapshots to a store (distributed mode).
    Compute(compute_command::ComputeArgs),
    /// Operators: create accounts, set plans and budgets, list accounts.
    Accounts(accounts_command::AccountsArgs),
    /// Operators: create, list and revoke API tokens.
    Tokens(accounts_command::TokensArgs),
    /// Re-run recorded sessions from the quote archive through the compute code and rewrite
    /// their end-of-day snapshots.
    Replay(replay_command::ReplayArgs),
    /// The API over a snapshot store (an API replica); picks up new snapshots as they appear.
    Serve(serve_command::ServeArgs),
    /// The MCP tool server over stdin/stdout for a local assistant client: the 43 tools and
    /// help, answered from the same stores as `optics serve`, metered against one API token.
    Mcp(mcp_command::McpArgs),
    /// SQL over the snapshot store: every dataset a table (chain, exposures, flow, vol_daily,
    /// the reference tables…), rows as a table, CSV, JSON lines or Parquet.
    Sql(sql_command::SqlArgs),
}

fn main() -> std::process::ExitCode {
    allocator::keep_freed_memory();
    let cli = Cli::parse();
    if let Err(error) = init_logging(&cli.log_level, cli.log_format) {
        eprintln!("error: {error:#}");
        return std::process::ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Price(args) => price_command::run(&args),
        Command::Import(args) => import_command::run(&args),
        Command::Backfill(args) => backfill_command::run(&args),
        Command::Run(args) => run_command::run(&args),
        Command::Serve(args) => serve_command::run(&args),
        Command::Mcp(args) => mcp_command::run(&args),
        Command::Sql(args) => sql_command::run(&args),
        Command::Replay(args) => replay_command::run(&args),
        Command::Ingest(args) => ingest_command::run(&args),
        Command::Compute(args) => compute_command::run(&args),
        Command::Accounts(args) => accounts_command::run_accounts_command(args),
        Command::Tokens(args) => accounts_command::run_tokens_command(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use clap::{ArgAction, Command as ClapCommand, CommandFactory};

    use super::Cli;

    /// Commands whose options describe one invocation, not a deployment, so an `OPTICS_*`
    /// variable would be a trap (a stale `OPTICS_STRIKE` silently pricing another contract, an
    /// exported `--email` acting on the wrong account). A trailing space exempts the
    /// subcommands only: `optics accounts` itself keeps `--db` / `--data-dir` checked.
    const PER_INVOCATION: &[(&str, &str)] = &[
        ("optics price", "the terms of the one contract it prices"),
        ("optics sql", "the query and where its rows go"),
        ("optics accounts ", "the account acted on and what is set"),
        ("optics tokens ", "the account and the new token"),
    ];

    /// One long option: the command path (`optics run`), `--listen`, its variable.
    struct LongOption {
        command: String,
        long: String,
        env: Option<String>,
    }

    /// Every long option of `command` and of its subcommands, recursively; positional inputs
    /// (import's layout and files, revoke's token id) and clap's --help / --version are left
    /// out.
    fn long_options(command: &ClapCommand, path: &str, out: &mut Vec<LongOption>) {
        for arg in command.get_arguments() {
            let generated = matches!(
                arg.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            );
            if arg.is_positional() || generated {
                continue;
            }
            out.push(LongOption {
                command: path.to_owned(),
                // An option with only a short name has no long one to pair with a variable.
                long: arg
                    .get_long()
                    .map_or_else(|| format!("-{}", arg.get_id()), |l| format!("--{l}")),
                env: arg.get_env().map(|e| e.to_string_lossy().into_owned()),
            });
        }
        for sub in command.get_subcommands() {
            long_options(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    fn exemption(command: &str) -> Option<usize> {
        PER_INVOCATION.iter().position(|(prefix, _)| {
            command == *prefix || (prefix.ends_with(' ') && command.starts_with(prefix))
        })
    }

    #[test]
    fn the_readme_names_every_variable() {
        let readme = include_str!("../README.md");
        let mut options = Vec::new();
        long_options(&Cli::command(), "optics", &mut options);
        let unnamed: std::collections::BTreeSet<&String> = options
            .iter()
            .filter_map(|o| o.env.as_ref())
            .filter(|env| !readme.contains(&format!("`{env}`")))
            .collect();
        assert!(
            unnamed.is_empty(),
            "variables the README's configuration table does not name: {unnamed:?}"
        );
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_setting_has_an_optics_variable() {
        let mut options = Vec::new();
        long_options(&Cli::command(), "optics", &mut options);
        // Sanity: the walk reaches nested subcommands and flattened groups.
        assert!(
            options
                .iter()
                .any(|o| o.command == "optics run" && o.long == "--listen"),
            "the walk missed `optics run --listen`"
        );
        assert!(
            options
                .iter()
                .any(|o| o.command == "optics accounts create" && o.long == "--email"),
            "the walk missed `optics accounts create --email`"
        );

        let mut missing = Vec::new();
        let mut used = vec![false; PER_INVOCATION.len()];
        // Each variable sets one option name wherever it is read: OPTICS_RATE is --rate.
        let mut option_of_variable: BTreeMap<&str, &str> = BTreeMap::new();
        let mut clashes = Vec::new();
        for option in &options {
            match &option.env {
                Some(env) => {
                    if !env.starts_with("OPTICS_") {
                        missing.push(format!("{} {} reads {env}", option.command, option.long));
                    }
                    let long = option_of_variable.entry(env).or_insert(&option.long);
                    if *long != option.long {
                        clashes.push(format!(
                            "{env} is {long} and also {} of {}",
                            option.long, option.command
                        ));
                    }
                }
                None => match exemption(&option.command) {
                    Some(i) => used[i] = true,
                    None => missing.push(format!("{} {}", option.command, option.long)),
                },
            }
        }
        assert!(
            missing.is_empty(),
            "options without an OPTICS_* variable:\n{}",
            missing.join("\n")
        );
        assert!(clashes.is_empty(), "{}", clashes.join("\n"));
        // No stale exemption: each still covers an option that has no variable.
        for ((command, _), used) in PER_INVOCATION.iter().zip(used) {
            assert!(used, "the exemption of {command:?} covers nothing any more");
        }
    }
}
