//! History through DataFusion over the Parquet snapshots: chain-at-time reads the end-of-day
//! chain file of one session (the partition's current version) with a filter on the
//! expiration, which DataFusion pushes into the Parquet scan (row groups and pages whose
//! expiration statistics exclude it are skipped). The `vol_daily` history of one underlying
//! reads the market-wide partition of each session the same way, filtered on the underlying
//! (the files are sorted by it, so only its pages are decoded). A session's published file
//! never changes (a new publication is a new file), so each underlying's rows of a file are
//! decoded once and kept: a zero-dte read of 60 sessions then costs the listings alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::NaiveDate;
use datafusion::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use datafusion::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, RowSelection, RowSelector,
};
use datafusion::parquet::arrow::async_reader::{AsyncFileReader, ParquetRecordBatchStreamBuilder};
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::{
    PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader,
};
use datafusion::prelude::{DataFrame, ParquetReadOptions, SessionConfig, SessionContext, col, lit};
use futures_util::future::BoxFuture;
use futures_util::{StreamExt, TryStreamExt};
use optics_compute::cores::{CoresHistory, CoresHistoryBuilder};
use optics_pipeline::store::MARKET_WIDE;
use optics_pipeline::store::{SnapshotFile, SnapshotKey, SnapshotStore, StoreError};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::columns::chain as chain_col;
use optics_schemas::columns::vol_daily as vol_col;
use optics_schemas::{ChainRow, SchemaError, VolDailyRow, date_to_days, days_to_date};
use url::Url;

use crate::ticker::Ticker;

