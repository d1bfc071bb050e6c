//! SQL over the snapshot store (`optics sql`): every dataset registered with DataFusion as a
//! table holding the rows a reader of the store sees.
//!
//! - A **session dataset** (`chain`, `exposures`, `exposure_summary`, `flow`,
//!   `flow_aggregates`, `vol_daily`, `vol_term`) is the current version of each of its
//!   partitions, every trade date: the history. The older versions a publication leaves for a
//!   moment are not read, so no row counts twice.
//! - A **reference table** (`daily_bars`, `earnings`, `dividends`, `borrow_rates`,
//!   `economic_calendar`, `companies`) is the current version of its newest market-wide
//!   partition: each version holds the whole table, as the API reads it.
//!
//! Each file is named to DataFusion (no directory listing at query time), with the newest
//! file's schema, so a column added later reads as null in older files. The files carry
//! `trade_date` and `underlying` as columns and per-row-group statistics on them, so a filter
//! on either skips the row groups it excludes.

use std::sync::Arc;

use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::error::DataFusionError;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::SessionContext;
use optics_pipeline::store::{MARKET_WIDE, SnapshotFile, SnapshotStore, StoreError};
use optics_schemas::Dataset;
use optics_schemas::bus::snapshot_datasets;
use url::Url;

use crate::market::history::{snapshot_session_config, store_file_url};

/// The session datasets, in the order they are listed.
pub const SESSION_TABLES: [&str; 7] = [
    snapshot_datasets::CHAIN,
    snapshot_datasets::EXPOSURES,
    snapshot_datasets::EXPOSURE_SUMMARY,
    snapshot_datasets::FLOW,
    snapshot_datasets::FLOW_AGGREGATES,
    snapshot_datasets::VOL_DAILY,
    snapshot_datasets::VOL_TERM,
];

/// The reference tables, in the order they are listed.
pub const REFERENCE_TABLES: [Dataset; 6] = [
    Dataset::DailyBars,
    Dataset::Earnings,
    Dataset::Dividends,
    Dataset::BorrowRates,
    Dataset::EconomicCalendar,
    Dataset::Companies,
];

/// The scheme under which the store is registered with DataFusion.
const STORE_URL: &str = "optics://store";

