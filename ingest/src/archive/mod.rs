//! The quote archive: every accepted option-quote batch as Parquet, by session, through
//! [`object_store`] (a local directory by default, any object store by configuration). Replay
//! and chain-at-time read it back.
//!
//! # Layout
//!
//! ```text
//! <prefix>/quotes/trade_date=2026-11-20/underlying=SPY/part-00000000.parquet
//! <prefix>/quotes/trade_date=2026-11-20/underlying=SPY/part-00000001.parquet
//! <prefix>/_tmp/<staging id>/00000000.parquet        (staged, not yet published)
//! ```
//!
//! - Hive partitions: `trade_date` is the America/New_York date of the quote's `quote_time`
//!   ([`SessionKey::of`]); `underlying` is the symbol, with the characters object stores
//!   reserve (`^`, `%`, `#`, …) percent-encoded as object_store's `PathPart` does
//!   (`^VIX` → `underlying=%5EVIX`).
//! - Files are `part-<seq>.parquet` with an 8-digit sequence number per partition. A new part
//!   takes the number after the highest existing one (0 for the first), so the numbers are
//!   deterministic and the parts of a session read back in the order they were published.
//! - Each file holds one session's rows **sorted by `expiration`, `strike`, `option_type`
//!   (`C` before `P`), `quote_time`** (stable, so equal keys keep their arrival order), in row
//!   groups of at most [`DEFAULT_ROW_GROUP_ROWS`] rows with column statistics, and the sort is
//!   declared in the file's `sorting_columns` metadata: a chain-at-time or single-expiration read
//!   prunes row groups by the min/max of those columns. Compression: Snappy. The Arrow schema
//!   ([`optics_schemas::option_quotes_schema`]) travels in the file, so Date32, unsigned and UTC-timestamp
//!   columns read back exactly.
//! - Staged objects live under `<prefix>/_tmp/`, outside the `quotes/` dataset root: a reader of
//!   the archive (this module's, or a DataFusion listing table over `quotes/`) never lists them.
//!
//! # Visibility
//!
//! A reader never sees a partial file:
//!
//! - [`QuoteArchive::append`] writes each part with **one `PUT` of the complete bytes** in
//!   create-only mode (`PutMode::Create`). A single PUT is atomic on every object store, and
//!   object_store's `LocalFileSystem` writes a hidden staging file and renames it into place,
//!   so the object appears complete or not at all. A part is a few MB, well inside a
//!   single PUT. Create-only mode means two writers racing for the same sequence number
//!   cannot overwrite each other: the loser takes the next number.
//! - [`ArchiveSink`] (the vendor importer's all-or-nothing sink) stages parts under `_tmp/`
//!   and publishes them on commit with `rename_if_not_exists` (copy-if-absent then delete on
//!   stores without a native rename). Each part appears atomically; an import of several
//!   parts is published part by part, and a failure while publishing deletes the parts it had
//!   already published (see [`ArchiveSink`] for the exact guarantees and the remaining window).
//! - A crash leaves only `_tmp/` objects, which readers ignore and [`QuoteArchive::cleanup_staging`]
//!   removes.
//!
//! # Sync and async
//!
//! [`QuoteArchive`] is async (object_store is). [`ArchiveSink`] implements the synchronous
//! [`ImportSink`](crate::vendor::ImportSink) by owning a small current-thread tokio runtime and
//! blocking on it; it must therefore be used from synchronous code (the `import` command), not
//! from inside a tokio runtime. Async callers use [`QuoteArchive`] directly.

mod error;
mod sink;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use chrono::NaiveDate;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use optics_compute::store::{StoreError, layout};
use optics_schemas::columns::option_quotes as col;
use optics_schemas::{OptionQuote, Record};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

pub use error::ArchiveError;
pub use sink::{ArchiveSink, DEFAULT_FLUSH_ROWS};

/// The dataset directory under the archive's prefix.
pub const QUOTES_DIR: &str = "quotes";
/// The staging directory under the archive's prefix (never read as data).
pub const STAGING_DIR: &str = "_tmp";
/// Default cap on rows per Parquet row group: small enough that statistics prune a
/// single-expiration read, large enough to keep per-group overhead negligible.
pub const DEFAULT_ROW_GROUP_ROWS: usize = 64 * 1024;

/// One recorded session of one underlying: a `trade_date=…/underlying=…` partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// The New York trade date.
    pub trade_date: NaiveDate,
    /// The underlying symbol.
    pub underlying: String,
}

impl SessionKey {
    /// A key from its parts.
    pub fn new(trade_date: NaiveDate, underlying: impl Into<String>) -> Self {
        Self {
            trade_date,
            underlying: underlying.into(),
        }
    }

    /// The session a quote belongs to: its underlying and the America/New_York date of its
    /// `quote_time`.
    pub fn of(quote: &OptionQuote) -> Self {
        Self {
            trade_date: optics_compute::time::new_york_date(quote.quote_time),
            underlying: quote.underlying.clone(),
        }
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.trade_date, self.underlying)
    }
}