/// Why a history read failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The store could not be listed or read.
    #[error("snapshot store: {0}")]
    Store(#[from] StoreError),
    /// DataFusion failed to plan or run the query.
    #[error("query: {0}")]
    Query(#[from] datafusion::error::DataFusionError),
    /// A stored batch did not read as rows of its dataset.
    #[error("snapshot rows: {0}")]
    Schema(#[from] SchemaError),
}

impl HistoryError {
    /// Whether the store could not be reached or read (a network or storage failure, not a
    /// bad file or a bad query): the client's answer is then a 424, retried later.
    pub fn is_store_unavailable(&self) -> bool {
        match self {
            Self::Store(StoreError::ObjectStore(_) | StoreError::Io(_)) => true,
            Self::Query(error) => matches!(
                error.find_root(),
                datafusion::error::DataFusionError::ObjectStore(_)
                    | datafusion::error::DataFusionError::IoError(_)
            ),
            Self::Store(_) | Self::Schema(_) => false,
        }
    }
}

/// A history read's failure as the client sees it: the store unreachable is upstream data
/// missing (424, logged); anything else is ours (500, logged, fixed message).
impl From<HistoryError> for crate::error::ApiError {
    fn from(error: HistoryError) -> Self {
        if error.is_store_unavailable() {
            tracing::warn!(%error, "history read: the snapshot store is unavailable");
            Self::upstream(
                "The snapshot store holding the history could not be read; live answers go on, \
                 history answers come back once it can be read again: retry shortly",
            )
        } else {
            Self::internal("history read", error)
        }
    }
}

/// The scheme under which the snapshot store is registered with DataFusion.
const STORE_URL: &str = "optics://snapshots";

/// The URL DataFusion reads the store object `path` at, under `base` (a registered store).
/// A path holds the store's own percent-encoding (`underlying=%5EVIX`); DataFusion decodes a
/// URL's path once before asking the store, so the `%` itself is escaped here.
pub fn store_file_url(base: &str, path: &str) -> String {
    format!("{base}/{}", path.replace('%', "%25"))
}

/// How DataFusion reads the snapshot files (the history reads, `optics sql`, Flight SQL):
/// strings as written (Utf8; DataFusion would otherwise read them as Utf8View, which the
/// snapshot schemas do not accept), and filters evaluated while decoding (parquet's row
/// filter), so a filter on a sorted column such as the underlying decodes only its rows past
/// that column.
pub fn snapshot_session_config() -> SessionConfig {
    SessionConfig::new()
        .set_bool(
            "datafusion.execution.parquet.schema_force_view_types",
            false,
        )
        .set_bool("datafusion.execution.parquet.pushdown_filters", true)
}

/// DataFusion over the snapshot store.
#[derive(Clone)]
pub struct ChainHistory {
    store: SnapshotStore,
    ctx: Arc<SessionContext>,
    /// `vol_daily` series by underlying.
    vol_rows: Arc<Mutex<VolRowsMemo>>,
    /// Footers and page indexes of chain files read by [`ChainHistory::chain_at_time`], by
    /// path (a published file never changes); at most [`CHAIN_FOOTERS_HELD`].
    chain_footers: Arc<Mutex<HashMap<String, ArrowReaderMetadata>>>,
}

/// Chain-file footers held at once (a SPY-sized one is ~93 KB with its page index, so at most
/// ~12 MB; over S3 reading one is a round trip or two). Past it the map starts afresh.
const CHAIN_FOOTERS_HELD: usize = 128;

/// One underlying's `vol_daily` series, the files it was read from and the generation it was
/// read at (see [`ChainHistory::vol_series`]).
struct VolSeriesEntry {
    generation: u64,
    files: Vec<(NaiveDate, String)>,
    rows: Arc<Vec<VolDailyRow>>,
}

/// The held series by underlying.
type VolRowsMemo = HashMap<String, VolSeriesEntry>;

/// Underlyings whose series are held before the memo starts afresh (the coverage universe
/// and then some; three years of one underlying is about 750 rows). A larger universe's build
/// reads cut histories instead ([`ChainHistory::cores_histories`]).
const VOL_SERIES_UNDERLYINGS: usize = 512;

/// `vol_daily` files read at once by [`ChainHistory::cores_histories`] (over S3 each read is
/// a round trip; a file of 20,000 underlyings decodes to a few MB).
const VOL_FILES_AT_ONCE: usize = 8;

impl std::fmt::Debug for ChainHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainHistory")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl ChainHistory {
    /// A query context over `store`.
    pub fn new(store: SnapshotStore) -> Self {
        // One partition per query: a session's file is a few MB; more threads only add
        // scheduling to a short read and compete with the API's own workers.
        let config = snapshot_session_config().with_target_partitions(1);
        let ctx = SessionContext::new_with_config(config);
        if let Ok(url) = Url::parse(STORE_URL) {
            ctx.register_object_store(&url, Arc::clone(store.object_store()));
        }
        Self {
            store,
            ctx: Arc::new(ctx),
            vol_rows: Arc::default(),
            chain_footers: Arc::default(),
        }
    }

    /// The sessions with an end-of-day chain of `ticker`, ascending.
    pub async fn trade_dates(&self, ticker: &str) -> Result<Vec<NaiveDate>, HistoryError> {
        Ok(self
            .store
            .newest_versions(snapshot_datasets::CHAIN, ticker)
            .await?
            .into_iter()
            .map(|file| file.key.trade_date)
            .collect())
    }

    /// The current `vol_daily` files, (trade date, path) ascending, from one listing.
    async fn vol_files(&self) -> Result<Vec<(NaiveDate, String)>, HistoryError> {
        Ok(self
            .store
            .newest_versions(snapshot_datasets::VOL_DAILY, MARKET_WIDE)
            .await?
            .into_iter()
            .map(|file| (file.key.trade_date, file.path.to_string()))
            .collect())
    }

    /// The rows of `tickers` in the `vol_daily` files `files` (trade date, path), in one
    /// DataFusion scan filtered on the underlying; none for no files.
    async fn scan_vol_rows<'f>(
        &self,
        files: impl IntoIterator<Item = &'f (NaiveDate, String)>,
        tickers: &[&str],
    ) -> Result<Vec<VolDailyRow>, HistoryError> {
        let locations: Vec<String> = files
            .into_iter()
            .map(|(_, path)| store_file_url(STORE_URL, path))
            .collect();
        if locations.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = tickers.iter().map(|ticker| lit(*ticker)).collect();
        let frame = self
            .ctx
            .read_parquet(locations, ParquetReadOptions::default())
            .await?
            .filter(col(vol_col::UNDERLYING).in_list(wanted, false))?;
        let mut rows = Vec::new();
        for batch in frame.collect().await? {
            rows.extend(VolDailyRow::from_batch(&batch)?);
        }
        Ok(rows)
    }

    /// Reads, in one scan of the current `vol_daily` files, the series of every ticker of
    /// `tickers` that has none of `generation` held (at most the memo's capacity), so each
    /// file is read once for the whole universe rather than once per underlying (a replica's
    /// start over S3 went from minutes of requests to one pass). Single tickers are left to
    /// [`vol_series`](Self::vol_series), which rereads only new files.
    async fn prefetch_vol_series(
        &self,
        tickers: &[&str],
        generation: u64,
    ) -> Result<(), HistoryError> {
        let missing: Vec<String> = {
            let memo = self.vol_memo();
            tickers
                .iter()
                .filter(|ticker| {
                    memo.get(**ticker)
                        .is_none_or(|e| e.generation != generation)
                })
                .take(VOL_SERIES_UNDERLYINGS)
                .map(|ticker| (*ticker).to_owned())
                .collect()
        };
        if missing.len() < 2 {
            return Ok(());
        }
        let files = self.vol_files().await?;
        let mut series: HashMap<String, Vec<VolDailyRow>> = missing
            .iter()
            .map(|ticker| (ticker.clone(), Vec::new()))
            .collect();
        let wanted: Vec<&str> = missing.iter().map(String::as_str).collect();
        for row in self.scan_vol_rows(files.iter(), &wanted).await? {
            if let Some(rows) = series.get_mut(&row.underlying) {
                rows.push(row);
            }
        }
        let mut memo = self.vol_memo();
        let new_entries = series.keys().filter(|t| !memo.contains_key(*t)).count();
        if memo.len() + new_entries > VOL_SERIES_UNDERLYINGS {
            memo.clear();
        }
        for (ticker, mut rows) in series {
            rows.sort_by_key(|r| r.trade_date);
            rows.dedup_by_key(|r| r.trade_date);
            memo.insert(
                ticker,
                VolSeriesEntry {
                    generation,
                    files: files.clone(),
                    rows: Arc::new(rows),
                },
            );
        }
        Ok(())
    }

    /// What the cores row reads of each of `tickers`' stored series, for rows computed on
    /// `today` ([`CoresHistory`]), aligned with `tickers` (a ticker without stored rows gets an
    /// empty history).
    ///
    /// A universe the series memo holds (the default one) is read into the memo in one scan
    /// and cut from it, so the routes of one ticker that follow answer from memory. A larger
    /// one is read in one pass over the current `vol_daily` partitions, newest session first:
    /// each file is read whole once ([`VOL_FILES_AT_ONCE`] at a time) and dropped, each row
    /// handed to its ticker's history, and the pass stops once no ticker can take an older
    /// session (about a year of files). A build of 20,000 underlyings thus holds 20,000 cut
    /// histories, never their full series, and reads each file once rather than once per
    /// underlying.
    pub async fn cores_histories(
        &self,
        tickers: &[Ticker],
        today: NaiveDate,
        generation: u64,
    ) -> Result<Vec<CoresHistory>, HistoryError> {
        if tickers.is_empty() {
            return Ok(Vec::new());
        }
        if tickers.len() <= VOL_SERIES_UNDERLYINGS {
            let names: Vec<&str> = tickers.iter().map(Ticker::as_str).collect();
            self.prefetch_vol_series(&names, generation).await?;
            let mut histories = Vec::with_capacity(tickers.len());
            for ticker in &names {
                let rows = self.vol_series(ticker, generation).await?;
                histories.push(CoresHistory::from_rows(&rows, today));
            }
            return Ok(histories);
        }
        let mut builders: HashMap<&str, CoresHistoryBuilder> = tickers
            .iter()
            .map(|ticker| (ticker.as_str(), CoresHistoryBuilder::new(today)))
            .collect();
        let mut files = self
            .store
            .newest_versions(snapshot_datasets::VOL_DAILY, MARKET_WIDE)
            .await?;
        files.retain(|file| file.key.trade_date <= today);
        files.sort_by_key(|file| std::cmp::Reverse(file.key.trade_date));
        // Futures made up front: a closure held across the awaits below would not be `Send`
        // for every lifetime the boxed reader future needs.
        let reads: Vec<_> = files.iter().map(|f| self.store.read_file(f)).collect();
        let mut reads = futures_util::stream::iter(reads).buffered(VOL_FILES_AT_ONCE);
        while let Some(batches) = reads.next().await {
            for batch in batches? {
                for row in VolDailyRow::from_batch(&batch)? {
                    if let Some(builder) = builders.get_mut(row.underlying.as_str()) {
                        builder.push_older(&row);
                    }
                }
            }
            if !builders.values().any(CoresHistoryBuilder::wants_older) {
                break;
            }
        }
        Ok(tickers
            .iter()
            .map(|ticker| {
                builders
                    .remove(ticker.as_str())
                    .map(CoresHistoryBuilder::finish)
                    .unwrap_or_default()
            })
            .collect())
    }

    /// Every stored `vol_daily` row of `ticker`, ascending by trade date (one per session;
    /// sessions without a row for it are left out), shared. Held per underlying with the
    /// files it was read from: a call with `generation` equal to the held one answers from
    /// memory without touching the store; otherwise the sessions' current files are listed
    /// and only files not read before are scanned, in one DataFusion query filtered on the
    /// underlying.
    pub async fn vol_series(
        &self,
        ticker: &str,
        generation: u64,
    ) -> Result<Arc<Vec<VolDailyRow>>, HistoryError> {
        if let Some(entry) = self.vol_memo().get(ticker)
            && entry.generation == generation
        {
            return Ok(Arc::clone(&entry.rows));
        }
        let files = self.vol_files().await?;
        let held = self
            .vol_memo()
            .get(ticker)
            .map(|e| (e.files.clone(), Arc::clone(&e.rows)));
        // Rows of files still current are kept; the others are read.
        let (mut rows, unread): (Vec<VolDailyRow>, Vec<&(NaiveDate, String)>) = match &held {
            Some((held_files, held_rows)) => {
                let current: HashMap<&str, NaiveDate> =
                    files.iter().map(|(d, p)| (p.as_str(), *d)).collect();
                let kept_dates: std::collections::HashSet<NaiveDate> = held_files
                    .iter()
                    .filter_map(|(d, p)| current.get(p.as_str()).filter(|c| *c == d).copied())
                    .collect();
                (
                    held_rows
                        .iter()
                        .filter(|r| kept_dates.contains(&r.trade_date))
                        .cloned()
                        .collect(),
                    files
                        .iter()
                        .filter(|(d, _)| !kept_dates.contains(d))
                        .collect(),
                )
            }
            None => (Vec::new(), files.iter().collect()),
        };
        rows.extend(self.scan_vol_rows(unread, &[ticker]).await?);
        rows.sort_by_key(|r| r.trade_date);
        rows.dedup_by_key(|r| r.trade_date);
        let rows = Arc::new(rows);
        let mut memo = self.vol_memo();
        if memo.len() >= VOL_SERIES_UNDERLYINGS && !memo.contains_key(ticker) {
            memo.clear();
        }
        memo.insert(
            ticker.to_owned(),
            VolSeriesEntry {
                generation,
                files,
                rows: Arc::clone(&rows),
            },
        );
        Ok(rows)
    }

    /// What the `vol_daily` memo holds: entries (one underlying's series each) and their rows'
    /// bytes; at most [`VOL_SERIES_UNDERLYINGS`] entries.
    pub fn held(&self) -> (usize, usize) {
        use optics_schemas::memory::HeapBytes;
        let memo = self.vol_memo();
        let bytes = memo
            .iter()
            .map(|(ticker, entry)| {
                ticker.capacity()
                    + entry
                        .files
                        .iter()
                        .map(|(_, p)| p.capacity() + std::mem::size_of::<(NaiveDate, String)>())
                        .sum::<usize>()
                    + std::mem::size_of::<VolSeriesEntry>()
                    + entry.rows.heap_bytes()
            })
            .sum();
        (memo.len(), bytes)
    }

    fn vol_memo(&self) -> std::sync::MutexGuard<'_, VolRowsMemo> {
        // A panic while holding the lock leaves a map of complete entries: still usable.
        self.vol_rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The expirations listed in the end-of-day chain of `ticker` on `trade_date`, ascending;
    /// `None` when no chain of that session is stored. Reads the expiration column only.
    pub async fn expirations_on(
        &self,
        ticker: &str,
        trade_date: NaiveDate,
    ) -> Result<Option<Vec<NaiveDate>>, HistoryError> {
        let Some((frame, path)) = self.session_chain(ticker, trade_date).await? else {
            return Ok(None);
        };
        let frame = frame.select(vec![col(chain_col::EXPIRATION)])?.distinct()?;
        let mut expirations = Vec::new();
        for batch in frame.collect().await? {
            let Some(column) = batch
                .column(0)
                .as_any()
                .downcast_ref::<arrow_array::Date32Array>()
            else {
                return Err(HistoryError::Query(
                    datafusion::error::DataFusionError::Internal(format!(
                        "{} of {} is not a Date32 column",
                        chain_col::EXPIRATION,
                        path
                    )),
                ));
            };
            expirations.extend(column.iter().flatten().filter_map(days_to_date));
        }
        expirations.sort_unstable();
        Ok(Some(expirations))
    }

    /// The rows of `expiration` in the chain of `ticker` as of the close of `trade_date`;
    /// `None` when no chain of that session is stored. In the file's order: settlement, then
    /// strike (the dataset's sort, `CHAIN_SORT`).
    ///
    /// Read through the Parquet reader itself, not a DataFusion plan: this is the one history
    /// read on a request's path, and planning a query costs more than the read (22–24 ms in
    /// the `make run` build, whose DataFusion is unoptimised). The file's footer and page
    /// index are read once and kept; the pages whose expiration statistics exclude
    /// `expiration` are skipped (the file is sorted by expiration, so its rows are a few
    /// pages); the rows of the pages read are then filtered exactly.
    pub async fn chain_at_time(
        &self,
        ticker: &str,
        trade_date: NaiveDate,
        expiration: NaiveDate,
    ) -> Result<Option<Vec<ChainRow>>, HistoryError> {
        let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date, ticker);
        let Some(file) = self.store.latest(&key).await? else {
            return Ok(None);
        };
        let mut rows = Vec::new();
        for batch in self.chain_pages(&file, expiration).await? {
            let batch = rows_of_expiration(&batch, expiration)?;
            if batch.num_rows() > 0 {
                rows.extend(ChainRow::from_batch(&batch)?);
            }
        }
        Ok(Some(rows))
    }

    /// The batches of the pages of a chain file that may hold `expiration`.
    async fn chain_pages(
        &self,
        file: &SnapshotFile,
        expiration: NaiveDate,
    ) -> Result<Vec<arrow_array::RecordBatch>, HistoryError> {
        let path = file.path.to_string();
        let mut reader = StoreFileReader {
            store: Arc::clone(self.store.object_store()),
            path: file.path.clone(),
            bytes: file.bytes,
        };
        let held = self.footers().get(&path).cloned();
        let footer = match held {
            Some(footer) => footer,
            None => {
                let options =
                    ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
                let footer = ArrowReaderMetadata::load_async(&mut reader, options)
                    .await
                    .map_err(read_error)?;
                let mut footers = self.footers();
                if footers.len() >= CHAIN_FOOTERS_HELD {
                    footers.clear();
                }
                footers.insert(path, footer.clone());
                footer
            }
        };
        let selection = pages_of_expiration(&footer, expiration).map_err(read_error)?;
        let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, footer);
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        let stream = builder.build().map_err(read_error)?;
        stream.try_collect().await.map_err(read_error)
    }

    fn footers(&self) -> std::sync::MutexGuard<'_, HashMap<String, ArrowReaderMetadata>> {
        // A panic while holding the lock leaves complete entries: still usable.
        self.chain_footers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The chain-file footers held and their bytes.
    pub fn chain_footers_held(&self) -> (usize, usize) {
        let footers = self.footers();
        let bytes = footers
            .iter()
            .map(|(path, footer)| path.capacity() + footer.metadata().memory_size())
            .sum();
        (footers.len(), bytes)
    }

    /// The latest stored end-of-day chain of `ticker` on `trade_date` as a DataFusion frame,
    /// with the path it was read from; `None` when no chain of that session is stored.
    async fn session_chain(
        &self,
        ticker: &str,
        trade_date: NaiveDate,
    ) -> Result<Option<(DataFrame, String)>, HistoryError> {
        let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date, ticker);
        let Some(file) = self.store.latest(&key).await? else {
            return Ok(None);
        };
        let frame = self
            .ctx
            .read_parquet(
                store_file_url(STORE_URL, file.path.as_ref()),
                ParquetReadOptions::default(),
            )
            .await?;
        Ok(Some((frame, file.path.to_string())))
    }
}

