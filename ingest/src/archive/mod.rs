//! The quote archive: accepted option-quote batches as Parquet, by session, through
//! [`object_store`] (a local directory by default, any object store by configuration). Replay
//! and chain-at-time read it back.
//!
//! # Layout
//!
//! ```text
//! <prefix>/quotes/trade_date=2026-11-20/underlying=SPY/part-00000000.parquet       an appended part
//! <prefix>/quotes/trade_date=2026-11-20/underlying=SPY/part-00000001.import-<id>.manifest
//! <prefix>/imports/<id>/trade_date=2026-11-20/underlying=SPY/part-00000000.parquet  an imported part
//! <prefix>/imports/<id>/_committed                                                  the import's commit record
//! ```
//!
//! - Hive partitions: `trade_date` is the America/New_York date of the quote's `quote_time`
//!   ([`SessionKey::of`]); `underlying` is the symbol, with the characters object stores
//!   reserve (`^`, `%`, `#`, …) percent-encoded as object_store's `PathPart` does
//!   (`^VIX` → `underlying=%5EVIX`).
//! - A session's directory holds a sequence of entries numbered with 8 digits: appended parts
//!   (`part-<seq>.parquet`) and import manifests (`part-<seq>.import-<id>.manifest`, naming the
//!   import's parts of that session). A new entry takes the number after the highest existing
//!   one, so a session reads back in the order it was written: entry by entry, and within a
//!   manifest in the order it names its parts.
//! - Each part holds one session's rows **sorted by `expiration`, `strike`, `option_type`
//!   (`C` before `P`), `quote_time`** (stable, so equal keys keep their arrival order), in row
//!   groups of at most [`DEFAULT_ROW_GROUP_ROWS`] rows with column statistics, and the sort is
//!   declared in the file's `sorting_columns` metadata: a chain-at-time or single-expiration read
//!   prunes row groups by the min/max of those columns. Compression: Snappy. The Arrow schema
//!   ([`optics_schemas::option_quotes_schema`]) travels in the file, so Date32, unsigned and
//!   UTC-timestamp columns read back exactly.
//!
//! # Commits: what a reader sees
//!
//! A reader sees exactly the **committed** data, and each commit appears whole or not at all:
//!
//! - **An append** ([`QuoteArchive::append`]) commits one part per session it touches, each
//!   with **one create-only `PUT` of the complete bytes**. A single PUT is atomic on every
//!   object store (object_store's `LocalFileSystem` writes a hidden file and renames it into
//!   place), so the part is its own commit. Create-only mode means two writers racing for one
//!   sequence number cannot overwrite each other: the loser takes the next number. A batch of
//!   one session (every bus batch: they are keyed by underlying) is therefore atomic; a batch
//!   spanning sessions (a simulator snapshot of the whole universe) commits session by session.
//! - **An import** ([`ArchiveSink`], a vendor file) commits all its parts, across every session
//!   of the file, at one instant:
//!   1. *stage*: each part is written to `imports/<id>/trade_date=…/underlying=…/`, where no
//!      reader looks without a manifest;
//!   2. *manifests*: one per session, created (create-only) at that session's next number;
//!   3. *commit*: the create-only `PUT` of `imports/<id>/_committed` — the commit point.
//!
//!   Readers follow a manifest only when its import's commit record exists, so before step 3
//!   nothing of the import is visible and after it everything is. A failure before the commit
//!   point deletes what the import wrote; a crash leaves objects no reader follows, which
//!   [`QuoteArchive::cleanup_uncommitted`] removes.
//! - Archives written before manifests existed (imports renamed into `part-<seq>.parquet`, and
//!   their `_tmp/` staging debris) read unchanged: such parts are appended parts, and the
//!   cleanup also removes `_tmp/`.
//!
//! # Sync and async
//!
//! [`QuoteArchive`] is async (object_store is). [`ArchiveSink`] implements the synchronous
//! [`ImportSink`](crate::vendor::ImportSink) by owning a small current-thread tokio runtime and
//! blocking on it; it must therefore be used from synchronous code (the `import` command), not
//! from inside a tokio runtime. Async callers use [`QuoteArchive`] directly.

mod error;
mod manifest;
mod sink;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, Utc};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use optics_pipeline::store::{StoreError, layout};
use optics_schemas::columns::option_quotes as col;
use optics_schemas::{OptionQuote, Record};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

