//! The `optics` binary: argument parsing and wiring only; the logic lives in the crates.

mod accounts_command;
mod backfill_command;
mod compute_command;
mod import_command;
mod ingest_command;
mod price_command;
mod replay_command;
mod run_command;
mod seeding;
mod serve_command;
mod settings;

use clap::{Parser, Subcommand};

/// optics — options analytics: chains, Greeks, dealer exposures, flow and volatility.
#[derive(Debug, Parser)]
#[command(name = "optics", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Price one contract and print its value and every Greek as JSON; with --price instead of
    /// --iv, solve the implied volatility first.
    Price(price_command::PriceArgs),
    /// Import vendor end-of-day option files (ORATS strikes, Cboe EOD) into the quote archive;
    /// a file with any bad row is rejected whole, with its line and reason.
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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Price(args) => price_command::run(&args),
        Command::Import(args) => import_command::run(&args),
        Command::Backfill(args) => backfill_command::run(&args),
        Command::Run(args) => run_command::run(&args),
        Command::Serve(args) => serve_command::run(&args),
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