/// One stored file as the Parquet reader reads it: byte ranges from the object store, the
/// footer (and the page index when asked) from its end.
struct StoreFileReader {
    store: Arc<dyn object_store::ObjectStore>,
    path: object_store::path::Path,
    bytes: u64,
}

impl AsyncFileReader for StoreFileReader {
    fn get_bytes(
        &mut self,
        range: std::ops::Range<u64>,
    ) -> BoxFuture<'_, Result<bytes::Bytes, ParquetError>> {
        use object_store::ObjectStoreExt as _;
        Box::pin(async move {
            self.store
                .get_range(&self.path, range)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        })
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<std::ops::Range<u64>>,
    ) -> BoxFuture<'_, Result<Vec<bytes::Bytes>, ParquetError>> {
        Box::pin(async move {
            self.store
                .get_ranges(&self.path, &ranges)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        })
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, Result<Arc<ParquetMetaData>, ParquetError>> {
        Box::pin(async move {
            let mut reader = ParquetMetaDataReader::new();
            if let Some(options) = options {
                reader = reader
                    .with_column_index_policy(options.column_index_policy())
                    .with_offset_index_policy(options.offset_index_policy());
            }
            let bytes = self.bytes;
            Ok(Arc::new(reader.load_and_finish(self, bytes).await?))
        })
    }
}

