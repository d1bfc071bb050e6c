//! The snapshot store: every precomputed dataset (chains, exposures, flow, volatility,
//! reference) as Parquet through [`object_store`] — a local directory by default, any object
//! store (S3, …) by configuration. Compute workers publish; the API and replay read.
//!
//! # Layout
//!
//! ```text
//! <prefix>/chain/trade_date=2026-11-20/underlying=SPY/v-00000000000000000041.parquet
//! <prefix>/chain/trade_date=2026-11-20/underlying=SPY/v-00000000000000000042.parquet
//! <prefix>/exposures/trade_date=2026-11-20/underlying=SPY/v-00000000000000000042.parquet
//! <prefix>/vol_daily/trade_date=2026-11-20/underlying=_all/v-00000000000000000001.parquet
//! ```
//!
//! - Hive partitions by dataset, trade date (New York) and underlying ([`SnapshotKey`]);
//!   market-wide datasets use the partition [`MARKET_WIDE`] (`underlying=_all`). Symbols with characters object stores reserve are percent-encoded in the
//!   path and decoded when listed ([`layout`]).
//! - Each publication of a partition is a new, immutable file `v-<version>.parquet` with a
//!   20-digit version, one higher than the partition's latest. **The partition's snapshot is
//!   its highest version.** For a past trade date that is the session's last cycle: the
//!   end-of-day snapshot chain-at-time reads — one file.
//! - Rows are written in the order the caller gives, which must be the order named by the
//!   `sort_columns` argument of [`SnapshotStore::publish`]; the file declares it in its
//!   `sorting_columns` metadata and carries min/max statistics per row group and page, so a
//!   single-expiration read prunes row groups. Snappy compression. The Arrow schema travels in
//!   the file (Date32, unsigned and UTC-timestamp columns read back exactly).
//!
//! # Visibility and crashes
//!
//! A file is written with **one `PUT` of the complete bytes in create-only mode**. A single
//! PUT is atomic on every object store (object_store's local backend writes a hidden staging
//! file and renames it into place), so a reader sees a version complete or not at all, and a
//! crash mid-write leaves the previous version untouched and current. Create-only mode means
//! two workers racing for a version cannot overwrite each other: the loser takes the next
//! number. After publishing, versions older than the newest [`DEFAULT_KEEP_VERSIONS`] are
//! deleted, so a reader that listed a moment ago still finds the file it chose; a reader that
//! loses that race re-lists ([`SnapshotStore::read`] does so once).
//!
//! # Publishing without listing
//!
//! A store handle (and its clones) remembers the last version it published of each
//! partition, so a worker publishing every second does not list the partition each time:
//!
//! - the next version is the remembered one + 1, tried only while the remembered file still
//!   exists (one `HEAD`). Pruning deletes the oldest versions first, so a foreign writer that
//!   went far enough ahead to prune the number we are about to take has pruned our last file
//!   too: a missing file sends us to the listing, and a create-only `PUT` that finds the
//!   number taken does as well;
//! - pruning deletes the one version that falls out of the newest `keep` (no listing); a
//!   listing sweeps whatever else is older (leftovers of another writer or process) on a
//!   handle's first publication of a partition, after a lost race, and every
//!   [`SWEEP_EVERY_VERSIONS`] versions.
//!
//! Encoding is separate ([`SnapshotStore::encode`], CPU only) so callers can encode off the
//! async threads and many partitions can be published concurrently
//! ([`SnapshotStore::publish_encoded`]).
//!
//! Each publication returns the [`SnapshotEvent`] the worker puts on the bus so API replicas
//! reload their cache.
//!
//! # Schema evolution
//!
//! Files are self-describing: a reader maps columns by name, so a file written before a
//! nullable column was added reads with that column null (the typed row readers in
//! `optics-schemas` do this), and extra columns in newer files are ignored by older readers.

pub mod layout;

mod error;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, Utc};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use optics_schemas::SnapshotEvent;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

pub use error::StoreError;

/// The `underlying` partition of market-wide datasets (the company map, the economic
/// calendar, and reference tables written for the whole universe at once).
pub const MARKET_WIDE: &str = "_all";