/// Why the tables could not be opened or a query not run.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// The store could not be listed.
    #[error("snapshot store: {0}")]
    Store(#[from] StoreError),
    /// DataFusion refused the table or the query.
    #[error("{0}")]
    Query(#[from] DataFusionError),
    /// The rows could not be encoded.
    #[error("encoding the rows: {0}")]
    Encode(#[from] datafusion::arrow::error::ArrowError),
    /// The Parquet file could not be written.
    #[error("writing Parquet: {0}")]
    Parquet(#[from] datafusion::parquet::errors::ParquetError),
    /// The output could not be written.
    #[error("writing the rows: {0}")]
    Io(#[from] std::io::Error),
}

/// How [`write_rows`] writes a query's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// An aligned text table with a header, at most [`TABLE_ROWS`] rows (for a terminal).
    Table,
    /// CSV with a header row; dates ISO, timestamps RFC 3339 (UTC), nulls empty.
    Csv,
    /// One JSON object per row and line (nulls left out).
    JsonLines,
    /// One Parquet file, with the Arrow schema in it (for pandas, polars, DuckDB).
    Parquet,
}

/// Most rows [`RowFormat::Table`] prints: an aligned table holds every row before printing.
pub const TABLE_ROWS: usize = 10_000;

/// What [`write_rows`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Rows written.
    pub rows: u64,
    /// Rows the query returned beyond [`TABLE_ROWS`] and a table left out.
    pub left_out: u64,
}

/// What a query may do: read. No DDL (`CREATE …`), no DML (`INSERT`, `COPY … TO`, which would
/// write files into the store's directories beside its own versions) and no statements
/// (`SET …`).
pub fn read_only() -> datafusion::execution::context::SQLOptions {
    datafusion::execution::context::SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
}

/// Runs `query` on `ctx` and writes its rows to `sink` in `format`, batch by batch (a table
/// holds its first [`TABLE_ROWS`] rows, then counts the rest).
pub async fn write_rows<W: std::io::Write + Send>(
    ctx: &SessionContext,
    query: &str,
    format: RowFormat,
    mut sink: W,
) -> Result<Written, SqlError> {
    use datafusion::arrow::array::RecordBatch;
    use futures_util::StreamExt;
    let mut stream = ctx
        .sql_with_options(query, read_only())
        .await?
        .execute_stream()
        .await?;
    let schema = stream.schema();
    let mut written = Written {
        rows: 0,
        left_out: 0,
    };
    match format {
        RowFormat::Table => {
            let mut held: Vec<RecordBatch> = Vec::new();
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                let room = TABLE_ROWS.saturating_sub(written.rows as usize);
                let kept = batch.num_rows().min(room);
                if kept > 0 {
                    held.push(batch.slice(0, kept));
                }
                written.rows += kept as u64;
                written.left_out += (batch.num_rows() - kept) as u64;
            }
            if held.is_empty() {
                held.push(RecordBatch::new_empty(schema));
            }
            let table = datafusion::arrow::util::pretty::pretty_format_batches(&held)?;
            writeln!(sink, "{table}")?;
        }
        RowFormat::Csv => {
            let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut sink);
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                writer.write(&batch)?;
                written.rows += batch.num_rows() as u64;
            }
            if written.rows == 0 {
                writer.write(&RecordBatch::new_empty(schema))?;
            }
        }
        RowFormat::JsonLines => {
            let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut sink);
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                writer.write(&batch)?;
                written.rows += batch.num_rows() as u64;
            }
            writer.finish()?;
        }
        RowFormat::Parquet => {
            let mut writer =
                datafusion::parquet::arrow::ArrowWriter::try_new(&mut sink, schema, None)?;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                writer.write(&batch)?;
                written.rows += batch.num_rows() as u64;
            }
            writer.close()?;
        }
    }
    sink.flush()?;
    Ok(written)
}

/// One registered table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreTable {
    /// Its name in SQL (the dataset's).
    pub name: &'static str,
    /// Whether it is a reference table (one partition) or a session dataset (every one).
    pub reference: bool,
    /// Files it reads.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// A DataFusion context over `store` with every dataset that has a file registered as a
/// table, and the tables (a dataset with no file is left out: a query naming it is told the
/// table does not exist).
pub async fn store_context(
    store: &SnapshotStore,
) -> Result<(SessionContext, Vec<StoreTable>), SqlError> {
    store_context_in(store, Arc::new(RuntimeEnv::default())).await
}

/// [`store_context`] on `runtime`: a server shares one runtime, whose memory pool bounds what
/// all its queries' sorts, joins and aggregates hold together.
pub async fn store_context_in(
    store: &SnapshotStore,
    runtime: Arc<RuntimeEnv>,
) -> Result<(SessionContext, Vec<StoreTable>), SqlError> {
    // Read as the history reads do: strings as written, filters while decoding.
    let ctx = SessionContext::new_with_config_rt(snapshot_session_config(), runtime);
    let url = Url::parse(STORE_URL).map_err(|e| DataFusionError::External(Box::new(e)))?;
    ctx.register_object_store(&url, Arc::clone(store.object_store()));
    let mut tables = Vec::new();
    for name in SESSION_TABLES {
        let files = store.current_partitions(name).await?;
        if let Some(table) = register(&ctx, name, false, &files).await? {
            tables.push(table);
        }
    }
    for dataset in REFERENCE_TABLES {
        let newest: Vec<SnapshotFile> = store
            .newest_versions(dataset.name(), MARKET_WIDE)
            .await?
            .pop()
            .into_iter()
            .collect();
        if let Some(table) = register(&ctx, dataset.name(), true, &newest).await? {
            tables.push(table);
        }
    }
    Ok((ctx, tables))
}