/// A Parquet read's failure as a history error (the same variants DataFusion's would be).
/// The object store's own failure behind the reader (unreachable, the file gone) is the
/// store's, as a listing's would be: the client is told to come back (424), not shown a fault.
fn read_error(error: ParquetError) -> HistoryError {
    match error {
        ParquetError::External(inner) => match inner.downcast::<object_store::Error>() {
            Ok(store) => HistoryError::Store(StoreError::ObjectStore(*store)),
            Err(other) => HistoryError::Store(StoreError::Parquet(ParquetError::External(other))),
        },
        other => HistoryError::Store(StoreError::Parquet(other)),
    }
}

/// The rows to read for `expiration`: the pages whose expiration statistics may hold it, from
/// the page index; `None` (read everything) when the file has no page index.
fn pages_of_expiration(
    footer: &ArrowReaderMetadata,
    expiration: NaiveDate,
) -> Result<Option<RowSelection>, ParquetError> {
    let metadata = footer.metadata();
    let (Some(column_index), Some(offset_index)) =
        (metadata.column_index(), metadata.offset_index())
    else {
        return Ok(None);
    };
    let converter = StatisticsConverter::try_new(
        chain_col::EXPIRATION,
        footer.schema(),
        footer.parquet_schema(),
    )?;
    let groups: Vec<usize> = (0..metadata.num_row_groups()).collect();
    let mins = converter.data_page_mins(column_index, offset_index, &groups)?;
    let maxes = converter.data_page_maxes(column_index, offset_index, &groups)?;
    let Some(counts) =
        converter.data_page_row_counts(offset_index, metadata.row_groups(), &groups)?
    else {
        return Ok(None);
    };
    let (Some(mins), Some(maxes)) = (
        mins.as_any().downcast_ref::<arrow_array::Date32Array>(),
        maxes.as_any().downcast_ref::<arrow_array::Date32Array>(),
    ) else {
        return Ok(None);
    };
    use arrow_array::Array as _;
    let day = date_to_days(expiration);
    let mut selectors = Vec::with_capacity(counts.len());
    for page in 0..counts.len() {
        let rows = usize::try_from(counts.value(page)).unwrap_or(usize::MAX);
        // A page without statistics may hold anything: read it.
        let may_hold = (mins.is_null(page) || mins.value(page) <= day)
            && (maxes.is_null(page) || maxes.value(page) >= day);
        selectors.push(if may_hold {
            RowSelector::select(rows)
        } else {
            RowSelector::skip(rows)
        });
    }
    Ok(Some(RowSelection::from(selectors)))
}