/// Versions of a partition kept after a publication (the newest ones).
pub const DEFAULT_KEEP_VERSIONS: usize = 2;
/// Default cap on rows per Parquet row group.
pub const DEFAULT_ROW_GROUP_ROWS: usize = 16 * 1024;
/// A publication whose version is a multiple of this lists its partition to delete every
/// version older than the newest `keep` (the others delete just the one that falls out).
pub const SWEEP_EVERY_VERSIONS: u64 = 64;

/// One partition of the store: a dataset's snapshot of one underlying on one trade date.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SnapshotKey {
    /// Dataset name (`chain`, `exposures`, …): lower-case ASCII letters, digits and `_`.
    pub dataset: String,
    /// The New York trade date the snapshot belongs to.
    pub trade_date: NaiveDate,
    /// The underlying symbol, or a market-wide key.
    pub underlying: String,
}

impl SnapshotKey {
    /// A key from its parts.
    pub fn new(
        dataset: impl Into<String>,
        trade_date: NaiveDate,
        underlying: impl Into<String>,
    ) -> Self {
        Self {
            dataset: dataset.into(),
            trade_date,
            underlying: underlying.into(),
        }
    }

    /// Checks the parts can form a path: a dataset of `[a-z0-9_]+`, a non-empty symbol
    /// without `/`, control characters or leading dots.
    pub fn validate(&self) -> Result<(), StoreError> {
        let ds = &self.dataset;
        if ds.is_empty()
            || !ds
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(StoreError::InvalidKey {
                field: "dataset",
                reason: format!("{ds:?} must be non-empty lower-case ASCII letters, digits, `_`"),
            });
        }
        let sym = &self.underlying;
        if sym.is_empty()
            || sym.len() > 32
            || sym.starts_with('.')
            || sym.chars().any(|c| c == '/' || c == '\\' || c.is_control())
        {
            return Err(StoreError::InvalidKey {
                field: "underlying",
                reason: format!("{sym:?} must be 1–32 characters without `/`, `\\` or controls"),
            });
        }
        Ok(())
    }
}

impl fmt::Display for SnapshotKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.dataset, self.trade_date, self.underlying
        )
    }
}

/// One published version of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Its partition.
    pub key: SnapshotKey,
    /// Its version (the partition's snapshot is the highest).
    pub version: u64,
    /// Its object path (relative to the store root, including the store's prefix).
    pub path: Path,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A snapshot read back: the file and its rows.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The version read.
    pub file: SnapshotFile,
    /// Its rows, in file order (normally one batch).
    pub batches: Vec<RecordBatch>,
}