async fn register(
    ctx: &SessionContext,
    name: &'static str,
    reference: bool,
    files: &[SnapshotFile],
) -> Result<Option<StoreTable>, SqlError> {
    let Some(newest) = files.iter().max_by_key(|f| (f.key.trade_date, f.version)) else {
        return Ok(None);
    };
    let urls = files
        .iter()
        .map(|f| ListingTableUrl::parse(store_file_url(STORE_URL, f.path.as_ref())))
        .collect::<Result<Vec<_>, _>>()?;
    // Strings as written (Utf8, not Utf8View): a Parquet file written from the rows reads back
    // as the dataset's own rows.
    let format = ParquetFormat::default().with_force_view_types(false);
    let options = ListingOptions::new(Arc::new(format)).with_file_extension(".parquet");
    let newest_url = ListingTableUrl::parse(store_file_url(STORE_URL, newest.path.as_ref()))?;
    let schema = options.infer_schema(&ctx.state(), &newest_url).await?;
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(options)
        .with_schema(schema);
    ctx.register_table(name, Arc::new(ListingTable::try_new(config)?))?;
    Ok(Some(StoreTable {
        name,
        reference,
        files: files.len(),
        bytes: files.iter().map(|f| f.bytes).sum(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, NaiveDate, Utc};
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use optics_pipeline::store::SnapshotKey;
    use optics_schemas::{Record, VolDailyRow};

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    async fn publish_vol(store: &SnapshotStore, date: NaiveDate, rows: &[(&str, f64)]) {
        let as_of: DateTime<Utc> = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
        let rows: Vec<VolDailyRow> = rows
            .iter()
            .map(|(symbol, close)| VolDailyRow::new(symbol, date, as_of, *close))
            .collect();
        store
            .publish(
                &SnapshotKey::new("vol_daily", date, MARKET_WIDE),
                &VolDailyRow::to_batch(&rows).unwrap(),
                &[],
                as_of,
            )
            .await
            .unwrap();
    }

    async fn publish_companies(store: &SnapshotStore, date: NaiveDate, symbols: &[&str]) {
        let rows: Vec<optics_schemas::Company> = symbols
            .iter()
            .map(|symbol| optics_schemas::Company {
                symbol: (*symbol).to_owned(),
                name: format!("{symbol} Inc."),
                asset_class: optics_schemas::AssetClass::Stock,
                sector: None,
                sector_etf: None,
                market_cap: None,
                beta_spy: 1.0,
                corr_spy: 0.5,
                priced_on_forward: false,
                industry: None,
            })
            .collect();
        store
            .publish(
                &SnapshotKey::new(Dataset::Companies.name(), date, MARKET_WIDE),
                &optics_schemas::Company::to_batch(&rows).unwrap(),
                &[],
                date.and_hms_opt(21, 0, 0).unwrap().and_utc(),
            )
            .await
            .unwrap();
    }

    async fn rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        let mut out = Vec::new();
        for batch in batches {
            for row in 0..batch.num_rows() {
                let cells: Vec<String> = batch
                    .columns()
                    .iter()
                    .map(|c| {
                        datafusion::arrow::util::display::array_value_to_string(c, row).unwrap()
                    })
                    .collect();
                out.push(cells.join(","));
            }
        }
        out
    }

    /// A restated session counts once (its newest version), a reference table is its newest
    /// partition only, and a dataset with no file is no table.
    #[tokio::test]
    async fn tables_read_the_current_version_of_each_partition() {
        let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
        publish_vol(&store, day(19), &[("SPY", 100.0), ("^VIX", 15.0)]).await;
        publish_vol(&store, day(20), &[("SPY", 101.0), ("^VIX", 16.0)]).await;
        publish_vol(&store, day(20), &[("SPY", 111.0), ("^VIX", 17.0)]).await;
        // A partition whose symbol the store percent-encodes in its path (`underlying=%5EVIX`).
        let vix = [VolDailyRow::new("^VIX", day(20), DateTime::default(), 16.0)];
        store
            .publish(
                &SnapshotKey::new("flow", day(20), "^VIX"),
                &VolDailyRow::to_batch(&vix).unwrap(),
                &[],
                DateTime::default(),
            )
            .await
            .unwrap();
        publish_companies(&store, day(19), &["SPY"]).await;
        publish_companies(&store, day(20), &["SPY", "AAPL"]).await;

        let (ctx, tables) = store_context(&store).await.unwrap();
        let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
        assert_eq!(names, ["flow", "vol_daily", "companies"]);
        assert_eq!(tables[1].files, 2);
        assert_eq!(tables[2].files, 1);
        assert_eq!(rows(&ctx, "SELECT underlying FROM flow").await, ["^VIX"]);
        assert_eq!(
            rows(
                &ctx,
                "SELECT underlying, trade_date, close FROM vol_daily \
                 ORDER BY trade_date, underlying"
            )
            .await,
            [
                "SPY,2026-11-19,100.0",
                "^VIX,2026-11-19,15.0",
                "SPY,2026-11-20,111.0",
                "^VIX,2026-11-20,17.0"
            ]
        );
        assert_eq!(
            rows(&ctx, "SELECT symbol FROM companies ORDER BY symbol").await,
            ["AAPL", "SPY"]
        );
        let error = ctx.sql("SELECT * FROM chain").await.unwrap_err();
        assert!(error.to_string().contains("chain"), "{error}");

        // The formats.
        let query = "SELECT underlying, trade_date, close FROM vol_daily \
                     WHERE underlying = 'SPY' ORDER BY trade_date";
        let text = |format| {
            let ctx = ctx.clone();
            async move {
                let mut out = Vec::new();
                let written = write_rows(&ctx, query, format, &mut out).await.unwrap();
                assert_eq!(written.rows, 2);
                String::from_utf8(out).unwrap()
            }
        };
        assert_eq!(
            text(RowFormat::Csv).await,
            "underlying,trade_date,close\nSPY,2026-11-19,100.0\nSPY,2026-11-20,111.0\n"
        );
        assert_eq!(
            text(RowFormat::JsonLines).await,
            "{\"underlying\":\"SPY\",\"trade_date\":\"2026-11-19\",\"close\":100.0}\n\
             {\"underlying\":\"SPY\",\"trade_date\":\"2026-11-20\",\"close\":111.0}\n"
        );
        let table = text(RowFormat::Table).await;
        assert!(
            table.contains("| SPY        | 2026-11-20 | 111.0 |"),
            "{table}"
        );
        let mut parquet = Vec::new();
        write_rows(&ctx, query, RowFormat::Parquet, &mut parquet)
            .await
            .unwrap();
        let read = optics_pipeline::store::decode_parquet(parquet.into()).unwrap();
        assert_eq!(read.iter().map(|b| b.num_rows()).sum::<usize>(), 2);

        // Nothing but reads: the store is left as it was.
        let before = store.current_partitions("vol_daily").await.unwrap();
        for refused in [
            "INSERT INTO vol_daily SELECT * FROM vol_daily",
            "COPY (SELECT * FROM vol_daily) TO 'memory:///copy.parquet'",
            "CREATE TABLE copy AS SELECT * FROM vol_daily",
            "DROP TABLE vol_daily",
            "SET datafusion.execution.batch_size = 1",
        ] {
            let error = write_rows(&ctx, refused, RowFormat::Csv, Vec::new())
                .await
                .unwrap_err();
            assert!(
                error.to_string().contains("not supported")
                    || error.to_string().contains("not allowed"),
                "{refused}: {error}"
            );
        }
        assert_eq!(store.current_partitions("vol_daily").await.unwrap(), before);
        assert_eq!(rows(&ctx, "SELECT count(*) FROM vol_daily").await, ["4"]);
    }
}