/// The rows of `batch` whose expiration is `expiration` (the pages read may hold neighbours).
fn rows_of_expiration(
    batch: &arrow_array::RecordBatch,
    expiration: NaiveDate,
) -> Result<arrow_array::RecordBatch, HistoryError> {
    let day = date_to_days(expiration);
    let column = batch
        .column_by_name(chain_col::EXPIRATION)
        .and_then(|c| c.as_any().downcast_ref::<arrow_array::Date32Array>())
        .ok_or_else(|| {
            HistoryError::Query(datafusion::error::DataFusionError::Internal(format!(
                "a chain file without a Date32 {} column",
                chain_col::EXPIRATION
            )))
        })?;
    let keep: arrow_array::BooleanArray = column.iter().map(|d| Some(d == Some(day))).collect();
    datafusion::arrow::compute::filter_record_batch(batch, &keep)
        .map_err(|e| HistoryError::Query(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use datafusion::parquet::file::properties::{EnabledStatistics, WriterProperties};

    /// A store failure behind the Parquet reader is the store's (a 424 to the client); a file
    /// that does not decode is not.
    #[test]
    fn a_store_failure_under_the_reader_reads_as_the_store_unavailable() {
        let gone = object_store::Error::NotFound {
            path: "snapshots/chain/x.parquet".into(),
            source: "removed".into(),
        };
        assert!(read_error(ParquetError::External(Box::new(gone))).is_store_unavailable());
        assert!(!read_error(ParquetError::General("bad page".into())).is_store_unavailable());
    }

    /// A file sorted by expiration with pages of ten rows: the page index keeps only the
    /// pages that may hold the expiration asked for, and the exact filter the rest.
    #[test]
    fn the_page_index_skips_the_pages_of_other_expirations() {
        let first = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let expirations: Vec<NaiveDate> = (0..8u64)
            .flat_map(|week| std::iter::repeat_n(first + chrono::Days::new(7 * week), 13))
            .collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new(chain_col::EXPIRATION, DataType::Date32, false),
            Field::new("strike", DataType::Float64, false),
        ]));
        let batch = arrow_array::RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(arrow_array::Date32Array::from_iter_values(
                    expirations.iter().map(|d| date_to_days(*d)),
                )),
                Arc::new(arrow_array::Float64Array::from_iter_values(
                    (0..expirations.len()).map(|i| i as f64),
                )),
            ],
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_data_page_row_count_limit(10)
            .set_write_batch_size(10)
            .build();
        let mut bytes = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut bytes, schema, Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let bytes = bytes::Bytes::from(bytes);
        let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
        let footer = ArrowReaderMetadata::load(&bytes, options).unwrap();

        for week in 0..8u64 {
            let wanted = first + chrono::Days::new(7 * week);
            let selection = pages_of_expiration(&footer, wanted).unwrap().unwrap();
            let selected: usize = selection
                .iter()
                .filter(|s| !s.skip)
                .map(|s| s.row_count)
                .sum();
            // 13 rows span two or three pages of ten, of 104.
            assert!(
                (13..=30).contains(&selected),
                "{wanted}: {selected} rows read"
            );
            let reader =
                ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), footer.clone())
                    .with_row_selection(selection)
                    .build()
                    .unwrap();
            let mut strikes = Vec::new();
            for batch in reader {
                let kept = rows_of_expiration(&batch.unwrap(), wanted).unwrap();
                let column = kept
                    .column(1)
                    .as_any()
                    .downcast_ref::<arrow_array::Float64Array>()
                    .unwrap();
                strikes.extend(column.values().iter().copied());
            }
            let expected: Vec<f64> = (0..expirations.len())
                .filter(|i| expirations[*i] == wanted)
                .map(|i| i as f64)
                .collect();
            assert_eq!(strikes, expected, "{wanted}");
        }
        // An expiration the file does not hold: every page skipped.
        let absent = pages_of_expiration(&footer, first - chrono::Days::new(1))
            .unwrap()
            .unwrap();
        assert_eq!(absent.row_count(), 0);
    }
}