pub use error::ArchiveError;
use manifest::{
    COMMIT_FILE, decode_manifest, manifest_file_name, parse_manifest_file_name,
    parse_part_file_name, part_file_name,
};
pub use sink::{ArchiveSink, DEFAULT_FLUSH_ROWS};

/// The dataset directory under the archive's prefix.
pub const QUOTES_DIR: &str = "quotes";
/// The directory of imported parts and commit records under the archive's prefix.
pub const IMPORTS_DIR: &str = "imports";
/// The staging directory of archives written before manifests (only cleaned up now).
pub const LEGACY_STAGING_DIR: &str = "_tmp";
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

/// One committed part file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartInfo {
    /// Its session.
    pub session: SessionKey,
    /// The number of its entry in the session: the part's own for an appended part, its
    /// manifest's for an imported one (the parts of one manifest share it).
    pub seq: u32,
    /// Its object path.
    pub path: Path,
    /// Its size in bytes.
    pub bytes: u64,
    /// The import it belongs to (`None` for an appended part).
    pub import: Option<String>,
}

/// The objects of an import that never committed (or of the old `_tmp/` staging area).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncommittedImport {
    /// The import id (`_tmp/<name>` for the old staging area).
    pub import_id: String,
    /// Its objects: manifests in session directories first, then its parts.
    pub objects: Vec<Path>,
    /// When the newest of them was written.
    pub last_modified: DateTime<Utc>,
}

/// What one session directory lists.
#[derive(Debug, Default)]
struct SessionEntries {
    appended: Vec<PartInfo>,
    /// `(seq, import id, manifest path)`, committed or not.
    manifests: Vec<(u32, String, Path)>,
}

impl SessionEntries {
    fn highest_seq(&self) -> Option<u32> {
        let appended = self.appended.iter().map(|p| p.seq);
        let manifests = self.manifests.iter().map(|m| m.0);
        appended.chain(manifests).max()
    }
}

/// The quote archive over an object store and a prefix. Cheap to clone.
#[derive(Debug, Clone)]
pub struct QuoteArchive {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    row_group_rows: usize,
    /// The directory of a local archive: every file is fsynced (with its directory) before
    /// the `PUT` that wrote it returns, so the parts and manifest of an import are on disk
    /// before its `_committed` record is written.
    local_root: Option<std::path::PathBuf>,
}