impl Snapshot {
    /// Rows across the batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// A batch encoded as a Parquet file, ready for [`SnapshotStore::publish_encoded`].
#[derive(Debug, Clone)]
pub struct EncodedSnapshot {
    bytes: Vec<u8>,
    rows: u64,
}

impl EncodedSnapshot {
    /// The file's size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// No bytes (never the case for an encoded file).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

/// The version of a partition's first publication.
const FIRST_VERSION: u64 = 1;

/// The snapshot store over an object store and a prefix. Cheap to clone; clones share the
/// memory of the versions published (see the module documentation).
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    row_group_rows: usize,
    keep_versions: usize,
    /// The last version this handle (or a clone) published of each partition.
    published: Arc<Mutex<VersionMemo>>,
    /// The directory of a local store: each new file and its directory are fsynced there
    /// before older versions are pruned (see [`SnapshotStore::local`]).
    local_root: Option<std::path::PathBuf>,
}

/// How far behind the newest trade date published the version memo keeps partitions: a live
/// worker publishes today's (and, after the close, the session's own), so older entries would
/// only grow the memo session after session. A forgotten partition costs one listing.
const MEMO_DAYS: chrono::Days = chrono::Days::new(7);

/// The last version published of each partition, and the last version handed to an
/// in-process reader ([`SnapshotStore::next_handover_version`]), for the partitions of the last
/// [`MEMO_DAYS`] before the newest trade date published.
#[derive(Debug, Default)]
struct VersionMemo {
    newest: Option<NaiveDate>,
    versions: HashMap<SnapshotKey, u64>,
    handed: HashMap<SnapshotKey, u64>,
}

/// What a store handle holds: `store_version_memo` (items: partitions whose last published
/// version it remembers, those of the last [`MEMO_DAYS`]; shared by the handle's clones).
impl optics_schemas::memory::MemoryHolder for SnapshotStore {
    fn held_memory(&self, out: &mut Vec<optics_schemas::memory::HeldMemory>) {
        let published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entries = published.versions.len();
        let bytes = [&published.versions, &published.handed]
            .into_iter()
            .map(|map| {
                map.capacity() * (std::mem::size_of::<(SnapshotKey, u64)>() + 1)
                    + map
                        .keys()
                        .map(|k| k.dataset.capacity() + k.underlying.capacity())
                        .sum::<usize>()
            })
            .sum();
        out.push(optics_schemas::memory::HeldMemory::new(
            "store_version_memo",
            entries,
            bytes,
        ));
    }
}

impl VersionMemo {
    fn remember(&mut self, key: &SnapshotKey, version: u64) {
        if self.newest.is_none_or(|newest| key.trade_date > newest) {
            self.newest = Some(key.trade_date);
            let oldest = key.trade_date - MEMO_DAYS;
            self.versions.retain(|k, _| k.trade_date >= oldest);
            self.handed.retain(|k, _| k.trade_date >= oldest);
        }
        let last = self.versions.entry(key.clone()).or_insert(version);
        *last = (*last).max(version);
    }

    /// One past the later of the last version published and the last handed over.
    fn hand_over(&mut self, key: &SnapshotKey) -> u64 {
        let after_published = self
            .versions
            .get(key)
            .map_or(FIRST_VERSION, |last| last.saturating_add(1));
        let handed = self.handed.entry(key.clone()).or_insert(0);
        *handed = handed.saturating_add(1).max(after_published);
        *handed
    }
}

impl SnapshotStore {
    /// The store under `prefix` of `store` (`Path::default()` for the root).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: Path) -> Self {
        Self {
            store,
            prefix,
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
            keep_versions: DEFAULT_KEEP_VERSIONS,
            published: Arc::default(),
            local_root: None,
        }
    }

