//! The `optics` binary: argument parsing and wiring only; the logic lives in the crates.

mod import_command;
mod price_command;

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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Price(args) => price_command::run(&args),
        Command::Import(args) => import_command::run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::from(2)
        }
    }
}