/// One published part file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartInfo {
    /// Its session.
    pub session: SessionKey,
    /// Its sequence number within the session.
    pub seq: u32,
    /// Its object path.
    pub path: Path,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The quote archive over an object store and a prefix. Cheap to clone.
#[derive(Debug, Clone)]
pub struct QuoteArchive {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    row_group_rows: usize,
}

impl QuoteArchive {
    /// The archive under `prefix` of `store` (`Path::default()` for the store's root).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: Path) -> Self {
        Self {
            store,
            prefix,
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
        }
    }

    /// The archive in the local directory `dir` (created if missing), the embedded default.
    pub fn local(dir: &std::path::Path) -> Result<Self, ArchiveError> {
        std::fs::create_dir_all(dir).map_err(|e| ArchiveError::Io(e.to_string()))?;
        let store = object_store::local::LocalFileSystem::new_with_prefix(dir)?;
        Ok(Self::new(Arc::new(store), Path::default()))
    }

    /// Caps rows per row group (default [`DEFAULT_ROW_GROUP_ROWS`]; 0 is taken as 1).
    pub fn with_row_group_rows(mut self, rows: usize) -> Self {
        self.row_group_rows = rows.max(1);
        self
    }

    /// The underlying store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The archive's prefix.
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The directory of `session`: `<prefix>/quotes/trade_date=…/underlying=…`.
    pub fn session_dir(&self, session: &SessionKey) -> Path {
        self.quotes_root()
            .join(layout::trade_date_dir(session.trade_date))
            .join(layout::underlying_dir(&session.underlying))
    }

    /// The path of part `seq` of `session`.
    pub fn part_path(&self, session: &SessionKey, seq: u32) -> Path {
        self.session_dir(session).join(part_file_name(seq))
    }

    fn quotes_root(&self) -> Path {
        self.prefix.clone().join(QUOTES_DIR)
    }

    pub(crate) fn staging_root(&self) -> Path {
        self.prefix.clone().join(STAGING_DIR)
    }

    /// The Parquet bytes of one part: `rows` sorted by expiration, strike, type, quote time
    /// (see the module docs), validated by the schema.
    pub fn encode_part(&self, rows: &mut [OptionQuote]) -> Result<Vec<u8>, ArchiveError> {
        encode_part(rows, self.row_group_rows)
    }

    /// Archives `quotes` (any mix of sessions): one new part per session present, each
    /// published with one atomic create-only `PUT`. Returns the parts written, in session
    /// order. Atomic per part, not across the sessions of one call.
    pub async fn append(&self, quotes: &[OptionQuote]) -> Result<Vec<PartInfo>, ArchiveError> {
        let mut written = Vec::new();
        for (session, mut rows) in group_by_session(quotes.iter().cloned()) {
            let bytes = self.encode_part(&mut rows)?;
            written.push(self.put_part(&session, bytes).await?);
        }
        Ok(written)
    }

    /// Publishes already-encoded part bytes as the next part of `session`.
    async fn put_part(
        &self,
        session: &SessionKey,
        bytes: Vec<u8>,
    ) -> Result<PartInfo, ArchiveError> {
        let len = bytes.len() as u64;
        let payload = PutPayload::from(bytes);
        let mut seq = self.next_seq(session).await?;
        loop {
            let path = self.part_path(session, seq);
            let options = PutOptions::from(PutMode::Create);
            match self.store.put_opts(&path, payload.clone(), options).await {
                Ok(_) => {
                    return Ok(PartInfo {
                        session: session.clone(),
                        seq,
                        path,
                        bytes: len,
                    });
                }
                Err(object_store::Error::AlreadyExists { .. }) => {
                    seq = seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted)?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The sequence number the next part of `session` takes: one after the highest existing
    /// part, 0 for an empty session.
    pub async fn next_seq(&self, session: &SessionKey) -> Result<u32, ArchiveError> {
        let parts = self.list_parts(session).await?;
        match parts.last() {
            None => Ok(0),
            Some(p) => p.seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted),
        }
    }

    /// Every recorded session, sorted by trade date then underlying. Objects that do not
    /// follow the layout (and everything under `_tmp/`) are ignored.
    pub async fn list_sessions(&self) -> Result<Vec<SessionKey>, ArchiveError> {
        let mut sessions = Vec::new();
        for date_dir in layout::list_dirs(&*self.store, &self.quotes_root()).await? {
            let Some(trade_date) = layout::parse_trade_date_dir(&date_dir) else {
                continue;
            };
            for sym_dir in layout::list_dirs(&*self.store, &date_dir).await? {
                let Some(underlying) = layout::parse_underlying_dir(&sym_dir) else {
                    continue;
                };
                sessions.push(SessionKey {
                    trade_date,
                    underlying,
                });
            }
        }
        sessions.sort();
        Ok(sessions)
    }

    /// The published parts of `session`, by sequence number.
    pub async fn list_parts(&self, session: &SessionKey) -> Result<Vec<PartInfo>, ArchiveError> {
        let listing = match self
            .store
            .list_with_delimiter(Some(&self.session_dir(session)))
            .await
        {
            Ok(listing) => listing,
            Err(object_store::Error::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut parts: Vec<PartInfo> = listing
            .objects
            .into_iter()
            .filter_map(|meta| {
                let seq = meta.location.filename().and_then(parse_part_file_name)?;
                Some(PartInfo {
                    session: session.clone(),
                    seq,
                    path: meta.location,
                    bytes: meta.size,
                })
            })
            .collect();
        parts.sort_by_key(|p| p.seq);
        Ok(parts)
    }

    /// The record batches of `session`, part by part in sequence order (each part sorted as
    /// the module docs say). Empty if the session was never recorded.
    pub async fn read_session_batches(
        &self,
        trade_date: NaiveDate,
        underlying: &str,
    ) -> Result<Vec<RecordBatch>, ArchiveError> {
        let session = SessionKey::new(trade_date, underlying);
        let mut batches = Vec::new();
        for part in self.list_parts(&session).await? {
            let bytes = self.store.get(&part.path).await?.bytes().await?;
            let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)?.build()?;
            for batch in reader {
                batches.push(batch.map_err(parquet::errors::ParquetError::from)?);
            }
        }
        Ok(batches)
    }

    /// The quotes of `session` as rows, validated, in the order of
    /// [`read_session_batches`](Self::read_session_batches).
    pub async fn read_session(
        &self,
        trade_date: NaiveDate,
        underlying: &str,
    ) -> Result<Vec<OptionQuote>, ArchiveError> {
        let mut rows = Vec::new();
        for batch in self.read_session_batches(trade_date, underlying).await? {
            rows.extend(OptionQuote::from_batch(&batch)?);
        }
        Ok(rows)
    }

    /// The staged (unpublished) objects under `_tmp/`, e.g. left by a crashed import.
    pub async fn list_staging(&self) -> Result<Vec<Path>, ArchiveError> {
        Ok(layout::list_objects_recursive(&*self.store, &self.staging_root()).await?)
    }

    /// Deletes every staged object under `_tmp/` and returns how many. Run it when no import
    /// is in flight (at startup): an in-flight import's staged parts would be lost, and its
    /// commit would then fail and roll back.
    pub async fn cleanup_staging(&self) -> Result<usize, ArchiveError> {
        let staged = self.list_staging().await?;
        for path in &staged {
            delete_if_present(&*self.store, path).await?;
        }
        Ok(staged.len())
    }
}

/// `part-00000042.parquet`.
fn part_file_name(seq: u32) -> String {
    format!("part-{seq:08}.parquet")
}

fn parse_part_file_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
    (digits.len() >= 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Rows grouped by session (sessions in key order, rows in input order).
pub(crate) fn group_by_session(
    rows: impl IntoIterator<Item = OptionQuote>,
) -> BTreeMap<SessionKey, Vec<OptionQuote>> {
    let mut groups: BTreeMap<SessionKey, Vec<OptionQuote>> = BTreeMap::new();
    for row in rows {
        groups.entry(SessionKey::of(&row)).or_default().push(row);
    }
    groups
}

/// The archive's in-file order: expiration, strike, type (`C` < `P`), quote time.
pub fn archive_order(a: &OptionQuote, b: &OptionQuote) -> Ordering {
    a.expiration
        .cmp(&b.expiration)
        .then_with(|| a.strike.total_cmp(&b.strike))
        .then_with(|| a.option_type.as_str().cmp(b.option_type.as_str()))
        .then_with(|| a.quote_time.cmp(&b.quote_time))
}

/// Sorts `rows` into [`archive_order`] and encodes them as one Parquet file.
pub(crate) fn encode_part(
    rows: &mut [OptionQuote],
    row_group_rows: usize,
) -> Result<Vec<u8>, ArchiveError> {
    rows.sort_by(archive_order);
    let batch = OptionQuote::to_batch(rows)?;
    let sorting = [
        col::EXPIRATION,
        col::STRIKE,
        col::OPTION_TYPE,
        col::QUOTE_TIME,
    ];
    optics_compute::store::encode_parquet(&batch, &sorting, row_group_rows).map_err(|e| match e {
        StoreError::Parquet(e) => ArchiveError::Parquet(e),
        other => ArchiveError::Io(other.to_string()),
    })
}

/// Deletes `path`; a missing object is not an error.
pub(crate) async fn delete_if_present(
    store: &dyn ObjectStore,
    path: &Path,
) -> Result<(), ArchiveError> {
    Ok(layout::delete_if_present(store, path).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names_round_trip() {
        assert_eq!(part_file_name(42), "part-00000042.parquet");
        assert_eq!(parse_part_file_name("part-00000042.parquet"), Some(42));
        assert_eq!(parse_part_file_name("part-42.parquet"), None);
        assert_eq!(parse_part_file_name("part-0000004x.parquet"), None);
        assert_eq!(parse_part_file_name("00000042.parquet"), None);
    }
}