    /// The store in the local directory `dir` (created if missing): the embedded default.
    ///
    /// object_store's local backend renames a staged file into place without flushing it to
    /// disk, so after a power loss the newest version could read back empty. Here every new
    /// file and its directory are fsynced before the publication prunes older versions: a
    /// crash can then leave at worst an unreadable newest version *next to* the previous ones,
    /// and readers fall back to those ([`SnapshotStore::read`]).
    pub fn local(dir: &std::path::Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io(e.to_string()))?;
        let root = std::fs::canonicalize(dir).map_err(|e| StoreError::Io(e.to_string()))?;
        let store = object_store::local::LocalFileSystem::new_with_prefix(&root)?;
        let mut local = Self::new(Arc::new(store), Path::default());
        local.local_root = Some(root);
        Ok(local)
    }

    /// The directory of a local store (`None` for object stores).
    pub fn local_root(&self) -> Option<&std::path::Path> {
        self.local_root.as_deref()
    }

    /// On a local store, flushes the file at `path` and its directory to disk.
    async fn sync_local(&self, path: &Path) -> Result<(), StoreError> {
        match &self.local_root {
            Some(root) => sync_local_file(root, path).await,
            None => Ok(()),
        }
    }

    /// The store a `--store` setting names: a plain directory path or `file:///dir` (local,
    /// created if missing), `memory://` (this process only: tests and throwaway runs), or an
    /// object-store URL (`s3://bucket/prefix`, configured from the usual `AWS_*` environment
    /// variables: credentials, `AWS_REGION`, `AWS_ENDPOINT` for S3-compatible stores such as
    /// MinIO, `AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint).
    pub fn from_url(location: &str) -> Result<Self, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: location.to_owned(),
            reason,
        };
        let location = location.trim();
        if location.is_empty() {
            return Err(invalid("empty".into()));
        }
        let Some((scheme, rest)) = location.split_once("://") else {
            return Self::local(std::path::Path::new(location));
        };
        match scheme {
            "file" => {
                if rest.is_empty() || !rest.starts_with('/') {
                    return Err(invalid(
                        "a file URL needs an absolute path: file:///dir".into(),
                    ));
                }
                Self::local(std::path::Path::new(rest))
            }
            "memory" => Ok(Self::new(
                Arc::new(object_store::memory::InMemory::new()),
                Path::default(),
            )),
            "s3" | "s3a" => Self::s3(location, rest).map_err(invalid),
            other => Err(invalid(format!(
                "unsupported scheme {other:?}; use a directory, file://, memory:// or s3://"
            ))),
        }
    }

    /// `s3://bucket/prefix`, configured from the environment.
    fn s3(url: &str, rest: &str) -> Result<Self, String> {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err("no bucket: use s3://bucket/prefix".into());
        }
        let store = object_store::aws::AmazonS3Builder::from_env()
            .with_url(url)
            .build()
            .map_err(|e| e.to_string())?;
        let prefix = Path::parse(prefix.trim_end_matches('/')).map_err(|e| e.to_string())?;
        Ok(Self::new(Arc::new(store), prefix))
    }

    /// Caps rows per row group (0 is taken as 1).
    pub fn with_row_group_rows(mut self, rows: usize) -> Self {
        self.row_group_rows = rows.max(1);
        self
    }

    /// How many newest versions of a partition survive a publication (at least 1).
    pub fn with_keep_versions(mut self, keep: usize) -> Self {
        self.keep_versions = keep.max(1);
        self
    }

    /// The object store.
    pub fn object_store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The store's prefix.
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// `<prefix>/<dataset>`.
    pub fn dataset_root(&self, dataset: &str) -> Path {
        self.prefix.clone().join(dataset)
    }

    /// `<prefix>/<dataset>/trade_date=…`.
    pub fn trade_date_root(&self, dataset: &str, trade_date: NaiveDate) -> Path {
        self.dataset_root(dataset)
            .join(layout::trade_date_dir(trade_date))
    }

    /// The partition directory of `key`.
    pub fn partition_dir(&self, key: &SnapshotKey) -> Path {
        self.trade_date_root(&key.dataset, key.trade_date)
            .join(layout::underlying_dir(&key.underlying))
    }

    /// The path of version `version` of `key`.
    pub fn version_path(&self, key: &SnapshotKey, version: u64) -> Path {
        self.partition_dir(key).join(version_file_name(version))
    }

    /// Publishes `batch` as the next version of `key` and returns the event announcing it:
    /// [`encode`](Self::encode) then [`publish_encoded`](Self::publish_encoded).
    ///
    /// `batch` must already be sorted by `sort_columns` (ascending, nulls last); they are
    /// declared in the file so readers can prune. `published_at` is the caller's clock
    /// (it goes into the event, not into the file, so a replay writes identical files).
    pub async fn publish(
        &self,
        key: &SnapshotKey,
        batch: &RecordBatch,
        sort_columns: &[&str],
        published_at: DateTime<Utc>,
    ) -> Result<SnapshotEvent, StoreError> {
        key.validate()?;
        let encoded = self.encode(batch, sort_columns)?;
        self.publish_encoded(key, encoded, published_at).await
    }

    /// Encodes `batch` (sorted by `sort_columns`) as this store writes its files. CPU only:
    /// call it off the async threads for large batches.
    pub fn encode(
        &self,
        batch: &RecordBatch,
        sort_columns: &[&str],
    ) -> Result<EncodedSnapshot, StoreError> {
        Ok(EncodedSnapshot {
            bytes: encode_parquet(batch, sort_columns, self.row_group_rows)?,
            rows: batch.num_rows() as u64,
        })
    }

    /// Publishes an encoded file as the next version of `key` (visible once this returns) and
    /// returns the event announcing it.
    pub async fn publish_encoded(
        &self,
        key: &SnapshotKey,
        encoded: EncodedSnapshot,
        published_at: DateTime<Utc>,
    ) -> Result<SnapshotEvent, StoreError> {
        key.validate()?;
        let rows = encoded.rows;
        let (file, listed) = self.put_next_version(key, encoded.bytes).await?;
        self.prune_versions(&file, listed).await?;
        Ok(SnapshotEvent {
            dataset: key.dataset.clone(),
            trade_date: key.trade_date,
            underlying: key.underlying.clone(),
            path: file.path.to_string(),
            version: file.version,
            row_count: rows,
            published_at,
        })
    }

    /// The version to hand a snapshot of `key` to a reader in this process with, before (or
    /// instead of) writing its file: one past the later of the last version this process wrote
    /// and the last it handed over, so every handover is newer than the one before even when
    /// no file is written between them (`WorkerConfig::store_every`). When files are written
    /// every time, it is the version the next file takes; otherwise the handovers run ahead of
    /// the files, whose announcements the reader then passes over as older than what it holds.
    pub fn next_handover_version(&self, key: &SnapshotKey) -> u64 {
        self.published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .hand_over(key)
    }

    fn remembered_version(&self, key: &SnapshotKey) -> Option<u64> {
        let published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        published.versions.get(key).copied()
    }

    fn remember_version(&self, key: &SnapshotKey, version: u64) {
        let mut published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        published.remember(key, version);
    }

    /// The version to try first without listing: one past the last we published, while that
    /// file still exists (see the module documentation).
    async fn unlisted_next_version(&self, key: &SnapshotKey) -> Result<Option<u64>, StoreError> {
        let Some(last) = self.remembered_version(key) else {
            return Ok(None);
        };
        match self.store.head(&self.version_path(key, last)).await {
            Ok(_) => Ok(Some(
                last.checked_add(1).ok_or(StoreError::VersionsExhausted)?,
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// One past the partition's highest listed version, and the listing.
    async fn listed_next_version(
        &self,
        key: &SnapshotKey,
    ) -> Result<(u64, Vec<SnapshotFile>), StoreError> {
        let listed = self.versions(key).await?;
        let next = match listed.last() {
            None => FIRST_VERSION,
            Some(f) => f
                .version
                .checked_add(1)
                .ok_or(StoreError::VersionsExhausted)?,
        };
        Ok((next, listed))
    }

    /// Writes `bytes` create-only at the next free version; returns the file and, when the
    /// partition was listed on the way, that listing.
    async fn put_next_version(
        &self,
        key: &SnapshotKey,
        bytes: Vec<u8>,
    ) -> Result<(SnapshotFile, Option<Vec<SnapshotFile>>), StoreError> {
        let len = bytes.len() as u64;
        let payload = PutPayload::from(bytes);
        let mut listed = None;
        let mut version = match self.unlisted_next_version(key).await? {
            Some(version) => version,
            None => {
                let (next, files) = self.listed_next_version(key).await?;
                listed = Some(files);
                next
            }
        };
        loop {
            let path = self.version_path(key, version);
            let options = PutOptions::from(PutMode::Create);
            match self.store.put_opts(&path, payload.clone(), options).await {
                Ok(_) => {
                    self.sync_local(&path).await?;
                    self.remember_version(key, version);
                    let file = SnapshotFile {
                        key: key.clone(),
                        version,
                        path,
                        bytes: len,
                    };
                    return Ok((file, listed));
                }
                Err(object_store::Error::AlreadyExists { .. }) => {
                    // Another writer took the number: list to find how far ahead it is.
                    let (next, files) = self.listed_next_version(key).await?;
                    version = next.max(
                        version
                            .checked_add(1)
                            .ok_or(StoreError::VersionsExhausted)?,
                    );
                    listed = Some(files);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Deletes the versions of `published`'s partition that fall out of the newest
    /// `keep_versions`: from `listed` when the publication listed the partition, else from a
    /// fresh listing every [`SWEEP_EVERY_VERSIONS`] versions, else just the one version the
    /// publication pushed out.
    async fn prune_versions(
        &self,
        published: &SnapshotFile,
        listed: Option<Vec<SnapshotFile>>,
    ) -> Result<(), StoreError> {
        let keep = self.keep_versions as u64;
        let listed = match listed {
            Some(files) => Some(files),
            None if published.version.is_multiple_of(SWEEP_EVERY_VERSIONS) => {
                Some(self.versions(&published.key).await?)
            }
            None => None,
        };
        let Some(files) = listed else {
            if let Some(old) = published.version.checked_sub(keep).filter(|&v| v > 0) {
                let path = self.version_path(&published.key, old);
                layout::delete_if_present(&*self.store, &path).await?;
            }
            return Ok(());
        };
        // The newest `keep` of the listing and the version just written (which a listing made
        // before the write does not hold).
        let mut versions: Vec<u64> = files.iter().map(|f| f.version).collect();
        versions.push(published.version);
        versions.sort_unstable();
        versions.dedup();
        let Some(&oldest_kept) = versions.iter().rev().nth(self.keep_versions - 1) else {
            return Ok(());
        };
        for old in files.iter().filter(|f| f.version < oldest_kept) {
            layout::delete_if_present(&*self.store, &old.path).await?;
        }
        Ok(())
    }

    /// The published versions of `key`, oldest first. Objects that do not follow the naming
    /// (a store's own temporary files, anything else) are ignored.
    pub async fn versions(&self, key: &SnapshotKey) -> Result<Vec<SnapshotFile>, StoreError> {
        let mut files: Vec<SnapshotFile> =
            layout::list_files(&*self.store, &self.partition_dir(key))
                .await?
                .into_iter()
                .filter_map(|meta| {
                    let version = meta.location.filename().and_then(parse_version_file_name)?;
                    Some(SnapshotFile {
                        key: key.clone(),
                        version,
                        path: meta.location,
                        bytes: meta.size,
                    })
                })
                .collect();
        files.sort_by_key(|f| f.version);
        Ok(files)
    }

    /// The current (highest) version of `key`, if any.
    pub async fn latest(&self, key: &SnapshotKey) -> Result<Option<SnapshotFile>, StoreError> {
        Ok(self.versions(key).await?.pop())
    }

    /// The current snapshot of `key`, read whole; `None` if nothing was published.
    ///
    /// A newest version that does not decode (a file cut short by a crash, a corrupt copy) is
    /// logged and skipped: the next older version that decodes is returned, so one bad file
    /// never stops a reader. Only when no version decodes is the newest one's error returned.
    pub async fn read(&self, key: &SnapshotKey) -> Result<Option<Snapshot>, StoreError> {
        key.validate()?;
        // A publication may prune the version we listed between the listing and the read:
        // list again once and read the newer one.
        for attempt in 0..2 {
            let files = self.versions(key).await?;
            if files.is_empty() {
                return Ok(None);
            }
            let mut newest_error = None;
            let mut pruned_under_us = false;
            for file in files.into_iter().rev() {
                match self.read_file(&file).await {
                    Ok(batches) => return Ok(Some(Snapshot { file, batches })),
                    Err(StoreError::ObjectStore(object_store::Error::NotFound { .. })) => {
                        pruned_under_us = true;
                        break;
                    }
                    Err(error) => {
                        tracing::warn!(path = %file.path, %error,
                            "snapshot version does not decode; reading the previous one");
                        newest_error.get_or_insert(error);
                    }
                }
            }
            if !(pruned_under_us && attempt == 0) {
                if let Some(error) = newest_error {
                    return Err(error);
                }
                if !pruned_under_us {
                    return Ok(None);
                }
            }
        }
        Err(StoreError::Io(format!(
            "snapshot {key} kept changing while being read"
        )))
    }

    /// Version `version` of `key`, read whole without listing the partition: what a reader
    /// told of that version by its event reads (one request instead of a listing and a read).
    /// `None` when the version is not stored (a later publication pruned it).
    pub async fn read_version(
        &self,
        key: &SnapshotKey,
        version: u64,
    ) -> Result<Option<Snapshot>, StoreError> {
        key.validate()?;
        let path = self.version_path(key, version);
        let bytes = match self.store.get(&path).await {
            Ok(found) => found.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let size = bytes.len() as u64;
        let batches = decode_parquet(bytes)?;
        Ok(Some(Snapshot {
            file: SnapshotFile {
                key: key.clone(),
                version,
                path,
                bytes: size,
            },
            batches,
        }))
    }

    /// The rows of one published version.
    pub async fn read_file(&self, file: &SnapshotFile) -> Result<Vec<RecordBatch>, StoreError> {
        let bytes = self.store.get(&file.path).await?.bytes().await?;
        decode_parquet(bytes)
    }

    /// The newest version of every `dataset` partition of `underlying`, ascending by trade
    /// date, from one listing of the whole dataset: on S3 a request per thousand files rather
    /// than one per trade date (a year of a market-wide dataset is 250 partitions).
    pub async fn newest_versions(
        &self,
        dataset: &str,
        underlying: &str,
    ) -> Result<Vec<SnapshotFile>, StoreError> {
        self.newest_by_partition(dataset, Some(underlying)).await
    }

    /// The newest version of every `dataset` partition, by trade date then underlying, from
    /// one listing of the whole dataset: what a reader of the dataset's history reads (the
    /// older versions a publication leaves for a moment are never read twice).
    pub async fn current_partitions(&self, dataset: &str) -> Result<Vec<SnapshotFile>, StoreError> {
        self.newest_by_partition(dataset, None).await
    }

    async fn newest_by_partition(
        &self,
        dataset: &str,
        only: Option<&str>,
    ) -> Result<Vec<SnapshotFile>, StoreError> {
        use futures_util::StreamExt as _;
        let root = self.dataset_root(dataset);
        let depth = root.parts().count();
        let mut newest: std::collections::BTreeMap<(NaiveDate, String), SnapshotFile> =
            std::collections::BTreeMap::new();
        let mut listing = self.store.list(Some(&root));
        while let Some(listed) = listing.next().await {
            let meta = match listed {
                Ok(meta) => meta,
                Err(object_store::Error::NotFound { .. }) => break,
                Err(error) => return Err(error.into()),
            };
            let parts: Vec<String> = meta
                .location
                .parts()
                .skip(depth)
                .map(|part| layout::percent_decode(part.as_ref()))
                .collect();
            let [date_dir, underlying_dir, file_name] = parts.as_slice() else {
                continue;
            };
            let Some(trade_date) = layout::hive_value(date_dir, "trade_date")
                .and_then(|d| NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok())
            else {
                continue;
            };
            let (Some(version), Some(underlying)) = (
                parse_version_file_name(file_name),
                layout::hive_value(underlying_dir, "underlying"),
            ) else {
                continue;
            };
            if only.is_some_and(|wanted| wanted != underlying) {
                continue;
            }
            let partition = (trade_date, underlying);
            if newest.get(&partition).is_some_and(|f| f.version >= version) {
                continue;
            }
            let file = SnapshotFile {
                key: SnapshotKey::new(dataset, trade_date, partition.1.clone()),
                version,
                path: meta.location,
                bytes: meta.size,
            };
            newest.insert(partition, file);
        }
        Ok(newest.into_values().collect())
    }

    /// The trade dates that hold `dataset` partitions, ascending.
    pub async fn trade_dates(&self, dataset: &str) -> Result<Vec<NaiveDate>, StoreError> {
        let mut dates: Vec<NaiveDate> =
            layout::list_dirs(&*self.store, &self.dataset_root(dataset))
                .await?
                .iter()
                .filter_map(layout::parse_trade_date_dir)
                .collect();
        dates.sort();
        Ok(dates)
    }

    /// The underlyings with a `dataset` partition on `trade_date`, sorted.
    pub async fn underlyings(
        &self,
        dataset: &str,
        trade_date: NaiveDate,
    ) -> Result<Vec<String>, StoreError> {
        let mut symbols: Vec<String> =
            layout::list_dirs(&*self.store, &self.trade_date_root(dataset, trade_date))
                .await?
                .iter()
                .filter_map(layout::parse_underlying_dir)
                .collect();
        symbols.sort();
        Ok(symbols)
    }

    /// The most recent trade date (not after `on_or_before`, when given) with a published
    /// `dataset` snapshot of `underlying`.
    pub async fn latest_trade_date(
        &self,
        dataset: &str,
        underlying: &str,
        on_or_before: Option<NaiveDate>,
    ) -> Result<Option<NaiveDate>, StoreError> {
        for date in self.trade_dates(dataset).await?.into_iter().rev() {
            if on_or_before.is_some_and(|limit| date > limit) {
                continue;
            }
            let key = SnapshotKey::new(dataset, date, underlying);
            if self.latest(&key).await?.is_some() {
                return Ok(Some(date));
            }
        }
        Ok(None)
    }
}

/// `v-00000000000000000042.parquet`.
fn version_file_name(version: u64) -> String {
    format!("v-{version:020}.parquet")
}

fn parse_version_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("v-")?.strip_suffix(".parquet")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Encodes `batch` as one Parquet file declaring `sort_columns` (which must exist) as its
/// order, with statistics per page, Snappy, row groups of at most `row_group_rows`.
///
/// Dictionary encoding stays on for every column except floating-point columns outside the
/// sort order: IVs, Greeks, prices and premiums are nearly all distinct within a file, so a
/// dictionary only adds a hash per value and an index on top of every value (the writer falls
/// back to plain only past a 1 MB dictionary page, which a snapshot never reaches). Sort
/// columns such as the strike repeat and keep theirs.
pub fn encode_parquet(
    batch: &RecordBatch,
    sort_columns: &[&str],
    row_group_rows: usize,
) -> Result<Vec<u8>, StoreError> {
    let schema = batch.schema();
    let sorting = sort_columns
        .iter()
        .map(|name| {
            let idx = schema
                .index_of(name)
                .map_err(|_| StoreError::UnknownSortColumn((*name).to_owned()))?;
            Ok(SortingColumn {
                column_idx: i32::try_from(idx).unwrap_or(i32::MAX),
                descending: false,
                nulls_first: false,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(row_group_rows.max(1)))
        .set_sorting_columns((!sorting.is_empty()).then_some(sorting));
    for field in schema.fields() {
        if field.data_type().is_floating() && !sort_columns.contains(&field.name().as_str()) {
            props =
                props.set_column_dictionary_enabled(ColumnPath::from(field.name().as_str()), false);
        }
    }
    let props = props.build();
    let mut out = Vec::with_capacity(batch.get_array_memory_size() / 2 + 4096);
    let mut writer = ArrowWriter::try_new(&mut out, schema, Some(props))?;
    writer.write(batch)?;
    writer.close()?;
    Ok(out)
}

/// fsyncs the file at object path `path` under the local directory `root`, and its directory,
/// on the blocking pool: what a local store does after each `PUT` it must not lose.
pub async fn sync_local_file(root: &std::path::Path, path: &Path) -> Result<(), StoreError> {
    let file = path
        .parts()
        .fold(root.to_path_buf(), |dir, part| dir.join(part.as_ref()));
    tokio::task::spawn_blocking(move || sync_file_and_dir(&file))
        .await
        .map_err(|e| StoreError::Io(format!("fsync task: {e}")))?
}

/// fsyncs `file` and the directory that holds it (so its name survives a power loss too).
fn sync_file_and_dir(file: &std::path::Path) -> Result<(), StoreError> {
    let io =
        |what: &str, e: std::io::Error| StoreError::Io(format!("{what} {}: {e}", file.display()));
    std::fs::File::open(file)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("fsync", e))?;
    if let Some(dir) = file.parent() {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("fsync directory of", e))?;
    }
    Ok(())
}

/// Decodes a whole Parquet file into record batches (one batch unless it is very large).
pub fn decode_parquet(bytes: bytes::Bytes) -> Result<Vec<RecordBatch>, StoreError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)?;
    let rows = usize::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    let reader = builder.with_batch_size(rows.clamp(1, 1 << 20)).build()?;
    let mut batches = Vec::new();
    for batch in reader {
        batches.push(batch.map_err(parquet::errors::ParquetError::from)?);
    }
    Ok(batches)
}

#[cfg(test)]
mod tests;
