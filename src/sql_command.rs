//! `optics sql`: SQL over the snapshot store, for a quant's own tools. Every dataset is a table
//! of the rows a reader of the store sees ([`optics_api::sql`]); rows go to standard output or a
//! file, as an aligned table, CSV, JSON lines or Parquet.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use optics_api::sql::{RowFormat, StoreTable, TABLE_ROWS, store_context, write_rows};

use crate::settings::StoreArgs;

/// How the rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// An aligned text table (at most 10,000 rows).
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON object per row and line.
    Json,
    /// A Parquet file (needs --output).
    Parquet,
}

/// One query over the snapshot store.
#[derive(Debug, Args)]
pub(crate) struct SqlArgs {
    /// The query, in DataFusion's SQL (`SELECT strike, call_iv FROM chain WHERE underlying =
    /// 'SPY' AND trade_date = '2026-11-20'`); reads only. The tables are the store's datasets:
    /// `--tables` lists them, docs/storage.md describes their columns.
    #[arg(required_unless_present = "tables")]
    query: Option<String>,
    /// How the rows are written: table, csv, json (one object per line) or parquet.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Write the rows to this file instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
    /// List the tables (files and bytes each reads) instead of running a query.
    #[arg(long, conflicts_with = "query")]
    tables: bool,
    #[command(flatten)]
    store: StoreArgs,
}

fn list(tables: &[StoreTable]) -> String {
    let mut out = String::from("table              kind       files        bytes\n");
    for table in tables {
        out.push_str(&format!(
            "{:<18} {:<10} {:>5} {:>12}\n",
            table.name,
            if table.reference {
                "reference"
            } else {
                "sessions"
            },
            table.files,
            table.bytes
        ));
    }
    out
}

pub(crate) fn run(args: &SqlArgs) -> anyhow::Result<()> {
    let format = match args.format {
        OutputFormat::Table => RowFormat::Table,
        OutputFormat::Csv => RowFormat::Csv,
        OutputFormat::Json => RowFormat::JsonLines,
        OutputFormat::Parquet => RowFormat::Parquet,
    };
    if format == RowFormat::Parquet && args.output.is_none() {
        bail!("--format parquet writes a file: name it with --output");
    }
    let store = args.store.open_store()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        let (ctx, tables) = store_context(&store)
            .await
            .context("reading the snapshot store")?;
        if args.tables {
            print!("{}", list(&tables));
            return Ok(());
        }
        let query = args.query.as_deref().unwrap_or_default();
        let sink: Box<dyn Write + Send> = match &args.output {
            Some(path) => Box::new(std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("cannot create {}", path.display()))?,
            )),
            None => Box::new(std::io::BufWriter::new(std::io::stdout())),
        };
        let written = match write_rows(&ctx, query, format, sink).await {
            Ok(written) => written,
            Err(error) => {
                let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
                bail!("{error}\nthe tables: {}", names.join(", "));
            }
        };
        if written.left_out > 0 {
            eprintln!(
                "{} more rows left out: a table shows the first {TABLE_ROWS}; \
                 --format csv, json or parquet writes them all",
                written.left_out
            );
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::{Cli, Command};

    #[test]
    fn a_query_or_the_table_list_is_asked() {
        assert!(Cli::try_parse_from(["optics", "sql"]).is_err());
        assert!(Cli::try_parse_from(["optics", "sql", "--tables"]).is_ok());
        assert!(Cli::try_parse_from(["optics", "sql", "--tables", "SELECT 1"]).is_err());
        assert!(Cli::try_parse_from(["optics", "sql", "SELECT 1", "--format", "xml"]).is_err());
    }

    #[test]
    fn parquet_needs_an_output_file() {
        let cli =
            Cli::try_parse_from(["optics", "sql", "SELECT 1", "--format", "parquet"]).unwrap();
        let Command::Sql(args) = cli.command else {
            panic!("not the sql command");
        };
        let error = super::run(&args).unwrap_err();
        assert!(error.to_string().contains("--output"), "{error}");
    }
}