impl QuoteArchive {
    /// The archive under `prefix` of `store` (`Path::default()` for the store's root).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: Path) -> Self {
        Self {
            store,
            prefix,
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
            local_root: None,
        }
    }

    /// The archive in the local directory `dir` (created if missing), the embedded default.
    pub fn local(dir: &std::path::Path) -> Result<Self, ArchiveError> {
        std::fs::create_dir_all(dir).map_err(|e| ArchiveError::Io(e.to_string()))?;
        let root = std::fs::canonicalize(dir).map_err(|e| ArchiveError::Io(e.to_string()))?;
        let store = object_store::local::LocalFileSystem::new_with_prefix(&root)?;
        let mut archive = Self::new(Arc::new(store), Path::default());
        archive.local_root = Some(root);
        Ok(archive)
    }

    /// The archive an `--archive` setting names, parsed exactly as the snapshot store's
    /// `--store` ([`SnapshotStore::from_url`](optics_pipeline::store::SnapshotStore::from_url)):
    /// a plain directory or `file:///dir` (local, created if missing), `memory://` (this
    /// process only) or `s3://bucket/prefix` (configured from the `AWS_*` variables).
    ///
    /// # Errors
    /// [`ArchiveError::Location`] for an empty, malformed or unsupported location, or one
    /// whose directory cannot be created.
    pub fn from_url(location: &str) -> Result<Self, ArchiveError> {
        let store = optics_pipeline::store::SnapshotStore::from_url(location)
            .map_err(|e| ArchiveError::Location(e.to_string()))?;
        let mut archive = Self::new(Arc::clone(store.object_store()), store.prefix().clone());
        archive.local_root = store.local_root().map(std::path::Path::to_path_buf);
        Ok(archive)
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

    /// The path of appended part `seq` of `session`.
    pub fn part_path(&self, session: &SessionKey, seq: u32) -> Path {
        self.session_dir(session).join(part_file_name(seq))
    }

    /// The directory of import `import_id`: `<prefix>/imports/<id>`.
    pub fn import_dir(&self, import_id: &str) -> Path {
        self.prefix.clone().join(IMPORTS_DIR).join(import_id)
    }

    /// The commit record of import `import_id`.
    pub fn commit_record_path(&self, import_id: &str) -> Path {
        self.import_dir(import_id).join(COMMIT_FILE)
    }

    /// The path of part `number` of import `import_id` in `session`.
    pub(crate) fn import_part_path(
        &self,
        import_id: &str,
        session: &SessionKey,
        number: u32,
    ) -> Path {
        self.import_dir(import_id)
            .join(layout::trade_date_dir(session.trade_date))
            .join(layout::underlying_dir(&session.underlying))
            .join(part_file_name(number))
    }

    /// The path of the manifest of import `import_id` at number `seq` of `session`.
    pub(crate) fn manifest_path(&self, session: &SessionKey, seq: u32, import_id: &str) -> Path {
        self.session_dir(session)
            .join(manifest_file_name(seq, import_id))
    }

    fn quotes_root(&self) -> Path {
        self.prefix.clone().join(QUOTES_DIR)
    }

    fn legacy_staging_root(&self) -> Path {
        self.prefix.clone().join(LEGACY_STAGING_DIR)
    }

    /// The Parquet bytes of one part: `rows` sorted by expiration, strike, type, quote time
    /// (see the module docs), validated by the schema.
    pub fn encode_part(&self, rows: &mut [OptionQuote]) -> Result<Vec<u8>, ArchiveError> {
        encode_part(rows, self.row_group_rows)
    }

    /// Archives `quotes` (any mix of sessions): one new part per session present, each
    /// committed with one atomic create-only `PUT`. Returns the parts written, in session
    /// order. Atomic per session, not across the sessions of one call (see the module docs).
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
            match self.put_create(&path, payload.clone()).await {
                Ok(()) => {
                    return Ok(PartInfo {
                        session: session.clone(),
                        seq,
                        path,
                        bytes: len,
                        import: None,
                    });
                }
                Err(ArchiveError::Store(object_store::Error::AlreadyExists { .. })) => {
                    seq = seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted)?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One create-only `PUT`.
    pub(crate) async fn put_create(
        &self,
        path: &Path,
        payload: PutPayload,
    ) -> Result<(), ArchiveError> {
        let options = PutOptions::from(PutMode::Create);
        self.store.put_opts(path, payload, options).await?;
        if let Some(root) = &self.local_root {
            optics_pipeline::store::sync_local_file(root, path)
                .await
                .map_err(|e| ArchiveError::Io(e.to_string()))?;
        }
        Ok(())
    }

    /// The number the next entry of `session` takes: one after the highest existing entry
    /// (appended part or manifest, committed or not), 0 for an empty session.
    pub async fn next_seq(&self, session: &SessionKey) -> Result<u32, ArchiveError> {
        match self.session_entries(session).await?.highest_seq() {
            None => Ok(0),
            Some(seq) => seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted),
        }
    }

    /// Every session with committed data, sorted by trade date then underlying. Objects that
    /// do not follow the layout are ignored.
    pub async fn list_sessions(&self) -> Result<Vec<SessionKey>, ArchiveError> {
        let mut sessions = Vec::new();
        for date_dir in layout::list_dirs(&*self.store, &self.quotes_root()).await? {
            if let Some(trade_date) = layout::parse_trade_date_dir(&date_dir) {
                sessions.extend(self.sessions_in(trade_date, &date_dir).await?);
            }
        }
        sessions.sort();
        Ok(sessions)
    }

    /// The sessions of `trade_date` with committed data, sorted by underlying.
    pub async fn list_sessions_on(
        &self,
        trade_date: NaiveDate,
    ) -> Result<Vec<SessionKey>, ArchiveError> {
        let date_dir = self.quotes_root().join(layout::trade_date_dir(trade_date));
        let mut sessions = self.sessions_in(trade_date, &date_dir).await?;
        sessions.sort();
        Ok(sessions)
    }

    async fn sessions_in(
        &self,
        trade_date: NaiveDate,
        date_dir: &Path,
    ) -> Result<Vec<SessionKey>, ArchiveError> {
        let mut sessions = Vec::new();
        for sym_dir in layout::list_dirs(&*self.store, date_dir).await? {
            let Some(underlying) = layout::parse_underlying_dir(&sym_dir) else {
                continue;
            };
            let session = SessionKey {
                trade_date,
                underlying,
            };
            // A directory holding only the manifests of an uncommitted import is not a
            // session yet.
            let entries = self.session_entries(&session).await?;
            if !entries.appended.is_empty()
                || !self.committed_parts(&session, entries).await?.is_empty()
            {
                sessions.push(session);
            }
        }
        Ok(sessions)
    }

    /// The committed parts of `session`, in reading order: by entry number, an appended part
    /// before a manifest of the same number (only a race can make one), then as the manifest
    /// lists them.
    pub async fn list_parts(&self, session: &SessionKey) -> Result<Vec<PartInfo>, ArchiveError> {
        let entries = self.session_entries(session).await?;
        self.committed_parts(session, entries).await
    }

    async fn committed_parts(
        &self,
        session: &SessionKey,
        entries: SessionEntries,
    ) -> Result<Vec<PartInfo>, ArchiveError> {
        let mut parts = entries.appended;
        let mut committed: HashMap<String, bool> = HashMap::new();
        for (seq, import_id, manifest) in entries.manifests {
            let is_committed = match committed.get(&import_id) {
                Some(&known) => known,
                None => {
                    let known = self.is_committed(&import_id).await?;
                    committed.insert(import_id.clone(), known);
                    known
                }
            };
            if !is_committed {
                continue;
            }
            let bytes = self.store.get(&manifest).await?.bytes().await?;
            let text = std::str::from_utf8(&bytes).map_err(|_| ArchiveError::BadManifest {
                path: manifest.to_string(),
                reason: "not UTF-8 text".to_owned(),
            })?;
            for entry in decode_manifest(&manifest, &import_id, text)? {
                parts.push(PartInfo {
                    session: session.clone(),
                    seq,
                    path: self.import_part_path(&import_id, session, entry.number),
                    bytes: entry.bytes,
                    import: Some(import_id.clone()),
                });
            }
        }
        // Stable: the parts of one manifest keep its order.
        parts.sort_by(|a, b| (a.seq, &a.import).cmp(&(b.seq, &b.import)));
        Ok(parts)
    }

    /// Whether import `import_id` has committed (its commit record exists).
    pub async fn is_committed(&self, import_id: &str) -> Result<bool, ArchiveError> {
        match self.store.head(&self.commit_record_path(import_id)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The appended parts and the manifests (committed or not) of `session`'s directory.
    async fn session_entries(&self, session: &SessionKey) -> Result<SessionEntries, ArchiveError> {
        let mut entries = SessionEntries::default();
        for meta in layout::list_files(&*self.store, &self.session_dir(session)).await? {
            let Some(name) = meta.location.filename() else {
                continue;
            };
            if let Some(seq) = parse_part_file_name(name) {
                entries.appended.push(PartInfo {
                    session: session.clone(),
                    seq,
                    path: meta.location,
                    bytes: meta.size,
                    import: None,
                });
            } else if let Some((seq, import_id)) = parse_manifest_file_name(name) {
                entries.manifests.push((seq, import_id, meta.location));
            }
        }
        entries.appended.sort_by_key(|p| p.seq);
        entries.manifests.sort();
        Ok(entries)
    }

    /// The record batches of `session`, part by part in reading order (each part sorted as
    /// the module docs say). Empty if the session has nothing committed.
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

    /// Every import without a commit record, with its objects (its parts and the manifests
    /// it wrote), and the old `_tmp/` staging area's directories: what a crashed import (or
    /// one in flight) leaves. Sorted by import id.
    pub async fn list_uncommitted(&self) -> Result<Vec<UncommittedImport>, ArchiveError> {
        let mut found = Vec::new();
        let imports_root = self.prefix.clone().join(IMPORTS_DIR);
        for dir in layout::list_dirs(&*self.store, &imports_root).await? {
            let Some(import_id) = layout::last_part(&dir) else {
                continue;
            };
            if self.is_committed(&import_id).await? {
                continue;
            }
            let parts = list_recursive(&*self.store, &dir).await?;
            // The sessions the import staged parts for: where its manifests may be.
            let sessions: BTreeSet<SessionKey> = parts
                .iter()
                .filter_map(|meta| session_of_import_part(&meta.location))
                .collect();
            let mut objects = Vec::new();
            let mut last_modified = parts.iter().map(|m| m.last_modified).max();
            for session in &sessions {
                for meta in layout::list_files(&*self.store, &self.session_dir(session)).await? {
                    let mine = meta
                        .location
                        .filename()
                        .and_then(parse_manifest_file_name)
                        .is_some_and(|(_, id)| id == import_id);
                    if mine {
                        last_modified = last_modified.max(Some(meta.last_modified));
                        objects.push(meta.location);
                    }
                }
            }
            objects.extend(parts.into_iter().map(|m| m.location));
            if let Some(last_modified) = last_modified {
                found.push(UncommittedImport {
                    import_id,
                    objects,
                    last_modified,
                });
            }
        }
        for dir in layout::list_dirs(&*self.store, &self.legacy_staging_root()).await? {
            let objects = list_recursive(&*self.store, &dir).await?;
            if let Some(last_modified) = objects.iter().map(|m| m.last_modified).max() {
                found.push(UncommittedImport {
                    import_id: format!(
                        "{LEGACY_STAGING_DIR}/{}",
                        layout::last_part(&dir).unwrap_or_default()
                    ),
                    objects: objects.into_iter().map(|m| m.location).collect(),
                    last_modified,
                });
            }
        }
        // Objects directly under `_tmp/` (no directory) belong to no import but are debris too.
        let loose = layout::list_files(&*self.store, &self.legacy_staging_root()).await?;
        if let Some(last_modified) = loose.iter().map(|m| m.last_modified).max() {
            found.push(UncommittedImport {
                import_id: LEGACY_STAGING_DIR.to_owned(),
                objects: loose.into_iter().map(|m| m.location).collect(),
                last_modified,
            });
        }
        found.sort_by(|a, b| a.import_id.cmp(&b.import_id));
        Ok(found)
    }

    /// Deletes the objects of every uncommitted import (see
    /// [`list_uncommitted`](Self::list_uncommitted)) whose newest object was written before
    /// `idle_before`, manifests first; returns the imports removed.
    ///
    /// An import still in flight is uncommitted too: give a cutoff well before any running
    /// import's last write (`optics import` uses a day), or run it when no import runs.
    pub async fn cleanup_uncommitted(
        &self,
        idle_before: DateTime<Utc>,
    ) -> Result<Vec<UncommittedImport>, ArchiveError> {
        let mut removed = Vec::new();
        for import in self.list_uncommitted().await? {
            if import.last_modified >= idle_before {
                continue;
            }
            for path in &import.objects {
                delete_if_present(&*self.store, path).await?;
            }
            removed.push(import);
        }
        Ok(removed)
    }
}

/// Every object under `dir`, recursively, with its metadata.
async fn list_recursive(
    store: &dyn ObjectStore,
    dir: &Path,
) -> Result<Vec<ObjectMeta>, ArchiveError> {
    let mut pending = vec![dir.clone()];
    let mut found = Vec::new();
    while let Some(next) = pending.pop() {
        match store.list_with_delimiter(Some(&next)).await {
            Ok(listing) => {
                found.extend(listing.objects);
                pending.extend(listing.common_prefixes);
            }
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    found.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(found)
}

/// The session of an imported part's path (`…/trade_date=…/underlying=…/part-….parquet`).
fn session_of_import_part(path: &Path) -> Option<SessionKey> {
    let parts: Vec<String> = path
        .parts()
        .map(|p| layout::percent_decode(p.as_ref()))
        .collect();
    let [.., date, underlying, file] = parts.as_slice() else {
        return None;
    };
    parse_part_file_name(file)?;
    let trade_date = layout::hive_value(date, "trade_date")?;
    Some(SessionKey {
        trade_date: NaiveDate::parse_from_str(&trade_date, "%Y-%m-%d").ok()?,
        underlying: layout::hive_value(underlying, "underlying")?,
    })
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
    optics_pipeline::store::encode_parquet(&batch, &sorting, row_group_rows).map_err(|e| match e {
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
